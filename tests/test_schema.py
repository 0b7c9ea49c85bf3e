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


# -- Verdict.from_dict: what to_dict (and so `dialcheck score`, `check --json`, /check) wrote, read back --------
def _through_json(v: Verdict) -> dict:
    import json

    return json.loads(json.dumps(v.to_dict(), ensure_ascii=False))


ROUND_TRIP = [
    # DECODE: evidence and pair scores keyed by turn (strings in JSON), an agreement read as a statement
    Verdict(True, 0.912346, (0, 2), None, {0: 0.9, 2: 0.7, 4: 0.01}, read_as={3: "I have a dog."}),
    Verdict(False, 0.0, (), None, {}),
    # CDConv: a category and the score of each contradiction category
    Verdict(
        True, 0.5, (1,), "history", {}, label_scores={"intra_sentence": 0.1, "role_confusion": 0.05, "history": 0.4}
    ),
    # CI-ToD: multi-label labels with their scores, knowledge rows and their attribution scores
    Verdict(
        True,
        0.8,
        (),
        None,
        {},
        labels={"QI": False, "HI": False, "KBI": True},
        label_scores={"QI": 0.1, "HI": 0.2, "KBI": 0.8},
        knowledge_evidence=(2,),
        knowledge_scores={0: 0.1, 2: 0.9, 11: 0.3},
    ),
    Verdict(False, 0.1, (), None, {}, labels={"QI": False}, label_scores={"QI": 0.1}, knowledge_evidence=()),
]


@pytest.mark.parametrize("v", ROUND_TRIP)
def test_from_dict_round_trips_to_dict_through_json(v):
    back = Verdict.from_dict(_through_json(v))
    assert back == v
    assert back.to_dict() == v.to_dict()
    assert all(isinstance(k, int) for k in back.pair_scores)


def test_from_dict_ignores_the_fields_written_beside_a_verdict():
    v = ROUND_TRIP[0]
    beside = ({"line": 3, "id": "a", "turn": 4}, {"index": 1, "text": "hi"}, {"split": "test", "gold": True})
    for extra in (*beside, {"gold_evidence": [0], "gold_category": "persona"}):
        assert Verdict.from_dict({**extra, **_through_json(v)}) == v


@pytest.mark.parametrize(
    "d, message",
    [
        ({"line": 3, "turn": 1, "error": "turns[0].text: expected a string"}, r"error record \(line 3\).*turns\[0\]"),
        ({"score": 0.5}, r"Verdict\.contradiction: missing"),
        ({"contradiction": True}, r"Verdict\.score: missing"),
        ({"contradiction": "yes", "score": 0.5}, r"Verdict\.contradiction: expected true or false, got string"),
        ({"contradiction": True, "score": 1.5}, r"Verdict\.score: expected a number in \[0, 1\], got 1\.5"),
        ({"contradiction": True, "score": True}, r"Verdict\.score: expected a number in \[0, 1\], got boolean"),
        ({"contradiction": True, "score": 0.5, "evidence": "0"}, r"Verdict\.evidence: expected a list"),
        ({"contradiction": True, "score": 0.5, "evidence": [-1]}, r"Verdict\.evidence\[0\]: expected a 0-based"),
        ({"contradiction": True, "score": 0.5, "pair_scores": {"x": 0.1}}, r"Verdict\.pair_scores key: .*'x'"),
        ({"contradiction": True, "score": 0.5, "pair_scores": {"0": None}}, r"Verdict\.pair_scores\.0: .*null"),
        ({"contradiction": True, "score": 0.5, "category": 3}, r"Verdict\.category: expected a string or null"),
        ({"contradiction": True, "score": 0.5, "labels": {"QI": 1}}, r"Verdict\.labels\.QI: expected true or false"),
        ({"contradiction": True, "score": 0.5, "label_scores": {"QI": "x"}}, r"Verdict\.label_scores\.QI"),
        ({"contradiction": True, "score": 0.5, "knowledge_scores": [0.1]}, r"Verdict\.knowledge_scores: expected"),
        ({"contradiction": True, "score": 0.5, "read_as": {"1": 2}}, r"Verdict\.read_as\.1: expected a string"),
        ([], r"Verdict: expected a mapping"),
    ],
)
def test_from_dict_refuses_bad_values_naming_the_field(d, message):
    with pytest.raises(InputError, match=message):
        Verdict.from_dict(d)


