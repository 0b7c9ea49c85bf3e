"""The researcher-facing commands (train, models, collect, nbest, rerank, probe) on a newcomer's mistakes:
user errors exit 2 naming the file, line and field, and a resumed batch job never mixes in work done otherwise."""

from __future__ import annotations

import json
import re

import pytest

from helpers_cli import feed_stdin
from helpers_cli import run_cli as _run


def _stimulus(n: int, question: str = "Are you in Ohio?") -> str:
    return json.dumps(
        {
            "id": f"entq:{n}",
            "kind": "ENTQ",
            "history": "I live in Ohio.",
            "hypothesis": "I'm in Ohio.",
            "question": question,
            "expected": "yes",
            "positive": question,
            "negative": "Aren't you in Ohio?",
        }
    )


def test_nbest_refuses_to_resume_lists_made_with_another_lm_decoding_or_question(capsys, tmp_path):
    from helpers_generation import build_tiny_lm

    lm, other_lm = build_tiny_lm(tmp_path / "lm"), build_tiny_lm(tmp_path / "lm2", seed=1)
    stim = tmp_path / "stim.jsonl"
    stim.write_text(_stimulus(1) + "\n" + _stimulus(2, "Do you live in Ohio?") + "\n")
    out = tmp_path / "run"
    args = ["nbest", "--out", str(out), "--stimuli", str(stim), "--generate-only", "--no-progress"]
    args += ["--settings", "beam2,diverse2", "--lm", str(lm), "--max-new-tokens", "3"]
    code, _, err = _run(capsys, *args)
    assert code == 0, err
    stored = (out / "nbest-beam2.jsonl").read_text()
    # the same folder again with a longer reply, another LM or another diversity penalty: the stored lists
    # were made otherwise, and a resumed run would report them as these
    code, _, err = _run(capsys, *args, "--max-new-tokens", "4")
    assert code == 2 and "beam2: the lists stored in" in err and "max_new_tokens 3 -> 4" in err
    code, _, err = _run(capsys, *args[:-3], str(other_lm), "--max-new-tokens", "3")
    assert code == 2 and f"lm {lm} -> lm {other_lm}" in err
    code, _, err = _run(capsys, *args, "--diversity-penalty", "0")
    assert code == 2 and "diverse2: " in err and "diversity_penalty 0.5 -> 0.0" in err
    assert (out / "nbest-beam2.jsonl").read_text() == stored
    # what does not shape a setting's lists is no reason to refuse it; the same command resumes
    code, _, err = _run(capsys, *args, "--settings", "beam2", "--diversity-penalty", "0")
    assert code == 0, err
    code, _, err = _run(capsys, *args)
    assert code == 0, err
    # stimuli built again, one id now another question: its stored list answers the old one
    stim.write_text(_stimulus(1, "Are you in Texas?") + "\n" + _stimulus(2, "Do you live in Ohio?") + "\n")
    code, _, err = _run(capsys, *args)
    assert code == 2 and "stimulus entq:1 is not the one of that id" in err and "'Are you in Texas?'" in err
    assert (out / "nbest-beam2.jsonl").read_text() == stored


def test_nbest_reads_its_settings_before_making_the_output_folder(capsys, tmp_path):
    stim = tmp_path / "stim.jsonl"
    stim.write_text(_stimulus(1) + "\n")
    out = tmp_path / "run"
    code, _, err = _run(capsys, "nbest", "--out", str(out), "--stimuli", str(stim), "--settings", "beem5")
    assert code == 2 and "unknown decoding strategy 'beem'" in err
    assert not out.exists()


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (",", "--settings: no decoding setting in ','"),
        ("beam2,beam2", "--settings: beam2 is beam2 again"),
        ("nucleus2,sample2", "--settings: sample2 is nucleus2 again"),
    ],
)
def test_nbest_refuses_no_setting_or_one_setting_twice(capsys, tmp_path, settings, message):
    # no setting wrote an empty table with exit 0; one twice wrote its rows twice in results.json
    stim = tmp_path / "stim.jsonl"
    stim.write_text(_stimulus(1) + "\n")
    out = tmp_path / "run"
    code, _, err = _run(capsys, "nbest", "--out", str(out), "--stimuli", str(stim), "--settings", settings)
    assert code == 2 and message in err and "Traceback" not in err
    assert not out.exists()


def test_nbest_refuses_an_empty_stimuli_file_or_a_stimulus_id_given_twice(capsys, tmp_path):
    # an empty file said 'every pair was skipped', naming no file; two stimuli of one id were stored, resumed
    # and judged as one (--rejudge asked the second's replies the first's question)
    stim = tmp_path / "stim.jsonl"
    stim.write_text("")
    out = tmp_path / "run"
    args = ["nbest", "--out", str(out), "--stimuli", str(stim), "--generate-only"]
    code, _, err = _run(capsys, *args)
    assert code == 2 and f"{stim}: no stimuli: the file is empty" in err
    stim.write_text(_stimulus(1) + "\n" + _stimulus(2) + "\n" + _stimulus(1, "Do you live in Ohio?") + "\n")
    code, _, err = _run(capsys, *args)
    assert code == 2 and f"{stim}, line 3: id: 'entq:1' is the id of line 1 too" in err
    assert not out.exists()


