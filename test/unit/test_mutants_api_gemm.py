"""The GEMM runtime's launch decisions (found by ``benchmarks/mutation.py``): the
resident program count, argument binding, which twins a kernel has, the memo of
kernel choices (keyed by exactly the facts the twins' checks read), the
prepared launch's workspace addresses, and the grid bounds.

Kernels are bundle kernels around stand-in binaries; the driver records
launches instead of running them and torch's CUDA queries are stand-ins (no
GPU needed). Each memo case checks the memoized pick against a fresh store's,
where the launch checks alone decide."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from support.fake_bundles import DeviceTensor, RecordingDriver, launch_kernel, write_store

from gemm_opt.core import schedules as S
from gemm_opt.runtime import Arg, Bundle, cuda
from gemm_opt.runtime import gemm as rt
from gemm_opt.runtime import launch as launcher
from gemm_opt.runtime.launch import MAX_GRID

PERSISTENT = S.KernelSpec("persistent", None, "none", "fp16", 128, 128, 64, 8, 4, None)
DATA_PARALLEL = S.KernelSpec("data-parallel", None, "none", "fp16", 64, 64, 64, 8, 4, 4)
STREAM_K = S.KernelSpec("stream-k", "linear", "none", "fp16", 64, 64, 64, 8, 4, 4)
WORK_STEALING = S.KernelSpec("work-stealing", None, "none", "fp16", 64, 64, 64, 8, 4, 4)
#: Scalars every twin accepts (multiples of 64 elements; M has no fact).
SHAPE = dict(M=100, N=256, K=512, lda=512, ldb=256, ldc=256)
ADDRESSES = dict(a=4096, b=8192, c=12288)


def _store_of(root: Path, args: Mapping[S.KernelSpec, tuple[Arg, ...]]) -> rt.KernelStore:
    """A cuda:90 store of kernels with the given arguments (in place of the spec's own)."""
    kernels = tuple(dataclasses.replace(launch_kernel(s), args=a) for s, a in args.items())
    (root / "cuda90").mkdir(parents=True)
    Bundle(kernels).write(root / "cuda90" / "schedules.bundle")
    return rt.KernelStore("cuda:90", root)


def _args(spec: S.KernelSpec, **changed: Arg) -> tuple[Arg, ...]:
    """``spec``'s kernel arguments (:func:`launch_kernel`'s), some replaced by name."""
    return tuple(changed.get(a.name, a) for a in launch_kernel(spec).args)


def _picks_like_the_checks(
    fresh: Any, plain: S.KernelSpec, calls: Iterable[tuple[Mapping[str, Any], S.KernelSpec]]
) -> None:
    """Run ``calls`` in order on one store (its memo filling) and check each pick is
    ``want`` and a memo-less store's. ``fresh()`` makes a store."""
    memo = fresh()
    for values, want in calls:
        kernel, args = rt.select_kernel(memo, plain, values)
        alone = rt.select_kernel(fresh(), plain, values)[0]
        assert kernel.name == alone.name == want.name, values
        assert args == [values[a.name] for a in kernel.spec.args]


def _fresh_stores(tmp_path: Path, make: Any) -> Any:
    """A maker of stores, each in a folder of its own under ``tmp_path``."""
    count = iter(range(1 << 30))
    return lambda: make(tmp_path / f"store{next(count)}")


# -- resident programs --


@pytest.fixture
def fake_devices(tmp_path: Path, monkeypatch) -> dict[str, Any]:
    """Three sm_90 devices of 132 SMs (device 2 current); each kernel's occupancy set
    by name; every device index the count is asked about recorded."""
    import torch

    asked: dict[str, Any] = {"capability": [], "properties": [], "occupancy": [], "per_sm": {}}
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 2)

    def capability(index):
        asked["capability"].append(index)
        return (9, 0)

    def properties(index):
        asked["properties"].append(index)
        return SimpleNamespace(multi_processor_count=132)

    def resident_per_sm(self, device=0):
        asked["occupancy"].append(device)
        return asked["per_sm"][self.name]

    monkeypatch.setattr(torch.cuda, "get_device_capability", capability)
    monkeypatch.setattr(torch.cuda, "get_device_properties", properties)
    monkeypatch.setattr(launcher.Kernel, "resident_per_sm", resident_per_sm)
    write_store(tmp_path, (PERSISTENT, *rt.twins(PERSISTENT)))
    monkeypatch.setenv(rt.BUNDLE_DIR_ENV, str(tmp_path))
    return asked


