"""Does a CDConv detector read the history, or guess from the question and the reply? Writes a copy of a
split (or of a hand-written file) with one earlier turn replaced by a filler ("嗯。"), as labelled JSONL for
``dialcheck evaluate --benchmark cdconv --data``. Masking b1 removes what a history contradiction takes
back: a detector that compares b2 with b1 should then stop calling those conversations history
contradictions; the share it still calls so is what it guesses from (u1, u2, b2) alone. Labels are kept
as they were (so "accuracy" on a masked copy is not a score, but history recall is the measure).

    python benchmarks/cdconv_mask_context.py --split cdconv.dev.v1 --mask b1 --out dev-b1.jsonl
    dialcheck evaluate --benchmark cdconv --data dev-b1.jsonl --json dev-b1.json   # flagged/history
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from pathlib import Path

from dialcheck.io import example_record, write_jsonl
from dialcheck.schema import Example

FILLER = "嗯。"
POSITION = {"u1": -4, "b1": -3, "u2": -2}


def masked_records(examples: Iterable[Example], mask: str, filler: str = FILLER) -> list[dict]:
    """Labelled records (``dialcheck evaluate --data`` format) with the turn ``mask`` (u1, b1 or u2) replaced.

    >>> from dialcheck.schema import Dialogue
    >>> d = Dialogue.from_texts(["你有猫吗？", "有一只。", "它几岁了？", "我没有猫。"])
    >>> rec = masked_records([Example(d, True, None, "history", id="x")], "b1")[0]
    >>> [t["text"] for t in rec["turns"]], rec["contradiction"], rec["category"]
    (['你有猫吗？', '嗯。', '它几岁了？', '我没有猫。'], True, 'history')
    """
    if mask not in POSITION:
        raise ValueError(f"mask: expected one of {', '.join(POSITION)}, got {mask!r}")
    out = []
    for e in examples:
        rec = example_record(e)
        if len(rec["turns"]) < 4:
            raise ValueError(
                f"{e.id}: {len(rec['turns'])} turns, a CDConv conversation has at least 4 (u1, b1, u2, b2)"
            )
        rec["turns"][POSITION[mask]]["text"] = filler
        out.append(rec)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--split", help="a registered CDConv dataset name, e.g. cdconv.dev.v1")
    src.add_argument("--data", type=Path, help="a labelled JSONL file (evaluate --data format)")
    ap.add_argument("--mask", required=True, choices=sorted(POSITION), help="the turn replaced by the filler")
    ap.add_argument("--filler", default=FILLER, help=f"the text put in its place (default {FILLER})")
    ap.add_argument("--data-dir", default=None, help="corpus folder (default ../shared/data)")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    if args.split:
        from dialcheck.datasets import load_dataset

        examples = load_dataset(args.split, args.data_dir)
    else:
        from dialcheck.cli.common import read_labelled

        examples, _ = read_labelled(str(args.data))
    n = write_jsonl(args.out, masked_records(examples, args.mask, args.filler))
    print(f"wrote {n} conversations with {args.mask} masked to {args.out}")


if __name__ == "__main__":
    from _cli import run

    run(main)
