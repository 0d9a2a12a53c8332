"""Lists, tuples, namedtuples, dicts (plain, OrderedDict, defaultdict), sets, slices, iterators.

Containers made by the traced code are mutable trackers, changed in place as
the program runs.  Containers that came from outside (an argument, a global)
carry a Source; mutating them would be a side effect the caller can see, so
it is Unsupported until side-effect replay exists (issue 4).
"""
from __future__ import annotations

import collections
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..exc import Unsupported
from ..side_effects import replay_dict_changes
from .base import Translator, VariableTracker, all_constant, constants_of
from .constant import ConstantVariable


def _check_mutable(tx: Translator, var: VariableTracker, what: str) -> None:
    """Every in-place change of a tracked container goes through here: containers from
    outside are recorded so that the cache entry replays their final content."""
    tx.output.note_mutation(var, what)
    if var.source is not None:
        tx.output.side_effects.note_container(var)


def _same_item(existing: VariableTracker, item: VariableTracker) -> Optional[bool]:
    """``existing is item or existing == item`` as ``in``, ``index`` and ``count`` compare
    (identity first, so a NaN finds itself); None where the tracer cannot tell."""
    if existing is item:
        return True
    if existing.is_python_constant() and item.is_python_constant():
        a, b = existing.as_python_constant(), item.as_python_constant()
        return a is b or bool(a == b)
    return None


def holds_itself(var: VariableTracker) -> bool:
    """Whether a container made by the trace can reach itself through its contents (items,
    dict values, object attributes): it must then be rebuilt empty first, then filled."""
    seen = set()
    frontier = list(_children(var))
    while frontier:
        child = frontier.pop()
        if child is var:
            return True
        if id(child) in seen or child.source is not None:
            continue
        seen.add(id(child))
        frontier.extend(_children(child))
    return False


def _children(var: VariableTracker) -> List[VariableTracker]:
    """The trackers a rebuilt ``var`` holds: items, dict values, attributes, the dict behind
    a view, the sequence behind an iterator, a function's cells."""
    found: List[VariableTracker] = []
    items = getattr(var, "items", None)
    if isinstance(items, dict):
        found += items.values()
    elif isinstance(items, list):
        found += items
    attrs = getattr(var, "attrs", None)
    if isinstance(attrs, dict):
        found += attrs.values()
    for name in ("owner", "seq", "inner", "contents"):
        child = getattr(var, name, None)
        if isinstance(child, VariableTracker):
            found.append(child)
    found += [c for c in getattr(var, "_closure", None) or () if isinstance(c, VariableTracker)]
    return found


