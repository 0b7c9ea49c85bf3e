"""CI-ToD: the input builder, row selection, KBI synthesis, metrics, the grounded detector and its routing."""

import json
import random
import re

import numpy as np
import pytest

from dialcheck.detectors.grounded import (
    GroundedDetector,
    build_input,
    dialogue_roles,
    entity_checks,
    knowledge_notes,
    rank_rows,
    split_turns,
)
from dialcheck.errors import InputError
from dialcheck.evaluation.citod import citod_metrics, exact_match
from dialcheck.io import parse_dialogue
from dialcheck.probes.kbi import kbi_candidates, kbi_examples, synthesize_kbi
from dialcheck.schema import Dialogue, Example, KnowledgeBase, Turn
from helpers_cli import run_cli as _run
from helpers_interrupt import kill_on_call

KB = KnowledgeBase(
    (
        {"poi": "the_westin", "distance": "2_miles", "traffic_info": "no_traffic", "poi_type": "rest_stop"},
        {"poi": "whole_foods", "distance": "2_miles", "traffic_info": "heavy_traffic", "poi_type": "grocery_store"},
        {"poi": "hotel_keen", "distance": "6_miles", "traffic_info": "no_traffic", "poi_type": "rest_stop"},
        {"poi": "pizza_hut", "distance": "4_miles", "traffic_info": "moderate_traffic", "poi_type": "pizza_restaurant"},
    )
)
TURNS = (
    Turn("user", "find me a rest_stop"),
    Turn("system", "the_westin is a rest_stop near you"),
    Turn("user", "how far is it"),
    Turn("system", "the_westin is 2_miles away"),
)
NAV = Dialogue(TURNS, KB, {"id": "nav1"})


# -- input builder ---------------------------------------------------------------------------------
def test_input_builder_on_a_fixed_example():
    x = build_input(NAV)
    assert x.first == (
        "[kb] poi the westin distance 2 miles traffic info no traffic poi type rest stop ; "
        "poi whole foods distance 2 miles traffic info heavy traffic poi type grocery store ; "
        "poi hotel keen distance 6 miles traffic info no traffic poi type rest stop ; "
        "poi pizza hut distance 4 miles traffic info moderate traffic poi type pizza restaurant [/kb] "
        "user: find me a rest stop system: the westin is a rest stop near you request: how far is it"
    )
    assert x.second == "the westin is 2 miles away"
    assert (x.rows, x.history, x.request, x.reply) == ((0, 1, 2, 3), (0, 1), 2, 3)


def test_no_history_ablation_keeps_knowledge_request_and_reply_only():
    x = build_input(NAV, history=False)
    assert x.first.endswith("[/kb] request: how far is it") and "user:" not in x.first and x.history == ()
    assert x.second == "the westin is 2 miles away"


def test_marks_flag_values_of_the_reply_and_of_the_context():
    x = build_input(NAV, marks=True)
    assert x.first.startswith("[kb] poi * the westin distance * 2 miles traffic info no traffic poi type # rest stop ;")
    assert "poi hotel keen distance 6 miles traffic info no traffic poi type # rest stop" in x.first
    assert x.second == "the westin is 2 miles away"
    # occluding the history turn that named the rest stop removes its context marks
    y = build_input(NAV, marks=True, rows=x.rows, history_turns=[1])
    assert "poi type # rest stop" in y.first  # still named by system turn 1
    z = build_input(NAV, marks=True, rows=x.rows, history_turns=[])
    assert "# rest stop" not in z.first


def test_entity_checks_name_typed_mismatches_with_request_history_and_knowledge():
    vocab = {"location": ["downtown_chicago", "atherton", "manhattan"], "date": ["today", "tomorrow"]}
    kb = KnowledgeBase(({"location": "manhattan", "date": "monday", "weather_attribute": "frost"},))
    turns = (
        Turn("user", "will there be frost today"),
        Turn("system", "which city?"),
        Turn("user", "downtown_chicago"),
        Turn("system", "there will be no frost for atherton tomorrow"),
    )
    checks = dict(entity_checks(turns[3].text, turns[2].text, [t.text for t in turns[:2]], kb, vocab))
    # atherton: the request names another city and the table has cities but not this one
    assert checks["atherton"] == {"request": "other", "kb": "absent"}
    # tomorrow: the history said today; the table has dates, not this one
    assert checks["tomorrow"] == {"history": "other", "kb": "absent"}
    assert checks["frost"] == {"history": "same", "kb": "same"}
    d = Dialogue(turns, kb)
    x = build_input(d, checks=True, vocabulary=vocab)
    assert x.second == (
        "there will be no frost for atherton tomorrow [check] frost: history same, kb same ; "
        "atherton: request other, kb absent ; tomorrow: history other, kb absent"
    )
    assert build_input(d).second == "there will be no frost for atherton tomorrow"  # off by default


