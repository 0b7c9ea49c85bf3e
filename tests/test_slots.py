"""Persona slots (dialcheck.detectors.slots) and the utterance detector's reading slots="persona"."""

import numpy as np
import pytest

from dialcheck.detectors.slots import (
    age_timeline,
    ages_cut,
    kin_conflicts,
    other_slots,
    persona_slots,
    self_conflict,
    slot_conflicts,
    slot_settled,
    slots_only,
    spouse_conflicts,
    work_claims,
    work_conflicts,
    work_settled,
    work_status,
)
from dialcheck.detectors.utterance import SELF, SETTLED_SCORE, SLOT_SCORE
from dialcheck.schema import Dialogue
from test_detectors import _utterance


@pytest.mark.parametrize(
    ("text", "slots"),
    [
        ("My name is Ava.", {("name", "ava")}),
        ("my name's bob", {("name", "bob")}),
        ("Call me Jo.", {("name", "jo")}),
        ("Hi, I'm Lucy! How can I help?", {("name", "lucy")}),
        ("Hey! I'm Sam. What's your name?", {("name", "sam")}),  # the greeting a sentence of its own
        ("Hello there! I am Ava. I also love dogs.", {("name", "ava")}),  # "also" in another sentence
        ("Hi! I'm Sam too.", set()),  # one more name, not a new one
        ("Hello. I'm tired.", set()),
        ("Hey! I'm Canadian.", set()),  # a nationality after a greeting is no name
        ("Hi, I'm Jewish and I love bagels.", set()),
        ("Hi, I'm South African.", set()),
        ("Hello! I'm Vegan, sorry.", set()),
        ("Hi, I'm Christian.", {("name", "christian")}),  # a common first name stays one
        ("My name is Irish.", {("name", "irish")}),  # only the greeting phrasing leaves them out
        ("I'm Chloe, nice to meet you.", {("name", "chloe")}),  # a name with a pleasantry
        ("I'm Ryan. Nice to meet you!", {("name", "ryan")}),  # across the sentence break
        ("Nice to meet you too! I'm Lily.", {("name", "lily")}),  # "too" belongs to the pleasantry
        ("Pleased to meet you, I'm Wei.", {("name", "wei")}),
        ("I'm Canadian, nice to meet you.", set()),  # a nationality
        ("I'm good, nice to meet you.", set()),  # not capitalized, and no value
        ("I'm Sam too, nice to meet you.", set()),  # one more name
        ("This is my friend Sam, nice to meet you.", set()),  # someone else
        ("I'm Nova, your AI assistant.", {("name", "nova")}),
        ("This is Tom from billing.", {("name", "tom")}),
        ("Max is my name.", {("name", "max")}),
        ("I'm 32 years old.", {("age", "32")}),
        ("I'm 67.", {("age", "67")}),
        ("I just turned 18!", {("age", "18")}),
        ("I work as a nurse at the clinic.", {("job", "nurse")}),
        ("My job is a pilot.", {("job", "pilot")}),
        ("My occupation is nurse.", {("job", "nurse")}),
        ("I turned 40 last year.", {("age", "40 41")}),  # 40 or 41 by now
        ("I'm in my late fifties now.", {("age", " ".join(sorted(str(a) for a in range(50, 60))))}),
        ("I'm in my teens.", {("age", " ".join(sorted(str(a) for a in range(13, 20))))}),
        ("I'm in my room.", set()),
        # ages in words, beside other content, or as "a N-year-old"
        ("I am sixty-two.", {("age", "62")}),
        ("I'm twenty five years old.", {("age", "25")}),
        ("I'm eighteen.", {("age", "18")}),
        ("Thanks! I'm 18, just graduated high school in June.", {("age", "18")}),
        ("Working, I'm 28 and I'm a graphic designer.", {("age", "28")}),
        ("I'm a 19 year old student.", {("age", "19")}),
        ("I'm a 19-year-old.", {("age", "19")}),
        ("I'm 30, 40 minutes away.", set()),  # a range of minutes
        ("I'm 2, maybe 3 miles away.", set()),  # under 13: not read without "years old"
        ("I'm 5 and a half feet tall.", set()),
        ("I'm one.", set()),  # "I'm one of them" cut short: small number words are not read
        ("I'm 25,000 dollars in debt.", set()),
        # not the speaker's own slot, no value, or not a slot at all
        ("My job is teaching math.", set()),  # a description, not a job title
        ("My job is fun.", set()),
        ("I also work as a tutor.", set()),  # one more job, not a new one
        ("You can call me Liz too.", set()),
        # not the speaker's own slot, no value, or not a slot at all
        ("Call me back later.", set()),
        ("hi, i'm fine thanks", set()),
        ("Hello! I'm Here to help.", set()),
        ("My name is not important.", set()),
        ("My daughter is 5 years old and my sister's name is Mia.", set()),
        ("I'm 20 years into my career.", set()),
        ("I'm 5 minutes away.", set()),
        ("Did I say I'm 25 years old?", set()),
        ("Nice to meet you, Max!", set()),
    ],
)
def test_persona_slots_reads_first_person_statements_only(text, slots):
    assert {(k, " ".join(sorted(v))) for k, v in persona_slots(text)} == {(k, v) for k, v in slots}


