"""One-call entry points for engineers: :func:`check` a dialogue, :func:`load` a detector.

>>> import dialcheck
>>> v = dialcheck.check(["I have two dogs.", "Nice!", "What do you do?", "I have never owned a pet."])  # doctest: +SKIP
>>> v.contradiction, v.evidence  # doctest: +SKIP
(True, (1,))
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .detectors import Detector, default_model_path, load_detector
from .errors import ModelError
from .io import parse_dialogue
from .schema import Dialogue, Verdict

__all__ = ["check", "load"]


def _offline() -> None:
    # Never reach for a model hub: every model here is local.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@functools.lru_cache(maxsize=4)
def _cached(path: str) -> Detector:
    return load_detector(path)


def load(model: str | Path | None = None, language: str = "en") -> Detector:
    """A detector from a folder, or the shipped default for ``language`` (cached per process)."""
    _offline()
    if model is None or str(model) == "default":
        path = default_model_path(language)
        if not path.exists():
            raise ModelError(f"the shipped default model is missing at {path}; reinstall dialcheck")
        return _cached(str(path))
    return _cached(str(Path(model).resolve()))


def check(dialogue: Dialogue | Sequence[Any] | dict[str, Any], model: str | Path | None = None) -> Verdict:
    """Does the last turn contradict the conversation? Accepts a :class:`Dialogue`, a list of strings
    (alternating speakers) or a ``{"turns": [...]}`` object."""
    d = dialogue if isinstance(dialogue, Dialogue) else parse_dialogue(dialogue)
    return load(model).predict([d])[0]
