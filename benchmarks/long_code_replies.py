"""Long code replies: a cascade's second stage re-reading only the first stage's top pairs of pieces, against all;
or (``--compare bound``) both stages scoring at most ``piece_pairs`` pairs of pieces per earlier reply, against all.

    python benchmarks/long_code_replies.py [--model decode-cascade-v9] [--chats 4] [--replies 6] [--seed 0]
        [--top 4] [--compare reread|bound] [--bound 64] [--threads 2] [--json OUT]

Builds ``--chats`` seeded coding chats: a user asks for code ``--replies`` times and an assistant answers each time
with a sentence or two and a fenced Python block of about 300-600 tokens (functions, loops, comments; generated
here, so nothing is downloaded); one chat in two, the last reply states a fact about the code (the Python version,
the default timeout) unlike the first reply. ``--json``'s folder is made before the run. Each chat is checked with
``dialcheck.check`` on ``--model`` (a cascade), twice side by side: with ``reread_pieces`` ``--top`` (the second
stage re-reads, of each earlier reply read in pieces, the ``--top`` pairs of pieces the first stage scored highest;
default the model's, ``REREAD_PIECES`` where it is 0) and 0 (every pair of pieces, as before 2026-12-03); both
stages keep their own ``piece_pairs``. With ``--compare bound`` the two readings are instead ``piece_pairs``
``--bound`` on both stages (default the first stage's, ``PIECE_PAIRS`` where it is 0; of an earlier reply read in
more pairs of pieces, only that many are scored, those sharing the rarest words: ``UtteranceDetector.piece_pairs``)
and 0 (every pair, as before 2026-12-03), ``reread_pieces`` the model's. Each pair of runs goes after a first call
that is not timed (both orders of the two are averaged). Prints, per chat: the tokens of its replies, the pairs each
stage scored each way, the seconds of each, their ratio, and whether the two verdicts (flag, score to 3 places,
evidence) agree.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

NAMES = ("config", "records", "rows", "items", "cache", "payload", "users", "orders", "events", "batch", "jobs")
VERBS = ("load", "parse", "fetch", "validate", "merge", "normalize", "retry", "flush", "index", "group", "export")
TOPICS = (
    "read the CSV export and group the orders by customer",
    "retry the HTTP calls with a backoff",
    "cache the parsed config between runs",
    "validate the incoming JSON payload",
    "write the results to a SQLite table",
    "add logging and a command line",
    "run the jobs in a thread pool",
    "stream the file instead of reading it whole",
)


def _function(rng: np.random.Generator) -> list[str]:
    """A Python function of 9-16 lines: a docstring, a loop with a break, some of a skip, a count and a log line,
    and maybe a check and a sort."""
    verb, noun, other, key = (str(rng.choice(NAMES if i else VERBS)) for i in range(4))
    n = int(rng.integers(2, 100))
    out = [
        f"def {verb}_{noun}({noun}: list[dict], limit: int = {int(rng.integers(5, 500))}) -> dict[str, int]:",
        f'    """{verb.capitalize()} the {noun} and count them by {other}; stop after ``limit``."""',
        "    counts: dict[str, int] = {}",
        f"    for i, item in enumerate({noun}):",
        "        if i >= limit:",
        "            break",
    ]
    inner = [
        [
            f"        # skip the {key} the upstream service marks as deleted",
            '        if item.get("deleted"):',
            "            continue",
        ],
        [f'        value = str(item.get("{key}", {n}))', "        counts[value] = counts.get(value, 0) + 1"],
        [f'        log.debug("{verb} %s: %s", "{key}", item.get("{key}"))'],
    ]
    for block in rng.permutation(len(inner))[: int(rng.integers(1, 4))]:
        out += inner[int(block)]
    if rng.random() < 0.5:
        out += [f"    if len(counts) > {n}:", f'        raise ValueError(f"too many {key}: {{len(counts)}}")']
    if rng.random() < 0.5:
        out += [
            f"    {other} = sorted(counts, key=counts.get, reverse=True)[:{n}]",
            f'    log.info("top {other}: %s", {other})',
        ]
    return [*out, "    return counts"]


def code_reply(rng: np.random.Generator, topic: str, fact: str) -> str:
    """An assistant's reply: a sentence, a fenced block of two or three functions, a closing sentence."""
    code = ["import logging", "", "log = logging.getLogger(__name__)", ""]
    for _ in range(int(rng.integers(2, 4))):
        code += [*_function(rng), ""]
    return (
        f"Sure, here is a version that does it: we {topic}. {fact}\n\n```python\n"
        + "\n".join(code).rstrip()
        + "\n```\n\nEach function logs what it skips, so you can see in the log which records were left out."
    )


