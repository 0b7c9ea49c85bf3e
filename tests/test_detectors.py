import numpy as np
import pytest

from dialcheck.detectors import UnstructuredDetector, UtteranceDetector, load_detector
from dialcheck.detectors.core import PairClassifier
from dialcheck.errors import InputError, ModelError
from dialcheck.schema import Dialogue, Turn
from helpers_chat import CHAT, TOOL_CALL


class RuleClassifier:
    """Stands in for the neural core: a pair contradicts when the second says 'never' about a shared word."""

    def __init__(self):
        self.calls = []

    def pair_fits(self, first, second):  # no window: every pair is read whole
        return True

    def score(self, pairs, batch_size=64, show_progress_bar=False):
        self.calls.append(list(pairs))
        out = []
        for first, second in pairs:
            shared = set(first.lower().split()) & set(second.lower().split()) - {"i", "a", "have"}
            out.append(0.9 if "never" in second and shared else 0.1)
        return np.array(out, dtype=np.float32)


def _utterance(**kw):
    det = UtteranceDetector(**kw)
    det._clf = RuleClassifier()
    return det


DOGS = Dialogue.from_texts(["I have two dogs.", "What breed?", "I love my dogs.", "Cute!", "I never had dogs."])


def test_utterance_detector_pairs_the_last_turn_with_same_speaker_turns_only():
    det = _utterance()
    (v,) = det.predict([DOGS])
    assert det._clf.calls[0] == [(DOGS.turns[0].text, DOGS.last.text), (DOGS.turns[2].text, DOGS.last.text)]
    assert v.contradiction and v.evidence == (0, 2) and v.score == pytest.approx(0.9)
    assert set(v.pair_scores) == {0, 2}


