"""How often each trigger method applies, and how often its output is right, checked by hand.

``sample`` runs every trigger method (``dialcheck.probes.triggers``) on contexts drawn from a corpus and
writes a Markdown sheet: how many contexts each method applied to, and a seeded sample of its outputs
with empty judgement columns. A person fills in ``grammatical?`` (is u2 a well-formed turn) and ``as
intended?`` (does it do what the method says: a synonym or a paraphrase keeps the meaning, an antonym or
a negation flips it, an inquiry asks about what u1/b1 said) with ``yes`` or ``no``. ``score`` tallies a
filled sheet.

Contexts: English (``--language en``): a human turn of the DECODE human-bot conversations (u1, at
least four words) and the bot's reply (b1); Chinese: the distinct (u1, b1) of a CDConv split. The
contexts are shuffled with ``--seed`` and ``--offset``/``--contexts`` pick a slice, so a slice used to
develop the rules and the slice that is checked do not overlap.

    python benchmarks/trigger_check.py sample --language en --offset 800 --contexts 300 \\
        --per-method 20 --out docs/trigger_checks/en_round3.md
    python benchmarks/trigger_check.py score docs/trigger_checks/en_round3.md
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter
from datetime import date
from itertools import pairwise
from pathlib import Path

from dialcheck.probes.triggers import METHODS, TriggerInput, build_triggers

JUDGED = ("grammatical?", "as intended?")
CHECKED = [m for m in METHODS if m != "short_utterance"]  # a fixed list of interjections: nothing to check


def english_contexts(data_dir: Path) -> list[TriggerInput]:
    """The distinct (human turn, bot reply) pairs of the DECODE human-bot conversations, the human turn
    four words or more (the bot speaks the last turn of each conversation)."""
    from dialcheck.datasets import load_dataset

    out: dict[tuple[str, str], TriggerInput] = {}  # conversations share openings: each context once
    for e in load_dataset("decode.human_bot.v1", str(data_dir)):
        turns = e.dialogue.turns
        bot = turns[-1].speaker
        for i, (u, b) in enumerate(pairwise(turns)):
            if u.speaker != bot and b.speaker == bot and len(u.text.split()) >= 4:
                u1, b1 = u.text.strip(), b.text.strip()
                out.setdefault((u1, b1), TriggerInput(u1, b1, f"{e.id}:{i}"))
    return list(out.values())


def chinese_contexts(source: str, data_dir: Path) -> list[TriggerInput]:
    from dialcheck.datasets import load_dataset

    seen: dict[tuple[str, str], None] = {}
    for e in load_dataset(source, str(data_dir)):
        seen.setdefault((e.dialogue.turns[0].text, e.dialogue.turns[1].text), None)
    return [TriggerInput(u1, b1, f"{source}:{i}") for i, (u1, b1) in enumerate(seen)]


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def sample(args: argparse.Namespace) -> int:
    out = Path(args.out)
    if out.exists() and not args.force:
        from dialcheck.errors import InputError

        raise InputError(f"{out} exists (it may hold judgements); --force overwrites it")
    from dialcheck.datasets import data_dir as find_data_dir

    data_dir = find_data_dir(args.data_dir)
    pool = english_contexts(data_dir) if args.language == "en" else chinese_contexts(args.source, data_dir)
    random.Random(args.seed).shuffle(pool)
    contexts = pool[args.offset : args.offset + args.contexts]
    lexicon = None
    if args.language == "zh":
        from dialcheck.probes.triggers import ChineseLexicon

        lexicon = ChineseLexicon.load(data_dir / "chinese_dictionary")
    ts = build_triggers(contexts, CHECKED, seed=args.seed, lexicon=lexicon, language=args.language)
    counts = Counter(t.method for t in ts.items)
    rng = random.Random(args.seed)
    source = "DECODE human-bot (human turn, bot reply)" if args.language == "en" else args.source
    command = " ".join(["python", "benchmarks/trigger_check.py", *sys.argv[1:]])
    lines = [
        f"# Hand-checked trigger methods ({'English' if args.language == 'en' else 'Chinese'})",
        "",
        f"Built on {date.today().isoformat()} with",
        "",
        "```",
        command,
        "```",
        "",
        f"from {len(contexts)} contexts of {source} (of {len(pool)}; shuffled with seed {args.seed}, "
        f"positions {args.offset}-{args.offset + len(contexts) - 1}).",
        "",
        "| method | applied to | of contexts |",
        "|---|---:|---:|",
        *(f"| {m} | {counts[m]} | {100 * counts[m] / max(1, len(contexts)):.1f}% |" for m in CHECKED),
        "",
        "Each u2 below was judged by hand: *grammatical?* (a well-formed chat turn; errors the input "
        "already had do not count) and *as intended?* (a synonym or paraphrase keeps the meaning, an "
        "antonym or a negation flips it, an inquiry asks about what was said). Tally: "
        f"`python benchmarks/trigger_check.py score {out.as_posix()}`.",
        "",
        "| # | method | from | u2 | detail | grammatical? | as intended? | note |",
        "|---:|---|---|---|---|---|---|---|",
    ]
    n = 0
    for m in CHECKED:
        items = [t for t in ts.items if t.method == m]
        for t in rng.sample(items, min(args.per_method, len(items))):
            n += 1
            src = t.b1 if m == "inquire_bot" else t.u1
            lines.append(f"| {n} | {m} | {_cell(src)} | {_cell(t.u2)} | {_cell(t.detail)} | ? | ? | |")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {out}: {n} outputs to judge ({dict(counts)} applied of {len(contexts)} contexts)")
    return 0


def read_sheet(path: Path) -> list[dict[str, str]]:
    """The judged rows of a sheet (a ValueError names the line of a row whose judgement is not yes/no)."""
    rows: list[dict[str, str]] = []
    header: list[str] | None = None
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.startswith("|"):
            header = None if not line.strip() else header
            continue
        cells = [c.strip() for c in line.strip().strip("|").replace("\\|", "\x00").split("|")]
        cells = [c.replace("\x00", "|") for c in cells]
        if header is None:
            header = cells
            continue
        if set(cells[0]) <= set("-: ") or not all(j in header for j in JUDGED):
            continue
        row = dict(zip(header, cells, strict=False))
        for j in JUDGED:
            v = row.get(j, "").lower()
            if v not in ("yes", "no"):
                raise ValueError(f"{path}:{n}: field {j!r} is {row.get(j)!r}, expected yes or no")
        rows.append(row)
    return rows


def score(args: argparse.Namespace) -> int:
    rows = read_sheet(Path(args.sheet))
    by: dict[str, list[dict[str, str]]] = {}
    for r in rows:
        by.setdefault(r["method"], []).append(r)
    print("| method | checked | grammatical | as intended | both |")
    print("|---|---:|---:|---:|---:|")

    def line(name: str, rs: list[dict[str, str]]) -> str:
        g = sum(r["grammatical?"].lower() == "yes" for r in rs)
        i = sum(r["as intended?"].lower() == "yes" for r in rs)
        b = sum(r["grammatical?"].lower() == r["as intended?"].lower() == "yes" for r in rs)
        k = len(rs)
        return f"| {name} | {k} | {g} ({100 * g / k:.0f}%) | {i} ({100 * i / k:.0f}%) | {b} ({100 * b / k:.0f}%) |"

    for m, rs in by.items():
        print(line(m, rs))
    if rows:
        print(line("**all**", rows))
    return 0


def main() -> int:
    from dialcheck.cli.common import nonnegative_int, positive_int

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sample", help="run the methods and write a sheet to judge")
    s.add_argument("--language", choices=("en", "zh"), default="en")
    s.add_argument("--source", default="cdconv.test.v1", help="zh: the CDConv dataset whose contexts are used")
    s.add_argument("--data-dir", default=None, help="corpus folder (default ../shared/data or $DIALCHECK_DATA_DIR)")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--offset", type=nonnegative_int, default=0, help="first shuffled context to use")
    s.add_argument("--contexts", type=positive_int, default=300)
    s.add_argument("--per-method", type=positive_int, default=20)
    s.add_argument("--out", required=True)
    s.add_argument("--force", action="store_true")
    s.set_defaults(fn=sample)
    c = sub.add_parser("score", help="tally a judged sheet")
    c.add_argument("sheet")
    c.set_defaults(fn=score)
    args = ap.parse_args()
    return args.fn(args)


if __name__ == "__main__":
    from _cli import run

    raise SystemExit(run(main))
