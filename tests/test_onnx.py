"""ONNX Runtime inference (Detector.use_onnx, --onnx): same scores as torch, exported once per weights."""

import json

import pytest

from dialcheck.detectors import load_detector
from dialcheck.errors import ModelError
from dialcheck.schema import Dialogue
from helpers_cli import run_cli

pytest.importorskip("onnxruntime")

DIALOGUES = [
    Dialogue.from_texts(["Do you have pets?", "Yes, two dogs.", "What are their names?", "I never had a pet."]),
    Dialogue.from_texts(["I live in Paris.", "Nice!", "Yes, I love living in Paris, near the river."]),
    Dialogue.from_texts(["hi", "hello there", "how are you", "fine, and you? " * 40]),  # long last turn
]


def _scores(det):
    return [v.score for v in det.predict(DIALOGUES)]


def _int8_suffix():
    """The int8 file ending this machine gets: 8-bit weights on a CPU with VNNI, 7-bit elsewhere."""
    from dialcheck.detectors.onnx import int8_range

    return "-int8r.onnx" if int8_range() == "reduced" else "-int8.onnx"


def test_onnx_scores_equal_torch_and_the_export_is_reused(tiny_detector_dir, tmp_path, monkeypatch):
    torch_scores = _scores(load_detector(tiny_detector_dir))
    det = load_detector(tiny_detector_dir).use_onnx(cache=tmp_path)
    assert det.config.options["onnx"] is True and det.config.options["int8"] is False
    assert _scores(det) == pytest.approx(torch_scores, abs=1e-5)
    assert len(list(tmp_path.glob("*.onnx"))) == 1
    # A second load of the same weights reads the cached file instead of exporting again.
    from dialcheck.detectors import onnx

    monkeypatch.setattr(onnx, "export_onnx", lambda *a, **k: pytest.fail("exported again"))
    again = load_detector(tiny_detector_dir).use_onnx(cache=tmp_path)
    assert _scores(again) == pytest.approx(torch_scores, abs=1e-5)


def test_changed_weights_get_their_own_export(tiny_detector_dir, tmp_path):
    import torch

    det = load_detector(tiny_detector_dir)
    det.use_onnx(cache=tmp_path)
    other = load_detector(tiny_detector_dir)
    with torch.no_grad():
        bias = next(p for n, p in other.classifier.model.named_parameters() if n.endswith("classifier.bias"))
        bias[0] += 1.0  # one label's logit only: the softmax moves
    want = _scores(other)
    other.use_onnx(cache=tmp_path)
    assert len(list(tmp_path.glob("*.onnx"))) == 2
    assert _scores(other) == pytest.approx(want, abs=1e-5) and _scores(other) != pytest.approx(_scores(det), abs=1e-3)


def test_int8_is_quantized_per_channel_and_stays_close(tiny_detector_dir, tmp_path):
    fp32 = _scores(load_detector(tiny_detector_dir))
    det = load_detector(tiny_detector_dir).use_onnx(int8=True, cache=tmp_path)
    assert det.config.options["int8"] is True
    # only the int8 file stays in the cache: the float32 export made for it is not needed to run it
    assert [p.name.endswith(_int8_suffix()) for p in sorted(tmp_path.glob("*.onnx"))] == [True]
    again = load_detector(tiny_detector_dir).use_onnx(int8=True, cache=tmp_path)
    assert _scores(again) == _scores(det)
    assert len(list(tmp_path.glob("*.onnx"))) == 1
    load_detector(tiny_detector_dir).use_onnx(cache=tmp_path)  # float32 asked for later: exported then, kept
    assert len(list(tmp_path.glob("*.onnx"))) == 2
    int8 = _scores(det)
    assert int8 != fp32 and int8 == pytest.approx(fp32, abs=0.05)
    with pytest.raises(ModelError, match="use_onnx"):
        det.quantize()