def test_an_earlier_turn_with_no_text_is_never_paired_nor_named():
    # a chat log's tool call (content null) and an empty message say nothing the reply could contradict
    from dialcheck.io import parse_dialogue

    chat = [
        {"role": "user", "content": "Is my table booked?"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1"}]},
        {"role": "tool", "content": "ok"},
        {"role": "assistant", "content": "   "},
        {"role": "user", "content": "You told me it was booked."},
        {"role": "assistant", "content": "I never said that."},
    ]
    d = parse_dialogue({"messages": chat})
    det = _utterance(tau=0.05, eta_e=0.05)
    det._clf.score = lambda pairs, batch_size=64, show_progress_bar=False: np.full(len(pairs), 0.9, np.float32)
    (v,) = det.predict([d])
    assert v.evidence == () and v.pair_scores == {} and not v.contradiction
    with_text = Dialogue.from_texts(["I booked it.", "Thanks!", "", "Sure?", "I never said that."])
    (v,) = det.predict([with_text])
    assert v.contradiction and v.evidence == (0,) and set(v.pair_scores) == {0}


def test_all_speakers_option_pairs_every_earlier_turn():
    det = _utterance(speakers="all")
    det.predict([DOGS])
    assert len(det._clf.calls[0]) == 4


PAIRS = [(DOGS.turns[0].text, DOGS.last.text), (DOGS.turns[2].text, DOGS.last.text)]


def test_pair_order_both_averages_the_two_readings_of_each_pair():
    # RuleClassifier is order-sensitive: "never" must be in the second segment
    det = _utterance(pair_order="both", tau=0.4, eta_e=0.45)
    (v,) = det.predict([DOGS])
    scored = [p for call in det._clf.calls for p in call]
    assert sorted(scored) == sorted(PAIRS + [(b, a) for a, b in PAIRS])
    assert v.pair_scores[0] == pytest.approx((0.9 + 0.1) / 2)
    assert v.contradiction and v.evidence == (0, 2)
    det.tau = 0.6
    (v,) = det.predict([DOGS])
    assert not v.contradiction


def test_no_contradiction_gives_no_evidence_and_tau_decides():
    det = _utterance(tau=0.95)
    (v,) = det.predict([DOGS])
    assert not v.contradiction and v.evidence == ()
    det.tau = 0.05
    (v,) = det.predict([DOGS])
    assert v.contradiction


def test_eta_e_above_every_pair_still_names_the_strongest_turn():
    det = _utterance(tau=0.5, eta_e=0.99)
    (v,) = det.predict([DOGS])
    assert v.contradiction and v.evidence == (0,)


def test_pairs_of_many_dialogues_are_scored_in_one_call_and_kept_in_order():
    det = _utterance()
    other = Dialogue.from_texts(["I like tea.", "Me too.", "I drink tea daily."])
    vs = det.predict([DOGS, other, DOGS])
    assert len(det._clf.calls) == 1
    assert [v.contradiction for v in vs] == [True, False, True]


def test_last_speaker_without_earlier_turns_scores_zero():
    det = _utterance()
    (v,) = det.predict([Dialogue.from_texts(["Hello there.", "I never had dogs."])])
    assert v.score == 0.0 and not v.contradiction


def test_rank_orders_candidates_from_least_to_most_contradictory():
    det = _utterance()
    ranked = det.rank(["I have two dogs.", "What breed?"], ["I never had dogs.", "Labradors, both of them."])
    assert [r.index for r in ranked] == [1, 0]
    assert ranked[1].verdict.contradiction


@pytest.mark.parametrize("blank", ["", "  ", "\n\t"])
def test_rank_refuses_an_empty_candidate_naming_it(blank):
    # scored, an empty reply would rank above a reply that contradicts; /rank and check refuse it the same way
    det = _utterance()
    with pytest.raises(InputError, match=r"candidates\[1\]: the candidate is empty"):
        det.rank(["I have two dogs.", "What breed?"], ["Labradors.", blank])


def test_untrained_detector_says_so():
    with pytest.raises(ModelError, match="no weights yet"):
        UtteranceDetector().predict([DOGS])


def test_saved_detector_reloads_with_identical_scores(tiny_detector_dir):
    a = load_detector(tiny_detector_dir)
    b = load_detector(tiny_detector_dir)
    va, vb = a.predict([DOGS])[0], b.predict([DOGS])[0]
    assert va.pair_scores == pytest.approx(vb.pair_scores)
    assert isinstance(a, UtteranceDetector)
    size = sum(f.stat().st_size for f in tiny_detector_dir.iterdir())
    assert size < 2_000_000  # adapter + head only, never the base weights


def test_truncation_keeps_the_whole_last_turn(tiny_base):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_base)
    clf = PairClassifier(None, tok, ["non_contradiction", "contradiction"], max_length=32, truncation_side="left")
    history = " ".join(f"word{i}" for i in range(200))
    enc = clf.encode([(history, "i never had dogs")])
    tokens = tok.convert_ids_to_tokens(enc["input_ids"][0])
    assert len(tokens) == 32
    assert tokens[-5:] == ["i", "never", "had", "dogs", "[SEP]"]
    assert "word199" in "".join(tokens).replace("#", "")  # left truncation keeps the most recent history


def test_an_overlong_last_turn_is_cut_with_a_warning(tiny_base, caplog):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_base)
    clf = PairClassifier(None, tok, ["non_contradiction", "contradiction"], max_length=32)
    enc = clf.encode([("short", "long " * 100)])
    assert enc["input_ids"].shape[1] <= 32
    assert "window" in caplog.text


def test_a_window_smaller_than_the_first_segments_share_splits_the_room(tiny_base, caplog):
    # 12 tokens, 3 of them special: 9 left, too few for the 16 kept for the first segment elsewhere,
    # so the first segment keeps half of it (4 tokens) and the checked turn the rest (5).
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_base)
    clf = PairClassifier(None, tok, ["non_contradiction", "contradiction"], max_length=12)
    enc = clf.encode([("i really like chess and golf", "i never liked chess or golf at all")])
    tokens = tok.convert_ids_to_tokens(enc["input_ids"][0])
    assert len(tokens) == 12
    sep = tokens.index("[SEP]")
    assert tokens[1:sep] == ["i", "really", "like", "chess"]
    assert tokens[sep + 1 :] == ["i", "never", "liked", "chess", "or", "[SEP]"]
    assert "window" in caplog.text


