"""How many brothers, children, pets, cars … a speaker says they have (English), read for ``slots="persona"``.

A pair classifier reads a changed number as a restatement: "I have two dogs." … "I have three dogs." scores 0.02
(``benchmarks/value_swap_probe.py``). :func:`own_counts` reads the counts a speaker states about themself, each as a
range of what it allows, and :func:`count_conflicts` names the earlier turns whose count the last turn rules out:

- **exact**: "I have two cats", "I've got 3 kids", "we have a dog", "my three brothers", "both my sisters" (two),
  "all four of my kids", "having two cats means …";
- **none**: "I have no kids", "I don't have any pets", "I'm an only child" (no siblings);
- **at least one** or **at least two**: "my son", "my dogs" (a plural with no number).

A count of a kind bounds its parts and the other way round: "I have no kids" rules out "my son"; "I have two kids"
rules out "my three daughters" but not "my son". Only a fixed list of nouns counts (family, pets, a few
possessions: :data:`COUNTED`), and the last turn is left alone when it tells of a change, the past, the future or a
wish ("we adopted another", "now", "used to", "someday", "if"), or asks. Someone else's counts ("my sister has three
kids") and parts of a whole ("two of my brothers", "my two older brothers") do not count.

>>> sorted(own_counts("I have two cats and a dog.").items())
[('cat', (2, 2)), ('dog', (1, 1)), ('pet', (3, inf))]
>>> from dialcheck.schema import Dialogue
>>> count_conflicts(Dialogue.from_texts(["I have two dogs.", "Nice!", "My three dogs love the park."]), [0])
{0: 'count:dog'}
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable

from ..schema import Dialogue

__all__ = ["COUNTED", "count_conflicts", "own_counts"]

Range = tuple[int, float]

#: The nouns counted (singular), each with the kind it is part of, if any.
COUNTED: dict[str, str | None] = {
    **dict.fromkeys(("brother", "sister"), "sibling"),
    **dict.fromkeys(("son", "daughter"), "child"),
    **dict.fromkeys(("grandson", "granddaughter"), "grandchild"),
    **dict.fromkeys(("dog", "cat", "horse", "rabbit", "hamster", "parrot", "bird", "goat", "snake", "turtle"), "pet"),
    **dict.fromkeys(("sibling", "child", "grandchild", "pet", "car", "house", "bike", "motorcycle", "job"), None),
    **dict.fromkeys(("roommate", "tattoo", "degree", "language", "boat"), None),
}
_PLURALS = {"children": "child", "kids": "child", "kid": "child", "grandkids": "grandchild", "grandkid": "grandchild",
            "grandchildren": "grandchild", "puppies": "dog", "puppy": "dog", "kittens": "cat", "kitten": "cat",
            "bunnies": "rabbit", "bunny": "rabbit", "houses": "house"}  # fmt: skip
_PARTS: dict[str, list[str]] = {}
for _noun, _whole in COUNTED.items():
    if _whole:
        _PARTS.setdefault(_whole, []).append(_noun)

_NUMBERS = {"no": 0, "zero": 0, "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
            "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}  # fmt: skip
_NUMBER = r"(\d{1,2}|zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
# words that leave the count of the whole (not "older", "little": "my two older brothers" may be two of three)
_PLAIN = r"(?:(?:lovely|beautiful|wonderful|amazing|sweet|cute|adorable|grown|adult|rescue|rescued|pet|furry|"
_PLAIN += r"crazy|awesome|great|fluffy|gorgeous|precious|own|whole|lazy)[ -])?"
_NOUN = r"([a-z]+)"
_HAVE = r"\b(?:i|we)(?: have got| have|'ve got| own| raise)"
_EXACT = (
    re.compile(rf"{_HAVE} (?:only |just |exactly )?{_NUMBER} {_PLAIN}{_NOUN}\b", re.I),
    re.compile(rf"{_HAVE} (an?|no) {_PLAIN}{_NOUN}\b", re.I),
    re.compile(rf"(?:^|[.!;,]\s*|\b(?:and|but|so|with)\s+)having {_NUMBER} {_PLAIN}{_NOUN}\b", re.I),
    re.compile(rf"(?<!of )\bmy {_NUMBER} {_PLAIN}{_NOUN}\b", re.I),
    re.compile(rf"\ball {_NUMBER} (?:of )?my {_PLAIN}{_NOUN}\b", re.I),
)
# the rest of a list after an exact count: "I have two cats, a dog and no fish"
_LIST = re.compile(rf"(?:,\s*|,?\s+and\s+)(?:{_NUMBER}|(an?|no)) {_PLAIN}{_NOUN}\b", re.I)
_BOTH = re.compile(rf"\bboth (?:of )?my {_PLAIN}{_NOUN}\b", re.I)
_NONE = re.compile(rf"\b(?:i|we) (?:don't|do not|never) (?:have|had|own) any {_PLAIN}{_NOUN}\b", re.I)
_ONLY_CHILD = re.compile(r"\b(?:i'm|i am|i was) an only child\b", re.I)
# a stay-at-home parent has a child (not a stay-at-home wife or husband, not one the speaker was or wants to be);
# the slot reading's working status reads the same phrase (``slots._AT_HOME``)
AT_HOME_PARENT = r"stay[- ]at[- ]home (?:mom|mum|dad|mother|father|parent)"
_AT_HOME_PARENT = re.compile(rf"\b(?:i'm|i am) (?:currently |now |still |just )?an? {AT_HOME_PARENT}\b", re.I)
# "my son", "my dogs": at least one, at least two (not "my son's teacher"? that still has a son)
_MENTION = re.compile(rf"(?<!of )\bmy {_PLAIN}{_NOUN}\b(?! (?:peeve|project|name|theory|hate)s?\b)", re.I)
# the last turn tells of a change, the past, the future or a wish: its counts may differ without contradiction
_CHANGE = re.compile(
    r"\b(?:now|another|more|new|newest|just|adopted|getting|since|used to|had|was|were|died|passed|lost|"
    r"gone|left|born|expecting|pregnant|on the way|anymore|will|would|'ll|'d|someday|one day|future|want|wish|"
    r"hope|plan|planning|if|when|growing up|grew up|ago|last year|other|one of|two of|some of|each|every)\b",
    re.I,
)
_ASKS = re.compile(r"\W*(?:is|are|am|do|does|did|was|were|can|could|would|should|will|what|why|how|who|where)\b", re.I)


def _noun(word: str) -> tuple[str | None, bool]:
    """The counted noun ``word`` names, if any, and whether it is plural."""
    word = word.lower()
    if word in _PLURALS:
        return _PLURALS[word], word not in ("kid", "grandkid", "puppy", "kitten", "bunny")
    if word in COUNTED:
        return word, False
    if word.endswith("s") and word[:-1] in COUNTED:
        return word[:-1], True
    return None, False


@functools.lru_cache(maxsize=8192)
def own_counts(text: str) -> dict[str, Range]:
    """``{noun: (at least, at most)}`` for the counts the speaker of ``text`` states about themself.

    >>> sorted(own_counts("I have no kids, but my sister has three.").items())
    [('child', (0, 0)), ('daughter', (0, 0)), ('sibling', (1, inf)), ('sister', (1, inf)), ('son', (0, 0))]
    >>> own_counts("Two of my brothers live in Rome.")
    {}
    """
    merged = _merged(text)
    # a turn at odds with itself says nothing we can use (:func:`counts_at_odds` names it)
    return {} if any(lo > hi for lo, hi in merged.values()) else merged


def counts_at_odds(text: str) -> str | None:
    """``"count:<noun>"`` when the counts the speaker of ``text`` states cannot all hold ("I don't have any pets.
    My dog is sweet."), else None; a turn that tells of a change, the past or a wish ("My dog died, so I don't
    have any pets now.") says nothing at odds.

    >>> counts_at_odds("I don't have any pets. My dog is sweet."), counts_at_odds("I have no pets since my dog died.")
    ('count:dog', None)
    """
    if _CHANGE.search(text.replace("\u2019", "'")):
        return None
    merged = _merged(text)
    for noun in sorted(merged, key=lambda n: (COUNTED[n] is None, n)):  # a part ("dog") before its whole ("pet")
        lo, hi = merged[noun]
        if lo > hi:
            return f"count:{noun}"
    return None


@functools.lru_cache(maxsize=8192)
def _merged(text: str) -> dict[str, Range]:
    """``{noun: (at least, at most)}`` over every range the speaker of ``text`` states for each counted noun; at
    least above at most where the turn is at odds with itself."""
    stated: dict[str, list[Range]] = {}

    def add(noun: str, lo: int, hi: float) -> None:
        stated.setdefault(noun, []).append((lo, hi))
        if (whole := COUNTED[noun]) is not None:  # a part: at least as many of the whole
            stated.setdefault(whole, []).append((lo, math.inf))
        for part in _PARTS.get(noun, ()):  # a whole: at most as many of each part
            stated.setdefault(part, []).append((0, hi))

    for sentence in re.split(r"(?<=[.!?])\s+", text.replace("\u2019", "'").strip()):
        if sentence.endswith("?") and _ASKS.match(sentence):
            continue
        exact_spans = []

        def exact(number: str, word: str) -> bool:
            noun, plural = _noun(word)
            n = int(number) if number.isdigit() else _NUMBERS[number.lower()]
            if noun is None or (n > 1 and not plural) or (n == 1 and plural):
                return False  # "I have a lot", "I have two cat" (not a count we read)
            add(noun, n, n)
            return True

        for pattern in _EXACT:
            for m in pattern.finditer(sentence):
                end = m.end()
                if not exact(m.group(1), m.group(2)):
                    continue
                while item := _LIST.match(sentence, end):  # "..., a dog and no fish"
                    if not exact(item.group(1) or item.group(2), item.group(3)):
                        break
                    end = item.end()
                exact_spans.append((m.start(), end))
        for m in _BOTH.finditer(sentence):
            noun, plural = _noun(m.group(1))
            if noun is not None and plural:
                add(noun, 2, 2)
                exact_spans.append(m.span())
        for m in _NONE.finditer(sentence):
            if (noun := _noun(m.group(1))[0]) is not None:
                add(noun, 0, 0)
        if _ONLY_CHILD.search(sentence):
            add("sibling", 0, 0)
        if _AT_HOME_PARENT.search(sentence):
            add("child", 1, math.inf)
        for m in _MENTION.finditer(sentence):
            if any(a <= m.start() < b for a, b in exact_spans):
                continue
            noun, plural = _noun(m.group(1))
            if noun is not None:
                add(noun, 2 if plural else 1, math.inf)
    for whole, parts in _PARTS.items():  # "two cats and a dog": at least three pets
        if (total := sum(max(r[0] for r in stated[p]) for p in parts if p in stated)) > 0:
            stated.setdefault(whole, []).append((total, math.inf))
    return {noun: (max(r[0] for r in ranges), min(r[1] for r in ranges)) for noun, ranges in stated.items()}


def count_conflicts(dialogue: Dialogue, indices: Iterable[int]) -> dict[int, str]:
    """The earlier turns (of ``indices``) whose count of something the last turn rules out, each with
    ``"count:<noun>"``; nothing when the last turn tells of a change, the past, the future or a wish.

    >>> count_conflicts(Dialogue.from_texts(["I'm an only child.", "Oh.", "My sister lives in Oslo."]), [0])
    {0: 'count:sister'}
    >>> count_conflicts(Dialogue.from_texts(["I have two dogs.", "Oh.", "Now I have three dogs."]), [0])
    {}
    """
    last = dialogue.turns[-1].text.replace("\u2019", "'")
    if _CHANGE.search(last):
        return {}
    now = own_counts(last)
    if not now:
        return {}
    out: dict[int, str] = {}
    for i in indices:
        before = own_counts(dialogue.turns[i].text)
        for noun in sorted(now.keys() & before.keys(), key=lambda n: (COUNTED[n] is None, n)):  # "sister" first
            (lo, hi), (lo2, hi2) = now[noun], before[noun]
            if lo > hi2 or lo2 > hi:
                out[i] = f"count:{noun}"
                break
    return out
