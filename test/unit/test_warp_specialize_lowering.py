"""Warp specialization compiled for cuda:90 and gfx1250.

The kernel is the model's producer/consumer ring
(``data/warp_specialize_ring.mlir``: a one-warp producer partition fills a
two-slot ring with barrier-tracked copies, the default partition waits on the
barriers and reads). Variants set the partition's ``num_warps`` and
``num_regs`` with the IR bindings.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gemm_opt.core.ext_compat import ir
from gemm_opt.dialect import make_context
from gemm_opt.dialect.edit import ops_named
from gemm_opt.lowering.compile import TileCompileError, compile_tile_module

DATA = Path(__file__).resolve().parent / "data" / "warp_specialize_ring.mlir"
#: The lit case of a warp_specialize without barriers (no target can refuse those first).
INVALID = DATA.parents[2] / "lit" / "lowering" / "convert-warp-specialize-invalid.mlir"


def _variant(num_warps: int, num_regs: int | None = None) -> str:
    with make_context():
        module = ir.Module.parse(DATA.read_text())
        (worker,) = ops_named(module, "tile.warp_partition")
        i32 = ir.IntegerType.get_signless(32)
        worker.attributes["num_warps"] = ir.IntegerAttr.get(i32, num_warps)
        if num_regs is not None:
            worker.attributes["num_regs"] = ir.IntegerAttr.get(i32, num_regs)
        return str(module)


def _lines(asm: str, mnemonic: str) -> list[str]:
    return [line.strip() for line in asm.splitlines() if line.strip().startswith(mnemonic)]


def test_cuda90_producer_warp_gives_registers_back():
    k = compile_tile_module(_variant(1, 24), "cuda:90")
    ttgir = k.asm["ttgir"]
    assert "ttg.warp_specialize(" in ttgir
    assert "requestedRegisters = array<i32: 24>" in ttgir
    assert "num_warps(1)" in ttgir
    ptx = k.asm["ptx"]
    # The producer warp drops to 24 registers, the default partition's warps take more.
    assert _lines(ptx, "setmaxnreg.dec.sync.aligned.u32")
    assert all(line.endswith("24;") for line in _lines(ptx, "setmaxnreg.dec.sync.aligned.u32"))
    assert _lines(ptx, "setmaxnreg.inc.sync.aligned.u32")
    # The producer's copy is TMA on the ready barrier; both partitions wait on barriers.
    assert "cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes" in ptx
    assert len(_lines(ptx, "mbarrier.try_wait.parity.shared::cta.b64")) >= 2
    assert ".local" not in ptx


def test_cuda90_without_num_regs_sets_no_registers():
    ptx = compile_tile_module(_variant(1), "cuda:90").asm["ptx"]
    assert "setmaxnreg" not in ptx
    assert ".local" not in ptx


def test_gfx1250_producer_partition_compiles_to_tdm():
    k = compile_tile_module(_variant(4), "gfx1250")
    ttgir = k.asm["ttgir"]
    assert "ttg.warp_specialize(" in ttgir
    assert "num_warps(4)" in ttgir
    assert "warpGroupStartIds = array<i32: 4>" in ttgir  # the worker's warps follow the default's
    asm = k.asm["amdgcn"]
    assert _lines(asm, "tensor_load_to_lds")
    assert _lines(asm, "s_sleep")  # barrier waits poll


def test_gfx1250_worker_arriving_with_fewer_warps_is_a_located_error():
    with pytest.raises(
        TileCompileError, match="on gfx1250 a barrier arrival must come from 4 warps"
    ):
        compile_tile_module(_variant(1), "gfx1250")


@pytest.mark.parametrize("target", ["gfx950", "gfx942"])
def test_no_warp_specialization_without_triton_support(target):
    text = (
        Path(__file__).resolve().parent.parent
        / "lit"
        / "lowering"
        / "convert-warp-specialize-invalid.mlir"
    ).read_text()
    with pytest.raises(TileCompileError, match=f"warp specialization has no lowering on {target}"):
        compile_tile_module(text, target)
