"""Iterators made by the traced code, stepped lazily as Python steps them.

Python's iterators are lazy and live: a list iterator reads the list's length
at every step (a loop that appends to the list it walks sees the new items),
``map`` calls its function when an item is asked for, a dict iterator notices
the dict changing size, and an exhausted list iterator stays exhausted.  Each
tracker here keeps exactly that behaviour by stepping the tracker it iterates
when ``next`` is called, never by taking a snapshot when it is made.

An iterator that outlives the trace (returned, stored, or live across a graph
break) is rebuilt as the same kind of object at the same position: ``iter(seq)``
moved on with ``__setstate__`` (list, tuple, range, str and bytes iterators
support it), ``enumerate``/``zip``/``map``/``filter`` around the rebuilt inner
iterators.  What cannot be rebuilt that way (a generator traced eagerly, a dict
iterator whose dict changed) is ``Unsupported``: the frame breaks or runs
natively.
"""
from __future__ import annotations

from typing import Any, List, Optional, Sequence

import numpy as np

from .. import config
from ..exc import Unsupported
from .array import ArrayVariable
from .base import Translator, VariableTracker
from .constant import ConstantVariable
from .containers import (BaseListVariable, DictVariable, DictViewVariable, ListVariable, SetVariable,
                         TupleVariable)


def positioned(iterator: Any, steps: int) -> Any:
    """``iterator`` moved ``steps`` items on, without reading items where the iterator
    can be positioned directly (the entry code rebuilds a live iterator with this)."""
    if steps and hasattr(iterator, "__setstate__"):
        iterator.__setstate__(steps)
        return iterator
    for _ in range(steps):
        next(iterator)
    return iterator


def exhausted(iterator: Any) -> Any:
    """``iterator`` run to its end: an exhausted list iterator stays exhausted even if the
    list grows afterwards, which a positioned one would not."""
    for _ in iterator:
        pass
    return iterator


class IteratorVariable(VariableTracker):
    """An iterator made by the traced code.  ``next`` returns the next item's tracker,
    or None when the iterator is exhausted (items are never None: None is a
    ConstantVariable)."""

    kind = "iterator"

    def __init__(self) -> None:
        super().__init__(None)

    def describe(self) -> str:
        return self.kind

    def next(self, tx: Translator) -> Optional[VariableTracker]:
        raise NotImplementedError

    def unpack(self, tx: Translator) -> List[VariableTracker]:
        items = []
        while True:
            item = self.next(tx)
            if item is None:
                return items
            items.append(item)
            if len(items) > config.max_container_items:
                raise Unsupported(f"iteration of {self.describe()} beyond {config.max_container_items} "
                                  "items (compiler.config.max_container_items)")

    def truth(self, tx: Translator) -> bool:
        return True  # iterators define neither __bool__ nor __len__

    def length(self, tx: Translator) -> int:
        tx.raise_python_exception(TypeError(f"object of type {self.python_type().__name__!r} has no len()"))

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        raise Unsupported(f"attribute {name!r} of a {self.describe()} made by the traced code")


class SequenceIterator(IteratorVariable):
    """``iter(seq)`` or ``reversed(seq)`` of a list or tuple tracker: reads the sequence
    at each step, as list_iterator and list_reverseiterator do."""

    def __init__(self, seq: VariableTracker, reverse: bool = False) -> None:
        super().__init__()
        self.seq = seq
        self.reverse = reverse
        self.index = len(seq.items) - 1 if reverse else 0  # type: ignore[attr-defined]
        self.done = False
        self.steps = 0

    @property
    def kind(self) -> str:  # type: ignore[override]
        return self.python_type().__name__

    def python_type(self) -> type:
        base = self.seq.python_type()
        if self.reverse:
            return type(reversed([])) if issubclass(base, list) else reversed
        return type(iter([])) if issubclass(base, list) else type(iter(()))

    def next(self, tx: Translator) -> Optional[VariableTracker]:
        if self.done:
            return None
        items = self.seq.items  # type: ignore[attr-defined]
        if 0 <= self.index < len(items):
            item = items[self.index]
            self.index += -1 if self.reverse else 1
            self.steps += 1
            return item
        self.done = True
        return None

    def reconstruct(self, cg) -> str:
        def build() -> str:
            seq = self.seq.reconstruct(cg)
            made = f"{'reversed' if self.reverse else 'iter'}({seq})"
            if self.done:
                return f"{cg.const(exhausted)}({made})"
            if self.reverse:
                return f"{cg.const(_reversed_at)}({made}, {self.index})"
            return f"{cg.const(positioned)}({made}, {self.index})"
        return cg.shared(self, build)


