import json

import pytest

from dialcheck.datasets import data_dir, load_dataset
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


CIRCA_HEADER = "id\tcontext\tquestion-X\tcanquestion-X\tanswer-Y\tjudgements\tgoldstandard1\tgoldstandard2\n"
CIRCA_ROW = (
    "1\tX wants to know about Y's food preferences.\tDo you like fish?\tI like fish.\tI love it.\tYes#Yes\tYes\tYes\n"
)
CITOD_RECORD = {
    "id": 7,
    "dialogue": [{"turn": "driver", "utterance": "When is my meeting?"}, {"turn": "assistant", "utterance": "At 5pm."}],
    "scenario": {"kb": {"items": [{"event": "meeting", "time": "5pm"}]}, "qi": "0", "hi": "0", "kbi": "1"},
}


def _corpus(root, rel, data: bytes):
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data)
    return p


@pytest.mark.parametrize(
    ("name", "rel", "good", "bad", "where"),
    [
        (
            "cdconv.dev.tsv4.v1",
            "cdconv/splits_2class_4class/4class_dev.tsv",
            "你好\t你好\t你几岁\t我20岁\t1\n".encode(),
            b"a\tb\t\xff\td\t1\n",
            "line 2: not UTF-8 text: byte 0xff at column 5",
        ),
        ("circa.v1", "circa/circa-data.tsv", (CIRCA_HEADER + CIRCA_ROW).encode(), b"2\t\xe9\n", "line 3"),
        (
            "citod.calendar.dev.v1",
            "ci_tod/KBRetriever_DC/calendar_dev.json",
            json.dumps([CITOD_RECORD]).encode(),
            None,
            "line 1: not UTF-8 text: byte 0xe9 at column 60",
        ),
    ],
    ids=["cdconv-tsv", "circa", "citod"],
)
def test_text_corpora_name_the_line_of_bytes_that_are_not_utf8_and_read_a_bom(tmp_path, name, rel, good, bad, where):
    """The TSV and JSON corpora were read with Python's decoder: a byte that is not UTF-8 raised a bare
    UnicodeDecodeError (a traceback, no line), and a byte-order mark (a file saved by Excel or Notepad) was
    read into the first cell or refused as invalid JSON, where the JSONL corpora drop it."""
    path = _corpus(tmp_path, rel, b"\xef\xbb\xbf" + good)
    assert len(load_dataset(name, tmp_path)) == 1
    path.write_bytes(good + bad if bad else good.replace(b"When", b"Wh\xe9n", 1))
    with pytest.raises(InputError) as e:
        load_dataset(name, tmp_path)
    assert str(e.value).startswith(f"{path}, {where}")


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ("", ": ", "empty file: expected Circa's header line and rows"),
        (CIRCA_HEADER + CIRCA_ROW.replace("1", "x1", 1), ", line 2: ", "id: expected a whole number, got 'x1'"),
        (CIRCA_HEADER + CIRCA_ROW.replace("\tYes\tYes\n", "\tYse\tYes\n"), ", line 2: ", "goldstandard1: unknown"),
    ],
    ids=["empty", "id", "strict-label"],
)
def test_circa_refuses_an_empty_file_a_bad_id_and_an_unknown_strict_label_with_the_line(tmp_path, text, where, message):
    """An empty circa-data.tsv raised a bare StopIteration, an id that is not a number a bare ValueError from
    int(), and a misspelt strict label was kept as a class of its own."""
    path = _corpus(tmp_path, "circa/circa-data.tsv", text.encode())
    with pytest.raises(InputError) as e:
        load_dataset("circa.v1", tmp_path)
    assert str(e.value).startswith(f"{path}{where}{message}")


def test_circa_skips_blank_lines_as_the_jsonl_corpora_do(tmp_path):
    """A blank line (an editor's trailing newline) stopped the load: 'expected 8 tab-separated columns, got 0'."""
    _corpus(tmp_path, "circa/circa-data.tsv", (CIRCA_HEADER + "\n" + CIRCA_ROW + "\n\n").encode())
    (row,) = load_dataset("circa.v1", tmp_path)
    assert (row.id, row.scenario, row.strict, row.relaxed) == (1, "food", "Yes", "yes")


