"""``tile.gemm_schedule``'s rules at their edges (found by ``benchmarks/mutation.py``).

Each case pins a comparison or branch of ``dialect/schedule.py`` that the lit
cases left free: a legal schedule next to every refused one (an epilogue with
every part, swiglu, col-major C, block sizes and ``split_k`` of 1, the largest
``num_xcds`` and ``split_k``), the messages of both sides of a rule, the body's
shape (an argument of another type, no terminator) and the accessors the
lowering reads. Schedules are built with the op's builder, attribute by attribute.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest
import support.tile_build as tb

from gemm_opt.core.diagnostics import collect
from gemm_opt.core.ext_compat import MLIRError, arith, ir
from gemm_opt.core.modes import Kind
from gemm_opt.core.schedules.partition import COUNTER_STRIDE, MAX_SPLIT_K
from gemm_opt.dialect import make_context, tile
from gemm_opt.dialect.schedule import (
    I32_MAX,
    GemmScheduleOp,
    ScheduleYieldOp,
    group_m_limit,
    num_xcds_limit,
)

#: The pointer operands a schedule may take, in the builder's order.
POINTERS = ("group_lens", "sync", "partials", "bias", "row_scale", "col_scale")
#: Block sizes and group_m of every case unless it names its own.
BLOCKS = {"block_m": 32, "block_n": 32, "block_k": 32, "group_m": 8}


def _acc(shape: Sequence[int] = (32, 32)) -> ir.RankedTensorType:
    layout = tile.BlockedAttr.build(
        size_per_thread=[1, 4], threads_per_warp=[8, 4], warps_per_cta=[4, 1], order=[1, 0]
    )
    return ir.RankedTensorType.get(list(shape), ir.F32Type.get(), layout)


def _element(name: str) -> ir.Type:
    return ir.Type.parse(name)


def _build(
    kind: str,
    *,
    strs: Mapping[str, str] = {},
    ints: Mapping[str, int] = {},
    drop: Sequence[str] = (),
    unit: Sequence[str] = (),
    pointers: Mapping[str, str] = {},
    num_groups: bool = False,
    yields: Sequence[Sequence[int]] | None = ((32, 32),),
    body_widths: Sequence[int] = (32,) * 6,
) -> tuple[ir.Module, GemmScheduleOp]:
    """A 4-warp kernel holding one schedule of f16 C: ``pointers`` maps each
    optional pointer operand to its element type, ``yields`` the shapes of the
    f32 accumulators the body yields (None: a body that ends in no yield)."""
    i32, i64 = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(64)
    names = ["M", "N", "K", "c", "ldc", *pointers, *(["num_groups"] if num_groups else [])]
    types = [i32, i32, i32, tb.ptr_type(ir.F16Type.get()), i64]
    types += [tb.ptr_type(_element(e)) for e in pointers.values()]
    types += [i32] * num_groups
    accs = [_acc(s) for s in yields or ()]
    k = tb.kernel([*types, *accs], num_warps=4)
    args = dict(zip(names, k.args, strict=False))
    with k.ip:
        op = GemmScheduleOp(
            *(args[n] for n in ("M", "N", "K", "c", "ldc")),
            num_groups=args.get("num_groups"),
            **{n: args.get(n) for n in POINTERS},
        )
        a = op.operation.attributes
        for name, value in {"kind": kind, **strs}.items():
            a[name] = ir.StringAttr.get(value)
        for name, value in {**BLOCKS, **ints}.items():
            if name not in drop:
                a[name] = tb.i32_attr(value)
        for name in unit:
            a[name] = ir.UnitAttr.get()
        body = op.operation.regions[0].blocks.append(
            *(ir.IntegerType.get_signless(w) for w in body_widths)
        )
        with ir.InsertionPoint(body):
            if yields is None:
                arith.ConstantOp(i32, ir.IntegerAttr.get(i32, 0))
            else:
                ScheduleYieldOp(k.args[len(types) :])
    return k.module, op


def _errors(kind: str, **spec: object) -> list[str]:
    """The verifier's messages for the schedule ``_build`` makes (empty: it verifies)."""
    with make_context() as ctx, ir.Location.unknown():
        module, _ = _build(kind, **spec)  # type: ignore[arg-type]
        with collect(ctx) as diags:
            try:
                module.operation.verify()
            except MLIRError:
                return [d.message for d in diags if d.severity == "error"]
        return []


