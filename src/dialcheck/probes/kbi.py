"""KBI synthesis by entity replacement (the CI-ToD construction step), for augmentation and probes.

CI-ToD built knowledge-base inconsistencies by replacing an entity of a consistent system reply with
another entity of the same type. :func:`synthesize_kbi` does this on any dialogue with a knowledge base:

1. candidates are knowledge values (of any column) that the reply mentions as whole words and that the
   history and request do not mention (so the edit cannot create a query or history inconsistency);
2. the rows the reply is about are the rows holding that value together with the most other values
   mentioned in the request or reply (the *anchors*: ``the_westin`` anchors ``2_miles``); a value with
   no anchor is skipped, because nothing would say which row it should agree with;
3. the replacement is another value of the same column (from the knowledge base, else from an optional
   vocabulary of that column's entities) that no row pairs with the anchors and that the dialogue does not
   mention, so the edited reply disagrees with the table.

The result carries the edited dialogue, the edit and the rows it conflicts with (gold ``knowledge_evidence``
for probes). :func:`kbi_examples` turns a corpus into KBI-positive examples (other labels kept).

>>> from dialcheck.schema import KnowledgeBase
>>> kb = KnowledgeBase(({"poi": "the_westin", "distance": "2_miles"}, {"poi": "hotel_keen", "distance": "6_miles"}))
>>> d = Dialogue.from_texts(["is there a hotel nearby", "the_westin is 2_miles away"], ("user", "system"), knowledge=kb)
>>> edit = synthesize_kbi(d, random.Random(0))
>>> edit.dialogue.last.text, edit.column, edit.rows
('the_westin is 6_miles away', 'distance', (0,))
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from ..detectors.grounded import EMPTY_VALUES, _match_form, split_turns
from ..schema import Dialogue, Example, Turn

__all__ = ["KbiEdit", "kbi_candidates", "kbi_examples", "synthesize_kbi"]


@dataclass(frozen=True)
class KbiEdit:
    """A reply edited to contradict the knowledge base: which value became which, and the rows it now
    contradicts (0-based knowledge rows)."""

    dialogue: Dialogue
    column: str
    original: str
    replacement: str
    rows: tuple[int, ...]


@dataclass(frozen=True)
class _Candidate:
    column: str
    value: str
    rows: tuple[int, ...]
    anchors: frozenset[str]  # match forms of the other values of those rows mentioned in request/reply


def _mentions(text: str, value: str) -> bool:
    v = _match_form(value)
    return bool(v) and f" {v} " in f" {text} "


def _pattern(value: str) -> re.Pattern[str]:
    words = _match_form(value).split()
    return re.compile(r"(?<![0-9a-z])" + r"[\W_]+".join(map(re.escape, words)) + r"(?![0-9a-z])", re.IGNORECASE)


def kbi_candidates(d: Dialogue) -> list[_Candidate]:
    """Values of the reply that are safe to replace (see the module docstring), in reply order."""
    if d.knowledge is None or not d.knowledge.rows:
        return []
    history, request, reply = split_turns(d)
    if reply is None:
        return []
    reply_text = _match_form(d.turns[reply].text)
    context = " ".join(_match_form(d.turns[i].text) for i in history)
    if request is not None:
        context += " " + _match_form(d.turns[request].text)
    said = f"{context} {reply_text}"
    by_value: dict[tuple[str, str], list[int]] = {}
    for r, row in enumerate(d.knowledge.rows):
        for col, val in row.items():
            if str(val).strip() in EMPTY_VALUES or not _match_form(val):
                continue
            if _mentions(reply_text, val) and not _mentions(context, val):
                by_value.setdefault((col, val), []).append(r)
    out = []
    for (col, val), rows in by_value.items():
        found = {
            r: {
                _match_form(v)
                for c, v in d.knowledge.rows[r].items()
                if c != col and str(v).strip() not in EMPTY_VALUES and _match_form(v) and _mentions(said, v)
            }
            for r in rows
        }
        most = max(len(a) for a in found.values())
        if most:  # the rows the reply is about: those sharing the most other mentioned values
            best = tuple(r for r in rows if len(found[r]) == most)
            anchors = frozenset().union(*(found[r] for r in best))
            out.append(_Candidate(col, val, best, anchors))
    out.sort(key=lambda c: reply_text.find(_match_form(c.value)))
    return out


def _replacements(d: Dialogue, cand: _Candidate, vocabulary: Mapping[str, Sequence[str]] | None) -> list[str]:
    assert d.knowledge is not None
    said = " ".join(_match_form(t.text) for t in d.turns)
    forbidden = {_match_form(cand.value)}
    for row in d.knowledge.rows:  # values that some row pairs with the anchors would make the reply consistent
        forms = {_match_form(v) for v in row.values()}
        if cand.anchors & forms and cand.column in row:
            forbidden.add(_match_form(row[cand.column]))
    pool = [row.get(cand.column, "") for row in d.knowledge.rows]
    if vocabulary and cand.column in vocabulary:
        pool += list(vocabulary[cand.column])
    seen: dict[str, str] = {}
    for v in pool:
        f = _match_form(str(v))
        if str(v).strip() in EMPTY_VALUES or not f or f in forbidden or _mentions(said, v):
            continue
        seen.setdefault(f, str(v))
    return list(seen.values())


def synthesize_kbi(
    d: Dialogue, rng: random.Random, vocabulary: Mapping[str, Sequence[str]] | None = None
) -> KbiEdit | None:
    """Replace one knowledge value in the reply so that it contradicts the table; ``None`` if no safe edit.

    ``vocabulary`` maps column names to extra same-type entities (e.g. CI-ToD's ``entities.json``), used
    when the table itself offers no other value of that column.
    """
    options = [(c, r) for c in kbi_candidates(d) for r in _replacements(d, c, vocabulary)]
    if not options:
        return None
    cand, new = rng.choice(options)
    reply = len(d.turns) - 1
    old_text = d.turns[reply].text
    edited = _pattern(cand.value).sub(lambda _m: new, old_text)
    if edited == old_text:
        return None
    turns = (*d.turns[:reply], Turn(d.turns[reply].speaker, edited))
    meta = {**d.meta, "kbi_edit": f"{cand.column}: {cand.value} -> {new}"}
    return KbiEdit(Dialogue(turns, d.knowledge, meta), cand.column, cand.value, new, cand.rows)


def kbi_examples(
    examples: Iterable[Example],
    rng: random.Random,
    vocabulary: Mapping[str, Sequence[str]] | None = None,
    id_suffix: str = "+kbi",
) -> list[tuple[Example, KbiEdit]]:
    """KBI-positive copies of the examples whose gold KBI is false (other labels kept), with their edits."""
    out = []
    for ex in examples:
        if ex.labels is None or ex.labels.get("KBI"):
            continue
        edit = synthesize_kbi(ex.dialogue, rng, vocabulary)
        if edit is None:
            continue
        labels = {**ex.labels, "KBI": True}
        positive = [k for k, v in labels.items() if v]
        new_id = ex.id + id_suffix
        dialogue = replace(edit.dialogue, meta={**edit.dialogue.meta, "id": new_id})
        out.append(
            (
                Example(dialogue, True, ex.evidence, "+".join(positive), new_id, labels),
                replace(edit, dialogue=dialogue),
            )
        )
    return out
