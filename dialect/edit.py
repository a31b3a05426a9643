"""Edits of a tile module through the bindings, for tools, benchmarks and tests.

The ISA report, the compile-time benchmark and the tests derive variants of
one kernel: without its warp hints, in another element type, with facts on
its arguments. Each edit here changes the ``ir.Module`` in place, op by op and
type by type, and verifies the result, so a variant is either valid IR or an
error that says why; no variant is made by rewriting the printed text.

* :func:`drop_warp_hints`: every single TDM copy loses its ``warp_used_hint``
  (all warps copy);
* :func:`retype_elements`: one element type becomes another everywhere it
  appears (``f16`` -> ``bf16``: pointers, descriptors, buffers, tensors,
  constants, function signatures);
* :func:`set_argument_attr` / :func:`annotate_arguments`: an attribute on
  function arguments (``tile.divisibility = 16 : i32``), as ``func.func``
  keeps it in ``arg_attrs``;
* :func:`set_warp_hints`, :func:`set_wait_counts`: a copy's hint, a wait's
  count; :func:`set_num_warps`: the module's warp count;
  :func:`predicate_copy`: a pred operand on a copy;
* :func:`set_constant`: the value of an ``arith.constant``;
  :func:`with_fields`: a tile layout attribute with some fields changed,
  :func:`substitute_attr`: one attribute replaced everywhere (types included);
* :func:`replace_op`, :func:`erase_ops`: an op swapped for another kind
  (same results) or removed;
* :func:`map_types`: every type and attribute rebuilt bottom-up through
  given leaf functions (what the retyping and the substitution use; the ISA
  report's K-block change too).

Edits that test invalid input may leave a module the verifier refuses: those
take ``verify=False`` and the module is printed with :func:`unverified_text`.

:func:`edited` applies edits to module text: it parses the text in a fresh
context, runs the edits and prints the module with its locations, so
diagnostics on the variant still point at the lines of the original text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gemm_opt.core.contract import NUM_WARPS, WARP_PREDICATED, WARP_USED_HINT
from gemm_opt.core.diagnostics import collect
from gemm_opt.core.ext_compat import MLIRError, arith, cast, func, ir
from gemm_opt.dialect import make_context
from gemm_opt.dialect.tile import AsyncTDMCopyGlobalToLocalOp, AsyncTDMFusedCopyGlobalToLocalOp


class EditError(ValueError):
    """Text that does not parse, or an edit that would not give valid IR.

    ``line``/``col`` locate the problem in the edited text (0: no position).
    """

    def __init__(self, message: str, line: int = 0, col: int = 0) -> None:
        super().__init__(f"{line}:{col}: {message}" if line else message)
        self.message = message
        self.line = line
        self.col = col


def _walk(module: ir.Module) -> list[ir.Operation]:
    """Every op under ``module`` (pre-order), the module op first."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        found.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def _verify(module: ir.Module, what: str) -> None:
    try:
        module.operation.verify()
    except MLIRError as e:
        raise EditError(f"{what} gives invalid IR: {e}") from None


def functions(module: ir.Module) -> list[func.FuncOp]:
    """The module's top-level ``func.func`` ops, in order."""
    views = [op.operation.opview for op in module.body.operations]
    return [v for v in views if isinstance(v, func.FuncOp)]


def warp_hints(module: ir.Module) -> list[int]:
    """The ``warp_used_hint`` of every hinted single copy, in program order."""
    name = AsyncTDMCopyGlobalToLocalOp.OPERATION_NAME
    return [
        ir.IntegerAttr(op.attributes[WARP_USED_HINT]).value & 0xFFFFFFFF
        for op in _walk(module)
        if op.name == name and WARP_USED_HINT in op.attributes
    ]


