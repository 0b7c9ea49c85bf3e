"""What an English utterance detector reads in chat logs of unusual but valid shapes (README, "Input"): every earlier
turn of the checked speaker however far back, no other speaker's (a system prompt, other people of a group chat),
evidence numbered as the input's messages, and a user message's ``name`` read as its speaker. Tiny random-weight
model: the thresholds are set to 0 so that every paired turn is evidence and the test reads which turns were paired."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers_cli import run_cli


@pytest.fixture
def det(tiny_detector_dir):
    import dialcheck

    d = dialcheck.load(tiny_detector_dir)
    d.tau, d.eta_e = 0.0, 0.0  # every paired turn named: the verdict shows what was read
    return d


def _chat(n: int) -> list[dict[str, str]]:
    """A system prompt and n - 1 user/assistant messages, the assistant's last."""
    msgs = [{"role": "system", "content": "You are a friendly bot."}]
    for i in range(1, n):
        role = "user" if i % 2 else "assistant"
        msgs.append({"role": role, "content": f"{role} message number {i}."})
    return msgs


def test_a_200_message_chat_pairs_every_earlier_reply_however_far_back(det):
    msgs = _chat(201)  # a system prompt and a 200-message chat
    assert msgs[-1]["role"] == "assistant"
    (v,) = det.predict([msgs])
    replies = [i for i, m in enumerate(msgs[:-1]) if m["role"] == "assistant"]
    assert len(replies) == 99 and replies[0] == 2  # 198 messages back, numbered with the system one at 0
    assert sorted(v.pair_scores) == replies  # no window: the first reply is read; no user or system message is
    assert list(v.evidence) == replies


def test_a_group_chat_holds_each_speaker_to_their_own_turns(det):
    turns = [
        {"speaker": "alice", "text": "Who is on call this weekend?"},
        {"speaker": "bob", "text": "I am, I swapped with Dana."},
        {"speaker": "carol", "text": "I'll be hiking."},
        {"speaker": "bob", "text": "I'll look at the deploy job on Saturday."},
        {"speaker": "bob", "text": "Two turns in a row."},
        {"speaker": "alice", "text": "Bob, are you on call?"},
        {"speaker": "bob", "text": "I'm not on call this weekend."},
    ]
    (v,) = det.predict([{"turns": turns}])
    assert list(v.evidence) == [1, 3, 4]
    (alice,) = det.predict([{"turns": turns, "speaker": "alice"}])  # her last turn, against her first alone
    assert list(alice.evidence) == [0]


GROUP = [
    {"role": "user", "name": "alice", "content": "I have a golden retriever."},
    {"role": "assistant", "name": "Max", "content": "Lovely! I have a cat."},
    {"role": "user", "name": "bob", "content": "I have no pets at all."},
    {"role": "assistant", "name": "Max", "content": "I never had a pet."},
    {"role": "user", "name": "alice", "content": "Max, you said you had a cat!"},
]


def test_a_user_messages_name_is_its_speaker_so_a_group_chats_users_are_held_apart(det):
    """A message's name was not read, so every user of a group chat was one speaker: bob's "I have no pets at all."
    was paired with alice's golden retriever. A user message's name is now its speaker; the assistant stays
    ``assistant`` (its name is not read), so its replies are paired as before and --speaker assistant is unchanged."""
    from dialcheck.io import chat_role, ends_off_assistant, parse_dialogue, reply_speaker, upto_speaker, user_names

    d = parse_dialogue({"messages": GROUP})
    assert [t.speaker for t in d.turns] == ["alice", "assistant", "bob", "assistant", "alice"]
    assert user_names(d) == ("alice", "bob") and chat_role(d, 2) == "user"
    (v,) = det.predict([{"messages": GROUP[:3]}])
    assert v.pair_scores == {} and not v.contradiction  # bob is held to his own words alone
    (v,) = det.predict([GROUP[:4]])
    assert list(v.pair_scores) == [1]  # the assistant's reply against its own earlier one, as before
    (v,) = det.predict([GROUP])
    assert list(v.pair_scores) == [0]  # alice against alice
    assert ends_off_assistant(d) == "user"  # the note names a named user's message as the user's
    assert len(upto_speaker(d, "bob").turns) == 3 and len(upto_speaker(d, "assistant").turns) == 4
    assert len(upto_speaker(d, "user").turns) == 5  # "user" still names every user, whoever wrote
    assert reply_speaker(parse_dialogue(GROUP[:1])) == "assistant"  # after a lone user message, named or not


