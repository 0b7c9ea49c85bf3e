"""One trainer for every pair-based model: fine-tune (full or LoRA), early-stop, calibrate, save.

:func:`fit_pair_model` is the loop every classifier uses (contradiction detectors, multi-label grounded
detectors, answer classifiers): length-grouped batches with dynamic padding (fast on CPU), AdamW with
linear warm-up and decay, a validation callback every ``eval_every`` steps, early stopping, and the
best weights restored at the end. Targets may be class indices (cross-entropy), soft distributions
(distillation from a teacher) or multi-label 0/1 rows (binary cross-entropy).

:func:`train_detector` wraps it for the two-label contradiction detectors and calibrates ``tau`` and
``eta_e`` on validation dialogues built from held-out train groups (never on a reported test set).
"""

from __future__ import annotations

import logging
import math
import os
import random
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..detectors.base import Detector
from ..detectors.core import PairClassifier
from ..errors import InputError
from ..evaluation.metrics import balanced_accuracy, best_threshold, pair_evidence_f1
from ..schema import Example, Pair

__all__ = [
    "FitResult",
    "TrainConfig",
    "calibrate",
    "calibrate_pairs",
    "fit_pair_model",
    "has_state",
    "scheduled_pairs",
    "train_detector",
]

log = logging.getLogger(__name__)


@dataclass
class TrainConfig:
    """Hyper-parameters of one run (saved into the model's config)."""

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
    class_weight: str | None = None  # "balanced": cross-entropy weights n / (k * count) per hard label; "sqrt"
    threads: int = 0  # 0 = all cores
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_args(cls, args: Any, batch_size: int = 32, **extra: Any) -> TrainConfig:
        """The run's settings from ``dialcheck train`` options (``--batch-size`` unset: ``batch_size``).

        >>> from argparse import Namespace
        >>> a = Namespace(epochs=2, batch_size=None, lr=None, seed=1, patience=3, threads=2)
        >>> TrainConfig.from_args(a, batch_size=16).batch_size
        16
        >>> a.shuffle_seed = 7  # --shuffle-seed: batch order and new weights; --seed still fixes the data split
        >>> TrainConfig.from_args(a).seed
        7
        """
        return cls(
            epochs=args.epochs,
            batch_size=args.batch_size or batch_size,
            lr=args.lr,
            seed=args.seed if getattr(args, "shuffle_seed", None) is None else args.shuffle_seed,
            eval_every=getattr(args, "eval_every", 0) or 0,
            patience=args.patience,
            class_weight=getattr(args, "class_weight", None),
            threads=args.threads,
            extra=dict(extra),
        )


CLASS_WEIGHTS = {"balanced": 1.0, "sqrt": 0.5}  # --class-weight name -> power of the balanced weights


def balanced_weights(labels: Sequence[int], n_classes: int, power: float = 1.0) -> list[float]:
    """Cross-entropy class weights ``(n / (k * count)) ** power`` (power 1: scikit-learn's "balanced"; 0.5: the
    square root, a milder push towards rare classes); absent classes get 0.

    >>> balanced_weights([0, 0, 0, 1], 3)
    [0.6666666666666666, 2.0, 0.0]
    >>> [round(w, 3) for w in balanced_weights([0, 0, 0, 1], 3, power=0.5)]
    [0.816, 1.414, 0.0]
    """
    counts = [0] * n_classes
    for y in labels:
        counts[int(y)] += 1
    present = sum(c > 0 for c in counts)
    return [(len(labels) / (present * c)) ** power if c else 0.0 for c in counts]


