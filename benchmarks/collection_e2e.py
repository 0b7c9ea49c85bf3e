"""End-to-end contradiction collection (issue 6) on a registered corpus (default DECODE dev dialogues),
with the shipped detector standing in for annotators (NOT human labels).

Steps: candidate contexts (question turn + referent at distance d = 1, 3, 5) from the first N DECODE
dev dialogues -> FQness under SmolLM2-135M-Instruct -> top-k and k random contexts per distance ->
one reply per context from two local generators (SmolLM2 greedy, SmolLM2 nucleus sampling top-p 0.9)
-> the shipped English detector labels each reply against its referent -> rates of detector-flagged
contradictions for FQness vs random contexts, with a one-tailed Welch t-test on flagged replies per
context; context-feature analysis; annotation tasks exported; optional leave-one-generator-out run.
Each step's file is reused when present (re-run the same command to resume).

    OMP_NUM_THREADS=1 nice -n 19 .venv/bin/python benchmarks/collection_e2e.py --out runs/collection-e2e
    # task-oriented (CI-ToD navigate dev; unpunctuated user questions, the system replies)
    python benchmarks/collection_e2e.py --out runs/collection-citod --dataset citod.navigate.dev.v1 \
        --dialogues 139 --reply-speaker system --history
    # Chinese (CDConv dev, u1 b1 u2 -> the bot's b2) with Gemma-3-270m for FQness and replies
    python benchmarks/collection_e2e.py --out runs/collection-cdconv --dataset cdconv.dev.v1 --lm gemma-3-270m \
        --dialogues 300 --distances 1 --reply-speaker bot --history

Labels come from the shipped default for the replies' language ("en": the DECODE detector, reply vs
referent; "zh": the CDConv detector on u1 b1 u2 b2, any category counts as contradictory).

Equivalent CLI steps::

    dialcheck collect contexts --dataset decode.dev.v1 --limit 40 --top-k 8 --random-k 8 --threads 1 \\
        --all-scores runs/c/all.jsonl --out runs/c/contexts.jsonl
    dialcheck collect responses --contexts runs/c/contexts.jsonl --max-new-tokens 24 --threads 1 \\
        --generator smollm2-greedy=SmolLM2-135M-Instruct:greedy \\
        --generator smollm2-sample=SmolLM2-135M-Instruct:nucleus1 --out runs/c/replies.jsonl
    dialcheck collect autolabel --replies runs/c/replies.jsonl --threads 1 --out runs/c/labelled.jsonl
    dialcheck collect analyse --contexts runs/c/contexts.jsonl --replies runs/c/labelled.jsonl
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import logging
import os
import platform
import random
import shlex
import sys
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

DECODINGS = (("greedy", "greedy"), ("sample", "nucleus1"))


def main() -> None:
    from _cli import comma_list

    from dialcheck.cli.common import positive_int, seed_number

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--dataset", default="decode.dev.v1", help="registered dataset (dialogues)")
    p.add_argument("--dialogues", type=positive_int, default=40, help="first N dialogues of the dataset")
    p.add_argument("--history", action="store_true", help="generators and the detector see the earlier turns too")
    p.add_argument("--reply-speaker", default=None, help="only contexts this speaker answers (e.g. bot, system)")
    p.add_argument("--k", type=positive_int, default=8, help="contexts per distance by FQness, and as many random ones")
    p.add_argument("--distances", type=comma_list(positive_int), default="1,3,5", help="turns back, comma-separated")
    p.add_argument("--max-new-tokens", type=positive_int, default=24)
    p.add_argument("--lm", default="SmolLM2-135M-Instruct")
    p.add_argument("--seed", type=seed_number, default=0)
    p.add_argument("--threads", type=positive_int, default=1)
    p.add_argument("--logo", action="store_true", help="also run leave-one-generator-out (trains MiniLM twice)")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s", stream=sys.stderr)

    import torch

    torch.set_num_threads(args.threads)
    from dialcheck.api import load
    from dialcheck.collection import (
        CollectedReply,
        CollectionContext,
        FQnessScorer,
        GeneratorSpec,
        analyse_feature,
        candidate_contexts,
        collect_responses,
        contradictions_per_context,
        export_tasks,
        label_with_detector,
        read_records,
        select_random,
        select_top_k,
        ttest_greater,
        write_records,
    )
    from dialcheck.datasets import load_dataset
    from dialcheck.generation.nbest import DecodingConfig, NBestGenerator
    from dialcheck.language import dialogue_language

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    timings: dict[str, float] = {}
    if (out / "results.json").exists():  # a re-run reuses earlier steps: keep the times they took
        timings.update(json.loads((out / "results.json").read_text(encoding="utf-8")).get("timings") or {})
    distances = tuple(args.distances)

    # 1. contexts
    all_path, ctx_path = out / "all_contexts.jsonl", out / "contexts.jsonl"
    examples = load_dataset(args.dataset)[: args.dialogues]
    if not all_path.exists():
        cands = [
            c
            for i, e in enumerate(examples)
            for c in candidate_contexts(
                e.dialogue,
                distances,
                source=e.id or f"dev{i}",
                prefix=e.id or f"dev{i}",
                history=args.history,
                reply_speaker=args.reply_speaker,
            )
        ]
        t0 = time.time()
        scorer = FQnessScorer.load(args.lm, batch_size=8)
        write_records(all_path, scorer.score(cands, show_progress_bar=True))
        timings["fqness_s"] = round(time.time() - t0, 1)
        del scorer
    scored = read_records(all_path, CollectionContext)
    if not ctx_path.exists():
        top = select_top_k(scored, args.k)
        rnd = select_random(scored, args.k, args.seed, exclude=[c.id for c in top])
        write_records(ctx_path, [*top, *rnd])
    contexts = read_records(ctx_path, CollectionContext)

    # 2. replies from two generators (two decodings of the same LM)
    short = "smollm2" if args.lm == "SmolLM2-135M-Instruct" else Path(args.lm).name.lower()
    generators = tuple((f"{short}-{suffix}", dec) for suffix, dec in DECODINGS)
    rep_path = out / "replies.jsonl"
    if not rep_path.exists():
        t0 = time.time()
        gen = NBestGenerator.load(args.lm)
        specs = [
            GeneratorSpec(name, gen, DecodingConfig.parse(dec, max_new_tokens=args.max_new_tokens, seed=args.seed))
            for name, dec in generators
        ]
        write_records(rep_path, collect_responses(contexts, specs, batch_size=4, show_progress_bar=True))
        timings["generation_s"] = round(time.time() - t0, 1)
        del gen
    replies = read_records(rep_path, CollectedReply)

    # 3. the shipped detector stands in for annotators; annotation tasks for humans
    lab_path = out / "labelled_by_detector.jsonl"
    language = "zh" if dialogue_language(replies[0].dialogue) == "zh" else "en"
    det = load(language=language)
    labeller = {"detector": det.path.name if det.path else "default", "tau": det.tau}
    who = out / "labelled_by_detector.json"  # which detector made the labels: relabel when it changed
    if not lab_path.exists() or not who.exists() or json.loads(who.read_text(encoding="utf-8")) != labeller:
        write_records(lab_path, label_with_detector(replies, det))
        who.write_text(json.dumps(labeller) + "\n", encoding="utf-8")
    labelled = read_records(lab_path, CollectedReply)
    export_tasks(replies, out / "annotation_tasks.csv", rows_per_task=5, seed=args.seed)

    # 4. report
    sel = {c.id: c.selection for c in contexts}
    dist = {c.id: c.distance for c in contexts}
    rows = []
    for d in (*distances, None):
        for s in ("fqness", "random"):
            rs = [r for r in labelled if sel[r.context_id] == s and (d is None or dist[r.context_id] == d)]
            cs = {r.context_id for r in rs}
            fq = [c.fqness for c in contexts if c.id in cs and c.fqness is not None]
            flagged = sum(bool(r.label) for r in rs)
            rows.append(
                {
                    "distance": "all" if d is None else d,
                    "selection": s,
                    "contexts": len(cs),
                    "replies": len(rs),
                    "flagged": flagged,
                    "rate": round(flagged / len(rs), 4) if rs else None,
                    "mean_fqness": round(sum(fq) / len(fq), 3) if fq else None,
                }
            )
    counts = contradictions_per_context(labelled)
    a = [float(counts.get(c.id, 0)) for c in contexts if c.selection == "fqness"]
    b = [float(counts.get(c.id, 0)) for c in contexts if c.selection == "random"]
    tt = ttest_greater(a, b)
    # FQness of contexts that provoked at least one flagged reply vs none (all selected contexts)
    hit = [c.fqness for c in contexts if c.fqness is not None and counts.get(c.id, 0) > 0]
    miss = [c.fqness for c in contexts if c.fqness is not None and counts.get(c.id, 0) == 0]
    tt_fq = ttest_greater(hit, miss) if len(hit) > 1 and len(miss) > 1 else None
    per_gen = {}
    for g, _ in generators:
        rs = [r for r in labelled if r.generator == g]
        per_gen[g] = {"replies": len(rs), "flagged": sum(bool(r.label) for r in rs)}
    features = [analyse_feature(contexts, counts, f).to_dict() for f in ("contains_how", "declarative_yes_no")]
    logo = None
    if args.logo:
        from dialcheck.collection import leave_one_generator_out
        from dialcheck.detectors import UtteranceDetector
        from dialcheck.training import TrainConfig, train_detector

        cfg = TrainConfig(epochs=3, batch_size=16, seed=args.seed, threads=args.threads)

        base = "all-MiniLM-L6-v2+zh" if language == "zh" else "all-MiniLM-L6-v2"

        def make(pairs):
            d = UtteranceDetector(base=base, adapter={"type": "lora", "r": 16, "alpha": 32}, tau=0.5)
            return train_detector(d, pairs, config=cfg)

        # Every context here was answered by every generator, so excluding shared contexts would leave
        # nothing to train on: keep one generator's reply per context (seeded, balanced), as when each
        # context of a collection goes to one generator.
        rng = random.Random(args.seed)
        ids = sorted({r.context_id for r in labelled})
        rng.shuffle(ids)
        owner = {cid: generators[i % len(generators)][0] for i, cid in enumerate(ids)}
        logo_rows = [r for r in labelled if owner[r.context_id] == r.generator]
        logo = [r.to_dict() for r in leave_one_generator_out(logo_rows, make, seed=args.seed)]
    result = {
        "date": dt.date.today().isoformat(),
        "command": " ".join(shlex.quote(x) for x in sys.argv),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores (shared), torch {torch.__version__}, "
        f"{args.threads} thread(s)",
        "labels": f"shipped detector {det.path.name if det.path else 'default'} standing in for annotators "
        f"(not human labels), tau={det.tau}",
        "dataset": args.dataset,
        "dialogues": len(examples),
        "candidate_contexts": dict(Counter(c.distance for c in scored)),
        "k_per_distance": args.k,
        "generators": dict(generators),
        "max_new_tokens": args.max_new_tokens,
        "table": rows,
        "per_generator": per_gen,
        "ttest_flagged_per_context_fqness_gt_random": {
            "mean_fqness": round(sum(a) / len(a), 4),
            "mean_random": round(sum(b) / len(b), 4),
            "t": round(tt.t, 4),
            "df": round(tt.df, 2),
            "p_one_tailed": round(tt.p, 4),
        },
        "ttest_fqness_flagged_gt_unflagged_contexts": None
        if tt_fq is None
        else {
            "contexts_flagged": len(hit),
            "contexts_unflagged": len(miss),
            "mean_fqness_flagged": round(sum(hit) / len(hit), 3),
            "mean_fqness_unflagged": round(sum(miss) / len(miss), 3),
            "t": round(tt_fq.t, 4),
            "df": round(tt_fq.df, 2),
            "p_one_tailed": round(tt_fq.p, 4),
        },
        "random_note": "random contexts are drawn from the candidates not in the top-k, so at a distance with "
        "few candidates they are close to the bottom of the FQness ranking",
        "context_features": features,
        "logo": logo,
        "timings": timings,
    }
    (out / "results.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    (out / "results.md").write_text(markdown(result), encoding="utf-8")
    print(json.dumps(result, indent=2))


def markdown(result: dict) -> str:
    """The tables of docs/benchmarks.md ("Contradiction collections") from a results.json."""
    lines = [
        f"{result['dataset']}: {result['dialogues']} dialogues, candidate contexts {result['candidate_contexts']}; "
        f"{result['labels']}",
        "",
        "| distance | selection | contexts | replies | detector-flagged | rate | mean log FQness |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in result["table"]:
        rate = "" if r["rate"] is None else f"{r['rate']:.2f}"
        fq = "" if r["mean_fqness"] is None else f"{r['mean_fqness']:.2f}"
        cells = (r["distance"], r["selection"], r["contexts"], r["replies"], r["flagged"], rate, fq)
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    t = result["ttest_flagged_per_context_fqness_gt_random"]
    lines += [
        "",
        f"Flagged replies per context, FQness top-k {t['mean_fqness']:.2f} vs random {t['mean_random']:.2f}: "
        f"one-tailed Welch t = {t['t']:.2f}, df {t['df']:.1f}, p = {t['p_one_tailed']:.3f}.",
        "Per generator: " + ", ".join(f"{g} {v['flagged']}/{v['replies']}" for g, v in result["per_generator"].items()),
    ]
    for f in result["context_features"]:
        lines.append(f"Context feature: `{json.dumps(f)}`")
    if result.get("logo"):
        lines += [
            "",
            "| held-out generator | train pairs | test pairs | excluded train rows | accuracy |",
            "|---|---:|---:|---:|---:|",
        ]
        for r in result["logo"]:
            lines.append(
                f"| {r['generator']} | {r['train_pairs']} | {r['test_pairs']} | {r['excluded_train_rows']} | "
                f"{r['accuracy']:.3f} |"
            )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    from _cli import run

    run(main)
