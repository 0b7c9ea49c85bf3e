"""The cascade: a fast detector decides outside a band of its scores, a second one re-reads the rest."""

import itertools
import json
import math
import os
import re

import numpy as np
import pytest

from dialcheck.detectors import CascadeDetector, Detector, load_detector, register_detector
from dialcheck.detectors.cascade import choose_band
from dialcheck.errors import InputError, ModelError
from dialcheck.io import as_dialogues
from dialcheck.schema import Verdict
from helpers_cli import run_cli
from test_soup import _variant


@register_detector("test.scripted.v1")
class Scripted(Detector):
    """Scores each dialogue by a table keyed on its last turn (what each stage says is fixed by the test)."""

    def predict(self, dialogues, batch_size=64, show_progress_bar=False):
        table = self.config.options["table"]
        self.config.options["seen"] = self.config.options.get("seen", 0) + len(dialogues)
        out = []
        for d in as_dialogues(dialogues):
            s = table[d.turns[-1].text]
            out.append(Verdict(s >= self.tau, s, (0,) if s >= self.tau else (), self.config.options["name"]))
        return out


def _scripted(name, table, tau):
    det = Scripted(tau=tau, eta_e=tau, name=name, table=table)
    return det


FIRST = {"a": 0.05, "b": 0.3, "c": 0.5, "d": 0.7, "e": 0.97}
SECOND = {"a": 0.9, "b": 0.9, "c": 0.1, "d": 0.8, "e": 0.1}
DIALOGUES = [["x", "y", t] for t in "abcde"]


def test_the_first_decides_outside_the_band_and_the_second_inside():
    first, second = _scripted("fast", FIRST, 0.5), _scripted("slow", SECOND, 0.5)
    det = CascadeDetector.build(first, second, low=0.3, high=0.7)
    got = det.predict(DIALOGUES)
    assert [v.category for v in got] == ["fast", "slow", "slow", "slow", "fast"]
    assert [v.contradiction for v in got] == [False, True, False, True, True]
    assert [v.score for v in got] == [0.05, 0.9, 0.1, 0.8, 0.97]  # the deciding detector's own score
    assert second.config.options["seen"] == 3  # only the band is read twice
    # a band of everything is the second detector; a band of tau alone is the first
    assert [v.category for v in CascadeDetector.build(first, second, 0.0, 1.0).predict(DIALOGUES)] == ["slow"] * 5
    assert [v.category for v in CascadeDetector.build(first, second, 0.5, 0.5).predict(DIALOGUES)] == [
        "fast", "fast", "slow", "fast", "fast",
    ]  # fmt: skip


def test_tau_and_eta_e_are_the_second_detectors():
    first, second = _scripted("fast", FIRST, 0.5), _scripted("slow", SECOND, 0.5)
    det = CascadeDetector.build(first, second, 0.0, 1.0)
    det.tau = 0.85
    assert second.tau == 0.85 and first.tau == 0.5
    assert [v.contradiction for v in det.predict(DIALOGUES)] == [True, True, False, False, False]


def test_a_band_that_leaves_out_the_first_detectors_tau_is_refused():
    first, second = _scripted("fast", FIRST, 0.5), _scripted("slow", SECOND, 0.5)
    with pytest.raises(ModelError, match="must hold the first detector's tau"):
        CascadeDetector.build(first, second, 0.6, 0.9)


def _brute_force(s, flags, tau, budget):
    """The fewest re-read dialogues over every band [low, high] with low <= tau <= high."""
    cuts = sorted({0.0, tau, 1.0, *s})
    best = len(s)
    for lo, hi in itertools.product(cuts, cuts):
        if not lo <= tau <= hi:
            continue
        below, above = s < lo, s > hi
        wrong = int(np.sum(below & flags) + np.sum(above & ~flags))
        if wrong <= budget:
            best = min(best, int(np.sum(~below & ~above)))
    return best


@pytest.mark.parametrize("seed", range(30))
def test_choose_band_rereads_the_fewest_within_the_disagreement_allowed(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 25))
    s = np.round(rng.random(n), 1)  # ties on purpose
    flags = rng.random(n) < s  # the second detector mostly agrees with the first's ranking
    tau, share = float(rng.choice([0.3, 0.5, 0.7])), float(rng.choice([0.0, 0.1, 0.25]))
    low, high = choose_band(s, flags, tau, share)
    assert low <= tau <= high
    below, above = s < low, s > high
    budget = int(np.floor(share * n + 1e-9))
    assert np.sum(below & flags) + np.sum(above & ~flags) <= budget
    assert int(np.sum(~below & ~above)) == _brute_force(s, flags, tau, budget)


def test_choose_band_refuses_mismatched_input():
    with pytest.raises(InputError, match="one second-detector verdict per"):
        choose_band([0.1, 0.2], [True], 0.5)
    with pytest.raises(InputError, match="max_disagreement"):
        choose_band([0.1], [True], 0.5, max_disagreement=1.0)


LABELLED = [
    {"turns": ["I have a cat.", "Nice.", "I have no pets."], "contradiction": True, "evidence": [0]},
    {"turns": ["I live in Rome.", "Cool.", "I live in Paris."], "contradiction": True, "evidence": [0]},
    {"turns": ["I like tea.", "Me too.", "Tea is great."], "contradiction": False},
    {"turns": ["I am a nurse.", "Hard work?", "Yes, long shifts."], "contradiction": False},
]


