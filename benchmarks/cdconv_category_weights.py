"""Would weighting the three contradiction categories help the flat CDConv detector name the right one?

The flat detector flags a conversation when P(any contradiction) >= tau and names the category with the
largest probability. A weight per category on those probabilities (history fixed at 1) changes only the
category named, never the 2-class decision. This script chooses the weights on one predictions file (the dev
split of a detector that did not train on dev) by a grid, estimates how well the choice holds on data it was
not chosen on (random halvings of that file: choose on one half, measure on the other), and applies the
chosen weights to other predictions files (hand-written sets, test), each line with and without them.

    dialcheck evaluate --benchmark cdconv --splits dev --model M --predictions dev.jsonl
    python benchmarks/cdconv_category_weights.py dev.jsonl --apply hand.jsonl test.jsonl
"""

from __future__ import annotations

import argparse
import itertools
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from _rows import cdconv_gold, halvings, parsed_rows

from dialcheck.cli.common import positive_int
from dialcheck.evaluation.cdconv import cdconv_metrics

CATEGORIES = ("intra_sentence", "role_confusion", "history")
GRID = (0.5, 0.7, 1.0, 1.4, 2.0, 2.8, 4.0)
NONE = (1.0, 1.0, 1.0)


def read(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gold label ids 0-3, the 2-class decisions and the three category probabilities of a predictions file."""

    def parse(r: dict) -> tuple[int, bool, list[float]]:
        return cdconv_gold(r), bool(r["contradiction"]), [float(r["label_scores"][c]) for c in CATEGORIES]

    rows = parsed_rows(path, parse, "a CDConv predictions row")
    return np.array([r[0] for r in rows]), np.array([r[1] for r in rows]), np.array([r[2] for r in rows])


def predict(flag: np.ndarray, probs: np.ndarray, weights: Sequence[float]) -> np.ndarray:
    """Label ids: 0 where not flagged, else 1 + the index of the largest weighted category probability.

    >>> predict(np.array([True, True, False]), np.array([[.1, .2, .3], [.05, .2, .3], [.9, 0, 0]]), (4, 1, 1))
    array([1, 3, 0])
    """
    return np.where(flag, 1 + np.argmax(probs * np.asarray(weights, dtype=float), axis=1), 0)


def macro_f1(gold: np.ndarray, flag: np.ndarray, probs: np.ndarray, weights: Sequence[float]) -> float:
    """4-class macro-F1 (percent) of the weighted decisions."""
    return cdconv_metrics(gold, predict(flag, probs, weights))["4class/macro_f1"]


def choose(gold: np.ndarray, flag: np.ndarray, probs: np.ndarray) -> tuple[float, float, float]:
    """The grid's (intra, role, 1.0) with the highest 4-class macro-F1; ties go to the weights nearest 1."""
    best_key, best = None, NONE
    for wi, wr in itertools.product(GRID, GRID):
        w = (wi, wr, 1.0)
        key = (macro_f1(gold, flag, probs, w), -(abs(math.log(wi)) + abs(math.log(wr))))
        if best_key is None or key > best_key:
            best_key, best = key, w
    return best


def held_out_gains(gold: np.ndarray, flag: np.ndarray, probs: np.ndarray, repeats: int = 20) -> list[float]:
    """Macro-F1 gain on one half when the weights are chosen on the other, both ways, over seeded halvings."""

    def gain(a: np.ndarray, b: np.ndarray) -> float:
        w = choose(gold[a], flag[a], probs[a])
        return macro_f1(gold[b], flag[b], probs[b], w) - macro_f1(gold[b], flag[b], probs[b], NONE)

    return [gain(a, b) for a, b in halvings(len(gold), repeats)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("choose_on", type=Path, help="predictions to choose the weights on (a held-out dev split)")
    ap.add_argument("--apply", nargs="*", type=Path, default=[], help="predictions files to apply them to")
    ap.add_argument("--repeats", type=positive_int, default=20, help="random halvings for the held-out estimate")
    args = ap.parse_args()
    gold, flag, probs = read(args.choose_on)
    w = choose(gold, flag, probs)
    gains = held_out_gains(gold, flag, probs, args.repeats)
    print(f"weights (intra, role, history): {w}")
    print(f"held-out gain over {len(gains)} halves: {np.mean(gains):+.2f} (std {np.std(gains):.2f})")
    print("| predictions | 4-class macro-F1 without | with | F1 intra / role / history without | with |")
    print("|---|---:|---:|---|---|")
    for path in [args.choose_on, *args.apply]:
        g, f, p = read(path)
        m0, m1 = (cdconv_metrics(g, predict(f, p, x)) for x in (NONE, w))
        per = ["{:.2f} / {:.2f} / {:.2f}".format(*(m[f"f1/{c}"] for c in CATEGORIES)) for m in (m0, m1)]
        print(f"| {path} | {m0['4class/macro_f1']:.2f} | {m1['4class/macro_f1']:.2f} | {per[0]} | {per[1]} |")


if __name__ == "__main__":
    from _cli import run

    run(main)
