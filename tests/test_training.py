import random
from pathlib import Path

import numpy as np
import pytest

from dialcheck.detectors import UtteranceDetector, load_detector
from dialcheck.detectors.modeling import build_model
from dialcheck.errors import InputError
from dialcheck.schema import Dialogue, Pair
from dialcheck.training import TrainConfig, train_detector
from dialcheck.training.data import (
    pseudo_dialogues,
    random_premise_negatives,
    restatement_negatives,
    reverse_half,
    split_groups,
    synthetic_histories,
)
from dialcheck.training.trainer import fit_pair_model
from helpers_interrupt import kill_on_call

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
    # The saved record says what the run was given and did, in a form a model card can quote.
    rec = again.config.training
    assert (rec["train_pairs"], rec["validation_dialogues"]) == (256, len(val_d))
    assert (rec["epochs"], rec["batch_size"], rec["lr"], rec["seed"]) == (4, 16, 3e-3, 0)
    assert 0 < rec["best_step"] <= rec["steps"] and rec["history"] and "distill_alpha" not in rec
    assert (rec["window"]["pairs"], rec["window"]["cut"]) == (256, 0)  # short pairs, 128-token window
    from dialcheck.training.card import write_model_card

    assert "- window: {'pairs': 256, 'cut': 0," in write_model_card(tmp_path / "m", again.config).read_text()
    assert all(round(v, 4) == v for v in again.config.metrics.values() if isinstance(v, float))


def test_checkpoint_holds_the_best_weights_and_thresholds(tiny_base, tmp_path):
    """An interrupted run leaves the best model so far; after a full run it equals the final model."""
    det = UtteranceDetector(base=str(tiny_base), adapter={"type": "lora", "r": 4, "alpha": 8})
    cfg = TrainConfig(epochs=2, batch_size=16, lr=3e-3, eval_every=8, patience=10, seed=0)
    val = _toy_pairs(32, 1)
    train_detector(det, _toy_pairs(64, 0), val, pseudo_dialogues(val), cfg, checkpoint=tmp_path / "ckpt")
    ckpt = load_detector(tmp_path / "ckpt")
    assert ckpt.config.training["checkpoint_step"] == det.config.training["best_step"]
    assert ckpt.tau == pytest.approx(det.tau)
    ds = [Dialogue.from_texts(["i really like tea", "ok", t]) for t in ("i never liked tea", "i also like golf")]
    assert [v.score for v in ckpt.predict(ds)] == pytest.approx([v.score for v in det.predict(ds)], abs=1e-5)


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


def test_restatement_negatives_restate_an_utterance_of_a_contradiction():
    pairs = [
        Pair(f"I have {i} cats. They sleep a lot.", f"I have no cats at all, {i}.", 1, group=f"g{i}") for i in range(60)
    ] + [Pair(f"I cook pasta {i}.", f"I like rain {i}.", 0, group=f"n{i}") for i in range(60)]
    negs = restatement_negatives(pairs, seed=0)
    assert len(negs) == 60 and all(n.label == 0 and n.source == "aug.restate" for n in negs)
    utterances = {u for p in pairs if p.label for u in (p.first, p.second)}
    for n in negs:
        short, long_ = sorted((n.first, n.second), key=len)
        assert short in long_  # the shorter side is restated inside the longer one
        assert short in utterances or any(short in u for u in utterances)
    kinds = {
        "same" if n.first == n.second else "part" if max(n.first, n.second, key=len) in utterances else "extend"
        for n in negs
    }
    assert kinds == {"same", "part", "extend"}
    assert restatement_negatives(pairs, seed=0) == negs  # seeded


def test_paragraph_pairs_set_a_share_of_the_second_turns_among_other_groups_utterances():
    from dialcheck.training.data import PARAGRAPH_WORDS, paragraph_pairs

    pairs = [Pair(f"I have {i} cats.", f"I have never owned a cat, {i}.", i % 2, group=f"g{i}") for i in range(200)] + [
        Pair("a", "b", -1, "aug.neighbour", "u")
    ]  # unlabelled: never copied
    out = paragraph_pairs(pairs, seed=0)
    assert 40 <= len(out) <= 80  # about 30% of the 200 labelled pairs
    by_first = {p.first: p for p in pairs}
    for q in out:
        p = by_first[q.first]
        assert q.source == "aug.paragraph" and q.label == p.label and q.group == p.group
        assert p.second in q.second and len(q.second.split()) >= PARAGRAPH_WORDS[0]
        others = q.second.replace(p.second, "")
        assert f", {p.group[1:]}." not in others  # no filler from the pair's own group
    assert paragraph_pairs(pairs, seed=0) == out and paragraph_pairs(pairs, seed=1) != out


def test_reverse_half_reads_about_half_the_pairs_backwards_and_keeps_everything_else():
    pairs = _toy_pairs(400, 3)
    out = reverse_half(pairs, seed=0)
    flipped = [a for a, b in zip(out, pairs, strict=True) if a != b]
    assert 150 < len(flipped) < 250
    for a, b in zip(out, pairs, strict=True):
        assert {a.first, a.second} == {b.first, b.second} and (a.label, a.source, a.group) == (
            b.label,
            b.source,
            b.group,
        )
    assert reverse_half(pairs, seed=0) == out and reverse_half(pairs, seed=1) != out  # seeded


