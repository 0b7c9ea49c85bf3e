"""Pure metric functions. Each has a hand-computed example that runs as a doctest.

>>> accuracy([True, False, True, True], [True, False, False, True])
0.75
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

__all__ = [
    "accuracy",
    "balanced_accuracy",
    "best_threshold",
    "defined_prf",
    "evidence_f1",
    "evidence_prf",
    "pair_evidence_counts",
    "pair_evidence_f1",
    "precision_recall_f1",
    "roc_auc",
    "strict_accuracy",
]


def accuracy(gold: Sequence[bool], pred: Sequence[bool]) -> float:
    """Share of equal labels.

    >>> accuracy([1, 0], [1, 1])
    0.5
    """
    if len(gold) != len(pred):
        raise ValueError(f"{len(gold)} gold labels but {len(pred)} predictions")
    if not len(gold):
        return 0.0
    return float(np.mean(np.asarray(gold, dtype=bool) == np.asarray(pred, dtype=bool)))


def precision_recall_f1(gold: Sequence[bool], pred: Sequence[bool]) -> tuple[float, float, float]:
    """Precision, recall and F1 of the positive class (0 where undefined).

    gold 1 1 0 0, pred 1 0 1 0: TP 1, FP 1, FN 1, so P = R = F1 = 0.5.

    >>> precision_recall_f1([1, 1, 0, 0], [1, 0, 1, 0])
    (0.5, 0.5, 0.5)
    >>> precision_recall_f1([1, 1, 1, 0], [1, 1, 0, 0])  # P 2/2, R 2/3, F1 0.8
    (1.0, 0.6666666666666666, 0.8)
    """
    g = np.asarray(gold, dtype=bool)
    p = np.asarray(pred, dtype=bool)
    tp = int((g & p).sum())
    fp = int((~g & p).sum())
    fn = int((g & ~p).sum())
    prec = tp / (tp + fp) if tp + fp else 0.0
    rec = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    return prec, rec, f1


def defined_prf(gold: Sequence[bool], pred: Sequence[bool]) -> dict[str, float]:
    """Precision, recall and F1 of the positive class, each only where it is defined: precision when something was
    predicted positive, recall when something is positive, F1 (2 TP / (2 TP + FP + FN)) when either. Where
    :func:`precision_recall_f1` gives 0, a report would say a detector that flagged nothing in dialogues without a
    positive had precision, recall and F1 0.

    gold 0 0, pred 0 0: none is defined. gold 0 0, pred 1 0: precision 0 (one false alarm), F1 0, no recall.

    >>> defined_prf([0, 0], [0, 0])
    {}
    >>> defined_prf([0, 0], [1, 0])
    {'precision': 0.0, 'f1': 0.0}
    >>> defined_prf([1, 1, 0], [1, 0, 0])  # P 1/1, R 1/2, F1 2/3
    {'precision': 1.0, 'recall': 0.5, 'f1': 0.6666666666666666}
    """
    g = np.asarray(gold, dtype=bool)
    p = np.asarray(pred, dtype=bool)
    if len(g) != len(p):
        raise ValueError(f"{len(g)} gold labels but {len(p)} predictions")
    tp, fp, fn = int((g & p).sum()), int((~g & p).sum()), int((g & ~p).sum())
    out: dict[str, float] = {}
    if tp + fp:
        out["precision"] = tp / (tp + fp)
    if tp + fn:
        out["recall"] = tp / (tp + fn)
    if tp + fp + fn:
        out["f1"] = 2 * tp / (2 * tp + fp + fn)
    return out


def balanced_accuracy(gold: Sequence[bool], pred: Sequence[bool]) -> float:
    """Mean of the recall on positives and the recall on negatives.

    gold 1 1 1 0, pred 1 1 0 1: recall+ 2/3, recall- 0, mean 1/3.

    >>> round(balanced_accuracy([1, 1, 1, 0], [1, 1, 0, 1]), 4)
    0.3333
    """
    g = np.asarray(gold, dtype=bool)
    p = np.asarray(pred, dtype=bool)
    parts = [float(p[g].mean()) if g.any() else None, float((~p[~g]).mean()) if (~g).any() else None]
    vals = [v for v in parts if v is not None]
    return float(np.mean(vals)) if vals else 0.0


def roc_auc(gold: Sequence[bool], scores: Sequence[float]) -> float:
    """Area under the ROC curve: the probability that a random positive outscores a random negative
    (ties count one half).

    Positives 0.9, 0.4; negatives 0.5, 0.1: of the 4 positive/negative pairs 3 are ordered right.

    >>> roc_auc([1, 1, 0, 0], [0.9, 0.4, 0.5, 0.1])
    0.75
    >>> roc_auc([1, 0], [0.5, 0.5])
    0.5
    """
    g = np.asarray(gold, dtype=bool)
    s = np.asarray(scores, dtype=float)
    n_pos, n_neg = int(g.sum()), int((~g).sum())
    if not n_pos or not n_neg:
        return float("nan")
    order = np.argsort(s, kind="mergesort")
    ranks = np.empty(len(s), dtype=float)
    sorted_s = s[order]
    i = 0
    while i < len(s):  # average ranks over ties
        j = i
        while j + 1 < len(s) and sorted_s[j + 1] == sorted_s[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return float((ranks[g].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def evidence_prf(gold: Sequence[int], pred: Sequence[int]) -> tuple[float, float, float]:
    """Precision, recall and F1 of one predicted evidence set against the gold set.

    >>> evidence_prf([2, 4], [4, 6])
    (0.5, 0.5, 0.5)
    >>> evidence_prf([2], [])
    (0.0, 0.0, 0.0)
    """
    g, p = set(gold), set(pred)
    if not g and not p:
        return 1.0, 1.0, 1.0
    tp = len(g & p)
    prec = tp / len(p) if p else 0.0
    rec = tp / len(g) if g else 0.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    return prec, rec, f1


def evidence_f1(gold: Sequence[Sequence[int]], pred: Sequence[Sequence[int]]) -> float:
    """Supporting-evidence F1: the mean over examples of each example's evidence-set F1.

    Use it over the gold contradictions with annotated evidence; a missed contradiction has an empty
    prediction and scores 0. Example: {2} vs {2} gives 1, {2, 4} vs {4, 6} gives 0.5, {1} vs {} gives 0.

    >>> evidence_f1([[2], [2, 4], [1]], [[2], [4, 6], []])
    0.5
    """
    if len(gold) != len(pred):
        raise ValueError(f"{len(gold)} gold evidence sets but {len(pred)} predictions")
    if not len(gold):
        return 0.0
    return float(np.mean([evidence_prf(g, p)[2] for g, p in zip(gold, pred, strict=True)]))


def pair_evidence_counts(
    gold: Sequence[Sequence[int]],
    pred: Sequence[Sequence[int]],
    candidates: Sequence[Sequence[int] | None] | None = None,
) -> dict[str, int]:
    """The (earlier turn, last turn) pair counts behind :func:`pair_evidence_f1`, split by where they arise.

    ``tp``: gold evidence predicted; ``fp_consistent``: pairs flagged in a dialogue without gold evidence (a
    false alarm); ``fp_extra``: pairs flagged beside the gold ones of a contradiction; ``fn_unflagged``: gold
    pairs of a dialogue with no predicted evidence (a missed contradiction); ``fn_flagged``: gold pairs missed
    in a dialogue whose prediction names other turns. ``candidates`` as in :func:`pair_evidence_f1`.

    Example: gold {2} predicted {2}; gold {2, 4} predicted {4, 6}; gold {} predicted {1}; gold {3} predicted {}.

    >>> c = pair_evidence_counts([[2], [2, 4], [], [3]], [[2], [4, 6], [1], []])
    >>> c == {"tp": 2, "fp_consistent": 1, "fp_extra": 1, "fn_unflagged": 1, "fn_flagged": 1}
    True
    """
    if len(gold) != len(pred):
        raise ValueError(f"{len(gold)} gold evidence sets but {len(pred)} predictions")
    if candidates is not None and len(candidates) != len(gold):
        raise ValueError(f"{len(gold)} gold evidence sets but {len(candidates)} candidate sets")
    c = dict.fromkeys(("tp", "fp_consistent", "fp_extra", "fn_unflagged", "fn_flagged"), 0)
    for k, (g_, p_) in enumerate(zip(gold, pred, strict=True)):
        g, p = set(g_), set(p_)
        cand = candidates[k] if candidates is not None else None
        if cand is not None:
            g &= set(cand)
        c["tp"] += len(g & p)
        c["fp_extra" if g else "fp_consistent"] += len(p - g)
        c["fn_flagged" if p else "fn_unflagged"] += len(g - p)
    return c


def pair_evidence_f1(
    gold: Sequence[Sequence[int]],
    pred: Sequence[Sequence[int]],
    candidates: Sequence[Sequence[int] | None] | None = None,
) -> float:
    """Supporting-evidence F1 as the DECODE paper computes it: F1 over every (earlier turn, last turn) pair.

    A pair is positive when its earlier turn is gold evidence and predicted positive when it is in the
    predicted evidence set (empty when the dialogue is not flagged); true positives, false positives and
    false negatives are summed over all dialogues (non-contradictions included, where every flagged pair
    is a false positive), and F1 = tp / (tp + (fp + fn) / 2), as in the authors' evaluation script.
    ``candidates`` (the turns each dialogue's detector paired, or None for all) drops gold turns that
    were never paired, as the script only visits pairs. :func:`pair_evidence_counts` splits the counts.

    Example: gold {2} predicted {2}; gold {2, 4} predicted {4, 6}; gold {} predicted {1}:
    tp = 2, fp = 2, fn = 1, F1 = 2 / 3.5 = 0.571.

    >>> round(pair_evidence_f1([[2], [2, 4], []], [[2], [4, 6], [1]]), 3)
    0.571
    >>> pair_evidence_f1([[2]], [[]], candidates=[[0]])  # gold turn 2 was never paired: nothing to find
    0.0
    """
    c = pair_evidence_counts(gold, pred, candidates)
    fp, fn = c["fp_consistent"] + c["fp_extra"], c["fn_unflagged"] + c["fn_flagged"]
    return c["tp"] / (c["tp"] + 0.5 * (fp + fn)) if c["tp"] else 0.0


def strict_accuracy(
    gold_labels: Sequence[bool],
    pred_labels: Sequence[bool],
    gold_evidence: Sequence[Sequence[int] | None],
    pred_evidence: Sequence[Sequence[int]],
) -> float:
    """Share of examples whose label is right and, for contradictions, whose evidence set is exact.

    1) non-contradiction predicted as such: right; 2) contradiction with evidence {3} predicted {3}:
    right; 3) contradiction with evidence {3} predicted {1, 3}: wrong; 4) missed contradiction: wrong.

    >>> strict_accuracy([0, 1, 1, 1], [0, 1, 1, 0], [[], [3], [3], [2]], [[], [3], [1, 3], []])
    0.5
    """
    n = len(gold_labels)
    if not (n == len(pred_labels) == len(gold_evidence) == len(pred_evidence)):
        raise ValueError("all four sequences must have the same length")
    if not n:
        return 0.0
    ok = 0
    for gl, pl, ge, pe in zip(gold_labels, pred_labels, gold_evidence, pred_evidence, strict=True):
        if bool(gl) != bool(pl):
            continue
        if gl and set(ge or ()) != set(pe):
            continue
        ok += 1
    return ok / n


def best_threshold(
    scores: Sequence[float],
    gold: Sequence[bool],
    metric: Callable[[Sequence[bool], Sequence[bool]], float],
    one_se: bool = False,
) -> tuple[float, float]:
    """The threshold t (predict ``score >= t``) that maximises ``metric``, and the value reached.

    Candidates are midpoints between consecutive distinct scores; ties go to the threshold nearest 0.5.
    With ``one_se``, the highest threshold within one standard error (sqrt(m(1-m)/n)) of the best.

    >>> best_threshold([0.1, 0.4, 0.6, 0.9], [0, 0, 1, 1], accuracy)
    (0.5, 1.0)
    """
    s = np.asarray(scores, dtype=float)
    g = np.asarray(gold, dtype=bool)
    if not len(s):
        return 0.5, 0.0
    u = np.unique(s)
    cands = np.concatenate([[u[0] - 1e-6], (u[:-1] + u[1:]) / 2, [u[-1] + 1e-6]]) if len(u) > 1 else np.array([0.5])
    if len(cands) > 2000:  # thin out: quantiles keep the resolution where the scores are
        cands = np.unique(np.quantile(s, np.linspace(0, 1, 2001)))
    best_t, best_v = 0.5, -1.0
    values = []
    for t in cands:
        v = metric(g, s >= t)
        values.append((float(t), v))
        if v > best_v + 1e-12 or (abs(v - best_v) <= 1e-12 and abs(t - 0.5) < abs(best_t - 0.5)):
            best_t, best_v = float(t), v
    if one_se:
        # The highest threshold whose value is within one standard error of the best (Breiman's rule):
        # on a flat validation curve, prefer fewer false alarms.
        floor = best_v - math.sqrt(max(best_v * (1 - best_v), 0.0) / len(s))
        best_t, best_v = max((t, v) for t, v in values if v >= floor - 1e-12)
    return round(best_t, 6), best_v
