"""``prepare_debug(dump_dir)``: every frame compiled inside the block, written out to read.

Per cache entry (one directory per compile id, ``<frame>_<compile id>/``):

    original_bytecode.txt    the frame's code as compiled (dis), continuations' included
    original_decompiled.py   that code as the decompiler reads it (opcode_tables.decompile)
    transformed_bytecode.txt the entry's generated function (dis)
    transformed_code.py      its source, the graph called as __compiled_fn_<id> and the
                             break stub and continuations by name
    entry_source.py          the exact source that runs (what tracebacks and pdb show)
    graph.py                 the graph as Python source, with the NumPy calls
    guards.py                the guards as Python source, one per line, with their names
    kernel_<backend>.py      the backend's generated source (numpy codegen, Triton kernels)

and per break stub or continuation made for the frame, once, under ``code/``: its
bytecode listing and its decompiled view.  Every piece of source the compiler
generates while the block runs is also copied under ``generated/``.  ``index.md``
(and ``index.json``) link them per compile id; both are rewritten after each
compile, so the directory is complete whenever the program stops.

Inside the block compiled functions keep running compiled under a debugger
(``config.trace_generated_code``), so ``pdb`` steps from the user's function
into the generated code and the kernels.

A dump directory that cannot be written (not writable, a file in the way, the
disk full) is reported once, as a ``DumpDirectoryWarning``; the block runs and
compiles as it would without ``prepare_debug``.
"""
from __future__ import annotations

import contextlib
import dis
import io
import json
import os
import re
import tokenize
import types
import warnings
from typing import Any, Dict, Iterator, List, Optional, Set

from opcode_tables.decompile import decompile

from .. import bytecode_hooks, config, generated_code
from ..resume import Continuation, Stub


class DumpDirectoryWarning(RuntimeWarning):
    """The dump directory of ``prepare_debug`` cannot be written; nothing more is dumped."""


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name) or "code"


def _listing(code: types.CodeType) -> str:
    buffer = io.StringIO()
    dis.dis(code, file=buffer)
    return buffer.getvalue()


def _python_name(label: str) -> str:
    """``f.__resume_at_42`` -> ``__resume_at_42``: the part of a stub's or continuation's
    qualified name that is an identifier."""
    return label.rsplit(".", 1)[-1] if label.rsplit(".", 1)[-1].isidentifier() else _safe(label)


def _rename(source: str, names: Dict[str, str]) -> str:
    """``source`` with the NAME tokens in ``names`` replaced (strings and comments untouched)."""
    lines = source.splitlines(True)
    edits = [(token.start, token.end, names[token.string])
             for token in tokenize.generate_tokens(io.StringIO(source).readline)
             if token.type == tokenize.NAME and token.string in names]
    for (row, col), (_, end_col), text in reversed(edits):  # right to left: columns stay valid
        lines[row - 1] = lines[row - 1][:col] + text + lines[row - 1][end_col:]
    return "".join(lines)


def graph_source(graph_text: str, name: str) -> str:
    """The canonical graph text (compiler.graph_text) as a Python function named ``name``."""
    lines = graph_text.splitlines()
    if not lines:
        return ""
    header = lines[0]
    match = re.match(r"graph\((.*)\):$", header)
    params = []
    notes = []
    if match and match.group(1):
        for part in re.split(r",\s*(?=[A-Za-z_][A-Za-z0-9_]*:)", match.group(1)):
            param, _, meta = part.partition(":")
            params.append(param.strip())
            notes.append(f"{param.strip()}: {meta.strip()}")
    body = [line[2:] if line.startswith("  ") else line for line in lines[1:]]
    text = ["import operator", "import numpy", "from numpy import ndarray", "", "",
            f"def {name}({', '.join(params)}):"]
    if notes:
        text.append("    # inputs: " + "; ".join(notes))
    text += ["    " + line for line in body]
    return "\n".join(text) + "\n"


