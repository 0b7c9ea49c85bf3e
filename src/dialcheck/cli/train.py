"""``dialcheck train``: train a detector and save it with its config and model card.

``--task decode`` (default): a DECODE contradiction detector (utterance-based or unstructured).
``--task citod``: the CI-ToD knowledge-grounded QI/HI/KBI detector (calendar + navigate; weather has no
labelled train split).
``--task cdconv``: a CDConv four-category detector (``--detector hierarchical|flat|pair``; ``--init`` starts
every classifier from a pre-trained pair classifier).
``--task ocnli``: NLI pre-training on OCNLI (a two-label pair classifier for ``--task cdconv --init``).
``--task cascade --init FAST SLOW``: no training; the band of FAST's scores that SLOW re-reads, chosen on the
validation dialogues (see :mod:`dialcheck.detectors.cascade`).
``--task paircheck --init MAIN PAIRS --tau-pairs T``: no training; a pair check behind a CDConv detector (see
:mod:`dialcheck.detectors.paircheck`).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

from ..errors import InputError
from .common import (
    DATA_DIR_HELP,
    add_pair_order_option,
    add_threads_option,
    existing_file,
    nonnegative_float,
    nonnegative_int,
    open_unit_float,
    positive_float,
    positive_int,
    positive_unit_float,
    read_labelled,
    readable_weights,
    seed_number,
    set_threads,
    token_window,
    unit_float,
    unit_float_below_one,
    writable_folder,
)

HELP = (
    "train a detector (--task decode: utterance-based or unstructured; citod: grounded; cdconv: four categories;"
    " ocnli: Chinese NLI pre-training) or build one from saved ones (cascade, paircheck)"
)
DETECTOR_TYPES = {"utterance": "decode.utterance.v1", "unstructured": "decode.unstructured.v1"}
CDCONV_DETECTORS = {"hierarchical": "cdconv.hierarchical.v1", "flat": "cdconv.flat.v1", "pair": "cdconv.pair.v1"}

# the options of one task's group (--help), read by that task only: another task dropped them without a word
TASK_OPTIONS = {
    "citod": ("domains", "no_history", "lora_top", "marks", "checks", "calibrate_thresholds", "row_selection"),
    "cdconv": ("split", "lexical_blocks", "lexical_ngrams", "cascade", "context_rate"),
    "cascade": ("max_disagreement", "ellipsis", "questions", "slots", "subjects", "introductions", "times"),
}
_DEFAULTS: dict[str, Any] = {}  # each option's default, filled by add_parser


def add_parser(sub: Any) -> None:
    from ..detectors.onnx import RUNTIMES
    from ..detectors.utterance import (
        INTRODUCTION_READINGS,
        QUESTION_READINGS,
        SLOT_READINGS,
        SUBJECT_READINGS,
        TIME_READINGS,
    )

    p = sub.add_parser("train", help=HELP, description=HELP)
    p.add_argument("--out", "-o", required=True, help="folder to write the detector to")
    p.add_argument(
        "--task",
        choices=("decode", "citod", "cdconv", "ocnli", "cascade", "paircheck"),
        default="decode",
        help="what to train: decode (default), citod, cdconv or ocnli; or what to build from the --init detectors: "
        "cascade (FAST SLOW) or paircheck (MAIN PAIRS)",
    )
    p.add_argument(
        "--detector",
        choices=sorted({**DETECTOR_TYPES, **CDCONV_DETECTORS}),
        default=None,
        help="decode: utterance (default) or unstructured; cdconv: hierarchical (default), flat or pair",
    )
    p.add_argument(
        "--base",
        default="all-MiniLM-L6-v2",
        help="all-MiniLM-L6-v2, all-mpnet-base-v2, gemma-3-270m or a local HF folder; NAME+zh adds the Chinese "
        "characters MiniLM lacks (e.g. all-MiniLM-L6-v2+zh for --task cdconv/ocnli)",
    )
    p.add_argument(
        "--lora", type=nonnegative_int, default=None, metavar="R", help="LoRA rank (default 16); 0 = full fine-tuning"
    )
    p.add_argument("--full", action="store_true", help="full fine-tuning (same as --lora 0; refused with --lora R)")
    p.add_argument(
        "--augment",
        default=None,
        help="comma-separated extra data ('' = none). decode: random_premise (default), restate, perturb, "
        "values (a turn against itself with one number, weekday or month changed, and against a paraphrase "
        "keeping them), "
        "history (two earlier turns of one train dialogue, consistent), coevidence (the two turns one turn "
        "contradicts, consistent, both orders), neighbour (each last turn after its nearest utterance of "
        "another dialogue: unlabelled, needs --teacher, whose scores are their targets), anli, "
        "nli_samples, swap, reverse (half of all pairs read backwards; use with --pair-order both), paragraph "
        "(30%% of the pairs again with the second turn set among other utterances, 40-75 words, label kept); "
        "citod: kbi (default: KBI synthesis by entity replacement); cdconv: perturb (the bot's b1 negated or "
        "antonym-swapped as a history contradiction, synonym-swapped as none), random_context (30%% of the "
        "history and intra-sentence contradictions again after another conversation's u1 and b1: history "
        "becomes none, intra-sentence stays), user_statement (30%% of the history contradictions with b1 said "
        "by the user instead and another conversation's b1 in its place: none; not where u2 asks about the "
        "user); default none",
    )
    p.add_argument(
        "--epochs",
        type=nonnegative_float,
        default=2.0,
        help="passes over the training pairs (default 2); decode: 0 with --init recalibrates tau and eta_e only; "
        "cdconv: 0 with --init measures the saved detector (or soup) on dev, and fits its lexical head with --lexical",
    )
    p.add_argument("--batch-size", type=positive_int, default=None, help="default 32 (decode), 16 (citod)")
    p.add_argument("--lr", type=positive_float, default=None, help="default 5e-4 with LoRA, 3e-5 full")
    p.add_argument(
        "--max-length",
        type=token_window,
        default=None,
        help="tokens a pair is cut to, at least 16 and at most what the base reads (512 for MiniLM and MPNet); "
        "default 128 (decode), 256 (citod)",
    )
    p.add_argument(
        "--patience", type=positive_int, default=3, help="validations without improvement before stopping (default 3)"
    )
    p.add_argument(
        "--eval-every",
        type=nonnegative_int,
        default=0,
        metavar="STEPS",
        help="validate every STEPS steps (default 0 = four times per epoch); decode also writes OUT/checkpoint "
        "at each new best, usable with evaluate or --init if the run is interrupted, removed when it ends",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="continue an interrupted run: the same command plus --resume picks up from the training state in "
        "OUT/resume (written at every validation: weights, optimizer, batch order) as if it had not stopped; "
        "decode: a run that left only OUT/checkpoint continues from there with fresh optimizer moments",
    )
    p.add_argument(
        "--validation-fraction",
        type=open_unit_float,
        default=0.08,
        help="share of train dialogues held out (between 0 and 1, default 0.08)",
    )
    p.add_argument(
        "--class-weight",
        choices=("balanced", "sqrt"),
        default=None,
        help="weight the cross-entropy by inverse class frequency (balanced: n / (k * count); sqrt: its square "
        "root, milder), for skewed label mixes such as CDConv's four categories (default: unweighted)",
    )
    p.add_argument(
        "--seed", type=seed_number, default=0, help="seed of the validation split, the augmentations and training"
    )
    p.add_argument(
        "--shuffle-seed",
        type=seed_number,
        default=None,
        help="seed of the batch order, dropout and any new head or adapter (default --seed): continue a run "
        "with --init in a new order while keeping its validation split",
    )
    add_threads_option(p)
    p.add_argument(
        "--limit",
        type=positive_int,
        default=None,
        help="use only the first N (at least 1) train dialogues (quick runs); cdconv: and the first N/4 dev ones "
        "(at least 1), on which it validates and is measured",
    )
    p.add_argument("--data-dir", default=None, help=DATA_DIR_HELP)
    g = p.add_argument_group("citod")
    g.add_argument("--domains", default="calendar,navigate", help="CI-ToD train domains (default calendar,navigate)")
    g.add_argument("--no-history", action="store_true", help="leave the dialogue history out (context ablation)")
    g.add_argument(
        "--lora-top",
        type=nonnegative_int,
        default=0,
        metavar="N",
        help="LoRA on the top N encoder layers only (0 = all): the backward pass stops below them, faster on CPU",
    )
    g.add_argument(
        "--marks",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="mark knowledge values the reply mentions (*) and those only the request/history mention (#) "
        "(default on; --no-marks to ablate)",
    )
    g.add_argument(
        "--checks",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="append typed entity checks to the reply (request/history/kb: same, other, absent); the CI-ToD "
        "entity vocabulary is stored in the model (default on; --no-checks to ablate)",
    )
    g.add_argument(
        "--calibrate-thresholds",
        action="store_true",
        help="after training, set each label's threshold on the dev sets (default: 0.5 for all, as the paper)",
    )
    g.add_argument(
        "--row-selection",
        choices=("overlap", "none"),
        default="overlap",
        help="rank knowledge rows by entity overlap before the token budget cuts (default) or keep KB order",
    )
    c = p.add_argument_group("cdconv")
    c.add_argument("--split", choices=("official", "disjoint"), default="official", help="CDConv split to train on")
    c.add_argument(
        "--with-dev",
        action="store_true",
        help="train on the split's train and dev examples together: a final fit with a recipe fixed beforehand "
        "(no validation: the last weights are kept; no dev metrics; not with --lexical, whose mix is chosen on dev); "
        "with --epochs 0 and --lexical-from, refit that head (its C and min_df) on train and dev, its mix and tau kept",
    )
    c.add_argument(
        "--lexical",
        action="store_true",
        help="also fit a character n-gram logistic regression on the train split and mix its probabilities "
        "into the encoder's (flat/pair) or each stage's score (hierarchical; mix chosen on dev with the stage "
        "thresholds); needs scikit-learn for training only",
    )
    c.add_argument(
        "--lexical-blocks",
        default=None,
        metavar="NAMES",
        help="with --lexical or --add-lexical: the head's n-gram blocks, comma-separated, out of b2, b1, u2 (each "
        "turn's own n-grams) and b2&b1, b2&u2 (the n-grams of b2 the other turn has too); default b2,b1,u2",
    )
    c.add_argument(
        "--lexical-ngrams",
        type=positive_int,
        default=None,
        metavar="N",
        help="with --lexical or --add-lexical: the head's longest character n-gram, 1-4 (default 2)",
    )
    c.add_argument(
        "--cascade",
        choices=("joint", "stage"),
        default="joint",
        help="hierarchical: choose the three stage thresholds together on dev for the mean of 2-class accuracy "
        "and 4-class macro-F1 (joint, default), or keep each stage's own best-F1 threshold (stage)",
    )
    c.add_argument(
        "--speaker-tags",
        action="store_true",
        help="read every turn as 'A: ...' or 'B: ...' (B: the speaker of the checked reply), one per line, so "
        "the model sees whose words are whose; kept in the saved config (and taken over by --init)",
    )
    c.add_argument(
        "--context-rate",
        type=positive_unit_float,
        default=None,
        metavar="P",
        help="--augment random_context and user_statement: the seeded share of the contradictions each copies "
        "(default 0.3; a lower rate's copies are a subset of a higher one's)",
    )
    c.add_argument(
        "--add-lexical",
        default=None,
        metavar="FOLDER",
        help="skip encoder training: fit the lexical head onto this saved CDConv detector and save to --out",
    )
    c.add_argument(
        "--lexical-from",
        default=None,
        metavar="FOLDER",
        help="with --init and --epochs 0: give the detector (or soup) the lexical head of this saved CDConv "
        "detector with its mix and tau as they are, choosing nothing on dev (e.g. for a soup with a --with-dev "
        "ingredient, for which dev is no longer held out); with --with-dev the head is refitted on train and dev",
    )
    add_pair_order_option(
        p,
        help="decode utterance-based: read each pair at calibration and test time as trained (forward, the "
        "default) or in both orders, averaging the two scores; with --init the saved model's setting is kept "
        "unless given",
    )
    d = p.add_argument_group("distillation (decode)")
    d.add_argument(
        "--teacher",
        default=None,
        help="a trained detector whose pair scores become soft targets, or a scores file written by "
        "--save-teacher-scores (no teacher weights needed)",
    )
    d.add_argument(
        "--save-teacher-scores",
        default=None,
        metavar="FILE",
        help="score the pairs this run would train on with --teacher, write them to FILE (.npz, with the "
        "teacher's hash and this command) and stop before training; the same command with --teacher FILE "
        "then trains the student without the teacher",
    )
    d.add_argument("--distill-alpha", type=unit_float, default=0.5, help="weight of the teacher in the target (0..1)")
    d.add_argument(
        "--distill-alpha-by",
        default="",
        metavar="SOURCE=A,...",
        help="per-source teacher weight overriding --distill-alpha, e.g. aug.perturb=0 keeps gold labels for a "
        "source the teacher never trained on (sources: decode.train, aug.<augmentation>, anli, mnli, snli, ...)",
    )
    p.add_argument(
        "--init",
        nargs="+",
        default=None,
        metavar="FOLDER",
        help="decode: continue training a saved detector, LoRA or fully fine-tuned (its base, adapter, type "
        "and max length are used; --base/--lora/--full/--max-length are ignored), e.g. to add your "
        "own data or resume an interrupted run from OUT/checkpoint; with a --detector of the other type, a warm "
        "start of that detector from the same pair classifier (--max-length default 256 for unstructured); "
        "several folders (detectors continued from one start): start from their weight average, a model soup "
        "(with --epochs 0: the soup, calibrated); "
        "cdconv: start "
        "every classifier from a saved LoRA pair classifier, e.g. one from --task ocnli (its base and adapter "
        "are used; a 4-way classifier gets a new head), or continue a saved CDConv detector (a hierarchical one: "
        "each stage from its own saved stage, e.g. a second epoch with --shuffle-seed 1); several flat or pair "
        "detectors: start from their soup; --epochs 0: no training, the --init detector (or soup) measured on dev, "
        "with --lexical given its lexical head",
    )
    p.add_argument(
        "--half",
        action="store_true",
        help="decode: store the LoRA adapter and head in float16 (half the file, read back into float32; "
        "e.g. for a soup of several --init folders, whose adapter has their ranks summed); cdconv: the same "
        "for a soup of several --init folders (rounded before it is measured and given its lexical head)",
    )
    p.add_argument(
        "--rank",
        type=positive_int,
        default=None,
        metavar="R",
        help="decode, with --init: cut the LoRA adapter of the --init detector (or of the soup of several) to "
        "rank R (below its own) by truncated SVD before training or calibrating (a smaller file; an approximation: use "
        "--epochs 0 to recalibrate and compare the validation numbers); cdconv: the same for a soup of several "
        "--init folders (exact when R is at least the rank of their average, e.g. A A A B with A of rank 24 and "
        "B of rank 8: R 32)",
    )
    own = p.add_argument_group("your own labelled dialogues (decode, utterance-based)")
    own.add_argument(
        "--dialogues",
        action="append",
        default=[],
        metavar="FILE",
        help="add training pairs from labelled dialogues (JSON/JSONL, the format of evaluate --data: "
        '"contradiction": true/false, "evidence": [earlier turn indices]); repeatable; bad records are '
        "skipped and reported. Validation and tau stay on held-out DECODE groups",
    )
    own.add_argument(
        "--dialogues-repeat",
        type=positive_int,
        action="append",
        default=None,
        metavar="N",
        help="use the pairs of --dialogues N times per epoch (default 1), to weigh a few hundred dialogues "
        "against DECODE's tens of thousands of pairs; given once it applies to every file, given as often as "
        "--dialogues it pairs with them in order",
    )
    own.add_argument(
        "--calibrate-on",
        default=None,
        metavar="FILE",
        help="labelled dialogues (same format) that replace the held-out DECODE groups for early stopping and "
        "for setting tau (and eta_e, if their contradictions name evidence turns): your bot's operating "
        "point. Keep them out of --dialogues. With --init and --epochs 0: recalibrate only",
    )
    own.add_argument(
        "--unannotated",
        choices=("skip", "top"),
        default="skip",
        help="contradictions in --dialogues without evidence turns: skip them (default; only their "
        "dialogue-level label is known) or take the earlier turn the --init detector scores highest as "
        "their evidence",
    )
    cas = p.add_argument_group("cascade (--task cascade --init FAST SLOW)")
    cas.add_argument(
        "--max-disagreement",
        type=unit_float_below_one,
        default=0.01,
        help="share of the validation dialogues on which the cascade may decide unlike SLOW alone (default "
        "0.01); the band of FAST's scores that SLOW re-reads is the narrowest within it",
    )
    cas.add_argument(
        "--ellipsis",
        choices=("off", "resolve"),
        default=None,
        help="read both stages with this --ellipsis setting (see `dialcheck check --help`); SLOW's tau and eta_e "
        "are then chosen again on the validation dialogues, as `train --init SLOW --epochs 0` would",
    )
    cas.add_argument(
        "--questions",
        choices=QUESTION_READINGS,
        default=None,
        help="read both stages with this --questions setting; SLOW's thresholds are chosen again, as for --ellipsis",
    )
    cas.add_argument(
        "--slots",
        choices=SLOT_READINGS,
        default=None,
        help="read both stages with this --slots setting; SLOW's thresholds are chosen again, as for --ellipsis",
    )
    cas.add_argument(
        "--subjects",
        choices=SUBJECT_READINGS,
        default=None,
        help="read both stages with this --subjects setting; SLOW's thresholds are chosen again, as for --ellipsis",
    )
    cas.add_argument(
        "--introductions",
        choices=INTRODUCTION_READINGS,
        default=None,
        help="read both stages with this --introductions setting; SLOW's thresholds are chosen again, as for "
        "--ellipsis",
    )
    cas.add_argument(
        "--times",
        choices=TIME_READINGS,
        default=None,
        help="read both stages with this --times setting; SLOW's thresholds are chosen again, as for --ellipsis",
    )
    cas.add_argument(
        "--runtime",
        choices=RUNTIMES,
        default=None,
        help="the runtime the cascade will run on, saved as its preference: dialcheck.load(), check, score, serve "
        "and evaluate then run it there where onnxruntime is installed. onnx: ONNX Runtime float32 (torch's "
        "scores, about 2x faster); onnx-int8: per-channel int8 (about 4x), whose scores differ, so both stages "
        "read the validation dialogues through it and SLOW's tau and eta_e are chosen again on those scores",
    )
    cas.add_argument("--prefer-onnx", action="store_true", help="the same as --runtime onnx")
    cas.add_argument(
        "--recalibrate",
        action="store_true",
        help="after the band, choose tau again by the same rule on the cascade's own final verdicts for the "
        "validation dialogues (SLOW decides only those in the band), per int8 range on --runtime onnx-int8; "
        "what `dialcheck models CASCADE --save OUT --recalibrate` does to a saved cascade",
    )
    pc = p.add_argument_group("pair check (--task paircheck --init MAIN PAIRS)")
    pc.add_argument(
        "--tau-pairs",
        type=nonnegative_float,
        default=None,
        help="a reply MAIN leaves alone is a history contradiction when PAIRS scores it against an earlier turn of "
        "its speaker at least this high (benchmarks/cdconv_pair_check.py chooses it)",
    )
    pc.add_argument(
        "--veto-below",
        type=unit_float,
        default=0.0,
        help="a reply MAIN names history is consistent when PAIRS scores it below this (default 0: never)",
    )
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=run)
    _DEFAULTS.update({a.dest: a.default for a in p._actions})


def torch_version() -> str:
    import torch

    return str(torch.__version__)


def _command(args: argparse.Namespace) -> str:
    """The command line as typed (``main``'s argv, global options such as ``-v`` included), without
    ``--resume``: the run's own command, whoever called ``main`` (a test runner's own argv never leaks in)."""
    typed = getattr(args, "argv", None)
    if typed is None:  # a Namespace built without main: the options this command parsed
        typed = ["train"]
    return " ".join(["dialcheck", *(shlex.quote(a) for a in typed if a != "--resume")])


def _machine() -> str:
    return f"{platform.machine()}, {os.cpu_count()} cores, torch {torch_version()}"


def run(args: argparse.Namespace) -> int:
    from ..training.trainer import STATE_FILE

    out = Path(args.out)
    interrupted = any((out / "resume").rglob(STATE_FILE)) or (out / "checkpoint" / "dialcheck.json").exists()
    if args.resume and not interrupted:
        raise InputError("nothing to resume: no resume/ or checkpoint/ folder of an interrupted run", str(out))
    scores_only = bool(getattr(args, "save_teacher_scores", None))  # writes nothing to OUT
    if not scores_only:  # else a path under a file fails at the first checkpoint, after training has begun
        writable_folder(out, "--out")
    if not args.resume and not scores_only and out.exists() and any(out.iterdir()):
        hint = "; it holds an interrupted run: add --resume to continue it" if interrupted else ""
        raise InputError(f"output folder exists and is not empty{hint}", str(out))
    code = _dispatch(args, out)
    if code == 0:
        shutil.rmtree(out / "resume", ignore_errors=True)  # the run finished: its training state is spent
    return code


def _dispatch(args: argparse.Namespace, out: Path) -> int:
    from ..detectors import default_model_path
    from ..detectors.modeling import shipped_or_path

    # a shipped model by its name (`dialcheck models`), wherever the package is installed
    named = [str(f) for f in args.init or []]
    inits = [str(shipped_or_path(f, default_model_path().parent)) for f in named]
    if len(inits) > 1 and args.task not in ("decode", "cdconv", "cascade", "paircheck"):
        raise InputError(
            f"--init takes one folder for --task {args.task}; several apply to --task decode and cdconv (a soup), "
            "cascade and paircheck"
        )
    args.init, args.init_soup = (inits[0] if inits else None), (inits if len(inits) > 1 else None)
    _refuse_other_tasks_options(args)
    if args.full and args.lora:  # the run trained every weight, and --lora R was dropped without a word
        raise InputError(
            f"--full trains every weight and --lora {args.lora} a LoRA adapter of rank {args.lora}: give one"
        )
    args.lora = 16 if args.lora is None else args.lora
    for given, folder in zip(named, inits, strict=True):
        if not Path(folder).exists():  # "dialcheck.json is missing" of a folder that is not there at all
            from ..catalog import repository_only_note

            if (note := repository_only_note(given, "--init")) is not None:  # superseded: not in the wheel
                raise InputError(note)
            raise InputError(
                "--init: no such folder, and no shipped model has that name (dialcheck models lists them)", given
            )
    for folder in inits:  # a damaged weights file is named now, not as a traceback once the data is built
        readable_weights(folder, f"the --init folder {folder}")
    if args.teacher and Path(args.teacher).is_dir():
        readable_weights(args.teacher, f"the --teacher folder {args.teacher}")
    if args.task != "cdconv" and (args.lexical or args.add_lexical or args.speaker_tags or args.with_dev):
        raise InputError("--with-dev, --lexical, --add-lexical and --speaker-tags apply to --task cdconv")
    if args.speaker_tags and args.add_lexical:
        raise InputError("--add-lexical keeps the saved detector's reading; --speaker-tags applies to training")
    if args.half and not (args.task == "decode" or (args.task == "cdconv" and len(inits) > 1)):
        raise InputError("--half applies to --task decode, and to a soup of several --init folders for --task cdconv")
    if args.rank is not None and not ((args.task == "decode" and inits) or (args.task == "cdconv" and len(inits) > 1)):
        raise InputError(
            "--rank cuts the adapter of an --init detector: it applies to --task decode with --init, and to a soup "
            "of several --init folders for --task cdconv"
        )
    if args.lexical_from and not (args.task == "cdconv" and inits and args.epochs == 0):
        raise InputError("--lexical-from applies to --task cdconv with --init and --epochs 0")
    if args.lexical_from and (args.lexical or args.add_lexical):
        raise InputError("--lexical-from copies a fitted lexical head; --lexical and --add-lexical fit a new one")
    if args.rank is not None and args.rank < 1:
        raise InputError(f"--rank must be at least 1, got {args.rank}")
    if args.task != "decode" and args.pair_order:
        raise InputError("--pair-order applies to --task decode (the utterance-based detector)")
    if args.task != "decode" and args.dialogues:
        raise InputError("--dialogues applies to --task decode (the utterance-based detector)")
    if args.task != "cascade" and args.recalibrate:
        raise InputError(
            "--recalibrate applies to --task cascade (a saved model: dialcheck models NAME --save OUT --recalibrate)"
        )
    if args.task not in ("decode", "cascade") and args.calibrate_on:
        raise InputError("--calibrate-on applies to --task decode (the utterance-based detector) and cascade")
    if args.task != "cascade" and (args.runtime or args.prefer_onnx):
        raise InputError("--runtime and --prefer-onnx apply to --task cascade (use --onnx/--int8 where a model runs)")
    if args.task != "paircheck" and (args.tau_pairs is not None or args.veto_below):
        raise InputError("--tau-pairs and --veto-below apply to --task paircheck")
    if args.max_length is not None and args.task not in ("cascade", "paircheck"):
        _check_window(args.max_length, args.init, args.base)
    _warn_base_language(args)
    if args.task == "cascade":
        from ..training.cascade import run_cascade

        return run_cascade(args, out, _command(args), _machine())
    if args.task == "paircheck":
        from ..training.paircheck import run_paircheck

        return run_paircheck(args, out, _command(args), _machine())
    repeats = args.dialogues_repeat or [1]
    if any(n < 1 for n in repeats):
        raise InputError(f"--dialogues-repeat must be at least 1, got {min(repeats)}")
    if len(repeats) > 1 and len(repeats) != len(args.dialogues):
        raise InputError(
            f"--dialogues-repeat given {len(repeats)} times for {len(args.dialogues)} --dialogues file(s): give it "
            "once (every file) or once per file, in the same order"
        )
    args.dialogues_repeat = repeats * len(args.dialogues) if len(repeats) == 1 else repeats
    if args.distill_alpha_by and not args.teacher:  # checked before any data is read
        raise InputError("--distill-alpha-by weighs a teacher's scores: give --teacher")
    if args.save_teacher_scores and not args.teacher:
        raise InputError("--save-teacher-scores writes a teacher's scores: give --teacher")
    if args.teacher and not (Path(args.teacher).is_file() or (Path(args.teacher) / "dialcheck.json").exists()):
        raise InputError("--teacher: neither a saved detector folder nor a teacher-scores file", args.teacher)
    if args.save_teacher_scores and Path(args.teacher).is_file():
        raise InputError("--save-teacher-scores needs a teacher detector folder, not a scores file", args.teacher)
    if args.save_teacher_scores:  # written once every pair is scored: a bad path must fail before that
        if Path(args.save_teacher_scores).is_dir():
            raise InputError("--save-teacher-scores: is a folder; give a file name", args.save_teacher_scores)
        writable_folder(Path(args.save_teacher_scores).parent, "--save-teacher-scores")  # made if missing
    if args.teacher and Path(args.teacher).is_file():  # a scores file: checked before any data is read
        from ..training.distill import read_teacher_scores

        read_teacher_scores(args.teacher)
    if args.task == "cdconv":
        from ..training.cdconv import run_cdconv

        return run_cdconv(args, out, _command(args), _machine())
    if args.task == "ocnli":
        from ..training.nli import run_ocnli

        return run_ocnli(args, out, _command(args), _machine())
    if args.detector in CDCONV_DETECTORS:
        raise InputError(f"--detector {args.detector} applies to --task cdconv")
    if args.task == "citod":
        return run_citod(args, out)
    return run_decode(args, out)


CHINESE_TASKS, ENGLISH_TASKS = ("cdconv", "ocnli"), ("decode", "citod")
ENGLISH_VOCABULARIES = ("all-MiniLM-L6-v2", "all-mpnet-base-v2")  # bases whose vocabulary lacks most Chinese


def _warn_base_language(args: argparse.Namespace) -> None:
    """Warn, before any data is read, when the base cannot read the task's language: a Chinese task (cdconv,
    ocnli) on an English vocabulary without ``+zh`` (most characters become ``[UNK]``: 62.6% of CDConv dev
    tokens under MiniLM's), or an English one (decode, citod) on a ``+zh`` base (its added rows learn nothing, and
    the saved model is taken for a Chinese one). The base is ``--init``'s where given."""
    from ..backbones import canonical_name
    from ..detectors import DEFAULT_MODELS
    from ..detectors.modeling import CONFIG_NAME, DetectorConfig
    from ..vocab import split_base

    if args.task not in (*CHINESE_TASKS, *ENGLISH_TASKS) or args.add_lexical:
        return
    base, of = args.base, ""
    if args.init:
        try:
            base = DetectorConfig.from_file(Path(args.init) / CONFIG_NAME).base
        except Exception:  # the run says what is wrong with --init
            return
        of = f" (of the --init detector {(args.init_soup or [args.init])[0]})"
    if not isinstance(base, str):
        return
    name, ext = split_base(base)
    if args.task in CHINESE_TASKS and ext is None and canonical_name(name) in ENGLISH_VOCABULARIES:
        print(
            f"dialcheck: warning: --task {args.task} trains on Chinese text, but the base {base}{of} has an English "
            "vocabulary that turns most Chinese characters into [UNK] (62.6% of CDConv dev tokens under MiniLM's), so "
            "the model learns little from them; train on all-MiniLM-L6-v2+zh (those characters added, docs/chinese.md)"
            f" or gemma-3-270m, the base of the shipped Chinese default {DEFAULT_MODELS['zh']}",
            file=sys.stderr,
        )
    elif args.task in ENGLISH_TASKS and ext == "zh":
        print(
            f"dialcheck: warning: --task {args.task} trains on English dialogues, but the base {base}{of} adds the "
            "Chinese characters of CDConv (+zh): their rows learn nothing here, and the saved model is taken for a "
            f"Chinese one (check warns on every English dialogue it reads); train on {name} instead",
            file=sys.stderr,
        )


