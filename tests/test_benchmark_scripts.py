"""The benchmark scripts as a user runs them (``python benchmarks/x.py ...``): a user error is one line and exit
status 2, as ``dialcheck`` does, never a traceback."""

from __future__ import annotations

import argparse
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

from dialcheck.cli import common

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


def test_long_turns_shows_a_dash_for_the_precision_of_a_run_that_flags_nothing(
    load_benchmark, tiny_detector_dir, data_root, monkeypatch, capsys
):
    """decode_metrics leaves precision out when nothing is flagged (745aa86), and the table's m['precision'] then
    stopped the script with KeyError: 'precision'; it shows "–" as decode_tau_sweep.py does."""
    from dialcheck.detectors import load_detector

    det = load_detector(tiny_detector_dir)
    det.tau = det.eta_e = 1.0  # no score reaches 1: nothing is flagged
    monkeypatch.setattr("dialcheck.api.load", lambda model=None: det)
    argv = ["--sets", "dev", "--dev", "3", "--threads", "1", "--data-dir", str(data_root)]
    monkeypatch.setattr(sys, "argv", ["long_turns.py", *argv])
    load_benchmark("long_turns").main()
    rows = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("| dev (first 3) |")]
    assert len(rows) == 3 and all(ln.split(" | ")[3] == "– / 0.0" for ln in rows), rows  # precision / recall


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


# -- every number on a script's command line is checked when it is read ------------------------------------------


class _Parsed(BaseException):  # not an Exception: no script's ``except Exception`` may swallow it
    """Raised in place of parsing: carries the script's parser out of its main()."""


def _parser(load_benchmark, monkeypatch, script: str) -> argparse.ArgumentParser:
    """The argument parser ``script``'s main() builds, caught at its parse_args (so nothing else runs: no corpus
    read, no model loaded)."""

    def caught(self, args=None, namespace=None):
        raise _Parsed(self)

    monkeypatch.setattr(sys, "argv", [script])  # the parser's prog, as when run
    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", caught)
    main = load_benchmark(script[:-3]).main
    params = list(inspect.signature(main).parameters.values())
    with pytest.raises(_Parsed) as got:
        if params and params[0].default is inspect.Parameter.empty:
            main(_OWN_PARSER.get(script, []))
        else:
            main()
    return got.value.args[0]


# denial_kind_rule.py hands any other command line to dialcheck's own (after patching its reading rule in place).
_OWN_PARSER = {"denial_kind_rule.py": ["--count"]}