@dataclass
class FitResult:
    """What a fitting run did: steps taken, the step whose weights were kept, time, validation history."""

    steps: int
    best_step: int
    seconds: float
    history: list[dict[str, float]]
    lr: float
    threads: int
    window: dict[str, int] = field(default_factory=dict)

    def record(
        self, cfg: TrainConfig, lead: Mapping[str, Any], tail: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """The ``training`` entry a model's ``dialcheck.json`` keeps: ``lead`` (data and sizes), what the run
        did, the config (``extra`` flattened), ``tail``, and the validation history last."""
        return {
            **lead,
            "steps": self.steps,
            "best_step": self.best_step,
            "train_seconds": self.seconds,
            "threads": self.threads,
            "lr": self.lr,
            **({"window": self.window} if self.window else {}),
            **{k: v for k, v in asdict(cfg).items() if k not in ("extra", "lr")},
            **(tail or {}),
            **cfg.extra,
            "history": self.history,
        }


def rounded_metrics(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """``old`` metrics updated with ``new`` ones rounded to four decimals (what a model's ``dialcheck.json`` keeps)."""
    return {**old, **{k: round(float(v), 4) for k, v in new.items()}}


def window_report(clf: PairClassifier, texts: Sequence[tuple[str, str]]) -> dict[str, int]:
    """How the classifier's window treats the training pairs: ``pairs``, how many are ``cut`` (the first
    segment loses tokens), and the token length the longest 99% fit in (``p99_tokens``, special tokens
    included). A warning is logged when more than 1% are cut, since training on cut inputs teaches the
    model to decide without what was cut.
    """
    if not texts:
        return {"pairs": 0, "cut": 0, "p99_tokens": 0}
    lengths = np.array([clf.pair_length(a, b) for a, b in texts])
    cut = int((lengths > clf.max_length).sum())
    report = {"pairs": len(texts), "cut": cut, "p99_tokens": math.ceil(float(np.percentile(lengths, 99)))}
    share = 100.0 * cut / len(texts)
    if share > 1.0:
        log.warning(
            "%d of %d training pairs (%.1f%%) are longer than the %d-token window and lose part of their "
            "first segment; %d tokens would keep 99%% of them whole (--max-length)",
            cut,
            len(texts),
            share,
            clf.max_length,
            report["p99_tokens"],
        )
    else:
        log.info("%d of %d training pairs are longer than the %d-token window", cut, len(texts), clf.max_length)
    return report


def seed_everything(seed: int) -> None:
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def _length_grouped_batches(texts: Sequence[tuple[str, str]], batch_size: int, rng: random.Random) -> list[list[int]]:
    idx = list(range(len(texts)))
    rng.shuffle(idx)
    chunk = batch_size * 50
    batches = []
    for s in range(0, len(idx), chunk):
        part = sorted(idx[s : s + chunk], key=lambda i: len(texts[i][0]) + len(texts[i][1]))
        batches.extend(part[b : b + batch_size] for b in range(0, len(part), batch_size))
    rng.shuffle(batches)
    return batches


def _schedule(texts: Sequence[tuple[str, str]], config: TrainConfig) -> tuple[int, int, Iterator[list[list[int]]]]:
    """Steps per epoch, total steps and each epoch's batches of a run on ``texts``: fixed by the seed."""
    steps_per_epoch = math.ceil(len(texts) / config.batch_size)
    return steps_per_epoch, max(1, int(steps_per_epoch * config.epochs)), _epochs_of(texts, config)


def _epochs_of(texts: Sequence[tuple[str, str]], config: TrainConfig) -> Iterator[list[list[int]]]:
    rng = random.Random(config.seed)
    while True:
        yield _length_grouped_batches(texts, config.batch_size, rng)


def scheduled_pairs(texts: Sequence[tuple[str, str]], config: TrainConfig) -> np.ndarray:
    """Sorted indices of the pairs a run of ``config`` on ``texts`` trains on (early stopping aside).

    The batch order depends on the seed, the batch size and the texts alone, so a run shorter than an epoch
    (``epochs < 1``) is known before it starts never to see the other pairs: a teacher need not score them.

    >>> texts = [(str(i), "x" * i) for i in range(10)]
    >>> len(scheduled_pairs(texts, TrainConfig(epochs=0.5, batch_size=2))), len(scheduled_pairs(texts, TrainConfig()))
    (4, 10)
    """
    n = len(texts)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    steps_per_epoch, left, epochs = _schedule(texts, config)
    seen: set[int] = set()
    while left > 0 and len(seen) < n:
        for batch in next(epochs)[:left]:
            seen.update(batch)
        left -= steps_per_epoch
    return np.array(sorted(seen), dtype=np.int64)


def is_lora(model: Any) -> bool:
    return hasattr(model, "peft_config")


def fit_pair_model(
    clf: PairClassifier,
    texts: Sequence[tuple[str, str]],
    targets: np.ndarray,
    config: TrainConfig,
    evaluate: Callable[[], dict[str, float]] | None = None,
    metric: str = "score",
    show_progress_bar: bool = False,
    on_best: Callable[[int, dict[str, float]], None] | None = None,
    resume_dir: str | Path | None = None,
    resume: bool = False,
    start: dict[str, Any] | None = None,
) -> FitResult:
    """Train ``clf.model`` on text pairs in place; keep the weights with the best ``evaluate()[metric]``.

    ``on_best(step, metrics)`` is called with the model holding each new best weights (e.g. to write a
    checkpoint that survives an interrupted run).

    With ``resume_dir`` the whole training state (current and best weights, optimizer and scheduler,
    random generators, validation history) is written there at every validation; with ``resume`` a run
    interrupted after one continues from it exactly as if it had not stopped (with no state there yet,
    e.g. a cascade stage the interrupted run never reached, training starts afresh). The pairs, targets and
    settings must be the ones of the interrupted run (checked). ``start`` (``{"step", "best_score",
    "history"}``) instead continues at a step from weights already loaded, with fresh optimizer moments:
    for runs that left a checkpoint but no training state.

    ``targets``: int class indices of shape (n,), soft distributions of shape (n, labels), or for a
    multi-label classifier (``clf.multi_label``) 0/1 rows of shape (n, labels).
    """
    import torch

    model = clf.model
    n = len(texts)
    if n == 0:
        raise ValueError("no training pairs")
    if len(targets) != n:
        raise ValueError(f"{n} pairs but {len(targets)} targets")
    threads = config.threads or os.cpu_count() or 1
    torch.set_num_threads(threads)
    window = window_report(clf, texts)
    seed_everything(config.seed)
    lr = config.lr or (5e-4 if is_lora(model) else 3e-5)
    model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    decay = [p for p in params if p.ndim > 1]
    no_decay = [p for p in params if p.ndim <= 1]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": config.weight_decay}, {"params": no_decay, "weight_decay": 0.0}], lr=lr
    )
    steps_per_epoch, total, epochs = _schedule(texts, config)
    warm = int(total * config.warmup)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (s + 1) / max(1, warm) if s < warm else max(0.0, (total - s) / max(1, total - warm))
    )
    eval_every = config.eval_every or max(50, steps_per_epoch // 4)
    t = torch.as_tensor(np.asarray(targets))
    soft = t.ndim == 2
    if clf.multi_label:
        loss_fn: Callable[[Any, Any], Any] = torch.nn.BCEWithLogitsLoss()
        t = t.float()
    elif soft:
        t = t.float()

        def loss_fn(logits: Any, target: Any) -> Any:
            return -(target * torch.log_softmax(logits, dim=-1)).sum(-1).mean()
    else:
        t = t.long()
        weight = None
        if config.class_weight in CLASS_WEIGHTS:
            power = CLASS_WEIGHTS[config.class_weight]
            weight = torch.as_tensor(balanced_weights(t.tolist(), len(clf.labels), power), dtype=torch.float32)
            log.info("class weights %s", dict(zip(clf.labels, [round(float(w), 3) for w in weight], strict=True)))
        elif config.class_weight is not None:
            raise ValueError(f"class_weight must be None or one of {sorted(CLASS_WEIGHTS)}: {config.class_weight!r}")
        loss_fn = torch.nn.CrossEntropyLoss(weight=weight, label_smoothing=config.label_smoothing)

    trainable = {name for name, p in model.named_parameters() if p.requires_grad}
    best_score, best_state, best_step = -math.inf, None, 0
    bad_evals = 0
    history: list[dict[str, float]] = []
    step = 0
    running = 0.0
    elapsed0 = 0.0
    state_dir = Path(resume_dir) if resume_dir is not None else None
    shapes = [(k, tuple(p.shape)) for k, p in model.named_parameters() if k in trainable]  # base, adapter, head
    fingerprint = _fingerprint(texts, targets, config, lr, (clf.max_length, eval_every, shapes)) if state_dir else ""
    if resume and state_dir is None:
        raise ValueError("resume needs resume_dir")
    if resume and has_state(state_dir):
        state = _load_state(state_dir, fingerprint)
        named = dict(model.named_parameters())
        with torch.no_grad():
            for k, v in state["weights"].items():
                named[k].copy_(v)
        opt.load_state_dict(state["optimizer"])
        sched.load_state_dict(state["scheduler"])
        torch.set_rng_state(state["torch_rng"])
        step, running, elapsed0 = state["step"], state["running_loss"], state["elapsed_s"]
        best_score, best_step, bad_evals = state["best_score"], state["best_step"], state["bad_evals"]
        history = list(state["history"])
        if (state_dir / "best.pt").exists():
            best_state = torch.load(state_dir / "best.pt", weights_only=True)
        log.info("resuming at step %d of %d (best step %d) from %s", step, total, best_step, state_dir)
    elif start:
        step = int(start["step"])
        best_score, best_step = float(start.get("best_score", -math.inf)), step
        history = list(start.get("history", []))
        best_state = _weights(model, trainable)
        sched.last_epoch = step
        for group, base_lr in zip(opt.param_groups, sched.base_lrs, strict=True):
            group["lr"] = base_lr * sched.lr_lambdas[0](step)
        log.info("continuing at step %d of %d with fresh optimizer moments", step, total)
    t0 = time.time() - elapsed0
    bar = None
    if show_progress_bar:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, initial=step, desc="training", unit="step")
    # the batch order is a function of the seed alone: replay the finished epochs, skip the done batches
    for _ in range(step // steps_per_epoch):
        next(epochs)
    skip = step % steps_per_epoch
    stop = step >= total or bad_evals >= config.patience
    while not stop:
        batches = next(epochs)
        for batch in batches[skip:]:
            enc = clf.encode([texts[i] for i in batch])
            loss = loss_fn(model(**enc).logits.float(), t[batch])
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, config.max_grad_norm)
            opt.step()
            sched.step()
            opt.zero_grad(set_to_none=True)
            step += 1
            running = loss.item() if step == 1 else 0.98 * running + 0.02 * loss.item()
            if bar is not None:
                bar.update(1)
                bar.set_postfix(loss=f"{running:.3f}")
            if step % 200 == 0:
                rate = step * config.batch_size / max(time.time() - t0, 1e-9)
                log.info("step %d/%d, loss %.4f, %.1f pairs/s", step, total, running, rate)
            # a periodic validation right before the final one (e.g. step 846 of 847) is skipped
            due = step % eval_every == 0 and total - step > eval_every // 10
            if evaluate is not None and (due or step == total):
                model.eval()
                m = dict(evaluate())
                model.train()
                m.update(step=step, elapsed_s=round(time.time() - t0, 1))
                history.append(m)
                log.info("step %d: %s", step, {k: round(v, 4) for k, v in m.items()})
                improved = m[metric] > best_score + 1e-4
                if improved:
                    best_score, best_step, bad_evals = m[metric], step, 0
                    best_state = _weights(model, trainable)
                    if on_best is not None:
                        on_best(step, m)
                else:
                    bad_evals += 1
                if state_dir is not None:  # also after the last one: a finished stage of a cascade resumes as done
                    _save_state(
                        state_dir,
                        {
                            "fingerprint": fingerprint,
                            "step": step,
                            "running_loss": running,
                            "elapsed_s": time.time() - t0,
                            "best_score": best_score,
                            "best_step": best_step,
                            "bad_evals": bad_evals,
                            "history": history,
                            "weights": _weights(model, trainable, copy=False),
                            "optimizer": opt.state_dict(),
                            "scheduler": sched.state_dict(),
                            "torch_rng": torch.get_rng_state(),
                        },
                        best_state if improved else None,
                    )
                if bad_evals >= config.patience:
                    log.info("early stopping at step %d (best step %d)", step, best_step)
                    stop = True
                    break
            if step >= total:
                stop = True
                break
        skip = 0
    if bar is not None:
        bar.close()
    if best_state is not None:
        with torch.no_grad():
            named = dict(model.named_parameters())
            for k, v in best_state.items():
                named[k].copy_(v)
    model.eval()
    return FitResult(step, best_step or step, round(time.time() - t0, 1), history, lr, threads, window)


