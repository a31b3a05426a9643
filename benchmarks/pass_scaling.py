"""How every pass, named pipeline and ``--emit=ttgir`` scales with the number of copies.

Each size ``n`` is a gfx1250 kernel built through the bindings (typed op
builders, no MLIR text): two descriptors and two double-buffered shared
allocations, then ``n / 2`` stages of an A copy (hint ``0x0F``) and a B copy
(hint ``0xF0``) each followed by a ``tile.async_tdm_wait`` (``n`` copies,
``3n / 2`` ops in the loop-free body). The unhinted variant (for
``tile-derive-warp-hints``) is the same kernel without hints.

The default pipeline's passes are timed in order on one module, each on the
IR its predecessor produced; every other pass and each named pipeline runs
alone on a fresh module; the best of ``--repeat`` runs (one above 4,000
copies). ``--emit=ttgir`` is the whole path of
``gemm-opt --emit=ttgir``: the default pipeline, the TTGIR text and Triton's
parser. Remarks (``tile-annotate-warp-plan``) go to a counting diagnostic
handler, not to a terminal.

Times are CPU seconds of this process (``time.process_time``), which other
load on a shared machine barely moves, unlike wall time.

The table gives seconds per size and the growth ratio
``(t(n) / t(n0)) / (n / n0)`` against the smallest size ``n0``: 1 is linear,
below 1 means fixed costs dominate the small size. The script exits 1 when
any ratio exceeds ``--limit`` (2 by default).

Example::

    python benchmarks/pass_scaling.py                      # 250 .. 20000 copies
    python benchmarks/pass_scaling.py --sizes 250,1000 --only tile-fuse-tdm-copies
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from gemm_opt import dialect
from gemm_opt.core.ext_compat import MLIRError, arith, func, ir
from gemm_opt.core.pipeline import build_pass_manager, resolve
from gemm_opt.dialect import tile
from gemm_opt.lowering import REGISTRY, pipelines
from gemm_opt.lowering.compile import hand_off, split_hand_off

DEFAULT_SIZES = (250, 1000, 4000, 20000)
TARGET = "gfx1250"
FILE = "pass_scaling.mlir"


def build_module(ctx: ir.Context, copies: int, hinted: bool = True) -> ir.Module:
    """The ``copies``-copy kernel described in the module docstring."""
    line = iter(range(1, 10 * copies + 100))

    def loc() -> ir.Location:
        return ir.Location.file(FILE, next(line), 5, context=ctx)

    with ctx, loc():
        module = ir.Module.create()
        i32 = ir.IntegerType.get_signless(32)
        i64 = ir.IntegerType.get_signless(64)
        f16 = ir.F16Type.get()
        attrs = module.operation.attributes
        attrs[tile.NUM_WARPS] = ir.IntegerAttr.get(i32, 8)
        attrs[tile.THREADS_PER_WARP] = ir.IntegerAttr.get(i32, 32)
        attrs[tile.TARGET] = ir.StringAttr.get(TARGET)
        layout = tile.PaddedSharedAttr.build(interval=64, amount=8, order=[1, 0])

        def block(*shape: int) -> ir.TypeAttr:
            return ir.TypeAttr.get(ir.RankedTensorType.get(list(shape), f16, layout))

        ptr = tile.PtrType.get(ir.TypeAttr.get(f16))
        desc_a = tile.TensorDescType.get(block(128, 64))
        desc_b = tile.TensorDescType.get(block(64, 128))
        bufs_a = tile.SharedType.get(block(2, 128, 64))
        bufs_b = tile.SharedType.get(block(2, 64, 128))
        buf_a = tile.SharedType.get(block(128, 64))
        buf_b = tile.SharedType.get(block(64, 128))
        with ir.InsertionPoint(module.body):
            fn = func.FuncOp("load_a_b", ir.FunctionType.get([ptr, ptr, i32, i32, i32, i64], []))
        entry = fn.add_entry_block()
        a, b, m, n, k, stride = entry.arguments
        with ir.InsertionPoint(entry):
            c1 = arith.ConstantOp(i64, 1, loc=loc()).result
            da = tile.MakeTensorDescriptorOp(a, [m, k], [stride, c1], desc_a, loc=loc()).result
            db = tile.MakeTensorDescriptorOp(b, [k, n], [stride, c1], desc_b, loc=loc()).result
            abufs = tile.LocalAllocOp(bufs_a, loc=loc()).result
            bbufs = tile.LocalAllocOp(bufs_b, loc=loc()).result
            slots = []
            for s in range(2):
                idx = arith.ConstantOp(i32, s, loc=loc()).result
                slots.append(
                    (
                        tile.MemdescIndexOp(abufs, idx, buf_a, loc=loc()).result,
                        tile.MemdescIndexOp(bbufs, idx, buf_b, loc=loc()).result,
                    )
                )
            for stage in range(copies // 2):
                sa, sb = slots[stage % 2]
                for desc, buf, hint in ((da, sa, 0x0F), (db, sb, 0xF0)):
                    op = tile.AsyncTDMCopyGlobalToLocalOp(desc, buf, loc=loc())
                    if hinted:
                        op.operation.attributes["warp_used_hint"] = ir.IntegerAttr.get(i32, hint)
                wait = tile.AsyncTDMWaitOp(loc=loc())
                wait.operation.attributes["num"] = ir.IntegerAttr.get(i32, 0)
            func.ReturnOp([], loc=loc())
    return module


@dataclass(frozen=True)
class Chain:
    """Passes run in order on one fresh module, each timed on the IR its
    predecessor produced (the default pipeline is one chain)."""

    steps: tuple[str, ...]
    hinted: bool = True


def chains() -> list[Chain]:
    """The default pipeline, then every other registered pass and each named
    pipeline on its own (``tile-derive-warp-hints`` on the unhinted kernel)."""
    default = Chain(tuple(pipelines.tile_to_ttgir(TARGET)))
    out = [default]
    covered = {step.split("{")[0] for step in default.steps}
    for name in sorted(REGISTRY.passes):
        if name not in covered:
            out.append(Chain((name,), hinted=name != "tile-derive-warp-hints"))
    out += [Chain((f"{name}{{target={TARGET}}}",)) for name in sorted(REGISTRY.pipelines)]
    return out


def row_name(step: str) -> str:
    """A pass's row is its name; a named pipeline's keeps its options."""
    name = step.split("{")[0]
    return name if name in REGISTRY.passes else step


def cpu_seconds() -> float:
    """CPU time of this process and of the children it waited for (the
    hand-off to Triton runs in a child)."""
    t = os.times()  # only whole ticks: for children alone
    return time.process_time() + t.children_user + t.children_system


def time_chain(chain: Chain, copies: int, repeat: int) -> list[float]:
    """Best CPU time of each step of ``chain`` on a ``copies``-copy module."""
    best = [float("inf")] * len(chain.steps)
    for _ in range(repeat):
        ctx = dialect.make_context()
        handle = ctx.attach_diagnostic_handler(lambda d: True)  # remarks: handled, not printed
        try:
            module = build_module(ctx, copies, chain.hinted)
            with ctx:
                for i, step in enumerate(chain.steps):
                    steps, handoff = split_hand_off(resolve(step, REGISTRY, {"target": TARGET}))
                    pm = build_pass_manager(steps, REGISTRY)
                    start = cpu_seconds()
                    pm.run(module.operation)
                    if handoff is not None:  # the conversion: Triton's builder, in a child
                        hand_off(module, handoff.target, lds_copies=handoff.lds_copies)
                    best[i] = min(best[i], cpu_seconds() - start)
        finally:
            handle.detach()
    return best


def time_emit(copies: int, repeat: int) -> float:
    """``gemm-opt FILE --emit=ttgir -o /dev/null``, in process: parse, the
    default pipeline, printing and Triton's parser."""
    from gemm_opt.tools.opt import main as gemm_opt

    ctx = dialect.make_context()
    text = build_module(ctx, copies).operation.get_asm(enable_debug_info=True)
    best = float("inf")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / FILE
        path.write_text(text)
        for _ in range(repeat):
            start = cpu_seconds()
            status = gemm_opt([str(path), "--emit=ttgir", "-o", os.devnull])
            best = min(best, cpu_seconds() - start)
            if status != 0:
                raise RuntimeError(f"gemm-opt --emit=ttgir failed with status {status}")
    return best


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument(
        "--sizes",
        default=",".join(map(str, DEFAULT_SIZES)),
        help="comma-separated copy counts (default: %(default)s)",
    )
    p.add_argument("--only", default="", help="comma-separated row names to run")
    p.add_argument("--repeat", type=int, default=2, help="runs per size below 4000 copies")
    p.add_argument("--limit", type=float, default=2.0, help="largest growth ratio allowed")
    args = p.parse_args(argv)
    try:
        sizes = sorted({int(s) for s in args.sizes.split(",") if s})
    except ValueError:
        p.error(f"--sizes expects integers, got '{args.sizes}'")
    if not sizes or sizes[0] < 2:
        p.error("--sizes needs at least one size of 2 copies or more")
    rows = [row_name(step) for chain in chains() for step in chain.steps] + ["--emit=ttgir"]
    only = {s for s in args.only.split(",") if s}
    if only - set(rows):
        p.error(f"--only: no row named {', '.join(sorted(only - set(rows)))}")
    times: dict[str, list[float]] = {row: [] for row in rows if not only or row in only}
    for n in sizes:
        repeat = args.repeat if n < 4000 else 1
        try:
            for chain in chains():
                names = [row_name(step) for step in chain.steps]
                if not any(name in times for name in names):
                    continue
                for name, t in zip(names, time_chain(chain, n, repeat), strict=True):
                    if name in times:
                        times[name].append(t)
            if "--emit=ttgir" in times:
                times["--emit=ttgir"].append(time_emit(n, repeat))
        except (MLIRError, RuntimeError) as e:
            print(f"failed on {n} copies: {e}", file=sys.stderr)
            return 1
        print(f"  ({n} copies done)", file=sys.stderr, flush=True)

    width = max(len(name) for name in times)
    head = "".join(f"{n:>10}" for n in sizes)
    ratios = "".join(f"{'x' + str(n):>8}" for n in sizes[1:])
    print(f"{'CPU seconds':<{width}}{head}   growth{ratios}")
    worst = 0.0
    for name, ts in times.items():
        pairs = zip(ts[1:], sizes[1:], strict=True)
        growth = [(t / ts[0]) / (n / sizes[0]) for t, n in pairs]
        worst = max([worst, *growth])
        cells = "".join(f"{t:>10.3f}" for t in ts)
        print(f"{name:<{width}}{cells}   {'':6}" + "".join(f"{g:>8.2f}" for g in growth))
    verdict = "ok" if worst <= args.limit else "FAIL"
    print(f"worst growth ratio {worst:.2f} (limit {args.limit:g}): {verdict}")
    return 0 if worst <= args.limit else 1


if __name__ == "__main__":
    sys.exit(main())
