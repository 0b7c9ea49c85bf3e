"""Utterance-based (structured) detector of DECODE: the last turn against each earlier turn.

Each earlier turn of the last speaker (or of every speaker, with ``speakers="all"``) is paired with the
last turn; the dialogue score is the maximum pair score and the evidence is every turn whose pair score
reaches ``eta_e``. Pairs of many dialogues are scored in shared batches. With the option
``pair_order="both"`` each pair is also read the other way round (last turn first) and the two scores are
averaged: twice the cost, and a reading less tied to how the checked turn is phrased.

Turns too long to share the model's window (a chat assistant's paragraphs; DECODE's turns almost always fit)
are not truncated: with ``long_turns="chunk"`` (the default) both turns of such a pair are cut into runs of
whole sentences of at most ``chunk_tokens`` tokens (default 32, the 95th percentile of DECODE's utterances,
so that each piece reads like the utterances the model learnt from; at most half the window), every piece
of the earlier turn is paired with every piece of the last turn, and the turn's pair score is the highest
of them. Pieces multiply (two 500-token code replies: about 16 x 16 pairs), so a turn of more than ``piece_pairs``
(``PIECE_PAIRS``, 64) pairs of pieces is scored on only that many, those whose two pieces share the words rarest
among its pieces (:func:`overlap_ranks`: a contradiction is about something both pieces mention; Han, kana,
Hangul and Thai read in character bigrams; pairs sharing none spread over its pieces); 0 scores every
one, as before 2026-12-03. DECODE's long pairs and the hand-written long-reply sets stay under it (at most 21).
``long_turns="truncate"`` keeps the old reading (the earlier turn cut to what the last turn
leaves of the window). Measured on DECODE with every turn padded to a paragraph in
``benchmarks/long_turns.py``. ``long_turns="pieces"`` reads a pair in pieces whenever either turn has more than
``chunk_tokens`` tokens, even when the pair fits the window; on long assistant replies it catches more
contradictions and flags more consistent replies, and it costs DECODE (docs/benchmarks.md, "Long replies to a second
detector"), so it is opt-in.

A turn that only agrees with the other speaker ("Me too!", "Neither have I.", "Same here") states what the
other speaker just said, and no pair of the turn's own words shows it. With ``ellipsis="resolve"`` such a turn
(an earlier one, or the checked last turn) is also read as the statements of the other speaker's turn before
it (its sentences that are not questions), and the turn's pair score is the higher of the two readings, so
"I'm a huge fan of Star Wars" ... "I have never seen a Star Wars movie." / "Neither have I." is caught. English
phrases only (``ELLIPSIS``); turns that match none are read as before.

With ``questions="skip"`` an earlier turn that only asks (every sentence a question) and says nothing about its
speaker (no "I", "my", "we", ...) is not paired with the last turn: "How many children do you have?" asserts
nothing that "I don't have any kids" could contradict, yet a pair classifier often scores such pairs high.
A question that carries its speaker ("how old is my dog, do you think?") is still read (``asks_only``).
``questions="strip"`` also reads every paired turn without its questions that say nothing about its speaker
(``without_questions``), and ``questions="echoes"`` without only those that hand the turn back ("Do you?", "And
you?"; ``without_echoes``): DECODE's contradicting turns seldom ask, so the classifiers read a question as a sign of
consistency. Both lift same-subject replies that ask as much as contradictions that do, so neither is on by
default (docs/benchmarks.md, "Turns that also ask the user something").

With ``slots="persona"`` an earlier turn of the speaker that states their name, age or job in the first person
scores at least ``SLOT_SCORE`` (0.99) when the last turn states another value for it ("I work as a nurse." …
"I work as a teacher."), which a pair classifier reads as consistent: the frames match and one word differs.
So does a turn whose age the last turn's past or future age rules out ("I'm 29." … "When I was 35, …") or whose
count of brothers, children, pets … it rules out ("I have two dogs." … "My three dogs …";
:mod:`dialcheck.detectors.counts`), or that says the speaker works where the last turn says they do not ("I'm
retired." … "I work at a law firm."). A last turn that contradicts itself ("I don't really have a favorite food. My
favorite food is mexican food."; "I don't have any pets. My dog is sweet."; ``slots.self_conflict``) is then a
contradiction too: score at least ``SLOT_SCORE``, no evidence turn, category ``SELF`` ("intra_sentence").
English phrasings only, listed in :mod:`dialcheck.detectors.slots`.
``slots="settle"`` does that and also caps at ``SETTLED_SCORE`` (0.01) the pair of an earlier turn that says
nothing but such slots when the last turn agrees with them: states them again with a shared value ("As I said,
my name is Ava"), adds one ("I also work as a tutor"), states them only about someone else ("She is 31 years
old.") or gives an age before or after theirs ("When I was 22, …" after "I'm 29."), with no negation. Pair
classifiers trained on DECODE flag those (0.7-0.97) because the frame matches and the value differs
(``slot_settled``). It caps too a pair whose claims about work fit when one of the two turns says nothing but work
("I work as an electrician." … "When I'm not at work, I fish.", 0.94 before; ``work_settled``).

These rule readings (``questions``' ``asks_only``, the slots, ``subjects``, ``introductions``, ``times``) read a turn
as :func:`plain_text` gives it: without the markdown and emoji a chat assistant decorates its replies with ("- My
brother lives in Texas.", "**My husband** eats meat.", "😊 I used to live in Chicago."), which hid the words they
look for at a sentence's start; the pair classifier reads the turn as written.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..errors import InputError, ModelError
from ..io import as_dialogues
from ..schema import Dialogue, Turn, Verdict
from .base import Detector, register_detector
from .modeling import CONFIG_NAME
from .slots import ages_cut, self_conflict, slot_conflicts, slot_settled, work_settled
from .subjects import apart, introduces
from .times import asked_before, former_and_present

__all__ = [
    "ANSWER",
    "ELLIPSIS",
    "LONG_TURNS",
    "PAIR_ORDERS",
    "PIECE_PAIRS",
    "SELF",
    "SETTLED_SCORE",
    "SLOT_SCORE",
    "UtteranceDetector",
    "asks_only",
    "implied_statement",
    "overlap_ranks",
    "plain_text",
    "without_answer",
    "without_echoes",
    "without_questions",
]

PAIR_ORDERS = ("forward", "both")
LONG_TURNS = ("chunk", "truncate", "pieces")
ELLIPSIS_READINGS = ("off", "resolve")
QUESTION_READINGS = ("read", "skip", "echoes", "strip")
SLOT_READINGS = ("off", "persona", "settle")
SUBJECT_READINGS = ("off", "apart")
INTRODUCTION_READINGS = ("off", "settle")
TIME_READINGS = ("off", "settle", "changes")
ANSWER_READINGS = ("read", "strip")
#: The pair score of an earlier turn whose persona slot the last turn fills with another value (``slots``).
SLOT_SCORE = 0.99
#: The category of a last turn that contradicts itself (CDConv's name): no earlier turn is its evidence
SELF = "intra_sentence"
#: The most an earlier turn of nothing but slots the last turn agrees with scores (``slots="settle"``).
SETTLED_SCORE = 0.01
CHUNK_TOKENS = 32
#: Of an earlier turn read in more than this many pairs of pieces (a pair far too long for the window: two long
#: code replies), only this many are scored, those whose two pieces share the rarest words (``piece_pairs``; 0:
#: every one, as before 2026-12-03). DECODE's long pairs and the hand-written long-reply sets make at most 21.
PIECE_PAIRS = 64
#: Han, kana, Hangul and Thai: the prefilter of ``piece_pairs`` reads a run of them as its character bigrams, not as
#: one word. That matters for Chinese and Japanese (and Korean written without spaces), whose unspaced runs no two
#: pieces shared; spaced Korean shared its words before, though a particle glued on ("서버는", "서버가") split them.
#: Thai was already cut at its vowel and tone marks (not letters to ``\w``), into fragments pieces do share, but
#: into long ones ("ระยะหมดเวลาค" against "ระยะหมดเวลาจร"): its bigrams may still help.
_UNSPACED = (
    "\u0e00-\u0e7f\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\U00020000-\U0002fa1f"
)
#: A word of a piece as the prefilter of ``piece_pairs`` reads it: a number ("3.11"), a run of letters, so code
#: punctuation and identifiers' underscores ("load_config") split words, or a run of :data:`_UNSPACED` characters
#: (cut into bigrams by :func:`_words`).
_WORD = re.compile(rf"\d+(?:\.\d+)*|[{_UNSPACED}]+|[^\W\d_{_UNSPACED}]+")
_UNSPACED_RUN = re.compile(rf"[{_UNSPACED}]+")

#: Turn openings that assert the other speaker's last statement for oneself ("me too", "neither have I").
ELLIPSIS = re.compile(
    r"^\W*(?:(?:yes|yeah|yep|yup|no|nope|oh|wow|ha|haha|lol|omg|well|nice|cool|great|awesome|ah|aw|aww|hey|hmm"
    r"|ok|okay|really|totally|true|that's (?:great|cool|nice|awesome|funny))\W+)*"
    r"(?:me too|me neither|me either|me as well|same here|same|ditto|likewise"
    r"|(?:neither|nor|so) (?:do|did|am|was|have|can|would|will|could) i"
    r"|i (?:do|did|am|was|have|can|would|will|could) too"
    r"|i (?:do|did|am|was|have|can|would|will|could) as well"
    r"|i (?:don't|didn't|do not|am not|wasn't|haven't|have not|can't|cannot|won't|wouldn't) either"
    r"|i'm (?:not )?(?:too|either|as well))"
    # the phrase must end there: "Me too!", "Same here and ...", not "Same thing" or "I'm too tired"
    r"(?=\s*(?:$|[.!,;:?)~]|(?:and|but|though|lol|haha|i|i'm|it|it's|its|they|that|what|how)\b))",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
#: A yes/no answer opening a turn, with its punctuation ("No,", "Not quite.", "Yes -", "Unfortunately not,").
ANSWER = re.compile(
    r"^\W*(?:no|nope|nah|not quite|not really|not necessarily|not exactly|not yet|unfortunately not|sadly not"
    r"|yes|yeah|yep|yup|sure|of course|absolutely|definitely|correct|exactly|indeed|right)"
    r"\s*[,.!;:\-\u2013\u2014]+\s*",
    re.IGNORECASE,
)
#: The fewest words a turn must say after its yes/no answer to be read without it (``answers="strip"``).
ANSWER_MIN_WORDS = 4


def sentences(text: str) -> list[str]:
    """The sentences of ``text``, split after ".", "!" or "?" followed by white space; empty ones dropped.

    >>> sentences("Nice! Do you have kids?  I have two.")
    ['Nice!', 'Do you have kids?', 'I have two.']
    """
    return [s.strip() for s in _SENTENCE_END.split(text.strip()) if s.strip()]


#: Markdown that opens a line: a heading, a quote, a bulleted list item ("- ", "* ").
_LINE_MARK = re.compile(r"^[ \t]*(?:#{1,6}[ \t]+|>[ \t]?|[-*+\u2022][ \t]+)", re.M)
#: A numbered list item ("1. ", "2) "): one only in a list of two or more, since "25. You?" answers an age.
_NUMBERED = re.compile(r"^[ \t]*\d{1,3}[.)][ \t]+", re.M)
#: A line set in asterisks with spaces inside ("* not really *"): emphasis or an action, not a list item.
_STARRED_LINE = re.compile(r"^([ \t]*)\*[ \t]+([^\s*](?:[^\n*]*[^\s*])?)[ \t]+\*[ \t]*$", re.M)
#: Emphasis around words, not inside one: "**bold**", "__bold__", "*italic*", "_italic_" ("2*3*4", "__unk__" in
#: "dr__unk__" and "snake_case" stay).
_EMPHASIS = re.compile(
    r"(?<![\w*])(\*\*|__)(?=\S)(.+?)(?<=\S)\1(?![\w*])|(?<![\w*])([*_])(?=[^\s*_])(.+?)(?<=[^\s*_])\3(?![\w*])", re.S
)
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_SHORTCODE = re.compile(r"(?<!\S):[a-z0-9_+-]*[a-z][a-z0-9_+-]*:(?!\S)")  # Slack's ":rocket:"


def _pictograph(c: str) -> bool:
    """An emoji or another pictograph (a symbol above U+2000, a skin tone), or the joiners between them; "°" stays,
    as do the letterlike symbols and units ("℃", "™", "№": U+2100-214F) and the CJK squared units ("㎏")."""
    o = ord(c)
    if 0x2100 <= o <= 0x214F or 0x3300 <= o <= 0x33FF:
        return False
    return (o >= 0x2000 and unicodedata.category(c) in ("So", "Sk")) or c in "\ufe0f\u200d"


_SPACES = re.compile(r"[ \t]{2,}")  # the room a removed mark leaves


def plain_text(text: str) -> str:
    """``text`` without the markdown and emoji a chat assistant decorates it with: list markers, headings and quotes
    that open a line, emphasis around words, code spans' backticks, emoji and Slack shortcodes. ``text`` itself when
    it has none (so a DECODE turn reads as before). The rule readings read turns so; the pair classifier does not.

    >>> plain_text("- **My brother** lives in Texas 😊")
    'My brother lives in Texas'
    >>> plain_text("1. *I used to* live in `Chicago`.\\n2. Now in Ohio.")
    'I used to live in Chicago.\\nNow in Ohio.'
    >>> plain_text("2*3*4 is 24, snake_case and dr__unk__ stay, as does 25°C.")
    '2*3*4 is 24, snake_case and dr__unk__ stay, as does 25°C.'
    >>> plain_text("25. You?"), plain_text("It's 25℃ 🌞"), plain_text("* not really *")
    ('25. You?', "It's 25℃", 'not really')
    """
    t = _STARRED_LINE.sub(r"\1\2", text)
    t = _LINE_MARK.sub("", t)
    if len(_NUMBERED.findall(t)) > 1:
        t = _NUMBERED.sub("", t)
    t = _EMPHASIS.sub(lambda m: m.group(2) if m.group(1) else m.group(4), t)
    t = _CODE_SPAN.sub(r"\1", t)
    t = _SHORTCODE.sub(" ", t)
    if not t.isascii():
        t = "".join(" " if _pictograph(c) else c for c in t)
    if t == text:
        return text
    return _SPACES.sub(" ", t).strip()


def plain_dialogue(d: Dialogue) -> Dialogue:
    """``d`` with every turn read by :func:`plain_text` (``d`` itself when no turn changes): the rule readings' view."""
    plain = [plain_text(t.text) for t in d.turns]
    if all(p == t.text for p, t in zip(plain, d.turns, strict=True)):
        return d
    return Dialogue(tuple(Turn(t.speaker, p) for t, p in zip(d.turns, plain, strict=True)), d.knowledge, d.meta)