def _refuse_other_tasks_options(args: argparse.Namespace) -> None:
    """Refuse an option of another task's group (``--calibrate-thresholds`` with --task decode, say), and the
    decode options that read another one (--unannotated and --dialogues-repeat read --dialogues, --distill-alpha
    --teacher): each was dropped without a word, so the run trained without what was asked."""
    for task, dests in TASK_OPTIONS.items():
        given = [d for d in dests if d in _DEFAULTS and getattr(args, d, None) != _DEFAULTS[d]]
        if given and args.task != task:
            names = ", ".join("--" + d.replace("_", "-") for d in given)
            raise InputError(f"{names}: {'an option' if len(given) == 1 else 'options'} of --task {task} only")
    needs = [("unannotated", "dialogues"), ("dialogues_repeat", "dialogues"), ("distill_alpha", "teacher")]
    for dest, other in needs:
        if dest in _DEFAULTS and getattr(args, dest, None) != _DEFAULTS[dest] and not getattr(args, other, None):
            raise InputError(f"--{dest.replace('_', '-')} applies with --{other}, which is not given")


def run_decode(args: argparse.Namespace, out: Path) -> int:
    if not args.init_soup and args.rank is None:
        return _run_decode(args, out)
    import tempfile

    from ..training.soup import average_detectors

    folders = args.init_soup or [args.init]
    # the soup (or the cut adapter) lives in a temporary folder (never in OUT: a failed run must leave OUT as it was)
    with tempfile.TemporaryDirectory(prefix="dialcheck-soup-") as tmp:
        # with --half the soup is rounded before calibration, so tau is set on the weights that are stored
        args.init = str(average_detectors(folders, Path(tmp) / "soup", rank=args.rank, half=args.half))
        args.init_soup = folders  # the run records the soup (or the cut) as its start
        what = f"the average of {len(folders)} detectors" if len(folders) > 1 else folders[0]
        cut = ""
        if args.rank is not None:  # as the soup's card says: cut only when it records a rank (soup.py decides)
            soup = json.loads((Path(args.init) / "dialcheck.json").read_text(encoding="utf-8"))
            r = soup["adapter"]["r"]
            cut = (
                f", its adapter cut to rank {r}"
                if "rank" in soup["training"]["init"]
                else f" of rank {r} (exact: --rank {args.rank} cuts nothing)"
            )
        print(f"dialcheck: starting from {what}{cut}", file=sys.stderr)
        return _run_decode(args, out)


