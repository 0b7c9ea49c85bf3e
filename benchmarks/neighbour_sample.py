"""Draw neighbour pairs (``dialcheck train --augment neighbour``) for labelling by hand.

Prints ``--n`` pairs drawn with ``random.seed(--seed)`` from the neighbour pairs of the training split (the
split ``dialcheck train`` uses: seed 0, 8% of the groups held out), as dialogues in the format of
``dialcheck evaluate --data`` with ``"contradiction": null`` for the annotator to fill in. The two
utterances become turns 0 and 2 of one speaker, with "Mm-hm." between them.
``benchmarks/data/decode_neighbours.jsonl`` is this command's output, labelled by hand before any model
scored it:

    python benchmarks/neighbour_sample.py --n 60 --seed 7 > unlabelled.jsonl
"""

from __future__ import annotations

import argparse
import json
import random


def main(argv: list[str] | None = None) -> None:
    from dialcheck.cli.common import positive_int, seed_number
    from dialcheck.datasets import load_dataset
    from dialcheck.training.data import neighbour_pairs, split_groups

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=positive_int, default=60)
    ap.add_argument("--seed", type=seed_number, default=7)
    ap.add_argument("--data-dir", default=None)
    args = ap.parse_args(argv)
    train, _ = split_groups(load_dataset("decode.train_pairs.v1", args.data_dir), 0.08, 0)
    random.seed(args.seed)
    for i, p in enumerate(random.sample(neighbour_pairs(train), args.n)):
        turns = [p.first, "Mm-hm.", p.second]
        print(json.dumps({"id": f"nb-{i:02d}", "turns": turns, "contradiction": None, "evidence": []}))


if __name__ == "__main__":
    from _cli import run

    run(main)
