"""How far a distillation teacher's scores sit from the gold labels of the training mix, per source and label.

``dialcheck train --teacher T --distill-alpha a`` trains on ``a * teacher + (1 - a) * gold``. Where the teacher
disagrees with a source's labels (it never saw that source, or the labels are noisy), a high ``a`` unteaches that
source. This prints, per (source, label), the teacher's mean P(contradiction), the share it gets wrong at 0.5 and
the mean distance from the gold label, for the same mix ``dialcheck train --augment`` builds. The scores come
from the cache ``dialcheck train --teacher`` fills (scoring 72,680 pairs with an MPNet teacher takes about an
hour here when they are not cached).

    python benchmarks/teacher_agreement.py runs/mpnet_teacher_step1800 \\
        --augment random_premise,restate,perturb,anli,nli_samples
"""

from __future__ import annotations

import argparse
from collections import defaultdict

import numpy as np


def agreement(scores: np.ndarray, labels: np.ndarray) -> dict[str, float]:
    """Mean score, error rate at 0.5 and mean |score - label| of scores against 0/1 labels.

    >>> agreement(np.array([0.9, 0.2, 0.6]), np.array([1, 1, 0]))
    {'mean': 0.5667, 'wrong': 0.6667, 'distance': 0.5}
    """
    wrong = (scores > 0.5) != (labels == 1)
    return {
        "mean": round(float(scores.mean()), 4),
        "wrong": round(float(wrong.mean()), 4),
        "distance": round(float(np.abs(scores - labels).mean()), 4),
    }


def main(argv: list[str] | None = None) -> None:
    from dialcheck.cli.common import comma_choices, seed_number
    from dialcheck.training.data import AUGMENTATIONS, build_decode_training_data
    from dialcheck.training.distill import teacher_pair_scores

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("teacher", help="the teacher detector folder given to dialcheck train --teacher")
    pick = comma_choices(AUGMENTATIONS)
    augments = lambda text: pick(text) if text.strip(" ,") else []  # noqa: E731  ('': the DECODE pairs alone)
    ap.add_argument("--augment", type=augments, default="random_premise", help="the --augment list of the training run")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--seed", type=seed_number, default=0, help="the --seed of the training run (it draws the mix)")
    args = ap.parse_args(argv)
    augment = args.augment
    data = build_decode_training_data(args.data_dir, augment=augment, seed=args.seed)
    scores = teacher_pair_scores(args.teacher, data.train)
    by: dict[tuple[str, int], list[float]] = defaultdict(list)
    for pair, score in zip(data.train, scores, strict=True):
        by[(pair.source, int(pair.label))].append(float(score))
    print("| source | label | pairs | teacher mean P(contradiction) | wrong at 0.5 | mean distance from gold |")
    print("|---|---:|---:|---:|---:|---:|")
    for (source, label), values in sorted(by.items()):
        a = agreement(np.array(values), np.full(len(values), label))
        print(f"| {source} | {label} | {len(values):,} | {a['mean']:.3f} | {a['wrong']:.3f} | {a['distance']:.3f} |")


if __name__ == "__main__":
    from _cli import run

    run(main)
