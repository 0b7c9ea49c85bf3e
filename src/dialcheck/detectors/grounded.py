"""Knowledge-grounded, multi-label detector for task-oriented dialogue (CI-ToD, Qin et al. 2021).

The last system turn (the *reply*) is checked against the user's current request (``QI``), the dialogue
history (``HI``) and the knowledge base rows the system had (``KBI``). One sequence-pair pass gives three
sigmoid scores; a label is on when its score reaches its threshold (0.5 as in the paper, ``tau`` for all
labels unless a per-label threshold such as ``thresholds["KBI"]`` is set).

Input (see :func:`build_input`): the first segment holds the knowledge base, one row after another as
``column value`` pairs between ``[kb]`` and ``[/kb]`` (rows separated by ``;``), then the history with
``user:``/``system:`` markers, then the request as ``request: ...``; the reply is the second segment and is
never cut. Underscores in the corpus' entity spellings (``the_westin``) read as spaces.

Long knowledge bases were the paper's main error source. Before anything is cut, rows are ranked by
entity overlap with the dialogue (:func:`rank_rows`: a row scores the sum of ``1/df`` over its values that
occur in the history, request or reply, ``df`` being how many rows hold that value); the best rows fill the
token budget left after the history, request and reply, and are shown in their knowledge-base order. With
``selection="none"`` rows are kept in order until the budget is full (plain truncation of the table).
With ``marks=True`` each knowledge value the reply mentions is preceded by ``*`` and each value that only
the request or history mention by ``#`` (entity alignment given to the encoder rather than learned).
With ``checks=True`` the reply is followed by ``[check]`` and, for each typed entity value it mentions,
whether the request, the history and the knowledge base hold the same value or another value of that type
(:func:`entity_checks`). Types come from the knowledge base's columns and, optionally, a vocabulary of
type -> values (CI-ToD's ``entities.json``), so "atherton" in a reply to a request about "downtown chicago"
reads ``atherton: request other, kb absent``: most QI/HI/KBI errors are such typed mismatches, and a small
encoder trained on 2,000 dialogues does not find them on its own across a 256-token window.

Evidence is found by occlusion, only for dialogues where the label fired: each history turn (for ``HI``) and
each knowledge row in the input (for ``KBI``) is removed in turn, and its attribution is how much the
label's score drops. Turns/rows whose drop reaches ``evidence_delta`` are the evidence; if none does, the one
with the largest drop is; with ``checks``, a fired ``KBI`` names instead the row the reply is about when a
check finds a reply value that this row contradicts or the table lacks. ``QI`` evidence is the request
turn. ``Verdict.evidence`` is the union of the ``QI`` and ``HI`` turns, ``pair_scores`` the history
attributions, ``knowledge_evidence`` the rows and ``knowledge_scores`` the row attributions.
"""

from __future__ import annotations

import functools
import logging
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..io import as_dialogues, user_names
from ..schema import Dialogue, KnowledgeBase, Verdict
from .base import Detector, check_threshold, register_detector

__all__ = [
    "EMPTY_VALUES",
    "LABELS",
    "GroundedDetector",
    "GroundedInput",
    "build_input",
    "checks_text",
    "dialogue_roles",
    "entity_checks",
    "knowledge_notes",
    "rank_rows",
    "reply_row",
    "row_text",
]

log = logging.getLogger(__name__)

LABELS = ("QI", "HI", "KBI")
KB_START, KB_END, ROW_SEP = "[kb]", "[/kb]", ";"
USER, SYSTEM, REQUEST = "user:", "system:", "request:"
MARK_REPLY, MARK_CONTEXT = "*", "#"
EMPTY_VALUES = frozenset({"", "-"})  # the calendar KB writes "-" for an empty cell
USER_NAMES = frozenset({"user", "driver", "human", "customer", "client", "usr", "u"})
SYSTEM_NAMES = frozenset({"system", "assistant", "bot", "agent", "sys", "model", "s"})
_NON_WORD = re.compile(r"[^0-9a-z]+")


