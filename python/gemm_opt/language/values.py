"""Traced values: what ``tl.*`` calls take and return while a kernel is built.

A traced value is an MLIR ``ir.Value`` plus what the front end knows of it
(element type; for blocks, shape and layout). A traced value has no Python
value at build time, so every Python protocol that would need one (truth,
``int()``, ``range()``, iteration, indexing, hashing) and every operator a
kind of value does not define raises a :class:`CompilationError` at the user's
line instead of Python's own ``TypeError`` or a silent identity comparison.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gemm_opt.core.ext_compat import arith, ir
from gemm_opt.core.layouts import LayoutError, SharedLayout, permuted_layout
from gemm_opt.dialect import tile
from gemm_opt.language.arguments import constexpr_int, int_bits, sequence
from gemm_opt.language.builder import current
from gemm_opt.language.dtypes import as_dtype, dtype, int1, int32
from gemm_opt.language.errors import fail
from gemm_opt.language.layouts import RegisterLayout, is_int, register_layout, shared_attr

_INT_BINOPS = {
    "add": arith.addi,
    "sub": arith.subi,
    "mul": arith.muli,
    "floordiv": arith.divsi,
    "mod": arith.remsi,
    "and": arith.andi,
    "or": arith.ori,
    "xor": arith.xori,
    "lshift": arith.shli,
    "rshift": arith.shrsi,
}
_FLOAT_BINOPS = {
    "add": arith.addf,
    "sub": arith.subf,
    "mul": arith.mulf,
    "truediv": arith.divf,
    "mod": arith.remf,
}
_CMP = {
    "lt": ("slt", "OLT"),
    "le": ("sle", "OLE"),
    "gt": ("sgt", "OGT"),
    "ge": ("sge", "OGE"),
    "eq": ("eq", "OEQ"),
    "ne": ("ne", "ONE"),
}
_SYMBOL = {
    "add": "+",
    "sub": "-",
    "mul": "*",
    "floordiv": "//",
    "truediv": "/",
    "mod": "%",
    "and": "&",
    "or": "|",
    "xor": "^",
    "lshift": "<<",
    "rshift": ">>",
    "pow": "**",
    "matmul": "@",
    "lt": "<",
    "le": "<=",
    "gt": ">",
    "ge": ">=",
    "eq": "==",
    "ne": "!=",
}


def _kind(v: Any) -> str:
    return f"traced {type(v).__name__.lower()}"


class Value:
    """Base of traced values: an MLIR value plus its element type."""

    def __init__(self, handle: ir.Value, dtype_: dtype) -> None:
        self._handle = handle
        self._trace = current()
        self.dtype = dtype_

    @property
    def handle(self) -> ir.Value:
        """The MLIR value; only inside the build that made it (another build's
        IR lives in another context, and mixing them would corrupt memory)."""
        if current() is not self._trace:
            raise fail(
                f"this {_kind(self)} belongs to another kernel build; traced values exist "
                "only inside the build that made them (was it kept in a global?)"
            )
        return self._handle

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.dtype!r})"

    def _with(self, handle: ir.Value) -> Any:
        """The same kind of value, with the same metadata, for ``handle``."""
        return type(self)(handle, self.dtype)

    # -- Python protocols that need a build-time value --

    def __bool__(self) -> bool:
        raise fail(
            f"a {_kind(self)} has no Python truth value at build time; use tl.if_ / "
            "tl.where for device decisions, or a constexpr"
        )

    def __index__(self) -> int:
        raise fail(
            f"a {_kind(self)} is not a Python int at build time (range(), indexing and "
            "repetition need constexprs); use tl.for_loop for a device loop"
        )

    def __int__(self) -> int:
        raise fail(f"int() of a {_kind(self)}: its value is known only on the device")

    def __float__(self) -> float:
        raise fail(f"float() of a {_kind(self)}: its value is known only on the device")

    def __iter__(self) -> Any:
        raise fail(f"a {_kind(self)} cannot be iterated at build time; use tl.for_loop")

    def __len__(self) -> int:
        raise fail(f"len() of a {_kind(self)}; use .shape of a block")

    def __getitem__(self, key: Any) -> Any:
        raise fail(f"a {_kind(self)} cannot be indexed")

    def __setitem__(self, key: Any, value: Any) -> None:
        raise fail(f"a {_kind(self)} cannot be assigned to")

    def __contains__(self, item: Any) -> bool:
        raise fail(f"'in' on a {_kind(self)}")

    def __hash__(self) -> int:
        # Value-based equality builds IR, so a traced value cannot be a key.
        raise fail(f"a {_kind(self)} is unhashable: it cannot be a dict key or set member")


def _unsupported(name: str, reverse: bool = False) -> Any:
    def op(self: Value, other: Any) -> Any:
        lhs, rhs = (other, self) if reverse else (self, other)
        raise fail(
            f"operator {_SYMBOL[name]} is not defined on {lhs!r} and {rhs!r} (a {_kind(self)})"
        )

    op.__name__ = f"__{'r' if reverse else ''}{name}__"
    return op


for _name in "add sub mul floordiv truediv mod and or xor lshift rshift pow matmul".split():
    setattr(Value, f"__{_name}__", _unsupported(_name))
    setattr(Value, f"__r{_name}__", _unsupported(_name, True))
for _name in ("lt", "le", "gt", "ge", "eq", "ne"):
    setattr(Value, f"__{_name}__", _unsupported(_name))


def _unary(symbol: str) -> Any:
    def op(self: Value) -> Any:
        raise fail(f"unary {symbol} is not defined on {self!r}")

    return op


Value.__neg__ = _unary("-")  # type: ignore[method-assign]
Value.__pos__ = _unary("+")  # type: ignore[method-assign]
Value.__invert__ = _unary("~")  # type: ignore[method-assign]
Value.__abs__ = _unary("abs()")  # type: ignore[method-assign]


def is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


class Scalar(Value):
    """A traced scalar (``i1``, ``i32``, ``i64``, ``f32``, ...)."""

    def to(self, dtype_: dtype) -> Scalar:
        """Convert: sign-extend/truncate integers, ``sitofp``/``fptosi``, ``extf``/``truncf``."""
        dst = as_dtype(dtype_, "to()")
        src = self.dtype
        if dst is src:
            return self
        b = current()
        loc, t = b.loc(), dst.to_ir()
        if src.is_int and dst.is_int:
            fn = arith.extsi if dst.bits > src.bits else arith.trunci
        elif src.is_int:
            fn = arith.sitofp
        elif dst.is_int:
            fn = arith.fptosi
        else:
            if dst.bits == src.bits:
                raise fail(f"to() cannot convert {src!r} to {dst!r} directly")
            fn = arith.extf if dst.bits > src.bits else arith.truncf
        return Scalar(fn(t, self.handle, loc=loc), dst)

    def _binary(self, name: str, other: Any, reverse: bool = False) -> Scalar:
        lhs, rhs = promote(self, other, _SYMBOL.get(name, name))
        if reverse:
            lhs, rhs = rhs, lhs
        d = lhs.dtype
        table = _INT_BINOPS if d.is_int else _FLOAT_BINOPS
        if name not in table:
            hint = " (use // for integer division)" if name == "truediv" else ""
            raise fail(f"operator {_SYMBOL[name]} is not defined on {d!r}{hint}")
        return Scalar(table[name](lhs.handle, rhs.handle, loc=current().loc()), d)

    def _compare(self, name: str, other: Any) -> Scalar:
        lhs, rhs = promote(self, other, _SYMBOL[name])
        ipred, fpred = _CMP[name]
        loc = current().loc()
        if lhs.dtype.is_int:
            pred = getattr(arith.CmpIPredicate, ipred)
            res = arith.cmpi(pred, lhs.handle, rhs.handle, loc=loc)
        else:
            pred = getattr(arith.CmpFPredicate, fpred)
            res = arith.cmpf(pred, lhs.handle, rhs.handle, loc=loc)
        return Scalar(res, int1)

    def __neg__(self) -> Scalar:
        if self.dtype.is_float:
            return Scalar(arith.negf(self.handle, loc=current().loc()), self.dtype)
        return self._binary("sub", 0, True)

    __hash__ = Value.__hash__


def _scalar_op(name: str, reverse: bool = False) -> Any:
    def op(self: Scalar, other: Any) -> Scalar:
        return self._binary(name, other, reverse)

    return op


def _scalar_cmp(name: str) -> Any:
    def op(self: Scalar, other: Any) -> Scalar:
        return self._compare(name, other)

    return op


for _name in _INT_BINOPS.keys() | _FLOAT_BINOPS.keys():
    setattr(Scalar, f"__{_name}__", _scalar_op(_name))
    setattr(Scalar, f"__r{_name}__", _scalar_op(_name, True))
for _name in _CMP:
    setattr(Scalar, f"__{_name}__", _scalar_cmp(_name))


def promote(lhs: Scalar, rhs: Any, what: str) -> tuple[Scalar, Scalar]:
    """Bring two operands to one type (Python numbers take the scalar's type)."""
    b = current()
    if isinstance(rhs, bool):
        rhs = Scalar(b.constant(rhs, lhs.dtype if lhs.dtype is int1 else int1), int1)
    elif is_number(rhs):
        if isinstance(rhs, float) and lhs.dtype.is_int:
            raise fail(f"cannot mix the {lhs.dtype!r} value with the float {rhs!r} in {what}")
        rhs = Scalar(b.constant(rhs, lhs.dtype), lhs.dtype)
    elif not isinstance(rhs, Scalar):
        raise fail(f"unsupported operand for {what}: {lhs!r} and {rhs!r}")
    a, c = lhs.dtype, rhs.dtype
    if a is c:
        return lhs, rhs
    if a.is_int and c.is_int and a.bits > 1 and c.bits > 1:
        return (lhs, rhs.to(a)) if a.bits > c.bits else (lhs.to(c), rhs)
    raise fail(f"operands of {what} have different types: {a!r} and {c!r}")


def constant(value: int | float | bool, dtype_: dtype) -> Scalar:
    """A hoisted scalar constant of ``dtype_``."""
    return Scalar(current().constant(value, dtype_), dtype_)


def int_operand(v: Any, want: dtype, what: str) -> ir.Value:
    """An ``i32``/``i64`` operand from a Python int or a traced integer.

    ``i32`` values widen to ``i64`` where ``i64`` is wanted; nothing narrows.
    """
    if is_int(v):
        # An operand is a signed number (a size, an offset, a phase): nothing wraps.
        half = 1 << (want.bits - 1)
        return current().constant(constexpr_int(v, what, -half, half - 1, f" ({want!r})"), want)
    if isinstance(v, Scalar) and v.dtype.is_int and v.dtype.bits > 1:
        if v.dtype is want:
            return v.handle
        if v.dtype.bits < want.bits:
            return v.to(want).handle
    got = v.dtype if isinstance(v, Scalar) else v
    raise fail(f"{what} must be a Python int or a traced {want!r}, got {got!r}")


def pred_operand(pred: Any, what: str = "pred") -> ir.Value | None:
    """``None`` for no predicate (None or True: the operand is left out); i1
    for False or a traced i1; ``what`` names the argument in the error."""
    if pred is None or pred is True:
        return None
    if pred is False:
        return current().constant(False, int1)
    if isinstance(pred, Scalar) and pred.dtype is int1:
        return pred.handle
    raise fail(f"{what} must be a bool or a traced i1 (a comparison), got {pred!r}")


class Pointer(Value):
    """A traced global-memory pointer argument."""


class Block(Value):
    """Base of traced values with a block shape and a layout."""

    def __init__(
        self, handle: ir.Value, shape: tuple[int, ...], dtype_: dtype, layout: Any
    ) -> None:
        super().__init__(handle, dtype_)
        self.shape = shape
        self.layout = layout

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self.shape)}, {self.dtype!r}, {self.layout!r})"

    def _with(self, handle: ir.Value) -> Any:
        return type(self)(handle, self.shape, self.dtype, self.layout)

    def _tensor_type(self) -> ir.RankedTensorType:
        return tensor_type(self.shape, self.dtype, self.layout)