def _check_speaker(capsys, path: Path, record: dict, model: Path, speaker: str) -> tuple[int, str, str]:
    """Write ``record`` to ``path`` and run ``check --speaker SPEAKER --json`` with ``model`` at thresholds 0 (every
    paired turn evidence)."""
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    zero = ["--model", str(model), "--tau", "0", "--eta-e", "0", "--json"]
    return run_cli(capsys, "check", str(path), *zero, "--speaker", speaker)


def test_check_speaker_names_a_group_chats_user(tiny_detector_dir, tmp_path, capsys):
    path = tmp_path / "group.jsonl"
    code, out, err = _check_speaker(capsys, path, {"id": "g", "messages": GROUP}, tiny_detector_dir, "bob")
    assert code == 0, err
    assert json.loads(out)["turn"] == 2 and json.loads(out)["evidence"] == []
    zero = ["--model", str(tiny_detector_dir), "--tau", "0", "--eta-e", "0", "--json"]
    code, out, err = run_cli(capsys, "check", str(path), *zero)
    assert code == 0 and json.loads(out)["evidence"] == [0]
    assert "the last turn is the user's; --speaker assistant checks" in err


def test_a_user_named_by_a_whole_number_is_its_digits_as_any_speaker(tiny_detector_dir, tmp_path, capsys):
    """``"name": 5`` was refused ('expected a string'), though wherever a record names a speaker a whole number is
    its digits (DECODE's agent ids, a ``"speaker": 1``); it is the user "5" now, as ``"5"`` and ``5.0`` are."""
    from dialcheck.io import parse_dialogue

    msgs = [{**m, "name": {"alice": 5, "bob": 7}[m["name"]]} if m["role"] == "user" else m for m in GROUP]
    d = parse_dialogue({"messages": msgs})
    assert [t.speaker for t in d.turns] == ["5", "assistant", "7", "assistant", "5"]
    assert parse_dialogue({"messages": [{**msgs[0], "name": 5.0}, *msgs[1:]]}).turns[0].speaker == "5"
    path = tmp_path / "numbered.jsonl"
    code, out, err = _check_speaker(capsys, path, {"id": "n", "messages": msgs}, tiny_detector_dir, "7")
    assert code == 0, err
    assert json.loads(out)["turn"] == 2 and json.loads(out)["evidence"] == []


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (
            "assistant",
            "'assistant' is a chat role, not a user's name: it would make this user's messages the assistant's "
            "(rename the user, or leave name out)",
        ),
        (
            "tool",
            "'tool' is a chat role, not a user's name: it would make this user's messages tool messages (rename "
            "the user, or leave name out)",
        ),
        (7.5, "expected a string or a whole number (the user's name), got float"),
        (True, "expected a string or a whole number (the user's name), got boolean"),
        (" ", "' ' is blank (name the user, or leave name out)"),
    ],
)
def test_a_user_name_that_names_no_one_apart_is_refused_naming_the_field(tmp_path, capsys, name, message):
    msgs = [GROUP[0], GROUP[1], {"role": "user", "name": name, "content": "I have no pets."}]
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"id": "b", "messages": GROUP}) + "\n" + json.dumps({"messages": msgs}) + "\n")
    code, out, err = run_cli(capsys, "check", str(path))
    assert code == 2 and out == "" and "Traceback" not in err
    assert err == f"dialcheck: error: {path}, line 2: messages[2].name: {message}\n"


