"""English trigger methods: negation rules, word replacement with a tiny lexicon, questions, seeding,
`dialcheck probe triggers --language en`, and one check against the real WordNet (skipped without it)."""

from __future__ import annotations

import importlib.util
import json
import random
import sys
from pathlib import Path

import pytest

from dialcheck.cli import main
from dialcheck.errors import MissingDependencyError
from dialcheck.probes import triggers_en as en
from dialcheck.probes.triggers import TriggerInput, build_triggers
from dialcheck.probes.triggers_en import (
    EN_SHORT_UTTERANCES,
    EnglishSynonymParaphraser,
    WordListLexicon,
    WordNetLexicon,
    inquire_bot_en,
    inquire_user_en,
    negate,
    negation_en,
    past_tense,
    perturb_en,
    plural,
    tagged,
    third_person,
)

LEX = WordListLexicon.from_groups(
    [["big", "large"], ["car", "automobile"], ["film", "movie"]],
    [("big", "small"), ("like", "dislike"), ("old", "new"), ("hot", "cold")],
)


@pytest.fixture(scope="module")
def nlp() -> None:
    """spaCy's English pipeline, or skip (the spacy extra)."""
    try:
        en.parse("Hello.")
    except ImportError as e:  # MissingDependencyError
        pytest.skip(str(e))


# -- pure rules on hand-tagged tokens (no spaCy) -------------------------------------------------------


def test_inflection_rules():
    assert [third_person(v) for v in ("like", "go", "try", "play", "have", "give up")] == [
        "likes",
        "goes",
        "tries",
        "plays",
        "has",
        "gives up",
    ]
    assert [past_tense(v) for v in ("like", "stop", "visit", "carry", "go", "buy", "give up")] == [
        "liked",
        "stopped",
        "visited",
        "carried",
        "went",
        "bought",
        "gave up",
    ]
    assert [plural(n) for n in ("car", "box", "city", "child", "motion picture")] == [
        "cars",
        "boxes",
        "cities",
        "children",
        "motion pictures",
    ]


def test_negation_on_hand_tagged_tokens():
    assert negate(tagged("He/PRP does/VBZ/do n't/RB/not like/VB cats/NNS/cat ./.")) == ("He likes cats.", "-doesn't")
    assert negate(tagged("We/PRP can/MD swim/VB ./.")) == ("We cannot swim.", "+not")
    assert negate(tagged("I/PRP 'll/MD/will go/VB ./.")) == ("I won't go.", "+won't")
    assert negate(tagged("Nothing/NN happened/VBD/happen ./.")) is None  # already negative
    assert negate(tagged("Hi/UH !/.")) is None
    # two sentences: the generator picks which one is negated
    two = tagged("I/PRP like/VBP tea/NN ./. She/PRP runs/VBZ/run ./.")
    outs = {negate(two, random.Random(s))[0] for s in range(6)}
    assert outs == {"I don't like tea. She runs.", "I like tea. She doesn't run."}
    assert negate(two) == ("I don't like tea. She runs.", "+don't")  # without a generator: the first


def test_word_list_lexicon_is_symmetric_and_case_blind():
    assert LEX.synonyms("Big", "a") == ("large",) and LEX.synonyms("large", "a") == ("big",)
    assert LEX.antonyms("dislike", "v") == ("like",) and LEX.antonyms("dog", "n") == ()


# -- with spaCy ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("u1", "u2"),
    [
        ("I like dogs.", "I don't like dogs."),
        ("She likes dogs.", "She doesn't like dogs."),
        ("He went home yesterday.", "He didn't go home yesterday."),
        ("I am happy.", "I am not happy."),
        ("I'm happy.", "I'm not happy."),
        ("I have seen it.", "I have not seen it."),
        ("I have a dog.", "I don't have a dog."),
        ("I've got two cats.", "I haven't got two cats."),
        ("I'll go tomorrow.", "I won't go tomorrow."),
        ("Can you swim?", "Can't you swim?"),
        ("Do you like your job?", "Don't you like your job?"),
        ("Go home now.", "Don't go home now."),
        # and back
        ("I don't like dogs.", "I like dogs."),
        ("She doesn't like cats.", "She likes cats."),
        ("He didn't go to school.", "He went to school."),
        ("I can't swim.", "I can swim."),
        ("I cannot swim.", "I can swim."),
        ("I won't go.", "I will go."),
        ("I am not a doctor.", "I am a doctor."),
        ("Isn't it nice?", "Is it nice?"),
        ("Don't worry about it!", "Worry about it!"),
        ("Do you have pets? I don't.", "Do you have pets? I do."),
        # chat spelling without the apostrophe (spaCy's "do" + "nt"): was "i do notnt know lol"
        ("i dont know lol", "i know lol"),
        ("I cant swim", "I can swim"),
        ("she doesnt like it", "she likes it"),
        ("Isnt it nice?", "Is it nice?"),
        # a question without its mark: was "don't do you like emojis"; an elliptic do: was "I don't do."
        ("do you like emojis", "don't you like emojis"),
        ("😀 do you like emojis", "😀 don't you like emojis"),
        ("Can you swim", "Can't you swim"),
        ("I do.", "I don't."),
        ("Yes I do", "No I don't"),
        ("They certainly do and they certainly are.", "They certainly don't and they certainly are."),
    ],
)
def test_negation_adds_or_removes(nlp, u1, u2):
    t = negation_en(TriggerInput(u1), random.Random(0))
    assert t is not None and t.u2 == u2 and t.method == "negation"


