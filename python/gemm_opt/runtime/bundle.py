"""The kernel bundle file: compiled kernels and what it takes to launch them.

A bundle is one UTF-8 JSON document, so that it can be read without any
compiler and checked by eye::

    {
      "format": "gemm-opt-bundle",
      "version": 1,
      "kernels": [
        {
          "name": "gemm_fp16_aligned",      # unique in the bundle
          "symbol": "gemm",                 # the kernel's symbol in the binary
          "target": "cuda:90",              # the compiler target
          "sm": "sm_90a",                   # what ptxas compiled for ("a": this minor only)
          "num_warps": 8, "threads_per_warp": 32, "num_ctas": 1,
          "shared_bytes": 65536,            # dynamic shared memory per CTA
          "global_scratch": {"bytes": 0, "align": 1},   # per CTA
          "profile_scratch": {"bytes": 0, "align": 1},  # per CTA
          "args": [                         # in source order
            {"name": "a", "type": "*fp16", "divisibility": 16},
            {"name": "M", "type": "i32"},
            {"name": "BLOCK", "type": "i32", "constexpr": 128},   # not passed
            ...
          ],
          "grid": [{"cdiv": ["M", 128]}, {"cdiv": ["N", 128]}, 1],
          "tensormaps": [                   # optional: TMA descriptors the host encodes
            {"base": "a", "shape": ["M", "K"], "strides": ["lda", 1],
             "block": [128, 64], "swizzle": 3, "elem_bytes": 2, "dtype": 6}
          ],
          "meta": {...},                    # free-form: block shape, dtype, variant
          "triton": "3.9.0", "gemm_opt": "0.1.0", "triton_hash": "...",
          "binary_sha256": "...", "binary": "<base64 cubin>"
        }
      ]
    }

Types use Triton's signature spelling (``*fp16`` is a pointer to fp16,
``i32`` a 32-bit integer). ``divisibility`` is a fact the kernel was compiled
to assume (a pointer's address or an integer's value is a multiple of it), so
the launcher checks it: a kernel run on arguments that break it computes
garbage silently. ``constexpr`` arguments were specialized at compile time:
the caller passes the same value and it is not a kernel parameter.

``tensormaps`` are TMA descriptors the launcher encodes on the host from the
call's own arguments (``cuTensorMapEncodeTiled``: the ``base`` pointer, the
``shape`` and element ``strides``, each an argument's name or a constant,
outermost first; the ``block`` box, ``swizzle`` and ``dtype`` as the driver's
``CU_TENSOR_MAP_SWIZZLE_*`` and ``CU_TENSOR_MAP_DATA_TYPE_*`` codes). Each
becomes, after the arguments and in order, the parameters Triton 3.9.0 gives a
host ``TensorDescriptor``: the 128-byte ``CUtensorMap``, its shape as
``i32`` s and its strides as ``i64`` s. Every kernel parameter list ends with
Triton's two scratch pointers (global and profile scratch).

The reader refuses, as :class:`BundleError`, every document a launch could
not run as written: besides the shape of each field, the limits of the
kernel's target in :mod:`gemm_opt.core.targets` (warp size, threads and
shared memory per block), the grid limits of a CUDA launch, and each
``constexpr`` value's fit in its argument's type. A malformed file (a cache
entry torn or edited by hand, deep nesting, numbers no type holds) is a
``BundleError`` too, never another exception.

This module needs only the standard library (and the pure-Python target
table): the launcher and the benchmark runner read bundles on machines
without the compiler.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import math
import os
import re
import struct
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gemm_opt.core.targets import MAX_GRID, TARGETS, Target

FORMAT = "gemm-opt-bundle"
VERSION = 1

#: Scalar types as Triton's launcher passes them: (struct format, bytes).
#: ``i1`` travels as a 32-bit integer, as in Triton's launcher; ``bf16`` as
#: the top half of the fp32 bits (truncated, as there).
SCALAR_TYPES: dict[str, str] = {
    "i1": "<i",
    "i8": "<b",
    "i16": "<h",
    "i32": "<i",
    "i64": "<q",
    "u1": "<I",
    "u8": "<B",
    "u16": "<H",
    "u32": "<I",
    "u64": "<Q",
    "fp16": "<e",
    "bf16": "<H",
    "fp32": "<f",
    "fp64": "<d",
}
#: Element types a pointer may point to (``*`` + one of these), each with the
#: torch dtype of the tensors it takes.
POINTEE_TYPES: dict[str, str] = {
    "fp16": "float16",
    "bf16": "bfloat16",
    "fp32": "float32",
    "fp64": "float64",
    "fp8e4nv": "float8_e4m3fn",
    "fp8e5": "float8_e5m2",
    "i1": "bool",
    "i8": "int8",
    "i16": "int16",
    "i32": "int32",
    "i64": "int64",
    "u8": "uint8",
    "u16": "uint16",
    "u32": "uint32",
    "u64": "uint64",
}
#: Triton's trailing kernel parameters, after the arguments.
SCRATCH_PARAMS = ("global_scratch", "profile_scratch")
#: How deeply a document may nest objects and lists. A bundle needs a handful of
#: levels; the bound keeps a corrupt file from exhausting the parser's stack.
MAX_DEPTH = 32


def int_range(ty: str) -> tuple[int, int]:
    """The values an integer type of :data:`SCALAR_TYPES` holds (``i1``: 0 and 1)."""
    if ty in ("i1", "u1"):
        return 0, 1
    bits = int(ty[1:])
    if ty[0] == "u":
        return 0, 2**bits - 1
    return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1


def is_int_type(ty: str) -> bool:
    """Whether ``ty`` is one of the integer types of :data:`SCALAR_TYPES`."""
    return ty in SCALAR_TYPES and ty[0] in "iu"


class BundleError(ValueError):
    """A bundle file is unreadable or breaks the format; the message names where."""


@dataclass(frozen=True)
class Arg:
    """One argument of a kernel, in source order."""

    name: str
    type: str
    divisibility: int = 1
    constexpr: int | float | bool | None = None

    @property
    def is_pointer(self) -> bool:
        return self.type.startswith("*")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "type": self.type}
        if self.divisibility != 1:
            out["divisibility"] = self.divisibility
        if self.constexpr is not None:
            out["constexpr"] = self.constexpr
        return out


@dataclass(frozen=True)
class GridDim:
    """One grid dimension: ``cdiv(arg, block)`` or a constant (``arg`` empty)."""

    constant: int = 1
    arg: str = ""
    block: int = 1

    def evaluate(self, scalars: dict[str, int]) -> int:
        if not self.arg:
            return self.constant
        return -(-scalars[self.arg] // self.block)

    def to_json(self) -> Any:
        return {"cdiv": [self.arg, self.block]} if self.arg else self.constant


@dataclass(frozen=True)
class Scratch:
    """Per-CTA scratch memory that Triton's launcher allocates for a kernel."""

    bytes: int = 0
    align: int = 1


