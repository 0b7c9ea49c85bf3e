"""What a cascade of two DECODE detectors would score, for several bands, without re-running either model.

`dialcheck evaluate --predictions` stores every pair score of a detector. Given the files of a fast and a
slow detector (the same splits), each dialogue is decided by the fast one at its τ when its score lies
outside the band, else by the slow one at its own τ (as `dialcheck.detectors.CascadeDetector` does), and
the paper's metrics are recomputed with the code `dialcheck evaluate` uses. Also printed: the share of each
split's dialogues the slow detector re-reads, which sets the cascade's speed.

    dialcheck evaluate --model FAST --predictions runs/fast.jsonl
    dialcheck evaluate --model SLOW --predictions runs/slow.jsonl
    python benchmarks/cascade_sweep.py runs/fast.jsonl runs/slow.jsonl --fast-tau 0.655 --slow-tau 0.7 \
        --slow-eta-e 0.9 --bands 0.3:0.9,0.1:0.95,0:1

Band 0:1 is the slow detector alone; a band of the fast τ alone (e.g. 0.655:0.655) is the fast one.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from decode_tau_sweep import COLUMNS, read_predictions, redecide

from dialcheck.cli.common import unit_float
from dialcheck.datasets import load_dataset
from dialcheck.errors import InputError
from dialcheck.evaluation.decode import SPLITS, decode_metrics


def cascade_rows(
    fast: dict[str, list[dict]],
    slow: dict[str, list[dict]],
    fast_tau: float,
    fast_eta_e: float,
    slow_tau: float,
    slow_eta_e: float,
    bands: list[tuple[float, float]],
) -> list[dict[str, float]]:
    """One row of metrics per band (``split/metric`` keys, plus ``split/reread`` in percent), for the splits
    both files hold."""
    splits = [s for s in fast if s in slow]  # a split only one file holds is left out
    if not splits:
        raise InputError("the two prediction files share no split")
    examples = {s: {e.id: e for e in load_dataset(SPLITS[s])} for s in splits}
    rows = []
    for low, high in bands:
        row: dict[str, float] = {"low": low, "high": high}
        for split in splits:
            records = fast[split]
            other = {r["id"]: r for r in slow[split]}
            verdicts, reread = [], 0
            for r in records:
                v = redecide(r, fast_tau, fast_eta_e)
                if low <= v.score <= high:
                    if r["id"] not in other:
                        raise InputError(f"the slow detector's file has no prediction for {split} {r['id']}")
                    v, reread = redecide(other[r["id"]], slow_tau, slow_eta_e), reread + 1
                verdicts.append(v)
            exs = [examples[split][r["id"]] for r in records]
            row.update({f"{split}/{k}": val for k, val in decode_metrics(split, exs, verdicts).items()})
            row[f"{split}/reread"] = 100.0 * reread / max(len(records), 1)
        rows.append(row)
    return rows


def to_markdown(rows: list[dict[str, float]]) -> str:
    cols = [c for c in COLUMNS if any(f"{c[0]}/{c[1]}" in r for r in rows)]
    splits = [s for s in ("dev", "human_bot", "a2t", "rct", "human_bot_raw") if any(f"{s}/reread" in r for r in rows)]
    head = [c[2] for c in cols] + [f"re-read {s}" for s in splits]
    lines = ["| band | " + " | ".join(head) + " |", "|---|" + "---:|" * len(head)]
    for r in rows:
        cells = [f"{r[f'{s}/{k}']:.2f}" if f"{s}/{k}" in r else "–" for s, k, _ in cols]
        cells += [f"{r[f'{s}/reread']:.1f}%" for s in splits]
        lines.append(f"| [{r['low']:g}, {r['high']:g}] | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def band(text: str) -> tuple[float, float]:
    """An argparse type: LOW:HIGH, a band of scores in [0, 1] with LOW at most HIGH.

    >>> band("0.2:0.9")
    (0.2, 0.9)
    """
    low, sep, high = text.partition(":")
    if not sep:
        raise argparse.ArgumentTypeError(f"expected LOW:HIGH, got {text!r}")
    lo, hi = unit_float(low), unit_float(high)
    if lo > hi:
        raise argparse.ArgumentTypeError(f"LOW must not be above HIGH, got {text!r}")
    return lo, hi


def bands(text: str) -> list[tuple[float, float]]:
    """An argparse type: comma-separated LOW:HIGH bands, at least one."""
    out = [band(b.strip()) for b in text.split(",") if b.strip()]
    if not out:
        raise argparse.ArgumentTypeError("name at least one LOW:HIGH band")
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("fast", type=Path, help="predictions of the fast detector (dialcheck evaluate --predictions)")
    p.add_argument("slow", type=Path, help="predictions of the slow detector, same splits")
    p.add_argument("--fast-tau", type=unit_float, required=True)
    p.add_argument("--fast-eta-e", type=unit_float, default=None, help="default: --fast-tau")
    p.add_argument("--slow-tau", type=unit_float, required=True)
    p.add_argument("--slow-eta-e", type=unit_float, default=None, help="default: --slow-tau")
    p.add_argument(
        "--bands", type=bands, default="0:1", help="comma-separated LOW:HIGH bands of the fast detector's score"
    )
    p.add_argument("--markdown", type=Path, default=None)
    args = p.parse_args(argv)
    for low, high in args.bands:  # before the predictions are read
        if not low <= args.fast_tau <= high:
            p.error(f"argument --bands: band {low:g}:{high:g} must hold --fast-tau {args.fast_tau:g}")
    fe = args.fast_tau if args.fast_eta_e is None else args.fast_eta_e
    se = args.slow_tau if args.slow_eta_e is None else args.slow_eta_e
    rows = cascade_rows(
        read_predictions([args.fast]), read_predictions([args.slow]), args.fast_tau, fe, args.slow_tau, se, args.bands
    )
    table = to_markdown(rows)
    sys.stdout.write(table)
    if args.markdown:
        args.markdown.write_text(table, encoding="utf-8")
    return 0


if __name__ == "__main__":
    from _cli import run

    raise SystemExit(run(main))
