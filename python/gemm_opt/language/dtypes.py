"""Element and scalar types, and the annotations of kernel parameters."""

from __future__ import annotations

from typing import Any

from gemm_opt.core.ext_compat import cast, ir
from gemm_opt.language.errors import fail


class dtype:
    """An element or scalar type: ``tl.float16``, ``tl.int32``, ...

    Used as an annotation (``M: tl.int32``), as an argument
    (``tl.zeros(shape, tl.float32, layout)``) and as a constexpr value.
    """

    def __init__(self, name: str, kind: str, bits: int) -> None:
        self.name = name
        self.kind = kind  # "int" | "float"
        self.bits = bits

    def __repr__(self) -> str:
        return f"tl.{self.name}"

    @property
    def is_int(self) -> bool:
        return self.kind == "int"

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    def to_ir(self) -> ir.Type:
        """The MLIR type (needs an active context)."""
        if self.is_int:
            return ir.IntegerType.get_signless(self.bits)
        return {
            "float16": ir.F16Type.get,
            "bfloat16": ir.BF16Type.get,
            "float32": ir.F32Type.get,
        }[self.name]()


int1 = dtype("int1", "int", 1)
int32 = dtype("int32", "int", 32)
int64 = dtype("int64", "int", 64)
float16 = dtype("float16", "float", 16)
bfloat16 = dtype("bfloat16", "float", 16)
float32 = dtype("float32", "float", 32)

_DTYPES = {d.name: d for d in (int1, int32, int64, float16, bfloat16, float32)}
_DTYPES.update(
    {
        "i1": int1,
        "i32": int32,
        "i64": int64,
        "f16": float16,
        "fp16": float16,
        "bf16": bfloat16,
        "f32": float32,
        "fp32": float32,
    }
)


def as_dtype(value: Any, what: str) -> dtype:
    """``value`` as a dtype (a dtype or its name), else a CompilationError."""
    if isinstance(value, dtype):
        return value
    if isinstance(value, str) and value in _DTYPES:
        return _DTYPES[value]
    raise fail(f"{what} must be a tl dtype (tl.float16, tl.bfloat16, ...), got {value!r}")


def dtype_of(t: ir.Type) -> dtype:
    """The dtype of an MLIR scalar type."""
    it = cast(t, ir.IntegerType)
    if it is not None and it.width in (1, 32, 64):
        return {1: int1, 32: int32, 64: int64}[it.width]
    for cls, d in ((ir.F16Type, float16), (ir.BF16Type, bfloat16), (ir.F32Type, float32)):
        if cast(t, cls) is not None:
            return d
    raise fail(f"unsupported element type {t}")


class pointer_type:
    """``tl.ptr(elem)``: the annotation of a global-memory pointer argument.

    ``elem`` is a dtype, or the name of a constexpr parameter whose value is
    the dtype (``a: tl.ptr("DTYPE")``), so one kernel serves several types.
    """

    def __init__(self, element: dtype | str) -> None:
        if not isinstance(element, dtype | str):
            raise fail(f"tl.ptr expects a dtype or a constexpr name, got {element!r}")
        self.element = element

    def __repr__(self) -> str:
        return f"tl.ptr({self.element!r})"


def ptr(element: dtype | str) -> pointer_type:
    """The annotation of a pointer argument: ``a: tl.ptr(tl.float16)``."""
    return pointer_type(element)


class divisible:
    """Annotation of an integer argument with a divisibility fact:
    ``lda: tl.divisible(tl.int64, 16)`` says every value passed is a multiple
    of 16. It becomes the argument's ``tile.divisibility`` attribute, which
    the lowering may rely on (cuda:90 TMA descriptors need 16-byte aligned
    strides) and a launcher must check.
    """

    def __init__(self, scalar: dtype, by: int) -> None:
        if not isinstance(scalar, dtype) or not scalar.is_int or scalar.bits not in (32, 64):
            raise fail(f"tl.divisible expects tl.int32 or tl.int64, got {scalar!r}")
        if isinstance(by, bool) or not isinstance(by, int) or not 1 <= by < 2**31:
            raise fail(f"tl.divisible expects a positive int divisor below 2**31, got {by!r}")
        self.dtype = scalar
        self.by = by

    def __repr__(self) -> str:
        return f"tl.divisible({self.dtype!r}, {self.by})"


class constexpr:
    """Annotation of a compile-time parameter: ``BLOCK_M: tl.constexpr = 128``.

    Its value is given to :meth:`Kernel.build_ir` / :meth:`Kernel.compile` as
    a keyword argument and reaches the kernel body as a plain Python value.
    """


__all__ = [
    "as_dtype",
    "bfloat16",
    "constexpr",
    "divisible",
    "dtype",
    "dtype_of",
    "float16",
    "float32",
    "int1",
    "int32",
    "int64",
    "pointer_type",
    "ptr",
]
