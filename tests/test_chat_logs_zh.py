"""Chinese chat logs read as English ones are (README, "Input"): tool calls and tool results are passed over (never
read, never evidence), a log ending with the user's message is checked at it with the same note, and a group chat's
user names are speakers. Tiny random-weight models stand in for the shipped defaults."""

from __future__ import annotations

import json

import pytest

from dialcheck import api
from dialcheck.errors import InputError
from dialcheck.io import parse_dialogue
from helpers_cli import run_cli
from test_cdconv_language import tiny_hierarchical_dir  # noqa: F401  (a fixture: the tiny Chinese model)

CALL = {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function"}]}
RESULT = {"role": "tool", "tool_call_id": "c1", "content": '{"city": "Beijing", "temp_c": 20, "sky": "sunny"}'}
# the assistant says it has a dog, calls a weather tool, then says it never had one
ZH_TOOLS = [
    {"role": "user", "content": "你有宠物吗？"},
    {"role": "assistant", "content": "有啊，我养了一只狗，已经三年了。"},
    {"role": "user", "content": "北京今天天气怎么样？"},
    CALL,
    RESULT,
    {"role": "assistant", "content": "北京今天晴，二十度。我从来没有养过狗。"},
]


@pytest.fixture
def defaults(monkeypatch, tiny_detector_dir, tiny_hierarchical_dir):  # noqa: F811
    """The shipped defaults stood in for by the tiny English detector and the tiny Chinese (four-category) one."""
    paths = {"en": tiny_detector_dir, "zh": tiny_hierarchical_dir}
    monkeypatch.setattr(api, "default_model_path", lambda language="en": paths[language])
    return paths


@pytest.fixture
def history_only(tiny_hierarchical_dir):  # noqa: F811
    """The tiny Chinese model, its first two stages never firing and the history stage always: a verdict names the
    replier's earlier turns that were read, and every stage's pairs are recorded."""
    import dialcheck

    det = dialcheck.load(tiny_hierarchical_dir)
    det.config.thresholds.update(intra_sentence=2.0, role_confusion=2.0, history=0.0)
    read: dict[str, list[tuple[str, str]]] = {}
    pairs = det._stage_pairs

    def spy(stage, dialogues, idx):
        out = pairs(stage, dialogues, idx)
        read.setdefault(stage, []).extend(out)
        return out

    det._stage_pairs = spy
    det.read = read
    return det


def test_a_chinese_chat_log_with_a_tool_call_and_its_result_is_routed_and_checked(defaults, tmp_path, capsys):
    """The tool call (content null) was 'messages[3].content: empty turn' and a JSON result in English words made the
    log 'mixed': refused, exit 2, where an English log passes over both."""
    d = parse_dialogue({"messages": ZH_TOOLS})
    assert api.route(d) == "zh"
    p = tmp_path / "zh_tools.jsonl"
    p.write_text(json.dumps({"id": "w", "messages": ZH_TOOLS}, ensure_ascii=False) + "\n", encoding="utf-8")
    code, out, err = run_cli(capsys, "check", str(p), "--json")
    assert code == 0, err
    assert json.loads(out)["id"] == "w" and "error" not in err


def test_the_chinese_detector_reads_no_tool_turn_and_numbers_evidence_as_the_log(history_only):
    """Read by position, the tool result stood as u2 and the tool call as b1: the turns read are the user's and the
    assistant's, and the evidence is the assistant's earlier reply, numbered as the input's messages."""
    (v,) = history_only.predict([{"messages": ZH_TOOLS}])
    assert v.category == "history" and v.evidence == (1,)
    assert history_only.read["role_confusion"] == [
        ("有啊，我养了一只狗，已经三年了。 [SEP] 北京今天天气怎么样？", "北京今天晴，二十度。我从来没有养过狗。")
    ]
    (history,) = history_only.read["history"]
    assert "temp_c" not in history[0] and "[SEP]  [SEP]" not in history[0]  # neither the result nor the empty call
    assert history[0].startswith("你有宠物吗？")


def test_a_chinese_log_with_a_responses_api_function_call_is_read_alike(history_only):
    items = [
        *ZH_TOOLS[:3],
        {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": RESULT["content"]},
        ZH_TOOLS[-1],
    ]
    assert api.route(parse_dialogue(items)) == "zh"
    (v,) = history_only.predict([items])
    assert v.evidence == (1,)


def test_a_chinese_log_ending_with_a_tool_result_is_refused_naming_it(defaults, tmp_path, capsys):
    """An English log ending with a tool result is checked at it, against the earlier results; the Chinese detector
    reads no tool output, so the log is refused with the way to check the assistant's reply."""
    with pytest.raises(InputError, match=r"^messages\[4\]: the last turn is a tool message, a tool's result"):
        api.route(parse_dialogue({"messages": ZH_TOOLS[:5]}))
    p = tmp_path / "zh_tool_last.json"
    p.write_text(json.dumps({"id": "t", "messages": ZH_TOOLS[:5]}, ensure_ascii=False), encoding="utf-8")
    code, out, err = run_cli(capsys, "check", str(p))
    assert code == 2 and out == ""
    assert f"{p}, line 1: t: messages[4]: the last turn is a tool message" in err and "--speaker assistant" in err
    assert "Traceback" not in err
    code, out, err = run_cli(capsys, "check", str(p), "--speaker", "assistant", "--json")
    assert code == 2 and "got 2 turns: too few to check" in err  # the assistant's last reply is b1: no u2 before it


def test_a_short_chinese_log_counts_the_turns_read(defaults):
    log = [ZH_TOOLS[0], CALL, RESULT, ZH_TOOLS[1], ZH_TOOLS[2], ZH_TOOLS[5]]
    assert api.route(parse_dialogue(log)) == "zh"  # four turns read: u1, b1, u2, b2
    with pytest.raises(InputError, match=r"got 3 turns besides its tool calls and results; is u1 missing\?$"):
        api.route(parse_dialogue(log[1:]))


def test_a_tool_turn_does_not_make_an_english_log_mixed(defaults):
    """A tool's result in Chinese in an English log made it 'mixed' and refused; it is data, not a turn in a language:
    the English default checks the log (with its warning about the Chinese turn)."""
    log = [
        {"role": "user", "content": "What's the weather in Beijing?"},
        CALL,
        {"role": "tool", "content": '{"天气": "晴"}'},
        {"role": "assistant", "content": "It is sunny in Beijing."},
    ]
    assert api.route(parse_dialogue(log)) == "en"


ZH_USER_LAST = [
    {"role": "system", "content": "你是一个友好的助手。"},
    {"role": "user", "content": "我住在北京，在一家医院当护士。"},
    {"role": "assistant", "content": "护士很辛苦吧？"},
    {"role": "user", "content": "还好。你喜欢什么运动？"},
    {"role": "assistant", "content": "我喜欢游泳。"},
    {"role": "user", "content": "我从来没去过北京，我在上海当老师。"},
]
EN_USER_LAST = [
    {"role": "system", "content": "You are a friendly bot."},
    {"role": "user", "content": "I live in Beijing and work as a nurse."},
    {"role": "assistant", "content": "Nursing must be hard."},
    {"role": "user", "content": "It's fine. What sport do you like?"},
    {"role": "assistant", "content": "I like swimming."},
    {"role": "user", "content": "I've never been to Beijing; I teach in Shanghai."},
]


def test_a_chinese_log_ending_with_the_users_message_is_checked_there_with_the_note_as_english(
    defaults, history_only, tmp_path, capsys
):
    """As an English log: the user's message is checked, held to the user's own earlier turns (the Chinese detector
    reads it in b2's place, the assistant's reply before it as u2), with the note naming --speaker assistant; with
    it, the assistant's last reply is checked."""
    (v,) = history_only.predict([ZH_USER_LAST])
    assert v.evidence == (1, 3)  # the user's earlier messages, as the English detector pairs the same role's
    (u2, b2) = history_only.read["role_confusion"][0]
    assert b2 == ZH_USER_LAST[-1]["content"] and u2.endswith(ZH_USER_LAST[-2]["content"])
    notes = []
    for name, log in (("zh", ZH_USER_LAST), ("en", EN_USER_LAST)):
        p = tmp_path / f"{name}.jsonl"
        p.write_text(json.dumps({"id": name, "messages": log}, ensure_ascii=False) + "\n", encoding="utf-8")
        code, out, err = run_cli(capsys, "check", str(p), "--json")
        assert code == 0, err
        notes.append(err.replace(name, "ID"))
        code, out, err = run_cli(capsys, "check", str(p), "--json", "--speaker", "assistant")
        assert code == 0 and json.loads(out)["turn"] == 4 and "note" not in err
        code, out, err = run_cli(capsys, "score", str(p), "-", "--no-progress")
        assert code == 0 and "1 of them ends with the user's turn, which is what was checked" in err
    assert (
        notes[0]
        == notes[1]
        == (
            "dialcheck: note: ID: the last turn is the user's; --speaker assistant checks the assistant's last reply "
            "instead\n"
        )
    )


def test_a_chinese_group_chat_holds_each_named_user_to_their_own_words(history_only):
    """A user message's name is its speaker in Chinese logs too: a history contradiction by alice names her earlier
    message, not bob's (both were "user")."""
    log = [
        {"role": "user", "name": "alice", "content": "我养了一只狗。"},
        {"role": "assistant", "content": "真好！"},
        {"role": "user", "name": "bob", "content": "我没有宠物。"},
        {"role": "assistant", "content": "也挺好的。"},
        {"role": "user", "name": "alice", "content": "我从来没养过狗。"},
    ]
    (v,) = history_only.predict([log])
    assert v.category == "history" and v.evidence == (0,)


# a Chinese chatbot's log as it often is: its system prompt in English
EN_SYSTEM = {"role": "system", "content": "You are a helpful assistant. Answer in the user's language."}
ZH_SYSTEM = {"role": "system", "content": "你是一个友好的助手，请用中文回答。"}
ZH_CHAT = [
    {"role": "user", "content": "你有宠物吗？"},
    {"role": "assistant", "content": "有啊，我养了一只狗，已经三年了。"},
    {"role": "user", "content": "它叫什么名字？"},
    {"role": "assistant", "content": "我从来没有养过狗。"},
]


@pytest.mark.parametrize("system", [EN_SYSTEM, ZH_SYSTEM, {"role": "developer", "content": "Be brief."}])
def test_a_chinese_chat_logs_system_prompt_casts_no_vote_and_is_not_read(
    defaults, history_only, system, tmp_path, capsys
):
    """An English system prompt made a Chinese chat 'mixed' and refused (exit 2); a Chinese one was read in the
    history as a turn of the conversation. Neither is read now: the detector reads u1, b1, u2, b2 as the user's and
    the assistant's messages, and evidence counts the input's messages."""
    log = [system, *ZH_CHAT]
    assert api.route(parse_dialogue({"messages": log})) == "zh"
    (v,) = history_only.predict([log])
    assert v.category == "history" and v.evidence == (2,)  # the assistant's 'I have a dog', messages[2]
    (history,) = history_only.read["history"]
    assert history[0].startswith("你有宠物吗？") and system["content"] not in history[0]
    p = tmp_path / "sys.jsonl"
    p.write_text(json.dumps({"id": "s", "messages": log}, ensure_ascii=False) + "\n", encoding="utf-8")
    code, out, err = run_cli(capsys, "check", str(p), "--json")
    assert code == 0 and json.loads(out)["id"] == "s" and "mixes" not in err, err


def test_a_system_prompt_is_not_counted_as_a_chinese_conversations_u1(defaults):
    """system, assistant, user, assistant passed as four turns with the system prompt read as u1: it is three."""
    greeting = [ZH_SYSTEM, {"role": "assistant", "content": "你好，有什么可以帮你？"}, *ZH_CHAT[2:]]
    with pytest.raises(InputError, match=r"got 3 turns besides its system message; is u1 missing\?$"):
        api.route(parse_dialogue(greeting))
    with pytest.raises(InputError, match=r"got 3 turns besides its system message and tool calls and results; is u1"):
        api.route(parse_dialogue([*greeting[:3], CALL, RESULT, greeting[3]]))


def test_a_chinese_log_ending_with_a_system_message_is_refused_naming_it(defaults):
    with pytest.raises(InputError, match=r"^messages\[4\]: the last turn is a system message, the chat's instructions"):
        api.route(parse_dialogue([*ZH_CHAT, {"role": "system", "content": "The user has left."}]))


def test_system_turns_vote_where_they_are_no_chat_logs_instructions():
    """A task-oriented dialogue's 'system' is its bot: its English turn still makes a Chinese dialogue mixed. An
    English chat log with a Chinese system prompt is English, as one with a Chinese tool result is."""
    from dialcheck.language import dialogue_language
    from dialcheck.schema import Dialogue

    tod = Dialogue.from_texts(["我想订一家酒店。", "Sure, which area do you prefer?"], speakers=["user", "system"])
    assert dialogue_language(tod) == "mixed"
    en = [ZH_SYSTEM, {"role": "user", "content": "Do you have a pet?"}, {"role": "assistant", "content": "A dog."}]
    assert dialogue_language(parse_dialogue(en)) == "other"


def test_score_every_turn_counts_a_chinese_logs_turns_as_the_reading_does(defaults, tmp_path, capsys):
    """Counting every message, an early tool call and result put the start at messages[3], b1 as read: 'too few to
    check' skipped-turn reports, and a later tool result was one too ('the last turn is a tool message'). The log is
    now checked from its fourth turn as read (b2) on, at the user's and the assistant's messages only."""
    log = [ZH_SYSTEM, ZH_TOOLS[0], CALL, RESULT, *ZH_TOOLS[1:3], CALL, RESULT, ZH_TOOLS[5], ZH_CHAT[2], ZH_CHAT[3]]
    p, out = tmp_path / "log.jsonl", tmp_path / "out.jsonl"
    p.write_text(json.dumps({"id": "t", "messages": log}, ensure_ascii=False) + "\n", encoding="utf-8")
    code, _, err = run_cli(capsys, "score", str(p), str(out), "--every-turn", "--no-progress")
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert code == 0 and [r["turn"] for r in rows] == [8, 9, 10], err
    assert "skipped 0 bad lines" in err and "too few" not in err and "tool message" not in err


def test_evaluate_data_counts_a_chat_logs_turns_as_the_reading_does(tiny_hierarchical_dir, tmp_path, capsys):  # noqa: F811
    """A four-message log (system, assistant, user, assistant) passed unwarned: it is read as three turns, u1 missing;
    a log of four turns read and two tool messages was warned of as too short, though it is not."""
    from dialcheck.cli import main

    greeting = [ZH_SYSTEM, {"role": "assistant", "content": "你好，有什么可以帮你？"}, *ZH_CHAT[2:]]
    recs = [
        {"id": "tools", "messages": [ZH_TOOLS[0], CALL, RESULT, *ZH_CHAT[1:]], "contradiction": True,
         "category": "history"},
        {"id": "greeting", "messages": greeting, "contradiction": False},
    ]  # fmt: skip
    f = tmp_path / "mine.jsonl"
    f.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs), encoding="utf-8")
    ev = ["evaluate", "--benchmark", "cdconv", "--model", str(tiny_hierarchical_dir), "--no-progress", "--data", str(f)]
    assert main(ev) == 0
    err = capsys.readouterr().err
    assert f"warning: 1 of the 2 dialogues of {f} (greeting) has fewer than four turns (got 3 turns besides its " in err
    assert "system message; is u1 missing?): " in err and "(tools)" not in err


