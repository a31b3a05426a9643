"""The ``gemm-opt`` command lines a module is run with, as hypothesis strategies.

Every pass of the registry (with drawn options), every named pipeline, and
``--emit`` of every kind for every target, alone or composed with a user
pipeline. Names come from the tool's own tables, so a new pass, pipeline,
target or emit kind is fuzzed without touching this file.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from gemm_opt import lowering, passes
from gemm_opt.core.targets import TARGETS as TARGET_TABLE
from gemm_opt.lowering.convert_tile_to_triton_gpu import LDS_COPIES
from gemm_opt.tools.opt import EMIT_KINDS, TARGETS

PASSES: dict[str, Callable[[], Any]] = {**passes.PASSES, **lowering.PASSES}

#: Emit kinds that a target does not produce are still asked for: the tool
#: must say so with a diagnostic.
TEXT_EMITS = ("tile", "ttgir")
BINARY_EMITS = tuple(k for k in EMIT_KINDS if k not in TEXT_EMITS)
#: Emit kinds a Triton backend does not produce.
FOREIGN = {"hip": ("ptx", "cubin"), "cuda": ("amdgcn", "hsaco")}


@dataclass(frozen=True)
class CommandSpace:
    """Which kinds of command line to draw."""

    kinds: tuple[str, ...] = ("emit-text", "passes", "pipeline", "emit-binary", "composed")
    targets: tuple[str, ...] = TARGETS
    binary_emits: tuple[str, ...] = BINARY_EMITS
    nested: tuple[bool, ...] = (False, True)
    """Whether a pass may run nested, as ``func.func(pass)``."""
    split: tuple[bool, ...] = (False, True)
    """Whether ``--split-input-file`` may be given."""
    foreign_emits: tuple[bool, ...] = (False, True)
    """Whether a binary emit may be one the target's backend does not produce
    (``--emit=ptx --target=gfx1250``), rather than only its own."""

    def without(self, **values: Any) -> CommandSpace:
        changes = {}
        for name, drop in values.items():
            drop = drop if isinstance(drop, tuple | list | set | frozenset) else (drop,)
            changes[name] = tuple(v for v in getattr(self, name) if v not in drop)
        return dataclasses.replace(self, **changes)


ALL_COMMANDS = CommandSpace()


def _option_value(draw: Callable[[Any], Any], name: str, type_: str, space: CommandSpace) -> str:
    if name == "target":
        return draw(st.sampled_from(space.targets))
    if name == "lds-copies":
        return draw(st.sampled_from(LDS_COPIES))
    if "bool" in type_:
        return draw(st.sampled_from(("true", "false")))
    if "int" in type_:
        return str(draw(st.sampled_from((2, 4, 3, 1, 0, 5, -1))))
    return "x"


def _pass(draw: Callable[[Any], Any], space: CommandSpace) -> str:
    name = draw(st.sampled_from(sorted(PASSES)))
    cls = PASSES[name]()
    chosen = [
        f"{opt}={_option_value(draw, opt, str(f.type), space)}"
        for opt, f in cls.options().items()
        if opt == "target" or draw(st.booleans())
    ]
    text = f"{name}{{{' '.join(chosen)}}}" if chosen else name
    if name != "convert-tile-to-triton-gpu" and draw(st.sampled_from(space.nested)):
        text = f"func.func({text})"
    return text


def _pipeline(draw: Callable[[Any], Any], space: CommandSpace) -> str:
    name = draw(st.sampled_from(sorted(lowering.PIPELINES)))
    opts = [f"target={draw(st.sampled_from(space.targets))}"]
    for opt in ("fuse", "derive-hints"):
        if draw(st.booleans()):
            opts.append(f"{opt}={draw(st.sampled_from(('true', 'false')))}")
    return f"{name}{{{' '.join(opts)}}}"


def _target(draw: Callable[[Any], Any], space: CommandSpace) -> list[str]:
    target = draw(st.sampled_from((None, *space.targets)))
    return [] if target is None else [f"--target={target}"]


@st.composite
def commands(draw: Callable[[Any], Any], space: CommandSpace = ALL_COMMANDS) -> tuple[str, ...]:
    """One command line (without the input file and ``-o``)."""
    command = draw(_command(space))
    if draw(st.sampled_from(space.split)):
        command = ("--split-input-file", *command)
    return command


@st.composite
def _command(draw: Callable[[Any], Any], space: CommandSpace) -> tuple[str, ...]:
    kind = draw(st.sampled_from(space.kinds))
    if kind == "emit-text":
        return (f"--emit={draw(st.sampled_from(TEXT_EMITS))}", *_target(draw, space))
    if kind == "emit-binary" and space.binary_emits:
        target = _target(draw, space)
        emits = space.binary_emits
        if not draw(st.sampled_from(space.foreign_emits)):
            backend = TARGET_TABLE[target[0].split("=", 1)[1] if target else "gfx1250"].backend
            emits = tuple(e for e in emits if e not in FOREIGN[backend]) or emits
        return (f"--emit={draw(st.sampled_from(emits))}", *target)
    if kind == "pipeline":
        return (f"--pass-pipeline=builtin.module({_pipeline(draw, space)})",)
    n = draw(st.integers(1, 3))
    elements = [_pass(draw, space) for _ in range(n)]
    pipeline = f"--pass-pipeline=builtin.module({','.join(elements)})"
    if kind == "composed":
        emit = draw(st.sampled_from(TEXT_EMITS))
        return (pipeline, f"--emit={emit}", *_target(draw, space))
    return (pipeline,)


__all__ = ["ALL_COMMANDS", "BINARY_EMITS", "PASSES", "TEXT_EMITS", "CommandSpace", "commands"]
