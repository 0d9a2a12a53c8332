"""collections containers around arrays: namedtuple, typing.NamedTuple, OrderedDict, defaultdict."""
from collections import OrderedDict, defaultdict, namedtuple
from typing import NamedTuple

import numpy as np

from .registry import case

Stats = namedtuple("Stats", "mean std")
Batch = namedtuple("Batch", ["inputs", "targets"])


@case(calls=lambda a: [(a.f(5, 2),), (a.f(3, 3, dtype=np.float32),)], nodes=2)
def namedtuple_output(x):
    return Stats(x.mean(0), x.std(0))


@case(calls=lambda a: [(Batch(a.f(4, 2), a.f(4, 2)),), (Batch(a.f(3), a.f(3)),)], nodes=3)
def namedtuple_input(batch):
    return ((batch.inputs - batch.targets) ** 2).mean()


@case(calls=lambda a: [(Batch(a.f(3), a.f(3)),), (Batch(a.f(2, 2), a.f(2, 2)),)], nodes=2)
def namedtuple_unpack_index_replace(batch):
    inputs, targets = batch
    doubled = batch._replace(inputs=inputs * 2)
    return doubled, doubled[0] - targets, batch._fields


@case(calls=lambda a: [(a.f(3),), (a.f(2, 2),)], nodes=1)
def ordered_dict_output(x):
    od = OrderedDict()
    od["a"] = x
    od["b"] = x * 2
    od.move_to_end("a")
    return od


@case(calls=lambda a: [(a.f(3),), (a.f(2, 2),)], nodes=4)
def defaultdict_grouping(x):
    groups = defaultdict(list)
    for name, v in (("a", x), ("b", x * 2), ("a", x * 3)):
        groups[name].append(v)
    return {k: np.stack(v) for k, v in groups.items()}


class Range(NamedTuple):
    low: np.ndarray
    high: np.ndarray


@case(calls=lambda a: [(a.f(4, 3),), (a.f(2, 2),)], nodes=3)
def typing_namedtuple(x):
    r = Range(x.min(0), x.max(0))
    return r, r.high - r.low


@case(calls=lambda a: [(Stats(a.f(3), a.pos(3)), a.f(2, 3)), (Stats(a.f(2), a.pos(2)), a.f(5, 2))], nodes=2)
def namedtuple_asdict(stats, x):
    d = stats._asdict()
    return (x - d["mean"]) / d["std"], list(d)


@case(calls=lambda a: [(a.f(3),), (a.f(2, 2),)], nodes=2)
def defaultdict_counts(x):
    counts = defaultdict(int)
    for key in ("relu", "tanh", "relu"):
        counts[key] += 1
    return x * counts["relu"] + counts["tanh"], dict(counts)
