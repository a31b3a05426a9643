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

With ``--tma`` (or a config tag ending in ``_tma``) the aligned variants copy
with TMA instead of ``cp.async``: TMA descriptors the launcher encodes on
the host from the call's arguments (the bundle's ``tensormaps``; a
descriptor made in a loop or a partition stays device-side, 128 bytes of
global scratch per program) and one mbarrier per copy in flight
(``lds-copies=tma`` of the lowering).

Other configurations of the same kernel (block shape and warps through its
constexprs and ``num_warps``; all ``aligned``) are added on request:

* ``--candidates``: every configuration ``tune.py`` chooses among, persistent
  ones (tag suffix ``_pers``: the kernel's ``PERSISTENT`` form, bundle grid of
  one program; launchers pass ``grid=(min(tiles, SMs x CTAs per SM), 1, 1)``,
  ``benchlib.launch_options``), small tiles for shapes with few tiles, and
  the TMA-store epilogue (tag suffix ``_tmastore``: the kernel's
  ``EPILOGUE_TMA``, C staged in shared memory and stored by TMA);
* ``--tuned``: the configurations chosen in the config table
  (``configs/cuda90.json``, written by ``tune.py``);
* ``--triton``: the plain Triton ``tl.dot`` baseline of ``triton_gemm.py``
  in each of its standard configs, compiled by Triton 3.9.0 itself;
* ``--gluon-ws``: the warp-specialized Gluon GEMM of ``gluon_ws_gemm.py``
  (TMA producer warp, wgmma consumer warpgroups; meta kind ``gluon-ws``) in
  each of its configs, a reference for what warp specialization gives.

The MMA is a wgmma (``--mma=auto``, the default: both operands are read from
shared buffers) or, with ``--mma=mma_v2``, the mma.sync of the earlier
lowering, for a side-by-side run of both bundles. cuda:90's pipeline runs
``tile-pipeline-mma`` (one wgmma in flight in the K loop); ``--sync-mma``
builds the default variants without it, and a config tag ending in ``_sync``
says the same of a config (see :class:`OurConfig` for the tag: block, warps,
stages, GROUP_M tile order). Every variant is built with the kernel's
``PROLOGUE_PRED=False`` (no branch before the K loop, which would make ptxas
serialize the wgmmas); each compiled kernel's registers, spills and wgmma
waits (from its SASS) are printed.

    python benchmarks/h100/build_bundle.py -o benchmarks/h100/gemm_cuda90.bundle
    python benchmarks/h100/build_bundle.py -o bench.bundle --candidates --triton --gluon-ws