_FIRST_PERSON = re.compile(r"\b(?:i|i'm|im|i've|ive|i'd|i'll|my|me|mine|myself|we|we're|we've|our|ours|us)\b", re.I)


def asks_only(text: str) -> bool:
    """Does ``text`` only ask (every sentence ends with "?") without saying anything about its speaker?

    >>> asks_only("How many children do you have?"), asks_only("Nice! Do you have kids?")
    (True, False)
    >>> asks_only("Haha, sounds like my pupper, is she still young?")  # "my pupper" says the speaker has a dog
    False
    """
    text = text.replace("\u2019", "'").strip()
    said = sentences(text)
    return bool(said) and all(s.endswith("?") for s in said) and not _FIRST_PERSON.search(text)


def without_questions(text: str) -> str:
    """``text`` without its questions (sentences ending with "?") that say nothing about the speaker, or ``text``
    itself when nothing else is left. A question to the other speaker asserts nothing the speaker could
    contradict, and in a pair it hides what the turn does say ("I live on the west coast. Do you have any
    hobbies?").

    >>> without_questions("I live on the west coast. Do you have any hobbies?")
    'I live on the west coast.'
    >>> without_questions("Nice! Is my dog too old, do you think? What about you?")
    'Nice! Is my dog too old, do you think?'
    >>> without_questions("What do you do for a living?")
    'What do you do for a living?'
    """
    said = sentences(text)
    kept = [s for s in said if not s.endswith("?") or _FIRST_PERSON.search(s.replace("\u2019", "'"))]
    return " ".join(kept) if kept and len(kept) < len(said) else text


