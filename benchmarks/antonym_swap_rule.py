"""Would a WordNet antonym-swap rule help the English detector? A count, no model training.

    python benchmarks/antonym_swap_rule.py [--data-dir DIR] [--model DIR]

The shipped detector catches negations ("has a pool" / "has no pool") but misses many antonym and value
swaps in service chats ("closed on Mondays" / "open on Mondays"). A rule could flag a pair when the later
turn holds a WordNet antonym of a word of the earlier one and the other content words overlap by half or
more. This script counts where that rule fires on DECODE (rebuilt dev, human-bot, RCT, raw human-bot: the
last turn against each earlier turn of its speaker), and prints the shipped model's pair score for a few
fixed service-chat swaps, so that the decision is made on numbers. Needs the wordnet extra and Debian's
WordNet (see ``dialcheck.probes.triggers_en``). Finding (docs/benchmarks.md): the rule fires on 2% of dev
contradictions and on none of the human-bot ones, so it was not added.
"""

from __future__ import annotations

import argparse
import os
import re
from collections import Counter

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

_STOP_TEXT = (
    "i me my you your a an the is are was were be been am do does did to of in on at for and or but it its that "
    "this with have has had not no so very really just too also i'm it's don't"
)
STOP = frozenset(_STOP_TEXT.split())
SWAPS = [
    ("The museum is closed on Mondays.", "The museum is open on Mondays."),
    ("The store opens at 9am.", "The store opens at 11am."),
    ("Transfers abroad are free for all account holders.", "There is a 15 euro fee for transfers abroad."),
    ("Your order has shipped.", "Your order has not shipped yet."),
    ("The hotel has a pool.", "Unfortunately the hotel has no pool."),
]


def words(s: str) -> list[str]:
    return re.findall(r"[a-z']+", s.lower())


class AntonymRule:
    """Fires on (earlier, later) when ``later`` swaps a word of ``earlier`` for a WordNet antonym and the other
    content words of the shorter side are at least half shared."""

    def __init__(self, lexicon) -> None:
        self.lex = lexicon
        self._cache: dict[str, set[str]] = {}

    def antonyms(self, w: str) -> set[str]:
        if w not in self._cache:
            self._cache[w] = {a for pos in ("a", "v", "r") for a in self.lex.antonyms(w, pos)}
        return self._cache[w]

    def __call__(self, a: str, b: str) -> tuple[str, str] | None:
        ca, cb = set(words(a)) - STOP, set(words(b)) - STOP
        for x in sorted(ca - cb):
            hit = self.antonyms(x) & (cb - ca)
            if hit:
                rest_a, rest_b = ca - {x}, cb - hit
                shared = rest_a & rest_b
                if shared and len(shared) / max(1, min(len(rest_a), len(rest_b))) >= 0.5:
                    return x, min(hit)
        return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--model", default=None, help="detector for the fixed swaps (default: the shipped English one)")
    args = ap.parse_args()
    from dialcheck.api import load
    from dialcheck.datasets import load_dataset
    from dialcheck.probes.triggers_en import WordNetLexicon

    rule = AntonymRule(WordNetLexicon.load())
    print("| DECODE split | contradictions: rule fires | non-contradictions: rule fires |")
    print("|---|---:|---:|")
    for name in ("decode.dev.v1", "decode.human_bot.v1", "decode.rct.v1", "decode.human_bot_raw.v1"):
        c: Counter[tuple[bool, bool]] = Counter()
        for ex in load_dataset(name, args.data_dir):
            d = ex.dialogue
            fired = any(rule(d.turns[i].text, d.turns[-1].text) for i in d.same_speaker_indices())
            c[(bool(ex.label), fired)] += 1
        pos, neg = c[(True, True)] + c[(True, False)], c[(False, True)] + c[(False, False)]
        print(f"| {name} | {c[(True, True)]} of {pos} | {c[(False, True)]} of {neg} |")
    det = load(args.model)
    tau = det.config.thresholds.get("tau")
    print(f"\n| earlier turn | later turn | pair score ({det.path.name}, τ {tau:.3f}) | rule |")
    print("|---|---|---:|---|")
    scores = det.classifier.score(SWAPS)
    for (a, b), s in zip(SWAPS, scores, strict=True):
        r = rule(a, b)
        print(f"| {a} | {b} | {s:.2f} | {'fires (' + ' -> '.join(r) + ')' if r else '-'} |")


if __name__ == "__main__":
    from _cli import run

    run(main)
