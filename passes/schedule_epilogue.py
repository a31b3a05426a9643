"""The epilogue of a ``tile.gemm_schedule``, as IR; not a pass.

``tile-lower-gemm-schedule`` calls :class:`Epilogue` where a tile's finished
fp32 sum is stored (once per tile, after any stream-K or split-K reduction):
``act(acc * row_scale[m] * col_scale[n] + bias[n])`` (+ C's old value with
``accumulate``), in fp32, then rounded once to C's type. Every vector operand is
read with a ``tile.load_block`` whose stride is 0 along the dimension it is
broadcast over, in the accumulator's own layout and masked by the tile's edges
like the store, so no element past M or N is read and no layout conversion or
broadcast op is needed. The activations are ``arith`` and ``math.exp`` /
``math.erf`` ops, which every target lowers and the model runs.
"""

import math

from gemm_opt.core.ext_compat import arith, ir, math_dialect
from gemm_opt.core.modes import Activation, Grouped
from gemm_opt.dialect.schedule import GemmScheduleOp
from gemm_opt.dialect.tile import LoadBlockOp, PtrType
from gemm_opt.passes.schedule_ir import Emitter, Value


def _math(name: str, x: Value) -> Value:
    """A unary ``math`` op of the bindings (``exp``, ``erf``)."""
    return getattr(math_dialect, name.capitalize() + "Op")(x).result


