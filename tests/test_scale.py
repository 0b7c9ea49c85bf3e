"""Scale: work per record that a batch of chat logs pays for each of its (up to millions of) records. Each test
checks the behaviour behind a measured cost (calls made, lines parsed, what is read before the first output),
never a time."""

from __future__ import annotations

import json
import unicodedata

import pytest

from dialcheck import language
from dialcheck.schema import Dialogue
from helpers_calls import record_calls
from helpers_cli import run_cli


class _CountingUnicodedata:
    """``unicodedata`` with its per-character calls counted."""

    def __init__(self) -> None:
        self.calls = 0

    def __getattr__(self, name: str):
        fn = getattr(unicodedata, name)

        def counted(*args):
            self.calls += 1
            return fn(*args)

        return counted


def test_english_turns_are_read_for_their_script_without_a_unicode_lookup_per_character(monkeypatch):
    # score --model calls foreign_turns on every record: per character it cost 11 s of CPU per 100,000 dialogues
    # of 6 short turns (a quarter of a tiny model's run); an ASCII turn is Latin letters or none
    counting = _CountingUnicodedata()
    monkeypatch.setattr(language, "unicodedata", counting)
    d = Dialogue.from_texts(["Do you have a dog?", "Yes, two dogs: Rex & Fido (3 years old)!", "I never had pets."])
    assert language.foreign_turns(d, "en") == []
    assert language.foreign_turns(d, "zh") == [0, 1, 2]
    assert language.dialogue_language(d) == "other"
    assert counting.calls == 0


@pytest.mark.parametrize(
    "text, script",
    [
        ("I had a café crème in Zürich 😀", None),
        ("I met Сергей there.", None),
        ("Привет, как дела? ok", "Cyrillic"),
        ("我养了一只狗 ok ok", "Chinese"),
        ("犬を飼っています dog", "Japanese"),
        ("I'm ʼokʼ", None),
        ("ab 안녕하세요", "Korean"),
        ("a\u00a0b", None),
    ],
)
def test_the_script_of_a_turn_mixing_ascii_and_other_letters_counts_each_ascii_letter_as_latin(text, script):
    assert language.turn_script(text) == script


def _log(tmp_path, n=9, turns=3):
    lines = [
        json.dumps({"id": f"d{i}", "turns": [f"I like tea {i}.", "Me too.", "I drink tea."][:turns]})
        for i in range(1, n + 1)
    ]
    p = tmp_path / "log.jsonl"
    p.write_text("\n".join(lines) + "\n")
    return p


def test_score_resume_parses_only_the_lines_it_scores(capsys, monkeypatch, tmp_path, tiny_detector_dir):
    # --resume parsed every finished line into a dialogue once more, only to pass it over (and its input check had
    # read each as JSON already): resuming 1,000,000 finished lines took 23.8 s of CPU, now 14.1 s
    from dialcheck import io

    log, full, part = _log(tmp_path), tmp_path / "full.jsonl", tmp_path / "part.jsonl"
    model = ["--model", str(tiny_detector_dir), "--no-progress"]
    assert run_cli(capsys, "score", str(log), str(full), *model)[0] == 0
    rows = full.read_text().splitlines(keepends=True)
    part.write_text("".join(rows[:5]) + rows[5][:20])  # lines 1-5 and a torn sixth: line 5 may be incomplete
    calls = record_calls(monkeypatch, io, "parse_dialogue", lambda obj, *a, **k: obj.get("id"))
    code, _, err = run_cli(capsys, "score", str(log), str(part), *model, "--resume")
    assert code == 0 and "(4 already done)" in err
    assert part.read_text() == full.read_text()
    assert calls == ["d5", "d6", "d7", "d8", "d9"]


