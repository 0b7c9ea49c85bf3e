"""Persona slots a speaker fills in the first person: a name, an age, a job (English).

A pair classifier trained on DECODE reads "I work as a nurse." … "I work as a teacher." (0.01) or "I'm Ava,
your virtual assistant." … "My name is Max, how can I help?" (0.08) as consistent: the frames are the same and
only one word differs. :func:`slot_conflicts` names the earlier turns whose slot value the last turn replaces,
for :class:`~dialcheck.detectors.utterance.UtteranceDetector`'s reading ``slots="persona"``. Only explicit
first-person statements count, each slot read from a fixed set of phrasings:

- **name**: "my name is X", "call me X", "X is my name", "I'm called X", "Hi, I'm X" (also "Hey! I'm X."), "I'm X,
  nice to meet you" (also "Nice to meet you, I'm X."; after a greeting or with a pleasantry, not a nationality, a
  creed or a few adjectives: "Hey! I'm Canadian."),
  "this is X from …", "I'm X, your … assistant";
- **age**: "I'm N years old", "I'm a N-year-old …", "I'm N." (a number alone), "I'm N, …", "I'm N and …" and
  "I'm N now" (13 and up), "I just turned N", "my age is N", "I'm in my fifties"; and, read by
  :func:`age_timeline`, an age the speaker was ("when I was 22", "I was 30 when …", "at the age of 25", "At 45
  I …", "when I turned 40", "I retired at 60", "I finished my master's at 22") or will be ("I'll be 36 next
  month", "I'll turn 40", "I'm turning 50", "by the time I'm 35"). N in digits or words ("sixty-two",
  "eighteen");
- **job**: "I work as (a) X", "my job is (a) X", "I'm employed as X".

Two values conflict when they share no word ("nurse" and "nurse practitioner" do not); a past age above the
present one, or a future age below it, conflicts with it ("When I was 35, …" after "I'm 29."). Someone else's slots
("my son is 5", "my sister's name is Mia"), questions, a second name or job ("I also work as a tutor") and
descriptions ("my job is cooking") do not count. :func:`slot_settled` names the other side, for the reading
``slots="settle"``: earlier turns that say nothing but slots (:func:`slots_only`) which the last turn agrees with
(the same value again, one more, only someone else's (:func:`other_slots`), or for an age, a past age no
higher or a future age no lower), and :func:`ages_cut` gives two turns whose ages agree with the ages cut out,
for the classifier to read again. A relative's age ("my mom is 62") is set against the speaker's present age
(:func:`kin_conflicts`: a mother three years older conflicts; ages that fit well are cut out too), and the
speaker's spouse in one turn against the other (:func:`spouse_conflicts`: "my wife" … "my husband"; an ex, a late
spouse, a divorce or a death told do not count), and whether the speaker works now (:func:`work_conflicts`: "I'm
retired." … "I work at a law firm."; a day off, part-time work, the past or a wish do not count). For ``settle``,
:func:`work_settled` names a pair whose claims about work fit when one turn says nothing but work ("I work as an
electrician." … "When I'm not at work, I fish."; :func:`work_claims`).
:func:`slot_conflicts` also takes in counts (:func:`~dialcheck.detectors.counts.count_conflicts`). On DECODE
the phrasings are rare: with counts they fire on 10 of rebuilt dev's 2,013 contradictions and 5 of human-bot's
382, and on 2 RCT dialogues labelled consistent that do contradict (``benchmarks/slot_fires.py``;
docs/benchmarks.md). They are meant for assistants and persona bots that introduce themselves.

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
from .counts import AT_HOME_PARENT, count_conflicts, counts_at_odds

__all__ = [
    "SLOTS",
    "age_timeline",
    "other_slots",
    "persona_slots",
    "self_conflict",
    "slot_conflicts",
    "slot_settled",
    "slots_only",
    "spouse_conflicts",
    "work_claims",
    "work_conflicts",
    "work_settled",
    "work_status",
]

SLOTS = ("name", "age", "job")
Slot = tuple[str, frozenset[str]]

_NAME = r"([A-Za-z][\w'-]*)"
_CAP_NAME = r"([A-Z][a-z][\w'-]*)"
_NAME_PATTERNS = (  # keywords in any case; a name after "call me", "Hi, I'm", ... must be capitalized
    re.compile(rf"\bmy name(?:'s| is) {_NAME}", re.I),
    re.compile(rf"\b{_NAME} is my name\b", re.I),
    re.compile(rf"\b(?i:call me|i'm called|i am called|i go by) {_CAP_NAME}"),
    _GREETING_NAME := re.compile(
        rf"(?:^|[.!?]\s+)(?i:(?:hi|hello|hey|hiya|greetings)(?: there)?[,!.]?\s+(?:i'm|i am|this is)) {_CAP_NAME}"
    ),
    re.compile(
        rf"\b(?i:i'm|i am|this is) {_CAP_NAME},? (?i:(?:your|the|an?) (?:[\w-]+ ){{0,2}}(?:assistant|agent|bot"
        r"|chatbot|helper|guide|representative|rep|concierge|advisor|adviser|companion))\b"
    ),
    re.compile(rf"\b(?i:this is) {_CAP_NAME} (?i:from|speaking|here)\b"),
    # "I'm Chloe, nice to meet you.", "I'm Chloe. Pleased to meet you!", "Nice to meet you too! I'm Chloe."
    _MEET_NAME := re.compile(
        rf"\b(?i:i'm|i am) {_CAP_NAME}[,.!]?\s+(?i:(?:it's |it is )?(?:(?:so |very |really )?(?:nice|pleased|good"
        r"|great|glad) (?:to meet you|meeting you)|a pleasure to meet you))"
    ),
    _MEET_FIRST := re.compile(
        rf"(?i:\b(?:nice|pleased|glad|good|great) to meet you(?:,? too)?)[,!.]*\s+(?i:i'm|i am) {_CAP_NAME}"
    ),
)
# the phrasings a greeting or a pleasantry makes a name of, read across a sentence break ("Hey! I'm Sam."), where a
# nationality, a creed or a capitalized adjective is no name ("Hey! I'm Canadian.")
_PLEASANTRY_NAMES = (_GREETING_NAME, _MEET_NAME, _MEET_FIRST)
_SENTENCE_NAMES = tuple(p for p in _NAME_PATTERNS if p not in _PLEASANTRY_NAMES)  # read sentence by sentence
# an age in digits or words: "25", "twenty-five", "twenty five", "eighteen" (read by :func:`_age_number`)
_UNITS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
_TEENS = ("ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen")
_TENS = ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
_WORD_AGES = {w: n for n, w in enumerate(_UNITS, 1)} | {w: n for n, w in enumerate(_TEENS, 10)}
_WORD_AGES |= {w: 10 * n for n, w in enumerate(_TENS, 2)}
_WORD_AGES |= {
    f"{t}{sep}{u}": 10 * a + b for a, t in enumerate(_TENS, 2) for b, u in enumerate(_UNITS, 1) for sep in "- "
}
_TENS_UNITS = r"(?:" + "|".join(_TENS) + r")(?:[- ](?:" + "|".join(_UNITS) + r"))?"
_N = rf"(\d{{1,3}}|{_TENS_UNITS}|" + "|".join(_TEENS) + ")"
_WORDS_13_UP = _TENS_UNITS + "|" + "|".join(_TEENS[3:])  # "I'm ten." may be a count: words from 13 up
_N_BARE = rf"(\d{{1,3}}|{_WORDS_13_UP})"
_DIGITS_13_UP = r"1[3-9]|[2-9]\d|1[01]\d"  # 13 to 119: a number read as an age only in loose phrasings
_ADULT = rf"({_DIGITS_13_UP})"
_ADULT_N = rf"({_DIGITS_13_UP}|{_WORDS_13_UP})"  # the same, or in words
# "I'm" in a clause of another time is no present age: "by the time I'm 35", "when I'm 40", "if I'm 30"
_NOW = r"(?<!time )(?<!when )(?<!until )(?<!once )(?<!\bif )(?<!before )"
_AGE_PATTERNS = (
    re.compile(rf"{_NOW}\bi(?:'m| am) {_N} ?(?:years?|yrs?) old\b", re.I),
    re.compile(rf"{_NOW}\bi(?:'m| am) an? {_N}[- ]?(?:years?|yrs?)[- ]old\b", re.I),  # "I'm a 19-year-old student"
    re.compile(rf"{_NOW}\bi(?:'m| am) (\d{{1,3}}) ?(?:y/o|yo)\b", re.I),
    re.compile(rf"{_NOW}\bi(?:'m| am) {_N_BARE}(?=\s*(?:[.!;]|$))", re.I),
    # "I'm 18, just graduated", "I'm 28 and I work in ...": 13 and up, not "I'm 5, 6 minutes away"
    re.compile(rf"{_NOW}\bi(?:'m| am) {_ADULT_N}(?:,(?!\s*[\d-])|\s+and\s+(?!a half\b|\d))", re.I),
    re.compile(rf"{_NOW}\bi(?:'m| am) {_N_BARE} (?:now|to be exact|exactly|as of (?:today|now)|this year)\b", re.I),
    re.compile(rf"(?<!when )(?<!since )(?<!after )(?<!before )\bi (?:just )?turned {_N}\b(?! (?:last|a) year\b)", re.I),
    re.compile(rf"\bmy age is {_N}\b", re.I),
)
_DECADES = {"teens": 13, "twenties": 20, "thirties": 30, "forties": 40, "fifties": 50, "sixties": 60}
_DECADES |= {"seventies": 70, "eighties": 80, "nineties": 90} | {f"{d}0s": d * 10 for d in range(2, 10)}
_DECADE = r"in my (?:(?:early|mid|late)[- ])?(" + "|".join(_DECADES) + r")\b"
# "I'm in my fifties (now)": any age of the decade
_DECADE_NOW = re.compile(rf"\bi(?:'m| am) (?:now |still )?{_DECADE}", re.I)
_JOB_PATTERNS = (
    re.compile(r"\bi (?:currently |now |still )?work as (?:an? )?([a-z]+(?: [a-z]+){0,2})", re.I),
    # "my job is a pilot", not "my job is fun" or "my job is designing bridges" (no article: a description)
    re.compile(r"\bmy job is an? ([a-z]+(?: [a-z]+){0,2})", re.I),
    re.compile(r"\bmy (?:profession|occupation) is (?:an? )?(?![a-z]+ing\b)([a-z]+(?: [a-z]+){0,2})", re.I),
    re.compile(r"\bi(?:'m| am) employed as (?:an? )?([a-z]+(?: [a-z]+){0,2})", re.I),
)
# a number that is no age: "your total is 40 dollars", "she is 5 minutes away", "I was 2nd", "at 60 mph"
_NOT_AN_AGE = r"(?!\s*(?:%|percent|dollars?|euros?|pounds?|bucks|minutes?|mins?|hours?|days?|weeks?|miles?|km"
_NOT_AN_AGE += r"|kg|lbs?|feet|foot|inches|cm|am|pm|o'clock|mph|degrees|[.,:]\d|(?:st|nd|rd|th)\b))"
_NOT_AN_AGE += r"(?!\s+(?:times|people|of|in a row|out of))"
# a past or a future age of the speaker: "when I was 22", "I was 30 when ...", "at the age of 25", "At 45 I ...",
# "when I was in my thirties"; "I'll be 36 next month", "I'm turning 30"
_WAS_AGE_PATTERNS = (
    re.compile(
        rf"\b(?:when|since|until|till|before|after|once|while) i was (?:only |just |about |around )?{_N}\b"
        + _NOT_AN_AGE,
        re.I,
    ),
    re.compile(rf"\bi was (?:only |just |about |around )?{_N}(?: ?(?:years?|yrs?) old)?,? when\b", re.I),
    re.compile(rf"\bi was (?:only |just |about |around )?{_N} ?(?:years?|yrs?) old\b", re.I),
    re.compile(rf"\bat (?:the )?age (?:of )?{_N}\b", re.I),
    re.compile(rf"\b(?:when|since|after) i turned {_N}\b{_NOT_AN_AGE}", re.I),
    # "At 45 I learned to drive", not "at 5 I leave" (a time): 13 and up, at the start of a clause
    re.compile(rf"(?:^|[,;]\s*|\b(?:and|but|so|then)\s+)at {_ADULT}\b{_NOT_AN_AGE},? i\b", re.I),
    # "I retired at 60", "I got married at 25", "I finished my master's at 22": a life event and the age it came at
    re.compile(
        rf"\bi (?:retired|graduated|got married|married|moved out|left home"
        rf"|had my (?:first )?(?:kid|child|son|daughter)|started (?:working|college|university)"
        rf"|finished (?:school|college|university"
        rf"|my (?:degree|master'?s|bachelor'?s|phd|doctorate|studies|apprenticeship)))"
        rf"(?: [\w']+){{0,3}}? at (?:the age of |age )?{_ADULT}\b{_NOT_AN_AGE}(?! ?(?:a\.?m|p\.?m)\b)",
        re.I,
    ),
)
_WAS_DECADE = re.compile(rf"\b(?:when|since|while) i was {_DECADE}", re.I)
_WILL_AGE_PATTERNS = (
    re.compile(rf"\bi(?:'ll| will| am going to|'m going to) (?:be|turn) {_N}\b{_NOT_AN_AGE}", re.I),
    re.compile(rf"\b(?:by the time|when|once|until) i(?:'m| am) {_N}\b{_NOT_AN_AGE}", re.I),
    re.compile(rf"\bi(?:'m| am) turning {_N}\b{_NOT_AN_AGE}", re.I),
)
# "I turned 40 last year": 40 or 41 now
_TURNED_LAST_YEAR = re.compile(rf"\bi turned {_N} (?:last|a) year\b", re.I)
# "I also work as a tutor", "... as well", "my second job": one more value, not a replacement (names and jobs)
_ADDS = re.compile(r"\b(?:also|too|as well|besides|another|second|side|other)\b", re.I)
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


# after a greeting, a capitalized word that is no name: "Hey! I'm Canadian.", "Hi, I'm Jewish." ("Christian" is a
# common first name and stays one; "My name is ..." is read as given)
_NOT_GREETING_NAMES = frozenset(
    re.findall(
        r"[a-z]+",
        """
    american canadian mexican british english scottish irish welsh french german italian spanish portuguese dutch
    belgian swiss austrian swedish norwegian danish finnish icelandic polish czech slovak hungarian romanian
    bulgarian greek turkish russian ukrainian serbian croatian bosnian slovenian albanian lithuanian latvian
    estonian chinese japanese korean vietnamese thai filipino filipina indonesian malaysian singaporean indian
    pakistani bangladeshi nepali nepalese afghan iranian persian iraqi syrian lebanese israeli palestinian
    jordanian saudi emirati egyptian moroccan algerian tunisian nigerian ghanaian kenyan ethiopian somali
    zimbabwean ugandan tanzanian cameroonian senegalese brazilian argentinian argentine chilean peruvian colombian
    venezuelan ecuadorian bolivian uruguayan paraguayan cuban dominican jamaican haitian guatemalan honduran
    salvadoran nicaraguan panamanian australian kiwi hawaiian texan californian european asian african latino
    latina hispanic canuck yankee south north puerto costa sri
    catholic protestant baptist methodist lutheran mormon jewish muslim hindu buddhist sikh atheist agnostic
    orthodox pagan
    new tired bored hungry excited ready married single retired vegan vegetarian
    """,
    )
)
_NO_PLEASANTRY_NAME = _NO_VALUE | _NOT_GREETING_NAMES
_OTHERS = r"(?:he|she|they)"
_OWNER = r"(?:my|his|her|their|our|your)(?: [\w-]+){1,2}?"  # "my sister", "his little brother", "my dog"
_OTHER_PATTERNS = {  # a slot stated about someone else: "my dog's name is Max", "she is 31", "he works as a chef"
    "name": re.compile(
        rf"\b(?:{_OWNER}'s name|(?:his|her|their) names?)(?:'s| is| are)\b|\b{_OTHERS}(?:'s| is) called\b", re.I
    ),
    "age": re.compile(
        rf"\b(?:{_OTHERS}(?:'s| is| are|'re)|{_OWNER} (?:is|are)) \d{{1,3}}\b{_NOT_AN_AGE}"
        rf"|\b{_OTHERS} (?:just )?turned \d",
        re.I,
    ),
    "job": re.compile(rf"\b(?:{_OTHERS}|{_OWNER}) works? as\b|\b(?:his|her|their) job is\b", re.I),
}
# what a turn that states only slots may say besides them ("Yes, I'm 27.", "Hi! I'm Ava, your booking assistant.")
_FILLER = {
    "hi", "hello", "hey", "hiya", "there", "yes", "yeah", "yep", "no", "nope", "well", "sure", "oh", "so", "ok",
    "okay", "actually", "right", "and", "i", "i'm", "am", "thanks", "thank", "you", "nice", "to", "meet", "again",
    "currently", "now", "still", "old", "years", "year", "last", "a", "an", "the",
}  # fmt: skip
_NEGATION = re.compile(r"\b(?:not|no|never|nor|none|nobody|neither)\b|n't\b", re.I)
# the speaker speaking of themself ("and I'm a doctor", "younger than me", "mine is Jack"): their own slot may be
# restated in words the patterns do not read, so someone else's slot beside it settles nothing
_SELF = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|mine|myself)\b", re.I)


def _sentences(text: str) -> list[str]:
    """The sentences of ``text``, with typographic apostrophes made plain."""
    return re.split(r"(?<=[.!?])\s+", text.replace("\u2019", "'").strip())


def _statements(text: str) -> list[str]:
    """The sentences of ``text`` that are not questions ("Did I say I'm 25?"; not "I'm Ava, and you?")."""
    sentences = _sentences(text)
    return [s for s in sentences if not (s.endswith("?") and _ASKS.match(s))]


@functools.lru_cache(maxsize=8192)  # a turn is read once per dialogue it is the last or an earlier turn of
def persona_slots(text: str) -> frozenset[Slot]:
    """The (slot, value words) the speaker of ``text`` states about themself; a question ("Did I say I'm 25?")
    states nothing.

    >>> persona_slots("My name is Ava, what is yours?")
    frozenset({('name', frozenset({'ava'}))})
    >>> persona_slots("Hey! I'm Sam. What's your name?")
    frozenset({('name', frozenset({'sam'}))})
    >>> persona_slots("My daughter is 5 years old and my sister's name is Mia.")
    frozenset()
    """
    out: set[Slot] = set()
    statements = _statements(text)
    # a greeting or a pleasantry said as a sentence of its own ("Hey! I'm Sam.", "I'm Sam. Nice to meet you.") is
    # read across the sentence break
    joined = " ".join(statements)
    for pattern in _PLEASANTRY_NAMES:
        for m in pattern.finditer(joined):
            # the sentence that names
            own = re.split(r"[.!?]", joined[: m.start(1)])[-1] + re.split(r"[.!?]", joined[m.start(1) :], maxsplit=1)[0]
            if (name := m.group(1).lower()) not in _NO_PLEASANTRY_NAME and not _ADDS.search(own):
                out.add(("name", frozenset([name])))
    for sentence in statements:
        adds = bool(_ADDS.search(sentence))
        for pattern in _SENTENCE_NAMES if not adds else ():
            for m in pattern.finditer(sentence):
                if (name := m.group(1).lower()) not in _NO_VALUE:
                    out.add(("name", frozenset([name])))
        for pattern in _AGE_PATTERNS:
            for m in pattern.finditer(sentence):
                if 0 < (age := _age_number(m.group(1))) < 130:
                    out.add(("age", frozenset([str(age)])))
        for m in _TURNED_LAST_YEAR.finditer(sentence):
            if 0 < (age := _age_number(m.group(1))) < 129:
                out.add(("age", frozenset([str(age), str(age + 1)])))
        for m in _DECADE_NOW.finditer(sentence):
            out.add(("age", frozenset(str(a) for a in _decade_ages(m.group(1)))))
        for pattern in _JOB_PATTERNS if not adds else ():
            for m in pattern.finditer(sentence):
                words = [w for w in _PHRASE_END.split(m.group(1).lower())[0].split() if w not in _NO_VALUE]
                if words:
                    out.add(("job", frozenset(words)))
    return frozenset(out)


def _age_number(word: str) -> int:
    """A number in digits or words ("25", "twenty-five", "Twenty five", "eighteen") as an int."""
    return int(word) if word.isdigit() else _WORD_AGES[word.lower()]


def _decade_ages(word: str) -> range:
    start = _DECADES[word.lower()]
    return range(start, (start // 10 + 1) * 10)


@functools.lru_cache(maxsize=8192)
def age_timeline(text: str) -> tuple[frozenset[int], frozenset[int]]:
    """The ages the speaker of ``text`` says they were and will be (for a decade, its first age).

    >>> age_timeline("When I was 22, I moved to Paris. I'll be 30 next month.")
    (frozenset({22}), frozenset({30}))
    >>> age_timeline("I was 5 minutes late when my son was 12.")
    (frozenset(), frozenset())
    """
    was: set[int] = set()
    will: set[int] = set()
    for sentence in _statements(text):
        for pattern in _WAS_AGE_PATTERNS:
            was.update(_age_number(m.group(1)) for m in pattern.finditer(sentence))
        was.update(_decade_ages(m.group(1))[0] for m in _WAS_DECADE.finditer(sentence))
        for pattern in _WILL_AGE_PATTERNS:
            will.update(_age_number(m.group(1)) for m in pattern.finditer(sentence))
    return frozenset(a for a in was if 0 < a < 130), frozenset(a for a in will if 0 < a < 130)


def _ages(text: str) -> frozenset[int]:
    """The speaker's present age as the ages it allows."""
    return frozenset(int(a) for kind, words in persona_slots(text) if kind == "age" for a in words)


