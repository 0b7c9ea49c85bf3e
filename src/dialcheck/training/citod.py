"""Training the CI-ToD grounded detector: data (train splits + KBI synthesis), the multi-label fit, provenance.

The labelled weather train file was never released, so the default training domains are calendar and
navigate; their dev sets drive early stopping. Weather stays unseen in training (its dev and test sets are
only ever evaluated). ``augment=("kbi",)`` adds, for every KBI-free train dialogue where a safe edit exists,
a copy whose reply has one knowledge value replaced (:mod:`dialcheck.probes.kbi`), labelled KBI.
"""

from __future__ import annotations

import json
import logging
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..datasets.base import data_dir as resolve_data_dir
from ..datasets.citod import DOMAINS, LABELS, ROOT, load_citod
from ..detectors.grounded import GroundedDetector
from ..errors import InputError
from ..evaluation.citod import citod_metrics
from ..probes.kbi import kbi_examples
from ..schema import Example
from .trainer import TrainConfig, fit_pair_model, rounded_metrics, seed_everything

__all__ = [
    "AUGMENTATIONS",
    "CitodTrainingData",
    "build_citod_training_data",
    "calibrate_thresholds",
    "check_vocabulary",
    "label_matrix",
    "top_layer_targets",
    "train_grounded",
]

log = logging.getLogger(__name__)

AUGMENTATIONS = ("kbi",)


@dataclass
class CitodTrainingData:
    """Train and validation examples with their counts."""

    train: list[Example]
    validation: list[Example]
    counts: dict[str, Any] = field(default_factory=dict)


def _vocabulary(root: Path) -> dict[str, list[str]]:
    path = root / ROOT / "entities.json"
    if not path.exists():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return {str(k): [str(v) for v in vs] for k, vs in data.items() if isinstance(vs, list)}


def check_vocabulary(data_dir: str | Path | None = None) -> dict[str, list[str]]:
    """Entity type -> values for the grounded detector's ``checks``: CI-ToD's ``entities.json`` plus the
    relative days ("today", "tomorrow", ...) of ``kvret_entities.json`` as dates. Empty if neither exists.
    """
    root = resolve_data_dir(data_dir)
    vocab = {k: sorted(set(v)) for k, v in _vocabulary(root).items()}
    kvret = root / ROOT / "kvret_entities.json"
    if kvret.exists():
        extra = json.loads(kvret.read_text(encoding="utf-8")).get("weekly_time", [])
        vocab["date"] = sorted(set(vocab.get("date", [])) | {str(v) for v in extra})
    return vocab


def build_citod_training_data(
    data_dir: str | Path | None = None,
    domains: Sequence[str] = ("calendar", "navigate"),
    augment: Sequence[str] = ("kbi",),
    seed: int = 0,
    limit: int | None = None,
) -> CitodTrainingData:
    """Train splits of ``domains`` (+ augmentation) and their dev splits for validation."""
    unknown = set(domains) - set(DOMAINS)
    if unknown:
        raise InputError(f"unknown CI-ToD domain(s) {sorted(unknown)}; known: {', '.join(DOMAINS)}")
    if "weather" in domains:
        raise InputError("there is no labelled weather train split (never released); train on calendar,navigate")
    bad = set(augment) - set(AUGMENTATIONS)
    if bad:
        raise InputError(f"unknown augmentation(s) {sorted(bad)} for CI-ToD; known: {', '.join(AUGMENTATIONS)}")
    root = resolve_data_dir(data_dir)
    train = [e for d in domains for e in load_citod(root, d, "train")]
    validation = [e for d in domains for e in load_citod(root, d, "dev")]
    if limit:
        rng = random.Random(seed)
        train = rng.sample(train, min(limit, len(train)))
    counts: dict[str, Any] = {"train_dialogues": len(train), "validation_dialogues": len(validation)}
    if "kbi" in augment:
        synth = [e for e, _ in kbi_examples(train, random.Random(seed), _vocabulary(root))]
        counts["kbi_synthesized"] = len(synth)
        train = train + synth
    counts["train_examples"] = len(train)
    counts["train_positives"] = dict(Counter(lab for e in train for lab in LABELS if e.labels and e.labels[lab]))
    return CitodTrainingData(train, validation, counts)


def top_layer_targets(base: str, n: int) -> str:
    """A LoRA ``target_modules`` regex for the attention and feed-forward layers of the top ``n`` encoder
    layers of ``base`` (all of them if it has fewer).

    >>> import re
    >>> rx = top_layer_targets("all-MiniLM-L6-v2", 2)
    >>> [bool(re.fullmatch(rx, f"base_model.model.bert.encoder.layer.{i}.attention.self.query")) for i in (0, 3, 4, 5)]
    [False, False, True, True]
    """
    import json as _json

    from ..backbones import resolve_base

    cfg = _json.loads((resolve_base(base) / "config.json").read_text(encoding="utf-8"))
    total = int(cfg.get("num_hidden_layers") or cfg.get("n_layers") or cfg.get("num_layers"))
    layers = "|".join(str(i) for i in range(max(0, total - n), total))
    return rf".*(encoder|layers|layer)\.({layers})\..*\.(query|key|value|q|k|v|o|q_proj|k_proj|v_proj|o_proj|dense)$"


