"""Per-reply latency of the guard: one dialogue per call, in process and over HTTP, measured in one run.

    python benchmarks/latency.py [--model DIR] [--n 100] [--threads 2] [--clients 8] [--load-n 400] [--onnx]
        [--baseline-src WORKTREE/src]

What an engineer putting dialcheck in front of every reply sees: the time from handing over one
dialogue to getting its verdict. Dialogues are the first 4, 10 and 20 turns of DECODE human-bot, dev
and raw human-bot dialogues that long (cycled when fewer than ``--n``). Variants, side by side:

- ``predict``: ``det.predict([dialogue])`` in a fresh process;
- ``rank 5 candidates``: ``det.rank(context, five replies)`` (the real reply and four other bot turns);
- ``predict from a second thread``: the same calls from a thread other than the first one that ran
  torch (what a threaded web server does; torch's OpenMP workers stop spinning, see
  ``dialcheck.serve.compute``);
- ``HTTP /check``: a real ``dialcheck serve`` on a free local port, one request at a time, and
  ``--clients`` threads posting at once (throughput under load and its latency); ``HTTP /rank``: five
  candidates for a ten-turn context, one request at a time, then the clients posting /check and /rank
  alternately (a server that merges them scores both in shared batches);
- with ``--onnx``, ``predict`` and the HTTP rows again on ONNX Runtime int8 (``--onnx --int8``);
- with ``--baseline-src DIR``, each row also for the dialcheck found in ``DIR`` (e.g. ``git worktree add
  ../base REV`` and ``../base/src``), measured just before this version's.

Each in-process variant runs in its own process, so one runtime's threads never slow another's.
Prints the date, machine and a Markdown table of median / 90th / 99th percentile milliseconds and
calls per second. Needs the serve extra (``pip install "dialcheck[serve]"``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

LENGTHS = (4, 10, 20)


def dialogues_of_length(n_turns: int, count: int, data_dir: str | None) -> list:
    """The first ``n_turns`` turns of DECODE dialogues at least that long, distinct texts, cycled to ``count``."""
    from dialcheck.datasets import load_dataset
    from dialcheck.schema import Dialogue

    out, seen = [], set()
    for name in ("decode.human_bot.v1", "decode.dev.v1", "decode.human_bot_raw.v1"):
        for ex in load_dataset(name, data_dir):
            key = tuple(t.text for t in ex.dialogue.turns[:n_turns])
            if len(key) == n_turns and key not in seen:
                seen.add(key)
                out.append(Dialogue(ex.dialogue.turns[:n_turns]))
                if len(out) == count:
                    return out
    if not out:
        from dialcheck.errors import InputError

        raise InputError(f"no DECODE dialogue has {n_turns} turns")
    return (out * (count // len(out) + 1))[:count]


def percentiles(ms: list[float]) -> tuple[float, float, float]:
    """Median, 90th and 99th percentile (nearest rank) of a list of milliseconds.

    >>> percentiles([float(i) for i in range(1, 101)])
    (50.5, 90.0, 99.0)
    """
    s = sorted(ms)
    rank = lambda q: s[min(len(s) - 1, max(0, round(q * len(s)) - 1))]  # noqa: E731
    return statistics.median(s), rank(0.90), rank(0.99)


def timed_calls(fn, items: list) -> list[float]:
    out = []
    for it in items:
        t0 = time.perf_counter()
        fn(it)
        out.append((time.perf_counter() - t0) * 1000)
    return out


def _body(d: object) -> dict:
    return {"turns": [{"speaker": t.speaker, "text": t.text} for t in d.turns]}


def rank_cases(ds: list, pool: list) -> list[tuple[tuple, list[str]]]:
    """(context turns, five candidates) per dialogue: its real last turn, then four bot turns of ``pool``."""
    bot_turns = [t.text for d in pool for t in d.turns[1::2]]
    others = [[bot_turns[(i * 4 + j) % len(bot_turns)] for j in range(1, 5)] for i in range(len(ds))]
    return [(d.turns[:-1], [d.turns[-1].text, *o]) for d, o in zip(ds, others, strict=True)]


def _rank_body(context: tuple, candidates: list[str]) -> dict:
    return {"context": [{"speaker": t.speaker, "text": t.text} for t in context], "candidates": candidates}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(url: str, body: object) -> dict:
    req = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.loads(r.read())


class Server:
    """``dialcheck serve`` in a subprocess on a free port; a context manager that waits for /health."""

    def __init__(self, model: str | None, threads: int, extra: list[str], src: str | None = None) -> None:
        self.port = free_port()
        self.env = dict(os.environ, PYTHONPATH=src) if src else None  # another version's package, to compare
        cmd = [sys.executable, "-m", "dialcheck.cli", "serve", "--port", str(self.port), "--threads", str(threads)]
        cmd += (["--model", model] if model else []) + extra
        self.cmd = cmd
        self.url = f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> Server:
        self.proc = subprocess.Popen(self.cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=self.env)
        deadline = time.time() + 300
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"the server stopped: {self.proc.stderr.read().decode()[-2000:]}")
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=5) as r:
                    self.health = json.loads(r.read())
                    return self
            except OSError:
                time.sleep(0.5)
        raise SystemExit("the server did not answer /health within 300 s")

    def __exit__(self, *exc: object) -> None:
        self.proc.terminate()
        self.proc.wait(30)


def in_process(args: argparse.Namespace) -> list[tuple[str, int, list[float], float]]:
    """The in-process rows of one runtime (``args.in_process``: torch or onnx-int8), in this process."""
    import threading

    import torch

    from dialcheck.api import load
    from dialcheck.schema import Dialogue

    torch.set_num_threads(args.threads)
    onnx = args.in_process == "onnx-int8"
    det = load(args.model)
    if onnx:
        det.use_onnx(int8=True, threads=args.threads)
    suffix = ", ONNX int8" if onnx else ""
    sets = {k: dialogues_of_length(k, args.n, args.data_dir) for k in LENGTHS}
    rows = []

    def measure(name: str, k: int, fn, items: list) -> None:
        fn(items[0])  # warm-up
        t0 = time.perf_counter()
        ms = timed_calls(fn, items)
        rows.append((name, k, ms, len(items) / (time.perf_counter() - t0)))

    for k, ds in sets.items():
        measure(f"predict{suffix}", k, lambda x: det.predict([x]), ds)
    if onnx:
        return rows
    for k, ds in sets.items():
        ctxs = [(Dialogue(c), cands) for c, cands in rank_cases(ds, sets[10])]
        measure("rank 5 candidates", k, lambda x: det.rank(x[0], x[1]), ctxs)
    # last: once a second thread has run torch, the first one is slowed as well
    t = threading.Thread(
        target=lambda: measure("predict from a second thread", 10, lambda x: det.predict([x]), sets[10])
    )
    t.start()
    t.join()
    return rows


def main() -> None:
    from dialcheck.cli.common import positive_int

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default=None, help="detector folder (default: the shipped English one)")
    ap.add_argument("--n", type=positive_int, default=100, help="calls per variant and length")
    ap.add_argument("--threads", type=positive_int, default=2)
    ap.add_argument("--clients", type=positive_int, default=8, help="concurrent HTTP clients in the load variant")
    ap.add_argument("--load-n", type=positive_int, default=400, help="requests in the load variant")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--onnx", action="store_true", help="also time ONNX Runtime int8 in process and over HTTP")
    ap.add_argument(
        "--baseline-src",
        help="also time every row with dialcheck imported from this src folder (e.g. a git worktree of an earlier "
        "commit), side by side",
    )
    ap.add_argument("--in-process", choices=("torch", "onnx-int8"), help=argparse.SUPPRESS)  # one child's rows
    args = ap.parse_args()
    if args.in_process:
        print(json.dumps(in_process(args)))
        return

    import torch

    from dialcheck.api import load
    from dialcheck.datasets import data_dir

    data_dir(args.data_dir)  # a missing data directory stops here, not in a measuring process's traceback
    model = str(load(args.model).path)
    rows: list[tuple[str, int, list[float], float]] = []
    for runtime in ("torch", "onnx-int8") if args.onnx else ("torch",):
        for src in ([args.baseline_src] if args.baseline_src else []) + [None]:
            cmd = [sys.executable, __file__, "--in-process", runtime, "--model", model]
            cmd += ["--n", str(args.n), "--threads", str(args.threads)]
            cmd += ["--data-dir", args.data_dir] if args.data_dir else []
            env = dict(os.environ, PYTHONPATH=src) if src else None
            done = subprocess.run(cmd, capture_output=True, text=True, env=env)
            if done.returncode:  # its error (one line for a user error) and status, not a CalledProcessError
                print(done.stderr.rstrip(), file=sys.stderr)
                sys.exit(done.returncode)
            out = done.stdout
            tag = f" (baseline: {src})" if src else ""
            rows += [(r[0] + tag, *r[1:]) for r in json.loads(out.strip().splitlines()[-1])]

    sets = {k: dialogues_of_length(k, args.n, args.data_dir) for k in LENGTHS}
    bodies = {k: [_body(d) for d in ds] for k, ds in sets.items()}
    ranks = [_rank_body(c, cands) for c, cands in rank_cases(sets[10], sets[10])]
    servers = []
    for suffix, extra in [("", [])] + ([(", ONNX int8", ["--onnx", "--int8"])] if args.onnx else []):
        if args.baseline_src:
            servers.append((f"{suffix} (baseline: {args.baseline_src})", extra, args.baseline_src))
        servers.append((suffix, extra, None))
    for suffix, extra, src in servers:
        with Server(model, args.threads, extra, src) as srv:
            check = lambda b, u=srv.url: post(u + "/check", b)  # noqa: E731
            for k, bs in bodies.items():
                check(bs[0])
                t0 = time.perf_counter()
                ms = timed_calls(check, bs)
                rows.append((f"HTTP /check{suffix}", k, ms, len(bs) / (time.perf_counter() - t0)))
            rank = lambda b, u=srv.url: post(u + "/rank", b)  # noqa: E731
            rank(ranks[0])
            t0 = time.perf_counter()
            ms = timed_calls(rank, ranks)
            rows.append((f"HTTP /rank 5 candidates{suffix}", 10, ms, len(ranks) / (time.perf_counter() - t0)))
            n = args.load_n
            checks = (bodies[10] * (n // len(bodies[10]) + 1))[:n]
            mixed = [(rank, ranks[i % len(ranks)]) if i % 2 else (check, c) for i, c in enumerate(checks)]
            for what, calls in [("/check", [(check, b) for b in checks]), ("/check and /rank alternating", mixed)]:
                with ThreadPoolExecutor(args.clients) as pool:
                    list(pool.map(lambda fb: fb[0](fb[1]), calls[: args.clients]))  # warm-up
                    before = get_json(srv.url + "/health").get("checks", {})
                    t0 = time.perf_counter()
                    ms = list(pool.map(lambda fb: timed_calls(fb[0], [fb[1]])[0], calls))
                    rate = len(calls) / (time.perf_counter() - t0)
                after = get_json(srv.url + "/health").get("checks", {})
                name = f"HTTP {what}{suffix}, {args.clients} clients"
                if after:  # servers that count their batches
                    done = after["requests"] - before["requests"]
                    name += f" ({done} check jobs in {after['batches'] - before['batches']} batches)"
                rows.append((name, 10, ms, rate))

    print(
        f"date: {time.strftime('%Y-%m-%d')}; machine: {platform.machine()}, {os.cpu_count()} cores, "
        f"torch {torch.__version__}, {args.threads} threads; model: {Path(model).name}; "
        f"{args.n} calls per row (the {args.clients}-client rows: {args.load_n} requests)\n"
    )
    print("| variant | turns | median ms | 90th pct ms | 99th pct ms | calls/s |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, k, ms, rate in rows:
        p50, p90, p99 = percentiles(ms)
        print(f"| {name} | {k} | {p50:.1f} | {p90:.1f} | {p99:.1f} | {rate:.1f} |")


def get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=60) as r:
        return json.loads(r.read())


if __name__ == "__main__":
    from _cli import run

    run(main)
