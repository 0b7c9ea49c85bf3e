"""Annotation of collected replies: export tasks, import labels, aggregate, agreement, screening quiz.

Export writes one row per reply (context, referent utterance, reply), grouped into tasks of several
rows as the paper's batches. Labels come back as rows of ``item_id``, ``annotator``, ``label``
(CSV or JSONL; ``label`` is contradictory/non_contradictory, yes/no, true/false or 1/0), from any number
of annotators and files. Aggregation follows Sato et al. (2024): contradictory when at least two say
so, non-contradictory only when all agree, otherwise discarded.

>>> aggregate_votes([True, True, False]), aggregate_votes([False] * 3), aggregate_votes([True, False, False])
(True, False, None)
>>> round(fleiss_kappa([[0, 3], [3, 0], [1, 2]]), 4)
0.55
"""

from __future__ import annotations

import csv
import io
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ..datasets.base import read_jsonl
from ..errors import InputError
from ..io import decode_utf8, require_file, write_jsonl
from .records import CollectedReply

__all__ = [
    "AggregatedItem",
    "AnnotatorLabel",
    "QuizResult",
    "aggregate",
    "aggregate_votes",
    "apply_aggregation",
    "export_tasks",
    "fleiss_kappa",
    "kappa_from_labels",
    "read_labels",
    "score_quiz",
]

EXPORT_FIELDS = ("task_id", "item_id", "context", "referent", "reply")
_TRUE = {"contradictory", "contradiction", "yes", "y", "true", "1", "c"}
_FALSE = {"non_contradictory", "non-contradictory", "not_contradictory", "no", "n", "false", "0", "nc"}


@dataclass(frozen=True)
class AnnotatorLabel:
    """One annotator's judgement of one item (True = contradictory)."""

    item_id: str
    annotator: str
    label: bool


@dataclass(frozen=True)
class AggregatedItem:
    """The aggregated label of one item: ``label`` None means discarded (annotators disagreed)."""

    item_id: str
    label: bool | None
    contradictory_votes: int
    annotators: int


@dataclass(frozen=True)
class QuizResult:
    """How one annotator did on the screening quiz."""

    annotator: str
    correct: int
    answered: int
    total: int
    passed: bool

    @property
    def accuracy(self) -> float:
        return self.correct / self.total if self.total else 0.0


def _render_context(r: CollectedReply) -> str:
    return "\n".join(f"{t.speaker}: {t.text}" for t in r.turns[:-1])


def export_tasks(
    replies: Sequence[CollectedReply],
    path: str | Path,
    rows_per_task: int = 5,
    shuffle: bool = True,
    seed: int = 0,
) -> int:
    """Write annotation rows (CSV or JSONL by the file suffix; "-" is JSONL on standard output); returns the
    number of tasks.

    Rows are shuffled (seeded) so that one task mixes generators and contexts, then cut into tasks of
    ``rows_per_task`` rows.
    """
    if rows_per_task < 1:
        raise InputError("rows_per_task must be at least 1")
    order = list(replies)
    if shuffle:
        random.Random(seed).shuffle(order)
    rows = [
        {
            "task_id": f"task{i // rows_per_task:05d}",
            "item_id": r.id,
            "context": _render_context(r),
            "referent": r.referent_turn.text,
            "reply": r.reply.text,
        }
        for i, r in enumerate(order)
    ]
    p = Path(path)
    if p.suffix.lower() == ".csv":
        p.parent.mkdir(parents=True, exist_ok=True)
        with p.open("w", encoding="utf-8", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(EXPORT_FIELDS))
            w.writeheader()
            w.writerows(rows)
    else:
        write_jsonl(path, rows)  # "-": standard output
    return (len(rows) + rows_per_task - 1) // rows_per_task


