import json
import sys

import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient

from dialcheck.detectors import load_detector
from dialcheck.serve import create_app
from helpers_chat import CHAT, TOOL_CALL
from helpers_threads import WAIT, QueuedCompute, blocked


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


@pytest.mark.parametrize("key", ["tau", "eta_e", "threshold"])
def test_a_threshold_in_the_request_is_refused_not_ignored(client, key):
    r = client.post("/check", json={"turns": ["I have a cat.", "Nice.", "I never had pets."], key: 0.9})
    assert r.status_code == 422 and r.json()["detail"].startswith(f"{key}: not a request option")
    r = client.post("/rank", json={"context": ["I have a cat.", "Nice."], "candidates": ["x"], key: 0.9})
    assert r.status_code == 422 and "dialcheck serve --tau" in r.json()["detail"]


def test_rank_and_health_and_page(client):
    r = client.post("/rank", json={"context": ["I have a cat.", "Nice."], "candidates": ["x", "y", "z"]})
    assert sorted(c["index"] for c in r.json()["ranked"]) == [0, 1, 2]
    assert client.post("/rank", json={"context": ["a"], "candidates": []}).status_code == 422
    assert client.get("/health").json()["detector"] == "decode.utterance.v1"
    assert client.get("/health").json()["runtime"] == "torch"
    assert "<textarea" in client.get("/").text


@pytest.mark.parametrize(("speaker", "got"), [({"name": "A"}, "object"), (True, "boolean")])
def test_a_rank_speaker_of_another_type_is_named_with_its_json_type(client, speaker, got):
    r = client.post("/rank", json={"context": ["I have a cat.", "Nice."], "candidates": ["x"], "speaker": speaker})
    # as Detector.rank and rerank word it (check_reply_speaker): /rank had its own "expected a string" check
    assert (
        r.status_code == 422
        and r.json()["detail"] == f"speaker: expected a speaker name (a non-empty string), got {got}"
    )


def test_health_says_when_onnx_int8_answers(tiny_detector_dir, tmp_path, monkeypatch):
    pytest.importorskip("onnxruntime")
    monkeypatch.setenv("DIALCHECK_INT8_RANGE", "reduced")
    det = load_detector(tiny_detector_dir).use_onnx(int8=True, cache=tmp_path)
    health = TestClient(create_app(det)).get("/health").json()
    assert health["runtime"] == "onnx-int8" and health["int8_range"] == "reduced"


def test_health_gives_the_tau_a_cascade_answers_at_on_its_cpus_int8_range(tiny_detector_dir, tmp_path, monkeypatch):
    pytest.importorskip("onnxruntime")
    import json

    from dialcheck.api import preferred_runtime
    from dialcheck.detectors import CascadeDetector

    monkeypatch.setenv("DIALCHECK_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("DIALCHECK_INT8_RANGE", "reduced")
    slow = load_detector(tiny_detector_dir)
    folder = CascadeDetector.build(load_detector(tiny_detector_dir), slow, 0.0, 1.0).save(tmp_path / "c")
    cfg = json.loads((folder / "dialcheck.json").read_text())
    cfg["options"]["runtime"] = "onnx-int8"
    cfg["thresholds"]["tau_int8"] = {"full": 0.3, "reduced": 0.7}
    (folder / "dialcheck.json").write_text(json.dumps(cfg))
    health = TestClient(create_app(preferred_runtime(load_detector(folder)))).get("/health").json()
    assert health["thresholds"]["tau"] == 0.7 and health["thresholds"]["tau_int8"] == {"full": 0.3, "reduced": 0.7}


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


class _Counting:
    """A stand-in detector: flags a dialogue whose last turn says "no"; records each predict call."""

    def __init__(self):
        self.calls = []

    def predict(self, dialogues, batch_size=64):
        import threading

        from dialcheck.schema import Verdict

        self.calls.append(([d.turns[-1].text for d in dialogues], threading.current_thread().name))
        return [Verdict(d.turns[-1].text == "no", float(d.turns[-1].text == "no")) for d in dialogues]


def test_checks_that_wait_together_are_one_batch_on_the_compute_thread():
    from dialcheck.schema import Dialogue
    from dialcheck.serve import ComputeThread

    det, ct = _Counting(), ComputeThread(name="test-compute")
    gate = blocked(ct)
    jobs = [[["a", "yes"]], [["b", "no"], ["c", "yes"]], [["d", "no"]]]
    futures = [ct.check([Dialogue.from_texts(t) for t in job], lambda ds: [det] * len(ds)) for job in jobs]
    gate.set()
    got = [[v.contradiction for v in f.result(10)] for f in futures]
    assert got == [[False], [True, False], [True]]  # each request gets its own verdicts, in order
    assert det.calls == [(["yes", "no", "yes", "no"], "test-compute")]  # one predict, on the compute thread
    assert (ct.requests, ct.batches) == (3, 1)
    ct.close()


def test_a_request_that_fails_to_route_fails_alone_and_plain_calls_keep_their_place():
    from dialcheck.errors import InputError
    from dialcheck.schema import Dialogue
    from dialcheck.serve import ComputeThread

    det, ct, order = _Counting(), ComputeThread(), []
    gate = blocked(ct)

    def route(ds):
        if ds[0].turns[0].text == "zh":
            raise InputError("no Chinese model")
        order.append(ds[0].turns[0].text)
        return [det] * len(ds)

    ok = ct.check([Dialogue.from_texts(["a", "no"])], route)
    bad = ct.check([Dialogue.from_texts(["zh", "no"])], route)
    plain = ct.submit(lambda: order.append("plain"))
    later = ct.check([Dialogue.from_texts(["b", "yes"])], route)
    gate.set()
    assert [v.contradiction for v in ok.result(10)] == [True]
    with pytest.raises(InputError, match="no Chinese model"):
        bad.result(10)
    assert [v.contradiction for v in later.result(10)] == [False]
    plain.result(10)
    assert order == ["a", "plain", "b"]  # merging stops at a plain call; it runs before the checks after it
    assert len(det.calls) == 2
    ct.close()


def test_health_counts_the_checks_answered(tiny_detector_dir):
    client = TestClient(create_app(load_detector(tiny_detector_dir)))
    for _ in range(2):
        assert client.post("/check", json=["I have a cat.", "Nice.", "I never had pets."]).status_code == 200
    assert client.get("/health").json()["checks"] == {"requests": 2, "batches": 2}


def test_the_serve_command_loads_and_scores_on_its_compute_thread(tiny_detector_dir, monkeypatch):
    import threading

    import uvicorn

    import dialcheck.api as api
    from dialcheck.cli import main

    apps, loaded_on = [], []
    real_load = api.load

    def load(model=None, language="en"):
        loaded_on.append(threading.current_thread().name)
        return real_load(model, language=language)

    monkeypatch.setattr(api, "load", load)
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: apps.append(app))
    assert main(["serve", "--model", str(tiny_detector_dir), "--tau", "0.25", "--port", "0", "--batch-size", "7"]) == 0
    assert loaded_on == ["dialcheck-compute"]
    client = TestClient(apps[0])
    health = client.get("/health").json()
    assert health["thresholds"]["tau"] == 0.25 and health["checks"] == {"requests": 0, "batches": 0}
    sizes, real = [], api.predict_grouped
    monkeypatch.setattr(api, "predict_grouped", lambda d, dets, b=64: (sizes.append(b), real(d, dets, b))[1])
    assert len(client.post("/check", json={"dialogues": [["a", "b"], ["c", "d", "e"]]}).json()["verdicts"]) == 2
    assert sizes == [7]  # --batch-size reaches the model


