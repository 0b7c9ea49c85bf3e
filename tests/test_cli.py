import json
import logging

import numpy as np
import pytest

from helpers_chat import CHAT, TOOL_CALL
from helpers_cli import feed_stdin
from helpers_cli import run_cli as _run
from helpers_interrupt import kill_on_call

CONTRA = {
    "id": "c1",
    "turns": ["I have two dogs.", "What breed?", "Labradors.", "Cute!", "I never had dogs."],
}


@pytest.fixture
def dialogs(tmp_path):
    p = tmp_path / "in.json"
    p.write_text(json.dumps([CONTRA, ["Hi.", "Hello!"], ["Only one turn."]]))
    return p


def test_check_json_gives_one_object_per_dialogue_in_order(capsys, dialogs, tiny_detector_dir):
    code, out, _ = _run(capsys, "check", str(dialogs), "--json", "--model", str(tiny_detector_dir))
    assert code == 0
    rows = [json.loads(line) for line in out.splitlines()]
    assert len(rows) == 3
    assert rows[0]["id"] == "c1"
    for r in rows:
        assert isinstance(r["contradiction"], bool) and 0.0 <= r["score"] <= 1.0
        assert isinstance(r["evidence"], list) and "category" in r
    assert rows[2]["score"] == 0.0 and rows[2]["contradiction"] is False


def test_check_threshold_zero_flags_and_names_evidence(capsys, dialogs, tiny_detector_dir):
    code, out, _ = _run(capsys, "check", str(dialogs), "--model", str(tiny_detector_dir), "--tau", "0", "--eta-e", "0")
    assert code == 0
    assert "c1: CONTRADICTION" in out
    assert 'contradicts [0] A: "I have two dogs."' in out and 'contradicts [2] A: "Labradors."' in out
    assert "a single turn has nothing earlier to contradict" in out


def test_check_reads_stdin(capsys, monkeypatch, tiny_detector_dir):
    feed_stdin(monkeypatch, json.dumps(CONTRA), buffer=False)
    code, out, _ = _run(capsys, "check", "-", "--json", "--model", str(tiny_detector_dir))
    assert code == 0 and len(out.splitlines()) == 1


def test_check_reads_chat_completion_messages_and_names_evidence_by_message_index(
    capsys, monkeypatch, tiny_detector_dir
):
    msgs = [{"role": "system", "content": "You are a pet-loving assistant."}, *CHAT[:4]]  # ends with the assistant
    feed_stdin(monkeypatch, json.dumps({"id": "m1", "messages": msgs}), buffer=False)
    code, out, _ = _run(capsys, "check", "-", "--json", "--model", str(tiny_detector_dir), "--tau", "0", "--eta-e", "0")
    row = json.loads(out)
    assert code == 0 and row["id"] == "m1" and row["contradiction"]
    assert row["evidence"] == [2]  # the earlier assistant message, counted in `messages` (the system one included)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"turns": []}', "turns: the dialogue is empty"),
        (
            '["a", "b"]\n{"turns": [{"speaker": "A", "text": 1}]}\n',
            "line 2: turns[0].text: expected a string, got int",
        ),
        ("{not json", "invalid JSON"),
        ('["Hi", 5]', "line 1: turns[1]: expected an object"),  # the bad turn, not "item 0"
        ('["Hi", "caf\\udce9"]', "line 1: turns[1]: not valid Unicode text"),  # a lone surrogate, no traceback
    ],
)
def test_check_bad_input_exits_2_with_a_located_message(capsys, tmp_path, tiny_detector_dir, content, message):
    p = tmp_path / "bad.jsonl"
    p.write_text(content)
    code, out, err = _run(capsys, "check", str(p), "--model", str(tiny_detector_dir))
    assert code == 2 and out == ""
    assert message in err and str(p) in err and "Traceback" not in err


def test_check_names_every_bad_dialogue_in_input_order_and_checks_none(capsys, tmp_path, tiny_detector_dir):
    p = tmp_path / "logs.jsonl"
    lines = [
        json.dumps({"turns": ["Hi", 5]}),  # line 1: bad field
        json.dumps(CONTRA),  # line 2: good
        "{not json",  # line 3: invalid JSON
        json.dumps({"id": "d4", "turns": [{"speaker": "user", "text": "Hi"}, {"speaker": "bot", "text": "Yo"}]}),
    ]
    p.write_text("\n".join(lines) + "\n")
    # line 4 has no turn by "A": a problem found after parsing, still named in its place
    code, out, err = _run(capsys, "check", str(p), "--model", str(tiny_detector_dir), "--speaker", "A")
    assert code == 2 and out == "" and "Traceback" not in err
    named = [ln for ln in err.splitlines() if ln.startswith("dialcheck: error:")]
    assert [f"line {n}:" in ln for n, ln in zip((1, 3, 4), named, strict=False)] == [True, True, True]
    assert "d4: speaker: no turn with text by A" in named[2]
    assert "3 of 4 dialogues are bad" in named[3] and "nothing was checked" in named[3]
    assert len(named) == 4


def test_check_names_standard_input_one_way_in_every_error(capsys, monkeypatch, tiny_detector_dir):
    """`check -` named the input "<stdin>" in a record's parse error and "-" in an error found after parsing (a
    "speaker" that names no one), so one run said `<stdin>, line 1: ...` and `-, line 2: dialogue 2: ...`."""
    lines = [json.dumps({"turns": ["Hi", 5]}), json.dumps({"id": "d2", "turns": ["Hi", "Yo"], "speaker": "Z"})]
    feed_stdin(monkeypatch, "\n".join(lines) + "\n", buffer=False)
    code, _, err = _run(capsys, "check", "-", "--model", str(tiny_detector_dir))
    named = [ln for ln in err.splitlines() if ln.startswith("dialcheck: error:")]
    assert code == 2 and len(named) == 3 and "-, line" not in err
    assert named[0].startswith("dialcheck: error: <stdin>, line 1: turns[1]")
    assert named[1].startswith("dialcheck: error: <stdin>, line 2: d2: speaker: no turn with text by Z")
    assert named[2].startswith("dialcheck: error: <stdin>: 2 of 2 dialogues are bad")


@pytest.mark.parametrize("command", [("check",), ("score", "out.jsonl"), ("rerank",)])
def test_a_directory_as_input_is_named_as_one(capsys, tmp_path, tiny_detector_dir, command):
    folder = tmp_path / "logs"
    folder.mkdir()
    argv = [command[0], str(folder), *(str(tmp_path / a) for a in command[1:]), "--model", str(tiny_detector_dir)]
    code, _, err = _run(capsys, *argv)
    assert code == 2 and f"{folder}: is a directory, expected a file" in err and "no such file" not in err


@pytest.mark.parametrize("command", [("check",), ("score", "out.jsonl"), ("rerank",)])
@pytest.mark.parametrize("name", ["", " "])
def test_an_empty_speaker_option_is_refused_as_the_option(capsys, tmp_path, command, name):
    # it was blamed on each record's own field ("line 1: dialogue 1: speaker[0]: empty"), read as a type error
    # ("speaker: ... got string"), or score ran and counted a dialogue "with no turn by  to check"
    p = tmp_path / "in.jsonl"
    p.write_text(json.dumps({"turns": ["Hi.", "Hello!"], "candidates": ["Hey."]}) + "\n")
    argv = [command[0], str(p), *(str(tmp_path / a) for a in command[1:]), "--speaker", name]
    with pytest.raises(SystemExit) as e:
        _run(capsys, *argv, "--model", str(tmp_path / "no-model"))
    err = capsys.readouterr().err
    said = f"{name!r} is blank" if name else "empty"  # as a record's own speaker is worded (io.blank_speaker)
    assert e.value.code == 2 and f"argument --speaker: {said} (name a speaker" in err and "got string" not in err
    assert "line 1" not in err and not (tmp_path / "out.jsonl").exists()


def test_a_dialogues_own_empty_speaker_is_still_named_as_its_field(capsys, tmp_path, tiny_detector_dir):
    p = tmp_path / "in.jsonl"
    p.write_text(json.dumps({"turns": ["Hi.", "Hello!"], "speaker": ""}) + "\n")
    code, _, err = _run(capsys, "check", str(p), "--model", str(tiny_detector_dir), "--speaker", "A")
    assert code == 2 and "line 1: speaker: empty (name the speaker whose turn is checked)" in err
    assert "--speaker" not in err


@pytest.mark.parametrize("option", ["OUTPUT", "--errors"])
def test_score_refuses_an_output_in_a_missing_folder_before_the_model_loads(capsys, tmp_path, dialogs, option):
    # the output was opened once the model had loaded: "dialcheck: error: nope/out.jsonl: No such file or directory"
    target = tmp_path / "nope" / "out.jsonl"
    out, extra = (str(target), []) if option == "OUTPUT" else (str(tmp_path / "o.jsonl"), ["--errors", str(target)])
    code, _, err = _run(capsys, "score", str(dialogs), out, *extra, "--model", str(tmp_path / "no-model"))
    assert code == 2 and f"{target}: {option}: the folder {target.parent} does not exist" in err
    assert "no-model" not in err and not (tmp_path / "o.jsonl").exists()
    code, _, err = _run(capsys, "score", str(dialogs), str(tmp_path), "--model", str(tmp_path / "no-model"))
    assert code == 2 and "OUTPUT: is a folder; give a file name" in err


def test_check_unknown_model_exits_2(capsys, dialogs, tmp_path):
    code, _, err = _run(capsys, "check", str(dialogs), "--model", str(tmp_path / "nope"))
    assert code == 2 and "does not exist" in err


@pytest.mark.parametrize(
    "config, message",
    [
        ("{bad", "dialcheck.json: cannot read the detector config"),
        ('{"format_version": 99, "detector": "decode.utterance.v1"}', "format_version 99 is newer than this dialcheck"),
        ('{"format_version": 1}', "'detector' (the registered detector type) is missing"),
        ('["decode.utterance.v1"]', "dialcheck.json: expected a JSON object (the detector config), got list"),
        (
            '{"detector": "decode.utterance.v1", "thresholds": {"tau": 7}}',
            "dialcheck.json: thresholds.tau: expected a number in [0, 1], got 7",
        ),
        (
            '{"detector": "decode.utterance.v1", "thresholds": {"tau": 0.5, "eta_e": "x"}}',
            "dialcheck.json: thresholds.eta_e: expected a number in [0, 1], got string",
        ),
        (
            '{"detector": "cascade.v1", "thresholds": {"tau": 0.5, "recheck_low": -1, "recheck_high": 1}}',
            "dialcheck.json: thresholds.recheck_low: expected a number in [0, 1], got -1",
        ),
        (  # loads, then fails at the first pair longer than the base's 512 positions: refused at load instead
            '{"detector": "decode.utterance.v1", "max_length": 4096}',
            "dialcheck.json: max_length 4096 is more than the 512 tokens its base all-MiniLM-L6-v2 reads at once",
        ),
    ],
)
def test_check_a_broken_model_folder_exits_2_naming_its_config(capsys, dialogs, tmp_path, config, message):
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "dialcheck.json").write_text(config)
    code, out, err = _run(capsys, "check", str(dialogs), "--model", str(folder))
    assert code == 2 and message in err and str(folder) in err
    assert out == "" and "Traceback" not in err


def test_threads_option_sets_torch_threads_and_rejects_negatives(capsys, dialogs, tiny_detector_dir):
    import torch

    before = torch.get_num_threads()
    n = 1 if before != 1 else 2  # a count that differs from the current one, so the test can fail
    try:
        code, out, _ = _run(
            capsys, "check", str(dialogs), "--json", "--model", str(tiny_detector_dir), "--threads", str(n)
        )
        assert code == 0 and out.strip() and torch.get_num_threads() == n
    finally:
        torch.set_num_threads(before)
    with pytest.raises(SystemExit) as e:  # refused when the command line is read, before the model loads
        _run(capsys, "check", str(dialogs), "--model", str(tiny_detector_dir), "--threads", "-1")
    err = capsys.readouterr().err
    assert e.value.code == 2 and "argument --threads: must be 0 or more, got -1" in err and "Traceback" not in err


def _log(tmp_path, n_good=7, bad_lines=(3,)):
    lines = []
    for i in range(1, n_good + len(bad_lines) + 1):
        lines.append(
            '{"id": "b", "turns": "oops"}'
            if i in bad_lines
            else json.dumps({"id": f"d{i}", "turns": ["I like tea.", "Me too.", f"I drink tea {i}."]})
        )
    p = tmp_path / "log.jsonl"
    p.write_text("\n".join(lines) + "\n")
    return p


def test_score_skips_bad_lines_and_reports_them(capsys, tmp_path, tiny_detector_dir):
    log = _log(tmp_path)
    out = tmp_path / "out.jsonl"
    errors = tmp_path / "errors.jsonl"
    code, _, err = _run(
        capsys,
        "score",
        str(log),
        str(out),
        "--model",
        str(tiny_detector_dir),
        "--no-progress",
        "--errors",
        str(errors),
        "--chunk-size",
        "2",
    )
    assert code == 0
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["line"] for r in rows] == [1, 2, 4, 5, 6, 7, 8]
    assert f"{log}, line 3: turns: expected a list, got string" in err
    assert json.loads(errors.read_text())["line"] == 3


def test_score_refuses_to_overwrite_without_a_flag(capsys, tmp_path, tiny_detector_dir):
    log = _log(tmp_path)
    out = tmp_path / "out.jsonl"
    out.write_text("")
    code, _, err = _run(capsys, "score", str(log), str(out), "--model", str(tiny_detector_dir))
    assert code == 2 and "--resume" in err


def test_score_resume_neither_duplicates_nor_loses_records(capsys, tmp_path, tiny_detector_dir):
    log = _log(tmp_path, n_good=9, bad_lines=(4,))
    full = tmp_path / "full.jsonl"
    _run(capsys, "score", str(log), str(full), "--model", str(tiny_detector_dir), "--no-progress")
    expected = full.read_text().splitlines()
    # Simulate an interruption: three finished records and a torn fourth one.
    part = tmp_path / "part.jsonl"
    part.write_text("\n".join(expected[:3]) + "\n" + expected[3][:20])
    code, _, err = _run(
        capsys, "score", str(log), str(part), "--model", str(tiny_detector_dir), "--no-progress", "--resume"
    )
    assert code == 0
    assert part.read_text().splitlines() == expected
    assert "already done" in err


