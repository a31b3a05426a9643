"""The modes of a scheduled GEMM, as string enums.

Each mode is a :class:`StrEnum` whose values are the strings the project has
always used: they are the ``tile.gemm_schedule`` attribute values, parts of
bundle names and the GEMM API's arguments, so a member compares, hashes,
formats and serializes as its string, and its ``repr`` is the string's (error
messages that list the modes read as before). Pure Python: no MLIR.
"""

from __future__ import annotations

import sys
from enum import Enum

if sys.version_info >= (3, 11):
    from enum import StrEnum
else:  # Python 3.10: the same behaviour, by hand

    class StrEnum(str, Enum):
        __str__ = str.__str__
        __format__ = str.__format__


class Mode(StrEnum):
    """A mode named by its string value (see the module doc)."""

    def __repr__(self) -> str:
        return repr(self.value)


class Kind(Mode):
    """How output tiles map to programs (``tile.gemm_schedule``'s ``kind``)."""

    DATA_PARALLEL = "data-parallel"
    PERSISTENT = "persistent"
    WORK_STEALING = "work-stealing"
    STREAM_K = "stream-k"
    SPLIT_K = "split-k"


class Reduction(Mode):
    """How stream-K combines the partials of a split tile."""

    ATOMIC = "atomic"
    LINEAR = "linear"
    TREE = "tree"


class Grouped(Mode):
    """The grouped form: ``m`` (forward, dgrad: groups of rows), ``k`` (wgrad:
    groups of K rows, one output per group) or ``none`` (dense)."""

    NONE = "none"
    M = "m"
    K = "k"


class Body(Mode):
    """The per-tile body a schedule kernel is built with."""

    AUTO = "auto"
    BLOCKS = "blocks"
    PIPELINED = "pipelined"


class TileLoop(Mode):
    """How ``tile-lower-gemm-schedule`` visits a wgrad schedule's tiles
    (``tile.gemm_schedule``'s ``tile_loop``, grouped "k" only): ``flat``, one
    loop over the program's tiles; ``per-group``, a loop over the groups and
    one over the program's tiles of each, with the body's descriptors made
    once per group."""

    FLAT = "flat"
    PER_GROUP = "per-group"


class Scale(Mode):
    """How an FP8 schedule kernel scales its fp32 accumulator (the recipes of
    :mod:`gemm_opt.core.scaling` it runs): ``none`` (no scale arguments),
    ``tensorwise`` (one fp32 scale each for A and B) or ``rowwise``
    (``scale_a`` one per row of C, ``scale_b`` one per column), both in the
    epilogue; ``block128`` inside the K loop, each 128-deep K block's product
    promoted into the accumulator times its row's and column's scales; ``mx32``
    (MXFP8) in the MMA itself, ``tile.scaled_wmma`` with one e8m0 scale per 32
    elements of K (targets with a block-scaled MMA: gfx1250, gfx950)."""

    NONE = "none"
    TENSORWISE = "tensorwise"
    ROWWISE = "rowwise"
    BLOCK128 = "block128"
    MX32 = "mx32"


class Activation(Mode):
    """The elementwise function a schedule's epilogue applies to each output
    element after the bias (``tile.gemm_schedule``'s ``activation``): ``none``,
    ``relu`` (``max(x, 0)``, NaN kept), ``gelu`` (``x * Phi(x)`` with erf),
    ``gelu-tanh`` (the tanh approximation, computed as ``x * sigmoid(2u)``,
    ``u = sqrt(2/pi) * (x + 0.044715 x^3)``, the same function without a tanh
    instruction), ``silu`` (``x * sigmoid(x)``) or ``swiglu`` (``silu(gate) * up``
    of two accumulators, B's halves ``[gate | up]`` along N: the output has half
    B's columns)."""

    NONE = "none"
    RELU = "relu"
    GELU = "gelu"
    GELU_TANH = "gelu-tanh"
    SILU = "silu"
    SWIGLU = "swiglu"


class CLayout(Mode):
    """How a schedule kernel writes its ``M x N`` output through C and ``ldc``
    (``tile.gemm_schedule``'s ``c_layout``): ``row-major`` (element (m, n) at
    ``m * ldc + n``) or ``col-major`` (at ``m + n * ldc``: the kernel's output
    is the transpose of the matrix C holds). Swap-AB runs ``C = A @ B`` as
    ``C^T = B^T @ A^T``, the wide N on the MMA's M side and the few rows of A
    on its narrow N side, and stores ``C^T`` column-major: C row-major."""

    ROW_MAJOR = "row-major"
    COL_MAJOR = "col-major"


KINDS: tuple[Kind, ...] = tuple(Kind)
REDUCTIONS: tuple[Reduction, ...] = tuple(Reduction)
GROUPED: tuple[Grouped, ...] = tuple(Grouped)
BODIES: tuple[Body, ...] = tuple(Body)
TILE_LOOPS: tuple[TileLoop, ...] = tuple(TileLoop)
SCALES: tuple[Scale, ...] = tuple(Scale)
ACTIVATIONS: tuple[Activation, ...] = tuple(Activation)
#: Each activation by its name: a lookup that torch.compile traces (calling the
#: enum class inside a traced call is not supported by every torch on every Python).
ACTIVATION_BY_NAME: dict[str, Activation] = {a.value: a for a in Activation}
#: The kinds a SwiGLU epilogue runs under: one program holds each tile's two
#: finished sums (stream-K and split-K partials hold one accumulator per tile).
SWIGLU_KINDS: tuple[Kind, ...] = (Kind.DATA_PARALLEL, Kind.PERSISTENT, Kind.WORK_STEALING)
C_LAYOUTS: tuple[CLayout, ...] = tuple(CLayout)
#: The kinds an FP8 schedule kernel is built for: every kind. The recipes are
#: linear in the accumulator, so where a tile's K range is split (stream-K,
#: split-K) each program's fp32 partial is scaled where it is computed
#: (tensorwise, rowwise: by the body's epilogue; block128: each K block's
#: promotion; mx32: in the MMA) and the reduction adds scaled partials.
FP8_KINDS: tuple[Kind, ...] = (
    Kind.DATA_PARALLEL,
    Kind.PERSISTENT,
    Kind.WORK_STEALING,
    Kind.STREAM_K,
    Kind.SPLIT_K,
)
#: The kinds a grouped GEMM runs under: all groups' tiles over one persistent grid.
GROUPED_KINDS: tuple[Kind, ...] = (Kind.PERSISTENT,)
#: Stream-K reductions that combine partials through flags and fp32 partial tiles.
FIXUP_REDUCTIONS: tuple[Reduction, ...] = (Reduction.LINEAR, Reduction.TREE)
#: The reduction a stream-K schedule gets when none is named: deterministic
#: (bitwise identical run to run for a fixed grid), needs no zeroed output.
DEFAULT_REDUCTION = Reduction.LINEAR

__all__ = [
    "ACTIVATIONS",
    "ACTIVATION_BY_NAME",
    "BODIES",
    "C_LAYOUTS",
    "DEFAULT_REDUCTION",
    "FIXUP_REDUCTIONS",
    "FP8_KINDS",
    "GROUPED",
    "GROUPED_KINDS",
    "KINDS",
    "REDUCTIONS",
    "SCALES",
    "SWIGLU_KINDS",
    "TILE_LOOPS",
    "Activation",
    "Body",
    "CLayout",
    "Grouped",
    "Kind",
    "Mode",
    "Reduction",
    "Scale",
    "StrEnum",
    "TileLoop",
]
