"""Re-ranking and filtering candidate replies: policies, tie-breaks, bad input, the command."""

from __future__ import annotations

import json
from typing import ClassVar

import pytest

import dialcheck
from dialcheck.cli import main
from dialcheck.errors import InputError
from dialcheck.generation import Candidate, rerank, rerank_many
from dialcheck.schema import Verdict

CTX = ["I have two dogs.", "What are their names?"]


class KeywordDetector:
    """Contradiction score from keywords in the last turn; counts its calls."""

    SCORES: ClassVar[dict[str, float]] = {"never": 0.95, "cat": 0.7, "maybe": 0.3}

    def __init__(self, tau: float = 0.5) -> None:
        self.tau = tau
        self.calls = 0
        self.seen: list = []

    def predict(self, dialogues, batch_size=64):
        self.calls += 1
        out = []
        for d in dialogues:
            self.seen.append(d)
            s = max([v for k, v in self.SCORES.items() if k in d.last.text.lower()], default=0.0)
            out.append(Verdict(s >= self.tau, s))
        return out


def test_filter_drops_contradictions_and_keeps_generator_order():
    det = KeywordDetector()
    cands = [("I never had a dog.", -0.1), ("Maybe Rex.", -0.9), ("Rex and Fido.", -0.5), ("My cat is Tom.", -0.2)]
    r = rerank(CTX, cands, detector=det)
    assert [c.text for c in r.ranked if c.kept] == ["Rex and Fido.", "Maybe Rex."]  # by generator score
    assert r.chosen.text == "Rex and Fido." and r.chosen.index == 2
    assert {c.text for c in r.dropped} == {"I never had a dog.", "My cat is Tom."}
    assert all(c.reason == "contradiction" for c in r.dropped)
    assert r.counts == {"contradiction": 2, "candidates": 4}
    # the reply is spoken by the second-to-last speaker (A), after the whole context
    assert all(d.last.speaker == "A" and len(d.turns) == 3 for d in det.seen)


def test_sort_orders_by_contradiction_score_with_generator_score_breaking_ties():
    cands = [Candidate("Rex.", -2.0), Candidate("I never had a dog.", -0.1), Candidate("Fido.", -0.5), "Maybe."]
    r = rerank(CTX, cands, detector=KeywordDetector(), policy="sort")
    assert [c.text for c in r.ranked] == ["Fido.", "Rex.", "Maybe.", "I never had a dog."]
    assert r.chosen.text == "Fido."
    # explicit scores override and break the tie the other way
    r2 = rerank(CTX, ["Rex.", "Fido."], detector=KeywordDetector(), policy="sort", scores=[0.0, -1.0])
    assert [c.text for c in r2.ranked] == ["Rex.", "Fido."]
    # without any scores, input order breaks ties
    r3 = rerank(CTX, ["Fido.", "Rex."], detector=KeywordDetector(), policy="sort")
    assert [c.index for c in r3.ranked] == [0, 1]


def test_all_contradictory_falls_back_to_the_least_contradictory_or_to_nothing():
    cands = ["I never had a dog.", "My cat is Tom."]
    r = rerank(CTX, cands, detector=KeywordDetector())
    assert r.chosen.text == "My cat is Tom." and r.counts["fallback"] == 1 and not r.chosen.kept
    r2 = rerank(CTX, cands, detector=KeywordDetector(), fallback="none")
    assert r2.chosen is None and "fallback" not in r2.counts


def test_empty_repeated_and_duplicate_candidates_are_set_aside_with_counts():
    det = KeywordDetector()
    cands = ["", "  ", "i have two dogs.", "Rex and Fido.", "rex and  fido.", "What are their names?"]
    r = rerank(CTX, cands, detector=det)
    assert r.chosen.text == "Rex and Fido."
    assert r.counts == {"empty": 2, "repeats_context": 2, "duplicate": 1, "contradiction": 0, "candidates": 6}
    assert len(det.seen) == 1  # only the one real candidate reached the detector
    kept = rerank(CTX, ["I have two dogs."], detector=KeywordDetector(), drop_repeats=False)
    assert kept.chosen.text == "I have two dogs."


