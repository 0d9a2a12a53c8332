"""The corpus itself is valid: every case runs natively on every call of every interpreter, needing no compiler.

These tests prove the differential corpus (tests/corpus/) is well-formed Python 3.8-3.13 and NumPy 1.x/2.x code:
calls declared as raising do raise, the others return without a warning, and the declarations are consistent.
"""
from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest

import opcode_tables
from tests.corpus import FAMILIES, OPTIONAL_FAMILIES, all_cases
from tests.corpus.op_counter import count_ops

CASES = all_cases()
MIN_CASES = 100  # issue 3 asks for at least 80; the corpus aims higher


def test_corpus_is_large_enough_and_every_family_has_cases():
    assert len(CASES) >= MIN_CASES, f"only {len(CASES)} corpus cases"
    families = {c.family for c in CASES.values()}
    opcodes = opcode_tables.current_table().opcodes
    loaded = set(FAMILIES) | {f for f, opcode in OPTIONAL_FAMILIES.items() if opcode in opcodes}
    assert families == loaded, f"families without cases: {loaded - families}"
    full_graph = [c for c in CASES.values() if c.full_graph]
    assert len(full_graph) >= 80, f"only {len(full_graph)} one-graph cases"


@pytest.mark.parametrize("name", sorted(CASES))
def test_declaration_is_consistent(name):
    case = CASES[name]
    calls = case.calls()
    assert len(calls) >= 2, f"{name}: a case needs several calls (fresh values, new shapes)"
    assert all(0 <= i < len(calls) for i in case.raises), f"{name}: raises= names a call that does not exist"
    if not isinstance(case.nodes, (int, type(None))):
        assert len(case.nodes) == len(calls), f"{name}: nodes= has {len(case.nodes)} entries for {len(calls)} calls"
    if case.full_graph:
        asserted = [case.expected_nodes(i) for i in range(len(calls))]
        assert any(n is not None for n in asserted), f"{name}: no call has a node-count expectation"
        assert all(n is None or n >= 1 for n in asserted), f"{name}: a one-graph case must put work in its graph"


@pytest.mark.parametrize("name", sorted(CASES))
def test_calls_are_reproducible(name):
    first, second = CASES[name].calls(), CASES[name].calls()
    for a, b in zip(first, second):
        assert repr(a) == repr(b)
        for x, y in zip(a.args, b.args):
            if isinstance(x, np.ndarray):
                assert x is not y, "every calls() must build fresh arrays"
                np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("name", sorted(CASES))
def test_plain_function_runs(name, capsys):
    case = CASES[name]
    for index, call in enumerate(case.calls()):
        args, kwargs = copy.deepcopy((call.args, call.kwargs))
        with warnings.catch_warnings():
            # A corpus call that warns would make the comparison of outputs noisy: none may.
            warnings.simplefilter("error")
            if index in case.raises:
                with pytest.raises(Exception):
                    case.fn(*args, **kwargs)
            else:
                case.fn(*args, **kwargs)
    capsys.readouterr()


# Cases whose program the independent op counter cannot run, and why.
COUNTER_CANNOT_MODEL = {
    "python_values.isinstance_checks": "isinstance(x, np.ndarray) is False for the counting proxy",
}


@pytest.mark.parametrize("name", sorted(n for n, c in CASES.items() if c.full_graph))
def test_declared_nodes_match_an_independent_count(name, capsys):
    """The hand-reasoned ``nodes=`` agree with tests/corpus/op_counter.py, which counts the NumPy operations
    each call performs on its arrays without the compiler."""
    if name in COUNTER_CANNOT_MODEL:
        pytest.skip(COUNTER_CANNOT_MODEL[name])
    case = CASES[name]
    for index, call in enumerate(case.calls()):
        declared = case.expected_nodes(index)
        if declared is None:
            continue
        args, kwargs = copy.deepcopy((call.args, call.kwargs))
        assert count_ops(case.fn, args, kwargs) == declared, f"{name} call {index}"
    capsys.readouterr()
