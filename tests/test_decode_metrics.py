"""DECODE metrics against hand-computed values (the authors' evaluation script counts evidence per pair)."""

from pathlib import Path

import pytest

from dialcheck.errors import InputError
from dialcheck.evaluation.decode import decode_metrics
from dialcheck.schema import Dialogue, Example, Verdict
from helpers_cli import feed_stdin


def _ex(label, evidence, n=6):
    return Example(Dialogue.from_texts([f"t{i}" for i in range(n)]), label, evidence)


def test_dev_metrics_match_a_hand_computed_example():
    examples = [
        _ex(True, (2,)),  # flagged, evidence {2}: tp 1
        _ex(True, (0, 2)),  # flagged, evidence {2}: tp 1, fn 1 (turn 0 missed)
        _ex(False, ()),  # falsely flagged, evidence {1}: fp 1
        _ex(False, ()),  # not flagged: nothing
        _ex(True, (4,)),  # missed: fn 1 (its pair score above eta_e does not count unflagged)
        _ex(True, None),  # no recoverable evidence: accuracy only
    ]
    verdicts = [
        Verdict(True, 0.9, (2,), None, {0: 0.1, 2: 0.9}),
        Verdict(True, 0.8, (2,), None, {0: 0.3, 2: 0.8, 4: 0.2}),
        Verdict(True, 0.7, (1,), None, {1: 0.7, 3: 0.1}),
        Verdict(False, 0.2, (), None, {1: 0.2}),
        Verdict(False, 0.4, (4,), None, {0: 0.1, 2: 0.1, 4: 0.4}),
        Verdict(True, 0.9, (0,), None, {0: 0.9}),
    ]
    m = decode_metrics("dev", examples, verdicts)
    assert m["accuracy"] == pytest.approx(100 * 4 / 6)
    assert m["strict_accuracy"] == pytest.approx(100 * 2 / 5)  # the first and the fourth
    # the paper: tp 2, fp 1, fn 2 over all pairs -> 2 / (2 + 1.5)
    assert m["evidence_f1"] == pytest.approx(100 * 2 / 3.5)
    # per contradiction: 1, F1({0, 2}, {2}) = 2/3, 0 -> mean 5/9
    assert m["evidence_f1_per_example"] == pytest.approx(100 * 5 / 9)
    assert m["n_without_evidence"] == 1
    # where the pairs are lost: the false alarm's turn 1; turn 0 beside a found turn 2; the missed dialogue's 4
    counts = {k.split("/")[1]: v for k, v in m.items() if k.startswith("evidence_pairs/")}
    assert counts == {"tp": 2, "fp_consistent": 1, "fp_extra": 0, "fn_unflagged": 1, "fn_flagged": 1}


def test_own_labelled_file_gets_every_metric_its_labels_allow():
    examples = [_ex(True, (2,)), _ex(True, None), _ex(False, ()), _ex(False, ())]
    verdicts = [
        Verdict(True, 0.9, (2,), None, {0: 0.1, 2: 0.9}),  # right, evidence exact
        Verdict(False, 0.3, (), None, {0: 0.3}),  # missed
        Verdict(True, 0.6, (0,), None, {0: 0.6}),  # false alarm
        Verdict(False, 0.1, (), None, {0: 0.1}),  # right
    ]
    m = decode_metrics("mylogs", examples, verdicts)
    assert m["accuracy"] == 50.0
    assert m["balanced_accuracy"] == 50.0  # recall 1/2 on each class
    assert (m["precision"], m["recall"], m["f1"]) == (50.0, 50.0, 50.0)
    # scores 0.9, 0.3 (gold) vs 0.6, 0.1: 3 of the 4 (positive, negative) pairs ranked right
    assert m["roc_auc"] == pytest.approx(75.0)
    # evidence metrics over the examples that can have them (the unannotated contradiction left out):
    # strict: 2 of 3 right; pairs: tp 1, fp 1 (the false alarm's turn 0) -> 1 / (1 + 0.5)
    assert m["strict_accuracy"] == pytest.approx(100 * 2 / 3)
    assert m["evidence_f1"] == pytest.approx(100 / 1.5)
    assert m["n_without_evidence"] == 1
    # a file with one class only has no ROC AUC, and without evidence turns no evidence metrics
    m = decode_metrics("mylogs", examples[2:], verdicts[2:])
    assert "roc_auc" not in m and "evidence_f1" not in m and m["accuracy"] == 50.0