def test_an_int8_score_is_the_same_whatever_else_is_in_the_batch(tiny_detector_dir, tmp_path):
    det = load_detector(tiny_detector_dir).use_onnx(int8=True, cache=tmp_path)
    alone = [det.predict([d])[0].score for d in DIALOGUES]
    together = [v.score for v in det.predict(DIALOGUES)]  # one batch, padded to the longest pair
    assert together == alone
    clf = det.classifier
    pairs = [("I have a dog.", "I never had a dog."), ("hi " * 60, "I have a cat and a bird at home.")]
    assert clf.score(pairs)[0] == clf.score(pairs[:1])[0]
    # the float32 export runs the batch as one, as torch would
    assert load_detector(tiny_detector_dir).use_onnx(cache=tmp_path).classifier.runner.rows is False


def test_int8_rows_run_side_by_side_give_each_pair_its_own_score_in_order(tiny_detector_dir, tmp_path):
    from dialcheck.detectors.onnx import OnnxRunner

    det = load_detector(tiny_detector_dir).use_onnx(int8=True, cache=tmp_path)
    clf = det.classifier
    pairs = [(f"I have {n} dogs and live in town {n}.", "I never had a dog." * (1 + n % 3)) for n in range(12)]
    clf.runner = OnnxRunner(clf.runner.path, threads=1, rows=True)
    in_turn = clf.score(pairs)
    clf.runner = OnnxRunner(clf.runner.path, threads=3, rows=True)
    assert clf.runner.workers == 3
    side_by_side = clf.score(pairs)
    assert len(set(in_turn.tolist())) > 6  # distinct scores, so a shuffled order would show
    assert side_by_side.tolist() == in_turn.tolist()
    assert clf.score(pairs[5:6]).tolist() == in_turn[5:6].tolist()


def test_a_runner_used_before_a_fork_still_scores_in_the_child(tiny_detector_dir, tmp_path):
    import multiprocessing
    import sys

    if sys.platform == "win32":
        pytest.skip("no fork on Windows")
    from dialcheck.detectors.onnx import OnnxRunner

    det = load_detector(tiny_detector_dir).use_onnx(int8=True, cache=tmp_path)
    clf = det.classifier
    clf.runner = OnnxRunner(clf.runner.path, threads=2, rows=True)
    pairs = [("I have a dog.", "I never had a dog."), ("I live in Paris.", "I love Paris."), ("hi", "hello")]
    want = clf.score(pairs).tolist()  # the parent's row threads now exist
    ctx = multiprocessing.get_context("fork")
    got = ctx.Queue()
    child = ctx.Process(target=lambda: got.put(clf.score(pairs).tolist()))
    child.start()
    child.join(timeout=60)
    if child.is_alive():
        child.kill()
        pytest.fail("the forked child hung on the parent's row threads")
    assert child.exitcode == 0 and got.get(timeout=5) == want


def test_the_caller_model_stays_in_eval_mode_after_the_export(tiny_detector_dir, tmp_path):
    det = load_detector(tiny_detector_dir)
    det.use_onnx(cache=tmp_path)
    assert not det.classifier.model.training  # dropout off: torch scores stay deterministic


