"""CDConv trigger methods on fixed inputs with fixed seeds, the lexicon reader and `dialcheck probe triggers`."""

from __future__ import annotations

import json
import random
import sys
from collections import Counter

import pytest

from dialcheck.cli import main
from dialcheck.errors import InputError, MissingDependencyError
from dialcheck.probes import triggers as tr
from dialcheck.probes.triggers import (
    BackTranslationParaphraser,
    ChineseLexicon,
    TriggerInput,
    build_triggers,
    inquire_bot,
    inquire_user,
    know_form,
    negation,
    perturb,
    short_utterance,
)
from helpers_cli import feed_stdin, run_summary
from helpers_interrupt import kill_on_call

LEX = ChineseLexicon.from_lines(
    ["Gb09A01= 喜欢 喜爱 爱好", "Bk01A01= 狗 犬", "Aa01A01# 人 人类"],
    ["喜欢——讨厌", "大--小", "有―没", "2--", "前＃--后"],
    ["不\t0\t2", "没\t0\t3", "不三不四\t1\t9"],
)
DOG = TriggerInput("我喜欢狗，我家有三条狗。", "我也喜欢狗，我养了两只猫。", "a")
ASK = TriggerInput("你喜欢狗吗？", "不喜欢。", "b")
RAIN = TriggerInput("我不喜欢下雨天。", "", "c")


def test_lexicon_reads_synonym_groups_antonym_pairs_and_single_negators():
    assert LEX.synonyms["狗"] == ("犬",) and LEX.synonyms["喜欢"] == ("喜爱", "爱好")
    assert "人" not in LEX.synonyms  # '#' groups are related words, not synonyms
    assert LEX.antonyms["没"] == ("有",) and LEX.antonyms["后"] == ("前",)  # noise around separators dropped
    assert LEX.negators == ("不", "没")  # type 1 (idioms) left out


def test_build_triggers_fixed_seed_outputs():
    ts = build_triggers([DOG, ASK, RAIN], lexicon=LEX, seed=0)
    got = [(t.id, t.method, t.u2, t.detail) for t in ts.items]
    assert got == [
        ("a", "short_utterance", "哈哈", ""),
        ("a", "inquire_bot", "你养了几只猫？", "两只"),
        ("a", "inquire_user", "你知道我家有几条狗吗？", "三条"),
        ("a", "synonym", "我喜爱狗，我家有三条狗。", "喜欢->喜爱"),  # 喜欢 -> 爱好: no shared character
        ("a", "antonym", "我讨厌狗，我家有三条狗。", "喜欢->讨厌"),
        ("a", "negation", "我不喜欢狗，我家有三条狗。", "+不"),
        ("b", "short_utterance", "对了", ""),
        ("b", "synonym", "你喜爱狗吗？", "喜欢->喜爱"),
        ("b", "antonym", "你讨厌狗吗？", "喜欢->讨厌"),
        ("b", "negation", "你不喜欢狗吗？", "+不"),
        ("c", "short_utterance", "对", ""),
        ("c", "inquire_user", "你知道我不喜欢什么吗？", "下雨天"),
        ("c", "synonym", "我不喜爱下雨天。", "喜欢->喜爱"),
        ("c", "antonym", "我不讨厌下雨天。", "喜欢->讨厌"),
        ("c", "negation", "我喜欢下雨天。", "-不"),
    ]
    # the bot's reply "不喜欢。" has no entity; "你喜欢狗吗？" says nothing about the user; 喜欢 is each u1's one word
    # with a close synonym (狗 -> 犬: one character), so the default paraphrase is the synonym trigger again
    assert ts.skipped == {
        "paraphrase: same u2 as synonym": 3,
        "inquire_bot: nothing to change": 2,
        "inquire_user: nothing to change": 1,
    }
    again = build_triggers([DOG, ASK, RAIN], lexicon=LEX, seed=0)
    assert [t.u2 for t in again.items] == [t.u2 for t in ts.items]
    other = build_triggers([DOG, ASK, RAIN], lexicon=LEX, seed=5)
    assert [t.u2 for t in other.items] != [t.u2 for t in ts.items]
    # one method alone gives the same output as within the full run (per-method generators)
    alone = build_triggers([DOG, ASK, RAIN], ["negation"], lexicon=LEX, seed=0)
    assert [t.u2 for t in alone.items] == [t.u2 for t in ts.items if t.method == "negation"]


def test_a_resumed_probe_counts_the_skips_of_its_kept_triggers_as_the_builders_do():
    """probe triggers --resume rebuilt the kept batches' skips from its own copy of the builders' keys ("empty u1",
    "METHOD: nothing to change"); both now count them with triggers.count_skips, so the two cannot drift."""
    from dialcheck.cli.probe import _kept_counts
    from dialcheck.probes.triggers import count_skips

    inputs = [DOG, ASK, TriggerInput(" ", "", "blank"), RAIN]
    methods = [m for m in tr.METHODS if m != "paraphrase"]  # a dropped repeat leaves no row: see the next test
    ts = build_triggers(inputs, methods, lexicon=LEX, seed=0)
    assert ts.skipped == {"inquire_bot: nothing to change": 2, "inquire_user: nothing to change": 1, "empty u1": 1}
    built = {(t.id, t.method) for t in ts.items}
    assert count_skips(inputs, methods, lambda _n, inp, m: (inp.id, m) in built) == ts.skipped
    made, skipped = _kept_counts(inputs, methods, [t.to_dict() for t in ts.items])
    assert (made, list(skipped.items())) == (Counter(ts.counts()), list(ts.skipped.items()))  # in the same order


HOUSE = TriggerInput("我喜欢你家的房子。", "", "d")
HOUSE_LEX = ChineseLexicon.from_lines(["Gb09A01= 喜欢 喜爱", "Cb01A01= 房子 房屋"], ["喜欢——讨厌"], ["不\t0\t2"])


