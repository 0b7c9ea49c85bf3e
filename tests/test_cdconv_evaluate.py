"""dialcheck evaluate --benchmark cdconv as a user reads it: which numbers are held-out, what the paper column is."""

from __future__ import annotations

import json
import shutil

import pytest

from dialcheck.cli import main
from helpers_cdconv import write_cdconv_splits


@pytest.fixture(scope="module")
def tiny_flat_dir(tiny_base, tmp_path_factory):
    """A saved four-category flat detector on the tiny random-weight base."""
    import torch

    from dialcheck.detectors import FlatCategoryDetector
    from dialcheck.detectors.modeling import build_model

    torch.manual_seed(0)
    det = FlatCategoryDetector(base=str(tiny_base), adapter={"type": "lora", "r": 2, "alpha": 4}, max_length=48)
    model, tok = build_model(det.config)
    det.attach(model, tok)
    return det.save(tmp_path_factory.mktemp("models") / "tiny-flat")


def _corpus(tmp_path):
    context = {"u1": "你喜欢狗吗？", "b1": "喜欢。", "u2": "你养狗吗？"}
    rows = [{**context, "b2": f"没养过{i}", "label": i % 4} for i in range(8)]
    return write_cdconv_splits(tmp_path / "data", rows, ("dev", "test"))


def _with_dev(folder, tmp_path):
    """A copy of ``folder`` whose training record says it was trained on dev too (``train --with-dev``)."""
    out = tmp_path / "with-dev"
    shutil.copytree(folder, out)
    cfg = json.loads((out / "dialcheck.json").read_text(encoding="utf-8"))
    cfg["training"] = {**cfg.get("training", {}), "with_dev": True}
    (out / "dialcheck.json").write_text(json.dumps(cfg), encoding="utf-8")
    return out


def test_evaluate_on_dev_warns_when_the_model_was_trained_on_dev(tiny_flat_dir, tmp_path, capsys):
    # The shipped Chinese default (cdconv-flat-gemma-v9, like every default since v5) was trained on dev too:
    # `evaluate --benchmark cdconv --splits test,dev` showed its dev numbers (84 against 74 on test at --limit 200)
    # beside the test ones with nothing to say they were not held out.
    root = _corpus(tmp_path)
    ev = ["evaluate", "--benchmark", "cdconv", "--data-dir", str(root), "--no-progress"]
    seen = _with_dev(tiny_flat_dir, tmp_path)
    assert main([*ev, "--model", str(seen), "--splits", "test,dev"]) == 0
    err = capsys.readouterr().err
    assert "this model was trained on CDConv's dev split (--with-dev): its dev numbers are not a held-out" in err
    assert main([*ev, "--model", str(seen), "--splits", "test"]) == 0  # dev not evaluated: nothing to say
    assert "dev split" not in capsys.readouterr().err
    assert main([*ev, "--model", str(tiny_flat_dir), "--splits", "dev"]) == 0  # dev held out: nothing to say
    assert "dev split" not in capsys.readouterr().err


def test_the_paper_column_says_it_is_the_whole_test_split(tiny_flat_dir, tmp_path, capsys):
    # with --limit 200 the first 200 test conversations were shown beside the paper's numbers on all of them
    root = _corpus(tmp_path)
    ev = ["evaluate", "--benchmark", "cdconv", "--data-dir", str(root), "--no-progress", "--limit", "4"]
    assert main([*ev, "--model", str(tiny_flat_dir), "--splits", "test"]) == 0
    table = capsys.readouterr().out
    assert "| metric | ours | paper (hierarchical RoBERTa, whole test split) |" in table
    assert "| 4-class macro-F1 | " in table and "| 59.30 |" in table
    # the floor to read a score against (the JSON's majority_accuracy) was not in the table; one of each label here
    assert "| 4-class accuracy of always the most frequent label (the floor) | 25.00 | 63.60 |" in table


def test_evaluate_data_warns_of_conversations_without_u1(tiny_flat_dir, tmp_path, capsys):
    # check refuses a Chinese conversation of three turns ('is u1 missing?'); evaluate --data scored it in silence,
    # read with an empty u1
    four = ["你有宠物吗？", "有一只狗。", "叫什么？", "旺财。"]
    recs = [
        {"id": "ok", "turns": four, "contradiction": False},
        {"id": "no-u1", "turns": four[1:], "contradiction": False},
        {"turns": four[1:], "contradiction": True, "category": "history"},
        {"id": "two", "turns": four[2:], "contradiction": False},
    ]
    f = tmp_path / "mine.jsonl"
    f.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs), encoding="utf-8")
    ev = ["evaluate", "--benchmark", "cdconv", "--model", str(tiny_flat_dir), "--no-progress", "--data", str(f)]
    assert main(ev) == 0
    err = capsys.readouterr().err
    # worded as check refuses them: a two-turn one was asked 'is u1 missing?' too, which check says of three alone
    three = "(no-u1, mine.jsonl:3) have fewer than four turns (got 3 turns; is u1 missing?): "
    assert f"warning: 2 of the 4 dialogues of {f} {three}" in err
    assert (
        f"warning: 1 of the 4 dialogues of {f} (two) has fewer than four turns (got 2 turns): "
        in err  # scored: not "too few to check"
    )
    assert err.count("so the missing first turns are read as empty; their verdicts are counted") == 2
    f.write_text(json.dumps(recs[0], ensure_ascii=False) + "\n", encoding="utf-8")
    assert main(ev) == 0
    assert "fewer than four turns" not in capsys.readouterr().err
