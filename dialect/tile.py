"""The ``tile`` dialect: a small Gluon-like tile dialect for GPU GEMM kernels.

It models AMD gfx1250's Tensor Data Mover (TDM) copy with its optional
``warp_used_hint`` (bit n = warp n takes part) and the ops a pipelined GEMM
needs around it. Like Gluon, layouts are explicit: descriptor and shared
buffer types carry a shared layout attribute, register tensors carry a
register layout, and the enclosing module carries

* ``tile.num_warps`` (i32): warps per program,
* ``tile.threads_per_warp`` (i32): the target's warp size,
* ``tile.target`` (string): a target of :data:`gemm_opt.core.targets.TARGETS`.

The verifier is the contract: a module it accepts lowers for every target
the module may name (:func:`possible_targets`), or is refused by this verifier,
at a tile op, when the lowering checks it for a target it did not name
(:func:`verify_for_target`). So every rule Triton would otherwise assert on
lives here, with the values in the user's terms:

* functions: a kernel (a public ``func.func``) returns nothing;
* module: ``tile.num_warps`` a power of two that the target launches
  (``num_warps * warp size <= max threads per block``), ``tile.threads_per_warp``
  the target's warp size, a known ``tile.target``; regions nest at most
  :data:`MAX_REGION_DEPTH` deep;
* ops: operand segments present and consistent; no unknown unprefixed or
  ``tile.*`` attribute (with a did-you-mean); i32 integer attributes;
* shared layouts (:func:`gemm_opt.core.layouts.check_shared_layout`): orders
  are permutations of the laid-out rank, swizzle fields and padding are powers
  of two, partitions split their dimension; TDM pads whole dwords;
* register layouts: WMMA v3 16x16x32, power-of-two warps covering
  ``tile.num_warps``, blocked threads covering the target's warp, k_width a
  power of two up to K;
* element types per op (:data:`MEMORY_ELEMENT_BITS`); a function's shared
  buffers fit the target's LDS / shared memory; constant buffer indices in
  range; TDM descriptors with a unit innermost stride;
* a descriptor's block and the buffer it copies into agree on shape, element
  type and shared layout;
* a ``warp_used_hint`` obeys :mod:`gemm_opt.core.warp_hint` (the one source of the
  rule) for the enclosing ``tile.num_warps``, block shape and shared layout.

Ops print in MLIR's generic form (the bindings define them through IRDL);
types and attributes print in their pretty form, e.g.
``!tile.tensor_desc<tensor<128x64xf16, #tile.swizzled_shared<{...}>>>``.
"""

import difflib
import io
import math
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar, NamedTuple

from gemm_opt.core.contract import (
    IMPRECISE_ACC,
    NUM_WARPS,
    TARGET,
    THREADS_PER_WARP,
    WARP_LAYOUT,
    WARP_LAYOUTS,
    WARP_PREDICATED,
    WARP_USED_HINT,
    WARP_USED_HINTS,
)
from gemm_opt.core.ext_compat import cast, ext, ir
from gemm_opt.core.layouts import (
    LayoutError,
    PaddedShared,
    PartitionedShared,
    SharedLayout,
    SwizzledShared,
    allocation_bytes,
    check_order,
    check_shared_layout,
    permuted_layout,
)
from gemm_opt.core.targets import TARGETS, Mma, Target
from gemm_opt.core.tdm_layout import tdm_warp_layout
from gemm_opt.core.warp_hint import (
    WarpHintError,
    check_fused_warp_hints,
    check_warp_used_hint,
)


class VerifyError(Exception):
    """Raised inside an op verifier; reported at the op's location (or at
    ``at``, another op of the same kind the rule is about)."""

    def __init__(self, message: str, at: Any = None) -> None:
        super().__init__(message)
        self.at = at


class Tile(ext.Dialect, name="tile"):
    """The ``tile`` dialect."""

    # The bindings emit the dialect's IRDL module op by op from Python for every
    # context that loads it; it is the same module each time, so it is emitted
    # once a process and parsed from its bytecode afterwards (1 ms, not 4-7).
    _irdl_bytecode: ClassVar[tuple[tuple[int, ...], bytes] | None] = None

    @classmethod
    def _emit_module(cls) -> ir.Module:
        # Keyed by the definitions: a module that adds an op later gets a fresh one.
        key = tuple(id(d) for d in (*cls.types, *cls.attributes, *cls.operations))
        if cls._irdl_bytecode is not None and cls._irdl_bytecode[0] == key:
            return ir.Module.parse(cls._irdl_bytecode[1])
        module = super()._emit_module()
        out = io.BytesIO()
        module.operation.write_bytecode(out)
        cls._irdl_bytecode = (key, out.getvalue())
        return module


# ---- module attributes --------------------------------------------------------


def _enclosing_attr(op: ir.Operation, name: str) -> ir.Attribute | None:
    """The attribute ``name`` on ``op`` or its nearest ancestor that has it."""
    cur: Any = op
    while cur is not None:
        if name in cur.attributes:
            return cur.attributes[name]
        cur = _parent(cur)
    return None


def int_value(attr: ir.Attribute, what: str, width: int | None = 32) -> int:
    """The value of an integer attribute of ``width`` bits (any width up to 64
    when None), checked before it is read: the bindings cannot read wider ones."""
    a = cast(attr, ir.IntegerAttr)
    bits = ir.IntegerType(a.type).width if a is not None and cast(a.type, ir.IntegerType) else 0
    if a is None or bits == 0 or (width is not None and bits != width) or bits > 64:
        want = f"an i{width} integer" if width is not None else "an integer"
        raise VerifyError(f"{what} must be {want}, got {attr}")
    return a.value


def enclosing_int_attr(op: ir.Operation, name: str) -> int | None:
    """The integer attribute ``name`` on the nearest enclosing op, if any."""
    attr = _enclosing_attr(op, name)
    return None if attr is None else int_value(attr, f"'{name}'")


#: The worker-partition op (:mod:`gemm_opt.dialect.warp_specialize`) and its warp count.
WARP_PARTITION_OP = "tile.warp_partition"
PARTITION_NUM_WARPS = "num_warps"


def running_num_warps(op: ir.Operation) -> int | None:
    """The warps that run ``op``: those of the worker partition it is in, else
    the enclosing ``tile.num_warps`` (the default partition is the function's)."""
    w = enclosing_op(op, WARP_PARTITION_OP)
    if w is not None and PARTITION_NUM_WARPS in w.attributes:
        return int_value(w.attributes[PARTITION_NUM_WARPS], f"'{PARTITION_NUM_WARPS}'")
    return enclosing_int_attr(op, NUM_WARPS)


def enclosing_op(op: Any, name: str) -> Any:
    """The nearest op named ``name`` that is ``op`` or encloses it, else None."""
    cur = op
    while cur is not None:
        if cur.name == name:
            return cur
        cur = _parent(cur)
    return None


def check_parent(op: ir.Operation, name: str, what: str) -> ir.Operation:
    """``op``'s parent, which must be named ``name`` (else: "must {what}, not ...")."""
    parent = op.parent
    if parent is None or parent.name != name:
        where = "nothing" if parent is None else f"'{parent.name}'"
        raise VerifyError(f"must {what}, not {where}")
    return parent