STATE_FILE = "trainer_state.pt"


def _weights(model: Any, names: set[str], copy: bool = True) -> dict[str, Any]:
    """The named parameters in ``names``, detached (and cloned unless ``copy`` is false)."""
    return {k: p.detach().clone() if copy else p.detach() for k, p in model.named_parameters() if k in names}


def _fingerprint(
    texts: Sequence[tuple[str, str]], targets: np.ndarray, config: TrainConfig, lr: float, model: Any = ()
) -> str:
    """A digest of the pairs, targets and the settings that shape the run: a resumed run must match it.

    ``model``: what else decides the weights or the one kept (the window, the validation steps, the trained
    parameters' names and shapes): a run resumed with another --max-length, --eval-every, --patience, --class-weight
    or --lora trained on from a state it did not write, or failed on a shape mismatch with a traceback.
    """
    import hashlib

    h = hashlib.sha256()
    for a, b in texts:
        h.update(a.encode())
        h.update(b"\x00")
        h.update(b.encode())
        h.update(b"\x01")
    h.update(np.ascontiguousarray(targets).tobytes())
    h.update(repr((config.epochs, config.batch_size, lr, config.seed, config.warmup, config.weight_decay)).encode())
    h.update(repr((config.patience, config.max_grad_norm, config.label_smoothing, config.class_weight)).encode())
    h.update(repr(model).encode())
    return h.hexdigest()


