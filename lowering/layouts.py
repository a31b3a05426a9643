"""Layout and element-type rules of the hand-off: tile layouts as Gluon's layout classes.

Pure functions of shapes, layouts and element types (``layouts`` is the Gluon layout
namespace of :func:`gemm_opt.lowering.triton_bridge.triton_ir`); the target strategies
decide which rule a layout takes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gemm_opt.core.ext_compat import cast, ir
from gemm_opt.dialect.tile import (
    PaddedSharedAttr,
    PartitionedSharedAttr,
    SharedLayoutAttr,
    SwizzledSharedAttr,
    viewed_block,
)

#: wgmma's instruction N: a multiple of 8 up to 256.
WGMMA_MAX_N = 256


def log2(n: int) -> int:
    return n.bit_length() - 1


def row_major(rank: int) -> list[int]:
    """The default dim order (fastest first): the last dim fastest."""
    return list(range(rank - 1, -1, -1))


def wmma_warp_bases(warps_per_cta: Sequence[int]) -> list[list[int]]:
    """``ctaLayout`` warp bases (in instruction tiles) for ``[WM, WN]`` warps.

    Warp-id bits step N first, then M (Triton's ``warpsPerCTA`` order
    ``[1, 0]``): ``[4, 2]`` gives ``[[0, 1], [1, 0], [2, 0]]``.
    """
    wm, wn = warps_per_cta
    bases = [[0, 1 << b] for b in range(log2(wn))]
    bases += [[1 << b, 0] for b in range(log2(wm))]
    return bases


def padded_layout(layouts: Any, interval: int, amount: int, order: Sequence[int], shape) -> Any:
    """Gluon's ``PaddedSharedLayout`` with the identity mapping for ``order``.

    That is what ``#ttg.padded_shared<[interval:+amount] {order, shape}>``
    means: offset bases walk the dims fastest first.
    """
    shape = [int(s) for s in shape]
    rank = len(shape)
    bases = [
        [1 << b if i == dim else 0 for i in range(rank)]
        for dim in order
        for b in range(log2(shape[dim]))
    ]
    return layouts.PaddedSharedLayout([[interval, amount]], bases, [], shape)


def shared_layout(layouts: Any, attr: SharedLayoutAttr, tile_shape: Sequence[int]) -> Any:
    """Gluon's shared layout for a tile shared layout over ``tile_shape``."""
    if isinstance(attr, PaddedSharedAttr):
        layout = attr.to_layout()
        order = list(layout.order)
        return padded_layout(
            layouts, layout.interval, layout.amount, order, tile_shape[-len(order) :]
        )
    if isinstance(attr, SwizzledSharedAttr):
        layout = attr.to_layout()
        return layouts.SwizzledSharedLayout(
            layout.vec, layout.per_phase, layout.max_phase, list(layout.order)
        )
    if isinstance(attr, PartitionedSharedAttr):
        layout = attr.to_layout()
        rank = len(layout.inner.order)
        piece = list(tile_shape)[-rank:]
        # Equivalent mutant: <=; the verifier refuses a partition_dim outside the block.
        if 0 <= layout.partition_dim < len(piece):
            piece[layout.partition_dim] //= layout.num_logical_pieces
        inner_attr = attr.field_values().get("layout")
        if inner_attr is None:
            inner = unswizzled_layout(layouts, row_major(rank))
        else:
            inner = shared_layout(layouts, inner_attr, piece)
        return layouts.PartitionedSharedLayout(
            layout.num_partitions, layout.num_groups, layout.partition_dim, inner
        )
    raise TypeError(f"unsupported shared layout {attr}")


def unswizzled_layout(layouts: Any, order: Sequence[int], vec: int = 1) -> Any:
    """A ``SwizzledSharedLayout`` that does not swizzle."""
    return layouts.SwizzledSharedLayout(vec, 1, 1, list(order))


