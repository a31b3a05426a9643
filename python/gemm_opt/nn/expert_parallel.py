"""Expert parallelism: experts sharded over the ranks of a process group, tokens moved by
all-to-all (NCCL on GPUs, gloo on CPUs).

Rank ``r`` of ``P`` holds experts ``[r * E_local, (r + 1) * E_local)``. A rank's
rows in global expert order are therefore already grouped by destination rank:
the dispatch sends them as they lie and the combine returns them in the same
order. Each rank first sends its per-expert counts (a fixed-size all-to-all on
the device), then reads both split lists to the host in one transfer: NCCL's
variable all-to-all takes its splits as host integers, so the expert-parallel
forward synchronizes once (the backward reuses the forward's splits). The
received rows arrive source-rank-major; :func:`local_permutation` sorts them to
local-expert-major for the grouped GEMMs, on the device.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import torch
import torch.distributed as dist
from torch import Tensor


def check_sharding(num_experts: int, world_size: int) -> int:
    """Experts per rank; a count that does not divide evenly is a ValueError."""
    if world_size < 1 or num_experts % world_size:
        raise ValueError(
            f"num_experts: {num_experts} experts do not shard evenly over "
            f"{world_size} ranks of the process group"
        )
    return num_experts // world_size


class LocalPermutation(NamedTuple):
    """Received rows (source-rank-major, experts in order inside each source) to
    local-expert-major: row ``r`` of the grouped GEMMs' input is received row
    ``order[r]``; ``inverse`` goes back; ``group_lens`` (E_local,) int32."""

    order: Tensor
    inverse: Tensor
    group_lens: Tensor


def local_permutation(recv_counts: Tensor, total: int) -> LocalPermutation:
    """From ``recv_counts`` (P, E_local): rows each source rank sends for each local
    expert, ``total`` their sum (known on the host from the splits)."""
    sources, local = recv_counts.shape
    ids = torch.arange(local, device=recv_counts.device).repeat(sources)
    expert_of_row = torch.repeat_interleave(ids, recv_counts.reshape(-1), output_size=total)
    order = expert_of_row.argsort(stable=True)
    return LocalPermutation(order, order.argsort(), recv_counts.sum(0).to(torch.int32))


class Splits(NamedTuple):
    """One rank's all-to-all plan: ``send`` rows to each rank, ``recv`` rows from each
    (host integers), ``recv_counts`` (P, E_local) on the device."""

    send: list[int]
    recv: list[int]
    recv_counts: Tensor


def exchange_counts(group_lens: Tensor, group: Any) -> Splits:
    """Send each rank the counts of its experts (``group_lens`` (E,) in global order),
    receive the counts every rank sends for ours; then the per-rank splits, read
    to the host in one transfer (the one synchronization)."""
    world = dist.get_world_size(group)
    local = check_sharding(group_lens.numel(), world)
    counts = group_lens.to(torch.int64).contiguous()
    recv = torch.empty_like(counts)
    dist.all_to_all_single(recv, counts, group=group)
    recv_counts = recv.view(world, local)
    both = torch.stack([counts.view(world, local).sum(1), recv_counts.sum(1)]).tolist()
    return Splits(both[0], both[1], recv_counts)


class _AllToAll(torch.autograd.Function):
    """Variable all-to-all of rows; its backward is the reverse exchange."""

    @staticmethod
    def forward(x: Tensor, send: list[int], recv: list[int], group: Any) -> Tensor:
        out = x.new_empty(sum(recv), *x.shape[1:])
        dist.all_to_all_single(out, x.contiguous(), recv, send, group=group)
        return out

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: Tensor) -> None:
        _, ctx.send, ctx.recv, ctx.group = inputs

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple:
        return _AllToAll.apply(grad, ctx.recv, ctx.send, ctx.group), None, None, None


def all_to_all(x: Tensor, send: list[int], recv: list[int], group: Any) -> Tensor:
    """Rows of ``x`` (``send[r]`` for rank r, back to back) exchanged: ``recv[r]`` rows
    from rank r, back to back. Differentiable."""
    return _AllToAll.apply(x, send, recv, group)


__all__ = [
    "LocalPermutation",
    "Splits",
    "all_to_all",
    "check_sharding",
    "exchange_counts",
    "local_permutation",
]