def test_entity_checks_compare_with_the_row_the_reply_is_about():
    reply = "the_westin is 6_miles away with heavy_traffic"
    checks = dict(entity_checks(reply, "how far is it", [], KB))
    assert checks["the westin"] == {"kb": "same"}
    # both values exist in the table, but in other rows than the westin's
    assert checks["6 miles"] == {"kb": "other"} and checks["heavy traffic"] == {"kb": "other"}
    assert dict(entity_checks("the_westin is 2_miles away", None, [], KB))["2 miles"] == {"kb": "same"}
    # restricted to rows without the westin (occlusion), its distance is only "same" somewhere else
    assert dict(entity_checks(reply, None, [], KB, rows=[1, 3])).get("the westin") is None
    # clock times match whatever their spelling; nothing typed, nothing said
    cal = KnowledgeBase(({"event": "dinner", "time": "7_pm"},))
    assert dict(entity_checks("dinner is at 7pm", None, [], cal))["7pm"] == {"kb": "same"}
    assert entity_checks("you are welcome", "thanks", [], cal) == []


def test_checks_option_is_used_by_build():
    det = GroundedDetector(checks=True, vocabulary={"poi": ["hotel_keen"]})
    assert det.build(NAV).second.startswith("the westin is 2 miles away [check] the westin: history same")
    reply = Dialogue((*TURNS[:3], Turn("system", "hotel_keen is 2_miles away")), KB)
    assert "hotel keen: kb other" not in det.build(reply).second  # hotel_keen is the reply's own row
    assert "2 miles: kb other" in det.build(reply).second


def test_roles_from_names_or_alternation_and_a_trailing_user_turn():
    d = Dialogue.from_texts(["a", "b", "c"], speakers=("A", "B"))
    assert dialogue_roles(d) == ["system", "user", "system"]
    ends_with_user = Dialogue((*TURNS, Turn("user", "thanks")), KB)
    assert split_turns(ends_with_user) == ([0, 1, 2, 3], 4, None)
    assert build_input(ends_with_user).second == ""


def test_empty_and_dash_cells_are_left_out_and_empty_kb_keeps_delimiters():
    d = Dialogue(TURNS, KnowledgeBase(({"event": "dinner", "room": "-", "party": ""},)))
    assert build_input(d).first.startswith("[kb] event dinner [/kb] user:")
    assert build_input(Dialogue(TURNS, KnowledgeBase(()))).first.startswith("[kb] [/kb] user:")
    assert build_input(Dialogue(TURNS)).first.startswith("[kb] [/kb] user:")


# -- row selection ---------------------------------------------------------------------------------
def test_rank_rows_weights_rare_values_higher():
    ranked = rank_rows(KB, [t.text for t in TURNS])
    # row 0: the_westin (1), 2_miles (1/2), no_traffic? no, rest_stop (1/2) -> 2.0; row 2: rest_stop 1/2;
    # row 1: 2_miles 1/2; row 3: nothing
    assert ranked == [(0, 2.0), (1, 0.5), (2, 0.5), (3, 0.0)]


def words(text):
    return len(text.split())


def test_budget_keeps_the_relevant_rows_with_selection_and_a_prefix_without():
    # delimiters, history and request cost 22 words, the reply 6, each row 14 + 1 separator: 60 fits two rows
    sel = build_input(NAV, budget=60, token_len=words, selection="overlap")
    plain = build_input(NAV, budget=60, token_len=words, selection="none")
    assert sel.rows == (0, 1)
    assert plain.rows == (0, 1)
    reply_about_keen = Dialogue((*TURNS[:3], Turn("system", "hotel_keen is 6_miles away")), KB)
    assert build_input(reply_about_keen, budget=60, token_len=words).rows == (0, 2)
    assert build_input(reply_about_keen, budget=60, token_len=words, selection="none").rows == (0, 1)
    assert build_input(reply_about_keen, budget=57, token_len=words).rows == (2,)
    tight = build_input(reply_about_keen, budget=10, token_len=words)
    assert tight.rows == () and tight.first.startswith("[kb] [/kb]")


def test_selected_rows_are_shown_in_knowledge_base_order():
    d = Dialogue((Turn("user", "is pizza_hut or the_westin closer"), Turn("system", "pizza_hut")), KB)
    x = build_input(d, budget=45, token_len=words)
    assert x.rows == (0, 3)
    assert x.first.index("westin") < x.first.index("pizza")


# -- KBI synthesis ---------------------------------------------------------------------------------
def test_kbi_synthesis_replaces_an_unmentioned_value_with_a_conflicting_one():
    edit = synthesize_kbi(NAV, random.Random(0))
    assert edit is not None
    # the_westin is in the history, so only 2_miles can change; 2_miles -> 6_miles or 4_miles
    assert edit.column == "distance" and edit.original == "2_miles"
    assert edit.replacement in {"6_miles", "4_miles"} and edit.rows == (0,)
    assert edit.dialogue.last.text == f"the_westin is {edit.replacement} away"
    assert edit.dialogue.turns[:3] == NAV.turns[:3] and edit.dialogue.knowledge == KB


def test_kbi_synthesis_never_picks_a_value_that_an_anchor_row_agrees_with():
    d = Dialogue((Turn("user", "any rest_stop?"), Turn("system", "hotel_keen has no_traffic")), KB)
    cands = kbi_candidates(d)
    assert [(c.column, c.value, c.rows) for c in cands] == [
        ("poi", "hotel_keen", (2,)),
        ("traffic_info", "no_traffic", (2,)),
    ]
    seen = set()
    for seed in range(30):
        edit = synthesize_kbi(d, random.Random(seed))
        seen.add(edit.replacement)
    # the_westin is also a rest stop with no traffic, so "the_westin has no_traffic" would be consistent
    assert seen == {"whole_foods", "pizza_hut", "heavy_traffic", "moderate_traffic"}


