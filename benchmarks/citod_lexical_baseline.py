"""How lexical is CI-ToD? A bag-of-words baseline beside the neural detector (no GPU, seconds of CPU).

One logistic regression per label over TF-IDF n-grams of the reply (1-2) and of the request (1), plus five
counts from the grounded input builder with mention marks (knowledge values the reply mentions, values only
the request/history mention, rows with a reply mention, reply length, history turns). Trained on calendar +
navigate train, evaluated on the three official test sets (weather unseen), metrics from
:func:`dialcheck.evaluation.citod.citod_metrics`. Needs scikit-learn (not a dialcheck dependency).

    python benchmarks/citod_lexical_baseline.py            # Markdown table on stdout
    python benchmarks/citod_lexical_baseline.py --json out.json
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from dialcheck.datasets import load_dataset
from dialcheck.detectors.grounded import MARK_CONTEXT, MARK_REPLY, ROW_SEP, build_input, split_turns
from dialcheck.evaluation.citod import TEST_SPLITS, citod_metrics, to_markdown
from dialcheck.schema import Example

LABELS = ("QI", "HI", "KBI")


def _parts(e: Example) -> tuple[str, str, list[float]]:
    d = e.dialogue
    history, request, _ = split_turns(d)
    x = build_input(d, marks=True)
    counts = [
        x.first.count(f" {MARK_REPLY} "),
        x.first.count(f" {MARK_CONTEXT} "),
        sum(f" {MARK_REPLY} " in seg for seg in x.first.split(f" {ROW_SEP} ")),
        len(x.second.split()),
        len(history),
    ]
    return x.second, d.turns[request].text if request is not None else "", [float(c) for c in counts]


def main(argv: list[str] | None = None) -> int:
    try:
        from scipy.sparse import csr_matrix, hstack
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression
    except ImportError:
        print("this baseline needs scikit-learn: pip install scikit-learn", file=sys.stderr)
        return 2
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", default=None, help="write the results here")
    ap.add_argument("--C", type=float, default=3.0, help="inverse regularisation of the logistic regressions")
    args = ap.parse_args(argv)
    train = load_dataset("citod.calendar.train.v1") + load_dataset("citod.navigate.train.v1")
    tests = {d: load_dataset(f"citod.{d}.test.v1") for d in TEST_SPLITS}
    p_train = [_parts(e) for e in train]
    v_reply = TfidfVectorizer(ngram_range=(1, 2), min_df=2).fit([p[0] for p in p_train])
    v_request = TfidfVectorizer(min_df=2).fit([p[1] for p in p_train])

    def features(parts: list[tuple[str, str, list[float]]]) -> object:
        counts = csr_matrix(np.log1p(np.array([p[2] for p in parts])))
        return hstack([v_reply.transform([p[0] for p in parts]), v_request.transform([p[1] for p in parts]), counts])

    x_train = features(p_train).tocsr()
    models = {
        lab: LogisticRegression(C=args.C, max_iter=2000).fit(x_train, [e.labels[lab] for e in train]) for lab in LABELS
    }
    results: dict[str, float] = {}
    pooled_gold, pooled_pred = [], []
    for split, examples in tests.items():
        x = features([_parts(e) for e in examples]).tocsr()
        cols = {lab: models[lab].predict(x) for lab in LABELS}
        pred = [{lab: bool(cols[lab][i]) for lab in LABELS} for i in range(len(examples))]
        gold = [dict(e.labels) for e in examples]
        results.update({f"{split}/{k}": round(v, 4) for k, v in citod_metrics(gold, pred).items()})
        pooled_gold += gold
        pooled_pred += pred
    results.update({f"all/{k}": round(v, 4) for k, v in citod_metrics(pooled_gold, pooled_pred).items()})
    sys.stdout.write(to_markdown(results, title="bag-of-words LR"))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
