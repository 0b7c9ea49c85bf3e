"""Values two turns agree on (dialcheck.detectors.values) and the utterance detector's reading slots="settle"."""

import numpy as np
import pytest

from dialcheck.detectors.values import values, values_cut
from dialcheck.schema import Dialogue
from test_detectors import _utterance


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("We open at 9 am.", {("time", (9, 0))}),
        ("Doors at 6:30 p.m. sharp.", {("time", (18, 30))}),
        ("Lunch is at noon, dinner at 19:45.", {("time", (12, 0)), ("time", (19, 45))}),
        ("See you at 3 o'clock.", {("time", (3, 0))}),
        ("Saturdays and Sunday.", {("day", "saturday"), ("day", "sunday")}),
        ("In May, then march on to July.", {("month", "may"), ("month", "july")}),  # "march": a verb here
        ("You may go in june.", {("month", "june")}),  # "may": a verb
        ("Booked for the 14th.", {("date", 14)}),
        ("My son is in the 5th grade.", set()),  # an ordinal, not a date
        ("We moved here in 2015.", {("year", 2015)}),
        ("It was $300, or 300 dollars, not 300 euros.", {("money", (300.0, "dollar")), ("money", (300.0, "euro"))}),
        ("£1,200 a month", {("money", (1200.0, "pound"))}),
        ("That's $15k.", {("money", (15000.0, "dollar"))}),
        ("Students get 10% off, or 10 percent.", {("percent", 10.0)}),
        ("A three-hour flight and 2 weeks off.", {("duration", (3.0, "hour")), ("duration", (2.0, "week"))}),
        ("I'm 22 years old.", set()),  # an age is the age reading's
        ("One day I'll go.", set()),  # "one day": a time, not a length
        ("I have three brothers.", set()),  # a count is the count reading's
        ("I am here.", set()),
    ],
)
def test_values_reads_each_kind_normalised(text, expected):
    assert values(text) == expected


@pytest.mark.parametrize(
    ("earlier", "last", "cut"),
    [
        (
            "Your package is scheduled to arrive on Thursday.",
            "Yes, it should arrive on Thursday.",
            ("Your package is scheduled to arrive.", "Yes, it should arrive."),
        ),
        (
            "The appointment is on Tuesday at 3 p.m.",
            "Great, see you Tuesday at 3 p.m. then.",
            ("The appointment is.", "Great, see you then."),
        ),
        (
            "I pay $900 a month in rent.",
            "Rent is 900 dollars, cheap for here.",
            ("I pay in rent.", "Rent is, cheap for here."),
        ),
        # the last turn's values among more of the earlier turn's: agree
        (
            "On Saturdays we open at 10 am and close at 6 pm.",
            "Yes, on Saturdays at 10 am.",
            ("We open and close.", "Yes."),
        ),
        # the same value with a contradiction beside it: cut, and the rest still contradicts ("by" goes with the day)
        ("We're closed on Sundays.", "Come by on Sunday, we're open.", ("We're closed.", "Come, we're open.")),
        ("It arrives on Thursday.", "It arrives on Friday.", None),  # a changed value: whole
        ("The plan is $150 a year.", "That's $15 a month.", None),
        ("It's $300.", "It's 300 euros.", None),  # another currency
        ("Open Monday to Friday.", "We open at 9 am on Monday.", None),  # a value the earlier turn does not give
        ("I have two dogs.", "My two dogs are loud.", None),  # counts are not cut
        ("I go on Friday.", "Friday.", None),  # nothing left of the last turn
    ],
)
def test_values_cut_only_values_that_agree(earlier, last, cut):
    assert values_cut(earlier, last) == cut


class _ValueScore:
    """Flags a pair that names a weekday (0.9), else 0.05: a classifier that reads a value said twice as a conflict."""

    def pair_fits(self, first, second):
        return True

    def score(self, pairs, batch_size=64, show_progress_bar=False):
        return np.array([0.9 if "day" in (a + b).lower() else 0.05 for a, b in pairs], dtype=np.float32)


def test_settle_reads_a_pair_whose_values_agree_without_the_values():
    det = _utterance()
    det._clf = _ValueScore()
    agree = Dialogue.from_texts(["When?", "It arrives on Thursday.", "Sure?", "Yes, it should arrive on Thursday."])
    assert det.predict([agree])[0].contradiction  # off: the value said twice makes the classifier flag it
    det.slots = "persona"
    assert det.predict([agree])[0].contradiction  # persona does not settle
    det.slots = "settle"
    (v,) = det.predict([agree])
    assert not v.contradiction and v.pair_scores[1] == pytest.approx(0.05)
    changed = Dialogue.from_texts(["When?", "It arrives on Thursday.", "Sure?", "Yes, it should arrive on Friday."])
    assert det.predict([changed])[0].pair_scores[1] == pytest.approx(0.9)  # a changed value: read whole


def test_settle_keeps_the_lower_of_the_whole_and_the_cut_score():
    class _CutScoresHigher:
        def pair_fits(self, first, second):
            return True

        def score(self, pairs, batch_size=64, show_progress_bar=False):
            return np.array([0.2 if "Thursday" in a + b else 0.7 for a, b in pairs], dtype=np.float32)

    det = _utterance()
    det._clf = _CutScoresHigher()
    det.slots = "settle"
    agree = Dialogue.from_texts(["When?", "It arrives on Thursday.", "Sure?", "Yes, it should arrive on Thursday."])
    assert det.predict([agree])[0].pair_scores[1] == pytest.approx(0.2)