def sort_trackers(tx: Translator, items: List[VariableTracker], kwargs: Dict[str, VariableTracker]) -> None:
    """Sort ``items`` (constant trackers) in place as ``list.sort(**kwargs)`` sorts their values:
    the trackers themselves move, so each item keeps its object (``sorted`` of tuples gives the
    tuples it was given, which ``is`` sees: CPython's test_sort), with CPython's checks of the
    options and its errors from the comparisons."""
    options = {k: v.as_python_constant() for k, v in kwargs.items()}
    key = options.pop("key", None)
    tx.run_constant(list.sort, [[]], dict(options, key=key))
    by_value = (lambda t: key(t.as_python_constant())) if key is not None else \
        (lambda t: t.as_python_constant())
    tx.run_constant(items.sort, [], dict(options, key=by_value))


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
            return _BoundHelper(lambda tx_, *args, **kwargs: self.call_method(tx_, name, list(args), kwargs),
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
            kind = "tuple" if issubclass(self.python_type(), tuple) else "list"
            tx.raise_python_exception(IndexError(f"{kind} index out of range"))
        if isinstance(index, slice):
            return self.similar(picked)
        return picked

    def similar(self, items: Sequence[VariableTracker]) -> "BaseListVariable":
        return type(self)(items)

    def contains(self, tx: Translator, item: VariableTracker) -> bool:
        for existing in self.items:
            same = _same_item(existing, item)
            if same is None:
                raise Unsupported(f"`in` test of {item.describe()} against {existing.describe()}")
            if same:
                return True
        return False

    def call_method(self, tx: Translator, name, args, kwargs) -> VariableTracker:
        if name in ("index", "count") and not kwargs and args:
            # Run the real method on the constants, so that arguments, messages and the
            # comparison (identity, then ==) are CPython's; trackers only where identity decides.
            if all_constant(args) and all_constant(self.items):
                real = self.python_type()(constants_of(self.items)) if self.python_type() in (list, tuple) \
                    else list(constants_of(self.items))
                value = tx.run_constant(getattr(type(real), name), [real] + constants_of(args), {})
                return ConstantVariable(value)
            if len(args) == 1:
                hits = []
                for i, existing in enumerate(self.items):
                    same = _same_item(existing, args[0])
                    if same is None:
                        raise Unsupported(f"{name}() of {args[0].describe()} in {self.describe()}")
                    if same:
                        hits.append(i)
                        if name == "index":
                            return ConstantVariable(i)
                if name == "count":
                    return ConstantVariable(len(hits))
                raise Unsupported(f"index() of {args[0].describe()}, not found (the message needs its repr)")
        return super().call_method(tx, name, args, kwargs)

    def reconstruct(self, cg) -> str:
        if self.source is not None:
            return cg.source_expr(self.source)
        kind = self.python_type()
        if len(self.items) > 16 and kind in (list, tuple) and \
                all(type(i) is ConstantVariable and i.source is None for i in self.items):
            # Many constants: one namespace value instead of a literal the entry's source must
            # spell out and compile (a fresh list is still made on every call).
            values = cg.const(tuple(i.value for i in self.items))
            return cg.shared(self, lambda: f"list({values})" if kind is list else values)
        if kind is not list and holds_itself(self):
            raise Unsupported(f"a {kind.__name__} that holds itself through its items cannot be rebuilt")
        if kind is list and holds_itself(self):
            return cg.shared_filled(self, lambda: "[]", lambda name: f"{name}.extend(["
                                    + ", ".join(item.reconstruct(cg) for item in self.items) + "])")
        return cg.shared(self, lambda: self._reconstruct_items(cg, [item.reconstruct(cg) for item in self.items]))

    def _reconstruct_items(self, cg, parts: List[str]) -> str:
        raise NotImplementedError


class TupleVariable(BaseListVariable):
    def __init__(self, items: Sequence[VariableTracker], source=None, origin: Optional[tuple] = None) -> None:
        super().__init__(items, source)
        # The real tuple this tracker stands for, when it was made from one at trace time (a
        # constant, a folded result): rebuilt as that object, so identity is kept.
        self.origin = origin

    def reconstruct(self, cg) -> str:
        if self.source is None and self.origin is not None:
            return cg.const(self.origin)
        return super().reconstruct(cg)

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
        index = key.as_python_constant() if key.is_python_constant() else None
        if isinstance(key, SliceVariable):
            index = key.as_python_constant()
        if not isinstance(index, (int, slice)) or isinstance(index, bool):
            raise Unsupported(f"list item assignment with index {key.describe()}")
        _check_mutable(tx, self, "list item assignment")
        new = value.unpack(tx) if isinstance(index, slice) else value
        # The real assignment on the list of trackers: CPython's errors, messages and
        # extended-slice rules.
        tx.run_constant(list.__setitem__, [self.items, index, new], {})

    def delitem(self, tx: Translator, key) -> None:
        index = key.as_python_constant() if key.is_python_constant() else None
        if isinstance(key, SliceVariable):
            index = key.as_python_constant()
        if not isinstance(index, (int, slice)) or isinstance(index, bool):
            raise Unsupported(f"list item deletion with index {key.describe()}")
        _check_mutable(tx, self, "list item deletion")
        tx.run_constant(list.__delitem__, [self.items, index], {})

    # Methods that only move items: run for real on the list of trackers (CPython's own
    # argument checks, errors and messages), their constant arguments passed as they are.
    _STRUCTURAL = {"insert": (1, 2), "pop": (0, 1), "reverse": (0, 0), "clear": (0, 0)}

    def call_method(self, tx: Translator, name, args, kwargs) -> VariableTracker:
        if kwargs and name != "sort":
            raise Unsupported(f"list.{name} with keyword arguments")
        if name == "append" and len(args) == 1:
            _check_mutable(tx, self, "list.append")
            self.items.append(args[0])
            return ConstantVariable(None)
        if name == "extend" and len(args) == 1:
            new = args[0].unpack(tx)  # before the change: x.extend(x) reads x once
            _check_mutable(tx, self, "list.extend")
            self.items.extend(new)
            return ConstantVariable(None)
        if name in self._STRUCTURAL:
            low, high = self._STRUCTURAL[name]
            # Only the index arguments must be constants; insert's item stays a tracker.
            if not low <= len(args) <= high or not all(a.is_python_constant() for a in args[:1 if name != "pop"
                                                                                              else len(args)]):
                raise Unsupported(f"list.{name} with these arguments")
            plain = [a.as_python_constant() for a in args[:1]] + list(args[1:]) if name == "insert" \
                else constants_of(args)
            _check_mutable(tx, self, f"list.{name}")
            result = tx.run_constant(getattr(list, name), [self.items] + plain, {})
            return result if name == "pop" else ConstantVariable(None)
        if name == "copy" and not args:
            return ListVariable(self.items)
        if name == "sort" and not args:
            if not all_constant(self.items) or not all_constant(list(kwargs.values())):
                raise Unsupported("list.sort of non-constant items (or with a traced key function)")
            _check_mutable(tx, self, "list.sort")
            sort_trackers(tx, self.items, kwargs)
            return ConstantVariable(None)
        return super().call_method(tx, name, args, kwargs)

    def inplace_repeat(self, tx: Translator, count: VariableTracker) -> VariableTracker:
        """``self *= count``: the same list, its items repeated (CPython's list.__imul__)."""
        if not count.is_python_constant():
            raise Unsupported(f"list *= {count.describe()}")
        _check_mutable(tx, self, "list *=")
        tx.run_constant(list.__imul__, [self.items, count.as_python_constant()], {})
        return self

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
            return _BoundHelper(lambda tx_: DictVariable(dict(zip(fields, self.items))))
        if name == "_replace":
            def replace(tx_, **kw):
                items = list(self.items)
                for key, value in kw.items():
                    items[fields.index(key)] = value
                return NamedTupleVariable(items, self.cls)
            return _BoundHelper(replace)
        return super().getattr(tx, name)

    def _reconstruct_items(self, cg, parts: List[str]) -> str:
        return f"{cg.const(self.cls)}({', '.join(parts)})"


class _BoundHelper(VariableTracker):
    """A method of a tracked container implemented by a Python callable over trackers:
    ``fn(tx, *args, **kwargs)``.  The translator is passed at the call, never captured: a
    tracker on the translator's stack that holds the translator is a reference cycle, and
    the trace's values would live until the next garbage collection."""

    def __init__(self, fn, owner: Optional[VariableTracker] = None, name: str = "") -> None:
        super().__init__(None)
        self.fn = fn
        self.owner = owner
        self.name = name

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        return self.fn(tx, *args, **kwargs)

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
        return False  # mutable: never folded into a copy (identity, in-place operators)

    def as_python_constant(self) -> Any:
        return super().as_python_constant()

    def __init__(self, items: Dict[Any, VariableTracker], source=None, cls: type = dict,
                 default_factory: Optional[VariableTracker] = None) -> None:
        super().__init__(source)
        self.items: Dict[Any, VariableTracker] = dict(items)
        self.cls = cls
        self.default_factory = default_factory
        # Bumped whenever a key is added, removed or moved: iterators over the dict check it.
        self.key_version = 0
        # A dict from outside (the builder sets ``initial``) records its changes in order:
        # ("set", key, value), ("del", key), ("clear",), ("move", key, last).  Where keys went
        # or moved, the entry replays them one by one (compiler.side_effects): a key deleted
        # and set again moves to the end of the dict's entry table, which a live iterator over
        # it sees ("dictionary keys changed during iteration") and a rebuild would not show.
        self.changes: List[Tuple[Any, ...]] = []
        # A dict made by the traced code keeps what shaped its entry table: keys added, deleted,
        # cleared or moved (each bumps key_version), not values replaced.  Where keys went, its
        # rebuild replays that (compiler.side_effects.replay_dict_changes): a reversed iterator made before a clear
        # keeps its position in the table, and a compact rebuild would let it see keys added
        # after (CPython's test_dict.test_reversed_dict_after_clear_and_restore).
        self.layout: List[Tuple[Any, ...]] = [("set", k) for k in self.items] if source is None else []
        self._layout_version = self.key_version

    def _changed(self, *change: Any) -> None:
        if self.source is not None:
            self.changes.append(change)
        elif self.key_version != self._layout_version:
            self._layout_version = self.key_version
            self.layout.append(change[:2] if change[0] == "set" else change)

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
            value = self.default_factory.call(tx, [], {})
            _check_mutable(tx, self, "defaultdict missing-key insertion")
            self.items[k] = value
            self.key_version += 1
            self._changed("set", k, value)
            return value
        tx.raise_python_exception(KeyError(k))

    def setitem(self, tx: Translator, key, value) -> None:
        k = _const_key(key)
        _check_mutable(tx, self, "dict item assignment")
        if k not in self.items:
            self.key_version += 1
        self.items[k] = value
        self._changed("set", k, value)

    def delitem(self, tx: Translator, key) -> None:
        _check_mutable(tx, self, "dict item deletion")
        k = _const_key(key)
        if k not in self.items:
            tx.raise_python_exception(KeyError(k))
        del self.items[k]
        self.key_version += 1
        self._changed("del", k)

    def call_method(self, tx: Translator, name, args, kwargs) -> VariableTracker:
        if kwargs and name != "update":
            # dict's methods take no keywords, OrderedDict's some (setdefault(default=)):
            # the native call answers exactly.
            raise Unsupported(f"{self.cls.__name__}.{name} with keyword arguments")
        if name in ("keys", "values", "items") and not args and not kwargs:
            return DictViewVariable(self, name)
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
                self.key_version += 1
                self._changed("set", k, self.items[k])
            return self.items[k]
        if name == "pop" and 1 <= len(args) <= 2:
            k = _const_key(args[0])
            if k in self.items:
                _check_mutable(tx, self, "dict.pop")
                self.key_version += 1
                self._changed("del", k)
                return self.items.pop(k)
            if len(args) == 2:
                return args[1]
            tx.raise_python_exception(KeyError(k))
        if name == "update":
            if len(args) > 1:
                tx.raise_python_exception(TypeError(f"update expected at most 1 argument, got {len(args)}"))
            new: List[Any] = []
            for arg in args:
                if isinstance(arg, DictVariable):
                    new.extend(arg.items.items())
                else:
                    for pair in arg.unpack(tx):
                        if not isinstance(pair, BaseListVariable) or len(pair.items) != 2:
                            raise Unsupported(f"dict.update from {pair.describe()} (not a pair)")
                        key, value = pair.unpack(tx)
                        new.append((_const_key(key), value))
            new.extend(kwargs.items())
            _check_mutable(tx, self, "dict.update")
            for key, value in new:
                if key not in self.items:
                    self.key_version += 1
                self.items[key] = value
                self._changed("set", key, value)
            return ConstantVariable(None)
        if name == "clear" and not args:
            _check_mutable(tx, self, "dict.clear")
            self.items.clear()
            self.key_version += 1
            self._changed("clear")
            return ConstantVariable(None)
        if name == "move_to_end" and self.cls is collections.OrderedDict:
            _check_mutable(tx, self, "OrderedDict.move_to_end")
            if len(args) != 1 or set(kwargs) - {"last"}:
                raise Unsupported("OrderedDict.move_to_end with these arguments")
            k = _const_key(args[0])
            if k not in self.items:
                tx.raise_python_exception(KeyError(k))
            self.key_version += 1
            last = kwargs["last"].as_python_constant() if "last" in kwargs else (
                args[1].as_python_constant() if len(args) > 1 else True)
            value = self.items.pop(k)
            if last:
                self.items[k] = value
            else:
                self.items = {k: value, **self.items}
            self._changed("move", k, bool(last))
            return ConstantVariable(None)
        raise Unsupported(f"{self.cls.__name__}.{name}")

    def reconstruct(self, cg) -> str:
        if self.source is not None:
            return cg.source_expr(self.source)
        if holds_itself(self):
            return cg.shared_filled(self, lambda: self._rebuild_empty(cg), lambda name: f"{name}.update({{"
                                    + ", ".join(f"{_key_expr(cg, k)}: {v.reconstruct(cg)}"
                                                for k, v in self.items.items()) + "})")
        if any(change[0] != "set" for change in self.layout):
            # Each set takes the key's final value (a key that does not stay holds None while
            # it is there): only the entry table's shape is the program's.
            values = "".join((self.items[c[1]].reconstruct(cg) if c[1] in self.items else "None") + ", "
                             for c in self.layout if c[0] == "set")
            return cg.shared_filled(self, lambda: self._rebuild_empty(cg), lambda name: (
                f"{cg.const(replay_dict_changes)}({name}, {cg.const(tuple(self.layout))}, ({values}))"))
        return cg.shared(self, lambda: self._rebuild(cg))

    def _rebuild_empty(self, cg) -> str:
        if self.cls is collections.defaultdict:
            factory = self.default_factory.reconstruct(cg) if self.default_factory is not None else "None"
            return f"{cg.const(self.cls)}({factory})"
        return f"{cg.const(self.cls)}()"

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


class DictViewVariable(VariableTracker):
    """``d.keys()`` / ``values()`` / ``items()``: a live view of the dict tracker ``owner``
    (a change of the dict shows in the view, as in Python)."""

    def __init__(self, owner: DictVariable, view: str) -> None:
        super().__init__(None)
        self.owner = owner
        self.view = view

    def describe(self) -> str:
        return f"dict_{self.view}"

    def python_type(self) -> type:
        return type(getattr(self.owner.python_type()(), self.view)())

    def truth(self, tx: Translator) -> bool:
        return bool(self.owner.items)

    def length(self, tx: Translator) -> int:
        return len(self.owner.items)

    def current(self) -> List[VariableTracker]:
        owner = self.owner
        if self.view == "keys":
            return [ConstantVariable(k) for k in owner.items]
        if self.view == "values":
            return list(owner.items.values())
        return [TupleVariable([ConstantVariable(k), v]) for k, v in owner.items.items()]

    def unpack(self, tx: Translator) -> List[VariableTracker]:
        return self.current()

    def contains(self, tx: Translator, item: VariableTracker) -> bool:
        if self.view == "keys":
            return self.owner.contains(tx, item)
        for existing in self.current():
            same = _same_item(existing, item)
            if same is None:
                raise Unsupported(f"`in` test of {item.describe()} against a dict_{self.view} view")
            if same:
                return True
        return False

    def reconstruct(self, cg) -> str:
        return cg.shared(self, lambda: f"{self.owner.reconstruct(cg)}.{self.view}()")


class SetVariable(_MethodsByName, VariableTracker):
    """set or frozenset of constants."""

    METHODS = frozenset({"add", "discard", "remove", "update", "clear", "difference_update",
                         "intersection_update", "union", "intersection", "difference",
                         "symmetric_difference", "issubset", "issuperset", "isdisjoint", "copy",
                         "symmetric_difference_update"})
    # Positional arguments each method takes (others: any number of iterables).
    _ARITY = {"add": 1, "discard": 1, "remove": 1, "clear": 0, "copy": 0, "issubset": 1, "issuperset": 1,
              "isdisjoint": 1, "symmetric_difference": 1, "symmetric_difference_update": 1}

    def __init__(self, values: set, cls: type = set, source=None) -> None:
        super().__init__(source)
        self.values = set(values)
        self.cls = cls
        self.key_version = 0  # bumped by every change: iterators over the set check it

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

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        if not hasattr(self.cls, name):
            tx.raise_python_exception(AttributeError(f"{self.cls.__name__!r} object has no attribute {name!r}"))
        return super().getattr(tx, name)

    def call_method(self, tx: Translator, name, args, kwargs) -> VariableTracker:
        if kwargs or self._ARITY.get(name, len(args)) != len(args):
            raise Unsupported(f"set.{name} with these arguments (the native call raises CPython's error)")
        if name == "symmetric_difference_update" and len(args) == 1:
            other = {_const_key(v) for v in args[0].unpack(tx)}
            _check_mutable(tx, self, "set.symmetric_difference_update")
            self.key_version += 1
            self.values.symmetric_difference_update(other)
            return ConstantVariable(None)
        if name in ("add", "discard", "remove", "update", "clear", "difference_update",
                    "intersection_update"):
            _check_mutable(tx, self, f"set.{name}")
            self.key_version += 1
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
        # One object however many places hold it (s is copy.copy(s) for a slice).
        return cg.shared(self, lambda: f"slice({', '.join(p.reconstruct(cg) for p in self.parts)})")