def test_build_decode_training_data_reverse_flips_train_pairs_only(data_root):
    from dialcheck.training.data import build_decode_training_data

    plain = build_decode_training_data(data_root, augment=("random_premise",), limit=60)
    rev = build_decode_training_data(data_root, augment=("random_premise", "reverse"), limit=60)
    assert rev.validation == plain.validation
    assert sorted((p.second, p.first) if p not in plain.train else (p.first, p.second) for p in rev.train) == sorted(
        (p.first, p.second) for p in plain.train
    )
    assert rev.counts["reversed"] == sum(p not in plain.train for p in rev.train) > 0
    with pytest.raises(ValueError, match="reverse"):
        build_decode_training_data(data_root, "decode.unstructured.v1", ("reverse",), limit=200)


def test_history_pairs_join_earlier_turns_of_train_dialogues_only(data_root):
    from dialcheck.training.data import build_decode_training_data

    plain = build_decode_training_data(data_root, augment=(), limit=300)
    hist = build_decode_training_data(data_root, augment=("history",), limit=300)
    assert hist.validation == plain.validation
    added = [p for p in hist.train if p.source == "aug.history"]
    assert added and hist.counts["aug.history"] == len(added) and all(p.label == 0 for p in added)
    earlier = {}  # group -> the earlier turns its train pairs name
    for p in plain.train:
        earlier.setdefault(p.group, set()).add(p.first)
    val_groups = {p.group for p in plain.validation}
    for p in added:
        assert p.group not in val_groups and {p.first, p.second} <= earlier[p.group] and p.first != p.second
    # coevidence: the pairs of two turns one last turn contradicts, both orders
    co = build_decode_training_data(data_root, augment=("coevidence",), limit=300)
    pairs = {(p.first, p.second) for p in co.train if p.source == "aug.coevidence"}
    evidence = {}
    for p in plain.train:
        if p.label == 1:
            evidence.setdefault(p.group, set()).add(p.first)
    assert pairs and len(pairs) == co.counts["aug.coevidence"] and {(b, a) for a, b in pairs} == pairs
    assert all(any({a, b} <= ev for ev in evidence.values()) for a, b in pairs)


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


def test_teacher_scores_drive_the_targets_when_distilling(tiny_base):
    det = UtteranceDetector(base=str(tiny_base), adapter={"type": "lora", "r": 4, "alpha": 8})
    train = _toy_pairs(64, 4)
    cfg = TrainConfig(epochs=3, batch_size=16, lr=3e-3, seed=0)
    # A teacher that calls everything a contradiction, followed fully (alpha 1): gold labels are ignored.
    train_detector(det, train, config=cfg, teacher_scores=[1.0] * len(train), distill_alpha=1.0)
    scores = det.classifier.score([(p.first, p.second) for p in train])
    assert scores.min() > 0.5
    assert det.config.training["distill_alpha"] == 1.0


def test_per_source_alpha_keeps_gold_labels_where_the_teacher_is_not_trusted(tiny_base):
    from dataclasses import replace

    det = UtteranceDetector(base=str(tiny_base), adapter={"type": "lora", "r": 4, "alpha": 8})
    train = [replace(p, label=0) for p in _toy_pairs(64, 4)]  # gold: all consistent
    cfg = TrainConfig(epochs=3, batch_size=16, lr=3e-3, seed=0)
    # The all-contradiction teacher of the test above at alpha 1, but its source ("toy") is overridden to gold.
    teacher = [1.0] * len(train)
    train_detector(det, train, config=cfg, teacher_scores=teacher, distill_alpha=1.0, distill_alpha_by={"toy": 0.0})
    scores = det.classifier.score([(p.first, p.second) for p in train])
    assert scores.max() < 0.5
    assert det.config.training["distill_alpha_by"] == {"toy": 0.0}


@pytest.mark.parametrize(
    ("alpha", "by", "message"),
    [(1.0, {"tyo": 0.0}, "no training pairs: tyo"), (1.5, {}, r"\[0, 1\]"), (1.0, {"toy": -0.1}, r"\[0, 1\]")],
)
def test_library_callers_get_the_distillation_weights_checked_too(tiny_base, alpha, by, message):
    det = UtteranceDetector(base=str(tiny_base), adapter={"type": "lora", "r": 4, "alpha": 8})
    train = _toy_pairs(8, 2)
    with pytest.raises(ValueError, match=message):
        train_detector(
            det,
            train,
            config=TrainConfig(epochs=1),
            teacher_scores=[0.5] * len(train),
            distill_alpha=alpha,
            distill_alpha_by=by,
        )


def test_unlabelled_pairs_need_a_teacher_and_follow_it_alone(tiny_base):
    from dataclasses import replace

    det = UtteranceDetector(base=str(tiny_base), adapter={"type": "lora", "r": 4, "alpha": 8})
    # placeholder label 0 everywhere; a teacher that calls them all contradictions
    train = [replace(p, label=0, source="aug.neighbour") for p in _toy_pairs(64, 4)]
    cfg = TrainConfig(epochs=3, batch_size=16, lr=3e-3, seed=0)
    with pytest.raises(ValueError, match=r"aug\.neighbour have no gold label"):
        train_detector(det, train, config=cfg)
    # distill_alpha 0 (gold everywhere) does not reach them: the placeholder is never a target
    train_detector(det, train, config=cfg, teacher_scores=[1.0] * len(train), distill_alpha=0.0)
    assert det.classifier.score([(p.first, p.second) for p in train]).min() > 0.5
    assert det.config.training["distill_alpha_by"] == {"aug.neighbour": 1.0}


