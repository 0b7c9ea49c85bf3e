"""Accuracy of a DECODE detector when each dialogue is checked alone, one `predict` call per dialogue.

    python benchmarks/single_check.py [--model NAME_OR_DIR] [--splits human_bot,rct,dev]

A guard in front of every reply checks one dialogue at a time; `dialcheck evaluate` scores the pairs of many
dialogues in shared batches. For a model whose scores do not depend on the batch (torch, ONNX float32, and int8
since its rows run alone) the two agree; this script is how the difference was measured for the batched int8
runtime of the code before (run it with that code on ``PYTHONPATH``). Prints accuracy and dialogues/s per split.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def main() -> None:
    from dialcheck.cli.common import comma_choices
    from dialcheck.evaluation.decode import SPLITS

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=None, help="detector (default: the shipped English one)")
    ap.add_argument(
        "--splits", type=comma_choices(tuple(SPLITS)), default=["human_bot", "rct", "dev"], help="comma-separated"
    )
    ap.add_argument("--data-dir", default=None)
    args = ap.parse_args()

    import dialcheck
    from dialcheck.datasets import load_dataset

    det = dialcheck.load(args.model)
    print("| split | accuracy, one dialogue per call | dialogues/s |\n|---|---:|---:|")
    for split in args.splits:
        examples = list(load_dataset(SPLITS[split], args.data_dir))
        start = time.perf_counter()
        verdicts = [det.predict([e.dialogue])[0] for e in examples]
        seconds = time.perf_counter() - start
        right = sum(v.contradiction == bool(e.label) for v, e in zip(verdicts, examples, strict=True))
        print(f"| {split} | {100 * right / len(examples):.2f} | {len(examples) / seconds:.1f} |", flush=True)


if __name__ == "__main__":
    from _cli import run

    run(main)
