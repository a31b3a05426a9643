"""The hand-off of control flow and arithmetic: ``func``, ``scf``, ``arith``, ``math``,
``tile.program_id`` and ``tile.warp_id``.

``arith``, ``math`` and ``scf`` ops stay what they are; only their types change (tile
encodings and types become Triton's, in results, block arguments and ``arith.constant``
values). Attributes a builder would silently drop are refused. Where the target counts
its copies (``ctx.strategy.counter``: cuda:90's TMA copies) an ``scf`` op with copies
nested in it threads the count through as one more iteration argument or result, and an
``scf.for`` whose iterations issue a fixed number computes it from the induction variable.
"""

from __future__ import annotations

from typing import Any

import numpy

from gemm_opt.core.contract import WARP_PREDICATED
from gemm_opt.core.ext_compat import cast, ir
from gemm_opt.dialect.tile import ProgramIdOp, WarpIdOp
from gemm_opt.lowering.access import linear_index
from gemm_opt.lowering.context import Handler, HandOffContext

#: ``arith.cmpi`` / ``arith.cmpf`` predicate codes -> Triton builder suffix.
_ICMP = ("EQ", "NE", "SLT", "SLE", "SGT", "SGE", "ULT", "ULE", "UGT", "UGE")
_FCMP = {1: "OEQ", 2: "OGT", 3: "OGE", 4: "OLT", 5: "OLE", 6: "ONE", 8: "UEQ", 9: "UGT"}
_FCMP |= {10: "UGE", 11: "ULT", 12: "ULE", 13: "UNE"}
#: Kept ops whose Triton builder takes just the new operands.
_ELEMENTWISE = {
    "arith.addi": "create_add",
    "arith.subi": "create_sub",
    "arith.muli": "create_mul",
    "arith.divsi": "create_sdiv",
    "arith.divui": "create_udiv",
    "arith.remsi": "create_srem",
    "arith.remui": "create_urem",
    "arith.andi": "create_and",
    "arith.ori": "create_or",
    "arith.xori": "create_xor",
    "arith.shli": "create_shl",
    "arith.shrsi": "create_ashr",
    "arith.shrui": "create_lshr",
    "arith.maxsi": "create_maxsi",
    "arith.minsi": "create_minsi",
    "arith.maxui": "create_maxui",
    "arith.minui": "create_minui",
    "arith.addf": "create_fadd",
    "arith.subf": "create_fsub",
    "arith.mulf": "create_fmul",
    "arith.divf": "create_fdiv",
    "arith.remf": "create_frem",
    "arith.negf": "create_fneg",
    "arith.maximumf": "create_maximumf",
    "arith.minimumf": "create_minimumf",
    "arith.maxnumf": "create_maxnumf",
    "arith.minnumf": "create_minnumf",
    "arith.select": "create_select",
    "math.exp": "create_exp",
    "math.exp2": "create_exp2",
    "math.log": "create_log",
    "math.log2": "create_log2",
    "math.sin": "create_sin",
    "math.cos": "create_cos",
    "math.sqrt": "create_sqrt",
    "math.rsqrt": "create_rsqrt",
    "math.absf": "create_fabs",
    "math.absi": "create_iabs",
    "math.floor": "create_floor",
    "math.ceil": "create_ceil",
    "math.erf": "create_erf",
    "math.fma": "create_fma",
}
#: Kept casts: builder and whether it also takes a signedness flag.
_CASTS = {
    "arith.extsi": ("create_int_cast", True),
    "arith.extui": ("create_int_cast", False),
    "arith.trunci": ("create_int_cast", True),
    "arith.sitofp": ("create_si_to_fp", None),
    "arith.uitofp": ("create_ui_to_fp", None),
    "arith.fptosi": ("create_fp_to_si", None),
    "arith.fptoui": ("create_fp_to_ui", None),
    "arith.extf": ("create_fp_ext", None),
    "arith.truncf": ("create_fp_trunc", None),
    "arith.bitcast": ("create_bitcast", None),
}
#: The most runs of equal values a non-splat constant lowers to (one select each).
MAX_CONSTANT_RUNS = 64


