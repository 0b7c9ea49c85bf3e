"""How many content words the two turns of a training pair share, per source and label.

A detector trained on pairs whose contradictions share words and whose consistent pairs do not learns
"same subject = contradiction". This prints, for the DECODE training mix that ``dialcheck train --augment``
builds (and, with ``--data``, for labelled dialogues of your own: each contradiction's evidence turns against
the last turn, and for a consistent dialogue every earlier turn of the last speaker), the mean share of the
earlier turn's content words that the later turn repeats, and how many pairs repeat more than 30%.

    python benchmarks/decode_pair_overlap.py --augment random_premise,restate,anli,nli_samples \\
        --data benchmarks/data/decode_hand_a.jsonl --data benchmarks/data/decode_hand_b.jsonl
"""

from __future__ import annotations

import argparse
import re
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

_STOP_WORDS = (
    "i a an the to and my is it of you do in that have but for so like be am i'm me what are was on not with too "
    "just at this"
)
STOP = frozenset(_STOP_WORDS.split())


def content_words(text: str) -> set[str]:
    """Lower-cased words minus a short stop list.

    >>> sorted(content_words("I'm a nurse, and I LOVE it."))
    ['love', 'nurse']
    """
    return set(re.findall(r"[a-z']+", text.lower())) - STOP


def overlap(first: str, second: str) -> float:
    """Share of ``first``'s content words that ``second`` repeats (0 when ``first`` has none).

    >>> overlap("I have two dogs.", "My dogs are old.")
    0.5
    >>> overlap("I am.", "Yes.")
    0.0
    """
    a = content_words(first)
    return len(a & content_words(second)) / len(a) if a else 0.0


def summarise(rows: Iterable[tuple[str, int, str, str]]) -> list[tuple[str, int, int, float, float]]:
    """``(source, label, n, mean overlap, share above 0.3)`` per source and label, sorted.

    >>> summarise([("s", 1, "I have dogs", "no dogs"), ("s", 1, "I swim", "I run"), ("s", 0, "cats", "dogs")])
    [('s', 0, 1, 0.0, 0.0), ('s', 1, 2, 0.5, 0.5)]
    """
    groups: dict[tuple[str, int], list[float]] = defaultdict(list)
    for source, label, first, second in rows:
        groups[(source, label)].append(overlap(first, second))
    return [
        (source, label, len(v), round(sum(v) / len(v), 3), round(sum(x > 0.3 for x in v) / len(v), 3))
        for (source, label), v in sorted(groups.items())
    ]


def labelled_pairs(path: str | Path) -> list[tuple[str, int, str, str]]:
    """Same-speaker (earlier turn, last turn) pairs of a labelled dialogue file, as ``evaluate --data`` reads it:
    a contradiction's evidence turns, and every earlier turn of the last speaker in a consistent dialogue."""
    from dialcheck.errors import InputError
    from dialcheck.io import read_examples
    from dialcheck.training.data import labelled_dialogue_pairs

    examples, errors = read_examples(path)
    if errors:
        raise InputError(f"{path}: {len(errors)} bad records, the first: {errors[0]}")
    pairs, _ = labelled_dialogue_pairs(examples)
    contradicting = {p.group for p in pairs if p.label}  # their other turns are not pairs of a consistent chat
    name = Path(path).name
    return [(name, p.label, p.first, p.second) for p in pairs if p.label or p.group not in contradicting]


def main(argv: list[str] | None = None) -> None:
    from _cli import readable_file

    from dialcheck.cli.common import comma_choices
    from dialcheck.training.data import AUGMENTATIONS, build_decode_training_data

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    pick = comma_choices(AUGMENTATIONS)
    augments = lambda text: pick(text) if text.strip(" ,") else []  # noqa: E731  ('': the DECODE pairs alone)
    p.add_argument(
        "--augment", type=augments, default="random_premise,restate,anli,nli_samples", help="as dialcheck train"
    )
    p.add_argument("--data-dir", default=None)
    p.add_argument(
        "--data", type=readable_file, action="append", default=[], help="labelled dialogues (JSON/JSONL), repeatable"
    )
    args = p.parse_args(argv)
    data = build_decode_training_data(args.data_dir, augment=args.augment)
    rows = [(p.source, int(p.label), p.first, p.second) for p in data.train]
    for path in args.data:
        rows += labelled_pairs(path)
    print("| source | label | pairs | mean overlap | share > 0.3 |\n|---|---:|---:|---:|---:|")
    for source, label, n, mean, high in summarise(rows):
        print(f"| {source} | {label} | {n} | {mean:.3f} | {high:.3f} |")


if __name__ == "__main__":
    from _cli import run

    run(main)