def test_the_refusal_of_a_last_tool_result_words_its_advice_per_caller(defaults):
    """The refusal told library and HTTP callers '--speaker assistant', an option neither has: each is told its own
    way to check the assistant's reply, as route's other errors word their advice per caller."""
    d = parse_dialogue({"messages": ZH_TOOLS[:5]})
    with pytest.raises(InputError) as e:
        api.route(d)
    assert 'speaker="assistant" (dialcheck.check(..., speaker=...))' in e.value.message
    assert "--speaker" not in e.value.message
    with pytest.raises(InputError, match="; --speaker assistant, or "):
        api.route(d, choose="pass --model")
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from dialcheck.serve import create_app

    r = TestClient(create_app(None)).post("/check", json={"messages": ZH_TOOLS[:5]})
    assert r.status_code == 422 and "--speaker" not in r.text, r.text
    assert '\\"speaker\\": \\"assistant\\" in the request' in r.text, r.text


@pytest.mark.parametrize("kind", ["hierarchical", "flat"])
def test_a_chinese_model_refuses_a_log_ending_with_a_tool_result_as_routing_does(kind, tiny_hierarchical_dir):  # noqa: F811
    """Routing refused such a log, but dialcheck.load(...).predict (and --model) read the tool's JSON as b2 and
    checked it: both ways now refuse it (and a log ending with a system message), before any model work."""
    import dialcheck
    from dialcheck.detectors import FlatCategoryDetector

    det = dialcheck.load(tiny_hierarchical_dir) if kind == "hierarchical" else FlatCategoryDetector()
    with pytest.raises(InputError, match=r"^messages\[4\]: the last turn is a tool message, a tool's result"):
        det.predict([{"messages": ZH_TOOLS[:5]}])
    ended = [*ZH_CHAT, {"role": "system", "content": "The user has left."}]
    with pytest.raises(InputError, match=r"^dialogues\[1\]: messages\[4\]: the last turn is a system message"):
        det.predict([{"messages": ZH_TOOLS}, {"messages": ended}])