def test_gold_evidence_on_a_turn_never_paired_is_not_counted():
    # gold names turn 1 (the other speaker's), which the utterance-based detector never pairs
    m = decode_metrics("dev", [_ex(True, (1, 2))], [Verdict(True, 0.9, (2,), None, {0: 0.1, 2: 0.9})])
    assert m["evidence_f1"] == pytest.approx(100.0)


def test_a_detector_without_evidence_gets_no_evidence_metrics():
    # the unstructured detector names no turns: strict accuracy would count every hit as wrong
    examples = [_ex(True, (2,)), _ex(False, ())]
    verdicts = [Verdict(True, 0.9, (), None, {}), Verdict(False, 0.1, (), None, {})]
    m = decode_metrics("dev", examples, verdicts, evidence=False)
    assert m["accuracy"] == 100.0
    assert not {"strict_accuracy", "evidence_f1", "evidence_f1_per_example"} & set(m)
    assert decode_metrics("dev", examples, verdicts)["strict_accuracy"] == 50.0


def test_tau_sweep_averages_pair_scores_over_prediction_files(tmp_path, load_benchmark):
    import json

    sweep = load_benchmark("decode_tau_sweep")
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    rec = {"split": "dev", "id": "dev:0", "score": 0.9, "pair_scores": {"0": 0.9, "2": 0.1}}
    a.write_text(json.dumps(rec) + "\n")
    b.write_text(json.dumps({**rec, "pair_scores": {"0": 0.3, "2": 0.5}}) + "\n")
    merged = sweep.read_predictions([a, b])["dev"][0]
    assert merged["pair_scores"] == pytest.approx({"0": 0.6, "2": 0.3})
    # re-decided as one detector: the ensemble's max pair (0.6) passes tau 0.55, turn 0 is the evidence
    v = sweep.redecide(merged, 0.55, 0.55)
    assert v.contradiction and v.evidence == (0,)
    b.write_text(json.dumps({**rec, "id": "dev:1"}) + "\n")
    with pytest.raises(InputError, match="no prediction for dev dev:0"):  # exit 2 by _cli.run, not SystemExit's 1
        sweep.read_predictions([a, b])


def test_decode_average_keeps_the_second_detectors_pairs_and_chooses_the_weight_on_validation(load_benchmark):
    avg = load_benchmark("decode_average")
    # B skipped pair "2" (a question it does not read): the average keeps only pairs B scores
    assert avg.average({"0": 0.8, "2": 0.9}, {"0": 0.2}, 0.5) == {"0": 0.5}
    # two validation dialogues, one contradiction: A separates them (0.9 vs 0.1), B reverses them (0.2 vs 0.6),
    # so only weights that lean on A reach balanced accuracy 1; B alone cannot beat 0.5
    a, b, gold = [{"0": 0.9}, {"0": 0.1}], [{"0": 0.2}, {"0": 0.6}], [True, False]
    table = {w: bacc for w, _tau, bacc in avg.choose(a, b, gold)}
    assert table[1.0] == 1.0 and table[0.0] == 0.5 and table[0.7] == 1.0  # 0.69 vs 0.25 at w = 0.7
    assert table[0.3] == 0.5  # 0.41 vs 0.45: still reversed


def test_own_logs_folds_keep_each_conversation_on_one_side(tmp_path, data_root, load_benchmark):
    import json

    from dialcheck.io import read_examples

    cv = load_benchmark("own_logs_cv")
    counts = cv.write_folds(tmp_path, 3, 0, str(data_root))
    assert sum(counts[f"fold{f}-test.jsonl"] for f in range(3)) == 764  # every human-bot dialogue tested once
    for f in range(3):
        train, errors = read_examples(tmp_path / f"fold{f}-train.jsonl")
        test, _ = read_examples(tmp_path / f"fold{f}-test.jsonl")
        assert not errors and test
        assert not {cv.conversation(e) for e in train} & {cv.conversation(e) for e in test}
    row = json.loads((tmp_path / "fold0-test.jsonl").read_text().splitlines()[0])
    assert set(row) == {"id", "turns", "contradiction"}  # human-bot names no evidence turns


