"""A reading option the model named with ``--model`` does not read is refused, not dropped without a word."""

from __future__ import annotations

import argparse
import json

import pytest

from dialcheck.cli import common
from dialcheck.detectors import FlatCategoryDetector
from dialcheck.errors import InputError
from helpers_cli import run_cli


def _args(*argv: str, model: str | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    common.add_reading_options(parser)
    args = parser.parse_args(list(argv))
    args.tau = args.eta_e = None
    args.model = model
    return args


@pytest.mark.parametrize("cmd", ["check", "score"])
def test_history_on_a_named_english_model_is_refused(capsys, tmp_path, tiny_detector_dir, cmd):
    # --history frames (four-category detectors only) was dropped: the verdicts came back as if it were not given
    logs = tmp_path / "logs.jsonl"
    logs.write_text(json.dumps({"turns": ["I have a dog.", "Nice.", "I have no dog."]}) + "\n")
    out = [str(tmp_path / "out.jsonl")] if cmd == "score" else []
    argv = [cmd, str(logs), *out, "--model", str(tiny_detector_dir), "--history", "frames"]
    code, stdout, err = run_cli(capsys, *argv)
    assert code == 2 and "Traceback" not in err, err
    assert "--history applies to four-category (Chinese)" in err and "decode.utterance.v1" in err, err
    assert stdout == "" and not (tmp_path / "out.jsonl").exists()


def test_vocabulary_on_a_named_english_model_is_refused(capsys, tmp_path, tiny_detector_dir):
    vocab = tmp_path / "v.json"
    vocab.write_text('{"city": ["boston"]}')
    src = tmp_path / "d.json"
    src.write_text(json.dumps(["I live in Boston.", "Nice.", "I have never been to Boston."]))
    code, _, err = run_cli(capsys, "check", str(src), "--model", str(tiny_detector_dir), "--vocabulary", str(vocab))
    assert code == 2 and "--vocabulary applies to the task-oriented" in err and "Traceback" not in err, err


def test_utterance_readings_on_a_named_four_category_model_are_refused_but_routing_keeps_quiet():
    det = FlatCategoryDetector()
    with pytest.raises(InputError, match="--ellipsis applies to utterance-based English detectors"):
        common.configure(det, _args("--ellipsis", "resolve", model="my-chinese-model"))
    # without --model the option is for the defaults that read it (the English one), not the Chinese route
    common.configure(det, _args("--ellipsis", "resolve", "--history", "frames", model=None))
    assert det.history == "frames"
