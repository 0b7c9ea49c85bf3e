"""Turns about different people (dialcheck.detectors.subjects) and the utterance detector's reading subjects="apart"."""

import json

import pytest

from dialcheck.detectors.subjects import apart, denies_someone, subject_of
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


def test_subjects_on_the_command_line_and_in_a_saved_model(capsys, tiny_detector_dir, tmp_path):
    data = tmp_path / "d.json"
    data.write_text(json.dumps(["Hi", "I live in Ohio.", "Family?", "My brother lives in Texas."]))
    code, out, err = run_cli(
        capsys, "check", str(data), "--model", str(tiny_detector_dir), "--json", "--subjects", "apart"
    )
    assert code == 0, err
    assert json.loads(out)["pair_scores"] == {"1": SETTLED_SCORE}
    saved = tmp_path / "saved"
    code, _, err = run_cli(capsys, "models", str(tiny_detector_dir), "--save", str(saved), "--subjects", "apart")
    assert code == 0, err
    from dialcheck.detectors import load_detector

    assert load_detector(saved).subjects == "apart"


def test_apart_leaves_the_slot_reading_its_conflicts_and_one_person_named_in_both():
    # a relative's age against the speaker's is the slot reading's to flag, not a pair about different people
    d = Dialogue.from_texts(["Hi", "I am 45 years old.", "Kids?", "My daughter is 50 years old."])
    det = _utterance()
    det._clf = _SameScore()
    det.slots, det.subjects = "persona", "apart"
    (v,) = det.predict([d])
    assert v.contradiction and v.pair_scores[1] > 0.9
    det.slots = "off"  # without the slot reading the pair is only two people
    assert det.predict([d])[0].pair_scores[1] == SETTLED_SCORE
    # the speaker's turn introduces the very person the last turn is about
    assert not apart("I have an older sister and a younger brother.", "My older sister is 38.")
    assert apart("I have an older brother.", "My sister is 38.")
