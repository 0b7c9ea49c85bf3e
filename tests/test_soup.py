"""Model soups: the weight average of detectors continued from one start (``dialcheck train --init A B``)."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

from dialcheck.detectors.modeling import DetectorConfig, load_model
from dialcheck.errors import InputError
from dialcheck.training.soup import average_detectors
from helpers_cli import run_cli


def _variant(src: Path, out: Path, seed: int, name: str = "weights.safetensors") -> Path:
    """A copy of ``src`` whose every float tensor is moved by seeded noise (LoRA B included, so the update
    is not zero): stands in for a detector continued from ``src`` with other data."""
    rng = np.random.default_rng(seed)
    shutil.copytree(src, out)
    state = load_file(str(out / name))
    moved = {k: (v + rng.normal(0, 0.2, v.shape)).astype(v.dtype) for k, v in state.items() if v.dtype.kind == "f"}
    save_file(moved, str(out / name), metadata={"format": "pt"})
    return out


def _merged(folder: Path) -> dict[str, np.ndarray]:
    """Every weight of the inference model (adapters merged into the base)."""
    model, _ = load_model(folder, DetectorConfig.from_file(folder / "dialcheck.json"))
    return {k: v.detach().double().numpy() for k, v in model.state_dict().items()}


@pytest.fixture(scope="module")
def two_lora(tiny_detector_dir, tmp_path_factory):
    root = tmp_path_factory.mktemp("soup")
    return _variant(tiny_detector_dir, root / "a", 1), _variant(tiny_detector_dir, root / "b", 2)


def test_exact_soup_of_lora_detectors_is_the_average_of_their_weights(two_lora, tmp_path):
    a, b = two_lora
    soup = average_detectors([a, b], tmp_path / "soup", weights=[3, 1])
    cfg = json.loads((soup / "dialcheck.json").read_text())
    assert cfg["adapter"]["r"] == 8 and cfg["adapter"]["alpha"] == 16  # two rank-4 adapters side by side
    ma, mb, ms = _merged(a), _merged(b), _merged(soup)
    assert set(ms) == set(ma)
    for k in ms:  # base + 0.75 * update_a + 0.25 * update_b, heads averaged
        np.testing.assert_allclose(ms[k], 0.75 * ma[k] + 0.25 * mb[k], atol=1e-5, err_msg=k)
    assert [i["weight"] for i in cfg["training"]["init"]["soup"]] == [0.75, 0.25]


def test_soup_cut_to_a_rank_is_the_best_update_of_that_rank(two_lora, tmp_path):
    a, b = two_lora
    exact = _merged(average_detectors([a, b], tmp_path / "exact"))
    cut = average_detectors([a, b], tmp_path / "cut", rank=4)
    assert json.loads((cut / "dialcheck.json").read_text())["adapter"]["r"] == 4
    shapes = {k: v.shape for k, v in load_file(str(cut / "weights.safetensors")).items()}
    assert shapes == {k: v.shape for k, v in load_file(str(a / "weights.safetensors")).items()}
    ma, mc = _merged(a), _merged(cut)
    key = next(k for k in mc if k.endswith("attention.self.query.weight"))
    base = ma[key] - _update(a, key)
    # the cut update is the rank-4 truncation of the exact one
    u, s, vt = np.linalg.svd(exact[key] - base)
    np.testing.assert_allclose(mc[key] - base, (u[:, :4] * s[:4]) @ vt[:4], atol=1e-5)
    # the soup of a detector with itself is that detector
    same = _merged(average_detectors([a, a], tmp_path / "same", rank=4))
    for k in ma:
        np.testing.assert_allclose(same[k], ma[k], atol=1e-5, err_msg=k)


def _update(folder: Path, merged_key: str) -> np.ndarray:
    """scale * B @ A of the adapter of one merged weight."""
    cfg = json.loads((folder / "dialcheck.json").read_text())
    state = load_file(str(folder / "weights.safetensors"))
    stem = merged_key.removesuffix(".weight")
    ka = next(k for k in state if k.endswith(f"{stem}.lora_A.weight"))
    scale = cfg["adapter"]["alpha"] / cfg["adapter"]["r"]
    return scale * state[ka.replace("lora_A", "lora_B")].astype(np.float64) @ state[ka].astype(np.float64)


def test_soup_of_fully_fine_tuned_detectors(tiny_base, tmp_path):
    import torch

    from dialcheck.detectors import UtteranceDetector
    from dialcheck.detectors.modeling import build_model

    torch.manual_seed(0)
    det = UtteranceDetector(base=str(tiny_base))
    det.attach(*build_model(det.config))
    det.save(tmp_path / "full")
    a = _variant(tmp_path / "full", tmp_path / "a", 1, "model.safetensors")
    b = _variant(tmp_path / "full", tmp_path / "b", 2, "model.safetensors")
    soup = average_detectors([a, b], tmp_path / "soup")
    ma, mb, ms = _merged(a), _merged(b), _merged(soup)
    for k in ms:
        np.testing.assert_allclose(ms[k], 0.5 * ma[k] + 0.5 * mb[k], atol=1e-6, err_msg=k)


def test_soup_refuses_detectors_that_do_not_share_a_start(two_lora, tmp_path):
    a, b = two_lora
    with pytest.raises(InputError, match="at least two"):
        average_detectors([a], tmp_path / "x")
    other = tmp_path / "other"
    shutil.copytree(b, other)
    cfg = json.loads((other / "dialcheck.json").read_text())
    cfg["labels"] = ["yes", "no"]
    (other / "dialcheck.json").write_text(json.dumps(cfg))
    with pytest.raises(InputError, match=r"other/dialcheck.json: labels is \['yes', 'no'\]"):
        average_detectors([a, other], tmp_path / "x")
    with pytest.raises(InputError, match=r"dialcheck\.json is missing"):
        average_detectors([a, tmp_path], tmp_path / "x")
    with pytest.raises(InputError, match="weights must be 2 non-negative"):
        average_detectors([a, b], tmp_path / "x", weights=[1, -1])
    with pytest.raises(InputError, match="rank must be at least 1"):
        average_detectors([a, b], tmp_path / "x", rank=0)


def test_train_with_several_init_folders_calibrates_their_soup(capsys, two_lora, tmp_path, data_root):
    a, b = two_lora
    out = tmp_path / "soup"
    args = ["--epochs", "0", "--limit", "10", "--data-dir", str(data_root), "--no-progress"]
    code, _, err = run_cli(capsys, "train", "--init", str(a), str(b), "--out", str(out), "--half", *args)
    assert code == 0, err
    assert sorted(p.name for p in out.iterdir()) == ["MODEL_CARD.md", "dialcheck.json", "weights.safetensors"]
    cfg = json.loads((out / "dialcheck.json").read_text())
    assert [i["folder"] for i in cfg["training"]["init"]["soup"]] == [str(a), str(b)]
    assert "tau" in cfg["metrics"] and cfg["adapter"]["r"] == 8
    # the exact soup in float16: the size of one float32 ingredient, the same weights to float16 precision
    stored = load_file(str(out / "weights.safetensors"))
    assert {v.dtype for v in stored.values()} == {np.dtype("float16")}
    exact = _merged(average_detectors([a, b], tmp_path / "exact"))
    for k, v in _merged(out).items():
        np.testing.assert_allclose(v, exact[k], rtol=2e-3, atol=2e-3, err_msg=k)
    card = (out / "MODEL_CARD.md").read_text()
    assert "weight average (a model soup)" in card and f"`{a}`" in card and f"`{b}`" in card
    code, _, err = run_cli(capsys, "train", "--task", "citod", "--init", str(a), str(b), "--out", str(tmp_path / "z"))
    assert code == 2 and "--init takes one folder for --task citod" in err


@pytest.fixture(scope="module")
def cdconv_flat_pair(tiny_base, tmp_path_factory):
    """Two tiny flat CDConv detectors continued from one start in two batch orders, and their data folder."""
    from helpers_cdconv import write_cdconv_splits

    tmp = tmp_path_factory.mktemp("cdsoup")
    rows = [
        {"u1": f"你喜欢狗吗{i}", "b1": f"喜欢{i % 3}。", "u2": "你养狗吗？", "b2": f"没养过{i}", "label": i % 4}
        for i in range(24)
    ]
    root = write_cdconv_splits(tmp / "data", rows)
    common = ["--task", "cdconv", "--detector", "flat", "--data-dir", str(root), "--batch-size", "8", "--threads", "1"]
    common += ["--max-length", "32", "--no-progress", "--epochs", "1", "--lr", "5e-2"]
    start, a, b = tmp / "start", tmp / "a", tmp / "b"
    from dialcheck.cli import main

    assert main(["train", *common, "--base", str(tiny_base), "--lora", "2", "--out", str(start)]) == 0
    assert main(["train", *common, "--init", str(start), "--shuffle-seed", "1", "--out", str(a)]) == 0
    assert main(["train", *common, "--init", str(start), "--shuffle-seed", "2", "--out", str(b)]) == 0
    return a, b, root


def test_train_cdconv_soup_with_epochs_0_is_the_library_soup_measured_and_given_a_lexical_head(
    capsys, cdconv_flat_pair, tmp_path
):
    from dialcheck.detectors import load_detector
    from dialcheck.schema import Dialogue

    a, b, root = cdconv_flat_pair
    base = ["train", "--task", "cdconv", "--data-dir", str(root), "--threads", "1", "--no-progress"]
    plain, lex = tmp_path / "plain", tmp_path / "lex"
    code, _, err = run_cli(capsys, *base, "--init", str(a), str(b), "--epochs", "0", "--out", str(plain))
    assert code == 0, err
    assert "the average of 2 detectors" in err
    code, _, err = run_cli(capsys, *base, "--init", str(a), str(b), "--epochs", "0", "--lexical", "--out", str(lex))
    assert code == 0, err
    library = average_detectors([a, b], tmp_path / "library")
    ds = [Dialogue.from_texts(["你喜欢狗吗？", f"喜欢{k}。", "你养狗吗？", f"没养过{k}"]) for k in range(4)]
    want = [v.score for v in load_detector(library).predict(ds)]
    # no training: the saved soup scores as the library's average of the two detectors
    np.testing.assert_allclose([v.score for v in load_detector(plain).predict(ds)], want, atol=1e-5)
    assert not np.allclose([v.score for v in load_detector(a).predict(ds)], want, atol=1e-3)
    assert not list(plain.glob("lexical.*")) and sorted(p.name for p in lex.glob("lexical.*"))
    for out in (plain, lex):
        cfg = json.loads((out / "dialcheck.json").read_text())
        assert [i["folder"] for i in cfg["training"]["init"]["soup"]] == [str(a), str(b)]
        assert cfg["training"]["epochs"] == 0 and cfg["adapter"]["r"] == 4 and "not trained" in cfg["training"]["data"]
        assert "dev/4class/macro_f1" in cfg["metrics"]
    # --half: the soup stored in float16, scoring as the float32 soup to float16 precision
    half = tmp_path / "half"
    code, _, err = run_cli(capsys, *base, "--init", str(a), str(b), "--epochs", "0", "--half", "--out", str(half))
    assert code == 0, err
    assert {v.dtype for v in load_file(str(half / "weights.safetensors")).values()} == {np.dtype("float16")}
    np.testing.assert_allclose([v.score for v in load_detector(half).predict(ds)], want, atol=2e-3)
    assert "mix" in json.loads((lex / "dialcheck.json").read_text())["training"]["lexical"]
    assert load_detector(lex).lexical is not None
    card = (lex / "MODEL_CARD.md").read_text()
    assert "weight average (a model soup)" in card and f"`{a}`" in card


def test_train_cdconv_soup_trains_on_from_the_average_and_records_it(capsys, cdconv_flat_pair, tmp_path):
    a, b, root = cdconv_flat_pair
    out = tmp_path / "on"
    args = ["train", "--task", "cdconv", "--detector", "flat", "--data-dir", str(root), "--threads", "1"]
    args += ["--no-progress", "--batch-size", "8", "--epochs", "1", "--init", str(a), str(b), "--out", str(out)]
    code, _, err = run_cli(capsys, *args)
    assert code == 0, err
    cfg = json.loads((out / "dialcheck.json").read_text())
    assert [i["folder"] for i in cfg["training"]["init"]["soup"]] == [str(a), str(b)]
    assert cfg["training"]["fits"]["all"]["steps"] == 3 and cfg["adapter"]["r"] == 4


def test_train_cdconv_soup_and_epochs_0_refuse_what_they_cannot_do(capsys, cdconv_flat_pair, tmp_path):
    a, b, root = cdconv_flat_pair
    base = ["train", "--task", "cdconv", "--data-dir", str(root), "--threads", "1", "--no-progress"]
    cases = [
        (["--epochs", "0", "--out", str(tmp_path / "x")], "0 only with --init"),
        (
            ["--init", str(a), "--epochs", "0", "--augment", "random_context", "--out", str(tmp_path / "x")],
            "--epochs 0 does not train",
        ),
        (
            ["--init", str(a), str(b), "--add-lexical", str(a), "--out", str(tmp_path / "x")],
            "--init A B --epochs 0 --lexical",
        ),
        (["--init", str(a), "--epochs", "0", "--half", "--out", str(tmp_path / "x")], "a soup of several --init"),
        (
            ["--init", str(a), "--epochs", "0", "--detector", "pair", "--out", str(tmp_path / "x")],
            "the --init detector is cdconv.flat.v1",
        ),
    ]
    hier = tmp_path / "hier"
    shutil.copytree(a, hier)
    cfg = json.loads((hier / "dialcheck.json").read_text())
    (hier / "dialcheck.json").write_text(json.dumps({**cfg, "detector": "cdconv.hierarchical.v1"}))
    cases.append((["--init", str(hier), str(b), "--out", str(tmp_path / "x")], "a soup of hierarchical detectors"))
    for extra, message in cases:
        code, _, err = run_cli(capsys, *base, *extra)
        assert code == 2 and message in err, (extra, err)
    assert not (tmp_path / "x").exists()


def test_train_rank_cuts_one_init_adapter_to_its_best_approximation_and_says_so(capsys, two_lora, tmp_path, data_root):
    a, _ = two_lora  # rank 4
    out = tmp_path / "cut"
    args = ["--epochs", "0", "--limit", "10", "--data-dir", str(data_root), "--no-progress"]
    code, _, err = run_cli(capsys, "train", "--init", str(a), "--rank", "2", "--out", str(out), *args)
    assert code == 0, err
    cfg = json.loads((out / "dialcheck.json").read_text())
    assert cfg["adapter"]["r"] == 2 and cfg["training"]["init"]["rank"] == 2 and "tau" in cfg["metrics"]
    assert [i["folder"] for i in cfg["training"]["init"]["soup"]] == [str(a)]
    ma, mc = _merged(a), _merged(out)
    key = next(k for k in mc if k.endswith("attention.self.query.weight"))
    update = _update(a, key)
    u, sv, vt = np.linalg.svd(update)
    np.testing.assert_allclose(mc[key] - (ma[key] - update), (u[:, :2] * sv[:2]) @ vt[:2], atol=1e-5)
    card = (out / "MODEL_CARD.md").read_text()
    assert "Starts from one detector, its LoRA adapter cut to rank 2 (truncated SVD)" in card
    assert "the weights are the cut adapter's" in card
    for bad, message in (  # --rank 0 is refused when the command line is read (test_cli)
        (["--rank", "2"], "--rank cuts the adapter of an --init detector"),
        (["--rank", "2", "--init", str(a), "--task", "citod"], "applies to --task decode with --init"),
    ):
        code, _, err = run_cli(capsys, "train", *bad, "--out", str(tmp_path / "x"), *args)
        assert code == 2 and message in err, err


def test_init_takes_shipped_models_by_name(capsys, tmp_path, data_root):
    """Resolution only: an unknown name fails on the folder, a shipped one gets past it (to the data)."""
    bad = run_cli(capsys, "train", "--init", "no-such-model", "--epochs", "0", "--out", str(tmp_path / "a"))
    # it said "dialcheck.json is missing", as if the folder were there: neither a folder nor a shipped name
    assert bad[0] == 2 and "no-such-model: --init: no such folder, and no shipped model has that name" in bad[2]
    for task in (["--task", "cascade", "--init", "decode-utterance-minilm-v10", "no-such"], ["--task", "cdconv"]):
        init = [] if "--init" in task else ["--init", "no-such"]
        code, _, err = run_cli(capsys, "train", *task, *init, "--epochs", "0", "--out", str(tmp_path / "c"))
        assert code == 2 and "no-such: --init: no such folder" in err and "Traceback" not in err, err
    assert not (tmp_path / "a").exists() and not (tmp_path / "c").exists()
    args = ["--epochs", "0", "--out", str(tmp_path / "b"), "--data-dir", str(tmp_path / "nodata")]
    # two shipped names (v4 and v5: in the wheel and the sdist, where the superseded v6 is not)
    code, _, err = run_cli(capsys, "train", "--init", "decode-utterance-minilm-v4", "decode-utterance-minilm-v5", *args)
    assert code == 2 and "not a saved dialcheck detector" not in err and "nodata" in err
    assert not (tmp_path / "b").exists()  # a failed run leaves nothing in OUT, so it can be run again


def test_a_shipped_ingredient_is_recorded_by_name_not_by_this_machines_path(tmp_path, two_lora):
    from dialcheck.detectors import default_model_path

    models = default_model_path().parent  # two models the wheel and the sdist ship (not the superseded v6)
    v4, v5 = models / "decode-utterance-minilm-v4", models / "decode-utterance-minilm-v5"
    cfg = json.loads((average_detectors([v4, v5], tmp_path / "s") / "dialcheck.json").read_text())
    assert [i["folder"] for i in cfg["training"]["init"]["soup"]] == [v4.name, v5.name]
    a, b = two_lora  # the user's own folders keep their paths
    cfg = json.loads((average_detectors([a, b], tmp_path / "t") / "dialcheck.json").read_text())
    assert [i["folder"] for i in cfg["training"]["init"]["soup"]] == [str(a), str(b)]


def test_recalibrating_a_float16_model_keeps_it_in_float16_and_names_a_shipped_start_by_its_name(
    capsys, two_lora, tmp_path, data_root, monkeypatch
):
    from dialcheck.detectors.modeling import DetectorConfig
    from dialcheck.training.card import init_record

    a, b = two_lora
    args = ["--epochs", "0", "--limit", "10", "--data-dir", str(data_root), "--no-progress"]
    half = tmp_path / "half"
    code, _, err = run_cli(capsys, "train", "--init", str(a), str(b), "--out", str(half), "--half", *args)
    assert code == 0, err
    again = tmp_path / "again"
    code, _, err = run_cli(capsys, "train", "--init", str(half), "--out", str(again), *args)
    assert code == 0, err
    # the weights are unchanged by a recalibration: stored in the precision they came in, not doubled
    stored = load_file(str(again / "weights.safetensors"))
    assert {v.dtype for v in stored.values()} == {np.dtype("float16")}
    assert (again / "weights.safetensors").stat().st_size == (half / "weights.safetensors").stat().st_size
    # a float32 start stays float32
    plain = tmp_path / "plain"
    code, _, err = run_cli(capsys, "train", "--init", str(a), "--out", str(plain), *args)
    assert code == 0, err
    assert {v.dtype for v in load_file(str(plain / "weights.safetensors")).values()} == {np.dtype("float32")}
    # a start among the shipped models is recorded by its name, not this machine's install path
    from dialcheck.detectors import default_model_path

    shipped = default_model_path().parent / "decode-utterance-minilm-v10"
    cfg = DetectorConfig.from_file(shipped / "dialcheck.json")
    assert init_record(shipped.resolve(), cfg)["folder"] == "decode-utterance-minilm-v10"
    assert init_record(a, cfg)["folder"] == str(a)


def test_train_cdconv_with_dev_trains_on_both_splits_and_keeps_the_last_weights(capsys, cdconv_flat_pair, tmp_path):
    a, _, root = cdconv_flat_pair  # 24 train and 24 dev conversations
    out = tmp_path / "wd"
    args = ["train", "--task", "cdconv", "--detector", "flat", "--data-dir", str(root), "--threads", "1"]
    args += ["--no-progress", "--batch-size", "8", "--epochs", "1", "--eval-every", "2", "--init", str(a)]
    code, _, err = run_cli(capsys, *args, "--with-dev", "--out", str(out))
    assert code == 0, err
    assert "on 48 examples, dev 0" in err
    cfg = json.loads((out / "dialcheck.json").read_text())
    t = cfg["training"]
    assert t["train_examples"] == 48 and t["dev_examples"] == 0 and t["with_dev"] is True
    assert "cdconv.dev.v1 together" in t["data"] and not any(k.startswith("dev/") for k in cfg["metrics"])
    assert t["fits"]["all"]["best_step"] == t["fits"]["all"]["steps"] == 6  # no validation: the last weights
    # ... and the same run without --with-dev trains on train alone, validating on dev
    code, _, err = run_cli(capsys, *args, "--out", str(tmp_path / "plain"))
    assert code == 0 and "on 24 examples, dev 24" in err
    for extra, message in (
        (["--detector", "hierarchical"], "--with-dev trains a flat or pair detector"),
        (["--lexical"], "--with-dev trains the encoder on train and dev together"),
    ):
        code, _, err = run_cli(capsys, *args, "--with-dev", *extra, "--out", str(tmp_path / "x"))
        assert code == 2 and message in err, (extra, err)
    code, _, err = run_cli(capsys, "train", "--with-dev", "--out", str(tmp_path / "x"))
    assert code == 2 and "--with-dev, " in err and "apply to --task cdconv" in err
    assert not (tmp_path / "x").exists()


def _lexical_source(capsys, base, a, b, lex):
    """Fit a lexical head (a layout other than the default, which copies and refits must keep) onto the soup of a
    and b in ``lex``, with tau moved to 0.37 so that the source's tau is seen to be the one copied; its config."""
    shape = ["--lexical-blocks", "b2,b1,u2,b2&u2", "--lexical-ngrams", "3"]
    code, _, err = run_cli(
        capsys, *base, "--init", str(a), str(b), "--epochs", "0", "--lexical", *shape, "--out", str(lex)
    )
    assert code == 0, err
    lex_cfg = json.loads((lex / "dialcheck.json").read_text())
    assert lex_cfg["training"]["lexical"]["blocks"] == ["b2", "b1", "u2", "b2&u2"]
    lex_cfg["thresholds"]["tau"] = 0.37
    (lex / "dialcheck.json").write_text(json.dumps(lex_cfg))
    return lex_cfg


