"""Certainty and Variety on hand-computed lists, the table and plot, and the n-best experiment end to end."""

from __future__ import annotations

import importlib.util
import json
import math

import pytest

from dialcheck.analysis import certainty, markdown_table, plot_certainty_variety, summarize, variety
from dialcheck.analysis.experiment import run_nbest_experiment, summarize_folder
from dialcheck.generation import Candidate, DecodingConfig
from dialcheck.probes.echo import EchoItem


def test_certainty_and_variety_by_hand():
    # ENTQ, four replies: three confirm (two of them identical up to case and spaces), one refutes
    replies = ["Yes, I am.", "yes,  I am.", "Yes, in Raleigh.", "No, I'm not."]
    judged = ["yes", "yes", "yes", "no"]
    assert certainty(judged, "yes") == 0.75
    assert variety(replies, judged, "yes") == 0.5  # {"yes, i am.", "yes, in raleigh."} / 4
    # the same list for a CNTQ: only the refutation is correct
    assert certainty(judged, "no") == 0.25 and variety(replies, judged, "no") == 0.25
    assert variety(replies, judged, "yes", normalize=lambda s: s) == 0.75  # exact strings: three distinct


def test_pairs_of_numbers_like_figure_1():
    # Lists built by hand to give the pairs quoted for the paper's Figure 1 (1.00 / 0.93 and 0.33 / 0.20)
    # under the definitions implemented here (15-best lists).
    a = [f"Yes, I live in town {i}." for i in range(14)] + ["Yes, I live in town 0."]
    assert certainty(["yes"] * 15, "yes") == 1.0
    assert round(variety(a, ["yes"] * 15, "yes"), 2) == 0.93
    b = ["Yes.", "Yes.", "Yes, I am.", "Yes, I am.", "Sure, yes."] + ["No, I'm not."] * 10
    jb = ["yes"] * 5 + ["no"] * 10
    assert round(certainty(jb, "yes"), 2) == 0.33 and round(variety(b, jb, "yes"), 2) == 0.2


def test_bad_lists_are_refused():
    with pytest.raises(ValueError):
        certainty([], "yes")
    with pytest.raises(ValueError):
        certainty(["yes"], "maybe")
    with pytest.raises(ValueError):
        certainty(["perhaps"], "yes")
    with pytest.raises(ValueError):
        variety(["a", "b"], ["yes"], "yes")


def test_summarize_drops_lists_with_an_ambiguous_reply_and_counts_them():
    lists = [
        (["Yes.", "No."], ["yes", "no"], "yes"),  # C 0.5, V 0.5
        (["Yes.", "Yes, sure."], ["yes", "yes"], "yes"),  # C 1.0, V 1.0
        (["Yes.", "Hmm."], ["yes", "ambiguous"], "yes"),  # dropped
        ([], [], "no"),  # dropped: nothing to judge
    ]
    s = summarize(lists)
    assert s == {"inputs": 4, "kept": 2, "dropped_ambiguous": 2, "certainty": 0.75, "variety": 0.75}
    assert math.isnan(summarize([(["Hmm."], ["ambiguous"], "no")])["certainty"])


ROWS = [
    {
        "setting": f"beam{n}",
        "strategy": "beam",
        "n": n,
        "kind": k,
        "inputs": 4,
        "kept": 3,
        "dropped_ambiguous": 1,
        "certainty": c,
        "variety": c / 2,
    }
    for n, c in ((5, 0.9), (10, 0.8))
    for k in ("ENTQ", "CNTQ")
] + [
    {
        "setting": "nucleus10",
        "strategy": "nucleus",
        "n": 10,
        "kind": "ENTQ",
        "inputs": 4,
        "kept": 4,
        "dropped_ambiguous": 0,
        "certainty": 0.6,
        "variety": 0.5,
    }
]


def test_markdown_table_has_one_line_per_setting():
    lines = markdown_table(ROWS).splitlines()
    assert len(lines) == 5
    assert lines[2] == "| beam5 | 0.900 | 0.450 | 3 / 4 | 0.900 | 0.450 | 3 / 4 |"
    assert lines[4] == "| nucleus10 | 0.600 | 0.500 | 4 / 4 |  |  |  |"


