"""The from-scratch Chinese base: a character vocabulary with no [UNK] for seen text, random weights that
any --base accepts, deterministic for a seed, and trainable end to end by `dialcheck train --full`."""

from __future__ import annotations

import json

import pytest

from dialcheck.errors import ModelError
from dialcheck.schema import Dialogue
from dialcheck.scratch import build_scratch_base, character_vocabulary
from helpers_cdconv import write_cdconv_splits

TEXTS = ["我今年23岁了，你呢？", "我养了两只猫。", "你喜欢狗吗？", "我不喜欢狗。", "罕"]


@pytest.fixture(autouse=True)
def _one_thread():
    import torch

    torch.set_num_threads(1)


def test_character_vocabulary_keeps_characters_seen_often_enough():
    assert character_vocabulary(["ab a", "Ba"], min_count=2) == ["a", "b"]
    assert character_vocabulary(["ab a", "Ba"], min_count=3) == ["a"]
    with pytest.raises(ValueError, match="min_count"):
        character_vocabulary(["a"], min_count=0)


def test_scratch_base_tokenizes_seen_characters_and_splits_english(tmp_path):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    out = build_scratch_base(tmp_path / "b", TEXTS, layers=1, hidden=32, heads=2, min_count=1)
    tok = AutoTokenizer.from_pretrained(out)
    pieces = tok.tokenize("我养了两只猫 Cat 23")
    assert pieces == ["我", "养", "了", "两", "只", "猫", "c", "##a", "##t", "2", "##3"]
    ids = tok("我", "猫")["input_ids"]
    assert ids[0] == tok.cls_token_id and ids.count(tok.sep_token_id) == 2 and tok.unk_token_id not in ids
    assert tok.tokenize("鑫") == ["[UNK]"]  # never seen
    model = AutoModelForSequenceClassification.from_pretrained(out, num_labels=4)
    assert model.config.num_hidden_layers == 1 and model.config.vocab_size == len(tok)
    info = json.loads((out / "scratch.json").read_text())
    assert info["corpus_characters"] == len(character_vocabulary(TEXTS, 1)) - sum(
        c.isascii() for c in character_vocabulary(TEXTS, 1)
    )


def test_scratch_base_is_deterministic_for_a_seed(tmp_path):
    from safetensors.torch import load_file

    a = load_file(build_scratch_base(tmp_path / "a", TEXTS, layers=1, hidden=32, heads=2) / "model.safetensors")
    b = load_file(build_scratch_base(tmp_path / "b", TEXTS, layers=1, hidden=32, heads=2) / "model.safetensors")
    c = load_file(build_scratch_base(tmp_path / "c", TEXTS, layers=1, hidden=32, heads=2, seed=1) / "model.safetensors")
    key = "embeddings.word_embeddings.weight"
    assert (a[key] == b[key]).all() and not (a[key] == c[key]).all()


def test_scratch_base_refuses_bad_shapes_and_empty_vocabularies(tmp_path):
    with pytest.raises(ModelError, match="multiple"):
        build_scratch_base(tmp_path / "x", TEXTS, hidden=30, heads=4)
    with pytest.raises(ModelError, match="vocabulary"):
        build_scratch_base(tmp_path / "y", ["a"], min_count=2)


def test_cdconv_flat_detector_trains_from_scratch(tmp_path, capsys):
    from dialcheck.cli import main
    from dialcheck.detectors import load_detector

    root = tmp_path / "data"
    rows = [
        {"u1": f"你喜欢狗吗{i}", "b1": "喜欢。", "u2": "你养狗吗？", "b2": f"没养过{i}", "label": i % 4}
        for i in range(16)
    ]
    write_cdconv_splits(root, rows)
    base = build_scratch_base(
        tmp_path / "base", [r["u1"] + r["b2"] + "喜欢。养？" for r in rows] * 2, layers=1, hidden=32, heads=2
    )
    out = tmp_path / "flat"
    args = ["train", "--task", "cdconv", "--detector", "flat", "--base", str(base), "--full", "--out", str(out)]
    common = ["--data-dir", str(root), "--epochs", "1", "--batch-size", "8", "--max-length", "32", "--threads", "1"]
    assert main([*args, *common, "--no-progress"]) == 0
    det = load_detector(out)
    assert not det.config.adapter  # full fine-tuning: the folder holds the whole encoder
    (v,) = det.predict([Dialogue.from_texts(["你喜欢狗吗1", "喜欢。", "你养狗吗？", "没养过1"])])
    assert 0.0 <= v.score <= 1.0
