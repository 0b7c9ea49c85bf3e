"""Utterance-based (structured) detector of DECODE: the last turn against each earlier turn.

Each earlier turn of the last speaker (or of every speaker, with ``speakers="all"``) is paired with the
last turn; the dialogue score is the maximum pair score and the evidence is every turn whose pair score
reaches ``eta_e``. Pairs of many dialogues are scored in shared batches. With the option
``pair_order="both"`` each pair is also read the other way round (last turn first) and the two scores are
averaged: twice the cost, and a reading less tied to how the checked turn is phrased.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..schema import Dialogue, Verdict
from .base import Detector, register_detector

__all__ = ["PAIR_ORDERS", "UtteranceDetector"]

PAIR_ORDERS = ("forward", "both")


@register_detector("decode.utterance.v1")
class UtteranceDetector(Detector):
    """Structured detector: score = max over (earlier turn, last turn) pairs; evidence = pairs >= eta_e."""

    truncation_side = "right"

    @property
    def pair_order(self) -> str:
        """``"forward"`` (earlier turn first, as trained) or ``"both"`` (mean of the two readings)."""
        return str(self.config.options.get("pair_order", "forward"))

    @pair_order.setter
    def pair_order(self, value: str) -> None:
        if value not in PAIR_ORDERS:
            raise ValueError(f"pair_order must be one of {', '.join(PAIR_ORDERS)}, got {value!r}")
        if value == "forward":
            self.config.options.pop("pair_order", None)
        else:
            self.config.options["pair_order"] = value

    def _indices(self, d: Dialogue) -> list[int]:
        if self.config.options.get("speakers", "same") == "all":
            return list(range(len(d.turns) - 1))
        return d.same_speaker_indices()

    def predict(
        self, dialogues: Sequence[Dialogue], batch_size: int = 64, show_progress_bar: bool = False
    ) -> list[Verdict]:
        pairs: list[tuple[str, str]] = []
        spans: list[tuple[list[int], int]] = []
        for d in dialogues:
            idx = self._indices(d)
            spans.append((idx, len(pairs)))
            last = d.turns[-1].text
            pairs.extend((d.turns[i].text, last) for i in idx)
        if self.pair_order == "both":
            # each pair read in both orders and the two scores averaged: the classifier is order-sensitive.
            # One call, so that a pair and its reverse (same length) share the length-sorted batches.
            both = self.classifier.score(
                pairs + [(b, a) for a, b in pairs], batch_size=batch_size, show_progress_bar=show_progress_bar
            )
            n = len(pairs)
            scores = [(float(f) + float(b)) / 2 for f, b in zip(both[:n], both[n:], strict=True)]
        else:
            scores = self.classifier.score(pairs, batch_size=batch_size, show_progress_bar=show_progress_bar)
        return [
            decide(
                {i: float(v) for i, v in zip(idx, scores[start : start + len(idx)], strict=True)}, self.tau, self.eta_e
            )
            for idx, start in spans
        ]


def decide(pair_scores: dict[int, float], tau: float, eta_e: float) -> Verdict:
    """The utterance-based verdict from pair scores: max >= ``tau`` flags; evidence = pairs >= ``eta_e``.

    A flagged dialogue always names at least its strongest pair.

    >>> decide({0: 0.2, 2: 0.9}, tau=0.5, eta_e=0.95).evidence
    (2,)
    """
    score = max(pair_scores.values(), default=0.0)
    contradiction = bool(pair_scores) and score >= tau
    evidence: tuple[int, ...] = ()
    if contradiction:
        evidence = tuple(i for i in pair_scores if pair_scores[i] >= eta_e) or (
            max(pair_scores, key=pair_scores.__getitem__),
        )
    return Verdict(contradiction, score, evidence, None, pair_scores)