def _reversed_at(iterator: Any, index: int) -> Any:
    iterator.__setstate__(index)
    return iterator


class ConstantIterator(IteratorVariable):
    """An iterator over an immutable constant (str, bytes, range, tuple, frozenset): the
    real iterator, stepped at trace time (the value cannot change)."""

    def __init__(self, value: Any) -> None:
        super().__init__()
        self.value = value
        self.iterator = iter(value)
        self.steps = 0
        self.done = False

    @property
    def kind(self) -> str:  # type: ignore[override]
        return type(self.iterator).__name__

    def python_type(self) -> type:
        return type(self.iterator)

    def next(self, tx: Translator) -> Optional[VariableTracker]:
        if self.done:
            return None
        try:
            item = next(self.iterator)
        except StopIteration:
            self.done = True
            return None
        self.steps += 1
        return ConstantVariable(item)

    def reconstruct(self, cg) -> str:
        def build() -> str:
            made = f"iter({cg.const(self.value)})"
            if self.done:
                return f"{cg.const(exhausted)}({made})"
            return f"{cg.const(positioned)}({made}, {self.steps})"
        return cg.shared(self, build)


class DictIterator(IteratorVariable):
    """``iter(d)``, ``iter(d.keys() / values() / items())``: the keys as they were when the
    iterator was made; values read at each step.  A dict whose keys change while it is
    iterated raises what CPython raises when its size changed; other key changes (same size,
    or an OrderedDict) are Unsupported, so that the native run raises its own error."""

    def __init__(self, owner: VariableTracker, view: str) -> None:
        super().__init__()
        self.owner = owner
        self.view = view
        self.keys = list(owner.items)  # type: ignore[attr-defined]
        self.size = len(self.keys)
        self.key_version = owner.key_version  # type: ignore[attr-defined]
        self.steps = 0

    @property
    def kind(self) -> str:  # type: ignore[override]
        return self.python_type().__name__

    def python_type(self) -> type:
        made = self.owner.python_type()()  # dict, OrderedDict or defaultdict
        return type(iter(getattr(made, self.view)()))

    def _check_unchanged(self, tx: Translator) -> None:
        owner = self.owner
        if owner.key_version == self.key_version:  # type: ignore[attr-defined]
            return
        if not hasattr(owner.python_type(), "move_to_end") and \
                len(owner.items) != self.size:  # type: ignore[attr-defined]
            tx.raise_python_exception(RuntimeError("dictionary changed size during iteration"))
        raise Unsupported(f"the keys of a {owner.describe()} changed while it was iterated")

    def next(self, tx: Translator) -> Optional[VariableTracker]:
        self._check_unchanged(tx)
        if self.steps >= len(self.keys):
            return None
        key = self.keys[self.steps]
        self.steps += 1
        if self.view == "keys":
            return ConstantVariable(key)
        value = self.owner.items[key]  # type: ignore[attr-defined]
        if self.view == "values":
            return value
        return TupleVariable([ConstantVariable(key), value])

    def reconstruct(self, cg) -> str:
        if self.owner.key_version != self.key_version:  # type: ignore[attr-defined]
            raise Unsupported(f"a live iterator over a {self.owner.describe()} whose keys changed")
        return cg.shared(self, lambda: f"{cg.const(positioned)}(iter({self.owner.reconstruct(cg)}."
                                       f"{self.view}()), {self.steps})")


