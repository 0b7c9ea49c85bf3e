"""benchmarks/cdconv_category_weights.py: per-category weights on the flat CDConv detector's named category."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dialcheck.errors import InputError


def _row(gold_cat, flagged, probs):
    return {
        "gold": int(gold_cat is not None),
        "gold_category": gold_cat,
        "contradiction": flagged,
        "label_scores": dict(zip(("intra_sentence", "role_confusion", "history"), probs, strict=True)),
    }


def test_weights_change_only_the_category_and_the_grid_finds_them(load_benchmark, tmp_path):
    mod = load_benchmark("cdconv_category_weights")
    rows = [
        # two intra-sentence contradictions the detector calls history by a small margin
        _row("intra_sentence", True, (0.30, 0.05, 0.40)),
        _row("intra_sentence", True, (0.24, 0.05, 0.35)),
        _row("history", True, (0.05, 0.05, 0.80)),
        _row("history", True, (0.10, 0.05, 0.60)),
        _row(None, False, (0.05, 0.05, 0.10)),
        _row(None, True, (0.10, 0.10, 0.50)),  # a false alarm stays one, whatever the weights
    ]
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    gold, flag, probs = mod.read(path)
    assert gold.tolist() == [1, 1, 3, 3, 0, 0]
    before = mod.predict(flag, probs, mod.NONE)
    assert before.tolist() == [3, 3, 3, 3, 0, 3]
    w = mod.choose(gold, flag, probs)
    after = mod.predict(flag, probs, w)
    assert ((before > 0) == (after > 0)).all()  # the 2-class decision never moves
    assert after.tolist() == [1, 1, 3, 3, 0, 3]
    # the smallest grid weight that flips 0.30 vs 0.40 and 0.24 vs 0.35 but not 0.10 vs 0.60: not 1.4 (0.336 <
    # 0.35), so 2.0; role keeps 1 (nearest 1 on a tie)
    assert w == (2.0, 1.0, 1.0)
    # hand-computed 4-class macro-F1: before, none 2/3 (TP 1, FN 1), intra 0, role 0 (absent), history 4/7
    # (TP 2, FP 3): mean 30.95; after, none 2/3, intra 1, history 4/5 (TP 2, FP 1): mean 61.67
    assert mod.macro_f1(gold, flag, probs, mod.NONE) == pytest.approx(30.95, abs=0.01)
    assert mod.macro_f1(gold, flag, probs, w) == pytest.approx(61.67, abs=0.01)


def test_held_out_gain_is_zero_when_nothing_can_improve(load_benchmark):
    mod = load_benchmark("cdconv_category_weights")
    gold = np.array([3, 3, 0, 0] * 5)
    flag = gold > 0
    probs = np.tile([0.1, 0.1, 0.8], (20, 1))
    gains = mod.held_out_gains(gold, flag, probs, repeats=3)
    assert len(gains) == 6 and all(g == 0 for g in gains)


def test_a_bad_row_names_the_file_and_line(load_benchmark, tmp_path):
    mod = load_benchmark("cdconv_category_weights")
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps(_row(None, False, (0.1, 0.1, 0.1))) + "\n" + '{"gold": 1}\n')
    with pytest.raises(InputError, match=r"p\.jsonl, line 2"):
        mod.read(path)
