"""Fixtures for the compiler's own tests: a clean compiler per test, internal errors raised."""
from __future__ import annotations

import pytest

import compiler


@pytest.fixture(autouse=True)
def fresh_compiler(monkeypatch):
    compiler.reset()
    monkeypatch.setattr(compiler.config, "raise_internal_errors", True)
    monkeypatch.setattr(compiler.config, "debug_checks", True)
    yield
    compiler.reset()
