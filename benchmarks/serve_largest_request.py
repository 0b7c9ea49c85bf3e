"""How long the largest request `dialcheck serve` accepts holds its compute thread.

    python benchmarks/serve_largest_request.py [--model DIR] [--threads 2] [--repeat 3]

The server caps a request at ``--max-dialogues`` (256) dialogues and ``--max-chars`` (500,000) characters
of text (:data:`dialcheck.serve.app.MAX_CHARS`), so that one request cannot hold the compute thread, and
every request waiting behind it, for minutes. This builds the largest /check request under both caps:
256 ten-turn dialogues whose turns are DECODE dev utterances joined to the same length (500,000 / 2,560 =
195 characters, about 45 tokens, so every pair still fits the 128-token window). It posts it to the app
in process (FastAPI's test client, no socket) after one small warm-up request, and prints the seconds per
request, the pairs scored and the pairs/s. Needs the serve extra (``pip install "dialcheck[serve]"``).
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def largest_request(n_dialogues: int, max_chars: int, data_dir: str | None, seed: int = 0) -> list[dict]:
    """``n_dialogues`` ten-turn dialogues of equal-length turns whose text adds up to ``max_chars``."""
    from dialcheck.datasets import load_dataset

    utterances = [t.text for ex in load_dataset("decode.dev.v1", data_dir) for t in ex.dialogue.turns]
    per_turn = max_chars // (n_dialogues * 10)
    rng = random.Random(seed)

    def turn() -> str:
        text = ""
        while len(text) < per_turn:
            text = f"{text} {rng.choice(utterances)}".strip()
        return text[:per_turn]

    return [{"turns": [turn() for _ in range(10)]} for _ in range(n_dialogues)]


def main() -> None:
    from dialcheck.cli.common import positive_int

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default=None, help="detector folder (default: the shipped English default)")
    ap.add_argument("--threads", type=positive_int, default=2)
    ap.add_argument("--repeat", type=positive_int, default=3)
    ap.add_argument("--data-dir", default=None)
    args = ap.parse_args()

    import torch
    from fastapi.testclient import TestClient

    from dialcheck.api import load
    from dialcheck.io import parse_dialogue
    from dialcheck.serve.app import MAX_CHARS, create_app

    torch.set_num_threads(args.threads)
    dialogues = largest_request(256, MAX_CHARS, args.data_dir)
    chars = sum(len(t) for d in dialogues for t in d["turns"])
    det = load(args.model)
    # pairs the model reads (a turn too long for the window would be read in several): the utterance detector's
    pairs = sum(len(det._pairs(parse_dialogue(d))[1]) for d in dialogues) if hasattr(det, "_pairs") else None
    seconds = []
    with TestClient(create_app(det)) as client:
        client.post("/check", json={"dialogues": dialogues[:4]}).raise_for_status()  # warm-up
        for _ in range(args.repeat):
            start = time.perf_counter()
            r = client.post("/check", json={"dialogues": dialogues})
            seconds.append(time.perf_counter() - start)
            r.raise_for_status()
            assert len(r.json()["verdicts"]) == len(dialogues)
    med = statistics.median(seconds)
    print(
        f"{time.strftime('%Y-%m-%d')}, {platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}, "
        f"{args.threads} threads, model {args.model or 'default'}"
    )
    print(f"| request | characters | pairs | seconds (median of {args.repeat}) | pairs/s |")
    print("|---|---:|---:|---:|---:|")
    rate = f"{pairs / med:.0f}" if pairs else "–"
    print(f"| 256 ten-turn dialogues | {chars:,} | {pairs if pairs else '–'} | {med:.1f} | {rate} |")


if __name__ == "__main__":
    from _cli import run

    run(main)
