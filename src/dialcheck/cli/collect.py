"""``dialcheck collect STEP ...``: build a contradiction collection (Sato et al. 2024) step by step.

    dialcheck collect contexts --dataset decode.dev.v1 --limit 40 --top-k 8 --random-k 8 --out ctx.jsonl
    dialcheck collect responses --contexts ctx.jsonl --generator greedy=SmolLM2-135M-Instruct:greedy \\
        --generator sample=SmolLM2-135M-Instruct:nucleus1 --out replies.jsonl
    dialcheck collect export --replies replies.jsonl --out tasks.csv --rows-per-task 5
    dialcheck collect aggregate --replies replies.jsonl --labels ann1.csv ann2.csv ann3.csv --out labelled.jsonl
    dialcheck collect quiz --gold quiz_gold.csv --answers answers.csv
    dialcheck collect released collection.jsonl --out labelled.jsonl
    dialcheck collect logo --replies labelled.jsonl --base all-MiniLM-L6-v2 --out logo.json
    dialcheck collect analyse --contexts ctx.jsonl --replies labelled.jsonl

``autolabel`` lets a detector stand in for annotators (for trying the pipeline; not a human judgement).
``contexts`` and ``responses`` keep each finished batch beside ``--out`` (``OUT.part``, ``OUT.resume.json``):
an interrupted run continues with ``--resume``, and writes what an uninterrupted run writes.
Every file is JSONL of the records in :mod:`dialcheck.collection` unless its suffix says CSV.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..io import FirstLines, counted, input_name, output_name, write_jsonl
from .common import (
    DATA_DIR_HELP,
    add_threads_option,
    check_outputs,
    http_url,
    nonnegative_float,
    nonnegative_int,
    open_checkpoint,
    open_unit_float,
    positive_int,
    raise_every,
    refuse_resume_without_file,
    seed_number,
    set_threads,
    unit_float,
)

HELP = "build contradiction collections: contexts by FQness, replies, annotation, LOGO, analysis"

STEPS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]]] = {}


def step(
    name: str, help: str
) -> Callable[[Callable[[argparse.ArgumentParser], None]], Callable[[argparse.ArgumentParser], None]]:
    def deco(add: Callable[[argparse.ArgumentParser], None]) -> Callable[[argparse.ArgumentParser], None]:
        STEPS[name] = (help, add, globals()[f"run_{name}"])
        return add

    return deco


def add_parser(sub: Any) -> None:
    p = sub.add_parser("collect", help=HELP, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    steps = p.add_subparsers(dest="step", metavar="STEP", required=True)
    for name, (help_, add_arguments, fn) in STEPS.items():
        k = steps.add_parser(name, help=help_, description=help_)
        add_arguments(k)
        k.set_defaults(func=fn)


def _ints(s: str, name: str) -> tuple[int, ...]:
    """Distinct whole numbers of at least 1 (``--distances``): 0, a negative one or none at all said "no context ends
    in a question at the requested distances", and one given twice made every context of it twice."""
    try:
        values = tuple(int(x) for x in s.split(",") if x.strip())
    except ValueError:
        raise InputError(f"{name}: expected comma-separated integers, got {s!r}") from None
    if not values:
        raise InputError(f"{name}: no number in {s!r} (e.g. 1,3,5)")
    if min(values) < 1:
        raise InputError(
            f"{name}: each must be at least 1 (turns from the referent to the question), got {min(values)}"
        )
    twice = next((v for i, v in enumerate(values) if v in values[:i]), None)
    if twice is not None:
        raise InputError(f"{name}: {twice} is given twice (each context would be collected twice)")
    return values


def _say(msg: str) -> None:
    print(f"dialcheck: {msg}", file=sys.stderr)


def _summary_stream(out: str | None) -> Any:
    """Where a step prints its JSON summary: standard output, unless ``--out -`` gave that to the records."""
    return sys.stderr if out == "-" else sys.stdout


