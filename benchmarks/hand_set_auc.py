"""Does a detector rank a hand-written set's contradictions above its consistent conversations? For each
predictions file that ``dialcheck evaluate --predictions`` wrote, the ROC AUC of the scores (gold
contradiction against none) over the rows whose id starts with a prefix: a threshold-free view of a small
set, where accuracy moves with τ. 0.5 is chance; below it the model ranks the consistent ones higher.

    dialcheck evaluate --benchmark cdconv --data benchmarks/data/cdconv_hand_d.jsonl --predictions d.jsonl
    python benchmarks/hand_set_auc.py d.jsonl --prefix handd-
"""

from __future__ import annotations

import argparse
from pathlib import Path

from _rows import parsed_rows

from dialcheck.errors import InputError
from dialcheck.evaluation.metrics import roc_auc


def set_auc(path: Path, prefix: str = "") -> tuple[float, int, int]:
    """ROC AUC and the numbers of contradictions and consistent rows read from one predictions file."""

    def parse(row: dict) -> tuple[bool, float] | None:
        return (bool(row["gold"]), float(row["score"])) if str(row.get("id", "")).startswith(prefix) else None

    rows = [r for r in parsed_rows(path, parse, "a predictions row") if r is not None]
    gold, scores = [g for g, _ in rows], [s for _, s in rows]
    n_pos = sum(gold)
    if not n_pos or n_pos == len(gold):
        raise InputError(f"{path}: needs contradictions and consistent rows with ids starting {prefix!r}")
    return roc_auc(gold, scores), n_pos, len(gold) - n_pos


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("predictions", nargs="+", type=Path, help="files from dialcheck evaluate --predictions")
    ap.add_argument("--prefix", default="", help="only rows whose id starts with this (e.g. handd-)")
    args = ap.parse_args()
    print("| predictions | contradictions | consistent | ROC AUC |\n|---|---:|---:|---:|")
    for p in args.predictions:
        auc, pos, neg = set_auc(p, args.prefix)
        print(f"| {p} | {pos} | {neg} | {auc:.3f} |")


if __name__ == "__main__":
    from _cli import run

    run(main)
