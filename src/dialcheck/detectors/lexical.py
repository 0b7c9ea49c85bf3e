"""A character n-gram logistic regression that a four-category detector mixes into its probabilities.

On CDConv a shallow model over surface cues (character 1-2-grams of b2, b1 and u2, weighted by TF-IDF, plus
17 overlap/negation/pronoun features) finds the minority categories better than our small encoder does,
and the two make different mistakes. :class:`LexicalHead` is that model in a form a detector can carry:
it is fitted once with scikit-learn (training only) and then scores conversations with numpy alone.
A :class:`~dialcheck.detectors.categories.CategoryDetector` that has one mixes
``(1 - mix) * P_encoder + mix * P_lexical`` before deciding (``mix`` is chosen on dev when training).

Features read conversations by position like the category detectors: ``b2`` is the last turn, then ``u2``,
``b1``, ``u1``; missing leading turns are empty. Which blocks a head has is part of it (``blocks``; the default
``b2``, ``b1``, ``u2``); ``b2&b1`` and ``b2&u2`` are the n-grams of b2 that the other turn has too, so the head
can weigh what the reply repeats, not only what it says. ``n`` is the longest character n-gram (default 2).
Features work on any script; the negation characters and the 我/你 counts are Chinese cues and are zero for
other languages.

>>> overlap("我喜欢猫", "我喜欢狗"), overlap("", "")
(0.5, 0.0)
>>> sorted(char_ngrams("ab a"))
[' ', ' a', 'a', 'ab', 'b', 'b ']
>>> sorted(block_ngrams(["", "我喜欢猫", "", "我喜欢狗"], "b2&b1"))
['喜', '喜欢', '我', '我喜', '欢']
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError, MissingDependencyError, ModelError
from ..schema import Dialogue

__all__ = [
    "BLOCK_NAMES",
    "DEFAULT_BLOCKS",
    "LEXICAL_FILES",
    "LexicalHead",
    "block_ngrams",
    "char_ngrams",
    "check_blocks",
    "feature_rows",
    "hand_features",
    "overlap",
    "turns4",
]

log = logging.getLogger(__name__)

NEGATION = "不没别非无"
_POS = {"u1": 0, "b1": 1, "u2": 2, "b2": 3}  # turns4 order
BLOCK_NAMES = ("b2", "b1", "u2", "b2&b1", "b2&u2")
DEFAULT_BLOCKS = ("b2", "b1", "u2")
N_HAND = 17
LEXICAL_FILES = ("lexical.json", "lexical.safetensors")
_SPACES = re.compile(r"\s\s+")


def turns4(d: Dialogue) -> list[str]:
    """(u1, b1, u2, b2) of a conversation read from its end; missing leading turns are empty."""
    texts = [t.text for t in d.turns][-4:]
    return [""] * (4 - len(texts)) + texts


def _bigrams(s: str) -> set[str]:
    return {s[i : i + 2] for i in range(len(s) - 1)}


def overlap(a: str, b: str) -> float:
    """Jaccard overlap of character bigrams."""
    x, y = _bigrams(a), _bigrams(b)
    return len(x & y) / max(1, len(x | y))


def hand_features(d: Dialogue) -> list[float]:
    """17 surface cues: bigram overlaps (b2-b1, b2-u2, b2-u1, b1-u2), negation characters in b2 and b1,
    我/你 counts in b2, u2 and b1, whether b2 asks, the lengths of b2 and b1, and containment of b2 in u2
    and of u2 in b2."""
    u1, b1, u2, b2 = turns4(d)
    return [
        overlap(b2, b1), overlap(b2, u2), overlap(b2, u1), overlap(b1, u2),
        float(sum(c in NEGATION for c in b2)), float(sum(c in NEGATION for c in b1)),
        float(b2.count("我")), float(b2.count("你")), float(u2.count("我")), float(u2.count("你")),
        float(b1.count("我")), float(b1.count("你")),
        float(any(q in b2 for q in ("？", "?", "吗"))), len(b2) / 20, len(b1) / 20,
        float(bool(b2) and b2 in u2), float(bool(u2) and u2 in b2),
    ]  # fmt: skip


def char_ngrams(text: str, n: int = 2) -> Counter[str]:
    """Counts of character 1- to ``n``-grams of the lower-cased text, runs of white space collapsed."""
    t = _SPACES.sub(" ", text.lower())
    return Counter(t[i : i + k] for k in range(1, n + 1) for i in range(len(t) - k + 1))


def check_blocks(blocks: Sequence[str], n: int) -> tuple[str, ...]:
    """``blocks`` as a tuple, refused when a name is unknown, repeated or missing, or ``n`` is not 1-4."""
    bad = [b for b in blocks if b not in BLOCK_NAMES]
    if bad or not blocks or len(set(blocks)) != len(blocks):
        raise InputError(f"lexical blocks {list(blocks)}: give distinct names out of {', '.join(BLOCK_NAMES)}")
    if not 1 <= n <= 4:
        raise InputError(f"lexical n-gram length {n}: give 1 to 4")
    return tuple(blocks)


def block_ngrams(texts: Sequence[str], block: str, n: int = 2) -> Counter[str]:
    """The n-gram counts of one block of a conversation's (u1, b1, u2, b2): a turn's own, or for ``"x&y"`` the
    n-grams of x that y has too (counted in x)."""
    first, _, other = block.partition("&")
    grams = char_ngrams(texts[_POS[first]], n)
    if not other:
        return grams
    seen = char_ngrams(texts[_POS[other]], n)
    return Counter({g: c for g, c in grams.items() if g in seen})


def _block(grams: Counter[str], vocab: dict[str, int], idf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Indices and L2-normalised TF-IDF values of one block's known n-grams."""
    counts = [(vocab[g], c) for g, c in grams.items() if g in vocab]
    if not counts:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    idx = np.array([i for i, _ in counts], dtype=np.int64)
    val = np.array([c for _, c in counts], dtype=np.float32) * idf[idx]
    return idx, val / np.linalg.norm(val)


