"""``tile-lower-gemm-schedule``: lower ``tile.gemm_schedule`` to loops, atomics and stores.

The body region (one output tile's fp32 partial over a K range) is inlined
exactly once, inside the loop the schedule needs; one call site keeps code
size flat and avoids the duplicated-body miscompiles seen upstream. All
index arithmetic is i32 ``arith``; the tile order is the GROUP_M swizzle
(``group_m`` tile-rows per band, column-major inside a band); the workspace
offsets come from :func:`gemm_opt.core.schedules.partition.workspace_layout`.
"""

from contextlib import nullcontext
from dataclasses import dataclass
from typing import ClassVar

from gemm_opt.core.ext_compat import arith, ir, scf
from gemm_opt.core.modes import CLayout, Grouped, Reduction, TileLoop
from gemm_opt.core.pass_base import TilePass
from gemm_opt.core.schedules.partition import workspace_layout
from gemm_opt.dialect.schedule import GemmScheduleOp, group_m_limit
from gemm_opt.dialect.tile import MakeTensorDescriptorOp, VerifyError
from gemm_opt.passes.common import collect_ops
from gemm_opt.passes.schedule_epilogue import Epilogue
from gemm_opt.passes.schedule_ir import Emitter, Value, hoist


@dataclass(frozen=True)
class LowerGemmSchedulePass(TilePass):
    """Lower tile.gemm_schedule to scf loops, arith, tile atomics and block stores.

    Host contract (every kind): C is written only through the stores and
    atomics below; the host zeroes ``sync`` (counters and flags) on the
    launch stream before every launch, and C as well for stream-K with
    atomic reduction; a workspace is never shared by launches that may
    overlap. Grid: ``tiles`` programs for data-parallel
    (``cdiv(M, BM) * cdiv(N, BN)``), any ``P >= 1`` for the others (one per
    compute unit); stream-K linear/tree programs wait only on lower-numbered
    programs, so they finish under in-order dispatch whatever P is.

    Kinds (``t`` a tile id, swizzled to ``(pid_m, pid_n)`` by GROUP_M):

    * data-parallel: ``t = program_id``; ``if t < tiles``: body, store.
    * persistent: ``scf.for t = pid to tiles step num_programs``: body, store.
    * work-stealing: chiplet ``x = pid % X`` with ``X = min(num_xcds, P)``
      (so every chiplet's tiles have claimants); chiplet x owns tiles
      ``[x*cdiv(T, X), ...)``; ``raw = atomic_rmw add 1 relaxed`` on
      ``sync[counter_offset + x*COUNTER_STRIDE]``; ``scf.while raw < bound``:
      body, then the next claim, then the store; the loop stops at the first
      claim past the chiplet's tiles. cuda:90's Triton hands a scalar
      atomic's result to every thread through shared memory behind a CTA
      barrier where it is issued, so the program waits out the claim's round
      trip there; the claim stays outside the body, where it is no slower
      than inside it before the K loop (``docs/schedule-tuning-history.md``).
    * stream-k: the partition of :func:`gemm_opt.core.schedules.partition.stream_k_partition`
      computed on the device; one ``scf.for`` over the program's work units
      in the order of :meth:`~gemm_opt.core.schedules.partition.StreamKPartition.segments`:
      its whole tiles ``pid, pid + P, ...`` below ``dp_tiles``, then one unit
      per tile its iteration range ``[pid*q + min(pid, r), +q + (pid < r))``
      touches, *last tile first*. A unit covering its whole tile is stored.
      Otherwise: atomic: ``tile.atomic_add_block`` of the partial in C's
      type into C; linear: the tile's last contributor (whose range ends the
      tile) is its owner: the others store their fp32 partial in
      ``partials[pid]`` and count themselves into the owner's flag
      (``flag[owner]``, add 1 release); the owner waits once for the count
      to reach ``pid - first`` (add 0 acquire: it joins every release of
      the count), then adds the partials of ``pid-1, pid-2, ..., first`` in
      that order with no wait between two loads, then stores; tree:
      contributors counted from the last, ``j = last - pid``; for stride 1,
      2, 4, ...: if ``j`` is a multiple of ``2*stride`` it waits for and adds
      ``pid - stride``'s partial (if that program contributes), else it
      publishes its sum and leaves; ``j = 0`` stores. Both reductions add in
      a fixed order: bitwise deterministic for a given P. Why last tile
      first: a program's published segment is the one in its last tile, and
      the one it owns (and waits in) is in its first; visited first to last,
      program ``p`` would publish only after its own wait on ``p - 1``, which
      publishes after its wait on ``p - 2``, ...: one chain through every
      split tile, the waits serialized (512x512x8192 in 64x64 tiles over
      264 programs: a critical path of 496 K iterations where each program
      computes 31 or 32). Visited last to first, a program publishes its
      last tile's partial before it reaches the tile it owns: a linear
      non-owner never waits, a tree's waits are on the same tile's
      contributors, which also visit it first, so every wait ends within
      its tile's own work (:meth:`StreamKPartition.critical_path`).
    * split-k: ``S`` programs per tile (the ``split_k`` attribute, else
      ``num_programs / tiles``), program ``pid`` slice ``pid / tiles`` of
      tile ``pid % tiles``, K iterations split as
      :class:`~gemm_opt.core.schedules.partition.SplitKPartition` says; each
      stores its fp32 partial in ``partials[pid]`` and adds 1 to its tile's
      counter ``flag[t]`` (acq_rel); the one that reads ``S - 1`` arrived
      last: it adds slices ``0, 1, ..., S-1`` in that order (its own from
      registers, the others loaded), stores C and resets ``flag[t]`` to 0.
      The order is the slices', not the arrivals': bitwise reproducible for
      every grid and interleaving, and no program ever waits.

    Before:

    ```mlir
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc) ({
    ^bb0(%g: i32, %m_off: i32, %m_end: i32, %n_off: i32, %k_off: i32, %k_end: i32):
      %acc = ... : tensor<64x64xf32, #acc>
      "tile.schedule_yield"(%acc) : (tensor<64x64xf32, #acc>) -> ()
    }) {kind = "persistent", block_m = 64 : i32, ...} : (i32, i32, i32, !tile.ptr<f16>, i64) -> ()
    ```

    After (persistent):

    ```mlir
    %pid = "tile.program_id"() {axis = 0 : i32} : () -> i32
    %np = "tile.num_programs"() {axis = 0 : i32} : () -> i32
    scf.for %t = %pid to %tiles step %np : i32 {
      ... GROUP_M swizzle of %t to %m_off, %n_off ...
      %acc = ... (the body, inlined)
      %o = arith.truncf %acc : tensor<64x64xf32, #acc> to tensor<64x64xf16, #acc>
      "tile.store_block"(%c, %M, %N, %ldc, %one, %m_off, %n_off, %o) ...
    }
    ```

    Grouped (kind persistent): ``grouped = "m"``: the tiles of all groups
    over one strided loop; the total and each tile's group come from scans of
    ``group_lens`` (``tile.load_scalar``, O(G) per tile, no host sync); group
    g's tiles cover rows ``[start_g, start_g + len_g)`` with the GROUP_M
    order inside the group; empty groups own no tile and shift nothing (the
    body indexes B by the group id). ``grouped = "k"`` (wgrad): ``G`` grids
    of ``M x N`` tiles, tile ``t`` of group ``t / tiles``, K range
    ``[start_g, start_g + len_g)`` (empty: a zero tile), stored at rows
    ``g*M + m``.

    Epilogue (:class:`~gemm_opt.passes.schedule_epilogue.Epilogue`): where a
    finished tile is stored (every store above, the stream-K owner's and tree
    root's, split-K's last slice), ``act(acc * row_scale * col_scale + bias)``
    (+ C's old value with ``accumulate``) before the rounding; swiglu's body
    yields (gate, up) and the store gets ``silu(gate) * up``. Atomic stream-K's
    split tiles add their partial's linear part (scaled; the bias by the range
    that starts the tile).

    Every op it creates is at the schedule op's location (the body's ops keep
    theirs). Diagnostics (at the op): a schedule the verifier refuses.
    """

    name: ClassVar[str] = "tile-lower-gemm-schedule"

    def run(self, module: ir.Operation) -> None:
        for op in collect_ops(module, (GemmScheduleOp.OPERATION_NAME,)):
            try:
                with module.context:
                    _Schedule(op).lower()
            except VerifyError as e:
                self.fail(op, f"cannot lower the schedule: {e}")