def test_score_resume_refuses_a_file_it_did_not_write_and_leaves_it_alone(capsys, tmp_path, tiny_detector_dir):
    log = _log(tmp_path, n_good=3, bad_lines=())
    other = tmp_path / "notes.jsonl"
    text = json.dumps({"line": 1, "contradiction": False}) + "\n" + json.dumps({"note": "mine"}) + "\n"
    other.write_text(text)
    code, _, err = _run(
        capsys, "score", str(log), str(other), "--model", str(tiny_detector_dir), "--no-progress", "--resume"
    )
    assert code == 2
    assert "notes.jsonl, line 2: cannot resume: not a dialcheck score output line" in err
    assert other.read_text() == text  # nothing truncated


def test_score_every_turn_checks_each_prefix(capsys, tmp_path, tiny_detector_dir):
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"turns": ["a", "b", "c", "d"]}) + "\n")
    out = tmp_path / "out.jsonl"
    _run(
        capsys,
        "score",
        str(log),
        str(out),
        "--model",
        str(tiny_detector_dir),
        "--no-progress",
        "--every-turn",
    )
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["turn"] for r in rows] == [1, 2, 3]


def test_score_speaker_checks_only_that_speakers_turns(capsys, tmp_path, tiny_detector_dir):
    log = tmp_path / "log.jsonl"
    lines = [{"id": "a", "messages": CHAT}, {"id": "b", "messages": CHAT[:1]}, {"id": "c", "messages": CHAT[:4]}]
    log.write_text("".join(json.dumps(x) + "\n" for x in lines))
    base = ["score", str(log), "--model", str(tiny_detector_dir), "--no-progress", "--speaker", "assistant"]
    out = tmp_path / "every.jsonl"
    code, _, err = _run(capsys, *base[:2], str(out), *base[2:], "--every-turn")
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert code == 0 and [(r["id"], r["turn"]) for r in rows] == [("a", 1), ("a", 3), ("c", 1), ("c", 3)]
    assert "1 with no turn by assistant to check" in err
    out = tmp_path / "last.jsonl"
    code, _, err = _run(capsys, *base[:2], str(out), *base[2:])
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert code == 0 and [(r["id"], r["turn"]) for r in rows] == [("a", 3), ("c", 3)]  # not the user's last turn
    assert "end with the user's turn" not in err
    code, _, err = _run(capsys, *base[:2], str(tmp_path / "plain.jsonl"), *base[2:-2])  # no --speaker
    assert code == 0 and "note: 1 of them ends with the user's turn" in err  # a; b has no assistant; c ends with it


def test_check_speaker_checks_that_speakers_last_turn(capsys, tmp_path, tiny_detector_dir):
    p = tmp_path / "chat.json"
    p.write_text(json.dumps({"id": "a", "messages": CHAT}))
    args = ["check", str(p), "--model", str(tiny_detector_dir), "--tau", "0", "--eta-e", "0", "--speaker", "assistant"]
    code, out, _ = _run(capsys, *args, "--json")
    row = json.loads(out)
    assert code == 0 and row["turn"] == 3 and row["evidence"] == [1]
    code, out, _ = _run(capsys, *args)
    assert code == 0 and 'last turn [3] assistant: "I never had dogs."' in out
    code, _, err = _run(capsys, *args[:-1], "bot")
    assert code == 2 and "a: speaker: no turn with text by bot (its speakers: assistant, user)" in err
    code, _, err = _run(capsys, *args[:-2])  # no --speaker: the user's last turn is checked, and a note says so
    assert code == 0 and "a: the last turn is the user's; --speaker assistant checks" in err
    assert "last turn is the user's" not in _run(capsys, *args)[2]


def test_evaluate_writes_json_and_markdown(capsys, tmp_path, tiny_detector_dir, data_root):
    js, md = tmp_path / "r.json", tmp_path / "r.md"
    code, out, _ = _run(
        capsys,
        "evaluate",
        "--model",
        str(tiny_detector_dir),
        "--splits",
        "dev,rct,human_bot_raw",
        "--limit",
        "20",
        "--data-dir",
        str(data_root),
        "--json",
        str(js),
        "--markdown",
        str(md),
        "--no-progress",
    )
    assert code == 0
    res = json.loads(js.read_text())
    for key in (
        "dev/accuracy",
        "dev/strict_accuracy",
        "dev/evidence_f1",
        "rct/accuracy",
        "human_bot_raw/roc_auc",
    ):
        assert key in res
    # human_bot (the benchmark's primary split) was not evaluated: the same metric of the first split that was
    assert res["primary_metric"] == "dev/accuracy"
    assert "| Dev (rebuilt) accuracy" in md.read_text() and "93.19" in out


LABELLED_LINES = [
    json.dumps(
        {
            "id": "p1",
            "turns": ["I have two dogs.", "Nice!", "I never had dogs."],
            "contradiction": True,
            "evidence": [0],
        }
    ),
    json.dumps({"turns": ["I like jazz.", "Me too.", "Miles Davis is my hero."], "contradiction": False}),
    "not json",
    json.dumps({"turns": ["I live in Paris.", "Nice!", "I live in Rome."], "contradiction": True}),
]


def test_evaluate_on_your_own_labelled_dialogues(capsys, tmp_path, tiny_detector_dir):
    logs = tmp_path / "mylogs.jsonl"
    logs.write_text("\n".join(LABELLED_LINES) + "\n")
    js, preds = tmp_path / "r.json", tmp_path / "p.jsonl"
    code, out, err = _run(
        capsys, "evaluate", "--model", str(tiny_detector_dir), "--data", str(logs), "--tau", "0",
        "--json", str(js), "--predictions", str(preds), "--no-progress",
    )  # fmt: skip
    assert code == 0, err
    res = json.loads(js.read_text())
    assert not any(k.startswith(("dev/", "human_bot/")) for k in res)  # only the file, no DECODE split
    assert res["mylogs/n"] == 3 and res["mylogs/skipped"] == 1 and res["primary_metric"] == "mylogs/accuracy"
    # tau 0 flags all three: two of three right; the annotated contradiction's only pair is its evidence
    assert res["mylogs/accuracy"] == pytest.approx(200 / 3, abs=0.01) and res["mylogs/recall"] == 100.0
    assert res["mylogs/strict_accuracy"] == 50.0 and res["mylogs/n_without_evidence"] == 1
    assert "mylogs, line 3" not in err and f"{logs}, line 3: invalid JSON" in err
    assert "| mylogs: accuracy | 66.67 |" in out
    ids = [json.loads(x)["id"] for x in preds.read_text().splitlines()]
    assert ids == ["p1", "mylogs.jsonl:2", "mylogs.jsonl:4"]


def test_rerank_json_names_a_json_documents_records_by_position_not_as_lines(capsys, tmp_path, tiny_detector_dir):
    # a JSON list's records were written with "line": 1, 2, ... (their positions), not the lines they start on
    recs = [
        {"turns": ["I have a dog.", "Nice."], "candidates": ["Yes."]},
        {"id": "x", "turns": ["Hi.", "Hello!"], "candidates": ["Hey."]},
    ]
    model = ["--model", str(tiny_detector_dir)]
    doc = tmp_path / "in.json"
    doc.write_text(json.dumps(recs, indent=2))
    code, out, _ = _run(capsys, "rerank", str(doc), "--json", *model)
    rows = [json.loads(x) for x in out.splitlines()]
    assert code == 0 and [(r["id"], r.get("record"), "line" in r) for r in rows] == [(None, 1, False), ("x", 2, False)]
    jsonl = tmp_path / "in.jsonl"
    jsonl.write_text(json.dumps(recs[0]) + "\n\n" + json.dumps(recs[1]) + "\n")
    code, out, _ = _run(capsys, "rerank", str(jsonl), "--json", *model)
    rows = [json.loads(x) for x in out.splitlines()]
    assert code == 0 and [(r["line"], "record" in r) for r in rows] == [(1, False), (3, False)]
    one = tmp_path / "one.json"
    one.write_text("\n" + json.dumps(recs[1]) + "\n")  # a lone record on one line: its line is known
    code, out, _ = _run(capsys, "rerank", str(one), "--json", *model)
    assert code == 0 and json.loads(out)["line"] == 2 and "record" not in json.loads(out)


def test_gzipped_logs_are_read_by_check_score_evaluate_and_rerank(capsys, tmp_path, tiny_detector_dir):
    import gzip

    model = ["--model", str(tiny_detector_dir)]
    logs = tmp_path / "mylogs.jsonl.gz"
    with gzip.open(logs, "wt", encoding="utf-8") as f:
        f.write("\n".join(LABELLED_LINES) + "\n")
    code, out, err = _run(capsys, "check", str(logs), "--json", *model)
    assert code == 2 and f"{logs}, line 3: invalid JSON" in err  # check is all-or-nothing, lines counted
    code, _, err = _run(capsys, "score", str(logs), str(tmp_path / "v.jsonl"), *model)  # with the progress bar
    assert code == 0 and "scored 3 dialogues, skipped 1 bad line" in err
    code, out, err = _run(capsys, "evaluate", *model, "--data", str(logs), "--tau", "0", "--no-progress")
    assert code == 0 and "| mylogs: accuracy | 66.67 |" in out
    ranked = tmp_path / "rank.jsonl.gz"
    with gzip.open(ranked, "wt", encoding="utf-8") as f:
        f.write(json.dumps({"id": "r", "turns": ["Hi.", "I have a dog."], "candidates": ["Yes.", "No."]}) + "\n")
    code, out, _ = _run(capsys, "rerank", str(ranked), "--json", *model)
    assert code == 0 and json.loads(out)["id"] == "r"


