"""The ``tile`` dialect: a small Gluon-like tile dialect for GPU GEMM kernels.

It models AMD gfx1250's Tensor Data Mover (TDM) copy with its optional
``warp_used_hint`` (bit n = warp n takes part) and the ops a pipelined GEMM
needs around it. Like Gluon, layouts are explicit: descriptor and shared
buffer types carry a shared layout attribute, register tensors carry a
register layout, and the enclosing module carries

* ``tile.num_warps`` (i32): warps per program,
* ``tile.threads_per_warp`` (i32): the target's warp size,
* ``tile.target`` (string): a target of :data:`gemm_opt.core.targets.TARGETS`.

Invariants kept by every op verifier:

* a descriptor's block and the buffer it copies into agree on shape, element
  type and shared layout;
* a ``warp_used_hint`` obeys :mod:`gemm_opt.core.warp_hint` (the one source of the
  rule) for the enclosing ``tile.num_warps``, block shape and shared layout.

Ops print in MLIR's generic form (the bindings define them through IRDL);
types and attributes print in their pretty form, e.g.
``!tile.tensor_desc<tensor<128x64xf16, #tile.swizzled_shared<{...}>>>``.
"""

from collections.abc import Sequence
from typing import Any

from gemm_opt.core.contract import (
    NUM_WARPS,
    TARGET,
    THREADS_PER_WARP,
    WARP_LAYOUT,
    WARP_LAYOUTS,
    WARP_USED_HINT,
    WARP_USED_HINTS,
)
from gemm_opt.core.ext_compat import cast, ext, ir
from gemm_opt.core.layouts import (
    PaddedShared,
    PartitionedShared,
    SharedLayout,
    SwizzledShared,
)
from gemm_opt.core.targets import TARGETS
from gemm_opt.core.tdm_layout import tdm_warp_layout
from gemm_opt.core.warp_hint import (
    WarpHintError,
    check_fused_warp_hints,
    check_warp_used_hint,
)


class VerifyError(Exception):
    """Raised inside an op verifier; reported at the op's location."""


class Tile(ext.Dialect, name="tile"):
    """The ``tile`` dialect."""


# ---- module attributes --------------------------------------------------------


def _enclosing_attr(op: ir.Operation, name: str) -> ir.Attribute | None:
    """The attribute ``name`` on ``op`` or its nearest ancestor that has it."""
    cur: Any = op
    while cur is not None:
        if name in cur.attributes:
            return cur.attributes[name]
        cur = _parent(cur)
    return None


def enclosing_int_attr(op: ir.Operation, name: str) -> int | None:
    """The integer attribute ``name`` on the nearest enclosing op, if any."""
    attr = _enclosing_attr(op, name)
    if attr is None:
        return None
    if cast(attr, ir.IntegerAttr) is None:
        raise VerifyError(f"'{name}' must be an integer attribute, got {attr}")
    return ir.IntegerAttr(attr).value


def enclosing_target(op: ir.Operation) -> str | None:
    """The ``tile.target`` string of the nearest enclosing op, if any."""
    attr = _enclosing_attr(op, TARGET)
    return None if attr is None else ir.StringAttr(attr).value


def _parent(op: Any) -> Any:
    try:
        return op.parent
    except (ValueError, RuntimeError):
        return None


def verify_module_attributes(module_op: ir.Operation) -> list[str]:
    """Return the problems of the module-level ``tile.*`` attributes."""
    problems = []
    attrs = module_op.attributes
    if NUM_WARPS in attrs:
        a = attrs[NUM_WARPS]
        if cast(a, ir.IntegerAttr) is None or ir.IntegerAttr(a).value < 1:
            problems.append(f"'{NUM_WARPS}' must be a positive integer, got {a}")
    if THREADS_PER_WARP in attrs:
        a = attrs[THREADS_PER_WARP]
        if cast(a, ir.IntegerAttr) is None or ir.IntegerAttr(a).value not in (32, 64):
            problems.append(f"'{THREADS_PER_WARP}' must be 32 or 64, got {a}")
    if TARGET in attrs:
        a = attrs[TARGET]
        if cast(a, ir.StringAttr) is None or ir.StringAttr(a).value not in TARGETS:
            known = ", ".join(TARGETS)
            problems.append(f"'{TARGET}' must be one of {known}, got {a}")
    return problems


# ---- layout attributes ----------------------------------------------------------


class LayoutAttr(Tile.Attribute):
    """Base of layout attributes: one dictionary parameter of named fields."""

    fields: Any

    FIELDS = {}  # noqa: RUF012  (a class annotation would become an IRDL parameter)
    """Field name -> kind ("int", "ints", "bool", "layout")."""

    def field_values(self) -> dict[str, Any]:
        """The fields as Python values, checked against ``FIELDS``."""
        raw = self.fields
        if cast(raw, ir.DictAttr) is None:
            raise VerifyError(f"#{self.attr_name} expects a dictionary of fields, got {raw}")
        d = ir.DictAttr(raw)
        values: dict[str, Any] = {}
        for name, kind in self.FIELDS.items():
            if name not in d:
                continue
            values[name] = _field_value(self.attr_name, name, kind, d[name])
        for i in range(len(d)):
            named = d[i]
            if named.name not in self.FIELDS:
                known = ", ".join(self.FIELDS)
                raise VerifyError(
                    f"#{self.attr_name} has no field '{named.name}' (fields: {known})"
                )
        return values

    @classmethod
    def build(cls, **values: Any) -> "LayoutAttr":
        """Build the attribute from Python values (ints, int sequences, layouts)."""
        entries = {}
        for name, value in values.items():
            kind = cls.FIELDS[name]
            if kind == "int":
                entries[name] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), value)
            elif kind == "ints":
                entries[name] = ir.DenseI64ArrayAttr.get(list(value))
            elif kind == "bool":
                entries[name] = ir.BoolAttr.get(bool(value))
            else:
                entries[name] = value
        return cls(cls.get(ir.DictAttr.get(entries)))


