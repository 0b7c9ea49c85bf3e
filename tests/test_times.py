"""A former state beside a present one (dialcheck.detectors.times) and the utterance detector's times="settle"."""

import pytest

from dialcheck.detectors.times import former, former_and_present, present
from dialcheck.detectors.utterance import SETTLED_SCORE
from dialcheck.schema import Dialogue, Turn
from test_detectors import _utterance
from test_slots import _SameScore


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I used to live in Chicago.", True),
        ("No, I grew up in Chicago.", True),
        ("When I was a kid we had a cat.", True),
        ("Back in college I played rugby.", True),
        ("We moved here from Chicago three years ago.", True),
        ("My partner and I moved here from Chicago.", True),  # "and I" in a subject is no clause of its own
        ("I used to be a nurse, but now I teach.", False),  # a present claim in it
        ("I never used to like jazz.", False),  # negated
        ("I didn't grow up here.", False),
        ("I live in Seattle.", False),  # no former marker
        ("I used to live in Chicago. I live in Seattle.", False),  # one statement is present
        ("Did you grow up here?", False),  # a question states nothing
        ("I'm used to all kinds of houses.", False),  # "used to" as "accustomed to"
    ],
)
def test_former(text, expected):
    assert former(text) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I live in Seattle.", True),
        ("No, I quit years ago.", True),
        ("I've always lived in Seattle.", False),  # reaches back into the past
        ("I've never smoked.", False),
        ("I still live in the house I grew up in.", False),
        ("My entire life has been in Chicago.", False),
        ("I'm from Ohio.", False),  # an origin is the past, said now
        ("I was born in Ohio.", False),
        ("Nice!", False),  # a filler states nothing
    ],
)
def test_present(text, expected):
    assert present(text) is expected


@pytest.mark.parametrize(
    ("earlier", "last", "expected"),
    [
        ("I live in Seattle.", "I used to live in Chicago.", True),
        ("I used to work as a teacher.", "I'm a nurse.", True),  # either order
        ("No, I quit years ago.", "I smoked a pack a day when I was in college.", True),
        ("I don't smoke.", "I used to smoke.", True),  # the present denies what is over
        ("I live in Chicago.", "I used to live in Chicago.", False),  # "used to" says it is over: the classifier's
        ("I've never smoked.", "I smoked a lot when I was in college.", False),
        ("I'm from Ohio.", "I grew up in Texas.", False),
        ("I grew up in Ohio.", "I grew up in Texas.", False),  # two pasts
        ("I'm single.", "I got married last year.", False),  # a recent event is no former state
    ],
)
def test_former_and_present(earlier, last, expected):
    assert former_and_present(earlier, last) is expected


def test_times_settle_caps_the_former_state_and_keeps_the_rest():
    d = Dialogue.from_texts(
        ["Hi", "I live in Seattle.", "Smoke?", "I've never smoked.", "Before?", "I used to smoke in Chicago."]
    )
    det = _utterance()
    det._clf = _SameScore()  # flags every pair
    assert det.times == "off"
    (v,) = det.predict([d])
    assert v.pair_scores == {1: pytest.approx(0.9), 3: pytest.approx(0.9)}
    det.times = "settle"
    (v,) = det.predict([d])
    assert v.pair_scores[1] == SETTLED_SCORE  # Seattle now, Chicago then
    assert v.pair_scores[3] == pytest.approx(0.9)  # "never" reaches into the past: kept for the classifier
    assert v.contradiction and v.evidence == (3,)
    with pytest.raises(ValueError, match="times"):
        det.times = "sometimes"


def test_times_settle_reads_each_clause_that_starts_again_with_the_speaker():
    det = _utterance()
    det._clf = _SameScore()
    det.times = "settle"
    d = Dialogue.from_texts(["Hi", "I work as a nurse.", "Before?", "I used to work as a teacher, and I am 20."])
    (v,) = det.predict([d])
    assert v.pair_scores[1] == pytest.approx(0.9)  # "and I am 20" is a present claim: not only a former state
    d = Dialogue.from_texts(["Hi", "I work as a nurse.", "Before?", "When I was young, I worked as a teacher."])
    (v,) = det.predict([d])
    assert v.pair_scores[1] == SETTLED_SCORE


