"""Vocabulary extension: characters a base tokenizer turns into ``[UNK]`` become new whole tokens.

all-MiniLM-L6-v2 has an uncased English WordPiece vocabulary: 63% of the tokens of CDConv dev are
``[UNK]``. BERT's basic tokenizer already splits CJK text one character per token, so adding each
missing character as a token (and a new embedding row for it) makes every training character visible.

A base name ``NAME+EXT`` (e.g. ``all-MiniLM-L6-v2+zh``) is the base ``NAME`` with the extension ``EXT``
(see :data:`EXTENSIONS`). The new rows start at the mean of the existing rows plus seeded noise, are
trained with the adapter (PEFT's trainable tokens: only these rows, not the whole matrix), and a saved
detector keeps the added tokens in ``added_tokens.txt`` and the trained rows in ``weights.safetensors``.

>>> split_base("all-MiniLM-L6-v2+zh"), split_base("/models/x")
(('all-MiniLM-L6-v2', 'zh'), ('/models/x', None))
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from .errors import ModelError

__all__ = [
    "ADDED_TOKENS_FILE",
    "EXTENSIONS",
    "build_zh_vocabulary",
    "extend_vocabulary",
    "extension_tokens",
    "read_added_tokens",
    "split_base",
    "unk_characters",
    "unk_rate",
    "write_added_tokens",
]

log = logging.getLogger(__name__)

ADDED_TOKENS_FILE = "added_tokens.txt"
EXTENSIONS = {
    "zh": "characters of the CDConv train splits (official and context-disjoint) and OCNLI train.10k that "
    "all-MiniLM-L6-v2 maps to [UNK] (dialcheck._zh_vocab, built by build_zh_vocabulary)",
}
INIT_SEED = 0
INIT_NOISE = 0.5  # noise std as a share of the per-dimension std of the existing rows


def split_base(name: str) -> tuple[str, str | None]:
    """``(base, extension)`` of a base name: ``"all-MiniLM-L6-v2+zh"`` -> ``("all-MiniLM-L6-v2", "zh")``.

    Only a known extension after the last ``+`` counts, so paths containing ``+`` still work.
    """
    head, sep, tail = name.rpartition("+")
    if sep and head and tail in EXTENSIONS:
        return head, tail
    return name, None


def extension_tokens(ext: str) -> list[str]:
    """The tokens of a registered extension, in a fixed order."""
    if ext == "zh":
        from ._zh_vocab import CHARACTERS

        return list(CHARACTERS)
    raise ModelError(f"unknown vocabulary extension {ext!r}; known: {', '.join(EXTENSIONS)}")


def _is_unk(tokenizer: Any, piece: str) -> bool:
    ids = tokenizer(piece, add_special_tokens=False)["input_ids"]
    return tokenizer.unk_token_id is not None and tokenizer.unk_token_id in ids


def unk_characters(tokenizer: Any, texts: Iterable[str]) -> list[str]:
    """Every character of ``texts`` that ``tokenizer`` maps to ``[UNK]`` on its own, sorted.

    Characters are taken after the tokenizer's normalizer (lower-casing, accent stripping), so an added
    token matches what the tokenizer sees.
    """
    backend = getattr(tokenizer, "backend_tokenizer", None)
    norm = backend.normalizer if backend is not None else None
    seen: set[str] = set()
    out: set[str] = set()
    for text in texts:
        for ch in norm.normalize_str(text) if norm is not None else text:
            if ch in seen or ch.isspace():
                continue
            seen.add(ch)
            if _is_unk(tokenizer, ch):
                out.add(ch)
    return sorted(out)


def unk_rate(tokenizer: Any, texts: Iterable[str]) -> tuple[float, int]:
    """(share of ``[UNK]`` among the tokens of ``texts``, number of tokens)."""
    n = unk = 0
    for text in texts:
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        n += len(ids)
        unk += sum(i == tokenizer.unk_token_id for i in ids)
    return (unk / n if n else 0.0), n


def extend_vocabulary(
    model: Any, tokenizer: Any, tokens: Sequence[str], seed: int = INIT_SEED, noise: float = INIT_NOISE
) -> list[int]:
    """Add ``tokens`` to ``tokenizer`` and new input-embedding rows to ``model``; returns their ids.

    New rows are the mean of the existing rows plus Gaussian noise (``noise`` times the per-dimension
    std, from a generator seeded with ``seed``), so the same call always builds the same model and the
    new characters are distinguishable before training. Tokens the tokenizer already has are skipped.
    """
    import torch

    missing = [t for t in tokens if tokenizer.convert_tokens_to_ids(t) in (None, tokenizer.unk_token_id)]
    if len(set(missing)) != len(missing):
        raise ModelError("the added vocabulary lists a token twice")
    if not missing:
        return []
    old = model.get_input_embeddings().weight.shape[0]
    tokenizer.add_tokens(list(missing))
    ids = tokenizer.convert_tokens_to_ids(list(missing))
    if min(ids) < old:
        raise ModelError(f"added tokens got ids below the embedding size {old}: the tokenizer and model disagree")
    model.resize_token_embeddings(max(ids) + 1, mean_resizing=False)
    emb = model.get_input_embeddings().weight
    with torch.no_grad():
        ref = emb[:old].float()
        gen = torch.Generator().manual_seed(seed)
        rows = torch.randn(len(ids), emb.shape[1], generator=gen) * (noise * ref.std(0)) + ref.mean(0)
        emb[torch.tensor(ids)] = rows.to(emb.dtype)
    tokenizer.dialcheck_added_tokens = list(missing)
    log.info("added %d tokens to the vocabulary (%d -> %d rows)", len(ids), old, emb.shape[0])
    return list(ids)


def write_added_tokens(folder: Path, tokens: Sequence[str]) -> None:
    """Write the added tokens, one per line, into ``folder``."""
    (folder / ADDED_TOKENS_FILE).write_text("".join(f"{t}\n" for t in tokens), encoding="utf-8")


def read_added_tokens(folder: Path) -> list[str] | None:
    """The added tokens saved in ``folder``, or ``None`` when it has none."""
    path = folder / ADDED_TOKENS_FILE
    if not path.exists():
        return None
    return [line for line in path.read_text(encoding="utf-8").split("\n") if line]


def corpus_texts(data_dir: str | Path | None = None) -> list[str]:
    """Every utterance and sentence of the CDConv train splits (official and context-disjoint) and OCNLI
    train.10k: the text the ``zh`` extension is built from."""
    from .datasets import load_dataset

    texts = []
    for name in ("cdconv.train.v1", "cdconv.disjoint.train.v1"):
        texts.extend(t.text for e in load_dataset(name, data_dir) for t in e.dialogue.turns)
    for p in load_dataset("ocnli.train.v1", data_dir):
        texts.extend((p.first, p.second))
    return texts


def build_zh_vocabulary(tokenizer: Any, data_dir: str | Path | None = None) -> list[str]:
    """The ``zh`` extension: characters of :func:`corpus_texts` that ``tokenizer`` maps to ``[UNK]``."""
    return unk_characters(tokenizer, corpus_texts(data_dir))
