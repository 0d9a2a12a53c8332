"""compiler.debug.prepare_debug: what a dump directory holds, and stepping through
generated code with pdb (run on every interpreter by the test session)."""
from __future__ import annotations

import ast
import io
import json
import os
import pdb

import numpy as np
import pytest

import compiler
from compiler.debug import DumpDirectoryWarning, prepare_debug


def _with_break(x, scale):
    y = np.sin(x) * scale
    if y.sum() > 0:  # data-dependent branch: a graph break
        y = y + 1
    return np.cos(y)


def _read(path):
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def test_a_break_and_recompiles_leave_every_view(tmp_path):
    f = compiler.compile(_with_break, backend="numpy", dynamic=False)  # static: one compile per size
    with prepare_debug(tmp_path) as root:
        assert root == str(tmp_path)
        for n in (3, 4, 5):  # three compiles of the root frame
            np.testing.assert_allclose(f(np.arange(float(n)), 2.0), _with_break(np.arange(float(n)), 2.0))
    index = json.loads(_read(tmp_path / "index.json"))
    roots = [r for r in index if r["frame"] == "_with_break"]
    assert [r["compile_id"] for r in roots] == ["0/0", "0/1", "0/2"]
    assert roots[2]["failed_guards"] == ["L['x'].shape == (3,)", "L['x'].shape == (4,)"]
    first = roots[0]["files"]
    for name in ("original_bytecode.txt", "original_decompiled.py", "transformed_bytecode.txt",
                 "transformed_code.py", "entry_source.py", "graph.py", "guards.py", "kernel_numpy.py"):
        assert name in first, name
    folder = tmp_path / os.path.dirname(first["graph.py"])
    transformed = _read(folder / "transformed_code.py")
    assert "__compiled_fn_0_0(" in transformed
    assert "__resume_at_" in transformed and "__break_at_" in transformed
    graph = _read(folder / "graph.py")
    assert "def __compiled_fn_0_0(" in graph and "numpy.sin(" in graph
    assert "_np.sin(" in _read(folder / "kernel_numpy.py")
    guards = _read(folder / "guards.py")
    assert "L['x'].shape == (3,)" in guards
    assert "LOAD_" in _read(folder / "original_bytecode.txt")
    for name in ("transformed_code.py", "graph.py", "guards.py", "original_decompiled.py", "kernel_numpy.py"):
        ast.parse(_read(folder / name))
    # The continuation: its own compiles, and its code (listing and decompiled view) under code/.
    continuations = [r for r in index if ".__resume_at_" in r["frame"]]
    assert continuations and all("transformed_code.py" in r["files"] for r in continuations)
    code_files = sorted(os.listdir(tmp_path / "code"))
    assert any(n.endswith(".txt") and "__resume_at_" in n for n in code_files)
    views = [n for n in code_files if n.endswith(".py") and "__resume_at_" in n]
    assert views
    view = _read(tmp_path / "code" / views[0])
    ast.parse(view)
    assert view.startswith("def __resume_at_")
    index_md = _read(tmp_path / "index.md")
    assert "## 0/2 _with_break" in index_md and "(code/" in index_md
    assert any(n.startswith("0") for n in os.listdir(tmp_path / "generated"))
    # Outside the block nothing more is written, and tracing runs natively again.
    before = len(os.listdir(tmp_path))
    f(np.arange(9.0), 2.0)
    assert len(os.listdir(tmp_path)) == before
    assert compiler.config.trace_generated_code is False


@pytest.mark.parametrize("bad", ["file", "under_a_file"])
def test_a_bad_dump_directory_is_one_clear_warning_and_the_function_runs(tmp_path, bad):
    blocker = tmp_path / "blocker"
    blocker.write_text("not a directory")
    target = blocker if bad == "file" else blocker / "dump"
    f = compiler.compile(_with_break)
    with pytest.warns(DumpDirectoryWarning) as caught:
        with prepare_debug(target):
            result = f(np.arange(3.0), 2.0)
            result2 = f(np.arange(4.0), 2.0)
    assert len(caught) == 1
    message = str(caught[0].message)
    assert str(target) in message and ("file" in message or "directory" in message)
    np.testing.assert_allclose(result, _with_break(np.arange(3.0), 2.0))
    np.testing.assert_allclose(result2, _with_break(np.arange(4.0), 2.0))
    assert compiler.events() and all(e.internal_error is None for e in compiler.events())


def test_prepare_debug_rejects_what_is_not_a_path():
    with pytest.raises(TypeError, match="directory path"):
        with prepare_debug(42):  # type: ignore[arg-type]
            pass


def _simple(x):
    y = np.sin(x) * 2
    return y + 1


def test_pdb_steps_from_the_wrapper_into_the_entry_and_the_numpy_kernel(tmp_path):
    f = compiler.compile(_simple, backend="numpy")
    x = np.arange(4.0)
    f(x)  # compiled outside the debugger: pdb then steps through the cache hit
    out = io.StringIO()
    commands = io.StringIO("\n".join(["step"] * 30 + ["continue"]) + "\n")
    # The compiler's own modules and NumPy's are skipped: what is left is generated code.
    debugger = pdb.Pdb(stdin=commands, stdout=out, nosigint=True,
                       skip=["compiler.*", "numpy*", "contextlib", "opcode_tables.*"])
    debugger.use_rawinput = False
    with prepare_debug(tmp_path):
        result = debugger.runcall(f, x)
    np.testing.assert_allclose(result, _simple(x))
    shown = out.getvalue()
    assert "<tracematrix wrapper of _simple" in shown
    assert "<tracematrix entry 0/0 _simple" in shown
    assert "-> (_o0,) = _graph(L_x)" in shown
    assert "<tracematrix numpy kernel" in shown
    assert "sin = _np.sin(L_x)" in shown
    assert "return (add,)" in shown
    assert "end of file" not in shown.lower()


def test_without_prepare_debug_a_debugger_sees_the_plain_function():
    f = compiler.compile(_simple)
    x = np.arange(4.0)
    f(x)
    out = io.StringIO()
    commands = io.StringIO("\n".join(["step"] * 12 + ["continue"]) + "\n")
    debugger = pdb.Pdb(stdin=commands, stdout=out, nosigint=True, skip=["compiler.*", "numpy*"])
    debugger.use_rawinput = False
    debugger.runcall(f, x)
    shown = out.getvalue()
    assert "y = np.sin(x) * 2" in shown
    assert "<tracematrix entry" not in shown


def test_triton_kernels_are_dumped_where_triton_is_installed(tmp_path):
    from compiler.backends.triton import toolchain

    if toolchain.triton_version() is None:
        pytest.skip("triton is not installed for this interpreter (the gpu extra has no wheel for it)")
    f = compiler.compile(_simple, backend="triton")
    with prepare_debug(tmp_path):
        try:
            f(np.arange(4.0))
        except compiler.exc.BackendUnavailable:
            pass  # no GPU here: the kernels are made (and dumped) before they would run
    kernel = _read(tmp_path / "_simple_0_0" / "kernel_triton.py")
    assert "@triton.jit" in kernel and "tl.sin(" in kernel
