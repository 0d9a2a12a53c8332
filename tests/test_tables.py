"""The opcode tables checked against the running interpreter itself.

Rows and facts are compared with what ``dis`` / ``opcode`` report and with
code the interpreter compiles here, never with copies of the tables.
"""
from __future__ import annotations

import dis
import opcode
import platform
import types

import pytest

import opcode_tables
from opcode_tables import SUPPORTED_VERSIONS, current_table, table_for
from opcode_tables.decode import instructions_of
from opcode_tables.spec import OpcodeSpec, VersionTable

# The running interpreter's (major, minor): what the current table must be for.
RUNNING = tuple(int(part) for part in platform.python_version_tuple()[:2])
TABLE = current_table()

# Code that exercises jumps in both directions, closures, calls, comprehensions,
# exceptions and with blocks; compiled by the running interpreter.
SAMPLE = '''
import os

def loops(n, xs):
    total = 0
    i = 0
    while i < n:
        i += 1
        if i % 2 and i is not None:
            continue
        total = total + i
    for x in xs:
        if x is None:
            break
        total -= x
    while n:
        n -= 1
    return total or i and n

def closure(a, b=2, *, c=3):
    cell = a
    def inner(d=1):
        return cell + d
    return inner, [y * cell for y in range(b)], {k: v for k, v in zip("ab", "cd")}

def calls(f, obj, args, kw):
    g = len(args)
    f(1, key=2)
    obj.method(g, other=3)
    return f(*args, **kw), print(g), obj.attr, os.path.join("a", "b")

def handling(path, x, y):
    try:
        with open(path) as fh:
            data = fh.read()
    except OSError as exc:
        data = str(exc)
    finally:
        x = x + 1
    a, b, c, d = x < y, x <= y, x == y, x != y
    e, f = x > y, x >= y
    if x < y:
        a = not b
    return data[1:2], f"{x!r:>10}", a, b, c, d, e, f

def early(x):
    if x:
        return 1
    if x is None:
        raise ValueError(x)
    return 2
'''


def _code_objects(code: types.CodeType):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_objects(const)


SAMPLE_CODES = list(_code_objects(compile(SAMPLE, "<sample>", "exec")))


def _function_code(name: str) -> types.CodeType:
    return next(code for code in SAMPLE_CODES if code.co_name == name)


def _instructions():
    for code in SAMPLE_CODES:
        for inst in dis.get_instructions(code):
            yield code, inst


def _real_opnames():
    return {name for name, num in dis.opmap.items() if num < 256 and not name.startswith("INSTRUMENTED_")}


def _cache_entries(name: str) -> int:
    entries = getattr(opcode, "_inline_cache_entries", None)
    if entries is None:
        return 0
    if hasattr(entries, "get"):  # a dict on 3.13 and 3.14, a frozendict on 3.15
        return entries.get(name, 0)
    return entries[dis.opmap[name]]


# -- every version's table --------------------------------------------------

@pytest.mark.parametrize("version", SUPPORTED_VERSIONS, ids=lambda v: f"{v[0]}.{v[1]}")
def test_every_version_table_imports_here(version):
    table = table_for(version)
    assert isinstance(table, VersionTable)
    assert table.version == version
    assert set(table.facts) == set(table_for(SUPPORTED_VERSIONS[0]).facts)
    for name, spec in table.opcodes.items():
        assert spec.name == name


@pytest.mark.parametrize("version", SUPPORTED_VERSIONS, ids=lambda v: f"{v[0]}.{v[1]}")
def test_unsupported_rows_say_why(version):
    for spec in table_for(version).opcodes.values():
        if spec.unsupported is not None:
            assert spec.unsupported.strip(), f"{spec.name} in {version} is unsupported without a reason"
        if spec.decoder_only:
            assert spec.unsupported is None, f"{spec.name}: decoder_only rows are not 'unsupported'"


@pytest.mark.parametrize("version", SUPPORTED_VERSIONS, ids=lambda v: f"{v[0]}.{v[1]}")
def test_block_setup_rows_are_forward_conditional_jumps(version):
    for spec in table_for(version).opcodes.values():
        if spec.block_setup:
            assert spec.jump == "rel" and spec.conditional, spec
        if spec.conditional:
            assert spec.jump is not None and spec.flow == "next", spec


