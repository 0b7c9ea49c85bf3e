"""Bad input from a Python caller raises a dialcheck error naming the argument, never a bare Python error deep
inside or a silently wrong answer (bug hunt 2, session 82)."""

from __future__ import annotations

import math
import re

import pytest

import dialcheck
from dialcheck.batch import BatchScorer
from dialcheck.detectors import load_detector
from dialcheck.errors import InputError
from dialcheck.schema import Dialogue, KnowledgeBase, Turn, Verdict

GOOD = ["I have two dogs.", "What are their names?", "I never had a dog."]
CTX = ["I have two dogs.", "What are their names?"]


class Fake:
    """A detector stand-in: scores a reply with "never" as a contradiction."""

    def predict(self, dialogues, batch_size=64):
        return [Verdict("never" in d.last.text, 0.9 if "never" in d.last.text else 0.1) for d in dialogues]


@pytest.fixture
def det(tiny_detector_dir):
    return load_detector(tiny_detector_dir)


@pytest.mark.parametrize("bad", [-1, 0, None, 1.5, "8", True])
def test_bad_batch_size_is_refused_everywhere(det, tiny_detector_dir, bad):
    with pytest.raises(InputError, match=r"^batch_size: expected a positive whole number, got"):
        det.predict([GOOD], batch_size=bad)
    with pytest.raises(InputError, match=r"^batch_size: expected a positive whole number"):
        det.rank(CTX, ["x", "y"], batch_size=bad)
    with pytest.raises(InputError, match=r"^batch_size: expected a positive whole number"):
        dialcheck.rerank(CTX, ["I never had a dog.", "Rex and Fido."], detector=Fake(), batch_size=bad)
    with pytest.raises(InputError, match=r"^batch_size: expected a positive whole number"):
        BatchScorer(model=str(tiny_detector_dir), batch_size=bad)
    with pytest.raises(InputError, match=r"^batch_size: expected a positive whole number"):
        dialcheck.predict([GOOD], model=str(tiny_detector_dir), batch_size=bad)


def test_batch_size_message_shows_the_value(det):
    with pytest.raises(InputError, match=r"^batch_size: expected a positive whole number, got -1$"):
        det.predict([GOOD], batch_size=-1)


def test_rank_refuses_a_string_context_or_candidates(det):
    with pytest.raises(InputError, match=r"^context: expected a list of turns, got a string"):
        det.rank("I have a dog.", ["x"])
    with pytest.raises(InputError, match=r"^candidates: expected a list of strings, got a string"):
        det.rank(CTX, "Rex")
    with pytest.raises(InputError, match=r"^context: expected a list of turns, got null"):
        det.rank(None, ["x"])
    with pytest.raises(InputError, match=r"^candidates\[0\]: expected a string, got null"):
        det.rank(CTX, [None])
    with pytest.raises(InputError, match=r"^context\[1\]: expected a string or a Turn, got null"):
        det.rank(["a", None], ["x"])


def test_rank_reads_a_dialogue_object_context_and_any_iterable_of_candidates(det):
    by_list = det.rank(CTX, ["Rex.", "I never had a dog."])
    by_dict = det.rank({"turns": CTX}, (c for c in ["Rex.", "I never had a dog."]))
    assert [(r.index, r.text, r.verdict.score) for r in by_dict] == [
        (r.index, r.text, r.verdict.score) for r in by_list
    ]
    assert set(by_dict[0].verdict.pair_scores) <= {0, 1}  # the context's two turns, not the dict's key


