"""The shipped task-oriented (CI-ToD) detector (slow lane: `make test-slow`)."""

import json
from pathlib import Path

import pytest

from dialcheck.detectors import default_model_path

pytestmark = pytest.mark.slow

KNOWLEDGE = [
    {"poi": "the_westin", "poi_type": "rest_stop", "address": "329_el_camino_real", "distance": "2_miles"},
    {"poi": "whole_foods", "poi_type": "grocery_store", "address": "819_alma_st", "distance": "4_miles"},
]


def test_shipped_citod_detector_is_small_and_documented():
    folder = default_model_path("tod")
    assert sum(f.stat().st_size for f in folder.iterdir()) < 10_000_000
    cfg = json.loads((folder / "dialcheck.json").read_text())
    assert cfg["detector"] == "citod.grounded.v1" and cfg["adapter"]["type"] == "lora"
    assert cfg["labels"] == ["QI", "HI", "KBI"]
    card = (folder / "MODEL_CARD.md").read_text()
    assert "train --task citod" in card and "all/overall_accuracy" not in card  # rendered as a table
    assert "ours: all" in card and "unseen in training" in card


def test_a_knowledge_dialogue_is_routed_to_the_shipped_citod_detector():
    import dialcheck

    v = dialcheck.check(
        {
            "turns": [
                {"speaker": "user", "text": "where is the nearest rest stop?"},
                {"speaker": "system", "text": "the_westin is a rest stop 2_miles away at 329_el_camino_real."},
            ],
            "knowledge": KNOWLEDGE,
        }
    )
    assert set(v.labels) == {"QI", "HI", "KBI"}
    assert set(v.label_scores) == {"QI", "HI", "KBI"} and all(0.0 <= s <= 1.0 for s in v.label_scores.values())
    assert v.contradiction == any(v.labels.values())
    assert v.knowledge_evidence is not None  # a grounded verdict, not the DECODE detector's


def _check(reply: str, request: str = "how far is the_westin?"):
    import dialcheck

    turns = [{"speaker": "user", "text": request}, {"speaker": "system", "text": reply}]
    return dialcheck.check({"turns": turns, "knowledge": KNOWLEDGE})


def test_the_shipped_citod_detector_tells_a_correct_reply_from_wrong_ones():
    ok = _check("the_westin is 2_miles away at 329_el_camino_real.")
    assert not ok.contradiction, ok.label_scores
    wrong_kb = _check("the_westin is 4_miles away at 329_el_camino_real.")  # the table says 2 miles
    assert wrong_kb.labels["KBI"] and wrong_kb.knowledge_evidence == (0,), wrong_kb.label_scores
    wrong_request = _check("whole_foods is 4_miles away at 819_alma_st.")  # asked about the westin
    assert wrong_request.labels["QI"] and 0 in wrong_request.evidence, wrong_request.label_scores


def test_the_http_service_routes_a_knowledge_dialogue_as_check_does():
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    import dialcheck
    from dialcheck.serve import create_app

    route = json.loads((Path(__file__).resolve().parents[1] / "examples" / "dialogues.json").read_text())[-1]
    pets = ["Do you have pets?", "Yes, I have two dogs.", "What are their names?", "I have never owned a dog."]
    r = TestClient(create_app(None)).post("/check", json={"dialogues": [pets, route]})
    assert r.status_code == 200
    got = r.json()["verdicts"]
    want = [dialcheck.check(pets).to_dict(), dialcheck.check(route).to_dict()]
    assert got[1]["labels"] == want[1]["labels"] and got[1]["labels"]["KBI"]  # the demo's "6 miles" (KB: 2)
    assert got[0]["evidence"] == want[0]["evidence"] == [1] and got[0]["score"] == want[0]["score"]