def test_plot_writes_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    out = plot_certainty_variety(ROWS, tmp_path / "cv.png", title="test")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


class FixedGenerator:
    """Returns scripted replies: 'Yes ...' for questions with 'North', else a mix."""

    def __init__(self):
        self.calls = 0

    def generate(self, contexts, config, batch_size=4, **_):
        self.calls += 1
        out = []
        for d in contexts:
            q = d.last.text
            replies = ["Yes.", "Yes, I am."] if "North" in q else ["No.", "Maybe."]
            out.append([Candidate(r, -float(i)) for i, r in enumerate(replies[: config.n])])
        return out


class KeywordJudge:
    def judge(self, questions, answers):
        return ["yes" if a.startswith("Yes") else "no" if a.startswith("No") else "ambiguous" for a in answers]


def _items():
    return [
        EchoItem(
            "entq:1",
            "ENTQ",
            "I'm in North Carolina.",
            "I'm in North Carolina.",
            "Are you in North Carolina?",
            "yes",
            "Are you in North Carolina?",
            "Aren't you in North Carolina?",
        ),
        EchoItem(
            "cntq:2",
            "CNTQ",
            "I'm in North Carolina.",
            "I'm in Ohio.",
            "Aren't you in Ohio?",
            "no",
            "Are you in Ohio?",
            "Aren't you in Ohio?",
        ),
    ]


def test_experiment_writes_resumable_lists_and_summaries(tmp_path):
    gen = FixedGenerator()
    settings = [DecodingConfig.parse("beam2"), DecodingConfig.parse("beam1")]
    rows = run_nbest_experiment(_items(), gen, KeywordJudge(), settings, tmp_path, chunk=1)
    by = {(r["setting"], r["kind"]): r for r in rows}
    assert by[("beam2", "ENTQ")]["certainty"] == 1.0 and by[("beam2", "ENTQ")]["variety"] == 1.0
    assert by[("beam2", "CNTQ")]["kept"] == 0 and by[("beam2", "CNTQ")]["dropped_ambiguous"] == 1
    assert by[("beam1", "CNTQ")]["certainty"] == 1.0 and by[("beam1", "CNTQ")]["top1_correct"] == 1.0
    rec = json.loads((tmp_path / "nbest-beam2.jsonl").read_text().splitlines()[0])
    assert rec["replies"] == ["Yes.", "Yes, I am."] and rec["judgements"] == ["yes", "yes"]
    calls = gen.calls
    # a torn last line is cut and redone; finished inputs are not generated again
    path = tmp_path / "nbest-beam1.jsonl"
    path.write_text(path.read_text().splitlines(keepends=True)[0] + '{"id": "cntq:2", "ki')
    rows2 = run_nbest_experiment(_items(), gen, KeywordJudge(), settings, tmp_path, chunk=1)
    assert gen.calls == calls + 1 and json.dumps(rows2) == json.dumps(rows)
    assert summarize_folder(tmp_path, settings, {"entq:1"})[0]["inputs"] == 1