#: Bytes of a ``CUtensorMap`` (its parameter is 64-byte aligned).
TENSORMAP_BYTES = 128
#: ``CU_TENSOR_MAP_SWIZZLE_*`` codes (none, 32, 64, 128 bytes) and the largest
#: ``CU_TENSOR_MAP_DATA_TYPE_*`` code.
TENSORMAP_SWIZZLES = (0, 1, 2, 3)
TENSORMAP_MAX_DTYPE = 12


@dataclass(frozen=True)
class TensorMap:
    """A TMA descriptor the launcher encodes from the call's arguments.

    ``base`` names a pointer argument; each entry of ``shape`` and ``strides``
    (elements, outermost first, the last stride 1) names an integer argument
    or is a constant.
    """

    base: str
    shape: tuple[str | int, ...]
    strides: tuple[str | int, ...]
    block: tuple[int, ...]
    swizzle: int
    elem_bytes: int
    dtype: int

    @property
    def rank(self) -> int:
        return len(self.shape)

    def to_json(self) -> dict[str, Any]:
        return {
            "base": self.base,
            "shape": list(self.shape),
            "strides": list(self.strides),
            "block": list(self.block),
            "swizzle": self.swizzle,
            "elem_bytes": self.elem_bytes,
            "dtype": self.dtype,
        }