def _timeline_agrees(now: frozenset[int], was: frozenset[int], will: frozenset[int]) -> bool | None:
    """Whether past and future ages fit a present age (None: nothing to compare)."""
    if not now or not (was or will):
        return None
    return all(a <= max(now) for a in was) and all(a >= min(now) for a in will)


@functools.lru_cache(maxsize=8192)
def other_slots(text: str) -> frozenset[str]:
    """The slots ``text`` fills for someone other than its speaker.

    >>> sorted(other_slots("My dog's name is Max, he is 3 years old."))
    ['age', 'name']
    >>> other_slots("I work as a nurse.")
    frozenset()
    """
    text = text.replace("\u2019", "'")
    return frozenset(kind for kind, pattern in _OTHER_PATTERNS.items() if pattern.search(text))


@functools.lru_cache(maxsize=8192)
def slots_only(text: str) -> bool:
    """Whether ``text`` says nothing but its speaker's name, age or job (and greetings, "yes", "no").

    >>> slots_only("Yes, I work as an accountant."), slots_only("I'm 27 and I love dogs.")
    (True, False)
    """
    text = text.replace("\u2019", "'").strip()
    if not persona_slots(text):
        return False
    said = [False] * len(text)  # characters inside some slot phrasing (they overlap: "Hi! I'm Ava, your assistant")
    for pattern in (*_NAME_PATTERNS, *_AGE_PATTERNS, *_JOB_PATTERNS, _TURNED_LAST_YEAR, _DECADE_NOW):
        for m in pattern.finditer(text):
            said[m.start() : m.end()] = [True] * (m.end() - m.start())
    rest = "".join(" " if s else c for c, s in zip(text, said, strict=True))
    words = re.findall(r"[a-z]+(?:'[a-z]+)?", rest.lower())
    return all(w in _FILLER for w in words)