def test_table_for_rejects_unknown_versions_helpfully():
    with pytest.raises(ValueError) as info:
        table_for((3, 99))
    message = str(info.value)
    assert "3.99" in message
    for major, minor in SUPPORTED_VERSIONS:
        assert f"{major}.{minor}" in message
    with pytest.raises(ValueError, match="version tuple"):
        table_for("3.11")


def test_current_table_is_the_running_version_and_cached():
    assert TABLE.version == RUNNING
    assert current_table() is TABLE
    assert table_for(RUNNING + (0,)) is TABLE
    assert opcode_tables.module_name(RUNNING) == f"py{RUNNING[0]}{RUNNING[1]}"


# -- the running interpreter's table against dis / opcode ---------------------

def test_table_has_exactly_the_real_opcodes():
    real = _real_opnames()
    assert sorted(real - set(TABLE.opcodes)) == [], "opcodes of this interpreter missing from the table"
    assert sorted(set(TABLE.opcodes) - real) == [], "table rows this interpreter does not have"


def test_jump_kinds_match_dis():
    jabs = {dis.opname[num] for num in dis.hasjabs}
    if hasattr(dis, "hasjump"):  # 3.13: hasjrel/hasjabs are legacy; hasjump is the list
        jrel = {dis.opname[num] for num in dis.hasjump}
    else:
        jrel = {dis.opname[num] for num in dis.hasjrel}
    for name, spec in TABLE.opcodes.items():
        assert (spec.jump == "abs") == (name in jabs), name
        assert (spec.jump in ("rel", "rel_back")) == (name in jrel), name


def test_caches_match_inline_cache_entries():
    for name, spec in TABLE.opcodes.items():
        assert spec.caches == _cache_entries(name), name


def test_jump_targets_follow_kind_unit_and_caches():
    """Each compiled jump lands where the row's kind, the caches and jump_unit say."""
    unit = TABLE.fact("jump_unit")
    seen = set()
    for _, inst in _instructions():
        spec = TABLE[inst.opname]
        if spec.jump is None:
            continue
        seen.add(spec.jump)
        after = inst.offset + 2 + 2 * spec.caches
        expected = {
            "abs": inst.arg * unit,
            "rel": after + inst.arg * unit,
            "rel_back": after - inst.arg * unit,
        }[spec.jump]
        assert inst.argval == expected, inst
        if spec.jump == "rel_back":
            assert inst.argval <= inst.offset, inst
    assert "rel" in seen
    assert ("abs" in seen) or ("rel_back" in seen)


def test_instructions_after_a_terminator_are_only_reached_by_jumps():
    """After a row whose flow never falls through, the next instruction must be a jump target."""
    terminators = set()
    for code in SAMPLE_CODES:
        insts = list(dis.get_instructions(code))
        handlers = {entry.target for entry in getattr(dis.Bytecode(code), "exception_entries", ())}
        for inst, following in zip(insts, insts[1:]):
            if TABLE[inst.opname].flow == "next":
                continue
            terminators.add(TABLE[inst.opname].flow)
            assert following.is_jump_target or following.offset in handlers, (code.co_name, inst, following)
    assert {"jump", "return", "raise"} <= terminators


# -- facts against compiled code -----------------------------------------------

def test_facts_match_dis_tables():
    assert TABLE.fact("cmp_op") == tuple(dis.cmp_op)
    assert TABLE.fact("binary_ops") == tuple(getattr(dis, "_nb_ops", ()))
    assert TABLE.fact("intrinsics_1") == tuple(getattr(opcode, "_intrinsic_1_descs", ()))
    assert TABLE.fact("intrinsics_2") == tuple(getattr(opcode, "_intrinsic_2_descs", ()))
    assert TABLE.fact("common_constants") == tuple(getattr(opcode, "_common_constants", ()))
    assert TABLE.fact("special_methods") == tuple(getattr(dis, "_special_method_names", ()))
    flags = getattr(dis, "FUNCTION_ATTR_FLAGS", None)
    if flags is not None:
        assert TABLE.fact("function_attr_flags") == tuple(flags)