def test_a_context_gets_each_second_turn_once_the_paraphrase_giving_way():
    """The default paraphraser replaces up to two words by synonyms, so where u1 has one word to replace its u2 was
    the synonym method's: every such context had the same u2 twice in the output, to be sent to the bot twice and
    counted under two methods. The repeat is dropped (the paraphrase's, whose detail names no word) and counted as
    a skip with its reason; a paraphrase that replaced two words stays."""
    ts = build_triggers([DOG, HOUSE], ["paraphrase", "synonym"], lexicon=HOUSE_LEX, seed=0)
    assert [(t.id, t.method, t.u2) for t in ts.items] == [
        ("a", "synonym", "我喜爱狗，我家有三条狗。"),
        ("d", "paraphrase", "我喜爱你家的房屋。"),  # two words: a paraphrase of its own
        ("d", "synonym", "我喜欢你家的房屋。"),
    ]
    assert ts.skipped == {"paraphrase: same u2 as synonym": 1}
    alone = build_triggers([DOG], ["paraphrase"], lexicon=HOUSE_LEX, seed=0)
    assert [t.u2 for t in alone.items] == ["我喜爱狗，我家有三条狗。"]  # nothing else built it: kept
    # a u2 two other methods build is kept under the first
    t = {m: tr.Trigger("u", "", "嗯", m) for m in ("short_utterance", "negation", "synonym")}
    assert tr.same_u2(t) == {"negation": "short_utterance", "synonym": "short_utterance"}