def coding_chat(seed: int, replies: int) -> list[dict[str, str]]:
    """A chat of ``replies`` user requests and code replies; with an odd ``seed`` the last reply contradicts the
    first reply's stated Python version and timeout."""
    rng = np.random.default_rng(seed)
    topics = [TOPICS[int(i)] for i in rng.permutation(len(TOPICS))[:replies]]
    facts = ["It needs Python 3.11 or later, and the default timeout is 30 seconds."] + [""] * (replies - 1)
    if seed % 2:
        facts[-1] = "It works on Python 3.6, and there is no timeout at all by default."
    msgs = []
    for topic, fact in zip(topics, facts, strict=False):
        msgs.append({"role": "user", "content": f"Can you {topic}?"})
        msgs.append({"role": "assistant", "content": code_reply(rng, topic, fact)})
    return msgs


def _counting(classifier: Any) -> list[int]:
    """Counts the distinct pairs ``classifier.score`` is asked for, call by call (a stage's reading)."""
    count = [0]
    score = classifier.score

    def counted(pairs: Any, *args: Any, **kwargs: Any) -> Any:
        count[0] += len(set(map(tuple, pairs)))
        return score(pairs, *args, **kwargs)

    classifier.score = counted
    return count


def main(argv: list[str] | None = None) -> int:
    from dialcheck.cli.common import nonnegative_int, positive_int

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="decode-cascade-v9", help="a cascade (folder or shipped name)")
    ap.add_argument("--chats", type=positive_int, default=4)
    ap.add_argument("--replies", type=positive_int, default=6, help="code replies per chat (at least 2)")
    ap.add_argument("--seed", type=nonnegative_int, default=0)
    ap.add_argument("--top", type=positive_int, default=None, help="pairs of pieces re-read (default: the model's)")
    ap.add_argument(
        "--compare",
        choices=("reread", "bound"),
        default="reread",
        help="reread: reread_pieces --top against 0; bound: piece_pairs --bound on both stages against 0",
    )
    ap.add_argument("--bound", type=positive_int, default=None, help="piece_pairs (default: the model's first stage's)")
    ap.add_argument("--threads", type=positive_int, default=2, help="torch threads")
    ap.add_argument("--json", default=None, help="write the numbers here")
    args = ap.parse_args(argv)
    if args.replies < 2:
        ap.error("--replies: at least 2, so that the last reply has an earlier one to be read against")
    json_path = Path(args.json) if args.json else None
    if json_path is not None:  # before the run, not after minutes of it
        if json_path.is_dir():
            ap.error(f"--json: {json_path} is a directory, expected a file name")
        json_path.parent.mkdir(parents=True, exist_ok=True)
    import torch
    from _output import emit

    import dialcheck
    from dialcheck.detectors import CascadeDetector
    from dialcheck.detectors.cascade import REREAD_PIECES
    from dialcheck.detectors.utterance import PIECE_PAIRS
    from dialcheck.errors import InputError

    torch.set_num_threads(args.threads)
    det = dialcheck.load(args.model)
    if not isinstance(det, CascadeDetector):
        raise InputError(f"{args.model} is not a cascade: it has no second stage to re-read pieces")
    top = args.top or det.reread_pieces
    if not top and args.compare == "reread":  # saved with reread_pieces 0: "top 0" would be every pair twice
        top = REREAD_PIECES
        print(f"{args.model} re-reads every pair of pieces (reread_pieces 0): comparing top {top}", file=sys.stderr)
    bound = args.bound or det.first.piece_pairs
    if not bound and args.compare == "bound":  # saved with piece_pairs 0: "piece_pairs 0" would be every pair twice
        bound = PIECE_PAIRS
        note = f"{args.model} scores every pair of pieces (piece_pairs 0): comparing piece_pairs {bound}"
        print(note, file=sys.stderr)
    read = _counting(det.second.classifier)
    read_first = _counting(det.first.classifier)
    # the two readings compared, as (reread_pieces, piece_pairs of the first stage, of the second)
    if args.compare == "bound":
        readings = {"on": (top, bound, bound), "off": (top, 0, 0)}
        what = f"piece_pairs {bound} vs every pair of pieces (reread_pieces {top})"
    else:  # each stage keeps its own piece_pairs (the second's was set to the first's)
        own = (det.first.piece_pairs, det.second.piece_pairs)
        readings = {"on": (top, *own), "off": (0, *own)}
        what = f"top {top} vs every pair"
    clf = det.first.classifier
    opts = det.config.options
    runtime = ("ONNX Runtime int8" if opts.get("int8") else "ONNX Runtime") if opts.get("onnx") else "torch"
    lines = [
        f"{time.strftime('%Y-%m-%d')}, {platform.machine()}, {torch.get_num_threads()} torch threads, "
        f"{args.model} ({runtime}), {what}\n",
        "| chat | reply tokens | first-stage pairs (on / off) | pairs re-read (on / off) | s on | s off | ratio "
        "| verdicts agree (on / off) |",
        "|---|---|---:|---:|---:|---:|---:|---|",
    ]
    results: dict[str, Any] = {"model": args.model, "runtime": runtime, "compare": args.compare, "top": top}
    results |= {"bound": bound if args.compare == "bound" else None, "threads": args.threads, "chats": []}

    def timed(chat: list[dict[str, str]], reading: str) -> tuple[float, int, int, Any]:
        det.reread_pieces, det.first.piece_pairs, det.second.piece_pairs = readings[reading]
        read[0] = read_first[0] = 0
        start = time.perf_counter()
        v = dialcheck.check({"messages": chat}, model=args.model, speaker="assistant")
        return time.perf_counter() - start, read_first[0], read[0], v

    for c in range(args.chats):
        chat = coding_chat(args.seed + c, args.replies)
        if dialcheck.load(args.model) is not det:
            raise InputError(f"{args.model}: dialcheck.check does not share the loaded detector")
        tokens = [clf._token_len(m["content"]) for m in chat if m["role"] == "assistant"]
        timed(chat, "on")  # the first call of a chat (tokenizing, caches) is not timed
        runs: dict[str, list[tuple[float, int, int, Any]]] = {"on": [], "off": []}
        for k in ("on", "off", "off", "on"):
            runs[k].append(timed(chat, k))
        s_top, s_all = (statistics.mean(r[0] for r in runs[k]) for k in ("on", "off"))
        (_, f_top, n_top, v_top), (_, f_all, n_all, v_all) = runs["on"][0], runs["off"][0]
        agree = (v_top.contradiction, round(v_top.score, 3), v_top.evidence) == (
            v_all.contradiction,
            round(v_all.score, 3),
            v_all.evidence,
        )
        row = {
            "seed": args.seed + c,
            "reply_tokens": tokens,
            "first_pairs_on": f_top,
            "first_pairs_off": f_all,
            "pairs_on": n_top,
            "pairs_off": n_all,
            "seconds_on": round(s_top, 2),
            "seconds_off": round(s_all, 2),
            "verdict_on": [v_top.contradiction, round(v_top.score, 3), list(v_top.evidence)],
            "verdict_off": [v_all.contradiction, round(v_all.score, 3), list(v_all.evidence)],
            "agree": agree,
        }
        results["chats"].append(row)
        lines.append(
            f"| {args.seed + c} ({'contradicts' if (args.seed + c) % 2 else 'consistent'}) | "
            f"{min(tokens)}-{max(tokens)} | {f_top} / {f_all} | {n_top} / {n_all} | {s_top:.2f} | {s_all:.2f} | "
            f"{s_all / s_top:.1f}x | {'yes' if agree else 'no'}: {v_top.contradiction} {v_top.score:.3f} "
            f"{list(v_top.evidence)} / {v_all.contradiction} {v_all.score:.3f} {list(v_all.evidence)} |"
        )
    emit("\n".join(lines), results, json_path=json_path)
    return 0


if __name__ == "__main__":
    from _cli import run

    raise SystemExit(run(main))