def _operation(op: Any) -> ir.Operation:
    # Equivalent mutant: the negated condition returns ``op`` itself. An OpView and an
    # Operation both have ``operation``, so only that branch ever runs, and an OpView
    # answers every use here (name, operands, results, attributes, regions, parent,
    # location) as its Operation does, comparing and hashing equal to it in the plans.
    return op.operation if hasattr(op, "operation") else op


# -- arith and math --


def lower_elementwise(ctx: HandOffContext, op: Any) -> Any:
    op = _operation(op)
    args = [ctx.v(o) for o in op.operands]
    ctx.check_attrs(op, ())
    return getattr(ctx.b, _ELEMENTWISE[op.name])(*args)


def lower_cast(ctx: HandOffContext, op: Any) -> Any:
    op = _operation(op)
    args = [ctx.v(o) for o in op.operands]
    builder, is_signed = _CASTS[op.name]
    ctx.check_attrs(op, ())
    ty = ctx.must_type(op.results[0].type, op)
    if is_signed is None:
        return getattr(ctx.b, builder)(args[0], ty)
    return getattr(ctx.b, builder)(args[0], ty, is_signed)


def lower_cmpi(ctx: HandOffContext, op: Any) -> Any:
    op = _operation(op)
    ctx.check_attrs(op, ("predicate",))
    code = ir.IntegerAttr(op.attributes["predicate"]).value
    a, b = (ctx.v(o) for o in op.operands)
    return getattr(ctx.b, f"create_icmp{_ICMP[code]}")(a, b)


def lower_cmpf(ctx: HandOffContext, op: Any) -> Any:
    op = _operation(op)
    ctx.check_attrs(op, ("predicate",))
    code = ir.IntegerAttr(op.attributes["predicate"]).value
    if code not in _FCMP:
        raise ctx.fail(op, f"'arith.cmpf' predicate {code} has no lowering to TritonGPU")
    a, b = (ctx.v(o) for o in op.operands)
    return getattr(ctx.b, f"create_fcmp{_FCMP[code]}")(a, b)


def lower_constant(ctx: HandOffContext, op: Any) -> Any:
    op = _operation(op)
    ctx.check_attrs(op, ("value",))
    value = op.attributes["value"]
    t = op.results[0].type
    dense = cast(value, ir.DenseElementsAttr)
    if dense is None:
        return ctx.scalar(value, t, op)
    dense = ir.DenseElementsAttr(value)
    rt = ir.RankedTensorType(t)
    ty = ctx.must_type(t, op)
    if dense.is_splat:
        splat = ctx.scalar(dense.get_splat_value(), rt.element_type, op)
        return ctx.b.create_splat(ty, splat)
    return _non_splat_constant(ctx, op, dense, rt, ty)


def _non_splat_constant(ctx: HandOffContext, op: Any, dense: Any, rt: Any, ty: Any) -> Any:
    """A non-splat tensor constant: a splat of its first value, then one
    ``select`` per other run of equal values (in row-major order) on the
    element's row-major index."""
    shape = list(rt.shape)
    if len(shape) not in (1, 2):
        raise ctx.fail(op, "only rank-1 and rank-2 tensor constants lower to TritonGPU")
    elem = rt.element_type
    values = numpy.asarray(dense)  # the bindings' buffer protocol
    if values.dtype == object:
        raise ctx.fail(
            op,
            f"a non-splat constant of {elem} has no lowering: its elements cannot be "
            "read through the MLIR bindings (a splat, or another element type, can)",
        )
    # Equivalent mutant: reshape(-2); numpy reads any negative size as the one size it
    # infers, so both flatten the array in row-major order.
    flat = values.reshape(-1).tolist()
    raw = [repr(x) for x in flat]
    runs: list[tuple[int, int]] = []  # [start, end) of each run after the first
    start = 0
    for i in range(1, len(raw) + 1):
        if i == len(raw) or raw[i] != raw[start]:
            if start:
                runs.append((start, i))
            start = i
    if len(runs) > MAX_CONSTANT_RUNS:
        raise ctx.fail(
            op,
            f"a non-splat constant lowers as one select per run of equal values; this "
            f"one has {len(runs) + 1} runs (at most {MAX_CONSTANT_RUNS + 1})",
        )
    enc = ctx.convert_encoding(rt.encoding, op, ctx.bits(elem, op))
    index = linear_index(ctx, shape, enc)
    result = ctx.b.create_splat(ty, ctx.scalar_of(flat[0], elem, op))
    index_ty = ctx.tensor(shape, ctx.i32(), enc)
    for lo, hi in runs:
        lo_t = ctx.b.create_splat(index_ty, ctx.const(lo))
        hi_t = ctx.b.create_splat(index_ty, ctx.const(hi))
        inside = ctx.b.create_and(
            ctx.b.create_icmpSGE(index, lo_t), ctx.b.create_icmpSLT(index, hi_t)
        )
        value = ctx.b.create_splat(ty, ctx.scalar_of(flat[lo], elem, op))
        result = ctx.b.create_select(inside, value, result)
    return result