def test_more_workers_run_jobs_side_by_side_and_a_bad_count_is_a_user_error(capsys):
    import threading

    from dialcheck.cli import main
    from dialcheck.serve import ComputeThread

    ct, both = ComputeThread(workers=2), threading.Barrier(2, timeout=10)
    names = [ct.submit(lambda: (both.wait(), threading.current_thread().name)[1]) for _ in range(2)]
    assert sorted(f.result(10) for f in names) == ["dialcheck-compute-0", "dialcheck-compute-1"]  # no deadlock
    ct.close()
    inline = ComputeThread(workers=0)  # on the submitting thread, no thread of its own
    assert inline.run(lambda: threading.current_thread().name) == threading.current_thread().name
    with pytest.raises(SystemExit) as e:  # refused when the command line is read, before the model loads
        main(["serve", "--workers", "-1"])
    assert e.value.code == 2 and "argument --workers: must be 0 or more, got -1" in capsys.readouterr().err


def test_a_rank_request_is_scored_in_one_batch_with_the_checks_waiting_beside_it():
    import threading

    det, ct = _Counting(), QueuedCompute()
    client = TestClient(create_app(det, max_dialogues=3, compute=ct))
    gate, out = blocked(ct), {}

    def rank():
        out["rank"] = client.post("/rank", json={"context": ["I have a cat.", "Nice."], "candidates": ["no", "yes"]})

    def check():
        out["check"] = client.post("/check", json=["a", "no"])

    threads = [threading.Thread(target=f) for f in (rank, check)]
    for t in threads:
        t.start()
    assert ct.queued.get(timeout=10) and ct.queued.get(timeout=10)  # both requests wait behind the blocked thread
    gate.set()
    for t in threads:
        t.join(10)
    ranked = out["rank"].json()["ranked"]
    assert [(c["index"], c["text"], c["contradiction"]) for c in ranked] == [(1, "yes", False), (0, "no", True)]
    assert out["check"].json()["verdicts"][0]["contradiction"] is True
    assert len(det.calls) == 1 and sorted(det.calls[0][0]) == ["no", "no", "yes"]  # one predict for both requests
    assert (ct.requests, ct.batches) == (2, 1)
    too_many = client.post("/rank", json={"context": ["a", "b"], "candidates": ["x"] * 4})
    assert too_many.status_code == 413 and "at most 3" in too_many.json()["detail"]
    bad = client.post("/rank", json={"context": ["a", "b"], "candidates": ["x"], "speaker": 3.5})
    assert bad.status_code == 422  # a whole number names a speaker ("3"), as a turn's does; a fraction none
    assert bad.json()["detail"] == "speaker: expected a speaker name (a non-empty string), got float"
    ct.close()


def test_check_with_a_speaker_checks_their_last_turn_with_text(client):
    chat = [*CHAT[:4], TOOL_CALL]
    plain = client.post("/check", json={"messages": chat[:4]}).json()["verdicts"][0]
    r = client.post("/check", json={"dialogues": [{"messages": chat}, {"messages": chat[:3]}], "speaker": "assistant"})
    a, b = r.json()["verdicts"]
    assert (a["turn"], b["turn"]) == (3, 1) and a["score"] == plain["score"]
    one = client.post("/check", json={"messages": chat, "speaker": ["assistant"]}).json()["verdicts"][0]
    assert one["turn"] == 3 and "turn" not in plain
    r = client.post("/check", json={"dialogues": [{"messages": chat[:1]}], "speaker": "assistant"})
    assert r.status_code == 422
    assert r.json()["detail"] == "dialogues[0]: speaker: no turn with text by assistant (its speakers: user)"
    assert client.post("/check", json={"messages": chat}).status_code == 422  # the tool call is the last turn
    assert client.post("/check", json={"messages": chat, "speaker": 3}).status_code == 422


def test_a_request_over_the_text_budget_is_a_413_and_one_within_it_is_answered(tiny_detector_dir, monkeypatch, capsys):
    import uvicorn

    from dialcheck.cli import main

    apps = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: apps.append(app))
    # --port 0: the port is probed before the model loads, and 8000 may be another server's here
    assert (
        main(["serve", "--model", str(tiny_detector_dir), "--max-chars", "20", "--max-dialogues", "2", "--port", "0"])
        == 0
    )
    client = TestClient(apps[0])
    ok = client.post("/check", json=["I have a cat.", "no"])  # 15 characters
    assert ok.status_code == 200 and len(ok.json()["verdicts"]) == 1
    big = client.post("/check", json=["I have a cat.", "no", "I never had pets."])  # 32
    assert big.status_code == 413 and "at most 20 characters per request, got 32" in big.json()["detail"]
    # a /rank context is read once per candidate: 2 x ("I have a cat." + "x") = 28
    rank = client.post("/rank", json={"context": ["I have a cat."], "candidates": ["x", "y"]})
    assert rank.status_code == 413 and "got 28" in rank.json()["detail"]
    assert client.post("/check", json={"dialogues": [["a", "b"]] * 3}).status_code == 413  # --max-dialogues
    with pytest.raises(SystemExit) as e:
        main(["serve", "--max-chars", "0"])
    assert e.value.code == 2 and "argument --max-chars: must be at least 1, got 0" in capsys.readouterr().err