def test_score_resume_every_turn_keeps_the_finished_lines_and_scores_the_last_one_again(
    capsys, tmp_path, tiny_detector_dir
):
    log, full, part = _log(tmp_path, n=4), tmp_path / "full.jsonl", tmp_path / "part.jsonl"
    model = ["--model", str(tiny_detector_dir), "--no-progress", "--every-turn"]
    assert run_cli(capsys, "score", str(log), str(full), *model)[0] == 0
    rows = full.read_text().splitlines(keepends=True)
    assert [json.loads(r)["line"] for r in rows] == [1, 1, 2, 2, 3, 3, 4, 4]
    part.write_text("".join(rows[:5]))  # line 3 has one of its two records: scored again
    code, _, err = run_cli(capsys, "score", str(log), str(part), *model, "--resume")
    assert code == 0 and "(2 already done)" in err
    assert part.read_text() == full.read_text()


def test_resume_reads_the_output_a_line_at_a_time_and_keeps_only_its_finished_lines(monkeypatch, tmp_path):
    # read_resume read OUT whole and kept each record's line and id: resuming a run of 1,000,000 lines peaked at
    # 748 MB (the tiny model's run alone: 419 MB), now at 419 MB
    from pathlib import Path

    from dialcheck.cli.score import LineSet, read_resume

    out = tmp_path / "out.jsonl"
    rows = [{"line": n, "id": f"d{n}"} for n in (1, 2, 2, 4, 7, 7)]
    out.write_text("".join(json.dumps(r) + "\n" for r in rows) + '{"line": 8, "id"')
    monkeypatch.setattr(Path, "read_bytes", lambda self: pytest.fail("OUT was read whole"))
    point = read_resume(out)
    assert isinstance(point.done, LineSet) and len(point.done) == 3
    assert [n for n in range(10) if n in point.done] == [1, 2, 4]
    assert (point.last, point.last_at) == (7, 5)
    assert point.keep_upto == len("".join(json.dumps(r) + "\n" for r in rows[:4]).encode())
    assert list(point.held()) == [(1, 1, "d1"), (2, 2, "d2"), (4, 4, "d4"), (7, 5, "d7")]
    # each finished line is added once, as OUT moves past it: a line added again (which passed unseen) or out of
    # order is a mistake in the caller
    done = LineSet()
    done.add(7)
    for again in (7, 5):
        with pytest.raises(ValueError, match=f"line {again} added after line 7"):
            done.add(again)
    assert len(done) == 1


@pytest.mark.parametrize(
    "turns, extra, chunks",
    [
        (["I like tea.", "Me too.", "I drink tea every day. " * 65], [], [2, 2, 2]),  # 1,495 characters each
        (["I like tea.", "Me too."] * 20, ["--every-turn"], [1] * 6),  # 40 turns, each checked
        (["I like tea.", "Me too.", "I drink tea."], [], [3, 3]),  # short: --chunk-size dialogues a chunk
    ],
)
def test_score_ends_a_chunk_of_long_dialogues_before_chunk_size(
    capsys, monkeypatch, tmp_path, tiny_detector_dir, turns, extra, chunks
):
    # a chunk was --chunk-size dialogues whatever their length: 12 dialogues with turns of 20,000 characters were
    # scored in one chunk (75 s, the bar at 0/12 all along; 100 of them took 1.5 GB, growing), now one a chunk
    # (the bar moves after each; 450 MB); 200 dialogues of 400 turns moved the bar once, now every 16
    from dialcheck.cli import score

    sizes = record_calls(monkeypatch, score, "predict_for", lambda args, dialogues: len(dialogues))
    log, out = tmp_path / "log.jsonl", tmp_path / "out.jsonl"
    log.write_text("".join(json.dumps({"turns": turns}) + "\n" for _ in range(6)))
    model = ["--model", str(tiny_detector_dir), "--no-progress", "--chunk-size", "3"]
    assert run_cli(capsys, "score", str(log), str(out), *model, *extra)[0] == 0
    units = (len(turns) - 1) if extra else 1
    assert sizes == [n * units for n in chunks]
    assert len(out.read_text().splitlines()) == 6 * units


def test_check_writes_its_verdicts_chunk_by_chunk_once_every_dialogue_is_read(
    capsys, monkeypatch, tmp_path, tiny_detector_dir
):
    # check scored all dialogues in one call and wrote nothing before the last verdict: on 100,000 dialogues every
    # pair and verdict was held at once (peak 724 MB, now 623 MB; a tiny model's score run: 450 MB)
    from dialcheck.cli import check

    log = _log(tmp_path, n=5)
    monkeypatch.setattr(check, "CHUNK", 2)
    seen = record_calls(  # each call's dialogues and the verdicts written before it
        monkeypatch, check, "predict_for", lambda args, dialogues: (len(dialogues), capsys.readouterr().out.count("\n"))
    )
    assert run_cli(capsys, "check", str(log), "--json", "--model", str(tiny_detector_dir))[0] == 0
    assert seen == [(2, 0), (2, 2), (1, 2)]