def slot_settled(dialogue: Dialogue, indices: Iterable[int]) -> set[int]:
    """The earlier turns (of ``indices``) that say nothing but slots (:func:`slots_only`) which the last turn
    agrees with: the last turn, with no negation, states each such slot again with a shared value, adds to it
    ("I also work as a tutor") or states it only about someone else ("She is 31."). Turns the last turn does
    not speak to are left out: it may deny them in words the slot patterns do not read ("I'm retired").

    >>> d = Dialogue.from_texts(["How old are you?", "I'm 27.", "And your sister?", "She is 31 years old."])
    >>> slot_settled(d, [1])
    {1}
    >>> slot_settled(Dialogue.from_texts(["I'm 27.", "Cool.", "I'm not 27, I'm 72 years old."]), [0])
    set()
    """
    last = dialogue.turns[-1].text.replace("\u2019", "'")
    if _NEGATION.search(last):
        return set()
    now = persona_slots(last)
    others = other_slots(last) if not _SELF.search(last) else frozenset()
    adds = _added_slots(last)
    was, will = age_timeline(last)
    out: set[int] = set()
    for i in indices:
        text = dialogue.turns[i].text
        if not slots_only(text):
            continue
        kinds = persona_slots(text)
        if all(
            any(k == kind and words & w for k, w in now)
            or kind in adds
            or (kind in others and not any(k == kind for k, _ in now))
            or (  # "When I was 22, ..." after "I'm 29."
                kind == "age"
                and not any(k == kind for k, _ in now)
                and _timeline_agrees(frozenset(int(a) for a in words), was, will)
            )
            for kind, words in kinds
        ):
            out.add(i)
    return out