def test_train_task_cascade_chooses_the_band_and_saves_a_loadable_folder(capsys, tmp_path, tiny_detector_dir):
    a = _variant(tiny_detector_dir, tmp_path / "fast", 1)
    b = _variant(tiny_detector_dir, tmp_path / "slow", 2)
    logs = tmp_path / "val.jsonl"
    logs.write_text("".join(json.dumps(r) + "\n" for r in LABELLED))
    out = tmp_path / "cascade"
    args = ["train", "--task", "cascade", "--out", str(out), "--calibrate-on", str(logs), "--max-disagreement", "0"]
    code, _, err = run_cli(capsys, *args, "--init", str(a))
    assert code == 2 and "--init FAST SLOW" in err and not out.exists()
    code, _, err = run_cli(capsys, *args, "--init", str(a), str(b))
    assert code == 0, err
    assert sorted(p.name for p in out.iterdir()) == ["MODEL_CARD.md", "dialcheck.json", "first", "second"]
    cfg = json.loads((out / "dialcheck.json").read_text())
    assert cfg["detector"] == "cascade.v1" and cfg["options"] == {"first": "first", "second": "second"}
    assert cfg["metrics"]["val_disagreement"] == 0.0  # --max-disagreement 0: the second's verdicts exactly
    assert [s["folder"] for s in cfg["training"]["stages"].values()] == [str(a), str(b)]
    det = load_detector(out)
    slow = load_detector(b)
    dialogues = [r["turns"] for r in LABELLED]
    assert [v.contradiction for v in det.predict(dialogues)] == [v.contradiction for v in slow.predict(dialogues)]
    code, out_json, err = run_cli(capsys, "check", "--model", str(out), "--json", str(logs))
    assert code == 0, err
    assert [set(json.loads(line)) >= {"contradiction", "score", "evidence"} for line in out_json.splitlines()] == [
        True
    ] * 4
    card = (out / "MODEL_CARD.md").read_text()
    assert "A cascade" in card and "| 0.05 | [" in card  # the other --max-disagreement values, measured
    assert set(cfg["training"]["other_bands"]) == {"0.01", "0.02", "0.05", "0.1"}


def test_a_shipped_stage_is_named_not_copied(tmp_path, tiny_detector_dir):
    from dialcheck.detectors import default_model_path

    shipped = default_model_path().parent / "decode-utterance-minilm-v10"
    fast = load_detector(shipped)
    slow = load_detector(tiny_detector_dir)
    det = CascadeDetector.build(fast, slow, 0.0, 1.0).save(tmp_path / "c")
    assert json.loads((det / "dialcheck.json").read_text())["options"]["first"] == shipped.name
    assert sorted(p.name for p in det.iterdir()) == ["dialcheck.json", "second"]
    back = load_detector(det)
    assert back.first.path == shipped and back.band == (0.0, 1.0)


def test_int8_switches_both_stages_and_is_reported_once(tiny_detector_dir):
    from dialcheck.api import accelerate

    det = CascadeDetector.build(load_detector(tiny_detector_dir), load_detector(tiny_detector_dir), 0.0, 1.0)
    accelerate(det, int8=True)
    assert det.first.config.options.get("int8") and det.second.config.options.get("int8")
    assert det.config.options["int8"] and "int8" not in json.loads(det.config.to_json())["options"]


def test_serve_answers_with_a_cascade(tiny_detector_dir):
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from dialcheck.serve import ComputeThread
    from dialcheck.serve.app import create_app

    ct = ComputeThread()
    det = ct.run(
        lambda: CascadeDetector.build(load_detector(tiny_detector_dir), load_detector(tiny_detector_dir), 0, 1)
    )
    dialogue = ["I have two dogs.", "Nice!", "I never had a dog."]
    with TestClient(create_app(det, compute=ct)) as client:
        r = client.post("/check", json={"turns": dialogue})
        health = client.get("/health").json()
    assert r.status_code == 200
    assert r.json()["verdicts"][0]["score"] == pytest.approx(ct.run(lambda: det.predict([dialogue])[0].score), abs=1e-6)
    assert health["detector"] == "cascade.v1" and health["thresholds"]["recheck_high"] == 1.0


STAR_WARS = ["I am a huge fan of star wars.", "I have never seen a star wars movie.", "Neither have I."]


def test_a_reading_option_set_on_the_cascade_reaches_both_stages_and_is_saved(capsys, tmp_path, tiny_detector_dir):
    det = CascadeDetector.build(load_detector(tiny_detector_dir), load_detector(tiny_detector_dir), 0.0, 1.0)
    off = det.predict([STAR_WARS])[0].score
    det.ellipsis = "resolve"
    assert det.first.ellipsis == det.second.ellipsis == det.ellipsis == "resolve"
    on = det.predict([STAR_WARS])[0].score
    assert on != off  # the band holds everything: the second stage's reading decides
    folder = det.save(tmp_path / "c")
    assert json.loads((folder / "dialcheck.json").read_text())["options"]["readings"] == {"ellipsis": "resolve"}
    assert "ellipsis" not in json.loads((folder / "second" / "dialcheck.json").read_text())["options"]
    back = load_detector(folder)
    assert back.second.ellipsis == "resolve" and back.predict([STAR_WARS])[0].score == pytest.approx(on, abs=1e-6)
    f = tmp_path / "d.json"
    f.write_text(json.dumps(STAR_WARS))
    code, out, err = run_cli(capsys, "check", str(f), "--json", "--model", str(folder), "--ellipsis", "off")
    assert code == 0, err
    assert json.loads(out)["score"] == pytest.approx(off, abs=1e-6)
    cfg = json.loads((folder / "dialcheck.json").read_text())
    cfg["options"]["readings"] = {"ellipsis": "on"}
    (folder / "dialcheck.json").write_text(json.dumps(cfg))
    with pytest.raises(ModelError, match=r"dialcheck.json: options.readings.ellipsis"):
        load_detector(folder)


