"""A readable Python view of any code object of the running interpreter.

For the code the compiler makes from the user's bytecode (break stubs,
continuations), which has no source of its own, and for the user's original
code beside it.  It works on the version-neutral instructions
(``decode.instructions_of``: superinstructions split) and the stack depths
``stackdepth.entry_depths`` computes from the running version's table, so it
reads every version the tables know; opcodes are recognised by name (a name
means the same thing in every version that has it; where the layout of a
call changed, NULL and method slots are told apart by what pushed them).

The view is straight-line: one statement per effect, expressions built on a
symbolic stack.  Control flow is written with labels, ``label .L24`` and
``goto .L24`` (the spelling the ``goto`` decorators use: it parses as
Python, so tools that read Python read it); at a label the stack slots are
the names ``_s0``, ``_s1`` ..., assigned before every jump that reaches it.
3.11+ exception-table ranges and 3.8-3.10 block setups appear as comments.
An opcode the view does not spell out appears under its own name, as
``OPNAME(operands)``, with a comment; nothing is dropped silently.
"""
from __future__ import annotations

import types
from typing import Dict, List, Optional, Sequence, Set

from . import current_table
from .decode import instructions_of
from .instruction import Instruction
from .spec import VersionTable
from .stackdepth import entry_depths, stack_effect


class _Marker:
    """A stack slot that is not a value: the NULL before/after a callable, or the receiver
    slot of a method load (already part of the ``obj.name`` expression beside it)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        return self.text


NULL = _Marker("NULL")
SELF = _Marker("SELF")

_BINARY_NAMES = {
    "ADD": "+", "SUBTRACT": "-", "MULTIPLY": "*", "TRUE_DIVIDE": "/", "FLOOR_DIVIDE": "//",
    "MODULO": "%", "POWER": "**", "MATRIX_MULTIPLY": "@", "LSHIFT": "<<", "RSHIFT": ">>",
    "AND": "&", "OR": "|", "XOR": "^",
}
_UNARY = {"UNARY_NEGATIVE": "-", "UNARY_POSITIVE": "+", "UNARY_NOT": "not ", "UNARY_INVERT": "~"}
# The operator module's in-place functions, by operator: `x += y` as an expression
# (`operator.iadd(x, y)`: what the instruction does, and it reads as Python).
_INPLACE = {"+": "iadd", "-": "isub", "*": "imul", "/": "itruediv", "//": "ifloordiv", "%": "imod",
            "**": "ipow", "@": "imatmul", "<<": "ilshift", ">>": "irshift", "&": "iand", "|": "ior",
            "^": "ixor"}
# 3.12+ CALL_INTRINSIC_1/2 that are plain Python (the rest keep their own names).
_INTRINSICS = {"INTRINSIC_LIST_TO_TUPLE": "tuple({0})", "INTRINSIC_UNARY_POSITIVE": "(+{0})",
               "INTRINSIC_STOPITERATION_ERROR": "{0}"}
_LOADS = ("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_BORROW", "LOAD_FAST_AND_CLEAR", "LOAD_DEREF",
          "LOAD_CLOSURE", "LOAD_CLASSDEREF", "LOAD_NAME", "LOAD_GLOBAL")
_STORES = ("STORE_FAST", "STORE_NAME", "STORE_GLOBAL", "STORE_DEREF")
_DELETES = ("DELETE_FAST", "DELETE_NAME", "DELETE_GLOBAL", "DELETE_DEREF")
# Instructions with no effect a reader needs to see.
_SILENT = frozenset({"NOP", "RESUME", "CACHE", "EXTENDED_ARG", "PRECALL", "NOT_TAKEN", "COPY_FREE_VARS",
                     "MAKE_CELL", "GEN_START", "SETUP_ANNOTATIONS", "RESERVED"})


def _signature(code: types.CodeType) -> str:
    """The parameter list of ``code``, from its argument counts and flags (no defaults:
    a code object does not hold them)."""
    names = [_identifier(n) for n in code.co_varnames]
    n_pos, n_posonly, n_kw = code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount
    has_star, has_starstar = bool(code.co_flags & 0x04), bool(code.co_flags & 0x08)
    params = names[:n_pos]
    if n_posonly:
        params.insert(n_posonly, "/")
    if has_star:
        params.append("*" + names[n_pos + n_kw])
    elif n_kw:
        params.append("*")
    params += names[n_pos:n_pos + n_kw]
    if has_starstar:
        params.append("**" + names[n_pos + n_kw + has_star])
    return ", ".join(params)


def _identifier(name: str) -> str:
    """A name as it can appear in Python source (a comprehension's ".0" becomes "_0")."""
    text = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in str(name))
    return text if text and not text[0].isdigit() else "_" + text


