"""Does a detector flag a speaker who merely repeats or restates themself?

DECODE's non-contradicting pairs are mostly off-topic turns, so a detector can learn "same topic =
contradiction". This probe measures that failure on data no shipped model was trained on, for several
models side by side in one run:

- ``hand``: `benchmarks/data/restatements.jsonl`, 30 hand-written same-speaker restatements
  (consistent, label 0) and the 30 matching contradictions (label 1) of the same first turns, written
  before any model was scored on them. Reported: false-alarm rate on restatements, recall on
  contradictions, balanced accuracy, each at the model's own tau.
- ``repeat``: every distinct bot utterance of DECODE human-bot (a test split) paired with itself.
- ``part``: each multi-sentence human-bot bot utterance paired with one of its own sentences (seeded).

    python benchmarks/restatement_probe.py --models default,runs/e4_restate --markdown runs/probe.md
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

from _rows import parsed_rows

import dialcheck
from dialcheck.cli.common import positive_int
from dialcheck.datasets import load_dataset
from dialcheck.io import parse_dialogue
from dialcheck.language import SENTENCE_END

HERE = Path(__file__).resolve().parent


def hand_set(path: Path) -> tuple[list, list[int]]:
    rows = parsed_rows(path, lambda r: (parse_dialogue(r), int(r["label"])), "a labelled dialogue")
    return [d for d, _ in rows], [label for _, label in rows]


def bot_utterances(data_dir: str | None) -> list[str]:
    seen: dict[str, None] = {}
    for ex in load_dataset("decode.human_bot.v1", data_dir):
        last = ex.dialogue.turns[-1]
        for t in ex.dialogue.turns:
            if t.speaker == last.speaker and len(t.text.split()) >= 3:
                seen.setdefault(t.text, None)
    return list(seen)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="default", help="comma-separated model folders ('default' = shipped)")
    ap.add_argument("--data", type=Path, default=HERE / "data" / "restatements.jsonl")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--limit", type=positive_int, default=1000, help="human-bot utterances to use (seeded sample)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--markdown", type=Path, default=None)
    args = ap.parse_args(argv)

    dialogues, labels = hand_set(args.data)
    rng = random.Random(args.seed)
    utts = bot_utterances(args.data_dir)
    rng.shuffle(utts)
    utts = utts[: args.limit]
    repeat = [(u, u) for u in utts]
    part = []
    for u in utts:
        sents = [s for s in SENTENCE_END.split(u) if len(s.split()) >= 3]
        if len(sents) >= 2:
            part.append((u, rng.choice(sents)))

    rows = []
    for name in args.models.split(","):
        det = dialcheck.load(None if name == "default" else name)
        verdicts = det.predict(dialogues)
        flags = [int(v.contradiction) for v in verdicts]
        neg = [f for f, y in zip(flags, labels, strict=True) if y == 0]
        pos = [f for f, y in zip(flags, labels, strict=True) if y == 1]
        fa, rec = sum(neg) / len(neg), sum(pos) / len(pos)
        rep = [float(s) >= det.tau for s in det.classifier.score(repeat)]
        prt = [float(s) >= det.tau for s in det.classifier.score(part)] if part else []
        rows.append((name, det.tau, fa, rec, (1 - fa + rec) / 2, sum(rep) / len(rep), sum(prt) / max(1, len(prt))))
        print(f"{name}: done", file=sys.stderr)

    head = (
        f"| model | τ | hand: false alarms on {labels.count(0)} restatements | hand: recall on {labels.count(1)} "
        f"contradictions | hand: balanced acc | repeat: flagged ({len(repeat)}) | part: flagged ({len(part)}) |"
    )
    lines = [head, "|" + "---|" * 7]
    for name, tau, fa, rec, bal, rep, prt in rows:
        lines.append(f"| {name} | {tau:.3f} | {fa:.3f} | {rec:.3f} | {bal:.3f} | {rep:.3f} | {prt:.3f} |")
    emit_table(lines, args.markdown)
    return 0


def emit_table(lines: list[str], markdown: Path | None) -> None:
    """Print a Markdown table and, with ``markdown``, write it there too."""
    text = "\n".join(lines)
    print(text)
    if markdown:
        markdown.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    from _cli import run

    raise SystemExit(run(main))
