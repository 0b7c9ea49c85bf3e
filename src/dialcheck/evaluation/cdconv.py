"""The CDConv benchmark (Zheng et al. 2022): 2-class and 4-class accuracy and macro-F1, per-category F1,
mean ± std over seeds, and the majority-class floor.

Labels are CDConv ids: 0 none, 1 intra-sentence, 2 role confusion, 3 history. The 2-class view merges
1-3 into "contradiction". Metric functions are pure and return fractions; :func:`cdconv_metrics` and the
evaluator return percentages, as the paper's Table 4 does.

>>> m = cdconv_metrics([0, 0, 1, 2, 3, 3], [0, 3, 1, 0, 3, 2])
>>> m["4class/accuracy"], m["2class/accuracy"]
(50.0, 66.67)
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..datasets.cdconv import LABEL_NAMES, label_of
from ..schema import Example, Verdict
from .base import SplitEvaluator
from .metrics import defined_prf

__all__ = [
    "PAPER",
    "SPLITS",
    "CDConvEvaluator",
    "cdconv_metrics",
    "f1_per_class",
    "macro_f1",
    "majority_floor",
    "mean_std",
    "to_markdown",
]

SPLITS = {
    "test": "cdconv.test.v1",
    "dev": "cdconv.dev.v1",
    "disjoint_test": "cdconv.disjoint.test.v1",
    "disjoint_dev": "cdconv.disjoint.dev.v1",
}

# Zheng et al. 2022, Table 4: hierarchical RoBERTa on the official test split (mean of four seeds).
PAPER = {
    "2class/accuracy": 80.4,
    "2class/macro_f1": 78.1,
    "4class/accuracy": 77.8,
    "4class/macro_f1": 59.3,
    "f1/non_contradiction": 85.1,
    "f1/intra_sentence": 33.0,
    "f1/role_confusion": 48.1,
    "f1/history": 71.0,
}
PAPER_MAJORITY_ACCURACY = 63.6


def f1_per_class(gold: Sequence[int], pred: Sequence[int], labels: Sequence[int]) -> dict[int, float]:
    """F1 of each class in ``labels`` (one-vs-rest; 0 where undefined).

    Class 1: gold at positions 0, 1, predicted at 0: TP 1, FN 1, F1 2/3. Class 2: gold at 2, predicted
    at 1, 2: TP 1, FP 1, F1 2/3. Class 0: never gold, never predicted: 0.

    >>> f1_per_class([1, 1, 2], [1, 2, 2], [0, 1, 2])
    {0: 0.0, 1: 0.6666666666666666, 2: 0.6666666666666666}
    """
    if len(gold) != len(pred):
        raise ValueError(f"{len(gold)} gold labels but {len(pred)} predictions")
    g = np.asarray(gold)
    p = np.asarray(pred)
    out = {}
    for c in labels:
        tp = int(((g == c) & (p == c)).sum())
        fp = int(((g != c) & (p == c)).sum())
        fn = int(((g == c) & (p != c)).sum())
        out[c] = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
    return out


def macro_f1(gold: Sequence[int], pred: Sequence[int], labels: Sequence[int] | None = None) -> float:
    """Unweighted mean of the per-class F1 over ``labels`` (default: every class in gold or pred).

    >>> macro_f1([0, 0, 1, 1], [0, 1, 1, 1])  # F1 class 0: 2/3, class 1: 4/5
    0.7333333333333334
    """
    labels = sorted(set(gold) | set(pred)) if labels is None else list(labels)
    if not labels:
        return 0.0
    return float(np.mean(list(f1_per_class(gold, pred, labels).values())))


def cdconv_metrics(gold: Sequence[int], pred: Sequence[int], present: bool = False) -> dict[str, float]:
    """The Table 4 columns (percentages, rounded to 2 places) from CDConv label ids 0-3.

    ``present``: the macro-F1s average the classes that occur in gold or predictions only, and ``f1/<class>`` is
    left out for a class that does neither (its F1 is undefined), as scikit-learn's macro average does; otherwise
    (the paper's setting, and training's criterion) all four classes (two for 2-class), an absent one as 0. On the
    official splits every class occurs and both agree; on a file or a ``--limit`` without, say, role confusions, a
    detector right on every conversation had a 4-class macro-F1 of 75.

    Hand-computed: gold 0 0 1 2 3 3, pred 0 3 1 0 3 2. 4-class: 3 of 6 right (50%); per-class F1:
    none 1/2 (TP 1, FP 1, FN 1), intra 1, role 0, history 1/2 (TP 1, FP 1, FN 1); macro 50.
    2-class (any contradiction): gold 0 0 1 1 1 1, pred 0 1 1 0 1 1: 4 of 6 right; F1 none 1/2,
    contradiction 3/4; macro 62.5.

    >>> m = cdconv_metrics([0, 0, 1, 2, 3, 3], [0, 3, 1, 0, 3, 2])
    >>> m["4class/macro_f1"], m["f1/intra_sentence"], m["f1/history"], m["2class/macro_f1"]
    (50.0, 100.0, 50.0, 62.5)
    >>> [cdconv_metrics([0, 3], [0, 3], present=x)["4class/macro_f1"] for x in (False, True)]
    [50.0, 100.0]
    """
    g = [int(x) for x in gold]
    p = [int(x) for x in pred]
    if len(g) != len(p):
        raise ValueError(f"{len(g)} gold labels but {len(p)} predictions")
    bad = sorted({x for x in g + p if x not in range(4)})
    if bad:
        raise ValueError(f"CDConv labels are 0-3, got {bad}")
    n = len(g)
    if not n:
        raise ValueError("no examples to score")
    g2 = [int(x > 0) for x in g]
    p2 = [int(x > 0) for x in p]
    per = f1_per_class(g, p, sorted(set(g) | set(p)) if present else range(4))
    out = {
        "n": float(n),
        "2class/accuracy": 100 * sum(a == b for a, b in zip(g2, p2, strict=True)) / n,
        "2class/macro_f1": 100 * macro_f1(g2, p2, None if present else [0, 1]),
        "4class/accuracy": 100 * sum(a == b for a, b in zip(g, p, strict=True)) / n,
        "4class/macro_f1": 100 * float(np.mean(list(per.values()))),
    }
    for c, f in per.items():
        out[f"f1/{LABEL_NAMES[c]}"] = 100 * f
    return {k: (v if k == "n" else round(v, 2)) for k, v in out.items()}


def majority_floor(gold: Sequence[int], train_gold: Sequence[int] | None = None) -> dict[str, float]:
    """:func:`cdconv_metrics` of always predicting the most frequent class (of ``train_gold`` if given,
    else of ``gold``). On the official test split this is 63.6 accuracy, the paper's floor.

    >>> majority_floor([0, 0, 0, 3])["4class/accuracy"]
    75.0
    """
    ref = list(train_gold) if train_gold is not None else list(gold)
    if not ref:
        raise ValueError("no labels to take the majority of")
    values, counts = np.unique(np.asarray(ref, dtype=int), return_counts=True)
    majority = int(values[int(np.argmax(counts))])
    return cdconv_metrics(gold, [majority] * len(gold))


def mean_std(runs: Sequence[Mapping[str, float]]) -> dict[str, tuple[float, float]]:
    """Mean and sample standard deviation (n-1; 0 for one run) of each metric over runs (seeds).

    >>> mean_std([{"acc": 80.0}, {"acc": 82.0}, {"acc": 84.0}])
    {'acc': (82.0, 2.0)}
    """
    if not runs:
        raise ValueError("no runs")
    keys = [k for k in runs[0] if all(k in r for r in runs)]
    out = {}
    for k in keys:
        vals = np.asarray([float(r[k]) for r in runs])
        std = float(vals.std(ddof=1)) if len(vals) > 1 else 0.0
        out[k] = (round(float(vals.mean()), 4), round(std, 4))
    return out


def verdict_label(v: Verdict) -> int:
    """The CDConv label id a verdict stands for (a contradiction without a category counts as history)."""
    if not v.contradiction:
        return 0
    return label_of(v.category) if v.category in LABEL_NAMES else 3


def example_label(e: Example) -> int:
    """The gold CDConv label id of an example."""
    if not e.label:
        return 0
    if e.category is None:
        raise ValueError(f"example {e.id or '?'} is a contradiction without a category: use a 4-class split")
    return label_of(e.category)


class CDConvEvaluator(SplitEvaluator):
    """Runs a four-category detector on CDConv splits; returns ``{"split/metric": value}`` (percentages).

    ``primary_metric`` is the official test 4-class macro-F1 (the issue's target metric).
    """

    known_splits = tuple(SPLITS)
    file_category = True  # the user's labelled files: each contradiction names its category
    reads_chinese = True  # a four-category detector: a record ending with a tool's result is a bad one
    primary_metric = "test/4class/macro_f1"
    default_splits = ("test",)

    def split_datasets(self, split: str) -> tuple[str, ...]:
        return (SPLITS[split],)

    def __call__(self, detector: Any, show_progress_bar: bool = False) -> dict[str, float]:
        from ..datasets import load_dataset

        self.require_split_files()
        results: dict[str, float] = {}
        for split in [*self.splits, *self.files]:
            examples = self.files[split] if split in self.files else load_dataset(SPLITS[split], self.data_dir)
            examples = self.require_examples(split, examples)
            examples = examples[: self.limit or None]
            if split in self.skipped:
                results[f"{split}/skipped"] = float(len(self.skipped[split]))
            t0 = time.perf_counter()
            verdicts = detector.predict(
                [e.dialogue for e in examples], batch_size=self.batch_size, show_progress_bar=show_progress_bar
            )
            seconds = time.perf_counter() - t0
            self.predictions[split] = list(zip(examples, verdicts, strict=True))
            gold = [example_label(e) for e in examples]
            # macro-F1 over the classes that occur: a file or a --limit without a category is not scored as 0 on it
            for k, v in cdconv_metrics(gold, [verdict_label(v) for v in verdicts], present=True).items():
                results[f"{split}/{k}"] = v
            results[f"{split}/majority_accuracy"] = majority_floor(gold)["4class/accuracy"]
            if split in self.files:  # the user's own conversations: how many contradictions and false alarms
                flagged = [v.contradiction for v in verdicts]
                prf = defined_prf([g > 0 for g in gold], flagged)  # no precision when none flagged, ...
                for k in ("precision", "recall"):
                    if k in prf:
                        results[f"{split}/2class/{k}"] = round(100 * prf[k], 2)
                results[f"{split}/false_alarms"] = float(sum(f for g, f in zip(gold, flagged, strict=True) if not g))
                for c, name in enumerate(LABEL_NAMES[1:], start=1):  # flagged at all, whatever category named
                    hits = [f for g, f in zip(gold, flagged, strict=True) if g == c]
                    if hits:
                        results[f"{split}/flagged/{name}"] = round(100 * sum(hits) / len(hits), 2)
            results[f"{split}/dialogues_per_s"] = round(len(examples) / max(seconds, 1e-9), 1)
        return results

    def gold(self, example: Example) -> dict[str, Any]:
        return {"gold": example_label(example), "gold_category": example.category}


def to_markdown(results: Mapping[str, Any], split: str = "test", title: str = "ours") -> str:
    """A Markdown table of one split's numbers (floats, or (mean, std) pairs) beside the paper's Table 4.

    >>> print(to_markdown({"test/4class/macro_f1": (50.0, 1.5)}).splitlines()[2])
    | 4-class macro-F1 | 50.00 ± 1.50 | 59.30 |
    """
    names = {
        "n": "conversations",
        "skipped": "bad records skipped",
        "2class/accuracy": "2-class accuracy",
        "2class/macro_f1": "2-class macro-F1",
        "2class/precision": "2-class precision (contradiction)",
        "2class/recall": "2-class recall (contradiction)",
        "false_alarms": "false alarms (consistent conversations flagged)",
        "flagged/history": "history contradictions flagged (%)",
        "flagged/role_confusion": "role confusions flagged (%)",
        "flagged/intra_sentence": "intra-sentence contradictions flagged (%)",
        "4class/accuracy": "4-class accuracy",
        "majority_accuracy": "4-class accuracy of always the most frequent label (the floor)",
        "4class/macro_f1": "4-class macro-F1",
        "f1/non_contradiction": "F1 none",
        "f1/intra_sentence": "F1 intra-sentence",
        "f1/role_confusion": "F1 role confusion",
        "f1/history": "F1 history",
    }
    # the paper's numbers are of the whole official test split, also beside a --limit run's first N conversations
    lines = [f"| metric | {title} | paper (hierarchical RoBERTa, whole test split) |", "|---|---:|---:|"]
    # a macro-F1 over fewer classes (cdconv_metrics(present=True): a file or --limit without a category) says so
    occur = sum(f"{split}/f1/{name}" in results for name in LABEL_NAMES)
    if 0 < occur < len(LABEL_NAMES):
        names["4class/macro_f1"] = f"4-class macro-F1 (over the {occur} classes that occur)"
    for key, label in names.items():
        v = results.get(f"{split}/{key}")
        if v is None:
            continue
        if isinstance(v, tuple):
            cell = f"{v[0]:.2f} ± {v[1]:.2f}"
        else:
            cell = f"{int(v)}" if key in ("n", "skipped", "false_alarms") else f"{float(v):.2f}"  # a count
        ref = {**PAPER, "majority_accuracy": PAPER_MAJORITY_ACCURACY}.get(key) if split == "test" else None
        lines.append(f"| {label} | {cell} | {'' if ref is None or math.isnan(ref) else f'{ref:.2f}'} |")
    return "\n".join(lines) + "\n"