def test_a_damaged_gzip_is_an_input_error_after_its_good_lines(capsys, tmp_path, tiny_detector_dir):
    import gzip

    good = json.dumps(["I like tea.", "Me too.", "I never drink tea."]) + "\n"
    lines = [json.dumps(["I like tea.", "Me too.", f"I drink {i * 7919 % 10007} cups."]) for i in range(3000)]
    whole = gzip.compress("\n".join(lines).encode())  # varied, so that half the file holds many lines
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(whole[: len(whole) // 2])  # a copy interrupted half way
    out = tmp_path / "v.jsonl"
    code, _, err = _run(capsys, "score", str(cut), str(out), "--model", str(tiny_detector_dir))  # with its bar
    assert code == 2 and f"{cut}, line" in err and "cannot decompress the file after line" in err
    assert "Traceback" not in err
    n_read = int(err.split("after line ")[1].split(" ")[0])
    assert n_read > 300 and len(out.read_text().splitlines()) == n_read  # every line read before it, kept
    notgz = tmp_path / "plain.jsonl.gz"
    notgz.write_text(good)
    code, _, err = _run(capsys, "check", str(notgz), "--model", str(tiny_detector_dir))
    assert code == 2 and f"{notgz}, line 1: cannot decompress the file after line 0" in err


def test_evaluate_data_skips_a_line_that_is_not_utf8_and_evaluates_the_others(capsys, tmp_path, tiny_detector_dir):
    logs = tmp_path / "latin1.jsonl"
    lines = [x.encode() for x in LABELLED_LINES[:2]]
    logs.write_bytes(lines[0] + b'\n{"turns": ["caf\xe9", "x"], "contradiction": false}\n' + lines[1] + b"\n")
    js = tmp_path / "r.json"
    code, _, err = _run(
        capsys, "evaluate", "--model", str(tiny_detector_dir), "--data", str(logs), "--json", str(js),
        "--no-progress", "--threads", "1",
    )  # fmt: skip
    assert code == 0, err
    assert f"{logs}, line 2: not UTF-8 text: byte 0xe9" in err and "Traceback" not in err
    res = json.loads(js.read_text())
    assert res["latin1/n"] == 2 and res["latin1/skipped"] == 1


def test_a_bad_id_is_a_bad_record_for_check_and_score(capsys, tmp_path, tiny_detector_dir):
    log = tmp_path / "ids.jsonl"
    rows = [{"id": "d1", "turns": ["a", "b"]}, {"id": 2.5, "turns": ["a", "b"]}, {"id": 3, "turns": ["a", "b"]}]
    log.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    model = ["--model", str(tiny_detector_dir), "--threads", "1"]
    code, out, err = _run(capsys, "check", str(log), *model)
    assert code == 2 and out == ""
    assert f"{log}, line 2: id: expected a string or a whole number, got float" in err
    out_path = tmp_path / "v.jsonl"
    code, _, err = _run(capsys, "score", str(log), str(out_path), *model, "--no-progress")
    assert code == 0 and f"{log}, line 2: id: expected a string or a whole number, got float" in err
    assert [json.loads(x)["id"] for x in out_path.read_text().splitlines()] == ["d1", "3"]


def test_check_with_a_model_name_nothing_answers_to_says_so(capsys, dialogs, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = _run(capsys, "check", str(dialogs), "--model", "nope-model", "--threads", "1")
    assert code == 2 and out == "" and "Traceback" not in err
    assert f"model folder {tmp_path / 'nope-model'} does not exist" in err
    assert "no shipped model is named 'nope-model'" in err and "dialcheck models" in err
    code, _, err = _run(capsys, "check", str(dialogs), "--model", str(tmp_path / "x" / "nope"), "--threads", "1")
    assert code == 2 and "does not exist" in err and "dialcheck models" in err


def test_evaluate_data_where_every_record_is_bad_names_each_one_then_refuses(capsys, tmp_path, tiny_detector_dir):
    bad = tmp_path / "bad.jsonl"
    records = [
        {"turns": ["a", "b"]},  # line 1
        {"turns": ["a", "b"], "contradiction": "yes"},  # line 2
        {"turns": [{"speaker": "A", "text": 3}], "contradiction": False},  # line 4 (line 3 is blank)
    ]
    bad.write_text(json.dumps(records[0]) + "\n" + json.dumps(records[1]) + "\n\n" + json.dumps(records[2]) + "\n")
    code, out, err = _run(capsys, "evaluate", "--model", str(tiny_detector_dir), "--data", str(bad), "--threads", "1")
    assert code == 2 and out == "" and "Traceback" not in err
    assert err.count("dialcheck: error:") == 1 and err.splitlines()[-4:] == [
        f"dialcheck: error: {bad}: no labelled dialogue to evaluate on: all 3 records are bad:",
        "  line 1: contradiction: missing (true or false)",
        "  line 2: contradiction: expected true or false, got string",
        "  line 4: turns[0].text: expected a string, got int",
    ]


def test_evaluate_update_card_refuses_limit_before_any_model_runs(capsys, tmp_path, tiny_detector_dir):
    before = (tiny_detector_dir / "dialcheck.json").read_text()
    missing = tmp_path / "no-data-here"  # reading the corpus would fail with another message
    code, _, err = _run(
        capsys, "evaluate", "--model", str(tiny_detector_dir), "--limit", "2", "--update-card",
        "--data-dir", str(missing), "--no-progress",
    )  # fmt: skip
    assert code == 2 and "leave out --limit" in err
    assert (tiny_detector_dir / "dialcheck.json").read_text() == before


@pytest.mark.parametrize("option", ["--predictions", "--json", "--markdown"])
def test_evaluate_refuses_an_output_that_is_its_data_file(capsys, tmp_path, tiny_detector_dir, option):
    logs = tmp_path / "mylogs.jsonl"
    logs.write_text("\n".join(LABELLED_LINES) + "\n")
    before = logs.read_text()
    link = tmp_path / "link.jsonl"
    link.symlink_to(logs)
    for target in (logs, link):
        code, out, err = _run(
            capsys, "evaluate", "--model", str(tiny_detector_dir), "--data", str(logs), option, str(target),
            "--no-progress",
        )  # fmt: skip
        assert code == 2 and f"{option} is the --data input" in err and out == ""
        assert logs.read_text() == before


@pytest.mark.parametrize("option", ["--predictions", "--json", "--markdown"])
def test_evaluate_checks_every_output_path_before_any_work(capsys, tmp_path, tiny_detector_dir, option):
    logs = tmp_path / "mylogs.jsonl"
    logs.write_text("\n".join(LABELLED_LINES) + "\n")
    folder = tmp_path / "results"
    folder.mkdir()
    for target, message in ((folder, "is a folder"), (tmp_path / "nope" / "r.out", "does not exist")):
        code, out, err = _run(
            capsys, "evaluate", "--model", str(tiny_detector_dir), "--data", str(logs), option, str(target),
            "--no-progress",
        )  # fmt: skip
        assert code == 2 and f"{option}: " in err and message in err and "Traceback" not in err
        assert out == ""  # refused before the evaluation ran: no table


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--lr", "-1"),
        ("--lr", "0"),
        ("--lr", "nan"),
        ("--epochs", "nan"),
        ("--epochs", "inf"),
        ("--epochs", "-1"),
        ("--limit", "0"),
        ("--limit", "-5"),
        ("--validation-fraction", "1.5"),
        ("--validation-fraction", "0"),
        ("--validation-fraction", "1"),
        ("--distill-alpha", "5"),
        ("--max-length", "0"),
        ("--max-length", "-5"),
        ("--max-length", "8"),
        ("--lora", "-4"),
        ("--patience", "0"),
        ("--eval-every", "-1"),
        ("--seed", "-1"),
        ("--shuffle-seed", "-2"),
        ("--lora-top", "-1"),
        ("--lexical-ngrams", "0"),
        ("--tau-pairs", "nan"),
        ("--tau-pairs", "-0.5"),
        ("--veto-below", "2"),
        ("--threads", "-1"),
        ("--rank", "0"),
        ("--rank", "-2"),
        ("--dialogues-repeat", "0"),
        ("--context-rate", "0"),
        ("--context-rate", "1.5"),
        ("--context-rate", "nan"),
        ("--max-disagreement", "1"),
        ("--max-disagreement", "-0.1"),
        ("--max-disagreement", "nan"),
    ],
)
def test_train_refuses_bad_numbers_when_the_command_line_is_read(capsys, tmp_path, option, value):
    missing = tmp_path / "no-data-here"  # reading data would fail with another message
    with pytest.raises(SystemExit) as e:
        _run(capsys, "train", "--out", str(tmp_path / "o"), "--data-dir", str(missing), option, value)
    err = capsys.readouterr().err
    assert e.value.code == 2 and f"argument {option}" in err and "Traceback" not in err


def test_train_refuses_a_window_longer_than_the_base_reads_before_any_data(capsys, tmp_path, tiny_base):
    missing = tmp_path / "no-data-here"  # reading data would fail with another message
    args = ["train", "--out", str(tmp_path / "o"), "--base", str(tiny_base), "--data-dir", str(missing)]
    code, _, err = _run(capsys, *args, "--max-length", "1024")
    assert code == 2 and f"--max-length 1024: the base {tiny_base} reads at most 512 tokens" in err
    assert "Traceback" not in err and not (tmp_path / "o").exists()
    code, _, err = _run(capsys, *args, "--max-length", "512")  # the whole window: on to the (missing) data
    assert code == 2 and "--max-length" not in err


@pytest.mark.parametrize(
    "argv",
    [
        ["nbest", "--out", "o", "--per-kind", "-1"],
        ["nbest", "--out", "o", "--max-premise-words", "0"],
        ["nbest", "--out", "o", "--max-new-tokens", "0"],
        ["nbest", "--out", "o", "--batch-rows", "-4"],
        ["nbest", "--out", "o", "--diversity-penalty", "-0.5"],
        ["nbest", "--out", "o", "--seed", "-1"],
        ["probe", "echo", "--out", "o", "--per-kind", "-1"],
        ["probe", "echo", "--out", "o", "--max-premise-words", "0"],
        ["probe", "triggers", "--out", "o", "--limit", "-1"],
        ["rerank", "in.jsonl", "--max-new-tokens", "0"],
        ["check", "in.jsonl", "--tau", "7"],
        ["check", "in.jsonl", "--eta-e", "-0.1"],
        ["score", "in.jsonl", "o", "--tau", "nan"],
        ["models", "NAME", "--save", "o", "--tau", "1.5"],
        ["check", "in.jsonl", "--threads", "-1"],
        ["score", "in.jsonl", "o", "--threads", "-2"],
        ["evaluate", "--threads", "-1"],
        ["rerank", "in.jsonl", "--threads", "-1"],
        ["nbest", "--out", "o", "--threads", "-1"],
        ["models", "NAME", "--save", "o", "--threads", "-1"],
        ["serve", "--threads", "-1"],
        ["score", "in.jsonl", "o", "--chunk-size", "0"],
        ["score", "in.jsonl", "o", "--chunk-size", "-8"],
        ["serve", "--workers", "-1"],
        ["serve", "--max-dialogues", "0"],
        ["serve", "--max-chars", "0"],
        ["serve", "--max-chars", "-100"],
    ],
)
def test_nonsense_counts_and_thresholds_are_refused_when_the_command_line_is_read(capsys, tmp_path, argv):
    with pytest.raises(SystemExit) as e:  # argparse: usage and the option's error, before anything is read
        _run(capsys, *[str(tmp_path / a) if a in ("o", "in.jsonl") else a for a in argv])
    err = capsys.readouterr().err
    assert e.value.code == 2 and f"argument {argv[-2]}" in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("argv", "dest", "value"),
    [
        (["check", "in.jsonl", "--threads", "0"], "threads", 0),
        (["models", "NAME", "--save", "o", "--threads", "0"], "threads", 0),
        (["score", "in.jsonl", "o", "--chunk-size", "1"], "chunk_size", 1),
        (["serve", "--workers", "0"], "workers", 0),
        (["serve", "--max-dialogues", "1"], "max_dialogues", 1),
        (["serve", "--max-chars", "1"], "max_chars", 1),
        (["train", "--out", "o", "--rank", "1"], "rank", 1),
        (["train", "--out", "o", "--dialogues-repeat", "1", "--dialogues-repeat", "3"], "dialogues_repeat", [1, 3]),
        (["train", "--out", "o", "--context-rate", "1"], "context_rate", 1.0),
        (["train", "--out", "o", "--max-disagreement", "0"], "max_disagreement", 0.0),
    ],
)
def test_the_ends_of_the_ranges_checked_when_the_command_line_is_read_are_accepted(argv, dest, value):
    from dialcheck.cli import build_parser

    assert getattr(build_parser().parse_args(argv), dest) == value


@pytest.mark.parametrize("value", ["0", "-3"])
def test_evaluate_limit_must_be_at_least_one_as_in_train(capsys, tiny_detector_dir, value):
    with pytest.raises(SystemExit) as e:
        _run(capsys, "evaluate", "--model", str(tiny_detector_dir), "--limit", value)
    assert e.value.code == 2 and "argument --limit: must be at least 1" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("splits", "message"),
    [
        (",", "name at least one of decode: dev, human_bot"),
        (" , ", "name at least one of decode: dev"),
        ("", "name at least one of"),
        ("dev,tset", "unknown: tset (known: decode: dev, human_bot, rct, a2t, human_bot_raw; citod: calendar"),
    ],
)
def test_evaluate_refuses_an_empty_or_unknown_splits_selection_when_the_command_line_is_read(
    capsys, tmp_path, tiny_detector_dir, splits, message
):
    # --splits "," evaluated no split at all and printed an empty table with exit 0 (decode), or fell back to the
    # default splits (citod)
    js = tmp_path / "r.json"
    for benchmark in ("decode", "citod"):
        with pytest.raises(SystemExit) as e:
            _run(capsys, "evaluate", "--benchmark", benchmark, "--model", str(tiny_detector_dir), "--splits", splits,
                 "--json", str(js))  # fmt: skip
        err = capsys.readouterr().err
        assert e.value.code == 2 and f"argument --splits: {message}" in err and "Traceback" not in err
        assert not js.exists()


def test_evaluate_refuses_a_split_of_another_benchmark_before_any_work(capsys, tmp_path, tiny_detector_dir):
    js = tmp_path / "r.json"
    code, out, err = _run(
        capsys, "evaluate", "--benchmark", "citod", "--model", str(tiny_detector_dir), "--splits", "dev,weather",
        "--json", str(js), "--data-dir", str(tmp_path / "nowhere"),
    )  # fmt: skip
    assert code == 2 and out == "" and not js.exists()
    assert "--splits: dev is not a split of --benchmark citod (its splits: calendar, navigate, weather" in err
    code, _, err = _run(capsys, "evaluate", "--benchmark", "cdconv", "--splits", "human_bot,a2t,test")
    assert code == 2 and "--splits: human_bot, a2t are not splits of --benchmark cdconv" in err


def test_an_evaluator_refuses_to_evaluate_nothing():
    from dialcheck.evaluation.decode import DecodeEvaluator

    with pytest.raises(ValueError, match="no split to evaluate: name at least one of dev, human_bot"):
        DecodeEvaluator(splits=[])


def test_evaluate_data_errors(capsys, tmp_path, tiny_detector_dir):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"turns": ["a", "b"]}) + "\n")
    code, _, err = _run(capsys, "evaluate", "--model", str(tiny_detector_dir), "--data", str(bad))
    assert code == 2 and "no labelled dialogue to evaluate on" in err and "contradiction: missing" in err
    assert err.count(str(bad)) == 1  # the file is named once
    code, _, err = _run(capsys, "evaluate", "--benchmark", "citod", "--data", str(bad))
    assert code == 2 and "--data" in err and "decode or cdconv" in err
    zh = tmp_path / "zh.jsonl"  # the four-category benchmark needs each contradiction's category
    zh.write_text(json.dumps({"turns": ["你养猫吗？", "养了。", "几岁？", "没养猫。"], "contradiction": True}) + "\n")
    code, _, err = _run(capsys, "evaluate", "--benchmark", "cdconv", "--data", str(zh))
    assert code == 2 and "no labelled dialogue to evaluate on" in err and "line 1: category: missing" in err
    good = tmp_path / "good.jsonl"
    good.write_text(LABELLED_LINES[0] + "\n" + LABELLED_LINES[1] + "\n")
    before = (tiny_detector_dir / "dialcheck.json").read_text()
    code, _, err = _run(
        capsys, "evaluate", "--model", str(tiny_detector_dir), "--data", str(good), "--update-card", "--no-progress"
    )
    assert code == 2 and "leave out --data" in err and (tiny_detector_dir / "dialcheck.json").read_text() == before


def test_train_adds_pairs_from_your_own_labelled_dialogues(capsys, tmp_path, tiny_base, data_root):
    logs = tmp_path / "mylogs.jsonl"
    logs.write_text("\n".join(LABELLED_LINES) + "\n")
    out = tmp_path / "model"
    code, _, err = _run(
        capsys, "train", "--out", str(out), "--base", str(tiny_base), "--limit", "10", "--epochs", "1",
        "--lora", "4", "--data-dir", str(data_root), "--no-progress", "--batch-size", "16",
        "--dialogues", str(logs), "--dialogues-repeat", "3",
    )  # fmt: skip
    assert code == 0, err
    counts = json.loads((out / "dialcheck.json").read_text())["training"]["counts"]
    # the annotated contradiction gives one positive pair, the consistent dialogue one negative, x3 each
    assert counts["dialogues.positive"] == 3 and counts["dialogues.negative"] == 3
    assert counts["dialogues_skipped"] == 1
    assert "1 contradiction(s) name no evidence turns" in err and "line 3: invalid JSON" in err
    assert "labelled dialogues" in (out / "MODEL_CARD.md").read_text()


def test_train_weighs_each_dialogues_file_by_its_own_repeat(capsys, tmp_path, tiny_base, data_root):
    logs = tmp_path / "mylogs.jsonl"
    logs.write_text("\n".join(LABELLED_LINES) + "\n")
    out = tmp_path / "model"
    base = ["train", "--out", str(out), "--base", str(tiny_base), "--limit", "10", "--epochs", "1", "--lora", "4"]
    base += ["--data-dir", str(data_root), "--no-progress", "--batch-size", "16"]
    base += ["--dialogues", str(logs), "--dialogues-repeat", "3", "--dialogues", str(logs)]
    code, _, err = _run(capsys, *base, "--dialogues-repeat", "2", "--dialogues-repeat", "1")
    assert code == 2 and "--dialogues-repeat given 3 times for 2 --dialogues file(s)" in err
    code, _, err = _run(capsys, *base, "--dialogues-repeat", "1")
    assert code == 0, err
    counts = json.loads((out / "dialcheck.json").read_text())["training"]["counts"]
    assert counts["dialogues.positive"] == 3 + 1 and counts["dialogues.negative"] == 3 + 1
    data = json.loads((out / "dialcheck.json").read_text())["training"]["data"]
    assert data.endswith(f" + labelled dialogues {logs} x3 + labelled dialogues {logs}")