def test_a_conflict_needs_the_same_slot_with_no_shared_word():
    def conflicts(earlier, last):
        return slot_conflicts(Dialogue.from_texts([earlier, "Oh?", last]), [0])

    assert conflicts("My name is Ava.", "Call me Max.") == {0: "name"}
    assert conflicts("I'm 25 years old.", "I'm 40.") == {0: "age"}
    assert conflicts("I work as a nurse.", "I work as a nurse practitioner.") == {}  # shares "nurse"
    assert conflicts("My name is Ava.", "I'm 40.") == {}  # another slot
    assert conflicts("Call me Liz.", "My name is Elizabeth, but friends call me Liz.") == {}  # one value matches
    assert conflicts("I love dogs.", "My name is Max.") == {}  # the earlier turn states no slot
    assert conflicts("I turned 40 last year.", "I'm 41 years old now.") == {}
    assert conflicts("I turned 40 last year.", "I'm 43 years old now.") == {0: "age"}
    assert conflicts("I work as a teacher.", "Yes, I work as a tutor on weekends too.") == {}


@pytest.mark.parametrize(
    ("text", "was", "will"),
    [
        ("When I was 22 years old, I moved to Paris.", {22}, set()),
        ("I was 30 when I ran my first marathon.", {30}, set()),
        ("I was 17 years old then.", {17}, set()),
        ("Yes, at the age of 25 I bought a house.", {25}, set()),
        ("At 45 I finally learned to drive.", {45}, set()),
        ("Ever since I was 8, I've loved lakes.", {8}, set()),
        ("Back when I was in my thirties, I ran a lot.", {30}, set()),  # a decade: its first age
        ("I'll be 36 next month.", set(), {36}),
        ("I'm turning 50 in May!", set(), {50}),
        ("When I was twenty, I moved.", {20}, set()),
        ("I'll be thirty-one in May.", set(), {31}),
        ("I retired at 60 and took up gardening.", {60}, set()),
        ("I finished my master's at 22.", {22}, set()),
        ("I got married at 25 in Rome.", {25}, set()),
        ("I finished my shift at 17 and went home.", set(), set()),  # a time, no life event
        ("I retired at 14:00 from the table.", set(), set()),
        # no age of the speaker's: a time, a speed, a rank, a duration, someone else, a question
        ("At 10 I go to bed.", set(), set()),
        ("I was driving at 60 mph, and at 15:30 I stopped.", set(), set()),
        ("I was 2nd in the race when I was tired.", set(), set()),
        ("I was 5 minutes late.", set(), set()),
        ("I'll be 10 minutes, sorry.", set(), set()),
        ("When my son was 12, he moved.", set(), set()),
        ("Were you 20 when I was 25?", set(), set()),
    ],
)
def test_age_timeline_reads_the_speakers_past_and_future_ages(text, was, will):
    assert age_timeline(text) == (was, will)


