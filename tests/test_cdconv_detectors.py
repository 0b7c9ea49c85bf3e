"""Four-category detectors: cascade order and categories with stub stages; 4-way decisions; training,
save and load with a tiny random model (English and Chinese input alike)."""

from __future__ import annotations

import numpy as np
import pytest

from dialcheck.detectors import (
    DETECTORS,
    FlatCategoryDetector,
    HierarchicalDetector,
    PairCategoryDetector,
    load_detector,
)
from dialcheck.detectors.categories import CATEGORY_LABELS, category_evidence, stage_input
from dialcheck.errors import ModelError
from dialcheck.schema import Dialogue, Example, Turn
from dialcheck.training.trainer import TrainConfig
from helpers_cdconv import write_cdconv_splits


class Stub:
    """A stage scorer that looks the score up by the reply text and records what it was asked."""

    def __init__(self, scores: dict[str, float]) -> None:
        self.scores = scores
        self.seen: list[tuple[str, str]] = []

    def score(self, pairs, batch_size=64, show_progress_bar=False):
        self.seen.extend(pairs)
        return np.array([self.scores.get(p[1], 0.0) for p in pairs], dtype=np.float32)


def conv(reply: str, n: int = 4) -> Dialogue:
    texts = ["你喜欢狗吗？", "喜欢，我养了两条狗。", "你养宠物吗？", reply][-n:]
    speakers = ["user", "bot", "user", "bot"][-n:]
    return Dialogue(tuple(Turn(s, t) for s, t in zip(speakers, texts, strict=True)))


def cascade(**thresholds: float) -> tuple[HierarchicalDetector, dict[str, Stub]]:
    det = HierarchicalDetector(tau=0.5)
    det.config.thresholds.update(thresholds)
    stubs = {
        "intra_sentence": Stub({"intra": 0.9, "all": 0.95, "short": 0.2}),
        "role_confusion": Stub({"role": 0.8, "all": 0.9, "hist": 0.1}),
        "history": Stub({"hist": 0.7, "all": 0.99, "none": 0.3}),
    }
    for name, s in stubs.items():
        det.set_stage(name, s)
    return det, stubs


def test_cascade_first_stage_that_fires_decides():
    det, stubs = cascade()
    dialogues = [conv("intra"), conv("role"), conv("hist"), conv("none"), conv("all"), conv("short", n=2)]
    v = det.predict(dialogues)
    assert [x.category for x in v] == ["intra_sentence", "role_confusion", "history", None, "intra_sentence", None]
    assert [x.contradiction for x in v] == [True, True, True, False, True, False]
    # scores: the stage that fired, else the highest stage that ran
    assert [round(x.score, 2) for x in v] == [0.9, 0.8, 0.7, 0.3, 0.95, 0.2]
    # evidence: history -> the bot's earlier turn b1, role -> u2, intra -> none
    assert [x.evidence for x in v[:4]] == [(), (2,), (1,), ()]
    # later stages never see dialogues an earlier stage decided; a 2-turn dialogue only reaches intra
    assert [p[1] for p in stubs["intra_sentence"].seen] == ["intra", "role", "hist", "none", "all", "short"]
    assert [p[1] for p in stubs["role_confusion"].seen] == ["role", "hist", "none"]
    assert [p[1] for p in stubs["history"].seen] == ["hist", "none"]
    # each stage reads its own segments
    assert stubs["intra_sentence"].seen[0] == ("你养宠物吗？", "intra")
    assert stubs["role_confusion"].seen[0] == ("喜欢，我养了两条狗。 | 你养宠物吗？", "role")
    assert stubs["history"].seen[0] == ("你喜欢狗吗？ | 喜欢，我养了两条狗。 | 你养宠物吗？", "hist")
    assert v[2].label_scores == pytest.approx({"intra_sentence": 0.0, "role_confusion": 0.1, "history": 0.7})
    assert v[0].to_dict()["category"] == "intra_sentence"


def test_per_stage_thresholds_move_the_decision():
    det, _ = cascade(intra_sentence=0.96, history=0.8)
    v = det.predict([conv("all"), conv("hist"), conv("intra")])
    assert [x.category for x in v] == ["role_confusion", None, None]


