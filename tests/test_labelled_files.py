"""Reading labelled-dialogue files (``evaluate --data``, ``train --dialogues``) and dialogue files (``check``):
what a file holds, and how a bad record in it is named."""

import json

import pytest

from dialcheck.cli.common import read_labelled
from dialcheck.errors import InputError
from dialcheck.io import read_examples
from helpers_cli import feed_stdin, run_cli


def test_an_empty_json_list_is_named_as_holding_no_dialogues(tmp_path, capsys, tiny_detector_dir):
    # evaluate said 'line 1: expected a dialogue object with a "contradiction" field, got list', check
    # 'line 1: turns: the dialogue is empty': the list was read as one dialogue
    empty = tmp_path / "e.json"
    empty.write_text("[]\n")
    for argv in (("evaluate", "--data", str(empty)), ("check", str(empty))):
        code, _, err = run_cli(capsys, argv[0], "--model", str(tiny_detector_dir), *argv[1:])
        assert code == 2 and err == f"dialcheck: error: {empty}: holds no dialogues: an empty JSON list []\n"


GOOD = {"turns": ["I have a dog.", "Nice!", "I have no pets."], "contradiction": True}
READ_AS = ": the file was read as JSON Lines, one record per line"


def test_a_bad_first_jsonl_line_is_skipped_like_any_other(tmp_path, capsys, tiny_detector_dir):
    # it refused the whole file ("line 1: invalid JSON") while a bad later line was skipped
    logs = tmp_path / "f.jsonl"
    logs.write_text("nope\n" + json.dumps(GOOD) + "\n")
    code, out, err = run_cli(
        capsys, "evaluate", "--model", str(tiny_detector_dir), "--data", str(logs), "--no-progress"
    )
    assert code == 0 and "| f: dialogues | 1 |" in out
    assert f"dialcheck: skipped {logs}, line 1: invalid JSON (Expecting value at column 1){READ_AS}\n" in err
    examples, skipped = read_labelled(str(logs))  # train --dialogues and --calibrate-on
    assert len(examples) == 1 and skipped == 1 and examples[0].id == "f.jsonl:2"
    # check still refuses bad input, saying how the file was read
    code, _, err = run_cli(capsys, "check", "--model", str(tiny_detector_dir), str(logs))
    assert code == 2 and f"{logs}, line 1: invalid JSON (Expecting value at column 1){READ_AS}" in err


@pytest.mark.parametrize(
    ("text", "line", "column"),
    [
        # a compact dialogue a line, the last one (no comma) a JSON object of its own
        ('[\n  {"turns": ["a" "b"], "contradiction": false},\n' + f"  {json.dumps(GOOD)}\n]\n", 2, 18),
        ('{\n  "turns": ["a",\n  "b"]],\n  "contradiction": false\n}\n', 3, 7),
        ('[{"turns": ["a" "b"], "contradiction": false},\n' + f" {json.dumps(GOOD)}]\n", 1, 17),
    ],
)
def test_a_pretty_printed_document_with_a_syntax_error_is_named_at_its_line(tmp_path, capsys, text, line, column):
    doc = tmp_path / "doc.json"
    doc.write_text(text)
    with pytest.raises(InputError) as e:
        read_examples(doc)
    assert str(e.value).startswith(f"{doc}, line {line}: invalid JSON (") and f"column {column})" in str(e.value)


def test_records_read_from_stdin_are_named_stdin_line(tmp_path, capsys, monkeypatch, tiny_detector_dir):
    # their ids were "-:1", "-:2": the split was already named stdin
    text = json.dumps(GOOD) + "\n" + json.dumps({**GOOD, "contradiction": False}) + "\n"
    feed_stdin(monkeypatch, text)
    preds = tmp_path / "p.jsonl"
    code, _, err = run_cli(
        capsys, "evaluate", "--model", str(tiny_detector_dir), "--data", "-", "--predictions", str(preds),
        "--no-progress",
    )  # fmt: skip
    assert code == 0, err
    assert [json.loads(row)["id"] for row in preds.read_text().splitlines()] == ["stdin:1", "stdin:2"]


