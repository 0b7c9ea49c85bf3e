import pytest

from dialcheck.datasets import load_dataset
from dialcheck.datasets.base import require
from dialcheck.datasets.nli import load_anli
from dialcheck.errors import InputError


def test_decode_splits_have_the_manifest_counts(data_root):
    counts = {
        "decode.human_bot.v1": (764, 382),
        "decode.rct.v1": (2011, 0),
        "decode.dev.v1": (4026, 2013),
        "decode.train_pairs.v1": (29442, 14721),
    }
    for name, (n, pos) in counts.items():
        data = load_dataset(name, data_root)
        assert len(data) == n
        assert sum(bool(x.label) for x in data) == pos


def test_dev_evidence_is_same_speaker_and_excludes_the_last_turn(data_root):
    dev = load_dataset("decode.dev.v1", data_root)
    with_ev = [e for e in dev if e.label and e.evidence]
    assert len(with_ev) == 2005
    assert sum(e.evidence is None for e in dev) == 8
    for e in with_ev:
        last = len(e.dialogue.turns) - 1
        assert last not in e.evidence
        assert all(e.dialogue.turns[i].speaker == e.dialogue.last.speaker for i in e.evidence)


def test_raw_human_bot_scores_every_bot_turn(data_root):
    raw = load_dataset("decode.human_bot_raw.v1", data_root)
    assert len(raw) == 3204 and sum(e.label for e in raw) == 382
    assert all(e.dialogue.last.speaker == "1" for e in raw)


def test_a2t_built_from_dev(data_root):
    a2t = load_dataset("decode.a2t.v1", data_root)
    assert len(a2t) == 2005 and all(e.label for e in a2t)


@pytest.mark.parametrize(
    ("obj", "typ", "message"),
    [
        ({"label": 3}, str, "label: expected string, got int"),
        ({"label": None}, str, "label: expected string, got null"),
        ({"label": {"c": 1}}, str, "label: expected string, got object"),
        ({"label": True}, int, "label: expected int, got boolean"),  # true is not the int 1
        ({"label": [1]}, (int, str), "label: expected int or string, got list"),
    ],
)
def test_require_names_json_types_with_file_and_line(tmp_path, obj, typ, message):
    with pytest.raises(InputError) as e:
        require(obj, "label", typ, tmp_path / "c.jsonl", 4)
    assert str(e.value) == f"{tmp_path / 'c.jsonl'}, line 4: {message}"


def test_a_corpus_line_of_the_wrong_type_is_named_with_json_types(tmp_path):
    p = tmp_path / "anli" / "R1" / "dev.jsonl"  # the first file load_anli reads
    p.parent.mkdir(parents=True)
    p.write_text(
        '{"label": "c", "context": "a", "hypothesis": "b"}\n{"label": "e", "context": null, "hypothesis": "b"}\n'
    )
    with pytest.raises(InputError, match=r"dev.jsonl, line 2: context: expected string, got null$"):
        load_anli(tmp_path)
    assert require({"label": False}, "label", bool, p, 1) is False and require({"n": 2}, "n", (int, str), p, 1) == 2