def test_a_file_read_whole_is_held_once_as_text_not_also_as_bytes_and_a_stringio(tmp_path):
    # check reads its input whole (every record is checked before any is scored): the file's bytes, a StringIO
    # (4 bytes a character) and the text read from it were all held while the records were read: 8.2 bytes a
    # byte of input before the first record; reading 1,000,000 dialogues peaked at 4.19 GB, now 2.75 GB
    import os
    import tracemalloc

    from dialcheck.io import read_dialogues

    log = tmp_path / "log.jsonl"
    turns = ["Do you have any pets at home these days?", "I have two dogs and a cat, they are lovely.", "Nice!"] * 2
    log.write_text("".join(json.dumps({"id": f"d{i}", "turns": turns}) + "\n" for i in range(1000)))
    tracemalloc.start()
    try:
        records = read_dialogues(log, checking=True)
        assert next(records).ok
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert held < 5 * os.path.getsize(log)  # the text, its lines (each a string) and the first record


def test_batch_scorer_looks_its_detector_up_once_a_batch_and_scores_a_large_batch_in_chunks(
    monkeypatch, tiny_detector_dir
):
    # BatchScorer called api.load (a path resolved and looked up) once a row, and scored a whole batch in one call:
    # a 100,000-row mapping held every pair at once (peak 724 MB, now 673 MB; same scores)
    from dialcheck import api, batch

    scorer = batch.BatchScorer(tiny_detector_dir)
    loads = record_calls(monkeypatch, api, "load", lambda *a, **k: a)
    sizes = record_calls(monkeypatch, api, "predict_grouped", lambda dialogues, *a, **k: len(dialogues))
    monkeypatch.setattr(batch, "CHUNK", 3)
    turns = [["I like tea.", "Me too.", f"I drink tea {i}."] for i in range(7)]
    out = scorer({"turns": [*turns[:2], "oops", *turns[2:]]})
    assert len(loads) == 1 and sizes == [3, 3, 1]
    assert out["error"][2] is not None and sum(e is None for e in out["error"]) == 7
    alone = batch.BatchScorer(tiny_detector_dir)({"turns": turns[6:]})
    assert alone["score"][0] == out["score"][7]


@pytest.mark.parametrize("line", [0, -3])
def test_resume_refuses_an_output_line_of_no_input_line(tmp_path, line):
    # a line of 0 or less is no score output's
    from dialcheck.cli.score import read_resume
    from dialcheck.errors import InputError

    out = tmp_path / "out.jsonl"
    out.write_text(json.dumps({"line": line, "id": "a"}) + "\n" + json.dumps({"line": 1, "id": "b"}) + "\n")
    with pytest.raises(InputError, match="line 1: cannot resume: not a dialcheck score output line"):
        read_resume(out)


def test_resume_on_an_output_whose_line_numbers_run_into_the_billions_takes_no_more_memory(tmp_path):
    # the finished lines were kept a byte a line up to the largest: a damaged OUT naming line 4,000,000,000
    # allocated 4 GB before the input was compared with it (a MemoryError traceback under a memory limit)
    import resource
    import subprocess
    import sys

    out = tmp_path / "out.jsonl"
    out.write_text("".join(json.dumps({"line": n, "id": "a"}) + "\n" for n in (1, 4_000_000_000, 4_000_000_001)))
    code = f"from pathlib import Path; from dialcheck.cli.score import read_resume; p = read_resume(Path({str(out)!r}))"
    code += "; print(len(p.done), p.last)"

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1_500_000_000, 1_500_000_000))

    run = subprocess.run([sys.executable, "-c", code], preexec_fn=limit, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr[-500:]
    assert run.stdout.split() == ["2", "4000000001"]
