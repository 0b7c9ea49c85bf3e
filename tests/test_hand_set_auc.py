"""benchmarks/hand_set_auc.py and the hand-written CDConv set D it was written for."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialcheck.errors import InputError

ROOT = Path(__file__).resolve().parents[1]


def test_hand_set_auc_hand_computed(load_benchmark, tmp_path):
    mod = load_benchmark("hand_set_auc")
    rows = [
        ("handd-01", True, 0.9),
        ("handd-02", True, 0.4),
        ("handd-03", False, 0.5),
        ("handd-04", False, 0.1),
        ("handc-01", True, 0.0),  # another set: left out by the prefix
    ]
    path = tmp_path / "pred.jsonl"
    path.write_text("".join(json.dumps({"id": i, "gold": g, "score": s}) + "\n" for i, g, s in rows))
    # of the 4 contradiction/consistent pairs, 3 are ordered right (0.4 < 0.5 is the one wrong)
    assert mod.set_auc(path, "handd-") == (0.75, 2, 2)
    assert mod.set_auc(path)[1:] == (3, 2)
    with pytest.raises(InputError, match="needs contradictions and consistent rows"):
        mod.set_auc(path, "handc-")


def test_hand_set_d_reads_as_documented():
    from dialcheck.cli.common import read_labelled

    examples, _ = read_labelled(str(ROOT / "benchmarks" / "data" / "cdconv_hand_d.jsonl"))
    assert len(examples) == 32
    consistent = [e for e in examples if not e.label]
    history = [e for e in examples if e.label]
    assert len(consistent) == 18 and len(history) == 14 and {e.category for e in history} == {"history"}
    assert all(len(e.dialogue.turns) == 4 for e in examples)
    # each consistent conversation: the user states something about themselves, the bot then about itself
    assert all(e.dialogue.turns[-1].text.startswith("我") for e in consistent)


def test_cdconv_mask_context_replaces_one_turn(load_benchmark):
    from dialcheck.schema import Dialogue, Example

    mod = load_benchmark("cdconv_mask_context")
    cat = Dialogue.from_texts(["你有猫吗？", "有一只。", "它几岁了？", "我没有猫。"])
    rows = [
        Example(cat, True, category="history", id="h"),
        Example(Dialogue.from_texts(["早", "早呀", "你好吗？", "挺好的。"]), False, None, None, id="n"),
    ]
    for mask, at in (("u1", 0), ("b1", 1), ("u2", 2)):
        out = mod.masked_records(rows, mask)
        for rec, e in zip(out, rows, strict=True):
            texts = [t.text for t in e.dialogue.turns]
            assert [t["text"] for t in rec["turns"]] == [mod.FILLER if k == at else t for k, t in enumerate(texts)]
            assert [t["speaker"] for t in rec["turns"]] == ["A", "B", "A", "B"]
            assert rec["contradiction"] == e.label and rec.get("category") == e.category
    with pytest.raises(ValueError, match="expected one of"):
        mod.masked_records(rows, "b2")  # the reply itself is what is checked
    short = Example(Dialogue.from_texts(["你好", "你好呀"]), False, id="s")
    with pytest.raises(ValueError, match="at least 4"):
        mod.masked_records([short], "u1")
