"""Distillation support: a teacher detector's pair scores as soft targets, cached on disk.

Scoring the training pairs with a large teacher (e.g. MPNet) takes as long as a student epoch, so the
scores are cached under ``$DIALCHECK_CACHE/teacher-scores/``, one file per teacher (keyed by its weights)
holding a score per pair (keyed by the pair's texts).

The scores a run needs can also be written to a file of their own (:func:`save_teacher_scores`, ``dialcheck
train --save-teacher-scores``) and given as the teacher later (``--teacher FILE.npz``): a student is then
trained on a machine without the teacher's weights, e.g. after the folder that held them is gone.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..backbones import cache_dir
from ..schema import Pair

__all__ = [
    "parse_alpha_by",
    "read_teacher_scores",
    "save_teacher_scores",
    "teacher_pair_scores",
    "teacher_scores_meta",
    "teacher_sha256",
]

log = logging.getLogger(__name__)


def _teacher_hash(teacher: Path) -> hashlib._Hash:
    """A hash of the teacher's weights and configuration files (names and contents)."""
    h = hashlib.sha256()
    for f in sorted(teacher.iterdir()):
        if f.suffix in (".safetensors", ".json"):
            h.update(f.name.encode())
            h.update(hashlib.sha256(f.read_bytes()).digest())
    return h


def _pair_keys(pairs: Sequence[Pair]) -> np.ndarray:
    return np.array(
        [int.from_bytes(hashlib.sha1(f"{p.first}\x00{p.second}".encode()).digest()[:8], "little") for p in pairs],
        dtype=np.uint64,
    )


class _ScoreStore:
    """One teacher's scores by pair (a 64-bit hash of both texts), in ``teacher-scores/<teacher>.npz``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.scores: dict[int, float] = {}
        if path.exists():
            with np.load(path, allow_pickle=False) as z:
                self.scores = dict(zip(z["keys"].tolist(), z["scores"].tolist(), strict=True))

    def add(self, keys: np.ndarray, scores: np.ndarray) -> None:
        self.scores.update(zip(keys.tolist(), np.asarray(scores, dtype=np.float32).tolist(), strict=True))

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.stem + ".tmp.npz")
        keys = np.fromiter(self.scores.keys(), dtype=np.uint64, count=len(self.scores))
        vals = np.fromiter(self.scores.values(), dtype=np.float32, count=len(self.scores))
        np.savez(tmp, keys=keys, scores=vals)
        tmp.replace(self.path)


def teacher_pair_scores(
    teacher: str | Path,
    pairs: Sequence[Pair],
    batch_size: int = 64,
    show_progress_bar: bool = False,
    chunk_size: int = 4096,
    only: Sequence[int] | None = None,
) -> np.ndarray:
    """P(contradiction) of ``teacher`` for every pair, scoring only the pairs this teacher has not scored before.

    Scores are kept per pair, so a new training mix that shares pairs with an earlier one (the same data plus
    a new source) costs only its new pairs. They are saved every ``chunk_size`` pairs, so an interrupted run
    (an hour of MPNet here) resumes where it stopped. With ``only`` (indices into ``pairs``, e.g.
    :func:`~dialcheck.training.trainer.scheduled_pairs` of a run shorter than an epoch) the other pairs are
    not scored: their score is NaN unless an earlier run scored them.
    """
    from ..detectors import load_detector

    folder = Path(teacher)
    if folder.is_file():  # a scores file: nothing to score, unknown pairs stay NaN
        store = _read_store(folder)
        log.info("teacher scores from %s (%d pairs)", folder, len(store.scores))
        return np.array([store.scores.get(k, np.nan) for k in _pair_keys(pairs).tolist()], dtype=np.float32)
    teacher_hash = _teacher_hash(folder)
    root = cache_dir() / "teacher-scores"
    store = _ScoreStore(root / f"{teacher_hash.hexdigest()[:24]}.npz")
    keys = _pair_keys(pairs)
    wanted = set(range(len(pairs)) if only is None else (int(i) for i in only))
    if not all(k in store.scores for i, k in enumerate(keys.tolist()) if i in wanted):
        legacy = root / f"{_whole_list_key(teacher_hash, pairs)}.npy"
        if legacy.exists():  # written by dialcheck before per-pair scores
            old = np.load(legacy, allow_pickle=False)
            if len(old) == len(pairs):
                log.info("teacher scores from %s (an earlier cache format)", legacy)
                store.add(keys, old)
                store.save()
    todo, seen = [], set(store.scores)
    for i, k in enumerate(keys.tolist()):  # each new pair once, however often it occurs in the mix
        if k not in seen and i in wanted:
            seen.add(k)
            todo.append(i)
    if todo:
        log.info(
            "teacher scores: %d of %d pairs known, %d to score%s",
            len(wanted) - len(todo),
            len(wanted),
            len(todo),
            "" if only is None else f" (the pairs the run trains on; {len(pairs) - len(wanted)} skipped)",
        )
        bar = None
        if show_progress_bar:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(todo), desc="teacher scores", unit="pair")
        det = load_detector(folder)
        step = max(1, chunk_size)
        for start in range(0, len(todo), step):
            idx = todo[start : start + step]
            batch = [(pairs[i].first, pairs[i].second) for i in idx]
            store.add(keys[idx], det.classifier.score(batch, batch_size))
            store.save()
            if bar is not None:
                bar.update(len(idx))
        if bar is not None:
            bar.close()
    else:
        log.info("teacher scores for all %d pairs from %s", len(wanted), store.path)
    return np.array([store.scores.get(k, np.nan) for k in keys.tolist()], dtype=np.float32)


def teacher_sha256(teacher: str | Path) -> str:
    """The hash a teacher folder's scores are cached under (its weights and configuration files)."""
    return _teacher_hash(Path(teacher)).hexdigest()


