"""Two turns of one speaker at different times: a former state beside a present one (English).

A pair classifier trained on DECODE reads "I live in Seattle." … "I used to live in Chicago." (0.80 with the
default of session 71), "I'm a nurse." … "I used to work as a teacher." (0.96) or "No, I quit years ago." … "I
smoked a pack a day when I was in college." (0.93) as contradictions: it compares the facts, not when they held.
:func:`former_and_present` says when one turn tells only a former state of the speaker and the other a present
one, for :class:`~dialcheck.detectors.utterance.UtteranceDetector`'s reading ``times="settle"``:

- every statement of the former turn (and every clause in it that starts again with "I" or "we" after ", and", ", so"
  or "but") has a marker of a time that is over: "used to", "grew up", "growing up",
  "as a kid", "when I was a kid / little / young / in college", "back then", "back in school", "moved here from",
  "originally from" ("I'm used to it" is no such marker); it is not negated ("I never used to …", "I didn't grow
  up …") and claims nothing of now ("but now I teach", "currently", "these days");
- the other turn has statements, none with such a marker, and no "never", "ever", "always", "all my life", "my
  entire life", "since" or "still" (they reach from the past into now: "I've never smoked." … "I smoked in
  college." stays a contradiction), nor an origin ("I'm from Ohio.", "I was born in Ohio." … "I grew up in
  Texas." stays too);
- the present turn says something the former one does not, or denies it: "I live in Chicago." … "I used to live
  in Chicago." is left to the classifier ("used to" says it is over), "I don't smoke." … "I used to smoke." is not.

``times="changes"`` asks one more thing: both turns speak of one kind of fact that changes over a life (where one
lives, work, how one gets around, what one eats, drinks or smokes, school, sleep and exercise; :data:`FRAMES`), so a
past that implies a lasting state, a skill or a trait ("I used to cook paella for a restaurant." … "I do not know
how to cook.") stays with the classifier; and the two turns share no word beyond the frame's own, so one fact said
as both former and present ("I work as a firefighter." … "I used to be a firefighter before I became a teacher.")
stays too.
A turn that names no kind of fact and answers the other speaker's question takes the question's ("Where do you
work?" "At a hospital." is about work; :func:`asked_before`).

Questions and fillers are not statements (as in :mod:`dialcheck.detectors.subjects`). English phrasings only;
anything else reads as before.

>>> former_and_present("I live in Seattle.", "No, I grew up in Chicago.")
True
>>> former_and_present("I've never smoked.", "I smoked a lot when I was in college.")
False
>>> former_and_present("I live in Chicago.", "I used to live in Chicago.")
False
>>> former_and_present("I don't smoke anymore.", "I used to smoke a pack a day.")
True
"""

from __future__ import annotations

import functools
import re

from ..schema import Dialogue
from .slots import _JOBS as _SLOT_JOBS
from .subjects import _statements

__all__ = ["FRAMES", "FRAME_WORDS", "asked_before", "former", "former_and_present", "frames", "present"]

_KID = r"(?:a )?(?:kid|child|teenager|teen|boy|girl|student|little|young|younger|small)"
_SCHOOL = r"(?:high school|college|school|university|uni|the army|my (?:teens|twenties))"
_FORMER = re.compile(
    # not "I'm used to it" (accustomed)
    r"(?<!\bam )(?<!\bis )(?<!\bare )(?<!\bget )(?<!\bgot )(?<!'m )(?<!'re )(?<!\bbe )(?<!\bbeen )"
    r"\b(?:used to|grew up|growing up|as (?:a )?(?:kid|child|teenager|teen|boy|girl)"
    rf"|when i was (?:{_KID}|in {_SCHOOL})|back (?:then|in the day|in {_SCHOOL}|home)"
    r"|moved (?:here |over |out )?from|originally from)\b",
    re.I,
)
# a clause of its own ("I used to teach, and I'm 40 now"): each must tell a former state
_CLAUSE = re.compile(r"(?:,\s*(?:and|but|so)|\s+but)\s+(?=i\b|i'm\b|i've\b|we\b|we're\b)", re.I)
_NOW = re.compile(r"\b(?:now|nowadays|currently|these days|today|at the moment|right now)\b", re.I)
_NEGATED = re.compile(r"\b(?:never|not|didn't|did not|wasn't|weren't|no)\b", re.I)
_SPANS = re.compile(
    r"\b(?:never|ever|always|(?:all|whole|entire) (?:my )?life|my (?:whole|entire) life|since|still)\b", re.I
)
_ORIGIN = re.compile(r"\b(?:(?:i'm|i am|we're|we are|i come|we come) from|born)\b", re.I)  # the past, said now
_DENIES = re.compile(r"\b(?:not|no|don't|do not|doesn't|does not|no longer|anymore|quit|stopped|gave up)\b", re.I)


