"""``dialcheck train --task cascade --init FAST SLOW``: choose a cascade's band on held-out dialogues.

Nothing is trained: both detectors read the validation dialogues (DECODE's held-out train groups, the split
every DECODE detector here calibrates on, or ``--calibrate-on FILE``), and :func:`choose_band` picks the
narrowest band of the fast detector's scores that keeps the cascade's verdicts within
``--max-disagreement`` of the slow detector's.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..detectors import load_detector
from ..detectors.base import Detector
from ..detectors.cascade import CascadeDetector, choose_band
from ..detectors.modeling import CONFIG_NAME
from ..errors import InputError
from ..evaluation.metrics import balanced_accuracy
from ..schema import Example
from .card import init_record, model_reference, write_model_card
from .recalibrate import calibration_dialogues, recalibrate_config

__all__ = ["cascade_report", "run_cascade"]

log = logging.getLogger(__name__)

BAND_OPTIONS = (0.0, 0.01, 0.02, 0.05, 0.1)
# `train --task cascade --ellipsis/.../--introductions`
CASCADE_READINGS = ("ellipsis", "questions", "slots", "subjects", "introductions", "times")


def cascade_report(
    first: Detector,
    second: Detector,
    dialogues: Sequence[Example],
    max_disagreement: float,
    batch_size: int = 64,
    show_progress_bar: bool = False,
) -> tuple[CascadeDetector, dict[str, Any]]:
    """The cascade of ``first`` and ``second`` with its band chosen on ``dialogues``, and what it measured."""
    texts = [e.dialogue for e in dialogues]
    gold = [bool(e.label) for e in dialogues]
    one = first.predict(texts, batch_size=batch_size, show_progress_bar=show_progress_bar)
    two = second.predict(texts, batch_size=batch_size, show_progress_bar=show_progress_bar)
    s1 = np.array([v.score for v in one])
    f1 = np.array([v.contradiction for v in one])
    f2 = np.array([v.contradiction for v in two])

    def measure(share: float) -> dict[str, float]:
        low, high = choose_band(s1, f2, first.tau, share)
        inside = (s1 >= low) & (s1 <= high)
        pred = np.where(inside, f2, f1)
        return {
            "recheck_low": low,
            "recheck_high": high,
            "val_rechecked": round(float(inside.mean()), 4),
            "val_disagreement": round(float((pred != f2).mean()), 4),
            "val_balanced_accuracy": round(balanced_accuracy(gold, list(pred)), 4),
        }

    report: dict[str, Any] = {
        **measure(max_disagreement),
        "val_balanced_accuracy_first": round(balanced_accuracy(gold, list(f1)), 4),
        "val_balanced_accuracy_second": round(balanced_accuracy(gold, list(f2)), 4),
        "validation_dialogues": len(dialogues),
    }
    # what other --max-disagreement values would give: the speed / agreement trade-off, for the card
    report["other_bands"] = {str(d): measure(d) for d in BAND_OPTIONS if d != max_disagreement}
    for d, m in report["other_bands"].items():
        log.info("--max-disagreement %s: %s", d, m)
    low, high = report["recheck_low"], report["recheck_high"]
    return CascadeDetector.build(first, second, low, high), report


def read_stages_with(
    first: Detector,
    second: Detector,
    readings: dict[str, str],
    dialogues: Sequence[Example],
    recalibrate: bool = False,
) -> dict[str, float] | None:
    """Set each reading option in ``readings`` on both stages (where a stage has it). SLOW's ``tau`` and
    ``eta_e`` were chosen for its own readings, so when one changes (or with ``recalibrate``: its scores
    changed, e.g. on int8) they are chosen again on ``dialogues`` by the training rule
    (:func:`dialcheck.training.trainer.calibrate`); returns that choice, or None when nothing changed."""
    changed = recalibrate
    for d in (first, second):
        for name, value in readings.items():
            if not hasattr(d, name):
                raise InputError(f"--{name}: {d.config.detector} has no such reading (utterance-based detectors do)")
            changed |= d is second and getattr(d, name) != value
            setattr(d, name, value)
    if not changed:
        return None
    from .trainer import calibrate

    before = {"tau": second.tau, "eta_e": second.eta_e}
    metrics = calibrate(second, dialogues)
    log.info(
        "SLOW read with %s: tau %s -> %s, eta_e %s -> %s",
        readings,
        before["tau"],
        second.tau,
        before["eta_e"],
        second.eta_e,
    )
    return {"tau_before": before["tau"], "eta_e_before": before["eta_e"], **metrics}


def run_cascade(args: argparse.Namespace, out: Path, command: str, machine: str) -> int:
    """The CLI path (see the module text)."""
    from ..cli.common import set_threads

    folders = args.init_soup or ([args.init] if args.init else [])
    if len(folders) != 2:
        raise InputError(f"--task cascade needs --init FAST SLOW (two detector folders), got {len(folders)}")
    if not 0.0 <= args.max_disagreement < 1.0:
        raise InputError(f"--max-disagreement must lie in [0, 1), got {args.max_disagreement}")
    for f in folders:
        if not (Path(f) / "dialcheck.json").exists():
            raise InputError("--init needs a saved dialcheck detector folder (dialcheck.json is missing)", f)
    dialogues, where = calibration_dialogues(
        args.calibrate_on, args.data_dir, args.validation_fraction, args.seed, args.limit
    )
    set_threads(args.threads)  # the data is read first: a bad file fails before two models load
    first, second = (load_detector(f) for f in folders)
    readings = {k: v for k in CASCADE_READINGS if (v := getattr(args, k, None)) is not None}
    runtime = getattr(args, "runtime", None) or ("onnx" if getattr(args, "prefer_onnx", False) else "torch")
    if runtime != "torch":  # the band (and, on int8, SLOW's thresholds) are chosen on the scores it will give
        for d in (first, second):
            d.use_onnx(int8=runtime == "onnx-int8")
    recalibrated = read_stages_with(first, second, readings, dialogues, recalibrate=runtime == "onnx-int8")
    det, report = cascade_report(
        first, second, dialogues, args.max_disagreement, show_progress_bar=not args.no_progress
    )
    for name, value in readings.items():
        setattr(det, name, value)  # saved in options.readings, set on both stages when the cascade loads
    if runtime != "torch":
        det.config.options["runtime"] = runtime  # read by dialcheck.api.preferred_runtime
    det.config.metrics = {k: v for k, v in report.items() if k.startswith("val_")}
    det.config.training = {
        "command": command,
        "stages": {
            key: init_record(model_reference(Path(f)), d.config)
            for key, f, d in zip(("first", "second"), folders, (first, second), strict=True)
        },
        "calibration": f"band on {where}, at most {args.max_disagreement} of the verdicts unlike the second's",
        "validation_dialogues": len(dialogues),
        "other_bands": report["other_bands"],
        **({"readings": readings} if readings else {}),
        **({"second_recalibrated": recalibrated} if readings or recalibrated else {}),
        **({"calibrated_on_runtime": runtime} if runtime != "torch" else {}),
        "machine": machine,
        "date": dt.date.today().isoformat(),
    }
    det.save(out)
    if getattr(args, "recalibrate", False):  # on the saved folder, as dialcheck.load runs it (its runtime, per range)
        record, _ = recalibrate_config(out, det.config, dialogues, str(where), show_progress_bar=not args.no_progress)
        det.config.training["recalibrated"] = record
        (out / CONFIG_NAME).write_text(det.config.to_json(), encoding="utf-8")
    write_model_card(out, det.config)
    shown = {k: v for k, v in report.items() if k != "other_bands"}
    print(f"dialcheck: saved {out} ({json.dumps(shown)})", file=sys.stderr)
    return 0
