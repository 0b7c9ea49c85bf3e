"""Metrics (pure functions) and benchmark evaluators."""

from .metrics import (
    accuracy,
    balanced_accuracy,
    best_threshold,
    evidence_f1,
    pair_evidence_counts,
    pair_evidence_f1,
    precision_recall_f1,
    roc_auc,
    strict_accuracy,
)

__all__ = [
    "accuracy",
    "balanced_accuracy",
    "best_threshold",
    "evidence_f1",
    "pair_evidence_counts",
    "pair_evidence_f1",
    "precision_recall_f1",
    "roc_auc",
    "strict_accuracy",
]