def test_kbi_synthesis_gives_up_without_an_anchor_or_a_knowledge_base():
    no_anchor = Dialogue((Turn("user", "hello"), Turn("system", "pizza_hut")), KB)
    assert synthesize_kbi(no_anchor, random.Random(0)) is None
    assert synthesize_kbi(Dialogue(TURNS), random.Random(0)) is None
    assert synthesize_kbi(Dialogue(TURNS[:3]), random.Random(0)) is None


def test_kbi_examples_label_kbi_and_keep_the_other_labels():
    clean = Example(NAV, False, (), None, "nav1", {"QI": True, "HI": False, "KBI": False})
    already = Example(NAV, True, (), "KBI", "nav2", {"QI": False, "HI": False, "KBI": True})
    out = kbi_examples([clean, already], random.Random(0))
    assert len(out) == 1
    ex, edit = out[0]
    assert ex.labels == {"QI": True, "HI": False, "KBI": True} and ex.label and ex.category == "QI+KBI"
    assert ex.id == "nav1+kbi" and ex.dialogue.meta["id"] == "nav1+kbi" and edit.dialogue is ex.dialogue


# -- metrics -------------------------------------------------------------------------------------
def test_metrics_against_hand_computed_values():
    gold = [
        {"QI": 1, "HI": 0, "KBI": 1},
        {"QI": 0, "HI": 0, "KBI": 0},
        {"QI": 1, "HI": 1, "KBI": 0},
        {"QI": 0, "HI": 0, "KBI": 1},
        {"QI": 0, "HI": 0, "KBI": 0},
    ]
    pred = [
        {"QI": 1, "HI": 0, "KBI": 1},  # exact
        {"QI": 1, "HI": 0, "KBI": 0},  # QI false positive
        {"QI": 1, "HI": 0, "KBI": 0},  # HI missed
        {"QI": 0, "HI": 0, "KBI": 1},  # exact
        {"QI": 0, "HI": 0, "KBI": 0},  # exact
    ]
    m = citod_metrics(gold, pred)
    # QI: TP 2, FP 1, FN 0 -> P 2/3, R 1, F1 0.8; HI: TP 0 -> 0; KBI: TP 2 -> 1, 1, 1
    assert m["QI_precision"] == pytest.approx(2 / 3) and m["QI_recall"] == 1.0 and m["QI_f1"] == pytest.approx(0.8)
    assert (m["HI_precision"], m["HI_recall"], m["HI_f1"]) == (0.0, 0.0, 0.0)
    assert (m["KBI_precision"], m["KBI_recall"], m["KBI_f1"]) == (1.0, 1.0, 1.0)
    assert m["overall_accuracy"] == pytest.approx(0.6) and m["n"] == 5
    with pytest.raises(ValueError):
        exact_match(gold, pred[:2], ["QI"])


# -- the corpus adapter ----------------------------------------------------------------------------
def test_citod_splits_have_the_manifest_counts(data_root):
    from dialcheck.datasets import load_dataset

    expected = {  # records, QI, HI, KBI (MANIFEST.md, equal to the CI-ToD README)
        "citod.calendar.train.v1": (595, 174, 56, 177),
        "citod.calendar.test.v1": (74, 23, 8, 21),
        "citod.navigate.train.v1": (1110, 453, 386, 591),
        "citod.navigate.test.v1": (138, 48, 44, 71),
        "citod.weather.dev.v1": (106, 81, 14, 66),
        "citod.weather.test.v1": (106, 72, 12, 69),
    }
    for name, (n, qi, hi, kbi) in expected.items():
        data = load_dataset(name, data_root)
        assert len(data) == n
        assert [sum(e.labels[k] for e in data) for k in ("QI", "HI", "KBI")] == [qi, hi, kbi]
    ex = load_dataset("citod.weather.test.v1", data_root)[0]
    assert {t.speaker for t in ex.dialogue.turns} <= {"user", "system"}
    assert len(ex.dialogue.knowledge) == 49 and ex.dialogue.meta["domain"] == "weather"
    assert ex.label == any(ex.labels.values())


def test_weather_train_is_reported_missing():
    from dialcheck.datasets.citod import citod_file

    with pytest.raises(InputError, match="never released"):
        citod_file("weather", "train")


def test_malformed_corpus_records_name_the_record(tmp_path):
    from dialcheck.datasets.citod import load_citod_file

    p = tmp_path / "x.json"
    p.write_text(json.dumps([{"dialogue": [{"turn": "driver", "utterance": "hi"}], "scenario": {"qi": "2"}}]))
    with pytest.raises(InputError, match=r"record 0: scenario.qi: expected '0' or '1'"):
        load_citod_file(p, "navigate", "test")