_ECHO = (
    r"(?:(?:and|so|but|well)\W+)?(?:(?:what|how) about (?:you|yourself|yours|you guys)|and you|and yourself"
    r"|you|yours|yourself|you too|same for you|(?:what|which)(?:'s| is) yours"
    r"|(?:do|did|are|were|have|had|can|could|would|will|does) you(?: too)?)"
)
#: A question that only hands the turn back ("Do you?", "What about you?"), alone or after a comma.
ECHO_QUESTION = re.compile(rf"^\W*{_ECHO}\W*\?$", re.IGNORECASE)
_ECHO_TAIL = re.compile(rf",\s*{_ECHO}\s*\?$", re.IGNORECASE)


def without_echoes(text: str) -> str:
    """``text`` without the questions that only hand the turn back ("Do you?", "And you?", ", how about you?"),
    or ``text`` itself when nothing else is left. They assert and ask nothing new, and a pair classifier
    trained on DECODE reads any question in a turn as a sign of consistency.

    >>> without_echoes("I have never had a pet. What about you?")
    'I have never had a pet.'
    >>> without_echoes("I love hiking, how about you?")
    'I love hiking.'
    >>> without_echoes("I love hiking. What about your weekend?")  # asks something new: kept
    'I love hiking. What about your weekend?'
    >>> without_echoes("And you?")
    'And you?'
    """
    kept, cut = [], False
    for sentence in sentences(text):
        plain = sentence.replace("\u2019", "'")
        if ECHO_QUESTION.match(plain):
            cut = True
            continue
        tail = _ECHO_TAIL.search(plain)
        cut = cut or tail is not None
        kept.append(sentence[: tail.start()] + "." if tail else sentence)
    return " ".join(kept) if cut and kept else text


