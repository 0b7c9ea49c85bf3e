"""Does an English detector read the values of what was said? Pair scores on fixed value swaps.

    python benchmarks/value_swap_probe.py [--models default,decode-utterance-minilm-v3,runs/my-detector]

A speaker says a sentence, the other speaker says "Oh, nice. Tell me more.", and the first speaker says a
second sentence: the same sentence with one value changed (a number, a time, a price, a weekday, a name, a
job, a place), or with an antonym, which is a contradiction; or a rewording that keeps the value, which is
not. Printed: each model's score for the second turn and whether it is flagged at the model's own τ, and
per model how many of each kind it gets right. The shipped detectors up to v6 score "I have two dogs." /
"I have three dogs." 0.01-0.17: the ``restate`` and ``perturb`` training pairs teach that a near-copy is a
restatement unless a negation or an antonym flips it (docs/benchmarks.md, "Value swaps"). ``dialcheck train
--augment values`` adds pairs that change one number, weekday or month; names, jobs and places it does not
cover, and they are here to show that. The sentences were written for this probe, none is from a corpus.
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

FILLER = "Oh, nice. Tell me more."
# (kind, earlier turn, later turn, contradiction?)
PAIRS = [
    ("count", "I have two dogs.", "I have three dogs.", True),
    ("age", "I'm 25 years old.", "I'm 40 years old.", True),
    ("time", "The store opens at 9am.", "The store opens at 11am.", True),
    ("price", "The ticket costs $20.", "The ticket costs $35.", True),
    ("weekday", "Your order will arrive on Tuesday.", "Your order will arrive on Friday.", True),
    ("antonym", "The museum is closed on Mondays.", "The museum is open on Mondays.", True),
    ("antonym", "I love spicy food.", "I hate spicy food.", True),
    ("place (not in values)", "I live in Texas.", "I live in Ohio.", True),
    ("name (not in values)", "My name is Sarah.", "My name is Emily.", True),
    ("job (not in values)", "I work as a nurse.", "I work as a teacher.", True),
    ("status (not in values)", "I'm married.", "I'm single.", True),
    ("same value", "I have two dogs.", "My two dogs love the park.", False),
    ("same value", "I live in Texas.", "Texas summers are hot where I live.", False),
    ("same value", "The store opens at 9am.", "We open at 9 in the morning.", False),
    ("same value", "The ticket costs $20.", "It's $20 per ticket.", False),
    ("another value, same frame", "The flight leaves at 6 pm.", "The flight leaves at 6 pm, so be there by 4.", False),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="default", help="comma-separated model names or folders (default: default)")
    args = ap.parse_args()
    import dialcheck

    names = [m for m in args.models.split(",") if m]
    dialogues = [[a, FILLER, b] for _, a, b, _ in PAIRS]
    verdicts = {m: dialcheck.load(None if m == "default" else m).predict(dialogues) for m in names}
    from dialcheck.detectors import default_model_path

    names_shown = [f"default ({default_model_path('en').name})" if m == "default" else m for m in names]
    print("| kind | earlier turn | later turn | contradiction | " + " | ".join(names_shown) + " |")
    print("|---|---|---|---|" + "---:|" * len(names))
    for i, (kind, a, b, gold) in enumerate(PAIRS):
        cells = []
        for m in names:
            v = verdicts[m][i]
            cells.append(f"{v.score:.2f}{'' if v.contradiction == gold else ' ✗'}")
        print(f"| {kind} | {a} | {b} | {'yes' if gold else 'no'} | " + " | ".join(cells) + " |")
    print()
    groups = {
        "value and antonym swaps (7)": lambda k, g: g and "not in values" not in k,
        "names, jobs, places, status (4)": lambda k, g: "not in values" in k,
        "consistent (5)": lambda k, g: not g,
    }
    print("| right at the model's τ | " + " | ".join(names_shown) + " |")
    print("|---|" + "---:|" * len(names))
    for label, keep in groups.items():
        idx = [i for i, (k, _, _, g) in enumerate(PAIRS) if keep(k, g)]
        right = [sum(verdicts[m][i].contradiction == PAIRS[i][3] for i in idx) for m in names]
        print(f"| {label} | " + " | ".join(str(r) for r in right) + " |")


if __name__ == "__main__":
    from _cli import run

    run(main)
