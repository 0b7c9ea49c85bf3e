"""Records of a contradiction collection: selected contexts and the replies collected for them.

Both round-trip through plain JSON objects (one per line in the files the CLI writes)::

>>> turns = (Turn("A", "I live in Ohio."), Turn("B", "Nice. Do you like it?"))
>>> c = CollectionContext("d1:3:1", turns, 1, "Do you like it?", "Nice.")
>>> CollectionContext.from_dict(c.to_dict()) == c
True
>>> r = CollectedReply("d1:3:1/g", "d1:3:1", "g", (*c.turns, Turn("A", "I have never been to Ohio.")), 0, True, 3)
>>> r.reply.text, r.referent_turn.text
('I have never been to Ohio.', 'I live in Ohio.')
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError
from ..io import check_id, json_type, json_type_name
from ..schema import Dialogue, Turn

__all__ = ["CollectedReply", "CollectionContext"]


def _turns(obj: Mapping[str, Any], key: str = "turns") -> tuple[Turn, ...]:
    raw = obj.get(key)
    if not isinstance(raw, list) or not raw:
        raise InputError(f"{key}: expected a non-empty list of turns")
    out = []
    for i, t in enumerate(raw):
        if not isinstance(t, Mapping) or not isinstance(t.get("speaker"), str) or not isinstance(t.get("text"), str):
            raise InputError(f"{key}[{i}]: expected {{'speaker': str, 'text': str}}")
        out.append(Turn(t["speaker"], t["text"]))
    return tuple(out)


def _field(obj: Mapping[str, Any], key: str, typ: type | tuple[type, ...]) -> Any:
    """``obj[key]`` checked for type (``true`` is not an int); the error names JSON types."""
    if key not in obj:
        raise InputError(f"{key}: missing")
    v = obj[key]
    kinds = typ if isinstance(typ, tuple) else (typ,)
    if not isinstance(v, kinds) or (isinstance(v, bool) and bool not in kinds):
        raise InputError(f"{key}: expected {json_type_name(typ)}, got {json_type(v)}")
    return v


def _id(obj: Mapping[str, Any], key: str) -> str:
    """The id field ``key``: a string or a whole number (:func:`dialcheck.io.check_id`), else a field error."""
    if key not in obj:
        raise InputError(f"{key}: missing")
    return check_id(obj[key], key)


@dataclass(frozen=True)
class CollectionContext:
    """A context that ends in a question: ``turns[0]`` is the referent utterance (the speaker who will
    reply said it), ``turns[-1]`` the other speaker's utterance holding ``question`` (its last question
    sentences) after ``rest``; ``distance`` = number of turns from the referent to the question turn.

    ``fqness`` is the log FQness (see :mod:`dialcheck.collection.fqness`); ``selection`` says how the
    context was chosen (``"fqness"`` top-k or ``"random"``). ``history`` holds the turns before the
    referent when they are kept: generators and detectors then see them too (FQness never does).
    """

    id: str
    turns: tuple[Turn, ...]
    distance: int
    question: str
    rest: str = ""
    fqness: float | None = None
    selection: str = ""
    source: str = ""
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False)
    history: tuple[Turn, ...] = ()

    @property
    def referent(self) -> Turn:
        return self.turns[0]

    @property
    def reply_speaker(self) -> str:
        return self.turns[0].speaker

    @property
    def dialogue(self) -> Dialogue:
        """History (if kept), referent ... question turn: what a generator answers."""
        return Dialogue((*self.history, *self.turns), meta={"context_id": self.id})

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            **({"history": [{"speaker": t.speaker, "text": t.text} for t in self.history]} if self.history else {}),
            "turns": [{"speaker": t.speaker, "text": t.text} for t in self.turns],
            "distance": self.distance,
            "question": self.question,
            "rest": self.rest,
            "fqness": None if self.fqness is None else round(float(self.fqness), 6),
            "selection": self.selection,
            "source": self.source,
            **({"meta": dict(self.meta)} if self.meta else {}),
        }

    @classmethod
    def from_dict(cls, obj: Mapping[str, Any]) -> CollectionContext:
        fq = obj.get("fqness")
        if fq is not None and not isinstance(fq, (int, float)):
            raise InputError("fqness: expected a number or null")
        return cls(
            id=_id(obj, "id"),
            turns=_turns(obj),
            distance=_field(obj, "distance", int),
            question=_field(obj, "question", str),
            rest=str(obj.get("rest") or ""),
            fqness=None if fq is None else float(fq),
            selection=str(obj.get("selection") or ""),
            source=str(obj.get("source") or ""),
            meta=dict(obj.get("meta") or {}),
            history=_turns(obj, "history") if obj.get("history") else (),
        )


@dataclass(frozen=True)
class CollectedReply:
    """A generated reply in its context: ``turns[-1]`` is the reply, ``turns[referent]`` the earlier
    utterance of the same speaker it may contradict (the annotation target pair).

    ``label`` is the aggregated annotation (True = contradictory, None = not yet labelled or discarded);
    ``votes`` the number of annotators who said contradictory.
    """

    id: str
    context_id: str
    generator: str
    turns: tuple[Turn, ...]
    referent: int = 0
    label: bool | None = None
    votes: int | None = None
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False)

    @property
    def reply(self) -> Turn:
        return self.turns[-1]

    @property
    def referent_turn(self) -> Turn:
        return self.turns[self.referent]

    @property
    def dialogue(self) -> Dialogue:
        return Dialogue(self.turns, meta={"reply_id": self.id, "generator": self.generator})

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "context_id": self.context_id,
            "generator": self.generator,
            "turns": [{"speaker": t.speaker, "text": t.text} for t in self.turns],
            "referent": self.referent,
            "label": self.label,
            "votes": self.votes,
            **({"meta": dict(self.meta)} if self.meta else {}),
        }

    @classmethod
    def from_dict(cls, obj: Mapping[str, Any]) -> CollectedReply:
        turns = _turns(obj)
        referent = _field(obj, "referent", int)
        if not 0 <= referent < len(turns) - 1:
            raise InputError(f"referent: {referent} is not an earlier turn (the reply is turn {len(turns) - 1})")
        label = obj.get("label")
        if label is not None and not isinstance(label, bool):
            raise InputError("label: expected true, false or null")
        votes = obj.get("votes")
        if votes is not None and (not isinstance(votes, int) or isinstance(votes, bool)):
            raise InputError("votes: expected an integer or null")
        return cls(
            id=_id(obj, "id"),
            context_id=_id(obj, "context_id"),
            generator=_field(obj, "generator", str),
            turns=turns,
            referent=referent,
            label=label,
            votes=votes,
            meta=dict(obj.get("meta") or {}),
        )
