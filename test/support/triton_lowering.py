"""Differential-testing helpers: per-warp TDM descriptors from Triton's lowering.

This module is test support, not part of the compiler. It

1. builds a TTGIR module holding one ``amdg.async_tdm_copy_global_to_local``
   (or one ``amdg.async_tdm_fused_copy_global_to_local``) with constant
   tensor shapes, strides and offsets, with Triton's typed IR builder
   (:mod:`support.tdm_ttgir`: Gluon's op builder and layout classes);
2. verifies and compiles it for ``hip:gfx1250`` in a child process through
   :mod:`gemm_opt.lowering.triton_bridge` and keeps Triton's printed TTGIR
   and the optimized LLVM IR (cached on disk, keyed by the Triton version and
   the configuration's canonical description, :func:`cache_key`);
3. runs a small interpreter over that straight-line LLVM IR once per value
   of ``llvm.amdgcn.wave.id`` and decodes the operands of every
   ``llvm.amdgcn.tensor.load.to.lds`` call (predicate, LDS address, global
   address, per-warp tensor dims and tile dims).

No MLIR text is written or edited here. The regular expressions and the
tokenizer below read LLVM IR text, the output Triton's AMDGPU backend
produced (``asm["llir"]``), which has no typed Python API to read it with.

Triton is imported lazily, only when a compile is needed. Nothing here
depends on the model under test: the tests compare :class:`WarpDescriptor`
records with ``gemm_opt.core.tdm_layout``.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gemm_opt.core.layouts import PaddedShared, PartitionedShared, SwizzledShared
from support.tdm_ttgir import CONSTANT, CopyKernel, Member, build

# Address given to the global pointer argument of member ``i`` (in bytes).
# The members are far apart so that a descriptor names its member uniquely;
# every address stays far below 2**57 (the TDM global address width).
GLOBAL_BASE = 1 << 32
GLOBAL_MEMBER_STRIDE = 1 << 40
ELEMENT_BYTES = 2  # f16

# ---------------------------------------------------------------------------
# Configurations
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class CopyMember:
    """One global-to-shared copy: a block of an f16 tensor.

    ``tensor_shape`` defaults to ``block_shape`` and ``offsets`` to zeros.
    ``shared_layout`` defaults to an unswizzled row-major swizzled layout.
    """

    block_shape: tuple[int, ...]
    hint: int | None = None
    shared_layout: SwizzledShared | PaddedShared | PartitionedShared | None = None
    tensor_shape: tuple[int, ...] | None = None
    offsets: tuple[int, ...] | None = None
    pred: int = 1

    @property
    def rank(self) -> int:
        return len(self.block_shape)

    @property
    def full_tensor_shape(self) -> tuple[int, ...]:
        return tuple(self.tensor_shape or self.block_shape)

    @property
    def full_offsets(self) -> tuple[int, ...]:
        return tuple(self.offsets or (0,) * self.rank)

    @property
    def strides(self) -> tuple[int, ...]:
        """Row-major element strides of the tensor's storage.

        The pitch of each dim covers both the tensor and the block at its
        offsets, so every tile origin (even one outside the tensor bounds)
        decodes uniquely from its address.
        """
        pitch = [
            max(s, o + b)
            for s, o, b in zip(
                self.full_tensor_shape, self.full_offsets, self.block_shape, strict=True
            )
        ]
        out = [1] * len(pitch)
        for d in range(len(pitch) - 2, -1, -1):
            out[d] = out[d + 1] * pitch[d + 1]
        return tuple(out)


@dataclass(frozen=True)
class LoweringConfig:
    """A single copy (one member, ``fused=False``) or a fused copy."""

    num_warps: int
    members: tuple[CopyMember, ...]
    fused: bool = False

    @staticmethod
    def single(
        block_shape: Sequence[int],
        num_warps: int,
        hint: int | None = None,
        shared_layout=None,
        tensor_shape: Sequence[int] | None = None,
        offsets: Sequence[int] | None = None,
    ) -> LoweringConfig:
        member = CopyMember(
            tuple(block_shape),
            hint,
            shared_layout,
            None if tensor_shape is None else tuple(tensor_shape),
            None if offsets is None else tuple(offsets),
        )
        return LoweringConfig(num_warps, (member,), fused=False)

    @staticmethod
    def fused_copy(members: Sequence[CopyMember | tuple], num_warps: int) -> LoweringConfig:
        out = []
        for m in members:
            if not isinstance(m, CopyMember):
                shape, hint, layout = m
                m = CopyMember(tuple(shape), hint, layout)
            out.append(m)
        return LoweringConfig(num_warps, tuple(out), fused=True)


def copy_kernel(config: LoweringConfig) -> CopyKernel:
    """The kernel that performs ``config``'s copy once, with constant operands."""
    members = tuple(
        Member(
            m.block_shape, m.shared_layout, m.full_tensor_shape, m.strides, m.full_offsets, m.pred
        )
        for m in config.members
    )
    if config.fused:
        hints: tuple[int, ...] | None = tuple(m.hint for m in config.members)
    else:
        hints = None if config.members[0].hint is None else (config.members[0].hint,)
    return CopyKernel(config.num_warps, members, hints, config.fused, CONSTANT, "tdm_copy")