def test_iterator_and_call_ex_facts_match_stack_effects():
    """GET_ITER's slots are what POP_ITER (or, before it, the loop's POP_TOP) pops; where
    CALL_FUNCTION_EX takes no argument, its keyword slot is always on the stack."""
    if "POP_ITER" in TABLE:
        assert -dis.stack_effect(dis.opmap["POP_ITER"]) == TABLE.fact("iterator_slots")
    else:
        assert TABLE.fact("iterator_slots") == 1
    takes_arg = dis.opmap["CALL_FUNCTION_EX"] >= dis.HAVE_ARGUMENT
    assert TABLE.fact("call_function_ex_kwargs") == ("flag" if takes_arg else "slot")


def test_lazy_annotations_fact():
    namespace = {}
    source = "def f(x: NotDefinedAnywhere) -> None:\n    pass\n"
    try:
        exec(compile(source, "<annotations>", "exec", dont_inherit=True), namespace)
    except NameError:
        lazy = False
    else:
        lazy = True
    assert TABLE.fact("lazy_annotations") == lazy


@pytest.mark.filterwarnings("ignore:co_lnotab is deprecated:DeprecationWarning")
def test_code_fields_are_what_replace_accepts():
    code = _function_code("loops")
    for name in TABLE.fact("code_fields"):
        assert getattr(code.replace(**{name: getattr(code, name)}), name) == getattr(code, name)
    every = {name for name in dir(code) if name.startswith("co_")}
    for name in every - set(TABLE.fact("code_fields")):
        with pytest.raises(TypeError):
            code.replace(**{name: getattr(code, name)})


def test_line_and_exception_table_formats():
    code = _function_code("handling")
    fmt = TABLE.fact("linetable")
    assert fmt in ("lnotab", "linetable310", "locations")
    assert hasattr(code, "co_linetable") == (fmt != "lnotab")
    assert hasattr(code, "co_positions") == (fmt == "locations")
    assert hasattr(code, "co_exceptiontable") == TABLE.fact("exception_table")
    if TABLE.fact("exception_table"):
        assert len(code.co_exceptiontable) > 0
        assert not any(TABLE[i.opname].block_setup for i in dis.get_instructions(code))
    else:
        assert any(TABLE[i.opname].block_setup for i in dis.get_instructions(code))


def test_arg_flags_leave_the_name_index_above_them():
    flagged = TABLE.fact("arg_flags")
    seen = set()
    for code, inst in _instructions():
        flags = flagged.get(inst.opname)
        if flags is None:
            continue
        seen.add(inst.opname)
        assert code.co_names[inst.arg >> len(flags)] == inst.argval, inst
    assert seen == {name for name in flagged if name != "LOAD_SUPER_ATTR"}
    if "LOAD_GLOBAL" in flagged:
        bit = 1 << flagged["LOAD_GLOBAL"].index("push_null")
        calls = [i for i in dis.get_instructions(_function_code("calls")) if i.opname == "LOAD_GLOBAL"]
        assert any(i.arg & bit for i in calls)  # len(...) / print(...) push a NULL


def test_load_super_attr_flag_bits():
    flags = TABLE.fact("arg_flags").get("LOAD_SUPER_ATTR")
    if "LOAD_SUPER_ATTR" not in TABLE:
        assert flags is None
        return
    source = ("class A:\n def f(self):\n"
              "  return super().x, super().m(), super(A, self).x, super(A, self).m()\n")
    method = [c for c in _code_objects(compile(source, "<s>", "exec")) if c.co_name == "f"][0]
    args = [i.arg for i in dis.get_instructions(method) if i.opname == "LOAD_SUPER_ATTR"]
    is_method, two_arg = 1 << flags.index("is_method"), 1 << flags.index("two_arg")
    assert [bool(a & is_method) for a in args] == [False, True, False, True]
    assert [bool(a & two_arg) for a in args] == [False, False, True, True]
    assert {method.co_names[a >> len(flags)] for a in args} == {"x", "m"}