def test_a_past_age_above_the_present_one_or_a_future_one_below_it_conflicts():
    def conflicts(earlier, last):
        return slot_conflicts(Dialogue.from_texts([earlier, "Oh?", last]), [0])

    assert conflicts("I'm 29 years old.", "When I was 35, I moved to Paris.") == {0: "age"}
    assert conflicts("I'm 35.", "I'll be 30 next year.") == {0: "age"}
    assert conflicts("When I was 35, I moved to Paris.", "I'm 29 years old.") == {0: "age"}  # either order
    assert conflicts("I'm 22.", "I'm in my fifties now, so I take it slow.") == {0: "age"}
    assert conflicts("I'm 29 years old.", "When I was 22, I moved to Paris.") == {}
    assert conflicts("I'm 29 years old.", "When I was 29, I moved to Paris.") == {}  # this year
    assert conflicts("I'm 35.", "I'll be 36 next month.") == {}
    assert conflicts("I'm 55.", "I'm in my fifties now.") == {}
    assert conflicts("I'm 50.", "When I was in my thirties I ran.") == {}
    assert conflicts("I love dogs.", "When I was 35, I moved to Paris.") == {}  # no age to compare


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("My dog's name is Max.", {"name"}),
        ("His name is Peter, and he is 12 years old.", {"name", "age"}),
        ("She is 31 years old.", {"age"}),
        ("My son is 5.", {"age"}),
        ("He works as a mechanic.", {"job"}),
        ("My name is Max and I'm 12 years old.", set()),
        ("She is nice.", set()),
        ("Your total is 40 dollars and she is 5 minutes away.", set()),  # numbers that are no age
        ("It's 5 pm.", set()),
    ],
)
def test_other_slots_are_someone_elses(text, expected):
    assert other_slots(text) == expected


def test_slots_only_turns_say_nothing_else():
    for text in ("I'm 27.", "Yes, I work as an accountant.", "Hi! I'm Ava, your booking assistant.",
                 "I turned 21 last year.", "My name's Jake."):  # fmt: skip
        assert slots_only(text), text
    for text in ("I'm 27 and I love dogs.", "I work as a nurse at the children's hospital.", "I love dogs.",
                 "This is Tom from billing, how can I help?"):  # fmt: skip
        assert not slots_only(text), text


@pytest.mark.parametrize(
    ("earlier", "last", "settled"),
    [
        ("My name is Ava.", "As I said, my name is Ava. How can I help?", True),  # restated
        ("I'm 27.", "She is 31 years old.", True),  # someone else's
        ("My name is Leo.", "My dog's name is Max, he is 3 years old.", True),
        ("I work as a barista.", "I also work as a dog walker in the mornings.", True),  # one more
        ("I turned 21 last year.", "Yes, I'm 22 years old now.", True),
        ("My name is Ava.", "My name is Max.", False),  # a conflict: the persona reading's
        ("I'm 27.", "I'm not 27, she is.", False),  # a negation: left to the classifier
        ("I work as a nurse.", "I'm retired now.", False),  # not spoken to in words the patterns read
        ("I'm 27 and I love dogs.", "She is 31 years old.", False),  # the earlier turn says more than slots
        ("I'm 27.", "I'm 27 years old and she is 31.", True),  # the own age read again: the same
        ("I'm 27.", "She is 31 and I'm 35.", False),  # the speaker's own age changed
        ("I work as a nurse.", "My wife works as a nurse too, and I'm a doctor.", False),  # the speaker too
        ("I'm 30.", "He is 35, five years younger than me.", False),
        ("I'm 29 years old.", "When I was 22 years old, I moved to Paris.", True),  # an age before this one
        ("I'm 35 years old.", "I'll be 36 next month, so a small party.", True),  # an age after it
        ("I'm 29 years old.", "When I was 35, I moved to Paris.", False),  # a conflict
        ("I'm 60.", "When I was 25 I said I'm 61.", False),  # the present age itself changed
        ("I'm 29.", "I never left home when I was 20.", False),  # a negation
    ],
)
def test_settled_turns_say_only_slots_that_the_last_turn_agrees_with(earlier, last, settled):
    d = Dialogue.from_texts(["Hi", earlier, "Oh?", last])
    assert slot_settled(d, [1]) == ({1} if settled else set())


