"""The hand-written check sets in benchmarks/data: each one reads cleanly as labelled dialogues (the Chinese ones with
their categories), and the default gate reads every English one (a set added to the folder but not to the gate
would never guard anything)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dialcheck.io import read_examples

DATA = Path(__file__).resolve().parent.parent / "benchmarks" / "data"
SETS = sorted(DATA.glob("decode_hand_*.jsonl"))


def test_the_sets_are_there():
    assert len(SETS) >= 40


@pytest.mark.parametrize("path", SETS, ids=lambda p: p.stem)
def test_each_set_reads_cleanly(path):
    examples, errors = read_examples(path)
    assert not errors, [str(e) for e in errors[:3]]
    assert examples, path
    ids = [e.id for e in examples]
    assert len(ids) == len(set(ids)), f"{path.name}: duplicate ids"
    for e in examples:
        last = len(e.dialogue.turns) - 1
        assert all(0 <= i < last for i in e.evidence or ()), f"{path.name} {e.id}: evidence {e.evidence}"
    # every set holds both kinds, so that it measures false alarms and catches alike
    assert {bool(e.label) for e in examples} == {True, False}, path.name


def test_the_gate_reads_every_set(load_benchmark):
    assert set(load_benchmark("default_gate").HAND) == {p.stem for p in SETS}


ZH_SETS = sorted(DATA.glob("cdconv_hand*.jsonl"))


@pytest.mark.parametrize("path", ZH_SETS, ids=lambda p: p.stem)
def test_each_chinese_set_reads_cleanly_with_its_categories(path):
    examples, errors = read_examples(path, require_category=True)
    assert not errors, [str(e) for e in errors[:3]]
    assert len({e.id for e in examples}) == len(examples), f"{path.name}: duplicate ids"
    assert {bool(e.label) for e in examples} == {True, False}, path.name


def test_the_written_training_dialogues_give_pairs_on_both_labels():
    """benchmarks/data/written_dialogues_bi.jsonl (session 78, `train --dialogues`): 600 dialogues written by six
    helpers, half contradictions, each naming an earlier turn of the last speaker as evidence."""
    from dialcheck.training.data import labelled_dialogue_pairs

    path = DATA / "written_dialogues_bi.jsonl"
    examples, errors = read_examples(path)
    assert not errors and len(examples) == 600
    assert sum(bool(e.label) for e in examples) == 300
    for e in examples:
        last = len(e.dialogue.turns) - 1
        # the evidence is the last speaker's own earlier turn, so the utterance-based detector pairs it
        assert all(i < last and (last - i) % 2 == 0 for i in e.evidence or ()), e.id
        assert bool(e.label) == bool(e.evidence), e.id
    pairs, no_evidence = labelled_dialogue_pairs(examples, source="dialogues")
    assert no_evidence == 0
    assert {p.label for p in pairs} == {0, 1}
    assert sum(p.label for p in pairs) == sum(len(e.evidence) for e in examples if e.label)
