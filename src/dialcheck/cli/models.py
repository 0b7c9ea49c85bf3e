"""``dialcheck models``: the models shipped with dialcheck, what each is the default for, whether its base
encoder is installed, and its headline numbers; ``dialcheck models NAME`` prints that model's card (NAME: a
shipped model, ``default`` for the English default, or a detector folder), and
``dialcheck models NAME --save OUT --slots settle`` saves NAME read with other options as a model of its own."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

from ..errors import InputError
from .common import DATA_DIR_HELP, add_reading_options, nonnegative_int, readable_weights, unit_float

HELP = "list the shipped models (defaults first, base installed?, headline metrics); NAME prints its model card"


def add_parser(sub: Any) -> None:
    p = sub.add_parser("models", help=HELP, description=HELP)
    p.add_argument(
        "name",
        nargs="?",
        default=None,
        help="a shipped model, default (the English default) or a detector folder: print its model card",
    )
    p.add_argument("--json", action="store_true", help="one JSON object per model, every recorded metric")
    save = p.add_argument_group(
        "deriving a model",
        "--save OUT writes NAME (a shipped model or a detector folder) read with the options below to OUT: its "
        "weights copied unchanged, the options and thresholds given saved in its config (what its card and "
        "training.derived_from record), so that the model runs that way by default",
    )
    save.add_argument("--save", metavar="OUT", default=None, help="folder to write the derived model to (new or empty)")
    save.add_argument("--tau", type=unit_float, default=None, help="decision threshold in [0, 1] (default: NAME's)")
    save.add_argument("--eta-e", type=unit_float, default=None, help="evidence threshold in [0, 1] (default: NAME's)")
    save.add_argument(
        "--recalibrate",
        action="store_true",
        help="choose tau again by the training rule (the highest threshold within one standard error of the best "
        "balanced accuracy) on the verdicts the derived model gives, as it runs by default (its readings, its "
        "preferred runtime; a cascade's final scores), for DECODE's held-out validation dialogues (the trainer's "
        "own) or --calibrate-on FILE; eta_e, a cascade's band and the readings are kept",
    )
    save.add_argument("--calibrate-on", metavar="FILE", default=None, help="labelled dialogues for --recalibrate")
    save.add_argument("--data-dir", default=None, help="for --recalibrate: " + DATA_DIR_HELP)
    save.add_argument(
        "--threads", type=nonnegative_int, default=0, help="CPU threads for --recalibrate (0: torch's default)"
    )
    save.add_argument("--no-progress", action="store_true", help="no progress bar while --recalibrate reads")
    add_reading_options(save)
    p.set_defaults(func=run)


def _number(v: float) -> str:
    return f"{v:.4f}" if abs(v) <= 1 else f"{v:.2f}"


def run(args: argparse.Namespace) -> int:
    from ..catalog import REPOSITORY_ONLY, missing_repository_only, shipped_models

    if args.save is not None:
        return _save(args)
    _refuse_derivation_options(args)
    if args.name is not None:
        return _show(args.name, args.json)
    models = shipped_models()
    if args.json:
        for m in models:
            print(json.dumps(m.to_dict(), ensure_ascii=False))
        return 0
    missing = {}
    for m in models:
        base = m.base + ("" if m.base_installed else " (not installed)")
        if not m.base_installed and m.install:
            missing[m.base] = m.install
        size = f"{m.size_bytes / 1e6:.1f} MB" + (f" with {' and '.join(m.stages)}" if m.stages else "")
        print(f"{m.name}  [{m.detector}, base {base}, {size}, trained {m.trained or '?'}]")
        if m.roles:
            print(f"    {'; '.join(m.roles)}")
        if m.repository_only:
            print(f"    superseded by {REPOSITORY_ONLY[m.name]}: in the repository only, not in the wheel")
        numbers = ", ".join(f"{k} {_number(v)}" for k, v in m.headline().items())
        if numbers:
            print(f"    {numbers}")
    for base, command in missing.items():
        print(f"\nto use the models on {base}: {command}")
    from ..io import counted

    if left_out := missing_repository_only():
        print(
            f"\nnot installed: {counted(len(left_out), 'superseded model')} kept in the dialcheck source "
            "repository only "
            f"({', '.join(left_out)}); to use one, clone the repository and pass its folder: "
            "--model CHECKOUT/src/dialcheck/models/NAME"
        )
    print(
        "\ndetectors load by name (dialcheck check FILE --model NAME, dialcheck.load(NAME)), answer classifiers "
        "with dialcheck nbest --classifier NAME; a model's card: dialcheck models NAME"
    )
    return 0


def _refuse_derivation_options(args: argparse.Namespace) -> None:
    """Without ``--save``, ``models [NAME]`` only lists or shows: an option that derives a model (``--tau``,
    ``--slots``, ``--recalibrate``, ...) would be dropped without a word, the card shown as if it applied."""
    from ..detectors.utterance import UtteranceDetector
    from .common import CASCADE_OPTIONS

    dests = ("tau", "eta_e", "calibrate_on", *UtteranceDetector.reading_options(), "history", *CASCADE_OPTIONS)
    given = [f"--{d.replace('_', '-')}" for d in dests if getattr(args, d, None) is not None]
    given += ["--recalibrate"] if args.recalibrate else []
    if given:
        raise InputError(
            f"{', '.join(given)}: options that derive a model, read only with --save OUT (dialcheck models "
            f"{args.name or 'NAME'} --save OUT {given[0]} ...); without --save, models only lists models or shows a "
            "card, and changes nothing"
        )


def _model(name: str) -> tuple[Any, str]:
    """The model ``models NAME`` shows (a :class:`~dialcheck.catalog.ShippedModel`) and a note on what it is
    ("" for a shipped model named as such): ``default`` is the English default, an existing folder is read as
    a detector folder (one written by ``--save``, say)."""
    from ..catalog import read_model, shipped_model
    from ..detectors import DEFAULT_MODELS, default_model_path
    from ..detectors.modeling import CONFIG_NAME

    if name == "default":
        m = shipped_model(default_model_path("en").name)  # the fallback where the default's base is missing
        note = f"default is {m.name}, the shipped English default detector (what `dialcheck check` uses for English)"
        if m.name != DEFAULT_MODELS["en"]:
            note += f", standing in for {DEFAULT_MODELS['en']}, which needs what is not installed here"
        return m, note
    from ..detectors.base import detector_type, interrupted_run

    folder = Path(name)
    if folder.is_dir():
        if (interrupted := interrupted_run(folder)) is not None:
            raise InputError(interrupted)
        if not (folder / CONFIG_NAME).is_file():
            raise InputError(f"not a detector folder (no {CONFIG_NAME}) nor a shipped model's name", name)
        # a config no command could load (a threshold of the wrong type, an unknown detector type) is refused as
        # loading refuses it: models FOLDER printed its card, exit 0, for a folder every other command refuses
        detector_type(folder / CONFIG_NAME)
        return read_model(folder), ""
    if len(folder.parts) > 1 or folder.exists():  # a path: shipped models are named without one
        raise InputError("no such folder (a shipped model is named alone; list them: dialcheck models)", name)
    return shipped_model(name), ""


def _show(name: str, as_json: bool) -> int:
    """``models NAME``: the model card of a shipped model, ``default`` or a detector folder; a folder without a
    card gets a summary of its config instead."""
    m, note = _model(name)
    if as_json:
        print(json.dumps(m.to_dict(), ensure_ascii=False))
        return 0
    if note:
        print(f"{note}\n")
    card = m.path / "MODEL_CARD.md"
    print(card.read_text(encoding="utf-8") if card.is_file() else _summary(m))
    if not m.base_installed:
        print(f"\nbase {m.base} is not installed" + (f": {m.install}" if m.install else ""))
    return 0


def _summary(m: Any) -> str:
    """What a model folder without a model card says of itself in its config: type, base, labels, thresholds,
    options, stages, provenance and recorded metrics."""
    from ..detectors.modeling import CONFIG_NAME, DetectorConfig

    cfg = DetectorConfig.from_file(m.path / CONFIG_NAME)
    lines = [
        f"{m.name}: no model card (MODEL_CARD.md) in {m.path}; its {CONFIG_NAME} says:",
        f"  detector: {cfg.detector}",
        f"  base: {cfg.base}",
        f"  labels: {', '.join(map(str, cfg.labels))}",
        "  thresholds: "
        + ", ".join(f"{k} {v:g}" if isinstance(v, float | int) else f"{k} {v}" for k, v in cfg.thresholds.items()),
    ]
    options = cfg.saved_options()
    if options:
        shown = (f"{k} = {v if isinstance(v, str | int | float) else json.dumps(v)}" for k, v in options.items())
        lines.append(f"  options: {', '.join(shown)}")
    if m.stages:
        lines.append(f"  stages: {', '.join(m.stages)}")
    if m.trained:
        lines.append(f"  trained: {m.trained}")
    derived = cfg.training.get("derived_from")
    if isinstance(derived, dict):
        lines.append(f"  derived from {derived.get('model', '?')}: {derived.get('change', '?')}")
    if m.metrics:
        lines.append("  metrics: " + ", ".join(f"{k} {_number(v)}" for k, v in sorted(m.metrics.items())))
    return "\n".join(lines)


def _save(args: argparse.Namespace) -> int:
    """``models NAME --save OUT``: NAME's folder copied to OUT with the options given saved in its config."""
    from ..detectors import load_detector, model_folder
    from ..detectors.base import interrupted_run
    from ..detectors.modeling import CONFIG_NAME
    from ..detectors.utterance import UtteranceDetector
    from ..training.card import model_reference, write_model_card
    from .common import CASCADE_OPTIONS, _prob, set_cascade_option, set_threads, writable_folder

    if args.name is None:
        raise InputError("--save needs the model to derive from: dialcheck models NAME --save OUT --slots settle")
    src = model_folder(args.name)
    if (interrupted := interrupted_run(src)) is not None:
        raise InputError(interrupted)
    if not (src / CONFIG_NAME).is_file():
        raise InputError(f"{args.name}: not a shipped model or a detector folder (no {CONFIG_NAME})")
    out = Path(args.save)
    writable_folder(out, "--save")  # under a file it said only '...: File exists' (mkdir's words), after the load
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise InputError(f"{out}: exists and is not an empty folder; --save writes a new model")
    readable_weights(src, f"the model {args.name}")
    det = load_detector(src)  # the config only: no weights are read to change options
    changes, given = [], []  # what changes, and the options that say so (for the recorded command)
    before = {"tau": det.tau, "eta_e": det.eta_e}  # NAME's: its validation numbers, kept below, were measured so
    for name in ("tau", "eta_e"):
        value = getattr(args, name)
        if value is not None and value != getattr(det, name):
            changes.append(f"{name} {getattr(det, name):g} -> {value:g}")
            given += [f"--{name.replace('_', '-')}", f"{value:g}"]
            setattr(det, name, _prob(value, f"--{name.replace('_', '-')}"))
    for reading in (*UtteranceDetector.reading_options(), "history"):  # history: four-category detectors
        value = getattr(args, reading, None)
        if value is None:
            continue
        given += [f"--{reading.replace('_', '-')}", str(value)]
        if not hasattr(det, reading):
            raise InputError(f"{args.name} ({det.config.detector}) has no option {reading}")
        if value != getattr(det, reading):
            changes.append(f"{reading} = {value}")
            setattr(det, reading, value)
    for arg, attr in CASCADE_OPTIONS.items():
        value = getattr(args, arg, None)
        if value is None:
            continue
        shown = f"{value:g}" if isinstance(value, float) else str(value)
        given += [f"--{arg.replace('_', '-')}", shown]
        if set_cascade_option(det, arg, value):
            changes.append(f"{attr} = {shown}")
    if args.recalibrate and args.tau is not None:
        raise InputError("--recalibrate chooses tau: give it or --tau, not both")
    if args.calibrate_on and not args.recalibrate:
        raise InputError("--calibrate-on is read by --recalibrate only")
    if args.recalibrate:
        given += ["--recalibrate", *(["--calibrate-on", args.calibrate_on] if args.calibrate_on else [])]
    elif not changes:
        raise InputError(f"nothing to change: {args.name} already reads so (give --slots, --ellipsis, --tau, ...)")
    cfg = det.config
    cfg.thresholds["tau"], cfg.thresholds["eta_e"] = det.tau, det.eta_e
    if args.tau is not None:  # a τ given is the model's on every CPU: no int8 range's τ replaces it
        cfg.thresholds.pop("tau_int8", None)
    # the numbers measured on NAME are not this model's; the validation numbers of its calibration are kept
    cfg.metrics = {k: v for k, v in cfg.metrics.items() if k.startswith("val_")}
    cfg.training["derived_from"] = {
        "model": model_reference(src),
        "change": ", ".join(f"`{c}`" for c in changes),
        "command": shlex.join(["dialcheck", "models", model_reference(src), "--save", str(out), *given]),
        "date": dt.date.today().isoformat(),
        "metrics_measured_with": before,
    }
    if args.recalibrate:  # the dialogues first: a bad file fails before anything is written or loaded
        from ..training.recalibrate import calibration_dialogues

        dialogues, where = calibration_dialogues(args.calibrate_on, args.data_dir)
        if not args.calibrate_on:
            where += " (validation fraction 0.08, seed 0)"
    # built beside OUT and renamed when whole: a run stopped while it recalibrates (minutes) must not leave a folder
    # that loads as the derived model with NAME's thresholds under a record that says it was recalibrated
    out.parent.mkdir(parents=True, exist_ok=True)
    work = out.parent / f".{out.name}.partial-{os.getpid()}"
    try:
        shutil.copytree(src, work, ignore=shutil.ignore_patterns("MODEL_CARD.md", "__pycache__"))
        (work / CONFIG_NAME).write_text(cfg.to_json(), encoding="utf-8")
        if args.recalibrate:
            from ..training.recalibrate import recalibrate_config

            set_threads(args.threads)
            record, changed = recalibrate_config(work, cfg, dialogues, where, show_progress_bar=not args.no_progress)
            changes += changed
            cfg.training["derived_from"]["change"] = ", ".join(f"`{c}`" for c in changes) or "none (tau chosen again)"
            cfg.training["derived_from"]["recalibrated"] = record
            (work / CONFIG_NAME).write_text(cfg.to_json(), encoding="utf-8")
        write_model_card(work, cfg, name=out.name)
        if out.is_dir():
            out.rmdir()  # new or empty: checked above
        work.rename(out)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    print(
        f"dialcheck: saved {out}: {args.name} with {', '.join(changes)}; measure it with "
        f"dialcheck evaluate --model {out} --update-card",
        file=sys.stderr,
    )
    return 0
