"""scikit-learn for the lexical baselines (not a dialcheck dependency): the pieces, or a message and None."""

from __future__ import annotations

import sys
from typing import Any


def sklearn_parts() -> tuple[Any, Any, Any, Any] | None:
    """``(csr_matrix, hstack, TfidfVectorizer, LogisticRegression)``, or None after telling how to install."""
    try:
        from scipy.sparse import csr_matrix, hstack
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression
    except ImportError:
        print("this baseline needs scikit-learn: pip install scikit-learn", file=sys.stderr)
        return None
    return csr_matrix, hstack, TfidfVectorizer, LogisticRegression