def test_bad_input_gives_clear_messages():
    det = KeywordDetector()
    with pytest.raises(InputError, match="no candidates"):
        rerank(CTX, [], detector=det)
    with pytest.raises(InputError, match="unknown policy"):
        rerank(CTX, ["a"], detector=det, policy="random")
    with pytest.raises(InputError, match="2 candidates but 1 scores"):
        rerank(CTX, ["a", "b"], detector=det, scores=[1.0])
    with pytest.raises(InputError, match=r"candidates\[0\]"):
        rerank(CTX, [{"score": 1}], detector=det)


@pytest.mark.parametrize(
    ("candidate", "message"),
    [
        ({"text": "Rex.", "score": "high"}, "candidates[0].score: expected a number, got string"),
        ({"text": "Rex.", "score": True}, "candidates[0].score: expected a number, got boolean"),  # not 1.0
        ({"text": "Rex.", "score": {"p": 0.5}}, "candidates[0].score: expected a number, got object"),
        (("Rex.", False), "candidates[0][1]: expected a number (the score), got boolean"),
    ],
)
def test_a_bad_candidate_score_is_named_with_its_json_type(candidate, message):
    with pytest.raises(InputError) as e:
        rerank(CTX, [candidate], detector=KeywordDetector())
    assert str(e.value) == message


def test_rerank_many_scores_every_context_in_one_detector_call():
    det = KeywordDetector()
    results = rerank_many([CTX, ["Do you like cats?", "No."]], [["Rex.", "I never had a dog."], ["My cat."]], det)
    assert det.calls == 1 and len(det.seen) == 3
    assert results[0].chosen.text == "Rex." and results[1].chosen.text == "My cat."


def test_rerank_is_exported_and_works_with_a_real_tiny_detector(tiny_detector_dir):
    from dialcheck.api import load

    det = load(tiny_detector_dir)
    r = dialcheck.rerank(CTX, ["Rex and Fido.", "I have no dogs."], detector=det, policy="sort")
    assert len(r.ranked) == 2 and r.ranked[0].contradiction_score <= r.ranked[1].contradiction_score
    assert json.dumps(r.to_dict())


def test_rerank_command_json_and_text(capsys, tmp_path, tiny_detector_dir):
    p = tmp_path / "in.jsonl"
    rows = [
        {"id": "d1", "turns": CTX, "candidates": ["Rex and Fido.", {"text": "I have no dogs.", "score": -1}]},
        {"id": "d2", "turns": CTX, "candidates": ["", "Fido."]},
    ]
    p.write_text("\n".join(json.dumps(r) for r in rows))
    code = main(["rerank", str(p), "--json", "--model", str(tiny_detector_dir), "--tau", "1.0"])
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 0 and [o["id"] for o in out] == ["d1", "d2"]
    # nothing reaches tau 1.0: generator order, a scored candidate before one without a score
    assert out[0]["chosen"]["text"] == "I have no dogs."
    assert out[1]["counts"]["empty"] == 1
    code = main(["rerank", str(p), "--model", str(tiny_detector_dir), "--tau", "0.0", "--fallback", "none"])
    text = capsys.readouterr().out
    assert code == 0 and "d1: nothing chosen" in text and "(empty)" in text


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"turns": CTX}, "candidates: missing"),
        ({"turns": CTX, "candidates": []}, "the list is empty"),
        ({"turns": CTX, "candidates": "Rex"}, "expected a list"),
        ({"turns": []}, "the dialogue is empty"),  # nothing to generate a reply to
        ({"turns": CTX, "candidates": ["ok", 5]}, "candidates[1]: expected a string"),  # located, before scoring
        (
            {"turns": CTX, "candidates": [["Rex", "high"]]},
            "candidates[0][1]: expected a number (the score), got string",
        ),
    ],
)
def test_rerank_command_bad_records_exit_2(capsys, tmp_path, tiny_detector_dir, record, message):
    p = tmp_path / "bad.jsonl"
    p.write_text(json.dumps({"turns": CTX, "candidates": ["ok"]}) + "\n" + json.dumps(record) + "\n")
    code = main(["rerank", str(p), "--model", str(tiny_detector_dir)])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "line 2" in err and "Traceback" not in err