def test_evaluate_names_stdin_one_way_in_every_message(tmp_path, capsys, monkeypatch, tiny_detector_dir):
    # the skip lines and their summary said "<stdin>", the other-speaker note too, and the language warning "of -";
    # then all said "stdin", as the split and the ids do, while check, score, rerank and probe say "<stdin>". Every
    # message now names the file "<stdin>", as every command does; the split ("stdin") and ids ("stdin:3") stay,
    # being what predictions files and tables hold
    rows = [{**GOOD, "evidence": [1]}, {"turns": ["你好。", "你好。", "我没有猫。"], "contradiction": False}]
    text = "\n".join([json.dumps(rows[0]), "{oops", json.dumps(rows[1], ensure_ascii=False)]) + "\n"
    feed_stdin(monkeypatch, text)
    code, _, err = run_cli(capsys, "evaluate", "--model", str(tiny_detector_dir), "--data", "-", "--no-progress")
    assert code == 0, err
    said = [ln for ln in err.splitlines() if ln.startswith("dialcheck: ")]
    assert said[0].startswith("dialcheck: skipped <stdin>, line 2: invalid JSON")
    assert said[1].startswith("dialcheck: <stdin>: skipped 1 of 3 records (named above); split stdin holds the other 2")
    assert said[2].startswith("dialcheck: warning: <stdin>: the contradiction of line 1 names as evidence")
    assert said[3].startswith("dialcheck: warning: ") and " of <stdin> " in said[3] and "stdin:3" in said[3]
    assert " stdin," not in err and " stdin:" not in err.replace("stdin:3", "") and " of - " not in err
    feed_stdin(monkeypatch, b'{"turns": ["a", "b"]}\n')
    code, _, err = run_cli(capsys, "evaluate", "--model", str(tiny_detector_dir), "--data", "-", "--no-progress")
    assert code == 2
    assert err.startswith("dialcheck: error: <stdin>: no labelled dialogue to evaluate on (first: line 1:")


def test_evaluate_limit_counts_only_the_bad_records_read_for_it(tmp_path, capsys, tiny_detector_dir):
    # the table said "bad records skipped | 2" beside "dialogues | 2", line 4 counted though never reached
    logs = tmp_path / "l.jsonl"
    logs.write_text("\n".join([json.dumps(GOOD), "bad", json.dumps(GOOD), "bad", json.dumps(GOOD)]) + "\n")
    js = tmp_path / "r.json"
    code, out, err = run_cli(
        capsys, "evaluate", "--model", str(tiny_detector_dir), "--data", str(logs), "--limit", "2",
        "--json", str(js), "--no-progress",
    )  # fmt: skip
    assert code == 0 and "| l: dialogues | 2 |" in out and "| l: bad records skipped | 1 |" in out
    assert json.loads(js.read_text())["l/skipped"] == 1
    assert "line 2:" in err and "line 4" not in err
    assert f"{logs}: skipped 1 of 3 records (named above); split l holds the other 2 (--limit 2: read no" in err


def test_evaluate_warns_once_of_evidence_naming_another_speakers_turn(tmp_path, capsys, tiny_detector_dir):
    # accepted silently, though the utterance-based detector never pairs turn 1 ("Nice!", B's) with A's last
    # turn: strict accuracy counted those records wrong and evidence F1 was 0 on them
    other = {**GOOD, "evidence": [1]}
    logs = tmp_path / "ev.jsonl"
    logs.write_text("\n".join(json.dumps(r) for r in [other, {**GOOD, "evidence": [0]}, other, other, other]) + "\n")
    code, _, err = run_cli(capsys, "evaluate", "--model", str(tiny_detector_dir), "--data", str(logs), "--no-progress")
    assert code == 0 and err.count("warning") == 1
    assert (
        f"dialcheck: warning: {logs}: 4 of 5 contradictions (line 1, line 3, line 4, line 5) name as evidence a turn "
        "of another speaker than the last turn's: an utterance-based detector pairs the last turn only with its "
        "speaker's own earlier turns" in err
    )
    assert "an unstructured detector may name any turn" in err
    # a multi-line JSON list names the dialogue; evidence of the last speaker's own turns gets no warning
    notes: list[str] = []
    doc = tmp_path / "ev.json"
    doc.write_text(json.dumps([{**GOOD, "evidence": [0]}, other], indent=2))
    examples, errors = read_examples(doc, notes=notes)
    assert len(examples) == 2 and not errors
    assert len(notes) == 1 and notes[0].startswith(f"{doc}: the contradiction of dialogue 2 names as evidence")
    notes.clear()
    read_examples(logs, notes=notes, limit=2)  # the warning covers only what --limit read
    assert len(notes) == 1 and "the contradiction of line 1 names" in notes[0]