def _check_window(max_length: int, init: str | None, base: str) -> None:
    """``--max-length`` no longer than the base reads, checked before any data is read: a longer window trains,
    then fails deep inside the model on the first pair that long. The base is ``--init``'s where given (a fully
    fine-tuned detector is its own)."""
    from ..backbones import base_window, resolve_base
    from ..detectors.modeling import CONFIG_NAME, DetectorConfig

    folder = None
    if init is not None:
        if not (Path(init) / CONFIG_NAME).is_file():
            return  # the run says what is wrong with --init
        old = DetectorConfig.from_file(Path(init) / CONFIG_NAME)
        base, folder = old.base, (None if old.adapter else Path(init))
    limit = base_window(folder or resolve_base(base))
    if limit is not None and max_length > limit:
        what = f"the fully fine-tuned {folder}" if folder else f"the base {base}"
        raise InputError(f"--max-length {max_length}: {what} reads at most {limit} tokens")


def _run_decode(args: argparse.Namespace, out: Path) -> int:
    from ..detectors import UnstructuredDetector, UtteranceDetector
    from ..training import TrainConfig, build_decode_training_data, train_detector
    from ..training.card import init_record, write_model_card

    init = None
    if args.init:
        from ..detectors.base import DetectorConfig

        init = Path(args.init)
        cfg_path = init / "dialcheck.json"
        if not cfg_path.exists():
            raise InputError("--init needs a saved dialcheck detector folder (dialcheck.json is missing)", str(init))
        old = DetectorConfig.from_file(cfg_path)
        kinds = {v: k for k, v in DETECTOR_TYPES.items()}
        if old.detector not in kinds:
            raise InputError(f"--init continues DECODE detectors only, not {old.detector!r}", str(init))
        if args.detector is not None and DETECTOR_TYPES[args.detector] != old.detector:
            # a warm start: the other detector type from the same pair classifier (weights, adapter, base)
            print(f"dialcheck: the {args.detector} detector starts from the weights of {init}", file=sys.stderr)
            args.max_length = args.max_length or (256 if args.detector == "unstructured" else old.max_length)
        else:
            args.detector, args.max_length = kinds[old.detector], old.max_length
        args.base = old.base
        lora = bool(old.adapter and old.adapter.get("type") == "lora")
        args.full, args.lora = not lora, int(old.adapter["r"]) if lora and old.adapter else 0
    if args.epochs < 0 or (args.epochs == 0 and init is None):
        raise InputError(f"--epochs must be positive (0 only with --init, to recalibrate), got {args.epochs}")
    args.detector = args.detector or "utterance"
    args.augment = "random_premise" if args.augment is None else args.augment
    args.batch_size = args.batch_size or 32
    args.max_length = args.max_length or 128
    augment = tuple(a for a in args.augment.split(",") if a)
    if "neighbour" in augment and not args.teacher:
        raise InputError("--augment neighbour adds unlabelled pairs: give --teacher, whose scores are their targets")
    kind = DETECTOR_TYPES[args.detector]
    calibration = None
    if args.calibrate_on:  # read before the training data is built (a minute or more with some --augment)
        if args.detector != "utterance":
            raise InputError("--calibrate-on applies to the utterance-based detector")
        calibration, _ = read_labelled(args.calibrate_on)
        if {e.label for e in calibration} != {True, False}:
            raise InputError("--calibrate-on needs dialogues of both labels (contradiction and not)", args.calibrate_on)
    for f in args.dialogues:
        existing_file(f)
    # --init M --epochs 0 --calibrate-on FILE sets the thresholds on FILE alone: no DECODE pair is trained on or
    # validated with, so the DECODE data (about 10 s to build, its files under --data-dir) is not read, and the
    # counts logged and recorded are FILE's (they were DECODE's validation split's)
    recalibrating = calibration is not None and args.epochs == 0 and not args.dialogues and not args.teacher
    if recalibrating:
        from ..training import DecodeTrainingData

        assert calibration is not None
        positives = sum(bool(e.label) for e in calibration)
        counts = {"calibration_dialogues": len(calibration), "calibration_contradictions": positives}
        data, augment = DecodeTrainingData([], [], [], counts), ()
    else:
        try:
            data = build_decode_training_data(
                args.data_dir, kind, augment, args.validation_fraction, args.seed, args.limit
            )
        except ValueError as e:
            raise InputError(str(e)) from None
    if args.dialogues:
        if args.detector != "utterance":
            raise InputError("--dialogues applies to the utterance-based detector")
        if args.unannotated == "top" and init is None:
            raise InputError("--unannotated top needs --init: the detector that picks the evidence turn")
        scorer = str(init) if args.unannotated == "top" else None
        if scorer is not None:
            set_threads(args.threads)  # the --init detector scores the unannotated contradictions first
        _add_own_dialogues(data, args.dialogues, args.dialogues_repeat, "reverse" in augment, scorer)
    what = f"calibration data ({args.calibrate_on}; no training at --epochs 0)" if recalibrating else "training data"
    print(f"dialcheck: {what} {json.dumps(data.counts)}", file=sys.stderr)
    if not data.train and args.epochs:  # fit_pair_model's "no training pairs" was a ValueError traceback
        raise InputError(
            f"no training pairs: all {args.limit or 'DECODE'} train dialogues were held out (--validation-fraction "
            f"{args.validation_fraction}); give a larger --limit or a smaller --validation-fraction"
        )
    rank = 0 if args.full else args.lora
    adapter = {"type": "lora", "r": rank, "alpha": 2 * rank, "dropout": 0.1} if rank > 0 else None
    cls = UnstructuredDetector if args.detector == "unstructured" else UtteranceDetector
    if init is not None:
        adapter = dict(old.adapter) if old.adapter else None
    if args.half and adapter is None:
        raise InputError("--half stores a LoRA adapter in float16; this detector is fully fine-tuned")
    det = cls(base=args.base, adapter=adapter, max_length=args.max_length)
    order = args.pair_order or (old.options.get("pair_order", "forward") if init is not None else "forward")
    if order != "forward":
        if cls is not UtteranceDetector:
            raise InputError("--pair-order applies to the utterance-based detector only")
        det.pair_order = order
    if init is not None and cls is UtteranceDetector:  # the other readings of the --init model carry over
        for reading in UtteranceDetector.reading_options():
            if reading != "pair_order" and reading in old.options:  # pair_order: above, --pair-order first
                setattr(det, reading, old.options[reading])
    cfg = TrainConfig.from_args(args)
    info = {
        "command": _command(args),
        "augment": list(augment),
        "split_seed": args.seed,
        "counts": data.counts,
        "data": f"none (--epochs 0): the --init detector's weights, recalibrated on {args.calibrate_on}"
        if recalibrating
        else (
            ("synthetic speaker-tagged histories built from " if args.detector == "unstructured" else "")
            + "DECODE train utterance pairs (decode.train_pairs.v1)"
            + "".join(f" + {a}" for a in augment)
            + "".join(
                f" + labelled dialogues {f}" + (f" x{n}" if n > 1 else "")
                for f, n in zip(args.dialogues, args.dialogues_repeat, strict=True)
            )
            + (" (unannotated contradictions: the --init detector's top pair)" if args.unannotated == "top" else "")
        ),
        "machine": _machine(),
        "date": dt.date.today().isoformat(),
    }
    validation_dialogues = data.validation_dialogues if cls is UtteranceDetector else None
    if calibration is not None:
        validation_dialogues = calibration
        info["calibration_file"] = args.calibrate_on
    _warn_validation(args, validation_dialogues, data.validation, cls.names_evidence)
    teacher_scores, alpha_by = None, None
    if args.teacher:
        from ..training.distill import parse_alpha_by, teacher_pair_scores
        from ..training.trainer import teacher_needed

        alpha_by = parse_alpha_by(args.distill_alpha_by, [p.source for p in data.train])
        # the teacher scores only the pairs whose target reads its score (the batch order is fixed by the seed)
        needed = teacher_needed(data.train, cfg, args.distill_alpha, alpha_by)
        only = None if needed.all() else needed.nonzero()[0]
        teacher_scores = teacher_pair_scores(
            args.teacher, data.train, show_progress_bar=not args.no_progress, only=only
        )
        info["teacher"] = args.teacher
        if args.save_teacher_scores:
            return _save_scores(args, data.train, teacher_scores, only)
        if Path(args.teacher).is_file():
            info["teacher_scores_meta"] = _check_scores_file(
                args.teacher, data.train, teacher_scores, needed, cfg.epochs
            )
    if init is not None:
        info["init"] = old.training["init"] if args.init_soup else init_record(args.init, old)
    train_detector(
        det,
        data.train,
        data.validation,
        validation_dialogues,
        cfg,
        data_info=info,
        show_progress_bar=not args.no_progress,
        teacher_scores=teacher_scores,
        distill_alpha=args.distill_alpha,
        distill_alpha_by=alpha_by,
        init=init,
        checkpoint=out / "checkpoint",
        resume_dir=out / "resume",
        resume=args.resume,
    )
    half = args.half
    if init is not None and args.epochs == 0 and not half and not args.init_soup:
        from ..detectors.modeling import stored_in_half

        # recalibration only: the weights are unchanged, so keep them in the precision they were stored in
        half = stored_in_half(init)
    det.save(out, half=half)
    write_model_card(out, det.config)
    shutil.rmtree(out / "checkpoint", ignore_errors=True)
    print(f"dialcheck: saved {out} ({json.dumps(det.config.metrics)})", file=sys.stderr)
    return 0


