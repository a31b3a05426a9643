"""The driver of the hand-off (``lowering.convert_tile_to_triton_gpu``), pinned where
the lit files left it open (found by ``benchmarks/mutation.py``).

The ``tt.divisibility`` Triton gets on a parameter is what the hand-off's own checks
assumed of it (``ir_match.stated_divisibility``): the lcm of the positive facts the
tile function states in ``tile.divisibility`` and ``tt.divisibility``, else 16 for a
pointer (the lowering's alignment contract) and nothing for an integer. Triton must
prove the same vectors the hand-off chose direct copies for.
"""

from __future__ import annotations

from gemm_opt.lowering.compile import lower_tile_module

ARGS = """
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  func.func @args(%p: !tile.ptr<f16>, %p8: !tile.ptr<f16> {tile.divisibility = 8 : i32},
                  %p0: !tile.ptr<f16> {tile.divisibility = 0 : i32},
                  %both: i32 {tile.divisibility = 16 : i32, tt.divisibility = 4 : i32},
                  %zero: i32 {tile.divisibility = 0 : i32}, %tt: i64 {tt.divisibility = 8 : i32},
                  %none: i32) {
    return
  }
}
"""


def _header(ttgir: str) -> str:
    (header,) = [line for line in ttgir.splitlines() if "tt.func public @args(" in line]
    return header


def _parameter_attrs(ttgir: str) -> list[str]:
    """Each parameter's attribute dictionary of ``tt.func @args`` ('' for none)."""
    attrs = []
    for piece in _header(ttgir).split("@args(")[1].split("%arg")[1:]:
        typed = piece.split(" loc(")[0]
        attrs.append(typed.split(" {")[1].rstrip("}") if " {" in typed else "")
    return attrs


def test_parameters_state_the_facts_the_hand_off_assumed() -> None:
    ttgir = lower_tile_module(ARGS, "gfx1250", fuse=False).ttgir
    assert _parameter_attrs(ttgir) == [
        "tt.divisibility = 16 : i32",  # a pointer: 16-byte aligned by contract
        "tt.divisibility = 8 : i32",  # as stated
        "tt.divisibility = 16 : i32",  # a stated 0 is no fact: the contract's 16
        "tt.divisibility = 16 : i32",  # lcm(16, 4): both facts hold
        "",  # an integer with no positive fact
        "tt.divisibility = 8 : i32",
        "",
    ]


def test_functions_stay_inlinable() -> None:
    """A private helper the kernel calls must inline (Triton's inliner skips
    ``noinline = true``: a call per tile would stay in the kernel)."""
    ttgir = lower_tile_module(ARGS, "gfx1250", fuse=False).ttgir
    assert _header(ttgir).split(") attributes ")[1].startswith("{noinline = false}")