def test_the_reading_flags_a_changed_slot_with_the_turn_as_evidence_and_only_when_on():
    d = Dialogue.from_texts(
        ["Hi", "Hello, I love dogs.", "What do you do?", "I work as a nurse.", "Cool!", "I work as a pilot."]
    )
    det = _utterance()
    (v,) = det.predict([d])
    assert not v.contradiction  # the stand-in classifier sees no "never": consistent
    det.slots = "persona"
    assert det.config.options == {"slots": "persona"}
    (v,) = det.predict([d])
    assert v.contradiction and v.evidence == (3,) and v.pair_scores[3] == SLOT_SCORE
    assert v.pair_scores[1] < det.eta_e  # the other turn of the speaker keeps its classifier score
    other = Dialogue.from_texts(["Hi", "I work as a nurse.", "I work as a pilot."])  # the other speaker's job
    assert not det.predict([other])[0].contradiction
    det.slots = "off"
    assert "slots" not in det.config.options
    with pytest.raises(ValueError, match="slots"):
        det.slots = "names"


class _SameScore:
    """Scores every pair 0.9: a classifier that flags any two turns."""

    def pair_fits(self, first, second):
        return True

    def score(self, pairs, batch_size=64, show_progress_bar=False):
        return np.full(len(pairs), 0.9, dtype=np.float32)


def test_settle_caps_the_pair_of_an_agreed_slot_turn_and_keeps_the_others():
    d = Dialogue.from_texts(
        ["Hi", "I'm 27.", "Hobbies?", "I love dogs.", "Your sister?", "She is 31 years old and hates dogs."]
    )
    det = _utterance()
    det._clf = _SameScore()
    (v,) = det.predict([d])
    assert v.contradiction and v.pair_scores[1] > 0.5  # the classifier flags both pairs
    det.slots = "settle"
    (v,) = det.predict([d])
    assert v.pair_scores[1] == SETTLED_SCORE  # "I'm 27." is settled by "She is 31": someone else's age
    assert v.contradiction and v.evidence == (3,)  # the dog pair is not a slot turn: still flagged
    conflict = Dialogue.from_texts(["Hi", "I'm 27.", "Oh?", "I'm 45 years old."])
    assert det.predict([conflict])[0].pair_scores[1] == SLOT_SCORE  # settle keeps persona's conflicts


@pytest.mark.parametrize(
    ("earlier", "last", "cut"),
    [
        ("I'm 28 and I work in marketing.", "When I was 22 I backpacked.", ("I work in marketing.", "I backpacked.")),
        ("I'm 40, and I run.", "I'll be 41 in March, so a party.", ("I run.", "In March, so a party.")),
        ("I'm 38 now, and I speak Spanish.", "I'm 38 and I still do.", ("I speak Spanish.", "I still do.")),
        ("I'm twenty-six, I bake.", "I've baked since I was sixteen.", ("I bake.", "I've baked")),
        ("I'm 30 and my mom is 61.", "I'm 30, my mom is 65.", ("My mom is 61.", "My mom is 65.")),  # hers kept
        # not known to agree: kept whole, for the classifier (and the persona reading) to judge
        ("I'm 28 and I work in marketing.", "When I was 30 I backpacked.", None),  # a past age above
        ("I'm 40, and I run.", "I'll be 40 next year.", None),  # a future age not above
        ("I'm 77, too old to travel.", "I just retired at 60.", None),  # "just": a recent age
        ("I'm 28 and I work in marketing.", "My mom is 31 and loves concerts.", None),  # someone else's: kept
        ("My son is 8 and loves Lego.", "My son is 12 now.", None),  # nobody's own age
        ("I'm 28 and I work in marketing.", "I backpacked across Vietnam.", None),  # one age only
    ],
)
def test_ages_known_to_agree_are_cut_out_of_both_turns(earlier, last, cut):
    assert ages_cut(earlier, last) == cut


