"""``dialcheck score IN OUT`` with OUT a device or a named pipe: written in place, as standard output is."""

from __future__ import annotations

import json
import os
import threading

import pytest

from helpers_cli import run_cli


def _logs(tmp_path):
    logs = tmp_path / "logs.jsonl"
    logs.write_text(json.dumps({"turns": ["I have a dog.", "Nice.", "I have no dog."]}) + "\n" + "not json\n")
    return logs


def test_score_to_dev_null_needs_no_overwrite(capsys, tmp_path, tiny_detector_dir):
    # "output exists: pass --resume ... or --overwrite" for /dev/null, when only the --errors file was wanted
    errors = tmp_path / "errors.jsonl"
    argv = ["score", str(_logs(tmp_path)), os.devnull, "--errors", str(errors), "--no-progress"]
    code, _, err = run_cli(capsys, *argv, "--model", str(tiny_detector_dir))
    assert code == 0, err
    assert "scored 1 dialogue" in err and [json.loads(x)["line"] for x in errors.read_text().splitlines()] == [2]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_score_resume_into_a_named_pipe_is_refused_before_reading_it(capsys, tmp_path, tiny_detector_dir):
    # --resume read the pipe to find the finished lines, and waited for a writer that never came
    pipe = tmp_path / "out.pipe"
    os.mkfifo(pipe)
    done = threading.Event()

    def writer() -> None:  # should the pipe be read after all, end that read (EOF) instead of hanging the tests
        while not done.wait(0.2):
            try:
                os.close(os.open(pipe, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:  # no reader yet
                continue

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    try:
        argv = ["score", str(_logs(tmp_path)), str(pipe), "--resume", "--no-progress"]
        code, _, err = run_cli(capsys, *argv, "--model", str(tiny_detector_dir))
    finally:
        done.set()
        t.join()
    assert code == 2 and "--resume needs an output file" in err and "Traceback" not in err, err
