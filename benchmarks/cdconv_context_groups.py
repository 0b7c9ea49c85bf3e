"""Where on the official CDConv test split does a detector gain? The official split shares most test contexts
(u1, b1, u2) with train and dev; a detector trained on dev too (``--with-dev``) has seen the context of more test
conversations. For each predictions file that ``dialcheck evaluate --splits test --predictions`` wrote, the
2-class accuracy and 4-class macro-F1 on four groups of test conversations: context also in train only, in dev
only, in both, in neither.

    dialcheck evaluate --benchmark cdconv --splits test --model M --predictions m.jsonl
    python benchmarks/cdconv_context_groups.py v4.jsonl v5.jsonl
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from _rows import cdconv_labels, parsed_rows

from dialcheck.datasets import load_dataset
from dialcheck.datasets.cdconv import context_key
from dialcheck.errors import InputError
from dialcheck.evaluation.cdconv import cdconv_metrics

GROUPS = ("train only", "dev only", "train and dev", "neither")


def group_of(in_train: bool, in_dev: bool) -> str:
    """The name of a test conversation's group from where its context also occurs.

    >>> group_of(True, False), group_of(False, False)
    ('train only', 'neither')
    """
    return GROUPS[[(True, False), (False, True), (True, True), (False, False)].index((in_train, in_dev))]


def test_groups(root: str | Path | None = None) -> dict[str, str]:
    """Test example id (as ``dialcheck evaluate`` names it) -> its group; ``root``: the corpus folder."""
    train = {context_key(e) for e in load_dataset("cdconv.train.v1", root)}
    dev = {context_key(e) for e in load_dataset("cdconv.dev.v1", root)}
    test = load_dataset("cdconv.test.v1", root)
    return {e.id: group_of(context_key(e) in train, context_key(e) in dev) for e in test}


def group_metrics(rows: Sequence[dict], groups: dict[str, str]) -> dict[str, tuple[int, float, float]]:
    """Per group: (conversations, 2-class accuracy, 4-class macro-F1) of one predictions file's rows."""
    out = {}
    for g in GROUPS:
        mine = [r for r in rows if groups.get(r["id"]) == g]
        if not mine:
            continue
        gold, pred = zip(*(cdconv_labels(r) for r in mine), strict=True)
        m = cdconv_metrics(gold, pred)
        out[g] = (len(mine), m["2class/accuracy"], m["4class/macro_f1"])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "predictions", nargs="+", type=Path, help="files from dialcheck evaluate --splits test --predictions"
    )
    ap.add_argument("--data-dir", default=None, help="corpus folder (default ../shared/data or $DIALCHECK_DATA_DIR)")
    args = ap.parse_args()
    groups = test_groups(args.data_dir)
    print("| predictions | " + " | ".join(f"{g}: n, 2-class acc / 4-class mF1" for g in GROUPS) + " |")
    print("|---|" + "---|" * len(GROUPS))
    for path in args.predictions:
        rows = parsed_rows(path, dict, "a predictions row")
        unknown = [r["id"] for r in rows if r["id"] not in groups]
        if unknown:
            raise InputError(f"{path}: {len(unknown)} rows are not official test conversations (e.g. {unknown[0]})")
        m = group_metrics(rows, groups)
        cells = [f"{m[g][0]}, {m[g][1]:.2f} / {m[g][2]:.2f}" if g in m else "–" for g in GROUPS]
        print(f"| {path} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    from _cli import run

    run(main)