@pytest.mark.parametrize(
    ("earlier", "last", "conflict"),
    [
        ("I'm 28, a designer.", "My mom is 31 and loves concerts.", True),  # a mother three years older
        ("I'm 25.", "Yes, my daughter is 20 and just started college.", True),
        ("I'm 22 and I work at a cafe.", "I babysit a lot. My grandson just turned 8.", True),
        ("I'm 45.", "My older sister is 38 and lives in Portland.", True),
        ("My younger brother is 24 and makes tacos.", "I'm 21, and I keep telling him to open a truck.", True),
        ("I'm 28, a designer.", "My mom is 58 and loves concerts.", False),
        ("I'm 45.", "My older sister is 49.", False),
        ("I'm 35.", "My mom is 47.", False),  # 12 years: unusual, not ruled out
        ("I'm 29.", "My sister is 40.", False),  # older or younger: not said
        ("I'm 28.", "His mom is 31.", False),  # not the speaker's relative
    ],
)
def test_a_relatives_age_can_rule_out_the_speakers(earlier, last, conflict):
    assert kin_conflicts(earlier, last) is conflict
    d = Dialogue.from_texts(["Hi", earlier, "Oh?", last])
    assert (slot_conflicts(d, [1]) == {1: "age"}) is conflict


@pytest.mark.parametrize(
    ("earlier", "last", "conflict"),
    [
        ("Yes, my wife and I have been together ten years.", "Pizza! My husband makes the best one.", True),
        ("My hubby is a firefighter.", "My lovely wife says I work too much.", True),
        ("My dear husband cooks.", "My wife and I went out.", True),  # "dear" is no "dear departed"
        ("My husband's parents live nearby.", "My wife's job keeps her busy.", True),
        ("My wife and I love hiking.", "My wife's pasta is the best.", False),  # the same spouse
        ("My husband cooks.", "My hubby grills too.", False),
        ("My ex-wife lives in Ohio.", "My husband and I love it here.", False),  # an ex
        ("My late husband loved jazz.", "My wife and I go to concerts.", False),  # a late spouse
        ("My first wife and I divorced years ago.", "My husband is great.", False),  # a divorce told
        ("My husband passed away in 2019.", "My wife and I met at church.", False),  # a death told
        ("My husband-to-be is a chef.", "My wife would disagree.", False),  # not yet married
        ("My sister's husband runs a shop.", "My wife helps him out.", False),  # someone else's husband
        ("My wife and my sister's husband run a shop.", "My husband is tall.", True),
        ("Her husband is a chef.", "My wife cooks too.", False),  # not the speaker's
        ("My wife and my husband", "My husband is tall.", False),  # both in one turn: not read
    ],
)
def test_a_wife_in_one_turn_and_a_husband_in_the_other_conflict(earlier, last, conflict):
    assert spouse_conflicts(earlier, last) is conflict
    d = Dialogue.from_texts(["Hi", earlier, "Oh?", last])
    assert (slot_conflicts(d, [1]) == {1: "spouse"}) is conflict


def test_relatives_ages_that_fit_are_cut_out_with_the_speakers_own():
    assert ages_cut("I'm 35 and I've got two kids.", "My son is 8 and my mom is 62, she babysits.") == (
        "I've got two kids.",
        "She babysits.",
    )
    assert ages_cut("I'm 35 and I've got two kids.", "My mom is 47 and she babysits.") is None  # fits, not well
    assert ages_cut("My mom is 61 and I'm 30.", "My mom is 65 and she babysits.") is None  # hers twice: kept
    assert ages_cut("I'm 31 and my daughter is 4, a handful.", "My mom is 60 and runs.") == ("A handful.", "Runs.")
    assert ages_cut("I'm 31 and my son is 4.", "My son is 9 and my mom is 60, she runs.") is None  # a son in both