class SetIterator(IteratorVariable):
    """``iter(s)`` of a set tracker: its elements in the set's own order."""

    def __init__(self, owner: VariableTracker) -> None:
        super().__init__()
        self.owner = owner
        self.values = list(owner.values)  # type: ignore[attr-defined]
        self.version = owner.key_version  # type: ignore[attr-defined]
        self.steps = 0

    kind = "set_iterator"

    def python_type(self) -> type:
        return type(iter(set()))

    def next(self, tx: Translator) -> Optional[VariableTracker]:
        owner = self.owner
        if owner.key_version != self.version:  # type: ignore[attr-defined]
            if len(owner.values) != len(self.values):  # type: ignore[attr-defined]
                tx.raise_python_exception(RuntimeError("Set changed size during iteration"))
            raise Unsupported("a set changed while it was iterated")
        if self.steps >= len(self.values):
            return None
        self.steps += 1
        return ConstantVariable(self.values[self.steps - 1])

    def reconstruct(self, cg) -> str:
        if self.owner.key_version != self.version:  # type: ignore[attr-defined]
            raise Unsupported("a live iterator over a set that changed")
        return cg.shared(self, lambda: f"{cg.const(positioned)}(iter({self.owner.reconstruct(cg)}), {self.steps})")


class ArrayIterator(IteratorVariable):
    """``iter(a)`` of an array tracker: row ``i`` is taken when it is asked for, so that
    writes made by the loop body before that are seen, as in NumPy."""

    kind = "iterator"

    def __init__(self, array: VariableTracker, length: int) -> None:
        super().__init__()
        self.array = array
        self.n = length
        self.steps = 0

    def python_type(self) -> type:
        return type(iter(np.zeros(1)))

    def next(self, tx: Translator) -> Optional[VariableTracker]:
        if self.steps >= self.n:
            return None
        self.steps += 1
        return self.array.getitem(tx, ConstantVariable(self.steps - 1))

    def reconstruct(self, cg) -> str:
        return cg.shared(self, lambda: f"{cg.const(positioned)}(iter({self.array.reconstruct(cg)}), {self.steps})")


class EnumerateIterator(IteratorVariable):
    kind = "enumerate"

    def __init__(self, inner: IteratorVariable, start: int) -> None:
        super().__init__()
        self.inner = inner
        self.count = start

    def python_type(self) -> type:
        return enumerate

    def next(self, tx: Translator) -> Optional[VariableTracker]:
        item = self.inner.next(tx)
        if item is None:
            return None
        pair = TupleVariable([ConstantVariable(self.count), item])
        self.count += 1
        return pair

    def reconstruct(self, cg) -> str:
        return cg.shared(self, lambda: f"enumerate({self.inner.reconstruct(cg)}, {self.count!r})")


class ZipIterator(IteratorVariable):
    """``zip(*iterables)``: stops at the first exhausted iterator, having taken items from the
    ones before it (as CPython does).  A ``strict=True`` length mismatch is Unsupported, so
    the native run raises CPython's own message."""

    kind = "zip"

    def __init__(self, inners: Sequence[IteratorVariable], strict: bool) -> None:
        super().__init__()
        self.inners = list(inners)
        self.strict = strict

    def python_type(self) -> type:
        return zip

    def next(self, tx: Translator) -> Optional[VariableTracker]:
        if not self.inners:
            return None
        items = []
        for position, inner in enumerate(self.inners):
            item = inner.next(tx)
            if item is None:
                if self.strict:
                    rest = [other.next(tx) for other in self.inners[position + 1:]] if position == 0 else [0]
                    if position or any(r is not None for r in rest):
                        raise Unsupported("zip(strict=True) over iterables of different lengths")
                return None
            items.append(item)
        return TupleVariable(items)

    def reconstruct(self, cg) -> str:
        def build() -> str:
            parts = ", ".join(i.reconstruct(cg) for i in self.inners)
            return f"zip({parts}{', strict=True' if self.strict else ''})"
        return cg.shared(self, build)


class MapIterator(IteratorVariable):
    """``map(fn, *iterables)``: ``fn`` is called when an item is asked for."""

    kind = "map"

    def __init__(self, fn: VariableTracker, inners: Sequence[IteratorVariable]) -> None:
        super().__init__()
        self.fn = fn
        self.inners = list(inners)

    def python_type(self) -> type:
        return map

    def next(self, tx: Translator) -> Optional[VariableTracker]:
        args = []
        for inner in self.inners:
            item = inner.next(tx)
            if item is None:
                return None
            args.append(item)
        return self.fn.call(tx, args, {})

    def reconstruct(self, cg) -> str:
        return cg.shared(self, lambda: f"map({self.fn.reconstruct(cg)}, "
                                       f"{', '.join(i.reconstruct(cg) for i in self.inners)})")