# -- scf --


def _carries(ctx: HandOffContext, op: ir.Operation) -> bool:
    counter = ctx.strategy.counter
    return counter is not None and counter.carries(op)


def lower_for(ctx: HandOffContext, op: Any) -> list[Any]:
    op = _operation(op)
    ctx.check_attrs(op, ())
    counter = ctx.strategy.counter
    lb, ub, step, *inits = (ctx.v(o) for o in op.operands)
    carry = _carries(ctx, op)
    if carry:  # the count is the loop's last iteration argument
        inits.append(counter.count)
    for_op = ctx.b.create_for_op(lb, ub, step, list(inits))
    body = for_op.get_body(0)
    iv = for_op.get_induction_var()
    n = len(op.results)
    args = [iv] + [body.arg(i + 1) for i in range(n)]
    if carry:
        counter.count = body.arg(n + 1)
        ctx.lower_into(ctx.region_block(op.regions[0], op), body, args)
        counter.count = for_op.get_result(n)
        return [for_op.get_result(i) for i in range(n)]
    per_iter = None if counter is None else counter.per_iteration(op)
    if per_iter is None:
        ctx.lower_into(ctx.region_block(op.regions[0], op), body, args)
        return [for_op.get_result(i) for i in range(n)]
    # Counted copies: the count at an iteration's start is the count before the
    # loop plus the iterations run times the copies of one (tma_plan.py).
    b = ctx.b
    before = counter.count
    saved = b.get_insertion_point()
    b.set_insertion_point_to_start(body)
    done = b.create_sdiv(b.create_sub(iv, lb), step)
    counter.count = b.create_add(before, b.create_mul(done, ctx.const(per_iter)))
    old = ctx.region_block(op.regions[0], op)
    # Equivalent mutant: strict=False; the body has the induction variable and one
    # argument per result (scf.for's verifier), as ``args`` has.
    for a, new in zip(old.arguments, args, strict=True):
        ctx.values[a] = new
    ctx.lower_block(old)
    b.restore_insertion_point(saved)
    trips = b.create_sdiv(
        b.create_add(b.create_sub(ub, lb), b.create_sub(step, ctx.const(1))),
        step,
    )
    trips = b.create_maxsi(trips, ctx.const(0))
    counter.count = b.create_add(before, b.create_mul(trips, ctx.const(per_iter)))
    return [for_op.get_result(i) for i in range(n)]


def lower_if(ctx: HandOffContext, op: Any) -> list[Any]:
    op = _operation(op)
    ctx.check_attrs(op, ())
    counter = ctx.strategy.counter
    types = [ctx.must_type(r.type, op) for r in op.results]
    has_else = len(list(op.regions[1].blocks)) > 0
    carry = _carries(ctx, op)
    if carry:  # the count is the last result; an else yields it unchanged
        types.append(ctx.i32())
    if_op = ctx.b.create_if_op(types, ctx.v(op.operands[0]), has_else or carry)
    before = None if counter is None else counter.count
    ctx.lower_into(ctx.region_block(op.regions[0], op), if_op.get_then_block(), [])
    if has_else:
        if counter is not None:
            counter.count = before
        ctx.lower_into(ctx.region_block(op.regions[1], op), if_op.get_else_block(), [])
    elif carry:
        saved = ctx.b.get_insertion_point()
        ctx.b.set_insertion_point_to_start(if_op.get_else_block())
        ctx.b.create_yield_op([before])
        ctx.b.restore_insertion_point(saved)
    n = len(op.results)
    if carry:
        counter.count = if_op.get_result(n)
    return [if_op.get_result(i) for i in range(n)]