def test_train_can_take_the_init_detectors_top_pair_as_evidence(capsys, tmp_path, tiny_detector_dir, data_root):
    logs = tmp_path / "mylogs.jsonl"
    logs.write_text("\n".join(LABELLED_LINES) + "\n")
    out = tmp_path / "model"
    base = ["train", "--out", str(out), "--limit", "10", "--epochs", "1", "--data-dir", str(data_root)]
    base += ["--no-progress", "--batch-size", "16", "--dialogues", str(logs), "--unannotated", "top"]
    code, _, err = _run(capsys, *base)
    assert code == 2 and "--unannotated top needs --init" in err
    code, _, err = _run(capsys, *base, "--init", str(tiny_detector_dir))
    assert code == 0, err
    counts = json.loads((out / "dialcheck.json").read_text())["training"]["counts"]
    # "I live in Rome." has one earlier turn of its speaker: that pair becomes the second positive
    assert counts["dialogues.positive"] == 2 and counts["dialogues.negative"] == 1
    assert "evidence of 1 contradiction(s) taken from" in err and "name no evidence turns" not in err


def test_train_calibrates_tau_on_your_own_labelled_dialogues(capsys, tmp_path, tiny_detector_dir, data_root):
    logs = tmp_path / "mylogs.jsonl"
    logs.write_text("\n".join(LABELLED_LINES) + "\n")
    out = tmp_path / "model"
    base = ["train", "--init", str(tiny_detector_dir), "--epochs", "0", "--limit", "10", "--data-dir", str(data_root)]
    code, _, err = _run(capsys, *base, "--out", str(out), "--calibrate-on", str(logs), "--no-progress")
    assert code == 0, err
    cfg = json.loads((out / "dialcheck.json").read_text())
    assert cfg["training"]["validation_dialogues"] == 3 and "line 3: invalid JSON" in err
    assert cfg["training"]["calibration_file"] == str(logs)
    # tau separates the three dialogues as well as any threshold can, at one of their scores
    from dialcheck import load
    from dialcheck.io import read_examples

    examples, _ = read_examples(logs)
    scores = [v.score for v in load(str(tiny_detector_dir)).predict([e.dialogue for e in examples])]
    assert any(abs(cfg["thresholds"]["tau"] - s) < 1e-4 for s in scores)
    assert "val_evidence_f1" in cfg["metrics"]  # the first dialogue names its evidence turn
    assert f"labelled dialogues of `{logs}`" in (out / "MODEL_CARD.md").read_text()
    one_label = tmp_path / "neg.jsonl"
    one_label.write_text(LABELLED_LINES[1] + "\n")
    code, _, err = _run(capsys, *base, "--out", str(tmp_path / "m2"), "--calibrate-on", str(one_label))
    assert code == 2 and "needs dialogues of both labels" in err
    # labelled at the dialogue level only: tau is set, eta_e is kept as it was
    no_evidence = tmp_path / "noev.jsonl"
    no_evidence.write_text("\n".join(LABELLED_LINES[1:]) + "\n")
    code, _, err = _run(capsys, *base, "--out", str(tmp_path / "m3"), "--calibrate-on", str(no_evidence))
    assert code == 0, err
    cfg3 = json.loads((tmp_path / "m3" / "dialcheck.json").read_text())
    tiny_eta = json.loads((tiny_detector_dir / "dialcheck.json").read_text())["thresholds"]["eta_e"]
    assert cfg3["thresholds"]["eta_e"] == tiny_eta and "val_evidence_f1" not in cfg3["metrics"]


def test_data_verify_passes_on_the_shared_corpora(capsys, data_root):
    code, out, _ = _run(capsys, "data", "verify", "--data-dir", str(data_root))
    assert code == 0 and "ok  decode.dev.v1" in out


def test_train_cli_runs_a_tiny_job(capsys, tmp_path, tiny_base, data_root):
    out = tmp_path / "model"
    code, _, err = _run(
        capsys,
        "train",
        "--out",
        str(out),
        "--base",
        str(tiny_base),
        "--limit",
        "40",
        "--epochs",
        "1",
        "--lora",
        "4",
        "--data-dir",
        str(data_root),
        "--no-progress",
        "--batch-size",
        "16",
    )
    assert code == 0, err
    cfg = json.loads((out / "dialcheck.json").read_text())
    assert cfg["detector"] == "decode.utterance.v1" and cfg["training"]["counts"]["aug.random_premise"] > 0
    assert (out / "MODEL_CARD.md").exists() and "dialcheck train" in (out / "MODEL_CARD.md").read_text()
    assert not (out / "checkpoint").exists()  # only kept when a run is interrupted


def test_train_cli_resume_continues_an_interrupted_run(capsys, caplog, tmp_path, tiny_base, data_root, monkeypatch):
    from dialcheck.training import trainer

    out = tmp_path / "model"
    args = ["train", "--out", str(out), "--base", str(tiny_base), "--lora", "4", "--limit", "40", "--epochs", "1"]
    args += ["--batch-size", "16", "--eval-every", "2", "--data-dir", str(data_root), "--no-progress"]
    code, _, err = _run(capsys, *args, "--resume")
    assert code == 2 and "nothing to resume" in err
    with monkeypatch.context() as m:  # killed in the second validation
        kill_on_call(m, trainer, "calibrate", 2)
        code, _, err = _run(capsys, *args)
    assert code != 0 and (out / "resume" / trainer.STATE_FILE).exists()
    code, _, err = _run(capsys, *args)  # the same command again refuses to overwrite, and says what to do
    assert code == 2 and "--resume" in err
    with caplog.at_level(logging.INFO, logger="dialcheck"):
        code, _, err = _run(capsys, *args, "--resume")
    assert code == 0, err
    assert "resuming at step 2 " in caplog.text
    cfg = json.loads((out / "dialcheck.json").read_text())
    assert cfg["training"]["history"][0]["step"] == 2  # the validation before the interruption is kept
    assert not (out / "resume").exists() and not (out / "checkpoint").exists()
    assert "--resume" not in (out / "MODEL_CARD.md").read_text()  # the card records the run's own command


@pytest.mark.parametrize("kind", ["lora", "full"])
def test_train_cli_init_continues_from_a_saved_detector(capsys, tmp_path, tiny_base, data_root, kind):
    from dialcheck.detectors import load_detector
    from dialcheck.schema import Dialogue

    common = ["--limit", "30", "--epochs", "1", "--data-dir", str(data_root), "--no-progress", "--batch-size", "16"]
    first, second = tmp_path / "first", tmp_path / "second"
    adapter = ["--lora", "4"] if kind == "lora" else ["--full"]
    code, _, err = _run(capsys, "train", "--out", str(first), "--base", str(tiny_base), *adapter, *common)
    assert code == 0, err
    # lr ~0: continuing must leave the loaded weights (head included) as they are, so the scores match
    code, _, err = _run(capsys, "train", "--out", str(second), "--init", str(first), "--lr", "1e-12", *common)
    assert code == 0, err
    d = [Dialogue.from_texts(["i like tea", "ok", "i never drink tea"]), Dialogue.from_texts(["a b", "c", "d e f"])]
    s1 = [v.score for v in load_detector(first).predict(d)]
    s2 = [v.score for v in load_detector(second).predict(d)]
    assert s1 == pytest.approx(s2, abs=1e-5)
    cfg = json.loads((second / "dialcheck.json").read_text())
    assert cfg["training"]["init"]["folder"] == str(first)
    assert (cfg["adapter"] or {}).get("r") == (4 if kind == "lora" else None)
    card = (second / "MODEL_CARD.md").read_text()
    assert f"Continues `{first}`" in card and card.count("dialcheck train") >= 2  # the whole chain
    if kind == "lora":
        code, _, err = _run(capsys, "train", "--out", str(tmp_path / "x"), "--init", str(tmp_path), *common)
        assert code != 0 and "dialcheck.json" in err
        # --epochs 0 recalibrates only: the same weights, no training step, thresholds from validation
        recal = tmp_path / "recal"
        args = ["--limit", "30", "--data-dir", str(data_root), "--no-progress"]
        code, _, err = _run(capsys, "train", "--out", str(recal), "--init", str(first), "--epochs", "0", *args)
        assert code == 0, err
        assert [v.score for v in load_detector(recal).predict(d)] == pytest.approx(s1, abs=1e-6)
        t = json.loads((recal / "dialcheck.json").read_text())
        assert t["training"]["steps"] == 0 and 0 < t["thresholds"]["eta_e"] <= 0.95
        assert "Calibration only" in (recal / "MODEL_CARD.md").read_text()
        code, _, err = _run(capsys, "train", "--out", str(tmp_path / "y"), "--epochs", "0", *args)
        assert code == 2 and "--epochs" in err
        return
    # a real update moves the scores (the continued model is trainable); a new batch order, the same split
    third = tmp_path / "third"
    code, _, err = _run(
        capsys, "train", "--out", str(third), "--init", str(first), "--lr", "1e-2", "--shuffle-seed", "5", *common
    )
    assert code == 0, err
    assert [v.score for v in load_detector(third).predict(d)] != pytest.approx(s1, abs=1e-5)
    t3 = json.loads((third / "dialcheck.json").read_text())["training"]
    assert (t3["seed"], t3["split_seed"]) == (5, 0) and t3["counts"] == cfg["training"]["counts"]


def test_train_cli_warm_starts_the_unstructured_detector_from_an_utterance_detector(
    capsys, tmp_path, tiny_base, data_root
):
    from dialcheck.detectors import load_detector
    from dialcheck.detectors.unstructured import history_text
    from dialcheck.schema import Dialogue

    common = ["--limit", "30", "--epochs", "1", "--data-dir", str(data_root), "--no-progress", "--batch-size", "16"]
    first, second = tmp_path / "utterance", tmp_path / "unstructured"
    code, _, err = _run(capsys, "train", "--out", str(first), "--base", str(tiny_base), "--lora", "4", *common)
    assert code == 0, err
    args = ["train", "--out", str(second), "--init", str(first), "--detector", "unstructured", "--lr", "1e-12"]
    code, _, err = _run(capsys, *args, *common)
    assert code == 0, err
    cfg = json.loads((second / "dialcheck.json").read_text())
    assert cfg["detector"] == "decode.unstructured.v1" and cfg["max_length"] == 256
    assert cfg["training"]["counts"]["synthetic.history"] > 0 and cfg["adapter"]["r"] == 4
    assert cfg["training"]["data"].startswith("synthetic speaker-tagged histories")
    # lr ~0: the unstructured detector scores (history, last turn) exactly as the pair classifier it started from
    d = Dialogue.from_texts(["i like tea", "ok", "i never drink tea"])
    pair = (history_text(d), d.turns[-1].text)
    expected = load_detector(first).classifier.score([pair])[0]
    assert load_detector(second).predict([d])[0].score == pytest.approx(float(expected), abs=1e-5)


def test_train_cli_distils_from_a_teacher_and_caches_its_scores(
    capsys, tmp_path, tiny_base, tiny_detector_dir, data_root, monkeypatch
):
    monkeypatch.setenv("DIALCHECK_CACHE", str(tmp_path / "cache"))
    args = [
        "train",
        "--base",
        str(tiny_base),
        "--limit",
        "30",
        "--epochs",
        "1",
        "--lora",
        "4",
        "--data-dir",
        str(data_root),
        "--no-progress",
        "--teacher",
        str(tiny_detector_dir),
        "--distill-alpha",
        "0.7",
    ]
    assert _run(capsys, *args, "--out", str(tmp_path / "a"))[0] == 0
    cached = list((tmp_path / "cache" / "teacher-scores").glob("*.npz"))
    assert len(cached) == 1
    cfg = json.loads((tmp_path / "a" / "dialcheck.json").read_text())
    assert cfg["training"]["teacher"] == str(tiny_detector_dir) and cfg["training"]["distill_alpha"] == 0.7
    assert _run(capsys, *args, "--out", str(tmp_path / "b"))[0] == 0  # second run reuses the cached scores
    assert list((tmp_path / "cache" / "teacher-scores").glob("*.npz")) == cached
    # per-source weights: recorded when the source is in the mix, a clear error naming the sources otherwise
    by = ["--distill-alpha-by", "decode.train=0.2"]
    assert _run(capsys, *args, *by, "--out", str(tmp_path / "c"))[0] == 0
    cfg = json.loads((tmp_path / "c" / "dialcheck.json").read_text())
    assert cfg["training"]["distill_alpha_by"] == {"decode.train": 0.2}
    code, _, err = _run(capsys, *args, "--distill-alpha-by", "aug.perturb=0", "--out", str(tmp_path / "d"))
    assert code != 0 and "no training pairs come from 'aug.perturb'; sources: aug.random_premise, decode.train" in err
    # unlabelled neighbour pairs: in the mix, scored by the teacher, followed by it alone
    assert _run(capsys, *args, "--augment", "random_premise,neighbour", "--out", str(tmp_path / "e"))[0] == 0
    cfg = json.loads((tmp_path / "e" / "dialcheck.json").read_text())
    assert cfg["training"]["counts"]["aug.neighbour"] > 0
    assert cfg["training"]["distill_alpha_by"] == {"aug.neighbour": 1.0}
    # a run of a fraction of an epoch: the teacher scores only the pairs it trains on (a fresh cache)
    monkeypatch.setenv("DIALCHECK_CACHE", str(tmp_path / "cache2"))
    short = [a if a != "1" or args[i - 1] != "--epochs" else "0.3" for i, a in enumerate(args)]
    assert _run(capsys, *short, "--out", str(tmp_path / "f"))[0] == 0
    cfg = json.loads((tmp_path / "f" / "dialcheck.json").read_text())
    (store,) = (tmp_path / "cache2" / "teacher-scores").glob("*.npz")
    with np.load(store) as z:
        assert 0 < len(z["keys"]) < 0.5 * cfg["training"]["train_pairs"]


