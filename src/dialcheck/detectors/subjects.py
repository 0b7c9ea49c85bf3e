"""Two turns about different people: the speaker in one, someone else in the other (English).

A pair classifier trained on DECODE reads "I live in Ohio." … "My brother lives in Texas." (0.82 with the
default) or "I'm vegetarian." … "My husband eats meat every day." (0.98) as contradictions. DECODE's
contradictions are almost always about one subject, so the classifier learnt the frame and not whom it is about.
:func:`apart` says when two turns of one speaker are about different people, for
:class:`~dialcheck.detectors.utterance.UtteranceDetector`'s reading ``subjects="apart"``:

- every statement of one turn is the speaker's own: it starts with "I", "I'm", "I've", ... (after "Oh,", "Well,",
  "Yes," and the like);
- every statement of the other is about someone else: it starts with "my" or "our" and a word for a person or a
  pet ("My brother …", "My best friend's …", "Our kids …"), or with "he", "she" or "they", and at least one names
  that someone; the turn says "I", "me", "we", "us" or "myself" nowhere;
- the speaker's turn does not name that kind of person or pet ("I have an older sister." … "My older sister is
  38."), and neither turn denies that someone exists: "I'm an only child.", "I don't have any children.", "I'm single.",
  "I live alone.", "My parents passed away." (:func:`denies_someone`), so "I'm an only child." … "My brother
  lives in Texas." stays a contradiction;
- the speaker's turn does not give the speaker's age beside a number in the other ("I'm 45." … "My mother did.
  She just turned 40."): two people's ages may not fit, and the slot reading reads a relative's age only in
  "My mother is 40", so such a pair is left to the classifier.

Questions and fillers of one or two words ("Yes.", "Sounds fun!") are not statements; a turn with no statement is
about nobody. English phrasings only; anything else reads as before.

>>> apart("I live in Ohio.", "My brother lives in Texas.")
True
>>> apart("I'm an only child.", "My brother lives in Texas.")
False
>>> apart("I live in Ohio.", "My wife and I live in Texas.")
False
"""

from __future__ import annotations

import functools
import re

from .slots import _N, _ages

__all__ = ["apart", "denies_someone", "introduces", "introduction", "subject_of"]

_PEOPLE = (
    r"brothers?|sisters?|siblings?|mom|mum|mother|dad|father|parents?|wife|husband|spouse|sons?|daughters?|kids?"
    r"|child|children|babys?|babies|grand(?:children|child|sons?|daughters?|kids?|ma|mother|pa|father|parents?)"
    r"|uncles?|aunts?|cousins?|nephews?|nieces?|friends?|boyfriend|girlfriend|partner|fianc[eé]e?|roommates?"
    r"|flatmates?|housemates?|neighbou?rs?|boss|coworkers?|co-workers?|colleagues?|family|in-laws|twin"
    r"|step(?:mom|mother|dad|father|son|daughter|brother|sister)s?|fiancee|landlord|landlady|teachers?|doctor"
    r"|managers?|classmates?|buddy|buddies|god(?:mother|father|parents?)|ex|boys?|girls?"
)
_PETS = r"pets?|dogs?|cats?|puppy|puppies|kittens?|horses?|birds?|parrots?|hamsters?|rabbits?|bunny"
_WHO = rf"(?:{_PEOPLE}|{_PETS})"
_OPENER = re.compile(
    r"^(?:(?:oh|ah|aw|aww|well|yes|yeah|yep|yup|no|nope|nah|haha|hah|ha|hehe|lol|so|and|but|actually|honestly|sure|ok"
    r"|okay|wow|cool|nice|hmm|um|uh|right|true|indeed|anyway|also|hey|hi|hello|not really|not at all|definitely"
    r"|absolutely|of course|for sure|sadly|unfortunately|luckily|fortunately|usually|mostly|sometimes|totally"
    r"|exactly|probably|maybe)\b[,!.]?\s*)+",
    re.I,
)
_SELF = re.compile(r"^(?:i|i'm|i've|i'd|i'll|im|ive)\b", re.I)
# "my brother", "my older brother", "my best friend's", "our kids"
_NAMED_OTHER = re.compile(rf"^(?:my|our)\s+(?:[a-z-]+\s+){{0,2}}?{_WHO}(?:'s)?\b", re.I)
_PRONOUN_OTHER = re.compile(r"^(?:he|she|they|he's|she's|they're|they've)\b", re.I)
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|we|we're|we've|us|myself)\b", re.I)
_DENIAL = re.compile(
    r"\bonly child\b|\bsingle\b|\bnot married\b|\bnever (?:been )?married\b|\bunmarried\b|\b(?:live|lives|living)"
    r" alone\b|\bby myself\b|\bdivorced?\b|\bwidow(?:ed|er)?\b|\borphan(?:ed)?\b|\bpassed away\b|\bdied\b|\bdead\b"
    r"|\bdeceased\b|\blost my\b|\bmy late\b|\bestranged\b"
    rf"|\bno (?:\w+ ){{0,2}}?{_WHO}\b"
    rf"|\b(?:don't|do not|didn't|did not|never|haven't|have not|hasn't|doesn't|does not) (?:\w+ )?(?:have|had|own"
    rf"|owned|got) (?:a |an |any |no )?(?:\w+ ){{0,2}}?{_WHO}\b",
    re.I,
)
_SENTENCE = re.compile(r"[^.!?]+[.!?]*")
_NUMBER = re.compile(rf"\b{_N}\b", re.I)


