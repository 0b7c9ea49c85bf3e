import io
import json
import re

import pytest

from dialcheck.errors import InputError
from dialcheck.io import parse_dialogue, parse_example, read_dialogues, read_examples
from helpers_cli import feed_stdin


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_json_single_dialogue_with_speakers(tmp_path):
    p = _write(
        tmp_path,
        "one.json",
        json.dumps(
            {
                "id": "x1",
                "turns": [{"speaker": "user", "text": "hi"}, {"speaker": "bot", "text": "I have a cat."}],
            }
        ),
    )
    (r,) = list(read_dialogues(p))
    assert r.ok and r.dialogue.last.speaker == "bot" and r.dialogue.meta["id"] == "x1"


def test_json_list_of_dialogues_and_bare_string_lists(tmp_path):
    p = _write(tmp_path, "many.json", json.dumps([["a", "b"], {"turns": ["c", "d", "e"]}]))
    rs = list(read_dialogues(p))
    assert [len(r.dialogue.turns) for r in rs] == [2, 3]


def test_json_bare_list_of_strings_is_one_dialogue(tmp_path):
    p = _write(tmp_path, "bare.json", json.dumps(["a", "b", "c"]))
    (r,) = list(read_dialogues(p))
    assert [t.speaker for t in r.dialogue.turns] == ["A", "B", "A"]


def test_jsonl_reports_the_bad_line_and_keeps_good_ones(tmp_path):
    p = _write(tmp_path, "log.jsonl", '["a", "b"]\n{"turns": [{"speaker": "A", "text": 5}]}\n{oops\n["c", "d"]\n')
    rs = list(read_dialogues(p))
    assert [r.ok for r in rs] == [True, False, False, True]
    assert str(rs[1].error) == f"{p}, line 2: turns[0].text: expected a string, got int"
    assert f"{p}, line 3: invalid JSON" in str(rs[2].error)


def test_decode_records_use_agent_ids(data_root):
    path = data_root / "decode" / "human-bot.jsonl"
    first = path.open().readline()
    d = parse_dialogue(json.loads(first))
    assert {t.speaker for t in d.turns} == {"0", "1"} and d.last.speaker == "1"