def test_check_json_numbers_evidence_as_the_input_messages(tiny_detector_dir, tmp_path, capsys):
    """A system prompt, a tool call and a log that ends with the user's message: `"speaker"` picks the assistant's
    last reply, and `turn` and `evidence` count every message of the input."""
    msgs = [
        {"role": "system", "content": "You are ShopBot."},
        {"role": "user", "content": "Do you ship to Canada?"},
        {"role": "assistant", "content": "Yes, we ship to Canada."},
        {"role": "user", "content": "Is the tent in stock?"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function"}]},
        {"role": "tool", "content": '{"in_stock": 0}', "tool_call_id": "c1"},
        {"role": "assistant", "content": [{"type": "text", "text": "We don't ship outside the US."}]},
        {"role": "user", "content": "What?"},
    ]
    path = tmp_path / "chat.jsonl"
    path.write_text(json.dumps({"id": "c", "messages": msgs, "speaker": "assistant"}) + "\n", encoding="utf-8")
    code, out, _ = run_cli(
        capsys, "check", str(path), "--json", "--model", str(tiny_detector_dir), "--tau", "0", "--eta-e", "0"
    )
    assert code == 0
    rec = json.loads(out)
    assert rec["turn"] == 6 and rec["evidence"] == [2]  # the tool call (4) has no text and is never paired


@pytest.mark.parametrize(
    ("reading", "earlier", "last"),
    [
        ("subjects", "I live in Ohio.", "- My brother lives in Texas."),
        ("subjects", "I'm vegetarian.", "**My husband** eats meat every day."),
        ("subjects", "I live in Ohio. 😊", "😊 My brother lives in Texas!"),
        ("introductions", "I have a sister.", "*My sister lives abroad.*"),
        ("introductions", "Yes, two daughters.", "- My daughters are 5 and 8."),
        ("times", "I live in Seattle.", "**I used** to live in Chicago."),
        ("times", "I'm a nurse. :smile:", "- *I used* to work as a teacher."),
    ],
)
def test_the_rule_readings_read_through_an_assistants_markdown_and_emoji(det, reading, earlier, last):
    """A list marker, bold or an emoji at a sentence's start hid the words the rules look for: with the default
    (each reading on) "I live in Ohio." ... "- My brother lives in Texas." scored 0.82 and was flagged, plain 0.01."""
    from dialcheck.detectors.utterance import SETTLED_SCORE

    setattr(det, reading, {"subjects": "apart", "introductions": "settle", "times": "changes"}[reading])
    (v,) = det.predict([["Hi!", earlier, "Tell me more.", last]])
    assert v.pair_scores[1] <= SETTLED_SCORE  # the tiny model's own score for these pairs is above it


def test_a_question_in_markdown_is_still_only_a_question(det):
    det.questions = "skip"
    (v,) = det.predict([["I have a cat.", "**How many children do you have?** 🙂", "Two.", "I don't have kids."]])
    assert 1 not in v.pair_scores  # it asks and says nothing about its speaker: not paired


@pytest.mark.parametrize(
    ("earlier", "last"),
    [
        ("I work as a **nurse**.", "I work as a teacher."),
        ("I'm 29 🎉", "I'm 45 years old."),
        ("- I have **two dogs**.", "My three dogs are asleep."),
    ],
)
def test_the_slot_reading_reads_a_name_age_job_or_count_through_markdown_and_emoji(det, earlier, last):
    """The slot reading missed a job in bold, an age before an emoji, a count in a list item: no 0.99 conflict."""
    from dialcheck.detectors.utterance import SLOT_SCORE

    det.slots = "persona"
    (v,) = det.predict([["Hi!", earlier, "Oh nice.", last]])
    assert v.pair_scores[1] >= SLOT_SCORE and 1 in v.evidence


@pytest.mark.parametrize(
    ("text", "plain"),
    [
        ("25. You?", "25. You?"),  # an age answered, not item 25 of a list: was "You?"
        ("18. She just graduated high school.", "18. She just graduated high school."),  # a DECODE turn
        ("1. I live in Ohio.\n2. My brother lives in Texas.", "I live in Ohio.\nMy brother lives in Texas."),
        ("It's 25℃ today 🌞", "It's 25℃ today"),  # a unit, not an emoji: was "It's 25 today"
        ("Dialcheck™ weighs 5㎏.", "Dialcheck™ weighs 5㎏."),
        ("* not really *", "not really"),  # was "not really *"
        ("*rolls eyes* Of course.", "rolls eyes Of course."),
        ("- I have a dog.\n- Two cats.", "I have a dog.\nTwo cats."),
    ],
)
def test_plain_text_keeps_an_answered_number_and_units_and_drops_a_spaced_emphasis(text, plain):
    from dialcheck.detectors.utterance import plain_text

    assert plain_text(text) == plain


def test_each_dialogue_is_read_plain_once(det, monkeypatch):
    from dialcheck.detectors import utterance

    calls = []
    real = utterance.plain_dialogue
    monkeypatch.setattr(utterance, "plain_dialogue", lambda d: calls.append(d) or real(d))
    det.slots = "settle"
    det.predict([["Hi!", "I'm 29 🎉", "Oh nice.", "I'm 45."], ["Hi!", "I have a dog.", "Cool.", "I have a cat."]])
    assert len(calls) == 2  # was 4: once for the ages cut out, once for the rules


def test_responses_api_text_parts_are_read(det):
    """The Responses API's input_text / output_text parts were skipped as if they were images: an assistant's earlier
    reply read as empty (never paired: 'nothing earlier to compare with'), and a last one refused as a tool call."""
    from dialcheck.io import parse_dialogue

    msgs = [
        {"role": "user", "content": [{"type": "input_text", "text": "Do you ship to Canada?"}]},
        {"role": "assistant", "content": [{"type": "output_text", "text": "Yes, in 5-7 days."}]},
        {"role": "user", "content": [{"type": "input_text", "text": "To Toronto?"}, {"type": "input_image"}]},
        {"role": "assistant", "content": [{"type": "output_text", "text": "We don't ship outside the US."}]},
    ]
    d = parse_dialogue({"messages": msgs})
    assert [t.text for t in d.turns] == [
        "Do you ship to Canada?",
        "Yes, in 5-7 days.",
        "To Toronto?",
        msgs[3]["content"][0]["text"],
    ]
    (v,) = det.predict([{"messages": msgs}])
    assert list(v.pair_scores) == [1]


@pytest.mark.parametrize(
    "between",
    [
        [{"role": "user", "content": "just curious"}],  # the user adds a line after the question
        [{"role": "assistant", "content": None}, {"role": "tool", "content": "{}"}],  # a tool call and its result
    ],
)
def test_a_short_answer_takes_its_question_across_a_chat_logs_extra_messages(det, between):
    """ "Where do you work?" ... "At a hospital downtown." ... "I used to work in a bank." is a former state beside a
    present one (times="changes"); the answer names no kind of fact and takes it from the question, which was read
    only when it came just before: with a line or a tool call in between the default flagged the pair at 0.93."""
    from dialcheck.detectors.utterance import SETTLED_SCORE

    det.times = "changes"
    msgs = [
        {"role": "user", "content": "Where do you work?"},
        *between,
        {"role": "assistant", "content": "At a hospital downtown."},
        {"role": "user", "content": "What did you do before that?"},
        {"role": "assistant", "content": "I used to work in a bank."},
    ]
    (v,) = det.predict([msgs])
    answer = len(between) + 1
    assert v.pair_scores[answer] <= SETTLED_SCORE


# A Responses API log as it is logged: messages mixed with a function call and its output (no role on either).
RESPONSES_LOG = [
    {"role": "user", "content": [{"type": "input_text", "text": "Is the blue kettle in stock?"}]},
    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "It is in stock."}]},
    {"role": "user", "content": [{"type": "input_text", "text": "Check again please."}]},
    {"type": "function_call", "call_id": "c1", "name": "stock", "arguments": '{"item": "blue kettle"}'},
    {"type": "function_call_output", "call_id": "c1", "output": '{"in_stock": 0}'},
    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "It is sold out."}]},
]