def _words(*lines: str) -> frozenset[str]:
    """The words of ``lines``, each line a few of them separated by spaces."""
    return frozenset(" ".join(lines).split())


_STOP = _words(
    "i i'm i've i'd i'll me my we we're our us you your he she they it its a an the and or but so to of in on",
    "at for with from as is am are was were be been being do does did have has had this that there here then",
    "just really very too also lot lots some any all now up out used grew growing back when kid child little",
    "young like",
)


_JOBS = _SLOT_JOBS + "|student"
#: The kinds of fact that change over a life, for ``times="changes"``: where one lives, work, getting around, what one
#: eats, drinks or smokes, school, sleep and exercise. A name of a place ("in Seattle") counts as where.
FRAMES = {
    "place": re.compile(
        r"\b(?i:live[sd]?|living|moved?|grew up|growing up|raised|originally|city|town|village|country|farm"
        r"|neighbou?rhood|house|flat|apartment)\b|\b(?i:in|to|near|from) [A-Z][a-z]+"
    ),
    "work": re.compile(
        rf"\b(?:work(?:s|ed|ing)?|job|jobs|career|employed|company|office|profession"
        rf"|an? (?:[a-z-]+ ){{0,2}}(?:{_JOBS}))\b",
        re.I,
    ),
    "transport": re.compile(r"\b(?:drive|drives|drove|driving|car|cars|truck|bike|bicycle|bus|motorcycle)\b", re.I),
    "food": re.compile(
        r"\b(?:eat|eats|ate|eating|diet|vegetarian|vegan|meat|steak|coffee|tea|drinks?|drank|drinking|alcohol|beer"
        r"|wine|smoke[sd]?|smoking|cigarettes?|water|juice|soda|milk|decaf|caffeine|sugar|sweets|candy|junk food"
        r"|fast food|snacks?|breakfast|lunch|dinner|meals?|fruit|vegetables)\b",
        re.I,
    ),
    "routine": re.compile(
        r"\b(?:wake|wakes|woke|waking|sleep|sleeps|slept|sleeping|bed|bedtime|exercise[sd]?|exercising|gym"
        r"|work(?:ing)? out|workouts?|run|runs|ran|running|jog|jogs|jogged|jogging|(?:get|gets|got|getting) up"
        r"|(?:stay|stays|stayed|staying) up|up late|early riser|morning person|night owl)\b",
        re.I,
    ),
    "school": re.compile(r"\b(?:school|college|university|study|studied|studying|degree|class|classes)\b", re.I),
}


@functools.lru_cache(maxsize=4096)
def frames(text: str) -> frozenset[str]:
    """The kinds of changing fact (:data:`FRAMES`) ``text`` speaks of.

    >>> sorted(frames("I used to drive a truck to work in Denver."))
    ['place', 'transport', 'work']
    >>> sorted(frames("I'm a senior software engineer."))  # up to two words may qualify the job
    ['work']
    """
    return frozenset(k for k, pattern in FRAMES.items() if pattern.search(text.replace("’", "'")))


#: The frames' own words (verbs and kinds, not values such as "firefighter", "truck" or a place's name): two turns
#: that share only these speak of one kind of fact, not of one fact.
FRAME_WORDS = _words(
    "live lives lived living move moved moving grew growing raised originally city town village country",
    "farm neighborhood neighbourhood house flat apartment work works worked working job jobs career employed",
    "company office profession drive drives drove driving eat eats ate eating diet drink drinks drank drinking",
    "school college university study studied studying degree class classes",
    "meal meals breakfast lunch dinner snack snacks wake wakes woke waking sleep sleeps slept sleeping bed bedtime",
    "exercise exercises exercised exercising gym workout workouts run runs ran running jog jogs jogged jogging",
)


def _content(text: str) -> set[str]:
    """The words of ``text`` that carry its facts (lowercased, small words and time markers left out)."""
    return {w for w in re.findall(r"[a-z0-9']+", text.lower().replace("’", "'")) if w not in _STOP}


