"""``import`` inside a compiled function (compiler.handlers.imports): an already imported
module costs no graph break; an import that would run code runs natively, exactly when and
as often as in the plain function."""
from __future__ import annotations

import builtins
import sys
import textwrap

import numpy as np
import pytest

import compiler


def _uses_imports(x):
    import numpy as np2
    import os.path
    from numpy import linalg as la
    from os import path
    return np2.sin(x) * 2.0 + la.norm(x), os.path.sep + path.sep


def test_imports_of_imported_modules_cost_no_break():
    compiled = compiler.compile(_uses_imports)
    for n in (3, 3, 4):
        x = np.arange(float(n))
        got, want = compiled(x), _uses_imports(x)
        np.testing.assert_array_equal(got[0], want[0])
        assert got[1] == want[1]
    events = compiler.events()
    assert len(events) == 2  # the second length recompiles; the imports never break
    for event in events:
        assert event.graph_break_count == 0 and event.fallback_reason is None
        assert "sys.modules['numpy'] is numpy" in event.guards


@pytest.fixture
def side_effect_module(tmp_path, monkeypatch):
    """A module whose top level records each time it runs."""
    name = "tracematrix_import_probe"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent('''
        import builtins
        builtins.__dict__.setdefault("_tracematrix_import_runs", []).append(__name__)
        SCALE = 3.0
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    builtins.__dict__["_tracematrix_import_runs"] = []
    yield name
    sys.modules.pop(name, None)
    builtins.__dict__.pop("_tracematrix_import_runs", None)


def _import_probe(x):
    import tracematrix_import_probe
    return x * tracematrix_import_probe.SCALE


@pytest.mark.parametrize("imported_first", [True, False], ids=["imported", "not_imported"])
def test_module_code_runs_exactly_when_the_plain_import_would(side_effect_module, imported_first):
    runs = builtins.__dict__["_tracematrix_import_runs"]
    if imported_first:
        __import__(side_effect_module)
    compiled = compiler.compile(_import_probe)
    x = np.arange(3.0)
    np.testing.assert_array_equal(compiled(x), x * 3.0)
    assert runs == [side_effect_module]  # once: by the first import, wherever it happened
    np.testing.assert_array_equal(compiled(x), x * 3.0)
    assert runs == [side_effect_module]
    del sys.modules[side_effect_module]   # plain code would import (run the module) again
    np.testing.assert_array_equal(compiled(x), x * 3.0)
    assert runs == [side_effect_module] * 2
    first = compiler.events()[0]
    assert (first.graph_break_count == 0) == imported_first


def test_a_replaced_import_hook_is_called_as_in_plain_code(monkeypatch):
    calls = []
    original = builtins.__import__

    def hook(name, *args, **kwargs):
        if name in ("numpy", "os", "os.path"):  # the function's own (NumPy imports inside norm)
            calls.append(name)
        return original(name, *args, **kwargs)

    compiled = compiler.compile(_uses_imports)
    x = np.arange(3.0)
    compiled(x)  # traced with the interpreter's __import__
    monkeypatch.setattr(builtins, "__import__", hook)
    got = compiled(x)
    plain_calls = list(calls)
    calls.clear()
    want = _uses_imports(x)
    np.testing.assert_array_equal(got[0], want[0])
    assert plain_calls == calls == ["numpy", "os.path", "numpy", "os"]


def _module_with_getattr():
    """A module whose missing names are answered by a module ``__getattr__`` (PEP 562) that
    warns, as CPython's ``re.__version__`` does from 3.15: the warning names the reader's
    file and line, on every read."""
    import types
    module = types.ModuleType("tracematrix_deprecating")
    module.kept = 2.0

    def __getattr__(name):
        if name == "old":
            import warnings
            warnings.warn("'old' is deprecated", DeprecationWarning, stacklevel=2)
            return 5.0
        raise AttributeError(name)
    module.__getattr__ = __getattr__
    sys.modules[module.__name__] = module
    return module


def _reads_deprecated(m, x):
    return x * getattr(m, "old") + m.kept


def _imports_deprecated(x):
    from tracematrix_deprecating import old
    return x * old


@pytest.mark.parametrize("fn", [_reads_deprecated, _imports_deprecated])
def test_a_module_getattr_runs_in_the_callers_frame_on_every_call(fn):
    import warnings
    module = _module_with_getattr()
    try:
        args = (module, np.arange(3.0)) if fn is _reads_deprecated else (np.arange(3.0),)
        compiled = compiler.compile(fn)

        def record(call):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                result = call(*args)
            return result.tolist(), [(str(w.message), w.category, w.filename, w.lineno) for w in caught]
        plain = record(fn)
        assert plain[1] and plain[1][0][2] == __file__  # the plain reader's own file
        for _ in range(3):  # compile, then cache hits: one warning per call, from the same line
            assert record(compiled) == plain
    finally:
        sys.modules.pop("tracematrix_deprecating", None)
