"""Readings of agreeing and answering turns, compared on DECODE without re-scoring every dialogue.

``--ellipsis resolve`` reads a turn that only agrees ("Me too!") as the other speaker's statements before it
(``dialcheck.detectors.utterance.implied_statement``). This script measures that reading and two variants
that were tried and not kept, re-scoring only the dialogues a reading changes and taking every other verdict
from a baseline ``dialcheck evaluate --predictions`` file of the same model (which is exact: the reading adds
pairs only for turns it resolves):

- ``all``: the shipped reading (every statement of the other turn);
- ``last``: only the other turn's last statement;
- ``answers``: ``all`` plus yes/no answers read as statements ("Do you have any pets?" "No." -> "I don't
  have any pets.").

    dialcheck evaluate --splits dev,human_bot,rct --threads 2 --predictions runs/v9-pred.jsonl
    python benchmarks/ellipsis_variants.py --baseline runs/v9-pred.jsonl --threads 2
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from pathlib import Path

from _rows import parsed_rows

from dialcheck.cli.common import comma_choices, nonnegative_int
from dialcheck.schema import Dialogue

YES = re.compile(
    r"^\W*(?:(?:oh|well|haha|lol)\W+)*(?:yes|yeah|yep|yup|sure|of course|definitely|absolutely|i do|i am|i have"
    r"|i can|i did)\b(?!\s+(?:not|n't))",
    re.IGNORECASE,
)
NO = re.compile(
    r"^\W*(?:(?:oh|well|haha|lol)\W+)*(?:no|nope|nah|not really|never|i don't|i do not|i'm not|i am not"
    r"|i haven't|i have not|i can't|i cannot|i didn't|i did not)\b",
    re.IGNORECASE,
)
QUESTION = re.compile(r"^(?:and |so |but |well,? )?(do|did|are|were|have|can|will|would)\s+you\s+(.+?)\s*\?+$", re.I)
POSITIVE = {"do": "", "did": "did ", "are": "am ", "were": "was ", "have": "have ", "can": "can ", "will": "will ",
            "would": "would "}  # fmt: skip
NEGATIVE = {"do": "don't ", "did": "didn't ", "are": "am not ", "were": "wasn't ", "have": "haven't ",
            "can": "can't ", "will": "won't ", "would": "wouldn't "}  # fmt: skip
VARIANTS = ("all", "last", "answers")
SPLITS = ("human_bot", "rct", "dev")  # the DECODE splits whose dialogues the readings change
SWAP = {"your": "my", "yours": "mine", "yourself": "myself", "you": "me"}


def answered_statement(dialogue: Dialogue, i: int) -> str | None:
    """Turn ``i`` as a statement when it answers the other speaker's yes/no question, else ``None``.

    >>> answered_statement(Dialogue.from_texts(["Do you have any pets?", "No, I don't."]), 1)
    "I don't have any pets."
    >>> answered_statement(Dialogue.from_texts(["Do you like your job?", "Yes, it's rewarding."]), 1)
    'I like my job.'
    """
    from dialcheck.detectors.utterance import sentences as split_sentences

    turns = dialogue.turns
    text = turns[i].text.replace("\u2019", "'").strip()
    negative = bool(NO.match(text))
    if not negative and not YES.match(text):
        return None
    for j in range(i - 1, -1, -1):
        if turns[j].speaker != turns[i].speaker:
            said = split_sentences(turns[j].text)
            m = QUESTION.match(said[-1]) if said else None
            if not m:
                return None
            aux, rest = m.group(1).lower(), " ".join(SWAP.get(w.lower(), w) for w in m.group(2).split())
            if not negative:
                rest = re.sub(r"\bany\b", "some", rest)
            return "I " + (NEGATIVE if negative else POSITIVE)[aux] + rest + "."
    return None


def variant(name: str) -> Callable[[Dialogue, int], str | None]:
    from dialcheck.detectors import utterance

    shipped = utterance.implied_statement
    if name == "all":
        return shipped

    def last(d: Dialogue, i: int) -> str | None:
        said = shipped(d, i)
        return utterance.sentences(said)[-1] if said else None

    def answers(d: Dialogue, i: int) -> str | None:
        return shipped(d, i) or answered_statement(d, i)

    return {"last": last, "answers": answers}[name]


def _resolves(d: Dialogue) -> bool:
    from dialcheck.detectors import utterance

    return any(utterance.implied_statement(d, i) for i in range(len(d.turns)))


def _verdict(row: dict) -> tuple[tuple[str, str], bool]:
    """``((split, id), contradiction)`` of a ``dialcheck evaluate --predictions`` row."""
    return (str(row["split"]), str(row["id"])), bool(row["contradiction"])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", required=True, help="evaluate --predictions file of the model, ellipsis off")
    ap.add_argument("--model", default=None, help="detector (default: the shipped English default)")
    ap.add_argument("--variants", type=comma_choices(VARIANTS), default=list(VARIANTS), help="comma-separated")
    ap.add_argument("--splits", type=comma_choices(SPLITS), default=list(SPLITS), help="comma-separated")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--threads", type=nonnegative_int, default=0, help="torch threads (0 = torch's default)")
    args = ap.parse_args(argv)

    from dialcheck.api import load
    from dialcheck.cli.common import set_threads
    from dialcheck.datasets import decode
    from dialcheck.datasets.base import data_dir as data_root
    from dialcheck.detectors import utterance

    set_threads(args.threads)
    base = dict(parsed_rows(Path(args.baseline), _verdict, "a predictions row"))
    det = load(args.model)
    loaders = {"human_bot": decode.load_human_bot, "rct": decode.load_rct, "dev": decode.load_dev}
    root = data_root(args.data_dir)
    examples = {s: loaders[s](root) for s in args.splits}
    shipped = utterance.implied_statement
    print("| reading | " + " | ".join(f"{s} accuracy (dialogues re-read)" for s in examples) + " |")
    print("|---|" + "---:|" * len(examples))
    row = ["| off (baseline) |"]
    for s, exs in examples.items():
        row.append(f" {100 * sum(base[(s, e.id)] == bool(e.label) for e in exs) / len(exs):.2f} |")
    print("".join(row))
    try:
        for name in args.variants:
            utterance.implied_statement = variant(name)
            det.ellipsis = "resolve"
            row = [f"| {name} |"]
            for s, exs in examples.items():
                hit = [e for e in exs if _resolves(e.dialogue)]
                new = {e.id: v.contradiction for e, v in zip(hit, det.predict([e.dialogue for e in hit]), strict=True)}
                right = sum(new.get(e.id, base[(s, e.id)]) == bool(e.label) for e in exs)
                row.append(f" {100 * right / len(exs):.2f} ({len(hit)}) |")
            print("".join(row), flush=True)
    finally:
        utterance.implied_statement = shipped
    return 0


if __name__ == "__main__":
    from _cli import run

    raise SystemExit(run(main))
