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

__all__ = ["parse_alpha_by", "teacher_pair_scores"]

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
    teacher: str | Path,
    pairs: Sequence[Pair],
    batch_size: int = 64,
    show_progress_bar: bool = False,
    chunk_size: int = 4096,
) -> np.ndarray:
    """P(contradiction) of ``teacher`` for every pair, from the cache when this teacher scored them before.

    The pairs are scored ``chunk_size`` at a time and the scores so far are kept in a ``.partial.npy``
    file beside the cache entry, so an interrupted run (an hour of MPNet here) resumes where it stopped.
    """
    from ..detectors import load_detector

    folder = Path(teacher)
    path = cache_dir() / "teacher-scores" / f"{_key(folder, pairs)}.npy"
    if path.exists():
        scores = np.load(path, allow_pickle=False)
        if len(scores) == len(pairs):
            log.info("teacher scores from %s", path)
            return scores
    partial = path.with_name(path.stem + ".partial.npy")
    done = np.zeros(0, dtype=np.float32)
    if partial.exists():
        done = np.load(partial, allow_pickle=False).astype(np.float32)
        if len(done) > len(pairs):
            done = np.zeros(0, dtype=np.float32)
        else:
            log.info("resuming teacher scores at pair %d of %d from %s", len(done), len(pairs), partial)
    path.parent.mkdir(parents=True, exist_ok=True)
    bar = None
    if show_progress_bar:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(pairs), initial=len(done), desc="teacher scores", unit="pair")
    det = load_detector(folder) if len(done) < len(pairs) else None
    chunks = [done]
    for start in range(len(done), len(pairs), max(1, chunk_size)):
        assert det is not None
        batch = pairs[start : start + max(1, chunk_size)]
        chunks.append(det.classifier.score([(p.first, p.second) for p in batch], batch_size).astype(np.float32))
        tmp = partial.with_name(partial.name + ".tmp.npy")
        np.save(tmp, np.concatenate(chunks), allow_pickle=False)
        tmp.replace(partial)
        if bar is not None:
            bar.update(len(batch))
    if bar is not None:
        bar.close()
    scores = np.concatenate(chunks)
    np.save(path, scores, allow_pickle=False)
    partial.unlink(missing_ok=True)
    return scores


def parse_alpha_by(text: str, sources: Sequence[str]) -> dict[str, float]:
    """Per-source teacher weights from ``SOURCE=A[,SOURCE=A...]``, checked against the training mix's sources.

    A source the teacher never trained on is where its soft labels are least trustworthy; ``A = 0`` keeps
    that source's gold labels.

    >>> parse_alpha_by("aug.perturb=0, anli=0.5", ["decode.train", "aug.perturb", "anli"])
    {'aug.perturb': 0.0, 'anli': 0.5}
    """
    from ..errors import InputError

    known = sorted(set(sources))
    out: dict[str, float] = {}
    for item in (x.strip() for x in text.split(",")):
        if not item:
            continue
        name, _, value = item.partition("=")
        name = name.strip()
        try:
            alpha = float(value)  # no "=" leaves value empty: a ValueError as well
        except ValueError:
            alpha = float("nan")
        if not 0.0 <= alpha <= 1.0:
            raise InputError(f"--distill-alpha-by {item!r}: expected SOURCE=A with A in [0, 1]")
        if name not in known:
            raise InputError(f"--distill-alpha-by: no training pairs come from {name!r}; sources: {', '.join(known)}")
        out[name] = alpha
    return out