@dataclass(frozen=True)
class BundleKernel:
    """One compiled kernel with its launch metadata."""

    name: str
    symbol: str
    target: str
    sm: str
    num_warps: int
    threads_per_warp: int
    shared_bytes: int
    args: tuple[Arg, ...]
    grid: tuple[GridDim, GridDim, GridDim]
    binary: bytes
    num_ctas: int = 1
    global_scratch: Scratch = Scratch()
    profile_scratch: Scratch = Scratch()
    triton: str = ""
    gemm_opt: str = ""
    triton_hash: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
    tensormaps: tuple[TensorMap, ...] = ()

    @property
    def threads(self) -> int:
        """Threads per CTA (the launch's block size)."""
        return self.num_warps * self.threads_per_warp

    @property
    def capability(self) -> tuple[int, int]:
        """The compute capability the binary was compiled for."""
        digits = self.sm[3:].rstrip("abf")
        return int(digits[:-1]), int(digits[-1])

    @property
    def arch_specific(self) -> bool:
        """``sm_90a``-style binaries run on that exact capability only."""
        return self.sm[-1] in "af"

    @property
    def params(self) -> tuple[Arg, ...]:
        """The arguments that are kernel parameters (constexpr ones are not)."""
        return tuple(a for a in self.args if a.constexpr is None)

    def runs_on(self, capability: tuple[int, int]) -> bool:
        """Whether the binary runs on a GPU of ``capability``.

        A cubin runs on its own major version at the same or a newer minor;
        an arch-specific one (``sm_90a``) on its own capability only.
        """
        major, minor = self.capability
        if self.arch_specific:
            return capability == (major, minor)
        return capability[0] == major and capability[1] >= minor

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "symbol": self.symbol,
            "target": self.target,
            "sm": self.sm,
            "num_warps": self.num_warps,
            "threads_per_warp": self.threads_per_warp,
            "num_ctas": self.num_ctas,
            "shared_bytes": self.shared_bytes,
            "global_scratch": {
                "bytes": self.global_scratch.bytes,
                "align": self.global_scratch.align,
            },
            "profile_scratch": {
                "bytes": self.profile_scratch.bytes,
                "align": self.profile_scratch.align,
            },
            "args": [a.to_json() for a in self.args],
            "grid": [g.to_json() for g in self.grid],
            **({"tensormaps": [t.to_json() for t in self.tensormaps]} if self.tensormaps else {}),
            "meta": self.meta,
            "triton": self.triton,
            "gemm_opt": self.gemm_opt,
            "triton_hash": self.triton_hash,
            "binary_sha256": hashlib.sha256(self.binary).hexdigest(),
            "binary": base64.b64encode(self.binary).decode("ascii"),
        }


@dataclass(frozen=True)
class Bundle:
    """Kernels by name, in file order."""

    kernels: tuple[BundleKernel, ...]
    path: str = ""

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for k in self.kernels:
            if k.name in seen:
                raise BundleError(f"{self.path or 'bundle'}: two kernels are named {k.name!r}")
            seen.add(k.name)

    def __getitem__(self, name: str) -> BundleKernel:
        for k in self.kernels:
            if k.name == name:
                return k
        known = ", ".join(k.name for k in self.kernels) or "none"
        raise KeyError(f"{self.path or 'bundle'} has no kernel {name!r} (it has: {known})")

    def __iter__(self):
        return iter(self.kernels)

    def __len__(self) -> int:
        return len(self.kernels)

    def names(self) -> list[str]:
        return [k.name for k in self.kernels]

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "kernels": [k.to_json() for k in self.kernels],
        }

    def dumps(self) -> str:
        # Equivalent mutant: indent 1->2 (layout only: every reader parses the JSON).
        return json.dumps(self.to_json(), indent=1) + "\n"

    def write(self, path: str | os.PathLike[str]) -> None:
        """Write the bundle atomically: a reader never sees half a file, and two
        writers of one path never share a temporary file (the last rename wins)."""
        path = Path(path)
        text = self.dumps()
        loads(text, str(path))  # never write what the reader would reject
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            os.fchmod(fd, 0o644)  # mkstemp's 0600 would hide a shared bundle from others
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise


# ---- reading and validation --------------------------------------------------


