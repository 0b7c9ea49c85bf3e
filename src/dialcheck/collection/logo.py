"""Leave-one-generator-out evaluation: train on the replies of all generators but one, test on it.

Training rows that share a context with any test row are excluded, so that a detector never sees the
test contexts. Pairs follow the paper's appendix J: a contradictory reply is paired with its referent
(label 1); a non-contradictory reply with a random earlier utterance of the same speaker (label 0).

>>> from dialcheck.schema import Turn
>>> t = (Turn("A", "I have a cat."), Turn("B", "What is its name?"), Turn("A", "I have no pets."))
>>> r = CollectedReply("r1", "c1", "g1", t, 0, True)
>>> reply_pairs([r])[0].label, reply_pairs([r])[0].first
(1, 'I have a cat.')
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..schema import Pair
from .records import CollectedReply

__all__ = ["LogoResult", "LogoSplit", "leave_one_generator_out", "logo_splits", "reply_pairs"]

log = logging.getLogger(__name__)


def reply_pairs(replies: Sequence[CollectedReply], seed: int = 0) -> list[Pair]:
    """One pair per labelled reply (unlabelled ones are skipped); ``group`` is the context id."""
    rng = random.Random(seed)
    out = []
    for r in replies:
        if r.label is None:
            continue
        if r.label:
            first = r.referent_turn.text
        else:
            same = r.dialogue.same_speaker_indices() or [r.referent]
            first = r.turns[rng.choice(same)].text
        out.append(Pair(first, r.reply.text, int(r.label), source=r.generator, group=r.context_id))
    return out


@dataclass(frozen=True)
class LogoSplit:
    """Train/test replies for one held-out generator; ``excluded`` training rows shared a test context."""

    generator: str
    train: tuple[CollectedReply, ...]
    test: tuple[CollectedReply, ...]
    excluded: int


def logo_splits(replies: Sequence[CollectedReply]) -> list[LogoSplit]:
    """One split per generator (sorted by name), labelled replies only."""
    labelled = [r for r in replies if r.label is not None]
    out = []
    for g in sorted({r.generator for r in labelled}):
        test = tuple(r for r in labelled if r.generator == g)
        test_contexts = {r.context_id for r in test}
        rest = [r for r in labelled if r.generator != g]
        train = tuple(r for r in rest if r.context_id not in test_contexts)
        out.append(LogoSplit(g, train, test, len(rest) - len(train)))
    return out


@dataclass(frozen=True)
class LogoResult:
    """Accuracy on one held-out generator."""

    generator: str
    train_pairs: int
    test_pairs: int
    excluded: int
    accuracy: float
    positives: int  # contradictory test pairs

    def to_dict(self) -> dict[str, Any]:
        return {
            "generator": self.generator,
            "train_pairs": self.train_pairs,
            "test_pairs": self.test_pairs,
            "excluded_train_rows": self.excluded,
            "contradictory_test_pairs": self.positives,
            "accuracy": round(self.accuracy, 4),
        }


def leave_one_generator_out(
    replies: Sequence[CollectedReply],
    make_detector: Callable[[list[Pair]], Any],
    seed: int = 0,
    batch_size: int = 64,
) -> list[LogoResult]:
    """Per-generator accuracy. ``make_detector(train_pairs)`` returns a fitted detector (e.g.
    ``lambda pairs: UtteranceDetector(base=...).fit(pairs)``); its pair scores are thresholded at its ``tau``.
    """
    results = []
    for split in logo_splits(replies):
        train = reply_pairs(split.train, seed)
        test = reply_pairs(split.test, seed)
        if not train or not test:
            log.warning("generator %s: %d train / %d test pairs, skipped", split.generator, len(train), len(test))
            continue
        det = make_detector(train)
        scores = det.classifier.score([(p.first, p.second) for p in test], batch_size=batch_size)
        correct = sum((float(s) >= det.tau) == bool(p.label) for s, p in zip(scores, test, strict=True))
        results.append(
            LogoResult(
                split.generator, len(train), len(test), split.excluded, correct / len(test), sum(p.label for p in test)
            )
        )
        log.info("held out %s: accuracy %.4f on %d pairs", split.generator, results[-1].accuracy, len(test))
    return results
