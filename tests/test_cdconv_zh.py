"""Chinese backbone pieces with a tiny random model: the ``+zh`` vocabulary extension (no [UNK] left,
small folders, exact save/load), the OCNLI adapter, and NLI pre-training as the start of the CDConv
detectors (``--init``)."""

from __future__ import annotations

import json

import pytest

from dialcheck.datasets import get_dataset_info, load_dataset
from dialcheck.datasets.ocnli import read_ocnli
from dialcheck.detectors import FlatCategoryDetector, HierarchicalDetector, PairCategoryDetector, load_detector
from dialcheck.detectors.categories import STAGES
from dialcheck.errors import InputError, ModelError
from dialcheck.schema import Dialogue, Example, Pair, Turn
from dialcheck.training.trainer import TrainConfig
from dialcheck.vocab import ADDED_TOKENS_FILE, extension_tokens, split_base, unk_characters, unk_rate
from helpers_cdconv import write_cdconv_splits
from helpers_interrupt import kill_on_call

SENTENCE = "我今年23岁了，你呢？我养了两只猫。"


@pytest.fixture(autouse=True)
def _one_thread():
    import torch

    torch.set_num_threads(1)


def test_extension_removes_unknown_characters(tiny_base):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_base)
    before, n = unk_rate(tok, [SENTENCE])
    assert before > 0.3 and n == len(SENTENCE) - 1  # "23" is one token
    missing = unk_characters(tok, [SENTENCE])
    assert "岁" in missing and "我" not in missing
    assert set(missing) <= set(extension_tokens("zh"))
    tok.add_tokens(extension_tokens("zh"))
    assert unk_rate(tok, [SENTENCE]) == (0.0, n)
    assert split_base(f"{tiny_base}+zh") == (str(tiny_base), "zh")


def conv(reply: str, i: int) -> Dialogue:
    texts = [f"你喜欢狗吗{i}？", "喜欢，我养了两条狗。", "你养宠物吗？", reply]
    return Dialogue(tuple(Turn(s, t) for s, t in zip(["user", "bot", "user", "bot"], texts, strict=True)))


def examples(n: int = 12) -> list[Example]:
    cats = [None, "intra_sentence", "role_confusion", "history"]
    return [Example(conv(f"我从来没养过猫{i}。", i), cats[i % 4] is not None, None, cats[i % 4]) for i in range(n)]


def test_zh_base_trains_saves_small_and_reloads_exactly(tiny_base, tmp_path):
    from safetensors.torch import load_file

    det = PairCategoryDetector(base=f"{tiny_base}+zh", adapter={"type": "lora", "r": 2, "alpha": 4}, max_length=40)
    det.fit(examples(), config=TrainConfig(epochs=2, batch_size=4, threads=1, lr=1e-2))
    tok = det.classifier.tokenizer
    assert unk_rate(tok, [SENTENCE])[0] == 0.0
    dialogues = [e.dialogue for e in examples()]
    before = det.predict(dialogues)
    out = det.save(tmp_path / "zh")
    saved = (out / ADDED_TOKENS_FILE).read_text(encoding="utf-8").split()
    assert saved == extension_tokens("zh")
    state = load_file(str(out / "weights.safetensors"))
    rows = [v for k, v in state.items() if "trainable_tokens" in k]
    assert len(rows) == 1 and rows[0].shape == (len(saved), 32)  # only the new rows, not the whole matrix
    assert not any("word_embeddings.weight" in k for k in state)
    assert json.loads((out / "dialcheck.json").read_text())["base"].endswith("+zh")
    loaded = load_detector(out)
    after = loaded.predict(dialogues)
    assert [v.score for v in after] == pytest.approx([v.score for v in before], abs=1e-6)
    assert [v.category for v in after] == [v.category for v in before]
    (out / ADDED_TOKENS_FILE).unlink()
    with pytest.raises(ModelError, match=r"added_tokens\.txt is missing"):
        load_detector(out)