def test_a_pair_of_long_turns_counts_once_per_piece_in_the_text_budget(tiny_detector_dir):
    # two 3,000-word turns (28,000 characters, well within 500,000) are read piece against piece: about 12,000
    # pairs, which held the compute thread of `dialcheck serve` for 3 minutes
    client = TestClient(create_app(load_detector(tiny_detector_dir), max_chars=100_000))
    long = "I have a dog and a cat at home. " * 450  # 14,400 characters, about 113 pieces
    r = client.post("/check", json=["Tell me.", long, "Ok.", long])
    assert r.status_code == 413
    assert "a pair of long turns counted once per piece of the other turn" in r.json()["detail"]
    # short turns count once, as before, and a long turn beside short ones once per piece of the short one (one)
    assert client.post("/check", json=["Tell me.", long, "Ok.", "I never had pets."]).status_code == 200


def test_a_chinese_request_is_budgeted_by_the_tokens_the_model_reads(tiny_base):
    """A CJK ideograph is a token of its own, where about 4 characters of English are one: counted once, a Chinese
    request was read as about 4 times the tokens the budget allowed; two 3,000-character turns (144,000 characters
    of 500,000) as some 9,000 pairs of 32-token pieces, which holds the compute thread for minutes."""
    from transformers import AutoTokenizer

    from dialcheck.schema import Dialogue
    from dialcheck.serve.app import CJK_CHARS, read_chars

    tok = AutoTokenizer.from_pretrained(tiny_base)  # all-MiniLM-L6-v2's tokenizer
    zh = ["我今年二十三岁了，在上海做软件工程师，周末喜欢和朋友去爬山。", "真好！你做这份工作多久了？"]
    en = ["I am twenty-three, I work as a software engineer in Shanghai and go hiking on weekends.", "Nice!"]
    for texts in (zh, en):  # the estimate tracks tokens, in either script: about CJK_CHARS characters a token
        tokens = sum(len(tok.tokenize(t)) for t in texts)
        assert 0.75 < read_chars(Dialogue.from_texts(texts)) / (CJK_CHARS * tokens) < 1.5
    det = _Counting()
    client = TestClient(create_app(det))  # the default budget, 500,000
    turns = [
        "我今年二十三岁了，在上海做软件工程师，周末喜欢和朋友去爬山。",
        "真好！你做这份工作多久了？我也很喜欢爬山，下次我们一起去吧。",
    ]
    turns *= 5  # ten turns of 30 characters, 1,095 as the budget counts them
    assert client.post("/check", json=turns).status_code == 200
    long = "我家里有一只狗和一只猫，它们每天都一起玩。" * 150  # 3,150 characters, about 100 pieces
    r = client.post("/check", json=["你好。", long, "好的。", long])
    assert r.status_code == 413
    assert r.json()["detail"].startswith("text: at most 500000 characters per request, got ")
    assert "a CJK character counted as 4 (the model reads it as one token" in r.json()["detail"]
    assert "a pair of long turns counted once per piece of the other turn" in r.json()["detail"]
    assert len(det.calls) == 1  # only the ten-turn dialogue reached the model
    # many Chinese dialogues within the characters the budget allowed, but 4 times the tokens
    small = TestClient(create_app(_Counting(), max_chars=4_000))
    r = small.post("/check", json={"dialogues": [turns] * 4})  # 1,200 characters, read as 4,380 of English
    assert r.status_code == 413 and "a pair of long turns" not in r.json()["detail"]
    assert small.post("/check", json={"dialogues": [turns] * 3}).status_code == 200


@pytest.mark.parametrize("empty", ["", "   ", "\n\t", "\u200b", " \ufeff\u200d"])  # invisible characters only
def test_an_empty_rank_candidate_is_a_located_422_as_an_empty_last_turn_is_on_check(empty):
    """Scored, an empty reply got a low contradiction score and ranked above a real reply that contradicts."""
    det = _Counting()
    client = TestClient(create_app(det))
    r = client.post("/rank", json={"context": ["I have two dogs.", "Names?"], "candidates": ["Rex.", "no", empty]})
    assert (r.status_code, r.json()) == (
        422,
        {"detail": "candidates[2]: the candidate is empty: there is nothing to check"},
    )
    r = client.post("/check", json=["I have two dogs.", "Names?", empty])
    assert r.status_code == 422 and "the last turn is empty: there is nothing to check" in r.json()["detail"]
    assert det.calls == []


@pytest.mark.parametrize(
    ("extra", "detail"),
    [
        (b'"candidates": ["Rex.", "\\ud800"]', "candidates[1]: not valid Unicode text (a lone surrogate \\ud800)"),
        (
            b'"candidates": ["Rex."], "speaker": " "',
            "speaker: ' ' is blank (name who says the reply, or leave speaker out: the context's next speaker says it)",
        ),
    ],
)
def test_a_rank_candidate_no_model_reads_or_a_blank_speaker_is_a_422_not_a_500(extra, detail):
    det = _Counting()
    client = TestClient(create_app(det), raise_server_exceptions=False)
    r = client.post("/rank", content=b'{"context": ["I have two dogs.", "Names?"], ' + extra + b"}")
    assert (r.status_code, r.json()) == (422, {"detail": detail})
    assert det.calls == []