def readable(text: str) -> str:
    """Corpus spellings made readable: underscores become spaces, runs of spaces one space.

    >>> readable("the_westin is 2_miles  away")
    'the westin is 2 miles away'
    """
    return " ".join(text.replace("_", " ").split())


def _match_form(text: str) -> str:
    """Lower-cased words separated by single spaces, for whole-word matching of entity values."""
    return _NON_WORD.sub(" ", text.lower().replace("_", " ")).strip()


def row_text(row: dict[str, str] | Any, reply: str | None = None, context: str | None = None) -> str:
    """One knowledge row as ``column value`` pairs, empty cells left out.

    With ``reply``/``context`` (texts in :func:`_match_form`), values the reply mentions are marked ``*`` and
    values only the request or history mention are marked ``#`` (the ``marks`` option).

    >>> row_text({"poi": "the_westin", "distance": "2_miles", "room": "-"})
    'poi the westin distance 2 miles'
    >>> row_text({"poi": "the_westin", "distance": "2_miles", "area": "x"}, reply="it is 2 miles", context="the westin")
    'poi # the westin distance * 2 miles area x'
    """
    parts = []
    for k, v in row.items():
        if str(v).strip() in EMPTY_VALUES:
            continue
        mark = ""
        if reply is not None or context is not None:
            form = _match_form(v)
            if form and f" {form} " in f" {reply or ''} ":
                mark = f"{MARK_REPLY} "
            elif form and f" {form} " in f" {context or ''} ":
                mark = f"{MARK_CONTEXT} "
        parts.append(f"{readable(k)} {mark}{readable(v)}")
    return " ".join(parts)


def dialogue_roles(d: Dialogue) -> list[str]:
    """``"user"`` or ``"system"`` for each turn.

    Known speaker names (user, driver, human, ...; system, assistant, bot, ...) decide; other speakers are
    assigned by alternation, the last turn being the system's.

    >>> dialogue_roles(Dialogue.from_texts(["hi", "hello", "where is x", "at y"]))
    ['user', 'system', 'user', 'system']
    >>> dialogue_roles(Dialogue.from_texts(["where is x", "at y"], speakers=("driver", "assistant")))
    ['user', 'system']

    A chat log's user named by ``name`` (:func:`~dialcheck.io.user_names`) is a user.
    """
    n = len(d.turns)
    out = []
    named = set(user_names(d))  # a chat log's users named by their messages' "name"
    for i, t in enumerate(d.turns):
        name = t.speaker.strip().lower()
        if name in USER_NAMES or t.speaker in named:
            out.append("user")
        elif name in SYSTEM_NAMES:
            out.append("system")
        else:
            out.append("system" if (n - 1 - i) % 2 == 0 else "user")
    return out


def rank_rows(knowledge: KnowledgeBase, texts: Sequence[str]) -> list[tuple[int, float]]:
    """Knowledge rows ordered by entity overlap with ``texts``, as ``(row index, score)``.

    A row's score is the sum of ``1/df`` over its distinct non-empty values found (as whole words) in the
    texts, where ``df`` is the number of rows holding that value; ties and unmatched rows keep KB order.

    >>> kb = KnowledgeBase(({"poi": "whole_foods", "distance": "2_miles"}, {"poi": "the_westin", "distance": "2_miles"},
    ...                     {"poi": "hotel_keen", "distance": "4_miles"}))
    >>> rank_rows(kb, ["how far is the westin", "2 miles"])
    [(1, 1.5), (0, 0.5), (2, 0.0)]
    """
    text = f" {' '.join(_match_form(t) for t in texts)} "
    values = [
        {_match_form(v) for v in row.values() if str(v).strip() not in EMPTY_VALUES and _match_form(v)}
        for row in knowledge.rows
    ]
    df = Counter(v for vals in values for v in vals)
    scored = [(i, float(sum(1.0 / df[v] for v in vals if f" {v} " in text))) for i, vals in enumerate(values)]
    return sorted(scored, key=lambda x: (-x[1], x[0]))