def test_an_empty_first_segment_with_a_checked_turn_filling_the_window_is_encoded(tiny_base, caplog):
    # 32 tokens, 3 special: a 29-token checked turn fits only with nothing before it, but an empty first
    # segment is sent as "." (1 token): the tokenizer then had to cut a 1-token segment and raised
    # "Truncation error: Sequence to truncate too short"; the checked turn is now cut, with a warning, to
    # leave the first segment its share of a window this small (half of the 29 tokens, 14; 15 for the turn).
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_base)
    clf = PairClassifier(None, tok, ["non_contradiction", "contradiction"], max_length=32)
    turn = " ".join(["word"] * 29)
    assert clf._token_len(turn) == 29
    assert clf.pair_length("", turn) == clf.pair_length(".", turn) == 33 and not clf.pair_fits("", turn)
    enc = clf.encode([("", turn)])
    tokens = tok.convert_ids_to_tokens(enc["input_ids"][0])
    assert tokens[:3] == ["[CLS]", ".", "[SEP]"] and tokens[3:] == ["word"] * 15 + ["[SEP]"]
    assert "window" in caplog.text


def test_measuring_a_turn_longer_than_the_tokenizer_limit_prints_nothing(tiny_base, monkeypatch):
    import transformers.tokenization_utils_base as tub
    from transformers import AutoTokenizer

    said = []
    monkeypatch.setattr(tub.logger, "warning", lambda msg, *a, **k: said.append(msg))
    tok = AutoTokenizer.from_pretrained(tiny_base)
    clf = PairClassifier(None, tok, ["non_contradiction", "contradiction"], max_length=32)
    long = "I love the beach. " * 200  # about 1,000 tokens, past the tokenizer's 512
    assert len(clf.chunks(long, 16)) > 50 and not clf.pair_fits("short", long)
    clf.fit_second(long)
    assert not [m for m in said if "sequence length" in m]  # "indexing errors": noise, we never feed it whole


def test_label_map_without_contradiction_is_refused():
    clf = PairClassifier(None, None, ["entailment", "neutral"])
    with pytest.raises(ModelError, match="no 'contradiction' label"):
        clf.score([("a", "b")])


def test_unstructured_detector_scores_one_pair_per_dialogue():
    det = UnstructuredDetector()
    det._clf = RuleClassifier()
    (v,) = det.predict([DOGS])
    (pair,) = det._clf.calls[0]
    assert pair[0].startswith("same: I have two dogs. other: What breed?") and pair[1] == DOGS.last.text
    assert v.contradiction and v.evidence == ()


def test_top_level_check_and_load_work_on_a_saved_model(tiny_detector_dir):
    import dialcheck

    turns = ["I have two dogs.", "Cute!", "What do you do?", "I never had a pet."]
    verdict = dialcheck.check(turns, model=tiny_detector_dir)
    same = dialcheck.load(tiny_detector_dir).predict([Dialogue.from_texts(turns)])[0]
    assert isinstance(verdict, dialcheck.Verdict)
    assert verdict.score == pytest.approx(same.score)
    assert set(verdict.pair_scores) == {1}  # only the same speaker's earlier turn is paired
    (many,) = dialcheck.predict([turns], model=tiny_detector_dir)  # a list of strings, as check takes it
    assert many.score == pytest.approx(same.score)