def test_rank_routes_a_chinese_context_with_its_reply(tiny_detector_dir, monkeypatch):
    """u1, b1, u2 alone is no CDConv conversation; with a candidate it is, and goes to the Chinese default."""
    import dialcheck.api as api

    en, zh = load_detector(tiny_detector_dir), load_detector(tiny_detector_dir)
    en.tau, zh.tau = 1.0, 0.0  # the stand-in "Chinese" default flags everything, the English one nothing
    monkeypatch.setattr(api, "load", lambda model=None, language="en": {"en": en, "zh": zh}[language])
    monkeypatch.setattr(api, "default_model_path", lambda language="en": tiny_detector_dir)
    client = TestClient(create_app(None))
    ctx = ["你好。", "你好，我有一只猫。", "它几岁了？"]
    r = client.post("/rank", json={"context": ctx, "candidates": ["两岁。", "三岁了。"]})
    assert r.status_code == 200 and all(c["contradiction"] for c in r.json()["ranked"])
    r = client.post("/rank", json={"context": ["Hi.", "I have a cat.", "How old?"], "candidates": ["Two."]})
    assert not r.json()["ranked"][0]["contradiction"]


def test_check_and_rank_route_each_dialogue_once(tiny_detector_dir, monkeypatch):
    """/check routed each dialogue twice (once to pick its detector, once more for the warnings: each dialogue's text
    read for its language again), configured the routed default once a dialogue, and /rank routed the context with
    its first candidate and then the context with every candidate."""
    import dialcheck.api as api

    en, tod = load_detector(tiny_detector_dir), load_detector(tiny_detector_dir)
    monkeypatch.setattr(api, "load", lambda model=None, language="en": {"en": en, "tod": tod}[language])
    real, routed, configured = api.route, [], []

    def route(d, *a, **k):
        routed.append(d)
        return real(d, *a, **k)

    monkeypatch.setattr(api, "route", route)
    client = TestClient(create_app(None, configure=configured.append))
    plain = ["I have a cat.", "Nice.", "I never had pets."]
    with_kb = {"turns": plain, "knowledge": [{"poi": "a", "distance": "2 miles"}]}
    r = client.post("/check", json={"dialogues": [plain, with_kb, plain, KOREAN]})
    assert r.status_code == 200 and len(r.json()["verdicts"]) == 4
    assert "dialogues[3] has Korean turns" in r.json()["warnings"][0]  # the warning follows the one routing
    assert len(routed) == 4
    assert sorted(map(id, configured)) == sorted([id(en), id(tod)])  # once a default a request, not once a dialogue
    routed.clear()
    r = client.post("/rank", json={"context": plain[:2], "candidates": ["x", "y", "z"]})
    assert r.status_code == 200 and len(routed) == 1


def test_rank_warns_of_a_candidate_in_another_language_than_its_chinese_context_rather_than_fail(
    tiny_detector_dir, monkeypatch
):
    """The warning routed the context with every candidate again: an English candidate after a Chinese context was
    "mixed languages" there, after the verdicts were made, and the request a 500. The default the context with its
    first candidate routes to scores every candidate, as before; the warning names the English turn."""
    import dialcheck.api as api

    zh = load_detector(tiny_detector_dir)
    monkeypatch.setattr(api, "load", lambda model=None, language="en": zh)
    monkeypatch.setattr(api, "default_model_path", lambda language="en": tiny_detector_dir)
    monkeypatch.setattr(api, "_folder_language", lambda path: "zh")  # the stand-in reads Chinese
    client = TestClient(create_app(None), raise_server_exceptions=False)
    ctx = ["你好。", "你好，我有一只猫。", "它几岁了？"]
    r = client.post("/rank", json={"context": ctx, "candidates": ["两岁。", "It is two years old."]})
    assert r.status_code == 200, r.text
    assert sorted(c["text"] for c in r.json()["ranked"]) == ["It is two years old.", "两岁。"]
    (warning,) = r.json()["warnings"]
    assert "but the /rank request has turns that are not Chinese" in warning


@pytest.mark.parametrize("content_type", [None, "text/plain", "application/x-www-form-urlencoded"])
def test_a_json_body_sent_with_another_content_type_is_read_as_json(client, content_type):
    headers = {"Content-Type": content_type} if content_type else {}
    r = client.post("/check", content=b'{"turns": ["I have a cat.", "Nice."]}', headers=headers)
    assert r.status_code == 200 and len(r.json()["verdicts"]) == 1
    r = client.post("/rank", content=b'{"context": ["I have a cat."], "candidates": ["x"]}', headers=headers)
    assert r.status_code == 200 and r.json()["ranked"][0]["text"] == "x"


@pytest.mark.parametrize(("body", "name"), [(b"42", "int"), (b"null", "null"), (b'"hi"', "string")])
def test_a_body_that_is_not_a_dialogue_is_a_422_with_a_json_message(client, body, name):
    r = client.post("/check", content=body, headers={"Content-Type": "application/json"})
    assert r.status_code == 422
    assert r.json() == {"detail": f"expected a dialogue object or a list of strings, got {name}"}
    r = client.post("/check", content=b'{"dialogues": [["a", "b"], ' + body + b"]}")
    assert r.status_code == 422 and r.json()["detail"].startswith("dialogues[1]: expected a dialogue object")
    r = client.post("/rank", content=body, headers={"Content-Type": "application/json"})
    assert r.status_code == 422 and r.json()["detail"].startswith('expected {"context"')


@pytest.mark.parametrize(
    ("body", "content_type", "detail"),
    [
        (b'{"turns": [', "application/json", "invalid JSON in the request body: Expecting value at line 1, column 12"),
        (
            b'{"turns":\n ["a" "b"]}',
            None,
            "invalid JSON in the request body: Expecting ',' delimiter at line 2, column 7",
        ),
        (
            b"turns=a&turns=b",
            "application/x-www-form-urlencoded",
            "invalid JSON in the request body: Expecting value at line 1, column 1 "
            "(it was sent as application/x-www-form-urlencoded; the API reads JSON)",
        ),
        (
            b'["caf\xe9", "b"]',
            "application/json",
            "the request body is not UTF-8 JSON: byte 0xe9 at line 1, column 6 (send JSON encoded as UTF-8)",
        ),
        (b"[" * 100_000 + b"]" * 100_000, "application/json", "invalid JSON in the request body: nested too deeply"),
        (b"", "application/json", 'the request body is empty: expected JSON, a dialogue or {"dialogues": [...]}'),
    ],
)
def test_a_body_that_is_not_utf8_json_is_a_400_with_one_message(client, body, content_type, detail):
    headers = {"Content-Type": content_type} if content_type else {}
    for route in ("/check", "/rank"):
        r = client.post(route, content=body, headers=headers)
        assert (r.status_code, r.json()) == (400, {"detail": detail})


