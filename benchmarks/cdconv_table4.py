"""CDConv Table 4 comparison: backbone x OCNLI pre-training x detector (hierarchical / flat), over seeds,
on the official and the context-disjoint split, beside the paper's hierarchical RoBERTa.

Backbones (issue 3, item 3):
- ``minilm-zh``: all-MiniLM-L6-v2 with the Chinese characters it lacks added (``all-MiniLM-L6-v2+zh``),
  LoRA r=16 + the new embedding rows + head;
- ``gemma-lora``: Gemma-3-270m with LoRA (r=8) on short inputs (``--gemma-max-length``, default 64);
- ``gemma-frozen``: a linear head on frozen mean-pooled Gemma-3-270m features (each pair encoded once).

With OCNLI pre-training, a pair classifier is first trained on OCNLI train.10k (one per backbone and
seed, cached under ``OUT/pretrain``) and every CDConv classifier starts from it (a 4-way classifier gets
a new head; for ``gemma-frozen`` the stage heads start from the OCNLI head and the flat 4-way cell has
nothing to transfer, so it is skipped). Early stopping uses dev; the numbers are on test.

Detectors: ``hierarchical`` (the three stage thresholds chosen together on dev for the mean of 2-class
accuracy and 4-class macro-F1), ``hierarchical-stage`` (the same trained stages, each at the threshold of
its own best dev F1), ``hierarchical-lexical`` (the same stages with a character n-gram logistic regression
mixed into each stage's score, mix and thresholds chosen on dev), ``flat`` (u1 b1 u2 -> b2, one 4-way
classifier) and ``flat-lexical`` (the same kept flat model with the n-gram head mixed in, mix and tau chosen
on dev: the recipe of the shipped ``cdconv-flat-zh-v2``).

Resumable: each finished cell is ``OUT/cells/<backbone>__<pretrain>__<detector>__<split>__s<seed>.json``
and is skipped on the next run; the table (``OUT/table4.md``) is rebuilt from every finished cell. The
trained detectors (LoRA backbones) are kept in ``OUT/models/`` and reused: the hierarchical variants
share one training, ``flat`` and ``flat-lexical`` another, and a new threshold rule needs no retraining.

    python benchmarks/cdconv_table4.py --out runs/cdconv_table4 --threads 2            # everything
    python benchmarks/cdconv_table4.py --backbones minilm-zh --seeds 0 --limit 200 --epochs 1   # quick look
    python benchmarks/cdconv_table4.py --out runs/cdconv_seeds --backbones minilm-zh --pretrain ocnli \
        --detectors flat,flat-lexical --seeds 0,1,2,3 --threads 2     # the shipped default's recipe, 4 seeds
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

log = logging.getLogger("cdconv_table4")

BACKBONES: dict[str, dict[str, Any]] = {
    "minilm-zh": {"base": "all-MiniLM-L6-v2+zh", "kind": "lora", "r": 16, "max_length": 96, "batch_size": 32},
    "gemma-lora": {"base": "gemma-3-270m", "kind": "lora", "r": 8, "max_length": 64, "batch_size": 8},
    "gemma-frozen": {"base": "gemma-3-270m", "kind": "frozen", "max_length": 64, "batch_size": 16},
}
SPLITS = {
    "official": ("cdconv.train.v1", "cdconv.dev.v1", "cdconv.test.v1"),
    "disjoint": ("cdconv.disjoint.train.v1", "cdconv.disjoint.dev.v1", "cdconv.disjoint.test.v1"),
}
DETECTORS = ("hierarchical", "hierarchical-stage", "hierarchical-lexical", "flat", "flat-lexical")
COLUMNS = (
    ("2class/accuracy", "2-cls acc"),
    ("2class/macro_f1", "2-cls F1"),
    ("4class/accuracy", "4-cls acc"),
    ("4class/macro_f1", "4-cls F1"),
    ("f1/non_contradiction", "Non"),
    ("f1/intra_sentence", "Intra"),
    ("f1/role_confusion", "Role"),
    ("f1/history", "History"),
)


def _seeds(text: str) -> list[int]:
    """An argparse type: comma-separated training seeds, at least one."""
    from dialcheck.cli.common import seed_number

    seeds = [seed_number(x.strip()) for x in text.split(",") if x.strip()]
    if not seeds:
        raise argparse.ArgumentTypeError("name at least one seed")
    return seeds


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    from dialcheck.cli.common import (
        comma_choices,
        nonnegative_int,
        positive_float,
        positive_int,
        token_window,
    )

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="runs/cdconv_table4", help="results folder (cells, pre-trained models, table)")
    p.add_argument(
        "--backbones",
        type=comma_choices(BACKBONES),
        default=",".join(BACKBONES),
        help=f"comma-separated; known: {', '.join(BACKBONES)}",
    )
    p.add_argument("--pretrain", type=comma_choices(("none", "ocnli")), default="none,ocnli", help="none and/or ocnli")
    p.add_argument(
        "--detectors",
        type=comma_choices(DETECTORS),
        default="hierarchical,flat",
        help=f"comma-separated; known: {', '.join(DETECTORS)}",
    )
    p.add_argument(
        "--splits", type=comma_choices(tuple(SPLITS)), default="official,disjoint", help="official and/or disjoint"
    )
    p.add_argument(
        "--seeds", type=_seeds, default="0,1,2,3", help="comma-separated seeds (the paper reports the mean of four)"
    )
    p.add_argument("--epochs", type=positive_float, default=2.0, help="CDConv fine-tuning epochs")
    p.add_argument("--pretrain-epochs", type=positive_float, default=1.0, help="OCNLI pre-training epochs")
    p.add_argument(
        "--limit", type=positive_int, default=None, help="first N train/test examples (dev N/4, OCNLI N): quick runs"
    )
    p.add_argument("--threads", type=nonnegative_int, default=0, help="torch threads (0 = all cores)")
    p.add_argument("--lr", type=positive_float, default=None, help="default: 5e-4 (LoRA)")
    p.add_argument("--data-dir", default=None)
    p.add_argument(
        "--base",
        action="append",
        default=[],
        metavar="BACKBONE=NAME",
        help="override a backbone's base (e.g. minilm-zh=/path/tiny+zh; tests use tiny random models)",
    )
    p.add_argument("--gemma-max-length", type=token_window, default=64)
    p.add_argument(
        "--eval-every",
        type=nonnegative_int,
        default=0,
        help="dev evaluation interval in steps (default: four times per epoch; raise it for gemma-lora)",
    )
    p.add_argument("--no-table", action="store_true", help="run cells only")
    p.add_argument("-v", "--verbose", action="store_true")
    args = p.parse_args(argv)
    for item in args.base:  # before any data is read or model trained
        name, _, base = item.partition("=")
        if name not in BACKBONES or not base:
            p.error(f"argument --base: expected BACKBONE=NAME with BACKBONE in {', '.join(BACKBONES)}, got {item!r}")
    return args


def cell_name(backbone: str, pretrain: str, detector: str, split: str, seed: int) -> str:
    return f"{backbone}__{pretrain}__{detector}__{split}__s{seed}"


def _write_json(path: Path, obj: Any) -> None:
    tmp = path.with_suffix(".partial")
    tmp.write_text(json.dumps(obj, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)


class Runner:
    """Holds the data, the per-backbone settings and the caches (OCNLI models, frozen features)."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.out = Path(args.out)
        self.backbones = {k: dict(v) for k, v in BACKBONES.items()}
        for k in ("gemma-lora", "gemma-frozen"):
            self.backbones[k]["max_length"] = args.gemma_max_length
        for item in args.base:
            name, _, base = item.partition("=")  # checked by parse_args
            self.backbones[name]["base"] = base
        self._data: dict[str, list] = {}
        self._features: dict[str, Any] = {}

    def data(self, name: str, kind: str = "train") -> list:
        from dialcheck.datasets import load_dataset

        if name not in self._data:
            self._data[name] = load_dataset(name, self.args.data_dir)
        rows = self._data[name]
        lim = self.args.limit
        if lim:
            rows = rows[: max(1, lim // 4)] if kind == "dev" else rows[:lim]
        return rows

    def train_config(self, backbone: str, seed: int, epochs: float) -> Any:
        from dialcheck.training.trainer import TrainConfig

        bb = self.backbones[backbone]
        return TrainConfig(
            epochs=epochs,
            batch_size=bb["batch_size"],
            lr=self.args.lr,
            seed=seed,
            threads=self.args.threads,
            eval_every=self.args.eval_every,
        )

    # -- OCNLI pre-training ----------------------------------------------------------------------
    def pretrained(self, backbone: str, seed: int) -> Any:
        """The OCNLI pair classifier of a backbone and seed: a folder (LoRA) or a FrozenHead."""
        bb = self.backbones[backbone]
        train, dev = self.data("ocnli.train.v1"), self.data("ocnli.dev.v1", "dev")
        if bb["kind"] == "frozen":
            from dialcheck.training.frozen import FrozenHead

            head = FrozenHead(self.features(backbone), ["non_contradiction", "contradiction"])
            return head.fit([(p.first, p.second) for p in train], [p.label for p in train], seed=seed)
        folder = self.out / "pretrain" / f"{backbone}__s{seed}"
        if (folder / "dialcheck.json").exists():
            return folder
        from dialcheck.training.nli import pretrain_nli

        t0 = time.time()
        adapter = {"type": "lora", "r": bb["r"], "alpha": 2 * bb["r"], "dropout": 0.1}
        cfg = self.train_config(backbone, seed, self.args.pretrain_epochs)
        det = pretrain_nli(train, dev, bb["base"], adapter, bb["max_length"], cfg)
        det.config.training["seconds_total"] = round(time.time() - t0, 1)
        det.save(folder)
        log.info("pre-trained %s on OCNLI in %.0f s", backbone, time.time() - t0)
        return folder

    def features(self, backbone: str) -> Any:
        from dialcheck.training.frozen import FeatureCache

        if backbone not in self._features:
            bb = self.backbones[backbone]
            self._features[backbone] = FeatureCache.from_base(bb["base"], bb["max_length"], bb["batch_size"])
        return self._features[backbone]

    # -- one cell --------------------------------------------------------------------------------
    def run_cell(self, backbone: str, pretrain: str, detector: str, split: str, seed: int) -> dict[str, Any] | None:
        from dialcheck.detectors import FlatCategoryDetector, HierarchicalDetector
        from dialcheck.evaluation.cdconv import cdconv_metrics, example_label, verdict_label
        from dialcheck.training.cdconv import train_category_detector

        bb = self.backbones[backbone]
        train_name, dev_name, test_name = SPLITS[split]
        train, dev, test = self.data(train_name), self.data(dev_name, "dev"), self.data(test_name)
        from dialcheck.detectors import load_detector
        from dialcheck.detectors.categories import STAGES
        from dialcheck.training.cdconv import calibrate_cascade, fit_cascade_lexical, fit_lexical

        hier = detector.startswith("hierarchical")
        trained = "hierarchical" if hier else "flat"  # the model a variant reuses
        cls = HierarchicalDetector if hier else FlatCategoryDetector
        t0 = time.time()
        init = self.pretrained(backbone, seed) if pretrain == "ocnli" else None
        reused = False
        if bb["kind"] == "frozen":
            if not hier and init is not None:
                return None  # frozen encoder + a new 4-way head: OCNLI has nothing to transfer
            det = self.fit_frozen(cls, backbone, train, seed, init)
            if detector == "hierarchical" and dev:  # -lexical: fit_cascade_lexical below calibrates
                calibrate_cascade(det, dev)
            train_s = time.time() - t0
        else:
            folder = self.out / "models" / cell_name(backbone, pretrain, trained, split, seed)
            if (folder / "dialcheck.json").exists():
                det, reused = load_detector(folder), True
                log.info("reusing the trained detector %s", folder)
            else:
                adapter = {"type": "lora", "r": bb["r"], "alpha": 2 * bb["r"], "dropout": 0.1}
                det = cls(base=bb["base"], adapter=adapter, max_length=bb["max_length"])
                cfg = self.train_config(backbone, seed, self.args.epochs)
                train_category_detector(det, train, dev, cfg, init=init)
                det.config.training["seconds_total"] = round(time.time() - t0, 1)
                det.save(folder)
            train_s = float(det.config.training.get("seconds_total", time.time() - t0))
            if detector == "hierarchical-stage":  # each stage back at its own best-F1 threshold
                before = det.config.training.get("cascade", {}).get("stage_thresholds", {})
                for st in STAGES:
                    det.config.thresholds[st] = float(before.get(st, det.stage_threshold(st)))
        if detector.endswith("-lexical"):
            t1 = time.time()
            (fit_cascade_lexical if hier else fit_lexical)(det, train, dev)
            train_s += time.time() - t1
        t1 = time.time()
        dev_m = cdconv_metrics(
            [example_label(e) for e in dev], [verdict_label(v) for v in det.predict([e.dialogue for e in dev])]
        )
        verdicts = det.predict([e.dialogue for e in test])
        test_m = cdconv_metrics([example_label(e) for e in test], [verdict_label(v) for v in verdicts])
        return {
            "backbone": backbone,
            "base": bb["base"],
            "pretrain": pretrain,
            "detector": detector,
            "split": split,
            "seed": seed,
            "epochs": self.args.epochs,
            "limit": self.args.limit,
            "train_examples": len(train),
            "test_examples": len(test),
            "train_seconds": round(train_s, 1),
            "reused_model": reused,
            "lexical_mix": det.lexical.mix if getattr(det, "lexical", None) is not None else None,
            "thresholds": {k: v for k, v in det.config.thresholds.items() if k in STAGES} if hier else None,
            "tau": None if hier else det.tau,
            "eval_seconds": round(time.time() - t1, 1),
            "dev": dev_m,
            "test": test_m,
        }

    def fit_frozen(self, cls: type, backbone: str, train: list, seed: int, init: Any) -> Any:
        import numpy as np

        from dialcheck.detectors import HierarchicalDetector
        from dialcheck.detectors.categories import _TRUNCATION, CATEGORY_LABELS, STAGES, separator, stage_input
        from dialcheck.training.cdconv import category_of_example
        from dialcheck.training.frozen import FrozenHead

        cache = self.features(backbone)
        sep = separator(cache.tokenizer)
        det = cls(base=self.backbones[backbone]["base"])
        if issubclass(cls, HierarchicalDetector):
            for stage in STAGES:
                need = 2 if stage == "intra_sentence" else 3
                rows = [e for e in train if len(e.dialogue.turns) >= need]
                head = FrozenHead(cache, ["non_contradiction", "contradiction"], _TRUNCATION[stage])
                pairs = [stage_input(stage, e.dialogue, sep) for e in rows]
                head.fit(pairs, [int(category_of_example(e) == stage) for e in rows], seed=seed, init=init)
                det.set_stage(stage, head)
        else:
            head = FrozenHead(cache, list(CATEGORY_LABELS), "left")
            pairs = [stage_input("flat", e.dialogue, sep) for e in train]
            targets = np.array([CATEGORY_LABELS.index(category_of_example(e)) for e in train])
            det._clf = head.fit(pairs, targets, seed=seed)
        return det


def unk_report(data_dir: str | None, limit: int | None) -> str:
    """The [UNK] share of CDConv dev under all-MiniLM-L6-v2, before and after the +zh extension."""
    from transformers import AutoTokenizer

    from dialcheck.backbones import resolve_base
    from dialcheck.datasets import load_dataset
    from dialcheck.vocab import extension_tokens, unk_rate

    try:
        tok = AutoTokenizer.from_pretrained(resolve_base("all-MiniLM-L6-v2"))
    except Exception as e:  # the real tokenizer is optional here
        return f"[UNK] share: not measured ({e})"
    texts = [t.text for e in load_dataset("cdconv.dev.v1", data_dir)[: limit or None] for t in e.dialogue.turns]
    before, n = unk_rate(tok, texts)
    tok.add_tokens(extension_tokens("zh"))
    after, _ = unk_rate(tok, texts)
    return (
        f"[UNK] share of CDConv dev tokens (n={n}) under all-MiniLM-L6-v2: "
        f"{100 * before:.2f}% -> {100 * after:.2f}% with +zh"
    )


def build_table(out: Path, cells: list[dict[str, Any]], data_dir: str | None, limit: int | None) -> str:
    """Markdown: per split, one row per (backbone, pre-training, detector), mean ± std over seeds."""
    from dialcheck.evaluation.cdconv import PAPER, PAPER_MAJORITY_ACCURACY, example_label, majority_floor, mean_std

    lines = ["# CDConv Table 4: backbones x OCNLI pre-training x detector", ""]
    lines.append(
        "Mean ± std over seeds on each split's test set (percent); dev = dev 4-class macro-F1 (model selection). "
        "Paper: Zheng et al. 2022, Table 4, hierarchical RoBERTa (Chinese), official split, four seeds."
    )
    if any(c.get("limit") for c in cells):
        lines.append(f"\n**Quick run: --limit {limit}; these numbers are not comparable to the paper.**")
    lines += ["", unk_report(data_dir, limit), ""]
    head = (
        "| backbone | OCNLI | detector | seeds | dev 4-cls F1 | " + " | ".join(n for _, n in COLUMNS) + " | train min |"
    )
    rule = "|" + "---|" * 4 + "---:|" * (len(COLUMNS) + 2)
    for split in SPLITS:
        rows = [c for c in cells if c["split"] == split and not c.get("skipped")]
        if not rows:
            continue
        lines += [f"## {split} split", "", head, rule]
        groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        for c in rows:
            groups.setdefault((c["backbone"], c["pretrain"], c["detector"]), []).append(c)
        for (bb, pre, det), runs in sorted(groups.items()):
            test = mean_std([r["test"] for r in runs])
            dev = mean_std([r["dev"] for r in runs])
            cells_txt = [f"{test[k][0]:.1f} ± {test[k][1]:.1f}" if k in test else "" for k, _ in COLUMNS]
            minutes = sum(r["train_seconds"] for r in runs) / len(runs) / 60
            dev_f1 = f"{dev['4class/macro_f1'][0]:.1f}" if "4class/macro_f1" in dev else ""
            lines.append(
                f"| {bb} | {pre} | {det} | {len(runs)} | {dev_f1} | " + " | ".join(cells_txt) + f" | {minutes:.1f} |"
            )
        if split == "official":
            paper = " | ".join(f"{PAPER[k]:.1f}" for k, _ in COLUMNS)
            lines.append(f"| paper: RoBERTa | yes | hierarchical | 4 | | {paper} | |")
        test_name = SPLITS[split][2]
        from dialcheck.datasets import load_dataset

        try:
            train = [example_label(e) for e in load_dataset(SPLITS[split][0], data_dir)]
            gold = [example_label(e) for e in load_dataset(test_name, data_dir)[: limit or None]]
            floor = majority_floor(gold, train)
            lines.append("| majority class | | | | | " + " | ".join(f"{floor[k]:.1f}" for k, _ in COLUMNS) + " | |")
            if split == "official":
                lines.append(f"\nThe paper's majority-class floor: {PAPER_MAJORITY_ACCURACY} accuracy (official test).")
        except Exception as e:  # the table is still useful without the floor
            log.warning("no majority floor for %s: %s", split, e)
        lines.append("")
    skipped = [c for c in cells if c.get("skipped")]
    if skipped:
        lines.append(f"Skipped cells: {len(skipped)} (frozen features + flat + OCNLI: nothing to transfer).")
    text = "\n".join(lines) + "\n"
    (out / "table4.md").write_text(text, encoding="utf-8")
    return text


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(asctime)s %(message)s")
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    runner = Runner(args)
    out = runner.out
    (out / "cells").mkdir(parents=True, exist_ok=True)
    plan = [
        (b, p, d, s, seed)
        for b in args.backbones  # each name checked by parse_args
        for p in args.pretrain
        for d in args.detectors
        for s in args.splits
        for seed in args.seeds
    ]
    done = 0
    for i, key in enumerate(plan, 1):
        path = out / "cells" / f"{cell_name(*key)}.json"
        if path.exists():
            continue
        t0 = time.time()
        print(f"[{i}/{len(plan)}] {cell_name(*key)}", file=sys.stderr, flush=True)
        result = runner.run_cell(*key)
        if result is None:
            b, p, d, s, seed = key
            result = {"backbone": b, "pretrain": p, "detector": d, "split": s, "seed": seed, "skipped": True}
        _write_json(path, result)
        done += 1
        print(f"    done in {time.time() - t0:.0f} s", file=sys.stderr, flush=True)
    print(f"{done} cell(s) run, {len(plan) - done} already finished", file=sys.stderr)
    if not args.no_table:
        cells = [json.loads(p.read_text(encoding="utf-8")) for p in sorted((out / "cells").glob("*.json"))]
        text = build_table(out, cells, args.data_dir, args.limit)
        print(text)
    return 0


if __name__ == "__main__":
    from _cli import run

    sys.exit(run(main))