def drop_warp_hints(module: ir.Module) -> int:
    """Remove ``warp_used_hint`` from every single TDM copy; the number removed.

    An unhinted copy is issued by all warps and writes the same data. A fused
    copy has no unhinted form, so a module with one is an :class:`EditError`,
    as is one whose copies carry facts derived from their hints (a
    ``tile.warp_layout`` the verifier no longer accepts).
    """
    fused = AsyncTDMFusedCopyGlobalToLocalOp.OPERATION_NAME
    single = AsyncTDMCopyGlobalToLocalOp.OPERATION_NAME
    ops = _walk(module)
    if any(op.name == fused for op in ops):
        raise EditError(f"cannot drop the warp hints of '{fused}': its members need them")
    dropped = 0
    for op in ops:
        if op.name == single and WARP_USED_HINT in op.attributes:
            del op.attributes[WARP_USED_HINT]
            dropped += 1
    _verify(module, "dropping the warp hints")
    return dropped


def _same(x: Any) -> Any:
    return x


class _Mapper:
    """Rebuilds types and attributes bottom-up: children first (a tensor's
    element type and encoding, a function type's inputs and results, a tile
    type's parameters, the items of arrays, a dense constant's type and
    splat), then ``leaf_type`` / ``leaf_attr`` on the rebuilt value."""

    def __init__(
        self,
        leaf_type: Callable[[ir.Type], ir.Type] = _same,
        leaf_attr: Callable[[ir.Attribute], ir.Attribute] = _same,
    ) -> None:
        self.leaf_type = leaf_type
        self.leaf_attr = leaf_attr

    def type(self, t: ir.Type) -> ir.Type:
        tensor = cast(t, ir.RankedTensorType)
        fn = cast(t, ir.FunctionType)
        params = getattr(t, "params", None)  # a tile type: rebuilt from its parameters
        if tensor is not None:
            elem = self.type(tensor.element_type)
            enc = tensor.encoding
            enc = enc if enc is None else self.attr(enc)
            if elem != tensor.element_type or enc != tensor.encoding:
                loc = ir.Location.unknown(t.context)  # for the verifier's message, if any
                t = ir.RankedTensorType.get(list(tensor.shape), elem, enc, loc=loc)
        elif fn is not None:
            t = ir.FunctionType.get(
                [self.type(x) for x in fn.inputs], [self.type(x) for x in fn.results]
            )
        elif params is not None:
            mapped = [self.attr(p) for p in params]
            # Equivalent mutant: all for any: every tile type (ptr, tensor_desc, shared,
            # mbarrier) has exactly one parameter, and any and all agree on one item.
            # Equivalent mutant: strict=False: mapped is built from params, one item each.
            if any(m != p for m, p in zip(mapped, params, strict=True)):
                t = type(t).get(*mapped)
        return self.leaf_type(t)

    def attr(self, a: ir.Attribute) -> ir.Attribute:
        type_attr = cast(a, ir.TypeAttr)
        dense = cast(a, ir.DenseElementsAttr)
        array = cast(a, ir.ArrayAttr)
        if type_attr is not None:
            mapped = self.type(type_attr.value)
            if mapped != type_attr.value:
                a = ir.TypeAttr.get(mapped)
        elif dense is not None:
            mapped = self.type(dense.type)
            if mapped != dense.type:
                if not dense.is_splat:
                    raise EditError(f"cannot change the type of the non-splat constant {a}")
                a = ir.DenseElementsAttr.get_splat(mapped, self.attr(dense.get_splat_value()))
        elif array is not None:
            items = [self.attr(x) for x in array]
            # Equivalent mutant: strict=False: items is built from array, one item each.
            if any(m != x for m, x in zip(items, array, strict=True)):
                a = ir.ArrayAttr.get(items)
        return self.leaf_attr(a)

    def module(self, module: ir.Module) -> None:
        """Apply to every op attribute, result type and block argument type."""
        for op in _walk(module):
            attrs = op.attributes
            for name in list(attrs):
                mapped = self.attr(attrs[name])
                if mapped != attrs[name]:
                    attrs[name] = mapped
            for result in op.results:
                result.set_type(self.type(result.type))
            for region in op.regions:
                for block in region.blocks:
                    for arg in block.arguments:
                        arg.set_type(self.type(arg.type))


