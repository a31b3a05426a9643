"""The GEMM schedule op of the ``tile`` dialect: which program computes which
output tile and which K range, as IR.

``tile.gemm_schedule`` holds the per-tile computation in its body region and
states the schedule in attributes; ``tile-lower-gemm-schedule`` turns it into
the tile loop, the tile order, the K split, the reduction of split-K partials
and the epilogue. The body is written once, whatever the schedule.

```mlir
"tile.gemm_schedule"(%M, %N, %K, %c, %ldc) ({
^bb0(%group: i32, %m_off: i32, %m_end: i32, %n_off: i32, %k_off: i32, %k_end: i32):
  ...  // the fp32 partial of rows [m_off, m_off+BM) (rows >= m_end are ignored),
       // cols [n_off, n_off+BN), summed over k in [k_off, k_end)
  "tile.schedule_yield"(%acc) : (tensor<64x64xf32, #acc>) -> ()
}) {kind = "persistent", grouped = "none", block_m = 64 : i32, block_n = 64 : i32,
    block_k = 32 : i32, group_m = 8 : i32, num_xcds = 1 : i32,
    operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>}
  : (i32, i32, i32, !tile.ptr<f16>, i64) -> ()
```

Operands: M, N, K (i32), C (``!tile.ptr`` of f16, bf16 or f32, row-major)
and its leading dimension (i64); ``group_lens`` (``!tile.ptr<i32>``) and
``num_groups`` (i32) when ``grouped`` is not "none"; ``sync``
(``!tile.ptr<i32>``) for work stealing, for stream-K with linear or tree
reduction and for split-K; ``partials`` (``!tile.ptr<f32>``) for stream-K
linear or tree and for split-K; the epilogue's ``bias`` (f16, bf16 or f32:
N values, grouped "m": ``(G, N)``), ``row_scale`` (f32, M) and
``col_scale`` (f32, N), each optional.

The epilogue: each output tile's finished fp32 sum ``acc`` (after the
stream-K or split-K reduction, by the program that stores it) becomes
``act(acc * row_scale[m] * col_scale[n] + bias[n])``, plus C's old value
with ``accumulate`` (``C += ...``; fp32 C for a ``main_grad``), rounded
once to C's element type. ``activation`` is an
:class:`~gemm_opt.core.modes.Activation`. Atomic stream-K adds partials into
C, so no program holds a split tile's sum: it takes no activation, each
contributor scales its own partial and the one whose K range starts the tile
adds the bias; with ``accumulate`` the host leaves C as it is instead of
zeroing it.

``kind = "split-k"``: ``tiles x S`` programs, each one slice of one tile's
K iterations, summed in slice order by the tile's last program
(:class:`~gemm_opt.core.schedules.partition.SplitKPartition`). ``split_k``
fixes ``S`` at compile time; without it ``S`` is the launched programs
divided by the tiles, read on the device, so one kernel serves every ``S``.

``c_layout = "col-major"`` (default ``"row-major"``, dense only): the
epilogue writes element (m, n) of the ``M x N`` output at ``m + n * ldc``,
so C holds its transpose, row-major: swap-AB's ``C^T = B^T A^T``, whose
output rows are the columns of C.

Grouped forms. ``grouped = "m"``: group g owns rows ``[start_g, start_g +
len_g)`` of A and C (``start_g`` the prefix sum of ``group_lens``), M is the
total row count, the body gets ``m_off`` and ``m_end`` as absolute rows
(``m_end = start_g + len_g``) and indexes B by ``%group``.
``grouped = "k"`` (wgrad): C is ``(G*M, N)``, group g sums over K rows
``[start_g, start_g + len_g)``: the body gets ``m_off``/``m_end`` as rows of
the group's ``M x N`` output and ``k_off``/``k_end`` as absolute K rows; the
epilogue writes rows ``g*M + m``. An empty group yields no tile ("m") or a
zero tile ("k").
"""

from collections.abc import Sequence
from typing import Any

