"""How much of a detector's verdict comes from the last turn alone?

An NLI model can learn to call a hypothesis a contradiction from its wording alone ("hypothesis-only"
bias). For an utterance-based detector the hypothesis is the checked (last) turn; RCT removes the
contradicted turns, so a detector that fires on RCT may be reading the last turn, not the pairs. For each
set this script scores every dialogue three ways with one utterance-based model, side by side in one run:

- ``full``: the detector as shipped (max over the last turn's same-speaker pairs);
- ``null``: the last turn against an empty earlier turn (read as "."), the model's last-turn-only opinion;
- ``foreign``: the last turn against the same-speaker turns of another dialogue of the same set (seeded),
  i.e. pairs that share a speaker style but no subject.

Reported per set and gold label: the share flagged at the model's τ under each reading, and for the
dialogues ``full`` flags, the share that ``foreign`` flags too (a flag that survives a change of subject
is not about the pair).

    python benchmarks/decode_last_turn_bias.py --models default --threads 2 --markdown runs/bias.md
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path
from typing import Any

import numpy as np
from _output import emit

import dialcheck
from dialcheck.cli.common import positive_int
from dialcheck.datasets import load_dataset
from dialcheck.schema import Dialogue, Example, Turn

SETS = ("decode.human_bot.v1", "decode.rct.v1", "decode.dev.v1")


def foreign_dialogue(d: Dialogue, other: Dialogue) -> Dialogue:
    """``other``'s turns up to (not including) its last, then ``d``'s last turn spoken by ``other``'s last
    speaker, so that the same-speaker pairs are ``other``'s earlier turns against ``d``'s last turn."""
    last = other.turns[-1]
    return Dialogue(turns=(*other.turns[:-1], Turn(speaker=last.speaker, text=d.turns[-1].text)))


def measure(det: Any, examples: list[Example], seed: int, batch_size: int = 64) -> dict[str, Any]:
    """The three readings of ``examples`` by ``det`` (an utterance-based detector: it needs ``classifier``
    for the null reading), per gold label: shares flagged at ``det.tau`` under each, and the shares of the
    ``full`` flags that the other two readings keep."""
    rng = random.Random(seed)
    n = len(examples)
    partner = [rng.randrange(n - 1) for _ in range(n)]
    partner = [p if p < i else p + 1 for i, p in enumerate(partner)]  # never the dialogue itself
    dialogues = [ex.dialogue for ex in examples]
    full = np.array([v.score for v in det.predict(dialogues, batch_size=batch_size)])
    foreign = np.array(
        [
            v.score
            for v in det.predict(
                [foreign_dialogue(d, dialogues[p]) for d, p in zip(dialogues, partner, strict=True)],
                batch_size=batch_size,
            )
        ]
    )
    null = np.asarray(det.classifier.score([("", d.turns[-1].text) for d in dialogues], batch_size=batch_size))
    labels = np.array([bool(ex.label) for ex in examples])
    tau = det.tau
    out: dict = {"n": n, "tau": tau}
    for name, mask in (("contradiction", labels), ("consistent", ~labels)):
        if not mask.any():
            continue
        f, g, z = full[mask] >= tau, foreign[mask] >= tau, null[mask] >= tau
        out[name] = {
            "n": int(mask.sum()),
            "full": float(f.mean()),
            "foreign": float(g.mean()),
            "null": float(z.mean()),
            "foreign_given_full": float(g[f].mean()) if f.any() else None,
            "null_given_full": float(z[f].mean()) if f.any() else None,
            "mean_null_score": float(null[mask].mean()),
        }
    return out


def pct(x: float | None) -> str:
    """A share in %, one decimal; "–" when there was nothing to count."""
    return "–" if x is None else f"{100 * x:.1f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="default", help="comma-separated model folders ('default' = shipped)")
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=positive_int, default=None, help="torch threads (default: torch's)")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--markdown", type=Path, default=None)
    args = ap.parse_args(argv)
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    results: dict = {}
    lines = [
        "| model | set | gold | n | full | foreign | null | foreign if full | null if full |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for model in args.models.split(","):
        det = dialcheck.load(None if model == "default" else model)
        for name in args.sets.split(","):
            r = measure(det, load_dataset(name, args.data_dir), args.seed)
            start = len(lines)
            results.setdefault(model, {})[name] = r
            for gold in ("contradiction", "consistent"):
                if gold not in r:
                    continue
                g = r[gold]

                lines.append(
                    f"| {model} | {name} | {gold} | {g['n']} | {pct(g['full'])} | {pct(g['foreign'])} | "
                    f"{pct(g['null'])} | {pct(g['foreign_given_full'])} | {pct(g['null_given_full'])} |"
                )
            print("\n".join(lines[start:]), file=sys.stderr, flush=True)
    emit("\n".join(lines), results, args.markdown, args.json)
    return 0


if __name__ == "__main__":
    from _cli import run

    raise SystemExit(run(main))
