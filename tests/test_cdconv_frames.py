"""A long conversation read by the four-category detectors as frames (history="frames", opt-in)."""

from __future__ import annotations

import numpy as np
import pytest

from dialcheck.detectors import FlatCategoryDetector, PairCategoryDetector
from dialcheck.detectors.categories import CATEGORY_LABELS, MAX_FRAMES, frames
from dialcheck.errors import ModelError
from dialcheck.schema import Dialogue, Turn

# rows in CATEGORY_LABELS order: non, intra, role, history
QUIET = [0.9, 0.04, 0.03, 0.03]


class ByFrame:
    """A 4-way classifier that looks each input up by its first segment's start (or returns ``QUIET``)."""

    tokenizer = None

    def __init__(self, rows: dict[str, list[float]]) -> None:
        self.labels = list(CATEGORY_LABELS)
        self.rows = rows
        self.seen: list[tuple[str, str]] = []

    def proba(self, pairs, batch_size=64, show_progress_bar=False):
        self.seen.extend(pairs)
        out = [next((r for k, r in self.rows.items() if a.startswith(k)), QUIET) for a, _ in pairs]
        return np.asarray(out, dtype=np.float32)


def chat(n: int = 8) -> Dialogue:
    texts = [
        "你养宠物吗？",
        "我养了一只猫。",
        "你做什么工作？",
        "我是护士。",
        "周末干嘛？",
        "去爬山。",
        "你有猫吗？",
        "我从来没养过宠物。",
    ]
    speakers = ["user", "bot"] * 4
    return Dialogue(tuple(Turn(s, t) for s, t in zip(speakers[-n:], texts[-n:], strict=True)))


def test_frames_are_each_earlier_turn_of_the_replier_with_the_turn_before_it_and_the_last_two():
    d = chat()
    assert [(j, [t.text for t in f.turns]) for j, f in frames(d)] == [
        (1, ["你养宠物吗？", "我养了一只猫。", "你有猫吗？", "我从来没养过宠物。"]),
        (3, ["你做什么工作？", "我是护士。", "你有猫吗？", "我从来没养过宠物。"]),
    ]
    assert frames(chat(4)) == [] and frames(chat(2)) == []
    assert [j for j, _ in frames(chat(7))] == [0, 2]  # the bot speaks first: a frame of three turns
    assert [t.text for t in frames(chat(7))[0][1].turns] == ["我养了一只猫。", "你有猫吗？", "我从来没养过宠物。"]
    long = Dialogue(tuple(Turn(["user", "bot"][i % 2], f"t{i}") for i in range(2 * MAX_FRAMES + 10)))
    assert len(frames(long)) == MAX_FRAMES and frames(long)[-1][0] == len(long.turns) - 5  # the most recent


def test_an_early_turn_contradicted_is_found_and_named():
    det = FlatCategoryDetector(tau=0.5)
    assert det.history == "window"  # the default: frames are opt-in
    det.history = "frames"
    det._clf = ByFrame({"你养宠物吗？": [0.2, 0.05, 0.05, 0.7]})
    (v,) = det.predict([chat()])
    assert v.contradiction and v.category == "history" and v.evidence == (1,)
    assert v.score == pytest.approx(0.7) and v.pair_scores[1] == pytest.approx(0.7)
    assert v.pair_scores[3] == pytest.approx(0.03) and v.pair_scores[5] == pytest.approx(0.03)  # b1: the last frame
    # the window reading sees one segment of every earlier turn (cut from the left by a real model's window) and
    # names every earlier turn of the replier it read: all of them here (this classifier has no window)
    det.history = "window"
    (w,) = det.predict([chat()])
    assert w.category == "history" and w.evidence == (1, 3, 5)
    assert det._clf.seen[-1] == (
        "你养宠物吗？ | 我养了一只猫。 | 你做什么工作？ | 我是护士。 | 周末干嘛？ | 去爬山。 | 你有猫吗？",
        "我从来没养过宠物。",
    )


def test_an_earlier_frame_counts_only_through_its_history_probability():
    det = FlatCategoryDetector(tau=0.5)
    det.history = "frames"
    det._clf = ByFrame({"你养宠物吗？": [0.2, 0.7, 0.05, 0.05]})  # it reads as intra-sentence: not this frame's to say
    (v,) = det.predict([chat()])
    assert not v.contradiction and v.evidence == () and v.score == pytest.approx(0.1)