def test_probe_triggers_names_a_dropped_repeat_and_a_resumed_run_counts_it(tmp_path, capsys, monkeypatch):
    src = tmp_path / "ctx.jsonl"
    src.write_text("".join(json.dumps({"u1": t.u1, "id": t.id}) + "\n" for t in (DOG, HOUSE)), encoding="utf-8")
    monkeypatch.setattr(ChineseLexicon, "load", classmethod(lambda cls, folder=None: HOUSE_LEX))
    argv = ["probe", "triggers", "--input", str(src), "--methods", "paraphrase,synonym", "--batch-size", "1"]
    whole, out = tmp_path / "whole.jsonl", tmp_path / "t.jsonl"
    assert main([*argv, "--out", str(whole), "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "3 triggers from 2 contexts (synonym 2, paraphrase 1)" in err
    assert "dialcheck: skipped: paraphrase: same u2 as synonym 1" in err
    real = tr.run_methods
    kill_on_call(monkeypatch, tr, "run_methods", 2)  # killed in the second batch: the first's repeat is kept
    assert main([*argv, "--out", str(out), "--no-progress"]) == 130
    capsys.readouterr()
    monkeypatch.setattr(tr, "run_methods", real)
    assert main([*argv, "--out", str(out), "--no-progress", "--resume"]) == 0
    err = capsys.readouterr().err
    assert out.read_bytes() == whole.read_bytes()
    assert "dialcheck: skipped: paraphrase: same u2 as synonym 1" in err  # not "paraphrase: nothing to change"


def test_a_run_resumed_from_its_record_prints_the_summary_of_an_uninterrupted_run(tmp_path, capsys, monkeypatch):
    """The skips of the kept batches come from the checkpoint's record (since 51836be), not counted again from the
    kept rows (count_skips, for an earlier dialcheck's record only): a real run killed after two batches of three
    resumes to the output and the whole summary of a run never stopped, the kept batches' skips of every kind
    included. A dropped repeat leaves no row, so counted from the rows it would read 'paraphrase: nothing to
    change'."""
    src = tmp_path / "ctx.jsonl"
    src.write_text(
        "".join(json.dumps({"u1": t.u1, "b1": t.b1, "id": t.id}) + "\n" for t in (DOG, ASK, RAIN)), encoding="utf-8"
    )
    monkeypatch.setattr(ChineseLexicon, "load", classmethod(lambda cls, folder=None: LEX))
    argv = ["probe", "triggers", "--input", str(src), "--batch-size", "1", "--no-progress"]
    whole, out = tmp_path / "whole.jsonl", tmp_path / "t.jsonl"

    assert main([*argv, "--out", str(whole)]) == 0
    expected = run_summary(capsys.readouterr().err, whole)
    assert "dialcheck: skipped: paraphrase: same u2 as synonym 3, inquire_bot: nothing to change 2, " in expected[1]
    real = tr.run_methods
    kill_on_call(monkeypatch, tr, "run_methods", 3)  # killed in the third batch: DOG's and ASK's are kept
    assert main([*argv, "--out", str(out)]) == 130
    capsys.readouterr()
    record = json.loads((tmp_path / "t.jsonl.resume.json").read_text(encoding="utf-8"))
    assert record["rng"]["skipped"]["paraphrase: same u2 as synonym"] == 2  # DOG's and ASK's, as recorded
    monkeypatch.setattr(tr, "run_methods", real)
    assert main([*argv, "--out", str(out), "--resume"]) == 0
    err = capsys.readouterr().err
    assert "resuming: " in err
    assert out.read_bytes() == whole.read_bytes()
    assert run_summary(err, out) == expected


def test_each_method_directly():
    assert short_utterance(DOG, random.Random(1), pool=["嗯", "哦"]).u2 in {"嗯", "哦"}
    assert inquire_bot(DOG, random.Random(0)).u2 == "你养了几只猫？"  # 我 -> 你, 两只 -> 几只
    assert inquire_bot(TriggerInput("你好", ""), random.Random(0)) is None  # no b1
    assert inquire_user(TriggerInput("我今年23岁了。"), random.Random(0)).u2 == "你知道我今年多少岁了吗？"
    assert inquire_user(TriggerInput("我今年23岁了。"), random.Random(0), know=False).u2 == "我今年多少岁了？"
    assert perturb(ASK, random.Random(0), LEX, "antonym").u2 == "你讨厌狗吗？"
    assert perturb(TriggerInput("今天天气很好"), random.Random(0), LEX, "antonym") is None
    assert negation(TriggerInput("三条狗啊，你压力不会很大吗？"), random.Random(0)).u2 == "三条狗啊，你压力会很大吗？"
    assert negation(TriggerInput("你有宠物吗？"), random.Random(0)).u2 == "你没有宠物吗？"
    assert know_form("我看了什么电影？") == "你知道我看了什么电影吗？"
    assert know_form("你知道我多大了吗？") == "你知道我多大了吗？"


def test_back_translation_adapter_and_paraphrase_fallbacks():
    calls = []

    def translate(texts, source, target):
        calls.append((source, target))
        table = {"你几岁？": "How old are you?", "How old are you?": "你多大了？"}
        return [table.get(t, t) for t in texts]

    bt = BackTranslationParaphraser(translate)
    ts = build_triggers([TriggerInput("你几岁？"), TriggerInput("好")], ["paraphrase"], paraphraser=bt)
    assert [(t.u2, t.detail) for t in ts.items] == [("你多大了？", "back_translation")]
    assert calls[:2] == [("zh", "en"), ("en", "zh")]
    assert ts.skipped == {"paraphrase: nothing to change": 1}  # an identical round trip is no paraphrase


def test_unknown_method_and_missing_jieba(monkeypatch):
    with pytest.raises(Exception, match="unknown trigger method"):
        build_triggers([DOG], ["shout"], lexicon=LEX)
    monkeypatch.setitem(sys.modules, "jieba", None)
    monkeypatch.setitem(sys.modules, "jieba.posseg", None)
    with pytest.raises(MissingDependencyError, match=r'pip install "dialcheck\[zh\]"'):
        tr.words("你好")


def test_real_dictionary_fixed_input(data_root):
    lex = ChineseLexicon.load(data_root / "chinese_dictionary")
    assert "喜爱" in lex.synonyms["喜欢"] and "讨厌" in lex.antonyms["喜欢"]
    assert {"不", "没", "非"} <= set(lex.negators)
    ts = build_triggers([ASK], ["antonym", "negation"], seed=0, lexicon=lex)
    got = {t.method: t for t in ts.items}
    assert got["negation"].u2 == "你不喜欢狗吗？"
    assert got["antonym"].detail.startswith("喜欢->") and got["antonym"].detail.split("->")[1] in lex.antonyms["喜欢"]


def test_probe_triggers_cli(tmp_path, capsys):
    src = tmp_path / "ctx.jsonl"
    src.write_text(
        json.dumps({"u1": DOG.u1, "b1": DOG.b1, "id": "x"}, ensure_ascii=False) + "\n" + json.dumps({"u1": RAIN.u1}),
        encoding="utf-8",
    )
    dict_dir = tmp_path / "dict"
    dict_dir.mkdir()
    (dict_dir / "dict_synonym.txt").write_text("Bk01A01= 狗 犬\nGb09A01= 喜欢 喜爱 爱好\n", encoding="utf-8")
    (dict_dir / "dict_antonym.txt").write_text("喜欢——讨厌\n有―没\n", encoding="utf-8")
    (dict_dir / "dict_negative.txt").write_text("不\t0\t2\n没\t0\t3\n", encoding="utf-8")
    out = tmp_path / "t.jsonl"
    args = ["probe", "triggers", "--input", str(src), "--out", str(out), "--methods", "inquire_user,antonym"]
    code = main([*args, "--dict-dir", str(dict_dir)])
    assert code == 0
    rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [(r["id"], r["method"], r["u2"]) for r in rows] == [
        ("x", "inquire_user", "你知道我家有几条狗吗？"),
        ("x", "antonym", "我讨厌狗，我家有三条狗。"),
        ("ctx.jsonl:2", "inquire_user", "你知道我不喜欢什么吗？"),
        ("ctx.jsonl:2", "antonym", "我不讨厌下雨天。"),
    ]
    assert rows[1]["corpus_method"] == "反义-反义词" and rows[0]["b1"] == DOG.b1
    assert "wrote" in capsys.readouterr().err
    assert main([*args[:4], "--out", "-", *args[6:], "--dict-dir", str(dict_dir)]) == 0  # piped: same rows
    assert [json.loads(x) for x in capsys.readouterr().out.splitlines()] == rows
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"b1": "x"}\n', encoding="utf-8")
    assert main(["probe", "triggers", "--input", str(bad), "--out", str(out)]) == 2
    assert "bad.jsonl, line 1: u1: missing" in capsys.readouterr().err
    bad.write_text('{"u1": 5}\n', encoding="utf-8")
    assert main(["probe", "triggers", "--input", str(bad), "--out", str(out)]) == 2
    assert "bad.jsonl, line 1: u1: expected a string, got int" in capsys.readouterr().err
    bad.write_bytes(b'{"u1": "caf\xe9"}\n')
    assert main(["probe", "triggers", "--input", str(bad), "--out", str(out)]) == 2
    assert "bad.jsonl, line 1: not UTF-8 text: byte 0xe9" in capsys.readouterr().err


def test_probe_triggers_cli_names_every_bad_context_with_json_type_names(tmp_path, capsys):
    src, out = tmp_path / "ctx.jsonl", tmp_path / "t.jsonl"
    lines = [
        json.dumps({"u1": DOG.u1, "b1": None}, ensure_ascii=False),  # line 1
        json.dumps({"u1": RAIN.u1}, ensure_ascii=False),  # line 2: good
        json.dumps({"u1": 5}),  # line 3
        "{oops",  # line 4
        "",
        json.dumps({"u1": DOG.u1, "id": {"a": 1}}, ensure_ascii=False),  # line 6
        "[1]",  # line 7
    ]
    src.write_bytes("\n".join(lines).encode() + b'\n{"u1": "caf\xe9"}\n')  # line 8: not UTF-8
    args = ["probe", "triggers", "--input", str(src), "--out", str(out), "--methods", "short_utterance"]
    assert main(args) == 2
    named = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("dialcheck: error:")]
    assert named == [
        f"dialcheck: error: {src}, line 1: b1: expected a string, got null",
        f"dialcheck: error: {src}, line 3: u1: expected a string, got int",
        f"dialcheck: error: {src}, line 4: invalid JSON (Expecting property name enclosed in double quotes at "
        "column 2)",
        f"dialcheck: error: {src}, line 6: id: expected a string or a whole number, got object",
        f"dialcheck: error: {src}, line 7: expected a JSON object, got list",
        f"dialcheck: error: {src}, line 8: not UTF-8 text: byte 0xe9 at column 12 (save the file as UTF-8)",
        f"dialcheck: error: {src}: 6 of 7 contexts are bad (each named above); nothing was built",
    ]
    assert not out.exists()
    src.write_text(json.dumps({"u1": RAIN.u1, "id": 3}, ensure_ascii=False) + "\n", encoding="utf-8")
    assert main(args) == 0
    assert [json.loads(x)["id"] for x in out.read_text(encoding="utf-8").splitlines()] == ["3"]