@pytest.mark.parametrize(
    ("dialogue", "message"),
    [
        (Dialogue(()), r"turns: the dialogue is empty"),
        (Dialogue.from_texts(["a", ""]), r"turns\[1\]\.text: the last turn is empty"),
        (Dialogue((Turn(" ", "x"),)), r"turns\[0\]\.speaker: ' ' is blank \(name who said the turn\)"),
    ],
)
def test_bad_dialogue_objects_are_refused(det, tiny_detector_dir, dialogue, message):
    if "last turn is empty" not in message:  # predict scores an empty last turn: rank scores empty candidates
        with pytest.raises(InputError, match=r"^dialogues\[0\]: " + message):
            det.predict([dialogue])
    with pytest.raises(InputError, match=r"^" + message):
        dialcheck.check(dialogue, model=str(tiny_detector_dir))


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: Dialogue(None), r"Dialogue\.turns: expected a list of Turn objects, got null \(Dialogue\.from_texts"),
        (lambda: Dialogue(5), r"Dialogue\.turns: expected a list of Turn objects, got int"),
        (lambda: Dialogue("I have a dog."), r"Dialogue\.turns: expected a list of Turn objects, got a string"),
        (lambda: Dialogue({"turns": GOOD}), r"Dialogue\.turns: expected a list of Turn objects, got object"),
        (lambda: Dialogue(GOOD), r"Dialogue\.turns\[0\]: expected a Turn, got string \(Dialogue\.from_texts"),
        (lambda: Dialogue([Turn("A", "x"), None]), r"Dialogue\.turns\[1\]: expected a Turn, got null"),
        (
            lambda: Dialogue([Turn("A", "x")], knowledge=[{"poi": "Valero"}]),
            r"Dialogue\.knowledge: expected a KnowledgeBase or None, got list \(dialcheck\.io\.parse_knowledge",
        ),
        (
            lambda: Dialogue.from_texts(["Find me a gas station."], knowledge={"poi": "Valero"}),
            r"Dialogue\.knowledge: expected a KnowledgeBase or None, got object",
        ),
        (lambda: Dialogue([Turn("A", "x")], meta=None), r"Dialogue\.meta: expected a mapping"),
        (lambda: Turn(None, "x"), r"Turn\.speaker: expected a string, got null"),
        (lambda: Turn(1, "x"), r"Turn\.speaker: expected a string, got int"),
        (lambda: Turn("A", None), r"Turn\.text: expected a string, got null"),
        (lambda: Turn("A", ["x"]), r"Turn\.text: expected a string, got list"),
        (lambda: Dialogue.from_texts(["a", 3]), r"Turn\.text: expected a string, got int"),
    ],
)
def test_wrong_types_given_to_the_record_constructors_are_named(build, message):
    # Dialogue(None) raised a bare "TypeError: 'NoneType' object is not iterable" from its __post_init__, and
    # Turn(None, "x") or Dialogue(["a", "b"]) were built, to fail later or deep inside a detector
    with pytest.raises(InputError, match=r"^" + message):
        build()


def test_record_constructors_still_take_what_they_took():
    turns = [Turn("A", "I have a dog."), Turn("B", "")]  # an empty text: a message that only calls a tool
    assert Dialogue(turns).turns == tuple(turns) == Dialogue(t for t in turns).turns
    assert Dialogue(()).turns == ()
    kb = KnowledgeBase(({"poi": "home"},))
    assert Dialogue(tuple(turns), kb, {"id": "x"}).knowledge is kb


def test_bad_load_and_check_arguments_are_named(tiny_detector_dir):
    with pytest.raises(InputError, match=r"^language: expected one of en, tod, zh, got 'fr'"):
        dialcheck.load(language="fr")
    with pytest.raises(InputError, match=r"^language: expected one of .*, got null"):
        dialcheck.load(language=None)
    with pytest.raises(InputError, match=r"^model: expected a model folder or a shipped model's name, got int"):
        dialcheck.load(model=123)
    with pytest.raises(InputError, match=r"^model: .*got an empty string"):
        dialcheck.check(GOOD, model="")
    for bad, message in [(12.5, r"^speaker: expected a speaker name or a list"), ("", r"^speaker: empty"),
                         ([], r"^speaker: an empty list")]:  # fmt: skip
        with pytest.raises(InputError, match=message):
            dialcheck.check(GOOD, model=str(tiny_detector_dir), speaker=bad)
        with pytest.raises(InputError, match=message):
            BatchScorer(model=str(tiny_detector_dir), speaker=bad)
    with pytest.raises(InputError, match=r"^dialogues: expected a list of dialogues, got null"):
        dialcheck.predict(None, model=str(tiny_detector_dir))
    with pytest.raises(InputError, match=r"^dialogues: expected a list of dialogues, got int"):
        load_detector(tiny_detector_dir).predict(5)
    with pytest.raises(InputError, match=r"^dialogue: expected a Dialogue, got list"):
        dialcheck.route(["a", "b"])