def test_check_with_a_chinese_model_refuses_a_log_ending_with_a_tool_result_by_file_and_line(
    tiny_hierarchical_dir,  # noqa: F811
    tmp_path,
    capsys,
):
    p = tmp_path / "zh_tool_last.jsonl"
    lines = [{"id": "ok", "messages": ZH_TOOLS}, {"id": "t", "messages": ZH_TOOLS[:5]}]
    p.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    code, out, err = run_cli(capsys, "check", str(p), "--model", str(tiny_hierarchical_dir))
    assert code == 2 and out == "" and "Traceback" not in err
    assert f"{p}, line 2: t: messages[4]: the last turn is a tool message" in err and "--speaker assistant" in err
    code, out, err = run_cli(capsys, "check", str(p), "--model", str(tiny_hierarchical_dir), "--speaker", "assistant")
    assert code == 0, err


def test_serve_with_a_chinese_model_refuses_a_log_ending_with_a_tool_result_with_a_422(tiny_hierarchical_dir):  # noqa: F811
    """It was answered with the tool's JSON checked as b2; refused in predict alone, it would be a 500."""
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from dialcheck.detectors import load_detector
    from dialcheck.serve import create_app

    client = TestClient(create_app(load_detector(tiny_hierarchical_dir)))
    r = client.post("/check", json={"messages": ZH_TOOLS[:5]})
    assert r.status_code == 422 and "messages[4]: the last turn is a tool message" in r.text, r.text
    assert '\\"speaker\\": \\"assistant\\" in the request' in r.text
    r = client.post("/check", json={"messages": ZH_TOOLS[:5], "speaker": "assistant"})
    assert r.status_code == 200, r.text