def test_a_body_over_the_byte_limit_is_a_413_and_is_not_scored(tiny_detector_dir):
    det = _Counting()
    client = TestClient(create_app(det, max_bytes=100))
    ok = client.post("/check", json=["I have a cat.", "no"])
    assert ok.status_code == 200
    body = json.dumps(["I have a cat.", "x" * 100]).encode()
    r = client.post("/check", content=body)  # with its Content-Length
    assert r.status_code == 413
    assert r.json()["detail"] == (
        f"request body: at most 100 bytes, got {len(body)} (split the request, or serve with a larger --max-chars)"
    )
    r = client.post("/rank", content=iter([body[:60], body[60:]]))  # sent in chunks, without a Content-Length
    assert r.status_code == 413 and "got more than 100" in r.json()["detail"]
    assert len(det.calls) == 1  # only the request within the limit reached the model
    # by default 8 bytes per --max-chars character, plus 1 MiB for speakers, ids, knowledge tables and JSON syntax
    limited = TestClient(create_app(load_detector(tiny_detector_dir), max_chars=20))
    pad = b" " * (8 * 20 + 2**20)
    assert limited.post("/check", content=b'["a", "b"]' + pad).status_code == 413
    assert limited.post("/check", content=b'["a", "b"]' + pad[:-10]).status_code == 200


@pytest.mark.parametrize(
    ("port", "message"), [("99999", "must be 0-65535, got 99999"), ("x", "expected a port number")]
)
def test_a_bad_port_is_refused_before_a_model_loads(tiny_detector_dir, monkeypatch, capsys, port, message):
    import uvicorn

    import dialcheck.cli.serve as serve_cli
    from dialcheck.cli import build_parser, main

    loads = []
    monkeypatch.setattr(serve_cli, "load_for", lambda args: loads.append(args))
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: None)
    with pytest.raises(SystemExit) as exit_:
        main(["serve", "--model", str(tiny_detector_dir), "--port", port])
    assert exit_.value.code == 2 and loads == []
    assert f"argument --port: {message}" in capsys.readouterr().err
    assert [build_parser().parse_args(["serve", "--port", p]).port for p in ("0", "65535")] == [0, 65535]


@pytest.mark.parametrize(
    ("given", "want"), [([], 30.0), (["--shutdown-timeout", "2.5"], 2.5), (["--shutdown-timeout", "0"], 0)]
)
def test_the_shutdown_timeout_reaches_uvicorn(tiny_detector_dir, monkeypatch, given, want):
    import uvicorn

    from dialcheck.cli import main

    configs = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: configs.append(uvicorn.Config(app, **kw)))
    assert main(["serve", "--model", str(tiny_detector_dir), "--port", "0", *given]) == 0
    assert configs[0].timeout_graceful_shutdown == want


def test_model_default_routes_each_dialogue_as_no_model_does(monkeypatch):
    # as check and score do: "default" names no model, so a Chinese dialogue is not run by the English default
    import uvicorn

    import dialcheck.cli.common as common
    import dialcheck.cli.serve as serve_cli
    from dialcheck import api
    from dialcheck.cli import main

    apps, loaded = [], []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: apps.append(app))
    monkeypatch.setattr(serve_cli, "load_for", lambda args: pytest.fail("--model default loaded one model"))
    monkeypatch.setattr(common, "configure", lambda det, args: det)
    monkeypatch.setattr(api, "load", lambda model=None, language="en": loaded.append((model, language)) or object())
    assert main(["serve", "--model", "default", "--port", "0"]) == 0
    assert len(apps) == 1 and [lang for _, lang in loaded] == ["en", "tod"]


@pytest.mark.parametrize(
    ("value", "message"),
    [("-1", "must be 0 or more, got -1"), ("inf", "expected a finite number, got 'inf'"), ("x", "expected a number")],
)
def test_a_bad_shutdown_timeout_is_refused_before_a_model_loads(monkeypatch, capsys, value, message):
    import dialcheck.cli.serve as serve_cli
    from dialcheck.cli import main

    loads = []
    monkeypatch.setattr(serve_cli, "load_for", lambda args: loads.append(args))
    with pytest.raises(SystemExit) as e:
        main(["serve", "--model", "x", "--shutdown-timeout", value])
    assert e.value.code == 2 and loads == []
    assert f"argument --shutdown-timeout: {message}" in capsys.readouterr().err


def test_closing_the_compute_thread_gives_up_on_the_jobs_left_after_its_timeout():
    """The server closes it once it stops waiting for its requests: the request threads waiting on a check that
    holds the compute thread (or is queued behind one) must not wait on, or the process waits for them."""
    import threading
    import time

    from dialcheck.schema import Dialogue
    from dialcheck.serve import ComputeThread
    from dialcheck.serve.compute import ComputeClosed, wait

    ct, errors = ComputeThread(), []
    worker = ct.run(threading.current_thread)  # the compute thread, to wait for its end below
    gate = blocked(ct)
    running = ct.submit(lambda: "late")  # queued behind the blocked call
    queued = ct.check([Dialogue.from_texts(["a", "no"])], lambda ds: [_Counting()] * len(ds))
    hook, threading.excepthook = threading.excepthook, errors.append
    try:
        start = time.monotonic()
        ct.close(timeout=0.2)
        assert time.monotonic() - start < 5
        for future in (running, queued):
            with pytest.raises(ComputeClosed):
                wait(future)
        gate.set()  # the job given up on ends on its thread, which then stops, its result dropped
        worker.join(WAIT)  # an error it raised on the way has reached the hook by then
        assert not worker.is_alive()
    finally:
        threading.excepthook = hook
    assert errors == []
    assert ct.run(lambda: 6 * 7) == 42  # a job after close starts a thread again
    ct.close()