def implied_statement(dialogue: Dialogue, i: int) -> str | None:
    """What turn ``i`` states by only agreeing ("Me too!") with the other speaker: the statements (sentences
    that are not questions) of the other speaker's latest turn before it; ``None`` when turn ``i`` is not such
    an agreement or there is nothing to agree with.

    >>> d = Dialogue.from_texts(["I have never seen Star Wars. Have you?", "Neither have I. I like coffee."])
    >>> implied_statement(d, 1)
    'I have never seen Star Wars.'
    >>> implied_statement(d, 0) is None
    True
    """
    turns = dialogue.turns
    if not ELLIPSIS.match(turns[i].text.replace("\u2019", "'")):
        return None
    for j in range(i - 1, -1, -1):
        if turns[j].speaker != turns[i].speaker:
            said = [s for s in sentences(turns[j].text) if not s.endswith("?")]
            return " ".join(said) or None
    return None


def without_answer(dialogue: Dialogue, i: int) -> str:
    """Turn ``i``'s text without the yes/no answer it opens with ("No -", "Not quite.", "Yes,"), when the other
    speaker's turn just before it asks something and at least ``ANSWER_MIN_WORDS`` words follow; else its text.
    The answer is to that question, which a pair of turn ``i`` with an earlier turn leaves out, and there a
    "No" reads as denying the earlier turn.

    >>> d = Dialogue.from_texts(["Saturdays we close at 1 pm.", "Can I come at 2 on Saturday?",
    ...                          "Unfortunately not - on Saturdays we close at 1 pm."])
    >>> without_answer(d, 2)
    'On Saturdays we close at 1 pm.'
    >>> without_answer(Dialogue.from_texts(["I have a dog.", "Do you have pets?", "No, I don't."]), 2)
    "No, I don't."
    """
    turns = dialogue.turns
    text = turns[i].text
    if i < 1 or turns[i - 1].speaker == turns[i].speaker or "?" not in turns[i - 1].text:
        return text
    m = ANSWER.match(text.replace("\u2019", "'"))
    rest = text[m.end() :] if m else ""
    if len(rest.split()) < ANSWER_MIN_WORDS:
        return text
    return rest[0].upper() + rest[1:]


class ReadingOption:
    """A detector attribute kept in ``config.options`` only while it differs from its default, so a saved
    config names just what was changed. ``check`` validates and normalizes a new value."""

    def __init__(self, default: Any, check: Callable[[Any], Any], doc: str) -> None:
        self.default, self.check, self.__doc__ = default, check, doc

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Detector | None, objtype: type | None = None) -> Any:
        return self if obj is None else obj.config.options.get(self.name, self.default)

    def __set__(self, obj: Detector, value: Any) -> None:
        value = self.check(value)
        if value == self.default:
            obj.config.options.pop(self.name, None)
        else:
            obj.config.options[self.name] = value


def _one_of(value: str, name: str, choices: Sequence[str]) -> str:
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    return value


def _piece_size(value: int) -> int:
    if int(value) < 4:
        raise ValueError(f"chunk_tokens must be at least 4, got {value}")
    return int(value)


def _piece_bound(value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"piece_pairs must be a whole number >= 0 (0: every pair of pieces), got {value!r}")
    return value


