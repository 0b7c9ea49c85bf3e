"""Certainty and Variety of n-best lists answering polar echo questions (after Sato et al. 2022, §2).

Each reply of an n-best list is judged a confirmation (``yes``), a refutation (``no``) or ``ambiguous``
(by :class:`dialcheck.analysis.answers.AnswerClassifier`). A reply is *correct* when it gives the
expected answer: ``yes`` to an ENTQ, ``no`` to a CNTQ. Inputs whose list holds an ambiguous reply are
dropped, and their number is reported. For a kept list of ``n`` replies:

- **Certainty** = (number of correct replies) / n: how much of the list a contradiction filter keeps,
  and how safe the list is when a filter errs.
- **Variety** = (number of *distinct* correct replies) / n: how many different non-contradictory
  replies remain to choose from once the contradictory ones are removed. Variety <= Certainty.

A setting's Certainty and Variety are the means over its kept inputs.

The definitions above are the ones implemented here, reconstructed from the paper's description; the
paper's §2 text and the lists of its Figure 1 could not be checked offline, so compare the formulas
with the paper before quoting our numbers beside its numbers.

>>> replies = ["Yes, I am.", "Yes.", "Yes, I am.", "No, I'm not."]
>>> judged = ["yes", "yes", "yes", "no"]
>>> certainty(judged, "yes"), variety(replies, judged, "yes")
(0.75, 0.5)
>>> summarize([(replies, judged, "yes"), (["Maybe."], ["ambiguous"], "yes")])
{'inputs': 2, 'kept': 1, 'dropped_ambiguous': 1, 'certainty': 0.75, 'variety': 0.5}
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np

__all__ = ["certainty", "has_ambiguous", "normalize_reply", "summarize", "variety"]

JUDGEMENTS = ("yes", "no", "ambiguous")


def _check(judgements: Sequence[str], expected: str) -> None:
    if expected not in ("yes", "no"):
        raise ValueError(f"expected answer must be 'yes' or 'no', got {expected!r}")
    bad = [j for j in judgements if j not in JUDGEMENTS]
    if bad:
        raise ValueError(f"unknown judgements {sorted(set(bad))}; use {JUDGEMENTS}")
    if not judgements:
        raise ValueError("an empty n-best list has no Certainty or Variety")


def has_ambiguous(judgements: Sequence[str]) -> bool:
    """Does the list hold a reply judged neither yes nor no? (Such inputs are dropped.)"""
    return any(j == "ambiguous" for j in judgements)


def certainty(judgements: Sequence[str], expected: str) -> float:
    """Share of the list's replies that give the expected answer.

    >>> certainty(["yes"] * 15, "yes")
    1.0
    >>> round(certainty(["no"] * 5 + ["yes"] * 10, "no"), 2)
    0.33
    """
    _check(judgements, expected)
    return sum(j == expected for j in judgements) / len(judgements)


def normalize_reply(text: str) -> str:
    """Identity of a reply for Variety: whitespace-collapsed, case and surrounding space ignored.

    >>> normalize_reply("  Yes,  I am. "), normalize_reply("YES, i am.")
    ('yes, i am.', 'yes, i am.')
    """
    return " ".join(text.split()).lower()


def variety(
    replies: Sequence[str],
    judgements: Sequence[str],
    expected: str,
    normalize: Callable[[str], str] = normalize_reply,
) -> float:
    """Distinct correct replies over the list length.

    Fifteen correct replies of which two are the same: 14/15. Five correct replies, three distinct:

    >>> yes = [f"Yes, reason {i}." for i in range(14)] + ["Yes, reason 0."]
    >>> round(variety(yes, ["yes"] * 15, "yes"), 2)
    0.93
    >>> replies = ["No.", "No.", "No, I'm not.", "No, I'm not.", "Nope."] + ["Yes."] * 10
    >>> round(variety(replies, ["no"] * 5 + ["yes"] * 10, "no"), 2)
    0.2
    """
    _check(judgements, expected)
    if len(replies) != len(judgements):
        raise ValueError(f"{len(replies)} replies but {len(judgements)} judgements")
    distinct = {normalize(r) for r, j in zip(replies, judgements, strict=True) if j == expected}
    return len(distinct) / len(judgements)


def summarize(lists: Iterable[tuple[Sequence[str], Sequence[str], str]]) -> dict[str, float | int]:
    """Mean Certainty and Variety over (replies, judgements, expected) lists without ambiguous replies.

    Empty lists count as dropped too (there is nothing to judge).
    """
    cs, vs = [], []
    total = dropped = 0
    for replies, judged, expected in lists:
        total += 1
        if not judged or has_ambiguous(judged):
            dropped += 1
            continue
        cs.append(certainty(judged, expected))
        vs.append(variety(replies, judged, expected))
    return {
        "inputs": total,
        "kept": len(cs),
        "dropped_ambiguous": dropped,
        "certainty": round(float(np.mean(cs)), 4) if cs else float("nan"),
        "variety": round(float(np.mean(vs)), 4) if vs else float("nan"),
    }