# ---------------------------------------------------------------------------
# Building and compiling, with an on-disk cache
# ---------------------------------------------------------------------------


class LoweringError(RuntimeError):
    """Triton rejected the module (verifier error) or failed to lower it (assertion)."""


def cache_dir() -> Path:
    """Where compiled LLVM IR is cached (``$GEMM_OPT_LLIR_CACHE`` or a temp dir)."""
    env = os.environ.get("GEMM_OPT_LLIR_CACHE")
    if env:
        return Path(env)
    return Path(tempfile.gettempdir()) / "gemm_opt_tdm_llir_cache"


def _triton_version() -> str:
    import triton

    return triton.__version__


def cache_key(config: LoweringConfig) -> str:
    """The cache key: Triton's version and the canonical description of ``config``
    (its frozen dataclass ``repr``, fields in declaration order)."""
    text = f"{_triton_version()}\n{copy_kernel(config)!r}"
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _isolated(work: Callable[[Any], Any]) -> Any:
    """Run ``work(tt)`` (``tt``: a fresh gfx1250 Triton handle) in a child;
    Triton's diagnostics, exceptions and aborts become a :class:`LoweringError`."""
    from gemm_opt.lowering import triton_bridge as tb

    run = tb.run_isolated(lambda report: work(tb.triton_ir("gfx1250")))
    if run.ok:
        return run.result
    lines = [str(d) for d in tb.parse_diagnostics(run.stderr)]
    if run.exception:
        lines.append(run.exception)
    lines += run.assertions()
    if run.died:
        lines.append(f"Triton {run.died}")
    raise LoweringError("\n".join(dict.fromkeys(lines)) or "Triton failed without a message")


def make_ttgir(config: LoweringConfig) -> str:
    """Triton's printed TTGIR of ``config``'s kernel (built, verified, printed by Triton)."""
    from gemm_opt.lowering.triton_bridge import verified_text

    kernel = copy_kernel(config)
    return _isolated(lambda tt: verified_text(build(tt, kernel)))


def compile_config(config: LoweringConfig, use_cache: bool = True) -> tuple[str, str]:
    """``(ttgir, llir)`` of ``config``'s kernel, compiled for gfx1250.

    Built with Triton's IR builder, verified, printed and compiled in one
    child process. Results (and :class:`LoweringError` texts) are cached by
    :func:`cache_key`.
    """
    key = cache_key(config)
    root = cache_dir()
    ok_path, ir_path, err_path = (root / f"{key}{ext}" for ext in (".ll", ".ttgir", ".err"))
    if use_cache:
        if ok_path.exists() and ir_path.exists():
            return ir_path.read_text(), ok_path.read_text()
        if err_path.exists():
            raise LoweringError(err_path.read_text())

    from gemm_opt.lowering import triton_bridge as tb

    kernel = copy_kernel(config)

    def work(tt: Any) -> tuple[str, str]:
        text = tb.verified_text(build(tt, kernel))
        llir = tb.compile_module(text, "gfx1250", None).asm["llir"]
        return text, str(llir)

    tb.warm_for_compile()
    try:
        ttgir, llir = _isolated(work)
    except LoweringError as exc:
        if use_cache:
            root.mkdir(parents=True, exist_ok=True)
            _atomic_write(err_path, str(exc))
        raise
    if use_cache:
        root.mkdir(parents=True, exist_ok=True)
        _atomic_write(ir_path, ttgir)
        _atomic_write(ok_path, llir)
    return ttgir, llir