def test_cascade_without_weights_says_so():
    with pytest.raises(ModelError, match="no weights"):
        HierarchicalDetector().predict([conv("x")])
    with pytest.raises(ModelError, match="attach_stage"):
        HierarchicalDetector().attach(None, None)


def _cascade_labels(scores: dict, t: dict) -> list[int]:
    """The cascade's CDConv ids, decided by hand: the first stage at or over its threshold."""
    out = []
    for i in range(len(scores["history"])):
        lab = 0
        for k, st in enumerate(("intra_sentence", "role_confusion", "history"), 1):
            thr = 1.01 if t[st] is None else t[st]
            if scores[st][i] >= thr:
                lab = k
                break
        out.append(lab)
    return out


def test_joint_cascade_thresholds_match_a_brute_force_search():
    import itertools
    import math

    from dialcheck.evaluation.cdconv import cdconv_metrics
    from dialcheck.training.cdconv import cascade_thresholds

    rng = np.random.default_rng(2)
    gold = rng.choice(4, size=120, p=[0.6, 0.08, 0.1, 0.22])
    # each stage scores its own category higher, with noise; the history stage also likes other contradictions
    scores = {
        st: np.clip(rng.normal(0.3, 0.2, 120) + 0.4 * (gold == k) + (0.2 * (gold > 0) if k == 3 else 0), 0, 1)
        for k, st in enumerate(("intra_sentence", "role_confusion", "history"), 1)
    }
    r = cascade_thresholds(scores, gold, levels=6)
    m = cdconv_metrics(gold, _cascade_labels(scores, r["thresholds"]))
    assert (m["2class/accuracy"], m["4class/macro_f1"]) == (r["dev"]["2class/accuracy"], r["dev"]["4class/macro_f1"])
    # brute force over the same candidates: the top criterion, and the chosen setting within one SE of it
    cands = {}
    for st, s in scores.items():
        cands[st] = [*np.unique(np.quantile(s, np.linspace(0.3, 1.0, 6))), None]
    best, rows = (-1.0, 0.0), []
    for combo in itertools.product(*cands.values()):
        labels = _cascade_labels(scores, dict(zip(cands, combo, strict=True)))
        mm = cdconv_metrics(gold, labels)
        rows.append(((mm["2class/accuracy"] + mm["4class/macro_f1"]) / 2, sum(x > 0 for x in labels)))
        best = max(best, (rows[-1][0], mm["2class/accuracy"]))
    assert r["settings"] == math.prod(len(c) for c in cands.values())
    top = (r["top"]["2class/accuracy"] + r["top"]["4class/macro_f1"]) / 2
    assert top == pytest.approx(best[0], abs=0.01)
    se = 100 * math.sqrt(best[1] / 100 * (1 - best[1] / 100) / 120)
    chosen = (r["dev"]["2class/accuracy"] + r["dev"]["4class/macro_f1"]) / 2
    assert best[0] - se - 0.01 <= chosen <= best[0] + 0.01
    assert r["dev"]["fires"] == sum(x > 0 for x in _cascade_labels(scores, r["thresholds"]))
    # of the settings within one SE of the top, the chosen one fires least
    assert r["dev"]["fires"] == min(f for c, f in rows if c >= best[0] - se - 1e-9)
    assert r["dev"]["fires"] < sum(x > 0 for x in _cascade_labels(scores, r["top"]["thresholds"]))


