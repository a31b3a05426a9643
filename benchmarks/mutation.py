"""Mutation testing of the rule code of core, dialect, passes, lowering,
model, runtime and the API.

A test suite that passes tells nothing about the rules it does not pin. This
runner changes one operator, constant or condition at a time in the code under
test (AST-based: ``+``/``-``, ``<``/``<=``, ``==``/``!=``, ``and``/``or``,
``any``/``all``, ``min``/``max``, an integer ``n`` to ``n + 1``, ``True`` to
``False``, an ``if``/``while`` condition negated, a ``not`` dropped), runs the
tests that cover that module with a per-mutant timeout, and reports the
mutants no test kills. By default a mutant meets only the pytest tests and
the lit files that execute its line (a coverage map made once per module),
pytest in children forked from a process that imported the heavy
third-party packages once (:class:`FastJudge`); ``--plain`` runs the whole
subset in fresh processes, lit first. Each module is
mutated only inside the functions that hold its rules (error-message
formatting is left out: a wrong word in a message is not a wrong answer) and
is judged by its own small pytest and lit subset (``-x``, slow tests left
out), so a survivor costs seconds. ``--list`` counts the mutants per module
(about 7,500 in all: an unsampled run of everything is days on two cores);
``--sample N`` runs every Nth mutant; ``--out DIR`` writes one report per
module; ``--reuse`` takes the killed mutants of an earlier report of the same
code (the syntax tree: comments do not count) and runs the rest, since the
tests only grow.

Why not mutmut or cosmic-ray: mutmut 3 runs the tests against a copy of the
sources in ``mutants/``, which the tests never import (``gemm_opt.passes`` is
mapped to ``passes/`` by the editable install) and which lit's ``gemm-opt``
never sees; a mutation tool has to change the files the installed package and
the command line actually load, one at a time, as this runner does.

The file under test is rewritten in place and restored after every mutant
(and on interrupt); bytecode writing is disabled so a stale ``.pyc`` can never
stand in for a mutant. Run from the repository root, with the test extra
installed::

    python benchmarks/mutation.py --list
    nice -n 19 python benchmarks/mutation.py --module lowering_tma_plan --out before/
    nice -n 19 python benchmarks/mutation.py --module lowering_tma_plan --reuse before/ --out after/

A survivor that no input can distinguish is marked ``equivalent`` in the
report when its line, or the comment block right above it, carries a comment
starting with ``# Equivalent mutant:`` that says why; the score is given with
and without those.

Not part of CI: one run is hundreds of test-suite runs.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, replace
from fnmatch import fnmatch
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EQUIVALENT_MARK = "# Equivalent mutant:"


EVERY = ("*",)
"""``Target.functions`` for a module whose every function holds a rule."""


@dataclass(frozen=True)
class Target:
    """One module under test: where to mutate and which tests judge it."""

    path: str
    functions: tuple[str, ...]
    """Qualified names (``f``, ``Class.method``) whose bodies are mutated;
    ``EVERY``: each function and method of the module except ``skip``."""
    pytest: tuple[str, ...]
    lit: tuple[str, ...]
    skip: tuple[str, ...] = ()
    """With ``EVERY``: the functions that only word messages."""
    constants: bool = False
    """Also mutate the module-level assignments (limits, target tables)."""


def unit(*names: str) -> tuple[str, ...]:
    return tuple(f"test/unit/{n}.py" for n in names)


def lit(folder: str, *names: str) -> tuple[str, ...]:
    return tuple(f"test/lit/{folder}/{n}.mlir" for n in names)


PASS_TESTS = unit("test_passes_model", "test_pass_semantics")
PASS_LIT = ("test/lit/passes",)
INTERPRETER = unit("test_interpreter", *("test_passes_model", "test_pass_semantics"))
#: Every test file that runs the model: its shared parts (values, the op
#: registry, control flow, the interpreter) are judged by all of them, as the
#: interpreter's tests alone left most of their mutants alive.
MODEL_TESTS = (
    *INTERPRETER,
    *unit("test_model_registry", "test_model_copy", "test_model_barriers"),
    *unit("test_model_barrier_protocol", "test_model_concurrency", "test_model_litmus"),
    *unit("test_model_warp_specialize", "test_memdesc_trans_model", "test_negative_coordinates"),
    *unit("test_async_mma_use_acc", "test_stream_k_fixup_model", "test_mutants_model"),
)
PREDICATE_LIT = lit(
    "lowering",
    "convert-predicates",
    "convert-tile-to-triton-gpu-predicates",
    "convert-tile-to-triton-gpu-predicates-invalid",
    "convert-tile-to-triton-gpu-predicates-warp",
    "convert-tile-to-triton-gpu-predicates-tma",
)
TMA_LIT = lit(
    "lowering",
    "convert-tile-to-triton-gpu-tma",
    "convert-tile-to-triton-gpu-tma-auto",
    "convert-tile-to-triton-gpu-tma-invalid",
    "convert-tile-to-triton-gpu-tma-remake",
    "convert-tile-to-triton-gpu-predicates-tma",
)
BARRIER_LIT = lit(
    "lowering",
    "convert-barrier-ops-invalid",
    "convert-barrier-ops-cuda-invalid",
    "convert-barrier-ops-gfx1250",
    "convert-barrier-ops-cuda",
)
CONVERT_LIT = lit(
    "lowering",
    "convert-tile-to-triton-gpu-invalid",
    "convert-tile-to-triton-gpu",
    "convert-tile-to-triton-gpu-cuda-invalid",
    "convert-tile-to-triton-gpu-cuda",
    "convert-tile-to-triton-gpu-async-mma-invalid",
    "convert-tile-to-triton-gpu-async-mma",
    "convert-tile-to-triton-gpu-memdesc-trans",
    "convert-tile-to-triton-gpu-store-layout",  # the layout a block store stores from
    "convert-tile-to-triton-gpu-broadcast-load",
    "convert-tile-to-triton-gpu-fp8",
    "convert-tile-to-triton-gpu-fp8-invalid",
    "convert-tile-to-triton-gpu-imprecise-acc",
    "convert-tile-to-triton-gpu-scaled-wmma",
    "convert-tile-to-triton-gpu-scaled-wmma-invalid",
)
WS_LIT = lit(
    "lowering",
    "convert-warp-specialize-invalid",
    "convert-warp-specialize-cuda-invalid",
    "convert-warp-specialize-gfx1250",
    "convert-warp-specialize-cuda",
)
API_TESTS = unit("test_api_limits", "test_api")

# Listed in the order of a long run: the lowering's predicate, TMA and barrier
# plans, the model's memory and barriers, the API's plan checks, the dialect
# verifiers and the core limits first; the older, well-pinned modules last.
TARGETS: dict[str, Target] = {
    # -- lowering --
    "lowering_warp_predicates": Target(
        "lowering/warp_predicates.py",
        EVERY,
        unit("test_mutants_lowering", "test_lowering"),
        PREDICATE_LIT,
    ),
    "lowering_tma_plan": Target(
        "lowering/tma_plan.py",
        EVERY,
        unit("test_mutants_lowering", "test_tma_plan_control_flow", "test_tma_copies"),
        TMA_LIT,
        skip=("TmaRefusal.__init__",),
    ),
    "lowering_barrier_plan": Target(
        "lowering/barrier_plan.py",
        EVERY,
        unit("test_mutants_lowering", "test_barrier_lowering"),
        BARRIER_LIT,
        skip=("BarrierRefusal.__init__", "_bytes_message"),
    ),
    # -- model --
    "model_barriers": Target(
        "python/gemm_opt/model/barriers.py",
        EVERY,
        unit(
            "test_model_barriers",
            "test_model_barrier_protocol",
            "test_model_warp_specialize",  # a phase another partition completes
            "test_language_warp_specialize",
        ),
        (),
        skip=("Barrier.missing",),
    ),
    "model_memory": Target(
        "python/gemm_opt/model/memory.py",
        EVERY,
        unit(
            "test_mutants_model",
            "test_interpreter",
            "test_model_copy",
            "test_memdesc_trans_model",
            "test_negative_coordinates",
            "test_model_concurrency",  # the interleaving points of block loads and stores
            "test_model_litmus",  # the race reports that need a hand-over at a block store
        ),
        (),
    ),
    # -- API and plan checks --
    "runtime_plan": Target(
        "python/gemm_opt/runtime/plan.py",
        (
            "_expect_ndim",
            "_check_cuda_layout",
            "_ld",
            "check_config",
            "as_int",
            "_positive_int",
            "_schedule",
            "resolve_auto",
            "_check_deterministic",
            "host_lens",
            "_group_lens",
            "validate_mode",
            "_check_out",
            "_check_group_m",
            "_shape_config",
            "_common",
            "_matmul",
            "_grouped_kind",
            "_check_device_lens",
            "_grouped",
            "_variable_k",
            "program_count",
            "work_programs",
        ),
        (
            *unit("test_mutants_runtime", "test_mutants_plan"),  # (CUDA checks on fake tensors)
            *API_TESTS,
            # schedule="auto", the kernels it may pick, determinism, the torch ops
            *unit("test_api_runtime", "test_auto_kernels", "test_autotune", "test_torch_ops"),
            *unit("test_epilogue_api"),  # a batch's epilogue, checked once for all batches
        ),
        (),
    ),
    "api": Target("python/gemm_opt/api.py", EVERY, unit("test_api", "test_api_runtime"), ()),
    "torch_ops": Target(
        "python/gemm_opt/torch_ops.py",
        EVERY,
        unit("test_torch_ops", "test_grouped_backward", "test_mutants_api_torch_ops"),
        (),
    ),
    # -- dialect verifiers --
    "dialect_barrier": Target(
        "dialect/barrier.py",
        EVERY,
        unit("test_mutants_dialect", "test_model_barrier_protocol"),
        lit("dialect", "tile-barrier-invalid", "tile-barrier"),
        constants=True,
    ),
    "dialect_sync": Target(
        "dialect/sync.py",
        EVERY,
        unit("test_mutants_dialect", "test_model_litmus"),
        lit("dialect", "tile-sync-invalid", "tile-sync-ops"),
        constants=True,
    ),
    "dialect_async_ops": Target(
        "dialect/async_ops.py",
        EVERY,
        unit("test_mutants_dialect", "test_async_mma_use_acc"),
        lit("dialect", "tile-async-mma-invalid", "tile-async-mma"),
        constants=True,
    ),
    "dialect_warp_specialize": Target(
        "dialect/warp_specialize.py",
        EVERY,
        unit("test_model_warp_specialize"),
        lit("dialect", "tile-warp-specialize-invalid", "tile-warp-specialize"),
        constants=True,
    ),
    "dialect_schedule": Target(
        "dialect/schedule.py",
        EVERY,
        unit("test_schedule_modes", "test_mutants_dialect_schedule"),
        lit("dialect", "tile-schedule-invalid", "tile-schedule-ops"),
        skip=("GemmScheduleOp._what",),
    ),
    "dialect_edit": Target(
        "dialect/edit.py", EVERY, unit("test_edit", "test_mutants_dialect_edit"), ()
    ),
    "dialect_tile": Target(
        "dialect/tile.py",
        EVERY,
        unit("test_verifier_contract", "test_exact_limits", "test_mutants_dialect_tile"),
        ("test/lit/dialect",),
        skip=("_target_names", "unknown_attribute"),
    ),
    # -- core limits --
    "core_targets": Target(
        "python/gemm_opt/core/targets.py",
        EVERY,
        unit(
            "test_mutants_core", "test_exact_limits", "test_pass_options", "test_lowering_structure"
        ),
        (),
        constants=True,
    ),
    "core_partition": Target(
        "python/gemm_opt/core/schedules/partition.py",
        EVERY,
        unit("test_schedules_math", "test_mutants_core_partition"),
        (),
        constants=True,
    ),
    "core_abi": Target(
        "python/gemm_opt/core/schedules/abi.py",
        EVERY,
        unit(
            "test_mutants_abi",
            "test_mutants_core",
            "test_schedule_modes",
            "test_exact_limits",
            "test_schedules_math",
        ),
        (),
        constants=True,
    ),
    "core_schedules": Target(
        "python/gemm_opt/core/schedules/__init__.py",
        EVERY,
        unit("test_schedule_modes", "test_schedules_math"),
        (),
    ),
    "core_layouts": Target(
        "python/gemm_opt/core/layouts.py",
        EVERY,
        unit(
            "test_mutants_layouts",
            "test_layout_edges",
            "test_layout_padding_rows",
            "test_tdm_layout",
        ),
        (),
    ),
    "core_fp8": Target(
        "python/gemm_opt/core/fp8.py",
        EVERY,
        unit("test_mutants_fp8", "test_fp8_formats", "test_quantize_fp8"),
        (),
    ),
    "core_scaling": Target(
        "python/gemm_opt/core/scaling.py",
        EVERY,
        unit("test_mutants_scaling", "test_fp8_scaling", "test_quantize_fp8"),
        (),
    ),
    "core_pipeline": Target(
        "python/gemm_opt/core/pipeline.py",
        EVERY,
        unit(
            "test_driver_logic",
            "test_pass_options",
            "test_pass_registry",
            "test_mutants_core_pipeline",
        ),
        (),
    ),
    "core_pass_base": Target(
        "python/gemm_opt/core/pass_base.py",
        EVERY,
        unit("test_mutants_pass_base", "test_pass_options", "test_pass_registry"),
        (),
    ),
    "core_diagnostics": Target(
        "python/gemm_opt/core/diagnostics.py",
        EVERY,
        unit(
            "test_mutants_diagnostics",
            "test_driver_logic",
            "test_no_mlir_text",
            "test_exact_limits",
        ),
        (),
    ),
    "core_modes": Target("python/gemm_opt/core/modes.py", EVERY, unit("test_schedule_modes"), ()),
    # -- more of the model --
    "model_sync": Target(
        "python/gemm_opt/model/sync.py",
        EVERY,
        unit(
            "test_mutants_model_sync_open",
            "test_model_litmus",
            "test_model_concurrency",
            "test_stream_k_fixup_model",
        ),
        (),
    ),
    "model_concurrency": Target(
        "python/gemm_opt/model/concurrency.py",
        EVERY,
        unit("test_mutants_concurrency", "test_model_concurrency", "test_model_litmus"),
        (),
        skip=(
            "_a",
            "deadlock_message",
            "Waiting.describe",
            "GlobalMemory._describe",
            "Threaded._deadlock",
        ),
    ),
    "model_warp_specialize": Target(
        "python/gemm_opt/model/warp_specialize.py",
        EVERY,
        unit(
            "test_mutants_warp_specialize",
            "test_model_warp_specialize",
            "test_language_warp_specialize",
        ),
        (),
        skip=("PartitionScheduler._deadlock",),
    ),
    "model_copy": Target(
        "python/gemm_opt/model/copy.py",
        EVERY,
        unit("test_mutants_model_copy_open", "test_model_copy", "test_tdm_layout"),
        (),
    ),
    "model_arith": Target(
        "python/gemm_opt/model/arith.py", EVERY, (*unit("test_mutants_arith"), *MODEL_TESTS), ()
    ),
    "model_core": Target(
        "python/gemm_opt/model/core.py",
        EVERY,
        # (test_mutants_arith: what result_elem says of a scalar's division by zero)
        (
            *unit("test_mutants_model_core", "test_mutants_interpreter", "test_mutants_arith"),
            *MODEL_TESTS,
        ),
        (),
    ),
    "model_registry": Target("python/gemm_opt/model/registry.py", EVERY, MODEL_TESTS, ()),
    "model_interpreter": Target(
        "python/gemm_opt/model/interpreter.py",
        EVERY,
        (*unit("test_mutants_interpreter", "test_pipeline_mma"), *MODEL_TESTS),
        (),
    ),
    "interpreter": Target(
        "python/gemm_opt/model/tdm.py",
        EVERY,
        (*unit("test_mutants_tdm", "test_mutants_model_tdm_tail"), *MODEL_TESTS),
        (),
    ),
    "model_state": Target(
        "python/gemm_opt/model/values.py", EVERY, (*unit("test_mutants_values"), *MODEL_TESTS), ()
    ),
    "model_races": Target(
        "python/gemm_opt/model/races.py", EVERY, (*unit("test_mutants_races"), *MODEL_TESTS), ()
    ),
    "model_control_flow": Target(
        "python/gemm_opt/model/control_flow.py",
        EVERY,
        (*unit("test_mutants_control_flow"), *MODEL_TESTS),
        (),
    ),
    "model_mma": Target(
        "python/gemm_opt/model/mma.py",
        EVERY,
        (*MODEL_TESTS, *unit("test_pipeline_mma", "test_mxfp8")),
        (),
    ),
    # -- more of the lowering --
    "lowering_context": Target(
        "lowering/context.py",
        EVERY,
        unit("test_lowering_structure", "test_lowering", "test_mutants_lowering_context"),
        CONVERT_LIT,
    ),
    "lowering_convert_copies": Target(
        "lowering/convert_copies.py",
        EVERY,
        unit("test_lowering", "test_mutants_convert"),
        CONVERT_LIT,
    ),
    "lowering_convert_memory": Target(
        "lowering/convert_memory.py",
        EVERY,
        unit("test_lowering", "test_mutants_convert"),
        CONVERT_LIT,
    ),
    "lowering_convert_mma": Target(
        "lowering/convert_mma.py",
        EVERY,
        unit("test_async_mma_use_acc", "test_mutants_mma_lowering"),
        CONVERT_LIT,
    ),
    "lowering_convert_control_flow": Target(
        "lowering/convert_control_flow.py",
        EVERY,
        unit("test_lowering", "test_mutants_lowering_control_flow"),
        # cuda:90's TMA copies are what an scf op threads a count through.
        (*CONVERT_LIT, *lit("lowering", "convert-tile-to-triton-gpu-tma")),
    ),
    "lowering_convert_tile_to_triton_gpu": Target(
        "lowering/convert_tile_to_triton_gpu.py",
        EVERY,
        # (test_tma_copies: the host descriptors' parameters)
        unit(
            "test_lowering", "test_mutants_lowering_convert_tile_to_triton_gpu", "test_tma_copies"
        ),
        CONVERT_LIT,
    ),
    "lowering_convert_barrier_ops": Target(
        "lowering/convert_barrier_ops.py", EVERY, unit("test_barrier_lowering"), BARRIER_LIT
    ),
    "lowering_convert_sync_ops": Target(
        "lowering/convert_sync_ops.py",
        EVERY,
        unit("test_stream_k_fixup_model"),
        lit("lowering", "convert-sync-ops"),
    ),
    "lowering_convert_warp_specialize": Target(
        "lowering/convert_warp_specialize.py",
        EVERY,
        unit("test_warp_specialize_lowering"),
        WS_LIT,
    ),
    "lowering_sm90_tma": Target(
        "lowering/sm90_tma.py",
        EVERY,
        unit("test_tma_copies", "test_epilogue_tma", "test_mutants_lowering_sm90_tma"),
        TMA_LIT,
    ),
    "lowering_sm90_mma": Target(
        "lowering/sm90_mma.py",
        EVERY,
        unit("test_tma_copies", "test_mutants_lowering_sm90_mma"),
        CONVERT_LIT,
    ),
    "lowering_target_amd": Target(
        "lowering/target_amd.py",
        EVERY,
        # (gfx1250's barriers and partitions, and the MFMA's operand layouts)
        unit(
            "test_portable_lowering",
            "test_mutants_lowering_target_amd",
            "test_barrier_lowering",
            "test_warp_specialize_lowering",
            "test_operand_layouts",
        ),
        (*CONVERT_LIT, *BARRIER_LIT, *WS_LIT, *PREDICATE_LIT),
    ),
    "lowering_target_nvidia": Target(
        "lowering/target_nvidia.py",
        EVERY,
        unit("test_portable_lowering", "test_mutants_nvidia_lowering"),
        (*CONVERT_LIT, *BARRIER_LIT, *TMA_LIT),
    ),
    "lowering_target_portable": Target(
        "lowering/target_portable.py",
        EVERY,
        unit("test_portable_lowering", "test_mutants_portable_copies"),
        CONVERT_LIT,
    ),
    "lowering_host_tensormaps": Target(
        "lowering/host_tensormaps.py",
        EVERY,
        unit("test_host_tensormaps", "test_mutants_host_tensormaps_open"),
        (),
    ),
    "lowering_access": Target(
        "lowering/access.py",
        EVERY,
        unit(
            "test_lowering",
            "test_mutants_convert",
            "test_mutants_lowering_access_open",
            "test_mutants_lowering_control_flow",  # linear_index, through non-splat constants
        ),
        CONVERT_LIT,
    ),
    "lowering_ir_match": Target(
        "lowering/ir_match.py",
        EVERY,
        unit("test_lowering", "test_mutants_lowering_ir_match"),
        PREDICATE_LIT,
    ),
    "lowering_layouts": Target(
        "lowering/layouts.py",
        EVERY,
        unit(
            "test_lowering",
            "test_mutants_lowering_layouts",
            "test_mutants_lowering_target_amd",
            "test_mutants_lowering_layouts_tail",
        ),
        CONVERT_LIT,
    ),
    "lowering_isa_analysis": Target(
        "lowering/isa_analysis.py",
        EVERY,
        unit("test_isa_analysis", "test_mutants_lowering_isa_analysis"),
        (),
    ),
    "lowering_pipelines": Target(
        "lowering/pipelines.py",
        EVERY,
        unit("test_driver_logic", "test_pipeline_mma", "test_mutants_pipelines"),
        (),
    ),
    "lowering_triton_bridge": Target(
        "lowering/triton_bridge.py",
        EVERY,
        unit("test_triton_bridge", "test_mutants_lowering_triton_bridge"),
        (),
    ),
    # The new file first: its fresh-process test fails (and -x ends the run) before an
    # in-process fork whose parent and child were swapped could exit with status 0.
    "lowering_isolation": Target(
        "lowering/isolation.py",
        EVERY,
        unit("test_mutants_lowering_isolation", "test_isolation"),
        (),
    ),
    "lowering_compile": Target(
        "lowering/compile.py",
        EVERY,
        unit(
            "test_lowering",
            "test_runtime_build",
            "test_mutants_lowering_compile",
            "test_mutants_lowering_compile_errors",
            "test_mutants_lowering",
            "test_tma_copies",
        ),
        (),
    ),
    # -- more of the runtime --
    "runtime_gemm": Target(
        "python/gemm_opt/runtime/gemm.py",
        EVERY,
        unit(
            "test_api_limits",
            "test_api_runtime",
            "test_mutants_api_runtime",
            "test_mutants_api_gemm",
        ),
        (),
    ),
    "runtime_launch": Target(
        "python/gemm_opt/runtime/launch.py",
        EVERY,
        unit("test_runtime_launch", "test_api_runtime", "test_mutants_runtime_launch"),
        (),
    ),
    "runtime_cuda": Target(
        "python/gemm_opt/runtime/cuda.py",
        EVERY,
        unit("test_mutants_cuda", "test_runtime_launch"),
        (),
    ),
    "runtime_bundle": Target(
        "python/gemm_opt/runtime/bundle.py",
        EVERY,
        unit(
            "test_mutants_bundle", "test_runtime_bundle", "test_bundle_reader", "test_bundle_fuzz"
        ),
        (),
    ),
    "runtime_build": Target(
        "python/gemm_opt/runtime/build.py",
        EVERY,
        unit("test_mutants_build", "test_runtime_build", "test_bench_triton_bundle"),
        (),
    ),
    "runtime_autotune": Target(
        "python/gemm_opt/runtime/autotune.py",
        EVERY,
        unit("test_mutants_autotune", "test_autotune", "test_tune_schedules"),
        (),
    ),
    # -- passes --
    "emit_warp_predicates": Target(
        "passes/emit_warp_predicates.py",
        EVERY,
        unit("test_lowering"),
        lit("passes", "tile-emit-warp-predicates", "tile-emit-warp-predicates-invalid"),
    ),
    "assign_tdm_warp_layout": Target(
        "passes/assign_tdm_warp_layout.py",
        EVERY,
        unit("test_lowering"),
        lit(
            "passes",
            "tile-assign-tdm-warp-layout",
            "tile-assign-tdm-warp-layout-invalid",
            "tile-assign-tdm-warp-layout-non-pow2",
        ),
    ),
    "annotate_warp_plan": Target(
        "passes/annotate_warp_plan.py",
        EVERY,
        (*unit("test_mutants_annotate_warp_plan"), *PASS_TESTS),
        lit("passes", "tile-annotate-warp-plan"),
    ),
    "pipeline_mma": Target(
        "passes/pipeline_mma.py",
        EVERY,
        unit("test_mutants_pipeline_mma", "test_pipeline_mma"),
        lit("passes", "tile-pipeline-mma"),
    ),
    "schedule_ir": Target(
        "passes/schedule_ir.py",
        EVERY,
        unit(
            "test_mutants_schedule_ir",
            "test_schedules_math",
            "test_stream_k_fixup_model",
            "test_swap_ab",
        ),
        lit("passes", "tile-lower-gemm-schedule"),
    ),
    "lower_gemm_schedule": Target(
        "passes/lower_gemm_schedule.py",
        EVERY,
        unit(
            "test_mutants_lower_gemm_schedule",
            "test_mutants_grouped_k",
            "test_stream_k_fixup_model",
            "test_schedule_properties",
            "test_epilogue",
        ),
        lit("passes", "tile-lower-gemm-schedule"),
    ),
    # -- the older, well-pinned modules --
    "warp_hint": Target(
        "python/gemm_opt/core/warp_hint.py",
        (
            "_is_pow2",
            "_check_block_shape",
            "_check_partition_fits",
            "warp_distribution",
            "_check_layout",
        ),
        unit("test_mutants_warp_hint", "test_warp_hint", "test_tdm_layout", "test_layout_edges"),
        ("test/lit/dialect",),
    ),
    "tdm_layout": Target(
        "python/gemm_opt/core/tdm_layout.py",
        (
            "_log2_exact",
            "TdmWarpLayout.start",
            "TdmWarpLayout.active",
            "tdm_warp_layout",
            "select_fused_member",
        ),
        (
            *unit("test_mutants_tdm_layout", "test_tdm_layout", "test_layout_edges"),
            *unit("test_model_copy"),
            *PASS_TESTS,
        ),
        (),
    ),
    "fusion_runs": Target(
        "passes/common.py",
        (
            "_const_int",
            "buffer_root",
            "may_alias",
            "is_pure",
            "fusable_with",
            "scan_runs",
            "module_runs",
        ),
        PASS_TESTS,
        PASS_LIT,
    ),
    "fuse_tdm_copies": Target(
        "passes/fuse_tdm_copies.py",
        (
            "is_fusion_candidate",
            "split_run",
            "_contains_tdm",
            "backward_paths",
            "_fused_count",
            "adjusted_wait",
            "build_fused",
            "FuseTdmCopiesPass.run",
        ),
        (*unit("test_mutants_fuse_tdm_copies"), *PASS_TESTS),
        PASS_LIT,
    ),
    "derive_warp_hints": Target(
        "passes/derive_warp_hints.py",
        (
            "contiguous_hints",
            "is_derive_candidate",
            "_group_fits",
            "DeriveWarpHintsPass.run",
            "DeriveWarpHintsPass._assign",
            "_set_hint",
        ),
        (*unit("test_mutants_derive_warp_hints"), *PASS_TESTS),
        PASS_LIT,
    ),
}


# ---- mutation points ----------------------------------------------------------------

BINOP_SWAP: dict[type, type] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.FloorDiv,
    ast.FloorDiv: ast.Mult,
    ast.Mod: ast.FloorDiv,
    ast.LShift: ast.RShift,
    ast.RShift: ast.LShift,
    ast.BitAnd: ast.BitOr,
    ast.BitOr: ast.BitAnd,
    ast.BitXor: ast.BitOr,
}
CMP_SWAP: dict[type, type] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
}
CALL_SWAP = {"any": "all", "all": "any", "min": "max", "max": "min"}


@dataclass(frozen=True)
class Point:
    """One mutation: the ``index``-th point of the module, at ``line``."""

    index: int
    line: int
    kind: str


def _scoped_functions(tree: ast.Module, target: Target) -> list[ast.AST]:
    """The function nodes ``target`` mutates (a nested function is mutated
    as part of the one around it)."""
    found: dict[str, ast.AST] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                found.setdefault(prefix + child.name, child)
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")

    visit(tree, "")
    names = tuple(found) if target.functions == EVERY else target.functions
    missing = [n for n in (*names, *target.skip) if n not in found]
    if missing:
        raise SystemExit(f"mutation: no function {', '.join(missing)} in {target.path}")
    return [found[n] for n in names if n not in target.skip]


def _skipped(node: ast.AST) -> bool:
    """Subtrees never mutated: messages, annotations, nested docstrings."""
    return isinstance(node, ast.JoinedStr | ast.arg) or (
        isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    )


def _walk(node: ast.AST) -> Iterator[tuple[ast.AST, ast.AST | None]]:
    """(node, parent) in a deterministic pre-order, skipping annotations."""
    stack: list[tuple[ast.AST, ast.AST | None]] = [(node, None)]
    while stack:
        cur, parent = stack.pop()
        if _skipped(cur):
            continue
        yield cur, parent
        children = []
        for name, value in ast.iter_fields(cur):
            if name in ("returns", "annotation", "decorator_list", "type_comment"):
                continue
            if isinstance(value, list):
                children += [v for v in value if isinstance(v, ast.AST)]
            elif isinstance(value, ast.AST):
                children.append(value)
        stack += [(c, cur) for c in reversed(children)]


def _mutations(node: ast.AST, parent: ast.AST | None) -> list[str]:
    """Names of the mutations that apply to ``node``."""
    out: list[str] = []
    if isinstance(node, ast.BinOp | ast.AugAssign) and type(node.op) in BINOP_SWAP:
        out.append(f"{type(node.op).__name__}->{BINOP_SWAP[type(node.op)].__name__}")
    elif isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            if type(op) in CMP_SWAP:
                out.append(f"cmp{i}:{type(op).__name__}->{CMP_SWAP[type(op)].__name__}")
    elif isinstance(node, ast.BoolOp):
        out.append("and->or" if isinstance(node.op, ast.And) else "or->and")
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        out.append("drop-not")
    elif isinstance(node, ast.Constant) and type(node.value) is bool:
        out.append(f"{node.value}->{not node.value}")
    elif isinstance(node, ast.Constant) and type(node.value) is int:
        out.append(f"{node.value}->{node.value + 1}")
    elif isinstance(node, ast.Call):
        name = node.func.attr if isinstance(node.func, ast.Attribute) else None
        name = node.func.id if isinstance(node.func, ast.Name) else name
        if name in CALL_SWAP:
            out.append(f"{name}->{CALL_SWAP[name]}")
    if isinstance(node, ast.If | ast.While | ast.IfExp) or (
        isinstance(node, ast.comprehension) and node.ifs
    ):
        out.append("negate-condition")
    return out


def points(tree: ast.Module, target: Target) -> list[tuple[ast.AST, ast.AST | None, str]]:
    found = []
    for fn in _scoped_functions(tree, target):
        body = fn.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # the docstring
        for stmt in body:
            for node, parent in _walk(stmt):
                found += [(node, parent, m) for m in _mutations(node, parent)]
    if target.constants:
        for stmt in tree.body:
            if isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None:
                for node, parent in _walk(stmt.value):
                    parent = stmt if parent is None else parent
                    found += [(node, parent, m) for m in _mutations(node, parent)]
    return found


def code_hash(source: str) -> str:
    """Hash of the module's syntax tree: comments (an ``# Equivalent mutant:``
    note) and blank lines leave it, and so the mutants' indices, unchanged."""
    return hashlib.sha256(ast.dump(ast.parse(source)).encode()).hexdigest()


