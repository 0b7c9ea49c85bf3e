"""Typed records shared by every module: turns, dialogues, knowledge bases, gold examples and verdicts.

Every corpus adapter produces these records and every detector consumes them, so nothing downstream
knows which corpus a dialogue came from.

>>> d = Dialogue.from_texts(["I have two dogs.", "Nice!", "I have never had a pet."])
>>> [t.speaker for t in d.turns]
['A', 'B', 'A']
>>> d.last.text
'I have never had a pet.'
>>> d.same_speaker_indices()
[0]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .errors import InputError

__all__ = ["Dialogue", "Example", "KnowledgeBase", "Pair", "Turn", "Verdict"]


def _got(value: Any) -> str:
    """What a wrong argument is, in the words of the errors about user input (``null``, ``int``, ``object``)."""
    from .io import json_type  # io reads into these records: imported when an error is raised, not before

    return json_type(value)


@dataclass(frozen=True)
class Turn:
    """One utterance: who said it and what was said. Both are strings (the text may be empty: a message that
    only calls a tool); anything else is an :class:`~dialcheck.errors.InputError` naming the field.

    >>> Turn(None, "Hi")
    Traceback (most recent call last):
    ...
    dialcheck.errors.InputError: Turn.speaker: expected a string, got null
    """

    speaker: str
    text: str

    def __post_init__(self) -> None:
        for name in ("speaker", "text"):
            value = getattr(self, name)
            if not isinstance(value, str):
                raise InputError(f"Turn.{name}: expected a string, got {_got(value)}")


@dataclass(frozen=True)
class KnowledgeBase:
    """A table the system could see (task-oriented dialogue): rows of column -> value strings.

    ``rows`` is kept as a tuple (any iterable of rows is taken); a row that is no mapping, a column name or a
    value that is no string, is an :class:`~dialcheck.errors.InputError` naming the field, here rather than in
    the detector that later reads the table (:func:`dialcheck.io.parse_knowledge` turns numbers into strings).

    >>> KnowledgeBase(({"poi": "Valero", "distance": 5},))
    Traceback (most recent call last):
    ...
    dialcheck.errors.InputError: KnowledgeBase.rows[0].distance: expected a string, got int \
(dialcheck.io.parse_knowledge reads a list of records, numbers included)
    """

    rows: tuple[Mapping[str, str], ...] = ()

    def __post_init__(self) -> None:
        hint = "(dialcheck.io.parse_knowledge reads a list of records, numbers included)"
        rows = self.rows
        if not isinstance(rows, tuple):
            if isinstance(rows, (str, bytes, Mapping)) or not isinstance(rows, Iterable):
                shown = "a string" if isinstance(rows, (str, bytes)) else _got(rows)
                what = " (one row: [{...}])" if isinstance(rows, Mapping) else ""
                raise InputError(f"KnowledgeBase.rows: expected a list of rows, got {shown}{what} {hint}")
            rows = tuple(rows)
            object.__setattr__(self, "rows", rows)
        for i, row in enumerate(rows):
            if not isinstance(row, Mapping):
                raise InputError(
                    f"KnowledgeBase.rows[{i}]: expected a mapping of column -> value, got {_got(row)} {hint}"
                )
            for k, v in row.items():
                if not isinstance(k, str):
                    raise InputError(f"KnowledgeBase.rows[{i}]: column names are strings, got {_got(k)} {k!r}")
                if not isinstance(v, str):
                    raise InputError(f"KnowledgeBase.rows[{i}].{k}: expected a string, got {_got(v)} {hint}")

    @property
    def columns(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for row in self.rows:
            for key in row:
                seen.setdefault(key, None)
        return tuple(seen)

    def __len__(self) -> int:
        return len(self.rows)


@dataclass(frozen=True)
class Dialogue:
    """A conversation; the last turn is the one being checked against the turns before it."""

    turns: tuple[Turn, ...]
    knowledge: KnowledgeBase | None = None
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        """``turns`` as a tuple of :class:`Turn` objects (any iterable of them is taken), ``knowledge`` a
        :class:`KnowledgeBase` or None and ``meta`` a mapping; anything else is an
        :class:`~dialcheck.errors.InputError` naming the field, here rather than deep inside a detector.

        >>> Dialogue(None)
        Traceback (most recent call last):
        ...
        dialcheck.errors.InputError: Dialogue.turns: expected a list of Turn objects, got null \
