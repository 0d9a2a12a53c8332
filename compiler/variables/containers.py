"""Lists, tuples, namedtuples, dicts (plain, OrderedDict, defaultdict), sets, slices, iterators.

Containers made by the traced code are mutable trackers, changed in place as
the program runs.  Containers that came from outside (an argument, a global)
carry a Source; mutating them would be a side effect the caller can see, so
it is Unsupported until side-effect replay exists (issue 4).
"""
from __future__ import annotations

import collections
from typing import Any, Dict, List, Optional, Sequence

from ..exc import Unsupported
from .base import Translator, VariableTracker, all_constant, constants_of
from .constant import ConstantVariable


def _check_mutable(tx: Translator, var: VariableTracker, what: str) -> None:
    """Every in-place change of a tracked container goes through here: containers from
    outside are recorded so that the cache entry replays their final content."""
    tx.output.note_mutation(var, what)
    if var.source is not None:
        tx.output.side_effects.note_container(var)


def _const_key(key: VariableTracker) -> Any:
    if not key.is_python_constant():
        raise Unsupported(f"{key.describe()} as a dict key or set element")
    value = key.as_python_constant()
    try:
        hash(value)
    except TypeError:
        raise Unsupported(f"unhashable key {value!r}") from None
    return value


class _MethodsByName:
    """``container.method`` before the call: calling it runs ``call_method``."""

    METHODS: frozenset = frozenset()

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        if name in self.METHODS:
            return _BoundHelper(lambda *args, **kwargs: self.call_method(tx, name, list(args), kwargs),
                                owner=self, name=name)
        raise Unsupported(f"attribute {name!r} of {self.describe()}")


class BaseListVariable(_MethodsByName, VariableTracker):
    METHODS = frozenset({"index", "count"})

    def __init__(self, items: Sequence[VariableTracker], source=None) -> None:
        super().__init__(source)
        self.items: List[VariableTracker] = list(items)

    def is_python_constant(self) -> bool:
        return all_constant(self.items)

    def as_python_constant(self) -> Any:
        return self.python_type()(constants_of(self.items))

    def truth(self, tx: Translator) -> bool:
        return bool(self.items)

    def unpack(self, tx: Translator) -> List[VariableTracker]:
        return list(self.items)

    def length(self, tx: Translator) -> int:
        return len(self.items)

    def getitem(self, tx: Translator, key: VariableTracker) -> VariableTracker:
        if isinstance(key, SliceVariable):
            key = ConstantVariable(key.as_python_constant())
        index = key.as_python_constant() if key.is_python_constant() else None
        if isinstance(index, bool) or not isinstance(index, (int, slice)):
            raise Unsupported(f"index {key.describe()} into {self.describe()}")
        try:
            picked = self.items[index]
        except IndexError:
            tx.raise_python_exception(IndexError(f"{self.python_type().__name__} index out of range"))
        if isinstance(index, slice):
            return self.similar(picked)
        return picked

    def similar(self, items: Sequence[VariableTracker]) -> "BaseListVariable":
        return type(self)(items)

    def contains(self, tx: Translator, item: VariableTracker) -> bool:
        if not item.is_python_constant():
            if any(i is item for i in self.items):
                return True
            raise Unsupported(f"`in` test of {item.describe()}")
        value = item.as_python_constant()
        for existing in self.items:
            if existing.is_python_constant() and existing.as_python_constant() == value:
                return True
            if not existing.is_python_constant():
                raise Unsupported(f"`in` test against {existing.describe()}")
        return False

    def call_method(self, tx: Translator, name, args, kwargs) -> VariableTracker:
        if name == "index" and len(args) == 1 and not kwargs:
            for i, existing in enumerate(self.items):
                if existing is args[0] or (existing.is_python_constant() and args[0].is_python_constant()
                                           and existing.as_python_constant() == args[0].as_python_constant()):
                    return ConstantVariable(i)
            tx.raise_python_exception(ValueError("value is not in list"))
        if name == "count" and len(args) == 1 and not kwargs and args[0].is_python_constant():
            return ConstantVariable(self.as_python_constant().count(args[0].as_python_constant()))
        return super().call_method(tx, name, args, kwargs)

    def reconstruct(self, cg) -> str:
        if self.source is not None:
            return cg.source_expr(self.source)
        return cg.shared(self, lambda: self._reconstruct_items(cg, [item.reconstruct(cg) for item in self.items]))

    def _reconstruct_items(self, cg, parts: List[str]) -> str:
        raise NotImplementedError


