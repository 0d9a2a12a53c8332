"""``python -m opcode_tables coverage`` run as a user runs it, with the running interpreter."""
from __future__ import annotations

import dis
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from opcode_tables import coverage, current_table
from opcode_tables.spec import OpcodeSpec

REPO = Path(__file__).resolve().parent.parent
REAL = {name for name, num in dis.opmap.items() if num < 256 and not name.startswith("INSTRUMENTED_")}


def _run(*args: str, code: str = "") -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    command = [sys.executable, "-c", code] if code else [sys.executable, "-m", "opcode_tables", *args]
    return subprocess.run(command, cwd=str(REPO), env=env, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def json_report():
    result = _run("coverage", "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_json_report_describes_this_interpreter(json_report):
    assert json_report["python"] == platform.python_version()
    major, minor = platform.python_version_tuple()[:2]
    assert json_report["table"] == f"py{major}{minor}"
    assert set(json_report) >= {"handled", "unsupported", "internal", "pending", "missing", "counts", "handlers"}


def test_no_opcode_is_pending(json_report):
    """Every real opcode is handled or declared unsupported with its reason (issue 19)."""
    assert json_report["pending"] == [] and json_report["missing"] == []
    unsupported = json_report["unsupported"]
    reasons = {name: current_table().opcodes[name].unsupported for name in unsupported}
    assert all(reasons.values()), reasons


def test_categories_partition_the_real_opcodes(json_report):
    counts = json_report["counts"]
    assert counts["total"] == len(REAL)
    assert sum(counts[c] for c in coverage.CATEGORIES) == len(REAL)
    groups = [set(json_report[c]) for c in coverage.CATEGORIES]
    assert [len(g) for g in groups] == [counts[c] for c in coverage.CATEGORIES]
    assert set().union(*groups) == REAL
    assert sum(len(g) for g in groups) == len(REAL)  # pairwise disjoint
    assert json_report["missing"] == []


def test_unsupported_entries_carry_the_tables_reasons(json_report):
    for name, reason in json_report["unsupported"].items():
        assert reason and reason == current_table()[name].unsupported


def test_handlers_import_is_reported(json_report):
    handlers = json_report["handlers"]
    if handlers["imported"]:
        assert handlers["error"] is None
    else:
        assert handlers["error"] and json_report["handled"] == []


def test_human_summary_has_the_counts():
    result = _run("coverage")
    assert result.returncode == 0, result.stderr
    assert f"CPython {platform.python_version()}" in result.stdout
    assert f"{len(REAL)} real opcodes" in result.stdout


def test_broken_handlers_module_is_reported_not_raised():
    # None in sys.modules makes the import fail, as a missing or broken tracer would.
    code = ("import sys; sys.modules['compiler.handlers'] = None\n"
            "from opcode_tables.__main__ import main; sys.exit(main(['coverage', '--json']))")
    result = _run(code=code)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["handlers"]["imported"] is False and "compiler.handlers" in report["handlers"]["error"]
    assert report["handled"] == [] and report["counts"]["handled"] == 0


def test_missing_roundtrip_module_exits_2_with_a_message():
    code = ("import sys; sys.modules['opcode_tables.roundtrip'] = None\n"
            "from opcode_tables.__main__ import main; sys.exit(main(['roundtrip']))")
    result = _run(code=code)
    assert result.returncode == 2
    assert "opcode_tables.roundtrip" in result.stderr


def test_unknown_subcommand_is_a_usage_error():
    result = _run("frobnicate")
    assert result.returncode == 2 and "invalid choice" in result.stderr


def test_collect_classifies_rows_and_flags_missing_opcodes():
    table = current_table()
    some_pending = next(n for n, s in table.opcodes.items() if not s.unsupported and not s.decoder_only)
    trimmed = table.derive(table.version, remove=[some_pending], change=[table.changed("NOP", note="x")])
    trimmed.bind_handler("NOP", lambda *a: None)
    unsupported = next(n for n, s in table.opcodes.items() if s.unsupported)
    trimmed.bind_handler(unsupported, lambda *a: None)
    report = coverage.collect(table=trimmed, real=REAL)
    assert report["missing"] == [some_pending]
    assert coverage.exit_code(report) == 1
    assert set(report["handled"]) == {"NOP", unsupported}
    assert report["handled_but_declared_unsupported"] == [unsupported]
    assert unsupported not in report["unsupported"]
    text = coverage.format_text(report)
    assert "MISSING" in text and some_pending in text


def test_collect_ignores_handlers_when_their_import_failed():
    table = current_table().derive(current_table().version)
    table.bind_handler("NOP", lambda *a: None)
    report = coverage.collect(table=table, real=REAL, handlers_error="ImportError: boom")
    assert report["handled"] == [] and "NOP" in report["pending"]
    assert coverage.exit_code(report) == 0
    assert "NOT imported (ImportError: boom)" in coverage.format_text(report)


def test_rows_for_opcodes_the_interpreter_lacks_are_listed_as_extra():
    table = current_table().derive(current_table().version, add=[OpcodeSpec("NOT_A_REAL_OPCODE")])
    report = coverage.collect(table=table, real=REAL)
    assert report["extra"] == ["NOT_A_REAL_OPCODE"]
    assert report["counts"]["total"] == len(REAL)


def test_a_superinstruction_counts_as_handled_when_its_parts_are():
    base = current_table()
    table = base.derive(base.version, add=[OpcodeSpec("FAKE_SUPER")],
                        facts={"superinstructions": {"FAKE_SUPER": ("NOP", "POP_TOP")}})
    real = REAL | {"FAKE_SUPER"}
    assert "FAKE_SUPER" in coverage.collect(table=table, real=real)["pending"]
    table.bind_handler("NOP", lambda *a: None)
    assert "FAKE_SUPER" in coverage.collect(table=table, real=real)["pending"]
    table.bind_handler("POP_TOP", lambda *a: None)
    assert "FAKE_SUPER" in coverage.collect(table=table, real=real)["handled"]