"""

from __future__ import annotations

import argparse
import dataclasses
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

from cubin_usage import RESOURCES, resource_usage, wgmma_waits  # noqa: E402

__all__ = ["RESOURCES", "resource_usage", "wgmma_waits"]  # the names tests read from here
SOURCE = "examples/gemm_gfx1250.py"
TARGET = "cuda:90"
DTYPES = {"fp16": "float16", "bf16": "bfloat16"}
#: Arguments that the aligned variant states to be multiples of 16.
ALIGNED_ARGS = ("N", "K", "lda", "ldb", "ldc")
DIVISIBILITY = 16
#: The config table ``tune.py`` writes and ``--tuned`` / ``bench_gemm.py`` read.
CONFIG_TABLE = HERE / "configs" / "cuda90.json"
#: The hand-off of a TMA config: every copy a barrier-tracked TMA copy.
TMA_HAND_OFF = "convert-tile-to-triton-gpu{target=cuda:90 lds-copies=tma}"
#: Registers per thread of a warp-specialized config's producer warp (``setmaxnreg``;
#: Triton gives the rest of the budget to the kernel's own warps).
WS_PRODUCER_REGS = 40
#: The hand-off of an aligned config without TMA: ``cp.async`` copies (the
#: default, ``lds-copies=auto``, would take TMA where the facts allow it).
DIRECT_HAND_OFF = "convert-tile-to-triton-gpu{target=cuda:90 lds-copies=direct}"


@dataclass(frozen=True)
class OurConfig:
    """A configuration of the tile GEMM: block shape, warps, stages, tile order, MMA."""

    block_m: int
    block_n: int
    block_k: int
    num_warps: int
    stages: int = 2
    """Shared buffers per operand (the kernel's NUM_BUFFERS): tiles in flight."""
    group_m: int = 0
    """The kernel's GROUP_M: grouped tile order (0: program (x, y) computes tile (x, y))."""
    async_mma: bool = True
    """Compile with ``tile-pipeline-mma`` (one wgmma in flight), as cuda:90 does by
    default; False: each MMA is waited for at once (tag suffix ``_sync``)."""
    tma: bool = False
    """Copies are barrier-tracked TMA copies (``lds-copies=tma``, tag suffix
    ``_tma``); False: ``cp.async``."""
    persistent: bool = False
    """The kernel's PERSISTENT form (tag suffix ``_pers``): one program per
    resident slot, each looping over its tiles with the next tile's copies in
    flight during the epilogue; launched with ``persistent_grid``."""
    epilogue_tma: bool = False
    """The kernel's EPILOGUE_TMA (tag suffix ``_tmastore``): C is staged in
    shared memory and written by a TMA store, which runs on while the next
    tile's K loop does (the next epilogue waits for it)."""
    ws: bool = False
    """The kernel's WARP_SPECIALIZE (tag suffix ``_ws``; persistent only): a
    one-warp producer partition fills the ring through ready/empty barriers
    while the kernel's warps multiply and store C."""

    def __post_init__(self) -> None:
        if self.ws and not self.persistent:
            raise ValueError(f"{self.tag}: warp specialization is a form of the persistent kernel")

    @property
    def tag(self) -> str:
        stages = f"_s{self.stages}" if self.stages != 2 else ""
        group = f"_g{self.group_m}" if self.group_m else ""
        tma = "_tma" if self.tma else ""
        store = "_tmastore" if self.epilogue_tma else ""
        pers = "_pers" if self.persistent else ""
        ws = "_ws" if self.ws else ""
        sync = "" if self.async_mma else "_sync"
        shape = f"{self.block_m}x{self.block_n}x{self.block_k}"
        return f"{shape}_w{self.num_warps}{stages}{group}{tma}{store}{pers}{ws}{sync}"

    @classmethod
    def parse(cls, tag: str) -> OurConfig:
        """The config of a tag like ``128x128x64_w8`` (``_s3``: three stages,
        ``_g8``: GROUP_M 8, ``_tma``: TMA copies, ``_tmastore``: the TMA-store epilogue,
        ``_pers``: persistent, ``_sync``: the MMA waited for at once)."""
        try:
            shape, *parts = tag.split("_")
            m, n, k = (int(x) for x in shape.split("x"))
            fields: dict[str, Any] = {}
            for part in parts:
                if part == "sync" and "async_mma" not in fields:
                    fields["async_mma"] = False
                elif part == "tma" and "tma" not in fields:
                    fields["tma"] = True
                elif part == "tmastore" and "epilogue_tma" not in fields:
                    fields["epilogue_tma"] = True
                elif part == "pers" and "persistent" not in fields:
                    fields["persistent"] = True
                elif part == "ws" and "ws" not in fields:
                    fields["ws"] = True
                elif part[:1] in "wsg" and part[1:].isdigit():
                    key = {"w": "num_warps", "s": "stages", "g": "group_m"}[part[0]]
                    if key in fields:
                        raise ValueError(part)
                    fields[key] = int(part[1:])
                else:
                    raise ValueError(part)
            warps = fields.pop("num_warps")
            cfg = cls(m, n, k, warps, **fields)
        except (ValueError, KeyError):
            raise ValueError(f"{tag!r} is not a config tag like '128x128x64_w8'") from None
        if cfg.tag != tag:  # one spelling per config
            raise ValueError(f"{tag!r} is not a config tag like '128x128x64_w8' (say {cfg.tag!r})")
        return cfg

    @property
    def pipeline(self) -> str:
        """The tile passes and the hand-off the aligned variant compiles with:
        TMA copies (``_tma``) or ``cp.async``, named in the hand-off either way."""
        hand_off = TMA_HAND_OFF if self.tma else DIRECT_HAND_OFF
        return ",".join([*(["tile-pipeline-mma"] if self.async_mma else []), hand_off])

    @property
    def unaligned_pipeline(self) -> str | None:
        """The tile passes of the variant without facts (None: cuda:90's default
        pipeline, whose copies then go through registers)."""
        return None if self.async_mma else ""

    @property
    def copies(self) -> str:
        """How the aligned variant fills shared memory (bundle metadata)."""
        return "tma" if self.tma else "cp.async"

    def constexprs(self) -> dict[str, int]:
        """The kernel's constexprs for this config (the element type aside)."""
        return {
            "BLOCK_M": self.block_m,
            "BLOCK_N": self.block_n,
            "BLOCK_K": self.block_k,
            "NUM_BUFFERS": self.stages,
            "GROUP_M": self.group_m,
            "PROLOGUE_PRED": False,
            "PERSISTENT": self.persistent,
            "EPILOGUE_TMA": self.epilogue_tma,
            "WARP_SPECIALIZE": self.ws,
            "PRODUCER_REGS": WS_PRODUCER_REGS if self.ws else None,
            **self.hints(),
        }

    def grid(self) -> list[Any]:
        """The bundle's grid: a program per tile, or (persistent) one program,
        which is correct for every shape; launchers pass ``persistent_grid``."""
        if self.persistent:
            return [1, 1, 1]
        return [("M", self.block_m), ("N", self.block_n), 1]

    def hints(self) -> dict[str, int]:
        """The kernel's warp hints for this warp count: A by the first half, B by the second.

        (The example's defaults are these for 8 warps; cuda:90 drops the hint.)
        """
        half = (1 << (self.num_warps // 2)) - 1
        return {"HINT_A": half, "HINT_B": ((1 << self.num_warps) - 1) ^ half}


#: The kernel's own defaults (``examples/gemm_gfx1250.py``), built by default.
DEFAULT_CONFIG = OurConfig(128, 128, 64, 8)
#: What ``tune.py`` chooses among: block shapes, warps, pipeline depths,
#: grouped tile order, and (for comparison) the MMA waited for at once.
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
    OurConfig(128, 256, 64, 8, stages=4),
    OurConfig(64, 128, 64, 4, stages=4),
    OurConfig(128, 128, 64, 4, stages=4, group_m=8),
    OurConfig(128, 128, 64, 8, stages=4, group_m=8),
    OurConfig(128, 256, 64, 8, stages=3, group_m=8),
    OurConfig(128, 256, 64, 8, stages=4, group_m=8),
    OurConfig(256, 128, 64, 8, stages=3, group_m=8),
    OurConfig(128, 128, 64, 8, async_mma=False),
    OurConfig(128, 128, 64, 4, async_mma=False),
    OurConfig(128, 256, 64, 8, stages=3, group_m=8, async_mma=False),
    OurConfig(128, 128, 64, 8, tma=True),
    OurConfig(128, 128, 64, 8, stages=4, group_m=8, tma=True),
    OurConfig(128, 128, 64, 4, stages=4, group_m=8, tma=True),
    OurConfig(128, 256, 64, 8, stages=3, group_m=8, tma=True),
    OurConfig(128, 256, 64, 8, stages=4, group_m=8, tma=True),
    OurConfig(256, 128, 64, 8, stages=3, group_m=8, tma=True),
    # Persistent (one program per SM, the next tile's copies in flight during the
    # epilogue; its buffers stay live, so the epilogue's shared scratch comes on top).
    OurConfig(128, 128, 64, 8, stages=4, group_m=8, tma=True, persistent=True),
    OurConfig(128, 128, 64, 8, stages=5, group_m=8, tma=True, persistent=True),
    OurConfig(128, 128, 64, 4, stages=4, group_m=8, tma=True, persistent=True),
    OurConfig(128, 256, 64, 8, stages=3, group_m=8, tma=True, persistent=True),
    OurConfig(256, 128, 64, 8, stages=3, group_m=8, tma=True, persistent=True),
    # Small tiles: more programs where 128x128 tiles leave SMs idle (512x512x8192:
    # 16 tiles of 128x128, 64 of 64x64; 1024^3: 64 tiles of 128x128, 128 of 64x128).
    OurConfig(64, 64, 128, 4, stages=4, tma=True),
    OurConfig(64, 64, 64, 4, stages=4, tma=True),
    OurConfig(64, 128, 128, 4, stages=4, tma=True),
    OurConfig(128, 64, 128, 4, stages=4, tma=True),
    OurConfig(64, 128, 64, 4, stages=4, tma=True),
    OurConfig(128, 64, 64, 4, stages=4, tma=True),
    # Warp-specialized persistent forms (a one-warp TMA producer partition).
    OurConfig(128, 256, 64, 8, stages=3, group_m=8, tma=True, persistent=True, ws=True),
    OurConfig(128, 256, 64, 8, stages=4, group_m=8, tma=True, persistent=True, ws=True),
    OurConfig(128, 128, 64, 8, stages=4, group_m=8, tma=True, persistent=True, ws=True),
    OurConfig(128, 128, 64, 8, stages=5, group_m=8, tma=True, persistent=True, ws=True),
    OurConfig(128, 128, 64, 4, stages=4, group_m=8, tma=True, persistent=True, ws=True),
    OurConfig(64, 128, 64, 4, stages=4, group_m=8, tma=True, persistent=True, ws=True),
    OurConfig(64, 128, 128, 4, stages=3, group_m=8, tma=True, persistent=True, ws=True),
    OurConfig(
        128, 256, 64, 8, stages=3, group_m=8, tma=True, epilogue_tma=True, persistent=True, ws=True
    ),
    # Deeper rings of the small tiles: their shapes are bound by the bytes each SM
    # keeps in flight (one 192 KB program per SM).
    OurConfig(64, 64, 128, 4, stages=6, tma=True),
    OurConfig(64, 64, 128, 4, stages=5, tma=True),
    # The TMA-store epilogue (C through shared memory; its buffer comes on top of
    # the ring: 128x256 fits three stages, 213,024 bytes, not four).
    OurConfig(128, 256, 64, 8, stages=3, group_m=8, tma=True, epilogue_tma=True),
    OurConfig(128, 256, 64, 8, stages=3, group_m=8, tma=True, epilogue_tma=True, persistent=True),
    OurConfig(128, 128, 64, 8, stages=4, group_m=8, tma=True, epilogue_tma=True),
    OurConfig(128, 128, 64, 4, stages=4, group_m=8, tma=True, epilogue_tma=True),
    OurConfig(128, 128, 64, 8, stages=4, group_m=8, tma=True, epilogue_tma=True, persistent=True),
    OurConfig(128, 128, 64, 4, stages=4, group_m=8, tma=True, epilogue_tma=True, persistent=True),
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


def gemm_variants(
    dtypes: list[str] | None = None, mma: str = "auto", async_mma: bool = True, tma: bool = False
) -> list[dict[str, Any]]:
    """Every variant: its name, tile module, argument names, grid and metadata
    (``tma``: the aligned ones with TMA copies; ``any`` keeps register copies,
    as TMA needs 16-byte aligned strides)."""
    import gemm_opt.language as tl

    example = _example()
    kernel = example.gemm
    names = [p.name for p in kernel.params() if p.kind != "constexpr"]
    block = {
        p.name[len("BLOCK_") :]: p.default for p in kernel.params() if p.name.startswith("BLOCK_")
    }
    default = OurConfig(block["M"], block["N"], block["K"], 8, async_mma=async_mma, tma=tma)
    untracked = dataclasses.replace(default, tma=False)
    out = []
    for dtype in dtypes or list(DTYPES):
        for variant in ("aligned", "any"):
            module = kernel.build_module(
                num_warps=DEFAULT_CONFIG.num_warps,
                DTYPE={"fp16": tl.float16, "bf16": tl.bfloat16}[dtype],
                PROLOGUE_PRED=False,
            )
            aligned = ALIGNED_ARGS if variant == "aligned" else ()
            state_divisibility(module, names, aligned)
            out.append(
                {
                    "name": f"gemm_{dtype}_{variant}",
                    "module": module,
                    "arg_names": names,
                    "grid": [("M", block["M"]), ("N", block["N"]), 1],
                    "pipeline": default.pipeline if aligned else untracked.unaligned_pipeline,
                    "meta": {
                        "kind": "ours",
                        "source": SOURCE,
                        "dtype": DTYPES[dtype],
                        "variant": variant,
                        "config": (default if aligned else untracked).tag,
                        "block": block,
                        "copies": default.copies if aligned else "registers",
                        "mma": mma,
                        "mma_in_flight": int(async_mma),
                        "group_m": 0,
                        "prologue_pred": False,
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
            module = kernel.build_module(
                num_warps=cfg.num_warps,
                DTYPE={"fp16": tl.float16, "bf16": tl.bfloat16}[dtype],
                **cfg.constexprs(),
            )
            state_divisibility(module, names, ALIGNED_ARGS)
            out.append(
                {
                    "name": f"gemm_{dtype}_aligned_{cfg.tag}",
                    "module": module,
                    "arg_names": names,
                    "grid": cfg.grid(),
                    "pipeline": cfg.pipeline,
                    "meta": {
                        "kind": "ours",
                        "source": SOURCE,
                        "dtype": DTYPES[dtype],
                        "variant": "aligned",
                        "config": cfg.tag,
                        "block": {"M": cfg.block_m, "N": cfg.block_n, "K": cfg.block_k},
                        "copies": cfg.copies,
                        "mma": mma,
                        "mma_in_flight": int(cfg.async_mma),
                        "group_m": cfg.group_m,
                        "prologue_pred": False,
                        "persistent": cfg.persistent,
                        "epilogue": "tma-store" if cfg.epilogue_tma else "registers",
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
    gluon_ws: bool = False,
    quiet: bool = False,
    mma: str = "auto",
    async_mma: bool = True,
    tma: bool = False,
) -> Any:
    """Compile every variant (and ``configs``, the Triton baseline, the
    warp-specialized Gluon GEMM) into a bundle.

    ``async_mma=False`` builds the default variants without ``tile-pipeline-mma``
    (each MMA waited for at once); ``configs`` say it themselves."""
    from gemm_opt.runtime import Bundle

    kernels = []
    # gemm_variants builds the default config
    default = dataclasses.replace(DEFAULT_CONFIG, async_mma=async_mma, tma=tma)
    extra = [c for c in dict.fromkeys(configs or []) if c != default]
    for v in gemm_variants(dtypes, mma, async_mma, tma) + config_variants(extra, dtypes, mma):
        start = time.perf_counter()
        k = build_variant(v, mma)
        kernels.append(k)
        if not quiet:
            print(
                f"compiled {k.name}: {k.sm}, {k.num_warps} warps, {k.shared_bytes} B shared, "
                f"{len(k.binary)} B cubin, {resource_usage(k.binary)}, "
                f"{wgmma_waits(k.binary)}, triton {k.triton} "
                f"({time.perf_counter() - start:.1f} s)"
            )
    if triton:
        import triton_gemm

        kernels += triton_gemm.bundle_kernels(dtypes, quiet=quiet)
    if gluon_ws:
        import gluon_ws_gemm

        kernels += gluon_ws_gemm.bundle_kernels(dtypes, quiet=quiet)
    return Bundle(tuple(kernels))


def build_variant(v: dict[str, Any], mma: str = "auto") -> Any:
    """The bundle kernel of one variant of :func:`gemm_variants` /
    :func:`config_variants`, compiled with its own pipeline."""
    from gemm_opt.runtime.build import build_kernel

    return build_kernel(
        v["module"],
        v["arg_names"],
        name=v["name"],
        grid=v["grid"],
        target=TARGET,
        meta=v["meta"],
        mma=mma,
        pipeline=v["pipeline"],
    )


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
        "--gluon-ws",
        action="store_true",
        help="add the warp-specialized Gluon GEMM (gluon_ws_gemm.py)",
    )
    parser.add_argument(
        "--mma",
        default="auto",
        choices=("auto", "mma_v2", "wgmma"),
        help="cuda:90 MMA: wgmma where the kernel allows (auto), mma.sync, or wgmma",
    )
    parser.add_argument(
        "--sync-mma",
        action="store_true",
        help="build the default variants without tile-pipeline-mma (each MMA waited for at once)",
    )
    parser.add_argument(
        "--tma",
        action="store_true",
        help="build the default aligned variants with TMA copies (configs: tag suffix _tma)",
    )
    args = parser.parse_args(argv)
    dtypes = [d for d in args.dtypes.split(",") if d]
    bad = [d for d in dtypes if d not in DTYPES]
    if bad or not dtypes:
        parser.error(f"--dtypes takes {', '.join(DTYPES)}; got {args.dtypes!r}")
    configs = list(CANDIDATES) if args.candidates else []
    if args.tuned:
        configs += read_config_table(args.config_table)["configs"]
    bundle = build(
        dtypes,
        configs=configs,
        triton=args.triton,
        gluon_ws=args.gluon_ws,
        mma=args.mma,
        async_mma=not args.sync_mma,
        tma=args.tma,
    )
    bundle.write(args.output)
    print(f"wrote {args.output} ({args.output.stat().st_size} bytes, {len(bundle)} kernels)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
