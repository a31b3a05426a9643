"""The TTGIR of every example, lit input case and bundled kernel is byte-identical to the
golden (``test/unit/data/ttgir_golden.json``): the hand-off may be restructured, never
changed by accident.

A deliberate change regenerates the golden (``python test/support/ttgir_golden.py
--update``) in its own commit, which says why; ``--dump DIR`` writes the texts for a diff.
"""

from __future__ import annotations

from support import ttgir_golden as golden


def test_in_process_hand_off_equals_the_forked_one() -> None:
    """The workers lower in-process; the compile path forks per hand-off. Same text."""
    from gemm_opt.lowering.compile import lower_tile_module

    picked = [c for c in golden.cases() if c.key.startswith("examples/")][:2]
    forked = [lower_tile_module(c.text, filename=c.filename).ttgir for c in picked]
    got = golden.lower_all(picked, workers=1, keep_texts=True)["texts"]
    assert [got[c.key] for c in picked] == forked


def test_ttgir_is_byte_identical_to_the_golden() -> None:
    want = golden.load_golden()
    selected = list(golden.cases())
    assert len({c.key for c in selected}) == len(selected), "two cases share a key"
    got = golden.lower_all(selected)["results"]
    diff = golden.compare(want, got)
    assert not diff, "TTGIR changed (python test/support/ttgir_golden.py --dump DIR):\n" + (
        "\n".join(diff[:20])
    )
    # The guard has teeth: bundled kernels, lit cases and examples all lowered.
    ok = [k for k, v in got.items() if v.startswith("sha256:")]
    assert sum(k.startswith("bundle/") for k in ok) >= 200
    assert sum(k.startswith("test/lit/") for k in ok) >= 120
    assert sum(k.startswith("examples/") for k in ok) >= 3