def _warn_validation(args: argparse.Namespace, dialogues: Any, pairs: Any, evidence: bool = True) -> None:
    """Say so when the run has nothing to validate on, or one label only (a small ``--limit``): it would save a
    model whose thresholds were never set (0.5), or set on one class, with exit 0 and no word. ``evidence``:
    the detector names evidence turns and has eta_e beside tau (the unstructured detector has tau only)."""
    labels = {e.label for e in dialogues} if dialogues is not None else {p.label == 1 for p in pairs}
    what = "validation dialogues" if dialogues is not None else "validation pairs"
    where = f" (--limit {args.limit} leaves none held out at --validation-fraction {args.validation_fraction})"
    if not labels:
        thresholds, verb = ("tau and eta_e", "are") if evidence else ("tau", "is")
        kept = f"the --init detector's {verb} kept" if args.init else f"the default, 0.5, {verb} kept"
        print(
            f"dialcheck: warning: no {what}{where if args.limit else ''}: no early stopping, and {thresholds} "
            f"{verb} set on nothing ({kept}); give a larger --limit or --calibrate-on FILE",
            file=sys.stderr,
        )
    elif len(labels) == 1:
        kind = "contradictions" if True in labels else "consistent"
        print(
            f"dialcheck: warning: the {what} are all {kind}: tau is chosen on one class and means little; give a "
            "larger --limit or --calibrate-on FILE",
            file=sys.stderr,
        )


