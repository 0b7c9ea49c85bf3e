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