def test_ocnli_adapter_labels_and_located_errors(tmp_path, data_root):
    f = tmp_path / "x.json"
    rows = [
        {"sentence1": "他在家。", "sentence2": "他不在家。", "label": "contradiction", "prem_id": "a"},
        {"sentence1": "他在家。", "sentence2": "家里有人。", "label": "entailment"},
        {"sentence1": "他在家。", "sentence2": "他在睡觉。", "label": "neutral"},
        {"sentence1": "他在家。", "sentence2": "？", "label": "-"},
    ]
    f.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    pairs = read_ocnli(f)
    assert [p.label for p in pairs] == [1, 0, 0] and pairs[0].group == "ocnli:a"
    f.write_text(json.dumps({"sentence1": "a", "sentence2": "b", "label": "yes"}) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"x.json.*1|label") as e:
        read_ocnli(f)
    assert "yes" in str(e.value)
    info = get_dataset_info("ocnli.dev.v1")
    assert info.count == 2950 and len(info.sha256) == 1
    if (data_root / "ocnli" / "dev.json").exists():
        dev = load_dataset("ocnli.dev.v1", data_root)
        assert len(dev) == 2950 and sum(p.label for p in dev) == 900


def nli_pairs(n: int = 20) -> list[Pair]:
    return [Pair(f"他今天在家{i}。", f"他{'不' if i % 2 else '确实'}在家。", i % 2, "ocnli") for i in range(n)]


@pytest.fixture(scope="module")
def nli_dir(tiny_base, tmp_path_factory):
    import torch

    from dialcheck.training.nli import pretrain_nli

    torch.set_num_threads(1)
    cfg = TrainConfig(epochs=2, batch_size=5, threads=1, lr=1e-2, eval_every=2)
    adapter = {"type": "lora", "r": 2, "alpha": 4, "dropout": 0.1}
    det = pretrain_nli(nli_pairs()[:16], nli_pairs()[16:], f"{tiny_base}+zh", adapter, 40, cfg)
    return det.save(tmp_path_factory.mktemp("nli") / "ocnli")


def _state(model) -> dict:
    from peft import get_peft_model_state_dict

    return {k: v.detach().clone() for k, v in get_peft_model_state_dict(model, save_embedding_layers=False).items()}


@pytest.mark.parametrize("cls", [HierarchicalDetector, FlatCategoryDetector])
def test_cdconv_detectors_start_from_the_nli_model(nli_dir, cls):
    from safetensors.torch import load_file

    pre = load_file(str(nli_dir / "weights.safetensors"))
    assert any("trainable_tokens" in k for k in pre)
    base = json.loads((nli_dir / "dialcheck.json").read_text())["base"]
    det = cls(base=base, adapter={"type": "lora", "r": 2, "alpha": 4, "dropout": 0.1}, max_length=40)
    det.fit(examples(), config=TrainConfig(epochs=1, batch_size=4, threads=1, lr=1e-12), init=nli_dir)
    assert det.config.training["init"] == str(nli_dir)
    models = [det.stages[s].model for s in STAGES] if cls is HierarchicalDetector else [det.classifier.model]
    for model in models:
        st = _state(model)
        for k, v in pre.items():
            if cls is FlatCategoryDetector and ".classifier." in k:
                assert st[k].shape[0] == 4  # a new 4-way head
                continue
            assert st[k].float().sub(v.float()).abs().max().item() < 1e-6, k
    # a fresh start differs from the pre-trained encoder
    fresh = cls(base=det.config.base, adapter=dict(det.config.adapter), max_length=40)
    fresh.fit(examples(), config=TrainConfig(epochs=1, batch_size=4, threads=1, lr=1e-12))
    m = fresh.stages["history"].model if cls is HierarchicalDetector else fresh.classifier.model
    lora = [k for k in pre if "lora_B" in k]
    assert any(_state(m)[k].abs().max().item() < 1e-9 < pre[k].abs().max().item() for k in lora)


def test_init_refuses_a_different_adapter(nli_dir):
    base = json.loads((nli_dir / "dialcheck.json").read_text())["base"]
    det = HierarchicalDetector(base=base, adapter={"type": "lora", "r": 4, "alpha": 8}, max_length=40)
    with pytest.raises(ModelError, match="adapter"):
        det.fit(examples(), config=TrainConfig(epochs=1, batch_size=4, threads=1), init=nli_dir)


