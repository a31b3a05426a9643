"""Barrier ops, barrier-tracked copies and TDM stores compiled by Triton 3.9.0.

``data/barrier_ring.mlir`` (a two-stage ring of barrier-tracked copies and a
TDM store) and ``data/barrier_ops.mlir`` (init, arrive, wait,
``tile.local_store`` and a TDM store) compile for gfx1250 (TDM on LDS
barriers) and cuda:90 (TMA on mbarriers). The assembly must hold the
instructions the lowering promises; the targets without TDM or TMA are
refused at the op.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gemm_opt.lowering.compile import TileCompileError, compile_tile_module

DATA = Path(__file__).resolve().parent / "data"
RING = (DATA / "barrier_ring.mlir").read_text()
OPS = (DATA / "barrier_ops.mlir").read_text()


def _lines(asm: str, mnemonic: str) -> list[str]:
    return [line.strip() for line in asm.splitlines() if line.strip().startswith(mnemonic)]


def test_ring_compiles_for_gfx1250_with_barrier_tracked_tdm():
    k = compile_tile_module(RING, "gfx1250")
    asm = k.asm["amdgcn"]
    # The prologue's copy and the loop's: TDM loads that arrive on LDS barriers.
    assert len(_lines(asm, "tensor_load_to_lds")) == 2
    assert len(_lines(asm, "tensor_store_from_lds")) == 1
    # Each barrier wait polls the barrier with a sleep: in the loop and after it.
    assert len(_lines(asm, "s_sleep")) == 2
    ttgir = k.asm["ttgir"]
    # 1 arrival (the expect) x 1 copy per expect x 4 warps.
    assert ttgir.count("amdg.init_barrier") == 2
    assert "amdg.init_barrier %" in ttgir and ", 4 :" in ttgir
    assert ttgir.count("barrier = %") == 2
    assert "amdg.arrive_barrier" not in ttgir  # each expect covers its one copy


def test_barrier_ops_compile_for_gfx1250():
    k = compile_tile_module(OPS, "gfx1250")
    asm = k.asm["amdgcn"]
    # The two arrivals: per-warp LDS barrier atomics.
    assert len(_lines(asm, "ds_atomic_barrier_arrive_rtn_b64")) == 2
    assert len(_lines(asm, "tensor_store_from_lds")) == 1
    assert _lines(asm, "s_wait_tensorcnt 0x0")


def test_barrier_ops_compile_for_cuda90_as_mbarrier_and_tma_store():
    k = compile_tile_module(OPS, "cuda:90")
    ptx = k.asm["ptx"]
    assert "mbarrier.init.shared::cta.b64" in ptx
    assert ptx.count("mbarrier.arrive.shared::cta.b64") == 2
    assert "mbarrier.try_wait.parity.shared::cta.b64" in ptx
    # The TMA store (global <- shared), behind the async-proxy fence, then its wait.
    lines = [line.split("//")[0].strip() for line in ptx.splitlines()]
    lines = [line for line in lines if line]
    store = [i for i, line in enumerate(lines) if "cp.async.bulk.tensor.2d.global.shared" in line]
    assert len(store) == 1
    fence = max(i for i in range(store[0]) if lines[i].startswith("fence.proxy.async.shared::cta"))
    # Nothing writes the buffer between the fence and the store.
    assert not [line for line in lines[fence : store[0]] if line.startswith("st.shared")]
    assert "cp.async.bulk.wait_group.read" in " ".join(lines[store[0] :])


def test_ring_compiles_for_cuda90_as_tma_with_mbarriers():
    ptx = compile_tile_module(RING, "cuda:90").asm["ptx"]
    assert ptx.count("mbarrier.init.shared::cta.b64") == 2
    assert ptx.count("mbarrier.arrive.expect_tx.shared::cta.b64") == 2
    loads = "cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes"
    assert ptx.count(loads) == 2
    assert ptx.count("mbarrier.try_wait.parity.shared::cta.b64") == 2
    assert ptx.count("cp.async.bulk.tensor.2d.global.shared::cta") == 1


@pytest.mark.parametrize("target", ["gfx950", "gfx942"])
def test_barriers_are_refused_without_tdm_or_tma(target):
    with pytest.raises(TileCompileError, match="needs TDM") as err:
        compile_tile_module(OPS, target)
    message = str(err.value)
    assert (
        f"a shared-memory barrier needs TDM (gfx1250) or TMA (cuda:90); {target} has neither"
        in message
    )
    alloc = 1 + next(i for i, line in enumerate(OPS.splitlines()) if "tile.barrier_alloc" in line)
    assert message.startswith(f"{alloc}:")  # at the tile op, before Triton runs


# ---- cuda:90: an expect the copies after it cannot complete ------------------------

#: One tracked 64x64 f16 copy (8192 bytes) after an expect, in four forms (``// -----``
#: cases): unpredicated, predicated, a second copy under ``scf.if``, no copy.
EXPECT_THEN_COPY = (DATA / "expect_then_copy.mlir").read_text().split("// -----")
COPY, PRED_COPY, NESTED_COPY, NO_COPY = range(4)


def _plan_cuda90(expect: int, case: int):
    from gemm_opt import dialect
    from gemm_opt.core.ext_compat import ir
    from gemm_opt.dialect.edit import ops_named
    from gemm_opt.lowering.barrier_plan import plan_barriers

    with dialect.make_context():
        module = ir.Module.parse(EXPECT_THEN_COPY[case])
        (op,) = ops_named(module, "tile.barrier_expect")
        op.attributes["bytes"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), expect)
        return plan_barriers(module.operation, 4, False)


@pytest.mark.parametrize("expect", [8191, 8193, 16384])
def test_cuda90_refuses_an_expect_its_copies_cannot_complete(expect: int) -> None:
    from gemm_opt.lowering.barrier_plan import BarrierRefusal

    with pytest.raises(
        BarrierRefusal, match=f"announces {expect}, the copies that follow it deliver 8192"
    ):
        _plan_cuda90(expect, COPY)
    assert _plan_cuda90(8192, COPY).storing == set()  # the exact count passes


@pytest.mark.parametrize("case", [PRED_COPY, NESTED_COPY, NO_COPY])
def test_cuda90_leaves_an_expect_unchecked_where_the_bytes_are_not_certain(case: int) -> None:
    """A predicated copy, a copy under scf.if, or copies issued elsewhere (none in the
    block): the bytes may be right at run time, so the expect is not refused."""
    _plan_cuda90(8193, case)
