"""A pipelined TDM + WMMA GEMM for gfx1250, written with ``gemm_opt.language``.

The same kernel as ``examples/gemm_gfx1250.mlir``: C (MxN) = A (MxK) @ B (KxN)
with fp32 accumulation (leading dimensions multiples of 16 elements, which
cuda:90's TMA descriptors need), BLOCK_M x BLOCK_N x BLOCK_K blocks and NUM_BUFFERS
shared buffers per operand, output tiles in the order GROUP_M picks
(:func:`tile_order`). Each iteration first issues the TDM copies of the
next K tile (A by warps 0-3, B by warps 4-7 with the default hints), then waits
for the current tile and runs WMMA on it, so copies overlap compute. Ragged M,
N and K are handled by TDM's zero fill (loads) and the masked store (C).

``PERSISTENT=True`` builds the persistent form (:func:`persistent_tiles`):
launched with fewer programs than tiles (one per resident slot), each program
runs one loop over all (tile, K step) pairs of its tiles, so the copies of the
next tile are in flight while this tile's epilogue stores C.

``EPILOGUE_TMA=True`` stages each C tile in a shared buffer
(``tl.local_store``) and writes it with an asynchronous store
(``tl.async_store``: a TDM store on gfx1250, a TMA store on cuda:90) that
clips at the tensor's edges. In the persistent form the store runs on while
the next tile's K loop does; the next epilogue waits for it before writing
the buffer again (stores count with copies in ``tl.async_wait``, so that
wait also waits for the copies in flight).

Run it to print the tile IR and the compiled kernel's metrics; ``--target``
compiles the same kernel for another target of the lowering (``cuda:90``:
PTX and a cubin, hints dropped)::

    python examples/gemm_gfx1250.py [--target cuda:90] [--dtype bf16] [--unhinted] [--persistent]
                                    [--print-ir]
"""

from __future__ import annotations

import argparse
import dataclasses

import gemm_opt.language as tl