def test_probe_triggers_cli_refuses_contexts_in_the_other_language(tmp_path, capsys):
    src, out = tmp_path / "ctx.jsonl", tmp_path / "t.jsonl"
    src.write_text(json.dumps({"u1": DOG.u1}, ensure_ascii=False) + "\n" + json.dumps({"u1": "I have a cat."}) + "\n")
    args = ["probe", "triggers", "--input", str(src), "--out", str(out), "--methods", "short_utterance"]
    assert main(args) == 2  # the default --language zh would answer the English context in Chinese
    assert "ctx.jsonl, line 2: u1: not Chinese, but --language zh (the default)" in capsys.readouterr().err
    assert main([*args, "--language", "en"]) == 2
    assert "ctx.jsonl, line 1: u1: Chinese, but --language en" in capsys.readouterr().err
    assert not out.exists()


def test_lexicon_load_names_a_dictionary_that_is_not_utf8_or_holds_no_entries(tmp_path):
    # a GBK copy of Cilin was a UnicodeDecodeError traceback; files of another format (or empty) loaded as an empty
    # lexicon, and every synonym, antonym and negation trigger was "nothing to change" with exit 0
    files = {"synonym": "Gb09A01= 喜欢 喜爱\n", "antonym": "喜欢——讨厌\n", "negative": "不\t0\t2\n"}
    for kind, text in files.items():
        (tmp_path / f"dict_{kind}.txt").write_text(text, encoding="utf-8")
    assert ChineseLexicon.load(tmp_path).synonyms["喜欢"] == ("喜爱",)
    (tmp_path / "dict_synonym.txt").write_bytes("Gb09A01= 喜欢 喜爱\n".encode("gbk"))
    with pytest.raises(InputError, match=r"dict_synonym.txt, line 1: not UTF-8 text: byte 0xbb at column 12"):
        ChineseLexicon.load(tmp_path)
    (tmp_path / "dict_synonym.txt").write_text("Gb09A01= 喜欢 喜爱\n", encoding="utf-8")
    (tmp_path / "dict_antonym.txt").write_text("喜欢,讨厌\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"dict_antonym.txt: no entries in it \(lines like '冷——热'\)"):
        ChineseLexicon.load(tmp_path)


def test_probe_triggers_cli_refuses_two_contexts_with_one_id(tmp_path, capsys):
    src = tmp_path / "ctx.jsonl"
    rows = [{"u1": DOG.u1, "id": "a"}, {"u1": RAIN.u1, "id": "b"}, {"u1": ASK.u1, "id": "a"}]
    src.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    args = [
        "probe",
        "triggers",
        "--input",
        str(src),
        "--out",
        str(tmp_path / "t.jsonl"),
        "--methods",
        "short_utterance",
    ]
    assert main(args) == 2  # the triggers of two contexts came out under one id
    assert f"{src}, line 3: id: 'a' is the id of line 1 too (give each record its own id)" in capsys.readouterr().err


def test_probe_triggers_cli_warns_when_nothing_was_built(tmp_path, capsys):
    src = tmp_path / "ctx.jsonl"
    src.write_text(json.dumps({"u1": "你好吗？"}, ensure_ascii=False) + "\n", encoding="utf-8")
    args = ["probe", "triggers", "--input", str(src), "--out", str(tmp_path / "t.jsonl"), "--methods", "inquire_user"]
    assert main(args) == 0
    err = capsys.readouterr().err  # was "0 triggers from 1 contexts ()" and nothing more than the skip counts
    assert "0 triggers from 1 context\n" in err and "warning: no trigger was built" in err


def test_probe_triggers_summary_counts_one_in_the_singular_and_names_stdout(tmp_path, capsys):
    """It said "wrote -: 1 triggers from 1 contexts": standard output by the option's dash, and one in the plural."""
    src = tmp_path / "ctx.jsonl"
    src.write_text(json.dumps({"u1": "你好吗？"}, ensure_ascii=False) + "\n", encoding="utf-8")
    assert main(["probe", "triggers", "--input", str(src), "--out", "-", "--methods", "short_utterance"]) == 0
    out, err = capsys.readouterr()
    assert len(out.splitlines()) == 1
    assert "dialcheck: wrote <stdout>: 1 trigger from 1 context (short_utterance 1)\n" in err


def test_probe_triggers_cli_names_a_json_document_once_with_the_command_that_converts_it(tmp_path, capsys):
    # a pretty-printed list of contexts was a bad line per line ("16 of 16 contexts are bad"), one list on one line
    # "expected a JSON object, got list"
    rows = [{"u1": DOG.u1, "id": "a"}, {"u1": RAIN.u1, "id": "b"}]
    args = ["probe", "triggers", "--out", str(tmp_path / "t.jsonl"), "--methods", "short_utterance", "--input"]
    for indent in (2, None):
        src = tmp_path / "ctx.json"
        src.write_text(json.dumps(rows, ensure_ascii=False, indent=indent), encoding="utf-8")
        assert main([*args, str(src)]) == 2
        err = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("dialcheck: error:")]
        dst = tmp_path / "ctx.jsonl"
        assert err == [
            f"dialcheck: error: {src}: a JSON document, not JSON Lines: contexts are read one JSON object a line; "
            f"convert it with: jq -c '.[]' {src} > {dst}, or: python -c 'import json, sys; [print(json.dumps(d)) "
            f"for d in json.load(sys.stdin)]' < {src} > {dst}"
        ]
    src = tmp_path / "ctx.jsonl"  # JSON Lines with bad lines are still named line by line
    src.write_text(json.dumps(rows[0], ensure_ascii=False) + "\n[1]\n", encoding="utf-8")
    assert main([*args, str(src)]) == 2
    assert f"{src}, line 2: expected a JSON object, got list" in capsys.readouterr().err


