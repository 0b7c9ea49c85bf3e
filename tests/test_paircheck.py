"""A four-category detector with a pair check behind it (dialcheck.detectors.paircheck)."""

import json

import pytest

from dialcheck.detectors import Detector, PairCheckedDetector, load_detector, register_detector
from dialcheck.errors import ModelError
from dialcheck.io import as_dialogues
from dialcheck.schema import Verdict
from helpers_cli import run_cli


@register_detector("test.scripted_main.v1")
class ScriptedMain(Detector):
    """The main detector: (contradiction, category) fixed per last turn."""

    def predict(self, dialogues, batch_size=64, show_progress_bar=False):
        table = self.config.options["table"]
        out = []
        for d in as_dialogues(dialogues):
            cat = table[d.turns[-1].text]
            out.append(Verdict(cat is not None, 0.8 if cat else 0.1, (), cat, {}, None, {"history": 0.5}))
        return out


@register_detector("test.scripted_pairs.v1")
class ScriptedPairs(Detector):
    """The pair check: a score per (earlier turn, last turn); counts the replies it reads."""

    def predict(self, dialogues, batch_size=64, show_progress_bar=False):
        table = self.config.options["table"]
        self.config.options["seen"] = self.config.options.get("seen", 0) + len(dialogues)
        out = []
        for d in as_dialogues(dialogues):
            scores = {i: table.get(f"{d.turns[i].text}|{d.turns[-1].text}", 0.0) for i in d.same_speaker_indices()}
            s = max(scores.values(), default=0.0)
            out.append(Verdict(s >= 0.5, s, tuple(i for i, x in scores.items() if x >= 0.5), None, scores))
        return out


MAIN = {"r0": None, "r1": None, "r2": "history", "r3": "history", "r4": "intra_sentence"}
PAIRS = {"b1|r0": 0.97, "b1|r1": 0.6, "b1|r2": 0.01, "b1|r3": 0.3, "b1|r4": 0.0, "b0|r0": 0.95}
DIALOGUES = [["u0", "b0", "u1", "b1", "u2", r] for r in MAIN]


def _parts():
    return ScriptedMain(tau=0.5, table=MAIN), ScriptedPairs(table=PAIRS)


def test_the_pair_check_adds_history_contradictions_and_can_veto():
    main, pairs = _parts()
    det = PairCheckedDetector.build(main, pairs, tau_pairs=0.9)
    got = det.predict(DIALOGUES)
    assert [v.category for v in got] == ["history", None, "history", "history", "intra_sentence"]
    # r0: both earlier bot turns (1 and 3) are scored >= 0.9: both are its evidence; its score is the pair check's
    assert got[0].evidence == (1, 3) and got[0].score == 0.97 and got[0].label_scores == {"history": 0.5}
    assert pairs.config.options["seen"] == 2  # without a veto only the replies the main detector left alone
    vetoed = PairCheckedDetector.build(main, ScriptedPairs(table=PAIRS), tau_pairs=0.9, veto_below=0.02)
    got = vetoed.predict(DIALOGUES)
    assert [v.contradiction for v in got] == [True, False, False, True, True]  # r2 (0.01) cleared, r3 (0.3) kept
    assert got[2].score == 0.01 and got[2].pair_scores == {1: 0.0, 3: 0.01}
    # a threshold nothing reaches leaves the main detector's verdicts as they were
    never = PairCheckedDetector.build(*_parts(), tau_pairs=1.01).predict(DIALOGUES)
    assert [v.category for v in never] == list(MAIN.values())


def test_a_reply_without_earlier_turns_of_its_speaker_is_not_checked():
    main, pairs = ScriptedMain(table={"r0": None}), ScriptedPairs(table={})
    got = PairCheckedDetector.build(main, pairs, tau_pairs=0.0).predict([["u0", "r0"]])
    assert not got[0].contradiction and pairs.config.options.get("seen", 0) == 0


def test_tau_is_the_main_detectors_and_bad_thresholds_are_refused():
    main, pairs = _parts()
    det = PairCheckedDetector.build(main, pairs, tau_pairs=0.9)
    det.tau = 0.7
    assert main.tau == 0.7 and det.config.thresholds["tau"] == 0.7
    with pytest.raises(ModelError, match="veto_below in"):
        PairCheckedDetector.build(main, pairs, tau_pairs=0.9, veto_below=1.5)
    with pytest.raises(ModelError, match=r"use \.main and \.pairs"):
        det.classifier  # noqa: B018


def test_build_save_load_and_evaluate_with_tiny_models(tiny_base, tiny_detector_dir, tmp_path, capsys):
    """`dialcheck train --task paircheck` on a tiny flat CDConv detector and a tiny pair detector: saved with
    both as sub-folders, loaded back with the same verdicts, refused with anything but those two kinds."""
    import torch

    from dialcheck.detectors import FlatCategoryDetector
    from dialcheck.detectors.modeling import build_model

    torch.manual_seed(0)
    flat = FlatCategoryDetector(base=str(tiny_base), max_length=48, tau=0.2)
    model, tok = build_model(flat.config)
    main_dir = flat.attach(model, tok).save(tmp_path / "flat")
    out = tmp_path / "checked"
    code, _, err = run_cli(
        capsys, "train", "--task", "paircheck", "--init", str(main_dir), str(tiny_detector_dir), "--tau-pairs", "0.5",
        "--veto-below", "0.1", "--out", str(out), "--threads", "1",
    )  # fmt: skip
    assert code == 0, err
    cfg = json.loads((out / "dialcheck.json").read_text())
    assert cfg["detector"] == "cdconv.paircheck.v1"
    assert cfg["options"] == {"main": "main", "pairs": "pairs"}  # not shipped models: copied as sub-folders
    assert cfg["thresholds"]["tau_pairs"] == 0.5 and cfg["thresholds"]["veto_below"] == 0.1
    assert "pair check" in (out / "MODEL_CARD.md").read_text()
    det = load_detector(out)
    assert isinstance(det, PairCheckedDetector) and det.tau == pytest.approx(0.2)
    dialogues = [["你好", "我有一只狗。", "真的吗？", "我没有狗。"], ["hi", "I have a cat.", "ok", "I never had one."]]
    expect = PairCheckedDetector.build(load_detector(main_dir), load_detector(tiny_detector_dir), 0.5, 0.1)
    assert [v.to_dict() for v in det.predict(dialogues)] == [v.to_dict() for v in expect.predict(dialogues)]
    # the parts are checked before anything is saved; the thresholds belong to this task only
    code, _, err = run_cli(
        capsys, "train", "--task", "paircheck", "--init", str(tiny_detector_dir), str(tiny_detector_dir),
        "--tau-pairs", "0.5", "--out", str(tmp_path / "bad"),
    )  # fmt: skip
    assert code == 2 and "four-category" in err and not (tmp_path / "bad").exists()
    code, _, err = run_cli(capsys, "train", "--task", "paircheck", "--init", str(main_dir), str(tiny_detector_dir),
                           "--out", str(tmp_path / "bad"))  # fmt: skip
    assert code == 2 and "needs --tau-pairs" in err
    code, _, err = run_cli(capsys, "train", "--task", "cdconv", "--tau-pairs", "0.5", "--out", str(tmp_path / "bad"))
    assert code == 2 and "apply to --task paircheck" in err
