"""benchmarks/circa_statement_dialogues.py: Circa's statements and answers as labelled same-subject pairs."""

import json

import pytest

from dialcheck.datasets.circa import CircaExample
from dialcheck.errors import InputError
from dialcheck.io import parse_example
from dialcheck.training.data import labelled_dialogue_pairs


def _row(i, canonical, answer, strict):
    return CircaExample(i, "music", "Do you play an instrument?", answer, None, strict, (), canonical)


def test_yes_answers_agree_and_no_answers_contradict(load_benchmark):
    mod = load_benchmark("circa_statement_dialogues")
    rows = [
        _row(0, "I play an instrument .", "I play the trumpet in a jazz band.", "Yes"),
        _row(1, "I am into pop .", "I only listen to rock music.", "No"),
        _row(2, "I like jazz .", "Yes, I love it.", "Yes"),  # opens with a bare yes: the cue, not the content
        _row(3, "You can come visit I .", "We would love that a lot.", "Yes"),  # garbled rewrite
        _row(4, "I like blues .", "It depends on the day.", "Probably yes / sometimes yes"),  # not a clear yes
    ]
    records, counts = mod.statement_records(rows, per_label=None, seed=0)
    assert [r["id"] for r in records] == ["circa.music.0", "circa.music.1"]
    assert counts["answer_unusable"] == 1 and counts["statement_unusable"] == 1 and counts["label_not_yes_no"] == 1
    pairs, no_evidence = labelled_dialogue_pairs([parse_example(r) for r in records], source="dialogues")
    assert no_evidence == 0
    got = {frozenset((p.first, p.second)): p.label for p in pairs}
    assert got == {
        frozenset(("I play an instrument.", "I play the trumpet in a jazz band.")): 0,
        frozenset(("I am into pop.", "I only listen to rock music.")): 1,
    }
    assert all(r["turns"][1] == {"speaker": "user", "text": "Do you play an instrument?"} for r in records)


def test_the_script_caps_each_label_and_is_seeded(load_benchmark, data_root, tmp_path):
    mod = load_benchmark("circa_statement_dialogues")
    out, again = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert mod.main(["--out", str(out), "--data", str(data_root), "--per-label", "300"]) == 0
    assert mod.main(["--out", str(again), "--data", str(data_root), "--per-label", "300"]) == 0
    assert out.read_bytes() == again.read_bytes()
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert sum(r["contradiction"] for r in records) == 300 and sum(not r["contradiction"] for r in records) == 300
    assert all(r["evidence"] == [0] for r in records if r["contradiction"])


def test_a_missing_corpus_is_named(load_benchmark, tmp_path):
    """An InputError, which _cli.run prints as 'circa_statement_dialogues.py: error: ...' with exit 2."""
    mod = load_benchmark("circa_statement_dialogues")
    with pytest.raises(InputError, match=r"circa-data\.tsv"):
        mod.main(["--out", str(tmp_path / "x.jsonl"), "--data", str(tmp_path)])


def test_held_out_keeps_only_dialogues_not_in_the_training_file(load_benchmark, tmp_path):
    mod = load_benchmark("circa_statement_dialogues")
    rows = [_row(i, f"I play instrument number {i} .", f"I really do play number {i} daily.", "Yes") for i in range(6)]
    rows += [_row(10 + i, f"I like genre number {i} .", f"I only listen to number {i + 1}.", "No") for i in range(4)]
    records, _ = mod.statement_records(rows, per_label=None, seed=0)
    used = tmp_path / "train.jsonl"
    used.write_text("".join(json.dumps(r) + "\n" for r in records[:3] + records[6:8]), encoding="utf-8")
    out = mod.held_out(records, used, per_label=2, seed=0)
    trained = {json.dumps(r["turns"]) for r in records[:3] + records[6:8]}
    assert not {json.dumps(r["turns"]) for r in out} & trained
    assert [r["contradiction"] for r in out] == [True, True, False, False]  # 2 of each, contradictions first
    assert len(mod.held_out(records, used, per_label=None)) == len(records) - 5