def acc_layout(num_warps: int) -> tl.WmmaLayout:
    """The accumulator layout: warps split M first, two columns of warps."""
    wn = 2 if num_warps >= 2 else 1
    return tl.WmmaLayout(
        version=3, warps_per_cta=[num_warps // wn, wn], instr_shape=[16, 16, 32], transposed=True
    )


def tile_order(M, N, BLOCK_M: int, BLOCK_N: int, GROUP_M: int):
    """(pid_m, pid_n): which output tile this program computes.

    ``GROUP_M = 0``: program (x, y) of the (cdiv(M, BLOCK_M), cdiv(N, BLOCK_N))
    grid computes tile (x, y). ``GROUP_M > 0``: grouped order for L2 reuse.
    Programs are numbered x fastest (the order the grid is dispatched in), and
    consecutive programs walk GROUP_M rows of tiles down each column before
    moving right, so a wave of programs reads GROUP_M row panels of A and a
    few column panels of B instead of every row panel of A.
    """
    if not GROUP_M:
        return tl.program_id(0), tl.program_id(1)
    num_pid_m = (M + (BLOCK_M - 1)) // BLOCK_M
    return tile_coords(
        tl.program_id(1) * num_pid_m + tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M
    )


def tile_coords(tile, M, N, BLOCK_M: int, BLOCK_N: int, GROUP_M: int):
    """(pid_m, pid_n) of output tile number ``tile`` (M fastest): the order of
    :func:`tile_order`, GROUP_M rows of tiles at a time when ``GROUP_M > 0``."""
    num_pid_m = (M + (BLOCK_M - 1)) // BLOCK_M
    if not GROUP_M:
        return tile % num_pid_m, tile // num_pid_m
    num_pid_n = (N + (BLOCK_N - 1)) // BLOCK_N
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = tile // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    rows_left = num_pid_m - first_pid_m
    group_size_m = tl.where(rows_left < GROUP_M, rows_left, GROUP_M)
    in_group = tile % num_pid_in_group
    return first_pid_m + in_group % group_size_m, in_group // group_size_m


@tl.kernel
def gemm(
    a: tl.ptr("DTYPE"),
    b: tl.ptr("DTYPE"),
    c: tl.ptr("DTYPE"),
    M: tl.int32,
    N: tl.int32,
    K: tl.int32,
    lda: tl.divisible(tl.int64, 16),
    ldb: tl.divisible(tl.int64, 16),
    ldc: tl.divisible(tl.int64, 16),
    BLOCK_M: tl.constexpr = 128,
    BLOCK_N: tl.constexpr = 128,
    BLOCK_K: tl.constexpr = 64,
    NUM_BUFFERS: tl.constexpr = 2,
    HINT_A: tl.constexpr = 0b00001111,
    HINT_B: tl.constexpr = 0b11110000,
    DTYPE: tl.constexpr = tl.float16,
    GROUP_M: tl.constexpr = 0,
    PROLOGUE_PRED: tl.constexpr = True,
    PERSISTENT: tl.constexpr = False,
    EPILOGUE_TMA: tl.constexpr = False,
    WARP_SPECIALIZE: tl.constexpr = False,
    PRODUCER_REGS: tl.constexpr = None,
):
    tl.static_assert(NUM_BUFFERS >= 2, "the schedule needs one buffer to fill while one is read")
    shared_a = tl.PaddedShared(interval=BLOCK_K, amount=8, order=[1, 0])
    shared_b = tl.PaddedShared(interval=BLOCK_N, amount=16, order=[1, 0])
    acc_l = acc_layout(tl.num_warps())
    op_a = tl.DotOperand(op_idx=0, parent=acc_l, k_width=8)
    op_b = tl.DotOperand(op_idx=1, parent=acc_l, k_width=8)

    if not PERSISTENT:
        pid_m, pid_n = tile_order(M, N, BLOCK_M, BLOCK_N, GROUP_M)
        off_m = pid_m * BLOCK_M
        off_n = pid_n * BLOCK_N
        num_k = (K + (BLOCK_K - 1)) // BLOCK_K

    if not WARP_SPECIALIZE:  # (the producer partition makes its own)
        a_desc = tl.make_tensor_descriptor(
            a, shape=[M, K], strides=[lda, 1], block_shape=[BLOCK_M, BLOCK_K], layout=shared_a
        )
        b_desc = tl.make_tensor_descriptor(
            b, shape=[K, N], strides=[ldb, 1], block_shape=[BLOCK_K, BLOCK_N], layout=shared_b
        )
    a_bufs = tl.allocate_shared(DTYPE, [NUM_BUFFERS, BLOCK_M, BLOCK_K], shared_a)
    b_bufs = tl.allocate_shared(DTYPE, [NUM_BUFFERS, BLOCK_K, BLOCK_N], shared_b)
    if WARP_SPECIALIZE:
        tl.static_assert(PERSISTENT, "WARP_SPECIALIZE is a form of the persistent kernel")
        ready = tl.allocate_mbarrier(NUM_BUFFERS)
        empty = tl.allocate_mbarrier(NUM_BUFFERS)
        for i in range(NUM_BUFFERS):
            tl.mbarrier.init(ready.index(i), count=1)
            tl.mbarrier.init(empty.index(i), count=1)
        ring = (a_bufs, b_bufs, ready, empty)
        blocks = (BLOCK_M, BLOCK_N, BLOCK_K, NUM_BUFFERS, GROUP_M)
        # (A worker captures the values among its top-level arguments.)
        tl.warp_specialize(
            [
                (
                    ws_consumer,
                    (ring, M, N, K, blocks, c, ldc, acc_l, DTYPE, EPILOGUE_TMA),
                ),
                (ws_producer, (a, b, lda, ldb, *ring, M, N, K, blocks, shared_a, shared_b, DTYPE)),
            ],
            [1],
            None if PRODUCER_REGS is None else [PRODUCER_REGS],
        )
        return
    c_out = c_epilogue(c, M, N, ldc, BLOCK_M, BLOCK_N, DTYPE) if EPILOGUE_TMA else None
    if PERSISTENT:
        persistent_tiles(
            (a_desc, b_desc, a_bufs, b_bufs, op_a, op_b, acc_l),
            (c, c_out),
            M,
            N,
            K,
            ldc,
            BLOCK_M,
            BLOCK_N,
            BLOCK_K,
            NUM_BUFFERS,
            HINT_A,
            HINT_B,
            DTYPE,
            GROUP_M,
            PROLOGUE_PRED,
        )
        return

    # Prologue: K tiles 0 .. NUM_BUFFERS-2 into buffers 0 .. NUM_BUFFERS-2, so
    # every tile is two copies in flight. Past the end of K they are predicated
    # off (PROLOGUE_PRED) or left to their bounds, which zero-fill them into
    # buffers no MMA reads: no branch before the K loop. (On cuda:90 that branch
    # makes ptxas serialize the wgmmas of the pipelined loop: warning C7515.)
    for i in range(NUM_BUFFERS - 1):
        has_tile = (num_k > i) if PROLOGUE_PRED else None
        a0 = a_desc.update(offsets=[off_m, i * BLOCK_K], pred=has_tile)
        b0 = b_desc.update(offsets=[i * BLOCK_K, off_n], pred=has_tile)
        tl.async_copy(a0, a_bufs.index(i), warp_used_hint=HINT_A)
        tl.async_copy(b0, b_bufs.index(i), warp_used_hint=HINT_B)

    def step(k, acc):
        # Issue K tile k+NUM_BUFFERS-1 into the buffer tile k-1 was read from
        # (predicated off past the end).
        nxt = k + (NUM_BUFFERS - 1)
        has_next = nxt < num_k
        slot_next = nxt % NUM_BUFFERS
        k_next = nxt * BLOCK_K
        a_next = a_desc.update(offsets=[off_m, k_next], pred=has_next)
        b_next = b_desc.update(offsets=[k_next, off_n], pred=has_next)
        tl.async_copy(a_next, a_bufs.index(slot_next), warp_used_hint=HINT_A)
        tl.async_copy(b_next, b_bufs.index(slot_next), warp_used_hint=HINT_B)
        # Tile k has landed once at most the copies of the NUM_BUFFERS-1 tiles
        # after it (two each) are in flight.
        tl.async_wait(2 * (NUM_BUFFERS - 1))
        slot = k % NUM_BUFFERS
        a_tile = tl.local_load(a_bufs.index(slot), op_a)
        b_tile = tl.local_load(b_bufs.index(slot), op_b)
        return tl.wmma(a_tile, b_tile, acc)

    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32, acc_l)
    acc = tl.for_loop(0, num_k, 1, init=acc, body=step)
    tl.async_wait(0)
    store_c(c, c_out, M, N, ldc, off_m, off_n, acc.to(DTYPE))
    if EPILOGUE_TMA:
        tl.async_wait(0)  # the store has read its buffer before the program ends