def test_neighbour_pairs_never_pair_a_last_turn_with_its_own_dialogue():
    import numpy as np

    from dialcheck.training.data import neighbour_pairs

    vectors = {"i have a dog": [1.0, 0.5, 0.0], "my dog barks": [1.0, 0.0, 0.0], "tea time": [0.0, 0.0, 1.0]}
    vectors |= {"a cat and a dog": [1.0, 0.6, 0.0], "cats": [0.0, 1.0, 0.0]}

    def embed(texts):
        v = np.array([vectors[t] for t in texts])
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    # "i have a dog" is said in both dialogues and is the nearest text to g's last turn; g was seen second,
    # yet the utterance is g's own, so g's neighbour is the next nearest text of another dialogue
    ps = [
        Pair("i have a dog", "tea time", 0, group="h"),
        Pair("i have a dog", "my dog barks", 0, group="g"),
        Pair("a cat and a dog", "cats", 0, group="k"),
    ]
    out = {p.group: p.first for p in neighbour_pairs(ps, embed=embed, min_similarity=0.0)}
    assert out["g"] == "a cat and a dog"


def test_per_source_alpha_names_the_known_sources_on_a_typo():
    from dialcheck.errors import InputError
    from dialcheck.training.distill import parse_alpha_by

    with pytest.raises(InputError, match=r"sources: aug\.perturb, decode\.train"):
        parse_alpha_by("aug.pertub=0", ["decode.train", "aug.perturb"])
    with pytest.raises(InputError, match=r"A in \[0, 1\]"):
        parse_alpha_by("aug.perturb=2", ["aug.perturb"])
    with pytest.raises(InputError, match="SOURCE=A"):
        parse_alpha_by("aug.perturb", ["aug.perturb"])


def test_teacher_scoring_resumes_after_an_interruption(tiny_detector_dir, tmp_path, monkeypatch):
    import numpy as np

    from dialcheck.detectors.core import PairClassifier
    from dialcheck.training.distill import teacher_pair_scores

    monkeypatch.setenv("DIALCHECK_CACHE", str(tmp_path / "cache"))
    pairs = [Pair(f"i like {w}", f"i never liked {w}", 1, "toy", w) for w in WORDS[:10]]
    expected = load_detector(tiny_detector_dir).classifier.score([(p.first, p.second) for p in pairs])
    real_score, scored = PairClassifier.score, []

    def failing_after_two_chunks(self, batch, *a, **k):
        if len(scored) == 2:
            raise KeyboardInterrupt
        scored.append(len(batch))
        return real_score(self, batch, *a, **k)

    monkeypatch.setattr(PairClassifier, "score", failing_after_two_chunks)
    with pytest.raises(KeyboardInterrupt):
        teacher_pair_scores(tiny_detector_dir, pairs, chunk_size=3)
    assert scored == [3, 3]
    scored.clear()
    monkeypatch.setattr(
        PairClassifier,
        "score",
        lambda self, batch, *a, **k: scored.append(len(batch)) or real_score(self, batch, *a, **k),
    )
    scores = teacher_pair_scores(tiny_detector_dir, pairs, chunk_size=3)
    assert scored == [3, 1]  # only the 4 pairs not scored before the interruption
    np.testing.assert_allclose(scores, expected, atol=1e-6)
    left = list((tmp_path / "cache" / "teacher-scores").iterdir())
    assert [f.suffix for f in left] == [".npz"]  # one file for this teacher, no temporary left behind
    scored.clear()
    np.testing.assert_allclose(teacher_pair_scores(tiny_detector_dir, pairs, chunk_size=3), expected, atol=1e-6)
    assert scored == []  # the finished cache entry: nothing scored again
    # a new mix: the same pairs reordered, one of them twice, plus two new ones: only the new two are scored
    more = [Pair("we met in paris", "we never met", 1, "new", "n1"), Pair("i cook", "i bake too", 0, "new", "n2")]
    mix = [pairs[3], *more, *pairs[::-1], pairs[3]]
    got = teacher_pair_scores(tiny_detector_dir, mix, chunk_size=3)
    assert scored == [2]
    want = load_detector(tiny_detector_dir).classifier.score([(p.first, p.second) for p in mix])
    np.testing.assert_allclose(got, want, atol=1e-6)


def test_teacher_scores_cached_by_an_earlier_version_are_read(tiny_detector_dir, tmp_path, monkeypatch):
    import hashlib

    import numpy as np

    from dialcheck.detectors.core import PairClassifier
    from dialcheck.training.distill import teacher_pair_scores

    monkeypatch.setenv("DIALCHECK_CACHE", str(tmp_path / "cache"))
    pairs = _toy_pairs(4, 2)
    h = hashlib.sha256()  # the earlier whole-list key: the teacher's files, then every pair
    for f in sorted(tiny_detector_dir.iterdir()):
        if f.suffix in (".safetensors", ".json"):
            h.update(f.name.encode())
            h.update(hashlib.sha256(f.read_bytes()).digest())
    for p in pairs:
        h.update(p.first.encode() + b"\x00" + p.second.encode() + b"\x01")
    (tmp_path / "cache" / "teacher-scores").mkdir(parents=True)
    old = np.array([0.1, 0.2, 0.3, 0.4], dtype=np.float32)
    np.save(tmp_path / "cache" / "teacher-scores" / f"{h.hexdigest()[:24]}.npy", old)
    monkeypatch.setattr(PairClassifier, "score", lambda *a, **k: pytest.fail("scored again"))
    np.testing.assert_allclose(teacher_pair_scores(tiny_detector_dir, pairs), old)
    np.testing.assert_allclose(teacher_pair_scores(tiny_detector_dir, pairs[::-1]), old[::-1])


