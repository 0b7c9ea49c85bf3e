"""A pair check behind a four-category CDConv detector: would it catch what the detector misses?

The flat CDConv detectors read the whole conversation at once and learn CDConv's trigger patterns more than the
comparison of the bot's reply with what it said before. A pair classifier (e.g. one trained on OCNLI alone with
``dialcheck train --task ocnli``) reads only that comparison: the reply against each earlier bot turn, the
maximum as its score s_n (``dialcheck evaluate --benchmark decode``'s reading). Two ways to combine them:

- **or**: a conversation the detector leaves alone is a history contradiction when s_n >= tau_n;
- **or + veto**: also, a conversation the detector names history is cleared when s_n < tau_v.

The thresholds are chosen on one pair of files (the detector's predictions and the pair scores of a split the
detector did not train on) by a grid maximising 2-class accuracy; random halvings of that split estimate how the
choice holds on data it was not made on; the choice is then applied to other files, each with and without it.

    dialcheck evaluate --benchmark cdconv --splits dev --model M --predictions dev.jsonl
    python benchmarks/cdconv_pair_check.py score --model PAIRS --splits dev --out dev-pairs.jsonl
    python benchmarks/cdconv_pair_check.py choose dev.jsonl dev-pairs.jsonl --apply hand.jsonl hand-pairs.jsonl
"""

from __future__ import annotations

import argparse
import itertools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from _rows import cdconv_labels, halvings, parsed_rows

from dialcheck.cli.common import positive_int, unit_float
from dialcheck.errors import InputError
from dialcheck.evaluation.cdconv import cdconv_metrics

HISTORY = 3
TAU_N = (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.98, 0.99, 1.01)  # 1.01: never
TAU_V = (0.0, 0.01, 0.02, 0.05, 0.1, 0.2)  # 0: no veto


def read_predictions(path: Path) -> dict[tuple[str, str], tuple[int, int]]:
    """(split, id) -> (gold label id, predicted label id) from ``dialcheck evaluate --predictions``."""

    return dict(parsed_rows(path, lambda r: ((r["split"], r["id"]), cdconv_labels(r)), "a CDConv predictions row"))


def read_pair_scores(path: Path) -> dict[tuple[str, str], float]:
    """(split, id) -> s_n from this script's ``score`` output."""
    return dict(parsed_rows(path, lambda r: ((r["split"], r["id"]), float(r["score"])), "a pair-score row"))


