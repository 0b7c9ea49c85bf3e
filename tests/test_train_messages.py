"""Messages of ``dialcheck train`` and ``dialcheck models``: warnings before training, refusals of folders."""

from helpers_cli import run_cli as _run


def test_train_unstructured_with_nothing_held_out_warns_of_tau_only(capsys, tmp_path, tiny_base, data_root):
    # --limit 20 at --validation-fraction 0.01 held out one dialogue: refused as 'synthetic histories need utterance
    # pairs of at least two dialogues, got 0 pairs'; now it trains, with the no-validation warning the utterance
    # detector gets, naming tau only (the unstructured detector has no eta_e)
    out = tmp_path / "model"
    argv = ["train", "--out", str(out), "--base", str(tiny_base), "--lora", "4", "--limit", "20", "--epochs", "0.5"]
    argv += ["--detector", "unstructured", "--max-length", "64", "--validation-fraction", "0.01"]
    code, _, err = _run(capsys, *argv, "--data-dir", str(data_root), "--no-progress", "--batch-size", "16")
    assert code == 0, err
    warning = next(line for line in err.splitlines() if "warning: no validation" in line)
    assert "tau is set on nothing (the default, 0.5, is kept)" in warning and "eta_e" not in warning
    assert "--limit 20 leaves none held out" in warning


def test_models_names_an_interrupted_training_run_as_loading_does(capsys, tmp_path):
    # models FOLDER (and --save from it) said only 'no dialcheck.json' of an interrupted train's OUT, where loading
    # (check, evaluate) names it an interrupted run, its checkpoint and --resume: both say it in one wording now
    import pytest

    import dialcheck
    from dialcheck.errors import ModelError

    run = tmp_path / "run"
    (run / "resume").mkdir(parents=True)
    (run / "checkpoint").mkdir()
    (run / "checkpoint" / "dialcheck.json").write_text("{}", encoding="utf-8")
    with pytest.raises(ModelError) as e:
        dialcheck.load(str(run))
    said = str(e.value)
    assert "interrupted training run" in said and "checkpoint" in said and "--resume" in said
    code, out, err = _run(capsys, "models", str(run))
    assert code == 2 and out == "" and said in err and "no dialcheck.json" not in err
    code, _, err = _run(capsys, "models", str(run), "--save", str(tmp_path / "derived"), "--tau", "0.3")
    assert code == 2 and said in err and not (tmp_path / "derived").exists()
    (run / "checkpoint").rename(tmp_path / "elsewhere")  # resume/ only: no checkpoint is named
    code, _, err = _run(capsys, "models", str(run))
    assert code == 2 and "interrupted training run, not a model; finish it" in err