@pytest.mark.parametrize(
    ("u1", "detail"),
    [
        ("i dont know lol", "-don't"),  # the chat's "nt" is named as "n't", with its verb or alone
        ("I cant swim", "-can't"),
        ("Isnt it nice?", "-n't"),
        ("Don't worry about it!", "-don't"),
        ("I do not like it.", "-do not"),
        ("I am not a doctor.", "-not"),
    ],
)
def test_a_removed_negation_is_named_in_the_detail(nlp, u1, detail):
    t = negation_en(TriggerInput(u1), random.Random(0))
    assert t is not None and t.detail == detail


@pytest.mark.parametrize(
    ("u1", "u2"),
    [
        ("i dont know lol", "i do notnt know lol"),
        ("do you like emojis", "don't do you like emojis"),
        ("I do.", "I don't do."),
        ("so what do you do", "so what don't do you do"),
    ],
)
def test_negation_of_frozen_rules_1_is_unchanged(nlp, u1, u2):
    # rules 1 built --augment perturb of the shipped English models: their outputs stay as they were, faults included
    with en.rules_version(1):
        t = negation_en(TriggerInput(u1), random.Random(0))
    assert t is not None and t.u2 == u2


@pytest.mark.parametrize(
    "u1",
    [
        "Hi!",
        "I never eat meat.",
        "What do you do?",
        "what do you do for a living",
        "so what do you do",  # was "so what don't do you do"
        "Oh, where do you live",
    ],
)
def test_negation_skips_what_it_cannot_flip(nlp, u1):
    assert negation_en(TriggerInput(u1), random.Random(0)) is None


def test_antonym_and_synonym_replacement_keep_form_case_and_article(nlp):
    def one(u1: str, kind: str) -> tuple[str, str]:
        t = perturb_en(TriggerInput(u1), random.Random(0), LEX, kind)
        assert t is not None
        return t.u2, t.detail

    assert one("I have a big dog.", "antonym") == ("I have a small dog.", "big->small")
    assert one("Big dogs are fun.", "antonym") == ("Small dogs are fun.", "Big->small")
    assert one("She likes cats.", "antonym") == ("She dislikes cats.", "likes->dislike")
    assert one("I drove an old car.", "antonym") == ("I drove a new car.", "old->new")  # an -> a
    assert one("I sold my cars.", "synonym") == ("I sold my automobiles.", "cars->automobile")
    assert perturb_en(TriggerInput("I feel fine."), random.Random(0), LEX, "antonym") is None
    # the paraphraser replaces two of the three words that have synonyms
    para = EnglishSynonymParaphraser(LEX).paraphrase("The big car was in a film.", random.Random(0))
    assert para == "The big automobile was in a movie."


@pytest.mark.parametrize(
    ("u1", "know", "u2"),
    [
        ("I have three dogs.", True, "Do you know how many dogs I have?"),
        ("I have three dogs.", False, "How many dogs do I have?"),
        ("My name is Sarah.", True, "Do you know what my name is?"),
        ("I'm 23 years old.", True, "Do you know how old I am?"),
        ("I live in Boston.", True, "Do you know where I live?"),
        ("I gave up smoking.", False, "What did I give up?"),
    ],
)
def test_inquire_user(nlp, u1, know, u2):
    t = inquire_user_en(TriggerInput(u1), random.Random(0), know=know)
    assert t is not None and t.u2 == u2