def test_cli_ocnli_then_cdconv_init(tiny_base, tmp_path, capsys):
    from dialcheck.cli import main

    root = tmp_path / "data"
    (root / "ocnli").mkdir(parents=True)
    rows = [
        {"sentence1": p.first, "sentence2": p.second, "label": ["entailment", "contradiction"][p.label]}
        for p in nli_pairs()
    ]
    for name in ("train.10k.json", "dev.json"):
        (root / "ocnli" / name).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    conv_rows = [
        {"u1": f"你喜欢狗吗{i}", "b1": "喜欢。", "u2": "你养狗吗？", "b2": f"没养过{i}", "label": i % 4}
        for i in range(20)
    ]
    write_cdconv_splits(root, conv_rows)
    common = ["--data-dir", str(root), "--epochs", "1", "--batch-size", "8", "--threads", "1", "--no-progress"]
    nli = tmp_path / "nli"
    args = ["train", "--task", "ocnli", "--out", str(nli), "--base", f"{tiny_base}+zh", "--lora", "2"]
    assert main([*args, "--max-length", "32", *common]) == 0
    assert (nli / ADDED_TOKENS_FILE).exists()
    out = tmp_path / "h"
    assert main(["train", "--task", "cdconv", "--out", str(out), "--init", str(nli), *common]) == 0
    loaded = load_detector(out)
    assert type(loaded) is HierarchicalDetector and loaded.config.base.endswith("+zh")
    assert loaded.config.training["init"]["folder"] == str(nli) and loaded.config.max_length == 32
    card = (out / "MODEL_CARD.md").read_text()
    assert f"Continues `{nli}`" in card and "and then:" in card and "CDConv official split" in card  # the chain
    assert "OCNLI train.10k" in (nli / "MODEL_CARD.md").read_text()
    assert all((out / s / ADDED_TOKENS_FILE).exists() for s in STAGES)
    capsys.readouterr()
    assert main(["train", "--task", "ocnli", "--out", str(tmp_path / "y"), "--detector", "flat", *common]) == 2
    assert "do not apply to --task ocnli" in capsys.readouterr().err


def test_cli_cdconv_cascade_resumes_in_the_stage_that_was_cut(tiny_base, tmp_path, capsys, caplog, monkeypatch):
    """Killed in the role-confusion stage's second validation, the run resumes with the finished
    intra-sentence stage as it was and the cut stage from its last validation, and ends as the
    uninterrupted run does."""
    import logging

    import torch

    from dialcheck.cli import main
    from dialcheck.training import cdconv

    conv_rows = [
        {"u1": f"你喜欢狗吗{i}", "b1": "喜欢。", "u2": "你养狗吗？", "b2": f"没养过{i % 3}", "label": i % 4}
        for i in range(20)
    ]
    root = write_cdconv_splits(tmp_path / "data", conv_rows)
    common = ["--data-dir", str(root), "--base", str(tiny_base), "--lora", "2", "--epochs", "2", "--batch-size", "8"]
    common += ["--eval-every", "2", "--threads", "1", "--no-progress"]
    whole, cut = tmp_path / "whole", tmp_path / "cut"

    def train(out, *extra):
        torch.manual_seed(0)  # each run as in a new process: the first stage's fresh weights come from here
        return main(["train", "--task", "cdconv", "--out", str(out), *common, *extra])

    assert train(whole) == 0
    with monkeypatch.context() as m:  # each stage validates at steps 2, 4, 6: the 5th is role confusion's 2nd
        kill_on_call(m, cdconv, "best_threshold", 5)
        assert train(cut) == 130
    assert sorted(p.parent.name for p in (cut / "resume").rglob("trainer_state.pt")) == [
        "intra_sentence",
        "role_confusion",
    ]
    capsys.readouterr()
    assert train(cut) == 2
    assert "--resume" in capsys.readouterr().err
    with caplog.at_level(logging.INFO, logger="dialcheck"):
        assert train(cut, "--resume") == 0
    assert "resuming at step 6 of 6" in caplog.text and "resuming at step 2 of 6" in caplog.text
    a, b = load_detector(whole), load_detector(cut)
    assert a.config.thresholds == b.config.thresholds and not (cut / "resume").exists()
    fits = [
        {s: {k: v for k, v in f.items() if k != "seconds"} for s, f in d.config.training["fits"].items()}
        for d in (a, b)
    ]
    assert fits[0] == fits[1]
    probe = [Dialogue.from_texts(["你喜欢狗吗", "喜欢。", "你养狗吗？", t]) for t in ("没养过", "养了三只")]
    assert [v.score for v in b.predict(probe)] == pytest.approx([v.score for v in a.predict(probe)], abs=1e-6)


