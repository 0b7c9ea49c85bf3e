"""The DECODE benchmark: the paper's metrics on every split we have.

- ``dev`` (rebuilt; stands in for the missing main test): accuracy, strict accuracy (label and evidence
  set both exact), supporting-evidence F1 as the authors' evaluation script computes it (F1 over every
  scored pair of every dialogue: :func:`~dialcheck.evaluation.metrics.pair_evidence_f1`) and, beside it,
  ``evidence_f1_per_example`` (the mean evidence-set F1 over the contradictions; not in the paper).
  The 8 dev contradictions whose evidence could not be recovered count for accuracy only.
- ``human_bot``: accuracy on the 764 bot last turns.
- ``rct``: accuracy (every example is a non-contradiction).
- ``a2t``: accuracy (every example is a contradiction) and strict accuracy, built from dev with seed 0.
- ``human_bot_raw``: every bot turn of the human-bot conversations (paper appendix F): precision, recall,
  F1 of the contradiction class and ROC AUC of the score.
- your own labelled dialogues (``files``; ``dialcheck evaluate --data FILE``), named after the file:
  accuracy, balanced accuracy, precision, recall and F1 of the contradiction class (each where defined:
  precision when something was flagged, recall when a contradiction is among them), ROC AUC when both
  classes occur, and strict accuracy and evidence F1 when contradictions name their evidence turns.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from ..datasets import load_dataset
from ..detectors.base import Detector
from ..schema import Example, Verdict
from .base import SplitEvaluator
from .metrics import (
    accuracy,
    balanced_accuracy,
    defined_prf,
    evidence_f1,
    pair_evidence_counts,
    pair_evidence_f1,
    roc_auc,
    strict_accuracy,
)

__all__ = ["PAPER", "SPLITS", "DecodeEvaluator", "decode_metrics", "to_markdown"]

SPLITS = {
    "dev": "decode.dev.v1",
    "human_bot": "decode.human_bot.v1",
    "rct": "decode.rct.v1",
    "a2t": "decode.a2t.v1",
    "human_bot_raw": "decode.human_bot_raw.v1",
}

# Nie et al. 2021, RoBERTa-large trained on DECODE (Tables 3-4, appendix F). Main test stands beside our dev.
PAPER = {
    "decode.utterance.v1": {
        "dev/accuracy": 93.19,
        "dev/strict_accuracy": 80.86,
        "dev/evidence_f1": 87.5,
        "human_bot/accuracy": 84.69,
        "a2t/accuracy": 91.5,
        "rct/accuracy": 78.4,
        "human_bot_raw/precision": 23.94,
        "human_bot_raw/recall": 74.28,
        "human_bot_raw/f1": 36.21,
        "human_bot_raw/roc_auc": 87.16,
    },
    "decode.unstructured.v1": {"dev/accuracy": 96.85, "human_bot/accuracy": 70.03, "rct/accuracy": 34.4},
}


def decode_metrics(
    split: str, examples: Sequence[Example], verdicts: Sequence[Verdict], evidence: bool = True
) -> dict[str, float]:
    """The metrics of one split from gold examples and verdicts (percentages).

    ``evidence=False`` (a detector that names no evidence turns, e.g. the unstructured one) leaves out
    strict accuracy and the evidence F1s, which would count every detected contradiction as wrong.
    """
    gold = [e.label for e in examples]
    pred = [v.contradiction for v in verdicts]
    out: dict[str, float] = {"n": float(len(examples)), "accuracy": 100 * accuracy(gold, pred)}
    own = split not in SPLITS  # the user's labelled dialogues: every metric their labels allow
    # precision, recall and F1 where defined: nothing flagged has no precision, no contradiction no recall (a file of
    # consistent dialogues, or a --limit, left alone by a detector is not "precision, recall, F1 0")
    prf = {k: 100 * v for k, v in defined_prf(gold, pred).items()}
    if own:
        out["balanced_accuracy"] = 100 * balanced_accuracy(gold, pred)
        out.update(prf)
        if 0 < sum(gold) < len(gold):
            out["roc_auc"] = 100 * roc_auc(gold, [v.score for v in verdicts])
    if split == "human_bot_raw":
        out.update(prf)
        if 0 < sum(gold) < len(gold):  # undefined with one class (a --limit of a few dialogues): left out, not NaN
            out["roc_auc"] = 100 * roc_auc(gold, [v.score for v in verdicts])
        return out
    if split in ("dev", "human_bot"):
        out.update(prf)
    with_evidence = [(e, v) for e, v in zip(examples, verdicts, strict=True) if not e.label or e.evidence is not None]
    named = own and any(e.label and e.evidence is not None for e in examples)
    if (split in ("dev", "a2t") or named) and with_evidence and evidence:
        predicted = [v.evidence if v.contradiction else () for _, v in with_evidence]
        out["strict_accuracy"] = 100 * strict_accuracy(
            [e.label for e, _ in with_evidence],
            [v.contradiction for _, v in with_evidence],
            [e.evidence for e, _ in with_evidence],
            predicted,
        )
        gold_sets = [e.evidence or () for e, _ in with_evidence]
        paired = [list(v.pair_scores) if v.pair_scores else None for _, v in with_evidence]
        out["evidence_f1"] = 100 * pair_evidence_f1(gold_sets, predicted, paired)
        # where the pairs behind it are lost: false alarms, extra turns, missed contradictions, wrong turns
        for k, n in pair_evidence_counts(gold_sets, predicted, paired).items():
            out[f"evidence_pairs/{k}"] = float(n)
        pos = [(e, p) for (e, _), p in zip(with_evidence, predicted, strict=True) if e.label]
        out["evidence_f1_per_example"] = 100 * evidence_f1([e.evidence or () for e, _ in pos], [p for _, p in pos])
        out["n_without_evidence"] = float(len(examples) - len(with_evidence))
    return out


class DecodeEvaluator(SplitEvaluator):
    """Runs a detector on the DECODE splits and returns ``{"split/metric": value}`` (percentages).

    ``primary_metric`` is human-bot accuracy: real bot contradictions, out of the training domain.
    """

    known_splits = tuple(SPLITS)
    file_category = False  # the user's labelled files: contradiction or not, evidence optional
    primary_metric = "human_bot/accuracy"
    default_splits = tuple(SPLITS)

    def split_datasets(self, split: str) -> tuple[str, ...]:
        return (SPLITS[split],)

    def __call__(self, detector: Detector, show_progress_bar: bool = False) -> dict[str, float]:
        self.require_split_files()
        results: dict[str, float] = {}
        for split in [*self.splits, *self.files]:
            examples = self.files[split] if split in self.files else load_dataset(SPLITS[split], self.data_dir)
            examples = self.require_examples(split, examples)
            if self.limit:
                examples = examples[: self.limit]
            if split in self.skipped:
                results[f"{split}/skipped"] = float(len(self.skipped[split]))
            t0 = time.perf_counter()
            verdicts = detector.predict(
                [e.dialogue for e in examples],
                batch_size=self.batch_size,
                show_progress_bar=show_progress_bar,
            )
            seconds = time.perf_counter() - t0
            self.predictions[split] = list(zip(examples, verdicts, strict=True))
            for k, v in decode_metrics(split, examples, verdicts, detector.names_evidence).items():
                results[f"{split}/{k}"] = round(v, 2) if k != "n" else v
            results[f"{split}/dialogues_per_s"] = round(len(examples) / max(seconds, 1e-9), 1)
        return results

    def gold(self, example: Example) -> dict[str, Any]:
        return {"gold": example.label, "gold_evidence": example.evidence}


_ROWS = [
    ("dev", "n", "Dev (rebuilt) dialogues"),
    ("dev", "accuracy", "Dev (rebuilt) accuracy [paper: main test]"),
    ("dev", "strict_accuracy", "Dev strict accuracy [paper: main test]"),
    ("dev", "evidence_f1", "Dev supporting-evidence F1 [paper: main test]"),
    ("dev", "evidence_f1_per_example", "Dev evidence F1, mean per contradiction (not in the paper)"),
    ("human_bot", "n", "Human-bot dialogues"),
    ("human_bot", "accuracy", "Human-bot accuracy"),
    ("a2t", "n", "A2T dialogues"),
    ("a2t", "accuracy", "A2T accuracy"),
    ("rct", "n", "RCT dialogues"),
    ("rct", "accuracy", "RCT accuracy"),
    ("human_bot_raw", "n", "Raw human-bot bot turns"),
    ("human_bot_raw", "precision", "Raw human-bot precision"),
    ("human_bot_raw", "recall", "Raw human-bot recall"),
    ("human_bot_raw", "f1", "Raw human-bot F1"),
    ("human_bot_raw", "roc_auc", "Raw human-bot ROC AUC"),
]


_OWN_ROWS = [
    ("n", "dialogues"),
    ("skipped", "bad records skipped"),
    ("accuracy", "accuracy"),
    ("balanced_accuracy", "balanced accuracy"),
    ("precision", "precision"),
    ("recall", "recall"),
    ("f1", "F1"),
    ("roc_auc", "ROC AUC"),
    ("strict_accuracy", "strict accuracy"),
    ("evidence_f1", "supporting-evidence F1"),
    ("n_without_evidence", "contradictions without evidence turns (not in strict accuracy, evidence F1)"),
]


def paper_detector(det: Any) -> str:
    """The detector kind whose paper numbers ``det``'s are compared with: its own, or for a cascade whose two
    stages are of one kind in the paper (the default: two utterance-based detectors), theirs.

    >>> from dialcheck.detectors import UtteranceDetector
    >>> paper_detector(UtteranceDetector())
    'decode.utterance.v1'
    """
    kind = str(det.config.detector)
    if kind in PAPER or not hasattr(det, "first") or not hasattr(det, "second"):
        return kind
    stages = {str(det.first.config.detector), str(det.second.config.detector)}
    return stages.pop() if len(stages) == 1 and stages <= set(PAPER) else kind


def to_markdown(results: dict[str, float], detector: str = "decode.utterance.v1", title: str = "ours") -> str:
    """A Markdown table of our numbers beside the paper's."""
    paper = PAPER.get(detector, {})
    lines = [f"| metric | {title} | paper (RoBERTa-large) |", "|---|---:|---:|"]
    own = sorted({k.split("/")[0] for k in results if "/" in k} - set(SPLITS))
    rows = [*_ROWS, *((s, m, f"{s}: {label}") for s in own for m, label in _OWN_ROWS)]
    for split, metric, label in rows:
        key = f"{split}/{metric}"
        if key not in results:
            continue
        ref = paper.get(key)
        value = f"{results[key]:.0f}" if metric in ("n", "skipped", "n_without_evidence") else f"{results[key]:.2f}"
        lines.append(f"| {label} | {value} | {'' if ref is None else f'{ref:.2f}'} |")
    return "\n".join(lines) + "\n"
