"""What ``questions="skip"`` does to a detector's DECODE accuracies, from its saved pair scores (no model run).

The reading only removes pairs (earlier turns that only ask, ``dialcheck.detectors.utterance.asks_only``), so
the new dialogue score is the highest remaining pair score of an ``evaluate --predictions`` file, and the
verdict compares it with the model's τ: exact for an utterance-based detector read forwards.

    python benchmarks/questions_from_predictions.py runs/mpnet1600-all-pred.jsonl --tau 0.6883
"""

from __future__ import annotations

import argparse
from pathlib import Path

from decode_tau_sweep import read_predictions


def main(argv: list[str] | None = None) -> int:
    from dialcheck.cli.common import unit_float

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("predictions", help="JSONL written by dialcheck evaluate --predictions")
    ap.add_argument("--tau", type=unit_float, required=True, help="the model's decision threshold")
    ap.add_argument("--data-dir", default=None)
    args = ap.parse_args(argv)
    from dialcheck.datasets import decode
    from dialcheck.datasets.base import data_dir
    from dialcheck.detectors.utterance import asks_only

    loaders = {"human_bot": decode.load_human_bot, "rct": decode.load_rct, "dev": decode.load_dev}
    by_split = read_predictions([Path(args.predictions)])
    root = data_dir(args.data_dir)
    print("| split | dialogues | accuracy, every pair | accuracy, questions skipped |")
    print("|---|---:|---:|---:|")
    for split, load in loaders.items():
        rows = by_split.get(split, [])
        if not rows:
            continue
        examples = {e.id: e for e in load(root)}
        before = after = 0
        for p in rows:
            e = examples[p["id"]]
            kept = [s for i, s in p["pair_scores"].items() if not asks_only(e.dialogue.turns[int(i)].text)]
            before += p["contradiction"] == bool(e.label)
            after += (max(kept, default=0.0) >= args.tau) == bool(e.label)
        print(f"| {split} | {len(rows)} | {100 * before / len(rows):.2f} | {100 * after / len(rows):.2f} |")
    return 0


if __name__ == "__main__":
    from _cli import run

    raise SystemExit(run(main))