def test_nbest_command_end_to_end_with_tiny_models(capsys, tmp_path, tiny_base, monkeypatch):
    pytest.importorskip("spacy")
    from dialcheck.analysis.answers import AnswerClassifier
    from dialcheck.cli import main
    from helpers_generation import build_tiny_lm

    lm = build_tiny_lm(tmp_path / "lm")
    clf = AnswerClassifier(base=str(tiny_base), max_length=32, adapter={"type": "lora", "r": 4, "alpha": 8}).build()
    clf.save(tmp_path / "clf")
    src = tmp_path / "nli.jsonl"
    src.write_text(
        "\n".join(
            json.dumps(x)
            for x in [
                {"premise": "I live in North Carolina.", "hypothesis": "I'm in North Carolina.", "label": "entailment"},
                {"premise": "I have two dogs.", "hypothesis": "I have a cat.", "label": "contradiction"},
            ]
        )
    )
    args = [
        "nbest",
        "--input",
        str(src),
        "--source",
        "",
        "--out",
        str(tmp_path / "run"),
        "--lm",
        str(lm),
        "--classifier",
        str(tmp_path / "clf"),
        "--settings",
        "beam2,nucleus2",
        "--max-new-tokens",
        "3",
        "--no-progress",
    ]
    code = main([*args, "--no-plot"])
    out = capsys.readouterr().out
    assert code == 0 and "| beam2 |" in out and "| nucleus2 |" in out
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert {(r["setting"], r["kind"]) for r in results} == {
        (s, k) for s in ("beam2", "nucleus2") for k in ("ENTQ", "CNTQ")
    }
    lines = (tmp_path / "run" / "nbest-beam2.jsonl").read_text().splitlines()
    assert len(lines) == 2 and all(len(json.loads(x)["replies"]) == 2 for x in lines)
    # every list is stored: judging again never loads the generator (here a folder that does not exist)
    gone = [*args[: args.index("--lm") + 1], str(tmp_path / "no-lm"), *args[args.index("--lm") + 2 :]]
    assert main([*gone, "--no-plot", "--rejudge"]) == 0
    assert "judged 4 stored lists again" in capsys.readouterr().err
    if importlib.util.find_spec("onnxruntime"):  # judged on ONNX Runtime: the same table
        results = (tmp_path / "run" / "results.json").read_text()
        monkeypatch.setenv("DIALCHECK_CACHE", str(tmp_path / "cache"))
        assert main([*gone, "--no-plot", "--rejudge", "--onnx"]) == 0
        assert (tmp_path / "run" / "results.json").read_text() == results
        assert list((tmp_path / "cache" / "onnx").glob("*.onnx"))
        capsys.readouterr()
    # a list missing (e.g. a generation still running elsewhere): --rejudge generates nothing, summarises
    # what is stored and says what it left out
    path = tmp_path / "run" / "nbest-beam2.jsonl"
    path.write_text(lines[0] + "\n")
    assert main([*gone, "--no-plot", "--rejudge"]) == 0
    captured = capsys.readouterr()
    assert "beam2: 1 of 2 stimuli have a stored list; the other is left out" in captured.err
    assert len(path.read_text().splitlines()) == 1
    beam2 = [r for r in json.loads((tmp_path / "run" / "results.json").read_text()) if r["setting"] == "beam2"]
    assert [r["inputs"] for r in beam2] == [1]
    assert main([*gone, "--no-plot", "--rejudge", "--settings", "beam2"]) == 0
    assert "judged 1 stored list again" in capsys.readouterr().err  # was "judged 1 stored lists again"
    assert main([*gone, "--no-plot", "--rejudge", "--settings", "beam4"]) == 2
    assert "holds no n-best list for beam4" in capsys.readouterr().err
    assert main([*gone, "--no-plot", "--rejudge", "--generate-only"]) == 2


def test_lists_stored_unjudged_can_be_judged_later(tmp_path):
    from dialcheck.analysis.experiment import judge_folder
    from dialcheck.errors import InputError

    settings = [DecodingConfig.parse("beam2")]
    assert run_nbest_experiment(_items(), FixedGenerator(), None, settings, tmp_path) == []
    rec = json.loads((tmp_path / "nbest-beam2.jsonl").read_text().splitlines()[0])
    assert rec["judgements"] is None and rec["replies"] == ["Yes.", "Yes, I am."]
    with pytest.raises(InputError, match="not judged yet"):
        summarize_folder(tmp_path, settings)
    assert judge_folder(tmp_path, settings, _items(), KeywordJudge()) == 2
    rows = summarize_folder(tmp_path, settings)
    assert [r["certainty"] for r in rows if r["kind"] == "ENTQ"] == [1.0]


