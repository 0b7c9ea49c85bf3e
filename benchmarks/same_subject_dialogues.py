"""Two facts about one relative or pet, consistent or not: ``dialcheck train --dialogues`` input.

The shipped detectors read two turns about the same person or pet as a contradiction even when they say two
compatible things: "My husband is a nurse." … "My husband loves to cook Italian food." (0.70 with the default),
"I have a cat named Tom." … "My cat loves to sleep on the couch." (0.76). DECODE's consistent pairs are almost
never on the same subject, and its contradictions almost always are, so "same subject" is what the detector
learnt. This script writes labelled four-to-six-turn dialogues in which the bot states one fact about its
husband, sister, dog, … and later another fact about the same one:

- **consistent** (label false): facts of two different kinds (a job and a hobby, a name and a city), two different
  likes ("loves hiking" … "is really into chess"), a like and a dislike of different things, or the same fact in
  other words ("is a nurse" … "works as a nurse");
- **contradiction** (label true, the earlier fact as evidence): the same kind with another value (a nurse, then a
  lawyer; Denver, then Boston; Max, then Buddy), a like and a dislike of the same thing, or opposite traits
  ("very shy" … "so outgoing").

With ``--tastes F`` (session 64; default 0, which writes exactly the file of session 61), a share F of the
dialogues is about the bot's own taste instead: a kind of film, music or food it likes or dislikes, and later one
it enjoyed. "I hate horror movies." … "I watched a comedy last night and laughed the whole way through." is
consistent (another kind), as is a liked kind and then an enjoyed one of it; disliking a kind and then enjoying
one of it, or liking it and then saying it cannot stand it, is a contradiction.

Values, relatives, templates, openers and the bot's unrelated middle turn are drawn with ``--seed``; half of the
dialogues put an unrelated bot turn between the two facts. Names are drawn without regard to the relative's gender
("my wife's name is David"): kept as the training runs of session 61 read them.

    python benchmarks/same_subject_dialogues.py --out runs/same_subject.jsonl
    dialcheck train ... --dialogues runs/same_subject.jsonl \\
        --distill-alpha-by dialogues.positive=0,dialogues.negative=0      # with a teacher: keep their gold labels
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

PEOPLE = ["husband", "wife", "mom", "dad", "sister", "brother", "son", "daughter", "best friend", "boyfriend"]
PEOPLE += ["girlfriend", "grandma", "grandpa", "roommate", "uncle", "aunt", "cousin", "neighbor", "boss"]
PETS = ["dog", "cat", "parrot", "rabbit", "puppy", "kitten"]
JOBS = ["nurse", "lawyer", "teacher", "chef", "mechanic", "dentist", "firefighter", "accountant", "pilot"]
JOBS += ["plumber", "pharmacist", "librarian", "police officer", "software engineer", "farmer", "barber"]
CITIES = ["Denver", "Boston", "Chicago", "Seattle", "Miami", "Austin", "Portland", "Atlanta", "Phoenix", "Dallas"]
NAMES = ["Max", "Buddy", "Luna", "Bella", "Charlie", "Daisy", "Rocky", "Molly", "Oscar", "Coco", "Milo", "Rosie"]
PERSON_NAMES = ["Mark", "Sarah", "David", "Emma", "James", "Linda", "Kevin", "Rachel", "Tom", "Julia", "Paul", "Amy"]
ACTIVITIES = ["hiking", "cooking Italian food", "playing chess", "gardening", "watching football", "fishing"]
ACTIVITIES += ["reading mystery novels", "painting", "baking bread", "swimming", "playing the guitar", "yoga"]
PET_ACTIVITIES = ["chasing squirrels", "sleeping on the couch", "playing fetch", "long walks", "car rides"]
PET_ACTIVITIES += ["belly rubs", "sitting by the window", "playing with yarn", "bath time", "the vet"]
TRAITS = [("shy", "outgoing"), ("tall", "short"), ("lazy", "energetic"), ("quiet", "loud"), ("calm", "hyper")]
TRAITS += [("tidy", "messy"), ("grumpy", "cheerful")]

TEMPLATES = {
    "job": ["my {r} is a {v}.", "my {r} works as a {v}.", "my {r} has been a {v} for years."],
    "city": ["my {r} lives in {v}.", "my {r} moved to {v} a few years ago.", "my {r} is in {v} these days."],
    "name": ["my {r}'s name is {v}.", "my {r} is called {v}.", "I have a {r} named {v}."],  # the last: pets only
    "likes": ["my {r} loves {v}.", "my {r} is really into {v}.", "my {r} has always enjoyed {v}."],
    "dislikes": ["my {r} hates {v}.", "my {r} can't stand {v}.", "my {r} has never liked {v}."],
    "trait": ["my {r} is very {v}.", "my {r} is so {v}.", "my {r} has always been {v}."],
}
OPENERS = ["", "", "Oh, ", "Well, ", "Haha, ", "Actually, ", "Yes! ", "Funny you ask, "]
CLOSERS = ["", "", "", " What about you?", " It's a long story.", " I love that.", " Anyway, how are you?"]
QUESTIONS = ["Tell me about your family.", "Anything new with you?", "Do you have pets?", "How's everyone doing?"]
QUESTIONS += ["What did you do this weekend?", "Who do you live with?", "What's new?", "Cool, tell me more!"]
MIDDLE = ["I went to the farmers market this morning.", "Work has been busy lately.", "I'm trying to drink more water."]
MIDDLE += ["I just finished a great book.", "The weather here has been lovely.", "I'm thinking of repainting my room."]


TASTES = {  # kind -> (the kinds, how the bot likes one, dislikes one, enjoyed one)
    "film": (
        ["horror", "comedy", "romance", "action", "sci-fi", "documentary", "western", "musical"],
        ["I love {v} movies.", "{V} films are my favorite.", "I could watch {v} movies all day."],
        ["I hate {v} movies.", "I can't stand {v} films.", "{V} movies are just not for me."],
        ["I watched an old {v} movie last night and loved every minute.", "The last {v} film I saw was great fun."],
    ),
    "music": (
        ["jazz", "country", "rap", "classical", "heavy metal", "reggae", "techno", "opera"],
        ["I love {v} music.", "{V} is my favorite kind of music.", "I listen to {v} all the time."],
        ["I really dislike {v} music.", "I can't stand {v}.", "{V} has never been my thing."],
        ["I went to my first {v} concert last week and had a blast.", "I've had some {v} on repeat all week, so good."],
    ),
    "food": (
        ["spicy food", "sushi", "seafood", "Indian food", "Mexican food", "barbecue", "vegan food", "Thai food"],
        ["I love {v}.", "{V} is my favorite.", "I could eat {v} every day."],
        ["I hate {v}.", "I can't stand {v}.", "I never eat {v} if I can help it."],
        ["We had {v} for dinner and I enjoyed every bite.", "I tried a new place for {v} and loved it."],
    ),
}


def _opened(text: str, rng: random.Random) -> str:
    """``text`` after a drawn opener: lower-case after "Oh, " (unless it starts with an "I"), capitalised otherwise.

    >>> _opened("my dog is calm.", random.Random(1)), _opened("Jazz is great.", random.Random(3))
    ('Oh, my dog is calm.', 'Well, jazz is great.')
    """
    opener = rng.choice(OPENERS)
    if opener.endswith(", "):
        return opener + (text if text.startswith("I") else text[0].lower() + text[1:])
    return opener + text[0].upper() + text[1:]


def _taste_turn(template: str, v: str, rng: random.Random) -> str:
    return _opened(template.format(v=v, V=v[0].upper() + v[1:]), rng)


def _record(k: int, first: str, second: str, contradiction: bool, rng: random.Random) -> dict:
    """The labelled dialogue: user, bot (``first``), [user, bot (something else)], user, bot (``second``)."""
    turns = [rng.choice(QUESTIONS), first]
    if rng.random() < 0.5:
        turns += [rng.choice(QUESTIONS), rng.choice(MIDDLE)]
    turns += [rng.choice(QUESTIONS), second]
    return {
        "id": f"samesubj-{k:05d}",
        "turns": [{"speaker": "user" if i % 2 == 0 else "bot", "text": t} for i, t in enumerate(turns)],
        "contradiction": contradiction,
        "evidence": [1] if contradiction else [],
    }


def taste_facts(contradiction: bool, rng: random.Random) -> tuple[str, tuple[str, str], tuple[str, str]]:
    """A kind of taste and two (stance, value) facts: stance ``like``, ``dislike`` or ``enjoyed`` (one item)."""
    domain = rng.choice(sorted(TASTES))
    values = TASTES[domain][0]
    a = rng.choice(values)
    if contradiction:
        first, second = rng.choice([("dislike", "enjoyed"), ("like", "dislike"), ("dislike", "like")])
        return domain, (first, a), (second, a)
    if rng.random() < 0.5:  # another kind disliked, then one enjoyed: the shape hand set A's false alarms have
        return domain, ("dislike", a), ("enjoyed", rng.choice([v for v in values if v != a]))
    return domain, ("like", a), ("enjoyed", a)


def taste_dialogue(k: int, contradiction: bool, rng: random.Random) -> dict:
    """One labelled dialogue about the bot's own taste (see the module text), shaped as :func:`dialogue`'s."""
    domain, (s1, v1), (s2, v2) = taste_facts(contradiction, rng)
    stance = {"like": 1, "dislike": 2, "enjoyed": 3}
    first = _taste_turn(rng.choice(TASTES[domain][stance[s1]]), v1, rng)
    second = _taste_turn(rng.choice(TASTES[domain][stance[s2]]), v2, rng)
    return _record(k, first, second, contradiction, rng)


def _pool(kind: str, pet: bool) -> list[str]:
    """The values a fact of ``kind`` takes (traits are drawn from their antonym pairs)."""
    if kind in ("likes", "dislikes"):
        return PET_ACTIVITIES if pet else ACTIVITIES
    return {"job": JOBS, "city": CITIES}.get(kind, NAMES if pet else PERSON_NAMES)


def _value(kind: str, pet: bool, rng: random.Random) -> str:
    return rng.choice(rng.choice(TRAITS)) if kind == "trait" else rng.choice(_pool(kind, pet))


def _templates(kind: str, pet: bool) -> list[str]:
    return [t for t in TEMPLATES[kind] if pet or not t.startswith("I have")]


def _say(kind: str, r: str, v: str, pet: bool, rng: random.Random, template: str | None = None) -> str:
    text = (template or rng.choice(_templates(kind, pet))).format(r=r, v=v)
    return _opened(text, rng) + rng.choice(CLOSERS)


def _facts(contradiction: bool, pet: bool, rng: random.Random) -> tuple[tuple[str, str], tuple[str, str], str]:
    """Two (kind, value) facts and, for a consistent pair, the template the second restates with ("" otherwise)."""
    kinds = ["name", "likes", "dislikes", "trait"] + ([] if pet else ["job", "city"])
    if contradiction:
        kind = rng.choice([k for k in kinds if k != "dislikes"])
        if kind == "likes":
            v = _value("likes", pet, rng)
            first, second = rng.choice([("likes", "dislikes"), ("dislikes", "likes")])
            return (first, v), (second, v), ""
        if kind == "trait":
            a, b = rng.choice(TRAITS)[:: rng.choice((1, -1))]
            return ("trait", a), ("trait", b), ""
        a = _value(kind, pet, rng)
        b = rng.choice([v for v in _pool(kind, pet) if v != a])
        return (kind, a), (kind, b), ""
    how = rng.random()
    if how < 0.15:  # the same fact in other words
        kind = rng.choice([k for k in kinds if k != "name"])
        v = _value(kind, pet, rng)
        return (kind, v), (kind, v), "other"
    if how < 0.35:  # two likes, or a like and a dislike, of different things
        first, second = rng.choice([("likes", "likes"), ("likes", "dislikes"), ("dislikes", "likes")])
        a = _value("likes", pet, rng)
        b = rng.choice([v for v in _pool("likes", pet) if v != a])
        return (first, a), (second, b), ""
    k1, k2 = rng.sample([k for k in kinds if k != "dislikes"], 2)
    return (k1, _value(k1, pet, rng)), (k2, _value(k2, pet, rng)), ""


def dialogue(k: int, contradiction: bool, rng: random.Random) -> dict:
    """One labelled dialogue: user, bot (fact 1), [user, bot (something else)], user, bot (fact 2)."""
    pet = rng.random() < 0.3
    r = rng.choice(PETS if pet else PEOPLE)
    (k1, v1), (k2, v2), restate = _facts(contradiction, pet, rng)
    first = _say(k1, r, v1, pet, rng)
    template = None
    if restate:
        template = rng.choice([t for t in _templates(k2, pet) if t.format(r=r, v=v2)[1:] not in first])
    second = _say(k2, r, v2, pet, rng, template)
    return _record(k, first, second, contradiction, rng)


def main(argv: list[str] | None = None) -> int:
    from dialcheck.cli.common import nonnegative_int, unit_float

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--consistent", type=nonnegative_int, default=2000, help="consistent dialogues (default 2,000)")
    ap.add_argument(
        "--contradictions", type=nonnegative_int, default=1000, help="contradicting dialogues (default 1,000)"
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tastes", type=unit_float, default=0.0, help="share of dialogues about the bot's own taste (0-1)")
    args = ap.parse_args(argv)
    if not args.consistent + args.contradictions:
        ap.error("--consistent 0 and --contradictions 0 would write no dialogue")
    rng = random.Random(args.seed)
    labels = [False] * args.consistent + [True] * args.contradictions
    rng.shuffle(labels)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tastes = [0, 0]  # taste dialogues: consistent, contradicting
    with out.open("w") as f:
        for k, label in enumerate(labels):
            taste = args.tastes > 0 and rng.random() < args.tastes  # no draw at 0: session 61's file unchanged
            tastes[label] += taste
            f.write(json.dumps((taste_dialogue if taste else dialogue)(k, label, rng)) + "\n")
    print(
        f"wrote {len(labels)} dialogues ({args.contradictions} contradictions) to {out}; "
        f"about the bot's tastes: {tastes[0]} consistent, {tastes[1]} contradicting"
    )
    return 0


if __name__ == "__main__":
    from _cli import run

    raise SystemExit(run(main))
