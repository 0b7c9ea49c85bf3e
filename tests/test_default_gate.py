"""benchmarks/default_gate.py: the rules that decide whether a candidate replaces the shipped default."""

import json

import pytest


def _record(**over):
    rec = {
        "model": "base",
        "tau": 0.7,
        "human_bot/accuracy": 72.0,
        "rct/accuracy": 66.0,
        "dev/accuracy": 84.0,
        "dev/evidence_f1": 70.0,
        "perturb/negation": 0.96,
        "perturb/antonym": 0.50,
        "restatements/flagged": 0.30,
        "demo/pets": {"contradiction": True, "score": 0.99},
        "demo/music": {"contradiction": False, "score": 0.30},
        "decode_hand_a/accuracy": 60.0,
        "decode_hand_a/n": 64,
        "decode_hand_b/accuracy": 50.0,
        "decode_hand_b/n": 48,
        "decode_hand_values/accuracy": 56.82,
        "decode_hand_values/n": 44,
        "decode_hand_slots/accuracy": 62.5,
        "decode_hand_slots/n": 32,
        "decode_hand_slots_b/accuracy": 50.0,
        "decode_hand_slots_b/n": 24,
        "decode_hand_slots_c/accuracy": 65.0,
        "decode_hand_slots_c/n": 20,
    }
    rec.update(over)
    return rec


def _failed(gate, cand, base):
    return [rule.split(":")[0] for rule, ok, _ in gate(cand, base) if not ok]


def test_a_better_candidate_passes_and_each_known_regression_fails_its_own_gate(load_benchmark):
    gate = load_benchmark("default_gate").gate
    base = _record()
    better = _record(model="cand", **{"human_bot/accuracy": 76.0, "rct/accuracy": 70.0})
    assert _failed(gate, better, base) == []
    # the session-22 student: +4 human-bot, but negations unlearnt
    assert _failed(gate, {**better, "perturb/negation": 0.11}, base) == ["negations caught ≥ 90%"]
    # the music dialogue flagged
    music = {**better, "demo/music": {"contradiction": True, "score": 0.76}}
    assert _failed(gate, music, base) == ["README demo"]
    # two hand-set A dialogues fewer right (1.5625 points each) fails; one passes
    assert _failed(gate, {**better, "decode_hand_a/accuracy": 60.0 - 2 * 1.5625}, base) == ["decode_hand_a"]
    assert _failed(gate, {**better, "decode_hand_a/accuracy": 60.0 - 1.5625}, base) == []
    # one of 30 fewer, as the rounded accuracies say it (86.67 -> 83.33: Δ -3.34 > 3.33): passes; two fail
    thirty = {"decode_hand_ages_h/n": 30}
    base30 = {**base, **thirty, "decode_hand_ages_h/accuracy": 86.67}
    assert _failed(gate, {**better, **thirty, "decode_hand_ages_h/accuracy": 83.33}, base30) == []
    assert _failed(gate, {**better, **thirty, "decode_hand_ages_h/accuracy": 80.0}, base30) == ["decode_hand_ages_h"]
    # rebuilt dev 1.2 lower than the baseline (tolerance 1.0); restatements 11 points more
    assert _failed(gate, {**better, "dev/accuracy": 82.8}, base) == ["rebuilt-dev accuracy and SE F1"]
    assert _failed(gate, {**better, "restatements/flagged": 0.41}, base) == ["restatements flagged"]
    # RCT traded for human-bot beyond the tolerance, and no gain at all (a model cannot replace itself)
    assert "human-bot and RCT at own τ" in _failed(gate, {**better, "rct/accuracy": 64.5}, base)
    assert _failed(gate, _record(model="same"), base) == ["human-bot and RCT at own τ"]
    # a reading rule DECODE does not see: unchanged there, so it passes only with more hand-set dialogues right
    slots = _record(model="rule", **{"decode_hand_slots/accuracy": 62.5 + 3 * 3.125})
    assert _failed(gate, slots, base) == []
    assert _failed(gate, {**slots, "decode_hand_b/accuracy": 50.0 - 4 * 2.0833}, base) == [
        "human-bot and RCT at own τ",
        "decode_hand_b",
    ]
    # the evidence turns alone: every accuracy as it was, so it passes only with SE F1 up by the tolerance or more
    assert _failed(gate, _record(model="ev", **{"dev/evidence_f1": 71.03}), base) == []
    assert _failed(gate, _record(model="ev", **{"dev/evidence_f1": 70.5}), base) == ["human-bot and RCT at own τ"]
    moved = _record(model="ev", **{"dev/evidence_f1": 72.0, "decode_hand_a/accuracy": 60.0 + 1.5625})
    assert _failed(gate, {**moved, "decode_hand_b/accuracy": 50.0 - 2.0833}, base) == ["human-bot and RCT at own τ"]


