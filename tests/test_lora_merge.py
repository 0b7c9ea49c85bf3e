"""Inference merges a saved LoRA adapter without peft, and gets exactly what peft's merge gets."""

import sys

import pytest
import torch


@pytest.fixture
def trained_lora_dir(tiny_base, tmp_path):
    """A saved detector whose adapter is not the untrained one (peft starts B at zero, a no-op update)."""
    from dialcheck.detectors import UtteranceDetector
    from dialcheck.detectors.modeling import build_model

    torch.manual_seed(1)
    det = UtteranceDetector(base=str(tiny_base), adapter={"type": "lora", "r": 4, "alpha": 12}, tau=0.5, eta_e=0.5)
    model, tok = build_model(det.config)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "lora_B" in name or "lora_A" in name:
                p.normal_(0, 0.5)
    det.attach(model, tok)
    det.save(tmp_path / "det")
    return tmp_path / "det"


def _logits(model, tok):
    pairs = (["I have two dogs.", "I love jazz."], ["I never had a pet.", "Me too."])
    enc = tok(*pairs, return_tensors="pt", padding=True)
    with torch.no_grad():
        return model(**enc).logits


def test_the_plain_merge_equals_peft_merge_and_changes_the_base(trained_lora_dir):
    from dialcheck.detectors.modeling import CONFIG_NAME, DetectorConfig, build_model, load_model, load_trainable

    cfg = DetectorConfig.from_file(trained_lora_dir / CONFIG_NAME)
    fast, tok = load_model(trained_lora_dir, cfg)
    assert not hasattr(fast, "peft_config") and type(fast).__name__.endswith("ForSequenceClassification")
    ref, _ = load_trainable(trained_lora_dir, cfg)
    ref = ref.merge_and_unload().eval()
    assert torch.allclose(_logits(fast, tok), _logits(ref, tok), atol=1e-6)
    plain, _ = build_model(cfg, peft=False)  # the base without the update: the merge did change the encoder
    q = "bert.encoder.layer.0.attention.self.query.weight"
    assert not torch.allclose(dict(fast.named_parameters())[q], dict(plain.named_parameters())[q])


def test_a_state_it_cannot_read_falls_back_to_peft_and_changes_nothing(trained_lora_dir):
    from safetensors.torch import load_file

    from dialcheck.detectors.modeling import CONFIG_NAME, WEIGHTS_NAME, DetectorConfig, build_model, merge_lora_plain

    cfg = DetectorConfig.from_file(trained_lora_dir / CONFIG_NAME)
    model, _ = build_model(cfg, peft=False)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    state = load_file(str(trained_lora_dir / WEIGHTS_NAME))
    state["base_model.model.bert.embeddings.word_embeddings.token_adapter.trainable_tokens_delta"] = torch.zeros(2, 8)
    assert merge_lora_plain(model, state, cfg.adapter) is False
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())


def test_loading_a_lora_detector_for_inference_does_not_import_peft(trained_lora_dir, monkeypatch):
    from dialcheck.detectors import load_detector

    monkeypatch.setitem(sys.modules, "peft", None)  # any `import peft` now fails
    det = load_detector(trained_lora_dir)
    assert len(det.predict([["I have a cat.", "Nice.", "I never had pets."]])) == 1