def test_kana_in_a_tool_result_or_a_system_prompt_does_not_make_a_chat_japanese(defaults):
    """A tool result or system prompt casts no vote on a log's language, yet its kana refused the log as Japanese: an
    English log whose weather tool answered in Japanese, a chat under a Japanese system prompt."""
    en_tool = [
        {"role": "user", "content": "What's the weather in Tokyo?"},
        CALL,
        {"role": "tool", "content": '{"天気": "晴れ"}'},
        {"role": "assistant", "content": "It is sunny in Tokyo."},
    ]
    assert api.route(parse_dialogue(en_tool)) == "en"
    ja_system = {"role": "system", "content": "あなたは親切なアシスタントです。"}
    assert api.route(parse_dialogue([ja_system, *EN_USER_LAST[1:5]])) == "en"
    assert api.route(parse_dialogue([ja_system, *ZH_CHAT])) == "zh"
    with pytest.raises(InputError, match=r"turns \[1\] are Japanese"):  # a message of the chat still is
        api.route(parse_dialogue([EN_USER_LAST[1], {"role": "assistant", "content": "はい、そうです。"}]))


def test_an_english_chat_is_not_warned_of_chinese_turns_its_detector_never_reads(defaults, tmp_path, capsys):
    """An English chat under a Chinese system prompt (routed to English since the prompt casts no vote), or with a
    Chinese tool result before the assistant's reply, was warned 'has Chinese turns ... pass a Chinese (cdconv.*)
    model': the English detectors read neither against the assistant's reply. A Chinese tool result that is itself
    checked (the last turn) still is warned of."""
    en_tool = [EN_USER_LAST[1], CALL, {"role": "tool", "content": '{"城市": "北京"}'}, EN_USER_LAST[2]]
    logs = [[ZH_SYSTEM, *EN_USER_LAST[1:5]], en_tool]
    dialogues = [parse_dialogue(x) for x in logs]
    assert api.foreign_warning("M", "en", dialogues) == ([], None)
    assert api.routed_warnings(dialogues, [api.route(d) for d in dialogues]) == []
    assert api.foreign_warning("M", "en", [parse_dialogue(en_tool[:3])])[0] == [0]
    p = tmp_path / "en.jsonl"
    p.write_text("".join(json.dumps({"messages": x}, ensure_ascii=False) + "\n" for x in logs), encoding="utf-8")
    code, _, err = run_cli(capsys, "check", str(p), "--model", str(defaults["en"]), "--json")
    assert code == 0 and "Chinese turns" not in err, err