def layout_attr(layout: Any) -> ir.Attribute:
    if isinstance(layout, RegisterLayout):
        return layout._attr()
    return shared_attr(layout)


def tensor_type(shape: Sequence[int], dtype_: dtype, layout: Any) -> ir.RankedTensorType:
    return ir.RankedTensorType.get(list(shape), dtype_.to_ir(), layout_attr(layout))


def splat(shape: Sequence[int], value: Any, dtype_: dtype, layout: RegisterLayout) -> Tensor:
    """A register tensor filled with the Python number ``value``."""
    if not is_number(value) and not isinstance(value, bool):
        raise fail(f"fill value must be a Python number, got {value!r}")
    if dtype_.is_int and isinstance(value, float):
        raise fail(f"cannot fill a {dtype_!r} tensor with the float {value!r}")
    b = current()
    t = tensor_type(shape, dtype_, layout)
    elem = dtype_.to_ir()
    if dtype_.is_float:
        scalar = ir.FloatAttr.get(elem, float(value))
    else:
        scalar = ir.IntegerAttr.get(elem, int_bits(int(value), dtype_.bits, "fill value"))
    attr = ir.DenseElementsAttr.get_splat(t, scalar)
    return Tensor(arith.ConstantOp(t, attr, loc=b.loc()).result, tuple(shape), dtype_, layout)


