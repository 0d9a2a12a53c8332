"""A fused region evaluated in cache-sized blocks (numexpr's approach, in NumPy).

Whole-array evaluation of a chain of n ufuncs streams every intermediate
through memory: each op reads and writes arrays larger than the cache.  Here
the region's loop runs over blocks of ``BLOCK_ELEMENTS`` elements instead:
each op of the chain runs on one block, writing into a scratch buffer of one
block that stays in the L2 cache, so each operand is read from memory once
and each result the rest of the graph needs is written once.  Scratch buffers
are reused by liveness inside the region, and made per call (two threads
calling one compiled graph never share them).

Values and dtypes are those of whole-array evaluation: the same ufuncs run
with the same operands (a block is a slice of the same array, of the same
dimensionality, so NumPy picks the same loop under value-based casting and
NEP 50 alike), with ``out=`` set to a buffer of the dtype the graph's
metadata gives the result.  Floating-point errors are reported per block,
so the caller uses this only while NumPy's error state ignores or raises,
and re-runs the region over whole arrays when a block raises, so that the
error raised is that of the first op meeting one (region_kernel.py).

A whole-array sum of a value of the region (``fusion.folds_into``) may end
it: each block is summed as it is computed (pairwise, by NumPy), and the
result is the sum of the blocks' partial sums (pairwise again), the scalar
type NumPy's sum returns.  The summation order differs from NumPy's pairwise
sum over the whole array, by rounding only (both are pairwise: errors of
order log2(n) ulp of the sum of magnitudes).

Blocks run along the flattened array when every array operand has the
region's shape (the common case: a chain over equal-shaped inputs), else
along the first axis (operands broadcast along it are passed whole).  A
region with dynamic dimensions runs in blocks only in the first case: its
size is read from an operand at run time, and one under ``MIN_ELEMENTS``
goes to the whole-array code.

Measured on 1e6 float64 elements, a 7-op chain over two inputs: blocks of
16K elements are 2.5x whole-array NumPy; 4K and 8K lose to call overhead,
1K is slower than whole arrays (benchmarks/bench_backends.py).
"""
from __future__ import annotations

import math
from typing import Any, Dict, List, Optional

from compiler.backends.fusion import Region
from compiler.graph import Node
from compiler.symbolic_shapes import has_symbols, same_shape

# Elements per block: 128 KiB of float64 per buffer, so that a chain's few
# live buffers fit in a 1-2 MiB L2 cache together.
BLOCK_ELEMENTS = 16384
# Regions smaller than this run over whole arrays (a few blocks do not pay for the loop).
MIN_ELEMENTS = 4 * BLOCK_ELEMENTS


