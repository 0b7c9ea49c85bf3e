"""``dialcheck probe KIND ...``: build stimulus sets that probe a chatbot or a detector.

Kinds are subcommands registered in :data:`KINDS`; each adds its own options. ``echo`` builds polar
echo questions from NLI pairs (Sato et al. 2022): ENTQ from entailment pairs, CNTQ (negative form) from
contradiction pairs, with the premise as the bot's own earlier turn::

    dialcheck probe echo --source mnli_snli --out echo.jsonl
    dialcheck probe echo --input my_nli.jsonl --out echo.jsonl --unlikelihood ul.jsonl

Input files for ``--input`` are JSONL with ``premise``, ``hypothesis`` and ``label``
(entailment / neutral / contradiction, or e / n / c).

``triggers`` builds CDConv-style second user turns (u2) from (u1, b1) contexts with the trigger methods
of :mod:`dialcheck.probes.triggers` (needs ``pip install "dialcheck[zh]"``)::

    dialcheck probe triggers --input contexts.jsonl --out triggers.jsonl --methods negation,inquire_user
    dialcheck probe triggers --source cdconv.test.v1 --limit 100 --out triggers.jsonl --seed 1

``--language en`` runs the English counterparts (:mod:`dialcheck.probes.triggers_en`; spaCy, and WordNet
for synonym, antonym and paraphrase: ``pip install "dialcheck[spacy,wordnet]"`` and
``apt-get install -y wordnet-base wordnet-sense-index``)::

    dialcheck probe triggers --language en --input contexts.jsonl --out triggers.jsonl

A progress bar counts the contexts (``--no-progress``: none); under ``--language en`` spaCy parses the sentences
of ``--batch-size`` contexts (default 64) in one call, which gives the same triggers about three times faster.
Each finished batch is kept beside ``--out`` as it is made (``OUT.part``, with ``OUT.resume.json``, as ``collect``
keeps them; ``--out -`` is written batch by batch instead): an interrupted run continues with ``--resume`` and the
same command, and writes what an uninterrupted run writes; a resume with other contexts or settings is refused.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from ..errors import InputError
from ..io import (
    FirstLines,
    check_id,
    counted,
    decode_utf8,
    input_lines,
    input_name,
    is_blank,
    json_error,
    json_type,
    labelled_source_name,
    open_input,
    output_name,
    require_file,
    stdin_lines,
    where_named,
    write_jsonl,
)
from .common import (
    DATA_DIR_HELP,
    check_outputs,
    comma_choices,
    json_lines,
    nonnegative_int,
    open_checkpoint,
    positive_int,
    raise_every,
    seed_number,
)

HELP = "build stimulus sets (echo: polar echo questions from NLI pairs; triggers: CDConv trigger methods)"

SOURCES = {
    "mnli_snli": "nli.mnli_snli_samples.3way.v1",
    "anli": "nli.anli.3way.v1",
    "decode": "decode.contradiction_pairs.v1",
}

#: ``--kinds`` of ``probe echo`` and ``nbest``: ENTQ and/or CNTQ, read as a list.
echo_kinds = comma_choices(("ENTQ", "CNTQ"), upper=True)
T = TypeVar("T")

KINDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]]] = {}


def register_kind(
    name: str, help: str, add_arguments: Callable[[argparse.ArgumentParser], None]
) -> Callable[[Callable[[argparse.Namespace], int]], Callable[[argparse.Namespace], int]]:
    """Register a probe kind: ``dialcheck probe NAME`` runs the decorated function."""

    def deco(fn: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
        KINDS[name] = (help, add_arguments, fn)
        return fn

    return deco


def add_parser(sub: Any) -> None:
    p = sub.add_parser("probe", help=HELP, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    kinds = p.add_subparsers(dest="kind", metavar="KIND", required=True)
    for name, (help_, add_arguments, fn) in KINDS.items():
        k = kinds.add_parser(name, help=help_, description=help_)
        add_arguments(k)
        k.set_defaults(func=fn)


def _string(obj: dict[str, Any], key: str, default: str | None = None) -> str:
    """``obj[key]``, which must be a string (``default`` when it is absent and a default is given)."""
    if key not in obj:
        if default is None:
            raise InputError(f"{key}: missing")
        return default
    value = obj[key]
    if not isinstance(value, str):
        raise InputError(f"{key}: expected a string, got {json_type(value)}")
    return value


def read_records(path: str, parse: Callable[[dict[str, Any], int], T], what: str = "records") -> list[T]:
    """``parse(object, line)`` of every JSON object of the JSONL file ``path`` ("-": standard input). Like
    ``check``, every bad line (not UTF-8, not JSON, not an object, a bad field) is named, all but the last on
    stderr, before the file is refused with exit 2; a file without a record is refused too (it was named, so
    building from nothing would be a silent mistake). A JSON document (a list of records, or one record over
    several lines) is refused first, as one error with the command that converts it, as ``score`` refuses one
    (:func:`~dialcheck.cli.common.json_document`). The input is read once, a line at a time
    (:func:`~dialcheck.cli.common.json_lines`)."""
    name = input_name(path)
    # read once, as it comes (a closed standard input is an InputError): the document check and the records read
    # the same lines
    raw = stdin_lines() if path == "-" else input_lines(open_input(require_file(path), path), name)
    lines = json_lines(raw, path, _objects, _object, f"{what} are read one JSON object a line")
    out: list[T] = []
    errors: list[InputError] = []
    total = 0
    try:
        for n, raw_line in enumerate(lines, start=1):
            if not raw_line.strip():
                continue
            total += 1
            try:
                line = decode_utf8(raw_line, name, n)
                try:
                    obj = json.loads(line.rstrip("\r\n"))
                except json.JSONDecodeError as e:
                    raise InputError(json_error(e)) from None
                if not isinstance(obj, dict):
                    raise InputError(f"expected a JSON object, got {json_type(obj)}")
                out.append(parse(obj, n))
            except InputError as e:
                errors.append(e.at(name, n))
    except InputError as e:  # a damaged .gz: after the errors of the lines read before it
        errors.append(e)
    raise_every(errors, total, what, name, "built")
    if not total:
        raise InputError(f"no {what} in it (JSONL: one JSON object a line)", name)
    return out


def _objects(value: Any) -> bool:
    """Whether a JSON value is a list of records (JSON objects): a JSON document of them, never one record."""
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def _object(value: Any) -> bool:
    """Whether a JSON value is one record (a JSON object), written over several lines."""
    return isinstance(value, dict)


def read_nli_file(path: str) -> list[Any]:
    """User NLI pairs (JSONL: premise, hypothesis, label) as :class:`NLIPair` records."""
    from ..datasets.nli3 import NLI_LABELS, NLIPair

    short = {"e": "entailment", "n": "neutral", "c": "contradiction"}
    p = Path(labelled_source_name(path))  # ids "stdin:N" for piped pairs
    once = FirstLines("give each record its own id").check

    def parse(obj: dict[str, Any], n: int) -> Any:
        premise, hypothesis = _string(obj, "premise"), _string(obj, "hypothesis")
        label = short.get(_string(obj, "label"), obj["label"])
        if label not in NLI_LABELS:
            raise InputError(f"label: expected one of {', '.join(NLI_LABELS)}, got {obj['label']!r}")
        pid = once(check_id(obj["id"]), n) if obj.get("id") is not None else f"{p.name}:{n}"
        return NLIPair(premise, hypothesis, label, str(obj.get("source", p.stem)), pid)

    return read_records(path, parse, "NLI pairs")


def build_echo_items(args: argparse.Namespace) -> tuple[Any, Any]:
    """The echo set described by ``--source/--input``, ``--kinds``, ``--per-kind`` and ``--seed``,
    and the full set it was sampled from."""
    from ..datasets import load_dataset
    from ..probes.echo import EchoSet, build_echo_set

    pairs: list[Any] = []
    if args.input:
        pairs.extend(read_nli_file(args.input))
    for s in [x for x in (args.source or "").split(",") if x]:
        if s not in SOURCES:
            raise InputError(f"unknown source {s!r}; use {', '.join(SOURCES)} (or --input FILE)")
        pairs.extend(load_dataset(SOURCES[s], args.data_dir))
    if not pairs:
        raise InputError("no NLI pairs: give --source and/or --input")
    full = build_echo_set(pairs, kinds=args.kinds, max_premise_words=args.max_premise_words)
    if not args.per_kind:
        return full, full
    rng = random.Random(args.seed)
    picked = []
    for k in args.kinds:
        mine = [i for i in full.items if i.kind == k]
        rng.shuffle(mine)
        picked.extend(mine[: args.per_kind])
    return EchoSet(picked, full.skipped), full


def add_echo_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", "-o", required=True, help="JSONL file of stimuli ('-': standard output)")
    p.add_argument("--source", default="", help=f"comma-separated corpora: {', '.join(SOURCES)}")
    p.add_argument(
        "--input", default=None, help="your own NLI pairs (JSONL: premise, hypothesis, label; '-': standard input)"
    )
    p.add_argument(
        "--kinds",
        type=echo_kinds,
        default="ENTQ,CNTQ",
        help="ENTQ (from entailment), CNTQ (from contradiction)",
    )
    p.add_argument("--per-kind", type=nonnegative_int, default=0, help="keep a random N of each kind (default 0: all)")
    p.add_argument("--seed", type=seed_number, default=0)
    p.add_argument(
        "--max-premise-words", type=positive_int, default=30, help="longer premises are skipped (default 30)"
    )
    p.add_argument("--unlikelihood", default=None, help="also write Table 7 unlikelihood samples (JSONL) here")
    p.add_argument("--data-dir", default=None, help=DATA_DIR_HELP)


@register_kind("echo", "polar echo questions (ENTQ/CNTQ) from NLI pairs, Sato et al. 2022", add_echo_arguments)
def run_echo(args: argparse.Namespace) -> int:
    from ..probes.echo import unlikelihood_samples

    if args.unlikelihood and args.unlikelihood == args.out:
        # one stream or one file for both would interleave or overwrite the stimuli
        raise InputError(f"--unlikelihood and --out are both {args.out!r}: give them different destinations")
    check_outputs([(args.out, "--out"), (args.unlikelihood, "--unlikelihood")], [(args.input, "--input")])
    es, full = build_echo_items(args)
    es.save(args.out)
    counts = es.counts()
    print(f"dialcheck: wrote {output_name(args.out)}: {counts['ENTQ']} ENTQ, {counts['CNTQ']} CNTQ", file=sys.stderr)
    if not es.items:  # an empty file with exit 0 read as a success
        print("dialcheck: warning: no echo question was built: every pair was skipped", file=sys.stderr)
    if es.skipped:
        reasons = ", ".join(f"{k} {v}" for k, v in es.skipped.most_common())
        print(f"dialcheck: skipped {counted(sum(es.skipped.values()), 'pair')}: {reasons}", file=sys.stderr)
    if args.unlikelihood:
        samples = unlikelihood_samples(full.items)  # every paired premise, not only the sampled ones
        write_jsonl(args.unlikelihood, (s.to_dict() for s in samples))
        print(
            f"dialcheck: wrote {output_name(args.unlikelihood)}: {counted(len(samples), 'unlikelihood sample')} from "
            f"{counted(len(samples) // 4, 'premise')} that {'has' if len(samples) // 4 == 1 else 'have'} both an ENTQ "
            "and a CNTQ",
            file=sys.stderr,
        )
    return 0


def read_trigger_inputs(path: str, language: str | None = None) -> list[Any]:
    """User contexts (JSONL: ``u1`` required, ``b1`` and ``id`` optional) as :class:`TriggerInput` records;
    with ``language`` (``zh`` or ``en``), a ``u1`` plainly in the other language is refused, and so is one in a
    third script (Japanese, Korean, Cyrillic, ...: :func:`dialcheck.language.turn_script`), whose triggers would
    come out in neither. Every bad line is named before the file is refused (:func:`read_records`). A ``b1`` in
    another language than ``language`` is not refused but warned about on stderr, once (:func:`b1_language_warning`):
    the methods that read u1 still build what they should."""
    from ..language import OTHER_SHARE, ZH_SHARE, cjk_share, foreign_scripts, foreign_turns, turn_script
    from ..probes.triggers import TriggerInput
    from ..schema import Dialogue

    name = Path(labelled_source_name(path)).name  # ids "stdin:N" for piped contexts
    once = FirstLines("give each record its own id").check
    foreign: list[tuple[int, list[str]]] = []  # (line, scripts) of each b1 the builders do not read

    def parse(obj: dict[str, Any], n: int) -> Any:
        u1 = _string(obj, "u1")
        if is_blank(u1):  # white space or invisible characters only ("\u200b"), which str.strip keeps
            raise InputError("u1: empty utterance")
        b1 = _string(obj, "b1", default="")
        script = turn_script(u1)
        if language and script not in (None, "Chinese"):  # not "pass --language en" for Japanese: no rule reads it
            raise InputError(
                f"u1: {script}, but triggers are built for Chinese (--language zh, the default) or English "
                "(--language en) contexts only"
            )
        share = cjk_share(u1)  # else the triggers come out in the other language, silently
        if language == "zh" and share < OTHER_SHARE and any(ch.isalpha() for ch in u1):
            raise InputError(
                "u1: not Chinese, but --language zh (the default) builds Chinese triggers; for English contexts "
                "pass --language en"
            )
        if language == "en" and share >= ZH_SHARE:
            raise InputError("u1: Chinese, but --language en builds English triggers; drop --language en")
        tid = once(check_id(obj["id"]), n) if obj.get("id") is not None else f"{name}:{n}"
        if language and b1.strip():  # read as a detector trained on the language reads a turn (with u1 beside it,
            d = Dialogue.from_texts([u1, b1])  # so a short "OK" after a Chinese u1 is no foreign turn)
            if 1 in foreign_turns(d, language):
                foreign.append((n, foreign_scripts([Dialogue.from_texts([b1])], language)))
        return TriggerInput(u1, b1, tid)

    out = read_records(path, parse, "contexts")
    if foreign and language:
        print(b1_language_warning(language, foreign, len(out), input_name(path)), file=sys.stderr)
    return out


def b1_language_warning(language: str, foreign: Sequence[tuple[int, Sequence[str]]], total: int, source: str) -> str:
    """The stderr warning about contexts whose ``b1`` is in another language than the triggers being built
    (``foreign``: their lines and, for English, the scripts of those b1; ``total``: how many contexts were read).
    They are built all the same: six of the seven methods read u1 only, and their triggers are what they should be;
    inquire_bot, which asks about b1, builds nothing from such a b1, and every trigger of the context follows a bot
    turn in another language (the bot's reply to it means what a reply in a mixed conversation means).

    >>> print(b1_language_warning("en", [(2, ["Chinese"])], 3, "ctx.jsonl"))  # doctest: +NORMALIZE_WHITESPACE
    dialcheck: warning: --language en builds English triggers, but the b1 of line 2 of ctx.jsonl is Chinese:
    inquire_bot, which asks about b1, builds nothing from it, and the other methods' second turns follow a bot turn
    in another language. Give the bot's English reply as b1, or leave b1 out
    """
    many = len(foreign) > 1
    where = where_named([f"line {n}" for n, _ in foreign], total, None, noun="contexts") + f" of {source}"
    scripts = list(dict.fromkeys(s for _, found in foreign for s in found))
    if language == "en":
        wanted, what = "English", (" and ".join(scripts) if scripts else "in another script")
        setting = "--language en"
    else:
        wanted, what, setting = "Chinese", "not Chinese", "--language zh (the default)"
    verb, it = ("are", "them") if many else ("is", "it")
    return (
        f"dialcheck: warning: {setting} builds {wanted} triggers, but the b1 of {where} {verb} {what}: "
        f"inquire_bot, which asks about b1, builds nothing from {it}, and the other methods' second turns follow a "
        f"bot turn in another language. Give the bot's {wanted} {'replies' if many else 'reply'} as b1, or leave b1 out"
    )


def add_trigger_arguments(p: argparse.ArgumentParser) -> None:
    from ..probes.triggers import BATCH_SIZE, METHODS

    p.add_argument(
        "--out", "-o", required=True, help="JSONL file of (u1, b1, u2, method, detail) ('-': standard output)"
    )
    p.add_argument("--input", default=None, help="your contexts (JSONL: u1, optional b1 and id; '-': standard input)")
    p.add_argument(
        "--source",
        default=None,
        help="take the distinct (u1, b1) contexts of a CDConv dataset, e.g. cdconv.test.v1",
    )
    p.add_argument(
        "--methods",
        type=comma_choices(METHODS),
        default=",".join(METHODS),
        help=f"comma-separated (default all): {', '.join(METHODS)}",
    )
    p.add_argument("--seed", type=seed_number, default=0)
    p.add_argument("--limit", type=nonnegative_int, default=0, help="first N contexts only (default 0: all)")
    p.add_argument(
        "--no-know-form", action="store_true", help="inquire_user: plain question, not 你知道…吗 / Do you know ...?"
    )
    p.add_argument("--language", choices=("zh", "en"), default="zh", help="zh (default, CDConv) or en (WordNet)")
    p.add_argument(
        "--dict-dir", default=None, help="--language zh: chinese_dictionary folder (default: in the data directory)"
    )
    p.add_argument(
        "--wordnet-dir", default=None, help="--language en: WordNet dict folder (default /usr/share/wordnet)"
    )
    p.add_argument("--data-dir", default=None, help=DATA_DIR_HELP)
    p.add_argument(
        "--batch-size",
        type=positive_int,
        default=BATCH_SIZE,
        help=f"contexts per batch (default {BATCH_SIZE}): under --language en spaCy parses a batch's sentences "
        "together; the triggers are the same whatever the size",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument(
        "--resume",
        action="store_true",
        help="continue an interrupted run into the same --out: the batches it finished (kept in OUT.part, with "
        "OUT.resume.json) are not built again, and the output is the one an uninterrupted run writes",
    )


@register_kind(
    "triggers",
    "CDConv trigger methods: second user turns that goad a Chinese (or, with --language en, English) chatbot",
    add_trigger_arguments,
)
def run_triggers(args: argparse.Namespace) -> int:
    from ..probes.triggers import ChineseLexicon, TriggerInput, trigger_batches

    # each dictionary option applies to one language; the other language's was dropped without a word (as
    # `train` refuses an option of another --task)
    for option, given, language in (("--dict-dir", args.dict_dir, "zh"), ("--wordnet-dir", args.wordnet_dir, "en")):
        if given is not None and args.language != language:
            what = "the Chinese dictionary" if language == "zh" else "the English WordNet"
            raise InputError(
                f"{option}: an option of --language {language} only ({what}); --language {args.language}"
                f"{' (the default)' if args.language == 'zh' else ''} does not read it"
            )
    check_outputs([(args.out, "--out")], [(args.input, "--input")])
    inputs: list[Any] = []
    if args.input:
        inputs.extend(read_trigger_inputs(args.input, args.language))
    if args.source:
        from ..datasets import load_dataset

        if args.language == "en":
            raise InputError("--source takes a CDConv dataset, which is Chinese; give English contexts with --input")
        if not args.source.startswith("cdconv."):
            raise InputError(f"--source must be a CDConv dataset (cdconv.*), got {args.source!r}")
        seen: dict[tuple[str, str], None] = {}
        for e in load_dataset(args.source, args.data_dir):
            seen.setdefault((e.dialogue.turns[0].text, e.dialogue.turns[1].text), None)
        inputs.extend(TriggerInput(u1, b1, f"{args.source}:{i}") for i, (u1, b1) in enumerate(seen))
    if not inputs:
        raise InputError("no contexts: give --input and/or --source")
    if args.limit:
        inputs = inputs[: args.limit]
    methods = args.methods
    en_lexicon = args.language == "en" and bool({"paraphrase", "synonym", "antonym"} & set(methods))
    zh_lexicon = args.language == "zh" and bool({"paraphrase", "synonym", "antonym", "negation"} & set(methods))
    if zh_lexicon and args.dict_dir is None:
        from ..datasets.base import data_dir

        args.dict_dir = data_dir(args.data_dir) / "chinese_dictionary"
    dictionary = args.wordnet_dir if en_lexicon else args.dict_dir if zh_lexicon else None
    checkpoint = _trigger_checkpoint(args, inputs, dictionary)  # before any dictionary or model is loaded
    lexicon: Any = None
    if en_lexicon:
        from ..probes.triggers_en import WordNetLexicon

        lexicon = WordNetLexicon.load(args.wordnet_dir)
    elif zh_lexicon:
        lexicon = ChineseLexicon.load(args.dict_dir)
    size = args.batch_size
    start, made, skipped = 0, Counter[str](), Counter[str]()
    if checkpoint is not None and checkpoint.resumed:
        start = min(checkpoint.done * size, len(inputs))
        made, skipped = _kept_counts(inputs[:start], methods, checkpoint.rows, checkpoint.rng)
    elif checkpoint is not None:
        checkpoint.start()
    know = not args.no_know_form
    batches = trigger_batches(
        inputs, methods, args.seed, lexicon, know=know, language=args.language, batch_size=size, start=start
    )
    bar = None
    if not args.no_progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(inputs), initial=start, desc="building triggers", unit="context")
    # standard output, a pipe or a device is written as the triggers are made; a file keeps them in OUT.part
    stream: Any = None
    if checkpoint is None:
        stream = sys.stdout if args.out == "-" else open(args.out, "w", encoding="utf-8")  # noqa: SIM115
    try:
        for lo, batch in zip(range(start, len(inputs), size), batches, strict=True):
            rows = [t.to_dict() for t in batch.items]
            made.update(t.method for t in batch.items)
            skipped.update(batch.skipped)
            if checkpoint is not None:
                # each (context, method) has its own seed: no generator to keep; the record keeps the skips so far
                # instead, since a trigger dropped as a repeat leaves no row to count it by (_kept_counts)
                checkpoint.commit(rows, rng={"skipped": dict(skipped)})
            else:
                stream.write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
                stream.flush()
            if bar is not None:
                bar.update(min(size, len(inputs) - lo))
    except BaseException as e:
        if checkpoint is not None and not checkpoint.done:  # nothing finished (spaCy missing, say): no work files
            checkpoint.finish()
        elif checkpoint is not None and isinstance(e, KeyboardInterrupt):
            if bar is not None:
                bar.close()
            _say(
                f"the triggers of {counted(min(checkpoint.done * size, len(inputs)), 'context')} are kept in "
                f"{checkpoint.part.name}: run the same command with --resume to build the rest"
            )
        raise
    finally:
        if stream is not None and stream is not sys.stdout:
            stream.close()
    if bar is not None:
        bar.close()
    if checkpoint is not None:
        with checkpoint.part.open(encoding="utf-8") as part:
            write_jsonl(args.out, (json.loads(line) for line in part))
        checkpoint.finish()
    total = sum(made.values())
    counts = ", ".join(f"{k} {v}" for k, v in made.items())
    print(
        f"dialcheck: wrote {output_name(args.out)}: {counted(total, 'trigger')} from {counted(len(inputs), 'context')}"
        + (f" ({counts})" if counts else ""),
        file=sys.stderr,
    )
    if not total:  # an empty file with exit 0 read as a success
        print("dialcheck: warning: no trigger was built: every method skipped every context", file=sys.stderr)
    if skipped:
        reasons = ", ".join(f"{k} {v}" for k, v in skipped.most_common())
        print(f"dialcheck: skipped: {reasons}", file=sys.stderr)
    return 0


def _say(msg: str) -> None:
    print(f"dialcheck: {msg}", file=sys.stderr)


def _trigger_checkpoint(args: argparse.Namespace, inputs: Sequence[Any], dictionary: Any) -> Any:
    """The work files beside ``--out`` (``OUT.part``, ``OUT.resume.json``: :class:`~dialcheck.collection.checkpoint.
    Checkpoint`, as ``collect`` keeps them; None for standard output or a pipe), opened for ``--resume`` before any
    dictionary or model is loaded: a resume with other contexts or settings is refused, saying what differs, and so is
    a fresh run over an interrupted one's finished work."""
    from dataclasses import asdict

    from ..collection.checkpoint import fingerprint

    settings = {  # what decides the triggers and the batches they are kept in
        "step": "probe triggers",
        "contexts_sha256": fingerprint(asdict(inp) for inp in inputs),
        "language": args.language,
        "methods": list(args.methods),
        "seed": args.seed,
        "know_form": not args.no_know_form,
        "dictionary": str(Path(dictionary).resolve()) if dictionary is not None else None,
        "batch_size": args.batch_size,
        "repeats_dropped": True,  # a record without it kept a paraphrase that repeats another method's u2
    }
    return open_checkpoint(args.out, args.resume, settings, "trigger", "building")


def _kept_counts(
    inputs: Sequence[Any], methods: Sequence[str], rows: Sequence[dict[str, Any]], record: Any = None
) -> tuple[Counter[str], Counter[str]]:
    """What a resumed run's summary counts of the triggers it keeps: how many each method built, and the skips of
    the contexts they were built from, in the order a run meets them, so the summary is the one an uninterrupted run
    prints. The skips are those the interrupted run recorded (``record``, the checkpoint's ``{"skipped": ...}``);
    a record without them (an earlier dialcheck's) has them counted from the rows, each (context, method) building
    one trigger or being skipped."""
    from ..probes.triggers import count_skips

    made = Counter(str(r.get("method")) for r in rows)
    kept = record.get("skipped") if isinstance(record, dict) else None
    if isinstance(kept, dict):
        return made, Counter({str(k): int(v) for k, v in kept.items()})
    built = {(r.get("id"), r.get("method")) for r in rows}
    skipped = count_skips(inputs, methods, lambda _n, inp, m: (inp.id, m) in built)
    return made, skipped