@pytest.mark.parametrize(
    ("earlier", "last", "expected"),
    [
        ("I live in Seattle.", "I used to live in Chicago.", True),  # where one lives
        ("We're in Seattle.", "My partner and I moved here from Chicago.", True),  # a place's name counts
        ("I'm a nurse.", "I used to work as a teacher.", True),  # work
        ("I'm a senior software engineer.", "I used to be a waiter.", True),  # words that qualify a job
        ("Only water and juice.", "Back in college I drank way too much beer.", True),  # drinks
        ("Yes, I wake up at five.", "As a teenager I slept until noon.", True),  # daily routine
        ("No, I'm in bed by ten now.", "In college I used to stay up all night gaming.", True),  # staying up
        ("I'm an early riser.", "I still stay up until three every night.", False),  # "still"
        ("I go to the gym a lot.", "I used to go to the gym, but I haven't been since.", False),  # "since"
        ("I'm a software engineer.", "I've never worked with computers, I'm a carpenter.", False),  # no former
        ("I drive a Tesla.", "Back in college I had a bike.", True),  # getting around
        ("I'm vegan.", "I used to eat meat every day.", True),  # food
        ("I do not know how to cook at all.", "I used to cook paella for a restaurant.", False),  # a skill
        ("I am not very emotional.", "Small things used to make me cry.", False),  # a trait
        ("I live in Seattle.", "When I was a kid I had a cat.", False),  # two kinds of fact
        ("I work as a firefighter.", "I used to be a firefighter before I became a teacher.", False),  # one fact
        ("I live in Chicago.", "I used to live in Chicago.", False),  # a place's name in both
        ("I don't work as a firefighter anymore.", "I used to be a firefighter.", True),  # denied now
    ],
)
def test_former_and_present_of_a_fact_that_changes(earlier, last, expected):
    assert former_and_present(earlier, last, changes=True) is expected


def test_times_changes_caps_only_a_changing_fact():
    det = _utterance()
    det._clf = _SameScore()
    det.times = "changes"
    turns = ["Hi", "I live in Seattle.", "Cook?", "I can't cook.", "Before?", "I used to cook in Chicago."]
    d = Dialogue.from_texts(turns)
    (v,) = det.predict([d])
    assert v.pair_scores[1] == SETTLED_SCORE  # a place then and a place now
    assert v.pair_scores[3] == pytest.approx(0.9)  # a skill: the classifier's


def test_times_changes_reads_a_short_answer_by_the_question_it_answers():
    det = _utterance()
    det._clf = _SameScore()
    det.times = "changes"
    turns = ["Where do you work?", "At a hospital.", "Nice.", "Thanks.", "Always?", "I used to work in a bank."]
    (v,) = det.predict([Dialogue.from_texts(turns)])
    assert v.pair_scores[1] == SETTLED_SCORE  # "At a hospital." answers where one works
    told = ["I like hospitals.", "At a hospital.", "Nice.", "Thanks.", "Always?", "I used to work in a bank."]
    (v,) = det.predict([Dialogue.from_texts(told)])
    assert v.pair_scores[1] == pytest.approx(0.9)  # no question before it: no frame, the classifier's
    never = ["Do you smoke?", "No, never.", "Good.", "Yes.", "Ever?", "I smoked for ten years when I was young."]
    (v,) = det.predict([Dialogue.from_texts(never)])
    assert v.pair_scores[1] == pytest.approx(0.9)  # "never" reaches into the past: the classifier's


def test_asked_before_is_the_other_speakers_question_just_before():
    from dialcheck.detectors.times import asked_before

    texts, speakers = ["Where do you work?", "At a bank.", "Cool!", "And you?", "I cook."], ["A", "B", "A", "A", "B"]
    d = Dialogue(tuple(Turn(who, text) for who, text in zip(speakers, texts, strict=True)))
    assert asked_before(d, 1) == "Where do you work?"
    assert asked_before(d, 2) is None  # "At a bank." asks nothing
    assert asked_before(d, 3) is None  # the same speaker's turn
    assert asked_before(d, 4) == "And you?"
    assert asked_before(d, 0) is None