class _NumbersScore:
    """Flags a pair when it holds a digit (0.9), else 0.05: a classifier that reads two numbers as a conflict."""

    def pair_fits(self, first, second):
        return True

    def score(self, pairs, batch_size=64, show_progress_bar=False):
        return np.array([0.9 if any(c.isdigit() for c in a + b) else 0.05 for a, b in pairs], dtype=np.float32)


def test_settle_reads_a_pair_whose_ages_agree_without_the_ages():
    det = _utterance()
    det._clf = _NumbersScore()
    agree = Dialogue.from_texts(["Hi", "I'm 28 and I work in marketing.", "Travel?", "When I was 22 I backpacked."])
    assert det.predict([agree])[0].contradiction  # off: the numbers make the classifier flag it
    det.slots = "settle"
    (v,) = det.predict([agree])
    assert not v.contradiction and v.pair_scores[1] == pytest.approx(0.05)
    older = Dialogue.from_texts(["Hi", "I'm 28 and I work in marketing.", "Travel?", "When I was 30 I backpacked."])
    assert det.predict([older])[0].pair_scores[1] == SLOT_SCORE  # a conflict stays one
    mom = Dialogue.from_texts(["Hi", "I'm 28 and I work in marketing.", "Family?", "My mom is 31 and sings."])
    assert det.predict([mom])[0].contradiction  # someone else's age beside one's own: left to the classifier


def test_the_reading_is_a_command_line_option_and_a_cascade_reading(capsys):
    from dialcheck.detectors.cascade import READINGS
    from helpers_cli import run_cli

    assert "slots" in READINGS
    with pytest.raises(SystemExit):
        run_cli(capsys, "check", "--help")
    assert "--slots {off,persona,settle}" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("text", "status"),
    [
        ("I'm good. Just got home from work.", "working"),
        ("I work at a law firm as a paralegal.", "working"),
        ("My boss kept me late again.", "working"),
        ("I'm at work right now, but I'm off in an hour.", "working"),
        ("I work from home for a poultry company.", "from home"),
        ("No, I'm retired, but I used to teach gym.", "not working"),
        ("I've been unemployed for a while.", "not working"),
        ("I don't work anymore.", "not working"),
        ("No, I don't have a job.", "not working"),
        ("I'm a stay at home mom.", "at home"),
        ("I don't work on Sundays.", None),  # a day off
        ("I don't work today, it's my day off.", None),
        ("I'm retired, but I work part-time at the library.", "not working"),  # on the side: not working
        ("I used to work at a bank.", None),  # the past
        ("I want to work as a nurse.", None),  # a wish
        ("I quit my job last year.", None),
        ("Piano is hard, but I work at it every day.", None),  # practice, not a job
        ("I'm retired from the navy and I work as a guard.", "working"),  # "retired from": not retired now
        ("Do you work at the bank?", None),  # a question says nothing
        ("I'm retired. I work at a store.", None),  # both in one turn: neither
        ("Evening! I just got home from a long day at the office.", "working"),
        ("I had a rough day at work, my feet hurt.", "working"),
        ("I'm still at the office, ugh.", "working"),
        ("I used to come home from the office at midnight.", None),  # the past
        ("It was a long day at work.", None),  # "was": read as the past, left alone
    ],
)
def test_work_status_reads_whether_the_speaker_works_now(text, status):
    assert work_status(text) == status


