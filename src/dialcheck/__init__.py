"""dialcheck: find where a chatbot contradicts itself, with the evidence turns."""

import importlib
from typing import Any

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

# Subpackages a user reaches as attributes after a bare `import dialcheck` (`dialcheck.serve.ComputeThread()`, as the
# README writes it, was an AttributeError): imported on first use, so `import dialcheck` stays as light as it was.
_LAZY = ("batch", "serve")


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
