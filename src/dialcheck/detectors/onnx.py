"""ONNX Runtime inference for the pair core: the same classifier exported once, run without torch's forward.

``Detector.use_onnx()`` (and ``--onnx`` on every command that loads a detector) exports each pair classifier
of a detector to ONNX, keeps the file in the dialcheck cache (``$DIALCHECK_CACHE/onnx``, keyed by a hash of
the weights, so a retrained model is exported again and an unchanged one never is), and scores pairs with
an ONNX Runtime session. Tokenization, pair batching, truncation and the label map stay those of
:class:`~dialcheck.detectors.core.PairClassifier`; only the forward pass moves. An int8 export is also indexed
by a key read from the files the classifier was loaded from (:func:`source_key`), so that ``dialcheck.load()``
of a model calibrated on ONNX int8 finds it without building the torch model (:func:`cached_int8_export`).

In float32 the scores equal torch's to about 1e-6. With ``int8=True`` the exported graph's weights are
quantized per output channel (ONNX Runtime's dynamic quantization): for the shipped MiniLM detector 1.6x the
speed of float32 on 2 CPU cores and closer to it than torch's per-tensor ``--int8`` (``benchmarks/throughput.py
--onnx``; numbers in docs/benchmarks.md). float32 on ONNX Runtime is no faster than torch for MiniLM.
Needs the ``onnx`` extra: ``pip install "dialcheck[onnx]"``.

The weights are 8-bit on an x86 CPU with VNNI and 7-bit everywhere else (:func:`int8_range`): without VNNI,
ONNX Runtime's u8s8 kernels add pairs of 8-bit products in 16 bits, which saturate. With 8-bit weights the
MPNet stage of the default cascade moved by 0.34 in probability at the median on a 2-core AVX2 CPU (human-bot
accuracy 64.92 instead of 76.96); 7-bit weights never saturate (docs/benchmarks.md, "Int8 on CPUs without
VNNI").

>>> onnx_cache_name("0123abcd" * 8, int8=True)
'0123abcd0123abcd0123abcd-int8.onnx'
>>> onnx_cache_name("0123abcd" * 8, int8=True, reduced=True)
'0123abcd0123abcd0123abcd-int8r.onnx'
>>> int8_range("flags : fpu sse2 avx2 avx512f avx512_vnni"), int8_range("flags : fpu sse2 avx2")
('full', 'reduced')
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import os
import tempfile
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ModelError

__all__ = [
    "INT8_RANGES",
    "RUNTIMES",
    "OnnxRunner",
    "cached_int8_export",
    "export_onnx",
    "has_vnni",
    "installed",
    "int8_range",
    "int8_ranges",
    "onnx_cache_name",
    "onnx_runner",
    "source_key",
    "switch_to_int8",
    "switch_to_onnx",
    "weights_digest",
]

log = logging.getLogger(__name__)

OPSET = 17
_INPUT_ORDER = ("input_ids", "attention_mask", "token_type_ids")
RUNTIMES = ("torch", "onnx", "onnx-int8")  # what a model may prefer (options.runtime) and the gate may run it on
_INSTALL = 'ONNX inference needs onnxruntime and onnx: pip install "dialcheck[onnx]"'


#: The int8 weight ranges: 8-bit ("full") and ONNX Runtime's 7-bit ``reduce_range`` ("reduced").
INT8_RANGES = ("full", "reduced")
_VNNI = {"avx512_vnni", "avx_vnni", "amx_int8"}  # /proc/cpuinfo flags of x86 CPUs whose int8 kernels never saturate


@functools.cache
def _cpuinfo() -> str:
    try:
        return Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def int8_range(cpuinfo: str | None = None) -> str:
    """The int8 weight range this machine runs without saturation: ``"full"`` on an x86 CPU with VNNI (read from
    ``/proc/cpuinfo``, or ``cpuinfo``), ``"reduced"`` elsewhere, including wherever the flags cannot be read.
    ``DIALCHECK_INT8_RANGE=full`` or ``reduced`` overrides it."""
    env = os.environ.get("DIALCHECK_INT8_RANGE", "auto").strip().lower()
    if env in INT8_RANGES:
        return env
    if env not in ("", "auto"):
        raise ModelError(f"DIALCHECK_INT8_RANGE={env!r}: expected auto, full or reduced")
    return "full" if has_vnni(cpuinfo) else "reduced"


def int8_ranges(cpuinfo: str | None = None) -> tuple[str, ...]:
    """The int8 weight ranges this CPU (``/proc/cpuinfo``, or ``cpuinfo``) computes correctly: both with VNNI,
    7-bit weights only without it (8-bit ones would saturate).

    >>> int8_ranges("flags : avx2 avx512_vnni"), int8_ranges("flags : avx2")
    (('full', 'reduced'), ('reduced',))
    """
    return INT8_RANGES if has_vnni(cpuinfo) else ("reduced",)


def has_vnni(cpuinfo: str | None = None) -> bool:
    """Whether this x86 CPU (``/proc/cpuinfo``, or ``cpuinfo``) has VNNI, so that 8-bit int8 weights do not
    saturate on it, whatever ``DIALCHECK_INT8_RANGE`` says; False wherever the flags cannot be read.

    >>> has_vnni("flags : fpu avx2 avx_vnni"), has_vnni("flags : fpu avx2")
    (True, False)
    """
    text = _cpuinfo() if cpuinfo is None else cpuinfo
    flags = {f for line in text.splitlines() if line.startswith("flags") for f in line.partition(":")[2].split()}
    return bool(flags & _VNNI)


def installed() -> bool:
    """Whether ONNX inference can run here (``onnxruntime`` and the exporter's ``onnx``), without importing them."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("onnxruntime", "onnx"))


def _ort() -> Any:
    try:
        import onnxruntime
    except ImportError:
        raise ModelError(_INSTALL) from None
    return onnxruntime


def weights_digest(model: Any) -> str:
    """SHA-256 over a torch model's class, parameter names, dtypes, shapes and values: the cache key of its
    export (two models with the same digest compute the same function)."""
    import torch

    h = hashlib.sha256(type(model).__name__.encode())
    for name, t in model.state_dict().items():
        t = t.detach().cpu().contiguous()
        h.update(f"{name}|{t.dtype}|{tuple(t.shape)}".encode())
        if t.numel():
            h.update(t.view(-1).view(torch.uint8).numpy())  # the raw bytes, hashed in place (no copy)
    return h.hexdigest()


_SMALL = 64 << 20  # files up to this size enter a source key by content, larger ones by size and time


def source_key(folder: str | Path, config: Any) -> str:
    """A key for the weights a saved classifier folder loads into, read from the files alone: the folder's own
    files (their bytes; a file over 64 MB by size and modification time), its base encoder's (size and
    modification time), the config fields that shape the model, and the dialcheck version. The cache's index
    maps it to the int8 export of those weights (:func:`cached_int8_export`), so that a later load finds the
    export without building the torch model whose digest names it."""
    from .. import __version__
    from ..backbones import resolve_base
    from .modeling import CONFIG_NAME

    folder = Path(folder)
    # bump the "1" when the way a folder becomes weights changes (modeling.load_model), so old keys stop matching
    h = hashlib.sha256(f"dialcheck {__version__} onnx source 1".encode())
    fields = {k: getattr(config, k, None) for k in ("base", "labels", "problem_type", "adapter")}
    h.update(json.dumps(fields, sort_keys=True, default=str).encode())

    def add(root: Path, by_content: bool) -> None:
        for f in sorted(p for p in root.rglob("*") if p.is_file()):
            rel = f.relative_to(root)
            if root == folder and (f.name in (CONFIG_NAME, "MODEL_CARD.md") or f.name.startswith("lexical.")):
                continue  # thresholds, the card and a lexical head do not change the classifier's weights
            st = f.stat()
            if by_content and st.st_size <= _SMALL:
                h.update(f"{rel}|{st.st_size}|".encode() + f.read_bytes())
            else:
                h.update(f"{rel}|{st.st_size}|{st.st_mtime_ns}".encode())

    add(folder, by_content=True)
    if getattr(config, "base", ".") != ".":
        add(resolve_base(config.base), by_content=False)
    return h.hexdigest()


def _index_file(key: str, folder: Path) -> Path:
    return folder / "index" / f"{key[:32]}.json"


def _index_field(reduced: bool) -> str:
    return "int8-reduced" if reduced else "int8"


def _read_index(key: str, folder: Path) -> dict[str, Any]:
    try:
        entry = json.loads(_index_file(key, folder).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return entry if isinstance(entry, dict) and entry.get("key") == key else {}


def cached_int8_export(key: str, cache: str | Path | None = None) -> Path | None:
    """The int8 export the cache's index holds for the source ``key`` (:func:`source_key`) in this machine's
    weight range (:func:`int8_range`), or None."""
    from ..backbones import cache_dir

    folder = Path(cache) if cache is not None else cache_dir() / "onnx"
    name = _read_index(key, folder).get(_index_field(int8_range() == "reduced"))
    if not isinstance(name, str) or Path(name).name != name:
        return None
    path = folder / name
    return path if path.is_file() else None


def _remember(key: str, target: Path, reduced: bool = False) -> None:
    """Record in the index beside ``target`` that the source ``key`` exports to it in its weight range (written
    atomically); a cache that cannot be written only costs the next load its speed."""
    entry = {**_read_index(key, target.parent), "key": key, _index_field(reduced): target.name}
    try:
        with _written(_index_file(key, target.parent), "cannot write the ONNX index") as tmp:
            Path(tmp).write_text(json.dumps(entry), encoding="utf-8")
    except (ModelError, OSError) as e:
        log.warning("%s; the next load builds the torch model again", e)


def onnx_cache_name(digest: str, int8: bool, reduced: bool = False) -> str:
    """File name of an export in the cache: the first 24 hex digits of the weights' digest, then ``-int8`` (8-bit
    weights) or ``-int8r`` (7-bit)."""
    return f"{digest[:24]}{('-int8r' if reduced else '-int8') if int8 else ''}.onnx"


def _input_names(sample: dict[str, Any]) -> list[str]:
    names = [k for k in _INPUT_ORDER if k in sample]
    unknown = sorted(set(sample) - set(names))
    if unknown:
        raise ModelError(f"cannot export to ONNX: the tokenizer gives inputs {unknown} the exporter does not know")
    return names


def export_onnx(model: Any, sample: dict[str, Any], path: str | Path) -> Path:
    """Export a sequence classifier (inputs as in ``sample``, a tokenizer's batch) to ``path`` (written
    atomically) with dynamic batch and sequence axes; the output is the ``logits`` tensor."""
    import torch

    names = _input_names(sample)

    class _Logits(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, *args: Any) -> Any:
            return self.inner(**dict(zip(names, args, strict=True))).logits

    wrapper = _Logits(model)
    was_training = model.training  # the exporter leaves the model in the wrapper's mode: put it back after
    try:
        with _written(Path(path), f"cannot export {type(model).__name__} to ONNX") as tmp, warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the TorchScript-based exporter's deprecation and tracer notes
            torch.onnx.export(
                wrapper,
                tuple(sample[k] for k in names),
                tmp,
                input_names=names,
                output_names=["logits"],
                dynamic_axes={**{k: {0: "batch", 1: "sequence"} for k in names}, "logits": {0: "batch"}},
                opset_version=OPSET,
                dynamo=False,
            )
    finally:
        model.train(was_training)
    return Path(path)


@contextlib.contextmanager
def _written(path: Path, failure: str) -> Iterator[str]:
    """A temporary file beside ``path`` that becomes ``path`` when the block succeeds (a cut run leaves no
    half-written export in the cache); a failure is a :class:`ModelError` starting with ``failure``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".onnx.tmp")
    os.close(fd)
    try:
        yield tmp
        os.chmod(tmp, 0o644)  # mkstemp makes it private; the cache is readable like any downloaded model
        os.replace(tmp, path)
    except Exception as e:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(e, ModelError):
            raise
        raise ModelError(f"{failure}: {e}") from e


def _quantize(src: Path, dst: Path, reduced: bool = False) -> Path:
    """Per-channel int8 dynamic quantization of ``src``'s weights into ``dst`` (atomic); ``reduced``: 7-bit
    weights (ONNX Runtime's ``reduce_range``), which CPUs without VNNI run without saturating."""
    try:
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError:
        raise ModelError(_INSTALL) from None
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # the quantizer logs a "consider pre-processing" hint on the root logger
    try:
        with _written(dst, f"cannot quantize {src} to int8") as tmp:
            quantize_dynamic(str(src), tmp, weight_type=QuantType.QInt8, per_channel=True, reduce_range=reduced)
    finally:
        root.setLevel(level)
    return dst


_POOL_LOCK = threading.Lock()  # held while a runner makes its row threads


def _free_pool_lock() -> None:
    """In a forked child: a lock of its own, free even if another thread of the parent held it at the fork."""
    global _POOL_LOCK
    _POOL_LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):  # not on Windows, which does not fork
    os.register_at_fork(after_in_child=_free_pool_lock)


class OnnxRunner:
    """An ONNX Runtime session that maps a tokenizer's batch (numpy or torch) to float32 numpy logits.

    With ``rows`` (every int8 export) each row runs alone without its padding. ONNX Runtime's dynamic int8
    quantizes each activation with a range read from the whole input tensor, so in a batch a pair's score
    would depend on the other pairs and on the padding (measured on the default: up to 0.09 between a
    dialogue checked alone and the same dialogue among others); row by row it is the pair's own. The rows
    run side by side, one per thread (``threads`` of them; 0: one per core), each on a one-thread op, the
    longest first: a single short pair keeps too few threads busy. On a 2-core AVX2 CPU the default checks
    one dialogue per call 1.5x as fast as with rows run in turn on two threads per op, and batches 1.1-1.3x
    as fast, with bit-identical scores (docs/benchmarks.md, "Rows side by side"). ``side_by_side=False``
    runs them in turn, each on ``threads`` threads per op.
    """

    def __init__(self, path: str | Path, threads: int = 0, rows: bool = False, side_by_side: bool = True) -> None:
        ort = _ort()
        opts = ort.SessionOptions()
        workers = max(1, int(threads) or os.cpu_count() or 1) if rows and side_by_side else 1
        opts.intra_op_num_threads = 1 if workers > 1 else max(0, int(threads))
        opts.inter_op_num_threads = 1
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.path = Path(path)
        try:
            self.session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        except Exception as e:  # a damaged cache file, or one from an incompatible onnxruntime
            raise ModelError(f"{path}: ONNX Runtime cannot load this export ({e}); delete it to export again") from e
        self.input_names = [i.name for i in self.session.get_inputs()]
        self.rows = rows
        self.workers = workers
        self._pool: Any = None

    def _map(self, fn: Any, sizes: list[int]) -> list[Any]:
        """``fn`` over ``range(len(sizes))``, in that order, on the runner's threads when there are several rows
        and threads; the largest rows start first, so that no thread is left with a long row at the end."""
        n = len(sizes)
        if self.workers < 2 or n < 2:
            return [fn(r) for r in range(n)]
        pool = self._pool
        if pool is None or pool[0] != os.getpid():  # a forked child has none of the parent's threads
            with _POOL_LOCK:  # two threads on a runner's first batch: one pool, not one each and one left running
                if self._pool is None or self._pool[0] != os.getpid():
                    from concurrent.futures import ThreadPoolExecutor

                    self._pool = (os.getpid(), ThreadPoolExecutor(self.workers, thread_name_prefix="dialcheck-onnx"))
                pool = self._pool
        order = sorted(range(n), key=lambda r: -sizes[r])
        out: list[Any] = [None] * n
        for r, y in zip(order, pool[1].map(fn, order), strict=True):
            out[r] = y
        return out

    def __call__(self, enc: dict[str, Any]) -> np.ndarray:
        feed = {k: np.asarray(enc[k], dtype=np.int64) for k in self.input_names}
        if not self.rows:
            return np.ascontiguousarray(self.session.run(["logits"], feed)[0], dtype=np.float32)
        n = len(feed[self.input_names[0]])
        mask = np.asarray(enc["attention_mask"], dtype=bool) if "attention_mask" in enc else None

        def row(r: int) -> np.ndarray:
            one = {k: v[r : r + 1] if mask is None else v[r][mask[r]][None] for k, v in feed.items()}
            return self.session.run(["logits"], one)[0]

        out = self._map(row, [int(m.sum()) for m in mask] if mask is not None else [0] * n)
        return np.ascontiguousarray(np.concatenate(out) if out else np.zeros((0, 0)), dtype=np.float32)


def onnx_runner(
    model: Any,
    sample: dict[str, Any],
    int8: bool = False,
    cache: str | Path | None = None,
    threads: int = 0,
    source: str | None = None,
) -> OnnxRunner:
    """A runner for ``model``: its export from the cache, made (and, with ``int8``, quantized) on first use. An
    int8 file made from a float32 export made for it keeps only the int8 file (a quarter of the size; for
    MPNet-base 110 MB instead of 550): a later float32 run exports again. ``source``, the :func:`source_key` of
    the folder ``model`` was loaded from, is recorded in the index with an int8 export."""
    from ..backbones import cache_dir

    _ort()
    folder = Path(cache) if cache is not None else cache_dir() / "onnx"
    folder.mkdir(parents=True, exist_ok=True)
    digest = weights_digest(model)
    reduced = int8 and int8_range() == "reduced"
    fp32 = folder / onnx_cache_name(digest, int8=False)
    target = folder / onnx_cache_name(digest, int8=int8, reduced=reduced)
    if not target.exists():
        made = not fp32.exists()
        # a warning, so the CLI shows it: the first check after an install exports both stages of the default
        # (MPNet-base too), up to a minute on 2 cores, and printed nothing while it did
        log.warning(
            "preparing %s for ONNX Runtime%s in %s (one time; up to a minute for a large model)",
            type(model).__name__,
            " int8" if int8 else "",
            folder,
        )
        if made:
            log.info("exporting %s to ONNX: %s (one time)", type(model).__name__, fp32)
            export_onnx(model, sample, fp32)
        if int8:
            bits = "7-bit weights: this CPU has no VNNI" if reduced else "8-bit weights"
            log.info("quantizing the ONNX export to int8 (per channel, %s): %s (one time)", bits, target)
            _quantize(fp32, target, reduced=reduced)
            if made:
                fp32.unlink(missing_ok=True)
    else:
        log.debug("ONNX export found in the cache: %s", target)
    if int8 and source:
        _remember(source, target, reduced)
    return OnnxRunner(target, threads, rows=int8)


def switch_to_int8(classifiers: list[Any], options: dict[str, Any]) -> None:
    """Torch's int8 dynamic quantization for each pair classifier, recorded in ``options``."""
    from .base import int8_model

    if options.get("onnx"):
        raise ModelError("this model already runs on ONNX Runtime: use use_onnx(int8=True) for int8")
    for clf in classifiers:
        clf.model = int8_model(clf.model)
    options["int8"] = True


def switch_to_onnx(
    classifiers: list[Any],
    options: dict[str, Any],
    int8: bool = False,
    threads: int | None = None,
    cache: str | Path | None = None,
) -> None:
    """Give each :class:`~dialcheck.detectors.core.PairClassifier` an ONNX Runtime runner and record the
    switch in ``options`` (a model's ``config.options``). ``threads`` defaults to
    :func:`dialcheck.threads.thread_count` (torch's count when torch is loaded)."""
    from ..threads import thread_count

    if options.get("int8") and not options.get("onnx"):
        raise ModelError("this model was quantized with torch (quantize()); load it again for ONNX")
    n = thread_count() if threads is None else threads
    for clf in classifiers:
        if int8 and clf.onnx_int8 is not None:  # loaded without torch weights: its int8 export is known
            clf.runner = OnnxRunner(clf.onnx_int8, n, rows=True)
            continue
        sample = clf.encode([("I have a dog called Rex.", "I never had any pets.")])
        clf.runner = onnx_runner(clf.model, sample, int8=int8, cache=cache, threads=n, source=clf.source_key)
    options["onnx"] = True
    options["int8"] = bool(int8)
