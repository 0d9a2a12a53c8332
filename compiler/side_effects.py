"""Side effects on the caller's objects, tracked during the trace and replayed by the entry.

Stores to globals, to attributes of objects that came from outside, and mutations of
outside lists/dicts/sets happen symbolically while tracing (later reads in the trace see
them); the cache entry's generated code then applies the final state of every touched
location once, after the graph has run: values are computed first, then stored, so a
swap (``a, b = b, a``) replays correctly.  Whether a location existed before is guarded,
so deleting it replays exactly.

Objects that are mutated must not alias other inputs differently on a later call: the
guards state which outside objects are (and are not) the same object.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from .sources import Source

DELETED = object()


class Location:
    """One global name or one attribute of one outside object."""

    def __init__(self, target: Source, name: str, kind: str, existed: bool) -> None:
        self.target = target      # the globals dict's source (None for the frame's) or the object's
        self.name = name
        self.kind = kind          # "global" | "attr"
        self.existed = existed
        self.value: Any = DELETED


class SideEffects:
    def __init__(self) -> None:
        self._locations: Dict[Tuple[str, int, str], Location] = {}
        self.mutated_containers: List[Any] = []   # outside list/dict/set trackers changed in place
        self.mutated_arrays: List[Any] = []       # input arrays written in place

    def __bool__(self) -> bool:
        return bool(self._locations or self.mutated_containers or self.mutated_arrays)

    def note_array(self, var: Any) -> None:
        if not any(v is var for v in self.mutated_arrays):
            self.mutated_arrays.append(var)

    # -- recording --------------------------------------------------------
    def lookup(self, kind: str, owner: Any, name: str) -> Optional[Location]:
        return self._locations.get((kind, id(owner), name))

    def store(self, kind: str, owner: Any, target: Optional[Source], name: str, existed: bool,
              value: Any) -> Location:
        key = (kind, id(owner), name)
        location = self._locations.get(key)
        if location is None:
            location = self._locations[key] = Location(target, name, kind, existed)
            location.owner = owner  # keeps the owner alive, so id() stays unique
        location.value = value
        return location

    def attr_owner_ids(self) -> set:
        return {key[1] for key in self._locations if key[0] == "attr"}

    def note_container(self, var: Any) -> None:
        if not any(v is var for v in self.mutated_containers):
            self.mutated_containers.append(var)

    # -- replay -------------------------------------------------------------
    def replay(self, cg) -> List[str]:
        """Statements applying the final state (values first, then the stores)."""
        compute: List[str] = []
        apply: List[str] = []
        for i, location in enumerate(self._locations.values()):
            target = _target_expr(cg, location)
            if location.value is DELETED:
                if location.existed:
                    apply.append(f"del {target}")
                continue
            compute.append(f"_se{i} = {location.value.reconstruct(cg)}")
            apply.append(f"{target} = _se{i}")
        for j, var in enumerate(self.mutated_containers):
            src = cg.source_expr(var.source)
            tmp = f"_sc{j}"
            kind = var.python_type()
            if issubclass(kind, list):
                compute.append(f"{tmp} = [{', '.join(item.reconstruct(cg) for item in var.items)}]")
                apply.append(f"{src}[:] = {tmp}")
            elif issubclass(kind, dict):
                pairs = ", ".join(f"({cg.const(k) if not isinstance(k, (int, str)) else repr(k)}, "
                                  f"{v.reconstruct(cg)})" for k, v in var.items.items())
                compute.append(f"{tmp} = [{pairs}]")
                apply += [f"{src}.clear()", f"{src}.update({tmp})"]
            else:  # set
                compute.append(f"{tmp} = {cg.const(frozenset(var.values))}")
                apply += [f"{src}.clear()", f"{src}.update({tmp})"]
        for k, var in enumerate(self.mutated_arrays):
            compute.append(f"_sa{k} = {cg.graph_output(var.as_node(cg.tx))}")
            apply.append(f"{cg.source_expr(var.source)}[...] = _sa{k}")
        return compute + apply


def _target_expr(cg, location: Location) -> str:
    if location.kind == "global":
        base = "_G" if location.target is None else cg.source_expr(location.target)
        return f"{base}[{location.name!r}]"
    return f"{cg.source_expr(location.target)}.{location.name}"
