import pytest

from dialcheck import Dialogue, Turn, Verdict
from dialcheck.errors import InputError


def test_from_texts_alternates_speakers_and_finds_same_speaker_turns():
    d = Dialogue.from_texts(["a", "b", "c", "d", "e"])
    assert [t.speaker for t in d.turns] == ["A", "B", "A", "B", "A"]
    assert d.same_speaker_indices() == [0, 2]
    assert d.last == Turn("A", "e")


def test_turns_given_as_list_become_a_tuple():
    d = Dialogue([Turn("x", "hi")])
    assert isinstance(d.turns, tuple)


def test_verdict_to_dict_is_json_ready():
    v = Verdict(True, 0.912345678, (0, 2), None, {0: 0.9, 2: 0.7})
    assert v.to_dict() == {
        "contradiction": True,
        "score": 0.912346,
        "evidence": [0, 2],
        "category": None,
        "pair_scores": {"0": 0.9, "2": 0.7},
    }
    assert v.label == "contradiction"


def test_from_texts_refuses_a_single_string_or_no_speakers():
    # a string was split into one turn per character (and speakers="bot" into speakers b, o, t); no speakers
    # raised a bare ZeroDivisionError
    with pytest.raises(InputError, match=r"^texts: expected a list of strings, got a string"):
        Dialogue.from_texts("I have a dog.")
    for bad, shown in [((), r"\(\)"), ([], r"\[\]"), ("bot", "a string")]:
        with pytest.raises(InputError, match=r"^speakers: expected a non-empty list of speaker names, got " + shown):
            Dialogue.from_texts(["a", "b"], speakers=bad)
    assert [t.speaker for t in Dialogue.from_texts(("a", "b", "c"), speakers=["user", "bot"]).turns] == [
        "user",
        "bot",
        "user",
    ]