def test_fit_pair_model_trains_a_multi_label_head(tiny_base):
    import numpy as np
    import torch

    from dialcheck.detectors.core import PairClassifier
    from dialcheck.detectors.modeling import DetectorConfig, build_model
    from dialcheck.training.trainer import fit_pair_model

    cfg = DetectorConfig(
        detector="test.multi",
        base=str(tiny_base),
        labels=["tea", "golf"],
        problem_type="multi_label_classification",
    )
    torch.manual_seed(0)  # the head's initial weights must not depend on which tests ran before
    model, tok = build_model(cfg)
    clf = PairClassifier(model, tok, cfg.labels, multi_label=True)
    rng = random.Random(0)
    texts, rows = [], []
    for _ in range(128):
        has_tea, has_golf = rng.random() < 0.5, rng.random() < 0.5
        words = [w for w, on in (("tea", has_tea), ("golf", has_golf)) if on]
        words += rng.sample(["chess", "very", "nice", "today", "we", "play"], rng.randint(1, 4))
        rng.shuffle(words)
        texts.append(("context", " ".join(words)))
        rows.append([float(has_tea), float(has_golf)])
    fit_pair_model(clf, texts, np.array(rows), TrainConfig(epochs=10, batch_size=16, lr=2e-3))
    tea, golf = clf.proba([("context", "tea chess"), ("context", "golf chess")])
    # each label rises with its own word, independently of the other (sigmoid heads, not a softmax)
    assert tea[0] > golf[0] and golf[1] > tea[1]


def test_one_se_threshold_prefers_the_highest_threshold_on_a_flat_curve():
    from dialcheck.evaluation.metrics import accuracy, best_threshold

    scores, gold = [0.1, 0.3, 0.45, 0.55, 0.7, 0.9], [0, 0, 1, 0, 1, 1]
    # accuracy 5/6 at t=0.375 and t=0.625, 4/6 at 0.5 and 0.8; one SE = sqrt(5/6 * 1/6 / 6) = 0.152
    assert best_threshold(scores, gold, accuracy) == (0.375, pytest.approx(5 / 6))
    assert best_threshold(scores, gold, accuracy, one_se=True) == (0.625, pytest.approx(5 / 6))


def test_no_periodic_validation_right_before_the_final_one(tiny_base):
    det = UtteranceDetector(base=str(tiny_base), adapter={"type": "lora", "r": 2, "alpha": 4})
    val = _toy_pairs(8, 1)
    cfg = TrainConfig(epochs=1, batch_size=1, eval_every=10, patience=10, seed=0)
    train_detector(det, _toy_pairs(21, 0), val, pseudo_dialogues(val), cfg)
    assert [h["step"] for h in det.config.training["history"]] == [10, 21]  # not 20: the final one is next


def test_balanced_class_weight_lifts_a_rare_class_the_input_cannot_tell_apart(tiny_base):
    """Identical inputs, 90 % class 0: plain cross-entropy learns P(1) near the prior (0.1), balanced weights
    near 0.5 (each class then carries half the loss), their square root in between (the weighted optimum is
    2 * sqrt(5) / (18 * sqrt(5 / 9) + 2 * sqrt(5)) = 0.25)."""
    from dialcheck.detectors.core import PairClassifier
    from dialcheck.detectors.modeling import DetectorConfig, build_model
    from dialcheck.training.trainer import fit_pair_model

    p_rare = {}
    for weighting in (None, "balanced", "sqrt"):
        cfg = DetectorConfig(detector="test.weights", base=str(tiny_base))
        model, tok = build_model(cfg)
        clf = PairClassifier(model, tok, cfg.labels)
        texts, labels = [("same", "input")] * 20, [0] * 18 + [1] * 2
        config = TrainConfig(epochs=15, batch_size=20, lr=1e-2, threads=1, class_weight=weighting)
        fit_pair_model(clf, texts, labels, config)
        p_rare[weighting] = float(clf.proba([("same", "input")])[0][1])
    assert p_rare[None] < 0.17 and 0.35 < p_rare["balanced"] < 0.65 and 0.18 < p_rare["sqrt"] < 0.32, p_rare
    with pytest.raises(ValueError, match="class_weight"):
        fit_pair_model(clf, texts, labels, TrainConfig(epochs=1, class_weight="inverse"))


def test_perturbation_pairs_flip_polarity_beside_a_paraphrase():
    from dialcheck.probes import triggers_en as en
    from dialcheck.training.data import perturbation_pairs

    try:
        en.parse("Hello.")
    except ImportError as e:  # the spacy extra is missing
        pytest.skip(str(e))
    lex = en.WordListLexicon.from_groups([["dog", "hound"], ["job", "occupation"]], [("love", "hate")])
    pairs = [
        Pair("I have a dog.", "I hate my job.", 1, group="g1"),  # "I don't have a dog." / "I have a hound."
        Pair("I love my job.", "I walk my dog.", 1, group="g2"),
        Pair("Did you see my dog?", "Did you see my hound?", 1, group="g3"),  # questions: no polarity flip
        Pair("I have a dog.", "I like tea.", 0, group="g4"),  # non-contradictions are not used
    ]
    out = perturbation_pairs(pairs, seed=0, lexicon=lex)
    assert {p.source for p in out} == {"aug.perturb"} and not {p.group for p in out} & {"g3", "g4"}
    by_label = {lab: [tuple(sorted((p.first, p.second))) for p in out if p.label == lab] for lab in (0, 1)}
    assert len(by_label[0]) == len(by_label[1]) == len(out) // 2 > 0  # balanced: an edit is no label cue
    for a, b in by_label[1]:  # the same sentence with its polarity flipped
        assert ("n't" in a) != ("n't" in b) or {"love", "hate"} <= set((a + " " + b).replace(".", "").split())
    for a, b in by_label[0]:  # the same sentence with a synonym
        assert ("n't" in a) == ("n't" in b) and {"hound", "occupation"} & set((a + " " + b).replace(".", "").split())