def _negate(expr: ast.expr) -> ast.expr:
    return ast.UnaryOp(op=ast.Not(), operand=expr)


def _replace_child(parent: ast.AST, old: ast.AST, new: ast.AST) -> None:
    for name, value in ast.iter_fields(parent):
        if value is old:
            setattr(parent, name, new)
            return
        if isinstance(value, list):
            for i, v in enumerate(value):
                if v is old:
                    value[i] = new
                    return
    raise AssertionError("child not found in its parent")


def apply(node: ast.AST, parent: ast.AST | None, kind: str) -> None:
    """Mutate ``node`` in place."""
    if kind == "negate-condition":
        if isinstance(node, ast.comprehension):
            node.ifs = [_negate(ast.BoolOp(op=ast.And(), values=node.ifs))]
        else:
            node.test = _negate(node.test)  # type: ignore[attr-defined]
    elif "->" in kind and isinstance(node, ast.BinOp | ast.AugAssign):
        node.op = BINOP_SWAP[type(node.op)]()
    elif kind.startswith("cmp") and isinstance(node, ast.Compare):
        i = int(kind[3 : kind.index(":")])
        node.ops[i] = CMP_SWAP[type(node.ops[i])]()
    elif isinstance(node, ast.BoolOp):
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
    elif kind == "drop-not" and isinstance(node, ast.UnaryOp):
        assert parent is not None
        _replace_child(parent, node, node.operand)
    elif isinstance(node, ast.Constant):
        node.value = (not node.value) if type(node.value) is bool else node.value + 1
    elif isinstance(node, ast.Call):
        if isinstance(node.func, ast.Attribute):
            node.func.attr = CALL_SWAP[node.func.attr]
        else:
            node.func.id = CALL_SWAP[node.func.id]  # type: ignore[attr-defined]
    else:
        raise AssertionError(f"cannot apply {kind} to {ast.dump(node)[:80]}")


