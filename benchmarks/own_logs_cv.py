"""Would labelled logs of real bot conversations help? Cross-validation on DECODE human-bot.

The DECODE detector is trained on crowd-written contradictions; its false alarms on real bot
conversations (raw human-bot precision about 32%) are what keeps it from the human-bot target. A team
running a chatbot has its own logs. This benchmark measures what ``dialcheck train --dialogues`` buys
with such logs, using the human-bot conversations as "your logs" in K folds grouped by conversation:

- fold k's training file: every human-bot dialogue and every raw bot turn (``human_bot_raw``) of the
  conversations outside fold k, in the labelled format of ``dialcheck evaluate --data``. Human-bot
  names no evidence turns, so only the consistent dialogues give pairs (negatives: real bot turns
  that do not contradict); the contradictions are skipped and counted;
- fold k's test file: the human-bot dialogues of the conversations in fold k;
- ``control``: the same continuation of the starting detector (same DECODE subset, epochs, seed)
  without the logs, so that the gain is the logs', not the extra training's; ``start``: the starting
  detector itself; ``adapted-top`` (``--unannotated top``): the fold runs also learn from the
  human-bot contradictions, each with the turn the starting detector scores highest as its evidence.
  Every continuation keeps its final weights (no early stopping on DECODE's
  validation, which cannot see what the logs teach); tau is calibrated on it as usual. RCT and
  rebuilt dev (no human-bot conversation in them) show the cost elsewhere.

Pooled human-bot accuracy over the K test folds is reported beside RCT and dev (mean over the fold
runs). Every run is a ``dialcheck`` command (printed); finished runs are skipped when re-run.

    python benchmarks/own_logs_cv.py --out runs/own_logs_cv --threads 1
    python benchmarks/own_logs_cv.py --out runs/own_logs_cv --table     # the table of finished runs
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shlex
import subprocess
import sys
from pathlib import Path

from dialcheck.cli.common import comma_choices, nonnegative_float, nonnegative_int, positive_int
from dialcheck.datasets import load_dataset
from dialcheck.evaluation.metrics import roc_auc
from dialcheck.io import example_record
from dialcheck.schema import Example

# v3, the default when docs/benchmarks.md's cross-validation was measured (kept so its commands still reproduce it)
SHIPPED = str(Path(__file__).resolve().parents[1] / "src/dialcheck/models/decode-utterance-minilm-v3")


def conversation(e: Example) -> str:
    """The human-bot conversation an example comes from (raw turns carry ``#turn`` after its id)."""
    return e.id.split("#")[0]


def fold_of(key: str, k: int, seed: int = 0) -> int:
    """A stable fold for a conversation id (seeded hash, independent of file order).

    >>> fold_of("39d988a9", 5) == fold_of("39d988a9", 5)
    True
    """
    return int(hashlib.sha1(f"{seed}:{key}".encode()).hexdigest()[:8], 16) % k


def write_folds(out: Path, k: int, seed: int, data_dir: str | None) -> dict[str, int]:
    hb = load_dataset("decode.human_bot.v1", data_dir)
    raw = load_dataset("decode.human_bot_raw.v1", data_dir)
    counts: dict[str, int] = {}
    for f in range(k):
        train = [e for e in hb + raw if fold_of(conversation(e), k, seed) != f]
        test = [e for e in hb if fold_of(conversation(e), k, seed) == f]
        for name, rows in ((f"fold{f}-train.jsonl", train), (f"fold{f}-test.jsonl", test)):
            with (out / name).open("w", encoding="utf-8") as w:
                for e in rows:
                    w.write(json.dumps(example_record(e), ensure_ascii=False) + "\n")
            counts[name] = len(rows)
    return counts


def run(cmd: list[str]) -> None:
    print("+ " + " ".join(shlex.quote(c) for c in cmd), file=sys.stderr, flush=True)
    subprocess.run(cmd, check=True)


def dialcheck(*args: str) -> list[str]:
    return [sys.executable, "-m", "dialcheck.cli", *args]


def fold_count(text: str) -> int:
    """An argparse type: at least two folds (one fold would leave no logs to train on)."""
    try:
        k = int(text)
    except ValueError:
        return positive_int(text)  # its message for what is not a whole number
    if k < 2:
        raise argparse.ArgumentTypeError(f"must be at least 2, got {k}")
    return k


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--init", default=SHIPPED, help="detector to continue (default: v3, as in the documented runs)")
    ap.add_argument("--folds", type=fold_count, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--limit", type=positive_int, default=2000, help="DECODE train groups in each continuation")
    from dialcheck.training.data import AUGMENTATIONS

    pick = comma_choices(AUGMENTATIONS)  # checked here, not by the first train run after the folds are written
    ap.add_argument(
        "--augment", type=lambda text: ",".join(pick(text)), default="random_premise,restate,perturb", help="as train"
    )
    ap.add_argument("--epochs", type=nonnegative_float, default=1.0, help="train --epochs of each continuation")
    ap.add_argument("--repeat", type=positive_int, default=1, help="--dialogues-repeat of the fold runs")
    ap.add_argument(
        "--unannotated",
        choices=("skip", "top"),
        default="skip",
        help="train --unannotated of the fold runs: 'top' also trains on the human-bot contradictions, "
        "with the starting detector's top pair as evidence (runs named foldK-top, row 'adapted-top')",
    )
    ap.add_argument("--splits", default="rct,dev", help="DECODE splits evaluated beside the human-bot folds")
    ap.add_argument("--threads", type=nonnegative_int, default=1, help="train/evaluate --threads (0 = all cores)")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument(
        "--calibrate",
        action="store_true",
        help="only recalibrate the starting detector's tau on each fold's training file (train --epochs 0 "
        "--calibrate-on; runs calK); the table row 'start, tau from logs' applies each fold's tau to the "
        "start run's stored predictions",
    )
    ap.add_argument("--table", action="store_true", help="only print the table of finished runs")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    k = args.folds
    tests = [str(out / f"fold{f}-test.jsonl") for f in range(k)]
    dd = ["--data-dir", args.data_dir] if args.data_dir else []
    if args.calibrate and not args.table:
        for f in range(k):
            model = out / f"cal{f}"
            if not (model / "dialcheck.json").exists():
                cal = ["--calibrate-on", tests[f].replace("-test", "-train"), "--threads", str(args.threads)]
                run(dialcheck("train", "--init", args.init, "--epochs", "0", "--out", str(model), *cal, *dd))
    elif not args.table:
        if not (out / "folds.json").exists():
            counts = write_folds(out, k, args.seed, args.data_dir)
            (out / "folds.json").write_text(json.dumps(counts, indent=2) + "\n")
        # --eval-every beyond the run: the final weights, not those of the best DECODE validation (with
        # --limit 2000 it has 227 dialogues and picks a step by noise; the logs are another domain anyway)
        common = ["--limit", str(args.limit), "--augment", args.augment, "--epochs", f"{args.epochs:g}"]
        common += ["--eval-every", "1000000"]
        common += ["--threads", str(args.threads), "--no-progress", *dd]
        runs: list[tuple[str, list[str], list[str]]] = [("start", [], tests), ("control", [], tests)]
        sfx = "-top" if args.unannotated == "top" else ""
        if sfx:  # start and control do not depend on it: run (and shared) by the default variant
            runs = []
        runs += [(f"fold{f}{sfx}", [tests[f].replace("-test", "-train")], [tests[f]]) for f in range(k)]
        for name, train_files, test_files in runs:
            model = args.init if name == "start" else str(out / name)
            if name != "start" and not (Path(model) / "dialcheck.json").exists():
                extra = [a for f in train_files for a in ("--dialogues", f)]
                if train_files:
                    extra += ["--dialogues-repeat", str(args.repeat), "--unannotated", args.unannotated]
                run(dialcheck("train", "--init", args.init, "--out", model, *common, *extra))
            result, preds = out / f"eval-{name}.json", out / f"eval-{name}.pred.jsonl"
            if not (result.exists() and preds.exists()):
                data = [a for f in test_files for a in ("--data", f)]
                opts = ["--splits", args.splits, *data, "--json", str(result), "--predictions", str(preds)]
                opts += ["--threads", str(args.threads)]
                run(dialcheck("evaluate", "--model", model, *opts, "--no-progress", *dd))
    tau = json.loads((Path(args.init) / "dialcheck.json").read_text())["thresholds"]["tau"]
    print(table(out, k, args.splits.split(","), tau))
    return 0


def fixed_tau(files: list[Path], tau: float, splits: list[str], tests: set[str]) -> tuple[float, float, list[float]]:
    """From stored predictions: pooled human-bot ROC AUC and accuracy at ``tau`` over the fold test
    files named in ``tests``, and each DECODE split's accuracy at ``tau``."""
    gold: list[bool] = []
    score: list[float] = []
    by_split: dict[str, list[bool]] = {s: [] for s in splits}
    for f in files:
        for line in f.read_text().splitlines():
            r = json.loads(line)
            if r["split"] in tests:
                gold.append(bool(r["gold"]))
                score.append(float(r["score"]))
            elif r["split"] in by_split:
                by_split[r["split"]].append((r["score"] >= tau) == bool(r["gold"]))
    acc = 100 * sum((s >= tau) == g for s, g in zip(score, gold, strict=True)) / len(gold)
    per_split = [100 * sum(v) / len(v) if v else float("nan") for v in by_split.values()]
    return 100 * roc_auc(gold, score), acc, per_split


def _finished(out: Path, k: int, sfx: str) -> list[int]:
    return [f for f in range(k) if all((out / f"eval-fold{f}{sfx}{x}").exists() for x in (".json", ".pred.jsonl"))]


def table(out: Path, k: int, splits: list[str], tau: float) -> str:
    """Pooled human-bot accuracy over the test folds and the DECODE splits per run, at each model's own
    tau and at the starting model's tau (from the stored predictions), and the pooled human-bot ROC AUC.

    Every row pools the same folds: those finished by every adapted variant that has started (all K
    when none has)."""
    done = [fs for fs in (_finished(out, k, ""), _finished(out, k, "-top")) if fs]
    folds = sorted(set.intersection(*map(set, done))) if done else list(range(k))
    tests = {f"fold{f}-test" for f in folds}
    head = "| run | human-bot (pooled folds) | n | " + " | ".join(splits) + " |"
    head += f" human-bot at tau {tau:.3f} | " + " | ".join(f"{s} at tau {tau:.3f}" for s in splits)
    head += " | human-bot ROC AUC |"
    lines = [
        f"folds {', '.join(map(str, folds))} of {k}",
        "",
        head,
        "|---|---:|---:|" + "---:|" * (2 * len(splits) + 2),
    ]
    rates: list[str] = []
    for name in ("start", "control", "adapted", "adapted-top"):
        sfx = "-top" if name == "adapted-top" else ""
        runs = [out / f"eval-fold{f}{sfx}.json" for f in folds]
        files = runs if name.startswith("adapted") else [out / f"eval-{name}.json"]
        if not folds or not all(f.exists() and f.with_suffix(".pred.jsonl").exists() for f in files):
            lines.append(f"| {name} | (not run) |" + " |" * (2 * len(splits) + 3))
            continue
        results = [json.loads(f.read_text()) for f in files]
        correct = n = 0.0
        for r in results:
            for key in tests:
                if f"{key}/n" in r:
                    correct += r[f"{key}/accuracy"] * r[f"{key}/n"] / 100
                    n += r[f"{key}/n"]
        cells = []
        for s in splits:
            vals = [r[f"{s}/accuracy"] for r in results if f"{s}/accuracy" in r]
            cells.append(f"{sum(vals) / len(vals):.2f}" if vals else "")
        auc, acc, per_split = fixed_tau([f.with_suffix(".pred.jsonl") for f in files], tau, splits, tests)
        cells += [f"{acc:.2f}", *(f"{a:.2f}" for a in per_split), f"{auc:.2f}"]
        lines.append(f"| {name} | {100 * correct / n:.2f} | {n:.0f} | " + " | ".join(cells) + " |")
        rates.append(f"{name} {_rates([f.with_suffix('.pred.jsonl') for f in files], tests)}")
    cal = [out / f"cal{f}" / "dialcheck.json" for f in folds]
    start = out / "eval-start.pred.jsonl"
    if folds and start.exists() and all(c.exists() for c in cal):
        # each fold's test dialogues judged by the starting detector at the tau set on that fold's logs
        cal_tau = [json.loads(c.read_text())["thresholds"]["tau"] for c in cal]
        taus = {f"fold{f}-test": t for f, t in zip(folds, cal_tau, strict=True)}
        rows = [json.loads(line) for line in start.read_text().splitlines()]
        hb = [(r["score"] >= taus[r["split"]]) == bool(r["gold"]) for r in rows if r["split"] in taus]
        cells = []
        for s_ in splits:
            accs = [
                100
                * sum((r["score"] >= t) == bool(r["gold"]) for r in rows if r["split"] == s_)
                / max(1, sum(r["split"] == s_ for r in rows))
                for t in taus.values()
            ]
            cells.append(f"{sum(accs) / len(accs):.2f}")
        tau_list = ", ".join(f"{t:.3f}" for t in taus.values())
        lines.append(
            f"| start, tau from logs ({tau_list}) | {100 * sum(hb) / len(hb):.2f} | {len(hb)} | "
            + " | ".join(cells)
            + " |" * (len(splits) + 2)
            + " |"
        )
    if rates:
        lines += ["", "recall / false alarms on the pooled test folds, each run at its own tau: " + "; ".join(rates)]
    every = [out / f"cal{f}" / "dialcheck.json" for f in range(k)]
    if start.exists() and all(c.exists() for c in every):
        taus = {f"fold{f}-test": json.loads(c.read_text())["thresholds"]["tau"] for f, c in enumerate(every)}
        rows = [json.loads(line) for line in start.read_text().splitlines() if '"fold' in line]
        logs = [(r["score"] >= taus[r["split"]]) == bool(r["gold"]) for r in rows if r["split"] in taus]
        own = [bool(r["contradiction"]) == bool(r["gold"]) for r in rows if r["split"] in taus]
        lines.append(
            f"all {k} folds ({len(logs)} dialogues), the starting detector: {100 * sum(own) / len(own):.2f} at its "
            f"own tau, {100 * sum(logs) / len(logs):.2f} at the tau set on each fold's logs"
        )
    return "\n".join(lines)


def _rates(files: list[Path], tests: set[str]) -> str:
    """Recall on the contradictions and false-alarm rate on the consistent dialogues of ``tests``."""
    tp = pos = fp = neg = 0
    for f in files:
        for line in f.read_text().splitlines():
            r = json.loads(line)
            if r["split"] in tests:
                flagged = bool(r["contradiction"])
                if r["gold"]:
                    pos, tp = pos + 1, tp + flagged
                else:
                    neg, fp = neg + 1, fp + flagged
    return f"{100 * tp / max(pos, 1):.1f}% / {100 * fp / max(neg, 1):.1f}% ({pos} / {neg})"


if __name__ == "__main__":
    from _cli import run

    sys.exit(run(main))