def read_teacher_scores(path: str | Path) -> dict[int, float]:
    """The scores of a file written by :func:`save_teacher_scores`, by pair key; a clear error if it is not one."""
    return _read_store(Path(path)).scores


def _read_store(path: Path) -> _ScoreStore:
    from ..errors import InputError

    try:
        store = _ScoreStore(path)
    except (OSError, ValueError, KeyError, EOFError):  # not an npz, or one without keys/scores
        raise InputError(
            "not a teacher-scores file (an .npz of keys and scores from --save-teacher-scores)", str(path)
        ) from None
    return store


def save_teacher_scores(
    path: str | Path,
    pairs: Sequence[Pair],
    scores: Sequence[float],
    meta: dict,
    only: Sequence[int] | None = None,
) -> int:
    """Write the known (non-NaN) ``scores`` of ``pairs`` (of the pairs ``only`` indexes, if given) with ``meta``
    (provenance) to ``path``; the count written.

    The file is what ``teacher_pair_scores`` reads when given it in place of a teacher folder.
    """
    scores = np.asarray(scores, dtype=np.float32)
    known = ~np.isnan(scores)
    if only is not None:  # not the other pairs an earlier run's cache happens to hold
        wanted = np.zeros(len(scores), dtype=bool)
        wanted[np.asarray(only, dtype=np.int64)] = True
        known &= wanted
    keys, first = np.unique(_pair_keys(pairs)[known], return_index=True)  # each pair once
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as f:  # a file object: numpy would otherwise append .npz to another suffix
        np.savez_compressed(f, keys=keys, scores=scores[known][first], meta=np.array(json.dumps(meta, sort_keys=True)))
    return len(keys)


def teacher_scores_meta(path: str | Path) -> dict:
    """The provenance stored with a scores file by :func:`save_teacher_scores` ({} if it has none)."""
    with np.load(Path(path), allow_pickle=False) as z:
        return json.loads(str(z["meta"])) if "meta" in z.files else {}


def _whole_list_key(teacher_hash: hashlib._Hash, pairs: Sequence[Pair]) -> str:
    """The cache key of earlier versions: the teacher's files and every pair, as one hash."""
    h = teacher_hash.copy()
    for p in pairs:
        h.update(p.first.encode())
        h.update(b"\x00")
        h.update(p.second.encode())
        h.update(b"\x01")
    return h.hexdigest()[:24]


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
