"""Int8 ONNX: each pair run alone (the runtime's way since session 57) against the batch run as one.

    python benchmarks/int8_rows.py [--model NAME_OR_DIR] [--n 150] [--threads 2]

For each stage of the model (a cascade has two), the same-speaker pairs of the first ``--n`` human-bot dialogues
are encoded in length-sorted batches of 64 and run through the stage's cached int8 export both ways: the time of
each, and how far a pair's score in the batch is from its score alone (the batch dependence that row-by-row
removes).
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def main() -> None:
    from dialcheck.cli.common import nonnegative_int, positive_int

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=None, help="detector on ONNX int8 (default: the shipped English one)")
    ap.add_argument("--n", type=positive_int, default=150, help="human-bot dialogues")
    ap.add_argument("--threads", type=nonnegative_int, default=2, help="threads (0 = the runtime's default)")
    args = ap.parse_args()

    import numpy as np

    import dialcheck
    from dialcheck.api import accelerate
    from dialcheck.datasets import load_dataset
    from dialcheck.detectors.onnx import OnnxRunner
    from dialcheck.evaluation.decode import SPLITS
    from dialcheck.threads import set_threads

    set_threads(args.threads)
    det = accelerate(dialcheck.load(args.model), onnx=True, int8=True)
    stages = list(det._pair()) if hasattr(det, "_pair") else [det]
    examples = list(load_dataset(SPLITS["human_bot"]))[: args.n]
    print("| stage | pairs | batched (s) | row by row (s) | ratio | score change in a batch: median | max |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for stage in stages:
        clf = stage.classifier
        pairs = sorted({p for e in examples for p in stage._pairs(e.dialogue)[1]}, key=lambda p: len(p[0]) + len(p[1]))
        batches = [clf.encode(pairs[i : i + 64], tensors="np") for i in range(0, len(pairs), 64)]
        path = clf.runner.path
        timed = {}
        for rows in (False, True):
            runner = OnnxRunner(path, args.threads, rows=rows)
            start = time.perf_counter()
            logits = np.concatenate([runner(b) for b in batches])
            timed[rows] = (time.perf_counter() - start, logits)
        change = np.abs(timed[False][1] - timed[True][1]).max(axis=1)
        print(
            f"| {stage.path.name} | {len(pairs)} | {timed[False][0]:.2f} | {timed[True][0]:.2f} | "
            f"{timed[True][0] / timed[False][0]:.2f} | {np.median(change):.4f} (logit) | {change.max():.4f} (logit) |"
        )


if __name__ == "__main__":
    from _cli import run

    run(main)