def test_compare_op_encoding():
    shift = TABLE.fact("compare_op_shift")
    masks = TABLE.fact("compare_op_masks")
    bool_bit = TABLE.fact("compare_op_bool_bit")
    seen = set()
    for _, inst in _instructions():
        if inst.opname != "COMPARE_OP":
            continue
        symbol = dis.cmp_op[inst.arg >> shift]
        assert symbol == inst.argval, inst
        seen.add(symbol)
        low = inst.arg & ((1 << shift) - 1) & ~bool_bit
        assert low == masks.get(symbol, 0), inst
    assert seen >= {"<", "<=", "==", "!=", ">", ">="}


def test_superinstructions_split_into_two_locals():
    fused = TABLE.fact("superinstructions")
    seen = set()
    for code, inst in _instructions():
        if inst.opname not in fused:
            continue
        seen.add(inst.opname)
        first, second = fused[inst.opname]
        assert first in TABLE and second in TABLE
        assert (code.co_varnames[inst.arg >> 4], code.co_varnames[inst.arg & 15]) == inst.argval
    assert seen <= set(fused)
    if fused:
        assert seen, "the sample should produce at least one superinstruction"


def test_call_sequence_facts():
    opnames = [i.opname for i in dis.get_instructions(_function_code("calls"))]
    keyword_opcode = {"none": "CALL_FUNCTION_KW", "kw_names_op": "KW_NAMES", "call_kw_op": "CALL_KW"}
    assert keyword_opcode[TABLE.fact("kw_names")] in opnames
    assert ("PRECALL" in opnames) == TABLE.fact("has_precall")
    layout = TABLE.fact("call_null_layout")
    assert layout in (None, "null_first", "callable_first")
    assert (layout is None) == ("PUSH_NULL" not in TABLE)


def test_function_creation_facts():
    code = _function_code("closure")
    insts = list(dis.get_instructions(code))
    make = [n for n, i in enumerate(insts) if i.opname == "MAKE_FUNCTION"]
    assert make
    before = insts[make[0] - 1]
    qualname_on_stack = before.opname == "LOAD_CONST" and isinstance(before.argval, str)
    assert qualname_on_stack == TABLE.fact("make_function_qualname_on_stack")
    has_set_attr = any(i.opname == "SET_FUNCTION_ATTRIBUTE" for i in insts)
    assert has_set_attr == (TABLE.fact("function_attrs") == "set_function_attribute")
    assert TABLE.fact("function_attr_flags")[0] == "defaults"


def test_deref_index_space():
    code = _function_code("closure")
    stores = [i for i in dis.get_instructions(code) if i.opname == "STORE_DEREF"]
    assert stores
    if TABLE.fact("deref_index") == "cells_then_frees":
        names = code.co_cellvars + code.co_freevars
    else:
        assert TABLE.fact("deref_index") == "localsplus"
        names = code.co_varnames + tuple(c for c in code.co_cellvars if c not in code.co_varnames) \
            + code.co_freevars
    for inst in stores:
        assert names[inst.arg] == inst.argval


def test_comprehensions_and_prologue():
    closure_consts = [c for c in _function_code("closure").co_consts if isinstance(c, types.CodeType)]
    nested_comprehensions = [c for c in closure_consts if c.co_name in ("<listcomp>", "<dictcomp>")]
    assert bool(nested_comprehensions) != TABLE.fact("comprehensions_inlined")
    prologue = TABLE.fact("frame_prologue")
    for code in SAMPLE_CODES:
        opnames = [i.opname for i in dis.get_instructions(code)]
        body = [n for n in opnames if n not in ("MAKE_CELL", "COPY_FREE_VARS")]
        assert tuple(body[:len(prologue)]) == prologue, code.co_name


# -- derive() ------------------------------------------------------------------

def _tiny_table() -> VersionTable:
    return VersionTable(version=(9, 0), opcodes={"NOP": OpcodeSpec("NOP")}, facts={"jump_unit": 1})


def test_derive_applies_add_remove_change_and_facts():
    base = _tiny_table()
    derived = base.derive((9, 1), add=[OpcodeSpec("RESUME")], change=[base.changed("NOP", note="x")],
                          facts={"jump_unit": 2})
    assert set(derived.opcodes) == {"NOP", "RESUME"}
    assert derived["NOP"].note == "x" and base["NOP"].note == ""
    assert derived.fact("jump_unit") == 2 and base.fact("jump_unit") == 1
    assert derived.handlers == {} and derived.handlers is not base.handlers
    assert set(base.derive((9, 1), remove=["NOP"]).opcodes) == set()