(Dialogue.from_texts builds one from strings, dialcheck.io.parse_dialogue from JSON)
        >>> Dialogue(["Hi", "Hello"])
        Traceback (most recent call last):
        ...
        dialcheck.errors.InputError: Dialogue.turns[0]: expected a Turn, got string \
(Dialogue.from_texts builds one from strings, dialcheck.io.parse_dialogue from JSON)
        """
        hint = "(Dialogue.from_texts builds one from strings, dialcheck.io.parse_dialogue from JSON)"
        turns = self.turns
        if not isinstance(turns, tuple):
            if isinstance(turns, (str, bytes, Mapping)) or not isinstance(turns, Iterable):
                shown = "a string" if isinstance(turns, (str, bytes)) else _got(turns)
                raise InputError(f"Dialogue.turns: expected a list of Turn objects, got {shown} {hint}")
            turns = tuple(turns)
            object.__setattr__(self, "turns", turns)
        for i, t in enumerate(turns):
            if not isinstance(t, Turn):
                raise InputError(f"Dialogue.turns[{i}]: expected a Turn, got {_got(t)} {hint}")
        if self.knowledge is not None and not isinstance(self.knowledge, KnowledgeBase):
            raise InputError(
                f"Dialogue.knowledge: expected a KnowledgeBase or None, got {_got(self.knowledge)} "
                "(dialcheck.io.parse_knowledge reads a list of records)"
            )
        if not isinstance(self.meta, Mapping):
            raise InputError(f"Dialogue.meta: expected a mapping (e.g. {{'id': ...}}), got {_got(self.meta)}")

    @classmethod
    def from_texts(cls, texts: Iterable[str], speakers: Sequence[str] = ("A", "B"), **kw: Any) -> Dialogue:
        """Build a dialogue from plain strings with alternating speakers. A single string for ``texts`` or
        ``speakers`` (it would be read one character per turn or per speaker), or no speakers, is an
        :class:`~dialcheck.errors.InputError`.

        >>> Dialogue.from_texts("I have a dog.")
        Traceback (most recent call last):
        ...
        dialcheck.errors.InputError: texts: expected a list of strings, got a string (one turn: ["..."])
        """
        if isinstance(texts, (str, bytes)):
            raise InputError('texts: expected a list of strings, got a string (one turn: ["..."])')
        if isinstance(speakers, (str, bytes)) or not speakers:
            shown = "a string" if isinstance(speakers, (str, bytes)) else repr(speakers)
            raise InputError(
                f'speakers: expected a non-empty list of speaker names, got {shown} (e.g. ["user", "bot"])'
            )
        return cls(tuple(Turn(speakers[i % len(speakers)], t) for i, t in enumerate(texts)), **kw)

    @property
    def last(self) -> Turn:
        return self.turns[-1]

    @property
    def history(self) -> tuple[Turn, ...]:
        return self.turns[:-1]

    def same_speaker_indices(self) -> list[int]:
        """Indices of earlier turns by the speaker of the last turn."""
        speaker = self.turns[-1].speaker
        return [i for i, t in enumerate(self.turns[:-1]) if t.speaker == speaker]

    def upto(self, index: int) -> Dialogue:
        """The dialogue cut after turn ``index``, so that turn is the one checked (same knowledge and meta).

        >>> Dialogue.from_texts(["Hi", "I have a dog.", "Nice", "Bye"]).upto(1).last.text
        'I have a dog.'
        """
        if not 0 <= index < len(self.turns):
            raise IndexError(f"turn {index} of a {len(self.turns)}-turn dialogue")
        return self if index == len(self.turns) - 1 else Dialogue(self.turns[: index + 1], self.knowledge, self.meta)

    def turns_by(self, speakers: Iterable[str]) -> list[int]:
        """Indices of the turns whose speaker is one of ``speakers``.

        >>> Dialogue.from_texts(["a", "b", "c"], speakers=("user", "assistant")).turns_by(["assistant"])
        [1]
        """
        wanted = set(speakers)
        return [i for i, t in enumerate(self.turns) if t.speaker in wanted]

    def __len__(self) -> int:
        return len(self.turns)


@dataclass(frozen=True)
class Example:
    """A dialogue with its gold annotation, as read from a corpus.

    ``evidence`` holds 0-based indices of the earlier turns the last turn contradicts (never the last
    turn itself); ``None`` means the corpus has no evidence annotation for this example.
    """

    dialogue: Dialogue
    label: bool
    evidence: tuple[int, ...] | None = None
    category: str | None = None
    id: str = ""
    labels: Mapping[str, bool] | None = None  # multi-label gold (e.g. CI-ToD's QI/HI/KBI); ``label`` is their "any"


@dataclass(frozen=True)
class Pair:
    """A sentence pair for the pair-classification core: does ``second`` contradict ``first``?"""

    first: str
    second: str
    label: int
    source: str = ""
    group: str = ""


@dataclass(frozen=True)
class Verdict:
    """What a detector says about the last turn of one dialogue.

    ``score`` is the contradiction probability in [0, 1]; ``evidence`` lists the 0-based indices of the
    earlier turns the last turn contradicts; ``pair_scores`` maps each scored earlier turn to its score;
    ``read_as`` maps each turn that only agreed ("Me too!") to the statement it was also read as, when the
    detector resolves agreements (``ellipsis="resolve"``).
    """

    contradiction: bool
    score: float
    evidence: tuple[int, ...] = ()
    category: str | None = None
    pair_scores: Mapping[int, float] = field(default_factory=dict)
    labels: Mapping[str, bool] | None = None
    label_scores: Mapping[str, float] | None = None
    knowledge_evidence: tuple[int, ...] | None = None  # 0-based knowledge rows the last turn conflicts with
    knowledge_scores: Mapping[int, float] | None = None  # attribution score of each knowledge row considered
    read_as: Mapping[int, str] | None = None  # "Me too!" turns and the statement each was also read as

    @property
    def label(self) -> str:
        return "contradiction" if self.contradiction else "non_contradiction"

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready form (keys of ``pair_scores`` become strings)."""
        out: dict[str, Any] = {
            "contradiction": self.contradiction,
            "score": round(float(self.score), 6),
            "evidence": list(self.evidence),
            "category": self.category,
            "pair_scores": {str(k): round(float(v), 6) for k, v in self.pair_scores.items()},
        }
        if self.labels is not None:
            out["labels"] = dict(self.labels)
        if self.label_scores is not None:
            out["label_scores"] = {k: round(float(v), 6) for k, v in self.label_scores.items()}
        if self.knowledge_evidence is not None:
            out["knowledge_evidence"] = list(self.knowledge_evidence)
        if self.knowledge_scores is not None:
            out["knowledge_scores"] = {str(k): round(float(v), 6) for k, v in self.knowledge_scores.items()}
        if self.read_as:
            out["read_as"] = {str(k): v for k, v in self.read_as.items()}
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], extra: str = "refuse") -> Verdict:
        """The verdict :meth:`to_dict` wrote, read back (also after ``json.dumps``/``json.loads``, which turn the
        turn indices keying ``pair_scores``, ``knowledge_scores`` and ``read_as`` into strings), so that
        ``Verdict.from_dict(v.to_dict()).to_dict() == v.to_dict()``. The fields written beside a verdict (``line``,
        ``id`` and ``turn`` of ``dialcheck score`` and ``check --json``, ``index`` and ``text`` of ``/rank``,
        ``split`` and the gold fields of ``evaluate``'s predictions: :data:`VERDICT_BESIDE`) are ignored; any other
        field (a misspelt ``"evidnce"``, whose evidence would silently be read as none) is refused, as are an error
        line of ``score`` (``{"line": 3, "error": "..."}``), a whole HTTP response, a missing field or a value of the
        wrong type: an :class:`~dialcheck.errors.InputError` naming the field.

        ``extra="ignore"`` reads a row that carries other columns beside the verdict's, such as a row of
        :class:`dialcheck.batch.BatchScorer`'s output (the input table's columns, ``error``, and ``labels`` as the
        list of the labels that fired): other fields are passed over unread, so a misspelt field is too; ``labels``
        may be such a list, read as each named label true (the labels that did not fire are not in the row, and an
        empty list reads as None); numpy values (``tolist``) are read as plain ones; a row whose ``error`` is set is
        refused as an error record.

        >>> import json
        >>> line = '{"line": 1, "id": "a", "contradiction": true, "score": 0.93, "evidence": [0], "category": null, '
        >>> line += '"pair_scores": {"0": 0.93, "2": 0.05}}'
        >>> v = Verdict.from_dict(json.loads(line))
        >>> v.contradiction, v.evidence, v.pair_scores
        (True, (0,), {0: 0.93, 2: 0.05})
        >>> Verdict.from_dict({"contradiction": True, "score": "high"})
        Traceback (most recent call last):
        ...
        dialcheck.errors.InputError: Verdict.score: expected a number in [0, 1], got string
        >>> Verdict.from_dict({"contradiction": True, "score": 0.9, "evidnce": [0]})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        dialcheck.errors.InputError: Verdict.evidnce: unknown field (did you mean "evidence"?); a verdict's fields \
are contradiction, score, evidence, ...
        >>> row = {"id": "c1", "turns": ["Hi"], "contradiction": True, "score": 0.9, "evidence": [0], "category": None,
        ...        "labels": ["KBI"], "error": None}  # a BatchScorer row
        >>> Verdict.from_dict(row, extra="ignore").labels
        {'KBI': True}
        """
        if extra not in ("refuse", "ignore"):
            raise ValueError(f'extra: expected "refuse" or "ignore", got {extra!r}')
        if not isinstance(d, Mapping):
            raise InputError(f"Verdict: expected a mapping (Verdict.to_dict's form), got {_got(d)}")
        if d.get("contradiction") is None and d.get("error") is not None:  # score's error line, a BatchScorer bad row
            where = f" (line {d['line']})" if "line" in d else f" (id {d['id']!r})" if d.get("id") is not None else ""
            raise InputError(f"Verdict: an error record{where}, not a verdict: {d['error']}")
        if "contradiction" not in d and ("verdicts" in d or "ranked" in d):
            key = "verdicts" if "verdicts" in d else "ranked"
            raise InputError(f'Verdict: a response of the HTTP API, not a verdict: read each item of its "{key}"')
        if extra == "refuse":
            _known_fields(d)
        else:  # a table's row: its verdict fields alone, numpy cells as plain values
            row = {k: _plain(v) for k, v in d.items() if k in VERDICT_FIELDS}
            if isinstance(row.get("labels"), list):  # BatchScorer's: the names of the labels that fired
                fired = row["labels"]
                for i, k in enumerate(fired):
                    if not isinstance(k, str):
                        raise InputError(f"Verdict.labels[{i}]: label names are strings, got {_got(k)}")
                row["labels"] = {k: True for k in fired} or None
            d = row
        for key in ("contradiction", "score"):
            if key not in d:
                raise InputError(f"Verdict.{key}: missing (expected Verdict.to_dict's form)")
        contradiction = d["contradiction"]
        if not isinstance(contradiction, bool):
            raise InputError(f"Verdict.contradiction: expected true or false, got {_got(contradiction)}")
        score = _number(d["score"], "Verdict.score", unit=True)
        category = d.get("category")
        if category is not None and not isinstance(category, str):
            raise InputError(f"Verdict.category: expected a string or null, got {_got(category)}")
        labels = d.get("labels")
        if labels is not None:
            if not isinstance(labels, Mapping):
                raise InputError(f"Verdict.labels: expected a mapping of label -> true/false, got {_got(labels)}")
            for k, b in labels.items():
                if not isinstance(k, str) or not isinstance(b, bool):
                    bad = f"label names are strings, got {_got(k)}" if not isinstance(k, str) else None
                    raise InputError(f"Verdict.labels.{k}: {bad or f'expected true or false, got {_got(b)}'}")
            labels = dict(labels)
        label_scores = d.get("label_scores")
        if label_scores is not None:
            if not isinstance(label_scores, Mapping):
                raise InputError(
                    f"Verdict.label_scores: expected a mapping of label -> score, got {_got(label_scores)}"
                )
            for k in label_scores:
                if not isinstance(k, str):
                    raise InputError(f"Verdict.label_scores: label names are strings, got {_got(k)}")
            label_scores = {k: _number(x, f"Verdict.label_scores.{k}", unit=True) for k, x in label_scores.items()}
        knowledge_evidence = d.get("knowledge_evidence")
        knowledge_scores = d.get("knowledge_scores")
        read_as = d.get("read_as")
        return cls(
            contradiction=contradiction,
            score=score,
            evidence=_indices(d.get("evidence", []), "Verdict.evidence"),
            category=category,
            pair_scores=_by_index(d.get("pair_scores", {}), "Verdict.pair_scores", _number),
            labels=labels,
            label_scores=label_scores,
            knowledge_evidence=None
            if knowledge_evidence is None
            else _indices(knowledge_evidence, "Verdict.knowledge_evidence"),
            knowledge_scores=None
            if knowledge_scores is None
            else _by_index(knowledge_scores, "Verdict.knowledge_scores", _number),
            read_as=None if read_as is None else _by_index(read_as, "Verdict.read_as", _text),
        )


