"""How long are the checked (last) turns a detector was trained on? Rule CB's ``long_words`` comes from here.

    python benchmarks/turn_lengths.py [--data-dir ../shared/data] [--share 0.01]

Reads DECODE's train last turns (``decode.train_last_turns.v1``) and prints the whitespace word counts of the
checked turns (median, 90th and 99th percentile) and the smallest length L that at most ``--share`` of them
reach: the router (``router.v1``) sends replies of L words or more to its second detector.
"""

from __future__ import annotations

import argparse

import numpy as np


def main() -> None:
    from dialcheck.cli.common import unit_float
    from dialcheck.datasets import load_dataset

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--share", type=unit_float, default=0.01, help="most of the checked turns that may reach L")
    args = ap.parse_args()
    words = np.array(
        [len(e.dialogue.turns[-1].text.split()) for e in load_dataset("decode.train_last_turns.v1", args.data_dir)]
    )
    cut = next(n for n in range(1, int(words.max()) + 2) if np.mean(words >= n) <= args.share)
    print(
        f"{len(words)} checked turns: median {np.median(words):g} words, 90th percentile {np.percentile(words, 90):g}, "
        f"99th {np.percentile(words, 99):g}"
    )
    print(f"smallest L with at most {args.share:.0%} of them at L words or more: {cut} ({np.mean(words >= cut):.2%})")


if __name__ == "__main__":
    from _cli import run

    run(main)