def test_top_level_check_with_a_speaker_checks_that_speakers_last_reply(tiny_detector_dir):
    import dialcheck

    chat = [*CHAT, TOOL_CALL]  # ends with a tool call after the user's message
    v = dialcheck.check({"messages": chat}, model=tiny_detector_dir, speaker="assistant")
    want = dialcheck.check({"messages": chat[:4]}, model=tiny_detector_dir)
    assert v.to_dict() == want.to_dict() and set(v.pair_scores) == {1}
    with pytest.raises(InputError, match="last turn"):  # without speaker= the tool call is the last turn
        dialcheck.check({"messages": chat}, model=tiny_detector_dir)
    with pytest.raises(InputError, match=r"^speaker: no turn with text by bot"):
        dialcheck.check({"messages": chat}, model=tiny_detector_dir, speaker="bot")


LONG_EARLIER = (
    "I grew up in a small town by the sea. My father was a fisherman and my mother taught at the school. "
    "We moved to the city when I was twelve. These days I work as a nurse in the children's ward. "
    "I have two dogs called Max and Bella, and they sleep on my bed."
)
LONG_LAST = (
    "Thanks for asking about my week. It was busy at the hospital but fine. "
    "I have never owned a dog in my life, I am scared of them."
)


def real_scores(det, pairs):
    return PairClassifier.score(det.classifier, pairs)


def _recording(det):
    seen = []
    real = det.classifier.score

    def score(pairs, *a, **kw):
        seen.extend(pairs)
        return real(pairs, *a, **kw)

    det.classifier.score = score
    return seen


def test_chunks_pack_whole_sentences_within_the_limit_and_cut_only_overlong_ones(tiny_detector_dir):
    clf = load_detector(tiny_detector_dir).classifier
    pieces = clf.chunks(LONG_EARLIER, 20)
    assert len(pieces) > 1 and all(clf._token_len(p) <= 20 for p in pieces)
    assert " ".join(pieces) == LONG_EARLIER  # whole sentences, in order, nothing lost
    assert clf.chunks("Short one.", 20) == ["Short one."]
    run_on = "and then " * 30 + "the end"
    cut = clf.chunks(run_on, 16)
    assert len(cut) > 2 and all(clf._token_len(p) <= 16 for p in cut)
    assert " ".join(cut).split() == run_on.split()


def test_long_turns_are_read_piece_by_piece_not_truncated(tiny_detector_dir, caplog):
    d = Dialogue.from_texts([LONG_EARLIER, "Nice!", "Short turn of mine.", "How was your week?", LONG_LAST])
    det = load_detector(tiny_detector_dir)
    det.classifier.max_length = 48
    seen = _recording(det)
    (v,) = det.predict([d])
    assert ("Short turn of mine.", LONG_LAST) not in seen or det.classifier.pair_fits("Short turn of mine.", LONG_LAST)
    half = (48 - 3) // 2
    assert all(det.classifier.pair_fits(a, b) for a, b in seen)  # nothing was cut to fit
    assert all(det.classifier._token_len(a) <= half for a, _ in seen if a != "Short turn of mine.")
    assert {w for a, _ in seen for w in a.split()} >= set(LONG_EARLIER.split())  # every sentence was read
    assert {w for _, b in seen for w in b.split()} == set(LONG_LAST.split())
    assert set(v.pair_scores) == {0, 2}  # scores and evidence stay per turn
    pieces = [p for p in seen if p[0] in LONG_EARLIER]
    assert len(pieces) > 1 and v.pair_scores[0] == pytest.approx(max(real_scores(det, pieces)))  # its best piece
    assert "tokens" not in caplog.text  # no truncation warning

    det.long_turns = "truncate"
    seen.clear()
    det.predict([d])
    assert [a for a, _ in seen] == [LONG_EARLIER, "Short turn of mine."]  # one pair per turn, cut by the model
    assert det.config.options["long_turns"] == "truncate"
    det.long_turns = "chunk"
    assert "long_turns" not in det.config.options  # the default is not written into saved configs
    with pytest.raises(ValueError, match="long_turns must be one of"):
        det.long_turns = "split"