@pytest.mark.parametrize(
    "extra, message",
    [
        # its evidence was read as none, with no word
        ({"evidnce": [0]}, r'^Verdict\.evidnce: unknown field \(did you mean "evidence"\?\); a verdict\'s fields are '),
        ({"pair_score": {"0": 0.9}}, r'^Verdict\.pair_score: unknown field \(did you mean "pair_scores"\?\)'),
        ({"gold_evidnce": [0]}, r'^Verdict\.gold_evidnce: unknown field \(did you mean "gold_evidence"\?\)'),
        ({"verdict": "x"}, r"^Verdict\.verdict: unknown field; a verdict's fields"),  # nothing close: no guess
        ({"readas": {}, "zzz": 1}, r'^Verdict: unknown fields readas \(did you mean "read_as"\?\), zzz; '),
    ],
)
def test_from_dict_refuses_an_unknown_field_naming_it_and_the_known_ones(extra, message):
    with pytest.raises(InputError, match=message) as e:
        Verdict.from_dict({**_through_json(ROUND_TRIP[0]), **extra})
    assert "contradiction, score, evidence, category, pair_scores, labels, label_scores" in e.value.message
    assert "ignored: line, id, turn, index, text, split, gold, gold_evidence, gold_category" in e.value.message


def test_from_dict_names_a_misspelt_required_field_rather_than_only_its_absence():
    with pytest.raises(InputError, match=r'^Verdict\.contradicton: unknown field \(did you mean "contradiction"\?\)'):
        Verdict.from_dict({"contradicton": True, "score": 0.5})


def test_from_dict_refuses_a_whole_http_response_saying_what_to_read():
    v = _through_json(ROUND_TRIP[0])
    for key in ("verdicts", "ranked"):
        with pytest.raises(
            InputError, match=f'a response of the HTTP API, not a verdict: read each item of its "{key}"'
        ):
            Verdict.from_dict({key: [v], "warnings": ["..."]})


def _written_lines(capsys, tmp_path, tiny_detector_dir):
    """The lines `dialcheck score --every-turn` and `check --json --speaker` write, read back as dicts."""
    import json

    from helpers_cli import run_cli

    log = tmp_path / "log.jsonl"
    log.write_text(
        json.dumps({"id": "a", "turns": ["I have a cat.", "Nice.", "I never had pets."], "lang": "en"}) + "\n"
    )
    out = tmp_path / "out.jsonl"
    model = ("--model", str(tiny_detector_dir))
    assert run_cli(capsys, "score", str(log), str(out), *model, "--no-progress", "--every-turn")[0] == 0
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    code, printed, _ = run_cli(capsys, "check", str(log), "--json", "--speaker", "B", *model)
    assert code == 0
    return rows + [json.loads(x) for x in printed.splitlines()]


def test_from_dict_reads_the_lines_score_and_check_json_write(capsys, tmp_path, tiny_detector_dir):
    """Every field those writers put beside a verdict is accepted (none copies the input record's own, such as
    "lang" here), so refusing unknown fields refuses none of their lines."""
    rows = _written_lines(capsys, tmp_path, tiny_detector_dir)
    assert {"line", "id", "turn"} <= set().union(*rows) and not any("lang" in r for r in rows)
    for r in rows:
        v = Verdict.from_dict(r)
        assert v.to_dict() == {k: x for k, x in r.items() if k not in ("line", "id", "turn")}


