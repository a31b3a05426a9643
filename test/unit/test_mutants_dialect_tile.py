"""The ``tile`` dialect's rules at their exact edges (found by ``benchmarks/mutation.py``).

Each case pins one comparison or branch of ``dialect/tile.py`` that the verifier
and limit tests left free: the value at a limit is taken and the one past it is
refused with the verifier's message, so an off-by-one or a flipped test fails
here. Kernels are built with the dialect's op builders (``support.tile_build``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import support.tile_build as tb

from gemm_opt.core.contract import NUM_WARPS, TARGET, THREADS_PER_WARP, WARP_LAYOUT, WARP_LAYOUTS
from gemm_opt.core.diagnostics import collect
from gemm_opt.core.ext_compat import MLIRError, arith, func, ir, scf
from gemm_opt.core.layouts import PaddedShared, PartitionedShared, SwizzledShared
from gemm_opt.core.targets import TARGETS, Mma
from gemm_opt.core.tdm_layout import tdm_warp_layout
from gemm_opt.dialect import make_context, tile

# ---- the IRDL module's bytecode cache -----------------------------------------------------


def _emitter() -> type:
    """The base class whose ``_emit_module`` builds the IRDL module op by op."""
    return next(c for c in tile.Tile.__mro__[1:] if "_emit_module" in c.__dict__)


def test_the_irdl_module_is_emitted_once_then_parsed_from_its_bytecode(monkeypatch) -> None:
    monkeypatch.setattr(tile.Tile, "_irdl_bytecode", None)
    with make_context():
        first = str(tile.Tile._emit_module())
    calls: list[type] = []
    real = _emitter().__dict__["_emit_module"]

    def counting(cls: type) -> ir.Module:
        calls.append(cls)
        return real.__func__(cls)

    monkeypatch.setattr(_emitter(), "_emit_module", classmethod(counting))
    with make_context():
        again = str(tile.Tile._emit_module())
    assert calls == []  # the same definitions: the cached bytecode, not a second emission
    assert again == first


def test_a_cache_of_other_definitions_is_not_used(monkeypatch) -> None:
    """A bytecode cached for another set of definitions (an op added since) is stale."""
    monkeypatch.setattr(tile.Tile, "_irdl_bytecode", ((-1,), b"not bytecode"))
    with make_context():
        text = str(tile.Tile._emit_module())
    assert "irdl.dialect @tile" in text and "irdl.operation @load_block" in text
    assert tile.Tile._irdl_bytecode[1] != b"not bytecode"


# ---- int_value: integer attributes of a width, or of any width up to 64 ---------------------


def _int_attr(width: int, value: int) -> ir.Attribute:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(width), value)


@pytest.mark.parametrize(("width", "value"), [(1, 0), (8, -3), (32, 7), (64, (1 << 62) + 5)])
def test_int_value_of_any_width_reads_one_to_64_bits(width: int, value: int) -> None:
    with make_context():
        assert tile.int_value(_int_attr(width, value), "x", width=None) == value


def test_int_value_of_any_width_refuses_an_index_and_wider_than_64_bits() -> None:
    with make_context():
        index = ir.IntegerAttr.get(ir.IndexType.get(), 3)
        with pytest.raises(tile.VerifyError, match="x must be an integer, got 3 : index"):
            tile.int_value(index, "x", width=None)
        with pytest.raises(tile.VerifyError, match="x must be an integer, got 3 : i65"):
            tile.int_value(_int_attr(65, 3), "x", width=None)


@pytest.mark.parametrize("width", [1, 16, 64])
def test_int_value_of_a_width_refuses_the_others(width: int) -> None:
    with make_context():
        assert tile.int_value(_int_attr(32, 5), "x") == 5
        attr = _int_attr(width, 1)
        with pytest.raises(tile.VerifyError, match=f"x must be an i32 integer, got {attr}$"):
            tile.int_value(attr, "x")


# ---- tile.num_warps --------------------------------------------------------------------


@pytest.mark.parametrize("num_warps", [1, 2, 4, 16])
def test_num_warps_is_any_power_of_two_from_one(num_warps: int) -> None:
    tile.check_num_warps(num_warps, ())
    tile.check_num_warps(num_warps, [TARGETS["gfx942"]])


@pytest.mark.parametrize("num_warps", [0, -4, 3, 6, 12])
def test_num_warps_not_a_power_of_two_is_refused(num_warps: int) -> None:
    with pytest.raises(
        tile.VerifyError,
        match=f"^'tile.num_warps' must be a power of two >= 1, got {num_warps}$",
    ):
        tile.check_num_warps(num_warps, ())


def test_a_module_of_one_warp_verifies() -> None:
    with make_context(), ir.Location.unknown():
        module = tb.kernel([], num_warps=1).module
        assert tile.verify_module_attributes(module.operation) == []
        module.operation.attributes[NUM_WARPS] = tb.i32_attr(0)
        assert tile.verify_module_attributes(module.operation) == [
            "'tile.num_warps' must be a positive integer, got 0 : i32"
        ]


# ---- verify_for_target: a module that names no target, checked for the one it lowers for -----


def _swizzled() -> ir.Attribute:
    return tile.SwizzledSharedAttr.build(vec=1, per_phase=1, max_phase=1, order=[1, 0])


def _alloc(shape: list[int], line: int) -> None:
    block = tb.block_type(shape, ir.F16Type.get(), _swizzled())
    tile.LocalAllocOp(tb.shared_type(block), loc=ir.Location.file("k.mlir", line, 5))


def _two_kernels_of_128_kib(**kernel: Any) -> ir.Module:
    """Two kernels, each with one 128 KiB buffer: more than gfx942's LDS, within gfx1250's."""
    k = tb.kernel([], num_warps=4, **kernel)
    with k.ip:
        _alloc([128, 512], 3)
    with ir.InsertionPoint(k.module.body):
        fn = func.FuncOp("g", ir.FunctionType.get([], []))
    with ir.InsertionPoint(fn.add_entry_block()):
        _alloc([128, 512], 9)
        func.ReturnOp([])
    return k.module


def test_verify_for_target_reports_the_first_op_error_for_that_target() -> None:
    with make_context(), ir.Location.unknown():
        module = _two_kernels_of_128_kib()
        assert module.operation.verify()  # gfx1250 holds it
        problem = tile.verify_for_target(module.operation, "gfx942")
        assert problem is not None
        assert str(problem.location) == 'loc("k.mlir":3:5)'
        assert problem.message == (
            "'tile.local_alloc' op a 128x512 buffer takes 131072 bytes of shared memory, "
            "but gfx942 has 65536 per workgroup"
        )
        assert ir.StringAttr(module.operation.attributes[TARGET]).value == "gfx942"


def test_verify_for_target_reports_a_module_rule_at_the_module() -> None:
    with make_context(), ir.Location.file("k.mlir", 1, 1):
        k = tb.kernel([], num_warps=32)  # 1,024 threads of 32, 2,048 of 64
        assert k.module.operation.verify()
        problem = tile.verify_for_target(k.module.operation, "gfx942")
        assert problem == tile.TargetProblem(
            k.module.operation.location,
            "'tile.num_warps' = 32 needs 2048 threads per workgroup (32 warps x 64 threads), "
            "but gfx942 launches at most 1024 (at most 16 warps)",
        )


def test_verify_for_target_overrides_the_warp_size_and_adds_none() -> None:
    with make_context(), ir.Location.unknown():
        sized = tb.kernel([], num_warps=4, threads_per_warp=32).module
        assert tile.verify_for_target(sized.operation, "gfx942") is None
        warp = sized.operation.attributes[THREADS_PER_WARP]
        assert str(warp) == "64 : i32"
        unsized = tb.kernel([], num_warps=4).module
        assert tile.verify_for_target(unsized.operation, "gfx942") is None
        assert THREADS_PER_WARP not in unsized.operation.attributes


def test_verify_for_target_of_the_named_target_is_the_parse_time_verdict() -> None:
    with make_context(), ir.Location.unknown():
        module = _two_kernels_of_128_kib(target="gfx1250")
        assert tile.verify_for_target(module.operation, "gfx1250") is None


def test_verify_for_target_prints_nothing(capfd) -> None:
    """The diagnostics it collects are its result: none reaches stderr."""
    with make_context(), ir.Location.unknown():
        assert tile.verify_for_target(_two_kernels_of_128_kib().operation, "gfx942")
    assert capfd.readouterr().err == ""


# ---- module-wide rules: region depth, tile types wherever they occur -------------------------


def _nested_ifs(n: int) -> ir.Module:
    """A kernel whose body nests ``n`` ``scf.if`` ops: its deepest region is n + 2 levels
    down (the module's region, the function's, then one per ``scf.if``)."""
    k = tb.kernel([ir.IntegerType.get_signless(1)], num_warps=4)
    ip = k.ip
    for _ in range(n):
        with ip:
            branch = scf.IfOp(k.args[0])
        with ir.InsertionPoint(branch.then_block):
            ip = ir.InsertionPoint(scf.YieldOp([]))
    return k.module


def test_regions_nest_up_to_max_region_depth() -> None:
    depth = tile.MAX_REGION_DEPTH
    with make_context(), ir.Location.unknown():
        assert tile.verify_module_attributes(_nested_ifs(depth - 2).operation) == []
        assert tile.verify_module_attributes(_nested_ifs(depth - 1).operation) == [
            f"a 'scf.if' opens a region {depth + 1} levels deep; at most {depth} nested "
            "regions are supported"
        ]


@pytest.mark.parametrize(
    ("make", "what"), [(tb.desc_type, "a TDM descriptor"), (tb.shared_type, "a shared buffer")]
)
def test_a_block_type_names_itself_in_its_element_type_error(make, what: str) -> None:
    with make_context(), ir.Location.unknown():
        t = make(tb.block_type([16, 16], ir.IntegerType.get_signless(1), _swizzled()))
        with pytest.raises(tile.VerifyError, match=f"^{what} must have one of the element types"):
            tile.check_type(t)


# ---- layout fields: kinds and defaults -----------------------------------------------------


def _i64(value: int) -> ir.Attribute:
    return _int_attr(64, value)


def _raw(cls: type, **fields: ir.Attribute) -> tile.LayoutAttr:
    """A layout attribute of ``fields`` as given (``build`` converts by kind)."""
    return cls(cls.get(ir.DictAttr.get(fields)))


def test_a_bool_field_takes_true_or_false_only() -> None:
    with make_context():
        for value in (True, False):
            attr = _raw(tile.WmmaAttr, transposed=ir.BoolAttr.get(value))
            assert attr.field_values() == {"transposed": value}
        attr = _raw(tile.WmmaAttr, transposed=_i64(1))
        with pytest.raises(
            tile.VerifyError,
            match=r"^#tile\.wmma_layout field 'transposed' must be true or false, got 1 : i64$",
        ):
            attr.field_values()


def test_a_layout_field_takes_a_tile_layout_only() -> None:
    with make_context():
        attr = tile.DotOperandAttr.build(op_idx=0, parent=_i64(1))
        with pytest.raises(
            tile.VerifyError,
            match=r"^#tile\.dot_operand field 'parent' must be a #tile layout attribute, got 1 : i64$",
        ):
            attr.field_values()
        ints = _raw(tile.WmmaAttr, warps_per_cta=tile.WmmaAttr.build(version=3))
        with pytest.raises(tile.VerifyError, match="field 'warps_per_cta' must be array<i64"):
            ints.field_values()


def test_layouts_without_optional_fields_take_their_defaults() -> None:
    with make_context():
        assert tile.SwizzledSharedAttr.build().to_layout() == SwizzledShared(1, 1, 1, (1, 0))
        padded = tile.PaddedSharedAttr.build(interval=32, amount=4)
        assert padded.to_layout() == PaddedShared(32, 4, (1, 0))


@pytest.mark.parametrize("fields", [{"interval": 32}, {"amount": 4}, {}])
def test_a_padded_layout_needs_interval_and_amount(fields: dict[str, int]) -> None:
    with make_context():
        with pytest.raises(
            tile.VerifyError, match=r"^#tile\.padded_shared needs fields 'interval' and 'amount'$"
        ):
            tile.PaddedSharedAttr.build(**fields).to_layout()


def test_a_partitioned_layout_has_at_least_one_partition_and_group() -> None:
    with make_context():
        one = tile.PartitionedSharedAttr.build(num_partitions=1, num_groups=1, partition_dim=0)
        assert one.to_layout() == PartitionedShared(1, 1, 0, SwizzledShared())
        for parts, groups in ((0, 1), (1, 0), (0, 0)):
            attr = tile.PartitionedSharedAttr.build(
                num_partitions=parts, num_groups=groups, partition_dim=0
            )
            with pytest.raises(tile.VerifyError, match=r"at least one partition and group$"):
                attr.to_layout()


# ---- register layouts: WMMA and its operands ---------------------------------------------


def _wmma(**fields: Any) -> tile.WmmaAttr:
    return tile.WmmaAttr.build(**fields)


def test_a_wmma_layout_defaults_to_the_16x16x32_instruction() -> None:
    with make_context():
        assert _wmma(warps_per_cta=[2, 2]).instr_shape() == (16, 16, 32)
        assert _wmma(warps_per_cta=[2, 2], instr_shape=[16, 16, 64]).instr_shape() == (16, 16, 64)


@pytest.mark.parametrize("warps", [None, [4], [2, 2, 1]])
def test_a_wmma_layout_needs_two_warp_counts(warps: list[int] | None) -> None:
    with make_context():
        attr = _wmma() if warps is None else _wmma(warps_per_cta=warps)
        with pytest.raises(
            tile.VerifyError, match=r"^#tile\.wmma_layout needs warps_per_cta = array<i64: WM, WN>$"
        ):
            attr.warps_per_cta()


@pytest.mark.parametrize("given", [None, False, True])
@pytest.mark.parametrize("target", sorted(TARGETS))
def test_a_wmma_layout_transposed_on_every_target(target: str, given: bool | None) -> None:
    """Given: as given; omitted: false where the target's layout has a default (WMMA's
    parser, or no such flag), refused on MFMA (Triton's amd_mfma has none)."""
    fields = {} if given is None else {"transposed": given}
    with make_context():
        attr = _wmma(warps_per_cta=[2, 2], **fields)
        t = TARGETS[target]
        if given is None and t.mma in (Mma.MFMA_V3, Mma.MFMA_V4):
            with pytest.raises(
                tile.VerifyError,
                match=rf"^#tile\.wmma_layout needs field 'transposed' on {target}, whose ",
            ):
                attr.transposed(t)
        else:
            assert attr.transposed(t) is bool(given)


def _operand(**fields: Any) -> tile.DotOperandAttr:
    return tile.DotOperandAttr.build(op_idx=0, parent=_wmma(warps_per_cta=[2, 2]), **fields)


def test_a_dot_operand_holds_8_k_elements_unless_given() -> None:
    with make_context():
        assert _operand().k_width() == 8
        assert _operand(k_width=4).k_width() == 4


@pytest.mark.parametrize("k_width", [1, 2, 16, 32])
def test_a_dot_operand_k_width_is_a_power_of_two_up_to_the_instruction_k(k_width: int) -> None:
    with make_context():
        _operand(k_width=k_width).check(2)


@pytest.mark.parametrize("k_width", [0, -2, 3, 12, 64])
def test_a_dot_operand_k_width_off_the_powers_of_two_to_32_is_refused(k_width: int) -> None:
    with make_context():
        with pytest.raises(
            tile.VerifyError,
            match=rf"^#tile\.dot_operand k_width = {k_width} must be a power of two from 1 to 32 ",
        ):
            _operand(k_width=k_width).check(2)


# ---- a TDM copy's attached warp layout --------------------------------------------------


def _copy_errors(hint: int | None, warp_layout: Callable[[dict[str, Any]], ir.Attribute]):
    """The verifier's messages for a 4-warp gfx1250 copy of a 128x64 f16 padded block
    whose ``tile.warp_layout`` is ``warp_layout`` of the fields the layout should have."""
    with make_context() as ctx, ir.Location.unknown():
        layout = tile.PaddedSharedAttr.build(interval=64, amount=8, order=[1, 0])
        block = tb.block_type([128, 64], ir.F16Type.get(), layout)
        k = tb.kernel([tb.desc_type(block), tb.shared_type(block)], num_warps=4, target="gfx1250")
        want = tile.warp_layout_fields(tdm_warp_layout([128, 64], 4, hint, layout.to_layout()))
        with k.ip:
            op = tb.copy(k.args[0], k.args[1], hint=hint)
            op.attributes[WARP_LAYOUT] = warp_layout(want)
        with collect(ctx) as diags:
            try:
                k.module.operation.verify()
            except MLIRError:
                return [d.message for d in diags if d.severity == "error"]
        return []


COPY = "'tile.async_tdm_copy_global_to_local' op 'tile.warp_layout'"


@pytest.mark.parametrize("hint", [None, 0x3, 0xF])
def test_the_warp_layout_tdm_warp_layout_computes_verifies(hint: int | None) -> None:
    assert _copy_errors(hint, lambda want: tile.TdmWarpLayoutAttr.build(**want)) == []


@pytest.mark.parametrize(
    ("hint", "what"), [(None, "an unhinted copy"), (0x3, "warp_used_hint 0x3")]
)
def test_a_warp_layout_of_another_anchor_is_refused(hint: int | None, what: str) -> None:
    def moved(want: dict[str, Any]) -> ir.Attribute:
        return tile.TdmWarpLayoutAttr.build(**{**want, "anchor": want["anchor"] ^ 1})

    assert _copy_errors(hint, moved) == [
        f"{COPY} does not match {what}: expected anchor = 0, got anchor = 1"
    ]


def test_a_warp_layout_that_is_not_a_tdm_warp_layout_is_refused() -> None:
    assert _copy_errors(0x3, lambda _: tb.i32_attr(1)) == [
        f"{COPY} needs a #tile.tdm_warp_layout and tile.num_warps"
    ]


@pytest.mark.parametrize(("interval", "amount"), [(0, 8), (64, 0), (48, 8), (64, -8)])
def test_a_padded_layout_pads_by_powers_of_two(interval: int, amount: int) -> None:
    with make_context():
        attr = tile.PaddedSharedAttr.build(interval=interval, amount=amount)
        with pytest.raises(
            tile.VerifyError, match=f"must be powers of two, got {interval} and {amount}$"
        ):
            attr.to_layout()


# ---- types and the verifier's safety net -------------------------------------------------


@pytest.mark.parametrize("shape", [[0, 16], [16, 0], [0, 0]])
def test_a_block_with_an_empty_dimension_is_refused(shape: list[int]) -> None:
    with make_context(), ir.Location.unknown():
        t = tb.shared_type(tb.block_type(shape, ir.F16Type.get(), _swizzled()))
        with pytest.raises(
            tile.VerifyError, match=rf"has a non-positive dimension in shape \[{shape[0]}, "
        ):
            tile.check_type(t)


def test_element_bits_of_a_type_no_memory_op_moves_is_zero() -> None:
    with make_context():
        assert tile.element_bits(ir.IntegerType.get_signless(4)) == 0
        assert tile.element_bits(ir.IntegerType.get_signless(1)) == 1
        assert tile.element_bits(ir.F16Type.get()) == 16


def test_a_verifier_bug_is_an_internal_error_not_a_pass(monkeypatch) -> None:
    def broken(self: tile.TileOp) -> None:
        raise KeyError("boom")

    monkeypatch.setattr(tile.WarpIdOp, "verify", broken)
    with make_context() as ctx, ir.Location.unknown():
        k = tb.kernel([], num_warps=4)
        with k.ip:
            tile.WarpIdOp()
        with collect(ctx) as diags, pytest.raises(MLIRError):
            k.module.operation.verify()
    assert [d.message for d in diags] == [
        "'tile.warp_id' op internal verifier error: KeyError: 'boom'"
    ]


# ---- warp sizes, blocked layouts, TDM's shared layouts --------------------------------------


def _warp_id_op(**kernel: Any) -> tuple[ir.Module, tile.TileOp]:
    """A ``tile.warp_id`` in a kernel, with its module (which must outlive the op)."""
    k = tb.kernel([], num_warps=4, **kernel)
    with k.ip:
        return k.module, tile.WarpIdOp()


@pytest.mark.parametrize(
    ("kernel", "size"),
    [
        ({"target": "gfx942"}, 64),
        ({"target": "gfx1250"}, 32),
        ({"threads_per_warp": 32}, 32),  # gfx1250 and cuda:90 alike
        ({"threads_per_warp": 64}, 64),
        ({}, None),  # warps of 32 and of 64
    ],
)
def test_an_ops_warp_size_is_that_of_every_possible_target(
    kernel: dict[str, Any], size: int | None
) -> None:
    with make_context(), ir.Location.unknown():
        _, op = _warp_id_op(**kernel)
        assert op.warp_size() == size


def _blocked(size_per_thread: list[int]) -> tile.BlockedAttr:
    return tile.BlockedAttr.build(
        size_per_thread=size_per_thread,
        threads_per_warp=[4, 8],
        warps_per_cta=[2, 2],
        order=[1, 0],
    )


@pytest.mark.parametrize("size_per_thread", [[1, 0], [0, 4], [-1, 1]])
def test_a_blocked_layout_holds_at_least_one_element_per_thread(size_per_thread) -> None:
    with make_context(), ir.Location.unknown():
        _, op = _warp_id_op(target="gfx1250")
        tile.check_blocked_layout(op, _blocked([1, 4]), 2)
        with pytest.raises(tile.VerifyError, match=r"size_per_thread \[.*\] must be >= 1$"):
            tile.check_blocked_layout(op, _blocked(size_per_thread), 2)


@pytest.mark.parametrize(("vec", "max_phase"), [(2, 1), (1, 2), (4, 4)])
@pytest.mark.parametrize(("member", "where"), [("", ""), ("1", "member 1: ")])
def test_tdm_refuses_a_swizzle(vec: int, max_phase: int, member: str, where: str) -> None:
    with make_context():
        f16 = ir.F16Type.get()
        tile.check_tdm_layout(SwizzledShared(1, 4, 1, (1, 0)), f16, member)
        with pytest.raises(
            tile.VerifyError,
            match=rf"^{where}TDM does not support swizzled shared layouts \(vec = {vec}, "
            rf"max_phase = {max_phase}\)",
        ):
            tile.check_tdm_layout(SwizzledShared(vec, 1, max_phase, (1, 0)), f16, member)


def _element(name: str) -> ir.Type:
    return {"i8": ir.IntegerType.get_signless(8), "f16": ir.F16Type.get(), "f32": ir.F32Type.get()}[
        name
    ]


@pytest.mark.parametrize(("element", "bits"), [("i8", 8), ("f16", 16), ("f32", 32)])
def test_tdm_pads_every_2_to_256_dwords(element: str, bits: int) -> None:
    lo, hi = 2 * 32 // bits, 256 * 32 // bits  # elements
    amount = 32 // bits  # one dword
    with make_context():
        t = _element(element)
        for interval in (lo, hi):
            tile.check_tdm_layout(PaddedShared(interval, amount), t)
        for interval in (lo // 2, hi * 2):
            with pytest.raises(
                tile.VerifyError,
                match=rf"^TDM pads every 2 to 256 dwords: interval = {interval} {element} "
                rf"elements is {interval * bits // 8} bytes \(allowed: {lo} to {hi} elements\)$",
            ):
                tile.check_tdm_layout(PaddedShared(interval, amount), t)


@pytest.mark.parametrize(("element", "bits"), [("i8", 8), ("f16", 16)])
def test_tdm_pads_at_least_one_dword(element: str, bits: int) -> None:
    one = 32 // bits
    with make_context():
        t = _element(element)
        tile.check_tdm_layout(PaddedShared(64, one), t)
        with pytest.raises(
            tile.VerifyError,
            match=rf"^TDM pads at least one dword: amount = {one // 2} {element} elements is "
            rf"{one // 2 * bits // 8} bytes \(at least {one} elements\)$",
        ):
            tile.check_tdm_layout(PaddedShared(64, one // 2), t)


# ---- descriptors and buffer indices --------------------------------------------------------


def _verify_errors(
    arg_types: Callable[[], list[ir.Type]], body: Callable[[list[ir.Value]], None]
) -> list[str]:
    """The verifier's messages for a 4-warp kernel without a target (empty: it verifies)."""
    with make_context() as ctx, ir.Location.unknown():
        k = tb.kernel(arg_types(), num_warps=4)
        with k.ip:
            body(k.args)
        with collect(ctx) as diags:
            try:
                k.module.operation.verify()
            except MLIRError:
                return [d.message for d in diags if d.severity == "error"]
        return []


def _unswizzled(rank: int) -> ir.Attribute:
    order = list(reversed(range(rank)))
    return tile.SwizzledSharedAttr.build(vec=1, per_phase=1, max_phase=1, order=order)


def _descriptor(rank: int, shapes: int, strides: int) -> list[str]:
    def types() -> list[ir.Type]:
        i32, i64 = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(64)
        return [tb.ptr_type(ir.F16Type.get()), i32, i64]

    def body(args: list[ir.Value]) -> None:
        block = tb.block_type([2] * rank, ir.F16Type.get(), _unswizzled(rank))
        desc = tb.desc_type(block)
        tile.MakeTensorDescriptorOp(args[0], [args[1]] * shapes, [args[2]] * strides, desc)

    return _verify_errors(types, body)


@pytest.mark.parametrize("rank", [1, 2, 5])
def test_a_descriptor_block_has_rank_1_to_5(rank: int) -> None:
    assert _descriptor(rank, rank, rank) == []


def test_a_descriptor_block_of_rank_6_is_refused() -> None:
    assert _descriptor(6, 6, 6) == [
        "'tile.make_tensor_descriptor' op TDM blocks have rank 1 to 5, got rank 6"
    ]


@pytest.mark.parametrize(("shapes", "strides"), [(2, 1), (1, 2), (3, 3)])
def test_a_descriptor_takes_one_shape_and_one_stride_per_dimension(
    shapes: int, strides: int
) -> None:
    assert _descriptor(2, shapes, strides) == [
        "'tile.make_tensor_descriptor' op expects 2 shape and 2 stride operands for a "
        f"rank-2 block, got {shapes} and {strides}"
    ]


def _index(src: list[int], res: list[int], index: int, element: str = "f16", order=None) -> list:
    def types() -> list[ir.Type]:
        ring = tb.block_type(src, ir.F16Type.get(), _unswizzled(len(src) - 1))  # a buffer's
        return [tb.shared_type(ring)]

    def body(args: list[ir.Value]) -> None:
        layout = _unswizzled(len(res)) if order is None else order()
        buf = tb.shared_type(tb.block_type(res, _element(element), layout))
        tile.MemdescIndexOp(args[0], tb.const(index), buf)

    return _verify_errors(types, body)


INDEX = "'tile.memdesc_index' op"


def test_a_buffer_index_of_a_rank_2_ring_gives_a_rank_1_buffer() -> None:
    assert _index([2, 64], [64], 0) == []


@pytest.mark.parametrize(("index", "ok"), [(0, True), (1, True), (2, False), (-1, False)])
def test_a_constant_buffer_index_is_from_0_to_n_minus_1(index: int, ok: bool) -> None:
    errors = _index([2, 16, 16], [16, 16], index)
    assert errors == (
        [] if ok else [f"{INDEX} index {index} is out of range for 2 buffers (0 to 1)"]
    )


def test_a_buffer_index_keeps_the_element_type_and_the_layout() -> None:
    keep = "result must keep the source's element type and layout"
    assert _index([2, 16, 16], [16, 16], 0, element="f32") == [f"{INDEX} {keep}"]
    other = lambda: tile.SwizzledSharedAttr.build(vec=1, per_phase=1, max_phase=1, order=[0, 1])  # noqa: E731
    assert _index([2, 16, 16], [16, 16], 0, order=other) == [f"{INDEX} {keep}"]


def test_constant_int_reads_integer_constants_of_up_to_64_bits() -> None:
    with make_context(), ir.Location.unknown():
        k = tb.kernel([ir.IntegerType.get_signless(32)], num_warps=4)
        with k.ip:
            assert tile.constant_int(tb.const(-7, 64)) == -7
            assert tile.constant_int(tb.const(5, 8)) == 5
            assert tile.constant_int(tb.const(5, 65)) is None
            assert tile.constant_int(tb.const(5, 128)) is None
            index = arith.ConstantOp(ir.IndexType.get(), 3).result
            assert tile.constant_int(index) is None
            assert tile.constant_int(k.args[0]) is None


# ---- hints as unsigned masks, fused copies -------------------------------------------------


@pytest.mark.parametrize(("hint", "mask"), [(None, None), (0x3, 0x3), (-1, 0xFFFFFFFF)])
def test_a_copys_hint_reads_as_an_unsigned_mask(hint: int | None, mask: int | None) -> None:
    with make_context(), ir.Location.unknown():
        block = tb.block_type([64, 64], ir.F16Type.get(), _swizzled())
        k = tb.kernel([tb.desc_type(block), tb.shared_type(block)], num_warps=4)
        with k.ip:
            op = tb.copy(k.args[0], k.args[1], hint=hint)
        assert op.opview.warp_used_hint == mask


FUSED = "'tile.async_tdm_fused_copy_global_to_local' op"


def _fused_errors(
    hints: list[int], warp_layouts: Callable[[list[dict[str, Any]]], ir.Attribute] | None = None
) -> list[str]:
    """The messages for an 8-warp gfx1250 fused copy of one 128x64 f16 padded block per
    hint, with ``tile.warp_layouts`` made from the layouts each member should have."""
    layout = lambda: tile.PaddedSharedAttr.build(interval=64, amount=8, order=[1, 0])  # noqa: E731
    with make_context() as ctx, ir.Location.unknown():
        block = tb.block_type([128, 64], ir.F16Type.get(), layout())
        n = len(hints)
        k = tb.kernel(
            [tb.desc_type(block)] * n + [tb.shared_type(block)] * n, num_warps=8, target="gfx1250"
        )
        with k.ip:
            op = tb.fused_copy(k.args[:n], k.args[n:], hints)
            if warp_layouts is not None:
                padded = layout().to_layout()
                want = [
                    tile.warp_layout_fields(tdm_warp_layout([128, 64], 8, h, padded)) for h in hints
                ]
                op.attributes[WARP_LAYOUTS] = warp_layouts(want)
        with collect(ctx) as diags:
            try:
                k.module.operation.verify()
            except MLIRError:
                return [d.message for d in diags if d.severity == "error"]
        return []


def _layouts(fields: list[dict[str, Any]]) -> ir.Attribute:
    return ir.ArrayAttr.get([tile.TdmWarpLayoutAttr.build(**f) for f in fields])


def test_a_fused_copy_of_four_members_verifies() -> None:
    assert _fused_errors([0x3, 0xC, 0x30, 0xC0]) == []
    assert _fused_errors([0x3, 0xC, 0x30, 0xC0], _layouts) == []


def test_a_fused_copys_warp_layouts_are_checked_member_by_member() -> None:
    def moved(fields: list[dict[str, Any]]) -> ir.Attribute:
        last = {**fields[1], "anchor": fields[1]["anchor"] ^ 4}
        return _layouts([fields[0], last])

    assert _fused_errors([0x3, 0xC], moved) == [
        f"{FUSED} 'tile.warp_layouts' does not match warp_used_hint 0xc: expected anchor = 2, "
        "got anchor = 6"
    ]


@pytest.mark.parametrize("count", [1, 3])
def test_a_fused_copy_needs_one_warp_layout_per_member(count: int) -> None:
    def some(fields: list[dict[str, Any]]) -> ir.Attribute:
        return _layouts((fields * 2)[:count])

    errors = _fused_errors([0x3, 0xC], some)
    assert len(errors) == 1
    assert errors[0].startswith(f"{FUSED} 'tile.warp_layouts' needs one layout per member, got [")


def test_fused_warp_layouts_not_in_an_array_are_refused() -> None:
    errors = _fused_errors([0x3, 0xC], lambda _: tb.i32_attr(1))
    assert errors == [f"{FUSED} 'tile.warp_layouts' needs one layout per member, got 1 : i32"]


# ---- block loads of i1, MMA inputs and shapes, layout conversions ---------------------------


def _load_i1(**kernel: Any) -> list[str]:
    with make_context() as ctx, ir.Location.unknown():
        i1, i32, i64 = (ir.IntegerType.get_signless(w) for w in (1, 32, 64))
        k = tb.kernel([tb.ptr_type(i1), i32, i64], num_warps=4, **kernel)
        with k.ip:
            ptr, size, stride = k.args
            zero = tb.const(0)
            t = ir.RankedTensorType.get([16, 16], i1)
            tile.LoadBlockOp(ptr, [size, size], [stride, tb.const(1, 64)], [zero, zero], t)
        with collect(ctx) as diags:
            try:
                k.module.operation.verify()
            except MLIRError:
                return [d.message for d in diags if d.severity == "error"]
        return []


@pytest.mark.parametrize(
    ("kernel", "ok"),
    [
        ({}, True),
        ({"threads_per_warp": 32}, True),
        ({"target": "gfx1250"}, True),
        ({"target": "cuda:90"}, False),
    ],
)
def test_i1_blocks_load_where_some_possible_target_takes_them(kernel, ok: bool) -> None:
    assert _load_i1(**kernel) == (
        []
        if ok
        else [
            "'tile.load_block' op cuda:90 cannot load or store i1 elements (Triton's backend "
            "aborts on them): use i8"
        ]
    )


def _a_kernel_op() -> tuple[ir.Module, tile.TileOp]:
    """A ``tile.warp_id`` in a module that names no target: every target is possible."""
    return _warp_id_op()


def test_8_bit_inputs_of_different_targets_are_refused() -> None:
    with make_context(), ir.Location.unknown():
        _, op = _a_kernel_op()
        fn, fnuz = ir.Float8E4M3FNType.get(), ir.Float8E4M3FNUZType.get()
        tile.check_fp8_inputs(op, fn, ir.Float8E5M2Type.get())
        tile.check_fp8_inputs(op, fnuz, fnuz)
        with pytest.raises(
            tile.VerifyError,
            match=r"^a \(f8E4M3FNUZ\) and b \(f8E4M3FN\) are the 8-bit types of different targets$",
        ):
            tile.check_fp8_inputs(op, fnuz, fn)


@pytest.mark.parametrize("which", ["a", "b"])
def test_a_block_scale_type_is_no_wmma_input(which: str) -> None:
    with make_context(), ir.Location.unknown():
        _, op = _a_kernel_op()
        scale, fn = ir.Float8E8M0FNUType.get(), ir.Float8E4M3FNType.get()
        a, b = (scale, fn) if which == "a" else (fn, scale)
        with pytest.raises(tile.VerifyError, match=r"^f8E8M0FNU is a block-scale type"):
            tile.mma_input_kind(op, a, b)


def _wmma_errors(m: int, n: int, k: int, a_rank: int = 2) -> list[str]:
    def types() -> list[ir.Type]:
        acc = _wmma(warps_per_cta=[2, 2])
        dot = [tile.DotOperandAttr.build(op_idx=i, parent=acc, k_width=8) for i in (0, 1)]
        f16 = ir.F16Type.get()
        a_shape = [m, k] + [1] * (a_rank - 2)
        return [
            ir.RankedTensorType.get(a_shape, f16, dot[0]),
            ir.RankedTensorType.get([k, n], f16, dot[1]),
            ir.RankedTensorType.get([m, n], ir.F32Type.get(), acc),
        ]

    def body(args: list[ir.Value]) -> None:
        tile.WmmaOp(args[0], args[1], args[2], args[2].type)

    return _verify_errors(types, body)


def test_a_wmma_of_instruction_multiples_verifies() -> None:
    assert _wmma_errors(32, 32, 64) == []


@pytest.mark.parametrize(("m", "n", "k"), [(24, 32, 32), (32, 24, 32), (32, 32, 48)])
def test_a_wmma_of_a_partial_instruction_is_refused(m: int, n: int, k: int) -> None:
    assert _wmma_errors(m, n, k) == [
        f"'tile.wmma' op {m}x{n}x{k} is not a multiple of the instruction shape 16x16x32"
    ]


def test_a_wmma_of_a_3d_operand_is_refused() -> None:
    assert _wmma_errors(32, 32, 32, a_rank=3) == ["'tile.wmma' op a, b and c must be 2-D"]


@pytest.mark.parametrize(
    ("shape", "element", "ok"),
    [([16, 16], "f32", True), ([16, 32], "f32", False), ([16, 16], "f16", False)],
)
def test_a_layout_conversion_keeps_shape_and_element_type(shape, element: str, ok: bool) -> None:
    def types() -> list[ir.Type]:
        return [ir.RankedTensorType.get([16, 16], ir.F32Type.get())]

    def body(args: list[ir.Value]) -> None:
        tile.ConvertLayoutOp(args[0], ir.RankedTensorType.get(shape, _element(element)))

    errors = _verify_errors(types, body)
    if ok:
        assert errors == []
    else:
        assert len(errors) == 1
        assert errors[0].startswith("'tile.convert_layout' op result tensor<")
        assert errors[0].endswith("must keep the shape and element type of tensor<16x16xf32>")


@pytest.mark.parametrize("make", [tb.desc_type, tb.shared_type])
def test_a_block_type_of_no_ranked_tensor_is_refused(make) -> None:
    with make_context(), ir.Location.unknown():
        cls = type(make(tb.block_type([16, 16], ir.F16Type.get(), _swizzled())))
        for param in (ir.TypeAttr.get(ir.F16Type.get()), tb.i32_attr(3)):
            t = cls.get(param)
            with pytest.raises(tile.VerifyError, match="expects a parameter tensor<SHAPE x ELEM"):
                tile.check_type(t)