@functools.lru_cache(maxsize=8192)
def _added_slots(text: str) -> frozenset[str]:
    """The slots (name, job) a sentence of ``text`` with an additive word ("also", "too") adds a value to."""
    out = set()
    for sentence in _sentences(text):
        if _ADDS.search(sentence):
            plain = re.sub(r"\s+", " ", _ADDS.sub(" ", sentence))  # read as if it replaced the value
            out |= {kind for kind, _ in persona_slots(plain) if kind in ("name", "job")}
    return frozenset(out)


# a relative's age: "my mom is 62", "my older sister just turned 40", "my son, who is 8"
_KIN = {
    **dict.fromkeys(("mom", "mum", "mother", "dad", "father"), "parent"),
    **dict.fromkeys(("grandma", "grandmother", "grandpa", "grandfather", "granny"), "grandparent"),
    **dict.fromkeys(("son", "daughter", "kid", "child"), "child"),
    **dict.fromkeys(("grandson", "granddaughter", "grandkid", "grandchild"), "grandchild"),
    **dict.fromkeys(("sister", "brother"), "sibling"),
}
_OLDER = {"older", "elder", "big", "eldest", "oldest"}
_YOUNGER = {"younger", "little", "baby", "youngest"}
_KIN_AGE = re.compile(
    rf"\bmy (?:({'|'.join(_OLDER | _YOUNGER)}) )?({'|'.join(_KIN)})(?:,? who(?:'s| is)|'s| is| just turned| turned)"
    rf" (?:just |only |about )?{_N}\b{_NOT_AN_AGE}",
    re.I,
)
# the gap (their age minus the speaker's) that rules a relative out, and the gap that fits them well
_KIN_GAPS = {  # kin: (conflict below, fits from, fits up to, conflict above)
    "parent": (12, 15, 70, 999),
    "grandparent": (26, 32, 90, 999),
    "child": (-999, -70, -15, -12),
    "grandchild": (-999, -90, -32, -26),
    "older sibling": (0, 1, 25, 999),
    "younger sibling": (-999, -25, -1, 0),
    "sibling": (-999, -20, 20, 999),
}


@functools.lru_cache(maxsize=8192)
def _kin_ages(text: str) -> tuple[tuple[str, int], ...]:
    """The relatives whose ages ``text`` states, and the ages: (("parent", 62), ("older sibling", 40))."""
    out = []
    for sentence in _statements(text):
        for m in _KIN_AGE.finditer(sentence):
            kin = _KIN[m.group(2).lower()]
            if kin == "sibling" and m.group(1):
                kin = ("older " if m.group(1).lower() in _OLDER else "younger ") + kin
            out.append((kin, _age_number(m.group(3))))
    return tuple(out)


def _kin_fit(own: frozenset[int], kin: tuple[tuple[str, int], ...]) -> bool | None:
    """Whether relatives' ages fit the speaker's present ages: False when one rules them out (a mother 3 years
    older, an older sister younger), True when every one fits well, None otherwise or with nothing to compare."""
    if not own or not kin:
        return None
    fits = True
    for who, age in kin:
        below, lo, hi, above = _KIN_GAPS[who]
        gaps = [age - a for a in own]
        if all(g < below or g > above for g in gaps):
            return False
        fits = fits and all(lo <= g <= hi for g in gaps)
    return True if fits else None


