"""Does averaging two CDConv detectors help? ``w * P_A + (1 - w) * P_B`` over the four category
probabilities, with ``w`` and the threshold ``tau`` chosen on dev by the lexical head's rule
(:func:`dialcheck.training.cdconv.choose_mix`: best mean of 2-class accuracy and 4-class macro-F1, the
smallest ``w`` within one standard error), then measured once on test. Reads the ``--predictions`` files
of ``dialcheck evaluate --benchmark cdconv --splits dev,test`` (both splits in one file, or
``--test-a``/``--test-b`` for test rows kept elsewhere); nothing is re-run.

    dialcheck evaluate --benchmark cdconv --splits dev,test --model src/dialcheck/models/cdconv-flat-zh-v2 \\
        --predictions runs/ens/v2-pred.jsonl
    dialcheck evaluate --benchmark cdconv --splits dev,test --model runs/zh-gemma-flat2 \\
        --predictions runs/ens/gflat2-pred.jsonl
    python benchmarks/cdconv_ensemble.py runs/ens/gflat2-pred.jsonl runs/ens/v2-pred.jsonl
    python benchmarks/cdconv_ensemble.py seed0-pred.jsonl seed1-pred.jsonl --weight 0.5   # two seeds, equal weights
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from _rows import cdconv_gold, parsed_rows

from dialcheck.cli.common import unit_float
from dialcheck.datasets.cdconv import CATEGORIES
from dialcheck.errors import InputError
from dialcheck.evaluation.cdconv import cdconv_metrics
from dialcheck.training.cdconv import MIX_GRID, TAU_GRID, choose_mix, grid_scores

SHOWN = ("2class/accuracy", "4class/macro_f1", "4class/accuracy", *(f"f1/{c}" for c in CATEGORIES))


def load(path: Path, split: str) -> tuple[list[str], np.ndarray, list[int]]:
    """Ids, probabilities (columns: none, intra, role, history) and gold labels of one split, by id."""

    def parse(r: dict) -> tuple[str, list[float], int] | None:
        if r["split"] != split:
            return None
        return str(r["id"]), [float(r["label_scores"][c]) for c in CATEGORIES], cdconv_gold(r)

    rows = sorted(r for r in parsed_rows(path, parse, "a CDConv predictions row") if r is not None)
    if not rows:
        raise InputError(f"{path}: no {split} rows (evaluate with --splits dev,test --predictions)")
    cats = np.array([r[1] for r in rows])
    probs = np.column_stack([1.0 - cats.sum(1), cats])
    return [r[0] for r in rows], probs, [r[2] for r in rows]


def decide(probs: np.ndarray, tau: float) -> np.ndarray:
    """CategoryDetector's rule: contradiction when 1 - P(none) >= tau, then the likeliest category.

    >>> decide(np.array([[0.7, 0.1, 0.0, 0.2], [0.4, 0.1, 0.4, 0.1]]), 0.5).tolist()
    [0, 2]
    """
    return np.where(1.0 - probs[:, 0] >= tau, 1 + probs[:, 1:].argmax(1), 0)


def paired(a: Path, b: Path, split: str) -> tuple[np.ndarray, np.ndarray, list[int]]:
    ids_a, pa, gold = load(a, split)
    ids_b, pb, gold_b = load(b, split)
    if ids_a != ids_b or gold != gold_b:
        raise InputError(f"{a} and {b} do not hold the same {split} examples")
    return pa, pb, gold


def mix_weight(text: str) -> float:
    """An argparse type: a weight of A on the grid the mix is chosen on (0, 0.1, ..., 1).

    >>> mix_weight("0.5")
    0.5
    """
    w = unit_float(text)
    if w not in MIX_GRID:
        raise argparse.ArgumentTypeError(f"must be one of {', '.join(map(str, MIX_GRID))}, got {w:g}")
    return w


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("a", type=Path, help="predictions of detector A (dev rows, and test rows unless --test-a)")
    p.add_argument("b", type=Path, help="predictions of detector B")
    p.add_argument("--test-a", type=Path, default=None)
    p.add_argument("--test-b", type=Path, default=None)
    p.add_argument(
        "--weight",
        type=mix_weight,
        default=None,
        help="fix the weight of A (e.g. 0.5 for two seeds of one recipe) and choose only tau on dev "
        "(default: choose both by the lexical head's rule, which prefers B)",
    )
    args = p.parse_args(argv)
    pa, pb, gold = paired(args.a, args.b, "dev")
    scores = grid_scores(gold, lambda w, tau: decide(w * pa + (1 - w) * pb, tau))
    chosen, _top, se = choose_mix(scores, len(gold))
    best_tau = {w: max(TAU_GRID, key=lambda t, w=w: scores[(w, t)][0]) for w in MIX_GRID}
    if args.weight is not None:
        chosen = (args.weight, max(TAU_GRID, key=lambda t: (scores[(args.weight, t)][0], -abs(t - 0.5))))
    print(f"dev ({len(gold)}): weight of A, best tau, mean, 2-class acc, 4-class macro-F1 (one SE {se:.2f})")
    for w, tau in best_tau.items():
        mark = " <- chosen" if (w, tau) == chosen else ""
        print(f"  w={w:.1f} tau={tau:.2f}: {scores[(w, tau)]}{mark}")
    ta, tb, tgold = paired(args.test_a or args.a, args.test_b or args.b, "test")
    print(f"test ({len(tgold)}):")
    for name, (w, tau) in (("chosen", chosen), ("A alone", (1.0, best_tau[1.0])), ("B alone", (0.0, best_tau[0.0]))):
        m = cdconv_metrics(tgold, decide(w * ta + (1 - w) * tb, tau))
        print(f"  {name} (w={w:.1f}, tau={tau:.2f}): " + ", ".join(f"{k} {m[k]:.2f}" for k in SHOWN))


if __name__ == "__main__":
    from _cli import run

    run(main)