@pytest.mark.parametrize(
    ("occupancy", "want"),
    [
        ((3, 4, 2), 2 * 132),  # the twins' smallest: whichever runs is co-resident
        ((1, 4, 3), 132),
        ((2, 0, 2), 132),  # a kernel the driver says cannot fit still counts one per SM
    ],
)
def test_resident_programs_are_sms_times_the_least_occupancy(fake_devices, occupancy, want) -> None:
    kernels = (PERSISTENT, *rt.twins(PERSISTENT))
    fake_devices["per_sm"] = {s.name: n for s, n in zip(kernels, occupancy, strict=True)}
    assert rt.resident_programs(PERSISTENT, "cuda:1") == want
    assert fake_devices["occupancy"] == [1, 1, 1]


@pytest.mark.parametrize(("device", "index"), [("cuda", 2), ("cuda:0", 0), ("cuda:1", 1)])
def test_resident_programs_ask_the_named_device_else_the_current_one(
    fake_devices, device, index
) -> None:
    fake_devices["per_sm"] = {s.name: 2 for s in (PERSISTENT, *rt.twins(PERSISTENT))}
    assert rt.resident_programs(PERSISTENT, device) == 264
    asked = {i for k in ("capability", "properties", "occupancy") for i in fake_devices[k]}
    assert asked == {index}


# -- binding and twins --


def test_arguments_bind_by_name_and_specialized_ones_take_their_constant(tmp_path) -> None:
    args = (Arg("a", "*fp16", 16), Arg("BLOCK", "i32", constexpr=64), Arg("M", "i32"))
    bundled = dataclasses.replace(launch_kernel(PERSISTENT), args=args)
    assert rt.bind_arguments(bundled, "k", {"M": 7, "a": 4096, "N": 9}) == [4096, 64, 7]
    with pytest.raises(rt.KernelMissing, match=r"^k: the bundle's kernel takes argument 'M', "):
        rt.bind_arguments(bundled, "k", {"a": 4096})


def test_only_plain_specs_have_twins() -> None:
    tma, aligned = rt.twins(PERSISTENT)
    assert (tma.tma, tma.aligned, aligned.tma, aligned.aligned) == (True, True, False, True)
    assert rt.twins(aligned) == [] and rt.twins(tma) == []
    narrow = rt.twins(DATA_PARALLEL)[-1]
    assert narrow.vector_bytes == 4 and rt.twins(narrow) == []


# -- the memo of kernel choices --


def test_the_memo_tells_addresses_apart_at_both_ends_of_the_u64_range(tmp_path: Path) -> None:
    """Address 0 passes the twins' checks and 2**64 (no 64-bit address) fails them, as
    does -16: the memo keeps each on its side of the range."""
    tma, _ = rt.twins(PERSISTENT)
    fresh = _fresh_stores(tmp_path, lambda r: write_store(r, (PERSISTENT, *rt.twins(PERSISTENT))))
    calls = [
        ({**ADDRESSES, **SHAPE, "a": -16}, PERSISTENT),
        ({**ADDRESSES, **SHAPE, "a": 0}, tma),
        ({**ADDRESSES, **SHAPE, "a": 2**64}, PERSISTENT),
        ({**ADDRESSES, **SHAPE, "a": 2**64 - 16}, tma),
    ]
    _picks_like_the_checks(fresh, PERSISTENT, calls)


