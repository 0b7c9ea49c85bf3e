"""scikit-learn for the lexical baselines (not a dialcheck dependency): the pieces, or an error naming the install."""

from __future__ import annotations

from typing import Any

from dialcheck.errors import MissingDependencyError


def sklearn_parts() -> tuple[Any, Any, Any, Any]:
    """``(csr_matrix, hstack, TfidfVectorizer, LogisticRegression)``; without scikit-learn a
    :class:`MissingDependencyError` that names the ``pip install`` (``_cli.run`` prints it and exits 2)."""
    try:
        from scipy.sparse import csr_matrix, hstack
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression
    except ImportError as e:
        raise MissingDependencyError("this baseline needs scikit-learn: pip install scikit-learn") from e
    return csr_matrix, hstack, TfidfVectorizer, LogisticRegression
