"""What the bound on pairs of pieces (``piece_pairs``) keeps and where it applies.

    python benchmarks/piece_bound_probe.py kept [--model decode-cascade-v9] [--chats 4] [--replies 6] [--seed 0]
        [--bound 64] [--threads 2] [--json OUT]
    python benchmarks/piece_bound_probe.py count [--model decode-cascade-v9] (--data FILE | --split NAME)...
        [--verdicts] [--threads 2] [--json OUT]

``--model``: an utterance detector, a cascade of two, or a router of those (each side read as it is: a cascade's
stages, or the detector); anything else is refused (exit 2). Each mode refuses the other's options (exit 2).

``kept``: on the seeded coding chats of ``long_code_replies.py`` (the same ``--chats``, ``--replies``, ``--seed``),
the first stage of ``--model`` (the detector itself if it is not a cascade; of a router, that of the side the chat
goes to) scores every pair of pieces of each earlier reply read in more than ``--bound`` pairs (default the stage's
``piece_pairs``, ``PIECE_PAIRS`` where it is 0, said on stderr once per stage; where a router's sides differ, the
header and the JSON's ``bound`` give each stage's), and the script prints, per such reply: its pairs of pieces, the
highest-scoring one's place in the prefilter's order (``overlap_ranks``, as ``UtteranceDetector`` keeps them),
whether the ``--bound`` kept hold it, and the highest score of all and of the kept; then how many replies held it
and the largest fall where one did not.

``count``: for each ``--data`` file (a labelled JSONL, as ``dialcheck evaluate --data`` reads it) or DECODE
``--split`` (dev, a2t, human_bot, human_bot_raw, rct), and each stage of ``--model`` with its own tokenizer: the
dialogues, those with a pair read in pieces (their ids, up to 12), and the most pairs of pieces of one earlier turn
(every earlier turn of each dialogue, as the first stage reads them; a later stage reads at most as many). Under the
bound, no turn of the set is affected by it. With ``--verdicts``, each dialogue with a pair in pieces is checked
with the bound (each stage's own ``piece_pairs``, ``PIECE_PAIRS`` where it is 0) and with ``piece_pairs`` 0 (every
pair): flag, score and evidence each way; and, on a model with a second stage that re-reads the first's top pairs of
pieces (``reread_pieces``: a cascade, or a router of cascades), a third time with the bound and ``reread_pieces`` 0
(the second stage re-reads every pair). The JSON keeps, per set, ``stages`` (the table's rows) apart from
``verdicts``; a verdict's ``bound`` (and ``reread_pieces``) is one number, or each stage's (each side's) where they
differ. The model is left as it was, each stage with its own ``piece_pairs``, each side its own ``reread_pieces``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

#: The options of one mode only, refused in the other (their defaults in ``kept``).
KEPT_ONLY = {"chats": 4, "replies": 6, "seed": 0, "bound": None}
COUNT_ONLY = ("data", "split", "verdicts")


def _stages(det: Any) -> list[tuple[str, Any]]:
    """The utterance detectors of ``det`` with a name each: a cascade's two stages, a router's two sides (each
    read the same way: "short first", "long", ...), else ``det`` itself; anything else is an ``InputError``."""
    from dialcheck.detectors import CascadeDetector, RouterDetector, UtteranceDetector
    from dialcheck.errors import InputError

    if isinstance(det, RouterDetector):
        return [
            (side if name == "model" else f"{side} {name}", stage)
            for side in ("short", "long")
            for name, stage in _stages(getattr(det, side))
        ]
    stages = [("first", det.first), ("second", det.second)] if isinstance(det, CascadeDetector) else [("model", det)]
    for name, stage in stages:
        if not isinstance(stage, UtteranceDetector):
            what = "it" if name == "model" else f"its {name} stage"
            kind = type(stage).__name__
            kind = f"an {kind}" if kind[0] in "AEIOU" else f"a {kind}"
            raise InputError(
                f"--model: {what} is {kind}, which reads no pairs of pieces; expected an utterance "
                "detector, a cascade of two or a router of those"
            )
    return stages


def _first_stage(det: Any, dialogue: Any) -> tuple[str, Any]:
    """The stage of ``det`` that first reads ``dialogue``, with its name: a cascade's first, of a router the side
    the dialogue goes to."""
    from dialcheck.detectors import RouterDetector

    stages = _stages(det)  # checks every stage
    if isinstance(det, RouterDetector):
        side = "long" if RouterDetector.is_long(dialogue, det.long_words) else "short"
        stages = [(n, s) for n, s in stages if n.split()[0] == side]
    return stages[0]


def _by_turn(read: tuple[list[int], list[tuple[str, str]], Any, list[bool]]) -> dict[int, list[tuple[str, str]]]:
    """The pairs of pieces of each earlier turn of one dialogue's reading, in the order they are made (with the
    repeats ``_top_pieces`` is given)."""
    owners, pairs, _, pieced = read
    out: dict[int, list[tuple[str, str]]] = {}
    for o, p, f in zip(owners, pairs, pieced, strict=True):
        if f:
            out.setdefault(o, []).append(p)
    return out


def kept(
    det: Any, chats: int, replies: int, seed: int, bound: int | None
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """One row per earlier reply read in more than the bound's pairs of pieces (see the module text), and the bound
    of each stage that read a chat (``bound``, else the stage's ``piece_pairs``, else ``PIECE_PAIRS``: said on
    stderr once per stage)."""
    from long_code_replies import coding_chat

    from dialcheck.detectors.utterance import PIECE_PAIRS, _top_pieces, overlap_ranks
    from dialcheck.io import check_speakers, parse_checked, upto_speaker

    rows = []
    bounds: dict[str, int] = {}  # per stage read, in the order first read
    for c in range(chats):
        d, speakers = parse_checked({"messages": coding_chat(seed + c, replies)}, check_speakers("assistant"))
        dialogue = upto_speaker(d, speakers) if speakers else d
        name, stage = _first_stage(det, dialogue)
        turn_bound = bound or stage.piece_pairs or PIECE_PAIRS
        if not bound and not stage.piece_pairs and name not in bounds:  # once per stage (of a router, per side)
            print(
                f"kept: the {name} stage scores every pair of pieces (piece_pairs 0): bound {PIECE_PAIRS}",
                file=sys.stderr,
            )
        bounds.setdefault(name, turn_bound)
        read = stage._pairs(dialogue)
        kept_pairs = _by_turn(_top_pieces([read], turn_bound, overlap_ranks, per_turn=True)[0])
        for turn, made in sorted(_by_turn(read).items()):
            distinct = list(dict.fromkeys(made))
            if len(distinct) <= turn_bound:
                continue
            scores = dict(zip(distinct, stage.score_pairs(distinct), strict=True))
            best = max(distinct, key=lambda p: scores[p])  # ties: the first made
            ranks = overlap_ranks(made)
            order = list(dict.fromkeys(made[j] for j in sorted(range(len(made)), key=lambda j: (-ranks[j], j))))
            held = set(kept_pairs[turn])
            rows.append(
                {
                    "chat": c,
                    "stage": name,
                    "turn": turn,
                    "pairs": len(distinct),
                    "bound": turn_bound,
                    "best_place": order.index(best) + 1,
                    "held": best in held,
                    "max_every": scores[best],
                    "max_kept": max(scores[p] for p in held),
                    "best": [best[0][:60], best[1][:60]],
                }
            )
    return rows, bounds


def count(det: Any, examples: list[Any]) -> list[dict[str, Any]]:
    """Per stage of ``det``: the dialogues of ``examples`` with a pair in pieces and the most pairs of pieces of
    one earlier turn."""
    out = []
    for name, stage in _stages(det):
        ids, most = [], 0
        for e in examples:
            turns = _by_turn(stage._pairs(e.dialogue))
            if turns:
                ids.append(e.id)
                most = max(most, *(len(set(v)) for v in turns.values()))
        out.append({"stage": name, "dialogues": len(examples), "in_pieces": ids, "most_per_turn": most})
    return out


def verdicts(det: Any, examples: list[Any]) -> list[dict[str, Any]]:
    """Each of ``examples`` checked with the bound and without (``piece_pairs`` 0), and on a model whose second
    stage re-reads the first's top pairs of pieces, with the bound and ``reread_pieces`` 0; ``det`` is left as it
    was, each stage (of a router, each side) with its own ``piece_pairs`` and ``reread_pieces``."""
    from dialcheck.detectors import RouterDetector
    from dialcheck.detectors.utterance import PIECE_PAIRS

    dialogues = [e.dialogue for e in examples]
    stages = _stages(det)
    saved = {name: stage.piece_pairs for name, stage in stages}
    bounds = {name: pp or PIECE_PAIRS for name, pp in saved.items()}  # each stage's own bound
    sides = [(s, getattr(det, s)) for s in ("short", "long")] if isinstance(det, RouterDetector) else [("model", det)]
    tops = {name: side.reread_pieces for name, side in sides if hasattr(side, "reread_pieces")}
    try:
        for name, stage in stages:
            stage.piece_pairs = bounds[name]
        on = det.predict(dialogues)
        again = None
        if any(tops.values()):
            try:
                for name, side in sides:
                    if name in tops:
                        side.reread_pieces = 0
                again = det.predict(dialogues)
            finally:
                for name, side in sides:
                    if name in tops:
                        side.reread_pieces = tops[name]
        for _, stage in stages:
            stage.piece_pairs = 0
        off = det.predict(dialogues)
    finally:
        for name, stage in stages:
            stage.piece_pairs = saved[name]
    rows = []
    for k, e in enumerate(examples):
        row = {"id": e.id, "bound": _one_or_each(bounds), "on": _verdict(on[k]), "off": _verdict(off[k])}
        if again is not None:
            row |= {"reread_pieces": _one_or_each(tops), "reread_every": _verdict(again[k])}
        rows.append(row)
    return rows


def _examples(kind: str, source: str) -> list[Any]:
    from dialcheck.datasets import load_dataset
    from dialcheck.errors import InputError
    from dialcheck.evaluation.decode import SPLITS
    from dialcheck.io import read_examples

    if kind == "split":
        if source not in SPLITS:
            raise InputError(f"--split {source}: not a DECODE split (one of {', '.join(SPLITS)})")
        return list(load_dataset(SPLITS[source]))
    examples, errors = read_examples(Path(source), source)
    if errors:
        raise InputError(f"{errors[0]} ({len(errors)} bad record(s))")
    return examples


def _one_or_each(values: dict[str, int]) -> int | dict[str, int]:
    """The value of every stage where they are all the same, else each stage's (a router's sides may differ)."""
    distinct = set(values.values())
    return distinct.pop() if len(distinct) == 1 else dict(values)


def _shown(value: int | dict[str, int]) -> str:
    """``_one_or_each``'s value as text: "64", or "8 (short), 64 (long)"."""
    return str(value) if isinstance(value, int) else ", ".join(f"{v} ({k})" for k, v in value.items())


