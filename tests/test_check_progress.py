"""``dialcheck check`` on many dialogues: verdicts written chunk by chunk as they are made, the same as the library's,
and a progress bar counting the dialogues on a terminal."""

from __future__ import annotations

import io
import json

import pytest

from helpers_calls import record_calls
from helpers_cli import run_cli

DIALOGUES = [
    {"id": "c1", "turns": ["I have two dogs.", "What breed?", "Labradors.", "Cute!", "I never had dogs."]},
    ["Hi.", "Hello!"],
    ["Only one turn."],
    {"id": "t", "turns": ["I like tea.", "Me too.", "I hate tea."]},
    ["Do you have kids?", "Yes, two daughters.", "Nice.", "I have no children."],
    {"turns": ["I live in Ohio.", "Cool.", "I moved to Texas last year."]},
    ["I am 29.", "Me too.", "When I was 35 I lived in Paris."],
]


class _Terminal(io.StringIO):
    """Standard output and error both on one terminal."""

    def isatty(self) -> bool:
        return True


@pytest.fixture
def many(tmp_path):
    p = tmp_path / "many.jsonl"
    p.write_text("".join(json.dumps(d) + "\n" for d in DIALOGUES))
    return p


@pytest.mark.parametrize("as_json", [True, False])
def test_check_in_chunks_writes_what_the_library_predicts_for_all_at_once(
    capsys, monkeypatch, many, tiny_detector_dir, as_json
):
    import dialcheck
    from dialcheck.cli import check
    from dialcheck.io import parse_dialogue

    monkeypatch.setattr(check, "CHUNK", 3)
    flags = ["--json"] if as_json else []
    code, out, err = run_cli(capsys, "check", str(many), *flags, "--model", str(tiny_detector_dir), "--tau", "0.5")
    assert code == 0, err
    dialogues = [parse_dialogue(d) for d in DIALOGUES]
    verdicts = dialcheck.predict(dialogues, model=tiny_detector_dir)
    if as_json:
        want = [
            json.dumps({"id": d.meta.get("id"), **v.to_dict()}, ensure_ascii=False)
            for d, v in zip(dialogues, verdicts, strict=True)
        ]
        assert out.splitlines() == want
    else:
        assert out == "".join(
            check.render(i, d, v) + "\n" for i, (d, v) in enumerate(zip(dialogues, verdicts, strict=True))
        )


def _check_on_a_terminal(monkeypatch, many, tiny_detector_dir) -> str:
    """What a terminal shows (stdout and stderr on one stream) of check --json on ``many``, in chunks of 3, the bar
    shown at once."""
    from dialcheck.cli import check, main

    monkeypatch.setattr(check, "CHUNK", 3)
    monkeypatch.setattr(check, "PROGRESS_DELAY", 0.0)
    term = _Terminal()
    monkeypatch.setattr("sys.stdout", term)
    monkeypatch.setattr("sys.stderr", term)
    assert main(["check", str(many), "--json", "--model", str(tiny_detector_dir)]) == 0
    return term.getvalue()


def test_check_shows_a_bar_counting_dialogues_on_a_terminal_and_clears_it_before_each_chunk(
    monkeypatch, many, tiny_detector_dir
):
    """check showed nothing until its last verdict: on a file of many dialogues, minutes without a sign. On a
    terminal a bar now counts the dialogues checked, taken off the line before each chunk's verdicts are written (a
    verdict never follows the bar on its line) and put back under them."""
    text = _check_on_a_terminal(monkeypatch, many, tiny_detector_dir)
    assert "checking:" in text and "3/7" in text and "6/7" in text and "7/7" in text and "dialogue/s" in text
    shown = [line.rsplit("\r", 1)[-1] for line in text.split("\n")]  # what each line of the terminal ends up as
    verdicts = [line for line in shown if line.strip()]
    assert [json.loads(line)["id"] for line in verdicts] == ["c1", None, None, "t", None, None, None]
    assert not text.endswith("\n") and not shown[-1].strip()  # the bar is gone at the end (leave=False)


def test_check_draws_the_bar_once_after_each_chunk(monkeypatch, many, tiny_detector_dir):
    """The bar was drawn twice after each chunk (by update(), then by the refresh meant for when update() drew nothing,
    too soon after its last draw): each count is now drawn once."""
    from tqdm import auto

    class Eager(auto.tqdm):  # update() draws whenever the count moves: never too soon after the last draw
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **{**kwargs, "mininterval": 0})

    monkeypatch.setattr(auto, "tqdm", Eager)
    text = _check_on_a_terminal(monkeypatch, many, tiny_detector_dir)
    assert [text.count(f"{n}/7") for n in (3, 6, 7)] == [1, 1, 1]


@pytest.mark.parametrize("flag", [[], ["--no-progress"]])
def test_check_shows_no_bar_off_a_terminal_or_with_no_progress(capsys, monkeypatch, many, tiny_detector_dir, flag):
    from dialcheck.cli import check

    monkeypatch.setattr(check, "CHUNK", 3)
    monkeypatch.setattr(check, "PROGRESS_DELAY", 0.0)
    if flag:
        monkeypatch.setattr("sys.stderr.isatty", lambda: True)
    code, out, err = run_cli(capsys, "check", str(many), "--json", "--model", str(tiny_detector_dir), *flag)
    assert code == 0 and len(out.splitlines()) == 7
    assert "checking" not in err


def test_check_ends_a_chunk_of_long_dialogues_sooner(capsys, monkeypatch, tmp_path, tiny_detector_dir):
    """A chunk was CHUNK dialogues whatever their length: a file of long chat logs was checked for minutes before
    its first verdict or a move of the bar. Long turns now end a chunk sooner, as in score."""
    from dialcheck.cli import check

    monkeypatch.setattr(check, "CHUNK", 4)
    sizes = record_calls(monkeypatch, check, "predict_for", lambda args, dialogues: len(dialogues))
    # 2,800 characters (counted twice: two pieces of 1,000 and more) and 1,900: over the 4,000 of a chunk of 4
    long = ["I have a dog. " * 200, "Nice.", "I never had a dog. " * 100]
    p = tmp_path / "long.jsonl"
    p.write_text("".join(json.dumps(t) + "\n" for t in [long, ["Hi.", "Hello!"], long, long, ["a", "b"]]))
    code, out, err = run_cli(capsys, "check", str(p), "--json", "--model", str(tiny_detector_dir))
    assert code == 0, err
    assert sizes == [1, 2, 1, 1] and len(out.splitlines()) == 5