def test_a_student_trains_from_a_saved_scores_file_as_from_its_teacher(
    capsys, tmp_path, tiny_base, tiny_detector_dir, data_root, monkeypatch
):
    import shutil

    from safetensors.numpy import load_file

    from dialcheck.training.distill import teacher_scores_meta

    monkeypatch.setenv("DIALCHECK_CACHE", str(tmp_path / "cache"))
    teacher = tmp_path / "teacher"
    shutil.copytree(tiny_detector_dir, teacher)
    args = ["train", "--base", str(tiny_base), "--limit", "30", "--epochs", "0.3", "--lora", "4"]
    args += ["--data-dir", str(data_root), "--no-progress", "--distill-alpha", "0.8"]
    scores = tmp_path / "scores" / "t.npz"
    save = ["--teacher", str(teacher), "--save-teacher-scores", str(scores), "--out", str(tmp_path / "x")]
    code, _, err = _run(capsys, *args, *save)
    assert code == 0, err
    assert f"teacher scores to {scores}" in err and not (tmp_path / "x").exists()  # scored, then stopped: no training
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "kept.txt").write_text("a run in progress")  # OUT may hold a run: nothing is written there
    assert _run(capsys, *args, *save)[0] == 0 and (tmp_path / "x" / "kept.txt").exists()
    meta = teacher_scores_meta(scores)
    assert meta["teacher"] == str(teacher)
    # the command main() parsed, not the test runner's argv (which may itself hold "train", as `-k train` does)
    assert meta["command"] == " ".join(["dialcheck", *args, *save])
    assert len(meta["teacher_sha256"]) == 64
    # the student from the teacher itself, then from the file alone (teacher folder and cache gone)
    assert _run(capsys, *args, "--teacher", str(teacher), "--out", str(tmp_path / "a"))[0] == 0
    shutil.rmtree(teacher)
    shutil.rmtree(tmp_path / "cache")
    code, _, err = _run(capsys, *args, "--teacher", str(scores), "--out", str(tmp_path / "b"))
    assert code == 0, err
    a, b = (load_file(tmp_path / d / "weights.safetensors") for d in ("a", "b"))
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    cfg = json.loads((tmp_path / "b" / "dialcheck.json").read_text())
    assert cfg["training"]["teacher"] == str(scores)
    assert cfg["training"]["teacher_scores_meta"]["teacher_sha256"] == meta["teacher_sha256"]
    # a run that reads other pairs (another seed draws another schedule and validation split): refused
    code, _, err = _run(capsys, *args, "--teacher", str(scores), "--seed", "5", "--out", str(tmp_path / "c"))
    assert code == 2 and "pairs this run trains on" in err and str(scores) in err
    assert not (tmp_path / "c").exists()
    # not a scores file
    bad = tmp_path / "bad.npz"
    bad.write_text("not numpy")
    code, _, err = _run(capsys, *args, "--teacher", str(bad), "--out", str(tmp_path / "d"))
    assert code == 2 and "not a teacher-scores file" in err and str(bad) in err
    # gold targets for the labelled pairs (weight 0): only the unlabelled neighbour pairs are scored and stored
    gold = [a if a != "0.8" else "0" for a in args] + ["--augment", "random_premise,neighbour", "--epochs", "1"]
    nb = tmp_path / "nb.npz"
    every = ["--epochs", "1", "--teacher", str(tiny_detector_dir), "--save-teacher-scores", str(tmp_path / "all.npz")]
    assert _run(capsys, *args, *every, "--out", str(tmp_path / "z"))[0] == 0  # the cache now scores every pair
    code, _, err = _run(
        capsys,
        *gold,
        "--teacher",
        str(tiny_detector_dir),
        "--save-teacher-scores",
        str(nb),
        "--out",
        str(tmp_path / "y"),
    )
    assert code == 0, err
    counts = json.loads(err.split("dialcheck: training data ", 1)[1].splitlines()[0])
    with np.load(nb) as z:  # the cache holds scores of other pairs too (the runs above): not written
        assert 0 < len(z["keys"]) <= counts["aug.neighbour"] < counts["decode.train"]
    code, _, err = _run(capsys, *gold, "--teacher", str(nb), "--out", str(tmp_path / "e"))
    assert code == 0, err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--distill-alpha-by", "aug.perturb=0"], "--distill-alpha-by weighs a teacher's scores: give --teacher"),
        (["--save-teacher-scores", "s.npz"], "--save-teacher-scores writes a teacher's scores: give --teacher"),
        (["--teacher", "no/such/folder"], "neither a saved detector folder nor a teacher-scores file"),
        (["--teacher", __file__], "not a teacher-scores file (an .npz of keys and scores from --save-teacher-scores)"),
        (["--augment", "random_premise,neighbour"], "--augment neighbour adds unlabelled pairs: give --teacher"),
    ],
)
def test_distillation_options_are_checked_before_any_data_is_read(capsys, tmp_path, extra, message):
    missing = tmp_path / "no-data-here"  # reading data would fail with another message
    code, _, err = _run(capsys, "train", "--out", str(tmp_path / "o"), "--data-dir", str(missing), *extra)
    assert code == 2 and message in err


def test_recalibrating_a_model_keeps_its_reading_options(capsys, tmp_path, tiny_detector_dir, data_root):
    import shutil

    src = tmp_path / "src"
    shutil.copytree(tiny_detector_dir, src)  # how the shipped v10 was made from v9: a copy with two options
    cfg = json.loads((src / "dialcheck.json").read_text())
    cfg["options"] = {"ellipsis": "resolve", "questions": "skip"}
    (src / "dialcheck.json").write_text(json.dumps(cfg))
    args = ["--limit", "30", "--data-dir", str(data_root), "--no-progress", "--batch-size", "16"]
    out = tmp_path / "recalibrated"
    code, _, err = _run(capsys, "train", "--out", str(out), "--init", str(src), "--epochs", "0", *args)
    assert code == 0, err
    options = json.loads((out / "dialcheck.json").read_text())["options"]
    assert options == {"ellipsis": "resolve", "questions": "skip"}


def test_pair_order_both_is_kept_by_calibration_and_applied_by_check(capsys, tmp_path, tiny_base, data_root):
    from dialcheck.detectors import load_detector
    from dialcheck.schema import Dialogue

    args = ["--limit", "30", "--data-dir", str(data_root), "--no-progress", "--batch-size", "16"]
    first, both, again = tmp_path / "first", tmp_path / "both", tmp_path / "again"
    code, _, err = _run(
        capsys, "train", "--out", str(first), "--base", str(tiny_base), "--lora", "4", "--epochs", "1", *args
    )
    assert code == 0, err
    code, _, err = _run(
        capsys, "train", "--out", str(both), "--init", str(first), "--epochs", "0", "--pair-order", "both", *args
    )
    assert code == 0, err
    code, _, err = _run(capsys, "train", "--out", str(again), "--init", str(both), "--epochs", "0", *args)
    assert code == 0, err
    d = Dialogue.from_texts(["i like tea", "ok", "i never drink tea"])
    fwd = load_detector(first).predict([d])[0].score
    rev = load_detector(first).predict([Dialogue.from_texts(["i never drink tea", "ok", "i like tea"])])[0].score
    for folder in (both, again):  # a recalibration from a "both" model keeps reading both orders
        assert json.loads((folder / "dialcheck.json").read_text())["options"] == {"pair_order": "both"}
        assert load_detector(folder).predict([d])[0].score == pytest.approx((fwd + rev) / 2, abs=1e-5)
    path = tmp_path / "d.json"
    path.write_text(json.dumps(["i like tea", "ok", "i never drink tea"]))
    for order, expected in (("both", (fwd + rev) / 2), ("forward", fwd)):
        code, out, err = _run(capsys, "check", str(path), "--json", "--model", str(both), "--pair-order", order)
        assert code == 0, err
        assert json.loads(out)["score"] == pytest.approx(expected, abs=1e-5)
    code, _, err = _run(capsys, "train", "--task", "citod", "--out", str(tmp_path / "c"), "--pair-order", "both")
    assert code == 2 and "--pair-order" in err


def test_int8_quantizes_once_and_keeps_scores_close(capsys, dialogs, tiny_detector_dir, tmp_path):
    argv = ["check", str(dialogs), "--json", "--model", str(tiny_detector_dir)]
    code, out, _ = _run(capsys, *argv)
    fp32 = [json.loads(line)["score"] for line in out.splitlines()]
    from dialcheck import api

    api._cached.cache_clear()
    for _ in range(2):  # the second call gets the cached, already quantized detector
        code, out, _ = _run(capsys, *argv, "--int8")
        assert code == 0
        int8 = [json.loads(line)["score"] for line in out.splitlines()]
        assert int8[0] != fp32[0] and int8 == pytest.approx(fp32, abs=0.05)
    assert api.load(tiny_detector_dir).config.options["int8"] is True
    code, _, err = _run(capsys, "evaluate", "--model", str(tiny_detector_dir), "--int8", "--update-card")
    assert code == 2 and "leave out --int8" in err


def test_long_turns_option_switches_how_an_overlong_pair_is_read(capsys, tmp_path, tiny_detector_dir):
    long_a = " ".join(f"On day {i} I walked my two dogs along the river before work." for i in range(12))
    long_b = " ".join(f"On day {i} I stayed home because I have never owned a dog." for i in range(12))
    f = tmp_path / "long.json"
    f.write_text(json.dumps([long_a, "Nice.", long_b]))
    scores = {}
    for mode in ("chunk", "truncate"):
        code, out, err = _run(
            capsys, "check", str(f), "--json", "--model", str(tiny_detector_dir), "--long-turns", mode
        )
        assert code == 0, err
        scores[mode] = json.loads(out)["score"]
    assert scores["chunk"] != scores["truncate"]


def test_ellipsis_option_reads_an_agreement_as_what_it_agrees_with(capsys, tmp_path, tiny_detector_dir):
    from dialcheck.api import load

    texts = ["I am a huge fan of star wars.", "I have never seen a star wars movie.", "Neither have I."]
    f = tmp_path / "echo.json"
    f.write_text(json.dumps(texts))
    det = load(str(tiny_detector_dir))
    expected = {}
    for mode in ("off", "resolve"):
        det.ellipsis = mode
        expected[mode] = det.predict([texts])[0].score
        code, out, err = _run(capsys, "check", str(f), "--json", "--model", str(tiny_detector_dir), "--ellipsis", mode)
        assert code == 0, err
        assert json.loads(out)["score"] == pytest.approx(expected[mode], abs=1e-5)
    assert expected["resolve"] > expected["off"]  # the implied pair scores higher on this model: the flag matters
    code, out, err = _run(capsys, "check", str(f), "--model", str(tiny_detector_dir), "--ellipsis", "resolve")
    assert code == 0, err
    assert 'last turn [2] A: "Neither have I."\n    also read as: "I have never seen a star wars movie."' in out
    code, out, err = _run(capsys, "check", str(f), "--model", str(tiny_detector_dir), "--ellipsis", "off")
    assert "also read as" not in out
    with pytest.raises(SystemExit) as e:
        _run(capsys, "check", str(f), "--model", str(tiny_detector_dir), "--ellipsis", "on")
    assert e.value.code == 2 and "--ellipsis" in capsys.readouterr().err


def test_questions_option_skips_earlier_turns_that_only_ask(capsys, tmp_path, tiny_detector_dir):
    texts = ["Do you have kids?", "Two.", "I have a son.", "Nice.", "I have no children."]
    f = tmp_path / "q.json"
    f.write_text(json.dumps(texts))
    pairs = {}
    for mode in ("read", "skip", "echoes", "strip"):
        code, out, err = _run(capsys, "check", str(f), "--json", "--model", str(tiny_detector_dir), "--questions", mode)
        assert code == 0, err
        pairs[mode] = set(json.loads(out)["pair_scores"])
    assert pairs == {"read": {"0", "2"}, "skip": {"2"}, "echoes": {"2"}, "strip": {"2"}}  # both also skip


def test_answers_option_reads_the_last_turn_without_its_yes_no_answer(capsys, tmp_path, tiny_detector_dir):
    texts = ["I have a son.", "Do you have two kids?", "No, I have no children at all."]
    f = tmp_path / "a.json"
    f.write_text(json.dumps(texts))
    scores = {}
    for mode in ("read", "strip"):
        code, out, err = _run(capsys, "check", str(f), "--json", "--model", str(tiny_detector_dir), "--answers", mode)
        assert code == 0, err
        scores[mode] = json.loads(out)["score"]
    assert scores["read"] != scores["strip"]  # the tiny model reads another last turn
    with pytest.raises(SystemExit) as e:
        _run(capsys, "check", str(f), "--model", str(tiny_detector_dir), "--answers", "drop")
    assert e.value.code == 2 and "--answers" in capsys.readouterr().err


def test_speaker_skips_a_trailing_tool_call_and_without_it_the_error_says_how(capsys, tmp_path, tiny_detector_dir):
    log = tmp_path / "tools.jsonl"
    messages = [*CHAT[:4], {"role": "tool", "content": "ok"}, TOOL_CALL]
    log.write_text(json.dumps({"id": "t", "messages": messages}) + "\n")
    model = ["--model", str(tiny_detector_dir)]
    code, out, _ = _run(capsys, "check", str(log), *model, "--speaker", "assistant", "--json")
    assert code == 0 and json.loads(out)["turn"] == 3  # the assistant's last message with text
    out_path = tmp_path / "v.jsonl"
    code, _, err = _run(capsys, "score", str(log), str(out_path), *model, "--no-progress", "--speaker", "assistant")
    assert code == 0 and [json.loads(x)["turn"] for x in out_path.read_text().splitlines()] == [3]
    code, _, err = _run(capsys, "check", str(log), *model)
    assert code == 2 and "messages[5].content: the last turn is empty" in err and "--speaker assistant" in err


MIXED = ["我有一只狗。", "Nice, what is its name?", "我从来没有养过狗。"]  # no shipped default reads it


@pytest.fixture
def tiny_default(monkeypatch, tmp_path, tiny_detector_dir):
    """The tiny detector stands in for the shipped English default (no --model: dialogues are routed)."""
    from dialcheck import api

    paths = {"en": tiny_detector_dir, "zh": tmp_path / "no-zh-model", "tod": tmp_path / "no-tod-model"}
    monkeypatch.setattr(api, "default_model_path", lambda language="en": paths[language])


