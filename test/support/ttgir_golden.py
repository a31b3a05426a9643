"""The TTGIR of every example, lit input and bundled kernel, hashed: a byte-identity guard.

The hand-off (``convert-tile-to-triton-gpu``) is refactored under the rule that its output
does not change; this module lowers every tile module the project ships to TTGIR through the
public compile path (:func:`gemm_opt.lowering.compile.lower_tile_module`) and compares the
sha256 of each text with ``test/unit/data/ttgir_golden.json``. A case that fails to lower is
recorded by its diagnostic, so a changed message is a change too.

The cases:

* every ``examples/*.mlir``, with the default pipeline of its ``tile.target``;
* every case of every ``test/lit/**/*.mlir`` (split on ``// -----``), with the default
  pipeline of its target and with each hand-off pipeline the file's RUN lines name
  (``--pass-pipeline='builtin.module(... convert-tile-to-triton-gpu{...})'``);
* every kernel of :func:`gemm_opt.kernels.build_bundles.bundle_specs`, with the pipeline
  the bundle builder compiles it with (:func:`~gemm_opt.kernels.build_bundles.pipeline_of`).

Only TTGIR is emitted (Triton's compiler never runs). The lowering runs in forked workers,
each lowering its share of the cases in-process: the worker is the isolation that
:func:`gemm_opt.lowering.triton_bridge.run_isolated` gives one hand-off (a Triton abort
ends the worker, which is reported), and the per-case fork and Triton context it would
cost are most of the time.

    python test/support/ttgir_golden.py --update      # rewrite the golden
    python test/support/ttgir_golden.py --dump DIR    # write each TTGIR text to DIR
    python test/support/ttgir_golden.py               # compare; list what differs
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import pickle
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "test" / "unit" / "data" / "ttgir_golden.json"
#: The bundle builder's target (its only one).
BUNDLE_TARGET = "cuda:90"
_SPLIT = re.compile(r"^// -----\s*$", re.MULTILINE)
_RUN_PIPELINE = re.compile(r"RUN:.*--pass-pipeline='builtin\.module\(([^']*)\)'")
_HAND_OFFS = ("convert-tile-to-triton-gpu", "tile-to-ttgir")
_TARGET_OPTION = re.compile(r"\btarget=([\w:]+)")
#: The compile path's refusal of a module that names no target (such a case is left out).
NO_TARGET = "no target:"


@dataclass(frozen=True)
class Case:
    """One lowering: a key, the tile source (text, or a bundle kernel's spec) and a pipeline."""

    key: str
    text: str | None = None
    #: Source file named in Triton's locations (relative to the repository root).
    filename: str = "-"
    #: Pass pipeline including the hand-off (None: the target's default tile passes).
    pipeline: str | None = None
    #: Index into :func:`bundle_specs` (``text`` is None then).
    spec: int | None = None


def _lit_pipelines(text: str) -> list[str | None]:
    """The default pipeline, then each distinct hand-off pipeline of the RUN lines."""
    out: list[str | None] = [None]
    for m in _RUN_PIPELINE.finditer(text):
        p = m.group(1)
        if any(h in p for h in _HAND_OFFS) and p not in out:
            out.append(p)
    return out


def cases() -> Iterator[Case]:
    """Every case, in a fixed order."""
    for path in sorted((ROOT / "examples").glob("*.mlir")):
        rel = str(path.relative_to(ROOT))
        yield Case(rel, path.read_text(), rel)
    for path in sorted((ROOT / "test" / "lit").rglob("*.mlir")):
        if ".lit_out" in path.parts:
            continue
        rel = str(path.relative_to(ROOT))
        text = path.read_text()
        pipelines = _lit_pipelines(text)
        for i, chunk in enumerate(_SPLIT.split(text)):
            code = [
                ln for ln in chunk.splitlines() if ln.strip() and not ln.lstrip().startswith("//")
            ]
            if not code:  # comments only (RUN lines of a file without input)
                continue
            for p in pipelines:
                yield Case(f"{rel}#{i}@{p or 'default'}", chunk, rel, p)
    from gemm_opt.kernels.build_bundles import bundle_specs

    for i, spec in enumerate(bundle_specs()):
        yield Case(f"bundle/{spec.name}@{BUNDLE_TARGET}", spec=i)


def _lower(case: Case) -> str:
    """``sha256:<hex>`` of the case's TTGIR, or ``error: <diagnostic>``."""
    from gemm_opt.lowering.compile import TileCompileError, lower_tile_module

    try:
        if case.spec is None:
            named = _TARGET_OPTION.search(case.pipeline or "")
            low = lower_tile_module(
                case.text,
                named.group(1) if named else None,
                pipeline=case.pipeline,
                filename=case.filename,
            )
        else:
            from gemm_opt.kernels.build_bundles import bundle_specs, pipeline_of
            from gemm_opt.kernels.cache import module_for

            spec = bundle_specs()[case.spec]
            module = module_for(spec, BUNDLE_TARGET)
            with module.context:
                low = lower_tile_module(
                    module, BUNDLE_TARGET, pipeline=pipeline_of(spec, BUNDLE_TARGET)
                )
    except TileCompileError as e:
        return f"error: {str(e).splitlines()[0]}"
    _texts[case.key] = low.ttgir
    return "sha256:" + hashlib.sha256(low.ttgir.encode()).hexdigest()


#: Texts lowered in this process (a worker's, for ``--dump``).
_texts: dict[str, str] = {}


def _in_process_hand_off() -> None:
    """Run each hand-off in this (worker) process instead of a fork of its own."""
    from gemm_opt.lowering import triton_bridge as tb

    def inline(work):
        run = tb.Isolated(stderr="")
        try:
            run.result, run.ok = work(run.progress.append), True
        except Exception as e:  # as the forked child reports it
            run.exception = f"{type(e).__name__}: {e}"
        return run

    tb.run_isolated = inline


def lower_all(selected: list[Case], workers: int = 2, keep_texts: bool = False) -> dict:
    """``{key: result}`` of every case (see :func:`_lower`), lowered by ``workers``
    forked processes; with ``keep_texts`` also ``{key: ttgir}`` under ``"texts"``."""
    from gemm_opt.lowering import triton_bridge as tb

    tb.run_isolated(lambda report: None)  # Triton's Python modules, imported before forking
    children = []
    for w in range(workers):
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                os.close(read_fd)
                _in_process_hand_off()
                mine = {c.key: _lower(c) for c in selected[w::workers]}
                payload = {"results": mine, "texts": dict(_texts) if keep_texts else {}}
                with os.fdopen(write_fd, "wb") as out:
                    pickle.dump(payload, out)
            except BaseException as e:
                print(f"worker {w}: {type(e).__name__}: {e}", file=sys.stderr)
                code = 1
            finally:
                os._exit(code)
        os.close(write_fd)
        children.append((pid, read_fd))
    results: dict[str, str] = {}
    texts: dict[str, str] = {}
    for w, (pid, read_fd) in enumerate(children):
        with os.fdopen(read_fd, "rb") as inp:
            data = inp.read()
        _, status = os.waitpid(pid, 0)
        if status or not data:
            raise RuntimeError(f"golden worker {w} died (wait status {status})")
        payload = pickle.loads(data)
        results.update(payload["results"])
        texts.update(payload["texts"])
    ordered = {
        c.key: results[c.key]
        for c in selected
        if not results[c.key].startswith(f"error: error: {NO_TARGET}")
    }
    return {"results": ordered, "texts": texts}


def load_golden() -> dict[str, str]:
    return json.loads(GOLDEN.read_text())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--update", action="store_true", help="rewrite the golden file")
    parser.add_argument("--dump", type=Path, help="write each TTGIR text to this folder")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    selected = list(cases())
    got = lower_all(selected, args.workers, keep_texts=args.dump is not None)
    if args.dump is not None:
        args.dump.mkdir(parents=True, exist_ok=True)
        for key, text in got["texts"].items():
            (args.dump / (re.sub(r"[^A-Za-z0-9_.-]+", "_", key) + ".ttgir")).write_text(text)
        errors = {k: v for k, v in got["results"].items() if v.startswith("error:")}
        (args.dump / "errors.json").write_text(json.dumps(errors, indent=1, sort_keys=True))
    if args.update:
        GOLDEN.write_text(json.dumps(got["results"], indent=1) + "\n")
        print(f"wrote {GOLDEN.relative_to(ROOT)} ({len(got['results'])} cases)")
        return 0
    diff = compare(load_golden(), got["results"])
    print("\n".join(diff) or f"all {len(got['results'])} cases identical")
    return 1 if diff else 0


def compare(golden: dict[str, str], got: dict[str, str]) -> list[str]:
    """One line per case that differs, is new or is gone."""
    lines = []
    for key in sorted(set(golden) | set(got)):
        want, have = golden.get(key), got.get(key)
        if want != have:
            lines.append(f"{key}: golden {want}, now {have}")
    return lines


if __name__ == "__main__":
    sys.exit(main())