def map_types(
    module: ir.Module,
    leaf_type: Callable[[ir.Type], ir.Type] = _same,
    leaf_attr: Callable[[ir.Attribute], ir.Attribute] = _same,
    *,
    verify: bool = True,
    what: str = "the type change",
) -> None:
    """Rebuild every type and attribute of ``module`` bottom-up, each through
    ``leaf_type`` / ``leaf_attr`` (which return their argument, or its
    replacement): tensor shapes and encodings, the layouts inside tile
    types, function signatures, constants' types."""
    _Mapper(leaf_type, leaf_attr).module(module)
    if verify:
        _verify(module, what)


def substitute_attr(
    module: ir.Module, old: ir.Attribute, new: ir.Attribute, *, verify: bool = True
) -> None:
    """Replace the attribute ``old`` by ``new`` everywhere in ``module``: op
    attributes, tensor encodings, the layouts inside tile types (a layout
    changed through :func:`with_fields`, say)."""
    map_types(
        module, leaf_attr=lambda a: new if a == old else a, verify=verify, what=f"replacing {old}"
    )


def retype_elements(module: ir.Module, old: ir.Type, new: ir.Type, *, verify: bool = True) -> None:
    """Replace the element type ``old`` by ``new`` throughout ``module``.

    Every value (op results, block arguments) and every attribute holding a
    type or a value of ``old`` (function types, ``arith.constant`` values,
    ``dense<...>`` splats) changes; other types are untouched. ``f16`` ->
    ``bf16`` turns the fp16 GEMM into the bf16 one. Values are converted
    exactly as ``FloatAttr`` converts them; a non-splat dense constant of
    ``old`` is an :class:`EditError`.
    """

    def value(a: ir.Attribute) -> ir.Attribute:
        f = cast(a, ir.FloatAttr)
        if f is None or f.type != old:
            return a
        return ir.FloatAttr.get(new, f.value, loc=ir.Location.unknown(a.context))

    map_types(
        module,
        lambda t: new if t == old else t,
        value,
        verify=verify,
        what=f"retyping {old} to {new}",
    )


def set_argument_attr(fn: func.FuncOp, index: int, name: str, value: ir.Attribute) -> None:
    """Set attribute ``name`` of argument ``index`` of ``fn`` (others are kept)."""
    count = len(fn.arguments)
    if not 0 <= index < count:
        raise EditError(f"@{fn.sym_name.value} has {count} arguments, no argument {index}")
    ctx = fn.context
    current = fn.arg_attrs if "arg_attrs" in fn.attributes else None
    dicts = (
        [ir.DictAttr(d) for d in current]
        if current is not None
        else [ir.DictAttr.get({}, context=ctx) for _ in range(count)]
    )
    entries = {n.name: n.attr for n in dicts[index]}
    entries[name] = value
    dicts[index] = ir.DictAttr.get(entries, context=ctx)
    fn.arg_attrs = ir.ArrayAttr.get(list(dicts), context=ctx)


def annotate_arguments(
    module: ir.Module, select: Callable[[ir.Type], bool], name: str, value: ir.Attribute
) -> int:
    """Set ``name = value`` on every argument whose type ``select`` accepts, in
    every function of ``module``; the number of arguments annotated."""
    count = 0
    for fn in functions(module):
        for i, arg in enumerate(fn.arguments):
            if select(arg.type):
                set_argument_attr(fn, i, name, value)
                count += 1
    _verify(module, f"setting {name} on arguments")
    return count


def integer_of_width(*widths: int) -> Callable[[Any], bool]:
    """A type predicate for :func:`annotate_arguments`: signless integers of ``widths``."""

    def select(t: Any) -> bool:
        i = cast(t, ir.IntegerType)
        return i is not None and i.is_signless and i.width in widths

    return select


def has_argument_attr(module: ir.Module, name: str) -> bool:
    """Whether some argument of some function of ``module`` carries ``name``."""
    for fn in functions(module):
        if "arg_attrs" in fn.attributes and any(name in ir.DictAttr(d) for d in fn.arg_attrs):
            return True
    return False


def ops_named(module: ir.Module, name: str) -> list[ir.Operation]:
    """Every op called ``name`` in ``module``, in program order."""
    return [op for op in _walk(module) if op.name == name]


def _i32(value: int, ctx: ir.Context) -> ir.Attribute:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(32, ctx), value)