def kin_conflicts(earlier: str, last: str) -> bool:
    """Whether a relative's age in one turn rules out the speaker's present age in the other: "I'm 28." … "My
    mom is 31 and loves concerts." (a mother three years older).

    >>> kin_conflicts("I'm 28.", "My mom is 31 and loves concerts."), kin_conflicts("I'm 28.", "My mom is 58.")
    (True, False)
    """
    return _kin_fit(_ages(earlier), _kin_ages(last)) is False or _kin_fit(_ages(last), _kin_ages(earlier)) is False


# the speaker's own spouse, named bare: "my wife", "my lovely husband", "my hubby's"; not "my ex-wife", "my late
# husband", "my second wife" or "my husband-to-be", and not in a turn that tells of a divorce or a death
_SPOUSES = {"wife": "wife", "wifey": "wife", "husband": "husband", "hubby": "husband"}
_SPOUSE_PAST = {"late", "former", "first", "second", "third", "previous", "old", "new", "future", "dead"}
_SPOUSE_PAST |= {"deceased", "next", "then", "current", "would-be", "soon-to-be", "departed"}
_SPOUSE = re.compile(rf"\bmy (?:([\w-]+)[- ])?({'|'.join(_SPOUSES)})\b(-to-be| to be)?", re.I)
_SPOUSE_ENDED = re.compile(  # "ex" too: "my ex-wife", "my ex"
    r"\b(?:ex|divorc\w*|separat\w*|widow\w*|passed|died|death|lost|remarried|married again|funeral)\b", re.I
)


@functools.lru_cache(maxsize=8192)
def _spouse(text: str) -> str | None:
    """The speaker's one present spouse in ``text`` ("wife" or "husband"), or None (none, both, or one that ended).

    >>> _spouse("My wife and I love hiking."), _spouse("My ex-wife lives in Ohio."), _spouse("My hubby cooks.")
    ('wife', None, 'husband')
    """
    if _SPOUSE_ENDED.search(text):
        return None
    kinds = set()
    for m in _SPOUSE.finditer(text):
        word = (m.group(1) or "").lower()
        if m.group(3) or word in _SPOUSE_PAST or word in _SPOUSES:
            return None
        kinds.add(_SPOUSES[m.group(2).lower()])
    return kinds.pop() if len(kinds) == 1 else None


def spouse_conflicts(earlier: str, last: str) -> bool:
    """Whether the speaker's spouse is a wife in one turn and a husband in the other: "My wife and I have been
    together ten years." … "My husband makes the best pizza." Someone else's spouse, an ex, a late spouse or a
    turn that tells of a divorce or a death do not count.

    >>> spouse_conflicts("My wife and I met in Rome.", "My husband makes the best pizza.")
    True
    >>> spouse_conflicts("My ex-wife lives in Ohio.", "My husband and I love it here.")
    False
    """
    a, b = _spouse(earlier), _spouse(last)
    return a is not None and b is not None and a != b


# working status: not working now ("I'm retired", "I don't have a job", "I'm a stay-at-home mom") ...
_NOT_WORKING = re.compile(
    r"\bi(?:'m| am) (?:currently |now |still |actually |just )?(?:unemployed|jobless|out of work|between jobs"
    r"|retired\b(?! from))"
    r"|\bi(?:'ve| have) been (?:unemployed|jobless|out of work)\b"
    r"|\bi (?:don't|do not) have a job\b(?! (?:interview|offer))"
    r"|\bi (?:don't|do not) work(?=\s*(?:[.,!;]|$)| anymore\b| at all\b)",
    re.I,
)
_AT_HOME = re.compile(
    r"\bi(?:'m| am) (?:currently |now |still |just )?an? (?:(?:stay|stay[- ]at[- ]home|full[- ]time) )?"
    rf"(?:{AT_HOME_PARENT}|stay[- ]at[- ]home (?:wife|husband)|homemaker|housewife|househusband)\b"
    r"|\bi stay (?:at )?home with (?:my|the) (?:kids|children|son|daughter|baby|babies|twins)\b",
    re.I,
)
# ... and working now ("I work at a bank", "I just got home from work", "my boss")
_WORKING = re.compile(
    r"\bi (?:currently |now |still |also )?work (?:as|at|for|in|from home|nights|night shifts?)\b"
    r"(?! (?:it|that|this|my (?:garden|yard|house|home)|the (?:garden|yard))\b)"
    r"|\bi(?:'m| am) (?:currently |now |still )?working (?:as|at|for|in)\b"
    r"(?! (?:it|that|the moment|my (?:garden|yard|house|home)|the (?:garden|yard))\b)"
    r"|\b(?:got|get|getting|came|come|coming) (?:home |back )?from (?:an? (?:long |busy |hard )?day at )?"
    r"(?:work|the office)\b|\b(?:a|another) (?:long |busy |hard |rough |tough )?day at (?:work|the office)\b"
    r"|\bi(?:'m| am) (?:still )?at (?:work|the office)\b"
    r"|\bmy (?:boss|coworkers?|co-workers?|colleagues|shift)\b|\bmy job (?:is|as|at|pays|keeps)\b|\bat my job\b"
    r"|\bi(?:'m| am) employed\b",
    re.I,
)
# a clause of working that is past, wished for, to come, or on the side does not count
_NOT_NOW_WORK = re.compile(
    r"\b(?:used to|when i|before i|after i|until i|was|were|worked|want|wanna|would like|hope|hoping|will|going to"
    r"|plan|dream|someday|one day|if|quit|lost|left|fired|laid off|part[- ]time|volunteers?|volunteering"
    r"|freelanc\w*|side|odd jobs?|gigs?)\b|'ll\b",
    re.I,
)
# a clause of its own: after ", and", ", but", ", so", " but", " and" or ";" before I or my
_CLAUSE_BREAK = re.compile(r"(?:,\s*(?:and|but|so)|\s+but|\s+and|;)\s+(?=i\b|i'm\b|i've\b|my\b)", re.I)


@functools.lru_cache(maxsize=8192)
def work_status(text: str) -> str | None:
    """Whether the speaker of ``text`` works now: ``"working"`` ("I work at a bank.", "I just got home from a long
    day at the office."), ``"from home"`` (working, every time from home), ``"not working"`` ("I'm retired.", "I
    don't have a job."), ``"at home"`` (a stay-at-home parent or homemaker), or None (neither, or both). Questions
    say nothing; a clause that is past, wished for, to come or on the side ("I used to work at a bank", "I want to
    work as a nurse", "I work part-time") does not count as working.

    >>> work_status("I'm good. Just got home from work."), work_status("No, I'm retired, but I used to teach.")
    ('working', 'not working')
    >>> work_status("I don't work on Sundays."), work_status("I'm retired, but I work part-time at the library.")
    (None, 'not working')
    """
    outside = from_home = idle = home = False
    for sentence in _statements(text.replace("\u2019", "'")):
        for clause in _CLAUSE_BREAK.split(sentence):
            if _AT_HOME.search(clause):
                home = True
            elif _NOT_WORKING.search(clause):
                idle = True
            elif (m := _WORKING.search(clause)) and not _NOT_NOW_WORK.search(clause):
                if m.group(0).lower().endswith("from home"):
                    from_home = True
                else:
                    outside = True
    if (outside or from_home) and (idle or home):
        return None
    if outside or from_home:
        return "working" if outside else "from home"
    if idle:
        return "not working"
    return "at home" if home else None


