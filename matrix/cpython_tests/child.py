"""One Lib/test module in one child process, plain or with every test method compiled.

    python -m matrix.cpython_tests.child --module test_list --mode compiled --out EVENTS

The module is loaded as regrtest loads it: its `test_main` where it has one (old modules;
`test.support.run_unittest` / `run_doctest` are then redirected to this runner, so the
tests run inside whatever set-up `test_main` does), otherwise unittest's loader (which
honours `load_tests`).  Resources are denied as under plain regrtest (`use_resources =
[]`), so network and CPU-heavy tests skip.

Outcomes are appended to EVENTS as JSON lines *while the tests run* (one line when a test
starts, one when it ends), so a crash or a timeout still tells which test was running:

    {"start": ID}
    {"test": ID, "outcome": OUTCOME, "detail": TEXT or null}
    {"compiled": N, "compile_errors": M}        (compiled mode, per suite run)
    {"skipped": REASON} or {"error": REASON}     (the module cannot be imported / loaded)
    {"done": true, "compiler": {...} or null}    (last line of a complete run)

Compiled mode: for each TestCase instance of the suite, its test method is replaced by an
instance attribute bound to `compiler.compile(function)`, where `function` is what the
class MRO holds (`inspect.getattr_static`), so inherited test methods are compiled too and
no class is changed.  `compile` copies the function's attributes (functools.update_wrapper),
so unittest's skip / expected-failure markers still apply.  A test attribute that is not
a plain function (a staticmethod, a callable object) stays plain and is not counted.  The
compiler is imported in both modes, so the only difference between the runs is the
compilation of the test methods.
"""
from __future__ import annotations

import argparse
import collections
import faulthandler
import functools
import importlib
import inspect
import json
import os
import signal
import sys
import time
import traceback
import types
import unittest
import warnings
import weakref
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

OUTCOMES = ("pass", "fail", "error", "skip", "expected_failure", "unexpected_success")
DETAIL_LINES = 12
DETAIL_CHARS = 1500


class Events:
    """The JSON-lines file, written unbuffered (each line one write, so a crash loses at
    most the line being written)."""

    def __init__(self, path: str) -> None:
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)

    def write(self, **fields: Any) -> None:
        os.write(self.fd, (json.dumps(fields, default=repr) + "\n").encode("utf-8", "replace"))


