"""How many of something a speaker has (dialcheck.detectors.counts), read by slots="persona" and "settle"."""

import math

import pytest

from dialcheck.detectors.counts import count_conflicts, own_counts
from dialcheck.detectors.slots import slot_conflicts
from dialcheck.detectors.utterance import SLOT_SCORE
from dialcheck.schema import Dialogue
from test_detectors import _utterance

INF = math.inf


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I have two cats and a dog.", {"cat": (2, 2), "dog": (1, 1), "pet": (3, INF)}),
        ("I've got 3 kids.", {"child": (3, 3), "son": (0, 3), "daughter": (0, 3)}),
        ("My three brothers are great.", {"brother": (3, 3), "sibling": (3, INF)}),
        ("Both my sisters live in Paris.", {"sister": (2, 2), "sibling": (2, INF)}),
        ("Having two cats means chaos.", {"cat": (2, 2), "pet": (2, INF)}),
        ("I'm an only child.", {"sibling": (0, 0), "brother": (0, 0), "sister": (0, 0)}),
        ("My son is 7.", {"son": (1, INF), "child": (1, INF)}),
        ("My dogs love the park.", {"dog": (2, INF), "pet": (2, INF)}),
        ("I'm a stay at home dad.", {"child": (1, INF), "son": (0, INF), "daughter": (0, INF)}),
        ("I'm currently a stay-at-home mom.", {"child": (1, INF), "son": (0, INF), "daughter": (0, INF)}),
        # not a count of the speaker's, or not of a whole
        ("Two of my three brothers are older.", {}),
        ("My two older brothers are mean.", {}),
        ("I have a lot of friends and a question.", {}),
        ("My pet peeve is noise.", {}),
        ("Do you have two dogs?", {}),
        ("Did I tell you about my son?", {}),
        ("I'm a stay-at-home wife.", {}),  # no child implied
        ("I was a stay at home mom for years.", {}),  # not now
        ("I want to be a stay at home mom.", {}),
    ],
)
def test_own_counts_reads_the_speakers_counts_as_ranges(text, expected):
    assert own_counts(text) == expected


def test_a_whole_bounds_its_parts_and_the_parts_bound_the_whole():
    assert own_counts("I have no kids.")["son"] == (0, 0)
    assert own_counts("I have two kids.")["daughter"] == (0, 2)
    assert own_counts("I have a son and two daughters.")["child"] == (3, INF)
    assert own_counts("I have no pets, but my dog is cute.") == {}  # at odds with itself: nothing read


@pytest.mark.parametrize(
    ("earlier", "last", "expected"),
    [
        ("I have two dogs.", "My three dogs love the park.", {0: "count:dog"}),
        ("I have no kids.", "My son is at school.", {0: "count:son"}),
        ("I'm an only child.", "My sister lives in Oslo.", {0: "count:sister"}),
        ("I have a dog.", "Both my dogs are old.", {0: "count:dog"}),
        ("I have two kids.", "All three of my daughters are at university.", {0: "count:daughter"}),
        ("My siblings eat my sweets.", "I am an only child.", {0: "count:sibling"}),  # either order
        ("I'm a stay at home dad.", "No, I don't have any kids.", {0: "count:child"}),
        ("I have no kids, so I travel.", "I'm a stay-at-home mom.", {0: "count:child"}),  # either order
        # consistent: the same count, another noun, a part, someone else's, a change, a wish
        ("I have two dogs.", "Both my dogs are old.", {}),
        ("I have two dogs.", "I have three kids.", {}),
        ("I have two kids.", "My son is 7.", {}),
        ("I have two kids.", "My sister has three kids.", {}),
        ("I have two dogs.", "We adopted another one, so now I have three dogs.", {}),
        ("I have no kids.", "I hope my kids will be like you someday.", {}),
        ("I have two cats.", "I had three cats as a kid.", {}),
        ("I love dogs.", "I have two dogs.", {}),
        ("I'm a stay at home husband.", "I don't have any kids.", {}),
        ("I'm a stay at home mom.", "I have no kids yet, but I want some someday.", {}),  # a wish: not read
    ],
)
def test_count_conflicts_name_the_turn_whose_count_the_last_turn_rules_out(earlier, last, expected):
    assert count_conflicts(Dialogue.from_texts([earlier, "Oh?", last]), [0]) == expected


def test_the_persona_reading_flags_a_changed_count_with_the_turn_as_evidence():
    d = Dialogue.from_texts(["Pets?", "I have two dogs and a cat.", "Nice!", "Yes, my three dogs keep me busy."])
    assert slot_conflicts(d, [1]) == {1: "count:dog"}
    det = _utterance()
    assert not det.predict([d])[0].contradiction  # the stand-in classifier sees no "never": consistent
    det.slots = "persona"
    (v,) = det.predict([d])
    assert v.contradiction and v.evidence == (1,) and v.pair_scores[1] == SLOT_SCORE
