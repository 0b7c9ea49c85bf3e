"""Where the reading ``slots="persona"`` fires on DECODE and the hand-written sets (no model run).

    python benchmarks/slot_fires.py [--show]

For each split: how many contradictions and consistent dialogues have an earlier turn of the last speaker whose
name, age or job the last turn replaces (``dialcheck.detectors.slots.slot_conflicts``, what ``slots="persona"``
flags), how many have one that ``slots="settle"`` clears (``slot_settled``: an earlier turn that says only
slots, which the last turn agrees with), how many have one that ``settle`` reads with the ages cut out
(``ages_cut``: the two turns' ages agree), and, since session 73, how many of the fires are about working or not
(``work_conflicts``) and how many have a pair ``settle`` clears because its claims about work fit (``work_settled``).
``--show`` prints them.
"""

from __future__ import annotations

import argparse
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--show", action="store_true", help="print each dialogue it fires on")
    ap.add_argument("--data-dir", default=None)
    args = ap.parse_args()

    from dialcheck.datasets import load_dataset
    from dialcheck.detectors.slots import ages_cut, slot_conflicts, slot_settled, work_conflicts, work_settled
    from dialcheck.evaluation.decode import SPLITS
    from dialcheck.io import read_examples

    sets = {s: list(load_dataset(SPLITS[s], args.data_dir)) for s in ("dev", "human_bot", "rct")}
    sets["human_bot_raw"] = list(load_dataset("decode.human_bot_raw.v1", args.data_dir))
    for name in (
        "decode_hand_a",
        "decode_hand_b",
        "decode_hand_values",
        *(f"decode_hand_slots{s}" for s in ("", "_b", "_c", "_d")),
        "decode_hand_ages_e",
        "decode_hand_ages_g",
        "decode_hand_ages_h",
        "decode_hand_ages_i",
        "decode_hand_spouse_j",
        "decode_hand_counts_f",
        "decode_hand_status_ab",
        "decode_hand_work_ac",
        "decode_hand_work_ad",
        "decode_hand_work_ah",
        "decode_hand_office_ai",
        "decode_hand_places_aj",
        "decode_hand_parents_ak",
    ):
        sets[name] = read_examples(HERE / "data" / f"{name}.jsonl")[0]
    print(
        "| set | dialogues | fires: contradictions | fires: consistent | settles: contradictions "
        "| settles: consistent | ages cut: contradictions | ages cut: consistent | work fires: contradictions "
        "| work fires: consistent | work settles: contradictions | work settles: consistent |"
        "\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    )
    for name, examples in sets.items():
        fired = {True: 0, False: 0}
        settled = {True: 0, False: 0}
        cut = {True: 0, False: 0}
        work = {True: 0, False: 0}
        work_fit = {True: 0, False: 0}
        for e in examples:
            indices = e.dialogue.same_speaker_indices()
            hits = slot_conflicts(e.dialogue, indices)
            last = e.dialogue.last.text
            if any(work_conflicts(e.dialogue.turns[i].text, last) for i in hits):
                work[bool(e.label)] += 1
            if fits := [i for i in indices if i not in hits and work_settled(e.dialogue.turns[i].text, last)]:
                work_fit[bool(e.label)] += 1
                if args.show:
                    print(
                        f"  work settles {name} {e.id} gold={bool(e.label)}: {e.dialogue.turns[fits[0]].text[:80]!r} … "
                        f"{last[:80]!r}"
                    )
            if agreed := [
                i for i in indices if i not in hits and ages_cut(e.dialogue.turns[i].text, e.dialogue.last.text)
            ]:
                cut[bool(e.label)] += 1
                if args.show:
                    i = agreed[0]
                    print(
                        f"  ages cut {name} {e.id} gold={bool(e.label)}: {e.dialogue.turns[i].text[:80]!r} … "
                        f"{e.dialogue.last.text[:80]!r}"
                    )
            if cleared := slot_settled(e.dialogue, indices):
                settled[bool(e.label)] += 1
                if args.show:
                    i = min(cleared)
                    print(
                        f"  settles {name} {e.id} gold={bool(e.label)}: {e.dialogue.turns[i].text[:80]!r} … "
                        f"{e.dialogue.last.text[:80]!r}"
                    )
            if hits:
                fired[bool(e.label)] += 1
                if args.show:
                    i = next(iter(hits))
                    print(
                        f"  {name} {e.id} gold={bool(e.label)} {hits}: {e.dialogue.turns[i].text[:80]!r} … "
                        f"{e.dialogue.last.text[:80]!r}"
                    )
        n_pos = sum(bool(e.label) for e in examples)
        n_neg = len(examples) - n_pos
        print(
            f"| {name} | {len(examples)} | {fired[True]} of {n_pos} | {fired[False]} of {n_neg} "
            f"| {settled[True]} of {n_pos} | {settled[False]} of {n_neg} "
            f"| {cut[True]} of {n_pos} | {cut[False]} of {n_neg} | {work[True]} of {n_pos} | {work[False]} of {n_neg} "
            f"| {work_fit[True]} of {n_pos} | {work_fit[False]} of {n_neg} |"
        )


if __name__ == "__main__":
    from _cli import run

    run(main)