def test_train_task_cascade_reads_both_stages_as_told_and_chooses_slows_thresholds_again(
    capsys, tmp_path, tiny_detector_dir
):
    a = _variant(tiny_detector_dir, tmp_path / "fast", 1)
    b = _variant(tiny_detector_dir, tmp_path / "slow", 2)
    slow_tau = load_detector(b).tau
    logs = tmp_path / "val.jsonl"
    rows = [*LABELLED, {"turns": STAR_WARS, "contradiction": True, "evidence": [0]}]
    logs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "cascade"
    args = ["train", "--task", "cascade", "--init", str(a), str(b), "--calibrate-on", str(logs), "--out", str(out)]
    readings = ["--ellipsis", "resolve", "--questions", "skip", "--subjects", "apart", "--introductions", "settle"]
    readings += ["--times", "settle"]
    code, _, err = run_cli(capsys, *args, *readings, "--prefer-onnx")
    assert code == 0, err
    cfg = json.loads((out / "dialcheck.json").read_text())
    assert cfg["options"]["readings"] == {
        "ellipsis": "resolve",
        "questions": "skip",
        "subjects": "apart",
        "introductions": "settle",
        "times": "settle",
    }
    assert cfg["options"]["runtime"] == "onnx"  # dialcheck.load() runs it on ONNX Runtime where installed
    again = cfg["training"]["second_recalibrated"]
    assert again["tau_before"] == slow_tau and cfg["thresholds"]["tau"] == again["tau"]
    # the saved stages keep their own readings; the cascade sets its own on both when it loads
    assert "ellipsis" not in json.loads((out / "second" / "dialcheck.json").read_text())["options"]
    card = (out / "MODEL_CARD.md").read_text()
    both = "`ellipsis: resolve`, `questions: skip`, `subjects: apart`, `introductions: settle`, `times: settle`"
    assert f"Both stages read dialogues with {both}." in card
    assert f"tau {slow_tau} -> {again['tau']}" in card
    det = load_detector(out)
    assert det.first.ellipsis == det.second.ellipsis == "resolve" and det.second.questions == "skip"
    assert det.first.subjects == det.second.subjects == "apart"
    assert det.first.introductions == det.second.introductions == det.first.times == det.second.times == "settle"
    assert det.tau == again["tau"]
    # a reading SLOW already has leaves its thresholds as they were
    code, _, err = run_cli(capsys, *args[:-1], str(tmp_path / "c2"), "--questions", "read")
    assert code == 0, err
    cfg = json.loads((tmp_path / "c2" / "dialcheck.json").read_text())
    assert cfg["training"]["second_recalibrated"] is None and cfg["thresholds"]["tau"] == slow_tau
    assert "runtime" not in cfg["options"]


def test_train_task_cascade_on_onnx_int8_chooses_its_thresholds_on_int8_scores_and_prefers_that_runtime(
    capsys, tmp_path, tiny_detector_dir, monkeypatch
):
    pytest.importorskip("onnxruntime")
    import dialcheck
    from dialcheck.api import accelerate
    from dialcheck.training.trainer import calibrate

    monkeypatch.setenv("DIALCHECK_CACHE", str(tmp_path / "cache"))
    a = _variant(tiny_detector_dir, tmp_path / "fast", 1)
    b = _variant(tiny_detector_dir, tmp_path / "slow", 2)
    logs = tmp_path / "val.jsonl"
    rows = [*LABELLED, {"turns": STAR_WARS, "contradiction": True, "evidence": [0]}]
    logs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "cascade"
    args = ["train", "--task", "cascade", "--init", str(a), str(b), "--calibrate-on", str(logs), "--out", str(out)]
    code, _, err = run_cli(capsys, "train", "--init", str(a), "--out", str(out), "--runtime", "onnx-int8")
    assert code == 2 and "--runtime and --prefer-onnx apply to --task cascade" in err and not out.exists()
    code, _, err = run_cli(capsys, *args, "--runtime", "onnx-int8")
    assert code == 0, err
    cfg = json.loads((out / "dialcheck.json").read_text())
    assert cfg["options"]["runtime"] == "onnx-int8" and cfg["training"]["calibrated_on_runtime"] == "onnx-int8"
    # SLOW's thresholds are the training rule's choice on its int8 scores of the same dialogues
    slow = accelerate(load_detector(b), onnx=True, int8=True)
    from dialcheck.cli.common import read_labelled

    expected = calibrate(slow, read_labelled(str(logs))[0])
    assert cfg["thresholds"]["tau"] == pytest.approx(expected["tau"]) == cfg["training"]["second_recalibrated"]["tau"]
    assert "Both stages read the validation dialogues on `onnx-int8`" in (out / "MODEL_CARD.md").read_text()
    # dialcheck.load() runs it where it was calibrated
    det = dialcheck.load(out)
    assert det.config.options["onnx"] is True and det.config.options["int8"] is True
    assert det.first.config.options["int8"] is True and det.second.config.options["int8"] is True
    # the card shows what the folder holds, not this process's switch
    from dialcheck.training.card import write_model_card

    write_model_card(out, det.config)
    card = (out / "MODEL_CARD.md").read_text()
    assert "'runtime': 'onnx-int8'" in card and "'int8': True" not in card


class Pairs(Scripted):
    """A scripted stage that scores each earlier turn by a table keyed on (turn text, last turn)."""

    def predict(self, dialogues, batch_size=64, show_progress_bar=False):
        return [self._verdict(scores) for scores in self._scores(dialogues, None)]

    def predict_turns(self, dialogues, turns, batch_size=64):
        self.config.options["read"] = self.config.options.get("read", 0) + sum(len(t) for t in turns)
        return [self._verdict(scores) for scores in self._scores(dialogues, turns)]

    def _verdict(self, scores):
        s = max(scores.values(), default=0.0)
        named = tuple(i for i in scores if scores[i] >= self.eta_e) if s >= self.tau else ()
        return Verdict(s >= self.tau, s, named, self.config.options["name"], scores)

    def score_turns(self, dialogues, turns, batch_size=64):
        self.config.options["scored"] = self.config.options.get("scored", 0) + sum(len(t) for t in turns)
        return self._scores(dialogues, turns)

    def _scores(self, dialogues, only):
        table = self.config.options["table"]
        return [
            {
                i: table[f"{t.text}|{d.turns[-1].text}"]
                for i, t in enumerate(d.turns[:-1])
                if only is None or i in only[k]
            }
            for k, d in enumerate(as_dialogues(dialogues))
        ]


def _pairs_stage(name, table, eta_e=0.9):
    return Pairs(tau=0.5, eta_e=eta_e, name=name, table=table)


