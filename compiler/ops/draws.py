"""Draws from a ``numpy.random.Generator`` as graph ops.

    draw_op(name) -> OpInfo ("Generator.normal") or None
    DRAW_EXCLUDED: method -> why it is not captured
    snapshot(generator) / restore(generator, state): what an entry does around a graph
    NUMPY_BIT_GENERATORS: the bit generator types whose ``state`` an entry may read

A draw is a graph node whose first argument is the Generator object itself (a graph input
of kind "generator", guarded by its exact type): the node calls the unbound method,
``np.random.Generator.normal(rng, loc, scale, size)``, when the graph runs, so the numbers
come from the caller's generator, in graph order, which is program order (backends run
draws in node order and never drop one: a draw may fail at run time, so it is never dead
code; compiler.ops.effects).

Why this design: a graph that fails at run time makes its frame run natively from its
start (compiler.entry_codegen), and the draws made before the failure would already have
advanced the generator, so the rerun would draw other numbers.  The entry of a graph with
draws therefore reads the state of every generator it draws from before the graph runs
(``bit_generator.state``: a small dict, about 1.5 us) and, only if the graph fails, puts it
back before the native run, which then draws exactly the numbers plain execution draws.
The alternative, ending the graph at every draw, would give up every graph that samples.
Reading ``state`` runs no user code only for NumPy's own bit generators, so the entry also
guards the bit generator's type (NUMPY_BIT_GENERATORS).  The generator is never kept: the
entry passes it to the graph call as the plain frame passes it to the method, and the
snapshot is a dict of numbers.

Result metadata: a draw's shape is ``size`` (or the parameters' broadcast shape), its dtype
fixed per method (or ``dtype=``), and NumPy returns a Python float or int when ``size`` is
None and every parameter is 0-d.  Rather than restate those rules per method and per NumPy
release, the rule runs the method once on a private generator with stand-in parameters of
the real shapes and dtypes (values every method accepts: ``scale`` 1, ``p`` 0.5, ``pvals``
uniform, ``cov`` an identity), which gives NumPy's own answer, its type errors included;
values invalid for the real call (a negative scale) raise when the graph runs, and the
frame reruns natively (state restored), raising as plain.  Refused at trace time: a result
that is not an array (a Python scalar from 0-d parameters, ``bytes``), ``out=``, a ``size``
computed in the graph, a 0-d graph value where NumPy reads a count (``permutation(n)``,
``choice(n)``), ``shuffle`` of anything but an array of the graph (it writes into that
array, which the tracker treats like item assignment), and ``multivariate_normal`` with
its default ``check_valid="warn"`` (a Python warning depending on the values).  tests/compiler/test_draws.py checks the rule against
NumPy on random arguments (hypothesis), on NumPy 1.24 and 2.x.
"""
from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

import numpy as np

from compiler.exc import Unsupported
from compiler.graph import TensorMeta
from compiler.graph_text import python_scalar_type
from compiler.ops import standins
from compiler.ops.evaluated import meta_of_sequence_or_array
from compiler.ops.opinfo import OpInfo
from compiler.ops.standins import metas_in

# Every bit generator NumPy ships (the ones this NumPy has): reading their ``state`` runs no
# Python code of the program's.
NUMPY_BIT_GENERATORS: Tuple[type, ...] = tuple(
    getattr(np.random, name) for name in ("PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64")
    if hasattr(np.random, name))

_UNIFORM = "uniform"     # probabilities along the last axis (1 / n each)
_IDENTITY = "identity"   # an identity matrix (a covariance)

