"""What a cascade's verdicts do with a ``--tau`` set outside its re-read band, before and after the band holds τ.

The cascade's slow stage re-reads the dialogues its fast stage scores inside the band ``[recheck_low,
recheck_high]``; ``tau`` is the slow stage's. Until session 87 a τ set outside the band left the fast stage's
verdicts outside it standing (``--tau 0.95`` with a band ending at 0.91: a fast score of 0.93 a contradiction);
since then the band stretches to hold τ (``CascadeDetector.reread_band``). Both stages read every dialogue once
here, and each τ is decided both ways from those scores, as ``CascadeDetector.predict`` decides:

- ``saved band``: the fast stage decides outside ``[low, high]``, the slow stage (at τ) inside (before);
- ``band holding τ``: the same with ``[min(low, τ), max(high, τ)]`` (``CascadeDetector.reread_band``, now).

Printed per split and τ: accuracy, false alarms, misses, the verdicts whose score is on the other side of τ from
their verdict, and the dialogues the slow stage re-reads.

    python benchmarks/cascade_tau_band.py [--model decode-cascade-v9] [--splits human_bot,rct,dev] \
        [--taus 0.02,0.2,0.782436,0.9,0.95,0.97] [--limit N] [--threads 2] [--json OUT]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

WAYS = ("saved band", "band holding τ")


def decide_all(rows: Sequence[dict[str, Any]], band: tuple[float, float], tau: float, hold: bool) -> dict[str, int]:
    """Dialogues ``rows`` (each the ``fast`` and ``slow`` stage's dialogue score and the gold ``label``) decided
    at ``tau`` with the re-read ``band`` (stretched to hold ``tau`` when ``hold``), as the cascade decides: counts
    of right verdicts, false alarms, misses, verdicts whose score is on the other side of ``tau``, and re-reads.

    >>> rows = [{"fast": 0.93, "slow": 0.2, "label": False}, {"fast": 0.5, "slow": 0.97, "label": True}]
    >>> decide_all(rows, (0.3, 0.9), 0.95, hold=False)
    {'right': 1, 'false_alarms': 1, 'misses': 0, 'against_tau': 1, 'reread': 1}
    >>> decide_all(rows, (0.3, 0.9), 0.95, hold=True)
    {'right': 2, 'false_alarms': 0, 'misses': 0, 'against_tau': 0, 'reread': 2}
    """
    low, high = band
    if hold:
        low, high = min(low, tau), max(high, tau)
    out = dict.fromkeys(("right", "false_alarms", "misses", "against_tau", "reread"), 0)
    for r in rows:
        if low <= r["fast"] <= high:
            score, flag = r["slow"], r["slow"] >= tau
            out["reread"] += 1
        else:
            score, flag = r["fast"], r["fast"] > high
        out["right"] += int(flag == r["label"])
        out["false_alarms"] += int(flag and not r["label"])
        out["misses"] += int(r["label"] and not flag)
        out["against_tau"] += int(flag != (score >= tau))
    return out


def score_rows(det: Any, examples: Sequence[Any]) -> list[dict[str, Any]]:
    """Each example's fast and slow stage dialogue scores (each stage reading every dialogue) and gold label."""
    dialogues = [e.dialogue for e in examples]
    fast, slow = det.first.predict(dialogues), det.second.predict(dialogues)
    return [
        {"fast": f.score, "slow": s.score, "label": bool(e.label)} for e, f, s in zip(examples, fast, slow, strict=True)
    ]


def main(argv: list[str] | None = None) -> int:
    from decode_tau_sweep import unit_floats

    from dialcheck.cli.common import comma_choices, nonnegative_int, positive_int
    from dialcheck.evaluation.decode import SPLITS

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="decode-cascade-v9")
    ap.add_argument("--splits", type=comma_choices(tuple(SPLITS)), default="human_bot,rct,dev")
    ap.add_argument("--taus", type=unit_floats, default="0.02,0.2,0.782436,0.9,0.95,0.97")
    ap.add_argument("--limit", type=positive_int, default=None, help="the first N dialogues of each split")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--threads", type=nonnegative_int, default=2, help="torch threads (0 = torch's default)")
    ap.add_argument("--json", default=None, help="write the numbers here")
    args = ap.parse_args(argv)
    from _output import emit
    from cascade_evidence import load_cascade

    from dialcheck.datasets import load_dataset

    det = load_cascade(args.model, args.threads)
    band = det.band
    lines = [
        f"{args.model}, threads {args.threads}; band {band[0]:.3f}-{band[1]:.3f}, its slow τ {det.tau:g}\n",
        "| split (dialogues) | τ | re-read band | accuracy | false alarms | misses | verdicts against τ | re-read |",
        "|---|---:|---|---:|---:|---:|---:|---:|",
    ]
    results: dict[str, Any] = {"model": args.model, "band": list(band), "tau": det.tau, "splits": {}}
    for split in args.splits:
        rows = score_rows(det, load_dataset(SPLITS[split], args.data_dir)[: args.limit])
        n = len(rows)
        results["splits"][split] = {"n": n, "taus": {}}
        for tau in args.taus:
            for way in WAYS:
                c = decide_all(rows, band, tau, hold=way != WAYS[0])
                results["splits"][split]["taus"].setdefault(str(tau), {})[way] = c
                lines.append(
                    f"| {split} ({n}) | {tau:g} | {way} | {100 * c['right'] / n:.2f} | {c['false_alarms']} | "
                    f"{c['misses']} | {c['against_tau']} | {c['reread']} |"
                )
    emit("\n".join(lines), results, json_path=Path(args.json) if args.json else None)
    return 0


if __name__ == "__main__":
    from _cli import run

    raise SystemExit(run(main))
