"""The declarative row for one opcode, and the table of rows for one CPython version.

A version's module (``py39.py`` ...) builds its table from the previous
version's with ``derive``: additions, removals and changed rows are stated
explicitly, so the difference between two versions reads in one place.
Opcode *numbers* are never stored: they come from the running interpreter's
``dis.opmap`` (3.13 renumbered almost everything).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Dict, Iterable, Mapping, Optional, Tuple

# Jump kinds.  "abs": the argument is an absolute position (in jump units);
# "rel": forward, relative to the instruction after this one and its caches;
# "rel_back": backward, relative to the same point.
JUMP_KINDS = (None, "abs", "rel", "rel_back")

# Control flow after an instruction, for flow analysis and ir_count.
#   "next"   - falls through (jumps with conditional=True also branch)
#   "jump"   - unconditional jump, never falls through
#   "return" - leaves the frame normally
#   "raise"  - leaves by raising (or re-raising)
FLOWS = ("next", "jump", "return", "raise")


@dataclass(frozen=True)
class OpcodeSpec:
    """Everything the encoder, decoder and tracer need to know about one opcode in one version."""

    name: str
    jump: Optional[str] = None
    conditional: bool = False
    flow: str = "next"
    caches: int = 0
    # 3.8-3.10 block-stack setup: the jump target is an exception/cleanup handler.
    block_setup: bool = False
    # Why the tracer will never trace this opcode (the frame then breaks or runs natively).
    unsupported: Optional[str] = None
    # Consumed by the decoder (EXTENDED_ARG, CACHE): never reaches the tracer, needs no handler.
    decoder_only: bool = False
    # Free-form remark shown by `python -m opcode_tables coverage`.
    note: str = ""
    # -- stack facts the tracer's graph breaks rely on (compiler.graph_break) --------------
    # A call (whatever the version's call layout): pops its callable and arguments and pushes
    # only its result, so the slots below its operands survive unchanged.
    is_call: bool = False
    # May leave a NULL on the stack (PUSH_NULL, LOAD_METHOD's "no self" slot, ...); the flag
    # bits that push one (LOAD_GLOBAL's push_null, LOAD_ATTR's is_method) are the instruction's.
    may_push_null: bool = False
    # Reorders or duplicates stack slots (ROT_*, DUP_TOP*, SWAP, COPY).
    permutes_stack: bool = False
    # Enters a (synchronous) with block: calls the context manager's __enter__.
    enters_with: bool = False
    # Starts a with block's cleanup when an exception left its body: calls the saved __exit__
    # with the exception (3.8 WITH_CLEANUP_START, 3.9+ WITH_EXCEPT_START).
    exits_with_exception: bool = False
    # False where code cannot be resumed right after this instruction: a loop's FOR_ITER
    # (the iterator is mid-way), a generator's SEND, an async with's entry.
    resumable_after: bool = True
    # Steps a for loop's iterator (FOR_ITER): a graph break here has two exits, the next item
    # (resume at the loop body) and exhaustion (resume after the loop's cleanup, the fact
    # "loop_end_cleanup"), each its own continuation.
    steps_loop: bool = False
    # A truth-testing conditional jump that pops an exact bool (TO_BOOL converts before it).
    pops_exact_bool: bool = False
    # ``dis.stack_effect`` books part of this instruction's stack effect on the named
    # instruction that always precedes it (3.11: CALL's argument pops are PRECALL's).
    stack_effect_shared_with: Optional[str] = None
    # -- ir_count (Dynamo's rule, compiler.tracer) -------------------------------------------
    # How many instructions Dynamo's cleaned copy of the bytecode makes of this one; its
    # ir_count counts those.  3.11+: POP_JUMP_*_IF_[NOT_]NONE becomes LOAD_CONST None, IS_OP,
    # POP_JUMP_*_IF_TRUE (3); 3.12+: BINARY_SLICE / STORE_SLICE become BUILD_SLICE and the
    # subscript (2).
    dynamo_counts_as: int = 1

    def __post_init__(self) -> None:
        if self.jump not in JUMP_KINDS:
            raise ValueError(f"{self.name}: jump kind {self.jump!r} not in {JUMP_KINDS}")
        if self.flow not in FLOWS:
            raise ValueError(f"{self.name}: flow {self.flow!r} not in {FLOWS}")


Handler = Callable[..., Any]


@dataclass
class VersionTable:
    """One CPython version's opcodes plus the encoding facts that differ per version."""

    version: Tuple[int, int]
    opcodes: Dict[str, OpcodeSpec]
    facts: Dict[str, Any]
    # Filled by the tracer at import time (compiler.handlers): opname -> handler.
    handlers: Dict[str, Handler] = field(default_factory=dict)

    # -- construction -----------------------------------------------------
    def derive(self, version: Tuple[int, int], *, add: Iterable[OpcodeSpec] = (),
               remove: Iterable[str] = (), change: Iterable[OpcodeSpec] = (),
               facts: Optional[Mapping[str, Any]] = None) -> "VersionTable":
        """The next version's table: this one plus ``add``, minus ``remove``, with ``change`` rows replaced."""
        opcodes = dict(self.opcodes)
        for name in remove:
            if name not in opcodes:
                raise KeyError(f"{version}: cannot remove {name}, not in {self.version}")
            del opcodes[name]
        for spec in add:
            if spec.name in opcodes:
                raise KeyError(f"{version}: {spec.name} already exists in {self.version}; use change=")
            opcodes[spec.name] = spec
        for spec in change:
            if spec.name not in opcodes:
                raise KeyError(f"{version}: cannot change {spec.name}, not in {self.version}")
            opcodes[spec.name] = spec
        new_facts = dict(self.facts)
        for key, value in (facts or {}).items():
            if key not in new_facts:
                raise KeyError(f"{version}: unknown encoding fact {key!r}")
            new_facts[key] = value
        return VersionTable(version=version, opcodes=opcodes, facts=new_facts)

    # -- queries ----------------------------------------------------------
    def __getitem__(self, opname: str) -> OpcodeSpec:
        return self.opcodes[opname]

    def __contains__(self, opname: str) -> bool:
        return opname in self.opcodes

    def changed(self, opname: str, **fields: Any) -> OpcodeSpec:
        """This table's row for ``opname`` with some fields replaced, for a later version's ``change=``."""
        return replace(self.opcodes[opname], **fields)

    def fact(self, name: str) -> Any:
        return self.facts[name]

    def bind_handler(self, opname: str, handler: Handler) -> None:
        """Fill one handler slot; an opname this version does not have is an error."""
        if opname not in self.opcodes:
            raise KeyError(f"{opname} is not an opcode of CPython {self.version[0]}.{self.version[1]}")
        if opname in self.handlers:
            raise KeyError(f"{opname} already has a handler for {self.version}")
        self.handlers[opname] = handler
