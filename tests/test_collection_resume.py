"""``collect contexts`` and ``collect responses`` resume an interrupted run, and neither resuming nor writing as
they go changes what they write: an uninterrupted run writes what the code before ``--resume`` wrote, and an
interrupted-then-resumed run writes the same bytes (sampled decoding included: its RNG stream runs across
batches, and greedy batches depend on their padding, so the batches and the stream are kept)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from dialcheck.cli import main
from dialcheck.collection import CollectedReply, CollectionContext, GeneratorSpec, read_records, write_records
from dialcheck.schema import Turn
from helpers_generation import build_tiny_lm
from helpers_interrupt import kill_on_call

DIALOGUES = [
    [
        "i have two dogs .",
        "what are their names ?",
        "rex and fido .",
        "do you play guitar ?",
        "yes .",
        "how are they ?",
    ],
    ["i live in paris .", "do you like it ?"],
    ["i like tea .", "what tea ?", "good tea , not coffee .", "is it good ?", "yes .", "you like coffee ?"],
    ["hi .", "i went home .", "how was it ?", "it was bad .", "what was bad ?"],
]
GENERATORS = ["g={lm}:greedy", "s={lm}:nucleus3", "b={lm}:beam2"]  # 3 x (6 + 2 batches of 2) = 24 batches


@pytest.fixture(scope="module")
def lm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_lm(tmp_path_factory.mktemp("tiny-lm") / "lm")


@pytest.fixture(scope="module")
def dialogues(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("logs") / "in.jsonl"
    path.write_text("".join(json.dumps({"id": f"d{i}", "turns": t}) + "\n" for i, t in enumerate(DIALOGUES)))
    return path


def _contexts_argv(lm: Path, dialogues: Path, out: Path, *extra: str) -> list[str]:
    argv = ["collect", "contexts", "--input", str(dialogues), "--lm", str(lm), "--distances", "1,3"]
    argv += ["--top-k", "3", "--random-k", "2", "--batch-size", "1", "--threads", "1", "--no-progress"]
    return [*argv, "--all-scores", str(out.with_name(out.stem + "-all.jsonl")), "--out", str(out), *extra]


@pytest.fixture(scope="module")
def contexts(lm: Path, dialogues: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every candidate context (11 answered by A, 3 by B), as collect contexts --all-scores writes them."""
    out = tmp_path_factory.mktemp("ctx") / "ctx.jsonl"
    assert main(_contexts_argv(lm, dialogues, out)) == 0
    return out.with_name("ctx-all.jsonl")


def _responses_argv(lm: Path, contexts: Path, out: Path, *extra: str) -> list[str]:
    argv = ["collect", "responses", "--contexts", str(contexts), "--batch-size", "2", "--max-new-tokens", "8"]
    for g in GENERATORS:
        argv += ["--generator", g.format(lm=lm)]
    return [*argv, "--seed", "3", "--threads", "1", "--no-progress", "--out", str(out), *extra]


def _new_process() -> None:
    """Scramble the global RNGs, as a new process would find them: an interrupted run in this process leaves
    them where its last batch did, which would hide a resume that forgot to restore them."""
    import random

    import numpy as np
    import torch

    torch.manual_seed(987654)
    random.seed(987654)
    np.random.seed(987654)


def _work_files(out: Path) -> list[Path]:
    return [p for p in (out.with_name(out.name + ".part"), out.with_name(out.name + ".resume.json")) if p.exists()]