def test_the_last_frame_decides_as_a_four_turn_session_and_adds_the_earlier_turns_that_fire():
    det = FlatCategoryDetector(tau=0.5)
    det.history = "frames"
    det._clf = ByFrame({"周末干嘛？": [0.2, 0.05, 0.05, 0.7], "你做什么工作？": [0.3, 0.0, 0.0, 0.7]})
    (v,) = det.predict([chat()])
    assert v.category == "history" and v.evidence == (3, 5) and v.score == pytest.approx(0.8)
    det._clf = ByFrame({"周末干嘛？": [0.2, 0.05, 0.7, 0.05], "你做什么工作？": [0.3, 0.0, 0.0, 0.7]})
    (r,) = det.predict([chat()])
    assert r.category == "role_confusion" and r.evidence == (6,)  # u2, in the whole conversation's numbering
    assert r.label_scores["history"] == pytest.approx(0.7)


def test_four_turns_or_fewer_read_exactly_as_before():
    rows = {"你养宠物吗？": [0.3, 0.1, 0.1, 0.5]}
    for n in (2, 3, 4):
        a, b = FlatCategoryDetector(tau=0.5), FlatCategoryDetector(tau=0.5)
        a._clf, b._clf = ByFrame(rows), ByFrame(rows)
        a.history = "frames"
        assert a.predict([chat(n)]) == b.predict([chat(n)])
        assert a._clf.seen == b._clf.seen


def test_the_pair_detector_reads_frames_too_and_the_option_is_checked():
    det = PairCategoryDetector(tau=0.5)
    det.history = "frames"
    det._clf = ByFrame({"我养了一只猫。": [0.2, 0.05, 0.05, 0.7]})  # (b_j, b2)
    (v,) = det.predict([chat()])
    assert v.category == "history" and v.evidence == (1,)
    with pytest.raises(ModelError, match="history"):
        det.history = "all"
    assert det.history == "frames"


def test_the_command_line_option_reaches_a_four_category_model():
    import argparse

    from dialcheck.cli import common

    parser = argparse.ArgumentParser()
    common.add_reading_options(parser)
    args = parser.parse_args(["--history", "frames"])
    args.tau = args.eta_e = args.model = None
    det = FlatCategoryDetector()
    common.configure(det, args)
    assert det.history == "frames" and det.config.options["history"] == "frames"
    with pytest.raises(SystemExit):
        parser.parse_args(["--history", "all"])


def test_the_long_conversation_benchmark_inserts_other_sessions_and_keeps_labels(load_benchmark):
    from dialcheck.schema import Example

    bench = load_benchmark("cdconv_long")

    def session(i: int, label: bool, category: str | None) -> Example:
        turns = tuple(Turn(s, f"{s}{j}-{i}") for j, s in enumerate(["user", "bot", "user", "bot"]))
        return Example(Dialogue(turns), label, None, category, id=str(i))

    base = [session(0, True, "history"), session(1, False, None), session(2, True, "role_confusion")]
    long = bench.lengthen(base, 2, seed=0)
    assert bench.lengthen(base, 2, seed=0) == long  # seeded
    assert [len(e.dialogue.turns) for e in long] == [8, 8, 8]
    for e, b in zip(long, base, strict=True):
        texts = [t.text for t in e.dialogue.turns]
        assert texts[:2] + texts[-2:] == [t.text for t in b.dialogue.turns]  # the session around the fillers
        assert all(not t.endswith(f"-{b.id}") for t in texts[2:6])  # fillers from other sessions only
        assert (e.label, e.category, e.id) == (b.label, b.category, b.id)
    assert bench.lengthen(base, 0) == base
    named = Example(base[0].dialogue, True, (1, 2), "history", id="n")  # evidence after the fillers moves with them
    assert bench.lengthen([named, base[1]], 2)[0].evidence == (1, 6)
    # measured on a scripted detector: a history contradiction that names b1 (turn 1), the others quiet
    det = FlatCategoryDetector(tau=0.5)
    det.history = "frames"
    det._clf = ByFrame({"user0-0 | bot1-0 | user2-0": [0.2, 0.05, 0.05, 0.7]})  # session 0, not its fillers
    metrics, verdicts = bench.measure(det, long)
    assert [v.category for v in verdicts] == ["history", None, None]
    assert metrics["history/flagged"] == 100.0 and metrics["history/names_b1"] == 100.0
    assert metrics["2class/accuracy"] == pytest.approx(200 / 3, abs=0.01)