def test_the_memo_tells_addresses_apart_where_no_twin_states_alignment(tmp_path: Path) -> None:
    """A twin without a divisibility fact on ``a`` takes any 64-bit address, the
    last one, 2**64 - 1, included, and no larger one."""
    (_, aligned) = rt.twins(PERSISTENT)
    unaligned_a = Arg("a", "*fp16")
    args = {PERSISTENT: _args(PERSISTENT), aligned: _args(aligned, a=unaligned_a)}
    fresh = _fresh_stores(tmp_path, lambda r: _store_of(r, args))
    calls = [
        ({**ADDRESSES, **SHAPE, "a": 2**64 - 1}, aligned),
        ({**ADDRESSES, **SHAPE, "a": 2**64}, PERSISTENT),
        ({**ADDRESSES, **SHAPE, "a": 3}, aligned),
    ]
    _picks_like_the_checks(fresh, PERSISTENT, calls)


def test_the_memo_tells_integers_apart_at_both_ends_of_their_range(tmp_path: Path) -> None:
    """M (no divisibility fact) is an i32: 2**31 - 1 and -2**31 pass the twins'
    checks, one past either end fails them (the TMA twin wants M >= 1, so the
    aligned twin takes the negative ones)."""
    tma, aligned = rt.twins(PERSISTENT)
    fresh = _fresh_stores(tmp_path, lambda r: write_store(r, (PERSISTENT, *rt.twins(PERSISTENT))))
    calls = [
        ({**ADDRESSES, **SHAPE, "M": 2**31}, PERSISTENT),
        ({**ADDRESSES, **SHAPE, "M": 2**31 - 1}, tma),
        ({**ADDRESSES, **SHAPE, "M": -(2**31) - 1}, PERSISTENT),
        ({**ADDRESSES, **SHAPE, "M": -(2**31)}, aligned),
    ]
    _picks_like_the_checks(fresh, PERSISTENT, calls)


def test_the_memo_keeps_every_range_the_twins_check(tmp_path: Path) -> None:
    """Twins that take M as different integer types: 2**31 fits only the aligned
    twin's i64, 2**63 neither."""
    tma, aligned = rt.twins(PERSISTENT)
    args = {
        PERSISTENT: _args(PERSISTENT, M=Arg("M", "i64")),
        tma: _args(tma),
        aligned: _args(aligned, M=Arg("M", "i64")),
    }
    fresh = _fresh_stores(tmp_path, lambda r: _store_of(r, args))
    calls = [
        ({**ADDRESSES, **SHAPE}, tma),
        ({**ADDRESSES, **SHAPE, "M": 2**31}, aligned),
        ({**ADDRESSES, **SHAPE, "M": 2**63}, PERSISTENT),
    ]
    _picks_like_the_checks(fresh, PERSISTENT, calls)


def test_the_memo_tells_apart_what_only_a_two_element_fact_decides(tmp_path: Path) -> None:
    """With only the 4-byte twin bundled, the strides' one fact is divisibility by 2
    fp16 elements: an odd stride takes the plain kernel after an even one took the twin."""
    narrow = rt.twins(DATA_PARALLEL)[-1]
    assert narrow.facts["lda"] == 2
    fresh = _fresh_stores(tmp_path, lambda r: write_store(r, (DATA_PARALLEL, narrow)))
    calls = [
        ({**ADDRESSES, **SHAPE, "K": 514, "lda": 514}, narrow),
        ({**ADDRESSES, **SHAPE, "K": 514, "lda": 515}, DATA_PARALLEL),
    ]
    _picks_like_the_checks(fresh, DATA_PARALLEL, calls)


def test_the_memo_follows_tensors_address_and_dtype(tmp_path: Path) -> None:
    """Tensors are keyed by their dtype, device and address remainder: a tensor 8 bytes
    off the twins' 16-byte facts, or of another dtype, takes the plain kernel."""
    import torch

    tma, _ = rt.twins(PERSISTENT)
    fresh = _fresh_stores(tmp_path, lambda r: write_store(r, (PERSISTENT, *rt.twins(PERSISTENT))))

    def tensors(a: int = 4096, dtype: Any = None) -> dict[str, Any]:
        return dict(a=DeviceTensor(a, dtype), b=DeviceTensor(8192), c=DeviceTensor(12288))

    calls = [
        ({**tensors(), **SHAPE}, tma),
        ({**tensors(4104), **SHAPE}, PERSISTENT),
        ({**tensors(8192), **SHAPE}, tma),
        ({**tensors(dtype=torch.bfloat16), **SHAPE}, PERSISTENT),
    ]
    _picks_like_the_checks(fresh, PERSISTENT, calls)