def test_an_empty_assistant_reply_is_no_tool_call_and_is_refused_in_a_chinese_log(defaults, history_only):
    """Any assistant message without text was taken for a tool call and silently dropped, so an empty reply made two
    user turns adjacent and the reading by position read the wrong turns as b1 and u2, where README says a turn
    without text other than a tool call is refused. A call is a message carrying tool_calls (or function_call) or a
    Responses API call item; an empty reply is refused naming it."""
    for empty in ({"role": "assistant", "content": ""}, {"role": "assistant", "content": None}):
        log = [ZH_TOOLS[0], empty, *ZH_CHAT[2:]]
        with pytest.raises(InputError, match=r"^messages\[1\]\.content: empty turn"):
            api.route(parse_dialogue(log))
    called = [ZH_TOOLS[0], {"role": "assistant", "content": None, "function_call": {"name": "pets"}}, *ZH_CHAT[1:]]
    assert api.route(parse_dialogue(called)) == "zh"
    (v,) = history_only.predict([called])
    assert v.evidence == (2,)  # the assistant's 'I have a dog', read as b1


def test_a_hand_built_empty_assistant_turn_is_told_how_to_mark_a_tool_call():
    """A library user's Dialogue with an empty assistant turn for a tool call (how one was marked until 2026-12-03)
    was refused as an empty turn with nothing saying how to mark a call; the message now names meta["tool_calls"],
    and doing so is read. A chat log (messages) marks its calls itself: its message has no such hint."""
    from dialcheck.schema import Dialogue

    texts = ["我想买猫粮。", "", '{"in_stock": 0}', "现在没货了。", "那狗粮呢？", "狗粮有货。"]
    speakers = ["user", "assistant", "tool", "assistant", "user", "assistant"]
    hint = 'a tool call is marked by its index: Dialogue(..., meta={"tool_calls": (1,)})'
    with pytest.raises(InputError, match=r"^turns\[1\]\.text: empty turn") as e:
        api.route(Dialogue.from_texts(texts, speakers=speakers))
    assert hint in str(e.value)
    assert api.route(Dialogue.from_texts(texts, speakers=speakers, meta={"tool_calls": (1,)})) == "zh"
    log = [{"role": s, "content": t} for s, t in zip(speakers, texts, strict=True)]
    with pytest.raises(InputError, match=r"^messages\[1\]\.content: empty turn") as e:
        api.route(parse_dialogue(log))
    assert "meta=" not in str(e.value)