def test_malformed_corpus_records_name_the_line_they_start_on(tmp_path):
    # the error named only the record's position in the list ("record 2"): in a pretty-printed file of thousands
    # of lines, the user had to count records to find it
    from dialcheck.datasets.citod import load_citod_file

    good = {"dialogue": [{"turn": "driver", "utterance": "hi"}], "scenario": {"qi": "0", "hi": "0", "kbi": "0"}}
    bad = dict(good, scenario={"qi": "0", "hi": "yes", "kbi": "0"})
    text = json.dumps([good, good, bad], indent=4)
    starts = [n for n, ln in enumerate(text.splitlines(), 1) if ln == "    {"]  # each record's opening brace
    assert len(starts) == 3 and starts[0] == 2
    p = tmp_path / "navigate_dev.json"
    p.write_text(text)
    with pytest.raises(InputError) as e:
        load_citod_file(p, "navigate", "dev")
    assert str(e.value) == f"{p}, line {starts[2]}: record 2: scenario.hi: expected '0' or '1', got 'yes'"
    assert (e.value.source, e.value.line) == (str(p), starts[2])
    one = json.dumps(good)
    p.write_text("[\n" + one + ",\n\n" + json.dumps({"dialogue": []}) + "\n]\n")
    with pytest.raises(InputError, match=r", line 4: record 1: dialogue: expected a non-empty list of turns$"):
        load_citod_file(p, "navigate", "dev")
    # broken JSON is named where it breaks, as json.loads names it; a document that is no list says so
    for text, message in [
        ("[\n" + one + "\n" + one + "\n]", r", line 3: invalid JSON \(Expecting ',' delimiter"),
        ("[\n" + one + ",\n{", r", line 3: invalid JSON \(Expecting property name"),
        ("[]\n]", r", line 2: invalid JSON \(Extra data at column 1\)"),
        (one, r": expected a JSON list of dialogues$"),
    ]:
        p.write_text(text)
        with pytest.raises(InputError, match=re.escape(str(p)) + message):
            load_citod_file(p, "navigate", "dev")
    p.write_text(" [ ]\n")
    assert load_citod_file(p, "navigate", "dev") == []


@pytest.mark.parametrize(
    ("scenario", "message"),
    [
        # true == 1 and 1.0 == 1 passed the check, then str(value) != "1" read them as 0: a silent wrong label
        ({"qi": True}, "scenario.qi: expected '0' or '1', got boolean"),  # JSON's names, not Python's True
        ({"qi": None}, "scenario.qi: expected '0' or '1', got null"),
        ({"hi": 1.0}, "scenario.hi: expected '0' or '1', got 1.0"),
        # a bare AttributeError ('list' object has no attribute 'get')
        ({"kb": ["row"]}, "scenario.kb: expected an object, got list"),
        ({"kb": {"items": {"event": "x"}}}, "scenario.kb.items: expected a list, got object"),
    ],
)
def test_corpus_flags_and_knowledge_of_the_wrong_type_are_refused(tmp_path, scenario, message):
    from dialcheck.datasets.citod import load_citod_file

    good = {"kb": {"items": [{"event": "meeting"}]}, "qi": "0", "hi": "1", "kbi": 0}
    record = {"dialogue": [{"turn": "driver", "utterance": "hi"}], "scenario": good}
    p = tmp_path / "x.json"
    p.write_text(json.dumps([record, dict(record, scenario=good | scenario)]))
    with pytest.raises(InputError) as e:
        load_citod_file(p, "calendar", "dev")
    assert str(e.value) == f"{p}, line 1: record 1: {message}"  # one line: both records start on it
    p.write_text(json.dumps([record]))
    (ex,) = load_citod_file(p, "calendar", "dev")
    assert ex.labels == {"QI": False, "HI": True, "KBI": False} and ex.dialogue.knowledge.rows == (
        {"event": "meeting"},
    )


# -- bad knowledge input ---------------------------------------------------------------------------
def test_knowledge_values_become_strings_and_nested_values_are_refused():
    d = parse_dialogue({"turns": ["hi"], "knowledge": [{"poi": "x", "distance": 5, "open": True, "note": None}]})
    assert dict(d.knowledge.rows[0]) == {"poi": "x", "distance": "5", "open": "yes", "note": ""}
    with pytest.raises(InputError, match=r"knowledge\[0\]\.poi: expected a flat value"):
        parse_dialogue({"turns": ["hi"], "knowledge": [{"poi": {"name": "x"}}]})
    with pytest.raises(InputError, match=r"knowledge\[1\]: expected an object"):
        parse_dialogue({"turns": ["hi"], "knowledge": [{"poi": "x"}, "y"]})
    with pytest.raises(InputError, match="knowledge: expected a list of records"):
        parse_dialogue({"turns": ["hi"], "knowledge": {"poi": "x"}})


def test_ragged_and_empty_knowledge_get_plain_notes():
    kb = KnowledgeBase(({"poi": "a", "distance": "1"}, {"poi": "b", "distance": "2"}, {"poi": "c", "x": "y"}, {}))
    notes = knowledge_notes(kb)
    assert notes == [
        "knowledge[2] lacks column(s) distance that other rows have; it is used with the columns it has",
        "knowledge[2] has column(s) x that most rows lack; they are kept",
        "knowledge[3] is empty and is ignored",
    ]
    assert "empty" in knowledge_notes(KnowledgeBase(()))[0]
    assert knowledge_notes(None) == [] and knowledge_notes(KB) == []
    x = build_input(Dialogue(TURNS, kb))
    assert x.rows == (0, 1, 2) and "poi c x y" in x.first