def c_epilogue(c, M, N, ldc, BLOCK_M: int, BLOCK_N: int, DTYPE):
    """``EPILOGUE_TMA``: C's descriptor and the shared buffer a tile of C is
    staged in (whole padded rows, as a TDM store needs; NVMMA on cuda:90)."""
    shared_c = tl.PaddedShared(interval=BLOCK_N, amount=8, order=[1, 0])
    c_desc = tl.make_tensor_descriptor(
        c, shape=[M, N], strides=[ldc, 1], block_shape=[BLOCK_M, BLOCK_N], layout=shared_c
    )
    return c_desc, tl.allocate_shared(DTYPE, [BLOCK_M, BLOCK_N], shared_c)


def store_c(c, c_out, M, N, ldc, off_m, off_n, value):
    """Store the C tile ``value`` at (off_m, off_n): masked from registers, or
    (``c_out`` of :func:`c_epilogue`) into its shared buffer and from there by
    an asynchronous TDM/TMA store, which a later ``tl.async_wait`` retires."""
    if c_out is None:
        tl.store_block(c, shape=[M, N], strides=[ldc, 1], offsets=[off_m, off_n], value=value)
        return
    c_desc, c_buf = c_out
    tl.local_store(c_buf, value)
    tl.async_store(c_desc.update(offsets=[off_m, off_n]), c_buf)