def test_calibrate_cascade_sets_thresholds_that_reproduce_its_dev_numbers():
    from dialcheck.evaluation.cdconv import cdconv_metrics, example_label, verdict_label
    from dialcheck.training.cdconv import calibrate_cascade

    rng = np.random.default_rng(0)
    cats = [None, "intra_sentence", "role_confusion", "history"]
    gold = rng.choice(4, size=80, p=[0.55, 0.1, 0.1, 0.25])
    dev = [Example(conv(f"r{i}"), bool(g), None, cats[g], id=str(i)) for i, g in enumerate(gold)]
    det = HierarchicalDetector()
    for k, st in enumerate(("intra_sentence", "role_confusion", "history"), 1):
        # over-firing stages: every stage scores every contradiction high, so low per-stage thresholds
        # would send role and history contradictions to the intra stage
        sc = np.clip(rng.normal(0.2, 0.15, 80) + 0.3 * (gold > 0) + 0.3 * (gold == k), 0, 1)
        det.set_stage(st, Stub({f"r{i}": float(v) for i, v in enumerate(sc)}))
        det.config.thresholds[st] = 0.3
    before = cdconv_metrics(gold, [verdict_label(v) for v in det.predict([e.dialogue for e in dev])])
    res = calibrate_cascade(det, dev)
    after = cdconv_metrics(
        [example_label(e) for e in dev], [verdict_label(v) for v in det.predict([e.dialogue for e in dev])]
    )
    assert after["2class/accuracy"] == res["dev"]["2class/accuracy"]
    assert after["4class/macro_f1"] == res["dev"]["4class/macro_f1"]
    assert after["2class/accuracy"] + after["4class/macro_f1"] > before["2class/accuracy"] + before["4class/macro_f1"]
    assert det.config.training["cascade"]["stage_thresholds"]["history"] == 0.3
    # a second calibration (e.g. after adding a lexical head) keeps the stages' own thresholds on record
    first = det.config.training["cascade"]["thresholds"]
    calibrate_cascade(det, dev)
    assert det.config.training["cascade"]["stage_thresholds"]["history"] == 0.3
    assert det.config.training["cascade"]["thresholds_before"] == {
        k: 1.01 if v is None else v for k, v in first.items()
    }


class FakeClassifier:
    tokenizer = None

    def __init__(self, rows):
        self.labels = list(CATEGORY_LABELS)
        self.rows = np.asarray(rows, dtype=np.float32)
        self.seen = []

    def proba(self, pairs, batch_size=64, show_progress_bar=False):
        self.seen.extend(pairs)
        return self.rows[: len(pairs)]


def test_four_way_decision_and_inputs():
    det = PairCategoryDetector(tau=0.5)
    det._clf = FakeClassifier([[0.3, 0.1, 0.5, 0.1], [0.6, 0.3, 0.05, 0.05], [0.1, 0.2, 0.3, 0.4]])
    v = det.predict([conv("a"), conv("b"), conv("c")])
    assert [x.category for x in v] == ["role_confusion", None, "history"]
    assert [round(x.score, 2) for x in v] == [0.7, 0.4, 0.9]
    assert v[2].evidence == (1,) and v[0].evidence == (2,)
    assert det._clf.seen[0] == ("喜欢，我养了两条狗。", "a")  # (b1, b2)
    det.tau = 0.8
    assert [x.category for x in det.predict([conv("a"), conv("b"), conv("c")])] == [None, None, "history"]
    flat = FlatCategoryDetector()
    flat._clf = FakeClassifier([[1, 0, 0, 0]])
    flat.predict([conv("z")])
    assert flat._clf.seen == [("你喜欢狗吗？ | 喜欢，我养了两条狗。 | 你养宠物吗？", "z")]


def test_registered_names():
    assert DETECTORS["cdconv.hierarchical.v1"] is HierarchicalDetector
    assert DETECTORS["cdconv.flat.v1"] is FlatCategoryDetector
    assert DETECTORS["cdconv.pair.v1"] is PairCategoryDetector
    english = Dialogue.from_texts(["Do you have pets?", "Two dogs.", "And you?", "I never had pets."])
    assert stage_input("pair", english) == ("Two dogs.", "I never had pets.")


def _examples(n: int = 20) -> list[Example]:
    cats = [None, "intra_sentence", "role_confusion", "history"]
    out = []
    for i in range(n):
        c = cats[i % 4]
        d = conv(f"回答{i}") if i % 2 else Dialogue.from_texts([f"question {i}", "I have a dog.", "Really?", f"no {i}"])
        out.append(Example(d, c is not None, None, c, id=str(i)))
    return out