# three earlier turns, the last turn "z"; the fast stage is sure (above the band) of the first two dialogues
EVIDENCE_DIALOGUES = [["a", "b", "c", "z"], ["d", "e", "f", "z"], ["g", "h", "i", "z"], ["j", "k", "l", "z"]]
FAST = {"a|z": 0.99, "b|z": 0.97, "c|z": 0.1, "d|z": 0.985, "e|z": 0.96, "f|z": 0.95, "g|z": 0.99, "h|z": 0.2}
FAST |= {"i|z": 0.1, "j|z": 0.7, "k|z": 0.95, "l|z": 0.1}
SLOW = {"a|z": 0.3, "b|z": 0.95, "c|z": 0.99, "d|z": 0.5, "e|z": 0.6, "f|z": 0.4, "g|z": 0.1, "h|z": 0.99}
SLOW |= {"i|z": 0.1, "j|z": 0.96, "k|z": 0.97, "l|z": 0.1}


def test_confirm_keeps_the_turns_the_second_stage_also_names_and_changes_no_verdict():
    first, second = _pairs_stage("fast", FAST), _pairs_stage("slow", SLOW)
    det = CascadeDetector.build(first, second, low=0.3, high=0.98)
    shipped = det.predict(EVIDENCE_DIALOGUES)
    assert [v.evidence for v in shipped] == [(0, 1), (0, 1, 2), (0,), (0, 1)]
    assert [v.category for v in shipped] == ["fast", "fast", "fast", "slow"]
    det.evidence = "confirm"
    got = det.predict(EVIDENCE_DIALOGUES)
    assert [(v.contradiction, v.score, v.category) for v in got] == [
        (v.contradiction, v.score, v.category) for v in shipped
    ]
    # 1: of (0, 1) the second scores only 1 >= 0.9 (turn 2, which the first did not name, stays out);
    # 2: none of (0, 1, 2) reaches 0.9: the one it scores highest; 3: one turn named, kept unread;
    # 4: re-read by the second inside the band: its own evidence
    assert [v.evidence for v in got] == [(1,), (1,), (0,), (0, 1)]
    assert second.config.options["scored"] == 5  # only the turns the first named, of the two sure dialogues
    assert det.config.options["evidence"] == "confirm"
    det.evidence = "first"
    assert "evidence" not in det.config.options and det.predict(EVIDENCE_DIALOGUES) == shipped
    with pytest.raises(ValueError, match="expected one of"):
        det.evidence = "second"


def test_the_evidence_benchmark_measures_each_policy_on_the_same_verdicts(load_benchmark):
    bench = load_benchmark("cascade_evidence")
    det = CascadeDetector.build(_pairs_stage("fast", FAST), _pairs_stage("slow", SLOW), low=0.3, high=0.98)
    by_policy, reads = bench.policy_verdicts(det, EVIDENCE_DIALOGUES)
    assert set(by_policy) == set(bench.POLICIES) and det.evidence == "first"  # the cascade is left as it was
    first = [(v.contradiction, v.score) for v in by_policy["first"]]
    assert all([(v.contradiction, v.score) for v in verdicts] == first for verdicts in by_policy.values())
    assert [v.evidence for v in by_policy["first"]] == [(0, 1), (0, 1, 2), (0,), (0, 1)]
    # the slow stage's own rule on the three sure dialogues (its top turn where none reaches 0.9)
    assert [v.evidence for v in by_policy["second"]] == [(1, 2), (1,), (1,), (0, 1)]
    assert [v.evidence for v in by_policy["confirm"]] == [(1,), (1,), (0,), (0, 1)]
    # add: the single turn of the third gets the turn the slow stage scores 0.99 beside it
    assert [v.evidence for v in by_policy["add"]] == [(1,), (1,), (0, 1), (0, 1)]
    # band: of the slow stage's (0, 1) inside the band, the fast stage scores only turn 1 >= 0.9
    assert [v.evidence for v in by_policy["band"]] == [(1,), (1,), (0,), (1,)]
    assert reads == {"first": 0, "second": 3, "confirm": 2, "add": 3, "band": 2}


def _tiny_stages(tiny_detector_dir, tmp_path):
    """Two tiny utterance detectors with different weights, saved as tmp_path / "fast" and "slow"."""
    return _variant(tiny_detector_dir, tmp_path / "fast", 1), _variant(tiny_detector_dir, tmp_path / "slow", 2)


def _set_in_config(folder, section, key, value):
    cfg = json.loads((folder / "dialcheck.json").read_text())
    cfg[section][key] = value
    (folder / "dialcheck.json").write_text(json.dumps(cfg))


def test_confirm_on_a_real_cascade_names_a_subset_of_the_first_stages_turns(tmp_path, tiny_detector_dir):
    fast, slow = _tiny_stages(tiny_detector_dir, tmp_path)
    cfg = json.loads((fast / "dialcheck.json").read_text())
    cfg["thresholds"] |= {"tau": 0.0, "eta_e": 0.0}  # every dialogue is the first's, and names every turn
    (fast / "dialcheck.json").write_text(json.dumps(cfg))
    det = CascadeDetector.build(load_detector(fast), load_detector(slow), 0.0, 0.0)
    det.tau, det.second.eta_e = 0.0, 0.5  # a tau inside the band [0, 0]: the second stage decides nothing
    dialogues = [["I have a cat.", "Nice.", "I like dogs.", "Cool.", "I have no pets."], ["A", "B", "C", "D", "E"]]
    shipped = det.predict(dialogues)
    det.evidence = "confirm"
    got = det.predict(dialogues)
    slow_scores = det.second.predict(dialogues)
    for s, g, v in zip(shipped, got, slow_scores, strict=True):
        assert (g.contradiction, g.score) == (s.contradiction, s.score) and set(g.evidence) <= set(s.evidence)
        want = [i for i in s.evidence if v.pair_scores[i] >= 0.5] or [max(v.pair_scores, key=v.pair_scores.get)]
        assert list(g.evidence) == want
    out = det.save(tmp_path / "confirm")
    assert load_detector(out).evidence == "confirm"
    _set_in_config(out, "options", "evidence", "all")
    with pytest.raises(ModelError, match=r"options\.evidence: expected one of"):
        load_detector(out)


