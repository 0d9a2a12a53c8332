"""A fused region as one generated numba loop, where numba is installed (the ``cpu`` extra).

One pass over the elements, no temporaries: each operand element is loaded
once, the chain runs in registers, each result the graph needs is stored
once.  Measured against the blocked NumPy evaluation (blocked.py) and
numexpr on one thread (benchmarks/bench_backends.py), on a memory-bound
arithmetic chain the loop wins at every size from 1e5 to 1e7, by most where
the arrays fit in cache (3x blocked NumPy at 1e6); on transcendental
functions NumPy's SIMD loops win, so those stay with the blocks.

Which regions: every op a float ufunc from ``_TEMPLATES`` without keywords,
every result float32 or float64, every array operand of the region's shape
(C-contiguous, checked by the caller) or 0-d, every constant a real number.
Each op computes in its result's dtype, operands converted to it first:
that is the inner loop NumPy selects for these ufuncs (``ff->f``, ``dd->d``)
under either casting rule, since the graph's metadata already says which
dtype NumPy chose.  numba's transcendental functions may differ from
NumPy's SIMD ones by a few ulp (the tolerance the backends are tested with).

Floating-point errors: numba sets no NumPy error flags.  The kernel returns
whether every value it computed is finite; a divide, overflow or invalid
error always leaves a non-finite value behind (round to nearest), so when
the answer is "no" and NumPy's error state reports something, the caller
runs the region through NumPy, which reports it exactly (region_kernel.py).
Underflow leaves no trace, so the kernel is not used while underflow is
reported.

The kernel is compiled by numba on its first call (numba's own dispatch),
so compiling a graph costs nothing extra; the first large call pays numba's
compile time once (about 0.1-0.3 s per kernel, plus numba's import).
"""
from __future__ import annotations

import functools
import importlib.util
import math
from typing import Any, Callable, Dict, List, Optional

import numpy as np

from compiler.backends.base import logger
from compiler.backends.fusion import Region
from compiler.generated_code import compile_generated, unique_filename
from compiler.graph import Node
from compiler.symbolic_shapes import has_symbols, same_shape

# Regions smaller than this run through NumPy: numba's call dispatch costs a few microseconds.
MIN_ELEMENTS = 8192

# ufunc -> expression over the converted operands {0}, {1}.  No transcendental functions:
# numba calls the C library's scalar sin / exp, NumPy its SIMD ones, and measured on
# sin(a) * exp(b*0.5) + a (bench_backends.py) blocked NumPy beat the numba loop at every size.
_TEMPLATES: Dict[np.ufunc, str] = {
    np.add: "{0} + {1}",
    np.subtract: "{0} - {1}",
    np.multiply: "{0} * {1}",
    np.true_divide: "{0} / {1}",
    np.negative: "-{0}",
    np.positive: "+{0}",
    np.absolute: "abs({0})",
    np.square: "{0} * {0}",
    np.sqrt: "_np.sqrt({0})",
    # NaN-propagating, as NumPy's: the first NaN operand wins.
    np.maximum: "_max({0}, {1})",
    np.minimum: "_min({0}, {1})",
}
_FLOATS = {np.dtype(np.float32): "_f32", np.dtype(np.float64): "_f64"}


@functools.lru_cache(maxsize=None)
def numba_available() -> bool:
    """Whether numba is installed (asked once: the import itself waits for the first kernel)."""
    return importlib.util.find_spec("numba") is not None


def _real_constant(value: Any) -> bool:
    return isinstance(value, (bool, int, float, np.bool_, np.integer, np.floating))


def eligible(region: Region, operands: List[Node]) -> bool:
    """Whether the region can be one numba loop (see the module's docstring)."""
    shape = region.nodes[0].meta.shape
    for node in region.nodes:
        if node.opinfo.ufunc not in _TEMPLATES or node.kwargs or node.meta.dtype not in _FLOATS:
            return False
        if not all(isinstance(a, Node) or _real_constant(a) for a in node.args):
            return False
        if any(isinstance(a, float) and not math.isfinite(a) for a in node.args):
            return False  # no literal spelling; rare enough to leave to NumPy
    return all(n.meta.dtype.kind in "biuf" and (n.meta.ndim == 0 or same_shape(n.meta.shape, shape))
               for n in operands) and any(n.meta.ndim for n in operands)  # one gives the size


def kernel_source(region: Region, operands: List[Node], results: List[Node]) -> str:
    """Source of ``kernel(_n, *operands, *result buffers) -> all finite``, all arrays flat."""
    params = [f"v_{n.name}" for n in operands] + [f"_o_{n.name}" for n in results]
    lines = [f"def kernel(_n, {', '.join(params)}):", "    _ok = True", "    for _i in range(_n):"]
    for node in operands:
        if node.meta.ndim >= 1:
            lines.append(f"        {node.name} = v_{node.name}[_i]")
        else:
            lines.append(f"        {node.name} = v_{node.name}")
    for node in region.nodes:
        cast = _FLOATS[node.meta.dtype]
        args = [f"{cast}({_operand(a)})" for a in node.args]
        lines.append(f"        {node.name} = {cast}({_TEMPLATES[node.opinfo.ufunc].format(*args)})")
    lines += [f"        _ok &= abs({name}) < _inf" for name in _checked(region, results)]
    lines += [f"        _o_{n.name}[_i] = {n.name}" for n in results]
    lines.append("    return _ok")
    return "\n".join(lines) + "\n"