def _reference_collect_responses(contexts: list[Any], generators: list[Any], batch_size: int) -> list[Any]:
    """collect_responses as it was before --resume (without a detector): one generate call per generator and
    speaker, which sorts, batches and seeds as it likes."""
    by_speaker: dict[str, list[int]] = {}
    for i, c in enumerate(contexts):
        by_speaker.setdefault(c.reply_speaker, []).append(i)
    out = {}
    for spec in generators:
        for speaker, idx in by_speaker.items():
            lists = spec.generator.generate(
                [contexts[i].dialogue for i in idx], spec.decoding, batch_size=batch_size, speaker=speaker
            )
            for i, cands in zip(idx, lists, strict=True):
                texts = [c.text for c in cands if c.text.strip()] or [""]
                c = contexts[i]
                out[(i, spec.name)] = CollectedReply(
                    id=f"{c.id}/{spec.name}",
                    context_id=c.id,
                    generator=spec.name,
                    turns=(*c.history, *c.turns, Turn(speaker, texts[0])),
                    referent=len(c.history),
                    meta={"candidates": len(texts), "selection": c.selection, "distance": c.distance},
                )
    return [out[(i, g.name)] for i in range(len(contexts)) for g in generators]


@pytest.fixture(scope="module")
def uninterrupted(lm: Path, contexts: Path, tmp_path_factory: pytest.TempPathFactory) -> bytes:
    out = tmp_path_factory.mktemp("replies") / "replies.jsonl"
    assert main(_responses_argv(lm, contexts, out)) == 0
    assert not _work_files(out)  # removed once the output is written
    return out.read_bytes()


def test_responses_uninterrupted_writes_what_one_generate_call_per_generator_wrote(
    lm, contexts, uninterrupted, tmp_path
):
    from dialcheck.generation.nbest import DecodingConfig, NBestGenerator

    gen = NBestGenerator.load(str(lm))
    specs = [
        GeneratorSpec(g.split("=")[0], gen, DecodingConfig.parse(g.split(":")[-1], max_new_tokens=8, seed=3))
        for g in GENERATORS
    ]
    ctx = read_records(contexts, CollectionContext)
    assert {c.reply_speaker for c in ctx} == {"A", "B"}
    write_records(tmp_path / "reference.jsonl", _reference_collect_responses(ctx, specs, 2))
    assert (tmp_path / "reference.jsonl").read_bytes() == uninterrupted
    sampled = [json.loads(x)["turns"][-1]["text"] for x in uninterrupted.decode().splitlines()[1::3]]
    assert len(set(sampled)) > 5  # the sampled replies differ: a restarted RNG stream would show


@pytest.mark.parametrize(
    "kills",
    [
        [11],  # in the sampled generator's first speaker: two of its batches done, its RNG stream half run
        [1],  # in the very first batch: nothing to keep
        [11, 3, 6],  # the resumed run interrupted too, twice
    ],
)
def test_responses_interrupted_then_resumed_writes_the_same_bytes(
    capsys, monkeypatch, lm, contexts, uninterrupted, tmp_path, kills
):
    from dialcheck.generation.nbest import NBestGenerator

    out = tmp_path / "replies.jsonl"
    for n, kill in enumerate(kills):
        with monkeypatch.context() as m:
            kill_on_call(m, NBestGenerator, "generate_batch", kill)
            assert main(_responses_argv(lm, contexts, out, *(["--resume"] if n else []))) == 130
        assert not out.exists() and _work_files(out)
        _new_process()
    capsys.readouterr()
    assert main(_responses_argv(lm, contexts, out, "--resume")) == 0
    err = capsys.readouterr().err
    assert "resuming:" in err if kills != [1] else "resuming: 0 replies" in err
    assert out.read_bytes() == uninterrupted
    assert not _work_files(out)


def test_responses_resume_makes_again_a_batch_written_but_not_recorded(
    monkeypatch, lm, contexts, uninterrupted, tmp_path
):
    # killed between appending a batch's replies to OUT.part and recording it: the replies are cut off and made again
    from dialcheck.collection.checkpoint import Checkpoint

    out = tmp_path / "replies.jsonl"
    with monkeypatch.context() as m:
        kill_on_call(m, Checkpoint, "_write_state", 12)  # the start, then batches 1-10, and the 11th's record
        assert main(_responses_argv(lm, contexts, out)) == 130
    state = json.loads(out.with_name("replies.jsonl.resume.json").read_text())
    part = out.with_name("replies.jsonl.part").read_bytes()
    assert state["done"] == 10 and len(part) > state["part_bytes"]
    with out.with_name("replies.jsonl.part").open("ab") as f:
        f.write(b'{"id": "torn')
    _new_process()
    assert main(_responses_argv(lm, contexts, out, "--resume")) == 0
    assert out.read_bytes() == uninterrupted