def _field_value(owner: str, name: str, kind: str, attr: ir.Attribute) -> Any:
    if kind == "int" and cast(attr, ir.IntegerAttr) is not None:
        return ir.IntegerAttr(attr).value
    if kind == "ints" and cast(attr, ir.DenseI64ArrayAttr) is not None:
        return tuple(ir.DenseI64ArrayAttr(attr))
    if kind == "bool" and cast(attr, ir.BoolAttr) is not None:
        return ir.BoolAttr(attr).value
    if kind == "layout" and isinstance(attr, LayoutAttr):
        return attr
    expected = {
        "int": "an integer",
        "ints": "array<i64: ...>",
        "bool": "true or false",
        "layout": "a #tile layout attribute",
    }[kind]
    raise VerifyError(f"#{owner} field '{name}' must be {expected}, got {attr}")


class SharedLayoutAttr(LayoutAttr):
    """Base of shared-memory layouts."""

    def to_layout(self) -> "SharedLayout":
        """The pure-Python layout used by the warp-hint rule and the model."""
        raise NotImplementedError


class SwizzledSharedAttr(SharedLayoutAttr, name="swizzled_shared"):
    """``#tile.swizzled_shared<{vec, per_phase, max_phase, order}>``: XOR swizzle."""

    FIELDS = {  # noqa: RUF012
        "vec": "int",
        "per_phase": "int",
        "max_phase": "int",
        "order": "ints",
    }

    def to_layout(self) -> SwizzledShared:
        v = self.field_values()
        return SwizzledShared(
            vec=v.get("vec", 1),
            per_phase=v.get("per_phase", 1),
            max_phase=v.get("max_phase", 1),
            order=v.get("order", (1, 0)),
        )


class PaddedSharedAttr(SharedLayoutAttr, name="padded_shared"):
    """``#tile.padded_shared<{interval, amount, order}>``: pad every interval."""

    FIELDS = {"interval": "int", "amount": "int", "order": "ints"}  # noqa: RUF012

    def to_layout(self) -> PaddedShared:
        v = self.field_values()
        if "interval" not in v or "amount" not in v:
            raise VerifyError("#tile.padded_shared needs fields 'interval' and 'amount'")
        if not _is_pow2(v["interval"]) or not _is_pow2(v["amount"]):
            raise VerifyError(
                "#tile.padded_shared 'interval' and 'amount' must be powers of two, "
                f"got {v['interval']} and {v['amount']}"
            )
        return PaddedShared(v["interval"], v["amount"], v.get("order", (1, 0)))


class PartitionedSharedAttr(SharedLayoutAttr, name="partitioned_shared"):
    """``#tile.partitioned_shared<{num_partitions, num_groups, partition_dim, layout}>``."""

    FIELDS = {  # noqa: RUF012
        "num_partitions": "int",
        "num_groups": "int",
        "partition_dim": "int",
        "layout": "layout",
    }

    def to_layout(self) -> PartitionedShared:
        v = self.field_values()
        for f in ("num_partitions", "num_groups", "partition_dim"):
            if f not in v:
                raise VerifyError(f"#tile.partitioned_shared needs field '{f}'")
        inner_attr = v.get("layout")
        inner: SwizzledShared | PaddedShared = SwizzledShared()
        if inner_attr is not None:
            if not isinstance(inner_attr, SwizzledSharedAttr | PaddedSharedAttr):
                raise VerifyError(
                    "#tile.partitioned_shared 'layout' must be a swizzled or padded layout"
                )
            inner = inner_attr.to_layout()
        if v["num_partitions"] < 1 or v["num_groups"] < 1:
            raise VerifyError("#tile.partitioned_shared needs at least one partition and group")
        return PartitionedShared(v["num_partitions"], v["num_groups"], v["partition_dim"], inner)


class RegisterLayoutAttr(LayoutAttr):
    """Base of register layouts: which thread of which warp holds which element."""


class BlockedAttr(RegisterLayoutAttr, name="blocked"):
    """``#tile.blocked<{size_per_thread, threads_per_warp, warps_per_cta, order}>``.

    Each thread holds ``size_per_thread`` contiguous elements; threads and warps
    tile the tensor in ``order`` (fastest dimension first), wrapping around.
    """

    FIELDS = {  # noqa: RUF012
        "size_per_thread": "ints",
        "threads_per_warp": "ints",
        "warps_per_cta": "ints",
        "order": "ints",
    }


class WmmaAttr(RegisterLayoutAttr, name="wmma_layout"):
    """``#tile.wmma_layout<{version, warps_per_cta, instr_shape, transposed}>``: the
    accumulator layout of matrix instructions.

    On gfx1250 it is Triton's ``amd_wmma`` (version 3, instruction shape
    16x16x32 for 16-bit inputs); on gfx950/gfx942, which have MFMA instead, the
    lowering maps it to ``amd_mfma`` with the same warps_per_cta.
    """

    FIELDS = {  # noqa: RUF012
        "version": "int",
        "warps_per_cta": "ints",
        "instr_shape": "ints",
        "transposed": "bool",
    }

    def instr_shape(self) -> tuple[int, int, int]:
        """(M, N, K) of one instruction; 16x16x32 unless given."""
        shape = self.field_values().get("instr_shape", (16, 16, 32))
        if len(shape) != 3:
            raise VerifyError(
                f"#tile.wmma_layout instr_shape must have 3 entries, got {list(shape)}"
            )
        return shape[0], shape[1], shape[2]

    def warps_per_cta(self) -> tuple[int, ...]:
        """Warps along M and N."""
        w = self.field_values().get("warps_per_cta")
        if w is None or len(w) != 2:
            raise VerifyError("#tile.wmma_layout needs warps_per_cta = array<i64: WM, WN>")
        return w


