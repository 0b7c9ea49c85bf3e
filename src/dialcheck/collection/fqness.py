"""Contexts that end in a follow-up question, scored by FQness with a causal LM (Sato et al. 2024).

A candidate context at distance ``d`` is ``d + 1`` consecutive turns ``u[t-d] .. u[t]``: ``u[t]`` is an
utterance of one speaker that contains a question, ``u[t-d]`` (the *referent*) an utterance of the other
speaker, who is the one to reply. ``u[t]`` is split into its question ``q`` (the trailing sentences
that end in "?" or "？") and the rest ``r`` (everything before them). A turn written without any
sentence punctuation (common in task-oriented logs such as CI-ToD) counts as a question when it opens
with an English interrogative word or auxiliary ("where", "is", "can", ...) or ends in a Chinese
question particle (吗, 呢, 么).

FQness asks how much the referent makes the question likely, with the turns in between left out::

    FQness = P(q | u[t-d], r) / P(q | r)        (returned as the natural log of the ratio)

A high value marks a follow-up question about what the replying speaker said ``d`` turns ago; answering
it invites the reply to restate, and so possibly contradict, the referent. Likelihoods are summed token
log-probabilities of ``q`` under any Hugging Face causal LM (default SmolLM2-135M-Instruct), over a
plain ``speaker: text`` transcript.

>>> split_question("I love hiking. Where do you hike? Do you go often?")
('Where do you hike? Do you go often?', 'I love hiking.')
>>> split_question("No question here.")
('', 'No question here.')
>>> split_question("is that the nearest grocery shop")
('is that the nearest grocery shop', '')
>>> split_question("我也喜欢。你养的是什么狗？")
('你养的是什么狗？', '我也喜欢。')
"""

from __future__ import annotations

import logging
import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from ..errors import InputError
from ..language import _is_cjk
from ..schema import Dialogue
from .checkpoint import Checkpoint
from .records import CollectionContext

__all__ = [
    "DEFAULT_DISTANCES",
    "FQnessScorer",
    "candidate_contexts",
    "select_random",
    "select_top_k",
    "split_question",
]

log = logging.getLogger(__name__)

DEFAULT_DISTANCES = (1, 3, 5)
_SENT = re.compile(r"[^.!?。！？]*(?:[.!?。！？]+|$)")
_QMARKS = ("?", "？")
_INTERROGATIVE = frozenset(
    [
        "what",
        "where",
        "when",
        "who",
        "whom",
        "whose",
        "which",
        "why",
        "how",
        "is",
        "are",
        "am",
        "was",
        "were",
        "do",
        "does",
        "did",
        "can",
        "could",
        "will",
        "would",
        "shall",
        "should",
        "may",
        "might",
        "have",
        "has",
        "had",
    ]
)
_ZH_PARTICLES = ("吗", "呢", "么")


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENT.findall(text) if s.strip()]


def _unpunctuated_question(text: str) -> bool:
    t = text.strip()
    if not t or any(m in t for m in ".!?。！？"):
        return False
    words = t.split()
    return words[0].lower().strip(",") in _INTERROGATIVE or t.endswith(_ZH_PARTICLES)


def split_question(text: str) -> tuple[str, str]:
    """``(question, rest)``: the trailing sentences that end in a question mark and what precedes them."""
    if _unpunctuated_question(text):
        return text.strip(), ""
    sents = _sentences(text)
    k = len(sents)
    while k > 0 and sents[k - 1].endswith(_QMARKS):
        k -= 1
    sep = "" if any(_is_cjk(ch) for ch in text) else " "
    return sep.join(sents[k:]), sep.join(sents[:k])


