"""cuda:90's TMA: descriptors, barrier-counted copies, tracked copies and stores.

Under ``lds-copies=tma`` (or ``auto`` with the facts TMA needs) every copy becomes
``ttng.async_tma_copy_global_to_local`` of the block at its origin: a function's copies
share a ring of single-arrival barriers, copy ``g`` expects its bytes on barrier
``g % R``, and ``tile.async_tdm_wait {num}`` waits, with phase parity ``(g / R) % 2``, for
the copies it completes (:mod:`gemm_opt.lowering.tma_plan` has the argument and sizes
``R``); the count ``g`` is threaded through ``scf`` ops as :class:`TmaCounter`. A
barrier-tracked copy is a TMA copy completing its bytes on its own barrier, a TDM store a
TMA store. A ``tile.make_tensor_descriptor`` made once from the function's arguments
becomes a host descriptor (:mod:`gemm_opt.lowering.host_tensormaps`); any other
``tt.make_tensor_descriptor``.
"""

from __future__ import annotations

from typing import Any

import numpy

from gemm_opt.core.ext_compat import ir
from gemm_opt.dialect.tile import MakeTensorDescriptorOp
from gemm_opt.lowering.barrier_plan import COPY, STORE, walk_blocks
from gemm_opt.lowering.context import CopyCounter, Desc, HandOffContext
from gemm_opt.lowering.host_tensormaps import HostTensorMap, host_tensormap
from gemm_opt.lowering.ir_match import const_int
from gemm_opt.lowering.tma_plan import FunctionPlan, TmaPlan, TmaRefusal, plan_tma
from gemm_opt.passes.common import descriptor_root


class TmaCounter(CopyCounter):
    """The number of TMA copies a function has issued, at the op being lowered."""

    def __init__(self) -> None:
        self.fn: FunctionPlan | None = None
        self.count: Any = None

    def carries(self, op: ir.Operation) -> bool:
        return self.fn is not None and op in self.fn.carried

    def per_iteration(self, op: ir.Operation) -> int | None:
        return None if self.fn is None else self.fn.loops.get(op)


