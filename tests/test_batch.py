import json
from pathlib import Path

import numpy as np
import pytest

from dialcheck.batch import VERDICT_COLUMNS, BatchScorer, score_dataset
from dialcheck.detectors import load_detector
from dialcheck.errors import InputError
from dialcheck.io import parse_dialogue
from helpers_chat import CHAT, TOOL_CALL

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "dialogues.json"
ROWS = [
    {"id": "a", "turns": ["I have a dog.", "Nice!", "I have never had a pet."]},
    {"id": "b", "turns": []},  # bad: empty
    {
        "id": "c",
        "turns": [{"speaker": "bot", "text": "I live in Rome."}, {"speaker": "bot", "text": "I live in Oslo."}],
    },
    {"id": "d", "turns": "not a list"},  # bad: wrong type
]


def _expected(model_dir):
    det = load_detector(model_dir)
    good = [ROWS[0], ROWS[2]]
    return det.predict([parse_dialogue(r) for r in good])


def test_a_dataframe_batch_keeps_every_row_in_place_and_marks_the_bad_ones(tiny_detector_dir):
    pd = pytest.importorskip("pandas")
    out = BatchScorer(model=str(tiny_detector_dir))(pd.DataFrame(ROWS))
    assert list(out["id"]) == ["a", "b", "c", "d"] and set(VERDICT_COLUMNS) <= set(out.columns)
    errors = list(out["error"])
    assert errors[0] is None and errors[2] is None  # pandas 3 stored them as NaN in a string column
    assert "empty" in errors[1] and "turns: expected a list" in errors[3]
    v0, v2 = _expected(tiny_detector_dir)
    assert out["score"][0] == pytest.approx(v0.score, abs=1e-6) and out["score"][2] == pytest.approx(v2.score, abs=1e-6)
    assert out["contradiction"][0] == v0.contradiction and list(out["evidence"][2]) == list(v2.evidence)
    assert pd.isna(out["contradiction"][1]) and pd.isna(out["score"][1]) and list(out["evidence"][1]) == []


def test_a_dataframe_batch_keeps_none_for_good_rows_whatever_the_pandas_version(tiny_detector_dir):
    # pandas 3 infers a string column for [None, "why"] and a float one for [3, None]: a good row's error came out
    # NaN (so the documented ds.filter(lambda r: r["error"] is None) kept no row) and turn indices 3.0
    pd = pytest.importorskip("pandas")
    out = BatchScorer(model=str(tiny_detector_dir))(pd.DataFrame(ROWS))
    records = out.to_dict("records")
    assert [r["error"] is None for r in records] == [True, False, True, False]
    assert all(isinstance(r["error"], str) and r["error"] for r in records if r["id"] in ("b", "d"))
    assert [r["id"] for r in records if r["error"] is None] == ["a", "c"]
    assert records[0]["category"] is None and records[1]["contradiction"] is None
    assert out["score"].dtype.kind == "f" and pd.isna(records[1]["score"])  # a number column: NaN where not scored
    chat = CHAT[:4]
    scorer = BatchScorer(model=str(tiny_detector_dir), column="messages", speaker="assistant")
    turned = scorer(pd.DataFrame({"messages": [CHAT, chat[:1]]}))
    assert list(turned["turn"]) == [3, None] and type(turned["turn"][0]) is int
    assert turned["error"][0] is None and "speaker: no turn with text by assistant" in turned["error"][1]


def test_numpy_columns_as_engines_hand_them_out(tiny_detector_dir):
    # Ray's numpy batches: object arrays whose cells are arrays of strings or of {"speaker", "text"} dicts
    turns = np.empty(2, dtype=object)
    turns[0] = np.array(ROWS[0]["turns"], dtype=object)
    turns[1] = np.array(ROWS[2]["turns"], dtype=object)
    batch = {"id": np.array(["a", "c"]), "turns": turns, "knowledge": np.array([None, np.nan], dtype=object)}
    out = BatchScorer(model=str(tiny_detector_dir))(batch)
    v0, v2 = _expected(tiny_detector_dir)
    assert out["error"] == [None, None] and out["id"] == ["a", "c"]
    assert out["score"] == pytest.approx([v0.score, v2.score], abs=1e-6)
    assert out["evidence"] == [list(v0.evidence), list(v2.evidence)]