@pytest.mark.parametrize(
    ("earlier", "last", "conflict"),
    [
        ("I'm looking for work. I've been unemployed for a while.", "I work in marketing.", True),
        ("I'm retired, so I have a lot of free time.", "I work at a law firm as a paralegal.", True),
        ("I'm doing well. I just got home from work.", "I'm a stay at home mom.", True),
        ("I just got home from a long day at the office.", "No, I'm retired. I'm a stay at home mom.", True),
        ("My boss just bought a new car.", "I don't work, I'm on disability.", True),
        ("I'm a stay-at-home dad.", "I work from home, so I'm with the kids all day.", False),
        ("I'm retired.", "I volunteer at the food bank.", False),
        ("I'm retired.", "I work at the hardware store part-time.", False),
        ("I work at a bakery.", "I don't work on Sundays.", False),
        ("I'm unemployed.", "I used to work in sales.", False),
    ],
)
def test_working_beside_not_working_conflicts(earlier, last, conflict):
    assert work_conflicts(earlier, last) is conflict
    d = Dialogue.from_texts(["Hi", earlier, "Oh?", last])
    assert (slot_conflicts(d, [1]) == {1: "job"}) is conflict


@pytest.mark.parametrize(
    ("earlier", "last", "settled"),
    [
        ("I'm a nurse.", "I don't work on Sundays, so I'll sleep in.", True),  # a day off fits a job
        ("No, I don't work today, it's my day off.", "I work at a bakery downtown.", True),
        ("I work as an electrician.", "When I'm not at work, I fish.", True),
        ("Not right now, I got laid off in March.", "Yes, I have a job interview on Monday.", True),
        ("No, I work full time at a call center.", "I want to quit and go back to school someday.", True),
        ("I'm between jobs right now.", "I worked as a graphic designer for ten years.", True),
        ("I used to work in sales, but I'm unemployed now.", "I'd like to work as a realtor.", True),
        # not settled: they do not fit, or both turns say more than work
        ("I'm a nurse.", "I work at a bank as a teller.", False),  # two jobs that share no word
        ("Yes, I'm a barista.", "I'd love to be a barista someday.", False),  # wanting what one is
        ("I'm a teacher.", "I've never worked in a school.", False),  # never worked
        ("I'm retired.", "I'm heading to my shift.", False),  # a conflict is the slot reading's
        ("I'm a nurse and I love cats.", "I don't work on Sundays and I hate cats.", False),  # both say more
        ("I'm a nurse with three cats.", "I don't work on Sundays. I hate cats.", False),  # a job, then more
        ("I love cats.", "I work as a nurse.", False),  # one turn says nothing of work
        ("I work for a local newspaper.", "I work for a national newspaper.", False),  # more than a restatement
        ("I work as a nurse.", "I work as a nurse at the city hospital.", True),  # one says no more than the other
        ("I want to be a chef one day.", "I don't want to be a chef one day.", False),  # a negated claim: unread
        ("I'm retired. I'm a stay at home mom.", "I'm retired. I'm not a stay at home mom.", False),
        ("I'm at work. I work in a call center.", "I'm at work. I don't work in a call center.", False),
        ("I work for a small company.", "I just want to be able to do whatever I want.", False),  # no job wished
        ("I want to be a nurse.", "I want to be a lawyer.", False),  # two wishes that differ
        ("I want to be a nurse.", "I'd like to become a nurse one day.", True),
        ("I am a librarian. Today we have story time.", "I love working with kids, my shift flies by.", False),
    ],
)
def test_work_settled_needs_fitting_claims_and_one_turn_of_nothing_but_work(earlier, last, settled):
    assert work_settled(earlier, last) is settled


def test_work_claims_name_the_job_or_place_and_say_whether_the_turn_says_more():
    claims, only = work_claims("I'm a chef at an Italian place.")
    assert claims == {("working", frozenset({"chef", "italian", "place"}))} and only
    claims, only = work_claims("Yes, I'm at work.")
    assert claims == {("working", frozenset())} and only  # no job named
    claims, only = work_claims("Long, my boss kept me late again.")
    assert claims == {("working", frozenset())} and not only  # no job named, and more said
    ((kind, words),) = work_claims("I spend all day with kids at the daycare I work at.")[0]
    assert kind == "working" and "daycare" in words  # the place before the phrasing
    assert not work_claims("I'm a teacher, I love my students.")[1]  # more than a place after the job
    assert work_claims("I love dogs.") == (frozenset(), False)
    assert ("unread", frozenset()) in work_claims("I'm at work. I don't work in a call center.")[0]