def _collection(tmp_path, labelled: bool = True):
    """Four contexts and two generators' replies to each, labelled (c1 and c3 contradictory) or not."""
    from dialcheck.collection import CollectedReply, CollectionContext, write_records
    from dialcheck.schema import Turn

    t = (Turn("A", "I am vegan."), Turn("B", "How was dinner?"))
    contexts = [CollectionContext(f"c{i}", t, 1, "How was dinner?") for i in range(4)]
    replies = [
        CollectedReply(f"c{i}/{g}", f"c{i}", g, (*t, Turn("A", f"steak {i}")), label=(i % 2 == 1) if labelled else None)
        for i in range(4)
        for g in "gh"
    ]
    write_records(tmp_path / "ctx.jsonl", contexts)
    write_records(tmp_path / "replies.jsonl", replies)
    return tmp_path / "ctx.jsonl", tmp_path / "replies.jsonl"


@pytest.mark.parametrize(
    "generators",
    [
        ["--generator", "g=SmolLM2-135M-Instruct:greedy", "--generator", "g=SmolLM2-135M-Instruct:nucleus1"],
        ["--generator", "g=SmolLM2-135M-Instruct:greedy", "--endpoint", "g=http://localhost:9/v1,m"],
    ],
)
def test_collect_responses_refuses_two_generators_of_one_name_before_loading_any(capsys, tmp_path, generators):
    # both replied under one id, CONTEXT/g: the second generator's replies replaced the first's and were written twice
    ctx, _ = _collection(tmp_path)
    out = tmp_path / "out.jsonl"
    code, _, err = _run(capsys, "collect", "responses", "--contexts", str(ctx), *generators, "--out", str(out))
    assert code == 2 and "the name 'g' is given 2 times" in err and not out.exists()


def test_collect_responses_library_refuses_two_generators_of_one_name():
    from dialcheck.collection import GeneratorSpec, collect_responses

    with pytest.raises(ValueError, match="'g' is used twice"):
        collect_responses([], [GeneratorSpec("g", None, "greedy"), GeneratorSpec("g", None, "nucleus1")])


def test_collect_aggregate_refuses_labels_that_name_no_reply(capsys, tmp_path):
    # an annotation platform's export names its own rows: every label was dropped and an empty file written, exit 0
    _, replies = _collection(tmp_path, labelled=False)
    for ann in ("a1", "a2", "a3"):
        (tmp_path / f"{ann}.csv").write_text("item_id,label\n" + "".join(f"row{i},1\n" for i in range(8)))
    labels = [str(tmp_path / f"{a}.csv") for a in ("a1", "a2", "a3")]
    out = tmp_path / "labelled.jsonl"
    argv = ["collect", "aggregate", "--labels", *labels, "--replies", str(replies), "--out", str(out)]
    code, _, err = _run(capsys, *argv)
    assert code == 2 and "no labelled item is a reply of" in err and "'row0'" in err and "'c0/g'" in err
    assert not out.exists()
    # some strays beside the replies' ids: labelled as before, the strays counted and named
    for ann in ("a1", "a2", "a3"):
        (tmp_path / f"{ann}.csv").write_text("item_id,label\nc0/g,1\nc0/h,0\nstray,1\n")
    code, stdout, err = _run(capsys, *argv)
    assert code == 0, err
    assert "1 labelled item(s) are no reply of" in err and "'stray'" in err
    assert json.loads(stdout)["written"] == 2 and json.loads(stdout)["unmatched_items"] == 1


def test_collect_aggregate_refuses_labels_of_which_no_item_has_enough(capsys, tmp_path):
    # one annotator's file (or --min-annotators above the annotators) discarded every item: an empty file, exit 0
    _, replies = _collection(tmp_path, labelled=False)
    (tmp_path / "a1.csv").write_text("item_id,label\nc0/g,1\nc0/h,0\n")
    out = tmp_path / "labelled.jsonl"
    argv = ["collect", "aggregate", "--labels", str(tmp_path / "a1.csv"), "--replies", str(replies), "--out", str(out)]
    code, stdout, err = _run(capsys, *argv)
    assert code == 2 and "no item has the 3 labels --min-annotators asks for (the most any has: 1" in err
    assert not out.exists() and stdout == ""
    code, stdout, err = _run(capsys, *argv, "--min-annotators", "1", "--min-contradictory", "1")
    assert code == 0 and json.loads(stdout)["written"] == 2, err


def test_collect_quiz_refuses_answers_to_no_gold_question_and_lists_an_annotator_who_answered_none(capsys, tmp_path):
    # answers naming no quiz question printed '0 of 0 annotators passed' with exit 0; an annotator whose answers
    # were all to other items was left out of the scores instead of failing
    gold, answers = tmp_path / "gold.csv", tmp_path / "answers.csv"
    gold.write_text("item_id,label\nq1,1\nq2,0\n")
    answers.write_text("item_id,annotator,label\nQ1,x,1\nQ2,x,0\n")
    code, stdout, err = _run(capsys, "collect", "quiz", "--gold", str(gold), "--answers", str(answers))
    assert code == 2 and "no answer is to a question of" in err and "'Q1'" in err and "'q1'" in err
    answers.write_text("item_id,annotator,label\nq1,x,1\nq2,x,0\nQ1,y,1\n")
    code, stdout, err = _run(capsys, "collect", "quiz", "--gold", str(gold), "--answers", str(answers))
    rows = [json.loads(x) for x in stdout.splitlines()]
    assert code == 0 and [(r["annotator"], r["correct"], r["passed"]) for r in rows] == [
        ("x", 2, True),
        ("y", 0, False),
    ]
    assert "1 of 2 annotators passed" in err