def test_a_model_reading_every_speaker_is_warned_of_a_chinese_system_prompt_or_tool_result(defaults, tmp_path, capsys):
    """Since 992e86c a chat log's system prompt and tool results counted only when of the checked turn's speaker,
    right for the shipped same-speaker detectors; but a --model saved with options.speakers "all" (or an unstructured
    detector) does read a Chinese system prompt or tool result against the reply, and was no longer warned. Such a
    model's warning now counts them, on the command line and in the library."""
    import shutil

    import dialcheck

    every = tmp_path / "every-speaker"
    shutil.copytree(defaults["en"], every)
    config = json.loads((every / "dialcheck.json").read_text(encoding="utf-8"))
    config.setdefault("options", {})["speakers"] = "all"
    (every / "dialcheck.json").write_text(json.dumps(config), encoding="utf-8")
    assert api.reads_others(every) and not api.reads_others(defaults["en"])
    log = [ZH_SYSTEM, *EN_USER_LAST[1:5]]
    d = parse_dialogue(log)
    assert api.foreign_warning("M", "en", [d]) == ([], None)
    assert api.foreign_warning("M", "en", [d], others=True)[0] == [0]
    assert api.language_gap(dialcheck.load(str(every)), [d])[0] == [0]
    p = tmp_path / "en.jsonl"
    p.write_text(json.dumps({"messages": log}, ensure_ascii=False) + "\n", encoding="utf-8")
    code, _, err = run_cli(capsys, "check", str(p), "--model", str(every), "--json")
    assert code == 0 and "Chinese turns" in err, err
    code, _, err = run_cli(capsys, "check", str(p), "--model", str(defaults["en"]), "--json")
    assert code == 0 and "Chinese turns" not in err, err