def test_rerank_command_names_the_line_of_a_one_record_file_and_refuses_non_utf8(capsys, tmp_path, tiny_detector_dir):
    p = tmp_path / "one.jsonl"
    p.write_text(json.dumps({"turns": CTX}) + "\n")
    assert main(["rerank", str(p), "--model", str(tiny_detector_dir)]) == 2
    assert f"{p}, line 1: candidates: missing" in capsys.readouterr().err  # not "line 0"
    p.write_text(json.dumps([{"turns": CTX, "candidates": ["ok"]}, {"turns": CTX, "candidates": [3]}]))
    assert main(["rerank", str(p), "--model", str(tiny_detector_dir)]) == 2
    assert f"{p}: record 2: candidates[0]: expected a string" in capsys.readouterr().err  # as the output names it
    p.write_bytes(b'{"turns": ["caf\xe9"], "candidates": ["x"]}\n')
    assert main(["rerank", str(p), "--model", str(tiny_detector_dir)]) == 2
    err = capsys.readouterr().err
    assert f"{p}, line 1: not UTF-8 text: byte 0xe9" in err and "Traceback" not in err


def test_rerank_command_names_every_bad_record_before_exiting_2(capsys, tmp_path, monkeypatch):
    from dialcheck import api

    monkeypatch.setattr(api, "load", lambda *a, **kw: pytest.fail("no model is loaded for bad input"))
    p = tmp_path / "rrbad.jsonl"
    rows = [
        json.dumps({"turns": CTX, "candidates": "Rex"}),  # line 1
        json.dumps({"turns": CTX, "candidates": ["Rex and Fido."]}),  # line 2: good
        "{oops",  # line 3
        json.dumps({"turns": CTX, "candidates": []}),  # line 4
        json.dumps({"turns": ["你好。", "Hi, I have a cat.", "它几岁了？"], "candidates": ["我没有猫。"]}),  # line 5
    ]
    p.write_text("\n".join(rows) + "\n")
    assert main(["rerank", str(p), "--threads", "1"]) == 2
    named = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("dialcheck: error:")]
    assert [ln.split(": ", 3)[2] for ln in named[:-1]] == [f"{p}, line {n}" for n in (1, 3, 4)]
    assert "candidates: expected a list, got string" in named[0]
    assert named[-1] == f"dialcheck: error: {p}: 3 of 5 records are bad (each named above); nothing was re-ranked"
    p.write_text("\n".join(rows[1:2] + rows[4:] + rows[4:]) + "\n")  # the mixed-language ones: each named too
    assert main(["rerank", str(p), "--threads", "1"]) == 2
    named = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("dialcheck: error:")]
    assert [f"line {n}: the dialogue mixes Chinese turns" in ln for n, ln in zip((2, 3), named, strict=False)] == [
        True,
        True,
    ]
    assert "2 of 3 records are bad" in named[-1]
    p.write_text(json.dumps([json.loads(rows[1]), json.loads(rows[4])]))  # a JSON list: "record 2", as the output
    assert main(["rerank", str(p), "--threads", "1"]) == 2
    assert f"{p}: record 2: the dialogue mixes Chinese turns" in capsys.readouterr().err


