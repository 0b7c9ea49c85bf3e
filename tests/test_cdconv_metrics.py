"""CDConv metrics against hand-computed values."""

from __future__ import annotations

import pytest

from dialcheck.evaluation.cdconv import (
    cdconv_metrics,
    example_label,
    f1_per_class,
    macro_f1,
    majority_floor,
    mean_std,
    to_markdown,
    verdict_label,
)
from dialcheck.schema import Dialogue, Example, Verdict


def test_four_and_two_class_metrics_by_hand():
    # gold: 3 none, 1 intra, 2 role, 2 history; pred below.
    gold = [0, 0, 0, 1, 2, 2, 3, 3]
    pred = [0, 0, 3, 1, 2, 0, 3, 2]
    m = cdconv_metrics(gold, pred)
    # 4-class: right at 0, 1, 3, 4, 6 -> 5/8
    assert m["4class/accuracy"] == 62.5
    # none: TP 2, FP 1 (pos 5), FN 1 (pos 2) -> 4/6; intra: 1; role: TP 1, FP 1, FN 1 -> 1/2;
    # history: TP 1, FP 1 (pos 2), FN 1 (pos 7) -> 1/2
    assert m["f1/non_contradiction"] == 66.67
    assert m["f1/intra_sentence"] == 100.0
    assert m["f1/role_confusion"] == 50.0
    assert m["f1/history"] == 50.0
    assert m["4class/macro_f1"] == round(100 * (2 / 3 + 1 + 0.5 + 0.5) / 4, 2)  # 66.67
    # 2-class: gold 0 0 0 1 1 1 1 1, pred 0 0 1 1 1 0 1 1 -> 6/8 right
    assert m["2class/accuracy"] == 75.0
    # none: TP 2, FP 1, FN 1 -> 2/3; contradiction: TP 4, FP 1, FN 1 -> 8/10
    assert m["2class/macro_f1"] == round(100 * (2 / 3 + 0.8) / 2, 2)  # 73.33
    assert m["n"] == 8.0


def test_metric_guards():
    with pytest.raises(ValueError, match="0-3"):
        cdconv_metrics([0, 4], [0, 0])
    with pytest.raises(ValueError, match="2 gold labels but 1"):
        cdconv_metrics([0, 1], [0])
    with pytest.raises(ValueError, match="no examples"):
        cdconv_metrics([], [])


def test_f1_and_macro_f1():
    assert f1_per_class([0, 1, 1], [0, 1, 0], [0, 1]) == {0: pytest.approx(2 / 3), 1: pytest.approx(2 / 3)}
    assert macro_f1([0, 0, 1, 1], [0, 1, 1, 1]) == pytest.approx((2 / 3 + 0.8) / 2)
    assert macro_f1([0, 0], [0, 0], [0, 1]) == 0.5  # an absent class counts 0 when named


def test_majority_floor_reproduces_the_paper_floor_on_official_test_counts():
    gold = [0] * 1484 + [1] * 106 + [2] * 153 + [3] * 589
    m = majority_floor(gold)
    assert m["4class/accuracy"] == 63.64 and m["2class/accuracy"] == 63.64
    assert m["f1/history"] == 0.0
    # with a training majority that differs, the floor follows the training split
    assert majority_floor([0, 3, 3], train_gold=[3, 3, 0])["4class/accuracy"] == pytest.approx(66.67)


def test_mean_std_over_seeds():
    runs = [{"4class/macro_f1": 50.0, "x": 1.0}, {"4class/macro_f1": 54.0}, {"4class/macro_f1": 52.0}]
    assert mean_std(runs) == {"4class/macro_f1": (52.0, 2.0)}  # sample std of 50, 54, 52
    assert mean_std([{"a": 3.0}]) == {"a": (3.0, 0.0)}
    md = to_markdown({f"test/{k}": v for k, v in mean_std(runs).items()})
    assert "| 4-class macro-F1 | 52.00 ± 2.00 | 59.30 |" in md


def test_labels_of_verdicts_and_examples():
    d = Dialogue.from_texts(["a", "b", "c", "d"])
    assert verdict_label(Verdict(False, 0.1)) == 0
    assert verdict_label(Verdict(True, 0.9, category="role_confusion")) == 2
    assert verdict_label(Verdict(True, 0.9)) == 3  # uncategorised contradictions count as history
    assert example_label(Example(d, True, category="intra_sentence")) == 1
    with pytest.raises(ValueError, match="without a category"):
        example_label(Example(d, True))


class _ByLastTurn:
    """A stand-in detector: the last turn's text names the verdict ("none" or a category)."""

    def predict(self, dialogues, batch_size=64, show_progress_bar=False):
        out = []
        for d in dialogues:
            cat = d.turns[-1].text
            out.append(Verdict(False, 0.1) if cat == "none" else Verdict(True, 0.9, category=cat))
        return out


