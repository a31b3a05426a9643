"""The fused GEMMs ``gemm_opt.nn`` runs, and the kernels each call requests.

One table for two readers: :mod:`gemm_opt.nn.functional` makes its calls with
these schedules and epilogues (:data:`CALLS`), and the epilogue bundle
(:func:`gemm_opt.kernels.build_bundles.epilogue_bundle_specs`) holds the kernels
they request, so a change to a module's call cannot leave its kernel out of the
bundle. The kernel of a call without a ``config`` is its shape class's
(:func:`~gemm_opt.kernels.h100_configs.gpu_config_name`), cut for SwiGLU's two
accumulators (:func:`~gemm_opt.runtime.plan.swiglu_config`), as the plan picks it.

Pure Python: no torch, no compiler.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from gemm_opt.core import schedules as S
from gemm_opt.core.modes import Activation, Grouped, Kind
from gemm_opt.kernels import h100_configs as h100
from gemm_opt.runtime.plan import swiglu_config


@dataclass(frozen=True)
class FusedCall:
    """One fused-epilogue GEMM call of ``gemm_opt.nn``: its schedule, grouped form,
    B's layout (``trans_b``: stored (N, K), as ``F.linear`` reads a weight),
    activation and whether a bias (in the inputs' dtype) is added."""

    schedule: Kind
    grouped: Grouped
    trans_b: bool
    activation: Activation
    bias: bool

    def epilogue(self, dtype: str) -> S.EpilogueSpec:
        return S.EpilogueSpec(activation=self.activation, bias=dtype if self.bias else None)

    def config(self, cfg: S.GemmConfig) -> S.GemmConfig:
        """The configuration the plan runs for a shape class's ``cfg``."""
        return swiglu_config(cfg, self.epilogue("bf16"))

    def class_config(self, rows: int, n: int, sms: int) -> S.GemmConfig:
        """The configuration of a call with ``rows`` output rows (grouped: all groups')
        and ``n`` output columns on a GPU of ``sms`` SMs, no ``config`` given."""
        return self.config(
            h100.GPU_CONFIGS[h100.gpu_config_name(rows, n, self.grouped, sms, kind=self.schedule)]
        )

    def specs(self, dtype: str, cfg: S.GemmConfig) -> list[S.KernelSpec]:
        """The kernels a call on ``cfg`` (already :meth:`config`'d) needs bundled: the
        TMA twin it runs on 16-byte aligned operands, and for a persistent schedule
        the plain kernel too (it sizes the grid: resident programs per SM)."""
        plain = S.KernelSpec(
            self.schedule, None, self.grouped, dtype, cfg.block_m, cfg.block_n, cfg.block_k,
            cfg.group_m, cfg.num_warps, cfg.num_stages, trans_b=self.trans_b,
            epilogue=self.epilogue(dtype),
        )  # fmt: skip
        tma = replace(plain, aligned=True, tma=True)
        return [tma] if self.schedule == Kind.DATA_PARALLEL else [plain, tma]


#: ``gemm_opt.nn.Linear`` with a bias: ``x @ W.T + b`` (W stored (out, in)).
LINEAR = FusedCall(Kind.DATA_PARALLEL, Grouped.NONE, True, Activation.NONE, bias=True)
#: ``gemm_opt.nn.MoE``'s GateUp: per-expert (H, 2F) weights, SwiGLU over ``[gate | up]``.
GATE_UP = FusedCall(Kind.PERSISTENT, Grouped.M, False, Activation.SWIGLU, bias=False)
#: Whether ``gemm_opt.nn.MoE``'s GateUp runs :data:`GATE_UP` (SwiGLU in the epilogue) or
#: the grouped GEMM followed by SwiGLU in eager torch. Off: on the GPU the fused kernel
#: (two accumulators, a third copy ring, fewer stages) is slower than the pair, and its
#: backward recomputes the GEMM (``docs/nn.md``, "Fused epilogues").
FUSE_GATE_UP = False
#: Every fused call the modules make.
CALLS = (LINEAR, GATE_UP) if FUSE_GATE_UP else (LINEAR,)
#: The fused calls whose kernels the epilogue bundle holds: the modules' and GateUp's
#: (for ``grouped_matmul(..., activation="swiglu")`` and for :data:`FUSE_GATE_UP`).
BUNDLED = (LINEAR, GATE_UP)


def specs_for(call: FusedCall, dtype: str, rows: int, n: int, sms: int = 132) -> list[S.KernelSpec]:
    """The kernels ``call`` requests for an output of ``rows x n`` (no ``config``)."""
    return call.specs(dtype, call.class_config(rows, n, sms))


__all__ = ["BUNDLED", "CALLS", "FUSE_GATE_UP", "GATE_UP", "LINEAR", "FusedCall", "specs_for"]