class TupleVariable(BaseListVariable):
    def describe(self) -> str:
        return f"tuple of {len(self.items)}"

    def python_type(self) -> type:
        return tuple

    def _reconstruct_items(self, cg, parts: List[str]) -> str:
        return "(" + "".join(p + ", " for p in parts) + ")"


class ListVariable(BaseListVariable):
    METHODS = frozenset({"index", "count", "append", "extend", "insert", "pop", "reverse", "clear",
                         "copy", "sort"})

    def describe(self) -> str:
        return f"list of {len(self.items)}"

    def python_type(self) -> type:
        return list

    def is_python_constant(self) -> bool:
        return False  # a list is mutable: never folded into a shared constant

    def setitem(self, tx: Translator, key, value) -> None:
        _check_mutable(tx, self, "list item assignment")
        index = key.as_python_constant()
        if isinstance(index, slice):
            self.items[index] = value.unpack(tx)
        else:
            self.items[index] = value

    def delitem(self, tx: Translator, key) -> None:
        _check_mutable(tx, self, "list item deletion")
        del self.items[key.as_python_constant()]

    def call_method(self, tx: Translator, name, args, kwargs) -> VariableTracker:
        if kwargs and name != "sort":
            raise Unsupported(f"list.{name} with keyword arguments")
        if name == "append" and len(args) == 1:
            _check_mutable(tx, self, "list.append")
            self.items.append(args[0])
            return ConstantVariable(None)
        if name == "extend" and len(args) == 1:
            _check_mutable(tx, self, "list.extend")
            self.items.extend(args[0].unpack(tx))
            return ConstantVariable(None)
        if name == "insert" and len(args) == 2:
            _check_mutable(tx, self, "list.insert")
            self.items.insert(args[0].as_python_constant(), args[1])
            return ConstantVariable(None)
        if name == "pop" and len(args) <= 1:
            _check_mutable(tx, self, "list.pop")
            if not self.items:
                tx.raise_python_exception(IndexError("pop from empty list"))
            index = args[0].as_python_constant() if args else -1
            return self.items.pop(index)
        if name == "reverse" and not args:
            _check_mutable(tx, self, "list.reverse")
            self.items.reverse()
            return ConstantVariable(None)
        if name == "clear" and not args:
            _check_mutable(tx, self, "list.clear")
            self.items.clear()
            return ConstantVariable(None)
        if name == "copy" and not args:
            return ListVariable(self.items)
        if name == "sort" and not args:
            _check_mutable(tx, self, "list.sort")
            if not all_constant(self.items):
                raise Unsupported("list.sort of non-constant items")
            values = constants_of(self.items)
            values.sort(**{k: v.as_python_constant() for k, v in kwargs.items()})
            self.items = [ConstantVariable(v) for v in values]
            return ConstantVariable(None)
        return super().call_method(tx, name, args, kwargs)

    def _reconstruct_items(self, cg, parts: List[str]) -> str:
        return "[" + ", ".join(parts) + "]"


