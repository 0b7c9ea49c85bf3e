"""Values two turns agree on (English): times, days, dates, money, percentages, durations, read for ``slots="settle"``.

A pair classifier reads a value said a second time as a changed fact: "Your package is scheduled to arrive on
Thursday." … "Yes, it should arrive on Thursday." scores 0.92 on the default, and "Thanks, I got it second-hand
for $300." … "Only $300, and it was worth every cent." 0.97. :func:`values` reads the values of a turn, normalised
("$300" and "300 dollars" are one value, "300 euros" another), and :func:`values_cut` gives the two turns with
those values cut out when every value of the last turn is among the earlier turn's: what is left is for the
classifier to judge ("Your package is scheduled to arrive." … "Yes, it should arrive."). A value that differs is
not cut, so a changed time or price stays whole for the classifier. Counts of things ("three brothers") and ages
are not values here: the count and age readings (:mod:`~dialcheck.detectors.counts`,
:mod:`~dialcheck.detectors.slots`) read them.

>>> sorted(values("We open at 9 am on Saturdays, and the plan is $15 (10% off)."))
[('day', 'saturday'), ('money', (15.0, 'dollar')), ('percent', 10.0), ('time', (9, 0))]
>>> values_cut("Your package is scheduled to arrive on Thursday.", "Yes, it should arrive on Thursday.")
('Your package is scheduled to arrive.', 'Yes, it should arrive.')
>>> values_cut("It arrives on Thursday.", "It arrives on Friday.") is None
True
"""

from __future__ import annotations

import functools
import re

__all__ = ["values", "values_cut"]

_UNITS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
_TEENS = ("ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen")
_TENS = ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
_WORD_NUMBERS = {w: n for n, w in enumerate(_UNITS, 1)} | {w: n for n, w in enumerate(_TEENS, 10)}
_WORD_NUMBERS |= {w: 10 * n for n, w in enumerate(_TENS, 2)}
_WORD_NUMBERS |= {
    f"{t}{sep}{u}": 10 * a + b for a, t in enumerate(_TENS, 2) for b, u in enumerate(_UNITS, 1) for sep in "- "
}
_WORD = "|".join(sorted((re.escape(w) for w in _WORD_NUMBERS), key=len, reverse=True))
_WORD_NOT_ONE = "|".join(sorted((re.escape(w) for w in _WORD_NUMBERS if w != "one"), key=len, reverse=True))
_DIGITS = r"\d{1,3}(?:,\d{3})*(?:\.\d+)?|\d+(?:\.\d+)?"
_AMOUNT = rf"(?P<n>{_DIGITS}|{_WORD})"
_MANY = rf"(?P<n>{_DIGITS}|{_WORD_NOT_ONE})"  # "one day", "one night": a time, not a length

_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")  # fmt: skip
_CURRENCY = {"$": "dollar", "€": "euro", "£": "pound", "dollar": "dollar", "buck": "dollar", "euro": "euro",
             "pound": "pound", "quid": "pound"}  # fmt: skip
_DURATION_UNITS = ("minute", "hour", "day", "night", "week", "month", "year")
_ORDINAL_NOUNS = "grade|year|floor|place|time|birthday|anniversary|century|row|round|edition|season|attempt|try|day"

# Each kind of value with the pattern that reads it; named groups give its parts. Read in this order, and a span read
# by an earlier kind is not read again ("$15 a month" is money, not a duration).
_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("money", re.compile(rf"(?P<cur>[$€£])\s?(?P<n>{_DIGITS})(?P<k>k\b)?", re.I)),
    ("money", re.compile(rf"\b{_AMOUNT} (?P<cur>dollars?|bucks?|euros?|pounds?|quid)\b", re.I)),
    ("percent", re.compile(rf"\b{_AMOUNT} ?(?:%|per ?cent\b)", re.I)),
    (
        "time",
        re.compile(
            r"\b(?P<h>1[0-2]|0?[1-9])(?::(?P<m>[0-5]\d))? ?(?P<ap>[ap]\.?m\b(?:\.(?= (?-i:[a-z])))?|o'clock\b)"
            r"|\b(?P<h2>[01]?\d|2[0-3]):(?P<m2>[0-5]\d)\b|\b(?P<word>noon|midday|midnight)\b",
            re.I,
        ),
    ),
    ("day", re.compile(r"\b(?P<day>(?:mon|tues|wednes|thurs|fri|satur|sun)day)s?\b", re.I)),
    ("month", re.compile(r"\b(?P<month>" + "|".join(m for m in _MONTHS if m not in ("march", "may")) + r")\b", re.I)),
    ("month", re.compile(r"\b(?P<month>March|May)\b")),  # "march" and "may" are words too: capitalised only
    # a date: "the 14th", "on the 3rd", "on the 1st of June"; not "the 5th grade", "my 30th birthday"
    ("date", re.compile(rf"\b(?:on )?the (?P<d>[12]?\d|3[01])(?:st|nd|rd|th)\b(?! (?:{_ORDINAL_NOUNS})s?\b)", re.I)),
    ("year", re.compile(r"\b(?P<y>19\d\d|20\d\d)\b")),
    (
        "duration",
        re.compile(rf"\b{_MANY}[ -](?P<unit>{'|'.join(_DURATION_UNITS)})s?\b(?![ -](?:old|of age)\b)", re.I),
    ),
)
# a value's preposition or modifier, cut with it ("on Thursday", "for $300", "every Sunday", "next Monday")
_BEFORE = re.compile(
    r"(?:\b(?:on|at|in|for|by|until|till|from|to|since|about|around|only|just|every|each|this|next|last|the|of)\s+)+$",
    re.I,
)
_AFTER = re.compile(r"^(?:\s+(?:sharp|on the dot|a month|a year|per month|per year|each month|a week))?", re.I)
_LETTERS = re.compile(r"[a-z]", re.I)


