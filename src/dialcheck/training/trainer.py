"""One trainer for every pair-based detector: fine-tune (full or LoRA), early-stop, calibrate, save.

The loop is plain PyTorch: length-grouped batches with dynamic padding (fast on CPU), AdamW with linear
warm-up and decay, validation on held-out train groups every ``eval_every`` steps, early stopping on
the dialogue-level balanced accuracy, and finally calibration of ``tau`` and ``eta_e`` on the same
validation dialogues (never on a reported test set).
"""

from __future__ import annotations

import logging
import math
import os
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ..detectors.base import Detector
from ..evaluation.metrics import balanced_accuracy, best_threshold, evidence_f1
from ..schema import Example, Pair

__all__ = ["TrainConfig", "calibrate", "calibrate_pairs", "train_detector"]

log = logging.getLogger(__name__)


@dataclass
class TrainConfig:
    """Hyper-parameters of one run (saved into the detector's config)."""

    epochs: float = 1.0
    batch_size: int = 32
    lr: float | None = None  # default: 3e-5 full fine-tuning, 5e-4 LoRA
    weight_decay: float = 0.01
    warmup: float = 0.06
    seed: int = 0
    eval_every: int = 0  # steps; 0 = four times per epoch
    patience: int = 3
    max_grad_norm: float = 1.0
    label_smoothing: float = 0.0
    threads: int = 0  # 0 = all cores
    extra: dict[str, Any] = field(default_factory=dict)


def _seed_all(seed: int) -> None:
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def _length_grouped_batches(pairs: Sequence[Pair], batch_size: int, rng: random.Random) -> list[list[int]]:
    idx = list(range(len(pairs)))
    rng.shuffle(idx)
    chunk = batch_size * 50
    batches = []
    for s in range(0, len(idx), chunk):
        part = sorted(idx[s : s + chunk], key=lambda i: len(pairs[i].first) + len(pairs[i].second))
        batches.extend(part[b : b + batch_size] for b in range(0, len(part), batch_size))
    rng.shuffle(batches)
    return batches


def calibrate(detector: Detector, dialogues: Sequence[Example], batch_size: int = 64) -> dict[str, float]:
    """Set ``tau`` (balanced accuracy) and ``eta_e`` (evidence F1) from validation dialogues; return metrics."""
    verdicts = detector.predict([e.dialogue for e in dialogues], batch_size=batch_size)
    scores = np.array([v.score for v in verdicts])
    labels = np.array([e.label for e in dialogues], dtype=bool)
    tau, bacc = best_threshold(scores, labels, balanced_accuracy)
    detector.tau = tau
    pos = [(e, v) for e, v in zip(dialogues, verdicts, strict=True) if e.label and e.evidence]
    best_eta, best_f1 = tau, -1.0
    for eta in sorted({round(x, 2) for x in np.linspace(0.05, 0.95, 19)} | {round(tau, 4)}):
        preds = []
        for _e, v in pos:
            if v.score < tau:
                preds.append(())
                continue
            ev = tuple(i for i, s in v.pair_scores.items() if s >= eta)
            preds.append(ev or (max(v.pair_scores, key=v.pair_scores.__getitem__),))
        f1 = evidence_f1([e.evidence for e, _ in pos], preds) if pos else 0.0
        if f1 > best_f1 + 1e-9:
            best_eta, best_f1 = float(eta), f1
    detector.eta_e = best_eta
    return {"val_balanced_accuracy": bacc, "val_evidence_f1": best_f1, "tau": tau, "eta_e": best_eta}


def calibrate_pairs(detector: Detector, pairs: Sequence[Pair], batch_size: int = 64) -> dict[str, float]:
    """Set ``tau`` from validation pairs scored directly (detectors that see one pair per dialogue)."""
    if not pairs:
        return {"val_balanced_accuracy": 0.0}
    scores = detector.classifier.score([(p.first, p.second) for p in pairs], batch_size=batch_size)
    tau, bacc = best_threshold(scores, np.array([p.label == 1 for p in pairs]), balanced_accuracy)
    detector.tau = tau
    return {"val_balanced_accuracy": bacc, "tau": tau}