class NamedTupleVariable(TupleVariable):
    def __init__(self, items, cls: type, source=None) -> None:
        super().__init__(items, source)
        self.cls = cls

    def describe(self) -> str:
        return f"namedtuple {self.cls.__name__}"

    def python_type(self) -> type:
        return self.cls

    def as_python_constant(self) -> Any:
        return self.cls(*constants_of(self.items))

    def similar(self, items):
        return TupleVariable(items)

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        fields = self.cls._fields
        if name in fields:
            return self.items[fields.index(name)]
        if name == "_fields":
            return ConstantVariable(fields)
        if name == "_asdict":
            return _BoundHelper(lambda: DictVariable(dict(zip(fields, self.items))))
        if name == "_replace":
            def replace(**kw):
                items = list(self.items)
                for key, value in kw.items():
                    items[fields.index(key)] = value
                return NamedTupleVariable(items, self.cls)
            return _BoundHelper(replace)
        return super().getattr(tx, name)

    def _reconstruct_items(self, cg, parts: List[str]) -> str:
        return f"{cg.const(self.cls)}({', '.join(parts)})"


class _BoundHelper(VariableTracker):
    """A method of a tracked container implemented by a Python callable over trackers."""

    def __init__(self, fn, owner: Optional[VariableTracker] = None, name: str = "") -> None:
        super().__init__(None)
        self.fn = fn
        self.owner = owner
        self.name = name

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        return self.fn(*args, **kwargs)

    def reconstruct(self, cg) -> str:
        if self.owner is None:
            return super().reconstruct(cg)
        # At a graph break inside the call's arguments: the real container's bound method.
        return f"{self.owner.reconstruct(cg)}.{self.name}"


class DictVariable(_MethodsByName, VariableTracker):
    """dict, OrderedDict or defaultdict with constant keys and tracked values."""

    METHODS = frozenset({"keys", "values", "items", "get", "copy", "setdefault", "pop", "update",
                         "clear", "move_to_end", "__getitem__", "__contains__"})

    def is_python_constant(self) -> bool:
        return self.cls is dict and all(v.is_python_constant() for v in self.items.values())

    def as_python_constant(self) -> Any:
        if not self.is_python_constant():
            return super().as_python_constant()
        return {k: v.as_python_constant() for k, v in self.items.items()}

    def __init__(self, items: Dict[Any, VariableTracker], source=None, cls: type = dict,
                 default_factory: Optional[VariableTracker] = None) -> None:
        super().__init__(source)
        self.items: Dict[Any, VariableTracker] = dict(items)
        self.cls = cls
        self.default_factory = default_factory

    def describe(self) -> str:
        return f"{self.cls.__name__} of {len(self.items)}"

    def python_type(self) -> type:
        return self.cls

    def truth(self, tx: Translator) -> bool:
        return bool(self.items)

    def length(self, tx: Translator) -> int:
        return len(self.items)

    def unpack(self, tx: Translator) -> List[VariableTracker]:
        return [ConstantVariable(k) for k in self.items]

    def contains(self, tx: Translator, item: VariableTracker) -> bool:
        return _const_key(item) in self.items

    def getitem(self, tx: Translator, key: VariableTracker) -> VariableTracker:
        k = _const_key(key)
        if k in self.items:
            return self.items[k]
        if self.default_factory is not None:
            _check_mutable(tx, self, "defaultdict missing-key insertion")
            value = self.default_factory.call(tx, [], {})
            self.items[k] = value
            return value
        tx.raise_python_exception(KeyError(k))

    def setitem(self, tx: Translator, key, value) -> None:
        _check_mutable(tx, self, "dict item assignment")
        self.items[_const_key(key)] = value

    def delitem(self, tx: Translator, key) -> None:
        _check_mutable(tx, self, "dict item deletion")
        k = _const_key(key)
        if k not in self.items:
            tx.raise_python_exception(KeyError(k))
        del self.items[k]

    def call_method(self, tx: Translator, name, args, kwargs) -> VariableTracker:
        if name == "keys" and not args:
            return DictViewVariable([ConstantVariable(k) for k in self.items], "keys")
        if name == "values" and not args:
            return DictViewVariable(list(self.items.values()), "values")
        if name == "items" and not args:
            return DictViewVariable([TupleVariable([ConstantVariable(k), v]) for k, v in self.items.items()],
                                    "items")
        if name == "get" and 1 <= len(args) <= 2:
            k = _const_key(args[0])
            if k in self.items:
                return self.items[k]
            return args[1] if len(args) == 2 else ConstantVariable(None)
        if name == "__getitem__" and len(args) == 1:
            return self.getitem(tx, args[0])
        if name == "__contains__" and len(args) == 1:
            return ConstantVariable(self.contains(tx, args[0]))
        if name == "copy" and not args:
            return DictVariable(self.items, cls=self.cls, default_factory=self.default_factory)
        if name == "setdefault" and 1 <= len(args) <= 2:
            k = _const_key(args[0])
            if k not in self.items:
                _check_mutable(tx, self, "dict.setdefault")
                self.items[k] = args[1] if len(args) == 2 else ConstantVariable(None)
            return self.items[k]
        if name == "pop" and 1 <= len(args) <= 2:
            k = _const_key(args[0])
            if k in self.items:
                _check_mutable(tx, self, "dict.pop")
                return self.items.pop(k)
            if len(args) == 2:
                return args[1]
            tx.raise_python_exception(KeyError(k))
        if name == "update":
            _check_mutable(tx, self, "dict.update")
            for arg in args:
                if isinstance(arg, DictVariable):
                    self.items.update(arg.items)
                else:
                    for pair in arg.unpack(tx):
                        key, value = pair.unpack(tx)
                        self.items[_const_key(key)] = value
            for key, value in kwargs.items():
                self.items[key] = value
            return ConstantVariable(None)
        if name == "clear" and not args:
            _check_mutable(tx, self, "dict.clear")
            self.items.clear()
            return ConstantVariable(None)
        if name == "move_to_end" and self.cls is collections.OrderedDict:
            _check_mutable(tx, self, "OrderedDict.move_to_end")
            k = _const_key(args[0])
            last = kwargs["last"].as_python_constant() if "last" in kwargs else (
                args[1].as_python_constant() if len(args) > 1 else True)
            value = self.items.pop(k)
            if last:
                self.items[k] = value
            else:
                self.items = {k: value, **self.items}
            return ConstantVariable(None)
        raise Unsupported(f"{self.cls.__name__}.{name}")

    def reconstruct(self, cg) -> str:
        if self.source is not None:
            return cg.source_expr(self.source)
        return cg.shared(self, lambda: self._rebuild(cg))

    def _rebuild(self, cg) -> str:
        body = "{" + ", ".join(f"{_key_expr(cg, k)}: {v.reconstruct(cg)}" for k, v in self.items.items()) + "}"
        if self.cls is dict:
            return body
        if self.cls is collections.defaultdict:
            factory = self.default_factory.reconstruct(cg) if self.default_factory is not None else "None"
            return f"{cg.const(self.cls)}({factory}, {body})"
        return f"{cg.const(self.cls)}({body})"


