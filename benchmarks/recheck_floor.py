"""What a cascade's ``recheck_floor`` changes: the slow stage re-reads only the turns the fast one scored >= f.

For each split the fast stage reads every dialogue and the slow stage re-reads, in full, those the fast one scores
inside the band (as the cascade does with no floor). Each floor f is then decided from those scores: of a dialogue
in the band, the slow stage's turns that the fast one scored >= f (and the fast stage's highest) decide, with the
slow stage's τ and η_e, as ``CascadeDetector`` does with ``recheck_floor`` f (its slot readings are per turn, so
the slow stage's score of a turn does not depend on the other turns read). Printed per split and floor: the share
of the slow stage's pairs still read (the cost the floor saves), and the dialogues whose verdict or evidence
differs from the full re-read (with how many more or fewer verdicts are right).

    python benchmarks/recheck_floor.py [--model decode-cascade-v6] [--splits dev,human_bot,rct] \
        [--floors 0.005,0.01,0.02,0.05,0.1,0.2] [--threads 2] [--json OUT]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def floor_changes(rows: Sequence[dict[str, Any]], floor: float, tau: float, eta_e: float) -> dict[str, int]:
    """Band dialogues ``rows`` (each ``fast`` and ``slow`` pair scores by turn, the slow stage's full-read
    ``verdict`` and ``evidence``, and the gold ``label``) decided at ``floor``: pairs read, verdicts and evidence
    that differ from the full re-read, and the change in verdicts right.

    >>> row = {"fast": {0: 0.6, 1: 0.01}, "slow": {0: 0.2, 1: 0.95}, "verdict": True, "evidence": (1,), "label": True}
    >>> floor_changes([row], 0.05, tau=0.5, eta_e=0.9)
    {'pairs': 2, 'read': 1, 'verdicts': 1, 'right': -1, 'evidence': 0}
    >>> floor_changes([row], 0.0, tau=0.5, eta_e=0.9)
    {'pairs': 2, 'read': 2, 'verdicts': 0, 'right': 0, 'evidence': 0}
    """
    from dialcheck.detectors.cascade import not_ruled_out
    from dialcheck.detectors.utterance import decide

    out = dict.fromkeys(("pairs", "read", "verdicts", "right", "evidence"), 0)
    for r in rows:
        keep = not_ruled_out(r["fast"], floor)
        scores = {i: s for i, s in r["slow"].items() if i in keep}
        v = decide(scores, tau, eta_e)
        out["pairs"] += len(r["slow"])
        out["read"] += len(scores)
        if v.contradiction != r["verdict"]:
            out["verdicts"] += 1
            out["right"] += int(v.contradiction == r["label"]) - int(r["verdict"] == r["label"])
        elif set(v.evidence) != set(r["evidence"]):
            out["evidence"] += 1
    return out


def band_rows(det: Any, examples: Sequence[Any]) -> list[dict[str, Any]]:
    """The fast and slow pair scores of the dialogues ``det`` (a cascade) re-reads, with the slow verdicts."""
    first, second = det.first, det.second
    dialogues = [e.dialogue for e in examples]
    fast = first.predict(dialogues)
    low, high = det.band
    again = [i for i, v in enumerate(fast) if low <= v.score <= high]
    slow = second.predict([dialogues[i] for i in again])
    return [
        {
            "fast": fast[i].pair_scores,
            "slow": v.pair_scores,
            "verdict": v.contradiction,
            "evidence": v.evidence,
            "label": bool(examples[i].label),
        }
        for i, v in zip(again, slow, strict=True)
    ]


def main(argv: list[str] | None = None) -> int:
    from decode_tau_sweep import unit_floats

    from dialcheck.cli.common import comma_choices, nonnegative_int
    from dialcheck.evaluation.decode import SPLITS

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="decode-cascade-v6")
    ap.add_argument("--splits", type=comma_choices(tuple(SPLITS)), default="dev,human_bot,rct")
    ap.add_argument("--floors", type=unit_floats, default="0.005,0.01,0.02,0.05,0.1,0.2")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--threads", type=nonnegative_int, default=2, help="torch threads (0 = torch's default)")
    ap.add_argument("--json", default=None, help="write the numbers here")
    args = ap.parse_args(argv)
    from _output import emit
    from cascade_evidence import load_cascade

    from dialcheck.datasets import load_dataset

    det = load_cascade(args.model, args.threads)
    det.recheck_floor = 0.0
    floors = args.floors
    lines = [
        f"{args.model}, threads {args.threads}; band {det.band[0]:.3f}-{det.band[1]:.3f}, slow τ {det.tau:g}, "
        f"η_e {det.eta_e:g}\n",
        "| split (dialogues, in the band) | floor | slow pairs read | verdicts changed (right ±) | evidence changed |",
        "|---|---:|---:|---:|---:|",
    ]
    results: dict[str, Any] = {"model": args.model, "splits": {}}
    for split in args.splits:
        examples = load_dataset(SPLITS[split], args.data_dir)
        rows = band_rows(det, examples)
        results["splits"][split] = {"n": len(examples), "band": len(rows), "floors": {}}
        for f in floors:
            c = floor_changes(rows, f, det.tau, det.eta_e)
            results["splits"][split]["floors"][str(f)] = c
            share = c["read"] / c["pairs"] if c["pairs"] else 1.0
            lines.append(
                f"| {split} ({len(examples)}, {len(rows)}) | {f:g} | {c['read']} of {c['pairs']} ({share:.0%}) | "
                f"{c['verdicts']} ({c['right']:+d}) | {c['evidence']} |"
            )
    emit("\n".join(lines), results, json_path=Path(args.json) if args.json else None)
    return 0


if __name__ == "__main__":
    from _cli import run

    raise SystemExit(run(main))
