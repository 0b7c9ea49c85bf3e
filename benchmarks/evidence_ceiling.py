"""How far the supporting-evidence F1 could go with right verdicts or with the right turns named, from saved
predictions (no model run).

The authors' pair evidence F1 (``dialcheck.evaluation.pair_evidence_f1``) loses pairs in two ways: verdicts (a
false alarm names turns of a consistent dialogue, a missed contradiction names none) and the turns a flagged
contradiction names (an extra turn, or another turn than the gold one). This script scores one detector's
``dialcheck evaluate --predictions`` file under five evidence policies, its pair scores and verdicts unchanged:

- ``as predicted``: the detector's own verdicts and evidence (what ``evaluate`` reports);
- ``top pair only``: a flagged dialogue names only its highest-scored turn;
- ``right verdicts``: every gold contradiction flagged (naming its predicted turns, or its highest-scored turn
  when it was missed), no consistent dialogue flagged;
- ``right turns``: the verdicts as predicted, but a flagged gold contradiction names exactly its gold turns that
  were paired;
- ``both``: right verdicts and right turns, the ceiling of the pairs the detector scores.

It also says where the gold turn sits among the turns paired with the last one (the most recent, the one before,
...), the annotators' recency habit behind DECODE's single gold turn, and how many flagged contradictions name
a top-scored turn that is not gold. ``--audit`` reads a blind reading of such dialogues
(``benchmarks/data/decode_dev_evidence_audit.jsonl``: for each, the gold and the model's turn judged "yes",
"partly" or "no") and scores again with each model turn judged "yes" counted as evidence too.

    dialcheck evaluate --splits dev --predictions runs/dev-pred.jsonl
    python benchmarks/evidence_ceiling.py runs/dev-pred.jsonl [--split dev] [--audit FILE] [--json OUT]
"""

from __future__ import annotations

import argparse
import collections
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from _rows import parsed_rows

Policy = Callable[[dict[str, Any]], list[int]]


def _record(raw: dict[str, Any]) -> dict[str, Any]:
    """The fields the policies read, with pair scores keyed by turn index."""
    return {
        "gold": bool(raw["gold"]),
        "gold_evidence": raw.get("gold_evidence"),
        "contradiction": bool(raw["contradiction"]),
        "evidence": list(raw.get("evidence") or ()),
        "pair_scores": {int(k): float(v) for k, v in (raw.get("pair_scores") or {}).items()},
    }