def test_soup_with_a_with_dev_ingredient_takes_a_lexical_head_as_it_is_and_is_not_measured_on_dev(
    capsys, cdconv_flat_pair, tmp_path
):
    from dialcheck.detectors import load_detector
    from dialcheck.schema import Dialogue

    a, b, root = cdconv_flat_pair  # rank 2 each
    base = ["train", "--task", "cdconv", "--data-dir", str(root), "--threads", "1", "--no-progress"]
    wd, lex, soup = tmp_path / "wd", tmp_path / "lex", tmp_path / "soup"
    code, _, err = run_cli(
        capsys, *base, "--detector", "flat", "--batch-size", "8", "--epochs", "1", "--init", str(a), "--with-dev",
        "--out", str(wd),
    )  # fmt: skip
    assert code == 0, err
    lex_cfg = _lexical_source(capsys, base, a, b, lex)
    # A A B(with dev): rank 2 + 2 + 2 summed is 6, but the average's update has rank 4 at most, so --rank 4 is exact
    soup_args = ["--init", str(a), str(a), str(wd), "--epochs", "0", "--rank", "4", "--lexical-from", str(lex)]
    code, _, err = run_cli(capsys, *base, *soup_args, "--out", str(soup))
    assert code == 0, err
    assert "not measured on dev" in err and "cut to rank 4" in err
    cfg = json.loads((soup / "dialcheck.json").read_text())
    assert cfg["adapter"]["r"] == 4 and cfg["thresholds"]["tau"] == 0.37 and cfg["training"]["with_dev"] == [str(wd)]
    assert cfg["metrics"] == {} and cfg["training"]["lexical"]["copied_from"] == str(lex)
    assert cfg["training"]["lexical"]["mix"] == lex_cfg["training"]["lexical"]["mix"]
    assert "copied as it is" in (soup / "MODEL_CARD.md").read_text()
    got, src = load_detector(soup), load_detector(lex)
    assert got.lexical.mix == src.lexical.mix and got.lexical.vocab == src.lexical.vocab
    exact = load_detector(average_detectors([a, a, wd], tmp_path / "exact"))
    exact.lexical, exact.config.thresholds["tau"] = src.lexical, 0.37
    ds = [Dialogue.from_texts(["你喜欢狗吗？", f"喜欢{k}。", "你养狗吗？", f"没养过{k}"]) for k in range(4)]
    np.testing.assert_allclose([v.score for v in got.predict(ds)], [v.score for v in exact.predict(ds)], atol=1e-5)
    # fitting a head (its mix chosen on dev) onto a soup that has seen dev is refused; so is a head that is missing
    for extra, message in (
        (["--init", str(a), str(wd), "--epochs", "0", "--lexical"], "which this detector was trained on"),
        (["--init", str(a), str(b), "--epochs", "0", "--lexical-from", str(a)], "with a lexical head"),
        (["--init", str(a), str(b), "--epochs", "0", "--lexical-from", str(lex), "--lexical"], "fit a new one"),
        (["--init", str(a), "--epochs", "1", "--lexical-from", str(lex)], "with --init and --epochs 0"),
        (["--init", str(a), "--epochs", "0", "--rank", "2"], "a soup of several --init folders for --task cdconv"),
    ):
        code, _, err = run_cli(capsys, *base, *extra, "--out", str(tmp_path / "x"))
        assert code == 2 and message in err, (extra, err)
    assert not (tmp_path / "x").exists()