# -- the detector with a rule in place of the network --------------------------------------------
class RuleCore:
    """Stands in for the network: QI if the reply says 'pizza', HI if a system turn said 'no traffic' and the
    reply says 'heavy traffic', KBI if the westin row is shown and the reply puts the westin at 6 miles."""

    tokenizer = None
    max_length = 256

    def __init__(self):
        self.labels = ["QI", "HI", "KBI"]
        self.calls = []

    def proba(self, pairs, batch_size=32, show_progress_bar=False):
        self.calls.append(list(pairs))
        out = []
        for first, second in pairs:
            qi = 0.9 if "pizza" in second else 0.1
            hi = 0.8 if "system: the westin has no traffic" in first and "heavy traffic" in second else 0.2
            kbi = 0.95 if "poi the westin distance 2 miles" in first and "westin is 6 miles" in second else 0.05
            out.append([qi, hi, kbi])
        return np.array(out, dtype=np.float32)


def _rule_detector(**kw):
    det = GroundedDetector(**kw)
    det._clf = RuleCore()
    return det


def test_labels_scores_and_evidence_by_occlusion():
    turns = (
        Turn("user", "is there a rest_stop"),
        Turn("system", "the_westin has no_traffic"),
        Turn("user", "how far is it"),
        Turn("system", "the_westin is 6_miles away with heavy_traffic"),
    )
    (v,) = _rule_detector().predict([Dialogue(turns, KB)])
    assert v.labels == {"QI": False, "HI": True, "KBI": True} and v.contradiction and v.category == "HI+KBI"
    assert v.label_scores["KBI"] == pytest.approx(0.95) and v.score == pytest.approx(0.95)
    assert v.evidence == (1,) and v.pair_scores[1] == pytest.approx(0.6) and v.pair_scores[0] == 0.0
    assert v.knowledge_evidence == (0,) and v.knowledge_scores[0] == pytest.approx(0.9)
    assert set(v.knowledge_scores) == {0, 1, 2, 3}
    d = v.to_dict()
    assert d["labels"] == {"QI": False, "HI": True, "KBI": True} and d["knowledge_evidence"] == [0]
    assert d["contradiction"] is True and set(d["label_scores"]) == {"QI", "HI", "KBI"}


class RowBlindCore(RuleCore):
    """KBI fires on the reply alone, so leaving a row out never changes it (occlusion finds no row)."""

    def proba(self, pairs, batch_size=32, show_progress_bar=False):
        return np.array([[0.1, 0.1, 0.95 if "6 miles" in second else 0.05] for _, second in pairs], dtype=np.float32)


def test_kbi_evidence_with_checks_is_the_row_the_reply_contradicts():
    turns = (Turn("user", "how far is the_westin"), Turn("system", "the_westin is 6_miles away"))
    verdicts = []
    for checks in (False, True):
        det = GroundedDetector(checks=checks)
        det._clf = RowBlindCore()
        verdicts.append(det.predict([Dialogue(turns, KB)])[0])
    plain, checked = verdicts
    assert plain.labels["KBI"] and plain.knowledge_evidence == ()
    # "6 miles: kb other": the westin's row (0) says 2 miles, hotel keen's row (2) has 6 miles
    assert checked.labels["KBI"] and checked.knowledge_evidence == (0,)


def test_consistent_reply_and_query_evidence():
    det = _rule_detector()
    ok, qi = det.predict([NAV, Dialogue((*TURNS[:3], Turn("system", "pizza_hut is 4_miles away")), KB)], evidence=True)
    assert not ok.contradiction and ok.labels == {"QI": False, "HI": False, "KBI": False}
    assert ok.evidence == () and ok.knowledge_evidence == () and ok.category is None
    assert qi.labels["QI"] and qi.evidence == (2,)
    assert len(det._clf.calls) == 1  # nothing fired that needs occlusion passes


def test_thresholds_per_label_and_tau():
    det = _rule_detector(tau=0.5)
    det.config.thresholds["KBI"] = 0.99
    turns = (*TURNS[:3], Turn("system", "the_westin is 6_miles away"))
    (v,) = det.predict([Dialogue(turns, KB)])
    assert not v.labels["KBI"]
    det.config.thresholds["KBI"] = 0.99
    det.config.thresholds["QI"] = 0.04
    (v,) = det.predict([Dialogue(turns, KB)], evidence=False)
    assert v.labels["QI"] and not v.labels["KBI"]
    det.tau = 0.04  # --tau moves all three labels: per-label thresholds are dropped
    assert det.tau == 0.04 and not {"QI", "KBI"} & set(det.config.thresholds)
    (v,) = det.predict([Dialogue(turns, KB)], evidence=False)
    assert v.labels == {"QI": True, "HI": True, "KBI": True}


def test_dialogue_without_knowledge_has_no_knowledge_fields():
    (v,) = _rule_detector().predict([Dialogue(TURNS)])
    assert v.knowledge_evidence is None and "knowledge_evidence" not in v.to_dict()


