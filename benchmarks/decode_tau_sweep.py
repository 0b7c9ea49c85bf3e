"""Sweep the decision threshold tau of a DECODE detector without re-running the model.

`dialcheck evaluate --predictions P.jsonl` stores every pair score; this script re-decides each dialogue
at several thresholds and recomputes the paper's metrics with the same code `dialcheck evaluate` uses.
It shows the trade-off a user buys with `dialcheck check --tau`: higher tau, fewer false alarms
(RCT up), fewer detections (human-bot recall down).

    dialcheck evaluate --model src/dialcheck/models/decode-utterance-minilm-v3 --predictions runs/p.jsonl
    python benchmarks/decode_tau_sweep.py runs/p.jsonl --taus 0.5,0.6,0.7,0.8,0.9 --markdown runs/sweep.md

Several prediction files (of the same splits) are an ensemble: each pair's score is the mean of the
files' scores for it, then the dialogue is decided as one detector would decide it.
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

from _cli import comma_list
from _rows import parsed_rows

from dialcheck.cli.common import unit_float
from dialcheck.datasets import load_dataset
from dialcheck.detectors.utterance import decide
from dialcheck.errors import InputError
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


def _keyed(record: dict) -> tuple[tuple[str, str], dict]:
    """``((split, id), record)`` of a predictions row, its pair scores read as numbers."""
    scores = {str(int(k)): float(v) for k, v in dict(record["pair_scores"]).items()}
    return (str(record["split"]), str(record["id"])), {**record, "pair_scores": scores}


def read_predictions(paths: list[Path]) -> dict[str, list[dict]]:
    """Records by split; with several files, each pair score is the mean over the files (an ensemble).

    >>> import json, tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> for name, s in (("a", 0.2), ("b", 0.6)):
    ...     _ = (d / name).write_text(json.dumps({"split": "dev", "id": "x", "pair_scores": {"0": s}}) + "\\n")
    >>> read_predictions([d / "a", d / "b"])["dev"][0]["pair_scores"]
    {'0': 0.4}
    """
    tables = []
    for path in paths:
        tables.append(dict(parsed_rows(path, _keyed, "a DECODE predictions row")))
    by_split: dict[str, list[dict]] = collections.defaultdict(list)
    for key, record in tables[0].items():
        missing = [str(p) for p, t in zip(paths, tables, strict=True) if key not in t]
        if missing:
            raise InputError(f"{missing[0]}: no prediction for {key[0]} {key[1]} (ensembles need the same splits)")
        scores = {
            t: sum(float(tab[key]["pair_scores"][t]) for tab in tables) / len(tables) for t in record["pair_scores"]
        }
        by_split[key[0]].append({**record, "pair_scores": scores})
    return by_split


def sweep(paths: list[Path], taus: list[float], eta_e: float | None) -> list[dict[str, float]]:
    by_split = read_predictions(paths)
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


unit_floats = comma_list(unit_float)  # an argparse type: comma-separated numbers in [0, 1], at least one


def score_band(text: str) -> tuple[float, float]:
    """An argparse type: LO,HI, two numbers in [0, 1] with LO at most HI."""
    band = unit_floats(text)
    if len(band) != 2 or band[0] > band[1]:
        raise argparse.ArgumentTypeError(f"expected LO,HI with LO at most HI, got {text!r}")
    return band[0], band[1]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument(
        "predictions",
        type=Path,
        nargs="+",
        help="JSONL written by dialcheck evaluate --predictions (several: ensemble)",
    )
    p.add_argument("--taus", type=unit_floats, default="0.5,0.6,0.7,0.8,0.9", help="comma-separated thresholds")
    p.add_argument("--eta-e", type=unit_float, default=None, help="evidence threshold (default: equal to tau)")
    p.add_argument("--markdown", type=Path, default=None)
    p.add_argument(
        "--band",
        type=score_band,
        default=None,
        metavar="LO,HI",
        help="also print the largest dialogue score and the share of dialogues scoring in [LO, HI] (a pile-up)",
    )
    args = p.parse_args(argv)
    if args.band:
        lo, hi = args.band
        by_split = read_predictions(args.predictions)
        scores = [max(r["pair_scores"].values(), default=r["score"]) for rs in by_split.values() for r in rs]
        inside = sum(lo <= s <= hi for s in scores)
        share = f"{inside} ({inside / len(scores):.1%})"
        print(f"{len(scores)} dialogues; max score {max(scores):.6f}; in [{lo}, {hi}]: {share}")
    rows = sweep(args.predictions, args.taus, args.eta_e)
    table = to_markdown(rows)
    sys.stdout.write(table)
    if args.markdown:
        args.markdown.write_text(table, encoding="utf-8")
    return 0


if __name__ == "__main__":
    from _cli import run

    raise SystemExit(run(main))