def knowledge_notes(knowledge: KnowledgeBase | None) -> list[str]:
    """Plain-language notes on a knowledge table that is legal but may not be what the user meant.

    >>> knowledge_notes(KnowledgeBase(({"poi": "a", "distance": "1"}, {"poi": "b"}, {})))
    ['knowledge[1] lacks column(s) distance that other rows have; it is used with the columns it has', \
'knowledge[2] is empty and is ignored']
    >>> knowledge_notes(KnowledgeBase(()))
    ['the knowledge base is empty: the reply is judged against no rows (KBI can only come from the dialogue)']
    """
    if knowledge is None:
        return []
    if not knowledge.rows:
        return [
            "the knowledge base is empty: the reply is judged against no rows (KBI can only come from the dialogue)"
        ]
    notes = []
    columns = knowledge.columns
    filled = [row for row in knowledge.rows if row]
    counts = Counter(c for row in filled for c in row)
    common = [c for c in columns if counts[c] * 2 >= len(filled)]  # columns of at least half the rows
    for i, row in enumerate(knowledge.rows):
        if not row:
            notes.append(f"knowledge[{i}] is empty and is ignored")
            continue
        missing = [c for c in common if c not in row]
        extra = [c for c in row if c not in common]
        if missing:
            notes.append(
                f"knowledge[{i}] lacks column(s) {', '.join(missing)} that other rows have; "
                "it is used with the columns it has"
            )
        if extra:
            notes.append(f"knowledge[{i}] has column(s) {', '.join(extra)} that most rows lack; they are kept")
    return notes


CHECK_START = "[check]"
_CLOCK = re.compile(r"\b(\d{1,2}) (am|pm)\b")


def _check_form(text: str) -> str:
    """:func:`_match_form` with clock times written one way ("7 pm" and "7_pm" read as "7pm").

    >>> _check_form("at 7_pm or 10 AM")
    'at 7pm or 10am'
    """
    return _CLOCK.sub(r"\1\2", _match_form(text))


def type_values(
    knowledge: KnowledgeBase | None, vocabulary: dict[str, Sequence[str]] | None = None
) -> dict[str, set[str]]:
    """Entity type -> value forms (:func:`_match_form`), from the knowledge base's columns and a vocabulary.

    >>> kb = KnowledgeBase(({"poi": "the_westin", "distance": "2_miles"},))
    >>> sorted((k, sorted(v)) for k, v in type_values(kb, {"poi": ["whole_foods"], "party": ["-"]}).items())
    [('distance', ['2 miles']), ('poi', ['the westin', 'whole foods'])]
    """
    key = tuple((str(k), tuple(str(v) for v in vs)) for k, vs in (vocabulary or {}).items())
    out = {k: set(forms) for k, forms in _value_forms(key).items()}
    rows = knowledge.rows if knowledge is not None else ()
    for k, forms in _value_forms(tuple((k, (v,)) for row in rows for k, v in row.items())).items():
        out.setdefault(k, set()).update(forms)
    return out


@functools.lru_cache(maxsize=16)
def _value_forms(pairs: tuple[tuple[str, tuple[str, ...]], ...]) -> dict[str, frozenset[str]]:
    """Type -> value forms of ``(type, values)`` pairs, empty cells left out (cached: a detector's vocabulary
    is the same on every call)."""
    out: dict[str, set[str]] = {}
    for k, values in pairs:
        for v in values:
            form = _check_form(v) if v.strip() not in EMPTY_VALUES else ""
            if form:
                out.setdefault(k, set()).add(form)
    return {k: frozenset(v) for k, v in out.items()}