def test_the_script_measures_both_models_and_keeps_the_baseline_against_itself(
    load_benchmark, tiny_detector_dir, tmp_path, capsys, monkeypatch
):
    gate = load_benchmark("default_gate")
    from dialcheck.io import parse_dialogue, parse_example

    # fixed probe inputs (the real ones need spaCy and WordNet: perturbation_probe and the trigger tests)
    pairs = [("I have a dog.", "I don't have a dog."), ("I like tea.", "I do not like tea.")]
    restate = [parse_dialogue(["I have a dog.", "ok", "My dog is a lab."])] * 2
    demo = {"pets": parse_dialogue(["I have two dogs.", "nice", "I never had a dog."])}
    demo["music"] = parse_dialogue(["I love jazz.", "cool", "I play the trumpet."])
    fixed = {"perturb": {"negation": pairs, "antonym": pairs, "paraphrase": pairs}, "restatements": (restate, [0, 1])}
    held_out = [
        parse_example({"turns": ["where?", "Cafe X is 2 miles away", "ok", t], "contradiction": c})
        for t, c in (("Cafe X is at 1 main st", False), ("No cafe is near you", True))
    ]
    fixed["citod"] = held_out
    monkeypatch.setattr(gate, "probe_inputs", lambda *a, **k: {**fixed, "demo": demo})
    out = tmp_path / "gate.json"
    m = str(tiny_detector_dir)
    args = ["--candidate", m, "--baseline", m, "--eval-limit", "6", "--limit", "20", "--json", str(out)]
    assert gate.main(args) == 1
    payload = json.loads(out.read_text(encoding="utf-8"))
    for side in ("baseline", "candidate"):
        del payload[side]["human_bot/dialogues_per_s"]  # timing: the one number that may differ
    assert payload["baseline"] == payload["candidate"]
    assert payload["rules"][0][1] is False  # no gain over itself
    text = capsys.readouterr().out
    assert "| gate | passed | detail |" in text and f"Verdict: {m} keep {m}" in text
    assert "| CI-ToD held-out history dialogues (210) accuracy |" in text
    assert 0 <= payload["candidate"]["citod_history_test/roc_auc"] <= 100
    # RCT's first 6 dialogues hold two of the hand-read ones: one judged consistent, one a contradiction
    cand = payload["candidate"]
    fa, found = cand["rct_audit/flagged_consistent"], cand["rct_audit/flagged_contradiction"]
    assert fa in (0, 1) and found in (0, 1)
    assert cand["rct_audit/accuracy"] == 100 * ((1 - fa) + found) / 2
    assert "| RCT read by hand: accuracy against the reading (unclear left out) |" in text
    # a change of code: the baseline is the earlier run's candidate, not measured again
    now = dict(payload["candidate"], **{"human_bot/dialogues_per_s": 1.0})
    worse = dict(now, **{"rct/accuracy": now["rct/accuracy"] + 5})
    before = tmp_path / "before.json"
    before.write_text(json.dumps({"candidate": worse}), encoding="utf-8")
    monkeypatch.setattr(gate, "measure", lambda name, *a, **k: dict(now, model=name))
    assert gate.main(["--candidate", m, "--baseline-from", str(before), "--json", str(out)]) == 1
    again = json.loads(out.read_text(encoding="utf-8"))
    assert again["baseline"]["model"].endswith("(from before.json)")
    assert again["rules"][0] == [again["rules"][0][0], False, "Δ +0.00 / -5.00"]  # RCT 5 points below "before"
    # two saved runs judged without measuring anything (the other way round, so the gain passes its rule)
    after = tmp_path / "after.json"
    after.write_text(json.dumps({"candidate": dict(worse, model="new")}), encoding="utf-8")
    monkeypatch.setattr(gate, "measure", lambda *a, **k: pytest.fail("nothing is measured"))
    monkeypatch.setattr(gate, "probe_inputs", lambda *a, **k: pytest.fail("no probe inputs are built"))
    before.write_text(json.dumps({"candidate": now}), encoding="utf-8")
    gate.main(["--candidate-from", str(after), "--baseline-from", str(before), "--json", str(out)])
    judged = json.loads(out.read_text(encoding="utf-8"))
    assert judged["candidate"]["model"] == "new (from after.json)" and judged["rules"][0][1] is True
    # a baseline saved before a hand set joined the gate: that row reads "–" and its rule is not applied
    older = {k: v for k, v in now.items() if not k.startswith("decode_hand_introductions_m/")}
    before.write_text(json.dumps({"candidate": older}), encoding="utf-8")
    gate.main(["--candidate-from", str(after), "--baseline-from", str(before), "--json", str(out)])
    text = capsys.readouterr().out
    assert "| hand set of someone introduced, then elaborated (40) accuracy | – | " in text
    assert json.loads(out.read_text(encoding="utf-8"))["baseline"] == {
        **older,
        "model": older["model"] + " (from before.json)",
    }
    with pytest.raises(SystemExit):
        gate.main(["--baseline-from", str(before)])  # no candidate at all


