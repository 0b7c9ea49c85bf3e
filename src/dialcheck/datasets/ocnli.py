"""OCNLI (Hu et al. 2020), original Chinese NLI, as two-label pairs for NLI pre-training (CDConv).

Entailment and neutral become non-contradiction (0), contradiction becomes 1, as CDConv's NLI
pre-training does; pairs without a majority label (``"-"``) are left out. Only train.10k and dev are
available here (train.50k is not), and the test labels are not public.

>>> ocnli_pair({"sentence1": "他在家。", "sentence2": "他不在家。", "label": "contradiction", "prem_id": "p1"}).label
1
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import InputError
from ..schema import Pair
from .base import read_jsonl, register_dataset, require

__all__ = ["ocnli_pair", "read_ocnli"]

OCNLI = "ocnli"
_LABELS = {"entailment": 0, "neutral": 0, "contradiction": 1}


def ocnli_pair(obj: dict[str, Any], path: str = "<record>", line: int | None = None) -> Pair | None:
    """One OCNLI record as a :class:`Pair` (``None`` for a record without a gold label)."""
    p = Path(path)
    label = require(obj, "label", str, p, line or 0)
    if label == "-":
        return None
    if label not in _LABELS:
        raise InputError(f"label: expected entailment, neutral, contradiction or '-', got {label!r}", path, line)
    first = require(obj, "sentence1", str, p, line or 0)
    second = require(obj, "sentence2", str, p, line or 0)
    if not first.strip() or not second.strip():
        raise InputError("sentence1/sentence2: empty sentence", path, line)
    group = f"ocnli:{obj.get('prem_id') or line}"
    return Pair(first, second, _LABELS[label], OCNLI, group)


def read_ocnli(path: Path) -> list[Pair]:
    """The labelled pairs of an OCNLI JSON-lines file; errors name the file and line."""
    out = []
    for n, obj in read_jsonl(path):
        pair = ocnli_pair(obj, str(path), n)
        if pair is not None:
            out.append(pair)
    return out


@register_dataset(
    "ocnli.train.v1",
    "OCNLI train.10k as two labels (contradiction vs. entailment + neutral; 15 unlabelled pairs left out)",
    (f"{OCNLI}/train.10k.json",),
    9985,
    ("b8a0b7b72f62eb8d47a4d21ba34c4948bf2bdf5fde649a964ef3779504c7ab81",),
)
def load_train(root: Path) -> list[Pair]:
    return read_ocnli(root / OCNLI / "train.10k.json")


@register_dataset(
    "ocnli.dev.v1",
    "OCNLI dev as two labels (contradiction vs. entailment + neutral; 50 unlabelled pairs left out)",
    (f"{OCNLI}/dev.json",),
    2950,
    ("001ded235d73a18dac68a45a38cd5f9b3f9311fa4246df623e199422c073ddc5",),
)
def load_dev(root: Path) -> list[Pair]:
    return read_ocnli(root / OCNLI / "dev.json")
