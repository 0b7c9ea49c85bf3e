"""Would static int8 (activation ranges calibrated once) replace dynamic int8 for the default's stages?

    python benchmarks/int8_static.py [--model NAME_OR_DIR] [--calibrate 256] [--n 150] [--threads 2]

Dynamic int8 reads each activation's range at run time, from whatever it is given: batch-dependent unless each
pair runs alone (what the runtime does since session 57, at some cost for MPNet). A static export fixes the
ranges from calibration pairs (DECODE train pairs, MinMax, QDQ, weights per channel), so a batch can run as one
and still give each pair its own score. For each stage: the float32 export, the dynamic int8 export run row by
row and the static one run batched, on the same pairs of ``--n`` human-bot dialogues (not the calibration
pairs): time, and how far each int8 variant's contradiction probability is from float32's. Writes the exports to
a temporary folder, never to the cache.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def main() -> None:
    from dialcheck.cli.common import nonnegative_int, positive_int

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=None, help="detector (default: the shipped English one)")
    ap.add_argument("--calibrate", type=positive_int, default=256, help="DECODE train pairs to calibrate on")
    ap.add_argument("--n", type=positive_int, default=150, help="human-bot dialogues")
    ap.add_argument("--threads", type=nonnegative_int, default=2, help="threads (0 = the runtime's default)")
    args = ap.parse_args()

    import numpy as np
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    import dialcheck
    from dialcheck.datasets import load_dataset
    from dialcheck.detectors import load_detector
    from dialcheck.detectors.onnx import OnnxRunner, _quantize, export_onnx
    from dialcheck.evaluation.decode import SPLITS
    from dialcheck.threads import set_threads

    set_threads(args.threads)
    top = dialcheck.load(args.model)
    loaded = top._pair() if hasattr(top, "_pair") else [top]
    stages = [load_detector(d.path) for d in loaded]  # with their torch weights, to export
    for d, stage in zip(loaded, stages, strict=True):  # read as in the model (a cascade sets them on its stages)
        for reading in d.reading_options():
            setattr(stage, reading, getattr(d, reading))
    train = list(load_dataset("decode.train_pairs.v1"))[: args.calibrate]
    examples = list(load_dataset(SPLITS["human_bot"]))[: args.n]
    tmp = Path(tempfile.mkdtemp(prefix="int8-static-"))
    print(
        "| stage | pairs | float32 (s) | dynamic, row by row (s) | static, batched (s) "
        "| dynamic: mean / max |Δp| | static: mean / max |Δp| |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for stage in stages:
        clf = stage.classifier
        pairs = sorted({p for e in examples for p in stage._pairs(e.dialogue)[1]}, key=lambda p: len(p[0]) + len(p[1]))
        batches = [clf.encode(pairs[i : i + 64], tensors="np") for i in range(0, len(pairs), 64)]
        sample = clf.encode([("I have a dog called Rex.", "I never had any pets.")])  # as the runtime exports
        fp32 = export_onnx(clf.model, sample, tmp / f"{stage.path.name}.onnx")
        dynamic = _quantize(fp32, tmp / f"{stage.path.name}-dynamic.onnx")
        calib = [(p.first, p.second) for p in train]

        names = OnnxRunner(fp32).input_names
        feeds = [{k: v.astype(np.int64) for k, v in clf.encode([c], tensors="np").items() if k in names} for c in calib]

        class Reader(CalibrationDataReader):
            def __init__(self, feeds: list[dict]) -> None:
                self.feeds = iter(feeds)

            def get_next(self) -> dict | None:
                return next(self.feeds, None)

        static = tmp / f"{stage.path.name}-static.onnx"
        quantize_static(
            str(fp32), str(static), Reader(feeds), quant_format=QuantFormat.QDQ, per_channel=True,
            activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
        )  # fmt: skip
        out = {}
        for name, path, rows in (("float32", fp32, False), ("dynamic", dynamic, True), ("static", static, False)):
            runner = OnnxRunner(path, args.threads, rows=rows)
            start = time.perf_counter()
            try:
                logits = np.concatenate([runner(b) for b in batches])
            except Exception as e:  # a measurement: say what failed and go on
                print(f"| {stage.path.name} | {len(pairs)} | {name} failed to run: {str(e)[:160]} |||||", flush=True)
                break
            e = np.exp(logits - logits.max(1, keepdims=True))
            out[name] = (time.perf_counter() - start, (e / e.sum(1, keepdims=True))[:, clf.contradiction_index])
        if len(out) < 3:
            continue
        d = {k: np.abs(out[k][1] - out["float32"][1]) for k in ("dynamic", "static")}
        print(
            f"| {stage.path.name} | {len(pairs)} | {out['float32'][0]:.2f} | {out['dynamic'][0]:.2f} | "
            f"{out['static'][0]:.2f} | {d['dynamic'].mean():.3f} / {d['dynamic'].max():.3f} | "
            f"{d['static'].mean():.3f} / {d['static'].max():.3f} |",
            flush=True,
        )


if __name__ == "__main__":
    from _cli import run

    run(main)
