"""The suite: small programs grouped by the language feature they exercise.

Each case is a plain Python function plus a call sequence (argument tuples,
built fresh for every call so that mutations cannot leak between the plain and
the compiled run). `expected_recompiles` says how many of the calls must
compile a new cache entry (a new shape, dtype or constant).
"""
from __future__ import annotations

import fnmatch
import importlib
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

GROUP_MODULES = [
    "arithmetic", "calls", "closures", "comprehensions", "containers", "loops",
    "exceptions", "globals_attrs", "numpy_ops", "formatting", "graph_breaks",
    "dynamo", "dynamic_shapes",
]
# Groups written in syntax (or relying on semantics) older interpreters lack, loaded only where
# the running interpreter's opcode table has the opcode they exercise, or the "fact:" it names
# is true (no version checks here).
OPTIONAL_GROUP_MODULES = {"pattern_matching": "MATCH_CLASS", "exception_groups": "CHECK_EG_MATCH",
                          "template_strings": "BUILD_TEMPLATE",
                          "lazy_annotations": "fact:lazy_annotations"}

ArgsFactory = Callable[[], Tuple[Any, ...]]


@dataclass(frozen=True)
class UpstreamExpectation:
    """A count another project's test hard-codes for this case, per interpreter (e.g.
    Dynamo's `test_ir_count` table); the report flags a measured count that disagrees."""

    metric: str
    by_python: Dict[str, int]
    source: str

    def for_python(self, python: str) -> Optional[Dict[str, Any]]:
        """The expectation recorded in a cell on `python` (None where the table has no row)."""
        if python not in self.by_python:
            return None
        return {"metric": self.metric, "value": self.by_python[python], "source": self.source}


@dataclass(frozen=True)
class Case:
    name: str
    group: str
    fn: Callable[..., Any]
    calls: Tuple[ArgsFactory, ...]
    expected_recompiles: int = 0
    description: str = ""
    kwargs_calls: Tuple[Optional[Callable[[], Dict[str, Any]]], ...] = field(default=())
    upstream: Optional[UpstreamExpectation] = None
    # Options of the compile call beyond the backend (``{"dynamic": True}``): an engine is
    # given them only where a case has some.
    options: Dict[str, Any] = field(default_factory=dict)

    def call_arguments(self, index: int) -> Tuple[Tuple[Any, ...], Dict[str, Any]]:
        """Fresh positional and keyword arguments for call number `index`."""
        args = self.calls[index]()
        kwargs_factory = self.kwargs_calls[index] if index < len(self.kwargs_calls) else None
        return args, (kwargs_factory() if kwargs_factory else {})


class Registry:
    """Cases of one suite module tree, in definition order."""

    def __init__(self) -> None:
        self._cases: Dict[str, Case] = {}

    def case(self, group: str, *calls: ArgsFactory, recompiles: int = 0,
             kwargs: Sequence[Optional[Callable[[], Dict[str, Any]]]] = (),
             name: Optional[str] = None,
             upstream: Optional[UpstreamExpectation] = None,
             options: Optional[Dict[str, Any]] = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorator registering `fn` with its call sequence."""
        if not calls:
            raise ValueError(f"a case in group {group!r} needs at least one call")

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            case_name = name or fn.__name__
            if case_name in self._cases:
                raise ValueError(f"duplicate case name {case_name!r} (groups "
                                 f"{self._cases[case_name].group!r} and {group!r}); rename one")
            self._cases[case_name] = Case(case_name, group, fn, tuple(calls), recompiles,
                                          (fn.__doc__ or "").strip(), tuple(kwargs), upstream,
                                          dict(options or {}))
            return fn
        return register

    def all(self) -> List[Case]:
        return list(self._cases.values())


REGISTRY = Registry()
case = REGISTRY.case


def active_group_modules() -> List[str]:
    """The suite's modules this interpreter can import."""
    from opcode_tables import current_table, has_current_table

    if not has_current_table():  # a new CPython: its cells say "no table" and run no case
        return list(GROUP_MODULES)
    table = current_table()

    def available(requirement: str) -> bool:
        if requirement.startswith("fact:"):
            return bool(table.fact(requirement[len("fact:"):]))
        return requirement in table

    return GROUP_MODULES + [m for m, needs in OPTIONAL_GROUP_MODULES.items() if available(needs)]


def load_suite(module: str = "matrix.cases") -> List[Case]:
    """Import a suite package (or module) and return its cases.

    The default suite registers itself into REGISTRY; another module (a test's
    synthetic suite) exposes a `CASES` list or its own `REGISTRY`.
    """
    mod = importlib.import_module(module)
    if module == __name__:
        for group in active_group_modules():
            importlib.import_module(f"{__name__}.{group}")
        return REGISTRY.all()
    if hasattr(mod, "CASES"):
        return list(mod.CASES)
    if isinstance(getattr(mod, "REGISTRY", None), Registry):
        return mod.REGISTRY.all()
    raise ValueError(f"suite module {module!r} defines neither CASES nor REGISTRY")


def select(cases: Sequence[Case], pattern: Optional[str]) -> List[Case]:
    """Cases whose name or group/name matches a comma-separated list of glob patterns."""
    if not pattern:
        return list(cases)
    patterns = [p.strip() for p in pattern.split(",") if p.strip()]
    return [c for c in cases
            if any(fnmatch.fnmatchcase(c.name, p) or fnmatch.fnmatchcase(f"{c.group}/{c.name}", p)
                   for p in patterns)]