def enclosing_target(op: ir.Operation) -> str | None:
    """The ``tile.target`` string of the nearest enclosing op, if any."""
    attr = _enclosing_attr(op, TARGET)
    if attr is None:
        return None
    if cast(attr, ir.StringAttr) is None:
        raise VerifyError(f"'{TARGET}' must be a string, got {attr}")
    return ir.StringAttr(attr).value


def _parent(op: Any) -> Any:
    try:
        return op.parent
    except (ValueError, RuntimeError):
        return None


def possible_targets(op: ir.Operation) -> tuple[Target, ...]:
    """The targets ``op`` may be lowered for: the enclosing ``tile.target``;
    without one, every target whose warp size is the enclosing
    ``tile.threads_per_warp``; without either, every target.

    Target-dependent rules (warp size, launchable threads, shared-memory
    capacity) must hold for the named target. A module that names none is
    accepted when some possible target takes it, and is checked again for the
    target it is lowered for (:func:`verify_for_target`).
    """
    name = enclosing_target(op)
    if name is not None:
        return (TARGETS[name],) if name in TARGETS else ()
    tpw = _enclosing_attr(op, THREADS_PER_WARP)
    if tpw is not None:
        size = int_value(tpw, f"'{THREADS_PER_WARP}'")
        return tuple(t for t in TARGETS.values() if t.warp_size == size)
    return tuple(TARGETS.values())


def _target_names(targets: Sequence[Target]) -> str:
    return ", ".join(t.name for t in targets)


WARP_SIZES: tuple[int, ...] = tuple(sorted({t.warp_size for t in TARGETS.values()}))
"""Every warp size of the target table."""

MAX_REGION_DEPTH = 64
"""Deepest region nesting the tools support (real kernels nest a few levels)."""

#: The ``tile.*`` attributes a module (or any enclosing op) may carry.
MODULE_ATTRS = (NUM_WARPS, THREADS_PER_WARP, TARGET)


def check_num_warps(num_warps: int, targets: Sequence[Target]) -> None:
    """``tile.num_warps`` is a power of two that one of ``targets`` launches."""
    if num_warps < 1 or num_warps & (num_warps - 1):
        raise VerifyError(f"'{NUM_WARPS}' must be a power of two >= 1, got {num_warps}")
    if not targets:
        return
    t = max(targets, key=lambda t: t.max_threads_per_block // t.warp_size)
    threads = num_warps * t.warp_size
    if threads > t.max_threads_per_block:
        raise VerifyError(
            f"'{NUM_WARPS}' = {num_warps} needs {threads} threads per workgroup "
            f"({num_warps} warps x {t.warp_size} threads), but {t.name} launches at "
            f"most {t.max_threads_per_block} (at most "
            f"{t.max_threads_per_block // t.warp_size} warps)"
        )


class TargetProblem(NamedTuple):
    """The first error of :func:`verify_for_target`: where, and what."""

    location: ir.Location
    message: str


def verify_for_target(module_op: ir.Operation, target: str) -> TargetProblem | None:
    """Name ``target`` (and its warp size) on the module and verify it for that target.

    A module that names no ``tile.target`` passed the target-dependent rules
    for some target; the lowering calls this with the target it lowers for,
    so a module that does not fit that target gets the verifier's located
    error instead of Triton's. Returns None when it verifies, else the first
    error, at its tile op (module-level rules: at the module).
    """
    if enclosing_target(module_op) == target:
        return None  # verified for it when parsed, and after every pass
    ctx = module_op.context
    module_op.attributes[TARGET] = ir.StringAttr.get(target, context=ctx)
    if THREADS_PER_WARP in module_op.attributes:
        # A target given to the lowering overrides the module's, warp size included.
        i32 = ir.IntegerType.get_signless(32, context=ctx)
        module_op.attributes[THREADS_PER_WARP] = ir.IntegerAttr.get(i32, TARGETS[target].warp_size)
    problems = module_problems(module_op)
    if problems:
        return problems[0]
    found: list[TargetProblem] = []

    def handler(d: Any) -> bool:
        found.append(TargetProblem(d.location, str(d.message)))
        # Equivalent mutant: False passes the diagnostic on to the bindings, whose
        # copy is appended after ours, so found[0] is the same.
        return True

    handle = ctx.attach_diagnostic_handler(handler)
    try:
        ok = bool(module_op.verify())
    except ir.MLIRError as e:
        ok = False
        # The bindings may collect the diagnostics themselves (a handler of their own
        # ahead of ours): then the error carries them.
        found.extend(TargetProblem(d.location, str(d.message)) for d in e.error_diagnostics)
    finally:
        handle.detach()
    if ok:
        return None
    return found[0] if found else TargetProblem(module_op.location, f"does not verify for {target}")


def _module_attribute_problems(module_op: ir.Operation) -> Iterator[str]:
    attrs = module_op.attributes
    if TARGET in attrs:
        a = attrs[TARGET]
        if cast(a, ir.StringAttr) is None or ir.StringAttr(a).value not in TARGETS:
            known = ", ".join(TARGETS)
            yield f"'{TARGET}' must be one of {known}, got {a}"
            return
    targets = possible_targets(module_op) if THREADS_PER_WARP not in attrs else ()
    if THREADS_PER_WARP in attrs:
        a = attrs[THREADS_PER_WARP]
        a_int = cast(a, ir.IntegerAttr)
        size = int_value(a, f"'{THREADS_PER_WARP}'") if a_int is not None else None
        name = enclosing_target(module_op)
        if name is not None and size != TARGETS[name].warp_size:
            yield (
                f"'{THREADS_PER_WARP}' = {a} does not match {TARGET} \"{name}\", whose "
                f"warps have {TARGETS[name].warp_size} threads"
            )
            return
        if size not in WARP_SIZES:
            sizes = " or ".join(map(str, WARP_SIZES))
            yield f"'{THREADS_PER_WARP}' must be {sizes}, got {a}"
            return
        targets = possible_targets(module_op)
    if NUM_WARPS in attrs:
        a = attrs[NUM_WARPS]
        if cast(a, ir.IntegerAttr) is None or int_value(a, f"'{NUM_WARPS}'") < 1:
            yield f"'{NUM_WARPS}' must be a positive integer, got {a}"
            return
        check_num_warps(int_value(a, f"'{NUM_WARPS}'"), targets)
    for i in range(len(attrs)):
        name = attrs[i].name
        if name.startswith("tile.") and name not in MODULE_ATTRS:
            yield unknown_attribute(name, MODULE_ATTRS, "the module")


def module_problems(module_op: ir.Operation) -> list[TargetProblem]:
    """The problems of the module-level ``tile.*`` attributes, of region
    nesting too deep for the tools, of tile types that no tile op checks
    (function arguments, results of other dialects' ops), walked without
    recursion, and of kernel functions' signatures, each where it is
    (module-wide rules: at the module)."""
    try:
        problems = list(_module_attribute_problems(module_op))
    except VerifyError as e:
        problems = [str(e)]
    if problems:
        return [TargetProblem(module_op.location, p) for p in problems]
    walked = _walk_problem(module_op)
    if walked is not None:
        return [walked]
    return list(_kernel_problems(module_op))


def verify_module_attributes(module_op: ir.Operation) -> list[str]:
    """The messages of :func:`module_problems`."""
    return [p.message for p in module_problems(module_op)]


def is_kernel(fn: ir.Operation) -> bool:
    """Whether ``fn`` (a ``func.func`` of the module) is a kernel, a launchable
    entry point: a public function; private ones are helpers kernels call."""
    visibility = fn.attributes["sym_visibility"] if "sym_visibility" in fn.attributes else None
    return visibility is None or ir.StringAttr(visibility).value == "public"


def _kernel_problems(module_op: ir.Operation) -> Iterator[TargetProblem]:
    """Kernels return nothing: a launch has nowhere to put a result, so Triton
    refuses (or asserts on) a kernel with results. Results go through pointer
    arguments; a function that returns a value is a private helper."""
    for region in module_op.regions:
        for block in region.blocks:
            for op in block.operations:
                fn = op.operation
                if fn.name != "func.func" or not is_kernel(fn):
                    continue
                results = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value).results
                if not results:
                    continue
                name = ir.StringAttr(fn.attributes["sym_name"]).value
                types = ", ".join(str(t) for t in results)
                yield TargetProblem(
                    fn.location,
                    f"kernel @{name} returns {types}, but a kernel returns nothing: write "
                    f"results through a pointer argument, or make @{name} a private "
                    "function that a kernel calls",
                )


