"""Persona slots (dialcheck.detectors.slots) and the utterance detector's reading slots="persona"."""

import pytest

from dialcheck.detectors.slots import persona_slots, slot_conflicts
from dialcheck.detectors.utterance import SLOT_SCORE
from dialcheck.schema import Dialogue
from test_detectors import _utterance


@pytest.mark.parametrize(
    ("text", "slots"),
    [
        ("My name is Ava.", {("name", "ava")}),
        ("my name's bob", {("name", "bob")}),
        ("Call me Jo.", {("name", "jo")}),
        ("Hi, I'm Lucy! How can I help?", {("name", "lucy")}),
        ("I'm Nova, your AI assistant.", {("name", "nova")}),
        ("This is Tom from billing.", {("name", "tom")}),
        ("Max is my name.", {("name", "max")}),
        ("I'm 32 years old.", {("age", "32")}),
        ("I'm 67.", {("age", "67")}),
        ("I just turned 18!", {("age", "18")}),
        ("I work as a nurse at the clinic.", {("job", "nurse")}),
        ("My job is teaching math.", {("job", "math teaching")}),
        # not the speaker's own slot, no value, or not a slot at all
        ("Call me back later.", set()),
        ("hi, i'm fine thanks", set()),
        ("Hello! I'm Here to help.", set()),
        ("My name is not important.", set()),
        ("My daughter is 5 years old and my sister's name is Mia.", set()),
        ("I'm 20 years into my career.", set()),
        ("I'm 5 minutes away.", set()),
        ("Did I say I'm 25 years old?", set()),
        ("Nice to meet you, Max!", set()),
    ],
)
def test_persona_slots_reads_first_person_statements_only(text, slots):
    assert {(k, " ".join(sorted(v))) for k, v in persona_slots(text)} == {(k, v) for k, v in slots}


def test_a_conflict_needs_the_same_slot_with_no_shared_word():
    def conflicts(earlier, last):
        return slot_conflicts(Dialogue.from_texts([earlier, "Oh?", last]), [0])

    assert conflicts("My name is Ava.", "Call me Max.") == {0: "name"}
    assert conflicts("I'm 25 years old.", "I'm 40.") == {0: "age"}
    assert conflicts("I work as a nurse.", "I work as a nurse practitioner.") == {}  # shares "nurse"
    assert conflicts("My name is Ava.", "I'm 40.") == {}  # another slot
    assert conflicts("Call me Liz.", "My name is Elizabeth, but friends call me Liz.") == {}  # one value matches
    assert conflicts("I love dogs.", "My name is Max.") == {}  # the earlier turn states no slot


def test_the_reading_flags_a_changed_slot_with_the_turn_as_evidence_and_only_when_on():
    d = Dialogue.from_texts(
        ["Hi", "Hello, I love dogs.", "What do you do?", "I work as a nurse.", "Cool!", "I work as a pilot."]
    )
    det = _utterance()
    (v,) = det.predict([d])
    assert not v.contradiction  # the stand-in classifier sees no "never": consistent
    det.slots = "persona"
    assert det.config.options == {"slots": "persona"}
    (v,) = det.predict([d])
    assert v.contradiction and v.evidence == (3,) and v.pair_scores[3] == SLOT_SCORE
    assert v.pair_scores[1] < det.eta_e  # the other turn of the speaker keeps its classifier score
    other = Dialogue.from_texts(["Hi", "I work as a nurse.", "I work as a pilot."])  # the other speaker's job
    assert not det.predict([other])[0].contradiction
    det.slots = "off"
    assert "slots" not in det.config.options
    with pytest.raises(ValueError, match="slots"):
        det.slots = "names"


def test_the_reading_is_a_command_line_option_and_a_cascade_reading(capsys):
    from dialcheck.detectors.cascade import READINGS
    from helpers_cli import run_cli

    assert "slots" in READINGS
    with pytest.raises(SystemExit):
        run_cli(capsys, "check", "--help")
    assert "--slots {off,persona}" in capsys.readouterr().out
