"""benchmarks/citod_history_dialogues.py: CI-ToD history labels as labelled dialogues for `--dialogues`."""

import json

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