DECODE_LINE = {
    "turns": [
        {"agent_id": 0, "text": "I have a dog."},
        {"agent_id": 1, "text": "Nice."},
        {"agent_id": 0, "text": "I have no pets."},
    ],
    "is_contradiction": True,
}


@pytest.mark.parametrize(
    ("name", "rel", "key"),
    [
        ("decode.human_bot.v1", "decode/human-bot.jsonl", "aggregated_contradiction_indices"),
        (
            "decode.dev.v1",
            "decode/partial_from_formatted/dev_reconstructed.jsonl",
            "aggregated_contradiction_indices_reconstructed",
        ),
    ],
    ids=["original", "rebuilt-dev"],
)
@pytest.mark.parametrize(
    ("value", "message"),
    [
        (["0"], "[0]: expected a turn index from 0 to 2, got string"),
        ([None], "[0]: expected a turn index from 0 to 2, got null"),
        ([0, True], "[1]: expected a turn index from 0 to 2, got boolean"),
        ([0, 9], "[1]: expected a turn index from 0 to 2, got 9"),
        ([-1], "[0]: expected a turn index from 0 to 2, got -1"),
        (5, ": expected a list of turn indices, got int"),
        ("02", ": expected a list of turn indices, got string"),
    ],
)
def test_decode_evidence_that_is_no_list_of_turn_indices_is_refused_with_the_line(
    tmp_path, name, rel, key, value, message
):
    """DECODE's evidence indices went through int(): a string or null raised a bare ValueError or TypeError (a
    traceback), and an index past the dialogue (9), a negative one, true (1) or the string "02" (read as turns 0
    and 2) became gold evidence that points at no turn or the wrong one."""
    good = dict(DECODE_LINE, **{key: [0, 2]})
    path = _corpus(tmp_path, rel, (json.dumps(good) + "\n" + json.dumps(dict(DECODE_LINE, **{key: value}))).encode())
    with pytest.raises(InputError) as e:
        load_dataset(name, tmp_path)
    assert str(e.value) == f"{path}, line 2: {key}{message}"


def test_decode_evidence_drops_the_last_turn_and_auxiliary_must_be_an_object(tmp_path):
    rel = "decode/human-bot.jsonl"
    line = dict(DECODE_LINE, aggregated_contradiction_indices=[2, 0], auxiliary={"source": "x"})
    _corpus(tmp_path, rel, json.dumps(line).encode())
    (ex,) = load_dataset("decode.human_bot.v1", tmp_path)
    assert ex.evidence == (0,) and ex.dialogue.meta["source"] == "x"
    path = _corpus(tmp_path, rel, json.dumps(dict(line, auxiliary=["x"])).encode())
    with pytest.raises(InputError, match=r"line 1: auxiliary: expected an object, got list$"):
        load_dataset("decode.human_bot.v1", tmp_path)
    turns = [{"agent_id": [0], "text": "Hi."}]
    path.write_text(json.dumps(dict(line, turns=turns, aggregated_contradiction_indices=[])))
    with pytest.raises(InputError, match=r"line 1: turns\[0\]: expected an object with 'agent_id' \(a number"):
        load_dataset("decode.human_bot.v1", tmp_path)


def test_a_gzipped_corpus_file_is_named_where_the_file_is_missing(tmp_path, capsys):
    """A gzipped copy of the data directory (human-bot.jsonl.gz) was reported as a missing file and nothing
    more, although read_jsonl decompresses .gz input: the message now says the copy is there and what to do."""
    import gzip

    from dialcheck.cli import main

    plain = tmp_path / "decode" / "human-bot.jsonl"
    plain.parent.mkdir()
    with gzip.open(plain.with_name("human-bot.jsonl.gz"), "wt") as f:
        f.write(json.dumps(DECODE_LINE) + "\n")
    note = "human-bot.jsonl.gz is there: decompress it (gunzip -k), corpus files are read as released"
    with pytest.raises(InputError) as e:
        load_dataset("decode.human_bot.v1", tmp_path)
    assert str(e.value) == f"{plain}: corpus file is missing; {note} (see `dialcheck data verify`)"
    assert main(["data", "verify", "--data-dir", str(tmp_path)]) == 1
    assert f"BAD decode.human_bot.v1: missing decode/human-bot.jsonl; {note}\n" in capsys.readouterr().out