def test_bad_rerank_arguments_are_named():
    with pytest.raises(InputError, match=r"^candidates: expected a list, got null"):
        dialcheck.rerank(CTX, None, detector=Fake())
    with pytest.raises(InputError, match=r"^candidates: expected a list of candidates, got a string"):
        dialcheck.rerank(CTX, "Rex and Fido.", detector=Fake())
    with pytest.raises(InputError, match=r"^context: expected a list of turns, got null"):
        dialcheck.rerank(None, ["x"], detector=Fake())
    with pytest.raises(InputError, match=r"scores\[0\]\[0\]: expected a number or null, got string"):
        dialcheck.rerank(CTX, ["a", "b"], detector=Fake(), scores=["x", "y"])
    with pytest.raises(InputError, match=r"^detector: expected a detector"):
        dialcheck.rerank(CTX, ["a"], detector=42)


def test_rerank_reads_a_dialogue_object_context_and_a_generator_of_candidates():
    r = dialcheck.rerank({"turns": CTX}, (c for c in ["I never had a dog.", "Rex and Fido."]), detector=Fake())
    assert r.chosen.text == "Rex and Fido."
    seen = []

    class Spy(Fake):
        def predict(self, dialogues, batch_size=64):
            seen.extend(dialogues)
            return super().predict(dialogues, batch_size)

    dialcheck.rerank({"turns": CTX}, ["Rex."], detector=Spy())
    assert [t.text for t in seen[0].turns] == [*CTX, "Rex."]


@pytest.mark.parametrize("bad", [2, -1, math.nan, None, "0.5"])
def test_thresholds_outside_0_1_are_refused(det, bad):
    with pytest.raises(InputError, match=r"^tau: expected a number in \[0, 1\]"):
        det.tau = bad
    with pytest.raises(InputError, match=r"^eta_e: expected a number in \[0, 1\]"):
        det.eta_e = bad
    det.tau, det.eta_e = 0.0, 1.0
    assert (det.tau, det.eta_e) == (0.0, 1.0)


@pytest.mark.parametrize(
    ("key", "bad", "shown"), [("tau", 1.5, "1.5"), ("eta_e", "x", "string"), ("tau", None, "null")]
)
def test_thresholds_given_to_a_constructor_are_checked_as_the_setters_check_them(key, bad, shown):
    from dialcheck.detectors import GroundedDetector, UtteranceDetector

    with pytest.raises(InputError, match=rf"^{key}: expected a number in \[0, 1\], got {shown}$"):
        UtteranceDetector(**{key: bad})
    with pytest.raises(InputError, match=r"^tau: expected a number in \[0, 1\], got 1.5$"):
        GroundedDetector(tau=1.5)
    with pytest.raises(InputError, match=r"^tau: expected a number in \[0, 1\], got 1.5$"):
        GroundedDetector().tau = 1.5  # its own setter, which took any number


@pytest.mark.parametrize(
    ("thresholds", "message"),
    [
        ({"tau": 7}, r"thresholds\.tau: expected a number in \[0, 1\], got 7"),
        ({"tau": 0.5, "eta_e": -1}, r"thresholds\.eta_e: expected a number in \[0, 1\], got -1"),
        ({"recheck_low": "x"}, r"thresholds\.recheck_low: expected a number in \[0, 1\], got string"),
        ({"recheck_high": math.inf}, r"thresholds\.recheck_high: expected a number in \[0, 1\], got inf"),
        ({"recheck_floor": True}, r"thresholds\.recheck_floor: expected a number in \[0, 1\], got boolean"),
        ({"history": -0.5}, r"thresholds\.history: expected a number of at least 0, got -0.5"),
        ([0.5], r"thresholds: expected an object of thresholds, got list"),
    ],
)
def test_thresholds_in_a_config_are_checked_however_it_reaches_a_detector(det, thresholds, message):
    from dialcheck.detectors import UtteranceDetector
    from dialcheck.detectors.modeling import DetectorConfig

    with pytest.raises(InputError, match=rf"^{message}$"):
        DetectorConfig(detector="decode.utterance.v1", thresholds=thresholds)
    config = DetectorConfig(detector="decode.utterance.v1")
    config.thresholds = thresholds  # changed after it was made: from_config checks again
    with pytest.raises(InputError, match=rf"^{message}$"):
        UtteranceDetector.from_config(config)


