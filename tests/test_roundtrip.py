"""Unmodified decode -> assemble round trips: generated functions and real modules."""
from __future__ import annotations

import re
import types
from contextlib import nullcontext

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from opcode_tables import current_table, roundtrip
from opcode_tables.assemble import assemble
from opcode_tables.decode import decode
from opcode_tables.linetable import TABLE_FIELD

TABLE = current_table()

# Statement templates over the locals a, b (ints) and acc; {k}, {m} are small ints.
TEMPLATES = [
    "acc = acc + {k} * a - b",
    "if a > {k}:\n    acc += b\nelif b < {m}:\n    acc -= {k}\nelse:\n    acc ^= {m}",
    "for i in range({k}):\n    acc += i * b",
    "for i in range({k}):\n    if i % 2:\n        continue\n    if i > {m}:\n        break\n    acc += i",
    "n = 0\nwhile n < {k}:\n    n += 1\n    acc += n",
    "try:\n    acc += {k} // (a - {m})\nexcept ZeroDivisionError:\n    acc -= 1",
    "try:\n    acc += {k}\n    if a == {m}:\n        raise ValueError(a)\nexcept (ValueError, KeyError) as exc:\n"
    "    acc += len(exc.args)\nfinally:\n    acc *= 2",
    "with nullcontext({k}) as c:\n    acc += c",
    "acc += sum([x * {k} for x in range(b % 7)])",
    "acc += len({{x: x % {m} for x in range(a % 5)}}) + len({{x % 3 for x in range({k})}})",
    "acc += sum(x for x in range({k}) if x != {m})",
    "def inner(z, w={k}):\n    return z + w + acc\nacc = inner(a)",
    "acc = (lambda q: q * {k} + acc)(b)",
    "acc += a if acc > {m} else b",
    "acc = -acc if not (a and b) or acc < {m} else acc",
    "items = [a, b, {k}]\nx, *rest = items\nacc += x + len(rest)",
    "acc += f'{{a}}-{{b!r}}'.count('-') * {k}",
]

statements = st.builds(
    lambda template, k, m: template.format(k=k, m=m),
    st.sampled_from(TEMPLATES), st.integers(0, 9), st.integers(0, 9))


def _indent(block: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line for line in block.splitlines())


def _source(blocks, long_tail: bool) -> str:
    body = ["acc = 0"] + list(blocks)
    if long_tail:
        # 300 distinct float constants: loads need EXTENDED_ARG prefixes and
        # jumps over them grow too.
        body.append("if a > b:\n" + _indent("\n".join(f"acc += {i}.5" for i in range(300))))
    return "def f(a, b):\n" + _indent("\n".join(body)) + "\n    return acc\n"


def roundtrip_code(code: types.CodeType) -> types.CodeType:
    """Re-assemble ``code`` and, recursively, the code objects among its constants."""
    consts = tuple(roundtrip_code(c) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    return assemble(decode(code).instructions, code, co_consts=consts)


def _outcome(function, *args):
    try:
        return ("ok", function(*args))
    except Exception as exc:  # a generated program may raise; both versions must raise alike
        return ("raised", type(exc), str(exc))


def _assert_same_code(original: types.CodeType, rebuilt: types.CodeType) -> None:
    assert rebuilt.co_code == original.co_code
    assert rebuilt.co_stacksize <= original.co_stacksize
    fmt = TABLE.fact("linetable")
    if getattr(rebuilt, TABLE_FIELD[fmt]) != getattr(original, TABLE_FIELD[fmt]):
        assert roundtrip.line_view(rebuilt, fmt) == roundtrip.line_view(original, fmt)
    if TABLE.fact("exception_table"):
        assert rebuilt.co_exceptiontable == original.co_exceptiontable
    for mine, theirs in zip(rebuilt.co_consts, original.co_consts):
        if isinstance(theirs, types.CodeType):
            _assert_same_code(theirs, mine)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(statements, min_size=1, max_size=6), st.booleans(),
       st.lists(st.tuples(st.integers(-3, 12), st.integers(-3, 12)), min_size=1, max_size=4))
def test_generated_functions_round_trip_and_behave_the_same(blocks, long_tail, calls):
    source = _source(blocks, long_tail)
    namespace = {"nullcontext": nullcontext}
    exec(compile(source, "<generated>", "exec"), namespace)
    original = namespace["f"]
    rebuilt_code = roundtrip_code(original.__code__)
    _assert_same_code(original.__code__, rebuilt_code)
    rebuilt = types.FunctionType(rebuilt_code, namespace, "f")
    for a, b in calls:
        assert _outcome(rebuilt, a, b) == _outcome(original, a, b), source


def test_roundtrip_command_on_stdlib_modules(capsys):
    status = roundtrip.main(["json.decoder", "textwrap", "dataclasses", "contextlib"])
    out = capsys.readouterr().out.strip().splitlines()
    match = re.fullmatch(r"roundtrip: (\d+)/(\d+) identical", out[-1])
    assert match and match.group(1) == match.group(2) and int(match.group(2)) > 50, out[-3:]
    assert out[-2].startswith("co_stacksize over-estimated by CPython:")
    assert status == 0


def test_roundtrip_command_with_worker_processes(capsys):
    status = roundtrip.main(["--jobs", "2", "textwrap", "json.decoder", "json.encoder"])
    out = capsys.readouterr().out.strip().splitlines()
    assert "2 process(es)" in out[0]
    match = re.fullmatch(r"roundtrip: (\d+)/(\d+) identical", out[-1])
    assert status == 0 and match and match.group(1) == match.group(2)


def test_roundtrip_command_reports_differences(capsys, monkeypatch):
    def sloppy_assemble(instructions, template, **overrides):
        return template.replace(co_stacksize=template.co_stacksize + 1)

    monkeypatch.setattr(roundtrip, "assemble", sloppy_assemble)
    status = roundtrip.main(["textwrap"])
    out = capsys.readouterr().out
    assert status == 1
    assert "DIFFERENT" in out and "co_stacksize" in out
    assert re.search(r"roundtrip: 0/\d+ identical", out)