@pytest.mark.parametrize(
    ("b1", "u2"),
    [
        ("I like dogs.", "What do you like?"),
        ("I'm from Texas.", "Where are you from?"),
        ("My favorite color is blue.", "What is your favorite color?"),
        ("I don't like cats.", "What don't you like?"),
        ("Oh, I have two cats.", "How many cats do you have?"),
    ],
)
def test_inquire_bot(nlp, b1, u2):
    t = inquire_bot_en(TriggerInput("Hi", b1), random.Random(0))
    assert t is not None and t.u2 == u2 and t.method == "inquire_bot"


def test_questions_skip_inputs_without_a_first_person_statement(nlp):
    assert inquire_bot_en(TriggerInput("I like dogs.", ""), random.Random(0)) is None  # no b1
    for text in ("You like dogs.", "Do you like dogs?", "I am happy.", "My family is musical.", "Hi!"):
        assert inquire_user_en(TriggerInput(text), random.Random(0)) is None, text


def test_build_english_triggers_is_seeded_and_counts_skips(nlp):
    inputs = [
        TriggerInput("I have a big car.", "I have two cats.", "a"),
        TriggerInput("Hi!", "Hello!", "b"),
        TriggerInput("She doesn't like old films.", "", "c"),
    ]
    ts = build_triggers(inputs, seed=0, lexicon=LEX, language="en")
    got = {(t.id, t.method): t.u2 for t in ts.items}
    assert got[("a", "negation")] == "I don't have a big car."
    assert got[("a", "inquire_bot")] == "How many cats do you have?"
    assert got[("a", "inquire_user")] == "Do you know what I have?"
    assert got[("c", "negation")] == "She likes old films."
    assert {got[(i, "short_utterance")] for i in "abc"} <= set(EN_SHORT_UTTERANCES)
    assert ts.skipped["negation: nothing to change"] == 1  # "Hi!"
    assert ts.skipped["inquire_bot: nothing to change"] == 2  # "Hello!" and no b1
    again = build_triggers(inputs, seed=0, lexicon=LEX, language="en")
    assert [t.u2 for t in again.items] == [t.u2 for t in ts.items]
    others = [build_triggers(inputs, seed=s, lexicon=LEX, language="en") for s in (1, 2, 3)]
    assert any([t.u2 for t in o.items] != [t.u2 for t in ts.items] for o in others)
    alone = build_triggers(inputs, ["antonym"], seed=0, lexicon=LEX, language="en")
    assert [t.u2 for t in alone.items] == [t.u2 for t in ts.items if t.method == "antonym"]
    with pytest.raises(Exception, match="unknown trigger language"):
        build_triggers(inputs, seed=0, lexicon=LEX, language="fr")


def test_english_paraphrase_that_repeats_the_synonym_trigger_is_dropped(monkeypatch):
    """As in Chinese: with one word to replace, the default paraphrase was the synonym trigger again, so the
    output had "I love dogs." twice for one context. spaCy is a stand-in (no model needed)."""
    from helpers_triggers_en import TAGS, fake_spacy

    monkeypatch.setitem(TAGS, "I like big dogs.", "I/PRP like/VBP big/JJ dogs/NNS/dog ./.")
    for _ in fake_spacy(monkeypatch):
        lex = WordListLexicon.from_groups([["like", "love"], ["big", "large"]], [])
        inputs = [TriggerInput("I like dogs.", "", "a"), TriggerInput("I like big dogs.", "", "b")]
        ts = build_triggers(inputs, ["paraphrase", "synonym"], seed=0, lexicon=lex, language="en")
        assert [(t.id, t.method, t.u2) for t in ts.items] == [
            ("a", "synonym", "I love dogs."),
            ("b", "paraphrase", "I love large dogs."),
            ("b", "synonym", "I like large dogs."),
        ]
        assert ts.skipped == {"paraphrase: same u2 as synonym": 1}