@register_detector("decode.utterance.v1")
class UtteranceDetector(Detector):
    """Structured detector: score = max over (earlier turn, last turn) pairs; evidence = pairs >= eta_e."""

    truncation_side = "right"

    pair_order = ReadingOption(
        "forward",
        lambda v: _one_of(v, "pair_order", PAIR_ORDERS),
        '``"forward"`` (earlier turn first, as trained) or ``"both"`` (mean of the two readings).',
    )
    long_turns = ReadingOption(
        "chunk",
        lambda v: _one_of(v, "long_turns", LONG_TURNS),
        '``"chunk"`` (pairs too long for the window scored piece by piece), ``"pieces"`` (every pair with a turn '
        'longer than ``chunk_tokens`` scored piece by piece) or ``"truncate"``.',
    )
    chunk_tokens = ReadingOption(
        CHUNK_TOKENS,
        _piece_size,
        'Most tokens in one piece of a long turn (``long_turns="chunk"``); capped at half the window.',
    )
    piece_pairs = ReadingOption(
        PIECE_PAIRS,
        _piece_bound,
        "Of an earlier turn read in more than this many pairs of pieces (two long replies, code blocks), only this "
        "many are scored: those whose pieces share the rarest words (:func:`overlap_ranks`); the turn's score is "
        "their maximum. 0: every pair of pieces.",
    )

    ellipsis = ReadingOption(
        "off",
        lambda v: _one_of(v, "ellipsis", ELLIPSIS_READINGS),
        '``"resolve"``: a "Me too!" turn is also read as the statement it agrees with (see the module text).',
    )

    questions = ReadingOption(
        "read",
        lambda v: _one_of(v, "questions", QUESTION_READINGS),
        '``"skip"``: earlier turns that only ask, about nothing of their speaker, are not paired (``asks_only``); '
        '``"echoes"``: that, and the pair classifier reads each turn without the questions that only hand the turn '
        'back ("What about you?", ``without_echoes``); ``"strip"``: that, and without every question that says '
        "nothing about its speaker, when the turn says something else (``without_questions``).",
    )

    slots = ReadingOption(
        "off",
        lambda v: _one_of(v, "slots", SLOT_READINGS),
        '``"persona"``: a name, age, job or count the last turn states unlike an earlier turn scores ``SLOT_SCORE``; '
        '``"settle"``: that, and an earlier turn of nothing but slots the last turn agrees with scores at most '
        "``SETTLED_SCORE``, as does a pair whose claims about work fit when one turn says nothing but work "
        "(``work_settled``); a pair whose ages agree scores at most its score with the ages cut out (``ages_cut``).",
    )

    subjects = ReadingOption(
        "off",
        lambda v: _one_of(v, "subjects", SUBJECT_READINGS),
        '``"apart"``: a pair of turns of which one is only about the speaker and the other only about someone '
        'else ("I live in Ohio." … "My brother lives in Texas."), neither denying anyone, scores at most '
        "``SETTLED_SCORE`` (:func:`~dialcheck.detectors.subjects.apart`), unless the slot reading flags it.",
    )

    introductions = ReadingOption(
        "off",
        lambda v: _one_of(v, "introductions", INTRODUCTION_READINGS),
        '``"settle"``: a pair of turns of which one only says the speaker has someone ("I have a sister.", "Yes, '
        'two daughters.") and the other only says something about that someone ("My sister lives abroad."), '
        "neither denying, losing or counting them otherwise, scores at most ``SETTLED_SCORE`` "
        "(:func:`~dialcheck.detectors.subjects.introduces`), unless the slot reading flags it.",
    )

    times = ReadingOption(
        "off",
        lambda v: _one_of(v, "times", TIME_READINGS),
        '``"settle"``: a pair of turns of which one only tells a former state of the speaker ("I used to live in '
        'Chicago.", "I grew up in Chicago.") and the other a present one it does not restate ("I live in '
        'Seattle."), neither saying "never", "always" or "still", scores at most ``SETTLED_SCORE`` '
        "(:func:`~dialcheck.detectors.times.former_and_present`), unless the slot reading flags it; "
        '``"changes"``: that, only when both speak of one kind of fact that changes over a life (where one lives, '
        "work, getting around, food and drink, school, sleep and exercise).",
    )

    answers = ReadingOption(
        "read",
        lambda v: _one_of(v, "answers", ANSWER_READINGS),
        '``"strip"``: the last turn is read without the yes/no answer it opens with ("No -", "Not quite.") when the '
        "other speaker's turn before it asks (``without_answer``).",
    )

    @classmethod
    def reading_options(cls) -> tuple[str, ...]:
        """The names of the options that change how dialogues are read (the ``ReadingOption`` attributes).

        >>> UtteranceDetector.reading_options()[-4:]
        ('subjects', 'introductions', 'times', 'answers')
        """
        return tuple(n for n, v in vars(cls).items() if isinstance(v, ReadingOption))

    def load_weights(self, folder: Path) -> None:
        """The weights, after a check of ``options.piece_pairs`` (a hand-edited config), named by file and field."""
        try:
            _piece_bound(self.piece_pairs)
        except ValueError as e:
            raise ModelError(f"{folder / CONFIG_NAME}: options.{e}") from None
        super().load_weights(folder)

    def _pairs(
        self, d: Dialogue, only: Collection[int] | None = None, plain: Dialogue | None = None
    ) -> tuple[list[int], list[tuple[str, str]], dict[int, str], list[bool]]:
        """The (earlier turn, last turn) pairs of ``d`` (of the earlier turns ``only``, if given), the turn index
        each belongs to, the agreements ("Me too!") read as the statement they agree with, and whether each pair
        is a pair of pieces of a long pair. ``plain``: :func:`plain_dialogue` of ``d`` when the caller has it."""
        clf = self.classifier
        owners: list[int] = []
        pairs: list[tuple[str, str]] = []
        pieced: list[bool] = []
        pieces: dict[str, list[str]] = {}  # each reading of the last turn cut once for all its long pairs
        piece = 0
        indices, n = self._indices(d, only), len(d.turns)
        if self.questions != "read":
            plain = plain if plain is not None else plain_dialogue(d)
            indices = [i for i in indices if not asks_only(plain.turns[i].text)]
        implied: dict[int, str | None] = {}
        if self.ellipsis == "resolve":
            implied = {i: implied_statement(d, i) for i in [*indices, n - 1]}
        said = {"strip": without_questions, "echoes": without_echoes}.get(self.questions, str)
        checked = without_answer(d, n - 1) if self.answers == "strip" else d.turns[-1].text
        lasts = [said(checked), *filter(None, [implied.get(n - 1)])]
        for i in indices:
            for first in [said(d.turns[i].text), *filter(None, [implied.get(i)])]:
                for last in lasts:
                    if self.long_turns == "pieces":  # whole only when both turns are one piece (the pair then fits)
                        piece = piece or self._piece_tokens(clf)
                        whole = max(clf._token_len(first), clf._token_len(last)) <= piece
                    else:
                        whole = self.long_turns == "truncate" or clf.pair_fits(first, last)
                    if whole:
                        owners.append(i)
                        pairs.append((first, last))
                        pieced.append(False)
                        continue
                    if not piece:  # the first long pair
                        piece = self._piece_tokens(clf)
                    if last not in pieces:
                        pieces[last] = clf.chunks(last, piece)
                    for a in clf.chunks(first, piece):
                        for b in pieces[last]:
                            owners.append(i)
                            pairs.append((a, b))
                            pieced.append(True)
        paired = set(owners)
        read_as = {i: t for i, t in implied.items() if t is not None and paired and (i == n - 1 or i in paired)}
        return owners, pairs, read_as, pieced

    def _piece_tokens(self, clf: Any) -> int:
        """Most tokens in one piece of a long turn: ``chunk_tokens``, at most half the window."""
        half = (clf.max_length - clf.tokenizer.num_special_tokens_to_add(pair=True)) // 2
        return min(half, self.chunk_tokens)

    def _indices(self, d: Dialogue, only: Collection[int] | None = None) -> list[int]:
        """The earlier turns the last turn of ``d`` is paired with (of ``only``, if given). A turn with no text (a
        chat log's tool call, an empty message) says nothing to contradict: it is never paired, so never evidence."""
        if self.config.options.get("speakers", "same") == "all":
            indices = list(range(len(d.turns) - 1))
        else:
            indices = d.same_speaker_indices()
        return [i for i in indices if d.turns[i].text.strip() and (only is None or i in only)]

    def predict(
        self, dialogues: Sequence[Dialogue], batch_size: int = 64, show_progress_bar: bool = False
    ) -> list[Verdict]:
        return self._verdicts(as_dialogues(dialogues), None, batch_size, show_progress_bar)

    def predict_pieces(
        self, dialogues: Sequence[Dialogue], batch_size: int = 64, show_progress_bar: bool = False
    ) -> tuple[list[Verdict], dict[tuple[str, str], float]]:
        """:meth:`predict`, and the score of every pair of pieces it read of a pair too long for the window (keyed by
        the two pieces' text): a cascade's first stage so ranks the pieces its second stage re-reads (``top_pieces``
        of :meth:`predict_turns`). Short pairs, read whole, are not in it."""
        pieces: dict[tuple[str, str], float] = {}
        verdicts = self._verdicts(as_dialogues(dialogues), None, batch_size, show_progress_bar, pieces_out=pieces)
        return verdicts, pieces

    def predict_turns(
        self,
        dialogues: Sequence[Dialogue],
        turns: Sequence[Collection[int]] | None,
        batch_size: int = 64,
        *,
        top_pieces: int = 0,
        rank: Callable[[Sequence[tuple[str, str]]], Sequence[float]] | None = None,
    ) -> list[Verdict]:
        """:meth:`predict` with dialogue ``k``'s last turn paired only with its earlier turns ``turns[k]`` (every one
        when ``turns`` is ``None``; the same readings and thresholds); a cascade's second stage reads so the turns its
        first did not rule out. With ``top_pieces`` K > 0 and ``rank`` (pairs -> scores, higher first), an earlier
        turn read in more than K pairs of pieces (a pair too long for the window) is scored on only the K distinct
        ones ``rank`` scores highest, its score their maximum: a cascade's second stage so reads a long reply in
        the time of K pairs, not of every piece of one against every piece of the other. Short pairs are read as
        before.

        >>> det = dialcheck.load("decode-utterance-minilm-v10")  # doctest: +SKIP
        >>> d = ["I have a cat.", "Nice.", "I like dogs.", "Cool.", "I have no pets."]
        >>> list(det.predict_turns([d], [[2]])[0].pair_scores)  # turn 0 is not read  # doctest: +SKIP
        [2]
        """
        dialogues = as_dialogues(dialogues)
        if turns is not None and len(turns) != len(dialogues):
            raise InputError(f"{len(dialogues)} dialogues but {len(turns)} sets of turns")
        return self._verdicts(dialogues, turns, batch_size, False, top_pieces=top_pieces, rank=rank)

    def _verdicts(
        self,
        dialogues: Sequence[Dialogue],
        only: Sequence[Collection[int]] | None,
        batch_size: int,
        show_progress_bar: bool,
        **pieces: Any,
    ) -> list[Verdict]:
        verdicts = []
        plains = [plain_dialogue(d) for d in dialogues]  # the rules read the words, not markdown and emoji
        scored = self._turn_scores(dialogues, plains, only, batch_size, show_progress_bar, **pieces)
        for d, p, (turn_scores, read_as) in zip(dialogues, plains, scored, strict=True):
            verdict = decide(turn_scores, self.tau, self.eta_e)
            # a last turn that contradicts itself: "I don't have a favorite food. My favorite food is …"
            reads_self = self.slots != "off" and len(d.turns) > 1
            if reads_self and not verdict.contradiction and self_conflict(p.turns[-1].text):
                verdict = replace(verdict, contradiction=True, score=max(verdict.score, SLOT_SCORE), category=SELF)
            verdicts.append(replace(verdict, read_as=read_as) if read_as else verdict)
        return verdicts

    def score_turns(
        self,
        dialogues: Sequence[Dialogue],
        turns: Sequence[Collection[int]],
        batch_size: int = 64,
        *,
        top_pieces: int = 0,
        rank: Callable[[Sequence[tuple[str, str]]], Sequence[float]] | None = None,
    ) -> list[dict[int, float]]:
        """The pair scores of only the earlier turns ``turns[k]`` of dialogue ``k``, each what :meth:`predict`
        gives that turn (the same readings); a turn :meth:`predict` would not pair is left out. ``top_pieces``,
        ``rank``: as for :meth:`predict_turns`.

        >>> det = dialcheck.load("decode-utterance-minilm-v10")  # doctest: +SKIP
        >>> d = ["I have a cat.", "Nice.", "I like dogs.", "Cool.", "I have no pets."]
        >>> [list(s) for s in det.score_turns([d], [[0]])]  # turn 2 is not scored  # doctest: +SKIP
        [[0]]
        """
        verdicts = self.predict_turns(dialogues, turns, batch_size, top_pieces=top_pieces, rank=rank)
        return [v.pair_scores for v in verdicts]

    def score_pairs(
        self, pairs: Sequence[tuple[str, str]], batch_size: int = 64, show_progress_bar: bool = False
    ) -> list[float]:
        """P(contradiction) of each (earlier turn, last turn) pair as this detector reads a pair: as trained, or with
        ``pair_order="both"`` the mean of the two orders (one call, so a pair and its reverse share batches)."""
        pairs = list(pairs)
        if self.pair_order == "both":
            both = self.classifier.score(
                pairs + [(b, a) for a, b in pairs], batch_size=batch_size, show_progress_bar=show_progress_bar
            )
            n = len(pairs)
            return [(float(f) + float(b)) / 2 for f, b in zip(both[:n], both[n:], strict=True)]
        scores = self.classifier.score(pairs, batch_size=batch_size, show_progress_bar=show_progress_bar)
        return [float(v) for v in scores]

    def _turn_scores(
        self,
        dialogues: Sequence[Dialogue],
        plains: Sequence[Dialogue],
        only: Sequence[Collection[int]] | None,
        batch_size: int,
        show_progress_bar: bool,
        top_pieces: int = 0,
        rank: Callable[[Sequence[tuple[str, str]]], Sequence[float]] | None = None,
        pieces_out: dict[tuple[str, str], float] | None = None,
    ) -> list[tuple[dict[int, float], dict[int, str]]]:
        """Each dialogue's pair scores by earlier turn (of ``only[k]``, if given) and its "Me too!" readings;
        ``plains``: the dialogues as the rules read them (:func:`plain_dialogue`), made once a call. ``top_pieces``,
        ``rank``: see :meth:`predict_turns`; ``pieces_out``, when given, gets the score of each pair of pieces read."""
        read = [self._pairs(d, None if only is None else only[k], plains[k]) for k, d in enumerate(dialogues)]
        if self.piece_pairs > 0:  # a very long pair: only the pairs of pieces sharing the rarest words
            read = _top_pieces(read, self.piece_pairs, overlap_ranks, per_turn=True)
        if top_pieces > 0 and rank is not None:
            read = _top_pieces(read, top_pieces, rank)
        pairs: list[tuple[str, str]] = []
        pieced: list[bool] = []
        spans: list[tuple[list[int], int, dict[int, str]]] = []
        for owners, own_pairs, read_as, own_pieced in read:
            spans.append((owners, len(pairs), read_as))
            pairs.extend(own_pairs)
            pieced.extend(own_pieced)
        cut_at: list[dict[int, int]] = [{} for _ in dialogues]  # turn -> its pair read with the ages cut out
        if self.slots == "settle":
            for k, (p, (owners, _, _)) in enumerate(zip(plains, spans, strict=True)):
                for i in sorted(set(owners)):
                    cut = ages_cut(p.turns[i].text, p.turns[-1].text)
                    if cut and self.classifier.pair_fits(*cut):  # a long turn's pieces keep their own scores
                        cut_at[k][i] = len(pairs)
                        pairs.append(cut)
        # with pair_order "both" each pair is read in both orders and the two scores averaged (order-sensitive)
        scores = self.score_pairs(pairs, batch_size=batch_size, show_progress_bar=show_progress_bar)
        if pieces_out is not None:
            # `pieced` covers the pairs of _pairs, before the ages-cut readings appended above
            pieces_out.update((p, v) for p, v, is_piece in zip(pairs, scores, pieced, strict=False) if is_piece)
        out = []
        for k, (d, p, (owners, start, read_as), cuts) in enumerate(zip(dialogues, plains, spans, cut_at, strict=True)):
            turn_scores: dict[int, float] = {}
            for i, v in zip(owners, scores[start : start + len(owners)], strict=True):
                turn_scores[i] = max(turn_scores.get(i, 0.0), float(v))  # a long turn: its best piece
            conflicts: dict[int, str] = {}
            if self.slots != "off":
                conflicts = slot_conflicts(p, self._indices(d, None if only is None else only[k]))
                for i in conflicts:
                    turn_scores[i] = max(turn_scores.get(i, 0.0), SLOT_SCORE)
                if self.slots == "settle":
                    for i, at in cuts.items():
                        if i not in conflicts:
                            turn_scores[i] = min(turn_scores[i], float(scores[at]))
                    for i in slot_settled(p, [j for j in turn_scores if j not in conflicts]):
                        turn_scores[i] = min(turn_scores[i], SETTLED_SCORE)
                    for i in turn_scores:
                        if i not in conflicts and work_settled(p.turns[i].text, p.turns[-1].text):
                            turn_scores[i] = min(turn_scores[i], SETTLED_SCORE)
            if self.subjects == "apart" or self.introductions == "settle" or self.times != "off":
                last, changes = p.turns[-1].text, self.times == "changes"
                asked_last = asked_before(p, len(p.turns) - 1) if changes else None
                for i in turn_scores:  # a pair the slot reading flags is its to judge (a relative's age)
                    if i in conflicts:
                        continue
                    if (
                        (self.subjects == "apart" and i not in read_as and apart(p.turns[i].text, last))
                        or (self.introductions == "settle" and introduces(p.turns[i].text, last))
                        or (
                            self.times != "off"
                            and former_and_present(
                                p.turns[i].text,
                                last,
                                changes=changes,
                                asked=(asked_before(p, i) if changes else None, asked_last),
                            )
                        )
                    ):
                        turn_scores[i] = min(turn_scores[i], SETTLED_SCORE)
            out.append((turn_scores, read_as))
        return out


