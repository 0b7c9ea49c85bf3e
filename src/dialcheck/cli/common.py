"""Options and helpers shared by several subcommands."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import InputError


def add_model_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--model",
        "-m",
        default=None,
        help="detector folder (default: the shipped English detector, or the task-oriented one for dialogues "
        "with knowledge)",
    )
    p.add_argument("--tau", type=float, default=None, help="decision threshold (default: the model's)")
    p.add_argument("--eta-e", type=float, default=None, help="evidence threshold (default: the model's)")
    p.add_argument("--batch-size", type=int, default=64, help="pairs per forward pass (default 64)")


def load_for(args: argparse.Namespace, language: str = "en") -> Any:
    from ..api import load

    det = load(args.model, language=language)
    configure(det, args)
    return det


def configure(det: Any, args: argparse.Namespace) -> None:
    """Apply the command line's threshold overrides to a detector."""
    if args.tau is not None:
        det.tau = _prob(args.tau, "--tau")
    if args.eta_e is not None:
        det.eta_e = _prob(args.eta_e, "--eta-e")


def predict_for(args: argparse.Namespace, dialogues: Sequence[Any]) -> list[Any]:
    """Verdicts from ``--model``, or from the shipped default each dialogue routes to (see ``api.route``)."""
    from ..api import predict

    return predict(dialogues, args.model, args.batch_size, configure=lambda det: configure(det, args))


def _prob(v: float, name: str) -> float:
    if not 0.0 <= v <= 1.0:
        raise InputError(f"{name} must lie in [0, 1], got {v}")
    return v


def existing_file(path: str) -> Path:
    p = Path(path)
    if str(path) != "-" and not p.is_file():
        raise InputError("no such file", path)
    return p