def persistent_tiles(
    operands,
    c_and_out,
    M,
    N,
    K,
    ldc,
    BLOCK_M,
    BLOCK_N,
    BLOCK_K,
    NUM_BUFFERS,
    HINT_A,
    HINT_B,
    DTYPE,
    GROUP_M,
    PROLOGUE_PRED,
):
    """The persistent form (``PERSISTENT``): a grid of ``P`` programs, program
    ``p`` computing tiles ``p, p + P, p + 2P, ...`` (numbered as
    :func:`tile_coords` orders them), in ONE loop over its (tile, K step)
    pairs. The copy ring runs ``NUM_BUFFERS - 1`` steps ahead across tile
    boundaries, so the next tile's first K tiles are in flight while this
    tile's epilogue (convert, store of C) runs. The accumulator restarts at
    zero after each epilogue. Tile and K indices of the copies and of the
    epilogue are counters carried by the loop (no division per step); the
    tile coordinates are recomputed only when a counter wraps.
    """
    a_desc, b_desc, a_bufs, b_bufs, op_a, op_b, acc_l = operands
    c, c_out = c_and_out
    # Past the end, offsets() gives tile 0: those copies are predicated off or
    # read a buffer no MMA reads.
    k_tiles, total, offsets = program_tiles(M, N, K, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M)

    def issue(slot, k, off_m, off_n, pred):
        a_next = a_desc.update(offsets=[off_m, k * BLOCK_K], pred=pred)
        b_next = b_desc.update(offsets=[k * BLOCK_K, off_n], pred=pred)
        tl.async_copy(a_next, a_bufs.index(slot), warp_used_hint=HINT_A)
        tl.async_copy(b_next, b_bufs.index(slot), warp_used_hint=HINT_B)

    # Prologue: steps 0 .. NUM_BUFFERS-2 of this program, their tile coordinates
    # computed directly (no scf.if before the loop: see the data-parallel prologue).
    state = None
    for j in range(NUM_BUFFERS - 1):
        t = j // k_tiles if j else 0
        k = j - t * k_tiles if j else 0
        off_m, off_n = offsets(t)
        issue(j, k, off_m, off_n, (total > j) if PROLOGUE_PRED else None)
        state = (k, t, off_m, off_n)

    def step(it, acc, k, t, lk, lt, l_off_m, l_off_n):
        # The copies of step it + NUM_BUFFERS - 1, into the slot step it - 1 read:
        # advance the counters of the last issued step by one.
        lk = lk + 1
        wrap = lk == k_tiles
        lk = tl.where(wrap, 0, lk)
        lt = tl.where(wrap, lt + 1, lt)
        l_off_m, l_off_n = tl.if_(wrap, lambda: offsets(lt), lambda: (l_off_m, l_off_n))
        nxt = it + (NUM_BUFFERS - 1)
        issue(nxt % NUM_BUFFERS, lk, l_off_m, l_off_n, nxt < total)
        # Step it has landed once at most the copies of the NUM_BUFFERS-1 steps
        # after it (two each) are in flight.
        tl.async_wait(2 * (NUM_BUFFERS - 1))
        slot = it % NUM_BUFFERS
        a_tile = tl.local_load(a_bufs.index(slot), op_a)
        b_tile = tl.local_load(b_bufs.index(slot), op_b)
        acc = tl.wmma(a_tile, b_tile, acc)
        last = k == k_tiles - 1

        def epilogue():
            off_m, off_n = offsets(t)
            if c_out is not None:
                # The previous tile's store has read the C buffer (stores count
                # with copies: this also waits for the copies in flight).
                tl.async_wait(0)
            store_c(c, c_out, M, N, ldc, off_m, off_n, acc.to(DTYPE))
            return tl.zeros([BLOCK_M, BLOCK_N], tl.float32, acc_l)

        acc = tl.if_(last, epilogue, lambda: acc)
        return acc, tl.where(last, 0, k + 1), tl.where(last, t + 1, t), lk, lt, l_off_m, l_off_n

    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32, acc_l)
    tl.for_loop(0, total, 1, init=(acc, 0, 0, *state), body=step)
    tl.async_wait(0)


