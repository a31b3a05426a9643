"""Host time per call of the CUDA path, measured on the CPU (no GPU, no compiler).

The GPU kernel of a small GEMM is shorter than the Python that launches it, so
the host cost per call decides decode-sized shapes. This measures it in two
parts, with CPU stand-ins for what only a GPU has:

* ``api``: ``gemm_opt.matmul`` through the ``torch.ops.gemm_opt`` operator (as
  traced, grad-requiring or profiled calls go), as plain eager CUDA calls go
  (the dispatcher skipped: :func:`gemm_opt.torch_ops._direct`), and
  a signature's first call (the plan cache emptied before each:
  :func:`gemm_opt.runtime.plan.clear_plans`) on CPU tensors taken for CUDA
  ones, up to :func:`gemm_opt.runtime.gemm.launch`, which is replaced by a
  no-op (as the tests' CUDA stand-in does);
* ``launch``: :func:`gemm_opt.runtime.gemm.launch` itself (store, kernel
  choice among twins, binding, workspace, grid, the launcher's checks and
  packing) on a bundle of the tests' stand-in kernels with a driver that
  counts launches (``test/support/fake_bundles.py``), and device addresses
  for the operands.

``api`` + ``launch`` is the host cost of gemm-opt's own code per call; the
operator's dispatch is the difference between the operator and eager rows.
A call whose signature (shapes, strides, dtypes, device, keywords, address
divisibility) was seen launches its plan's :class:`~gemm_opt.runtime.gemm.Prepared`
launch: its cost is the eager ``api`` row plus the ``rt.Prepared`` row; a
first call's is the ``first call`` row plus ``rt.launch``.

    python benchmarks/host_overhead.py [--calls 2000] [--m 512 --n 512 --k 8192]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

import gemm_opt
from gemm_opt import torch_ops
from gemm_opt.core import schedules as S
from gemm_opt.runtime import cuda
from gemm_opt.runtime import gemm as rt
from gemm_opt.runtime import launch as launcher
from gemm_opt.runtime import plan as plans

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test"))
from support.fake_bundles import DeviceTensor, RecordingDriver, write_store

DTYPE = {"fp16": torch.float16, "bf16": torch.bfloat16}


class _CountingDriver(RecordingDriver):
    """The tests' stand-in driver, counting launches only (recording their parameter
    bytes would be timed too)."""

    launches = 0

    def launch_packed(self, *args: Any) -> None:
        self.launches += 1


class _DeviceGuard:
    """``torch.cuda.device`` without a device to switch to (resolves the index, as it does)."""

    def __init__(self, device: Any) -> None:
        self.idx = torch.cuda._get_device_index(device, optional=True)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        pass


def _per_call_us(fn: Any, calls: int) -> float:
    for _ in range(max(calls // 10, 10)):  # warm: memos, first loads
        fn()
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - t0) / calls)
    return best * 1e6


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--calls", type=int, default=2000)
    p.add_argument("--m", type=int, default=512)
    p.add_argument("--n", type=int, default=512)
    p.add_argument("--k", type=int, default=8192)
    p.add_argument("--dtype", choices=DTYPE, default="bf16")
    args = p.parse_args()
    m, n, k, dt = args.m, args.n, args.k, DTYPE[args.dtype]

    # CPU tensors taken for CUDA ones on a 132-SM cuda:90 device (the tests' stand-in).
    kind_of = plans.kind_of
    plans.kind_of = lambda x, name: "cuda" if kind_of(x, name) == "torch-cpu" else kind_of(x, name)
    rt.resident_programs = lambda spec, device, target="cuda:90": 132
    rt.sm_count = lambda torch, device: 132
    torch.cuda.get_device_capability = lambda device=None: (9, 0)
    specs: list[tuple[S.KernelSpec, dict[str, Any], int, int]] = []
    real_launch = rt.launch

    def record(spec, values, *, num_programs, total_tiles, target=None, prepare=None):
        specs.append((spec, values, num_programs, total_tiles))
        return None if prepare is None else lambda *tensors: None  # a no-op prepared launch

    rt.launch = record
    a = torch.zeros(m, k, dtype=dt)
    b = torch.zeros(k, n, dtype=dt)
    rows = []
    for schedule in ("data-parallel", "auto"):
        torch_ops._DIRECT_DEVICE = "cuda"  # CPU tensors: through the dispatcher
        rows.append(
            (f"api: gemm_opt.matmul (operator), {schedule}",
             _per_call_us(lambda s=schedule: gemm_opt.matmul(a, b, schedule=s), args.calls))
        )  # fmt: skip
        torch_ops._DIRECT_DEVICE = "cpu"  # as eager CUDA calls: the dispatcher skipped
        rows.append(
            (f"api: gemm_opt.matmul (eager, no dispatch), {schedule}",
             _per_call_us(lambda s=schedule: gemm_opt.matmul(a, b, schedule=s), args.calls))
        )  # fmt: skip
        torch_ops._DIRECT_DEVICE = "cuda"
        torch_ops._DIRECT_DEVICE = "cpu"

        def first_call(s: str = schedule) -> None:
            plans.clear_plans()
            gemm_opt.matmul(a, b, schedule=s)

        rows.append((f"api: first call (plan made), {schedule}",
                     _per_call_us(first_call, args.calls)))  # fmt: skip
        torch_ops._DIRECT_DEVICE = "cuda"
    rt.launch = real_launch

    # rt.launch on a bundle of stand-in kernels of the specs the calls chose (and their twins).
    drv = _CountingDriver()
    cuda.driver = lambda: drv
    launcher._current_stream = lambda torch, device: 0
    torch.cuda.is_available = lambda: True
    allocate = rt.allocate_workspace  # the caching allocator: its CPU twin
    rt.allocate_workspace = lambda torch, layout, device: allocate(torch, layout, "cpu")
    torch.cuda.device = _DeviceGuard
    with tempfile.TemporaryDirectory() as tmp:
        chosen = {s for s, *_ in specs}
        write_store(Path(tmp), {t for s in chosen for t in (s, *rt.twins(s))})
        os.environ[rt.BUNDLE_DIR_ENV] = tmp
        for schedule, (spec, values, P, tiles) in zip(
            ("data-parallel", "auto"), (specs[0], specs[-1]), strict=True
        ):
            dev = dict(values)
            for i, name in enumerate(("a", "b", "c")):
                dev[name] = DeviceTensor(0x10000 * (i + 1), dt)

            def one(spec=spec, dev=dev, P=P, tiles=tiles) -> None:
                rt.launch(spec, dev, num_programs=P, total_tiles=tiles)

            rows.append(
                (f"launch: rt.launch ({spec.name}), {schedule}", _per_call_us(one, args.calls))
            )
            prepared = rt.launch(
                spec, dev, num_programs=P, total_tiles=tiles, prepare=("a", "b", "c")
            )
            tensors = (dev["a"], dev["b"], dev["c"])
            rows.append(
                (f"launch: rt.Prepared ({spec.name}), {schedule}",
                 _per_call_us(lambda p=prepared, t=tensors: p(*t), args.calls))
            )  # fmt: skip
    assert drv.launches, "the launches reached the driver"
    print(f"host us/call, {args.dtype} {m}x{n}x{k}, best of 5 x {args.calls} calls")
    for name, us in rows:
        print(f"  {us:8.1f}  {name}")


if __name__ == "__main__":
    main()
