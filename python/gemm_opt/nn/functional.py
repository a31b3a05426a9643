"""The GEMMs the modules run, in one place: ``linear`` and the experts' two grouped GEMMs.

The modules call only these functions. ``linear``'s bias runs in the GEMM's
epilogue, on the fp32 accumulator before its one rounding
(:func:`gemm_opt.api.linear`); the experts' SwiGLU can too (GateUp's ``[gate |
up]`` columns), but by default runs in eager torch after the grouped GEMM
(:func:`swiglu`), the faster pair on the GPU. The calls' schedules and epilogues
are :mod:`gemm_opt.kernels.nn_gemms`' table, from which the bundle lists the
kernels they run.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch
import torch.nn.functional as F
from torch import Tensor

from gemm_opt import api
from gemm_opt.kernels import nn_gemms as NG

#: A tile config for the grouped GEMMs (None: the plan's pick for the shape).
Config = api.GemmConfig | Mapping[str, int] | None
#: The dtypes gemm-opt's kernels take (inputs and output).
DTYPES = (torch.float16, torch.bfloat16)


def cast_operands(name: str, x: Tensor, *params: Tensor | None) -> tuple[Tensor | None, ...]:
    """``x`` and ``params`` in the dtype a module computes in.

    Under ``torch.autocast`` for ``x``'s device every tensor is cast to autocast's
    dtype (as ``torch.nn.Linear`` is cast: fp32 parameters, bf16 products);
    otherwise they must already share ``x``'s dtype. Either way the dtype is
    fp16 or bf16 (the kernels'), else a TypeError naming ``name``; None passes.
    """
    device = x.device.type
    if torch.is_autocast_enabled(device):
        dtype = torch.get_autocast_dtype(device)
    else:
        dtype = x.dtype
        for p in params:
            if p is not None and p.dtype != dtype:
                raise TypeError(
                    f"{name}: input dtype {dtype} does not match the parameters' {p.dtype} "
                    "(convert one, or run under torch.autocast)"
                )
    if dtype not in DTYPES:
        raise TypeError(
            f"{name}: gemm-opt computes in float16 or bfloat16, got {dtype} (convert the "
            "module and input, e.g. .to(torch.bfloat16), or run under torch.autocast)"
        )
    return tuple(None if t is None else t.to(dtype) for t in (x, *params))


def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``F.linear``: ``x @ weight.T + bias``, the bias added in the epilogue; ``weight``
    is read as it lies (the transposed-layout kernel on the view ``weight.t()``, no
    copy), batch dimensions of ``x`` fold into one GEMM."""
    if bias is None:
        return api.linear(x, weight)
    return api.linear(x, weight, bias, schedule=str(NG.LINEAR.schedule))


def swiglu(h: Tensor) -> Tensor:
    """``silu(gate) * up`` over the two halves of the last dimension (gate | up), in fp32,
    rounded once to ``h``'s dtype."""
    gate, up = h.chunk(2, dim=-1)
    return (F.silu(gate.float()) * up.float()).to(h.dtype)


def expert_gate_up(
    x: Tensor, w_gate_up: Tensor, group_lens: Tensor, config: Config, fused: bool | None = None
) -> Tensor:
    """GateUp with SwiGLU: rows of ``x`` (S, H) grouped by ``group_lens``, ``w_gate_up``
    (E, H, 2F) (gate columns, then up: the epilogue's halves) -> (S, F). ``fused``: SwiGLU
    in the GEMM's epilogue, else :func:`swiglu` after it; None: the table's choice
    (:data:`gemm_opt.kernels.nn_gemms.FUSE_GATE_UP`)."""
    if not (NG.FUSE_GATE_UP if fused is None else fused):
        return swiglu(api.grouped_matmul(x, w_gate_up, group_lens, config=config))
    call = NG.GATE_UP
    return api.grouped_matmul(
        x, w_gate_up, group_lens, trans_b=call.trans_b, schedule=str(call.schedule),
        config=config, activation=str(call.activation),
    )  # fmt: skip


def expert_down(act: Tensor, w_down: Tensor, group_lens: Tensor, config: Config) -> Tensor:
    """Down: rows of ``act`` (S, F) grouped by ``group_lens``, ``w_down`` (E, F, H) -> (S, H)."""
    return api.grouped_matmul(act, w_down, group_lens, config=config)


__all__ = ["DTYPES", "Config", "cast_operands", "expert_down", "expert_gate_up", "linear", "swiglu"]
