"""Circa (Louis, Roth & Radlinski 2020): polar questions with indirect answers, in 10 social scenarios.

Each row is a question X asks and the answer Y gives, with five crowd judgements and two gold labels:
``strict`` (goldstandard1) and ``relaxed`` (goldstandard2, where "probably yes/no" fold into yes/no and
"I am not sure how X will interpret Y's answer" folds into "in the middle"). There is no official split;
the unmatched setting holds out one scenario at a time (:data:`SCENARIOS`).

>>> relaxed_label("Yes, subject to some conditions"), relaxed_label("NA")
('conditional', None)
>>> judgement("conditional"), judgement("middle"), judgement("other")
('yes', 'ambiguous', 'ambiguous')
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from .base import read_lines, register_dataset

__all__ = [
    "RELAXED_LABELS",
    "SCENARIOS",
    "STRICT_LABELS",
    "CircaExample",
    "judgement",
    "load_circa",
    "relaxed_label",
]

CIRCA_FILE = "circa/circa-data.tsv"
CIRCA_SHA256 = "98454df6b716dd7ff5f83a3db298849f05414688e81c2ee21b8e5a548ed897aa"

# The relaxed gold label set (goldstandard2 without NA), under short names.
RELAXED_LABELS = ("yes", "no", "conditional", "middle", "other")
_RELAXED = {
    "Yes": "yes",
    "No": "no",
    "Yes, subject to some conditions": "conditional",
    "In the middle, neither yes nor no": "middle",
    "Other": "other",
}
# The strict gold label set (goldstandard1), as the corpus spells it ("NA": no majority).
STRICT_LABELS = (
    "Yes",
    "No",
    "Probably yes / sometimes yes",
    "Probably no",
    "Yes, subject to some conditions",
    "In the middle, neither yes nor no",
    "I am not sure how X will interpret Y\u2019s answer",
    "Other",
    "NA",
)
# How a relaxed label judges a reply to a polar question: a confirmation, a refutation, or neither.
# "Yes, subject to some conditions" still confirms; "in the middle" (incl. "I am not sure") and
# "other" answers neither confirm nor refute.
JUDGEMENTS = ("yes", "no", "ambiguous")
_JUDGEMENT = {"yes": "yes", "conditional": "yes", "no": "no", "middle": "ambiguous", "other": "ambiguous"}

SCENARIOS = {
    "travel": "Y has just travelled from a different city to meet X.",
    "food": "X wants to know about Y's food preferences.",
    "flat": "Y has just told X that he/she is thinking of buying a flat in New York.",
    "weekend": "X wants to know what activities Y likes to do during weekends.",
    "neighbours": "X and Y are childhood neighbours who unexpectedly run into each other at a cafe.",
    "colleagues": "X and Y are colleagues who are leaving work on a Friday at the same time.",
    "music": "X wants to know about Y's music preferences.",
    "books": "X wants to know what sorts of books Y likes to read.",
    "new_neighbour": "Y has just moved into a neighbourhood and meets his/her new neighbour X.",
    "job": "Y has just told X that he/she is considering switching his/her job.",
}
_SCENARIO_BY_TEXT = {v: k for k, v in SCENARIOS.items()}


def relaxed_label(gold: str) -> str | None:
    """Short name of a goldstandard2 label; ``None`` for NA (no majority)."""
    if gold == "NA":
        return None
    if gold not in _RELAXED:
        raise ValueError(f"unknown Circa relaxed label {gold!r}")
    return _RELAXED[gold]


def judgement(label: str) -> str:
    """Map a relaxed label to the judgement of a reply: ``yes``, ``no`` or ``ambiguous``."""
    return _JUDGEMENT[label]


@dataclass(frozen=True)
class CircaExample:
    """One question-answer pair with its scenario and gold labels (``relaxed`` is ``None`` for NA)."""

    id: int
    scenario: str  # short name, a key of SCENARIOS
    question: str
    answer: str
    relaxed: str | None
    strict: str | None
    judgements: tuple[str, ...] = ()
    canonical: str = ""  # the question as Y's own statement ("I am employed ."), written by the annotators


@register_dataset(
    "circa.v1",
    "Circa: 34,268 polar questions with indirect answers in 10 scenarios (relaxed and strict gold labels)",
    (CIRCA_FILE,),
    34268,
    (CIRCA_SHA256,),
)
def load_circa(root: Path) -> list[CircaExample]:
    path = root / CIRCA_FILE
    out = []
    lines = ((n, line) for n, line in read_lines(path) if line.strip())  # a blank line is skipped, as in JSONL
    rows = ((n, next(csv.reader([line], delimiter="\t", quoting=csv.QUOTE_NONE))) for n, line in lines)
    first = next(rows, None)
    if first is None:
        raise InputError("empty file: expected Circa's header line and rows", str(path))
    header_line, header = first
    expected = ["id", "context", "question-X", "canquestion-X", "answer-Y", "judgements"]
    if header[: len(expected)] != expected:
        raise InputError(f"unexpected header {header}", str(path), header_line)
    for n, row in rows:
        if len(row) != 8:
            raise InputError(f"expected 8 tab-separated columns, got {len(row)}", str(path), n)
        rid, context, question, canonical, answer, judgements, strict, relaxed = row
        if not rid.isascii() or not rid.isdigit():
            raise InputError(f"id: expected a whole number, got {rid!r}", str(path), n)
        if strict not in STRICT_LABELS:
            raise InputError(f"goldstandard1: unknown Circa strict label {strict!r}", str(path), n)
        scenario = _SCENARIO_BY_TEXT.get(context)
        if scenario is None:
            raise InputError(f"context: unknown scenario {context!r}", str(path), n)
        try:
            rel = relaxed_label(relaxed)
        except ValueError as e:
            raise InputError(str(e), str(path), n) from None
        out.append(
            CircaExample(
                int(rid),
                scenario,
                question.strip(),
                answer.strip(),
                rel,
                None if strict == "NA" else strict,
                tuple(judgements.split("#")),
                canonical.strip(),
            )
        )
    return out
