"""``quantize_fp8``: a tensor to 8-bit codes and the scales of one recipe, in the layouts the
scaled GEMMs take.

The scale layouts are those of :mod:`gemm_opt.core.scaling` (its
:func:`~gemm_opt.core.scaling.scale_shape`, so the quantizer cannot drift
from the rule the GEMMs read): tensorwise ``()``; rowwise ``(M, 1)`` for A
(M, K) and ``(1, N)`` / ``(G, 1, N)`` for B (K, N) / (G, K, N), one scale per
row of A and column of B (torchao's rowwise); block128 ``(M, ceil(K/128))``
for A (1x128 blocks along K) and ``(ceil(K/128), ceil(N/128))`` for B (128x128
blocks), DeepGEMM's; mx32 ``(M, K/32)`` and ``(K/32, N)`` e8m0fnu scales.

float32 scales are ``amax / max_finite`` of the block (at least float32's
smallest normal, so an all-zero block has a positive scale), and the data is
``x / scale`` rounded to nearest even: every element reconstructs within
half a step of the format at ``x / scale`` (plus float32's rounding of the
division), and each block's largest element lands on ``+-max_finite``. mx32
scales are the smallest power of two with ``amax / scale <= max_finite``, so
nothing clips (OCP MX's ``floor(log2(amax)) - emax`` would clip the top of
the block to the largest finite value) and the division is exact.

CUDA and CPU torch tensors are quantized with torch operations on their
device, with no host read of device data (``check_finite=True`` reads one
flag: a sync); numpy arrays with :func:`gemm_opt.core.fp8.encode`, to
``ml_dtypes`` arrays. Both give the same bits. The data keeps ``x``'s memory
layout (a transposed view in, the same strides out), so weights stored (N, K)
and passed as ``w.t()`` stay K-major. Computation is in float32 (float64
input is rounded to float32 first).

This module imports neither torch nor ``ml_dtypes`` at import time.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gemm_opt.core.fp8 import Fp8Format, Overflow, encode, fp8_format
from gemm_opt.core.scaling import BLOCK, MX_BLOCK, Operand, Recipe, parse_recipe, scale_shape

#: Input element types, by their torch / numpy name.
INPUT_DTYPES = ("float16", "bfloat16", "float32", "float64")
#: float32's smallest normal: the least float32 scale (a smaller one loses precision or is 0).
MIN_SCALE = float(np.finfo(np.float32).tiny)


def _framework(x: Any) -> str:
    mod = type(x).__module__.split(".")[0]
    if mod == "torch" and hasattr(x, "device") and hasattr(x, "dtype"):
        return "torch"
    if isinstance(x, np.ndarray):
        return "numpy"
    raise TypeError(
        f"x: expected a torch tensor or a numpy array, got {type(x).__module__}.{type(x).__name__}"
    )


def _check(x: Any, recipe: Any, dtype: Any, operand: Any) -> tuple[Recipe, Fp8Format, Operand]:
    r = parse_recipe(recipe)
    fmt = fp8_format(dtype, "dtype")
    if fmt.is_scale:
        raise ValueError(f"dtype: {fmt} is a scale format; the data takes e4m3fn, e5m2, ...")
    if r is Recipe.MX32 and not fmt.spec.ocp:
        raise ValueError(f"dtype: mx32 takes the OCP element formats (e4m3fn, e5m2), not {fmt}")
    try:
        op = Operand(operand)
    except ValueError:
        raise ValueError(f"operand: expected 'a' or 'b', got {operand!r}") from None
    name = str(x.dtype).removeprefix("torch.")
    if name not in INPUT_DTYPES:
        raise TypeError(f"x: expected floating-point elements ({', '.join(INPUT_DTYPES)}), "
                        f"got {name}")  # fmt: skip
    shape = tuple(x.shape)
    if (op is Operand.A and len(shape) != 2) or len(shape) not in (2, 3):
        want = "(M, K)" if op is Operand.A else "(K, N) or (G, K, N)"
        raise ValueError(f"x: expected shape {want} for operand {op.value}, got {shape}")
    if r is Recipe.MX32 and shape[-1 if op is Operand.A else -2] % MX_BLOCK:
        k = shape[-1 if op is Operand.A else -2]
        raise ValueError(f"x: mx32 scales blocks of {MX_BLOCK} along K: K = {k} is not a multiple")
    return r, fmt, op


def _blocks(r: Recipe, op: Operand, shape: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """Per axis of ``x``: (blocks, block size) of the scale layout; block size 0: whole axis."""
    k_axis = len(shape) - (1 if op is Operand.A else 2)
    out = []
    for axis, size in enumerate(shape):
        if r is Recipe.TENSORWISE:
            out.append((1, 0))
        elif axis == k_axis:
            if r is Recipe.ROWWISE:
                out.append((1, 0))
            else:
                b = BLOCK if r is Recipe.BLOCK128 else MX_BLOCK
                out.append((-(-size // b), b))
        elif r is Recipe.BLOCK128 and op is Operand.B and axis == len(shape) - 1:
            out.append((-(-size // BLOCK), BLOCK))
        else:
            out.append((size, 1))
    return tuple(out)


def quantize_fp8(
    x: Any,
    *,
    recipe: Recipe | str = Recipe.ROWWISE,
    dtype: Any = Fp8Format.E4M3FN,
    operand: Operand | str = Operand.A,
    check_finite: bool = False,
) -> tuple[Any, Any]:
    """``(data, scales)`` of ``x`` under ``recipe``, such that ``decode(data) x scales`` is ``x``
    to within the format's rounding.

    ``x`` is operand A (M, K) or, with ``operand="b"``, B (K, N) or (G, K, N)
    (a grouped GEMM's weights): the recipes scale along K, so the role
    decides the layout. ``dtype`` names the element format (``"e4m3fn"``,
    ``torch.float8_e5m2``, ...). Torch in, torch out (``data`` in the fp8
    dtype, ``scales`` float32 or ``float8_e8m0fnu`` on ``x``'s device); numpy
    in, ``ml_dtypes`` arrays out. ``check_finite`` refuses inf and NaN (on a
    GPU, a sync); unchecked, a non-finite element makes its block's scale and
    data non-finite. Bad input is a TypeError or ValueError naming the argument.
    """
    fw = _framework(x)
    r, fmt, op = _check(x, recipe, dtype, operand)
    if not isinstance(check_finite, bool):
        raise TypeError(f"check_finite: expected a bool, got {type(check_finite).__name__}")
    shape = tuple(x.shape)
    sshape = scale_shape(r, op, shape)
    blocks = _blocks(r, op, shape)
    if fw == "torch":
        import torch

        with torch.no_grad():  # rounding has no gradient; training recipes choose their own
            return _quantize_torch(x, r, fmt, shape, sshape, blocks, check_finite)
    return _quantize_numpy(x, r, fmt, shape, sshape, blocks, check_finite)


# ---- one algorithm, two array libraries -------------------------------------------------
#
# x is padded to whole blocks and viewed as (b0, s0, b1, s1, ...): block index, then
# offset in the block, per axis. The amax reduces the offset axes; dividing the padded
# view by the scales (offset axes kept as size 1) and cutting the padding gives y.


def _padded_view_shape(blocks) -> tuple[tuple[int, ...], tuple[int, ...]]:
    view, pad = [], []
    for (nb, b), size in blocks:
        step = size if b == 0 else b
        view += [nb, step]
        pad.append(nb * step - size)
    return tuple(view), tuple(pad)


#: Range of the mx32 scale exponent j (2**j): 2**-127 is e8m0fnu's least value; amax <
#: 2**128 and max_finite >= 2**8 keep j <= 120, so 2**-j is a normal float32 either way.
_MX_J = (-127, 120)


def _pow2(j, lib):
    """``2.0 ** j`` (float32, exact) for int32 ``j`` of normal range, built from its bits."""
    bits = (j + 127) << 23
    return bits.view(lib.float32) if lib.__name__ == "torch" else bits.view(np.float32)


def _quantize_torch(x, r, fmt, shape, sshape, blocks, check_finite):
    import torch
    import torch.nn.functional as F

    if check_finite and not bool(torch.isfinite(x).all()):
        raise ValueError("x: holds inf or NaN (check_finite=True)")
    s = fmt.spec
    out_dtype = getattr(torch, fmt.dtype_name)
    # Fewest passes over x: float16/bfloat16/float32 stay as they are (their amax is
    # exact in their own type, and dividing by the float32 scales promotes to float32);
    # float64 is rounded to float32 first, as the numpy path does.
    xf = x.to(torch.float32) if x.dtype == torch.float64 else x
    view, pad = _padded_view_shape(zip(blocks, shape, strict=True))
    pad_arg = [p for axis_pad in reversed(pad) for p in (0, axis_pad)]
    xp = F.pad(xf, pad_arg) if any(pad) else xf
    xv = xp.reshape(view)
    offsets = tuple(range(1, len(view), 2))
    if xv.numel() == 0:
        amax = torch.zeros(view[0::2], dtype=torch.float32, device=x.device)
    else:  # max |x| in one reduction (no |x| temporary)
        amax = torch.linalg.vector_norm(xv, float("inf"), dim=offsets).to(torch.float32)
    if r is Recipe.MX32:
        # the least j with amax / 2**j <= max_finite, from amax's exponent (exact, no log)
        ok = torch.isfinite(amax) & (amax > 0)
        safe = torch.where(ok, amax, 1.0)
        e = torch.frexp(safe).exponent  # safe = m * 2**e, m in [0.5, 1)
        j = (e - 1 - s.emax).clamp(*_MX_J)
        j = j + (safe * _pow2(-j, torch) > s.max_finite).to(torch.int32)
        code = torch.where(ok, j + 127, torch.where(amax == 0, 127, 255)).to(torch.uint8)
        inv = torch.where(torch.isfinite(amax), _pow2(-j, torch), float("nan"))
        y = xv * inv.reshape(_keep(view))
        scales = code.view(torch.float8_e8m0fnu).reshape(sshape)
    else:
        scale = torch.clamp_min(amax / s.max_finite, MIN_SCALE)
        y = xv / scale.reshape(_keep(view))
        scales = scale.reshape(sshape)
    y = y.reshape(xp.shape)[tuple(slice(0, n) for n in shape)]
    y.clamp_(-s.max_finite, s.max_finite)  # y is a float32 temporary of this call
    data = torch.empty_like(x, dtype=out_dtype)  # x's strides
    data.copy_(y)
    return data, scales


def _quantize_numpy(x, r, fmt, shape, sshape, blocks, check_finite):
    try:
        import ml_dtypes
    except ImportError:  # pragma: no cover - installed with the test extra
        raise ImportError("quantize_fp8 returns ml_dtypes arrays for numpy input: "
                          "install ml_dtypes") from None  # fmt: skip
    xf = np.asarray(x).astype(np.float32)
    if check_finite and not np.isfinite(xf).all():
        raise ValueError("x: holds inf or NaN (check_finite=True)")
    s = fmt.spec
    view, pad = _padded_view_shape(zip(blocks, shape, strict=True))
    xp = np.pad(xf, [(0, p) for p in pad]) if any(pad) else xf
    xv = xp.reshape(view)
    offsets = tuple(range(1, len(view), 2))
    amax = np.abs(xv).max(axis=offsets, initial=np.float32(0))
    if r is Recipe.MX32:
        with np.errstate(invalid="ignore", over="ignore"):
            ok = np.isfinite(amax) & (amax > 0)
            safe = np.where(ok, amax, np.float32(1))
            e = np.frexp(safe)[1].astype(np.int32)
            j = np.clip(e - 1 - s.emax, *_MX_J).astype(np.int32)
            j = j + (safe * _pow2(-j, np) > np.float32(s.max_finite)).astype(np.int32)
            code = np.where(ok, j + 127, np.where(amax == 0, 127, 255)).astype(np.uint8)
            inv = np.where(np.isfinite(amax), _pow2(-j, np), np.float32(np.nan))
            y = xv * inv.reshape(_keep(view))
        scales = code.view(ml_dtypes.float8_e8m0fnu).reshape(sshape)
    else:
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            scale = np.maximum(amax / np.float32(s.max_finite), np.float32(MIN_SCALE))
            y = xv / scale.reshape(_keep(view))
        scales = scale.astype(np.float32).reshape(sshape)
    y = y.reshape(xp.shape)[tuple(slice(0, n) for n in shape)]
    data = np.empty_like(x, dtype=getattr(ml_dtypes, fmt.dtype_name))  # x's memory order
    data.view(np.uint8)[...] = encode(y, fmt, overflow=Overflow.SATURATE)
    return data, scales


def _keep(view: tuple[int, ...]) -> tuple[int, ...]:
    """The scales' shape with the offset axes kept as size 1 (broadcast over each block)."""
    return tuple(n if i % 2 == 0 else 1 for i, n in enumerate(view))


__all__ = ["INPUT_DTYPES", "MIN_SCALE", "quantize_fp8"]