def test_table4_benchmark_end_to_end_and_resumable(tiny_base, tmp_path, data_root, capsys, load_benchmark):
    if not (data_root / "ocnli" / "train.10k.json").exists():
        pytest.skip("OCNLI is not present")
    mod = load_benchmark("cdconv_table4")
    out = tmp_path / "t4"
    args = ["--out", str(out), "--backbones", "minilm-zh,gemma-frozen", "--splits", "official", "--seeds", "0"]
    args += ["--base", f"minilm-zh={tiny_base}+zh", "--base", f"gemma-frozen={tiny_base}", "--limit", "20"]
    args += ["--epochs", "1", "--pretrain-epochs", "1", "--threads", "1", "--data-dir", str(data_root)]
    assert mod.main(args) == 0
    cells = sorted(p.name for p in (out / "cells").glob("*.json"))
    assert len(cells) == 8 and "minilm-zh__ocnli__hierarchical__official__s0.json" in cells
    cell = json.loads((out / "cells" / "minilm-zh__ocnli__flat__official__s0.json").read_text())
    assert cell["test_examples"] == 20 and "4class/macro_f1" in cell["test"]
    assert json.loads((out / "cells" / "gemma-frozen__ocnli__flat__official__s0.json").read_text())["skipped"]
    assert (out / "pretrain" / "minilm-zh__s0" / ADDED_TOKENS_FILE).exists()
    table = (out / "table4.md").read_text()
    assert (
        "| paper: RoBERTa | yes | hierarchical | 4 | | 80.4 | 78.1 | 77.8 | 59.3 | 85.1 | 33.0 | 48.1 | 71.0 |" in table
    )
    assert "| minilm-zh | ocnli | hierarchical | 1 |" in table and "[UNK] share" in table
    capsys.readouterr()
    assert mod.main(args) == 0  # resumed: nothing left to run
    assert "0 cell(s) run, 8 already finished" in capsys.readouterr().err
    # the per-stage-threshold variant reuses the kept hierarchical model: no training, the stages' own thresholds
    hier = json.loads((out / "cells" / "minilm-zh__ocnli__hierarchical__official__s0.json").read_text())
    assert (
        mod.main([*args, "--backbones", "minilm-zh", "--pretrain", "ocnli", "--detectors", "hierarchical-stage"]) == 0
    )
    stage = json.loads((out / "cells" / "minilm-zh__ocnli__hierarchical-stage__official__s0.json").read_text())
    assert stage["reused_model"] and not hier["reused_model"]
    saved = json.loads((out / "models" / "minilm-zh__ocnli__hierarchical__official__s0" / "dialcheck.json").read_text())
    assert stage["thresholds"] == saved["training"]["cascade"]["stage_thresholds"]
    assert hier["thresholds"] == {k: saved["thresholds"][k] for k in hier["thresholds"]}
    assert "| minilm-zh | ocnli | hierarchical-stage | 1 |" in (out / "table4.md").read_text()
    one = ["--backbones", "minilm-zh", "--pretrain", "ocnli", "--detectors", "hierarchical-lexical"]
    assert mod.main([*args, *one]) == 0
    lex = json.loads((out / "cells" / "minilm-zh__ocnli__hierarchical-lexical__official__s0.json").read_text())
    assert lex["reused_model"] and lex["lexical_mix"] in [round(0.1 * i, 1) for i in range(11)]
    frozen = ["--backbones", "gemma-frozen", "--pretrain", "none", "--detectors", "hierarchical-lexical"]
    assert mod.main([*args, *frozen]) == 0  # the frozen cascade is calibrated by the lexical fit alone
    flx = json.loads((out / "cells" / "gemma-frozen__none__hierarchical-lexical__official__s0.json").read_text())
    assert flx["lexical_mix"] in [round(0.1 * i, 1) for i in range(11)] and "4class/macro_f1" in flx["test"]
    # the shipped default's recipe: the kept flat model, the n-gram head mixed in, mix and tau chosen on dev
    flat = json.loads((out / "cells" / "minilm-zh__ocnli__flat__official__s0.json").read_text())
    assert mod.main([*args, "--backbones", "minilm-zh", "--pretrain", "ocnli", "--detectors", "flat-lexical"]) == 0
    flex = json.loads((out / "cells" / "minilm-zh__ocnli__flat-lexical__official__s0.json").read_text())
    assert flex["reused_model"] and not flat["reused_model"]
    assert flex["lexical_mix"] in [round(0.1 * i, 1) for i in range(11)] and flat["lexical_mix"] is None
    assert 0.3 <= flex["tau"] <= 0.8 and "| minilm-zh | ocnli | flat-lexical | 1 |" in (out / "table4.md").read_text()