def test_the_window_reading_says_when_a_long_chat_did_not_fit(caplog):
    class Fits(ByFrame):
        def pair_fits(self, first, second):
            return len(first) + len(second) < 40  # characters: a four-turn chat fits, an eight-turn one does not

    det = FlatCategoryDetector(tau=0.5)
    det._clf = Fits({})
    with caplog.at_level("WARNING", logger="dialcheck.detectors.categories"):
        det.predict([chat(4), chat(4)])
        assert not caplog.records  # a session that fits: nothing to say
        det.predict([chat(), chat(4)])
    assert len(caplog.records) == 1 and "1 of 2 conversations" in caplog.records[0].getMessage()
    assert "--history frames" in caplog.records[0].getMessage()
    caplog.clear()
    det.history = "frames"
    with caplog.at_level("WARNING", logger="dialcheck.detectors.categories"):
        det.predict([chat()])  # every earlier turn is read in a frame of its own
    assert not caplog.records


def test_the_window_reading_names_only_the_turns_it_read(tiny_base, monkeypatch, caplog):
    # A ten-turn chat cut to the 64-token window named every earlier turn of the bot as evidence of a history
    # contradiction, those that fell out of the window (never read) included: now only those read (some of).
    from dialcheck.detectors.modeling import build_model

    words = ["apple", "banana", "cherry", "grape", "lemon", "mango", "peach", "plum"]  # one token each
    d = Dialogue(tuple(Turn(["user", "bot"][i % 2], w) for i, w in enumerate(words)))
    det = FlatCategoryDetector(base=str(tiny_base), max_length=12, tau=0.5)
    det.attach(*build_model(det.config))
    history = np.asarray([[0.1, 0.0, 0.0, 0.9]], dtype=np.float32)
    monkeypatch.setattr(det.classifier, "proba", lambda pairs, **kw: np.repeat(history, len(pairs), axis=0))
    (pair,) = det.inputs([d])
    assert pair == (" [SEP] ".join(words[:-1]), "plum")
    # 12 tokens: [CLS] [SEP] [SEP] and "plum" leave 8 for the first segment's 13: "[SEP] grape [SEP] ... peach"
    assert det.classifier.tokenizer.decode(det.classifier.encode([pair])["input_ids"][0][1:9]).startswith("[SEP] grape")
    assert det.classifier.first_kept(*pair) == pair[0].index("[SEP] grape")  # the classifier says where its cut fell
    (v,) = det.predict([d])
    assert v.category == "history" and v.evidence == (3, 5)  # was (1, 3, 5): banana was never read
    # the warning named no conversation ('3 of 22 conversations are longer ...'): by their ids, when all have one
    caplog.clear()
    named = Dialogue(d.turns, meta={"id": "chat-7"})
    det.predict([named, Dialogue(d.turns[-4:], meta={"id": "short"})])
    assert "1 of 2 conversations (chat-7) are longer than the model's 12-token window" in caplog.text
    caplog.clear()
    det.predict([named, d])
    assert "2 of 2 conversations are longer" in caplog.text  # one without an id: none named
    det.config.max_length = det.classifier.max_length = 64  # it all fits: every earlier turn of the bot
    assert det.predict([d])[0].evidence == (1, 3, 5)
    det.config.max_length = det.classifier.max_length = 5  # room for nothing but the reply: no turn read
    assert det.predict([d])[0].evidence == ()


def test_the_pair_view_names_b1_alone_the_one_turn_it_read():
    det = PairCategoryDetector(tau=0.5)
    det._clf = ByFrame({"去爬山。": [0.2, 0.05, 0.05, 0.7]})  # (b1, b2)
    (v,) = det.predict([chat()])
    assert v.category == "history" and v.evidence == (5,)  # was (1, 3, 5)
