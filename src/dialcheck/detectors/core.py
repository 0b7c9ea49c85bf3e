"""The pair-classification core: a Hugging Face sequence classifier that scores (first, second) pairs.

Every detector reduces its input to text pairs and asks this core for P(contradiction). The label map
travels with the weights; the index of the contradiction label is looked up, never assumed.
"""

from __future__ import annotations

import logging
import re
import threading
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import ModelError, TorchReleasedError
from ..io import check_batch_size

__all__ = ["CONTRADICTION", "PairClassifier", "first_segment", "split_sentences"]

log = logging.getLogger(__name__)

CONTRADICTION = "contradiction"
_MIN_FIRST_TOKENS = 16
_SENTENCE = re.compile(r"(?<=[.!?])\s+|(?<=[。！？；])")  # after an English or a Chinese sentence


# A transformers tokenizer sets its backend's truncation and padding on every call (``tokenizer(...)`` with other
# settings than the last): from several threads at once (a web app's request threads sharing one ``dialcheck.load``
# detector), one call encoded with another's settings, and a batch came back unpadded ("Unable to create tensor")
# or cut where it should not be. Each such tokenizer is called one call at a time, under a lock of its own (other
# tokenizers, another model's, go on beside it). A tokenizer that sets nothing shared per call (``thread_safe =
# True``: :class:`~dialcheck.detectors.tokenizer.BackendTokenizer`, told the truncation side with each call) is
# called without one, so that request threads tokenize side by side.
_TOKENIZER_LOCKS: weakref.WeakKeyDictionary[Any, threading.RLock] = weakref.WeakKeyDictionary()
_LOCKS_LOCK = threading.Lock()
_SHARED_LOCK = threading.RLock()  # for a tokenizer that cannot be a weak key