def _add_own_dialogues(
    data: Any, files: list[str], repeats: list[int], reverse: bool = False, scorer: str | None = None
) -> None:
    """Append the pairs of the user's labelled dialogues to the training pairs (each file ``repeats[i]`` times); with
    ``reverse`` (the augmentation) half of them are read backwards, like the rest of the training pairs;
    with ``scorer`` (a detector folder) contradictions without evidence get its top-scored turn as evidence."""
    from ..training.data import labelled_dialogue_pairs, reverse_half, top_pair_evidence

    det = None
    if scorer is not None:
        from ..api import load

        det = load(scorer)
    for f, repeat in zip(files, repeats, strict=True):
        examples, skipped = read_labelled(f)
        if det is not None:
            guess = [i for i, e in enumerate(examples) if e.label and not e.evidence]
            verdicts = det.predict([examples[i].dialogue for i in guess])
            for i, e in zip(guess, top_pair_evidence([examples[i] for i in guess], verdicts), strict=True):
                examples[i] = e
            print(f"dialcheck: {f}: evidence of {len(guess)} contradiction(s) taken from {scorer}", file=sys.stderr)
        pairs, no_evidence = labelled_dialogue_pairs(examples, source="dialogues")
        if not pairs:
            raise InputError(
                f"no training pair in {len(examples)} labelled dialogue(s) ({no_evidence} contradictions "
                "without evidence turns, which give no pair)",
                f,
            )
        if no_evidence:
            print(
                f"dialcheck: {f}: {no_evidence} contradiction(s) name no evidence turns and give no training pair",
                file=sys.stderr,
            )
        data.train.extend((reverse_half(pairs) if reverse else pairs) * repeat)
        for p in pairs:
            data.counts[p.source] = data.counts.get(p.source, 0) + repeat
        data.counts["dialogues_skipped"] = data.counts.get("dialogues_skipped", 0) + skipped


