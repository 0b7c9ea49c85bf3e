"""How lexical is CDConv? A character n-gram baseline beside the neural detectors (seconds of CPU).

One multinomial logistic regression (4 classes, balanced class weights) over TF-IDF character 1-2-grams of
b2, b1 and u2 (one vocabulary, three blocks) plus 17 hand features: character-bigram Jaccard overlap of
b2 with b1, u2 and u1 and of b1 with u2, negation characters (不没别非无) in b2 and b1, 我/你 counts in b2,
u2 and b1, whether b2 asks a question, lengths of b2 and b1, and whether b2 and u2 contain each other.
Trained on the train side of a split, scored with :func:`dialcheck.evaluation.cdconv.cdconv_metrics` on its
test side. The official split shares most test contexts (u1, b1, u2) with train; ``--split disjoint``
uses the context-disjoint split, where memorising a context cannot help. Needs scikit-learn.

    python benchmarks/cdconv_lexical_baseline.py                      # official split, Markdown on stdout
    python benchmarks/cdconv_lexical_baseline.py --split disjoint --json out.json
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np
from _sklearn import sklearn_parts

from dialcheck.datasets import load_dataset
from dialcheck.evaluation.cdconv import cdconv_metrics, example_label, to_markdown
from dialcheck.schema import Example

NEGATION = "不没别非无"
SPLITS = {
    "official": ("cdconv.train.v1", "cdconv.test.v1"),
    "disjoint": ("cdconv.disjoint.train.v1", "cdconv.disjoint.test.v1"),
}


def turns4(e: Example) -> list[str]:
    """(u1, b1, u2, b2) of a session; missing leading turns are empty."""
    texts = [t.text for t in e.dialogue.turns][-4:]
    return [""] * (4 - len(texts)) + texts


def _bigrams(s: str) -> set[str]:
    return {s[i : i + 2] for i in range(len(s) - 1)}


def overlap(a: str, b: str) -> float:
    """Jaccard overlap of character bigrams.

    >>> overlap("我喜欢猫", "我喜欢狗"), overlap("", "")
    (0.5, 0.0)
    """
    x, y = _bigrams(a), _bigrams(b)
    return len(x & y) / max(1, len(x | y))


def hand_features(e: Example) -> list[float]:
    u1, b1, u2, b2 = turns4(e)
    return [
        overlap(b2, b1), overlap(b2, u2), overlap(b2, u1), overlap(b1, u2),
        float(sum(c in NEGATION for c in b2)), float(sum(c in NEGATION for c in b1)),
        float(b2.count("我")), float(b2.count("你")), float(u2.count("我")), float(u2.count("你")),
        float(b1.count("我")), float(b1.count("你")),
        float(any(q in b2 for q in ("？", "?", "吗"))), len(b2) / 20, len(b1) / 20,
        float(bool(b2) and b2 in u2), float(bool(u2) and u2 in b2),
    ]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parts = sklearn_parts()
    if parts is None:
        return 2
    csr_matrix, hstack, TfidfVectorizer, LogisticRegression = parts
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", choices=tuple(SPLITS), default="official")
    ap.add_argument("--C", type=float, default=1.0, help="inverse regularisation of the logistic regression")
    ap.add_argument("--json", default=None, help="write the results here")
    ap.add_argument("--data-dir", default=None)
    args = ap.parse_args(argv)
    train_name, test_name = SPLITS[args.split]
    train, test = load_dataset(train_name, args.data_dir), load_dataset(test_name, args.data_dir)
    vec = TfidfVectorizer(analyzer="char", ngram_range=(1, 2), min_df=2)
    vec.fit([t for e in train for t in turns4(e)[1:]])

    def features(examples: list[Example]) -> object:
        parts = [turns4(e) for e in examples]
        blocks = [vec.transform([p[i] for p in parts]) for i in (3, 1, 2)]  # b2, b1, u2
        return hstack([*blocks, csr_matrix(np.array([hand_features(e) for e in examples]))]).tocsr()

    model = LogisticRegression(C=args.C, max_iter=3000, class_weight="balanced")
    model.fit(features(train), [example_label(e) for e in train])
    pred = model.predict(features(test))
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
    sys.exit(main())