def test_pieces_reads_a_long_turn_in_pieces_even_when_the_pair_fits_the_window(tiny_detector_dir):
    short, long_reply = "I have two cats.", "My weekend was lovely. We hiked by the lake. I have never had a pet."
    d = Dialogue.from_texts([short, "How was your weekend?", long_reply])
    det = load_detector(tiny_detector_dir)
    det.chunk_tokens = 8
    assert det.classifier.pair_fits(short, long_reply)  # "chunk" reads this pair whole
    seen = _recording(det)
    det.predict([d])
    assert seen == [(short, long_reply)]
    det.long_turns = "pieces"
    seen.clear()
    (v,) = det.predict([d])
    assert len(seen) > 1 and all(a == short and det.classifier._token_len(b) <= 8 for a, b in seen)
    assert " ".join(b for _, b in seen) == long_reply  # every sentence read once, in order
    assert v.pair_scores[0] == pytest.approx(max(real_scores(det, seen)))  # the turn's best piece
    seen.clear()
    det.predict([Dialogue.from_texts([short, "And now?", "I have a dog."])])
    assert seen == [(short, "I have a dog.")]  # two short turns: one pair, as before


def test_smaller_pieces_make_more_pairs_and_none_is_longer_than_asked(tiny_detector_dir):
    d = Dialogue.from_texts([LONG_EARLIER, "Nice!", LONG_LAST])
    det = load_detector(tiny_detector_dir)
    det.classifier.max_length = 64
    seen = _recording(det)
    counts = {}
    for size in (29, 12):
        seen.clear()
        det.chunk_tokens = size
        det.predict([d])
        counts[size] = len(seen)
        assert all(det.classifier._token_len(p) <= size for pair in seen for p in pair)
    assert counts[12] > counts[29] > 1
    with pytest.raises(ValueError, match="at least 4"):
        det.chunk_tokens = 2


def test_predict_takes_what_check_takes_and_names_a_bad_dialogue():
    from dialcheck.errors import InputError

    texts = ["I have two dogs.", "What breed?", "I love my dogs.", "Cute!", "I never had dogs."]
    messages = {"messages": [{"role": "AB"[i % 2], "content": t} for i, t in enumerate(texts)]}
    unstructured = UnstructuredDetector()
    unstructured._clf = RuleClassifier()
    for det in (_utterance(), unstructured):
        want = det.predict([DOGS])[0]
        got = det.predict([texts, {"turns": texts}, messages])
        assert [(v.contradiction, v.score, v.evidence) for v in got] == [
            (want.contradiction, want.score, want.evidence)
        ] * 3
    det = _utterance()
    with pytest.raises(InputError, match=r"^dialogues\[1\]: turns\[0\]: expected an object .* or a string, got int$"):
        det.predict([texts, [3, "b"]])
    with pytest.raises(InputError, match=r"^dialogues\[0\]: expected a dialogue, got a string"):
        det.predict(texts)  # one dialogue passed where a list of them is expected
    with pytest.raises(InputError, match="got one Dialogue"):
        det.predict(DOGS)


STAR_WARS = Dialogue.from_texts(
    [
        "Hello! I'm a huge fan of star wars. How about you?",
        "I have never seen a star wars movie. Have you?",
        "Neither have I. What do you like to do?",
    ]
)


def test_implied_statement_reads_an_agreement_as_the_other_speakers_statements():
    from dialcheck.detectors.utterance import implied_statement

    assert implied_statement(STAR_WARS, 2) == "I have never seen a star wars movie."
    assert implied_statement(STAR_WARS, 1) is None  # not an agreement
    only_question = Dialogue.from_texts(["Do you like dogs?", "Me too!"])
    assert implied_statement(only_question, 1) is None  # nothing stated to agree with
    for text in ("Same thing happened to me.", "I'm too tired.", "I do too much."):
        assert implied_statement(Dialogue.from_texts(["I love dogs.", text]), 1) is None
    for text in (
        "Me too!",
        "yeah same here and it's hard",
        "So do I",
        "I don\u2019t either.",
        "Me neither I want to",
        "Nice! Me too.",  # an interjection first, as chit-chat bots say it
        "That's great, so do I!",
    ):
        assert implied_statement(Dialogue.from_texts(["I love dogs.", text]), 1) == "I love dogs."