def _save_scores(args: argparse.Namespace, pairs: list, scores: Any, only: Any) -> int:
    from ..training.distill import save_teacher_scores, teacher_sha256

    meta = {
        "teacher": str(args.teacher),
        "teacher_sha256": teacher_sha256(args.teacher),
        "command": _command(args),
        "pairs_scored": "all training pairs"
        if only is None
        else "the pairs this run reads whose target the teacher weighs in on (weight > 0)",
        "machine": _machine(),
        "date": dt.date.today().isoformat(),
    }
    from ..io import counted

    n = save_teacher_scores(args.save_teacher_scores, pairs, scores, meta, only=only)
    print(
        f"dialcheck: wrote {counted(n, 'teacher score')} to {args.save_teacher_scores}; "
        "train the student from them with "
        f"the same command, --teacher {args.save_teacher_scores} in place of --save-teacher-scores",
        file=sys.stderr,
    )
    return 0


def _check_scores_file(path: str, pairs: Any, scores: Any, needed: Any, epochs: float) -> dict:
    """The provenance of a scores file given as --teacher, after checking it scores the pairs the run reads."""
    from ..training.distill import teacher_scores_meta
    from ..training.trainer import unscored_pairs_left_out

    if epochs > 0:  # epochs 0 (recalibration) reads no targets
        try:
            unscored_pairs_left_out(pairs, scores, needed, warn=False)  # train_detector warns
        except ValueError as e:
            raise InputError(
                f"{e} (of {int(needed.sum())} it reads from the teacher): the file was written for another data "
                "mix, --seed, --epochs, --batch-size or --limit",
                path,
            ) from None
    return teacher_scores_meta(path)