def test_a_stage_threshold_above_1_still_means_never(det):
    from dialcheck.detectors.modeling import DetectorConfig

    config = DetectorConfig(detector="cdconv.hierarchical.v1", thresholds={"tau": 0.5, "history": 1.01})
    assert config.thresholds["history"] == 1.01  # training's "this stage never fires"


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("tau", 7, r"thresholds\.tau: expected a number in \[0, 1\], got 7"),
        ("tau", "x", r"thresholds\.tau: expected a number in \[0, 1\], got string"),
        ("eta_e", -0.1, r"thresholds\.eta_e: expected a number in \[0, 1\], got -0.1"),
        ("max_length", "x", r"max_length: expected a whole number of tokens, at least 1, got string"),
    ],
)
def test_a_saved_config_with_a_bad_threshold_is_a_model_error_naming_file_and_field(
    tiny_detector_dir, tmp_path, field, value, message
):
    import json
    import shutil

    from dialcheck.errors import ModelError

    folder = shutil.copytree(tiny_detector_dir, tmp_path / "bad")
    cfg = json.loads((folder / "dialcheck.json").read_text())
    if field == "max_length":
        cfg[field] = value
    else:
        cfg["thresholds"][field] = value
    (folder / "dialcheck.json").write_text(json.dumps(cfg))
    where = re.escape(str(folder / "dialcheck.json"))
    with pytest.raises(ModelError, match=rf"^{where}: {message}$"):
        load_detector(folder)
    with pytest.raises(ModelError, match=rf"^{where}: {message}$"):
        dialcheck.load(str(folder))


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (("Valero",), r"knowledge\[0\]: expected a mapping of column -> value, got string"),
        (({"poi": "Valero", "distance": 5},), r"knowledge\[0\]\.distance: expected a string, got int"),
    ],
)
def test_a_dialogue_built_in_python_with_a_bad_knowledge_base_is_refused(det, tiny_detector_dir, rows, message):
    # it reached the task-oriented detector and failed there with an AttributeError ('list' has no 'rows').
    # KnowledgeBase refuses such rows when built; a table whose rows were swapped afterwards is still refused here
    with pytest.raises(InputError, match=r"^KnowledgeBase\.rows\[0\]"):
        KnowledgeBase(rows)
    knowledge = KnowledgeBase()
    object.__setattr__(knowledge, "rows", rows)
    d = Dialogue.from_texts(["Find me a gas station.", "Valero is 4 miles away."], knowledge=knowledge)
    with pytest.raises(InputError, match=r"^" + message):
        dialcheck.check(d, model=str(tiny_detector_dir))
    with pytest.raises(InputError, match=r"^dialogues\[0\]: " + message):
        det.predict([d])
    with pytest.raises(InputError, match=r"^context: " + message):
        dialcheck.rerank(d, ["x"], detector=Fake())


def test_check_and_predict_read_a_list_of_turn_objects_and_a_tuple(det, tiny_detector_dir):
    # a list of Turn objects was refused ("expected an object with 'speaker' and 'text' ..., got Turn") and a tuple
    # of strings too ("expected a dialogue object or a list of strings, got tuple"), though rank took both
    model = str(tiny_detector_dir)
    turns = [Turn("user", "I have two dogs."), Turn("bot", "What are their names?"), Turn("user", "I never had a dog.")]
    want = dialcheck.check(Dialogue(tuple(turns)), model=model)
    assert dialcheck.check(turns, model=model) == want
    assert dialcheck.check(tuple(turns), model=model) == want
    assert dialcheck.check(tuple(GOOD), model=model) == dialcheck.check(GOOD, model=model)
    assert det.predict([turns, tuple(GOOD)]) == det.predict([Dialogue(tuple(turns)), GOOD])
    with pytest.raises(InputError, match=r"^Turn\.text: expected a string, got int"):
        dialcheck.check([Turn("A", "x"), Turn("B", 3)], model=model)
    with pytest.raises(InputError, match=r"^turns\[1\]: a bare string among turns that name their speaker"):
        dialcheck.check([Turn("A", "x"), "y"], model=model)