def test_ellipsis_resolve_catches_a_contradiction_stated_by_agreeing():
    det = _utterance()
    (plain,) = det.predict([STAR_WARS])
    assert not plain.contradiction  # "Neither have I." shares no word with the earlier turn
    det.ellipsis = "resolve"
    assert det.config.options == {"ellipsis": "resolve"}
    det._clf.calls.clear()
    (v,) = det.predict([STAR_WARS])
    assert v.contradiction and v.evidence == (0,)
    assert v.read_as == {2: "I have never seen a star wars movie."}  # the verdict says how the reply was read
    assert v.to_dict()["read_as"] == {"2": "I have never seen a star wars movie."}
    assert plain.read_as is None and "read_as" not in plain.to_dict()
    assert det._clf.calls[0] == [
        (STAR_WARS.turns[0].text, STAR_WARS.last.text),
        (STAR_WARS.turns[0].text, "I have never seen a star wars movie."),  # the agreement, read as what it agrees with
    ]


def test_ellipsis_resolve_reads_an_earlier_agreement_as_its_statement_and_names_that_turn():
    d = Dialogue.from_texts(["I love dogs.", "Me too!", "Dogs are great.", "I never liked dogs."])
    det = _utterance(ellipsis="resolve")
    (v,) = det.predict([d])
    assert v.contradiction and v.evidence == (1,) and v.read_as == {1: "I love dogs."}
    lone = Dialogue.from_texts(["I love dogs.", "Me too!"])  # nothing earlier of its speaker: nothing was read
    assert det.predict([lone])[0].read_as is None
    det.ellipsis = "off"
    assert not det.predict([d])[0].contradiction and "ellipsis" not in det.config.options
    with pytest.raises(ValueError, match="ellipsis"):
        det.ellipsis = "on"


def test_questions_skip_leaves_out_earlier_turns_that_only_ask_about_the_other_speaker():
    d = Dialogue.from_texts(
        ["Have you never owned dogs?", "No.", "Do I look like I never had dogs?", "Ha.", "I never had dogs."]
    )
    det = _utterance()
    (read,) = det.predict([d])
    assert read.evidence == (0, 2)  # the rule classifier scores both questions as contradicted
    det.questions = "skip"
    assert det.config.options == {"questions": "skip"}
    det._clf.calls.clear()
    (v,) = det.predict([d])
    assert det._clf.calls[0] == [(d.turns[2].text, d.last.text)]  # "Do I look ...?" is about its speaker: kept
    assert v.evidence == (2,)
    only = Dialogue.from_texts(["Have you never owned dogs?", "No.", "I never had dogs."])
    assert det.predict([only])[0].score == 0.0 and not det.predict([only])[0].contradiction
    with pytest.raises(ValueError, match="questions"):
        det.questions = "drop"


def test_questions_strip_reads_each_paired_turn_without_its_questions_to_the_other_speaker():
    d = Dialogue.from_texts(
        [
            "Where do you live?",
            "I live in Ohio. Do you like it there? Is my accent odd?",
            "Ha.",
            "What do you do?",
            "Nice.",
            "I live in Texas. Have you been?",
        ]
    )
    det = _utterance()
    det.questions = "strip"
    assert det.config.options == {"questions": "strip"}
    det._clf.calls.clear()
    det.predict([d])
    # "What do you do?" only asks: not paired, as with skip; the question about the speaker stays
    assert det._clf.calls[0] == [("I live in Ohio. Is my accent odd?", "I live in Texas.")]
    det.questions = "skip"
    det._clf.calls.clear()
    det.predict([d])
    assert det._clf.calls[0] == [(d.turns[1].text, d.last.text)]