class DotOperandAttr(RegisterLayoutAttr, name="dot_operand"):
    """``#tile.dot_operand<{op_idx, parent, k_width}>``: the layout of operand A
    (op_idx 0) or B (op_idx 1) of a ``tile.wmma`` whose accumulator has layout
    ``parent``; ``k_width`` is the number of consecutive K elements per thread.
    """

    FIELDS = {"op_idx": "int", "parent": "layout", "k_width": "int"}  # noqa: RUF012


class TdmWarpLayoutAttr(LayoutAttr, name="tdm_warp_layout"):
    """``#tile.tdm_warp_layout<{...}>``: which warp copies which tile of a TDM block.

    Attached by ``tile-assign-tdm-warp-layout`` as the copy's ``tile.warp_layout``
    attribute (for a fused copy, ``tile.warp_layouts``, one per member). Fields:
    ``warps_per_dim`` and ``tile`` (elements per warp) per block dimension,
    ``warp_bases`` (log2(num_warps) rows of rank offsets, flattened: the tile
    offset each warp-id bit contributes, zero for a pinned bit), ``anchor``
    (lowest active warp; warp ids are XOR-ed with it) and ``free_mask`` (the
    warp-id bits with a zero base: warp w copies iff
    ``((w ^ anchor) & free_mask) == 0``).
    """

    FIELDS = {  # noqa: RUF012
        "warps_per_dim": "ints",
        "tile": "ints",
        "warp_bases": "ints",
        "anchor": "int",
        "free_mask": "int",
    }


def warp_layout_fields(layout: Any) -> dict[str, Any]:
    """The ``#tile.tdm_warp_layout`` fields of a :class:`gemm_opt.core.tdm_layout.TdmWarpLayout`."""
    return {
        "warps_per_dim": tuple(layout.warps_per_dim),
        "tile": tuple(layout.tile),
        "warp_bases": tuple(v for row in layout.warp_bases for v in row),
        "anchor": layout.anchor,
        "free_mask": layout.free_mask,
    }


def _check_warp_layout(op: Any, name: str, attr: Any, hint: int | None, shape, layout) -> None:
    """An attached warp layout must be the one ``tdm_warp_layout`` computes."""
    what = f"warp_used_hint {hint:#x}" if hint is not None else "an unhinted copy"
    num_warps = op.num_warps() if isinstance(attr, TdmWarpLayoutAttr) else None
    if num_warps is None:
        raise VerifyError(f"'{name}' needs a #tile.tdm_warp_layout and tile.num_warps")
    try:
        want = warp_layout_fields(tdm_warp_layout(shape, num_warps, hint, layout))
    except ValueError as e:
        raise VerifyError(f"'{name}' does not match {what}: {e}") from None
    got = attr.field_values()
    diff = [k for k in want if got.get(k) != want[k]]
    if diff:
        exp = ", ".join(f"{k} = {want[k]}" for k in diff)
        act = ", ".join(f"{k} = {got.get(k)}" for k in diff)
        raise VerifyError(f"'{name}' does not match {what}: expected {exp}, got {act}")


def _is_pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


# ---- types ----------------------------------------------------------------------


class PtrType(Tile.Type, name="ptr"):
    """``!tile.ptr<f16>``: a pointer to global memory."""

    pointee: Any

    @property
    def element_type(self) -> ir.Type:
        if cast(self.pointee, ir.TypeAttr) is None:
            raise VerifyError(f"!tile.ptr expects an element type, got {self.pointee}")
        return ir.TypeAttr(self.pointee).value


class _BlockType(Tile.Type):
    """Base of types whose one parameter is ``tensor<shape x elem, #shared>``."""

    block: Any

    def tensor(self) -> ir.RankedTensorType:
        b = self.block
        if cast(b, ir.TypeAttr) is None or (
            cast(ir.TypeAttr(b).value, ir.RankedTensorType) is None
        ):
            raise VerifyError(
                f"{self} expects a parameter tensor<SHAPE x ELEM, #tile.*_shared<...>>"
            )
        t = ir.RankedTensorType(ir.TypeAttr(b).value)
        if any(d <= 0 for d in t.shape):
            raise VerifyError(f"{self} has a non-positive dimension in shape {list(t.shape)}")
        if not isinstance(t.encoding, SharedLayoutAttr):
            raise VerifyError(f"{self} needs a #tile.*_shared layout, got {t.encoding}")
        return t

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.tensor().shape)

    @property
    def element_type(self) -> ir.Type:
        return self.tensor().element_type

    @property
    def layout_attr(self) -> SharedLayoutAttr:
        return self.tensor().encoding  # type: ignore[return-value]

    def shared_layout(self) -> SharedLayout:
        layout = self.layout_attr.to_layout()
        if isinstance(layout, PartitionedShared) and not (
            0 <= layout.partition_dim < len(self.shape)
        ):
            raise VerifyError(
                f"partition_dim {layout.partition_dim} is out of range for a "
                f"rank-{len(self.shape)} block"
            )
        return layout


