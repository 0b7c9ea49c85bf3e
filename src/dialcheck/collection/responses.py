"""Collect replies to selected contexts from several generators, recording which one produced each.

A generator is anything with ``generate(contexts, config, speaker=...)`` returning n-best lists of
candidates with a ``text`` -- :class:`dialcheck.generation.NBestGenerator` (local HF causal LMs) and
:class:`dialcheck.generation.OpenAIChatGenerator` (OpenAI-compatible endpoints) both qualify. With a
``detector``, each reply is the candidate among the n-best (e.g. top-p samples) that the detector
finds most contradictory (the paper's appendix D setting); otherwise the first candidate.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..schema import Turn
from .records import CollectedReply, CollectionContext

__all__ = ["GeneratorSpec", "collect_responses", "label_with_detector"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class GeneratorSpec:
    """A named generator and how to decode with it (e.g. ``"greedy"``, ``"nucleus10"``)."""

    name: str
    generator: Any
    decoding: Any = "greedy"
    pick_most_contradictory: bool = False


def collect_responses(
    contexts: Sequence[CollectionContext],
    generators: Sequence[GeneratorSpec],
    detector: Any = None,
    batch_size: int = 4,
    show_progress_bar: bool = False,
) -> list[CollectedReply]:
    """One reply per (context, generator), spoken by the referent's speaker, in context order."""
    names = [spec.name for spec in generators]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:  # out[(context, name)] below: a second generator of one name would replace the first's replies
        raise ValueError(f"generator name {twice[0]!r} is used twice: each generator needs its own name")
    by_speaker: dict[str, list[int]] = {}
    for i, c in enumerate(contexts):
        by_speaker.setdefault(c.reply_speaker, []).append(i)
    out: dict[tuple[int, str], CollectedReply] = {}
    for spec in generators:
        if spec.pick_most_contradictory and detector is None:
            raise ValueError(f"generator {spec.name}: picking the most contradictory candidate needs a detector")
        for speaker, idx in by_speaker.items():
            lists = spec.generator.generate(
                [contexts[i].dialogue for i in idx],
                spec.decoding,
                batch_size=batch_size,
                speaker=speaker,
                show_progress_bar=show_progress_bar,
            )
            for i, cands in zip(idx, lists, strict=True):
                texts = [c.text for c in cands if c.text.strip()] or [""]
                meta: dict[str, Any] = {"candidates": len(texts)}
                text = texts[0]
                if spec.pick_most_contradictory and len(texts) > 1:
                    ranked = detector.rank(contexts[i].dialogue, texts, speaker=speaker)
                    text = ranked[-1].text
                    meta["detector_score"] = round(float(ranked[-1].verdict.score), 6)
                c = contexts[i]
                out[(i, spec.name)] = CollectedReply(
                    id=f"{c.id}/{spec.name}",
                    context_id=c.id,
                    generator=spec.name,
                    turns=(*c.history, *c.turns, Turn(speaker, text)),
                    referent=len(c.history),
                    meta={**meta, "selection": c.selection, "distance": c.distance},
                )
        log.info("generator %s: %d replies", spec.name, len(contexts))
    return [out[(i, g.name)] for i in range(len(contexts)) for g in generators]


def label_with_detector(replies: Sequence[CollectedReply], detector: Any, batch_size: int = 64) -> list[CollectedReply]:
    """Replies labelled by a detector standing in for annotators: contradictory when the reply
    contradicts its referent (pair score >= the detector's ``tau``). ``votes`` stays ``None`` and
    ``meta["labelled_by"]`` says that no human was involved."""
    from dataclasses import replace

    verdicts = detector.predict([r.dialogue for r in replies], batch_size=batch_size)
    out = []
    for r, v in zip(replies, verdicts, strict=True):
        s = float(v.pair_scores.get(r.referent, v.score))
        meta: Mapping[str, Any] = {**r.meta, "labelled_by": "detector", "detector_score": round(s, 6)}
        out.append(replace(r, label=s >= detector.tau, votes=None, meta=meta))
    return out
