"""``dialcheck evaluate``: the DECODE benchmark (dev, human-bot, RCT, A2T, raw human-bot); with
``--benchmark citod``, CI-ToD (calendar, navigate, weather test sets, pooled, and the KBI probe); with
``--benchmark cdconv``, CDConv (official and context-disjoint test and dev splits, four categories)."""

from __future__ import annotations

import argparse
import json
import math
import shlex
import sys
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..io import counted, input_name
from .common import (
    DATA_DIR_HELP,
    add_model_options,
    check_outputs,
    comma_choices,
    load_for,
    model_language_of,
    model_warning,
    positive_int,
    routed_warning,
)

HELP = "evaluate a detector on the DECODE (default), CI-ToD or CDConv splits; JSON results and a Markdown table"


def add_parser(sub: Any) -> None:
    from ..evaluation.cdconv import SPLITS as CDCONV_SPLITS
    from ..evaluation.citod import SPLITS as CITOD_SPLITS
    from ..evaluation.decode import SPLITS

    p = sub.add_parser("evaluate", help=HELP, description=HELP)
    add_model_options(p)
    p.add_argument("--benchmark", choices=("decode", "citod", "cdconv"), default="decode", help="default decode")
    p.add_argument(
        "--splits",
        default=None,
        type=comma_choices(
            tuple(dict.fromkeys((*SPLITS, *CITOD_SPLITS, *CDCONV_SPLITS))),
            shown="; ".join(
                f"{name}: {', '.join(known)}"
                for name, known in (("decode", SPLITS), ("citod", CITOD_SPLITS), ("cdconv", CDCONV_SPLITS))
            ),
        ),
        help=f"comma-separated; decode: {', '.join(SPLITS)} (default all); "
        f"citod: {', '.join(CITOD_SPLITS)} (default calendar,navigate,weather,kbi_probe); "
        f"cdconv: {', '.join(CDCONV_SPLITS)} (default test; disjoint_* only for models trained with --split disjoint)",
    )
    p.add_argument(
        "--row-selection",
        choices=("overlap", "none"),
        default=None,
        help="citod: override the model's knowledge-row selection (ablation)",
    )
    p.add_argument(
        "--no-history",
        action="store_true",
        help="citod: leave the dialogue history out at test time (ablation of a model trained with it)",
    )
    p.add_argument(
        "--no-vocabulary",
        action="store_true",
        help="citod: entity checks type values by the table's columns only, without the model's entity "
        "vocabulary (what a new domain without an entity list gets)",
    )
    p.add_argument(
        "--data",
        action="append",
        default=[],
        metavar="FILE",
        help='decode and cdconv: your own labelled dialogues (JSON/JSONL; each a dialogue with "contradiction": '
        'true/false and optional "evidence": [earlier turn indices]; for cdconv each contradiction also needs '
        '"category": intra_sentence, role_confusion or history; a record\'s own "speaker" names the turn labelled, '
        "as in check), reported as a split named after the file; "
        "repeatable; bad records are skipped and reported. Without --splits, only these files are evaluated",
    )
    p.add_argument("--data-dir", default=None, help=DATA_DIR_HELP)
    p.add_argument(
        "--limit",
        type=positive_int,
        default=None,
        help="first N (at least 1) examples per split (quick look); citod's kbi_probe: its first N probe dialogues "
        "(made from the whole test sets, as a full run makes them)",
    )
    p.add_argument("--json", dest="json_out", default=None, help="write the results as JSON here")
    p.add_argument("--markdown", default=None, help="write the Markdown table here")
    p.add_argument("--predictions", default=None, help="write per-example predictions (JSONL) here")
    p.add_argument("--update-card", action="store_true", help="store the results in the model's config and card")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.update_card and args.data:  # refused before any model runs
        raise InputError("--update-card stores benchmark results in the model card; leave out --data")
    if args.update_card and args.limit is not None:
        raise InputError("--update-card stores full-split results in the model card; leave out --limit")
    if args.update_card and (args.int8 or args.onnx):
        raise InputError("--update-card stores the saved model's results; leave out --int8 and --onnx")
    _check_splits(args)
    check_outputs(  # before any model runs: an unwritable path would lose the results
        [(args.predictions, "--predictions"), (args.json_out, "--json"), (args.markdown, "--markdown")],
        [(f, "--data") for f in args.data],
    )
    if args.benchmark == "citod":
        det, evaluator, results, table = _citod(args)
    elif args.benchmark == "cdconv":
        det, evaluator, results, table = _cdconv(args)
    else:
        det, evaluator, results, table = _decode(args)
    sys.stdout.write(table)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(_finite(results), indent=2) + "\n", encoding="utf-8")
    if args.markdown:
        Path(args.markdown).write_text(table, encoding="utf-8")
    if args.predictions:
        evaluator.write_predictions(Path(args.predictions))
    if args.update_card:
        if det.path is None:
            raise InputError("--update-card needs a model folder")
        from ..detectors.modeling import CONFIG_NAME
        from ..training.card import write_model_card
        from ..training.citod import write_citod_card

        det.config.metrics.update({k: v for k, v in results.items() if "/" in k})
        det.config.metrics["evaluate_command"] = "dialcheck " + " ".join(shlex.quote(a) for a in sys.argv[1:])
        (det.path / CONFIG_NAME).write_text(det.config.to_json(), encoding="utf-8")
        (write_citod_card if args.benchmark == "citod" else write_model_card)(det.path, det.config)
    return 0


