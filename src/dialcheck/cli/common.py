"""Options and helpers shared by several subcommands."""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import shlex
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ..errors import DialcheckError, InputError
from ..language import CHOOSE_CLI
from ..schema import Dialogue

#: ``--data-dir``'s help, in the order :func:`dialcheck.datasets.base.data_dir` looks (one wording for every command)
DATA_DIR_HELP = (
    "corpus folder (default $DIALCHECK_DATA_DIR, else ../shared/data beside the current folder or the checkout)"
)

CHUNK_CHARACTERS = 1000  # a chunk's characters per dialogue of its size (check's 64, score's --chunk-size): a log of
# 400-turn dialogues or turns of 20,000 characters (38,000 pairs a dialogue on a small window) was one chunk, scored
# for minutes with the bar at 0 and all their pairs in memory


def dialogue_weight(dialogue: Dialogue) -> int:
    """About how much checking ``dialogue`` costs, in characters read, by which check and score end their chunks
    sooner: its turns' text, a turn longer than :data:`CHUNK_CHARACTERS` counted once a ``CHUNK_CHARACTERS`` of it
    (it is cut into pieces, each paired with the other long turns' pieces).

    >>> from dialcheck.schema import Dialogue
    >>> dialogue_weight(Dialogue.from_texts(["Hi.", "x" * 2500]))
    5003
    """
    return sum(len(t.text) * max(1, len(t.text) // CHUNK_CHARACTERS) for t in dialogue.turns)


def add_model_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--model",
        "-m",
        type=model_option,
        default=None,
        help="detector folder or shipped model name (default, or 'default': each dialogue goes to the shipped "
        "default of its kind: the task-oriented one with knowledge, the Chinese one for a Chinese conversation, "
        "else the English one)",
    )
    p.add_argument("--tau", type=unit_float, default=None, help="decision threshold in [0, 1] (default: the model's)")
    p.add_argument("--eta-e", type=unit_float, default=None, help="evidence threshold in [0, 1] (default: the model's)")
    p.add_argument("--batch-size", type=positive_int, default=64, help="pairs per forward pass (default 64)")
    add_reading_options(p)
    add_threads_option(p)
    p.add_argument(
        "--int8",
        action="store_true",
        help="int8 dynamic quantization of the encoder's linear layers: 1.3-2.5x faster on CPU "
        "(measured in docs/benchmarks.md), scores move a little (a few verdicts near the threshold "
        "flip; measure with `evaluate --int8`); with --onnx, ONNX Runtime's per-channel int8",
    )
    p.add_argument(
        "--onnx",
        action="store_true",
        help='score with ONNX Runtime (pip install "dialcheck[onnx]"): the model is exported once into the '
        "dialcheck cache; float32 scores equal torch's, and with --int8 it is the faster and closer int8 path",
    )
    p.add_argument(
        "--vocabulary",
        default=None,
        metavar="FILE",
        help='JSON object of entity type -> values (e.g. {"city": ["boston"]}) added to the task-oriented '
        "detector's entity checks, so values missing from a dialogue's table are typed too",
    )


def add_reading_options(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """--pair-order, --long-turns, --ellipsis, --questions, --slots, --subjects, --introductions, --times,
    --answers: how an utterance-based detector reads; --history: how a four-category one reads a long conversation;
    --cascade-evidence: who names a cascade's evidence turns; --recheck-floor: which turns its slow stage re-reads."""
    from ..detectors.categories import HISTORY_READINGS
    from ..detectors.utterance import (
        ANSWER_READINGS,
        INTRODUCTION_READINGS,
        QUESTION_READINGS,
        SLOT_READINGS,
        SUBJECT_READINGS,
        TIME_READINGS,
    )

    add_pair_order_option(p)
    p.add_argument(
        "--long-turns",
        choices=("chunk", "truncate", "pieces"),
        default=None,
        help="utterance-based detectors, for a pair of turns too long for the model's window: chunk (default) "
        "scores every piece of whole sentences of the one against every piece of the other and keeps the "
        "highest; pieces does so whenever either turn is longer than one piece (32 tokens), even if the pair fits; "
        "truncate cuts the earlier turn to fit (the cost of DECODE's short turns either way)",
    )
    p.add_argument(
        "--ellipsis",
        choices=("off", "resolve"),
        default=None,
        help='utterance-based detectors: resolve also reads a turn that only agrees ("Me too!", "Neither have '
        "I.\") as the other speaker's statement it agrees with, so a contradiction made by agreeing is caught "
        "(English phrases); default: the model's",
    )
    p.add_argument(
        "--questions",
        choices=QUESTION_READINGS,
        default=None,
        help="utterance-based detectors: skip does not pair the last turn with earlier turns that only ask and "
        'say nothing about their speaker ("How many kids do you have?"), which assert nothing to contradict; '
        'echoes also reads every paired turn without the questions that only hand the turn back ("Do you?", '
        '"What about you?"), strip without every question that says nothing about its speaker ("I live in Ohio. '
        'Do you have pets?"), when the turn says something else (both opt-in: they flag more same-subject '
        "replies); default: the model's",
    )
    p.add_argument(
        "--slots",
        choices=SLOT_READINGS,
        default=None,
        help="utterance-based detectors: persona flags a last turn that states another name, age or job than an "
        'earlier turn of the same speaker ("I work as a nurse." ... "I work as a teacher."), an age that earlier '
        'turn rules out ("I\'m 29." ... "When I was 35, ...") or another count ("I have two dogs." ... "My three '
        'dogs ..."; English phrasings, see dialcheck.detectors.slots and .counts); settle also clears an earlier '
        'turn that says only such slots when the last turn agrees with them ("I\'m 27." ... "She is 31.") and '
        'reads two turns whose ages agree with the ages cut out ("I\'m 28 and I work in marketing." ... "When I '
        "was 22 I backpacked.\"); default: the model's",
    )
    p.add_argument(
        "--subjects",
        choices=SUBJECT_READINGS,
        default=None,
        help="utterance-based detectors: apart clears a pair of turns of which one is only about the speaker and "
        'the other only about someone else ("I live in Ohio." ... "My brother lives in Texas."), unless either '
        'denies that someone ("I\'m an only child."); English phrasings, see dialcheck.detectors.subjects; '
        "default: the model's",
    )
    p.add_argument(
        "--introductions",
        choices=INTRODUCTION_READINGS,
        default=None,
        help="utterance-based detectors: settle clears a pair of turns of which one only says the speaker has "
        'someone ("I have a sister.", "Yes, two daughters.") and the other only says something about that someone '
        '("My sister lives abroad."), unless it denies, loses or counts them otherwise ("My sister passed away.", '
        '"my two sisters"); English phrasings, see dialcheck.detectors.subjects; default: the model\'s',
    )
    p.add_argument(
        "--times",
        choices=TIME_READINGS,
        default=None,
        help="utterance-based detectors: settle clears a pair of turns of which one only tells a former state of "
        'the speaker ("I used to live in Chicago.", "I grew up in Chicago.") and the other a present one it does '
        'not restate ("I live in Seattle."), unless either says "never", "always" or "still"; changes does so only '
        "when both speak of where one lives, work, getting around, food and drink or school; English phrasings, "
        "see dialcheck.detectors.times; default: the model's",
    )
    p.add_argument(
        "--answers",
        choices=ANSWER_READINGS,
        default=None,
        help="utterance-based detectors: strip reads the last turn without the yes/no answer it opens with "
        '("No -", "Not quite.", "Yes,") when the turn before it asks something and four or more words follow: the '
        "answer is to that question, not to the earlier turns it is paired with; default: the model's",
    )
    p.add_argument(
        "--history",
        choices=HISTORY_READINGS,
        default=None,
        help="four-category (Chinese) flat and pair detectors, for a conversation of more than four turns: window "
        "(default) joins every earlier turn into one segment cut from the left to the model's window; frames "
        "reads the last four turns as one session and each earlier turn of the replying speaker, with the turn "
        "before it, against the last two as another, so a history contradiction of an early turn is seen and that "
        'turn named (2-3x the cost; docs/benchmarks.md, "Long conversations"); default: the model\'s',
    )
    p.add_argument(
        "--cascade-evidence",
        choices=("first", "confirm"),
        default=None,
        help="cascades: who names the evidence turns of a contradiction the fast detector decides alone; confirm "
        "keeps, of the two or more it names, those the slow detector also scores at or above its eta_e (fewer "
        "turns named beside the right one; the verdicts do not change); default: the model's",
    )
    p.add_argument(
        "--recheck-floor",
        type=unit_float,
        default=None,
        metavar="F",
        help="cascades: in the band, the slow detector re-reads only the turns the fast one scored at or above F "
        "(and its highest), a speed option; 0 re-reads every turn; default: the model's",
    )


CASCADE_OPTIONS = {"cascade_evidence": "evidence", "recheck_floor": "recheck_floor"}  # argument -> attribute
# what reads each reading option (``history``; '': every other one), for the error about a model that does not
READING_TARGETS = {
    "history": "four-category (Chinese) flat and pair detectors",
    "": "utterance-based English detectors and the cascades and routers of them",
}


def set_cascade_option(det: Any, arg: str, value: Any) -> bool:
    """The command line's ``arg`` (a key of ``CASCADE_OPTIONS``, e.g. ``recheck_floor`` for ``--recheck-floor``)
    set to ``value`` on ``det``, which must be a cascade (or a router of cascades); True when it changed the
    model's."""
    attr = CASCADE_OPTIONS[arg]
    if not hasattr(det, attr):
        raise InputError(f"--{arg.replace('_', '-')} applies to a cascade; {det.config.detector} is not one")
    changed = value != getattr(det, attr)
    setattr(det, attr, value)
    return changed


def raise_every(errors: list[InputError], total: int, what: str, source: str, nothing: str) -> None:
    """Stop on bad records, if any, naming every one, like ``check``: one error raised as it is; several printed
    on stderr, then one saying how many of the ``total`` ``what`` were bad and that ``nothing`` was done."""
    if len(errors) == 1:
        raise errors[0]
    if errors:
        for e in errors:
            print(f"dialcheck: error: {e}", file=sys.stderr)
        raise InputError(f"{len(errors)} of {total} {what} are bad (each named above); nothing was {nothing}", source)


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def unit_float(text: str) -> float:
    """An argparse type: a number in [0, 1] (checked when the command line is read, whatever the model)."""
    v = _number(text)
    if not 0.0 <= v <= 1.0:
        raise argparse.ArgumentTypeError(f"must lie in [0, 1], got {v:g}")
    return v


def _finite(text: str) -> float:
    v = _number(text)
    if not math.isfinite(v):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return v


def positive_float(text: str) -> float:
    """An argparse type: a finite number above 0 (``--lr 0`` would learn nothing, a negative one is refused by
    torch only after the data is read)."""
    v = _finite(text)
    if v <= 0:
        raise argparse.ArgumentTypeError(f"must be above 0, got {v:g}")
    return v


def nonnegative_float(text: str) -> float:
    """An argparse type: a finite number of at least 0 (``--epochs nan`` or ``inf`` would crash the schedule)."""
    v = _finite(text)
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {v:g}")
    return v


def open_unit_float(text: str) -> float:
    """An argparse type: a share strictly between 0 and 1 (``--validation-fraction 0`` holds nothing out, 1
    trains on nothing)."""
    v = _finite(text)
    if not 0.0 < v < 1.0:
        raise argparse.ArgumentTypeError(f"must lie strictly between 0 and 1, got {v:g}")
    return v


def positive_unit_float(text: str) -> float:
    """An argparse type: a share above 0 and at most 1 (``--context-rate 0`` would copy nothing).

    >>> positive_unit_float("1"), positive_unit_float("0.3")
    (1.0, 0.3)
    >>> positive_unit_float("0")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: must lie in (0, 1], got 0
    """
    v = _finite(text)
    if not 0.0 < v <= 1.0:
        raise argparse.ArgumentTypeError(f"must lie in (0, 1], got {v:g}")
    return v


def unit_float_below_one(text: str) -> float:
    """An argparse type: a share of at least 0 and below 1 (``--max-disagreement 1`` would allow a cascade to
    differ from its slow detector on every dialogue).

    >>> unit_float_below_one("0"), unit_float_below_one("0.02")
    (0.0, 0.02)
    >>> unit_float_below_one("1")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: must lie in [0, 1), got 1
    """
    v = _finite(text)
    if not 0.0 <= v < 1.0:
        raise argparse.ArgumentTypeError(f"must lie in [0, 1), got {v:g}")
    return v


def comma_choices(choices: Sequence[str], upper: bool = False, shown: str | None = None) -> Callable[[str], list[str]]:
    """An argparse type: a comma-separated selection of ``choices`` (upper-cased first with ``upper``), at least
    one, each known; ``--methods ","`` would otherwise select nothing and write an empty file. ``shown`` says what
    the choices are in the messages instead of listing them (e.g. grouped by what each applies to).

    >>> pick = comma_choices(("negation", "synonym"))
    >>> pick("negation, synonym")
    ['negation', 'synonym']
    >>> pick(",")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: name at least one of negation, synonym
    >>> pick("negation,typo")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: unknown: typo (known: negation, synonym)
    """

    known = shown or ", ".join(choices)

    def parse(text: str) -> list[str]:
        picked = [x.strip().upper() if upper else x.strip() for x in text.split(",") if x.strip()]
        if not picked:
            raise argparse.ArgumentTypeError(f"name at least one of {known}")
        unknown = [x for x in picked if x not in choices]
        if unknown:
            raise argparse.ArgumentTypeError(f"unknown: {', '.join(unknown)} (known: {known})")
        return picked

    return parse


def http_url(text: str) -> str:
    """An argparse type: an http(s) URL with a host (an endpoint's base URL)."""
    from urllib.parse import urlsplit

    parts = urlsplit(text.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise argparse.ArgumentTypeError(f"expected an http:// or https:// URL, got {text!r}")
    return text.strip()


def _whole(text: str, noun: str = "a whole number") -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {noun}, got {text!r}") from None


def positive_int(text: str) -> int:
    """An argparse type: a count of at least 1 (``--batch-size 0`` would never score, a negative one scores 0)."""
    n = _whole(text)
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {n}")
    return n


def nonnegative_int(text: str) -> int:
    """An argparse type: a count of 0 or more, for options where 0 means none or all (``--limit -5`` would drop
    the last five records, ``--random-k -1`` crash the sampler)."""
    n = _whole(text)
    if n < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {n}")
    return n


SEED_LIMIT = 2**32  # numpy's seeds are 0 .. 2**32 - 1: a negative one is refused only when training starts


def seed_number(text: str) -> int:
    """An argparse type: a random seed numpy takes too, 0 to 2**32 - 1 (``--seed -1`` crashed ``train`` once its
    data was read)."""
    n = _whole(text)
    if not 0 <= n < SEED_LIMIT:
        raise argparse.ArgumentTypeError(f"must be 0 to {SEED_LIMIT - 1}, got {n}")
    return n


MIN_WINDOW = 16  # tokens: the room a pair classifier keeps for the earlier turn (detectors.core._MIN_FIRST_TOKENS)


def token_window(text: str) -> int:
    """An argparse type: a model's window in tokens, at least ``MIN_WINDOW`` (``--max-length 0`` was silently the
    default, a negative one crashed the tokenizer; a window longer than the base reads is refused by ``train``
    once it knows the base)."""
    n = _whole(text)
    if n < MIN_WINDOW:
        raise argparse.ArgumentTypeError(f"must be at least {MIN_WINDOW} tokens, got {n}")
    return n


def port_number(text: str) -> int:
    """An argparse type: a TCP port, checked before the model loads (bind() would refuse it only after)."""
    n = _whole(text, "a port number")
    if not 0 <= n <= 65535:
        raise argparse.ArgumentTypeError(f"must be 0-65535, got {n}")
    return n


def speaker_name(text: str) -> str:
    """An argparse type: a speaker name, refused when empty or blank as ``--speaker`` (it was blamed on each
    record's own ``speaker`` field, or read as a type error: "got string")."""
    from ..io import blank_speaker

    if not text.strip():  # worded as a record's speaker is: "empty" of '', "' ' is blank" of white space
        raise argparse.ArgumentTypeError(f"{blank_speaker(text)} (name a speaker, e.g. --speaker assistant)")
    return text


def add_speaker_option(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument(
        "--speaker",
        action="append",
        type=speaker_name,
        default=None,
        metavar="NAME",
        help=f"{what} (repeatable; e.g. --speaker assistant for chat-completion logs, whose last message "
        "may be the user's, a tool result or a system message)",
    )


def last_message(role: str) -> str:
    """The last message of a chat log that is not the assistant's (:func:`~dialcheck.io.ends_off_assistant`), as a
    note names it: ``the user's``, ``a tool message``, ``a system message``."""
    return "the user's" if role == "user" else f"a {role} message"


def add_pair_order_option(
    p: argparse.ArgumentParser | argparse._ArgumentGroup,
    help: str = "utterance-based detectors: read each (earlier turn, last turn) pair as trained (forward) or in "
    "both orders, averaging the two scores (twice the cost); default: the model's",
) -> None:
    p.add_argument("--pair-order", choices=("forward", "both"), default=None, help=help)


def add_threads_option(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    p.add_argument(
        "--threads",
        type=nonnegative_int,
        default=0,
        help="CPU threads for torch (default 0 = torch's default, all cores)",
    )


def set_threads(n: int) -> None:
    """Apply ``--threads`` (0 keeps torch's default); a negative count is a user error."""
    if n < 0:
        raise InputError(f"--threads must be 0 (torch's default) or a positive count, got {n}")
    from ..threads import set_threads as _set

    _set(n)  # without importing torch: a model on ONNX Runtime never needs it


def load_for(args: argparse.Namespace, language: str = "en") -> Any:
    from ..api import load

    set_threads(getattr(args, "threads", 0))
    det = load(args.model, language=language)
    configure(det, args)
    return det


def configure(det: Any, args: argparse.Namespace) -> None:
    """Apply the command line's threshold overrides to a detector."""
    if args.tau is not None:
        det.tau = _prob(args.tau, "--tau")
    if args.eta_e is not None:
        det.eta_e = _prob(args.eta_e, "--eta-e")
    from ..detectors.utterance import UtteranceDetector

    # those given on the command line, where the model has them (history: four-category detectors only); routing
    # gives each default the ones it reads, but a model named with --model reads every dialogue, so an option it
    # has not would be dropped without a word: refused, as `models --save` and the cascade options below refuse it
    named = getattr(args, "model", None) is not None
    for reading in (*UtteranceDetector.reading_options(), "history"):
        value = getattr(args, reading, None)
        if value is None:
            continue
        if hasattr(det, reading):
            setattr(det, reading, value)
        elif named:
            raise InputError(
                f"--{reading.replace('_', '-')} applies to {READING_TARGETS.get(reading, READING_TARGETS[''])}; "
                f"{args.model} ({det.config.detector}) does not read it"
            )
    if named and getattr(args, "vocabulary", None) and not hasattr(det, "add_vocabulary"):
        raise InputError(
            f"--vocabulary applies to the task-oriented (CI-ToD) detector; {args.model} ({det.config.detector}) "
            "does not read it"
        )
    # a cascade's options reach the cascades among the models routing chose; a model named with --model must be one
    if named or hasattr(det, "recheck_floor"):
        for arg in CASCADE_OPTIONS:
            if getattr(args, arg, None) is not None:
                set_cascade_option(det, arg, getattr(args, arg))
    from ..api import accelerate

    accelerate(det, onnx=bool(getattr(args, "onnx", False)), int8=bool(getattr(args, "int8", False)))
    path = getattr(args, "vocabulary", None)
    if path:
        if "_vocabulary" not in vars(args):  # read once, and even when no detector uses it (errors show early)
            args._vocabulary = read_vocabulary(path)
        if hasattr(det, "add_vocabulary"):
            det.add_vocabulary(args._vocabulary)


CHOOSE = CHOOSE_CLI  # "pass --model": how a command picks a model of its own, in the advice of api.route's errors


def route_error(args: argparse.Namespace, d: Any) -> DialcheckError | None:
    """Why no shipped default can check ``d`` (Chinese and English turns mixed, a Chinese conversation without
    u1, ...), or None; with ``--model`` every dialogue goes to that model, which refuses only what a four-category
    (Chinese) model refuses of it: a chat log ending with a tool's result or a system message
    (``language.check_chinese_last_turn``), which it reads none of."""
    if args.model is not None:
        if "_reads_as_chinese" not in vars(args):  # the model's config read once a run
            from ..api import names_default, reads_as_chinese

            args._reads_as_chinese = not names_default(args.model) and reads_as_chinese(args.model)
        if not args._reads_as_chinese:
            return None
        from ..language import check_chinese_last_turn

        try:
            check_chinese_last_turn(d, CHOOSE)
        except DialcheckError as e:
            return e
        return None
    from ..api import route

    try:
        route(d, choose=CHOOSE)
    except DialcheckError as e:
        return e
    return None


def predict_for(args: argparse.Namespace, dialogues: Sequence[Any]) -> list[Any]:
    """Verdicts from ``--model``, or from the shipped default each dialogue routes to (see ``api.route``). A
    language the model was not trained on is the command's to warn of (:func:`model_warning`), by file and line."""
    from ..api import _predict

    set_threads(getattr(args, "threads", 0))
    return _predict(dialogues, args.model, args.batch_size, configure=lambda det: configure(det, args), warn=False)


def _prob(v: float, name: str) -> float:
    if not 0.0 <= v <= 1.0:
        raise InputError(f"{name} must lie in [0, 1], got {v}")
    return v


def read_vocabulary(path: str) -> dict[str, list[str]]:
    """An entity vocabulary file: a JSON object mapping each type to a list of strings or numbers.

    >>> import json, tempfile
    >>> f = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
    >>> _ = f.write(json.dumps({"city": ["boston", "paris"], "floor": [3]})); f.close()
    >>> read_vocabulary(f.name)
    {'city': ['boston', 'paris'], 'floor': ['3']}
    """
    import json

    from ..io import json_error, json_type

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        raise InputError(f"cannot read the vocabulary ({e.strerror or e})", path) from None
    except json.JSONDecodeError as e:
        raise InputError(json_error(e), path, e.lineno) from None
    if not isinstance(data, dict):
        raise InputError(f"expected a JSON object of type -> list of values, got {json_type(data)}", path)
    out: dict[str, list[str]] = {}
    for key, values in data.items():
        if not isinstance(values, list):
            raise InputError(f"{key}: expected a list of values, got {json_type(values)}", path)
        for i, v in enumerate(values):
            if isinstance(v, bool) or not isinstance(v, str | int | float):
                raise InputError(f"{key}[{i}]: expected a string or number, got {json_type(v)}", path)
        out[str(key)] = [str(v) for v in values]
    return out


def read_labelled(path: str) -> tuple[list[Any], int]:
    """The labelled dialogues (``Example`` records) of ``path`` and how many bad records were reported on
    stderr and skipped."""
    from ..io import read_examples

    examples, errors = read_examples(path)
    for e in errors:
        print(f"dialcheck: skipped: {e}", file=sys.stderr)
    return examples, len(errors)


def same_file(a: str | Path, b: str | Path) -> bool:
    """Whether paths ``a`` and ``b`` name one file: an existing one under any name (symbolic or hard links
    included), or one still to be written under two spellings of its path."""
    if str(a) == "-" or str(b) == "-":
        return False
    try:
        return Path(a).samefile(b)
    except OSError:  # one of them does not exist (yet)
        return Path(a).resolve() == Path(b).resolve()


def check_outputs(outputs: Sequence[tuple[Any, str]], inputs: Sequence[tuple[Any, str]] = ()) -> None:
    """Before any work: refuse an output (a ``(path, option)`` pair; None or "-" skipped) that is one of the
    ``inputs`` or another output, or that cannot be written (a folder, a missing or read-only parent folder)."""
    given = [(str(p), name) for p, name in outputs if p is not None and str(p) != "-"]
    for i, (path, name) in enumerate(given):
        for src, src_name in inputs:
            if src is not None and same_file(src, path):
                raise InputError(
                    f"{name} is the {src_name} input: writing it would destroy the input; choose another file", path
                )
        for other, other_name in given[:i]:
            if same_file(other, path):
                raise InputError(f"{name} and {other_name} are the same file: one would overwrite the other", path)
        writable_output(path, name)


def writable_output(path: str | Path, name: str) -> None:
    """Refuse an output path ``name`` that cannot be written: a folder, a missing or read-only parent folder, or a
    read-only file."""
    p = Path(path)
    if p.is_dir():
        raise InputError(f"{name}: is a folder; give a file name", str(path))
    if p.exists() and not p.is_file():  # /dev/null, a named pipe: written in place (io.write_jsonl), not beside
        if not os.access(p, os.W_OK):
            raise InputError(f"{name}: cannot be written here (permission denied)", str(path))
        return
    if p.is_symlink():  # its target is written, in the target's folder
        p = p.resolve()
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        up = next((a for a in (parent, *parent.parents) if a.exists()), None)
        if up is not None and not up.is_dir():  # "the folder x.jsonl does not exist" of an existing file before
            raise InputError(f"{name}: {up} is a file, not a folder", str(path))
        raise InputError(f"{name}: the folder {parent} does not exist", str(path))
    if (p.exists() and not os.access(p, os.W_OK)) or not os.access(parent, os.W_OK):
        raise InputError(f"{name}: cannot be written here (permission denied)", str(path))


def keeps_no_work(out: str) -> bool:
    """Whether a resumable run writing ``out`` keeps no work files beside it: standard output, or an output that is
    not a regular file (/dev/null, a named pipe), beside which ``OUT.part`` could not or should not be made."""
    path = Path(out)
    return out == "-" or (path.exists() and not path.is_file())


NO_WORK_TO_RESUME = "--resume needs an --out file: a run writing to standard output keeps no work to resume"


def refuse_resume_without_file(out: str, resume: bool) -> None:
    """Refuse ``--resume`` for an output that keeps no work to resume (:func:`keeps_no_work`)."""
    if resume and keeps_no_work(out):
        raise InputError(NO_WORK_TO_RESUME)


def open_checkpoint(out: str, resume: bool, settings: dict[str, Any], what: str, doing: str, drift: str = "") -> Any:
    """The work files beside ``out`` (``OUT.part``, ``OUT.resume.json``: a :class:`~dialcheck.collection.checkpoint.
    Checkpoint`), opened for ``--resume`` before any model is loaded; None for an output that keeps none
    (:func:`keeps_no_work`; ``--resume`` to it is refused). A resume with other ``settings`` is refused, saying what
    differs, and so is a fresh run over an interrupted one's finished work; a fresh run's checkpoint is returned
    unstarted. The messages name a row as ``what`` ("reply", counted), a run without work to resume says it goes on
    ``doing`` ("collecting") from the start, and a setting the interrupted run's record lacks is warned of, the
    rows made now perhaps differing ``drift`` ("in the last digits") from an uninterrupted run's."""
    from ..collection.checkpoint import Checkpoint
    from ..io import counted, plural_of

    if keeps_no_work(out):  # looked at once here (twice before, after collect's own early refusal: three stats)
        if resume:
            raise InputError(NO_WORK_TO_RESUME)
        return None
    cp, rows = Checkpoint(out, settings), plural_of(what)
    if resume and cp.exists():
        cp.resume()
        _say(f"resuming: {counted(len(cp.rows), what)} of the interrupted run kept ({counted(cp.done, 'batch')})")
        for key in cp.unrecorded:  # a record of an earlier dialcheck: finishing it beats refusing it
            _say(
                f"warning: {cp.state.name} does not record {key} (an earlier dialcheck wrote it): resuming with "
                f"{key} {json.dumps(settings[key])}; if the interrupted run's differed, the {rows} made now may "
                f"differ {drift + ' ' if drift else ''}from those an uninterrupted run makes"
            )
    elif resume:
        _say(f"nothing to resume (no {cp.state.name}): {doing} from the start")
    elif cp.exists() and cp.finished_units():
        raise InputError(
            f"an interrupted run's {rows} are kept in {cp.part.name} and {cp.state.name}: pass --resume to "
            "continue it, or delete those two files to start anew",
            out,
        )
    return cp


def _say(msg: str) -> None:
    print(f"dialcheck: {msg}", file=sys.stderr)


def existing_file(path: str) -> Path:
    p = Path(path)
    if str(path) != "-" and not p.is_file():
        raise InputError("no such file", path)
    return p


def model_option(value: str) -> str | None:
    """The type of ``--model``: ``default`` names no model of its own (None, as without ``--model``), so that every
    command routes each dialogue to the shipped default of its language, as ``dialcheck.check(d, model="default")``
    does (rerank ran the English default on a Chinese conversation).

    >>> model_option("default"), model_option("runs/mine")
    (None, 'runs/mine')
    """
    from ..api import names_default

    return None if names_default(value) else value


def model_language_of(args: argparse.Namespace) -> str | None:
    """The language ``--model`` was trained on (``api.model_language``); None without ``--model`` or when it is
    unknown."""
    if args.model is None:
        return None
    from ..api import model_language

    return model_language(args.model)


def model_warning(
    args: argparse.Namespace,
    language: str,
    dialogues: Sequence[Any],
    names: Sequence[str],
    total: int,
    instead: str | None = None,
    alone: str | None = "the dialogue",
    of: str = "",
    show: bool = True,
) -> list[int]:
    """Print on stderr the warning (``api.foreign_warning``, in the command line's words: "set --model to ...")
    naming the ``dialogues``
    (``names[i]`` of ``total``; ``alone`` when ``total`` is 1, None: by its name; ``of``: their file, " of FILE") that
    hold turns in a language ``--model`` (trained on ``language``) does not read, and their scripts; returns their
    indices. ``instead``: what to do for a command that does not route them by language when ``--model`` is left
    out. Without ``show``, only the indices (a command that has warned once already)."""
    from ..api import CLI_MODEL, foreign_warning, reads_others

    if "_reads_others" not in vars(args):  # its config (a cascade's, a router's stages too) read once a run, not a line
        args._reads_others = reads_others(args.model)  # unstructured, speakers "all": reads a system prompt too
    others = args._reads_others
    if not show:  # only which: no warning composed for each foreign line after the first
        from ..language import foreign_turns

        return [i for i, d in enumerate(dialogues) if foreign_turns(d, language, not others)]
    name = f"--model {args.model}"
    idx, text = foreign_warning(
        name, language, dialogues, names, total, "Leave out --model", instead, alone, of, CLI_MODEL, others
    )
    if text is not None:
        print("dialcheck: warning: " + text, file=sys.stderr)
    return idx


def routed_warning(
    args: argparse.Namespace,
    dialogues: Sequence[Any],
    names: Sequence[str] | None = None,
    total: int | None = None,
    instead: str | None = None,
    routes: Sequence[str] | None = None,
    show: bool = True,
    of: str = "",
) -> list[int]:
    """Without ``--model``: print on stderr the warning (``api.routed_warnings``, in the command line's words)
    naming the ``dialogues`` (``names[i]`` of ``total``) routed to a shipped default that was not trained on their
    script (a Korean, Russian or Arabic dialogue to the English default), which are checked all the same; returns
    their indices. ``routes``: each dialogue's shipped default (``api.route``, by default) or the one a command that
    routes none uses for all; ``of`` follows the names (" of FILE"). Without ``show``, only the indices (a command that
    has warned once already)."""
    if args.model is not None or not dialogues:
        return []
    from ..api import CLI_MODEL, route, routed_gaps, routed_warnings

    routes = [route(d) for d in dialogues] if routes is None else routes
    if not show:  # only which: no warning composed for each foreign line after the first
        return sorted(i for idx in routed_gaps(dialogues, routes).values() for i in idx)
    found: list[int] = []
    for idx, text in routed_warnings(dialogues, routes, names, total, instead, of, pass_model=CLI_MODEL):
        print("dialcheck: warning: " + text, file=sys.stderr)
        found += idx
    return sorted(found)


def writable_folder(path: str | Path, name: str) -> None:
    """Refuse an output folder ``name`` that cannot be made or written, before any work: a file, a path under a
    file, or under a folder this user cannot write to (it would fail only when the first result is saved)."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise InputError(f"{name}: is a file; give a folder", str(path))
    existing = p
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise InputError(f"{name}: {existing} is a file, so no folder can be made under it", str(path))
    if not os.access(existing, os.W_OK | os.X_OK):
        raise InputError(f"{name}: cannot be written here (permission denied on {existing})", str(path))


def readable_weights(folder: str | Path, name: str) -> None:
    """Refuse a model folder ``name`` whose safetensors files are damaged (cut short by an interrupted copy or
    download, or not safetensors at all), before any work: read later, such a file stops the command with a
    traceback from the safetensors library. Only each file's header and length are read."""
    from safetensors import safe_open

    from ..detectors.modeling import damaged_weights

    p = Path(folder)
    if not p.is_dir():
        return  # the command says what is wrong with the folder itself
    for f in sorted(p.glob("*.safetensors")):
        try:
            with safe_open(str(f), framework="pt"):
                pass
        except Exception as e:  # SafetensorError, or an OSError reading it
            raise InputError(damaged_weights(e, name), str(f)) from None


def json_document(
    lines: Iterable[bytes], is_records: Callable[[Any], bool], is_record: Callable[[Any], bool] = lambda v: True
) -> str | None:
    """Whether ``lines`` (an input's, read as they come) are one JSON document where JSON Lines are read: None
    when they are JSON Lines (or hold nothing), else what the document is: ``"records"``, a list of records
    (``is_records`` of it); ``"record"``, one record (``is_record``) written over several lines; or, for one that
    is neither (a list of numbers, where objects are read), what it holds, ``"a list of ints"``: converted, it
    would be no record a line either. Decided as ``score`` and ``probe`` both read it, before any record is: a
    first line that is a JSON value of its own is JSON Lines, unless it is a list of records and the only line;
    else a first line that opens no object or list, or a second line that is a JSON value after a first line that
    is more than a lone bracket (JSON Lines whose first line is broken), is JSON Lines; else the text is read whole,
    and is a document if it parses. A damaged ``.gz`` is read as far as it goes; the reader of its lines reports it.
    Only the lines the decision needs are read: the first one or two of JSON Lines.

    >>> objects = lambda v: isinstance(v, list) and bool(v) and all(isinstance(x, dict) for x in v)
    >>> def kind(text):
    ...     return json_document(text.encode().splitlines(keepends=True), objects, lambda v: isinstance(v, dict))
    >>> kind('[{"u1": "a"},\\n {"u1": "b"}]'), kind('[{"u1": "a"}, {"u1": "b"}]'), kind('{\\n "u1": "a"\\n}')
    ('records', 'records', 'record')
    >>> kind('[\\n 1,\\n 2.5\\n]'), kind('[\\n [1],\\n {}\\n]'), kind('[\\n]')
    ('a list of ints and floats', 'a list of lists and objects', 'an empty list')
    >>> kind('{"u1": "a"}\\n{"u1": "b"}'), kind('{"u1": \\n{"u1": "b"}'), kind(""), kind('[1]\\n[2]')
    (None, None, None, None)
    >>> kind('[\\n {"u1": "a"}\\n]'), kind('[\\n{"u1": "a"}\\n{"u1": "b"}')
    ('records', None)
    """
    from ..io import _parses

    lines = iter(lines)
    nonblank = (ln for ln in lines if ln.strip())
    try:
        first = next(nonblank, b"").removeprefix(b"\xef\xbb\xbf")  # a byte-order mark is fine
        if not first.strip():
            return None
        try:
            value = json.loads(first)
        except (ValueError, RecursionError):
            if not first.lstrip().startswith((b"[", b"{")):
                return None
            second = next(nonblank, None)
            # JSON Lines whose first line is broken; a lone bracket opens a document's list, not a broken record
            if second is not None and _parses(second) and first.strip() not in (b"[", b"{"):
                return None
            try:  # read whole only when its first two lines are no JSON values on their own
                value = json.loads(first + (second or b"") + b"".join(lines))
            except (ValueError, RecursionError):
                return None
            if is_records(value):
                return "records"
            return "record" if is_record(value) else _held(value)
        return "records" if is_records(value) and next(nonblank, None) is None else None
    except InputError:  # a damaged .gz
        return None


def _held(value: Any) -> str:
    """What a JSON document that holds no records holds, in a few words.

    >>> _held([1, "a", 2]), _held([None]), _held(True)
    ('a list of ints and strings', 'a list of nulls', 'a JSON boolean')
    """
    from ..io import json_type, plural_of

    if not isinstance(value, list):
        return f"a JSON {json_type(value)}"
    if not value:
        return "an empty list"
    return "a list of " + " and ".join(plural_of(t) for t in dict.fromkeys(map(json_type, value)))


def json_document_error(path: str, document: str, reads: str) -> InputError:
    """The one error for an input that is a JSON document where JSON Lines are read (:func:`json_document`'s
    ``document``): what the command reads (``reads``) and how to convert the file (``jq``, or plain Python), or
    pipe standard input (``-``) through ``jq``. Read line by line it gave a bad line per line, or one bad record.
    A document that holds no records (``[1, 2]`` where objects are read) gets no conversion, which would make no
    record of it either: it is told what the file holds instead."""
    from ..io import input_name

    if document not in ("records", "record"):
        return InputError(f"a JSON document holding {document}, not JSON Lines: {reads}", input_name(path))
    many = document == "records"
    if path == "-":
        jq = "jq -c '.[]'" if many else "jq -c ."
        return InputError(f"a JSON document, not JSON Lines: {reads}; pipe it through {jq}", input_name(path))
    jq_cmd, py_cmd = jsonl_conversion(path, many)
    return InputError(f"a JSON document, not JSON Lines: {reads}; convert it with: {jq_cmd}, or: {py_cmd}", path)


def json_lines(
    lines: Iterable[bytes], path: str, is_records: Callable[[Any], bool], is_record: Callable[[Any], bool], reads: str
) -> Iterator[bytes]:
    """``lines`` (an input's, read as they come: a file's or standard input's) once :func:`json_document`'s check
    has been made on them, which raises :func:`json_document_error` (``reads``: what the command reads) for a JSON
    document. The input is read once: the lines the check read (the first one or two of JSON Lines) are given
    again, then the rest as they come, so a pipe that is still being written is streamed, not read whole first. A
    damaged ``.gz`` met by the check is raised after the lines read before it, where its reader raises it.

    >>> lines = json_lines([b'{"u1": "a"}\\n', b'{"u1": "b"}\\n'], "in.jsonl", lambda v: False, lambda v: False, "")
    >>> list(lines)
    [b'{"u1": "a"}\\n', b'{"u1": "b"}\\n']
    """
    raw = iter(lines)
    read: list[bytes] = []
    broke: list[InputError] = []

    def reading() -> Iterator[bytes]:
        try:
            for line in raw:
                read.append(line)
                yield line
        except InputError as e:  # json_document reads no further; the error is the reader's, in its place
            broke.append(e)
            raise

    document = json_document(reading(), is_records, is_record)
    if document is not None:
        close = getattr(raw, "close", None)
        if close is not None:  # a file's reader: closed now, not when it is collected
            close()
        raise json_document_error(path, document, reads)

    def rest() -> Iterator[bytes]:
        yield from read
        if broke:
            raise broke[0]
        yield from raw

    return rest()


def jsonl_conversion(path: str, many: bool) -> tuple[str, str]:
    """The shell commands (jq, then plain Python) that convert the JSON document ``path`` (``many``: a list of
    records, else one pretty-printed record; ``.gz``: read through gzip) to JSON Lines, written to a ``.jsonl`` name
    beside it that names no existing file (nor ``path``): pasting a hint must never overwrite a file of the user's.

    >>> jsonl_conversion("no/such/logs.json", True)[0]
    "jq -c '.[]' no/such/logs.json > no/such/logs.jsonl"
    """
    p = Path(path)
    gz = p.name.lower().endswith(".gz")
    base = p.name[: -3 if gz else None].removesuffix(".jsonl").removesuffix(".json")
    names = itertools.chain(
        [f"{base}.jsonl", f"{base}.lines.jsonl"], (f"{base}.lines-{n}.jsonl" for n in itertools.count(2))
    )
    target = next(t for t in map(p.with_name, names) if t.name != p.name and not os.path.lexists(t))
    src, dst = shlex.quote(path), shlex.quote(str(target))
    jq = "jq -c '.[]'" if many else "jq -c ."
    py = "[print(json.dumps(d)) for d in json.load(sys.stdin)]" if many else "print(json.dumps(json.load(sys.stdin)))"
    jq_cmd, py_cmd = (f"gzip -dc {src} | {jq}", f"gzip -dc {src} | python") if gz else (f"{jq} {src}", "python")
    return f"{jq_cmd} > {dst}", f"{py_cmd} -c 'import json, sys; {py}'{'' if gz else f' < {src}'} > {dst}"
