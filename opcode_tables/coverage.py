"""How much of the running interpreter's instruction set the tracer handles.

Every real opcode of the interpreter (``dis.opmap``, below 256, no
INSTRUMENTED_*) falls in exactly one category:

- handled:     the tracer bound a handler into the table (``compiler.handlers``)
- unsupported: the table declares why the tracer never traces it
- internal:    consumed by the decoder (EXTENDED_ARG, CACHE); needs no handler
- pending:     in the table, none of the above yet
- missing:     the interpreter has it, the table does not (a table bug)

An interpreter with no table at all (a new CPython) reports every opcode as
missing, under the table module it would need.
"""
from __future__ import annotations

import dis
import importlib
import json
import platform
import textwrap
from typing import Any, Dict, List, Optional, Set, TextIO

from . import current_table, has_current_table, module_name, running_version
from .spec import VersionTable

HANDLERS_MODULE = "compiler.handlers"
CATEGORIES = ("handled", "unsupported", "internal", "pending", "missing")


def real_opnames() -> Set[str]:
    """The running interpreter's real opcodes: no pseudo-ops (>= 256), no INSTRUMENTED_* variants."""
    return {name for name, num in dis.opmap.items() if num < 256 and not name.startswith("INSTRUMENTED_")}


def load_handlers(module: str = HANDLERS_MODULE) -> Optional[str]:
    """Import the module that binds the tracer's handlers; the error as text if that fails."""
    try:
        importlib.import_module(module)
    except Exception as exc:  # a broken tracer must not break the report about it
        return f"{type(exc).__name__}: {exc}"
    return None


def collect(table: Optional[VersionTable] = None, real: Optional[Set[str]] = None,
            handlers_error: Optional[str] = None) -> Dict[str, Any]:
    """The coverage report as a JSON-ready dict (see ``main`` for loading the handlers first)."""
    if table is None:
        table = current_table() if has_current_table() else _empty_table()
    real = real_opnames() if real is None else real
    handlers = {} if handlers_error else table.handlers
    handled: List[str] = []
    unsupported: Dict[str, str] = {}
    internal: List[str] = []
    pending: List[str] = []
    # The tracer steps a superinstruction as its split parts (3.13's
    # LOAD_FAST_LOAD_FAST is LOAD_FAST twice): handled when every part is.
    split = table.fact("superinstructions")
    for name in sorted(real & set(table.opcodes)):
        spec = table[name]
        if name in handlers or (name in split and all(part in handlers for part in split[name])):
            handled.append(name)
        elif spec.decoder_only:
            internal.append(name)
        elif spec.unsupported:
            unsupported[name] = spec.unsupported
        else:
            pending.append(name)
    report = {
        "python": platform.python_version(),
        "table": module_name(table.version),
        "handlers": {"module": HANDLERS_MODULE, "imported": handlers_error is None,
                     "error": handlers_error},
        "handled": handled,
        "unsupported": unsupported,
        "internal": internal,
        "pending": pending,
        "missing": sorted(real - set(table.opcodes)),
        # Rows for opcodes this interpreter lacks: outside the counts, shown as a warning.
        "extra": sorted(set(table.opcodes) - real),
        # A handler for a row declared unsupported: the declaration is out of date.
        "handled_but_declared_unsupported": sorted(n for n in handled if table[n].unsupported),
    }
    report["counts"] = {category: len(report[category]) for category in CATEGORIES}
    report["counts"]["total"] = len(real)
    return report


def _empty_table() -> VersionTable:
    """What an interpreter with no table has: no rows (so every opcode counts as missing)."""
    return VersionTable(version=running_version(), opcodes={}, facts={"superinstructions": {}})


def exit_code(report: Dict[str, Any]) -> int:
    """1 when the table lacks an opcode the interpreter has, else 0."""
    return 1 if report["missing"] else 0


def _names(names: List[str], indent: str = "    ") -> str:
    return textwrap.fill(", ".join(names), width=88, initial_indent=indent, subsequent_indent=indent)


def format_text(report: Dict[str, Any]) -> str:
    """A readable summary: counts first, then the names behind each count that needs attention."""
    counts = report["counts"]
    handlers = report["handlers"]
    lines = [f"opcode coverage for CPython {report['python']} (table opcode_tables/{report['table']}.py)"]
    if handlers["imported"]:
        lines.append(f"  handlers: {handlers['module']} imported")
    else:
        lines.append(f"  handlers: {handlers['module']} NOT imported ({handlers['error']}); "
                     f"counting 0 handled")
    lines.append("  {total} real opcodes: {handled} handled, {unsupported} unsupported, "
                 "{internal} internal, {pending} pending, {missing} missing".format(**counts))
    if report["pending"]:
        lines += ["", f"pending (in the table, no handler yet): {counts['pending']}", _names(report["pending"])]
    if report["unsupported"]:
        by_reason: Dict[str, List[str]] = {}
        for name, reason in report["unsupported"].items():
            by_reason.setdefault(reason, []).append(name)
        lines += ["", f"unsupported (declared in the table): {counts['unsupported']}"]
        for reason, names in sorted(by_reason.items()):
            lines += [f"  {reason}:", _names(names, indent="    ")]
    if report["internal"]:
        lines += ["", "internal (consumed by the decoder):", _names(report["internal"])]
    if report["missing"]:
        lines += ["", f"MISSING from the table (add rows to opcode_tables/{report['table']}.py): "
                      f"{counts['missing']}", _names(report["missing"])]
    if report["extra"]:
        lines += ["", "warning: table rows this interpreter does not have:", _names(report["extra"])]
    if report["handled_but_declared_unsupported"]:
        lines += ["", "warning: handled, but the table still declares them unsupported:",
                  _names(report["handled_but_declared_unsupported"])]
    return "\n".join(lines)


def main(as_json: bool, out: TextIO) -> int:
    """``python -m opcode_tables coverage``: import the handlers, report, exit 1 if opcodes are missing."""
    report = collect(handlers_error=load_handlers())
    if as_json:
        json.dump(report, out, indent=2, sort_keys=True)
        out.write("\n")
    else:
        out.write(format_text(report) + "\n")
    return exit_code(report)
