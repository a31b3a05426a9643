"""Executable per-warp model of tile IR: numpy, no GPU.

:func:`run_function` interprets one ``func.func`` of a parsed tile module for
every program of a grid; inside a program all ``tile.num_warps`` warps run in
lock-step. :func:`run_gemm` wraps it for the GEMM kernel signature
``(a, b, c: !tile.ptr, M, N, K: i32, lda, ldb, ldc: i64)``.

Values
------
* A scalar (integer, index or float) is a numpy array with one entry per warp,
  so ``tile.warp_id`` and everything computed from it may differ per warp.
  Integers are kept sign-extended in int64 ("canonical" form: an ``i1`` true
  is -1, as ``arith.extsi`` sees it); every integer op wraps its result to
  the result's width; unsigned ops reinterpret the low bits.
* A tensor is one numpy array per program. Register layouts do not change
  values, so ``tile.convert_layout`` is the identity. Element types: ``f16``
  is float16, ``f32`` float32, ``f64`` float64, integers int64 in registers,
  and ``bf16`` is float32 holding values rounded to bf16
  (:func:`bf16_round`, round to nearest even).
* ``tile.wmma`` computes ``a @ b + c`` in float64 (where products of 16-bit
  inputs are exact) and rounds the result once to float32: a deterministic
  model of fp32 accumulation that does not depend on the BLAS summation order.
* A ``!tile.ptr`` argument is a C-contiguous numpy array (``f16``: float16,
  ``bf16``: float32 holding bf16 values, ``f32``: float32, ``iN``: an N-bit
  integer array, an 8-bit float type: its codes as uint8 or a 1-byte
  ``ml_dtypes`` float8 array); the pointer is (flat view of the array, element
  offset). 8-bit floats are their exact values (float32) in registers and
  their codes in memory (:mod:`gemm_opt.core.fp8` decodes and encodes).
  Stores write into the caller's array.
* A descriptor holds the base pointer, the tensor shape and strides, the
  block origin, optional bounds and a predicate, all per warp.
  ``update_tensor_descriptor`` adds its offsets to the origin, replaces the
  bounds when given, and ANDs its predicate into the descriptor's (a
  descriptor whose predicate is false stays a no-op for every descriptor
  derived from it).
* A shared buffer (``tile.local_alloc``) is one numpy array per program in
  logical (unswizzled) coordinates; ``tile.memdesc_index`` selects a slot.

TDM copies
----------
Every warp that executes a copy issues one TDM instruction (a fused copy is
one instruction too). The warp's tile comes from the copy's
``tile.warp_layout`` attribute (``tile.warp_layouts`` for a fused copy) when
a pass attached one, else from :func:`gemm_opt.core.tdm_layout.tdm_warp_layout`
for the op's ``warp_used_hint``. A warp writes data iff the descriptor's
predicate, the copy's ``pred`` operand and (unless the op carries
``tile.warp_predicated``, which says the predicate already includes the warp
mask) the layout's warp mask all hold; a fused copy picks, per warp, the first
member whose hint contains it, else the last member (see
:func:`gemm_opt.core.tdm_layout.select_fused_member`). An active warp reads its
tile with TDM's per-warp re-clamped zero fill
(:func:`gemm_opt.model.execute_tile`) when it issues (no op of the dialect
writes global memory asynchronously, so reading at issue is exact); inactive
warps still issue an instruction (it counts for waits) but write nothing.

Synchronization
---------------
Each warp has a FIFO of its in-flight TDM instructions. The shared-memory
writes of an instruction land only when the instruction completes:
``tile.async_tdm_wait {num = N}`` completes, for each warp executing it, all
but that warp's N most recent instructions. Because warps run in lock-step,
the writes completed by a wait are visible to every warp right after it; this
mirrors the barrier Triton inserts after the wait, so the model does not ask
the IR for explicit barriers. ``tile.local_load`` raises :class:`ModelError`
("read of shared memory still being written by an in-flight TDM copy ...")
when any warp's in-flight instruction still writes the region it reads: a
race detector for missing or too weak waits. A warp's copy that writes
elements another warp's in-flight copy writes with other values raises too
("write of shared memory still being written by another warp's ..."): the
model completes warps in id order at a wait, hardware in no defined order, so
such a program has no single result. Reading shared memory that no copy has
written raises too (disable with ``check_uninitialized=False``).
Copies still in flight at ``func.return`` are dropped and counted in
:attr:`Stats.in_flight_at_exit`.

Programs
--------
The programs of a grid share global memory. A function with atomics
(``tile.atomic_rmw``, ``tile.atomic_add_block``) runs ``num_resident``
programs at once, interleaved at atomics and global block accesses, in program
order (``seed=None``) or a seeded random order; a flag wait that can never end
is reported as a deadlock. Every run with more than one program checks that a
program reads or overwrites another's global data only after a release ->
acquire chain orders the accesses. See :mod:`gemm_opt.model.concurrency`.

Op families
-----------
This module owns no op: each op family is a module with its implementations
(:mod:`~gemm_opt.model.arith`, :mod:`~gemm_opt.model.control_flow`,
:mod:`~gemm_opt.model.memory`, :mod:`~gemm_opt.model.tdm`,
:mod:`~gemm_opt.model.mma`, :mod:`~gemm_opt.model.barriers`,
:mod:`~gemm_opt.model.sync`, :mod:`~gemm_opt.model.warp_specialize`), joined
into :data:`OPS`, one implementation per op (:mod:`gemm_opt.model.registry`).
The state they share is :mod:`gemm_opt.model.values` and
:mod:`gemm_opt.model.core`; the shared-memory race checks are
:mod:`gemm_opt.model.races`. An op the model does not know raises
:class:`ModelError` naming the op and its location when the function is
compiled, before anything runs.

Control flow
------------
``scf.for``, ``scf.while`` and ``scf.if`` are executed under a per-warp
activity mask, so a branch or trip count that depends on ``tile.warp_id``
works: only the warps whose condition holds execute the region (and issue
copies or waits), and the scalar results are merged per warp. Program-level ops (tensor values,
``store_block``) need warp-uniform operands and raise :class:`ModelError`
otherwise.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from gemm_opt.core.contract import NUM_WARPS
from gemm_opt.core.diagnostics import position_of
from gemm_opt.core.ext_compat import cast, ir
from gemm_opt.dialect.tile import (
    PtrType,
    enclosing_int_attr,
)
from gemm_opt.model import (
    arith,
    barriers,
    control_flow,
    memory,
    mma,
    sync,
    tdm,
    warp_specialize,
)
from gemm_opt.model.concurrency import Grid, Inline, ProgramClock, SyncStats, Threaded
from gemm_opt.model.core import (
    Compiler,
    Program,
    Run,
)
from gemm_opt.model.errors import ModelError
from gemm_opt.model.registry import Registry
from gemm_opt.model.values import (
    CopyEvent,
    Descriptor,
    Elem,
    Pointer,
    RunResult,
    SharedBuffer,
    SharedView,
    Stats,
    bf16_round,
    elem_of,
    round_to,
    value_elem,
    wrap_bits,
)

#: The implementation of every op the model runs, one per op.
OPS = Registry(
    arith.IMPLS,
    control_flow.IMPLS,
    memory.IMPLS,
    tdm.IMPLS,
    mma.IMPLS,
    barriers.IMPLS,
    sync.IMPLS,
    warp_specialize.IMPLS,
)


def parse_module(text: str) -> ir.Module:
    """Parse tile IR text in a fresh context with the tile dialect loaded."""
    from gemm_opt.dialect import make_context

    ctx = make_context()
    with ctx:
        return ir.Module.parse(text)


def _functions(module: ir.Module) -> list[Any]:
    return [op for op in module.body.operations if op.operation.name == "func.func"]


def _func_name(f: Any) -> str:
    return ir.StringAttr(f.operation.attributes["sym_name"]).value


def _find_function(module: ir.Module, name: str | None) -> Any:
    funcs = _functions(module)
    if name is None:
        if len(funcs) != 1:
            names = [_func_name(f) for f in funcs]
            raise ModelError(f"the module has functions {names}; name the one to run")
        return funcs[0]
    for f in funcs:
        if _func_name(f) == name:
            return f
    raise ModelError(f"no function @{name} in the module")


#: The characters of an SSA name after its ``%`` (LangRef's ``suffix-id``).
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789$._-")


def _arg_names_from_locations(text: str, args: Sequence[Any]) -> list[str] | None:
    """The source names of a function's arguments, if the text still has them.

    The parser keeps no SSA names, but it gives each block argument the
    location of its ``%name`` in the text it parsed: read the name there.
    ``None`` when an argument has no such location (built, not parsed) or the
    text there is no ``%name:`` (text printed from another).
    """
    lines = text.splitlines()
    names = []
    for arg in args:
        line, col = position_of(arg.location)
        # Equivalent mutant: 0 <= line; line 0 has column 0, and source[-1:0] is no "%".
        source = lines[line - 1] if 0 < line <= len(lines) else ""
        if source[col - 1 : col] != "%":
            return None
        end = col
        while end < len(source) and source[end] in _NAME_CHARS:
            end += 1
        if end == col or not source[end:].lstrip().startswith(":"):
            return None  # not an argument declaration: the text is not the parsed one
        names.append(source[col:end])
    return names


_STORAGE_OK = {
    "f16": (np.float16,),
    "bf16": (np.float32,),
    "f32": (np.float32,),
    "f64": (np.float64,),
}


def _pointer(array: Any, elem: Elem, name: str, num_warps: int) -> Pointer:
    if not isinstance(array, np.ndarray):
        raise ModelError(f"argument '{name}' is a pointer: pass a numpy array")
    if not array.flags.c_contiguous or not array.flags.writeable:
        raise ModelError(f"argument '{name}' must be a writeable C-contiguous array")
    dt = array.dtype
    if elem.fp8 is not None:  # the codes: uint8, or a 1-byte float8 dtype (ml_dtypes)
        ok = dt.itemsize == 1 and dt.kind in "uV"
        if ok:
            array = array.view(np.uint8)
    elif elem.is_int:
        ok = dt.kind in "iub" and dt.itemsize * 8 == max(8, elem.width)
        if ok and dt.kind == "u":  # Equivalent mutant: or; not ok is refused below.
            array = array.view(dt.str.replace("u", "i"))
    else:
        ok = dt.type in _STORAGE_OK[elem.name]
    if not ok:
        raise ModelError(
            f"argument '{name}' points to {elem.name}: expected a "
            f"{np.dtype(elem.storage).name} array, got {dt.name}"
        )
    flat = array.reshape(-1)  # Equivalent mutant: -2; numpy takes any negative size.
    return Pointer(flat, np.zeros(num_warps, dtype=np.int64), name, elem)


def _scalar_arg(value: Any, t: ir.Type, name: str, num_warps: int) -> np.ndarray:
    elem = elem_of(t)
    if elem is None:
        raise ModelError(f"argument '{name}' has unsupported type {t}")
    if elem.is_int:
        return wrap_bits(np.full(num_warps, int(value), dtype=np.int64), elem.width)
    return round_to(np.full(num_warps, float(value)), elem)


class Interpreter:
    """A compiled function, ready to run over grids.

    ``Interpreter(module, "gemm").run(args, grid)``; see :func:`run_function`.
    """

    def __init__(
        self,
        module: ir.Module | str,
        func_name: str | None = None,
        *,
        num_warps: int | None = None,
        arg_names: Sequence[str] | None = None,
    ) -> None:
        text = module if isinstance(module, str) else None
        self.module = parse_module(module) if isinstance(module, str) else module
        self.func = _find_function(self.module, func_name)
        self.name = _func_name(self.func)
        if num_warps is None:
            num_warps = enclosing_int_attr(self.func.operation, NUM_WARPS)
        if num_warps is None or num_warps < 1:
            raise ModelError(f"@{self.name}: no '{NUM_WARPS}' on an enclosing op")
        self.num_warps = int(num_warps)
        body = self.func.operation.regions[0].blocks[0]
        self.arg_types = [a.type for a in body.arguments]
        n = len(self.arg_types)
        names = list(arg_names) if arg_names is not None else None
        if names is None and text is not None:
            names = _arg_names_from_locations(text, list(body.arguments))
        if names is None or len(names) != n:
            names = [f"arg{i}" for i in range(n)]
        self.arg_names = names
        self._compiler = Compiler(self.num_warps, OPS)
        self.body = self._compiler.block(body)
        self.num_slots = len(self._compiler.slots)

    def _bind(self, args: Sequence[Any] | Mapping[Any, Any]) -> list[Any]:
        n = len(self.arg_types)
        if isinstance(args, Mapping):
            values = []
            for i, name in enumerate(self.arg_names):
                for key in (name, i, f"arg{i}"):
                    if key in args:
                        values.append(args[key])
                        break
                else:
                    raise ModelError(f"@{self.name}: missing argument '{name}'")
            known = {*self.arg_names, *range(n), *(f"arg{i}" for i in range(n))}
            extra = [k for k in args if k not in known]
            if extra:
                raise ModelError(f"@{self.name}: unknown arguments {extra}")
            return values
        if len(args) != n:
            raise ModelError(f"@{self.name} takes {n} arguments, got {len(args)}")
        return list(args)

    def run(
        self,
        args: Sequence[Any] | Mapping[Any, Any],
        grid: Sequence[int] = (1, 1, 1),
        *,
        check_uninitialized: bool = True,
        num_resident: int = 4,
        seed: int | None = None,
    ) -> RunResult:
        values = self._bind(args)
        grid3 = (*(int(g) for g in grid), 1, 1, 1)[:3]
        if any(g < 1 for g in grid3):
            raise ModelError(f"the grid must be positive, got {list(grid3)}")
        if isinstance(num_resident, bool) or not isinstance(num_resident, int):
            raise ModelError(f"num_resident must be an int, got {num_resident!r}")
        if num_resident < 1:
            raise ModelError(f"num_resident must be at least 1, got {num_resident}")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise ModelError(f"seed must be an int or None, got {seed!r}")
        nw = self.num_warps
        bound: list[Any] = []
        # Equivalent mutant: strict=False; _bind returned one value per argument.
        for value, t, name in zip(values, self.arg_types, self.arg_names, strict=True):
            if isinstance(t, PtrType):
                elem = elem_of(t.element_type)
                if elem is None:
                    raise ModelError(f"argument '{name}' points to unsupported {t}")
                bound.append(_pointer(value, elem, name, nw))
            else:
                bound.append(_scalar_arg(value, t, name, nw))
        pids = [(x, y, z) for z, y, x in itertools.product(*(range(g) for g in reversed(grid3)))]
        stats = Stats(nw)
        sync_stats = SyncStats(seed, num_resident)
        many = len(pids) > 1
        concurrent = many and self._compiler.concurrent
        sync = Grid(pids, sync_stats, None, check_memory=many)
        state = Run(stats, check_uninitialized, grid3, sync)
        full = np.ones(nw, dtype=np.bool_)
        clocks = [ProgramClock(i, pid) for i, pid in enumerate(pids)]

        def execute(clock: ProgramClock) -> list[Any]:
            prog = Program(self.num_slots, nw, clock.pid, state, clock)
            # Equivalent mutant: strict=False; one bound value per block argument.
            for s, v in zip(self.body.arg_slots, bound, strict=True):
                prog.env[s] = v
            out = prog.exec_block(self.body, full)
            stats.in_flight_at_exit += sum(len(q) for q in prog.queues) + len(prog.tracked)
            return out

        if concurrent:
            sync_stats.concurrent = True
            sched = Threaded(clocks, execute, num_resident, seed, sync_stats)
            sync.scheduler = sched
            results = sched.run()
        else:
            # No program can wait on another: run them in order in this thread.
            results: list[Any] = []
            sync.scheduler = Inline(sync_stats, lambda: len(results))
            with np.errstate(all="ignore"):
                sync_stats.max_resident = 1
                for clock in clocks:
                    sync_stats.start_order.append(clock.pid)
                    results.append(execute(clock))
                    sync_stats.finish_order.append(clock.pid)
        # Equivalent mutant: strict=False (both); one result per program, one value per name.
        returns = dict(zip(pids, results, strict=True))
        named = dict(zip(self.arg_names, values, strict=True))
        return RunResult(named, stats, returns, grid3, sync_stats)


def run_function(
    module: ir.Module | str,
    func_name: str | None = None,
    args: Sequence[Any] | Mapping[Any, Any] = (),
    grid: Sequence[int] = (1, 1, 1),
    *,
    num_warps: int | None = None,
    arg_names: Sequence[str] | None = None,
    check_uninitialized: bool = True,
    num_resident: int = 4,
    seed: int | None = None,
) -> RunResult:
    """Interpret ``func_name`` of ``module`` for every program of ``grid``.

    ``module`` is a parsed module or its text (argument names are then read
    from the text, so ``args`` may be a dict keyed by them; otherwise keys are
    positions or ``"argN"``). Pointer arguments are numpy arrays, updated in
    place; scalars are Python numbers. ``num_resident`` programs run at once,
    interleaved at atomics and global block accesses; ``seed=None`` runs each
    until it waits or finishes, an int picks a seeded random interleaving
    (see :mod:`gemm_opt.model.concurrency`).
    """
    interp = Interpreter(module, func_name, num_warps=num_warps, arg_names=arg_names)
    return interp.run(
        args,
        grid,
        check_uninitialized=check_uninitialized,
        num_resident=num_resident,
        seed=seed,
    )


GEMM_ARGS = ("a", "b", "c", "M", "N", "K", "lda", "ldb", "ldc")
"""The names :func:`run_gemm` gives the kernel's arguments (and statistics use)."""