def test_evaluator_on_your_own_labelled_conversations(tmp_path):
    import json

    from dialcheck.evaluation.cdconv import CDConvEvaluator

    def rec(last, contradiction, category=None):
        r = {"turns": ["u1", "b1", "u2", last], "contradiction": contradiction}
        return json.dumps({**r, "category": category} if category else r)

    # gold: none, none, history, role, intra; the stand-in says: none, history, history, none, intra
    lines = [
        rec("none", False), rec("history", False), rec("history", True, "history"),
        rec("none", True, "role_confusion"), rec("intra_sentence", True, "intra_sentence"),
        rec("history", True),  # a contradiction without its category: skipped and reported
    ]  # fmt: skip
    f = tmp_path / "mine.jsonl"
    f.write_text("\n".join(lines) + "\n")
    ev = CDConvEvaluator(files=[f])
    assert ev.splits == [] and len(ev.files["mine"]) == 5
    assert [str(e) for e in ev.skipped["mine"]] == [f"{f}, line 6: category: missing (a contradiction needs one of "
                                                   "intra_sentence, role_confusion, history)"]  # fmt: skip
    res = ev(_ByLastTurn())
    # 2-class: gold 0 0 1 1 1, pred 0 1 1 0 1: 3/5 right; flagged 3, 2 of them right; 2 of 3 caught.
    # 4-class: 3/5 right; F1 none 1/2 (TP 1, FP 1, FN 1), intra 1, role 0, history 2/3 (TP 1, FP 1).
    assert res["mine/n"] == 5 and res["mine/skipped"] == 1
    assert res["mine/2class/accuracy"] == 60.0 and res["mine/4class/accuracy"] == 60.0
    assert res["mine/2class/precision"] == pytest.approx(66.67) and res["mine/2class/recall"] == pytest.approx(66.67)
    assert res["mine/4class/macro_f1"] == pytest.approx(100 * (1 / 2 + 1 + 0 + 2 / 3) / 4, abs=0.01)
    assert res["mine/false_alarms"] == 1.0  # the second conversation
    assert res["mine/flagged/history"] == 100.0 and res["mine/flagged/role_confusion"] == 0.0
    assert res["mine/flagged/intra_sentence"] == 100.0
    table = to_markdown(res, "mine")
    assert "| false alarms (consistent conversations flagged) | 1 |" in table
    assert "test/4class/macro_f1" not in res  # no CDConv split was asked for


def test_own_conversations_without_a_category_are_not_scored_zero_on_it(tmp_path):
    # a file of consistent conversations and history contradictions, each judged right, reported a 4-class
    # macro-F1 of 50 (intra-sentence and role confusion, which never occur, counted as F1 0) and, for a file of
    # consistent ones left alone, 2-class precision and recall 0
    import json

    from dialcheck.evaluation.cdconv import CDConvEvaluator

    def rec(last, contradiction, category=None):
        r = {"turns": ["u1", "b1", "u2", last], "contradiction": contradiction}
        return json.dumps({**r, "category": category} if category else r)

    f = tmp_path / "mine.jsonl"
    f.write_text("\n".join([rec("none", False), rec("history", True, "history"), rec("none", False)]) + "\n")
    res = CDConvEvaluator(files=[f])(_ByLastTurn())
    assert res["mine/4class/macro_f1"] == 100.0 and res["mine/2class/macro_f1"] == 100.0
    assert res["mine/f1/history"] == 100.0 and "mine/f1/role_confusion" not in res
    table = to_markdown(res, "mine")
    assert "| 4-class macro-F1 (over the 2 classes that occur) | 100.00 |" in table
    assert "F1 role confusion" not in table
    calm = tmp_path / "calm.jsonl"
    calm.write_text(rec("none", False) + "\n")
    res = CDConvEvaluator(files=[calm])(_ByLastTurn())
    assert res["calm/4class/macro_f1"] == 100.0 and res["calm/2class/accuracy"] == 100.0
    assert "calm/2class/precision" not in res and "calm/2class/recall" not in res  # nothing flagged, none to find
    # the paper's setting (training's criterion) still averages all four classes
    assert cdconv_metrics([0, 3], [0, 3])["4class/macro_f1"] == 50.0


def test_the_table_says_how_many_conversations_it_is_about():
    # evaluate --benchmark cdconv --limit 6 (or a --data file) showed its percentages without the number behind them
    table = to_markdown({"mine/n": 6.0, "mine/skipped": 2.0, "mine/2class/accuracy": 50.0}, "mine")
    assert table.splitlines()[2:] == [
        "| conversations | 6 |  |",
        "| bad records skipped | 2 |  |",
        "| 2-class accuracy | 50.00 |  |",
    ]