@pytest.mark.parametrize(
    ("cls", "adapter"),
    [(HierarchicalDetector, {"type": "lora", "r": 2, "alpha": 4}), (FlatCategoryDetector, None)],
)
def test_train_save_load_round_trip_with_a_tiny_model(tiny_base, tmp_path, cls, adapter):
    import torch

    torch.set_num_threads(1)
    exs = _examples()
    det = cls(base=str(tiny_base), adapter=adapter, max_length=48)
    det.fit(exs[:16], dev=exs[16:], config=TrainConfig(epochs=1, batch_size=8, threads=1, eval_every=1))
    assert "dev/4class/macro_f1" in det.config.metrics
    assert det.config.training["train_examples"] == 16
    # each fit records how many of its training pairs the 48-token window cut
    assert {f["window"]["pairs"] for f in det.config.training["fits"].values()} == {16}
    dialogues = [e.dialogue for e in exs]
    before = det.predict(dialogues)
    out = det.save(tmp_path / "det")
    loaded = load_detector(out)
    assert type(loaded) is cls
    after = loaded.predict(dialogues)
    assert [v.category for v in after] == [v.category for v in before]
    assert [v.score for v in after] == pytest.approx([v.score for v in before], abs=1e-5)
    assert all(v.category in (None, *CATEGORY_LABELS[1:]) for v in after)
    pytest.importorskip("onnxruntime")
    on_onnx = load_detector(out).use_onnx(cache=tmp_path / "onnx").predict(dialogues)  # every stage moves
    assert [v.category for v in on_onnx] == [v.category for v in before]
    assert [v.score for v in on_onnx] == pytest.approx([v.score for v in before], abs=1e-5)
    assert len(list((tmp_path / "onnx").glob("*.onnx"))) == (3 if cls is HierarchicalDetector else 1)
    if cls is HierarchicalDetector:
        # the stage thresholds are chosen on dev (1.01: a stage that never fires) and reload as they were
        from dialcheck.detectors.categories import STAGES

        assert "cascade" in det.config.training
        assert all(-1e-4 <= loaded.stage_threshold(s) <= 1.01 for s in STAGES)
        assert {s: loaded.stage_threshold(s) for s in STAGES} == {s: det.config.thresholds[s] for s in STAGES}
        with pytest.raises(ModelError, match="load its parent folder"):
            load_detector(out / "history")
        import shutil

        shutil.rmtree(out / "role_confusion")
        with pytest.raises(ModelError, match="'role_confusion' stage is missing"):
            load_detector(out)


