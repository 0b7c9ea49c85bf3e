"""A yes/no answer classifier trained on Circa: (polar question, reply) -> relaxed label -> judgement.

It judges n-best replies to polar echo questions as a confirmation (``yes``), a refutation (``no``)
or ``ambiguous``. The model predicts Circa's five relaxed labels (yes, no, conditional, middle, other);
:func:`dialcheck.datasets.circa.judgement` maps them to the three judgements ("yes, subject to some
conditions" confirms; "in the middle" -- which includes "I am not sure" -- and "other" are ambiguous).

It reuses the detector machinery (a base encoder + LoRA adapter + head, saved as ``dialcheck.json`` +
``weights.safetensors``) under its own registered type ``circa.yesno.v1``, and the one training loop
:func:`dialcheck.training.trainer.fit_pair_model`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..datasets.circa import RELAXED_LABELS, CircaExample, judgement
from ..detectors.core import PairClassifier
from ..detectors.modeling import CONFIG_NAME, DetectorConfig, build_model, load_model, save_model, shipped_or_path
from ..errors import InputError, MissingBaseError, ModelError

__all__ = [
    "ANSWER_CLASSIFIER_TYPE",
    "AnswerClassifier",
    "default_answer_classifier_path",
    "load_answer_classifier",
    "relaxed_accuracy",
]

log = logging.getLogger(__name__)

ANSWER_CLASSIFIER_TYPE = "circa.yesno.v1"
DEFAULT_FOLDER = "circa-yesno-mpnet-v1"
LIGHT_FOLDER = "circa-yesno-minilm-v2"  # the previous default: MiniLM, no extra weight package


def default_answer_classifier_path() -> Path:
    """Folder of the shipped yes/no answer classifier."""
    return Path(__file__).resolve().parent.parent / "models" / DEFAULT_FOLDER


def relaxed_accuracy(gold: Sequence[str], pred: Sequence[str]) -> float:
    """Share of replies whose predicted relaxed label equals the gold one.

    >>> relaxed_accuracy(["yes", "no", "middle", "yes"], ["yes", "no", "yes", "yes"])
    0.75
    """
    if len(gold) != len(pred):
        raise ValueError(f"{len(gold)} gold labels but {len(pred)} predictions")
    return float(np.mean([g == p for g, p in zip(gold, pred, strict=True)])) if gold else 0.0


class AnswerClassifier:
    """Classifies (question, answer) pairs into Circa's relaxed labels; constructors only store configuration."""

    def __init__(
        self,
        base: str = "all-MiniLM-L6-v2",
        max_length: int = 96,
        adapter: dict[str, Any] | None = None,
        labels: Sequence[str] = RELAXED_LABELS,
    ) -> None:
        self.config = DetectorConfig(
            detector=ANSWER_CLASSIFIER_TYPE,
            base=base,
            labels=list(labels),
            thresholds={},
            max_length=max_length,
            adapter=adapter if adapter is not None else {"type": "lora", "r": 16, "alpha": 32, "dropout": 0.1},
        )
        self.path: Path | None = None
        self._clf: PairClassifier | None = None

    # -- weights ----------------------------------------------------------------------------------
    @property
    def classifier(self) -> PairClassifier:
        if self._clf is None:
            raise ModelError("AnswerClassifier has no weights yet: call load() or fit() first")
        return self._clf

    def attach(self, model: Any, tokenizer: Any) -> AnswerClassifier:
        self._clf = PairClassifier(model, tokenizer, self.config.labels, self.config.max_length, "right")
        return self

    def build(self) -> AnswerClassifier:
        """Fresh trainable weights: the base encoder with a new head (+ LoRA)."""
        model, tok = build_model(self.config)
        return self.attach(model, tok)

    @classmethod
    def load(cls, path: str | Path) -> AnswerClassifier:
        folder = Path(path)
        cfg_path = folder / CONFIG_NAME
        if not cfg_path.exists():
            raise ModelError(f"{folder} holds no {CONFIG_NAME}: not a saved answer classifier")
        config = DetectorConfig.from_file(cfg_path)
        if config.detector != ANSWER_CLASSIFIER_TYPE:
            raise ModelError(
                f"{cfg_path}: type {config.detector!r} is not an answer classifier ({ANSWER_CLASSIFIER_TYPE})"
            )
        obj = cls.__new__(cls)
        obj.config = config
        obj.path = folder
        obj._clf = None
        model, tok = load_model(folder, config)
        return obj.attach(model, tok)

    def save(self, path: str | Path, half: bool = False) -> Path:
        """Write the classifier to ``path``; ``half`` stores adapter and head in float16."""
        clf = self.classifier
        folder = Path(path)
        save_model(clf.model, clf.tokenizer, folder, self.config, half=half)
        self.path = folder
        return folder

    def quantize(self) -> AnswerClassifier:
        """Switch to torch's int8 dynamic quantization (faster on CPU; probabilities move a little)."""
        from ..detectors.onnx import switch_to_int8

        switch_to_int8([self.classifier], self.config.options)
        return self

    def use_onnx(
        self, int8: bool = False, threads: int | None = None, cache: str | Path | None = None
    ) -> AnswerClassifier:
        """Judge with ONNX Runtime (``pip install "dialcheck[onnx]"``), as ``Detector.use_onnx`` does."""
        from ..detectors.onnx import switch_to_onnx

        switch_to_onnx([self.classifier], self.config.options, int8, threads, cache)
        return self

    # -- prediction -------------------------------------------------------------------------------
    @property
    def labels(self) -> list[str]:
        return list(self.config.labels)

    def predict_proba(
        self, questions: Sequence[str], answers: Sequence[str], batch_size: int = 128, show_progress_bar: bool = False
    ) -> np.ndarray:
        """Label probabilities, shape (n, len(labels)), in the order of :attr:`labels`."""
        if len(questions) != len(answers):
            raise InputError(f"{len(questions)} questions but {len(answers)} answers")
        pairs = [(q, a if a.strip() else ".") for q, a in zip(questions, answers, strict=True)]
        return self.classifier.proba(pairs, batch_size=batch_size, show_progress_bar=show_progress_bar)

    def predict(self, questions: Sequence[str], answers: Sequence[str], batch_size: int = 128) -> list[str]:
        """The most probable relaxed label of each answer."""
        p = self.predict_proba(questions, answers, batch_size)
        return [self.config.labels[i] for i in p.argmax(axis=1)] if len(p) else []

    def judge(self, questions: Sequence[str], answers: Sequence[str], batch_size: int = 128) -> list[str]:
        """``yes`` (confirmation), ``no`` (refutation) or ``ambiguous`` for each answer.

        An empty answer is ``ambiguous`` without asking the model.
        """
        labels = self.predict(questions, answers, batch_size)
        return ["ambiguous" if not a.strip() else judgement(lab) for a, lab in zip(answers, labels, strict=True)]

    # -- training ---------------------------------------------------------------------------------
    def fit(
        self,
        train: Sequence[CircaExample],
        validation: Sequence[CircaExample] = (),
        config: Any = None,
        show_progress_bar: bool = False,
        data_info: dict[str, Any] | None = None,
    ) -> AnswerClassifier:
        """Train on Circa rows with a relaxed label; early stopping on ``validation`` relaxed accuracy."""

        from ..training.trainer import TrainConfig, fit_pair_model, rounded_metrics, seed_everything

        cfg = config or TrainConfig()
        rows = [e for e in train if e.relaxed is not None]
        val = [e for e in validation if e.relaxed is not None]
        if not rows:
            raise InputError("no Circa rows with a relaxed label to train on")
        seed_everything(cfg.seed)  # the new head and LoRA matrices are drawn from the run's seed
        self.build()
        index = {lab: i for i, lab in enumerate(self.config.labels)}
        targets = np.array([index[e.relaxed] for e in rows], dtype=np.int64)  # type: ignore[index]

        def evaluate() -> dict[str, float]:
            pred = self.predict([e.question for e in val], [e.answer for e in val])
            gold = [str(e.relaxed) for e in val]
            return {
                "val_relaxed_accuracy": relaxed_accuracy(gold, pred),
                "val_judgement_accuracy": relaxed_accuracy([judgement(g) for g in gold], [judgement(p) for p in pred]),
            }

        res = fit_pair_model(
            self.classifier,
            [(e.question, e.answer) for e in rows],
            targets,
            cfg,
            evaluate if val else None,
            metric="val_relaxed_accuracy",
            show_progress_bar=show_progress_bar,
        )
        final = evaluate() if val else {}
        self.config.training = res.record(
            cfg, {**(data_info or {}), "train_pairs": len(rows), "validation_pairs": len(val)}
        )
        self.config.metrics = rounded_metrics(self.config.metrics, final)
        return self


def load_answer_classifier(path: str | Path | None = None) -> AnswerClassifier:
    """The shipped classifier (``path=None``), one saved at ``path``, or one shipped under that name
    (e.g. ``"circa-yesno-minilm-v2"``) where no such folder exists here."""
    default = default_answer_classifier_path()
    folder = default if path is None else shipped_or_path(path, default.parent)
    if not folder.exists():
        raise ModelError(f"answer classifier folder {folder} does not exist")
    try:
        return AnswerClassifier.load(folder)
    except MissingBaseError as e:
        if path is None:
            raise MissingBaseError(f"{e} (or choose the smaller, less accurate classifier {LIGHT_FOLDER!r})") from None
        raise