def work_conflicts(earlier: str, last: str) -> bool:
    """Whether one turn says the speaker works now and the other that they do not (:func:`work_status`):
    "I'm retired, so I have a lot of free time." … "I work at a law firm as a paralegal." A stay-at-home parent
    who also works from home does not count.

    >>> work_conflicts("I just got home from work.", "I'm a stay at home mom.")
    True
    >>> work_conflicts("I'm a stay-at-home dad.", "I work from home, so I'm with the kids all day.")
    False
    """
    a, b = work_status(earlier), work_status(last)
    if a is None or b is None:
        return False
    kinds = {a, b}
    return (
        bool(kinds & {"working", "from home"})
        and bool(kinds & {"not working", "at home"})
        and kinds
        != {
            "from home",
            "at home",
        }
    )


# jobs named after "a/an" ("a nurse", "a high school teacher"): the times reading's work frame reads these (and
# "student"); the work claims read them and more ("I'm a nurse" as working now)
_JOBS = (
    "nurse|teacher|doctor|engineer|lawyer|designer|developer|accountant|chef|cook|pilot|driver|waiter|waitress|cashier"
    "|barista|manager|programmer|writer|artist|musician|farmer|mechanic|electrician|plumber|carpenter|firefighter"
    "|police officer|soldier|scientist|professor|librarian|banker|dentist|vet|pharmacist|architect|journalist"
    "|photographer|salesman|consultant|analyst|clerk"
)
_JOB_NOUNS = (
    _JOBS + "|physician|surgeon|veterinarian|attorney|paralegal|welder|contractor|fireman|cop|detective|paramedic"
    "|flight attendant|baker|butcher|bartender|server|secretary|receptionist|janitor|custodian|principal|realtor"
    "|real estate agent|saleswoman|sales rep|insurance agent|ceo|rancher|fisherman|miner|construction worker"
    "|factory worker|social worker|therapist|psychologist|psychiatrist|counselor|researcher|reporter|editor"
    "|translator|tutor|lifeguard|mailman|postman|mail carrier|security guard|hairdresser|stylist|barber|housekeeper"
    "|nanny|caregiver|hygienist|optometrist|chiropractor|trainer|coach|judge"
)
# the other claims about work a clause can make (working and not working now are work_status's phrasings)
_JOB_NOW = re.compile(
    rf"\bi(?:'m| am) (?:currently |now |still )?an? (?!(?:retired|former|ex|aspiring|future|wannabe|student|trainee"
    rf"|part[- ]time)\b)(?:[a-z-]+ ){{0,2}}?(?:{_JOB_NOUNS})\b(?!'s| (?:fan|major|student|at heart|in training)\b)",
    re.I,
)
_WORK_FULL_TIME = re.compile(r"\bi (?:currently |now |still )?work full[- ]time (?:as|at|for|in)\b", re.I)
_OFF_SOMETIMES = re.compile(
    r"\bi (?:don't|do not) work (?:today|tonight|tomorrow|on \w+|this \w+|weekends|nights|mondays|fridays|saturdays"
    r"|sundays)\b|\b(?:my|a) day off\b|\bi(?:'m| am) off (?:today|tonight|tomorrow|this \w+|work)\b"
    r"|\bwhen i(?:'m| am) not (?:at )?work(?:ing)?\b|\b(?:after|before) work\b",
    re.I,
)
_SEEKING = re.compile(
    r"\bjob interviews?\b|\blooking for (?:a |another )?(?:new )?(?:job|work)\b|\bapplying (?:for|to) jobs\b"
    r"|\bjob (?:hunting|search)\b",
    re.I,
)
_WISH = "want|wanna|plan|planning|hope|hoping|would like|'d like"  # "... to quit", "... to become a nurse"
_QUITTING = re.compile(rf"\b(?:{_WISH}|going) to quit\b", re.I)
_WANTS_WORK = re.compile(
    rf"\b(?:{_WISH}|love) to (?:work as (?:an? )?|become an? |be an? )"
    r"(?P<value>[a-z]+(?: [a-z]+){0,2})|\bi want a job\b",
    re.I,
)
_PAST_WORK = re.compile(
    rf"\bi worked (?:as|at|for|in)\b|\bi used to work\b|\bi was an? (?:[a-z-]+ ){{0,2}}?(?:{_JOB_NOUNS})\b", re.I
)
# a job that ended: not working now, as far as the turn says
_ENDED_WORK = re.compile(
    r"\bi retired\b(?! from)|\bi (?:got|was) laid off\b|\bi (?:lost|quit|left) my job\b|\bi got fired\b", re.I
)
_NEVER_WORKED = re.compile(r"\bi(?:'ve| have) never (?:worked|had a (?:real )?job|been employed)\b", re.I)
_ON_THE_SIDE = re.compile(r"\b(?:part[- ]time|volunteers?|volunteering|freelanc\w*|side|odd jobs?|gigs?)\b", re.I)
# what may follow a job after "I'm a/an" in a clause that says nothing but work: a place ("at the clinic")
_PLACE_REST = re.compile(r"^\s*(?:(?:at|in|for|on)\b.*)?[\s\W]*$", re.I)
_WORK_FILLER = _FILLER | {"not", "right", "really", "now", "currently", "at", "the", "moment", "still", "but", "so"}
_WORK_STOP = {
    "i", "i'm", "am", "a", "an", "the", "at", "in", "for", "on", "of", "to", "as", "my", "me", "work", "working", "job",
    "full", "time", "now", "currently", "still", "really", "just", "if", "and", "but", "so", "someday", "one", "day",
    "is", "are",
}  # fmt: skip
_AT_HOME_WORDS = re.compile(r"\b(?:stay[- ]at[- ]home|homemaker|housewife|househusband)\b", re.I)
# a clause that speaks of work: one the claims do not read keeps the pair with the classifier
_WORK_TALK = re.compile(
    r"\b(?:work|works|working|worked|job|jobs|career|employed|unemployed|employer|office|boss|coworkers?|co-workers?"
    rf"|colleagues?|shifts?|retired|retirement|{_JOB_NOUNS})\b",
    re.I,
)
_WORKING_KINDS = ("working", "from home", "off", "quitting")
_NOT_WORKING_KINDS = ("not working", "at home", "ended")
_FITS_NEVER = ("not working", "at home", "seeking", "wants work", "never")
_NAMED = ("working", "from home", "wants work", "side")  # the kinds whose value is the job or place named
_NEGATED = re.compile(r"\b(?:not|no|never|nor)\b|n't\b", re.I)
_ANSWER = re.compile(r"^\W*(?:no|nope|nah|not (?:really|right now|now|at the moment|yet|anymore))\b[\s,.!]*", re.I)