def test_stdin_stream():
    rs = list(read_dialogues(io.StringIO('{"turns": ["x", "y"]}'), name="<stdin>"))
    assert rs[0].ok


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        ({"turns": []}, "turns: the dialogue is empty"),
        ({"turns": "hello"}, "turns: expected a list, got string"),
        ({"text": "hello"}, "turns: missing"),
        ({"turns": [{"speaker": "A"}]}, "turns[0].text: missing"),
        ({"turns": ["hi", "  "]}, "turns[1].text: the last turn is empty"),
        ({"turns": [{"speaker": ["A"], "text": "x"}]}, "turns[0].speaker: expected a string"),
        ({"turns": ["a"], "knowledge": [{"poi": {"x": 1}}]}, "knowledge[0].poi: expected a flat value"),
        ({"turns": ["a"], "knowledge": "table"}, "knowledge: expected a list of records"),
        (42, "expected a dialogue object or a list of strings, got int"),
        ({"messages": []}, "messages: the dialogue is empty"),
        ({"messages": [{"role": "user", "content": 5}]}, "messages[0].content: expected a string, a list of parts"),
        ({"messages": [{"role": "user", "content": [{"type": "text"}]}]}, "messages[0].content[0].text: expected"),
        ({"messages": [{"role": 1, "content": "hi"}]}, "messages[0].role: expected a string, got int"),
        ({"turns": [{"speaker": "A", "text": "I have a dog."}, {"text": "No dog."}]}, "turns[1].speaker: missing"),
        ({"messages": [{"role": "user", "content": "hi"}, {"content": "yo"}]}, "messages[1].role: missing"),
        ({"turns": [{"speaker": "A", "text": "hi"}, "yo"]}, "turns[1]: a bare string among turns that name"),
        ({"turns": [{"speaker": " ", "text": "hi"}]}, "turns[0].speaker: ' ' is blank"),
        ({"messages": [{"role": "", "content": "hi"}]}, "messages[0].role: empty"),
        (
            {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": None}]},
            "messages[1].content: the last turn is empty",
        ),
    ],
)
def test_bad_dialogues_name_the_field(obj, message):
    with pytest.raises(InputError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_dialogue(obj)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        # a list of dialogues on one JSON Lines line was read as one dialogue's turns: "turns[0].text: missing"
        (
            [{"turns": ["a", "b"]}, {"turns": ["c", "d"]}],
            'turns[0]: a whole dialogue (it has "turns"), not a turn: one dialogue was expected, got a list of '
            "dialogues (JSON Lines hold one dialogue per line",
        ),
        ([{"messages": [{"role": "user", "content": "hi"}]}], 'turns[0]: a whole dialogue (it has "messages")'),
        # a chat message without content was said to miss its "text"
        ({"messages": [{"role": "user"}, {"role": "assistant", "content": "yo"}]}, "messages[0].content: missing "),
        # what the object holds instead, so another key name ("utterance", "dialogue") is plain to see
        ({"turns": [{"speaker": "A", "utterance": "hi"}]}, "turns[0].text: missing (it has: speaker, utterance)"),
        ({"dialogue": ["hi", "yo"]}, 'turns: missing (it has: dialogue; a dialogue is {"turns": [...]}'),
        ({}, 'turns: missing (a dialogue is {"turns": [...]}'),
        ({"turns": [{}]}, "turns[0].text: missing"),
    ],
)
def test_odd_but_plausible_shapes_are_named_for_what_they_are(tmp_path, line, message):
    p = _write(tmp_path, "logs.jsonl", '{"turns": ["x", "y"]}\r\n' + json.dumps(line) + "\r\n")
    rs = list(read_dialogues(p))
    assert rs[0].ok and str(rs[1].error).startswith(f"{p}, line 2: {message}")


def test_invalid_json_file_names_file_and_line(tmp_path):
    p = _write(tmp_path, "bad.json", '{\n  "turns": ["a",\n  ]\n}')
    with pytest.raises(InputError, match=r"bad.json, line 3: invalid JSON"):
        list(read_dialogues(p))


def test_json_list_error_names_the_item(tmp_path):
    p = _write(tmp_path, "items.json", json.dumps([["a", "b"], {"turns": []}]))
    rs = list(read_dialogues(p))
    assert "dialogue 2: turns: the dialogue is empty" in str(rs[1].error)
    # pretty-printed, the bad dialogue's field error names the line the dialogue starts on
    p = _write(tmp_path, "pretty.json", json.dumps([["a", "b"], {"turns": ["x", 5]}], indent=2))
    (bad,) = [r for r in read_dialogues(p) if r.error]
    assert "pretty.json, line 6: dialogue 2: turns[1]: expected an object" in str(bad.error)
    examples, _ = read_examples(_write(tmp_path, "one.jsonl", '{"turns": ["a", "b"], "contradiction": false}\n'))
    assert examples[0].id == "one.jsonl:1"  # not "one.jsonl:0"


def test_one_record_file_error_names_its_line(tmp_path):
    p = _write(tmp_path, "one.jsonl", '\n{"turns": [{"speaker": "A"}]}\n')
    rs = list(read_dialogues(p))
    assert str(rs[0].error).startswith(f"{p}, line 2: turns[0].text: missing")