def _key_expr(cg, key: Any) -> str:
    return ConstantVariable(key).reconstruct(cg)


class DictViewVariable(BaseListVariable):
    """dict.keys() / values() / items(): iterable, but not rebuilt after the frame."""

    def __init__(self, items, kind: str) -> None:
        super().__init__(items)
        self.kind = kind

    def describe(self) -> str:
        return f"dict_{self.kind}"

    def python_type(self) -> type:
        return type(getattr({}, self.kind)())

    def is_python_constant(self) -> bool:
        return False

    def reconstruct(self, cg) -> str:
        raise Unsupported(f"returning a {self.describe()} view")


class SetVariable(_MethodsByName, VariableTracker):
    """set or frozenset of constants."""

    METHODS = frozenset({"add", "discard", "remove", "update", "clear", "difference_update",
                         "intersection_update", "union", "intersection", "difference",
                         "symmetric_difference", "issubset", "issuperset", "isdisjoint", "copy"})

    def __init__(self, values: set, cls: type = set, source=None) -> None:
        super().__init__(source)
        self.values = set(values)
        self.cls = cls

    def describe(self) -> str:
        return f"{self.cls.__name__} of {len(self.values)}"

    def python_type(self) -> type:
        return self.cls

    def truth(self, tx: Translator) -> bool:
        return bool(self.values)

    def length(self, tx: Translator) -> int:
        return len(self.values)

    def unpack(self, tx: Translator) -> List[VariableTracker]:
        return [ConstantVariable(v) for v in self.values]

    def contains(self, tx: Translator, item) -> bool:
        return _const_key(item) in self.values

    def is_python_constant(self) -> bool:
        return self.cls is frozenset

    def as_python_constant(self) -> Any:
        return self.cls(self.values)

    def call_method(self, tx: Translator, name, args, kwargs) -> VariableTracker:
        if name in ("add", "discard", "remove", "update", "clear", "difference_update",
                    "intersection_update"):
            _check_mutable(tx, self, f"set.{name}")
            if name == "add":
                self.values.add(_const_key(args[0]))
            elif name == "discard":
                self.values.discard(_const_key(args[0]))
            elif name == "remove":
                k = _const_key(args[0])
                if k not in self.values:
                    tx.raise_python_exception(KeyError(k))
                self.values.remove(k)
            elif name == "clear":
                self.values.clear()
            else:
                others = [set(_const_key(v) for v in a.unpack(tx)) for a in args]
                getattr(self.values, name)(*others)
            return ConstantVariable(None)
        if name in ("union", "intersection", "difference", "symmetric_difference", "issubset",
                    "issuperset", "isdisjoint", "copy"):
            others = [set(_const_key(v) for v in a.unpack(tx)) for a in args]
            result = getattr(self.values, name)(*others)
            if isinstance(result, (set, frozenset)):
                return SetVariable(result, self.cls)
            return ConstantVariable(result)
        raise Unsupported(f"set.{name}")

    def reconstruct(self, cg) -> str:
        if self.source is not None:
            return cg.source_expr(self.source)
        if self.cls is frozenset:
            return cg.const(frozenset(self.values))
        if not self.values:
            return cg.shared(self, lambda: "set()")
        return cg.shared(self, lambda: "{" + ", ".join(_key_expr(cg, v) for v in self.values) + "}")