def _fragments(text: str) -> list[str]:
    """Every sentence of a turn that does not ask, openers cut off (fragments kept: "Yes, two daughters.")."""
    out = []
    for m in _SENTENCE.finditer(text.replace("’", "'")):
        s = m.group(0).strip()
        if s and not s.endswith("?"):
            out.append(_OPENER.sub("", s).strip())
    return [s for s in out if s]


def _statements(text: str) -> list[str]:
    """The statements of a turn: its :func:`_fragments` but fillers of one or two words ("Sounds fun!") unless they
    start with a subject ("I'm 42.")."""
    return [
        s
        for s in _fragments(text)
        if _SELF.match(s) or _NAMED_OTHER.match(s) or _PRONOUN_OTHER.match(s) or len(re.findall(r"[A-Za-z']+", s)) > 2
    ]


@functools.lru_cache(maxsize=4096)
def subject_of(text: str) -> str | None:
    """``"self"`` when every statement of ``text`` is the speaker's own, ``"other"`` when every one is about someone
    else (at least one naming them) and the turn has no first person, else None.

    >>> subject_of("Haha yes. I grew up in London.")
    'self'
    >>> subject_of("My parents grew up in Paris. They moved later.")
    'other'
    >>> subject_of("My favourite food is pizza.") is None  # the speaker's own taste, not someone else
    True
    """
    said = _statements(text)
    if not said:
        return None
    if all(_SELF.match(s) for s in said):
        return "self"
    if (
        all(_NAMED_OTHER.match(s) or _PRONOUN_OTHER.match(s) for s in said)
        and any(_NAMED_OTHER.match(s) for s in said)
        and not any(_FIRST_PERSON.search(s) for s in said)
    ):
        return "other"
    return None


def denies_someone(text: str) -> bool:
    """Whether ``text`` says someone does not exist or is gone ("I'm an only child.", "We don't have kids.").

    >>> denies_someone("No, I don't have any children.")
    True
    >>> denies_someone("I never drink coffee.")
    False
    """
    return bool(_DENIAL.search(text.replace("’", "'")))


def _named(text: str) -> set[str]:
    """The words for people and pets in ``text``, plural folded to singular ("sisters" -> "sister")."""
    return {w.lower().rstrip("s") for w in re.findall(rf"\b(?:{_WHO})\b", text, re.I)}


def apart(earlier: str, last: str) -> bool:
    """Whether two turns of one speaker are about different people: one only about the speaker, the other only
    about someone else, neither denying anyone, and the speaker's turn not naming that kind of person ("I have an
    older sister." … "My older sister is 38." is about one sister; see the module text).

    >>> apart("I have an older sister.", "My older sister is 38.")
    False
    """
    kinds = (subject_of(earlier), subject_of(last))
    if set(kinds) != {"self", "other"} or denies_someone(earlier) or denies_someone(last):
        return False
    own, other = (earlier, last) if kinds[0] == "self" else (last, earlier)
    if _ages(own) and _NUMBER.search(other):
        return False  # the speaker's age beside a number about someone else: two ages that may not fit
    return not _named(own) & _named(other)


