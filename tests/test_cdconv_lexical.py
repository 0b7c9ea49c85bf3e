"""The lexical head a four-category detector mixes in: features, TF-IDF, fitting, files, mixing, CLI."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from dialcheck.datasets.cdconv import LABEL_NAMES
from dialcheck.detectors import FlatCategoryDetector, HierarchicalDetector, load_detector
from dialcheck.detectors.categories import CATEGORY_LABELS, STAGES
from dialcheck.detectors.lexical import LexicalHead, block_ngrams, char_ngrams, hand_features, turns4
from dialcheck.errors import InputError, ModelError
from dialcheck.schema import Dialogue, Example
from helpers_cdconv import write_cdconv_splits


def conv(b2: str, u2: str = "你养宠物吗？") -> Dialogue:
    return Dialogue.from_texts(["你喜欢狗吗？", "喜欢，我养了两条狗。", u2, b2])


def test_hand_features_on_a_hand_made_conversation():
    d = conv("我没有养狗吗")
    f = hand_features(d)
    assert len(f) == 17
    # b2 = 我没有养狗吗 vs b1 = 喜欢，我养了两条狗。: no shared bigram; b2 vs u2: none either
    assert f[0] == 0.0 and f[1] == 0.0
    assert f[4] == 1.0 and f[5] == 0.0  # 没 in b2, no negation in b1
    assert (f[6], f[7], f[10]) == (1.0, 0.0, 1.0)  # 我 in b2 and b1, no 你 in b2
    assert f[12] == 1.0  # 吗: b2 asks
    assert f[13] == pytest.approx(6 / 20)
    assert turns4(Dialogue.from_texts(["only"])) == ["", "", "", "only"]


def test_char_ngrams_lower_case_and_collapse_spaces():
    assert char_ngrams("Ab  b") == {"a": 1, "b": 2, " ": 1, "ab": 1, "b ": 1, " b": 1}


def _data() -> tuple[list[Dialogue], list[int]]:
    words = {0: "好的我知道", 1: "我是男的我是女的", 2: "你是学生吗", 3: "我没有养狗"}
    dialogues, labels = [], []
    for i in range(40):
        y = i % 4
        dialogues.append(conv(f"{words[y]}{i % 3}"))
        labels.append(y)
    return dialogues, labels


def test_tfidf_rows_match_scikit_learn():
    sklearn_text = pytest.importorskip("sklearn.feature_extraction.text")
    dialogues, labels = _data()
    head = LexicalHead.fit(dialogues, labels, LABEL_NAMES)
    vec = sklearn_text.TfidfVectorizer(analyzer="char", ngram_range=(1, 2), min_df=2)
    vec.fit([t for d in dialogues for t in turns4(d)[1:]])
    assert sorted(head.vocab) == sorted(vec.vocabulary_)
    d = dialogues[5]
    idx, val = head.rows([d])[0]
    n = len(head.vocab)
    ours = np.zeros(3 * n + 17)
    ours[idx] = val
    theirs = vec.transform([turns4(d)[3]]).toarray()[0]  # b2 block
    by_gram = {g: theirs[j] for g, j in vec.vocabulary_.items()}
    assert [ours[head.vocab[g]] for g in sorted(by_gram)] == pytest.approx(
        [by_gram[g] for g in sorted(by_gram)], abs=1e-6
    )
    assert ours[3 * n :].tolist() == pytest.approx(hand_features(d))


def test_fit_separates_easy_classes_and_round_trips(tmp_path):
    pytest.importorskip("sklearn")
    dialogues, labels = _data()
    head = LexicalHead.fit(dialogues, labels, LABEL_NAMES)
    p = head.proba(dialogues)
    assert p.shape == (40, 4) and np.allclose(p.sum(axis=1), 1.0)
    assert (p.argmax(axis=1) == np.array(labels)).mean() == 1.0
    head.mix = 0.3
    head.save(tmp_path)
    again = LexicalHead.load(tmp_path)
    assert again.mix == 0.3 and again.labels == list(LABEL_NAMES)
    assert np.allclose(again.proba(dialogues), p, atol=1e-6)
    # two classes only: scikit-learn keeps one weight row; the absent classes get no probability
    two = LexicalHead.fit(dialogues[:20], [0 if y == 0 else 3 for y in labels[:20]], LABEL_NAMES)
    q = two.proba(dialogues[:4])
    assert np.allclose(q[:, [1, 2]], 0.0, atol=1e-6) and q[0].argmax() == 0 and q[3].argmax() == 3


def test_fitting_without_scikit_learn_names_the_train_extra(monkeypatch):
    """The error named a bare 'pip install scikit-learn' as a ModelError; the train extra declares it now."""
    import sys

    from dialcheck.errors import MissingDependencyError

    monkeypatch.setitem(sys.modules, "sklearn.linear_model", None)  # import fails as if not installed
    dialogues, labels = _data()
    with pytest.raises(MissingDependencyError, match=r'fitting a lexical head: run `pip install "dialcheck\[train\]"`'):
        LexicalHead.fit(dialogues, labels, LABEL_NAMES)


def test_char_ngrams_up_to_three():
    assert char_ngrams("abc", 3) == {"a": 1, "b": 1, "c": 1, "ab": 1, "bc": 1, "abc": 1}
    assert char_ngrams("abc", 1) == {"a": 1, "b": 1, "c": 1}


def test_shared_blocks_keep_the_reply_ngrams_the_other_turn_has():
    texts = turns4(Dialogue.from_texts(["你好", "我有一只猫", "你有狗吗", "我没有狗 没有"]))
    assert block_ngrams(texts, "b2&b1") == {"我": 1, "有": 2}
    assert block_ngrams(texts, "b2&u2") == {"有": 2, "狗": 1, "有狗": 1}
    assert block_ngrams(texts, "b2") == char_ngrams(texts[3])


def _repeats_data() -> tuple[list[Dialogue], list[int]]:
    """Label 3 when b2 repeats b1's last word, else 0: only what b2 shares with b1 tells them apart."""
    words = ["猫", "狗", "鱼", "鸟", "马", "牛", "羊", "鸡"]
    dialogues, labels = [], []
    for i in range(64):
        a, b = words[i % 8], words[(i // 8) % 8]
        if a == b:
            continue
        y = 3 * (i % 2)
        dialogues.append(Dialogue.from_texts(["嗨", f"喜欢{a}", "然后呢", f"喜欢{a if y else b}"]))
        labels.append(y)
    return dialogues, labels


def test_a_head_with_shared_blocks_saves_its_layout_and_reads_it_back(tmp_path):
    pytest.importorskip("sklearn")
    dialogues, labels = _repeats_data()
    shared = LexicalHead.fit(dialogues, labels, LABEL_NAMES, blocks=("b2", "b1", "u2", "b2&b1"), n=3, min_df=1)
    assert shared.coef.shape[1] == 4 * len(shared.vocab) + 17 and any(len(g) == 3 for g in shared.vocab)
    right = (shared.proba(dialogues).argmax(axis=1) == np.array(labels)).mean()
    assert right == 1.0
    shared.save(tmp_path / "v2")
    again = LexicalHead.load(tmp_path / "v2")
    assert (again.blocks, again.n) == (("b2", "b1", "u2", "b2&b1"), 3)
    assert np.allclose(again.proba(dialogues), shared.proba(dialogues), atol=1e-6)
    # the default layout is written as before (version 1, no layout keys), so older readers still load it
    LexicalHead.fit(dialogues, labels, LABEL_NAMES, min_df=1).save(tmp_path / "v1")
    info = json.loads((tmp_path / "v1" / "lexical.json").read_text(encoding="utf-8"))
    assert info["version"] == 1 and "blocks" not in info
    assert json.loads((tmp_path / "v2" / "lexical.json").read_text(encoding="utf-8"))["version"] == 2
    with pytest.raises(InputError, match="distinct names"):
        LexicalHead.fit(dialogues, labels, LABEL_NAMES, blocks=("b2", "b3"))
    info["version"] = 3
    (tmp_path / "v1" / "lexical.json").write_text(json.dumps(info), encoding="utf-8")
    with pytest.raises(ModelError, match=r"lexical\.json: lexical head version 3"):
        LexicalHead.load(tmp_path / "v1")


class _Rows:
    tokenizer = None

    def __init__(self, rows):
        self.labels = list(CATEGORY_LABELS)
        self.rows = np.asarray(rows, dtype=np.float32)

    def proba(self, pairs, batch_size=64, show_progress_bar=False):
        return self.rows[: len(pairs)]


class _ConstHead(LexicalHead):
    def __init__(self, row, mix, labels=LABEL_NAMES):
        self.row, self.mix, self.labels = np.asarray(row, dtype=np.float32), mix, list(labels)

    def proba(self, dialogues):
        return np.tile(self.row, (len(dialogues), 1))


class _Stage:
    tokenizer = None

    def __init__(self, value):
        self.value = value

    def score(self, pairs, batch_size=64, show_progress_bar=False):
        return np.full(len(pairs), self.value, dtype=np.float32)


def test_cascade_mixes_the_lexical_head_into_each_stage():
    det = HierarchicalDetector()
    for st in STAGES:
        det.set_stage(st, _Stage(0.2))
        det.config.thresholds[st] = 0.5
    assert det.predict([conv("x")])[0].category is None
    # P_lexical(role confusion) = 1: at mix 0.5 the role stage scores 0.5 * 0.2 + 0.5 * 1 = 0.6 and fires;
    # the intra stage (lexical 0) scores 0.1 and does not
    det.lexical = _ConstHead([0.0, 0.0, 1.0, 0.0], 0.5)
    v = det.predict([conv("x")])[0]
    assert v.category == "role_confusion" and v.label_scores == pytest.approx(
        {"intra_sentence": 0.1, "role_confusion": 0.6}
    )


def test_fit_cascade_lexical_chooses_a_mix_when_the_stages_know_nothing():
    pytest.importorskip("sklearn")
    from dialcheck.training.cdconv import MIX_GRID, fit_cascade_lexical

    exs = _examples()
    det = HierarchicalDetector()
    for st in STAGES:
        det.set_stage(st, _Stage(0.2))  # stages that score everything alike
    chosen = fit_cascade_lexical(det, exs[:32], exs[32:] + exs[:8])
    assert chosen["mix"] > 0.0 and chosen["mix"] in MIX_GRID and det.lexical.mix == chosen["mix"]
    per_mix = det.config.training["cascade"]["lexical"]["dev_top_per_mix"]
    assert per_mix["0.0"] < per_mix[str(chosen["mix"])]
    with pytest.raises(InputError, match="needs dev"):
        fit_cascade_lexical(det, exs, [])


def test_mixing_moves_the_decision_and_respects_label_order():
    det = FlatCategoryDetector(tau=0.5)
    det._clf = _Rows([[0.7, 0.1, 0.1, 0.1]])
    assert det.predict([conv("x")])[0].category is None
    # the head puts its mass on history; at mix 0.5 P(any) = 0.5 * 0.3 + 0.5 * 1.0 = 0.65
    det.lexical = _ConstHead([0.0, 0.0, 0.0, 1.0], 0.5)
    v = det.predict([conv("x")])[0]
    assert v.category == "history" and v.score == pytest.approx(0.65)
    # a head whose columns come in another order is re-ordered by label name
    det.lexical = _ConstHead([1.0, 0.0, 0.0, 0.0], 0.5, labels=["history", "role_confusion", "intra_sentence", NON])
    assert det.predict([conv("x")])[0].category == "history"
    det.lexical = _ConstHead([0.0, 0.0, 0.0, 1.0], 0.0)  # mix 0: the encoder alone
    assert det.predict([conv("x")])[0].category is None


NON = "non_contradiction"


def _examples(n: int = 40) -> list[Example]:
    dialogues, labels = _data()
    return [
        Example(d, y != 0, None, None if y == 0 else LABEL_NAMES[y], id=str(i))
        for i, (d, y) in enumerate(zip(dialogues[:n], labels[:n], strict=True))
    ]


def test_fit_lexical_chooses_mix_and_tau_on_dev():
    pytest.importorskip("sklearn")
    from dialcheck.training.cdconv import MIX_GRID, TAU_GRID, fit_lexical

    exs = _examples()
    det = FlatCategoryDetector(tau=0.5)
    det._clf = _Rows([[0.97, 0.01, 0.01, 0.01]] * 40)  # an encoder that never fires
    chosen = fit_lexical(det, exs[:32], exs[32:] + exs[:8])
    assert chosen["mix"] > 0.0 and det.lexical is not None and det.lexical.mix == chosen["mix"]
    assert chosen["mix"] in MIX_GRID and det.tau in TAU_GRID and chosen["tau_before"] == 0.5
    assert (
        chosen["dev_best_per_mix"]["0.0"]["macro_f1_4"] < chosen["dev_best_per_mix"][str(chosen["mix"])]["macro_f1_4"]
    )
    with pytest.raises(InputError, match="needs dev"):
        fit_lexical(det, exs, [])


def test_cli_add_lexical_onto_a_tiny_model(tiny_base, tmp_path, capsys):
    pytest.importorskip("sklearn")
    from dialcheck.cli import main

    root = tmp_path / "data"
    words = {0: "好的我知道", 1: "我是男的我是女的", 2: "你是学生吗", 3: "我没有养狗"}
    rows = [
        {"u1": "你喜欢狗吗", "b1": "喜欢。", "u2": "你养狗吗？", "b2": f"{words[i % 4]}{i}", "label": i % 4}
        for i in range(24)
    ]
    write_cdconv_splits(root, rows)
    base = ["train", "--task", "cdconv", "--data-dir", str(root), "--threads", "1", "--no-progress"]
    enc = tmp_path / "enc"
    tiny = ["--base", str(tiny_base), "--epochs", "1", "--batch-size", "8", "--max-length", "32", "--lora", "2"]
    assert main([*base, "--detector", "flat", "--out", str(enc), *tiny]) == 0
    out = tmp_path / "mixed"
    assert main([*base, "--add-lexical", str(enc), "--augment", "perturb", "--out", str(out)]) == 2
    assert "--augment trains the encoder; --add-lexical fits only a lexical head" in capsys.readouterr().err
    assert not out.exists()
    assert main([*base, "--add-lexical", str(enc), "--out", str(out)]) == 0
    loaded = load_detector(out)
    assert isinstance(loaded, FlatCategoryDetector) and loaded.lexical is not None
    lex = loaded.config.training["lexical"]
    assert lex["mix"] == loaded.lexical.mix and loaded.tau == lex["tau"] and "command" in lex
    assert set(loaded.config.metrics) >= {"dev/4class/macro_f1", "dev/2class/accuracy"}
    assert not any(k.startswith("test/") for k in loaded.config.metrics)
    # the recorded dev metrics (from the pass that chose the mix) are what the saved detector scores on dev
    from dialcheck.datasets import load_dataset
    from dialcheck.evaluation.cdconv import cdconv_metrics, example_label, verdict_label
    from dialcheck.training.cdconv import SPLIT_DATASETS

    dev = load_dataset(SPLIT_DATASETS["official"][1], root)
    again = cdconv_metrics(
        [example_label(e) for e in dev], [verdict_label(v) for v in loaded.predict([e.dialogue for e in dev])]
    )
    assert loaded.config.metrics == {f"dev/{k}": v for k, v in again.items()}
    # the copy works without the source folder and predicts with the head
    import shutil

    shutil.rmtree(enc)
    verdicts = load_detector(out).predict([conv("我没有养狗1")])
    assert math.isfinite(verdicts[0].score)
    # the cascade takes a lexical head too: its mix is chosen on dev with the three stage thresholds
    hier = tmp_path / "h"
    assert main([*base, "--detector", "hierarchical", "--lexical", "--out", str(hier), *tiny]) == 0
    h = load_detector(hier)
    assert isinstance(h, HierarchicalDetector) and h.lexical is not None
    assert h.lexical.mix == h.config.training["lexical"]["mix"] == h.config.training["cascade"]["lexical"]["mix"]
    assert {s: h.stage_threshold(s) for s in STAGES} == {
        s: (1.01 if t is None else t) for s, t in h.config.training["cascade"]["thresholds"].items()
    }
    capsys.readouterr()
    assert main(["train", "--task", "decode", "--lexical", "--out", str(tmp_path / "d")]) == 2
    assert "apply to --task cdconv" in capsys.readouterr().err


def test_attached_head_records_the_dev_metrics_the_detector_scores():
    pytest.importorskip("sklearn")
    from dialcheck.training.cdconv import _attach_lexical, _dev_metrics

    exs = _examples()
    det = FlatCategoryDetector(tau=0.5)
    det._clf = _Rows(np.random.default_rng(0).dirichlet(np.ones(4), size=40))  # an encoder that guesses
    # dev with four non-contradictions mislabelled history, so no setting scores 100
    dev = [
        Example(e.dialogue, True, None, "history", id=e.id) if i < 16 and i % 4 == 0 else e
        for i, e in enumerate(exs[20:])
    ]
    _attach_lexical(det, exs[:20], dev, "dialcheck train ...")
    assert det.config.training["lexical"]["command"] == "dialcheck train ..."
    assert det.config.metrics == {f"dev/{k}": v for k, v in _dev_metrics(det, dev).items()}
    assert 0 < det.config.metrics["dev/4class/macro_f1"] < 100


def test_cli_refuses_lexical_blocks_it_cannot_use(tmp_path, capsys):
    from dialcheck.cli import main

    base = ["train", "--task", "cdconv", "--data-dir", str(tmp_path), "--out", str(tmp_path / "o")]
    assert main([*base, "--lexical-blocks", "b2,b2&b1"]) == 2
    assert "shape a head --lexical or --add-lexical fits" in capsys.readouterr().err
    assert main([*base, "--lexical", "--lexical-blocks", "b2,b1&b2"]) == 2
    assert "--lexical-blocks / --lexical-ngrams: lexical blocks ['b2', 'b1&b2']" in capsys.readouterr().err
    assert main([*base, "--lexical", "--lexical-ngrams", "5"]) == 2
    assert "n-gram length 5: give 1 to 4" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