# -- a real (tiny, random) network: save, load, train, CLI ---------------------------------------
@pytest.fixture(scope="module")
def tiny_grounded_dir(tiny_base, tmp_path_factory):
    import torch

    from dialcheck.detectors.modeling import build_model

    torch.manual_seed(0)
    det = GroundedDetector(base=str(tiny_base), adapter={"type": "lora", "r": 4, "alpha": 8}, max_length=96)
    det.attach(*build_model(det.config))
    out = tmp_path_factory.mktemp("models") / "tiny-grounded"
    det.save(out)
    return out


def test_saved_grounded_detector_reloads_and_respects_the_window(tiny_grounded_dir):
    from dialcheck.detectors import load_detector

    a, b = load_detector(tiny_grounded_dir), load_detector(tiny_grounded_dir)
    assert isinstance(a, GroundedDetector) and a.config.problem_type == "multi_label_classification"
    big = KnowledgeBase(tuple({"location": f"city_{i}", "date": "monday", "weather": "rain"} for i in range(40)))
    d = Dialogue((Turn("user", "rain in city_7 on monday?"), Turn("system", "yes, rain in city_7")), big)
    x = a.build(d)
    assert 0 < len(x.rows) < 40 and 7 in x.rows
    assert a.classifier.encode([(x.first, x.second)])["input_ids"].shape[1] <= 96
    va, vb = a.predict([d])[0], b.predict([d])[0]
    assert va.label_scores == pytest.approx(vb.label_scores)


def test_training_learns_label_priors_in_the_right_order(tiny_base, tmp_path):
    """QI is always on and HI always off in the toy data: the trained scores must say so, label by label."""
    from dialcheck.detectors import load_detector
    from dialcheck.training import TrainConfig
    from dialcheck.training.citod import CitodTrainingData, train_grounded

    rng = random.Random(0)
    examples = []
    for i in range(96):
        km = rng.choice(["2_miles", "6_miles", "4_miles"])
        d = Dialogue((Turn("user", "how far is the_westin"), Turn("system", f"it is {km} away")), KB)
        labels = {"QI": True, "HI": False, "KBI": km != "2_miles"}
        examples.append(Example(d, True, (), None, str(i), labels))
    data = CitodTrainingData(examples[:64], examples[64:])
    det = GroundedDetector(base=str(tiny_base), adapter={"type": "lora", "r": 8, "alpha": 16}, max_length=128)
    cfg = TrainConfig(epochs=4, batch_size=16, lr=1e-2, eval_every=8, patience=20, threads=1)
    train_grounded(det, data, cfg, data_info={"command": "test"})
    assert det.config.metrics["val_QI_f1"] == 1.0 and det.config.metrics["val_HI_precision"] == 0.0
    assert det.config.training["steps"] == 16 and det.config.training["command"] == "test"
    assert det.config.training["history"][-1]["val_score"] >= det.config.training["history"][0]["val_score"]
    det.save(tmp_path / "m")
    (v,) = load_detector(tmp_path / "m").predict([examples[70].dialogue])
    assert v.label_scores["QI"] > 0.5 > v.label_scores["HI"] and v.label_scores["QI"] - v.label_scores["HI"] > 0.3


def test_an_interrupted_grounded_run_resumes_to_the_same_model(tiny_base, tmp_path, monkeypatch, caplog):
    import logging

    import torch

    from dialcheck.training import TrainConfig, citod

    examples = []
    for i in range(48):
        km = ["2_miles", "6_miles", "4_miles"][i % 3]
        d = Dialogue((Turn("user", "how far is the_westin"), Turn("system", f"it is {km} away")), KB)
        examples.append(Example(d, True, (), None, str(i), {"QI": True, "HI": False, "KBI": km != "2_miles"}))
    data = citod.CitodTrainingData(examples[:32], examples[32:])
    cfg = TrainConfig(epochs=3, batch_size=8, lr=1e-2, eval_every=4, patience=20, threads=1)

    def fit(state, resume=False):
        torch.manual_seed(0)
        det = GroundedDetector(base=str(tiny_base), adapter={"type": "lora", "r": 4, "alpha": 8}, max_length=96)
        return citod.train_grounded(det, data, cfg, resume_dir=state, resume=resume)

    whole = fit(tmp_path / "whole")
    with monkeypatch.context() as m:  # validations at steps 4, 8, 12: the state is at 4
        kill_on_call(m, citod, "citod_metrics", 2)
        with pytest.raises(KeyboardInterrupt):
            fit(tmp_path / "cut")
    with caplog.at_level(logging.INFO, logger="dialcheck"):
        resumed = fit(tmp_path / "cut", resume=True)
    assert "resuming at step 4 of 12" in caplog.text
    steps = [[h["step"] for h in d.config.training["history"]] for d in (whole, resumed)]
    assert steps[0] == steps[1] == [4, 8, 12]
    (a,), (b,) = whole.predict([examples[40].dialogue]), resumed.predict([examples[40].dialogue])
    assert a.label_scores == pytest.approx(b.label_scores, abs=1e-6)


TOD_INPUT = {
    "id": "t1",
    "turns": [{"speaker": "user", "text": "how far is the westin"}, {"speaker": "system", "text": "6 miles"}],
    "knowledge": [{"poi": "the westin", "distance": "2 miles"}, {"poi": "hotel keen"}],
}