def blocked_source(emit: Any, region: Region, operands: List[Node], results: List[Node],
                   name: str) -> Optional[List[str]]:
    """Lines of ``def name(*operands)`` returning ``results`` computed block by block, or
    None where blocks do not pay (a small region) or cannot be formed.  ``emit`` is the
    numpy backend's emitter (it spells the calls and binds the constants).  The region's
    last node may be a sum folded into the loop (fusion.folds_into)."""
    shape = region.nodes[0].meta.shape
    reduction = region.nodes[-1] if not same_shape(region.nodes[-1].meta.shape, shape) else None
    elementwise = region.nodes[:-1] if reduction is not None else region.nodes
    arrays = [n for n in operands if n.meta.ndim >= 1]
    flat = all(same_shape(n.meta.shape, shape) for n in arrays)
    dynamic = has_symbols(shape)
    if dynamic and not (flat and arrays):
        return None  # the size is read from an operand of the region's shape at run time
    if not dynamic and math.prod(shape) < MIN_ELEMENTS:
        return None
    if flat:
        length, row, block_shape = "_n", 1, (BLOCK_ELEMENTS,)
    else:
        row = math.prod(shape[1:])
        length = shape[0]
        if length < 2:
            return None
        block_shape = (max(1, BLOCK_ELEMENTS // max(row, 1)),) + shape[1:]
    rows = block_shape[0]
    params = [n.name for n in operands]
    lines = [f"def {name}({', '.join(params)}):"]
    if dynamic:  # one function for every size: read it, and leave small ones to NumPy
        lines += [f"    _n = {arrays[0].name}.size", f"    if _n < {MIN_ELEMENTS}:", "        return None"]
    elif flat:
        lines.append(f"    _n = {math.prod(shape)}")
    result_shape = f"{arrays[0].name}.shape" if dynamic else repr(shape)
    sliced = []
    for node in arrays:
        if flat:
            lines.append(f"    _a_{node.name} = {node.name}.reshape(-1)")
            sliced.append(node)
        elif node.meta.ndim == len(shape) and node.meta.shape[0] == length:
            lines.append(f"    _a_{node.name} = {node.name}")
            sliced.append(node)
    arrays_out = [n for n in results if n is not reduction]
    for node in arrays_out:
        dtype = emit.bind(node.meta.dtype, "c")
        lines.append(f"    _r_{node.name} = _np.empty({result_shape}, {dtype})")
        lines.append(f"    _w_{node.name} = _r_{node.name}" + (".reshape(-1)" if flat else ""))
    if reduction is not None:
        blocks = f"-(-{length} // {rows})"
        lines.append(f"    _parts = _np.empty({blocks}, {emit.bind(reduction.meta.dtype, 'c')})")
    scratch = _plan_scratch(region.nodes, {n.name for n in results})  # a sum is a result
    for buffer, dtype in sorted(set(scratch.values())):
        lines.append(f"    {buffer} = _np.empty({block_shape!r}, {emit.bind(dtype, 'c')})")
    buffers = sorted({b for b, _ in scratch.values()})
    lines.append(f"    for _i in range(0, {length}, {rows}):")
    lines.append(f"        _j = _i + {rows}")
    lines.append(f"        if _j > {length}:  # the last, shorter block")
    lines.append(f"            _j = {length}")
    lines += [f"            {b} = {b}[:{length} - _i]" for b in buffers]
    lines += [f"        {n.name} = _a_{n.name}[_i:_j]" for n in sliced]
    for node in elementwise:
        out = f"_w_{node.name}[_i:_j]" if node.name in {n.name for n in results} \
            else scratch[node.name][0]
        lines.append(f"        {node.name} = {emit.call(node, out)}")
    if reduction is not None:
        lines.append(f"        _parts[_i // {rows}] = {reduction.args[0].name}.sum()")
        lines.append(f"    _r_{reduction.name} = _parts.sum()")
    returned = ", ".join(f"_r_{n.name}" for n in results)
    lines.append(f"    return ({returned}{',' if len(results) == 1 else ''})")
    return lines


def _plan_scratch(nodes: List[Node], results: set) -> Dict[str, tuple]:
    """node name -> (scratch buffer name, dtype) for the values that live only inside the
    region; a buffer is written again once the value in it is dead (an elementwise ufunc may
    write into the buffer it reads)."""
    last_use: Dict[str, int] = {}
    for index, node in enumerate(nodes):
        for source in node.input_nodes():
            last_use[source.name] = index
    assigned: Dict[str, tuple] = {}
    free: List[tuple] = []
    count = 0
    for index, node in enumerate(nodes):
        for source in node.input_nodes():
            held = assigned.get(source.name)
            if held is not None and last_use[source.name] == index and held not in free:
                free.append(held)
        if node.name in results:
            continue
        dtype = node.meta.dtype
        choice = next((b for b in free if b[1] == dtype), None)
        if choice is None:
            choice = (f"_s{count}", dtype)
            count += 1
        else:
            free.remove(choice)
        assigned[node.name] = choice
        if node.name not in last_use:  # never read: its buffer is free again at once
            free.append(choice)
    return assigned