def test_another_turns_column_and_bad_batches(tiny_detector_dir):
    scorer = BatchScorer(model=str(tiny_detector_dir), column="messages")
    out = scorer({"messages": [ROWS[0]["turns"]], "turns": [None]})
    assert out["error"] == [None] and out["score"] == pytest.approx([_expected(tiny_detector_dir)[0].score], abs=1e-6)
    assert scorer({"turns": [["a", "b"]]})["error"] == [
        "messages: missing (the row has: turns; column= names the column of turns)"
    ]
    with pytest.raises(ValueError, match="unequal length"):
        scorer({"messages": [["a"], ["b"]], "id": ["x"]})
    with pytest.raises(TypeError, match="DataFrame or a mapping"):
        scorer([ROWS[0]])


def test_a_missing_model_fails_when_the_worker_starts(tmp_path):
    from dialcheck.errors import DialcheckError

    with pytest.raises(DialcheckError):
        BatchScorer(model=str(tmp_path / "nowhere"))


@pytest.mark.slow
def test_score_dataset_on_ray_data_with_the_shipped_defaults():
    """Ray workers load the shipped models and route each row as dialcheck.predict does (a knowledge base
    goes to the task-oriented default). Slow lane: starting Ray and its workers takes about a minute."""
    import dialcheck

    ray = pytest.importorskip("ray")
    pytest.importorskip("ray.data")
    kb_row = {**json.loads(EXAMPLES.read_text())[-1], "id": "e"}  # the demo's KBI dialogue ("6 miles", KB: 2)
    rows = [ROWS[0], ROWS[1], kb_row]
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    try:
        ds = ray.data.from_items(rows)
        out = sorted(score_dataset(ds, batch_size=2, threads=1).take_all(), key=lambda r: r["id"])
    finally:
        ray.shutdown()
    expected = dialcheck.predict([parse_dialogue(rows[0]), parse_dialogue(kb_row)])
    assert [r["id"] for r in out] == ["a", "b", "e"]
    assert out[0]["contradiction"] is True and list(out[0]["evidence"]) == [0]
    assert out[0]["score"] == pytest.approx(expected[0].score, abs=1e-5)
    assert out[1]["error"].endswith("is empty (at least one turn is needed)") and out[1]["score"] is None
    assert list(out[2]["labels"]) == ["KBI"] and expected[1].labels["KBI"]
    assert out[2]["score"] == pytest.approx(expected[1].score, abs=1e-5)


def test_onnx_workers_score_as_torch_does_and_switch_the_detector_once(tiny_detector_dir, tmp_path, monkeypatch):
    pytest.importorskip("onnxruntime")
    from dialcheck import api

    monkeypatch.setenv("DIALCHECK_CACHE", str(tmp_path))
    scorer = BatchScorer(model=str(tiny_detector_dir), onnx=True)
    det = api.load(tiny_detector_dir)
    assert det.config.options.get("onnx") is True  # switched when the worker starts
    runner = det.classifier.runner
    out = scorer({"id": [r["id"] for r in ROWS], "turns": [r["turns"] for r in ROWS]})
    v0, v2 = _expected(tiny_detector_dir)
    assert out["score"][0] == pytest.approx(v0.score, abs=1e-5) and out["score"][2] == pytest.approx(v2.score, abs=1e-5)
    assert det.classifier.runner is runner  # batches reuse the session, no second export


