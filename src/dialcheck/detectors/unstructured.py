"""Unstructured detector of DECODE: the whole speaker-tagged history against the last turn.

The history is the first segment, each turn prefixed by ``same:`` (said by the last turn's speaker) or
``other:``; the last turn is the second segment. When the pair exceeds the window the history loses its
oldest tokens; the last turn is kept whole. It gives a score but no evidence turns.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..io import as_dialogues
from ..schema import Dialogue, Verdict
from .base import Detector, register_detector

__all__ = ["UnstructuredDetector", "history_text"]


def history_text(d: Dialogue) -> str:
    """The first segment: the history with relative speaker tags, oldest first.

    >>> history_text(Dialogue.from_texts(["I have a cat.", "Nice.", "I never had pets."]))
    'same: I have a cat. other: Nice.'
    """
    speaker = d.turns[-1].speaker
    return " ".join(f"{'same' if t.speaker == speaker else 'other'}: {t.text}" for t in d.turns[:-1])


@register_detector("decode.unstructured.v1")
class UnstructuredDetector(Detector):
    """Unstructured detector: one (tagged history, last turn) pair per dialogue."""

    truncation_side = "left"
    names_evidence = False

    def predict(
        self, dialogues: Sequence[Dialogue], batch_size: int = 32, show_progress_bar: bool = False
    ) -> list[Verdict]:
        dialogues = as_dialogues(dialogues)
        pairs = [(history_text(d), d.turns[-1].text) for d in dialogues]
        scores = self.classifier.score(pairs, batch_size=batch_size, show_progress_bar=show_progress_bar)
        out = []
        for d, s in zip(dialogues, scores, strict=True):
            has_history = len(d.turns) > 1
            score = float(s) if has_history else 0.0
            out.append(Verdict(has_history and score >= self.tau, score, (), None, {}))
        return out