def _save_state(folder: Path, state: dict[str, Any], best: dict[str, Any] | None) -> None:
    """Write the training state (and new best weights) so that a crash mid-write keeps the old state."""
    import torch

    folder.mkdir(parents=True, exist_ok=True)
    if best is not None:
        torch.save(best, folder / "best.pt.tmp")
        os.replace(folder / "best.pt.tmp", folder / "best.pt")
    torch.save(state, folder / f"{STATE_FILE}.tmp")
    os.replace(folder / f"{STATE_FILE}.tmp", folder / STATE_FILE)
    log.info("training state at step %d saved to %s", state["step"], folder)


def has_state(folder: str | Path | None) -> bool:
    """Whether ``folder`` holds a training state written by :func:`fit_pair_model` (``resume_dir``)."""
    return folder is not None and (Path(folder) / STATE_FILE).exists()


def _load_state(folder: Path, fingerprint: str) -> dict[str, Any]:
    import torch

    path = folder / STATE_FILE
    if not path.exists():
        raise InputError("no training state to resume from", str(path))
    state = torch.load(path, weights_only=True)
    if state.get("fingerprint") != fingerprint:
        raise InputError(
            "written by a run with other training pairs or settings; resume with the interrupted run's exact command",
            str(path),
        )
    return state


def calibrate(detector: Detector, dialogues: Sequence[Example], batch_size: int = 64) -> dict[str, float]:
    """Set ``tau`` (balanced accuracy) and ``eta_e`` (the paper's pair-level evidence F1) from validation
    dialogues, each the highest value within one standard error of the best.

    ``tau`` is the highest threshold within one standard error of the best balanced accuracy: the
    validation curve is flat over a wide range, and in front of a chatbot a false alarm (a good reply
    blocked) costs more than on a balanced validation set.
    """
    verdicts = detector.predict([e.dialogue for e in dialogues], batch_size=batch_size)
    scores = np.array([v.score for v in verdicts])
    labels = np.array([e.label for e in dialogues], dtype=bool)
    tau, bacc = best_threshold(scores, labels, balanced_accuracy, one_se=True)
    detector.tau = tau
    # eta_e: supporting-evidence F1 as the paper counts it (over every pair of every dialogue), and, as
    # for tau, the highest eta_e within one standard error (sqrt(f(1-f)/n), n = contradictions with
    # evidence) of the best: the curve is flat, and naming fewer, surer turns is the safer tie-break
    known = [(e, v) for e, v in zip(dialogues, verdicts, strict=True) if not e.label or e.evidence]
    n_pos = sum(1 for e, _ in known if e.label)
    if not n_pos:  # e.g. logs labelled at the dialogue level only: nothing to set eta_e from
        log.info("no validation contradiction names its evidence turns: eta_e kept at %g", detector.eta_e)
        return {"val_balanced_accuracy": bacc, "tau": tau, "eta_e": detector.eta_e}
    curve = []
    for eta in sorted({round(x, 2) for x in np.linspace(0.05, 0.95, 19)} | {round(tau, 4)}):
        preds = []
        for _e, v in known:
            if v.score < tau or not v.pair_scores:
                preds.append(())
                continue
            ev = tuple(i for i, s in v.pair_scores.items() if s >= eta)
            preds.append(ev or (max(v.pair_scores, key=v.pair_scores.__getitem__),))
        curve.append((float(eta), pair_evidence_f1([e.evidence or () for e, _ in known], preds) if n_pos else 0.0))
    log.info("eta_e curve (pair-level evidence F1): %s", ", ".join(f"{eta:g}: {f:.4f}" for eta, f in curve))
    best_f1 = max(f for _, f in curve)
    floor = best_f1 - math.sqrt(max(best_f1 * (1 - best_f1), 0.0) / max(n_pos, 1))
    best_eta = max(eta for eta, f in curve if f >= floor - 1e-12)
    best_f1 = dict(curve)[best_eta]
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