def test_check_names_file_and_line_of_a_dialogue_no_default_can_read(capsys, tmp_path, tiny_default):
    p = tmp_path / "chats.jsonl"
    p.write_text(json.dumps(["Hi.", "Hello!"]) + "\n" + json.dumps(MIXED, ensure_ascii=False) + "\n")
    code, out, err = _run(capsys, "check", str(p))
    assert code == 2 and out == "" and "Traceback" not in err
    assert f"{p}, line 2: dialogue 2: the dialogue mixes Chinese turns [0, 2] with non-Chinese turns [1]" in err


def test_score_skips_a_line_no_default_can_read_and_keeps_the_good_ones(capsys, tmp_path, tiny_default):
    log = tmp_path / "log.jsonl"
    good = json.dumps(["I like tea.", "Me too.", "I never drink tea."])
    zh_no_u1 = json.dumps(["我养了两只猫。", "几岁了？", "我没养猫。"], ensure_ascii=False)
    log.write_text("\n".join([good, json.dumps(MIXED, ensure_ascii=False), good, zh_no_u1, good]) + "\n")
    out, errors = tmp_path / "out.jsonl", tmp_path / "errors.jsonl"
    args = ["score", str(log), str(out), "--no-progress", "--chunk-size", "8", "--errors", str(errors)]
    code, _, err = _run(capsys, *args)
    assert code == 0 and [json.loads(x)["line"] for x in out.read_text().splitlines()] == [1, 3, 5]
    assert f"{log}, line 2: the dialogue mixes Chinese" in err and f"{log}, line 4: a Chinese conversation" in err
    assert "scored 3 dialogues, skipped 2 bad lines" in err
    assert [json.loads(x)["line"] for x in errors.read_text().splitlines()] == [2, 4]


def test_score_errors_file_follows_line_order(capsys, tmp_path, tiny_default):
    log, out, errors = tmp_path / "log.jsonl", tmp_path / "out.jsonl", tmp_path / "errors.jsonl"
    good = json.dumps(["I like tea.", "Me too.", "I never drink tea."])
    log.write_text("\n".join([good, json.dumps(MIXED, ensure_ascii=False), "{not json", good]) + "\n")
    code, _, err = _run(capsys, "score", str(log), str(out), "--no-progress", "--errors", str(errors))
    assert code == 0 and [json.loads(x)["line"] for x in out.read_text().splitlines()] == [1, 4]
    assert [json.loads(x)["line"] for x in errors.read_text().splitlines()] == [2, 3]  # routing, then parse error
    assert err.index(f"{log}, line 2:") < err.index(f"{log}, line 3:")


def test_score_counts_a_line_scored_in_part_once(capsys, tmp_path, tiny_default):
    log, out = tmp_path / "log.jsonl", tmp_path / "out.jsonl"
    turns = ["Hi.", "Hello!", "I like tea.", "我喜欢茶。", "Do you?"]  # from turn 3 on the prefix mixes languages
    log.write_text(json.dumps(turns, ensure_ascii=False) + "\n" + json.dumps(MIXED, ensure_ascii=False) + "\n")
    code, _, err = _run(capsys, "score", str(log), str(out), "--every-turn", "--no-progress")
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert code == 0 and [(r["line"], r["turn"]) for r in rows] == [(1, 1), (1, 2)]
    assert f"{log}, line 1: turn 3: the dialogue mixes" in err
    assert "scored 1 dialogue, 1 of them in part (2 turns skipped), skipped 1 bad line" in err


def test_score_resume_reports_each_bad_line_once_in_the_errors_file(capsys, monkeypatch, tmp_path, tiny_detector_dir):
    from dialcheck.cli import score

    log = _log(tmp_path, n_good=6, bad_lines=(2, 7))
    out, errors = tmp_path / "out.jsonl", tmp_path / "errors.jsonl"
    args = ["score", str(log), str(out), "--model", str(tiny_detector_dir), "--no-progress", "--chunk-size", "2"]
    args += ["--errors", str(errors)]
    with monkeypatch.context() as m:
        kill_on_call(m, score, "predict_for", 3)  # chunks [1, 2] [3, 4] [5, 6]: killed at the third
        assert _run(capsys, *args)[0] == 130
    assert [json.loads(x)["line"] for x in errors.read_text().splitlines()] == [2]
    code, _, err = _run(capsys, *args, "--resume")
    assert code == 0 and "already done" in err
    assert [json.loads(x)["line"] for x in errors.read_text().splitlines()] == [2, 7]
    assert [json.loads(x)["line"] for x in out.read_text().splitlines()] == [1, 3, 4, 5, 6, 8]
    assert _run(capsys, *args, "--resume")[0] == 0  # a finished run resumed: still one record per bad line
    assert [json.loads(x)["line"] for x in errors.read_text().splitlines()] == [2, 7]


def test_score_to_standard_output(capsys, tmp_path, tiny_detector_dir):
    log = _log(tmp_path, n_good=3, bad_lines=(2,))
    model = ["--model", str(tiny_detector_dir)]
    code, out, err = _run(capsys, "score", str(log), "-", *model)  # with its progress bar, on stderr
    assert code == 0 and [json.loads(x)["line"] for x in out.splitlines()] == [1, 3, 4]
    assert "-> <stdout>" in err and not (tmp_path / "-").exists()
    code, out, err = _run(capsys, "score", str(log), "-", "--resume", *model)
    assert code == 2 and out == "" and "--resume needs an output file" in err


def test_score_summary_names_its_output_as_given(capsys, tmp_path, monkeypatch, tiny_detector_dir):
    # io.output_name, as probe, collect and evaluate name theirs: printed through Path, ./v.jsonl was 'v.jsonl'
    log = _log(tmp_path, n_good=1, bad_lines=())
    monkeypatch.chdir(tmp_path)
    code, _, err = _run(capsys, "score", str(log), "./v.jsonl", "--model", str(tiny_detector_dir), "--no-progress")
    assert code == 0 and err.endswith("-> ./v.jsonl\n"), err


def test_score_refuses_to_write_over_its_input(capsys, tmp_path, tiny_detector_dir):
    log = _log(tmp_path)
    before = log.read_text()
    for extra in (["--overwrite"], ["--errors", str(log)]):
        target = str(log) if extra == ["--overwrite"] else str(tmp_path / "out.jsonl")
        code, _, err = _run(capsys, "score", str(log), target, *extra, "--model", str(tiny_detector_dir))
        assert code == 2 and "is the input file" in err and str(log) in err
    assert log.read_text() == before


def test_score_refuses_errors_file_equal_to_its_output(capsys, tmp_path, tiny_detector_dir):
    log, out = _log(tmp_path), tmp_path / "x.out"
    model = ["--model", str(tiny_detector_dir), "--no-progress"]
    code, _, err = _run(capsys, "score", str(log), str(out), "--errors", str(tmp_path / "." / "x.out"), *model)
    assert code == 2 and "--errors is the output file" in err and str(out.name) in err
    assert not out.exists()  # refused before anything was written
    out.write_text("")
    (tmp_path / "link.out").symlink_to(out)  # the same file under another name
    code, _, err = _run(
        capsys, "score", str(log), str(out), "--overwrite", "--errors", str(tmp_path / "link.out"), *model
    )
    assert code == 2 and "--errors is the output file" in err and out.read_text() == ""


def _lines(tmp_path, name, ids, blank_at=()):
    """A JSONL input of one good dialogue per id (None: no id field), blank lines at ``blank_at`` (1-based)."""
    rows = [{"turns": ["I like tea.", "Me too.", f"I drink tea {i}."]} for i in range(len(ids))]
    lines = [json.dumps({"id": i, **r} if i is not None else r) for i, r in zip(ids, rows, strict=True)]
    for n in blank_at:
        lines.insert(n - 1, "")
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n")
    return p


def test_score_resume_refuses_an_output_written_for_another_input(capsys, tmp_path, tiny_detector_dir):
    big = _log(tmp_path, n_good=9, bad_lines=())  # ids d1 .. d9
    model = ["--model", str(tiny_detector_dir), "--no-progress"]
    full = tmp_path / "full.jsonl"
    assert _run(capsys, "score", str(big), str(full), *model)[0] == 0
    text = full.read_text()
    out = tmp_path / "mism.out"
    small = _lines(tmp_path, "small.jsonl", [f"d{i}" for i in range(1, 4)])
    cases = [  # (input, message)
        (
            small,
            "mism.out, line 9: holds the verdict of input line 9, but {IN} has 3 lines: it was not written for this",
        ),
        (
            _lines(tmp_path, "other.jsonl", [f"e{i}" for i in range(1, 10)]),
            'mism.out, line 1: holds the verdict of input line 1 (id "d1"), but line 1 of {IN} has id "e1"',
        ),
        (
            _lines(tmp_path, "gaps.jsonl", [None] * 9, blank_at=(4,)),
            "mism.out, line 4: holds the verdict of input line 4, but line 4 of {IN} is blank",
        ),
    ]
    for src, message in cases:
        out.write_text(text)
        code, _, err = _run(capsys, "score", str(src), str(out), *model, "--resume")
        assert code == 2 and message.format(IN=src) in err, err
        assert out.read_text() == text  # left as it was: nothing cut, nothing appended
    # records out of input order (two runs' outputs concatenated): not one run's output either
    rows = text.splitlines()
    out.write_text("\n".join([*rows, rows[0]]) + "\n")
    code, _, err = _run(capsys, "score", str(big), str(out), *model, "--resume")
    assert code == 2 and "mism.out, line 10: holds the verdict of input line 1 after that of input line 9" in err
    # the input it was written for, without ids: resumed as before
    same = _lines(tmp_path, "noids.jsonl", [None] * 9)
    out.write_text("\n".join(rows[:4]) + "\n")
    code, _, err = _run(capsys, "score", str(same), str(out), *model, "--resume")
    assert code == 0 and "(3 already done)" in err
    assert [json.loads(x)["line"] for x in out.read_text().splitlines()] == list(range(1, 10))
    fresh = tmp_path / "fresh.out"  # nothing to resume: scored from the start
    assert _run(capsys, "score", str(small), str(fresh), *model, "--resume")[0] == 0
    assert len(fresh.read_text().splitlines()) == 3


def test_score_resume_from_standard_input_checks_the_input_before_writing(
    capsys, monkeypatch, tmp_path, tiny_detector_dir
):
    big = _log(tmp_path, n_good=9, bad_lines=())
    model = ["--model", str(tiny_detector_dir), "--no-progress", "--chunk-size", "2"]
    full = tmp_path / "full.jsonl"
    assert _run(capsys, "score", str(big), str(full), *model)[0] == 0
    text = full.read_text()
    out = tmp_path / "part.out"
    small = _lines(tmp_path, "small.jsonl", [f"d{i}" for i in range(1, 4)])
    other = _lines(tmp_path, "other.jsonl", [f"e{i}" for i in range(1, 10)])
    for src, message in [
        (small, "part.out, line 9: holds the verdict of input line 9, but <stdin> has no dialogue after line 3"),
        (other, 'part.out, line 1: holds the verdict of input line 1 (id "d1"), but line 1 of <stdin> has id "e1"'),
    ]:
        out.write_text(text)
        feed_stdin(monkeypatch, src.read_bytes())
        code, _, err = _run(capsys, "score", "-", str(out), *model, "--resume")
        assert code == 2 and message in err, err
        assert out.read_text() == text
    out.write_text("".join(text.splitlines(keepends=True)[:5]))
    feed_stdin(monkeypatch, big.read_bytes())
    code, _, err = _run(capsys, "score", "-", str(out), *model, "--resume")
    assert code == 0 and "(4 already done)" in err and out.read_text() == text


def test_score_refuses_a_json_document_with_one_error(capsys, tmp_path, tiny_detector_dir):
    from pathlib import Path

    model = ["--model", str(tiny_detector_dir), "--no-progress"]
    readme_example = Path(__file__).resolve().parents[1] / "examples" / "dialogues.json"  # pretty-printed
    one_line = tmp_path / "list.json"
    one_line.write_text(json.dumps([{"turns": ["Hi.", "Hello!"]}, {"turns": ["I like tea.", "Me too."]}]) + "\n")
    one = tmp_path / "one.json"
    one.write_text(json.dumps(CONTRA, indent=2))
    for src, convert in [
        (readme_example, "jq -c '.[]'"),
        (one_line, "jq -c '.[]'"),
        (one, "jq -c ."),
    ]:
        out = tmp_path / "p.out"
        code, _, err = _run(capsys, "score", str(src), str(out), *model)
        assert code == 2 and not out.exists(), err
        assert err.count("\n") == 1 and f"{src}: a JSON document, not JSON Lines" in err
        assert "dialcheck check reads JSON documents" in err and convert in err
    # JSON Lines whose first line is broken are still JSON Lines: that line is skipped, the others scored
    log = tmp_path / "torn.jsonl"
    log.write_text('{"turns": ["a",\n' + json.dumps(["I like tea.", "Me too."]) + "\n")
    code, _, err = _run(capsys, "score", str(log), str(tmp_path / "t.out"), *model)
    assert code == 0 and "scored 1 dialogue, skipped 1 bad line" in err


def test_score_refuses_a_pretty_printed_list_of_one_record(capsys, monkeypatch, tmp_path, tiny_detector_dir):
    """'[', one record on its own line, ']': the record's line parses alone, so the file was read as JSON Lines
    whose first line is broken, the record scored and the two brackets reported as bad lines; a list of two was
    refused as a document. A lone bracket now opens a document, in a file and on standard input alike."""
    text = "[\n  " + json.dumps({"turns": ["Hi.", "Hello!"]}) + "\n]\n"
    one = tmp_path / "one.json"
    one.write_text(text)
    model = ["--model", str(tiny_detector_dir), "--no-progress"]
    code, _, err = _run(capsys, "score", str(one), str(tmp_path / "o.jsonl"), *model)
    assert code == 2 and f"{one}: a JSON document, not JSON Lines" in err and "jq -c '.[]'" in err
    feed_stdin(monkeypatch, text)
    code, _, err = _run(capsys, "score", "-", str(tmp_path / "s.jsonl"), *model)
    assert code == 2 and "<stdin>: a JSON document, not JSON Lines" in err
    assert not (tmp_path / "o.jsonl").exists() and not (tmp_path / "s.jsonl").exists()