def label_matrix(examples: Sequence[Example], labels: Sequence[str] = LABELS) -> np.ndarray:
    """0/1 targets of shape (n, len(labels)), in the detector's label order.

    >>> from dialcheck.schema import Dialogue
    >>> d = Dialogue.from_texts(["hi"])
    >>> label_matrix([Example(d, True, labels={"QI": True, "HI": False, "KBI": True})], ["KBI", "QI", "HI"])
    array([[1., 1., 0.]], dtype=float32)
    """
    rows = []
    for e in examples:
        if e.labels is None:
            raise ValueError(f"example {e.id!r} has no multi-label gold")
        rows.append([1.0 if e.labels[lab] else 0.0 for lab in labels])
    return np.asarray(rows, dtype=np.float32).reshape(len(rows), len(labels))


def validation_score(metrics: dict[str, float]) -> float:
    """Early-stopping criterion: the mean of overall accuracy and the mean per-label F1 (steadier than
    accuracy alone on ~200 dev dialogues).

    >>> validation_score({"overall_accuracy": 0.5, "QI_f1": 0.7, "HI_f1": 0.4, "KBI_f1": 0.7})
    0.55
    """
    f1 = sum(metrics[f"{lab}_f1"] for lab in LABELS) / len(LABELS)
    return round((metrics["overall_accuracy"] + f1) / 2, 6)


def calibrate_thresholds(
    gold: Sequence[dict[str, bool]],
    probs: np.ndarray,
    labels: Sequence[str] = LABELS,
    grid: Sequence[float] = tuple(round(0.1 + 0.05 * i, 2) for i in range(17)),
    rounds: int = 2,
) -> dict[str, float]:
    """Per-label thresholds (from ``grid``, 0.1..0.9) that maximise :func:`validation_score` on validation
    dialogues, by coordinate ascent from 0.5 (``rounds`` passes over the labels; ties keep the value nearer 0.5).

    A short training run leaves scores that rank well but sit near the label priors, so at 0.5 a minority
    label (HI) may never fire; this moves each cut to where the validation set says it separates best.

    >>> gold = [dict(QI=1, HI=0, KBI=1), dict(QI=0, HI=1, KBI=0), dict(QI=0, HI=0, KBI=1), dict(QI=1, HI=0, KBI=0)]
    >>> probs = np.array([[.45, .1, .7], [.2, .35, .3], [.3, .2, .6], [.42, .1, .2]])
    >>> calibrate_thresholds(gold, probs)
    {'QI': 0.4, 'HI': 0.35, 'KBI': 0.5}
    """
    probs = np.asarray(probs, dtype=np.float64)
    cut = {lab: 0.5 for lab in labels}

    def score() -> float:
        pred = [{lab: bool(p[j] >= cut[lab]) for j, lab in enumerate(labels)} for p in probs]
        return validation_score(citod_metrics(gold, pred, labels))

    best = score()
    for _ in range(rounds):
        for lab in labels:
            for t in sorted(grid, key=lambda x: abs(x - 0.5)):
                old, cut[lab] = cut[lab], t
                s = score()
                if s > best + 1e-9:
                    best = s
                else:
                    cut[lab] = old
    return {lab: float(cut[lab]) for lab in labels}