def guards_source(entry: Any) -> str:
    params = ", ".join(entry.params)
    lines = [f"# The guards of compile {entry.event.compile_id} ({entry.event.frame_name}): the entry runs",
             "# only for calls where every one holds, checked in this order.  Names other than the",
             "# parameters are the entry's constants (see transformed_code.py).", "",
             f"def guards({params}):", "    return ("]
    if not entry.guards:
        lines[-1] = "    return True  # no guards: every call is accepted"
    else:
        for k, guard in enumerate(entry.guards):
            joiner = " and" if k < len(entry.guards) - 1 else ""
            lines.append(f"        ({guard.code}){joiner}  # {guard.name}")
        lines.append("    )")
    return "\n".join(lines) + "\n"


class _Dumper:
    def __init__(self, root: str) -> None:
        self.root = root
        self.failed = False
        self.written_code: Set[int] = set()
        self.code_files: Dict[str, str] = {}
        self.records: List[Dict[str, Any]] = []
        self.generated = 0

    # -- writing -------------------------------------------------------------------------
    def write(self, relative: str, text: str) -> Optional[str]:
        if self.failed:
            return None
        path = os.path.join(self.root, relative)
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(text)
        except OSError as error:
            self.fail(f"cannot write {path}: {error.strerror or error}")
            return None
        return relative

    def fail(self, why: str) -> None:
        if not self.failed:
            self.failed = True
            warnings.warn(f"tracematrix: compiler.debug.prepare_debug: {why}; nothing more is dumped, "
                          "and compiled functions run as usual", DumpDirectoryWarning, stacklevel=3)

    # -- what is written -----------------------------------------------------------------
    def on_source(self, filename: str, source: str) -> None:
        if filename.startswith("<tracematrix guard check"):
            return  # one per guard, made to name a failing one: guards.py has them all
        self.generated += 1
        self.write(os.path.join("generated", f"{self.generated:05d}_{_safe(filename)}.py"),
                   f"# {filename}\n{source}")

    def on_entry(self, fn: types.FunctionType, frame_cache: Any, entry: Any) -> None:
        event = entry.event
        folder = f"{_safe(event.frame_name)}_{event.compile_id.replace('/', '_')}"
        files: Dict[str, Optional[str]] = {}

        def put(name: str, text: str) -> None:
            files[name] = self.write(os.path.join(folder, name), text)

        put("original_bytecode.txt", _listing(fn.__code__))
        put("original_decompiled.py", decompile(fn.__code__))
        put("transformed_bytecode.txt", _listing(entry.fn.__code__))
        put("entry_source.py", entry.source)
        graph_name = f"__compiled_fn_{event.compile_id.replace('/', '_')}"
        names = self._readable_names(entry, graph_name)
        put("transformed_code.py", self._transformed(entry, names, graph_name))
        if entry.graph is not None:
            put("graph.py", graph_source(str(entry.graph), graph_name))
        put("guards.py", guards_source(entry))
        compiled = entry.compiled_graph
        if compiled is not None and compiled.source:
            put(f"kernel_{compiled.backend}.py", compiled.source)
        made = self._write_code_objects(frame_cache)
        self.records.append({"compile_id": event.compile_id, "frame": event.frame_name,
                             "backend": compiled.backend if compiled is not None else event.backend,
                             "recompile_reason": event.recompile_reason, "failed_guards": event.failed_guards,
                             "graph_breaks": event.break_reasons, "fallback_reason": event.fallback_reason,
                             "files": {k: v for k, v in files.items() if v}, "code": made})
        self._write_index()

    def _readable_names(self, entry: Any, graph_name: str) -> Dict[str, str]:
        names = {"_graph": graph_name}
        for name, value in entry.ns.values.items():
            if isinstance(value, (Stub, Continuation)):
                names[name] = _python_name(value.qualname)
            elif isinstance(value, tuple) and value and all(isinstance(v, Continuation) for v in value):
                names[name] = "(" + ", ".join(_python_name(v.qualname) for v in value) + ",)"
        return names

    def _transformed(self, entry: Any, names: Dict[str, str], graph_name: str) -> str:
        event = entry.event
        header = [f"# tracematrix: compile {event.compile_id} of {event.frame_name} "
                  f"({event.filename}:{event.firstlineno}), backend {entry.event.backend}",
                  "# The function the compiled frame runs for the calls its guards accept (the exact",
                  "# source is entry_source.py).  L_<name> are the frame's locals, _cl its closure."]
        if entry.graph is not None:
            header.append(f"# {graph_name}: the graph (graph.py; the backend's code: kernel_*.py)")
        for value in entry.ns.values.values():
            if isinstance(value, (Stub, Continuation)):
                kind = "break stub: runs the breaking instruction natively" if isinstance(value, Stub) else \
                    "continuation: the rest of the frame, compiled on its first call"
                header.append(f"# {_python_name(value.qualname)}: {kind} (code/{_safe(value.qualname)}.py)")
        if entry.native:
            header.append(f"# This entry runs the frame natively: {event.fallback_reason}")
        try:
            body = _rename(entry.source, names)
        except (tokenize.TokenError, IndentationError):
            body = entry.source
        return "\n".join(header) + "\n\n" + body

    def _write_code_objects(self, frame_cache: Any) -> List[str]:
        made = []
        for label, code in frame_cache.registry.labelled:
            if id(code) in self.written_code:
                continue
            self.written_code.add(id(code))
            base = os.path.join("code", _safe(label))
            listing = self.write(base + ".txt", _listing(code))
            view = self.write(base + ".py", decompile(code, name=_python_name(label)))
            if view:
                self.code_files[label] = view
            made += [p for p in (listing, view) if p]
        return made

    def _write_index(self) -> None:
        lines = ["# tracematrix debug dump", "",
                 "One section per compile id: the frame's original and transformed code, its graph, "
                 "guards and kernels.  `code/` holds the break stubs and continuations.", ""]
        for record in self.records:
            lines.append(f"## {record['compile_id']} {record['frame']} (backend {record['backend']})")
            if record["recompile_reason"]:
                lines.append("")
                lines.append("Recompiled; failing guard of each earlier entry, oldest first: " +
                             "; ".join(f"`{g}`" for g in record["failed_guards"]))
            for reason in record["graph_breaks"]:
                lines.append(f"\nGraph break: {reason}")
            lines.append("")
            lines += [f"- [{name}]({path})" for name, path in record["files"].items()]
            lines += [f"- [{os.path.basename(path)}]({path})" for path in record["code"]]
            lines.append("")
        self.write("index.md", "\n".join(lines))
        self.write("index.json", json.dumps(self.records, indent=2, default=str) + "\n")


