"""A small BERT-style encoder with a character vocabulary and random weights, to be trained from scratch.

The third Chinese backbone candidate of the CDConv comparison (beside MiniLM with added characters and
Gemma-3-270m): no pre-training at all, a vocabulary of the characters of a corpus, a few layers. The
folder it writes is a plain Hugging Face folder, so every ``--base`` accepts it; train it with full
fine-tuning (``--full``; an adapter on random weights learns nothing) and a learning rate for random
weights (about 5e-4)::

    python benchmarks/zh_scratch_base.py --out runs/zh-scratch-base
    dialcheck train --task cdconv --detector flat --base runs/zh-scratch-base --full --lr 5e-4 --epochs 8 ...

BERT's basic tokenizer splits CJK text into one token per character; every other word is split into
single characters too (``##`` continuation pieces for ASCII letters and digits), so the vocabulary is
characters only.

>>> character_vocabulary(["我有猫", "我有狗", "猫"], min_count=2)
['我', '有', '猫']
"""

from __future__ import annotations

import json
import logging
import string
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from .errors import ModelError

__all__ = ["SPECIAL_TOKENS", "build_scratch_base", "character_vocabulary"]

log = logging.getLogger(__name__)

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
SCRATCH_FILE = "scratch.json"


def character_vocabulary(texts: Iterable[str], min_count: int = 2) -> list[str]:
    """Non-space characters seen at least ``min_count`` times (lower-cased), sorted by code point."""
    if min_count < 1:
        raise ValueError(f"min_count must be at least 1, got {min_count}")
    counts = Counter(ch for t in texts for ch in t.lower() if not ch.isspace())
    return sorted(ch for ch, n in counts.items() if n >= min_count)


def build_scratch_base(
    out: str | Path,
    texts: Iterable[str],
    *,
    layers: int = 4,
    hidden: int = 256,
    heads: int = 4,
    max_position: int = 512,
    min_count: int = 2,
    seed: int = 0,
) -> Path:
    """Write a randomly initialised ``BertModel`` and its character tokenizer to ``out``.

    The vocabulary is the special tokens, ASCII letters and digits (with ``##`` pieces, so English
    words split into characters instead of becoming ``[UNK]``), ASCII punctuation, then the characters
    of ``texts`` seen ``min_count`` times or more. Deterministic for the same texts and ``seed``.
    """
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    if hidden % heads:
        raise ModelError(f"hidden size {hidden} is not a multiple of the number of heads {heads}")
    out = Path(out)
    ascii_chars = list(string.ascii_lowercase + string.digits)
    vocab = list(SPECIAL_TOKENS) + ascii_chars + [f"##{c}" for c in ascii_chars] + list(string.punctuation)
    seen = set(vocab)
    corpus = [c for c in character_vocabulary(texts, min_count) if c not in seen]
    if not corpus:
        raise ModelError("no character occurs often enough in the texts to build a vocabulary")
    vocab += corpus
    out.mkdir(parents=True, exist_ok=True)
    vocab_file = out / "vocab.txt"
    vocab_file.write_text("\n".join(vocab) + "\n", encoding="utf-8")
    tok = BertTokenizerFast(vocab={t: i for i, t in enumerate(vocab)}, do_lower_case=True, tokenize_chinese_chars=True)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=4 * hidden,
        max_position_embeddings=max_position,
        pad_token_id=0,
    )
    torch.manual_seed(seed)
    model = BertModel(config)
    model.save_pretrained(out)
    tok.save_pretrained(out)
    info = {
        "what": "BERT-style encoder with random weights and a character vocabulary (dialcheck.scratch)",
        "vocab_size": len(vocab),
        "corpus_characters": len(corpus),
        "min_count": min_count,
        "layers": layers,
        "hidden": hidden,
        "heads": heads,
        "parameters": sum(p.numel() for p in model.parameters()),
        "seed": seed,
    }
    (out / SCRATCH_FILE).write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    log.info("wrote a from-scratch base to %s (%d characters, %d parameters)", out, len(vocab), info["parameters"])
    return out