def mentions(text: str, types: dict[str, set[str]]) -> dict[str, set[str]]:
    """Typed values ``text`` mentions as whole words, value form -> its types; a value inside a longer
    mentioned value ("2 miles" in "12 miles" cannot happen, "park" in "park street" can) is dropped.

    >>> types = {"poi": {"park street", "park"}, "distance": {"2 miles"}}
    >>> sorted(mentions("go to park street it is 2 miles", types).items())
    [('2 miles', {'distance'}), ('park street', {'poi'})]
    """
    form = f" {_check_form(text)} "
    found: dict[str, set[str]] = {}
    for t, values in types.items():
        for v in values:
            if f" {v} " in form:
                found.setdefault(v, set()).add(t)
    longer = list(found)
    return {v: ts for v, ts in found.items() if not any(v != w and f" {v} " in f" {w} " for w in longer)}


def _compare(value: str, value_types: set[str], other: dict[str, set[str]]) -> str | None:
    if value in other:
        return "same"
    if any(ts & value_types for ts in other.values()):
        return "other"
    return None


def entity_checks(
    reply: str,
    request: str | None,
    history: Sequence[str],
    knowledge: KnowledgeBase | None,
    vocabulary: dict[str, Sequence[str]] | None = None,
    rows: Sequence[int] | None = None,
) -> list[tuple[str, dict[str, str]]]:
    """For each typed value the reply mentions: does the request / history hold the ``same`` value or an
    ``other`` value of its type, and does the knowledge base hold it in the row the reply is about
    (``same``), only in another row while that row has another value of its type (``other``), or nowhere
    although the table has a column of its type (``absent``)? Unknown relations are left out.

    The row the reply is about is the best of :func:`rank_rows` on the reply alone (``rows`` restricts
    the table, e.g. to the rows shown).

    >>> kb = KnowledgeBase(({"poi": "dominos", "distance": "2_miles", "traffic_info": "car_collision_nearby"},
    ...                     {"poi": "philz", "distance": "5_miles", "traffic_info": "moderate_traffic"}))
    >>> checks = entity_checks("dominos is 7_miles away with moderate_traffic", "a route with no_traffic",
    ...                        ["where is dominos"], kb, {"distance": ["7_miles"], "traffic_info": ["no_traffic"]})
    >>> for value, rel in checks:
    ...     print(value, rel)
    dominos {'history': 'same', 'kb': 'same'}
    7 miles {'kb': 'absent'}
    moderate traffic {'request': 'other', 'kb': 'other'}
    """
    table = knowledge if knowledge is not None else KnowledgeBase(())
    if rows is not None:
        table = KnowledgeBase(tuple(table.rows[i] for i in rows))
    types = type_values(table, vocabulary)
    said = mentions(reply, types)
    if not said:
        return []
    asked = mentions(request or "", types)
    before = mentions(" . ".join(history), types)
    row_forms = [
        {str(k): _check_form(str(v)) for k, v in row.items() if str(v).strip() not in EMPTY_VALUES}
        for row in table.rows
    ]
    kb_types = {k for r in row_forms for k in r}
    about = reply_row(reply, table)
    best = row_forms[about] if about is not None else None
    reply_form = f" {_check_form(reply)} "
    out = []
    for value in sorted(said, key=lambda v: reply_form.find(f" {v} ")):
        ts = said[value]
        rel: dict[str, str] = {}
        for name, other in (("request", asked), ("history", before)):
            r = _compare(value, ts, other)
            if r:
                rel[name] = r
        in_kb = any(value in r.values() for r in row_forms)
        if best is not None and value in best.values():
            rel["kb"] = "same"
        elif best is not None and in_kb and any(best.get(t) not in (None, value) for t in ts):
            rel["kb"] = "other"
        elif in_kb:
            rel["kb"] = "same"
        elif ts & kb_types:
            rel["kb"] = "absent"
        if rel:
            out.append((value, rel))
    return out