def test_perturbation_pairs_keep_the_trigger_rules_the_shipped_models_were_trained_with():
    """The ``perturb`` data is built with version 1 of the English rules: a later rule ("too" -> "either")
    must not change the pairs, or a shipped model's recipe no longer rebuilds its training data."""
    from dialcheck.probes import triggers_en as en
    from dialcheck.training.data import perturbation_pairs

    try:
        en.parse("Hello.")
    except ImportError as e:
        pytest.skip(str(e))
    lex = en.WordListLexicon.from_groups([["dog", "hound"]], [])
    pairs = [Pair("I have a dog too.", "I have a dog too.", 1, group="g1")]
    out = perturbation_pairs(pairs, seed=0, lexicon=lex)
    texts = {t for p in out for t in (p.first, p.second)}
    assert "I don't have a dog too." in texts  # rules v1; v2 says "either"
    assert en.negate(en.parse("I have a dog too."))[0] == "I don't have a dog either."  # the probes: latest


def test_value_swap_pairs_change_one_value_beside_a_paraphrase_that_keeps_them():
    from dialcheck.probes import triggers_en as en
    from dialcheck.training.data import value_swap_pairs, values_of

    try:
        en.parse("Hello.")
    except ImportError as e:
        pytest.skip(str(e))
    lex = en.WordListLexicon.from_groups([["dog", "hound"], ["shop", "store"]], [])
    pairs = [
        Pair("I have 2 dogs.", "The shop opens on Monday at 9am.", 1, group="g1"),
        Pair("Do you have 3 dogs?", "I like tea.", 0, group="g2"),  # a value inside a question: no pair
        Pair("I was born in 1990.", "I like tea.", 0, group="g3"),  # no synonym, not 2-12: no pair
    ]
    out = value_swap_pairs(pairs, seed=0, lexicon=lex)
    assert {p.source for p in out} == {"aug.values"}
    by_label = {lab: [(p.first, p.second) for p in out if p.label == lab] for lab in (0, 1)}
    assert len(by_label[0]) == len(by_label[1]) == 2  # "I have 2 dogs." and the shop: both or neither
    for a, b in by_label[1]:  # one value differs
        va, vb = values_of(a), values_of(b)
        assert len(va) == len(vb) and sum(x != y for x, y in zip(va, vb, strict=True)) == 1, (a, b)
    for a, b in by_label[0]:  # the values are kept (or 2 is written "two"), the words differ
        assert a != b and [v.replace("two", "2") for v in values_of(a)] == [v.replace("two", "2") for v in values_of(b)]
    assert not any("1990" in a + b or "3 dogs" in a + b for a, b in by_label[0] + by_label[1])


class _FixedScores:
    """A stand-in detector whose verdicts are given: calibration only reads scores and pair scores."""

    def __init__(self, verdicts):
        self.verdicts, self.tau, self.eta_e = verdicts, 0.5, 0.5

    def predict(self, dialogues, batch_size=64):
        return self.verdicts[: len(dialogues)]


@pytest.mark.parametrize("second_gold, expect", [(False, 0.95), (True, 0.6)])
def test_eta_e_is_the_highest_value_within_one_standard_error(second_gold, expect):
    from dialcheck.schema import Example, Verdict
    from dialcheck.training.trainer import calibrate

    d = Dialogue.from_texts(["a", "b", "c", "d", "e"])
    examples, verdicts = [], []
    for _ in range(200):
        # a contradiction: turn 0 is evidence (0.99); turn 2 is evidence too (0.6), or not (0.2)
        examples.append(Example(d, True, (0, 2) if second_gold else (0,)))
        verdicts.append(Verdict(True, 0.99, (0,), None, {0: 0.99, 2: 0.6 if second_gold else 0.2}))
        examples.append(Example(d, False, ()))
        verdicts.append(Verdict(False, 0.1, (), None, {0: 0.1, 2: 0.1}))
    det = _FixedScores(verdicts)
    out = calibrate(det, examples)
    # a flat curve (every eta names exactly the gold turns) goes to the highest eta; when a higher eta
    # drops a gold turn (F1 4/5 -> 2/3, far beyond one standard error) the rule stays at or below 0.6
    assert det.eta_e == out["eta_e"] == pytest.approx(expect)


def test_synthetic_histories_refuse_a_single_dialogue_instead_of_hanging():
    with pytest.raises(ValueError, match="two dialogues"):
        synthetic_histories([Pair("a", "z", 1, group="z"), Pair("b", "z", 0, group="z")])


def _resume_run(tiny_base, state_dir, resume=False, checkpoint=None, pairs=64, epochs=2, eval_every=3, patience=10):
    import torch

    torch.manual_seed(0)
    det = UtteranceDetector(base=str(tiny_base), adapter={"type": "lora", "r": 4, "alpha": 8})
    cfg = TrainConfig(epochs=epochs, batch_size=16, lr=3e-3, eval_every=eval_every, patience=patience, seed=0)
    val = _toy_pairs(32, 1)
    train_detector(
        det, _toy_pairs(pairs, 0), val, pseudo_dialogues(val), cfg,
        checkpoint=checkpoint, resume_dir=state_dir, resume=resume,
    )  # fmt: skip
    return det


RESUME_PROBE = [Dialogue.from_texts(["i really like tea", "ok", t]) for t in ("i never liked tea", "i also like golf")]