def test_collect_logo_and_analyse_refuse_replies_without_labels(capsys, tmp_path):
    # collect responses' own output (not yet labelled): logo printed no row and analyse empty tests, exit 0
    ctx, replies = _collection(tmp_path, labelled=False)
    code, stdout, err = _run(capsys, "collect", "logo", "--replies", str(replies), "--no-progress")
    assert code == 2 and "none of its 8 replies is labelled" in err and stdout == ""
    code, stdout, err = _run(capsys, "collect", "analyse", "--contexts", str(ctx), "--replies", str(replies))
    assert code == 2 and "none of its 8 replies is labelled" in err and stdout == ""


def test_collect_logo_needs_two_generators_and_analyse_contexts_of_the_replies(capsys, tmp_path):
    from dialcheck.collection import CollectionContext, read_records, write_records

    ctx, replies = _collection(tmp_path)
    one = tmp_path / "one.jsonl"
    one.write_text("".join(line + "\n" for line in replies.read_text().splitlines() if '"generator": "g"' in line))
    code, _, err = _run(capsys, "collect", "logo", "--replies", str(one), "--no-progress")
    assert code == 2 and "needs labelled replies of two generators or more, got 'g' only" in err
    other = tmp_path / "other.jsonl"  # the contexts of another collection
    write_records(
        other, [CollectionContext("z" + c.id, c.turns, 1, c.question) for c in read_records(ctx, CollectionContext)]
    )
    code, stdout, err = _run(capsys, "collect", "analyse", "--contexts", str(other), "--replies", str(replies))
    assert code == 2 and "no context of" in err and "'zc0'" in err and stdout == ""
    code, stdout, err = _run(capsys, "collect", "analyse", "--contexts", str(ctx), "--replies", str(replies))
    row = json.loads(stdout.splitlines()[0])
    assert code == 0 and row["n_with"] + row["n_without"] == 4


def test_rerank_refuses_a_generator_score_that_is_nan(capsys, tmp_path, tiny_detector_dir):
    # every comparison with NaN is false: a candidate scored NaN sorted ahead of one scored 1.0 and was chosen
    from dialcheck.errors import InputError
    from dialcheck.generation.rerank import rerank

    context = ["I have two dogs.", "What are their names?"]
    with pytest.raises(InputError, match=r"candidates\[0\]\.score: expected a number, got NaN"):
        rerank(
            context, [{"text": "Rex.", "score": float("nan")}, {"text": "Fido.", "score": 1.0}], str(tiny_detector_dir)
        )
    with pytest.raises(InputError, match=r"scores\[0\]\[1\]: expected a number, got NaN"):
        rerank(context, ["Rex.", "Fido."], str(tiny_detector_dir), scores=[1.0, float("nan")])
    records = tmp_path / "r.jsonl"
    records.write_text(
        '{"turns": ["I have two dogs.", "What are their names?"], "candidates": [["Rex.", NaN], ["Fido.", 1.0]]}\n'
    )
    code, out, err = _run(capsys, "rerank", str(records), "--model", str(tiny_detector_dir), "--json")
    assert code == 2 and f"{records}, line 1: candidates[0][1]: expected a number, got NaN" in err and out == ""


def test_rerank_says_why_nothing_was_chosen(capsys, tmp_path, tiny_detector_dir):
    # every candidate set aside (empty or a repeat of a turn) was reported as "every candidate is contradictory"
    records = tmp_path / "r.jsonl"
    records.write_text(
        '{"id": "a", "turns": ["I have two dogs.", "What are their names?"], "candidates": ["", "I have two dogs."]}\n'
        '{"id": "b", "turns": ["I have two dogs.", "What are their names?"], "candidates": ["I never had a dog."]}\n'
    )
    code, out, err = _run(
        capsys, "rerank", str(records), "--model", str(tiny_detector_dir), "--tau", "0", "--fallback", "none"
    )
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("a: nothing chosen: every candidate was set aside (empty, a repeat of a turn")
    assert any(x.startswith("b: nothing chosen: every candidate is contradictory") for x in lines)


@pytest.mark.parametrize("where", ["file", "file/model"])
def test_train_refuses_an_output_folder_it_cannot_make_before_any_work(capsys, tmp_path, tiny_base, where):
    # under a file, the run built its data and trained until its first checkpoint, then failed
    (tmp_path / "file").write_text("not a folder\n")
    out = tmp_path / where
    argv = ["train", "--out", str(out), "--base", str(tiny_base), "--lora", "4", "--limit", "10", "--epochs", "1"]
    code, _, err = _run(capsys, *argv, "--no-progress", "--data-dir", str(tmp_path / "no-data"))
    assert code == 2 and "--out: " in err and "file" in err
    assert "data directory" not in err  # refused before the corpus is looked for


def _calibration_file(tmp_path):
    """Two labelled dialogues of one's own (a contradiction with its evidence, a consistent one) to calibrate on."""
    calibration = tmp_path / "mine.jsonl"
    calibration.write_text(
        json.dumps(
            {"turns": ["I have two dogs.", "Nice!", "I never had dogs."], "contradiction": True, "evidence": [0]}
        )
        + "\n"
        + json.dumps({"turns": ["I live in Paris.", "Cool.", "Paris is lovely."], "contradiction": False})
        + "\n"
    )
    return calibration