def _set_int(
    module: ir.Module, op_name: str, attr: str, new: int, old: int | None, verify: bool
) -> int:
    changed = 0
    for op in ops_named(module, op_name):
        if attr not in op.attributes:
            continue
        if old is not None and ir.IntegerAttr(op.attributes[attr]).value & 0xFFFFFFFF != old:
            continue
        op.attributes[attr] = _i32(new, op.context)
        changed += 1
    if verify:
        _verify(module, f"setting {attr} = {new}")
    return changed


def set_warp_hints(
    module: ir.Module, new: int, *, old: int | None = None, verify: bool = True
) -> int:
    """Set ``warp_used_hint = new`` on every hinted single copy (with ``old``:
    only those whose hint is ``old``); the number changed."""
    name = AsyncTDMCopyGlobalToLocalOp.OPERATION_NAME
    return _set_int(module, name, WARP_USED_HINT, new, old, verify)


def set_num_warps(module: ir.Module, num_warps: int, *, verify: bool = True) -> None:
    """Set the module's ``tile.num_warps`` (every hint and layout is checked
    against it, so a changed count may leave invalid IR: ``verify=False``)."""
    module.operation.attributes[NUM_WARPS] = _i32(num_warps, module.context)
    if verify:
        _verify(module, f"setting {NUM_WARPS} = {num_warps}")


def set_warp_hint(copy: ir.Operation, hint: int) -> None:
    """Give one single copy ``warp_used_hint = hint`` (not verified here)."""
    copy.attributes[WARP_USED_HINT] = _i32(hint, copy.context)


def set_wait_counts(
    module: ir.Module, new: int, *, old: int | None = None, verify: bool = True
) -> int:
    """Set ``num = new`` on every ``tile.async_tdm_wait`` (with ``old``: only
    those waiting for ``num = old``); the number changed."""
    return _set_int(module, "tile.async_tdm_wait", "num", new, old, verify)


def erase_ops(
    module: ir.Module, name: str, where: Callable[[ir.Operation], bool] = lambda op: True
) -> int:
    """Erase every op called ``name`` that ``where`` accepts (they must have no
    used results); the number erased. Not verified: removing a wait, say,
    gives a valid module that races."""
    doomed = [op for op in ops_named(module, name) if where(op)]
    for op in doomed:
        if any(len(list(r.uses)) for r in op.results):
            raise EditError(f"cannot erase '{name}': its results are used")
        op.erase()
    return len(doomed)


def replace_op(
    op: ir.Operation,
    name: str,
    operands: list[ir.Value] | None = None,
    attributes: dict[str, ir.Attribute] | None = None,
) -> ir.Operation:
    """Put a ``name`` op with the same result types and location in place of
    ``op`` (uses follow), and erase ``op``; the new op (not verified)."""
    new = ir.Operation.create(
        name,
        results=[r.type for r in op.results],
        operands=operands or [],
        attributes=attributes or {},
        loc=op.location,
        ip=ir.InsertionPoint(op),
    )
    # Equivalent mutant: strict=False: new is created with one result per result of op.
    for old, repl in zip(op.results, new.results, strict=True):
        old.replace_all_uses_with(repl)
    op.erase()
    return new


def predicate_copy(
    copy: ir.Operation, value: bool, *, warp_predicated: bool = False
) -> ir.Operation:
    """Give a single copy the pred operand ``arith.constant value`` (built just
    before it), optionally marked ``tile.warp_predicated``; the new copy."""
    name = AsyncTDMCopyGlobalToLocalOp.OPERATION_NAME
    if copy.name != name or len(copy.operands) != 2:
        raise EditError(f"predicate_copy takes a '{name}' without pred or barrier")
    ctx = copy.context
    with copy.location:
        i1 = ir.IntegerType.get_signless(1, ctx)
        pred = arith.ConstantOp(i1, ir.IntegerAttr.get(i1, int(value)), ip=ir.InsertionPoint(copy))
    attrs = {n: copy.attributes[n] for n in copy.attributes}
    attrs["operandSegmentSizes"] = ir.DenseI32ArrayAttr.get([1, 1, 1, 0], context=ctx)
    if warp_predicated:
        attrs[WARP_PREDICATED] = ir.UnitAttr.get(ctx)
    return replace_op(copy, name, [*copy.operands, pred.result], attrs)


