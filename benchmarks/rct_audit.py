"""Does RCT still contain contradictions? A read of 200 RCT dialogues, and each model scored against it.

DECODE's RCT set removes the turns the annotators named as evidence and labels every dialogue "no
contradiction". Writers named the turns their last utterance was written against; when the last turn also
takes back another turn of its speaker, that contradiction stays, and a detector that finds it counts as
a false alarm. ``benchmarks/data/rct_audit.jsonl`` holds one reader's judgement of a seeded random sample of
200 RCT dialogues (the first 200 draws of ``random.Random(47).sample`` of the set's indices; ``draw`` is the
position), made from the dialogues alone (``--show``), before any model's score on them was looked at (draws
100-199 were read after draws 0-99 had been scored): ``contradiction`` (the last turn takes back
an earlier turn of its own speaker that is still there, the ``why`` field quotes both), ``consistent``, or
``unclear`` (a change of attitude or an implication rather than a statement taken back).

For each model the script reports how often it flags each judgement, its RCT accuracy on the sample with
the official labels (all "no contradiction"), and its accuracy against the audit (unclear dialogues left
out), beside the share of the sample a perfect detector would have to flag.

    python benchmarks/rct_audit.py --models default,decode-utterance-mpnet-v1 --threads 2 --markdown runs/rct_audit.md
    python benchmarks/rct_audit.py --show 0 25      # print draws 0-24 to judge them, no scores
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from _output import emit

import dialcheck
from dialcheck.cli.common import nonnegative_int, positive_int
from dialcheck.datasets import load_dataset
from dialcheck.errors import InputError
from dialcheck.schema import Example

HERE = Path(__file__).resolve().parent
AUDIT = HERE / "data" / "rct_audit.jsonl"
SEED, SIZE = 47, 200
JUDGEMENTS = ("consistent", "contradiction", "unclear")


def sample(examples: list[Example], seed: int = SEED, size: int = SIZE) -> list[Example]:
    """The audited sample, in draw order: ``random.Random(seed).sample`` of the set's indices (a larger
    ``size`` extends a smaller one, so an audit can grow without changing what was judged)."""
    return [examples[i] for i in random.Random(seed).sample(range(len(examples)), size)]


def _records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, record)`` of the audit file; a judgement it does not know names its line."""
    from dialcheck.datasets.base import read_jsonl
    from dialcheck.io import require_file

    for line_no, rec in read_jsonl(require_file(path)):  # a bad line: an InputError naming it
        for key in ("id", "judgement"):
            if key not in rec:
                raise InputError(f"{key}: missing", str(path), line_no)
        if rec["judgement"] not in JUDGEMENTS:
            raise InputError(f"judgement: {rec['judgement']!r} is not one of {JUDGEMENTS}", str(path), line_no)
        yield line_no, rec


def judgements(path: Path = AUDIT) -> dict[str, str]:
    """The audit's judgement of each dialogue, by RCT record id."""
    return {rec["id"]: rec["judgement"] for _, rec in _records(path)}


def read_audit(path: Path, drawn: list[Example]) -> list[str]:
    """The judgement of each drawn dialogue, read by id; every drawn dialogue judged once, nothing else."""
    position = {ex.id: k for k, ex in enumerate(drawn)}
    judged: dict[int, str] = {}
    for line_no, rec in _records(path):
        k = position.get(rec["id"])
        if k is None or k in judged or rec.get("draw") != k:
            raise InputError(f"id: {rec['id']} is not draw {rec.get('draw')} of this RCT file", str(path), line_no)
        judged[k] = rec["judgement"]
    if len(judged) != len(drawn):
        raise InputError(f"{path}: {len(judged)} judgements for {len(drawn)} sampled dialogues")
    return [judged[k] for k in range(len(drawn))]