#: The fields of :meth:`Verdict.to_dict`'s form, in the order it writes them.
VERDICT_FIELDS = (
    "contradiction",
    "score",
    "evidence",
    "category",
    "pair_scores",
    "labels",
    "label_scores",
    "knowledge_evidence",
    "knowledge_scores",
    "read_as",
)
#: The fields the writers of verdicts put beside one, which :meth:`Verdict.from_dict` ignores: ``line``, ``id`` and
#: ``turn`` (``dialcheck score``, ``check --json``, ``/check``), ``index`` and ``text`` (``/rank``), ``split`` and the
#: gold fields (``evaluate --predictions``). None of them copies other fields of the input record.
VERDICT_BESIDE = ("line", "id", "turn", "index", "text", "split", "gold", "gold_evidence", "gold_category")


def _known_fields(d: Mapping[str, Any]) -> None:
    """Refuse the keys of ``d`` that are neither :data:`VERDICT_FIELDS` nor :data:`VERDICT_BESIDE`, naming each
    (with the known field it is closest to, if any) and the known ones."""
    import difflib

    unknown = [k for k in d if k not in VERDICT_FIELDS and k not in VERDICT_BESIDE]
    if not unknown:
        return
    table = ("error", "turns", "messages")  # a row of BatchScorer's output: its input's columns, not misspellings
    row = (
        "; a table's row (BatchScorer's): Verdict.from_dict(row, extra=\"ignore\")"
        if any(k in d for k in table)
        else ""
    )
    known = (*VERDICT_FIELDS, *VERDICT_BESIDE)

    def hint(key: Any) -> str:
        close = difflib.get_close_matches(key, known, n=1) if isinstance(key, str) and key not in table else []
        return f' (did you mean "{close[0]}"?)' if close else ""

    if len(unknown) == 1:
        what = f"Verdict.{unknown[0]}: unknown field{hint(unknown[0])}"
    else:
        what = "Verdict: unknown fields " + ", ".join(f"{k}{hint(k)}" for k in unknown)
    raise InputError(
        f"{what}; a verdict's fields are {', '.join(VERDICT_FIELDS)}, and those written beside one, which are "
        f"ignored: {', '.join(VERDICT_BESIDE)}{row}"
    )