def test_score_refuses_a_json_document_on_standard_input_and_still_streams_json_lines(
    capsys, monkeypatch, tmp_path, tiny_detector_dir
):
    """score checked a file for a JSON document but not standard input: a list written a record a line ('[',
    '{...},', '{...}', ']') piped in scored its last record (the one line that parses alone) and exited 0,
    'skipped 3 bad lines'; a pretty-printed one gave a bad line per line. Both are now one error, exit 2, as from a
    file; JSON Lines are still read as they come: the first verdicts are written before the pipe's last line."""
    from types import SimpleNamespace

    model = ["--model", str(tiny_detector_dir), "--no-progress", "--chunk-size", "1"]
    rows = [{"turns": ["Hi.", "Hello!"]}, {"turns": ["I like tea.", "Me too."]}, {"turns": ["I have a cat.", "Oh?"]}]
    out = tmp_path / "v.jsonl"
    for text in ["[\n" + ",\n".join(json.dumps(r) for r in rows) + "\n]\n", json.dumps(rows, indent=2)]:
        feed_stdin(monkeypatch, text)
        code, _, err = _run(capsys, "score", "-", str(out), *model)
        assert code == 2 and not out.exists(), err
        assert err == (
            "dialcheck: error: <stdin>: a JSON document, not JSON Lines: score reads one dialogue per line "
            "(dialcheck check reads JSON documents); pipe it through jq -c '.[]'\n"
        )
    written_before_last = []

    def pipe():  # a pipe still being written: its last line comes once two verdicts could have been written
        for i, r in enumerate(rows):
            if i == len(rows) - 1:
                written_before_last.append(out.read_text().count("\n"))
            yield (json.dumps(r) + "\n").encode()

    monkeypatch.setattr("sys.stdin", SimpleNamespace(buffer=pipe()))
    code, _, err = _run(capsys, "score", "-", str(out), *model)
    assert code == 0 and "scored 3 dialogues" in err, err
    assert written_before_last == [2] and [json.loads(x)["line"] for x in out.read_text().splitlines()] == [1, 2, 3]


def test_score_loads_the_model_before_it_waits_for_standard_inputs_first_line(capsys, monkeypatch, tmp_path):
    """score - read standard input's first line (for the JSON-document check) before it loaded --model: a user
    piping a slow producer waited for its first line, then for the model. The model is now loaded first (the
    producer writes on meanwhile); a closed standard input is still refused before it (see the closed-stdin test),
    and a JSON document after it, with the same message, before OUT is written or cut."""
    from types import SimpleNamespace

    import dialcheck.cli.score as score

    order = []
    monkeypatch.setattr(score, "load_for", lambda args: order.append("model loaded"))
    monkeypatch.setattr(score, "predict_for", lambda args, ds: [SimpleNamespace(to_dict=dict) for _ in ds])

    def pipe(*lines):
        order.append("first line read")
        yield from (line.encode() for line in lines)

    out = tmp_path / "v.jsonl"
    monkeypatch.setattr("sys.stdin", SimpleNamespace(buffer=pipe('["Hi.", "Hello!"]\n')))
    code, _, err = _run(capsys, "score", "-", str(out), "--model", "M", "--no-progress")
    assert code == 0 and "scored 1 dialogue" in err, err
    assert order == ["model loaded", "first line read"]
    monkeypatch.setattr("sys.stdin", SimpleNamespace(buffer=pipe()))  # empty: a warning and exit 0, as before
    code, _, err = _run(capsys, "score", "-", str(out), "--model", "M", "--no-progress", "--overwrite")
    assert code == 0 and err.endswith("dialcheck: warning: <stdin> has no dialogues\n") and out.read_text() == ""
    out.write_text('{"line": 1, "id": null}\n{"line": 2')  # a torn tail, cut only once the input is found good
    monkeypatch.setattr("sys.stdin", SimpleNamespace(buffer=pipe("[\n", '["Hi.", "Hello!"]\n', "]\n")))
    code, _, err = _run(capsys, "score", "-", str(out), "--model", "M", "--no-progress", "--resume")
    assert code == 2 and "<stdin>: a JSON document, not JSON Lines" in err, err
    assert out.read_text() == '{"line": 1, "id": null}\n{"line": 2'


def test_score_json_document_hint_never_names_an_existing_file(capsys, tmp_path, tiny_detector_dir):
    import gzip
    import shlex

    model = ["--model", str(tiny_detector_dir), "--no-progress"]
    src = tmp_path / "logs.json"
    src.write_text(json.dumps([{"turns": ["Hi.", "Hello!"]}, {"turns": ["I like tea.", "Me too."]}], indent=2))
    expected = []
    for name in ["logs.jsonl", "logs.lines.jsonl", "logs.lines-2.jsonl", "logs.lines-3.jsonl"]:
        code, _, err = _run(capsys, "score", str(src), str(tmp_path / "p.out"), *model)
        target = shlex.quote(str(tmp_path / name))
        assert code == 2 and err.count(f"> {target}") == 2, err  # both the jq and the python command
        (tmp_path / name).write_text("the user's own file\n")  # exists from now on: the next hint avoids it
        expected.append(name)
    assert all((tmp_path / n).read_text() == "the user's own file\n" for n in expected)
    gz = tmp_path / "dump.jsonl.gz"  # the input's own name is never offered, even once decompressed
    gz.write_bytes(gzip.compress(json.dumps({"turns": ["Hi.", "Hello!"]}, indent=2).encode()))
    (tmp_path / "dump.jsonl").write_text("kept\n")
    code, _, err = _run(capsys, "score", str(gz), str(tmp_path / "p.out"), *model)
    assert code == 2 and f"> {shlex.quote(str(tmp_path / 'dump.lines.jsonl'))}" in err, err


def test_score_exits_2_when_it_scored_nothing_and_warns_on_an_empty_input(capsys, tmp_path, tiny_detector_dir):
    model = ["--model", str(tiny_detector_dir), "--no-progress"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"turns": "oops"}\n{not json\n')
    out, errors = tmp_path / "v.jsonl", tmp_path / "e.jsonl"
    code, _, err = _run(capsys, "score", str(bad), str(out), *model, "--errors", str(errors))
    assert code == 2 and out.read_text() == "" and "scored 0 dialogues, skipped 2 bad lines" in err
    assert f"{bad}: nothing was scored: every line is bad" in err
    assert [json.loads(x)["line"] for x in errors.read_text().splitlines()] == [1, 2]  # the report is kept
    for text in ("", "\n  \n"):
        empty = tmp_path / "empty.jsonl"
        empty.write_text(text)
        code, _, err = _run(capsys, "score", str(empty), str(out), *model, "--overwrite")
        assert code == 0 and f"warning: {empty} has no dialogues" in err and out.read_text() == ""


def test_score_summary_says_one_dialogue_and_one_bad_line(capsys, tmp_path, tiny_detector_dir):
    log = _log(tmp_path, n_good=1, bad_lines=(2,))
    code, _, err = _run(capsys, "score", str(log), str(tmp_path / "v.jsonl"), "--model", str(tiny_detector_dir))
    assert code == 0 and "scored 1 dialogue, skipped 1 bad line ->" in err


def test_an_output_path_that_cannot_be_written_exits_2_naming_it(capsys, tmp_path, tiny_detector_dir):
    log = _log(tmp_path)
    missing = tmp_path / "no-such-folder" / "out.jsonl"
    code, _, err = _run(capsys, "score", str(log), str(missing), "--model", str(tiny_detector_dir), "--no-progress")
    assert code == 2 and f"{missing}: OUTPUT: the folder {missing.parent} does not exist" in err
    assert "Traceback" not in err
    code, _, err = _run(capsys, "score", str(log), str(tmp_path), "--overwrite", "--model", str(tiny_detector_dir))
    assert code == 2 and f"{tmp_path}: OUTPUT: is a folder; give a file name" in err


@pytest.mark.parametrize("size", ["0", "-3", "two"])
@pytest.mark.parametrize("command", [["check", "DIALOGS"], ["train"], ["nbest"], ["collect", "contexts"]])
def test_batch_size_must_be_a_positive_count(capsys, dialogs, size, command):
    with pytest.raises(SystemExit) as e:  # argparse: usage and the option's error, status 2
        _run(capsys, *[str(dialogs) if a == "DIALOGS" else a for a in command], "--batch-size", size)
    assert e.value.code == 2 and "argument --batch-size" in capsys.readouterr().err


def test_score_every_turn_checks_a_chinese_log_from_b2_on(capsys, monkeypatch, tmp_path, tiny_detector_dir):
    from dialcheck import api

    paths = {"en": tiny_detector_dir, "zh": tiny_detector_dir, "tod": tmp_path / "no-tod-model"}
    monkeypatch.setattr(api, "default_model_path", lambda language="en": paths[language])
    log, out = tmp_path / "log.jsonl", tmp_path / "out.jsonl"
    zh = ["你好。", "你好，我养了两只猫。", "它们几岁了？", "我没有养猫。", "为什么？", "我不喜欢猫。"]
    log.write_text(json.dumps(zh, ensure_ascii=False) + "\n" + json.dumps(["Hi.", "Hello!", "I like tea."]) + "\n")
    code, _, err = _run(capsys, "score", str(log), str(out), "--every-turn", "--no-progress")
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert code == 0 and [(r["line"], r["turn"]) for r in rows] == [(1, 3), (1, 4), (1, 5), (2, 1), (2, 2)]
    assert "skipped 0 bad lines" in err and "is u1 missing" not in err


def _stimulus(**kw):
    item = {"id": "entq:1", "kind": "ENTQ", "history": "I have a dog.", "hypothesis": "I have a pet.",
            "question": "You have a pet?", "expected": "yes", "positive": "You have a pet?",
            "negative": "You don't have a pet?", "source": "mine"}  # fmt: skip
    item.update(kw)
    return json.dumps({k: v for k, v in item.items() if v is not ...})


def test_nbest_names_every_bad_stimulus_record_before_any_work(capsys, tmp_path):
    stim = tmp_path / "stim.jsonl"
    lines = [
        _stimulus(),
        json.dumps({"bogus": 1}),
        _stimulus(question=None),
        _stimulus(kind="BOGUS"),
        _stimulus(kind="CNTQ"),  # a contradiction question expects "no"
        _stimulus(id="entq:6", source=...),  # source may be left out
    ]
    stim.write_text("\n".join(lines) + "\n")
    out = tmp_path / "run"
    code, _, err = _run(capsys, "nbest", "--out", str(out), "--stimuli", str(stim), "--generate-only")
    assert code == 2 and "Traceback" not in err
    assert f"{stim}, line 2: id: missing" in err
    assert f"{stim}, line 3: question: expected a string, got null" in err
    assert f"{stim}, line 4: kind: expected ENTQ or CNTQ, got 'BOGUS'" in err
    assert f"{stim}, line 5: expected: a CNTQ question expects 'no', got 'yes'" in err
    assert "4 of 6 stimuli are bad (each named above); nothing was generated" in err
    assert not out.exists()
    code, _, err = _run(capsys, "nbest", "--out", str(out), "--stimuli", str(tmp_path / "nope.jsonl"))
    assert code == 2 and f"{tmp_path / 'nope.jsonl'}: no such file" in err and "corpus" not in err


@pytest.mark.parametrize(
    "argv",
    [
        ["nbest", "--out", "o", "--endpoint", "notaurl", "--endpoint-model", "x"],
        ["nbest", "--out", "o", "--endpoint", "ftp://host/v1", "--endpoint-model", "x"],
        ["collect", "responses", "--contexts", "c.jsonl", "--out", "o.jsonl", "--endpoint", "e=notaurl,m"],
        ["collect", "responses", "--contexts", "c.jsonl", "--out", "o.jsonl", "--endpoint", "e=http://h"],
        ["rerank", "c.jsonl", "--generate", "nucleus2", "--endpoint", "notaurl", "--endpoint-model", "x"],
    ],
)
def test_an_endpoint_that_is_not_an_http_url_is_refused_when_the_command_line_is_read(capsys, tmp_path, argv):
    with pytest.raises(SystemExit) as e:  # nothing is written, even by code that would not refuse (tmp_path)
        _run(capsys, *[str(tmp_path / a) if a in ("o", "o.jsonl", "c.jsonl") else a for a in argv])
    assert e.value.code == 2 and "argument --endpoint" in capsys.readouterr().err


def test_collect_analyse_names_an_invalid_regex(capsys, tmp_path):
    from dialcheck.collection import CollectionContext, write_records
    from dialcheck.schema import Turn

    t = (Turn("A", "I am vegan."), Turn("B", "How was dinner?"))
    write_records(tmp_path / "ctx.jsonl", [CollectionContext("c0", t, 1, "How was dinner?")])
    (tmp_path / "r.jsonl").write_text("")
    argv = ["collect", "analyse", "--contexts", str(tmp_path / "ctx.jsonl"), "--replies", str(tmp_path / "r.jsonl")]
    code, _, err = _run(capsys, *argv, "--regex", "how=(")
    assert code == 2 and "--regex how: not a valid regular expression (missing ), unterminated subpattern" in err
    assert "Traceback" not in err


def test_train_refuses_full_with_a_lora_rank_before_any_work(capsys, tmp_path, tiny_base):
    # --full --lora 8 trained every weight (a 90 MB folder) and dropped --lora 8 without a word
    out = tmp_path / "model"
    argv = ["train", "--out", str(out), "--base", str(tiny_base), "--full", "--lora", "8", "--limit", "10"]
    code, _, err = _run(capsys, *argv, "--data-dir", str(tmp_path / "no-data"), "--no-progress")
    assert code == 2 and "--full trains every weight and --lora 8" in err and "data directory" not in err
    assert not out.exists()
    code, _, err = _run(capsys, *argv[:6], "--lora", "0", "--full", "--data-dir", str(tmp_path / "no-data"))
    assert code == 2 and "data directory" in err  # --full --lora 0 say the same thing: on to the data


def test_train_warns_when_nothing_is_held_out_to_set_tau_on(capsys, tmp_path, tiny_base, data_root):
    # --limit 5 holds out no validation dialogue: tau stayed 0.5, set on nothing, with exit 0 and no word
    out = tmp_path / "model"
    argv = ["train", "--out", str(out), "--base", str(tiny_base), "--lora", "4", "--limit", "5", "--epochs", "0.5"]
    code, _, err = _run(capsys, *argv, "--data-dir", str(data_root), "--no-progress", "--batch-size", "16")
    assert code == 0, err
    assert "warning: no validation dialogues (--limit 5 leaves none held out" in err and "0.5" in err


def test_check_and_score_honour_a_speaker_in_the_dialogue_object_over_speaker(capsys, tmp_path, tiny_detector_dir):
    """A "speaker" in a dialogue object was silently ignored by check and score (the user's last turn was checked),
    though POST /check honours it: the object's speaker is used, over --speaker, as the HTTP API reads it."""
    p = tmp_path / "chat.jsonl"
    rows = [{"id": "a", "messages": CHAT, "speaker": "assistant"}, {"id": "b", "messages": CHAT}]
    p.write_text("".join(json.dumps(x) + "\n" for x in rows))
    model = ["--model", str(tiny_detector_dir), "--tau", "0", "--eta-e", "0"]
    code, out, err = _run(capsys, "check", str(p), "--json", *model)
    a, b = (json.loads(x) for x in out.splitlines())
    assert code == 0 and a["turn"] == 3 and a["evidence"] == [1] and "turn" not in b
    assert "b: the last turn is the user's" in err and "a: the last turn" not in err
    code, out, _ = _run(capsys, "check", str(p), "--json", *model, "--speaker", "user")
    a, b = (json.loads(x) for x in out.splitlines())
    assert code == 0 and (a["turn"], b["turn"]) == (3, 4)  # a's own speaker over --speaker
    out_p = tmp_path / "v.jsonl"
    code, _, err = _run(capsys, "score", str(p), str(out_p), *model, "--no-progress")
    a, b = (json.loads(x) for x in out_p.read_text().splitlines())
    assert code == 0 and (a["id"], a["turn"]) == ("a", 3) and "turn" not in b
    code, _, _ = _run(capsys, "score", str(p), str(out_p), *model, "--no-progress", "--overwrite", "--every-turn")
    assert [(r["id"], r["turn"]) for r in map(json.loads, out_p.read_text().splitlines())] == [
        ("a", 1), ("a", 3), ("b", 1), ("b", 2), ("b", 3), ("b", 4)
    ]  # fmt: skip


def test_a_bad_speaker_or_a_tau_in_a_dialogue_object_is_a_bad_record(capsys, tmp_path, tiny_detector_dir):
    """A dialogue object's "tau" (which POST /check refuses) was silently ignored by check and score, as was a
    "speaker" that names no one: each is now a bad record naming file, line and field (score skips the line)."""
    p = tmp_path / "chat.jsonl"
    rows = [
        {"id": "a", "messages": CHAT, "speaker": "assistant"},
        {"id": "b", "messages": CHAT, "speaker": 3.5},  # a whole number is a name (3 is "3"), a fraction none
        {"id": "c", "messages": CHAT, "speaker": " "},
        {"id": "d", "messages": CHAT, "tau": 0.2},
        {"id": "e", "messages": CHAT, "speaker": "bot"},
    ]
    p.write_text("".join(json.dumps(x) + "\n" for x in rows))
    model = ["--model", str(tiny_detector_dir)]
    code, _, err = _run(capsys, "check", str(p), *model)
    assert code == 2 and "nothing was checked" in err
    assert f"{p}, line 2: speaker: expected a speaker name or a list of names, got float" in err
    assert f"{p}, line 3: speaker: ' ' is blank (name the speaker whose turn is checked)" in err  # as rerank says
    assert f"{p}, line 4: tau: not a dialogue field; the thresholds are the model's (`--tau` / `--eta-e`" in err
    assert f"{p}, line 5: e: speaker: no turn with text by bot" in err
    out_p = tmp_path / "v.jsonl"
    code, _, err = _run(capsys, "score", str(p), str(out_p), *model, "--no-progress")
    assert code == 0 and [json.loads(x)["id"] for x in out_p.read_text().splitlines()] == ["a"]
    assert f"skipped {p}, line 2: speaker: expected a speaker name" in err
    assert f"skipped {p}, line 4: tau: not a dialogue field" in err
    # line 5's own speaker said nothing: it was counted "1 with no turn by bot to check" without naming the line;
    # it is skipped in check's words (file, line, field), and --errors has it
    assert f"skipped {p}, line 5: speaker: no turn with text by bot (its speakers: assistant, user)" in err
    assert "scored 1 dialogue, skipped 4 bad lines" in err and "with no turn by" not in err
    errors = tmp_path / "errors.jsonl"
    _run(capsys, "score", str(p), str(out_p), *model, "--no-progress", "--overwrite", "--errors", str(errors))
    assert json.loads(errors.read_text().splitlines()[-1]) == {
        "line": 5,
        "error": f"{p}, line 5: speaker: no turn with text by bot (its speakers: assistant, user)",
    }
    # --speaker bot as well: line 5 was only counted, "1 with no turn by bot to check", because its own speaker
    # equals --speaker's; it is the record's own all the same. A record without one is counted, as --speaker's help says
    with p.open("a") as f:
        f.write(json.dumps({"id": "f", "messages": CHAT}) + "\n")
    code, _, err = _run(capsys, "score", str(p), str(out_p), *model, "--no-progress", "--overwrite", "--speaker", "bot")
    assert (
        code == 0 and f"skipped {p}, line 5: speaker: no turn with text by bot (its speakers: assistant, user)" in err
    )
    assert "scored 2 dialogues, 1 with no turn by bot to check, skipped 4 bad lines" in err


def test_train_refuses_a_split_that_leaves_nothing_to_train_on(capsys, tmp_path, tiny_base, data_root):
    # --limit 20 --validation-fraction 0.99 held out every dialogue: a ValueError traceback, "no training pairs"
    out = tmp_path / "model"
    argv = ["train", "--out", str(out), "--base", str(tiny_base), "--lora", "4", "--limit", "20", "--epochs", "1"]
    code, _, err = _run(capsys, *argv, "--validation-fraction", "0.99", "--data-dir", str(data_root), "--no-progress")
    assert code == 2 and "Traceback" not in err
    assert "no training pairs: all 20 train dialogues were held out (--validation-fraction 0.99)" in err
    assert not out.exists()


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--calibrate-thresholds"], "--calibrate-thresholds: an option of --task citod only"),
        (["--domains", "calendar", "--no-history"], "--domains, --no-history: options of --task citod only"),
        (["--split", "disjoint"], "--split: an option of --task cdconv only"),
        (["--ellipsis", "resolve"], "--ellipsis: an option of --task cascade only"),
        (["--unannotated", "top"], "--unannotated applies with --dialogues, which is not given"),
        (["--dialogues-repeat", "3"], "--dialogues-repeat applies with --dialogues, which is not given"),
        (["--distill-alpha", "0.9"], "--distill-alpha applies with --teacher, which is not given"),
    ],
)
def test_train_refuses_options_its_task_does_not_read(capsys, tmp_path, extra, message):
    # each was dropped without a word: --task decode --calibrate-thresholds trained as if it had not been given
    out = tmp_path / "model"
    argv = ["train", "--out", str(out), "--limit", "8", "--data-dir", str(tmp_path / "no-data"), "--no-progress"]
    code, _, err = _run(capsys, *argv, *extra)
    assert code == 2 and message in err and "data directory" not in err, err


