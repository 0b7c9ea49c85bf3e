"""Contradiction collections (issue 6): FQness, annotation, released reader, LOGO split, t-test, CLI."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from dialcheck.collection import (
    AnnotatorLabel,
    CollectedReply,
    CollectionContext,
    FQnessScorer,
    aggregate,
    aggregate_votes,
    analyse_feature,
    apply_aggregation,
    candidate_contexts,
    contradictions_per_context,
    export_tasks,
    fleiss_kappa,
    kappa_from_labels,
    leave_one_generator_out,
    logo_splits,
    read_labels,
    read_records,
    read_released,
    reply_pairs,
    score_quiz,
    select_random,
    select_top_k,
    split_question,
    ttest_greater,
    write_records,
)
from dialcheck.collection.analysis import betainc, declarative_yes_no, t_sf
from dialcheck.errors import InputError
from dialcheck.schema import Dialogue, Turn
from helpers_generation import build_tiny_lm

# -- context selection --------------------------------------------------------------------------------


def test_split_question_keeps_trailing_questions_only():
    assert split_question("Is it? I think so. Do you like dogs?") == ("Do you like dogs?", "Is it? I think so.")
    assert split_question("What is it?") == ("What is it?", "")
    assert split_question("") == ("", "")


def test_split_question_chinese_marks_and_unpunctuated_logs():
    # full-width marks; Chinese sentences are joined without spaces
    assert split_question("我也喜欢。你养的是什么狗？多大了？") == ("你养的是什么狗？多大了？", "我也喜欢。")
    # task-oriented logs without punctuation: an interrogative opener or a Chinese question particle
    assert split_question("is that the nearest grocery shop") == ("is that the nearest grocery shop", "")
    assert split_question("Where can I get groceries") == ("Where can I get groceries", "")
    assert split_question("你是学生吗") == ("你是学生吗", "")
    # ...but a statement stays a statement, and punctuation wins over the opener rule
    assert split_question("the nearest shop is 5 miles away") == ("", "the nearest shop is 5 miles away")
    assert split_question("Is it. Fine.") == ("", "Is it. Fine.")


def test_candidate_contexts_need_the_other_speaker_as_referent():
    d = Dialogue.from_texts(["I have a dog.", "Nice. What breed?", "A poodle.", "Is it old?", "Yes."])
    cs = candidate_contexts(d, (1, 2, 3), prefix="d")
    assert [(c.id, c.distance) for c in cs] == [("d:1:1", 1), ("d:3:1", 1), ("d:3:3", 3)]
    c = cs[0]
    assert c.question == "What breed?" and c.rest == "Nice." and c.reply_speaker == "A"
    assert [t.text for t in cs[2].turns] == ["I have a dog.", "Nice. What breed?", "A poodle.", "Is it old?"]
    assert all(c.history == () for c in cs)


def test_candidate_contexts_read_distances_given_once_for_every_question():
    # distances of one pass (a generator) were read up at the first question: the later ones had no context
    d = Dialogue.from_texts(["I have a dog.", "Nice. What breed?", "A poodle.", "Is it old?", "Yes."])
    ids = [c.id for c in candidate_contexts(d, (k for k in (1, 3, 1)), prefix="d")]
    assert ids == [c.id for c in candidate_contexts(d, (1, 3), prefix="d")] == ["d:1:1", "d:3:1", "d:3:3"]


def test_candidate_contexts_history_and_reply_speaker():
    d = Dialogue(
        tuple(
            Turn(s, t)
            for s, t in [("user", "Hi."), ("bot", "I have a dog."), ("user", "What breed?"), ("bot", "A poodle.")]
        )
    )
    (c,) = candidate_contexts(d, (1, 3), prefix="d", history=True, reply_speaker="bot")
    assert c.id == "d:2:1" and [t.text for t in c.history] == ["Hi."]
    assert [t.text for t in c.dialogue.turns] == ["Hi.", "I have a dog.", "What breed?"]
    assert candidate_contexts(d, (1,), reply_speaker="user") == []
    assert CollectionContext.from_dict(c.to_dict()) == c  # history survives the file round trip


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory: pytest.TempPathFactory):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = build_tiny_lm(tmp_path_factory.mktemp("tiny-lm"), chat=False)
    return AutoModelForCausalLM.from_pretrained(folder).eval(), AutoTokenizer.from_pretrained(folder)


def _hand_logprob(model, tok, prefix: str, continuation: str) -> float:
    """Chain rule, one forward pass per continuation token (no batching, no padding)."""
    import torch

    p = [tok.bos_token_id, *tok(prefix, add_special_tokens=False)["input_ids"]]
    c = tok(continuation, add_special_tokens=False)["input_ids"]
    total = 0.0
    for j, target in enumerate(c):
        ids = torch.tensor([p + c[:j]])
        with torch.no_grad():
            logits = model(input_ids=ids).logits[0, -1].double()
        total += float(torch.log_softmax(logits, -1)[target])
    return total


def test_fqness_matches_a_hand_computation(tiny_lm):
    model, tok = tiny_lm
    d = Dialogue.from_texts(["I have two dogs.", "Nice! What are their names?", "Rex and Fido.", "Do you play?"])
    contexts = candidate_contexts(d, (1, 3), prefix="x")
    scored = FQnessScorer(model, tok, batch_size=2).score(contexts)  # batch of mixed lengths: padding matters
    assert [c.id for c in scored] == ["x:1:1", "x:3:1", "x:3:3"]
    for c in scored:
        ref, last = c.turns[0], c.turns[-1]
        num = _hand_logprob(
            model, tok, f"{ref.speaker}: {ref.text}\n{last.speaker}: {c.rest}".rstrip(), " " + c.question
        )
        den = _hand_logprob(model, tok, f"{last.speaker}: {c.rest}".rstrip(), " " + c.question)
        assert c.fqness == pytest.approx(num - den, abs=1e-4)
    # the ratio compares the same question tokens: without a referent difference it would be 0
    assert any(abs(c.fqness) > 1e-3 for c in scored)


def test_select_top_k_per_distance_and_random_excludes():
    cs = [CollectionContext(f"c{i}", (), 1 + 2 * (i % 2), "q?", fqness=float(i), source=f"s{i // 4}") for i in range(8)]
    top = select_top_k(cs, 2)
    assert [(c.id, c.distance) for c in top] == [("c6", 1), ("c4", 1), ("c7", 3), ("c5", 3)]
    assert all(c.selection == "fqness" for c in top)
    one_per = select_top_k(cs, 2, per_dialogue=1)
    assert [c.id for c in one_per] == ["c6", "c2", "c7", "c3"]
    rnd = select_random(cs, 2, seed=1, exclude=[c.id for c in top])
    assert len(rnd) == 4 and not {c.id for c in rnd} & {c.id for c in top}
    assert rnd == select_random(cs, 2, seed=1, exclude=[c.id for c in top])


def test_context_records_round_trip(tmp_path: Path):
    c = CollectionContext("a:1:1", (Turn("A", "x."), Turn("B", "y?")), 1, "y?", fqness=0.5, selection="fqness")
    r = CollectedReply("a:1:1/g", "a:1:1", "g", (*c.turns, Turn("A", "z.")), 0, True, 2, meta={"k": 1})
    write_records(tmp_path / "c.jsonl", [c])
    write_records(tmp_path / "r.jsonl", [r])
    assert read_records(tmp_path / "c.jsonl", CollectionContext) == [c]
    assert read_records(tmp_path / "r.jsonl", CollectedReply) == [r]
    (tmp_path / "bad.jsonl").write_text(json.dumps({**r.to_dict(), "referent": 3}) + "\n")
    with pytest.raises(InputError, match=r"bad.jsonl, line 1: referent"):
        read_records(tmp_path / "bad.jsonl", CollectedReply)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"referent": "0"}, "referent: expected int, got string"),
        ({"referent": True}, "referent: expected int, got boolean"),  # not turn 1
        ({"generator": None}, "generator: expected string, got null"),
        ({"generator": {"name": "g"}}, "generator: expected string, got object"),
        ({"id": True}, "id: expected a string or a whole number, got boolean"),  # not "True"
        ({"id": 2.5}, "id: expected a string or a whole number, got float"),
        ({"context_id": ["a"]}, "context_id: expected a string or a whole number, got list"),
    ],
)
def test_a_record_field_of_the_wrong_type_is_named_with_json_types(tmp_path: Path, change, message):
    r = CollectedReply("a:1:1/g", "a:1:1", "g", (Turn("A", "x."), Turn("B", "y?"), Turn("A", "z.")), 0, True, 2)
    (tmp_path / "bad.jsonl").write_text(json.dumps(r.to_dict()) + "\n" + json.dumps({**r.to_dict(), **change}) + "\n")
    with pytest.raises(InputError) as e:
        read_records(tmp_path / "bad.jsonl", CollectedReply)
    assert str(e.value) == f"{tmp_path / 'bad.jsonl'}, line 2: {message}"


def test_record_ids_are_strings_or_whole_numbers(tmp_path: Path):
    c = CollectionContext("a:1:1", (Turn("A", "x."), Turn("B", "y?")), 1, "y?")
    assert CollectionContext.from_dict({**c.to_dict(), "id": 7.0}).id == "7"
    with pytest.raises(InputError, match=r"^distance: expected int, got float$"):
        CollectionContext.from_dict({**c.to_dict(), "distance": 1.5})
    with pytest.raises(InputError, match=r"^id: expected a string or a whole number, got null$"):
        CollectionContext.from_dict({**c.to_dict(), "id": None})


# -- annotation ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("votes", "expected"),
    [((1, 1, 1), True), ((1, 1, 0), True), ((1, 0, 0), None), ((0, 0, 0), False), ((0, 1, 0), None)],
)
def test_aggregation_rules(votes, expected):
    assert aggregate_votes([bool(v) for v in votes]) is expected


def test_aggregate_requires_three_annotators_and_applies_to_replies():
    labels = [AnnotatorLabel("r1", a, v) for a, v in zip("xyz", (True, True, False), strict=True)]
    labels += [AnnotatorLabel("r2", a, False) for a in "xyz"]
    labels += [AnnotatorLabel("r3", a, v) for a, v in zip("xyz", (True, False, False), strict=True)]
    labels += [AnnotatorLabel("r4", a, False) for a in "xy"]  # only two annotators: discarded
    agg = {a.item_id: a for a in aggregate(labels)}
    assert [agg[i].label for i in ("r1", "r2", "r3", "r4")] == [True, False, None, None]
    assert agg["r1"].contradictory_votes == 2 and agg["r4"].annotators == 2
    t = (Turn("A", "a"), Turn("B", "b?"), Turn("A", "c"))
    replies = [CollectedReply(i, "c", "g", t) for i in ("r1", "r2", "r3", "r4", "r5")]
    kept = apply_aggregation(replies, agg.values())
    assert [(r.id, r.label, r.votes) for r in kept] == [("r1", True, 2), ("r2", False, 0)]


def test_fleiss_kappa_textbook_example():
    # Fleiss (1971), the worked example on Wikipedia: 10 subjects, 14 raters, 5 categories -> 0.210
    table = [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
    assert fleiss_kappa(table) == pytest.approx(0.20993, abs=1e-4)
    assert fleiss_kappa([[3, 0], [0, 3]]) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        fleiss_kappa([[3, 0], [1, 1]])


def test_kappa_from_labels_uses_items_with_full_ratings():
    labels = [
        AnnotatorLabel(i, a, v)
        for i, vs in (("1", "110"), ("2", "000"), ("3", "111"))
        for a, v in zip("xyz", map(int, vs), strict=True)
    ]
    labels = [AnnotatorLabel(x.item_id, x.annotator, bool(x.label)) for x in labels] + [AnnotatorLabel("4", "x", True)]
    kappa, used = kappa_from_labels(labels)
    assert used == 3
    assert kappa == pytest.approx(fleiss_kappa([[2, 1], [0, 3], [3, 0]]))


def test_export_and_read_labels_csv_and_jsonl(tmp_path: Path):
    t = (Turn("A", "I am vegan."), Turn("B", "What did you eat?"))
    replies = [CollectedReply(f"r{i}", f"c{i}", "g", (*t, Turn("A", f"steak {i}"))) for i in range(7)]
    assert export_tasks(replies, tmp_path / "tasks.csv", rows_per_task=3) == 3
    assert export_tasks(replies, tmp_path / "tasks.jsonl", rows_per_task=5, shuffle=False) == 2
    rows = [json.loads(x) for x in (tmp_path / "tasks.jsonl").read_text().splitlines()]
    assert rows[0] == {
        "task_id": "task00000",
        "item_id": "r0",
        "context": "A: I am vegan.\nB: What did you eat?",
        "referent": "I am vegan.",
        "reply": "steak 0",
    }
    (tmp_path / "ann1.csv").write_text("item_id,label\nr0,contradictory\nr1,no\n")
    (tmp_path / "more.jsonl").write_text('{"item_id": "r0", "annotator": "bob", "label": 1}\n')
    labels = read_labels([tmp_path / "ann1.csv", tmp_path / "more.jsonl"])
    assert labels == [
        AnnotatorLabel("r0", "ann1", True),
        AnnotatorLabel("r1", "ann1", False),
        AnnotatorLabel("r0", "bob", True),
    ]
    (tmp_path / "bad.csv").write_text("item_id,label\nr0,maybe\n")
    with pytest.raises(InputError, match=r"bad.csv, line 2: label"):
        read_labels([tmp_path / "bad.csv"])
    (tmp_path / "twice.csv").write_text("item_id,label\nr0,1\nr0,0\n")
    with pytest.raises(InputError, match=r"twice.csv, line 3: .*twice"):
        read_labels([tmp_path / "twice.csv"])


def test_screening_quiz():
    gold = {"q1": True, "q2": False, "q3": True, "q4": False, "q5": True}
    answers = [AnnotatorLabel(q, "good", g) for q, g in gold.items()]
    answers += [AnnotatorLabel(q, "bad", not g) for q, g in gold.items()]
    answers += [AnnotatorLabel("q1", "partial", True), AnnotatorLabel("other", "partial", True)]
    res = {r.annotator: r for r in score_quiz(answers, gold, pass_mark=0.8)}
    assert (res["good"].correct, res["good"].passed) == (5, True)
    assert (res["bad"].correct, res["bad"].passed) == (0, False)
    assert (res["partial"].correct, res["partial"].answered, res["partial"].accuracy) == (1, 1, 0.2)


# -- released format ----------------------------------------------------------------------------------


def _released_line(**kw) -> str:
    obj = {
        "utterances": ["I live in Ohio.", "Do you like it there?", "I have never been to Ohio."],
        "speakers": ["A", "B", "A"],
        "annotation_target_pair": [0, 2],
        "rgm_name": "blender",
        "contradictory_label_count": 3,
    }
    obj.update(kw)
    return json.dumps(obj)


def test_released_reader_on_hand_made_lines(tmp_path: Path):
    lines = [
        _released_line(),
        _released_line(contradictory_label_count=1, rgm_name="gpt"),
        _released_line(utterances=["I live in Ohio.", "Do you like it there?", "[[TBA]]"]),
        "",
        _released_line(
            contradictory_label_count=0, rgm_name="gpt", utterances=["I live in Ohio.", "Do you like it there?", "Yes."]
        ),
        _released_line(utterances=["I live in Ohio.", "Do you like it there?", "[[TBA]]"], rgm_name="x"),
    ]
    f = tmp_path / "released.jsonl"
    f.write_text("\n".join(lines) + "\n")
    col = read_released(f)
    assert col.skipped_tba == 2 and len(col) == 3
    a, b, c = col.replies
    assert (a.generator, a.label, a.votes, a.referent, a.reply.text) == (
        "blender",
        True,
        3,
        0,
        "I have never been to Ohio.",
    )
    assert (b.label, b.votes) == (None, 1) and c.label is False
    assert a.context_id == b.context_id == c.context_id  # same preceding utterances
    assert len(a.turns) == 3 and a.turns[1] == Turn("B", "Do you like it there?")


@pytest.mark.parametrize(
    ("line", "field"),
    [
        (_released_line(speakers=["A", "B"]), "speakers"),
        (_released_line(speakers=["A", "C", "A"]), r"speakers\[1\]"),
        (_released_line(annotation_target_pair=[2, 0]), "annotation_target_pair"),
        (_released_line(annotation_target_pair=[1, 2]), "annotation_target_pair.*different speakers"),
        (_released_line(contradictory_label_count=4), "contradictory_label_count"),
        (_released_line(rgm_name=""), "rgm_name"),
        (_released_line(utterances="x"), "utterances"),
        ("{not json", "invalid JSON"),
    ],
)
def test_released_reader_reports_file_line_and_field(tmp_path: Path, line: str, field: str):
    f = tmp_path / "bad.jsonl"
    f.write_text(_released_line() + "\n" + line + "\n")
    with pytest.raises(InputError, match=rf"bad.jsonl, line 2: {field}"):
        read_released(f)


@pytest.mark.parametrize(
    ("ids", "message"),
    [
        ({"id": 2.5}, "id: expected a string or a whole number, got float"),
        ({"id": True}, "id: expected a string or a whole number, got boolean"),
        ({"id": {"n": 1}}, "id: expected a string or a whole number, got object"),
        ({"context_id": [1, 2]}, "context_id: expected a string or a whole number, got list"),
    ],
)
def test_a_released_id_that_is_not_a_string_or_a_whole_number_is_a_field_error(tmp_path: Path, ids, message):
    f = tmp_path / "bad.jsonl"
    f.write_text(_released_line() + "\n" + _released_line(**ids) + "\n")
    with pytest.raises(InputError) as e:
        read_released(f)
    assert str(e.value) == f"{f}, line 2: {message}"
    unreleased = _released_line(utterances=["I live in Ohio.", "Do you like it there?", "[[TBA]]"], **ids)
    f.write_text(unreleased + "\n")  # checked on an unreleased reply too, not skipped with it
    with pytest.raises(InputError, match="line 1: "):
        read_released(f)


def test_released_ids_are_kept_as_strings_and_a_null_one_is_no_id(tmp_path: Path):
    f = tmp_path / "rel.jsonl"
    f.write_text(
        "\n".join(
            [_released_line(id=7, context_id=3.0), _released_line(id="r2", context_id=None), _released_line(id=None)]
        )
        + "\n"
    )
    a, b, c = read_released(f).replies
    assert (a.id, a.context_id) == ("7", "3") and b.id == "r2" and c.id == "rel.jsonl#3"
    assert b.context_id == c.context_id and b.context_id.startswith("ctx-")  # null: the shared-context key


# -- leave-one-generator-out --------------------------------------------------------------------------


def _reply(rid: str, ctx: str, gen: str, label: bool | None) -> CollectedReply:
    t = (
        Turn("A", f"fact {ctx}"),
        Turn("B", "ok?"),
        Turn("A", f"other {ctx}"),
        Turn("B", "and?"),
        Turn("A", f"reply {rid}"),
    )
    return CollectedReply(rid, ctx, gen, t, 0, label)


def test_logo_split_excludes_training_rows_sharing_a_test_context():
    replies = [
        _reply("1", "c1", "g1", True),
        _reply("2", "c1", "g2", False),  # shares c1 with g1
        _reply("3", "c2", "g2", True),
        _reply("4", "c3", "g3", False),
        _reply("5", "c2", "g3", None),  # unlabelled: never used
        _reply("6", "c4", "g1", False),
    ]
    splits = {s.generator: s for s in logo_splits(replies)}
    assert list(splits) == ["g1", "g2", "g3"]
    s1 = splits["g1"]
    assert [r.id for r in s1.test] == ["1", "6"]
    assert [r.id for r in s1.train] == ["3", "4"] and s1.excluded == 1
    s2 = splits["g2"]
    assert [r.id for r in s2.train] == ["4", "6"] and s2.excluded == 1
    for s in splits.values():
        assert not {r.context_id for r in s.train} & {r.context_id for r in s.test}
        assert all(r.generator != s.generator for r in s.train)


class _ScriptedDetector:
    """A fitted detector stand-in: scores a pair 0.9 when its reply says "reply 1" or "reply 3", else 0.1."""

    tau = 0.5

    def __init__(self, train):
        self.train = train
        self.classifier = self

    def score(self, pairs, batch_size=64):
        return [0.9 if second in ("reply 1", "reply 3") else 0.1 for _, second in pairs]


def test_logo_accuracy_is_counted_per_held_out_generator():
    replies = [
        _reply("1", "c1", "g1", True),  # scored 0.9: right
        _reply("6", "c4", "g1", True),  # scored 0.1: wrong
        _reply("3", "c2", "g2", False),  # scored 0.9: wrong
        _reply("4", "c3", "g2", False),  # scored 0.1: right
        _reply("5", "c5", "g2", False),  # scored 0.1: right
    ]
    fitted = []

    def make(train):
        fitted.append(len(train))
        return _ScriptedDetector(train)

    results = {r.generator: r for r in leave_one_generator_out(replies, make)}
    # by hand: g1 held out, 1 of 2 right; g2 held out, 2 of 3 right; each trains on the other generator's pairs
    assert results["g1"].accuracy == 0.5 and results["g1"].test_pairs == 2 and results["g1"].train_pairs == 3
    assert results["g2"].accuracy == 2 / 3 and results["g2"].positives == 0 and results["g2"].train_pairs == 2
    assert fitted == [3, 2]
    assert results["g1"].to_dict()["accuracy"] == 0.5 and results["g2"].to_dict()["accuracy"] == 0.6667


def test_logo_skips_a_generator_with_nothing_to_train_on():
    only = [_reply("1", "c1", "g1", True), _reply("2", "c2", "g1", False)]
    assert leave_one_generator_out(only, _ScriptedDetector) == []


def test_reply_pairs_follow_appendix_j():
    pos, neg = _reply("1", "c1", "g", True), _reply("2", "c2", "g", False)
    pairs = reply_pairs([pos, neg, _reply("3", "c3", "g", None)], seed=0)
    assert len(pairs) == 2
    assert (pairs[0].first, pairs[0].label, pairs[0].group) == ("fact c1", 1, "c1")
    assert pairs[1].label == 0 and pairs[1].first in ("fact c2", "other c2") and pairs[1].second == "reply 2"


# -- context analysis ---------------------------------------------------------------------------------


def test_t_distribution_against_closed_forms():
    for t in (-2.0, -0.5, 0.0, 0.3, 1.0, 4.0):
        assert t_sf(t, 1) == pytest.approx(0.5 - math.atan(t) / math.pi, abs=1e-10)  # Cauchy
        assert t_sf(t, 2) == pytest.approx(0.5 - t / (2 * math.sqrt(2 + t * t)), abs=1e-10)
    assert t_sf(1.812461, 10) == pytest.approx(0.05, abs=1e-6)  # textbook critical value t_{0.05,10}
    assert t_sf(2.763262, 28) == pytest.approx(0.005, abs=1e-6)
    assert betainc(2, 3, 0.4) == pytest.approx(0.5248)


def test_ttest_against_known_values():
    r = ttest_greater([3, 4, 5, 6], [1, 2, 3, 2], equal_var=True)
    assert (r.t, r.df, r.p) == pytest.approx((3.2732683535, 6.0, 0.0084823681), rel=1e-8)
    w = ttest_greater([3, 4, 5, 6, 9], [1, 2, 3, 2])  # Welch; values from scipy.stats.ttest_ind
    assert (w.t, w.df, w.p) == pytest.approx((3.0698392537, 5.1858111127, 0.0132477421), rel=1e-8)
    assert ttest_greater([1, 2, 3, 2], [3, 4, 5, 6], equal_var=True).p == pytest.approx(1 - 0.0084823681)


def test_ttest_matches_scipy_when_installed():
    stats = pytest.importorskip("scipy.stats")
    a, b = [0, 1, 2, 1, 3, 2, 2, 0], [0, 0, 1, 0, 1, 0]
    for equal_var in (True, False):
        ours = ttest_greater(a, b, equal_var=equal_var)
        ref = stats.ttest_ind(a, b, equal_var=equal_var, alternative="greater")
        assert ours.p == pytest.approx(float(ref.pvalue), rel=1e-9)


def test_analyse_feature_and_declarative_questions():
    def ctx(i: int, q: str) -> CollectionContext:
        return CollectionContext(f"c{i}", (Turn("A", "x."), Turn("B", q)), 1, q)

    assert declarative_yes_no(ctx(0, "You like it?")) and not declarative_yes_no(ctx(0, "Do you like it?"))
    assert not declarative_yes_no(ctx(0, "You went where?"))
    contexts = [ctx(i, "How is it?" if i < 4 else "Is it good?") for i in range(8)]
    counts = {"c0": 3, "c1": 2, "c2": 3, "c3": 2, "c4": 0, "c5": 1, "c6": 0, "c7": 1}
    res = analyse_feature(contexts, counts, "contains_how")
    assert (res.n_with, res.n_without, res.mean_with, res.mean_without) == (4, 4, 2.5, 0.5)
    assert res.p < 0.01 and res.significant
    custom = analyse_feature(contexts, counts, lambda c: c.id in ("c0", "c4"))
    assert custom.n_with == 2 and custom.p > 0.01 and not custom.significant
    replies = [_reply("1", "c1", "g", True), _reply("2", "c1", "h", True), _reply("3", "c2", "g", False)]
    assert contradictions_per_context(replies) == {"c1": 2, "c2": 0}
    # a feature no context has: no statistic, and the record stays valid JSON (null, not NaN)
    none = analyse_feature(contexts, counts, lambda c: False).to_dict()
    assert none["n_with"] == 0 and none["mean_with"] is None and none["p"] is None and not none["significant"]
    json.loads(json.dumps(none, allow_nan=False))


# -- responses, CLI -----------------------------------------------------------------------------------


class _FakeGenerator:
    def __init__(self, prefix: str) -> None:
        self.prefix, self.calls = prefix, []

    def generate(self, contexts, config, batch_size=4, speaker=None, show_progress_bar=False):
        from dialcheck.generation import Candidate

        self.calls.append((len(contexts), config, speaker))
        return [[Candidate(f"{self.prefix} {i} {k}") for k in range(3)] for i in range(len(contexts))]


class _FakeDetector:
    tau = 0.5

    def rank(self, context, candidates, speaker=None):
        from dialcheck.detectors.base import RankedCandidate
        from dialcheck.schema import Verdict

        scored = [RankedCandidate(i, c, Verdict(False, 0.1 * i)) for i, c in enumerate(candidates)]
        return sorted(scored, key=lambda r: r.verdict.score)

    def predict(self, dialogues, batch_size=64):
        from dialcheck.schema import Verdict

        hit = [d.last.text.endswith(" 2") for d in dialogues]
        return [Verdict(h, 0.9, (0,), None, {0: 0.9 if h else 0.1}) for h in hit]


def test_collect_responses_records_generator_and_picks_most_contradictory():
    from dialcheck.collection import GeneratorSpec, collect_responses, label_with_detector

    d = Dialogue.from_texts(["I have a dog.", "What breed?", "A poodle.", "Is it old?"])
    contexts = candidate_contexts(d, (1, 3), prefix="x")
    g1, g2 = _FakeGenerator("first"), _FakeGenerator("second")
    specs = [GeneratorSpec("g1", g1, "greedy"), GeneratorSpec("g2", g2, "nucleus3", pick_most_contradictory=True)]
    replies = collect_responses(contexts, specs, _FakeDetector())
    assert [(r.id, r.generator) for r in replies] == [
        ("x:1:1/g1", "g1"),
        ("x:1:1/g2", "g2"),
        ("x:3:1/g1", "g1"),
        ("x:3:1/g2", "g2"),
        ("x:3:3/g1", "g1"),
        ("x:3:3/g2", "g2"),
    ]
    assert all(r.reply.speaker == "A" and r.referent_turn.speaker == "A" for r in replies)
    assert replies[0].reply.text == "first 0 0" and replies[1].reply.text == "second 0 2"  # most contradictory
    labelled = label_with_detector(replies, _FakeDetector())
    assert [r.label for r in labelled] == [False, True, False, True, False, True]
    assert all(r.meta["labelled_by"] == "detector" for r in labelled)
    with pytest.raises(ValueError, match="needs a detector"):
        collect_responses(contexts, specs)


def test_collected_reply_with_history_points_at_its_referent():
    from dialcheck.collection import GeneratorSpec, collect_responses

    d = Dialogue.from_texts(["Hello there.", "I have a dog.", "What breed?"])
    contexts = candidate_contexts(d, (1,), prefix="x", history=True)
    gen = _FakeGenerator("r")
    (reply,) = collect_responses(contexts, [GeneratorSpec("g", gen, "greedy")])
    assert [t.text for t in reply.turns] == ["Hello there.", "I have a dog.", "What breed?", "r 0 0"]
    assert reply.referent == 1 and reply.referent_turn.text == "I have a dog."
    assert gen.calls[0][2] == "B"  # spoken by the referent's speaker


def test_cli_export_aggregate_quiz_released_analyse(tmp_path: Path, capsys):
    from dialcheck.cli import main

    t = (Turn("A", "I am vegan."), Turn("B", "How was dinner?"))
    contexts = [CollectionContext(f"c{i}", t, 1, "How was dinner?" if i % 2 else "Dinner was good?") for i in range(4)]
    replies = [CollectedReply(f"c{i}/{g}", f"c{i}", g, (*t, Turn("A", f"steak {i}"))) for i in range(4) for g in "gh"]
    write_records(tmp_path / "ctx.jsonl", contexts)
    write_records(tmp_path / "replies.jsonl", replies)
    assert (
        main(["collect", "export", "--replies", str(tmp_path / "replies.jsonl"), "--out", str(tmp_path / "t.csv")]) == 0
    )
    assert (tmp_path / "t.csv").read_text().startswith("task_id,item_id,context,referent,reply")
    capsys.readouterr()
    no_out = ["collect", "aggregate", "--labels", str(tmp_path / "t.csv"), "--replies", str(tmp_path / "t.csv")]
    assert main(no_out) == 2  # not a traceback
    assert "--replies writes the labelled replies: give --out" in capsys.readouterr().err
    export = ["collect", "export", "--replies", str(tmp_path / "replies.jsonl"), "--out", "-"]
    assert main([*export, "--rows-per-task", "10"]) == 0
    assert "dialcheck: wrote 8 rows in 1 task to <stdout>\n" in capsys.readouterr().err  # was "in 1 tasks to -"
    assert main(export) == 0
    out, err = capsys.readouterr()
    piped = [json.loads(x) for x in out.splitlines()]
    assert "dialcheck: wrote 8 rows in 2 tasks to <stdout>" in err
    assert sorted(r["item_id"] for r in piped) == sorted(r.id for r in replies) and piped[0]["task_id"] == "task00000"
    for ann in ("a1", "a2", "a3"):
        rows = "\n".join(
            f"{r.id},{int(r.context_id in ('c1', 'c3') or (ann == 'a1' and r.id == 'c0/g'))}" for r in replies
        )
        (tmp_path / f"{ann}.csv").write_text("item_id,label\n" + rows + "\n")
    out = tmp_path / "labelled.jsonl"
    labels = [str(tmp_path / f"a{i}.csv") for i in (1, 2, 3)]
    assert (
        main(
            [
                "collect",
                "aggregate",
                "--labels",
                *labels,
                "--replies",
                str(tmp_path / "replies.jsonl"),
                "--out",
                str(out),
            ]
        )
        == 0
    )
    summary = json.loads(capsys.readouterr().out)
    assert summary["contradictory"] == 4 and summary["non_contradictory"] == 3 and summary["discarded"] == 1
    assert 0 < summary["fleiss_kappa"] < 1 and summary["written"] == 7
    labelled = read_records(out, CollectedReply)
    assert len(labelled) == 7 and all((r.label is True) == (r.context_id in ("c1", "c3")) for r in labelled)
    assert (
        main(
            [
                "collect",
                "analyse",
                "--contexts",
                str(tmp_path / "ctx.jsonl"),
                "--replies",
                str(out),
                "--regex",
                "dinner=dinner",
            ]
        )
        == 0
    )
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [x["feature"] for x in lines] == ["contains_how", "declarative_yes_no", "dinner"]
    assert lines[0]["mean_with"] == 2.0 and lines[0]["mean_without"] == 0.0
    (tmp_path / "gold.csv").write_text("item_id,label\nq1,1\nq2,0\n")
    (tmp_path / "ans.csv").write_text("item_id,annotator,label\nq1,x,1\nq2,x,0\nq1,y,0\nq2,y,0\n")
    assert main(["collect", "quiz", "--gold", str(tmp_path / "gold.csv"), "--answers", str(tmp_path / "ans.csv")]) == 0
    quiz = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [(q["annotator"], q["passed"]) for q in quiz] == [("x", True), ("y", False)]
    (tmp_path / "rel.jsonl").write_text(
        _released_line() + "\n" + _released_line(utterances=["a", "b", "[[TBA]]"]) + "\n"
    )
    assert main(["collect", "released", str(tmp_path / "rel.jsonl"), "--out", str(tmp_path / "rel-out.jsonl")]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out) == {
        "generator": "blender",
        "contradictory": 1,
        "non_contradictory": 0,
        "discarded": 0,
    }
    assert "1 unreleased ([[TBA]]) skipped" in captured.err
    # --out -: the records go to standard output and the per-generator summary moves to standard error
    assert main(["collect", "released", str(tmp_path / "rel.jsonl"), "--out", "-"]) == 0
    captured = capsys.readouterr()
    piped = [json.loads(x) for x in captured.out.splitlines()]
    assert piped == [json.loads(x) for x in (tmp_path / "rel-out.jsonl").read_text().splitlines()]
    assert len(piped) == 1 and '"generator": "blender"' in captured.err
    assert not (tmp_path / "-").exists()
    (tmp_path / "bad.jsonl").write_text(_released_line(contradictory_label_count="3") + "\n")
    assert main(["collect", "released", str(tmp_path / "bad.jsonl")]) == 2
    assert "bad.jsonl, line 1: contradictory_label_count" in capsys.readouterr().err


def test_cli_contexts_with_a_tiny_lm(tmp_path: Path, tiny_lm):
    from dialcheck.cli import main

    model, tok = tiny_lm
    model.save_pretrained(tmp_path / "lm")
    tok.save_pretrained(tmp_path / "lm")
    dialogues = [
        {"id": "d1", "turns": ["I have two dogs.", "What are their names?", "Rex and Fido.", "Do you play?"]},
        {"id": "d2", "turns": ["I live in Paris.", "Nice. Do you like it?"]},
    ]
    (tmp_path / "in.jsonl").write_text("\n".join(json.dumps(d) for d in dialogues) + "\n")
    out = tmp_path / "ctx.jsonl"
    args = ["collect", "contexts", "--input", str(tmp_path / "in.jsonl"), "--lm", str(tmp_path / "lm"), "--top-k", "1"]
    args += ["--random-k", "1", "--distances", "1,3", "--threads", "1", "--no-progress", "--out", str(out)]
    args += ["--all-scores", str(tmp_path / "all.jsonl")]
    assert main(args) == 0
    got = read_records(out, CollectionContext)
    every = read_records(tmp_path / "all.jsonl", CollectionContext)
    assert len(every) == 4 and all(c.fqness is not None for c in every)
    best1 = max((c for c in every if c.distance == 1), key=lambda c: c.fqness)
    assert got[0].id == best1.id and got[0].selection == "fqness"
    assert {c.selection for c in got} == {"fqness", "random"} and {c.distance for c in got} == {1, 3}


def test_cli_contexts_history_and_reply_speaker(tmp_path: Path, tiny_lm, capsys):
    from dialcheck.cli import main

    model, tok = tiny_lm
    model.save_pretrained(tmp_path / "lm")
    tok.save_pretrained(tmp_path / "lm")
    (tmp_path / "in.jsonl").write_text(
        json.dumps({"id": "d1", "turns": ["Hi.", "I have a dog.", "What breed?"]}) + "\n"
    )
    base = ["collect", "contexts", "--input", str(tmp_path / "in.jsonl"), "--lm", str(tmp_path / "lm")]
    base += ["--distances", "1", "--threads", "1", "--no-progress", "--top-k", "1"]
    assert main([*base, "--history", "--reply-speaker", "B", "--out", str(tmp_path / "c.jsonl")]) == 0
    (c,) = read_records(tmp_path / "c.jsonl", CollectionContext)
    assert [t.text for t in c.history] == ["Hi."] and c.referent.text == "I have a dog."
    assert main([*base, "--reply-speaker", "A", "--out", str(tmp_path / "none.jsonl")]) == 2
    assert "no context ends in a question" in capsys.readouterr().err


def _collect_files(tmp_path: Path) -> dict[str, Path]:
    """A replies file, a labels CSV, a released file and a dialogues file for the ``collect`` steps."""
    t = (Turn("A", "I am vegan."), Turn("B", "How was dinner?"))
    write_records(tmp_path / "replies.jsonl", [CollectedReply("r0", "c0", "g", (*t, Turn("A", "steak")))])
    (tmp_path / "a1.csv").write_text("item_id,label\nr0,1\n")
    (tmp_path / "rel.jsonl").write_text(_released_line() + "\n")
    (tmp_path / "in.jsonl").write_text(json.dumps({"id": "d1", "turns": ["I have a dog.", "What breed?"]}) + "\n")
    return {k: tmp_path / k for k in ("replies.jsonl", "a1.csv", "rel.jsonl", "in.jsonl")}


@pytest.mark.parametrize(
    ("argv", "victim", "message"),
    [
        (["export", "--replies", "replies.jsonl", "--out", "replies.jsonl"], "replies.jsonl", "--replies"),
        (["export", "--replies", "replies.jsonl", "--out", "link.jsonl"], "replies.jsonl", "--replies"),
        (["aggregate", "--labels", "a1.csv", "--replies", "replies.jsonl", "--out", "a1.csv"], "a1.csv", "--labels"),
        (["aggregate", "--labels", "a1.csv", "--out", "a1.csv"], "a1.csv", "--labels"),
        (
            ["aggregate", "--labels", "a1.csv", "--replies", "replies.jsonl", "--out", "replies.jsonl"],
            "replies.jsonl",
            "--replies",
        ),
        (["released", "rel.jsonl", "--out", "rel.jsonl"], "rel.jsonl", "FILE"),
        (["contexts", "--input", "in.jsonl", "--out", "in.jsonl"], "in.jsonl", "--input"),
        (["contexts", "--input", "in.jsonl", "--out", "c.jsonl", "--all-scores", "in.jsonl"], "in.jsonl", "--input"),
        (["autolabel", "--replies", "replies.jsonl", "--out", "replies.jsonl"], "replies.jsonl", "--replies"),
        (["responses", "--contexts", "in.jsonl", "--generator", "g=x", "--out", "in.jsonl"], "in.jsonl", "--contexts"),
    ],
)
def test_cli_collect_steps_refuse_to_write_over_their_input(tmp_path: Path, capsys, argv, victim, message):
    from dialcheck.cli import main

    files = _collect_files(tmp_path)
    (tmp_path / "link.jsonl").symlink_to(files["replies.jsonl"])
    before = files[victim].read_bytes()
    names = {*files, "link.jsonl", "c.jsonl"}
    assert main(["collect", *[str(tmp_path / a) if a in names else a for a in argv]]) == 2
    err = capsys.readouterr().err
    assert f"is the {message} input: writing it would destroy the input" in err and "Traceback" not in err
    assert files[victim].read_bytes() == before


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("item_id,label\nr0,1\nr\xf6,0\n".encode("latin-1"), "bad.csv, line 3: not UTF-8 text: byte 0xf6"),
        (b"", "bad.csv: no labels (the file is empty or holds only a header)"),
        (b"item_id,label\n", "bad.csv: no labels"),
    ],
)
@pytest.mark.parametrize("step", ["aggregate", "quiz-gold", "quiz-answers"])
def test_cli_aggregate_and_quiz_name_a_csv_that_is_not_utf8_or_empty(tmp_path: Path, capsys, content, message, step):
    from dialcheck.cli import main

    files = _collect_files(tmp_path)
    bad = tmp_path / "bad.csv"
    bad.write_bytes(content)
    good = str(files["a1.csv"])
    argv = {
        "aggregate": ["aggregate", "--labels", good, str(bad), "--out", str(tmp_path / "agg.jsonl")],
        "quiz-gold": ["quiz", "--gold", str(bad), "--answers", good],
        "quiz-answers": ["quiz", "--gold", good, "--answers", str(bad)],
    }[step]
    assert main(["collect", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "agg.jsonl").exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["autolabel", "--replies", "r.jsonl", "--out", "o.jsonl", "--tau", "3"],
        ["autolabel", "--replies", "r.jsonl", "--out", "o.jsonl", "--tau", "nan"],
        ["quiz", "--gold", "g.csv", "--answers", "a.csv", "--pass-mark", "7"],
        ["export", "--replies", "r.jsonl", "--out", "o.csv", "--rows-per-task", "0"],
        ["export", "--replies", "r.jsonl", "--out", "o.csv", "--seed", "-1"],
        ["aggregate", "--labels", "a.csv", "--min-annotators", "0"],
        ["aggregate", "--labels", "a.csv", "--min-annotators", "-2"],
        ["aggregate", "--labels", "a.csv", "--min-contradictory", "0"],
        ["contexts", "--out", "o.jsonl", "--top-k", "-1"],
        ["contexts", "--out", "o.jsonl", "--random-k", "-1"],
        ["contexts", "--out", "o.jsonl", "--per-dialogue", "-1"],
        ["contexts", "--out", "o.jsonl", "--limit", "-3"],
        ["contexts", "--out", "o.jsonl", "--seed", "-1"],
        ["responses", "--contexts", "c.jsonl", "--out", "o.jsonl", "--max-new-tokens", "0"],
        ["responses", "--contexts", "c.jsonl", "--out", "o.jsonl", "--seed", "-1"],
        ["logo", "--replies", "r.jsonl", "--lora", "-4"],
        ["logo", "--replies", "r.jsonl", "--epochs", "nan"],
        ["logo", "--replies", "r.jsonl", "--seed", "-1"],
        ["analyse", "--contexts", "c.jsonl", "--alpha", "0"],
        ["analyse", "--contexts", "c.jsonl", "--alpha", "1.5"],
        ["contexts", "--out", "o.jsonl", "--threads", "-1"],
        ["responses", "--contexts", "c.jsonl", "--out", "o.jsonl", "--threads", "-1"],
        ["autolabel", "--replies", "r.jsonl", "--out", "o.jsonl", "--threads", "-1"],
        ["logo", "--replies", "r.jsonl", "--threads", "-1"],
    ],
)
def test_cli_collect_refuses_out_of_range_numbers_when_the_command_line_is_read(capsys, argv):
    from dialcheck.cli import main

    with pytest.raises(SystemExit) as e:
        main(["collect", *argv])
    assert e.value.code == 2 and f"argument {argv[-2]}" in capsys.readouterr().err


def test_cli_collect_aggregate_refuses_more_contradictory_votes_than_annotators(capsys, tmp_path):
    from dialcheck.cli import main

    labels = tmp_path / "labels.csv"
    labels.write_text("item_id,annotator,label\nx,a,1\nx,b,1\n")
    argv = ["collect", "aggregate", "--labels", str(labels), "--min-annotators", "2", "--min-contradictory", "3"]
    assert main(argv) == 2  # an item kept with two labels could never reach three contradictory votes
    assert "--min-contradictory 3 is more than --min-annotators 2" in capsys.readouterr().err
    assert main([*argv[:-1], "2"]) == 0 and '"contradictory": 1' in capsys.readouterr().out


def test_cli_collect_contexts_refuses_to_select_nothing_before_reading_anything(capsys, tmp_path):
    from dialcheck.cli import main

    out = tmp_path / "ctx.jsonl"
    argv = ["collect", "contexts", "--input", str(tmp_path / "missing.jsonl"), "--out", str(out), "--top-k", "0"]
    assert main(argv) == 2  # --random-k 0 (the default): the LM would score every candidate to write nothing
    err = capsys.readouterr().err
    assert "--top-k 0 and --random-k 0 select no context" in err and "missing.jsonl" not in err
    assert not out.exists()


def test_cli_collect_aggregate_reports_a_kappa_it_cannot_compute_as_null_with_a_reason(capsys, tmp_path):
    # "fleiss_kappa": "n/a (no subjects)" was a string where the field otherwise holds a number
    from dialcheck.cli import main

    labels = tmp_path / "labels.csv"  # every item has four labels: none has exactly the three kappa is taken over
    labels.write_text("item_id,annotator,label\n" + "".join(f"x{i},a{j},1\n" for i in range(2) for j in range(4)))
    assert main(["collect", "aggregate", "--labels", str(labels)]) == 0
    out, err = capsys.readouterr()
    summary = json.loads(out)
    assert summary["fleiss_kappa"] is None and summary["kappa_items"] == 0
    assert isinstance(summary["fleiss_kappa_unavailable"], str) and "3" in summary["fleiss_kappa_unavailable"]
    assert f"Fleiss' kappa: n/a ({summary['fleiss_kappa_unavailable']})" in err
    labels.write_text("item_id,annotator,label\nx,a,1\ny,a,0\n")  # one annotator: no agreement to measure
    argv = ["collect", "aggregate", "--labels", str(labels), "--min-annotators", "1", "--min-contradictory", "1"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    summary = json.loads(out)
    assert summary["fleiss_kappa"] is None and "2" in summary["fleiss_kappa_unavailable"] and "n/a" in err
    labels.write_text(
        "item_id,annotator,label\n" + "".join(f"x{i},a{j},{(i + j) % 2}\n" for i in range(3) for j in range(3))
    )
    assert main(["collect", "aggregate", "--labels", str(labels)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert isinstance(summary["fleiss_kappa"], float) and "fleiss_kappa_unavailable" not in summary