@pytest.mark.parametrize("layout", ["bare list", "messages"])
def test_responses_api_function_calls_are_read_as_a_chat_completions_tool_call_is(det, capsys, tmp_path, layout):
    """A function_call and its function_call_output name no role and have no content, so a real Responses API log
    was refused: 'turns[3].text: missing (it has: type, call_id, name, arguments)' as a bare list (naming turns,
    which the file does not have), 'messages[3].content: missing' inside messages. They are read as Chat
    Completions' tool call (an assistant turn without text) and tool message; evidence counts the file's items."""
    from dialcheck.io import parse_dialogue

    obj = RESPONSES_LOG if layout == "bare list" else {"messages": RESPONSES_LOG}
    d = parse_dialogue(obj)
    assert [(t.speaker, t.text) for t in d.turns][3:5] == [("assistant", ""), ("tool", '{"in_stock": 0}')]
    assert d.meta["turns_key"] == "messages"
    (v,) = det.predict([obj])
    assert list(v.evidence) == [1]  # the earlier reply, numbered as the log's items (the call is no evidence)
    p = tmp_path / "log.json"
    p.write_text(json.dumps(obj))
    zero = ["--tau", "0", "--eta-e", "0"]  # every paired turn named, as det's
    code, out, err = run_cli(capsys, "check", str(p), "--model", str(det.path), *zero, "--json")
    assert code == 0, err
    assert json.loads(out)["evidence"] == [1]
    # a log that ends with the tool's output is the one a tool message ends: noted, --speaker assistant checks the reply
    p.write_text(json.dumps(RESPONSES_LOG[:5] if layout == "bare list" else {"messages": RESPONSES_LOG[:5]}))
    code, _, err = run_cli(capsys, "check", str(p), "--model", str(det.path))
    assert code == 0 and "the last turn is a tool message" in err