from gemm_opt.core.ext_compat import cast, ext, ir
from gemm_opt.core.modes import (
    ACTIVATIONS,
    C_LAYOUTS,
    GROUPED,
    GROUPED_KINDS,
    KINDS,
    REDUCTIONS,
    SWIGLU_KINDS,
    TILE_LOOPS,
    Activation,
    CLayout,
    Grouped,
    Kind,
    Mode,
    Reduction,
    TileLoop,
)
from gemm_opt.core.schedules.partition import (
    COUNTER_STRIDE,
    MAX_SPLIT_K,
    needs_partials,
    needs_sync,
)
from gemm_opt.dialect.tile import (
    BlockedAttr,
    PtrType,
    TileOp,
    VerifyError,
    WmmaAttr,
    _check_ints,
    _type_of,
    check_register_layout,
)

#: The body's block arguments, in order (all i32).
BODY_ARGS = ("group", "m_off", "m_end", "n_off", "k_off", "k_end")
#: Element types of C.
C_ELEMENTS = ("f16", "bf16", "f32")
#: Element types of the epilogue's bias (one per output column; grouped "m": per group).
BIAS_ELEMENTS = ("f16", "bf16", "f32")
#: The largest value of the i32 index arithmetic ``tile-lower-gemm-schedule`` emits.
I32_MAX = 2**31 - 1


def group_m_limit(block_n: int) -> int:
    """The largest ``group_m`` whose GROUP_M band, ``group_m * cdiv(N, block_n)``
    tiles, is an i32 for every N the tile count's own ``cdiv`` takes (N up to
    ``2**31 - block_n``, so at most ``I32_MAX // block_n`` tile columns): at
    least ``block_n``, far above the bands that help L2 (a few tile rows).
    ``tile-lower-gemm-schedule`` clamps a larger one to the tile rows."""
    return I32_MAX // max(I32_MAX // block_n, 1)


def num_xcds_limit() -> int:
    """The most chiplets whose counters, ``COUNTER_STRIDE`` i32 slots apart, are
    indexed by an i32 (``xcd * COUNTER_STRIDE``)."""
    return I32_MAX // COUNTER_STRIDE


def _mode(op: TileOp, name: str, allowed: tuple[Mode, ...], default: Mode | None) -> Any:
    """The string attribute ``name`` as the member of ``allowed`` it names."""
    a = op.attr(name)
    if a is None:
        return default
    if cast(a, ir.StringAttr) is None or ir.StringAttr(a).value not in allowed:
        raise VerifyError(f"'{name}' must be one of {', '.join(allowed)}, got {a}")
    # Equivalent mutant: allowed[1] for allowed[0]: every caller's tuple (KINDS, REDUCTIONS,
    # GROUPED, ACTIVATIONS, TILE_LOOPS, C_LAYOUTS) holds two or more members of one enum class.
    return type(allowed[0])(ir.StringAttr(a).value)