def _number(text: str) -> float:
    t = text.lower().replace(",", "")
    return float(_WORD_NUMBERS[t]) if t in _WORD_NUMBERS else float(t)


def _spans(text: str) -> list[tuple[int, int, tuple[str, object]]]:
    """Each value of ``text`` as (start, end, (kind, normalised value)), read kind by kind without overlaps."""
    text = text.replace("\u2019", "'")
    taken = [False] * len(text)
    out = []
    for kind, pattern in _KINDS:
        for m in pattern.finditer(text):
            if any(taken[m.start() : m.end()]):
                continue
            g = m.groupdict()
            value: object
            if kind == "money":
                n = _number(g["n"]) * (1000 if g.get("k") else 1)
                value = (n, _CURRENCY.get(g["cur"].lower().rstrip("s"), g["cur"]))
            elif kind == "percent":
                value = _number(g["n"])
            elif kind == "time":
                if g["word"]:
                    value = {"noon": (12, 0), "midday": (12, 0), "midnight": (0, 0)}[g["word"].lower()]
                elif g["h2"] is not None:
                    value = (int(g["h2"]), int(g["m2"]))
                else:
                    h, ap = int(g["h"]) % 12, g["ap"].lower()
                    value = (h + 12 if ap.startswith("p") else h, int(g["m"] or 0))
            elif kind == "day":
                value = g["day"].lower()
            elif kind == "month":
                value = g["month"].lower()
            elif kind == "date":
                value = int(g["d"])
            elif kind == "year":
                value = int(g["y"])
            else:
                value = (_number(g["n"]), g["unit"].lower())
            taken[m.start() : m.end()] = [True] * (m.end() - m.start())
            out.append((m.start(), m.end(), (kind, value)))
    return sorted(out, key=lambda s: s[0])


@functools.lru_cache(maxsize=8192)
def values(text: str) -> frozenset[tuple[str, object]]:
    """The values ``text`` gives, each as (kind, normalised value): money as (amount, currency), a time as (hour,
    minute) on a 24-hour clock, a duration as (amount, unit), a date as its day of the month.

    >>> sorted(values("Half past nothing: it takes two hours, from 6:30 to 8:30 pm, for 40 dollars."))
    [('duration', (2.0, 'hour')), ('money', (40.0, 'dollar')), ('time', (6, 30)), ('time', (20, 30))]
    """
    found = set()
    for _, _, (kind, value) in _spans(text):
        found.add((kind, value))
    return frozenset(found)


def _cut(text: str) -> str:
    """``text`` with its values and their prepositions or modifiers cut out, tidied."""
    text = text.replace("\u2019", "'")
    pieces, at = [], 0
    for start, end, _ in _spans(text):
        if start < at:
            continue
        before = text[at:start]
        m = _BEFORE.search(before)
        pieces.append(before[: m.start()] if m else before)
        after = _AFTER.match(text[end:])
        at = end + (after.end() if after else 0)
    pieces.append(text[at:])
    out = "".join(pieces)
    out = re.sub(r"\s+([,.!?;:])", r"\1", out)
    out = re.sub(r"([,;:])(?=[,.!?;:])", "", out)
    out = re.sub(r"\s{2,}", " ", out).strip(" ,;:")
    out = re.sub(r"^[,.;:!?\s]+", "", out)
    return out[:1].upper() + out[1:] if out else out


def values_cut(earlier: str, last: str) -> tuple[str, str] | None:
    """The two turns with their values cut out, when the values agree: ``last`` gives at least one value and every
    value it gives is among ``earlier``'s. None when they do not agree, or when a turn would have no words left.

    >>> values_cut("Thanks, I got it second-hand for $300.", "Only $300, and it was worth every cent.")
    ('Thanks, I got it second-hand.', 'And it was worth every cent.')
    >>> values_cut("The plan is $150 a year.", "That's $15 a month.") is None
    True
    """
    mine = values(last)
    if not mine or not mine <= values(earlier):
        return None
    a, b = _cut(earlier), _cut(last)
    return (a, b) if _LETTERS.search(a) and _LETTERS.search(b) else None
