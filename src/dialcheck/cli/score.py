"""``dialcheck score IN.jsonl OUT.jsonl``: batch scoring of chat logs, resumable.

Every output line is one input line's verdict (``"line"`` is the 1-based input line number), written in
input order and flushed chunk by chunk. Bad input lines are reported on stderr (and, with
``--errors``, as JSON lines) and skipped. ``--resume`` keeps the finished lines of an interrupted run,
drops a half-written tail, and scores only what is missing.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..io import ParsedRecord, ends_with_user, input_lines, open_input, read_dialogues, require_file, spoken_by
from ..language import dialogue_language
from ..schema import Dialogue
from .common import add_model_options, add_speaker_option, load_for, predict_for, route_error

HELP = "score a JSONL log of dialogues into a JSONL of verdicts (resumable)"


def add_parser(sub: Any) -> None:
    p = sub.add_parser("score", help=HELP, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input", help="JSONL file, one dialogue per line (or - for stdin)")
    p.add_argument("output", help="JSONL file of verdicts ('-': standard output, not resumable)")
    p.add_argument("--resume", action="store_true", help="continue an interrupted run into the same OUTPUT")
    p.add_argument("--overwrite", action="store_true", help="replace an existing OUTPUT")
    p.add_argument("--every-turn", action="store_true", help="check every turn against the turns before it")
    add_speaker_option(
        p,
        "check only turns by this speaker: with --every-turn each of them, otherwise the last one (a dialogue "
        "without one gives no line and is counted)",
    )
    p.add_argument("--errors", default=None, help="also write bad input lines to this JSONL file")
    p.add_argument("--chunk-size", type=int, default=256, help="dialogues per scoring chunk (default 256)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_model_options(p)
    p.set_defaults(func=run)


def prepare_resume(path: Path) -> set[int]:
    """Input lines already finished in ``path``; cuts off a torn last line and the last input line's
    records (which may be incomplete), so they are scored again."""
    if not path.exists():
        return set()
    raw = path.read_bytes()
    keep_upto = 0
    offsets: list[tuple[int, int]] = []  # (start offset, input line)
    pos = 0
    for chunk in raw.splitlines(keepends=True):
        end = pos + len(chunk)
        if not chunk.endswith(b"\n"):
            break  # torn tail
        try:
            line_no = int(json.loads(chunk)["line"])
        except (ValueError, KeyError, TypeError):
            raise InputError("cannot resume: not a dialcheck score output line", str(path), len(offsets) + 1) from None
        offsets.append((pos, line_no))
        keep_upto = end
        pos = end
    if offsets:
        last_line = offsets[-1][1]
        first_of_last = next(start for start, ln in offsets if ln == last_line)
        keep_upto = first_of_last
        offsets = [(s, ln) for s, ln in offsets if ln != last_line]
    with path.open("r+b") as f:
        f.truncate(keep_upto)
    return {ln for _, ln in offsets}


def _reported_errors(path: Path) -> set[str]:
    """The lines of an ``--errors`` file kept by an interrupted run (so ``--resume`` writes none of them twice);
    a torn last line is cut off."""
    if not path.is_file():
        return set()
    raw = path.read_bytes()
    keep = raw[: raw.rfind(b"\n") + 1]
    if len(keep) < len(raw):
        with path.open("r+b") as f:
            f.truncate(len(keep))
    return set(keep.decode("utf-8", errors="replace").splitlines())


def _same_file(a: str, b: str) -> bool:
    try:
        return a != "-" and b != "-" and Path(a).samefile(b)
    except OSError:  # one of them does not exist (yet)
        return False


def _units(
    r: ParsedRecord, every_turn: bool, speakers: list[str] | None = None, routed: bool = False
) -> list[tuple[int | None, Dialogue]]:
    """The (checked turn, dialogue cut after it) pairs of one record; turn ``None``: the whole dialogue as is.
    With ``routed`` (no ``--model``), ``every_turn`` checks a Chinese log from its fourth turn (b2) on: the
    Chinese default reads u1, b1, u2, b2, so the turns before have no past it can check them against."""
    d = r.dialogue
    assert d is not None
    if not speakers and not every_turn:
        return [(None, d)]
    by = spoken_by(d, speakers)  # turns with text: a tool call's empty message is never checked
    if every_turn:
        first = 3 if routed and d.knowledge is None and dialogue_language(d) == "zh" else 1
        return [(i, d.upto(i)) for i in by if i >= first]
    return [(by[-1], d.upto(by[-1]))] if by else []


def _count_lines(path: str) -> int | None:
    if path == "-":
        return None
    try:
        return sum(1 for line in input_lines(open_input(path), path) if line.strip())
    except InputError:  # a damaged .gz: no total for the bar; scoring reads up to the damage and reports it
        return None


def run(args: argparse.Namespace) -> int:
    out_path = Path(args.output)
    if args.input != "-":
        require_file(args.input)
    for path, what in ((args.output, "OUTPUT"), (args.errors, "--errors")):
        if path and _same_file(args.input, path):
            raise InputError(f"{what} is the input file: writing it would destroy the input", str(path))
    to_stdout = args.output == "-"
    if to_stdout and args.resume:
        raise InputError("--resume needs an output file: standard output (-) cannot be continued")
    if not to_stdout and out_path.exists() and not (args.resume or args.overwrite):
        raise InputError("output exists: pass --resume to continue it or --overwrite to replace it", str(out_path))
    if args.chunk_size < 1:
        raise InputError(f"--chunk-size must be at least 1, got {args.chunk_size}")
    done = prepare_resume(out_path) if args.resume else set()
    if args.model is not None:
        load_for(args)  # a missing or broken --model fails before any output is written
    records: Iterator[ParsedRecord] = read_dialogues(args.input, jsonl=True, allow_empty_last=bool(args.speaker))
    bar = None
    if not args.no_progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=_count_lines(args.input), initial=len(done), desc="scoring", unit="dialogue")
    reported = _reported_errors(Path(args.errors)) if args.errors and args.resume else set()
    errors_f = open(args.errors, "a" if args.resume else "w", encoding="utf-8") if args.errors else None  # noqa: SIM115
    n_ok = n_bad = n_none = n_user = n_part = n_part_turns = 0
    source = "<stdin>" if args.input == "-" else args.input

    def report(error: InputError, turn: int | None = None) -> None:
        if turn is not None:  # one checked turn of the line (--every-turn, --speaker) could not be scored
            error = InputError(f"turn {turn}: {error.message}", error.source, error.line)
        print(f"dialcheck: skipped {error}", file=sys.stderr)
        row = json.dumps({"line": error.line, **({"turn": turn} if turn is not None else {}), "error": str(error)})
        if errors_f and row not in reported:  # a resumed run meets its bad lines again: the file keeps one of each
            errors_f.write(row + "\n")
            errors_f.flush()  # so that a killed run's file holds what it reported

    mode = "a" if args.resume else "w"
    with contextlib.nullcontext(sys.stdout) if to_stdout else out_path.open(mode, encoding="utf-8") as out:
        chunk: list[ParsedRecord] = []

        def flush() -> None:
            nonlocal n_ok, n_bad, n_none, n_user, n_part, n_part_turns
            units = []
            for r in chunk:
                if r.error is not None:  # reported here, in line order with the lines skipped at routing
                    n_bad += 1
                    report(r.error)
                    continue
                n_user += not args.speaker and not args.every_turn and ends_with_user(r.dialogue)  # type: ignore[arg-type]
                mine = _units(r, args.every_turn, args.speaker, routed=args.model is None)
                n_none += not mine
                good = []
                for turn, d in mine:  # e.g. Chinese and English turns mixed: that record is skipped, not the job
                    problem = route_error(args, d)
                    if problem is None:
                        good.append((r, turn, d))
                    else:
                        report(InputError(getattr(problem, "message", str(problem)), source, r.line), turn)
                if mine and not good:
                    n_bad += 1
                elif len(good) < len(mine):  # scored in part: counted with the scored lines, its gaps apart
                    n_part += 1
                    n_part_turns += len(mine) - len(good)
                n_ok += bool(good) or not mine
                units += good
            verdicts = predict_for(args, [d for _, _, d in units])
            lines = []
            for (r, turn, _d), v in zip(units, verdicts, strict=True):
                rec: dict[str, Any] = {"line": r.line, "id": r.raw_id}
                if turn is not None:
                    rec["turn"] = turn
                rec.update(v.to_dict())
                lines.append(json.dumps(rec, ensure_ascii=False) + "\n")
            out.write("".join(lines))
            out.flush()
            if bar is not None:
                bar.update(len(chunk))
            chunk.clear()

        try:
            for r in records:
                if r.line in done:
                    continue
                chunk.append(r)
                if len(chunk) >= args.chunk_size:
                    flush()
        except InputError:  # the input itself broke off (a damaged .gz): keep every line read before it
            if chunk:
                flush()
            raise
        if chunk:
            flush()
    if bar is not None:
        bar.close()
    if errors_f:
        errors_f.close()
    resumed = f" ({len(done)} already done)" if done else ""
    none = f", {n_none} with no turn by {' or '.join(args.speaker)} to check" if args.speaker else ""
    part = f", {n_part} of them in part ({n_part_turns} turns skipped)" if n_part else ""
    target = "<stdout>" if to_stdout else out_path
    print(
        f"dialcheck: scored {n_ok} dialogues{resumed}{none}{part}, skipped {n_bad} bad lines -> {target}",
        file=sys.stderr,
    )
    if n_user:
        print(
            f"dialcheck: note: {n_user} of them end with the user's turn, which is what was checked; "
            "--speaker assistant checks the assistant's last reply instead",
            file=sys.stderr,
        )
    return 0
