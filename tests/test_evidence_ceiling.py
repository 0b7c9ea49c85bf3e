"""benchmarks/evidence_ceiling.py: the supporting-evidence F1 with right verdicts or right turns, from predictions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialcheck.errors import InputError


@pytest.fixture
def script(load_benchmark):
    return load_benchmark("evidence_ceiling")


def _rec(gold, gold_ev, flagged, ev, scores, split="dev"):
    return {
        "split": split,
        "id": "x",
        "gold": gold,
        "gold_evidence": gold_ev,
        "contradiction": flagged,
        "evidence": ev,
        "pair_scores": {str(k): v for k, v in scores.items()},
    }


RECORDS = [
    # a flagged contradiction naming the wrong turn (its gold turn 4 scored second)
    _rec(True, [4], True, [0], {0: 0.95, 2: 0.1, 4: 0.9}),
    # a flagged contradiction with two gold turns, one named
    _rec(True, [1, 3], True, [3], {1: 0.5, 3: 0.97}),
    # a consistent dialogue flagged on two turns
    _rec(False, [], True, [0, 2], {0: 0.92, 2: 0.91}),
    # a consistent dialogue left alone
    _rec(False, [], False, [], {0: 0.1}),
    # a contradiction without annotated evidence: left out, as evaluate does
    _rec(True, None, True, [0], {0: 0.99}),
]


def test_each_policy_counts_the_pairs_by_hand(script):
    out = script.ceilings(RECORDS)
    # as predicted: tp {3}; fp_extra {0}; fp_consistent {0, 2}; fn_flagged {4}, {1}
    assert {k: out["as predicted"][k] for k in ("tp", "fp_consistent", "fp_extra", "fn_unflagged", "fn_flagged")} == {
        "tp": 1,
        "fp_consistent": 2,
        "fp_extra": 1,
        "fn_unflagged": 0,
        "fn_flagged": 2,
    }
    assert out["as predicted"]["f1"] == pytest.approx(100 * 1 / (1 + 5 / 2))
    # right turns: both contradictions name exactly their gold turns; the false alarm stays
    assert out["right turns"]["tp"] == 3 and out["right turns"]["fp_consistent"] == 2
    assert out["right turns"]["f1"] == pytest.approx(100 * 3 / (3 + 2 / 2))
    # right verdicts: the false alarm goes, the named turns stay as they were
    assert out["right verdicts"]["fp_consistent"] == 0 and out["right verdicts"]["tp"] == 1
    # top pair only: the consistent one names one turn, the contradictions their top turns (0 and 3)
    assert out["top pair only"]["fp_consistent"] == 1 and out["top pair only"]["tp"] == 1
    assert out["both"]["f1"] == 100.0


def test_the_recency_table_places_gold_turns_among_the_paired_ones(script):
    assert script.gold_recency(RECORDS) == {2: [1, 1], 3: [0, 0, 1]}


def test_the_command_prints_the_table_and_writes_json(script, tmp_path, capsys):
    path = tmp_path / "pred.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in RECORDS), encoding="utf-8")
    assert script.main([str(path), "--json", str(tmp_path / "out.json")]) == 0
    printed = capsys.readouterr().out
    assert "| as predicted | 1 | 2 | 1 | 0 | 2 | 28.57 |" in printed
    saved = json.loads((tmp_path / "out.json").read_text())
    assert saved["policies"]["both"]["f1"] == 100.0
    with pytest.raises(InputError, match="no predictions for split 'rct'"):
        script.main([str(path), "--split", "rct"])


def test_wrong_top_counts_flagged_contradictions_whose_highest_turn_is_not_gold(script):
    # the first record's top turn 0 is not its gold 4; the second's top 3 is gold; the rest are not gold or unlabelled
    assert script.wrong_top(RECORDS) == 1


def test_an_audited_turn_judged_yes_counts_as_evidence_too(script, tmp_path, capsys):
    records = [dict(r, id=f"dev:{k}") for k, r in enumerate(RECORDS)]
    audit = [
        {"id": "dev:0", "gold_turn": 4, "model_turn": 0, "gold_turn_judged": "yes", "model_turn_judged": "yes"},
        {"id": "dev:1", "gold_turn": 1, "model_turn": 3, "gold_turn_judged": "yes", "model_turn_judged": "no"},
    ]
    # record 0 now has gold {0, 4}: its named turn 0 is a true positive, turn 4 still missed
    out = script.ceilings(script.credited(records, audit))["as predicted"]
    assert (out["tp"], out["fp_extra"], out["fn_flagged"]) == (2, 0, 2)
    pred, audit_file = tmp_path / "pred.jsonl", tmp_path / "audit.jsonl"
    pred.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    audit_file.write_text("".join(json.dumps(a) + "\n" for a in audit), encoding="utf-8")
    assert script.main([str(pred), "--audit", str(audit_file), "--json", str(tmp_path / "out.json")]) == 0
    assert "model turn {'yes': 1, 'no': 1}" in capsys.readouterr().out
    saved = json.loads((tmp_path / "out.json").read_text())
    assert saved["audit"]["policies"]["as predicted"]["tp"] == 2 and saved["wrong_top"] == 1


def test_the_shipped_audit_file_reads_dev_dialogues_judged_on_both_turns():
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "decode_dev_evidence_audit.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(rows) == 80 and len({r["id"] for r in rows}) == 80
    assert all(r["id"].startswith("dev:") and r["gold_turn"] != r["model_turn"] for r in rows)
    assert {r["model_turn_judged"] for r in rows} <= {"yes", "partly", "no"}
