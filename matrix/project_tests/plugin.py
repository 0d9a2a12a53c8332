"""pytest plugin (`-p matrix.project_tests.plugin`): record each test's outcome, and with
`--tracematrix-compile BACKEND` run every test function compiled.

A test function (a plain function, a method of a test class, or the inner test of a
hypothesis `@given`) is compiled with `compiler.compile(fn, backend=..., observed=False)`:
its compilations do not show in `compiler.events()`, `explain()`, bytecode hooks or compile
ids, and the compiled functions it calls run as they are (not inlined), so a test that
inspects the compiler sees what it would see plainly.  Generator and coroutine test
functions run as they are (counted as not compiled).

`--tracematrix-outcomes FILE` writes {"outcomes": {nodeid: [outcome, detail]}, "compiled":
n} when the session ends (outcome: pass, fail, error, skip, expected_failure,
unexpected_success; the controller writes it under pytest-xdist).
"""
from __future__ import annotations

import inspect
import json
import types
from typing import Any, Dict, Optional, Tuple

import pytest

_ORDER = ("pass", "skip", "expected_failure", "unexpected_success", "fail", "error")
_DETAIL_CHARS = 1500


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("tracematrix")
    group.addoption("--tracematrix-compile", default=None, metavar="BACKEND",
                    help="run every test function compiled with this backend")
    group.addoption("--tracematrix-outcomes", default=None, metavar="FILE",
                    help="write every test's outcome to FILE (JSON) at the end of the session")


class _Recorder:
    def __init__(self, config: Any) -> None:
        self.config = config
        self.backend: Optional[str] = config.getoption("--tracematrix-compile")
        self.outcomes: Dict[str, Tuple[str, Optional[str]]] = {}
        self.compiled = 0
        self._wrappers: Dict[int, Any] = {}
        self._workers: Dict[int, Tuple[int, int]] = {}   # pytest-xdist: (compiled, traced) per worker

    # -- compiling ------------------------------------------------------------------------
    def _compiled(self, fn: types.FunctionType) -> Any:
        wrapper = self._wrappers.get(id(fn))
        if wrapper is None or wrapper[0] is not fn:
            import compiler  # the compiled run only

            wrapper = (fn, compiler.compile(fn, backend=self.backend, observed=False))
            self._wrappers[id(fn)] = wrapper
        return wrapper[1]

    @staticmethod
    def _plain_function(fn: Any) -> bool:
        return isinstance(fn, types.FunctionType) and not (
            inspect.isgeneratorfunction(fn) or inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn))

    @pytest.hookimpl(hookwrapper=True)
    def pytest_pyfunc_call(self, pyfuncitem: Any):
        if not self.backend:
            yield
            return
        original = pyfuncitem.obj
        hypothesis_handle = getattr(original, "hypothesis", None)
        restore = None
        if hypothesis_handle is not None and self._plain_function(getattr(hypothesis_handle, "inner_test", None)):
            inner = hypothesis_handle.inner_test
            hypothesis_handle.inner_test = self._compiled(inner)
            restore = lambda: setattr(hypothesis_handle, "inner_test", inner)  # noqa: E731
            self.compiled += 1
        elif isinstance(original, types.MethodType) and self._plain_function(original.__func__):
            pyfuncitem.obj = types.MethodType(self._compiled(original.__func__), original.__self__)
            restore = lambda: setattr(pyfuncitem, "obj", original)  # noqa: E731
            self.compiled += 1
        elif self._plain_function(original):
            pyfuncitem.obj = self._compiled(original)
            restore = lambda: setattr(pyfuncitem, "obj", original)  # noqa: E731
            self.compiled += 1
        try:
            yield
        finally:
            if restore is not None:
                restore()

    # -- outcomes -------------------------------------------------------------------------
    def pytest_runtest_logreport(self, report: Any) -> None:
        if report.when == "call":
            if hasattr(report, "wasxfail"):
                outcome = "expected_failure" if report.skipped else "unexpected_success"
            else:
                outcome = {"passed": "pass", "failed": "fail", "skipped": "skip"}[report.outcome]
        elif report.failed:
            outcome = "error"
        elif report.skipped:
            outcome = "skip" if not hasattr(report, "wasxfail") else "expected_failure"
        else:
            return
        detail = None
        if report.failed or outcome == "unexpected_success":
            detail = str(report.longrepr)[-_DETAIL_CHARS:] if report.longrepr else None
        previous = self.outcomes.get(report.nodeid)
        if previous is None or _ORDER.index(outcome) > _ORDER.index(previous[0]):
            self.outcomes[report.nodeid] = (outcome, detail)

    def pytest_sessionfinish(self, session: Any) -> None:
        if hasattr(self.config, "workerinput"):  # a pytest-xdist worker: the controller writes
            self.config.workeroutput["tracematrix_compiled"] = self.compiled
            self.config.workeroutput["tracematrix_traced"] = self.traced()
            return
        path = self.config.getoption("--tracematrix-outcomes")
        if not path:
            return
        compiled = self.compiled + sum(c for c, _ in self._workers.values())
        traced = self.traced() + sum(t for _, t in self._workers.values())
        with open(path, "w", encoding="utf-8") as handle:
            json.dump({"outcomes": {k: list(v) for k, v in self.outcomes.items()}, "compiled": compiled,
                       "traced": traced, "backend": self.backend}, handle, indent=1)

    def traced(self) -> int:
        """Compiled test functions whose own frame got a compiled (not a run-natively) entry."""
        return sum(1 for _, wrapper in self._wrappers.values()
                   if any(not entry.native for entry in wrapper._tracematrix_cache.cache_entries))

    # pytest-xdist: each worker reports how many test functions it compiled and traced.
    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        output = getattr(node, "workeroutput", {})
        self._workers[id(node)] = (output.get("tracematrix_compiled", 0), output.get("tracematrix_traced", 0))


def pytest_configure(config: Any) -> None:
    config.pluginmanager.register(_Recorder(config), "tracematrix-project-tests")