def test_a_cascade_reads_the_probe_pairs_as_its_second_detector_would(load_benchmark, tiny_detector_dir):
    gate = load_benchmark("default_gate")
    from dialcheck.detectors import CascadeDetector, load_detector

    one = load_detector(tiny_detector_dir)
    one.tau = 0.5
    pairs = [("I have a dog.", "I don't have a dog."), ("I like tea.", "I do not like tea."), ("a", "b")]
    scores = one.classifier.score(pairs)
    one.tau = float(sorted(scores)[1])  # one pair below, two at or above: both outcomes occur
    cascade = CascadeDetector.build(load_detector(tiny_detector_dir), one, 0.0, 1.0)
    assert gate._pair_flags(cascade, pairs) == gate._pair_flags(one, pairs) == [s >= one.tau for s in scores]
    assert sum(gate._pair_flags(cascade, pairs)) == 2


def _small_inputs() -> dict:
    """Probe inputs for :func:`measure` of a few dialogues (the real ones need spaCy and WordNet)."""
    from dialcheck.io import parse_dialogue, parse_example

    demo = {"pets": parse_dialogue(["I have two dogs.", "nice", "I never had a dog."])}
    demo["music"] = parse_dialogue(["I love jazz.", "cool", "I play the trumpet."])
    held_out = [
        parse_example({"turns": ["where?", "Cafe X is 2 miles away", "ok", t], "contradiction": c})
        for t, c in (("Cafe X is at 1 main st", False), ("No cafe is near you", True))
    ]
    return {
        "perturb": {"negation": [("I have a dog.", "I don't have a dog.")]},
        "restatements": ([parse_dialogue(["I have a dog.", "ok", "My dog is a lab."])], [0]),
        "demo": demo,
        "citod": held_out,
    }


def test_the_candidate_is_measured_on_the_runtime_it_will_run_on(load_benchmark, tiny_detector_dir, tmp_path):
    pytest.importorskip("onnxruntime")
    gate = load_benchmark("default_gate")
    inputs = _small_inputs()
    m = str(tiny_detector_dir)
    with pytest.raises(ValueError, match="runtime 'tensorrt'"):
        gate.measure(m, inputs, eval_limit=4, runtime="tensorrt")
    torch_run = gate.measure(m, inputs, eval_limit=4)
    onnx_run = gate.measure(m, inputs, eval_limit=4, runtime="onnx")
    assert onnx_run["model"] == f"{m} [onnx]" and torch_run["model"] == m
    # float32 ONNX gives torch's scores, so every number but the timing and the label agrees
    for run in (torch_run, onnx_run):
        del run["human_bot/dialogues_per_s"], run["model"]
    assert onnx_run["demo/pets"]["score"] == pytest.approx(torch_run["demo/pets"]["score"], abs=1e-3)
    # the decode_neighbours ROC AUC of --eval-limit 4's pairs (one class) is left out on both, as evaluate's are
    assert {k: v for k, v in onnx_run.items() if k[:5] != "demo/"} == {
        k: v for k, v in torch_run.items() if k[:5] != "demo/"
    }


def test_a_roc_auc_of_one_class_is_left_out_not_nan(load_benchmark, tiny_detector_dir):
    # the first 4 neighbour pairs (--eval-limit 4) are all consistent: their ROC AUC was NaN, written to --json as
    # NaN (which a JSON reader refuses) and shown as "nan" in the table, where CI-ToD's was left out ("–")
    gate = load_benchmark("default_gate")
    inputs = _small_inputs()
    run = gate.measure(str(tiny_detector_dir), inputs, eval_limit=4)
    assert run["decode_neighbours/consistent"] == 4 and run["decode_neighbours/roc_auc"] is None
    json.dumps(run, allow_nan=False)  # no NaN anywhere in what --json writes
    row = next(line for line in gate.report(run, run, []).splitlines() if "neighbour pairs (60) ROC AUC" in line)
    assert row.endswith("| – | – |")


def test_a_hand_set_the_baseline_lacks_is_left_out_not_a_crash(load_benchmark):
    gate = load_benchmark("default_gate").gate
    base = _record()
    cand = _record(model="cand", **{"decode_hand_ages_e/accuracy": 90.0, "decode_hand_ages_e/n": 30})
    rules = [rule for rule, _, _ in gate(cand, base)]
    assert not any(r.startswith("decode_hand_ages_e") for r in rules)
    assert any(r.startswith("decode_hand_slots_c") for r in rules)
