"""``dialcheck train --task paircheck --init MAIN PAIRS --tau-pairs T [--veto-below V]``: put a pair check behind
a four-category CDConv detector (:mod:`dialcheck.detectors.paircheck`).

Nothing is trained or chosen here: the thresholds are given. ``benchmarks/cdconv_pair_check.py`` chooses them on
the predictions of a split the main detector did not train on, and says how the choice held elsewhere.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from pathlib import Path

from ..detectors import load_detector
from ..detectors.paircheck import PairCheckedDetector
from ..errors import InputError
from .card import init_record, model_reference, write_model_card

__all__ = ["run_paircheck"]


def run_paircheck(args: argparse.Namespace, out: Path, command: str, machine: str) -> int:
    """The CLI path (see the module text)."""
    from ..cli.common import set_threads

    folders = args.init_soup or ([args.init] if args.init else [])
    if len(folders) != 2:
        raise InputError(f"--task paircheck needs --init MAIN PAIRS (two detector folders), got {len(folders)}")
    if args.tau_pairs is None:
        raise InputError("--task paircheck needs --tau-pairs (benchmarks/cdconv_pair_check.py chooses it)")
    if not 0.0 <= args.veto_below <= 1.0 or args.tau_pairs < 0.0:
        raise InputError(
            f"--tau-pairs must be >= 0 and --veto-below in [0, 1], got {args.tau_pairs}, {args.veto_below}"
        )
    for f in folders:
        if not (Path(f) / "dialcheck.json").exists():
            raise InputError("--init needs a saved dialcheck detector folder (dialcheck.json is missing)", f)
    set_threads(args.threads)
    main, pairs = (load_detector(f) for f in folders)
    if not main.config.detector.startswith("cdconv."):
        raise InputError(f"MAIN must be a four-category cdconv.* detector, got {main.config.detector}", folders[0])
    if pairs.config.detector != "decode.utterance.v1":
        raise InputError(
            f"PAIRS must be a pair detector (decode.utterance.v1, e.g. from --task ocnli), got {pairs.config.detector}",
            folders[1],
        )
    det = PairCheckedDetector.build(main, pairs, args.tau_pairs, args.veto_below)
    det.config.training = {
        "command": command,
        "parts": {
            key: init_record(model_reference(Path(f)), d.config)
            for key, f, d in zip(("main", "pairs"), folders, (main, pairs), strict=True)
        },
        "thresholds": f"tau_pairs {args.tau_pairs}, veto_below {args.veto_below}, given on the command line",
        "machine": machine,
        "date": dt.date.today().isoformat(),
    }
    det.save(out)
    write_model_card(out, det.config)
    print(f"dialcheck: saved {out} ({json.dumps(det.config.thresholds)})", file=sys.stderr)
    return 0