def candidate_contexts(
    dialogue: Dialogue,
    distances: Iterable[int] = DEFAULT_DISTANCES,
    source: str = "",
    prefix: str = "",
    history: bool = False,
    reply_speaker: str | None = None,
) -> list[CollectionContext]:
    """Every (question turn, distance) pair of ``dialogue`` whose referent is the other speaker's turn.

    ``history=True`` keeps the turns before the referent (generators and detectors see them);
    ``reply_speaker`` keeps only contexts that this speaker is to answer (e.g. ``"bot"``).

    >>> d = Dialogue.from_texts(["I have a dog.", "What breed is it?", "A poodle.", "Is it old?"])
    >>> [(c.id, c.distance, c.question) for c in candidate_contexts(d, (1, 3), prefix="x")]
    [('x:1:1', 1, 'What breed is it?'), ('x:3:1', 1, 'Is it old?'), ('x:3:3', 3, 'Is it old?')]
    """
    out = []
    turns = dialogue.turns
    distances = tuple(dict.fromkeys(distances))  # a distance given twice: each context once (two of one id before)
    for t, turn in enumerate(turns):
        q, r = split_question(turn.text)
        if not q:
            continue
        for d in distances:
            if d < 1 or t - d < 0 or turns[t - d].speaker == turn.speaker:
                continue
            if reply_speaker is not None and turns[t - d].speaker != reply_speaker:
                continue
            out.append(
                CollectionContext(
                    id=f"{prefix}:{t}:{d}",
                    turns=tuple(turns[t - d : t + 1]),
                    distance=d,
                    question=q,
                    rest=r,
                    source=source,
                    history=tuple(turns[: t - d]) if history else (),
                )
            )
    return out


