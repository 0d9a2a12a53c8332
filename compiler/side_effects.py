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
                changes = getattr(var, "changes", ())
                if any(change[0] != "set" for change in changes):
                    # Keys went or moved: the program's own operations, in order (the dict's
                    # entry order and layout are as plain; see DictVariable.changes).
                    values = [change[2] for change in changes if change[0] == "set"]
                    compute.append(f"{tmp} = ({''.join(v.reconstruct(cg) + ', ' for v in values)})")
                    apply.append(f"{cg.const(replay_dict_changes)}({src}, "
                                 f"{cg.const(replayed_changes(changes))}, {tmp})")
                    continue
                added = _dict_additions(var)
                if added is not None:
                    # Only keys added or values replaced, in order: set just those, as the
                    # program did (a clear() would also change the dict's layout: a split
                    # instance dict becomes combined, sys.getsizeof sees it).
                    if added:
                        compute.append(f"{tmp} = ({''.join(v.reconstruct(cg) + ', ' for _k, v in added)})")
                        apply += [f"{src}[{_key(cg, k)}] = {tmp}[{i}]" for i, (k, _v) in enumerate(added)]
                    continue
                pairs = ", ".join(f"({_key(cg, k)}, {v.reconstruct(cg)})" for k, v in var.items.items())
                compute.append(f"{tmp} = [{pairs}]")
                apply += [f"{src}.clear()", f"{src}.update({tmp})"]
            else:  # set
                compute.append(f"{tmp} = {cg.const(frozenset(var.values))}")
                apply += [f"{src}.clear()", f"{src}.update({tmp})"]
        for k, var in enumerate(self.mutated_arrays):
            compute.append(f"_sa{k} = {cg.graph_output(var.as_node(cg.tx))}")
            apply.append(f"{cg.source_expr(var.source)}[...] = _sa{k}")
        return compute + apply


def _key(cg, key: Any) -> str:
    return repr(key) if type(key) in (int, str) else cg.const(key)


def replay_dict_changes(target: dict, changes: Tuple[Tuple[Any, ...], ...], values: Tuple[Any, ...]) -> None:
    """Make on ``target``, in order, the changes a trace recorded on a dict: ("set", key),
    ("del", key), ("clear",), ("move", key, last); the sets take ``values`` in order
    (computed before any change).  Called by generated entry code, for a dict from outside
    whose keys went or moved and for a dict made in the trace (DictVariable.changes)."""
    sets = iter(values)
    for change in changes:
        if change[0] == "set":
            target[change[1]] = next(sets)
        elif change[0] == "del":
            del target[change[1]]
        elif change[0] == "clear":
            target.clear()
        else:  # move (an OrderedDict's move_to_end)
            target.move_to_end(change[1], last=change[2])


def replayed_changes(changes: List[Tuple[Any, ...]]) -> Tuple[Tuple[Any, ...], ...]:
    """The changes as replay_dict_changes takes them: a set without its value."""
    return tuple(change[:2] if change[0] == "set" else change for change in changes)


def _dict_additions(var: Any) -> Optional[List[Tuple[Any, Any]]]:
    """The (key, value) pairs to set on an outside dict so that it ends as the trace left it,
    when the trace only added keys or replaced values (every key it started with still there,
    in its place); None when keys went or moved (the replay then rebuilds the whole dict)."""
    initial = getattr(var, "initial", None)
    if initial is None:
        return None
    keys = list(var.items)
    if keys[:len(initial)] != list(initial):
        return None
    return [(k, v) for k, v in var.items.items() if k not in initial or initial[k] is not v]


def _target_expr(cg, location: Location) -> str:
    if location.kind == "global":
        base = "_G" if location.target is None else cg.source_expr(location.target)
        return f"{base}[{location.name!r}]"
    return f"{cg.source_expr(location.target)}.{location.name}"