def _gemm_function(module: ir.Module, func_name: str | None) -> Any:
    def matches(f: Any) -> bool:
        types = list(f.operation.regions[0].blocks[0].arguments)
        types = [a.type for a in types]
        if len(types) != 9:
            return False
        ptrs = all(isinstance(t, PtrType) for t in types[:3])
        ints = all(cast(t, ir.IntegerType) is not None for t in types[3:])
        return ptrs and ints

    if func_name is not None:
        return _find_function(module, func_name)
    funcs = [f for f in _functions(module) if matches(f)]
    if len(funcs) != 1:
        raise ModelError(
            "expected exactly one function with the GEMM signature (a, b, c: !tile.ptr, "
            f"M, N, K, lda, ldb, ldc), found {len(funcs)}"
        )
    return funcs[0]


def _gemm_block(func: Any) -> tuple[int, int]:
    """(BM, BN): the shape of the block stored through argument 2 (C)."""
    c_arg = func.operation.regions[0].blocks[0].arguments[2]
    found: list[tuple[int, int]] = []

    def walk(block: ir.Block) -> None:
        for op in block.operations:
            if op.operation.name == "tile.store_block" and op.base == c_arg:
                _, shape = value_elem(op.value.type)
                if shape is not None and len(shape) == 2:
                    found.append((shape[0], shape[1]))
            elif op.operation.name == "tile.async_tdm_copy_local_to_global":
                # A TDM store of C: its descriptor's block (the descriptor made of C).
                root = op.desc
                while isinstance(root.owner, ir.OpView | ir.Operation) and (
                    root.owner.name == "tile.update_tensor_descriptor"
                ):
                    root = root.owner.operands[0]
                owner = root.owner
                if isinstance(owner, ir.OpView | ir.Operation) and owner.operands[0] == c_arg:
                    shape = list(op.desc.type.shape)
                    if len(shape) == 2:
                        found.append((shape[0], shape[1]))
            for region in op.operation.regions:
                for b in region.blocks:
                    walk(b)

    walk(func.operation.regions[0].blocks[0])
    if not found:
        raise ModelError("cannot find the 2-D tile.store_block of C to size the grid")
    return found[0]


