import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient

from dialcheck.detectors import load_detector
from dialcheck.serve import create_app


@pytest.fixture(scope="module")
def client(tiny_detector_dir):
    return TestClient(create_app(load_detector(tiny_detector_dir)))


def test_check_one_and_many(client):
    r = client.post("/check", json={"turns": ["I have a cat.", "Nice.", "I never had pets."]})
    assert r.status_code == 200
    (v,) = r.json()["verdicts"]
    assert set(v) >= {"contradiction", "score", "evidence", "category"}
    r = client.post("/check", json={"dialogues": [["a", "b"], ["c", "d", "e"]]})
    assert len(r.json()["verdicts"]) == 2


def test_bad_dialogue_is_a_located_422(client):
    r = client.post("/check", json={"dialogues": [["a", "b"], {"turns": [{"speaker": "A", "text": 3}]}]})
    assert r.status_code == 422
    assert r.json()["detail"] == "dialogues[1]: turns[0].text: expected a string, got int"


def test_rank_and_health_and_page(client):
    r = client.post("/rank", json={"context": ["I have a cat.", "Nice."], "candidates": ["x", "y", "z"]})
    assert sorted(c["index"] for c in r.json()["ranked"]) == [0, 1, 2]
    assert client.post("/rank", json={"context": ["a"], "candidates": []}).status_code == 422
    assert client.get("/health").json()["detector"] == "decode.utterance.v1"
    assert "<textarea" in client.get("/").text