def reply_row(reply: str, knowledge: KnowledgeBase | None, rows: Sequence[int] | None = None) -> int | None:
    """The knowledge row the reply is about: the best of :func:`rank_rows` on the reply alone (an index
    into ``knowledge.rows``; ``rows`` restricts the candidates), or None when the reply names no row's value.

    >>> kb = KnowledgeBase(({"poi": "dominos", "distance": "2_miles"}, {"poi": "philz", "distance": "2_miles"}))
    >>> reply_row("philz is 7 miles away", kb), reply_row("it is 2 miles away", kb, rows=[1]), reply_row("ok", kb)
    (1, 1, None)
    """
    if knowledge is None or not knowledge.rows:
        return None
    index = list(rows) if rows is not None else list(range(len(knowledge.rows)))
    ranked = rank_rows(KnowledgeBase(tuple(knowledge.rows[i] for i in index)), [reply])
    return index[ranked[0][0]] if ranked and ranked[0][1] > 0 else None


def checks_text(checks: Sequence[tuple[str, dict[str, str]]]) -> str:
    """The ``[check]`` suffix of the reply segment ('' when there is nothing to say).

    >>> checks_text([("atherton", {"request": "other", "kb": "absent"}), ("friday", {"kb": "same"})])
    '[check] atherton: request other, kb absent ; friday: kb same'
    """
    if not checks:
        return ""
    items = [f"{v}: " + ", ".join(f"{k} {r}" for k, r in rel.items()) for v, rel in checks]
    return f"{CHECK_START} " + " ; ".join(items)


@dataclass(frozen=True)
class GroundedInput:
    """The text pair for one dialogue and what went into it (indices into the dialogue and its KB)."""

    first: str
    second: str
    rows: tuple[int, ...]
    history: tuple[int, ...]
    request: int | None
    reply: int | None
    checks: tuple[tuple[str, dict[str, str]], ...] = ()  # the reply's entity checks (``checks=True``)


def split_turns(d: Dialogue) -> tuple[list[int], int | None, int | None]:
    """(history turn indices, request turn index, reply turn index) of a dialogue.

    The reply is the last turn when it is the system's; the request is the last user turn before it. A
    dialogue ending with a user turn has no reply (as in the corpus, the reply is then empty).

    >>> split_turns(Dialogue.from_texts(["find a cafe", "which area?", "palo alto", "blue bottle is 2 miles away"]))
    ([0, 1], 2, 3)
    """
    roles = dialogue_roles(d)
    n = len(d.turns)
    reply = n - 1 if roles[-1] == "system" else None
    end = reply if reply is not None else n
    request = next((i for i in range(end - 1, -1, -1) if roles[i] == "user"), None)
    history = list(range(request if request is not None else end))
    return history, request, reply