def test_verify_says_where_a_file_that_differs_breaks_or_how_many_records_it_holds(tmp_path, capsys):
    """A damaged corpus file was reported only as 'checksum differs' and never read, so verify did not say that
    the copy was truncated (how many records) or on which line it breaks, which the loaders know."""
    from dialcheck.cli import main

    rel = "decode/rct.jsonl"
    negative = dict(DECODE_LINE, is_contradiction=False)
    path = _corpus(tmp_path, rel, (json.dumps(negative) + "\n" + json.dumps(negative)[:40]).encode())
    assert main(["data", "verify", "--data-dir", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert f"BAD decode.rct.v1: checksum differs for {rel}; {path}, line 2: invalid JSON (" in out
    path.write_text(json.dumps(negative) + "\n")
    assert main(["data", "verify", "--data-dir", str(tmp_path)]) == 1
    assert f"BAD decode.rct.v1: checksum differs for {rel}; 1 records, expected 2,011\n" in capsys.readouterr().out


def test_data_dir_refuses_an_empty_path_and_needs_no_deep_install(tmp_path, monkeypatch):
    """--data-dir "" (an unset shell variable) read the current directory as the corpus folder, and a package
    installed less than four folders deep (/app/dialcheck/datasets/base.py) made the default search raise a bare
    IndexError instead of saying that no data directory was found."""
    from dialcheck.datasets import base

    with pytest.raises(InputError, match=r"^data directory: the path is empty$"):
        data_dir("")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(base.ENV_VAR, raising=False)
    monkeypatch.setattr(base, "__file__", "/app/dialcheck/datasets/base.py")
    with pytest.raises(InputError, match=r"^no data directory found: pass --data-dir"):
        data_dir()
    (tmp_path / "shared" / "data").mkdir(parents=True)
    assert data_dir() == (tmp_path / "shared" / "data").resolve()


def test_a_corpus_copy_with_fewer_records_than_the_release_is_warned_about(tmp_path, caplog):
    """A corpus file cut at the end of a line (an interrupted copy) loaded without a word: training and
    evaluation then ran on part of the corpus, and only `dialcheck data verify` could tell."""
    negative = dict(DECODE_LINE, is_contradiction=False)
    _corpus(tmp_path, "decode/rct.jsonl", (json.dumps(negative) + "\n").encode())
    with caplog.at_level("WARNING", logger="dialcheck.datasets.base"):
        assert len(load_dataset("decode.rct.v1", tmp_path)) == 1
    assert caplog.messages == [
        f"decode.rct.v1: 1 records read, the release has 2,011: decode/rct.jsonl under {tmp_path} may be truncated "
        "or edited (`dialcheck data verify` checks the copies)"
    ]


def test_the_shared_corpora_load_without_a_count_warning(data_root, caplog):
    with caplog.at_level("WARNING", logger="dialcheck.datasets.base"):
        for name in ("decode.rct.v1", "circa.v1", "citod.weather.dev.v1", "cdconv.dev.tsv2.v1", "nli.anli.v1"):
            load_dataset(name, data_root)
    assert caplog.messages == []


def test_verify_reports_a_folder_in_a_corpus_file_s_place_and_goes_on(tmp_path, capsys):
    """A folder where a corpus file belongs made sha256_file raise IsADirectoryError out of the loop: verify
    stopped with one error line (exit 2) instead of reporting that dataset and checking the others."""
    from dialcheck.cli import main

    (tmp_path / "decode" / "human-bot.jsonl").mkdir(parents=True)
    assert main(["data", "verify", "--data-dir", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "BAD decode.human_bot.v1: cannot read decode/human-bot.jsonl (Is a directory)\n" in out
    assert "BAD decode.rct.v1: missing decode/rct.jsonl\n" in out and "BAD ocnli.dev.v1: missing" in out