def against_audit(judged: dict[str, str], predictions: Iterable[tuple[Example, Any]]) -> dict[str, Any]:
    """A model's RCT verdicts (``(example, verdict)`` pairs) met with the audit (``{id: judgement}``): per
    judgement how many audited dialogues it read (``n/...``) and flagged (``flagged/...``), and its accuracy
    against the audit in % with the unclear ones left out (None when it read no judged dialogue)."""
    out: dict[str, Any] = {f"{k}/{j}": 0 for k in ("n", "flagged") for j in JUDGEMENTS}
    right = decided = 0
    for ex, verdict in predictions:
        j = judged.get(ex.id)
        if j is None:
            continue
        out[f"n/{j}"] += 1
        out[f"flagged/{j}"] += int(verdict.contradiction)
        if j != "unclear":
            decided += 1
            right += int(verdict.contradiction == (j == "contradiction"))
    out["accuracy"] = round(100 * right / decided, 2) if decided else None
    return out


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson interval of a proportion k/n.

    >>> [round(x, 3) for x in wilson(24, 100)]
    [0.167, 0.332]
    """
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (centre - half, centre + half)


def show(drawn: list[Example], lo: int, hi: int) -> None:
    """Print draws ``lo``..``hi - 1`` (the checked turn's speaker marked ``*``), without any score."""
    for k in range(lo, min(hi, len(drawn))):
        d = drawn[k].dialogue
        print(f"#{k} {drawn[k].id[:8]}")
        for t in d.turns:
            print(f" {'*' if t.speaker == d.turns[-1].speaker else ' '}{t.text}")


def score(models: list[str], drawn: list[Example], judged: list[str]) -> tuple[list[str], dict]:
    counts = {j: judged.count(j) for j in JUDGEMENTS}
    n = len(judged)
    lo, hi = wilson(counts["contradiction"], n)
    lines = [
        f"Sample: {n} RCT dialogues; judged contradiction {counts['contradiction']} "
        f"({100 * lo:.0f}-{100 * hi:.0f}% of RCT, 95% Wilson), unclear {counts['unclear']}, "
        f"consistent {counts['consistent']}. A detector that flags exactly the judged contradictions scores "
        f"{100 * (1 - counts['contradiction'] / n):.0f}% on this sample against the official labels "
        f"({100 * (counts['consistent'] / n):.0f}% if it also flags the unclear ones).",
        "",
        "| model | τ | flags consistent | flags contradiction | flags unclear | official RCT acc. (sample) "
        "| acc. against the audit (unclear left out) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    results: dict = {"counts": counts, "models": {}}
    by_id = {ex.id: j for ex, j in zip(drawn, judged, strict=True)}
    for model in models:
        det = dialcheck.load(None if model == "default" else model)
        verdicts = det.predict([ex.dialogue for ex in drawn])
        met = against_audit(by_id, zip(drawn, verdicts, strict=True))
        by = {j: met[f"flagged/{j}"] for j in JUDGEMENTS}
        official = 100 * (1 - sum(by.values()) / n)
        results["models"][model] = {"tau": det.tau, "flagged": by, "official": official, "audit": met["accuracy"]}
        lines.append(
            f"| {model} | {det.tau:.3f} | {by['consistent']}/{counts['consistent']} | "
            f"{by['contradiction']}/{counts['contradiction']} | {by['unclear']}/{counts['unclear']} | "
            f"{official:.0f} | {met['accuracy']:.1f} |"
        )
        print(lines[-1], file=sys.stderr, flush=True)
    return lines, results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="default", help="comma-separated model folders ('default' = shipped)")
    ap.add_argument("--audit", type=Path, default=AUDIT)
    ap.add_argument("--data-dir", default=None)
    ap.add_argument(
        "--show", nargs=2, type=nonnegative_int, metavar=("FROM", "TO"), help="print draws FROM..TO-1, no scores"
    )
    ap.add_argument("--threads", type=positive_int, default=None, help="torch threads (default: torch's)")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--markdown", type=Path, default=None)
    args = ap.parse_args(argv)
    if args.show and args.show[0] >= args.show[1]:
        ap.error(f"argument --show: FROM must be below TO, got {args.show[0]} {args.show[1]}")
    drawn = sample(load_dataset("decode.rct.v1", args.data_dir))
    if args.show:
        show(drawn, *args.show)
        return 0
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    lines, results = score(args.models.split(","), drawn, read_audit(args.audit, drawn))
    emit("\n".join(lines), results, args.markdown, args.json)
    return 0


if __name__ == "__main__":
    from _cli import run

    raise SystemExit(run(main))