def teacher_weights(
    pairs: Sequence[Pair], distill_alpha: float, distill_alpha_by: dict[str, float] | None = None
) -> np.ndarray:
    """The teacher's weight in each pair's target: ``distill_alpha_by`` per source, else ``distill_alpha``.

    Pairs without a gold label follow the teacher alone (weight 1) unless their source is named. A pair of
    weight 0 keeps its gold label, so the teacher need not score it.

    >>> from dialcheck.schema import Pair
    >>> ps = [Pair("a", "b", 1, source="decode.train"), Pair("c", "d", 0, source="aug.neighbour")]
    >>> teacher_weights(ps, 0.0).tolist()
    [0.0, 1.0]
    """
    from .data import UNLABELLED_SOURCES

    by = dict(distill_alpha_by or {})
    for source in UNLABELLED_SOURCES:
        by.setdefault(source, 1.0)
    return np.array([by.get(p.source, distill_alpha) for p in pairs], dtype=np.float32)


def teacher_needed(
    pairs: Sequence[Pair], config: TrainConfig, distill_alpha: float, distill_alpha_by: dict[str, float] | None = None
) -> np.ndarray:
    """Which pairs' targets read a teacher score: weight > 0 (:func:`teacher_weights`) and, in a run shorter than
    an epoch, read by the run (:func:`scheduled_pairs`)."""
    needed = teacher_weights(pairs, distill_alpha, distill_alpha_by) > 0
    if 0 < config.epochs < 1:
        read = np.zeros(len(pairs), dtype=bool)
        read[scheduled_pairs([(p.first, p.second) for p in pairs], config)] = True
        needed &= read
    return needed