def test_speaker_checks_each_rows_last_turn_with_text_by_that_speaker(tiny_detector_dir):
    chat = CHAT[:4]
    rows = [CHAT, [*chat, TOOL_CALL], chat[:1]]
    out = BatchScorer(model=str(tiny_detector_dir), column="messages", speaker="assistant")({"messages": rows})
    assert out["turn"] == [3, 3, None]
    assert out["error"][:2] == [None, None]
    assert out["error"][2] == "speaker: no turn with text by assistant (its speakers: user)"
    want = load_detector(tiny_detector_dir).predict([parse_dialogue({"messages": chat})])[0]
    assert out["score"][:2] == pytest.approx([want.score, want.score], abs=1e-6)
    plain = BatchScorer(model=str(tiny_detector_dir), column="messages")({"messages": rows})
    assert "turn" not in plain and "the last turn is empty" in plain["error"][1]  # without speaker: as before


def test_chat_completion_rows_are_read_as_dialcheck_score_reads_them(tiny_detector_dir):
    """A row is a record as ``dialcheck score`` reads it, ``{"messages": [...]}`` included: with the default column
    such rows (a Ray dataset of chat-completion logs) all came back 'turns: missing' unless column="messages"."""
    chat = [
        {"role": "user", "content": "I have two dogs."},
        {"role": "assistant", "content": "Nice."},
        {"role": "user", "content": "I never had a dog."},
    ]
    pd = pytest.importorskip("pandas")
    want = load_detector(tiny_detector_dir).predict([parse_dialogue({"messages": chat})])[0]
    frame = pd.DataFrame({"turns": [None, ["x"]], "messages": [chat, None], "id": ["a", "b"]})
    out = BatchScorer(model=str(tiny_detector_dir))(frame)
    assert list(out["error"]) == [None, None]
    assert out["score"][0] == pytest.approx(want.score, abs=1e-6)
    out = BatchScorer(model=str(tiny_detector_dir))({"id": ["c"]})
    assert out["error"] == ["turns: missing (the row has: id; column= names the column of turns)"]


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"column": None}, "column: expected the name of the column of turns, got null"),
        ({"column": ""}, "column: expected the name of the column of turns, got an empty string"),
        ({"threads": "2"}, "threads: expected a whole number of at least 0 (0 or None: torch's default), got string"),
        ({"threads": -1}, "threads: expected a whole number of at least 0 (0 or None: torch's default), got -1"),
    ],
)
def test_bad_scorer_arguments_are_named(tiny_detector_dir, kw, message):
    with pytest.raises(InputError) as e:
        BatchScorer(model=str(tiny_detector_dir), **kw)
    assert str(e.value) == message


# a row's own "speaker" and a "tau": as dialcheck score reads the same record written as a JSONL line
OWN_SPEAKER_ROWS = [
    {"id": "own", "messages": CHAT, "speaker": "assistant"},  # its assistant's last reply, over the last turn
    {"id": "last", "messages": CHAT},  # no speaker of its own: its last turn
    {"id": "tau", "messages": CHAT, "tau": 0.3},  # refused: a row cannot set the model's threshold
    {"id": "list", "messages": CHAT, "speaker": ["bot", "assistant"]},
    {"id": "none", "messages": CHAT, "speaker": "bot"},  # no turn by bot
]


def _own_speaker_expectations(model_dir):
    det = load_detector(model_dir)
    return det.predict([parse_dialogue({"messages": CHAT[:4]}), parse_dialogue({"messages": CHAT})])