def mutant_source(source: str, target: Target, index: int) -> tuple[str, Point]:
    tree = ast.parse(source)
    node, parent, kind = points(tree, target)[index]
    line = getattr(node, "lineno", getattr(parent, "lineno", 0))
    apply(node, parent, kind)
    return ast.unparse(ast.fix_missing_locations(tree)), Point(index, line, kind)


# ---- running ---------------------------------------------------------------------------


@dataclass
class Result:
    point: Point
    status: str  # killed | survived | timeout
    by: str = ""
    seconds: float = 0.0
    snippet: str = ""
    equivalent: str = ""
    test: str = ""
    """The pytest node id that failed (a kill by pytest in the fast mode)."""


@dataclass
class ModuleReport:
    name: str
    path: str
    sha256: str
    baseline_s: float
    results: list[Result] = field(default_factory=list)
    wall_s: float = 0.0
    judged_by: list[str] = field(default_factory=list)
    judge: str = "plain"
    """``fast`` (the tests that execute the line, in forks) or ``plain``."""

    def count(self, status: str) -> int:
        return sum(r.status == status for r in self.results)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONHASHSEED"] = "0"
    return env


PYTEST_FLAGS = ("-x", "-q", "-p", "no:cacheprovider", "-m", "not slow")


def _commands(target: Target) -> list[tuple[str, list[str]]]:
    py = sys.executable
    cmds = []
    if target.lit:
        cmds.append(("lit", _lit_command(target)))
    tests = _pytest_files(target)
    if tests:
        cmds.append(("pytest", [py, "-m", "pytest", *PYTEST_FLAGS, *tests]))
    return cmds