def parse_label(value: object) -> bool:
    """An annotator's label as a bool (True = contradictory).

    >>> parse_label("Contradictory"), parse_label(0), parse_label("no")
    (True, False, False)
    """
    if isinstance(value, bool):
        return value
    s = str(value).strip().lower()
    if s in _TRUE:
        return True
    if s in _FALSE:
        return False
    raise InputError(f"label: cannot read {value!r} (use contradictory/non_contradictory, yes/no or 1/0)")


def _rows(path: Path) -> Iterable[tuple[int, Mapping[str, object]]]:
    require_file(path)
    if path.suffix.lower() == ".csv":  # decoded whole first: a byte that is not UTF-8 is named by line and column
        reader = csv.DictReader(io.StringIO(decode_utf8(path.read_bytes(), str(path)), newline=""))
        try:
            for row in reader:
                yield reader.line_num, row  # the row's last line (line 1 is the header)
        except csv.Error as e:
            raise InputError(f"not a readable CSV file ({e})", str(path), reader.line_num) from None
        return
    yield from read_jsonl(path)


def read_labels(
    paths: Sequence[str | Path], annotator: str | None = None, errors: list[InputError] | None = None
) -> list[AnnotatorLabel]:
    """Labels from CSV/JSONL files with ``item_id``, ``annotator`` and ``label`` columns.

    Without an ``annotator`` column, ``annotator`` (or the file's stem) names who labelled the file.
    A second label by the same annotator for the same item is an error. The first bad row is raised, unless
    ``errors`` is a list: then every bad row's error (file, line, field) is appended to it and the rows are
    read on, so that a caller can name them all before refusing them.
    """
    out: list[AnnotatorLabel] = []
    seen: set[tuple[str, str]] = set()
    for path in paths:
        p = Path(path)
        before, bad = len(out), 0
        for n, row in _rows(p):
            try:
                item = row.get("item_id")
                if item is None or str(item).strip() == "":
                    raise InputError("item_id: missing")
                who = row.get("annotator") or annotator or p.stem
                if "label" not in row or row["label"] is None:
                    raise InputError("label: missing")
                lab = parse_label(row["label"])
                key = (str(item), str(who))
                if key in seen:
                    raise InputError(f"annotator {who} labelled item {item} twice")
            except InputError as e:
                if errors is None:
                    raise e.at(str(p), n) from None
                errors.append(e.at(str(p), n))
                bad += 1
                continue
            seen.add(key)
            out.append(AnnotatorLabel(str(item), str(who), lab))
        if len(out) == before and not bad:
            raise InputError("no labels (the file is empty or holds only a header)", str(p))
    return out


def aggregate_votes(votes: Sequence[bool], min_contradictory: int = 2) -> bool | None:
    """True with at least ``min_contradictory`` contradictory votes, False when every vote says
    non-contradictory, else None (discarded)."""
    yes = sum(bool(v) for v in votes)
    if yes >= min_contradictory:
        return True
    if votes and yes == 0:
        return False
    return None


def aggregate(
    labels: Iterable[AnnotatorLabel], min_annotators: int = 3, min_contradictory: int = 2
) -> list[AggregatedItem]:
    """Aggregate per item (sorted by item id); items with fewer than ``min_annotators`` labels are
    discarded (label None). ``min_contradictory`` above ``min_annotators`` is refused: an item kept with
    exactly ``min_annotators`` labels could then never be contradictory.

    >>> [a.label for a in aggregate([AnnotatorLabel("x", w, v) for w, v in (("a", True), ("b", True), ("c", False))])]
    [True]
    >>> aggregate([], min_annotators=2, min_contradictory=3)
    Traceback (most recent call last):
    ...
    ValueError: min_contradictory (3) is more than min_annotators (2): an item with 2 labels could never be ...
    """
    if min_contradictory > min_annotators:
        raise ValueError(
            f"min_contradictory ({min_contradictory}) is more than min_annotators ({min_annotators}): "
            f"an item with {min_annotators} labels could never be contradictory"
        )
    by_item: dict[str, list[bool]] = {}
    for lab in labels:
        by_item.setdefault(lab.item_id, []).append(lab.label)
    out = []
    for item in sorted(by_item):
        votes = by_item[item]
        label = aggregate_votes(votes, min_contradictory) if len(votes) >= min_annotators else None
        out.append(AggregatedItem(item, label, sum(votes), len(votes)))
    return out