def test_gemma_code_paths_with_a_tiny_gemma3_text_model(tiny_base, tmp_path):
    """The Gemma-3 paths (LoRA + a 'score' head, NLI init with a new 4-way head, frozen features) on a
    2-layer random gemma3_text model with the MiniLM tokenizer: no real Gemma is loaded."""
    import torch
    from transformers import AutoTokenizer, Gemma3ForCausalLM, Gemma3TextConfig

    from dialcheck.training.frozen import FeatureCache, FrozenHead
    from dialcheck.training.nli import pretrain_nli

    tok = AutoTokenizer.from_pretrained(tiny_base)
    folder = tmp_path / "tiny-gemma"
    cfg = Gemma3TextConfig(
        vocab_size=len(tok),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=16,
        pad_token_id=0,
        max_position_embeddings=256,
        layer_types=["sliding_attention", "full_attention"],
    )
    torch.manual_seed(0)
    Gemma3ForCausalLM(cfg).save_pretrained(folder)
    tok.save_pretrained(folder)
    adapter = {"type": "lora", "r": 2, "alpha": 4, "dropout": 0.1}
    nli = pretrain_nli(nli_pairs()[:8], (), str(folder), adapter, 32, TrainConfig(epochs=1, batch_size=4, threads=1))
    nli_dir = nli.save(tmp_path / "nli")
    det = FlatCategoryDetector(base=str(folder), adapter=dict(adapter), max_length=32)
    det.fit(examples(8), config=TrainConfig(epochs=1, batch_size=4, threads=1, lr=1e-12), init=nli_dir)
    assert det.classifier.model.base_model.model.score.modules_to_save["default"].weight.shape[0] == 4
    dialogues = [e.dialogue for e in examples(8)]
    out = det.save(tmp_path / "flat")
    assert [v.score for v in load_detector(out).predict(dialogues)] == pytest.approx(
        [v.score for v in det.predict(dialogues)], abs=1e-6
    )
    cache = FeatureCache.from_base(str(folder), max_length=32)
    head = FrozenHead(cache, ["non_contradiction", "contradiction"])
    pairs = [(p.first, p.second) for p in nli_pairs(8)]
    head.fit(pairs, [p.label for p in nli_pairs(8)], steps=50)
    assert head.score(pairs).shape == (8,) and len(cache._cache) == 8


def test_ensemble_benchmark_chooses_the_smallest_weight_that_fixes_dev(tmp_path, capsys, load_benchmark):
    mod = load_benchmark("cdconv_ensemble")
    cats = ["intra_sentence", "role_confusion", "history"]

    def rows(confident: bool) -> str:
        out = []
        for split in ("dev", "test"):
            for i in range(40):
                gold = [None, *cats][i % 4]
                scores = {c: (0.97 if c == gold else 0.01) if confident else 0.25 for c in cats}
                row = {"split": split, "id": f"{split}:{i}", "gold": int(gold is not None), "gold_category": gold}
                out.append(json.dumps({**row, "label_scores": scores}))
        return "\n".join(out) + "\n"

    (tmp_path / "a.jsonl").write_text(rows(True))
    (tmp_path / "b.jsonl").write_text(rows(False))
    mod.main([str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")])
    out = capsys.readouterr().out
    # B alone calls everything or nothing a contradiction; a tenth of A already separates both ways
    assert "w=0.1 tau=0.70: (100.0, 100.0, 100.0) <- chosen" in out
    assert "chosen (w=0.1, tau=0.70): 2class/accuracy 100.00, 4class/macro_f1 100.00" in out
    assert "B alone (w=0.0, tau=0.30): 2class/accuracy 75.00" in out