def _refused(message: str) -> list[str]:
    return [f"'tile.gemm_schedule' op {message}"]


# ---- the limits of the lowering's i32 arithmetic --------------------------------------------


@pytest.mark.parametrize("block_n", [1 << e for e in range(31)])
def test_group_m_limit_is_the_largest_band_that_fits_an_i32(block_n: int) -> None:
    """Tile columns of N up to ``2**31 - block_n``: ``cdiv`` gives at most
    ``I32_MAX // block_n`` (one for ``block_n = 2**30``)."""
    columns = -(-(2**31 - block_n) // block_n)
    assert columns == I32_MAX // block_n
    limit = group_m_limit(block_n)
    assert limit * columns <= I32_MAX < (limit + 1) * columns


def test_the_most_chiplets_and_the_one_past_them() -> None:
    most = num_xcds_limit()
    # The counters of num_xcds chiplets end at num_xcds * COUNTER_STRIDE: an i32 for the most.
    assert most * COUNTER_STRIDE <= I32_MAX < (most + 1) * COUNTER_STRIDE
    ws = {"pointers": {"sync": "i32"}}
    assert _errors("work-stealing", ints={"num_xcds": most}, **ws) == []
    assert _errors("work-stealing", ints={"num_xcds": most + 1}, **ws) == _refused(
        f"'num_xcds' must be at most {most} (the lowering indexes counters num_xcds * "
        f"{COUNTER_STRIDE} in i32), got {most + 1}"
    )


@pytest.mark.parametrize("split_k", [1, 2, MAX_SPLIT_K])
def test_split_k_takes_one_to_its_limit(split_k: int) -> None:
    sk = {"pointers": {"sync": "i32", "partials": "f32"}}
    assert _errors("split-k", ints={"split_k": split_k}, **sk) == []


# ---- block sizes and required integers ------------------------------------------------------


@pytest.mark.parametrize("block_k", [1, 2, 4, 1 << 30])
def test_every_power_of_two_is_a_block_size(block_k: int) -> None:
    assert _errors("persistent", ints={"block_k": block_k}) == []


@pytest.mark.parametrize("block_k", [0, -1, 3, 6, 12, (1 << 30) + 1])
def test_a_block_size_that_is_no_power_of_two_is_refused(block_k: int) -> None:
    assert _errors("persistent", ints={"block_k": block_k}) == _refused(
        f"'block_k' must be a power of two, got {block_k}"
    )


@pytest.mark.parametrize("name", ["block_m", "block_n", "block_k", "group_m"])
def test_a_missing_block_size_or_group_m_is_named(name: str) -> None:
    assert _errors("persistent", drop=(name,)) == _refused(f"requires attribute '{name}'")


def test_work_stealing_requires_num_xcds() -> None:
    assert _errors("work-stealing", pointers={"sync": "i32"}) == _refused(
        "requires attribute 'num_xcds'"
    )


# ---- grouped forms and C's layout -----------------------------------------------------------


def test_col_major_c_is_for_a_dense_schedule() -> None:
    col = {"strs": {"c_layout": "col-major"}}
    assert _errors("persistent", **col) == []
    grouped = {"strs": {"c_layout": "col-major", "grouped": "m"}, "num_groups": True}
    assert _errors("persistent", pointers={"group_lens": "i32"}, **grouped) == _refused(
        'c_layout = "col-major" is for grouped = "none" (a group\'s rows are rows of C), not '
        'grouped = "m"'
    )


def test_num_groups_comes_with_the_groups_and_only_with_them() -> None:
    assert _errors("persistent", strs={"grouped": "m"}, pointers={"group_lens": "i32"}) == _refused(
        "grouped = \"m\" needs a 'num_groups' operand"
    )
    assert _errors("persistent", num_groups=True) == _refused(
        "grouped = \"none\" takes no 'num_groups' operand"
    )


# ---- the epilogue ---------------------------------------------------------------------------

EVERY_PART = {"bias": "bf16", "row_scale": "f32", "col_scale": "f32"}


@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("kind", ["persistent", "split-k"])
def test_an_epilogue_of_every_part_verifies(kind: str, activation: str) -> None:
    workspace = {"sync": "i32", "partials": "f32"} if kind == Kind.SPLIT_K else {}
    spec = {"strs": {"activation": activation}, "unit": ("accumulate",)}
    assert _errors(kind, pointers={**workspace, **EVERY_PART}, **spec) == []


def test_linear_stream_k_takes_an_activation() -> None:
    spec = {"strs": {"reduction": "linear", "activation": "relu"}}
    workspace = {"sync": "i32", "partials": "f32"}
    assert _errors("stream-k", pointers=workspace, **spec) == []


@pytest.mark.parametrize("bias", ["f16", "bf16", "f32"])
def test_every_bias_element_type_verifies(bias: str) -> None:
    assert _errors("persistent", pointers={"bias": bias}) == []


@pytest.mark.parametrize(("name", "element"), [("bias", "i32"), ("bias", "f64")])
def test_a_bias_of_another_element_type_is_refused(name: str, element: str) -> None:
    assert _errors("persistent", pointers={name: element}) == _refused(
        f"'bias' must point to f16, bf16, f32, got {element}"
    )


@pytest.mark.parametrize("name", ["row_scale", "col_scale"])
def test_a_scale_of_f16_is_refused(name: str) -> None:
    assert _errors("persistent", pointers={name: "f16"}) == _refused(
        f"'{name}' must point to f32, got f16"
    )


def test_accumulate_is_a_unit_attribute() -> None:
    assert _errors("persistent", unit=("accumulate",)) == []
    assert _errors("persistent", ints={"accumulate": 1}) == _refused(
        "'accumulate' must be a unit attribute, got 1 : i32"
    )


# ---- swiglu: two accumulators ---------------------------------------------------------------

SWIGLU = {"strs": {"activation": "swiglu"}}


@pytest.mark.parametrize("kind", ["data-parallel", "persistent"])
def test_swiglu_yields_gate_and_up(kind: str) -> None:
    gate_up = {"yields": ((32, 32), (32, 32))}
    assert _errors(kind, pointers={"bias": "f16", "row_scale": "f32"}, **SWIGLU, **gate_up) == []


def test_swiglu_yielding_one_accumulator_is_refused() -> None:
    assert _errors("persistent", **SWIGLU) == _refused(
        "'tile.schedule_yield' yields two accumulators (gate, up) for activation \"swiglu\""
    )


def test_two_accumulators_without_swiglu_are_refused() -> None:
    assert _errors("persistent", yields=((32, 32), (32, 32))) == _refused(
        "'tile.schedule_yield' yields one accumulator"
    )


def test_swiglu_accumulators_of_two_types_are_refused() -> None:
    with make_context(), ir.Location.unknown():
        gate, up = str(_acc((32, 32))), str(_acc((32, 64)))
    assert _errors("persistent", yields=((32, 32), (32, 64)), **SWIGLU) == _refused(
        f"the two accumulators of swiglu must have one type, got {gate} and {up}"
    )


# ---- the body -------------------------------------------------------------------------------


@pytest.mark.parametrize("wide", range(6))
def test_a_body_argument_of_another_width_is_refused(wide: int) -> None:
    widths = [64 if i == wide else 32 for i in range(6)]
    got = ", ".join(f"i{w}" for w in widths)
    assert _errors("persistent", body_widths=widths) == _refused(
        f"the body takes 6 i32 arguments (group, m_off, m_end, n_off, k_off, k_end), got ({got})"
    )


def test_a_body_that_ends_in_another_op_is_refused() -> None:
    assert _errors("persistent", yields=None) == _refused(
        "the body must end with 'tile.schedule_yield'"
    )


# ---- the accessors the lowering reads -------------------------------------------------------


def test_accumulate_reads_the_unit_attribute() -> None:
    with make_context(), ir.Location.unknown():
        assert _build("persistent", unit=("accumulate",))[1].accumulate is True
        assert _build("persistent")[1].accumulate is False


def test_num_xcds_is_one_but_for_work_stealing() -> None:
    with make_context(), ir.Location.unknown():
        assert _build("persistent")[1].num_xcds == 1
        ws = _build("work-stealing", ints={"num_xcds": 3}, pointers={"sync": "i32"})[1]
        assert ws.num_xcds == 3


def test_split_k_is_read_only_for_split_k() -> None:
    sk = {"pointers": {"sync": "i32", "partials": "f32"}}
    with make_context(), ir.Location.unknown():
        assert _build("split-k", ints={"split_k": 5}, **sk)[1].split_k == 5
        assert _build("split-k", **sk)[1].split_k is None
        # The verifier refuses split_k on another kind; the accessor ignores it there.
        assert _build("persistent", ints={"split_k": 5})[1].split_k is None
