"""Decoding code objects into version-neutral instructions, checked against ``dis``."""
from __future__ import annotations

import dis

import pytest

from opcode_tables import current_table
from opcode_tables.decode import decode, decode_cached, split_superinstructions

TABLE = current_table()


def loops_and_branches(n, flag):
    total = 0
    i = 0
    while i < n:
        if i % 3 == 0 and flag:
            total += i
        elif i % 3 == 1 or not flag:
            total -= 1
        i += 1
    for j in range(n):
        if j > 5:
            break
        total += j
    return total if total > 0 else -total


def with_handlers(x):
    try:
        y = 10 // x
    except ZeroDivisionError:
        y = -1
    finally:
        x = 0
    return y + x


def many_constants():
    # Over 256 distinct constants: later loads need an EXTENDED_ARG prefix.
    values = [
        0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5, 10.5, 11.5, 12.5, 13.5, 14.5, 15.5,
        16.5, 17.5, 18.5, 19.5, 20.5, 21.5, 22.5, 23.5, 24.5, 25.5, 26.5, 27.5, 28.5, 29.5, 30.5, 31.5,
    ]
    names = [
        "a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9", "b0", "b1", "b2", "b3", "b4", "b5",
        "b6", "b7", "b8", "b9", "c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9", "d0", "d1",
    ]
    return values, names


def _many_constants_code():
    lines = ["def f():", "    out = []"]
    lines += [f"    out.append({i} + 0.25)" for i in range(300)]
    lines += ["    return out"]
    namespace: dict = {}
    exec(compile("\n".join(lines), "<many>", "exec"), namespace)
    return namespace["f"].__code__


def _dis_by_offset(code):
    return {ins.offset: ins for ins in dis.get_instructions(code)}


def test_no_cache_or_extended_arg_units_and_offsets_match_dis():
    code = _many_constants_code()
    decoded = decode(code)
    names = {inst.opname for inst in decoded.instructions}
    assert "CACHE" not in names and "EXTENDED_ARG" not in names
    shown = _dis_by_offset(code)
    real = [ins for ins in shown.values() if ins.opname not in ("EXTENDED_ARG", "CACHE")]
    assert len(decoded.instructions) == len(real)
    for inst in decoded.instructions:
        ref = shown[inst.offset]
        assert (inst.opname, inst.arg if inst.arg is not None else None) == (ref.opname, ref.arg)
        assert inst.argval == ref.argval
    prefixed = [inst for inst in decoded.instructions if inst.ext_hint]
    assert prefixed, "300 constants must need EXTENDED_ARG somewhere"
    assert all(inst.arg > 0xFF for inst in prefixed)


@pytest.mark.parametrize("function", [loops_and_branches, with_handlers, many_constants])
def test_jump_targets_are_instructions_at_dis_targets(function):
    code = function.__code__
    decoded = decode(code)
    ids = {id(inst) for inst in decoded.instructions}
    for inst in decoded.instructions:
        spec = TABLE[inst.opname]
        if spec.jump is None:
            assert inst.target is None
            continue
        assert id(inst.target) in ids
        # dis reports the jump destination as argval (a byte offset); a target
        # with an EXTENDED_ARG prefix is reached at the prefix.
        prefix = 2 * inst.target.ext_hint
        assert inst.argval in (inst.target.offset, inst.target.offset - prefix)


def test_every_jump_kind_of_the_table_decodes():
    decoded = decode(loops_and_branches.__code__)
    seen = set()
    for inst in decoded.instructions:
        spec = TABLE[inst.opname]
        if spec.jump is None:
            continue
        forward = inst.target.offset > inst.offset
        seen.add((spec.jump, forward, spec.conditional))
        if spec.jump == "abs":
            assert inst.target.offset == inst.arg * TABLE.fact("jump_unit")
        elif spec.jump == "rel":
            assert forward, f"{inst.opname} is a forward-relative jump"
        else:
            assert not forward, f"{inst.opname} is a backward-relative jump"
    assert any(forward for (_, forward, _) in seen), "a forward jump"
    assert any(not forward for (_, forward, _) in seen), "a backward jump (the loops)"
    assert any(conditional for (_, _, conditional) in seen), "a conditional jump"
    kinds_in_table = {spec.jump for spec in TABLE.opcodes.values() if spec.jump and not spec.unsupported}
    if "abs" in kinds_in_table:
        assert any(kind == "abs" for (kind, _, _) in seen), "absolute jumps exist on this version"