def _options(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()):
    """``(subcommand words, action)`` of every option of ``parser`` and its subcommands."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _options(sub, (*prefix, name))
        elif action.option_strings:
            yield prefix, action


# A seed read only by random.Random may be any int; numpy's and torch's seeds take seed_number.
_RANDOM_SEEDS = {"--seed"}
# One value each checked type refuses; any other type of the scripts' (comma lists, bands, fold counts, ...)
# refuses "-1".
_BAD = {
    common.positive_int: "0",
    common.nonnegative_int: "-1",
    common.seed_number: "-1",
    common.unit_float: "1.5",
    common.positive_float: "0",
    common.nonnegative_float: "-1",
    common.open_unit_float: "1",
    common.positive_unit_float: "0",
    common.unit_float_below_one: "1",
    common.token_window: "8",
    common.port_number: "70000",
}


def _scripts_own(kind: object) -> bool:
    """A type the benchmarks define (a band, a list of seeds, comma_list(...)) or comma_choices(...)."""
    module = getattr(kind, "__module__", "") or ""
    own = module == "dialcheck.cli.common" or not (module.startswith("dialcheck") or module == "builtins")
    return callable(kind) and kind is not Path and own


@pytest.mark.parametrize("script", SCRIPTS)
def test_no_number_on_the_command_line_is_a_bare_int_or_float(script, load_benchmark, monkeypatch):
    """About a hundred options were plain type=int or float: --n 0, --threads -1 or --tau 2 were taken and the
    script failed late (a traceback after the corpora or the model were read) or silently measured nothing."""
    bare = [
        " ".join((*words, action.option_strings[-1]))
        for words, action in _options(_parser(load_benchmark, monkeypatch, script))
        if action.type in (int, float) and action.choices is None
        if not (action.type is int and action.option_strings[-1] in _RANDOM_SEEDS)
    ]
    assert not bare, f"use a checked type of dialcheck.cli.common for {', '.join(bare)}"


@pytest.mark.parametrize("script", SCRIPTS)
def test_every_checked_number_refuses_a_bad_value_with_status_2(script, load_benchmark, monkeypatch, capsys):
    """Each option with a checked type, given a value out of its range, stops the parser with exit 2 and
    'script.py: error: argument --x: ...', before main() goes on to read or load anything."""
    parser = _parser(load_benchmark, monkeypatch, script)
    monkeypatch.undo()  # the real parse_args again
    checked = [
        (words, action)
        for words, action in _options(parser)
        if action.type in _BAD or _scripts_own(action.type) or (action.type is int and action.choices is not None)
    ]
    for words, action in checked:
        option = action.option_strings[-1]
        bad = _BAD.get(action.type, "-1")
        values = [bad] * action.nargs if isinstance(action.nargs, int) else [bad]
        with pytest.raises(SystemExit) as e:
            parser.parse_args([*words, option, *values])
        err = capsys.readouterr().err
        assert e.value.code == 2, (option, bad)
        assert f"error: argument {option}:" in err or f"error: argument {'/'.join(action.option_strings)}:" in err, err


# -- a user error found after the command line is read exits 2 too -----------------------------------------------

# Exits with a message that stay status 1: a run that failed, not one asked wrongly (the server under test stopped,
# or never answered /health).
_FAILED_RUNS = {"http_ab.py": 2, "latency.py": 2}


def _message_exits(path: Path) -> int:
    """How many ``raise SystemExit(<text>)`` / ``sys.exit(<text>)`` the file holds (a message: status 1)."""
    import ast

    n = 0
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], (ast.JoinedStr, ast.Constant)):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f"{getattr(f.value, 'id', '')}.{f.attr}"
            if name in ("SystemExit", "sys.exit") and isinstance(getattr(node.args[0], "value", ""), str):
                n += 1
    return n


@pytest.mark.parametrize("script", [*SCRIPTS, "_rows.py", "_sklearn.py"])
def test_no_user_error_is_a_systemexit_message(script):
    """About fifty places raised SystemExit("message") for a user's mistake (a predictions file without the split
    asked for, an audit of another draw, an output folder that exists): status 1 and no script name, where
    argparse and _cli.run say 'script.py: error: ...' with status 2. They raise InputError (or call the parser's
    error) now; only the failed runs in _FAILED_RUNS keep status 1."""
    assert _message_exits(BENCHMARKS / script) == _FAILED_RUNS.get(script, 0)


def test_run_maps_a_user_error_to_status_2_and_leaves_a_failed_check_at_1(load_benchmark, monkeypatch, capsys):
    from dialcheck.errors import InputError

    load_benchmark("turn_lengths")  # benchmarks/ on the import path, as when a script runs
    from _cli import run

    monkeypatch.setattr(sys, "argv", ["some_script.py"])

    def wrong(*_):
        raise InputError("needs human_bot rows", "p.jsonl")

    with pytest.raises(SystemExit) as e:
        run(wrong)
    assert e.value.code == 2
    assert capsys.readouterr().err == "some_script.py: error: p.jsonl: needs human_bot rows\n"
    assert run(lambda: 1) == 1  # a gate that is not met (default_gate.py) keeps its status


def test_a_former_systemexit_message_is_one_line_and_status_2(tmp_path):
    """hand_set_auc.py exited 1 with a bare message when no row carried the --prefix asked for."""
    pred = tmp_path / "p.jsonl"
    pred.write_text('{"id": "handd-1", "gold": true, "score": 0.9}\n{"id": "handd-2", "gold": false, "score": 0.1}\n')
    r = _run(str(BENCHMARKS / "hand_set_auc.py"), str(pred), "--prefix", "handz-")
    assert r.returncode == 2, r.stderr
    assert r.stderr == (
        f"hand_set_auc.py: error: {pred}: needs contradictions and consistent rows with ids starting 'handz-'\n"
    )


# -- names on the command line are checked when it is read too ----------------------------------------------------


@pytest.mark.parametrize(
    ("script", "args", "message"),
    [
        # a KeyError traceback after the model and all three DECODE splits were loaded
        ("ellipsis_variants.py", ["--variants", "all,lst"], "argument --variants: unknown: lst"),
        ("ellipsis_variants.py", ["--splits", "dev,a2t"], "argument --splits: unknown: a2t"),
        # a KeyError traceback after the model loaded
        ("single_check.py", ["--splits", "dev,humanbot"], "argument --splits: unknown: humanbot"),
        # trained nothing for the typo, silently (no Circa row has that scenario), after the others' folds
        ("circa_yesno.py", ["loso", "--out", "r.jsonl", "--folds", "food,fod"], "argument --folds: unknown: fod"),
        # an InputError only after CI-ToD was read, or (--domains ",") every domain
        ("citod_history_dialogues.py", ["--domains", "calendar,wether"], "argument --domains: unknown: wether"),
        ("citod_history_dialogues.py", ["--domains", ","], "argument --domains: name at least one of"),
    ],
    ids=["ellipsis-variants", "ellipsis-splits", "single-splits", "circa-folds", "citod", "citod-none"],
)
def test_a_name_list_with_a_typo_is_refused_when_the_command_line_is_read(
    script, args, message, load_benchmark, monkeypatch, capsys
):
    """These comma-separated options were split only when used, after the model or corpora were loaded."""
    parser = _parser(load_benchmark, monkeypatch, script)
    monkeypatch.undo()  # the real parse_args again
    with pytest.raises(SystemExit) as e:
        parser.parse_args(args)
    err = capsys.readouterr().err
    assert e.value.code == 2
    assert err.startswith(f"usage: {script}") and f"error: {message}" in err, err


# -- the predictions files a script reads name their bad line --------------------------------------------------------

_CDCONV_ROW = '{"split": "dev", "id": "c1", "gold": false, "gold_category": null, "label_scores": %s}'
_DECODE_ROW = '{"split": "dev", "id": "d1", "gold": true, "contradiction": true, "score": 0.9, "pair_scores": %s}'
_FOLD_ROW = '{"held_out": "food", "n": 3, "relaxed_accuracy": 0.5, "judgement_accuracy": 0.5}'
_LABELLED_ROW = '{"turns": [{"speaker": "A", "text": "I live in Paris."}], "label": 0}'


@pytest.mark.parametrize(
    ("script", "good", "missing", "args"),
    [
        (
            "cdconv_ensemble.py",
            _CDCONV_ROW % '{"intra_sentence": 0.1, "role_confusion": 0.1, "history": 0.1}',
            "label_scores",
            ["{f}"] * 2,
        ),
        ("decode_tau_sweep.py", _DECODE_ROW % '{"0": 0.9}', "pair_scores", ["{f}"]),
        ("evidence_ceiling.py", _DECODE_ROW % '{"0": 0.9}', "contradiction", ["{f}"]),
        ("hand_set_auc.py", _DECODE_ROW % '{"0": 0.9}', "score", ["{f}"]),
        ("ellipsis_variants.py", _DECODE_ROW % '{"0": 0.9}', "contradiction", ["--baseline", "{f}"]),
        ("denial_kind_rule.py", _DECODE_ROW % '{"0": 0.9}', "gold", ["--count", "{f}"]),
        ("circa_yesno.py", _FOLD_ROW, "relaxed_accuracy", ["table", "{f}"]),
        ("restatement_probe.py", _LABELLED_ROW, "label", ["--data", "{f}"]),
    ],
    ids=[
        "cdconv_ensemble",
        "decode_tau_sweep",
        "evidence_ceiling",
        "hand_set_auc",
        "ellipsis_variants",
        "denial_kind_rule",
        "circa_yesno",
        "restatement_probe",
    ],
)
def test_a_bad_line_of_a_predictions_file_is_named_with_its_file_and_line(
    script, good, missing, args, load_benchmark, tmp_path, monkeypatch, capsys
):
    """They read predictions with bare json.loads: a malformed line was a JSONDecodeError traceback naming no
    file, a row without a field a KeyError traceback."""
    import json

    mod = load_benchmark(script[:-3])
    from _cli import run

    row = json.loads(good)
    del row[missing]
    for second, message in (("{not json", "line 2: "), (json.dumps(row), f"line 2: {missing}: missing")):
        f = tmp_path / "p.jsonl"
        f.write_text(f"{good}\n{second}\n", encoding="utf-8")
        argv = [a.format(f=f) for a in args]
        monkeypatch.setattr(sys, "argv", [script, *argv])
        with pytest.raises(SystemExit) as e:
            run(mod.main, *([argv] if script in _OWN_PARSER else []))
        err = capsys.readouterr().err
        assert e.value.code == 2, err
        assert err.startswith(f"{script}: error: {f}, {message}") and err.count("\n") == 1, err


def test_the_held_out_file_names_a_bad_line(load_benchmark, tmp_path):
    """circa_statement_dialogues --held-out-from (read after the Circa corpus) was read with bare json.loads: a
    bad line was a traceback naming no file, a row without turns a KeyError."""
    from dialcheck.errors import InputError

    f = tmp_path / "used.jsonl"
    f.write_text('{"turns": []}\n{"id": "x"}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"used\.jsonl, line 2: turns: missing"):
        load_benchmark("circa_statement_dialogues").held_out([], f, None)


def test_the_rct_audit_file_names_a_bad_line(load_benchmark, tmp_path):
    """rct_audit --audit (read after DECODE's RCT split) was read with bare json.loads: a traceback naming no
    file, or a KeyError for a row without its judgement."""
    from dialcheck.errors import InputError

    f = tmp_path / "used.jsonl"
    f.write_text('{"id": "a", "judgement": "unclear"}\n{"id": "b", "judgement": "unclear"\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"used\.jsonl, line 2: "):
        load_benchmark("rct_audit").judgements(f)
    f.write_text('{"id": "a", "judgement": "unclear"}\n{"id": "b"}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"used\.jsonl, line 2: judgement: missing"):
        load_benchmark("rct_audit").judgements(f)


def test_decode_pair_overlap_checks_its_data_files_when_the_command_line_is_read(
    load_benchmark, tmp_path, monkeypatch, capsys
):
    """Its --data files were read only after the DECODE training pairs were built (minutes, with the NLI sets)."""
    parser = _parser(load_benchmark, monkeypatch, "decode_pair_overlap.py")
    monkeypatch.undo()  # the real parse_args again
    good = tmp_path / "a.jsonl"
    good.write_text("{}\n", encoding="utf-8")
    assert parser.parse_args(["--data", str(good)]).data == [good]
    for bad, message in ((tmp_path / "none.jsonl", "no such file"), (tmp_path, "is a directory, expected a file")):
        with pytest.raises(SystemExit) as e:
            parser.parse_args(["--data", str(good), "--data", str(bad)])
        assert e.value.code == 2
        assert f"decode_pair_overlap.py: error: argument --data: {message}: {bad}" in capsys.readouterr().err


def test_cascade_tau_band_decides_each_tau_as_the_cascade_does_and_holding_tau_leaves_no_verdict_against_it(
    load_benchmark, tiny_detector_dir, tmp_path, data_root, capsys
):
    import json

    from dialcheck.detectors import load_detector
    from dialcheck.detectors.cascade import CascadeDetector

    first, second = load_detector(tiny_detector_dir), load_detector(tiny_detector_dir)
    det = CascadeDetector.build(first, second, low=first.tau, high=first.tau)  # the fast stage decides all
    folder = det.save(tmp_path / "cascade")
    out = tmp_path / "r.json"
    argv = ["--model", str(folder), "--splits", "human_bot", "--taus", "0.0,1.0", "--limit", "40", "--threads", "1"]
    assert load_benchmark("cascade_tau_band").main([*argv, "--data-dir", str(data_root), "--json", str(out)]) == 0
    taus = json.loads(out.read_text())["splits"]["human_bot"]["taus"]
    # the saved band [0.5, 0.5] leaves the fast stage's verdicts against a tau of 0 or 1; holding tau, none
    assert taus["0.0"]["saved band"]["against_tau"] + taus["1.0"]["saved band"]["against_tau"] > 0
    assert taus["0.0"]["band holding τ"]["against_tau"] == taus["1.0"]["band holding τ"]["against_tau"] == 0
    assert "| human_bot" in capsys.readouterr().out
    from dialcheck.datasets import load_dataset
    from dialcheck.evaluation.decode import SPLITS

    examples = load_dataset(SPLITS["human_bot"], data_root)[:40]
    for tau in (0.0, 1.0):  # the script's "band holding τ" is what the cascade itself now gives
        det.tau = tau
        live = det.predict([e.dialogue for e in examples])
        assert taus[str(tau)]["band holding τ"]["right"] == sum(
            v.contradiction == e.label for v, e in zip(live, examples, strict=True)
        )
