"""Long conversations built from CDConv: does a four-category detector still find a history contradiction when
other talk separates the turns it contradicts? CDConv sessions are four turns (u1, b1, u2, b2). Here each session of
a split gets ``k`` filler pairs, the (u1, b1) of other sessions of the split drawn with a seed, inserted between b1
and u2; the label stays (u2 and b2 stay together, so role confusion and intra-sentence contradictions stay what
they were). ``k = 0`` is the split itself. Each reading of a long conversation (``--readings``: the flat and pair
detectors' ``history`` option, ``frames`` or ``window``) is measured on the same conversations in one run: 2-class
and 4-class accuracy and macro-F1, per-category F1, how many history contradictions are flagged and how many name
b1, and dialogues per second.

    python benchmarks/cdconv_long.py --model cdconv-flat-gemma-v9 --fillers 0,2,4 --threads 2 --json long.json
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _cli import comma_list
from _output import emit

from dialcheck.cli.common import comma_choices, nonnegative_int, positive_int
from dialcheck.datasets import load_dataset
from dialcheck.detectors.categories import HISTORY_READINGS
from dialcheck.errors import InputError
from dialcheck.evaluation.cdconv import SPLITS, cdconv_metrics, example_label, verdict_label
from dialcheck.schema import Dialogue, Example


def lengthen(examples: Sequence[Example], k: int, seed: int = 0) -> list[Example]:
    """Each example with ``k`` filler pairs, the first two turns of other examples drawn with ``seed``, inserted
    after its second turn; labels, categories and ids kept, evidence turns renumbered. Example: a session and one
    filler.

    >>> from dialcheck.schema import Turn
    >>> def ex(i):
    ...     t = tuple(Turn(s, f"{s}{j}-{i}") for j, s in enumerate(["u", "b", "u", "b"]))
    ...     return Example(Dialogue(t), False, id=str(i))
    >>> [t.text for t in lengthen([ex(0), ex(1)], 1)[0].dialogue.turns]
    ['u0-0', 'b1-0', 'u0-1', 'b1-1', 'u2-0', 'b3-0']
    """
    if k and len(examples) < 2:
        raise ValueError("fillers need at least two examples")
    rng = random.Random(seed)
    out = []
    for i, e in enumerate(examples):
        turns = e.dialogue.turns
        fill = []
        for _ in range(k):
            j = rng.randrange(len(examples) - 1)
            j += j >= i  # any other example
            fill.extend(examples[j].dialogue.turns[:2])
        d = Dialogue((*turns[:2], *fill, *turns[2:]), meta=e.dialogue.meta)
        evidence = None if e.evidence is None else tuple(t + 2 * k if t >= 2 else t for t in e.evidence)
        out.append(Example(d, e.label, evidence, e.category, id=e.id))
    return out


def measure(det: Any, examples: Sequence[Example], batch_size: int = 64) -> tuple[dict[str, float], list[Any]]:
    """The split's metrics for ``det`` (percentages), history contradictions flagged and naming b1 (turn 1)."""
    t0 = time.perf_counter()
    verdicts = det.predict([e.dialogue for e in examples], batch_size=batch_size)
    seconds = time.perf_counter() - t0
    gold = [example_label(e) for e in examples]
    out = dict(cdconv_metrics(gold, [verdict_label(v) for v in verdicts]))
    history = [v for e, v in zip(examples, verdicts, strict=True) if e.category == "history"]
    if history:
        flagged = [v for v in history if v.contradiction]
        out["history/flagged"] = round(100 * len(flagged) / len(history), 2)
        out["history/names_b1"] = round(100 * sum(1 in v.evidence for v in history) / len(history), 2)
        out["history/evidence_turns"] = round(sum(len(v.evidence) for v in flagged) / max(1, len(flagged)), 2)
    out["dialogues_per_s"] = round(len(examples) / max(seconds, 1e-9), 2)
    return out, verdicts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="cdconv-flat-gemma-v9", help="a four-category flat or pair detector")
    ap.add_argument("--split", default="test", choices=sorted(SPLITS))
    ap.add_argument(
        "--fillers",
        type=comma_list(nonnegative_int),
        default="0,2,4",
        help="comma-separated filler pairs per conversation",
    )
    ap.add_argument(
        "--readings",
        type=comma_choices(HISTORY_READINGS),
        default=",".join(HISTORY_READINGS),
        help="comma-separated history readings",
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--limit", type=positive_int, default=None, help="first N sessions (smoke runs only)")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--threads", type=nonnegative_int, default=0, help="torch threads (0 = torch's default)")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--markdown", type=Path, default=None)
    args = ap.parse_args()
    import dialcheck
    from dialcheck.threads import set_threads

    set_threads(args.threads)
    det = dialcheck.load(args.model)
    if not hasattr(det, "history"):
        raise InputError(f"{args.model} has no history reading (a flat or pair four-category detector has)")
    base = load_dataset(SPLITS[args.split], args.data_dir)[: args.limit or None]
    readings = args.readings
    results: dict[str, Any] = {"model": args.model, "split": args.split, "seed": args.seed, "n": len(base)}
    rows = []
    for k in args.fillers:
        examples = lengthen(base, k, args.seed)
        labels: dict[str, list[int]] = {}
        for reading in readings:
            det.history = reading
            metrics, verdicts = measure(det, examples)
            labels[reading] = [verdict_label(v) for v in verdicts]
            results[f"k{k}/{reading}"] = metrics
            rows.append((k, len(examples[0].dialogue.turns), reading, metrics))
        if len(readings) > 1:
            a, b = (labels[r] for r in readings[:2])
            results[f"k{k}/labels_differ"] = sum(x != y for x, y in zip(a, b, strict=True))
    cols = ("2class/accuracy", "2class/macro_f1", "4class/accuracy", "4class/macro_f1", "f1/history",
            "history/flagged", "history/names_b1", "history/evidence_turns", "dialogues_per_s")  # fmt: skip
    table = [
        f"{args.model} on CDConv {args.split} ({len(base)} sessions), filler pairs after b1 (seed {args.seed})",
        "",
        "| filler pairs | turns | reading | " + " | ".join(cols) + " |",
        "|---:|---:|---|" + "---:|" * len(cols),
    ]
    for k, n, reading, m in rows:
        table.append(f"| {k} | {n} | {reading} | " + " | ".join(f"{m.get(c, float('nan')):.2f}" for c in cols) + " |")
    emit("\n".join(table), results, args.markdown, args.json)


if __name__ == "__main__":
    from _cli import run

    run(main)