def test_check_json_carries_labels_and_contradiction_is_any_label(capsys, tmp_path, tiny_grounded_dir):
    p = tmp_path / "tod.json"
    p.write_text(json.dumps(TOD_INPUT))
    code, out, err = _run(capsys, "check", str(p), "--json", "--model", str(tiny_grounded_dir), "--tau", "0")
    assert code == 0
    rec = json.loads(out)
    assert rec["id"] == "t1" and rec["labels"] == {"QI": True, "HI": True, "KBI": True} and rec["contradiction"]
    assert isinstance(rec["knowledge_evidence"], list) and set(rec["label_scores"]) == {"QI", "HI", "KBI"}
    assert "knowledge[1] lacks column(s) distance" in err
    code, out, _ = _run(capsys, "check", str(p), "--model", str(tiny_grounded_dir), "--tau", "0")
    assert out.startswith("t1: CONTRADICTION: QI, HI, KBI (QI ")
    assert 'QI: does not fit the request [0] user: "how far is the westin"' in out
    code, out, _ = _run(capsys, "check", str(p), "--model", str(tiny_grounded_dir), "--tau", "1")
    assert out.startswith("t1: consistent (QI ")


def test_check_refuses_nested_knowledge_with_exit_2(capsys, tmp_path, tiny_grounded_dir):
    bad = {**TOD_INPUT, "knowledge": [{"poi": ["a", "b"]}]}
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(bad))
    code, out, err = _run(capsys, "check", str(p), "--model", str(tiny_grounded_dir))
    assert code == 2 and out == "" and "knowledge[0].poi: expected a flat value" in err and "Traceback" not in err


def test_knowledge_routes_to_the_task_oriented_default(monkeypatch, tiny_grounded_dir, tiny_detector_dir):
    from dialcheck import api

    paths = {"en": tiny_detector_dir, "tod": tiny_grounded_dir}
    monkeypatch.setattr(api, "default_model_path", lambda language="en": paths[language])
    dialogues = [
        parse_dialogue(TOD_INPUT),
        parse_dialogue(["I have two dogs.", "Nice.", "I never had dogs."]),
        parse_dialogue({"turns": ["where is it", "there"], "knowledge": []}),
    ]
    vs = api.predict(dialogues)
    assert [v.labels is not None for v in vs] == [True, False, True]
    assert vs[2].knowledge_evidence == ()
    assert api.check(TOD_INPUT).labels is not None


def test_train_and_evaluate_commands_for_citod(capsys, tmp_path, tiny_base, data_root):
    out = tmp_path / "m"
    code, _, err = _run(
        capsys, "train", "--task", "citod", "--out", str(out), "--base", str(tiny_base), "--limit", "16",
        "--epochs", "1", "--lora", "4", "--max-length", "96", "--threads", "1", "--no-progress",
        "--data-dir", str(data_root), "--calibrate-thresholds",
    )  # fmt: skip
    assert code == 0, err
    cfg = json.loads((out / "dialcheck.json").read_text())
    # the entity vocabulary travels with the model (relative days from kvret_entities.json included)
    assert cfg["options"]["checks"] is True and {"tomorrow", "the_1st"} <= set(cfg["options"]["vocabulary"]["date"])
    assert "entity checks on" in (out / "MODEL_CARD.md").read_text()
    assert cfg["detector"] == "citod.grounded.v1" and cfg["labels"] == ["QI", "HI", "KBI"]
    assert cfg["training"]["calibrate_thresholds"] is True
    assert all(0.1 <= cfg["thresholds"][lab] <= 0.9 for lab in ("QI", "HI", "KBI"))
    assert "set on the calendar + navigate dev sets" in (out / "MODEL_CARD.md").read_text()
    assert cfg["training"]["command"].startswith("dialcheck train ") and "kbi_synthesized" in cfg["training"]["counts"]
    assert "weather unseen" in cfg["training"]["data"]
    res = tmp_path / "r.json"
    code, table, err = _run(
        capsys, "evaluate", "--benchmark", "citod", "--model", str(out), "--limit", "6", "--json", str(res),
        "--data-dir", str(data_root), "--no-progress",
    )  # fmt: skip
    assert code == 0, err
    r = json.loads(res.read_text())
    assert r["primary_metric"] == "all/overall_accuracy" and r["all/n"] == 18 and r["weather/n"] == 6
    assert "weather (unseen in training)" in table and "SGDCI" in table
    assert r["entity_checks"] is True and r["vocabulary"] is True
    code, _, err = _run(
        capsys, "evaluate", "--benchmark", "citod", "--model", str(out), "--limit", "2", "--splits", "calendar",
        "--no-vocabulary", "--json", str(res), "--data-dir", str(data_root), "--no-progress",
    )  # fmt: skip
    assert code == 0, err
    assert json.loads(res.read_text())["vocabulary"] is False
    code, _, err = _run(capsys, "train", "--task", "citod", "--out", str(tmp_path / "w"), "--domains", "weather")
    assert code == 2 and "no labelled weather train split" in err