# method -> its parameters in positional order, each with a stand-in value every call of
# the method accepts (None: any value, zeros).  ``size`` and the keyword-only options are
# constants and never get stand-ins.
PARAMETERS: Dict[str, Tuple[Tuple[str, Any], ...]] = {
    "beta": (("a", 1.0), ("b", 1.0)),
    "binomial": (("n", 1), ("p", 0.5)),
    "chisquare": (("df", 1.0),),
    "choice": (("a", None), ("size", None), ("replace", None), ("p", _UNIFORM)),
    "dirichlet": (("alpha", 1.0),),
    "exponential": (("scale", 1.0),),
    "f": (("dfnum", 1.0), ("dfden", 1.0)),
    "gamma": (("shape", 1.0), ("scale", 1.0)),
    "geometric": (("p", 0.5),),
    "gumbel": (("loc", 0.0), ("scale", 1.0)),
    "hypergeometric": (("ngood", 1), ("nbad", 1), ("nsample", 1)),
    "integers": (("low", 0), ("high", 1)),
    "laplace": (("loc", 0.0), ("scale", 1.0)),
    "logistic": (("loc", 0.0), ("scale", 1.0)),
    "lognormal": (("mean", 0.0), ("sigma", 1.0)),
    "logseries": (("p", 0.5),),
    "multinomial": (("n", 1), ("pvals", _UNIFORM)),
    "multivariate_hypergeometric": (("colors", 1), ("nsample", 1)),
    "multivariate_normal": (("mean", 0.0), ("cov", _IDENTITY)),
    "negative_binomial": (("n", 1.0), ("p", 0.5)),
    "noncentral_chisquare": (("df", 1.0), ("nonc", 1.0)),
    "noncentral_f": (("dfnum", 1.0), ("dfden", 1.0), ("nonc", 1.0)),
    "normal": (("loc", 0.0), ("scale", 1.0)),
    "pareto": (("a", 1.0),),
    "permutation": (("x", None),),
    "permuted": (("x", None),),
    "poisson": (("lam", 1.0),),
    "power": (("a", 1.0),),
    "random": (),
    "rayleigh": (("scale", 1.0),),
    "standard_cauchy": (),
    "standard_exponential": (),
    "standard_gamma": (("shape", 1.0),),
    "standard_normal": (),
    "standard_t": (("df", 1.0),),
    "triangular": (("left", 0.0), ("mode", 0.5), ("right", 1.0)),
    "uniform": (("low", 0.0), ("high", 1.0)),
    "vonmises": (("mu", 0.0), ("kappa", 1.0)),
    "wald": (("mean", 1.0), ("scale", 1.0)),
    "weibull": (("a", 1.0),),
    "zipf": (("a", 2.0),),
}
# methods whose first parameter, as a 0-d value, is a count deciding the result's shape
_COUNT_FIRST = frozenset({"choice", "permutation"})
# methods without a ``size`` (the others take it right after their parameters)
_NO_SIZE = frozenset({"permutation", "permuted"})

DRAW_EXCLUDED: Dict[str, str] = {
    "bytes": "it returns a Python bytes object, not an array",
    "spawn": "it returns new Generator objects (and advances the seed sequence's spawn count)",
}


def _stand_in(meta: TensorMeta, fill: Any) -> Any:
    if fill is _IDENTITY and meta.kind == "array" and meta.ndim == 2 and meta.shape[0] == meta.shape[1]:
        return np.eye(meta.shape[0], dtype=meta.dtype)
    if fill is _UNIFORM:
        fill = 1.0 / meta.shape[-1] if meta.kind == "array" and meta.ndim and meta.shape[-1] else 0.0
    if fill is None or fill is _IDENTITY:
        fill = 0
    if meta.kind == "python":
        return python_scalar_type(meta.dtype)(fill)
    if meta.kind == "scalar":
        return meta.dtype.type(fill)
    return np.full(meta.shape, fill, meta.dtype)


def _bound(name: str, args: tuple, kwargs: dict) -> Dict[str, Any]:
    """The arguments by parameter name (positional ones past the parameters: ``size``, then
    ``_<i>`` for options)."""
    names = [p for p, _ in PARAMETERS[name]]
    if name not in _NO_SIZE and "size" not in names:
        names.append("size")
    bound = {names[i] if i < len(names) else f"_{i}": value for i, value in enumerate(args)}
    bound.update(kwargs)
    return bound


def _refuse(name: str, bound: Dict[str, Any]) -> None:
    op_name = f"Generator.{name}"
    if bound.get("out") is not None:
        raise Unsupported(f"{op_name}(..., out=...) writes into an existing array (a side effect)")
    params = {p for p, _ in PARAMETERS[name]} - {"size", "replace"}
    for key, value in bound.items():
        if key not in params and metas_in(value):
            raise Unsupported(f"{op_name}: a value computed in the graph as its {key.lstrip('_') or key!r} "
                              "argument (a size or an option decides the result's shape or "
                              "kind); it runs natively")
    if name in _COUNT_FIRST:
        first = bound.get("a", bound.get("x"))
        if isinstance(first, TensorMeta) and first.shape == ():
            raise Unsupported(f"{op_name}: a 0-d value computed in the graph is read as a count "
                              "(data-dependent shape); it runs natively")
    if name == "multivariate_normal" and bound.get("check_valid", "warn") == "warn":
        raise Unsupported(f"{op_name} with check_valid='warn' issues a Python warning depending "
                          "on the covariance's values; it runs natively")


