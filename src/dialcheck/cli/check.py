"""``dialcheck check FILE|-``: does the last turn of each dialogue contradict the conversation?"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
import time
from collections.abc import Iterator, Sequence
from typing import Any, NoReturn

from ..errors import DialcheckError, InputError
from ..io import ends_off_assistant, input_name, read_dialogues, upto_speaker
from ..schema import Dialogue, Verdict
from .common import (
    CHUNK_CHARACTERS,
    add_model_options,
    add_speaker_option,
    dialogue_weight,
    last_message,
    model_language_of,
    model_warning,
    predict_for,
    route_error,
    routed_warning,
)

HELP = "check dialogues from a JSON/JSONL file or stdin (-)"
# Dialogues checked at a time once all are read and found good; each chunk's verdicts are written (and flushed) as it
# is done, so their pairs and verdicts are not all held at once and the output comes as the run goes. A chunk of long
# dialogues ends sooner, at about CHUNK_CHARACTERS characters a dialogue (as `score` ends its chunks): 64 chats of
# 400 turns were one chunk, scored for minutes with nothing written and the bar standing still.
CHUNK = 64
PROGRESS_DELAY = 2.0  # seconds before the bar shows: a run of a few dialogues shows none


def add_parser(sub: Any) -> None:
    p = sub.add_parser("check", help=HELP, description=HELP)
    p.add_argument("input", help="JSON (one dialogue or a list), JSONL (one per line), or - for stdin")
    p.add_argument("--json", action="store_true", help="one JSON object per dialogue and line, in input order")
    add_speaker_option(
        p,
        "check the last turn by this speaker instead of the last turn; the JSON says which (turn); a dialogue "
        'object\'s own "speaker" is used over it',
    )
    p.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bar (by default one counts the dialogues checked on stderr, when it is a terminal and the "
        f"run takes more than {PROGRESS_DELAY:g} s)",
    )
    add_model_options(p)
    p.set_defaults(func=run)


def chunks(dialogues: Sequence[Dialogue], size: int = CHUNK) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of each chunk of ``dialogues`` checked at once: ``size`` dialogues, or fewer once they hold
    about ``size * CHUNK_CHARACTERS`` characters, each weighed by :func:`.common.dialogue_weight` as score weighs it
    (a turn longer than ``CHUNK_CHARACTERS`` counted once a ``CHUNK_CHARACTERS`` of it).

    >>> from dialcheck.schema import Dialogue
    >>> short, long = Dialogue.from_texts(["Hi.", "Hello!"]), Dialogue.from_texts(["x" * 3000, "y" * 3000])
    >>> list(chunks([short] * 5, 2)), list(chunks([long, short, short], 2))
    ([(0, 2), (2, 4), (4, 5)], [(0, 1), (1, 3)])
    """
    start, weight = 0, 0
    for i, d in enumerate(dialogues):
        weight += dialogue_weight(d)  # as score weighs a dialogue
        if i + 1 - start >= size or weight >= size * CHUNK_CHARACTERS:
            yield start, i + 1
            start, weight = i + 1, 0
    if start < len(dialogues):
        yield start, len(dialogues)


def _quote(text: str, width: int = 90) -> str:
    return textwrap.shorten(text, width=width, placeholder=" ...")


def render(i: int, d: Dialogue, v: Verdict) -> str:
    """Human-readable verdict for one dialogue."""
    if v.labels is not None:
        return render_grounded(i, d, v)
    name = d.meta.get("id") or f"dialogue {i + 1}"
    last = len(d.turns) - 1
    lines = []
    if len(d.turns) == 1:
        lines.append(f"{name}: no contradiction: a single turn has nothing earlier to contradict")
        return "\n".join(lines)
    verdict = "CONTRADICTION" if v.contradiction else "no contradiction"
    lines.append(f"{name}: {verdict} (score {v.score:.2f})")
    read_as = v.read_as or {}
    lines.append(f'  last turn [{last}] {d.turns[last].speaker}: "{_quote(d.turns[last].text)}"')
    if last in read_as:
        lines.append(f'    also read as: "{_quote(read_as[last])}"')
    if v.contradiction and v.category:
        lines.append(f"  category: {v.category}")
    if v.contradiction and v.category == "intra_sentence" and not v.evidence:
        lines.append("  contradicts itself")
    for e in v.evidence:
        s = v.pair_scores.get(e)
        score = f" ({s:.2f})" if s is not None else ""
        lines.append(f'  contradicts [{e}] {d.turns[e].speaker}: "{_quote(d.turns[e].text)}"{score}')
        if e in read_as:
            lines.append(f'    also read as: "{_quote(read_as[e])}"')
    if not v.contradiction and not v.pair_scores and len(d.turns) > 1 and v.score == 0.0:
        lines.append("  (the last speaker said nothing earlier to compare with)")
    return "\n".join(lines)


