#!/usr/bin/env python3
"""The kernels ``gemm_opt.nn`` launches at ``train_moe.py``'s shapes, and its host cost, on CPU.

The GPU path's decisions (the plan: shape class, schedule, kernel) are made
from metadata alone, so they can be made here without a GPU: CPU tensors are
planned as cuda:90 ones (:func:`planning_as_cuda`: the device's SM count and
occupancy given, the launch replaced by a recorder that allocates the output
and launches nothing). Two uses:

* ``--list-kernels`` prints every kernel (and the twins the launch picks
  among) the modules plan for the checks and the training steps of
  ``train_moe.py``, forward and backward: a bundle built from that list
  (``build_bundles --only``) holds all a run of the script needs.
* ``--host-us`` times the host side of the modules' calls (the autograd
  path, the plan lookup, the launch's Python without the driver call) per
  GEMM call, eager, so the dispatcher's share is measured without a GPU.

    PYTHONPATH=python python3 benchmarks/h100/nn_kernels.py --list-kernels > kernels.txt
    PYTHONPATH=python python3 benchmarks/h100/nn_kernels.py --host-us
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch

from gemm_opt import nn as gnn
from gemm_opt import torch_ops as T
from gemm_opt.core import schedules as S
from gemm_opt.runtime import gemm as rt
from gemm_opt.runtime import plan as P

#: The SMs planned for (the H100's and H200's).
SMS = 132


@contextlib.contextmanager
def planning_as_cuda(sms: int = SMS, launched: list[S.KernelSpec] | None = None) -> Iterator[None]:
    """Within: CPU torch tensors are planned as cuda:90 tensors of a GPU of ``sms`` SMs
    (one program per SM resident), and a GPU plan's launch appends its spec to
    ``launched`` and returns the (uninitialized) output without running anything."""
    real_kind = P.kind_of

    def kind_of(x: Any, name: str) -> str:
        k = real_kind(x, name)
        return "cuda" if k == "torch-cpu" else k

    def launch(plan: P.GemmPlan, a: Any, b: Any, group_lens: Any = None, out: Any = None,
               *vectors: Any) -> Any:  # fmt: skip
        if launched is not None:
            launched.append(plan.spec if plan.sub is None else plan.sub.spec)
        return a.new_empty(plan.out_shape) if out is None else out

    patches = [
        (T, "_DIRECT_DEVICE", "cpu"),  # the eager calls skip the dispatcher as on CUDA
        (P, "kind_of", kind_of),
        (P, "launch", launch),
        (rt, "sm_count", lambda torch, device: sms),
        (rt, "resident_programs", lambda spec, device: sms),
        (rt, "device_target", lambda torch, device: "cuda:90"),
        (rt, "compiler_installed", lambda: False),
    ]
    saved = [(mod, name, getattr(mod, name)) for mod, name, _ in patches]
    try:
        for mod, name, value in patches:
            setattr(mod, name, value)
        P.clear_plans()  # none planned for the CPU backend is reused
        yield
    finally:
        for mod, name, value in saved:
            setattr(mod, name, value)
        P.clear_plans()


def _fwd_bwd(module: torch.nn.Module, x: torch.Tensor, autocast: bool = False) -> None:
    x = x.detach().requires_grad_()
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
        y = module(x)
    y.float().sum().backward()


def train_moe_calls(batches: tuple[int, ...] = (8, 32)) -> None:
    """Forward and backward of each module at the shapes ``train_moe.py`` runs: its checks
    (Linear 1024 -> 3072 with a bias, bf16, and 1024 -> 512 under autocast; MoE
    1024/512/8/2 on 2048 tokens, and on 1024 as ``test_nn.py``'s GPU test runs it) and
    its model's layers (Linear 1024 -> 3072, 1024, 8192 without bias; MoE 1024/1024/8/2)
    at 8 and 32 sequences of 512 tokens; and ``test_epilogue_scales.py``'s GPU test."""
    import gemm_opt

    bf16 = {"dtype": torch.bfloat16}
    _fwd_bwd(gnn.Linear(1024, 3072, **bf16), torch.randn(4, 256, 1024, **bf16))
    _fwd_bwd(gnn.Linear(1024, 512), torch.randn(4, 256, 1024), autocast=True)
    for tokens in (2048, 1024):  # 1024: test_nn.py's eager-autograd test on the GPU
        _fwd_bwd(gnn.MoE(1024, 512, 8, 2, **bf16), torch.randn(tokens, 1024, **bf16))
    # test_epilogue_scales.py's GPU test: rowwise-scaled linear, forward and backward
    x, w = torch.randn(1024, 1024, **bf16, requires_grad=True), torch.randn(3072, 1024, **bf16)
    gemm_opt.linear(x, w, row_scale=torch.ones(1024), col_scale=torch.ones(3072)).sum().backward()
    for batch in batches:
        tokens = batch * 512
        for out in (3072, 1024, 8192):
            _fwd_bwd(gnn.Linear(1024, out, bias=False), torch.randn(tokens, 1024), autocast=True)
        _fwd_bwd(gnn.MoE(1024, 1024, 8, 2), torch.randn(tokens, 1024), autocast=True)


def epilogue_swiglu_calls() -> None:
    """The GEMM calls of ``epilogue.py``'s SwiGLU part (its ``SWIGLU_DENSE`` and ``MOE``
    shapes): fused and unfused SwiGLU, dense and per expert, and the wgrad accumulate."""
    import gemm_opt

    sys.path.insert(0, str(Path(__file__).parent))
    import epilogue as E

    bf16 = {"dtype": torch.bfloat16}
    for m, n, k in E.SWIGLU_DENSE:
        x, w, b = (
            torch.empty(m, k, **bf16),
            torch.empty(2 * n, k, **bf16),
            torch.empty(2 * n, **bf16),
        )
        gemm_opt.linear(x, w, b, activation="swiglu")
        gemm_opt.matmul(x, w.mT)
    for rows, g, k, n in E.MOE:
        x, w = torch.empty(rows, k, **bf16), torch.empty(g, k, 2 * n, **bf16)
        lens = torch.full((g,), rows // g, dtype=torch.int32)
        gemm_opt.grouped_matmul(x, w, lens, activation="swiglu")
        gemm_opt.grouped_matmul(x, w, lens)
        dh, mg = torch.empty(rows, 2 * n, **bf16), torch.empty(g, k, 2 * n)
        gemm_opt.grouped_matmul_variable_k(x, dh, lens, out=mg, accumulate=True)
        gemm_opt.grouped_matmul_variable_k(x, dh, lens)


def kernel_names(specs: list[S.KernelSpec]) -> list[str]:
    """``specs`` and the twins a launch picks among (TMA, aligned), each name once."""
    out: dict[str, None] = {}
    for s in specs:
        for t in (s, *rt.twins(s)):
            out[t.name] = None
    return list(out)


def _best_us(fn: Any, reps: int, rounds: int = 5) -> float:
    """The fastest of ``rounds`` means over ``reps`` calls, in microseconds (the machine's
    other work only ever adds)."""
    fn()
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(reps):
            fn()
        best = min(best, (time.perf_counter() - start) / reps * 1e6)
    return best


def host_us(reps: int = 50) -> dict[str, float]:
    """Host microseconds of the GEMM calls ``gemm_opt.nn`` makes, eager with gradients
    recorded and the launches recorded, not run (the Python the GPU path runs around
    each launch): a Linear's product, MoE GateUp (fused SwiGLU) and Down, each alone
    forward and forward + backward (three GEMM calls: the forward, dgrad, wgrad; GateUp
    four, its pre-activation recomputed), through the operators' eager autograd and,
    for comparison, through ``torch.library``'s dispatch."""
    from gemm_opt import api

    torch.manual_seed(0)
    torch.set_num_threads(1)  # tiny CPU tensors: threads only add their hand-offs
    bf16 = {"dtype": torch.bfloat16}
    x = torch.randn(64, 64, **bf16, requires_grad=True)
    w = torch.randn(64, 64, **bf16, requires_grad=True)
    wg = torch.randn(4, 64, 128, **bf16, requires_grad=True)
    lens = torch.full((4,), 16, dtype=torch.int32)
    calls = {
        "Linear": lambda: api.matmul(x, w.t()),
        "GateUp": lambda: api.grouped_matmul(x, wg, lens, activation="swiglu"),
        "Down": lambda: api.grouped_matmul(x, wg, lens),
    }
    out = {}
    for path, impls in (("eager autograd", T._IMPLS), ("dispatcher", {})):
        saved, T._IMPLS = T._IMPLS, impls
        try:
            with planning_as_cuda():
                for name, call in calls.items():
                    out[f"{name} forward, {path}"] = _best_us(call, reps)
                    out[f"{name} forward + backward, {path}"] = _best_us(
                        lambda call=call: call().sum().backward(), reps
                    )
        finally:
            T._IMPLS = saved
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--list-kernels", action="store_true", help="print the kernel names")
    ap.add_argument("--host-us", action="store_true", help="time the host path per call")
    ap.add_argument("--sms", type=int, default=SMS)
    ap.add_argument(
        "--epilogue-swiglu", action="store_true",
        help="also list the kernels of epilogue.py's SwiGLU and MoE part",
    )  # fmt: skip
    args = ap.parse_args(argv)
    if not (args.list_kernels or args.host_us):
        ap.error("give --list-kernels or --host-us")
    if args.list_kernels:
        launched: list[S.KernelSpec] = []
        with planning_as_cuda(args.sms, launched):
            train_moe_calls()
            if args.epilogue_swiglu:
                epilogue_swiglu_calls()
        print("\n".join(kernel_names(launched)))
    if args.host_us:
        for k, v in host_us().items():
            print(f"{k}: {v:.1f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