class TmaCopies:
    """The TMA state of one hand-off: the plan, the descriptors, the function's ring."""

    def __init__(self) -> None:
        #: The barrier plan of counted TMA copies (None: copies are not TMA).
        self.plan: TmaPlan | None = None
        #: Descriptors that tracked copies or TDM stores use (they get TMA descriptors).
        self.descs: set[ir.Value] = set()
        #: Host-encoded descriptors: their ``tile.make_tensor_descriptor`` -> argument.
        self.host: dict[ir.Operation, Any] = {}
        self.counter = TmaCounter()
        #: The function's ring of barriers (Triton value).
        self.bars: Any = None

    # -- before lowering --

    def prescan_tracked(self, ctx: HandOffContext, nvmma: set[str]) -> None:
        """A barrier-tracked copy is a TMA copy and a TDM store a TMA store: the
        buffers they write or read take NVMMA shared layouts (``nvmma``), and their
        descriptors get TMA descriptors."""
        for block in walk_blocks(ctx.module):
            for op in block.operations:
                op = op.operation
                if op.name == STORE or (op.name == COPY and op.opview.barrier is not None):
                    if len(op.opview.desc.type.shape) == 2:  # the rank TMA takes here
                        nvmma.add(str(op.opview.desc.type.layout_attr))
                    self.descs.add(descriptor_root(op.opview.desc)[0])

    def choose(self, ctx: HandOffContext, nvmma: set[str], required: bool) -> None:
        """``required`` (``lds-copies=tma``): every copy becomes a TMA copy, or the
        first that cannot is an error (nothing falls back silently). Else TMA copies
        when every copy can take them, and none otherwise."""
        try:
            plan = plan_tma(ctx.module)
            for copy in plan.copies:
                self.refusal(ctx, copy.opview, nvmma)
        except TmaRefusal as e:
            if not required:
                return
            raise ctx.fail(e.op, f"lds-copies=tma: {e}") from None
        if required or plan.copies:
            self.plan = plan

    def refusal(self, ctx: HandOffContext, op: Any, nvmma: set[str]) -> None:
        """Raise :class:`TmaRefusal` where ``op`` cannot be a TMA copy."""
        desc = op.desc.type
        root, updates = descriptor_root(op.desc)
        if any(len(u.opview.bounds) for u in updates):
            raise TmaRefusal(
                op.operation, "a descriptor with bounds has no TMA form (TMA bounds by shape)"
            )
        owner = root.owner
        # Equivalent mutant: or->and. On cuda:90 a descriptor through block arguments or
        # region results is refused before the hand-off and only make/update ops make one,
        # so the root's owner is always a tile.make_tensor_descriptor: both sides are False.
        if not isinstance(owner, ir.OpView | ir.Operation) or (
            owner.operation.name != MakeTensorDescriptorOp.OPERATION_NAME
        ):
            raise TmaRefusal(op.operation, ctx.untracked())
        if const_int(owner.opview.strides[-1]) != 1:
            raise TmaRefusal(op.operation, "TMA needs a unit innermost stride (the constant 1)")
        if len(desc.shape) != 2:
            rank = len(desc.shape)
            raise TmaRefusal(op.operation, f"TMA copies here are rank 2, got rank {rank}")
        if str(desc.layout_attr) not in nvmma:
            raise TmaRefusal(
                op.operation,
                "TMA writes NVMMA shared layouts, which this lowering gives only to buffers "
                "that wgmma reads",
            )
        inner = int(desc.shape[-1]) * ctx.bits(desc.element_type, op) // 8
        if inner < 16:
            raise TmaRefusal(op.operation, f"a TMA block row needs 16 bytes or more, got {inner}")

    # -- descriptors --

    def makes_tma(self, op: Any) -> bool:
        """Whether ``tile.make_tensor_descriptor`` ``op`` gets a TMA descriptor."""
        return self.plan is not None or op.result in self.descs

    def host_descriptors(self, fn: ir.Operation) -> list[tuple[Any, HostTensorMap]]:
        """The TMA descriptors of ``fn`` the host encodes, in order."""
        blocks = list(fn.regions[0].blocks)
        if len(blocks) != 1:
            return []
        out = []
        for op in blocks[0].operations:
            if op.operation.name != MakeTensorDescriptorOp.OPERATION_NAME or not self.makes_tma(op):
                continue
            hosted = host_tensormap(op, blocks[0])
            if hosted is not None:
                out.append((op, hosted))
        return out

    def desc_type(self, ctx: HandOffContext, op: Any, shared: Any) -> Any:
        """The ``!tt.tensordesc`` type of the TMA descriptor of ``op`` (``shared``:
        the Gluon shared layout of its blocks)."""
        if self.plan is not None:
            return ctx.must_type(op.result.type, op)
        t = op.result.type
        return ctx.descriptor_type(t.element_type, list(t.shape), ctx.layout(shared), op)

    def descriptor(self, ctx: HandOffContext, op: Any, info: Desc, shared: Any) -> Any:
        """The TMA descriptor of ``op``: the host's parameter, or made on the device."""
        hosted = self.host.get(op.operation)
        if hosted is not None:
            return hosted
        return ctx.b.create_make_tensor_descriptor(
            self.desc_type(ctx, op, shared),
            info.base,
            info.shape,
            info.strides,
            ctx.tt.ir.PADDING_OPTION.PAD_ZERO,
        )

    def remade(self, ctx: HandOffContext, op: Any) -> None:
        """Made again in a loop: its tensormap is rewritten in place, so no copy of the
        previous value may be in flight (tma_plan.py)."""
        fn = self.counter.fn
        if fn is not None and op.operation in fn.remakes:
            self.wait_copies(ctx, fn.remakes[op.operation], 0)

    # -- functions, counted copies and waits --

    def begin_function(self, ctx: HandOffContext, fn: ir.Operation, new: Any) -> None:
        name = ir.StringAttr(fn.attributes["sym_name"]).value
        for desc_op, index in ctx.host_desc_args.get(name, []):
            self.host[desc_op] = new.args(index)
        self.counter.fn = None if self.plan is None else self.plan.functions.get(fn)
        if self.counter.fn is not None:
            self.init_barriers(ctx, self.counter.fn.ring)

    def barrier(self, ctx: HandOffContext, index: Any) -> Any:
        return ctx.b.create_memdesc_index(ctx.barrier_type([1]), self.bars, index)

    def init_barriers(self, ctx: HandOffContext, ring: int) -> None:
        """The function's ring of single-arrival barriers, initialised and fenced
        (the async proxy, TMA, must see the initialisation)."""
        self.bars = ctx.b.create_local_alloc(ctx.barrier_type([ring, 1]))
        for i in range(ring):
            ctx.b.create_mbarrier_init(self.barrier(ctx, ctx.const(i)), 1)
        ctx.b.create_fence_async_shared(False)
        self.counter.count = ctx.const(0)

    def copy(self, ctx: HandOffContext, op: Any, pred: ir.Value | None) -> None:
        """Copy number ``g``: expect its bytes on barrier ``g % R`` and issue the
        TMA copy there; a predicated-off copy arrives without bytes."""
        info = ctx.descs.get(op.desc)
        # Equivalent mutant: or->and. choose() refused every copy whose descriptor root is
        # not a make op of this function, and with a plan every make op gets a TMA
        # descriptor (makes_tma), lowered before its copies: info and info.tma are set.
        if info is None or info.tma is None:
            raise ctx.fail(op, ctx.untracked())
        fn = self.counter.fn
        assert fn is not None
        shape = list(op.desc.type.shape)
        nbytes = int(numpy.prod(shape)) * ctx.bits(op.desc.type.element_type, op) // 8
        cond = ctx.and_all(
            [p for p in (info.pred, None if pred is None else ctx.v(pred)) if p is not None]
        )
        true = ctx.true()
        g = self.counter.count
        bar = self.barrier(ctx, ctx.b.create_srem(g, ctx.const(fn.ring)))
        ctx.b.create_mbarrier_expect(bar, nbytes, true if cond is None else cond)
        coords = info.origin or [ctx.const(0)] * len(shape)
        on = true if cond is None else cond
        ctx.b.create_async_tma_copy_global_to_local(
            info.tma,
            list(coords),
            bar,
            ctx.v(op.dest),
            on,
            # Equivalent mutant: False->True. The flag is multicast, which needs a CTA
            # cluster; these kernels have one CTA and Triton's TTGIR is the same either way.
            False,
            None,
        )
        if cond is not None:
            ctx.b.create_mbarrier_arrive(bar, 1, ctx.b.create_xor(cond, true))
        self.counter.count = ctx.b.create_add(g, ctx.const(1))

    def wait_copies(self, ctx: HandOffContext, window: int, num: int) -> None:
        """Wait for copies ``issued - window .. issued - num - 1`` (those >= 0):
        barrier ``g % R``, phase parity ``(g // R) % 2``."""
        fn = self.counter.fn
        assert fn is not None
        ring = ctx.const(fn.ring)
        for j in range(num, window):
            g = ctx.b.create_sub(self.counter.count, ctx.const(j + 1))
            issued = ctx.b.create_icmpSGE(g, ctx.const(0))
            g = ctx.b.create_maxsi(g, ctx.const(0))
            phase = ctx.b.create_and(ctx.b.create_sdiv(g, ring), ctx.const(1))
            bar = self.barrier(ctx, ctx.b.create_srem(g, ring))
            ctx.b.create_mbarrier_wait(bar, phase, issued, [])

    def wait(self, ctx: HandOffContext, op: Any, num: int) -> bool:
        """A counted wait (False: the function's copies are not TMA copies)."""
        fn = self.counter.fn
        if fn is None:
            return False
        self.wait_copies(ctx, fn.windows[op.operation], num)
        return True

    def before_return(self, ctx: HandOffContext, op: Any) -> None:
        """No TMA copy may outlive its barriers."""
        fn = self.counter.fn
        if fn is not None:
            # Equivalent mutant: 0->1 (the default). tma_plan records a window for every
            # func.return of a planned function, so the default is never read.
            self.wait_copies(ctx, fn.windows.get(op.operation, 0), 0)

    # -- tracked copies and stores --

    def _info(self, ctx: HandOffContext, op: Any, what: str, nvmma: set[str]) -> Desc:
        """The descriptor of a TMA copy or store (refused where TMA cannot take it)."""
        try:
            self.refusal(ctx, op, nvmma)
        except TmaRefusal as e:
            raise ctx.fail(op, f"{what} on cuda:90: {e}") from None
        info = ctx.descs.get(op.desc)
        # Equivalent mutant: or->and. refusal() passed, so the root is a make op of this
        # function, which prescan_tracked put in self.descs (makes_tma): info.tma is set.
        if info is None or info.tma is None:
            raise ctx.fail(op, ctx.untracked())
        return info

    def tracked_copy(self, ctx: HandOffContext, op: Any, nvmma: set[str]) -> None:
        info = self._info(ctx, op, "a barrier-tracked copy is a TMA copy", nvmma)
        user = ctx.user_pred(op)
        pred = ctx.and_all(
            [p for p in (info.pred, None if user is None else ctx.v(user)) if p is not None]
        )
        coords = info.origin or [ctx.const(0)] * len(op.desc.type.shape)
        ctx.b.create_async_tma_copy_global_to_local(
            info.tma,
            list(coords),
            ctx.v(op.barrier),
            ctx.v(op.dest),
            ctx.true() if pred is None else pred,
            # Equivalent mutant: False->True. Multicast, as in copy(): no cluster, same TTGIR.
            False,
            None,
        )

    def store(self, ctx: HandOffContext, op: Any, nvmma: set[str]) -> None:
        info = self._info(ctx, op, "a TDM store is a TMA store", nvmma)
        if info.pred is not None:
            raise ctx.fail(op, "a TMA store takes no pred on its descriptor")
        if "cache" in op.operation.attributes:
            raise ctx.fail(op, "a TMA store takes no cache modifier here")
        coords = info.origin or [ctx.const(0)] * len(op.desc.type.shape)
        ctx.b.create_fence_async_shared(False)
        ctx.b.create_async_tma_copy_local_to_global(info.tma, list(coords), ctx.v(op.src))


__all__ = ["TmaCopies", "TmaCounter"]
