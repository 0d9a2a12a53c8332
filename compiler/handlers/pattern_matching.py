"""The match statement (3.10+): its pattern tests, decided at trace time.

A pattern test is a question about the subject's type and contents, which the trace
knows for the values it models: MATCH_SEQUENCE / MATCH_MAPPING read the type's flags
(as CPython does, so ``collections.abc`` registration counts), GET_LEN the length,
MATCH_KEYS looks the keys up in a traced dict, MATCH_CLASS checks ``isinstance`` and reads
the attributes ``__match_args__`` and the keyword sub-patterns name.  Anything else (a
subject of unknown type, a user mapping, a class whose metaclass customises
``__instancecheck__``, a pattern CPython rejects with TypeError) is Unsupported: the frame
breaks at the test and CPython runs it.

Stack layouts differ per version (table fact ``match_pushes_success_flag``: 3.10 pushes a
bool after MATCH_KEYS / MATCH_CLASS and keeps the subject under MATCH_CLASS's result).
"""
from __future__ import annotations

from typing import List, Optional

from opcode_tables.instruction import Instruction

from ..exc import Unsupported
from ..tracer import InstructionTranslatorBase
from ..variables.base import VariableTracker
from ..variables.builtins import checked_type_of, isinstance_of_type, plain_instance_checks, python_type_of
from ..variables.constant import ConstantVariable
from ..variables.containers import DictVariable, TupleVariable, _const_key
from .registry import handler

# CPython's type flags read by MATCH_SEQUENCE / MATCH_MAPPING (Include/object.h, 3.10+),
# and the builtins that match themselves for one positional sub-pattern (_Py_TPFLAGS_MATCH_SELF).
_TPFLAGS_SEQUENCE = 1 << 5
_TPFLAGS_MAPPING = 1 << 6
_MATCH_SELF = (bool, bytearray, bytes, dict, float, frozenset, int, list, set, str, tuple)


@handler("MATCH_SEQUENCE")
def match_sequence(tx: InstructionTranslatorBase, inst: Instruction):
    flags = python_type_of(tx, tx.peek()).__flags__
    tx.push(ConstantVariable(bool(flags & _TPFLAGS_SEQUENCE)))


@handler("MATCH_MAPPING")
def match_mapping(tx: InstructionTranslatorBase, inst: Instruction):
    flags = python_type_of(tx, tx.peek()).__flags__
    tx.push(ConstantVariable(bool(flags & _TPFLAGS_MAPPING)))


@handler("GET_LEN")
def get_len(tx: InstructionTranslatorBase, inst: Instruction):
    tx.push(ConstantVariable(tx.peek().length(tx)))


def _push_result(tx: InstructionTranslatorBase, values: Optional[List[VariableTracker]]) -> None:
    tx.push(TupleVariable(values) if values is not None else ConstantVariable(None))
    if tx.table.fact("match_pushes_success_flag"):
        tx.push(ConstantVariable(values is not None))


@handler("MATCH_KEYS")
def match_keys(tx: InstructionTranslatorBase, inst: Instruction):
    keys, subject = tx.peek(1), tx.peek(2)
    if not isinstance(subject, DictVariable):
        raise tx.unsupported(f"mapping pattern on {subject.describe()} (only traced dicts are matched)")
    wanted = [_const_key(k) for k in keys.unpack(tx)]
    if len(set(wanted)) != len(wanted):
        raise tx.unsupported("mapping pattern with a duplicate key (CPython raises ValueError)")
    found = [subject.items[k] for k in wanted if k in subject.items]
    _push_result(tx, found if len(found) == len(wanted) else None)


def _class_attributes(tx: InstructionTranslatorBase, subject: VariableTracker, cls: type,
                      positional: int, names: List[str]) -> Optional[List[VariableTracker]]:
    """CPython's match_class: the attributes, or None where the subject does not match."""
    if not isinstance_of_type(checked_type_of(tx, subject), cls):
        return None
    wanted: List[Optional[str]] = []   # None: the subject itself (a builtin matching itself)
    if positional:
        match_args = getattr(cls, "__match_args__", None)
        if match_args is None and issubclass(cls, _MATCH_SELF) and positional == 1:
            wanted.append(None)
        elif isinstance(match_args, tuple) and positional <= len(match_args) and \
                all(isinstance(n, str) for n in match_args[:positional]):
            wanted.extend(match_args[:positional])
        else:
            raise tx.unsupported(f"class pattern {cls.__name__}() with {positional} positional "
                                 "sub-patterns it does not accept (CPython raises TypeError)")
    wanted.extend(names)
    named = [n for n in wanted if n is not None]
    if len(set(named)) != len(named):
        raise tx.unsupported(f"class pattern {cls.__name__}() naming an attribute twice (TypeError)")
    attributes = []
    for name in wanted:
        if name is None:
            attributes.append(subject)
            continue
        try:
            attributes.append(tx.speculate_getattr(subject, name))
        except AttributeError:
            return None
    return attributes


@handler("MATCH_CLASS")
def match_class(tx: InstructionTranslatorBase, inst: Instruction):
    names_var, cls_var = tx.pop(), tx.pop()
    subject = tx.peek() if tx.table.fact("match_pushes_success_flag") else tx.pop()
    if not cls_var.is_python_constant() or not isinstance(cls_var.as_python_constant(), type):
        raise tx.unsupported(f"class pattern with {cls_var.describe()} (CPython raises TypeError)")
    cls = cls_var.as_python_constant()
    if not plain_instance_checks(cls):
        raise Unsupported(f"class pattern {cls.__name__}(): its metaclass customises __instancecheck__")
    names = list(names_var.as_python_constant())
    values = _class_attributes(tx, subject, cls, inst.arg or 0, names)
    if tx.table.fact("match_pushes_success_flag"):
        # 3.10: the attributes replace the subject on success; the flag goes on top.
        if values is not None:
            tx.pop()
            tx.push(TupleVariable(values))
        tx.push(ConstantVariable(values is not None))
    else:
        tx.push(TupleVariable(values) if values is not None else ConstantVariable(None))


@handler("COPY_DICT_WITHOUT_KEYS")
def copy_dict_without_keys(tx: InstructionTranslatorBase, inst: Instruction):
    """3.10's ``**rest``: a new dict of the subject's items but the matched keys."""
    keys, subject = tx.pop(), tx.peek()
    if not isinstance(subject, DictVariable):
        raise tx.unsupported(f"mapping pattern **rest on {subject.describe()}")
    dropped = {_const_key(k) for k in keys.unpack(tx)}
    tx.push(DictVariable({k: v for k, v in subject.items.items() if k not in dropped}))