def test_judging_refuses_a_list_another_live_run_is_writing(tmp_path):
    import subprocess
    import sys

    from dialcheck.analysis.experiment import judge_folder
    from dialcheck.errors import InputError

    settings = [DecodingConfig.parse("beam2")]
    run_nbest_experiment(_items(), FixedGenerator(), None, settings, tmp_path)
    lock = tmp_path / "nbest-beam2.jsonl.lock"
    assert not lock.exists()  # a finished run leaves no lock
    writer = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        lock.write_text(f"{writer.pid}\n")
        with pytest.raises(InputError, match=f"process {writer.pid}"):
            judge_folder(tmp_path, settings, _items(), KeywordJudge())
        other = tmp_path / "other"
        other.mkdir()
        (other / "nbest-beam2.jsonl.lock").write_text(f"{writer.pid}\n")
        with pytest.raises(InputError, match="being written by another run"):
            run_nbest_experiment(_items(), FixedGenerator(), None, settings, other)
        # its last line unended while it writes: a resumed run cut it before it looked at the lock
        (other / "nbest-beam2.jsonl").write_text('{"id": "entq:1", "ki')
        with pytest.raises(InputError, match="being written by another run"):
            run_nbest_experiment(_items(), FixedGenerator(), None, settings, other)
        assert (other / "nbest-beam2.jsonl").read_text() == '{"id": "entq:1", "ki'
    finally:
        writer.kill()
        writer.wait()
    # the writer is gone: its stale lock no longer blocks
    assert judge_folder(tmp_path, settings, _items(), KeywordJudge()) == 2


def test_stored_lists_torn_or_damaged_are_read_without_a_traceback(tmp_path):
    # an interrupted --generate-only run leaves a torn last line: judging it later (nbest --rejudge) raised
    # json's JSONDecodeError; a damaged line or a record without its replies raised too, naming no file
    from dialcheck.analysis.experiment import judge_folder
    from dialcheck.errors import InputError

    settings = [DecodingConfig.parse("beam2")]
    run_nbest_experiment(_items(), FixedGenerator(), None, settings, tmp_path)
    path = tmp_path / "nbest-beam2.jsonl"
    good = path.read_text()
    path.write_text(good + '{"id": "cntq:3", "ki')
    assert judge_folder(tmp_path, settings, _items(), KeywordJudge()) == 2
    assert [r["inputs"] for r in summarize_folder(tmp_path, settings)] == [1, 1]
    assert path.read_text().count("\n") == 2 and "cntq:3" not in path.read_text()
    first, second = path.read_text().splitlines()
    for bad, message in [
        ("{bad", "line 1: not an n-best output line: invalid JSON"),
        (json.dumps({"id": "entq:1", "kind": "ENTQ", "expected": "yes"}), "line 1: not an n-best output line: replies"),
        (first.replace('"kind": "ENTQ"', '"kind": 3'), "line 1: not an n-best output line: kind: expected ENTQ"),
        (first.replace('["yes", "yes"]', '["yes"]'), "line 1: not an n-best output line: judgements"),
    ]:
        path.write_text(bad + "\n" + second + "\n")
        with pytest.raises(InputError, match=message):
            summarize_folder(tmp_path, settings)
        with pytest.raises(InputError, match=str(path)):
            judge_folder(tmp_path, settings, _items(), KeywordJudge())


class _LineSeparatorGenerator:
    """Replies that hold U+2028 (json.dumps leaves it as it is with ensure_ascii=False) and non-ASCII text; it
    counts the lists it makes."""

    def __init__(self):
        self.made = 0

    def generate(self, contexts, config, batch_size=4, **_):
        self.made += len(contexts)
        return [[Candidate(f"Yes,\u2028 caf\u00e9 {d.meta['id']}.", -1.0)] for d in contexts]