def train_grounded(
    detector: GroundedDetector,
    data: CitodTrainingData,
    config: TrainConfig | None = None,
    data_info: dict[str, Any] | None = None,
    show_progress_bar: bool = False,
    resume_dir: str | Path | None = None,
    resume: bool = False,
) -> GroundedDetector:
    """Fit ``detector`` (new weights from its config) on ``data.train`` with binary cross-entropy, keep the
    weights with the best validation score, and record the provenance in its config.

    ``resume_dir`` / ``resume``: keep the training state / continue an interrupted run (as in
    :func:`~dialcheck.training.trainer.fit_pair_model`).

    With ``config.extra["calibrate_thresholds"]`` the per-label thresholds are then set on the validation
    dialogues (:func:`calibrate_thresholds`) instead of the paper's 0.5."""
    from ..detectors.modeling import build_model

    cfg = config or TrainConfig()
    if not data.train:
        raise ValueError("no training examples")
    seed_everything(cfg.seed)  # the new head (and LoRA matrices) are drawn from the run's seed
    model, tok = build_model(detector.config)
    detector.attach(model, tok)
    clf = detector.classifier
    inputs = [detector.build(e.dialogue) for e in data.train]
    texts = [(x.first, x.second) for x in inputs]
    targets = label_matrix(data.train, clf.labels)
    val = list(data.validation)

    def evaluate() -> dict[str, float]:
        verdicts = detector.predict([e.dialogue for e in val], batch_size=32, evidence=False)
        m = citod_metrics([e.labels or {} for e in val], [v.labels or {} for v in verdicts])
        out = {f"val_{k}": v for k, v in m.items() if k != "n"}
        out["val_score"] = validation_score(m)
        return out

    res = fit_pair_model(
        clf,
        texts,
        targets,
        cfg,
        evaluate if val else None,
        metric="val_score",
        show_progress_bar=show_progress_bar,
        resume_dir=resume_dir,
        resume=resume,
    )
    if val and cfg.extra.get("calibrate_thresholds"):
        xs = [detector.build(e.dialogue) for e in val]
        probs = clf.proba([(x.first, x.second) for x in xs], 32)
        order = [clf.labels.index(lab) for lab in LABELS]
        cuts = calibrate_thresholds([e.labels or {} for e in val], probs[:, order])
        detector.config.thresholds.update(cuts)
        log.info("thresholds calibrated on the validation dialogues: %s", cuts)
    final = evaluate() if val else {}
    detector.config.training = res.record(
        cfg,
        {**(data_info or {}), "counts": data.counts, "train_pairs": len(texts), "validation_dialogues": len(val)},
    )
    detector.config.metrics = rounded_metrics(detector.config.metrics, final)
    return detector


def write_citod_card(folder: Path, config: Any) -> Path:
    """``MODEL_CARD.md`` for a grounded detector: what it checks, its input, how it was trained (command,
    data, time, machine) and, after ``dialcheck evaluate --benchmark citod --update-card``, its test results."""
    from .card import _size

    t, m = config.training, config.metrics
    opts = config.options
    history = "on" if opts.get("history", True) else "off (ablation)"
    lines = [
        f"# {folder.name}",
        "",
        "Task-oriented dialogue consistency (CI-ToD, Qin et al. 2021): is the last system turn inconsistent",
        "with the user's request (QI), the dialogue history (HI) or the knowledge base (KBI)?",
        "",
        f"- detector: `{config.detector}`; labels {config.labels} (multi-label, sigmoid + binary cross-entropy)",
        f"- base encoder: `{config.base}`; adapter: `{config.adapter}`"
        if config.adapter
        else f"- base: `{config.base}`",
        f"- thresholds: {config.thresholds} (a label fires at score >= its threshold; "
        + (
            "per-label thresholds set on the calendar + navigate dev sets, `--calibrate-thresholds`)"
            if t.get("calibrate_thresholds")
            else "0.5 as in the paper)"
        ),
        "- input: knowledge rows as `column value` pairs between `[kb]` and `[/kb]`, the history with `user:`/"
        f"`system:`, `request:`, then the reply{' and its `[check]` entity checks' if opts.get('checks') else ''}; "
        f"max_length {config.max_length}; history {history}; "
        f"row selection `{opts.get('selection', 'overlap')}`; mention marks {'on' if opts.get('marks') else 'off'}; "
        f"entity checks {'on' if opts.get('checks') else 'off'}",
        f"- size on disk: {_size(folder)}",
        "",
        "## Training",
        "",
    ]
    if t.get("command"):
        lines += ["```", str(t["command"]), "```", ""]
    for key in ("data", "counts", "epochs", "batch_size", "lr", "seed", "steps", "best_step", "train_seconds",
                "threads", "machine", "date"):  # fmt: skip
        if key in t:
            lines.append(f"- {key}: {t[key]}")
    if t.get("note"):
        lines += ["", f"Note: {t['note']}"]
    lines += ["", "Validation (calendar + navigate dev sets; early stopping on `val_score`):", ""]
    lines += [f"- {k}: {v}" for k, v in m.items() if k.startswith("val_")]
    evals = {k: v for k, v in m.items() if "/" in k}
    if evals:
        from ..evaluation.citod import to_markdown

        lines += ["", "## Evaluation (official test sets; weather unseen in training)", ""]
        if m.get("evaluate_command"):
            lines += ["```", str(m["evaluate_command"]), "```", ""]
        lines.append(to_markdown(evals))
    lines += [
        "",
        "## Limits",
        "",
        "- Weather was never seen in training: the labelled weather train split was not released.",
        '- Entities are matched as words; paraphrased values ("two miles" for 2_miles) do not help row selection'
        " or the entity checks.",
        "- Entity checks type a value by the table's columns and the stored vocabulary; in a new domain, values the"
        " table lacks are typed only if you add them (`GroundedDetector.add_vocabulary`).",
        "- Evidence (turns, rows) comes from occlusion of one item at a time (redundant evidence can hide); with"
        " entity checks, a KBI row is the row the reply is about when a check finds it contradicted.",
        "",
    ]
    path = folder / "MODEL_CARD.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path
