"""Average two DECODE utterance-based detectors' pair scores, with the weight and tau chosen on validation.

Each pair the two detectors both read (the first's readings decide which pairs exist, e.g. v10's skipped
questions) gets ``w * A + (1 - w) * B``; a dialogue is flagged when its largest averaged pair reaches tau. The
weight (0, 0.1, ..., 1) and tau are chosen on the held-out train dialogues `dialcheck train` calibrates on
(never a reported test set): tau per weight by the training rule (the highest tau within one standard error
of the best balanced accuracy), then the weight with the best balanced accuracy. The test splits are then
re-decided once from `dialcheck evaluate --predictions` files of the two detectors (no model re-run there).

    dialcheck evaluate --model decode-utterance-mpnet-v1 --predictions runs/mpnetv1-pred.jsonl
    dialcheck evaluate --model decode-utterance-minilm-v10 --predictions runs/v10-pred.jsonl
    python benchmarks/decode_average.py decode-utterance-mpnet-v1 decode-utterance-minilm-v10 \\
        runs/mpnetv1-pred.jsonl runs/v10-pred.jsonl --cache runs/avg --threads 2

The validation pair scores are cached under ``--cache`` (one JSONL per detector), so a second run reads them.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from decode_tau_sweep import read_predictions, redecide

from dialcheck.cli.common import nonnegative_int, unit_float
from dialcheck.datasets import load_dataset
from dialcheck.errors import InputError
from dialcheck.evaluation.decode import SPLITS, decode_metrics
from dialcheck.evaluation.metrics import balanced_accuracy, best_threshold

WEIGHTS = tuple(round(0.1 * i, 1) for i in range(11))
SHOWN = (("dev", "accuracy"), ("dev", "evidence_f1"), ("human_bot", "accuracy"), ("rct", "accuracy"))


def average(a: dict[str, float], b: dict[str, float], w: float) -> dict[str, float]:
    """``w * a + (1 - w) * b`` over the pairs both score, in ``b``'s order (``b`` is the one with readings).

    >>> average({"0": 0.9, "2": 0.1}, {"2": 0.5}, 0.5)
    {'2': 0.3}
    """
    return {k: round(w * a[k] + (1 - w) * b[k], 6) for k in b if k in a}


def validation_scores(model: str, cache: Path, threads: int) -> tuple[list[dict[str, float]], list[bool]]:
    """Pair scores of ``model`` on the validation dialogues, read from ``cache`` when present."""
    path = cache / (Path(model).name + "-validation.jsonl")
    if not path.exists():
        from dialcheck.api import load
        from dialcheck.cli.common import set_threads
        from dialcheck.training.data import build_decode_training_data

        set_threads(threads)
        dialogues = build_decode_training_data(augment=()).validation_dialogues
        verdicts = load(model).predict([e.dialogue for e in dialogues], batch_size=64)
        cache.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8") as f:
            for e, v in zip(dialogues, verdicts, strict=True):
                scores = {str(k): round(float(s), 6) for k, s in v.pair_scores.items()}
                f.write(json.dumps({"id": e.id, "gold": bool(e.label), "pair_scores": scores}) + "\n")
    rows = [json.loads(line) for line in path.open(encoding="utf-8")]
    return [r["pair_scores"] for r in rows], [r["gold"] for r in rows]


def choose(a: list[dict], b: list[dict], gold: list[bool]) -> list[tuple[float, float, float]]:
    """(weight, tau, validation balanced accuracy) for every weight, tau by the training rule."""
    out = []
    for w in WEIGHTS:
        scores = [max(average(x, y, w).values(), default=0.0) for x, y in zip(a, b, strict=True)]
        tau, bacc = best_threshold(scores, gold, balanced_accuracy, one_se=True)
        out.append((w, float(tau), float(bacc)))
    return out


def measure_tests(pred_a: Path, pred_b: Path, settings: list[tuple[float, float]], eta_e: float) -> list[dict]:
    def read(path: Path) -> dict[tuple[str, str], dict]:
        return {(split, r["id"]): r for split, rows in read_predictions([path]).items() for r in rows}

    ta, tb = read(pred_a), read(pred_b)
    splits = sorted({s for s, _ in tb if s in SPLITS})
    examples = {s: {e.id: e for e in load_dataset(SPLITS[s])} for s in splits}
    out = []
    for w, tau in settings:
        row: dict = {"weight": w, "tau": tau}
        for split in splits:
            keys = [k for k in tb if k[0] == split]
            verdicts = [
                redecide({"pair_scores": average(ta[k]["pair_scores"], tb[k]["pair_scores"], w)}, tau, eta_e)
                for k in keys
            ]
            metrics = decode_metrics(split, [examples[split][k[1]] for k in keys], verdicts)
            row.update({f"{split}/{m}": v for m, v in metrics.items()})
        out.append(row)
    return out


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model_a")
    p.add_argument("model_b", help="the detector whose readings (pairs) the average keeps")
    p.add_argument("pred_a", type=Path, help="dialcheck evaluate --predictions of A")
    p.add_argument("pred_b", type=Path, help="dialcheck evaluate --predictions of B")
    p.add_argument("--cache", type=Path, default=Path("runs/avg"))
    p.add_argument("--eta-e", type=unit_float, default=0.9)
    p.add_argument("--threads", type=nonnegative_int, default=2, help="torch threads (0 = torch's default)")
    args = p.parse_args(argv)
    a, gold = validation_scores(args.model_a, args.cache, args.threads)
    b, gold_b = validation_scores(args.model_b, args.cache, args.threads)
    if gold != gold_b:
        raise InputError("the two validation files do not hold the same dialogues")
    table = choose(a, b, gold)
    w, tau, _ = max(table, key=lambda r: (r[2], -abs(r[0] - 0.5)))
    print(f"validation ({len(gold)} dialogues): weight of A, tau, balanced accuracy")
    for row in table:
        print(f"  w={row[0]:.1f} tau={row[1]:.4f} bacc={row[2]:.4f}" + ("  <- chosen" if row[0] == w else ""))
    rows = measure_tests(args.pred_a, args.pred_b, [(w, tau), (1.0, table[-1][1]), (0.0, table[0][1])], args.eta_e)
    print("| setting | weight | tau | " + " | ".join(f"{s} {m}" for s, m in SHOWN) + " |")
    for name, row in zip(("chosen", "A alone", "B alone"), rows, strict=True):
        cells = " | ".join(f"{row.get(f'{s}/{m}', float('nan')):.2f}" for s, m in SHOWN)
        print(f"| {name} | {row['weight']:.1f} | {row['tau']:.4f} | {cells} |")


if __name__ == "__main__":
    from _cli import run

    run(main)