# Ops whose result can be finite when an operand is not (1 / inf, minimum(inf, 1)), with the
# operand positions that can hide it.
_MASKING = {np.true_divide: (1,), np.maximum: (0, 1), np.minimum: (0, 1)}


def _checked(region: Region, results: List[Node]) -> List[str]:
    """The values whose finiteness proves that every value of the region was finite.

    Every other op gives a non-finite result from a non-finite operand (inf - inf, inf * 0,
    sin(inf), log(-inf), ...), so a non-finite value reaches a result, a value nothing reads,
    or an operand of a masking op: those are checked (``abs(v) < inf`` is false for both inf
    and NaN).  Checking each value instead costs a quarter of a memory-bound chain's time."""
    names = [n.name for n in results]
    read = set()
    for node in region.nodes:
        for position, arg in enumerate(node.args):
            if isinstance(arg, Node):
                read.add(arg.name)
                if position in _MASKING.get(node.opinfo.ufunc, ()):
                    names.append(arg.name)
    names += [n.name for n in region.nodes if n.name not in read]
    return list(dict.fromkeys(names))


def _operand(value: Any) -> str:
    if isinstance(value, Node):
        return value.name
    return repr(float(value) if isinstance(value, (float, np.floating)) else int(value))


def _max(a: Any, b: Any) -> Any:
    return a if (a >= b or a != a) else b


def _min(a: Any, b: Any) -> Any:
    return a if (a <= b or a != a) else b


class NumbaKernel:
    """The loop of one region: ``load()`` gives ``run(*operands) -> (results, all finite)``
    on C-contiguous operands (None where the region's size, read at run time, is under
    MIN_ELEMENTS), compiled by numba on its first call; ``failed(error)`` when numba cannot
    compile it."""

    def __init__(self, source: str, shape: tuple, operands: List[Node], results: List[Node],
                 label: str) -> None:
        self.source = source + _caller_source(shape, operands, results)
        self.results = results
        self.label = label

    def load(self) -> Optional[Callable[..., Optional[tuple]]]:
        """The run function (numba compiles the kernel on its first call), None if numba
        cannot even be imported or the source defined."""
        try:
            return self._load()
        except Exception as error:
            self.failed(error)
            return None

    def _load(self) -> Callable[..., Optional[tuple]]:
        import numba
        scope: Dict[str, Any] = {"_np": np, "_f32": np.float32, "_f64": np.float64, "_inf": np.inf}
        scope["_max"] = numba.njit(inline="always")(_max)
        scope["_min"] = numba.njit(inline="always")(_min)
        scope.update({f"_d{i}": n.meta.dtype for i, n in enumerate(self.results)})
        exec(compile_generated(self.source, unique_filename(self.label)), scope)
        # error_model="numpy": x / 0 gives inf or nan as in NumPy, never ZeroDivisionError.
        scope["kernel"] = numba.njit(error_model="numpy", nogil=True, fastmath=False)(scope["kernel"])
        return scope["run"]

    def failed(self, error: Exception) -> None:
        """numba cannot type or compile the kernel: NumPy runs the region from now on."""
        logger.warning("numba cannot compile %s, NumPy runs it: %s: %s", self.label,
                       type(error).__name__, error)


def _caller_source(shape: tuple, operands: List[Node], results: List[Node]) -> str:
    """``run(*operands) -> (results, all finite)``: the results allocated, every array passed
    flat (a 1-d one as it is), a 0-d array's value as a scalar, a NumPy scalar as it is.
    The size comes from an operand of the region's shape (eligible() makes sure there is
    one), so that one kernel serves every size of a dynamic dimension; a region under
    MIN_ELEMENTS gives None (NumPy's own loops are faster there)."""
    def flat(name: str, ndim: int) -> str:
        return name if ndim == 1 else f"{name}.reshape(-1)"
    full = next(n for n in operands if same_shape(n.meta.shape, shape))
    args = [flat(f"v_{n.name}", n.meta.ndim) if n.meta.ndim else
            f"v_{n.name}[()]" if n.meta.kind == "array" else f"v_{n.name}" for n in operands]
    lines = [f"def run({', '.join(f'v_{n.name}' for n in operands)}):"]
    if has_symbols(shape):
        lines += [f"    _n = v_{full.name}.size",
                  f"    if _n < {MIN_ELEMENTS}:",
                  "        return None",
                  f"    _shape = v_{full.name}.shape"]
    else:
        lines += [f"    _n = {math.prod(shape)}", f"    _shape = {shape!r}"]
    lines += [f"    _r{i} = _np.empty(_shape, _d{i})" for i in range(len(results))]
    args += [f"_r{i}" if len(shape) == 1 else f"_r{i}.reshape(-1)" for i in range(len(results))]
    lines.append(f"    _ok = kernel(_n, {', '.join(args)})")
    lines.append(f"    return ({''.join(f'_r{i}, ' for i in range(len(results)))}), _ok")
    return "\n".join(lines) + "\n"
