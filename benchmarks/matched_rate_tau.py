"""The threshold at which a detector flags no more of the consistent validation dialogues than another detector does.

The training rule (``--recalibrate``: the highest τ within one standard error of the best balanced accuracy) picks
τ from a flat curve, so a model that ranks better can land on a much lower τ and flag more everywhere. This script
holds the false-alarm rate instead: for each int8 range this CPU computes correctly (a model not on ONNX int8
scores the same in both), it scores DECODE's held-out validation dialogues (those ``--recalibrate`` reads, or
``--calibrate-on``) with both models as they run by default, and prints the smallest τ for ``--model`` whose
share of consistent dialogues flagged is not above ``--like``'s at ``--like``'s own τ, with the recall both reach
there. ``--save OUT`` writes ``--model`` with those thresholds (``thresholds.tau`` and ``tau_int8``), as
``dialcheck models --save`` does. Used by Rule BJ (session 78, docs/benchmarks.md, "Written dialogues for both stages"):

    python benchmarks/matched_rate_tau.py --model runs/s78/BI --like default --save runs/s78/BJ --threads 2
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import numpy as np


def matched_tau(scores: np.ndarray, labels: np.ndarray, rate: float) -> float:
    """The smallest threshold (a reply is flagged at ``score >= tau``) whose share of negatives flagged is not above
    ``rate``: just above the negative score that would be one too many.

    >>> s, y = np.array([0.1, 0.4, 0.6, 0.9, 0.8]), np.array([0, 0, 0, 1, 1], dtype=bool)
    >>> t = matched_tau(s, y, 1 / 3)  # one negative of three may be flagged: 0.6 is, 0.4 is not
    >>> 0.4 < t < 0.4001, int((s[~y] >= t).sum())
    (True, 1)
    >>> 0.6 < matched_tau(s, y, 0.0) < 0.6001  # none may be
    True
    """
    neg = np.sort(np.asarray(scores, dtype=float)[~labels])[::-1]
    allowed = int(np.floor(rate * len(neg) + 1e-9))  # negatives that may be flagged
    if allowed >= len(neg):
        return float(neg[-1])
    return float(np.nextafter(neg[allowed], np.inf))


def _read(model: str, dialogues: list) -> tuple[float, np.ndarray]:
    """``model``'s τ and scores of ``dialogues`` as it runs by default, loaded afresh (not from :func:`dialcheck.load`'s
    cache), so that each int8 range gets its own export and its own τ."""
    from dialcheck.api import preferred_runtime
    from dialcheck.detectors import load_detector, model_folder

    det = preferred_runtime(load_detector(model_folder(model)))
    return float(det.tau), np.array([v.score for v in det.predict([e.dialogue for e in dialogues])])


def main(argv: list[str] | None = None) -> int:
    from dialcheck.cli.common import nonnegative_int

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True, help="the detector whose τ is chosen")
    ap.add_argument("--like", default="default", help="the detector whose false-alarm rate is kept (default: default)")
    ap.add_argument("--calibrate-on", default=None, help="labelled dialogues instead of DECODE's validation groups")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--threads", type=nonnegative_int, default=0, help="torch threads (0 = torch's default)")
    ap.add_argument("--save", default=None, help="write --model with the chosen thresholds to this new folder")
    ap.add_argument("--json", default=None, help="write the record here")
    args = ap.parse_args(argv)
    if args.save and Path(args.save).exists():  # before the scoring, not after it
        ap.error(f"argument --save: {args.save} exists: choose a new folder")

    from dialcheck.cli.common import set_threads
    from dialcheck.detectors import model_folder
    from dialcheck.detectors.modeling import CONFIG_NAME, DetectorConfig
    from dialcheck.detectors.onnx import int8_range, int8_ranges
    from dialcheck.errors import InputError
    from dialcheck.training.recalibrate import _int8_range, calibration_dialogues

    set_threads(args.threads)

    dialogues, where = calibration_dialogues(args.calibrate_on, args.data_dir)
    labels = np.array([bool(e.label) for e in dialogues])
    ranges = int8_ranges()
    record: dict[str, Any] = {"on": where, "dialogues": len(dialogues), "like": args.like, "by_int8_range": {}}
    for r in ranges:
        with _int8_range(r):
            like_tau, like = _read(args.like, dialogues)
            _, mine = _read(args.model, dialogues)
        rate = float(np.mean(like[~labels] >= like_tau))
        tau = matched_tau(mine, labels, rate)
        rec = {
            "like_tau": round(like_tau, 6),
            "false_alarm_rate": round(rate, 4),
            "like_recall": round(float(np.mean(like[labels] >= like_tau)), 4),
            "tau": tau,
            "model_false_alarm_rate": round(float(np.mean(mine[~labels] >= tau)), 4),
            "model_recall": round(float(np.mean(mine[labels] >= tau)), 4),
        }
        record["by_int8_range"][r] = rec
        print(f"{r}: {json.dumps(rec)}", file=sys.stderr)
    record["tau"] = record["by_int8_range"].get(int8_range(), record["by_int8_range"]["reduced"])["tau"]
    if args.json:
        Path(args.json).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    if args.save:
        out = Path(args.save)
        if out.exists():
            raise InputError(f"{out} exists: choose a new folder")  # made while this ran
        shutil.copytree(model_folder(args.model), out)
        cfg_path = out / CONFIG_NAME
        cfg = DetectorConfig.from_file(cfg_path)
        cfg.thresholds["tau"] = record["tau"]
        cfg.thresholds["tau_int8"] = {r: rec["tau"] for r, rec in record["by_int8_range"].items()}
        cfg.training.setdefault("derived_from", {})["matched_rate"] = record
        cfg_path.write_text(cfg.to_json(), encoding="utf-8")
        print(f"saved {out} with tau_int8 {cfg.thresholds['tau_int8']}", file=sys.stderr)
    print(json.dumps(record))
    return 0


if __name__ == "__main__":
    from _cli import run

    raise SystemExit(run(main))