class TensorDescType(_BlockType, name="tensor_desc"):
    """``!tile.tensor_desc<tensor<128x64xf16, #shared>>``: a TDM global descriptor.

    The tensor parameter is the *block* one copy moves, with the shared layout
    the data takes in LDS.
    """


class SharedType(_BlockType, name="shared"):
    """``!tile.shared<tensor<2x128x64xf16, #shared>>``: a shared-memory buffer."""


class MBarrierType(Tile.Type, name="mbarrier"):
    """``!tile.mbarrier<i64>``: a shared-memory barrier a copy may arrive on."""

    width: Any


# ---- op base --------------------------------------------------------------------


class TileOp(Tile.Operation):
    """Base of tile ops: routes ``verify()`` through one error-reporting path.

    Subclasses implement ``verify()`` and raise :class:`VerifyError`; the
    message is reported as ``'tile.<op>' op <message>`` at the op's location.
    Any other exception is a bug and is reported as an internal error rather
    than escaping to the caller.
    """

    def verify(self) -> None:
        """Check the op; raise VerifyError on a violated rule."""

    def verify_invariants(self) -> bool:
        try:
            self.verify()
        except (VerifyError, WarpHintError) as e:
            self.location.emit_error(f"'{self.OPERATION_NAME}' op {e}")
            return False
        except Exception as e:  # a verifier bug must not crash the tool
            self.location.emit_error(
                f"'{self.OPERATION_NAME}' op internal verifier error: {type(e).__name__}: {e}"
            )
            return False
        return True

    # -- helpers for subclasses --

    def attr(self, name: str) -> ir.Attribute | None:
        attrs = self.operation.attributes
        return attrs[name] if name in attrs else None

    def int_attr(self, name: str, required: bool = False) -> int | None:
        a = self.attr(name)
        if a is None:
            if required:
                raise VerifyError(f"requires attribute '{name}'")
            return None
        if cast(a, ir.IntegerAttr) is None:
            raise VerifyError(f"attribute '{name}' must be an integer, got {a}")
        return ir.IntegerAttr(a).value

    def num_warps(self) -> int | None:
        return enclosing_int_attr(self.operation, NUM_WARPS)


def _type_of(value: ir.Value, cls: type) -> Any:
    t = value.type
    if not isinstance(t, cls):
        raise VerifyError(f"expected {cls.__name__}, got {t}")
    return t


def _check_i1(value: ir.Value | None, what: str) -> None:
    if value is None:
        return
    t = value.type
    if not (cast(t, ir.IntegerType) is not None and ir.IntegerType(t).width == 1):
        raise VerifyError(f"{what} must be i1, got {t}")


def _check_ints(values: Sequence[ir.Value], width: int, what: str) -> None:
    for v in values:
        t = v.type
        if not (cast(t, ir.IntegerType) is not None and ir.IntegerType(t).width == width):
            raise VerifyError(f"{what} must be i{width}, got {t}")


def _check_same_block(desc: TensorDescType, dest: SharedType, member: str = "") -> None:
    where = f"member {member}: " if member else ""
    if desc.shape != dest.shape:
        raise VerifyError(
            f"{where}destination shape {list(dest.shape)} does not match the "
            f"descriptor block {list(desc.shape)}"
        )
    if desc.element_type != dest.element_type:
        raise VerifyError(
            f"{where}destination element type {dest.element_type} does not match "
            f"the descriptor's {desc.element_type}"
        )
    if desc.layout_attr != dest.layout_attr:
        raise VerifyError(
            f"{where}destination layout {dest.layout_attr} does not match the "
            f"descriptor's {desc.layout_attr}"
        )


def check_tdm_layout(layout: SharedLayout, member: str = "") -> None:
    """TDM writes rows linearly: it can pad but not XOR-swizzle (as in Triton 3.9.0)."""
    inner = layout.inner if isinstance(layout, PartitionedShared) else layout
    if isinstance(inner, SwizzledShared) and (inner.vec > 1 or inner.max_phase > 1):
        where = f"member {member}: " if member else ""
        raise VerifyError(
            f"{where}TDM does not support swizzled shared layouts (vec = {inner.vec}, "
            f"max_phase = {inner.max_phase}): use #tile.padded_shared to avoid bank "
            "conflicts, or vec = 1 and max_phase = 1"
        )


CACHE_MODIFIERS = ("", ".ca", ".cg", ".cs", ".cv", ".wb", ".wt")


def cache_modifier(op: TileOp) -> str:
    """The op's ``cache`` modifier ("" when absent), checked."""
    a = op.attr("cache")
    if a is None:
        return ""
    if cast(a, ir.StringAttr) is None or ir.StringAttr(a).value not in CACHE_MODIFIERS:
        raise VerifyError(f"cache modifier must be one of {CACHE_MODIFIERS}, got {a}")
    return ir.StringAttr(a).value


# ---- ids ------------------------------------------------------------------------


class WarpIdOp(TileOp, name="warp_id", traits=[ext.Pure]):
    """The calling warp's id within its program (the wave id on AMD).

    ```mlir
    %w = "tile.warp_id"() : () -> i32
    ```
    Rules: none beyond the i32 result.
    """

    result: ext.Result[ir.IntegerType[32]] = ext.infer_result()


class ProgramIdOp(TileOp, name="program_id", traits=[ext.Pure]):
    """The program (workgroup) id along ``axis`` 0, 1 or 2.

    ```mlir
    %pid = "tile.program_id"() {axis = 0 : i32} : () -> i32
    ```
    Rules: ``axis`` is required and is 0, 1 or 2.
    """

    result: ext.Result[ir.IntegerType[32]] = ext.infer_result()

    def verify(self) -> None:
        axis = self.int_attr("axis", required=True)
        if axis not in (0, 1, 2):
            raise VerifyError(f"axis must be 0, 1 or 2, got {axis}")


