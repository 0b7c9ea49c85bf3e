"""Service-assistant dialogues for the DECODE detector: CI-ToD's history labels as ``dialcheck train --dialogues``.

DECODE's consistent pairs are mostly off-topic (a random earlier turn), so the detector learns that a bot turn
on the same subject as an earlier one is a contradiction, and it over-fires on service chats that restate a
price or an opening time. CI-ToD (KVRET navigation and calendar assistants) labels whether the assistant's
last turn contradicts the dialogue history (HI). This writes the *train* splits (calendar, navigate; the
labelled weather train file was never released) in the labelled format of ``dialcheck evaluate --data``:

- HI = 0: consistent; every earlier assistant turn gives a same-subject non-contradicting pair;
- HI = 1 with exactly one earlier assistant turn: a contradiction with that turn as evidence;
- HI = 1 with several earlier assistant turns: a contradiction without evidence (the corpus's
  ``HIPosition`` is empty), which ``dialcheck train --dialogues`` skips and counts.

The corpus writes entities with underscores (``550_alester_ave``); they become spaces, and each turn starts
with a capital letter, as DECODE's turns do. Training reads only the train splits; ``--split test`` (or ``dev``)
writes the held-out dialogues of all three domains, weather included, to measure a detector on a domain DECODE
does not have (``dialcheck evaluate --data``).

    python benchmarks/citod_history_dialogues.py --out runs/citod_history.jsonl
    python benchmarks/citod_history_dialogues.py --split test --out runs/citod_history_test.jsonl
    python benchmarks/citod_history_dialogues.py --split test --domains weather --out runs/citod_history_weather.jsonl
    python benchmarks/citod_history_dialogues.py --split dev --with-decode-validation --out runs/calib.jsonl
    python benchmarks/citod_history_dialogues.py --split dev --with-decode-validation --with-decode-rct \\
        --out runs/cr.jsonl
    dialcheck train ... --dialogues runs/citod_history.jsonl --dialogues-repeat 4 \\
        --distill-alpha-by dialogues.positive=0,dialogues.negative=0      # with a teacher: keep their gold labels
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from dialcheck.cli.common import comma_choices
from dialcheck.datasets.base import data_dir
from dialcheck.datasets.citod import DOMAINS, load_citod
from dialcheck.io import example_record
from dialcheck.schema import Example


def _text(s: str) -> str:
    s = " ".join(s.replace("_", " ").split())
    return s[:1].upper() + s[1:]


def history_records(examples: list[Example]) -> tuple[list[dict], dict[str, int]]:
    """The labelled records of CI-ToD ``examples`` whose last turn is the system's, and counts by kind.

    >>> from dialcheck.schema import Dialogue, Turn
    >>> turns = (Turn("user", "find a cafe"), Turn("system", "starbucks is 3_miles away"),
    ...          Turn("user", "address?"), Turn("system", "starbucks is not near you"))
    >>> e = Example(Dialogue(turns), True, evidence=None, id="n.1", labels={"QI": False, "HI": True, "KBI": False})
    >>> recs, counts = history_records([e])
    >>> recs[0]["turns"][1]["text"], recs[0]["evidence"], counts
    ('Starbucks is 3 miles away', [1], {'consistent': 0, 'contradiction': 1, 'contradiction_no_evidence': 0})
    """
    out: list[dict] = []
    counts = {"consistent": 0, "contradiction": 0, "contradiction_no_evidence": 0}
    for e in examples:
        turns = e.dialogue.turns
        if len(turns) < 3 or turns[-1].speaker != "system":
            continue
        earlier = [i for i, t in enumerate(turns[:-1]) if t.speaker == "system"]
        if not earlier:
            continue
        hi = bool((e.labels or {}).get("HI"))
        rec = {"id": f"citod.{e.id}", "turns": [{"speaker": t.speaker, "text": _text(t.text)} for t in turns]}
        if not hi:
            rec.update(contradiction=False, evidence=[])
            counts["consistent"] += 1
        elif len(earlier) == 1:
            rec.update(contradiction=True, evidence=earlier)
            counts["contradiction"] += 1
        else:
            rec.update(contradiction=True)
            counts["contradiction_no_evidence"] += 1
        out.append(rec)
    return out, counts


def load_records(
    split: str = "train", domains: Sequence[str] | None = None, data: str | Path | None = None
) -> tuple[list[dict], dict[str, int]]:
    """:func:`history_records` of one split of CI-ToD (default domains: every one that has the split); an unknown
    domain or split (weather has no labelled train split) raises :class:`InputError` naming it."""
    if domains is None:
        domains = ("calendar", "navigate") if split == "train" else ("calendar", "navigate", "weather")
    root = data_dir(data)
    return history_records([e for d in domains for e in load_citod(root, d, split)])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="the JSONL file to write")
    ap.add_argument("--split", choices=("train", "dev", "test"), default="train", help="which split (default train)")
    ap.add_argument(
        "--data", "--data-dir", dest="data", help="data directory (default: ../shared/data or $DIALCHECK_DATA_DIR)"
    )
    ap.add_argument(
        "--domains", type=comma_choices(DOMAINS), default=None, help=f"comma-separated subset of {', '.join(DOMAINS)}"
    )
    ap.add_argument(
        "--with-decode-validation",
        action="store_true",
        help="write DECODE's held-out validation dialogues (the ones dialcheck train calibrates on, seed 0) first: "
        "a calibration set for dialcheck train --calibrate-on",
    )
    ap.add_argument(
        "--with-decode-rct",
        action="store_true",
        help="with --with-decode-validation: also each validation contradiction with its evidence turns removed "
        "(DECODE's RCT transform), as a consistent dialogue",
    )
    args = ap.parse_args(argv)
    if args.with_decode_rct and not args.with_decode_validation:
        ap.error("--with-decode-rct needs --with-decode-validation")
    records, counts = load_records(args.split, args.domains, args.data)  # weather train (never released): InputError
    if args.with_decode_validation:
        from dialcheck.training.data import build_decode_training_data

        val = build_decode_training_data(args.data, augment=()).validation_dialogues
        counts["decode_validation"] = len(val)
        if args.with_decode_rct:
            from dialcheck.probes.checklist import remove_contradicting_turns

            rct = [remove_contradicting_turns(e) for e in val if e.label and e.evidence]
            counts["decode_validation_rct"] = len(rct)
            val = [*val, *rct]
        records = [*map(example_record, val), *records]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"wrote {len(records)} dialogues to {out}: {json.dumps(counts)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    from _cli import run

    raise SystemExit(run(main))
