"""``dialcheck rerank FILE|-``: filter or re-order candidate replies so that contradictory ones are not chosen.

Each input record is a dialogue context with its candidate replies::

    {"id": "d1", "turns": ["I have two dogs.", "What are their names?"],
     "candidates": ["I never had a dog.", {"text": "Rex and Fido.", "score": -0.4}]}

``score`` (optional) is the generator's own score, higher is better; it orders the candidates the
detector keeps and breaks ties. Without ``candidates``, ``--generate beam10`` makes them with a local
causal LM (``--lm``, default SmolLM2-135M-Instruct) or ``--endpoint`` (an OpenAI-compatible server); when every
record has candidates, a warning names the generation options given and nothing is generated.
The reply is spoken by the speaker of the second-to-last turn (a ``system`` message left out; ``assistant`` after
a lone ``user`` turn; after a tool call, the tool call's speaker) unless ``--speaker`` says otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..io import input_name, opening_context, parse_dialogue
from .common import (
    add_model_options,
    http_url,
    load_for,
    positive_int,
    raise_every,
    readable_weights,
    routed_warning,
    speaker_name,
)

HELP = "filter or re-rank candidate replies by contradiction (JSON/JSONL in)"
MAX_NEW_TOKENS = 32


def add_parser(sub: Any) -> None:
    p = sub.add_parser("rerank", help=HELP, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input", help="JSON/JSONL records with turns and candidates, or - for stdin")
    p.add_argument(
        "--json",
        action="store_true",
        help='one JSON object per record and line, with the record\'s "line" (JSONL) or, in a JSON document of '
        'several lines, its "record" (its position, from 1)',
    )
    p.add_argument("--policy", choices=("filter", "sort"), default="filter")
    p.add_argument(
        "--fallback",
        choices=("least_contradictory", "none"),
        default="least_contradictory",
        help="what filter chooses when every candidate is contradictory",
    )
    p.add_argument("--keep-repeats", action="store_true", help="do not set aside candidates that repeat a turn")
    p.add_argument(
        "--speaker",
        type=speaker_name,
        default=None,
        metavar="NAME",
        help="who says the reply (default: the second-to-last speaker, a system message left out; after a tool "
        "call, its speaker)",
    )
    g = p.add_argument_group("generating candidates (records without 'candidates')")
    g.add_argument("--generate", default=None, metavar="SPEC", help="e.g. beam10, diverse10, nucleus10, topk10")
    g.add_argument("--lm", default=None, help="causal LM name or local folder (default SmolLM2-135M-Instruct)")
    g.add_argument(
        "--endpoint", type=http_url, default=None, help="OpenAI-compatible base URL, e.g. http://localhost:8000/v1"
    )
    g.add_argument("--endpoint-model", default=None, help="model name to send to --endpoint")
    g.add_argument("--max-new-tokens", type=positive_int, default=MAX_NEW_TOKENS)
    add_model_options(p)
    p.set_defaults(func=run)


def _records(path: str) -> list[tuple[int, Any, int | None]]:
    """(position, record, line in the file or None): JSONL lines, or the items of one JSON value (a JSON list's
    counted from 1; a lone record's line known when the file has one line), read by the reader ``check`` reads with
    (:func:`~dialcheck.io.read_dialogues`), so the two tell the format apart and word its errors alike: a
    pretty-printed document with a syntax error is that error at its line and column, not a bad record per line; a
    bad first JSONL line says the file was read as JSON Lines; an empty list ``[]`` holds no records. Each value is
    kept as it is, for :func:`_parse` to check as a record."""
    from ..io import _read_dialogues

    # a missing file or a directory, and a closed standard input, are named by the reader
    read = list(_read_dialogues(path, input_name(path), None, lambda obj: obj, none="records"))
    if read and read[0].line == 0:  # the items of one JSON value (JSON Lines count from line 1)
        alone = len(read) == 1  # else the item names the record, even on a file of one line
        return [(r.line + 1, r.dialogue, r.at_line if alone else None) for r in read]
    return [(r.line, r.error if r.error is not None else r.dialogue, r.line) for r in read]


def _parse(
    records: list[tuple[int, Any, int | None]], name: str, generating: bool
) -> list[tuple[int, Any, Any, str | None]]:
    from ..generation.rerank import _split
    from ..io import FirstLines, _check_text, id_key, json_type

    parsed = []
    errors: list[InputError] = []  # every bad record is named, like `check`
    # the output names a record by its id alone: two records of one id could not be told apart (as collect refuses)
    once = FirstLines("give each record its own id: the output names a record by its id")
    for n, obj, line in records:
        # a record of a JSON list by its position, as the output names it ("record 2"; not "dialogue 2")
        item = f"record {n}: " if line is None and len(records) > 1 else ""

        def err(msg: str, item: str = item, line: int | None = line) -> InputError:
            return InputError(item + msg, name, line)

        if isinstance(obj, InputError):  # a JSONL line that is not JSON
            errors.append(obj)
            continue
        try:
            if not isinstance(obj, dict):
                raise err("expected an object with 'turns' and 'candidates'")
            cands = obj.get("candidates")
            body = {k: v for k, v in obj.items() if k != "candidates"}
            try:  # candidates for the first turn (no turns yet) are ranked as the library ranks them; a record
                # to generate for needs a context to reply to
                d = opening_context(body) if cands is not None else None
                d = parse_dialogue(body) if d is None else d
            except InputError as e:
                raise err(e.message) from None
            if cands is None and not generating:
                raise err("candidates: missing (give candidate replies, or --generate SPEC to make them)")
            if cands is not None and not isinstance(cands, list):
                raise err(f"candidates: expected a list, got {json_type(cands)}")
            if cands is not None and not cands:
                raise err("candidates: the list is empty: there is nothing to re-rank")
            for i, c in enumerate(cands or []):
                try:
                    _check_text(_split(c, i)[0], f"candidates[{i}]")
                except InputError as e:
                    raise err(e.message) from None
            rid = d.meta.get("id")
            where = f"record {n}" if line is None else line
            twice = None if rid is None else once.problem(rid, where, id_key(obj))  # the key as written
            if twice is not None:
                raise err(twice)
        except InputError as e:
            errors.append(e)
            continue
        parsed.append((n, d, cands, d.meta.get("id")))
    raise_every(errors, len(records), "records", name, "re-ranked")
    return parsed


def _route(context: Any, cands: list[Any], speaker: str | None, name: str, n: int, line: int | None, many: bool) -> str:
    """The shipped default that checks ``context`` followed by its first non-empty candidate
    (:func:`~dialcheck.generation.rerank.route_with_reply`), its errors naming the record."""
    from ..errors import DialcheckError
    from ..generation.rerank import route_with_reply
    from .common import CHOOSE

    try:
        return route_with_reply(context, cands, speaker, CHOOSE)
    except DialcheckError as e:
        item = f"record {n}: " if line is None and many else ""  # a record of a JSON list: its position
        raise InputError(f"{item}{getattr(e, 'message', e)}", name, line) from None


def _where(n: int, line: int | None) -> dict[str, int]:
    """Where a record is, as the output names it (``--json``'s key, the text's words): a JSONL record (or a lone
    record on one line) by its line, a record of a JSON document by its position in it, counted from 1."""
    return {"line": line} if line is not None else {"record": n}


def _label(n: int, line: int | None, rid: str | None) -> str:
    """A record's name in the text output and warnings: its id, else where it is (``line 3``, ``record 2``)."""
    return rid or " ".join(f"{key} {value}" for key, value in _where(n, line).items())


def _read(parsed: list[tuple[int, Any, Any, str | None]], at: list[Any]) -> tuple[list[Any], list[str]]:
    """Each record as the text a detector reads (its context, then its candidates) and its name for a warning."""
    from ..generation.rerank import _split_raw
    from ..schema import Dialogue, Turn

    wholes, names = [], []
    for i, (n, d, cands, rid) in enumerate(parsed):
        replies = [Turn("candidate", _split_raw(c, k)[0]) for k, c in enumerate(cands or [])]
        wholes.append(Dialogue((*d.turns, *replies), d.knowledge) if replies else d)
        names.append(_label(n, at[i], rid))  # as the output and --json name it: "x", not "x at line 1"
    return wholes, names


def _warn_language(args: argparse.Namespace, parsed: list[tuple[int, Any, Any, str | None]], at: list[Any]) -> None:
    """As ``check`` does: one warning naming the records whose context or candidates are in a language ``--model``
    was not trained on (it re-ranks them all the same)."""
    from .common import model_language_of, model_warning

    language = model_language_of(args)
    if language is not None:
        model_warning(args, language, *_read(parsed, at), len(parsed), alone="the record")


def _generator(args: argparse.Namespace) -> Any:
    if args.endpoint:
        from ..generation.openai import OpenAIChatGenerator

        if not args.endpoint_model:
            raise InputError("--endpoint needs --endpoint-model")
        return OpenAIChatGenerator(args.endpoint, args.endpoint_model)
    from ..generation.nbest import NBestGenerator

    return NBestGenerator.load(args.lm)


def _warn_unused_generation(args: argparse.Namespace, records: int) -> None:
    """One warning naming the generation options given when every record brought its candidates (they were
    dropped without a word before)."""
    given = [
        opt
        for opt, value in (
            ("--generate", args.generate),
            ("--lm", args.lm),
            ("--endpoint", args.endpoint),
            ("--endpoint-model", args.endpoint_model),
        )
        if value is not None
    ]
    if args.max_new_tokens != MAX_NEW_TOKENS:
        given.append("--max-new-tokens")
    if given:
        every = "the record has" if records == 1 else f"all {records} records have"
        print(
            f"dialcheck: warning: {', '.join(given)} not used: {every} candidates, so no record needed generating",
            file=sys.stderr,
        )


def _quote(text: str) -> str:
    return textwrap.shorten(text, width=80, placeholder=" ...") if text.strip() else "(empty)"


def run(args: argparse.Namespace) -> int:
    from ..generation.nbest import DecodingConfig
    from ..generation.rerank import rerank_many

    name = input_name(args.input)
    records = _records(args.input)
    at = [line for _, _, line in records]
    parsed = _parse(records, name, bool(args.generate))
    _warn_language(args, parsed, at)
    chosen = None
    if args.model is not None:  # loaded before any candidate is generated: a bad --model fails at once
        if Path(args.model).is_dir():
            readable_weights(args.model, f"the --model folder {args.model}")
        chosen = load_for(args)
    missing = [i for i, (_, _, c, _) in enumerate(parsed) if c is None]
    if not missing:
        _warn_unused_generation(args, len(parsed))
    else:
        cfg = DecodingConfig.parse(args.generate, max_new_tokens=args.max_new_tokens)
        gen = _generator(args)
        lists = gen.generate([parsed[i][1] for i in missing], cfg, speaker=args.speaker)
        for i, cands in zip(missing, lists, strict=True):
            n, d, _, rid = parsed[i]
            parsed[i] = (n, d, [{"text": c.text, "score": c.score} for c in cands], rid)
    groups: dict[str, list[int]] = {}  # the records each detector re-ranks, in input order
    unroutable: list[InputError] = []
    for i, (n, d, cands, _) in enumerate(parsed):
        where = (name, n, at[i], len(parsed) > 1)
        try:
            key = "model" if args.model is not None else _route(d, cands, args.speaker, *where)
        except InputError as e:
            unroutable.append(e)
            continue
        groups.setdefault(key, []).append(i)
    raise_every(unroutable, len(parsed), "records", name, "re-ranked")
    if args.model is None:  # as check does: the records routed to a default that does not read their script
        keys = [""] * len(parsed)
        for key, members in groups.items():
            for i in members:
                keys[i] = key
        wholes, labels = _read(parsed, at)
        routed_warning(args, wholes, labels if len(parsed) > 1 else ["the record"], len(parsed), routes=keys)
    results: list[Any] = [None] * len(parsed)
    for language, members in groups.items():  # like `check`: knowledge -> task-oriented, Chinese -> CDConv
        det = chosen if language == "model" else load_for(args, language=language)
        got = rerank_many(
            [parsed[i][1] for i in members],
            [parsed[i][2] for i in members],
            det,
            policy=args.policy,
            speaker=args.speaker,
            fallback=args.fallback,
            drop_repeats=not args.keep_repeats,
            batch_size=args.batch_size,
        )
        for i, r in zip(members, got, strict=True):
            results[i] = r
    out = sys.stdout
    for (n, _, _, rid), r, line in zip(parsed, results, at, strict=True):
        if args.json:
            # a JSONL record's line; a JSON document's record by its position (counted from 1), under another
            # name: it was written as "line", which a multi-line document's records do not start on
            out.write(json.dumps({"id": rid, **_where(n, line), **r.to_dict()}, ensure_ascii=False) + "\n")
            continue
        label = _label(n, line, rid)  # as --json names it: "record 5" was the line number of a JSONL record
        if r.chosen is None:
            why = (
                "every candidate is contradictory"
                if r.ranked
                else "every candidate was set aside (empty, a repeat of a turn or a duplicate)"
            )
            out.write(f"{label}: nothing chosen: {why} ({r.counts})\n")
        else:
            c = r.chosen
            flag = " (all candidates contradictory: least contradictory)" if r.counts.get("fallback") else ""
            out.write(
                f'{label}: chose [{c.index}] "{_quote(c.text)}" (contradiction {c.contradiction_score:.2f}){flag}\n'
            )
        for c in r.dropped:
            if c is r.chosen:
                continue
            why = f"contradiction {c.contradiction_score:.2f}" if c.reason == "contradiction" else c.reason
            out.write(f'  dropped [{c.index}] "{_quote(c.text)}" ({why})\n')
    out.flush()
    return 0