# ---- descriptors ------------------------------------------------------------------


class MakeTensorDescriptorOp(TileOp, name="make_tensor_descriptor", traits=[ext.Pure]):
    """Describe a global tensor for TDM copies: base, shape and strides.

    The result type names the block each copy moves and its shared layout.
    The block starts at the tensor origin; ``update_tensor_descriptor`` moves it.

    ```mlir
    %d = "tile.make_tensor_descriptor"(%a, %m, %k, %sm, %sk)
           {operandSegmentSizes = array<i32: 1, 2, 2>}
         : (!tile.ptr<f16>, i32, i32, i64, i64) -> !tile.tensor_desc<tensor<128x64xf16, #s>>
    ```
    Rules: one i32 shape and one i64 stride per block dimension; the pointee
    type is the block's element type; rank 1 to 5.
    """

    base: ext.Operand[PtrType]
    shape: Sequence[ext.Operand[Any]]
    strides: Sequence[ext.Operand[Any]]
    result: ext.Result[TensorDescType]

    def verify(self) -> None:
        desc = _type_of(self.result, TensorDescType)
        rank = len(desc.shape)
        if not 1 <= rank <= 5:
            raise VerifyError(f"TDM blocks have rank 1 to 5, got rank {rank}")
        if len(self.shape) != rank or len(self.strides) != rank:
            raise VerifyError(
                f"expects {rank} shape and {rank} stride operands for a rank-{rank} "
                f"block, got {len(self.shape)} and {len(self.strides)}"
            )
        _check_ints(list(self.shape), 32, "shape operands")
        _check_ints(list(self.strides), 64, "stride operands")
        ptr = _type_of(self.base, PtrType)
        if ptr.element_type != desc.element_type:
            raise VerifyError(
                f"base points to {ptr.element_type} but the block holds {desc.element_type}"
            )
        desc.shared_layout()


class UpdateTensorDescriptorOp(TileOp, name="update_tensor_descriptor", traits=[ext.Pure]):
    """Move a descriptor's block and optionally set bounds and a predicate.

    ``offsets`` are added to the block origin (element units, per dimension);
    ``bounds``, when given, replace the tensor extent that out-of-bounds
    elements are judged against (they read as zero); ``pred`` false turns every
    copy through the result into a no-op.

    ```mlir
    %d1 = "tile.update_tensor_descriptor"(%d, %off_m, %off_k, %pred)
            {operandSegmentSizes = array<i32: 1, 2, 0, 1>}
          : (!tile.tensor_desc<...>, i32, i32, i1) -> !tile.tensor_desc<...>
    ```
    Rules: as many offsets as the block's rank; zero or rank bounds; i32
    offsets and bounds; i1 predicate; the result type equals the operand type.
    """

    desc: ext.Operand[TensorDescType]
    offsets: Sequence[ext.Operand[Any]]
    bounds: Sequence[ext.Operand[Any]]
    result: ext.Result[TensorDescType]
    pred: ext.Operand[Any] | None = None

    def verify(self) -> None:
        desc = _type_of(self.desc, TensorDescType)
        rank = len(desc.shape)
        if self.result.type != self.desc.type:
            raise VerifyError("result type must equal the descriptor operand's type")
        if len(self.offsets) != rank:
            raise VerifyError(f"expects {rank} offsets, got {len(self.offsets)}")
        if len(self.bounds) not in (0, rank):
            raise VerifyError(f"expects 0 or {rank} bounds, got {len(self.bounds)}")
        _check_ints(list(self.offsets), 32, "offsets")
        _check_ints(list(self.bounds), 32, "bounds")
        _check_i1(self.pred, "pred")


# ---- shared memory ----------------------------------------------------------------


class LocalAllocOp(TileOp, name="local_alloc"):
    """Allocate a shared-memory buffer for the whole program.

    ```mlir
    %buf = "tile.local_alloc"() : () -> !tile.shared<tensor<2x128x64xf16, #s>>
    ```
    Rules: the buffer type names a shared layout.
    """

    result: ext.Result[SharedType]

    def verify(self) -> None:
        _type_of(self.result, SharedType).shared_layout()


class MemdescIndexOp(TileOp, name="memdesc_index", traits=[ext.Pure]):
    """Select buffer ``index`` of a multi-buffered allocation (drops dim 0).

    ```mlir
    %b = "tile.memdesc_index"(%bufs, %i)
         : (!tile.shared<tensor<2x128x64xf16, #s>>, i32) -> !tile.shared<tensor<128x64xf16, #s>>
    ```
    Rules: the result is the source without its leading dimension, same element
    type and layout; the index is i32.
    """

    src: ext.Operand[SharedType]
    index: ext.Operand[Any]
    result: ext.Result[SharedType]

    def verify(self) -> None:
        src = _type_of(self.src, SharedType)
        res = _type_of(self.result, SharedType)
        _check_ints([self.index], 32, "index")
        if len(src.shape) < 2 or src.shape[1:] != res.shape:
            raise VerifyError(
                f"result shape {list(res.shape)} must be the source shape "
                f"{list(src.shape)} without its leading dimension"
            )
        if src.element_type != res.element_type or src.layout_attr != res.layout_attr:
            raise VerifyError("result must keep the source's element type and layout")