def test_lexical_from_with_dev_refits_that_head_on_train_and_dev_with_its_mix_and_tau(
    capsys, cdconv_flat_pair, tmp_path
):
    from dialcheck.datasets import load_dataset
    from dialcheck.datasets.cdconv import LABEL_NAMES
    from dialcheck.detectors import load_detector
    from dialcheck.detectors.lexical import LexicalHead
    from dialcheck.schema import Dialogue
    from dialcheck.training.cdconv import example_label

    a, b, root = cdconv_flat_pair
    base = ["train", "--task", "cdconv", "--data-dir", str(root), "--threads", "1", "--no-progress"]
    lex, refit = tmp_path / "lex", tmp_path / "refit"
    _lexical_source(capsys, base, a, b, lex)
    src = load_detector(lex)
    src.lexical.mix = 0.3  # ... and its mix (the saved head's own field)
    src.lexical.save(lex)
    args = [*base, "--detector", "flat", "--init", str(lex), "--epochs", "0", "--lexical-from", str(lex)]
    code, _, err = run_cli(capsys, *args, "--with-dev", "--out", str(refit))
    assert code == 0, err
    assert "not measured on dev (its lexical head was refitted on it)" in err
    cfg = json.loads((refit / "dialcheck.json").read_text())
    t = cfg["training"]
    assert (
        cfg["metrics"] == {} and t["with_dev"] is True and "refitted on cdconv.train.v1 and cdconv.dev.v1" in t["data"]
    )
    assert t["lexical"]["refitted"] is True and t["lexical"]["train_examples"] == 48
    assert cfg["thresholds"]["tau"] == 0.37
    assert "refitted on 48 train and dev examples" in (refit / "MODEL_CARD.md").read_text()
    # the head is the one fitted on train + dev with the source's C, min_df and layout, carrying the source's mix
    examples = [*load_dataset("cdconv.train.v1", str(root)), *load_dataset("cdconv.dev.v1", str(root))]
    want = LexicalHead.fit(
        [e.dialogue for e in examples], [example_label(e) for e in examples], LABEL_NAMES,
        blocks=("b2", "b1", "u2", "b2&u2"), n=3,
    )  # fmt: skip
    got = load_detector(refit)
    assert got.lexical.mix == 0.3 and got.lexical.vocab == want.vocab and got.lexical.blocks == want.blocks
    np.testing.assert_allclose(got.lexical.coef, want.coef, atol=1e-6)
    assert got.lexical.coef.shape != src.lexical.coef.shape or not np.allclose(got.lexical.coef, src.lexical.coef)
    ds = [Dialogue.from_texts(["你喜欢狗吗？", f"喜欢{k}。", "你养狗吗？", f"没养过{k}"]) for k in range(4)]
    np.testing.assert_allclose(got.lexical.proba(ds), want.proba(ds), atol=1e-5)
    # the soup's saw_dev sees it: a later --lexical on it is refused
    code, _, err = run_cli(
        capsys, *base, "--init", str(refit), str(a), "--epochs", "0", "--lexical", "--out", str(tmp_path / "x")
    )
    assert code == 2 and "which this detector was trained on" in err
    # --with-dev with --epochs 0 still needs --lexical-from
    code, _, err = run_cli(
        capsys,
        *base,
        "--detector",
        "flat",
        "--init",
        str(a),
        "--epochs",
        "0",
        "--with-dev",
        "--out",
        str(tmp_path / "x"),
    )
    assert code == 2 and "--epochs 0 alone" in err
    assert not (tmp_path / "x").exists()