def test_block_setup_or_exception_entries():
    code = with_handlers.__code__
    decoded = decode(code)
    if not TABLE.fact("exception_table"):
        setups = [inst for inst in decoded.instructions if TABLE[inst.opname].block_setup]
        assert len(setups) >= 2  # try/except inside try/finally
        for setup in setups:
            assert setup.target.offset > setup.offset
        assert all(inst.exc is None for inst in decoded.instructions)
        assert decoded.exception_entries == []
        return
    entries = dis.Bytecode(code).exception_entries
    assert entries
    starts = {}
    for inst in decoded.instructions:
        starts[inst.offset - 2 * inst.ext_hint] = inst
    for inst in decoded.instructions:
        begin = inst.offset - 2 * inst.ext_hint
        covering = [e for e in entries if e.start <= begin < e.end]
        if not covering:
            assert inst.exc is None
            continue
        (entry,) = covering
        assert inst.exc is not None
        assert starts[entry.target] is inst.exc.target
        assert (inst.exc.depth, inst.exc.lasti) == (entry.depth, entry.lasti)
    ranges = decoded.exception_entries
    assert [(r.start.offset - 2 * r.start.ext_hint, r.target.offset, r.depth, r.lasti) for r in ranges] == \
        [(e.start, e.target, e.depth, e.lasti) for e in entries]


def test_handlers_are_shared_per_entry():
    code = with_handlers.__code__
    decoded = decode(code)
    ids = {id(inst) for inst in decoded.instructions}
    if TABLE.fact("exception_table"):
        handlers = [inst.exc for inst in decoded.instructions if inst.exc is not None]
        assert decoded.exception_entries, "try/except/finally has exception-table entries"
        assert len({id(h) for h in handlers}) == len(decoded.exception_entries)
        assert all(id(h.target) in ids for h in handlers)
        return
    # The block stack's handlers are the SETUP_* jump targets: one per block setup dis shows,
    # each an instruction of the list, at the offset dis gives.
    setups = [inst for inst in decoded.instructions if TABLE[inst.opname].block_setup]
    shown = [ins for ins in dis.get_instructions(code) if TABLE[ins.opname].block_setup]
    assert len(setups) == len(shown) >= 2
    assert all(id(setup.target) in ids for setup in setups)
    assert [setup.target.offset for setup in setups] == [ins.argval for ins in shown]


def test_lines_match_dis():
    code = loops_and_branches.__code__
    decoded = decode(code)
    starts = dict(dis.findlinestarts(code))
    current = None
    for inst in decoded.instructions:
        begin = inst.offset - 2 * inst.ext_hint
        current = starts.get(begin, current)
        assert inst.line == current
    if TABLE.fact("linetable") == "locations":
        positions = list(code.co_positions())
        assert all(inst.positions == positions[inst.offset // 2] for inst in decoded.instructions)


def add(a, b):
    c = a + b
    return c * a


def test_superinstructions_split_or_identity():
    decoded = decode(add.__code__)
    fused = TABLE.fact("superinstructions")
    split = split_superinstructions(decoded.instructions)
    if not fused:
        assert split is decoded.instructions
        return
    originals = [inst for inst in decoded.instructions if inst.opname in fused]
    assert originals, "a + b loads two locals with one fused instruction"
    assert not any(inst.opname in fused for inst in split)
    assert len(split) == len(decoded.instructions) + len(originals)
    loads = [inst.argval for inst in split if inst.opname in ("LOAD_FAST", "LOAD_FAST_BORROW")]
    assert loads[:2] == ["a", "b"]
    # the cached input is untouched
    assert any(inst.opname in fused for inst in decoded.instructions)


def test_split_keeps_jump_targets_and_handlers_inside_the_list():
    for function in (loops_and_branches, with_handlers):
        split = split_superinstructions(decode(function.__code__).instructions)
        ids = {id(inst) for inst in split}
        for inst in split:
            if inst.target is not None:
                assert id(inst.target) in ids
            if inst.exc is not None:
                assert id(inst.exc.target) in ids


def test_decode_cached_memoises_per_code_object():
    first = decode_cached(add.__code__)
    assert decode_cached(add.__code__) is first
    assert first.split_instructions() is first.split_instructions()
    assert [i.opname for i in first.split_instructions()] == \
        [i.opname for i in split_superinstructions(first.instructions)]
    assert decode_cached(loops_and_branches.__code__) is not first
    assert first.code is add.__code__


def test_flag_bits_are_exposed():
    def calls():
        return len([1]) + str(2).count("2")

    code = calls.__code__
    decoded = decode(code)
    shown = _dis_by_offset(code)
    flags = TABLE.fact("arg_flags")
    loads = [inst for inst in decoded.instructions if inst.opname in ("LOAD_GLOBAL", "LOAD_ATTR", "LOAD_METHOD")]
    assert len(loads) == 3  # len, str, .count
    for inst in decoded.instructions:
        names = flags.get(inst.opname, ())
        for bit, name in enumerate(names):
            if name in ("push_null", "is_method"):
                assert getattr(inst, name) == bool((inst.arg >> bit) & 1)
        # dis writes the NULL a load also pushes into its argrepr ("NULL + len", "count + NULL|self").
        assert (inst.push_null or inst.is_method) == ("NULL" in shown[inst.offset].argrepr), inst.opname
    # Global calls push their NULL with LOAD_GLOBAL's flag exactly where the table has that flag.
    assert any(inst.push_null for inst in loads) == ("LOAD_GLOBAL" in flags)
