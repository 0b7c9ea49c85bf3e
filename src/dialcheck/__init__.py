"""dialcheck: find where a chatbot contradicts itself, with the evidence turns."""

from .api import check, load, predict, route
from .generation.rerank import rerank
from .schema import Dialogue, Example, KnowledgeBase, Pair, Turn, Verdict

__version__ = "0.1.0"
__all__ = [
    "Dialogue",
    "Example",
    "KnowledgeBase",
    "Pair",
    "Turn",
    "Verdict",
    "__version__",
    "check",
    "load",
    "predict",
    "rerank",
    "route",
]
