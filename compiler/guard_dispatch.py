"""Choosing a cache entry in a time that does not grow with the number of entries.

Each cache entry is one generated function that checks all its guards and
returns ``MISS`` when one fails (compiler.entry_codegen); trying them newest
first costs one failed call per newer entry.  With many entries, the hit
path calls one *dispatcher* instead: it reads the cheap facts that most
guards start with, once (the type of each parameter and, for an ndarray,
its dtype and shape: the ones Dynamo's guard manager also checks first), and
looks up the entries whose own guards expect exactly those facts, in a dict
built when an entry is installed.  Only those are tried, newest first, and
each still checks every guard it has, so no entry runs that its guards
reject.  An entry whose guards do not fix every fact (a parameter's type
held weakly, an ndarray without a shape guard) is tried for every key.

When the lookup finds nothing, or every entry it found rejects the call, the
dispatcher tries all entries newest first, exactly as without it: a call
that some entry accepts always gets the newest such entry (equal facts hash
alike: types by identity, NumPy dtypes and shapes by value), and a miss
reaches the compile driver as before, which names the failing guards.

Below ``DISPATCH_FROM`` entries the entries are tried directly: a dispatcher
costs more than the one or two failed calls it saves (measured by
benchmarks/bench_compile.py: a single entry's hit path is unchanged).
Parameters are read only through the original ``type`` and, for an object
whose type is exactly ``numpy.ndarray``, its ``dtype`` and ``shape``: no code
of the program runs (a replaced ``builtins.type`` is not called, no property
or ``__eq__`` of the program's classes either).
"""
from __future__ import annotations

import builtins
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .entry_codegen import MISS
from .generated_code import compile_generated, unique_filename
from .guards import Guard

DISPATCH_FROM = 3

_WILDCARD = object()


def hit_path(entries: Sequence[Any]) -> List[Callable[..., Any]]:
    """What the compiled function's hit path tries, in order, for ``entries`` (CacheEntry
    objects, newest first): their functions while few, else one dispatcher."""
    functions = [entry.fn for entry in entries]
    if len(entries) < DISPATCH_FROM:
        return functions
    params = list(entries[0].params)
    if any(list(entry.params) != params for entry in entries):
        return functions
    dispatcher = _dispatcher(params, [entry.guards for entry in entries], functions)
    return functions if dispatcher is None else [dispatcher]


def _facts(guards: Sequence[Guard]) -> Dict[str, Any]:
    """parameter -> the fact an entry's guards expect of it: the id of its type, or for an
    ndarray (dtype, shape); _WILDCARD where they do not fix one."""
    found: Dict[Tuple[str, str], Any] = {}
    for guard in guards:
        if guard.key is not None:
            param, part, value = guard.key
            found.setdefault((param, part), value)
    facts: Dict[str, Any] = {}
    for (param, part), value in found.items():
        if part != "type":
            continue
        if value is np.ndarray:
            dtype, shape = found.get((param, "dtype")), found.get((param, "shape"))
            facts[param] = _WILDCARD if dtype is None or shape is None else (dtype, shape)
        else:
            facts[param] = id(value)
    return facts


def _dispatcher(params: List[str], guard_lists: List[Sequence[Guard]],
                functions: List[Callable[..., Any]]) -> Optional[Callable[..., Any]]:
    per_entry = [_facts(guards) for guards in guard_lists]
    columns = [p for p in params[1:] if any(p in facts and facts[p] is not _WILDCARD
                                            for facts in per_entry)]
    if not columns:
        return None
    keys: List[Any] = []
    for facts in per_entry:
        key = tuple(facts.get(p, _WILDCARD) for p in columns)
        if any(part is _WILDCARD for part in key):
            keys.append(None)
        else:
            keys.append(key[0] if len(columns) == 1 else key)
    table: Dict[Any, List[Callable[..., Any]]] = {}
    for key in keys:
        if key is not None and key not in table:
            table[key] = [fn for fn, other in zip(functions, keys) if other is None or other == key]
    arrays = {p for p in columns if any(isinstance(f.get(p), tuple) for f in per_entry)}
    args = ", ".join(params)
    lines = [f"def _dispatch({args}):"]
    parts = []
    for index, param in enumerate(columns):
        lines.append(f"    _t{index} = _type({param})")
        if param in arrays:
            parts.append(f"({param}.dtype, {param}.shape) if _t{index} is _ndarray else _id(_t{index})")
        else:
            parts.append(f"_id(_t{index})")
    if len(columns) == 1:
        lines.append(f"    _found = _table.get({parts[0]})")
    else:
        lines.append(f"    _found = _table.get(({', '.join(f'({p})' for p in parts)}))")
    lines += ["    if _found is not None:",
              "        for _entry in _found:",
              f"            _result = _entry({args})",
              "            if _result is not _MISS:",
              "                return _result",
              "    for _entry in _all:  # as without a dispatcher: newest first",
              f"        _result = _entry({args})",
              "        if _result is not _MISS:",
              "            return _result",
              "    return _MISS"]
    scope: Dict[str, Any] = {"_type": builtins.type, "_id": builtins.id, "_ndarray": np.ndarray,
                             "_table": table, "_all": list(functions), "_MISS": MISS,
                             # the types keyed by id live as long as the table
                             "_keep": [g.key[2] for gs in guard_lists for g in gs
                                       if g.key is not None and g.key[1] == "type"]}
    source = "\n".join(lines) + "\n"
    exec(compile_generated(source, unique_filename("cache-entry dispatch")), scope)
    return scope["_dispatch"]