class LocalLoadOp(TileOp, name="local_load"):
    """Read a shared buffer into a register tensor (the tensor's layout decides
    which thread holds which element).

    ```mlir
    %a = "tile.local_load"(%buf) : (!tile.shared<tensor<128x64xf16, #s>>)
         -> tensor<128x64xf16, #tile.dot_operand<{...}>>
    ```
    Rules: same shape and element type as the buffer.
    """

    src: ext.Operand[SharedType]
    result: ext.Result[Any]

    def verify(self) -> None:
        src = _type_of(self.src, SharedType)
        res = self.result.type
        if cast(res, ir.RankedTensorType) is None:
            raise VerifyError(f"result must be a ranked tensor, got {res}")
        res = ir.RankedTensorType(res)
        if tuple(res.shape) != src.shape or res.element_type != src.element_type:
            raise VerifyError(
                f"result {res} must match the buffer's shape {list(src.shape)} and "
                f"element type {src.element_type}"
            )


# ---- TDM copies -------------------------------------------------------------------


class AsyncTDMCopyGlobalToLocalOp(TileOp, name="async_tdm_copy_global_to_local"):
    """Asynchronously copy a descriptor's block into a shared buffer with TDM.

    Each taking-part warp issues one TDM instruction for its own tile of the
    block; by default all warps split the block. ``warp_used_hint`` (i32, bit n
    = warp n) restricts the copy to the selected K warps, which then split the
    block among themselves; the data written to ``dest`` is the same either way.
    Completion is awaited with ``tile.async_tdm_wait``.

    ```mlir
    "tile.async_tdm_copy_global_to_local"(%d, %buf)
        {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 15 : i32}
      : (!tile.tensor_desc<tensor<128x64xf16, #s>>, !tile.shared<tensor<128x64xf16, #s>>) -> ()
    ```
    Rules:

    * ``dest`` has the descriptor block's shape, element type and layout;
    * optional ``pred`` is i1; optional ``barrier`` is a ``!tile.mbarrier``;
    * ``cache`` is one of ``CACHE_MODIFIERS``;
    * ``warp_used_hint``, when present, satisfies the warp-hint rule of
      :mod:`gemm_opt.core.warp_hint` for the enclosing ``tile.num_warps``, the block
      shape and the shared layout (which also rejects blocks too small for K).
    """

    desc: ext.Operand[TensorDescType]
    dest: ext.Operand[SharedType]
    pred: ext.Operand[Any] | None = None
    barrier: ext.Operand[MBarrierType] | None = None

    def verify(self) -> None:
        desc = _type_of(self.desc, TensorDescType)
        dest = _type_of(self.dest, SharedType)
        _check_same_block(desc, dest)
        _check_i1(self.pred, "pred")
        cache_modifier(self)
        layout = desc.shared_layout()
        check_tdm_layout(layout)
        hint = self.int_attr(WARP_USED_HINT)
        if hint is not None:
            check_warp_used_hint(hint, self.num_warps(), desc.shape, layout)
        warp_layout = self.attr(WARP_LAYOUT)
        if warp_layout is not None:
            h = self.warp_used_hint
            _check_warp_layout(self, WARP_LAYOUT, warp_layout, h, desc.shape, layout)

    @property
    def warp_used_hint(self) -> int | None:
        """The hint as an unsigned mask, or None when absent."""
        h = self.int_attr(WARP_USED_HINT)
        return None if h is None else h & 0xFFFFFFFF


