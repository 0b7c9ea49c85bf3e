"""Turns about different people (dialcheck.detectors.subjects) and the utterance detector's readings subjects="apart"
and introductions="settle"."""

import json

import pytest

from dialcheck.detectors.subjects import apart, denies_someone, introduces, introduction, subject_of
from dialcheck.detectors.utterance import SETTLED_SCORE
from dialcheck.schema import Dialogue
from helpers_cli import run_cli
from test_detectors import _utterance
from test_slots import _SameScore


@pytest.mark.parametrize(
    ("text", "subject"),
    [
        ("I live in Ohio.", "self"),
        ("Oh, well, I'm 42.", "self"),
        ("Not really, I usually sleep in until ten.", "self"),  # stance and discourse openers are cut off
        ("Definitely, I grew up with dogs.", "self"),
        ("Pretty big, I have four siblings.", None),  # an answer before the comma is a statement of its own
        ("Yeah, my two boys wake up with the sun.", "other"),
        ("My landlord doesn't allow pets.", "other"),
        ("Sadly, my ex kept the dog.", "other"),
        ("No, I'm vegetarian. What about you?", "self"),  # the question is not a statement
        ("My brother lives in Texas.", "other"),
        ("My best friend's sister is a nurse.", "other"),
        ("Our kids love pop music. They sing all day.", "other"),
        ("My dog hates the rain.", "other"),
        ("My wife and I live in Texas.", None),  # the speaker too
        ("My brother visits me on Sundays.", None),  # "me": the speaker is in it
        ("My favourite food is pizza.", None),  # the speaker's own taste
        ("I live in Ohio. My brother lives in Texas.", None),  # both
        ("She is a nurse.", None),  # a pronoun alone names nobody
        ("Sounds fun!", None),  # a filler
        ("Where do you live?", None),  # a question
    ],
)
def test_subject_of_a_turn(text, subject):
    assert subject_of(text) == subject


@pytest.mark.parametrize(
    ("text", "denies"),
    [
        ("I'm an only child.", True),
        ("I don't have any children.", True),
        ("We never had kids.", True),
        ("No grandchildren yet.", True),
        ("I'm single.", True),
        ("Yes, I live alone.", True),
        ("Both my parents passed away.", True),
        ("I've never had a pet.", True),
        ("I never drink coffee.", False),  # an activity denied, not a person
        ("I can't swim.", False),
        ("My brother lives in Texas.", False),
    ],
)
def test_denies_someone(text, denies):
    assert denies_someone(text) is denies


@pytest.mark.parametrize(
    ("earlier", "last", "expected"),
    [
        ("I live in Ohio.", "My brother lives in Texas.", True),
        ("My wife works at the bank.", "I work from home as a translator.", True),  # either order
        ("I'm vegetarian.", "My husband eats meat every day.", True),
        ("I'm an only child.", "My brother lives in Texas.", False),  # the brother was denied
        ("I don't have kids.", "My son had a match today.", False),
        ("I live in Ohio.", "I live in Texas.", False),  # the same person
        ("My wife is a nurse.", "My wife is a lawyer.", False),  # the same someone else
        ("I'm vegetarian.", "My husband and I grill steaks every night.", False),  # the speaker in both
        # the speaker's age beside a number about someone else: two ages that may not fit, left to the classifier
        ("I'm 45 and I bake.", "My mother did. She just turned 40.", False),
        ("I'm 42.", "My daughter is twelve.", False),
        ("I'm a nurse.", "My daughter is 12.", True),  # no age of the speaker's
        ("I'm 45 and I bake.", "My mother bakes too.", True),  # no number about the mother
    ],
)
def test_apart(earlier, last, expected):
    assert apart(earlier, last) is expected


def test_apart_caps_the_pair_about_someone_else_and_keeps_the_others():
    d = Dialogue.from_texts(
        ["Hi", "I live in Ohio.", "Pets?", "I have no dog.", "Family?", "My brother lives in Texas with his dog."]
    )
    det = _utterance()
    det._clf = _SameScore()  # flags every pair
    assert det.subjects == "off"
    (v,) = det.predict([d])
    assert v.pair_scores == {1: pytest.approx(0.9), 3: pytest.approx(0.9)}
    det.subjects = "apart"
    (v,) = det.predict([d])
    assert v.pair_scores[1] == SETTLED_SCORE  # Ohio (the speaker) against the brother: different people
    assert v.pair_scores[3] == pytest.approx(0.9)  # "I have no dog." denies a dog: kept for the classifier
    assert v.contradiction and v.evidence == (3,)
    with pytest.raises(ValueError, match="subjects"):
        det.subjects = "sometimes"


@pytest.mark.parametrize(
    ("reading", "value", "turns"),
    [
        ("subjects", "apart", ["Hi", "I live in Ohio.", "Family?", "My brother lives in Texas."]),
        ("introductions", "settle", ["Siblings?", "Yes, one brother.", "Where?", "My brother lives in Texas."]),
        ("times", "settle", ["Hi", "I live in Seattle.", "Always?", "No, I grew up in Chicago."]),
    ],
)
def test_reading_on_the_command_line_and_in_a_saved_model(capsys, tiny_detector_dir, tmp_path, reading, value, turns):
    data = tmp_path / "d.json"
    data.write_text(json.dumps(turns))
    flag = f"--{reading}"
    code, out, err = run_cli(capsys, "check", str(data), "--model", str(tiny_detector_dir), "--json", flag, value)
    assert code == 0, err
    assert json.loads(out)["pair_scores"] == {"1": SETTLED_SCORE}
    saved = tmp_path / "saved"
    code, _, err = run_cli(capsys, "models", str(tiny_detector_dir), "--save", str(saved), flag, value)
    assert code == 0, err
    from dialcheck.detectors import load_detector

    assert getattr(load_detector(saved), reading) == value


