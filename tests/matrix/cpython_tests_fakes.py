"""A fake Lib/test package for the cpython-tests suite's own tests, and a fake engine.

`write_package(folder)` writes `faketests/` (test_* modules covering every outcome, a
crash, a hang, a behaviour change, a broken import, an old-style `test_main`) into
`folder`; `python -m matrix cpython-tests --package faketests --path folder --engine
cpython_tests_fakes:compile` runs them.  The fake engine marks its calls (the
FAKE_COMPILED environment variable is "1" while a compiled test runs), so a test can
behave differently compiled, as a compiler bug would make it.
"""
from __future__ import annotations

import functools
import os
import textwrap
from pathlib import Path

PACKAGE = "faketests"


def compile(function, backend="eager"):  # noqa: A001 - the engine's call is compiler.compile's
    @functools.wraps(function)
    def compiled(*args, **kwargs):
        os.environ["FAKE_COMPILED"] = "1"
        try:
            return function(*args, **kwargs)
        finally:
            os.environ.pop("FAKE_COMPILED", None)
    return compiled


MODULES = {
    "__init__": "",
    "test_outcomes": '''
        import os, unittest

        class Base(unittest.TestCase):
            def test_inherited(self):
                self.assertEqual(type(self).__name__ in ("Outcomes", "Base"), True)

        class Outcomes(Base):
            def test_pass(self):
                self.assertEqual(1 + 1, 2)

            def test_fail(self):
                self.assertEqual(1, 2, "one is not two")

            def test_error(self):
                raise KeyError("<b>boom</b>")

            @unittest.skip("not today")
            def test_skip(self):
                pass

            @unittest.expectedFailure
            def test_expected_failure(self):
                self.assertEqual(1, 2)

            @unittest.expectedFailure
            def test_unexpected_success(self):
                pass

            def test_subtest(self):
                for i in range(3):
                    with self.subTest(i=i):
                        self.assertLess(i, 2)

            test_static = staticmethod(lambda: None)
    ''',
    "test_differs": '''
        import os, unittest

        def compiled():
            return os.environ.get("FAKE_COMPILED") == "1"

        class Differs(unittest.TestCase):
            def test_same(self):
                pass

            def test_regresses(self):
                self.assertFalse(compiled(), "<script>alert('compiled')</script>")

            @unittest.skip("skipped plainly")
            def test_skip_kept(self):
                pass

            def test_improves(self):
                self.assertTrue(compiled(), "fails plainly")
    ''',
    "test_abort": '''
        import os, unittest

        class Abort(unittest.TestCase):
            def test_a_first(self):
                pass

            def test_b_aborts(self):
                if os.environ.get("FAKE_COMPILED") == "1":
                    os.abort()

            def test_c_never_reached(self):
                pass
    ''',
    "test_hang": '''
        import os, time, unittest

        class Hang(unittest.TestCase):
            def test_hangs(self):
                if os.environ.get("FAKE_COMPILED") == "1":
                    time.sleep(600)
    ''',
    "test_no_import": '''
        import _no_such_module_for_tracematrix
    ''',
    "test_skips_at_import": '''
        import unittest
        raise unittest.SkipTest("needs a resource this machine lacks")
    ''',
    "test_old_style": '''
        import unittest
        from test import support

        class Old(unittest.TestCase):
            def test_one(self):
                pass

        def test_main():
            support.run_unittest(Old)
    ''',
}


def write_package(folder: Path) -> Path:
    package = folder / PACKAGE
    package.mkdir(parents=True, exist_ok=True)
    for name, source in MODULES.items():
        (package / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    return package