def test_responses_resume_refuses_other_settings_and_a_fresh_run_keeps_the_work(
    capsys, monkeypatch, lm, contexts, tmp_path
):
    from dialcheck.generation.nbest import NBestGenerator

    out = tmp_path / "replies.jsonl"
    with monkeypatch.context() as m:
        kill_on_call(m, NBestGenerator, "generate_batch", 11)
        assert main(_responses_argv(lm, contexts, out)) == 130
    kept = {p: p.read_bytes() for p in _work_files(out)}
    capsys.readouterr()
    code = main(_responses_argv(lm, contexts, out, "--resume", "--seed", "4"))
    err = capsys.readouterr().err
    assert code == 2 and "made otherwise" in err and "seed 3 -> 4" in err and "--resume" not in err
    code = main([*_responses_argv(lm, contexts, out, "--resume"), "--batch-size", "3"])
    assert code == 2 and "batch_size 2 -> 3" in capsys.readouterr().err
    code = main([*_responses_argv(lm, contexts, out, "--resume"), "--threads", "2"])  # sums add in another order
    assert code == 2 and "threads 1 -> 2" in capsys.readouterr().err
    other = tmp_path / "other.jsonl"
    write_records(other, [replace(c, id=c.id + "x") for c in read_records(contexts, CollectionContext)])
    code = main(_responses_argv(lm, other, out, "--resume"))
    assert code == 2 and "contexts differ" in capsys.readouterr().err
    code = main(_responses_argv(lm, contexts, out))  # no --resume: the work is not thrown away
    err = capsys.readouterr().err
    assert code == 2 and "an interrupted run's replies are kept in replies.jsonl.part" in err
    assert {p: p.read_bytes() for p in _work_files(out)} == kept and not out.exists()
    code = main(_responses_argv(lm, contexts, Path("-"), "--resume"))
    assert code == 2 and "--resume needs an --out file" in capsys.readouterr().err


def test_responses_resume_with_threads_0_holds_to_the_count_torch_ran_with(
    capsys, monkeypatch, lm, contexts, uninterrupted, tmp_path
):
    # --threads 0 is torch's default, the cores of the machine: the record keeps the count, so a resume on a
    # machine with other cores is told which --threads gives the interrupted run's sums
    import torch

    from dialcheck.generation.nbest import NBestGenerator

    before = torch.get_num_threads()
    torch.set_num_threads(1)  # as the run's own machine would have it
    try:
        out = tmp_path / "replies.jsonl"
        with monkeypatch.context() as m:
            kill_on_call(m, NBestGenerator, "generate_batch", 11)
            assert main([*_responses_argv(lm, contexts, out), "--threads", "0"]) == 130
        assert json.loads(out.with_name("replies.jsonl.resume.json").read_text())["settings"]["threads"] == 1
        capsys.readouterr()
        code = main([*_responses_argv(lm, contexts, out, "--resume"), "--threads", "3"])
        assert code == 2 and "threads 1 -> 3" in capsys.readouterr().err
        _new_process()
        assert main([*_responses_argv(lm, contexts, out, "--resume"), "--threads", "1"]) == 0
        assert out.read_bytes() == uninterrupted
    finally:
        torch.set_num_threads(before)


def test_responses_resume_of_a_record_without_threads_warns_and_finishes(
    capsys, monkeypatch, lm, contexts, uninterrupted, tmp_path
):
    # an interrupted run of a dialcheck that did not record --threads: refusing it would throw its work away
    from dialcheck.generation.nbest import NBestGenerator

    out = tmp_path / "replies.jsonl"
    with monkeypatch.context() as m:
        kill_on_call(m, NBestGenerator, "generate_batch", 11)
        assert main(_responses_argv(lm, contexts, out)) == 130
    state_file = out.with_name("replies.jsonl.resume.json")
    state = json.loads(state_file.read_text())
    del state["settings"]["threads"]
    state_file.write_text(json.dumps(state) + "\n")
    capsys.readouterr()
    _new_process()
    assert main(_responses_argv(lm, contexts, out, "--resume")) == 0
    err = capsys.readouterr().err
    assert "does not record threads" in err and "resuming with threads 1" in err
    assert "the replies made now may differ in the last digits" in err
    assert out.read_bytes() == uninterrupted