def test_a_rank_that_cuts_nothing_is_refused_for_one_detector_and_not_recorded_as_a_cut(two_lora, tmp_path):
    # train --init A --rank 40 on a rank-16 A printed "its adapter cut to rank 40", copied A unchanged and carded it
    # "cut to rank 16 (truncated SVD)"; a soup whose summed ranks are at most --rank was carded as cut too
    a, b = two_lora  # rank 4 each
    for rank in (4, 40):
        with pytest.raises(InputError, match=f"rank {rank} cuts nothing: its LoRA adapter is of rank 4"):
            average_detectors([a], tmp_path / f"one{rank}", rank=rank)
        assert not (tmp_path / f"one{rank}").exists()
    exact = json.loads((average_detectors([a, b], tmp_path / "exact", rank=8) / "dialcheck.json").read_text())
    assert exact["adapter"]["r"] == 8 and "rank" not in exact["training"]["init"]
    cut = json.loads((average_detectors([a, b], tmp_path / "cut", rank=6) / "dialcheck.json").read_text())
    assert cut["adapter"]["r"] == 6 and cut["training"]["init"]["rank"] == 6


def test_train_says_a_soup_whose_summed_ranks_are_rank_is_exact_as_its_card_does(capsys, two_lora, tmp_path, data_root):
    # two rank-4 adapters with --rank 8: the card recorded no cut, while stderr said "its adapter cut to rank 8"
    a, b = two_lora
    out = tmp_path / "exact"
    args = ["--epochs", "0", "--limit", "10", "--data-dir", str(data_root), "--no-progress"]
    code, _, err = run_cli(capsys, "train", "--init", str(a), str(b), "--rank", "8", "--out", str(out), *args)
    assert code == 0, err
    assert "of rank 8 (exact: --rank 8 cuts nothing)" in err and "cut to rank" not in err
    assert "rank" not in json.loads((out / "dialcheck.json").read_text())["training"]["init"]