def _labelled_logs(tmp_path):
    """LABELLED written as a JSONL file of dialogues."""
    logs = tmp_path / "d.jsonl"
    logs.write_text("".join(json.dumps(r) + "\n" for r in LABELLED))
    return logs


def _saved_tiny_cascade(tiny_detector_dir, folder):
    """The tiny detector as both stages of a cascade that re-reads everything, saved to ``folder``."""
    det = CascadeDetector.build(load_detector(tiny_detector_dir), load_detector(tiny_detector_dir), 0.0, 1.0)
    return det.save(folder)


def test_cascade_evidence_on_the_command_line(capsys, tmp_path, tiny_detector_dir):
    logs = _labelled_logs(tmp_path)
    code, _, err = run_cli(
        capsys, "check", "--model", str(tiny_detector_dir), "--cascade-evidence", "confirm", str(logs)
    )
    assert code == 2 and "--cascade-evidence applies to a cascade" in err
    src = _saved_tiny_cascade(tiny_detector_dir, tmp_path / "c")
    out = tmp_path / "c-confirm"
    code, _, err = run_cli(capsys, "models", str(src), "--save", str(out), "--cascade-evidence", "confirm")
    assert code == 0, err
    cfg = json.loads((out / "dialcheck.json").read_text())
    assert (
        cfg["options"]["evidence"] == "confirm"
        and "--cascade-evidence confirm" in cfg["training"]["derived_from"]["command"]
    )
    code, _, err = run_cli(capsys, "check", "--model", str(out), "--cascade-evidence", "first", "--json", str(logs))
    assert code == 0, err


# two dialogues in the band [0.3, 0.98]: the slow stage flags each on a turn the fast one scored low
FLOOR_DIALOGUES = [["p", "q", "r", "z"], ["s", "t", "z"]]
FAST_LOW = {"p|z": 0.6, "q|z": 0.01, "r|z": 0.3, "s|z": 0.5, "t|z": 0.4}
SLOW_LOW = {"p|z": 0.2, "q|z": 0.95, "r|z": 0.4, "s|z": 0.9, "t|z": 0.95}


# the slow stage's scores where it re-read a turn, the fast stage's elsewhere: every paired turn keeps one
ALL_SLOW = [{0: 0.2, 1: 0.95, 2: 0.4}, {0: 0.9, 1: 0.95}]
TOP_ONLY = [{0: 0.2, 1: 0.01, 2: 0.3}, {0: 0.9, 1: 0.4}]


@pytest.mark.parametrize(
    "floor, want, read, scores",
    [
        # every turn re-read: the slow stage's verdicts
        (0.0, [(True, 0.95, (1,)), (True, 0.95, (0, 1))], None, ALL_SLOW),
        # turn 1 of the first (0.01) is not read
        (0.05, [(False, 0.4, ()), (True, 0.95, (0, 1))], 4, [{0: 0.2, 1: 0.01, 2: 0.4}, {0: 0.9, 1: 0.95}]),
        # only 0.6 and 0.5 reach the floor
        (0.45, [(False, 0.2, ()), (True, 0.9, (0,))], 2, TOP_ONLY),
        # none does: the fast stage's highest turn alone
        (1.0, [(False, 0.2, ()), (True, 0.9, (0,))], 2, TOP_ONLY),
    ],
)
def test_recheck_floor_rereads_only_the_turns_the_fast_stage_did_not_rule_out(floor, want, read, scores):
    first, second = _pairs_stage("fast", FAST_LOW), _pairs_stage("slow", SLOW_LOW)
    det = CascadeDetector.build(first, second, low=0.3, high=0.98)
    det.recheck_floor = floor
    got = det.predict(FLOOR_DIALOGUES)
    assert [(v.contradiction, v.score, v.evidence) for v in got] == want
    assert [v.category for v in got] == ["slow", "slow"]
    assert [v.pair_scores for v in got] == scores
    assert second.config.options.get("read") == read  # None: the whole dialogues were read by predict
    assert ("recheck_floor" in det.config.thresholds) == (floor > 0)


def test_recheck_floor_needs_a_second_stage_that_scores_pairs():
    det = CascadeDetector.build(_scripted("fast", FIRST, 0.5), _scripted("slow", SECOND, 0.5), low=0.3, high=0.7)
    det.recheck_floor = 0.1
    with pytest.raises(ModelError, match="recheck_floor needs a second stage that scores pairs"):
        det.predict(DIALOGUES)


def test_recheck_floor_on_a_real_cascade_is_the_second_stages_verdict_on_those_turns(tmp_path, tiny_detector_dir):
    fast, slow = _tiny_stages(tiny_detector_dir, tmp_path)
    det = CascadeDetector.build(load_detector(fast), load_detector(slow), 0.0, 1.0)  # every dialogue re-read
    dialogues = [["I have a cat.", "Nice.", "I like dogs.", "Cool.", "I have no pets.", "Oh.", "I own a parrot."]]
    full = det.predict(dialogues)
    assert set(full[0].pair_scores) == {0, 2, 4}
    det.recheck_floor = 1.0  # no turn reaches it: the first stage's highest turn alone
    fast_scores = det.first.predict(dialogues)[0].pair_scores
    top = max(fast_scores, key=fast_scores.get)
    got = det.predict(dialogues)[0]
    assert got.pair_scores == {
        i: pytest.approx(full[0].pair_scores[i] if i == top else fast_scores[i], abs=1e-6) for i in (0, 2, 4)
    }  # the slow stage read the top turn alone; the others keep the fast stage's scores
    assert got.score == pytest.approx(full[0].pair_scores[top], abs=1e-6)
    assert got.contradiction == (full[0].pair_scores[top] >= det.tau)
    out = det.save(tmp_path / "floor")
    assert load_detector(out).recheck_floor == 1.0
    with pytest.raises(InputError, match=r"^recheck_floor: expected a number in \[0, 1\], got 1.5$"):
        det.recheck_floor = 1.5
    _set_in_config(out, "thresholds", "recheck_floor", "high")
    with pytest.raises(ModelError, match=r"thresholds\.recheck_floor: expected a number"):
        load_detector(out)