def run_citod(args: argparse.Namespace, out: Path) -> int:
    from ..detectors import GroundedDetector
    from ..training import TrainConfig
    from ..training.citod import build_citod_training_data, check_vocabulary, train_grounded, write_citod_card

    if args.detector is not None:
        raise InputError("--detector applies to --task decode only (CI-ToD has one detector type)")
    if getattr(args, "teacher", None):
        raise InputError("--teacher applies to --task decode only")
    if args.init:  # it was dropped without a word: the run trained a new adapter from --base
        raise InputError("--init does not apply to --task citod, which trains from --base")
    if args.epochs == 0:  # it saved the untrained adapter and head, its thresholds set on their scores, with exit 0
        raise InputError("--epochs 0 recalibrates an --init detector (decode, cdconv); --task citod needs more epochs")
    augment = tuple(a for a in ("kbi" if args.augment is None else args.augment).split(",") if a)
    domains = tuple(d for d in args.domains.split(",") if d)
    data = build_citod_training_data(args.data_dir, domains, augment, args.seed, args.limit)
    print(f"dialcheck: training data {json.dumps(data.counts)}", file=sys.stderr)
    rank = 0 if args.full else args.lora
    adapter: dict[str, Any] | None = {"type": "lora", "r": rank, "alpha": 2 * rank, "dropout": 0.1} if rank else None
    if adapter is not None and args.lora_top > 0:
        from ..training.citod import top_layer_targets

        adapter["target_modules"] = top_layer_targets(args.base, args.lora_top)
    det = GroundedDetector(
        base=args.base,
        adapter=adapter,
        max_length=args.max_length or 256,
        history=not args.no_history,
        selection=args.row_selection,
        marks=args.marks,
        checks=args.checks,
        vocabulary=check_vocabulary(args.data_dir) if args.checks else None,
    )
    cfg = TrainConfig.from_args(args, 16, **({"calibrate_thresholds": True} if args.calibrate_thresholds else {}))
    info = {
        "command": _command(args),
        "augment": list(augment),
        "data": "CI-ToD KBRetriever_DC train: "
        + ", ".join(domains)
        + "".join(f" + {a}" for a in augment)
        + "; early stopping on their dev sets; weather unseen (no labelled weather train split exists)",
        "machine": _machine(),
        "date": dt.date.today().isoformat(),
    }
    train_grounded(
        det,
        data,
        cfg,
        data_info=info,
        show_progress_bar=not args.no_progress,
        resume_dir=out / "resume",
        resume=args.resume,
    )
    det.save(out)
    write_citod_card(out, det.config)
    print(f"dialcheck: saved {out} ({json.dumps(det.config.metrics)})", file=sys.stderr)
    return 0