def _atomic_write(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    os.replace(tmp, path)


# ---------------------------------------------------------------------------
# A tiny interpreter for straight-line LLVM IR (LLVM IR text, not MLIR)
# ---------------------------------------------------------------------------

_TOKEN = re.compile(
    r"\s*(?:(?P<local>%[-\w.$]+)|(?P<global>@[-\w.$]+)|(?P<num>-?\d+)"
    r"|(?P<word>[A-Za-z_][\w.]*)|(?P<punct>[()<>\[\]{},=*]))"
)

_INT_FLAGS = {"nuw", "nsw", "exact", "disjoint", "nneg", "samesign", "inbounds", "nusw"}
_BINOPS = {
    "add",
    "sub",
    "mul",
    "shl",
    "lshr",
    "ashr",
    "and",
    "or",
    "xor",
    "udiv",
    "sdiv",
    "urem",
    "srem",
}
_CASTS = {"zext", "sext", "trunc", "ptrtoint", "inttoptr", "bitcast", "addrspacecast"}
_PARAM_ATTRS = {
    "noundef",
    "nonnull",
    "nofree",
    "readnone",
    "readonly",
    "writeonly",
    "immarg",
    "signext",
    "zeroext",
    "inreg",
    "returned",
    "noalias",
    "nocapture",
}


class IRInterpretError(RuntimeError):
    """The LLVM IR uses something the interpreter does not model."""


# Types are tuples: ("i", width), ("ptr", addrspace), ("vec", n, elt),
# ("arr", n, elt), ("void",), ("fp", width).


def _bits(ty) -> int:
    kind = ty[0]
    if kind == "i":
        return ty[1]
    if kind == "ptr":
        return 32 if ty[1] in (2, 3, 5, 6) else 64
    if kind in ("vec", "arr"):
        return ty[1] * _bits(ty[2])
    if kind == "fp":
        return ty[1]
    raise IRInterpretError(f"no size for type {ty}")


def _store_size(ty) -> int:
    if ty[0] == "arr":
        return ty[1] * _store_size(ty[2])
    return max(1, (_bits(ty) + 7) // 8)


def _mask(width: int) -> int:
    return (1 << width) - 1


def _signed(value: int, width: int) -> int:
    value &= _mask(width)
    return value - (1 << width) if value >> (width - 1) else value


# ``<n x elt>`` and ``[n x elt]``: opening token -> (type kind, closing token).
_AGGREGATES = {"<": ("vec", ">"), "[": ("arr", "]")}


class _Parser:
    def __init__(self, text: str, interp: _Interp):
        self.toks: list[str] = []
        pos = 0
        text = text.rstrip()
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if not m or m.end() == pos:
                if text[pos:].strip() == "":
                    break
                raise IRInterpretError(f"cannot tokenize {text[pos:]!r}")
            self.toks.append(m.group(m.lastgroup))
            pos = m.end()
        self.i = 0
        self.interp = interp

    def peek(self, k: int = 0) -> str | None:
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else None

    def next(self) -> str:
        tok = self.peek()
        if tok is None:
            raise IRInterpretError("unexpected end of instruction")
        self.i += 1
        return tok

    def expect(self, tok: str) -> None:
        got = self.next()
        if got != tok:
            raise IRInterpretError(f"expected {tok!r}, got {got!r}")

    def accept(self, tok: str) -> bool:
        if self.peek() == tok:
            self.i += 1
            return True
        return False

    def skip_flags(self, flags=_INT_FLAGS) -> None:
        while self.peek() in flags:
            self.i += 1

    def type(self):
        tok = self.next()
        if tok in _AGGREGATES:
            kind, close = _AGGREGATES[tok]
            n = int(self.next())
            self.expect("x")
            elt = self.type()
            self.expect(close)
            ty = (kind, n, elt)
        elif tok == "ptr":
            space = 0
            if self.accept("addrspace"):
                self.expect("(")
                space = int(self.next())
                self.expect(")")
            ty = ("ptr", space)
        elif re.fullmatch(r"i\d+", tok):
            ty = ("i", int(tok[1:]))
        elif tok == "void":
            ty = ("void",)
        elif tok in ("half", "bfloat"):
            ty = ("fp", 16)
        elif tok == "float":
            ty = ("fp", 32)
        elif tok == "double":
            ty = ("fp", 64)
        else:
            raise IRInterpretError(f"unknown type {tok!r}")
        return ty

    def typed_value(self):
        ty = self.type()
        self.skip_flags(_PARAM_ATTRS)
        return ty, self.value(ty)

    def value(self, ty):
        tok = self.next()
        interp = self.interp
        if tok.startswith("%"):
            if tok not in interp.env:
                raise IRInterpretError(f"undefined value {tok}")
            return interp.env[tok]
        if tok.startswith("@"):
            if tok not in interp.globals:
                raise IRInterpretError(f"unknown global {tok}")
            return interp.globals[tok]
        if re.fullmatch(r"-?\d+", tok):
            return int(tok) & _mask(_bits(ty))
        if tok in ("true", "false"):
            return int(tok == "true")
        if tok in ("poison", "undef", "zeroinitializer", "null"):
            if ty[0] == "vec":
                return [0] * ty[1]
            return 0
        if tok == "<":
            elems = []
            while True:
                _, v = self.typed_value()
                elems.append(v)
                if self.accept(">"):
                    break
                self.expect(",")
            return elems
        if tok == "getelementptr":
            self.skip_flags()
            self.expect("(")
            result = self.gep_rest(closing=")")
            return result
        if tok in _CASTS:
            self.expect("(")
            src_ty, v = self.typed_value()
            self.expect("to")
            dst_ty = self.type()
            self.expect(")")
            return _cast(tok, src_ty, dst_ty, v)
        if tok in _BINOPS:
            self.skip_flags()
            self.expect("(")
            a_ty, a = self.typed_value()
            self.expect(",")
            _, b = self.typed_value()
            self.expect(")")
            return _binop(tok, a_ty, a, b)
        raise IRInterpretError(f"unsupported value {tok!r}")

    def gep_rest(self, closing: str | None):
        src_ty = self.type()
        self.expect(",")
        _, base = self.typed_value()
        addr = base
        cur = None
        while self.accept(","):
            if self.peek() in ("inrange",):
                raise IRInterpretError("inrange GEP not supported")
            idx_ty, idx = self.typed_value()
            idx = _signed(idx, _bits(idx_ty))
            if cur is None:
                cur = src_ty
                addr += idx * _store_size(cur)
            elif cur[0] in ("arr", "vec"):
                cur = cur[2]
                addr += idx * _store_size(cur)
            else:
                raise IRInterpretError(f"GEP into {cur} not supported")
        if closing:
            self.expect(closing)
        return addr


def _cast(op: str, src_ty, dst_ty, v):
    if op in ("bitcast", "addrspacecast"):
        if src_ty[0] == "vec" or dst_ty[0] == "vec":
            return _pack(_unpack(v, src_ty), dst_ty)
        return v
    if src_ty[0] == "vec":
        return [_cast(op, src_ty[2], dst_ty[2], e) for e in v]
    sw, dw = _bits(src_ty), _bits(dst_ty)
    if op == "sext":
        return _signed(v, sw) & _mask(dw)
    return v & _mask(dw)


def _unpack(v, ty) -> int:
    """Vector or scalar to one little-endian integer."""
    if ty[0] != "vec":
        return v & _mask(_bits(ty))
    w = _bits(ty[2])
    out = 0
    for k, e in enumerate(v):
        out |= (e & _mask(w)) << (k * w)
    return out


def _pack(bits: int, ty):
    if ty[0] != "vec":
        return bits & _mask(_bits(ty))
    w = _bits(ty[2])
    return [(bits >> (k * w)) & _mask(w) for k in range(ty[1])]


def _binop(op: str, ty, a, b):
    if ty[0] == "vec":
        return [_binop(op, ty[2], x, y) for x, y in zip(a, b, strict=True)]
    w = _bits(ty)
    m = _mask(w)
    if op == "add":
        r = a + b
    elif op == "sub":
        r = a - b
    elif op == "mul":
        r = a * b
    elif op == "shl":
        r = a << b if b < w else 0
    elif op == "lshr":
        r = a >> b if b < w else 0
    elif op == "ashr":
        r = _signed(a, w) >> min(b, w - 1)
    elif op == "and":
        r = a & b
    elif op == "or":
        r = a | b
    elif op == "xor":
        r = a ^ b
    elif op == "udiv":
        r = a // b
    elif op == "urem":
        r = a % b
    elif op in ("sdiv", "srem"):
        sa, sb = _signed(a, w), _signed(b, w)
        q = abs(sa) // abs(sb) * (1 if (sa < 0) == (sb < 0) else -1)
        r = q if op == "sdiv" else sa - q * sb
    else:
        raise IRInterpretError(f"unsupported binop {op}")
    return r & m


def _icmp(pred: str, ty, a, b):
    if ty[0] == "vec":
        return [_icmp(pred, ty[2], x, y) for x, y in zip(a, b, strict=True)]
    w = _bits(ty)
    if pred.startswith("s"):
        a, b = _signed(a, w), _signed(b, w)
    table = {
        "eq": a == b,
        "ne": a != b,
        "ugt": a > b,
        "uge": a >= b,
        "ult": a < b,
        "ule": a <= b,
        "sgt": a > b,
        "sge": a >= b,
        "slt": a < b,
        "sle": a <= b,
    }
    return int(table[pred])


def _intrinsic(name: str, args):
    base = name.split(".")
    stem = ".".join(base[:2]) if base[0] == "llvm" else name
    tys = [t for t, _ in args]
    vals = [v for _, v in args]
    if stem in ("llvm.smax", "llvm.smin", "llvm.umax", "llvm.umin"):
        ty = tys[0]

        def one(x, y, w):
            if stem in ("llvm.smax", "llvm.smin"):
                sx, sy = _signed(x, w), _signed(y, w)
                pick = max(sx, sy) if stem == "llvm.smax" else min(sx, sy)
                return pick & _mask(w)
            return max(x, y) if stem == "llvm.umax" else min(x, y)

        if ty[0] == "vec":
            w = _bits(ty[2])
            return [one(x, y, w) for x, y in zip(vals[0], vals[1], strict=True)]
        return one(vals[0], vals[1], _bits(ty))
    if stem in ("llvm.fshl", "llvm.fshr"):
        w = _bits(tys[0])
        hi, lo, sh = vals
        sh %= w
        cat = (hi << w) | lo
        if stem == "llvm.fshl":
            return (cat << sh >> w) & _mask(w)
        return (cat >> sh) & _mask(w)
    if stem == "llvm.abs":
        w = _bits(tys[0])
        return abs(_signed(vals[0], w)) & _mask(w)
    if stem == "llvm.ctpop":
        return bin(vals[0]).count("1")
    if stem == "llvm.bitreverse":
        w = _bits(tys[0])
        return int(format(vals[0] & _mask(w), f"0{w}b")[::-1], 2)
    if stem in ("llvm.ctlz", "llvm.cttz"):
        w = _bits(tys[0])
        x = vals[0] & _mask(w)
        if x == 0:
            return w
        if stem == "llvm.ctlz":
            return w - x.bit_length()
        return (x & -x).bit_length() - 1
    raise IRInterpretError(f"unsupported intrinsic {name}")


@dataclass
class TdmCall:
    """Raw operands of one ``llvm.amdgcn.tensor.load.to.lds`` call."""

    groups: list[int]  # group0..group4 as little-endian integers
    aux: int


class _Interp:
    def __init__(self, globals_: dict[str, int]):
        self.globals = globals_
        self.env: dict[str, object] = {}
        self.calls: list[TdmCall] = []


_WAVE_ID = "llvm.amdgcn.wave.id"
_IGNORED_VOID_CALLS = (
    "llvm.amdgcn.s.wait.tensorcnt",
    "llvm.amdgcn.s.barrier",
    "llvm.amdgcn.s.barrier.signal",
    "llvm.amdgcn.s.barrier.wait",
    "llvm.amdgcn.s.waitcnt",
)


@dataclass
class LlvmFunction:
    """The body of the kernel, split into instruction strings."""

    args: list[tuple[tuple, str]]
    body: list[str]
    globals: list[str]


def parse_function(llir: str) -> LlvmFunction:
    """Extract the (single) kernel definition from LLVM IR text."""
    m = re.search(r"^define [^\n]*?@[-\w.$]+\((?P<args>[^\n]*)\)[^\n]*\{\n", llir, re.M)
    if not m:
        raise IRInterpretError("no function definition found")
    end = llir.index("\n}", m.end())
    body = []
    for line in llir[m.end() : end].splitlines():
        line = re.sub(r",\s*!\w[\w.]*\s+!\d+", "", line).strip()
        line = re.sub(r"\s*;.*$", "", line)
        if line:
            body.append(line)
    args = []
    depth = 0
    cur = ""
    for ch in m.group("args"):
        if ch in "(<[":
            depth += 1
        elif ch in ")>]":
            depth -= 1
        if ch == "," and depth == 0:
            args.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        args.append(cur)
    parsed_args = []
    for a in args:
        name = a.split()[-1]
        p = _Parser(a, _Interp({}))
        parsed_args.append((p.type(), name))
    globals_ = re.findall(r"^(@[-\w.$]+) = ", llir, re.M)
    return LlvmFunction(parsed_args, body, globals_)


def run_function(
    fn: LlvmFunction, wave_id: int, arg_values: Sequence[int], globals_: dict[str, int]
) -> list[TdmCall]:
    """Interpret ``fn`` with ``llvm.amdgcn.wave.id() == wave_id``."""
    interp = _Interp(globals_)
    for (_, name), value in zip(fn.args, arg_values, strict=False):
        interp.env[name] = value
    for line in fn.body:
        _step(interp, line, wave_id)
    return interp.calls


def _step(interp: _Interp, line: str, wave_id: int) -> None:
    if line.startswith(("fence", "ret")):
        return
    if re.match(r"^[-\w.$]+:$", line):
        return
    m = re.match(r"^(%[-\w.$]+)\s*=\s*(.*)$", line)
    if m is None:
        if " call " in f" {line} ":
            _call(interp, line, wave_id, None)
            return
        raise IRInterpretError(f"unsupported statement: {line}")
    name, rhs = m.groups()
    interp.env[name] = _eval(interp, rhs, wave_id, name)


def _call(interp: _Interp, text: str, wave_id: int, dest: str | None):
    m = re.search(r"@([-\w.$]+)\((.*)\)", text)
    if not m:
        raise IRInterpretError(f"cannot parse call: {text}")
    callee, arg_text = m.groups()
    if callee == _WAVE_ID:
        return wave_id
    p = _Parser(arg_text, interp)
    args = []
    while p.peek() is not None:
        args.append(p.typed_value())
        if not p.accept(","):
            break
    if callee == "llvm.amdgcn.tensor.load.to.lds":
        groups = [_unpack(v, t) for t, v in args[:5]]
        aux = args[5][1] if len(args) > 5 else 0
        interp.calls.append(TdmCall(groups, aux))
        return None
    if dest is None:
        if callee.startswith(_IGNORED_VOID_CALLS):
            return None
        raise IRInterpretError(f"unsupported void call {callee}")
    if callee == "llvm.amdgcn.readfirstlane" or callee.startswith("llvm.amdgcn.readfirstlane."):
        return args[0][1]
    if callee.startswith("llvm.amdgcn.workgroup.id."):
        return 0
    return _intrinsic(callee, args)


def _eval(interp: _Interp, rhs: str, wave_id: int, name: str):
    if re.search(r"\bcall\b", rhs.split("(")[0]):
        return _call(interp, rhs, wave_id, name)
    p = _Parser(rhs, interp)
    op = p.next()
    if op in _BINOPS:
        p.skip_flags()
        ty = p.type()
        a = p.value(ty)
        p.expect(",")
        b = p.value(ty)
        return _binop(op, ty, a, b)
    if op == "icmp":
        p.skip_flags()
        pred = p.next()
        ty = p.type()
        a = p.value(ty)
        p.expect(",")
        b = p.value(ty)
        return _icmp(pred, ty, a, b)
    if op == "select":
        c_ty, c = p.typed_value()
        p.expect(",")
        ty, a = p.typed_value()
        p.expect(",")
        _, b = p.typed_value()
        if c_ty[0] == "vec":
            return [x if k else y for k, x, y in zip(c, a, b, strict=True)]
        return a if c else b
    if op in _CASTS:
        p.skip_flags()
        src_ty, v = p.typed_value()
        p.expect("to")
        dst_ty = p.type()
        return _cast(op, src_ty, dst_ty, v)
    if op == "freeze":
        return p.typed_value()[1]
    if op == "insertelement":
        _, vec = p.typed_value()
        p.expect(",")
        _, elt = p.typed_value()
        p.expect(",")
        _, idx = p.typed_value()
        vec = list(vec)
        vec[idx] = elt
        return vec
    if op == "extractelement":
        _, vec = p.typed_value()
        p.expect(",")
        _, idx = p.typed_value()
        return vec[idx]
    if op == "shufflevector":
        _, a = p.typed_value()
        p.expect(",")
        _, b = p.typed_value()
        p.expect(",")
        _, mask = p.typed_value()
        both = list(a) + list(b)
        return [both[k] if k < len(both) else 0 for k in mask]
    if op == "getelementptr":
        p.skip_flags()
        return p.gep_rest(closing=None)
    raise IRInterpretError(f"unsupported instruction {op!r} in {rhs!r}")


# ---------------------------------------------------------------------------
# Descriptor decoding
# ---------------------------------------------------------------------------


def _field(value: int, lo: int, width: int) -> int:
    return (value >> lo) & _mask(width)


@dataclass(frozen=True)
class WarpDescriptor:
    """What one warp's ``tensor.load.to.lds`` asks for, decoded.

    ``member`` is the copy member whose global pointer the address falls in;
    ``start`` is the element coordinate relative to that member's block
    origin (the user offsets are subtracted); ``tile`` and ``tensor_dims``
    are in dim order 0..rank-1 (outermost first).
    """

    warp: int
    pred: int
    member: int
    start: tuple[int, ...]
    tile: tuple[int, ...]
    tensor_dims: tuple[int, ...]
    lds_address: int
    aux: int


def decode_call(call: TdmCall, warp: int, config: LoweringConfig) -> WarpDescriptor:
    g0, g1, g2, g3, _g4 = call.groups
    pred = _field(g0, 0, 32)
    lds = _field(g0, 32, 32)
    gaddr = _field(g0, 64, 57)
    member = (gaddr - GLOBAL_BASE) // GLOBAL_MEMBER_STRIDE
    if not 0 <= member < len(config.members):
        raise IRInterpretError(f"global address {gaddr:#x} outside every member")
    m = config.members[member]
    rank = m.rank
    rel = gaddr - GLOBAL_BASE - member * GLOBAL_MEMBER_STRIDE
    if rel % ELEMENT_BYTES:
        raise IRInterpretError("misaligned global address")
    linear = rel // ELEMENT_BYTES
    coords = []
    for stride in m.strides:
        coords.append(linear // stride)
        linear %= stride
    start = tuple(c - o for c, o in zip(coords, m.full_offsets, strict=True))
    # Fields in innermost-first order ("dim0" of the descriptor = rank-1).
    tiles_inner = [
        _field(g1, 112, 16),
        _field(g1, 128, 16),
        _field(g1, 144, 16),
        _field(g2, 112, 16),
        _field(g3, 80, 16),
    ]
    dims_inner = [
        _field(g1, 48, 32),
        _field(g1, 80, 32),
        _field(g2, 0, 32),
        _field(g2, 32, 32),
        _field(g3, 48, 32),
    ]
    tile = tuple(reversed(tiles_inner[:rank]))
    tensor_dims = tuple(reversed(dims_inner[:rank]))
    return WarpDescriptor(warp, pred, member, start, tile, tensor_dims, lds, call.aux)


@dataclass
class LoweringResult:
    """Per-warp descriptors of one compiled configuration."""

    config: LoweringConfig
    ttgir: str
    llir: str
    warps: list[WarpDescriptor] = field(default_factory=list)
    num_instructions: int = 0


def lower(config: LoweringConfig, use_cache: bool = True) -> LoweringResult:
    """Compile ``config`` with Triton and decode every warp's descriptor.

    Raises :class:`LoweringError` when Triton rejects the module.
    """
    ttgir, llir = compile_config(config, use_cache=use_cache)
    fn = parse_function(llir)
    globals_ = {g: 0 for g in fn.globals}
    ptr_args = [GLOBAL_BASE + i * GLOBAL_MEMBER_STRIDE for i in range(len(config.members))]
    arg_values = ptr_args + [0] * (len(fn.args) - len(ptr_args))
    result = LoweringResult(config, ttgir, llir)
    for w in range(config.num_warps):
        calls = run_function(fn, w, arg_values, globals_)
        if w == 0:
            result.num_instructions = len(calls)
        if len(calls) != 1:
            raise IRInterpretError(f"expected one TDM instruction, found {len(calls)}")
        result.warps.append(decode_call(calls[0], w, config))
    return result


__all__ = [
    "CopyMember",
    "IRInterpretError",
    "LoweringConfig",
    "LoweringError",
    "LoweringResult",
    "WarpDescriptor",
    "cache_key",
    "compile_config",
    "copy_kernel",
    "lower",
    "make_ttgir",
]