def test_closing_an_inline_compute_thread_counts_the_checks_still_running_on_their_callers_threads():
    """With workers=0 a job runs on the thread that submitted it (a server's request thread, no daemon), which
    close cannot stop: the server asks how many still run, as the process would wait for them at exit."""
    import threading

    from dialcheck.serve import ComputeThread
    from dialcheck.serve.compute import ComputeClosed

    ct, gate, started, outcome = ComputeThread(workers=0), threading.Event(), threading.Event(), []

    def request() -> None:
        try:
            outcome.append(ct.run(lambda: (started.set(), gate.wait(10), "late")[-1]))
        except ComputeClosed as e:
            outcome.append(e)

    caller = threading.Thread(target=request)
    caller.start()
    assert started.wait(10)
    assert ct.running_given_up() == 0  # not given up on yet
    ct.close(timeout=0)
    assert ct.running_given_up() == 1
    gate.set()
    caller.join(10)
    assert ct.running_given_up() == 0 and isinstance(outcome[0], ComputeClosed)  # its result dropped
    assert ct.run(lambda: 6 * 7) == 42


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize(
    ("signame", "workers"),
    [
        ("SIGTERM", "1"),
        ("SIGTERM", "0"),
        # with --workers 0 (the --onnx default) the check runs on a request thread, which is no daemon: Ctrl-C
        # stopped the server in time, then the interpreter waited at exit for the check to end (a minute here)
        ("SIGINT", "0"),
    ],
)
def test_a_signal_stops_the_server_within_the_shutdown_timeout_while_a_check_is_scored(tmp_path, signame, workers):
    """Without a bound the server waited for the check in progress, and every one queued behind it; with
    uvicorn's bound alone, for the app's shutdown, which waited for the compute thread."""
    import re
    import signal
    import subprocess
    import threading
    import time
    import urllib.error
    import urllib.request

    from dialcheck.serve.app import STOPPED

    server = """if True:
        import sys, threading
        import dialcheck.cli.serve as serve_cli
        from dialcheck.cli import main

        class Stuck:  # a check that holds the compute thread for a minute
            def predict(self, dialogues, batch_size=64):
                print("scoring", file=sys.stderr, flush=True)
                threading.Event().wait(60)

        serve_cli.load_for = lambda args: Stuck()
        workers = sys.argv[1]
        sys.exit(main(["serve", "--model", "stand-in", "--port", "0", "--shutdown-timeout", "1", "--workers", workers]))
    """
    log = tmp_path / "server.log"

    def wait_for(pattern: str) -> re.Match:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and p.poll() is None:
            m = re.search(pattern, log.read_text())
            if m:
                return m
            time.sleep(0.05)
        raise AssertionError(f"no {pattern!r} in the server's log:\n{log.read_text()}")

    with log.open("w") as err:
        p = subprocess.Popen([sys.executable, "-c", server, workers], stderr=err)
    try:
        port = int(wait_for(r"http://127\.0\.0\.1:(\d+)").group(1))
        body = json.dumps(["I have a cat.", "no"]).encode()
        post = urllib.request.Request(f"http://127.0.0.1:{port}/check", data=body, method="POST")

        answer = []

        def send():
            try:
                urllib.request.urlopen(post, timeout=90)
            except urllib.error.HTTPError as e:  # the server gives up on the request
                answer.append((e.code, json.load(e)))

        client = threading.Thread(target=send, daemon=True)
        client.start()
        wait_for("scoring")
        start = time.monotonic()
        p.send_signal(getattr(signal, signame))
        p.wait(20)
        assert time.monotonic() - start < 10
        assert "gave up on 1 job(s)" in log.read_text()
        # uvicorn cancelled the request: it answered "Internal Server Error" and logged a traceback
        client.join(10)
        assert answer == [(503, {"detail": STOPPED})]
        assert "Traceback" not in log.read_text()
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_rank_reads_its_context_as_detector_rank_does(tiny_detector_dir):
    """/rank refused a context ending with a tool call ("the last turn is empty", advising "speaker": "assistant",
    which on /rank names the reply's speaker) and an empty context, both of which Detector.rank ranks: the context's
    last turn is not the one checked."""
    det = load_detector(tiny_detector_dir)
    client = TestClient(create_app(det))
    chat = [
        {"role": "user", "content": "Do you have pets?"},
        {"role": "assistant", "content": "Yes, two dogs."},
        {"role": "user", "content": "Names?"},
        {"role": "assistant", "content": None},
    ]
    for context in ({"messages": chat}, []):
        r = client.post("/rank", json={"context": context, "candidates": ["I have no dogs.", "Rex and Max."]})
        assert r.status_code == 200, r.json()
        if context:  # the reply after the assistant's tool call is the assistant's: it is paired with turn 1
            assert [set(x["pair_scores"]) for x in r.json()["ranked"]] == [{"1"}, {"1"}]
        want = det.rank(context, ["I have no dogs.", "Rex and Max."])
        assert [x["index"] for x in r.json()["ranked"]] == [x.index for x in want]
        assert [x["score"] for x in r.json()["ranked"]] == pytest.approx([x.verdict.score for x in want], abs=1e-5)


@pytest.mark.parametrize(
    ("route", "body", "detail"),
    [
        ("/check", {"turns": ["a", "b"], "speaker": ""}, "speaker: empty (name the speaker whose turn is checked)"),
        (
            "/check",
            {"turns": ["a", "b"], "speaker": 3.5},
            "speaker: expected a speaker name or a list of names, got float",
        ),
        (
            "/check",
            {"turns": ["a", "b"], "speaker": []},
            "speaker: an empty list names no speaker (name one, or leave speaker out to check the last turn)",
        ),
        ("/check", {"dialogues": []}, "dialogues: expected a non-empty list, got an empty list"),
        ("/check", {"dialogues": {"turns": ["a"]}}, "dialogues: expected a non-empty list, got object"),
        (
            "/check",
            [["I have a dog.", "Nice."], ["a", "b"]],
            'expected one dialogue or {"dialogues": [...]}, got a list of lists: a bare list is one dialogue\'s turns; '
            'send several dialogues as {"dialogues": [...]}',
        ),
        ("/rank", {"context": ["a"]}, 'candidates: missing (expected {"context": dialogue, "candidates": [strings]})'),
        ("/rank", {"candidates": ["x"]}, 'context: missing (expected {"context": dialogue, "candidates": [strings]})'),
        ("/rank", [1], 'expected {"context": dialogue, "candidates": [strings]}, got list'),
        (
            "/rank",
            {"context": ["a"], "candidates": "x"},
            "candidates: expected a non-empty list of strings, got string",
        ),
        ("/rank", {"context": ["a"], "candidates": ["x", 1]}, "candidates[1]: expected a string, got int"),
        (
            "/rank",
            {"context": "hi", "candidates": ["x"]},
            "context: expected a list of turns, got a string (a context is a list of turns)",
        ),
    ],
)
def test_a_bad_field_is_a_422_naming_it_and_what_it_got(client, route, body, detail):
    r = client.post(route, json=body)
    assert (r.status_code, r.json()) == (422, {"detail": detail})


