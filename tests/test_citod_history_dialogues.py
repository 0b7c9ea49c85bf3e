"""benchmarks/citod_history_dialogues.py: CI-ToD history labels as labelled dialogues for `--dialogues`."""

import json

import pytest

from dialcheck.errors import InputError
from dialcheck.io import parse_example
from dialcheck.training.data import labelled_dialogue_pairs


def test_the_train_splits_become_same_speaker_pairs(load_benchmark, data_root, tmp_path):
    mod = load_benchmark("citod_history_dialogues")
    out = tmp_path / "citod.jsonl"
    assert mod.main(["--out", str(out), "--data", str(data_root)]) == 0
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    # calendar + navigate train: 1,705 dialogues, of which these end on the assistant after an earlier assistant turn
    assert len(records) == 1143
    assert sum(not r["contradiction"] for r in records) == 701
    assert sum(r["contradiction"] and "evidence" in r for r in records) == 312
    assert all("_" not in t["text"] and t["text"][:1] == t["text"][:1].upper() for r in records for t in r["turns"])
    pairs, no_evidence = labelled_dialogue_pairs([parse_example(r) for r in records], source="dialogues")
    assert no_evidence == 130
    positives = [p for p in pairs if p.label == 1]
    assert len(positives) == 312  # one evidence turn each: the only earlier assistant turn
    ids = {r["id"] for r in records}
    assert all(i.startswith(("citod.calendar.train.", "citod.navigate.train.")) for i in ids)  # never dev or test


def test_a_record_without_an_earlier_system_turn_is_left_out(load_benchmark):
    from dialcheck.schema import Dialogue, Example, Turn

    mod = load_benchmark("citod_history_dialogues")
    turns = (Turn("user", "hi"), Turn("user", "where is the cafe"), Turn("system", "on main st"))
    e = Example(Dialogue(turns), False, evidence=(), id="x", labels={"QI": False, "HI": False, "KBI": False})
    assert mod.history_records([e]) == ([], {"consistent": 0, "contradiction": 0, "contradiction_no_evidence": 0})


def test_the_test_split_holds_all_three_domains(load_benchmark, data_root, tmp_path):
    mod = load_benchmark("citod_history_dialogues")
    out = tmp_path / "test.jsonl"
    assert mod.main(["--split", "test", "--out", str(out), "--data", str(data_root)]) == 0
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(records) == 210 and sum(r["contradiction"] for r in records) == 64
    assert {r["id"].split(".")[1] for r in records} == {"calendar", "navigate", "weather"}
    assert all(".test." in r["id"] for r in records)


def test_the_missing_weather_train_split_is_named(load_benchmark, data_root, tmp_path):
    """An InputError, which _cli.run prints as 'citod_history_dialogues.py: error: ...' with exit 2 (it printed
    'citod_history_dialogues: ...' itself, unlike every other script)."""
    mod = load_benchmark("citod_history_dialogues")
    out = tmp_path / "w.jsonl"
    with pytest.raises(InputError, match=r"weather\.train \(the labelled weather train file was never released\)"):
        mod.main(["--domains", "weather", "--out", str(out), "--data", str(data_root)])
    assert not out.exists()


def test_with_decode_validation_writes_a_calibration_set(load_benchmark, data_root, tmp_path):
    from dialcheck.training.data import build_decode_training_data

    mod = load_benchmark("citod_history_dialogues")
    out = tmp_path / "calib.jsonl"
    assert mod.main(["--split", "dev", "--with-decode-validation", "--out", str(out), "--data", str(data_root)]) == 0
    records = [parse_example(json.loads(line)) for line in out.read_text(encoding="utf-8").splitlines()]
    val = build_decode_training_data(data_root, augment=()).validation_dialogues
    assert len(records) == len(val) + 208  # DECODE's validation dialogues, then CI-ToD's dev history dialogues
    assert [r.label for r in records[: len(val)]] == [e.label for e in val]
    assert records[0].evidence == val[0].evidence and records[0].dialogue.turns == val[0].dialogue.turns


def test_with_decode_rct_adds_each_validation_contradiction_without_its_evidence(load_benchmark, data_root, tmp_path):
    from dialcheck.training.data import build_decode_training_data

    mod = load_benchmark("citod_history_dialogues")
    out = tmp_path / "calib.jsonl"
    argv = ["--split", "dev", "--with-decode-validation", "--with-decode-rct", "--out", str(out)]
    argv += ["--data", str(data_root)]
    assert mod.main(argv) == 0
    records = [parse_example(json.loads(line)) for line in out.read_text(encoding="utf-8").splitlines()]
    val = build_decode_training_data(data_root, augment=()).validation_dialogues
    with_ev = [e for e in val if e.label and e.evidence]
    rct = records[len(val) : len(val) + len(with_ev)]
    assert len(records) == len(val) + len(with_ev) + 208
    assert not any(r.label or r.evidence for r in rct)
    first = with_ev[0]
    kept = [t.text for i, t in enumerate(first.dialogue.turns) if i not in first.evidence]
    assert rct[0].dialogue.turns[-1] == first.dialogue.turns[-1]  # the same last turn, now with nothing to contradict
    assert all(first.dialogue.turns[i].text not in [t.text for t in rct[0].dialogue.turns] for i in first.evidence)
    assert set(t.text for t in rct[0].dialogue.turns) <= set(kept)


def test_with_decode_rct_alone_is_a_user_error(load_benchmark, tmp_path, capsys):
    """Refused as an argparse error before any corpus is read (the data directory here does not exist)."""
    mod = load_benchmark("citod_history_dialogues")
    out = tmp_path / "c.jsonl"
    with pytest.raises(SystemExit) as e:
        mod.main(["--split", "dev", "--with-decode-rct", "--out", str(out), "--data", str(tmp_path / "nowhere")])
    assert e.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1].endswith("error: --with-decode-rct needs --with-decode-validation")
    assert not out.exists()
