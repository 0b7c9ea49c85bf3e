"""How lexical is CDConv? A character n-gram baseline beside the neural detectors (seconds of CPU).

One multinomial logistic regression (4 classes, balanced class weights) over TF-IDF character 1-2-grams of
b2, b1 and u2 (one vocabulary, three blocks) plus 17 hand features: character-bigram Jaccard overlap of
b2 with b1, u2 and u1 and of b1 with u2, negation characters (不没别非无) in b2 and b1, 我/你 counts in b2,
u2 and b1, whether b2 asks a question, lengths of b2 and b1, and whether b2 and u2 contain each other.
This is :class:`dialcheck.detectors.lexical.LexicalHead` on its own (argmax of its probabilities), the
head that ``dialcheck train --task cdconv --lexical`` mixes into the encoder. Trained on the train side of
a split, scored with :func:`dialcheck.evaluation.cdconv.cdconv_metrics` on its test side. The official
split shares most test contexts (u1, b1, u2) with train; ``--split disjoint`` uses the context-disjoint
split, where memorising a context cannot help. Needs scikit-learn.

    python benchmarks/cdconv_lexical_baseline.py                      # official split, Markdown on stdout
    python benchmarks/cdconv_lexical_baseline.py --split disjoint --json out.json
"""

from __future__ import annotations

import argparse
import json
import sys

from _sklearn import sklearn_parts

from dialcheck.cli.common import positive_float
from dialcheck.datasets import load_dataset
from dialcheck.datasets.cdconv import LABEL_NAMES
from dialcheck.detectors.lexical import LexicalHead
from dialcheck.evaluation.cdconv import cdconv_metrics, example_label, to_markdown

SPLITS = {
    "official": ("cdconv.train.v1", "cdconv.test.v1"),
    "disjoint": ("cdconv.disjoint.train.v1", "cdconv.disjoint.test.v1"),
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", choices=tuple(SPLITS), default="official")
    ap.add_argument("--C", type=positive_float, default=1.0, help="inverse regularisation of the logistic regression")
    ap.add_argument("--json", default=None, help="write the results here")
    ap.add_argument("--data-dir", default=None)
    args = ap.parse_args(argv)
    sklearn_parts()  # installed, or a MissingDependencyError naming the install
    train_name, test_name = SPLITS[args.split]
    train, test = load_dataset(train_name, args.data_dir), load_dataset(test_name, args.data_dir)
    head = LexicalHead.fit([e.dialogue for e in train], [example_label(e) for e in train], LABEL_NAMES, c=args.C)
    pred = head.proba([e.dialogue for e in test]).argmax(axis=1)
    metrics = cdconv_metrics([example_label(e) for e in test], [int(p) for p in pred])
    results = {f"test/{k}": v for k, v in metrics.items()}
    results["split"] = args.split  # type: ignore[assignment]
    title = f"char n-gram LR ({args.split} split)"
    sys.stdout.write(to_markdown(results, title=title) if args.split == "official" else _plain(results, title))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=2)
    return 0


def _plain(results: dict[str, object], title: str) -> str:
    lines = [f"| metric | {title} |", "|---|---:|"]
    lines += [f"| {k[5:]} | {v} |" for k, v in results.items() if k.startswith("test/") and k != "test/n"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    from _cli import run

    sys.exit(run(main))
