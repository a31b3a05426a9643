"""Every limit at its exact boundary: the value at the limit is taken, one past it is not.

Shared memory per target at the byte (the verifier, the ISA report's K block, the bundle
launcher's opt-in), threads per block per target (the verifier, the front end, warp
specialization's workers), the stream-K split's fallback and aligned-count rules at N-1,
N and N+1, and the occupancy of a kernel with twins (the worst one's). Each case pins one
comparison, so an off-by-one in it fails.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from types import SimpleNamespace

import pytest
import support.tile_build as tb
from support.bundle_docs import full_kernel
from support.fake_bundles import RecordingDriver, launch_kernel

import gemm_opt.language as tl
from gemm_opt.core import schedules as S
from gemm_opt.core.diagnostics import collect
from gemm_opt.core.ext_compat import MLIRError, ir
from gemm_opt.core.targets import TARGETS
from gemm_opt.dialect import make_context, tile
from gemm_opt.runtime import Bundle, cuda
from gemm_opt.runtime.launch import Kernel

ROOT = Path(__file__).resolve().parents[2]

# ---- shared memory per target, at the byte ---------------------------------------------


def _alloc_errors(target: str, shapes: list[list[int]]) -> list[str]:
    """The verifier's errors for a kernel of ``target`` allocating i8 buffers of ``shapes``."""
    with make_context() as ctx, ir.Location.unknown():
        layout = tile.SwizzledSharedAttr.build(vec=1, per_phase=1, max_phase=1, order=[1, 0])
        i8 = ir.IntegerType.get_signless(8)
        k = tb.kernel([], num_warps=4, target=target)
        with k.ip:
            for shape in shapes:
                tile.LocalAllocOp(tb.shared_type(tb.block_type(shape, i8, layout)))
        with collect(ctx) as diags:
            try:
                k.module.operation.verify()
            except MLIRError:
                return [d.message for d in diags]
        return []


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_one_buffer_of_exactly_the_targets_shared_memory(target: str) -> None:
    cap = TARGETS[target].shared_memory_bytes
    assert _alloc_errors(target, [[cap // 1024, 1024]]) == []
    assert _alloc_errors(target, [[1, cap + 1]]) == [
        f"'tile.local_alloc' op a 1x{cap + 1} buffer takes {cap + 1} bytes of shared memory, "
        f"but {target} has {cap} per workgroup"
    ]


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_a_functions_buffers_together_at_the_byte(target: str) -> None:
    cap = TARGETS[target].shared_memory_bytes
    rows = cap // 1024
    assert _alloc_errors(target, [[rows - 1, 1024], [1, 1023], [1, 1]]) == []  # cap exactly
    assert _alloc_errors(target, [[rows - 1, 1024], [1, 1024], [1, 1]]) == [
        f"'tile.local_alloc' op the function's shared buffers take {cap + 1} bytes up to this "
        f"1x1 buffer ({cap} before it), but {target} has {cap} per workgroup"
    ]


# ---- threads per block per target ------------------------------------------------------


@tl.kernel
def _one_program(M: tl.int32):
    tl.program_id(0) + M


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_threads_per_block_at_the_targets_limit(target: str) -> None:
    """The most warps a block of the target launches is taken by the verifier and the
    front end; the next power of two (the verifier's) or one more warp (the front end's)
    is refused."""
    t = TARGETS[target]
    warps = t.max_threads_per_block // t.warp_size
    tile.check_num_warps(warps, [t])
    with pytest.raises(tile.VerifyError, match=f"but {target} launches at most 1024"):
        tile.check_num_warps(2 * warps, [t])
    _one_program.build_module(num_warps=warps, target=target)
    with pytest.raises(tl.CompilationError, match="a program launches at most 1024"):
        _one_program.build_module(num_warps=warps + 1, target=target)


def _default_partition() -> None:
    pass


def _worker(m) -> None:
    pass


@tl.kernel
def _specialized(M: tl.int32, WORKERS: tl.constexpr = None):
    tl.warp_specialize(
        [(_default_partition, ()), *[(_worker, (M,)) for _ in WORKERS]], list(WORKERS)
    )


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_warp_specialized_warps_at_the_targets_limit(target: str) -> None:
    """The function's warps plus every worker's fill the block exactly: taken; one more
    worker warp: refused, naming the count."""
    t = TARGETS[target]
    limit = t.max_threads_per_block // t.warp_size
    half, quarter = limit // 2, limit // 4
    _specialized.build_module(num_warps=half, target=target, WORKERS=(quarter, quarter))
    with pytest.raises(tl.CompilationError, match=rf"needs {limit + 1} warps .* at most {limit}"):
        _specialized.build_module(num_warps=half, target=target, WORKERS=(quarter, quarter, 1))


def test_threads_per_block_without_a_target_take_the_most_any_launches() -> None:
    wide, narrow = TARGETS["gfx1250"], TARGETS["gfx950"]  # 32 and 16 warps
    tile.check_num_warps(32, [narrow, wide])
    with pytest.raises(tile.VerifyError, match=r"gfx1250 launches at most 1024 \(at most 32"):
        tile.check_num_warps(64, [narrow, wide])


def test_isa_report_halves_the_k_block_at_the_byte(monkeypatch) -> None:
    """The example GEMM's buffers take 73,680 bytes (BLOCK_K=64) and 38,864 (32):
    a target of exactly that much keeps the block."""
    from gemm_opt.tools import isa_report

    gemm = (ROOT / "examples" / "gemm_gfx1250.mlir").read_text()

    def fitting(cap: int) -> int | None:
        table = {"gfx942": dataclasses.replace(TARGETS["gfx942"], shared_memory_bytes=cap)}
        monkeypatch.setattr(isa_report, "_TARGETS", table)
        return isa_report.fitting_block_k(gemm, "gfx942")

    assert fitting(73680) is None
    assert fitting(73679) == 32
    assert fitting(38864) == 32


class SharedMemoryDriver(RecordingDriver):
    """A device that lets a kernel opt in to ``limit`` bytes; binaries have ``static``
    bytes of static shared memory. Records the opt-ins."""

    def __init__(self, limit: int, static: int = 0) -> None:
        super().__init__()
        self.limit, self.static = limit, static
        self.opt_ins: list[int] = []

    def device_attribute(self, attribute: int, ordinal: int) -> int:
        assert attribute == cuda.DEV_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
        return self.limit

    def function_attribute(self, fn: object, attribute: int) -> int:
        assert attribute == cuda.FUNC_SHARED_SIZE_BYTES
        return self.static

    def set_function_attribute(self, fn: object, attribute: int, value: int) -> None:
        assert attribute == cuda.FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES
        self.opt_ins.append(value)

    def unload_module(self, module: object) -> None:
        pass


def _load(monkeypatch, shared: int, limit: int, static: int = 0) -> SharedMemoryDriver:
    drv = SharedMemoryDriver(limit, static)
    monkeypatch.setattr(cuda, "driver", lambda: drv)
    Kernel(full_kernel(shared_bytes=shared)).resident_per_sm(0)  # loads the binary
    return drv


def test_the_launcher_opts_in_above_the_default_and_refuses_past_the_device(monkeypatch) -> None:
    default, h100 = cuda.DEFAULT_SHARED_LIMIT, TARGETS["cuda:90"].shared_memory_bytes
    assert _load(monkeypatch, default, h100).opt_ins == []  # 48 KiB needs no opt-in
    assert _load(monkeypatch, default + 1, h100).opt_ins == [default + 1]
    assert _load(monkeypatch, h100, h100).opt_ins == [h100]
    assert _load(monkeypatch, h100 - 16, h100, static=16).opt_ins == [h100 - 16]
    with pytest.raises(cuda.DeviceError, match=f"needs {h100 + 1} bytes .* allows {h100}"):
        _load(monkeypatch, h100 - 15, h100, static=16)


# ---- stream-K: the fallback and the aligned program count ----------------------------


@pytest.mark.parametrize(
    ("tiles", "ipt", "programs", "split"),
    [
        # 4 tiles of 2 iterations: 8 iterations against P programs
        (4, 2, 7, (0, 4, 1, 1)),  # P = 7 < 8: stream-K, one program takes 2
        (4, 2, 8, (0, 4, 1, 0)),  # P = 8 = 8: one iteration each, still stream-K
        (4, 2, 9, (4, 0, 0, 0)),  # P = 9 > 8: some program would idle: data-parallel
        # T = P - 1, P, P + 1 (4 programs, 4 iterations a tile) and two waves + 1
        (3, 4, 4, (0, 3, 3, 0)),
        (4, 4, 4, (4, 0, 0, 0)),  # whole waves
        (5, 4, 4, (0, 5, 5, 0)),  # the full wave joins the ragged one: P + T % P
        (9, 4, 4, (4, 5, 5, 0)),
        (8, 4, 4, (8, 0, 0, 0)),
    ],
)
def test_stream_k_split_at_its_boundaries(tiles, ipt, programs, split) -> None:
    part = S.stream_k_partition(tiles, ipt, programs)
    assert (part.dp_tiles, part.sk_tiles, part.q, part.r) == split
    assert part.fallback == (split[1] == 0)
    assert not part.fallback or part.sk_range(programs - 1) == (0, 0)


@pytest.mark.parametrize(
    ("tiles", "ipt", "programs", "aligned"),
    [
        (16, 128, 128, True),  # q = 16 divides 128, r = 0
        (16, 128, 132, False),  # q = 15, r = 68
        (16, 128, 127, False),  # q = 16, r = 16: one iteration more for some
        (16, 96, 128, True),  # q = 12 divides 96
        (16, 100, 128, False),  # q = 12, r = 64
        (17, 12, 16, False),  # q = 12 = ipt, but r = 12
        (5, 4, 4, False),  # q = 5 = ipt + 1, r = 0: neither divides
        (4, 2, 8, True),  # q = 1
        (4, 4, 4, False),  # whole waves: no stream-K phase (and no division by q = 0)
        (4, 2, 9, False),  # fallback
    ],
)
def test_aligned_at_its_boundaries(tiles, ipt, programs, aligned) -> None:
    assert S.stream_k_partition(tiles, ipt, programs).aligned is aligned


def test_aligned_program_count_window_ends_exactly_at_its_slack() -> None:
    """The window is [ceil(0.9 x 132) = 119, 132]: a count of exactly 119 is taken,
    one of 118 is not (the maximum is kept)."""
    low = math.ceil(S.STREAM_K_ALIGN_SLACK * 132)
    assert low == 119
    aligned = [p for p in range(1, 133) if S.stream_k_partition(7, 34, p).aligned]
    assert [p for p in aligned if p >= low] == [119]
    assert S.aligned_stream_k_programs(7, 34, 132) == 119
    aligned = [p for p in range(1, 133) if S.stream_k_partition(59, 4, p).aligned]
    assert low - 1 in aligned and not [p for p in aligned if p >= low]
    assert S.aligned_stream_k_programs(59, 4, 132) == 132
    # the largest aligned count wins, the maximum itself included
    assert S.aligned_stream_k_programs(16, 128, 128) == 128
    # slack is in (0, 1]: 1 allows only the maximum
    assert S.aligned_stream_k_programs(7, 34, 132, slack=1) == 132
    assert S.aligned_stream_k_programs(7, 34, 132, slack=119 / 132) == 119
    assert S.aligned_stream_k_programs(7, 34, 132, slack=118.5 / 132) == 119
    with pytest.raises(ValueError, match="slack must be in"):
        S.aligned_stream_k_programs(7, 34, 132, slack=1 + 1e-9)
    # no stream-K phase at the maximum (9 iterations for 10 programs): kept, although
    # 9 programs would each take one
    assert S.stream_k_partition(3, 3, 10).fallback and S.stream_k_partition(3, 3, 9).aligned
    assert S.aligned_stream_k_programs(3, 3, 10) == 10


# ---- occupancy: the worst twin's ------------------------------------------------------


class OccupancyDriver(RecordingDriver):
    """Each binary (told by its bytes) holds ``per_sm[binary]`` CTAs per SM."""

    def __init__(self, per_sm: dict[bytes, int]) -> None:
        super().__init__()
        self.per_sm = per_sm

    def load_module(self, image: bytes) -> bytes:
        return bytes(image)

    def function(self, module: bytes, symbol: str) -> bytes:
        return module

    def resident_blocks(self, fn: bytes, threads: int, shared_bytes: int) -> int:
        return self.per_sm[fn]


# A persistent kernel (its grid is the resident programs): TMA and aligned twins, no narrow ones.
PLAIN = S.KernelSpec("persistent", None, "none", "fp16", 64, 64, 64, 8, 4, 4)


@pytest.mark.parametrize(
    ("plain", "tma", "aligned", "per_sm"),
    [(3, 1, 2, 1), (1, 3, 2, 1), (2, 3, 1, 1), (2, 2, 2, 2), (4, 0, 2, 1), (0, 0, 0, 1)],
)
def test_resident_programs_take_the_worst_twin(
    tmp_path: Path, monkeypatch, plain, tma, aligned, per_sm
) -> None:
    """Whichever twin a launch picks must fit the grid, so the count is 132 x the least
    occupancy of the kernel and its twins (at least one CTA per SM)."""
    import torch

    from gemm_opt.runtime import gemm as rt

    specs = (PLAIN, *rt.twins(PLAIN))
    assert [s.tma for s in specs] == [False, True, False] and specs[2].aligned
    kernels = [
        dataclasses.replace(launch_kernel(s), binary=b"\x7fELF" + s.name.encode()) for s in specs
    ]
    (tmp_path / "cuda90").mkdir()
    Bundle(tuple(kernels)).write(tmp_path / "cuda90" / "schedules.bundle")
    monkeypatch.setenv(rt.BUNDLE_DIR_ENV, str(tmp_path))
    occupancy = dict(zip((k.binary for k in kernels), (plain, tma, aligned), strict=True))
    monkeypatch.setattr(cuda, "driver", lambda: OccupancyDriver(occupancy))
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (9, 0))
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: "NVIDIA H100")
    monkeypatch.setattr(
        torch.cuda,
        "get_device_properties",
        lambda device=None: SimpleNamespace(multi_processor_count=132),
    )
    assert rt.resident_programs(PLAIN, "cuda:0") == 132 * per_sm