def _damaged_copy(folder, to, cut: bool):
    """A copy of a detector folder whose weights file was cut short (an interrupted copy) or is not safetensors."""
    import shutil

    shutil.copytree(folder, to)
    weights = to / "weights.safetensors"
    data = weights.read_bytes()
    weights.write_bytes(data[: len(data) // 2] if cut else b"xx")
    return to


@pytest.mark.parametrize("cut", [True, False])
def test_a_damaged_weights_file_is_named_by_train_init_and_models_save(capsys, tmp_path, tiny_detector_dir, cut):
    # both printed the safetensors library's traceback (train --init once the training data was built)
    bad = _damaged_copy(tiny_detector_dir, tmp_path / "bad", cut)
    argv = ["train", "--init", str(bad), "--out", str(tmp_path / "out"), "--limit", "10", "--epochs", "1"]
    code, _, err = _run(capsys, *argv, "--no-progress", "--data-dir", str(tmp_path / "no-data"))
    assert code == 2 and "Traceback" not in err
    assert f"{bad / 'weights.safetensors'}: not a readable safetensors file" in err and "damaged or incomplete" in err
    assert not (tmp_path / "out").exists()
    code, _, err = _run(capsys, "models", str(bad), "--save", str(tmp_path / "derived"), "--tau", "0.3")
    assert code == 2 and "Traceback" not in err and "not a readable safetensors file" in err
    assert not (tmp_path / "derived").exists()


def test_models_save_keeps_history_frames_for_a_four_category_model(capsys, tmp_path, tiny_base):
    # --history is listed under "deriving a model" but --save left it out: "nothing to change", exit 2
    from dialcheck.detectors import FlatCategoryDetector, load_detector
    from dialcheck.detectors.modeling import build_model

    det = FlatCategoryDetector(base=str(tiny_base), max_length=48, tau=0.5)
    det.attach(*build_model(det.config))
    src = det.save(tmp_path / "flat")
    code, _, err = _run(capsys, "models", str(src), "--save", str(tmp_path / "frames"), "--history", "frames")
    assert code == 0, err
    assert load_detector(tmp_path / "frames").history == "frames" and "history = frames" in err
    code, _, err = _run(
        capsys, "models", str(src), "--save", str(tmp_path / "both"), "--history", "frames", "--tau", "0.4"
    )
    assert code == 0, err
    assert load_detector(tmp_path / "both").history == "frames"


@pytest.mark.parametrize(
    "options", [["--tau", "0.3"], ["--slots", "settle"], ["--recalibrate"], ["--recheck-floor", "0.2"]]
)
def test_models_refuses_options_that_derive_a_model_without_save(capsys, tiny_detector_dir, options):
    # they were dropped without a word: the card printed with the model's own tau, exit 0
    code, out, err = _run(capsys, "models", str(tiny_detector_dir), *options)
    assert code == 2 and f"{options[0]}: options that derive a model, read only with --save OUT" in err and out == ""
    code, out, err = _run(capsys, "models", *options)
    assert code == 2 and "dialcheck models NAME --save OUT" in err


def test_collect_contexts_names_standard_input_as_every_command_does(capsys, tmp_path, monkeypatch):
    # "-, line 2: ..." and "-: 2 of 2 dialogues are bad" beside the reader's "<stdin>, line 1: ..."; refused before
    # any language model is loaded
    same = json.dumps({"id": "d1", "turns": ["i have two dogs .", "what are their names ?"]})
    feed_stdin(monkeypatch, f"{same}\n{same}\n")
    argv = ["collect", "contexts", "--input", "-", "--lm", str(tmp_path / "no-lm"), "--top-k", "5"]
    code, _, err = _run(capsys, *argv, "--out", str(tmp_path / "ctx.jsonl"), "--no-progress")
    assert code == 2 and err.startswith("dialcheck: error: <stdin>, line 2: "), err
    feed_stdin(monkeypatch, b"not json\n[]\n")
    code, _, err = _run(capsys, *argv, "--out", str(tmp_path / "ctx.jsonl"), "--no-progress")
    assert code == 2 and "<stdin>: 2 of 2 dialogues are bad" in err and "-:" not in err, err


def test_collect_contexts_skips_and_names_bad_records_of_your_dialogues(capsys, tmp_path):
    # the first bad record stopped the whole batch, and only it was named (the next surfaced on the next try)
    from helpers_generation import build_tiny_lm

    lm = build_tiny_lm(tmp_path / "lm")
    logs = tmp_path / "logs.jsonl"
    good = json.dumps({"id": "d1", "turns": ["i have two dogs .", "what are their names ?"]})
    logs.write_text(good + '\n{"id": "d2", "turns": []}\nnot json\n' + good.replace("d1", "d3") + "\n")
    out = tmp_path / "ctx.jsonl"
    argv = ["collect", "contexts", "--input", str(logs), "--lm", str(lm), "--top-k", "5", "--distances", "1"]
    code, _, err = _run(capsys, *argv, "--out", str(out), "--no-progress")
    assert code == 0, err
    assert f"skipped: {logs}, line 2: turns: the dialogue is empty" in err
    assert f"skipped: {logs}, line 3: invalid JSON" in err and "the other 2 are read" in err
    assert sorted(json.loads(x)["source"] for x in out.read_text().splitlines()) == ["d1", "d3"]
    logs.write_text('{"id": "d2", "turns": []}\nnot json\n')  # no good record: refused, each bad one named
    code, _, err = _run(capsys, *argv, "--out", str(tmp_path / "none.jsonl"), "--no-progress")
    assert code == 2 and "line 2: invalid JSON" in err and "2 of 2 dialogues are bad" in err
    assert not (tmp_path / "none.jsonl").exists()


def test_collect_aggregate_and_quiz_name_every_bad_label_before_refusing(capsys, tmp_path):
    # only the first bad row was named: a blank cell and a typo three lines on took two tries to find
    _, replies = _collection(tmp_path, labelled=False)
    rows = ["c0/g,1", "c0/h,", "c1/g,0", "c1/h,maybe", "c1/h,0", "c2/g,1"]
    (tmp_path / "a1.csv").write_text("item_id,label\n" + "\n".join(rows) + "\n")
    (tmp_path / "a2.csv").write_text("item_id,label\nc0/g,1\nc0/h,1\n")
    labels = [str(tmp_path / "a1.csv"), str(tmp_path / "a2.csv")]
    out = tmp_path / "labelled.jsonl"
    argv = ["collect", "aggregate", "--labels", *labels, "--replies", str(replies), "--out", str(out)]
    code, _, err = _run(capsys, *argv, "--min-annotators", "2")
    assert code == 2 and not out.exists()
    assert (
        f"{labels[0]}, line 3: label: cannot read ''" in err
        and f"{labels[0]}, line 5: label: cannot read 'maybe'" in err
    )
    assert "2 of 8 labels are bad (each named above); nothing was aggregated" in err
    gold = tmp_path / "gold.csv"
    gold.write_text("item_id,label\nc0/g,1\nc0/h,\n")
    code, _, err = _run(capsys, "collect", "quiz", "--gold", str(gold), "--answers", labels[0])
    assert code == 2 and f"{gold}, line 3: label: cannot read ''" in err and f"{labels[0]}, line 5" in err


@pytest.mark.parametrize("model", ["missing", "damaged"])
def test_rerank_loads_its_model_before_generating_candidates(capsys, monkeypatch, tmp_path, tiny_detector_dir, model):
    # the candidates of every record were generated first, then the run stopped on the --model it could not load
    from dialcheck.cli import rerank

    def generator(args):
        raise AssertionError("candidates generated before the model was loaded")

    monkeypatch.setattr(rerank, "_generator", generator)
    folder = tmp_path / "nope" if model == "missing" else _damaged_copy(tiny_detector_dir, tmp_path / "bad", True)
    records = tmp_path / "r.jsonl"
    records.write_text('{"turns": ["I have two dogs.", "What are their names?"]}\n')
    code, _, err = _run(capsys, "rerank", str(records), "--generate", "beam3", "--model", str(folder))
    assert code == 2 and "Traceback" not in err and str(folder) in err


def test_nbest_rejudge_with_nothing_stored_is_refused_before_any_stimulus_is_built(capsys, tmp_path):
    # it built (or copied) the stimuli into a new folder and loaded the classifier, then found no list to judge
    stim = tmp_path / "stim.jsonl"
    stim.write_text(_stimulus(1) + "\n")
    out = tmp_path / "run"
    argv = ["nbest", "--out", str(out), "--stimuli", str(stim), "--rejudge", "--settings", "beam4"]
    code, _, err = _run(capsys, *argv, "--classifier", str(tmp_path / "no-classifier"))
    assert code == 2 and f"--rejudge: {out} holds no n-best list for beam4" in err
    assert not out.exists()


def test_train_reads_calibrate_on_before_building_the_training_data(capsys, tmp_path, tiny_base):
    # a typo in --calibrate-on (or a file of one label) was found after the data was built: 40 s with perturb
    one_label = tmp_path / "neg.jsonl"
    one_label.write_text(json.dumps({"turns": ["I live in Rome.", "Nice.", "Rome is lovely."], "contradiction": False}))
    argv = ["train", "--out", str(tmp_path / "out"), "--base", str(tiny_base), "--data-dir", str(tmp_path / "no-data")]
    for path, message in [(tmp_path / "nope.jsonl", "no such file"), (one_label, "needs dialogues of both labels")]:
        code, _, err = _run(capsys, *argv, "--calibrate-on", str(path), "--no-progress")
        assert code == 2 and f"{path}: " in err and message in err and "data directory" not in err
    code, _, err = _run(capsys, *argv, "--dialogues", str(tmp_path / "nope.jsonl"), "--no-progress")
    assert code == 2 and "no such file" in err and "data directory" not in err


def test_models_save_stopped_while_recalibrating_leaves_no_model_behind(
    capsys, monkeypatch, tmp_path, tiny_detector_dir
):
    # OUT held NAME's weights and thresholds under a record saying --recalibrate, and loaded as the derived model
    from dialcheck.training import recalibrate

    calibration = _calibration_file(tmp_path)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    out = tmp_path / "derived"
    argv = ["models", str(tiny_detector_dir), "--save", str(out), "--recalibrate", "--calibrate-on", str(calibration)]
    with monkeypatch.context() as m:
        m.setattr(recalibrate, "recalibrate_config", interrupted)
        code, _, err = _run(capsys, *argv, "--no-progress")
    assert code == 130 and not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["mine.jsonl"]
    code, _, err = _run(capsys, *argv, "--no-progress")  # the same command again makes it whole
    assert code == 0, err
    assert json.loads((out / "dialcheck.json").read_text())["training"]["derived_from"]["recalibrated"]["on"]


def test_models_save_titles_the_card_with_the_folder_it_names(capsys, tmp_path, tiny_detector_dir):
    code, _, err = _run(capsys, "models", str(tiny_detector_dir), "--save", str(tmp_path / "mymodel"), "--tau", "0.7")
    assert code == 0, err
    assert (tmp_path / "mymodel" / "MODEL_CARD.md").read_text().startswith("# mymodel\n")


def test_train_checks_the_teacher_scores_file_it_will_write_before_scoring(capsys, tmp_path, tiny_detector_dir):
    # it was written once every training pair was scored by the teacher (an hour with MPNet), then failed
    argv = ["train", "--out", str(tmp_path / "out"), "--teacher", str(tiny_detector_dir), "--distill-alpha", "0.5"]
    argv += ["--data-dir", str(tmp_path / "no-data"), "--no-progress"]
    (tmp_path / "file").write_text("")
    for path in (tmp_path / "file" / "scores.npz", tmp_path):
        code, _, err = _run(capsys, *argv, "--save-teacher-scores", str(path))
        assert code == 2 and "--save-teacher-scores: " in err and "data directory" not in err


@pytest.mark.parametrize(
    "argv",
    [
        ["export", "--replies", "{empty}", "--out", "{tmp}/tasks.csv"],
        [
            "responses",
            "--contexts",
            "{empty}",
            "--out",
            "{tmp}/r.jsonl",
            "--generator",
            "g=SmolLM2-135M-Instruct:greedy",
        ],
        ["autolabel", "--replies", "{empty}", "--out", "{tmp}/a.jsonl"],
        ["released", "{empty}", "--out", "{tmp}/l.jsonl"],
    ],
)
def test_collect_steps_refuse_an_empty_input_file(capsys, tmp_path, argv):
    # each wrote an empty output (a header-only CSV, no reply, no label) with exit 0
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    argv = [a.format(empty=empty, tmp=tmp_path) for a in argv]
    code, _, err = _run(capsys, "collect", *argv)
    assert code == 2 and f"{empty}: no records: the file is empty" in err and "Traceback" not in err
    assert [p.name for p in tmp_path.iterdir()] == ["empty.jsonl"]


def test_an_output_under_a_file_says_the_file_is_not_a_folder(capsys, tmp_path):
    # 'the folder x.jsonl does not exist' of a file that does exist
    rel = tmp_path / "rel.jsonl"
    rel.write_text(
        json.dumps(
            {
                "utterances": ["I am vegan.", "How was dinner?", "I had steak."],
                "speakers": ["A", "B", "A"],
                "annotation_target_pair": [0, 2],
                "rgm_name": "g",
                "contradictory_label_count": 3,
            }
        )
        + "\n"
    )
    code, _, err = _run(capsys, "collect", "released", str(rel), "--out", str(rel / "sub" / "out.jsonl"))
    assert code == 2 and f"--out: {rel} is a file, not a folder" in err and "does not exist" not in err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--feature", ","], "--feature: no feature to test"),
        (["--feature", "contains_how", "--regex", "contains_how=how"], "'contains_how' is named twice"),
        (["--regex", "=how"], "--regex: the feature needs a name before '='"),
    ],
)
def test_collect_analyse_refuses_no_feature_a_nameless_one_or_one_name_twice(capsys, tmp_path, extra, message):
    # no feature printed nothing with exit 0; a nameless or twice-named one printed rows no reader could tell apart
    ctx, replies = _collection(tmp_path)
    code, stdout, err = _run(capsys, "collect", "analyse", "--contexts", str(ctx), "--replies", str(replies), *extra)
    assert code == 2 and message in err and stdout == ""


