"""The default gate's small sets only, for several models side by side, in about a minute.

Hand-labelled sets A, B and values, the 60 hand-labelled neighbour pairs, CI-ToD's 210 held-out history
dialogues and the README demo, measured as ``default_gate.py`` measures them: a first look at a candidate
before the full gate (which also evaluates every DECODE split and runs the probes).

    python benchmarks/gate_small_sets.py default runs/cascade1600 --threads 2
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def small_sets(name: str, data_dir: str | None = None) -> dict[str, Any]:
    """The small-set numbers of one model folder (``default`` = the shipped one)."""
    import default_gate as gate
    from citod_history_dialogues import load_records

    import dialcheck
    from dialcheck.evaluation.decode import DecodeEvaluator
    from dialcheck.io import parse_dialogue, parse_example

    det = dialcheck.load(None if name == "default" else name)
    ev = DecodeEvaluator(
        splits=[], data_dir=data_dir, files=[HERE / "data" / f"{f}.jsonl" for f in (*gate.HAND, gate.NEIGHBOURS)]
    )
    ev.files[gate.CITOD] = [parse_example(r) for r in load_records("test", data=data_dir)[0]]
    res = ev(det)
    out: dict[str, Any] = {"model": name, "tau": round(det.tau, 4)}
    for f in (*gate.HAND, gate.CITOD):
        out[f"{f}/accuracy"] = res[f"{f}/accuracy"]
    out[f"{gate.CITOD}/roc_auc"] = res.get(f"{gate.CITOD}/roc_auc", "–")  # left out where undefined (one class)
    nb = ev.predictions[gate.NEIGHBOURS]
    out[f"{gate.NEIGHBOURS}/roc_auc"] = res.get(f"{gate.NEIGHBOURS}/roc_auc", "–")  # left out where undefined
    out[f"{gate.NEIGHBOURS}/false_alarms"] = sum(v.contradiction and not e.label for e, v in nb)
    demo = [o for o in json.loads(gate.DEMO.read_text(encoding="utf-8")) if o.get("id") in gate.DEMO_EXPECTED]
    for o, v in zip(demo, det.predict([parse_dialogue(o) for o in demo]), strict=True):
        out[f"demo/{o['id']}"] = f"{'flagged' if v.contradiction else 'passes'} ({v.score:.3f})"
    return out


def main(argv: list[str] | None = None) -> int:
    from dialcheck.cli.common import nonnegative_int

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="+", help="model folders ('default' = the shipped one)")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--threads", type=nonnegative_int, default=0, help="torch threads (0 = torch's default)")
    args = ap.parse_args(argv)
    from dialcheck.cli.common import set_threads

    set_threads(args.threads)
    rows = [small_sets(m, args.data_dir) for m in args.models]
    keys = [k for k in rows[0] if k != "model"]
    print("| " + " | ".join(["measure", *(r["model"] for r in rows)]) + " |")
    print("|---|" + "---:|" * len(rows))
    for k in keys:
        print("| " + " | ".join([k, *(str(r[k]) for r in rows)]) + " |")
    return 0


if __name__ == "__main__":
    from _cli import run

    raise SystemExit(run(main))