def test_rank_and_rerank_read_a_bare_list_of_chat_messages_or_turn_objects_as_check_does(det):
    # check took a bare list of chat messages, rank and rerank refused it: "context[0]: expected a string or a Turn,
    # got object"
    messages = [{"role": "user", "content": CTX[0]}, {"role": "assistant", "content": CTX[1]}]
    want = det.rank({"messages": messages}, ["Rex.", "I never had a dog."])
    assert det.rank(messages, ["Rex.", "I never had a dog."]) == want
    turns = [{"speaker": m["role"], "text": m["content"]} for m in messages]
    assert det.rank(turns, ["Rex.", "I never had a dog."]) == want
    seen = []

    class Spy(Fake):
        def predict(self, dialogues, batch_size=64):
            seen.extend(dialogues)
            return super().predict(dialogues, batch_size)

    assert dialcheck.rerank(messages, ["I never had a dog.", "Rex."], detector=Spy()).chosen.text == "Rex."
    assert [(t.speaker, t.text) for t in seen[1].turns] == [("user", CTX[0]), ("assistant", CTX[1]), ("user", "Rex.")]
    with pytest.raises(InputError, match=r"^context: messages\[1\]\.content: expected a string, a list of parts"):
        det.rank([{"role": "user", "content": "x"}, {"role": "assistant", "content": 3}], ["y"])


@pytest.mark.parametrize(("language", "shown"), [("fr", "'fr'"), (None, "null"), (3, "int")])
def test_route_refuses_a_language_that_names_no_shipped_default(language, shown):
    # route returned it as it was ("fr", None, 3): the name of a default no load could find
    with pytest.raises(InputError, match=r"^language: expected one of en, tod, zh, got " + shown):
        dialcheck.route(Dialogue.from_texts(GOOD), language=language)


class _Recorder:
    """A detector that records the dialogues it is asked about and flags none."""

    def __init__(self) -> None:
        self.seen: list[Dialogue] = []

    def predict(self, dialogues, **_: object) -> list[Verdict]:
        self.seen += list(dialogues)
        return [Verdict(False, 0.0, ()) for _ in dialogues]


@pytest.mark.parametrize(
    "messages, expected, roles",
    [
        ([("system", "You are Max, who has two dogs."), ("user", "Any pets?")], "assistant", ["system", "user"]),
        (
            [("system", "Be brief."), ("user", "Hi"), ("assistant", "Hello!"), ("user", "Pets?")],
            "assistant",
            ["system", "user", "assistant", "user"],
        ),
        ([("user", "Hi")], "assistant", ["user"]),
        ([("A", "I have a cat."), ("B", "Nice.")], "A", ["assistant", "user"]),
    ],
)
def test_the_reply_to_a_chat_is_the_assistants_not_the_system_prompts(messages, expected, roles):
    from dialcheck.generation.openai import OpenAIChatGenerator
    from dialcheck.io import as_context

    context = [{"role": r, "content": t} for r, t in messages]
    rec = _Recorder()
    dialcheck.rerank(context, ["No pets, I'm allergic.", "Two dogs!"], detector=rec)
    assert {d.turns[-1].speaker for d in rec.seen} == {expected}  # was "system" after [system, user]
    # what an OpenAI-style endpoint is sent: the instructions stay a system message, not the assistant's turn
    assert [m["role"] for m in OpenAIChatGenerator("http://localhost:1", "m").messages(as_context(context))] == roles


def test_load_from_several_threads_at_once_loads_the_model_once(tiny_detector_dir, monkeypatch):
    """Each thread that missed the cache loaded its own copy (4 threads: 4 copies of the default, 960 MB instead of
    260) and kept a detector the cache did not hold; the others now wait for the first."""
    import threading
    import time
    from concurrent.futures import ThreadPoolExecutor

    from dialcheck import api

    calls = []

    def slow_load(path):
        calls.append(path)
        time.sleep(0.2)  # long enough for every thread to miss the cache without the lock
        return load_detector(path)

    monkeypatch.setattr(api, "load_detector", slow_load)
    api._cached.cache_clear()
    start = threading.Barrier(4)

    def load(_):
        start.wait()
        return dialcheck.load(str(tiny_detector_dir))

    try:
        with ThreadPoolExecutor(4) as ex:
            dets = list(ex.map(load, range(4)))
        assert len(calls) == 1
        assert all(d is dets[0] for d in dets) and dialcheck.load(str(tiny_detector_dir)) is dets[0]
    finally:
        api._cached.cache_clear()