@pytest.mark.parametrize(
    ("distances", "message"),
    [
        ("0", "--distances: each must be at least 1"),
        ("-1,3", "--distances: each must be at least 1"),
        (",", "--distances: no number in ','"),
        ("1,3,1", "--distances: 1 is given twice"),
    ],
)
def test_collect_contexts_refuses_distances_below_one_none_or_one_twice(capsys, tmp_path, distances, message):
    # 0, -1 and ',' said 'no context ends in a question at the requested distances'; 1,1 wrote each context twice
    dialogs = tmp_path / "d.jsonl"
    dialogs.write_text(
        json.dumps({"turns": ["I am vegan.", "Nice. What did you eat?", "Salad.", "How was it?"]}) + "\n"
    )
    out = tmp_path / "ctx.jsonl"
    argv = ["collect", "contexts", "--input", str(dialogs), f"--distances={distances}", "--out", str(out)]
    code, _, err = _run(capsys, *argv, "--lm", str(tmp_path / "no-lm"), "--no-progress")
    assert code == 2 and message in err and "no-lm" not in err
    assert not out.exists()


def test_candidate_contexts_of_a_distance_given_twice_are_made_once():
    from dialcheck.collection import candidate_contexts
    from dialcheck.schema import Dialogue

    d = Dialogue.from_texts(["I have a dog.", "What breed is it?", "A poodle.", "Is it old?"])
    ids = [c.id for c in candidate_contexts(d, (1, 3, 1))]
    assert ids == [c.id for c in candidate_contexts(d, (1, 3))] and len(set(ids)) == len(ids) == 3