def _verdict(v: Any) -> str:
    flag = "flagged" if v.contradiction else "consistent"
    return f"{flag} {v.score:.4f} {list(v.evidence)}"


def main(argv: list[str] | None = None) -> int:
    from dialcheck.cli.common import nonnegative_int, positive_int

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", choices=("kept", "count"))
    ap.add_argument(
        "--model",
        default="decode-cascade-v9",
        help="an utterance detector, a cascade or router of them (folder or name)",
    )
    ap.add_argument("--chats", type=positive_int, default=None, help="kept: seeded coding chats (default 4)")
    ap.add_argument(
        "--replies", type=positive_int, default=None, help="kept: code replies per chat (default 6, at least 2)"
    )
    ap.add_argument("--seed", type=nonnegative_int, default=None, help="kept: the first chat's seed (default 0)")
    ap.add_argument("--bound", type=positive_int, default=None, help="kept: piece_pairs (default: the stage's)")
    ap.add_argument("--data", action="append", default=[], help="count: a labelled JSONL file (repeatable)")
    ap.add_argument("--split", action="append", default=[], help="count: a DECODE split (repeatable)")
    ap.add_argument("--verdicts", action="store_true", help="count: check those in pieces with the bound and without")
    ap.add_argument("--threads", type=positive_int, default=2, help="torch threads")
    ap.add_argument("--json", default=None, help="write the numbers here")
    args = ap.parse_args(argv)
    if args.mode == "kept":
        given = [f"--{k}" for k in COUNT_ONLY if getattr(args, k)]
        if given:
            ap.error(f"kept: {', '.join(given)} belong to count (kept reads the seeded coding chats)")
        for k, default in KEPT_ONLY.items():
            setattr(args, k, default if getattr(args, k) is None else getattr(args, k))
        if args.replies < 2:
            ap.error("--replies: at least 2, so that the last reply has an earlier one to be read against")
    else:
        given = [f"--{k}" for k in KEPT_ONLY if getattr(args, k) is not None]
        if given:
            ap.error(f"count: {', '.join(given)} belong to kept (count reads --data files and --split names)")
        if not (args.data or args.split):
            ap.error("count: give at least one --data FILE or --split NAME")
    json_path = Path(args.json) if args.json else None
    if json_path is not None:
        if json_path.is_dir():
            ap.error(f"--json: {json_path} is a directory, expected a file name")
        json_path.parent.mkdir(parents=True, exist_ok=True)
    import torch
    from _output import emit

    import dialcheck

    torch.set_num_threads(args.threads)
    sources = [("data", s) for s in args.data] + [("split", s) for s in args.split]
    sets = {s: _examples(k, s) for k, s in sources}  # bad files refused before the model loads
    det = dialcheck.load(args.model)
    _stages(det)  # not one this script reads: refused before any work
    if args.mode == "kept":
        rows, bounds = kept(det, args.chats, args.replies, args.seed, args.bound)
        names = ", ".join(bounds)
        lines = [
            f"{args.model}, {names} stage, piece_pairs {_shown(_one_or_each(bounds))}: earlier replies read in more "
            "pairs of pieces\n",
            "| chat | turn | pairs of pieces | best's place | held | max every | max kept |",
            "|---:|---:|---:|---:|---|---:|---:|",
        ]
        for r in rows:
            lines.append(
                f"| {r['chat']} | {r['turn']} | {r['pairs']} | {r['best_place']} | {'yes' if r['held'] else 'no'} "
                f"| {r['max_every']:.3f} | {r['max_kept']:.3f} |"
            )
        missed = [r for r in rows if not r["held"]]
        lines.append(f"\nheld the turn's highest-scoring pair in {len(rows) - len(missed)} of {len(rows)} turns")
        if missed:
            worst = max(missed, key=lambda r: r["max_every"] - r["max_kept"])
            lines.append(
                f"largest fall where not: {worst['max_every'] - worst['max_kept']:.3f} "
                f"({worst['max_every']:.3f} -> {worst['max_kept']:.3f}, chat {worst['chat']} turn {worst['turn']})"
            )
        results: dict[str, Any] = {"model": args.model, "bound": _one_or_each(bounds), "turns": rows}
    else:
        lines = [
            f"{args.model}: pairs read in pieces, each stage with its own tokenizer\n",
            "| set | stage | dialogues | with a pair in pieces | most pairs of pieces per turn |",
            "|---|---|---:|---|---:|",
        ]
        results = {"model": args.model, "sets": {}}
        checked = []  # --verdicts, after the table
        for name, examples in sets.items():
            counted = count(det, examples)
            results["sets"][name] = {"stages": counted, "verdicts": []}
            for row in counted:
                ids = row["in_pieces"]
                shown = ", ".join(ids[:12]) + (", ..." if len(ids) > 12 else "")
                lines.append(
                    f"| {name} | {row['stage']} | {row['dialogues']} | {len(ids)}{f' ({shown})' if ids else ''} "
                    f"| {row['most_per_turn'] or '-'} |"
                )
            if args.verdicts:
                pieced = {i for row in counted for i in row["in_pieces"]}
                todo = [e for e in examples if e.id in pieced]
                if todo:
                    got = verdicts(det, todo)
                    results["sets"][name]["verdicts"] = got
                    for v in got:
                        bound = _shown(v["bound"])
                        line = f"{name} {v['id']}: {v['on']} (bound {bound}) / {v['off']} (every)"
                        if "reread_every" in v:
                            top = _shown(v["reread_pieces"])
                            line += f" / {v['reread_every']} (bound {bound}, reread_pieces 0, not {top})"
                        checked.append(line)
        lines += ["", *checked] if checked else []
    emit("\n".join(lines), results, json_path=json_path)
    return 0


if __name__ == "__main__":
    from _cli import run

    raise SystemExit(run(main))