class Tensor(Block):
    """A traced register tensor with a shape, element type and register layout."""

    layout: RegisterLayout

    def to(self, dtype_: dtype) -> Tensor:
        """Convert the element type (``truncf``/``extf``); same shape and layout."""
        dst = as_dtype(dtype_, "to()")
        if dst is self.dtype:
            return self
        if not (dst.is_float and self.dtype.is_float):
            raise fail(f"tensor.to() converts between float types, not {self.dtype!r} -> {dst!r}")
        if dst.bits == self.dtype.bits:
            raise fail(f"tensor.to() cannot convert {self.dtype!r} to {dst!r} directly")
        t = tensor_type(self.shape, dst, self.layout)
        fn = arith.extf if dst.bits > self.dtype.bits else arith.truncf
        return Tensor(fn(t, self.handle, loc=current().loc()), self.shape, dst, self.layout)

    def _elementwise(self, name: str, other: Any, reverse: bool = False) -> Tensor:
        if not self.dtype.is_float:
            raise fail(f"tensor arithmetic is defined on float tensors, not {self.dtype!r}")
        if is_number(other):
            other = splat(self.shape, other, self.dtype, self.layout)
        if not isinstance(other, Tensor) or other.handle.type != self.handle.type:
            raise fail(
                f"operator {_SYMBOL[name]} needs two tensors of the same shape, type and "
                f"layout: {self!r} and {other!r}"
            )
        lhs, rhs = (other, self) if reverse else (self, other)
        return self._with(_FLOAT_BINOPS[name](lhs.handle, rhs.handle, loc=current().loc()))