def _lit_command(target: Target, tests: list[str] | None = None) -> list[str]:
    lit_main = "import sys, lit.main; sys.exit(lit.main.main())"
    return [sys.executable, "-c", lit_main, "-q", "--max-failures=1", *(tests or target.lit)]


#: lit runs with a clean environment; this passes coverage's start-up variable
#: through, so the ``gemm-opt`` processes of a lit test record what they execute.
LIT_WITH_COVERAGE = """
import os, sys, lit.main, lit.TestingConfig as T
defaults = T.TestingConfig.fromdefaults
def fromdefaults(*args, **kwargs):
    config = defaults(*args, **kwargs)
    config.environment["COVERAGE_PROCESS_START"] = os.environ["COVERAGE_PROCESS_START"]
    return config
T.TestingConfig.fromdefaults = staticmethod(fromdefaults)
sys.exit(lit.main.main())
"""


def _lit_files(target: Target) -> list[str]:
    """The lit test files of ``target`` (its folders expanded)."""
    out: list[str] = []
    for entry in target.lit:
        path = ROOT / entry
        if path.is_dir():
            out += sorted(
                str(f.relative_to(ROOT))
                for f in path.rglob("*")
                if f.suffix in (".mlir", ".py")
                and "Inputs" not in f.parts
                and f.name != "lit.cfg.py"
                and ".lit_out" not in f.parts
            )
        else:
            out.append(entry)
    return out