def test_score_and_probe_tell_a_json_document_from_json_lines_alike(tmp_path, capsys, tiny_detector_dir):
    """score sniffed an input's first lines before reading it, probe looked at the whole once every line was bad,
    each with its own words: a list written a record a line ('[', '{...},', '{...}', ']') was one document to score,
    but to probe, whose last record is a JSON object of its own, '3 of 4 contexts are bad'. Both now tell them apart
    by cli.common.json_document and word it by json_document_error; JSON Lines and an empty file are read as before."""
    rows = [{"id": "a", "turns": ["Hi.", "Hello!"], "u1": DOG.u1}, {"id": "b", "turns": ["x", "y"], "u1": RAIN.u1}]
    documents = {
        "pretty.json": json.dumps(rows, ensure_ascii=False, indent=2),
        "one-line.json": json.dumps(rows, ensure_ascii=False),
        "a-record-a-line.json": "[\n" + ",\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n]\n",
    }
    probe = ["probe", "triggers", "--out", str(tmp_path / "t.jsonl"), "--methods", "short_utterance", "--input"]
    model = ["--model", str(tiny_detector_dir), "--no-progress"]
    for name, text in documents.items():
        src = tmp_path / name
        src.write_text(text, encoding="utf-8")
        dst = tmp_path / name.replace(".json", ".jsonl")
        convert = f"convert it with: jq -c '.[]' {src} > {dst}, or: python -c"
        for argv, reads in [
            (["score", str(src), str(tmp_path / "v.jsonl"), *model], "score reads one dialogue per line"),
            ([*probe, str(src)], "contexts are read one JSON object a line"),
        ]:
            assert main(argv) == 2, (name, argv[0])
            err = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("dialcheck: error:")]
            assert len(err) == 1 and err[0].startswith(
                f"dialcheck: error: {src}: a JSON document, not JSON Lines: {reads}"
            ), (name, err)
            assert convert in err[0], (name, err)
    torn = tmp_path / "torn.jsonl"  # JSON Lines whose first line is broken: that line is named, the rest read
    torn.write_text('{"turns": ["a",\n' + "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    assert main(["score", str(torn), str(tmp_path / "v.jsonl"), *model, "--overwrite"]) == 0
    assert "scored 2 dialogues, skipped 1 bad line" in capsys.readouterr().err
    assert main([*probe, str(torn)]) == 2
    err = capsys.readouterr().err
    assert f"{torn}, line 1: invalid JSON" in err and "JSON document" not in err
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert main(["score", str(empty), str(tmp_path / "v.jsonl"), *model, "--overwrite"]) == 0
    assert f"warning: {empty} has no dialogues" in capsys.readouterr().err
    assert main([*probe, str(empty)]) == 2
    assert f"{empty}: no contexts in it" in capsys.readouterr().err


def test_a_json_document_of_no_records_gets_no_conversion(tmp_path, capsys, monkeypatch, tiny_detector_dir):
    """A pretty-printed list of numbers (or, to probe, of lists) was told 'convert it with: jq -c . ...', whose output
    is one line holding the list: no record a line either. Such a document is told what it holds and what the command
    reads, without a conversion; a list of objects and one object over several lines keep theirs."""
    probe = ["probe", "triggers", "--out", str(tmp_path / "t.jsonl"), "--methods", "short_utterance", "--input"]
    score = ["score", "--no-progress", "--model", str(tiny_detector_dir)]
    reads = {"score": "score reads one dialogue per line", "probe": "contexts are read one JSON object a line"}
    for value, held, refused_by in [
        ([1, 2], "a list of ints", ("score", "probe")),
        ([[DOG.u1], [RAIN.u1]], "a list of lists", ("probe",)),  # to score, two dialogues: jq -c '.[]'
        ([], "an empty list", ("score", "probe")),
    ]:
        src = tmp_path / "doc.json"
        src.write_text(json.dumps(value, ensure_ascii=False, indent=2) if value else "[\n]\n", encoding="utf-8")
        for command in refused_by:
            argv = [*probe, str(src)] if command == "probe" else [*score, str(src), str(tmp_path / "v.jsonl")]
            assert main(argv) == 2
            err = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("dialcheck: error:")]
            assert len(err) == 1 and err[0].startswith(
                f"dialcheck: error: {src}: a JSON document holding {held}, not JSON Lines: {reads[command]}"
            ), (value, command, err)
            assert "jq" not in err[0] and "python" not in err[0], (value, command)
        feed_stdin(monkeypatch, src.read_bytes())
        assert main([*probe, "-"]) == 2
        err = capsys.readouterr().err
        assert f"<stdin>: a JSON document holding {held}, not JSON Lines" in err and "pipe it" not in err
    # to score, a list of lists or of objects is dialogues, as check reads it (objects without turns were told
    # 'jq -c .', which made them one line of one bad dialogue); a list of chat messages is one dialogue
    for value, jq in [
        ([[DOG.u1], [RAIN.u1]], "jq -c '.[]'"),
        ([{"u1": DOG.u1}, {"u1": RAIN.u1}], "jq -c '.[]'"),
        ([{"role": "user", "content": DOG.u1}, {"role": "assistant", "content": RAIN.u1}], "jq -c ."),
    ]:
        src.write_text(json.dumps(value, ensure_ascii=False, indent=2), encoding="utf-8")
        assert main([*score, str(src), str(tmp_path / "v.jsonl")]) == 2
        assert f"convert it with: {jq} {src}" in capsys.readouterr().err, value