def test_train_cli_cdconv_on_a_tiny_corpus(tiny_base, tmp_path, capsys):
    import json

    from dialcheck.cli import main

    root = tmp_path / "data"
    rows = []
    for i in range(20):
        rows.append({"u1": f"你喜欢狗吗{i}", "b1": "喜欢。", "u2": "你养狗吗？", "b2": f"没养过{i}", "label": i % 4})
    write_cdconv_splits(root, rows)
    out = tmp_path / "model"
    args = ["train", "--task", "cdconv", "--detector", "pair", "--out", str(out), "--base", str(tiny_base)]
    args += ["--data-dir", str(root), "--epochs", "1", "--batch-size", "8", "--threads", "1", "--max-length", "32"]
    assert main([*args, "--no-progress", "--lora", "2"]) == 0
    loaded = load_detector(out)
    assert type(loaded) is PairCategoryDetector and loaded.config.training["train_examples"] == 20
    assert "dev/4class/macro_f1" in loaded.config.metrics
    capsys.readouterr()
    res, pred = tmp_path / "res.json", tmp_path / "pred.jsonl"
    ev = ["evaluate", "--benchmark", "cdconv", "--model", str(out), "--splits", "dev", "--data-dir", str(root)]
    assert main([*ev, "--json", str(res), "--predictions", str(pred), "--update-card", "--no-progress"]) == 0
    table = capsys.readouterr().out
    results = json.loads(res.read_text())
    assert 0 <= results["dev/4class/macro_f1"] <= 100 and "| 4-class macro-F1 |" in table
    lines = [json.loads(x) for x in pred.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 20 and {x["gold"] for x in lines} == {0, 1, 2, 3} and lines[0]["split"] == "dev"
    assert lines[1]["gold_category"] == "intra_sentence" and lines[0]["gold_category"] is None
    assert "dev/4class/macro_f1" in (out / "MODEL_CARD.md").read_text()
    with pytest.raises(SystemExit) as e:  # refused when the command line is read
        main([*ev[:5], "--splits", "nope", "--data-dir", str(root)])
    assert e.value.code == 2 and "argument --splits: unknown: nope" in capsys.readouterr().err
    bad = ["train", "--task", "decode", "--detector", "hierarchical", "--out", str(tmp_path / "x")]
    assert main(bad) == 2
    assert "applies to --task cdconv" in capsys.readouterr().err


def test_train_cli_cdconv_perturbation_augmentation(tiny_base, tmp_path, capsys):
    import json

    from dialcheck.cli import main

    root = tmp_path / "data"
    rows = [
        {"u1": "你喜欢狗吗？", "b1": "我很喜欢狗。", "u2": "为什么？", "b2": f"可爱{i}", "label": i % 4}
        for i in range(20)
    ]
    write_cdconv_splits(root, rows)
    out = tmp_path / "model"
    args = ["train", "--task", "cdconv", "--detector", "flat", "--out", str(out), "--base", str(tiny_base)]
    args += ["--data-dir", str(root), "--epochs", "1", "--batch-size", "8", "--threads", "1", "--max-length", "32"]
    args += ["--no-progress", "--lora", "2"]
    assert main([*args, "--augment", "perturb,swap"]) == 2
    assert "--augment swap: --task cdconv knows perturb" in capsys.readouterr().err
    assert main([*args, "--augment", "perturb"]) == 2  # no dictionary in this data folder
    assert f"{root / 'chinese_dictionary'}: --augment perturb needs the Chinese dictionary" in capsys.readouterr().err
    lex = root / "chinese_dictionary"
    lex.mkdir()
    (lex / "dict_synonym.txt").write_text("Gb09A01= 喜欢 喜爱\n", encoding="utf-8")
    (lex / "dict_antonym.txt").write_text("喜欢——讨厌\n", encoding="utf-8")
    (lex / "dict_negative.txt").write_text("不\t0\t2\n", encoding="utf-8")
    assert main([*args, "--augment", "perturb"]) == 0
    err = capsys.readouterr().err
    made = json.loads(err.split("--augment perturb: ")[1].splitlines()[0])["made"]
    cfg = load_detector(out).config
    assert made > 0 and cfg.training["train_examples"] == 20 + made and cfg.training["augment"] == ["perturb"]


def test_train_cli_cdconv_random_context_augmentation(tiny_base, tmp_path, capsys):
    import json

    from dialcheck.cli import main

    root = tmp_path / "data"
    rows = [{"u1": f"问{i}", "b1": f"答{i}", "u2": "你叫什么？", "b2": f"我叫{i}", "label": i % 4} for i in range(40)]
    write_cdconv_splits(root, rows)
    out = tmp_path / "model"
    args = ["train", "--task", "cdconv", "--detector", "flat", "--out", str(out), "--base", str(tiny_base)]
    args += ["--data-dir", str(root), "--epochs", "1", "--batch-size", "8", "--threads", "1", "--max-length", "32"]
    assert main([*args, "--no-progress", "--lora", "2", "--augment", "random_context"]) == 0
    err = capsys.readouterr().err
    made = json.loads(err.split("--augment random_context: ")[1].splitlines()[0])["made"]
    cfg = load_detector(out).config
    assert made > 0 and cfg.training["train_examples"] == 40 + made and cfg.training["augment"] == ["random_context"]
    assert cfg.training["context_rate"] == 0.3
    # --context-rate 1.0 copies every history and intra-sentence contradiction (labels 3 and 1: 20 of the 40)
    everything = [*args, "--no-progress", "--lora", "2", "--augment", "random_context", "--context-rate", "1"]
    assert main([*everything, "--out", str(tmp_path / "all")]) == 0
    err = capsys.readouterr().err
    counts = json.loads(err.split("--augment random_context: ")[1].splitlines()[0])
    assert counts == {"history": 10, "intra_sentence": 10, "made": 20, "no_donor": 0}
    assert load_detector(tmp_path / "all").config.training["context_rate"] == 1.0
    # user_statement at the same rate copies every history contradiction (10), beside random_context's 20
    both = [*args, "--no-progress", "--lora", "2", "--augment", "random_context,user_statement", "--context-rate", "1"]
    assert main([*both, "--out", str(tmp_path / "both")]) == 0
    err = capsys.readouterr().err
    assert json.loads(err.split("--augment user_statement: ")[1].splitlines()[0]) == {"made": 10, "no_donor": 0}
    cfg = load_detector(tmp_path / "both").config
    assert cfg.training["train_examples"] == 40 + 20 + 10 and cfg.training["context_rate"] == 1.0
    # a rate without either augmentation is refused before any training, one outside (0, 1] as the command line is read
    assert main([*args, "--no-progress", "--context-rate", "0.5", "--out", str(tmp_path / "no")]) == 2
    assert "--context-rate is the share --augment random_context or user_statement copies" in capsys.readouterr().err
    zero = ["--augment", "random_context", "--context-rate", "0", "--out", str(tmp_path / "zero")]
    with pytest.raises(SystemExit) as e:
        main([*args, "--no-progress", *zero])
    assert e.value.code == 2 and "argument --context-rate: must lie in (0, 1], got 0" in capsys.readouterr().err


def test_speaker_tags_show_whose_words_are_whose():
    d = Dialogue.from_texts(["你猜我多大？", "二十岁？", "不对。你呢？", "我今年三十岁了。"])
    first, second = stage_input("flat", d, tags=True)
    assert (
        first.splitlines() == ["A: 你猜我多大？", "B: 二十岁？", "A: 不对。你呢？"] and second == "B: 我今年三十岁了。"
    )
    assert stage_input("pair", d, tags=True) == ("B: 二十岁？", "B: 我今年三十岁了。")
    assert stage_input("role_confusion", d, tags=True) == ("B: 二十岁？\nA: 不对。你呢？", "B: 我今年三十岁了。")
    # tags follow the speakers, not the positions
    named = Dialogue(
        turns=(Turn("bot", "Hi."), Turn("bot", "I have a cat."), Turn("user", "Nice."), Turn("bot", "No pets."))
    )
    assert stage_input("flat", named, tags=True)[0].splitlines() == ["B: Hi.", "B: I have a cat.", "A: Nice."]
    assert stage_input("flat", d) == ("你猜我多大？ | 二十岁？ | 不对。你呢？", "我今年三十岁了。")


def test_train_cli_speaker_tags_are_saved_read_and_carried_by_init(tiny_base, tmp_path, capsys):
    from dialcheck.cli import main

    root = tmp_path / "data"
    rows = [
        {"u1": f"你喜欢狗吗{i}", "b1": "喜欢。", "u2": "你养狗吗？", "b2": f"没养过{i}", "label": i % 4}
        for i in range(20)
    ]
    write_cdconv_splits(root, rows)
    common = ["--data-dir", str(root), "--epochs", "1", "--batch-size", "8", "--threads", "1", "--max-length", "32"]
    out, out2, plain = tmp_path / "tagged", tmp_path / "tagged2", tmp_path / "plain"
    args = ["train", "--task", "cdconv", "--detector", "flat", "--base", str(tiny_base), *common, "--no-progress"]
    assert main([*args, "--lora", "2", "--speaker-tags", "--out", str(out)]) == 0
    assert main([*args, "--lora", "2", "--out", str(plain)]) == 0
    assert (
        main(["train", "--task", "cdconv", "--detector", "flat", "--init", str(out), *common, "--out", str(out2)]) == 0
    )
    d = Dialogue.from_texts(["你养狗吗？", "养了一只。", "真的吗？", "我没养过狗。"])
    for folder in (out, out2):
        det = load_detector(folder)
        assert det.inputs([d]) == [("A: 你养狗吗？\nB: 养了一只。\nA: 真的吗？", "B: 我没养过狗。")]
    assert load_detector(plain).inputs([d])[0][1] == "我没养过狗。"
    capsys.readouterr()
    assert main(["train", "--task", "decode", "--speaker-tags", "--out", str(tmp_path / "x")]) == 2
    assert "--speaker-tags apply to --task cdconv" in capsys.readouterr().err
    assert (
        main(["train", "--task", "cdconv", "--add-lexical", str(out), "--speaker-tags", "--out", str(tmp_path / "y")])
        == 2
    )
    assert "keeps the saved detector's reading" in capsys.readouterr().err


def test_cascade_reads_speaker_tags_when_its_config_says_so():
    det, stubs = cascade()
    det.config.options["speaker_tags"] = True
    for s in stubs.values():
        s.scores = {f"B: {k}": v for k, v in s.scores.items()}
    v = det.predict([conv("hist"), conv("none")])
    assert [x.category for x in v] == ["history", None] and v[0].evidence == (1,)
    history_in = "A: 你喜欢狗吗？\nB: 喜欢，我养了两条狗。\nA: 你养宠物吗？"
    assert stubs["history"].seen[0] == (history_in, "B: hist")
    assert stubs["role_confusion"].seen[0] == ("B: 喜欢，我养了两条狗。\nA: 你养宠物吗？", "B: hist")
    assert det.stage_scores([conv("hist")])["history"][0] == pytest.approx(0.7)


def test_train_cli_continues_each_hierarchical_stage_from_its_own_saved_stage(tiny_base, tmp_path, capsys):
    from dialcheck.cli import main

    root = tmp_path / "data"
    rows = [
        {"u1": f"你喜欢狗吗{i}", "b1": f"喜欢{i % 3}。", "u2": "你养狗吗？", "b2": f"没养过{i}", "label": i % 4}
        for i in range(24)
    ]
    write_cdconv_splits(root, rows)
    common = ["--data-dir", str(root), "--batch-size", "8", "--threads", "1", "--max-length", "32", "--no-progress"]
    first, cont = tmp_path / "e1", tmp_path / "e2"
    args = ["train", "--task", "cdconv", "--detector", "hierarchical", *common]
    assert (
        main([*args, "--base", str(tiny_base), "--lora", "2", "--epochs", "2", "--lr", "5e-2", "--out", str(first)])
        == 0
    )
    # a learning rate of ~0: the continued stages must give their own saved stage's scores back
    assert main([*args, "--init", str(first), "--epochs", "1", "--lr", "1e-12", "--out", str(cont)]) == 0
    ds = [Dialogue.from_texts(["你喜欢狗吗？", f"喜欢{k}。", "你养狗吗？", f"没养过{k}"]) for k in range(3)]
    before, after = load_detector(first).stage_scores(ds), load_detector(cont).stage_scores(ds)
    stages = list(before)
    assert not np.allclose(before[stages[0]], before[stages[-1]], atol=1e-4)  # the stages differ
    for stage in stages:
        np.testing.assert_allclose(after[stage], before[stage], atol=1e-5)
    capsys.readouterr()
    flat = [
        "train",
        "--task",
        "cdconv",
        "--detector",
        "flat",
        *common,
        "--init",
        str(first),
        "--out",
        str(tmp_path / "f"),
    ]
    assert main(flat) == 2
    assert "its three stages continue with --detector hierarchical" in capsys.readouterr().err


def test_category_evidence_points_at_the_turns_each_category_names_and_never_at_an_empty_one():
    d = Dialogue.from_texts(["你好", "我养了一只狗。", "你呢？", "", "你的狗呢？", "我从来没养过狗。"])
    assert category_evidence(d, "history") == (1,)  # turn 3 is the bot's too, but empty
    assert category_evidence(d, "role_confusion") == (4,)
    assert category_evidence(d, "intra_sentence") == () and category_evidence(d, None) == ()
