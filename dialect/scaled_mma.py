"""The block-scaled MMA of the ``tile`` dialect (registered by :func:`load_all`).

``tile.scaled_wmma`` is MXFP8 (OCP MX): 8-bit A and B whose every 32 consecutive
elements along K share one ``f8E8M0FNU`` scale (``2 ** (code - 127)``, code
``0xFF`` is NaN)::

    d[m, n] = c[m, n] + sum_k (a[m, k] * 2 ** (sa[m, k // 32] - 127))
                            * (b[k, n] * 2 ** (sb[n, k // 32] - 127))

The scales are tile values of their own: register tensors (A's M x K/32, B's
N x K/32, both K-minor as the instructions read them) with a
``#tile.scale_layout`` whose parent is the accumulator layout, so they are
copied (TDM on gfx1250), buffered and loaded like the operands. gfx1250
lowers it to ``v_wmma_scale_f32_16x16x128_f8f6f4`` and gfx950 to
``v_mfma_scale_f32_*_f8f6f4``, both through Triton's ``tt.dot_scaled``.
"""

from typing import Any

from gemm_opt.core.ext_compat import cast, ext, ir
from gemm_opt.core.scaling import MX_BLOCK
from gemm_opt.dialect.tile import (
    DotOperandAttr,
    ScaleLayoutAttr,
    TileOp,
    VerifyError,
    WmmaAttr,
    _ranked,
    _target_names,
    check_fp8_inputs,
    check_instr_shape,
    check_register_layout,
)


def _fp8_inputs(op: TileOp, a: ir.Type, b: ir.Type) -> None:
    """A and B are OCP 8-bit element types of a target that has the block-scaled MMA."""
    targets = [t for t in op.targets() if t.mx_scale_type is not None]
    if not targets:
        have = _target_names(op.targets()) or "no target"
        raise VerifyError(f"{have} has no block-scaled MMA (MXFP8 needs gfx1250 or gfx950)")
    for name, t in (("a", a), ("b", b)):
        if str(t) == "f8E8M0FNU" or not any(str(t) in x.fp8_types for x in targets):
            raise VerifyError(f"{name} must be f8E4M3FN or f8E5M2 (the OCP 8-bit formats), got {t}")
    check_fp8_inputs(op, a, b)