def _interrupt_at_validation(monkeypatch, n):
    """Make the n-th validation raise, as if the run were killed while it validates."""
    from dialcheck.training import trainer

    kill_on_call(monkeypatch, trainer, "calibrate", n)


def test_an_interrupted_run_resumes_exactly_where_it_stopped(tiny_base, tmp_path, monkeypatch):
    """Killed in its last validation (step 8), the run resumes from its state at step 6, in the middle of the
    second epoch (4 steps each), and ends with the uninterrupted run's weights and validation history."""
    whole = _resume_run(tiny_base, tmp_path / "whole")
    with monkeypatch.context() as m:
        _interrupt_at_validation(m, 3)
        with pytest.raises(KeyboardInterrupt):
            _resume_run(tiny_base, tmp_path / "cut")
    assert (tmp_path / "cut" / "trainer_state.pt").exists()
    resumed = _resume_run(tiny_base, tmp_path / "cut", resume=True)
    t_whole, t_resumed = whole.config.training, resumed.config.training
    assert t_resumed["steps"] == t_whole["steps"] == 8 and t_resumed["best_step"] == t_whole["best_step"]
    drop = ("elapsed_s",)
    hist = [[{k: v for k, v in h.items() if k not in drop} for h in t["history"]] for t in (t_whole, t_resumed)]
    assert hist[0] == hist[1] and [h["step"] for h in hist[1]] == [3, 6, 8]
    assert [v.score for v in resumed.predict(RESUME_PROBE)] == pytest.approx(
        [v.score for v in whole.predict(RESUME_PROBE)], abs=1e-6
    )


def test_resume_refuses_a_state_written_for_other_training_pairs(tiny_base, tmp_path, monkeypatch):
    with monkeypatch.context() as m:
        _interrupt_at_validation(m, 2)
        with pytest.raises(KeyboardInterrupt):
            _resume_run(tiny_base, tmp_path / "cut")
    with pytest.raises(ValueError, match="other training pairs or settings"):
        _resume_run(tiny_base, tmp_path / "cut", resume=True, pairs=48)
    # settings that decide which weights are kept: a resume with another --eval-every or --patience trained on
    # from the state and kept another validation's weights than either run would (train --task cdconv --resume)
    for other in ({"eval_every": 4}, {"patience": 2}):
        with pytest.raises(ValueError, match="other training pairs or settings"):
            _resume_run(tiny_base, tmp_path / "cut", resume=True, **other)


def test_a_run_with_only_a_checkpoint_continues_from_its_step(tiny_base, tmp_path, monkeypatch):
    """Runs from before the training state existed left a checkpoint only: they go on from its step."""
    with monkeypatch.context() as m:
        _interrupt_at_validation(m, 3)
        with pytest.raises(KeyboardInterrupt):
            _resume_run(tiny_base, None, checkpoint=tmp_path / "ckpt")
    step = load_detector(tmp_path / "ckpt").config.training["checkpoint_step"]
    assert step in (3, 6)
    det = _resume_run(tiny_base, tmp_path / "state", resume=True, checkpoint=tmp_path / "ckpt")
    steps = [h["step"] for h in det.config.training["history"]]
    assert steps == [step, *[s for s in (3, 6, 8) if s > step]]
    with pytest.raises(InputError, match="nothing to resume"):
        _resume_run(tiny_base, tmp_path / "none", resume=True, checkpoint=tmp_path / "missing")


def test_the_seed_alone_decides_the_new_head_and_adapter(tiny_base):
    """Two runs with one seed end equal even if other code drew random numbers first; another seed differs."""
    import torch

    def run(seed: int, disturb: int) -> list[float]:
        torch.rand(disturb)  # e.g. an earlier job in the same process
        det = UtteranceDetector(base=str(tiny_base), adapter={"type": "lora", "r": 4, "alpha": 8})
        train_detector(det, _toy_pairs(32, 0), config=TrainConfig(epochs=1, batch_size=16, lr=3e-3, seed=seed))
        d = Dialogue.from_texts(["i really like tea", "ok", "i never liked tea"])
        return [det.predict([d])[0].score]

    first = run(0, 3)
    assert run(0, 17) == pytest.approx(first, abs=1e-6)
    assert run(1, 3) != pytest.approx(first, abs=1e-6)


def test_a_run_shorter_than_an_epoch_trains_on_exactly_its_scheduled_pairs(tiny_base, monkeypatch):
    from collections import Counter

    from dialcheck.detectors.core import PairClassifier
    from dialcheck.training.trainer import scheduled_pairs

    train = _toy_pairs(64, 5)
    cfg = TrainConfig(epochs=0.4, batch_size=8, lr=1e-3, seed=3)
    texts = [(p.first, p.second) for p in train]
    planned = scheduled_pairs(texts, cfg)
    assert len(planned) == 3 * 8  # int(8 steps per epoch * 0.4) batches of 8
    fed: list[tuple[str, str]] = []
    real_encode = PairClassifier.encode
    monkeypatch.setattr(
        PairClassifier, "encode", lambda self, batch, *a, **k: fed.extend(batch) or real_encode(self, batch, *a, **k)
    )
    det = UtteranceDetector(base=str(tiny_base), adapter={"type": "lora", "r": 4, "alpha": 8})
    train_detector(det, train, config=cfg)
    assert Counter(fed) == Counter(texts[i] for i in planned)
    # 1.5 epochs: every pair
    assert len(scheduled_pairs(texts, TrainConfig(epochs=1.5, batch_size=8))) == len(texts)