def _const(value: object) -> str:
    if isinstance(value, types.CodeType):
        return f"__code_{_identifier(value.co_name)}"
    if isinstance(value, frozenset):
        return f"frozenset({set(value)!r})" if value else "frozenset()"
    text = repr(value)
    return text if not text.startswith("<") else f"__const_{_identifier(type(value).__name__)}"


class _View:
    def __init__(self, code: types.CodeType, table: VersionTable) -> None:
        self.code = code
        self.table = table
        self.instructions, self.index_of = instructions_of(code)
        self.depths = entry_depths(self.instructions, table)
        self.lines: List[str] = []
        self.stack: List[object] = []
        self.temps = 0
        self.kw_names: Optional[Sequence[str]] = None
        self.shared_effects = {spec.stack_effect_shared_with for spec in table.opcodes.values()
                               if spec.stack_effect_shared_with}
        self.labels: Set[int] = set()
        for inst in self.instructions:
            if inst.target is not None:
                self.labels.add(self.index_of[id(inst.target)])
            if inst.exc is not None:
                self.labels.add(self.index_of[id(inst.exc.target)])

    # -- the stack -----------------------------------------------------------------------
    def pop(self) -> object:
        return self.stack.pop() if self.stack else "_underflow"

    def pops(self, n: int) -> List[object]:
        items = [self.pop() for _ in range(n)]
        return items[::-1]

    def temp(self, expr: object) -> str:
        name = f"_t{self.temps}"
        self.temps += 1
        self.emit(f"{name} = {expr}")
        return name

    def named(self, depth: int) -> str:
        """Stack slot ``depth`` (from the bottom) as a name, assigning it first if it is an
        expression (a value used twice, or mutated in place, is evaluated once)."""
        value = self.stack[depth]
        if isinstance(value, _Marker):
            return str(value)
        text = str(value)
        if not text.isidentifier():
            text = self.temp(text)
            self.stack[depth] = text
        return text

    def spill(self, keep: int) -> None:
        """Assign the stack's slots to ``_s0`` ... (what a label's code expects)."""
        for depth in range(min(keep, len(self.stack))):
            value = self.stack[depth]
            name = f"_s{depth}"
            if isinstance(value, _Marker) or value == name:
                continue
            self.emit(f"{name} = {value}")
            self.stack[depth] = name

    def emit(self, line: str) -> None:
        self.lines.append("    " + line)

    # -- the walk ------------------------------------------------------------------------
    def run(self, name: Optional[str] = None) -> str:
        code = self.code
        header = [f"def {_identifier(name or code.co_name)}({_signature(code)}):",
                  f'    """{getattr(code, "co_qualname", code.co_name)} from {code.co_filename}:'
                  f'{code.co_firstlineno}, as the tracematrix decompiler reads its bytecode."""']
        line = None
        handler = None
        falls_in = True
        for i, inst in enumerate(self.instructions):
            if i in self.labels:
                if falls_in:
                    self.spill(len(self.stack))
                self.lines.append(f"    label .L{self._offset(i)}")
                depth = max(self.depths[i], 0)
                self.stack = [f"_s{k}" for k in range(depth)]
            elif not falls_in:
                if self.depths[i] < 0:
                    continue  # unreachable: CPython leaves dead code after a return at times
                self.stack = [f"_s{k}" for k in range(self.depths[i])]
            exc = inst.exc
            if exc is not handler:
                if exc is not None:
                    self.emit(f"# exceptions from here go to .L{self._offset(self.index_of[id(exc.target)])}")
                else:
                    self.emit("# no exception handler from here")
                handler = exc
            if inst.line is not None and inst.line != line:
                line = inst.line
                self.emit(f"# line {line}")
            before = len(self.stack)
            self.step(i, inst)
            spec = self.table.opcodes[inst.opname]
            falls_in = spec.flow == "next"
            # (3.11's PRECALL books the call's argument pops: the depth is right after CALL.)
            if falls_in and self.depths[i] >= 0 and inst.opname not in self.shared_effects:
                expected = self.depths[i] + stack_effect(inst, self.table)
                self._resync(expected, inst, before)
        return "\n".join(header + (self.lines or ["    pass"])) + "\n"

    def _resync(self, expected: int, inst: Instruction, before: int) -> None:
        if len(self.stack) == expected:
            return
        if len(self.stack) > expected:
            del self.stack[expected:]
        else:
            self.stack += [f"_s{k}" for k in range(len(self.stack), expected)]
        self.emit(f"# (the stack after {inst.opname} is {expected} deep; this view had {before} before it)")

    def _offset(self, index: int) -> str:
        inst = self.instructions[index]
        return str(inst.offset) if inst.offset is not None else f"{self._offset(index - 1)}_2"

    def jump(self, i: int, inst: Instruction, condition: Optional[str]) -> None:
        target = self.index_of[id(inst.target)]
        keep = self.depths[target] if self.depths[target] >= 0 else len(self.stack)
        self.spill(keep)
        goto = f"goto .L{self._offset(target)}"
        self.emit(goto if condition is None else f"if {condition}: {goto}")

    # -- one instruction -----------------------------------------------------------------
    def step(self, i: int, inst: Instruction) -> None:  # noqa: C901 (one table, read top to bottom)
        name, arg, argval = inst.opname, inst.arg, inst.argval
        push = self.stack.append
        if name in _SILENT:
            return
        if name == "LOAD_CONST":
            push(_const(argval))
        elif name == "LOAD_SMALL_INT":
            push(repr(argval))
        elif name == "LOAD_COMMON_CONSTANT":  # AssertionError, all, any, tuple, ... by name
            push(getattr(argval, "__name__", None) or _const(argval))
        elif name in _LOADS:
            if name == "LOAD_GLOBAL" and inst.push_null:
                push(NULL)
            push(_identifier(argval))
        elif name in ("LOAD_FROM_DICT_OR_DEREF", "LOAD_FROM_DICT_OR_GLOBALS"):
            self.pop()  # the class namespace looked in first
            push(_identifier(argval))
        elif name == "RETURN_GENERATOR":
            push(NULL)  # the generator object, popped at once
        elif name == "LOAD_ASSERTION_ERROR":
            push("AssertionError")
        elif name == "LOAD_BUILD_CLASS":
            push("__build_class__")
        elif name == "LOAD_LOCALS":
            push("locals()")
        elif name == "PUSH_NULL":
            push(NULL)
        elif name in ("LOAD_ATTR", "LOAD_METHOD"):
            obj = self.pop()
            push(f"{obj}.{argval}")
            if name == "LOAD_METHOD" or inst.is_method:
                push(SELF)
        elif name == "LOAD_SUPER_ATTR":
            _, cls, self_ = self.pops(3)
            push(f"super({cls}, {self_}).{argval}")
            if inst.is_method:
                push(SELF)
        elif name == "LOAD_SPECIAL":
            obj = self.pop()
            push(f"{obj}.{inst.argrepr}")
            push(SELF)
        elif name in _STORES:
            self.emit(f"{_identifier(argval)} = {self.pop()}")
        elif name in _DELETES:
            self.emit(f"del {_identifier(argval)}")
        elif name == "STORE_ATTR":
            obj, value = self.pop(), self.pop()
            self.emit(f"{obj}.{argval} = {value}")
        elif name == "DELETE_ATTR":
            self.emit(f"del {self.pop()}.{argval}")
        elif name == "STORE_SUBSCR":
            key, container, value = self.pop(), self.pop(), self.pop()
            self.emit(f"{container}[{key}] = {value}")
        elif name == "DELETE_SUBSCR":
            key, container = self.pop(), self.pop()
            self.emit(f"del {container}[{key}]")
        elif name == "STORE_SLICE":
            end, start, container, value = self.pop(), self.pop(), self.pop(), self.pop()
            self.emit(f"{container}[{start}:{end}] = {value}")
        elif name == "BINARY_SLICE":
            end, start, container = self.pop(), self.pop(), self.pop()
            push(f"{container}[{start}:{end}]")
        elif name == "BINARY_SUBSCR":
            key, container = self.pop(), self.pop()
            push(f"{container}[{key}]")
        elif name == "BINARY_OP":
            right, left = self.pop(), self.pop()
            push(self._binary(inst.argrepr, left, right))
        elif name.startswith(("BINARY_", "INPLACE_")) and name.split("_", 1)[1] in _BINARY_NAMES:
            right, left = self.pop(), self.pop()
            op = _BINARY_NAMES[name.split("_", 1)[1]]
            push(self._binary(op + ("=" if name.startswith("INPLACE_") else ""), left, right))
        elif name in _UNARY:
            push(f"({_UNARY[name]}{self.pop()})")
        elif name == "TO_BOOL":
            push(f"bool({self.pop()})")
        elif name == "COMPARE_OP":
            right, left = self.pop(), self.pop()
            op = inst.argrepr
            if op.startswith("bool(") and op.endswith(")"):
                op = op[5:-1]
            if op == "exception match":  # 3.8's except-clause test
                push(f"_exception_matches({left}, {right})")
            else:
                push(f"({left} {op} {right})")
        elif name == "IS_OP":
            right, left = self.pop(), self.pop()
            push(f"({left} {'is not' if arg else 'is'} {right})")
        elif name == "CONTAINS_OP":
            right, left = self.pop(), self.pop()
            push(f"({left} {'not in' if arg else 'in'} {right})")
        elif name in ("BUILD_TUPLE", "BUILD_LIST", "BUILD_SET"):
            items = [str(x) for x in self.pops(arg or 0)]
            if name == "BUILD_TUPLE":
                push(f"({', '.join(items)}{',' if len(items) == 1 else ''})")
            elif name == "BUILD_LIST":
                push(f"[{', '.join(items)}]")
            else:
                push(f"{{{', '.join(items)}}}" if items else "set()")
        elif name == "BUILD_MAP":
            items = self.pops(2 * (arg or 0))
            push("{" + ", ".join(f"{items[k]}: {items[k + 1]}" for k in range(0, len(items), 2)) + "}")
        elif name == "BUILD_CONST_KEY_MAP":
            keys = self.pop()
            values = self.pops(arg or 0)
            push(f"dict(zip({keys}, ({', '.join(map(str, values))},)))")
        elif name == "BUILD_STRING":
            parts = self.pops(arg or 0)
            push("(" + " + ".join(f"str({p})" for p in parts) + ")" if parts else "''")
        elif name == "BUILD_SLICE":
            parts = self.pops(arg or 2)
            push(f"slice({', '.join(map(str, parts))})")
        elif name in ("LIST_APPEND", "SET_ADD", "LIST_EXTEND", "SET_UPDATE", "DICT_UPDATE", "DICT_MERGE"):
            value = self.pop()
            target = self.named(len(self.stack) - (arg or 1))
            method = {"LIST_APPEND": "append", "SET_ADD": "add", "LIST_EXTEND": "extend",
                      "SET_UPDATE": "update", "DICT_UPDATE": "update", "DICT_MERGE": "update"}[name]
            self.emit(f"{target}.{method}({value})")
        elif name == "MAP_ADD":
            value, key = self.pop(), self.pop()
            target = self.named(len(self.stack) - (arg or 1))
            self.emit(f"{target}[{key}] = {value}")
        elif name == "LIST_TO_TUPLE":
            push(f"tuple({self.pop()})")
        elif name in ("FORMAT_VALUE", "FORMAT_SIMPLE", "FORMAT_WITH_SPEC", "CONVERT_VALUE"):
            self._format(name, arg or 0)
        elif name in ("GET_ITER", "GET_YIELD_FROM_ITER"):
            push(f"iter({self.pop()})")
            self.stack += [NULL] * stack_effect(inst, self.table)  # 3.15: the iterator's second slot
        elif name == "GET_LEN":
            push(f"len({self.named(len(self.stack) - 1)})")
        elif name == "FOR_ITER":
            slot = max((k for k, v in enumerate(self.stack) if not isinstance(v, _Marker)), default=0)
            iterator = self.named(slot) if self.stack else "_underflow"
            target = self.index_of[id(inst.target)]
            self.spill(len(self.stack))
            self.emit(f"# FOR_ITER over {iterator}: when it is exhausted, goto .L{self._offset(target)}")
            push(self.temp(f"next({iterator})"))
        elif name in ("POP_TOP", "POP_ITER", "END_FOR"):
            for value in self.pops(-stack_effect(inst, self.table)):
                if not isinstance(value, _Marker) and not str(value).isidentifier() and "(" in str(value):
                    self.emit(str(value))
        elif name in ("ROT_TWO", "ROT_THREE", "ROT_FOUR", "ROT_N"):
            n = {"ROT_TWO": 2, "ROT_THREE": 3, "ROT_FOUR": 4}.get(name, arg or 0)
            if n and len(self.stack) >= n:
                top = self.stack.pop()
                self.stack.insert(len(self.stack) - n + 1, top)
        elif name in ("DUP_TOP", "COPY", "DUP_TOP_TWO"):
            if name == "DUP_TOP_TWO":
                a = self.named(len(self.stack) - 2)
                b = self.named(len(self.stack) - 1)
                self.stack += [a, b]
            else:
                n = 1 if name == "DUP_TOP" else (arg or 1)
                push(self.named(len(self.stack) - n) if len(self.stack) >= n else "_underflow")
        elif name == "SWAP":
            n = arg or 2
            if len(self.stack) >= n:
                self.stack[-1], self.stack[-n] = self.stack[-n], self.stack[-1]
        elif name == "KW_NAMES":
            self.kw_names = tuple(argval) if isinstance(argval, tuple) else tuple(self.code.co_consts[arg or 0])
        elif name in ("CALL", "CALL_METHOD", "CALL_FUNCTION", "CALL_KW", "CALL_FUNCTION_KW"):
            self._call(name, arg or 0)
        elif name == "CALL_FUNCTION_EX":
            self._call_ex(inst)
        elif name in ("CALL_INTRINSIC_1", "CALL_INTRINSIC_2"):
            operands = [str(x) for x in self.pops(1 if name.endswith("1") else 2)]
            spelled = _INTRINSICS.get(inst.argrepr)
            if spelled is not None:
                push(spelled.format(*operands))
            else:
                push(f"{_identifier(inst.argrepr.lower() or 'intrinsic')}({', '.join(operands)})")
        elif name == "RETURN_VALUE":
            self.emit(f"return {self.pop()}")
        elif name == "RETURN_CONST":
            self.emit(f"return {_const(argval)}")
        elif name == "RAISE_VARARGS":
            parts = self.pops(arg or 0)
            self.emit("raise" if not parts else f"raise {parts[0]}" + (f" from {parts[1]}" if len(parts) > 1 else ""))
        elif name == "RERAISE":
            self.emit("raise  # RERAISE")
            self.pop()
        elif name == "UNPACK_SEQUENCE":
            value = self.pop()
            names = [f"_t{self.temps + k}" for k in range(arg or 0)]
            self.temps += len(names)
            self.emit(f"({', '.join(names)}{',' if len(names) == 1 else ''}) = {value}")
            self.stack += names[::-1]
        elif name == "UNPACK_EX":
            value = self.pop()
            before, after = (arg or 0) & 0xFF, (arg or 0) >> 8
            names = [f"_t{self.temps + k}" for k in range(before + 1 + after)]
            self.temps += len(names)
            shown = names[:before] + ["*" + names[before]] + names[before + 1:]
            self.emit(f"({', '.join(shown)},) = {value}")
            self.stack += names[::-1]
        elif name == "IMPORT_NAME":
            fromlist, level = self.pop(), self.pop()
            push(f"__import__({argval!r}, fromlist={fromlist}, level={level})")
        elif name == "IMPORT_FROM":
            module = self.named(len(self.stack) - 1)
            push(f"{module}.{argval}")
        elif name in ("BEFORE_WITH", "BEFORE_ASYNC_WITH", "SETUP_WITH", "SETUP_ASYNC_WITH"):
            manager = self.named(len(self.stack) - 1)
            self.stack[-1] = f"{manager}.__exit__"
            push(self.temp(f"{manager}.__enter__()"))
            if inst.target is not None:
                target = self.index_of[id(inst.target)]
                self.emit(f"# with {manager}: exceptions from here go to .L{self._offset(target)}")
        elif name.startswith("BUILD_") and "_UNPACK" in name:
            parts = self.pops(arg or 0)
            if name.startswith("BUILD_MAP"):
                push("{" + ", ".join(f"**{p}" for p in parts) + "}")
            else:
                inner = ", ".join(f"*{p}" for p in parts)
                push({"LIST": f"[{inner}]", "SET": f"{{{inner}}}"}.get(name.split("_")[1], f"({inner},)"))
        elif name == "BEGIN_FINALLY":
            self.stack += [NULL] * stack_effect(inst, self.table)
        elif name == "MAKE_FUNCTION":
            items = self.pops(1 - stack_effect(inst, self.table))
            code = next((str(x) for x in items if str(x).startswith("__code_")), str(items[0]) if items else "")
            push(self.temp(f"function({code})"))
        elif inst.target is not None and self.table.opcodes[name].jump is not None and not self.table.opcodes[name].block_setup:
            self._jump_op(i, inst)
        elif self.table.opcodes[name].block_setup:
            target = self.index_of[id(inst.target)]
            self.emit(f"# {name}: exceptions from here go to .L{self._offset(target)}")
        else:
            self._generic(inst)

    def _binary(self, op: str, left: object, right: object) -> str:
        if op == "[]":
            return f"{left}[{right}]"
        if op.endswith("=") and op[:-1] in _INPLACE:
            return f"operator.{_INPLACE[op[:-1]]}({left}, {right})"
        return f"({left} {op} {right})"

    def _format(self, name: str, arg: int) -> None:
        if name == "CONVERT_VALUE":
            self.stack.append(f"{('str', 'repr', 'ascii')[max(arg - 1, 0)]}({self.pop()})")
            return
        spec = self.pop() if (name == "FORMAT_WITH_SPEC" or (name == "FORMAT_VALUE" and arg & 0x04)) else None
        value = self.pop()
        if name == "FORMAT_VALUE" and arg & 0x03:
            value = f"{('str', 'repr', 'ascii')[(arg & 0x03) - 1]}({value})"
        self.stack.append(f"format({value}, {spec})" if spec is not None else f"format({value})")

    def _call(self, name: str, argc: int) -> None:
        kw_names: Sequence[str] = ()
        if name in ("CALL_KW", "CALL_FUNCTION_KW"):
            names = self.pop()
            try:
                kw_names = tuple(eval(str(names), {}))  # the names tuple is a constant
            except Exception:
                kw_names = ()
        elif self.kw_names:
            kw_names, self.kw_names = self.kw_names, None
        args = [str(a) for a in self.pops(argc)]
        slots = self.pops(1 if name in ("CALL_FUNCTION", "CALL_FUNCTION_KW") else 2)
        values = [str(s) for s in slots if not isinstance(s, _Marker)]
        callee = values[0] if values else "_underflow"
        args = values[1:] + args
        n_pos = len(args) - len(kw_names)
        shown = args[:n_pos] + [f"{k}={v}" for k, v in zip(kw_names, args[n_pos:])]
        self.stack.append(f"{callee}({', '.join(shown)})")

    def _call_ex(self, inst: Instruction) -> None:
        n = 1 - stack_effect(inst, self.table)
        items = self.pops(n)
        values = [str(s) for s in items if not isinstance(s, _Marker)]
        has_kwargs = bool((inst.arg or 0) & 1) or (len(items) >= 4 and not isinstance(items[-1], _Marker))
        callee, rest = (values[0], values[1:]) if values else ("_underflow", [])
        shown = []
        if rest:
            shown.append(f"*{rest[0]}")
        if has_kwargs and len(rest) > 1:
            shown.append(f"**{rest[1]}")
        self.stack.append(f"{callee}({', '.join(shown)})")

    def _jump_op(self, i: int, inst: Instruction) -> None:
        name = inst.opname
        spec = self.table.opcodes[name]
        if not spec.conditional:
            self.jump(i, inst, None)
            return
        if name in ("JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP"):
            value = self.named(len(self.stack) - 1)
            self.jump(i, inst, f"{'not ' if 'FALSE' in name else ''}{value}")
            self.pop()
            return
        if name == "JUMP_IF_NOT_EXC_MATCH":
            right, left = self.pop(), self.pop()
            self.jump(i, inst, f"not issubclass({left}, {right})")
            return
        if name in ("SEND", "FOR_ITER"):
            self._generic(inst)
            return
        value = self.pop()
        if "NOT_NONE" in name:
            condition = f"{value} is not None"
        elif "NONE" in name:
            condition = f"{value} is None"
        elif "FALSE" in name:
            condition = f"not {value}"
        else:
            condition = str(value)
        self.jump(i, inst, condition)

    def _generic(self, inst: Instruction) -> None:
        """An opcode this view does not spell out: its net stack effect, under its own name."""
        effect = stack_effect(inst, self.table)
        note = f"  # {inst.opname} {inst.argrepr}".rstrip()
        if effect < 0:
            operands = self.pops(-effect)
            self.emit(f"{inst.opname}({', '.join(map(str, operands))}){note}")
        elif effect > 0:
            operand = self.named(len(self.stack) - 1) if self.stack else ""
            for _ in range(effect):
                self.stack.append(self.temp(f"{inst.opname}({operand})"))
        else:
            self.emit(f"#{note[3:]}")
        if inst.target is not None:
            target = self.index_of[id(inst.target)]
            self.spill(max(self.depths[target], 0))
            self.emit(f"# {inst.opname} may go to .L{self._offset(target)}")


def decompile(code: types.CodeType, table: Optional[VersionTable] = None, name: Optional[str] = None) -> str:
    """The readable view of ``code`` (see the module's docstring): a ``def`` (named ``name``,
    by default the code's name) whose body is the code's effects in order, with labels for
    its jumps."""
    return _View(code, table or current_table()).run(name)


def decompile_all(code: types.CodeType, table: Optional[VersionTable] = None) -> Dict[str, str]:
    """``decompile`` of ``code`` and of every code object among its constants, by qualified name."""
    out: Dict[str, str] = {}
    pending = [code]
    while pending:
        current = pending.pop(0)
        out[getattr(current, "co_qualname", current.co_name)] = decompile(current, table)
        pending += [c for c in current.co_consts if isinstance(c, types.CodeType)]
    return out