def test_probe_triggers_cli_refuses_a_context_in_a_third_script(tmp_path, capsys):
    # a Japanese u1 was refused with "for English contexts pass --language en", which then took it (its kana are
    # not CJK ideographs), as it took Korean and Russian ones: English rules on them built nothing but "Sure."
    src, out = tmp_path / "ctx.jsonl", tmp_path / "t.jsonl"
    rows = [{"u1": "あなたは何が好きですか？"}, {"u1": "당신은 무엇을 좋아합니까?"}, {"u1": "Что ты любишь?"}]
    src.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    args = ["probe", "triggers", "--input", str(src), "--out", str(out), "--methods", "short_utterance"]
    for language in ("zh", "en"):
        assert main([*args, "--language", language]) == 2
        err = capsys.readouterr().err
        for n, script in enumerate(("Japanese", "Korean", "Cyrillic"), start=1):
            assert f"ctx.jsonl, line {n}: u1: {script}, but triggers are built for Chinese (--language zh" in err
        assert "pass --language en" not in err
    assert not out.exists()


def test_probe_triggers_cli_reads_stdin_and_refuses_a_file_without_contexts(tmp_path, capsys, monkeypatch):
    # --input - was "-: no such file"; an empty --input was "no contexts: give --input and/or --source"
    out = tmp_path / "t.jsonl"
    text = json.dumps({"u1": DOG.u1}, ensure_ascii=False) + "\n"
    feed_stdin(monkeypatch, text)
    args = ["probe", "triggers", "--out", str(out), "--methods", "short_utterance", "--input"]
    assert main([*args, "-"]) == 0
    assert [json.loads(x)["id"] for x in out.read_text(encoding="utf-8").splitlines()] == ["stdin:1"]
    feed_stdin(monkeypatch, b'{"u1": 5}\n')
    assert main([*args, "-"]) == 2
    assert "<stdin>, line 1: u1: expected a string, got int" in capsys.readouterr().err
    blank = tmp_path / "blank.jsonl"  # a zero-width space passed str.strip and was built on as a context
    blank.write_text(json.dumps({"u1": "\u200b\u200d"}) + "\n", encoding="utf-8")
    assert main([*args, str(blank)]) == 2
    assert f"{blank}, line 1: u1: empty utterance" in capsys.readouterr().err
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n \n", encoding="utf-8")
    assert main([*args, str(empty)]) == 2
    assert f"{empty}: no contexts in it (JSONL: one JSON object a line)" in capsys.readouterr().err


def test_probe_triggers_cli_refuses_an_output_that_is_its_input_or_a_folder(tmp_path, capsys):
    # --out naming the --input file overwrote the user's contexts with the triggers built from them
    src = tmp_path / "ctx.jsonl"
    text = json.dumps({"u1": DOG.u1}, ensure_ascii=False) + "\n"
    src.write_text(text, encoding="utf-8")
    args = ["probe", "triggers", "--input", str(src), "--methods", "short_utterance", "--out"]
    assert main([*args, str(src)]) == 2
    assert "--out is the --input input: writing it would destroy the input" in capsys.readouterr().err
    assert src.read_text(encoding="utf-8") == text
    # a folder: refused before any work, not after it, with the triggers left in a stray FOLDER.tmp
    assert main([*args, str(tmp_path)]) == 2
    assert "--out: is a folder; give a file name" in capsys.readouterr().err
    assert not (tmp_path.parent / f"{tmp_path.name}.tmp").exists()


@pytest.mark.parametrize(
    "argv, message",
    [
        (["triggers", "--methods", ","], "argument --methods: name at least one of short_utterance"),
        (["triggers", "--methods", "negation,typo"], "argument --methods: unknown: typo (known: "),
        (["echo", "--kinds", " , "], "argument --kinds: name at least one of ENTQ, CNTQ"),
        (["echo", "--kinds", "entq,neutral"], "argument --kinds: unknown: NEUTRAL (known: ENTQ, CNTQ)"),
    ],
)
def test_probe_refuses_an_empty_or_unknown_selection_when_the_command_line_is_read(tmp_path, capsys, argv, message):
    # "--methods ," selected nothing and wrote an empty file with exit code 0
    out = tmp_path / "out.jsonl"
    with pytest.raises(SystemExit) as e:
        main(["probe", *argv, "--input", str(tmp_path / "missing.jsonl"), "--out", str(out)])
    assert e.value.code == 2 and message in capsys.readouterr().err and not out.exists()


@pytest.mark.parametrize(
    ("text", "flipped"),
    [
        ("我养了两只猫。", "我没养两只猫。"),  # 了 goes with 没
        ("我从来没去过黄山。", "我去过黄山。"),  # the whole negation comes out
        ("我没有车。", "我有车。"),
        ("我没有养猫。", "我养猫。"),  # 没有 before a verb: no 有 left behind
        ("我是广东人。", "我不是广东人。"),
        ("空气很好。", "空气不好。"),  # a degree adverb gives way to 不
        ("我会开车，开了十年了。", "我不会开车，开了十年了。"),  # jieba's 我会 is split again
        ("我在一家银行上班。", "我不在一家银行上班。"),  # negated before the preposition
        ("我住在上海。", "我不住在上海。"),
        ("你去过吗？", None),  # questions are left alone
        ("哈哈哈", None),
    ],
)
def test_flip_polarity_keeps_the_sentence_grammatical(text, flipped):
    assert tr.flip_polarity(text) == flipped