@pytest.mark.parametrize("name", ["decode", "cdconv", "citod"])
def test_from_dict_reads_the_predictions_evaluate_writes(tmp_path, name):
    import importlib
    import json

    from dialcheck.schema import Example

    module = importlib.import_module(f"dialcheck.evaluation.{name}")
    cls = next(c for k, c in vars(module).items() if k.endswith("Evaluator") and c.__module__ == module.__name__)
    ev = cls()
    d = Dialogue.from_texts(["I have a cat.", "Nice.", "I never had pets."])
    ex = Example(d, True, (0,), "history", "x", {"QI": True, "HI": False, "KBI": False})
    v = ROUND_TRIP[0]
    ev.predictions = {"test": [(ex, v)]}
    ev.write_predictions(tmp_path / "p.jsonl")
    (row,) = (json.loads(x) for x in (tmp_path / "p.jsonl").read_text().splitlines())
    assert Verdict.from_dict(row) == v


@pytest.mark.slow
@pytest.mark.parametrize(
    "language, texts, knowledge",
    [
        ("en", ["I have two dogs.", "Nice!", "I have never had a pet."], None),
        ("zh", ["我有两只狗。", "真好！", "我从来没养过宠物。"], None),
        (
            "tod",
            ["Where is the nearest gas station?", "Valero is 5 miles away."],
            [{"poi": "Valero", "distance": "2 miles"}],
        ),
    ],
)
def test_from_dict_round_trips_the_shipped_defaults_verdicts(language, texts, knowledge):
    from dialcheck import api

    kb = None if knowledge is None else KnowledgeBase(tuple(knowledge))
    d = Dialogue.from_texts(texts, speakers=("user", "system"), knowledge=kb)
    v = api.load(language=language).predict([d])[0]
    assert Verdict.from_dict(_through_json(v)).to_dict() == v.to_dict()


def test_from_dict_reads_a_batch_scorer_row_when_told_to_ignore_its_other_columns(tiny_detector_dir):
    # a BatchScorer row (the table's own columns, "error", labels as the list of those that fired) was refused
    # ("Verdict.turns: unknown field") and its labels list could not be read ("expected a mapping") at all
    import json

    import numpy as np

    from dialcheck.batch import BatchScorer
    from dialcheck.detectors import load_detector
    from dialcheck.io import parse_dialogue

    turns = ["I have a dog.", "Nice!", "I have never had a pet."]
    out = BatchScorer(model=str(tiny_detector_dir))({"id": ["a", "b"], "turns": [turns, []]})
    rows = json.loads(json.dumps([{k: v[i] for k, v in out.items()} for i in range(2)]))  # as write_json wrote them
    (want,) = load_detector(tiny_detector_dir).predict([parse_dialogue(turns)])
    got = Verdict.from_dict(rows[0], extra="ignore")
    assert (got.contradiction, got.evidence, got.category) == (want.contradiction, want.evidence, want.category)
    assert got.score == pytest.approx(want.score, abs=1e-6) and got.labels is None  # [] fired: no labels
    with pytest.raises(InputError, match=r'^Verdict: unknown fields turns, error; .*from_dict\(row, extra="ignore"\)$'):
        Verdict.from_dict(rows[0])  # by default a row's other columns are refused, saying how to read it
    with pytest.raises(InputError, match=r"^Verdict: an error record \(id 'b'\), not a verdict: .*empty"):
        Verdict.from_dict(rows[1], extra="ignore")  # a bad row: no verdict to read
    row = {**rows[0], "labels": ["KBI"], "evidence": np.array([0]), "contradiction": np.bool_(True)}  # numpy cells
    got = Verdict.from_dict(row, extra="ignore")
    assert got.labels == {"KBI": True} and got.evidence == (0,) and got.contradiction is True
    with pytest.raises(InputError, match=r"^Verdict\.labels\[0\]: label names are strings, got int"):
        Verdict.from_dict({**rows[0], "labels": [3]}, extra="ignore")
    with pytest.raises(ValueError, match="extra"):
        Verdict.from_dict(rows[0], extra="keep")
