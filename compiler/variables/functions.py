"""User functions (inlined), methods, closures, functools.partial.

Calling a user function inlines it: its code is traced by a nested
translator, with the arguments bound by Python's own rules (a stand-in
function object with the same code and defaults is bound through
``inspect.signature``, so keyword-only, defaults, ``*args``/``**kwargs``
behave exactly as in the interpreter).
"""
from __future__ import annotations

import functools
import inspect
import types
from typing import Any, Dict, List, Optional, Sequence

from ..exc import Unsupported
from ..sources import AttrSource, ItemSource, Source, closure_cell_source
from .base import Translator, VariableTracker
from .constant import ConstantVariable
from .containers import DictVariable, TupleVariable


class CellVariable(VariableTracker):
    """A closure cell.  Cells made by the traced code hold a tracker; cells of
    functions from outside read their contents through a source."""

    _EMPTY = object()

    def __init__(self, contents: Optional[VariableTracker] = None, source: Optional[Source] = None,
                 external: bool = False, name: str = "") -> None:
        super().__init__(source)
        self.contents = contents
        self.external = external
        self.name = name

    def describe(self) -> str:
        return f"cell {self.name!r}"

    def load(self, tx: Translator) -> VariableTracker:
        if self.contents is None:
            if self.external and self.source is not None:
                self.contents = tx.output.wrap_cell_contents(self.source)
            else:
                tx.raise_python_exception(NameError(
                    f"free variable {self.name!r} referenced before assignment"))
        return self.contents

    def reconstruct(self, cg) -> str:
        # The cell object itself (LOAD_CLOSURE, or 3.13's LOAD_FAST of a cell slot, left it on
        # the stack at a break: a closure tuple being built), never its contents.
        return cg.cell_object(self)

    def store(self, tx: Translator, value: VariableTracker) -> None:
        tx.output.note_mutation(self, f"store into closure variable {self.name!r}")
        if self.external:
            raise Unsupported(f"nonlocal store into {self.name!r}, a closure cell of a function "
                              "defined outside the compiled frame (a side effect)")
        self.contents = value


_SIGNATURE_CACHE: Dict[Any, inspect.Signature] = {}


def _signature_for(code: types.CodeType, defaults: Optional[tuple], kwdefaults: Optional[dict]) -> inspect.Signature:
    """The signature of a function with ``code`` and these (tracked) defaults."""
    key = (code, len(defaults or ()), tuple(sorted(kwdefaults or ())))
    sig = _SIGNATURE_CACHE.get(key)
    if sig is None:
        cells = tuple(types.CellType() for _ in code.co_freevars) if hasattr(types, "CellType") else None
        stand_in = types.FunctionType(code, {}, code.co_name, tuple(range(len(defaults or ()))),
                                      cells or None)
        if kwdefaults:
            stand_in.__kwdefaults__ = {k: None for k in kwdefaults}
        try:
            sig = inspect.signature(stand_in)
        except ValueError as error:  # parameter names inspect refuses (a code object built by hand)
            raise Unsupported(f"call of {code.co_name}(): inspect cannot describe its parameters ({error}), "
                              "so the call cannot be bound") from None
        _SIGNATURE_CACHE[key] = sig
    return sig


