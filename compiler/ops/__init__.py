"""The NumPy allowlist: every operation the tracer may put into a graph,
enumerated function by function (one module per family), with the rules that
infer each result's shape, dtype and kind without running on real data.

    lookup_function(np.add)   -> OpInfo("numpy.add")   by identity; aliases
                                 (np.abs, np.amax, NumPy 2's np.acos ...) map to
                                 the entry of their canonical name
    lookup_method("sum")      -> OpInfo("ndarray.sum")  (also "T", "real", "imag")
    lookup_operator("add")    -> OpInfo("operator.add") (also "iadd", "getitem", ...)
    ARRAY_ATTRIBUTES          attributes answered from metadata alone
    may_fail_at_run_time(node) whether a graph node can raise or signal a floating-point
                              error on some data (compiler.ops.effects)
    allow_in_graph(fn)        register a user function (inferred by running it on
                              zero-filled stand-ins of the full shape)
"""
from __future__ import annotations

from compiler.ops.opinfo import KINDS, OpInfo
from compiler.ops.effects import DATA_DEPENDENT_WARNINGS, may_fail_at_run_time
from compiler.ops.registry import (ARRAY_ATTRIBUTES, all_ops, allow_in_graph, lookup_attribute,
                                   lookup_function, lookup_method, lookup_operator, remove_function)

__all__ = ["ARRAY_ATTRIBUTES", "DATA_DEPENDENT_WARNINGS", "KINDS", "OpInfo", "all_ops", "allow_in_graph", "lookup_attribute",
           "lookup_function", "lookup_method", "lookup_operator", "may_fail_at_run_time",
           "remove_function"]