def test_evaluating_an_interrupted_training_folder_says_what_it_is(capsys, tmp_path, tiny_detector_dir):
    # it said only 'OUT holds neither dialcheck.json nor a Hugging Face config.json'
    import shutil

    out = tmp_path / "run"
    shutil.copytree(tiny_detector_dir, out / "checkpoint")
    (out / "resume").mkdir()
    logs = tmp_path / "mylogs.jsonl"
    logs.write_text("\n".join(LABELLED_LINES) + "\n")
    code, _, err = _run(capsys, "evaluate", "--model", str(out), "--data", str(logs), "--no-progress")
    assert code == 2 and f"{out} holds an interrupted training run, not a model" in err
    assert f"{out / 'checkpoint'} holds its best validation so far" in err and "--resume" in err


def test_check_and_score_take_a_numbered_speaker_as_decode_numbers_them(capsys, tmp_path, tiny_detector_dir):
    """DECODE's agent_id 1 is the speaker "1", yet a record's own "speaker": 1 was a bad record ("got int"): check
    stopped and score skipped the line. It names the speaker "1" now, as --speaker 1 does."""
    turns = [{"agent_id": 0, "text": "I have two dogs."}, {"agent_id": 1, "text": "Nice!"}]
    turns += [{"agent_id": 0, "text": "I never had dogs."}, {"agent_id": 1, "text": "Oh?"}]
    p = tmp_path / "decode.jsonl"
    p.write_text(json.dumps({"id": "d1", "turns": turns, "speaker": 0}) + "\n")
    model = ["--model", str(tiny_detector_dir)]
    code, out, err = _run(capsys, "check", str(p), "--json", *model)
    assert code == 0 and json.loads(out)["turn"] == 2, err
    assert json.loads(_run(capsys, "check", str(p), "--json", *model, "--speaker", "0")[1])["turn"] == 2
    out_p = tmp_path / "v.jsonl"
    code, _, err = _run(capsys, "score", str(p), str(out_p), *model, "--no-progress")
    assert code == 0 and json.loads(out_p.read_text())["turn"] == 2 and "skipped 0 bad lines" in err


def test_a_chat_log_ending_with_a_tool_or_system_message_gets_the_note_a_users_message_gets(
    capsys, tmp_path, tiny_detector_dir
):
    """The note naming the turn checked fired only when a chat log ended with the user's message: one ending with a
    tool result (two stock lookups, 0 then 5 in stock: a contradiction at 0.96) or a system message had that message
    checked without a word. Speakers that are not chat roles (A/B, User/Bot) get no note: whose turn is meant is the
    user's to say."""
    stock = [
        {"role": "user", "content": "Is the blue mug in stock?"},
        {"role": "assistant", "content": None},
        {"role": "tool", "content": '{"in_stock": 0}'},
        {"role": "assistant", "content": "It is sold out."},
        {"role": "user", "content": "And now?"},
        {"role": "assistant", "content": None},
        {"role": "tool", "content": '{"in_stock": 5}'},
    ]
    system = [*CHAT[:4], {"role": "system", "content": "The user is a premium member."}]
    rows = [
        {"id": "tool", "messages": stock},
        {"id": "sys", "messages": system},
        {"id": "user", "messages": CHAT},
        {"id": "ab", "turns": ["I have a dog.", "Nice.", "I have no pets."]},
        {
            "id": "bot",
            "turns": [{"speaker": s, "text": t} for s, t in [("User", "Hi"), ("Bot", "Yo"), ("User", "Bye")]],
        },
        {"id": "done", "messages": stock[:4]},
    ]
    p = tmp_path / "chat.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in rows))
    model = ["--model", str(tiny_detector_dir)]
    code, _, err = _run(capsys, "check", str(p), *model)
    notes = [ln for ln in err.splitlines() if "note:" in ln]
    assert code == 0 and notes == [
        "dialcheck: note: tool: the last turn is a tool message; --speaker assistant checks the assistant's last "
        "reply instead",
        "dialcheck: note: sys: the last turn is a system message; --speaker assistant checks the assistant's last "
        "reply instead",
        "dialcheck: note: user: the last turn is the user's; --speaker assistant checks the assistant's last reply "
        "instead",
    ]
    assert "note:" not in _run(capsys, "check", str(p), *model, "--speaker", "assistant")[2]
    code, _, err = _run(capsys, "score", str(p), str(tmp_path / "v.jsonl"), *model, "--no-progress")
    assert (
        code == 0
        and (
            "dialcheck: note: 1 of them ends with a tool message, 1 ends with a system message, 1 ends with the user's "
            "turn, which is what was checked; --speaker assistant checks the assistant's last reply instead"
        )
        in err
    )


def test_a_logged_warning_is_worded_as_the_commands_own(capsys, monkeypatch, tmp_path):
    """A library's warning printed "dialcheck: WARNING: ..." beside the command's own "dialcheck: warning: ...";
    both now say "warning:", and -v's info lines "info:". (pytest's handlers on the root logger would keep the
    command from installing its own: the test starts without them.)"""
    monkeypatch.setattr(logging.root, "handlers", [])
    monkeypatch.setattr(logging.root, "level", logging.root.level)
    code, _, err = _run(capsys, "-v", "probe", "triggers", "--out", str(tmp_path / "t.jsonl"))
    assert code == 2 and err == "dialcheck: error: no contexts: give --input and/or --source\n"
    logging.getLogger("dialcheck.detectors").warning("preparing %s", "the model")
    logging.getLogger("dialcheck.detectors").info("loaded")
    assert capsys.readouterr().err == "dialcheck: warning: preparing the model\ndialcheck: info: loaded\n"


def _close_stdin(monkeypatch, how: str) -> None:
    """Standard input as 'CMD <&-' leaves it (Python sets sys.stdin to None), or a stream already closed."""
    import io

    if how == "none":
        monkeypatch.setattr("sys.stdin", None)
    else:
        closed = io.TextIOWrapper(io.BytesIO(b'["Hi.", "Hello!"]\n'), encoding="utf-8")
        closed.close()
        monkeypatch.setattr("sys.stdin", closed)


@pytest.mark.parametrize(
    "command",
    [
        ["score", "-", "OUT", "--no-progress", "--model", "MODEL"],
        ["check", "-", "--model", "MODEL"],
        ["check", "-", "--json", "--model", "MODEL"],
        ["rerank", "-", "--model", "MODEL"],
        ["probe", "triggers", "--input", "-", "--out", "OUT"],
    ],
    ids=["score", "check", "check-json", "rerank", "probe"],
)
@pytest.mark.parametrize("stdin", ["none", "closed"])
def test_closed_stdin_is_an_error_naming_it_not_a_traceback(
    capsys, monkeypatch, tmp_path, tiny_detector_dir, stdin, command
):
    """'dialcheck score - o.jsonl <&-' (Python sets sys.stdin to None) ended in "TypeError: 'NoneType' object is
    not iterable", exit 1, check in an AttributeError, rerank in "'NoneType' object has no attribute 'read'", and
    probe read sys.stdin.buffer itself. All read standard input through io now: exit 2, the input named, no output
    written."""
    _close_stdin(monkeypatch, stdin)
    out = tmp_path / "o.jsonl"
    argv = [{"OUT": str(out), "MODEL": str(tiny_detector_dir)}.get(a, a) for a in command]
    code, _, err = _run(capsys, *argv)
    assert code == 2, err
    assert err == "dialcheck: error: <stdin>: standard input is closed\n"
    assert not out.exists()
