"""Long turns: does the detector still find a contradiction inside a paragraph-long turn?

    python benchmarks/long_turns.py [--model DIR] [--fillers 3] [--dev 500] [--chunk-tokens N] [--threads 2]

Chat assistants answer in paragraphs; DECODE's turns are one or two sentences and fit the model's
128-token window in pairs (5 of dev's 13,552 pairs do not). The Long Turns (LT) transform
(:func:`dialcheck.probes.checklist.build_long_turns`) pads every turn with ``--fillers`` utterances of
other dialogues, the original at a random place, labels and evidence unchanged. On DECODE human-bot and
the first ``--dev`` rebuilt-dev dialogues, side by side in one run: the detector on the original
dialogues, and on their LT versions reading pairs too long for the window piece by piece
(``long_turns="chunk"``, the default, pieces of ``--chunk-tokens``) or truncated (``"truncate"``, the
reading before chunking). Prints a Markdown table: accuracy, precision / recall, ROC AUC, evidence F1
(dev), pairs scored, seconds.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def main() -> None:
    from dialcheck.cli.common import comma_choices, nonnegative_int, positive_int, seed_number

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default=None, help="detector folder (default: the shipped English one)")
    ap.add_argument("--fillers", type=nonnegative_int, default=3, help="utterances added to each turn")
    ap.add_argument("--dev", type=positive_int, default=500, help="rebuilt-dev dialogues (the first N)")
    ap.add_argument("--seed", type=seed_number, default=0)
    ap.add_argument("--threads", type=positive_int, default=2)
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--chunk-tokens", type=positive_int, default=None, help="piece size (default: the detector's, 32)")
    ap.add_argument(
        "--sets",
        type=comma_choices(("human-bot", "dev")),
        default="human-bot,dev",
        help="comma-separated: human-bot, dev",
    )
    args = ap.parse_args()  # before torch loads: --help and a bad number answer at once

    import torch

    from dialcheck.api import load
    from dialcheck.datasets import load_dataset
    from dialcheck.detectors.cascade import CascadeDetector
    from dialcheck.evaluation.decode import decode_metrics
    from dialcheck.probes.checklist import build_long_turns

    torch.set_num_threads(args.threads)

    det = load(args.model)
    stages = [det.first, det.second] if isinstance(det, CascadeDetector) else [det]  # the default is a cascade
    if args.chunk_tokens:
        for d in stages:
            if hasattr(d, "chunk_tokens"):
                d.chunk_tokens = args.chunk_tokens
    clfs = det.pair_classifiers()
    sets = {
        "human-bot": list(load_dataset("decode.human_bot.v1", args.data_dir)),
        f"dev (first {args.dev})": list(load_dataset("decode.dev.v1", args.data_dir))[: args.dev],
    }
    rows = []
    wanted = args.sets
    for name, examples in sets.items():
        if name.split(" ")[0] not in wanted:
            continue
        long = build_long_turns(examples, fillers=args.fillers, seed=args.seed)
        words = [len(t.text.split()) for e in long for t in e.dialogue.turns]
        over = sum(
            not all(c.pair_fits(e.dialogue.turns[i].text, e.dialogue.turns[-1].text) for c in clfs)
            for e in long
            for i in e.dialogue.same_speaker_indices()
        )
        total = sum(len(e.dialogue.same_speaker_indices()) for e in long)
        mean = sum(words) / len(words)
        print(f"{name}: LT turns average {mean:.0f} words; {over} of {total} pairs exceed a window")
        for variant, exs, mode in (
            ("original", examples, "chunk"),
            ("LT, chunk (default)", long, "chunk"),
            ("LT, truncate", long, "truncate"),
        ):
            det.long_turns = mode
            n_pairs = 0
            reals = [c.score for c in clfs]

            def counting(pairs, *a, real, **kw):
                nonlocal n_pairs
                n_pairs += len(pairs)
                return real(pairs, *a, **kw)

            for c, real in zip(clfs, reals, strict=True):
                c.score = lambda pairs, *a, real=real, **kw: counting(pairs, *a, real=real, **kw)
            t0 = time.perf_counter()
            verdicts = det.predict([e.dialogue for e in exs])
            secs = time.perf_counter() - t0
            for c, real in zip(clfs, reals, strict=True):
                c.score = real
            m = decode_metrics("long_turns", exs, verdicts)
            rows.append((name, variant, m, n_pairs, secs))
    det.long_turns = "chunk"

    print(
        f"\ndate: {time.strftime('%Y-%m-%d')}; machine: {platform.machine()}, {os.cpu_count()} cores, torch "
        f"{torch.__version__}, {args.threads} threads; model: {det.path.name if det.path else det}; "
        f"fillers {args.fillers}, seed {args.seed}\n"
    )
    print("| set | reading | accuracy | precision / recall | ROC AUC | evidence F1 | pairs scored | seconds |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for name, variant, m, n_pairs, secs in rows:
        # "–" where a metric is undefined and so left out (precision with nothing flagged, recall with no
        # contradiction, ROC AUC with one class or on dev), as decode_tau_sweep.py shows it
        ev, p, r, auc = (
            _cell(m, k, d) for k, d in (("evidence_f1", 2), ("precision", 1), ("recall", 1), ("roc_auc", 2))
        )
        print(f"| {name} | {variant} | {m['accuracy']:.2f} | {p} / {r} | {auc} | {ev} | {n_pairs} | {secs:.1f} |")


def _cell(metrics: dict[str, float], key: str, digits: int) -> str:
    """``metrics[key]`` to ``digits`` places, or "–" where :func:`decode_metrics` left it out as undefined.

    >>> _cell({"precision": 50.0}, "precision", 1), _cell({}, "recall", 1)
    ('50.0', '–')
    """
    return f"{metrics[key]:.{digits}f}" if key in metrics else "–"


if __name__ == "__main__":
    from _cli import run

    run(main)