class FQnessScorer:
    """Log FQness of contexts under a causal LM: ``log P(q | referent, r) - log P(q | r)``."""

    def __init__(self, model: Any, tokenizer: Any, batch_size: int = 16, max_tokens: int = 256) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.batch_size = batch_size
        self.max_tokens = max_tokens

    @classmethod
    def load(cls, lm: str | None = None, **kw: Any) -> FQnessScorer:
        """A scorer on a known LM name (default SmolLM2-135M-Instruct) or a local HF folder."""
        from ..generation.lm import load_lm

        model, tok = load_lm(lm)
        return cls(model, tok, **kw)

    @staticmethod
    def prompts(context: CollectionContext) -> tuple[str, str, str]:
        """``(with referent, without referent, continuation)`` texts whose continuation is scored."""
        ref, last = context.turns[0], context.turns[-1]
        head = f"{last.speaker}: {context.rest}".rstrip()
        sep = "" if context.rest and _is_cjk(context.question[:1]) else " "
        return f"{ref.speaker}: {ref.text}\n{head}", head, sep + context.question

    def _ids(self, prefix: str, continuation: str) -> tuple[list[int], int]:
        tok = self.tokenizer
        p = tok(prefix, add_special_tokens=False)["input_ids"]
        c = tok(continuation, add_special_tokens=False)["input_ids"]
        if tok.bos_token_id is not None:
            p = [tok.bos_token_id, *p]
        p = p[-max(1, self.max_tokens - len(c)) :]
        return p + c, len(p)

    def log_likelihoods(self, items: Sequence[tuple[str, str]]) -> list[float]:
        """Summed log-probability of each ``continuation`` after its ``prefix``."""
        import torch

        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        out: list[float] = []
        for s in range(0, len(items), self.batch_size):
            rows = [self._ids(p, c) for p, c in items[s : s + self.batch_size]]
            width = max(len(r) for r, _ in rows)
            ids = torch.full((len(rows), width), pad, dtype=torch.long)
            mask = torch.zeros_like(ids)
            for i, (r, _) in enumerate(rows):  # right padding: positions are the same as unpadded
                ids[i, : len(r)] = torch.tensor(r)
                mask[i, : len(r)] = 1
            with torch.inference_mode():
                logits = self.model(input_ids=ids, attention_mask=mask).logits.float()
            logp = torch.log_softmax(logits[:, :-1], dim=-1).gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1)
            for i, (r, plen) in enumerate(rows):
                out.append(float(logp[i, plen - 1 : len(r) - 1].sum()))
        return out

    def score(
        self,
        contexts: Sequence[CollectionContext],
        show_progress_bar: bool = False,
        checkpoint: Checkpoint | None = None,
    ) -> list[CollectionContext]:
        """The contexts with ``fqness`` filled in, in input order.

        They are scored in chunks of ``8 * batch_size`` likelihoods (four batches of contexts). With a
        ``checkpoint`` (opened with :meth:`Checkpoint.start` or :meth:`Checkpoint.resume`) each chunk's scores
        are recorded as it is finished, and the chunks an interrupted run finished are not scored again: the
        batches, and so the scores, are those of an uninterrupted run.
        """
        items: list[tuple[str, str]] = []
        for c in contexts:
            with_ref, without, cont = self.prompts(c)
            items += [(with_ref, cont), (without, cont)]
        size = self.batch_size * 8  # even: a chunk holds whole contexts
        starts = range(0, len(items), size)
        fq: list[float] = []
        if checkpoint is not None:
            for n, row in enumerate(checkpoint.rows):
                if n >= len(contexts) or row.get("id") != contexts[n].id or not isinstance(row.get("fqness"), float):
                    raise InputError(
                        f"cannot resume: its record {n + 1} is not the FQness of context "
                        f"{contexts[n].id if n < len(contexts) else None!r}; delete it and {checkpoint.state.name} "
                        "to start anew",
                        str(checkpoint.part),
                    )
                fq.append(row["fqness"])
            if len(fq) != min(len(contexts), checkpoint.done * size // 2):
                raise InputError(
                    f"cannot resume: it holds {len(fq)} scores, not those of {checkpoint.done} chunks; delete it "
                    f"and {checkpoint.state.name} to start anew",
                    str(checkpoint.part),
                )
            starts = starts[checkpoint.done :]
        chunks: Iterable[int] = starts
        if show_progress_bar:
            from tqdm.auto import tqdm

            total = len(range(0, len(items), size))
            chunks = tqdm(starts, desc="FQness", unit="chunk", total=total, initial=total - len(starts))
        for s in chunks:
            lls = self.log_likelihoods(items[s : s + size])
            scores = [lls[2 * j] - lls[2 * j + 1] for j in range(len(lls) // 2)]
            if checkpoint is not None:
                ids = [c.id for c in contexts[s // 2 : s // 2 + len(scores)]]
                checkpoint.commit({"id": i, "fqness": v} for i, v in zip(ids, scores, strict=True))
            fq += scores
        return [replace(c, fqness=v) for c, v in zip(contexts, fq, strict=True)]


def select_top_k(contexts: Iterable[CollectionContext], k: int, per_dialogue: int = 0) -> list[CollectionContext]:
    """The ``k`` highest-FQness contexts per distance (ties broken by id); at most ``per_dialogue`` from
    one source dialogue when given.

    >>> cs = [CollectionContext(f"x{i}", (), 1, "?", fqness=float(i)) for i in range(4)]
    >>> [c.id for c in select_top_k(cs, 2)]
    ['x3', 'x2']
    """
    by_d: dict[int, list[CollectionContext]] = {}
    for c in contexts:
        if c.fqness is None:
            raise ValueError(f"context {c.id} has no FQness score")
        by_d.setdefault(c.distance, []).append(c)
    out = []
    for d in sorted(by_d):
        taken: dict[str, int] = {}
        chosen = 0
        for c in sorted(by_d[d], key=lambda c: (-(c.fqness or 0.0), c.id)):
            if chosen >= k:
                break
            if per_dialogue and taken.get(c.source, 0) >= per_dialogue:
                continue
            taken[c.source] = taken.get(c.source, 0) + 1
            chosen += 1
            out.append(replace(c, selection="fqness"))
    return out


def select_random(
    contexts: Iterable[CollectionContext], k: int, seed: int = 0, exclude: Iterable[str] = ()
) -> list[CollectionContext]:
    """``k`` contexts per distance drawn uniformly (seeded), skipping the ids in ``exclude``."""
    skip = set(exclude)
    by_d: dict[int, list[CollectionContext]] = {}
    for c in contexts:
        if c.id not in skip:
            by_d.setdefault(c.distance, []).append(c)
    rng = random.Random(seed)
    out = []
    for d in sorted(by_d):
        pool = sorted(by_d[d], key=lambda c: c.id)
        out += [replace(c, selection="random") for c in rng.sample(pool, min(k, len(pool)))]
    return out