def test_a_rows_own_speaker_and_tau_in_a_dataframe(tiny_detector_dir):
    """A ``speaker`` column was ignored (every row's last turn was checked, the user's) and a ``tau`` column was
    scored at the model's threshold without a word: a row is now read as ``dialcheck score`` reads it."""
    pd = pytest.importorskip("pandas")
    out = BatchScorer(model=str(tiny_detector_dir))(pd.DataFrame(OWN_SPEAKER_ROWS))
    records = out.to_dict("records")
    assert [r["id"] for r in records] == ["own", "last", "tau", "list", "none"]
    assert [r["turn"] for r in records] == [3, 4, None, 3, None]
    assert [r["error"] is None for r in records] == [True, True, False, True, False]
    assert records[2]["error"].startswith("tau: not a dialogue field; the thresholds are the model's")
    assert records[4]["error"] == "speaker: no turn with text by bot (its speakers: assistant, user)"
    assistant, last = _own_speaker_expectations(tiny_detector_dir)
    assert [records[i]["score"] for i in (0, 1, 3)] == pytest.approx(
        [assistant.score, last.score, assistant.score], abs=1e-6
    )


def test_a_rows_own_speaker_wins_over_the_scorers_and_thresholds_cells_fail_only_their_row(tiny_detector_dir):
    rows = [
        {"messages": CHAT, "speaker": "user", "eta_e": None},  # an empty cell is no threshold
        {"messages": CHAT, "speaker": None, "eta_e": 0.2},
        {"messages": CHAT, "speaker": np.nan, "eta_e": np.nan},  # pandas' empty cell: speaker= applies
    ]
    batch = {k: [r[k] for r in rows] for k in ("messages", "speaker", "eta_e")}
    batch["threshold"] = [None, None, None]
    out = BatchScorer(model=str(tiny_detector_dir), speaker="assistant")(batch)
    assert out["turn"] == [4, None, 3]
    assert out["error"][0] is None and out["error"][2] is None
    assert out["error"][1].startswith("eta_e: not a dialogue field")
    assistant, last = _own_speaker_expectations(tiny_detector_dir)
    assert [out["score"][0], out["score"][2]] == pytest.approx([last.score, assistant.score], abs=1e-6)
    bad = BatchScorer(model=str(tiny_detector_dir))({"messages": [CHAT, CHAT], "speaker": ["", 3.5]})
    assert bad["error"] == [
        "speaker: empty (name the speaker whose turn is checked)",
        "speaker: expected a speaker name or a list of names, got float",  # 3 would name the speaker "3"
    ]


def test_batch_rows_agree_with_dialcheck_score_on_the_same_jsonl_lines(tiny_detector_dir, tmp_path, capsys):
    from helpers_cli import run_cli

    src = tmp_path / "rows.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in OWN_SPEAKER_ROWS), encoding="utf-8")
    out_path = tmp_path / "scored.jsonl"
    code, _, err = run_cli(capsys, "score", str(src), str(out_path), "--model", str(tiny_detector_dir), "--no-progress")
    assert code == 0, err
    scored = {r["id"]: r for r in map(json.loads, out_path.read_text(encoding="utf-8").splitlines())}
    batch = BatchScorer(model=str(tiny_detector_dir))(
        {k: [r.get(k) for r in OWN_SPEAKER_ROWS] for k in ("id", "messages", "speaker", "tau")}
    )
    for i, row in enumerate(OWN_SPEAKER_ROWS):
        if row["id"] in scored:
            assert batch["error"][i] is None and batch["turn"][i] == scored[row["id"]].get("turn", 4)
            assert batch["score"][i] == pytest.approx(scored[row["id"]]["score"], abs=1e-6)
        else:
            assert batch["error"][i] is not None
    assert "tau: not a dialogue field" in err and "tau: not a dialogue field" in batch["error"][2]


def test_a_thresholds_cell_is_named_before_a_missing_turns_column_and_says_compare_score(tiny_detector_dir):
    # dialcheck score names a line's tau before anything else; so does a row, whatever else is wrong with it
    out = BatchScorer(model=str(tiny_detector_dir))({"text": ["hi", "hi"], "messages": [None, CHAT], "tau": [0.3, 0.3]})
    assert out["error"] == 2 * [
        "tau: not a dialogue field; the thresholds are the model's (a detector folder's `tau` and `eta_e`), or "
        "compare each verdict's `score` with your own"
    ]
