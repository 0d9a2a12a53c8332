"""``import`` inside a compiled function: a module that is already imported is a constant.

CPython's ``import a.b`` calls ``builtins.__import__``, which for a module already in
``sys.modules`` (and not being initialised by another thread) returns it without running
any code; ``from a import b`` then reads ``b`` as an attribute.  The trace does the same
at trace time and guards what it relied on: the frame's ``__import__`` is the interpreter's,
and each module the import returns or needs is still the one in ``sys.modules`` (guard
``sys.modules['a.b'] is <module>``).  An import that would run code (a module not imported
yet, a relative import, a ``from`` name that is a submodule not yet imported, a replaced
``__import__``) stays unsupported: the frame breaks there and CPython imports.
"""
from __future__ import annotations

import builtins
import sys
import types

from opcode_tables.instruction import Instruction
from opcode_tables.py38 import IMPORT_RUNS_CODE

from ..sources import BuiltinSource, ItemSource, SysModulesSource
from ..tracer import InstructionTranslatorBase
from ..variables.user_objects import ModuleVariable, module_read_runs_code
from .registry import handler

# The interpreter's own __import__, taken before any program could replace it.
_IMPORT = builtins.__import__


def _imported(tx: InstructionTranslatorBase, name: str) -> ModuleVariable:
    """sys.modules[name], guarded to be the same module, where importing ``name`` would run
    no code."""
    module = sys.modules.get(name)
    spec = getattr(module, "__spec__", None)
    # (exactly a module: a subclass, such as importlib's lazy modules, customises attribute access)
    if type(module) is not types.ModuleType or getattr(spec, "_initializing", False):
        raise tx.unsupported(f"import of {name!r}: {IMPORT_RUNS_CODE}")
    return tx.output.wrap(module, ItemSource(SysModulesSource(), name))


@handler("IMPORT_NAME")
def import_name(tx: InstructionTranslatorBase, inst: Instruction):
    fromlist_var, level_var = tx.pop(), tx.pop()
    name = inst.argval
    level = level_var.as_python_constant() if level_var.is_python_constant() else None
    fromlist = fromlist_var.as_python_constant() if fromlist_var.is_python_constant() else ()
    if level != 0 or not name:
        raise tx.unsupported(f"relative import of {name!r}: {IMPORT_RUNS_CODE}")
    importer = tx.output.f_builtins.get("__import__")
    if importer is not _IMPORT:
        raise tx.unsupported(f"import of {name!r} with a replaced builtins.__import__ (it runs here natively)")
    tx.output.wrap(importer, BuiltinSource("__import__"))  # guards: still the interpreter's
    # import a.b.c needs a, a.b and a.b.c imported; it binds a (a from-import binds a.b.c)
    prefixes = [_imported(tx, name.rsplit(".", depth)[0]) for depth in range(name.count(".") + 1)]
    module = prefixes[0]
    for attribute in fromlist or ():
        if attribute == "*" or module_read_runs_code(module.module, attribute) or \
                not hasattr(module.module, attribute):
            # a submodule not imported yet: __import__ would import it (a module __getattr__
            # runs for a missing name too: the checked read must not call it at trace time)
            raise tx.unsupported(f"from {name} import {attribute}: {IMPORT_RUNS_CODE}")
    tx.push(module if fromlist else prefixes[-1])


@handler("IMPORT_FROM")
def import_from(tx: InstructionTranslatorBase, inst: Instruction):
    module = tx.peek()
    if not isinstance(module, ModuleVariable) or module_read_runs_code(module.module, inst.argval) or \
            not hasattr(module.module, inst.argval):
        raise tx.unsupported(f"from ... import {inst.argval}: {IMPORT_RUNS_CODE}")
    tx.push(module.getattr(tx, inst.argval))