def test_the_memo_takes_float_scalars_by_value(tmp_path: Path) -> None:
    """A kernel may take a float scalar: it keys the memo by its value (no range)."""
    (_, aligned) = rt.twins(PERSISTENT)
    alpha = Arg("alpha", "fp32")
    args = {s: (*_args(s), alpha) for s in (PERSISTENT, aligned)}
    fresh = _fresh_stores(tmp_path, lambda r: _store_of(r, args))
    calls = [
        ({**ADDRESSES, **SHAPE, "alpha": 0.5}, aligned),
        ({**ADDRESSES, **SHAPE, "alpha": 0.5, "lda": 516}, PERSISTENT),
        ({**ADDRESSES, **SHAPE, "alpha": 1e300}, PERSISTENT),  # past fp32: no kernel takes it
    ]
    _picks_like_the_checks(fresh, PERSISTENT, calls)


def test_a_call_whose_facts_were_seen_skips_the_twins_checks(tmp_path: Path, monkeypatch) -> None:
    st = write_store(tmp_path, (PERSISTENT, *rt.twins(PERSISTENT)))
    checked: list[str] = []
    accepts = launcher.Kernel.accepts

    def counting(self, *args):
        checked.append(self.name)
        return accepts(self, *args)

    monkeypatch.setattr(launcher.Kernel, "accepts", counting)
    values = {**ADDRESSES, **SHAPE, "lda": 516}  # the twins fail: both are checked
    assert rt.select_kernel(st, PERSISTENT, values)[0].name == PERSISTENT.name
    assert checked == [t.name for t in rt.twins(PERSISTENT)]
    moved = {**values, "a": 65536, "M": 7}  # other values, the same facts
    assert rt.select_kernel(st, PERSISTENT, moved)[0].name == PERSISTENT.name
    assert len(checked) == 2, "a memo hit checks no twin"


