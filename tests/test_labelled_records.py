"""Labelled dialogues (``evaluate --data``, ``train --dialogues``, ``--calibrate-on``) are read as ``dialcheck
check`` reads a dialogue object: a record's ``"speaker"`` says which turn the label is about, and a ``"tau"`` is
refused, naming the file, line and field, instead of being ignored."""

import json

import pytest

from dialcheck.cli.common import read_labelled
from dialcheck.detectors import load_detector
from dialcheck.errors import InputError
from dialcheck.io import parse_dialogue, parse_example, read_examples
from dialcheck.training.data import labelled_dialogue_pairs
from helpers_chat import CHAT, TOOL_CALL
from helpers_cli import run_cli

# the assistant contradicts message 1 at message 3; the log ends with the user's message 4
ASSISTANT = {"messages": CHAT, "speaker": "assistant", "contradiction": True, "evidence": [1]}


def test_a_labelled_records_speaker_says_which_turn_its_label_is_about():
    # the label was taken to be about the user's last message: evidence [1] paired the assistant's turn with it
    ex = parse_example(ASSISTANT)
    assert ex.dialogue == parse_dialogue({"messages": CHAT[:4]}) and ex.label and ex.evidence == (1,)
    tool = parse_example({**ASSISTANT, "messages": [*CHAT[:4], TOOL_CALL]})  # an empty last message: fine
    assert tool.dialogue == ex.dialogue
    plain = parse_example({**ASSISTANT, "speaker": None})  # null: no speaker, the last turn as before
    assert len(plain.dialogue.turns) == 5
    pairs, _ = labelled_dialogue_pairs([ex])  # train --dialogues: the assistant's turns with its last reply
    assert [(p.first, p.second, p.label) for p in pairs] == [("I have two dogs.", "I never had dogs.", 1)]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"speaker": "bot"}, "speaker: no turn with text by bot (its speakers: assistant, user)"),
        ({"speaker": ""}, "speaker: empty (name the speaker whose turn is checked)"),
        ({"evidence": [3]}, "evidence: 3 is not an earlier turn (the turns before assistant's last turn, the one"),
        ({"tau": 0.2}, "tau: not a dialogue field; a labelled dialogue holds a dialogue and its gold label"),
        ({"threshold": None}, "threshold: not a dialogue field"),
    ],
)
def test_a_bad_speaker_or_a_threshold_in_a_labelled_record_is_named(change, message):
    with pytest.raises(InputError) as e:
        parse_example({**ASSISTANT, **change})
    assert str(e.value).startswith(message)


def _evaluate(capsys, tmp_path, model, records):
    """``dialcheck evaluate --model MODEL --data mine.jsonl --predictions p.jsonl`` on ``records`` (one a line): the
    data file, stderr and the prediction rows, the run having succeeded."""
    logs, preds = tmp_path / "mine.jsonl", tmp_path / "p.jsonl"
    logs.write_text("".join(json.dumps(x) + "\n" for x in records))
    argv = ["evaluate", "--model", str(model), "--data", str(logs), "--predictions", str(preds), "--no-progress"]
    code, _, err = run_cli(capsys, *argv)
    assert code == 0, err
    return logs, err, [json.loads(x) for x in preds.read_text().splitlines()]


def test_train_dialogues_skips_and_names_a_record_with_a_threshold(tmp_path, capsys):
    # the reader of train --dialogues (and --calibrate-on): a tau was ignored and the record trained on
    logs = tmp_path / "mine.jsonl"
    logs.write_text(json.dumps(ASSISTANT) + "\n" + json.dumps({**ASSISTANT, "eta_e": 0.4}) + "\n")
    examples, skipped = read_labelled(str(logs))
    assert skipped == 1 and len(examples) == 1 and examples[0].dialogue.last.text == "I never had dogs."
    err = capsys.readouterr().err
    assert f"dialcheck: skipped: {logs}, line 2: eta_e: not a dialogue field;" in err


def test_evaluate_data_scores_a_records_speakers_turn_and_skips_a_threshold(tmp_path, capsys, tiny_detector_dir):
    lines = [ASSISTANT, {**ASSISTANT, "tau": 0.9}, {"messages": CHAT[:4], "contradiction": True, "evidence": [1]}]
    logs, err, rows = _evaluate(capsys, tmp_path, tiny_detector_dir, lines)
    assert f"dialcheck: skipped {logs}, line 2: tau: not a dialogue field;" in err
    assert "skipped 1 of 3 records" in err
    assert [r["id"] for r in rows] == ["mine.jsonl:1", "mine.jsonl:3"]
    want = load_detector(tiny_detector_dir).predict([parse_dialogue({"messages": CHAT[:4]})])[0]
    assert rows[0]["score"] == pytest.approx(want.score, abs=1e-6) == rows[1]["score"]
    examples, errors = read_examples(logs)
    assert [e.dialogue.last.text for e in examples] == ["I never had dogs."] * 2 and len(errors) == 1


def test_evaluate_predictions_name_the_turn_a_records_speaker_made_the_checked_one(tmp_path, capsys, tiny_detector_dir):
    # the rows said the verdict but not which turn it was about (check --json --speaker and score write "turn")
    from dialcheck.schema import Verdict

    lines = [
        ASSISTANT,  # cut after message 3: the user's message 4 is not checked
        {**ASSISTANT, "messages": [*CHAT, TOOL_CALL]},  # a tool call after it: still message 3
        {"messages": CHAT[:3], "contradiction": False},  # no speaker: its last turn, 2
    ]
    _, _, rows = _evaluate(capsys, tmp_path, tiny_detector_dir, lines)
    assert [r["turn"] for r in rows] == [3, 3, 2]
    assert [r["gold_evidence"] for r in rows] == [[1], [1], []]  # in the same (the record's) turn indices
    for r in rows:  # read back as a verdict, "turn" beside it
        assert Verdict.from_dict(r).score == r["score"]
