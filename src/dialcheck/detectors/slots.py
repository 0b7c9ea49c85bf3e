"""Persona slots a speaker fills in the first person: a name, an age, a job (English).

A pair classifier trained on DECODE reads "I work as a nurse." … "I work as a teacher." (0.01) or "I'm Ava,
your virtual assistant." … "My name is Max, how can I help?" (0.08) as consistent: the frames are the same and
only one word differs. :func:`slot_conflicts` names the earlier turns whose slot value the last turn replaces,
for :class:`~dialcheck.detectors.utterance.UtteranceDetector`'s reading ``slots="persona"``. Only explicit
first-person statements count, each slot read from a fixed set of phrasings:

- **name**: "my name is X", "call me X", "X is my name", "I'm called X", "Hi, I'm X", "this is X from …",
  "I'm X, your … assistant";
- **age**: "I'm N years old", "I'm N." (a number alone), "I just turned N", "my age is N";
- **job**: "I work as (a) X", "my job is (a) X", "I'm employed as X".

Two values conflict when they share no word ("nurse" and "nurse practitioner" do not). Someone else's slots
("my son is 5", "my sister's name is Mia") and questions do not count. On DECODE the phrasings are rare (they
fire on 2 of rebuilt dev's 2,013 contradictions and 1 of human-bot's 382, on no consistent dialogue: see
docs/benchmarks.md); they are meant for assistants and persona bots that introduce themselves.

>>> sorted(persona_slots("Hi, I'm Ava, your virtual assistant. I'm 25 years old."))
[('age', frozenset({'25'})), ('name', frozenset({'ava'}))]
>>> from dialcheck.schema import Dialogue
>>> slot_conflicts(Dialogue.from_texts(["I work as a nurse.", "Cool.", "I work as a teacher."]), [0])
{0: 'job'}
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from ..schema import Dialogue

__all__ = ["SLOTS", "persona_slots", "slot_conflicts"]

SLOTS = ("name", "age", "job")
Slot = tuple[str, frozenset[str]]

_NAME = r"([A-Za-z][\w'-]*)"
_CAP_NAME = r"([A-Z][a-z][\w'-]*)"
_NAME_PATTERNS = (  # keywords in any case; a name after "call me", "Hi, I'm", ... must be capitalized
    re.compile(rf"\bmy name(?:'s| is) {_NAME}", re.I),
    re.compile(rf"\b{_NAME} is my name\b", re.I),
    re.compile(rf"\b(?i:call me|i'm called|i am called|i go by) {_CAP_NAME}"),
    re.compile(
        rf"(?:^|[.!?]\s+)(?i:(?:hi|hello|hey|hiya|greetings)(?: there)?[,!.]?\s+(?:i'm|i am|this is)) {_CAP_NAME}"
    ),
    re.compile(
        rf"\b(?i:i'm|i am|this is) {_CAP_NAME},? (?i:(?:your|the|an?) (?:[\w-]+ ){{0,2}}(?:assistant|agent|bot"
        r"|chatbot|helper|guide|representative|rep|concierge|advisor|adviser|companion))\b"
    ),
    re.compile(rf"\b(?i:this is) {_CAP_NAME} (?i:from|speaking|here)\b"),
)
_AGE_PATTERNS = (
    re.compile(r"\bi(?:'m| am) (\d{1,3}) ?(?:years?|yrs?) old\b", re.I),
    re.compile(r"\bi(?:'m| am) (\d{1,3}) ?(?:y/o|yo)\b", re.I),
    re.compile(r"\bi(?:'m| am) (\d{1,3})(?=\s*(?:[.!;]|$))", re.I),
    re.compile(r"\bi (?:just )?turned (\d{1,3})\b", re.I),
    re.compile(r"\bmy age is (\d{1,3})\b", re.I),
)
_JOB_PATTERNS = (
    re.compile(r"\bi (?:currently |now |still )?work as (?:an? )?([a-z]+(?: [a-z]+){0,2})", re.I),
    re.compile(r"\bmy (?:job|profession|occupation) is (?:an? )?([a-z]+(?: [a-z]+){0,2})", re.I),
    re.compile(r"\bi(?:'m| am) employed as (?:an? )?([a-z]+(?: [a-z]+){0,2})", re.I),
)
# words that end a job phrase ("a nurse at the clinic") or are no value ("my name is not important")
_PHRASE_END = re.compile(r"\b(?:and|but|or|so|because|which|who|that|since|while|when|at|in|for|with|on|to)\b")
_ASKS = re.compile(
    r"\W*(?:is|are|am|do|does|did|was|were|can|could|would|should|will|what|why|how|who|where|when)\b", re.I
)
_NO_VALUE = {
    "a", "an", "the", "not", "no", "just", "also", "really", "actually", "currently", "still", "now", "here",
    "there", "too", "so", "very", "from", "your", "my", "called", "named", "what", "secret", "unknown",
    "good", "fine", "great", "ok", "okay", "sorry", "back", "glad", "happy", "doing", "well", "always",
}  # fmt: skip


@functools.lru_cache(maxsize=8192)  # a turn is read once per dialogue it is the last or an earlier turn of
def persona_slots(text: str) -> frozenset[Slot]:
    """The (slot, value words) the speaker of ``text`` states about themself; a question ("Did I say I'm 25?")
    states nothing.

    >>> persona_slots("My name is Ava, what is yours?")
    frozenset({('name', frozenset({'ava'}))})
    >>> persona_slots("My daughter is 5 years old and my sister's name is Mia.")
    frozenset()
    """
    out: set[Slot] = set()
    for sentence in re.split(r"(?<=[.!?])\s+", text.replace("\u2019", "'").strip()):
        if sentence.endswith("?") and _ASKS.match(sentence):  # "Did I say I'm 25?"; not "I'm Ava, and you?"
            continue
        for pattern in _NAME_PATTERNS:
            for m in pattern.finditer(sentence):
                if (name := m.group(1).lower()) not in _NO_VALUE:
                    out.add(("name", frozenset([name])))
        for pattern in _AGE_PATTERNS:
            for m in pattern.finditer(sentence):
                if 0 < (age := int(m.group(1))) < 130:
                    out.add(("age", frozenset([str(age)])))
        for pattern in _JOB_PATTERNS:
            for m in pattern.finditer(sentence):
                words = [w for w in _PHRASE_END.split(m.group(1).lower())[0].split() if w not in _NO_VALUE]
                if words:
                    out.add(("job", frozenset(words)))
    return frozenset(out)


def slot_conflicts(dialogue: Dialogue, indices: Iterable[int]) -> dict[int, str]:
    """The earlier turns (of ``indices``) that fill a slot with a value the last turn replaces, and the slot:
    the last turn states that slot, and none of its values shares a word with the earlier turn's."""
    now = persona_slots(dialogue.turns[-1].text)
    if not now:
        return {}
    out: dict[int, str] = {}
    for i in indices:
        for kind, words in sorted(persona_slots(dialogue.turns[i].text)):
            values = [w for k, w in now if k == kind]
            if values and all(not (words & w) for w in values):
                out[i] = kind
                break
    return out