class GemmScheduleOp(TileOp, name="gemm_schedule"):
    """Map a GEMM's output tiles and K ranges onto programs (see the module doc).

    Rules: kind one of data-parallel, persistent, work-stealing, stream-k,
    split-k;
    ``reduction`` (atomic, linear, tree) given exactly for stream-k;
    ``grouped`` none, m or k (default none), grouped only with kind
    persistent; ``tile_loop`` flat or per-group (default flat), only with
    grouped k (see :class:`~gemm_opt.core.modes.TileLoop`); ``c_layout``
    row-major or col-major (default row-major), col-major only with grouped
    none; ``num_xcds``
    given exactly for work-stealing; ``split_k`` (optional) only for
    split-k, 1 to :data:`~gemm_opt.core.schedules.partition.MAX_SPLIT_K`;
    block sizes powers of two; group_m and
    num_xcds positive, num_xcds at most :func:`num_xcds_limit` (the lowering's
    i32 arithmetic cannot wrap; a group_m past :func:`group_m_limit` it
    clamps); not
    nested in another schedule's body; M, N, K, num_groups i32,
    ldc i64; C of f16, bf16 or f32; group_lens and num_groups present iff
    grouped; sync present iff the kind needs it, of i32; partials present iff
    the reduction needs them, of f32; ``activation`` an
    :class:`~gemm_opt.core.modes.Activation`, none with atomic stream-K;
    ``accumulate`` a unit attribute; bias of f16, bf16 or f32, scales of f32,
    neither nor an activation with grouped k; one body block with six i32 arguments
    ending in ``tile.schedule_yield`` of an f32 ``block_m x block_n`` tensor
    with a register layout.
    """

    ATTRS = (
        *("kind", "reduction", "grouped", "tile_loop", "c_layout"),
        *("block_m", "block_n", "block_k", "group_m", "num_xcds", "split_k"),
        *("activation", "accumulate"),
    )
    m: ext.Operand[Any]
    n: ext.Operand[Any]
    k: ext.Operand[Any]
    c: ext.Operand[PtrType]
    ldc: ext.Operand[Any]
    group_lens: ext.Operand[PtrType] | None = None
    num_groups: ext.Operand[Any] | None = None
    sync: ext.Operand[PtrType] | None = None
    partials: ext.Operand[PtrType] | None = None
    bias: ext.Operand[PtrType] | None = None
    row_scale: ext.Operand[PtrType] | None = None
    col_scale: ext.Operand[PtrType] | None = None
    body: ir.Region

    def verify(self) -> None:
        kind = self.kind
        reduction = self.reduction
        grouped = self.grouped
        if kind == Kind.STREAM_K and reduction is None:
            raise VerifyError("kind \"stream-k\" requires a 'reduction' (atomic, linear or tree)")
        if kind != Kind.STREAM_K and reduction is not None:
            raise VerifyError(f'\'reduction\' is only for kind "stream-k", not "{kind}"')
        if grouped != Grouped.NONE and kind not in GROUPED_KINDS:
            raise VerifyError(
                f'grouped = "{grouped}" needs kind {" or ".join(GROUPED_KINDS)}, got "{kind}"'
            )
        if self.attr("tile_loop") is not None and grouped != Grouped.K:
            raise VerifyError(f'\'tile_loop\' is only for grouped = "k", not grouped = "{grouped}"')
        _mode(self, "tile_loop", TILE_LOOPS, None)
        if self.c_layout == CLayout.COL_MAJOR and grouped != Grouped.NONE:
            raise VerifyError(
                f'c_layout = "col-major" is for grouped = "none" (a group\'s rows are '
                f'rows of C), not grouped = "{grouped}"'
            )
        if self.attr("num_xcds") is not None and kind != Kind.WORK_STEALING:
            raise VerifyError(f'\'num_xcds\' is only for kind "work-stealing", not "{kind}"')
        self._check_split_k()
        self._check_nesting()
        for name in ("block_m", "block_n", "block_k"):
            v = self.int_attr(name, required=True)
            if v is None or v < 1 or v & (v - 1):
                raise VerifyError(f"'{name}' must be a power of two, got {v}")
        names = ("group_m", "num_xcds") if kind == Kind.WORK_STEALING else ("group_m",)
        for name in names:
            v = self.int_attr(name, required=True)
            if v is None or v < 1:
                raise VerifyError(f"'{name}' must be positive, got {v}")
        self._check_limits()
        _check_ints([self.m, self.n, self.k], 32, "M, N and K")
        _check_ints([self.ldc], 64, "ldc")
        c_elem = str(_type_of(self.c, PtrType).element_type)
        if c_elem not in C_ELEMENTS:
            raise VerifyError(f"C must point to {', '.join(C_ELEMENTS)}, got {c_elem}")
        is_grouped = grouped != Grouped.NONE
        self._check_optional(
            "group_lens", self.group_lens, is_grouped, "i32", f'grouped = "{grouped}"'
        )
        if (self.num_groups is not None) != is_grouped:
            need = "needs a" if is_grouped else "takes no"
            raise VerifyError(f"grouped = \"{grouped}\" {need} 'num_groups' operand")
        if self.num_groups is not None:
            _check_ints([self.num_groups], 32, "num_groups")
        self._check_optional("sync", self.sync, self.needs_sync, "i32", self._what())
        self._check_optional("partials", self.partials, self.needs_partials, "f32", self._what())
        self._check_epilogue()
        self._check_body()

    def _check_epilogue(self) -> None:
        """The epilogue runs once per output tile, on the finished fp32 sum, where
        the tile is stored; atomic stream-K never has the finished sum of a split
        tile in one program (its contributors add into C), so it takes only the
        linear parts: the scales (each contributor scales its partial) and the
        bias (added by the contributor whose K range starts the tile)."""
        act = self.activation
        if act != Activation.NONE and self.reduction == Reduction.ATOMIC:
            raise VerifyError(
                f'activation "{act}" needs each tile\'s finished sum in one program; atomic '
                "stream-K adds partials into C (use reduction linear or tree)"
            )
        a = self.attr("accumulate")
        if a is not None and cast(a, ir.UnitAttr) is None:
            raise VerifyError(f"'accumulate' must be a unit attribute, got {a}")
        if self.grouped == Grouped.K:
            for name in ("bias", "row_scale", "col_scale"):
                if getattr(self, name) is not None:
                    raise VerifyError(
                        f"grouped = \"k\" (one output per group, wgrad) takes no '{name}'"
                    )
            if act != Activation.NONE:
                raise VerifyError(f'grouped = "k" (wgrad) takes no activation, got "{act}"')
        if act == Activation.SWIGLU:
            if self.kind not in SWIGLU_KINDS:
                raise VerifyError(
                    f'activation "swiglu" needs each tile\'s two sums in one program: kind '
                    f'{", ".join(SWIGLU_KINDS)}, not "{self.kind}" (its partials hold one '
                    "accumulator per tile)"
                )
            if self.col_scale is not None:
                raise VerifyError("activation \"swiglu\" takes no 'col_scale'")
        if self.bias is not None:
            got = str(_type_of(self.bias, PtrType).element_type)
            if got not in BIAS_ELEMENTS:
                raise VerifyError(f"'bias' must point to {', '.join(BIAS_ELEMENTS)}, got {got}")
        for name in ("row_scale", "col_scale"):
            value = getattr(self, name)
            if value is not None:
                got = str(_type_of(value, PtrType).element_type)
                if got != "f32":
                    raise VerifyError(f"'{name}' must point to f32, got {got}")

    def _check_limits(self) -> None:
        """Attributes whose products in the lowering's i32 arithmetic could wrap
        (group_m cannot: the lowering clamps it, see :func:`group_m_limit`)."""
        if self.kind == Kind.WORK_STEALING and self.num_xcds > num_xcds_limit():
            raise VerifyError(
                f"'num_xcds' must be at most {num_xcds_limit()} (the lowering indexes "
                f"counters num_xcds * {COUNTER_STRIDE} in i32), got {self.num_xcds}"
            )

    def _check_split_k(self) -> None:
        if self.attr("split_k") is None:
            return
        if self.kind != Kind.SPLIT_K:
            raise VerifyError(f'\'split_k\' is only for kind "split-k", not "{self.kind}"')
        # Equivalent mutant: required=False: the attribute is present (checked above), so
        # int_attr never reaches its branch for a missing one.
        v = self.int_attr("split_k", required=True)
        if v is None or not 1 <= v <= MAX_SPLIT_K:
            raise VerifyError(
                f"'split_k' must be 1 to {MAX_SPLIT_K} (slices per tile, each summed in "
                f"turn by the tile's last program), got {v}"
            )

    def _check_nesting(self) -> None:
        """A schedule inside another's body would rewrite all of C once per outer
        tile: every outer program's stores race on every element."""
        parent = self.operation.parent
        while parent is not None:
            if parent.name == self.OPERATION_NAME:
                raise VerifyError(
                    "must not be nested in another 'tile.gemm_schedule' (each outer tile "
                    "would write all of C: a write race)"
                )
            parent = parent.parent

    def _what(self) -> str:
        r = self.reduction
        return f'kind "{self.kind}"' + (f' with reduction "{r}"' if r else "")

    def _check_optional(self, name: str, value: Any, needed: bool, elem: str, why: str) -> None:
        if needed and value is None:
            raise VerifyError(f"{why} needs a '{name}' operand (a pointer to {elem})")
        if not needed and value is not None:
            raise VerifyError(f"{why} takes no '{name}' operand")
        if value is not None:
            got = str(_type_of(value, PtrType).element_type)
            if got != elem:
                raise VerifyError(f"'{name}' must point to {elem}, got {got}")

    def _check_body(self) -> None:
        blocks = list(self.operation.regions[0].blocks)
        if len(blocks) != 1:
            raise VerifyError(f"the body must have one block, got {len(blocks)}")
        args = list(blocks[0].arguments)
        if len(args) != len(BODY_ARGS) or any(str(a.type) != "i32" for a in args):
            got = ", ".join(str(a.type) for a in args) or "none"
            raise VerifyError(
                f"the body takes {len(BODY_ARGS)} i32 arguments ({', '.join(BODY_ARGS)}), "
                f"got ({got})"
            )
        ops = list(blocks[0].operations)
        if not ops or ops[-1].operation.name != ScheduleYieldOp.OPERATION_NAME:
            raise VerifyError("the body must end with 'tile.schedule_yield'")
        y = ops[-1].operation
        swiglu = self.activation == Activation.SWIGLU
        if len(y.operands) != 1 + swiglu:
            raise VerifyError(
                "'tile.schedule_yield' yields two accumulators (gate, up) for activation \"swiglu\""
                if swiglu
                else "'tile.schedule_yield' yields one accumulator"
            )
        t = cast(y.operands[0].type, ir.RankedTensorType)
        bm, bn = self.int_attr("block_m"), self.int_attr("block_n")
        want = f"tensor<{bm}x{bn}xf32, #layout>"
        if t is None or tuple(t.shape) != (bm, bn) or str(t.element_type) != "f32":
            raise VerifyError(f"the body must yield {want}, got {y.operands[0].type}")
        if swiglu and y.operands[1].type != y.operands[0].type:
            raise VerifyError(
                f"the two accumulators of swiglu must have one type, got "
                f"{y.operands[0].type} and {y.operands[1].type}"
            )
        if not isinstance(t.encoding, BlockedAttr | WmmaAttr):
            raise VerifyError(
                f"the body must yield {want} with a register layout (#tile.blocked or "
                f"#tile.wmma_layout), got {t.encoding}"
            )
        check_register_layout(self, t, "the yielded accumulator")

    # -- accessors (checked) --

    @property
    def kind(self) -> Kind:
        a = self.attr("kind")
        if a is None:
            raise VerifyError(f"requires attribute 'kind' (one of {', '.join(KINDS)})")
        return _mode(self, "kind", KINDS, None)

    @property
    def reduction(self) -> Reduction | None:
        return _mode(self, "reduction", REDUCTIONS, None)

    @property
    def grouped(self) -> Grouped:
        return _mode(self, "grouped", GROUPED, Grouped.NONE)

    @property
    def activation(self) -> Activation:
        return _mode(self, "activation", ACTIVATIONS, Activation.NONE)

    @property
    def accumulate(self) -> bool:
        """Whether the epilogue adds the tile to C's old values (``C += ...``)."""
        return self.attr("accumulate") is not None

    @property
    def tile_loop(self) -> TileLoop:
        return _mode(self, "tile_loop", TILE_LOOPS, TileLoop.FLAT)

    @property
    def c_layout(self) -> CLayout:
        return _mode(self, "c_layout", C_LAYOUTS, CLayout.ROW_MAJOR)

    @property
    def num_xcds(self) -> int:
        """Work stealing's chiplets (one counter each); 1 for the other kinds."""
        v = self.int_attr("num_xcds") if self.kind == Kind.WORK_STEALING else None
        return 1 if v is None else v

    @property
    def split_k(self) -> int | None:
        """Split-K's slices per tile when fixed at compile time (None: from the grid)."""
        return self.int_attr("split_k") if self.kind == Kind.SPLIT_K else None

    @property
    def needs_sync(self) -> bool:
        return needs_sync(self.kind, self.reduction)

    @property
    def needs_partials(self) -> bool:
        return needs_partials(self.kind, self.reduction)

    def block(self) -> tuple[int, int, int]:
        """(block_m, block_n, block_k)."""
        return (self.int_attr("block_m"), self.int_attr("block_n"), self.int_attr("block_k"))  # type: ignore[return-value]


class ScheduleYieldOp(TileOp, name="schedule_yield", traits=[ir.IsTerminatorTrait]):
    """End a ``tile.gemm_schedule`` body with the tile's fp32 partial accumulator
    (two, gate and up, for a ``swiglu`` epilogue).

    ```mlir
    "tile.schedule_yield"(%acc) : (tensor<64x64xf32, #acc>) -> ()
    ```
    Rules: inside a ``tile.gemm_schedule`` (the count and types are checked there).
    """

    accs: Sequence[ext.Operand[Any]]

    def verify(self) -> None:
        parent = self.operation.parent
        if parent is None or parent.name != GemmScheduleOp.OPERATION_NAME:
            where = "nothing" if parent is None else f"'{parent.name}'"
            raise VerifyError(f"must be inside a 'tile.gemm_schedule', not {where}")


__all__ = [
    "BIAS_ELEMENTS",
    "BODY_ARGS",
    "C_ELEMENTS",
    "I32_MAX",
    "GemmScheduleOp",
    "ScheduleYieldOp",
    "group_m_limit",
    "num_xcds_limit",
]