def _lit_lines(files: list[str], source: Path, timeout: float) -> tuple[dict, dict] | str:
    """Run each lit file alone under subprocess coverage: (line of ``source``
    -> the lit files whose ``gemm-opt`` runs execute it, file -> seconds), or
    the first file that fails unmutated."""
    import coverage

    lines: dict[int, list[str]] = {}
    seconds: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="mutation-lit-") as tmp:
        for i, f in enumerate(files):
            folder = Path(tmp) / str(i)
            folder.mkdir()
            config = folder / "coverage.cfg"
            config.write_text(_coverage_config(folder / "cov", source))
            env = {**_env(), "COVERAGE_PROCESS_START": str(config)}
            cmd = [sys.executable, "-c", LIT_WITH_COVERAGE, "-q", f]
            t0 = time.monotonic()
            proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, timeout=timeout)
            seconds[f] = time.monotonic() - t0
            if proc.returncode != 0:
                return f
            cov = coverage.Coverage(data_file=str(folder / "cov"), config_file=False)
            cov.combine([str(folder)], keep=False)
            data = cov.get_data()
            for name in data.measured_files():
                if Path(name).resolve() == source.resolve():
                    for line in data.lines(name) or ():
                        lines.setdefault(line, []).append(f)
    return lines, seconds


def _coverage_config(data: Path, source: Path) -> str:
    """coverage.py settings that measure ``source`` only, in this process and
    in every process it forks or starts (``gemm-opt`` runs its pipeline in a
    fork and leaves it by ``os._exit``), each writing its own data file."""
    return (
        f"[run]\ndata_file = {data}\nparallel = True\npatch = _exit, fork\n"
        f"include =\n    {source}\n    {_installed_path(source)}\n"
    )


def _installed_path(source: Path) -> Path:
    """The link to ``source`` in the editable install (what imports load)."""
    for link in ROOT.glob(f"build/__editable__*/gemm_opt/**/{source.name}"):
        if link.resolve() == source.resolve():
            return link
    return source


def _pytest_files(target: Target) -> list[str]:
    return [t for t in target.pytest if (ROOT / t).exists()]