def test_sentence_embeddings_are_the_same_whether_cached_or_not(tiny_base, tmp_path, monkeypatch):
    import numpy as np

    from dialcheck.training.data import sentence_embeddings

    monkeypatch.setenv("DIALCHECK_CACHE", str(tmp_path / "cache"))
    texts = ["i like tea", "i never drink tea", "my dog is called rex", "tea is nice"]
    fresh = sentence_embeddings(texts, encoder=str(tiny_base))
    assert list((tmp_path / "cache" / "embeddings").glob("*.npy"))  # the second call reads the cache
    np.testing.assert_array_equal(sentence_embeddings(texts, encoder=str(tiny_base)), fresh)


def test_pairs_the_teacher_has_no_say_in_need_no_score(tiny_base):
    import numpy as np

    from dialcheck.schema import Pair

    train = _toy_pairs(24, 1)
    unlabelled = [Pair(p.first, p.second, 0, source="aug.neighbour") for p in _toy_pairs(8, 2)]
    scores = np.array([np.nan] * len(train) + [1.0] * len(unlabelled), dtype=np.float32)
    cfg = TrainConfig(epochs=1, batch_size=8, lr=1e-3, seed=0)
    det = UtteranceDetector(base=str(tiny_base), adapter={"type": "lora", "r": 4, "alpha": 8})
    # weight 0 on the labelled pairs: their gold labels are the targets, no teacher score is read
    train_detector(det, train + unlabelled, config=cfg, teacher_scores=scores, distill_alpha=0.0)
    with pytest.raises(ValueError, match="no teacher score for 24 pairs"):
        train_detector(det, train + unlabelled, config=cfg, teacher_scores=scores, distill_alpha=0.1)


def test_a_neighbour_pair_without_a_teacher_score_has_no_say_in_training(tiny_base, caplog):
    import numpy as np

    from dialcheck.schema import Pair

    train = _toy_pairs(24, 1)
    cfg = TrainConfig(epochs=1, batch_size=8, lr=1e-3, seed=0)

    def weights(unscored_text, score=np.nan):
        unlabelled = [Pair("i really like chess", unscored_text, 0, source="aug.neighbour")]
        scores = np.array([0.5] * len(train) + [score], dtype=np.float32)
        det = UtteranceDetector(base=str(tiny_base), adapter={"type": "lora", "r": 4, "alpha": 8})
        with caplog.at_level("WARNING", logger="dialcheck.training.trainer"):
            train_detector(det, train + unlabelled, config=cfg, teacher_scores=scores, distill_alpha=0.0)
        return np.concatenate(
            [t.detach().numpy().ravel() for t in det.classifier.model.parameters() if t.requires_grad]
        )

    a, b = weights("i never liked chess"), weights("chess liked never i")  # same length: same batches
    np.testing.assert_allclose(a, b, atol=1e-6)  # the text of the unscored pair changes nothing
    assert np.abs(weights("i never liked chess", 1.0) - a).max() > 1e-4  # a scored one does
    assert "1 unlabelled pairs (aug.neighbour) this run reads have no teacher score" in caplog.text
    # a labelled pair without a score is still refused, and so are unscored neighbours beyond 0.1% (here: 2 > 1)
    with pytest.raises(ValueError, match="no teacher score for 25 pairs"):
        train_detector(
            UtteranceDetector(base=str(tiny_base)),
            [*train, Pair("a", "b", 0, source="aug.neighbour")],
            config=cfg,
            teacher_scores=np.full(len(train) + 1, np.nan, dtype=np.float32),
            distill_alpha=0.5,
        )
    two = [Pair("i really like chess", t, 0, source="aug.neighbour") for t in ("x y", "y z")]
    with pytest.raises(ValueError, match="no teacher score for 2 pairs"):
        train_detector(
            UtteranceDetector(base=str(tiny_base)),
            train + two,
            config=cfg,
            teacher_scores=np.array([0.5] * len(train) + [np.nan] * 2, dtype=np.float32),
            distill_alpha=0.0,
        )


def test_teacher_scores_for_the_scheduled_pairs_only(tiny_base, tiny_detector_dir, tmp_path, monkeypatch):
    import numpy as np

    from dialcheck.training.distill import teacher_pair_scores
    from dialcheck.training.trainer import scheduled_pairs

    monkeypatch.setenv("DIALCHECK_CACHE", str(tmp_path / "cache"))
    train = _toy_pairs(64, 5)
    cfg = TrainConfig(epochs=0.4, batch_size=8, lr=1e-3, seed=3)
    planned = scheduled_pairs([(p.first, p.second) for p in train], cfg)
    scores = teacher_pair_scores(tiny_detector_dir, train, only=planned)
    known = ~np.isnan(scores)
    assert known[planned].all()
    assert known.sum() < len(train)  # the pairs the run never sees are not scored (duplicates aside)
    det = UtteranceDetector(base=str(tiny_base), adapter={"type": "lora", "r": 4, "alpha": 8})
    train_detector(det, train, config=cfg, teacher_scores=scores, distill_alpha=1.0)  # trains: nothing missing
    # one scheduled pair without a score: refused, before the run starts
    scores[planned[0]] = np.nan
    with pytest.raises(ValueError, match="no teacher score for 1 pairs this run trains on"):
        train_detector(det, train, config=cfg, teacher_scores=scores, distill_alpha=1.0)


def test_the_committed_teacher_scores_files_are_whole_and_say_where_they_come_from():
    import numpy as np

    from dialcheck.training.distill import teacher_scores_meta

    files = sorted((Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "teacher-scores").glob("*.npz"))
    assert files
    for f in files:
        meta = teacher_scores_meta(f)
        assert (
            len(meta["teacher_sha256"]) == 64
            and f"--save-teacher-scores {f.relative_to(f.parents[3])}" in (meta["command"])
        )
        with np.load(f) as z:
            keys, scores = z["keys"], z["scores"]
        assert len(keys) == len(np.unique(keys)) == len(scores) > 0
        assert np.all((scores >= 0) & (scores <= 1))


