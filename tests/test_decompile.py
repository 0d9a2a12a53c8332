"""opcode_tables.decompile: the readable view of code objects, on the running interpreter.

Differential where the view is executable (straight-line code has no labels: the
view, run, must compute what the original computes), and over CPython's own
library and the project's corpus for the rest (every view parses as Python)."""
from __future__ import annotations

import ast
import importlib
import operator
import types

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opcode_tables.decompile import decompile, decompile_all
from tests.corpus import all_cases

_NAMES = ["a", "b", "c"]
# Each template gives an int, so that any later line can use any earlier name.
_EXPRESSIONS = [
    "{0} + {1}", "{0} - {1}", "{0} * {1}", "{0} // (abs({1}) + 1)", "{0} % (abs({1}) + 3)", "-{0}", "~{0}",
    "abs({0})", "max({0}, {1}, key=abs)", "min([{0}, {1}])", "({0}, {1})[1]", "[{0}, {1}, {0}][{1} % 3]",
    "int({0} < {1})", "int({0} == {1})", "int({0} is None)", "int({0} in ({1}, 3))", "int(not {0})",
    "({0}, {1}).count({0})", "{{'k': {0}, 'j': {1}}}['k']", "{{{0}, {1}}}.__len__()", "len(str({0}).zfill(4))",
    "len(f'{{{0}}}-{{{1}!r:>5}}')", "sorted([{1}, {0}], reverse=True)[0]", "divmod({0}, abs({1}) + 7)[0]",
    "({0}, *[{1}, 2])[-1]", "dict(a={0}, **{{'b': {1}}})['b']", "[*range(3), {0}][-1]", "{0} ** 2 & 0xFF",
    "(abs({0}) << 2) >> 1", "({0} ^ {1}) | 5", "(lambda q: q * 3)({0})", "{1}.real", "{0}.__add__({1})",
]


@st.composite
def _programs(draw):
    lines = []
    names = list(_NAMES)
    for k in range(draw(st.integers(1, 8))):
        template = draw(st.sampled_from(_EXPRESSIONS))
        left, right = draw(st.sampled_from(names)), draw(st.sampled_from(names))
        lines.append(f"    v{k} = {template.format(left, right)}")
        if draw(st.booleans()):
            lines.append(f"    v{k} += {draw(st.sampled_from(names))}")
        names.append(f"v{k}")
    return "def f(a, b, c=3):\n" + "\n".join(lines) + f"\n    return ({', '.join(names[3:])},)\n"


def _function(source: str) -> types.FunctionType:
    scope: dict = {}
    exec(compile(source, "<program>", "exec"), scope)
    return scope["f"]


@settings(max_examples=150, deadline=None)
@given(_programs(), st.integers(-20, 20), st.integers(-20, 20))
def test_the_view_of_straight_line_code_computes_the_same(source, a, b):
    original = _function(source)
    view = decompile(original.__code__)
    ast.parse(view)
    assert "goto" not in view and "_underflow" not in view, view
    # The view names functions made inside the code __code_<name>: give it those.
    scope: dict = {f"__code_{c.co_name.strip('<>')}": None for c in original.__code__.co_consts
             if isinstance(c, types.CodeType)}
    if scope:
        return  # a lambda: the view shows function(__code_lambda_), not runnable by design
    scope["operator"] = operator  # in-place operators read operator.iadd(x, y)
    exec(compile(view, "<view>", "exec"), scope)
    assert scope["f"](a, b, 3) == original(a, b, 3), view


def test_views_of_branches_loops_and_handlers_parse_and_label_every_jump():
    def g(x, items):
        total = 0
        for item in items:
            if item > x and item is not None:
                total += item
            elif item == 0:
                continue
            else:
                break
        while total > 100:
            total //= 2
        try:
            total = 1 / total
        except ZeroDivisionError as error:
            total = str(error)
        finally:
            items = None
        with open(__file__) as handle:
            handle.readline()
        return total

    view = decompile(g.__code__)
    ast.parse(view)
    gotos = {line.split("goto ")[1].split()[0] for line in view.splitlines() if "goto ." in line}
    labels = {line.split("label ")[1].strip() for line in view.splitlines() if line.strip().startswith("label .")}
    assert gotos and gotos <= labels, (gotos - labels, view)
    assert "total = 0" in view and "return total" in view


@pytest.mark.parametrize("module", ["json.decoder", "argparse", "dataclasses", "enum", "textwrap",
                                    "fractions", "statistics", "contextlib"])
def test_every_code_object_of_a_stdlib_module_has_a_view_that_parses(module):
    mod = importlib.import_module(module)
    with open(mod.__file__, encoding="utf-8") as handle:
        code = compile(handle.read(), mod.__file__, "exec")
    views = decompile_all(code)
    assert len(views) > 10
    for name, view in views.items():
        try:
            ast.parse(view)
        except SyntaxError as error:  # pragma: no cover - the message is the report
            pytest.fail(f"{module}: the view of {name} does not parse: {error}\n{view}")


def test_every_corpus_function_has_a_view_that_parses():
    cases = all_cases()
    assert cases
    for name, case in cases.items():
        fn = getattr(case.fn, "__wrapped__", case.fn)
        for qualname, view in decompile_all(fn.__code__).items():
            ast.parse(view), (name, qualname)
