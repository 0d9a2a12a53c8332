"""Inlined calls bind arguments exactly as CPython does: generated signatures (positional-only,
defaults, ``*args``, keyword-only with and without defaults, ``**kwargs``) called with generated
arguments, compiled against plain.  CPython's test_importlib found keyword-only parameters
bound to ``*args``' values (co_varnames lists keyword-only names before ``*args``)."""
from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import compiler


@st.composite
def signatures(draw, keyword_names=("k", "m", "n"), posonly=False):
    """A callee's source (returning its parameters) and what its signature has:
    (source, n_positional, n_defaults, varargs, keyword_only, kw_defaults, varkw)."""
    n_positional = draw(st.integers(0, 3))
    n_defaults = draw(st.integers(0, n_positional))
    n_posonly = draw(st.integers(0, n_positional)) if posonly else 0
    varargs = draw(st.booleans())
    keyword_only = draw(st.lists(st.sampled_from(keyword_names), unique=True, max_size=len(keyword_names)))
    kw_defaults = [name for name in keyword_only if draw(st.booleans())]
    varkw = draw(st.booleans())
    params = [f"p{i}" + (f"={10 + i}" if i >= n_positional - n_defaults else "") for i in range(n_positional)]
    if n_posonly:
        params.insert(n_posonly, "/")
    if varargs:
        params.append("*rest")
    elif keyword_only:
        params.append("*")
    params += [name + ("=7" if name in kw_defaults else "") for name in keyword_only]
    if varkw:
        params.append("**extra")
    names = [f"p{i}" for i in range(n_positional)] + (["rest"] if varargs else []) + keyword_only + \
        (["extra"] if varkw else [])
    source = (f"def callee({', '.join(params)}):\n"
              f"    return ({', '.join(names)}{',' if names else ''})\n")
    return source, n_positional, n_defaults, varargs, keyword_only, kw_defaults, varkw


@st.composite
def signatures_and_calls(draw):
    source, n_positional, n_defaults, varargs, keyword_only, kw_defaults, varkw = draw(signatures())
    # the call: enough positionals, maybe extra ones for *rest, every required keyword
    required = n_positional - n_defaults
    given_positional = draw(st.integers(required, n_positional + (2 if varargs else 0)))
    arguments = [f"x * {i + 1}" for i in range(given_positional)]
    arguments += [f"{name}=x - {j}" for j, name in enumerate(keyword_only)
                  if name not in kw_defaults or draw(st.booleans())]
    if varkw and draw(st.booleans()):
        arguments.append("zz=x + 100")
    return source + (f"def caller(x):\n"
                     f"    return callee({', '.join(arguments)})\n")


def _same(got, want):
    assert type(got) is type(want), (got, want)
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
    elif isinstance(want, dict):
        assert list(got) == list(want)
        for key in want:
            _same(got[key], want[key])
    elif isinstance(want, np.ndarray):
        np.testing.assert_array_equal(got, want)
    else:
        assert got == want


@settings(max_examples=150, derandomize=True, database=None, deadline=None,
          suppress_health_check=list(HealthCheck))
@given(signatures_and_calls())
def test_inlined_calls_bind_arguments_as_cpython(source):
    namespace: dict = {}
    exec(compile(source, "<generated signature>", "exec"), namespace)
    caller = namespace["caller"]
    x = np.arange(3.0)
    compiler.reset()
    _same(compiler.compile(caller)(x), caller(x))


@st.composite
def signatures_and_any_calls(draw):
    """A signature (positional-only parameters too) and a call of it that may be wrong (too
    few or too many positionals, a missing, repeated or unknown keyword, a positional-only
    name by keyword)."""
    source, n_positional = draw(signatures(("k", "m"), posonly=True))[:2]
    positional = [f"x * {i + 1}" for i in range(draw(st.integers(0, n_positional + 2)))]
    keywords = draw(st.lists(st.sampled_from([f"p{i}" for i in range(n_positional)] + ["k", "m", "zz", "rest"]),
                             unique=True, max_size=3))
    call = ", ".join(positional + [f"{name}=x - {j}" for j, name in enumerate(keywords)])
    return source, call


def _outcome(call, fn, x):
    try:
        return "returned", call(fn, x)
    except TypeError as e:
        return "TypeError", str(e)


@settings(max_examples=300, derandomize=True, database=None, deadline=None,
          suppress_health_check=list(HealthCheck))
@given(signatures_and_any_calls(), st.booleans())
def test_compiled_functions_bind_calls_as_cpython(source_and_call, replace_defaults):
    """The compiled function's generated wrapper has the plain parameters (``*args`` and
    ``**kwargs`` included): each call returns what the plain function returns or raises
    its TypeError, on the compiling call, on a cache hit, and after the function's
    defaults were replaced."""
    source, arguments = source_and_call
    namespace: dict = {}
    exec(compile(source, "<generated signature>", "exec"), namespace)
    callee = namespace["callee"]
    call = eval(f"lambda f, x: f({arguments})")
    compiler.reset()
    compiled = compiler.compile(callee)
    x = np.arange(3.0)
    for _ in range(2):
        want = _outcome(call, callee, x)
        got = _outcome(call, compiled, x)
        assert got[0] == want[0]
        if want[0] == "TypeError":
            assert got[1] == want[1]
        else:
            _same(got[1], want[1])
    if replace_defaults and (callee.__defaults__ or callee.__kwdefaults__):
        if callee.__defaults__:
            callee.__defaults__ = tuple(-d for d in callee.__defaults__)
        if callee.__kwdefaults__:
            callee.__kwdefaults__ = {name: -value for name, value in callee.__kwdefaults__.items()}
        want, got = _outcome(call, callee, x), _outcome(call, compiled, x)
        assert got[0] == want[0]
        if want[0] == "TypeError":
            assert got[1] == want[1]
        else:
            _same(got[1], want[1])
