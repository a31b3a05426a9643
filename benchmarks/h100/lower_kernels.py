"""Lower the tile GEMM to TTGIR for cuda:90 (the portable lowering), for run_gemm.py.

The tile kernel is ``examples/gemm_gfx1250.mlir`` as it is: its
``warp_used_hint`` copies are a gfx1250 performance hint, and the cuda:90
conversion drops them (the data written stays the same). Four variants are
written to ``kernels/``, with ``kernels/kernels.json`` describing them:

* element type ``fp16`` (the source) or ``bf16`` (every ``f16`` of the source
  spelled ``bf16``);
* ``aligned``: ``N``, ``K``, ``lda``, ``ldb`` and ``ldc`` carry
  ``tile.divisibility = 16``, so copies become 16-byte ``cp.async``
  (``ttg.async_copy_global_to_local``); the launcher may only use it when
  those values are multiples of 16;
* ``any``: no facts, so copies go through registers (``tt.load`` +
  ``ttg.local_store``); valid for every shape.

The TTGIR is the converter's generic form with locations (they name the tile
source; columns on the signature line and after a ``bf16`` are those of the
variant's text), with Triton layout attributes given aliases (``#blocked``,
``#mma``, ``#shared``, ``#smem``) to keep the files small. Triton 3.6 and
3.9 both parse it. ``run_gemm.py`` needs only these files, triton and torch.

    python benchmarks/h100/lower_kernels.py           # (re)write kernels/
    python benchmarks/h100/lower_kernels.py --check   # exit 1 if kernels/ is stale
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SOURCE = "examples/gemm_gfx1250.mlir"
TARGET = "cuda:90"
KERNELS = HERE / "kernels"
MANIFEST = "kernels.json"
DTYPES = {"fp16": "f16", "bf16": "bf16"}
#: Arguments that the aligned variant states to be multiples of 16.
ALIGNED_ARGS = ("N", "K", "lda", "ldb", "ldc")
DIVISIBILITY = 16
#: Layout kinds that get an alias, and the alias stem.
ALIAS_STEMS = {
    "blocked": "blocked",
    "nvidia_mma": "mma",
    "swizzled_shared": "shared",
    "padded_shared": "shared",
}


def variant_source(text: str, dtype: str, aligned: bool) -> str:
    """The tile source of one variant."""
    if dtype == "bf16":
        text = re.sub(r"(?<!b)f16", "bf16", text)
    if aligned:
        for name in ALIGNED_ARGS:
            text, n = re.subn(
                rf"(%{name}: i(?:32|64))(?=[,)])",
                rf"\1 {{tile.divisibility = {DIVISIBILITY} : i32}}",
                text,
            )
            if n != 1:
                raise SystemExit(f"{SOURCE}: expected one argument %{name}, found {n}")
    return text


def _balanced_end(text: str, start: int) -> int:
    """Index just past the ``<...>`` that opens at ``text[start]``."""
    depth = 0
    for i in range(start, len(text)):
        c = text[i]
        if c == "<":
            depth += 1
        elif c == ">" and text[i - 1] != "-":
            depth -= 1
            if depth == 0:
                return i + 1
    raise ValueError("unbalanced '<' in TTGIR")


def alias_layouts(ttgir: str) -> str:
    """Give Triton's layout attributes aliases, as Triton's own printer does.

    Every ``#ttg.<kind><...>`` of a kind in :data:`ALIAS_STEMS` (none of
    which nests another) becomes ``#<stem>``, ``#<stem>1``, ... in order of
    first appearance, and ``#ttg.shared_memory`` becomes ``#smem``; the alias
    definitions go first. Only spelling changes, never meaning.
    """
    aliases: dict[str, str] = {}
    counts: dict[str, int] = {}
    out: list[str] = []
    pos = 0
    pattern = re.compile(r"#ttg\.(\w+)(<?)")
    while True:
        m = pattern.search(ttgir, pos)
        if m is None:
            out.append(ttgir[pos:])
            break
        kind, opens = m.group(1), m.group(2)
        if kind == "shared_memory" and not opens:
            full, end, stem = m.group(0), m.end(), "smem"
        elif kind in ALIAS_STEMS and opens:
            end = _balanced_end(ttgir, m.end() - 1)
            full, stem = ttgir[m.start() : end], ALIAS_STEMS[kind]
        else:
            out.append(ttgir[pos : m.end()])
            pos = m.end()
            continue
        if full not in aliases:
            n = counts.get(stem, 0)
            counts[stem] = n + 1
            aliases[full] = f"#{stem}{n if n else ''}"
        out.append(ttgir[pos : m.start()])
        out.append(aliases[full])
        pos = end
    head = "".join(f"{name} = {full}\n" for full, name in aliases.items())
    return head + "".join(out)


def _signature(tile_text: str, ttgir: str) -> list[dict[str, str]]:
    m = re.search(r"func\.func @\w+\((.*?)\)\s*\{", tile_text)
    assert m is not None, "no func.func in the tile source"
    names = re.findall(r"%(\w+):", m.group(1))
    b = re.search(r"\^bb0\((.*?)\):\s*$", ttgir, re.MULTILINE)
    assert b is not None, "no entry block in the TTGIR"
    args = re.sub(r"\s*loc\((?:[^()]|\([^()]*\))*\)", "", b.group(1))
    types = [t.strip() for t in re.findall(r"%\w+: ([^,]+)", args)]
    assert len(names) == len(types), (names, types)
    short = {"!tt.ptr<f16>": "*fp16", "!tt.ptr<bf16>": "*bf16", "i32": "i32", "i64": "i64"}
    return [{"name": n, "type": short.get(t, t)} for n, t in zip(names, types, strict=True)]


def _facts(ttgir: str) -> dict[str, object]:
    """Block sizes, warps, buffers and copy kind, read back from the TTGIR."""
    dot = re.search(
        r'"tt\.dot"\([^)]*\) : \(tensor<(\d+)x(\d+)x\w+, .*?tensor<(\d+)x(\d+)x\w+', ttgir
    )
    assert dot is not None, "no tt.dot in the TTGIR"
    bm, bk, _, bn = (int(x) for x in dot.groups())
    warps = re.search(r'"ttg\.num-warps" = (\d+)', ttgir)
    lanes = re.search(r'"ttg\.threads-per-warp" = (\d+)', ttgir)
    bufs = re.findall(r'"ttg\.local_alloc"\(\) : \(\) -> !ttg\.memdesc<(\d+)x', ttgir)
    assert warps and lanes and bufs
    direct = '"ttg.async_copy_global_to_local"' in ttgir
    return {
        "block": {"M": bm, "N": bn, "K": bk},
        "num_warps": int(warps.group(1)),
        "threads_per_warp": int(lanes.group(1)),
        "shared_buffers": int(bufs[0]),
        "copies": "cp.async (ttg.async_copy_global_to_local)"
        if direct
        else "registers (tt.load + ttg.local_store)",
        "mma": "mma.sync m16n8k16 (ttg.nvidia_mma version 2)",
        "warp_used_hint": "dropped" if "warp_used_hint" not in ttgir else "kept",
    }


def lower_all() -> dict[str, str]:
    """Every generated file (name -> text), the manifest included."""
    from gemm_opt.lowering.compile import lower_tile_module

    source = (REPO / SOURCE).read_text()
    files: dict[str, str] = {}
    kernels = []
    for dtype in DTYPES:
        for aligned in (True, False):
            variant = "aligned" if aligned else "any"
            tile_text = variant_source(source, dtype, aligned)
            low = lower_tile_module(tile_text, TARGET)
            ttgir = low.ttgir.replace('loc("-":', f"loc({json.dumps(SOURCE)}:")
            ttgir = alias_layouts(ttgir)
            name = f"gemm_{dtype}_{variant}.ttgir"
            files[name] = (
                f"// Generated by benchmarks/h100/lower_kernels.py from {SOURCE} "
                f"({dtype}, {variant}) for {TARGET}; do not edit.\n{ttgir}"
            )
            entry: dict[str, object] = {
                "file": name,
                "name": re.search(r'sym_name = "(\w+)"', ttgir).group(1),  # type: ignore[union-attr]
                "dtype": {"fp16": "float16", "bf16": "bfloat16"}[dtype],
                "variant": variant,
                "signature": _signature(tile_text, ttgir),
                "multiple_of_16": list(ALIGNED_ARGS) if aligned else [],
                "grid": ["cdiv(M, block.M)", "cdiv(N, block.N)", 1],
                "layout": "row-major A (MxK, lda), B (KxN, ldb), C (MxN, ldc); unit inner strides",
            }
            entry.update(_facts(ttgir))
            kernels.append(entry)
    manifest = {
        "generator": "benchmarks/h100/lower_kernels.py",
        "source": SOURCE,
        "target": TARGET,
        "pipeline": f"convert-tile-to-triton-gpu{{target={TARGET}}}",
        "kernels": kernels,
    }
    files[MANIFEST] = json.dumps(manifest, indent=2) + "\n"
    return files


def stale(files: dict[str, str], directory: Path = KERNELS) -> list[str]:
    """Names whose committed text differs from ``files`` (or is missing)."""
    out = []
    for name, text in files.items():
        path = directory / name
        if not path.exists() or path.read_text() != text:
            out.append(name)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=KERNELS, help="output directory")
    parser.add_argument(
        "--check", action="store_true", help="only compare with the files there; exit 1 if stale"
    )
    args = parser.parse_args(argv)
    files = lower_all()
    if args.check:
        bad = stale(files, args.out)
        for name in bad:
            print(f"stale: {args.out / name}", file=sys.stderr)
        return 1 if bad else 0
    args.out.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (args.out / name).write_text(text)
        print(f"wrote {args.out / name} ({len(text)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