def _value(text: str) -> frozenset[str]:
    """The words of a claim's clause beyond stop words ("a nurse at the clinic": nurse, clinic)."""
    words = re.findall(r"[a-z]+(?:'[a-z]+)?", text.lower())
    return frozenset(w for w in words if w not in _WORK_STOP and w not in _FILLER)


@functools.lru_cache(maxsize=8192)
def work_claims(text: str) -> tuple[frozenset[tuple[str, frozenset[str]]], bool]:
    """The claims ``text`` makes about its speaker's work, each a kind and the words that name the job or place
    (empty for "I just got home from work"), and whether it says nothing else. Kinds: ``working``, ``from home``,
    ``not working``, ``at home`` (a stay-at-home parent), ``off`` (at some time only: "I don't work on Sundays"),
    ``seeking``, ``quitting``, ``wants work``, ``past``, ``ended`` ("I retired", "I lost my job"), ``side``
    (part-time, volunteering), ``never``, and ``unread``: a clause that speaks of work in words none of these read
    ("I don't work in a call center"), which fits nothing.

    >>> claims, only = work_claims("I'm between jobs right now.")
    >>> sorted(k for k, _ in claims), only
    (['not working'], True)
    >>> sorted(k for k, _ in work_claims("I work as an electrician, and I love fishing.")[0])
    ['working']
    """
    claims: set[tuple[str, frozenset[str]]] = set()
    only = True
    for sentence in _statements(text.replace("\u2019", "'")):
        for clause in _CLAUSE_BREAK.split(sentence):
            kind, rest, extra = _claim(clause)
            if kind is None and _WORK_TALK.search(clause):  # "I don't work in a call center": work talk not read
                kind = "unread"
            if kind is None:
                only = only and _fillers_only(clause)
                continue
            if kind == "unread":
                claims.add(("unread", frozenset()))
                only = False
                continue
            claims.add((kind, _value(rest) if kind in _NAMED else frozenset()))
            if kind == "working" and not _PLACE_REST.match(_after_job(clause)):
                only = False
            if extra and not _fillers_only(extra):
                only = False  # "I love working with kids, they give me energy throughout my shift": more than work
    return frozenset(claims), only and bool(claims)


def _fillers_only(text: str) -> bool:
    """Whether ``text`` holds only fillers ("Yes,", "right now")."""
    return all(w in _WORK_FILLER for w in re.findall(r"[a-z]+(?:'[a-z]+)?", text.lower()))


def _after_job(clause: str) -> str:
    """What follows the job in a clause that states one after "I'm a/an" ("" when none is stated that way)."""
    m = _JOB_NOW.search(clause)
    return clause[m.end() :] if m else ""


def _claim(clause: str) -> tuple[str | None, str, str]:
    """The one claim about work a clause makes, the words it names the job or place with, and what the clause says
    besides a working claim that names nothing ("" otherwise)."""
    if _NEVER_WORKED.search(clause):
        return "never", "", ""
    if _AT_HOME.search(clause):
        return "at home", "", ""
    if _NOT_WORKING.search(clause):
        return "not working", "", ""
    if _OFF_SOMETIMES.search(clause):
        return "off", "", ""
    if _NEGATED.search(_ANSWER.sub("", clause)):  # "I don't want to be a chef", "I'm not a stay at home mom"
        return ("unread" if _AT_HOME_WORDS.search(clause) else None), "", ""
    if _SEEKING.search(clause):
        return "seeking", "", ""
    if _QUITTING.search(clause):
        return "quitting", "", ""
    if m := _WANTS_WORK.search(clause):
        return "wants work", m.group("value") or "", ""
    if _ENDED_WORK.search(clause):
        return "ended", "", ""
    if _PAST_WORK.search(clause):
        return "past", "", ""
    m = _WORKING.search(clause) or _WORK_FULL_TIME.search(clause) or _JOB_NOW.search(clause)
    if m is None:
        return None, "", ""
    said = m.group(0).lower()
    # "I work at a bank", "my job is teaching", "I'm a nurse" name the job or place; "my boss", "from work" do not
    named = m.re is not _WORKING or said.endswith((" as", " at", " for", " in", "my job is"))
    if _ON_THE_SIDE.search(clause):
        return "side", clause[m.start() :] if named else "", ""
    if _NOT_NOW_WORK.search(clause):
        return None, "", ""
    if said.endswith("from home"):
        return "from home", clause[m.start() :], ""
    if named:  # the whole clause: "the daycare I work at" names the daycare
        return "working", clause, ""
    return "working", "", clause[: m.start()] + " " + clause[m.end() :]


def _fit(a: tuple[str, frozenset[str]], b: tuple[str, frozenset[str]]) -> bool:
    """Whether two claims about work can both hold."""
    (x, xs), (y, ys) = sorted((a, b))
    if "unread" in (x, y):
        return False
    if {x, y} == {"from home", "at home"}:
        return True
    if (x in _WORKING_KINDS and y in _NOT_WORKING_KINDS) or (y in _WORKING_KINDS and x in _NOT_WORKING_KINDS):
        return False
    if "never" in (x, y):
        return all(k in _FITS_NEVER for k in (x, y))
    if ({x, y} <= {"working", "side"} and "working" in (x, y)) or x == y == "from home":
        return not (xs and ys) or xs <= ys or ys <= xs  # one names nothing, or one says no more than the other
    if {x, y} == {"wants work", "working"}:
        return not (xs & ys)
    if x == y == "wants work":  # "I want to be a nurse." … "I want to be a lawyer."
        return not (xs and ys) or xs <= ys or ys <= xs
    return True


def work_settled(earlier: str, last: str) -> bool:
    """Whether two turns of one speaker agree about their work and one of them says nothing else
    (:func:`work_claims`): "I work as an electrician." … "When I'm not at work, I fish."; "I'm between jobs right
    now." … "I worked as a graphic designer for ten years."

    >>> work_settled("I work as an electrician.", "When I'm not at work, I fish.")
    True
    >>> work_settled("I'm a nurse.", "I work at a bank as a teller.")
    False
    """
    (a, a_only), (b, b_only) = work_claims(earlier), work_claims(last)
    return bool(a and b and (a_only or b_only) and all(_fit(x, y) for x in a for y in b))


# a turn that says it has no favourite and names one: "I don't really have a favorite food. My favorite food is …"
_NO_FAVORITE = re.compile(
    r"\bi (?:don't|do not) (?:really |actually )?have (?:a|one|any) (?:real |particular |single )?favou?rites?"
    r"(?: (?P<what>[a-z]+))?\b",
    re.I,
)
_MY_FAVORITE = re.compile(
    r"\bmy (?:absolute |all[- ]time )?favou?rite(?: (?P<what>[a-z]+))?"
    r" (?:is|are|would be|has to be|would have to be)\b"
    r"|\b(?:is|are) my (?:absolute |all[- ]time )?favou?rites?(?: (?P<that>[a-z]+))?\b",
    re.I,
)


# words after "favorite" that name no kind of thing ("Pizza is my favorite though.")
_NOT_A_KIND = {"though", "too", "also", "as", "ever", "of", "by", "but", "and", "so", "now", "anyway", "lol", "haha"}