@pytest.mark.parametrize(
    "tail",
    [
        "whole",  # the fourth record written in full, its newline not
        "torn",  # the fourth record cut inside the two bytes of its é
    ],
)
def test_reading_and_resuming_agree_on_a_torn_or_unended_last_line(tmp_path, tail):
    # a resumed run read the list file by one rule (splitlines, a line without its newline dropped and the file
    # rewritten) and judging/summaries by another (split at "\n", a whole last record kept): a reply holding
    # U+2028 cut the resumed run's reading short, so every list after it was thrown away and made again, and a
    # line torn inside a UTF-8 character was a UnicodeDecodeError traceback for both
    from dataclasses import replace

    settings = [DecodingConfig.parse("beam1")]
    base = _items()
    items = [replace(base[k % 2], id=f"{base[k % 2].kind.lower()}:{k}") for k in range(6)]
    whole = tmp_path / "whole"
    gen = _LineSeparatorGenerator()
    run_nbest_experiment(items, gen, KeywordJudge(), settings, whole, batch_size=1, chunk=1)
    want = (whole / "nbest-beam1.jsonl").read_bytes()
    assert gen.made == 6 and "\u2028".encode() in want
    lines = want.split(b"\n")
    cut = tmp_path / "cut"
    cut.mkdir()
    path = cut / "nbest-beam1.jsonl"
    fourth = lines[3] if tail == "whole" else lines[3][: lines[3].index("é".encode()) + 1]
    path.write_bytes(b"\n".join(lines[:3]) + b"\n" + fourth)
    stored = 4 if tail == "whole" else 3
    assert sum(r["inputs"] for r in summarize_folder(cut, settings)) == stored
    gen = _LineSeparatorGenerator()
    run_nbest_experiment(items, gen, KeywordJudge(), settings, cut, batch_size=1, chunk=1)
    assert gen.made == 6 - stored  # no stored list made again, none lost
    assert path.read_bytes() == want  # each list once, on a line of its own


def test_results_without_a_kept_list_are_plain_json_and_read_n_a_in_the_table(tmp_path):
    # every CNTQ list held an ambiguous reply: results.json said "certainty": NaN, which no JSON reader takes, and
    # table.md "nan"
    from dialcheck.analysis.report import json_rows

    settings = [DecodingConfig.parse("beam2")]
    rows = run_nbest_experiment(_items(), FixedGenerator(), KeywordJudge(), settings, tmp_path)
    cntq = json.loads(json.dumps(json_rows(rows), allow_nan=False))[1]
    assert cntq["kind"] == "CNTQ" and cntq["kept"] == 0 and cntq["certainty"] is None and cntq["variety"] is None
    assert "| beam2 | 1.000 | 1.000 | 1 / 1 | n/a | n/a | 0 / 1 |" in markdown_table(rows)


def test_resuming_over_a_line_that_is_json_but_no_record_names_it(tmp_path):
    # '[1]' or '"x"' ended in a TypeError traceback (a string or list indexed by "id")
    from dialcheck.errors import InputError

    settings = [DecodingConfig.parse("beam2")]
    (tmp_path / "nbest-beam2.jsonl").write_text("[1]\n")
    with pytest.raises(InputError, match="line 1: cannot resume: not an n-best output line"):
        run_nbest_experiment(_items(), FixedGenerator(), None, settings, tmp_path)


_HISTORIES = ["i live in paris .", "i have two dogs .", "i like tea , not coffee .", "i play guitar .", "i am home ."]
_QUESTIONS = ["do you live in paris ?", "are they good ?", "you like coffee ?", "do you play ?", "are you home ?"]


def _lm_items() -> list[EchoItem]:
    """Seven stimuli in the tiny LM's words, prompts of several lengths (so that batches sort them)."""
    items = []
    for n in range(7):
        h, q = _HISTORIES[n % 5], _QUESTIONS[(2 * n) % 5] + (" what ?" * (n % 3))
        kind, expected = ("ENTQ", "yes") if n % 2 else ("CNTQ", "no")
        items.append(EchoItem(f"{kind.lower()}:{n}", kind, h, h, q, expected, q, q))
    return items


class _WordJudge:
    def judge(self, questions, answers):
        return ["yes" if " yes" in f" {a}" else "no" if " no" in f" {a}" else "ambiguous" for a in answers]


@pytest.fixture(scope="module")
def nbest_lm(tmp_path_factory):
    from dialcheck.generation import NBestGenerator
    from helpers_generation import build_tiny_lm

    folder = build_tiny_lm(tmp_path_factory.mktemp("nbest-lm") / "lm")
    return NBestGenerator.load(str(folder))


