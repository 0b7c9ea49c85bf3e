"""Collect replies to selected contexts from several generators, recording which one produced each.

A generator is anything with ``generate(contexts, config, speaker=...)`` returning n-best lists of
candidates with a ``text`` -- :class:`dialcheck.generation.NBestGenerator` (local HF causal LMs) and
:class:`dialcheck.generation.OpenAIChatGenerator` (OpenAI-compatible endpoints) both qualify. With a
``detector``, each reply is the candidate among the n-best (e.g. top-p samples) that the detector
finds most contradictory (the paper's appendix D setting); otherwise the first candidate.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import InputError
from ..schema import Turn
from .checkpoint import Checkpoint, set_rng_states, torch_rng_state
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
    checkpoint: Checkpoint | None = None,
) -> list[CollectedReply]:
    """One reply per (context, generator), spoken by the referent's speaker, in context order.

    With a ``checkpoint`` (opened with :meth:`Checkpoint.start` or :meth:`Checkpoint.resume`) each finished
    batch's replies are recorded as they are made, and the batches an interrupted run finished are not made
    again; the replies are the same either way. A local LM's batches are those of
    :meth:`dialcheck.generation.NBestGenerator.generate` (prompts sorted by length, the RNG seeded once per
    generator and speaker); an endpoint's contexts are asked ``batch_size`` at a time; any other generator
    answers all the contexts of one speaker in one call, recorded as one unit.
    """
    names = [spec.name for spec in generators]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:  # out[(context, name)] below: a second generator of one name would replace the first's replies
        raise ValueError(f"generator name {twice[0]!r} is used twice: each generator needs its own name")
    for spec in generators:
        if spec.pick_most_contradictory and detector is None:
            raise ValueError(f"generator {spec.name}: picking the most contradictory candidate needs a detector")
    by_speaker: dict[str, list[int]] = {}
    for i, c in enumerate(contexts):
        by_speaker.setdefault(c.reply_speaker, []).append(i)
    units = [
        u
        for spec in generators
        for speaker, idx in by_speaker.items()
        for u in _units(spec, speaker, idx, contexts, batch_size)
    ]
    out: dict[tuple[int, str], CollectedReply] = {}
    done = 0
    if checkpoint is not None:
        done = checkpoint.done
        rows = iter(checkpoint.rows)
        for u in units[:done]:
            for i in u.idx:
                row = next(rows, None)
                want = f"{contexts[i].id}/{u.spec.name}"
                if row is None or row.get("id") != want:
                    raise InputError(
                        f"cannot resume: its record {len(out) + 1} is not the reply {want!r} this run would make "
                        f"there ({'none' if row is None else repr(row.get('id'))}); delete it and "
                        f"{checkpoint.state.name} to start anew",
                        str(checkpoint.part),
                    )
                out[(i, u.spec.name)] = CollectedReply.from_dict(row)
        if next(rows, None) is not None or len(out) != len(checkpoint.rows):
            raise InputError(
                f"cannot resume: it holds more replies than its {done} finished batches made; delete it and "
                f"{checkpoint.state.name} to start anew",
                str(checkpoint.part),
            )
        if done:
            checkpoint.restore_rng()
    bar = None
    if show_progress_bar:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(units), initial=done, desc="generating", unit="batch")
    for u in units[done:]:
        lists = u.run()
        after = torch_rng_state() if u.local else None  # what the generator's next batch starts from
        replies = []
        for i, cands in zip(u.idx, lists, strict=True):
            texts = [c.text for c in cands if c.text.strip()] or [""]
            meta: dict[str, Any] = {"candidates": len(texts)}
            text = texts[0]
            if u.spec.pick_most_contradictory and len(texts) > 1:
                ranked = detector.rank(contexts[i].dialogue, texts, speaker=u.speaker)
                text = ranked[-1].text
                meta["detector_score"] = round(float(ranked[-1].verdict.score), 6)
            c = contexts[i]
            out[(i, u.spec.name)] = reply = CollectedReply(
                id=f"{c.id}/{u.spec.name}",
                context_id=c.id,
                generator=u.spec.name,
                turns=(*c.history, *c.turns, Turn(u.speaker, text)),
                referent=len(c.history),
                meta={**meta, "selection": c.selection, "distance": c.distance},
            )
            replies.append(reply)
        if after is not None:  # picking among the candidates leaves no trace on the sampling stream
            set_rng_states({"torch": after})
        if checkpoint is not None:
            checkpoint.commit([r.to_dict() for r in replies])
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    for spec in generators:
        log.info("generator %s: %d replies", spec.name, len(contexts))
    return [out[(i, g.name)] for i in range(len(contexts)) for g in generators]


@dataclass(frozen=True)
class _Unit:
    """One step of :func:`collect_responses`: the replies of ``spec`` to the contexts ``idx`` (by ``speaker``)."""

    spec: GeneratorSpec
    speaker: str
    idx: list[int]
    run: Callable[[], list[Any]]
    local: bool = False  # a local LM batch: its RNG stream runs on into the next batch


def _units(
    spec: GeneratorSpec, speaker: str, idx: list[int], contexts: Sequence[CollectionContext], batch_size: int
) -> list[_Unit]:
    """The units of one generator's replies to one speaker's contexts, in the order they are made."""
    from ..generation.nbest import NBestGenerator
    from ..generation.openai import OpenAIChatGenerator

    gen, dialogues = spec.generator, [contexts[i].dialogue for i in idx]
    if isinstance(gen, NBestGenerator):  # NBestGenerator.generate's batches, one at a time
        cfg, prompts, batches = gen.batch_plan(dialogues, spec.decoding, batch_size, speaker)

        def batch(k: int, b: list[int]) -> Callable[[], list[Any]]:
            def run() -> list[Any]:
                if k == 0:
                    import torch

                    torch.manual_seed(cfg.seed)
                return gen.generate_batch([prompts[j] for j in b], cfg)

            return run

        units = [_Unit(spec, speaker, [idx[j] for j in b], batch(k, b), local=True) for k, b in enumerate(batches)]
    else:
        step = batch_size if isinstance(gen, OpenAIChatGenerator) else max(len(idx), 1)  # endpoint: per context

        def call(s: int) -> Callable[[], list[Any]]:
            def run() -> list[Any]:
                return list(
                    gen.generate(
                        dialogues[s : s + step],
                        spec.decoding,
                        batch_size=batch_size,
                        speaker=speaker,
                        show_progress_bar=False,
                    )
                )

            return run

        units = [_Unit(spec, speaker, idx[s : s + step], call(s)) for s in range(0, len(idx), step)]
    return units


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