def _walk_problem(module_op: ir.Operation) -> TargetProblem | None:
    """The first op nested too deep (at the module), or the first value whose
    tile type breaks a rule (at the op that defines it or whose block takes
    it; each distinct type is checked once)."""
    seen: set[str] = set()
    stack: list[tuple[Any, int]] = [(module_op, 0)]
    while stack:
        op, depth = stack.pop()
        if len(op.regions) and depth + 1 > MAX_REGION_DEPTH:
            return TargetProblem(
                module_op.location,
                f"a '{op.name}' opens a region {depth + 1} levels deep; at most "
                f"{MAX_REGION_DEPTH} nested regions are supported",
            )
        types = [r.type for r in op.results]
        types += [a.type for region in op.regions for b in region.blocks for a in b.arguments]
        for t in types:
            key = str(t)
            if key in seen:
                continue
            seen.add(key)
            try:
                check_type(t)
            except (VerifyError, LayoutError) as e:
                return TargetProblem(op.location, f"a value of type {t} in '{op.name}': {e}")
        children = [
            (inner.operation, depth + 1)
            for region in op.regions
            for block in region.blocks
            for inner in block.operations
        ]
        stack.extend(reversed(children))
    return None


def check_type(t: ir.Type) -> None:
    """The rules of a tile type, wherever it occurs. (Register layouts of
    tensors that no tile op touches are checked by the lowering, at the op.)"""
    if isinstance(t, PtrType):
        check_element_type(t.element_type, "a pointer", GLOBAL_ELEMENT_BITS)
    elif isinstance(t, _BlockType):
        what = "a TDM descriptor" if isinstance(t, TensorDescType) else "a shared buffer"
        check_element_type(t.element_type, what)
        t.shared_layout()


def unknown_attribute(name: str, known: Sequence[str], owner: str = "") -> str:
    """The message for an attribute ``owner`` does not define, with a suggestion
    (``owner`` is left out when the diagnostic already names the op)."""
    on = f" on {owner}" if owner else ""
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    if close:
        return f"unknown attribute '{name}'{on}; did you mean '{close[0]}'?"
    listed = ", ".join(f"'{k}'" for k in known) if known else "none"
    return f"unknown attribute '{name}'{on} (it takes: {listed})"


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
            try:
                value = d[name]
            except TypeError:  # the bindings cannot represent it (array<i128: ...>)
                raise VerifyError(
                    f"#{self.attr_name} field '{name}' has a value of an unsupported kind"
                    f" (expected {_FIELD_KINDS[kind]})"
                ) from None
            values[name] = _field_value(self.attr_name, name, kind, value)
        for i in range(len(d)):
            try:
                named = d[i]
            except TypeError:
                raise VerifyError(f"#{self.attr_name} has a field of an unsupported kind") from None
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


#: What a layout field of each kind must be, in the user's terms.
_FIELD_KINDS = {
    "int": "an integer",
    "ints": "array<i64: ...>",
    "bool": "true or false",
    "layout": "a #tile layout attribute",
}


def _field_value(owner: str, name: str, kind: str, attr: ir.Attribute) -> Any:
    if kind == "int" and cast(attr, ir.IntegerAttr) is not None:
        return ir.IntegerAttr(attr).value
    if kind == "ints" and cast(attr, ir.DenseI64ArrayAttr) is not None:
        return tuple(ir.DenseI64ArrayAttr(attr))
    if kind == "bool" and cast(attr, ir.BoolAttr) is not None:
        return ir.BoolAttr(attr).value
    if kind == "layout" and isinstance(attr, LayoutAttr):
        return attr
    expected = _FIELD_KINDS[kind]
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


def shared_layout_attr(layout: SharedLayout) -> SharedLayoutAttr:
    """The ``#tile.*_shared`` attribute of a :mod:`gemm_opt.core.layouts` layout
    (the inverse of :meth:`SharedLayoutAttr.to_layout`; needs an active context)."""
    if isinstance(layout, SwizzledShared):
        return SwizzledSharedAttr.build(
            vec=layout.vec,
            per_phase=layout.per_phase,
            max_phase=layout.max_phase,
            order=layout.order,
        )
    if isinstance(layout, PaddedShared):
        return PaddedSharedAttr.build(
            interval=layout.interval, amount=layout.amount, order=layout.order
        )
    return PartitionedSharedAttr.build(
        num_partitions=layout.num_partitions,
        num_groups=layout.num_groups,
        partition_dim=layout.partition_dim,
        layout=shared_layout_attr(layout.inner),
    )


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

    def check(self, rank: int) -> None:
        """Every field has one entry per dimension; sizes are positive, thread
        and warp counts powers of two; order is a permutation."""
        v = self.field_values()
        for name in self.FIELDS:
            if name not in v:
                raise VerifyError(f"#tile.blocked needs field '{name}'")
            if len(v[name]) != rank:
                raise VerifyError(
                    f"#tile.blocked {name} {list(v[name])} has {len(v[name])} entries for a "
                    f"rank-{rank} tensor"
                )
        if any(n < 1 for n in v["size_per_thread"]):
            raise VerifyError(
                f"#tile.blocked size_per_thread {list(v['size_per_thread'])} must be >= 1"
            )
        _pow2_entries(v["threads_per_warp"], "#tile.blocked threads_per_warp")
        _pow2_entries(v["warps_per_cta"], "#tile.blocked warps_per_cta")
        try:
            check_order(v["order"], "#tile.blocked order")
        except LayoutError as e:
            raise VerifyError(str(e)) from None


#: The MMA families whose layout takes no omitted ``transposed`` (:meth:`WmmaAttr.transposed`).
MFMA = (Mma.MFMA_V4, Mma.MFMA_V3)


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

    def transposed(self, target: Target) -> bool:
        """``transposed`` as lowered for ``target``. Omitted, it is Triton 3.9.0's
        default of the layout it becomes: ``#ttg.amd_wmma`` parses a missing
        ``isTranspose`` as false; ``#ttg.amd_mfma`` has no default (Gluon's
        ``AMDMFMALayout`` requires it), so on an MFMA target it must be given.
        wgmma's layout has no such flag (read as false)."""
        given = self.field_values().get("transposed")
        if given is not None:
            return bool(given)
        if target.mma in MFMA:
            raise VerifyError(
                f"#tile.wmma_layout needs field 'transposed' on {target.name}, whose "
                "#ttg.amd_mfma has no default for it (write transposed = true or false)"
            )
        return False


