"""benchmarks/rct_audit.py (RCT dialogues read by hand) and benchmarks/decode_last_turn_bias.py."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from dialcheck.datasets import load_dataset
from dialcheck.errors import InputError
from dialcheck.io import parse_dialogue
from dialcheck.schema import Example


def _examples(n: int) -> list[Example]:
    return [
        Example(parse_dialogue([f"I like tea {i}.", "Nice.", f"I hate tea {i}."]), label=False, id=f"x{i}")
        for i in range(n)
    ]


class _Flags:
    """A stand-in detector that flags the dialogues whose last turn is in ``flagged``."""

    tau = 0.5

    def __init__(self, flagged: set[str]):
        self.flagged = flagged

    def predict(self, dialogues, batch_size: int = 64):
        return [SimpleNamespace(contradiction=d.turns[-1].text in self.flagged) for d in dialogues]


def test_the_committed_audit_reads_the_sample_drawn_from_the_local_rct(load_benchmark, data_root):
    ra = load_benchmark("rct_audit")
    drawn = ra.sample(load_dataset("decode.rct.v1", str(data_root)))
    judged = ra.read_audit(ra.AUDIT, drawn)
    assert len(judged) == 200 and set(judged) <= set(ra.JUDGEMENTS)
    for line in ra.AUDIT.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if rec["judgement"] != "consistent":
            assert rec.get("why"), f"draw {rec['draw']}: a contradiction or unclear case says why"


def test_an_audit_for_another_draw_or_an_unknown_judgement_is_refused(load_benchmark, tmp_path):
    ra = load_benchmark("rct_audit")
    drawn = _examples(2)
    path = tmp_path / "audit.jsonl"
    good = '{"draw": 0, "id": "x0", "judgement": "consistent"}\n'
    for second in (
        '{"draw": 1, "id": "x9", "judgement": "consistent"}',
        '{"draw": 0, "id": "x1", "judgement": "unclear"}',
    ):
        path.write_text(good + second + "\n")  # an id this draw lacks; an id judged at the wrong position
        with pytest.raises(InputError, match=r"audit\.jsonl, line 2: id"):
            ra.read_audit(path, drawn)
    path.write_text('{"draw": 0, "id": "x0", "judgement": "maybe"}\n')
    with pytest.raises(InputError, match=r"audit\.jsonl, line 1: judgement"):
        ra.read_audit(path, drawn)
    path.write_text(good)
    with pytest.raises(InputError, match="1 judgements for 2"):  # exit 2 by _cli.run
        ra.read_audit(path, drawn)
    path.write_text('{"draw": 1, "id": "x1", "judgement": "unclear"}\n' + good)  # any order
    assert ra.read_audit(path, drawn) == ["consistent", "unclear"]


def test_wilson_interval_matches_the_hand_computed_one(load_benchmark):
    # p = 0.24, n = 100, z = 1.96: centre (0.24 + 0.019208) / 1.038416 = 0.24962,
    # half 1.96 * sqrt(0.001824 + 0.00009604) / 1.038416 = 0.08271
    lo, hi = load_benchmark("rct_audit").wilson(24, 100)
    assert lo == pytest.approx(0.1669, abs=1e-4) and hi == pytest.approx(0.3323, abs=1e-4)


def test_accuracy_against_the_audit_counts_found_contradictions_as_right(load_benchmark, monkeypatch):
    ra = load_benchmark("rct_audit")
    drawn = _examples(5)
    judged = ["consistent", "consistent", "contradiction", "contradiction", "unclear"]
    # flags: one consistent (wrong), one contradiction (right), the unclear one (left out of the audit acc.)
    flagged = {"I hate tea 1.", "I hate tea 2.", "I hate tea 4."}
    monkeypatch.setattr(ra.dialcheck, "load", lambda model=None: _Flags(flagged))
    lines, results = ra.score(["stub"], drawn, judged)
    r = results["models"]["stub"]
    assert r["flagged"] == {"consistent": 1, "contradiction": 1, "unclear": 1}
    assert r["official"] == pytest.approx(40.0)  # 2 of 5 not flagged
    assert r["audit"] == pytest.approx(50.0)  # right: x0 (not flagged), x2 (flagged); wrong: x1, x3
    assert "scores 60% on this sample" in lines[0]  # a detector flagging exactly the 2 contradictions


def test_verdicts_are_met_with_the_audit_by_id(load_benchmark):
    ra = load_benchmark("rct_audit")
    judged = {"x0": "consistent", "x1": "contradiction", "x2": "unclear", "x3": "contradiction"}
    flags = {"x0": True, "x1": True, "x2": True, "x3": False, "x9": True}  # x9: not read by hand, ignored
    preds = [
        (Example(parse_dialogue(["a", "b"]), label=False, id=i), SimpleNamespace(contradiction=f))
        for i, f in flags.items()
    ]
    met = ra.against_audit(judged, preds)
    assert (met["n/consistent"], met["n/contradiction"], met["n/unclear"]) == (1, 2, 1)
    assert (met["flagged/consistent"], met["flagged/contradiction"], met["flagged/unclear"]) == (1, 1, 1)
    assert met["accuracy"] == 33.33  # of x0, x1, x3 only x1 is right (in %, two decimals)
    assert ra.against_audit(judged, preds[4:])["accuracy"] is None


def test_foreign_pairs_put_the_last_turn_after_another_dialogues_speaker(load_benchmark):
    bias = load_benchmark("decode_last_turn_bias")
    d = parse_dialogue(["Hi.", "I have two dogs.", "Cool.", "I have no pets."])
    other = parse_dialogue(["I am a nurse.", "Fun.", "I work nights.", "Wow.", "Yes, long shifts."])
    f = bias.foreign_dialogue(d, other)
    assert [t.text for t in f.turns] == ["I am a nurse.", "Fun.", "I work nights.", "Wow.", "I have no pets."]
    assert f.same_speaker_indices() == [0, 2]  # the nurse's turns, not d's


def test_last_turn_bias_reports_each_reading_per_gold_label(load_benchmark):
    bias = load_benchmark("decode_last_turn_bias")

    class Det:
        """Fires when the last turn says 'hate' and an earlier turn of its speaker says 'like'."""

        tau = 0.5

        def predict(self, dialogues, batch_size=64):
            out = []
            for d in dialogues:
                earlier = " ".join(d.turns[i].text for i in d.same_speaker_indices())
                out.append(SimpleNamespace(score=float("hate" in d.turns[-1].text and "like" in earlier)))
            return out

        classifier = SimpleNamespace(score=lambda pairs, batch_size=64: [0.0 for _ in pairs])

    examples = [
        Example(parse_dialogue(["I like tea.", "Nice.", "I hate tea."]), label=True),
        Example(parse_dialogue(["I like water.", "Nice.", "I hate tea."]), label=False),
        Example(parse_dialogue(["I like cats.", "Oh.", "Cats are great."]), label=False),
    ]
    r = bias.measure(Det(), examples, seed=0)
    assert r["contradiction"]["full"] == 1.0 and r["contradiction"]["null"] == 0.0
    # every other dialogue has a "like" turn: "I hate tea." fires after any of them, "Cats are great." never
    assert r["contradiction"]["foreign"] == 1.0 and r["contradiction"]["foreign_given_full"] == 1.0
    assert r["consistent"]["full"] == 0.5 and r["consistent"]["foreign"] == 0.5
    assert r["consistent"]["foreign_given_full"] == 1.0 and r["consistent"]["null"] == 0.0
