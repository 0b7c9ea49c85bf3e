"""The CI-ToD benchmark (KBRetriever_DC): per-label precision/recall/F1 and overall accuracy.

As in the official evaluation script, each label's precision, recall and F1 are those of its positive class
over all evaluated dialogues, and the overall accuracy is the share of dialogues whose predicted (QI, HI, KBI)
triple equals the gold triple exactly. Values are fractions in [0, 1], like the paper's Table 3.

Splits: ``calendar``, ``navigate``, ``weather`` (the official test sets; ``all`` pools the ones evaluated, the
paper's setting), ``<domain>.dev`` (development sets) and ``kbi_probe``: KBI-free test dialogues whose reply
was edited by :func:`dialcheck.probes.kbi.synthesize_kbi` (seed 0), which measures KBI recall on known
inconsistencies and whether ``knowledge_evidence`` names the edited rows.
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ..datasets.base import data_dir as resolve_data_dir
from ..datasets.citod import DOMAINS, LABELS, load_citod
from ..schema import Example, Verdict
from .base import SplitEvaluator
from .metrics import accuracy, evidence_prf, precision_recall_f1

__all__ = ["PAPER", "TEST_SPLITS", "CitodEvaluator", "citod_metrics", "exact_match", "to_markdown"]

TEST_SPLITS = DOMAINS
SPLITS = (*DOMAINS, *(f"{d}.dev" for d in DOMAINS), "kbi_probe")

# Qin et al. 2021 Table 3 (BART, human) and later systems, on the three test sets together.
PAPER: dict[str, dict[str, float]] = {
    "BART (Qin et al. 2021)": {"QI_f1": 0.744, "HI_f1": 0.510, "KBI_f1": 0.761, "overall_accuracy": 0.513},
    "Human (Qin et al. 2021)": {"QI_f1": 0.962, "HI_f1": 0.805, "KBI_f1": 0.920, "overall_accuracy": 0.932},
    "CGIM": {"overall_accuracy": 0.563},
    "SGDCI": {"QI_f1": 0.791, "HI_f1": 0.635, "KBI_f1": 0.783, "overall_accuracy": 0.601},
    "MPFToD": {"overall_accuracy": 0.610},
}


def exact_match(gold: Sequence[Mapping[str, bool]], pred: Sequence[Mapping[str, bool]], labels: Sequence[str]) -> float:
    """Share of examples whose whole label set is right.

    (QI, HI, KBI) gold 100, 001, 000; predicted 100, 011, 000: two of three triples are exact.

    >>> g = [{"QI": 1, "HI": 0, "KBI": 0}, {"QI": 0, "HI": 0, "KBI": 1}, {"QI": 0, "HI": 0, "KBI": 0}]
    >>> p = [{"QI": 1, "HI": 0, "KBI": 0}, {"QI": 0, "HI": 1, "KBI": 1}, {"QI": 0, "HI": 0, "KBI": 0}]
    >>> round(exact_match(g, p, ["QI", "HI", "KBI"]), 4)
    0.6667
    """
    if len(gold) != len(pred):
        raise ValueError(f"{len(gold)} gold label sets but {len(pred)} predictions")
    hits = [all(bool(g[lab]) == bool(p[lab]) for lab in labels) for g, p in zip(gold, pred, strict=True)]
    return accuracy([True] * len(hits), hits)


def citod_metrics(
    gold: Sequence[Mapping[str, bool]], pred: Sequence[Mapping[str, bool]], labels: Sequence[str] = LABELS
) -> dict[str, float]:
    """Per-label precision/recall/F1 of the positive class and overall (exact-match) accuracy.

    Four dialogues, gold QI 1 1 0 0 / HI 0 0 0 1 / KBI 1 0 1 0, predicted QI 1 0 0 0 / HI 0 0 1 1 /
    KBI 1 0 1 1. QI: TP 1, FN 1, so P 1, R 0.5, F1 2/3. HI: TP 1, FP 1, so P 0.5, R 1, F1 2/3. KBI: TP 2,
    FP 1, so P 2/3, R 1, F1 0.8. Exact triples: dialogues 1 and 2 have (1,0,1)=(1,0,1) and (1,0,0)≠(0,0,0),
    3 has (0,0,1)≠(0,1,1), 4 has (0,1,0)≠(0,1,1): one of four, 0.25.

    >>> g = [dict(QI=1, HI=0, KBI=1), dict(QI=1, HI=0, KBI=0), dict(QI=0, HI=0, KBI=1), dict(QI=0, HI=1, KBI=0)]
    >>> p = [dict(QI=1, HI=0, KBI=1), dict(QI=0, HI=0, KBI=0), dict(QI=0, HI=1, KBI=1), dict(QI=0, HI=1, KBI=1)]
    >>> m = citod_metrics(g, p)
    >>> [round(m[k], 4) for k in ("QI_precision", "QI_recall", "QI_f1", "HI_f1", "KBI_precision", "KBI_f1")]
    [1.0, 0.5, 0.6667, 0.6667, 0.6667, 0.8]
    >>> m["overall_accuracy"], m["n"]
    (0.25, 4.0)
    """
    out: dict[str, float] = {"n": float(len(gold))}
    for lab in labels:
        p, r, f = precision_recall_f1([bool(x[lab]) for x in gold], [bool(x[lab]) for x in pred])
        out.update({f"{lab}_precision": p, f"{lab}_recall": r, f"{lab}_f1": f})
    out["overall_accuracy"] = exact_match(gold, pred, labels)
    return out


class CitodEvaluator(SplitEvaluator):
    """Runs a grounded detector on CI-ToD splits; returns ``{"split/metric": value}`` (fractions).

    ``primary_metric`` is ``all/overall_accuracy``: the exact triple on the three test sets together.
    """

    known_splits = tuple(SPLITS)
    primary_metric = "all/overall_accuracy"
    default_splits = (*TEST_SPLITS, "kbi_probe")
    default_batch_size = 32

    def _examples(self, split: str, limited: bool = True) -> list[Example]:
        root = resolve_data_dir(self.data_dir)
        domain, _, kind = split.partition(".")
        examples = load_citod(root, domain, kind or "test")
        return examples[: self.limit] if self.limit and limited else examples

    def probe(self) -> tuple[list[Example], list[tuple[int, ...]]]:
        """The KBI probe set (from the whole test sets, seed 0) and each item's edited rows; with ``limit`` N, its
        first N dialogues, those a full run begins with. (It was made from the first N dialogues of each test set,
        of which only the KBI-free ones become probe dialogues: ``--limit 4`` evaluated 3, ``--limit 50`` 28.)"""
        from ..probes.kbi import kbi_examples

        rng = random.Random(0)
        items = [pair for d in TEST_SPLITS for pair in kbi_examples(self._examples(d, limited=False), rng)]
        items = items[: self.limit] if self.limit else items
        return [e for e, _ in items], [edit.rows for _, edit in items]

    def split_datasets(self, split: str) -> tuple[str, ...]:
        if split == "kbi_probe":  # made from the three test sets
            return tuple(f"citod.{d}.test.v1" for d in TEST_SPLITS)
        domain, _, kind = split.partition(".")
        return (f"citod.{domain}.{kind or 'test'}.v1",)

    def __call__(self, detector: Any, show_progress_bar: bool = False) -> dict[str, float]:
        self.require_split_files()
        results: dict[str, float] = {}
        pooled: list[tuple[Example, Verdict]] = []
        for split in self.splits:
            gold_rows: list[tuple[int, ...]] = []
            if split == "kbi_probe":
                examples, gold_rows = self.probe()
                self.require_examples(split, examples)
            else:
                examples = self.require_examples(split, self._examples(split))
            t0 = time.perf_counter()
            verdicts = detector.predict(
                [e.dialogue for e in examples],
                batch_size=self.batch_size,
                show_progress_bar=show_progress_bar,
                evidence=split == "kbi_probe",
            )
            seconds = time.perf_counter() - t0
            self.predictions[split] = list(zip(examples, verdicts, strict=True))
            metrics = citod_metrics([e.labels or {} for e in examples], [v.labels or {} for v in verdicts])
            if split == "kbi_probe":
                metrics = {"n": metrics["n"], "KBI_recall": metrics["KBI_recall"]}
                prf = [evidence_prf(g, v.knowledge_evidence or ()) for g, v in zip(gold_rows, verdicts, strict=True)]
                flagged = [(x, v) for x, v in zip(prf, verdicts, strict=True) if v.labels and v.labels["KBI"]]
                metrics["flagged"] = float(len(flagged))
                if flagged:  # of the flagged: with none flagged there is nothing to measure (it said 0.000)
                    metrics["kb_evidence_f1"] = sum(x[2] for x, _ in flagged) / len(flagged)
                    metrics["kb_evidence_hit"] = sum(x[0] > 0 for x, _ in flagged) / len(flagged)
            for k, v in metrics.items():
                results[f"{split}/{k}"] = round(v, 4) if k not in ("n", "flagged") else v
            results[f"{split}/dialogues_per_s"] = round(len(examples) / max(seconds, 1e-9), 1)
            if split in TEST_SPLITS:
                pooled.extend(self.predictions[split])
        if pooled:
            m = citod_metrics([e.labels or {} for e, _ in pooled], [v.labels or {} for _, v in pooled])
            results.update({f"all/{k}": round(v, 4) if k != "n" else v for k, v in m.items()})
        return results

    def primary_of(self, results: dict[str, Any]) -> str:
        """As :meth:`SplitEvaluator.primary_of`; with the KBI probe alone (``--splits kbi_probe``), which has no
        overall accuracy, its KBI recall.

        >>> CitodEvaluator(["kbi_probe"]).primary_of({"kbi_probe/n": 3.0, "kbi_probe/KBI_recall": 0.5})
        'kbi_probe/KBI_recall'
        """
        key = super().primary_of(results)
        return key if key in results or "kbi_probe/KBI_recall" not in results else "kbi_probe/KBI_recall"

    def gold(self, example: Example) -> dict[str, Any]:
        return {"gold": dict(example.labels or {})}


def to_markdown(results: Mapping[str, float], title: str = "ours") -> str:
    """Our numbers per test set and pooled, then the published ones on the pooled test set."""
    head = "| | n | QI P / R / F1 | HI P / R / F1 | KBI P / R / F1 | overall acc. |"
    lines = [head, "|---|---:|---|---|---|---:|"]

    def prf(split: str, lab: str) -> str:
        vals = [results.get(f"{split}/{lab}_{m}") for m in ("precision", "recall", "f1")]
        return " / ".join("" if v is None else f"{v:.3f}" for v in vals)

    for split in (*TEST_SPLITS, "all", *(f"{d}.dev" for d in DOMAINS)):
        if f"{split}/overall_accuracy" not in results:
            continue
        name = f"{title}: {split}" + (" (unseen in training)" if split == "weather" else "")
        n = int(results.get(f"{split}/n", 0))
        cells = " | ".join(prf(split, lab) for lab in LABELS)
        lines.append(f"| {name} | {n} | {cells} | {results[f'{split}/overall_accuracy']:.3f} |")
    for name, ref in PAPER.items():
        cells = " | ".join(f"F1 {ref[f'{lab}_f1']:.3f}" if f"{lab}_f1" in ref else "" for lab in LABELS)
        lines.append(f"| {name}: all | 318 | {cells} | {ref['overall_accuracy']:.3f} |")
    if "kbi_probe/n" in results:

        def of_flagged(key: str) -> str:  # none flagged: nothing to measure
            v = results.get(f"kbi_probe/{key}")
            return "none flagged" if v is None else f"{v:.3f}"

        lines += [
            "",
            "| KBI probe (test dialogues with one knowledge value edited) | value |",
            "|---|---:|",
            f"| dialogues | {int(results['kbi_probe/n'])} |",
            f"| KBI recall | {results['kbi_probe/KBI_recall']:.3f} |",
            f"| knowledge evidence hits an edited row (of flagged) | {of_flagged('kb_evidence_hit')} |",
            f"| knowledge evidence F1 (of flagged) | {of_flagged('kb_evidence_f1')} |",
        ]
    return "\n".join(lines) + "\n"