def set_constant(op: ir.Operation, values: Any, element_type: ir.Type | None = None) -> None:
    """Set an ``arith.constant``'s value: a Python scalar (a splat) or a flat
    list, in the element type of its result, or in ``element_type``, which
    the result then takes (its users are not retyped; not verified here)."""
    if op.name != "arith.constant":
        raise EditError(f"set_constant takes an 'arith.constant', not '{op.name}'")
    result = op.results[0].type
    shaped = cast(result, ir.RankedTensorType)
    if element_type is not None:
        if shaped is None:
            result = element_type
        else:
            shaped = ir.RankedTensorType.get(
                list(shaped.shape), element_type, shaped.encoding, loc=op.location
            )
            result = shaped
        op.results[0].set_type(result)
    elem = shaped.element_type if shaped is not None else result

    def scalar(v: Any) -> ir.Attribute:
        if cast(elem, ir.IntegerType) is not None or cast(elem, ir.IndexType) is not None:
            return ir.IntegerAttr.get(elem, int(v))
        return ir.FloatAttr.get(elem, float(v), loc=ir.Location.unknown(op.context))

    if shaped is None:
        op.attributes["value"] = scalar(values)
    elif isinstance(values, (list, tuple)):
        op.attributes["value"] = ir.DenseElementsAttr.get([scalar(v) for v in values], shaped)
    else:
        op.attributes["value"] = ir.DenseElementsAttr.get_splat(shaped, scalar(values))


def with_fields(attr: ir.Attribute, **fields: Any) -> ir.Attribute:
    """A tile layout attribute (``#tile.tdm_warp_layout``, ``#tile.dot_operand``,
    ...) with ``fields`` changed, the others kept. Built unchecked: the
    result may break the layout's rules, for tests of their diagnostics."""
    view = attr.maybe_downcast() if hasattr(attr, "maybe_downcast") else attr
    if not hasattr(view, "field_values"):
        raise EditError(f"{attr} is not a tile layout attribute")
    return type(view).build(**{**view.field_values(), **fields})


def unverified_text(module: ir.Module, locations: bool = True) -> str:
    """Print ``module`` without verifying it (for invalid inputs made on purpose)."""
    return module.operation.get_asm(enable_debug_info=locations, assume_verified=True)


def edited(
    text: str,
    *edits: Callable[[ir.Module], object],
    locations: bool = True,
    verify: bool = True,
) -> str:
    """``text`` parsed, changed by each of ``edits`` in turn, and printed again.

    With ``locations`` the result keeps the original locations
    (``loc("-":line:col)``), so a diagnostic on the variant names the line of
    ``text`` it came from; without, it is the plain pretty form. Text that
    does not parse is an :class:`EditError` at the first error. ``verify``
    ``False`` prints the result as it is, valid or not (invalid inputs made
    on purpose, for the verifier's tests).
    """
    ctx = make_context()
    with ctx, collect(ctx) as diags:
        try:
            module = ir.Module.parse(text)
        except MLIRError:
            first = next((d for d in diags if d.severity == "error"), None)
            if first is None:
                raise EditError("the module does not parse") from None
            raise EditError(first.message, first.line, first.col) from None
        for edit in edits:
            edit(module)
        if not verify:
            return unverified_text(module, locations)
        _verify(module, "the edits")
        return module.operation.get_asm(enable_debug_info=locations)


def without_hints(text: str) -> str:
    """``text`` with every single copy's ``warp_used_hint`` dropped."""
    return edited(text, drop_warp_hints)


__all__ = [
    "EditError",
    "annotate_arguments",
    "drop_warp_hints",
    "edited",
    "erase_ops",
    "functions",
    "has_argument_attr",
    "integer_of_width",
    "map_types",
    "ops_named",
    "predicate_copy",
    "replace_op",
    "retype_elements",
    "set_argument_attr",
    "set_constant",
    "set_num_warps",
    "set_wait_counts",
    "set_warp_hint",
    "set_warp_hints",
    "substitute_attr",
    "unverified_text",
    "warp_hints",
    "with_fields",
    "without_hints",
]
