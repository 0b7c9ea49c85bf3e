"""`probe triggers --resume`: each finished batch is kept beside --out as it is made (OUT.part, OUT.resume.json),
an interrupted run continues where it stopped and writes what an uninterrupted run writes, and a resume with other
settings is refused. spaCy is a stand-in (helpers_triggers_en): no model, no WordNet needed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from dialcheck.cli import main
from dialcheck.probes import triggers
from helpers_cli import run_summary
from helpers_interrupt import kill_on_call
from helpers_triggers_en import TAGS, FakeNLP, fake_spacy

METHODS = "short_utterance,negation,inquire_bot"


@pytest.fixture
def nlp(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeNLP]:
    yield from fake_spacy(monkeypatch)


def _run(src: Path, out: str, *more: str) -> int:
    argv = ["probe", "triggers", "--language", "en", "--input", str(src), "--out", out, "--methods", METHODS]
    return main([*argv, "--batch-size", "2", "--no-progress", *more])


@pytest.fixture
def src(tmp_path: Path) -> Path:
    path = tmp_path / "ctx.jsonl"
    rows = [{"u1": u1, "b1": "Fine.", "id": f"c{i}"} for i, u1 in enumerate(TAGS)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_interrupted_english_run_resumes_to_the_uninterrupted_output(nlp: FakeNLP, src, tmp_path, capsys, monkeypatch):
    whole = tmp_path / "whole.jsonl"
    assert _run(src, str(whole)) == 0
    expected = run_summary(capsys.readouterr().err, whole)
    assert not list(tmp_path.glob("whole.jsonl.*"))  # the work files are removed once the output is written

    out = tmp_path / "t.jsonl"
    part, state = tmp_path / "t.jsonl.part", tmp_path / "t.jsonl.resume.json"
    kill_on_call(monkeypatch, nlp, "pipe", 2)  # killed while the second batch is parsed
    assert _run(src, str(out)) == 130
    err = capsys.readouterr().err
    assert "kept in t.jsonl.part: run the same command with --resume" in err
    # before: nothing was written until the end, and a killed run had to start over
    assert not out.exists()
    kept = [json.loads(x) for x in part.read_text(encoding="utf-8").splitlines()]
    assert {r["id"] for r in kept} == {"c0", "c1"} and state.is_file()

    monkeypatch.setattr(nlp, "pipe", FakeNLP.pipe.__get__(nlp))  # no more kills
    assert _run(src, str(out)) == 2  # a fresh run does not throw the finished batches away
    assert "pass --resume to continue it" in capsys.readouterr().err
    assert _run(src, str(out), "--resume", "--seed", "1") == 2
    err = capsys.readouterr().err
    assert "made otherwise (seed 0 -> 1)" in err and "give the options and inputs of that run" in err
    assert _run(src, str(out), "--resume", "--batch-size", "3") == 2
    assert "batch_size 2 -> 3" in capsys.readouterr().err
    assert part.read_text(encoding="utf-8").count("\n") == len(kept)  # a refused resume leaves the work as it was

    nlp.piped.clear()
    assert _run(src, str(out), "--resume") == 0
    err = capsys.readouterr().err
    assert "resuming: " in err and "(1 batch)" in err  # one batch, in the singular
    assert [batch[0] for batch in nlp.piped] == ["I am happy.", "He is tall."]  # only the missing contexts
    assert out.read_bytes() == whole.read_bytes()
    assert run_summary(err, out) == expected  # counts and skips of the kept batches included
    assert not part.exists() and not state.exists()


def test_resume_needs_an_output_file_and_stdout_is_written_batch_by_batch(nlp, src, capsys, monkeypatch):
    assert _run(src, "-", "--resume") == 2
    assert "--resume needs an --out file" in capsys.readouterr().err
    kill_on_call(monkeypatch, nlp, "pipe", 2)
    assert _run(src, "-") == 130
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert {r["id"] for r in rows} == {"c0", "c1"}  # the first batch was out before the kill (before: nothing)


def test_chinese_run_resumes_too(tmp_path, capsys, monkeypatch):
    src = tmp_path / "zh.jsonl"
    src.write_text("".join(json.dumps({"u1": f"我喜欢猫{i}。"}) + "\n" for i in range(5)), encoding="utf-8")
    argv = ["probe", "triggers", "--input", str(src), "--methods", "short_utterance", "--batch-size", "2"]
    whole, out = tmp_path / "whole.jsonl", tmp_path / "t.jsonl"
    assert main([*argv, "--out", str(whole), "--no-progress"]) == 0
    kill_on_call(monkeypatch, triggers, "run_methods", 3)
    assert main([*argv, "--out", str(out), "--no-progress"]) == 130
    monkeypatch.undo()
    capsys.readouterr()
    assert main([*argv, "--out", str(out), "--resume"]) == 0
    err = capsys.readouterr().err
    assert "resuming: 4 triggers of the interrupted run kept (2 batches)" in err
    assert "5/5" in err  # the bar starts at the 4 kept contexts
    assert out.read_bytes() == whole.read_bytes()


def test_a_resume_that_keeps_one_trigger_says_so_in_the_singular(tmp_path, capsys, monkeypatch):
    src = tmp_path / "zh.jsonl"
    src.write_text("".join(json.dumps({"u1": f"我喜欢猫{i}。"}) + "\n" for i in range(2)), encoding="utf-8")
    argv = ["probe", "triggers", "--input", str(src), "--methods", "short_utterance", "--batch-size", "1"]
    out = tmp_path / "t.jsonl"
    kill_on_call(monkeypatch, triggers, "run_methods", 2)
    assert main([*argv, "--out", str(out), "--no-progress"]) == 130
    monkeypatch.undo()
    assert main([*argv, "--out", str(out), "--no-progress"]) == 2
    assert "an interrupted run's triggers are kept in t.jsonl.part" in capsys.readouterr().err  # the plural kept
    assert main([*argv, "--out", str(out), "--no-progress", "--resume"]) == 0
    # before: "resuming: 1 triggers of the interrupted run kept"
    assert "resuming: 1 trigger of the interrupted run kept (1 batch)" in capsys.readouterr().err


def test_resume_without_work_builds_from_the_start(nlp, src, tmp_path, capsys):
    out = tmp_path / "t.jsonl"
    assert _run(src, str(out), "--resume") == 0
    assert "nothing to resume (no t.jsonl.resume.json): building from the start" in capsys.readouterr().err
    assert out.read_text(encoding="utf-8").count("\n") > 0