def test_rerank_command_refuses_two_records_of_one_id_naming_both(capsys, tmp_path, monkeypatch):
    # two records of one id were both re-ranked, and the text output ("d1: chose ...") names a record by its id alone
    from dialcheck import api

    monkeypatch.setattr(api, "load", lambda *a, **kw: pytest.fail("no model is loaded for bad input"))
    p = tmp_path / "twice.jsonl"
    rows = [{"id": "d1", "turns": CTX, "candidates": ["Rex."]}, {"id": "d2", "turns": CTX, "candidates": ["Fido."]}]
    rows.append({"dialogue_id": "d1", "turns": CTX, "candidates": ["No."]})  # any id key: the output shows it as "id"
    p.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert main(["rerank", str(p), "--threads", "1"]) == 2
    err = capsys.readouterr().err
    assert (
        f"dialcheck: error: {p}, line 3: dialogue_id: 'd1' is the id of line 1 too (give each record its own id: the "
        "output names a record by its id)"
    ) in err and "Traceback" not in err
    p.write_text(json.dumps([rows[0], {**rows[1], "id": 7}, {**rows[2], "dialogue_id": "7"}], indent=2))
    assert main(["rerank", str(p), "--threads", "1"]) == 2  # a JSON document's records by position; 7 is "7"
    assert f"{p}: record 3: dialogue_id: '7' is the id of record 2 too" in capsys.readouterr().err  # its key


def test_rerank_command_generates_missing_candidates_with_a_local_lm(capsys, tmp_path, tiny_detector_dir):
    from helpers_generation import build_tiny_lm

    lm = build_tiny_lm(tmp_path / "lm")
    p = tmp_path / "in.jsonl"
    p.write_text(
        json.dumps({"id": "g1", "turns": CTX}) + "\n" + json.dumps({"id": "g2", "turns": CTX, "candidates": ["Rex."]})
    )
    code = main(
        [
            "rerank",
            str(p),
            "--json",
            "--model",
            str(tiny_detector_dir),
            "--generate",
            "beam3",
            "--lm",
            str(lm),
            "--max-new-tokens",
            "4",
        ]
    )
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 0 and out[0]["counts"]["candidates"] == 3 and out[1]["counts"]["candidates"] == 1
    assert all(c["generator_score"] is not None for c in out[0]["ranked"])
    assert out[1]["chosen"]["text"] == "Rex."


def test_rerank_says_once_that_its_generation_options_went_unused(capsys, tmp_path, tiny_detector_dir, monkeypatch):
    # every record with its candidates: --generate and --lm were dropped without a word
    from dialcheck.generation import NBestGenerator

    monkeypatch.setattr(NBestGenerator, "load", lambda *a, **k: pytest.fail("nothing to generate: no LM is loaded"))
    p = tmp_path / "in.jsonl"
    p.write_text("".join(json.dumps({"id": f"d{i}", "turns": CTX, "candidates": ["Rex."]}) + "\n" for i in range(2)))
    argv = ["rerank", str(p), "--json", "--model", str(tiny_detector_dir)]
    code = main([*argv, "--generate", "beam10", "--lm", "some-lm"])
    out, err = capsys.readouterr()
    assert code == 0 and len(out.splitlines()) == 2
    warned = [ln for ln in err.splitlines() if "no record needed generating" in ln]
    assert len(warned) == 1 and "--generate" in warned[0] and "--lm" in warned[0], err
    code = main([*argv, "--endpoint", "http://127.0.0.1:9/v1", "--max-new-tokens", "8"])
    err = capsys.readouterr().err
    assert code == 0 and "--endpoint, --max-new-tokens" in err and "no record needed generating" in err
    assert main(argv) == 0 and "generating" not in capsys.readouterr().err  # none given: nothing to say


