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
    assert client.get("/health").json()["runtime"] == "torch"
    assert "<textarea" in client.get("/").text


def test_health_says_when_onnx_int8_answers(tiny_detector_dir, tmp_path):
    pytest.importorskip("onnxruntime")
    det = load_detector(tiny_detector_dir).use_onnx(int8=True, cache=tmp_path)
    health = TestClient(create_app(det)).get("/health").json()
    assert health["runtime"] == "onnx-int8"


def test_without_a_model_each_dialogue_goes_to_the_default_it_routes_to(tiny_detector_dir, monkeypatch):
    import dialcheck.api as api

    # two stand-ins for the shipped defaults: the "task-oriented" one flags everything, the English one nothing
    en, tod = load_detector(tiny_detector_dir), load_detector(tiny_detector_dir)
    en.tau, tod.tau = 1.0, 0.0
    monkeypatch.setattr(api, "load", lambda model=None, language="en": {"en": en, "tod": tod}[language])
    seen = []
    client = TestClient(create_app(None, configure=seen.append))
    plain = ["I have a cat.", "Nice.", "I never had pets."]
    with_kb = {"turns": plain, "knowledge": [{"poi": "a", "distance": "2 miles"}]}
    r = client.post("/check", json={"dialogues": [plain, with_kb, plain]})
    assert [v["contradiction"] for v in r.json()["verdicts"]] == [False, True, False]
    assert any(d is tod for d in seen) and any(d is en for d in seen)  # overrides reach every routed model
    ranked = client.post("/rank", json={"context": with_kb, "candidates": ["x", "y"]}).json()["ranked"]
    assert all(c["contradiction"] for c in ranked)
    health = client.get("/health").json()
    assert set(health["routes"]) == {"en", "tod"} and health["detector"] == "decode.utterance.v1"
    r = client.post("/check", json={"dialogues": [plain, ["我今年23岁了。", "我也23了"]]})
    assert r.status_code == 422 and r.json()["detail"].startswith("dialogues[1]: ")