def _run_tests(target: Target, timeout: float) -> tuple[str, str]:
    """("passed" | "failed" | "timeout", which command decided)."""
    for name, cmd in _commands(target):
        status = _run_command(cmd, timeout)
        if status != "passed":
            return status, name
    return "passed", ""


def _run_command(cmd: list[str], timeout: float) -> str:
    try:
        proc = subprocess.run(
            cmd, cwd=ROOT, env=_env(), capture_output=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return "timeout"
    return "passed" if proc.returncode == 0 else "failed"


# ---- the fast mode: a fork server and the tests that execute the mutated line ----------

PRELOAD = (
    "numpy",
    "ml_dtypes",
    "pytest",
    "hypothesis",
    "torch",
    "triton",
    "torch_mlir.ir",
    "torch_mlir.passmanager",
    "torch_mlir.dialects.arith",
    "torch_mlir.dialects.ext",
    "torch_mlir.dialects.func",
    "torch_mlir.dialects.scf",
    "torch_mlir.dialects.transform",
    "torch_mlir.dialects.transform.structured",
)
"""Third-party packages the runner imports once before forking a child per
run. Nothing of ``gemm_opt`` is among them: each child imports the package
from the (mutated) sources, and its caches start empty."""

PYTEST_USAGE = (4, 5)  # usage error, no tests collected: not a verdict on the mutant


def preload() -> None:
    import importlib

    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    if any(m == "gemm_opt" or m.startswith("gemm_opt.") for m in sys.modules):
        raise SystemExit("mutation: a preloaded package imported gemm_opt; children would not")


@dataclass
class ChildRun:
    status: str  # passed | failed | timeout | usage
    failed: str = ""
    durations: dict[str, float] = field(default_factory=dict)
    lines: dict[int, list[str]] = field(default_factory=dict)
    """With coverage: line of the module under test -> the contexts (test
    node ids, '' for import and collection) that executed it."""


def _child_pytest(args: list[str], result: Path, cover: Path | None) -> int:
    """In the forked child: run pytest in-process, write what happened to
    ``result``. ``cover``: the file whose lines are mapped to tests."""
    import pytest

    failed: list[str] = []
    durations: dict[str, float] = {}
    cov = None
    if cover is not None:
        import coverage

        folder = Path(tempfile.mkdtemp(prefix="mutation-cov-"))
        config = folder / "coverage.cfg"
        config.write_text(_coverage_config(folder / "cov", cover))
        cov = coverage.Coverage(config_file=str(config))

    class Recorder:
        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_protocol(self, item, nextitem):
            if cov is not None:
                cov.switch_context(item.nodeid)
            yield
            if cov is not None:
                cov.switch_context("")

        def pytest_runtest_logreport(self, report):
            durations[report.nodeid] = durations.get(report.nodeid, 0.0) + report.duration
            if report.failed and not failed:
                failed.append(report.nodeid)

    try:  # a loaded machine must not turn a slow example into a kill
        from hypothesis import settings

        settings.register_profile("mutation", deadline=None)
        settings.load_profile("mutation")
    except ImportError:
        pass
    if cov is not None:
        cov.start()
    code = int(pytest.main(args, plugins=[Recorder()]))
    lines: dict[int, list[str]] = {}
    if cov is not None:
        cov.stop()
        cov.save()
        cov.combine([str(folder)])  # with the data of the forks the tests made (they inherit
        data = cov.get_data()  # the context of the test that forked them)
        for name in data.measured_files():
            if Path(name).resolve() == cover.resolve():
                lines = {n: sorted(c) for n, c in data.contexts_by_lineno(name).items()}
        shutil.rmtree(folder, ignore_errors=True)
    result.write_text(
        json.dumps(
            {
                "exit": code,
                "failed": failed[0] if failed else "",
                "durations": durations,
                "lines": lines,
            }
        )
    )
    return code


def fork_pytest(args: list[str], timeout: float, cover: Path | None = None) -> ChildRun:
    """Run pytest with ``args`` in a forked child of this (preloaded) process."""
    fd, name = tempfile.mkstemp(prefix="mutation-", suffix=".json")
    os.close(fd)
    result = Path(name)
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 3
        try:
            os.setpgid(0, 0)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            sys.dont_write_bytecode = True
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.dup2(null, 2)
            os.chdir(ROOT)
            code = _child_pytest(args, result, cover)
        except BaseException:
            code = 3
        finally:
            os._exit(code)
    deadline = time.monotonic() + timeout
    try:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:
                _kill_group(pid)
                return ChildRun("timeout")
            time.sleep(0.02)
        code = os.waitstatus_to_exitcode(status)
        data = json.loads(result.read_text()) if result.stat().st_size else {}
    except BaseException:
        _kill_group(pid)
        raise
    finally:
        result.unlink(missing_ok=True)
    if code in PYTEST_USAGE:
        return ChildRun("usage")
    if not data:  # the run ended before pytest's verdict (a mutant that swaps a fork's roles
        # leaves the test process through the child's ``os._exit(0)``): not a pass
        return ChildRun("failed", "(the test process exited before pytest's verdict)")
    lines = {int(k): v for k, v in data.get("lines", {}).items()}
    return ChildRun(
        "passed" if code == 0 else "failed",
        data.get("failed", ""),
        data.get("durations", {}),
        lines,
    )


def _kill_group(pid: int) -> None:
    for kill in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            kill()
        except (ProcessLookupError, PermissionError):
            pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


@dataclass
class Selector:
    """The tests that execute each line of the module under test, from one
    unmutated run under coverage with a context per test."""

    lines: dict[int, list[str]]
    durations: dict[str, float]

    def tests(self, first: int, last: int) -> list[str] | None:
        """The node ids that executed a line in ``first..last``, fastest
        first; None when code of those lines ran outside any test (at import
        or collection: only the whole files can judge it)."""
        found: set[str] = set()
        for line in range(first, last + 1):
            for ctx in self.lines.get(line, ()):
                if not ctx:
                    return None
                found.add(ctx)
        return sorted(found, key=lambda t: (self.durations.get(t, 0.0), t))


def _statement_span(tree: ast.Module, node: ast.AST, parent: ast.AST | None) -> tuple[int, int]:
    """Lines from the start of the innermost statement holding ``node`` to the
    end of ``node``: a test that executes ``node`` executes one of them."""
    target = node if hasattr(node, "lineno") else parent
    first = getattr(target, "lineno", 0)
    last = getattr(target, "end_lineno", first) or first
    start = 0  # the innermost statement starts last
    for stmt in ast.walk(tree):
        if isinstance(stmt, ast.stmt) and stmt.lineno <= first <= (stmt.end_lineno or 0):
            if stmt.lineno > start and any(n is target for n in ast.walk(stmt)):
                start = stmt.lineno
    return (start or first), last


def _equivalence_note(lines: list[str], line: int) -> str:
    """The ``# Equivalent mutant:`` comment on ``line`` or in the comment
    block right above it, joined into one line ('' if none)."""
    if EQUIVALENT_MARK in lines[line - 1]:
        return lines[line - 1].split(EQUIVALENT_MARK, 1)[1].strip()
    block: list[str] = []
    i = line - 2
    while i >= 0 and lines[i].strip().startswith("#"):
        block.insert(0, lines[i].strip().lstrip("#").strip())
        i -= 1
    text = " ".join(block)
    marker = EQUIVALENT_MARK.lstrip("#").strip()
    return text.split(marker, 1)[1].strip() if marker in text else ""


def _previous(path: Path | None, name: str, sha: str) -> dict[int, Result] | None:
    """Results of an earlier run of the same code (same mutants), by index:
    ``path`` is a JSON report or a folder of per-module ones."""
    if path is not None and path.is_dir():
        path = path / f"{name}.json"
    if path is None or not path.exists():
        return None
    for mod in json.loads(path.read_text()):
        if mod["name"] == name and mod["sha256"] == sha:
            return {
                r["point"]["index"]: Result(**{**r, "point": Point(**r["point"])})
                for r in mod["results"]
            }
    return None


class PlainJudge:
    """Every mutant against the whole pytest and lit subset, each run a fresh
    process (the slow reference)."""

    def __init__(self, target: Target, per_mutant: float | None) -> None:
        self.target = target
        self.per_mutant = per_mutant
        self.timeout = 0.0

    def baseline(self, tree: ast.Module, cover: Path) -> str:
        status, by = _run_tests(self.target, timeout=1800)
        return by if status != "passed" else ""

    def set_timeout(self, baseline: float) -> None:
        self.timeout = self.per_mutant or max(30.0, 3 * baseline)

    def __call__(self, node: ast.AST, parent: ast.AST | None) -> tuple[str, str, str]:
        status, by = _run_tests(self.target, self.timeout)
        return status, by, ""


class FastJudge:
    """A mutant against the pytest tests that execute its line (fastest first,
    ``-x``) in a child forked from this preloaded process, then the lit files
    whose ``gemm-opt`` runs execute it (mapped by subprocess coverage, one lit
    file at a time). A kill is the failure of a real test of the subset; a
    mutant that no test executes survives."""

    def __init__(self, target: Target, per_mutant: float | None, confirm: bool = True) -> None:
        self.target = target
        self.per_mutant = per_mutant
        self.confirm = confirm
        self.files = _pytest_files(target)
        self.selector = Selector({}, {})
        self.tree: ast.Module | None = None
        self.pytest_s = 0.0
        self.lit_lines: dict[int, list[str]] = {}
        self.lit_seconds: dict[str, float] = {}

    def baseline(self, tree: ast.Module, cover: Path) -> str:
        self.tree = tree
        if self.files:
            t0 = time.monotonic()
            run = fork_pytest([*PYTEST_FLAGS, *self.files], 1800, cover=cover)
            self.pytest_s = time.monotonic() - t0
            if run.status != "passed":
                return f"pytest ({run.status} {run.failed})"
            self.selector = Selector(run.lines, run.durations)
        if self.target.lit:
            found = _lit_lines(_lit_files(self.target), cover, 1800)
            if isinstance(found, str):
                return f"lit ({found})"
            self.lit_lines, self.lit_seconds = found
        return ""

    def set_timeout(self, baseline: float) -> None:
        pass

    def _timeout(self, expected: float) -> float:
        return self.per_mutant or max(30.0, 3 * expected)

    def __call__(self, node: ast.AST, parent: ast.AST | None) -> tuple[str, str, str]:
        assert self.tree is not None
        tests: list[str] | None = None
        if self.files:
            tests = self.selector.tests(*_statement_span(self.tree, node, parent))
            args = self.files if tests is None else tests
            if args:
                startup = 2.0
                expected = (
                    self.pytest_s
                    if tests is None
                    else startup + sum(self.selector.durations.get(t, 0.0) for t in tests)
                )
                run = fork_pytest([*PYTEST_FLAGS, *args], self._timeout(expected))
                if run.status == "usage" and tests is not None:  # ids made from mutated values
                    run = fork_pytest([*PYTEST_FLAGS, *self.files], self._timeout(self.pytest_s))
                if run.status == "usage":
                    raise SystemExit(f"mutation: pytest refused {args[:3]}...")
                if run.status != "passed":
                    return run.status, "pytest", run.failed
        if self.target.lit:
            first, last = _statement_span(self.tree, node, parent)
            files = sorted({f for n in range(first, last + 1) for f in self.lit_lines.get(n, ())})
            if files:
                expected = sum(self.lit_seconds[f] for f in files)
                status = _run_command(_lit_command(self.target, files), self._timeout(expected))
                if status != "passed":
                    return status, "lit", files[0] if len(files) == 1 else ""
        if self.files and self.confirm and tests is not None:
            # A survivor of the selection meets the whole subset: code run by a
            # thread the tracer does not see, or by a long-lived worker process
            # (forked under an earlier test's context), is missing from the map.
            run = fork_pytest([*PYTEST_FLAGS, *self.files], self._timeout(self.pytest_s))
            if run.status != "passed":
                return run.status, "pytest", run.failed
        return "passed", "", ""


def _drop_bytecode(path: Path) -> None:
    """Remove the cached bytecode of ``path`` (beside it and beside its link
    in the editable install): with bytecode writing off, every import of the
    module then compiles the source on disk, the mutant's."""
    stale = list((path.parent / "__pycache__").glob(f"{path.stem}.*.pyc"))
    for pyc in ROOT.glob(f"build/__editable__*/**/__pycache__/{path.stem}.*.pyc"):
        if (pyc.parent.parent / f"{path.stem}.py").resolve() == path.resolve():
            stale.append(pyc)
    for pyc in stale:
        pyc.unlink()


def run_module(
    name: str,
    target: Target,
    limit: int | None,
    sample: int,
    previous: Path | None,
    on_result,
    per_mutant: float | None = None,
    fast: bool = True,
    confirm: bool = True,
    start_at: int = 0,
) -> ModuleReport:
    """Mutate ``target`` one point at a time. With ``previous`` (a JSON report
    of the same source), its killed mutants are taken as they are and only its
    survivors and the mutants it lacks run: the tests only grow, so a mutant
    killed then is killed now (this also resumes an interrupted run)."""
    path = ROOT / target.path
    original = path.read_text()
    sha = code_hash(original)
    lines = original.splitlines()
    earlier = _previous(previous, name, sha)
    start = time.monotonic()
    report = ModuleReport(
        name,
        target.path,
        sha,
        0.0,
        judged_by=[*target.lit, *target.pytest],
        judge="fast" if fast else "plain",
    )
    tree = ast.parse(original)
    found = points(tree, target)
    if not found:
        print(f"{name}: no mutation points", flush=True)
        return report
    _drop_bytecode(path)
    judge = FastJudge(target, per_mutant, confirm) if fast else PlainJudge(target, per_mutant)
    failing = judge.baseline(tree, path)
    baseline = time.monotonic() - start
    if failing:
        raise SystemExit(f"mutation: the tests of {name} fail without a mutant ({failing})")
    judge.set_timeout(baseline)
    report.baseline_s = round(baseline, 1)
    count = len(found)
    stop = count if limit is None else min(limit, count)
    todo = [i for i in range(start_at, stop) if i % sample == 0]
    print(f"{name}: {count} mutants, {len(todo)} to run, baseline {baseline:.1f}s", flush=True)
    try:
        for i in todo:
            node, parent, _ = found[i]
            if earlier is not None and i in earlier and earlier[i].status != "survived":
                line = getattr(node, "lineno", getattr(parent, "lineno", 0))  # comments move it
                snippet = lines[line - 1].strip() if line else ""
                point = replace(earlier[i].point, line=line)
                report.results.append(replace(earlier[i], point=point, snippet=snippet))
                continue
            source, point = mutant_source(original, target, i)
            path.write_text(source)
            t0 = time.monotonic()
            status, by, test = judge(node, parent)
            path.write_text(original)
            outcome = {"failed": "killed", "passed": "survived", "timeout": "timeout"}[status]
            snippet = lines[point.line - 1].strip() if point.line else ""
            result = Result(point, outcome, by, round(time.monotonic() - t0, 1), snippet, test=test)
            if outcome == "survived":
                result.equivalent = _equivalence_note(lines, point.line)
            report.results.append(result)
            where = f"{target.path}:{point.line}"
            print(f"  [{i + 1}/{count}] {outcome:8} {where} {point.kind} {test}", flush=True)
            report.wall_s = round(time.monotonic() - start, 1)
            on_result(report)
    finally:
        path.write_text(original)
    report.wall_s = round(time.monotonic() - start, 1)
    return report


def markdown(reports: list[ModuleReport]) -> str:
    out = [
        "# Mutation report",
        "",
        "| module | mutants | killed | timeout | survived | equivalent | score "
        "| score w/o equivalent | wall |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    tot = {"n": 0, "k": 0, "t": 0, "s": 0, "e": 0}
    for r in reports:
        n, k, t, s = len(r.results), r.count("killed"), r.count("timeout"), r.count("survived")
        e = sum(x.status == "survived" and bool(x.equivalent) for x in r.results)
        for key, v in zip("nktse", (n, k, t, s, e), strict=True):
            tot[key] += v
        out.append(
            f"| {r.path} | {n} | {k} | {t} | {s} | {e} | {_pct(k + t, n)} "
            f"| {_pct(k + t, n - e)} | {_minutes(r.wall_s)} |"
        )
    caught = tot["k"] + tot["t"]
    out.append(
        f"| **all** | {tot['n']} | {tot['k']} | {tot['t']} | {tot['s']} | {tot['e']} | "
        f"{_pct(caught, tot['n'])} | {_pct(caught, tot['n'] - tot['e'])} "
        f"| {_minutes(sum(r.wall_s for r in reports))} |"
    )
    out += ["", "## Judged by", ""]
    for r in reports:
        tests = ", ".join(f"`{x}`" for x in r.judged_by)
        out.append(f"- `{r.path}` (unmutated run {r.baseline_s}s): {tests}")
    out += ["", "## Survivors", ""]
    for r in reports:
        for x in r.results:
            if x.status == "survived":
                why = f" — equivalent: {x.equivalent}" if x.equivalent else ""
                out.append(f"- `{r.path}:{x.point.line}` `{x.point.kind}` in `{x.snippet}`{why}")
    return "\n".join(out) + "\n"


def _load_report(folder: Path, name: str) -> dict | None:
    path = folder / f"{name}.json"
    return json.loads(path.read_text())[0] if path.exists() else None


def summary(before: Path, after: Path) -> str:
    """The per-module before/after table of two ``--out`` folders (a module
    missing from ``before`` is "not run"; one missing from ``after`` had no
    survivors to run again, or was not run again)."""
    out = [
        "| module | mutants | before: killed | before | after: killed | equivalent "
        "| after | after w/o equivalent | wall before | wall after | judge |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    tot = [0, 0, 0, 0, 0.0, 0.0]  # mutants, killed before, after, equivalent, walls
    for name, target in TARGETS.items():
        first = _load_report(before, name)
        if first is None:
            n = len(points(ast.parse((ROOT / target.path).read_text()), target))
            out.append(f"| {target.path} | {n} | not run | | | | | | | | |")
            continue
        last = _load_report(after, name) or first
        res0, res1 = first["results"], last["results"]
        k0 = sum(r["status"] != "survived" for r in res0)
        k1 = sum(r["status"] != "survived" for r in res1)
        e1 = sum(r["status"] == "survived" and bool(r["equivalent"]) for r in res1)
        wall1 = _minutes(last["wall_s"]) if last is not first else "-"
        for i, v in enumerate((len(res1), k0, k1, e1, first["wall_s"])):
            tot[i] += v
        tot[5] += last["wall_s"] if last is not first else 0.0
        out.append(
            f"| {target.path} | {len(res1)} | {k0} | {_pct(k0, len(res0))} | {k1} | {e1} "
            f"| {_pct(k1, len(res1))} | {_pct(k1, len(res1) - e1)} "
            f"| {_minutes(first['wall_s'])} | {wall1} "
            f"| {_judges(first, last)} |"
        )
    n, k0, k1, e1 = (int(x) for x in tot[:4])
    out.append(
        f"| **all run** | {n} | {k0} | {_pct(k0, n)} | {k1} | {e1} | {_pct(k1, n)} "
        f"| {_pct(k1, n - e1)} | {_minutes(tot[4])} | {_minutes(tot[5])} | |"
    )
    return "\n".join(out) + "\n"


def _judges(first: dict, last: dict) -> str:
    judges = [first.get("judge", "plain")] + (
        [last.get("judge", "plain")] if last is not first else []
    )
    return ", ".join(judges)


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min"


def _pct(a: int, b: int) -> str:
    return f"{100 * a / b:.1f}%" if b else "-"


def _terminate(signum, frame):  # restore the file under test on kill, too
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--module", action="append", choices=list(TARGETS), help="repeatable")
    parser.add_argument("--limit", type=int, help="first N mutants per module (a smoke run)")
    parser.add_argument("--sample", type=int, default=1, help="every Nth mutant only")
    parser.add_argument(
        "--start",
        type=int,
        default=0,
        metavar="N",
        help="skip the mutants before index N (the rest of a stopped run of changed code, "
        "which --reuse cannot resume)",
    )
    parser.add_argument(
        "--reuse",
        type=Path,
        metavar="JSON|DIR",
        help="an earlier report (or a folder of per-module ones): keep its killed "
        "mutants of unchanged modules, run the rest",
    )
    parser.add_argument(
        "--timeout", type=float, help="seconds per mutant (default: 3x the unmutated run, >= 30)"
    )
    parser.add_argument(
        "--without",
        action="append",
        default=[],
        metavar="GLOB",
        help="leave the pytest files matching GLOB out of the judge (a 'before' run "
        "of tests written since)",
    )
    parser.add_argument(
        "--plain",
        action="store_true",
        help="every mutant against the whole subset in fresh processes (the slow reference)",
    )
    parser.add_argument(
        "--trust-coverage",
        action="store_true",
        help="a survivor of the tests that execute its line is not run against the whole subset",
    )
    parser.add_argument("--list", action="store_true", help="count the mutants and exit")
    parser.add_argument(
        "--summary",
        nargs=2,
        type=Path,
        metavar=("BEFORE", "AFTER"),
        help="print the before/after table of two --out folders and exit",
    )
    parser.add_argument("--report", type=Path, default=Path("mutation-report.md"))
    parser.add_argument(
        "--out", type=Path, metavar="DIR", help="also one report per module: DIR/<module>.md, .json"
    )
    args = parser.parse_args(argv)
    if args.start < 0:
        parser.error(f"--start must be non-negative, got {args.start}")
    names = args.module or list(TARGETS)
    if args.summary:
        print(summary(*args.summary), end="")
        return 0
    if args.list:
        total = 0
        for n in names:
            t = TARGETS[n]
            count = len(points(ast.parse((ROOT / t.path).read_text()), t))
            total += count
            print(f"{n:40} {count:5}  {t.path}")
        print(f"{'all':40} {total:5}  in {len(names)} modules")
        return 0
    if os.environ.get("PYTHONHASHSEED") != "0" or not sys.dont_write_bytecode:
        os.execve(sys.executable, [sys.executable, *sys.argv], _env())  # the children inherit it
    signal.signal(signal.SIGTERM, _terminate)
    if not args.plain:
        preload()
    reports: list[ModuleReport] = []

    def write(report: Path, done: list[ModuleReport]) -> None:
        report.write_text(markdown(done))
        report.with_suffix(".json").write_text(
            json.dumps([asdict(r) for r in done], indent=1) + "\n"
        )

    def save(current: ModuleReport | None = None) -> None:
        write(args.report, reports + ([current] if current is not None else []))
        if args.out is not None and current is not None:
            args.out.mkdir(parents=True, exist_ok=True)
            write(args.out / f"{current.name}.md", [current])

    for n in names:
        target = TARGETS[n]
        kept = tuple(t for t in target.pytest if not any(fnmatch(t, g) for g in args.without))
        report = run_module(
            n,
            replace(target, pytest=kept),
            args.limit,
            args.sample,
            args.reuse,
            save,
            args.timeout,
            fast=not args.plain,
            confirm=not args.trust_coverage,
            start_at=args.start,
        )
        save(report)
        reports.append(report)
    print(markdown(reports))
    return 0


if __name__ == "__main__":
    sys.exit(main())
