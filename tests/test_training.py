import random

from dialcheck.detectors import UtteranceDetector, load_detector
from dialcheck.schema import Dialogue, Pair
from dialcheck.training import TrainConfig, train_detector
from dialcheck.training.data import (
    pseudo_dialogues,
    random_premise_negatives,
    split_groups,
    synthetic_histories,
)

WORDS = ["dogs", "cats", "tea", "coffee", "paris", "rome", "piano", "guitar", "chess", "golf"]


def _toy_pairs(n, seed):
    """Contradiction iff the second utterance negates the first one's topic."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        w = rng.choice(WORDS)
        first = f"i really like {w}"
        if i % 2:
            out.append(Pair(first, f"i never liked {w}", 1, "toy", f"g{i}"))
        else:
            out.append(Pair(first, f"i also like {rng.choice(WORDS)}", 0, "toy", f"g{i}"))
    return out


def test_training_learns_a_simple_rule_and_calibrates(tiny_base, tmp_path):
    det = UtteranceDetector(base=str(tiny_base), adapter={"type": "lora", "r": 8, "alpha": 16})
    train = _toy_pairs(256, 0)
    val = _toy_pairs(64, 1)
    val_d = pseudo_dialogues(val)
    cfg = TrainConfig(epochs=4, batch_size=16, lr=3e-3, eval_every=16, patience=10, seed=0)
    train_detector(det, train, val, val_d, cfg)
    assert det.config.metrics["val_balanced_accuracy"] > 0.9
    assert 0.0 < det.tau < 1.0
    det.save(tmp_path / "m")
    again = load_detector(tmp_path / "m")
    pos = Dialogue.from_texts(["i really like chess", "ok", "i never liked chess"])
    neg = Dialogue.from_texts(["i really like chess", "ok", "i also like golf"])
    vp, vn = again.predict([pos, neg])
    assert vp.score > vn.score and vp.contradiction and not vn.contradiction
    assert again.config.training["steps"] > 0 and again.tau == det.tau


def test_split_groups_never_shares_a_group():
    pairs = [Pair(str(i), f"g{i % 37}", i % 2, group=f"g{i % 37}") for i in range(500)]
    tr, va = split_groups(pairs, 0.2, seed=0)
    assert {p.group for p in tr}.isdisjoint({p.group for p in va})
    assert 0 < len(va) < len(tr)


def test_random_premise_negatives_come_from_other_groups():
    pairs = _toy_pairs(50, 2)
    negs = random_premise_negatives(pairs, seed=0)
    assert len(negs) == sum(p.label for p in pairs)
    by_first = {p.first: p.group for p in pairs}
    assert all(n.label == 0 and by_first[n.first] != n.group for n in negs)


def test_pseudo_dialogues_add_rct_like_negatives():
    pairs = [Pair("a", "z", 1, group="z"), Pair("b", "z", 0, group="z"), Pair("c", "y", 0, group="y")]
    ds = pseudo_dialogues(pairs)
    labels = sorted((e.id, e.label) for e in ds)
    assert labels == [("y", False), ("z", True), ("z#rct", False)]
    z = next(e for e in ds if e.id == "z")
    assert [z.dialogue.turns[i].text for i in z.evidence] == ["a"]
    rct = next(e for e in ds if e.id == "z#rct")
    assert [t.text for t in rct.dialogue.turns] == ["b", "z"]


def test_synthetic_histories_tag_speakers_and_end_with_the_last_turn():
    pairs = _toy_pairs(40, 3)
    out = synthetic_histories(pairs, seed=0)
    assert all(p.first.count("same:") >= 1 and p.first.count("other:") >= 1 for p in out)
    assert {p.second for p in out} <= {p.second for p in pairs}
