"""Who names the evidence of a cascade's sure contradictions: the fast stage (as shipped) or the slow one?

A cascade flags a dialogue the fast stage scores above the band without the slow stage, and names the fast
stage's evidence turns. Two other policies, verdicts and scores unchanged, only that evidence replaced:

- ``second``: the slow stage reads the dialogue and its own rule names the turns (pairs >= its eta_e, else its
  strongest pair);
- ``confirm`` (the cascade's ``evidence = "confirm"``, ``--cascade-evidence confirm``): of the two or more turns
  the fast stage names, keep those the slow stage scores >= its eta_e, else the one it scores highest.

Two more, each on top of ``confirm`` (measured in session 67, neither adopted):

- ``add``: where the fast stage names a single turn of a sure contradiction, the slow stage reads the dialogue and
  turns it scores >= its eta_e are added to that turn;
- ``band``: inside the band (the slow stage decides), of the two or more turns the slow stage names, keep those
  the fast stage scores >= its own eta_e, else the one the slow stage scores highest (``confirm``'s mirror).

Reports the authors' pair evidence F1 (with its pair counts), strict accuracy and the per-example evidence F1
on rebuilt dev and A2T, and the pair evidence F1 pooled over the default gate's English hand sets, for each
policy, and how many dialogues the slow stage read for it beyond the band.

    python benchmarks/cascade_evidence.py [--model decode-cascade-v5] [--threads 2] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

POLICIES = ("first", "second", "confirm", "add", "band")


def slow_evidence(pair_scores: dict[int, float], eta_e: float) -> tuple[int, ...]:
    """The turns the slow stage names from its pair scores: those >= ``eta_e``, else the one it scores highest.

    >>> slow_evidence({1: 0.95, 3: 0.2, 5: 0.91}, 0.9)
    (1, 5)
    >>> slow_evidence({1: 0.5, 3: 0.2}, 0.9)
    (1,)
    """
    from dialcheck.detectors.utterance import decide

    return decide(pair_scores, 0.0, eta_e).evidence if pair_scores else ()


def add_to_one(named: Sequence[int], slow_scores: dict[int, float], eta_e: float) -> tuple[int, ...]:
    """``add``: a single named turn gets the turns the slow stage scores >= ``eta_e`` beside it; two or more stay.

    >>> add_to_one((3,), {1: 0.95, 3: 0.5, 5: 0.2}, 0.9)
    (1, 3)
    >>> add_to_one((3, 5), {1: 0.95, 3: 0.5, 5: 0.2}, 0.9)
    (3, 5)
    """
    if len(named) != 1:
        return tuple(named)
    return tuple(sorted(set(named) | {t for t, s in slow_scores.items() if s >= eta_e}))


def band_confirm(
    named: Sequence[int], fast_scores: dict[int, float], slow_scores: dict[int, float], eta_e: float
) -> tuple[int, ...]:
    """``band``: of two or more turns the slow stage named, keep those the fast stage scores >= its ``eta_e``,
    else the one the slow stage scores highest.

    >>> band_confirm((1, 3), {1: 0.2, 3: 0.95}, {1: 0.99, 3: 0.92}, 0.9)
    (3,)
    >>> band_confirm((1, 3), {1: 0.2, 3: 0.5}, {1: 0.99, 3: 0.92}, 0.9)
    (1,)
    """
    if len(named) < 2:
        return tuple(named)
    kept = tuple(t for t in named if fast_scores.get(t, 0.0) >= eta_e)
    return kept or (max(named, key=lambda t: slow_scores.get(t, 0.0)),)


def load_cascade(model: str, threads: int) -> Any:
    """The cascade ``model`` loaded to run on ``threads`` threads; the script exits with a message if it is not one."""
    import dialcheck
    from dialcheck.cli.common import set_threads

    set_threads(threads)
    det = dialcheck.load(model)
    if not hasattr(det, "band"):
        from dialcheck.errors import InputError

        raise InputError(f"{model}: not a cascade (no band)")
    return det


def policy_verdicts(det: Any, dialogues: Sequence[Any]) -> tuple[dict[str, list], dict[str, int]]:
    """The cascade's verdicts under each policy ("first" and "confirm" as the cascade gives them with
    ``det.evidence`` set so), and how many dialogues the slow stage read for each beyond the band."""
    shipped = det.evidence
    out = {}
    for policy in ("first", "confirm"):
        det.evidence = policy
        out[policy] = det.predict(list(dialogues))
    det.evidence = shipped
    high = det.band[1]
    fast = det.first.predict(list(dialogues))
    sure = [i for i, v in enumerate(fast) if v.score > high]
    slow = det.second.predict([dialogues[i] for i in sure]) if sure else []
    out["second"] = list(out["first"])
    for i, s in zip(sure, slow, strict=True):
        named = slow_evidence(dict(s.pair_scores), det.second.eta_e)
        if named:
            out["second"][i] = replace(out["first"][i], evidence=named)
    out["add"] = list(out["confirm"])
    for i, s in zip(sure, slow, strict=True):
        if len(fast[i].evidence) == 1:  # the fast stage named one turn (confirm leaves those as they are)
            named = add_to_one(fast[i].evidence, dict(s.pair_scores), det.second.eta_e)
            out["add"][i] = replace(out["confirm"][i], evidence=named)
    low = det.band[0]
    out["band"] = list(out["confirm"])
    for i, v in enumerate(out["confirm"]):
        if v.contradiction and low <= fast[i].score <= high:
            named = band_confirm(v.evidence, dict(fast[i].pair_scores), dict(v.pair_scores), det.first.eta_e)
            out["band"][i] = replace(v, evidence=named)
    confirm_reads = sum(len(fast[i].evidence) > 1 for i in sure)
    reads = {
        "first": 0,
        "second": len(sure),
        "confirm": confirm_reads,
        "add": confirm_reads + sum(len(fast[i].evidence) == 1 for i in sure),
        "band": confirm_reads,
    }
    return {p: out[p] for p in POLICIES}, reads


def main(argv: list[str] | None = None) -> int:
    from dialcheck.cli.common import nonnegative_int

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="decode-cascade-v5")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--threads", type=nonnegative_int, default=2, help="torch threads (0 = torch's default)")
    ap.add_argument("--json", default=None, help="write the numbers here")
    args = ap.parse_args(argv)
    import default_gate as gate

    from dialcheck.datasets import load_dataset
    from dialcheck.evaluation.decode import SPLITS, DecodeEvaluator, decode_metrics
    from dialcheck.evaluation.metrics import pair_evidence_f1

    det = load_cascade(args.model, args.threads)
    hand = DecodeEvaluator(splits=[], files=[HERE / "data" / f"{f}.jsonl" for f in gate.HAND]).files
    splits = {split: load_dataset(SPLITS[split], args.data_dir) for split in ("dev", "a2t")} | hand
    rows: dict[str, dict[str, Any]] = {p: {} for p in POLICIES}
    pooled: dict[str, list] = {p: [[], [], []] for p in POLICIES}
    for split, examples in splits.items():
        by_policy, reads = policy_verdicts(det, [e.dialogue for e in examples])
        for p, verdicts in by_policy.items():
            if split in ("dev", "a2t"):
                m = decode_metrics(split, examples, verdicts)
                for k in ("evidence_f1", "strict_accuracy", "evidence_f1_per_example", "accuracy"):
                    rows[p][f"{split}/{k}"] = round(m[k], 2)
                for k in ("fp_extra", "fn_flagged"):
                    rows[p][f"{split}/{k}"] = int(m[f"evidence_pairs/{k}"])
                rows[p][f"{split}/slow_reads"] = reads[p]
            else:
                kept = [
                    (e, v) for e, v in zip(examples, verdicts, strict=True) if e.evidence is not None or not e.label
                ]
                pooled[p][0] += [e.evidence or () for e, _ in kept]
                pooled[p][1] += [v.evidence if v.contradiction else () for _, v in kept]
                pooled[p][2] += [list(v.pair_scores) or None for _, v in kept]
                rows[p]["hand/slow_reads"] = rows[p].get("hand/slow_reads", 0) + reads[p]
    for p in POLICIES:
        rows[p]["hand/evidence_f1"] = round(100 * pair_evidence_f1(*pooled[p]), 2)
        rows[p]["hand/dialogues"] = len(pooled[p][0])
    keys = list(rows["first"])
    print(f"{args.model}, threads {args.threads}\n")
    print("| | " + " | ".join(POLICIES) + " |\n|---|" + "---:|" * len(POLICIES))
    for k in keys:
        print(f"| {k} | " + " | ".join(str(rows[p][k]) for p in POLICIES) + " |")
    if args.json:
        Path(args.json).write_text(json.dumps({"model": args.model, "policies": rows}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    from _cli import run

    raise SystemExit(run(main))
