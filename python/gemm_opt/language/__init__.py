"""A Gluon-like Python front end that traces kernels into the ``tile`` dialect.

Users write ``import gemm_opt.language as tl`` and decorate a Python function
with :func:`kernel`. Its parameters are annotated: runtime arguments as
``tl.ptr(tl.float16)``, ``tl.int32`` or ``tl.int64``, compile-time constants
as ``tl.constexpr``. Building the kernel calls the function once, with
constexprs bound to plain Python values and runtime arguments bound to traced
values; every ``tl.*`` call emits tile IR at that moment (tracing, as in
Gluon), so Python ``if``/``for`` on constexprs unroll and specialise at build
time.

```python
import gemm_opt.language as tl


@tl.kernel
def copy_tile(src: tl.ptr(tl.float16), M: tl.int32, N: tl.int32, ld: tl.int64,
              BLOCK: tl.constexpr, HINT: tl.constexpr = None):
    layout = tl.SwizzledShared(vec=1, per_phase=1, max_phase=1, order=[1, 0])
    desc = tl.make_tensor_descriptor(src, shape=[M, N], strides=[ld, 1],
                                     block_shape=[BLOCK, BLOCK], layout=layout)
    buf = tl.allocate_shared(tl.float16, [BLOCK, BLOCK], layout)
    off = tl.program_id(0) * BLOCK
    tl.async_copy(desc.update(offsets=[off, 0]), buf, warp_used_hint=HINT)
    tl.async_wait(0)


text = copy_tile.build_ir(num_warps=8, BLOCK=64, HINT=0b00001111)
compiled = copy_tile.compile(target="gfx1250", num_warps=8, BLOCK=64)
```

Modules
-------
``errors`` (CompilationError, source positions), ``dtypes``, ``layouts``
(register layouts; the shared layouts are :mod:`gemm_opt.core.layouts`'),
``values`` (traced values), ``builder`` (the state of one trace), ``ops``,
``control_flow`` and ``kernel`` (the ``@tl.kernel`` object and compile).

Loops
-----
A traced loop body must run exactly once, so Python's ``for`` cannot express a
device loop with loop-carried values. :func:`for_loop` takes the body as a
function of the induction variable and the carried values, and returns the
final carried values (an ``scf.for``)::

    def body(k, acc):
        ...
        return tl.wmma(a, b, acc)

    acc = tl.for_loop(0, num_k, 1, init=acc, body=body)

``init`` is one value (the body gets and returns one value) or a tuple/list
(the body gets them unpacked and returns a sequence of the same length).
:func:`if_` is the structured conditional (``scf.if``, with optional results)
and :func:`where` the value select. Python ``for`` over ``range`` with
constexpr bounds still works and unrolls at build time.

Scalars
-------
Traced integers support ``+ - * // % & | ^ << >>``, unary ``-`` and the
comparisons; Python ints are materialised as constants of the other operand's
type (one ``arith.constant`` per value and type, hoisted to the kernel entry).
``//`` and ``%`` are ``arith.divsi``/``arith.remsi``: they truncate toward
zero, as in C and Triton. Mixing ``i32`` and ``i64`` sign-extends the ``i32``
side. A traced value has no Python truth value: ``if x < 0:`` raises.

Diagnostics
-----------
Every authoring mistake is a :class:`CompilationError` at the user's line,
never a Python ``TypeError``, an abort or a silently different kernel.
Every op carries ``loc("<user file>":<line>:<col>)`` of the call that created
it, so verifier, pass and lowering diagnostics name the kernel's source line.
Authoring errors (wrong rank, illegal ``warp_used_hint``, mismatched layouts,
wrong element types) raise :class:`CompilationError` at build time; its
message starts with ``<file>:<line>: `` and shows the offending line. Each tile
op is verified as soon as it is created and the whole module once more at the
end; verifier diagnostics become the same error.
"""

from __future__ import annotations

from gemm_opt.language.control_flow import for_loop, if_, where
from gemm_opt.language.dtypes import (
    bfloat16,
    constexpr,
    divisible,
    dtype,
    float16,
    float32,
    int1,
    int32,
    int64,
    pointer_type,
    ptr,
)
from gemm_opt.language.errors import CompilationError
from gemm_opt.language.kernel import Kernel, kernel
from gemm_opt.language.layouts import (
    Blocked,
    DotOperand,
    PaddedShared,
    PartitionedShared,
    SwizzledShared,
    WmmaLayout,
)
from gemm_opt.language.ops import (
    allocate_shared,
    async_copy,
    async_copy_fused,
    async_store,
    async_wait,
    async_wmma,
    async_wmma_wait,
    convert_layout,
    full,
    load_block,
    local_load,
    local_store,
    make_tensor_descriptor,
    num_programs,
    num_warps,
    program_id,
    static_assert,
    store_block,
    target,
    warp_id,
    wmma,
    zeros,
)
from gemm_opt.language.values import Pointer, Scalar, SharedBuffer, Tensor, TensorDescriptor
from gemm_opt.language.warp_specialize import (
    MBarrier,
    MBarrierRing,
    allocate_mbarrier,
    mbarrier,
    warp_specialize,
)

__all__ = [
    "Blocked",
    "CompilationError",
    "DotOperand",
    "Kernel",
    "MBarrier",
    "MBarrierRing",
    "PaddedShared",
    "PartitionedShared",
    "Pointer",
    "Scalar",
    "SharedBuffer",
    "SwizzledShared",
    "Tensor",
    "TensorDescriptor",
    "WmmaLayout",
    "allocate_mbarrier",
    "allocate_shared",
    "async_copy",
    "async_copy_fused",
    "async_store",
    "async_wait",
    "async_wmma",
    "async_wmma_wait",
    "bfloat16",
    "constexpr",
    "convert_layout",
    "divisible",
    "dtype",
    "float16",
    "float32",
    "for_loop",
    "full",
    "if_",
    "int1",
    "int32",
    "int64",
    "kernel",
    "load_block",
    "local_load",
    "local_store",
    "make_tensor_descriptor",
    "mbarrier",
    "num_programs",
    "num_warps",
    "pointer_type",
    "program_id",
    "ptr",
    "static_assert",
    "store_block",
    "target",
    "warp_id",
    "warp_specialize",
    "where",
    "wmma",
    "zeros",
]