class DotOperandAttr(RegisterLayoutAttr, name="dot_operand"):
    """``#tile.dot_operand<{op_idx, parent, k_width}>``: the layout of operand A
    (op_idx 0) or B (op_idx 1) of a ``tile.wmma`` whose accumulator has layout
    ``parent``; ``k_width`` is the number of consecutive K elements per thread.
    """

    FIELDS = {"op_idx": "int", "parent": "layout", "k_width": "int"}  # noqa: RUF012

    def parent_layout(self) -> "WmmaAttr":
        """The accumulator layout the operand belongs to."""
        parent = self.field_values().get("parent")
        if not isinstance(parent, WmmaAttr):
            raise VerifyError(f"#tile.dot_operand parent must be a #tile.wmma_layout, got {parent}")
        return parent

    def k_width(self) -> int:
        """Consecutive K elements per thread (8 unless given)."""
        return self.field_values().get("k_width", 8)

    def check(self, rank: int) -> None:
        """op_idx 0 or 1, a 2-D tensor, and a k_width the WMMA lowering takes:
        a power of two up to the instruction's K."""
        v = self.field_values()
        if v.get("op_idx") not in (0, 1):
            raise VerifyError(
                f"#tile.dot_operand op_idx must be 0 (a) or 1 (b), got {v.get('op_idx')}"
            )
        if rank != 2:
            raise VerifyError(f"a #tile.dot_operand tensor must be 2-D, got rank {rank}")
        k, kmax = self.k_width(), WMMA_INSTR_SHAPE[2]
        if k < 1 or k > kmax or k & (k - 1):
            raise VerifyError(
                f"#tile.dot_operand k_width = {k} must be a power of two from 1 to {kmax} "
                f"(the K of the {'x'.join(map(str, WMMA_INSTR_SHAPE))} instruction)"
            )


class ScaleLayoutAttr(RegisterLayoutAttr, name="scale_layout"):
    """``#tile.scale_layout<{op_idx, parent}>``: the layout of the block scales of
    operand A (op_idx 0, an M x K/32 tensor) or B (op_idx 1, N x K/32) of a
    ``tile.scaled_wmma`` whose accumulator has layout ``parent``: each thread holds
    the scales of the operand elements it holds (Triton derives the linear layout
    from the MMA layout, as Gluon's ``get_wmma_scale_layout`` does).
    """

    FIELDS = {"op_idx": "int", "parent": "layout"}  # noqa: RUF012

    def op_idx(self) -> int | None:
        return self.field_values().get("op_idx")

    def parent_layout(self) -> "WmmaAttr":
        """The accumulator layout the scales belong to."""
        parent = self.field_values().get("parent")
        if not isinstance(parent, WmmaAttr):
            raise VerifyError(
                f"#tile.scale_layout parent must be a #tile.wmma_layout, got {parent}"
            )
        return parent

    def check(self, rank: int) -> None:
        """op_idx 0 or 1, a 2-D tensor."""
        if self.op_idx() not in (0, 1):
            raise VerifyError(
                f"#tile.scale_layout op_idx must be 0 (a) or 1 (b), got {self.op_idx()}"
            )
        if rank != 2:
            raise VerifyError(f"a #tile.scale_layout tensor must be 2-D, got rank {rank}")


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
        """The layout, checked against the block (see :func:`check_shared_layout`)."""
        layout = self.layout_attr.to_layout()
        try:
            check_shared_layout(layout, self.shape, multi_buffered=isinstance(self, SharedType))
        except LayoutError as e:
            raise VerifyError(f"{self.layout_attr}: {e}") from None
        return layout

    def allocation_bytes(self) -> int:
        """Bytes of shared memory the block takes, padding included."""
        return allocation_bytes(self.shared_layout(), self.shape, element_bits(self.element_type))


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


# ---- element types ----------------------------------------------------------------

#: Element types a memory op moves, by their MLIR spelling, with their bits.
#: The conversion to TritonGPU and Triton's TDM, ``tt.load``/``tt.store`` and
#: local-memory lowerings support exactly these for every target (Triton's
#: f8E4M3B11FNUZ, which it holds as i8, does not lower).
MEMORY_ELEMENT_BITS: dict[str, int] = {
    "i8": 8,
    "i16": 16,
    "i32": 32,
    "i64": 64,
    "f16": 16,
    "bf16": 16,
    "f32": 32,
    "f64": 64,
    "f8E4M3FN": 8,
    "f8E5M2": 8,
    "f8E4M3FNUZ": 8,
    "f8E5M2FNUZ": 8,
    # The MX block scale: moved and read by tile.scaled_wmma only (Triton carries it as i8).
    "f8E8M0FNU": 8,
}

#: Global loads and stores also move booleans (Triton stores i1 as bytes).
GLOBAL_ELEMENT_BITS: dict[str, int] = {"i1": 1, **MEMORY_ELEMENT_BITS}


def element_bits(t: ir.Type) -> int:
    """Bits of a memory element type (checked by :func:`check_element_type`)."""
    return GLOBAL_ELEMENT_BITS.get(str(t), 0)


def check_element_type(
    t: ir.Type, what: str, allowed: dict[str, int] = MEMORY_ELEMENT_BITS
) -> None:
    """``t`` must be one of ``allowed`` (by default :data:`MEMORY_ELEMENT_BITS`)."""
    if str(t) not in allowed:
        names = ", ".join(allowed)
        raise VerifyError(f"{what} must have one of the element types {names}; got {t}")


# ---- op base --------------------------------------------------------------------


class _Naming:
    """Set while a value is named for a diagnostic (:func:`value_name`)."""

    active = False


def value_name(value: ir.Value) -> str:
    """``value``'s name as the printer spells it (``%arg1``, ``%0``), for a verifier's
    message. Naming a value builds the printer's state for its parent op, which
    verifies that op first: the tile verifiers stand aside meanwhile (they are
    already running), or a verifier that names a value would re-enter itself
    without end."""
    # Equivalent mutant: the pinned bindings' get_name does not verify the parent
    # op, so no tile verifier is re-entered (none is while naming the values of
    # tile-warp-specialize-invalid.mlir); the guard is for bindings that do.
    _Naming.active = True
    try:
        return value.get_name()
    finally:
        _Naming.active = False


