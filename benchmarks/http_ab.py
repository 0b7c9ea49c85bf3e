"""One /check request at a time to two servers, interleaved: this checkout's `dialcheck serve` and another's.

    python benchmarks/http_ab.py --baseline-src ../base/src [--turns 4] [--n 100] [--reps 3] [--threads 1]

``benchmarks/latency.py`` measures the baseline's rows, then this version's, minutes apart; a few milliseconds
of difference between its HTTP rows can be the machine, not the code. Here both servers run at once (the
shipped default, each on its own free port) and every dialogue is posted to one and then the other, the order
swapped every repetition, so both see the same machine. Dialogues are the first ``--turns`` turns of DECODE
dialogues that long (``latency.dialogues_of_length``). Prints the median and mean milliseconds of each side and
their ratio. Needs the serve extra (``pip install "dialcheck[serve]"``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from latency import dialogues_of_length, free_port

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def start(src: str, port: int, threads: int) -> subprocess.Popen:
    """`dialcheck serve` from the package in ``src`` on ``port``, once it answers /health."""
    env = dict(os.environ, PYTHONPATH=str(Path(src).resolve()))
    cmd = [sys.executable, "-m", "dialcheck", "serve", "--port", str(port), "--threads", str(threads)]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(600):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1)
            return proc
        except OSError:
            if proc.poll() is not None:
                raise SystemExit(f"the server from {src} exited with code {proc.returncode}") from None
            time.sleep(0.5)
    proc.terminate()
    raise SystemExit(f"the server from {src} did not answer /health in 5 minutes")


def post(port: int, body: bytes) -> float:
    """Milliseconds from sending one /check request to reading its whole answer."""
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}/check", data=body, headers={"Content-Type": "application/json"}
    )
    t0 = time.perf_counter()
    with urllib.request.urlopen(req) as r:
        r.read()
    return 1000 * (time.perf_counter() - t0)


def main(argv: list[str] | None = None) -> int:
    from dialcheck.cli.common import nonnegative_int, positive_int

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline-src", required=True, help="the other checkout's src folder")
    ap.add_argument("--turns", type=positive_int, default=4)
    ap.add_argument("--n", type=positive_int, default=100, help="dialogues per repetition")
    ap.add_argument("--reps", type=positive_int, default=3)
    ap.add_argument(
        "--threads", type=nonnegative_int, default=1, help="threads of each server (both run at once; 0 = all cores)"
    )
    ap.add_argument("--data-dir", default=None)
    args = ap.parse_args(argv)
    if not (Path(args.baseline_src) / "dialcheck").is_dir():  # else its server exits at once, said only as a code
        ap.error(f"argument --baseline-src: {args.baseline_src} holds no dialcheck package (give a checkout's src)")
    ds = dialogues_of_length(args.turns, args.n, args.data_dir)
    bodies = [json.dumps({"turns": [{"speaker": t.speaker, "text": t.text} for t in d.turns]}).encode() for d in ds]
    here = str(Path(__file__).resolve().parents[1] / "src")
    sides = {"baseline": args.baseline_src, "this": here}
    ports = {k: free_port() for k in sides}
    procs = {k: start(src, ports[k], args.threads) for k, src in sides.items()}
    ms: dict[str, list[float]] = {k: [] for k in sides}
    try:
        for b in bodies[:5]:  # warm-up
            for k in sides:
                post(ports[k], b)
        for rep in range(args.reps):
            order = ("baseline", "this") if rep % 2 == 0 else ("this", "baseline")
            for b in bodies:
                for k in order:
                    ms[k].append(post(ports[k], b))
    finally:
        for p in procs.values():
            p.terminate()
    print(f"date: {time.strftime('%Y-%m-%d')}; {args.turns}-turn dialogues, {len(bodies)} x {args.reps} per side")
    print("| server | median ms | mean ms | requests |")
    print("|---|---:|---:|---:|")
    for k, v in ms.items():
        print(f"| {k} | {statistics.median(v):.2f} | {statistics.mean(v):.2f} | {len(v)} |")
    ratio = statistics.median(ms["baseline"]) / statistics.median(ms["this"])
    print(f"\nspeed, this / baseline (medians): {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    from _cli import run

    raise SystemExit(run(main))