def feature_rows(
    dialogues: Sequence[Dialogue],
    vocab: dict[str, int],
    idf: np.ndarray,
    blocks: Sequence[str] = DEFAULT_BLOCKS,
    n: int = 2,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each conversation as sparse (column indices, values): one TF-IDF block per name in ``blocks`` (default
    b2, b1, u2), then the hand cues."""
    out = []
    width = len(vocab)
    for d in dialogues:
        texts = turns4(d)
        parts = [_block(block_ngrams(texts, b, n), vocab, idf) for b in blocks]
        idx = np.concatenate(
            [p[0] + k * width for k, p in enumerate(parts)] + [np.arange(N_HAND) + len(blocks) * width]
        )
        val = np.concatenate([p[1] for p in parts] + [np.asarray(hand_features(d), dtype=np.float32)])
        out.append((idx, val))
    return out


class LexicalHead:
    """Multinomial logistic regression over TF-IDF character n-grams of (b2, b1, u2) and the hand features.

    ``labels`` are the class names in column order; ``mix`` is the weight a detector gives this head;
    ``blocks`` and ``n`` say which n-gram blocks it reads (module text).
    """

    def __init__(
        self,
        vocab: Sequence[str],
        idf: np.ndarray,
        coef: np.ndarray,
        intercept: np.ndarray,
        labels: Sequence[str],
        mix: float = 0.5,
        meta: dict[str, Any] | None = None,
        blocks: Sequence[str] = DEFAULT_BLOCKS,
        n: int = 2,
    ) -> None:
        self.blocks, self.n = check_blocks(blocks, n), int(n)
        self.vocab = {g: i for i, g in enumerate(vocab)}
        self.idf = np.asarray(idf, dtype=np.float32)
        self.coef = np.asarray(coef, dtype=np.float32)
        self.intercept = np.asarray(intercept, dtype=np.float32)
        self.labels = list(labels)
        self.mix = float(mix)
        self.meta = dict(meta or {})
        width = len(self.blocks) * len(self.vocab) + N_HAND
        if self.coef.shape != (len(self.labels), width) or self.idf.shape != (len(self.vocab),):
            raise ModelError(
                f"lexical head: coef {self.coef.shape} / idf {self.idf.shape} do not fit "
                f"{len(self.labels)} labels and {len(self.vocab)} n-grams"
            )

    def rows(self, dialogues: Sequence[Dialogue]) -> list[tuple[np.ndarray, np.ndarray]]:
        """Each conversation as sparse (column indices, values) over the head's feature columns."""
        return feature_rows(dialogues, self.vocab, self.idf, self.blocks, self.n)

    def proba(self, dialogues: Sequence[Dialogue]) -> np.ndarray:
        """Class probabilities, shape (len(dialogues), len(labels)), columns in ``labels`` order."""
        logits = np.stack([self.coef[:, idx] @ val for idx, val in self.rows(dialogues)]) if dialogues else None
        if logits is None:
            return np.zeros((0, len(self.labels)), dtype=np.float32)
        logits = logits + self.intercept
        logits -= logits.max(axis=1, keepdims=True)
        e = np.exp(logits)
        return e / e.sum(axis=1, keepdims=True)

    # -- training --------------------------------------------------------------------------------
    @classmethod
    def fit(
        cls,
        dialogues: Sequence[Dialogue],
        labels: Sequence[int],
        label_names: Sequence[str],
        c: float = 1.0,
        min_df: int = 2,
        blocks: Sequence[str] = DEFAULT_BLOCKS,
        n: int = 2,
    ) -> LexicalHead:
        """Fit on conversations and integer labels (indices into ``label_names``); balanced class weights.
        The vocabulary is the n-grams found in at least ``min_df`` of the b1, u2 and b2 turns.

        Needs scikit-learn (``pip install "dialcheck[train]"``, else :class:`~dialcheck.errors.MissingDependencyError`);
        the fitted head does not.
        """
        try:
            from scipy.sparse import csr_matrix
            from sklearn.linear_model import LogisticRegression
        except ImportError:
            raise MissingDependencyError("scikit-learn", "train", "fitting a lexical head") from None
        if len(dialogues) != len(labels) or not dialogues:
            raise InputError(f"{len(dialogues)} conversations but {len(labels)} labels")
        blocks = check_blocks(blocks, n)
        docs = [turns4(d)[b] for d in dialogues for b in (1, 2, 3)]  # every b1, u2, b2 is one document
        df: Counter[str] = Counter()
        for t in docs:
            df.update(char_ngrams(t, n).keys())
        vocab = sorted(g for g, k in df.items() if k >= min_df)
        n_docs = len(docs)
        idf = np.array([math.log((1 + n_docs) / (1 + df[g])) + 1.0 for g in vocab], dtype=np.float32)
        present = sorted(set(labels))
        width = len(blocks) * len(vocab) + N_HAND
        rows = feature_rows(dialogues, {g: i for i, g in enumerate(vocab)}, idf, blocks, n)
        indptr = np.cumsum([0, *(len(i) for i, _ in rows)])
        x = csr_matrix(
            (np.concatenate([v for _, v in rows]), np.concatenate([i for i, _ in rows]), indptr),
            shape=(len(rows), width),
        )
        model = LogisticRegression(C=c, max_iter=3000, class_weight="balanced")
        model.fit(x, list(labels))
        coef = np.zeros((len(label_names), width), dtype=np.float32)
        intercept = np.full(len(label_names), -1e4, dtype=np.float32)  # a class never seen stays improbable
        if len(present) == 2:  # scikit-learn stores one row for two classes: logit of the second
            coef[present[1]], intercept[present[0]], intercept[present[1]] = model.coef_[0], 0.0, model.intercept_[0]
        else:
            for row, k in enumerate(model.classes_):
                coef[int(k)], intercept[int(k)] = model.coef_[row], model.intercept_[row]
        meta = {"C": c, "min_df": min_df, "train_examples": len(dialogues), "n_grams": len(vocab)}
        return cls(vocab, idf, coef, intercept, label_names, meta=meta, blocks=blocks, n=n)

    # -- files -----------------------------------------------------------------------------------
    def save(self, folder: str | Path) -> None:
        """Write ``lexical.json`` (n-grams, labels, mix) and ``lexical.safetensors`` (idf, weights)."""
        from safetensors.numpy import save_file

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        vocab = sorted(self.vocab, key=self.vocab.__getitem__)
        info: dict[str, Any] = {"version": 1, "labels": self.labels, "mix": self.mix, "meta": self.meta}
        if (self.blocks, self.n) != (DEFAULT_BLOCKS, 2):  # version 1 readers know the default layout only
            info.update(version=2, blocks=list(self.blocks), n=self.n)
        info["vocab"] = vocab
        (folder / LEXICAL_FILES[0]).write_text(json.dumps(info, ensure_ascii=False) + "\n", encoding="utf-8")
        save_file({"idf": self.idf, "coef": self.coef, "intercept": self.intercept}, str(folder / LEXICAL_FILES[1]))

    @classmethod
    def load(cls, folder: str | Path) -> LexicalHead:
        from safetensors.numpy import load_file

        folder = Path(folder)
        try:
            info = json.loads((folder / LEXICAL_FILES[0]).read_text(encoding="utf-8"))
            arrays = load_file(str(folder / LEXICAL_FILES[1]))
        except (OSError, ValueError) as e:
            raise ModelError(f"{folder}: cannot read the lexical head: {e}") from None
        if info.get("version") not in (1, 2):
            raise ModelError(f"{folder / LEXICAL_FILES[0]}: lexical head version {info.get('version')!r} is newer "
                             "than this dialcheck reads (1 or 2); upgrade dialcheck")  # fmt: skip
        try:
            return cls(
                info["vocab"], arrays["idf"], arrays["coef"], arrays["intercept"], info["labels"], info["mix"],
                info["meta"], blocks=info.get("blocks", DEFAULT_BLOCKS), n=int(info.get("n", 2)),
            )  # fmt: skip
        except InputError as e:
            raise ModelError(f"{folder / LEXICAL_FILES[0]}: {e}") from None

    @staticmethod
    def present(folder: str | Path) -> bool:
        return all((Path(folder) / f).exists() for f in LEXICAL_FILES)
