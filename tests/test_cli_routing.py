"""The command line across commands: how ``--model default`` routes, warnings of a model reading a language it
was not trained on, and how bad records of ``evaluate --data`` are reported."""

import json

from helpers_cli import run_cli as _run

LABELLED = [
    json.dumps({"id": "p1", "turns": ["I have two dogs.", "Nice!", "I never had dogs."], "contradiction": True}),
    json.dumps({"turns": ["I like jazz.", "Me too.", "Miles Davis is my hero."], "contradiction": False}),
    "not json",
    json.dumps({"turns": ["I live in Paris.", "Nice!", "I live in Rome."], "contradiction": True}),
]


def test_evaluate_data_names_each_skipped_record_once_then_counts_them(capsys, caplog, tmp_path, tiny_detector_dir):
    # each skipped record was reported twice: a log line, then again as the summary's "first:"
    logs = tmp_path / "mylogs.jsonl"
    lines = [*LABELLED, json.dumps({"turns": ["a", "b"], "contradiction": "yes"})]
    logs.write_text("\n".join(lines) + "\n")
    code, _, err = _run(
        capsys, "evaluate", "--model", str(tiny_detector_dir), "--data", str(logs), "--no-progress", "--threads", "1"
    )
    assert code == 0, err
    assert err.count("line 3: invalid JSON") == 1 and err.count("line 5: contradiction") == 1
    assert f"dialcheck: skipped {logs}, line 3: invalid JSON" in err
    assert f"dialcheck: skipped {logs}, line 5: contradiction: expected true or false, got string" in err
    assert f"dialcheck: {logs}: skipped 2 of 5 records (each named above); split mylogs holds the other 3" in err
    assert "skipped" not in caplog.text  # the library's own log does not name them again


def test_model_default_names_no_model_in_every_command_that_takes_one():
    # one place: the type of --model, so no command can run the English default on everything again
    from dialcheck.cli import build_parser

    parser = build_parser()
    for argv in (["check", "in.json"], ["score", "in.jsonl", "out.jsonl"], ["evaluate"], ["serve"], ["rerank", "x"]):
        assert parser.parse_args([*argv, "--model", "default"]).model is None, argv
        assert parser.parse_args([*argv, "-m", "runs/mine"]).model == "runs/mine", argv