def _kind(word: str | None) -> str:
    """The kind of thing a favourite is of ("food"), or "" when the word after "favorite" names none."""
    word = (word or "").lower()
    return "" if word in _NOT_A_KIND else word


@functools.lru_cache(maxsize=8192)  # a cascade's second stage reads the same last turn again
def self_conflict(text: str) -> str | None:
    """How ``text`` contradicts itself, or None: ``"favorite"`` (it has no favourite X and names its favourite X:
    "I don't really have a favorite food. My favorite food is mexican food."), or a count at odds
    (:func:`~dialcheck.detectors.counts.counts_at_odds`: "I don't have any pets. My dog is sweet."). A favourite of
    something else, or a count that changed, is no conflict.

    >>> self_conflict("I don't really have a favorite team. My favorite team is the Leafs.")
    'favorite'
    >>> self_conflict("I don't have a favorite band, but Queen is my favorite band.")
    'favorite'
    >>> self_conflict("I don't have a favorite movie, but my favorite color is orange.") is None
    True
    """
    text = text.replace("\u2019", "'")
    said = {_kind(m.group("what")) for m in _NO_FAVORITE.finditer(text)}
    if said & {_kind(m.group("what") or m.group("that")) for m in _MY_FAVORITE.finditer(text)}:
        return "favorite"
    return counts_at_odds(text)


def slot_conflicts(dialogue: Dialogue, indices: Iterable[int]) -> dict[int, str]:
    """The earlier turns (of ``indices``) that fill a slot with a value the last turn replaces, and the slot:
    the last turn states that slot, and none of its values shares a word with the earlier turn's; or one of the two
    turns gives an age the speaker was that is above the other's present age, or one they will be that is below it
    ("When I was 35, ..." after "I'm 29."); or the last turn rules out a count the earlier one states
    (:func:`~dialcheck.detectors.counts.count_conflicts`: "I have two dogs." … "My three dogs …").

    >>> slot_conflicts(Dialogue.from_texts(["I'm 29 years old.", "Oh?", "When I was 35, I moved to Paris."]), [0])
    {0: 'age'}
    """
    indices = list(indices)
    out = count_conflicts(dialogue, indices)
    last = dialogue.turns[-1].text
    out.update((i, "age") for i in indices if kin_conflicts(dialogue.turns[i].text, last))
    out.update((i, "spouse") for i in indices if i not in out and spouse_conflicts(dialogue.turns[i].text, last))
    out.update((i, "job") for i in indices if i not in out and work_conflicts(dialogue.turns[i].text, last))
    now = persona_slots(last)
    timeline = age_timeline(last)
    if not now and not any(timeline):
        return out
    ages_now = _ages(last)
    for i in indices:
        text = dialogue.turns[i].text
        for kind, words in sorted(persona_slots(text)):
            values = [w for k, w in now if k == kind]
            if values and all(not (words & w) for w in values):
                out[i] = kind
                break
        else:
            if (
                _timeline_agrees(_ages(text), *timeline) is False
                or _timeline_agrees(ages_now, *age_timeline(text)) is False
            ):
                out[i] = "age"
    return out


_RECENT = re.compile(r"\b(?:just|recently|last (?:year|month|week)|this (?:year|month))\b", re.I)
_OWN_AGE_SPANS = (*_AGE_PATTERNS, *_WAS_AGE_PATTERNS, *_WILL_AGE_PATTERNS, _TURNED_LAST_YEAR, _DECADE_NOW, _WAS_DECADE)
_LEFTOVER = re.compile(r"^(?:\W|\b(?:and|but|so|now|years?|old|yrs)\b)+", re.I)


def _cut(text: str, patterns: Iterable[re.Pattern[str]]) -> str | None:
    """``text`` with what ``patterns`` match cut out of each statement (None when none matches)."""
    cut = False
    out = []
    for sentence in _sentences(text):
        said = [False] * len(sentence)
        for pattern in patterns:
            for m in pattern.finditer(sentence):
                said[m.start() : m.end()] = [True] * (m.end() - m.start())
                cut = True
        if not any(said):
            out.append(sentence)
            continue
        rest = "".join("\0" if s else c for c, s in zip(sentence, said, strict=True))
        pieces = [_LEFTOVER.sub("", p).strip() for p in rest.split("\0")]  # "I'm 28, and I …": "I …"
        kept = re.sub(r"\s+([,.!?;])", r"\1", " ".join(p for p in pieces if p))
        if re.search(r"[a-z]", kept, re.I):
            out.append(kept[0].upper() + kept[1:])
    return " ".join(out) if cut else None


def ages_cut(earlier: str, last: str) -> tuple[str, str] | None:
    """The two turns with their ages cut out, when their ages are known to agree: both give the speaker's present
    age with a value in common, or one gives it and the other an age the speaker was (below it) or will be
    (above it) and no present age. What is left is for a pair classifier to judge: the ages make it read a
    changed number as a changed fact ("I'm 28 and I work in marketing." … "When I was 22 I backpacked across
    Vietnam.": 0.72 on the default). A relative's age that rules out the speaker's ("I'm 28." … "My mom is 31.")
    is :func:`kin_conflicts`' to judge. Relatives' ages that fit the speaker's well ("I'm 35." … "My son
    is 8.") agree too and are cut out with them, unless a kind of relative is in both turns ("my mom is 61" …
    "my mom is 65" stays whole). None when the ages are not known to agree, or when nothing but the age is left
    of a turn.

    >>> ages_cut("I'm 28 and I work in marketing.", "When I was 22 I backpacked across Vietnam.")
    ('I work in marketing.', 'I backpacked across Vietnam.')
    >>> ages_cut("I'm 28 and I work in marketing.", "When I was 30 I backpacked across Vietnam.") is None
    True
    """
    now = [_ages(t) for t in (earlier, last)]
    lines = [age_timeline(t) for t in (earlier, last)]
    agree: bool | None = None  # the speaker's own ages: None when the two turns do not both give one
    if all(now):
        agree = bool(now[0] & now[1]) and not any(any(x) for x in lines)
    elif any(now):
        k = 0 if now[0] else 1  # the turn with the present age
        (was, will), n = lines[1 - k], now[k]
        if was or will:  # "I just retired at 60" tells of now, not of long ago
            agree = all(a < min(n) for a in was) and all(a > max(n) for a in will) and not any(lines[k])
            agree = agree and not _RECENT.search((earlier, last)[1 - k])
    kin = [_kin_ages(t) for t in (earlier, last)]
    fit = None  # each turn's relatives against the speaker's present age in the other; no relative in both
    if not {w.split()[-1] for w, _ in kin[0]} & {w.split()[-1] for w, _ in kin[1]}:  # "my mom is 61" … "65": kept
        fits = [_kin_fit(now[1 - k], kin[k]) for k in (0, 1)]
        fit = False if False in fits else True if True in fits else None
    if agree is False or fit is False or not (agree or fit):
        return None
    spans = (*_OWN_AGE_SPANS, _KIN_AGE) if fit else _OWN_AGE_SPANS
    a, b = _cut(earlier, spans), _cut(last, spans)
    return (a, b) if a and b else None  # a turn of nothing but its age: :func:`slot_settled`'s part