def build_input(
    d: Dialogue,
    *,
    history: bool = True,
    selection: str = "overlap",
    budget: int | None = None,
    token_len: Callable[[str], int] | None = None,
    rows: Sequence[int] | None = None,
    history_turns: Sequence[int] | None = None,
    marks: bool = False,
    checks: bool = False,
    vocabulary: dict[str, Sequence[str]] | None = None,
) -> GroundedInput:
    """The (first, second) text pair of one dialogue (see the module docstring).

    ``budget``: tokens available for both segments (without special tokens), measured with ``token_len``;
    knowledge rows are added (best first with ``selection="overlap"``, in order with ``"none"``) while they
    fit after the history, request and reply. ``rows``/``history_turns`` force exactly these rows/turns
    (used for occlusion). ``history=False`` leaves the history out (the paper's context ablation).
    ``marks=True`` marks knowledge values the reply mentions with ``*`` and those only the request or the
    (shown) history mention with ``#``, so the encoder need not align entities across the whole window.
    ``checks=True`` appends the reply's typed entity checks (:func:`entity_checks`, types from the knowledge
    base's columns and ``vocabulary``) to the second segment.

    >>> d = Dialogue.from_texts(["where is the_westin", "it is at 329_el_camino_real"], speakers=("user", "system"),
    ...     knowledge=KnowledgeBase(({"poi": "the_westin", "address": "329_el_camino_real"},
    ...                              {"poi": "whole_foods", "address": "819_alma_st"})))
    >>> x = build_input(d)
    >>> print(*x.first.split(" ; "), sep=" ;\\n")
    [kb] poi the westin address 329 el camino real ;
    poi whole foods address 819 alma st [/kb] request: where is the westin
    >>> x.second, x.rows
    ('it is at 329 el camino real', (0, 1))
    """
    if selection not in ("overlap", "none"):
        raise ValueError(f"selection must be 'overlap' or 'none', got {selection!r}")
    roles = dialogue_roles(d)
    hist, request, reply = split_turns(d)
    if history_turns is not None:
        hist = list(history_turns)
    elif not history:
        hist = []
    second = readable(d.turns[reply].text) if reply is not None else ""
    found: list[tuple[str, dict[str, str]]] = []
    if checks and reply is not None:
        found = entity_checks(
            d.turns[reply].text,
            d.turns[request].text if request is not None else None,
            [d.turns[i].text for i in hist],
            d.knowledge,
            vocabulary,
            rows=rows,
        )
        second = f"{second} {checks_text(found)}".strip()
    parts = [f"{USER if roles[i] == 'user' else SYSTEM} {readable(d.turns[i].text)}" for i in hist]
    if request is not None:
        parts.append(f"{REQUEST} {readable(d.turns[request].text)}")
    dialogue_text = " ".join(parts)
    kb = d.knowledge or KnowledgeBase(())
    if marks:
        reply_form = _match_form(d.turns[reply].text) if reply is not None else ""
        context_form = " ".join(_match_form(d.turns[i].text) for i in [*hist, request] if i is not None)
        texts = {i: row_text(r, reply_form, context_form) for i, r in enumerate(kb.rows)}
    else:
        texts = {i: row_text(r) for i, r in enumerate(kb.rows)}
    if rows is not None:
        chosen = sorted(rows)
    else:
        if selection == "overlap":
            seen = [d.turns[i].text for i in hist] + [d.turns[i].text for i in (request, reply) if i is not None]
            order = [i for i, _ in rank_rows(kb, seen)]
        else:
            order = list(range(len(kb.rows)))
        order = [i for i in order if texts[i]]
        if budget is None or token_len is None:
            chosen = sorted(order)
        else:
            left = budget - token_len(f"{KB_START} {KB_END} {dialogue_text}") - token_len(second)
            chosen = []
            for i in order:
                cost = token_len(texts[i]) + 1
                if cost > left:
                    if selection == "none":
                        break
                    continue
                chosen.append(i)
                left -= cost
            chosen.sort()
    kb_text = f" {ROW_SEP} ".join(texts[i] for i in chosen if texts.get(i))
    first = f"{KB_START} {kb_text} {KB_END}" if kb_text else f"{KB_START} {KB_END}"
    if dialogue_text:
        first = f"{first} {dialogue_text}"
    return GroundedInput(first, second, tuple(chosen), tuple(hist), request, reply, tuple(found))