def test_rerank_command_without_a_model_routes_each_record_like_check(capsys, tmp_path, monkeypatch):
    """Knowledge -> the task-oriented default, Chinese (u1, b1, u2 and its reply) -> the Chinese one."""
    from dialcheck import api

    dets = {lang: KeywordDetector() for lang in ("en", "tod", "zh")}
    monkeypatch.setattr(api, "accelerate", lambda det, **kw: det)
    monkeypatch.setattr(api, "load", lambda model=None, language="en": dets[language])
    monkeypatch.setattr(api, "default_model_path", lambda language="en": tmp_path)  # "shipped": exists
    rows = [
        {"id": "en", "turns": CTX, "candidates": ["Rex and Fido."]},
        {"id": "kb", "turns": CTX, "knowledge": [{"name": "Rex"}], "candidates": ["Rex."]},
        {"id": "zh", "turns": ["你好。", "你好，我有一只猫。", "它几岁了？"], "candidates": ["", "我没有猫。"]},
        {"id": "en2", "turns": CTX, "candidates": ["Fido."]},
    ]
    p = tmp_path / "in.jsonl"
    p.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows))
    assert main(["rerank", str(p), "--json"]) == 0
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [o["id"] for o in out] == ["en", "kb", "zh", "en2"]  # input order kept across the groups
    assert [d.last.text for d in dets["en"].seen] == ["Rex and Fido.", "Fido."]
    assert [d.last.text for d in dets["tod"].seen] == ["Rex."]
    assert [d.last.text for d in dets["zh"].seen] == ["我没有猫。"]
    p.write_text(json.dumps({"turns": ["你好。", "Hi, I have a cat.", "它几岁了？"], "candidates": ["我没有猫。"]}))
    assert main(["rerank", str(p)]) == 2
    assert f"{p}, line 1: the dialogue mixes Chinese turns" in capsys.readouterr().err


@pytest.mark.parametrize("flag", ["--model", "-m"])
def test_rerank_model_default_routes_each_record_as_without_a_model(capsys, tmp_path, monkeypatch, flag):
    # rerank --model default ran the English default on a Chinese conversation, where check, score, evaluate and
    # serve route each dialogue to the shipped default of its language
    from dialcheck import api

    dets = {lang: KeywordDetector() for lang in ("en", "tod", "zh")}
    asked: list[object] = []
    monkeypatch.setattr(api, "accelerate", lambda det, **kw: det)
    monkeypatch.setattr(api, "load", lambda model=None, language="en": asked.append(model) or dets[language])
    monkeypatch.setattr(api, "default_model_path", lambda language="en": tmp_path)  # "shipped": exists
    rows = [
        {"id": "zh", "turns": ["你好。", "你好，我有一只猫。", "它几岁了？"], "candidates": ["我没有猫。", "三岁了。"]},
        {"id": "en", "turns": CTX, "candidates": ["Rex and Fido."]},
    ]
    p = tmp_path / "in.jsonl"
    p.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows))
    assert main(["rerank", str(p), "--json", flag, "default"]) == 0
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [o["id"] for o in out] == ["zh", "en"]
    assert [d.last.text for d in dets["zh"].seen] == ["我没有猫。", "三岁了。"]  # the Chinese default
    assert [d.last.text for d in dets["en"].seen] == ["Rex and Fido."]
    assert asked == [None, None]  # no model named "default" was loaded


def test_rerank_without_a_detector_routes_chinese_contexts_to_the_chinese_default(monkeypatch):
    from dialcheck import api

    asked = []

    class Any1:
        def predict(self, dialogues, batch_size=64, show_progress_bar=False):
            return [Verdict(False, 0.1, ()) for _ in dialogues]

    def fake_load(model=None, language="en"):
        asked.append(language)
        return Any1()

    monkeypatch.setattr(api, "load", fake_load)
    zh = ["你有宠物吗？", "有啊，我养了一只狗。", "它叫什么名字？"]
    rerank(zh, ["它叫旺财。", "我从来没养过狗。"])
    rerank(["Do you have pets?", "Yes, a dog.", "What is its name?"], ["Rex.", "I never had a dog."])
    assert asked == ["zh", "en"]
    with pytest.raises(InputError, match=r"different default detectors: zh \(contexts\[0\]\), en \(contexts\[1\]\)"):
        rerank_many([zh, ["Hi", "Hello", "How are you?"]], [["它叫旺财。"], ["Fine."]])


@pytest.mark.parametrize("candidate", ["Rex \udce9", {"text": "Rex \udce9"}, ("Rex \udce9", 0.5)])
def test_a_candidate_that_is_not_valid_unicode_is_named_as_the_candidate(candidate):
    # it was named as a turn of a dialogue the caller never built ("dialogues[0]: turns[2].text: ...") by a real
    # detector, and reached any other detector unchecked
    with pytest.raises(InputError, match=r"^candidates\[1\]: not valid Unicode text \(a lone surrogate \\udce9\)"):
        rerank(CTX, ["Rex.", candidate], detector=KeywordDetector())