@pytest.mark.slow
def test_the_committed_neighbour_scores_fit_their_recipes(data_root, load_benchmark):
    """The recipes of benchmarks/data/teacher-scores/README.md, built again, find the scores they need.

    On a CPU other than the writer's, a last turn's nearest neighbour can change (float rounding of the
    embeddings at the 0.95 copy cut): such unlabelled pairs may lack a score, up to 0.1%, and are left out.
    """
    rows = load_benchmark("teacher_scores_fit").fit(data_root)
    assert [r["read"] for r in rows] == [8669, 81644]
    assert all(r["accepted"] and r["missing"] <= 2 for r in rows), rows


def test_rewriting_a_card_refreshes_its_numbers_and_keeps_what_people_wrote(tiny_detector_dir, tmp_path):
    import shutil

    from dialcheck.detectors import load_detector
    from dialcheck.training.card import write_model_card

    folder = tmp_path / "m"
    shutil.copytree(tiny_detector_dir, folder)
    det = load_detector(folder)
    det.config.metrics["dev/accuracy"] = 50.0
    card = write_model_card(folder, det.config)
    note = "## What it is\n\nThe default since today; better than v1 on hand set A.\n"
    card.write_text(card.read_text().replace("## Training", note + "\n## Training"))
    det.config.metrics["dev/accuracy"] = 61.5
    text = write_model_card(folder, det.config).read_text()
    assert note in text and text.index(note) < text.index("## Training")
    assert "| dev/accuracy | 61.5 |" in text and "| dev/accuracy | 50.0 |" not in text
    assert text.count("## What it is") == 1 and text.count("## Evaluation") == 1


@pytest.mark.parametrize(("max_length", "cut", "warned"), [(12, 2, True), (32, 0, False)])
def test_training_reports_pairs_the_window_cuts(tiny_base, caplog, max_length, cut, warned):
    # [CLS] i really like chess [SEP] i never liked chess [SEP]: 11 tokens; the long first segment
    # repeats its four words three times: 12 + 3 + 4 = 19 tokens.
    short = ("i really like chess", "i never liked chess")
    long = (" ".join(["i really like chess"] * 3), "i never liked chess")
    texts = [short] * 6 + [long] * 2
    det = UtteranceDetector(base=str(tiny_base), max_length=max_length, adapter={"type": "lora", "r": 4, "alpha": 8})
    det.attach(*build_model(det.config))
    cfg = TrainConfig(epochs=1, batch_size=4, seed=0)
    with caplog.at_level("INFO", logger="dialcheck.training.trainer"):
        res = fit_pair_model(det.classifier, texts, np.array([0, 1] * 4), cfg)
    assert res.window == {"pairs": 8, "cut": cut, "p99_tokens": 19}
    warnings = [r for r in caplog.records if r.levelname == "WARNING" and "window" in r.getMessage()]
    assert bool(warnings) is warned
    if warned:
        assert "2 of 8 training pairs (25.0%)" in warnings[0].getMessage()
        assert "19 tokens would keep 99%" in warnings[0].getMessage()
    assert res.record(cfg, {})["window"] == res.window


def test_the_card_size_leaves_out_the_training_state_of_the_run_writing_it(tmp_path, tiny_detector_dir):
    # train writes the card before it removes OUT/checkpoint and OUT/resume: a 3 MB run's card said 19.6 MB
    import shutil

    from dialcheck.detectors.modeling import DetectorConfig
    from dialcheck.training.card import write_model_card

    folder = tmp_path / "m"
    shutil.copytree(tiny_detector_dir, folder)
    config = DetectorConfig.from_file(folder / "dialcheck.json")
    alone = write_model_card(folder, config).read_text()
    for sub in ("checkpoint", "resume"):
        (folder / sub).mkdir()
        (folder / sub / "state.pt").write_bytes(b"\0" * 3_000_000)
    with_state = write_model_card(folder, config).read_text()
    size = [x for x in alone.splitlines() if x.startswith("- size on disk: ")]
    assert size and size == [x for x in with_state.splitlines() if x.startswith("- size on disk: ")]


def test_a_resumed_run_records_the_best_validation_as_the_uninterrupted_run_does(tiny_base, tmp_path, monkeypatch):
    # the metrics took "step" and "elapsed_s" from the checkpoint saved at the best validation in this process:
    # a run resumed after its best validation saved a config without them, unlike the same run uninterrupted
    whole = _resume_run(tiny_base, tmp_path / "whole", checkpoint=tmp_path / "whole-ckpt")
    with monkeypatch.context() as m:
        _interrupt_at_validation(m, 3)
        with pytest.raises(KeyboardInterrupt):
            _resume_run(tiny_base, tmp_path / "cut", checkpoint=tmp_path / "cut-ckpt")
    resumed = _resume_run(tiny_base, tmp_path / "cut", resume=True, checkpoint=tmp_path / "cut-ckpt")
    best = whole.config.training["best_step"]
    assert best < 8  # the best validation came before the interruption (in the last one, at step 8)
    for det in (whole, resumed):
        assert det.config.metrics["step"] == best and "elapsed_s" in det.config.metrics
    assert {k: v for k, v in whole.config.metrics.items() if k != "elapsed_s"} == {
        k: v for k, v in resumed.config.metrics.items() if k != "elapsed_s"
    }
