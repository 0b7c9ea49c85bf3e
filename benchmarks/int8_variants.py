"""ONNX Runtime int8 variants against float32, per pair, for detectors' pair classifiers on this CPU.

    python benchmarks/int8_variants.py [--models decode-utterance-minilm-v10,decode-utterance-mpnet-v1]
                                       [--pairs 800] [--threads 2]

The pairs are the first ``--pairs`` same-speaker (earlier turn, last turn) pairs of ``throughput.py``'s ten-turn
DECODE dialogues. Variants of the float32 export: per-channel signed 8-bit weights (what dialcheck uses on an x86
CPU with VNNI), the same with ``reduce_range`` (7-bit weights: ONNX Runtime's remedy for u8s8 saturation on CPUs
without VNNI, and what dialcheck uses there: ``dialcheck.detectors.onnx.int8_range``) and unsigned weights (u8u8,
which never saturates but runs slower). For each: seconds,
speed against float32, how far the contradiction probability moves (median, 90th percentile, max) and how many
pair verdicts flip at the detector's τ. int8 arithmetic depends on the CPU: say which one (``lscpu``) with the
numbers. Needs ``pip install "dialcheck[onnx]"``.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def probabilities(path, clf, col: int, pairs: list, threads: int) -> tuple:
    """The contradiction probability of each pair from the ONNX file ``path``, and the seconds it took."""
    import numpy as np

    from dialcheck.detectors.onnx import OnnxRunner

    runner, out = OnnxRunner(path, threads=threads), []
    start = time.perf_counter()
    for k in range(0, len(pairs), 64):
        logits = runner(clf.encode(pairs[k : k + 64]))
        e = np.exp(logits - logits.max(1, keepdims=True))
        out.append((e / e.sum(1, keepdims=True))[:, col])
    return np.concatenate(out), time.perf_counter() - start


def main() -> None:
    from dialcheck.cli.common import positive_int

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="decode-utterance-minilm-v10,decode-utterance-mpnet-v1")
    ap.add_argument("--pairs", type=positive_int, default=800)
    ap.add_argument("--threads", type=positive_int, default=2)
    ap.add_argument("--data-dir", default=None)
    args = ap.parse_args()  # before torch and ONNX Runtime load: --help and a bad number answer at once

    import numpy as np
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    sys.path.insert(0, str(Path(__file__).resolve().parent))  # throughput.py, beside this script
    from throughput import ten_turn_dialogues

    from dialcheck.backbones import cache_dir
    from dialcheck.detectors import default_model_path, load_detector
    from dialcheck.detectors.modeling import shipped_or_path
    from dialcheck.detectors.onnx import int8_range, onnx_cache_name, onnx_runner, weights_digest

    torch.set_num_threads(args.threads)
    logging.getLogger().setLevel(logging.ERROR)  # the quantizer's "consider pre-processing" hint
    dialogues = ten_turn_dialogues(400, args.data_dir)
    pairs = [(d.turns[i].text, d.turns[-1].text) for d in dialogues for i in d.same_speaker_indices()][: args.pairs]
    print(f"{len(pairs)} same-speaker pairs of ten-turn DECODE dialogues, {args.threads} threads\n")
    print("| model | variant | seconds | speed vs float32 | probability change: median / p90 / max | flipped |")
    print("|---|---|---:|---:|---|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models.split(","):
            det = load_detector(shipped_or_path(name, default_model_path().parent))
            clf = det.pair_classifiers()[0]
            col = det.config.labels.index("contradiction")
            sample = clf.encode(pairs[:1])
            onnx_runner(clf.model, sample)  # the float32 export, kept in the cache: the variants are made from it
            digest = weights_digest(clf.model)
            fp32 = cache_dir() / "onnx" / onnx_cache_name(digest, int8=False)
            files = {"float32": fp32}
            mine = int8_range()
            for label, weight_type, reduce in (
                ("int8, 8-bit weights" + (" (dialcheck's here)" if mine == "full" else ""), QuantType.QInt8, False),
                ("int8, 7-bit weights" + (" (dialcheck's here)" if mine == "reduced" else ""), QuantType.QInt8, True),
                ("uint8 weights (u8u8)", QuantType.QUInt8, False),
            ):
                files[label] = Path(tmp) / f"{digest[:24]}-{len(files)}.onnx"
                quantize_dynamic(
                    str(fp32), str(files[label]), weight_type=weight_type, per_channel=True, reduce_range=reduce
                )

            base, t0 = probabilities(fp32, clf, col, pairs, args.threads)
            for label, path in files.items():
                p, t = (base, t0) if label == "float32" else probabilities(path, clf, col, pairs, args.threads)
                d = np.abs(p - base)
                flips = int(((p >= det.tau) != (base >= det.tau)).sum())
                change = f"{np.median(d):.4f} / {np.quantile(d, 0.9):.4f} / {d.max():.4f}"
                print(f"| {name} | {label} | {t:.1f} | {t0 / t:.2f}x | {change} | {flips} |")


if __name__ == "__main__":
    from _cli import run

    run(main)