def test_probe_triggers_cli_english(nlp, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(WordNetLexicon, "load", classmethod(lambda cls, source=None, **kw: LEX))
    src = tmp_path / "ctx.jsonl"
    rows_in = [{"u1": "I like big dogs.", "b1": "I have three cats.", "id": "x"}, {"u1": "Hi!"}]
    src.write_text("\n".join(json.dumps(r) for r in rows_in), encoding="utf-8")
    out = tmp_path / "t.jsonl"
    methods = "negation,antonym,inquire_bot,inquire_user"
    code = main(["probe", "triggers", "--language", "en", "--input", str(src), "--out", str(out), "--methods", methods])
    assert code == 0
    rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [(r["id"], r["method"], r["u2"]) for r in rows] == [
        ("x", "negation", "I don't like big dogs."),
        ("x", "antonym", "I dislike big dogs."),
        ("x", "inquire_bot", "How many cats do you have?"),
        ("x", "inquire_user", "Do you know what I like?"),
    ]
    err = capsys.readouterr().err
    assert "wrote" in err and "negation: nothing to change 1" in err
    # the Chinese corpus is refused in English
    assert main(["probe", "triggers", "--language", "en", "--source", "cdconv.test.v1", "--out", str(out)]) == 2
    assert "Chinese" in capsys.readouterr().err


def test_cli_names_the_install_when_wordnet_is_missing(tmp_path, capsys):
    src = tmp_path / "ctx.jsonl"
    src.write_text('{"u1": "I like dogs."}\n', encoding="utf-8")
    args = ["probe", "triggers", "--language", "en", "--input", str(src), "--out", str(tmp_path / "o.jsonl")]
    code = main([*args, "--methods", "antonym", "--wordnet-dir", str(tmp_path / "nowhere")])
    assert code == 2
    assert "apt-get install -y wordnet-base wordnet-sense-index" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("language", "option", "applies"), [(["--language", "en"], "--dict-dir", "zh"), ([], "--wordnet-dir", "en")]
)
def test_cli_refuses_the_other_languages_dictionary_option(tmp_path, capsys, language, option, applies):
    # --language en dropped --dict-dir (the Chinese dictionary) without a word, and zh --wordnet-dir
    src = tmp_path / "ctx.jsonl"
    src.write_text('{"u1": "I like dogs."}\n' if language else '{"u1": "我喜欢狗。"}\n', encoding="utf-8")
    out = tmp_path / "o.jsonl"
    argv = ["probe", "triggers", *language, "--input", str(src), "--out", str(out), "--methods", "inquire_user"]
    assert main([*argv, option, str(tmp_path / "dict")]) == 2
    err = capsys.readouterr().err
    assert f"{option}: an option of --language {applies} only" in err and not out.exists()
    assert main(argv) == 0  # without it, the same run builds its triggers


def test_missing_nltk_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "nltk", None)
    with pytest.raises(MissingDependencyError, match=r'pip install "dialcheck\[wordnet\]"'):
        WordNetLexicon.load()


@pytest.mark.skipif(
    importlib.util.find_spec("nltk") is None or not Path("/usr/share/wordnet/index.sense").is_file(),
    reason="needs nltk and Debian's wordnet-base + wordnet-sense-index",
)
def test_real_wordnet(tmp_path):
    lex = WordNetLexicon.load(cache=tmp_path)
    lexnames = tmp_path / "nltk_data" / "corpora" / "wordnet" / "lexnames"
    assert len(lexnames.read_text(encoding="utf-8").splitlines()) == 45
    assert lex.wn.get_version() == "3.0"
    assert "cold" in lex.antonyms("hot", "a") and "sell" in lex.antonyms("buy", "v")
    assert "small" in lex.antonyms("huge", "a")  # through the cluster head "large"
    assert "film" in lex.synonyms("movie", "n") and "occupation" in lex.synonyms("job", "n")
    assert lex.synonyms("like", "v") == ()  # verb synonyms are off by default ("wish", "care")
    assert "house" not in lex.synonyms("firm", "n")  # not the synonym's own first sense
    assert "yr" not in lex.synonyms("year", "n") and "fig" not in lex.synonyms("figure", "n")  # abbreviations
    assert "light-green" not in lex.synonyms("green", "a")  # a kind of green
    t = perturb_en(TriggerInput("The soup is hot.", "", "s"), random.Random(0), lex, "antonym", parser=_hot_soup)
    assert t is not None and t.u2 == "The soup is cold."


@pytest.mark.skipif(
    importlib.util.find_spec("nltk") is None or not Path("/usr/share/wordnet/index.sense").is_file(),
    reason="needs nltk and Debian's wordnet-base + wordnet-sense-index",
)
def test_damaged_wordnet_is_named_and_its_copy_not_kept_once_repaired(tmp_path):
    import shutil

    from dialcheck.errors import InputError

    # a truncated data.noun was an AttributeError traceback at the first word looked up; and the cached copy was
    # keyed by the folder's path alone, so the damaged copy stayed in use after the files were reinstalled
    src, cache = tmp_path / "wordnet", tmp_path / "cache"
    shutil.copytree("/usr/share/wordnet", src)
    good = (src / "data.noun").read_bytes()
    (src / "data.noun").write_bytes(good[:100_000])
    with pytest.raises(InputError, match=r"wordnet: the WordNet files look damaged: no tagged first sense of 'dog'"):
        WordNetLexicon.load(src, cache=cache)
    (src / "data.noun").write_bytes(good)
    assert "occupation" in WordNetLexicon.load(src, cache=cache).synonyms("job", "n")