@pytest.mark.parametrize(
    "change, message",
    [
        ({"thresholds": {"tau": "high", "eta_e": 0.5}}, "thresholds.tau: expected a number in [0, 1], got string"),
        ({"detector": "decode.bogus.v9"}, "unknown detector type 'decode.bogus.v9'"),
    ],
)
def test_models_refuses_a_folder_whose_config_no_command_can_load(capsys, tmp_path, tiny_detector_dir, change, message):
    # models FOLDER printed its card (and --json its type), exit 0, for a folder check and evaluate refuse
    import shutil

    folder = tmp_path / "broken"
    shutil.copytree(tiny_detector_dir, folder)
    cfg = json.loads((folder / "dialcheck.json").read_text())
    (folder / "dialcheck.json").write_text(json.dumps({**cfg, **change}))
    for extra in ([], ["--json"]):
        code, out, err = _run(capsys, "models", str(folder), *extra)
        assert code == 2 and message in err and f"{folder / 'dialcheck.json'}" in err and out == ""


def test_collect_refuses_two_records_of_one_id(capsys, tmp_path):
    # two dialogues of one id gave two contexts of one id; two contexts (or replies) of one id, two replies of one
    # id that annotators, aggregate and LOGO cannot tell apart; all with exit 0
    dialogs = tmp_path / "d.jsonl"
    turns = ["I am vegan.", "Nice. What did you eat?", "Salad.", "How was it?"]
    dialogs.write_text("".join(json.dumps({"id": "a", "turns": turns}) + "\n" for _ in range(2)))
    argv = ["collect", "contexts", "--input", str(dialogs), "--out", str(tmp_path / "ctx.jsonl"), "--no-progress"]
    code, _, err = _run(capsys, *argv, "--lm", str(tmp_path / "no-lm"))
    assert code == 2 and f"{dialogs}, line 2: id: 'a' is the id of line 1 too" in err and "no-lm" not in err
    # the id field as the record gave it, and a JSON list's dialogues counted from 1 (it said "id: ... dialogue 0")
    dialogs.write_text(json.dumps([{"dialogue_id": "a", "turns": turns}] * 2, indent=2))
    code, _, err = _run(capsys, *argv, "--lm", str(tmp_path / "no-lm"))
    assert code == 2 and f"{dialogs}: dialogue 2: dialogue_id: 'a' is the id of dialogue 1 too" in err, err
    ctx, replies = _collection(tmp_path, labelled=False)
    for path, step in ((ctx, "responses"), (replies, "export")):
        first = path.read_text().splitlines()[0]
        path.write_text(path.read_text() + first + "\n")
        n = len(path.read_text().splitlines())
        argv = ["collect", step, "--out", str(tmp_path / "out.csv")]
        argv += (
            ["--contexts", str(path), "--generator", "g=nope:greedy"]
            if step == "responses"
            else ["--replies", str(path)]
        )
        code, _, err = _run(capsys, *argv)
        assert code == 2 and f"{path}, line {n}: id: " in err and "is the id of line 1 too" in err, err
        assert not (tmp_path / "out.csv").exists()