def describe(err: Tuple[Any, Any, Any], in_test: bool = True) -> str:
    """The exception and the innermost frames of its traceback, shortened; never raises
    (formatting itself can fail under a broken compiler: that is reported, not fatal).
    `in_test`: leave unittest's own frames out (an error outside any test keeps them)."""
    etype, value, tb = err
    try:
        head = "".join(traceback.format_exception_only(etype, value)).strip()
    except BaseException as problem:  # noqa: B902 - any failure is data
        head = f"{getattr(etype, '__name__', etype)} (its message could not be formatted: {problem!r})"
    walked = list(traceback.walk_tb(tb))
    # The test's frames, not unittest's own (as unittest's report does).
    mine = [(frame, line) for frame, line in walked if "__unittest" not in frame.f_globals or not in_test]
    innermost = (mine or walked)[-3:]
    try:
        frames = traceback.StackSummary.extract(iter(innermost))
        where = "".join(traceback.format_list(frames)).rstrip()
    except BaseException as problem:  # noqa: B902
        # without source lines (linecache is what failed, e.g. on a generated code object)
        where = "\n".join([f"  (source lines left out: {type(problem).__name__}: {problem})"] + [
            f'  File "{frame.f_code.co_filename}", line {line}, in {frame.f_code.co_name}'
            for frame, line in innermost])
    lines = head.splitlines()[:DETAIL_LINES // 2] + (where.splitlines() if where else [])
    text = "\n".join(lines[:DETAIL_LINES])
    return text if len(text) <= DETAIL_CHARS else text[:DETAIL_CHARS] + " ..."


class RecordingResult(unittest.TestResult):
    """Writes each test's start and final outcome as it happens."""

    def __init__(self, events: Events) -> None:
        super().__init__()
        self.events = events
        self._current: Dict[str, Tuple[str, Optional[str]]] = {}

    @staticmethod
    def _id(test: Any) -> str:
        try:
            return str(test.id())
        except Exception:  # noqa: BLE001 - a test whose id() fails still gets a row
            return repr(test)

    def _note(self, test: Any, outcome: str, detail: Optional[str]) -> None:
        """Keep the worst outcome seen for the test (a failed subtest fails the test)."""
        test_id = self._id(test)
        if test_id not in self._current:  # a class/module fixture error: no startTest
            self.events.write(test=test_id, outcome=outcome, detail=detail)
            return
        known = self._current[test_id]
        rank = ("pass", "skip", "expected_failure", "unexpected_success", "fail", "error")
        if known[0] == "?" or rank.index(outcome) > rank.index(known[0]):
            self._current[test_id] = (outcome, detail)

    def startTest(self, test: Any) -> None:
        super().startTest(test)
        test_id = self._id(test)
        self._current[test_id] = ("?", None)
        self.events.write(start=test_id)

    def stopTest(self, test: Any) -> None:
        super().stopTest(test)
        test_id = self._id(test)
        if test_id not in self._current:
            return  # stopped twice (CPython 3.12.1 does that for a skipped test): already written
        outcome, detail = self._current.pop(test_id)
        if outcome == "?":
            outcome, detail = "error", "the test ended without reporting an outcome"
        self.events.write(test=test_id, outcome=outcome, detail=detail)

    def addSuccess(self, test: Any) -> None:
        super().addSuccess(test)
        self._note(test, "pass", None)

    def addFailure(self, test: Any, err: Any) -> None:
        self.failures.append((test, ""))
        self._note(test, "fail", describe(err))

    def addError(self, test: Any, err: Any) -> None:
        self.errors.append((test, ""))
        self._note(test, "error", describe(err))

    def addSkip(self, test: Any, reason: str) -> None:
        super().addSkip(test, reason)
        self._note(test, "skip", str(reason)[:DETAIL_CHARS])

    def addExpectedFailure(self, test: Any, err: Any) -> None:
        self.expectedFailures.append((test, ""))
        self._note(test, "expected_failure", describe(err))

    def addUnexpectedSuccess(self, test: Any) -> None:
        super().addUnexpectedSuccess(test)
        self._note(test, "unexpected_success", None)

    def addSubTest(self, test: Any, subtest: Any, err: Any) -> None:
        if err is None:
            return
        failed = issubclass(err[0], test.failureException)
        where = f"[{subtest._subDescription()}] " if hasattr(subtest, "_subDescription") else ""
        self._note(test, "fail" if failed else "error", where + describe(err))
        (self.failures if failed else self.errors).append((subtest, ""))


def iter_cases(suite: Any) -> Iterator[unittest.TestCase]:
    for item in suite:
        if isinstance(item, unittest.TestCase):
            yield item
        elif hasattr(item, "__iter__"):
            yield from iter_cases(item)


def load_engine(spec: Optional[str]) -> Callable[..., Callable]:
    """`compiler.compile`, or the `module:function` named by --engine (a stand-in with the
    same call, `engine(function, backend=...)`, for the harness's own tests)."""
    if not spec:
        import compiler
        return compiler.compile
    module_name, _, attribute = spec.partition(":")
    return getattr(importlib.import_module(module_name), attribute or "compile")


class Compiler:
    """Replaces test methods by compiled ones (one compiled function per function)."""

    def __init__(self, backend: str, engine: Optional[str] = None) -> None:
        self.compile = functools.partial(load_engine(engine), backend=backend)
        self.made: Dict[Any, Callable] = {}
        self.compiled = 0
        self.errors = 0
        # The cases already handled, by identity.  Held weakly: unittest drops each case once it
        # has run (TestSuite._removeTestAtIndex), and a later suite's case may then get the same
        # id() -- a set of ids skipped it, leaving its method plain (6 of test_decimal's on 3.8).
        self.seen: "weakref.WeakValueDictionary[int, Any]" = weakref.WeakValueDictionary()

    def apply(self, suite: Any) -> Tuple[int, int]:
        """Compile the test methods of every case of `suite`; (compiled, compile errors)."""
        compiled = errors = 0
        for case in iter_cases(suite):
            if self.seen.get(id(case)) is case:
                continue
            self.seen[id(case)] = case
            name = getattr(case, "_testMethodName", None)
            if not name:
                continue
            try:
                function = inspect.getattr_static(type(case), name)
            except AttributeError:
                continue  # unittest reports the missing method itself
            if not isinstance(function, types.FunctionType):
                continue  # staticmethod, classmethod, a callable object: left plain
            replacement = self.made.get(function)
            if replacement is None:
                try:
                    replacement = self.compile(function)
                except Exception as err:  # noqa: BLE001 - a compile error is the test's outcome
                    replacement = _raising(function, err)
                    errors += 1
                self.made[function] = replacement
            setattr(case, name, types.MethodType(replacement, case))
            compiled += 1
        self.compiled += compiled
        self.errors += errors
        return compiled, errors


class CompileFailed(Exception):
    """compiler.compile itself raised for a test method."""


def _raising(function: types.FunctionType, err: Exception) -> Callable:
    def compile_failed(*args: Any, **kwargs: Any) -> None:
        raise CompileFailed(f"compiler.compile({function.__qualname__}) raised "
                            f"{type(err).__name__}: {err}") from err
    functools.update_wrapper(compile_failed, function)
    return compile_failed


def compiler_summary() -> Optional[Dict[str, Any]]:
    """Counts of the compiler's events (frames compiled, run natively, breaks, internal errors)."""
    try:
        import compiler
        events = compiler.events()
    except Exception:  # noqa: BLE001
        return None
    reasons = collections.Counter((e.fallback_reason or "").splitlines()[0][:200]
                                  for e in events if e.fallback_reason)
    return {
        "frames_compiled": sum(1 for e in events if not e.fallback_reason),
        "frames_fell_back": sum(1 for e in events if e.fallback_reason),
        "graph_breaks": sum(e.graph_break_count for e in events),
        "graphs": sum(e.graph_count for e in events),
        "internal_errors": sum(1 for e in events if e.internal_error),
        "top_fallback_reasons": [[r, n] for r, n in reasons.most_common(5)],
    }


class Child:
    def __init__(self, events: Events, mode: str, backend: str, engine: Optional[str] = None) -> None:
        self.events = events
        import compiler  # noqa: F401 - in both modes, so that the runs differ only by compilation
        self.compiler = Compiler(backend, engine) if mode == "compiled" else None

    def run_suite(self, suite: Any) -> unittest.TestResult:
        if self.compiler is not None:
            compiled, errors = self.compiler.apply(suite)
            self.events.write(compiled=compiled, compile_errors=errors)
        result = RecordingResult(self.events)
        # As unittest's TextTestRunner (and so regrtest) does without -W options.
        with warnings.catch_warnings():
            if not sys.warnoptions:
                warnings.simplefilter("default")
            result.startTestRun()
            try:
                suite(result)
            finally:
                result.stopTestRun()
        return result

    # regrtest's helpers that old modules' test_main call, redirected to run_suite.
    def run_unittest(self, *classes: Any) -> None:
        loader = unittest.defaultTestLoader
        suite = unittest.TestSuite()
        for item in classes:
            if isinstance(item, str):
                suite.addTest(loader.loadTestsFromModule(sys.modules[item]))
            elif isinstance(item, (unittest.TestSuite, unittest.TestCase)):
                suite.addTest(item)
            else:
                suite.addTest(loader.loadTestsFromTestCase(item))
        self.run_suite(suite)

    def run_doctest(self, module: Any, verbosity: Any = None, optionflags: int = 0) -> Tuple[int, int]:
        import doctest
        suite = doctest.DocTestSuite(module, optionflags=optionflags)
        result = self.run_suite(suite)
        return len(result.failures) + len(result.errors), result.testsRun

    def run_module(self, module: Any) -> None:
        test_main = getattr(module, "test_main", None)
        if callable(test_main):
            from test import support
            ours = {"run_unittest": self.run_unittest, "run_doctest": self.run_doctest}
            # support's names (set even where this version has dropped them), and the
            # module's own where it imported them by name.
            patched = []
            for name in ours:
                original = getattr(support, name, None)
                patched.append((support, name, original))
                if original is not None and getattr(module, name, None) is original:
                    patched.append((module, name, original))
            for owner, name, _ in patched:
                setattr(owner, name, ours[name])
            try:
                test_main()
            finally:
                for owner, name, value in patched:
                    if value is None:
                        delattr(owner, name)
                    else:
                        setattr(owner, name, value)
            return
        self.run_suite(unittest.defaultTestLoader.loadTestsFromModule(module))


def deny_resources() -> None:
    """As plain regrtest without -u: no optional resource, not verbose."""
    try:
        from test import support
    except ImportError:
        return
    support.use_resources = []
    support.verbose = 0


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m matrix.cpython_tests.child")
    parser.add_argument("--module", required=True)
    parser.add_argument("--package", default="test")
    parser.add_argument("--path", action="append", default=[], help="prepended to sys.path")
    parser.add_argument("--mode", choices=("plain", "compiled"), required=True)
    parser.add_argument("--backend", default="eager")
    parser.add_argument("--engine", default=None, help="module:function instead of compiler.compile")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    sys.path[:0] = args.path
    if hasattr(signal, "SIGUSR1"):
        # the parent asks for the stacks before it kills a run that passed its timeout
        faulthandler.register(signal.SIGUSR1, all_threads=True)
    events = Events(os.path.abspath(args.out))
    deny_resources()
    try:
        child = Child(events, args.mode, args.backend, args.engine)
    except BaseException as err:  # noqa: B902
        events.write(error=f"cannot set up the {args.mode} run: {describe(sys.exc_info())}")
        events.write(done=True, compiler=None)
        return _exit(0)
    started = time.perf_counter()
    name = f"{args.package}.{args.module}"
    try:
        module = importlib.import_module(name)
    except unittest.SkipTest as err:
        events.write(skipped=f"skipped at import: {err}")
    except ImportError as err:
        events.write(skipped=f"import failed: {type(err).__name__}: {err}")
    except BaseException:  # noqa: B902 - the module itself is broken here
        events.write(error=f"import of {name} failed: {describe(sys.exc_info())}")
    else:
        try:
            child.run_module(module)
        except unittest.SkipTest as err:
            events.write(skipped=f"skipped by test_main: {err}")
        except BaseException:  # noqa: B902 - test_main (or loading) raised outside any test
            events.write(error=f"running {name} raised outside any test: {describe(sys.exc_info(), False)}")
    events.write(done=True, duration_s=round(time.perf_counter() - started, 3),
                 compiled_tests=child.compiler.compiled if child.compiler else 0,
                 compile_errors=child.compiler.errors if child.compiler else 0,
                 compiler=compiler_summary() if child.compiler else None)
    return _exit(0)


def _exit(code: int) -> int:
    """Leave at once: threads or atexit handlers a test left behind must not hold the
    child past its result (the parent only reads the events file)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001
            pass
    os._exit(code)
    return code  # pragma: no cover


if __name__ == "__main__":
    sys.exit(main())