def test_band_and_floor_are_checked_however_they_enter_a_cascade(tmp_path, tiny_detector_dir):
    first, second = _scripted("fast", FIRST, 0.5), _scripted("slow", SECOND, 0.5)
    with pytest.raises(InputError, match=r"^recheck_low: expected a number in \[0, 1\], got string$"):
        CascadeDetector.build(first, second, "x", 1.0)
    with pytest.raises(InputError, match=r"^recheck_high: expected a number in \[0, 1\], got nan$"):
        CascadeDetector.build(first, second, 0.0, math.nan)
    det = CascadeDetector.build(first, second, 0.0, 1.0)
    with pytest.raises(InputError, match=r"^recheck_floor: expected a number in \[0, 1\], got boolean$"):
        det.recheck_floor = True
    out = _saved_tiny_cascade(tiny_detector_dir, tmp_path / "c")
    where = re.escape(str(out / "dialcheck.json"))
    _set_in_config(out, "thresholds", "recheck_high", 1.5)
    message = r"thresholds\.recheck_high: expected a number in \[0, 1\], got 1.5"
    with pytest.raises(ModelError, match=rf"^{where}: {message}$"):
        load_detector(out)
    _set_in_config(out, "thresholds", "recheck_high", 0.2)  # in [0, 1], but below the first stage's tau (0.5)
    with pytest.raises(ModelError, match=rf"^{where}: thresholds\.recheck_low, recheck_high: the band \[0.0, 0.2\]"):
        load_detector(out)


def test_recheck_floor_on_the_command_line(capsys, tmp_path, tiny_detector_dir):
    logs = _labelled_logs(tmp_path)
    code, _, err = run_cli(capsys, "check", "--model", str(tiny_detector_dir), "--recheck-floor", "0.1", str(logs))
    assert code == 2 and "--recheck-floor applies to a cascade" in err
    src = _saved_tiny_cascade(tiny_detector_dir, tmp_path / "c")
    with pytest.raises(SystemExit) as e:  # argparse: usage and the option's error, whatever the model
        run_cli(capsys, "check", "--model", str(src), "--recheck-floor", "2", str(logs))
    assert e.value.code == 2 and "--recheck-floor: must lie in [0, 1], got 2" in capsys.readouterr().err
    out = tmp_path / "c-floor"
    code, _, err = run_cli(capsys, "models", str(src), "--save", str(out), "--recheck-floor", "0.05")
    assert code == 0, err
    cfg = json.loads((out / "dialcheck.json").read_text())
    assert cfg["thresholds"]["recheck_floor"] == 0.05
    assert "--recheck-floor 0.05" in cfg["training"]["derived_from"]["command"]
    code, out_json, err = run_cli(capsys, "check", "--model", str(out), "--recheck-floor", "0", "--json", str(logs))
    assert code == 0, err
    assert len(out_json.splitlines()) == len(LABELLED)


def test_the_floor_benchmark_counts_what_the_cascade_changes_at_each_floor(load_benchmark):
    from types import SimpleNamespace

    bench = load_benchmark("recheck_floor")
    dialogues = FLOOR_DIALOGUES + EVIDENCE_DIALOGUES  # the second group: three above the band, one in it
    det = CascadeDetector.build(_pairs_stage("fast", FAST_LOW | FAST), _pairs_stage("slow", SLOW_LOW | SLOW), 0.3, 0.98)
    examples = [SimpleNamespace(dialogue=as_dialogues([d])[0], label=True) for d in dialogues]
    rows = bench.band_rows(det, examples)
    assert len(rows) == 3  # the two floor dialogues and the last evidence one
    full = det.predict(dialogues)
    for floor in (0.05, 0.45, 1.0):
        det.recheck_floor = floor
        got = det.predict(dialogues)
        det.recheck_floor = 0.0
        c = bench.floor_changes(rows, floor, det.tau, det.eta_e)
        assert c["verdicts"] == sum(g.contradiction != f.contradiction for g, f in zip(got, full, strict=True))
        assert c["evidence"] == sum(
            g.contradiction == f.contradiction and set(g.evidence) != set(f.evidence)
            for g, f in zip(got, full, strict=True)
        )
        assert c["right"] == sum(g.contradiction for g in got) - sum(f.contradiction for f in full)  # all gold True
        assert c["pairs"] == 8  # 3 + 2 + 3 turns re-read in full
    assert bench.floor_changes(rows, 0.45, det.tau, det.eta_e) == {
        "pairs": 8, "read": 4, "verdicts": 1, "right": -1, "evidence": 1,
    }  # fmt: skip


def test_recalibrate_tau_reads_the_cascades_own_final_scores():
    from dialcheck.schema import Example
    from dialcheck.training.recalibrate import recalibrate_tau

    first, second = _scripted("fast", FIRST, 0.5), _scripted("slow", SECOND, 0.5)
    det = CascadeDetector.build(first, second, low=0.3, high=0.7)  # final scores 0.05, 0.9, 0.1, 0.8, 0.97
    gold = [False, True, False, True, True]
    examples = [Example(as_dialogues([d])[0], g) for d, g in zip(DIALOGUES, gold, strict=True)]
    got = recalibrate_tau(det, examples)
    # every threshold in (0.1, 0.8] separates them: the candidates are midpoints, 0.45 the only one between;
    # the slow stage alone (0.9, 0.9, 0.1, 0.8, 0.1) would separate nothing so cleanly
    assert got["tau"] == 0.45 and det.tau == 0.45 and second.tau == 0.45 and first.tau == 0.5
    assert got["val_balanced_accuracy"] == 1.0 and got["tau_before"] == 0.5 and got["dialogues"] == 5
    assert got["val_balanced_accuracy_before"] == 1.0  # 0.5 separates them as well