def _every_speaker(src, out, kind=None):
    """A copy of the tiny detector ``src`` saved with options.speakers "all" (or, with ``kind``, as that type)."""
    import shutil

    shutil.copytree(src, out)
    config = json.loads((out / "dialcheck.json").read_text(encoding="utf-8"))
    if kind is None:
        config.setdefault("options", {})["speakers"] = "all"
    else:
        config["detector"] = kind
    (out / "dialcheck.json").write_text(json.dumps(config), encoding="utf-8")
    return out


def _router_reading(tmp_path, tiny_detector_dir, long_reads_all):
    """A router folder: a same-speaker short detector and a long one that reads every speaker (or not)."""
    import shutil

    folder = tmp_path / ("router-all" if long_reads_all else "router")
    shutil.copytree(tiny_detector_dir, folder / "short")
    if long_reads_all:
        _every_speaker(tiny_detector_dir, folder / "long")
    else:
        shutil.copytree(tiny_detector_dir, folder / "long")
    options = {"short": "short", "long": "long", "long_words": 5}
    (folder / "dialcheck.json").write_text(json.dumps({"detector": "router.v1", "options": options}))
    return folder


def test_a_routers_warning_does_not_load_its_long_detector(tmp_path, tiny_detector_dir):
    """reads_others asked a loaded router hasattr(router, "long"), which loads the long detector: every check(model=
    router) and serve --model router loaded the long cascade on its first call, whatever the replies' length. Its
    long side is now read from its folder's config until it is loaded, and the answer is the same."""
    from dialcheck.detectors import load_detector

    d = parse_dialogue([ZH_SYSTEM, *EN_USER_LAST[1:5]])
    for reads_all in (True, False):
        router = load_detector(_router_reading(tmp_path, tiny_detector_dir, reads_all))
        assert api.reads_others(router) is reads_all
        assert api.language_gap(router, [d])[0] == ([0] if reads_all else [])
        assert "_long" not in router.__dict__  # still not loaded
        router.long  # noqa: B018  (loaded: then the loaded one is read)
        assert api.reads_others(router) is reads_all


# an English chat whose tool returned Chinese: the same-speaker detectors do not read the result against the reply
EN_ZH_RESULT = [
    {"role": "user", "content": "I have a dog."},
    {"role": "assistant", "content": "Nice, what breed?"},
    {"role": "user", "content": "What's the weather in Beijing?"},
    CALL,
    {"role": "tool", "tool_call_id": "c1", "content": "北京今天晴，二十度。"},
    {"role": "assistant", "content": "It is sunny and twenty degrees in Beijing."},
]


