"""Re-rank or filter candidate replies by a contradiction detector, whatever produced them.

>>> from dialcheck.schema import Verdict
>>> class Fake:  # any object with predict(dialogues) -> list[Verdict] works as a detector
...     def predict(self, dialogues, batch_size=64):
...         return [Verdict("never" in d.last.text, 0.9 if "never" in d.last.text else 0.1) for d in dialogues]
>>> ctx = ["I have two dogs.", "What are their names?"]
>>> r = rerank(ctx, ["I never had a dog.", "Rex and Fido."], detector=Fake())
>>> r.chosen.text, [c.text for c in r.dropped]
('Rex and Fido.', ['I never had a dog.'])

Policies:

- ``filter`` (default): drop the candidates the detector calls contradictory and keep the rest in the
  generator's order (its score, best first; input order when there are no scores). If every candidate
  is contradictory, ``fallback="least_contradictory"`` keeps the one with the lowest contradiction score
  (marked ``kept=False`` in ``ranked`` but returned as ``chosen``); ``fallback="none"`` chooses nothing.
- ``sort``: order all candidates by contradiction score, lowest first; equal scores (e.g. no earlier turn
  of the replying speaker to compare with) are ordered by the generator's score.

Before the detector runs, empty candidates and candidates that repeat a turn of the context verbatim
are set aside with a reason (``counts`` says how many); repeats can be kept with ``drop_repeats=False``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..io import _check_text, as_context, check_batch_size, check_reply_speaker, is_blank, json_type
from ..schema import Dialogue, Turn, Verdict
from .nbest import Candidate, reply_speaker

__all__ = ["POLICIES", "RerankResult", "RerankedCandidate", "rerank", "rerank_many", "route_with_reply"]

POLICIES = ("filter", "sort")


@dataclass(frozen=True)
class RerankedCandidate:
    """A candidate with its input position, the generator's score and the detector's verdict.

    ``kept`` is False for candidates the policy removed; ``reason`` says why (``contradiction``,
    ``empty``, ``repeats_context``, ``duplicate``).
    """

    index: int
    text: str
    generator_score: float | None
    verdict: Verdict | None
    kept: bool = True
    reason: str | None = None

    @property
    def contradiction_score(self) -> float:
        return float(self.verdict.score) if self.verdict is not None else 0.0

    @property
    def contradiction(self) -> bool:
        return bool(self.verdict.contradiction) if self.verdict is not None else False

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "text": self.text,
            "generator_score": None if self.generator_score is None else round(float(self.generator_score), 6),
            "contradiction": self.contradiction,
            "contradiction_score": round(self.contradiction_score, 6),
            "evidence": list(self.verdict.evidence) if self.verdict is not None else [],
            "kept": self.kept,
            "reason": self.reason,
        }


@dataclass
class RerankResult:
    """``ranked``: every candidate the detector scored, best first; ``dropped``: removed or set aside."""

    policy: str
    ranked: list[RerankedCandidate]
    chosen: RerankedCandidate | None
    dropped: list[RerankedCandidate] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "policy": self.policy,
            "chosen": self.chosen.to_dict() if self.chosen else None,
            "ranked": [c.to_dict() for c in self.ranked],
            "counts": dict(self.counts),
        }


def _split(candidate: Any, i: int) -> tuple[str, float | None]:
    """A candidate's text (checked: a lone surrogate is named here, not as a turn of a dialogue the caller never
    built) and its generator score."""
    text, score = _split_raw(candidate, i)
    return _check_text(text, f"candidates[{i}]"), score


def _split_raw(candidate: Any, i: int) -> tuple[str, float | None]:
    if isinstance(candidate, Candidate):
        return candidate.text, _not_nan(candidate.score, f"candidates[{i}].score")
    if isinstance(candidate, str):
        return candidate, None
    if isinstance(candidate, dict):
        if not isinstance(candidate.get("text"), str):
            raise InputError(f"candidates[{i}].text: expected a string")
        score = candidate.get("score")
        if score is not None and (isinstance(score, bool) or not isinstance(score, (int, float))):
            raise InputError(f"candidates[{i}].score: expected a number, got {json_type(score)}")
        return candidate["text"], _not_nan(score, f"candidates[{i}].score")
    if isinstance(candidate, (tuple, list)) and len(candidate) == 2 and isinstance(candidate[0], str):
        score = candidate[1]
        if score is not None and (isinstance(score, bool) or not isinstance(score, (int, float))):
            raise InputError(f"candidates[{i}][1]: expected a number (the score), got {json_type(score)}")
        return candidate[0], _not_nan(score, f"candidates[{i}][1]")
    raise InputError(f"candidates[{i}]: expected a string, a Candidate, {{'text', 'score'}} or (text, score)")


def _not_nan(score: float | None, field: str) -> float | None:
    """A generator score as a float; NaN is refused: every comparison with it is false, so a candidate scored NaN
    sorted anywhere, ahead of better ones (and was chosen)."""
    if score is None:
        return None
    if math.isnan(score):
        raise InputError(f"{field}: expected a number, got NaN")
    return float(score)


def _listed(values: Any, field: str) -> list[Any]:
    """``values`` (a list or any other iterable but a string or mapping) as a list, else an InputError."""
    if isinstance(values, (str, bytes, dict)) or not isinstance(values, Iterable):
        raise InputError(f"{field}: expected a list, got {json_type(values)}")
    return list(values)


def _norm(text: str) -> str:
    return " ".join(text.split()).lower()


CHOOSE_DETECTOR = "pass detector=FOLDER (dialcheck.rerank(..., detector=...))"  # api.route's advice, for rerank


def route_with_reply(
    context: Dialogue, candidates: Sequence[Any], speaker: str | None = None, choose: str = CHOOSE_DETECTOR
) -> str:
    """The shipped default that checks ``context`` followed by its first non-empty candidate
    (:func:`dialcheck.api.route`; a Chinese u1, b1, u2 becomes a whole CDConv conversation with its reply), as
    ``dialcheck rerank``, ``/rank`` and :func:`rerank` without a detector route; route's errors are raised as they
    are, their advice telling how to choose a model as ``choose`` says (``detector=``, :func:`rerank`'s; ``"pass
    --model"`` for the command line)."""
    from ..api import route

    texts = (
        []
        if isinstance(candidates, (str, bytes))
        else [t for t in (_split(c, i)[0] for i, c in enumerate(candidates)) if not is_blank(t)]
    )
    if texts and context.turns:
        reply = Turn(speaker or reply_speaker(context), texts[0])
        context = Dialogue((*context.turns, reply), context.knowledge, context.meta)
    return route(context, choose=choose)


def _language_of(contexts: Sequence[Dialogue], candidate_lists: Sequence[Sequence[Any]], speaker: str | None) -> str:
    """Which shipped default re-ranks these contexts (:func:`route_with_reply` of each); contexts needing
    different defaults are refused."""
    found: dict[str, int] = {}
    for k, (d, cands) in enumerate(zip(contexts, candidate_lists, strict=True)):
        try:
            found.setdefault(route_with_reply(d, cands, speaker), k)
        except InputError as e:
            raise InputError(f"contexts[{k}]: {e.message}") from None
    if len(found) > 1:
        where = ", ".join(f"{lang} (contexts[{k}])" for lang, k in found.items())
        raise InputError(f"the contexts need different default detectors: {where}; re-rank them in separate calls")
    return next(iter(found), "en")


def rerank_many(
    contexts: Sequence[Dialogue | Sequence[Turn | str]],
    candidate_lists: Sequence[Sequence[Any]],
    detector: Any = None,
    policy: str = "filter",
    scores: Sequence[Sequence[float | None] | None] | None = None,
    speaker: str | None = None,
    fallback: str = "least_contradictory",
    drop_repeats: bool = True,
    batch_size: int = 64,
) -> list[RerankResult]:
    """:func:`rerank` for many contexts at once; the detector scores all candidates in shared batches."""
    if policy not in POLICIES:
        raise InputError(f"unknown policy {policy!r}; use one of {', '.join(POLICIES)}")
    if fallback not in ("least_contradictory", "none"):
        raise InputError(f"unknown fallback {fallback!r}; use least_contradictory or none")
    batch_size = check_batch_size(batch_size)
    speaker = check_reply_speaker(speaker)
    contexts, candidate_lists = _listed(contexts, "contexts"), _listed(candidate_lists, "candidate_lists")
    if len(contexts) != len(candidate_lists):
        raise InputError(f"{len(contexts)} contexts but {len(candidate_lists)} candidate lists")
    if scores is not None and len(scores) != len(contexts):
        raise InputError(f"{len(contexts)} contexts but {len(scores)} score lists")
    parsed = [as_context(context, f"contexts[{k}]") for k, context in enumerate(contexts)]  # read once
    if detector is None:
        from ..api import load

        detector = load(language=_language_of(parsed, candidate_lists, speaker))
    elif isinstance(detector, (str, Path)):
        from ..api import load

        detector = load(detector)
    elif not callable(getattr(detector, "predict", None)):
        raise InputError(f"detector: expected a detector (with predict) or a model's name, got {json_type(detector)}")

    prepared = []  # per context: (dialogue, speaker, [(index, text, gen_score)], set-aside list)
    dialogues: list[Dialogue] = []
    for k, (d, cands) in enumerate(zip(parsed, candidate_lists, strict=True)):
        if isinstance(cands, (str, bytes)):
            raise InputError(f'candidate_lists[{k}]: expected a list of candidates, got a string (one: ["..."])')
        cands = _listed(cands, f"candidate_lists[{k}]")
        if not cands:
            raise InputError(f"contexts[{k}]: no candidates to re-rank (give at least one reply)")
        sp = speaker or reply_speaker(d)
        extra = scores[k] if scores is not None else None
        if extra is not None:
            extra = _listed(extra, f"scores[{k}]")
            if len(extra) != len(cands):
                raise InputError(f"contexts[{k}]: {len(cands)} candidates but {len(extra)} scores")
            for i, x in enumerate(extra):
                if x is not None and (isinstance(x, bool) or not isinstance(x, (int, float))):
                    raise InputError(f"scores[{k}][{i}]: expected a number or null, got {json_type(x)}")
                _not_nan(x, f"scores[{k}][{i}]")
        history = {_norm(t.text) for t in d.turns}
        live, aside, seen = [], [], set()
        for i, c in enumerate(cands):
            text, gs = _split(c, i)
            if extra is not None and extra[i] is not None:
                gs = float(extra[i])  # type: ignore[arg-type]
            key = _norm(text)
            reason = None
            if not key or is_blank(text):  # white space, or invisible characters only (a zero-width space)
                reason = "empty"
            elif drop_repeats and key in history:
                reason = "repeats_context"
            elif key in seen:
                reason = "duplicate"
            if reason:
                aside.append(RerankedCandidate(i, text, gs, None, kept=False, reason=reason))
                continue
            seen.add(key)
            live.append((i, text, gs))
            dialogues.append(Dialogue((*d.turns, Turn(sp, text)), d.knowledge, d.meta))
        prepared.append((live, aside))
    verdicts = detector.predict(dialogues, batch_size=batch_size) if dialogues else []
    if len(verdicts) != len(dialogues):
        raise InputError(f"the detector returned {len(verdicts)} verdicts for {len(dialogues)} candidates")

    results, pos = [], 0
    for live, aside in prepared:
        scored = [RerankedCandidate(i, t, gs, verdicts[pos + j]) for j, (i, t, gs) in enumerate(live)]
        pos += len(live)
        results.append(_apply(policy, scored, aside, fallback))
    return results


def _gen_key(c: RerankedCandidate) -> tuple[bool, float, int]:
    """The generator's order: higher score first; a candidate it gave no score comes after every scored one (a
    missing score read as 0.0 put it above any log-probability), then input order."""
    unscored = c.generator_score is None
    return (unscored, 0.0 if unscored else -c.generator_score, c.index)


def _apply(policy: str, scored: list[RerankedCandidate], aside: list[RerankedCandidate], fallback: str) -> RerankResult:
    counts = Counter(c.reason for c in aside)
    if policy == "sort":
        ranked = sorted(scored, key=lambda c: (c.contradiction_score, *_gen_key(c)))
        chosen = ranked[0] if ranked else None
        dropped = list(aside)
    else:
        keep = sorted((c for c in scored if not c.contradiction), key=_gen_key)
        flagged = sorted((c for c in scored if c.contradiction), key=lambda c: (c.contradiction_score, *_gen_key(c)))
        flagged = [
            RerankedCandidate(c.index, c.text, c.generator_score, c.verdict, False, "contradiction") for c in flagged
        ]
        counts["contradiction"] += len(flagged)
        ranked = keep + flagged
        chosen = keep[0] if keep else (flagged[0] if flagged and fallback == "least_contradictory" else None)
        if not keep and chosen is not None:
            counts["fallback"] += 1
        dropped = flagged + list(aside)
    counts["candidates"] = len(scored) + len(aside)
    return RerankResult(policy, ranked, chosen, dropped, dict(counts))


def rerank(
    context: Dialogue | Sequence[Turn | str],
    candidates: Sequence[Any],
    detector: Any = None,
    policy: str = "filter",
    scores: Sequence[float | None] | None = None,
    speaker: str | None = None,
    fallback: str = "least_contradictory",
    drop_repeats: bool = True,
    batch_size: int = 64,
) -> RerankResult:
    """Filter or re-order candidate replies to ``context`` so that contradictory ones are not chosen.

    ``candidates``: strings, :class:`~dialcheck.generation.nbest.Candidate` objects, ``{"text", "score"}``
    dicts or ``(text, score)`` pairs; ``scores`` (optional) gives the generator's score of each
    candidate (higher is better) and is the tie-breaker. ``detector``: any object with
    ``predict(dialogues) -> list[Verdict]``; default the shipped English detector. ``speaker``: who says
    the reply (default :func:`~dialcheck.io.reply_speaker`: the speaker of the second-to-last context turn, a
    ``system`` message left out; after a turn without text, a tool call, that turn's speaker). ``context``: a
    :class:`Dialogue`, a list of strings (alternating speakers) or a ``{"turns": [...]}`` / ``{"messages": [...]}``
    object.
    """
    if isinstance(candidates, (str, bytes)):
        raise InputError('candidates: expected a list of candidates, got a string (one candidate: ["..."])')
    if scores is not None:
        scores = _listed(scores, "scores")
    context = as_context(context)
    candidates = _listed(candidates, "candidates")
    return rerank_many(
        [context],
        [candidates],
        detector,
        policy,
        None if scores is None else [scores],
        speaker,
        fallback,
        drop_repeats,
        batch_size,
    )[0]