def test_models_save_recalibrate_chooses_tau_on_the_derived_models_verdicts(capsys, tmp_path, tiny_detector_dir):
    import dialcheck
    from dialcheck.evaluation.metrics import balanced_accuracy, best_threshold

    logs = _labelled_logs(tmp_path)
    src = _saved_tiny_cascade(tiny_detector_dir, tmp_path / "c")
    out = tmp_path / "c-again"
    code, _, err = run_cli(capsys, "models", str(src), "--save", str(out), "--recalibrate", "--calibrate-on", str(logs))
    assert code == 0, err
    cfg = json.loads((out / "dialcheck.json").read_text())
    scores = [v.score for v in dialcheck.load(src).predict([r["turns"] for r in LABELLED])]
    want, _ = best_threshold(scores, [r["contradiction"] for r in LABELLED], balanced_accuracy, one_se=True)
    t = cfg["training"]["derived_from"]
    assert cfg["thresholds"]["tau"] == want == t["recalibrated"]["tau"] and t["recalibrated"]["on"] == str(logs)
    assert t["command"].endswith(f"--recalibrate --calibrate-on {logs}")
    assert cfg["thresholds"]["recheck_low"] == 0.0 and cfg["thresholds"]["recheck_high"] == 1.0  # the band is kept


def test_models_save_recalibrate_refuses_tau_a_lone_file_option_and_one_label(capsys, tmp_path, tiny_detector_dir):
    logs = _labelled_logs(tmp_path)
    src = _saved_tiny_cascade(tiny_detector_dir, tmp_path / "c")
    code, _, err = run_cli(capsys, "models", str(src), "--save", str(tmp_path / "a"), "--recalibrate", "--tau", "0.6")
    assert code == 2 and "not both" in err
    code, _, err = run_cli(capsys, "models", str(src), "--save", str(tmp_path / "b"), "--calibrate-on", str(logs))
    assert code == 2 and "--calibrate-on is read by --recalibrate only" in err
    one = tmp_path / "one.jsonl"
    one.write_text(json.dumps(LABELLED[0]) + "\n")
    out = tmp_path / "d"
    code, _, err = run_cli(capsys, "models", str(src), "--save", str(out), "--recalibrate", "--calibrate-on", str(one))
    assert code == 2 and "both labels" in err and str(one) in err and not out.exists()


def _int8_cascade(tiny_detector_dir, folder, tau_int8):
    """The tiny cascade saved as one calibrated on ONNX int8, with a τ per int8 range."""
    out = _saved_tiny_cascade(tiny_detector_dir, folder)
    cfg = json.loads((out / "dialcheck.json").read_text())
    cfg["options"]["runtime"] = "onnx-int8"
    if tau_int8 is not None:
        cfg["thresholds"]["tau_int8"] = tau_int8
    (out / "dialcheck.json").write_text(json.dumps(cfg))
    return out