def test_collect_released_refuses_a_reply_id_given_twice(capsys, tmp_path):
    rel = tmp_path / "rel.jsonl"
    row = {"utterances": ["I am vegan.", "How was dinner?", "I had steak."], "speakers": ["A", "B", "A"]}
    row |= {"annotation_target_pair": [0, 2], "rgm_name": "g", "contradictory_label_count": 3, "id": "r1"}
    rel.write_text(json.dumps(row) + "\n" + json.dumps({**row, "rgm_name": "h"}) + "\n")
    code, _, err = _run(capsys, "collect", "released", str(rel))
    assert code == 2 and f"{rel}, line 2: id: 'r1' is the id of line 1 too" in err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--settings", "beam2,nucleus2", "--endpoint-model", "m"], "--settings beam2: an OpenAI-compatible endpoint"),
        (["--settings", "nucleus2"], "--endpoint needs --endpoint-model"),
    ],
)
def test_nbest_refuses_an_endpoint_it_cannot_use_before_making_the_folder(capsys, tmp_path, extra, message):
    # refused only at the first request: the folder, its stimuli, its record and an empty list made, the classifier
    # loaded
    stim = tmp_path / "stim.jsonl"
    stim.write_text(_stimulus(1) + "\n")
    out = tmp_path / "run"
    argv = ["nbest", "--out", str(out), "--stimuli", str(stim), "--endpoint", "http://127.0.0.1:9/v1", *extra]
    code, _, err = _run(capsys, *argv, "--classifier", str(tmp_path / "no-classifier"))
    assert code == 2 and message in err and "no-classifier" not in err
    assert not out.exists()


def test_nbest_refuses_an_out_that_is_a_file_or_under_one(capsys, tmp_path):
    # "stim.jsonl: File exists" / "Not a directory" from mkdir
    stim = tmp_path / "stim.jsonl"
    stim.write_text(_stimulus(1) + "\n")
    for out, message in ((stim, "--out: is a file; nbest writes a folder"), (stim / "run", f"--out: is under {stim}")):
        code, _, err = _run(capsys, "nbest", "--out", str(out), "--stimuli", str(stim), "--settings", "beam2")
        assert code == 2 and message in err
    assert stim.read_text() == _stimulus(1) + "\n"


def test_collect_contexts_names_a_reply_speaker_no_turn_is_said_by(capsys, tmp_path):
    # 'no context ends in a question at the requested distances', though the dialogues' speakers are A and B
    dialogs = tmp_path / "d.jsonl"
    dialogs.write_text(
        json.dumps({"turns": ["I am vegan.", "Nice. What did you eat?", "Salad.", "How was it?"]}) + "\n"
    )
    argv = ["collect", "contexts", "--input", str(dialogs), "--out", str(tmp_path / "ctx.jsonl"), "--no-progress"]
    code, _, err = _run(capsys, *argv, "--reply-speaker", "bot", "--lm", str(tmp_path / "no-lm"))
    assert (
        code == 2 and "--reply-speaker bot: no turn of the dialogues is said by 'bot' (their speakers: 'A', 'B')" in err
    )


