"""MoE routing on the device: top-k router, token permutation to expert order, combine.

Everything here is plain torch on whatever device the tokens are on (the CPU
tests run it as the GPU does): no value is read back to the host, shapes
depend only on the token count, so a layer built on it traces under
``torch.compile(fullgraph=True)`` and replays in a CUDA graph. Each step is
deterministic: ties in the sort keep token order (stable argsort), and every
gather's backward is a gather (by the inverse permutation), never atomic adds.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor


class Routing(NamedTuple):
    """The router's decision for T tokens: ``experts`` (T, k) int64, ``weights`` (T, k) fp32."""

    experts: Tensor
    weights: Tensor


def route(x: Tensor, router_weight: Tensor, top_k: int, *, normalize: bool = True) -> Routing:
    """Softmax over ``x @ router_weight.T`` in fp32, the ``top_k`` experts of each token,
    their probabilities renormalized to sum to 1 (``normalize``).

    The router runs in fp32 so that the top-k choice does not flip on a bf16
    rounding of the logits (a flip moves a token to another expert: a large
    change from a tiny one); it is under 1% of the layer's FLOPs.
    With ``top_k == 1`` and ``normalize`` every weight is 1 and the router
    receives no gradient.
    """
    with torch.autocast(x.device.type, enabled=False):
        probs = F.linear(x.float(), router_weight.float()).softmax(-1)
    weights, experts = probs.topk(top_k, dim=-1, sorted=True)
    if normalize:
        weights = weights / weights.sum(-1, keepdim=True)
    return Routing(experts, weights)


class Permutation(NamedTuple):
    """Where each of the T x k (token, slot) pairs goes in expert order.

    Row ``r`` of the permuted activations is slot ``order[r]`` (flat index
    ``t * k + j``), i.e. token ``token[r] = order[r] // k``; rows are grouped by
    expert, ``group_lens[e]`` rows for expert ``e`` (int32, on the device),
    tokens in order inside a group. ``inverse`` is the permutation back: slot
    ``s`` sits at row ``inverse[s]``. (NamedTuples: ``torch.compile`` traces them.)
    """

    order: Tensor
    token: Tensor
    inverse: Tensor
    group_lens: Tensor
    top_k: int


def permutation(experts: Tensor, num_experts: int) -> Permutation:
    """Sort the (token, slot) pairs of ``experts`` (T, k) by expert, on the device.

    ``group_lens`` comes from a binary search of each expert's end in the
    sorted ids (a fixed-size result: no ``bincount`` whose size follows the
    data, no host read).
    """
    if experts.dim() != 2:
        raise ValueError(f"experts: expected (tokens, top_k), got shape {tuple(experts.shape)}")
    top_k = experts.shape[1]
    flat = experts.reshape(-1)
    order = flat.argsort(stable=True)
    ids = torch.arange(num_experts, device=flat.device, dtype=flat.dtype)
    ends = torch.searchsorted(flat.index_select(0, order), ids, right=True)
    group_lens = torch.diff(ends, prepend=ends.new_zeros(1)).to(torch.int32)
    inverse = order.argsort()
    return Permutation(order, order // top_k, inverse, group_lens, top_k)


class _GatherTokens(torch.autograd.Function):
    """``x[token]``: each token copied to its k rows in expert order. The backward
    gathers the k rows of each token back (``inverse``) and sums them in slot
    order: deterministic, where ``index_select``'s backward adds k rows into one
    with atomics in whatever order they land."""

    @staticmethod
    def forward(x: Tensor, token: Tensor, inverse: Tensor, top_k: int) -> Tensor:
        return x.index_select(0, token)

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: Tensor) -> None:
        _, _, inverse, top_k = inputs
        ctx.save_for_backward(inverse)
        ctx.top_k = top_k

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple:
        (inverse,) = ctx.saved_tensors
        rows = grad.index_select(0, inverse)
        return rows.view(-1, ctx.top_k, grad.shape[-1]).sum(1), None, None, None


class _PermuteRows(torch.autograd.Function):
    """``x[order]`` for a permutation ``order``; the backward gathers the gradient back
    by ``inverse``. ``index_select``'s backward would scatter it with atomic adds into
    a zeroed buffer (bf16 atomics work on 32-bit words: neighbours contend)."""

    @staticmethod
    def forward(x: Tensor, order: Tensor, inverse: Tensor) -> Tensor:
        return x.index_select(0, order)

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: Tensor) -> None:
        ctx.save_for_backward(inputs[2])

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple:
        (inverse,) = ctx.saved_tensors
        return grad.index_select(0, inverse), None, None


def permute_rows(x: Tensor, order: Tensor, inverse: Tensor) -> Tensor:
    """Rows of ``x`` reordered: row ``r`` of the result is ``x[order[r]]``; ``inverse``
    is ``order``'s inverse (``order[inverse] == arange``). Differentiable, by a gather."""
    return _PermuteRows.apply(x, order, inverse)


def dispatch(x: Tensor, perm: Permutation) -> Tensor:
    """The tokens ``x`` (T, H) as rows in expert order (T * k, H), row-major (the
    grouped GEMMs read rows back to back)."""
    return _GatherTokens.apply(x.contiguous(), perm.token, perm.inverse, perm.top_k)


def combine(y: Tensor, perm: Permutation, weights: Tensor) -> Tensor:
    """Each token's k expert outputs (rows of ``y`` in expert order) weighted by the
    router and summed in fp32, in slot order: (T, H) in ``y``'s dtype."""
    rows = permute_rows(y, perm.inverse, perm.order).view(-1, perm.top_k, y.shape[-1])
    return (rows.float() * weights.unsqueeze(-1)).sum(1).to(y.dtype)


__all__ = [
    "Permutation", "Routing", "combine", "dispatch", "permutation", "permute_rows", "route",
]  # fmt: skip