class _Reader:
    """Typed field access with the JSON path of every field in its errors."""

    def __init__(self, where: str) -> None:
        self.where = where

    def fail(self, path: str, message: str) -> BundleError:
        return BundleError(f"{self.where}: {path}: {message}")

    def obj(self, value: Any, path: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(path, f"expected an object, got {_kind(value)}")
        return value

    def field(self, obj: dict[str, Any], key: str, path: str, kind: type, default: Any = ...):
        if key not in obj:
            if default is not ...:
                return default
            raise self.fail(path, f"missing field {key!r}")
        value = obj[key]
        ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
        if not ok:
            raise self.fail(f"{path}.{key}", f"expected {kind.__name__}, got {_kind(value)}")
        return value

    def count(self, obj: dict[str, Any], key: str, path: str, low: int, default: Any = ...) -> int:
        value = self.field(obj, key, path, int, default)
        if value < low:
            raise self.fail(f"{path}.{key}", f"must be at least {low}, got {value}")
        return value

    def unknown(self, obj: dict[str, Any], known: set[str], path: str) -> None:
        extra = sorted(set(obj) - known)
        if extra:
            raise self.fail(path, f"unknown field {extra[0]!r}")


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), "null" if value is None else type(value).__name__
    )


_KERNEL_FIELDS = {
    "name",
    "symbol",
    "target",
    "sm",
    "num_warps",
    "threads_per_warp",
    "num_ctas",
    "shared_bytes",
    "global_scratch",
    "profile_scratch",
    "args",
    "grid",
    "tensormaps",
    "meta",
    "triton",
    "gemm_opt",
    "triton_hash",
    "binary_sha256",
    "binary",
}
#: What ptxas compiles for: ``sm_`` and ASCII digits (the last one the minor
#: version), then ``a`` or ``f`` for an arch-specific binary.
_SM_NAME = re.compile(r"sm_[0-9]{2,}[af]?")
#: A PTX identifier (the kernel's entry symbol).
_PTX_SYMBOL = re.compile(r"[A-Za-z_$%][A-Za-z0-9_$]*")