def test_pair_overlap_pairs_evidence_of_contradictions_and_every_same_speaker_turn_otherwise(tmp_path, load_benchmark):
    import json

    ov = load_benchmark("decode_pair_overlap")
    f = tmp_path / "mine.jsonl"
    turns = ["Hi", "I have two dogs.", "Nice", "I walk my dogs daily.", "Cool", "I have no dogs."]
    f.write_text(
        json.dumps({"turns": turns, "contradiction": True, "evidence": [1]})
        + "\n"
        + json.dumps({"turns": [*turns[:5], "My dogs are old."], "contradiction": False})
        + "\n"
    )
    rows = ov.labelled_pairs(str(f))
    pairs = [(r[1], r[2]) for r in rows]
    assert pairs == [(1, "I have two dogs."), (0, "I have two dogs."), (0, "I walk my dogs daily.")]
    # content words {two, dogs} and {walk, dogs, daily} against "My dogs are old.": 1/2 and 1/3, both above 0.3;
    # {two, dogs} against "I have no dogs.": 1/2
    expected = [("mine.jsonl", 0, 2, round((1 / 2 + 1 / 3) / 2, 3), 1.0), ("mine.jsonl", 1, 1, 0.5, 1.0)]
    assert ov.summarise(rows) == expected


def test_cascade_sweep_decides_by_the_slow_detector_inside_the_band(tmp_path, data_root, load_benchmark, monkeypatch):
    import json

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "benchmarks"))
    cas = load_benchmark("cascade_sweep")
    fast, slow = tmp_path / "fast.jsonl", tmp_path / "slow.jsonl"
    # dev:0 is a contradiction (evidence turn 6), dev:2 is not
    fast.write_text(
        json.dumps({"split": "dev", "id": "dev:0", "score": 0.5, "pair_scores": {"6": 0.5, "2": 0.1}})
        + "\n"
        + json.dumps({"split": "dev", "id": "dev:2", "score": 0.1, "pair_scores": {"0": 0.1}})
        + "\n"
    )
    slow.write_text(
        json.dumps({"split": "dev", "id": "dev:0", "score": 0.9, "pair_scores": {"6": 0.9, "2": 0.2}})
        + "\n"
        + json.dumps({"split": "dev", "id": "dev:2", "score": 0.95, "pair_scores": {"0": 0.95}})
        + "\n"
    )
    f, s = cas.read_predictions([fast]), cas.read_predictions([slow])
    wide, none = cas.cascade_rows(f, s, 0.6, 0.6, 0.7, 0.7, [(0.3, 0.9), (0.6, 0.6)])
    # [0.3, 0.9]: dev:0 (0.5) is re-read and caught with its evidence; dev:2 (0.1) stays with the fast one
    assert wide["dev/accuracy"] == 100.0 and wide["dev/strict_accuracy"] == 100.0 and wide["dev/reread"] == 50.0
    # a band of the fast tau alone: the fast detector alone, which misses dev:0
    assert none["dev/accuracy"] == 50.0 and none["dev/reread"] == 0.0
    everything = cas.cascade_rows(f, s, 0.6, 0.6, 0.7, 0.7, [(0.0, 1.0)])[0]
    assert everything["dev/accuracy"] == 50.0  # the slow one alone flags dev:2 (0.95)
    assert "| [0.3, 0.9] | 100.00 |" in cas.to_markdown([wide])