def _as_storage(x: np.ndarray, elem: Elem) -> np.ndarray:
    if elem.is_int:
        return np.ascontiguousarray(x, dtype=elem.storage)
    return np.ascontiguousarray(round_to(np.asarray(x, dtype=np.float64), elem))


def run_gemm(
    module: ir.Module | str,
    a: np.ndarray,
    b: np.ndarray,
    *,
    func_name: str | None = None,
    grid: Sequence[int] | None = None,
    num_warps: int | None = None,
    check_uninitialized: bool = True,
    return_result: bool = False,
    num_resident: int = 4,
    seed: int | None = None,
) -> np.ndarray | tuple[np.ndarray, RunResult]:
    """C = A @ B through the GEMM kernel of ``module``.

    The kernel is the function with the signature ``(a, b, c: !tile.ptr, M, N,
    K, lda, ldb, ldc)`` (row-major operands). A and B are converted to the
    pointers' element types (bf16 by rounding); C starts as NaN so that
    elements the kernel does not store stand out. The grid is
    ``(cdiv(M, BM), cdiv(N, BN), 1)`` with ``BM x BN`` the block stored into C
    (program_id axis 0 walks M, axis 1 walks N), unless ``grid`` is given.
    With ``return_result`` the :class:`RunResult` (statistics) comes too;
    ``num_resident`` and ``seed`` are :func:`run_function`'s.
    """
    mod = parse_module(module) if isinstance(module, str) else module
    func = _gemm_function(mod, func_name)
    arg_types = [x.type for x in func.operation.regions[0].blocks[0].arguments]
    elems = []
    for t in arg_types[:3]:
        e = elem_of(t.element_type) if isinstance(t, PtrType) else None
        if e is None:
            raise ModelError(f"unsupported GEMM pointer type {t}")
        elems.append(e)
    a = np.asarray(a)
    b = np.asarray(b)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ModelError(f"cannot multiply {a.shape} by {b.shape}")
    m, k = a.shape
    n = b.shape[1]
    a_mem = _as_storage(a, elems[0])
    b_mem = _as_storage(b, elems[1])
    if elems[2].is_int:
        c_mem = np.zeros((m, n), dtype=elems[2].storage)
    else:
        c_mem = np.full((m, n), np.nan, dtype=elems[2].storage)
    if grid is None:
        bm, bn = _gemm_block(func)
        grid = (-(-m // bm), -(-n // bn), 1)
    interp = Interpreter(mod, _func_name(func), num_warps=num_warps, arg_names=GEMM_ARGS)
    args = [a_mem, b_mem, c_mem, m, n, k, k, n, n]
    result = interp.run(
        args, grid, check_uninitialized=check_uninitialized, num_resident=num_resident, seed=seed
    )
    return (c_mem, result) if return_result else c_mem


__all__ = [
    "GEMM_ARGS",
    "OPS",
    "CopyEvent",
    "Descriptor",
    "Interpreter",
    "ModelError",
    "Pointer",
    "RunResult",
    "SharedBuffer",
    "SharedView",
    "Stats",
    "SyncStats",
    "bf16_round",
    "parse_module",
    "run_function",
    "run_gemm",
]