def test_missing_onnxruntime_names_the_install(tiny_detector_dir, tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    with pytest.raises(ModelError, match=r'pip install "dialcheck\[onnx\]"'):
        load_detector(tiny_detector_dir).use_onnx(cache=tmp_path)


def test_cli_onnx_prints_the_torch_verdicts(capsys, tiny_detector_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("DIALCHECK_CACHE", str(tmp_path))
    src = tmp_path / "d.jsonl"
    lines = [json.dumps({"turns": [t.text for t in d.turns]}) for d in DIALOGUES]
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    argv = ["check", str(src), "--json", "--model", str(tiny_detector_dir)]
    code, out, _ = run_cli(capsys, *argv)
    want = [json.loads(line) for line in out.splitlines()]
    from dialcheck import api

    api._cached.cache_clear()
    code, out, _ = run_cli(capsys, *argv, "--onnx")
    got = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and [g["score"] for g in got] == pytest.approx([w["score"] for w in want], abs=1e-5)
    assert [g["evidence"] for g in got] == [w["evidence"] for w in want]
    assert list((tmp_path / "onnx").glob("*.onnx"))
    code, _, err = run_cli(capsys, "evaluate", "--model", str(tiny_detector_dir), "--onnx", "--update-card")
    assert code == 2 and "--onnx" in err


def test_a_failed_export_leaves_nothing_in_the_cache(tiny_detector_dir, tmp_path, monkeypatch):
    import torch

    def broken(*args, **kwargs):
        open(args[2], "wb").write(b"half an export")  # noqa: SIM115 - what a cut run leaves
        raise RuntimeError("unsupported operator")

    monkeypatch.setattr(torch.onnx, "export", broken)
    with pytest.raises(ModelError, match="cannot export BertForSequenceClassification to ONNX: unsupported operator"):
        load_detector(tiny_detector_dir).use_onnx(cache=tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_a_detector_saved_after_the_switch_loads_as_a_plain_one(tiny_base, tmp_path, monkeypatch):
    from dialcheck import api
    from dialcheck.detectors import UtteranceDetector
    from dialcheck.detectors.modeling import build_model

    det = UtteranceDetector(base=str(tiny_base), adapter={"type": "lora", "r": 4, "alpha": 8})
    det.attach(*build_model(det.config))
    det.use_onnx(int8=True, cache=tmp_path / "cache")
    again = load_detector(det.save(tmp_path / "saved"))
    assert "onnx" not in again.config.options and "int8" not in again.config.options
    assert again.classifier.runner is None
    monkeypatch.setenv("DIALCHECK_CACHE", str(tmp_path / "cache"))
    api.accelerate(again, onnx=True)  # not skipped as "already switched"
    assert again.classifier.runner is not None


def test_a_damaged_cache_file_is_named_with_what_to_do(tiny_detector_dir, tmp_path):
    load_detector(tiny_detector_dir).use_onnx(cache=tmp_path)
    (path,) = tmp_path.glob("*.onnx")
    path.write_bytes(b"not an onnx graph")
    with pytest.raises(ModelError, match=rf"{path.name}: ONNX Runtime cannot load this export .*delete it"):
        load_detector(tiny_detector_dir).use_onnx(cache=tmp_path)


def test_scoring_on_onnx_runs_no_torch_op(tiny_detector_dir, tmp_path):
    # a torch op would wake torch's OpenMP workers, which then spin on the cores ONNX Runtime needs
    import torch

    det = load_detector(tiny_detector_dir).use_onnx(int8=True, cache=tmp_path)
    det.predict(DIALOGUES[:1])
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        verdicts = det.predict(DIALOGUES)
    assert len(verdicts) == 3
    assert [e.name for e in prof.events() if e.name.startswith("aten::")] == []
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        load_detector(tiny_detector_dir).predict(DIALOGUES)  # the check can fail: torch's path does show up
    assert any(e.name.startswith("aten::") for e in prof.events())


def _preferring_onnx(src, dst):
    import shutil

    shutil.copytree(src, dst)
    cfg = json.loads((dst / "dialcheck.json").read_text())
    cfg["options"]["runtime"] = "onnx"
    (dst / "dialcheck.json").write_text(json.dumps(cfg))
    return dst


def test_a_model_that_prefers_onnx_runs_there_with_the_same_scores(tiny_detector_dir, tmp_path, monkeypatch):
    import dialcheck
    from dialcheck.api import accelerate

    monkeypatch.setenv("DIALCHECK_CACHE", str(tmp_path / "cache"))
    folder = _preferring_onnx(tiny_detector_dir, tmp_path / "prefers-onnx")
    det = dialcheck.load(folder)
    assert det.config.options["onnx"] is True and det.config.options["int8"] is False
    assert _scores(det) == pytest.approx(_scores(load_detector(tiny_detector_dir)), abs=1e-5)
    assert dialcheck.load(folder) is det  # shared per process, switched once
    # the preference is saved with the model; the switch of this process is not
    assert json.loads(det.config.to_json())["options"] == {"runtime": "onnx"}
    # --int8 on a model already on ONNX Runtime means ONNX Runtime's int8, not torch's
    accelerate(det, int8=True)
    assert det.config.options["onnx"] is True and det.config.options["int8"] is True
    # a model without the preference stays on torch
    plain = dialcheck.load(tiny_detector_dir)
    assert not plain.config.options.get("onnx")


def test_without_onnxruntime_a_model_that_prefers_it_stays_on_torch_and_says_why(
    tiny_detector_dir, tmp_path, monkeypatch, caplog
):
    import sys

    import dialcheck

    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import fails as if not installed
    folder = _preferring_onnx(tiny_detector_dir, tmp_path / "no-ort")
    with caplog.at_level("WARNING", logger="dialcheck"):
        det = dialcheck.load(folder)
    assert not det.config.options.get("onnx")
    assert 'no-ort runs about 2x faster on ONNX Runtime (same scores): pip install "dialcheck[onnx]"' in caplog.text
    assert _scores(det) == pytest.approx(_scores(load_detector(tiny_detector_dir)), abs=1e-6)


def test_without_onnxruntime_a_model_calibrated_on_int8_stays_on_torch_and_says_its_scores_differ(
    tiny_detector_dir, tmp_path, monkeypatch, caplog
):
    import sys

    import dialcheck

    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    folder = _preferring_onnx(tiny_detector_dir, tmp_path / "int8-cal")
    cfg = json.loads((folder / "dialcheck.json").read_text())
    cfg["options"]["runtime"] = "onnx-int8"
    (folder / "dialcheck.json").write_text(json.dumps(cfg))
    with caplog.at_level("WARNING", logger="dialcheck"):
        det = dialcheck.load(folder)
    assert not det.config.options.get("onnx") and not det.config.options.get("int8")
    assert "int8-cal was calibrated on ONNX Runtime int8" in caplog.text
    assert "scores differ slightly from the calibrated ones" in caplog.text


def test_a_model_calibrated_on_int8_releases_its_torch_weights_and_says_so_when_torch_is_asked_for(
    tiny_detector_dir, tmp_path, monkeypatch
):
    import dialcheck
    from dialcheck.api import accelerate
    from dialcheck.errors import ModelError

    monkeypatch.setenv("DIALCHECK_CACHE", str(tmp_path / "cache"))
    folder = _preferring_onnx(tiny_detector_dir, tmp_path / "int8-only")
    cfg = json.loads((folder / "dialcheck.json").read_text())
    cfg["options"]["runtime"] = "onnx-int8"
    (folder / "dialcheck.json").write_text(json.dumps(cfg))
    want = _scores(load_detector(tiny_detector_dir).use_onnx(int8=True, cache=tmp_path / "other"))
    det = dialcheck.load(folder)
    # the torch parameters are gone; it predicts, ranks and is accelerated (a no-op) as before
    assert not any(True for clf in det.pair_classifiers() for _ in getattr(clf.model, "_modules", {}))
    assert _scores(det) == pytest.approx(want, abs=1e-6)
    assert det.rank(["Do you have pets?", "Yes, two dogs.", "Names?"], ["Max.", "I never had a pet."])
    assert accelerate(det, onnx=True, int8=True) is det and _scores(det) == pytest.approx(want, abs=1e-6)
    export_again = lambda: det.use_onnx(cache=tmp_path / "empty")  # noqa: E731  (float32: exported from torch)
    for what in (export_again, lambda: det.pair_classifiers()[0].model(input_ids=None)):
        with pytest.raises(ModelError, match="runs on ONNX Runtime only"):
            what()
    # a model that prefers ONNX float32 keeps them: --int8 later exports again from torch
    fp32 = dialcheck.load(_preferring_onnx(tiny_detector_dir, tmp_path / "fp32"))
    accelerate(fp32, int8=True)
    assert fp32.config.options["int8"] is True


def _preferring_int8(tiny_detector_dir, dst):
    folder = _preferring_onnx(tiny_detector_dir, dst)
    cfg = json.loads((folder / "dialcheck.json").read_text())
    cfg["options"]["runtime"] = "onnx-int8"
    (folder / "dialcheck.json").write_text(json.dumps(cfg))
    return folder


def test_a_model_calibrated_on_int8_loads_from_its_cached_export_without_torch_weights(
    tiny_detector_dir, tmp_path, monkeypatch
):
    import dialcheck
    from dialcheck import api
    from dialcheck.detectors import base
    from dialcheck.errors import ModelError

    monkeypatch.setenv("DIALCHECK_CACHE", str(tmp_path / "cache"))
    folder = _preferring_int8(tiny_detector_dir, tmp_path / "int8-fast")
    api._cached.cache_clear()
    first = dialcheck.load(folder)  # builds the torch model, exports, quantizes, and records the export
    want = _scores(first)
    assert len(list((tmp_path / "cache" / "onnx" / "index").glob("*.json"))) == 1

    def no_torch_weights(*a, **k):
        raise AssertionError("the torch weights were loaded")

    monkeypatch.setattr(base, "load_model", no_torch_weights)
    api._cached.cache_clear()
    again = dialcheck.load(folder)
    assert again is not first and _scores(again) == want  # the same int8 export: the same scores
    assert again.config.options["onnx"] is True and again.config.options["int8"] is True
    with pytest.raises(ModelError, match="runs on ONNX Runtime only"):
        again.use_onnx(cache=tmp_path / "fp32")  # float32 is exported from torch weights it does not have
    # outside dialcheck.load of an int8-calibrated model, the weights load as ever
    with pytest.raises(AssertionError, match="torch weights were loaded"):
        load_detector(folder)


def test_changed_or_missing_files_load_the_torch_weights_again(tiny_detector_dir, tmp_path, monkeypatch):
    from safetensors.torch import load_file, save_file

    import dialcheck
    from dialcheck import api
    from dialcheck.detectors import base
    from dialcheck.detectors.onnx import cached_int8_export, source_key

    monkeypatch.setenv("DIALCHECK_CACHE", str(tmp_path / "cache"))
    folder = _preferring_int8(tiny_detector_dir, tmp_path / "int8-changed")
    api._cached.cache_clear()
    want = _scores(dialcheck.load(folder))
    key = source_key(folder, load_detector(folder).config)
    export = cached_int8_export(key)
    assert export is not None and export.name.endswith(_int8_suffix())
    # a threshold or a model card does not change the weights: the same key
    (folder / "MODEL_CARD.md").write_text("notes")
    assert source_key(folder, load_detector(folder).config) == key
    # new adapter weights: a new key, so the torch weights load and are exported again
    weights = folder / "weights.safetensors"
    state = load_file(str(weights))
    name = next(k for k, v in state.items() if v.is_floating_point() and "lora_B" in k)
    state[name] = state[name] + 0.5
    save_file(state, str(weights))
    assert source_key(folder, load_detector(folder).config) != key
    loads = []
    real = base.load_model
    monkeypatch.setattr(base, "load_model", lambda *a: loads.append(1) or real(*a))
    api._cached.cache_clear()
    changed = dialcheck.load(folder)
    assert loads == [1] and _scores(changed) != want
    # an index entry whose export was deleted: the torch weights again, and the export made again
    new = cached_int8_export(source_key(folder, changed.config))
    new.unlink()
    api._cached.cache_clear()
    assert _scores(dialcheck.load(folder)) == _scores(changed) and loads == [1, 1]


@pytest.mark.parametrize(
    ("env", "cpuinfo", "expected"),
    [
        ("", "processor : 0\nflags : fpu sse2 avx2 avx512f avx512_vnni\n", "full"),
        ("auto", "flags\t: fpu sse2 avx2 avx_vnni", "full"),
        ("", "processor : 0\nflags : fpu sse2 avx2 avx512f\n", "reduced"),  # AVX-512 without VNNI saturates too
        ("", "Features : fp asimd evtstrm aes\n", "reduced"),  # no x86 flags to read: the range that never saturates
        ("", "", "reduced"),
        ("reduced", "flags : avx512_vnni", "reduced"),
        ("FULL", "flags : avx2", "full"),
    ],
)
def test_int8_range_follows_the_cpu_flags_unless_the_environment_says(monkeypatch, env, cpuinfo, expected):
    from dialcheck.detectors.onnx import int8_range

    monkeypatch.setenv("DIALCHECK_INT8_RANGE", env)
    assert int8_range(cpuinfo) == expected


def test_a_bad_int8_range_setting_names_the_variable(monkeypatch):
    from dialcheck.detectors.onnx import int8_range

    monkeypatch.setenv("DIALCHECK_INT8_RANGE", "7bit")
    with pytest.raises(ModelError, match="DIALCHECK_INT8_RANGE='7bit'"):
        int8_range("flags : avx2")


def test_each_weight_range_has_its_own_export_and_index_entry(tiny_detector_dir, tmp_path, monkeypatch):
    import dialcheck
    from dialcheck import api
    from dialcheck.detectors.onnx import cached_int8_export, source_key

    fp32 = _scores(load_detector(tiny_detector_dir))
    monkeypatch.setenv("DIALCHECK_CACHE", str(tmp_path / "cache"))
    folder = _preferring_int8(tiny_detector_dir, tmp_path / "int8-ranges")
    key = source_key(folder, load_detector(folder).config)
    scores = {}
    for r in ("full", "reduced"):
        monkeypatch.setenv("DIALCHECK_INT8_RANGE", r)
        api._cached.cache_clear()
        scores[r] = _scores(dialcheck.load(folder))
        assert cached_int8_export(key).name.endswith("-int8r.onnx" if r == "reduced" else "-int8.onnx")
    names = sorted(p.name[24:] for p in (tmp_path / "cache" / "onnx").glob("*.onnx"))
    assert names == ["-int8.onnx", "-int8r.onnx"]
    monkeypatch.setenv("DIALCHECK_INT8_RANGE", "full")  # the first export is still indexed beside the second
    assert cached_int8_export(key).name.endswith("-int8.onnx")
    for r in ("full", "reduced"):
        assert scores[r] == pytest.approx(fp32, abs=0.05)


def test_the_one_time_export_says_so_once(tiny_detector_dir, tmp_path, caplog):
    """The first check after an install exports the default's two stages (MPNet-base among them) and printed
    nothing for up to a minute: the export is now a warning, which the CLI shows; a cached export says nothing."""
    with caplog.at_level("WARNING", logger="dialcheck"):
        load_detector(tiny_detector_dir).use_onnx(int8=True, cache=tmp_path)
    assert [r.levelname for r in caplog.records] == ["WARNING"]
    assert "for ONNX Runtime int8" in caplog.text and "(one time" in caplog.text and str(tmp_path) in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING", logger="dialcheck"):
        load_detector(tiny_detector_dir).use_onnx(int8=True, cache=tmp_path)
    assert not caplog.records


def test_two_threads_using_a_runner_first_at_once_share_one_row_pool(monkeypatch):
    import concurrent.futures
    import threading

    from dialcheck.detectors import onnx
    from dialcheck.detectors.onnx import OnnxRunner
    from helpers_threads import Arrivals

    made = []
    arrivals = Arrivals()
    monkeypatch.setattr(onnx, "_POOL_LOCK", arrivals.lock(threading.Lock()))

    class Pool:  # made once the other thread is at the lock (it waits there) or here (no lock: a second pool)
        def __init__(self, *args, **kwargs):
            made.append(self)
            arrivals.arrive()
            assert arrivals.wait_for_others()

        def map(self, fn, items):
            return [fn(x) for x in items]

    monkeypatch.setattr(concurrent.futures, "ThreadPoolExecutor", Pool)
    runner = OnnxRunner.__new__(OnnxRunner)  # _map alone: no session needed
    runner.workers, runner._pool = 2, None
    got = []
    threads = [threading.Thread(target=lambda: got.append(runner._map(lambda r: r * 10, [1, 3, 2]))) for _ in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert got == [[0, 10, 20], [0, 10, 20]]
    assert len(made) == 1 and runner._pool[1] is made[0]