def test_a_candidate_without_a_generator_score_ranks_after_the_scored_ones():
    det = KeywordDetector()  # none of these is contradictory: the generator's order alone
    r = rerank(CTX, ["plain one", ("scored low", -9.0), ("scored high", -0.5), "plain two"], detector=det)
    assert [c.text for c in r.ranked] == ["scored high", "scored low", "plain one", "plain two"]
    r = rerank(CTX, ["b", "a"], detector=det)  # none scored: input order
    assert [c.text for c in r.ranked] == ["b", "a"]


def test_a_candidate_of_invisible_characters_only_is_set_aside_as_empty():
    det = KeywordDetector()
    r = rerank(CTX, ["\u200b", "\ufeff\u200d ", "Rex and Fido."], detector=det)
    assert r.chosen.text == "Rex and Fido."
    assert r.counts["empty"] == 2 and {c.reason for c in r.dropped} == {"empty"}


def test_rerank_text_names_records_as_json_does(capsys, tmp_path, tiny_detector_dir):
    # the text output said "record N" of every record without an id: for JSONL, N was its line number, and a lone
    # one-line record was "record 1" where --json says its line; now a JSONL record is "line N" and a record of a
    # JSON document "record N" (its position), in the text, in warnings and in --json alike
    recs = [
        {"turns": CTX, "candidates": ["Rex and Fido.", "I never had a dog."]},
        {"id": "x", "turns": CTX, "candidates": ["Fido."]},
        {"turns": ["안녕하세요.", "강아지가 있어요.", "이름이 뭐예요?"], "candidates": ["초코예요."]},
    ]
    model = ["--model", str(tiny_detector_dir), "--threads", "1"]
    jsonl, doc, one = tmp_path / "in.jsonl", tmp_path / "in.json", tmp_path / "one.json"
    jsonl.write_text("\n" + "\n\n".join(json.dumps(r, ensure_ascii=False) for r in recs) + "\n", "utf-8")
    doc.write_text(json.dumps(recs, indent=2, ensure_ascii=False), "utf-8")
    one.write_text("\n\n" + json.dumps(recs[0]) + "\n")
    for path, want in ((jsonl, ["line 2", "x", "line 6"]), (doc, ["record 1", "x", "record 3"]), (one, ["line 3"])):
        assert main(["rerank", str(path), "--json", *model]) == 0
        rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
        named = [r["id"] or next(f"{k} {r[k]}" for k in ("line", "record") if k in r) for r in rows]
        assert main(["rerank", str(path), *model]) == 0
        out, err = capsys.readouterr()
        text = [line.split(":")[0] for line in out.splitlines() if not line.startswith(" ")]
        assert named == text == want
        if path != one:  # the Korean record, named as the output names it
            assert f"but {want[2]} has Korean turns" in err


