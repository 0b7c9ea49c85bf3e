"""DECODE (Nie et al. 2021) Table 3 setting: does re-ranking by the detector lower the contradiction rate?

For every human-bot conversation, the bot's last turn (the one a human flagged or not) is removed and the
generator proposes 10 replies for the bot from the rest (beam search, and top-k sampling with k=40).
The chosen reply is the generator's best candidate (no re-ranking) or the best candidate the detector
does not call contradictory (``filter`` policy; least contradictory one if all are). The contradiction
rate of the chosen replies is judged by the detector -- the same one that re-ranked them, so the
re-ranked rate is optimistic by construction: it counts only the contradictions the detector itself can
see. ``--judge`` adds a second, independently trained detector as judge.

    nice -n 10 python benchmarks/rerank_decode_table3.py --detector src/dialcheck/models/decode-utterance-minilm-v3 \
        --out runs/rerank-table3 --limit 300
    python benchmarks/rerank_decode_table3.py --out runs/rerank-table3 --report-only --detector ...

Candidates are cached in ``<out>/candidates-<setting>.jsonl`` (the run resumes from them).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import random
import shlex
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from dialcheck.cli.common import nonnegative_int, positive_int
from dialcheck.datasets import load_dataset
from dialcheck.generation import DecodingConfig, rerank_many
from dialcheck.schema import Dialogue


def contexts(limit: int, seed: int, data_dir: str | None) -> list[tuple[str, Dialogue, str, bool]]:
    """(id, context without the bot's last turn, bot speaker, was the original last turn a contradiction)."""
    out = []
    for ex in load_dataset("decode.human_bot.v1", data_dir):
        d = ex.dialogue
        if len(d.turns) < 2:
            continue
        ctx = Dialogue(d.turns[:-1], meta={"id": ex.id})
        out.append((ex.id, ctx, d.turns[-1].speaker, ex.label))
    if limit and limit < len(out):
        out = random.Random(seed).sample(out, limit)
    return out


def generate(args: argparse.Namespace, items: list, cfg: DecodingConfig, path: Path) -> dict[str, list[dict]]:
    done: dict[str, list[dict]] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                r = json.loads(line)
                done[r["id"]] = r["candidates"]
    todo = [it for it in items if it[0] not in done]
    if todo:
        import torch

        from dialcheck.generation import NBestGenerator

        torch.set_num_threads(args.threads)
        gen = NBestGenerator.load(args.lm, max_context_tokens=args.max_context_tokens)
        t0 = time.time()
        with path.open("a", encoding="utf-8") as f:
            for k, (rid, ctx, speaker, _) in enumerate(todo, start=1):
                cands = gen.generate([ctx], cfg, speaker=speaker)[0]
                rec = [{"text": c.text, "score": c.score} for c in cands]
                done[rid] = rec
                f.write(json.dumps({"id": rid, "candidates": rec}, ensure_ascii=False) + "\n")
                f.flush()
                if k % 10 == 0:
                    rate = (time.time() - t0) / k
                    print(f"{cfg.name}: {k}/{len(todo)} ({rate:.1f} s per context)", file=sys.stderr)
    return done


def rates(items: list, cands: dict[str, list[dict]], detector, judges: dict) -> dict:
    ctxs = [ctx for _, ctx, _, _ in items]
    speakers = {rid: sp for rid, _, sp, _ in items}
    lists = [cands[rid] for rid, _, _, _ in items]
    # one speaker for all: every context's reply is the bot's, which is the second-to-last speaker here
    assert all(ctx.turns[-1].speaker != speakers[rid] for rid, ctx, _, _ in items)
    reranked = rerank_many(ctxs, lists, detector, policy="filter")
    first = [c[0]["text"] for c in lists]  # the generator's 1-best
    chosen = [r.chosen.text if r.chosen else first[i] for i, r in enumerate(reranked)]
    out: dict = {"contexts": len(items), "all_candidates_flagged": sum(1 for r in reranked if r.counts.get("fallback"))}
    for name, judge in judges.items():
        for label, replies in (("without", first), ("with", chosen)):
            dialogues = [
                Dialogue((*ctx.turns, type(ctx.turns[0])(speakers[rid], reply)), meta=ctx.meta)
                for (rid, ctx, _, _), reply in zip(items, replies, strict=True)
            ]
            v = judge.predict(dialogues)
            out[f"{name}/{label}_rerank"] = round(sum(x.contradiction for x in v) / len(v), 4)
    out["changed_choice"] = sum(a != b for a, b in zip(first, chosen, strict=True))
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--detector", required=True, help="detector that re-ranks and judges")
    p.add_argument("--judge", default=None, help="an independently trained detector as a second judge")
    p.add_argument("--out", required=True)
    p.add_argument("--lm", default=None)
    p.add_argument("--settings", default="beam10,topk10")
    p.add_argument("--limit", type=nonnegative_int, default=0, help="random N contexts (0 = all 764)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-new-tokens", type=positive_int, default=24)
    p.add_argument("--max-context-tokens", type=positive_int, default=256)
    p.add_argument("--threads", type=positive_int, default=1)
    p.add_argument("--data-dir", default=None)
    p.add_argument("--report-only", action="store_true", help="only score cached candidates")
    args = p.parse_args()

    from dialcheck.api import load

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    items = contexts(args.limit, args.seed, args.data_dir)
    detector = load(args.detector)
    judges = {"detector": detector}
    if args.judge:
        judges["judge"] = load(args.judge)
    results = {}
    for spec in args.settings.split(","):
        cfg = DecodingConfig.parse(spec, max_new_tokens=args.max_new_tokens)
        path = out / f"candidates-{cfg.name}.jsonl"
        if args.report_only:
            cands = {json.loads(x)["id"]: json.loads(x)["candidates"] for x in path.read_text().splitlines() if x}
        else:
            cands = generate(args, items, cfg, path)
        have = [it for it in items if it[0] in cands]
        results[cfg.name] = rates(have, cands, detector, judges)
    import torch

    meta = {
        "command": "python " + " ".join(shlex.quote(a) for a in sys.argv),
        "date": dt.date.today().isoformat(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {args.threads} torch thread(s), "
        f"torch {torch.__version__}",
        "detector": args.detector,
        "judge": args.judge,
        "lm": args.lm or "SmolLM2-135M-Instruct",
        "tau": detector.tau,
    }
    (out / "results.json").write_text(json.dumps({"meta": meta, "results": results}, indent=2) + "\n")
    print(json.dumps({"meta": meta, "results": results}, indent=2))


if __name__ == "__main__":
    from _cli import run

    run(main)
