"""The torch-free tokenizer of the pair core (dialcheck.detectors.tokenizer) and thread settings (dialcheck.threads)."""

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dialcheck.backbones import resolve_base
from dialcheck.detectors.tokenizer import BackendTokenizer
from dialcheck.errors import ModelError

DECODE = Path(__file__).resolve().parents[2] / "shared" / "data" / "decode" / "human-bot.jsonl"
ODD = [
    "",
    " ",
    "naïve café — “quoted” 日本語 and 😀",
    "Hello\tworld\n\nnew line",
    "[SEP] <s> </s> [CLS] <pad> [UNK] [MASK]",
    "I'M SHOUTING, don't you think?!",
    "word " * 300,
]


def _texts(n: int = 1500) -> list[str]:
    texts = list(ODD)
    if DECODE.exists():
        with DECODE.open(encoding="utf-8") as f:
            for line in f:
                texts += [t["text"] for t in json.loads(line)["turns"]]
                if len(texts) >= n:
                    break
    else:  # the corpus beside the repository is missing: made-up turns still cover the cases
        words = ["I", "you", "have", "had", "never", "a", "dog", "cat", "two", "pets", "live", "in", "Paris"]
        words += ["love", "it", "don't", ",", ".", "?", "!", "'s"]
        rng = random.Random(1)
        texts += [" ".join(rng.choices(words, k=rng.randint(1, 40))) for _ in range(n)]
    return texts


def _same_as_transformers(folder: Path) -> None:
    from transformers import AutoTokenizer

    hf, ours = AutoTokenizer.from_pretrained(folder), BackendTokenizer(folder)
    texts = _texts()
    for t in texts:
        a = hf(t, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
        b = ours(t, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
        assert b["input_ids"] == list(a["input_ids"]), t
        assert [tuple(o) for o in b["offset_mapping"]] == [tuple(o) for o in a["offset_mapping"]], t
    assert ours.num_special_tokens_to_add(pair=True) == hf.num_special_tokens_to_add(pair=True)
    assert ours.num_special_tokens_to_add() == hf.num_special_tokens_to_add()
    rng = random.Random(0)
    for side in ("right", "left"):
        hf.truncation_side = ours.truncation_side = side
        for max_length in (24, 128):
            for _ in range(60):
                firsts = [t or "." for t in rng.sample(texts, 6)]
                seconds = [t[:60] or "." for t in rng.sample(texts, 6)]
                kw = dict(truncation="only_first", max_length=max_length, padding=True, return_tensors="np")
                try:
                    want = hf(firsts, seconds, **kw)
                except Exception as e:  # a second segment too long to keep: both must refuse
                    with pytest.raises(type(e)):
                        ours(firsts, seconds, **kw)
                    continue
                got = ours(firsts, seconds, **kw)
                for key in want:
                    assert got[key].dtype == np.int64 and np.array_equal(got[key], want[key]), (side, key)


def test_the_backend_tokenizer_encodes_every_text_and_pair_batch_as_transformers_does_for_minilm():
    _same_as_transformers(resolve_base("all-MiniLM-L6-v2"))


@pytest.mark.slow
def test_the_backend_tokenizer_encodes_as_transformers_does_for_mpnet():
    from dialcheck.backbones import base_available

    if not base_available("all-mpnet-base-v2"):
        pytest.skip("needs MPNet-base")
    _same_as_transformers(resolve_base("all-mpnet-base-v2"))


def test_a_folder_without_a_readable_tokenizer_is_named(tmp_path):
    with pytest.raises(ModelError, match=str(tmp_path)):
        BackendTokenizer(tmp_path)
    (tmp_path / "tokenizer.json").write_text("{not json")
    with pytest.raises(ModelError, match="cannot read its tokenizer"):
        BackendTokenizer(tmp_path)


def _python(code: str, env: dict[str, str] | None = None) -> str:
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        check=False,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_threads_set_before_torch_loads_reach_torch_and_onnx_runtime():
    code = (
        "import sys; from dialcheck.threads import set_threads, thread_count; set_threads(1); "
        "print('torch' in sys.modules, thread_count()); import torch; print(torch.get_num_threads())"
    )
    assert _python(code, {"OMP_NUM_THREADS": "2"}).split() == ["False", "1", "1"]
    code = (
        "import torch\nfrom dialcheck.threads import set_threads, thread_count\nset_threads(1)\nprint(thread_count())"
    )
    assert _python(code) == "1"


def test_a_negative_thread_count_is_refused():
    from dialcheck.threads import set_threads

    with pytest.raises(ValueError, match="got -1"):
        set_threads(-1)


def test_a_model_calibrated_on_int8_checks_from_its_cached_export_without_importing_torch(
    tiny_detector_dir, tmp_path, monkeypatch
):
    pytest.importorskip("onnxruntime")
    import shutil

    import dialcheck
    from dialcheck import api

    folder = tmp_path / "int8-model"
    shutil.copytree(tiny_detector_dir, folder)
    cfg = json.loads((folder / "dialcheck.json").read_text())
    cfg["options"]["runtime"] = "onnx-int8"
    (folder / "dialcheck.json").write_text(json.dumps(cfg))
    monkeypatch.setenv("DIALCHECK_CACHE", str(tmp_path / "cache"))
    dialogues = [["Do you have pets?", "Yes, two dogs.", "What are their names?", "I never had a pet."]]
    dialogues += [["I live in Paris.", "Nice!", "Yes, I love living in Paris, near the river. " * 20]]
    api._cached.cache_clear()
    try:  # the first load builds the torch model, exports it and indexes the export
        want = [round(v.score, 6) for v in dialcheck.load(folder).predict(dialogues)]
    finally:
        api._cached.cache_clear()
    # a new process reads the tiny base's tokenizer.json as it would MiniLM's: no torch, the same scores
    code = (
        "import json, sys\n"
        "from dialcheck.detectors import tokenizer\n"
        f"tokenizer.BACKEND_BASES = frozenset({{{str(cfg['base'])!r}}})\n"
        "import dialcheck\n"
        f"det = dialcheck.load({str(folder)!r})\n"
        "assert type(det.classifier.tokenizer).__name__ == 'BackendTokenizer'\n"
        f"scores = [round(v.score, 6) for v in det.predict({dialogues!r})]\n"
        "print(json.dumps([scores, 'torch' in sys.modules, 'transformers' in sys.modules]))\n"
    )
    scores, torch_loaded, transformers_loaded = json.loads(_python(code, {"DIALCHECK_CACHE": str(tmp_path / "cache")}))
    assert scores == want
    assert not torch_loaded and not transformers_loaded
