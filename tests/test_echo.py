"""Polar echo questions: the rewriter on fixed sentences, stimulus sets, unlikelihood samples, the command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("spacy")

from dialcheck.cli import main
from dialcheck.datasets.nli3 import NLIPair
from dialcheck.probes.echo import (
    EchoItem,
    EchoRewriter,
    EchoSet,
    build_echo_set,
    normalize_text,
    unlikelihood_samples,
)
from helpers_cli import feed_stdin


@pytest.fixture(scope="module")
def rewriter() -> EchoRewriter:
    try:
        r = EchoRewriter()
        r.nlp  # noqa: B018  (load now)
    except ImportError as e:  # MissingDependencyError
        pytest.skip(str(e))
    return r


@pytest.mark.parametrize(
    ("sentence", "positive", "negative"),
    [
        # be: inversion, contraction expanded, first -> second person with agreement
        ("I'm in North Carolina.", "Are you in North Carolina?", "Aren't you in North Carolina?"),
        ("I was born in 1990.", "Were you born in 1990?", "Weren't you born in 1990?"),
        ("You were right.", "Was I right?", "Wasn't I right?"),
        ("We are friends.", "Are you friends?", "Aren't you friends?"),
        ("There is a bookshop at the gallery.", "Is there a bookshop at the gallery?", None),
        # do-support with the verb back in its base form: present, third person, past
        ("I live in North Carolina.", "Do you live in North Carolina?", "Don't you live in North Carolina?"),
        ("She bought two cats.", "Did she buy two cats?", "Didn't she buy two cats?"),
        ("The man has a hat.", "Does the man have a hat?", "Doesn't the man have a hat?"),
        ("I used to play piano.", "Did you use to play piano?", None),
        # pronoun swap in objects and possessives, both directions
        ("My dog likes me.", "Does your dog like you?", None),
        ("You love your dog.", "Do I love my dog?", None),
        ("We went to the store with our kids.", "Did you go to the store with your kids?", None),
        ("I think I'm right.", "Do you think you're right?", None),
        ("I know you are right.", "Do you know I am right?", None),
        # auxiliaries and modals: perfect, progressive, would, will, emphatic do
        ("I have been to Paris.", "Have you been to Paris?", "Haven't you been to Paris?"),
        ("The kids were playing soccer.", "Were the kids playing soccer?", None),
        ("I'd like some tea.", "Would you like some tea?", "Wouldn't you like some tea?"),
        ("I will visit my mom.", "Will you visit your mom?", "Won't you visit your mom?"),
        ("I can swim.", "Can you swim?", "Can't you swim?"),
        ("I do like it.", "Do you like it?", None),
        ("I really like it.", "Do you really like it?", None),
        # relative clause inside the subject: the main clause's auxiliary moves, not the first verb
        ("A woman who is wearing a hat is sitting.", "Is a woman who is wearing a hat sitting?", None),
        # pre-tokenised corpus text
        ("the man is sleeping .", "Is the man sleeping?", None),
    ],
)
def test_rewriter_on_fixed_sentences(rewriter, sentence, positive, negative):
    r = rewriter.rewrite(sentence)
    assert r.ok, r.reason
    assert r.positive == positive
    if negative is not None:
        assert r.negative == negative


@pytest.mark.parametrize(
    ("sentence", "reason"),
    [
        ("I don't like dogs.", "negation"),
        ("I've never been there.", "negation"),
        ("I have no pets.", "negation"),
        ("I love cats, and he loves dogs.", "comma_or_parenthesis"),
        ("I love cats and he loves dogs.", "coordination"),
        ("Yesterday I went home.", "words_before_subject"),
        ("A man wearing a hat.", "no_finite_verb"),
        ("Do you like dogs?", "question_or_exclamation"),
        ("Ich habe einen Hund.", "non_english"),
        ("我住在北京。", "non_english"),
        ("J'habite à Montréal depuis deux ans.", "non_english"),
        ("I might go.", "modal_without_negative_form"),
        ("", "empty"),
        (" ".join(["I like dogs"] * 11) + ".", "too_long"),
    ],
)
def test_rewriter_skips_with_a_named_reason(rewriter, sentence, reason):
    r = rewriter.rewrite(sentence)
    assert not r.ok and r.positive is None and r.reason == reason


def test_normalize_text_undoes_corpus_tokenisation():
    assert normalize_text("I do n't know , really .") == "I don't know, really."
    assert normalize_text("  It 's   ( not ) fine  ") == "It's (not) fine"


def _pairs():
    return [
        NLIPair("I live in North Carolina.", "I'm in North Carolina.", "entailment", "t", "1"),
        NLIPair("I live in North Carolina.", "I'm in South Carolina.", "contradiction", "t", "2"),
        NLIPair("I live in North Carolina.", "I like the beach.", "neutral", "t", "3"),
        NLIPair("Do you live here?", "I live in Ohio.", "contradiction", "t", "4"),
        NLIPair("I have two dogs.", "I don't have dogs.", "contradiction", "t", "5"),
        NLIPair("I live in North Carolina.", "I'm in North Carolina.", "entailment", "t", "6"),
    ]


def test_build_echo_set_makes_entq_and_negative_cntq_and_counts_skips(rewriter):
    es = build_echo_set(_pairs(), rewriter)
    assert [(i.kind, i.question, i.expected) for i in es.items] == [
        ("ENTQ", "Are you in North Carolina?", "yes"),
        ("CNTQ", "Aren't you in South Carolina?", "no"),
    ]
    assert es.skipped == {"neutral": 1, "premise_question": 1, "negation": 1, "duplicate": 1}
    assert es.counts() == {"ENTQ": 1, "CNTQ": 1, "skipped": 4}
    d = es.items[0].dialogue()
    assert [t.speaker for t in d.turns] == ["bot", "user"] and d.turns[0].text == "I live in North Carolina."
    only = build_echo_set(_pairs(), rewriter, kinds=["CNTQ"])
    assert [i.kind for i in only.items] == ["CNTQ"] and only.skipped["not_ENTQ"] == 2


def test_echo_set_round_trips_through_jsonl(rewriter, tmp_path):
    es = build_echo_set(_pairs(), rewriter)
    back = EchoSet.load(es.save(tmp_path / "echo.jsonl"))
    assert back.items == es.items


def test_unlikelihood_samples_follow_table_7(rewriter):
    items = build_echo_set(_pairs(), rewriter).items
    ul = {s.type: s for s in unlikelihood_samples(items)}
    assert set(ul) == {"PositiveQ1", "PositiveQ2", "NegativeQ1", "NegativeQ2"}
    assert ul["PositiveQ1"].question == "Are you in North Carolina?"
    assert (
        ul["PositiveQ1"].gold == "Yes. I'm in North Carolina."
        and ul["PositiveQ1"].negative == "No. I'm in South Carolina."
    )
    assert ul["PositiveQ2"].question == "Are you in South Carolina?" and ul["PositiveQ2"].gold.startswith("No.")
    assert ul["NegativeQ1"].question == "Aren't you in North Carolina?" and ul["NegativeQ1"].gold.startswith("Yes.")
    assert ul["NegativeQ2"].question == "Aren't you in South Carolina?" and ul["NegativeQ2"].negative.startswith("Yes.")
    assert all(s.history == "I live in North Carolina." for s in ul.values())
    lone = [i for i in items if i.kind == "ENTQ"]
    assert unlikelihood_samples(lone) == []


def test_probe_echo_command(capsys, tmp_path, rewriter):
    src = tmp_path / "nli.jsonl"
    src.write_text(
        "\n".join(json.dumps({"premise": p.premise, "hypothesis": p.hypothesis, "label": p.label[0]}) for p in _pairs())
    )
    out, ul = tmp_path / "echo.jsonl", tmp_path / "ul.jsonl"
    code = main(["probe", "echo", "--input", str(src), "--out", str(out), "--unlikelihood", str(ul)])
    err = capsys.readouterr().err
    assert code == 0 and "1 ENTQ, 1 CNTQ" in err and "negation 1" in err
    items = [EchoItem.from_dict(json.loads(line)) for line in out.read_text().splitlines()]
    assert {i.kind for i in items} == {"ENTQ", "CNTQ"}
    assert len(ul.read_text().splitlines()) == 4
    src.write_text(json.dumps({"premise": "a", "hypothesis": "b", "label": "maybe"}))
    code = main(["probe", "echo", "--input", str(src), "--out", str(out)])
    assert code == 2 and "label: expected one of" in capsys.readouterr().err


def test_probe_echo_refuses_one_destination_for_both_outputs(capsys, tmp_path):
    src = tmp_path / "nli.jsonl"
    src.write_text(json.dumps({"premise": "The cat is black.", "hypothesis": "The cat is white.", "label": "c"}))
    for dest in ("-", str(tmp_path / "both.jsonl")):
        code = main(["probe", "echo", "--input", str(src), "--out", dest, "--unlikelihood", dest])
        captured = capsys.readouterr()
        assert code == 2 and "different destinations" in captured.err and captured.out == ""
    assert not (tmp_path / "both.jsonl").exists()


def test_probe_echo_refuses_an_output_that_is_its_input_or_a_folder(capsys, tmp_path):
    # --out or --unlikelihood naming the --input file overwrote the user's NLI pairs with the stimuli
    src = tmp_path / "nli.jsonl"
    text = json.dumps({"premise": "The cat is black.", "hypothesis": "The cat is white.", "label": "c"}) + "\n"
    src.write_text(text)
    for args in (["--out", str(src)], ["--out", str(tmp_path / "e.jsonl"), "--unlikelihood", str(src)]):
        assert main(["probe", "echo", "--input", str(src), *args]) == 2
        assert "is the --input input: writing it would destroy the input" in capsys.readouterr().err
    assert src.read_text() == text and not (tmp_path / "e.jsonl").exists()
    # a folder: refused before any work, not after it, with the stimuli left in a stray FOLDER.tmp
    assert main(["probe", "echo", "--input", str(src), "--out", str(tmp_path)]) == 2
    assert "--out: is a folder; give a file name" in capsys.readouterr().err
    assert not Path(f"{tmp_path}.tmp").exists()


def test_probe_echo_names_every_bad_pair_with_json_type_names(capsys, tmp_path):
    src, out = tmp_path / "nli.jsonl", tmp_path / "echo.jsonl"
    rows = [
        {"premise": "The cat is black.", "hypothesis": "The cat is white.", "label": "c", "id": {"a": 1}},
        {"premise": None, "hypothesis": "b", "label": "e"},
        {"premise": "a", "hypothesis": "b", "label": 1},
    ]
    src.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert main(["probe", "echo", "--input", str(src), "--out", str(out)]) == 2
    named = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("dialcheck: error:")]
    assert named == [
        f"dialcheck: error: {src}, line 1: id: expected a string or a whole number, got object",
        f"dialcheck: error: {src}, line 2: premise: expected a string, got null",
        f"dialcheck: error: {src}, line 3: label: expected a string, got int",
        f"dialcheck: error: {src}: 3 of 3 NLI pairs are bad (each named above); nothing was built",
    ]
    assert not out.exists()


def test_probe_echo_keeps_per_kind_of_the_kinds_named(capsys, tmp_path, rewriter):
    src = tmp_path / "nli.jsonl"
    src.write_text(
        "\n".join(json.dumps({"premise": p.premise, "hypothesis": p.hypothesis, "label": p.label[0]}) for p in _pairs())
    )
    out = tmp_path / "echo.jsonl"
    assert main(["probe", "echo", "--input", str(src), "--out", str(out), "--kinds", "cntq", "--per-kind", "1"]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 1 and rows[0]["kind"] == "CNTQ"


def test_echo_set_load_of_a_missing_file_says_no_such_file_not_a_missing_corpus(tmp_path):
    from dialcheck.errors import InputError

    with pytest.raises(InputError, match="no such file") as e:
        EchoSet.load(tmp_path / "stimuli.jsonl")
    assert "corpus" not in str(e.value)


def test_probe_echo_reads_stdin_and_refuses_a_file_without_pairs(capsys, tmp_path, monkeypatch, rewriter):
    # --input - was "-: no such file"; an empty --input was "no NLI pairs: give --source and/or --input"
    row = {"premise": "I live in South Carolina.", "hypothesis": "I'm in South Carolina.", "label": "e"}
    feed_stdin(monkeypatch, json.dumps(row) + "\n")
    out = tmp_path / "echo.jsonl"
    assert main(["probe", "echo", "--input", "-", "--out", str(out)]) == 0
    assert [json.loads(x)["id"] for x in out.read_text().splitlines()] == ["entq:stdin:1"]
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert main(["probe", "echo", "--input", str(empty), "--out", str(out)]) == 2
    assert f"{empty}: no NLI pairs in it (JSONL: one JSON object a line)" in capsys.readouterr().err


@pytest.mark.parametrize(
    "premise", ["我住在北京，已经五年了。", "Yo vivo en Madrid con mi esposa.", "Я живу в Москве."]
)
def test_build_echo_set_skips_a_premise_that_is_not_english(rewriter, premise):
    # a Spanish premise became the bot's turn before an English question; a Chinese one was "premise_no_subject"
    es = build_echo_set([NLIPair(premise, "I live in Madrid.", "entailment", "mine", "1")], rewriter)
    assert es.items == [] and es.skipped == {"premise_non_english": 1}


def test_probe_echo_refuses_two_pairs_with_one_id(capsys, tmp_path):
    # both became "entq:1", which nbest --stimuli then refused (it stores and resumes its lists by id)
    src = tmp_path / "nli.jsonl"
    rows = [
        {"premise": "I live in Texas.", "hypothesis": "I am in Texas.", "label": "e", "id": 1},
        {"premise": "I have a dog.", "hypothesis": "I own a dog.", "label": "e", "id": "1"},
    ]
    src.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert main(["probe", "echo", "--input", str(src), "--out", str(tmp_path / "e.jsonl")]) == 2
    assert f"{src}, line 2: id: '1' is the id of line 1 too (give each record its own id)" in capsys.readouterr().err


def test_probe_echo_warns_when_every_pair_is_skipped(capsys, tmp_path, rewriter):
    src = tmp_path / "nli.jsonl"
    src.write_text(json.dumps({"premise": "I live in Texas.", "hypothesis": "I do not live in Texas.", "label": "c"}))
    assert main(["probe", "echo", "--input", str(src), "--out", str(tmp_path / "e.jsonl")]) == 0
    err = capsys.readouterr().err  # an empty file with exit 0 and no word that nothing was built
    assert "warning: no echo question was built: every pair was skipped" in err and "negation 1" in err
