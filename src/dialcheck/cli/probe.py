"""``dialcheck probe KIND ...``: build stimulus sets that probe a chatbot or a detector.

Kinds are subcommands registered in :data:`KINDS`; each adds its own options. ``echo`` builds polar
echo questions from NLI pairs (Sato et al. 2022): ENTQ from entailment pairs, CNTQ (negative form) from
contradiction pairs, with the premise as the bot's own earlier turn::

    dialcheck probe echo --source mnli_snli --out echo.jsonl
    dialcheck probe echo --input my_nli.jsonl --out echo.jsonl --unlikelihood ul.jsonl

Input files for ``--input`` are JSONL with ``premise``, ``hypothesis`` and ``label``
(entailment / neutral / contradiction, or e / n / c).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import InputError

HELP = "build stimulus sets (echo: polar echo questions from NLI pairs)"

SOURCES = {
    "mnli_snli": "nli.mnli_snli_samples.3way.v1",
    "anli": "nli.anli.3way.v1",
    "decode": "decode.contradiction_pairs.v1",
}

KINDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]]] = {}


def register_kind(
    name: str, help: str, add_arguments: Callable[[argparse.ArgumentParser], None]
) -> Callable[[Callable[[argparse.Namespace], int]], Callable[[argparse.Namespace], int]]:
    """Register a probe kind: ``dialcheck probe NAME`` runs the decorated function."""

    def deco(fn: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
        KINDS[name] = (help, add_arguments, fn)
        return fn

    return deco


def add_parser(sub: Any) -> None:
    p = sub.add_parser("probe", help=HELP, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    kinds = p.add_subparsers(dest="kind", metavar="KIND", required=True)
    for name, (help_, add_arguments, fn) in KINDS.items():
        k = kinds.add_parser(name, help=help_, description=help_)
        add_arguments(k)
        k.set_defaults(func=fn)


def read_nli_file(path: str) -> list[Any]:
    """User NLI pairs (JSONL: premise, hypothesis, label) as :class:`NLIPair` records."""
    from ..datasets.base import read_jsonl, require
    from ..datasets.nli3 import NLI_LABELS, NLIPair

    short = {"e": "entailment", "n": "neutral", "c": "contradiction"}
    p = Path(path)
    if not p.is_file():
        raise InputError("no such file", path)
    out = []
    for n, obj in read_jsonl(p):
        premise = require(obj, "premise", str, p, n)
        hypothesis = require(obj, "hypothesis", str, p, n)
        label = short.get(require(obj, "label", str, p, n), obj["label"])
        if label not in NLI_LABELS:
            raise InputError(f"label: expected one of {', '.join(NLI_LABELS)}, got {obj['label']!r}", path, n)
        out.append(
            NLIPair(premise, hypothesis, label, str(obj.get("source", p.stem)), str(obj.get("id", f"{p.name}:{n}")))
        )
    return out


def build_echo_items(args: argparse.Namespace) -> tuple[Any, Any]:
    """The echo set described by ``--source/--input``, ``--kinds``, ``--per-kind`` and ``--seed``,
    and the full set it was sampled from."""
    from ..datasets import load_dataset
    from ..probes.echo import EchoSet, build_echo_set

    pairs: list[Any] = []
    if args.input:
        pairs.extend(read_nli_file(args.input))
    for s in [x for x in (args.source or "").split(",") if x]:
        if s not in SOURCES:
            raise InputError(f"unknown source {s!r}; use {', '.join(SOURCES)} (or --input FILE)")
        pairs.extend(load_dataset(SOURCES[s], args.data_dir))
    if not pairs:
        raise InputError("no NLI pairs: give --source and/or --input")
    kinds = [k.strip().upper() for k in args.kinds.split(",") if k.strip()]
    bad = [k for k in kinds if k not in ("ENTQ", "CNTQ")]
    if bad:
        raise InputError(f"unknown kinds {bad}: use ENTQ and/or CNTQ")
    full = build_echo_set(pairs, kinds=kinds, max_premise_words=args.max_premise_words)
    if not args.per_kind:
        return full, full
    rng = random.Random(args.seed)
    picked = []
    for k in kinds:
        mine = [i for i in full.items if i.kind == k]
        rng.shuffle(mine)
        picked.extend(mine[: args.per_kind])
    return EchoSet(picked, full.skipped), full


def add_echo_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", "-o", required=True, help="JSONL file of stimuli")
    p.add_argument("--source", default="", help=f"comma-separated corpora: {', '.join(SOURCES)}")
    p.add_argument("--input", default=None, help="your own NLI pairs (JSONL: premise, hypothesis, label)")
    p.add_argument("--kinds", default="ENTQ,CNTQ", help="ENTQ (from entailment), CNTQ (from contradiction)")
    p.add_argument("--per-kind", type=int, default=0, help="keep a random N of each kind (default: all)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-premise-words", type=int, default=30, help="longer premises are skipped (default 30)")
    p.add_argument("--unlikelihood", default=None, help="also write Table 7 unlikelihood samples (JSONL) here")
    p.add_argument("--data-dir", default=None, help="corpus folder (default ../shared/data or $DIALCHECK_DATA_DIR)")


@register_kind("echo", "polar echo questions (ENTQ/CNTQ) from NLI pairs, Sato et al. 2022", add_echo_arguments)
def run_echo(args: argparse.Namespace) -> int:
    from ..probes.echo import unlikelihood_samples

    es, full = build_echo_items(args)
    es.save(args.out)
    counts = es.counts()
    print(f"dialcheck: wrote {args.out}: {counts['ENTQ']} ENTQ, {counts['CNTQ']} CNTQ", file=sys.stderr)
    if es.skipped:
        reasons = ", ".join(f"{k} {v}" for k, v in es.skipped.most_common())
        print(f"dialcheck: skipped {sum(es.skipped.values())} pairs: {reasons}", file=sys.stderr)
    if args.unlikelihood:
        samples = unlikelihood_samples(full.items)  # every paired premise, not only the sampled ones
        path = Path(args.unlikelihood)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8") as f:
            for s in samples:
                f.write(json.dumps(s.to_dict(), ensure_ascii=False) + "\n")
        print(
            f"dialcheck: wrote {path}: {len(samples)} unlikelihood samples from {len(samples) // 4} premises "
            "that have both an ENTQ and a CNTQ",
            file=sys.stderr,
        )
    return 0
