"""The suite itself: size, grouping, Dynamo's functions, opcode families covered, and
every case runs plainly on this interpreter."""
from __future__ import annotations

import dis
import importlib
import inspect
import types
from collections import Counter

import opcode_tables
from matrix.cases import active_group_modules, load_suite
from matrix.runner import run_cases

def _function_opnames():
    seen = Counter()

    def walk(code):
        if code.co_flags & inspect.CO_NEWLOCALS:   # functions, not module or class bodies
            seen.update(i.opname for i in dis.get_instructions(code))
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                walk(const)
    for group in active_group_modules():
        module = importlib.import_module(f"matrix.cases.{group}")
        with open(module.__file__) as f:
            walk(compile(f.read(), module.__file__, "exec"))
    return seen


def test_suite_size_groups_and_unique_names():
    cases = load_suite()
    assert len(cases) >= 60
    groups = Counter(c.group for c in cases)
    for group in ("arithmetic", "calls", "closures", "comprehensions", "containers", "loops",
                  "exceptions", "globals_attrs", "numpy_ops", "formatting", "graph_breaks"):
        assert groups[group] >= 4, group
    assert len({c.name for c in cases}) == len(cases)
    assert sum(c.expected_recompiles > 0 for c in cases) >= 10


def test_dynamo_ir_count_functions_are_in_the_suite():
    cases = {c.name: c for c in load_suite()}
    test1 = cases["dynamo_test_ir_count_test1"].fn
    test2 = cases["dynamo_test_ir_count_test2"].fn
    assert inspect.getsource(test1).splitlines()[1:] == [
        "def test1(x):", "    y = x + x", "    z = y * y", "    return z"]
    assert inspect.getsource(test2).splitlines()[1:] == ["def test2(x):", "    y = x + x", "    return y"]


def test_every_opcode_that_differs_between_versions_is_exercised():
    tables = [opcode_tables.table_for(v) for v in opcode_tables.SUPPORTED_VERSIONS]
    names = [set(t.opcodes) for t in tables]
    differing = set.union(*names) - set.intersection(*names)
    table = opcode_tables.current_table()
    # Opcodes the table declares untraceable (generators, class bodies, ...) need no case.
    wanted = {n for n in differing & set(table.opcodes)
              if not table[n].unsupported and not table[n].decoder_only}
    assert wanted, "the tables should report version-specific opcodes"
    uncovered = sorted(wanted - set(_function_opnames()))
    assert uncovered == [], f"no suite function exercises {uncovered}; add a case"


def test_every_case_runs_plainly_and_deterministically():
    cases = load_suite()
    results = run_cases(cases, suite="matrix.cases", backend="eager", engine_spec="plain", jobs=2)
    # The plain engine compiles nothing: every case ran both ways and compared equal.
    bad = {n: r["detail"] for n, r in results.items() if r["status"] != "unsupported"}
    assert bad == {}