def _predicted(raw: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """``(split, row)`` of a predictions row whose fields :func:`_record` can read."""
    _record(raw)
    return str(raw["split"]), raw


def _top(r: dict[str, Any]) -> list[int]:
    scores = r["pair_scores"]
    return [max(scores, key=scores.get)] if scores else []


def _named(r: dict[str, Any]) -> list[int]:
    return r["evidence"] if r["contradiction"] else []


def _gold_paired(r: dict[str, Any]) -> list[int]:
    return sorted(set(r["gold_evidence"] or ()) & set(r["pair_scores"]))


POLICIES: dict[str, Policy] = {
    "as predicted": _named,
    "top pair only": lambda r: _top(r) if r["contradiction"] else [],
    "right verdicts": lambda r: (_named(r) or _top(r)) if r["gold"] else [],
    "right turns": lambda r: (_gold_paired(r) or _named(r)) if r["gold"] and r["contradiction"] else _named(r),
    "both": lambda r: (_gold_paired(r) or _top(r)) if r["gold"] else [],
}


def ceilings(records: Sequence[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Pair counts and pair evidence F1 (in %) under each policy.

    Records as written by ``dialcheck evaluate --predictions``; gold contradictions without annotated evidence
    are left out, as ``evaluate`` does. Example: a contradiction flagged with an extra turn, a missed one, a
    false alarm.

    >>> recs = [
    ...     {"gold": True, "gold_evidence": [2], "contradiction": True, "evidence": [0, 2],
    ...      "pair_scores": {"0": 0.9, "2": 0.95}},
    ...     {"gold": True, "gold_evidence": [1], "contradiction": False, "evidence": [],
    ...      "pair_scores": {"1": 0.4, "3": 0.1}},
    ...     {"gold": False, "gold_evidence": [], "contradiction": True, "evidence": [0], "pair_scores": {"0": 0.8}},
    ... ]
    >>> out = ceilings(recs)
    >>> out["as predicted"]["tp"], out["as predicted"]["fp_extra"], out["as predicted"]["fn_unflagged"]
    (1, 1, 1)
    >>> round(out["as predicted"]["f1"], 2), round(out["top pair only"]["f1"], 2), round(out["both"]["f1"], 2)
    (40.0, 50.0, 100.0)
    >>> round(out["right verdicts"]["f1"], 2), round(out["right turns"]["f1"], 2)
    (80.0, 50.0)
    """
    from dialcheck.evaluation import pair_evidence_counts, pair_evidence_f1

    rs = [_record(r) for r in records]
    rs = [r for r in rs if not r["gold"] or r["gold_evidence"] is not None]
    gold = [r["gold_evidence"] or [] for r in rs]
    paired = [list(r["pair_scores"]) or None for r in rs]
    out: dict[str, dict[str, float]] = {}
    for name, policy in POLICIES.items():
        named = [policy(r) for r in rs]
        out[name] = {**pair_evidence_counts(gold, named, paired), "f1": 100 * pair_evidence_f1(gold, named, paired)}
    return out


def gold_recency(records: Sequence[dict[str, Any]]) -> dict[int, list[int]]:
    """For each number of paired turns, how many gold turns sit at each place among them, oldest first.

    >>> gold_recency([{"gold": True, "gold_evidence": [4], "contradiction": True, "evidence": [4],
    ...                "pair_scores": {"0": 0.1, "2": 0.2, "4": 0.9}}])
    {3: [0, 0, 1]}
    """
    table: dict[int, list[int]] = {}
    for raw in records:
        r = _record(raw)
        turns = sorted(r["pair_scores"])
        if not r["gold"] or not turns or r["gold_evidence"] is None:
            continue
        row = table.setdefault(len(turns), [0] * len(turns))
        for g in r["gold_evidence"] or ():
            if g in turns:
                row[turns.index(g)] += 1
    return dict(sorted(table.items()))


def wrong_top(records: Sequence[dict[str, Any]]) -> int:
    """Flagged gold contradictions whose highest-scored turn is not a gold turn.

    >>> wrong_top([{"gold": True, "gold_evidence": [2], "contradiction": True, "pair_scores": {"0": 0.9, "2": 0.5}}])
    1
    """
    rs = [_record(r) for r in records]
    # a flagged dialogue without pair scores has no top turn: not counted
    return sum(
        1
        for r in rs
        if r["gold"] and r["contradiction"] and r["gold_evidence"] and not set(_top(r)) <= set(r["gold_evidence"])
    )


def credited(records: Sequence[dict[str, Any]], audit: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records with each audited model turn judged "yes" added to the gold evidence (the gold turn kept).

    >>> rec = {"id": "dev:1", "gold": True, "gold_evidence": [2], "contradiction": True, "pair_scores": {"0": 0.9}}
    >>> credited([rec], [{"id": "dev:1", "model_turn": 0, "model_turn_judged": "yes"}])[0]["gold_evidence"]
    [0, 2]
    """
    extra = {a["id"]: int(a["model_turn"]) for a in audit if a["model_turn_judged"] == "yes"}
    return [
        {**r, "gold_evidence": sorted({*r["gold_evidence"], extra[r["id"]]})} if r.get("id") in extra else r
        for r in records
    ]


def _audited(row: dict[str, Any]) -> dict[str, Any]:
    """An audit row holding the fields :func:`credited` and the counts read (a KeyError names one it lacks)."""
    missing = [k for k in ("id", "gold_turn_judged", "model_turn_judged") if k not in row]
    if missing:
        raise KeyError(missing[0])
    return {**row, "model_turn": int(row["model_turn"])} if row["model_turn_judged"] == "yes" else row


def _print_table(table: dict[str, dict[str, float]]) -> None:
    print("| policy | tp | fp consistent | fp extra | fn unflagged | fn flagged | pair evidence F1 |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, c in table.items():
        counts = " | ".join(f"{int(c[k]):,}" for k in ("tp", "fp_consistent", "fp_extra", "fn_unflagged", "fn_flagged"))
        print(f"| {name} | {counts} | {c['f1']:.2f} |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("predictions", type=Path, help="JSONL written by dialcheck evaluate --predictions")
    ap.add_argument("--split", default="dev", help="the split to read (default dev)")
    ap.add_argument("--audit", type=Path, default=None, help="JSONL of blindly judged turns (see above)")
    ap.add_argument("--json", type=Path, default=None, help="write the table as JSON here")
    args = ap.parse_args(argv)
    by_split: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    # every row kept (decode_tau_sweep's reader keys by id)
    for split, record in parsed_rows(args.predictions, _predicted, "a predictions row"):
        by_split[split].append(record)
    records = by_split.get(args.split)
    if not records:
        from dialcheck.errors import InputError

        raise InputError(f"{args.predictions}: no predictions for split {args.split!r} (have: {sorted(by_split)})")
    table = ceilings(records)
    print(f"{args.predictions} ({args.split}, {len(records)} dialogues)\n")
    _print_table(table)
    n_wrong_top = wrong_top(records)
    print(f"\nflagged contradictions whose top-scored turn is not gold: {n_wrong_top}")
    recency = gold_recency(records)
    print("\n| turns paired | gold turns at each place, oldest first | the most recent |")
    print("|---:|---|---:|")
    for n, row in recency.items():
        share = 100 * row[-1] / max(1, sum(row))
        print(f"| {n} | {', '.join(str(x) for x in row)} | {share:.1f}% |")
    payload: dict[str, Any] = {"split": args.split, "policies": table, "wrong_top": n_wrong_top}
    payload["gold_recency"] = {str(k): v for k, v in recency.items()}
    if args.audit:
        audit = parsed_rows(args.audit, _audited, "a row of judged turns")
        judged = {
            side: dict(collections.Counter(a[f"{side}_turn_judged"] for a in audit)) for side in ("gold", "model")
        }
        print(
            f"\n{args.audit}: {len(audit)} dialogues read; gold turn judged {judged['gold']}, "
            f"model turn {judged['model']}"
        )
        print("with each model turn judged 'yes' counted as evidence too:\n")
        payload["audit"] = {"judged": judged, "policies": ceilings(credited(records, audit))}
        _print_table(payload["audit"]["policies"])
    if args.json:
        args.json.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    from _cli import run

    raise SystemExit(run(main))