# -- resuming (contexts, responses) --------------------------------------------------------------------
def _add_resume_option(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument(
        "--resume",
        action="store_true",
        help=f"continue an interrupted run into the same --out: the {what} it finished (kept in OUT.part, with "
        "OUT.resume.json) are not made again, and the output is the one an uninterrupted run writes (give the "
        "same options, --threads included: with --threads 0 the interrupted run's count is that of its machine)",
    )


def _no_resume_to_stdout(args: argparse.Namespace) -> None:
    refuse_resume_without_file(args.out, args.resume)


def _model_id(name: str | None) -> str | None:
    """A model as given (a name, or None for the default), a local folder by its absolute path."""
    return str(Path(name).resolve()) if name and Path(name).exists() else name


def _threads(n: int) -> int:
    """The torch threads a run computes with: ``--threads``, or for 0 torch's default (the cores of this machine).
    A resume is refused with another count, as with another --batch-size: a reduction split over another number
    of threads adds in another order, and a score or a sampled token may follow the last bit."""
    import torch

    return n or int(torch.get_num_threads())


def _checkpoint(args: argparse.Namespace, settings: dict[str, Any], what: str) -> Any:
    """The work files beside ``--out`` (None for standard output, /dev/null or a pipe), read before any model is
    loaded (:func:`~dialcheck.cli.common.open_checkpoint`). A setting an earlier record lacks is --threads, on which
    only the last digits of a sum depend."""
    return open_checkpoint(args.out, args.resume, settings, what, "collecting", drift="in the last digits")


def _started(cp: Any) -> Any:
    """The checkpoint, begun afresh unless it is being resumed (once the models are loaded)."""
    if cp is not None and not cp.resumed:
        cp.start()
    return cp


# -- contexts -----------------------------------------------------------------------------------------
def run_contexts(args: argparse.Namespace) -> int:
    from ..collection import FQnessScorer, candidate_contexts, select_random, select_top_k, write_records
    from ..collection.checkpoint import fingerprint

    distances = _ints(args.distances, "--distances")
    _no_resume_to_stdout(args)
    if not args.top_k and not args.random_k:  # else the LM scores every candidate and nothing is written
        raise InputError("--top-k 0 and --random-k 0 select no context: give --top-k N and/or --random-k N")
    check_outputs([(args.out, "--out"), (args.all_scores, "--all-scores")], [(args.input, "--input")])
    if args.input:
        from ..io import read_dialogues

        dialogues, errors = [], []
        once = FirstLines("contexts are named by their dialogue's id: give each dialogue its own")
        for rec in read_dialogues(args.input):
            if rec.error is not None:  # a batch over chat logs: a bad record is skipped and named, as score does
                errors.append(rec.error)
                continue
            key = rec.raw_id or f"{Path(args.input).stem}#{rec.line}"
            # a JSON list's dialogue by its position counted from 1, as read_dialogues names a bad one (rec.line
            # counts from 0 there: the second dialogue was "dialogue 1")
            here = f"line {rec.at_line}" if rec.at_line is not None else f"dialogue {rec.line + 1}"
            problem = once.problem(key, here, rec.raw_id_key)  # its contexts would take the ids of the first one's
            if problem:
                at = rec.at_line  # "FILE, line 2: ...", as the reader names a bad line
                raise InputError(problem if at is not None else f"{here}: {problem}", input_name(args.input), at)
            dialogues.append((key, rec.dialogue))
        if not dialogues:
            raise_every(errors, len(errors), "dialogues", input_name(args.input), "collected")
        for e in errors:
            _say(f"skipped: {e}")
        if errors:
            rest = "the other is" if len(dialogues) == 1 else f"the other {len(dialogues)} are"
            _say(f"skipped {counted(len(errors), 'bad record')} of {input_name(args.input)}; {rest} read")
    else:
        from ..datasets import load_dataset

        dialogues = [
            (e.id or f"{args.dataset}#{i}", e.dialogue) for i, e in enumerate(load_dataset(args.dataset, args.data_dir))
        ]
    if args.limit:
        dialogues = dialogues[: args.limit]
    cands = [
        c
        for key, d in dialogues
        for c in candidate_contexts(
            d, distances, source=key, prefix=key, history=args.history, reply_speaker=args.reply_speaker
        )
    ]
    _say(
        f"{counted(len(cands), 'candidate context')} from {counted(len(dialogues), 'dialogue')} "
        f"({dict(Counter(c.distance for c in cands))})"
    )
    if not cands:
        speakers = sorted({t.speaker for _, d in dialogues for t in d.turns})
        if args.reply_speaker is not None and args.reply_speaker not in speakers:  # not a word of why before
            raise InputError(
                f"--reply-speaker {args.reply_speaker}: no turn of the dialogues is said by {args.reply_speaker!r} "
                f"(their speakers: {', '.join(map(repr, speakers[:8]))}{' ...' if len(speakers) > 8 else ''})"
            )
        what = f" for {args.reply_speaker!r} to answer" if args.reply_speaker is not None else ""
        raise InputError(f"no context ends in a question at the requested distances{what}")
    settings = {  # what decides the scores: the selection after them may change on resuming
        "step": "collect contexts",
        "candidates_sha256": fingerprint(c.to_dict() for c in cands),
        "lm": _model_id(args.lm),
        "batch_size": args.batch_size,
        "threads": _threads(args.threads),
    }
    checkpoint = _checkpoint(args, settings, "FQness score")
    set_threads(args.threads)
    scorer = FQnessScorer.load(args.lm, batch_size=args.batch_size)
    scored = scorer.score(cands, show_progress_bar=not args.no_progress, checkpoint=_started(checkpoint))
    if args.all_scores:
        write_records(args.all_scores, scored)
    top = select_top_k(scored, args.top_k, args.per_dialogue) if args.top_k else []
    rnd = select_random(scored, args.random_k, args.seed, exclude=[c.id for c in top]) if args.random_k else []
    n = write_records(args.out, [*top, *rnd])
    if checkpoint is not None:
        checkpoint.finish()
    _say(f"wrote {counted(n, 'context')} ({len(top)} by FQness, {len(rnd)} random) to {output_name(args.out)}")
    return 0


@step("contexts", "pick contexts that end in a follow-up question: FQness top-k (and random) per distance")
def _add_contexts(p: argparse.ArgumentParser) -> None:
    src = p.add_mutually_exclusive_group()
    src.add_argument("--dataset", default="decode.dev.v1", help="registered dataset (default decode.dev.v1)")
    src.add_argument("--input", default=None, help="your dialogues (JSON/JSONL, as for `dialcheck check`)")
    p.add_argument("--data-dir", default=None, help=DATA_DIR_HELP)
    p.add_argument("--limit", type=nonnegative_int, default=0, help="first N dialogues only (default 0: all)")
    p.add_argument("--distances", default="1,3,5", help="turns from referent to question (default 1,3,5)")
    p.add_argument(
        "--history",
        action="store_true",
        help="keep the turns before the referent: generators and detectors see them (FQness does not)",
    )
    p.add_argument("--reply-speaker", default=None, help="only contexts this speaker answers (e.g. bot, system)")
    p.add_argument(
        "--top-k",
        type=nonnegative_int,
        default=10,
        help="contexts per distance by FQness (default 10; 0: none, only the --random-k ones)",
    )
    p.add_argument(
        "--per-dialogue", type=nonnegative_int, default=0, help="at most N top contexts per dialogue (0 = any)"
    )
    p.add_argument(
        "--random-k", type=nonnegative_int, default=0, help="also N random contexts per distance, for comparison"
    )
    p.add_argument("--seed", type=seed_number, default=0)
    p.add_argument("--lm", default=None, help="causal LM name or local folder (default SmolLM2-135M-Instruct)")
    p.add_argument("--batch-size", type=positive_int, default=16)
    add_threads_option(p)
    p.add_argument("--all-scores", default=None, help="also write every scored candidate here")
    p.add_argument("--out", "-o", required=True, help="JSONL of contexts ('-': standard output)")
    _add_resume_option(p, "FQness scores")
    p.add_argument("--no-progress", action="store_true")


# -- responses ----------------------------------------------------------------------------------------
def _parse_generator(spec: str) -> tuple[str, str, str]:
    name, sep, rest = spec.partition("=")
    if not sep or not name or not rest:
        raise InputError(f"--generator: expected NAME=LM[:DECODING], got {spec!r}")
    lm, _, decoding = rest.rpartition(":") if ":" in rest else (rest, "", "greedy")
    return name, lm or rest, decoding or "greedy"


def _endpoint_spec(spec: str) -> str:
    """An argparse type: ``NAME=URL,MODEL[,DECODING]`` with an http(s) URL, checked when the command line is read."""
    parts = spec.split(",")
    if len(parts) < 2 or "=" not in parts[0] or not parts[1]:
        raise argparse.ArgumentTypeError(f"expected NAME=URL,MODEL[,DECODING], got {spec!r}")
    http_url(parts[0].split("=", 1)[1])
    return spec


def run_responses(args: argparse.Namespace) -> int:
    from ..collection import CollectionContext, GeneratorSpec, collect_responses, read_records, write_records
    from ..collection.checkpoint import fingerprint
    from ..generation.nbest import DecodingConfig, NBestGenerator

    _no_resume_to_stdout(args)
    check_outputs([(args.out, "--out")], [(args.contexts, "--contexts")])
    contexts = read_records(args.contexts, CollectionContext)
    if not args.generator and not args.endpoint:
        raise InputError("give at least one --generator or --endpoint")
    local = [_parse_generator(g) for g in args.generator or []]
    remote = [(*e.split(",")[0].split("=", 1), *e.split(",")[1:]) for e in args.endpoint or []]
    names = Counter(spec[0] for spec in [*local, *remote])
    twice = [name for name, k in names.items() if k > 1]
    if twice:  # a name is the replies' id suffix and their LOGO group: a second one would replace the first's
        raise InputError(
            f"--generator/--endpoint: the name {twice[0]!r} is given {names[twice[0]]} times; give each generator "
            "its own NAME (it names its replies, CONTEXT/NAME, and its group in collect logo)"
        )
    # every decoding read before any LM is loaded: a typo fails at once
    local_cfgs = [DecodingConfig.parse(d, max_new_tokens=args.max_new_tokens, seed=args.seed) for _, _, d in local]
    remote_cfgs = [
        DecodingConfig.parse(r[3] if len(r) > 3 else "nucleus1", max_new_tokens=args.max_new_tokens) for r in remote
    ]
    picks = [args.most_contradictory and cfg.n > 1 for cfg in [*local_cfgs, *remote_cfgs]]
    settings = {  # what decides the replies
        "step": "collect responses",
        "contexts_sha256": fingerprint(c.to_dict() for c in contexts),
        "batch_size": args.batch_size,
        "generators": [
            *(
                {"name": name, "lm": _model_id(lm), "decoding": asdict(cfg)}
                for (name, lm, _), cfg in zip(local, local_cfgs, strict=True)
            ),
            *(
                {"name": r[0], "endpoint": r[1], "model": r[2], "decoding": asdict(cfg)}
                for r, cfg in zip(remote, remote_cfgs, strict=True)
            ),
        ],
        "most_contradictory": picks,
        "detector": _model_id(args.model) if any(picks) else None,
        "threads": _threads(args.threads) if local or any(picks) else None,  # endpoints compute elsewhere
    }
    checkpoint = _checkpoint(args, settings, "reply")
    set_threads(args.threads)
    specs = []
    loaded: dict[str, Any] = {}
    for (name, lm, _), cfg in zip(local, local_cfgs, strict=True):
        if lm not in loaded:
            loaded[lm] = NBestGenerator.load(lm)
        specs.append(GeneratorSpec(name, loaded[lm], cfg, args.most_contradictory and cfg.n > 1))
    for (name, url, model, *_), cfg in zip(remote, remote_cfgs, strict=True):
        from ..generation.openai import OpenAIChatGenerator

        specs.append(GeneratorSpec(name, OpenAIChatGenerator(url, model), cfg, args.most_contradictory and cfg.n > 1))
    detector = None
    if any(s.pick_most_contradictory for s in specs):
        from ..api import load

        detector = load(args.model)
    replies = collect_responses(
        contexts,
        specs,
        detector,
        args.batch_size,
        show_progress_bar=not args.no_progress,
        checkpoint=_started(checkpoint),
    )
    n = write_records(args.out, replies)
    if checkpoint is not None:
        checkpoint.finish()
    _say(f"wrote {counted(n, 'reply')} from {counted(len(specs), 'generator')} to {output_name(args.out)}")
    return 0


@step("responses", "collect one reply per context from each generator")
def _add_responses(p: argparse.ArgumentParser) -> None:
    p.add_argument("--contexts", required=True, help="contexts from `collect contexts`")
    p.add_argument(
        "--generator",
        action="append",
        help="NAME=LM[:DECODING], e.g. greedy=SmolLM2-135M-Instruct:greedy or s=./my-lm:nucleus10 (repeatable)",
    )
    p.add_argument(
        "--endpoint",
        action="append",
        type=_endpoint_spec,
        help="NAME=URL,MODEL[,DECODING] of an OpenAI-compatible endpoint (URL: http:// or https://)",
    )
    p.add_argument(
        "--most-contradictory",
        action="store_true",
        help="among n-best candidates keep the one the detector finds most contradictory (appendix D)",
    )
    p.add_argument("--model", "-m", default=None, help="detector for --most-contradictory (default: shipped)")
    p.add_argument("--max-new-tokens", type=positive_int, default=32)
    p.add_argument("--seed", type=seed_number, default=0)
    p.add_argument("--batch-size", type=positive_int, default=4)
    add_threads_option(p)
    p.add_argument("--out", "-o", required=True, help="JSONL of replies ('-': standard output)")
    _add_resume_option(p, "replies")
    p.add_argument("--no-progress", action="store_true")


# -- autolabel ----------------------------------------------------------------------------------------
def run_autolabel(args: argparse.Namespace) -> int:
    from ..api import load
    from ..collection import CollectedReply, label_with_detector, read_records, write_records

    check_outputs([(args.out, "--out")], [(args.replies, "--replies")])
    replies = read_records(args.replies, CollectedReply)
    set_threads(args.threads)
    det = load(args.model)
    if args.tau is not None:
        det.tau = args.tau
    labelled = label_with_detector(replies, det)
    write_records(args.out, labelled)
    k = sum(bool(r.label) for r in labelled)
    _say(f"detector stand-in labels (not human annotation): {k} of {counted(len(labelled), 'reply')} contradictory")
    return 0


@step("autolabel", "label replies with a detector standing in for annotators (not a human judgement)")
def _add_autolabel(p: argparse.ArgumentParser) -> None:
    p.add_argument("--replies", required=True)
    p.add_argument("--model", "-m", default=None, help="detector folder (default: the shipped English one)")
    p.add_argument("--tau", type=unit_float, default=None, help="decision threshold in [0, 1] (default: the model's)")
    add_threads_option(p)
    p.add_argument("--out", "-o", required=True, help="JSONL of labelled replies ('-': standard output)")


# -- export / aggregate / quiz ------------------------------------------------------------------------
def run_export(args: argparse.Namespace) -> int:
    from ..collection import CollectedReply, export_tasks, read_records

    check_outputs([(args.out, "--out")], [(args.replies, "--replies")])
    replies = read_records(args.replies, CollectedReply)
    tasks = export_tasks(replies, args.out, args.rows_per_task, not args.no_shuffle, args.seed)
    _say(f"wrote {counted(len(replies), 'row')} in {counted(tasks, 'task')} to {output_name(args.out)}")
    return 0


@step("export", "write annotation tasks (CSV or JSONL by suffix): context, referent utterance, reply")
def _add_export(p: argparse.ArgumentParser) -> None:
    p.add_argument("--replies", required=True)
    p.add_argument("--rows-per-task", type=positive_int, default=5)
    p.add_argument("--no-shuffle", action="store_true")
    p.add_argument("--seed", type=seed_number, default=0)
    p.add_argument("--out", "-o", required=True, help="tasks as CSV (.csv) or JSONL (any other name; '-': stdout)")


def run_aggregate(args: argparse.Namespace) -> int:
    from ..collection import (
        CollectedReply,
        aggregate,
        apply_aggregation,
        kappa_from_labels,
        read_labels,
        read_records,
        write_records,
    )

    if args.replies and not args.out:
        raise InputError("--replies writes the labelled replies: give --out FILE (or --out - for standard output)")
    check_outputs([(args.out, "--out")], [*((f, "--labels") for f in args.labels), (args.replies, "--replies")])
    if args.min_contradictory > args.min_annotators:
        raise InputError(
            f"--min-contradictory {args.min_contradictory} is more than --min-annotators {args.min_annotators}: "
            f"an item with {args.min_annotators} labels could never be contradictory"
        )
    errors: list[InputError] = []  # every bad label named before any is aggregated (one skipped changes a vote)
    labels = read_labels(args.labels, errors=errors)
    raise_every(errors, len(labels) + len(errors), "labels", " ".join(args.labels), "aggregated")
    items = aggregate(labels, args.min_annotators, args.min_contradictory)
    if items and all(a.annotators < args.min_annotators for a in items):  # every item discarded: an empty file, exit 0
        most = max(a.annotators for a in items)
        raise InputError(
            f"no item has the {args.min_annotators} labels --min-annotators asks for (the most any has: {most}, from "
            f"{len({lab.annotator for lab in labels})} annotator(s)): give every annotator's labels, or a lower "
            "--min-annotators"
        )
    counts = Counter(
        "discarded" if a.label is None else ("contradictory" if a.label else "non_contradictory") for a in items
    )
    summary: dict[str, Any] = {"items": len(items), **counts, "annotators": len({lab.annotator for lab in labels})}
    try:
        kappa, used = kappa_from_labels(labels, args.min_annotators)
        summary.update(fleiss_kappa=round(kappa, 4), kappa_items=used)
    except ValueError as e:  # a number or null in the JSON (a string "n/a (...)" before); why, beside it
        m = args.min_annotators
        why = (
            f"it needs at least 2 labels an item; --min-annotators is {m}"
            if m < 2
            else f"it is taken over the items with exactly {m} labels (--min-annotators), and none has {m}"
            if str(e) == "no subjects"
            else str(e)
        )
        summary.update(fleiss_kappa=None, kappa_items=0, fleiss_kappa_unavailable=why)
        _say(f"Fleiss' kappa: n/a ({why})")
    if args.replies:
        replies = read_records(args.replies, CollectedReply)
        known = {r.id for r in replies}
        strays = [a.item_id for a in items if a.item_id not in known]
        if strays and len(strays) == len(items):  # e.g. the task or row ids of an annotation platform's export
            raise InputError(
                f"no labelled item is a reply of {args.replies}: the labels name {strays[0]!r}, the replies "
                f"{replies[0].id!r} ...; item_id must hold the reply ids (the item_id column of collect export)"
                if replies
                else f"{args.replies} holds no reply to label"
            )
        if strays:
            _say(
                f"warning: {len(strays)} labelled item(s) are no reply of {args.replies} and are left out: "
                f"{strays[0]!r}"
            )
            summary["unmatched_items"] = len(strays)
        kept = apply_aggregation(replies, items, keep_discarded=args.keep_discarded)
        write_records(args.out, kept)
        summary["written"] = len(kept)
    elif args.out:
        write_jsonl(args.out, (a.__dict__ for a in items))
    print(json.dumps(summary), file=_summary_stream(args.out))
    return 0


@step("aggregate", "aggregate annotators' labels (>=2 of 3 contradictory; all agree for non-contradictory)")
def _add_aggregate(p: argparse.ArgumentParser) -> None:
    p.add_argument("--labels", nargs="+", required=True, help="CSV/JSONL files: item_id, [annotator,] label")
    p.add_argument("--replies", default=None, help="replies to label (writes labelled replies to --out)")
    p.add_argument("--min-annotators", type=positive_int, default=3, help="labels an item needs to be kept (default 3)")
    p.add_argument(
        "--min-contradictory",
        type=positive_int,
        default=2,
        help="contradictory labels that make an item contradictory (default 2)",
    )
    p.add_argument("--keep-discarded", action="store_true", help="keep discarded replies (label null)")
    p.add_argument(
        "--out",
        "-o",
        default=None,
        help="labelled replies (with --replies) or the aggregated labels as JSONL ('-': standard output)",
    )


def run_quiz(args: argparse.Namespace) -> int:
    from ..collection import read_labels, score_quiz

    errors: list[InputError] = []  # every bad row of the gold and the answers named before any is scored
    gold = {g.item_id: g.label for g in read_labels([args.gold], annotator="gold", errors=errors)}
    answers = read_labels(args.answers, errors=errors)
    raise_every(errors, len(gold) + len(answers) + len(errors), "rows", " ".join([args.gold, *args.answers]), "scored")
    if gold and answers and not any(a.item_id in gold for a in answers):  # "0 of 0 annotators passed", exit 0 before
        raise InputError(
            f"no answer is to a question of {args.gold}: the answers name {answers[0].item_id!r}, the gold "
            f"{next(iter(gold))!r} ...; item_id must hold the quiz's question ids in both"
        )
    results = score_quiz(answers, gold, args.pass_mark)
    for r in results:
        print(json.dumps({**r.__dict__, "accuracy": round(r.accuracy, 4)}))
    passed = sum(r.passed for r in results)
    _say(f"{passed} of {counted(len(results), 'annotator')} passed (pass mark {args.pass_mark})")
    return 0


@step("quiz", "score annotators' screening-quiz answers against the gold labels")
def _add_quiz(p: argparse.ArgumentParser) -> None:
    p.add_argument("--gold", required=True, help="CSV/JSONL: item_id, label")
    p.add_argument("--answers", nargs="+", required=True, help="CSV/JSONL: item_id, [annotator,] label")
    p.add_argument("--pass-mark", type=unit_float, default=0.8, help="share of right answers to pass (default 0.8)")


# -- released -----------------------------------------------------------------------------------------
def run_released(args: argparse.Namespace) -> int:
    from ..collection import read_released, write_records

    check_outputs([(args.out, "--out")], [(args.file, "FILE")])
    col = read_released(args.file)
    per = Counter((r.generator, r.label) for r in col.replies)
    gens = sorted({g for g, _ in per})
    summary_to = _summary_stream(args.out)
    for g in gens:
        print(
            json.dumps(
                {
                    "generator": g,
                    "contradictory": per[(g, True)],
                    "non_contradictory": per[(g, False)],
                    "discarded": per[(g, None)],
                }
            ),
            file=summary_to,
        )
    _say(f"{counted(len(col), 'reply')} read, {col.skipped_tba} unreleased ([[TBA]]) skipped")
    if args.out:
        write_records(args.out, col.replies)
    return 0


@step("released", "read the released collection format (skips [[TBA]] replies) and summarise it")
def _add_released(p: argparse.ArgumentParser) -> None:
    p.add_argument("file")
    p.add_argument("--out", "-o", default=None, help="write the replies as collection records ('-': standard output)")


# -- logo ---------------------------------------------------------------------------------------------
def _load_replies(args: argparse.Namespace) -> list[Any]:
    from ..collection import CollectedReply, read_records, read_released

    if args.released:
        return list(read_released(args.released).replies)
    if args.replies:
        return read_records(args.replies, CollectedReply)
    raise InputError("give --replies or --released")


def _labelled(args: argparse.Namespace, replies: list[Any]) -> list[Any]:
    """The replies that carry a label, refusing a file without any (unlabelled replies: every row of logo's
    table and analyse's tests would be empty, with exit 0)."""
    labelled = [r for r in replies if r.label is not None]
    if not labelled:
        raise InputError(
            f"{'its one reply is not' if len(replies) == 1 else f'none of its {len(replies)} replies is'} labelled: "
            f"label {'it' if len(replies) == 1 else 'them'} first (collect aggregate --replies, or collect autolabel), "
            "and give the labelled file",
            args.released or args.replies,
        )
    return labelled


def run_logo(args: argparse.Namespace) -> int:
    from ..collection import leave_one_generator_out
    from ..detectors import UtteranceDetector
    from ..training import TrainConfig, train_detector

    check_outputs([(args.out, "--out")], [(args.replies, "--replies"), (args.released, "--released")])
    replies = _labelled(args, _load_replies(args))
    generators = sorted({r.generator for r in replies})
    if len(generators) < 2:
        raise InputError(
            f"leave-one-generator-out needs labelled replies of two generators or more, got {generators[0]!r} only",
            args.released or args.replies,
        )
    adapter = {"type": "lora", "r": args.lora, "alpha": 2 * args.lora, "dropout": 0.1} if args.lora else None
    cfg = TrainConfig(epochs=args.epochs, batch_size=args.batch_size, seed=args.seed, threads=args.threads)

    def make(pairs: list[Any]) -> Any:
        det = UtteranceDetector(base=args.base, adapter=adapter, max_length=128, tau=0.5)
        return train_detector(det, pairs, config=cfg, show_progress_bar=not args.no_progress)

    results = leave_one_generator_out(replies, make, seed=args.seed)
    if not results:  # each generator's replies answer the only contexts the others' do: nothing left to train on
        raise InputError(
            "no generator could be held out: once the contexts of the held-out generator's replies are left out of "
            "training, no labelled pair is left to train on (or to test); label replies to more contexts",
            args.released or args.replies,
        )
    rows = [r.to_dict() for r in results]
    for r in rows:
        print(json.dumps(r))
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return 0


@step("logo", "leave-one-generator-out: train on all generators but one, accuracy on the held-out one")
def _add_logo(p: argparse.ArgumentParser) -> None:
    p.add_argument("--replies", default=None, help="labelled replies (collection records)")
    p.add_argument("--released", default=None, help="or a released collection file")
    p.add_argument("--base", default="all-MiniLM-L6-v2")
    p.add_argument("--lora", type=nonnegative_int, default=16, help="LoRA rank (0 = full fine-tuning)")
    p.add_argument("--epochs", type=nonnegative_float, default=3.0)
    p.add_argument("--batch-size", type=positive_int, default=16)
    p.add_argument("--seed", type=seed_number, default=0)
    add_threads_option(p)
    p.add_argument("--out", "-o", default=None, help="write the table as JSON")
    p.add_argument("--no-progress", action="store_true")


# -- analyse ------------------------------------------------------------------------------------------
def run_analyse(args: argparse.Namespace) -> int:
    import re

    from ..collection import CollectionContext, analyse_feature, contradictions_per_context, read_records
    from ..collection.analysis import FEATURES

    features: list[Any] = []
    for f in args.feature.split(","):
        if f and f not in FEATURES:
            raise InputError(f"--feature: unknown feature {f!r}; known: {', '.join(FEATURES)} (or use --regex)")
        features += [f] if f else []
    for spec in args.regex or []:
        name, sep, pattern = spec.partition("=")
        if not sep:
            raise InputError(f"--regex: expected NAME=PATTERN, got {spec!r}")
        try:
            rx = re.compile(pattern, re.IGNORECASE)
        except re.error as e:
            raise InputError(f"--regex {name}: not a valid regular expression ({e}): {pattern!r}") from None

        def pred(c: CollectionContext, rx: re.Pattern[str] = rx) -> bool:
            return bool(rx.search(c.question))

        if not name.strip():
            raise InputError(f"--regex: the feature needs a name before '=' (NAME=PATTERN), got {spec!r}")
        pred.__name__ = name
        features.append(pred)
    names = [f if isinstance(f, str) else f.__name__ for f in features]
    if not names:  # --feature ',' printed nothing with exit 0
        raise InputError("--feature: no feature to test (known: " + ", ".join(FEATURES) + "; or give --regex)")
    twice = next((n for i, n in enumerate(names) if n in names[:i]), None)
    if twice is not None:  # two rows of one name: which is which?
        raise InputError(f"--feature/--regex: {twice!r} is named twice; give each feature its own name")
    contexts = read_records(args.contexts, CollectionContext)
    replies = _labelled(args, _load_replies(args))
    counts = contradictions_per_context(replies)
    if not any(c.id in counts for c in contexts):  # e.g. the contexts of another collection: every test empty
        raise InputError(
            f"no context of {args.contexts} has a labelled reply in {args.released or args.replies} (contexts "
            f"{contexts[0].id!r} ..., replies to {replies[0].context_id!r} ...)"
            if contexts
            else f"{args.contexts} holds no context"
        )
    for f in features:
        print(json.dumps(analyse_feature(contexts, counts, f, args.alpha, args.equal_var).to_dict()))
    return 0


@step("analyse", "contradictory replies per context with vs without a feature; one-tailed t-test")
def _add_analyse(p: argparse.ArgumentParser) -> None:
    p.add_argument("--contexts", required=True)
    p.add_argument("--replies", default=None, help="labelled replies")
    p.add_argument("--released", default=None)
    p.add_argument("--feature", default="contains_how,declarative_yes_no")
    p.add_argument("--regex", action="append", help="NAME=PATTERN: a feature true when the question matches")
    p.add_argument(
        "--alpha", type=open_unit_float, default=0.01, help="significance level, between 0 and 1 (default 0.01)"
    )
    p.add_argument("--equal-var", action="store_true", help="Student's t-test instead of Welch's")