def mma_swizzle(order: Sequence[int], tile_shape: Sequence[int], elem_bits: int) -> tuple:
    """``(vec, per_phase, max_phase)`` of the swizzle mma.sync operands use on NVIDIA.

    16-byte vectors along the contiguous dim (what one ``cp.async`` writes
    and one ``ldmatrix`` row reads), and the vector index XOR-ed with the
    row's phase, where a phase spans 128 bytes of rows (8 phases of 16
    bytes): ``ldmatrix``'s eight 16-byte rows then fall in distinct banks.
    For 16-bit elements this is what Triton picks for mma v2 operands
    (``vec = 8``; 64-element rows: ``perPhase = 1, maxPhase = 8``).
    """
    elem_bytes = max(1, elem_bits // 8)
    shape = list(tile_shape)[-len(order) :]
    inner = int(shape[order[0]])
    vec = max(1, min(16 // elem_bytes, inner))
    per_phase = max(1, 128 // max(1, inner * elem_bytes))
    # Equivalent mutant: 129; 129 // 16 is 8 too.
    max_phase = max(1, (128 // 16) // per_phase)
    return vec, per_phase, max_phase


def wgmma_shape(
    m: int, n: int, k: int, num_warps: int, elem_bits: int = 16
) -> tuple[list[int], list[int]]:
    """``(warpsPerCTA, instrShape)`` of the ``nvidia_mma`` v3 layout of an MxNxK dot.

    A warpgroup (4 consecutive warps) issues one wgmma over 64 rows, 16 per
    warp, so warps go 4 at a time along M while M has rows for them, then
    along N (Triton's own rule for mma v3). The instruction's N is the
    largest multiple of 8 (at most 256) dividing a warpgroup's columns: the
    fewest instructions per K step; its K is 32 bytes of the inputs (16 for
    16-bit, 32 for 8-bit elements). Raises ValueError (why) when the dot
    does not fit.
    """
    # Equivalent mutant: 257 // bits; equal to 256 // bits for widths of 8 to 64 bits.
    instr_k = 256 // elem_bits
    if num_warps % 4:
        raise ValueError(f"{num_warps} warps are not whole warpgroups of 4")
    if num_warps & (num_warps - 1):
        # Doubling along M and N would overshoot (12 warps laid out as 16).
        raise ValueError(f"{num_warps} warps are not a power of two")
    wm, wn = 4, 1
    while wm * wn < num_warps:
        if m > 16 * wm:
            wm *= 2
        else:
            wn *= 2
    if m % (16 * wm):
        raise ValueError(f"M = {m} is not a multiple of the {16 * wm} rows of {wm} warps")
    if n % (8 * wn):
        raise ValueError(f"N = {n} does not split into {wn} warpgroup tiles of multiples of 8")
    if k % instr_k:
        raise ValueError(f"K = {k} is not a multiple of {instr_k}")
    per_group = n // wn
    # Equivalent mutant: + 2; the bound is a multiple of 8, so no multiple of 8 is
    # one above it.
    instr_n = max(d for d in range(8, min(WGMMA_MAX_N, per_group) + 1, 8) if per_group % d == 0)
    return [wm, wn], [16, instr_n, instr_k]


def nvmma_swizzle(shape: Sequence[int], elem_bits: int) -> int:
    """Swizzle width in bytes of the NVMMA shared layout of a ``shape`` buffer.

    The widest of 128, 64 and 32 bytes that divides a row: wgmma (and TMA)
    then read and write whole swizzle atoms of 8 rows, with no bank
    conflicts; rows narrower than 32 bytes, or fewer than 8 of them, are
    left unswizzled.
    """
    row = int(shape[-1]) * elem_bits // 8
    if len(shape) < 2 or int(shape[-2]) < 8:
        return 0
    return next((w for w in (128, 64, 32) if row % w == 0), 0)


def wgmma_buffer_refusal(view: ir.Value, operand: int) -> str | None:
    """Why wgmma cannot read the shared operand ``view`` (A: ``operand`` 0, B: 1; None:
    it can).

    wgmma reads a rank-2 block as it lies in an NVMMA layout, K-major or,
    for 16-bit elements, transposed: a row-major block, or the
    ``tile.memdesc_trans`` view of one (``ttg.memdesc_trans``
    flips the NVMMA layout's ``transposed`` flag, which wgmma reads
    natively). A block stored column-major has no NVMMA form here. 8-bit
    operands must be K-major: A an (M, K) row-major block, B the transposed
    view of an (N, K) one.
    """
    block = viewed_block(view)
    t = block.type
    # Equivalent mutant: or->and. The view and its block have one rank: tile.memdesc_trans
    # verifies its order has the source's rank and its result shape is the source's permuted.
    if len(view.type.shape) != 2 or len(t.shape) != 2:
        return f"buffer has rank {len(view.type.shape)}, not 2"
    if shared_order(t.layout_attr, 2) != [1, 0]:
        return "buffer is not row-major (transposed)"
    transposed = block != view
    if element_bits(t.element_type) != 16 and transposed != (operand == 1):
        layout = "(N, K) buffer" if operand == 1 else "(M, K) buffer, not a transposed view"
        return (
            f"8-bit elements are not K-major (wgmma reads 8-bit operands K-major only: "
            f"{'B' if operand else 'A'} must be the "
            + (
                "tile.memdesc_trans view of a row-major " + layout
                if operand
                else "row-major " + layout
            )
            + ")"
        )
    return None


def shared_order(attr: SharedLayoutAttr, rank: int) -> list[int]:
    """The dim order (fastest first) of a tile shared layout."""
    if isinstance(attr, PartitionedSharedAttr):
        attr = attr.field_values().get("layout")
    if isinstance(attr, (PaddedSharedAttr, SwizzledSharedAttr)):
        return list(attr.to_layout().order)
    return row_major(rank)


def blocked_params(shape: Sequence[int], elem_bits: int, num_warps: int, warp_size: int) -> tuple:
    """``(sizePerThread, threadsPerWarp, warpsPerCTA, order)`` of the row-major
    blocked layout with 16-byte vectors along the last dim."""
    inner = shape[-1]
    # Equivalent mutant: 128->129. max(elem_bits, 8) is a power of two of 8 or more
    # (element widths are 1 to 64 bits), so 129 // it == 128 // it.
    vec = max(1, min(128 // max(elem_bits, 8), inner))
    lanes_inner = min(warp_size, max(1, inner // vec))
    if len(shape) == 1:
        return [vec], [warp_size], [num_warps], [0]
    return [1, vec], [warp_size // lanes_inner, lanes_inner], [num_warps, 1], [1, 0]


#: Element types Triton's builder makes, by MLIR type class and its builder getter.
FLOATS = (
    ("F16Type", "get_half_ty"),
    ("BF16Type", "get_bf16_ty"),
    ("F32Type", "get_float_ty"),
    ("F64Type", "get_double_ty"),
    ("Float8E4M3FNType", "get_fp8e4nv_ty"),
    ("Float8E5M2Type", "get_fp8e5_ty"),
    ("Float8E4M3FNUZType", "get_fp8e4b8_ty"),
    ("Float8E5M2FNUZType", "get_fp8e5b16_ty"),
    ("Float8E4M3B11FNUZType", "get_fp8e4b15_ty"),
    # The MX block scale: Triton's scaled dots and copies carry its codes as i8.
    ("Float8E8M0FNUType", "get_int8_ty"),
)
INTS = {
    1: "get_int1_ty",
    8: "get_int8_ty",
    16: "get_int16_ty",
    32: "get_int32_ty",
    64: "get_int64_ty",
}


def float_getter(t: ir.Type) -> str | None:
    for cls_name, getter in FLOATS:
        cls = getattr(ir, cls_name, None)
        if cls is not None and cast(t, cls) is not None:
            return getter
    return None


def element_bits(t: ir.Type) -> int | None:
    """Bit width of a scalar type Triton can hold in a tensor (None: none)."""
    it = cast(t, ir.IntegerType)
    if it is not None:
        width = ir.IntegerType(t).width
        return width if width in INTS and ir.IntegerType(t).is_signless else None
    if float_getter(t) is not None:
        return ir.FloatType(t).width
    return None


def elements_error(t: ir.Type) -> str:
    return (
        f"element type {t} has no TritonGPU equivalent (Triton holds signless i1, i8, i16, "
        "i32, i64, f16, bf16, f32, f64 and the f8 types it knows)"
    )


# ---- the lowering ------------------------------------------------------------------


__all__ = [
    "FLOATS",
    "INTS",
    "WGMMA_MAX_N",
    "blocked_params",
    "element_bits",
    "elements_error",
    "float_getter",
    "log2",
    "mma_swizzle",
    "nvmma_swizzle",
    "padded_layout",
    "row_major",
    "shared_layout",
    "shared_order",
    "unswizzled_layout",
    "wgmma_buffer_refusal",
    "wgmma_shape",
    "wmma_warp_bases",
]