@pytest.mark.parametrize("kwargs, message", [
    ({"remove": ["MISSING"]}, "cannot remove MISSING"),
    ({"add": [OpcodeSpec("NOP")]}, "NOP already exists"),
    ({"change": [OpcodeSpec("MISSING")]}, "cannot change MISSING"),
    ({"facts": {"no_such_fact": 1}}, "unknown encoding fact"),
])
def test_derive_rejects_inconsistent_deltas(kwargs, message):
    with pytest.raises(KeyError, match=message):
        _tiny_table().derive((9, 1), **kwargs)


def test_opcode_spec_rejects_bad_kinds():
    with pytest.raises(ValueError, match="jump kind"):
        OpcodeSpec("X", jump="sideways")
    with pytest.raises(ValueError, match="flow"):
        OpcodeSpec("X", flow="teleport")


def test_bind_handler_checks_the_opname():
    table = _tiny_table()
    table.bind_handler("NOP", print)
    with pytest.raises(KeyError, match="already has a handler"):
        table.bind_handler("NOP", print)
    with pytest.raises(KeyError, match="not an opcode"):
        table.bind_handler("RESUME", print)


# -- stack facts of the rows (what graph breaks rely on), against compiled code -------

STACK_SAMPLE = '''
def calls(f, o, a, k, g):
    f(1)
    f(1, k=2)
    f(*a, **k)
    o.m(1)
    o.m(1, k=2)
    g(1, 2)

def swaps(a, b, c, x, i, v):
    a, b = b, a
    a, b, c = c, b, a
    x.a += v
    x[i] += v

def withs(cm):
    with cm:
        pass
    with cm as e:
        pass

def shadow(y):
    x = 1
    return [x for x in y]

def try_finally():
    try:
        pass
    finally:
        pass

def loop(ys):
    for y in ys:
        pass

def delegate(it):
    yield from it

async def async_with(cm):
    async with cm:
        pass

def truth(a, b):
    if a:
        pass
    if not b:
        pass
    while a:
        a = b
    return a and b

def cells(a):
    return lambda: a
'''
STACK_CODES = {code.co_name: code for code in _code_objects(compile(STACK_SAMPLE, "<stack sample>", "exec"))}


def _stack_sample(name: str):
    return instructions_of(STACK_CODES[name])[0]


def _rows(field: str):
    return {name for name, spec in TABLE.opcodes.items() if getattr(spec, field)}


def _effect(inst) -> int:
    return dis.stack_effect(dis.opmap[inst.opname], inst.arg if dis.opmap[inst.opname] >= dis.HAVE_ARGUMENT else None)


def test_call_rows_are_what_ends_every_call():
    insts = _stack_sample("calls")
    ending = {insts[i - 1].opname for i, inst in enumerate(insts) if inst.opname == "POP_TOP"}
    assert len(ending) >= 2
    assert ending == _rows("is_call")


def test_with_entry_rows_are_what_follows_the_context_manager():
    insts = _stack_sample("withs")
    entering = {insts[i + 1].opname for i, inst in enumerate(insts)
                if inst.opname.startswith("LOAD_FAST") and inst.argval == "cm"}
    if TABLE.fact("special_methods"):
        # 3.14+: the manager is copied and __exit__ / __enter__ looked up with LOAD_SPECIAL, then
        # CALLed: no single instruction enters the block, so no row says it does.
        assert entering <= _rows("permutes_stack") and not _rows("enters_with")
        assert "LOAD_SPECIAL" in {inst.opname for inst in insts}
    else:
        assert entering == _rows("enters_with")


