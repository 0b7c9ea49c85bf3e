"""NLI pre-training: a two-label pair classifier (contradiction vs. not) trained on OCNLI, from which
the CDConv detectors start (``dialcheck train --task ocnli``, then ``--task cdconv --init FOLDER``).

The result is saved as an ordinary pair contradiction detector (``decode.utterance.v1``, option
``nli="ocnli"``): its adapter, head and added vocabulary are what :func:`dialcheck.detectors.modeling.load_pretrained`
copies into each CDConv classifier. ``tau`` is set on OCNLI dev by balanced accuracy.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from ..detectors.base import Detector
from ..errors import InputError
from ..schema import Pair
from .trainer import TrainConfig, train_detector

__all__ = ["pretrain_nli", "run_ocnli"]

log = logging.getLogger(__name__)


def pretrain_nli(
    train: Sequence[Pair],
    dev: Sequence[Pair] = (),
    base: str = "all-MiniLM-L6-v2+zh",
    adapter: dict[str, Any] | None = None,
    max_length: int = 128,
    config: TrainConfig | None = None,
    data_info: dict[str, Any] | None = None,
    show_progress_bar: bool = False,
    source: str = "ocnli",
    resume_dir: Any = None,
    resume: bool = False,
) -> Detector:
    """Train a two-label pair classifier on NLI ``train`` pairs (early stopping and ``tau`` on ``dev``);
    ``resume_dir`` / ``resume`` as in :func:`~dialcheck.training.trainer.train_detector`."""
    from ..detectors import UtteranceDetector

    if not train:
        raise InputError("no NLI training pairs")
    adapter = adapter if adapter is not None else {"type": "lora", "r": 16, "alpha": 32, "dropout": 0.1}
    det = UtteranceDetector(base=base, adapter=adapter, max_length=max_length, nli=source)
    return train_detector(
        det,
        list(train),
        list(dev) or None,
        None,
        config,
        data_info=data_info,
        show_progress_bar=show_progress_bar,
        resume_dir=resume_dir,
        resume=resume,
    )


def run_ocnli(args: Any, out: Any, command: str = "", machine: str = "") -> int:
    """``dialcheck train --task ocnli``: pre-train a pair classifier on OCNLI train.10k (dev for early stopping)."""
    import datetime as dt
    import json
    import sys
    from pathlib import Path

    from ..datasets import load_dataset
    from .card import write_model_card

    if args.detector or getattr(args, "teacher", None) or args.augment or getattr(args, "init", None):
        raise InputError("--detector, --teacher, --augment and --init do not apply to --task ocnli")
    train = load_dataset("ocnli.train.v1", args.data_dir)
    dev = load_dataset("ocnli.dev.v1", args.data_dir)
    if args.limit:
        train, dev = train[: args.limit], dev[: max(1, args.limit // 4)]
    rank = 0 if args.full else args.lora
    if rank <= 0:
        raise InputError("--task ocnli pre-trains a LoRA adapter (the CDConv detectors start from it): use --lora R")
    adapter = {"type": "lora", "r": rank, "alpha": 2 * rank, "dropout": 0.1}
    cfg = TrainConfig.from_args(args)
    info = {
        "command": command,
        "data": "OCNLI train.10k (ocnli.train.v1; entailment + neutral = non-contradiction), dev ocnli.dev.v1",
        "machine": machine,
        "date": dt.date.today().isoformat(),
    }
    print(f"dialcheck: pre-training on {len(train)} OCNLI pairs, dev {len(dev)}", file=sys.stderr)
    det = pretrain_nli(
        train,
        dev,
        args.base,
        adapter,
        args.max_length or 128,
        cfg,
        info,
        show_progress_bar=not args.no_progress,
        resume_dir=Path(out) / "resume",
        resume=getattr(args, "resume", False),
    )
    det.save(out)
    write_model_card(Path(out), det.config)
    print(f"dialcheck: saved {out} ({json.dumps(det.config.metrics)})", file=sys.stderr)
    return 0
