"""CDConv (Zheng et al. 2022) adapter: Chinese four-turn conversations with four contradiction classes.

Each record is a :class:`Example` whose dialogue has the turns ``u1`` (``user``), ``b1`` (``bot``),
``u2`` (``user``), ``b2`` (``bot``); ``b2`` is checked. ``Example.label`` is "any contradiction" and
``Example.category`` one of :data:`CATEGORIES` (``None`` for label 0). The trigger method, chatbot,
persona and raw label travel in ``Dialogue.meta``.

The official split is random over sessions, and one (u1, b1, u2) context usually has several bot replies,
so most test contexts also occur in train. :func:`context_disjoint_split` builds a split where no
context is on two sides.

>>> LABEL_NAMES[2], category_of(2), label_of("history")
('role_confusion', 'role_confusion', 3)
>>> ex = make_example({"u1": "你几岁？", "b1": "我20岁。", "u2": "你多大了？", "b2": "我30岁。", "label": 3})
>>> [t.speaker for t in ex.dialogue.turns], ex.label, ex.category
(['user', 'bot', 'user', 'bot'], True, 'history')
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..io import json_type, json_value
from ..schema import Dialogue, Example, Turn
from .base import read_jsonl, read_lines, register_dataset

__all__ = [
    "CATEGORIES",
    "LABEL_NAMES",
    "METHODS",
    "SplitReport",
    "category_of",
    "context_disjoint_split",
    "context_key",
    "label_of",
    "load_official_tsv",
    "make_example",
    "read_cdconv_jsonl",
    "read_cdconv_tsv",
    "split_report",
]

CDCONV = "cdconv"
USER, BOT = "user", "bot"
# Label ids of the corpus, in order: 0 none, 1 intra-sentence, 2 role confusion, 3 history.
LABEL_NAMES = ("non_contradiction", "intra_sentence", "role_confusion", "history")
CATEGORIES = LABEL_NAMES[1:]
METHODS = {
    "短句": "short_utterance",
    "设问-bot": "inquiring_bot",
    "设问-user": "inquiring_user",
    "设问-user-v2": "inquiring_user_v2",
    "同义-回译": "paraphrase_back_translation",
    "同义-同义词": "perturbation_synonym",
    "反义-反义词": "perturbation_antonym",
    "反义-否定词": "perturbation_negation",
}
PERSONA = {0: "other", 1: "attribute", 2: "opinion", 3: "experience"}
TURN_KEYS = ("u1", "b1", "u2", "b2")


def category_of(label: int) -> str | None:
    """The category string of a CDConv label id (``None`` for 0, no contradiction)."""
    if label not in range(4):
        raise ValueError(f"CDConv labels are 0-3, got {label}")
    return None if label == 0 else LABEL_NAMES[label]


def label_of(category: str | None) -> int:
    """The CDConv label id of a category string (``None`` or ``"non_contradiction"`` is 0)."""
    if category is None:
        return 0
    if category not in LABEL_NAMES:
        raise ValueError(f"unknown category {category!r}; known: {', '.join(LABEL_NAMES)}")
    return LABEL_NAMES.index(category)


def make_example(obj: dict[str, Any], path: str = "<record>", line: int | None = None, rid: str = "") -> Example:
    """One CDConv record (``u1``, ``b1``, ``u2``, ``b2``, ``label`` and optional metadata) as an Example.

    Errors name the file, line and field.
    """
    texts = []
    for k in TURN_KEYS:
        if k not in obj:
            raise InputError(f"{k}: missing", path, line)
        v = obj[k]
        if not isinstance(v, str):
            raise InputError(f"{k}: expected a string, got {json_type(v)}", path, line)
        if not v.strip():
            raise InputError(f"{k}: empty utterance", path, line)
        texts.append(v)
    if "label" not in obj:
        raise InputError("label: missing", path, line)
    label = obj["label"]
    if isinstance(label, str) and label.strip() in ("0", "1", "2", "3"):  # a TSV cell ("²".isdigit() too)
        label = int(label)
    if isinstance(label, bool) or not isinstance(label, int) or label not in range(4):
        raise InputError(f"label: expected 0, 1, 2 or 3, got {json_value(obj['label'])}", path, line)
    persona = obj.get("persona")
    if persona is not None and (isinstance(persona, bool) or not isinstance(persona, int) or persona not in PERSONA):
        raise InputError(f"persona: expected 0-3 or absent, got {json_value(persona)}", path, line)
    method = obj.get("method")
    if method is not None and not isinstance(method, str):
        raise InputError(f"method: expected a string, got {json_type(method)}", path, line)
    meta: dict[str, Any] = {"id": rid, "cdconv_label": label}
    if method is not None:
        meta["method"] = method
        meta["trigger"] = METHODS.get(method, method)
    if obj.get("model") is not None:
        meta["chatbot"] = str(obj["model"])
    if persona is not None:
        meta["persona"] = PERSONA[persona]
    if obj.get("file") is not None:
        meta["batch"] = str(obj["file"])
    turns = tuple(Turn(USER if k[0] == "u" else BOT, t) for k, t in zip(TURN_KEYS, texts, strict=True))
    return Example(Dialogue(turns, meta=meta), label > 0, None, category_of(label), id=rid)


def read_cdconv_jsonl(path: Path, split: str) -> list[Example]:
    """CDConv records from a JSON-lines file (``cdconv.txt`` or ``splits_jsonl/*.jsonl``)."""
    out = []
    for n, obj in read_jsonl(path):
        out.append(make_example(obj, str(path), n, f"cdconv.{split}:{n}"))
    return out


def read_cdconv_tsv(path: Path, split: str, classes: int = 4) -> list[Example]:
    """An official TSV split (no header: u1, b1, u2, b2, label). ``classes=2`` reads the 0/1 files, whose
    examples carry no category."""
    if classes not in (2, 4):
        raise ValueError(f"classes must be 2 or 4, got {classes}")
    out = []
    for n, line in read_lines(path):
        if not line.strip():
            continue
        cols = line.split("\t")
        if len(cols) != 5:
            raise InputError(f"expected 5 tab-separated columns (u1, b1, u2, b2, label), got {len(cols)}", str(path), n)
        obj: dict[str, Any] = dict(zip((*TURN_KEYS, "label"), cols, strict=True))
        if classes == 2:
            if cols[4] not in ("0", "1"):
                raise InputError(f"label: expected 0 or 1 in a 2-class file, got {cols[4]!r}", str(path), n)
            ex = make_example({**obj, "label": 0}, str(path), n, f"cdconv.{split}.2class:{n}")
            out.append(Example(ex.dialogue, cols[4] == "1", None, None, id=ex.id))
        else:
            out.append(make_example(obj, str(path), n, f"cdconv.{split}.tsv:{n}"))
    return out


_JSONL_SHA = {
    "train": "573bc64ab7ea109c910935b9582bc9864d7333f858bed1f193f8c4be878f5ba9",
    "dev": "b74501f55a95da4c4a66ba5c7677b738188440cb55a2bb5e6059307d06b493db",
    "test": "ff741d79e061674de349b8ae9a17fad4ec860e030a00602eceb65f988d129a3a",
}
_TSV4_SHA = {
    "train": "8c1ab3a30713e1bb7fa1ff3470284efe3ef98178d312e91978d6bde23f0125fb",
    "dev": "3a7b67b3ac29f2a1456c0c1e9ab5cebc6564523242fde787a9f08059260ac3ba",
    "test": "497499c60067c21d4d6cb4ce9422a66a4501a9c829ad8a461b1decaf47af796f",
}
_TSV2_SHA = {
    "train": "53bce5347cb9c83500c0e12f1cc77a12db0d991ac0a946894367b9204b80ce33",
    "dev": "9ac42c235ee2593060699e827ba5e85d3baf8e5858344a25c03fbb581ca4df3f",
    "test": "d8e0aa8cb4ad15efc05a1ec086275ee318443b4f34c122ad3c66a9706daa0664",
}
_COUNTS = {"train": 6996, "dev": 2332, "test": 2332}


def _register_split(split: str) -> None:
    jsonl = f"{CDCONV}/splits_jsonl/cdconv_{split}.jsonl"

    @register_dataset(
        f"cdconv.{split}.v1",
        f"CDConv official {split} split with trigger method, chatbot and persona (4 classes)",
        (jsonl,),
        _COUNTS[split],
        (_JSONL_SHA[split],),
    )
    def load_jsonl(root: Path) -> list[Example]:
        return read_cdconv_jsonl(root / jsonl, split)

    for classes, sha in ((4, _TSV4_SHA), (2, _TSV2_SHA)):
        tsv = f"{CDCONV}/splits_2class_4class/{classes}class_{split}.tsv"

        def load_tsv(root: Path, tsv: str = tsv, classes: int = classes) -> list[Example]:
            return read_cdconv_tsv(root / tsv, split, classes)

        register_dataset(
            f"cdconv.{split}.tsv{classes}.v1",
            f"CDConv official {split} split as released (TSV, {classes} classes, no metadata)",
            (tsv,),
            _COUNTS[split],
            (sha[split],),
        )(load_tsv)


for _split in ("train", "dev", "test"):
    _register_split(_split)


@register_dataset(
    "cdconv.all.v1",
    "CDConv full corpus (cdconv.txt): 11,660 sessions with all metadata",
    (f"{CDCONV}/cdconv.txt",),
    11660,
    ("ed8fe0ddb40afb36f9e19ea64c3eee7c319a22230a5b65444af44e8bbb122aab",),
)
def load_all(root: Path) -> list[Example]:
    return read_cdconv_jsonl(root / CDCONV / "cdconv.txt", "all")


def load_official_tsv(root: Path, split: str, classes: int = 4) -> list[Example]:
    """The released TSV of ``split`` (train/dev/test) under ``root`` (the data directory)."""
    if split not in _COUNTS:
        raise InputError(f"unknown CDConv split {split!r}; use train, dev or test")
    return read_cdconv_tsv(root / CDCONV / "splits_2class_4class" / f"{classes}class_{split}.tsv", split, classes)


# -- context-disjoint split ---------------------------------------------------------------------------


def context_key(ex: Example) -> tuple[str, ...]:
    """The context a CDConv example shares with its siblings: every turn but the checked one."""
    return tuple(t.text for t in ex.dialogue.turns[:-1])


@dataclass(frozen=True)
class SplitReport:
    """Sizes of a split: examples, distinct contexts, label counts per side, and contexts shared between sides."""

    examples: dict[str, int]
    contexts: dict[str, int]
    labels: dict[str, dict[str, int]]
    shared_contexts: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        return {
            "examples": self.examples,
            "contexts": self.contexts,
            "labels": self.labels,
            "shared_contexts": self.shared_contexts,
        }


def split_report(splits: dict[str, Sequence[Example]]) -> SplitReport:
    """Counts of a split, and how many contexts each pair of sides shares (0 for a context-disjoint split).

    >>> a = make_example({"u1": "a", "b1": "b", "u2": "c", "b2": "d", "label": 0})
    >>> b = make_example({"u1": "a", "b1": "b", "u2": "c", "b2": "e", "label": 3})
    >>> split_report({"train": [a], "test": [b]}).shared_contexts
    {'train/test': 1}
    """
    keys = {name: {context_key(e) for e in exs} for name, exs in splits.items()}
    names = list(splits)
    shared = {f"{a}/{b}": len(keys[a] & keys[b]) for i, a in enumerate(names) for b in names[i + 1 :]}
    labels = {
        name: dict(sorted(Counter(e.category or LABEL_NAMES[0] for e in exs).items())) for name, exs in splits.items()
    }
    return SplitReport({n: len(e) for n, e in splits.items()}, {n: len(k) for n, k in keys.items()}, labels, shared)


def context_disjoint_split(
    examples: Sequence[Example], fractions: Sequence[float] = (0.6, 0.2, 0.2), seed: int = 13
) -> dict[str, list[Example]]:
    """Train/dev/test (by ``fractions``) with every (u1, b1, u2) context on one side only.

    Contexts are shuffled with ``seed`` and taken in turn; each goes to the side whose share of the
    examples the middle of its examples falls in. Examples keep their input order within a side; the
    result is deterministic for a given input and seed.

    >>> exs = [make_example({"u1": f"u{i // 2}", "b1": "b", "u2": "c", "b2": f"r{i}", "label": 0}) for i in range(10)]
    >>> parts = context_disjoint_split(exs, seed=0)
    >>> sum(map(len, parts.values())), split_report(parts).shared_contexts
    (10, {'train/dev': 0, 'train/test': 0, 'dev/test': 0})
    """
    if len(fractions) != 3 or any(f < 0 for f in fractions) or abs(sum(fractions) - 1.0) > 1e-6:
        raise ValueError(f"fractions must be three non-negative numbers summing to 1, got {tuple(fractions)}")
    groups: dict[tuple[str, ...], list[int]] = {}
    for i, e in enumerate(examples):
        groups.setdefault(context_key(e), []).append(i)
    keys = list(groups)
    random.Random(seed).shuffle(keys)
    n = len(examples)
    targets = [fractions[0] * n, (fractions[0] + fractions[1]) * n]
    side: dict[int, int] = {}
    taken = 0
    for k in keys:
        mid = taken + len(groups[k]) / 2  # a context goes where the middle of its examples falls
        s = 0 if mid < targets[0] else (1 if mid < targets[1] else 2)
        for i in groups[k]:
            side[i] = s
        taken += len(groups[k])
    names = ("train", "dev", "test")
    out: dict[str, list[Example]] = {name: [] for name in names}
    for i, e in enumerate(examples):
        out[names[side[i]]].append(e)
    return out


DISJOINT_SEED = 13


def _register_disjoint(split: str, count: int) -> None:
    @register_dataset(
        f"cdconv.disjoint.{split}.v1",
        f"CDConv context-disjoint {split} split: cdconv.txt regrouped by (u1, b1, u2), 60/20/20, seed 13",
        (f"{CDCONV}/cdconv.txt",),
        count,
        ("ed8fe0ddb40afb36f9e19ea64c3eee7c319a22230a5b65444af44e8bbb122aab",),
    )
    def load(root: Path) -> list[Example]:
        return context_disjoint_split(load_all(root), seed=DISJOINT_SEED)[split]


for _split, _n in (("train", 6996), ("dev", 2332), ("test", 2332)):
    _register_disjoint(_split, _n)