def test_the_readme_reaches_the_compute_thread_from_a_bare_import_dialcheck():
    """README: `ct = dialcheck.serve.ComputeThread()` after `import dialcheck` was an AttributeError (a subpackage
    is an attribute only once imported); a fresh interpreter, as the other tests import dialcheck.serve."""
    import subprocess

    code = (
        "import sys, dialcheck; assert 'dialcheck.serve' not in sys.modules; "
        "ct = dialcheck.serve.ComputeThread(); print(ct.run(lambda: 6 * 7), dialcheck.batch.BatchScorer.__name__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["42", "BatchScorer"]


def test_a_port_in_use_or_a_host_not_here_is_refused_before_a_model_loads(monkeypatch, capsys):
    """uvicorn found out after the model had loaded (10-20 s for the default), and said so in its own log line."""
    import socket

    import uvicorn

    import dialcheck.cli.serve as serve_cli
    from dialcheck.cli import main

    loads = []
    monkeypatch.setattr(serve_cli, "load_for", lambda args: loads.append(args))
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: loads.append("run"))
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        assert main(["serve", "--model", "x", "--port", str(port)]) == 2 and loads == []
        assert (
            f"--port {port}: in use on 127.0.0.1: another server listens there (stop it, or pick another --port)"
            in capsys.readouterr().err
        )
    assert main(["serve", "--model", "x", "--host", "no-such-host.invalid", "--port", str(port)]) == 2 and loads == []
    assert "--host no-such-host.invalid: cannot listen on no-such-host.invalid:" in capsys.readouterr().err


def test_a_speaker_or_tau_in_a_dialogue_object_of_a_batch_is_that_dialogues(client):
    """The one-dialogue form honours its object's "speaker" (and refuses "tau"); in {"dialogues": [...]} the same
    object's were silently ignored: its last turn (here the user's) was checked at the server's thresholds."""
    chat = [*CHAT[:4], {"role": "user", "content": "ok"}]
    one = client.post("/check", json={"messages": chat, "speaker": "assistant"}).json()["verdicts"][0]
    r = client.post("/check", json={"dialogues": [{"messages": chat, "speaker": "assistant"}, {"messages": chat}]})
    a, b = r.json()["verdicts"]
    assert a == one and a["turn"] == 3 and "turn" not in b
    r = client.post("/check", json={"dialogues": [{"messages": chat}], "speaker": "user"})
    assert r.json()["verdicts"][0]["turn"] == 4
    r = client.post("/check", json={"dialogues": [{"messages": chat, "speaker": "assistant"}], "speaker": "user"})
    # a dialogue's own speaker wins over the request's
    assert r.json()["verdicts"][0]["turn"] == 3
    r = client.post("/check", json={"dialogues": [{"messages": chat}, {"messages": chat, "tau": 0.3}]})
    assert r.status_code == 422 and r.json()["detail"].startswith(
        "dialogues[1]: tau: not a dialogue field; the thresholds are the server's"
    )
    r = client.post("/check", json={"dialogues": [{"messages": chat, "speaker": 3.5}]})
    assert r.json()["detail"] == "dialogues[0]: speaker: expected a speaker name or a list of names, got float"


@pytest.mark.parametrize("key", ["turns", "messages"])
def test_a_body_with_one_dialogue_and_dialogues_is_a_422_naming_both(client, key):
    """{"turns": [...], "dialogues": [...]} was answered for "dialogues" alone: the one dialogue was silently
    left out."""
    one = ["I have a cat.", "Nice.", "I never had pets."] if key == "turns" else CHAT
    r = client.post("/check", json={key: one, "dialogues": [["a", "b"]]})
    assert r.status_code == 422
    assert r.json()["detail"].startswith(f'dialogues, {key}: a request is one dialogue ({{"{key}": [...]}}) or')


KOREAN = ["강아지 두 마리를 키워요.", "좋네요!", "저는 애완동물을 키운 적이 없어요."]


def test_a_korean_dialogue_routed_to_the_english_default_is_answered_with_a_warning(tiny_detector_dir, monkeypatch):
    """Since 1bbd0ee the warning was only in the server's log: the client could not tell the verdict means little."""
    import dialcheck.api as api

    en = load_detector(tiny_detector_dir)
    monkeypatch.setattr(api, "load", lambda model=None, language="en": en)
    client = TestClient(create_app(None))
    r = client.post("/check", json={"turns": KOREAN})
    assert r.status_code == 200 and len(r.json()["verdicts"]) == 1
    from dialcheck import Dialogue

    routed = api.routed_warnings([Dialogue.from_texts(KOREAN)], ["en"], pass_model=api.SERVE_MODEL)
    (want,) = (text for _, text in routed)  # "start the server with --model ...": a request chooses no model
    assert r.json()["warnings"] == [want]
    assert "the dialogue has Korean turns: its verdicts on them mean little" in want
    r = client.post("/check", json={"dialogues": [["I have a cat.", "Nice.", "I never had pets."], KOREAN]})
    (text,) = r.json()["warnings"]
    assert "dialogues[1] has Korean turns" in text and "dialogues[0]" not in text
    ranked = client.post("/rank", json={"context": KOREAN[:2], "candidates": ["x", "y"]}).json()
    assert "the /rank request has Korean turns" in ranked["warnings"][0]


