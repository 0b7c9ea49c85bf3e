"""Would a persona-slot rule help the English detector? A count, no model training.

    python benchmarks/persona_slot_rule.py [--model DIR] [--data-dir DIR]

Many human-bot contradictions the shipped detector misses are a bot changing its job ("I work at a grocery
store." … "I'm a paralegal at a law firm.") or its home town; on minimal pairs such as "I work as a nurse." …
"I work as a teacher." it scores about 0.01 (``benchmarks/value_swap_probe.py``). Two rules read
first-person slot statements of the last speaker and fire when the last turn fills a slot that an earlier
turn filled with words sharing none of them:

- **job**: "I work as / at / in / for X", or "I'm a/an X" whose words include a WordNet occupation noun
  (under worker, professional, employee, skilled worker, student, entertainer, creator or homemaker);
- **place, name, age**: "I live in X", "I'm from X", "my name is X", "I'm N years old".

For DECODE human-bot, RCT, rebuilt dev, raw human-bot and the three hand sets it prints how often each rule
fires on contradictions and on consistent dialogues, and what "model or rule" would change against the
model alone (new catches, new false alarms, accuracy). Needs the wordnet extra and Debian's WordNet (see
``dialcheck.probes.triggers_en``). Finding (docs/benchmarks.md): the model already catches most explicit
slot changes in real bot logs; the rules add under one point of human-bot accuracy, so they are not added.
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Callable

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

OCCUPATION_ROOTS = {
    "worker.n.01",
    "professional.n.01",
    "employee.n.01",
    "skilled_worker.n.01",
    "student.n.01",
    "entertainer.n.01",
    "creator.n.02",
    "homemaker.n.01",
}
STOP = {"a", "an", "the", "of", "at", "in", "for", "and", "but", "so", "to", "my", "as", "i", "it", "too", "also"}
STOP |= {"now", "there", "here", "currently", "very", "really", "big", "local", "small", "part", "time", "full"}
STOP |= {"usa", "us"}
CLAUSES = re.compile(r"[.!?;,]| and | but | so | because | which | who | that ")
Slots = set[tuple[str, frozenset[str]]]


class SlotRules:
    """First-person slot statements of a turn, and whether the last turn changes one of an earlier turn's."""

    def __init__(self, wordnet) -> None:
        self.wn = wordnet
        self._occupation: dict[str, bool] = {}

    def is_occupation(self, noun: str) -> bool:
        if noun not in self._occupation:
            paths = (p for s in self.wn.synsets(noun, "n")[:2] for p in s.hypernym_paths())
            self._occupation[noun] = any(h.name() in OCCUPATION_ROOTS for p in paths for h in p)
        return self._occupation[noun]

    def jobs(self, text: str) -> Slots:
        out: Slots = set()
        for clause in CLAUSES.split(text.lower().replace("\u2019", "'")):
            m = re.search(r"\bi work (?:as|at|in|for|from) (.+)", clause)
            if m:
                words = [w for w in re.findall(r"[a-z]+", m.group(1))[:5] if w not in STOP]
                if words:
                    out.add(("job", frozenset(words)))
                continue
            m = re.search(r"\bi(?:'m| am) an? ([a-z]+(?: [a-z]+){0,2})", clause)
            if m:
                words = [w for w in m.group(1).split() if w not in STOP]
                if any(self.is_occupation(w) for w in words):
                    out.add(("job", frozenset(words)))
        return out

    @staticmethod
    def facts(text: str) -> Slots:
        out: Slots = set()
        pattern = r"\b(?:i live in|i(?:'m| am) from|my name is|i(?:'m| am) (\d+) years old)\s*([a-z0-9 ]*)"
        for clause in CLAUSES.split(text.lower().replace("\u2019", "'")):
            m = re.search(pattern, clause)
            if m:
                words = [w for w in re.findall(r"[a-z0-9]+", f"{m.group(1) or ''} {m.group(2)}")[:3] if w not in STOP]
                kind = "age" if m.group(1) else ("name" if "my name is" in m.group(0) else "place")
                if words:
                    out.add((kind, frozenset(words)))
        return out

    @staticmethod
    def fires(dialogue, slots: Callable[[str], Slots]) -> bool:
        last = dialogue.turns[-1]
        now = slots(last.text)
        if not now:
            return False
        for t in dialogue.turns[:-1]:
            if t.speaker != last.speaker:
                continue
            for kind, words in slots(t.text):
                same = [w for k, w in now if k == kind]
                if same and all(not (words & w) for w in same):
                    return True
        return False


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=None, help="detector to combine with (default: the shipped English one)")
    ap.add_argument("--data-dir", default=None)
    args = ap.parse_args()

    import dialcheck
    from dialcheck.datasets import load_dataset
    from dialcheck.io import read_examples
    from dialcheck.probes.triggers_en import WordNetLexicon

    rules = SlotRules(WordNetLexicon.load().wn)
    det = dialcheck.load(args.model)
    sets = {n: list(load_dataset(n, args.data_dir)) for n in ("decode.human_bot.v1", "decode.rct.v1", "decode.dev.v1")}
    sets["decode.human_bot_raw.v1"] = list(load_dataset("decode.human_bot_raw.v1", args.data_dir))
    for name in ("decode_hand_a", "decode_hand_b", "decode_hand_values"):
        sets[name] = read_examples(f"benchmarks/data/{name}.jsonl")[0]
    print(f"model: {args.model or det.path.name} (tau {det.tau:.3f})\n")
    print(
        "| set | rule | fires: contradictions | fires: consistent | new catches | new false alarms "
        + "| accuracy: model → model or rule |"
    )
    print("|---|---|---:|---:|---:|---:|---|")
    for name, examples in sets.items():
        verdicts = det.predict([e.dialogue for e in examples], batch_size=64)
        for rule, slots in (("job", rules.jobs), ("place, name, age", rules.facts)):
            fired = [rules.fires(e.dialogue, slots) for e in examples]
            pos = sum(f for f, e in zip(fired, examples, strict=True) if e.label)
            neg = sum(f for f, e in zip(fired, examples, strict=True) if not e.label)
            n_pos = sum(bool(e.label) for e in examples)
            new = [(f and not v.contradiction, e.label) for f, v, e in zip(fired, verdicts, examples, strict=True)]
            right = sum(v.contradiction == bool(e.label) for v, e in zip(verdicts, examples, strict=True))
            both = sum(
                (v.contradiction or f) == bool(e.label) for f, v, e in zip(fired, verdicts, examples, strict=True)
            )
            print(
                f"| {name} | {rule} | {pos} of {n_pos} | {neg} of {len(examples) - n_pos} | "
                f"{sum(n and lab for n, lab in new)} | {sum(n and not lab for n, lab in new)} | "
                f"{100 * right / len(examples):.2f} → {100 * both / len(examples):.2f} |"
            )


if __name__ == "__main__":
    from _cli import run

    run(main)