def _top_pieces(
    read: Sequence[tuple[list[int], list[tuple[str, str]], dict[int, str], list[bool]]],
    top: int,
    rank: Callable[[Sequence[tuple[str, str]]], Sequence[float]],
    per_turn: bool = False,
) -> list[tuple[list[int], list[tuple[str, str]], dict[int, str], list[bool]]]:
    """``read`` (each dialogue's :meth:`UtteranceDetector._pairs`) with each earlier turn read in more than ``top``
    pairs of pieces left with the ``top`` distinct ones ``rank`` scores highest (ties: the first made). One call
    to ``rank`` for all dialogues, or with ``per_turn`` one for each such turn (a ranking whose scores depend on the
    pairs it is given: :func:`overlap_ranks`); the pairs read whole are kept.

    >>> read = [([0, 0, 0, 2], [("a", "x"), ("b", "x"), ("c", "x"), ("d", "x")], {}, [True, True, True, False])]
    >>> _top_pieces(read, 2, lambda ps: [{"a": 0.1, "b": 0.9, "c": 0.5}[p[0]] for p in ps])[0][:2]
    ([0, 0, 2], [('b', 'x'), ('c', 'x'), ('d', 'x')])
    """
    todo: list[tuple[int, int]] = []  # (dialogue, pair) of the pieces of the turns read in more than `top`
    for k, (owners, pairs, _, pieced) in enumerate(read):
        many: dict[int, set[tuple[str, str]]] = {}
        for o, p, is_piece in zip(owners, pairs, pieced, strict=True):
            if is_piece:
                many.setdefault(o, set()).add(p)
        todo += [(k, j) for j, o in enumerate(owners) if pieced[j] and len(many[o]) > top]
    if not todo:
        return list(read)
    if per_turn:
        groups: dict[tuple[int, int], list[int]] = {}
        for n, (k, j) in enumerate(todo):
            groups.setdefault((k, read[k][0][j]), []).append(n)
        scores: list[float] = [0.0] * len(todo)
        for members in groups.values():
            ranked = rank([read[todo[n][0]][1][todo[n][1]] for n in members])
            for n, v in zip(members, ranked, strict=True):
                scores[n] = float(v)
    else:
        scores = [float(v) for v in rank([read[k][1][j] for k, j in todo])]
    by_turn: dict[tuple[int, int], list[tuple[float, int]]] = {}
    for (k, j), v in zip(todo, scores, strict=True):
        by_turn.setdefault((k, read[k][0][j]), []).append((-float(v), j))
    dropped: set[tuple[int, int]] = set()
    for (k, _), ranked in by_turn.items():
        kept: set[tuple[str, str]] = set()
        for _, j in sorted(ranked):
            pair = read[k][1][j]
            if pair not in kept and len(kept) < top:
                kept.add(pair)
            else:  # below the top, or a copy of a kept pair (the same text scores the same)
                dropped.add((k, j))
    out = []
    for k, (owners, pairs, read_as, pieced) in enumerate(read):
        keep = [j for j in range(len(owners)) if (k, j) not in dropped]
        out.append(([owners[j] for j in keep], [pairs[j] for j in keep], read_as, [pieced[j] for j in keep]))
    return out


