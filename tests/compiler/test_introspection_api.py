"""The public introspection API (compiler.introspection), pinned.

A change that makes one of these tests fail changes the promised API: bump
``compiler.API_VERSION`` and say so in the README's "Introspection" section.
"""
from __future__ import annotations

import ast
import dataclasses
import inspect
import linecache
import types

import numpy as np
import pytest

import compiler


def _fn(x, n):
    y = np.sin(x) * n
    return y + 1


def _breaking(x):
    y = np.cos(x) + 1
    if y.sum() > 0:
        y = y * 2
    return y - 1


def test_api_version_and_names_are_pinned():
    assert compiler.API_VERSION == 1
    for name in ("API_VERSION", "EntryInfo", "cache_entries", "register_bytecode_hook"):
        assert name in compiler.__all__, name
    fields = [f.name for f in dataclasses.fields(compiler.EntryInfo)]
    assert fields == ["compile_id", "frame_name", "guards", "guard_names", "code", "source", "graphs",
                      "backend", "kernel_sources", "runs_natively"]
    assert list(inspect.signature(compiler.cache_entries).parameters) == ["fn", "continuations"]
    assert list(inspect.signature(compiler.register_bytecode_hook).parameters) == ["hook"]
    assert "failed_guards" in {f.name for f in dataclasses.fields(compiler.CompilationEvent)}


def test_cache_entries_in_lookup_order_with_guards_code_graphs_and_backend():
    f = compiler.compile(_fn, backend="numpy", dynamic=False)
    x = np.arange(4.0)
    f(x, 2)
    f(np.arange(5.0), 2)
    entries = compiler.cache_entries(f)
    assert [e.compile_id for e in entries] == ["0/1", "0/0"]  # newest first: the order they are tried
    newest = entries[0]
    assert newest.frame_name == "_fn"
    assert newest.backend == "numpy"
    assert isinstance(newest.code, types.CodeType)
    assert any("shape == (5,)" in g for g in newest.guards)
    assert any(name == "L['x'].shape == (5,)" for name in newest.guard_names)
    assert len(newest.guards) == len(newest.guard_names)
    assert len(newest.graphs) == 1 and "numpy.sin" in newest.graphs[0]
    assert len(newest.kernel_sources) == 1 and "def " in newest.kernel_sources[0]
    assert not newest.runs_natively
    # The guards are Python source (expressions the entry's source contains verbatim).
    for guard in newest.guards:
        ast.parse(guard, mode="eval")
        assert f"({guard})" in newest.source
    assert newest.source.startswith("def __entry(")
    with pytest.raises(dataclasses.FrozenInstanceError):
        newest.compile_id = "x"  # type: ignore[misc]


def test_cache_entries_of_continuations_and_bad_input():
    f = compiler.compile(_breaking, backend="eager")
    f(np.arange(3.0))
    own = compiler.cache_entries(f)
    every = compiler.cache_entries(f, continuations=True)
    assert len(own) == 1 and len(every) > 1
    assert any(".__resume_at_" in e.frame_name for e in every)
    with pytest.raises(TypeError, match="compiler.compile"):
        compiler.cache_entries(_fn)


def test_bytecode_hook_sees_each_new_entry_once_and_can_be_removed():
    seen = []
    handle = compiler.register_bytecode_hook(lambda original, entry: seen.append((original, entry)))
    try:
        f = compiler.compile(_fn)
        x = np.arange(3.0)
        f(x, 2)
        f(x, 2)  # a cache hit: no new entry
        assert len(seen) == 1
        original, entry = seen[0]
        assert original is _fn.__code__
        assert entry is compiler.cache_entries(f)[0].code
        f(np.arange(4.0), 2)
        assert len(seen) == 2
    finally:
        handle.remove()
    f(np.arange(6.0), 2)
    assert len(seen) == 2
    handle.remove()  # a second remove does nothing


def test_bytecode_hook_sees_continuations_with_their_own_code():
    seen = []
    with compiler.register_bytecode_hook(lambda original, entry: seen.append(original)):
        f = compiler.compile(_breaking)
        f(np.arange(3.0))
    names = [getattr(code, "co_qualname", code.co_name) for code in seen]
    assert seen[0] is _breaking.__code__
    assert len(seen) >= 2 and all(code.co_name == "_breaking" for code in seen), names


def test_a_hook_that_raises_is_reported_and_the_function_still_runs():
    def broken(original, entry):
        raise ValueError("hook bug")

    with compiler.register_bytecode_hook(broken):
        f = compiler.compile(_fn)
        with pytest.warns(RuntimeWarning, match="hook bug"):
            result = f(np.arange(3.0), 2)
    np.testing.assert_allclose(result, _fn(np.arange(3.0), 2))
    with pytest.raises(TypeError, match="callable"):
        compiler.register_bytecode_hook("not a function")


def test_third_compile_lists_the_failing_guard_of_both_earlier_entries():
    f = compiler.compile(_fn, dynamic=False)
    for n in (3, 4, 5):
        f(np.arange(float(n)), 2)
    events = compiler.events()
    assert [len(e.failed_guards) for e in events] == [0, 1, 2]
    assert events[2].failed_guards == ["L['x'].shape == (3,)", "L['x'].shape == (4,)"]
    assert events[2].recompile_reason == events[2].failed_guards[-1]
    assert events[1].recompile_reason == "L['x'].shape == (3,)"


def test_every_generated_code_object_has_its_source_in_linecache():
    codes = []
    with compiler.register_bytecode_hook(lambda original, entry: codes.append(entry)):
        f = compiler.compile(_breaking, backend="numpy")
        f(np.arange(4.0))
    assert codes
    for code in codes:
        lines = linecache.getlines(code.co_filename)
        assert lines and lines[0].startswith("def __entry("), code.co_filename
        assert inspect.getsource(code).startswith("def __entry(")
    # The numpy kernels: the compiled graph's function.
    kernels = [entry.compiled_graph.fn.__code__ for entry in f._tracematrix_cache.cache_entries
               if entry.compiled_graph is not None]
    kernels += [entry.compiled_graph.fn.__code__ for cont in f._tracematrix_cache.registry.continuations()
                for entry in cont.cache.cache_entries if entry.compiled_graph is not None]
    assert kernels
    for code in kernels:
        assert code.co_filename.startswith("<tracematrix numpy kernel")
        assert "".join(linecache.getlines(code.co_filename)).startswith("def ")
    # Names are unique: two compiles never share a file name (linecache would show the wrong one).
    names = [code.co_filename for code in codes + kernels]
    assert len(names) == len(set(names))