def test_missing_file_and_empty_input(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        list(read_dialogues(tmp_path / "nope.json"))
    with pytest.raises(InputError, match="the input is empty"):
        list(read_dialogues(_write(tmp_path, "empty.json", "  \n")))


def test_directory_and_json_errors_are_worded_for_people(tmp_path):
    with pytest.raises(InputError, match="is a directory, expected a file"):
        list(read_dialogues(tmp_path))
    with pytest.raises(InputError, match="is a directory, expected a file"):
        list(read_dialogues(tmp_path, jsonl=True))
    # json says "Unterminated string starting at"; the column follows it once, not "at at column"
    for name, text in (("cut.json", '{"turns": ["a", "b]}'), ("cut.jsonl", '{"turns": ["a", "b]}\n')):
        with pytest.raises(InputError) as e:
            rs = list(read_dialogues(_write(tmp_path, name, text)))
            raise rs[0].error
        assert "line 1: invalid JSON (Unterminated string starting at column 17)" in str(e.value)


def test_knowledge_values_become_strings():
    d = parse_dialogue({"turns": ["a"], "knowledge": [{"distance": 5, "open": True, "note": None}]})
    assert d.knowledge.rows[0] == {"distance": "5", "open": "yes", "note": ""}


LABELLED = {"id": "x", "turns": ["I have a dog.", "Nice!", "I have no pets."], "contradiction": True, "evidence": [0]}


@pytest.mark.parametrize(
    "change, message",
    [
        ({"contradiction": None}, "contradiction: expected true or false, got null"),
        ({"contradiction": "yes"}, "contradiction: expected true or false, got string"),
        ({"evidence": [2]}, "evidence: 2 is not an earlier turn (this dialogue's earlier turns are 0..1)"),
        ({"evidence": [-1]}, "evidence: -1 is not an earlier turn"),
        ({"evidence": "0"}, "evidence: expected a list of turn indices, got string"),
        ({"evidence": [True]}, "evidence[0]: expected a turn index (a whole number), got boolean"),
        ({"evidence": [0, "1"]}, "evidence[1]: expected a turn index (a whole number), got string"),  # was "got list"
        ({"evidence": [0.0]}, "evidence[0]: expected a turn index (a whole number), got float"),
        ({"contradiction": False}, "evidence: a dialogue labelled as no contradiction names no evidence turns"),
    ],
)
def test_labelled_dialogues_name_the_bad_field(change, message):
    with pytest.raises(InputError, match=re.escape(message)):
        parse_example({**LABELLED, **change})


def test_labelled_dialogue_without_label_or_evidence():
    with pytest.raises(InputError, match=r"^contradiction: missing \(true or false\)$"):
        parse_example({"turns": ["a", "b"]})
    for key in ("label", "gold", "is_contradiction"):  # the gold label under another name was not pointed out
        with pytest.raises(
            InputError, match=rf'^contradiction: missing \(true or false; "{key}" is not read: name the'
        ):
            parse_example({"turns": ["a", "b"], key: True})
    assert parse_example({"turns": ["a", "b"], "contradiction": False}).evidence == ()
    assert parse_example({"turns": ["a", "b", "c"], "contradiction": True}).evidence is None  # not annotated
    assert parse_example({"turns": ["a", "b", "c"], "contradiction": True, "evidence": []}).evidence is None
    assert parse_example({"turns": ["a", "b"], "contradiction": False, "evidence": []}).evidence == ()


def test_read_examples_keeps_good_records_and_names_bad_lines(tmp_path):
    p = tmp_path / "logs.jsonl"
    rows = [json.dumps(LABELLED), "{oops", json.dumps({"turns": ["a", "b"], "contradiction": False}), ""]
    p.write_text("\n".join(rows))
    examples, errors = read_examples(p)
    assert [e.id for e in examples] == ["x", "logs.jsonl:3"]
    assert [e.label for e in examples] == [True, False] and examples[0].evidence == (0,)
    assert len(errors) == 1 and str(errors[0]).startswith(f"{p}, line 2: invalid JSON")


def test_labelled_dialogue_with_a_cdconv_category():
    turns = ["你养猫吗？", "养了两只。", "几岁了？", "我没养猫。"]
    yes = {"turns": turns, "contradiction": True}
    assert parse_example({**yes, "category": "history"}, require_category=True).category == "history"
    assert parse_example({**yes, "category": "history"}).category == "history"
    assert parse_example(yes).category is None
    assert parse_example({**yes, "category": "QI+KBI"}).category is None  # another task's verdict: ignored
    assert (
        parse_example({"turns": turns, "contradiction": False, "category": None}, require_category=True).label is False
    )
    with pytest.raises(InputError, match="category: missing"):
        parse_example(yes, require_category=True)
    with pytest.raises(
        InputError, match="expected one of intra_sentence, role_confusion, history or null, got 'History'"
    ):
        parse_example({**yes, "category": "History"}, require_category=True)
    with pytest.raises(InputError, match="got int"):
        parse_example({**yes, "category": 3}, require_category=True)
    with pytest.raises(InputError, match="no contradiction has no category"):
        parse_example({"turns": turns, "contradiction": False, "category": "history"}, require_category=True)


def test_chat_completion_messages_are_dialogues_with_message_indices():
    msgs = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "Do you have pets?"},
        {"role": "assistant", "content": [{"type": "text", "text": "Yes,"}, {"type": "image_url"}, " two dogs."]},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1"}]},
        {"role": "user", "content": "Names?"},
        {"role": "assistant", "content": "I never had pets."},
    ]
    d = parse_dialogue({"id": "c1", "messages": msgs})
    assert [t.speaker for t in d.turns] == ["system", "user", "assistant", "assistant", "user", "assistant"]
    assert d.turns[2].text == "Yes, two dogs." and d.turns[3].text == "" and d.meta["id"] == "c1"
    assert parse_dialogue(msgs) == parse_dialogue({"messages": msgs})  # a bare list of messages is one dialogue