LEFT_OUT_SHARE = 0.001
"""At most this share of the pairs a run reads from its teacher may lack a score and be left out (unlabelled ones)."""


def unscored_pairs_left_out(
    pairs: Sequence[Pair], scores: np.ndarray, needed: np.ndarray, warn: bool = True
) -> np.ndarray:
    """The pairs a run reads from its teacher that have no score and are left out of the loss, or ValueError.

    Which neighbour pair (``aug.neighbour``) a last turn gets rests on sentence embeddings whose last bits
    differ from one CPU to another, so a scores file written on one machine can lack a few of them on
    another. Such a pair has no gold label to fall back on; it is left out (an all-zero target), with a
    warning, as long as no more than :data:`LEFT_OUT_SHARE` of the needed scores are missing (at least one
    may be). A labelled pair without a score, or more than that share, means the file was written for
    another run: ``ValueError`` saying how many are missing.

    >>> ps = [Pair("a", "b", 1, source="decode.train")]
    >>> ps += [Pair("c", str(i), 0, source="aug.neighbour") for i in range(3)]
    >>> unscored_pairs_left_out(ps, np.array([0.9, 0.2, np.nan, 0.4]), np.ones(4, dtype=bool)).tolist()
    [2]
    >>> unscored_pairs_left_out(ps, np.array([np.nan, 0.2, 0.3, 0.4]), np.ones(4, dtype=bool))
    Traceback (most recent call last):
    ...
    ValueError: no teacher score for 1 pairs this run trains on
    """
    from .data import UNLABELLED_SOURCES

    missing = np.flatnonzero(np.asarray(needed, dtype=bool) & np.isnan(np.asarray(scores, dtype=np.float32)))
    if len(missing) == 0:
        return missing
    unlabelled = np.array([pairs[i].source in UNLABELLED_SOURCES for i in missing])
    allowed = max(1, math.floor(LEFT_OUT_SHARE * int(np.sum(needed))))
    if not unlabelled.all() or len(missing) > allowed:
        raise ValueError(f"no teacher score for {len(missing)} pairs this run trains on")
    if warn:
        log.warning(
            "%d unlabelled pairs (%s) this run reads have no teacher score and are left out of the loss; their "
            "choice can differ from the machine that wrote the scores",
            len(missing),
            ", ".join(sorted({pairs[i].source for i in missing})),
        )
    return missing


