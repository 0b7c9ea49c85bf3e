"""Analyses of generators and detectors: Certainty and Variety of n-best lists, the yes/no answer
classifier that judges replies, tables and plots. Models load lazily."""

from .nbest import certainty, has_ambiguous, summarize, variety
from .report import markdown_table, plot_certainty_variety

__all__ = ["certainty", "has_ambiguous", "markdown_table", "plot_certainty_variety", "summarize", "variety"]