def test_a_file_holding_one_bare_message_list_is_one_dialogue(tmp_path):
    msgs = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]
    rs = list(read_dialogues(_write(tmp_path, "chat.json", json.dumps(msgs))))
    assert len(rs) == 1 and rs[0].ok and rs[0].dialogue.last.text == "Hello"
    rs = list(read_dialogues(_write(tmp_path, "chats.json", json.dumps([{"messages": msgs}, {"messages": msgs}]))))
    assert len(rs) == 2 and all(r.ok for r in rs)


def test_bytes_that_are_not_utf8_are_a_located_error_and_a_byte_order_mark_is_fine(tmp_path, monkeypatch):
    bad = tmp_path / "latin1.jsonl"
    bad.write_bytes(b'["a", "b"]\n["caf\xe9", "x"]\n\xef\xbb\xbf["c", "d"]\n')
    with pytest.raises(InputError, match=r"latin1.jsonl, line 2: not UTF-8 text: byte 0xe9 at column 6"):
        list(read_dialogues(bad))
    rs = list(read_dialogues(bad, jsonl=True))  # a streamed log: that line is skipped, not the rest
    assert [r.ok for r in rs] == [True, False, True] and "line 2: not UTF-8" in str(rs[1].error)
    feed_stdin(monkeypatch, b'["caf\xe9"]')
    with pytest.raises(InputError, match=r"<stdin>, line 1: not UTF-8 text"):
        list(read_dialogues("-"))
    stdin_log = b'["a", "b"]\n["caf\xe9", "x"]\n["c", "d"]\n'  # `dialcheck score - out.jsonl < log`
    feed_stdin(monkeypatch, stdin_log)
    rs = list(read_dialogues("-", jsonl=True))
    assert [r.ok for r in rs] == [True, False, True] and "<stdin>, line 2: not UTF-8" in str(rs[1].error)
    (r,) = list(read_dialogues(_write(tmp_path, "bom.json", '\ufeff["Hi", "Hello"]')))  # Notepad's UTF-8
    assert r.ok and r.dialogue.last.text == "Hello"