def test_models_save_under_a_file_names_the_file(capsys, tmp_path, tiny_detector_dir):
    # it said 'x.jsonl: File exists' (mkdir's words) for --save x.jsonl/derived
    f = tmp_path / "x.jsonl"
    f.write_text("{}\n")
    for out, message in ((f / "derived", f"--save: {f} is a file, so no folder can be made under it"),
                         (f, "--save: is a file; give a folder")):  # fmt: skip
        code, _, err = _run(capsys, "models", str(tiny_detector_dir), "--save", str(out), "--tau", "0.3")
        assert code == 2 and message in err and "File exists" not in err, err
    assert f.read_text() == "{}\n"


def test_nbest_resumed_inside_a_chunk_writes_the_sampled_lists_of_an_uninterrupted_run(capsys, tmp_path):
    # a run stopped while writing a chunk's lists (five stored, the sixth torn) resumed by chunking and seeding
    # the stimuli left afresh: the sampled lists after the cut were not those of an uninterrupted run
    from helpers_generation import build_tiny_lm

    lm = build_tiny_lm(tmp_path / "lm")
    stim = tmp_path / "stim.jsonl"
    stim.write_text("".join(_stimulus(n, "Are you in Ohio?" + " What?" * (n % 3)) + "\n" for n in range(20)))
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    args = ["nbest", "--stimuli", str(stim), "--generate-only", "--no-progress", "--settings", "nucleus3,topk2"]
    args += ["--lm", str(lm), "--max-new-tokens", "3", "--batch-size", "3", "--threads", "1"]
    code, _, err = _run(capsys, *args, "--out", str(whole))
    assert code == 0, err
    code, _, err = _run(capsys, *args, "--out", str(cut))
    assert code == 0, err
    for name in ("nbest-nucleus3.jsonl", "nbest-topk2.jsonl"):
        lines = (cut / name).read_text().splitlines(keepends=True)
        (cut / name).write_text("".join(lines[:5]) + lines[5][:30])
    code, _, err = _run(capsys, *args, "--out", str(cut))
    assert code == 0, err
    for name in ("nbest-nucleus3.jsonl", "nbest-topk2.jsonl"):
        assert (cut / name).read_bytes() == (whole / name).read_bytes()


def test_train_recalibrating_on_your_own_dialogues_reads_no_decode_data(capsys, tmp_path, tiny_detector_dir):
    # --init M --epochs 0 --calibrate-on FILE built the whole DECODE training set (about 10 s) it never used, and
    # logged "training data" with DECODE's validation counts, not FILE's
    calibration = _calibration_file(tmp_path)
    out = tmp_path / "out"
    argv = ["train", "--init", str(tiny_detector_dir), "--epochs", "0", "--out", str(out), "--no-progress"]
    argv += ["--data-dir", str(tmp_path / "no-decode-here"), "--calibrate-on", str(calibration)]
    code, _, err = _run(capsys, *argv)
    assert code == 0, err
    counts = {"calibration_dialogues": 2, "calibration_contradictions": 1}
    assert f"calibration data ({calibration}; no training at --epochs 0) {json.dumps(counts)}" in err
    assert "training data" not in err
    cfg = json.loads((out / "dialcheck.json").read_text())
    assert cfg["training"]["counts"] == counts and cfg["training"]["validation_dialogues"] == 2
    assert cfg["training"]["train_pairs"] == 0 and cfg["training"]["calibration_file"] == str(calibration)
    assert cfg["training"]["data"].startswith("none (--epochs 0)")
    assert "Calibration only: no training step" in (out / "MODEL_CARD.md").read_text()
    # training for an epoch still needs DECODE: the missing folder is named
    code, _, err = _run(capsys, *[{"0": "1", str(out): str(tmp_path / "out2")}.get(a, a) for a in argv])
    assert code == 2 and "no-decode-here" in err


def test_collect_counts_one_thing_in_the_singular(capsys, tmp_path, tiny_detector_dir):
    # "0 of 1 replies contradictory", "1 of 1 annotators passed", "none of its 1 replies is labelled"
    from dialcheck.collection import CollectedReply, write_records
    from dialcheck.schema import Turn

    t = (Turn("A", "I am vegan."), Turn("B", "How was dinner?"), Turn("A", "steak"))
    one = tmp_path / "one.jsonl"
    write_records(one, [CollectedReply("c0/g", "c0", "g", t)])
    code, _, err = _run(capsys, "collect", "logo", "--replies", str(one), "--no-progress")
    assert code == 2 and "its one reply is not labelled: label it first" in err
    out = tmp_path / "labelled.jsonl"
    argv = ["collect", "autolabel", "--replies", str(one), "--out", str(out), "--model", str(tiny_detector_dir)]
    code, _, err = _run(capsys, *argv)
    assert code == 0 and re.search(r"[01] of 1 reply contradictory", err), err
    gold, answers = tmp_path / "gold.csv", tmp_path / "answers.csv"
    gold.write_text("item_id,label\nq1,1\nq2,0\n")
    answers.write_text("item_id,annotator,label\nq1,x,1\nq2,x,0\n")
    code, _, err = _run(capsys, "collect", "quiz", "--gold", str(gold), "--answers", str(answers))
    assert code == 0 and "1 of 1 annotator passed" in err
    dialogs = tmp_path / "d.jsonl"
    dialogs.write_text(json.dumps({"id": "d1", "turns": ["i have two dogs .", "what are their names ?"]}) + "\n")
    argv = ["collect", "contexts", "--input", str(dialogs), "--lm", str(tmp_path / "no-lm"), "--top-k", "5"]
    _, _, err = _run(capsys, *argv, "--out", str(tmp_path / "ctx.jsonl"), "--no-progress")  # counted before the LM
    assert "1 candidate context from 1 dialogue (" in err