def test_vocabulary_option_types_values_the_table_lacks(tmp_path):
    from argparse import Namespace

    from dialcheck.cli.common import configure

    path = tmp_path / "v.json"
    path.write_text('{"poi": ["hilton"]}')
    det = GroundedDetector(checks=True)
    d = Dialogue((Turn("user", "how far is the_westin"), Turn("system", "the hilton is 2_miles away")), KB)
    assert "hilton:" not in det.build(d).second  # untyped: neither a column value nor in a vocabulary
    configure(det, Namespace(tau=None, eta_e=None, vocabulary=str(path)))
    assert "hilton: request other, kb absent" in det.build(d).second


@pytest.mark.parametrize(
    ("content", "expected"),
    [('{"city": "boston"}', "city: expected a list"), ('{"city": [["x"]]}', "city[0]: expected a string"),
     ("[1, 2]", "expected a JSON object"), ('{"city": [', "invalid JSON")],
)  # fmt: skip
def test_bad_vocabulary_file_is_a_user_error_naming_the_file_and_field(capsys, tmp_path, content, expected):
    path = tmp_path / "vocab.json"
    path.write_text(content)
    src = tmp_path / "d.json"
    src.write_text(json.dumps(TOD_INPUT))
    code, _, err = _run(capsys, "check", str(src), "--vocabulary", str(path))
    assert code == 2 and "vocab.json" in err and expected in err and "Traceback" not in err


@pytest.mark.parametrize("extra", [["--epochs", "0"], ["--init", "SAVED", "--epochs", "1"]])
def test_train_citod_refuses_init_and_no_epochs_before_reading_data(capsys, tmp_path, tiny_detector_dir, extra):
    # --epochs 0 saved the untrained adapter and head with exit 0; --init was dropped without a word
    extra = [str(tiny_detector_dir) if x == "SAVED" else x for x in extra]
    out = tmp_path / "m"
    argv = ["train", "--task", "citod", "--out", str(out), "--limit", "4", "--no-progress"]
    code, _, err = _run(capsys, *argv, *extra, "--data-dir", str(tmp_path / "no-data"))
    assert code == 2 and ("--epochs 0 recalibrates" in err or "--init does not apply to --task citod" in err), err
    assert not out.exists() or not any(out.iterdir())


class _SaysKbi:
    """A stand-in grounded detector: flags KBI (naming knowledge row 0) or nothing."""

    def __init__(self, kbi: bool):
        self.kbi = kbi

    def predict(self, dialogues, batch_size=32, show_progress_bar=False, evidence=False):
        from dialcheck.schema import Verdict

        labels = {"QI": False, "HI": False, "KBI": self.kbi}
        return [Verdict(self.kbi, 0.9 if self.kbi else 0.1, labels=labels, knowledge_evidence=(0,)) for _ in dialogues]


def test_kbi_probe_alone_names_a_primary_metric_it_holds_and_no_evidence_numbers_without_flags(data_root):
    # --splits kbi_probe gave "primary_metric": "all/overall_accuracy", a key its results did not hold, and a probe
    # run that flagged nothing reported its knowledge evidence "(of flagged)" as 0.000
    from dialcheck.evaluation.citod import CitodEvaluator, to_markdown

    ev = CitodEvaluator(["kbi_probe"], data_root, limit=4)
    quiet = ev(_SaysKbi(False))
    assert quiet["kbi_probe/KBI_recall"] == 0.0 and quiet["kbi_probe/flagged"] == 0.0
    assert "kbi_probe/kb_evidence_f1" not in quiet and "kbi_probe/kb_evidence_hit" not in quiet
    assert ev.primary_of(quiet) == "kbi_probe/KBI_recall"
    table = to_markdown(quiet)
    assert "| knowledge evidence F1 (of flagged) | none flagged |" in table
    loud = ev(_SaysKbi(True))
    n = loud["kbi_probe/n"]
    assert n > 0 and loud["kbi_probe/flagged"] == n and loud["kbi_probe/KBI_recall"] == 1.0
    assert 0.0 <= loud["kbi_probe/kb_evidence_hit"] <= 1.0 and "none flagged" not in to_markdown(loud)
    # with a test set evaluated the pooled accuracy stays the primary metric
    assert CitodEvaluator(["calendar", "kbi_probe"]).primary_of({**loud, "all/overall_accuracy": 0.5}) == (
        "all/overall_accuracy"
    )


def test_kbi_probe_limit_is_its_first_n_dialogues_of_the_full_probe(data_root):
    # --limit N made the probe from the first N dialogues of each test set, of which only the KBI-free ones are
    # probe dialogues: "--limit 4" evaluated 3 and "--limit 50" 28, not the N a user asked for
    from dialcheck.datasets.citod import load_citod
    from dialcheck.evaluation.citod import CitodEvaluator

    full, full_rows = CitodEvaluator(["kbi_probe"], data_root).probe()
    assert len(full) > 50
    for n in (4, 50):
        ev = CitodEvaluator(["kbi_probe"], data_root, limit=n)
        probe, rows = ev.probe()
        assert [e.id for e in probe] == [e.id for e in full[:n]] and rows == full_rows[:n]  # a full run's first N
        assert ev(_SaysKbi(True))["kbi_probe/n"] == n
    calendar = CitodEvaluator(["calendar"], data_root, limit=4)._examples("calendar")  # a test set: still its first N
    assert [e.id for e in calendar] == [e.id for e in load_citod(data_root, "calendar", "test")[:4]]
