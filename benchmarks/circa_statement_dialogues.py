"""Same-subject statement pairs for the DECODE detector from Circa: ``dialcheck train --dialogues`` input.

DECODE's consistent pairs are mostly off-topic (a random earlier turn), so a detector trained on them learns that
a bot turn on the same subject as an earlier one is a contradiction ("I love jazz." … "I play the trumpet.").
Circa (Louis et al. 2020) asks polar questions in ten social scenarios (music, food, books, job, weekend, …) and
gives each an indirect answer, a gold yes/no label and the question written as the answerer's own statement
(``canquestion-X``: "Are you employed?" → "I am employed."). A "yes" answer is a same-subject statement that
agrees with it ("I'm a veterinary technician."), a "no" answer one that contradicts it ("I prefer rock." after
"I am into pop."). Each kept row becomes a labelled three-turn dialogue, the bot's two statements around the
question, in an order drawn per row (seeded): the pair (earlier bot turn, last bot turn) is what training uses.

Kept: the strict gold label (goldstandard1) is "Yes" or "No" (not "Probably …", conditional, in the middle or
NA); the answer has at least three words and does not open with a bare yes/no word ("Yes, …", "Nope", "Sure"),
which would teach the surface cue instead of the content; the statement has at least three words and no "I"
after its first word (the annotators' rewrites of "you" sometimes garble the object: "You can come visit I .").
``--per-label`` caps each label (default 4,000, drawn with the seed). With ``--held-out-from FILE`` (a file this
script wrote for training) only dialogues whose turns are not in FILE are kept, ``--per-label`` of each label
drawn from them, contradictions first: a calibration set the trained model has not seen.

    python benchmarks/circa_statement_dialogues.py --out runs/circa_statements.jsonl
    python benchmarks/circa_statement_dialogues.py --held-out-from runs/circa_statements.jsonl --per-label 1000 \
        --out runs/circa_heldout.jsonl          # 2,000 dialogues for dialcheck train --calibrate-on
    dialcheck train ... --dialogues runs/circa_statements.jsonl \\
        --distill-alpha-by dialogues.positive=0,dialogues.negative=0      # with a teacher: keep their gold labels
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from _rows import parsed_rows

from dialcheck.cli.common import nonnegative_int
from dialcheck.datasets.base import data_dir
from dialcheck.datasets.circa import CircaExample, load_circa

_BARE = re.compile(
    r"^(yes|yeah|yep|yup|no|nope|nah|sure|definitely|absolutely|of course|certainly|not really|not at all)\b", re.I
)
_SPACE_PUNCT = re.compile(r"\s+([.,!?;:'])")


def statement(canonical: str) -> str | None:
    """The annotators' declarative rewrite as a sentence, or ``None`` when it is too short or garbled.

    >>> statement("I am employed ."), statement("You can come visit I ."), statement("I tonight .")
    ('I am employed.', None, None)
    """
    text = _SPACE_PUNCT.sub(r"\1", " ".join(canonical.split())).strip()
    words = re.findall(r"[A-Za-z']+", text)
    if len(words) < 3 or "I" in words[1:] or words[1].lower() == "to":  # "I to work for another company ."
        return None
    text = text[:1].upper() + text[1:]
    return text if text[-1] in ".!?" else text + "."


def usable_answer(answer: str) -> bool:
    """A content answer of at least three words that does not open with a bare yes/no word.

    >>> usable_answer("I'm a veterinary technician."), usable_answer("No, I hate it."), usable_answer("Most days")
    (True, False, False)
    """
    return len(re.findall(r"[A-Za-z']+", answer)) >= 3 and not _BARE.match(answer.strip())


def statement_records(
    rows: Sequence[CircaExample], per_label: int | None = 4000, seed: int = 0
) -> tuple[list[dict], dict[str, int]]:
    """Labelled dialogues (``evaluate --data`` format) from Circa rows, with counts of what was kept and why not."""
    rng = random.Random(seed)
    counts = {"rows": len(rows), "label_not_yes_no": 0, "answer_unusable": 0, "statement_unusable": 0}
    by_label: dict[bool, list[dict]] = {True: [], False: []}
    for r in rows:
        if r.strict not in ("Yes", "No"):
            counts["label_not_yes_no"] += 1
            continue
        if not usable_answer(r.answer):
            counts["answer_unusable"] += 1
            continue
        s = statement(r.canonical)
        if s is None:
            counts["statement_unusable"] += 1
            continue
        contradiction = r.strict == "No"
        first, last = (s, r.answer) if rng.random() < 0.5 else (r.answer, s)
        turns = [{"speaker": "bot", "text": first}, {"speaker": "user", "text": r.question}]
        turns.append({"speaker": "bot", "text": last})
        rec = {"id": f"circa.{r.scenario}.{r.id}", "turns": turns, "contradiction": contradiction}
        if contradiction:
            rec["evidence"] = [0]
        by_label[contradiction].append(rec)
    out = []
    for label, recs in by_label.items():
        counts[f"available_{'contradiction' if label else 'consistent'}"] = len(recs)
        if per_label is not None and len(recs) > per_label:
            recs = rng.sample(recs, per_label)
        out.extend(recs)
    out.sort(key=lambda rec: int(rec["id"].rsplit(".", 1)[1]))
    counts["consistent"] = sum(not r["contradiction"] for r in out)
    counts["contradiction"] = sum(r["contradiction"] for r in out)
    return out, counts


def held_out(records: Sequence[dict], used: Path, per_label: int | None, seed: int = 0) -> list[dict]:
    """The records whose turns are not those of any dialogue in ``used``, ``per_label`` of each label drawn
    with the seed, contradictions first."""
    seen = set(parsed_rows(used, lambda r: json.dumps(r["turns"]), "a dialogue with turns"))
    rest = [r for r in records if json.dumps(r["turns"]) not in seen]
    rng = random.Random(seed)
    out = []
    for label in (True, False):
        recs = [r for r in rest if r["contradiction"] is label]
        out += rng.sample(recs, per_label) if per_label is not None and len(recs) > per_label else recs
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="the JSONL file to write")
    ap.add_argument(
        "--data", "--data-dir", dest="data", help="data directory (default: ../shared/data or $DIALCHECK_DATA_DIR)"
    )
    ap.add_argument("--per-label", type=nonnegative_int, default=4000, help="at most this many of each label (0: all)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--held-out-from", default=None, metavar="FILE", help="keep only dialogues not in FILE")
    args = ap.parse_args(argv)
    rows = load_circa(data_dir(args.data))  # a missing or bad corpus: InputError, exit 2 by _cli.run
    if args.held_out_from:
        records, counts = statement_records(rows, None, args.seed)
        records = held_out(records, Path(args.held_out_from), args.per_label or None, args.seed)
        counts = {"usable": counts["consistent"] + counts["contradiction"], "written": len(records)}
    else:
        records, counts = statement_records(rows, args.per_label or None, args.seed)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"wrote {len(records)} dialogues to {out}: {json.dumps(counts)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    from _cli import run

    raise SystemExit(run(main))
