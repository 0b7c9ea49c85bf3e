"""benchmarks/same_subject_dialogues.py: two facts about one relative or pet, consistent or not."""

import json
import random
import re

from dialcheck.io import parse_example
from dialcheck.training.data import labelled_dialogue_pairs


def _conflict(mod, a, b):
    """Whether two (kind, value) facts about one subject conflict, by the script's own definition."""
    (k1, v1), (k2, v2) = a, b
    antonyms = {frozenset(t) for t in mod.TRAITS}
    if {k1, k2} == {"likes", "dislikes"}:
        return v1 == v2
    if k1 == k2 == "trait":
        return frozenset((v1, v2)) in antonyms
    return k1 == k2 and k1 != "likes" and v1 != v2


def test_contradictions_change_one_kind_of_fact_and_consistent_pairs_do_not(load_benchmark):
    mod = load_benchmark("same_subject_dialogues")
    rng = random.Random(1)
    for label in [True, False] * 300:
        a, b, _ = mod._facts(label, rng.random() < 0.3, rng)
        assert _conflict(mod, a, b) is label, (label, a, b)


def test_the_script_writes_labelled_dialogues_about_one_subject_seeded(load_benchmark, tmp_path):
    mod = load_benchmark("same_subject_dialogues")
    out, again, other = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    assert mod.main(["--out", str(out), "--consistent", "40", "--contradictions", "20"]) == 0
    assert mod.main(["--out", str(again), "--consistent", "40", "--contradictions", "20"]) == 0
    assert mod.main(["--out", str(other), "--consistent", "40", "--contradictions", "20", "--seed", "1"]) == 0
    assert out.read_text() == again.read_text() != other.read_text()
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == 60 and sum(r["contradiction"] for r in records) == 20
    examples = [parse_example(r) for r in records]
    pairs, no_evidence = labelled_dialogue_pairs(examples, source="dialogues")
    assert no_evidence == 0 and sum(p.label for p in pairs) == 20
    subjects = mod.PEOPLE + mod.PETS
    for r in records:
        bot = [t["text"] for t in r["turns"] if t["speaker"] == "bot"]
        assert r["turns"][-1]["speaker"] == "bot" and r["evidence"] == ([1] if r["contradiction"] else [])
        # the first and last bot turns speak of one and the same relative or pet
        said = [s for s in subjects if re.search(rf"\b(?:my|a) {s}\b", bot[0], re.I)]
        assert said and any(re.search(rf"\b(?:my|a) {s}\b", bot[-1], re.I) for s in said), bot


def test_taste_dialogues_contradict_exactly_when_one_kind_is_liked_and_disliked(load_benchmark, tmp_path, capsys):
    mod = load_benchmark("same_subject_dialogues")
    rng = random.Random(3)
    shapes = set()
    for label in [True, False] * 200:
        domain, (s1, v1), (s2, v2) = mod.taste_facts(label, rng)
        assert v1 in mod.TASTES[domain][0] and v2 in mod.TASTES[domain][0]
        # a contradiction: one kind, and a dislike against a like or an enjoyed one; consistent: never that
        conflict = v1 == v2 and "dislike" in (s1, s2) and {s1, s2} != {"dislike"}
        assert conflict is label, (label, s1, v1, s2, v2)
        shapes.add((label, s1, s2, v1 == v2))
    # every shape is drawn: the hand-set-A shape (another kind disliked, then one enjoyed) among them
    assert (False, "dislike", "enjoyed", False) in shapes and (True, "dislike", "enjoyed", True) in shapes
    out, plain = tmp_path / "t.jsonl", tmp_path / "p.jsonl"
    assert mod.main(["--out", str(out), "--consistent", "30", "--contradictions", "30", "--tastes", "1"]) == 0
    assert capsys.readouterr().out.endswith("about the bot's tastes: 30 consistent, 30 contradicting\n")
    for r in (json.loads(line) for line in out.read_text().splitlines()):
        first, last = (t["text"] for t in (r["turns"][1], r["turns"][-1]))
        said = [v for d in mod.TASTES.values() for v in d[0] if v.lower() in first.lower()]
        assert said, first  # the first bot turn names a kind of film, music or food
        assert r["contradiction"] <= any(v.lower() in last.lower() for v in said)  # a contradiction names it again
    # --tastes 0 draws nothing more: the file is the one the script wrote before the option existed
    assert mod.main(["--out", str(plain), "--consistent", "30", "--contradictions", "30", "--tastes", "0"]) == 0
    assert capsys.readouterr().out.endswith("about the bot's tastes: 0 consistent, 0 contradicting\n")
    assert mod.main(["--out", str(out), "--consistent", "30", "--contradictions", "30"]) == 0
    assert plain.read_text() == out.read_text()
