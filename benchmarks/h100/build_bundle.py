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

Other configurations of the same kernel (block shape and warps through its
constexprs and ``num_warps``; all ``aligned``) are added on request:

* ``--candidates``: every configuration ``tune.py`` chooses among;
* ``--tuned``: the configurations chosen in the config table
  (``configs/cuda90.json``, written by ``tune.py``);
* ``--triton``: the plain Triton ``tl.dot`` baseline of ``triton_gemm.py``
  in each of its standard configs, compiled by Triton 3.9.0 itself.

The MMA is a wgmma (``--mma=auto``, the default: both operands are read from
shared buffers) or, with ``--mma=mma_v2``, the mma.sync of the earlier
lowering, for a side-by-side run of both bundles.

    python benchmarks/h100/build_bundle.py -o benchmarks/h100/gemm_cuda90.bundle
    python benchmarks/h100/build_bundle.py -o bench.bundle --candidates --triton
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
if str(HERE) not in sys.path:  # triton_gemm.py, beside this file
    sys.path.insert(0, str(HERE))
SOURCE = "examples/gemm_gfx1250.py"
TARGET = "cuda:90"
DTYPES = {"fp16": "float16", "bf16": "bfloat16"}
#: Arguments that the aligned variant states to be multiples of 16.
ALIGNED_ARGS = ("N", "K", "lda", "ldb", "ldc")
DIVISIBILITY = 16
#: The config table ``tune.py`` writes and ``--tuned`` / ``bench_gemm.py`` read.
CONFIG_TABLE = HERE / "configs" / "cuda90.json"