def _finite(results: dict[str, Any]) -> dict[str, Any]:
    """``results`` with a value that is not a finite number (an undefined metric) as null: Python's json writes NaN,
    which is not JSON, and jq or a browser refuse the whole file.

    >>> _finite({"a/roc_auc": float("nan"), "a/n": 3.0, "primary_metric": "a/accuracy"})
    {'a/roc_auc': None, 'a/n': 3.0, 'primary_metric': 'a/accuracy'}
    """
    return {k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in results.items()}


def _ablating(args: argparse.Namespace) -> bool:
    return args.row_selection is not None or args.no_history or args.no_vocabulary


def _no_citod_options(args: argparse.Namespace) -> None:
    if _ablating(args):
        raise InputError("--row-selection, --no-history and --no-vocabulary apply to --benchmark citod only")


def _no_data_files(args: argparse.Namespace) -> None:
    if args.data:
        raise InputError(
            f"--data (labelled dialogues of your own) applies to --benchmark decode or cdconv, not {args.benchmark}"
        )


def _known_splits(benchmark: str) -> tuple[str, ...]:
    from ..evaluation.cdconv import SPLITS as CDCONV_SPLITS
    from ..evaluation.citod import SPLITS as CITOD_SPLITS
    from ..evaluation.decode import SPLITS

    return tuple({"citod": CITOD_SPLITS, "cdconv": CDCONV_SPLITS}.get(benchmark, SPLITS))


def _check_splits(args: argparse.Namespace) -> None:
    """Refuse a ``--splits`` name that is a split of another benchmark (``--splits dev --benchmark citod``): the
    command line's type knows every benchmark's splits, not which benchmark was chosen."""
    if args.splits is None:
        return
    known = _known_splits(args.benchmark)
    wrong = [s for s in args.splits if s not in known]
    if wrong:
        raise InputError(
            f"--splits: {', '.join(wrong)} {'is not a split' if len(wrong) == 1 else 'are not splits'} of "
            f"--benchmark {args.benchmark} (its splits: {', '.join(known)})"
        )


def _splits(args: argparse.Namespace) -> list[str] | None:
    """``--splits`` as a list (each once, in the order given), or None for the evaluator's default (none when
    ``--data`` files are given)."""
    return None if args.splits is None else list(dict.fromkeys(args.splits))


