"""Shared fixtures: a tiny random-weight encoder with the real MiniLM tokenizer, and detectors built on it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(autouse=True)
def _fresh_detector_cache():
    """``dialcheck.api.load`` shares one detector per folder in a process, and the CLI's --tau, --int8, ...
    change that shared detector: each test starts from detectors as saved."""
    yield
    from dialcheck import api

    api._cached.cache_clear()


@pytest.fixture(scope="session")
def data_root() -> Path:
    if not SHARED.is_dir():
        pytest.skip("../shared/data is not present")
    return SHARED


@pytest.fixture
def repository_only_models() -> None:
    """Skip a test that reads the superseded models (catalog.REPOSITORY_ONLY) outside a checkout, where they are not:
    they are kept in the source repository only, out of the wheel and the sdist (PyPI's 100 MB limit), whose tests
    run without them. In a checkout the test runs: a superseded model's lost folder fails it."""
    from helpers_checkout import skip_without_repository_only_models

    skip_without_repository_only_models()


@pytest.fixture(scope="session")
def load_benchmark():
    """Import a script of ``benchmarks/`` by name (they are scripts, not a package), with ``benchmarks/`` on
    the import path as when run (``python benchmarks/x.py``), so that they can import their helpers."""
    import importlib.util
    import sys

    folder = Path(__file__).resolve().parents[1] / "benchmarks"
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

    def load(name: str):
        path = folder / f"{name}.py"
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod

    return load


@pytest.fixture(scope="session")
def tiny_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-layer, 32-wide BERT with random weights, saved with the real all-MiniLM-L6-v2 tokenizer."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    from dialcheck.backbones import resolve_base

    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("tiny-bert")
    tok = AutoTokenizer.from_pretrained(resolve_base("all-MiniLM-L6-v2"))
    cfg = BertConfig(
        vocab_size=tok.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
    )
    BertModel(cfg).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


@pytest.fixture(scope="session")
def tiny_detector_dir(tiny_base: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A saved utterance detector (LoRA adapter + head) on the tiny base."""
    import torch

    from dialcheck.detectors import UtteranceDetector
    from dialcheck.detectors.modeling import build_model

    torch.manual_seed(0)
    det = UtteranceDetector(base=str(tiny_base), adapter={"type": "lora", "r": 4, "alpha": 8}, tau=0.5, eta_e=0.5)
    model, tok = build_model(det.config)
    det.attach(model, tok)
    out = tmp_path_factory.mktemp("models") / "tiny-utterance"
    det.save(out)
    return out
