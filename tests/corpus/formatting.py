"""f-strings, ``%`` and ``str.format`` of static values (shapes, dtypes, constants) next to NumPy work."""
import numpy as np

from .registry import case


@case(calls=lambda a: [(a.f(3, 4),), (a.f(2, 2),)], nodes=1)
def fstring_key(x):
    key = f"{x.shape[0]}x{x.shape[1]}"
    return {key: x.sum()}


@case(calls=lambda a: [(a.f(3, 4),), (a.f(5, 1),)], nodes=1)
def percent_formatting(x):
    label = "n=%d d=%d" % x.shape
    return label, x.mean(axis=0)


@case(calls=lambda a: [(a.f(3),), (a.f(2, 2, dtype=np.float32),)], nodes=1)
def str_format_method(x):
    return "{}-{}:{name}".format(x.ndim, x.dtype, name="layer"), x * 2


@case(calls=lambda a: [(a.f(3),), (a.i(2, 2),)], nodes=1)
def fstring_format_specs(x):
    return f"{x.ndim:03d}|{x.dtype}|{2.5:.2f}|{'id':>4}|{x.size!r}", -x


@case(calls=lambda a: [(a.f(2, 3, 4),), (a.f(5),)], nodes=1)
def string_built_in_loop(x):
    name = ""
    for d in x.shape:
        name += str(d) + "_"
    return name.rstrip("_"), x.reshape(-1)


@case(calls=lambda a: [(a.f(3),), (a.f(2, 2),)], nodes=2)
def repr_and_percent_mapping(x):
    msg = "%(kind)s with %(n)d dims" % {"kind": x.dtype.name, "n": x.ndim}
    return msg, repr(x.shape), x + x.max()
