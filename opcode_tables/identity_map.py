"""A map keyed by an object's identity that does not keep the object alive.

``weakref.WeakKeyDictionary`` looks keys up by equality, and code objects
compare equal by value: two functions compiled from the same source (the
same generated dispatcher made twice, a lambda in a loop of ``exec``) have
equal but distinct code objects, with their own constants and globals.  What
the compiler derives from one code object and keeps (a generated caller
bound to its function's globals, where a code came from, its boxed variant)
must never be found again for another.
"""
from __future__ import annotations

import weakref
from typing import Dict, Generic, Optional, Tuple, TypeVar

# Bound once: the compiler's stage runner looks its maps up while a program may have
# replaced builtins.id (compiler.program_builtins).
_id = id
K = TypeVar("K")
V = TypeVar("V")

__all__ = ["IdentityWeakMap"]


class IdentityWeakMap(Generic[K, V]):
    """``key -> value`` by ``key``'s identity; an entry goes when its key dies."""

    def __init__(self) -> None:
        self._items: Dict[int, Tuple["weakref.ref[K]", V]] = {}

    def get(self, key: K) -> Optional[V]:
        item = self._items.get(_id(key))
        if item is None or item[0]() is not key:
            return None
        return item[1]

    def __setitem__(self, key: K, value: V) -> None:
        ident = id(key)
        items = self._items

        def forget(ref: "weakref.ref[K]", ident: int = ident) -> None:
            # (a later key at the same address replaced this entry: leave that one)
            current = items.get(ident)
            if current is not None and current[0] is ref:
                del items[ident]
        items[ident] = (weakref.ref(key, forget), value)

    def __len__(self) -> int:
        return len(self._items)
