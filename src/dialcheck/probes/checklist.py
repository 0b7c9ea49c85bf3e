"""DECODE's checklist transforms: Add Two Turns (A2T) and Remove Contradicting Turns (RCT), and Long
Turns (LT): every turn padded with utterances of other dialogues, as a chat assistant's paragraphs are long.

>>> from dialcheck.schema import Dialogue, Example
>>> ex = Example(Dialogue.from_texts(["I love dogs.", "Me too.", "Do you have one?", "I hate dogs."]), True, (0,))
>>> a2t = add_two_turns(ex, ("How was your day?", "Pretty good, thanks."), position=2)
>>> [t.text for t in a2t.dialogue.turns]
['I love dogs.', 'Me too.', 'How was your day?', 'Pretty good, thanks.', 'Do you have one?', 'I hate dogs.']
>>> a2t.evidence, [t.speaker for t in a2t.dialogue.turns]
((0,), ['A', 'B', 'A', 'B', 'A', 'B'])
>>> rct = remove_contradicting_turns(ex)
>>> [t.text for t in rct.dialogue.turns], rct.label, rct.evidence
(['Do you have one?', 'I hate dogs.'], False, ())
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence

from ..errors import InputError
from ..schema import Dialogue, Example, Turn

__all__ = ["add_two_turns", "build_a2t", "build_long_turns", "remove_contradicting_turns", "utterance_pairs"]


def add_two_turns(example: Example, pair: tuple[str, str], position: int) -> Example:
    """Insert two utterances before turn ``position``, which must lie after every evidence turn.

    The inserted turns take the speakers of turns ``position`` and ``position + 1`` so that speakers keep
    alternating; evidence indices are unchanged because they all precede the insertion.
    """
    d = example.dialogue
    n = len(d.turns)
    last_ev = max(example.evidence) if example.evidence else -1
    if not last_ev < position <= n - 1:
        raise InputError(f"position {position} is not between the last evidence turn {last_ev} and the last turn")
    sp = d.turns[position].speaker
    other = next((t.speaker for t in d.turns if t.speaker != sp), "B" if sp != "B" else "A")
    new = (*d.turns[:position], Turn(sp, pair[0]), Turn(other, pair[1]), *d.turns[position:])
    meta = {**d.meta, "checklist": "a2t"}
    return Example(Dialogue(new, d.knowledge, meta), example.label, example.evidence, example.category, example.id)


def utterance_pairs(examples: Sequence[Example]) -> list[tuple[str, str, str]]:
    """Consecutive (utterance, reply, example id) triples from the histories of ``examples``."""
    out = []
    for ex in examples:
        h = ex.dialogue.turns[:-1]
        out.extend((a.text, b.text, ex.id) for a, b in itertools.pairwise(h))
    return out


def build_a2t(examples: Sequence[Example], seed: int = 0) -> list[Example]:
    """A2T set: every contradiction with known evidence gets a random utterance pair from another
    dialogue inserted at a random point between its last evidence turn and its last turn."""
    rng = random.Random(seed)
    pool = utterance_pairs(examples)
    if not pool:
        raise InputError("A2T needs dialogues with at least two history turns to sample utterance pairs from")
    out = []
    for ex in examples:
        if not ex.label or not ex.evidence:
            continue
        while True:
            a, b, src = pool[rng.randrange(len(pool))]
            if src != ex.id:
                break
        position = rng.randint(max(ex.evidence) + 1, len(ex.dialogue.turns) - 1)
        new = add_two_turns(ex, (a, b), position)
        out.append(Example(new.dialogue, True, new.evidence, new.category, f"{ex.id}#a2t"))
    return out


def remove_contradicting_turns(example: Example, keep_alternation: bool = True) -> Example:
    """RCT: drop the evidence turns so the last turn no longer contradicts anything.

    With ``keep_alternation`` the turn right after each evidence turn (the other speaker's reply to it)
    goes too, so speakers keep alternating as in the released RCT set.
    """
    if not example.label or not example.evidence:
        raise InputError("RCT needs a contradiction with annotated evidence")
    d = example.dialogue
    drop = set(example.evidence)
    if keep_alternation:
        drop |= {i + 1 for i in example.evidence if i + 1 < len(d.turns) - 1}
    turns = tuple(t for i, t in enumerate(d.turns) if i not in drop)
    meta = {**d.meta, "checklist": "rct"}
    return Example(Dialogue(turns, d.knowledge, meta), False, (), example.category, f"{example.id}#rct")


def build_long_turns(examples: Sequence[Example], fillers: int = 3, seed: int = 0) -> list[Example]:
    """LT set: every turn of every example becomes its own text among ``fillers`` utterances drawn from
    other examples (seeded; the original at a random place), joined with spaces. Labels, evidence and
    speakers are unchanged, so a detector that reads whole long turns should score as on the originals.

    >>> exs = [Example(Dialogue.from_texts(["I love dogs.", "Me too.", "I hate dogs."]), True, (0,), id="a"),
    ...        Example(Dialogue.from_texts(["Nice day.", "It is.", "Sunny."]), False, id="b")]
    >>> lt = build_long_turns(exs, fillers=1, seed=0)
    >>> [t.text for t in lt[0].dialogue.turns], lt[0].evidence, lt[0].id
    (['Nice day. I love dogs.', 'It is. Me too.', 'Nice day. I hate dogs.'], (0,), 'a#lt')
    """
    rng = random.Random(seed)
    pool = [(t.text, ex.id) for ex in examples for t in ex.dialogue.turns]
    if len({src for _, src in pool}) < 2:
        raise InputError("Long Turns needs at least two dialogues to draw filler utterances from")
    out = []
    for ex in examples:
        turns = []
        for t in ex.dialogue.turns:
            parts: list[str] = []
            while len(parts) < fillers:
                text, src = pool[rng.randrange(len(pool))]
                if src != ex.id:
                    parts.append(text.strip())
            parts.insert(rng.randint(0, fillers), t.text.strip())
            turns.append(Turn(t.speaker, " ".join(parts)))
        d = ex.dialogue
        new = Dialogue(tuple(turns), d.knowledge, {**d.meta, "checklist": "long_turns"})
        out.append(Example(new, ex.label, ex.evidence, ex.category, f"{ex.id}#lt"))
    return out
