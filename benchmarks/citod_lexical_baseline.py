"""How lexical is CI-ToD? A bag-of-words baseline beside the neural detector (no GPU, seconds of CPU).

One logistic regression per label over TF-IDF n-grams of the reply (1-2) and of the request (1), plus five
counts from the grounded input builder with mention marks (knowledge values the reply mentions, values only
the request/history mention, rows with a reply mention, reply length, history turns). Trained on calendar +
navigate train, evaluated on the three official test sets (weather unseen), metrics from
:func:`dialcheck.evaluation.citod.citod_metrics`. Needs scikit-learn (not a dialcheck dependency).

``--features checks`` replaces the words by the grounded detector's typed entity checks
(:func:`dialcheck.detectors.grounded.entity_checks` with CI-ToD's entity vocabulary): for each of request,
history and knowledge base, how many reply values are the ``same``, ``other`` or ``absent`` (capped at 3),
plus how many typed values the reply mentions. ``both`` uses words and checks. ``--vocabulary kb`` types
values by the dialogue's own knowledge-base columns only (what a user without an entity list gets).

    python benchmarks/citod_lexical_baseline.py            # Markdown table on stdout
    python benchmarks/citod_lexical_baseline.py --features checks --json out.json
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np
from _sklearn import sklearn_parts

from dialcheck.cli.common import positive_float
from dialcheck.datasets import load_dataset
from dialcheck.detectors.grounded import MARK_CONTEXT, MARK_REPLY, ROW_SEP, build_input, split_turns
from dialcheck.evaluation.citod import TEST_SPLITS, citod_metrics, to_markdown
from dialcheck.schema import Example

LABELS = ("QI", "HI", "KBI")
RELATIONS = [f"{where} {how}" for where in ("request", "history", "kb") for how in ("same", "other", "absent")]


def check_counts(e: Example, vocabulary: dict[str, list[str]]) -> list[float]:
    """Counts of each entity-check relation of the reply (capped at 3) and of checked values."""
    counts = [0.0] * (len(RELATIONS) + 1)
    for _, rel in build_input(e.dialogue, checks=True, vocabulary=vocabulary).checks:
        for where, how in rel.items():
            counts[RELATIONS.index(f"{where} {how}")] += 1
        counts[-1] += 1
    return [min(c, 3.0) for c in counts]


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
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", default=None, help="write the results here")
    ap.add_argument("--C", type=positive_float, default=3.0, help="inverse regularisation of the logistic regressions")
    ap.add_argument("--features", choices=("words", "checks", "both"), default="words")
    ap.add_argument(
        "--vocabulary",
        choices=("corpus", "kb"),
        default="corpus",
        help="entity types for the checks: CI-ToD's entity files + each dialogue's table (corpus), or the table only",
    )
    args = ap.parse_args(argv)
    csr_matrix, hstack, TfidfVectorizer, LogisticRegression = sklearn_parts()  # or an error naming the install
    from dialcheck.training.citod import check_vocabulary

    vocabulary = check_vocabulary() if args.features != "words" and args.vocabulary == "corpus" else {}
    train = load_dataset("citod.calendar.train.v1") + load_dataset("citod.navigate.train.v1")
    tests = {d: load_dataset(f"citod.{d}.test.v1") for d in TEST_SPLITS}
    p_train = [_parts(e) for e in train]
    v_reply = TfidfVectorizer(ngram_range=(1, 2), min_df=2).fit([p[0] for p in p_train])
    v_request = TfidfVectorizer(min_df=2).fit([p[1] for p in p_train])

    def features(examples: list[Example]) -> object:
        blocks = []
        if args.features != "checks":
            parts = [_parts(e) for e in examples]
            blocks += [v_reply.transform([p[0] for p in parts]), v_request.transform([p[1] for p in parts])]
            blocks.append(csr_matrix(np.log1p(np.array([p[2] for p in parts]))))
        if args.features != "words":
            blocks.append(csr_matrix(np.array([check_counts(e, vocabulary) for e in examples])))
        return hstack(blocks)

    x_train = features(train).tocsr()
    models = {
        lab: LogisticRegression(C=args.C, max_iter=2000).fit(x_train, [e.labels[lab] for e in train]) for lab in LABELS
    }
    results: dict[str, float] = {}
    pooled_gold, pooled_pred = [], []
    for split, examples in tests.items():
        x = features(examples).tocsr()
        cols = {lab: models[lab].predict(x) for lab in LABELS}
        pred = [{lab: bool(cols[lab][i]) for lab in LABELS} for i in range(len(examples))]
        gold = [dict(e.labels) for e in examples]
        results.update({f"{split}/{k}": round(v, 4) for k, v in citod_metrics(gold, pred).items()})
        pooled_gold += gold
        pooled_pred += pred
    results.update({f"all/{k}": round(v, 4) for k, v in citod_metrics(pooled_gold, pooled_pred).items()})
    title = {"words": "bag-of-words LR", "checks": "entity-check LR", "both": "bag-of-words + entity-check LR"}
    sys.stdout.write(to_markdown(results, title=title[args.features]))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=2)
    return 0


if __name__ == "__main__":
    from _cli import run

    sys.exit(run(main))
