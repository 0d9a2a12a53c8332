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
def signatures_and_calls(draw):
    n_positional = draw(st.integers(0, 3))
    n_defaults = draw(st.integers(0, n_positional))
    varargs = draw(st.booleans())
    keyword_only = draw(st.lists(st.sampled_from(["k", "m", "n"]), unique=True, max_size=3))
    kw_defaults = [name for name in keyword_only if draw(st.booleans())]
    varkw = draw(st.booleans())
    params = [f"p{i}" + (f"={10 + i}" if i >= n_positional - n_defaults else "") for i in range(n_positional)]
    if varargs:
        params.append("*rest")
    elif keyword_only:
        params.append("*")
    params += [name + ("=7" if name in kw_defaults else "") for name in keyword_only]
    if varkw:
        params.append("**extra")
    names = [f"p{i}" for i in range(n_positional)] + (["rest"] if varargs else []) + keyword_only + \
        (["extra"] if varkw else [])
    # the call: enough positionals, maybe extra ones for *rest, every required keyword
    required = n_positional - n_defaults
    given_positional = draw(st.integers(required, n_positional + (2 if varargs else 0)))
    arguments = [f"x * {i + 1}" for i in range(given_positional)]
    arguments += [f"{name}=x - {j}" for j, name in enumerate(keyword_only)
                  if name not in kw_defaults or draw(st.booleans())]
    if varkw and draw(st.booleans()):
        arguments.append("zz=x + 100")
    source = (f"def callee({', '.join(params)}):\n"
              f"    return ({', '.join(names)}{',' if names else ''})\n"
              f"def caller(x):\n"
              f"    return callee({', '.join(arguments)})\n")
    return source


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