def lower_while(ctx: HandOffContext, op: Any) -> list[Any]:
    op = _operation(op)
    ctx.check_attrs(op, ())
    counter = ctx.strategy.counter
    inits = [ctx.v(o) for o in op.operands]
    before_old = ctx.region_block(op.regions[0], op)
    after_old = ctx.region_block(op.regions[1], op)
    before_types = [ctx.must_type(a.type, op) for a in before_old.arguments]
    after_types = [ctx.must_type(a.type, op) for a in after_old.arguments]
    result_types = [ctx.must_type(r.type, op) for r in op.results]
    carry = _carries(ctx, op)
    if carry:  # the count is the last argument of both regions and the last result
        inits.append(counter.count)
        for types in (before_types, after_types, result_types):
            types.append(ctx.i32())
    nb, na = len(before_old.arguments), len(after_old.arguments)
    while_op = ctx.b.create_while_op(result_types, inits)
    # Creating a block moves the builder into it: come back after the loop.
    saved = ctx.b.get_insertion_point()
    before = ctx.b.create_block_with_parent(while_op.get_before(), before_types)
    if carry:
        counter.count = before.arg(nb)
    ctx.lower_into(before_old, before, [before.arg(i) for i in range(nb)])
    after = ctx.b.create_block_with_parent(while_op.get_after(), after_types)
    if carry:
        counter.count = after.arg(na)
    ctx.lower_into(after_old, after, [after.arg(i) for i in range(na)])
    ctx.b.restore_insertion_point(saved)
    if carry:
        counter.count = while_op.get_result(len(op.results))
    return [while_op.get_result(i) for i in range(len(op.results))]


def lower_yield(ctx: HandOffContext, op: Any) -> None:
    op = _operation(op)
    args = [ctx.v(o) for o in op.operands]
    if _carries(ctx, op.parent):
        args.append(ctx.strategy.counter.count)
    block = ctx.b.get_insertion_block()
    if not args and block.has_terminator():
        return  # the builder already ended the block with an empty yield
    ctx.b.create_yield_op(args)


def lower_condition(ctx: HandOffContext, op: Any) -> None:
    op = _operation(op)
    cond, *args = (ctx.v(o) for o in op.operands)
    if _carries(ctx, op.parent):
        args.append(ctx.strategy.counter.count)
    ctx.b.create_condition_op(cond, list(args))


# -- func and the tile ops of the program --


def lower_return(ctx: HandOffContext, op: Any) -> None:
    ctx.strategy.before_return(ctx, op)
    ctx.b.ret([ctx.v(o) for o in op.operation.operands])


def lower_call(ctx: HandOffContext, op: Any) -> list[Any]:
    o = op.operation
    callee = ir.FlatSymbolRefAttr(o.attributes["callee"]).value
    if callee not in ctx.functions:
        raise ctx.fail(op, f"call to '{callee}', which is not a function of this module")
    call = ctx.b.call(ctx.functions[callee], [ctx.v(x) for x in o.operands])
    return [call.get_result(i) for i in range(len(o.results))]


def lower_program_id(ctx: HandOffContext, op: Any) -> Any:
    return ctx.b.create_get_program_id(ir.IntegerAttr(op.operation.attributes["axis"]).value)


def lower_warp_id(ctx: HandOffContext, op: Any) -> None:
    raise ctx.fail(
        op,
        "'tile.warp_id' has no TritonGPU equivalent; it is only lowered as part of "
        f"a warp predicate on a copy marked {WARP_PREDICATED}",
    )


HANDLERS: dict[str, Handler] = {
    **dict.fromkeys(_ELEMENTWISE, lower_elementwise),
    **dict.fromkeys(_CASTS, lower_cast),
    "arith.constant": lower_constant,
    "arith.cmpi": lower_cmpi,
    "arith.cmpf": lower_cmpf,
    "scf.for": lower_for,
    "scf.if": lower_if,
    "scf.while": lower_while,
    "scf.yield": lower_yield,
    "scf.condition": lower_condition,
    "func.return": lower_return,
    "func.call": lower_call,
    ProgramIdOp.OPERATION_NAME: lower_program_id,
    WarpIdOp.OPERATION_NAME: lower_warp_id,
}

__all__ = ["HANDLERS", "MAX_CONSTANT_RUNS"]