def test_read_examples_skips_a_jsonl_line_that_is_not_utf8_and_keeps_the_others(tmp_path, monkeypatch):
    good = json.dumps({"turns": ["I have a dog.", "Nice!", "I have no pets."], "contradiction": True}).encode()
    bad = tmp_path / "latin1.jsonl"
    bad.write_bytes(good + b'\n{"turns": ["caf\xe9", "x"], "contradiction": false}\n' + good + b"\n")
    examples, errors = read_examples(bad)  # `evaluate --data`: one more bad record, not the end of the file
    assert [e.id for e in examples] == ["latin1.jsonl:1", "latin1.jsonl:3"]
    assert [str(e) for e in errors] == [
        f"{bad}, line 2: not UTF-8 text: byte 0xe9 at column 16 (save the file as UTF-8)"
    ]
    feed_stdin(monkeypatch, bad.read_bytes())
    examples, errors = read_examples("-")
    assert len(examples) == 2 and str(errors[0]).startswith("<stdin>, line 2: not UTF-8")  # as check names it
    assert [e.id for e in examples] == ["stdin:1", "stdin:3"]  # ids as they were
    with pytest.raises(InputError, match=r"latin1.jsonl, line 2: not UTF-8 text"):
        list(read_dialogues(bad))  # `check` still refuses the whole input
    doc = tmp_path / "latin1.json"  # a JSON document, not JSONL: fails as a whole, with its line and column
    doc.write_bytes(b'[\n  {"turns": ["caf\xe9", "x"], "contradiction": false}\n]\n')
    with pytest.raises(InputError, match=r"latin1.json, line 2: not UTF-8 text: byte 0xe9 at column 18"):
        read_examples(doc)


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ('{"id": 2.5, "turns": ["a", "b"]}', "id: expected a string or a whole number, got float"),
        ('{"id": [1, 2], "turns": ["a", "b"]}', "id: expected a string or a whole number, got list"),
        ('{"id": {"x": 1}, "turns": ["a", "b"]}', "id: expected a string or a whole number, got object"),
        ('{"id": NaN, "turns": ["a", "b"]}', "id: expected a string or a whole number, got float"),
        ('{"id": true, "turns": ["a", "b"]}', "id: expected a string or a whole number, got boolean"),
        ('{"dialogue_id": 1.5, "turns": ["a", "b"]}', "dialogue_id: expected a string or a whole number, got float"),
        (
            '{"conversation_id": false, "turns": ["a"]}',
            "conversation_id: expected a string or a whole number, got boolean",
        ),
        ('{"record_id": {}, "turns": ["a", "b"]}', "record_id: expected a string or a whole number, got object"),
    ],
)
def test_an_id_that_is_not_a_string_or_a_whole_number_is_a_field_error(tmp_path, record, message):
    p = _write(tmp_path, "ids.jsonl", '["x", "y"]\n' + record + "\n")
    good, bad = read_dialogues(p)  # one bad record among the others, named by file, line and field
    assert good.ok and not bad.ok and str(bad.error) == f"{p}, line 2: {message}" and bad.raw_id is None
    with pytest.raises(InputError, match=re.escape(message)):
        parse_dialogue(json.loads(record))


def test_string_and_whole_number_ids_are_kept_and_a_null_one_is_no_id(tmp_path):
    assert parse_dialogue({"id": "d1", "turns": ["a"]}).meta["id"] == "d1"
    assert parse_dialogue({"id": 7, "turns": ["a"]}).meta["id"] == "7"
    assert parse_dialogue({"id": 7.0, "turns": ["a"]}).meta["id"] == "7"  # a whole number, as a table writes it
    assert parse_dialogue({"id": None, "dialogue_id": 3, "turns": ["a"]}).meta["id"] == "3"
    assert "id" not in parse_dialogue({"id": None, "turns": ["a"]}).meta
    p = _write(tmp_path, "ids.jsonl", '{"id": null, "turns": ["a", "b"]}\n{"record_id": 12, "turns": ["a", "b"]}\n')
    assert [r.raw_id for r in read_dialogues(p)] == [None, "12"]  # not "None"
    examples, errors = read_examples(
        _write(tmp_path, "lab.jsonl", '{"id": true, "turns": ["a", "b"], "contradiction": false}\n["x"]\n')
    )
    assert not examples and "lab.jsonl, line 1: id: expected a string or a whole number, got boolean" in str(errors[0])


