"""Write the from-scratch Chinese base (random weights, character vocabulary of the CDConv train splits
and OCNLI train.10k): the third backbone candidate of the CDConv comparison (docs/benchmarks.md, CDConv).

    python benchmarks/zh_scratch_base.py --out runs/zh-scratch-base
    dialcheck -v train --task cdconv --detector flat --base runs/zh-scratch-base --full --lr 5e-4 \\
        --epochs 8 --max-length 96 --seed 0 --threads 2 --out runs/zh-scratch-flat
"""

from __future__ import annotations

import argparse
import logging

from dialcheck.cli.common import positive_int, seed_number
from dialcheck.scratch import build_scratch_base
from dialcheck.vocab import corpus_texts


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--layers", type=positive_int, default=4)
    p.add_argument("--hidden", type=positive_int, default=256)
    p.add_argument("--heads", type=positive_int, default=4)
    p.add_argument("--min-count", type=positive_int, default=2, help="keep characters seen this often")
    p.add_argument("--seed", type=seed_number, default=0)
    p.add_argument("--data-dir", default=None)
    args = p.parse_args()
    if args.hidden % args.heads:  # refused by build_scratch_base too, but only after the corpora are read
        p.error(f"--hidden {args.hidden} is not a multiple of --heads {args.heads}")
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    build_scratch_base(
        args.out,
        corpus_texts(args.data_dir),
        layers=args.layers,
        hidden=args.hidden,
        heads=args.heads,
        min_count=args.min_count,
        seed=args.seed,
    )


if __name__ == "__main__":
    from _cli import run

    run(main)