def test_the_memo_holds_at_most_its_size(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(rt, "SELECTION_MEMO_SIZE", 3)
    st = write_store(tmp_path, (PERSISTENT, *rt.twins(PERSISTENT)))
    sizes = []
    for lda in (512, 516, 514, 513, 515):  # remainders 0, 4, 2, 1, 3 by the facts' lcm, 8
        rt.select_kernel(st, PERSISTENT, {**ADDRESSES, **SHAPE, "lda": lda})
        sizes.append(len(st._selections))
    assert sizes == [1, 2, 3, 1, 2]  # full: cleared before the next entry


# -- prepared launches --


@pytest.fixture
def recording(tmp_path: Path, monkeypatch) -> SimpleNamespace:
    """The launch path on a recording driver: workspaces on the CPU (recorded), every
    launch's grid and parameters recorded; a store per spec under ``tmp_path``."""
    import torch

    drv = RecordingDriver()
    monkeypatch.setattr(cuda, "driver", lambda: drv)
    monkeypatch.setattr(launcher, "_current_stream", lambda torch, device: 0)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    workspaces: list[Any] = []
    allocate = rt.allocate_workspace

    def on_cpu(torch, layout, device):
        ws = allocate(torch, layout, "cpu")
        workspaces.append(ws[0])
        return ws

    monkeypatch.setattr(rt, "allocate_workspace", on_cpu)

    def use(*specs: S.KernelSpec, args: Mapping[S.KernelSpec, tuple[Arg, ...]] | None = None):
        root = tmp_path / specs[0].name
        if args is None:
            write_store(root, specs)
        else:
            _store_of(root, args)
        monkeypatch.setenv(rt.BUNDLE_DIR_ENV, str(root))

    return SimpleNamespace(driver=drv, workspaces=workspaces, use=use)


def _tensors(base: int = 65536) -> dict[str, DeviceTensor]:
    return {n: DeviceTensor(base + i * 4096) for i, n in enumerate("abc")}


def _address(param: bytes) -> int:
    return int.from_bytes(param[:8], "little")


@pytest.mark.parametrize("spec", [STREAM_K, WORK_STEALING], ids=lambda s: s.kind)
def test_each_launch_passes_its_own_workspace_addresses(recording, spec) -> None:
    """The counters and flags at the workspace's start, stream-K's partials at their
    offset in it (work-stealing takes no partials argument)."""
    recording.use(spec)
    made = rt.prepare_launch(
        spec, {**_tensors(), **SHAPE}, num_programs=8, total_tiles=8, target="cuda:90",
        names=("a", "b", "c"),
    )  # fmt: skip
    layout = S.workspace_layout(spec.kind, spec.reduction, 8, 1, 64, 64)
    ps, pp = made.sync_slots
    assert ps is not None and (pp is None) == (spec is WORK_STEALING)
    for base in (1 << 20, 1 << 40):
        made(*_tensors(base).values())
        params, workspace = recording.driver.params[-1], recording.workspaces[-1]
        assert _address(params[ps]) == workspace.data_ptr() != 0
        if pp is not None:
            want = workspace.data_ptr() + layout.partials_byte_offset
            assert _address(params[pp]) == want
        assert [_address(params[made.slots[i]]) for i in range(3)] == [
            base + i * 4096 for i in range(3)
        ]


@pytest.mark.parametrize("count", [2, 4])
def test_a_prepared_launch_takes_exactly_its_tensors(recording, count) -> None:
    """C first among the names: a call short of a tensor must not launch on the
    first call's stale address of the one it lacks, nor one with too many."""
    recording.use(PERSISTENT)
    names = ("c", "a", "b")
    made = rt.prepare_launch(
        PERSISTENT, {**_tensors(), **SHAPE}, num_programs=8, total_tiles=8, target="cuda:90",
        names=names,
    )  # fmt: skip
    tensors = [_tensors(1 << 20)[n] for n in names] + [DeviceTensor(0)]
    with pytest.raises(
        ValueError, match=r"^zip\(\) argument 2 is (shorter|longer) than argument 1$"
    ):
        made(*tensors[:count])
    assert recording.driver.grids == []


@pytest.mark.parametrize("tiles", [0, 1, MAX_GRID[0]])
def test_a_grid_may_be_empty_or_as_large_as_the_launch_limit(recording, tiles) -> None:
    recording.use(DATA_PARALLEL)
    values = {**_tensors(), **SHAPE}
    made = rt.prepare_launch(
        DATA_PARALLEL, values, num_programs=8, total_tiles=tiles, target="cuda:90"
    )
    assert made.grid == (tiles, 1, 1)
    made(values["c"])
    assert recording.driver.grids == ([] if tiles == 0 else [(tiles, 1, 1)])


def test_a_grid_past_the_launch_limit_is_refused(recording) -> None:
    recording.use(DATA_PARALLEL)
    with pytest.raises(ValueError, match=rf"a grid of {MAX_GRID[0] + 1} programs is past the"):
        rt.prepare_launch(
            DATA_PARALLEL, {**_tensors(), **SHAPE}, num_programs=8,
            total_tiles=MAX_GRID[0] + 1, target="cuda:90",
        )  # fmt: skip


def test_a_kernel_without_tensor_arguments_launches_on_the_current_device(
    recording, monkeypatch
) -> None:
    """Addresses given as integers name no device: the launch takes the current one."""
    import torch

    monkeypatch.setattr(torch.cuda, "current_device", lambda: 3)
    args = tuple(a for a in _args(PERSISTENT) if a.name != "c")  # C would name its device
    recording.use(PERSISTENT, args={PERSISTENT: args})
    values = {**_tensors(), "a": 4096, "b": 8192, **SHAPE}
    made = rt.prepare_launch(PERSISTENT, values, num_programs=8, total_tiles=8, target="cuda:90")
    assert made.device == 3