class SliceVariable(VariableTracker):
    def __init__(self, parts: Sequence[VariableTracker]) -> None:
        super().__init__(None)
        self.parts = list(parts) + [ConstantVariable(None)] * (3 - len(parts))

    def describe(self) -> str:
        return "slice"

    def python_type(self) -> type:
        return slice

    def is_python_constant(self) -> bool:
        return all_constant(self.parts)

    def as_python_constant(self) -> Any:
        return slice(*constants_of(self.parts))

    def reconstruct(self, cg) -> str:
        return f"slice({', '.join(p.reconstruct(cg) for p in self.parts)})"


class IteratorVariable(VariableTracker):
    """An iterator over a static sequence of trackers (list/range/zip/enumerate/...)."""

    def __init__(self, items: Sequence[VariableTracker], kind: str = "iterator") -> None:
        super().__init__(None)
        self.items = list(items)
        self.pos = 0
        self.kind = kind

    def describe(self) -> str:
        return self.kind

    def next(self, tx: Translator) -> Optional[VariableTracker]:
        """The next item, or None when exhausted."""
        if self.pos >= len(self.items):
            return None
        item = self.items[self.pos]
        self.pos += 1
        return item

    def unpack(self, tx: Translator) -> List[VariableTracker]:
        rest = self.items[self.pos:]
        self.pos = len(self.items)
        return rest

    def truth(self, tx: Translator) -> bool:
        return True

    def reconstruct(self, cg) -> str:
        if self.kind == "generator":
            # A generator was traced eagerly; a plain iterator would not have its methods.
            raise Unsupported(f"returning (or keeping across a graph break) a live {self.kind}")
        # The rest of a loop after a graph break iterates over the items still to come.
        rest = ", ".join(item.reconstruct(cg) for item in self.items[self.pos:])
        return f"iter(({rest}{',' if len(self.items) - self.pos == 1 else ''}))"