def test_swap_word_by_part_of_speech():
    assert tr.swap_word("我喜欢狗。", random.Random(0), LEX.synonyms, flags="v") == ("我爱好狗。", "喜欢->爱好")
    assert tr.swap_word("我有狗。", random.Random(0), LEX.synonyms, flags="v") is None  # 狗 is a noun
    assert tr.swap_word("我有狗。", random.Random(0), LEX.synonyms) == ("我有犬。", "狗->犬")


def test_cdconv_perturbation_examples():
    from dialcheck.datasets.cdconv import make_example
    from dialcheck.training.cdconv import perturbation_examples

    rows = [make_example({"u1": "你喜欢狗吗？", "b1": "我很喜欢狗。", "u2": "为什么？", "b2": "可爱。", "label": 0},
                         rid=f"r{i}") for i in range(40)]  # fmt: skip
    rows.append(make_example({"u1": "你好", "b1": "你好吗？", "u2": "好", "b2": "嗯", "label": 0}, rid="q"))
    extra, counts = perturbation_examples(rows, seed=0, lexicon=LEX, rate=1.0)
    assert counts["conversations"] == 41 and counts["no_edit"] == 1  # the question b1 gives nothing
    assert counts["made"] == len(extra) == 80 and counts["antonym"] > 0
    by_label = {}
    for e in extra:
        assert [t.text for t in e.dialogue.turns[:3]] == ["你喜欢狗吗？", "我很喜欢狗。", "为什么？"]
        by_label.setdefault(e.label, set()).add(e.dialogue.turns[3].text)
    assert by_label[True] == {"我不喜欢狗。", "我很讨厌狗。"}  # flipped, or the antonym
    assert by_label[False] == {"我很喜爱狗。"}  # 爱好 shares no character with 喜欢; 狗 -> 犬 is a noun
    assert {e.category for e in extra if e.label} == {"history"} and {e.category for e in extra if not e.label} == {
        None
    }
    again, _ = perturbation_examples(rows, seed=0, lexicon=LEX, rate=1.0)
    assert [e.dialogue for e in again] == [e.dialogue for e in extra]
    some, c = perturbation_examples(rows, seed=0, lexicon=LEX, rate=0.25)
    assert 0 < c["conversations"] < 41 and len(some) == c["made"]


def test_cdconv_random_context_examples():
    from dialcheck.datasets.cdconv import make_example
    from dialcheck.training.cdconv import random_context_examples

    def row(i, label):
        return make_example(
            {"u1": f"问{i}", "b1": f"答{i}", "u2": f"再问{i}", "b2": f"回{i}", "label": label}, rid=f"r{i}"
        )

    # CDConv labels: 0 none, 1 intra-sentence, 2 role confusion, 3 history
    rows = [row(i, [3, 1, 2, 0][i % 4]) for i in range(40)]
    extra, counts = random_context_examples(rows, seed=0, rate=1.0)
    assert counts == {"history": 10, "intra_sentence": 10, "made": 20, "no_donor": 0} and len(extra) == 20
    for e in extra:
        i = int(e.id.split("+")[0][1:])
        u1, b1, u2, b2 = (t.text for t in e.dialogue.turns)
        assert (u2, b2) == (f"再问{i}", f"回{i}") and u1 != f"问{i}" and u1[1:] == b1[1:]  # one donor's pair
        assert [t.speaker for t in e.dialogue.turns] == [t.speaker for t in rows[i].dialogue.turns]
        assert (e.label, e.category) == ((False, None) if i % 4 == 0 else (True, "intra_sentence"))
    again, _ = random_context_examples(rows, seed=0, rate=1.0)
    assert [e.dialogue for e in again] == [e.dialogue for e in extra]
    some, c = random_context_examples(rows, seed=0)
    assert 0 < c["made"] < 20 and len(some) == c["made"]
    assert random_context_examples(rows[:1], seed=0, rate=1.0)[1]["no_donor"] == 1  # nothing else to take from


def test_cdconv_user_statement_examples():
    from dialcheck.datasets.cdconv import make_example
    from dialcheck.training.cdconv import user_statement_examples

    def row(i, label, method="同义-回译", b1=None, u2=None):
        obj = {"u1": f"问{i}", "b1": b1 or f"我有{i}只猫。", "u2": u2 or "你有猫吗？", "b2": f"回{i}", "label": label}
        return make_example({**obj, "method": method} if method else obj, rid=f"r{i}")

    # CDConv labels: 0 none, 1 intra-sentence, 2 role confusion, 3 history
    rows = [row(i, [3, 1, 2, 0][i % 4]) for i in range(40)]
    rows += [row(40, 0, b1="我也是！"), row(41, 3, method="设问-user"), row(42, 3, method="设问-user-v2")]
    rows += [row(43, 3, method=None, u2="我多大了？"), row(44, 3, method=None, u2="我也养猫，你呢？")]
    extra, counts = user_statement_examples(rows, seed=0, rate=1.0)
    ids = [e.id.split("+")[0] for e in extra]
    # every history row but the two inquiring-user triggers and the untagged u2 about the user (r43)
    assert ids == [f"r{i}" for i in range(0, 40, 4)] + ["r44"] and counts == {"made": 11, "no_donor": 0}
    by_id = {r.id: r for r in rows}
    for e in extra:
        src = by_id[e.id.split("+")[0]]
        u1, b1, u2, b2 = (t.text for t in e.dialogue.turns)
        assert u1 == src.dialogue.turns[1].text  # the user now says what the bot said
        assert b1 != u1 and b1 != "我也是！" and any(b1 == r.dialogue.turns[1].text for r in rows)  # a donor's b1
        assert (u2, b2) == tuple(t.text for t in src.dialogue.turns[2:])
        assert [t.speaker for t in e.dialogue.turns] == [t.speaker for t in src.dialogue.turns]
        assert (e.label, e.category) == (False, None)
    again, _ = user_statement_examples(rows, seed=0, rate=1.0)
    assert [e.dialogue for e in again] == [e.dialogue for e in extra]
    some, c = user_statement_examples(rows, seed=0)
    assert 0 < c["made"] < 11 and {e.id for e in some} <= {e.id for e in extra}  # a lower rate copies a subset