def test_an_english_dialogue_gets_no_warnings_field(tiny_detector_dir, monkeypatch):
    import dialcheck.api as api

    en = load_detector(tiny_detector_dir)
    monkeypatch.setattr(api, "load", lambda model=None, language="en": en)
    for client in (TestClient(create_app(None)), TestClient(create_app(en))):
        r = client.post("/check", json={"turns": ["I have a cat.", "Nice.", "I never had pets."]})
        assert r.status_code == 200 and set(r.json()) == {"verdicts"}
        r = client.post("/rank", json={"context": ["I have a cat.", "Nice."], "candidates": ["x", "y"]})
        assert r.status_code == 200 and set(r.json()) == {"ranked"}


def test_chinese_turns_sent_to_an_explicit_english_model_are_answered_with_a_warning(client):
    r = client.post("/check", json={"turns": ["我有两只狗。", "真好！", "我从来没养过宠物。"]})
    assert r.status_code == 200
    (text,) = r.json()["warnings"]
    assert "was trained on English dialogues, but the dialogue has Chinese turns" in text
    assert "Serve without --model to route Chinese conversations" in text


# The page's script run by node against a stand-in DOM and fetch: what a person sees in #out, each element as
# [tag, class, text]; every innerHTML assignment is recorded (and read: empty elements only), so that a test can tell
# text was never read as markup.
_PAGE_HARNESS = r"""
const [script, typed, status, body] = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const markup = [];
class El {
  constructor(tag) { this.tag = tag; this.className = ''; this.children = []; this.text = ''; this.value = ''; }
  appendChild(c) { this.children.push(c); return c; }
  set textContent(t) { this.text = String(t); this.children = []; }
  get textContent() { return this.text + this.children.map(c => c.textContent).join(''); }
  get firstChild() { return this.children[0]; }
  get lastChild() { return this.children[this.children.length - 1]; }
  set innerHTML(h) {  // empty elements only, as '<p class="c"></p><pre></pre>'
    markup.push(h);
    this.children = [...h.matchAll(/<(\w+)(?: class="([^"]*)")?><\/\1>/g)].map(m => {
      const e = new El(m[1]); e.className = m[2] || ''; return e;
    });
  }
}
const els = {t: new El('textarea'), out: new El('div')};
els.t.value = typed;
globalThis.document = {getElementById: id => els[id], createElement: tag => new El(tag)};
let sent = null;
globalThis.fetch = async (url, opts) => {
  sent = [url, JSON.parse(opts.body)];
  return {ok: status < 400, status, json: async () => body};
};
eval(script);
go().then(() => console.log(JSON.stringify({
  sent, markup, shown: els.out.children.map(c => [c.tag, c.className, c.textContent]),
})));
"""


def _page_shows(page: str, typed: str, status: int, body: dict) -> dict:
    import re
    import shutil
    import subprocess

    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the page's script cannot be run")
    (script,) = re.findall(r"<script>(.*?)</script>", page, re.S)
    run = subprocess.run(
        [node, "-e", _PAGE_HARNESS],
        input=json.dumps([script, typed, status, body]),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_the_page_shows_the_warnings_of_its_check_above_the_verdict(tiny_detector_dir, monkeypatch):
    """Since 3450048 /check returned "warnings", but the page at / showed only the verdict: a person who pasted a
    Korean dialogue saw a verdict that means little with nothing to say so."""
    import dialcheck.api as api

    en = load_detector(tiny_detector_dir)
    monkeypatch.setattr(api, "load", lambda model=None, language="en": en)
    client = TestClient(create_app(None))
    page = client.get("/").text
    answer = client.post("/check", json={"turns": KOREAN}).json()
    (warning,) = answer["warnings"]
    seen = _page_shows(page, "\n".join(KOREAN), 200, answer)
    assert seen["sent"] == ["check", {"turns": KOREAN}]
    assert [tag for tag, _, _ in seen["shown"]] == ["p", "p", "pre"]
    assert seen["shown"][0] == ["p", "w", "Warning: " + warning]
    assert seen["shown"][1][2].startswith(("Contradiction (score", "No contradiction (score"))
    # an English dialogue: no warnings field, the verdict alone, as before
    plain = ["I have a cat.", "Nice.", "I never had pets."]
    seen = _page_shows(page, "\n".join(plain), 200, client.post("/check", json={"turns": plain}).json())
    assert [cls for _, cls, _ in seen["shown"]][:1] != ["w"] and len(seen["shown"]) == 2


def test_the_page_shows_a_warning_or_an_error_as_text_never_as_markup(client):
    page = client.get("/").text
    answer = {"verdicts": [{"contradiction": True, "score": 0.9, "evidence": [0]}], "warnings": ["<img src=x>"]}
    seen = _page_shows(page, "a <b>\nb\nc", 200, answer)
    assert not any("<img" in h or "<b>" in h for h in seen["markup"])
    assert seen["shown"] == [
        ["p", "w", "Warning: <img src=x>"],
        ["p", "c", "Contradiction (score 0.90)"],
        ["pre", "", "contradicts:\n[0] a <b>"],
    ]
    seen = _page_shows(page, "a", 422, {"detail": "<i>turns[0]</i>"})
    assert not any("<i>" in h for h in seen["markup"]) and seen["shown"] == [["pre", "c", "<i>turns[0]</i>"]]


def test_each_check_and_rank_item_reads_back_as_a_verdict(client):
    """Verdict.from_dict refuses fields it does not know: those /check and /rank write beside a verdict are not."""
    from dialcheck.schema import Verdict

    ctx = ["I have a cat.", "Nice."]
    r = client.post("/check", json={"turns": [*ctx, "I never had pets.", "Oh."], "speaker": "A"}).json()
    ranked = client.post("/rank", json={"context": ctx, "candidates": ["x", "y"]}).json()["ranked"]
    items = [*r["verdicts"], *ranked]
    assert {"id", "turn", "index", "text"} <= set().union(*items)
    for item in items:
        beside = {"id", "turn", "index", "text"}
        assert Verdict.from_dict(item).to_dict() == {k: x for k, x in item.items() if k not in beside}
