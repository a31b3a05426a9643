"""``gemm_opt.nn.Linear``: ``torch.nn.Linear`` whose product runs on gemm-opt's kernels."""

from __future__ import annotations

import torch
from torch import Tensor

from gemm_opt.nn import functional as GF


class Linear(torch.nn.Linear):
    """A drop-in for ``torch.nn.Linear``: the same parameters (``weight`` (out, in),
    ``bias``), initialization, ``state_dict`` keys and ``repr``, so a checkpoint
    loads into either; only ``forward`` differs: ``x @ weight.T + bias`` through
    :func:`gemm_opt.nn.functional.linear` (the transposed-layout kernel reads the
    weight as stored, batch dimensions fold into one GEMM; autograd through the
    operators' dgrad and wgrad).

    The kernels compute in fp16 or bf16: keep the module in one of them, or keep
    fp32 parameters and run under ``torch.autocast``, which casts input, weight
    and bias as ``torch.nn.Linear`` is cast. Anything else is a TypeError; an
    input whose last dimension is not ``in_features`` is a ValueError.
    """

    @classmethod
    def from_torch(cls, module: torch.nn.Linear) -> Linear:
        """A ``Linear`` sharing ``module``'s parameters (no copy)."""
        if not isinstance(module, torch.nn.Linear):
            raise TypeError(f"module: expected a torch.nn.Linear, got {type(module).__name__}")
        new = cls.__new__(cls)
        torch.nn.Module.__init__(new)
        new.in_features, new.out_features = module.in_features, module.out_features
        new.weight = module.weight
        new.bias = module.bias
        return new

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() == 0 or input.shape[-1] != self.in_features:
            raise ValueError(
                f"input: expected a last dimension of in_features={self.in_features}, "
                f"got shape {tuple(input.shape)}"
            )
        x, weight, bias = GF.cast_operands("gemm_opt.nn.Linear", input, self.weight, self.bias)
        if x.dim() == 1:  # F.linear's vector input: one row
            return GF.linear(x.unsqueeze(0), weight, bias).squeeze(0)
        return GF.linear(x, weight, bias)


__all__ = ["Linear"]