def test_questions_echoes_reads_each_paired_turn_without_the_questions_that_hand_the_turn_back():
    d = Dialogue.from_texts(["Pets?", "I have a cat. Do you?", "No.", "I never had a pet, how about you?"])
    det = _utterance()
    det.questions = "echoes"
    det._clf.calls.clear()
    det.predict([d])
    assert det._clf.calls[0] == [("I have a cat.", "I never had a pet.")]
    asks = Dialogue.from_texts(["Pets?", "I have a cat. What is your favourite animal?", "No.", "I never had a pet."])
    det._clf.calls.clear()
    det.predict([asks])  # a question with something new in it is read
    assert det._clf.calls[0] == [(asks.turns[1].text, "I never had a pet.")]


def test_answers_strip_reads_the_last_turn_without_the_yes_no_answer_to_the_question_before_it():
    d = Dialogue.from_texts(["We open at 9 am.", "Can I come at 8?", "No - we only open at 9 am, so come after that."])
    det = _utterance()
    det._clf.calls.clear()
    det.predict([d])
    assert det._clf.calls[0] == [(d.turns[0].text, d.last.text)]  # read as it is by default
    det.answers = "strip"
    assert det.config.options == {"answers": "strip"}
    det._clf.calls.clear()
    det.predict([d])
    assert det._clf.calls[0] == [(d.turns[0].text, "We only open at 9 am, so come after that.")]
    # not after a statement, not when too little follows, and never an earlier turn
    for kept in (
        Dialogue.from_texts(["We open at 9 am.", "I'll come at 8.", "No - we only open at 9 am, so come later."]),
        Dialogue.from_texts(["I have a dog.", "Do you have pets?", "No, I don't."]),
        Dialogue.from_texts(["Yes, I have a dog named Rex.", "Do you?", "I have a cat called Tom now."]),
    ):
        det._clf.calls.clear()
        det.predict([kept])
        assert det._clf.calls[0] == [(kept.turns[0].text, kept.last.text)]
    with pytest.raises(ValueError, match="answers"):
        det.answers = "drop"


def test_without_answer_needs_a_question_from_the_other_speaker_just_before():
    from dialcheck.detectors.utterance import without_answer

    turns = ["I'm 30.", "Are you older than 25?", "Yes, I turned 30 in May this year."]
    assert without_answer(Dialogue.from_texts(turns), 2) == "I turned 30 in May this year."
    for opener in ("Not quite.", "Unfortunately not,", "Nope!", "Of course —", "No:"):
        text = f"{opener} we close at 1 pm on Saturdays."
        assert without_answer(Dialogue.from_texts(["Hi.", "Open at 2?", text]), 2) == "We close at 1 pm on Saturdays."
    same_speaker = Dialogue([Turn("bot", "Saturdays?"), Turn("bot", "No, we close at 1 pm on Saturdays.")])
    assert without_answer(same_speaker, 1) == same_speaker.last.text  # its own question: not an answer
    for kept in ("Nobody is in on Saturdays after 1 pm.", "Now we close at 1 pm on Saturdays.", "No."):
        assert without_answer(Dialogue.from_texts(["Hi.", "Open at 2?", kept]), 2) == kept
    assert without_answer(Dialogue.from_texts(["No, we close at 1 pm on Saturdays."]), 0).startswith("No,")


def test_without_echoes_leaves_a_turn_of_nothing_else_and_new_questions():
    from dialcheck.detectors.utterance import without_echoes

    assert without_echoes("Yes, three sisters. Do you?") == "Yes, three sisters."
    assert without_echoes("Blue, I paint everything blue. Yours?") == "Blue, I paint everything blue."
    assert without_echoes("I\u2019m fine, and you?") == "I\u2019m fine."
    assert without_echoes("My favourite is blue, what\u2019s yours?") == "My favourite is blue."
    assert without_echoes("You?") == "You?"
    for kept in ("Cool, so do you like it?", "I do. What about your weekend?", "No questions. None."):
        assert without_echoes(kept) == kept