@functools.lru_cache(maxsize=4096)
def former(text: str) -> bool:
    """Whether every statement of ``text`` tells a state of the speaker's that is over, claiming nothing of now.

    >>> former("Haha, I used to work as a teacher.")
    True
    >>> former("I used to be a nurse, but now I teach.")
    False
    """
    said = [c for s in _statements(text) for c in _CLAUSE.split(s)]
    return bool(said) and all(_FORMER.search(c) and not _NEGATED.search(c) and not _NOW.search(c) for c in said)


@functools.lru_cache(maxsize=4096)
def present(text: str) -> bool:
    """Whether ``text`` states something with no former-time marker and nothing that reaches into the past.

    >>> present("I live in Seattle.")
    True
    >>> present("I've always lived in Seattle.")
    False
    """
    said = _statements(text)
    return bool(said) and not any(_FORMER.search(s) or _SPANS.search(s) or _ORIGIN.search(s) for s in said)


def asked_before(dialogue: Dialogue, i: int) -> str | None:
    """The question turn ``i`` of ``dialogue`` answers: the latest turn that asks something (holds a "?") of the
    other speakers' turns since the speaker's own turn before it; turns with no text (a chat log's tool call) are
    passed over. None when there is none. In a chat log the question is not always just before the answer: the user
    adds a line ("Where do you work?" "just curious"), or the assistant calls a tool and reads its result first.

    >>> asked_before(Dialogue.from_texts(["Where do you work?", "At a hospital."]), 1)
    'Where do you work?'
    >>> asked_before(Dialogue.from_texts(["I work.", "At a hospital."]), 1) is None
    True
    >>> log = Dialogue.from_texts(["Where do you work?", "just curious", "", "{}", "At a hospital."],
    ...                           speakers=["user", "user", "assistant", "tool", "assistant"])
    >>> asked_before(log, 4)
    'Where do you work?'
    >>> asked_before(Dialogue.from_texts(["Where do you work?", "Nowhere.", "Nice.", "At home."]), 3) is None
    True
    """
    speaker = dialogue.turns[i].speaker
    for before in reversed(dialogue.turns[:i]):
        if not before.text.strip():
            continue
        if before.speaker == speaker:
            return None
        if "?" in before.text:
            return before.text
    return None


def _frames_of(text: str, asked: str | None) -> frozenset[str]:
    """The frames of ``text``, or, when it names none, those of the question it answers."""
    own = frames(text)
    return own if own or asked is None else frames(asked)


def former_and_present(
    earlier: str, last: str, changes: bool = False, asked: tuple[str | None, str | None] = (None, None)
) -> bool:
    """Whether one of two turns of a speaker tells only a former state and the other a present one that it does not
    restate (see the module text); with ``changes``, only when both speak of one kind of fact that changes over a
    life (:func:`frames`), so a past that implies a lasting state ("I used to cook for a restaurant." … "I can't
    cook.") stays with the classifier, and only when the two share no word beyond the frame's own ("I work as a
    firefighter." … "I used to be a firefighter." shares "firefighter"; "I live in Seattle." … "I used to live in
    Chicago." shares only "live").

    >>> former_and_present("I can't cook.", "I used to cook paella for a restaurant.", changes=True)
    False
    >>> former_and_present("I live in Seattle.", "I grew up in Chicago.", changes=True)
    True

    ``asked`` holds the questions the two turns answer (:func:`asked_before`); with ``changes``, a turn that names no
    frame of its own takes its question's:

    >>> former_and_present("At a hospital.", "I used to work in a bank.", changes=True)
    False
    >>> former_and_present("At a hospital.", "I worked in a bank back then.", True, ("Where do you work?", None))
    True
    """
    if former(earlier) and present(last):
        (then, asked_then), (now, asked_now) = (earlier, asked[0]), (last, asked[1])
    elif former(last) and present(earlier):
        (then, asked_then), (now, asked_now) = (last, asked[1]), (earlier, asked[0])
    else:
        return False
    if changes and not _frames_of(then, asked_then) & _frames_of(now, asked_now):
        return False
    if _DENIES.search(now):
        return True
    said_now, said_then = _content(now), _content(then)
    if changes and (said_now & said_then) - FRAME_WORDS:
        return False  # one fact in both ("a firefighter" then and now): the classifier's
    return not said_now <= said_then