def test_permuting_rows_are_the_nameless_instructions_that_keep_or_grow_the_stack():
    """In tuple swaps and augmented assignments, what moves or copies slots is exactly the
    instructions that name no variable or constant and do not shrink the stack (the frame
    prologue aside); those are the permuting rows."""
    named = set(dis.hasname) | set(dis.haslocal) | set(dis.hasconst) | set(dis.hasfree)
    # 3.14+ constant loads that dis does not list in hasconst: their operand is the value itself
    # or an index into the interpreter's own table of common constants.
    named |= {dis.opmap[name] for name in ("LOAD_SMALL_INT", "LOAD_COMMON_CONSTANT") if name in dis.opmap}
    prologue = set(TABLE.fact("frame_prologue"))
    insts = _stack_sample("swaps")
    moving = {i.opname for i in insts if dis.opmap[i.opname] not in named and i.opname not in prologue
              and TABLE[i.opname].flow == "next" and _effect(i) >= 0}
    assert moving, "x.a += v copies the object"
    assert moving == {i.opname for i in insts if TABLE[i.opname].permutes_stack}


def test_null_rows_are_emitted_where_a_null_is_pushed():
    calls = _stack_sample("calls")
    # o.m(...): a load after the receiver that pushes a pair, [NULL|method, callable|self],
    # is a NULL row, or a flag bit of a row that also loads plain attributes.
    pairs = [calls[i + 1] for i, inst in enumerate(calls)
             if inst.opname.startswith("LOAD_FAST") and inst.argval == "o" and _effect(calls[i + 1]) == 1]
    assert pairs, "o.m(1) loads the method as a pair on every version"
    for pair in pairs:
        assert TABLE[pair.opname].may_push_null or pair.is_method
    # g(1, 2) with g a local: the call sequence needs a NULL beside the callable where the
    # version's call layout has one, pushed by exactly one NULL row.
    start = max(i for i, inst in enumerate(calls) if inst.opname.startswith("LOAD_FAST") and inst.argval == "g")
    statement = calls[start - 1:start + 2]
    pushed = [inst for inst in statement if TABLE[inst.opname].may_push_null]
    assert len(pushed) == (0 if TABLE.fact("call_null_layout") is None else 1)
    # Every NULL row is one this interpreter emits (calls, a comprehension saving a shadowed
    # name, a finally block's "no exception" marker).
    emitted = {inst.opname for name in ("calls", "shadow", "try_finally") for inst in _stack_sample(name)}
    assert _rows("may_push_null") <= emitted


def test_rows_after_which_code_cannot_resume():
    loop = _stack_sample("loop")
    after_iter = [loop[i + 1] for i, inst in enumerate(loop) if inst.opname == "GET_ITER"]
    entering = [insts[i + 1] for insts in [_stack_sample("async_with")] for i, inst in enumerate(insts)
                if inst.opname.startswith("LOAD_FAST") and inst.argval == "cm"]
    # (3.14+ enters an async with by copying the manager for LOAD_SPECIAL: that copy is not
    # the entry; coroutines are never compiled anyway.)
    for inst in after_iter + [e for e in entering if not TABLE[e.opname].permutes_stack]:
        assert not TABLE[inst.opname].resumable_after, inst.opname
    emitted = {inst.opname for name in ("loop", "delegate", "async_with") for inst in _stack_sample(name)}
    assert {name for name, spec in TABLE.opcodes.items() if not spec.resumable_after} <= emitted


def test_exact_bool_rows_are_the_jumps_after_to_bool():
    insts = _stack_sample("truth")
    after_to_bool = {insts[i + 1].opname for i, inst in enumerate(insts) if inst.opname == "TO_BOOL"}
    assert after_to_bool == _rows("pops_exact_bool")


def test_stack_effect_shared_with_names_the_instruction_dis_books_it_on():
    insts = _stack_sample("calls")
    prefix = set(TABLE.fact("call_prefix"))
    checked = 0
    for i, inst in enumerate(insts):
        spec = TABLE[inst.opname]
        if not spec.is_call:
            continue
        before = insts[i - 1]
        if spec.stack_effect_shared_with is not None:
            assert before.opname == spec.stack_effect_shared_with
            assert _effect(before) != 0
            checked += 1
        elif before.opname in prefix:
            assert _effect(before) == 0, f"{before.opname} before {inst.opname}"
            checked += 1
    assert checked or not prefix


def test_cell_creation_fact():
    made_by_code = any(inst.opname == "MAKE_CELL" for inst in _stack_sample("cells"))
    assert TABLE.fact("cell_creation") == ("make_cell" if made_by_code else "frame_entry")
