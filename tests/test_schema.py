import pytest

from dialcheck import Dialogue, KnowledgeBase, Turn, Verdict
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


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (None, r"KnowledgeBase\.rows: expected a list of rows, got null"),
        ("Valero", r"KnowledgeBase\.rows: expected a list of rows, got a string"),
        ({"poi": "Valero"}, r"KnowledgeBase\.rows: expected a list of rows, got object \(one row: \[\{\.\.\.\}\]\)"),
        (("Valero",), r"KnowledgeBase\.rows\[0\]: expected a mapping of column -> value, got string"),
        (
            ({"poi": "a"}, {"poi": "b", "distance": 5}),
            r"KnowledgeBase\.rows\[1\]\.distance: expected a string, got int",
        ),
        (({"poi": "a", "open": None},), r"KnowledgeBase\.rows\[0\]\.open: expected a string, got null"),
        (({1: "a"},), r"KnowledgeBase\.rows\[0\]: column names are strings, got int 1"),
    ],
)
def test_knowledge_base_refuses_wrong_rows_when_built(rows, message):
    # it was built as given, and failed later: len(KnowledgeBase(None)) with a TypeError, a table of one string
    # read one column per character, a number only when check reached the detector
    with pytest.raises(InputError, match=r"^" + message):
        KnowledgeBase(rows)


def test_knowledge_base_rows_given_as_a_list_or_generator_become_a_tuple():
    rows = [{"poi": "Valero", "distance": "4 miles"}]
    assert KnowledgeBase(rows).rows == tuple(rows)
    assert KnowledgeBase(r for r in rows) == KnowledgeBase(tuple(rows))
    assert KnowledgeBase().columns == () and len(KnowledgeBase([])) == 0