class TileOp(Tile.Operation):
    """Base of tile ops: routes ``verify()`` through one error-reporting path.

    Subclasses implement ``verify()`` and raise :class:`VerifyError`; the
    message is reported as ``'tile.<op>' op <message>`` at the op's location.
    Any other exception is a bug and is reported as an internal error rather
    than escaping to the caller.
    """

    # Attributes the op defines (inherent ones and contract ``tile.*`` ones);
    # any other unprefixed or ``tile.*`` attribute is an error. (Unannotated:
    # an annotation would make it an IRDL field.)
    ATTRS = ()

    def verify(self) -> None:
        """Check the op; raise VerifyError on a violated rule."""

    def verify_invariants(self) -> bool:
        if _Naming.active:  # re-entered while a verifier names a value (value_name)
            # Equivalent mutant: not reached with the pinned bindings (value_name).
            return True
        try:
            self.check_attribute_names()
            self.check_operand_segments()
            self.verify()
        except (VerifyError, WarpHintError, LayoutError) as e:
            at = getattr(e, "at", None)
            location = at.location if at is not None else self.location
            location.emit_error(f"'{self.OPERATION_NAME}' op {e}")
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
        if name not in attrs:
            return None
        try:
            return attrs[name]
        except TypeError:  # the bindings cannot type it (e.g. array<i128: ...>)
            raise VerifyError(
                f"attribute '{name}' is a dense array of an element type no tile op takes "
                "(the arrays here are array<i32: ...>)"
            ) from None

    def int_attr(self, name: str, required: bool = False) -> int | None:
        """The i32 attribute ``name`` (every integer attribute of a tile op is i32)."""
        a = self.attr(name)
        if a is None:
            if required:
                raise VerifyError(f"requires attribute '{name}'")
            return None
        return int_value(a, f"attribute '{name}'")

    def num_warps(self) -> int | None:
        """The warps that run the op: the enclosing worker partition's
        ``num_warps``, else the enclosing ``tile.num_warps`` (its own rules are
        the module's; the warp-hint rule states those it needs in its own words)."""
        return running_num_warps(self.operation)

    def targets(self) -> tuple[Target, ...]:
        """The targets this op may be lowered for (see :func:`possible_targets`)."""
        return possible_targets(self.operation)

    def check_attribute_names(self) -> None:
        """Unprefixed and ``tile.*`` attributes must be ones the op defines."""
        attrs = self.operation.attributes
        known = (*self.ATTRS, *_segment_attr(self))
        for i in range(len(attrs)):
            name = attrs[i].name
            if name in known or ("." in name and not name.startswith("tile.")):
                continue  # another dialect's discardable attribute
            raise VerifyError(unknown_attribute(name, known))

    def check_operand_segments(self) -> None:
        """``operandSegmentSizes`` must be present and agree with the operands
        before any operand accessor reads it."""
        groups = _operand_groups(self)
        if all(kind == "single" for _, kind in groups):
            return
        if len(groups) == 1 and self.attr(SEGMENTS) is None:
            return  # one group: its size is the operand count (ODS needs no segments then)
        names = ", ".join(name for name, _ in groups)
        a = self.attr(SEGMENTS)
        if a is None:
            raise VerifyError(
                f"requires attribute '{SEGMENTS}' (array<i32: ...>, one operand count "
                f"for each of {names})"
            )
        arr = cast(a, ir.DenseI32ArrayAttr)
        if arr is None or len(arr) != len(groups):
            raise VerifyError(
                f"'{SEGMENTS}' must be array<i32: ...> with {len(groups)} entries "
                f"(one for each of {names}), got {a}"
            )
        counts = list(arr)
        # Equivalent mutant: strict=False, the lengths are equal (checked above).
        for (name, kind), n in zip(groups, counts, strict=True):
            allowed = {"single": (1,), "optional": (0, 1)}.get(kind)
            if (allowed is not None and n not in allowed) or n < 0:
                want = {"single": "1", "optional": "0 or 1"}.get(kind, ">= 0")
                raise VerifyError(f"'{SEGMENTS}' gives {name} {n} operands; it takes {want}")
        if sum(counts) != len(self.operation.operands):
            raise VerifyError(
                f"'{SEGMENTS}' {counts} adds up to {sum(counts)} operands, but the op has "
                f"{len(self.operation.operands)}"
            )

    def warp_size(self) -> int | None:
        """The warp size of every possible target, or None if they differ."""
        sizes = {t.warp_size for t in self.targets()}
        return sizes.pop() if len(sizes) == 1 else None


SEGMENTS = "operandSegmentSizes"


def _operand_groups(op: TileOp) -> list[tuple[str, str]]:
    """(name, variadicity) of each operand group the op class declares."""
    return [(f.name, f.variadicity.name) for f in type(op)._fields if isinstance(f, ext.OperandDef)]


def _segment_attr(op: TileOp) -> tuple[str, ...]:
    groups = _operand_groups(op)
    return (SEGMENTS,) if any(kind != "single" for _, kind in groups) else ()


def _type_of(value: ir.Value, cls: type) -> Any:
    t = value.type
    if not isinstance(t, cls):
        raise VerifyError(f"expected {cls.__name__}, got {t}")
    return t


WMMA_VERSION = 3
WMMA_INSTR_SHAPE = (16, 16, 32)
"""The WMMA instruction of 16-bit inputs: gfx1250's v3 16x16x32 (MFMA and
mma.sync targets pick their own instruction)."""

#: gfx1250's WMMA v3 instruction by input kind: 16-bit, 8-bit, and 8-bit block-scaled
#: (MXFP8). ``#tile.wmma_layout`` names one; the MMA op checks it fits its inputs.
WMMA_INSTR_SHAPES: dict[str, tuple[int, int, int]] = {
    "16-bit": WMMA_INSTR_SHAPE,
    "8-bit": (16, 16, 64),
    "block-scaled 8-bit": (16, 16, 128),
}


def check_register_layout(op: TileOp, t: ir.RankedTensorType, what: str) -> None:
    """A register tensor's layout must be one the lowering can place with the
    enclosing ``tile.num_warps`` on every possible target."""
    enc = t.encoding
    if enc is None:
        return  # layout-free IR is for passes and the model; the lowering asks for one
    if isinstance(enc, DotOperandAttr):
        enc.check(t.rank)
        check_wmma_layout(op, enc.parent_layout())
        return
    if isinstance(enc, WmmaAttr):
        if t.rank != 2:
            raise VerifyError(f"{what} {t} has a #tile.wmma_layout but is not 2-D")
        check_wmma_layout(op, enc)
        return
    if isinstance(enc, ScaleLayoutAttr):
        enc.check(t.rank)
        check_wmma_layout(op, enc.parent_layout())
        return
    if isinstance(enc, BlockedAttr):
        check_blocked_layout(op, enc, t.rank)
        return
    raise VerifyError(f"{what} {t} has {enc}, which is not a register layout")


def _pow2_entries(values: Sequence[int], what: str) -> None:
    for v in values:
        if v < 1 or v & (v - 1):
            raise VerifyError(f"{what} {list(values)} must hold powers of two >= 1")


def _check_warps_cover(op: TileOp, warps: Sequence[int], what: str) -> None:
    nw = op.num_warps()
    if nw is not None and math.prod(warps) != nw:
        source = f"'{NUM_WARPS}' = {nw}"
        if enclosing_op(_parent(op.operation), WARP_PARTITION_OP) is not None:
            source = f"its worker partition has {PARTITION_NUM_WARPS} = {nw}"
        raise VerifyError(f"{what} {list(warps)} covers {math.prod(warps)} warps, but {source}")


def _shape_name(shape: Sequence[int]) -> str:
    return "x".join(map(str, shape))