def _tensor_op(name: str, reverse: bool = False) -> Any:
    def op(self: Tensor, other: Any) -> Tensor:
        return self._elementwise(name, other, reverse)

    return op


for _name in ("add", "sub", "mul", "truediv"):
    setattr(Tensor, f"__{_name}__", _tensor_op(_name))
    setattr(Tensor, f"__r{_name}__", _tensor_op(_name, True))


class TensorDescriptor(Block):
    """A traced TDM descriptor: a global tensor and the block one copy moves.

    ``shape`` (also ``block_shape``) is the block's shape.
    """

    layout: SharedLayout

    @property
    def block_shape(self) -> tuple[int, ...]:
        return self.shape

    @property
    def rank(self) -> int:
        return len(self.shape)

    def update(
        self,
        offsets: Sequence[Any] | None = None,
        bounds: Sequence[Any] | None = None,
        pred: Any = None,
    ) -> TensorDescriptor:
        """A descriptor whose block is moved by ``offsets`` (one i32 per dim).

        ``bounds`` (one i32 per dim) replaces the extent that out-of-bounds
        elements are judged against; ``pred`` (i1 or a Python bool) false makes
        every copy through the result a no-op.
        """
        b = current()
        rank = self.rank
        offsets = [0] * rank if offsets is None else sequence(offsets, "update offsets")
        bounds = [] if bounds is None else sequence(bounds, "update bounds")
        for name, vals, allowed in (("offsets", offsets, (rank,)), ("bounds", bounds, (0, rank))):
            if len(vals) not in allowed:
                raise fail(
                    f"update expects {rank} {name} for the rank-{rank} descriptor "
                    f"(block {list(self.shape)}), got {len(vals)}"
                )
        off = [int_operand(v, int32, "offset") for v in offsets]
        bnd = [int_operand(v, int32, "bound") for v in bounds]
        p = pred_operand(pred)
        op = tile.UpdateTensorDescriptorOp(
            self.handle, off, bnd, self.handle.type, pred=p, loc=b.loc()
        )
        return self._with(b.checked(op).result)