def train_detector(
    detector: Detector,
    pairs: Sequence[Pair] | None = None,
    validation: Sequence[Pair] | None = None,
    validation_dialogues: Sequence[Example] | None = None,
    config: TrainConfig | None = None,
    data_info: dict[str, Any] | None = None,
    show_progress_bar: bool = False,
    teacher_scores: Sequence[float] | None = None,
    distill_alpha: float = 0.5,
    distill_alpha_by: Mapping[str, float] | None = None,
    init: str | Path | None = None,
    checkpoint: str | Path | None = None,
    resume_dir: str | Path | None = None,
    resume: bool = False,
) -> Detector:
    """Fine-tune a two-label contradiction ``detector`` on ``pairs``; weights attached, thresholds set.

    With ``checkpoint`` (a folder) the detector is saved there, calibrated, at every new best validation
    score, so an interrupted run still leaves a usable model (for ``dialcheck evaluate`` or ``--init``).

    With ``resume_dir`` the full training state is kept there (see :func:`fit_pair_model`); ``resume``
    continues an interrupted run from it. A run that left only ``checkpoint`` (no state) continues from
    the checkpoint's weights and step with fresh optimizer moments, and says so in the log.

    With ``init`` (a saved detector folder of the same base and adapter) training continues from its
    adapter and head, or from all its weights when it was fully fine-tuned, instead of a fresh head.

    ``validation_dialogues`` drive early stopping and calibration at the dialogue level; without them the
    ``validation`` pairs are used. With ``teacher_scores`` (a teacher's P(contradiction) per pair) the
    target is ``distill_alpha * teacher + (1 - distill_alpha) * gold``; ``distill_alpha_by`` overrides the
    weight for the pairs of the named sources (``Pair.source``), e.g. 0 (gold) where the teacher never trained.
    Pairs without a gold label (:data:`~dialcheck.training.data.UNLABELLED_SOURCES`) need a teacher and follow
    it alone unless ``distill_alpha_by`` says otherwise.
    """
    from ..detectors.modeling import build_model, load_trainable

    cfg = config or TrainConfig()
    pairs = list(pairs or [])
    if not pairs and cfg.epochs:  # epochs 0 recalibrates init's weights: it needs validation dialogues alone
        raise ValueError("no training pairs")
    from .data import UNLABELLED_SOURCES

    by = dict(distill_alpha_by or {})
    unlabelled = sorted({p.source for p in pairs} & set(UNLABELLED_SOURCES))
    if unlabelled and teacher_scores is None:
        raise ValueError(f"pairs from {', '.join(unlabelled)} have no gold label: distil them from a teacher")
    for source in unlabelled:  # their label is a placeholder: the teacher's score is the whole target
        by.setdefault(source, 1.0)
    if teacher_scores is not None:  # checked before the model is built
        unknown = sorted(set(by) - {p.source for p in pairs})
        if unknown:  # a typo would otherwise silently leave that source at distill_alpha
            raise ValueError(f"distill_alpha_by names sources with no training pairs: {', '.join(unknown)}")
        if any(not 0.0 <= a <= 1.0 for a in [distill_alpha, *by.values()]):
            raise ValueError("teacher weights (distill_alpha, distill_alpha_by) must lie in [0, 1]")
    start = None
    if resume and not has_state(resume_dir):
        start, init = _checkpoint_start(checkpoint, len(pairs)), checkpoint
        resume = False
    seed_everything(cfg.seed)  # the new head (and LoRA matrices) are drawn from the run's seed
    if init is not None and detector.config.adapter and detector.config.adapter.get("type") == "lora":
        model, tok = load_trainable(Path(init), detector.config)
    elif init is not None:
        # a fully fine-tuned detector folder is a complete Hugging Face model: it is its own base
        model, tok = build_model(detector.config, base_dir=Path(init))
    else:
        model, tok = build_model(detector.config)
    detector.attach(model, tok)
    clf = detector.classifier
    cidx = clf.contradiction_index
    if len(detector.config.labels) != 2:
        raise ValueError("train_detector trains two-label contradiction detectors; use fit_pair_model otherwise")
    gold = np.array([1.0 if p.label == 1 else 0.0 for p in pairs], dtype=np.float32)
    texts = [(p.first, p.second) for p in pairs]
    if teacher_scores is not None:
        if len(teacher_scores) != len(pairs):
            raise ValueError(f"{len(pairs)} pairs but {len(teacher_scores)} teacher scores")
        alpha = teacher_weights(pairs, distill_alpha, by)
        teacher = np.array(teacher_scores, dtype=np.float32)
        # pairs whose target reads no score (weight 0, or never read by the run) get a fixed stand-in, so that
        # a resumed run matches its start whatever the cache has learnt since
        needed = teacher_needed(pairs, cfg, distill_alpha, by)
        teacher[~needed] = gold[~needed]
        # epochs 0: calibration, no targets read
        left_out = unscored_pairs_left_out(pairs, teacher, needed) if cfg.epochs else np.zeros(0, dtype=np.int64)
        p_c = alpha * teacher + (1 - alpha) * gold
        targets = np.zeros((len(pairs), 2), dtype=np.float32)
        targets[:, cidx] = p_c
        targets[:, 1 - cidx] = 1 - p_c
        targets[left_out] = 0.0  # their NaN rows: an all-zero soft target adds nothing to the loss
    else:
        targets = np.where(gold == 1, cidx, 1 - cidx).astype(np.int64)
    val_dialogues = list(validation_dialogues or [])

    def evaluate() -> dict[str, float]:
        if val_dialogues:
            return calibrate(detector, val_dialogues)
        return calibrate_pairs(detector, validation or [])

    has_val = bool(val_dialogues or validation)

    def save_checkpoint(step: int, m: dict[str, float]) -> None:
        assert checkpoint is not None
        detector.config.training = {**(data_info or {}), "checkpoint_step": step, "train_pairs": len(pairs)}
        detector.config.metrics = {k: round(float(v), 4) for k, v in m.items()}
        detector.save(checkpoint)
        log.info("checkpoint at step %d saved to %s", step, checkpoint)

    if cfg.epochs == 0:  # calibration only: the loaded weights as they are, thresholds set anew
        if init is None:
            raise ValueError("epochs=0 only recalibrates a loaded detector (init)")
        import torch

        if cfg.threads:
            torch.set_num_threads(cfg.threads)
        model.eval()
        res = FitResult(0, 0, 0.0, [], 0.0, cfg.threads or os.cpu_count() or 1)
    else:
        res = fit_pair_model(
            clf,
            texts,
            targets,
            cfg,
            evaluate if has_val else None,
            metric="val_balanced_accuracy",
            show_progress_bar=show_progress_bar,
            on_best=save_checkpoint if checkpoint is not None else None,
            resume_dir=resume_dir,
            resume=resume,
            start=start,
        )
    final = evaluate() if has_val else {}
    detector.config.training = res.record(
        cfg,
        {**(data_info or {}), "train_pairs": len(pairs), "validation_dialogues": len(val_dialogues)},
        {
            **({"distill_alpha": distill_alpha} if teacher_scores is not None else {}),
            **({"distill_alpha_by": by} if teacher_scores is not None and by else {}),
        },
    )
    # the best validation's record (its step and time), as the checkpoint saved at it carries: read from the
    # history, so that a resumed run whose best came before the interruption records it too
    best = next((h for h in res.history if h.get("step") == res.best_step), {})
    detector.config.metrics = rounded_metrics(rounded_metrics(detector.config.metrics, best), final)
    return detector


def _checkpoint_start(checkpoint: str | Path | None, n_pairs: int) -> dict[str, Any]:
    """Where a run that left a checkpoint but no training state stopped: its step, score and history."""
    from ..detectors.base import DetectorConfig

    path = Path(checkpoint) / "dialcheck.json" if checkpoint is not None else None
    if path is None or not path.exists():
        raise InputError("nothing to resume: no training state and no checkpoint")
    cfg = DetectorConfig.from_file(path)
    step = cfg.training.get("checkpoint_step")
    if step is None:
        raise InputError("training.checkpoint_step is missing; not a training checkpoint", str(path))
    if cfg.training.get("train_pairs") != n_pairs:
        raise InputError(
            f"training.train_pairs is {cfg.training.get('train_pairs')}, this run has {n_pairs} pairs; "
            "resume with the interrupted run's exact command",
            str(path),
        )
    log.warning("%s holds weights but no optimizer state: continuing at step %d with fresh moments", path, step)
    metrics = cfg.metrics
    return {"step": int(step), "best_score": metrics.get("val_balanced_accuracy", -math.inf), "history": [metrics]}