def program_tiles(M, N, K, BLOCK_M: int, BLOCK_N: int, BLOCK_K: int, GROUP_M: int):
    """A persistent program's work: ``(k_tiles, total, offsets)``, the K steps
    per tile (K = 0 still runs one zero-filled step, so C is written), its
    (tile, K step) pairs, and ``offsets(t)``, the (off_m, off_n) of its t-th
    tile (program ``p`` of ``P`` takes tiles ``p, p + P, ...`` in
    :func:`tile_coords` order; tile 0 past the end)."""
    num_tiles = ((M + (BLOCK_M - 1)) // BLOCK_M) * ((N + (BLOCK_N - 1)) // BLOCK_N)
    pid = tl.program_id(0)
    num_progs = tl.num_programs(0)
    k_tiles = tl.where(K > BLOCK_K, (K + (BLOCK_K - 1)) // BLOCK_K, 1)
    my_tiles = (num_tiles - pid + (num_progs - 1)) // num_progs

    def offsets(t):
        tile = pid + t * num_progs
        tile = tl.where(tile < num_tiles, tile, 0)
        pid_m, pid_n = tile_coords(tile, M, N, BLOCK_M, BLOCK_N, GROUP_M)
        return pid_m * BLOCK_M, pid_n * BLOCK_N

    return k_tiles, my_tiles * k_tiles, offsets


def ws_producer(
    a, b, lda, ldb, a_bufs, b_bufs, ready, empty, M, N, K, blocks, shared_a, shared_b, DTYPE
):
    """``WARP_SPECIALIZE``'s worker (one warp): walks the program's (tile, K
    step) pairs in the consumer's order and fills slot ``it % NUM_BUFFERS``
    once the consumer has given it back (``empty``), announcing the bytes on
    ``ready`` that the two barrier-tracked copies then deliver."""
    BLOCK_M, BLOCK_N, BLOCK_K, NUM_BUFFERS, GROUP_M = blocks
    a_in = tl.make_tensor_descriptor(
        a, shape=[M, K], strides=[lda, 1], block_shape=[BLOCK_M, BLOCK_K], layout=shared_a
    )
    b_in = tl.make_tensor_descriptor(
        b, shape=[K, N], strides=[ldb, 1], block_shape=[BLOCK_K, BLOCK_N], layout=shared_b
    )
    k_tiles, total, offsets = program_tiles(M, N, K, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M)
    nbytes = (BLOCK_M * BLOCK_K + BLOCK_K * BLOCK_N) * DTYPE.bits // 8

    def step(it, k, t, off_m, off_n):
        s = it % NUM_BUFFERS
        # The slot's previous fill (step it - NUM_BUFFERS) has been read; the
        # first round's wait passes at once (phase parity 1 of a fresh barrier).
        tl.mbarrier.wait(empty.index(s), ((it // NUM_BUFFERS) % 2) ^ 1)
        a_at = a_in.update(offsets=[off_m, k * BLOCK_K])
        b_at = b_in.update(offsets=[k * BLOCK_K, off_n])
        tl.mbarrier.expect(ready.index(s), nbytes)
        tl.async_copy(a_at, a_bufs.index(s), barrier=ready.index(s))
        tl.async_copy(b_at, b_bufs.index(s), barrier=ready.index(s))
        # The tile's coordinates change (a division chain) only when its K steps end.
        last = k == k_tiles - 1
        t = tl.where(last, t + 1, t)
        off_m, off_n = tl.if_(last, lambda: offsets(t), lambda: (off_m, off_n))
        return tl.where(last, 0, k + 1), t, off_m, off_n

    tl.for_loop(0, total, 1, init=(0, 0, *offsets(0)), body=step)


def ws_consumer(ring, M, N, K, blocks, c, ldc, acc_l, DTYPE, EPILOGUE_TMA):
    """``WARP_SPECIALIZE``'s default partition (the kernel's warps): waits for
    each slot, multiplies it, gives it back, and stores C on a tile's last K
    step while the producer already fills the next tile's slots."""
    a_bufs, b_bufs, ready, empty = ring
    BLOCK_M, BLOCK_N, BLOCK_K, NUM_BUFFERS, GROUP_M = blocks
    c_out = c_epilogue(c, M, N, ldc, BLOCK_M, BLOCK_N, DTYPE) if EPILOGUE_TMA else None
    k_tiles, total, offsets = program_tiles(M, N, K, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M)

    def step(it, acc, k, t):
        s = it % NUM_BUFFERS
        tl.mbarrier.wait(ready.index(s), (it // NUM_BUFFERS) % 2)
        # One MMA in flight: this step's reads its slot while the wait retires
        # the previous step's, whose slot goes back to the producer. A tile's
        # first step does not add acc (use_acc false), so the epilogue hands
        # the registers on as they are instead of zeroing them.
        acc = tl.async_wmma(a_bufs.index(s), b_bufs.index(s), acc, use_acc=k > 0)
        acc = tl.async_wmma_wait(acc, 1)
        # (k = 0: the previous step ended a tile, whose epilogue gave its slot back.)
        tl.mbarrier.arrive(empty.index((it + NUM_BUFFERS - 1) % NUM_BUFFERS), pred=k > 0)
        last = k == k_tiles - 1

        def epilogue():
            off_m, off_n = offsets(t)
            done = tl.async_wmma_wait(acc, 0)
            tl.mbarrier.arrive(empty.index(s))  # every MMA has retired: the slot is free
            if c_out is not None:
                tl.async_wait(0)  # the previous tile's store has read the C buffer
            store_c(c, c_out, M, N, ldc, off_m, off_n, done.to(DTYPE))
            return done

        acc = tl.if_(last, epilogue, lambda: acc)
        return acc, tl.where(last, 0, k + 1), tl.where(last, t + 1, t)

    # The loop carries an accumulator from the start; the first step ignores
    # its values (k = 0), so these zeros are set once per program, not per tile.
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32, acc_l)
    acc, _, _ = tl.for_loop(0, total, 1, init=(acc, 0, 0), body=step)
    tl.async_wmma_wait(acc, 0)
    if c_out is not None:
        tl.async_wait(0)


def main(argv: list[str] | None = None) -> int:
    """Build the GEMM's tile IR and compile it for ``--target``."""
    from gemm_opt.core.targets import TARGET_NAMES

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", choices=TARGET_NAMES, default="gfx1250")
    parser.add_argument("--dtype", choices=["fp16", "bf16"], default="fp16")
    parser.add_argument("--num-warps", type=int, default=8)
    parser.add_argument("--unhinted", action="store_true", help="drop both warp_used_hints")
    parser.add_argument("--group-m", type=int, default=0, help="grouped tile order (0: none)")
    parser.add_argument(
        "--persistent", action="store_true", help="the persistent form (PERSISTENT=True)"
    )
    parser.add_argument("--print-ir", action="store_true", help="print the tile IR")
    args = parser.parse_args(argv)

    constexprs = {
        "DTYPE": {"fp16": tl.float16, "bf16": tl.bfloat16}[args.dtype],
        "GROUP_M": args.group_m,
        "PERSISTENT": args.persistent,
    }
    if args.unhinted:
        constexprs.update(HINT_A=None, HINT_B=None)
    text = gemm.build_ir(num_warps=args.num_warps, target=args.target, **constexprs)
    if args.print_ir:
        print(text)
    print(f"tile IR: {len(text.splitlines())} lines, verified")

    compiled = gemm.compile(target=args.target, num_warps=args.num_warps, **constexprs)
    print(f"compiled for {compiled.target} in {compiled.compile_seconds:.2f} s")
    if "ptx" in compiled.asm:  # the ISA metrics read AMDGPU assembly
        print(f"  ptx: {len(compiled.asm['ptx'].splitlines())} lines")
        print(f"  cubin: {len(compiled.hsaco)} bytes")
        return 0
    for name, value in dataclasses.asdict(compiled.metrics).items():
        print(f"  {name}: {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
