"""Which TMA descriptors the host encodes (part of ``convert-tile-to-triton-gpu``, cuda:90).

A ``tile.make_tensor_descriptor`` lowered to ``tt.make_tensor_descriptor``
makes every program write a 128-byte tensormap into global scratch, release
it to the tensor-memory proxy and acquire it back before its first copy, a
large part of a small GEMM's run (the measurement is in
``docs/results-h100.md``, section "descriptors"). So a descriptor the host
can encode is passed as a kernel parameter instead, as Triton passes a host
``TensorDescriptor``: the lowered function takes, after its own arguments and
for each such descriptor in order, ``!tt.tensordesc<...>`` (a 128-byte
``CUtensorMap`` in parameter space), its shape as ``i32`` s and its strides as
``i64`` s (Triton 3.9.0's calling convention; the kernel does not read them).

The host can encode a descriptor made once per program from values it knows
at launch: at the top level of the function's entry block (not in a loop,
branch or partition, where it may be made again), its base a function
argument, each extent and stride a function argument (possibly sign- or
zero-extended) or a constant. Anything else stays a device-side descriptor.

:class:`HostTensorMap` says how the launcher builds each one from the call's
arguments; the bundle records it (``gemm_opt.runtime.bundle.TensorMap``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gemm_opt.core.ext_compat import ir
from gemm_opt.dialect.tile import constant_int

#: Value-preserving casts between a function argument and an extent or stride.
_EXTENSIONS = ("arith.extsi", "arith.extui")

#: A source: ("arg", argument index) or ("const", value).
Source = tuple[str, int]


@dataclass(frozen=True)
class HostTensorMap:
    """Where the launcher finds one host descriptor's fields among the call's arguments.

    ``base``, ``shape`` and ``strides`` name tile function arguments (by
    index) or constants; strides are in elements, the last one 1. The box,
    swizzle and element type are Triton's, read back from the lowered module
    so that host and kernel agree on them
    (:func:`gemm_opt.lowering.triton_bridge.tensordesc_metadata`).
    """

    base: int
    shape: tuple[Source, ...]
    strides: tuple[Source, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "base": self.base,
            "shape": [list(s) for s in self.shape],
            "strides": [list(s) for s in self.strides],
        }


def _source(value: ir.Value, entry: ir.Block) -> Source | None:
    """Where the host finds ``value``: an argument of ``entry`` or a constant."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        if owner == entry:
            return ("arg", ir.BlockArgument(value).arg_number)
        return None
    # Equivalent mutant: negated; an ir.Operation has .operation too (itself).
    op = owner.operation if hasattr(owner, "operation") else owner
    if op.name in _EXTENSIONS:
        inner = _source(op.operands[0], entry)
        return inner if inner is not None and inner[0] == "arg" else None
    c = constant_int(value)
    return None if c is None else ("const", c)


def host_tensormap(op: Any, entry: ir.Block) -> HostTensorMap | None:
    """The host encoding of ``tile.make_tensor_descriptor`` ``op``, or None
    where the host cannot make it (see the module doc)."""
    if op.operation.block != entry:
        return None
    base = _source(op.base, entry)
    if base is None or base[0] != "arg":
        return None
    shape = [_source(v, entry) for v in op.shape]
    strides = [_source(v, entry) for v in op.strides]
    if any(s is None for s in (*shape, *strides)) or strides[-1] != ("const", 1):
        return None
    return HostTensorMap(base[1], tuple(shape), tuple(strides))  # type: ignore[arg-type]


__all__ = ["HostTensorMap", "Source", "host_tensormap"]