def _report_skipped(evaluator: Any) -> None:
    """Name each bad record of the ``--data`` files once (file, line, field), then count them per file; then the
    warnings about a file's good records (contradictions whose evidence is a turn of another speaker)."""
    for name, errors in evaluator.skipped.items():
        for e in errors:
            print(f"dialcheck: skipped {e}", file=sys.stderr)
        if errors:
            kept = len(evaluator.files[name])
            # --limit N: the file is read up to its N-th good record, and only the bad ones before it are counted
            limited = evaluator.limit is not None and kept >= evaluator.limit
            upto = f" (--limit {evaluator.limit}: read no further)" if limited else ""
            print(
                f"dialcheck: {errors[0].source or name}: "
                f"skipped {len(errors)} of {counted(len(errors) + kept, 'record')} "
                f"({'each ' if len(errors) > 1 else ''}named above); split {name} holds the other {kept}{upto}",
                file=sys.stderr,
            )
    for notes in getattr(evaluator, "notes", {}).values():
        for note in notes:
            print(f"dialcheck: warning: {note}", file=sys.stderr)


def _warn_language(args: argparse.Namespace, evaluator: Any, default: str = "en") -> None:
    """Warn, per ``--data`` file, of the dialogues in a language ``--model`` was not trained on (Chinese turns for
    an English model, as ``check`` and ``score`` do), naming them by id, before the model runs; without ``--model``,
    of those the benchmark's shipped default (``default``: ``"en"`` for decode, ``"zh"`` for cdconv) was not trained
    on (a Korean dialogue for the English one), as ``check`` does for the default it routes to."""
    language = default if args.model is None else model_language_of(args)
    if language is None:
        return
    # without --model, evaluate --data skips the dialogues of the other language (decode) or reads them as Chinese
    # (cdconv): it routes none
    instead = (
        "Evaluate Chinese conversations with --benchmark cdconv --data FILE"
        if language == "en"
        else "Evaluate English dialogues with --benchmark decode --data FILE"
    )
    for path, examples in zip(args.data, evaluator.files.values(), strict=True):  # one split per file, in order
        shown = input_name(path)  # as its skipped records name it ("<stdin>"; its ids say "stdin:3")
        ids, dialogues, of = [e.id for e in examples], [e.dialogue for e in examples], f" of {shown}"
        if args.model is None:
            routed_warning(args, dialogues, ids, len(ids), instead, [default] * len(ids), of=of)
        else:
            model_warning(args, language, dialogues, ids, len(ids), instead, of=of)


def _warn_short(args: argparse.Namespace, evaluator: Any) -> None:
    """Warn, per ``--data`` file of ``--benchmark cdconv``, of the conversations of fewer than four turns: the
    four-category detectors read u1, b1, u2, b2 by position, so one without u1 is read with an empty u1, which no
    CDConv session has; their verdicts still count. Turns are counted as the detectors read them, without a chat
    log's tool calls and results and its system messages, and what each lacks is worded as ``check`` refuses it
    (:func:`~dialcheck.language.chinese_lacking`), one warning per wording."""
    from ..io import where_named
    from ..language import chinese_lacking, chinese_reading

    for path, examples in zip(args.data, evaluator.files.values(), strict=True):  # one split per file, in order
        by_lack: dict[str, list[str]] = {}
        for e in sorted(examples, key=lambda e: -len(chinese_reading(e.dialogue)[0].turns)):  # three turns first
            lacking = chinese_lacking(e.dialogue, refused=False)  # scored all the same
            if lacking:
                by_lack.setdefault(lacking, []).append(e.id or "?")
        for lacking, short in by_lack.items():
            named = where_named(short, len(examples), of=f" of {input_name(path)}")
            print(
                f"dialcheck: warning: {named} {'has' if len(short) == 1 else 'have'} fewer than four turns "
                f"({lacking}): the model reads a Chinese conversation as u1 (user), b1 (bot), u2 (user), b2 (bot), "
                "so the missing first turns are read as empty; their verdicts are counted",
                file=sys.stderr,
            )


def _decode(args: argparse.Namespace) -> tuple[Any, Any, dict[str, Any], str]:
    from ..api import reads_as_chinese
    from ..evaluation.decode import DecodeEvaluator, paper_detector, to_markdown

    _no_citod_options(args)
    chinese = args.model is not None and reads_as_chinese(args.model)  # a record it cannot read is a bad one
    try:
        evaluator = DecodeEvaluator(
            _splits(args), args.data_dir, args.limit, args.batch_size, files=args.data, english=args.model is None,
            chinese=chinese,
        )  # fmt: skip
    except ValueError as e:
        raise InputError(str(e)) from None
    evaluator.require_split_files()  # before the model loads: a missing corpus file failed seconds later
    _report_skipped(evaluator)
    _warn_language(args, evaluator)
    det = load_for(args)
    results: dict[str, Any] = evaluator(det, show_progress_bar=not args.no_progress)
    results["primary_metric"] = evaluator.primary_of(results)
    return det, evaluator, results, to_markdown(results, paper_detector(det))