def _hot_soup(text: str) -> list[en.Tok]:
    assert text == "The soup is hot."
    return tagged("The/DT soup/NN is/VBZ/be hot/JJ ./.")


# -- rules added after the hand check of docs/trigger_checks/en_round2.md ------------------------------------


@pytest.mark.parametrize(
    ("u1", "u2"),
    [
        ("I like coloring too!", "I don't like coloring either!"),  # too -> either
        ("I like video games, too, actually.", "I don't like video games, either, actually."),
        ("Yes, I have a dog.", "No, I don't have a dog."),  # the answer follows the polarity
        ("No, I don't like it.", "Yes, I like it."),
        ("I don't have any siblings.", "I have some siblings."),  # negative polarity items
        ("I don't have pets anymore.", "I have pets now."),
        ("I haven't eaten yet.", "I have eaten already."),
        ("I'm watching some videos.", "I'm not watching any videos."),
        ("I ate too much.", "I didn't eat too much."),  # a degree "too" stays
    ],
)
def test_negation_keeps_the_words_that_follow_polarity_in_agreement(nlp, u1, u2):
    t = negation_en(TriggerInput(u1), random.Random(0))
    assert t is not None and t.u2 == u2


@pytest.mark.parametrize(
    "u1",
    [
        "If you say so!",  # a condition, not a statement
        "Ever tried it?",  # no subject, no auxiliary
        "Cool, what are they for?",  # a wh-question after an interjection
        "I have only seen it once.",  # "not only" is another construction
        "I am just finishing my emails.",
    ],
)
def test_negation_skips_conditions_elliptic_questions_and_not_only(nlp, u1):
    assert negation_en(TriggerInput(u1), random.Random(0)) is None


def test_word_replacement_skips_titles_reactions_slang_and_misleading_senses(nlp):
    lex = WordListLexicon.from_groups(
        [["kid", "minor"], ["hurt", "harm"], ["song", "tune"]], [("cool", "warm"), ("nice", "nasty")]
    )

    def one(u1: str, kind: str) -> str | None:
        t = perturb_en(TriggerInput(u1), random.Random(0), lex, kind)
        return None if t is None else t.u2

    assert one("You have kids?", "synonym") is None  # kid -> minor: a wrong sense in chat
    assert one("I like the Johnny Cash cover of Hurt.", "synonym") is None  # a title
    assert one("I like the Johnny Cash cover of this song.", "synonym") == "I like the Johnny Cash cover of this tune."
    assert one("That's cool.", "antonym") is None  # "cool" in chat is not a temperature
    assert one("Really, nice.", "antonym") is None  # a verbless reaction
    assert one("The weather is nice.", "antonym") == "The weather is nasty."


@pytest.mark.parametrize(
    "text", ["I am a nurse.", "I love that.", "I mean my family's business.", "I love them all.", "I know much."]
)
def test_questions_skip_pronoun_answers_vague_verbs_and_what_am_i(nlp, text):
    assert inquire_user_en(TriggerInput(text), random.Random(0)) is None
    assert inquire_bot_en(TriggerInput("Hi", text), random.Random(0)) is None


def test_round_two_rules(nlp):
    neg = negation_en(TriggerInput("My favorite show is probably Parks and Recreation."), random.Random(0))
    assert neg is not None and neg.u2 == "My favorite show is probably not Parks and Recreation."
    assert negation_en(TriggerInput("Great choices, what are their names?"), random.Random(0)) is None
    for text in ("I have no children.", "I have the same interest.", "I've never planted anything!"):
        assert inquire_user_en(TriggerInput(text), random.Random(0)) is None, text
    lex = WordListLexicon.from_groups([["world", "universe"], ["child", "minor"]], [])
    assert perturb_en(TriggerInput("It is out of this world."), random.Random(0), lex, "synonym") is None
    with en.rules_version(1):  # the frozen rules keep what they did
        t = negation_en(TriggerInput("Great choices, what are their names?"), random.Random(0))
        assert t is not None and t.u2 == "Great choices, what aren't their names?"