def test_json_type_is_public_names_json_types_and_keeps_its_old_private_name():
    from dialcheck import io as dio

    values = [None, "a", {}, [], True, 2, 2.5]
    assert [dio.json_type(v) for v in values] == ["null", "string", "object", "list", "boolean", "int", "float"]
    assert dio._type is dio.json_type and {"json_type", "json_type_name"} <= set(dio.__all__)
    assert dio.json_type_name(str) == "string" and dio.json_type_name((int, str)) == "int or string"
    assert dio.json_type_name((dict, list, bool, float, type(None))) == "object or list or boolean or float or null"


def test_a_lone_surrogate_is_refused_with_its_field():
    with pytest.raises(InputError, match=r"turns\[1\]: not valid Unicode text \(a lone surrogate \\udce9\)"):
        parse_dialogue(json.loads('["a", "caf\\udce9"]'))
    with pytest.raises(InputError, match=r"messages\[0\].content: not valid Unicode"):
        parse_dialogue({"messages": [{"role": "user", "content": "\udce9"}]})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('["Hi", 5]', "turns[1]: expected an object with 'speaker' and 'text'"),
        ('["Hi", null]', "got null"),
        ('[{"speaker": "A", "text": "hi"}, {"speaker": "B", "txt": "x"}]', "turns[1].text: missing"),
        ('[["a", "b"], "Hi"]', "dialogue 2: expected a dialogue object or a list of strings, got string"),
    ],
)
def test_a_bare_list_with_one_bad_turn_names_that_turn(tmp_path, text, message):
    (r,) = list(read_dialogues(_write(tmp_path, "bare.json", text)))[-1:]
    assert not r.ok and message in str(r.error)


def test_a_line_break_character_inside_a_json_string_does_not_split_the_line(tmp_path):
    text = json.dumps(["I have a dog.\u2028Really.", "Nice."], ensure_ascii=False) + "\n" + '["x", "y"]\n'
    rs = list(read_dialogues(_write(tmp_path, "ls.jsonl", text)))
    assert [r.ok for r in rs] == [True, True] and [r.at_line for r in rs] == [1, 2]


def test_example_record_reads_back_as_the_same_example(tmp_path):
    from dialcheck.io import example_record, read_examples, write_jsonl
    from dialcheck.schema import Dialogue, Example, KnowledgeBase

    kb = KnowledgeBase(({"poi": "Stanford Express Care", "distance": "5 miles"},))
    examples = [
        Example(Dialogue.from_texts(["I have a dog.", "Nice!", "I have no pets."]), True, (0,), id="a"),
        Example(Dialogue.from_texts(["I have a dog.", "Nice!", "Mine is a lab."]), False, (), id="b"),
        Example(Dialogue.from_texts(["Hi", "I am 30.", "How old?", "I am 12."]), True, None, id="c"),  # no evidence
        Example(Dialogue.from_texts(["你有猫吗？", "有一只。", "几岁了？", "我没有猫。"]), True, (1,), "history"),
        Example(Dialogue.from_texts(["Where is it?", "5 miles away."], knowledge=kb), False, (), id="kb"),
    ]
    recs = [example_record(e) for e in examples]
    assert "evidence" not in recs[1] and "evidence" not in recs[2] and "id" not in recs[3]
    assert recs[4]["knowledge"] == [{"poi": "Stanford Express Care", "distance": "5 miles"}]
    path = tmp_path / "labelled.jsonl"
    write_jsonl(path, recs)
    back, errors = read_examples(path)
    assert not errors and [e.id for e in back] == ["a", "b", "c", "labelled.jsonl:4", "kb"]  # an id-less one: FILE:LINE
    assert back[:3] + back[4:] == examples[:3] + examples[4:] and back[3].dialogue == examples[3].dialogue
    assert [parse_example(r).id for r in recs] == ["a", "b", "c", "", "kb"]


def test_turns_that_name_no_speaker_alternate_and_a_number_names_one():
    d = parse_dialogue({"turns": [{"text": "a"}, {"text": "b"}, "c"]})
    assert [t.speaker for t in d.turns] == ["A", "B", "A"]
    d = parse_dialogue({"turns": [{"agent_id": 0, "text": "a"}, {"speaker": 1, "text": "b"}]})
    assert [t.speaker for t in d.turns] == ["0", "1"]


