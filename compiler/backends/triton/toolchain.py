"""The one place that knows how Triton's API differs between releases.

Supported: Triton 3.1 (the newest for Python 3.8) to 3.9.  What differs, and
how it is told apart (by the API's shape, never by a version number):

- ``ASTSource``: 3.1 takes ``signature={0: "*fp32", ...}`` keyed by argument
  position and ``constants={4: 256}``; 3.2+ takes ``signature={"x_ptr":
  "*fp32", ..., "BLOCK": "constexpr"}`` and ``constexprs={"BLOCK": 256}``.
- Triton 3.9 warns unless ``TRITON_DEFAULT_FP_FUSION`` is set; it changes the
  generated IR, so it is always set (to "1", Triton's own default).

Compiling ahead of time for a named target (``GPUTarget("cuda", 90, 32)``)
needs no GPU and no driver.  Triton reads its environment when it is
imported, so ``import_triton()`` sets it first; every process gets its own
``TRITON_CACHE_DIR`` (a temporary directory), never ``~/.triton``.
"""
from __future__ import annotations

import atexit
import hashlib
import importlib.util
import inspect
import os
import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Dict, Optional, Tuple

# sm_90 (H100), 32 threads a warp: the compile-only target of the matrix.
DEFAULT_TARGET: Tuple[str, int, int] = ("cuda", 90, 32)

_process_dir: Optional[str] = None


def process_dir() -> str:
    """A temporary directory owned by this process (Triton's cache, kernel sources)."""
    global _process_dir
    if _process_dir is None:
        _process_dir = tempfile.mkdtemp(prefix=f"tracematrix-triton-{os.getpid()}-")
        atexit.register(shutil.rmtree, _process_dir, True)
    return _process_dir


def prepare_environment() -> None:
    """Set what Triton reads at import time, unless the user already has."""
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    if "TRITON_CACHE_DIR" not in os.environ:
        os.environ["TRITON_CACHE_DIR"] = os.path.join(process_dir(), "cache")


def import_triton() -> ModuleType:
    """``triton``, imported with the environment set; ImportError when it is not installed."""
    if "triton" not in sys.modules:
        prepare_environment()
    import triton  # noqa: F401  (import after the environment is set)
    import triton.language  # noqa: F401
    return sys.modules["triton"]


def triton_version() -> Optional[str]:
    """The installed Triton's version, or None when it does not import."""
    try:
        return import_triton().__version__
    except Exception:  # a broken install counts as not installed
        return None


def load_kernel_module(source: str) -> ModuleType:
    """Import generated kernel source from a real file: ``@triton.jit`` reads
    the function's source with ``inspect``, which needs one."""
    import_triton()
    digest = hashlib.sha256(source.encode("utf-8")).hexdigest()[:16]
    name = f"tracematrix_triton_kernels_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    directory = os.path.join(process_dir(), "kernels")
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, name + ".py")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(source)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@dataclass
class CompiledIR:
    """What an ahead-of-time compile gives: the IR texts and how long it took."""

    ttir: str
    ttgir: str
    llir: str
    ptx: str
    compile_time_s: float
    ttir_ops: Dict[str, int] = field(default_factory=dict)

    @property
    def ttir_op_count(self) -> int:
        return sum(self.ttir_ops.values())


def _ast_source(triton: Any, jit_fn: Any, signature: Dict[str, str], constexprs: Dict[str, int]) -> Any:
    """``triton.compiler.ASTSource`` in the calling convention of the installed release."""
    ast_source = triton.compiler.ASTSource
    parameters = inspect.signature(ast_source.__init__).parameters
    arg_names = list(inspect.signature(jit_fn.fn).parameters)
    if "constexprs" in parameters:  # 3.2+: keyed by name, constexprs in the signature
        full = {name: signature.get(name, "constexpr") for name in arg_names}
        return ast_source(fn=jit_fn, signature=full, constexprs=dict(constexprs))
    # 3.1: keyed by position
    positional = {arg_names.index(name): ty for name, ty in signature.items()}
    constants = {arg_names.index(name): value for name, value in constexprs.items()}
    return ast_source(fn=jit_fn, signature=positional, constants=constants)


def compile_ahead_of_time(jit_fn: Any, signature: Dict[str, str], constexprs: Dict[str, int],
                          *, num_warps: int = 4,
                          target: Tuple[str, int, int] = DEFAULT_TARGET) -> CompiledIR:
    """Compile a ``@triton.jit`` function for ``target`` without a GPU.

    ``signature`` maps each runtime argument name to a Triton type string
    ("*fp32", "i32"); ``constexprs`` maps the compile-time ones to values.
    """
    triton = import_triton()
    from triton.backends.compiler import GPUTarget

    source = _ast_source(triton, jit_fn, signature, constexprs)
    start = time.perf_counter()
    compiled = triton.compile(source, target=GPUTarget(*target), options={"num_warps": num_warps})
    elapsed = time.perf_counter() - start
    asm = compiled.asm
    ttir = asm.get("ttir", "")
    return CompiledIR(ttir=ttir, ttgir=asm.get("ttgir", ""), llir=asm.get("llir", ""),
                      ptx=asm.get("ptx", ""), compile_time_s=elapsed, ttir_ops=count_ttir_ops(ttir))


# An operation in MLIR's textual form: optional results "%a, %b = ", then the
# op name, bare (tt.load) or quoted in the generic form ("tt.reduce"(...)).
_OP_LINE = re.compile(r'^\s*(?:%[^=]+=\s*)?"?([a-z_][a-z0-9_]*\.[a-z0-9_.]+)"?[\s(<{]?')
# Containers, not operations of the kernel body.
_NOT_COUNTED = frozenset({"builtin.module", "tt.func"})


def count_ttir_ops(ttir: str) -> Dict[str, int]:
    """Operations per name in a TTIR module's text (``loc`` lines and the
    module/function containers are not counted; ops inside reduction bodies are)."""
    counts: Counter = Counter()
    for line in ttir.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", "module", "}", "^")):
            continue
        match = _OP_LINE.match(line)
        if match and match.group(1) not in _NOT_COUNTED:
            counts[match.group(1)] += 1
    return dict(sorted(counts.items()))