class AsyncTDMFusedCopyGlobalToLocalOp(TileOp, name="async_tdm_fused_copy_global_to_local"):
    """Several hinted TDM copies issued as one instruction.

    Member i copies ``descs[i]`` into ``dests[i]`` with ``warp_used_hints[i]``;
    each warp carries the descriptor of the first member whose hint selects it,
    so the members' warp sets must not overlap. Counts as one copy for waits.

    ```mlir
    "tile.async_tdm_fused_copy_global_to_local"(%da, %db, %ba, %bb)
        {operandSegmentSizes = array<i32: 1, 1, 0, 0, 1, 1, 0, 0, 0>,
         warp_used_hints = array<i32: 15, 240>}
      : (!tile.tensor_desc<...>, !tile.tensor_desc<...>, !tile.shared<...>, !tile.shared<...>) -> ()
    ```
    Rules: 2 to 4 members; as many destinations and hints as descriptors; each
    member's destination matches its block; all members have the same rank;
    every hint is legal and the hints are pairwise disjoint; no mbarrier.
    """

    # IRDL binds a variadic group's constraint to one type, so members of
    # different block types get one optional slot each (up to four).
    desc0: ext.Operand[TensorDescType] | None = None
    desc1: ext.Operand[TensorDescType] | None = None
    desc2: ext.Operand[TensorDescType] | None = None
    desc3: ext.Operand[TensorDescType] | None = None
    dest0: ext.Operand[SharedType] | None = None
    dest1: ext.Operand[SharedType] | None = None
    dest2: ext.Operand[SharedType] | None = None
    dest3: ext.Operand[SharedType] | None = None
    barrier: ext.Operand[MBarrierType] | None = None

    def verify(self) -> None:
        slots = [self.desc0, self.desc1, self.desc2, self.desc3]
        n = len(self.descs)
        if any(v is None for v in slots[:n]):
            raise VerifyError("members must fill the descriptor slots from desc0 up")
        if not 2 <= n <= 4:
            raise VerifyError(f"requires 2 to 4 members, got {n}")
        if len(self.dests) != n:
            raise VerifyError(
                "requires the same number of descriptors and destinations, got "
                f"{n} and {len(self.dests)}"
            )
        dest_slots = [self.dest0, self.dest1, self.dest2, self.dest3]
        for i in range(min(n, len(self.dests))):
            if dest_slots[i] is None:
                raise VerifyError(f"member {i} has a descriptor but no destination")
        if self.barrier is not None:
            raise VerifyError(
                "does not take an mbarrier: a fused copy completes through "
                "tile.async_tdm_wait only; issue copies with barriers separately"
            )
        hints = self.warp_used_hints
        if len(hints) != n:
            raise VerifyError(
                f"requires one warp_used_hint per member: {n} members, {len(hints)} hints"
            )
        cache_modifier(self)
        descs = [_type_of(d, TensorDescType) for d in self.descs]
        dests = [_type_of(d, SharedType) for d in self.dests]
        rank0 = len(descs[0].shape)
        shared_layouts = []
        for i, (d, b) in enumerate(zip(descs, dests, strict=True)):
            _check_same_block(d, b, member=str(i))
            shared_layouts.append(d.shared_layout())
            check_tdm_layout(shared_layouts[-1], member=str(i))
            if len(d.shape) != rank0:
                raise VerifyError(
                    "requires all member descriptors to have the same rank: member "
                    f"{i} has rank {len(d.shape)}, member 0 has rank {rank0}"
                )
        check_fused_warp_hints(
            hints,
            self.num_warps(),
            [d.shape for d in descs],
            shared_layouts,
        )
        layouts = self.attr(WARP_LAYOUTS)
        if layouts is not None:
            arr = cast(layouts, ir.ArrayAttr)
            if arr is None or len(arr) != n:
                raise VerifyError(f"'{WARP_LAYOUTS}' needs one layout per member, got {layouts}")
            for h, d, lay, a in zip(hints, descs, shared_layouts, arr, strict=True):
                _check_warp_layout(self, WARP_LAYOUTS, a, h, d.shape, lay)

    @property
    def descs(self) -> list[ir.Value]:
        """The members' descriptors, in member order."""
        slots = [self.desc0, self.desc1, self.desc2, self.desc3]
        return [v for v in slots if v is not None]

    @property
    def dests(self) -> list[ir.Value]:
        """The members' destination buffers, in member order."""
        slots = [self.dest0, self.dest1, self.dest2, self.dest3]
        return [v for v in slots if v is not None]

    @property
    def warp_used_hints(self) -> list[int]:
        a = self.attr(WARP_USED_HINTS)
        if a is None:
            raise VerifyError(f"requires attribute '{WARP_USED_HINTS}'")
        if cast(a, ir.DenseI32ArrayAttr) is None:
            raise VerifyError(f"'{WARP_USED_HINTS}' must be array<i32: ...>, got {a}")
        return [h & 0xFFFFFFFF for h in ir.DenseI32ArrayAttr(a)]


class AsyncTDMWaitOp(TileOp, name="async_tdm_wait"):
    """Wait until at most ``num`` TDM copies issued by this warp are in flight.

    A fused copy counts as one. ``num = 0`` waits for everything.

    ```mlir
    "tile.async_tdm_wait"() {num = 1 : i32} : () -> ()
    ```
    Rules: ``num`` is required and non-negative.
    """

    def verify(self) -> None:
        num = self.int_attr("num", required=True)
        if num is not None and num < 0:
            raise VerifyError(f"num must be non-negative, got {num}")


# ---- compute and global memory -----------------------------------------------------


def _ranked(value: ir.Value, what: str) -> ir.RankedTensorType:
    t = cast(value.type, ir.RankedTensorType)
    if t is None:
        raise VerifyError(f"{what} must be a ranked tensor, got {value.type}")
    return t


def _is_16bit_float(t: ir.Type) -> bool:
    return cast(t, ir.F16Type) is not None or cast(t, ir.BF16Type) is not None


class WmmaOp(TileOp, name="wmma", traits=[ext.Pure]):
    """``d = a @ b + c`` on matrix cores: fp16/bf16 inputs, fp32 accumulation.

    ```mlir
    %d = "tile.wmma"(%a, %b, %c)
         : (tensor<128x64xf16, #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>>,
            tensor<64x128xf16, #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>>,
            tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    ```
    Rules: A is MxK, B is KxN, C and D are MxN; A and B are both f16 or both
    bf16; C and D are f32 with a ``#tile.wmma_layout`` layout; A and B carry
    ``#tile.dot_operand`` layouts with op_idx 0 and 1 whose parent is C's
    layout; M, N and K are multiples of the instruction shape.
    """

    a: ext.Operand[Any]
    b: ext.Operand[Any]
    c: ext.Operand[Any]
    result: ext.Result[Any]

    def verify(self) -> None:
        a, b, c = _ranked(self.a, "a"), _ranked(self.b, "b"), _ranked(self.c, "c")
        d = _ranked(self.result, "result")
        if a.rank != 2 or b.rank != 2 or c.rank != 2:
            raise VerifyError("a, b and c must be 2-D")
        (m, k), (k2, n) = a.shape, b.shape
        if k != k2:
            raise VerifyError(f"expects a's K ({k}) to equal b's K ({k2})")
        if tuple(c.shape) != (m, n):
            raise VerifyError(f"expects c to be {m}x{n} (a is {m}x{k}, b is {k}x{n}), got {c}")
        if d != c:
            raise VerifyError(f"result type {d} must equal c's type {c}")
        if not _is_16bit_float(a.element_type) or a.element_type != b.element_type:
            raise VerifyError(
                f"expects a and b to be both f16 or both bf16, got {a.element_type} and "
                f"{b.element_type}"
            )
        if cast(c.element_type, ir.F32Type) is None:
            raise VerifyError(f"expects an f32 accumulator, got {c.element_type}")
        acc = c.encoding
        if not isinstance(acc, WmmaAttr):
            raise VerifyError(f"c must have a #tile.wmma_layout layout, got {acc}")
        for idx, (name, t) in enumerate((("a", a), ("b", b))):
            enc = t.encoding
            if not isinstance(enc, DotOperandAttr):
                raise VerifyError(f"{name} must have a #tile.dot_operand layout, got {enc}")
            v = enc.field_values()
            if v.get("op_idx") != idx:
                raise VerifyError(f"{name}'s dot_operand layout must have op_idx = {idx}")
            if v.get("parent") != acc:
                raise VerifyError(f"{name}'s dot_operand parent must be c's layout {acc}")
        im, in_, ik = acc.instr_shape()
        if m % im or n % in_ or k % ik:
            raise VerifyError(
                f"{m}x{n}x{k} is not a multiple of the instruction shape {im}x{in_}x{ik}"
            )


