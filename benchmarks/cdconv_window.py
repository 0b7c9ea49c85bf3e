"""How much of each CDConv conversation fits a detector's token window? For a base's tokenizer, each
four-category input (``flat``, ``pair``, and the cascade's three stages), with and without speaker tags,
and a few ``--max-length`` values: how many inputs of a split are longer than the window (the earlier
turns lose tokens from their start), and the length that keeps 99% whole. Tokenizer only, no model: a few
seconds. The same count is what ``dialcheck train`` warns about and saves (``training.fits.*.window``).

    python benchmarks/cdconv_window.py --base gemma-3-270m --split cdconv.train.v1 --lengths 64,80,96
"""

from __future__ import annotations

import argparse
import logging

from _cli import comma_list

from dialcheck.backbones import resolve_base
from dialcheck.cli.common import comma_choices, token_window
from dialcheck.datasets import load_dataset
from dialcheck.detectors.categories import separator, stage_input
from dialcheck.detectors.core import PairClassifier
from dialcheck.training.trainer import window_report
from dialcheck.vocab import extension_tokens, split_base

STAGES = ("flat", "pair", "intra_sentence", "role_confusion", "history")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", default="gemma-3-270m", help="base name or Hugging Face folder (its tokenizer)")
    ap.add_argument("--split", default="cdconv.train.v1", help="a registered CDConv dataset name")
    ap.add_argument(
        "--lengths", type=comma_list(token_window), default="64,80,96", help="comma-separated --max-length values"
    )
    ap.add_argument(
        "--stages", type=comma_choices(STAGES), default="flat", help=f"comma-separated, from {', '.join(STAGES)}"
    )
    args = ap.parse_args()
    logging.getLogger("dialcheck.training.trainer").setLevel(logging.ERROR)  # the table says it all
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(resolve_base(args.base))
    ext = split_base(args.base)[1]
    if ext:  # e.g. all-MiniLM-L6-v2+zh: the added characters are whole tokens, as in the trained model
        tok.add_tokens(extension_tokens(ext))
    examples = load_dataset(args.split)
    sep = separator(tok)
    print(f"{args.split} ({len(examples)} conversations), {args.base} tokenizer\n")
    print("| input | speaker tags | window | cut | cut % | 99% fit in |")
    print("|---|---|---|---|---|---|")
    for stage in args.stages:
        for tags in (False, True):
            texts = [stage_input(stage, e.dialogue, sep, tags) for e in examples]
            for n in args.lengths:
                r = window_report(PairClassifier(None, tok, ["none"], max_length=n), texts)
                share = 100.0 * r["cut"] / max(1, r["pairs"])
                print(f"| {stage} | {'yes' if tags else 'no'} | {n} | {r['cut']} | {share:.1f} | {r['p99_tokens']} |")


if __name__ == "__main__":
    from _cli import run

    run(main)
