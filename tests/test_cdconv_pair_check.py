"""benchmarks/cdconv_pair_check.py: a pair check behind a four-category CDConv detector."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dialcheck.errors import InputError


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _pred(i, gold_cat, cat):
    return {
        "split": "dev",
        "id": f"c{i}",
        "gold": int(gold_cat is not None),
        "gold_category": gold_cat,
        "contradiction": cat is not None,
        "category": cat,
    }


def test_or_and_veto_hand_computed(load_benchmark, tmp_path):
    mod = load_benchmark("cdconv_pair_check")
    preds = [
        _pred(0, "history", None),  # missed; the pair check is sure (0.97): caught by "or"
        _pred(1, None, None),  # consistent, left alone; pair score 0.6: a false alarm below 0.6 only
        _pred(2, None, "history"),  # a false alarm named history; pair score 0.01: vetoed below 0.02
        _pred(3, "history", "history"),  # caught; pair score 0.3: kept
        _pred(4, "intra_sentence", "intra_sentence"),  # not history: neither rule touches it
    ]
    pairs = [{"split": "dev", "id": f"c{i}", "score": s} for i, s in enumerate((0.97, 0.6, 0.01, 0.3, 0.0))]
    gold, pred, s_n, splits = mod.joined(_write(tmp_path / "p.jsonl", preds), _write(tmp_path / "s.jsonl", pairs))
    assert gold.tolist() == [3, 0, 0, 3, 1] and pred.tolist() == [0, 0, 3, 3, 1] and set(splits) == {"dev"}
    assert mod.combine(pred, s_n, 0.9).tolist() == [3, 0, 3, 3, 1]
    assert mod.combine(pred, s_n, 0.9, 0.02).tolist() == [3, 0, 0, 3, 1]
    # 2-class accuracy: the detector alone 3 of 5 (c0 missed, c2 a false alarm) = 60; with "or" 80; with the veto 100
    assert mod.accuracy2(gold, pred) == 60.0
    assert mod.accuracy2(gold, mod.combine(pred, s_n, 0.9)) == 80.0
    # the grid: without a veto, any tau_n in (0.6, 0.97] reaches 80; ties go to the highest (0.95)
    assert mod.choose(gold, pred, s_n, veto=False) == (0.95, 0.0)
    # with it, 100 needs tau_v > 0.01 and <= 0.3: the smallest such grid value is 0.02
    assert mod.choose(gold, pred, s_n, veto=True) == (0.95, 0.02)
    assert mod.hand_counts(gold, mod.combine(pred, s_n, 0.95)) == (4, 3, 1)


def test_nothing_to_gain_keeps_the_detector_as_it_is(load_benchmark):
    mod = load_benchmark("cdconv_pair_check")
    gold = np.array([0, 3] * 10)
    pred = gold.copy()
    s_n = np.tile([0.99, 0.0], 10)  # the pair check is sure exactly where the detector is right to say nothing
    assert mod.choose(gold, pred, s_n, veto=True) == (1.01, 0.0)  # never fire, no veto
    assert all(g == 0 for g in mod.held_out_gains(gold, pred, s_n, veto=True, repeats=2))


def test_missing_pair_scores_name_the_files(load_benchmark, tmp_path):
    mod = load_benchmark("cdconv_pair_check")
    p = _write(tmp_path / "p.jsonl", [_pred(0, None, None), _pred(1, None, None)])
    s = _write(tmp_path / "s.jsonl", [{"split": "dev", "id": "c0", "score": 0.1}])
    with pytest.raises(InputError, match=r"s\.jsonl: no pair score for 1 of the rows of .*p\.jsonl"):
        mod.joined(p, s)
    _write(s, [{"split": "dev", "id": "c0"}])
    with pytest.raises(InputError, match=r"s\.jsonl, line 1"):
        mod.read_pair_scores(s)


def test_history_auc_and_the_question_reading(load_benchmark):
    mod = load_benchmark("cdconv_pair_check")
    # history contradictions 0.9, 0.4 against consistent 0.5, 0.1 (3 of 4 pairs ordered right); an intra-sentence
    # contradiction (label 1) is left out whatever its score
    gold, s_n = np.array([3, 3, 0, 0, 1]), np.array([0.9, 0.4, 0.5, 0.1, 0.0])
    assert mod.history_auc(gold, s_n) == 75.0
    assert np.isnan(mod.history_auc(np.array([0, 0]), np.array([0.1, 0.2])))

    class Echo:
        def predict(self, dialogues, batch_size=64, show_progress_bar=False):
            return [d.turns[-1].text for d in dialogues]

    from dialcheck.io import as_dialogues

    read = mod.WithQuestion(Echo()).predict(as_dialogues([["u1", "b1", "你喜欢狗吗？", "不喜欢。"], ["b1"]]))
    assert read == ["你喜欢狗吗？不喜欢。", "b1"]  # the user's turn joins the reply; a lone turn stays as it is
