"""Sweep the decision threshold tau of a DECODE detector without re-running the model.

`dialcheck evaluate --predictions P.jsonl` stores every pair score; this script re-decides each dialogue
at several thresholds and recomputes the paper's metrics with the same code `dialcheck evaluate` uses.
It shows the trade-off a user buys with `dialcheck check --tau`: higher tau, fewer false alarms
(RCT up), fewer detections (human-bot recall down).

    dialcheck evaluate --model src/dialcheck/models/decode-utterance-minilm-v3 --predictions runs/p.jsonl
    python benchmarks/decode_tau_sweep.py runs/p.jsonl --taus 0.5,0.6,0.7,0.8,0.9 --markdown runs/sweep.md
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

from dialcheck.datasets import load_dataset
from dialcheck.detectors.utterance import decide
from dialcheck.evaluation.decode import SPLITS, decode_metrics
from dialcheck.schema import Verdict

COLUMNS = (
    ("dev", "accuracy", "dev acc"),
    ("dev", "strict_accuracy", "dev strict"),
    ("dev", "evidence_f1", "SE F1"),
    ("dev", "evidence_f1_per_example", "SE F1 per contradiction"),
    ("human_bot", "accuracy", "human-bot"),
    ("a2t", "accuracy", "A2T"),
    ("rct", "accuracy", "RCT"),
    ("human_bot_raw", "precision", "raw P"),
    ("human_bot_raw", "recall", "raw R"),
    ("human_bot_raw", "f1", "raw F1"),
)


def redecide(record: dict, tau: float, eta_e: float) -> Verdict:
    """The verdict the utterance-based detector gives at thresholds ``tau`` / ``eta_e``."""
    return decide({int(k): float(v) for k, v in record["pair_scores"].items()}, tau, eta_e)


def sweep(path: Path, taus: list[float], eta_e: float | None) -> list[dict[str, float]]:
    by_split: dict[str, list[dict]] = collections.defaultdict(list)
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                record = json.loads(line)
                by_split[record["split"]].append(record)
    examples = {s: {e.id: e for e in load_dataset(SPLITS[s])} for s in by_split}
    rows = []
    for tau in taus:
        row: dict[str, float] = {"tau": tau}
        for split, records in by_split.items():
            exs = [examples[split][r["id"]] for r in records]
            verdicts = [redecide(r, tau, tau if eta_e is None else eta_e) for r in records]
            for key, value in decode_metrics(split, exs, verdicts).items():
                row[f"{split}/{key}"] = value
        rows.append(row)
    return rows


def to_markdown(rows: list[dict[str, float]]) -> str:
    cols = [c for c in COLUMNS if any(f"{c[0]}/{c[1]}" in r for r in rows)]
    lines = ["| tau | " + " | ".join(c[2] for c in cols) + " |", "|---:|" + "---:|" * len(cols)]
    for r in rows:
        cells = [f"{r[f'{s}/{k}']:.2f}" if f"{s}/{k}" in r else "–" for s, k, _ in cols]
        lines.append(f"| {r['tau']:.2f} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("predictions", type=Path, help="JSONL written by dialcheck evaluate --predictions")
    p.add_argument("--taus", default="0.5,0.6,0.7,0.8,0.9")
    p.add_argument("--eta-e", type=float, default=None, help="evidence threshold (default: equal to tau)")
    p.add_argument("--markdown", type=Path, default=None)
    p.add_argument(
        "--band",
        default=None,
        metavar="LO,HI",
        help="also print the largest dialogue score and the share of dialogues scoring in [LO, HI] (a pile-up)",
    )
    args = p.parse_args(argv)
    if args.band:
        lo, hi = (float(x) for x in args.band.split(","))
        scores = [json.loads(x)["score"] for x in args.predictions.read_text(encoding="utf-8").splitlines() if x]
        inside = sum(lo <= s <= hi for s in scores)
        share = f"{inside} ({inside / len(scores):.1%})"
        print(f"{len(scores)} dialogues; max score {max(scores):.6f}; in [{lo}, {hi}]: {share}")
    rows = sweep(args.predictions, [float(t) for t in args.taus.split(",")], args.eta_e)
    table = to_markdown(rows)
    sys.stdout.write(table)
    if args.markdown:
        args.markdown.write_text(table, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