def test_metrics_refuse_sequences_of_different_lengths():
    from dialcheck.evaluation import metrics as m

    with pytest.raises(ValueError, match="2 gold labels but 1 predictions"):
        m.accuracy([1, 0], [1])
    with pytest.raises(ValueError, match="2 gold evidence sets but 1 predictions"):
        m.evidence_f1([[1], [2]], [[1]])
    with pytest.raises(ValueError, match="2 gold evidence sets but 1 predictions"):
        m.pair_evidence_counts([[1], [2]], [[1]])
    with pytest.raises(ValueError, match="1 candidate sets"):
        m.pair_evidence_counts([[1], [2]], [[1], [2]], candidates=[[1]])
    with pytest.raises(ValueError, match="same length"):
        m.strict_accuracy([1, 0], [1, 0], [[1], []], [[1]])


def test_metrics_of_nothing_are_zero_and_empty_evidence_sets_agree():
    from dialcheck.evaluation import metrics as m

    assert m.accuracy([], []) == 0.0
    assert m.evidence_f1([], []) == 0.0
    assert m.strict_accuracy([], [], [], []) == 0.0
    assert m.best_threshold([], [], m.accuracy) == (0.5, 0.0)
    # no gold evidence and none predicted (a consistent dialogue left alone) is a perfect match, by hand: 1, 1, 1
    assert m.evidence_prf([], []) == (1.0, 1.0, 1.0)


def test_raw_human_bot_leaves_out_roc_auc_when_one_class_is_all_it_holds():
    # evaluate --splits human_bot_raw --limit 3 wrote "roc_auc": NaN, which is not JSON (jq refuses the file)
    examples = [_ex(False, ()), _ex(False, ()), _ex(False, ())]
    verdicts = [Verdict(False, s, (), None, {0: s}) for s in (0.1, 0.2, 0.3)]
    m = decode_metrics("human_bot_raw", examples, verdicts)
    assert "roc_auc" not in m and m["accuracy"] == 100.0
    both = decode_metrics("human_bot_raw", [*examples[:2], _ex(True, (0,))], verdicts)
    assert both["roc_auc"] == 100.0  # 0.3 above 0.1 and 0.2


def test_the_primary_metric_names_a_split_that_was_evaluated():
    # evaluate --splits dev reported "primary_metric": "human_bot/accuracy", a key its results do not hold
    from dialcheck.cli.evaluate import _finite
    from dialcheck.evaluation.decode import DecodeEvaluator

    results = {"dev/n": 3.0, "dev/accuracy": 66.67, "rct/accuracy": 50.0}
    assert DecodeEvaluator(["rct", "dev"]).primary_of(results) == "rct/accuracy"
    assert DecodeEvaluator(["dev"]).primary_of({"dev/accuracy": 1.0}) == "dev/accuracy"
    assert DecodeEvaluator().primary_of({"human_bot/accuracy": 70.0, "dev/accuracy": 1.0}) == "human_bot/accuracy"
    assert _finite({"x/roc_auc": float("nan"), "x/n": 1.0}) == {"x/roc_auc": None, "x/n": 1.0}


def test_precision_recall_and_f1_are_left_out_where_undefined():
    # a file of consistent dialogues left alone (a perfect detector) reported precision, recall and F1 0.00
    calm = [_ex(False, ()), _ex(False, ())]
    quiet = [Verdict(False, 0.1, (), None, {0: 0.1}), Verdict(False, 0.2, (), None, {0: 0.2})]
    m = decode_metrics("mylogs", calm, quiet)
    assert m["accuracy"] == 100.0 and not {"precision", "recall", "f1"} & set(m)
    # one false alarm among them: precision 0 of 1 flagged, F1 0 (2 TP / (2 TP + FP + FN) = 0), still no recall
    alarm = [Verdict(True, 0.9, (0,), None, {0: 0.9}), quiet[1]]
    m = decode_metrics("mylogs", calm, alarm)
    assert (m["precision"], m["f1"]) == (0.0, 0.0) and "recall" not in m
    # contradictions, none flagged: recall 0 and F1 0, no precision (nothing was flagged); as for human_bot_raw
    missed = [_ex(True, (0,)), _ex(False, ())]
    for split in ("mylogs", "human_bot_raw", "human_bot"):
        m = decode_metrics(split, missed, quiet)
        assert (m["recall"], m["f1"]) == (0.0, 0.0) and "precision" not in m, split
    # the table shows only the defined ones
    from dialcheck.evaluation.decode import to_markdown

    table = to_markdown({f"mylogs/{k}": v for k, v in decode_metrics("mylogs", calm, quiet).items()})
    assert "mylogs: accuracy | 100.00" in table and "precision" not in table and "F1" not in table