def _citod(args: argparse.Namespace) -> tuple[Any, Any, dict[str, Any], str]:
    from ..detectors import GroundedDetector

    _no_data_files(args)
    from ..evaluation.citod import TEST_SPLITS, CitodEvaluator, to_markdown

    splits = _splits(args) or [*TEST_SPLITS, "kbi_probe"]
    try:
        evaluator = CitodEvaluator(splits, args.data_dir, args.limit, min(args.batch_size, 32))
    except ValueError as e:
        raise InputError(str(e)) from None
    evaluator.require_split_files()
    det = load_for(args, language="tod")
    if not isinstance(det, GroundedDetector):
        raise InputError(f"the CI-ToD benchmark needs a citod.grounded.v1 model, got {det.config.detector}")
    if _ablating(args) and args.update_card:
        raise InputError("--update-card cannot be combined with an ablation (row selection, history, vocabulary)")
    if args.row_selection is not None:
        det.config.options["selection"] = args.row_selection
    if args.no_history:
        det.config.options["history"] = False
    if args.no_vocabulary:
        det.config.options["vocabulary"] = None
    results: dict[str, Any] = evaluator(det, show_progress_bar=not args.no_progress)
    results["primary_metric"] = evaluator.primary_of(results)
    results["row_selection"] = det.config.options.get("selection", "overlap")
    results["history"] = bool(det.config.options.get("history", True))
    results["entity_checks"] = bool(det.config.options.get("checks", False))
    results["vocabulary"] = bool(det.config.options.get("vocabulary"))
    return det, evaluator, results, to_markdown(results)


def _cdconv(args: argparse.Namespace) -> tuple[Any, Any, dict[str, Any], str]:
    from ..evaluation.cdconv import CDConvEvaluator, to_markdown

    _no_citod_options(args)
    try:
        evaluator = CDConvEvaluator(_splits(args), args.data_dir, args.limit, args.batch_size, files=args.data)
    except ValueError as e:
        raise InputError(str(e)) from None
    evaluator.require_split_files()
    _report_skipped(evaluator)
    _warn_language(args, evaluator, "zh")
    _warn_short(args, evaluator)
    det = load_for(args, language="zh")
    if not det.config.detector.startswith("cdconv."):
        raise InputError(f"the CDConv benchmark needs a four-category cdconv.* model, got {det.config.detector}")
    trained_on = str(det.config.training.get("data", ""))
    if "CDConv official split" in trained_on and any(s.startswith("disjoint") for s in evaluator.splits):
        print(
            "dialcheck: warning: this model was trained on the official split, which shares most contexts with "
            "the context-disjoint dev/test sets: those numbers are optimistic",
            file=sys.stderr,
        )
    if "dev" in evaluator.splits and _trained_on_dev(det):
        print(
            "dialcheck: warning: this model was trained on CDConv's dev split (--with-dev): its dev numbers are not "
            "a held-out measure and run high; the test split is",
            file=sys.stderr,
        )
    results: dict[str, Any] = evaluator(det, show_progress_bar=not args.no_progress)
    results["primary_metric"] = evaluator.primary_of(results)
    tables = [f"### {split}\n\n" + to_markdown(results, split) for split in [*evaluator.splits, *evaluator.files]]
    return det, evaluator, results, "\n".join(tables)


def _trained_on_dev(det: Any) -> bool:
    """Whether a CDConv detector's training included the dev split (``train --with-dev``, or a soup with such an
    ingredient: :func:`dialcheck.training.cdconv.saw_dev`'s rule), so that ``--splits dev`` measures it on data
    it has seen: every shipped default since ``cdconv-flat-gemma-v5``."""
    from ..training.cdconv import saw_dev

    return det.path is not None and bool(saw_dev([det.path]))