@dataclass(frozen=True)
class OurConfig:
    """A configuration of the tile GEMM: block shape (constexprs) and warps."""

    block_m: int
    block_n: int
    block_k: int
    num_warps: int
    stages: int = 2
    """Shared buffers per operand (the kernel's NUM_BUFFERS): tiles in flight."""

    @property
    def tag(self) -> str:
        stages = f"_s{self.stages}" if self.stages != 2 else ""
        return f"{self.block_m}x{self.block_n}x{self.block_k}_w{self.num_warps}{stages}"

    @classmethod
    def parse(cls, tag: str) -> OurConfig:
        """The config of a tag like ``128x128x64_w8`` (``_s3``: three stages)."""
        try:
            shape, rest = tag.split("_w")
            warps, _, stages = rest.partition("_s")
            m, n, k = (int(x) for x in shape.split("x"))
            return cls(m, n, k, int(warps), int(stages) if stages else 2)
        except ValueError:
            raise ValueError(f"{tag!r} is not a config tag like '128x128x64_w8'") from None

    def hints(self) -> dict[str, int]:
        """The kernel's warp hints for this warp count: A by the first half, B by the second.

        (The example's defaults are these for 8 warps; cuda:90 drops the hint.)
        """
        half = (1 << (self.num_warps // 2)) - 1
        return {"HINT_A": half, "HINT_B": ((1 << self.num_warps) - 1) ^ half}


#: The kernel's own defaults (``examples/gemm_gfx1250.py``), built by default.
DEFAULT_CONFIG = OurConfig(128, 128, 64, 8)
#: What ``tune.py`` chooses among: block shapes, warps and pipeline depths.
CANDIDATES = (
    DEFAULT_CONFIG,
    OurConfig(128, 256, 64, 8),
    OurConfig(256, 128, 64, 8),
    OurConfig(128, 128, 32, 8),
    OurConfig(128, 128, 64, 4),
    OurConfig(64, 128, 64, 4),
    OurConfig(128, 128, 64, 4, stages=3),
    OurConfig(128, 128, 64, 8, stages=3),
    OurConfig(128, 128, 64, 8, stages=4),
    OurConfig(128, 256, 64, 8, stages=3),
    OurConfig(64, 128, 64, 4, stages=4),
)


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


def gemm_variants(dtypes: list[str] | None = None, mma: str = "auto") -> list[dict[str, Any]]:
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
            module = kernel.build_module(
                num_warps=DEFAULT_CONFIG.num_warps,
                DTYPE={"fp16": tl.float16, "bf16": tl.bfloat16}[dtype],
            )
            aligned = ALIGNED_ARGS if variant == "aligned" else ()
            state_divisibility(module, names, aligned)
            out.append(
                {
                    "name": f"gemm_{dtype}_{variant}",
                    "module": module,
                    "arg_names": names,
                    "grid": [("M", block["M"]), ("N", block["N"]), 1],
                    "meta": {
                        "kind": "ours",
                        "source": SOURCE,
                        "dtype": DTYPES[dtype],
                        "variant": variant,
                        "config": OurConfig(block["M"], block["N"], block["K"], 8).tag,
                        "block": block,
                        "copies": "cp.async" if aligned else "registers",
                        "mma": mma,
                        "layout": "row-major A (MxK, lda), B (KxN, ldb), C (MxN, ldc)",
                    },
                }
            )
    return out


def config_variants(
    configs: list[OurConfig], dtypes: list[str] | None = None, mma: str = "auto"
) -> list[dict]:
    """The ``aligned`` variant of each config (the default one is in :func:`gemm_variants`)."""
    import gemm_opt.language as tl

    example = _example()
    kernel = example.gemm
    names = [p.name for p in kernel.params() if p.kind != "constexpr"]
    out = []
    for dtype in dtypes or list(DTYPES):
        for cfg in configs:
            if cfg == DEFAULT_CONFIG:
                continue
            module = kernel.build_module(
                num_warps=cfg.num_warps,
                DTYPE={"fp16": tl.float16, "bf16": tl.bfloat16}[dtype],
                BLOCK_M=cfg.block_m,
                BLOCK_N=cfg.block_n,
                BLOCK_K=cfg.block_k,
                NUM_BUFFERS=cfg.stages,
                **cfg.hints(),
            )
            state_divisibility(module, names, ALIGNED_ARGS)
            out.append(
                {
                    "name": f"gemm_{dtype}_aligned_{cfg.tag}",
                    "module": module,
                    "arg_names": names,
                    "grid": [("M", cfg.block_m), ("N", cfg.block_n), 1],
                    "meta": {
                        "kind": "ours",
                        "source": SOURCE,
                        "dtype": DTYPES[dtype],
                        "variant": "aligned",
                        "config": cfg.tag,
                        "block": {"M": cfg.block_m, "N": cfg.block_n, "K": cfg.block_k},
                        "copies": "cp.async",
                        "mma": mma,
                        "layout": "row-major A (MxK, lda), B (KxN, ldb), C (MxN, ldc)",
                    },
                }
            )
    return out


def read_config_table(path: Path = CONFIG_TABLE) -> dict[str, Any]:
    """The config table ``tune.py`` wrote (see ``tune.py`` for its fields)."""
    try:
        table = json.loads(path.read_text())
        configs = [OurConfig.parse(e["config"]) for e in table["entries"]]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise SystemExit(f"build_bundle.py: error: {path}: not a config table: {e}") from None
    table["configs"] = configs
    return table


def build(
    dtypes: list[str] | None = None,
    *,
    configs: list[OurConfig] | None = None,
    triton: bool = False,
    quiet: bool = False,
    mma: str = "auto",
) -> Any:
    """Compile every variant (and ``configs``, the Triton baseline) into a bundle."""
    from gemm_opt.runtime import Bundle
    from gemm_opt.runtime.build import build_kernel

    kernels = []
    extra = list(dict.fromkeys(configs or []))
    for v in gemm_variants(dtypes, mma) + config_variants(extra, dtypes, mma):
        start = time.perf_counter()
        k = build_kernel(
            v["module"],
            v["arg_names"],
            name=v["name"],
            grid=v["grid"],
            target=TARGET,
            meta=v["meta"],
            mma=mma,
        )
        kernels.append(k)
        if not quiet:
            print(
                f"compiled {k.name}: {k.sm}, {k.num_warps} warps, {k.shared_bytes} B shared, "
                f"{len(k.binary)} B cubin, triton {k.triton} ({time.perf_counter() - start:.1f} s)"
            )
    if triton:
        import triton_gemm

        kernels += triton_gemm.bundle_kernels(dtypes, quiet=quiet)
    return Bundle(tuple(kernels))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", type=Path, required=True, help="the bundle file")
    parser.add_argument("--dtypes", default=",".join(DTYPES), help="fp16,bf16 (default: both)")
    parser.add_argument(
        "--candidates", action="store_true", help="add every config tune.py chooses among"
    )
    parser.add_argument(
        "--tuned", action="store_true", help=f"add the configs chosen in {CONFIG_TABLE.name}"
    )
    parser.add_argument("--config-table", type=Path, default=CONFIG_TABLE)
    parser.add_argument(
        "--triton", action="store_true", help="add the plain Triton baseline (triton_gemm.py)"
    )
    parser.add_argument(
        "--mma",
        default="auto",
        choices=("auto", "mma_v2", "wgmma"),
        help="cuda:90 MMA: wgmma where the kernel allows (auto), mma.sync, or wgmma",
    )
    args = parser.parse_args(argv)
    dtypes = [d for d in args.dtypes.split(",") if d]
    bad = [d for d in dtypes if d not in DTYPES]
    if bad or not dtypes:
        parser.error(f"--dtypes takes {', '.join(DTYPES)}; got {args.dtypes!r}")
    configs = list(CANDIDATES) if args.candidates else []
    if args.tuned:
        configs += read_config_table(args.config_table)["configs"]
    bundle = build(dtypes, configs=configs, triton=args.triton, mma=args.mma)
    bundle.write(args.output)
    print(f"wrote {args.output} ({args.output.stat().st_size} bytes, {len(bundle)} kernels)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
