"""Candidate replies: n-best lists from causal LMs or chat endpoints, and re-ranking by a detector.

Heavy pieces load lazily: importing this package does not import torch or transformers.
"""

from .nbest import STRATEGIES, Candidate, DecodingConfig, NBestGenerator
from .openai import OpenAIChatGenerator
from .rerank import POLICIES, RerankedCandidate, RerankResult, rerank, rerank_many

__all__ = [
    "POLICIES",
    "STRATEGIES",
    "Candidate",
    "DecodingConfig",
    "NBestGenerator",
    "OpenAIChatGenerator",
    "RerankResult",
    "RerankedCandidate",
    "rerank",
    "rerank_many",
]