def _check_directory(path: str) -> Optional[str]:
    """Why ``path`` cannot be the dump directory, or None (after creating it)."""
    if os.path.exists(path) and not os.path.isdir(path):
        return f"the dump directory {path!r} is a file, not a directory (a file is in the way)"
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as error:
        return f"cannot create the dump directory {path!r}: {error.strerror or error}"
    if not os.access(path, os.W_OK | os.X_OK):
        return f"the dump directory {path!r} is not writable"
    return None


@contextlib.contextmanager
def prepare_debug(dump_dir: "os.PathLike[str] | str") -> Iterator[str]:
    """Write every frame compiled inside the block to ``dump_dir`` (created if missing; see
    the module's docstring for what is written) and let debuggers step through compiled
    code.  Yields the directory's absolute path."""
    try:
        root = os.path.abspath(os.fspath(dump_dir))
    except TypeError:
        raise TypeError(f"compiler.debug.prepare_debug expects a directory path (str or os.PathLike), "
                        f"got {type(dump_dir).__name__}") from None
    dumper = _Dumper(root)
    why = _check_directory(root)
    if why is not None:
        dumper.fail(why)
    saved = config.trace_generated_code
    config.trace_generated_code = True
    observer = bytecode_hooks.add_observer(dumper.on_entry)
    generated_code.add_listener(dumper.on_source)
    try:
        yield root
    finally:
        generated_code.remove_listener(dumper.on_source)
        observer.remove()
        config.trace_generated_code = saved