def check_wmma_layout(op: TileOp, attr: WmmaAttr) -> None:
    """Version 3, an instruction of :data:`WMMA_INSTR_SHAPES`, two power-of-two warp
    counts whose product is ``tile.num_warps``, and a ``transposed`` (given, or
    omitted) that some possible target takes."""
    v = attr.field_values()
    version = v.get("version", WMMA_VERSION)
    if version != WMMA_VERSION:
        raise VerifyError(f"#tile.wmma_layout version must be {WMMA_VERSION}, got {version}")
    instr = attr.instr_shape()
    if instr not in WMMA_INSTR_SHAPES.values():
        known = ", ".join(f"{_shape_name(s)} ({k})" for k, s in WMMA_INSTR_SHAPES.items())
        raise VerifyError(
            f"#tile.wmma_layout instr_shape {list(instr)} is not a WMMA v3 instruction "
            f"(known: {known})"
        )
    warps = attr.warps_per_cta()
    _pow2_entries(warps, "#tile.wmma_layout warps_per_cta")
    _check_warps_cover(op, warps, "#tile.wmma_layout warps_per_cta")
    targets = op.targets()
    refused: list[VerifyError] = []
    for t in targets:
        try:
            attr.transposed(t)
        except VerifyError as e:
            refused.append(e)
    if refused and len(refused) == len(targets):  # no possible target takes it
        raise refused[0]


def check_layout_rank(enc: ir.Attribute, rank: int) -> None:
    """The rules of a register layout that hold on every target, for a tensor of
    ``rank``: the verifier checks them on tile ops' tensors, the lowering on
    tensors no tile op touches (an ``arith.constant``, an ``scf.for`` result)."""
    if isinstance(enc, BlockedAttr | DotOperandAttr | ScaleLayoutAttr):
        enc.check(rank)
    elif isinstance(enc, WmmaAttr) and rank != 2:
        raise VerifyError(f"a #tile.wmma_layout tensor must be 2-D, got rank {rank}")


def check_blocked_layout(op: TileOp, attr: BlockedAttr, rank: int) -> None:
    """The layout's own rules (:meth:`BlockedAttr.check`); threads cover a warp
    of every possible target; warps cover ``tile.num_warps``."""
    attr.check(rank)
    v = attr.field_values()
    lanes = math.prod(v["threads_per_warp"])
    targets = op.targets()
    if targets and all(lanes != t.warp_size for t in targets):
        sizes = " or ".join(sorted({str(t.warp_size) for t in targets}))
        raise VerifyError(
            f"#tile.blocked threads_per_warp {list(v['threads_per_warp'])} covers "
            f"{lanes} threads, but warps of {_target_names(targets)} have {sizes}"
        )
    _check_warps_cover(op, v["warps_per_cta"], "#tile.blocked warps_per_cta")


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


#: TDM padding limits (Triton 3.9.0's gfx1250 lowering), in 4-byte dwords.
TDM_MIN_PAD_INTERVAL_DWORDS = 2
TDM_MAX_PAD_INTERVAL_DWORDS = 256
TDM_MIN_PAD_AMOUNT_DWORDS = 1


