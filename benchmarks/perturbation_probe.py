"""Does a detector see a flipped polarity, and does it leave a synonym paraphrase alone?

The English counterparts of CDConv's perturbation triggers, applied to bot utterances of DECODE
human-bot (a test split: no shipped model was trained on it). Each utterance ``u`` is paired with a
perturbed copy of itself and the pair is scored as (earlier turn, last turn) by each model, at its own tau:

- ``negation``: ``u`` with its first verbal negation removed or one added ("I have a dog." -> "I don't
  have a dog."). One sentence of ``u`` now says the opposite: a contradiction. Reported: share flagged.
  Edits inside a question are left out (for antonyms too): "Didn't you go?" contradicts nothing.
- ``antonym``: one content word replaced by a WordNet antonym ("I love my job" -> "I hate my job").
  Usually a contradiction, not always (a wrong word sense, or "small" in a side remark): share flagged.
- ``synonym``: up to two content words replaced by WordNet synonyms. Meant to keep the meaning (WordNet
  senses are not disambiguated, so a few change it): share flagged, i.e. false alarms.

Needs the ``spacy`` and ``wordnet`` extras (see the README). Seeded; models side by side in one run:

    python benchmarks/perturbation_probe.py --models default,runs/my-detector --limit 500
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

import dialcheck
from dialcheck.cli.common import nonnegative_int, positive_int
from dialcheck.probes.triggers import TriggerInput
from dialcheck.probes.triggers_en import build_english_triggers, edits_a_question, rules_version

sys.path.insert(0, str(Path(__file__).resolve().parent))
from restatement_probe import bot_utterances, emit_table

KINDS = ("negation", "antonym", "paraphrase")
LABELS = {"negation": "negation (contradiction)", "antonym": "antonym (mostly contradiction)"}


def perturbed_pairs(utterances: list[str], seed: int, rules: int = 1) -> dict[str, list[tuple[str, str]]]:
    """``{kind: [(u, perturbed u), ...]}`` for every utterance a rule applies to. ``rules`` is the version
    of the English trigger rules (1, the default: the one every number in docs/benchmarks.md was measured
    with, so that a new rule does not move them; 2: the current trigger methods)."""
    inputs = [TriggerInput(u1=u, id=str(i)) for i, u in enumerate(utterances)]
    with rules_version(rules):
        triggers = build_english_triggers(inputs, methods=KINDS, seed=seed)
    pairs: dict[str, list[tuple[str, str]]] = {k: [] for k in KINDS}
    for t in triggers.items:
        if t.method != "paraphrase" and edits_a_question(t.u1, t.u2):
            continue  # a negated question contradicts nothing
        pairs[t.method].append((t.u1, t.u2))
    return pairs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="default", help="comma-separated model folders ('default' = shipped)")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument(
        "--limit", type=positive_int, default=500, help="human-bot bot utterances to perturb (seeded sample)"
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--examples", type=nonnegative_int, default=0, help="print N pairs of each kind (to check them by eye)"
    )
    ap.add_argument("--markdown", type=Path, default=None)
    ap.add_argument("--threads", type=nonnegative_int, default=0, help="torch threads (0 = torch's default)")
    ap.add_argument(
        "--rules",
        type=int,
        choices=(1, 2),
        default=1,
        help="English trigger rules version (1 = the documented numbers)",
    )
    args = ap.parse_args(argv)
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)

    rng = random.Random(args.seed)
    utts = bot_utterances(args.data_dir)
    rng.shuffle(utts)
    pairs = perturbed_pairs(utts[: args.limit], args.seed, args.rules)
    for kind in KINDS:
        for a, b in pairs[kind][: args.examples]:
            print(f"[{kind}] {a}\n    -> {b}", file=sys.stderr)

    head = (
        "| model | τ | "
        + " | ".join(f"{LABELS.get(k, 'synonym paraphrase (false alarm)')}: flagged ({len(pairs[k])})" for k in KINDS)
        + " |"
    )
    lines = [head, "|" + "---|" * (2 + len(KINDS))]
    for name in args.models.split(","):
        det = dialcheck.load(None if name == "default" else name)
        rates = []
        for kind in KINDS:
            scores = det.classifier.score(pairs[kind]) if pairs[kind] else []
            rates.append(sum(float(s) >= det.tau for s in scores) / max(1, len(pairs[kind])))
        lines.append(f"| {name} | {det.tau:.3f} | " + " | ".join(f"{r:.3f}" for r in rates) + " |")
        print(f"{name}: done", file=sys.stderr)
    emit_table(lines, args.markdown)
    return 0


if __name__ == "__main__":
    from _cli import run

    raise SystemExit(run(main))