def test_candidates_for_the_first_turn_are_ranked_alike_by_rank_rerank_the_command_and_http(
    capsys, tmp_path, tiny_detector_dir
):
    # Detector.rank and /rank took an empty context ([]) with every candidate consistent, while dialcheck.rerank,
    # `dialcheck rerank` and /rank with {"turns": []} refused it: the opening turn of a conversation has nothing
    # before it to contradict, so every candidate is kept at score 0 everywhere
    from fastapi.testclient import TestClient

    from dialcheck.serve.app import create_app

    det = dialcheck.load(tiny_detector_dir)
    cands = ["I have a dog.", "I never had a pet."]
    for context in ([], dialcheck.Dialogue(()), {"turns": []}, {"messages": [], "id": "o1"}):
        assert [(r.index, r.verdict.contradiction, r.verdict.score) for r in det.rank(context, cands)] == [
            (0, False, 0.0),
            (1, False, 0.0),
        ]
        got = rerank(context, cands, detector=det)
        assert got.chosen.index == 0 and got.counts == {"contradiction": 0, "candidates": 2}
    client = TestClient(create_app(det))
    for context in ([], {"turns": []}):
        r = client.post("/rank", json={"context": context, "candidates": cands})
        assert r.status_code == 200 and [x["score"] for x in r.json()["ranked"]] == [0.0, 0.0]
    p = tmp_path / "open.jsonl"
    p.write_text(json.dumps({"id": "o1", "turns": [], "candidates": cands}) + "\n")
    assert main(["rerank", str(p), "--json", "--model", str(tiny_detector_dir)]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["id"] == "o1" and rec["chosen"]["index"] == 0 and rec["counts"]["contradiction"] == 0


def test_rerank_reads_its_input_as_check_does(capsys, tmp_path, monkeypatch):
    # rerank had its own reader: '[]' exited 0 without a word, and a pretty-printed document with one syntax error
    # was read a line per record ("3 of 4 records are bad") where check names its line and column
    from dialcheck import api

    monkeypatch.setattr(api, "load", lambda *a, **kw: pytest.fail("no model is loaded for bad input"))
    p = tmp_path / "pp.json"
    p.write_text('[\n  {"turns": ["a" "b"], "candidates": ["x"]},\n  {"turns": ["c"], "candidates": ["y"]}\n]\n')
    assert main(["rerank", str(p), "--threads", "1"]) == 2
    err = capsys.readouterr().err
    assert err == f"dialcheck: error: {p}, line 2: invalid JSON (Expecting ',' delimiter at column 18)\n"
    assert main(["check", str(p), "--threads", "1"]) == 2
    assert capsys.readouterr().err == err  # the two commands agree
    p.write_text("[]\n")
    assert main(["rerank", str(p), "--threads", "1"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == f"dialcheck: error: {p}: holds no records: an empty JSON list []\n"
    # JSON Lines whose first line is bad: read as check reads them, the first line saying so
    p.write_text('{oops\n{"turns": ["c"], "candidates": ["y"]}\n')
    assert main(["rerank", str(p), "--threads", "1"]) == 2
    err = capsys.readouterr().err
    assert err.endswith(": the file was read as JSON Lines, one record per line\n") and f"{p}, line 1: " in err


def test_rerank_reads_one_dialogue_written_as_a_json_list_as_one_record_as_check_does(capsys, tmp_path, monkeypatch):
    """rerank read its input with a copy of check's reader that took every JSON list for a list of records: one
    dialogue written as a list of chat messages or of turns (as check reads it) was a bad record per message ("2 of
    2 records are bad"). It now reads with check's reader (io.read_dialogues): one record, without candidates."""
    from dialcheck import api

    monkeypatch.setattr(api, "load", lambda *a, **kw: pytest.fail("no model is loaded for bad input"))
    messages = [{"role": "user", "content": "I have a dog."}, {"role": "assistant", "content": "Nice."}]
    p = tmp_path / "one.json"
    for value, indent, where in [(messages, 1, ""), (["I have a dog.", "Nice."], None, ", line 1")]:
        p.write_text(json.dumps(value, indent=indent) + "\n")
        assert main(["rerank", str(p), "--threads", "1"]) == 2
        err = capsys.readouterr().err
        assert err == f"dialcheck: error: {p}{where}: expected an object with 'turns' and 'candidates'\n", value


def test_rerank_warning_names_a_record_with_an_id_by_its_id_alone(capsys, tmp_path, tiny_detector_dir):
    # the language warning said "x at line 2" where the text output and --json name that record "x"
    recs = [
        {"id": "a", "turns": CTX, "candidates": ["Rex."]},
        {"id": "x", "turns": ["안녕하세요.", "강아지가 있어요.", "이름이 뭐예요?"], "candidates": ["초코예요."]},
    ]
    p = tmp_path / "ids.jsonl"
    p.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in recs) + "\n", "utf-8")
    assert main(["rerank", str(p), "--model", str(tiny_detector_dir), "--threads", "1"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[-1].startswith("x: chose [0]")
    assert "but x has Korean turns" in err and "at line" not in err
