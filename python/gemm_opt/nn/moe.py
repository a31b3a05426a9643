"""``gemm_opt.nn.MoE``: a top-k mixture-of-experts FFN on gemm-opt's grouped GEMMs."""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import Tensor

from gemm_opt.nn import expert_parallel as EP
from gemm_opt.nn import functional as GF
from gemm_opt.nn import routing as R


class MoE(torch.nn.Module):
    """Top-k routed SwiGLU experts: ``y = sum_j w_j * Down_e(SwiGLU(GateUp_e(x)))`` over
    each token's ``top_k`` experts ``e``, weights ``w`` the router's softmax
    probabilities renormalized over the chosen experts.

    Parameters: ``router.weight`` (E, H) (routing runs in fp32,
    :func:`gemm_opt.nn.routing.route`), ``gate_up`` (E, H, 2F) (gate columns
    first, then up) and ``down`` (E, F, H), the layouts the grouped GEMMs read
    (``torch._grouped_mm``'s as well). Forward: route, sort the T x k
    (token, slot) pairs to expert order on the device, GateUp and Down as two
    grouped GEMMs with ``group_lens`` on the device, weighted combine in fp32;
    backward through the grouped GEMMs' dgrad and wgrad (autograd of the
    operators). No host sync, so the layer traces under
    ``torch.compile(fullgraph=True)`` and replays in a CUDA graph; it is
    deterministic (:mod:`gemm_opt.nn.routing`).

    With ``process_group`` the experts are sharded over its ranks (``gate_up``
    and ``down`` hold this rank's ``E / P``; the router is replicated and its
    gradient is this rank's tokens' share, to be all-reduced as data-parallel
    gradients are) and tokens travel by all-to-all
    (:mod:`gemm_opt.nn.expert_parallel`: one host sync per forward for the
    splits, so that path runs eagerly). Initialization draws the full expert
    tensors and keeps this rank's slice, so the same seed gives every layout
    the same experts. ``config`` fixes the grouped GEMMs' tile config (None:
    the plan's pick for each shape). Computes in fp16/bf16, or under
    ``torch.autocast`` from fp32 parameters.
    """

    def __init__(
        self,
        hidden_size: int,
        ffn_size: int,
        num_experts: int,
        top_k: int = 2,
        *,
        process_group: Any = None,
        config: GF.Config = None,
        device: Any = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        super().__init__()
        for name, value in (
            ("hidden_size", hidden_size), ("ffn_size", ffn_size), ("num_experts", num_experts),
            ("top_k", top_k),
        ):  # fmt: skip
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name}: expected a positive int, got {value!r}")
        if top_k > num_experts:
            raise ValueError(f"top_k: {top_k} exceeds num_experts={num_experts}")
        self.hidden_size, self.ffn_size = hidden_size, ffn_size
        self.num_experts, self.top_k = num_experts, top_k
        self.process_group = process_group
        if process_group is None:
            self.rank, self.local_experts = 0, num_experts
        else:
            world = torch.distributed.get_world_size(process_group)
            self.local_experts = EP.check_sharding(num_experts, world)
            self.rank = torch.distributed.get_rank(process_group)
        self.config = config
        kw = {"device": device, "dtype": dtype}
        self.router = torch.nn.Linear(hidden_size, num_experts, bias=False, **kw)
        e = self.local_experts
        self.gate_up = torch.nn.Parameter(torch.empty(e, hidden_size, 2 * ffn_size, **kw))
        self.down = torch.nn.Parameter(torch.empty(e, ffn_size, hidden_size, **kw))
        self.reset_parameters()

    @torch.no_grad()
    def reset_parameters(self) -> None:
        """``torch.nn.Linear``'s bounds (uniform in +-1/sqrt(fan_in)) for every expert,
        drawn for all ``num_experts`` and sliced to this rank's."""
        self.router.reset_parameters()
        first = self.rank * self.local_experts
        mine = slice(first, first + self.local_experts)
        for p, fan_in in ((self.gate_up, self.hidden_size), (self.down, self.ffn_size)):
            full = torch.empty(self.num_experts, *p.shape[1:], device=p.device, dtype=p.dtype)
            bound = 1 / math.sqrt(fan_in)
            p.copy_(full.uniform_(-bound, bound)[mine])

    def extra_repr(self) -> str:
        ep = "" if self.process_group is None else f", local_experts={self.local_experts}"
        return (
            f"hidden_size={self.hidden_size}, ffn_size={self.ffn_size}, "
            f"num_experts={self.num_experts}, top_k={self.top_k}{ep}"
        )

    def forward(self, x: Tensor) -> Tensor:
        if x.dim() == 0 or x.shape[-1] != self.hidden_size:
            raise ValueError(
                f"x: expected a last dimension of hidden_size={self.hidden_size}, "
                f"got shape {tuple(x.shape)}"
            )
        shape = x.shape
        tokens = x.reshape(-1, self.hidden_size)
        routing = R.route(tokens, self.router.weight, self.top_k)
        perm = R.permutation(routing.experts, self.num_experts)
        xc, gate_up, down = GF.cast_operands("gemm_opt.nn.MoE", tokens, self.gate_up, self.down)
        rows = R.dispatch(xc, perm)
        if self.process_group is None:
            y = self._experts(rows, gate_up, down, perm.group_lens)
        else:
            y = self._experts_parallel(rows, gate_up, down, perm.group_lens)
        return R.combine(y, perm, routing.weights).view(*shape[:-1], self.hidden_size)

    def _experts(self, rows: Tensor, gate_up: Tensor, down: Tensor, lens: Tensor) -> Tensor:
        act = GF.expert_gate_up(rows, gate_up, lens, self.config)
        return GF.expert_down(act, down, lens, self.config)

    def _experts_parallel(
        self, rows: Tensor, gate_up: Tensor, down: Tensor, lens: Tensor
    ) -> Tensor:
        """Rows in global expert order out to the ranks holding their experts, through
        this rank's experts, and back in the same order."""
        group = self.process_group
        splits = EP.exchange_counts(lens, group)
        received = EP.all_to_all(rows, splits.send, splits.recv, group)
        local = EP.local_permutation(splits.recv_counts, sum(splits.recv))
        rows = R.permute_rows(received, local.order, local.inverse)
        y = self._experts(rows, gate_up, down, local.group_lens)
        back = R.permute_rows(y, local.inverse, local.order)
        return EP.all_to_all(back, splits.recv, splits.send, group)


__all__ = ["MoE"]