class ConvertLayoutOp(TileOp, name="convert_layout", traits=[ext.Pure]):
    """Move a register tensor to another layout (same shape and element type).

    ```mlir
    %y = "tile.convert_layout"(%x) : (tensor<128x128xf16, #acc>) -> tensor<128x128xf16, #blocked>
    ```
    Rules: same shape and element type.
    """

    src: ext.Operand[Any]
    result: ext.Result[Any]

    def verify(self) -> None:
        s, r = _ranked(self.src, "src"), _ranked(self.result, "result")
        if tuple(s.shape) != tuple(r.shape) or s.element_type != r.element_type:
            raise VerifyError(f"result {r} must keep the shape and element type of {s}")


class _BlockAccessOp(TileOp):
    """Shared operands and checks of ``load_block`` and ``store_block``."""

    base: ext.Operand[PtrType]
    shape: Sequence[ext.Operand[Any]]
    strides: Sequence[ext.Operand[Any]]
    offsets: Sequence[ext.Operand[Any]]

    def check_access(self, value_type: ir.RankedTensorType) -> None:
        rank = value_type.rank
        for what, vals, width in (
            ("shape", self.shape, 32),
            ("strides", self.strides, 64),
            ("offsets", self.offsets, 32),
        ):
            if len(vals) != rank:
                raise VerifyError(f"expects {rank} {what} for a rank-{rank} block, got {len(vals)}")
            _check_ints(list(vals), width, what)
        ptr = _type_of(self.base, PtrType)
        if ptr.element_type != value_type.element_type:
            raise VerifyError(
                f"base points to {ptr.element_type} but the block holds {value_type.element_type}"
            )


class LoadBlockOp(_BlockAccessOp, name="load_block"):
    """Masked load of a block of a global tensor into registers.

    Element ``i`` of the block reads ``base[sum((offsets + i) * strides)]`` when
    ``offsets + i`` lies inside ``shape``, and 0 otherwise.

    ```mlir
    %t = "tile.load_block"(%p, %m, %n, %sm, %sn, %om, %on)
         {operandSegmentSizes = array<i32: 1, 2, 2, 2>}
         : (!tile.ptr<f16>, i32, i32, i64, i64, i32, i32) -> tensor<64x64xf16, #blocked>
    ```
    Rules: one i32 shape, i64 stride and i32 offset per dimension; the pointee
    is the result's element type.
    """

    result: ext.Result[Any]

    def verify(self) -> None:
        self.check_access(_ranked(self.result, "result"))


class StoreBlockOp(_BlockAccessOp, name="store_block"):
    """Masked store of a register tensor into a block of a global tensor.

    Elements outside ``shape`` (ragged M/N edges) are not written.

    ```mlir
    "tile.store_block"(%c, %m, %n, %sm, %sn, %om, %on, %v)
        {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>}
      : (!tile.ptr<f16>, i32, i32, i64, i64, i32, i32, tensor<128x128xf16, #acc>) -> ()
    ```
    Rules: as ``load_block``, with the value's element type.
    """

    value: ext.Operand[Any]

    def verify(self) -> None:
        self.check_access(_ranked(self.value, "value"))


OPS: tuple[type, ...] = (
    WarpIdOp,
    ProgramIdOp,
    MakeTensorDescriptorOp,
    UpdateTensorDescriptorOp,
    LocalAllocOp,
    MemdescIndexOp,
    LocalLoadOp,
    AsyncTDMCopyGlobalToLocalOp,
    AsyncTDMFusedCopyGlobalToLocalOp,
    AsyncTDMWaitOp,
    WmmaOp,
    ConvertLayoutOp,
    LoadBlockOp,
    StoreBlockOp,
)

__all__ = [
    "NUM_WARPS",
    "OPS",
    "TARGET",
    "TARGETS",
    "THREADS_PER_WARP",
    "AsyncTDMCopyGlobalToLocalOp",
    "AsyncTDMFusedCopyGlobalToLocalOp",
    "AsyncTDMWaitOp",
    "BlockedAttr",
    "ConvertLayoutOp",
    "DotOperandAttr",
    "LoadBlockOp",
    "LocalAllocOp",
    "LocalLoadOp",
    "MBarrierType",
    "MakeTensorDescriptorOp",
    "MemdescIndexOp",
    "PaddedSharedAttr",
    "PartitionedSharedAttr",
    "ProgramIdOp",
    "PtrType",
    "RegisterLayoutAttr",
    "SharedLayoutAttr",
    "SharedType",
    "StoreBlockOp",
    "SwizzledSharedAttr",
    "TdmWarpLayoutAttr",
    "TensorDescType",
    "Tile",
    "UpdateTensorDescriptorOp",
    "VerifyError",
    "WarpIdOp",
    "WmmaAttr",
    "WmmaOp",
    "cache_modifier",
    "enclosing_int_attr",
    "enclosing_target",
    "verify_module_attributes",
]