def check_tdm_layout(layout: SharedLayout, element: ir.Type, member: str = "") -> None:
    """TDM writes rows linearly: it can pad but not XOR-swizzle (as in Triton
    3.9.0), and pads in whole dwords: the interval is 2 to 256 dwords and the
    amount at least 1."""
    where = f"member {member}: " if member else ""
    check_element_type(element, f"{where}a TDM copy")
    inner = layout.inner if isinstance(layout, PartitionedShared) else layout
    if isinstance(inner, SwizzledShared) and (inner.vec > 1 or inner.max_phase > 1):
        raise VerifyError(
            f"{where}TDM does not support swizzled shared layouts (vec = {inner.vec}, "
            f"max_phase = {inner.max_phase}): use #tile.padded_shared to avoid bank "
            "conflicts, or vec = 1 and max_phase = 1"
        )
    if isinstance(inner, PaddedShared):
        bits = element_bits(element)
        interval, amount = inner.interval * bits, inner.amount * bits
        lo, hi = TDM_MIN_PAD_INTERVAL_DWORDS * 32, TDM_MAX_PAD_INTERVAL_DWORDS * 32
        if not lo <= interval <= hi:
            raise VerifyError(
                f"{where}TDM pads every 2 to {TDM_MAX_PAD_INTERVAL_DWORDS} dwords: "
                f"interval = {inner.interval} {element} elements is {interval // 8} bytes "
                f"(allowed: {lo // bits} to {hi // bits} elements)"
            )
        if amount < TDM_MIN_PAD_AMOUNT_DWORDS * 32:
            raise VerifyError(
                f"{where}TDM pads at least one dword: amount = {inner.amount} {element} "
                f"elements is {amount // 8} bytes (at least {32 // bits} elements)"
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

    ATTRS = ("axis",)
    result: ext.Result[ir.IntegerType[32]] = ext.infer_result()

    def verify(self) -> None:
        check_grid_axis(self)


def check_grid_axis(op: TileOp) -> None:
    """``axis`` names a grid dimension: 0, 1 or 2 (``program_id``, ``num_programs``)."""
    axis = op.int_attr("axis", required=True)
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
    type is the block's element type; rank 1 to 5; for TDM targets the last
    stride is the constant 1.
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
        check_element_type(desc.element_type, "a TDM descriptor")
        desc.shared_layout()
        targets = self.targets()
        inner = constant_int(self.strides[-1])
        if targets and all(t.tdm for t in targets) and inner != 1:
            got = "a runtime value" if inner is None else f"the constant {inner}"
            raise VerifyError(
                f"TDM descriptors on {_target_names(targets)} need a unit innermost stride: "
                f"the last stride must be the constant 1, got {got}"
            )


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
    Rules: the buffer type names a valid shared layout and a memory element
    type; the function's buffers (padding included) fit the shared memory of
    every target the module may be lowered for.
    """

    result: ext.Result[SharedType]

    def verify(self) -> None:
        buf = _type_of(self.result, SharedType)
        check_element_type(buf.element_type, "a shared buffer")
        buf.shared_layout()
        self.check_capacity(buf.allocation_bytes())

    def check_capacity(self, own: int) -> None:
        """This buffer alone, and the function's buffers together, must fit.

        The sum is checked by the function's first buffer and reported at the
        buffer that crosses the limit, so each function gets one error and the
        check stays linear in the function's size. Buffers are counted as live
        for the whole program (Triton may reuse memory, never more than this).
        """
        targets = self.targets()
        if not targets:
            return
        t = max(targets, key=lambda t: t.shared_memory_bytes)
        cap = t.shared_memory_bytes
        shape = "x".join(map(str, _type_of(self.result, SharedType).shape))
        if own > cap:
            raise VerifyError(
                f"a {shape} buffer takes {own} bytes of shared memory, but {t.name} has "
                f"{cap} per workgroup"
            )
        allocs = _function_allocs(self)
        if next(allocs, None) != self.operation:
            return  # the function's first buffer checks the sum, once
        total = own
        for op in allocs:
            try:
                size = _type_of(op.results[0], SharedType).allocation_bytes()
            except VerifyError:
                continue  # reported at that buffer
            if total <= cap < total + size:
                other = "x".join(map(str, _type_of(op.results[0], SharedType).shape))
                raise VerifyError(
                    f"the function's shared buffers take {total + size} bytes up to this "
                    f"{other} buffer ({total} before it), but {t.name} has {cap} per "
                    "workgroup",
                    at=op,
                )
            total += size


def _function_allocs(alloc: LocalAllocOp) -> Iterator[ir.Operation]:
    """The ``tile.local_alloc`` ops of ``alloc``'s function in program order,
    nested regions included (walked without recursion, lazily: the function's
    first buffer walks it once; the others stop at that first buffer)."""
    fn = alloc.operation
    while _parent(fn) is not None and fn.name != "func.func":
        fn = _parent(fn)
    stack = [iter(block.operations) for region in fn.regions for block in region.blocks]
    stack.reverse()
    while stack:
        op = next(stack[-1], None)
        if op is None:
            stack.pop()
            continue
        op = op.operation
        if op.name == LocalAllocOp.OPERATION_NAME:
            yield op
        inner = [iter(b.operations) for r in op.regions for b in r.blocks]
        stack.extend(reversed(inner))


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
        index = constant_int(self.index)
        if index is not None and not 0 <= index < src.shape[0]:
            raise VerifyError(
                f"index {index} is out of range for {src.shape[0]} buffers "
                f"(0 to {src.shape[0] - 1})"
            )


class MemdescTransOp(TileOp, name="memdesc_trans", traits=[ext.Pure]):
    """A permuted view of a shared block: view dim ``i`` is source dim ``order[i]``.

    No data moves: the view reads the same shared memory (Gluon's
    ``smem.permute``, Triton's ``ttg.memdesc_trans``). It is how an MMA takes
    an operand that lies transposed in memory: a (BN, BK) block of a row-major
    (N, K) weight, copied as it lies, is the (BK, BN) B operand through
    ``order = [1, 0]``.

    ```mlir
    %t = "tile.memdesc_trans"(%b) {order = array<i32: 1, 0>}
         : (!tile.shared<tensor<128x64xf16, #tile.padded_shared<{..., order = array<i64: 1, 0>}>>>)
         -> !tile.shared<tensor<64x128xf16, #tile.padded_shared<{..., order = array<i64: 0, 1>}>>>
    ```
    Rules: ``order`` is a permutation of the source's dims (rank 2 or more,
    one block: not a multi-buffered ring); the result's shape is the source's
    permuted, its element type the source's, and its layout the source's with
    the order renamed (:func:`gemm_opt.core.layouts.permuted_layout`: source
    dim ``d`` is view dim ``order.index(d)``); a partitioned layout has no
    permuted view. The view is for reading (``tile.local_load``,
    ``tile.async_wmma``); copies and stores write the block it views.
    """

    ATTRS = ("order",)

    src: ext.Operand[SharedType]
    result: ext.Result[SharedType]

    @classmethod
    def result_type(cls, src: SharedType, order: Sequence[int]) -> SharedType:
        """The view type of ``src`` permuted by ``order`` (needs an active context)."""
        layout = permuted_layout(src.layout_attr.to_layout(), order)
        t = src.tensor()
        shape = [t.shape[d] for d in order]
        block = ir.RankedTensorType.get(shape, t.element_type, shared_layout_attr(layout))
        return SharedType.get(ir.TypeAttr.get(block))

    @classmethod
    def build(cls, src: ir.Value, order: Sequence[int], **kwargs: Any) -> "MemdescTransOp":
        """The view of ``src`` permuted by ``order``, its type inferred."""
        op = cls(src, cls.result_type(src.type, order), **kwargs)
        op.operation.attributes["order"] = ir.DenseI32ArrayAttr.get(list(order))
        return op

    def permutation(self) -> list[int]:
        a = self.attr("order")
        if a is None:
            raise VerifyError("requires attribute 'order' (array<i32: ...>, a permutation)")
        if cast(a, ir.DenseI32ArrayAttr) is None:
            raise VerifyError(f"'order' must be array<i32: ...>, got {a}")
        return list(ir.DenseI32ArrayAttr(a))

    def verify(self) -> None:
        src = _type_of(self.src, SharedType)
        res = _type_of(self.result, SharedType)
        order = self.permutation()
        rank = len(src.shape)
        if rank < 2:
            raise VerifyError(f"the source has rank {rank}; a transposed view needs rank 2 or more")
        check_order(order, "order")
        if len(order) != rank:
            raise VerifyError(
                f"order {order} has {len(order)} entries but the source has rank {rank}"
            )
        layout = src.shared_layout()
        if isinstance(layout, PartitionedShared):
            raise VerifyError("a partitioned shared layout has no transposed view")
        if len(layout.order) != rank:
            raise VerifyError(
                f"the source is a ring of {src.shape[0]} buffers (its layout orders "
                f"{len(layout.order)} of its {rank} dims); take one with tile.memdesc_index first"
            )
        shape = [src.shape[d] for d in order]
        if list(res.shape) != shape or res.element_type != src.element_type:
            raise VerifyError(
                f"result {res} must be the source's {src.element_type} block permuted by "
                f"{order}: shape {shape}"
            )
        want = permuted_layout(layout, order)
        if res.layout_attr.to_layout() != want:
            raise VerifyError(
                f"result layout {res.layout_attr} must be the source's with its order "
                f"renamed by {order}: {shared_layout_attr(want)}"
            )


def viewed_block(value: ir.Value) -> ir.Value:
    """The shared block a chain of ``tile.memdesc_trans`` views reads (``value``
    itself when it is no view): the memory the view aliases, laid out as that
    block's layout says."""
    owner = value.owner
    while isinstance(owner, ir.OpView | ir.Operation) and (
        owner.operation.name == MemdescTransOp.OPERATION_NAME
    ):
        value = owner.operation.operands[0]
        owner = value.owner
    return value


def check_writable(value: ir.Value, what: str) -> None:
    """Copies and stores write a block as it lies: never through a
    ``tile.memdesc_trans`` view (Triton's views of that kind are for reading)."""
    if viewed_block(value) != value:
        raise VerifyError(
            f"{what} is a transposed view (tile.memdesc_trans), which is read-only; "
            "write the block it views"
        )


def constant_int(value: ir.Value) -> int | None:
    """The value of an ``arith.constant`` integer (up to 64 bits), else None."""
    owner = value.owner
    op = getattr(owner, "operation", None)
    if op is None or op.name != "arith.constant" or "value" not in op.attributes:
        return None
    a = cast(op.attributes["value"], ir.IntegerAttr)
    t = cast(a.type, ir.IntegerType) if a is not None else None
    if t is None or ir.IntegerType(t).width > 64:
        return None
    return a.value


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
        check_register_layout(self, res, "result")


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

    ATTRS = (WARP_USED_HINT, "cache", WARP_LAYOUT, WARP_PREDICATED)
    desc: ext.Operand[TensorDescType]
    dest: ext.Operand[SharedType]
    pred: ext.Operand[Any] | None = None
    barrier: ext.Operand[MBarrierType] | None = None

    def verify(self) -> None:
        desc = _type_of(self.desc, TensorDescType)
        dest = _type_of(self.dest, SharedType)
        check_writable(self.dest, "dest")
        _check_same_block(desc, dest)
        _check_i1(self.pred, "pred")
        cache_modifier(self)
        layout = desc.shared_layout()
        check_tdm_layout(layout, desc.element_type)
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

    ATTRS = (WARP_USED_HINTS, "cache", WARP_LAYOUTS, WARP_PREDICATED)
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
        # Equivalent mutant: 4->5, the op has four descriptor slots (n <= 4).
        if not 2 <= n <= 4:
            raise VerifyError(f"requires 2 to 4 members, got {n}")
        if len(self.dests) != n:
            raise VerifyError(
                "requires the same number of descriptors and destinations, got "
                f"{n} and {len(self.dests)}"
            )
        dest_slots = [self.dest0, self.dest1, self.dest2, self.dest3]
        # Equivalent mutant: min->max, the counts are equal (checked above).
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
        # Equivalent mutant: strict=False, one descriptor per destination (checked above).
        for i, (d, b) in enumerate(zip(descs, dests, strict=True)):
            check_writable(self.dests[i], f"dest {i}")
            _check_same_block(d, b, member=str(i))
            shared_layouts.append(d.shared_layout())
            check_tdm_layout(shared_layouts[-1], d.element_type, member=str(i))
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
            # Equivalent mutant: strict=False, all four have n entries (checked above).
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
    Rules: ``num`` is a required i32, from 0 to 2^31 - 1 (Triton's wait count).
    """

    ATTRS = ("num",)

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


def check_fp8_inputs(op: TileOp, a: ir.Type, b: ir.Type) -> None:
    """A and B are 8-bit float types whose MMA some possible target has (the
    target table's ``fp8_types``: OCP on gfx1250, gfx950 and cuda:90, FNUZ on gfx942)."""
    targets = op.targets()
    for name, t in (("a", a), ("b", b)):
        if not any(str(t) in x.fp8_types for x in targets):
            have = "; ".join(f"{x.name}: {', '.join(x.fp8_types) or 'none'}" for x in targets)
            raise VerifyError(
                f"{name}'s element type {t} is not an 8-bit MMA input of "
                f"{_target_names(targets) or 'any target'} ({have})"
            )
    if not any(str(a) in x.fp8_types and str(b) in x.fp8_types for x in targets):
        raise VerifyError(f"a ({a}) and b ({b}) are the 8-bit types of different targets")


def check_imprecise_acc(op: TileOp, elem: ir.Type) -> None:
    """An MMA's optional ``tile.imprecise_acc``: 8-bit inputs only, a positive
    i32 multiple of 32 (one 8-bit wgmma's K)."""
    attrs = op.operation.attributes
    if IMPRECISE_ACC not in attrs:
        return
    value = int_value(attrs[IMPRECISE_ACC], IMPRECISE_ACC)
    if element_bits(elem) != 8:
        raise VerifyError(f"{IMPRECISE_ACC} is for 8-bit inputs, got {elem}")
    # Equivalent mutant: 0->1, a value of 1 is no multiple of 32 either.
    if value <= 0 or value % 32:
        raise VerifyError(f"{IMPRECISE_ACC} must be a positive multiple of 32, got {value}")


def mma_input_kind(op: TileOp, a: ir.Type, b: ir.Type) -> str:
    """The key of :data:`WMMA_INSTR_SHAPES` for ``tile.wmma`` inputs ``a`` x ``b``."""
    if _is_16bit_float(a) and a == b:
        return "16-bit"
    if element_bits(a) == 8 and element_bits(b) == 8 and "f8" in str(a) and "f8" in str(b):
        if str(a) == "f8E8M0FNU" or str(b) == "f8E8M0FNU":
            raise VerifyError(
                "f8E8M0FNU is a block-scale type: it is an input of tile.scaled_wmma only"
            )
        check_fp8_inputs(op, a, b)
        if a != b:
            raise VerifyError(
                f"expects a and b of the same 8-bit type, got {a} and {b} (mixed formats "
                "need tile.scaled_wmma)"
            )
        return "8-bit"
    raise VerifyError(
        f"expects a and b to be both f16, both bf16 or both of one 8-bit float type, got "
        f"{a} and {b}"
    )


def check_instr_shape(acc: "WmmaAttr", kind: str) -> None:
    """The accumulator layout names the instruction of ``kind`` inputs."""
    want = WMMA_INSTR_SHAPES[kind]
    if acc.instr_shape() != want:
        raise VerifyError(
            f"{kind} inputs need the {_shape_name(want)} WMMA instruction, but c's layout "
            f"has instr_shape {list(acc.instr_shape())}"
        )


class WmmaOp(TileOp, name="wmma", traits=[ext.Pure]):
    """``d = a @ b + c`` on matrix cores: fp16, bf16 or fp8 inputs, fp32 accumulation.

    ```mlir
    %d = "tile.wmma"(%a, %b, %c)
         : (tensor<128x64xf16, #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>>,
            tensor<64x128xf16, #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>>,
            tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    ```
    Rules: A is MxK, B is KxN, C and D are MxN; A and B are both f16, both
    bf16, or both of one 8-bit float type a possible target's MMA reads
    (:func:`check_fp8_inputs`); C and D are f32 with a ``#tile.wmma_layout``
    layout whose instruction fits the inputs (:data:`WMMA_INSTR_SHAPES`); A and
    B carry ``#tile.dot_operand`` layouts with op_idx 0 and 1 whose parent is
    C's layout; M, N and K are multiples of the instruction shape. The optional
    ``tile.imprecise_acc`` (:data:`~gemm_opt.core.contract.IMPRECISE_ACC`): 8-bit
    inputs only, a positive i32 multiple of 32.
    """

    ATTRS = (IMPRECISE_ACC,)

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
        kind = mma_input_kind(self, a.element_type, b.element_type)
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
        check_register_layout(self, c, "c")
        for name, t in (("a", a), ("b", b)):
            check_register_layout(self, t, name)
        ka, kb = a.encoding.k_width(), b.encoding.k_width()
        if ka != kb:
            raise VerifyError(f"a and b must have the same k_width, got {ka} and {kb}")
        check_instr_shape(acc, kind)
        im, in_, ik = acc.instr_shape()
        if m % im or n % in_ or k % ik:
            raise VerifyError(
                f"{m}x{n}x{k} is not a multiple of the instruction shape {im}x{in_}x{ik}"
            )
        check_imprecise_acc(self, a.element_type)


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
        check_register_layout(self, s, "src")
        check_register_layout(self, r, "result")


class _BlockAccessOp(TileOp):
    """Shared operands and checks of ``load_block`` and ``store_block``."""

    base: ext.Operand[PtrType]
    shape: Sequence[ext.Operand[Any]]
    strides: Sequence[ext.Operand[Any]]
    offsets: Sequence[ext.Operand[Any]]

    def check_access(self, value_type: ir.RankedTensorType, value_name: str) -> None:
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
        check_element_type(value_type.element_type, f"the {value_name}", GLOBAL_ELEMENT_BITS)
        targets = self.targets()
        if (
            str(value_type.element_type) == "i1"
            and targets
            and not any(t.i1_memory for t in targets)
        ):
            raise VerifyError(
                f"{_target_names(targets)} cannot load or store i1 elements (Triton's "
                "backend aborts on them): use i8"
            )
        check_register_layout(self, value_type, value_name)


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
        self.check_access(_ranked(self.result, "result"), "result")


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
        self.check_access(_ranked(self.value, "value"), "value")


__all__ = [
    "NUM_WARPS",
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
    "MemdescTransOp",
    "PaddedSharedAttr",
    "PartitionedSharedAttr",
    "ProgramIdOp",
    "PtrType",
    "RegisterLayoutAttr",
    "SharedLayoutAttr",
    "SharedType",
    "StoreBlockOp",
    "SwizzledSharedAttr",
    "TargetProblem",
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
    "is_kernel",
    "module_problems",
    "possible_targets",
    "shared_layout_attr",
    "value_name",
    "verify_for_target",
    "verify_module_attributes",
    "viewed_block",
]