def bind_arguments(tx: Translator, code: types.CodeType, args: Sequence[VariableTracker],
                   kwargs: Dict[str, VariableTracker], defaults: Optional[Sequence[VariableTracker]],
                   kwdefaults: Optional[Dict[str, VariableTracker]]) -> Dict[str, VariableTracker]:
    """Python's argument binding over trackers: parameter name -> tracker."""
    sig = _signature_for(code, tuple(defaults) if defaults else None, kwdefaults)
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError:
        # inspect words its errors differently from CPython: the native call raises the real one.
        raise Unsupported(f"call of {code.co_name}() with arguments its signature refuses") from None
    result: Dict[str, VariableTracker] = {}
    n_defaults = len(defaults or ())
    positional = [p for p in sig.parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    first_default = len(positional) - n_defaults
    # inspect renames comprehension arguments (".0" -> "implicit0"): key by the code's own names.
    for index, ((sig_name, param), name) in enumerate(zip(sig.parameters.items(), _in_signature_order(code))):
        if sig_name in bound.arguments:
            value = bound.arguments[sig_name]
            if param.kind == param.VAR_POSITIONAL:
                value = TupleVariable(list(value))
            elif param.kind == param.VAR_KEYWORD:
                value = DictVariable(dict(value))
            result[name] = value
        elif param.kind == param.VAR_POSITIONAL:
            result[name] = TupleVariable([])
        elif param.kind == param.VAR_KEYWORD:
            result[name] = DictVariable({})
        elif param.kind == param.KEYWORD_ONLY:
            result[name] = kwdefaults[sig_name]  # type: ignore[index]
        else:
            result[name] = defaults[index - first_default]  # type: ignore[index]
    return result


def _in_signature_order(code: types.CodeType) -> List[str]:
    """The code's parameter names in inspect's order: positional, *args, keyword-only,
    **kwargs (co_varnames has the keyword-only ones before *args)."""
    names = code.co_varnames
    positional, keyword_only = code.co_argcount, code.co_kwonlyargcount
    rest = positional + keyword_only
    varargs = [names[rest]] if code.co_flags & inspect.CO_VARARGS else []
    varkw = [names[rest + len(varargs)]] if code.co_flags & inspect.CO_VARKEYWORDS else []
    return list(names[:positional]) + varargs + list(names[positional:rest]) + varkw


class BaseUserFunctionVariable(VariableTracker):
    code: types.CodeType

    def python_type(self) -> type:
        return types.FunctionType

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        return self.inline(tx, list(args), dict(kwargs))

    def inline(self, tx: Translator, args: List[VariableTracker],
               kwargs: Dict[str, VariableTracker]) -> VariableTracker:
        bound = bind_arguments(tx, self.code, args, kwargs, self.defaults(tx), self.kwdefaults(tx))
        return tx.inline_call(self, bound)

    # Provided by subclasses: what a nested translator needs.
    def defaults(self, tx: Translator) -> Optional[List[VariableTracker]]:
        raise NotImplementedError

    def kwdefaults(self, tx: Translator) -> Optional[Dict[str, VariableTracker]]:
        raise NotImplementedError

    def closure_cells(self, tx: Translator) -> List[CellVariable]:
        raise NotImplementedError

    def globals_dict(self) -> dict:
        raise NotImplementedError

    def globals_source(self, tx: Translator) -> Optional[Source]:
        """None: the compiled frame's own globals; else a source of the globals dict."""
        raise NotImplementedError


class UserFunctionVariable(BaseUserFunctionVariable):
    """A Python function object that exists outside the trace (a global, an argument, an attribute)."""

    def __init__(self, fn: types.FunctionType, source: Optional[Source] = None) -> None:
        super().__init__(source)
        self.fn = fn
        self.code = fn.__code__

    def describe(self) -> str:
        return f"function {self.fn.__qualname__}"

    def is_python_constant(self) -> bool:
        return True

    def as_python_constant(self) -> Any:
        return self.fn

    def defaults(self, tx: Translator):
        if not self.fn.__defaults__:
            return None
        base = AttrSource(self.source, "__defaults__") if self.source is not None else None
        return [tx.output.wrap(value, ItemSource(base, i) if base is not None else None)
                for i, value in enumerate(self.fn.__defaults__)]

    def kwdefaults(self, tx: Translator):
        if not self.fn.__kwdefaults__:
            return None
        base = AttrSource(self.source, "__kwdefaults__") if self.source is not None else None
        return {k: tx.output.wrap(v, ItemSource(base, k) if base is not None else None)
                for k, v in self.fn.__kwdefaults__.items()}

    def closure_cells(self, tx: Translator):
        cells = []
        for i, name in enumerate(self.code.co_freevars):
            source = closure_cell_source(self.source, i) if self.source is not None else None
            if source is None:
                raise Unsupported(f"closure of {self.describe()} has no source to guard")
            cells.append(CellVariable(source=source, external=True, name=name))
        return cells

    def globals_dict(self) -> dict:
        return self.fn.__globals__

    def globals_source(self, tx: Translator) -> Optional[Source]:
        if self.fn.__globals__ is tx.output.f_globals:
            return None
        if self.source is None:
            raise Unsupported(f"{self.describe()} from another module has no source to guard its globals")
        return AttrSource(self.source, "__globals__")

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        if name in ("__name__", "__qualname__", "__module__", "__doc__"):
            # Writable: guarded by value (a guard on the function's identity, or on its code,
            # says nothing of them: CPython's test_funcattrs sets __doc__ between reads).
            if self.source is None:
                raise Unsupported(f"{name} of {self.describe()} without a source to guard it")
            return tx.output.wrap(getattr(self.fn, name), AttrSource(self.source, name))
        return super().getattr(tx, name)


class LocalFunctionVariable(UserFunctionVariable):
    """A function made inside another function, from outside the trace: guarded by its code
    only, so the object seen while tracing stands for any function of that code (with its
    own defaults and cells, read through the source).  It is not a constant: nothing may
    keep the traced object itself."""

    def is_python_constant(self) -> bool:
        return False

    def as_python_constant(self) -> Any:
        raise Unsupported(f"{self.describe()} as a constant (a new function object on every call)")


class NestedFunctionVariable(BaseUserFunctionVariable):
    """A function (def or lambda) created by MAKE_FUNCTION inside the trace."""

    def __init__(self, code: types.CodeType, qualname: str, globals_dict: dict,
                 globals_source: Optional[Source], defaults: Optional[List[VariableTracker]],
                 kwdefaults: Optional[Dict[str, VariableTracker]], closure: List[CellVariable]) -> None:
        super().__init__(None)
        self.code = code
        self.qualname = qualname
        self._globals = globals_dict
        self._globals_source = globals_source
        self._defaults = defaults
        self._kwdefaults = kwdefaults
        self._closure = closure
        # MAKE_FUNCTION's annotations (a dict, or a tuple of name/value pairs from 3.10) and
        # 3.14's __annotate__ function, and attributes the traced code set on the function.
        self.annotations: Optional[VariableTracker] = None
        self.annotate: Optional[VariableTracker] = None
        self.attrs: Dict[str, VariableTracker] = {}

    def describe(self) -> str:
        return f"function {self.qualname} (defined in the trace)"

    def defaults(self, tx: Translator):
        return self._defaults

    def kwdefaults(self, tx: Translator):
        return self._kwdefaults

    def closure_cells(self, tx: Translator):
        return self._closure

    def globals_dict(self) -> dict:
        return self._globals

    def globals_source(self, tx: Translator):
        return self._globals_source

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        if name in self.attrs:
            return self.attrs[name]
        if name == "__name__":
            return ConstantVariable(self.code.co_name)
        if name == "__qualname__":
            return ConstantVariable(self.qualname)
        return super().getattr(tx, name)

    def setattr(self, tx: Translator, name: str, value: VariableTracker) -> None:
        """``f.attr = value``: kept on the tracker, set on the function when it is rebuilt."""
        if name.startswith("__") and name.endswith("__"):
            raise Unsupported(f"setting {name} of {self.describe()}")
        tx.output.note_mutation(self, f"attribute store .{name} on {self.describe()}")
        self.attrs[name] = value

    def reconstruct(self, cg) -> str:
        """A new function object with the same code, defaults, cells, annotations and
        attributes; one object however many places need it (identity, as in Python)."""
        pending: List[Any] = []   # cells made empty in the closure, filled once the function is named
        return cg.shared_filled(self, lambda: self._make(cg, pending), self._fill(cg, pending))

    def _fill(self, cg, pending: List[Any]):
        def fill(name: str) -> str:
            parts = [cg.fill_cell(cell_name, cell) for cell_name, cell in pending]
            if parts:
                return f"({', '.join(parts)}, {self._extras(cg, name)})"
            return self._extras(cg, name)
        return fill

    def _extras(self, cg, name: str) -> str:
        annotations = f"{cg.const(_annotations)}({self.annotations.reconstruct(cg)})" \
            if self.annotations is not None else "None"
        annotate = self.annotate.reconstruct(cg) if self.annotate is not None else "None"
        attrs = "{" + ", ".join(f"{k!r}: {v.reconstruct(cg)}" for k, v in self.attrs.items()) + "}"
        return f"{cg.const(_set_function_extras)}({name}, {annotations}, {annotate}, {attrs})"

    def _make(self, cg, pending: List[Any]) -> str:
        defaults = "None"
        if self._defaults:
            defaults = "(" + "".join(d.reconstruct(cg) + ", " for d in self._defaults) + ")"
        kwdefaults = "None"
        if self._kwdefaults:
            kwdefaults = "{" + ", ".join(f"{k!r}: {v.reconstruct(cg)}" for k, v in self._kwdefaults.items()) + "}"
        closure = "None"
        if self._closure:
            closure = "(" + "".join(cg.cell_object(c, pending) + ", " for c in self._closure) + ")"
        elif self.code.co_freevars:
            # Made, but its closure not set yet (where SET_FUNCTION_ATTRIBUTE sets it after
            # MAKE_FUNCTION): no function object can exist in that state.
            raise Unsupported(f"{self.qualname} at a break between its MAKE_FUNCTION and its closure")
        make = cg.const(_make_function)
        return (f"{make}({cg.const(self.code)}, {cg.const(self._globals)}, {self.qualname!r}, "
                f"{defaults}, {kwdefaults}, {closure})")


def _annotations(value: Any) -> dict:
    """MAKE_FUNCTION's annotations as a dict (from 3.10 a flat tuple of names and values)."""
    if isinstance(value, tuple):
        return dict(zip(value[::2], value[1::2]))
    return dict(value)


def _set_function_extras(fn: types.FunctionType, annotations: Optional[dict], annotate: Any,
                         attrs: Dict[str, Any]) -> None:
    if annotations is not None:
        fn.__annotations__ = annotations
    if annotate is not None:
        fn.__annotate__ = annotate  # type: ignore[attr-defined]
    fn.__dict__.update(attrs)


def _make_function(code: types.CodeType, f_globals: dict, qualname: str, defaults: Optional[tuple],
                   kwdefaults: Optional[dict], closure: Optional[tuple]) -> types.FunctionType:
    fn = types.FunctionType(code, f_globals, code.co_name, defaults, closure)
    fn.__qualname__ = qualname
    if kwdefaults:
        fn.__kwdefaults__ = kwdefaults
    return fn


class BoundMethodVariable(VariableTracker):
    """``obj.method`` for a user-defined method: calling it inlines the function with self."""

    def __init__(self, function: VariableTracker, self_var: VariableTracker, source=None) -> None:
        super().__init__(source)
        self.function = function
        self.self_var = self_var

    def describe(self) -> str:
        return f"bound method {self.function.describe()}"

    def python_type(self) -> type:
        return types.MethodType

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        return self.function.call(tx, [self.self_var, *args], kwargs)

    def reconstruct(self, cg) -> str:
        if self.source is not None:
            return cg.source_expr(self.source)
        return f"{cg.const(types.MethodType)}({self.function.reconstruct(cg)}, {self.self_var.reconstruct(cg)})"


class PartialVariable(VariableTracker):
    """functools.partial(func, *args, **kwargs)."""

    def __init__(self, func: VariableTracker, args: List[VariableTracker],
                 kwargs: Dict[str, VariableTracker], source=None) -> None:
        super().__init__(source)
        self.func = func
        self.args = args
        self.kwargs = kwargs
        # The tracker of ``p.keywords`` once the trace read it (its changes are the partial's).
        self._keywords_read: Optional[VariableTracker] = None

    def describe(self) -> str:
        return f"functools.partial of {self.func.describe()}"

    def python_type(self) -> type:
        return functools.partial

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        keywords = self.kwargs
        read = self._keywords_read
        if read is not None:
            # Its keywords dict may have been changed through ``p.keywords`` earlier in the trace.
            keywords = read.items
        return self.func.call(tx, [*self.args, *args], {**keywords, **kwargs})

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        if name == "func":
            return self.func
        if name in ("args", "keywords"):
            if self.source is None:
                # Rebuilt at the end from its parts: a tuple or dict handed out now would not
                # be the rebuilt partial's own (identity, and changes to the dict).
                raise Unsupported(f".{name} of a functools.partial made in the trace")
            # The object the partial holds (one tracker per source: `p.args is p.args`; the
            # keywords dict is the caller's, its changes replayed on it).
            part = tx.output.wrap_cell_contents(AttrSource(self.source, name))
            if name == "keywords":
                self._keywords_read = part
            return part
        return super().getattr(tx, name)

    def reconstruct(self, cg) -> str:
        if self.source is not None:
            return cg.source_expr(self.source)
        def build() -> str:
            args = [self.func.reconstruct(cg)] + [a.reconstruct(cg) for a in self.args]
            args += [f"**{{{k!r}: {v.reconstruct(cg)}}}" for k, v in self.kwargs.items()]
            return f"{cg.const(functools.partial)}({', '.join(args)})"
        return cg.shared(self, build)  # one partial object however many places hold it