def test_responses_resume_without_work_collects_from_the_start(capsys, lm, contexts, uninterrupted, tmp_path):
    out = tmp_path / "replies.jsonl"
    assert main(_responses_argv(lm, contexts, out, "--resume")) == 0
    assert "nothing to resume" in capsys.readouterr().err
    assert out.read_bytes() == uninterrupted


def _reference_fqness(scorer: Any, contexts: list[Any]) -> list[Any]:
    """FQnessScorer.score as it was before --resume."""
    items: list[tuple[str, str]] = []
    for c in contexts:
        with_ref, without, cont = scorer.prompts(c)
        items += [(with_ref, cont), (without, cont)]
    lls: list[float] = []
    for s in range(0, len(items), scorer.batch_size * 8):
        lls += scorer.log_likelihoods(items[s : s + scorer.batch_size * 8])
    return [replace(c, fqness=lls[2 * i] - lls[2 * i + 1]) for i, c in enumerate(contexts)]


def test_fqness_scores_in_chunks_as_before(lm, contexts):
    from dialcheck.collection import FQnessScorer

    cands = [replace(c, fqness=None) for c in read_records(contexts, CollectionContext)]
    scorer = FQnessScorer.load(str(lm), batch_size=1)
    got, want = scorer.score(cands), _reference_fqness(scorer, cands)
    assert [c.fqness for c in got] == [c.fqness for c in want]  # exactly: unrounded, as top-k sorts them


@pytest.mark.parametrize("kills", [[3], [2, 2]])  # 14 contexts, batch size 1: 4 chunks of 4 contexts
def test_contexts_interrupted_then_resumed_writes_the_same_bytes(
    capsys, monkeypatch, lm, dialogues, contexts, tmp_path, kills
):
    from dialcheck.collection import FQnessScorer

    want = (contexts.with_name("ctx.jsonl").read_bytes(), contexts.read_bytes())
    out = tmp_path / "ctx.jsonl"
    for n, kill in enumerate(kills):
        with monkeypatch.context() as m:
            kill_on_call(m, FQnessScorer, "log_likelihoods", kill)
            assert main(_contexts_argv(lm, dialogues, out, *(["--resume"] if n else []))) == 130
        assert not out.exists() and _work_files(out)
        _new_process()
    capsys.readouterr()
    code = main(_contexts_argv(lm, dialogues, out, "--top-k", "2"))
    err = capsys.readouterr().err
    assert code == 2 and "an interrupted run's FQness scores are kept" in err and "pass --resume to continue it" in err
    code = main([*_contexts_argv(lm, dialogues, out, "--resume"), "--distances", "1"])
    assert code == 2 and "candidates differ" in capsys.readouterr().err
    code = main([*_contexts_argv(lm, dialogues, out, "--resume"), "--threads", "2"])
    assert code == 2 and "threads 1 -> 2" in capsys.readouterr().err
    assert main(_contexts_argv(lm, dialogues, out, "--resume")) == 0
    assert "resuming: " in capsys.readouterr().err
    assert (out.read_bytes(), out.with_name("ctx-all.jsonl").read_bytes()) == want
    assert not _work_files(out)