@register_detector("citod.grounded.v1")
class GroundedDetector(Detector):
    """QI/HI/KBI detector: one multi-label pass over (knowledge + history + request, reply)."""

    truncation_side = "left"  # if the window still overflows, the table's first rows go first, then old turns

    def __init__(
        self,
        base: str = "all-MiniLM-L6-v2",
        tau: float = 0.5,
        max_length: int = 256,
        adapter: dict[str, Any] | None = None,
        history: bool = True,
        selection: str = "overlap",
        evidence_delta: float = 0.05,
        marks: bool = False,
        checks: bool = False,
        vocabulary: dict[str, list[str]] | None = None,
        **options: Any,
    ) -> None:
        super().__init__(
            base=base,
            tau=tau,
            eta_e=tau,
            max_length=max_length,
            adapter=adapter,
            history=history,
            selection=selection,
            evidence_delta=evidence_delta,
            marks=marks,
            checks=checks,
            vocabulary=vocabulary,
            **options,
        )
        self.config.labels = list(LABELS)
        self.config.problem_type = "multi_label_classification"

    # -- configuration ----------------------------------------------------------------------------
    @property
    def options(self) -> dict[str, Any]:
        return self.config.options

    @Detector.tau.setter
    def tau(self, value: float) -> None:
        """Setting ``tau`` (``--tau``) moves all three labels: per-label thresholds (e.g. calibrated ones) go.

        Read, ``tau`` is the threshold of every label that has none of its own (0.5 as in the paper).
        """
        self.config.thresholds["tau"] = check_threshold(value, "tau")
        for lab in LABELS:
            self.config.thresholds.pop(lab, None)

    def add_vocabulary(self, vocabulary: dict[str, Sequence[str]]) -> None:
        """Add entity types and values (e.g. your product names, cities, dates) to the ``checks`` vocabulary.

        Values of the knowledge base's own columns are typed anyway; a vocabulary also types values the
        table lacks, so a reply naming a city that is not in the table reads ``kb absent``.

        >>> det = GroundedDetector(checks=True, vocabulary={"location": ["boston"]})
        >>> det.add_vocabulary({"location": ["atherton"], "date": ["today"]})
        >>> det.options["vocabulary"]
        {'location': ['atherton', 'boston'], 'date': ['today']}
        """
        merged = {str(k): list(v) for k, v in (self.options.get("vocabulary") or {}).items()}
        for k, values in vocabulary.items():
            merged[str(k)] = sorted(set(merged.get(str(k), [])) | {str(v) for v in values})
        self.options["vocabulary"] = merged

    def threshold(self, label: str) -> float:
        """The decision threshold of ``label`` (its own if set, else ``tau``)."""
        return float(self.config.thresholds.get(label, self.tau))

    def _budget(self) -> tuple[int | None, Callable[[str], int] | None]:
        if self._clf is None or self._clf.tokenizer is None:
            return None, None
        clf = self._clf
        return clf.max_length - clf.tokenizer.num_special_tokens_to_add(pair=True), clf._token_len

    def build(self, d: Dialogue, **overrides: Any) -> GroundedInput:
        """The model input of ``d`` under this detector's options (history, row selection, budget)."""
        budget, token_len = self._budget()
        kw: dict[str, Any] = {
            "history": bool(self.options.get("history", True)),
            "selection": str(self.options.get("selection", "overlap")),
            "marks": bool(self.options.get("marks", False)),
            "checks": bool(self.options.get("checks", False)),
            "vocabulary": self.options.get("vocabulary"),
            "budget": budget,
            "token_len": token_len,
        }
        kw.update(overrides)
        return build_input(d, **kw)

    # -- prediction -------------------------------------------------------------------------------
    def predict(
        self,
        dialogues: Sequence[Dialogue],
        batch_size: int = 32,
        show_progress_bar: bool = False,
        evidence: bool = True,
    ) -> list[Verdict]:
        """One verdict per dialogue; ``evidence=False`` skips the occlusion passes (faster evaluation)."""
        dialogues = as_dialogues(dialogues)
        inputs = [self.build(d) for d in dialogues]
        clf = self.classifier
        idx = {lab: clf.labels.index(lab) for lab in LABELS}
        probs = clf.proba([(x.first, x.second) for x in inputs], batch_size, show_progress_bar)
        fired = [{lab: bool(p[idx[lab]] >= self.threshold(lab)) for lab in LABELS} for p in probs]
        occl: dict[int, dict[str, dict[int, float]]] = {}
        if evidence:
            occl = self._occlusion(dialogues, inputs, probs, fired, idx, batch_size)
        delta = float(self.options.get("evidence_delta", 0.05))
        out = []
        for k, (d, x, p, on) in enumerate(zip(dialogues, inputs, probs, fired, strict=True)):
            scores = {lab: float(p[idx[lab]]) for lab in LABELS}
            turn_att = occl.get(k, {}).get("HI", {})
            row_att = occl.get(k, {}).get("KBI", {})
            turns: set[int] = set()
            if on["QI"] and x.request is not None:
                turns.add(x.request)
            if on["HI"]:
                turns.update(_evidence(turn_att, delta))
            rows = tuple(sorted(_evidence(row_att, delta))) if on["KBI"] else ()
            if on["KBI"]:
                rows = self._conflicting_row(d, x) or rows
            has_kb = d.knowledge is not None
            out.append(
                Verdict(
                    contradiction=any(on.values()),
                    score=max(scores.values()),
                    evidence=tuple(sorted(turns)),
                    category="+".join(lab for lab in LABELS if on[lab]) or None,
                    pair_scores=turn_att,
                    labels=on,
                    label_scores=scores,
                    knowledge_evidence=rows if has_kb else None,
                    knowledge_scores=row_att if has_kb else None,
                )
            )
        return out

    @staticmethod
    def _conflicting_row(d: Dialogue, x: GroundedInput) -> tuple[int, ...]:
        """The shown row the reply is about, when an entity check of the input finds a value of the reply
        that this row contradicts (``kb other``) or that the table lacks (``kb absent``); else ()."""
        if x.reply is None or not any(rel.get("kb") in ("other", "absent") for _, rel in x.checks):
            return ()
        row = reply_row(d.turns[x.reply].text, d.knowledge, x.rows)
        return (row,) if row is not None else ()

    def _occlusion(
        self,
        dialogues: Sequence[Dialogue],
        inputs: Sequence[GroundedInput],
        probs: Any,
        fired: Sequence[dict[str, bool]],
        idx: dict[str, int],
        batch_size: int,
    ) -> dict[int, dict[str, dict[int, float]]]:
        """Score drops when each history turn (HI) or knowledge row (KBI) is left out, for fired labels."""
        jobs: list[tuple[int, str, int]] = []
        pairs: list[tuple[str, str]] = []
        for k, (d, x, on) in enumerate(zip(dialogues, inputs, fired, strict=True)):
            if on["HI"]:
                for t in x.history:
                    y = self.build(d, rows=x.rows, history_turns=[h for h in x.history if h != t])
                    jobs.append((k, "HI", t))
                    pairs.append((y.first, y.second))
            if on["KBI"]:
                for r in x.rows:
                    y = self.build(d, rows=[q for q in x.rows if q != r], history_turns=x.history)
                    jobs.append((k, "KBI", r))
                    pairs.append((y.first, y.second))
        out: dict[int, dict[str, dict[int, float]]] = {}
        if not pairs:
            return out
        occluded = self.classifier.proba(pairs, batch_size)
        for (k, lab, item), p in zip(jobs, occluded, strict=True):
            drop = max(0.0, float(probs[k][idx[lab]] - p[idx[lab]]))
            out.setdefault(k, {}).setdefault(lab, {})[item] = round(drop, 6)
        return out


def _evidence(attribution: dict[int, float], delta: float) -> list[int]:
    """Items whose attribution reaches ``delta``, else the single strongest one (if its drop is positive).

    >>> _evidence({0: 0.01, 3: 0.2, 5: 0.07}, 0.05), _evidence({0: 0.01, 3: 0.02}, 0.05), _evidence({1: 0.0}, 0.05)
    ([3, 5], [3], [])
    """
    chosen = [i for i, a in attribution.items() if a >= delta]
    if not chosen and attribution and max(attribution.values()) > 0:
        chosen = [max(attribution, key=attribution.__getitem__)]
    return sorted(chosen)