class FilterIterator(IteratorVariable):
    """``filter(fn or None, iterable)``: the test runs when an item is asked for."""

    kind = "filter"

    def __init__(self, fn: Optional[VariableTracker], inner: IteratorVariable) -> None:
        super().__init__()
        self.fn = fn
        self.inner = inner

    def python_type(self) -> type:
        return filter

    def next(self, tx: Translator) -> Optional[VariableTracker]:
        while True:
            item = self.inner.next(tx)
            if item is None:
                return None
            test = item if self.fn is None else self.fn.call(tx, [item], {})
            if test.truth(tx):
                return item

    def reconstruct(self, cg) -> str:
        fn = "None" if self.fn is None else self.fn.reconstruct(cg)
        return cg.shared(self, lambda: f"filter({fn}, {self.inner.reconstruct(cg)})")


class GeneratorIterator(IteratorVariable):
    """A generator of the traced program, run to its end when it was called (generators
    are traced eagerly; compiler.output_graph.note_mutation refuses programs where that
    would be visible).  It cannot be rebuilt: a live one ends the trace (Unsupported)."""

    kind = "generator"

    def __init__(self, items: Sequence[VariableTracker], returned: Optional[VariableTracker] = None,
                 body_changes: Optional[set] = None) -> None:
        super().__init__()
        self.items = list(items)
        self.pos = 0
        # Exhausted once a step found no item: only then has plain Python run the whole body
        # (the part after the last yield included).
        self.exhausted = False
        # Serials of objects from outside the trace that the body changed.
        self.body_changes = body_changes or set()
        # What the generator returned (StopIteration.value: ``yield from`` delegating to it
        # evaluates to this); None for ``return`` without a value.
        self.returned = returned

    def python_type(self) -> type:
        return type((lambda: (yield))())

    def next(self, tx: Translator) -> Optional[VariableTracker]:
        if self.pos >= len(self.items):
            self.exhausted = True
            return None
        self.pos += 1
        return self.items[self.pos - 1]

    def reconstruct(self, cg) -> str:
        raise Unsupported("returning (or keeping across a graph break) a live generator")


def iter_of(tx: Translator, value: VariableTracker) -> IteratorVariable:
    """``iter(value)`` for a tracker: the iterator Python would make, stepped lazily."""
    if isinstance(value, IteratorVariable):
        return value
    if isinstance(value, DictViewVariable):
        return DictIterator(value.owner, value.view)
    if isinstance(value, DictVariable):
        return DictIterator(value, "keys")
    if isinstance(value, SetVariable):
        return SetIterator(value)
    if isinstance(value, BaseListVariable):
        return SequenceIterator(value)
    if isinstance(value, ArrayVariable):
        return ArrayIterator(value, value.length(tx))
    if value.is_python_constant():
        constant = value.as_python_constant()
        if isinstance(constant, (str, bytes, range, tuple, frozenset)):
            return ConstantIterator(constant)
    raise Unsupported(f"iteration over {value.describe()}")


def reversed_of(tx: Translator, value: VariableTracker) -> IteratorVariable:
    """``reversed(value)`` where the tracer knows what CPython does; Unsupported elsewhere."""
    if isinstance(value, (ListVariable, TupleVariable)) and type(value) in (ListVariable, TupleVariable):
        return SequenceIterator(value, reverse=True)
    if value.is_python_constant():
        constant = value.as_python_constant()
        if isinstance(constant, (str, bytes, range, tuple)):
            return _ConstantReversed(constant)
    raise Unsupported(f"reversed() of {value.describe()}")


class _ConstantReversed(ConstantIterator):
    def __init__(self, value: Any) -> None:
        super().__init__(value)
        self.iterator = reversed(value)

    def reconstruct(self, cg) -> str:
        def build() -> str:
            made = f"reversed({cg.const(self.value)})"
            if self.done:
                return f"{cg.const(exhausted)}({made})"
            return f"{cg.const(_skipped)}({made}, {self.steps})"
        return cg.shared(self, build)


def _skipped(iterator: Any, steps: int) -> Any:
    for _ in range(steps):
        next(iterator)
    return iterator
