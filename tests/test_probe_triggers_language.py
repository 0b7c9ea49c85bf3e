"""`probe triggers` and the language of b1: u1 in the other language is refused (test_triggers_en), b1 in the other
language is warned about, once, naming its lines, and the triggers are built all the same (the methods that read
u1 still do what they should). short_utterance alone: no spaCy, no jieba dictionary needed."""

from __future__ import annotations

import json
from pathlib import Path

from dialcheck.cli import main


def _run(tmp_path: Path, rows: list[dict[str, str]], *language: str) -> tuple[int, list[dict]]:
    src, out = tmp_path / "ctx.jsonl", tmp_path / "t.jsonl"
    src.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    argv = ["probe", "triggers", *language, "--input", str(src), "--out", str(out), "--methods", "short_utterance"]
    code = main([*argv, "--no-progress"])
    built = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()] if out.exists() else []
    return code, built


def test_english_probe_warns_of_a_chinese_or_korean_b1(tmp_path, capsys):
    rows = [
        {"u1": "I like dogs.", "b1": "Me too!"},
        {"u1": "Where do you live?", "b1": "我住在北京。"},
        {"u1": "Do you cook?", "b1": "네, 요리를 좋아해요."},
        {"u1": "Any pets?", "b1": ""},
    ]
    code, built = _run(tmp_path, rows, "--language", "en")
    err = capsys.readouterr().err
    assert code == 0 and len(built) == 4  # before: not a word, and inquire_bot silently built nothing from them
    warnings = [ln for ln in err.splitlines() if ln.startswith("dialcheck: warning:")]
    assert warnings == [
        "dialcheck: warning: --language en builds English triggers, but the b1 of 2 of 4 contexts (line 2, line 3) "
        f"of {tmp_path / 'ctx.jsonl'} are Chinese and Korean: inquire_bot, which asks about b1, builds "
        "nothing from them, and the other methods' second turns follow a bot turn in another language. Give the "
        "bot's English replies as b1, or leave b1 out"
    ]


def test_chinese_probe_warns_of_an_english_b1_not_of_a_short_ok(tmp_path, capsys):
    rows = [
        {"u1": "我喜欢狗。", "b1": "I have two dogs."},
        {"u1": "你喜欢猫吗？", "b1": "OK"},  # a short turn Chinese users type too
        {"u1": "你住在哪里？", "b1": "我住在北京。"},
    ]
    code, built = _run(tmp_path, rows)
    err = capsys.readouterr().err
    assert code == 0 and len(built) == 3
    assert (
        "dialcheck: warning: --language zh (the default) builds Chinese triggers, but the b1 of line 1 of "
        f"{tmp_path / 'ctx.jsonl'} is not Chinese: inquire_bot, which asks about b1, builds nothing from it" in err
    )
    assert err.count("dialcheck: warning") == 1


def test_no_warning_when_b1_is_in_the_probes_language(tmp_path, capsys):
    code, _ = _run(tmp_path, [{"u1": "I like dogs.", "b1": "I have a cat."}], "--language", "en")
    assert code == 0 and "dialcheck: warning" not in capsys.readouterr().err
    code, _ = _run(tmp_path, [{"u1": "我喜欢狗。", "b1": "我有一只猫。"}])
    assert code == 0 and "dialcheck: warning" not in capsys.readouterr().err


def test_a_bad_file_is_refused_before_any_b1_warning(tmp_path, capsys):
    code, _ = _run(tmp_path, [{"u1": "我喜欢狗。", "b1": "I have a dog."}, {"b1": "x"}])
    err = capsys.readouterr().err
    assert code == 2 and "u1: missing" in err and "dialcheck: warning" not in err