def apply_aggregation(
    replies: Sequence[CollectedReply], items: Iterable[AggregatedItem], keep_discarded: bool = False
) -> list[CollectedReply]:
    """The replies with ``label`` and ``votes`` set from the aggregation; unlabelled or discarded
    replies are dropped unless ``keep_discarded``."""
    agg = {a.item_id: a for a in items}
    out = []
    for r in replies:
        a = agg.get(r.id)
        if a is None or a.label is None:
            if keep_discarded:
                out.append(replace(r, label=None, votes=a.contradictory_votes if a else None))
            continue
        out.append(replace(r, label=a.label, votes=a.contradictory_votes))
    return out


def fleiss_kappa(counts: Sequence[Sequence[int]]) -> float:
    """Fleiss' kappa from a subjects x categories table of rating counts (equal raters per subject).

    >>> table = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
    ...          [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]
    >>> round(fleiss_kappa(table), 3)  # Fleiss (1971) as worked on Wikipedia
    0.21
    """
    rows = [list(map(int, r)) for r in counts]
    if not rows:
        raise ValueError("no subjects")
    n = sum(rows[0])
    if n < 2 or any(sum(r) != n for r in rows):
        raise ValueError("every subject needs the same number (>= 2) of ratings")
    big_n = len(rows)
    k = len(rows[0])
    p_j = [sum(r[j] for r in rows) / (big_n * n) for j in range(k)]
    p_i = [(sum(x * x for x in r) - n) / (n * (n - 1)) for r in rows]
    p_bar = sum(p_i) / big_n
    p_e = sum(p * p for p in p_j)
    if p_e == 1.0:
        return 1.0 if p_bar == 1.0 else 0.0
    return (p_bar - p_e) / (1 - p_e)


def kappa_from_labels(labels: Iterable[AnnotatorLabel], raters: int | None = None) -> tuple[float, int]:
    """Fleiss' kappa over the items rated by exactly ``raters`` annotators (default: the most common
    count); returns ``(kappa, items used)``."""
    by_item: dict[str, list[bool]] = {}
    for lab in labels:
        by_item.setdefault(lab.item_id, []).append(lab.label)
    if not by_item:
        raise ValueError("no labels")
    if raters is None:
        sizes = [len(v) for v in by_item.values()]
        raters = max(set(sizes), key=lambda s: (sizes.count(s), s))
    table = [[sum(v), len(v) - sum(v)] for v in by_item.values() if len(v) == raters]
    return fleiss_kappa(table), len(table)


def score_quiz(answers: Iterable[AnnotatorLabel], gold: Mapping[str, bool], pass_mark: float = 0.8) -> list[QuizResult]:
    """Score each annotator's quiz answers against ``gold``; unanswered questions count as wrong, so an annotator
    who answered none of them is listed with nothing correct (not left out).

    >>> gold = {"q1": True, "q2": False}
    >>> [(r.annotator, r.correct, r.passed) for r in score_quiz([AnnotatorLabel("q1", "ann", True)], gold)]
    [('ann', 1, False)]
    >>> [(r.annotator, r.answered, r.passed) for r in score_quiz([AnnotatorLabel("q9", "bob", True)], gold)]
    [('bob', 0, False)]
    """
    if not gold:
        raise ValueError("the quiz has no questions")
    by_ann: dict[str, dict[str, bool]] = {}
    for a in answers:
        given = by_ann.setdefault(a.annotator, {})
        if a.item_id in gold:
            given[a.item_id] = a.label
    out = []
    for ann in sorted(by_ann):
        given = by_ann[ann]
        correct = sum(given[q] == g for q, g in gold.items() if q in given)
        out.append(QuizResult(ann, correct, len(given), len(gold), correct / len(gold) >= pass_mark))
    return out