def test_without_questions_keeps_a_turn_that_only_asks_and_questions_about_the_speaker():
    from dialcheck.detectors.utterance import without_questions

    assert without_questions("Cool! I bike. How do you get to work?") == "Cool! I bike."
    assert (
        without_questions("How do you get to work? What about weekends?")
        == "How do you get to work? What about weekends?"
    )
    assert without_questions("I\u2019m 30, do I look older? Do you?") == "I\u2019m 30, do I look older?"
    assert without_questions("No questions here. None.") == "No questions here. None."


def test_asks_only_needs_every_sentence_a_question_and_no_first_person():
    from dialcheck.detectors.utterance import asks_only

    assert asks_only("How many children do you have?") and asks_only("Oh no. What happened? Are you ok?") is False
    assert asks_only("What happened? Are you ok?")
    for text in ("I love dogs. Do you?", "Is my hair ok?", "We\u2019re late, aren\u2019t we?", "Tell me more.", ""):
        assert not asks_only(text), text


def test_score_turns_gives_the_pair_scores_predict_gives_those_turns(tiny_detector_dir):
    det = load_detector(tiny_detector_dir)
    det.slots, det.ellipsis = "settle", "resolve"
    dialogues = [
        ["I'm 29.", "Cool.", "I have two dogs.", "Nice.", "When I was 35 I had three dogs."],
        ["I like tea.", "Me too.", "I work as a nurse.", "Oh.", "I hate tea."],
    ]
    full = [v.pair_scores for v in det.predict(dialogues)]
    got = det.score_turns(dialogues, [[0, 2], [2, 1]])  # turn 1 is the other speaker's: never paired
    assert got == [{0: full[0][0], 2: full[0][2]}, {2: full[1][2]}]
    assert det.score_turns(dialogues, [[], [0]]) == [{}, {0: full[1][0]}]
    with pytest.raises(InputError, match="2 dialogues but 1 sets of turns"):
        det.score_turns(dialogues, [[0]])


def _copy_model(src, dst):
    import shutil

    shutil.copytree(src, dst)
    return dst


@pytest.mark.parametrize("damage", ["cut", "text"])
def test_a_damaged_weights_file_is_named_at_load_and_check_exits_2(tiny_detector_dir, tmp_path, capsys, damage):
    # an interrupted copy (cut short) or a file that is not safetensors: named, not a safetensors traceback
    from helpers_cli import run_cli

    folder = _copy_model(tiny_detector_dir, tmp_path / "model")
    weights = folder / "weights.safetensors"
    weights.write_bytes(weights.read_bytes()[:200] if damage == "cut" else b"<html>not found</html>")
    with pytest.raises(ModelError, match=r"weights\.safetensors: not a readable safetensors file .*copy it again"):
        load_detector(folder).predict([DOGS])
    data = tmp_path / "d.json"
    data.write_text('["I have a dog.", "Nice.", "I never had a dog."]')
    code, _, err = run_cli(capsys, "check", str(data), "--model", str(folder))
    assert code == 2 and "weights.safetensors: not a readable safetensors file" in err and "Traceback" not in err


def test_weights_trained_on_another_base_are_named_not_a_size_mismatch_traceback(tiny_detector_dir, tmp_path):
    import json

    from transformers import AutoTokenizer, BertConfig, BertModel

    config = json.loads((tiny_detector_dir / "dialcheck.json").read_text())
    wider = tmp_path / "wider-bert"  # the same tokenizer, 48 wide where the weights were trained 32 wide
    BertModel(
        BertConfig(vocab_size=30522, hidden_size=48, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64)
    ).save_pretrained(wider)
    AutoTokenizer.from_pretrained(config["base"]).save_pretrained(wider)
    folder = _copy_model(tiny_detector_dir, tmp_path / "model")
    (folder / "dialcheck.json").write_text(json.dumps({**config, "base": str(wider)}))
    with pytest.raises(ModelError, match=r"weights\.safetensors: weights do not fit the base .*wider-bert"):
        load_detector(folder).predict([DOGS])
