"""``dialcheck evaluate``: the DECODE benchmark (dev, human-bot, RCT, A2T, raw human-bot)."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from ..errors import InputError
from .common import add_model_options, load_for

HELP = "evaluate a detector on the DECODE splits; JSON results and a Markdown table"


def add_parser(sub: Any) -> None:
    from ..evaluation.decode import SPLITS

    p = sub.add_parser("evaluate", help=HELP, description=HELP)
    add_model_options(p)
    p.add_argument("--splits", default=",".join(SPLITS), help=f"comma-separated, from {', '.join(SPLITS)}")
    p.add_argument("--data-dir", default=None, help="corpus folder (default ../shared/data or $DIALCHECK_DATA_DIR)")
    p.add_argument("--limit", type=int, default=None, help="first N examples per split (quick look)")
    p.add_argument("--json", dest="json_out", default=None, help="write the results as JSON here")
    p.add_argument("--markdown", default=None, help="write the Markdown table here")
    p.add_argument("--predictions", default=None, help="write per-example predictions (JSONL) here")
    p.add_argument("--update-card", action="store_true", help="store the results in the model's config and card")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..evaluation.decode import DecodeEvaluator, to_markdown

    splits = [s for s in args.splits.split(",") if s]
    try:
        evaluator = DecodeEvaluator(splits, args.data_dir, args.limit, args.batch_size)
    except ValueError as e:
        raise InputError(str(e)) from None
    det = load_for(args)
    results = evaluator(det, show_progress_bar=not args.no_progress)
    results["primary_metric"] = evaluator.primary_metric  # type: ignore[assignment]
    table = to_markdown(results, det.config.detector)
    sys.stdout.write(table)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    if args.markdown:
        Path(args.markdown).write_text(table, encoding="utf-8")
    if args.predictions:
        evaluator.write_predictions(Path(args.predictions))
    if args.update_card:
        if det.path is None:
            raise InputError("--update-card needs a model folder")
        from ..detectors.modeling import CONFIG_NAME
        from ..training.card import write_model_card

        det.config.metrics.update({k: v for k, v in results.items() if "/" in k})
        det.config.metrics["evaluate_command"] = "dialcheck " + " ".join(shlex.quote(a) for a in sys.argv[1:])
        (det.path / CONFIG_NAME).write_text(det.config.to_json(), encoding="utf-8")
        write_model_card(det.path, det.config)
    return 0