class Epilogue:
    """Emit one schedule op's epilogue (see the module doc)."""

    def __init__(self, op: GemmScheduleOp, e: Emitter, acc_type: ir.RankedTensorType) -> None:
        self.op = op
        self.e = e
        self.acc_type = acc_type
        self.activation = op.activation
        self.accumulate = op.accumulate
        self.grouped = op.grouped
        self.c_elem = PtrType(op.c.type).element_type

    @property
    def empty(self) -> bool:
        """Nothing between the sum and the rounding store."""
        op = self.op
        return (
            self.activation == Activation.NONE
            and not self.accumulate
            and op.bias is None
            and op.row_scale is None
            and op.col_scale is None
        )

    # -- pieces --

    def const(self, v: float) -> Value:
        t = self.acc_type
        attr = ir.DenseElementsAttr.get_splat(t, ir.FloatAttr.get(ir.F32Type.get(), v))
        return arith.ConstantOp(t, attr).result

    def tensor(self, elem: ir.Type) -> ir.RankedTensorType:
        t = self.acc_type
        return ir.RankedTensorType.get(list(t.shape), elem, t.encoding)

    def widen(self, v: Value) -> Value:
        """``v`` in f32 (``arith.extf`` unless it is already)."""
        elem = ir.RankedTensorType(v.type).element_type
        if str(elem) == "f32":
            return v
        return arith.ExtFOp(self.tensor(ir.F32Type.get()), v).result

    def bias_at(
        self,
        m_off: Value,
        n_off: Value,
        rows: Value,
        group: Value | None,
        cols: Value | None,
        half: int = 0,
    ) -> Value:
        """The bias tile; grouped "m": group ``group``'s row of the ``(G, N)`` bias
        (columns shifted by ``group * N``); swiglu: a bias of ``2N`` per row,
        ``[gate | up]``, ``half`` 1 the up half's (shifted by N more). ``cols``
        (default N) bounds the columns: 0 reads zeros (atomic stream-K's
        contributors other than the first)."""
        e = self.e
        n = self.op.n
        bound = cols if cols is not None else n
        swiglu = self.activation == Activation.SWIGLU
        shift = e.mul(n, e.c(half)) if half else None
        if self.grouped == Grouped.M and group is not None:
            row = e.mul(group, e.add(n, n) if swiglu else n)
            shift = row if shift is None else e.add(row, shift)
        if shift is None:
            return self._cols(self.op.bias, rows, bound, m_off, n_off)
        return self._cols(self.op.bias, rows, e.add(shift, bound), m_off, e.add(shift, n_off))

    def _cols(self, base: Value, rows: Value, cols: Value, m_off: Value, n_off: Value) -> Value:
        e = self.e
        zero, one = e.c64(0), e.c64(1)
        t = self.tensor(PtrType(base.type).element_type)
        v = LoadBlockOp(base, [rows, cols], [zero, one], [m_off, n_off], t).result
        return self.widen(v)

    def _rows(self, base: Value, rows: Value, m_off: Value, n_off: Value) -> Value:
        e = self.e
        zero, one = e.c64(0), e.c64(1)
        t = self.tensor(ir.F32Type.get())
        return LoadBlockOp(base, [rows, self.op.n], [one, zero], [m_off, n_off], t).result

    def linear(
        self,
        acc: Value,
        m_off: Value,
        n_off: Value,
        rows: Value,
        group: Value | None = None,
        bias_cols: Value | None = None,
        half: int = 0,
    ) -> Value:
        """``acc * row_scale * col_scale + bias``: the epilogue's linear part (what
        atomic stream-K's contributors apply to their partials)."""
        y = acc
        op = self.op
        if op.row_scale is not None:
            y = arith.MulFOp(y, self._rows(op.row_scale, rows, m_off, n_off)).result
        if op.col_scale is not None:
            y = arith.MulFOp(y, self._cols(op.col_scale, rows, op.n, m_off, n_off)).result
        if op.bias is not None:
            bias = self.bias_at(m_off, n_off, rows, group, bias_cols, half)
            y = arith.AddFOp(y, bias).result
        return y

    def activate(self, x: Value) -> Value:
        """``activation(x)`` on an f32 tile (swiglu's is :meth:`finish`'s)."""
        act = self.activation
        if act in (Activation.NONE, Activation.SWIGLU):
            return x
        if act == Activation.RELU:
            return arith.MaximumFOp(x, self.const(0.0)).result
        if act == Activation.GELU:  # 0.5 x (1 + erf(x / sqrt 2))
            t = _math("erf", arith.MulFOp(x, self.const(math.sqrt(0.5))).result)
            half = arith.MulFOp(x, self.const(0.5)).result
            return arith.MulFOp(half, arith.AddFOp(t, self.const(1.0)).result).result
        if act == Activation.GELU_TANH:  # x * sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3)
            x3 = arith.MulFOp(arith.MulFOp(x, x).result, x).result
            inner = arith.AddFOp(x, arith.MulFOp(x3, self.const(0.044715)).result).result
            z = arith.MulFOp(inner, self.const(2.0 * math.sqrt(2.0 / math.pi))).result
            return self._times_sigmoid(x, z)
        return self._times_sigmoid(x, x)  # silu

    def _times_sigmoid(self, x: Value, z: Value) -> Value:
        """``x / (1 + exp(-z))``: for very negative ``z`` the exp overflows to +inf
        and the quotient is a signed zero, never NaN (for finite ``x``)."""
        ez = _math("exp", arith.NegFOp(z).result)
        return arith.DivFOp(x, arith.AddFOp(ez, self.const(1.0)).result).result

    def finish(
        self,
        acc: Value | tuple[Value, Value],
        m_off: Value,
        n_off: Value,
        rows: Value,
        group: Value | None = None,
    ) -> Value:
        """The whole epilogue of a finished tile, in f32 (C's old value added with
        ``accumulate``, read at the store's place and bounds); swiglu: ``acc`` is
        the pair (gate, up), each through the linear part with its half of the
        bias, then ``silu(gate) * up``."""
        if isinstance(acc, tuple):
            gate = self.linear(acc[0], m_off, n_off, rows, group)
            up = self.linear(acc[1], m_off, n_off, rows, group, half=1)
            y = arith.MulFOp(self._times_sigmoid(gate, gate), up).result
        else:
            y = self.activate(self.linear(acc, m_off, n_off, rows, group))
        if self.accumulate:
            e = self.e
            old = e.load(
                self.op.c, rows, self.op.n, self.op.ldc, m_off, n_off, self.tensor(self.c_elem)
            )
            y = arith.AddFOp(self.widen(old), y).result
        return y


__all__ = ["Epilogue"]