def test_settle_caps_a_pair_that_agrees_about_work_and_lifts_one_that_does_not():
    d = Dialogue.from_texts(["Hi", "I work as an electrician.", "Fun?", "When I'm not at work, I fish."])
    det = _utterance()
    det._clf = _SameScore()
    assert det.predict([d])[0].pair_scores[1] == pytest.approx(0.9)  # the classifier flags the pair
    det.slots = "settle"
    assert det.predict([d])[0].pair_scores[1] == SETTLED_SCORE
    flip = Dialogue.from_texts(["Hi", "I'm retired, so I have a lot of free time.", "Oh?", "I work at a law firm."])
    (v,) = det.predict([flip])
    assert v.contradiction and v.evidence == (1,) and v.pair_scores[1] == SLOT_SCORE


class _NoScore(_SameScore):
    """Scores every pair 0.05: a classifier that flags nothing."""

    def score(self, pairs, batch_size=64, show_progress_bar=False):
        return np.full(len(pairs), 0.05, dtype=np.float32)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("I don't really have a favorite food. My favorite food is mexican food. How about yours?", "favorite"),
        ("I don't have a favorite. My favorite would have to be Queen.", "favorite"),
        ("I don't have a favorite band, but Queen is my favorite band.", "favorite"),
        ("I don't really have a favorite. Pizza is my favorite though.", "favorite"),
        ("I don't have any pets. My dog is sweet.", "count:dog"),
        ("I'm an only child. My sister lives in Oslo.", "count:sister"),
        ("I have a cat. Both my cats love to chase mice.", "count:cat"),
        # consistent: a favourite of something else, one favourite, a change, someone else's pets
        ("I don't have a favorite movie, but my favorite actor is Tom Hanks.", None),
        ("My favorite food is curry. My favorite food to cook is pasta.", None),
        ("I don't have a favorite author, but Dune is my favorite book.", None),
        ("I don't have a favorite singer. Adele is my sister's favorite singer.", None),
        ("I don't have any pets now, my dog died last year.", None),
        ("No, I don't have any pets. My neighbor's dog visits me though.", None),
        ("I have two cats. My cats sleep on my bed.", None),
    ],
)
def test_self_conflict_reads_a_turn_that_contradicts_itself(text, kind):
    assert self_conflict(text) == kind


def test_a_last_turn_that_contradicts_itself_is_flagged_with_no_evidence_turn():
    last = "I don't have a favorite team. My favorite team is the Leafs."
    d = Dialogue.from_texts(["Hi", "Hello!", "Favorite team?", last])
    det = _utterance()
    det._clf = _NoScore()
    assert not det.predict([d])[0].contradiction  # slots off: only pairs are read
    det.slots = "persona"
    (v,) = det.predict([d])
    assert v.contradiction and v.score == SLOT_SCORE and v.evidence == () and v.category == SELF
    det._clf = _SameScore()  # already flagged by a pair: its evidence stands
    (v,) = det.predict([d])
    assert v.evidence == (1,) and v.category is None
    fine = Dialogue.from_texts(["Hi", "Hello!", "Pets?", "I don't have any pets now, my dog died last year."])
    det._clf = _NoScore()
    assert not det.predict([fine])[0].contradiction


def test_the_check_output_says_a_last_turn_contradicts_itself():
    from dialcheck.cli.check import render
    from dialcheck.schema import Verdict

    d = Dialogue.from_texts(["Hi", "Hello!", "Pets?", "I don't have any pets. My dog is sweet."])
    text = render(0, d, Verdict(True, SLOT_SCORE, (), SELF, {1: 0.05}))
    assert "CONTRADICTION" in text and "contradicts itself" in text and "contradicts [" not in text
    assert "contradicts itself" not in render(0, d, Verdict(True, 0.9, (1,), None, {1: 0.9}))
