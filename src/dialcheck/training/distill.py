"""Distillation support: a teacher detector's pair scores as soft targets, cached on disk.

Scoring the training pairs with a large teacher (e.g. MPNet) takes as long as a student epoch, so the
scores are cached under ``$DIALCHECK_CACHE/teacher-scores/`` keyed by the teacher's weights and the pairs.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..backbones import cache_dir
from ..schema import Pair

__all__ = ["teacher_pair_scores"]

log = logging.getLogger(__name__)


def _key(teacher: Path, pairs: Sequence[Pair]) -> str:
    h = hashlib.sha256()
    for f in sorted(teacher.iterdir()):
        if f.suffix in (".safetensors", ".json"):
            h.update(f.name.encode())
            h.update(hashlib.sha256(f.read_bytes()).digest())
    for p in pairs:
        h.update(p.first.encode())
        h.update(b"\x00")
        h.update(p.second.encode())
        h.update(b"\x01")
    return h.hexdigest()[:24]


def teacher_pair_scores(
    teacher: str | Path, pairs: Sequence[Pair], batch_size: int = 64, show_progress_bar: bool = False
) -> np.ndarray:
    """P(contradiction) of ``teacher`` for every pair, from the cache when this teacher scored them before."""
    from ..detectors import load_detector

    folder = Path(teacher)
    path = cache_dir() / "teacher-scores" / f"{_key(folder, pairs)}.npy"
    if path.exists():
        scores = np.load(path, allow_pickle=False)
        if len(scores) == len(pairs):
            log.info("teacher scores from %s", path)
            return scores
    det = load_detector(folder)
    scores = det.classifier.score([(p.first, p.second) for p in pairs], batch_size, show_progress_bar)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, scores.astype(np.float32), allow_pickle=False)
    return scores