def tokenizer_lock(tok: Any) -> threading.RLock:
    """The lock under which ``tok`` (not ``thread_safe``) is called, the same for every classifier sharing it."""
    with _LOCKS_LOCK:
        try:
            lock = _TOKENIZER_LOCKS.get(tok)
            if lock is None:
                lock = _TOKENIZER_LOCKS[tok] = threading.RLock()
        except TypeError:  # unhashable, or no weak reference to it
            lock = _SHARED_LOCK
    return lock


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text`` (English end marks followed by a space, or Chinese end marks).

    >>> split_sentences("I have two dogs. They are called Max and Bella! Do you? 我有狗。你呢？")
    ['I have two dogs.', 'They are called Max and Bella!', 'Do you?', '我有狗。', '你呢？']
    """
    return [p.strip() for p in _SENTENCE.split(text) if p.strip()]


def first_segment(text: str) -> str:
    """The first segment as encoded: an empty one (no earlier turn) is read as ``"."``.

    >>> first_segment("  "), first_segment("hi")
    ('.', 'hi')
    """
    return text if text.strip() else "."


class _OnnxOnly:
    """Stands in for a pair classifier's torch model once its weights are released (it runs on ONNX Runtime
    only): every use of the torch model says so instead of failing somewhere inside torch."""

    def __init__(self, name: str) -> None:
        self._name = name

    def eval(self) -> _OnnxOnly:
        return self

    def __getattr__(self, attr: str) -> Any:
        raise TorchReleasedError(
            f"this {self._name} runs on ONNX Runtime only: its torch weights were released when it was loaded "
            "(dialcheck.load of a model calibrated on ONNX int8); for torch, load the folder with "
            "dialcheck.detectors.load_detector"
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.__getattr__("__call__")


class PairClassifier:
    """Scores text pairs with a sequence classifier.

    ``truncation_side`` says which end of the first segment is cut when a pair is too long: ``"right"``
    keeps the start of an utterance, ``"left"`` keeps the most recent part of a history. The second
    segment (the turn being checked) is never cut unless it alone exceeds the window, which is logged.
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        labels: Sequence[str],
        max_length: int = 128,
        truncation_side: str = "right",
        multi_label: bool = False,
    ) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.labels = list(labels)
        self.max_length = int(max_length)
        self.truncation_side = truncation_side
        self.multi_label = multi_label
        self.runner: Any = None  # set by Detector.use_onnx(): encodings -> logits instead of model's forward
        self.source_key: str | None = None  # set when loaded from a folder (dialcheck.detectors.onnx.source_key)
        self.onnx_int8: Any = None  # the cached int8 export, when loaded without torch weights
        self._len_cache: dict[str, int] = {}

    def _tokenize(self, *args: Any, **kwargs: Any) -> Any:
        """``self.tokenizer(*args, **kwargs)`` with the truncation side of this classifier: given with the call to a
        ``thread_safe`` tokenizer, else set on it and the call made under its lock (see :func:`tokenizer_lock`)."""
        tok = self.tokenizer
        if getattr(tok, "thread_safe", False):
            return tok(*args, truncation_side=self.truncation_side, **kwargs)
        with tokenizer_lock(tok):
            tok.truncation_side = self.truncation_side
            return tok(*args, **kwargs)

    def release_torch(self) -> None:
        """Drop the torch model's weights (about 4 bytes per parameter) once ONNX Runtime scores the pairs."""
        if self.runner is None:
            raise ModelError("release_torch() needs ONNX Runtime first: use_onnx()")
        if not isinstance(self.model, _OnnxOnly):
            self.model = _OnnxOnly(type(self.model).__name__)

    @property
    def contradiction_index(self) -> int:
        if CONTRADICTION not in self.labels:
            raise ModelError(f"the label map {self.labels} has no {CONTRADICTION!r} label")
        return self.labels.index(CONTRADICTION)

    def _token_len(self, text: str) -> int:
        n = self._len_cache.get(text)
        if n is None:
            n = len(self._tokenize(text, add_special_tokens=False, verbose=False)["input_ids"])
            if len(self._len_cache) > 200_000:
                self._len_cache.clear()
            self._len_cache[text] = n
        return n

    def pair_length(self, first: str, second: str) -> int:
        """Tokens the pair takes uncut as encoded (an empty first segment is read as ``"."``), special tokens
        included."""
        n_special = self.tokenizer.num_special_tokens_to_add(pair=True)
        return self._token_len(first_segment(first)) + self._token_len(second) + n_special

    def pair_fits(self, first: str, second: str) -> bool:
        """Do both segments fit in the window, special tokens included (nothing would be cut)?"""
        return self.pair_length(first, second) <= self.max_length

    def chunks(self, text: str, limit: int) -> list[str]:
        """``text`` in pieces of at most ``limit`` tokens: consecutive whole sentences packed together, a
        sentence longer than ``limit`` cut into windows of ``limit`` tokens. A short text is one piece."""
        if self._token_len(text) <= limit:
            return [text]
        out: list[str] = []
        cur: list[str] = []
        used = 0
        for sent in split_sentences(text):
            n = self._token_len(sent)
            if cur and used + n > limit:
                out.append(" ".join(cur))
                cur, used = [], 0
            if n > limit:
                enc = self._tokenize(sent, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
                offsets = enc["offset_mapping"]
                for start in range(0, len(offsets), limit):
                    window = offsets[start : start + limit]
                    out.append(sent[window[0][0] : window[-1][1]])
                continue
            cur.append(sent)
            used += n
        if cur:
            out.append(" ".join(cur))
        return out

    def _second_budget(self) -> int:
        """Most tokens the checked turn may keep when its pair does not fit the window: all but
        ``_MIN_FIRST_TOKENS`` for the first segment (half the room in a window too small for that)."""
        room = self.max_length - self.tokenizer.num_special_tokens_to_add(pair=True)
        return max(1, room - min(_MIN_FIRST_TOKENS, room // 2))

    def _cuts_second(self, first: str, second: str) -> bool:
        """Does :meth:`encode` cut the checked turn (to its first ``_second_budget()`` tokens) in this pair? Only
        when it is longer than the budget and the pair does not fit."""
        return self._token_len(second) > self._second_budget() and not self.pair_fits(first, second)

    def first_kept(self, first: str, second: str) -> int:
        """Where the text of the first segment that :meth:`encode` keeps of the pair starts: the offset in ``first``
        of its first character in the window. 0 when the pair fits or the segment is cut on the right;
        ``len(first)`` when the checked turn leaves no room for any of it."""
        if self.truncation_side != "left" or self.pair_fits(first, second):
            return 0
        n_second = self._second_budget() if self._cuts_second(first, second) else self._token_len(second)
        room = self.max_length - self.tokenizer.num_special_tokens_to_add(pair=True) - n_second
        offsets = self._tokenize(
            first_segment(first), add_special_tokens=False, return_offsets_mapping=True, verbose=False
        )["offset_mapping"]
        if room >= len(offsets):
            return 0
        return offsets[len(offsets) - room][0] if room > 0 else len(first)

    def fit_second(self, text: str) -> str:
        """``text`` cut (with a warning) so that it leaves room for the first segment in the window."""
        budget = self._second_budget()
        if self._token_len(text) <= budget:
            return text
        enc = self._tokenize(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
        cut = enc["offset_mapping"][budget - 1][1]
        log.warning(
            "the checked turn has %d tokens, more than the %d-token window allows: only its first %d tokens are used",
            self._token_len(text),
            self.max_length,
            budget,
        )
        return text[:cut]

    def encode(self, pairs: Sequence[tuple[str, str]], tensors: str = "pt") -> dict[str, Any]:
        """Tokenize a batch of pairs into padded tensors (``tensors``: ``"pt"`` torch, ``"np"`` numpy)."""
        firsts = [first_segment(p[0]) for p in pairs]
        # the first segment is measured only when the second is long (a short second is never cut)
        seconds = [self.fit_second(p[1]) if self._cuts_second(p[0], p[1]) else p[1] for p in pairs]
        return self._tokenize(
            firsts,
            seconds,
            truncation="only_first",
            max_length=self.max_length,
            padding=True,
            return_tensors=tensors,
        )

    def logits(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """Float32 logits, shape (len(pairs), len(labels)).

        On ONNX Runtime no torch op runs: a torch op would wake torch's OpenMP workers, which then spin
        on the cores ONNX Runtime's own threads need (measured 1.5x slower per check).
        """
        if self.runner is not None:
            return self.runner(self.encode(pairs, tensors="np"))
        import torch

        with torch.inference_mode():
            return self.model(**self.encode(pairs)).logits.float().numpy()

    def proba(
        self, pairs: Sequence[tuple[str, str]], batch_size: int = 64, show_progress_bar: bool = False
    ) -> np.ndarray:
        """Label probabilities, shape (len(pairs), len(labels)): softmax, or sigmoid when multi-label.

        Identical pairs are scored once; batches are formed from pairs of similar length. ``batch_size`` must
        be a positive whole number (else :class:`~dialcheck.errors.InputError`).
        """
        batch_size = check_batch_size(batch_size)
        if not pairs:
            return np.zeros((0, len(self.labels)), dtype=np.float32)
        unique: dict[tuple[str, str], int] = {}
        for p in pairs:
            unique.setdefault((p[0], p[1]), len(unique))
        keys = list(unique)
        order = sorted(range(len(keys)), key=lambda i: len(keys[i][0]) + len(keys[i][1]))
        probs = np.zeros((len(keys), len(self.labels)), dtype=np.float32)
        self.model.eval()
        batches = range(0, len(order), batch_size)
        if show_progress_bar:
            from tqdm.auto import tqdm

            batches = tqdm(batches, desc="scoring pairs", unit="batch")
        for start in batches:
            idx = order[start : start + batch_size]
            logits = self.logits([keys[i] for i in idx])
            probs[idx] = _sigmoid(logits) if self.multi_label else _softmax(logits)
        return probs[[unique[(p[0], p[1])] for p in pairs]]

    def score(
        self, pairs: Sequence[tuple[str, str]], batch_size: int = 64, show_progress_bar: bool = False
    ) -> np.ndarray:
        """P(contradiction) for each pair, in input order."""
        cidx = self.contradiction_index
        return self.proba(pairs, batch_size, show_progress_bar)[:, cidx].astype(np.float32)


def _softmax(x: np.ndarray) -> np.ndarray:
    """Row-wise softmax.

    >>> _softmax(np.array([[0.0, 0.0], [0.0, np.log(3.0)]])).round(4).tolist()
    [[0.5, 0.5], [0.25, 0.75]]
    """
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    """Element-wise logistic function, stable for large negative inputs.

    >>> _sigmoid(np.array([[0.0, -1000.0, 1000.0]])).tolist()
    [[0.5, 0.0, 1.0]]
    """
    return np.exp(-np.logaddexp(0.0, -x))
