"""Rule CG, measured and not adopted (docs/benchmarks.md, session 84): a turn that only says the speaker has no
one of a kind ("I'm an only child.", "No pets.") beside a turn about people or pets of other kinds, settled like
``--subjects apart`` settles a pair about different people. This script keeps the rule out of the library and
runs any ``dialcheck`` command with it in:

    python benchmarks/denial_kind_rule.py evaluate --data ALL.jsonl --threads 2 --predictions P1.jsonl
    python benchmarks/denial_kind_rule.py --count P0.jsonl P1.jsonl --prefix hand-at-

``--count`` prints, for each predictions file of ``dialcheck evaluate``, the consistent chats flagged and the
contradictions caught (over the rows whose id starts with ``--prefix``) and lists the verdicts that differ between
the first file and the others.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from _rows import parsed_rows

from dialcheck.detectors import utterance
from dialcheck.detectors.subjects import _PETS, _fragments, _named

# Rule CG: a turn that only says the speaker has no one of a kind, beside a turn about people of other kinds.
# Each kind: what denies it, and every word or phrase that speaks of someone of that kind (then nothing is settled).
_NO = r"(?:don't|do not|didn't|did not|never|haven't|have not) (?:\w+ )?(?:have|had|own|owned|got) (?:a |an |any |no )?"
_KINDS = {
    "sibling": (
        rf"\bonly child\b|\bno (?:\w+ )?(?:brothers?|sisters?|siblings?)\b|\b{_NO}(?:\w+ )?(?:brothers?|sisters?"
        r"|siblings?)\b",
        r"\b(?:brothers?|sisters?|siblings?|twins?|bro|sis|step-?(?:brother|sister)s?|half-?(?:brother|sister)s?"
        r"|oldest|eldest|youngest|middle child|of us|nephews?|nieces?)\b",
    ),
    "child": (
        rf"\bno (?:\w+ )?(?:kids|children)\b|\bchildless\b|\b{_NO}(?:\w+ )?(?:kids?|children|child)\b",
        r"\b(?:sons?|daughters?|kids?|child|children|babys?|babies|toddlers?|teens?|teenagers?|grand\w+|stepkids?"
        r"|step-?(?:son|daughter)s?|pregnant"
        r"|(?:i'm|i am|as|being) (?:\w+ )?an? (?:[\w-]+ ){0,2}(?:mom|mum|mother|dad|father|parent)"
        r"|stay[- ]at[- ]home (?:mom|mum|mother|dad|father|parent)|single (?:mom|mum|mother|dad|father|parent))\b",
    ),
    "partner": (
        r"\bsingle\b|\bnot married\b|\bnever (?:been )?married\b|\bunmarried\b",
        r"\b(?:wife|husband|spouse|partner|boyfriend|girlfriend|fianc[eé]e?|married|wedding|in-laws?|ex|dating"
        r"|date|engaged|honeymoon)\b",
    ),
    "pet": (
        rf"\bno (?:\w+ )?pets?\b|\b{_NO}(?:\w+ )?pets?\b",
        rf"\b(?:{_PETS}|fish|goldfish|snakes?|lizards?|turtles?|vet|walks?|walking)\b",
    ),
}
_KIND_RES = {k: (re.compile(deny, re.I), re.compile(said, re.I)) for k, (deny, said) in _KINDS.items()}
_DENIAL_WORDS = 14  # a statement longer than this says more than the denial


def denied_kind(text: str) -> str | None:
    """The kind of person or pet a turn says the speaker has none of, when that is all it says ("I'm an only
    child." -> ``"sibling"``; "Nope, no kids." -> ``"child"``), else None.

    >>> denied_kind("Oh, I'm an only child."), denied_kind("No kids, just me and my husband.")
    ('sibling', None)
    >>> denied_kind("I'm an only child and I live in Ohio.") is None  # says more than the denial
    True
    >>> denied_kind("I don't have any brothers or sisters."), denied_kind("Yes, as a single mom.")
    ('sibling', None)
    """
    said = _fragments(text)
    for kind, (deny, words) in _KIND_RES.items():
        only = said and all(deny.search(s) and len(s.split()) <= _DENIAL_WORDS for s in said)
        joined = " ".join(said)
        # nobody else named beside the denial: "single with kids", "a single mom" say more than it
        if (
            only
            and not re.search(r"\band\b|\bbut\b", joined, re.I)
            and not _named(words.sub(" ", deny.sub(" ", joined)))
        ):
            return kind
    return None


def denies_another_kind(earlier: str, last: str) -> bool:
    """Whether one of two turns of one speaker only says they have no one of a kind and the other speaks of
    people or pets, none of that kind: "I'm an only child." … "My parents and I are very close." agree, and
    a pair classifier trained on DECODE reads them as a contradiction (0.95 with the default).

    >>> denies_another_kind("I'm an only child.", "Yes, my parents and I are very close.")
    True
    >>> denies_another_kind("I'm an only child.", "My brother lives in Texas.")
    False
    >>> denies_another_kind("I don't have any kids.", "My mom calls me every day.")
    True
    >>> denies_another_kind("I don't have any kids.", "As a mom of two, I rarely sleep.")  # a mother: children
    False
    >>> denies_another_kind("I have no kids.", "I'm currently a stay-at-home dad, my wife works.")
    False
    """
    for denial, other in ((earlier, last), (last, earlier)):
        kind = denied_kind(denial)
        if kind is None or not _named(other):
            continue
        return not _KIND_RES[kind][1].search(other.replace("’", "'"))
    return False


def _prediction(row: dict) -> tuple[str, dict]:
    """``(id, row)`` of a ``dialcheck evaluate --predictions`` row, with the fields :func:`count` reads."""
    gold, flagged, score = bool(row["gold"]), bool(row["contradiction"]), float(row["score"])
    return str(row["id"]), {**row, "gold": gold, "contradiction": flagged, "score": score}


def count(paths: list[Path], prefix: str = "") -> None:
    """Consistent chats flagged and contradictions caught in each predictions file; verdicts that changed."""
    runs = []
    for p in paths:
        rows = {i: r for i, r in parsed_rows(p, _prediction, "a predictions row") if i.startswith(prefix)}
        runs.append(rows)
        flagged = sum(1 for r in rows.values() if not r["gold"] and r["contradiction"])
        caught = sum(1 for r in rows.values() if r["gold"] and r["contradiction"])
        neg = sum(1 for r in rows.values() if not r["gold"])
        print(f"{p}: consistent flagged {flagged} of {neg}, contradictions caught {caught} of {len(rows) - neg}")
    for p, rows in zip(paths[1:], runs[1:], strict=True):
        for k, r in rows.items():
            if k in runs[0] and runs[0][k]["contradiction"] != r["contradiction"]:
                print(f"  {p}: {k} gold {r['gold']}: {runs[0][k]['score']:.3f} -> {r['score']:.3f}")


def main(argv: list[str]) -> int:
    if argv[:1] == ["--count"]:
        ap = argparse.ArgumentParser(description="consistent chats flagged and contradictions caught")
        ap.add_argument("--count", nargs="+", type=Path, required=True, help="predictions files")
        ap.add_argument("--prefix", default="", help="only rows whose id starts with this")
        args = ap.parse_args(argv)
        count(args.count, args.prefix)
        return 0
    from dialcheck.cli import main as dialcheck

    plain = utterance.apart
    utterance.apart = lambda earlier, last: plain(earlier, last) or denies_another_kind(earlier, last)
    return dialcheck(argv)


if __name__ == "__main__":
    from _cli import run

    sys.exit(run(main, sys.argv[1:]))
