"""The match statement compiled: every pattern kind gives the plain result, with no graph
break where the subject is a value the trace models (compiler.handlers.pattern_matching).

The programs are source text, compiled only where the running interpreter's table has the
match opcodes (3.10+), so this module imports everywhere."""
from __future__ import annotations

import collections
import textwrap

import numpy as np
import pytest

import compiler
import opcode_tables

HAS_MATCH = "MATCH_CLASS" in opcode_tables.current_table().opcodes
pytestmark = pytest.mark.skipif(not HAS_MATCH,
                                reason="this interpreter has no match statement (its table has no MATCH_CLASS)")

SOURCE = textwrap.dedent('''
    class Point:
        __match_args__ = ("x", "y")

        def __init__(self, x, y):
            self.x = x
            self.y = y


    class Flagged(Point):
        pass


    def sequence_and_mapping(a, spec):
        match spec:
            case (p, q):
                return a * p + q
            case [p, q, *rest]:
                return a * p - q + len(rest)
            case {"k": k, **rest}:
                return a * k + len(rest)
            case {"scale": s}:
                return a * s
            case str():
                return a
            case _:
                return -a


    def class_patterns(a, obj):
        match obj:
            case Flagged(x, y=yy):
                return a * x - yy
            case Point(x, y) if x > y:
                return a * x + y
            case Point(x=0):
                return a * 0.5
            case Point():
                return a * 2.0
            case float(v) | int(v):
                return a + v
            case _:
                return a


    def nested(a, spec):
        match spec:
            case {"shape": (1, n)}:
                return a.reshape(1, -1) * n
            case {"points": [Point(x, y), *_]}:
                return a * x + y
            case [("add", v), ("mul", w)]:
                return (a + v) * w
        return a
''')
_NAMESPACE: dict = {}
if HAS_MATCH:
    exec(compile(SOURCE, "<pattern programs>", "exec"), _NAMESPACE)


def _calls():
    point, flagged = _NAMESPACE["Point"], _NAMESPACE["Flagged"]
    return [
        ("sequence_and_mapping", [(2.0, 1.0), [3.0, 1.0, 9, 9], (1.0, 2.0, 3.0), {"k": 2.0, "z": 1},
                                  {"scale": 4.0}, "text", 7, {"other": 1},
                                  collections.OrderedDict(k=1.5), {"k": 1.0, "scale": 2.0}]),
        ("class_patterns", [point(3.0, 1.0), point(1.0, 3.0), point(0, 9), flagged(2.0, 5.0),
                            2.5, 4, "s", point(2.0, 2.0)]),
        ("nested", [{"shape": (1, 3)}, {"shape": (2, 3)}, {"points": [point(2.0, 1.0)]},
                    {"points": []}, [("add", 1.0), ("mul", 3.0)], [("add", 1.0)]]),
    ]


@pytest.mark.parametrize("backend", ["eager", "numpy"])
def test_every_pattern_gives_the_plain_result_without_a_break(backend):
    for name, subjects in _calls():
        fn = _NAMESPACE[name]
        compiled = compiler.compile(fn, backend=backend, cache_limit=64)
        compiler.reset()
        for subject in subjects:
            a = np.arange(3.0)
            np.testing.assert_array_equal(compiled(a, subject), fn(a, subject), err_msg=f"{name}({subject!r})")
        events = compiler.events()
        assert events, name
        for event in events:
            assert event.graph_break_count == 0 and not event.fallback_reason, (name, event.break_reasons,
                                                                               event.fallback_reason)


def test_a_subject_of_unknown_type_breaks_and_still_matches_as_plain():
    class Opaque:
        __slots__ = ()

    fn = _NAMESPACE["sequence_and_mapping"]
    compiled = compiler.compile(fn)
    for subject in [Opaque(), range(2), b"xy", bytearray(b"xyz")]:
        a = np.arange(3.0)
        got, want = compiled(a, subject), fn(a, subject)
        np.testing.assert_array_equal(got, want)


def test_a_class_pattern_cpython_rejects_raises_the_same_error():
    source = textwrap.dedent('''
        class NoArgs:
            pass

        def bad(a, obj):
            match obj:
                case NoArgs(x):
                    return a + x
            return a
    ''')
    namespace: dict = {}
    exec(compile(source, "<bad pattern>", "exec"), namespace)
    fn, obj = namespace["bad"], namespace["NoArgs"]()
    with pytest.raises(TypeError) as plain:
        fn(np.arange(3.0), obj)
    with pytest.raises(TypeError) as got:
        compiler.compile(fn)(np.arange(3.0), obj)
    assert str(got.value) == str(plain.value)