@pytest.mark.parametrize(("cpu_range", "want"), [("full", 0.3), ("reduced", 0.7)])
def test_on_int8_a_cascade_takes_the_tau_of_the_range_this_cpu_runs(
    tiny_detector_dir, tmp_path, monkeypatch, cpu_range, want
):
    pytest.importorskip("onnxruntime")
    from dialcheck.api import preferred_runtime

    monkeypatch.setenv("DIALCHECK_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("DIALCHECK_INT8_RANGE", cpu_range)
    folder = _int8_cascade(tiny_detector_dir, tmp_path / "c", {"full": 0.3, "reduced": 0.7})
    det = load_detector(folder)
    assert det.tau == 0.5  # on torch: the saved tau
    assert preferred_runtime(det).tau == want == det.second.tau
    mine = load_detector(folder)
    mine.tau = 0.55  # a tau the caller set is kept
    assert preferred_runtime(mine).tau == 0.55


@pytest.mark.parametrize("bad", [{"7bit": 0.5}, {"full": 1.5}, {}, [0.5]])
def test_a_bad_tau_per_int8_range_names_the_field(tiny_detector_dir, tmp_path, bad):
    folder = _int8_cascade(tiny_detector_dir, tmp_path / "c", bad)
    with pytest.raises(ModelError, match=r"thresholds\.tau_int8"):
        load_detector(folder)


@pytest.mark.parametrize(("vnni", "ranges"), [(True, ["full", "reduced"]), (False, ["reduced"])])
def test_models_save_recalibrate_on_int8_chooses_a_tau_per_range_the_cpu_computes(
    capsys, tiny_detector_dir, tmp_path, monkeypatch, vnni, ranges
):
    pytest.importorskip("onnxruntime")
    from dialcheck.detectors import onnx

    monkeypatch.setenv("DIALCHECK_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("DIALCHECK_INT8_RANGE", raising=False)
    monkeypatch.setattr(onnx, "has_vnni", lambda cpuinfo=None: vnni)
    # this CPU runs 7-bit weights unless the environment says otherwise (as while a range's tau is chosen)
    monkeypatch.setattr(onnx, "int8_range", lambda cpuinfo=None: os.environ.get("DIALCHECK_INT8_RANGE") or "reduced")
    logs = _labelled_logs(tmp_path)
    src = _int8_cascade(tiny_detector_dir, tmp_path / "c", None)
    out = tmp_path / "again"
    code, _, err = run_cli(capsys, "models", str(src), "--save", str(out), "--recalibrate", "--calibrate-on", str(logs))
    assert code == 0, err
    cfg = json.loads((out / "dialcheck.json").read_text())
    rec = cfg["training"]["derived_from"]["recalibrated"]
    assert sorted(cfg["thresholds"]["tau_int8"]) == ranges == sorted(rec["by_int8_range"])
    assert cfg["thresholds"]["tau"] == cfg["thresholds"]["tau_int8"]["reduced"]  # this CPU's range
    assert os.environ.get("DIALCHECK_INT8_RANGE") is None  # set per range while choosing, and put back
    # a tau given by hand holds on every CPU: the ranges' are dropped
    code, _, err = run_cli(capsys, "models", str(out), "--save", str(tmp_path / "fixed"), "--tau", "0.6")
    assert code == 0, err
    fixed = json.loads((tmp_path / "fixed" / "dialcheck.json").read_text())["thresholds"]
    assert fixed["tau"] == 0.6 and "tau_int8" not in fixed


def test_train_task_cascade_recalibrate_chooses_tau_on_the_cascades_own_verdicts(capsys, tmp_path, tiny_detector_dir):
    import dialcheck
    from dialcheck.evaluation.metrics import balanced_accuracy, best_threshold

    a = _variant(tiny_detector_dir, tmp_path / "fast", 1)
    b = _variant(tiny_detector_dir, tmp_path / "slow", 2)
    logs = _labelled_logs(tmp_path)
    plain, again = tmp_path / "plain", tmp_path / "again"
    args = ["train", "--task", "cascade", "--init", str(a), str(b), "--calibrate-on", str(logs), "--max-disagreement"]
    assert run_cli(capsys, *args, "0.5", "--out", str(plain))[0] == 0
    code, _, err = run_cli(capsys, *args, "0.5", "--out", str(again), "--recalibrate")
    assert code == 0, err
    scores = [v.score for v in dialcheck.load(plain).predict([r["turns"] for r in LABELLED])]
    want, _ = best_threshold(scores, [r["contradiction"] for r in LABELLED], balanced_accuracy, one_se=True)
    cfg = json.loads((again / "dialcheck.json").read_text())
    plain_cfg = json.loads((plain / "dialcheck.json").read_text())
    assert cfg["thresholds"]["tau"] == want == cfg["training"]["recalibrated"]["tau"]
    assert cfg["training"]["recalibrated"]["tau_before"] == plain_cfg["thresholds"]["tau"]
    assert cfg["thresholds"]["recheck_low"] == plain_cfg["thresholds"]["recheck_low"]  # the same band
    assert "chosen again (`--recalibrate`)" in (again / "MODEL_CARD.md").read_text()
    code, _, err = run_cli(capsys, "train", "--out", str(tmp_path / "x"), "--recalibrate", "--epochs", "0")
    assert code == 2 and "--recalibrate applies to --task cascade" in err


def test_a_tau_taken_from_the_cpus_int8_range_is_not_written_into_the_config(tiny_detector_dir, tmp_path, monkeypatch):
    pytest.importorskip("onnxruntime")
    from dialcheck.api import preferred_runtime

    monkeypatch.setenv("DIALCHECK_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("DIALCHECK_INT8_RANGE", "reduced")
    det = preferred_runtime(load_detector(_int8_cascade(tiny_detector_dir, tmp_path / "c", {"reduced": 0.7})))
    # what evaluate --update-card writes back keeps the saved tau; this CPU still runs at its range's
    assert det.tau == 0.7 and det.config.thresholds["tau"] == 0.5


def test_the_tau_stability_benchmark_resamples_the_training_rule(load_benchmark):
    from dialcheck.evaluation.metrics import balanced_accuracy, best_threshold

    bench = load_benchmark("tau_stability")
    s = np.array([0.1, 0.3, 0.35, 0.6, 0.7, 0.9])
    g = np.array([False, False, True, False, True, True])
    taus = bench.resampled_taus(s, g, 50, 0)
    assert 0 < len(taus) <= 50 and np.array_equal(taus, bench.resampled_taus(s, g, 50, 0))  # seeded
    # each is the rule on its resample: a midpoint of two of its scores, or just past one at an end
    cands = {round((a + b) / 2, 6) for a in s for b in s} | {round(a + d, 6) for a in s for d in (-1e-6, 1e-6)}
    assert set(np.round(taus, 6)) <= cands and len(set(taus)) > 1  # resamples differ
    assert best_threshold(s, g, balanced_accuracy, one_se=True)[0] in cands
    one_label = bench.resampled_taus(np.array([0.2, 0.4]), np.array([True, True]), 10, 0)
    assert len(one_label) == 0


@pytest.mark.parametrize("tau", [0.02, 0.5, 0.75, 0.98])
def test_a_verdict_is_a_contradiction_exactly_when_its_score_reaches_tau_wherever_tau_is_set(tau):
    # FIRST scores e at 0.97 and a at 0.05, outside the band [0.3, 0.7]: a tau of 0.98 (or 0.02) set outside it
    # used to leave e a contradiction (a consistent) on the fast stage's score, whatever tau said
    first, second = _scripted("fast", FIRST, 0.5), _scripted("slow", SECOND, 0.5)
    det = CascadeDetector.build(first, second, low=0.3, high=0.7)
    det.tau = tau
    got = det.predict(DIALOGUES)
    assert [v.contradiction for v in got] == [v.score >= tau for v in got]
    assert det.band == (0.3, 0.7)  # the saved band is unchanged: only the re-read stretches
    # b, c and d are re-read in the band; a tau outside it stretches the re-read to a (0.02) or e (0.98) too
    assert second.config.options["seen"] == {0.02: 4, 0.5: 3, 0.75: 3, 0.98: 4}[tau]


def test_evaluate_sets_a_cascade_of_utterance_detectors_beside_the_utterance_based_papers_numbers(
    capsys, tmp_path, tiny_detector_dir, data_root
):
    # the default is such a cascade: its table had an empty paper column, the paper's kind being the stages'
    folder = tmp_path / "cascade"
    fast, slow = _tiny_stages(tiny_detector_dir, tmp_path)
    CascadeDetector.build(load_detector(fast), load_detector(slow), 0.0, 1.0).save(folder)
    argv = ["evaluate", "--model", str(folder), "--splits", "human_bot", "--limit", "6", "--data-dir", str(data_root)]
    code, out, err = run_cli(capsys, *argv, "--no-progress")
    assert code == 0, err
    (row,) = [line for line in out.splitlines() if line.startswith("| Human-bot accuracy")]
    assert row.rstrip().endswith("| 84.69 |")
