"""How well the committed teacher-scores files fit their recipes on this machine: pairs read, pairs without a score.

Each file of ``benchmarks/data/teacher-scores/`` holds a teacher's scores for the pairs one student recipe reads
(its README). On a CPU other than the writer's a few unlabelled neighbour pairs can differ (float rounding of the
sentence embeddings); ``dialcheck train`` leaves up to 0.1% of them out (``unscored_pairs_left_out``). About a
minute (the training data is built once):

    python benchmarks/teacher_scores_fit.py
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
FILES = HERE / "data" / "teacher-scores"
AUGMENT = ("random_premise", "restate", "perturb", "anli", "nli_samples", "neighbour")
RECIPES = (  # file, epochs, --distill-alpha, --distill-alpha-by (seed 0, batch 32, the mix above)
    ("mpnet-t045_neighbour.npz", 0.4808, 0.0, None),
    ("mpnet-step2700_v3-mix-neighbour-epoch.npz", 1.0, 1.0, {"aug.perturb": 0.0}),
)


def fit(data_dir: str | Path | None = None) -> list[dict]:
    """Per recipe: the file, the pairs its run reads from the teacher, those without a score, and whether
    ``dialcheck train`` accepts the file (missing ones all unlabelled and at most 0.1%)."""
    from dialcheck.datasets.base import data_dir as default_dir
    from dialcheck.training import TrainConfig, build_decode_training_data
    from dialcheck.training.distill import teacher_pair_scores
    from dialcheck.training.trainer import teacher_needed, unscored_pairs_left_out

    data = build_decode_training_data(default_dir(data_dir), "decode.utterance.v1", AUGMENT, 0.08, 0, None)
    rows = []
    for name, epochs, alpha, by in RECIPES:
        needed = teacher_needed(data.train, TrainConfig(epochs=epochs, batch_size=32, lr=2e-4, seed=0), alpha, by)
        scores = teacher_pair_scores(FILES / name, data.train)
        missing = int((needed & np.isnan(scores)).sum())
        try:
            unscored_pairs_left_out(data.train, scores, needed, warn=False)
            accepted = True
        except ValueError:
            accepted = False
        rows.append({"file": name, "read": int(needed.sum()), "missing": missing, "accepted": accepted})
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir", default=None)
    args = ap.parse_args(argv)
    print("| file | pairs read from the teacher | without a score | dialcheck train accepts it |\n|---|---:|---:|---|")
    for r in fit(args.data_dir):
        print(f"| {r['file']} | {r['read']:,} | {r['missing']} | {'yes' if r['accepted'] else 'no'} |")
    return 0


if __name__ == "__main__":
    from _cli import run

    raise SystemExit(run(main))