def test_responses_most_contradictory_resumes_to_the_same_bytes(
    capsys, monkeypatch, lm, contexts, tiny_detector_dir, tmp_path
):
    # the detector ranks each batch's candidates between batches: the sampling stream must not notice
    from dialcheck.generation.nbest import NBestGenerator

    def argv(out: Path, *extra: str) -> list[str]:
        args = ["collect", "responses", "--contexts", str(contexts), "--generator", f"s={lm}:nucleus3", "--seed", "3"]
        args += ["--batch-size", "2", "--max-new-tokens", "8", "--threads", "1", "--no-progress", "--out", str(out)]
        return [*args, "--most-contradictory", "--model", str(tiny_detector_dir), *extra]

    full, out = tmp_path / "full.jsonl", tmp_path / "replies.jsonl"
    assert main(argv(full)) == 0
    assert all("detector_score" in json.loads(x)["meta"] for x in full.read_text().splitlines())
    with monkeypatch.context() as m:
        kill_on_call(m, NBestGenerator, "generate_batch", 3)
        assert main(argv(out)) == 130
    _new_process()
    assert main(argv(out, "--resume")) == 0
    assert out.read_bytes() == full.read_bytes()


class _Echo:
    """A generator of no known kind (answered in one call per speaker): replies name the context and a draw
    from Python's global RNG, which runs on across calls."""

    def __init__(self) -> None:
        self.calls = 0

    def generate(self, contexts, config, batch_size=4, speaker=None, show_progress_bar=False):
        import random

        from dialcheck.generation import Candidate

        self.calls += 1
        return [[Candidate(f"{d.turns[-1].text} {random.random():.6f}")] for d in contexts]


def test_collect_responses_resumes_any_generator_one_call_per_speaker(contexts, tmp_path):
    import random

    from dialcheck.collection import collect_responses
    from dialcheck.collection.checkpoint import Checkpoint

    ctx = read_records(contexts, CollectionContext)
    random.seed(5)
    want = collect_responses(ctx, [GeneratorSpec("e", _Echo()), GeneratorSpec("f", _Echo())])
    random.seed(5)
    dying = _Echo()

    def killed(*a, **k):
        raise KeyboardInterrupt

    dying.generate = killed
    cp = Checkpoint(tmp_path / "r.jsonl", {"run": 1}).start()
    with pytest.raises(KeyboardInterrupt):
        collect_responses(ctx, [GeneratorSpec("e", _Echo()), GeneratorSpec("f", dying)], checkpoint=cp)
    assert cp.done == 2  # e's replies to A's contexts, then to B's; f's were cut
    random.seed(99)
    resumed = Checkpoint(tmp_path / "r.jsonl", {"run": 1}).resume()
    fresh = _Echo()
    got = collect_responses(ctx, [GeneratorSpec("e", _Echo()), GeneratorSpec("f", fresh)], checkpoint=resumed)
    assert [r.to_dict() for r in got] == [r.to_dict() for r in want] and fresh.calls == 2
    with pytest.raises(Exception, match="made otherwise"):
        Checkpoint(tmp_path / "r.jsonl", {"run": 2}).resume()


def test_contexts_to_dev_null_or_a_pipe_keep_no_work_files_beside_it(capsys, monkeypatch, lm, dialogues, tmp_path):
    # /dev/null.part cannot be made (or, as root, should not be): such an output is written in place, as probe
    # triggers writes it, and --resume to it is refused before anything is read, as for standard output
    import os
    import threading

    from dialcheck.collection.checkpoint import Checkpoint

    scores = ["--all-scores", str(tmp_path / "all.jsonl")]
    code = main(_contexts_argv(lm, tmp_path / "missing.jsonl", Path(os.devnull), "--resume", *scores))
    assert code == 2 and "--resume needs an --out file" in capsys.readouterr().err
    made: list[Path] = []
    opened = Checkpoint.__init__

    def spy(self: Checkpoint, out: Any, settings: Any) -> None:
        made.append(Path(out))
        opened(self, out, settings)

    monkeypatch.setattr(Checkpoint, "__init__", spy)
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(pipe.read_bytes()))
    reader.start()
    code = main(_contexts_argv(lm, dialogues, pipe))
    reader.join(timeout=60)
    assert code == 0 and not made
    assert got[0].count(b"\n") == 10  # --top-k 3 --random-k 2 at --distances 1,3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe", "pipe-all.jsonl"]