def train_detector(
    detector: Detector,
    pairs: Sequence[Pair] | None = None,
    validation: Sequence[Pair] | None = None,
    validation_dialogues: Sequence[Example] | None = None,
    config: TrainConfig | None = None,
    data_info: dict[str, Any] | None = None,
    show_progress_bar: bool = False,
    on_eval: Callable[[int, dict[str, float]], None] | None = None,
) -> Detector:
    """Fine-tune ``detector`` on ``pairs``; returns it with weights attached and thresholds calibrated.

    ``validation_dialogues`` drive early stopping and calibration at the dialogue level; without them the
    validation pairs are used as one-pair dialogues.
    """
    import torch

    from ..detectors.core import PairClassifier
    from ..detectors.modeling import build_model

    cfg = config or TrainConfig()
    if not pairs:
        raise ValueError("no training pairs")
    threads = cfg.threads or os.cpu_count() or 1
    torch.set_num_threads(threads)
    _seed_all(cfg.seed)
    lora = bool(detector.config.adapter and detector.config.adapter.get("type") == "lora")
    lr = cfg.lr or (5e-4 if lora else 3e-5)
    model, tok = build_model(detector.config)
    model.train()
    clf = PairClassifier(model, tok, detector.config.labels, detector.config.max_length, detector.truncation_side)
    cidx = clf.contradiction_index
    other = 1 - cidx if len(detector.config.labels) == 2 else None
    if other is None:
        raise ValueError("training supports two-label detectors")

    params = [p for p in model.parameters() if p.requires_grad]
    decay = [p for n, p in model.named_parameters() if p.requires_grad and p.ndim > 1]
    no_decay = [p for n, p in model.named_parameters() if p.requires_grad and p.ndim <= 1]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=lr,
    )
    rng = random.Random(cfg.seed)
    steps_per_epoch = math.ceil(len(pairs) / cfg.batch_size)
    total = max(1, int(steps_per_epoch * cfg.epochs))
    warm = int(total * cfg.warmup)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (s + 1) / max(1, warm) if s < warm else max(0.0, (total - s) / max(1, total - warm))
    )
    eval_every = cfg.eval_every or max(50, steps_per_epoch // 4)
    val_dialogues = list(validation_dialogues or [])
    loss_fn = torch.nn.CrossEntropyLoss(label_smoothing=cfg.label_smoothing)

    detector.attach(model, tok)
    best: tuple[float, dict[str, Any] | None, int] = (-1.0, None, 0)
    bad_evals = 0
    history: list[dict[str, float]] = []
    t0 = time.time()
    bar = None
    if show_progress_bar:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, desc="training", unit="step")
    step = 0
    stop = False
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}

    def evaluate_now() -> float:
        model.eval()
        m = calibrate(detector, val_dialogues) if val_dialogues else calibrate_pairs(detector, validation or [])
        model.train()
        m["step"] = step
        m["elapsed_s"] = round(time.time() - t0, 1)
        history.append(m)
        log.info("step %d: %s", step, {k: round(v, 4) for k, v in m.items()})
        if on_eval:
            on_eval(step, m)
        return m["val_balanced_accuracy"]

    while not stop:
        for batch in _length_grouped_batches(pairs, cfg.batch_size, rng):
            chunk = [pairs[i] for i in batch]
            enc = clf.encode([(p.first, p.second) for p in chunk])
            target = torch.tensor([cidx if p.label == 1 else other for p in chunk])
            out = model(**enc)
            loss = loss_fn(out.logits.float(), target)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, cfg.max_grad_norm)
            opt.step()
            sched.step()
            opt.zero_grad(set_to_none=True)
            step += 1
            if bar is not None:
                bar.update(1)
                bar.set_postfix(loss=f"{loss.item():.3f}")
            if (val_dialogues or validation) and (step % eval_every == 0 or step == total):
                score = evaluate_now()
                if score > best[0] + 1e-4:
                    state = {n: p.detach().clone() for n, p in model.named_parameters() if n in trainable}
                    best = (score, state, step)
                    bad_evals = 0
                else:
                    bad_evals += 1
                    if bad_evals >= cfg.patience:
                        log.info("early stopping at step %d (best step %d)", step, best[2])
                        stop = True
                        break
            if step >= total:
                stop = True
                break
    if bar is not None:
        bar.close()
    if best[1] is not None:
        with torch.no_grad():
            named = dict(model.named_parameters())
            for n, v in best[1].items():
                named[n].copy_(v)
    model.eval()
    if val_dialogues:
        final = calibrate(detector, val_dialogues)
    elif validation:
        final = calibrate_pairs(detector, validation)
    else:
        final = {}
    elapsed = time.time() - t0
    detector.attach(model, tok)
    detector.config.training = {
        **(data_info or {}),
        "train_pairs": len(pairs),
        "validation_dialogues": len(val_dialogues),
        "steps": step,
        "best_step": best[2],
        "train_seconds": round(elapsed, 1),
        "threads": threads,
        "lr": lr,
        **{k: v for k, v in asdict(cfg).items() if k not in ("extra", "lr")},
        **cfg.extra,
        "history": history,
    }
    detector.config.metrics = {**detector.config.metrics, **{k: round(float(v), 4) for k, v in final.items()}}
    return detector