@pytest.mark.parametrize("blank", ["\u200b", "\u200b\u200d", " \ufeff ", "\u00ad", "\u2060\n"])
def test_a_turn_of_invisible_characters_only_is_empty_everywhere(det, tiny_detector_dir, blank):
    """A zero-width space passed the emptiness checks (str.strip keeps it): as the last turn it was scored, and as a
    candidate it ranked above any reply that contradicts, where a blank one is refused."""
    with pytest.raises(InputError, match=r"^turns\[2\]\.text: the last turn is empty: there is nothing to check$"):
        dialcheck.check([*CTX, blank], model=str(tiny_detector_dir))
    with pytest.raises(InputError, match=r"^candidates\[1\]: the candidate is empty: there is nothing to check$"):
        det.rank(CTX, ["Rex.", blank])
    chat = [{"role": "assistant", "content": "I have two dogs."}, {"role": "assistant", "content": blank}]
    assert dialcheck.io.upto_speaker(dialcheck.io.parse_dialogue(chat, allow_empty_last=True), ["assistant"]).last.text
    assert not dialcheck.io.is_blank(blank + "ok") and not dialcheck.io.is_blank("🐶")


def test_a_list_of_dialogues_given_where_one_is_expected_says_so(tiny_detector_dir):
    with pytest.raises(InputError, match=r"got list \(a list of dialogues\? one dialogue was expected here\)$"):
        dialcheck.check([GOOD, GOOD], model=str(tiny_detector_dir))


def test_a_model_being_loaded_holds_up_only_the_threads_that_want_it(tiny_detector_dir, tmp_path, monkeypatch):
    """One process-wide lock would have kept a server's requests for a loaded model waiting while another loads (an
    ONNX export takes minutes): the lock is per model folder."""
    import shutil
    import threading

    from dialcheck import api

    other = shutil.copytree(tiny_detector_dir, tmp_path / "other")
    release, started = threading.Event(), threading.Event()

    def blocking_load(path):
        if str(path) == str(other.resolve()):
            started.set()
            assert release.wait(30)
        return load_detector(path)

    monkeypatch.setattr(api, "load_detector", blocking_load)
    api._cached.cache_clear()
    try:
        loaded = dialcheck.load(str(tiny_detector_dir))
        slow = threading.Thread(target=dialcheck.load, args=(str(other),))
        slow.start()
        assert started.wait(30)
        got = []
        quick = threading.Thread(target=lambda: got.append(dialcheck.load(str(tiny_detector_dir))))
        quick.start()
        quick.join(10)
        assert got == [loaded]  # not held up by the other model's load
        release.set()
        slow.join(30)
    finally:
        release.set()
        api._cached.cache_clear()


def test_a_speaker_in_a_dialogue_object_is_honoured_over_speaker_and_a_tau_refused(tiny_detector_dir):
    """dialcheck.check({...}) silently ignored the object's "speaker" (the user's last turn was checked), though
    POST /check and dialcheck check honour it; its "tau" too (POST /check refuses it)."""
    from helpers_chat import CHAT

    model = str(tiny_detector_dir)
    det = load_detector(tiny_detector_dir)
    own = {"messages": CHAT, "speaker": "assistant"}
    expected = det.predict([Dialogue.from_texts([m["content"] for m in CHAT[:4]], ("user", "assistant") * 2)])[0]
    assert dialcheck.check(own, model=model) == expected
    assert dialcheck.check(own, model=model, speaker="user") == expected  # the object's own over speaker=
    assert dialcheck.check({"messages": CHAT}, model=model, speaker="assistant") == expected
    assert dialcheck.predict([own], model=model) == [expected]  # predict and Detector.predict read it alike
    assert det.predict([own]) == [expected]
    for bad, message in [
        ({**own, "speaker": 3.5}, r"^speaker: expected a speaker name or a list of names, got float$"),
        ({**own, "speaker": ""}, r"^speaker: empty"),
        ({**own, "tau": 0.2}, r"^tau: not a dialogue field; the thresholds are the model's"),
        ({"turns": ["a", "b"], "threshold": 0.2}, r"^threshold: not a dialogue field"),
    ]:
        with pytest.raises(InputError, match=message):
            dialcheck.check(bad, model=model)
    with pytest.raises(InputError, match=r"^dialogues\[1\]: eta_e: not a dialogue field"):
        det.predict([own, {**own, "eta_e": 0.1}])