@pytest.mark.parametrize("kind", ["cascade", "router", "unstructured"])
def test_a_cascade_router_or_unstructured_model_reading_every_speaker_is_warned(
    kind, defaults, tmp_path, capsys, tiny_detector_dir
):
    """42f9978 said a cascade or router with a stage that reads every speaker, and an unstructured detector, are
    warned of a Chinese system prompt or tool result, tested only for a plain detector saved with speakers "all"."""
    from dialcheck.detectors import CascadeDetector, load_detector

    if kind == "cascade":
        folder = tmp_path / "cascade"
        every = load_detector(_every_speaker(tiny_detector_dir, tmp_path / "every"))
        CascadeDetector.build(load_detector(tiny_detector_dir), every, 0.0, 1.0).save(folder)
    elif kind == "router":
        folder = _router_reading(tmp_path, tiny_detector_dir, True)
    else:
        folder = _every_speaker(tiny_detector_dir, tmp_path / "unstructured", "decode.unstructured.v1")
    assert api.reads_others(folder) and api.reads_others(load_detector(folder))
    p = tmp_path / "logs.jsonl"
    logs = [[ZH_SYSTEM, *EN_USER_LAST[1:5]], EN_ZH_RESULT]
    p.write_text("".join(json.dumps({"messages": m}, ensure_ascii=False) + "\n" for m in logs), encoding="utf-8")
    code, _, err = run_cli(capsys, "check", str(p), "--model", str(folder), "--json")
    assert code == 0 and "2 of 2 (dialogue 1 at line 1, dialogue 2 at line 2) have Chinese turns" in err, err


def test_score_reads_whether_the_model_reads_every_speaker_once_a_run(defaults, tmp_path, capsys, monkeypatch):
    """score asked it of --model's config files (a cascade's and its stages') for every line: 0.4-0.7 ms a line."""
    asked = []
    reads_others = api.reads_others
    monkeypatch.setattr(api, "reads_others", lambda model: asked.append(model) or reads_others(model))
    every = _every_speaker(defaults["en"], tmp_path / "every")
    p = tmp_path / "logs.jsonl"
    p.write_text("".join(json.dumps({"messages": EN_ZH_RESULT}) + "\n" for _ in range(3)), encoding="utf-8")
    for model, warned in ((every, True), (defaults["en"], False)):  # the shipped kind does not read the result
        asked.clear()
        code, _, err = run_cli(capsys, "score", str(p), str(tmp_path / f"{warned}.jsonl"), "--model", str(model))
        assert code == 0 and ("Chinese turns" in err) is warned, err
        assert len(asked) == 1


def test_a_files_empty_assistant_turn_is_told_to_write_messages_not_python(defaults, tmp_path, capsys):
    """2de3bdc's hint, Dialogue(..., meta={"tool_calls": ...}), was shown for a file's record with "turns" too, where
    a command-line user cannot follow it. A record read from JSON is told to write the chat as "messages" with the
    call as an assistant message with tool_calls, which is then read; a Dialogue built in Python keeps its hint."""
    texts = ["我想买猫粮。", "", '{"in_stock": 0}', "现在没货了。", "那狗粮呢？", "狗粮有货。"]
    speakers = ["user", "assistant", "tool", "assistant", "user", "assistant"]
    turns = [{"speaker": s, "text": t} for s, t in zip(speakers, texts, strict=True)]
    write = 'write the chat as "messages", the call as {"role": "assistant", "content": null, "tool_calls": [...]}'
    with pytest.raises(InputError, match=r"^turns\[1\]\.text: empty turn") as e:
        api.route(parse_dialogue({"turns": turns}))
    assert write in str(e.value) and "meta=" not in str(e.value)
    p = tmp_path / "turns.jsonl"
    p.write_text(json.dumps({"id": "t", "turns": turns}, ensure_ascii=False) + "\n", encoding="utf-8")
    code, _, err = run_cli(capsys, "check", str(p), "--json")
    assert code == 2 and f"{p}, line 1: t: turns[1].text: empty turn" in err and write in err, err
    assert "meta=" not in err and "Traceback" not in err
    messages = [{"role": s, "content": t} for s, t in zip(speakers, texts, strict=True)]
    messages[1] = CALL
    p.write_text(json.dumps({"id": "t", "messages": messages}, ensure_ascii=False) + "\n", encoding="utf-8")
    code, out, err = run_cli(capsys, "check", str(p), "--json")
    assert code == 0 and json.loads(out)["id"] == "t", err