def test_a_missing_corpus_file_is_named_before_any_split_runs(tmp_path, data_root):
    # a data folder copied without rct.jsonl ran dev and human-bot (an hour with a large model), then stopped at rct
    # with every number lost
    import shutil

    from dialcheck.evaluation.cdconv import CDConvEvaluator
    from dialcheck.evaluation.citod import CitodEvaluator
    from dialcheck.evaluation.decode import DecodeEvaluator

    class Unused:
        def predict(self, *a, **k):
            raise AssertionError("no split runs while a corpus file is missing")

    copy = tmp_path / "data"
    (copy / "decode").mkdir(parents=True)
    shutil.copy(data_root / "decode" / "human-bot.jsonl", copy / "decode")
    with pytest.raises(InputError) as e:
        DecodeEvaluator(["human_bot", "rct"], copy, limit=1)(Unused())
    assert str(e.value) == (
        f"{copy / 'decode' / 'rct.jsonl'}: corpus file is missing, needed by split rct (see `dialcheck data verify`, "
        "or leave the split out with --splits)"
    )
    with pytest.raises(InputError) as e:  # every missing file at once, with the splits that read it
        DecodeEvaluator(None, copy, limit=1)(Unused())
    lines = str(e.value).splitlines()
    assert lines[0].startswith("2 corpus files are missing or empty (") and "leave those splits out" in lines[0]
    assert lines[1:] == [
        f"  {copy / 'decode' / 'partial_from_formatted' / 'dev_reconstructed.jsonl'}: missing, needed by splits "
        "dev, a2t",
        f"  {copy / 'decode' / 'rct.jsonl'}: missing, needed by split rct",
    ]
    with pytest.raises(InputError, match=r"cdconv\.txt: corpus file is missing, needed by split disjoint_test"):
        CDConvEvaluator(["disjoint_test"], copy)(Unused())
    with pytest.raises(InputError, match="needed by split kbi_probe") as e:  # made from the three test sets
        CitodEvaluator(["kbi_probe"], copy)(Unused())
    assert str(e.value).startswith("3 corpus files are missing or empty")

    class Calm:
        names_evidence = True

        def predict(self, dialogues, **k):
            return [Verdict(False, 0.1) for _ in dialogues]

    assert DecodeEvaluator(["human_bot"], copy, limit=1)(Calm())["human_bot/n"] == 1  # what is there still runs


