"""How steady is the τ the training rule chooses? The rule resampled over the validation dialogues.

The training rule (:func:`dialcheck.evaluation.metrics.best_threshold` with ``one_se=True``: the highest threshold
within one standard error of the best balanced accuracy) is what ``dialcheck models NAME --save OUT --recalibrate``
applies to a model's own verdicts. On a flat validation curve it can land far from the best τ, and small score
changes move it (session 75: 0.782 on 8-bit int8 scores, 0.689 on 7-bit ones). This script scores the validation
dialogues once with the model as :func:`dialcheck.load` runs it (``DIALCHECK_INT8_RANGE`` picks the int8 range),
then applies the rule to ``--n-boot`` bootstrap resamples of them (seeded), and reports the τ chosen on all of them
and the spread of the resampled choices, with the share that lands at or above each ``--at`` value:

    python benchmarks/tau_stability.py --model decode-cascade-v9 --at 0.70,0.75 --threads 2
    DIALCHECK_INT8_RANGE=reduced python benchmarks/tau_stability.py --model decode-cascade-v9 --threads 2

``--calibrate-on FILE`` reads labelled dialogues instead of DECODE's held-out train groups (the trainer's own
validation split: fraction 0.08, seed 0).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from _output import emit

from dialcheck.evaluation.metrics import balanced_accuracy, best_threshold


def resampled_taus(scores: np.ndarray, labels: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """The training rule's τ on ``n_boot`` bootstrap resamples of (scores, labels), seeded.

    Resamples that hold one label only are skipped (no balanced accuracy).
    """
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_boot):
        i = rng.integers(0, len(scores), len(scores))
        if labels[i].all() or not labels[i].any():
            continue  # one label only: no balanced accuracy
        out.append(best_threshold(scores[i], labels[i], balanced_accuracy, one_se=True)[0])
    return np.array(out)


def main(argv: list[str] | None = None) -> int:
    from decode_tau_sweep import unit_floats

    from dialcheck.cli.common import nonnegative_int, positive_int, seed_number

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="default", help="detector name or folder (default: the shipped English one)")
    ap.add_argument("--calibrate-on", default=None, help="labelled dialogues (default: DECODE's held-out train groups)")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--n-boot", type=positive_int, default=200)
    ap.add_argument("--seed", type=seed_number, default=0)
    ap.add_argument(
        "--at", type=unit_floats, default="0.70,0.75", help="report the share of resampled τ at or above each value"
    )
    ap.add_argument("--threads", type=nonnegative_int, default=2, help="torch threads (0 = torch's default)")
    ap.add_argument("--markdown", type=Path, default=None)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)

    import dialcheck
    from dialcheck.cli.common import set_threads
    from dialcheck.detectors.onnx import int8_range
    from dialcheck.training.recalibrate import calibration_dialogues

    set_threads(args.threads)
    examples, _ = calibration_dialogues(args.calibrate_on, args.data_dir)
    det = dialcheck.load(None if args.model == "default" else args.model)
    verdicts = det.predict([e.dialogue for e in examples], batch_size=64)
    scores = np.array([v.score for v in verdicts])
    labels = np.array([e.label for e in examples], dtype=bool)
    tau, bacc = best_threshold(scores, labels, balanced_accuracy, one_se=True)
    best_tau, best = best_threshold(scores, labels, balanced_accuracy)
    taus = resampled_taus(scores, labels, args.n_boot, args.seed)
    at = args.at
    runtime = det.config.options.get("runtime") or "torch"
    where = f"{runtime}" + (f", {int8_range()} int8 range" if det.config.options.get("int8") else "")
    q10, q50, q90 = np.quantile(taus, [0.1, 0.5, 0.9])
    rows = [
        f"model {det.path.name if det.path else args.model} ({where}), {len(examples)} dialogues, "
        f"{len(taus)} resamples (seed {args.seed})",
        "",
        "| τ on all | its balanced accuracy | best τ / balanced accuracy | resampled τ: 10% / median / 90% | "
        + " | ".join(f"resampled τ ≥ {a:g}" for a in at)
        + " |",
        "|---:|---:|---:|---|" + "---:|" * len(at),
        f"| {tau:.3f} | {bacc:.4f} | {best_tau:.3f} / {best:.4f} | {q10:.3f} / {q50:.3f} / {q90:.3f} | "
        + " | ".join(f"{np.mean(taus >= a):.2f}" for a in at)
        + " |",
    ]
    results = {
        "model": str(det.path or args.model),
        "runtime": where,
        "dialogues": len(examples),
        "tau": tau,
        "balanced_accuracy": bacc,
        "best_tau": best_tau,
        "best_balanced_accuracy": best,
        "resampled": {
            "n": len(taus),
            "q10": q10,
            "median": q50,
            "q90": q90,
            "at_or_above": {str(a): float(np.mean(taus >= a)) for a in at},
        },
    }
    emit("\n".join(rows), results, args.markdown, args.json)
    return 0


if __name__ == "__main__":
    from _cli import run

    sys.exit(run(main))