def test_english_only_reading_skips_chinese_and_mixed_dialogues_naming_their_lines(tmp_path):
    from dialcheck.evaluation.decode import DecodeEvaluator

    rows = [
        {"turns": ["I have a dog.", "Nice!", "I have no pets."], "contradiction": True},
        {"turns": ["你有宠物吗？", "有啊，我养了一只狗。", "叫什么？", "我从来没有养过狗。"], "contradiction": True},
        {"turns": ["I like tea.", "我也喜欢茶。", "Which one do you like best?"], "contradiction": False},
    ]
    p = _write(tmp_path, "mine.jsonl", "\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n")
    examples, errors = read_examples(p, english=True)
    assert [e.id for e in examples] == ["mine.jsonl:1"]
    assert "mine.jsonl, line 2: a Chinese conversation: the English default does not read it; evaluate" in str(
        errors[0]
    )
    assert "line 3: a dialogue mixing Chinese and non-Chinese turns" in str(errors[1])
    assert len(read_examples(p)[0]) == 3  # a model named with --model reads them all
    ev = DecodeEvaluator(files=[p], english=True)
    assert len(ev.files["mine"]) == 1 and len(ev.skipped["mine"]) == 2


def test_reading_dialogues_to_check_takes_each_objects_speaker_over_the_callers(tmp_path):
    """read_dialogues(checking=True), what check and score read with: a record's own "speaker" over --speaker (it
    was dropped), its last turn may then be empty (a tool call); a bad speaker or a "tau" is a bad record."""
    chat = [{"role": "user", "content": "Pets?"}, {"role": "assistant", "content": None}]
    items = [{"messages": chat, "speaker": "assistant"}, ["a", "b"], {"turns": ["a"], "speaker": ["A", 2.5]},
             {"turns": ["a"], "tau": 0.5}, {"turns": ["a"], "speaker": None}]  # fmt: skip
    p = _write(tmp_path, "in.json", "[\n" + ",\n".join(map(json.dumps, items)) + "\n]\n")  # item i on line i + 2
    recs = list(read_dialogues(p, checking=True, speakers=["B"]))
    assert [r.speakers for r in recs] == [["assistant"], ["B"], None, None, ["B"]]
    assert (
        str(recs[2].error)
        == f"{p}, line 4: dialogue 3: speaker[1]: expected a speaker name (a string or a whole number), got float"
    )
    assert str(recs[3].error).startswith(f"{p}, line 5: dialogue 4: tau: not a dialogue field; the thresholds are")
    assert [r.speakers for r in read_dialogues(p, checking=True) if r.ok] == [["assistant"], None, None]


def test_a_reply_speaker_that_is_a_string_is_told_what_is_wrong_with_its_text_not_its_type():
    # a blank or empty speaker for rank/rerank said "expected a speaker name (a non-empty string), got string"
    from dialcheck.io import check_reply_speaker

    for value, said in [(" ", "' ' is blank"), ("\t", "'\\t' is blank"), ("", "empty")]:
        with pytest.raises(InputError) as e:
            check_reply_speaker(value)
        assert str(e.value) == (
            f"speaker: {said} (name who says the reply, or leave speaker out: the context's next speaker says it)"
        )
    with pytest.raises(InputError, match=r"^speaker: expected a speaker name \(a non-empty string\), got float$"):
        check_reply_speaker(2.5)


