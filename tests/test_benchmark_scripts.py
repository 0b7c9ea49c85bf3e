"""The benchmark scripts as a user runs them (``python benchmarks/x.py ...``): a user error is one line and exit
status 2, as ``dialcheck`` does, never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
SCRIPTS = sorted(p.name for p in BENCHMARKS.glob("[a-z]*.py"))


def _run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=120, cwd=cwd)


def test_a_missing_data_directory_is_one_line_and_status_2(tmp_path):
    """Every script that reads the corpora printed a traceback ending in InputError and exited 1."""
    r = _run(str(BENCHMARKS / "turn_lengths.py"), "--data-dir", str(tmp_path / "nowhere"))
    assert r.returncode == 2, r.stderr
    assert r.stderr == f"turn_lengths.py: error: data directory {tmp_path / 'nowhere'} does not exist\n"


def test_a_missing_file_named_on_the_command_line_is_one_line_and_status_2(tmp_path, data_root):
    r = _run(str(BENCHMARKS / "question_cue.py"), "--data-dir", str(data_root), "--predictions", "none.jsonl")
    assert r.returncode == 2, r.stderr
    assert r.stderr == "question_cue.py: error: none.jsonl: no such file\n"  # not "corpus file is missing"


@pytest.mark.parametrize("script", SCRIPTS)
def test_every_script_runs_its_main_through_the_user_error_handler(script):
    text = (BENCHMARKS / script).read_text(encoding="utf-8")
    block = text[text.index('if __name__ == "__main__":') :]
    assert "from _cli import run" in block and "run(main" in block


@pytest.mark.parametrize(
    ("args", "message"),
    [
        # StopIteration traceback (a share below 0), or a cut "at most 200% of them" (above 1)
        (["turn_lengths.py", "--share", "-1"], "argument --share: must lie in [0, 1], got -1"),
        # random.sample's ValueError, after minutes of building neighbour pairs
        (["neighbour_sample.py", "--n", "-3"], "argument --n: must be at least 1, got -3"),
        # ValueError from the training data builder, after the corpora were read
        (["decode_pair_overlap.py", "--augment", "restate,bogus"], "argument --augment: unknown: bogus"),
        # scikit-learn's InvalidParameterError after both splits were read
        (["cdconv_lexical_baseline.py", "--C", "-1"], "argument --C: must be above 0, got -1"),
        # an empty set of dialogues, an IndexError after the model was loaded
        (["throughput.py", "--n", "0"], "argument --n: must be at least 1, got 0"),
        (["latency.py", "--threads", "0"], "argument --threads: must be at least 1, got 0"),
    ],
    ids=["share", "n-sample", "augment", "C", "n-throughput", "threads-latency"],
)
def test_bad_numbers_and_names_are_refused_when_the_command_line_is_read(args, message):
    r = _run(str(BENCHMARKS / args[0]), *args[1:])
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.splitlines()[-1].startswith(f"{args[0]}: error: {message}")


def test_latency_names_a_missing_data_directory_before_its_measuring_processes_start(tmp_path):
    """The measuring child process failed with a traceback, and the parent then raised CalledProcessError."""
    r = _run(str(BENCHMARKS / "latency.py"), "--data-dir", str(tmp_path / "nowhere"))
    assert r.returncode == 2, r.stderr
    assert r.stderr == f"latency.py: error: data directory {tmp_path / 'nowhere'} does not exist\n"


def test_long_turns_runs_on_a_cascade_and_sets_the_piece_size_of_both_stages(
    load_benchmark, tiny_detector_dir, data_root, monkeypatch, capsys
):
    """The documented `python benchmarks/long_turns.py` stopped at once on the shipped default, a cascade, with
    "ModelError: a cascade has two detectors" (it asked for det.classifier), and --chunk-tokens set an attribute
    the cascade does not pass on to its stages."""
    from dialcheck.detectors import load_detector
    from dialcheck.detectors.cascade import CascadeDetector

    first, second = load_detector(tiny_detector_dir), load_detector(tiny_detector_dir)
    det = CascadeDetector.build(first, second, low=0.0, high=1.0)
    monkeypatch.setattr("dialcheck.api.load", lambda model=None: det)
    argv = ["--sets", "dev", "--dev", "3", "--threads", "1", "--chunk-tokens", "8", "--data-dir", str(data_root)]
    monkeypatch.setattr(sys, "argv", ["long_turns.py", *argv])
    load_benchmark("long_turns").main()
    out = capsys.readouterr().out
    assert "| dev (first 3) | LT, chunk (default) |" in out and "| dev (first 3) | LT, truncate |" in out
    assert first.chunk_tokens == second.chunk_tokens == 8 and det.long_turns == "chunk"


def test_lm_paraphrase_try_reads_its_arguments_before_loading_a_language_model(tmp_path):
    """It had no argument parser: --help or --data-dir were ignored and the script loaded SmolLM2 and generated
    for a minute from the default data directory, reading the corpus file around its adapter."""
    r = _run(str(BENCHMARKS / "lm_paraphrase_try.py"), "--help")
    assert r.returncode == 0 and r.stdout.startswith("usage: lm_paraphrase_try.py"), r.stderr
    r = _run(str(BENCHMARKS / "lm_paraphrase_try.py"), "--data-dir", str(tmp_path / "nowhere"))
    assert r.returncode == 2 and r.stderr.startswith("lm_paraphrase_try.py: error: data directory"), r.stderr


def test_question_cue_reads_the_corpus_through_its_adapters(tmp_path):
    """It read DECODE's files with json.loads around the adapters: a bad line was a JSONDecodeError traceback
    naming no file, and a record without a field a KeyError."""
    pairs = tmp_path / "decode" / "partial_from_formatted" / "train_structured_pairs.jsonl"
    pairs.parent.mkdir(parents=True)
    pairs.write_text('{"prev_utterance": "a", "last_utterance": "b?", "label": 1}\n{"prev_utterance": "a"}\n')
    r = _run(str(BENCHMARKS / "question_cue.py"), "--data-dir", str(tmp_path))
    assert r.returncode == 2, r.stderr
    assert r.stderr == f"question_cue.py: error: {pairs}, line 2: last_utterance: missing\n"


def test_scripts_find_the_data_directory_as_dialcheck_does(tmp_path):
    """trigger_check.py defaulted to the literal ../shared/data (so $DIALCHECK_DATA_DIR was ignored), and the
    help of citod_history_dialogues.py and circa_statement_dialogues.py named $DIALCHECK_DATA, which nothing
    reads, and took only --data where every other script takes --data-dir."""
    import os

    empty = tmp_path / "corpora"
    empty.mkdir()
    env = dict(os.environ, DIALCHECK_DATA_DIR=str(empty))
    cmd = [sys.executable, str(BENCHMARKS / "trigger_check.py"), "sample", "--out", str(tmp_path / "sheet.md")]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith(f"trigger_check.py: error: {empty / 'decode' / 'human-bot.jsonl'}: corpus file")
    for script in ("citod_history_dialogues.py", "circa_statement_dialogues.py"):
        r = _run(str(BENCHMARKS / script), "--help")
        assert "$DIALCHECK_DATA_DIR" in " ".join(r.stdout.split()), r.stdout
        r = _run(str(BENCHMARKS / script), "--out", str(tmp_path / "o.jsonl"), "--data-dir", str(tmp_path / "none"))
        assert r.returncode == 2 and f"data directory {tmp_path / 'none'} does not exist" in r.stderr, r.stderr
