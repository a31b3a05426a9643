"""The hand-off's shape: one handler per op, one strategy per MMA family, small modules.

Every tile op the dialect registers has exactly one handler in the one table
(``HANDLERS``) or is named as consumed before the hand-off; a family that registered an
op twice would fail when the table is built. No file of ``lowering/`` is over 900 lines
and no class over 400: the op families and target strategies stay separable.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from gemm_opt import dialect
from gemm_opt.core.targets import TARGETS, Mma
from gemm_opt.dialect.tile import TileOp
from gemm_opt.lowering import convert_tile_to_triton_gpu as hand_off
from gemm_opt.lowering.context import TargetStrategy

LOWERING = Path(__file__).resolve().parents[2] / "lowering"
MAX_FILE_LINES = 900
MAX_CLASS_LINES = 400


def _tile_ops() -> set[str]:
    dialect.make_context()  # imports every op module

    def subclasses(cls: type) -> list[type]:
        out = []
        for sub in cls.__subclasses__():
            out += [sub, *subclasses(sub)]
        return out

    return {c.OPERATION_NAME for c in subclasses(TileOp) if getattr(c, "OPERATION_NAME", None)}


def test_every_tile_op_has_exactly_one_handler_or_is_consumed_earlier() -> None:
    ops = _tile_ops()
    assert len(ops) > 30
    handled = {name for name in hand_off.HANDLERS if name.startswith("tile.")}
    consumed = set(hand_off.CONSUMED_EARLIER)
    assert not handled & consumed, sorted(handled & consumed)
    assert ops - handled - consumed == set(), "no handler for: " + ", ".join(
        sorted(ops - handled - consumed)
    )
    assert (handled | consumed) - ops == set(), "handlers of unknown ops"


def test_a_second_handler_for_an_op_is_an_error() -> None:
    first = {"tile.wmma": lambda ctx, op: None}
    second = {"tile.wmma": lambda ctx, op: None}
    with pytest.raises(ValueError, match=r"'tile\.wmma' has two handlers"):
        hand_off.build_handler_table(first, second)
    assert list(hand_off.build_handler_table(first, {"tile.x": first["tile.wmma"]})) == [
        "tile.wmma",
        "tile.x",
    ]


def test_every_target_has_a_strategy_by_its_mma_family() -> None:
    assert set(hand_off.STRATEGIES) == set(Mma)
    for target in TARGETS.values():
        strategy = hand_off.STRATEGIES[target.mma](False, "auto", "none")
        assert isinstance(strategy, TargetStrategy)


def test_no_lowering_file_or_class_is_too_long() -> None:
    too_long = []
    for path in sorted(LOWERING.glob("*.py")):
        text = path.read_text()
        lines = text.count("\n")
        if lines > MAX_FILE_LINES:
            too_long.append(f"{path.name}: {lines} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef):
                size = node.end_lineno - node.lineno + 1
                if size > MAX_CLASS_LINES:
                    too_long.append(f"{path.name}: class {node.name}: {size} lines")
    assert not too_long, too_long