def _plain(value: Any) -> Any:
    """A table's cell as plain Python: engines hand out numpy arrays and scalars where JSON had lists and numbers."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _number(value: Any, name: str, unit: bool = False) -> float:
    """``value`` as a float: a finite JSON number (no ``true``), in [0, 1] when ``unit``."""
    import math

    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or (unit and not 0 <= value <= 1):
        expected = "a number in [0, 1]" if unit else "a number"
        shown = repr(value) if ok or isinstance(value, float) else _got(value)
        raise InputError(f"{name}: expected {expected}, got {shown}")
    return float(value)


def _text(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise InputError(f"{name}: expected a string, got {_got(value)}")
    return value


def _index(value: Any, name: str) -> int:
    """A 0-based turn (or row) index: an int, or the digits JSON made of an int key."""
    if isinstance(value, str) and value.isascii() and value.isdigit():
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    shown = repr(value) if isinstance(value, (str, int)) and not isinstance(value, bool) else _got(value)
    raise InputError(f"{name}: expected a 0-based index, got {shown}")


def _indices(value: Any, name: str) -> tuple[int, ...]:
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, (list, tuple)):
        raise InputError(f"{name}: expected a list of 0-based indices, got {_got(value)}")
    return tuple(_index(x, f"{name}[{i}]") for i, x in enumerate(value))


def _by_index(value: Any, name: str, read: Any) -> dict[int, Any]:
    if not isinstance(value, Mapping):
        raise InputError(f"{name}: expected a mapping of 0-based index -> value, got {_got(value)}")
    out = {}
    for k, x in value.items():
        i = _index(k, f"{name} key")
        out[i] = read(x, f"{name}.{k}")
    return out