_COUNT_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}
_COUNT = rf"(?:{'|'.join(_COUNT_WORDS)}|\d+)"
# "a lot of cousins", "several friends": two or more, unnumbered (as "my sisters" is, -2)
_PLURAL = r"a lot of|lots of|many|several|a few|some"
# "I have a husband, yes.", "I do, I have a sister.": the tag and the opening say nothing more
_TAG = re.compile(r",\s*(?:yes|yeah|too|actually|though|as well)\s*([.!]*)$", re.I)
_I_DO = re.compile(r"^(?:i|we) (?:do|did)\b[,!.]?\s*", re.I)
# "I have a sister.", "I've got two dogs named Rex and Max.", "We have an older son.", "Yes, two daughters."
_INTRODUCTION = re.compile(
    rf"^(?:(?:i|we) (?:have|have got|got)|i've got|we've got|i've|we've)?\s*(?P<count>{_PLURAL}|{_COUNT})\s+"
    rf"(?P<adj>(?:[a-z-]+\s+){{0,2}}?)(?P<who>{_WHO})"
    r"(?:\s*,?\s+(?:named|called)\s+[A-Z][\w'-]*(?:\s+and\s+[A-Z][\w'-]*)?)?\s*[.!]*$",
    re.I,
)
# a someone who is gone or was given up: "My dog ran away." against "I have a dog."
_GONE = re.compile(
    r"\b(?:ran away|run away|put down|gave (?:him|her|it|them) away|rehomed|used to|anymore|no longer)\b", re.I
)
# the last person or pet word of "my ..." names the kind: "my twin brother" is a brother
_OWN = re.compile(rf"\b(?:my|our)\s+(?:[a-z-]+\s+){{0,2}}({_WHO})\b", re.I)
_ONLY = re.compile(rf"\bonly\s+(?:[a-z-]+\s+)?{_WHO}\b", re.I)  # "my only sister", "our only pet": one
_AGE_WORDS = {"older", "younger", "little", "big", "elder", "eldest", "oldest", "youngest", "baby", "twin", "step"}


@functools.lru_cache(maxsize=4096)
def introduction(text: str) -> tuple[int, str, frozenset[str]] | None:
    """(count, kind, age words) when ``text`` says nothing but that the speaker has someone ("I have a sister.",
    "Yes, two daughters.", "I've got a dog named Rex."), questions aside; else None.

    >>> introduction("Yes, I have two older sisters. Do you?")
    (2, 'sister', frozenset({'older'}))
    >>> introduction("I have a sister who lives in Paris.") is None
    True
    >>> introduction("I do, yes, I have a lot of cousins.")  # -2: two or more, unnumbered
    (-2, 'cousin', frozenset())
    """
    said = _fragments(text)
    if len(said) != 1:
        return None
    m = _INTRODUCTION.match(_OPENER.sub("", _I_DO.sub("", _TAG.sub(r"\1", said[0]))).strip())
    if not m:
        return None
    word = m.group("count").lower()
    count = -2 if re.fullmatch(_PLURAL, word) else _COUNT_WORDS[word] if word in _COUNT_WORDS else int(word)
    adj = frozenset(w.lower() for w in m.group("adj").split())
    return count, m.group("who").lower().rstrip("s"), adj


def _counts_of(text: str, kind: str) -> set[int]:
    """The numbers a turn puts before that kind of someone ("my two sisters" -> {2}; "a sister" -> {1}), and -2
    for a plural without a number ("my sisters": two or more)."""
    found = set()
    for m in re.finditer(rf"\b(?P<n>{_COUNT})\s+(?:[a-z-]+\s+){{0,2}}?(?P<w>{_WHO})\b", text, re.I):
        if m.group("w").lower().rstrip("s") == kind:
            n = m.group("n").lower()
            found.add(_COUNT_WORDS[n] if n in _COUNT_WORDS else int(n))
    if any(w.lower() == kind + "s" for w in re.findall(rf"\b(?:{_WHO})\b", text, re.I)):
        found.add(-2)
    return found


def introduces(earlier: str, last: str) -> bool:
    """Whether one of two turns of one speaker only introduces someone ("I have a sister.") and the other only
    says something about that someone, as the speaker's ("My sister lives abroad."; not "My sister lost her
    dog." after "I have a dog."): the second takes the first for granted, so
    the two agree, unless the other turn denies or loses them ("My sister passed away.", "My dog ran away."),
    counts them otherwise ("a sister" … "my two sisters", "my sisters"; "two dogs" … "our only pet") or calls
    them older or younger otherwise.

    >>> introduces("Yes, two daughters.", "My daughters are 5 and 8.")
    True
    >>> introduces("I have a sister.", "My sisters are twins.")
    False
    >>> introduces("I have a younger brother.", "My older brother is 30.")
    False
    """
    for intro_turn, other in ((earlier, last), (last, earlier)):
        intro = introduction(intro_turn)
        if intro is None or subject_of(other) != "other":
            continue
        count, kind, adj = intro
        own = {m.lower().rstrip("s") for m in _OWN.findall(other)}  # "my sister", "our two dogs"
        if kind not in own or denies_someone(other) or _GONE.search(other):
            return False
        counts = _counts_of(other, kind)
        if any(n != count and not (n == -2 and count >= 2) for n in counts) or (
            (count > 1 or count == -2) and _ONLY.search(other)
        ):
            return False
        said = set(re.findall(r"[a-z]+", other.lower())) & _AGE_WORDS
        return not (said and adj & _AGE_WORDS and said != adj & _AGE_WORDS)
    return False