def overlap_ranks(pairs: Sequence[tuple[str, str]]) -> list[float]:
    """A cheap ranking of pairs of pieces for the ones worth scoring (``piece_pairs``): the words the two pieces of
    a pair share, each weighted by how rare it is among all the pieces of ``pairs`` (log of pieces / pieces with
    the word). Two pieces can only contradict each other about something both mention; a word in every piece (a
    code keyword, "the", a variable used throughout) tells nothing and weighs 0. Words are numbers and runs of
    letters (:data:`_WORD`), lower-cased: code punctuation is ignored; Han, kana, Hangul and Thai are read in
    character bigrams (:func:`_words`). Pairs sharing the same words rank the same in every process (summed with
    :func:`math.fsum`, not in set order), so ties go to the first made. The pairs that share no word that tells
    anything (rank 0) rank instead 0, -1, -2, ..., below every pair that shares one: round-robin over the first
    pieces of ``pairs`` (the earlier turn's), so what they fill of the bound covers the whole earlier turn, not
    only its head.

    >>> a, b = ["It is Python 3.11.", "it is x = 1"], ["It is Python 3.6.", "it is y = 2"]  # two pieces each
    >>> [round(v, 2) for v in overlap_ranks([(x, y) for x in a for y in b])]  # "it", "is": in every piece
    [0.69, -1.0, -1.0, 0.0]
    """
    pieces = list(dict.fromkeys(p for pair in pairs for p in pair))
    words = {p: _words(p) for p in pieces}
    df: dict[str, int] = {}
    for ws in words.values():
        for w in ws:
            df[w] = df.get(w, 0) + 1
    n = len(pieces)
    idf = {w: math.log(n / c) for w, c in df.items()}
    # fsum: exactly rounded whatever the order, so pairs sharing the same words tie whatever PYTHONHASHSEED is (a
    # plain sum in set order differed by 1 ulp from one process to the next, and so did the pairs kept)
    ranks = [math.fsum(idf[w] for w in words[a] & words[b]) for a, b in pairs]
    if all(ranks):
        return ranks
    # pairs sharing nothing (or only words in every piece): in the order made they would fill what is left of the
    # bound from the head of the earlier turn, its first pieces against every piece of the last one, whether or
    # not a few other pairs share a word; spread them instead, below every pair that shares one, round-robin over
    # the earlier turn's pieces, the i-th one's pairs from its i-th on (so its pieces meet different pieces of the
    # last turn)
    firsts = {a: i for i, a in enumerate(dict.fromkeys(a for a, _ in pairs))}
    count = Counter(a for a, _ in pairs)
    seen: dict[str, int] = {}
    out = []
    for (a, _), r in zip(pairs, ranks, strict=True):
        t = seen[a] = seen.get(a, -1) + 1
        out.append(r if r > 0 else float(-((t - firsts[a]) % count[a])))
    return out