def _parse(text: str | bytes, where: str) -> Any:
    """The JSON document, duplicate keys and the non-JSON constants (``NaN``,
    ``Infinity``) refused: each would make the file mean something else to another reader."""

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        obj: dict[str, Any] = {}
        for key, value in items:
            if key in obj:
                raise BundleError(f"{where}: not a bundle: field {key!r} twice in one object")
            obj[key] = value
        return obj

    def constant(name: str) -> Any:
        raise BundleError(f"{where}: not a bundle: {name} is not a JSON number")

    try:
        return json.loads(text, object_pairs_hook=pairs, parse_constant=constant)
    except RecursionError:
        raise BundleError(f"{where}: not a bundle: nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as e:  # JSONDecodeError, UnicodeDecodeError, an integer of too many digits
        raise BundleError(f"{where}: not a bundle: invalid JSON ({e})") from None


def _child(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    name = key if key.isidentifier() else repr(key)
    return name if path == "bundle" else f"{path}.{name}"


def _check_tree(r: _Reader, doc: Any) -> None:
    """Refuse what JSON allows and no field holds: nesting deeper than :data:`MAX_DEPTH`,
    strings that are not Unicode text (lone surrogates), numbers that are not finite
    (``1e999`` parses as infinity). Iterative, so depth itself cannot break it."""
    stack: list[tuple[Any, int, str]] = [(doc, 1, "bundle")]
    while stack:
        value, depth, path = stack.pop()
        if isinstance(value, (dict, list)):
            if depth > MAX_DEPTH:
                raise r.fail(path, f"nested deeper than {MAX_DEPTH} levels")
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in items:
                child = _child(path, key)
                if isinstance(key, str) and not _is_text(key):
                    raise r.fail(child, "a field name is not valid Unicode text")
                stack.append((item, depth + 1, child))
        elif isinstance(value, str) and not _is_text(value):
            raise r.fail(path, "not valid Unicode text (a lone surrogate)")
        elif isinstance(value, float) and not math.isfinite(value):
            raise r.fail(path, f"{value} is not a finite number")


def _is_text(s: str) -> bool:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _read_target(r: _Reader, obj: dict[str, Any], path: str) -> Target:
    name = r.field(obj, "target", path, str)
    target = TARGETS.get(name)
    if target is None or not target.nvidia:
        cuda = ", ".join(n for n, t in TARGETS.items() if t.nvidia)
        raise r.fail(f"{path}.target", f"bundles hold CUDA kernels: {name!r} is not one of {cuda}")
    return target


def _check_type(r: _Reader, ty: str, path: str) -> None:
    if ty.startswith("*"):
        if ty[1:] not in POINTEE_TYPES:
            raise r.fail(path, f"unknown pointee type {ty[1:]!r} in {ty!r}")
    elif ty not in SCALAR_TYPES:
        known = ", ".join(SCALAR_TYPES)
        raise r.fail(path, f"unknown type {ty!r} (scalars: {known}; pointers: '*' + element)")


def _check_constexpr(r: _Reader, ty: str, value: Any, path: str) -> None:
    """A specialized value the kernel's type holds: the kernel was compiled with it, so
    one that does not fit (or a NaN, which no call could match) was never compiled."""
    if ty.startswith("*"):
        raise r.fail(path, "a pointer argument cannot be specialized")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise r.fail(path, f"expected a number, got {_kind(value)}")
    if is_int_type(ty):
        low, high = int_range(ty)
        if not isinstance(value, int):
            raise r.fail(path, f"expected an integer for a {ty} argument, got {value!r}")
        if not low <= value <= high:
            raise r.fail(path, f"{value} does not fit {ty} ({low} to {high})")
        return
    try:
        struct.pack("<f" if ty == "bf16" else SCALAR_TYPES[ty], float(value))
    except OverflowError:
        raise r.fail(path, f"{value!r} overflows {ty}") from None


def _read_arg(r: _Reader, value: Any, path: str) -> Arg:
    obj = r.obj(value, path)
    r.unknown(obj, {"name", "type", "divisibility", "constexpr"}, path)
    name = r.field(obj, "name", path, str)
    if not name.isidentifier():
        raise r.fail(f"{path}.name", f"{name!r} is not an identifier")
    ty = r.field(obj, "type", path, str)
    _check_type(r, ty, f"{path}.type")
    div = r.count(obj, "divisibility", path, 1, 1)
    const = obj.get("constexpr")
    if const is not None:
        _check_constexpr(r, ty, const, f"{path}.constexpr")
    return Arg(name, ty, div, const)


def _read_grid(r: _Reader, value: Any, path: str, args: tuple[Arg, ...]) -> tuple[GridDim, ...]:
    if not isinstance(value, list) or len(value) != 3:
        raise r.fail(path, "expected a list of 3 dimensions")
    scalars = {a.name for a in args if a.type in ("i32", "i64", "u32", "u64")}
    dims = []
    for i, d in enumerate(value):
        p = f"{path}[{i}]"
        if isinstance(d, int) and not isinstance(d, bool):
            if d < 1:
                raise r.fail(p, f"a constant dimension must be at least 1, got {d}")
            if d > MAX_GRID[i]:
                raise r.fail(p, f"a CUDA launch has at most {MAX_GRID[i]} here, got {d}")
            dims.append(GridDim(constant=d))
            continue
        obj = r.obj(d, p)
        r.unknown(obj, {"cdiv"}, p)
        pair = obj.get("cdiv")
        if (
            not isinstance(pair, list)
            or len(pair) != 2
            or not isinstance(pair[0], str)
            or not isinstance(pair[1], int)
            or isinstance(pair[1], bool)
        ):
            raise r.fail(p, 'expected an integer or {"cdiv": [argument name, block]}')
        name, block = pair
        if name not in scalars:
            raise r.fail(f"{p}.cdiv", f"{name!r} is not an integer argument of the kernel")
        if block < 1:
            raise r.fail(f"{p}.cdiv", f"block must be at least 1, got {block}")
        dims.append(GridDim(arg=name, block=block))
    return tuple(dims)


#: How a host descriptor's shape and strides travel (after its ``CUtensorMap``).
_TENSORMAP_PARAM_TYPES = {"shape": "i32", "strides": "i64"}


def _read_tensormap(r: _Reader, value: Any, path: str, args: tuple[Arg, ...]) -> TensorMap:
    obj = r.obj(value, path)
    fields = {"base", "shape", "strides", "block", "swizzle", "elem_bytes", "dtype"}
    r.unknown(obj, fields, path)
    pointers = {a.name for a in args if a.is_pointer and a.constexpr is None}
    ints = {a.name: int_range(a.type) for a in args if is_int_type(a.type)}
    base = r.field(obj, "base", path, str)
    if base not in pointers:
        raise r.fail(f"{path}.base", f"{base!r} is not a pointer argument of the kernel")
    lists = {}
    for key in ("shape", "strides", "block"):
        items = r.field(obj, key, path, list)
        if not 1 <= len(items) <= 5:
            raise r.fail(f"{path}.{key}", f"expected 1 to 5 entries, got {len(items)}")
        for i, item in enumerate(items):
            is_int = isinstance(item, int) and not isinstance(item, bool)
            if key == "block":
                if not is_int or not 1 <= item <= 256:
                    raise r.fail(
                        f"{path}.block[{i}]", f"expected an integer 1 to 256, got {item!r}"
                    )
                continue
            travels = _TENSORMAP_PARAM_TYPES[key]
            low, high = int_range(travels)
            if is_int:
                ok = 0 <= item <= high
            else:
                held = ints.get(item) if isinstance(item, str) else None
                # Equivalent mutant: held[0] -> held[1] (no launcher integer type
                # starts below the travelling type's range without also ending above it).
                ok = held is not None and low <= held[0] and held[1] <= high
            if not ok:
                raise r.fail(
                    f"{path}.{key}[{i}]",
                    f"expected a constant 0 to {high} or an integer argument whose values "
                    f"fit {travels} (as the entry is passed), got {item!r}",
                )
        lists[key] = tuple(items)
    if not len(lists["shape"]) == len(lists["strides"]) == len(lists["block"]):
        raise r.fail(path, "shape, strides and block must have one entry per dimension")
    if lists["strides"][-1] != 1:
        raise r.fail(f"{path}.strides", "the innermost stride must be the constant 1")
    swizzle = r.count(obj, "swizzle", path, 0)
    if swizzle not in TENSORMAP_SWIZZLES:
        raise r.fail(f"{path}.swizzle", f"expected one of {TENSORMAP_SWIZZLES}, got {swizzle}")
    elem_bytes = r.count(obj, "elem_bytes", path, 1)
    if elem_bytes not in (1, 2, 4, 8):
        raise r.fail(f"{path}.elem_bytes", f"expected 1, 2, 4 or 8, got {elem_bytes}")
    dtype = r.count(obj, "dtype", path, 0)
    if dtype > TENSORMAP_MAX_DTYPE:
        raise r.fail(f"{path}.dtype", f"expected a code 0 to {TENSORMAP_MAX_DTYPE}, got {dtype}")
    return TensorMap(
        base, lists["shape"], lists["strides"], lists["block"], swizzle, elem_bytes, dtype
    )


def _read_scratch(r: _Reader, obj: dict[str, Any], key: str, path: str) -> Scratch:
    value = r.obj(obj.get(key, {}), f"{path}.{key}")
    r.unknown(value, {"bytes", "align"}, f"{path}.{key}")
    align = r.count(value, "align", f"{path}.{key}", 1, 1)
    if align & (align - 1):
        raise r.fail(f"{path}.{key}.align", f"must be a power of two, got {align}")
    return Scratch(r.count(value, "bytes", f"{path}.{key}", 0, 0), align)


def _read_launch(r: _Reader, obj: dict[str, Any], path: str, target: Target) -> tuple[int, ...]:
    """Warps, threads per warp and dynamic shared memory, within ``target``'s limits."""
    num_warps = r.count(obj, "num_warps", path, 1)
    if num_warps & (num_warps - 1):
        raise r.fail(f"{path}.num_warps", f"must be a power of two, got {num_warps}")
    # Equivalent mutant: 1->2 (the warp-size check below refuses every other count).
    threads_per_warp = r.count(obj, "threads_per_warp", path, 1)
    if threads_per_warp != target.warp_size:
        raise r.fail(
            f"{path}.threads_per_warp",
            f"{target.name} has warps of {target.warp_size} threads, got {threads_per_warp}",
        )
    if num_warps * threads_per_warp > target.max_threads_per_block:
        raise r.fail(
            path,
            f"{num_warps} warps of {threads_per_warp} exceed {target.max_threads_per_block} "
            f"threads, the most one {target.name} block launches",
        )
    shared_bytes = r.count(obj, "shared_bytes", path, 0)
    if shared_bytes > target.shared_memory_bytes:
        raise r.fail(
            f"{path}.shared_bytes",
            f"{shared_bytes} bytes exceed the {target.shared_memory_bytes} bytes of shared "
            f"memory one {target.name} block may allocate",
        )
    return num_warps, threads_per_warp, shared_bytes


def _read_kernel(r: _Reader, value: Any, path: str) -> BundleKernel:
    obj = r.obj(value, path)
    r.unknown(obj, _KERNEL_FIELDS, path)
    name = r.field(obj, "name", path, str)
    if not name:
        raise r.fail(f"{path}.name", "must not be empty")
    path = f"{path} ({name!r})" if not name.isprintable() else f"{path} ({name})"
    target = _read_target(r, obj, path)
    sm = r.field(obj, "sm", path, str)
    if not _SM_NAME.fullmatch(sm):
        raise r.fail(f"{path}.sm", f"expected an SM name like 'sm_90a', got {sm!r}")
    symbol = r.field(obj, "symbol", path, str)
    if not _PTX_SYMBOL.fullmatch(symbol):
        raise r.fail(f"{path}.symbol", f"{symbol!r} is not a PTX identifier")
    raw_args = r.field(obj, "args", path, list)
    args = tuple(_read_arg(r, a, f"{path}.args[{i}]") for i, a in enumerate(raw_args))
    names = [a.name for a in args]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup is not None:
        raise r.fail(f"{path}.args", f"two arguments are named {dup!r}")
    encoded = r.field(obj, "binary", path, str)
    try:
        binary = base64.b64decode(encoded, validate=True)
    except ValueError:
        raise r.fail(f"{path}.binary", "is not valid base64") from None
    if not binary.startswith(b"\x7fELF"):
        raise r.fail(f"{path}.binary", "is not an ELF binary (a cubin)")
    digest = r.field(obj, "binary_sha256", path, str)
    if hashlib.sha256(binary).hexdigest() != digest:
        raise r.fail(f"{path}.binary", "does not match binary_sha256 (the file is corrupt)")
    num_warps, threads_per_warp, shared_bytes = _read_launch(r, obj, path, target)
    return BundleKernel(
        name=name,
        symbol=symbol,
        target=target.name,
        sm=sm,
        num_warps=num_warps,
        threads_per_warp=threads_per_warp,
        num_ctas=r.count(obj, "num_ctas", path, 1, 1),
        shared_bytes=shared_bytes,
        global_scratch=_read_scratch(r, obj, "global_scratch", path),
        profile_scratch=_read_scratch(r, obj, "profile_scratch", path),
        args=args,
        grid=_read_grid(r, obj.get("grid"), f"{path}.grid", args),  # type: ignore[arg-type]
        tensormaps=tuple(
            _read_tensormap(r, t, f"{path}.tensormaps[{i}]", args)
            for i, t in enumerate(r.field(obj, "tensormaps", path, list, []))
        ),
        meta=r.obj(obj.get("meta", {}), f"{path}.meta"),
        triton=r.field(obj, "triton", path, str, ""),
        gemm_opt=r.field(obj, "gemm_opt", path, str, ""),
        triton_hash=r.field(obj, "triton_hash", path, str, ""),
        binary=binary,
    )


def loads(text: str | bytes, where: str = "bundle") -> Bundle:
    """Parse and validate a bundle document; :class:`BundleError` names the bad field.

    Every malformed document is a :class:`BundleError` (a cache that rebuilds bad
    entries relies on it), never another exception.
    """
    r = _Reader(where)
    doc = _parse(text, where)
    _check_tree(r, doc)
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise BundleError(f'{where}: not a bundle: no "format": "{FORMAT}" field')
    version = doc.get("version")
    if type(version) is not int or version != VERSION:  # True == 1 in Python
        raise BundleError(
            f"{where}: bundle format version {version!r}; this gemm-opt reads version {VERSION}"
        )
    r.unknown(doc, {"format", "version", "kernels"}, "bundle")
    kernels = r.field(doc, "kernels", "bundle", list)
    return Bundle(tuple(_read_kernel(r, k, f"kernels[{i}]") for i, k in enumerate(kernels)), where)


def read_bundle(path: str | os.PathLike[str]) -> Bundle:
    """Read and validate the bundle file at ``path``."""
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise BundleError(f"{path}: cannot read the bundle: {e.strerror or e}") from None
    return loads(data, str(path))
