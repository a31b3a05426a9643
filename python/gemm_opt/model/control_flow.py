"""``scf.for``, ``scf.while`` and ``scf.if`` in the model, under a per-warp activity mask.

Only the warps whose condition holds execute a region; scalar results merge per
warp, tensors must agree between warps (they are program-level values).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gemm_opt.model.concurrency import Waiting
from gemm_opt.model.core import (
    Compiler,
    Exec,
    Program,
    is_tensor_type,
    merge_region,
    op_where,
    operand_elem,
    operand_slots,
)
from gemm_opt.model.errors import ModelError
from gemm_opt.model.registry import OpImpls
from gemm_opt.model.values import (
    unsigned_bits,
    wrap_bits,
)

IMPLS = OpImpls("control flow")
"""The control flow family's implementations."""


@IMPLS.impl("scf.for")
def _b_for(c: Compiler, op: Any) -> Exec:
    operands = operand_slots(c, op)
    lb, ub, step, inits = operands[0], operands[1], operands[2], operands[3:]
    results = [c.slot(v) for v in op.operation.results]
    body = c.block(op.operation.regions[0].blocks[0])
    iv_slot, iter_slots = body.arg_slots[0], body.arg_slots[1:]
    # Equivalent mutant: operand 1 (the upper bound) has the lower bound's type (verifier).
    iv_elem = operand_elem(op, 0)
    tensors = [is_tensor_type(v.type) for v in op.operation.results]
    unsigned = "unsignedCmp" in op.operation.attributes
    where = op_where(op)

    def run(p: Program, mask: np.ndarray) -> None:
        iv = p.env[lb]
        upper = p.env[ub]
        st = p.env[step]
        if ((st <= 0) & mask).any():
            raise ModelError(f"{where}: the step must be positive, got {st.tolist()}")
        iters = [p.env[s] for s in inits]
        while True:
            if unsigned:
                more = unsigned_bits(iv, iv_elem.width) < unsigned_bits(upper, iv_elem.width)
            else:
                more = iv < upper
            running = mask & more
            if not running.any():
                break
            p.env[iv_slot] = iv
            # Equivalent mutant: strict=False (the verifier matches iter_args to the inits).
            for s, v in zip(iter_slots, iters, strict=True):
                p.env[s] = v
            yielded = p.exec_block(body, running)
            iters = [
                merge_region(running, mask, new, old, tensor, where)
                # Equivalent mutant: strict=False (scf.yield matches the results, verifier).
                for new, old, tensor in zip(yielded, iters, tensors, strict=True)
            ]
            iv = np.where(running, wrap_bits(iv + st, iv_elem.width), iv)
        # Equivalent mutant: strict=False (one result per init, verifier).
        for s, v in zip(results, iters, strict=True):
            p.env[s] = v

    return run


def _same(xs: list[Any], ys: list[Any]) -> bool:
    """Whether two lists of runtime values are equal (arrays by value)."""
    # Equivalent mutant: strict=False (two passes of one loop carry as many values).
    for x, y in zip(xs, ys, strict=True):
        if x is y:
            continue
        # Equivalent mutant: and->or (a loop value is an array on every pass or on none).
        if not (isinstance(x, np.ndarray) and isinstance(y, np.ndarray)):
            return False
        if x.shape != y.shape or not np.array_equal(x, y, equal_nan=x.dtype.kind == "f"):
            return False
    return True


@IMPLS.impl("scf.while")
def _b_while(c: Compiler, op: Any) -> Exec:
    """``scf.while`` per warp: a warp leaves when its condition is false.

    A flag wait is such a loop around an acquire atomic; the values a warp
    passes to ``scf.condition`` when it leaves are its results.
    """
    inits = operand_slots(c, op)
    results = [c.slot(v) for v in op.operation.results]
    before = c.block(op.operation.regions[0].blocks[0])
    after = c.block(op.operation.regions[1].blocks[0])
    arg_tensors = [is_tensor_type(v.type) for v in op.operation.operands]
    res_tensors = [is_tensor_type(v.type) for v in op.operation.results]
    where = op_where(op)

    def run(p: Program, mask: np.ndarray) -> None:
        vals = [p.env[s] for s in inits]
        out: list[Any] = [None] * len(results)
        active = mask
        prev: list[Any] | None = None
        # Equivalent mutant: -2 (any negative count; the first pass has no prev anyway).
        prev_effects = -1
        while True:
            # An iteration that starts as the last one did, with no atomic or
            # global write in between, can only differ if another program
            # writes: wait for that (a plain-load spin), or report it.
            if prev is not None and p.clock.effects == prev_effects and _same(vals, prev):
                sync = p.run.sync
                assert sync is not None  # every run has one
                # Equivalent mutant: element 1 (a wait with no array never reads its element).
                sync.scheduler.wait_change(p.clock, Waiting(p.pid, None, "", 0, None, where))
            prev, prev_effects = vals, p.clock.effects
            for s, v in zip(before.arg_slots, vals, strict=True):
                p.env[s] = v
            cond_v, *forwarded = p.exec_block(before, active)
            cond = cond_v != 0
            leaving = active & ~cond
            if leaving.any():
                out = [
                    merge_region(leaving, mask, new, old, tensor, where)
                    for new, old, tensor in zip(forwarded, out, res_tensors, strict=True)
                ]
            active = active & cond
            if not active.any():
                break
            # Equivalent mutant: strict=False (the after block takes what scf.condition passes).
            for s, v in zip(after.arg_slots, forwarded, strict=True):
                p.env[s] = v
            yielded = p.exec_block(after, active)
            vals = [
                merge_region(active, mask, new, old, tensor, where)
                for new, old, tensor in zip(yielded, vals, arg_tensors, strict=True)
            ]
        for s, v in zip(results, out, strict=True):
            p.env[s] = v

    return run


@IMPLS.impl("scf.if")
def _b_if(c: Compiler, op: Any) -> Exec:
    (cond_s,) = operand_slots(c, op)
    results = [c.slot(v) for v in op.operation.results]
    then_b = c.block(op.operation.regions[0].blocks[0])
    else_region = op.operation.regions[1]
    else_b = c.block(else_region.blocks[0]) if len(else_region.blocks) else None
    tensors = [is_tensor_type(v.type) for v in op.operation.results]
    where = op_where(op)

    def run(p: Program, mask: np.ndarray) -> None:
        cond = p.env[cond_s] != 0
        then_mask = mask & cond
        else_mask = mask & ~cond
        then_vals = p.exec_block(then_b, then_mask) if then_mask.any() else None
        else_vals = None
        if else_b is not None and else_mask.any():
            else_vals = p.exec_block(else_b, else_mask)
        for i, s in enumerate(results):
            t = None if then_vals is None else then_vals[i]
            e = None if else_vals is None else else_vals[i]
            if t is None:
                p.env[s] = e
            elif e is None:
                p.env[s] = t
            else:
                p.env[s] = merge_region(then_mask, mask, t, e, tensors[i], where)

    return run


__all__ = [
    "IMPLS",
]