class SharedBuffer(Block):
    """A traced shared-memory buffer (``!tile.shared``)."""

    layout: SharedLayout

    def index(self, i: Any) -> SharedBuffer:
        """Buffer ``i`` of a multi-buffered allocation (drops the leading dim)."""
        if len(self.shape) < 2:
            raise fail(f"index needs a buffer of rank 2 or more, got shape {list(self.shape)}")
        if is_int(i) and not 0 <= i < self.shape[0]:
            raise fail(
                f"buffer index {i} is out of range: the allocation holds {self.shape[0]} "
                f"buffers of {list(self.shape[1:])}"
            )
        b = current()
        sub = SharedBuffer(self.handle, self.shape[1:], self.dtype, self.layout)
        idx = int_operand(i, int32, "buffer index")
        op = tile.MemdescIndexOp(self.handle, idx, shared_type(sub), loc=b.loc())
        return sub._with(b.checked(op).result)

    def permute(self, order: Sequence[int]) -> SharedBuffer:
        """A view whose dim ``i`` is dim ``order[i]`` of this buffer (Gluon's
        ``smem.permute``, ``tile.memdesc_trans``): no data moves. An MMA reads a
        block that lies transposed through ``permute((1, 0))``; copies and
        stores write the buffer itself, never the view."""
        order = sequence(order, "permute order")
        rank = len(self.shape)
        if not all(is_int(o) for o in order) or sorted(order) != list(range(rank)):
            raise fail(
                f"permute order {order} must be a permutation of 0..{rank - 1} for the "
                f"buffer of shape {list(self.shape)}"
            )
        try:
            layout = permuted_layout(self.layout, order)
        except LayoutError as e:
            raise fail(
                f"permute of the buffer of shape {list(self.shape)}: {e} (a ring of "
                "buffers is indexed first)"
            ) from None
        b = current()
        shape = tuple(self.shape[d] for d in order)
        view = SharedBuffer(self.handle, shape, self.dtype, layout)
        op = tile.MemdescTransOp(self.handle, shared_type(view), loc=b.loc())
        op.operation.attributes["order"] = ir.DenseI32ArrayAttr.get(list(order))
        return view._with(b.checked(op).result)

    def load(self, layout: RegisterLayout) -> Tensor:
        """Read the buffer into a register tensor of ``layout`` (``tl.local_load``)."""
        b = current()
        layout = register_layout(layout, "local_load layout", len(self.shape))
        t = tensor_type(self.shape, self.dtype, layout)
        op = tile.LocalLoadOp(self.handle, t, loc=b.loc())
        return Tensor(b.checked(op).result, self.shape, self.dtype, layout)


def desc_type(d: TensorDescriptor) -> ir.Type:
    return tile.TensorDescType.get(ir.TypeAttr.get(d._tensor_type()))


def shared_type(s: SharedBuffer) -> ir.Type:
    return tile.SharedType.get(ir.TypeAttr.get(s._tensor_type()))


__all__ = [
    "Block",
    "Pointer",
    "Scalar",
    "SharedBuffer",
    "Tensor",
    "TensorDescriptor",
    "Value",
    "constant",
    "int_operand",
    "pred_operand",
    "promote",
    "sequence",
    "splat",
]
