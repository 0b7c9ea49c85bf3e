"""``dialcheck score IN.jsonl OUT.jsonl``: batch scoring of chat logs, resumable.

Every output line is one input line's verdict (``"line"`` is the 1-based input line number), written in
input order and flushed chunk by chunk. Bad input lines are reported on stderr (and, with
``--errors``, as JSON lines) and skipped. ``--resume`` keeps the finished lines of an interrupted run,
drops a half-written tail, and scores only what is missing.
"""

from __future__ import annotations

import argparse
import array
import bisect
import contextlib
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..io import (
    ParsedRecord,
    _is_dialogue_list,
    _iter_jsonl,
    _raw_id,
    counted,
    ends_off_assistant,
    input_lines,
    input_name,
    open_input,
    output_name,
    parse_checked,
    read_dialogues,
    require_file,
    spoken_by,
    stdin_lines,
    upto_speaker,
)
from ..language import conversation_turns, dialogue_language
from ..schema import Dialogue
from .common import (
    CHUNK_CHARACTERS,
    add_model_options,
    add_speaker_option,
    dialogue_weight,
    json_document,
    json_document_error,
    json_lines,
    keeps_no_work,
    last_message,
    load_for,
    model_language_of,
    model_warning,
    positive_int,
    predict_for,
    route_error,
    routed_warning,
    same_file,
    writable_output,
)

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
        'without one gives no line and is counted); a record\'s own "speaker" is used over it (a record whose own '
        "speaker said nothing is a bad line, as check refuses it)",
    )
    p.add_argument(
        "--errors",
        default=None,
        metavar="FILE",
        help="also write one JSON line per line skipped (a bad record, a language no default reads) or, with "
        "--every-turn or --speaker, per turn skipped, in input order, to this JSONL file: its line (and turn) and "
        "the error",
    )
    p.add_argument(
        "--chunk-size",
        type=positive_int,
        default=256,
        help=f"dialogues per scoring chunk (default 256); a chunk of long dialogues ends sooner, at about "
        f"{CHUNK_CHARACTERS:,} characters a dialogue (long turns and, with --every-turn, each turn checked count "
        "more), so that the progress bar moves and the chunk's pairs fit in memory",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_model_options(p)
    p.set_defaults(func=run)


class LineSet:
    """The finished input line numbers of ``--resume``, added in increasing order (``score`` writes in input
    order; :func:`read_resume` refuses an OUT that does not), kept as 8 bytes a line in a sorted array: a log of
    millions stays small (a ``set`` of ints took some 60 bytes a line), and a damaged OUT whose line number is in
    the billions costs no more than any other (a byte a line up to the largest tried to allocate gigabytes).

    >>> done = LineSet()
    >>> for n in (2, 5, 4_000_000_000):
    ...     done.add(n)
    >>> 5 in done, 3 in done, 4_000_000_000 in done, len(done)
    (True, False, True, 3)
    """

    def __init__(self) -> None:
        self.lines = array.array("Q")

    def add(self, line: int) -> None:
        if self.lines and line <= self.lines[-1]:  # read_resume adds each line once, when OUT moves past it
            raise ValueError(f"line {line} added after line {self.lines[-1]}: lines are added in increasing order")
        self.lines.append(line)

    def __contains__(self, line: object) -> bool:
        if not isinstance(line, int) or line < 0:
            return False
        i = bisect.bisect_left(self.lines, line)
        return i < len(self.lines) and self.lines[i] == line

    def __len__(self) -> int:
        return len(self.lines)

    def __bool__(self) -> bool:
        return bool(self.lines)


@dataclass
class ResumePoint:
    """What ``--resume`` keeps of an output file, read but not yet cut: ``done`` are the finished input lines;
    ``last`` is the last input line OUT holds (0: none), to be scored again, whose first record is on OUT line
    ``last_at``. :meth:`held` reads OUT again for each line's first record and id, so that neither OUT nor its
    records are held in memory."""

    path: Path
    keep_upto: int
    done: LineSet = field(default_factory=LineSet)
    last: int = 0
    last_at: int = 0

    def cut(self) -> None:
        """Cut off a torn last line and the last input line's records (they may be incomplete)."""
        if not self.path.exists():
            return
        with self.path.open("r+b") as f:
            f.truncate(self.keep_upto)

    def held(self) -> Iterator[tuple[int, int, Any]]:
        """(input line, OUT line of its first record, that record's id) of each input line OUT holds, the last
        included, in order: OUT read again, a line at a time, as :func:`read_resume` read it."""
        if not self.last:
            return
        before = 0
        with self.path.open("rb") as f:
            for out_line, chunk in enumerate(f, start=1):
                rec = _out_record(chunk, self.path, out_line)
                if rec is None:
                    return
                if rec[0] != before:
                    yield rec[0], out_line, rec[1]
                    before = rec[0]
                if rec[0] == self.last:
                    return

    def mismatch(self, in_line: int, problem: str, out_id: Any = None, at: int | None = None) -> InputError:
        """The error of an OUT record (on OUT line ``at``; by default the last input line's first) that does not
        fit the input line it names."""
        about = f" (id {json.dumps(out_id, ensure_ascii=False)})" if out_id is not None else ""
        return InputError(
            f"holds the verdict of input line {in_line}{about}, but {problem}: it was not written for this input "
            "(name the input it was written for, or pass --overwrite to score this one anew)",
            str(self.path),
            self.last_at if at is None else at,
        )


def _out_record(chunk: bytes, path: Path, out_line: int) -> tuple[int, Any] | None:
    """The input line and id of an OUT line; None for a torn last line (no newline)."""
    if not chunk.endswith(b"\n"):
        return None
    try:
        rec = json.loads(chunk)
        line = int(rec["line"])
        if line < 1:  # input lines count from 1
            raise ValueError(line)
        return line, rec.get("id")
    except (ValueError, KeyError, TypeError):
        raise InputError("cannot resume: not a dialcheck score output line", str(path), out_line) from None


def read_resume(path: Path) -> ResumePoint:
    """What ``--resume`` keeps of ``path`` (nothing if it does not exist); reads it a line at a time and changes
    nothing."""
    point = ResumePoint(path, 0)
    if not path.exists():
        return point
    pos = 0
    with path.open("rb") as f:
        for out_line, chunk in enumerate(f, start=1):
            rec = _out_record(chunk, path, out_line)
            if rec is None:
                break  # torn tail
            line_no = rec[0]
            if line_no < point.last:  # score writes in input order: two outputs put together?
                msg = f"holds the verdict of input line {line_no} after that of input line {point.last}"
                raise InputError(
                    f"{msg}: not one dialcheck score run's output, whose lines follow the input", str(path), out_line
                )
            if line_no != point.last:
                if point.last:
                    point.done.add(point.last)
                point.last, point.last_at, point.keep_upto = line_no, out_line, pos
            pos += len(chunk)
    return point


def _same_id(out_id: Any, in_id: Any) -> bool:
    """Whether an OUT record's id may be that of the input record (OUT holds it as a string)."""
    if out_id is None or in_id is None:
        return True
    return str(out_id) in {str(in_id), json.dumps(in_id, ensure_ascii=False)} or out_id == in_id


def check_resume_input(point: ResumePoint, path: str) -> None:
    """Raise an :class:`InputError` naming OUT's line unless every input line OUT holds is a JSON record of
    ``path`` (with the same id, where both have one): one pass over the input up to OUT's last line, beside one
    over OUT, before OUT is touched. A damaged ``.gz`` ends the check where it breaks (the scoring loop reports
    the damage)."""
    if not point.last:
        return
    n = 0
    held = point.held()
    lines = input_lines(open_input(path), path)
    numbered = enumerate(lines, start=1)
    with contextlib.closing(held), contextlib.closing(lines):
        for in_line, at, out_id in held:
            try:
                for n, raw in numbered:  # noqa: B007
                    if n == in_line:
                        break
            except InputError:  # the input broke off: what was read before it is checked
                return
            if n != in_line:  # the lines after OUT's last one are not its concern
                raise point.mismatch(point.last, f"{path} has {counted(n, 'line')}")
            problem = _line_problem(raw, n, path, out_id)
            if problem is not None:
                raise point.mismatch(*problem, at=at)


def _line_problem(raw: bytes, n: int, path: str, out_id: Any) -> tuple[int, str, Any] | None:
    """Why input line ``n`` cannot be the one an OUT record with ``out_id`` holds (None: it may be)."""
    if not raw.strip():
        return n, f"line {n} of {path} is blank", None
    try:
        obj = json.loads(raw)
    except (ValueError, RecursionError):  # not UTF-8 or not JSON: score never gives such a line a verdict
        return n, f"line {n} of {path} is not a JSON record", None
    in_id = _raw_id(obj)  # read as check and score read it (7.0 is "7")
    if _same_id(out_id, in_id):
        return None
    return n, f"line {n} of {path} has id {json.dumps(str(in_id), ensure_ascii=False)}", out_id


class _StdinResume:
    """The check of :func:`check_resume_input` on standard input, which can be read only once: made on the
    records as they stream in (line numbers and ids; a line without a record is blank), so OUT is cut and
    written only once the input has met every line it holds."""

    def __init__(self, point: ResumePoint, source: str) -> None:
        self.point, self.source = point, source
        self.held = point.held()  # in input order: read_resume refuses records out of order
        self.next = next(self.held, None)  # the next held line to meet: (input line, OUT line, id)
        self.seen = 0  # the last input line with a record

    def see(self, r: ParsedRecord) -> bool:
        """Check one record; True once every line OUT holds has been met."""
        while self.next is not None and self.next[0] <= r.line:
            n, at, out_id = self.next
            if n < r.line:
                raise self.point.mismatch(n, f"line {n} of {self.source} is blank", at=at)
            if r.raw_id is not None and not _same_id(out_id, r.raw_id):
                shown = json.dumps(r.raw_id, ensure_ascii=False)
                raise self.point.mismatch(n, f"line {n} of {self.source} has id {shown}", out_id, at)
            self.next = next(self.held, None)
        self.seen = r.line
        return self.next is None

    def finish(self) -> None:
        """At the end of the input: raise unless every line OUT holds was met."""
        if self.next is not None:
            self.held.close()
            problem = f"{self.source} has no dialogue after line {self.seen}"
            raise self.point.mismatch(self.point.last, problem)


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


def _looks_like_dialogues(value: Any) -> bool:
    """Whether a JSON value is a list of dialogues, objects or lists, as ``check`` reads a JSON list
    (:func:`~dialcheck.io.parse_dialogue` names what is wrong with each): never one dialogue of a JSON Lines log
    (a list of turns or of chat messages)."""
    return isinstance(value, list) and _is_dialogue_list(value) and all(isinstance(v, (dict, list)) for v in value)


def _one_dialogue(value: Any) -> bool:
    """Whether a JSON value may be one dialogue (an object, or a list of turns or messages, as
    :func:`~dialcheck.io.parse_dialogue` reads a line), written over several lines."""
    return isinstance(value, dict) or (isinstance(value, list) and bool(value) and not _is_dialogue_list(value))


JSON_LINES_READ = "score reads one dialogue per line (dialcheck check reads JSON documents)"


def refuse_json_document(path: str) -> None:
    """Raise one :class:`InputError` when ``path`` holds a JSON document instead of JSON Lines (pretty-printed
    JSON, or a file of one line holding a list of dialogues), told apart as :func:`~.common.json_document` tells
    it: read line by line it would give a bad line per line, or one bad dialogue."""
    with contextlib.closing(input_lines(open_input(path), path)) as lines:
        document = json_document(lines, _looks_like_dialogues, _one_dialogue)
    if document is not None:
        raise json_document_error(path, document, JSON_LINES_READ)


def piped_lines(stdin: Iterator[bytes]) -> Iterator[bytes]:
    """Standard input's lines (``stdin``: :func:`~dialcheck.io.stdin_lines`, closed an exit 2), once
    :func:`refuse_json_document`'s check has been made on them (exit 2 for a JSON document, as for a file), by
    :func:`~.common.json_lines`: the lines the check read are given again, then the rest as they come. Scoring
    stays streamed: a pipe that is still being written is scored chunk by chunk, not read whole first."""
    return json_lines(stdin, "-", _looks_like_dialogues, _one_dialogue, JSON_LINES_READ)


def _units(
    r: ParsedRecord,
    every_turn: bool,
    speakers: list[str] | None = None,
    routed: bool = False,
    chinese: bool = False,
) -> list[tuple[int | None, Dialogue]]:
    """The (checked turn, dialogue cut after it) pairs of one record; turn ``None``: the whole dialogue as is.
    With ``routed`` (no ``--model``), ``every_turn`` checks a Chinese log from its fourth turn (b2) on, counted as
    the Chinese default reads it (:func:`~dialcheck.language.conversation_turns`: without a chat log's tool calls
    and results and its system messages, which it never checks): it reads u1, b1, u2, b2, so the turns before have
    no past it can check them against. With ``chinese`` (a Chinese ``--model``: :func:`dialcheck.api.reads_as_chinese`)
    every dialogue is counted so, as that model reads every dialogue so."""
    d = r.dialogue
    assert d is not None
    if not speakers and not every_turn:
        return [(None, d)]
    by = spoken_by(d, speakers)  # turns with text: a tool call's empty message is never checked
    if every_turn:
        if chinese or (routed and d.knowledge is None and dialogue_language(d) == "zh"):
            read = set(conversation_turns(d)[3:])  # b2 on, as the Chinese reading counts turns
            return [(i, d.upto(i)) for i in by if i in read]
        return [(i, d.upto(i)) for i in by if i >= 1]
    return [(by[-1], d.upto(by[-1]))] if by else []


def _weight(r: ParsedRecord, every_turn: bool) -> int:
    """About how much scoring record ``r`` costs, in characters read: its dialogue's :func:`.common.dialogue_weight`
    (check ends its chunks by the same), and with ``every_turn`` the dialogue cut after each of its turns (about half
    of it, each)."""
    if r.dialogue is None:
        return 0
    chars = dialogue_weight(r.dialogue)
    return chars * (len(r.dialogue.turns) + 1) // 2 if every_turn else chars


def _unfinished(lines: Iterator[bytes], done: LineSet) -> Iterator[bytes]:
    """``lines`` with each finished one blank: read as no record, it is neither parsed nor counted."""
    with contextlib.closing(lines):
        for n, raw in enumerate(lines, start=1):
            yield b"\n" if n in done else raw


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
        if path and same_file(args.input, path):
            raise InputError(f"{what} is the input file: writing it would destroy the input", str(path))
    if args.errors and same_file(args.output, args.errors):
        raise InputError("--errors is the output file: its error records would be lost among the verdicts", args.errors)
    for path, what in ((args.output, "OUTPUT"), (args.errors, "--errors")):
        if path and path != "-":  # a missing folder was an OSError once the model had loaded
            writable_output(path, what)
    to_stdout = args.output == "-"
    if to_stdout and args.resume:
        raise InputError("--resume needs an output file: standard output (-) cannot be continued")
    # /dev/null or a named pipe: written in place, as standard output is; nothing in it to keep or to destroy
    stream = not to_stdout and keeps_no_work(args.output)
    if stream and args.resume:
        raise InputError("--resume needs an output file: what is written to a device or a pipe cannot be continued")
    if not to_stdout and not stream and out_path.exists() and not (args.resume or args.overwrite):
        raise InputError("output exists: pass --resume to continue it or --overwrite to replace it", str(out_path))
    if args.chunk_size < 1:
        raise InputError(f"--chunk-size must be at least 1, got {args.chunk_size}")
    source = input_name(args.input)
    # resume goes by line number: a JSON document is refused, not guessed at (standard input too: a list written a
    # record a line was scored as its last record, its other lines skipped as bad)
    stdin = stdin_lines() if args.input == "-" else None  # closed: refused now; read once --model is loaded
    if stdin is None:
        refuse_json_document(args.input)
    point = read_resume(out_path) if args.resume else ResumePoint(out_path, 0)
    pending = None  # the resume check still to be made on standard input, which is read only once
    if point.last and args.input != "-":
        check_resume_input(point, args.input)  # before OUT is cut: a wrong input leaves it as it was
    elif point.last:
        pending = _StdinResume(point, source)
    done = point.done
    chinese = False  # a Chinese --model: --every-turn counts turns as it reads them (_units)
    if args.model is not None:
        from ..api import reads_as_chinese

        chinese = reads_as_chinese(load_for(args))  # a missing or broken --model fails before any output is written
    # standard input's first line is waited for only now: a slow producer and the model's loading were waited for
    # one after the other (the producer keeps writing into the pipe while the model loads)
    piped = piped_lines(stdin) if stdin is not None else None
    if args.resume and pending is None:  # after every check of the input (standard input's too) and the model
        point.cut()
    # a record's own "speaker" over --speaker, as the HTTP API reads it; its "tau" makes it a bad line
    records: Iterator[ParsedRecord]
    if done and args.input != "-":  # the finished lines are passed over unparsed (check_resume_input read their ids)
        lines = _unfinished(input_lines(open_input(args.input), args.input), done)
        records = _iter_jsonl(lines, args.input, partial(parse_checked, speakers=args.speaker))
    elif piped is not None:  # streamed, as read_dialogues streams it, from the lines the document check read on
        records = _iter_jsonl(piped, source, partial(parse_checked, speakers=args.speaker))
    else:
        records = read_dialogues(args.input, jsonl=True, checking=True, speakers=args.speaker)
    bar = None
    if not args.no_progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=_count_lines(args.input), initial=len(done), desc="scoring", unit="dialogue")
    reported = _reported_errors(Path(args.errors)) if args.errors and args.resume else set()
    errors_f = open(args.errors, "a" if args.resume else "w", encoding="utf-8") if args.errors else None  # noqa: SIM115
    n_ok = n_bad = n_none = n_part = n_part_turns = 0
    n_user: dict[str, int] = {}  # the lines of chat logs that end with a message not the assistant's, by its role
    unsaid: dict[str, int] = {}  # how many lines had no turn to check, by the speakers named (--speaker or their own)
    language = model_language_of(args)
    foreign: list[int] = []  # the lines scored whose turns --model was not trained to read (Chinese for English)

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
            nonlocal n_ok, n_bad, n_none, n_part, n_part_turns
            units = []
            for r in chunk:
                if r.error is not None:  # reported here, in line order with the lines skipped at routing
                    n_bad += 1
                    report(r.error)
                    continue
                role = None if r.speakers or args.every_turn else ends_off_assistant(r.dialogue)  # type: ignore[arg-type]
                if role is not None:  # a chat log's user, tool or system message was checked, not the assistant's
                    n_user[role] = n_user.get(role, 0) + 1
                mine = _units(r, args.every_turn, r.speakers, routed=args.model is None, chinese=chinese)
                # the record's own "speaker" (even one --speaker names too) names no one who spoke: a bad line in
                if not mine and r.own_speaker:  # check's words (no turn by --speaker is counted, as its help says)
                    try:
                        upto_speaker(r.dialogue, r.speakers)  # type: ignore[arg-type]
                    except InputError as e:
                        n_bad += 1
                        report(InputError(e.message, source, r.line))
                        continue
                n_none += not mine
                if not mine and r.speakers:
                    unsaid[" or ".join(r.speakers)] = unsaid.get(" or ".join(r.speakers), 0) + 1
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
                # the first at once, so a long run can be stopped; the summary counts them all
                if (
                    good
                    and language is not None
                    and model_warning(args, language, [r.dialogue], [f"line {r.line}"], 1, alone=None, show=not foreign)
                ):
                    foreign.append(r.line)
                elif good and routed_warning(args, [good[-1][2]], [f"line {r.line}"], 1, show=not foreign):
                    foreign.append(r.line)  # routed to a default that does not read its script (Korean to English)
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

        weight = 0  # about what scoring the chunk costs (_weight)
        try:
            for r in records:
                if pending is not None and pending.see(r):  # stdin has matched OUT so far: it may be written
                    point.cut()
                    pending = None
                if r.line in done:
                    continue
                chunk.append(r)
                weight += _weight(r, args.every_turn)
                if (len(chunk) >= args.chunk_size or weight >= args.chunk_size * CHUNK_CHARACTERS) and pending is None:
                    flush()
                    weight = 0
        except InputError:  # the input itself broke off (a damaged .gz): keep every line read before it
            if chunk and pending is None:
                flush()
            raise
        if pending is not None:
            pending.finish()
            point.cut()
        if chunk:
            flush()
    if bar is not None:
        bar.close()
    if errors_f:
        errors_f.close()
    resumed = f" ({len(done)} already done)" if done else ""
    if args.speaker and list(unsaid) in ([], [" or ".join(args.speaker)]):
        none = f", {n_none} with no turn by {' or '.join(args.speaker)} to check"
    elif unsaid:  # a record's own "speaker" named another
        none = f", {sum(unsaid.values())} with no turn by {', '.join(unsaid)} to check"
    else:
        none = ""
    part = f", {n_part} of them in part ({counted(n_part_turns, 'turn')} skipped)" if n_part else ""
    print(
        f"dialcheck: scored {counted(n_ok, 'dialogue')}{resumed}{none}{part}, skipped {counted(n_bad, 'bad line')} "
        f"-> {output_name(args.output)}",
        file=sys.stderr,
    )
    if len(foreign) > 1:
        who = f"--model {args.model}" if args.model is not None else "the shipped default they were routed to"
        print(
            f"dialcheck: warning: {len(foreign)} of the lines scored (lines {', '.join(map(str, foreign[:5]))}"
            f"{', ...' if len(foreign) > 5 else ''}) have turns {who} was not trained on (see above)",
            file=sys.stderr,
        )
    if n_user:
        ends = ", ".join(
            f"{n}{' of them' if k == 0 else ''} {'ends' if n == 1 else 'end'} with {last_message(role)}"
            f"{' turn' if role == 'user' else ''}"
            for k, (role, n) in enumerate(n_user.items())
        )
        print(
            f"dialcheck: note: {ends}, which is what was checked; --speaker assistant checks the assistant's last "
            "reply instead",
            file=sys.stderr,
        )
    if not (n_ok or done):
        if n_bad:  # the report is written; a run that scored nothing has failed
            raise InputError("nothing was scored: every line is bad", source)
        print(f"dialcheck: warning: {source} has no dialogues", file=sys.stderr)  # an empty batch is no error
    return 0