class _Schedule:
    def __init__(self, op: GemmScheduleOp) -> None:
        self.op = op
        self.kind = op.kind
        self.reduction = op.reduction
        self.grouped = op.grouped
        self.tile_loop = op.tile_loop
        self.bm, self.bn, self.bk = op.block()
        self.group_m = op.int_attr("group_m")
        self.num_xcds = op.num_xcds
        self.block = op.operation.regions[0].blocks[0]
        ops = list(self.block.operations)
        self.yield_op = ops[-1].operation
        self.acc_type = ir.RankedTensorType(self.yield_op.operands[0].type)
        self.split_k = op.split_k
        self.col_major = op.c_layout == CLayout.COL_MAJOR
        # Equivalent mutant: 1->2 programs (the offsets and strides read here do not
        # depend on the program count; only the sizes do).
        self.ws = workspace_layout(self.kind, self.reduction, 1, self.num_xcds, self.bm, self.bn)
        self.e = Emitter()
        self.epilogue = Epilogue(op, self.e, self.acc_type)

    # -- driver --

    def lower(self) -> None:
        op = self.op.operation
        with op.location, ir.InsertionPoint(op):
            e = self.e
            self.M, self.N, self.K = self.op.m, self.op.n, self.op.k
            self.pid = e.program_id()
            self.num_pid_m = e.cdiv(self.M, e.c(self.bm))
            self.num_pid_n = e.cdiv(self.N, e.c(self.bn))
            self.tiles = e.mul(self.num_pid_m, self.num_pid_n)
            if self.grouped == Grouped.M:
                self._grouped_m()
            elif self.grouped == Grouped.K:
                self._grouped_k()
            else:
                getattr(self, "_" + self.kind.name.lower())()  # Kind.STREAM_K: _stream_k, ...
        op.erase()

    # -- pieces --

    def coords(self, t: Value, num_pid_m: Value | None = None) -> tuple[Value, Value]:
        """(m_off, n_off) of tile ``t`` in GROUP_M order (of ``num_pid_m`` tile-rows).

        A band is ``group_m * num_pid_n`` tiles in i32. Up to
        :func:`~gemm_opt.dialect.schedule.group_m_limit` that fits for every N;
        a larger ``group_m`` is clamped to the tile rows first (a band of all
        the rows is the same order), so the band is at most the tile count."""
        e = self.e
        rows = num_pid_m or self.num_pid_m
        gm = e.c(self.group_m)
        if self.group_m > group_m_limit(self.bn):
            gm = e.max(e.min(gm, rows), e.c(1))
        in_group = e.mul(gm, self.num_pid_n)
        first_m = e.mul(e.div(t, in_group), gm)
        size_m = e.min(e.sub(rows, first_m), gm)
        local = e.rem(t, in_group)
        pid_m = e.add(first_m, e.rem(local, size_m))
        pid_n = e.div(local, size_m)
        return e.mul(pid_m, e.c(self.bm)), e.mul(pid_n, e.c(self.bn))

    def body(
        self,
        m_off: Value,
        n_off: Value,
        k_off: Value,
        k_end: Value,
        group: Value | None = None,
        m_end: Value | None = None,
    ) -> Value:
        """Inline the body at the end of the current block; return its accumulator."""
        e = self.e
        # Equivalent mutant: 0->1 (the anchor only marks a place; it is erased).
        anchor = arith.ConstantOp(e.i32, 0)
        if group is None:
            # One group: 0. A body that reads it moves in above the anchor, so the
            # constant goes there first; an unread one stays after the body.
            reads = next(iter(self.block.arguments[0].uses), None) is not None
            with ir.InsertionPoint(anchor) if reads else nullcontext():
                group = e.c(0)
        args = [group, m_off, m_end or self.M, n_off, k_off, k_end]
        # Equivalent mutant: strict=False (six block arguments, six values).
        for old, new in zip(self.block.arguments, args, strict=True):
            old.replace_all_uses_with(new)
        for inner in list(self.block.operations):
            if inner.operation == self.yield_op:
                break
            inner.operation.move_before(anchor.operation)
        accs = list(self.yield_op.operands)
        anchor.operation.erase()
        # swiglu's (gate, up): only the kinds that store each tile from one program
        # (the verifier's rule) take the pair, and only the epilogue reads it.
        return accs[0] if len(accs) == 1 else tuple(accs)  # type: ignore[return-value]

    def out(self, acc: Value) -> Value:
        """The accumulator in C's element type."""
        from gemm_opt.dialect.tile import PtrType

        elem = PtrType(self.op.c.type).element_type
        if str(elem) == "f32":
            return acc
        t = ir.RankedTensorType.get(list(self.acc_type.shape), elem, self.acc_type.encoding)
        return arith.TruncFOp(t, acc).result

    def store_c(
        self,
        acc: Value,
        m_off: Value,
        n_off: Value,
        rows: Value | None = None,
        group: Value | None = None,
    ) -> None:
        """Store the finished tile at (m_off, n_off) of C, rows below ``rows`` (M),
        through the epilogue (``group``: grouped "m"'s, for its bias row)."""
        e = self.e
        rows = rows or self.M
        if not self.epilogue.empty:
            acc = self.epilogue.finish(acc, m_off, n_off, rows, group)
        e.store(self.op.c, rows, self.N, self.op.ldc, m_off, n_off, self.out(acc), self.col_major)

    def tile(
        self, t: Value, k_off: Value, k_end: Value, group: Value | None = None
    ) -> tuple[Value, Value, Value]:
        m_off, n_off = self.coords(t)
        return self.body(m_off, n_off, k_off, k_end, group=group), m_off, n_off

    # -- kinds --

    def _data_parallel(self) -> None:
        e = self.e
        guard = e.if_(e.cmp("slt", self.pid, self.tiles))
        with ir.InsertionPoint(guard.then_block):
            acc, m_off, n_off = self.tile(self.pid, e.c(0), self.K)
            self.store_c(acc, m_off, n_off)
            scf.YieldOp([])

    def _persistent(self) -> None:
        e = self.e
        loop = e.for_(self.pid, self.tiles, e.num_programs())
        with ir.InsertionPoint(loop.body):
            acc, m_off, n_off = self.tile(loop.induction_variable, e.c(0), self.K)
            self.store_c(acc, m_off, n_off)
            scf.YieldOp([])

    def _work_stealing(self) -> None:
        e = self.e
        sync = self.op.sync
        chiplets = e.min(e.num_programs(), e.c(self.num_xcds))
        xcd = e.rem(self.pid, chiplets)
        per = e.cdiv(self.tiles, chiplets)
        base = e.mul(xcd, per)
        bound = e.max(e.min(per, e.sub(self.tiles, base)), e.c(0))
        slot = e.add(e.c(self.ws.counter_offset), e.mul(xcd, e.c(self.ws.counter_stride)))
        first = e.atomic(sync, slot, e.c(1), "add", "relaxed")
        loop = scf.WhileOp([e.i32], [first])
        before = loop.before.blocks.append(e.i32)
        after = loop.after.blocks.append(e.i32)
        with ir.InsertionPoint(before):
            raw = before.arguments[0]
            scf.ConditionOp(e.cmp("slt", raw, bound), [raw])
        with ir.InsertionPoint(after):
            t = e.add(base, after.arguments[0])
            acc, m_off, n_off = self.tile(t, e.c(0), self.K)
            nxt = e.atomic(sync, slot, e.c(1), "add", "relaxed")
            self.store_c(acc, m_off, n_off)
            scf.YieldOp([nxt])

    def _stream_k(self) -> None:
        e = self.e
        P = e.num_programs()
        ipt = e.cdiv(self.K, e.c(self.bk))
        ipt1 = e.max(ipt, e.c(1))
        # The partition (core.schedules.partition.stream_k_partition, on the device).
        rem_tiles = e.rem(self.tiles, P)
        sk0 = e.select(
            e.cmp("eq", rem_tiles, e.c(0)),
            e.c(0),
            e.select(e.cmp("sgt", self.tiles, P), e.add(P, rem_tiles), self.tiles),
        )
        sk = e.select(e.cmp("slt", e.mul(sk0, ipt), P), e.c(0), sk0)
        dp = e.sub(self.tiles, sk)
        total = e.mul(sk, ipt)
        q, r = e.div(total, P), e.rem(total, P)
        self.q1 = e.max(q, e.c(1))
        self.r = r
        it_begin = e.add(e.mul(self.pid, q), e.min(self.pid, r))
        extra = e.select(e.cmp("slt", self.pid, r), e.c(1), e.c(0))
        it_end = e.add(it_begin, e.add(q, extra))
        has_dp = e.cmp("slt", self.pid, dp)
        # Equivalent mutant: max's 0->1 (selected only where pid < dp: dp - pid >= 1).
        n_dp = e.select(has_dp, e.cdiv(e.max(e.sub(dp, self.pid), e.c(0)), P), e.c(0))
        first = e.div(it_begin, ipt1)
        last = e.div(e.sub(it_end, e.c(1)), ipt1)
        n_seg = e.select(e.cmp("sgt", it_end, it_begin), e.add(e.sub(last, first), e.c(1)), e.c(0))
        loop = e.for_(e.c(0), e.add(n_dp, n_seg), e.c(1))
        with ir.InsertionPoint(loop.body):
            u = loop.induction_variable
            is_dp = e.cmp("slt", u, n_dp)
            # Stream-K segments last to first (see the docstring: no wait chains).
            tl = e.sub(last, e.sub(u, n_dp))
            t = e.select(is_dp, e.add(self.pid, e.mul(u, P)), e.add(dp, tl))
            tile_begin = e.mul(tl, ipt)
            tile_end = e.add(tile_begin, ipt)
            sb = e.select(is_dp, e.c(0), e.sub(e.max(it_begin, tile_begin), tile_begin))
            se = e.select(is_dp, ipt, e.sub(e.min(it_end, tile_end), tile_begin))
            k_off = e.mul(sb, e.c(self.bk))
            k_end = e.min(e.mul(se, e.c(self.bk)), self.K)
            acc, m_off, n_off = self.tile(t, k_off, k_end)
            whole = e.and_(e.cmp("eq", sb, e.c(0)), e.cmp("eq", se, ipt))
            place = (acc, m_off, n_off)
            if self.reduction == Reduction.ATOMIC:
                self._atomic(whole, e.cmp("eq", sb, e.c(0)), *place)
            elif self.reduction == Reduction.LINEAR:
                self._linear(whole, se, ipt, tile_begin, tile_end, *place)
            else:
                self._tree(whole, tile_begin, tile_end, *place)
            scf.YieldOp([])

    def _split_k(self) -> None:
        """Program ``pid`` computes slice ``pid / tiles`` of tile ``pid % tiles``
        (:class:`~gemm_opt.core.schedules.partition.SplitKPartition`); ``S`` is
        the ``split_k`` attribute or ``num_programs / tiles``. ``S = 1``
        stores its tile. Otherwise it publishes its fp32 partial in slot
        ``pid``, adds 1 to its tile's counter (acq_rel: releases the partial,
        and the last adder acquires every other's, a chain of read-modify-writes),
        and the program that saw ``S - 1`` sums slices ``0..S-1`` in order (its
        own from registers), stores C and resets the counter to 0."""
        e = self.e
        if self.split_k is None:
            slices = e.max(e.div(e.num_programs(), e.max(self.tiles, e.c(1))), e.c(1))
        else:
            slices = e.c(self.split_k)
        guard = e.if_(e.cmp("slt", self.pid, e.mul(self.tiles, slices)))
        with ir.InsertionPoint(guard.then_block):
            t, s = e.rem(self.pid, self.tiles), e.div(self.pid, self.tiles)
            ipt = e.cdiv(self.K, e.c(self.bk))
            q, r = e.div(ipt, slices), e.rem(ipt, slices)
            begin = e.add(e.mul(s, q), e.min(s, r))
            end = e.add(e.add(begin, q), e.select(e.cmp("slt", s, r), e.c(1), e.c(0)))
            k_off = e.mul(begin, e.c(self.bk))
            k_end = e.min(e.mul(end, e.c(self.bk)), self.K)
            acc, m_off, n_off = self.tile(t, k_off, k_end)
            alone = e.if_(e.cmp("eq", slices, e.c(1)), has_else=True)
            with ir.InsertionPoint(alone.then_block):
                self.store_c(acc, m_off, n_off)
                scf.YieldOp([])
            with ir.InsertionPoint(alone.else_block):
                self._split_k_sum(acc, t, s, slices, m_off, n_off)
                scf.YieldOp([])
            scf.YieldOp([])

    def _split_k_sum(
        self, acc: Value, t: Value, s: Value, slices: Value, m_off: Value, n_off: Value
    ) -> None:
        """Publish, count in, and if last: the fixed-order sum of the tile's slices."""
        e = self.e
        sync = self.op.sync
        counter = self.flag(t)
        self.store_partial(self.pid, acc)
        arrived = e.atomic(sync, counter, e.c(1), "add", "acq_rel")
        last = e.if_(e.cmp("eq", arrived, e.sub(slices, e.c(1))))
        with ir.InsertionPoint(last.then_block):
            first = self.own_or_partial(e.c(0), s, t, acc)
            total = e.for_(e.c(1), slices, e.c(1), [first])
            with ir.InsertionPoint(total.body):
                i = total.induction_variable
                part = self.own_or_partial(i, s, t, acc)
                scf.YieldOp([arith.AddFOp(total.inner_iter_args[0], part).result])
            self.store_c(total.results[0], m_off, n_off)
            e.atomic(sync, counter, e.c(0), "xchg", "relaxed")
            scf.YieldOp([])

    def own_or_partial(self, i: Value, s: Value, t: Value, acc: Value) -> Value:
        """Slice ``i``'s partial of tile ``t``: ``acc`` if it is this program's
        slice ``s``, else the one published in slot ``i * tiles + t``."""
        e = self.e
        mine = e.if_(e.cmp("eq", i, s), [self.acc_type], has_else=True)
        with ir.InsertionPoint(mine.then_block):
            scf.YieldOp([acc])
        with ir.InsertionPoint(mine.else_block):
            scf.YieldOp([self.partial(e.add(e.mul(i, self.tiles), t))])
        return mine.results[0]

    # -- grouped (persistent) --

    def group_len(self, g: Value) -> Value:
        """``group_lens[g]``, a negative length read as 0 (the device never
        trusts lengths the host may not have checked)."""
        e = self.e
        return e.max(e.load_scalar(self.op.group_lens, g), e.c(0))

    def group_tiles(self, length: Value) -> Value:
        e = self.e
        return e.mul(e.cdiv(length, e.c(self.bm)), self.num_pid_n)

    def _grouped_m(self) -> None:
        """All groups' tiles over one persistent loop; a tile finds its group by
        walking ``group_lens`` on the device (no host sync) from where the
        program's previous tile was: its tiles ``pid, pid + P, ...`` only move
        forward through the groups, so a program reads each length once (O(G +
        its tiles), not O(G) per tile). Empty groups own no tile and shift
        neither rows nor weights (B is indexed by the group id). Lengths the
        host did not check stay in bounds: a negative one counts as empty and
        rows end at M, so lengths summing past M leave tiles that read zeros
        and store nothing."""
        e = self.e
        groups = self.op.num_groups
        total = e.for_(e.c(0), groups, e.c(1), [e.c(0)])
        with ir.InsertionPoint(total.body):
            n = self.group_tiles(self.group_len(total.induction_variable))
            scf.YieldOp([e.add(total.inner_iter_args[0], n)])
        zero = e.c(0)
        loop = e.for_(self.pid, total.results[0], e.num_programs(), [zero, zero, zero])
        with ir.InsertionPoint(loop.body):
            t = loop.induction_variable
            g, row0, tile0, length = self._walk_groups(t, *loop.inner_iter_args)
            num_pid_m = e.cdiv(length, e.c(self.bm))
            m_loc, n_off = self.coords(e.sub(t, tile0), num_pid_m)
            m_off = e.add(row0, m_loc)
            m_end = e.min(e.add(row0, length), self.M)
            acc = self.body(m_off, n_off, e.c(0), self.K, group=g, m_end=m_end)
            self.store_c(acc, m_off, n_off, rows=m_end, group=g)
            scf.YieldOp([g, row0, tile0])

    def _walk_groups(
        self, t: Value, g: Value, row: Value, tile: Value
    ) -> tuple[Value, Value, Value, Value]:
        """From group ``g`` (first row ``row``, first tile ``tile``), the group of
        tile ``t`` (at or after ``tile``; below the tile total): ``(group, its
        first row, its first tile, its length)``. The walk stops at the last
        group whatever the lengths, and reads ``group_lens`` only below G."""
        e = self.e
        i32 = e.i32
        last = e.sub(self.op.num_groups, e.c(1))
        walk = scf.WhileOp([i32] * 4, [g, row, tile])
        before = walk.before.blocks.append(i32, i32, i32)
        after = walk.after.blocks.append(i32, i32, i32, i32)
        with ir.InsertionPoint(before):
            g, row, tile = before.arguments
            length = self.group_len(e.min(g, last))
            past = e.cmp("sge", t, e.add(tile, self.group_tiles(length)))
            scf.ConditionOp(e.and_(past, e.cmp("slt", g, last)), [g, row, tile, length])
        with ir.InsertionPoint(after):
            g, row, tile, length = after.arguments
            nxt = [e.add(g, e.c(1)), e.add(row, length), e.add(tile, self.group_tiles(length))]
            scf.YieldOp(nxt)
        return walk.results[0], walk.results[1], walk.results[2], walk.results[3]

    def _grouped_k(self) -> None:
        """wgrad: G output tile grids of M x N; group g sums over its own K rows
        ``[start_g, start_g + len_g)`` (an empty group stores zeros); C is
        ``(G*M, N)``. Tile ``t`` of the ``G*T`` tiles (``T`` per group) is
        program ``t % P``'s, as in the persistent loop. A body that makes
        descriptors (a TMA twin's, whose rows end at the group's K end) gets
        the tiles group by group: a loop over the groups (``start_g`` summed
        on, each length read once per program) and, when the program owns one
        of the group's tiles (the first is ``(pid - g*T) mod P``), a loop over
        them, with the descriptors hoisted between the two
        (:func:`~gemm_opt.passes.schedule_ir.hoist`): made once per group and
        program instead of once per tile. The op's ``tile_loop`` says which:
        ``per-group`` this nest, ``flat`` one flat tile loop
        (:meth:`_grouped_k_flat`), for a body with nothing to hoist: nested,
        LLVM hoists the group's per-thread address arithmetic out of the tile
        loop and keeps it in registers, which costs occupancy
        (``docs/schedule-tuning-history.md``)."""
        if self.tile_loop == TileLoop.FLAT:
            self._grouped_k_flat()
            return
        e = self.e
        groups = self.op.num_groups
        per_group = self.tiles
        P = e.num_programs()
        loop = e.for_(e.c(0), groups, e.c(1), [e.c(0)])
        with ir.InsertionPoint(loop.body):
            g = loop.induction_variable
            k_off = loop.inner_iter_args[0]
            k_next = e.add(k_off, self.group_len(g))
            k_end = e.min(k_next, self.K)
            first = e.rem(e.add(e.rem(e.sub(self.pid, e.mul(g, per_group)), P), P), P)
            owns = e.if_(e.cmp("slt", first, per_group))
            with ir.InsertionPoint(owns.then_block):
                tiles = e.for_(first, per_group, P)
                with ir.InsertionPoint(tiles.body):
                    self._wgrad_tile(tiles.induction_variable, g, k_off, k_end)
                    scf.YieldOp([])
                hoist(tiles, MakeTensorDescriptorOp.OPERATION_NAME)
                scf.YieldOp([])
            scf.YieldOp([k_next])

    def _grouped_k_flat(self) -> None:
        """wgrad with nothing to hoist: one loop over the program's tiles ``pid,
        pid + P, ...``; they only move forward through the groups, so
        ``start_g`` is summed on from the previous tile's group (each length
        read once per program)."""
        e = self.e
        i32 = e.i32
        groups = self.op.num_groups
        per_group = self.tiles
        zero = e.c(0)
        loop = e.for_(self.pid, e.mul(groups, per_group), e.num_programs(), [zero, zero])
        with ir.InsertionPoint(loop.body):
            t = loop.induction_variable
            g = e.div(t, per_group)
            walk = scf.WhileOp([i32, i32], list(loop.inner_iter_args))
            before = walk.before.blocks.append(i32, i32)
            after = walk.after.blocks.append(i32, i32)
            with ir.InsertionPoint(before):
                h, start = before.arguments
                scf.ConditionOp(e.cmp("slt", h, g), [h, start])
            with ir.InsertionPoint(after):
                h, start = after.arguments
                scf.YieldOp([e.add(h, e.c(1)), e.add(start, self.group_len(h))])
            k_off = walk.results[1]
            k_end = e.min(e.add(k_off, self.group_len(g)), self.K)
            self._wgrad_tile(e.rem(t, per_group), g, k_off, k_end)
            scf.YieldOp([g, k_off])

    def _wgrad_tile(self, local: Value, g: Value, k_off: Value, k_end: Value) -> None:
        """Group ``g``'s tile ``local`` over K rows ``[k_off, k_end)``, stored
        at rows ``g*M + m`` of C."""
        e = self.e
        acc, m_off, n_off = self.tile(local, k_off, k_end, group=g)
        shift = e.mul(g, self.M)
        self.store_c(acc, e.add(shift, m_off), n_off, rows=e.add(shift, self.M))

    def cta_of(self, it: Value) -> Value:
        """The program whose stream-K range holds iteration ``it``."""
        e = self.e
        q1 = self.q1
        big = e.add(q1, e.c(1))
        edge = e.mul(self.r, big)
        low = e.div(it, big)
        high = e.add(self.r, e.div(e.sub(it, edge), q1))
        return e.select(e.cmp("slt", it, edge), low, high)

    def _atomic(self, whole: Value, starts: Value, acc: Value, m_off: Value, n_off: Value) -> None:
        """A whole tile is stored; a split tile's partial is added into C, after
        the epilogue's linear part (the verifier refuses the rest): scaled by
        every contributor, the bias added by the one whose range ``starts`` the
        tile (the others read it with no columns in bounds: zeros)."""
        e = self.e
        br = e.if_(whole, has_else=True)
        with ir.InsertionPoint(br.then_block):
            self.store_c(acc, m_off, n_off)
            scf.YieldOp([])
        with ir.InsertionPoint(br.else_block):
            if not self.epilogue.empty:
                cols = e.select(starts, self.N, e.c(0))
                acc = self.epilogue.linear(acc, m_off, n_off, self.M, bias_cols=cols)
            out = self.out(acc)
            e.atomic_add(self.op.c, self.M, self.N, self.op.ldc, m_off, n_off, out, self.col_major)
            scf.YieldOp([])

    def partial_at(self, program: Value) -> tuple[Value, Value, Value]:
        """(rows bound, row offset, ld) of ``program``'s fp32 partial tile."""
        e = self.e
        rows = self.ws.partial_stride // self.ws.partial_ld  # a partial tile's rows
        row = e.mul(program, e.c(rows))
        return e.add(row, e.c(rows)), row, e.c64(self.ws.partial_ld)

    def store_partial(self, program: Value, acc: Value) -> None:
        """Write ``acc`` to ``program``'s fp32 partial tile."""
        e = self.e
        rows, row, ld = self.partial_at(program)
        e.store(self.op.partials, rows, e.c(self.bn), ld, row, e.c(0), acc)

    def partial(self, program: Value) -> Value:
        """``program``'s fp32 partial tile (published and acquired before)."""
        e = self.e
        rows, row, ld = self.partial_at(program)
        return e.load(self.op.partials, rows, e.c(self.bn), ld, row, e.c(0), self.acc_type)

    def publish(self, acc: Value) -> None:
        self.store_partial(self.pid, acc)
        self.e.signal_flag(self.op.sync, self.flag(self.pid))

    def take(self, program: Value, acc: Value, wait: bool = True) -> Value:
        """Wait for ``program``'s flag (unless ``wait`` is False: already
        acquired), then add its partial to ``acc``."""
        if wait:
            self.e.wait_flag(self.op.sync, self.flag(program))
        return arith.AddFOp(acc, self.partial(program)).result

    def flag(self, program: Value) -> Value:
        e = self.e
        return e.add(e.c(self.ws.flag_offset), e.mul(program, e.c(self.ws.flag_stride)))

    def _linear(
        self,
        whole: Value,
        se: Value,
        ipt: Value,
        tile_begin: Value,
        tile_end: Value,
        acc: Value,
        m_off,
        n_off,
    ) -> None:
        """The others count into the owner's flag; the owner waits once for
        the count, then adds their partials (no wait between two loads)."""
        e = self.e
        sync = self.op.sync
        owner = e.cmp("eq", se, ipt)
        br = e.if_(owner, has_else=True)
        with ir.InsertionPoint(br.then_block):
            # The owner adds pid-1, pid-2, ..., first: a fixed order.
            first = e.select(whole, self.pid, self.cta_of(tile_begin))
            others = e.sub(self.pid, first)
            split = e.if_(e.cmp("sgt", others, e.c(0)))
            with ir.InsertionPoint(split.then_block):
                e.wait_count(sync, self.flag(self.pid), others)
                scf.YieldOp([])
            fix = e.for_(e.c(0), others, e.c(1), [acc])
            with ir.InsertionPoint(fix.body):
                other = e.sub(e.sub(self.pid, e.c(1)), fix.induction_variable)
                scf.YieldOp([self.take(other, fix.inner_iter_args[0], wait=False)])
            self.store_c(fix.results[0], m_off, n_off)
            scf.YieldOp([])
        with ir.InsertionPoint(br.else_block):
            self.store_partial(self.pid, acc)
            tile_owner = self.cta_of(e.sub(tile_end, e.c(1)))
            e.atomic(sync, self.flag(tile_owner), e.c(1), "add", "release")
            scf.YieldOp([])

    def _tree(
        self, whole: Value, tile_begin: Value, tile_end: Value, acc: Value, m_off, n_off
    ) -> None:
        e = self.e
        first = e.select(whole, self.pid, self.cta_of(tile_begin))
        last = e.select(whole, self.pid, self.cta_of(e.sub(tile_end, e.c(1))))
        n = e.add(e.sub(last, first), e.c(1))
        j = e.sub(last, self.pid)
        true = arith.ConstantOp(e.i1, 1).result
        loop = scf.WhileOp([e.i32, self.acc_type, e.i1], [e.c(1), acc, true])
        before = loop.before.blocks.append(e.i32, self.acc_type, e.i1)
        after = loop.after.blocks.append(e.i32, self.acc_type, e.i1)
        with ir.InsertionPoint(before):
            stride, cur, active = before.arguments
            go = e.and_(active, e.cmp("slt", stride, n))
            scf.ConditionOp(go, [stride, cur, active])
        with ir.InsertionPoint(after):
            stride, cur, active = after.arguments
            twice = e.add(stride, stride)
            receiver = e.cmp("eq", e.rem(j, twice), e.c(0))
            br = e.if_(receiver, [self.acc_type, e.i1], has_else=True)
            with ir.InsertionPoint(br.then_block):
                has_partner = e.cmp("slt", e.add(j, stride), n)
                inner = e.if_(has_partner, [self.acc_type], has_else=True)
                with ir.InsertionPoint(inner.then_block):
                    scf.YieldOp([self.take(e.sub(self.pid, stride), cur)])
                with ir.InsertionPoint(inner.else_block):
                    scf.YieldOp([cur])
                scf.YieldOp([inner.results[0], true])
            with ir.InsertionPoint(br.else_block):
                self.publish(cur)
                scf.YieldOp([cur, arith.ConstantOp(e.i1, 0).result])
            scf.YieldOp([twice, br.results[0], br.results[1]])
        done = e.if_(e.cmp("eq", j, e.c(0)))
        with ir.InsertionPoint(done.then_block):
            self.store_c(loop.results[1], m_off, n_off)
            scf.YieldOp([])


__all__ = ["LowerGemmSchedulePass"]
