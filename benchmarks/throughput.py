"""Check throughput on real ten-turn dialogues, measured side by side in one run.

    python benchmarks/throughput.py [--model DIR] [--n 400] [--threads 2] [--onnx] [--against DIR ...]

Ten-turn dialogues are cut from the DECODE dev and human-bot dialogues (the first ten turns of every
dialogue that has at least ten). Variants: batched across dialogues (the default path), int8 dynamic
quantization, and one dialogue per call (what a naive per-reply guard does); for a model on ONNX Runtime
int8, whose rows run side by side one per thread, also both with the rows run in turn on all threads;
with ``--onnx`` also ONNX Runtime in float32 and per-channel int8 (``pip install "dialcheck[onnx]"``;
exported into the cache before timing); with ``--against``, other models (each on its preferred runtime, as
``dialcheck.load`` gives it) batched and one dialogue per call. Prints a Markdown table with dialogues/s,
pairs/s and the ratio to the default path, and for every variant other than the default how far its verdicts
and scores are from the default's.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def ten_turn_dialogues(n: int, data_dir: str | None) -> list:
    from dialcheck.datasets import load_dataset
    from dialcheck.schema import Dialogue

    out = []
    for name in ("decode.dev.v1", "decode.human_bot.v1"):
        for ex in load_dataset(name, data_dir):
            if len(ex.dialogue.turns) >= 10:
                out.append(Dialogue(ex.dialogue.turns[:10]))
    if len(out) < n:
        from dialcheck.errors import InputError

        raise InputError(f"only {len(out)} ten-turn dialogues available, {n} asked for")
    return out[:n]


def _shown(path: object) -> str:
    """A model path as printed in docs: relative to the working directory when it is under it."""
    p = Path(str(path)).resolve()
    return str(p.relative_to(Path.cwd())) if p.is_relative_to(Path.cwd()) else p.name


def timed(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    from dialcheck.cli.common import positive_int

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default=None)
    ap.add_argument("--n", type=positive_int, default=400)
    ap.add_argument("--threads", type=positive_int, default=2)
    ap.add_argument("--batch-size", type=positive_int, default=64)
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--onnx", action="store_true", help="also time ONNX Runtime, float32 and int8")
    ap.add_argument("--against", nargs="+", default=[], help="other models timed in the same run")
    args = ap.parse_args()  # before torch loads: --help and a bad number answer at once

    import torch

    from dialcheck.api import load
    from dialcheck.detectors import load_detector
    from dialcheck.detectors.onnx import OnnxRunner

    torch.set_num_threads(args.threads)
    dialogues = ten_turn_dialogues(args.n, args.data_dir)
    n_pairs = sum(len(d.same_speaker_indices()) for d in dialogues)
    det = load(args.model)
    det.predict(dialogues[:20])  # warm-up
    rows = []
    base = timed(lambda: det.predict(dialogues, batch_size=args.batch_size))
    on_onnx = bool(det.config.options.get("onnx"))  # a model that prefers ONNX Runtime runs there by default
    where = ("int8" if det.config.options.get("int8") else "float32") if on_onnx else ""
    rows.append((f"batched across dialogues (default{f', on ONNX Runtime {where}' if where else ''})", base))

    def one_per_call(d: object) -> float:
        return timed(lambda: [d.predict([x]) for x in dialogues[:100]], repeat=1) * len(dialogues) / 100

    rows.append(("one dialogue per call", one_per_call(det)))
    others = {}
    for name in args.against:
        other = load(name)
        other.predict(dialogues[:20])
        rows.append((f"one dialogue per call, {_shown(other.path)}", one_per_call(other)))
        others[f"batched, {_shown(other.path)}"] = other
    if any(getattr(c.runner, "workers", 1) > 1 for c in det.pair_classifiers()):
        in_turn = load(args.model)
        for c in in_turn.pair_classifiers():
            c.runner = OnnxRunner(c.runner.path, args.threads, rows=True, side_by_side=False)
        in_turn.predict(dialogues[:20])
        rows.append(("one dialogue per call, int8 rows in turn", one_per_call(in_turn)))
        others["batched, int8 rows in turn"] = in_turn
    others["batched, int8 dynamic quantization (torch, --int8)"] = load_detector(det.path).quantize()
    if on_onnx:
        others["batched, torch float32"] = load_detector(det.path)
    if args.onnx:
        others["batched, ONNX Runtime float32 (--onnx)"] = load_detector(det.path).use_onnx()
        others["batched, ONNX Runtime int8 per channel (--onnx --int8)"] = load_detector(det.path).use_onnx(int8=True)
    for name, other in others.items():
        other.predict(dialogues[:20])
        rows.append((name, timed(lambda o=other: o.predict(dialogues, batch_size=args.batch_size))))
    fp32 = det.predict(dialogues)
    print(
        f"date: {time.strftime('%Y-%m-%d')}; machine: {platform.machine()}, {os.cpu_count()} cores, "
        f"torch {torch.__version__}, {args.threads} threads; model: {_shown(det.path)}"
    )
    per = n_pairs / len(dialogues)
    print(f"{len(dialogues)} ten-turn dialogues, {n_pairs} same-speaker pairs ({per:.1f} per dialogue)\n")
    print("| variant | dialogues/s | pairs/s | speed vs default |")
    print("|---|---:|---:|---:|")
    for name, secs in rows:
        print(f"| {name} | {len(dialogues) / secs:.1f} | {n_pairs / secs:.0f} | {base / secs:.2f}x |")
    print("\n| variant | verdicts equal to the default's | score change: median | 90th percentile | max |")
    print("|---|---:|---:|---:|---:|")
    for name, other in others.items():
        got = other.predict(dialogues)
        agree = sum(a.contradiction == b.contradiction for a, b in zip(fp32, got, strict=True))
        moved = sorted(abs(a.score - b.score) for a, b in zip(fp32, got, strict=True))
        print(
            f"| {name} | {agree}/{len(dialogues)} | {moved[len(moved) // 2]:.4f} | "
            f"{moved[int(0.9 * (len(moved) - 1))]:.4f} | {moved[-1]:.4f} |"
        )


if __name__ == "__main__":
    from _cli import run

    run(main)