@pytest.mark.parametrize(
    ("benchmark", "split", "file"),
    [
        ("decode", "rct", "decode/rct.jsonl"),
        ("cdconv", "test", "cdconv"),
        ("citod", "calendar", "ci_tod/KBRetriever_DC/calendar_test.json"),
    ],
)
def test_evaluate_names_a_missing_corpus_file_before_the_model_loads(tmp_path, capsys, monkeypatch, benchmark, split,
                                                                      file):  # fmt: skip
    # the files were checked when the first split ran, after the model had loaded (seconds, a minute for a large one)
    from dialcheck.cli import evaluate, main

    def load_for(*a, **k):
        raise AssertionError("the model loads after the corpus files are found")

    monkeypatch.setattr(evaluate, "load_for", load_for)
    argv = ["evaluate", "--benchmark", benchmark, "--splits", split, "--data-dir", str(tmp_path), "--no-progress"]
    assert main([*argv, "--model", str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"dialcheck: error: {tmp_path / file}") and "corpus file" in err and "missing" in err, err


def test_an_empty_corpus_file_or_split_is_refused_not_scored(tmp_path):
    # an empty cdconv_test.jsonl was a ValueError traceback ("no examples to score"); an empty rct.jsonl reported
    # "RCT accuracy 0.00" over 0 dialogues, and a CI-ToD test file holding [] precision, recall and accuracy 0.000
    from dialcheck.evaluation.cdconv import CDConvEvaluator
    from dialcheck.evaluation.citod import CitodEvaluator
    from dialcheck.evaluation.decode import DecodeEvaluator

    class Unused:
        def predict(self, *a, **k):
            raise AssertionError("nothing to predict")

    (tmp_path / "decode").mkdir()
    (tmp_path / "decode" / "rct.jsonl").write_text("")
    with pytest.raises(InputError) as e:  # before any split runs
        DecodeEvaluator(["rct"], tmp_path)(Unused())
    assert str(e.value).startswith(f"{tmp_path / 'decode' / 'rct.jsonl'}: corpus file is empty, needed by split rct")
    (tmp_path / "decode" / "rct.jsonl").write_text("\n")  # not empty, but no record: refused when read
    with pytest.raises(InputError, match=r"^split rct: no example to evaluate on in .*rct\.jsonl"):
        DecodeEvaluator(["rct"], tmp_path)(Unused())
    cd = tmp_path / "cdconv" / "splits_jsonl"
    cd.mkdir(parents=True)
    (cd / "cdconv_test.jsonl").write_text("\n")
    with pytest.raises(InputError, match=r"^split test: no example to evaluate on in .*cdconv_test\.jsonl"):
        CDConvEvaluator(["test"], tmp_path)(Unused())
    ci = tmp_path / "ci_tod" / "KBRetriever_DC"
    ci.mkdir(parents=True)
    (ci / "calendar_test.json").write_text("[]")
    with pytest.raises(InputError, match=r"^split calendar: no example to evaluate on in .*calendar_test\.json"):
        CitodEvaluator(["calendar"], tmp_path)(Unused())


def test_the_table_says_how_many_dialogues_each_split_is_about():
    # evaluate --limit 5 showed "Human-bot accuracy | 0.00 | 84.69" with nothing saying it was over 5 dialogues
    from dialcheck.evaluation.decode import to_markdown

    table = to_markdown({"human_bot/n": 5.0, "human_bot/accuracy": 40.0, "rct/n": 2011.0, "rct/accuracy": 80.0})
    assert table.splitlines()[2:] == [
        "| Human-bot dialogues | 5 |  |",
        "| Human-bot accuracy | 40.00 | 84.69 |",
        "| RCT dialogues | 2011 |  |",
        "| RCT accuracy | 80.00 | 78.40 |",
    ]


def test_labelled_dialogues_read_from_stdin_are_a_split_named_stdin(monkeypatch):
    # evaluate --data - reported its rows as "-: dialogues", "-: accuracy" and a split "-" in --json and --predictions
    import json

    from dialcheck.evaluation.decode import DecodeEvaluator

    rec = {"turns": ["I have a dog.", "Nice!", "I have no pets."], "contradiction": True}
    feed_stdin(monkeypatch, json.dumps(rec) + "\n", buffer=False)
    ev = DecodeEvaluator(files=["-"])
    assert list(ev.files) == ["stdin"] and len(ev.files["stdin"]) == 1


def test_the_table_of_a_file_says_how_many_contradictions_strict_accuracy_left_out():
    # strict accuracy and evidence F1 of a --data file are over the dialogues whose evidence is known; the table
    # gave them beside "dialogues: 4" without saying that one contradiction (no evidence turns) was not among them
    from dialcheck.evaluation.decode import to_markdown

    examples = [_ex(True, (2,)), _ex(True, None), _ex(False, ()), _ex(False, ())]
    verdicts = [Verdict(True, 0.9, (2,), None, {0: 0.1, 2: 0.9})] + [Verdict(False, 0.1, (), None, {0: 0.1})] * 3
    m = decode_metrics("mylogs", examples, verdicts)
    assert m["strict_accuracy"] == 100.0 and m["n"] == 4  # 3 of 3 with known evidence
    table = to_markdown({f"mylogs/{k}": v for k, v in m.items()})
    assert "| mylogs: contradictions without evidence turns (not in strict accuracy, evidence F1) | 1 |  |" in table
