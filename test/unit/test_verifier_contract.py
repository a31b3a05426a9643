"""The verifier is the contract: what it accepts lowers for every target the
module may name.

For a sample of modules the tile verifier accepts (the examples, front-end
kernels per target, and kernels built here for every memory element type and
shared layout), the whole compilation (tile passes, conversion, Triton 3.9.0
to a binary) runs for each target of :func:`gemm_opt.dialect.tile.possible_targets`.
A module that names its target must compile. A module that names none may be
turned down for a particular target, but only by the tile verifier, at a tile
op's line and before Triton sees it; Triton rejecting a verified module, or
any other exception, is a hole in the verifier.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path

import pytest

from gemm_opt.core.contract import NUM_WARPS, TARGET, THREADS_PER_WARP
from gemm_opt.core.ext_compat import arith, func, ir
from gemm_opt.core.targets import TARGETS
from gemm_opt.dialect import make_context, tile
from gemm_opt.lowering.compile import TileCompileError, compile_tile_module

ROOT = Path(__file__).resolve().parents[2]


def _example() -> object:
    spec = importlib.util.spec_from_file_location(
        "gemm_example", ROOT / "examples" / "gemm_gfx1250.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _targets_of(text: str) -> list[str]:
    """Parse (the verifier runs) and list the targets the module may name."""
    with make_context():
        module = ir.Module.parse(text)
        assert tile.verify_module_attributes(module.operation) == []
        return [t.name for t in tile.possible_targets(module.operation)]


def _without_target(text: str) -> str:
    """The module with its tile.target and tile.threads_per_warp removed."""
    with make_context():
        module = ir.Module.parse(text)
        for name in (TARGET, THREADS_PER_WARP):
            if name in module.operation.attributes:
                del module.operation.attributes[name]
        return str(module)


# ---- kernels built with the bindings ------------------------------------------------


def _module(num_warps: int, target: str | None, body: Callable[[list[ir.Value]], None], args):
    """A module with one function ``@kernel(args)`` whose body ``body`` builds."""
    ctx = make_context()
    with ctx, ir.Location.unknown():
        module = ir.Module.create()
        i32 = ir.IntegerType.get_signless(32)
        module.operation.attributes[NUM_WARPS] = ir.IntegerAttr.get(i32, num_warps)
        if target is not None:
            module.operation.attributes[TARGET] = ir.StringAttr.get(target)
        with ir.InsertionPoint(module.body):
            fn = func.FuncOp("kernel", ir.FunctionType.get(args(), []))
            entry = fn.add_entry_block()
            with ir.InsertionPoint(entry):
                body(list(entry.arguments))
                func.ReturnOp([])
        assert module.operation.verify()
        return str(module)


def _ints():
    i32, i64 = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(64)
    return i32, i64


def _element(name: str) -> ir.Type:
    return ir.Type.parse(name)


def _copy_kernel(elems: list[str], layout: Callable[[], tile.SharedLayoutAttr], target=None):
    """Per element type: make_tensor_descriptor and a hinted TDM copy into
    buffer 0 of a double buffer; then one wait."""

    def args():
        i32, i64 = _ints()
        ptrs = [tile.PtrType.get(ir.TypeAttr.get(_element(e))) for e in elems]
        return [*ptrs, i32, i32, i64]

    def body(a):
        i32, i64 = _ints()
        m, n, stride = a[len(elems) :]
        one = arith.ConstantOp(i64, 1).result
        zero = arith.ConstantOp(i32, 0).result
        lay = layout()
        for ptr, e in zip(a, elems, strict=False):
            block = ir.RankedTensorType.get([64, 64], _element(e), lay)
            bufs = ir.RankedTensorType.get([2, 64, 64], _element(e), lay)
            block_t = tile.TensorDescType.get(ir.TypeAttr.get(block))
            desc = tile.MakeTensorDescriptorOp(ptr, [m, n], [stride, one], block_t).result
            alloc = tile.LocalAllocOp(tile.SharedType.get(ir.TypeAttr.get(bufs))).result
            buf_t = tile.SharedType.get(ir.TypeAttr.get(block))
            buf = tile.MemdescIndexOp(alloc, zero, buf_t).result
            copy = tile.AsyncTDMCopyGlobalToLocalOp(desc, buf)
            copy.operation.attributes["warp_used_hint"] = ir.IntegerAttr.get(i32, 0x0F)
        wait = tile.AsyncTDMWaitOp()
        wait.operation.attributes["num"] = ir.IntegerAttr.get(i32, 0)

    return _module(8, target, body, args)


def _load_store_kernel(elems: list[str], target: str):
    """Per element type: load_block and store_block of a 64x64 blocked block."""

    def args():
        i32, i64 = _ints()
        ptrs = [tile.PtrType.get(ir.TypeAttr.get(_element(e))) for e in elems]
        return [*ptrs, i32, i32, i64]

    def body(a):
        i32, i64 = _ints()
        m, n, stride = a[len(elems) :]
        one = arith.ConstantOp(i64, 1).result
        zero = arith.ConstantOp(i32, 0).result
        lanes = [4, 8] if TARGETS[target].warp_size == 32 else [8, 8]
        blocked = tile.BlockedAttr.build(
            size_per_thread=[1, 8], threads_per_warp=lanes, warps_per_cta=[4, 1], order=[1, 0]
        )
        for ptr, e in zip(a, elems, strict=False):
            t = ir.RankedTensorType.get([64, 64], _element(e), blocked)
            v = tile.LoadBlockOp(ptr, [m, n], [stride, one], [zero, zero], t).result
            tile.StoreBlockOp(ptr, [m, n], [stride, one], [zero, zero], v)

    return _module(4, target, body, args)


def _padded() -> tile.SharedLayoutAttr:
    return tile.PaddedSharedAttr.build(interval=64, amount=8, order=[1, 0])


def _unswizzled() -> tile.SharedLayoutAttr:
    return tile.SwizzledSharedAttr.build(vec=1, per_phase=1, max_phase=1, order=[1, 0])


def _partitioned() -> tile.SharedLayoutAttr:
    return tile.PartitionedSharedAttr.build(
        num_partitions=2, num_groups=1, partition_dim=0, layout=_padded()
    )


# ---- the sample -----------------------------------------------------------------------


def _sample() -> dict[str, Callable[[], str]]:
    gemm = (ROOT / "examples" / "gemm_gfx1250.mlir").read_text()
    cases: dict[str, Callable[[], str]] = {
        "gemm.mlir": lambda: gemm,
        "tdm_copies.mlir": lambda: (ROOT / "examples" / "tdm_copies.mlir").read_text(),
        "gemm.mlir, no target": lambda: _without_target(gemm),
        "gemm.py gfx950": lambda: _example().gemm.build_ir(num_warps=8, target="gfx950"),
        "gemm.py gfx942 128x128x32": lambda: _example().gemm.build_ir(
            num_warps=8, target="gfx942", BLOCK_K=32
        ),
        "gemm.py cuda:90": lambda: _example().gemm.build_ir(num_warps=8, target="cuda:90"),
    }
    # Two kernels, so that the double buffers of every element type fit LDS.
    narrow = [e for e, bits in tile.MEMORY_ELEMENT_BITS.items() if bits <= 16]
    wide = [e for e, bits in tile.MEMORY_ELEMENT_BITS.items() if bits > 16]
    cases["tdm copies of 8- and 16-bit types"] = lambda: _copy_kernel(narrow, _padded, "gfx1250")
    cases["tdm copies of 32- and 64-bit types"] = lambda: _copy_kernel(wide, _padded, "gfx1250")
    for target in TARGETS:
        cases[f"loads and stores of every element type, {target}"] = lambda target=target: (
            _load_store_kernel(
                [e for e in tile.GLOBAL_ELEMENT_BITS if e != "i1" or TARGETS[target].i1_memory],
                target,
            )
        )
    cases["tdm copy f16 unswizzled, no target"] = lambda: _copy_kernel(["f16"], _unswizzled)
    cases["tdm copy f16 partitioned"] = lambda: _copy_kernel(["f16"], _partitioned, "gfx1250")
    cases["tdm copy i8 padded, no target"] = lambda: _copy_kernel(["i8"], _padded)
    # Barriers and TDM stores: gfx1250 and cuda:90 take them, the verifier
    # refuses them for gfx950 and gfx942 (no TDM, no TMA).
    data = Path(__file__).resolve().parent / "data"
    for kernel in ("barrier_ring.mlir", "barrier_ops.mlir"):
        cases[f"{kernel}, no target"] = lambda kernel=kernel: (data / kernel).read_text()
    return cases


SAMPLE = _sample()


@pytest.mark.parametrize("name", list(SAMPLE))
def test_what_the_verifier_accepts_lowers_for_every_target_it_may_name(name):
    text = SAMPLE[name]()
    names_target = "tile.target" in text
    targets = _targets_of(text)
    assert targets and set(targets) <= set(TARGETS)
    refused = {}
    for target in targets:
        try:
            compile_tile_module(text, target)
        except TileCompileError as e:
            # Only the tile verifier may turn a module down, at a tile op,
            # and only for a target the module did not name.
            assert not names_target, f"{name} names {target} but does not compile: {e}"
            assert e.stage in ("parse", "convert") and e.line > 0, f"{target}: {e}"
            assert e.message.startswith("'tile."), f"{target}: not the verifier: {e}"
            refused[target] = e.message
    assert len(refused) < len(targets), f"{name} lowers for no target: {refused}"


def test_a_module_without_a_target_is_refused_at_the_op_for_a_target_it_does_not_fit():
    """The example GEMM's buffers (73,680 bytes) fit gfx1250, gfx950 and
    cuda:90 but not gfx942's 64 KiB; without tile.target the verifier accepts
    it, and compiling it for gfx942 is refused at the second buffer."""
    text = _without_target((ROOT / "examples" / "gemm_gfx1250.mlir").read_text())
    with pytest.raises(TileCompileError) as info:
        compile_tile_module(text, "gfx942")
    err = info.value
    assert err.stage == "convert"
    assert "73680 bytes" in err.message and "gfx942 has 65536" in err.message
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if '"tile.local_alloc"' in ln)
    assert err.line == line + 1  # the B buffer, right after the A buffer
