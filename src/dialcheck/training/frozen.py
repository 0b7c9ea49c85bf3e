"""A classification head on frozen, mean-pooled encoder features: the cheap way to use a big base
(Gemma-3-270m trains at about 1.5 examples/s with LoRA on 2 cores; encoding each pair once is far cheaper).

:class:`FeatureCache` encodes each distinct (first, second) pair once and keeps the mean-pooled last
hidden state; :class:`FrozenHead` is a linear head on those features that quacks like a
:class:`~dialcheck.detectors.core.PairClassifier` (``labels``, ``tokenizer``, ``proba``, ``score``), so a
cascade stage (``HierarchicalDetector.set_stage``) or a 4-way detector's classifier can be one.
Heads are not saved as detector folders: this path is for measuring (``benchmarks/cdconv_table4.py``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..detectors.core import CONTRADICTION, PairClassifier
from ..errors import ModelError

__all__ = ["FeatureCache", "FrozenHead"]

log = logging.getLogger(__name__)


class FeatureCache:
    """Mean-pooled features of text pairs from a frozen encoder (``AutoModel`` of ``base_dir``)."""

    def __init__(self, encoder: Any, tokenizer: Any, max_length: int = 64, batch_size: int = 16) -> None:
        self.encoder = encoder.eval()
        self.tokenizer = tokenizer
        self.max_length = max_length
        self.batch_size = batch_size
        self._cache: dict[tuple[str, str, str], Any] = {}

    @classmethod
    def from_base(cls, base: str, max_length: int = 64, batch_size: int = 16) -> FeatureCache:
        """Load the encoder of a base name or folder (see :mod:`dialcheck.backbones`)."""
        from transformers import AutoModel, AutoTokenizer

        from ..backbones import resolve_base
        from ..detectors.modeling import _quiet_transformers

        folder: Path = resolve_base(base)
        with _quiet_transformers():
            tok = AutoTokenizer.from_pretrained(folder)
            enc = AutoModel.from_pretrained(folder)
        if tok.pad_token_id is None:
            tok.pad_token = tok.eos_token
        return cls(enc, tok, max_length, batch_size)

    def features(self, pairs: Sequence[tuple[str, str]], truncation_side: str = "right") -> Any:
        """A float tensor (len(pairs), hidden): the mean of the last hidden states over real tokens."""
        import torch

        todo = list(
            dict.fromkeys(
                (p[0], p[1], truncation_side) for p in pairs if (p[0], p[1], truncation_side) not in self._cache
            )
        )
        enc = PairClassifier(self.encoder, self.tokenizer, [CONTRADICTION], self.max_length, truncation_side)
        order = sorted(todo, key=lambda k: len(k[0]) + len(k[1]))
        for s in range(0, len(order), self.batch_size):
            batch = order[s : s + self.batch_size]
            inputs = enc.encode([(k[0], k[1]) for k in batch])
            with torch.inference_mode():
                hidden = self.encoder(**inputs).last_hidden_state.float()
            mask = inputs["attention_mask"].unsqueeze(-1).float()
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)
            for k, row in zip(batch, pooled, strict=True):
                self._cache[k] = row.clone()
        if not pairs:
            return torch.zeros((0, self.encoder.config.hidden_size))
        return torch.stack([self._cache[(p[0], p[1], truncation_side)] for p in pairs])


class FrozenHead:
    """A linear head over :class:`FeatureCache` features with the classifier surface detectors use."""

    def __init__(self, cache: FeatureCache, labels: Sequence[str], truncation_side: str = "right") -> None:
        self.cache = cache
        self.labels = list(labels)
        self.truncation_side = truncation_side
        self.multi_label = False
        self.head: Any = None
        self.mean: Any = None
        self.std: Any = None

    @property
    def tokenizer(self) -> Any:
        return self.cache.tokenizer

    @property
    def contradiction_index(self) -> int:
        if CONTRADICTION not in self.labels:
            raise ModelError(f"the label map {self.labels} has no {CONTRADICTION!r} label")
        return self.labels.index(CONTRADICTION)

    def fit(
        self,
        pairs: Sequence[tuple[str, str]],
        targets: Sequence[int],
        steps: int = 300,
        lr: float = 1e-2,
        weight_decay: float = 1e-3,
        seed: int = 0,
        init: FrozenHead | None = None,
    ) -> FrozenHead:
        """Full-batch AdamW on standardised features; ``init`` (same label count) gives the starting head."""
        import torch

        x = self.cache.features(pairs, self.truncation_side)
        y = torch.as_tensor(np.asarray(targets), dtype=torch.long)
        if init is not None and init.head is not None and len(init.labels) == len(self.labels):
            self.mean, self.std = init.mean, init.std
            head = torch.nn.Linear(x.shape[1], len(self.labels))
            head.load_state_dict(init.head.state_dict())
        else:
            self.mean, self.std = x.mean(0), x.std(0).clamp(min=1e-6)
            torch.manual_seed(seed)
            head = torch.nn.Linear(x.shape[1], len(self.labels))
        xs = (x - self.mean) / self.std
        opt = torch.optim.AdamW(head.parameters(), lr=lr, weight_decay=weight_decay)
        loss_fn = torch.nn.CrossEntropyLoss()
        for _ in range(steps):
            opt.zero_grad()
            loss = loss_fn(head(xs), y)
            loss.backward()
            opt.step()
        self.head = head.eval()
        log.info("frozen head: %d pairs, final loss %.4f", len(pairs), loss.item())
        return self

    def proba(
        self, pairs: Sequence[tuple[str, str]], batch_size: int = 64, show_progress_bar: bool = False
    ) -> np.ndarray:
        import torch

        if self.head is None:
            raise ModelError("the frozen head is not trained: call fit() first")
        x = (self.cache.features(pairs, self.truncation_side) - self.mean) / self.std
        with torch.inference_mode():
            return torch.softmax(self.head(x), dim=-1).numpy()

    def score(
        self, pairs: Sequence[tuple[str, str]], batch_size: int = 64, show_progress_bar: bool = False
    ) -> np.ndarray:
        return self.proba(pairs)[:, self.contradiction_index].astype(np.float32)