def test_apart_leaves_the_slot_reading_its_conflicts_and_one_person_named_in_both():
    # a relative's age against the speaker's is the slot reading's to flag, not a pair about different people
    d = Dialogue.from_texts(["Hi", "I am 45 years old.", "Kids?", "My daughter is 50 years old."])
    det = _utterance()
    det._clf = _SameScore()
    det.slots, det.subjects = "persona", "apart"
    (v,) = det.predict([d])
    assert v.contradiction and v.pair_scores[1] > 0.9
    det.slots = "off"  # without the slot reading the two ages are still the classifier's
    assert det.predict([d])[0].pair_scores[1] > 0.85
    d = Dialogue.from_texts(["Hi", "I am a nurse.", "Kids?", "My daughter is 50 years old."])
    assert det.predict([d])[0].pair_scores[1] == SETTLED_SCORE  # no age of the speaker's: only two people
    # the speaker's turn introduces the very person the last turn is about
    assert not apart("I have an older sister and a younger brother.", "My older sister is 38.")
    assert apart("I have an older brother.", "My sister is 38.")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I have a sister.", (1, "sister", frozenset())),
        ("Yes, two daughters.", (2, "daughter", frozenset())),
        ("I've got a dog named Biscuit.", (1, "dog", frozenset())),
        ("We have an older son. Do you have kids?", (1, "son", frozenset({"older"}))),  # the question aside
        ("Three grandchildren.", (3, "grandchildren", frozenset())),
        ("I have no kids.", None),  # a denial, not a count
        ("I have a sister who lives in Paris.", None),  # says more than that she exists
        ("I have a sister. She is a nurse.", None),
        ("I have a car.", None),  # not a person or a pet
        ("I have a husband, yes.", (1, "husband", frozenset())),  # a tag says nothing more
        ("I do, yes, I have a younger sister.", (1, "sister", frozenset({"younger"}))),  # nor an opening "I do"
        ("I have a lot of cousins.", (-2, "cousin", frozenset())),  # two or more, unnumbered
        ("I have several friends in town.", None),  # where they are is more than that they exist
    ],
)
def test_introduction(text, expected):
    assert introduction(text) == expected


@pytest.mark.parametrize(
    ("earlier", "last", "expected"),
    [
        ("I have a sister.", "My sister lives abroad.", True),
        ("Yes, two daughters.", "My daughters are 5 and 8.", True),
        ("My dog loves the park.", "I have a dog.", True),  # either order
        ("I have two kids.", "My kid is 5.", True),  # one of the two
        ("I have a sister.", "My older sister is 38.", True),  # nothing said about her age before
        ("I have a dog.", "My dog died last year.", False),  # lost
        ("I have a puppy.", "My puppy ran away last month.", False),
        ("I have two daughters.", "My three daughters are grown.", False),  # counted otherwise
        ("I have one brother.", "My brothers are both doctors.", False),
        ("We have two dogs.", "My dog Rex is our only pet.", False),  # "only" counts too
        ("I have a sister.", "My only sister is 38.", True),
        ("Yes, a twin brother.", "My twin brother is a chef.", True),  # the kind is the last word: a brother
        ("I have a younger brother.", "My older brother is 30.", False),  # older or younger otherwise
        ("I have a sister.", "My sister and I talk every day.", False),  # the speaker in it too
        ("I have a son.", "My daughter is 5.", False),  # another kind of person
        ("I have a sister.", "I'm an only child.", False),  # the speaker's own turn: the classifier's
        ("I have a lot of cousins.", "My cousins all live in Mexico.", True),
        ("I have a lot of cousins.", "My cousin Ana is a vet.", True),  # one of them
        ("I have a lot of friends.", "My only friend moved away.", False),  # "only" counts
        ("I have some neighbours.", "My three neighbours are loud.", False),  # a number where none was
    ],
)
def test_introduces(earlier, last, expected):
    assert introduces(earlier, last) is expected


def test_introductions_settle_caps_the_elaboration_and_keeps_the_rest():
    d = Dialogue.from_texts(
        ["Pets?", "I have a dog.", "Siblings?", "I have a sister.", "Tell me more.", "My sister lost her dog."]
    )
    det = _utterance()
    det._clf = _SameScore()  # flags every pair
    assert det.introductions == "off"
    assert det.predict([d])[0].pair_scores == {1: pytest.approx(0.9), 3: pytest.approx(0.9)}
    det.introductions = "settle"
    (v,) = det.predict([d])
    assert v.pair_scores[3] == SETTLED_SCORE  # the sister she introduced
    assert v.pair_scores[1] == pytest.approx(0.9)  # the speaker's dog is not the one the last turn names
    assert v.contradiction and v.evidence == (1,)
    with pytest.raises(ValueError, match="introductions"):
        det.introductions = "always"
    # a pair the slot reading flags stays flagged
    aged = Dialogue.from_texts(["Hi", "I have an older sister.", "Ages?", "I am 45 years old. My sister is 30."])
    det.slots = "persona"
    assert det.predict([aged])[0].pair_scores[1] > 0.5
