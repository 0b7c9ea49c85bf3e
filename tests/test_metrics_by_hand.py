"""The reported metrics against values worked out by hand, where no test or doctest had one.

Already checked by hand elsewhere: accuracy, precision/recall/F1, defined P/R/F1, balanced accuracy, ROC AUC on
four scores, evidence P/R/F1, strict accuracy and the pair-counted SE F1 (doctests in
``dialcheck.evaluation.metrics`` and ``tests/test_decode_metrics.py``'s dev split), CDConv accuracy, macro-F1,
per-category F1, the majority floor and mean ± std of three evenly spaced runs (doctests in
``dialcheck.evaluation.cdconv`` and ``tests/test_cdconv_metrics.py``), CI-ToD's per-label F1 and exact match
(doctests in ``dialcheck.evaluation.citod``). Below: what the DECODE table shows for the raw human-bot turns,
A2T, human-bot and RCT (each split's own metrics, in percent), ROC AUC with scores tied across the two classes, and
mean ± std where the mean and the sample deviation need rounding.
"""

from __future__ import annotations

import pytest

from dialcheck.evaluation.cdconv import mean_std
from dialcheck.evaluation.decode import decode_metrics
from dialcheck.evaluation.metrics import roc_auc
from dialcheck.schema import Dialogue, Example, Verdict


def _ex(label: bool, evidence: tuple[int, ...] | None = ()) -> Example:
    return Example(Dialogue.from_texts([f"t{i}" for i in range(6)]), label, evidence)


def _v(flag: bool, score: float, evidence: tuple[int, ...] = ()) -> Verdict:
    return Verdict(flag, score, evidence, None, dict.fromkeys(range(5), 0.1))


def test_roc_auc_counts_a_tie_across_the_classes_as_one_half():
    # positives 0.9, 0.4; negatives 0.8, 0.4, 0.1. Of the 6 pairs: 0.9 beats all three (3); 0.4 loses to 0.8 (0),
    # ties 0.4 (1/2), beats 0.1 (1): 4.5 / 6 = 0.75
    assert roc_auc([1, 1, 0, 0, 0], [0.9, 0.4, 0.8, 0.4, 0.1]) == pytest.approx(0.75)
    # every positive above every negative: 1; below: 0; all tied: 1/2
    assert roc_auc([1, 0, 1, 0], [0.8, 0.2, 0.7, 0.3]) == 1.0
    assert roc_auc([1, 0, 1, 0], [0.2, 0.8, 0.3, 0.7]) == 0.0
    assert roc_auc([1, 1, 0], [0.5, 0.5, 0.5]) == 0.5


def test_raw_human_bot_precision_recall_f1_and_auc_by_hand():
    # the paper's appendix F columns, on five bot turns: gold 1 1 0 0 0, flagged 1 0 1 0 0 (scores as above)
    examples = [_ex(True, (0,)), _ex(True, (0,)), _ex(False), _ex(False), _ex(False)]
    verdicts = [_v(True, 0.9, (0,)), _v(False, 0.4), _v(True, 0.8, (1,)), _v(False, 0.4), _v(False, 0.1)]
    m = decode_metrics("human_bot_raw", examples, verdicts)
    # TP 1 (turn 1), FP 1 (turn 3), FN 1 (turn 2), TN 2: P 1/2, R 1/2, F1 1/2, accuracy 3/5; AUC 4.5/6
    assert m == {"n": 5.0, "accuracy": 60.0, "precision": 50.0, "recall": 50.0, "f1": 50.0, "roc_auc": 75.0}


def test_human_bot_accuracy_precision_recall_and_f1_by_hand():
    # gold 1 1 1 0 0 0, flagged 1 1 0 1 0 0: TP 2, FN 1, FP 1, TN 2
    examples = [_ex(True, (0,))] * 3 + [_ex(False)] * 3
    verdicts = [
        _v(True, 0.9, (0,)),
        _v(True, 0.9, (0,)),
        _v(False, 0.2),
        _v(True, 0.8, (0,)),
        _v(False, 0.1),
        _v(False, 0.1),
    ]
    m = decode_metrics("human_bot", examples, verdicts)
    assert m["accuracy"] == pytest.approx(100 * 4 / 6)  # 66.67
    assert (m["precision"], m["recall"]) == (pytest.approx(100 * 2 / 3), pytest.approx(100 * 2 / 3))
    assert m["f1"] == pytest.approx(100 * 2 / 3)  # 2 TP / (2 TP + FP + FN) = 4 / 6
    assert "strict_accuracy" not in m and "roc_auc" not in m  # the paper reports accuracy on this split


def test_rct_is_accuracy_alone():
    # every RCT dialogue is consistent: one false alarm in four is 75
    m = decode_metrics("rct", [_ex(False)] * 4, [_v(False, 0.1), _v(True, 0.9, (2,)), _v(False, 0.3), _v(False, 0.2)])
    assert m == {"n": 4.0, "accuracy": 75.0}


def test_a2t_accuracy_strict_accuracy_and_evidence_f1_by_hand():
    # every A2T dialogue is a contradiction with its evidence turns
    examples = [_ex(True, (2,)), _ex(True, (1, 3)), _ex(True, (0,)), _ex(True, (4,))]
    verdicts = [
        _v(True, 0.9, (2,)),  # right, evidence exact: strict right; pairs: tp 1
        _v(True, 0.8, (1,)),  # right, evidence {1} of {1, 3}: strict wrong; tp 1, fn 1 (flagged)
        _v(False, 0.2),  # missed: wrong both ways; fn 1 (unflagged)
        _v(True, 0.7, (4,)),  # right, exact; tp 1
    ]
    m = decode_metrics("a2t", examples, verdicts)
    assert m["accuracy"] == 75.0  # 3 of 4 flagged
    assert m["strict_accuracy"] == 50.0  # 2 of 4 with the exact evidence set
    assert m["evidence_f1"] == pytest.approx(75.0)  # tp 3, fp 0, fn 2: 3 / (3 + 2/2)
    assert m["evidence_f1_per_example"] == pytest.approx(100 * (1 + 2 / 3 + 0 + 1) / 4)  # 66.67
    assert "precision" not in m  # not a column of the paper's A2T


def test_mean_std_over_seeds_rounds_the_mean_and_the_sample_deviation():
    # 71, 72, 74: mean 217/3 = 72.3333; deviations -4/3, -1/3, 5/3, squares 16/9 + 1/9 + 25/9 = 42/9,
    # divided by n - 1 = 2: 7/3, square root 1.52753; the population deviation (n) would be 1.24722
    assert mean_std([{"acc": 71.0}, {"acc": 72.0}, {"acc": 74.0}]) == {"acc": (72.3333, 1.5275)}
