"""Messages of ``dialcheck train`` and ``dialcheck models``: warnings before training, refusals of folders."""

import json
import shutil

import pytest

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


def test_a_derived_card_says_its_validation_numbers_are_the_parents(capsys, tmp_path, tiny_detector_dir):
    # models NAME --save OUT --tau X kept NAME's validation numbers in OUT's card under 'Validation', as if measured
    # at X: the card says they are NAME's, measured with NAME's thresholds, and how to measure the derived model
    from dialcheck.detectors.modeling import DetectorConfig
    from dialcheck.training.card import write_model_card

    src = tmp_path / "src"
    shutil.copytree(tiny_detector_dir, src)
    config = DetectorConfig.from_file(src / "dialcheck.json")
    config.thresholds["tau"], config.thresholds["eta_e"] = 0.4, 0.6
    config.metrics = {"val_balanced_accuracy": 0.81, "val_evidence_f1": 0.7}
    (src / "dialcheck.json").write_text(config.to_json(), encoding="utf-8")
    write_model_card(src, config)
    code, _, err = _run(capsys, "models", str(src), "--save", str(tmp_path / "mine"), "--tau", "0.7")
    assert code == 0, err
    card = (tmp_path / "mine" / "MODEL_CARD.md").read_text(encoding="utf-8")
    assert "- val_balanced_accuracy: 0.81" in card
    note = next(line for line in card.splitlines() if "validation numbers, measured with its thresholds" in line)
    assert "(tau 0.4, eta_e 0.6)" in note and "not with this model's (tau 0.7, eta_e 0.6)" in note
    assert "dialcheck evaluate --model mine --update-card" in note
    saved = json.loads((tmp_path / "mine" / "dialcheck.json").read_text())["training"]["derived_from"]
    assert saved["metrics_measured_with"] == {"tau": 0.4, "eta_e": 0.6}


@pytest.mark.parametrize(
    ("task", "base", "warned"),
    [
        ("cdconv", "all-MiniLM-L6-v2", "most Chinese characters into [UNK]"),
        ("ocnli", "all-MiniLM-L6-v2", "most Chinese characters into [UNK]"),
        ("cdconv", "mpnet", "most Chinese characters into [UNK]"),
        ("cdconv", "all-MiniLM-L6-v2+zh", None),
        ("cdconv", "gemma-3-270m", None),
        ("decode", "all-MiniLM-L6-v2+zh", "trains on English dialogues"),
        ("decode", "all-MiniLM-L6-v2", None),
    ],
)
def test_train_warns_when_the_base_cannot_read_the_tasks_language(capsys, tmp_path, task, base, warned):
    # --task cdconv on plain all-MiniLM-L6-v2 trained without a word, its vocabulary turning most Chinese characters
    # into [UNK]; --task decode on a +zh base made a model taken for a Chinese one: both warn before any data is read
    argv = ["train", "--task", task, "--base", base, "--out", str(tmp_path / "m"), "--data-dir", str(tmp_path / "no")]
    code, _, err = _run(capsys, *argv, "--no-progress")
    assert code == 2  # the missing data: the warning came first
    lines = [line for line in err.splitlines() if "warning:" in line and "the base" in line]
    if warned is None:
        assert lines == []
        return
    assert len(lines) == 1 and warned in lines[0] and f"the base {base} " in lines[0]
    assert err.index(lines[0]) < err.index("error")
    if task == "decode":
        assert "train on all-MiniLM-L6-v2 instead" in lines[0]
    else:
        assert "all-MiniLM-L6-v2+zh" in lines[0] and "gemma-3-270m" in lines[0] and "cdconv-flat-gemma-v9" in lines[0]


def test_train_reads_the_base_of_the_init_detector_for_the_language_warning(capsys, tmp_path, tiny_detector_dir):
    # --init's base is the one trained on (--base is not read): an OCNLI pair classifier on a +zh base continued
    # with --task decode
    init = tmp_path / "ocnli"
    shutil.copytree(tiny_detector_dir, init)
    config = json.loads((init / "dialcheck.json").read_text())
    config["base"] = "all-MiniLM-L6-v2+zh"
    (init / "dialcheck.json").write_text(json.dumps(config))
    argv = ["train", "--init", str(init), "--out", str(tmp_path / "m"), "--data-dir", str(tmp_path / "no")]
    code, _, err = _run(capsys, *argv, "--no-progress")
    assert code == 2
    assert "warning: --task decode trains on English dialogues, but the base all-MiniLM-L6-v2+zh (of the --init " in err
    assert f"detector {init}) adds the Chinese characters" in err