def joined(pred_path: Path, pair_path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Gold ids, the detector's predicted ids, s_n and the split names of the detector's conversations."""
    preds, pairs = read_predictions(pred_path), read_pair_scores(pair_path)
    missing = [k for k in preds if k not in pairs]
    if missing:
        raise InputError(
            f"{pair_path}: no pair score for {len(missing)} of the rows of {pred_path} (e.g. {missing[0]})"
        )
    keys = list(preds)
    return (
        np.array([preds[k][0] for k in keys]),
        np.array([preds[k][1] for k in keys]),
        np.array([pairs[k] for k in keys]),
        np.array([k[0] for k in keys]),
    )


def combine(pred: np.ndarray, s_n: np.ndarray, tau_n: float, tau_v: float = 0.0) -> np.ndarray:
    """The detector's label ids with the pair check applied (see the module text).

    >>> combine(np.array([0, 0, 3, 3, 1]), np.array([0.97, 0.4, 0.01, 0.5, 0.0]), tau_n=0.9, tau_v=0.02)
    array([3, 0, 0, 3, 1])
    """
    out = np.where((pred == 0) & (s_n >= tau_n), HISTORY, pred)
    return np.where((pred == HISTORY) & (s_n < tau_v), 0, out)


def accuracy2(gold: np.ndarray, pred: np.ndarray) -> float:
    """2-class accuracy (percent): contradiction or not, whatever the category."""
    return cdconv_metrics(gold, pred)["2class/accuracy"]


def choose(gold: np.ndarray, pred: np.ndarray, s_n: np.ndarray, veto: bool) -> tuple[float, float]:
    """(tau_n, tau_v) with the highest 2-class accuracy; ties: the smaller tau_v, then the higher tau_n."""
    best_key, best = None, (1.01, 0.0)
    for tau_v, tau_n in itertools.product(TAU_V if veto else (0.0,), TAU_N):
        key = (accuracy2(gold, combine(pred, s_n, tau_n, tau_v)), -tau_v, tau_n)
        if best_key is None or key > best_key:
            best_key, best = key, (tau_n, tau_v)
    return best


def held_out_gains(gold: np.ndarray, pred: np.ndarray, s_n: np.ndarray, veto: bool, repeats: int = 20) -> list[float]:
    """2-class accuracy gain on one half when the thresholds are chosen on the other, both ways."""

    def gain(a: np.ndarray, b: np.ndarray) -> float:
        t = choose(gold[a], pred[a], s_n[a], veto)
        return accuracy2(gold[b], combine(pred[b], s_n[b], *t)) - accuracy2(gold[b], pred[b])

    return [gain(a, b) for a, b in halvings(len(gold), repeats)]


def hand_counts(gold: np.ndarray, pred: np.ndarray) -> tuple[int, int, int]:
    """(right on 2 classes, contradictions caught, false alarms)."""
    g, p = gold > 0, pred > 0
    return int((g == p).sum()), int((g & p).sum()), int((~g & p).sum())


def history_auc(gold: np.ndarray, s_n: np.ndarray) -> float:
    """ROC AUC (percent) of s_n for history contradictions against consistent replies (NaN without both)."""
    from dialcheck.evaluation.metrics import roc_auc

    keep = (gold == HISTORY) | (gold == 0)
    if len(set(gold[keep].tolist())) < 2:
        return float("nan")
    return 100 * roc_auc(gold[keep] == HISTORY, s_n[keep])


class WithQuestion:
    """A pair detector that reads the reply with the turn before it (the user's question) as one text."""

    def __init__(self, det: Any) -> None:
        self.det = det

    def predict(self, dialogues: Sequence[Any], batch_size: int = 64, show_progress_bar: bool = False) -> list:
        from dialcheck.schema import Dialogue, Turn

        read = []
        for d in dialogues:
            t = d.turns
            if len(t) >= 2 and t[-2].speaker != t[-1].speaker:
                d = Dialogue((*t[:-1], Turn(t[-1].speaker, t[-2].text + t[-1].text)), d.knowledge, d.meta)
            read.append(d)
        return self.det.predict(read, batch_size=batch_size, show_progress_bar=show_progress_bar)


def score(
    model: str, splits: Sequence[str], files: Sequence[str], out: Path, data_dir: str | None, question: bool = False
) -> None:
    """s_n for every conversation of ``splits`` and ``files``: the pair detector's score of the last turn
    (``question``: read together with the user's turn before it)."""
    from dialcheck.detectors import load_detector
    from dialcheck.evaluation.cdconv import CDConvEvaluator, example_label

    ev = CDConvEvaluator(list(splits) or None, data_dir, None, 64, files=list(files))
    det = load_detector(model)
    ev(WithQuestion(det) if question else det)
    with out.open("w", encoding="utf-8") as fh:
        for split, rows in ev.predictions.items():
            for e, v in rows:
                row = {"split": split, "id": e.id, "gold": example_label(e), "score": round(float(v.score), 6)}
                row["pair_scores"] = {str(k): round(float(s), 6) for k, s in v.pair_scores.items()}
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def table(files: Sequence[tuple[Path, tuple[np.ndarray, ...]]], t: tuple[float, float]) -> None:
    """Per file (its name and :func:`joined` rows) and split: the detector alone and with the pair check at ``t``,
    s_n's history AUC and what the check adds (replies it flags that the detector left alone, and how many of them
    contradict)."""
    print("| predictions | 2-class acc | with | 4-class mF1 | with | right/caught/FA | with | s_n AUC | added (true) |")
    print("|---|---:|---:|---:|---:|---|---|---:|---|")
    for p, (g_all, pr_all, sn_all, sp_all) in files:
        names = sorted(set(sp_all))
        groups = [(n, sp_all == n) for n in names] + ([("all", np.ones(len(sp_all), bool))] if len(names) > 1 else [])
        for name, mask in groups:
            g, pr, sn = g_all[mask], pr_all[mask], sn_all[mask]
            new = combine(pr, sn, *t)
            m0, m1 = cdconv_metrics(g, pr), cdconv_metrics(g, new)
            h0, h1 = hand_counts(g, pr), hand_counts(g, new)
            added = (pr == 0) & (new > 0)
            print(
                f"| {p}: {name} | {m0['2class/accuracy']:.2f} | {m1['2class/accuracy']:.2f} | "
                f"{m0['4class/macro_f1']:.2f} | {m1['4class/macro_f1']:.2f} | "
                f"{'/'.join(map(str, h0))} | {'/'.join(map(str, h1))} | {history_auc(g, sn):.1f} | "
                f"{int(added.sum())} ({int((added & (g > 0)).sum())}) |"
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("score", help="write s_n for CDConv splits and labelled files")
    s.add_argument("--model", required=True, help="a pair detector folder (e.g. from dialcheck train --task ocnli)")
    s.add_argument("--splits", default="", help="comma-separated CDConv splits (dev, test, ...)")
    s.add_argument("--data", action="append", default=[], help="labelled CDConv-style files (repeatable)")
    s.add_argument("--data-dir", default=None)
    s.add_argument("--with-question", action="store_true", help="read the reply together with the user's turn")
    s.add_argument("--out", type=Path, required=True)
    c = sub.add_parser("choose", help="choose the thresholds on one split and apply them to others")
    c.add_argument(
        "predictions", type=Path, help="dialcheck evaluate --predictions of a split the model did not train on"
    )
    c.add_argument("pairs", type=Path, help="this script's score output for the same split")
    c.add_argument("--apply", nargs=2, action="append", default=[], metavar=("PREDICTIONS", "PAIRS"))
    c.add_argument("--repeats", type=positive_int, default=20)
    c.add_argument("--at", type=unit_float, action="append", default=[], help="also show the check at this tau_n")
    args = ap.parse_args()
    if args.cmd == "score":
        splits = [x for x in args.splits.split(",") if x]
        score(args.model, splits, args.data, args.out, args.data_dir, args.with_question)
        return
    pairs = [(args.predictions, args.pairs), *[(Path(a), Path(b)) for a, b in args.apply]]
    files = [(p, joined(p, q)) for p, q in pairs]  # each file read once, for every table below
    gold, pred, s_n, _ = files[0][1]
    for veto in (False, True):
        t = choose(gold, pred, s_n, veto)
        gains = held_out_gains(gold, pred, s_n, veto, args.repeats)
        name = "or + veto" if veto else "or"
        print(f"\n{name}: tau_n {t[0]}, tau_v {t[1]}; held-out 2-class gain {np.mean(gains):+.2f}", end=" ")
        print(f"(std {np.std(gains):.2f})")
        table(files, t)
    for tau_n in args.at:
        print(f"\nor at tau_n {tau_n} (given, not chosen)")
        table(files, (tau_n, 0.0))


if __name__ == "__main__":
    from _cli import run

    run(main)