class ScaledWmmaOp(TileOp, name="scaled_wmma", traits=[ext.Pure]):
    """``d = (a x a_scale) @ (b x b_scale) + c``: MXFP8 on matrix cores, fp32 accumulation.

    ```mlir
    %d = "tile.scaled_wmma"(%a, %sa, %b, %sb, %c)
         : (tensor<128x128xf8E4M3FN, #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 16}>>,
            tensor<128x4xf8E8M0FNU, #tile.scale_layout<{op_idx = 0, parent = #acc}>>,
            tensor<128x128xf8E4M3FN, #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 16}>>,
            tensor<128x4xf8E8M0FNU, #tile.scale_layout<{op_idx = 1, parent = #acc}>>,
            tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    ```
    Rules: A is MxK, B is KxN, C and D are MxN f32; K is a multiple of 32;
    ``a_scale`` is M x K/32 and ``b_scale`` N x K/32, both ``f8E8M0FNU``; A and
    B are ``f8E4M3FN`` or ``f8E5M2`` (either mix) and some possible target has
    the block-scaled MMA (the target table's ``mx_scale_type``). With layouts:
    C's ``#tile.wmma_layout`` names the block-scaled instruction (16x16x128),
    A and B are its ``#tile.dot_operand`` s (op_idx 0, 1; one k_width), the
    scales its ``#tile.scale_layout`` s (op_idx 0, 1), and M, N, K are
    multiples of the instruction. Layout-free IR (for passes and the model)
    checks shapes and types only.
    """

    a: ext.Operand[Any]
    a_scale: ext.Operand[Any]
    b: ext.Operand[Any]
    b_scale: ext.Operand[Any]
    c: ext.Operand[Any]
    result: ext.Result[Any]

    @classmethod
    def build(
        cls, a: ir.Value, a_scale: ir.Value, b: ir.Value, b_scale: ir.Value, c: ir.Value, **kwargs
    ) -> "ScaledWmmaOp":
        """The op at the current insertion point; its result has c's type."""
        return cls(a, a_scale, b, b_scale, c, c.type, **kwargs)

    def verify(self) -> None:
        a, b, c = _ranked(self.a, "a"), _ranked(self.b, "b"), _ranked(self.c, "c")
        sa, sb = _ranked(self.a_scale, "a_scale"), _ranked(self.b_scale, "b_scale")
        d = _ranked(self.result, "result")
        if any(t.rank != 2 for t in (a, b, c, sa, sb)):
            raise VerifyError("a, a_scale, b, b_scale and c must be 2-D")
        (m, k), (k2, n) = a.shape, b.shape
        if k != k2:
            raise VerifyError(f"expects a's K ({k}) to equal b's K ({k2})")
        if tuple(c.shape) != (m, n):
            raise VerifyError(f"expects c to be {m}x{n} (a is {m}x{k}, b is {k}x{n}), got {c}")
        if d != c:
            raise VerifyError(f"result type {d} must equal c's type {c}")
        if k % MX_BLOCK:
            raise VerifyError(
                f"K = {k} is not a multiple of {MX_BLOCK} (one scale per {MX_BLOCK} elements of K)"
            )
        ks = k // MX_BLOCK
        for name, t, rows, what in (("a_scale", sa, m, "M"), ("b_scale", sb, n, "N")):
            if tuple(t.shape) != (rows, ks):
                raise VerifyError(
                    f"expects {name} to be {rows}x{ks} ({what} x K/{MX_BLOCK}), got "
                    f"{'x'.join(map(str, t.shape))}"
                )
            if str(t.element_type) != "f8E8M0FNU":
                raise VerifyError(f"expects {name} of f8E8M0FNU scales, got {t.element_type}")
        _fp8_inputs(self, a.element_type, b.element_type)
        if cast(c.element_type, ir.F32Type) is None:
            raise VerifyError(f"expects an f32 accumulator, got {c.element_type}")
        encodings = [t.encoding for t in (a, sa, b, sb, c)]
        if all(e is None for e in encodings):
            return
        self._check_layouts(a, sa, b, sb, c)

    def _check_layouts(self, a, sa, b, sb, c) -> None:
        acc = c.encoding
        if not isinstance(acc, WmmaAttr):
            raise VerifyError(f"c must have a #tile.wmma_layout layout, got {acc}")
        check_instr_shape(acc, "block-scaled 8-bit")
        for idx, (name, t, cls) in enumerate((("a", a, DotOperandAttr), ("b", b, DotOperandAttr))):
            enc = t.encoding
            if not isinstance(enc, cls):
                raise VerifyError(f"{name} must have a #tile.dot_operand layout, got {enc}")
            v = enc.field_values()
            if v.get("op_idx") != idx or v.get("parent") != acc:
                raise VerifyError(
                    f"{name}'s layout must be a #tile.dot_operand with op_idx = {idx} and c's "
                    f"layout {acc} as parent"
                )
        for idx, (name, t) in enumerate((("a_scale", sa), ("b_scale", sb))):
            enc = t.encoding
            if not isinstance(enc, ScaleLayoutAttr):
                raise VerifyError(f"{name} must have a #tile.scale_layout layout, got {enc}")
            v = enc.field_values()
            if v.get("op_idx") != idx or v.get("parent") != acc:
                raise VerifyError(
                    f"{name}'s layout must be a #tile.scale_layout with op_idx = {idx} and c's "
                    f"layout {acc} as parent"
                )
        for name, t in (("c", c), ("a", a), ("b", b), ("a_scale", sa), ("b_scale", sb)):
            check_register_layout(self, t, name)
        ka, kb = a.encoding.k_width(), b.encoding.k_width()
        if ka != kb:
            raise VerifyError(f"a and b must have the same k_width, got {ka} and {kb}")
        (m, k), n = a.shape, b.shape[1]
        im, in_, ik = acc.instr_shape()
        if m % im or n % in_ or k % ik:
            raise VerifyError(
                f"{m}x{n}x{k} is not a multiple of the instruction shape {im}x{in_}x{ik}"
            )


__all__ = ["ScaledWmmaOp"]
