"""What every benchmark evaluator shares: the splits asked for, the data folder, a limit, a batch size."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path
from typing import ClassVar

from ..schema import Example, Verdict

__all__ = ["SplitEvaluator"]


class SplitEvaluator:
    """Base of the evaluators: checks the split names against ``known_splits`` and keeps predictions.

    >>> class E(SplitEvaluator):
    ...     known_splits = ("dev", "test")
    >>> E(["dev"]).splits
    ['dev']
    >>> E(["train"])
    Traceback (most recent call last):
    ...
    ValueError: unknown split(s) ['train']; known: dev, test
    """

    known_splits: ClassVar[Collection[str]] = ()
    primary_metric: ClassVar[str] = ""

    def __init__(
        self,
        splits: Sequence[str],
        data_dir: str | Path | None = None,
        limit: int | None = None,
        batch_size: int = 64,
    ) -> None:
        unknown = set(splits) - set(self.known_splits)
        if unknown:
            raise ValueError(f"unknown split(s) {sorted(unknown)}; known: {', '.join(self.known_splits)}")
        self.splits = list(splits)
        self.data_dir = data_dir
        self.limit = limit
        self.batch_size = batch_size
        self.predictions: dict[str, list[tuple[Example, Verdict]]] = {}
