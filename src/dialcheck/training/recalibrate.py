"""Choosing a saved detector's τ again on the verdicts it gives as it runs by default.

``dialcheck models NAME --save OUT --recalibrate`` and ``dialcheck train --task cascade --recalibrate`` use it. Why: a
cascade's τ is its slow stage's, chosen on that stage's scores of every validation dialogue, though the stage
decides only the dialogues in the band, and readings added later change scores. On ONNX int8 a CPU runs 8-bit or
7-bit weights (:func:`dialcheck.detectors.onnx.int8_range`), whose scores differ, so τ is chosen per range
(``thresholds.tau_int8``; docs/benchmarks.md, "The threshold chosen on the cascade's own verdicts").
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..detectors.base import Detector
from ..detectors.modeling import CONFIG_NAME, DetectorConfig
from ..errors import InputError
from ..evaluation.metrics import balanced_accuracy, best_threshold
from ..schema import Example

__all__ = [
    "apply_recalibration",
    "calibration_dialogues",
    "recalibrate_config",
    "recalibrate_saved",
    "recalibrate_tau",
]

log = logging.getLogger(__name__)


def calibration_dialogues(
    calibrate_on: str | None,
    data_dir: str | Path | None = None,
    validation_fraction: float = 0.08,
    seed: int = 0,
    limit: int | None = None,
) -> tuple[list[Example], str]:
    """The labelled dialogues thresholds are chosen on, and where they come from: the file ``calibrate_on``
    (``--calibrate-on``; bad records reported and skipped), else DECODE's held-out train groups as the trainer
    splits them. Both labels are needed: an :class:`InputError` naming the source otherwise."""
    if calibrate_on:
        from ..cli.common import read_labelled

        dialogues, _ = read_labelled(calibrate_on)
        where = calibrate_on
    else:
        from .data import build_decode_training_data

        data = build_decode_training_data(
            data_dir, augment=(), validation_fraction=validation_fraction, seed=seed, limit=limit
        )
        dialogues, where = list(data.validation_dialogues), "DECODE held-out train groups"
    if {bool(e.label) for e in dialogues} != {True, False}:
        raise InputError("the calibration dialogues need both labels (contradiction and not)", str(where))
    return dialogues, where


def recalibrate_tau(
    detector: Detector, dialogues: Sequence[Example], batch_size: int = 64, show_progress_bar: bool = False
) -> dict[str, float]:
    """Choose ``detector.tau`` again by the training rule (that of :func:`dialcheck.training.trainer.calibrate`:
    the highest threshold within one standard error of the best balanced accuracy) on the verdicts ``detector``
    gives for ``dialogues``, as it is set up (its readings, its runtime; for a cascade, the final scores). Only
    ``tau`` changes.

    Why: a cascade's ``tau`` was chosen on its slow stage's scores of every dialogue, but that stage decides only
    the dialogues in the band, and readings added later change scores. Returns ``tau`` (and the one it
    replaced), the balanced accuracy there, the best one and where it was reached.
    """
    verdicts = detector.predict(
        [e.dialogue for e in dialogues], batch_size=batch_size, show_progress_bar=show_progress_bar
    )
    scores = np.array([v.score for v in verdicts])
    labels = np.array([e.label for e in dialogues], dtype=bool)
    top_tau, top = best_threshold(scores, labels, balanced_accuracy)
    tau, bacc = best_threshold(scores, labels, balanced_accuracy, one_se=True)
    before = detector.tau
    detector.tau = tau
    log.info(
        "tau chosen again on %d dialogues: %g -> %g (balanced accuracy %.4f; best %.4f at %g)",
        len(dialogues),
        before,
        tau,
        bacc,
        top,
        top_tau,
    )
    return {
        "tau_before": float(before),
        "tau": tau,
        "val_balanced_accuracy": round(float(bacc), 4),
        "val_balanced_accuracy_before": round(float(balanced_accuracy(labels, scores >= before)), 4),
        "best_balanced_accuracy": round(float(top), 4),
        "best_tau": top_tau,
        "dialogues": len(dialogues),
    }


def recalibrate_saved(folder: Path, dialogues: Sequence[Example], show_progress_bar: bool = False) -> dict[str, Any]:
    """:func:`recalibrate_tau` on the detector saved in ``folder``, loaded as :func:`dialcheck.load` runs it (its
    preferred runtime). For a model calibrated on ONNX int8, once per int8 range this CPU computes correctly (8-bit
    weights only with VNNI, else they saturate; 7-bit everywhere): ``tau_int8`` holds each range's τ, and ``tau``
    (with the other fields) is the one of the range this CPU runs."""
    from ..api import preferred_runtime
    from ..detectors import load_detector
    from ..detectors.onnx import int8_range, int8_ranges

    def once() -> dict[str, Any]:
        return recalibrate_tau(preferred_runtime(load_detector(folder)), dialogues, show_progress_bar=show_progress_bar)

    if DetectorConfig.from_file(Path(folder) / CONFIG_NAME).options.get("runtime") != "onnx-int8":
        return once()
    own = int8_range()
    records = {}
    for r in int8_ranges():
        with _int8_range(r):
            records[r] = once()
    mine = records.get(own, records["reduced"])
    return {**mine, "tau_int8": {r: rec["tau"] for r, rec in records.items()}, "by_int8_range": records}


def apply_recalibration(thresholds: dict[str, Any], record: dict[str, Any]) -> list[str]:
    """Set ``tau`` (and ``tau_int8``, or drop a stale one) in a config's ``thresholds`` from a
    :func:`recalibrate_saved` record; returns what changed, for the config's record and the message."""
    changes = []
    if record["tau"] != thresholds.get("tau"):
        changes.append(f"tau {thresholds.get('tau', 0.5):g} -> {record['tau']:g}")
    thresholds["tau"] = record["tau"]
    if "tau_int8" in record:
        thresholds["tau_int8"] = record["tau_int8"]
        changes.append("tau_int8 = " + ", ".join(f"{r} {t:g}" for r, t in record["tau_int8"].items()))
    else:
        thresholds.pop("tau_int8", None)
    return changes


def recalibrate_config(
    folder: Path, config: DetectorConfig, dialogues: Sequence[Example], where: str, show_progress_bar: bool = False
) -> tuple[dict[str, Any], list[str]]:
    """:func:`recalibrate_saved` on ``folder`` (saved from ``config``), its choice written into ``config``'s
    thresholds (:func:`apply_recalibration`) and metrics; returns the record (``on`` = ``where``) and what changed.
    The caller says where the record goes in ``config.training`` and writes the config."""
    record = recalibrate_saved(folder, dialogues, show_progress_bar=show_progress_bar)
    record["on"] = where
    changes = apply_recalibration(config.thresholds, record)
    config.metrics["val_balanced_accuracy"] = record["val_balanced_accuracy"]
    return record, changes


@contextlib.contextmanager
def _int8_range(value: str) -> Iterator[None]:
    """``DIALCHECK_INT8_RANGE`` set to ``value`` inside the block, as it was after it."""
    old = os.environ.get("DIALCHECK_INT8_RANGE")
    os.environ["DIALCHECK_INT8_RANGE"] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("DIALCHECK_INT8_RANGE", None)
        else:
            os.environ["DIALCHECK_INT8_RANGE"] = old