def render_grounded(i: int, d: Dialogue, v: Verdict) -> str:
    """Human-readable verdict of a task-oriented (QI/HI/KBI) detector: labels, conflicting turns and rows."""
    from ..detectors.grounded import row_text, split_turns

    name = d.meta.get("id") or f"dialogue {i + 1}"
    labels = v.labels or {}
    scores = ", ".join(f"{k} {s:.2f}" for k, s in (v.label_scores or {}).items())
    fired = [k for k, on in labels.items() if on]
    head = f"CONTRADICTION: {', '.join(fired)}" if fired else "consistent"
    lines = [f"{name}: {head} ({scores})"]
    _, request, reply = split_turns(d)
    if reply is None:
        lines.append("  (the last turn is the user's: there is no system reply to check)")
    else:
        lines.append(f'  reply [{reply}] {d.turns[reply].speaker}: "{_quote(d.turns[reply].text)}"')
    if labels.get("QI") and request is not None:
        lines.append(
            f'  QI: does not fit the request [{request}] {d.turns[request].speaker}: "{_quote(d.turns[request].text)}"'
        )
    if labels.get("HI"):
        for e in v.evidence:
            if e == request:
                continue
            s = v.pair_scores.get(e)
            score = f" (attribution {s:.2f})" if s else ""
            lines.append(f'  HI: contradicts [{e}] {d.turns[e].speaker}: "{_quote(d.turns[e].text)}"{score}')
    if labels.get("KBI"):
        rows = v.knowledge_evidence or ()
        kb = d.knowledge.rows if d.knowledge is not None else ()
        if not rows:
            lines.append("  KBI: no single knowledge row stands out")
        for r in rows:
            s = (v.knowledge_scores or {}).get(r)
            score = f" (attribution {s:.2f})" if s else ""
            lines.append(f"  KBI: contradicts knowledge row {r}: {_quote(row_text(kb[r]))}{score}")
    return "\n".join(lines)


def raise_all(problems: Sequence[DialcheckError], source: str, total: int) -> NoReturn:
    """Stop on bad input, naming every bad record: all but the last on stderr, the last as the raised error
    (with a count when there are several), so one run shows everything to fix."""
    if len(problems) == 1:
        raise problems[0]
    for e in problems:
        print(f"dialcheck: error: {e}", file=sys.stderr)
    raise InputError(
        f"{len(problems)} of {total} dialogues are bad (each named above); nothing was checked. "
        "`dialcheck score IN.jsonl OUT.jsonl` skips bad records and checks the rest",
        input_name(source),
    )


def run(args: argparse.Namespace) -> int:
    # a dialogue object's own "speaker" over --speaker, as the HTTP API reads it; its "tau" is a bad record
    records = list(read_dialogues(args.input, checking=True, speakers=args.speaker))
    source = input_name(args.input)  # "<stdin>" for -, as the reader names it in the records' own errors
    dialogues: list[Dialogue] = []
    checked: list[int | None] = []
    language = model_language_of(args)
    labels: list[str] = []  # each dialogue checked by name (and line), for a warning
    # all-or-nothing: a bad record stops before any model work, and every bad record is named, in input order
    problems: list[DialcheckError] = []
    for k, r in enumerate(records):
        if r.dialogue is None:
            problems.append(r.error or InputError("no dialogue", source, r.at_line))
            continue
        d, turn = r.dialogue, None
        name = d.meta.get("id") or f"dialogue {k + 1}"
        try:
            if r.speakers:
                d = upto_speaker(d, r.speakers)
                turn = len(d.turns) - 1
            problem = route_error(args, d)  # e.g. Chinese and English turns mixed: before any model work
            if problem is not None:
                raise problem
        except DialcheckError as e:  # the dialogue by its name, file and line
            problems.append(InputError(f"{name}: {getattr(e, 'message', e)}", source, r.at_line))
            continue
        dialogues.append(d)
        checked.append(turn)
        labels.append(f"{name} at line {r.at_line}" if r.at_line is not None else name)
    if problems:
        raise_all(problems, args.input, len(records))
    if language is not None:  # the dialogues in a language --model was not trained on, by name (and line)
        model_warning(args, language, dialogues, labels, len(records))
    routed_warning(args, dialogues, labels if len(records) > 1 else None, len(records))  # Korean to English, ...
    from ..detectors.grounded import knowledge_notes

    for i, d in enumerate(dialogues):
        name = d.meta.get("id") or f"dialogue {i + 1}"
        for note in knowledge_notes(d.knowledge):
            print(f"dialcheck: note: {name}: {note}", file=sys.stderr)
        role = ends_off_assistant(d) if checked[i] is None else None  # a chat log's user, tool or system message
        if role is not None:
            print(
                f"dialcheck: note: {name}: the last turn is {last_message(role)}; --speaker assistant checks the "
                "assistant's last reply instead",
                file=sys.stderr,
            )
    out = sys.stdout
    bar, started = None, time.monotonic()
    if not args.no_progress:
        from tqdm.auto import tqdm

        # on a terminal only (disable=None): check's output is the verdicts, often read on the same terminal
        bar = tqdm(
            total=len(dialogues), desc="checking", unit="dialogue", file=sys.stderr, disable=None,
            delay=PROGRESS_DELAY, leave=False,
        )  # fmt: skip
    for start, end in chunks(dialogues, CHUNK):  # all were read and found good: written as they are checked
        part = dialogues[start:end]
        lines = []
        for i, (d, v) in enumerate(zip(part, predict_for(args, part), strict=True), start=start):
            if args.json:
                rec: dict[str, Any] = {"id": d.meta.get("id")}
                if checked[i] is not None:
                    rec["turn"] = checked[i]
                rec.update(v.to_dict())
                lines.append(json.dumps(rec, ensure_ascii=False) + "\n")
            else:
                lines.append(render(i, d, v) + "\n")
        if bar is not None:
            bar.clear()  # off the terminal's last line, which the verdicts would otherwise follow on
        out.write("".join(lines))
        out.flush()
        if bar is not None:
            bar.update(len(part))
            if not bar.disable and bar.last_print_n < bar.n and time.monotonic() - started >= PROGRESS_DELAY:
                bar.refresh()  # back under the verdicts when update() drew nothing (too soon after its last)
    if bar is not None:
        bar.close()
    return 0
