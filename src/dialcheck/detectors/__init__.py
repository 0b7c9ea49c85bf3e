"""Contradiction detectors on one pair-classification core, registered under versioned names."""

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
    "zh": "cdconv-flat-zh-v2",
}


def default_model_path(language: str = "en") -> Path:
    """Folder of the shipped default detector for ``language`` (``"tod"``: task-oriented, with knowledge;
    ``"zh"``: Chinese four-category, CDConv)."""
    return _MODELS / DEFAULT_MODELS[language]