_RESUME_SETTINGS = ["nucleus3", "topk2", "beam2"]


@pytest.mark.parametrize("spec", _RESUME_SETTINGS)
def test_an_uninterrupted_experiment_writes_the_lists_it_wrote_before(tmp_path, nbest_lm, spec):
    # the lists before resuming was made exact: one generate call per chunk of 2 stimuli (batch size 1),
    # each seeded afresh; a run that is never interrupted must keep writing them (existing results)
    cfg = DecodingConfig.parse(spec, max_new_tokens=4)
    items = _lm_items()
    run_nbest_experiment(items, nbest_lm, None, [cfg], tmp_path, batch_size=1, chunk=2)
    stored = [json.loads(line) for line in (tmp_path / f"nbest-{cfg.name}.jsonl").read_text().splitlines()]
    before = []
    for s in range(0, len(items), 2):
        part = items[s : s + 2]
        before += nbest_lm.generate([it.dialogue() for it in part], cfg, batch_size=1)
    assert [r["id"] for r in stored] == [it.id for it in items]
    assert [r["replies"] for r in stored] == [[c.text for c in cands] for cands in before]
    assert [r["scores"] for r in stored] == [[round(c.score, 5) for c in cands] for cands in before]


@pytest.mark.parametrize("spec", _RESUME_SETTINGS)
@pytest.mark.parametrize("kept", [0, 1, 2, 3, 5])
def test_an_interrupted_experiment_resumes_to_the_lists_of_an_uninterrupted_one(tmp_path, nbest_lm, spec, kept):
    # a run stopped inside a chunk (its first lines written, the next one torn) resumed with the stimuli
    # left: they were chunked and seeded afresh from the first one left, so sampled lists changed
    import random

    import torch

    cfg = DecodingConfig.parse(spec, max_new_tokens=4)
    items, name = _lm_items(), f"nbest-{cfg.name}.jsonl"
    whole = tmp_path / "whole"
    run_nbest_experiment(items, nbest_lm, _WordJudge(), [cfg], whole, batch_size=2, chunk=3)
    expected = (whole / name).read_bytes()
    lines = expected.splitlines(keepends=True)
    cut = tmp_path / "cut"
    cut.mkdir()
    (cut / name).write_bytes(b"".join(lines[:kept]) + lines[kept][:20])
    torch.manual_seed(987654)  # as a new process finds the generator
    random.seed(987654)
    run_nbest_experiment(items, nbest_lm, _WordJudge(), [cfg], cut, batch_size=2, chunk=3)
    assert (cut / name).read_bytes() == expected


def test_nbest_rejudge_names_the_stimuli_a_setting_has_no_list_for_in_words_that_fit_their_count(capsys):
    """nbest --rejudge said "beam2: 0 of 1 stimuli have a stored list; the other is left out (generate them ...)"
    for a run of one stimulus: "the other" of none, and plurals for one. Each count now has its own words."""
    from types import SimpleNamespace

    from dialcheck.cli.nbest import _report_missing

    beam2, beam4 = SimpleNamespace(name="beam2"), SimpleNamespace(name="beam4")
    rows = [{"setting": "beam2", "inputs": 1}]
    said = {}
    for total in (1, 2, 3):
        _report_missing(rows if total > 1 else [], [beam2, beam4], total)
        said[total] = capsys.readouterr().err.splitlines()
    generate = "with the same command without --rejudge)"
    assert said[1] == [
        f"dialcheck: {s}: the stimulus has no stored list; it is left out (generate it {generate}"
        for s in ("beam2", "beam4")
    ]
    assert said[2] == [
        f"dialcheck: beam2: 1 of 2 stimuli have a stored list; the other is left out (generate it {generate}",
        f"dialcheck: beam4: none of the 2 stimuli has a stored list; both are left out (generate them {generate}",
    ]
    assert said[3][0] == (
        f"dialcheck: beam2: 1 of 3 stimuli have a stored list; the other 2 are left out (generate them {generate}"
    )