def test_a_blank_speaker_is_worded_alike_for_a_turn_checked_and_a_reply():
    # check_speakers said "speaker: empty" of " ", where check_reply_speaker said "' ' is blank"
    from dialcheck.io import check_reply_speaker, check_speakers

    for value, said in [(" ", "speaker: ' ' is blank ("), ("", "speaker: empty (")]:
        for check in (check_speakers, check_reply_speaker):
            with pytest.raises(InputError) as e:
                check(value)
            assert str(e.value).startswith(said), (check, str(e.value))
    with pytest.raises(InputError, match=r"^speaker\[1\]: '\\t' is blank \(name the speaker whose turn is checked\)$"):
        check_speakers(["bot", "\t"])
    assert check_reply_speaker("bot") == "bot" and check_reply_speaker(None) is None
    # a turn's own speaker and --speaker said "empty" of " " too
    import argparse

    from dialcheck.cli.common import speaker_name
    from dialcheck.io import check_dialogue
    from dialcheck.schema import Dialogue, Turn

    for value, said in [(" ", "' ' is blank ("), ("", "empty (")]:
        with pytest.raises(InputError) as e:
            parse_dialogue({"turns": [{"speaker": value, "text": "hi"}]})
        assert str(e.value).startswith(f"turns[0].speaker: {said}name who said the turn)"), str(e.value)
        with pytest.raises(InputError) as e:
            check_dialogue(Dialogue((Turn(value, "hi"),)))
        assert str(e.value).startswith(f"turns[0].speaker: {said}name who said the turn)"), str(e.value)
        with pytest.raises(argparse.ArgumentTypeError) as e:
            speaker_name(value)
        assert str(e.value) == f"{said}name a speaker, e.g. --speaker assistant)"


def test_an_empty_speaker_list_is_refused_in_words_for_json_and_python_alike(tmp_path):
    # it said "give a name, or None for the last turn" to a JSON record, where there is no None (JSON has null)
    import dialcheck

    said = "speaker: an empty list names no speaker (name one, or leave speaker out to check the last turn)"
    p = _write(tmp_path, "in.jsonl", '{"turns": ["Hi", "Hello"], "speaker": []}\n')
    (rec,) = read_dialogues(p, checking=True)
    assert str(rec.error) == f"{p}, line 1: {said}"
    with pytest.raises(InputError) as e:
        dialcheck.check(["Hi", "Hello"], speaker=[])
    assert str(e.value) == said


def test_a_whole_number_names_a_speaker_wherever_a_record_names_one(tmp_path):
    """DECODE's agent_id 1 and a turn's "speaker": 1 were the speaker "1", but a record's own "speaker": 1 (or [1])
    was refused ("got int"), so the turn a DECODE-style record meant to check could not be named as its turns name
    it. A whole number is its digits in every place: the record's "speaker", a labelled record's, a reply's."""
    from dialcheck.io import check_reply_speaker, check_speakers, parse_checked

    turns = [{"agent_id": 0, "text": "I have a dog."}, {"agent_id": 1, "text": "Nice."}]
    turns += [{"agent_id": 0, "text": "I have no pets."}, {"agent_id": 1, "text": "Oh?"}]
    rows = [{"id": "a", "turns": turns, "speaker": 0}, {"id": "b", "turns": turns, "speaker": [0.0, "x"]}]
    p = _write(tmp_path, "decode.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    recs = list(read_dialogues(p, checking=True))
    assert [r.ok for r in recs] == [True, True] and [r.speakers for r in recs] == [["0"], ["0", "x"]]
    assert [t.speaker for t in recs[0].dialogue.turns] == ["0", "1", "0", "1"]
    ex = parse_example({"turns": turns, "speaker": 0, "contradiction": True, "evidence": [0]})  # evaluate --data
    assert ex.dialogue.last.text == "I have no pets." and ex.evidence == (0,)
    assert parse_checked({"turns": [{"speaker": 2, "text": "a"}], "speaker": 2})[1] == ["2"]
    assert check_speakers([1, "bot"]) == ["1", "bot"] and check_reply_speaker(1) == "1"
    for bad in (True, 1.5, {"id": 1}):  # not a name nor a whole number: refused, never turned into one
        with pytest.raises(InputError, match=r"^speaker: expected a speaker name"):
            parse_checked({"turns": ["a"], "speaker": bad})
    with pytest.raises(InputError, match=r"^turns\[0\]\.speaker: expected a string or a whole number, got float$"):
        parse_dialogue({"turns": [{"speaker": 1.5, "text": "a"}]})