# OpenAI's reasoning item as the Python SDK dumps it (content null) and with its reasoning text
REASONING = {"id": "rs_1", "summary": [], "type": "reasoning", "encrypted_content": None, "status": None}
REASONING_TEXT = [{"type": "reasoning_text", "text": "The user asks again; I should call the stock tool."}]


@pytest.mark.parametrize("content", [None, REASONING_TEXT], ids=["null", "reasoning_text"])
@pytest.mark.parametrize("layout", ["bare list", "messages"])
def test_a_reasoning_item_with_content_is_read_as_the_assistant_reasoning(det, capsys, tmp_path, layout, content):
    """A reasoning item was read as a tool item only when it had no "content" key, but OpenAI's carries one (null
    as the SDK dumps it, or a list of reasoning_text parts): such a log was refused, 'turns[3].speaker: missing'
    as a bare list, 'messages[3].role: missing' inside messages. The type decides: an assistant turn without text,
    its reasoning never read as something said."""
    from dialcheck.io import parse_dialogue

    log = [*RESPONSES_LOG[:3], {**REASONING, "content": content}, *RESPONSES_LOG[3:]]
    obj = log if layout == "bare list" else {"messages": log}
    d = parse_dialogue(obj)
    assert [(t.speaker, t.text) for t in d.turns][3:6] == [
        ("assistant", ""),
        ("assistant", ""),
        ("tool", '{"in_stock": 0}'),
    ]
    assert d.meta["turns_key"] == "messages"
    p = tmp_path / "log.json"
    p.write_text(json.dumps(obj))
    code, out, err = run_cli(capsys, "check", str(p), "--model", str(det.path), "--tau", "0", "--eta-e", "0", "--json")
    assert code == 0, err
    assert json.loads(out)["evidence"] == [1]  # the reasoning is no evidence: it has no text


@pytest.mark.parametrize("layout", ["bare list", "messages"])
def test_an_item_reference_is_refused_as_what_it_is(capsys, tmp_path, layout):
    """An item_reference names an item the API stored; it was refused as 'messages[3].content: missing (it has:
    type, id)' (as a bare list 'turns[3].text: missing'), as if a message had lost its text. The message says what
    it is and what to do."""
    log = [*RESPONSES_LOG[:3], {"type": "item_reference", "id": "msg_0123"}, *RESPONSES_LOG[5:]]
    p = tmp_path / "log.json"
    p.write_text(json.dumps(log if layout == "bare list" else {"messages": log}))
    code, out, err = run_cli(capsys, "check", str(p))
    assert code == 2 and out == "", err
    assert err == (
        f'dialcheck: error: {p}, line 1: messages[3]: an item_reference, a reference to the item "msg_0123" stored by '
        "the API, whose text the log does not hold: include the item itself\n"
    )


def test_a_named_user_is_a_user_for_the_task_oriented_reading():
    """Named users became speakers the task-oriented detector did not know as users (it knows "user", "customer",
    ...): it would have told user from system by alternation."""
    from dialcheck.detectors.grounded import dialogue_roles
    from dialcheck.io import parse_dialogue

    msgs = [
        {"role": "system", "content": "You book hotels."},
        {"role": "user", "name": "alice", "content": "Is the Westin near?"},
        {"role": "user", "name": "bob", "content": "And does it have parking?"},
        {"role": "assistant", "content": "It is 2 miles away, with parking."},
    ]
    assert dialogue_roles(parse_dialogue(msgs)) == ["system", "user", "user", "system"]
