#!/usr/bin/env python3
"""Compile the tile GEMM for cuda:90 into a kernel bundle for ``run_gemm.py``.

The kernel is the example GEMM of ``examples/gemm_gfx1250.py`` (the Python
form of ``examples/gemm_gfx1250.mlir``), traced by the front end and
compiled here with the pinned Triton 3.9.0 (``--emit=cubin`` needs no GPU).
Its ``warp_used_hint`` copies are a gfx1250 performance hint, which the
cuda:90 lowering drops (the data written stays the same). Four variants go
into one bundle:

* element type ``fp16`` or ``bf16`` (the kernel's ``DTYPE`` constexpr);
* ``aligned``: ``N``, ``K``, ``lda``, ``ldb`` and ``ldc`` carry
  ``tile.divisibility = 16`` (set on the function's argument attributes), so
  the lowering emits 16-byte ``cp.async`` copies; the launcher refuses
  arguments that are not multiples of 16;
* ``any``: no facts, so copies go through registers; valid for every shape.

    python benchmarks/h100/build_bundle.py -o benchmarks/h100/gemm_cuda90.bundle
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SOURCE = "examples/gemm_gfx1250.py"
TARGET = "cuda:90"
DTYPES = {"fp16": "float16", "bf16": "bfloat16"}
#: Arguments that the aligned variant states to be multiples of 16.
ALIGNED_ARGS = ("N", "K", "lda", "ldb", "ldc")
DIVISIBILITY = 16


def _example() -> Any:
    spec = importlib.util.spec_from_file_location("gemm_example", REPO / SOURCE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def state_divisibility(module: Any, names: list[str], divisible: tuple[str, ...]) -> None:
    """Give the arguments named in ``divisible`` ``tile.divisibility = 16`` (in place)."""
    from gemm_opt.core.contract import DIVISIBILITY as ATTR
    from gemm_opt.core.ext_compat import func, ir

    fn = next(op for op in module.body.operations if isinstance(op, func.FuncOp))
    missing = set(divisible) - set(names)
    if missing:
        raise SystemExit(f"{SOURCE}: the kernel has no argument {sorted(missing)[0]!r}")
    with module.context:
        i32 = ir.IntegerType.get_signless(32)
        fn.arg_attrs = ir.ArrayAttr.get(
            [
                ir.DictAttr.get(
                    {ATTR: ir.IntegerAttr.get(i32, DIVISIBILITY)} if name in divisible else {}
                )
                for name in names
            ]
        )


def gemm_variants(dtypes: list[str] | None = None) -> list[dict[str, Any]]:
    """Every variant: its name, tile module, argument names, grid and metadata."""
    import gemm_opt.language as tl

    example = _example()
    kernel = example.gemm
    names = [p.name for p in kernel.params() if p.kind != "constexpr"]
    block = {
        p.name[len("BLOCK_") :]: p.default for p in kernel.params() if p.name.startswith("BLOCK_")
    }
    out = []
    for dtype in dtypes or list(DTYPES):
        for variant in ("aligned", "any"):
            module = kernel.build_module(DTYPE={"fp16": tl.float16, "bf16": tl.bfloat16}[dtype])
            aligned = ALIGNED_ARGS if variant == "aligned" else ()
            state_divisibility(module, names, aligned)
            out.append(
                {
                    "name": f"gemm_{dtype}_{variant}",
                    "module": module,
                    "arg_names": names,
                    "grid": [("M", block["M"]), ("N", block["N"]), 1],
                    "meta": {
                        "source": SOURCE,
                        "dtype": DTYPES[dtype],
                        "variant": variant,
                        "block": block,
                        "copies": "cp.async" if aligned else "registers",
                        "layout": "row-major A (MxK, lda), B (KxN, ldb), C (MxN, ldc)",
                    },
                }
            )
    return out


def build(dtypes: list[str] | None = None, *, quiet: bool = False) -> Any:
    """Compile every variant and return the :class:`~gemm_opt.runtime.Bundle`."""
    from gemm_opt.runtime import Bundle
    from gemm_opt.runtime.build import build_kernel

    kernels = []
    for v in gemm_variants(dtypes):
        start = time.perf_counter()
        k = build_kernel(
            v["module"],
            v["arg_names"],
            name=v["name"],
            grid=v["grid"],
            target=TARGET,
            meta=v["meta"],
        )
        kernels.append(k)
        if not quiet:
            print(
                f"compiled {k.name}: {k.sm}, {k.num_warps} warps, {k.shared_bytes} B shared, "
                f"{len(k.binary)} B cubin, triton {k.triton} ({time.perf_counter() - start:.1f} s)"
            )
    return Bundle(tuple(kernels))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", type=Path, required=True, help="the bundle file")
    parser.add_argument("--dtypes", default=",".join(DTYPES), help="fp16,bf16 (default: both)")
    args = parser.parse_args(argv)
    dtypes = [d for d in args.dtypes.split(",") if d]
    bad = [d for d in dtypes if d not in DTYPES]
    if bad or not dtypes:
        parser.error(f"--dtypes takes {', '.join(DTYPES)}; got {args.dtypes!r}")
    bundle = build(dtypes)
    bundle.write(args.output)
    print(f"wrote {args.output} ({args.output.stat().st_size} bytes, {len(bundle)} kernels)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
