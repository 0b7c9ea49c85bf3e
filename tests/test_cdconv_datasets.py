"""CDConv adapter: records, located errors, official splits and the context-disjoint split builder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialcheck.datasets import get_dataset_info, load_dataset
from dialcheck.datasets.cdconv import (
    context_disjoint_split,
    context_key,
    make_example,
    read_cdconv_jsonl,
    read_cdconv_tsv,
    split_report,
)
from dialcheck.errors import InputError

REC = {"u1": "你喜欢狗吗？", "b1": "喜欢，我养了两条狗。", "u2": "你养宠物吗？", "b2": "我从来没养过宠物。"}


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_record_maps_turns_category_and_metadata(tmp_path):
    rows = [
        {**REC, "label": 3, "persona": 3, "method": "设问-bot", "model": "eva", "file": "1st"},
        {**REC, "label": 0, "method": "短句", "model": "plato"},
        {**REC, "label": 1},
        {**REC, "label": 2},
    ]
    exs = read_cdconv_jsonl(_write(tmp_path / "x.jsonl", rows), "t")
    assert [e.category for e in exs] == ["history", None, "intra_sentence", "role_confusion"]
    assert [e.label for e in exs] == [True, False, True, True]
    d = exs[0].dialogue
    assert [(t.speaker, t.text) for t in d.turns] == [
        ("user", REC["u1"]),
        ("bot", REC["b1"]),
        ("user", REC["u2"]),
        ("bot", REC["b2"]),
    ]
    assert d.meta["trigger"] == "inquiring_bot" and d.meta["method"] == "设问-bot"
    assert d.meta["chatbot"] == "eva" and d.meta["persona"] == "experience" and d.meta["cdconv_label"] == 3
    assert exs[1].dialogue.meta["trigger"] == "short_utterance" and "persona" not in exs[1].dialogue.meta
    assert exs[0].id == "cdconv.t:1"


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({k: v for k, v in REC.items() if k != "u1"} | {"label": 0}, "u1: missing"),
        (REC | {"b2": "  ", "label": 0}, "b2: empty utterance"),
        (REC | {"b1": 5, "label": 0}, "b1: expected a string, got int"),
        (REC | {"u2": None, "label": 0}, "u2: expected a string, got null"),
        (REC | {"b1": {"text": "x"}, "label": 0}, "b1: expected a string, got object"),
        (REC | {"label": 0, "method": {"x": 1}}, "method: expected a string, got object"),
        (REC | {"label": 0, "method": True}, "method: expected a string, got boolean"),
        (REC | {"label": 4}, "label: expected 0, 1, 2 or 3, got 4"),
        (REC | {"label": True}, "label: expected 0, 1, 2 or 3, got boolean"),  # JSON's names, not Python's True
        (REC | {"label": None}, "label: expected 0, 1, 2 or 3, got null"),
        (dict(REC), "label: missing"),
        (REC | {"label": 3, "persona": 9}, "persona: expected 0-3"),
        # a bare TypeError (unhashable list), and true / 1.0 read as persona 1 ("attribute")
        (REC | {"label": 3, "persona": [1]}, "persona: expected 0-3 or absent, got list"),
        (REC | {"label": 3, "persona": True}, "persona: expected 0-3 or absent, got boolean"),
        (REC | {"label": 3, "persona": 1.0}, "persona: expected 0-3 or absent, got 1.0"),
        (REC | {"label": "²"}, "label: expected 0, 1, 2 or 3, got '²'"),  # "²".isdigit(): a bare ValueError
    ],
)
def test_bad_jsonl_records_name_file_line_and_field(tmp_path, row, message):
    path = _write(tmp_path / "bad.jsonl", [{**REC, "label": 0}, row])
    with pytest.raises(InputError) as e:
        read_cdconv_jsonl(path, "t")
    assert str(e.value).startswith(f"{path}, line 2: {message}")


def test_tsv_reader_four_and_two_classes_and_errors(tmp_path):
    good = "\t".join(REC.values())
    p4 = tmp_path / "4.tsv"
    p4.write_text(f"{good}\t2\n{good}\t0\n", encoding="utf-8")
    assert [e.category for e in read_cdconv_tsv(p4, "t")] == ["role_confusion", None]
    p2 = tmp_path / "2.tsv"
    p2.write_text(f"{good}\t1\n{good}\t0\n", encoding="utf-8")
    two = read_cdconv_tsv(p2, "t", classes=2)
    assert [(e.label, e.category) for e in two] == [(True, None), (False, None)]
    bad = tmp_path / "bad.tsv"
    bad.write_text(f"{good}\t0\n{REC['u1']}\t{REC['b1']}\t0\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"bad.tsv, line 2: expected 5 tab-separated columns"):
        read_cdconv_tsv(bad, "t")
    bad.write_text(f"{good}\tx\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"line 1: label: expected 0, 1, 2 or 3, got 'x'"):
        read_cdconv_tsv(bad, "t")
    bad.write_text(f"{good}\t²\n", encoding="utf-8")  # "²".isdigit() is true, int("²") a bare ValueError
    with pytest.raises(InputError, match=r"line 1: label: expected 0, 1, 2 or 3, got '²'"):
        read_cdconv_tsv(bad, "t")
    with pytest.raises(InputError, match="corpus file is missing"):
        read_cdconv_tsv(tmp_path / "none.tsv", "t")


def _toy(n_contexts: int = 12, replies: int = 3) -> list:
    return [
        make_example({"u1": f"问{c}", "b1": "答", "u2": "再问", "b2": f"回{c}-{r}", "label": (c + r) % 4})
        for c in range(n_contexts)
        for r in range(replies)
    ]


def test_context_disjoint_split_is_disjoint_seeded_and_complete():
    exs = _toy()
    a = context_disjoint_split(exs, seed=1)
    b = context_disjoint_split(exs, seed=1)
    c = context_disjoint_split(exs, seed=2)
    assert {k: [e.id + e.dialogue.last.text for e in v] for k, v in a.items()} == {
        k: [e.id + e.dialogue.last.text for e in v] for k, v in b.items()
    }
    assert [e.dialogue.last.text for e in a["test"]] != [e.dialogue.last.text for e in c["test"]]
    rep = split_report(a)
    assert rep.shared_contexts == {"train/dev": 0, "train/test": 0, "dev/test": 0}
    assert sum(rep.examples.values()) == 36 and sum(rep.contexts.values()) == 12
    # 36 examples in contexts of 3; targets 21.6 / 7.2 / 7.2: whole contexts give 21 / 9 / 6
    assert rep.examples == {"train": 21, "dev": 9, "test": 6}
    for side in a.values():
        for e in side:
            assert all(context_key(e) != context_key(o) for s in a.values() if s is not side for o in s)
    with pytest.raises(ValueError, match="fractions"):
        context_disjoint_split(exs, fractions=(0.5, 0.5, 0.5))


def test_registered_names_carry_checksums():
    for split in ("train", "dev", "test"):
        for name in (f"cdconv.{split}.v1", f"cdconv.{split}.tsv4.v1", f"cdconv.{split}.tsv2.v1"):
            info = get_dataset_info(name)
            assert info.sha256 and all(len(h or "") == 64 for h in info.sha256)


def test_official_splits_match_the_manifest(data_root):
    from collections import Counter

    want = {
        "train": {None: 4373, "intra_sentence": 313, "role_confusion": 451, "history": 1859},
        "dev": {None: 1452, "intra_sentence": 111, "role_confusion": 161, "history": 608},
        "test": {None: 1484, "intra_sentence": 106, "role_confusion": 153, "history": 589},
    }
    official = {}
    for split, counts in want.items():
        exs = load_dataset(f"cdconv.{split}.v1", data_root)
        assert dict(Counter(e.category for e in exs)) == counts
        tsv = load_dataset(f"cdconv.{split}.tsv4.v1", data_root)
        assert [e.dialogue.turns for e in tsv] == [e.dialogue.turns for e in exs]
        official[split] = exs
    assert split_report(official).shared_contexts["train/test"] == 1316  # the leakage the manifest reports
    disjoint = {s: load_dataset(f"cdconv.disjoint.{s}.v1", data_root) for s in ("train", "dev", "test")}
    assert set(split_report(disjoint).shared_contexts.values()) == {0}
    assert sum(len(v) for v in disjoint.values()) == 11660