def _words(piece: str) -> set[str]:
    """The words of ``piece`` for :func:`overlap_ranks`: :data:`_WORD`'s, lower-cased, a run of characters of a
    script written without spaces read as its bigrams (a run of Han characters is a phrase, not a word).

    >>> sorted(_words("Python 3.11 需要三十秒"))
    ['3.11', 'python', '三十', '十秒', '要三', '需要']
    """
    out: set[str] = set()
    for w in _WORD.findall(piece.lower()):
        if len(w) > 1 and _UNSPACED_RUN.fullmatch(w):
            out.update(w[i : i + 2] for i in range(len(w) - 1))
        else:
            out.add(w)
    return out


def decide(pair_scores: dict[int, float], tau: float, eta_e: float) -> Verdict:
    """The utterance-based verdict from pair scores: max >= ``tau`` flags; evidence = pairs >= ``eta_e``.

    A flagged dialogue always names at least its strongest pair.

    >>> decide({0: 0.2, 2: 0.9}, tau=0.5, eta_e=0.95).evidence
    (2,)
    """
    score = max(pair_scores.values(), default=0.0)
    contradiction = bool(pair_scores) and score >= tau
    evidence: tuple[int, ...] = ()
    if contradiction:
        evidence = tuple(i for i in pair_scores if pair_scores[i] >= eta_e) or (
            max(pair_scores, key=pair_scores.__getitem__),
        )
    return Verdict(contradiction, score, evidence, None, pair_scores)