# -- rules added after the hand check of docs/trigger_checks/zh_round1.md -------------------------------


@pytest.mark.parametrize(
    ("u1", "u2"),
    [
        ("那还不错，那休息的时候你喜欢做什么呀？", None),  # was 那还不不错
        ("你们酒吧的环境怎么样，乱不乱？", None),  # was 乱不不乱
        ("那你挺不幸的，你是少数民族的吗？", "那你挺不幸的，你不是少数民族的吗？"),  # was 那你不不幸的
    ],
)
def test_negation_puts_no_negation_beside_another(u1, u2):
    t = negation(TriggerInput(u1), random.Random(0))
    assert (t.u2 if t is not None else None) == u2


def test_negation_never_edits_a_wh_question():
    assert negation(TriggerInput("你是做什么的？"), random.Random(0)) is None
    t = negation(TriggerInput("我也是学生，你是做什么的呢？"), random.Random(0))
    assert t is not None and t.u2.endswith("你是做什么的呢？") and t.u2 != "我也是学生，你是做什么的呢？"


@pytest.mark.parametrize(
    ("text", "bot", "u2"),
    [
        ("我一般都是11点左右睡的", True, "你一般都是几点左右睡的？"),  # 几点, not 多少点
        ("我现在60多了，是个老太太了。", False, "你知道我现在多大了吗？"),  # not 多少多
        ("我最喜欢的篮球运动员是姚明。", False, "你知道我最喜欢的篮球运动员是谁吗？"),  # the last noun; a name: 谁
        ("我是小哥哥，不过我在北京读书", True, "你在哪里读书？"),  # a place: 哪里; 不过 dropped
        ("你喜欢什么样的乐队？", True, None),  # b1 is a question
        ("你好，我可以跟你分享一下我的喜悦心情吗？", False, None),  # 一下 is not a count
    ],
)
def test_inquiry_questions(text, bot, u2):
    t = (
        inquire_bot(TriggerInput("你好", text), random.Random(0))
        if bot
        else inquire_user(TriggerInput(text), random.Random(0))
    )
    assert (t.u2 if t else None) == u2


def test_round_two_rules_answers_idioms_articles_and_one_character_antonyms():
    assert negation(TriggerInput("好的，你平时有什么爱好吗？"), random.Random(0)) is None  # 好的 is an answer
    assert negation(TriggerInput("没问题，你想聊什么呢？"), random.Random(0)) is None  # an idiom
    t = inquire_user(TriggerInput("我现在还是一个学生。"), random.Random(0))
    assert t is None or "几个" not in t.u2  # 一个 after 是 is an article
    assert inquire_user(TriggerInput("我有一个儿子。"), random.Random(0)).u2 == "你知道我有几个儿子吗？"
    lex = ChineseLexicon.from_lines([], ["大--小", "有--没", "聪明--愚蠢"])
    assert perturb(TriggerInput("你现在多大了？"), random.Random(0), lex, "antonym") is None  # 大 -> 小
    assert perturb(TriggerInput("你有车吗？"), random.Random(0), lex, "antonym").u2 == "你没车吗？"
    assert perturb(TriggerInput("你很聪明。"), random.Random(0), lex, "antonym").u2 == "你很愚蠢。"


def test_trigger_synonyms_are_close_common_and_of_the_same_part_of_speech():
    lex = ChineseLexicon.from_lines(["A= 喜欢 喜爱 欢乐 撒欢 爱", "B= 朋友 友好 友人", "C= 工作 劳作 作业"], [])
    syn, _ = tr.trigger_tables(lex)
    assert syn["喜欢"] == ("喜爱",)  # 欢乐: an adjective; 撒欢: rare; 爱: one character
    assert "友好" not in syn.get("朋友", ())  # an adjective for a noun
    assert "工作" not in syn  # 劳作 is rare beside 工作, 作业 is another sense but also below a tenth


def test_probe_reads_its_input_once_as_it_comes(tmp_path, monkeypatch):
    """probe read standard input whole (read_stdin) before its first record, and opened an --input file twice: once
    for the JSON-document check, once for the records. Both are now read once, line by line, through
    cli.common.json_lines, as score reads standard input; a document is still refused, and a damaged .gz is still
    named where it breaks."""
    from types import SimpleNamespace

    import dialcheck.cli.probe as probe

    rows = [{"u1": DOG.u1, "id": "a"}, {"u1": RAIN.u1, "id": "c"}]
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)

    def pipe():  # no read(): only iterated, a line at a time
        yield from text.encode().splitlines(keepends=True)

    monkeypatch.setattr("sys.stdin", SimpleNamespace(buffer=pipe()))
    assert probe.read_records("-", lambda obj, n: (n, obj["id"])) == [(1, "a"), (2, "c")]
    opened = []
    real_open = probe.open_input
    monkeypatch.setattr(probe, "open_input", lambda *a: opened.append(a) or real_open(*a))
    src = tmp_path / "ctx.jsonl"
    src.write_text(text, encoding="utf-8")
    assert probe.read_records(str(src), lambda obj, n: obj["id"]) == ["a", "c"] and len(opened) == 1
    src.write_text(json.dumps(rows, indent=2), encoding="utf-8")
    with pytest.raises(InputError, match="a JSON document, not JSON Lines: records are read one JSON object a line"):
        probe.read_records(str(src), lambda obj, n: obj)
    notgz = tmp_path / "ctx.jsonl.gz"
    notgz.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=r"ctx\.jsonl\.gz, line 1: cannot decompress the file after line 0"):
        probe.read_records(str(notgz), lambda obj, n: obj)