def _fills(name: str, args: tuple, kwargs: dict) -> Tuple[tuple, dict]:
    """The arguments with every graph value replaced by its stand-in."""
    fills = dict(PARAMETERS[name])
    order = [p for p, _ in PARAMETERS[name]]
    if name == "integers" and kwargs.get("high", args[1] if len(args) > 1 else None) is None:
        fills["low"] = 1  # integers(n) draws from [0, n)

    def stand_ins(value: Any, key: Optional[str]) -> Any:
        return standins.map_metas(value, lambda meta: _stand_in(meta, fills.get(key)))

    new_args = tuple(stand_ins(a, order[i] if i < len(order) else None) for i, a in enumerate(args))
    return new_args, {k: stand_ins(v, k) for k, v in kwargs.items()}


def draw_rule(op: OpInfo, args: tuple, kwargs: dict) -> Any:
    """The result metadata of a draw: NumPy's own answer on a private generator with
    stand-in parameters (``args[0]`` is the generator's metadata)."""
    name = op.name.rsplit(".", 1)[-1]
    if not args or not isinstance(args[0], TensorMeta) or args[0].kind != "generator":
        raise Unsupported(f"{op.name}: the first argument must be the Generator")
    params = args[1:]
    _refuse(name, _bound(name, params, kwargs))
    new_args, new_kwargs = _fills(name, params, kwargs)
    private = np.random.Generator(np.random.PCG64(0))
    result = standins.call_quietly(op.fn, (private,) + new_args, new_kwargs)
    return meta_of_sequence_or_array(result, op.name)


def _shuffle_returning_target(generator: Any, x: Any, *args: Any, **kwargs: Any) -> Any:
    generator.shuffle(x, *args, **kwargs)
    return x


def shuffle_rule(op: OpInfo, args: tuple, kwargs: dict) -> Any:
    """``rng.shuffle(x)`` writes into ``x`` (an array of the graph; the tracker treats it
    like item assignment, compiler.variables.draws): the written array's own metadata,
    after checking the call (the axis) on a private generator and a zero stand-in."""
    if len(args) < 2 or not isinstance(args[1], TensorMeta) or args[1].kind != "array":
        raise Unsupported(f"{op.name}: only an array of the graph is shuffled in the graph")
    target = args[1]
    if metas_in((args[2:], kwargs)):
        raise Unsupported(f"{op.name}: a value computed in the graph as its axis; it runs natively")
    private = np.random.Generator(np.random.PCG64(0))
    standins.call_quietly(private.shuffle, (np.zeros(target.shape, target.dtype),) + args[2:], kwargs)
    return TensorMeta(target.shape, target.dtype, "array", target.layout)


def _ops() -> Dict[str, OpInfo]:
    found = {}
    for name in PARAMETERS:
        fn = getattr(np.random.Generator, name, None)
        if fn is None:
            continue
        found[name] = OpInfo(f"Generator.{name}", fn, "creation", draw_rule,
                             source=f"method:{name}", doc="a draw from the caller's Generator")
    # shuffles its argument in place: run by NumPy (never lowered), like np.put
    found["shuffle"] = OpInfo("Generator.shuffle", _shuffle_returning_target, "other", shuffle_rule,
                              inplace=True, lowerable=False,
                              doc="an in-place shuffle with the caller's Generator")
    return found


_DRAWS = _ops()


def draw_op(name: str) -> Optional[OpInfo]:
    """The graph op drawing with ``Generator.<name>``, or None if that method is not captured."""
    return _DRAWS.get(name)


def generator_meta() -> TensorMeta:
    """The metadata of a graph input that is a Generator."""
    return TensorMeta((), np.dtype(object), "generator")


def snapshot(generator: Any) -> Any:
    """The state of the generator's bit generator (taken before a graph with draws runs)."""
    return generator.bit_generator.state


def restore(generator: Any, state: Any) -> None:
    """Put back a state taken by ``snapshot`` (the graph failed: the frame runs natively)."""
    generator.bit_generator.state = state
