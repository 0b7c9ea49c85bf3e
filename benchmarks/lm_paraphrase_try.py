"""Can the installable instruction LM (SmolLM2-135M-Instruct) write same-subject consistent pairs?

Greedy replies to two prompts (paraphrase; agreeing continuation) for 12 positive DECODE train utterances
(seed 3), printed for reading by hand:

    python benchmarks/lm_paraphrase_try.py
"""

from __future__ import annotations

import json
import random
import time

STYLES = {
    "para": 'Someone said: "{u}"\nRewrite what they said in different words, keeping the same meaning. '
    "Answer with the new sentence only.",
    "cont": 'Someone said: "{u}"\nWrite the next sentence they might say, which agrees with what they said and '
    "adds one detail. Answer with the sentence only.",
}


def main() -> None:
    import torch

    from dialcheck.datasets.base import data_dir
    from dialcheck.generation.nbest import DecodingConfig, NBestGenerator

    torch.set_num_threads(1)
    gen = NBestGenerator.load("SmolLM2-135M-Instruct")
    greedy = DecodingConfig(strategy="greedy", n=1, max_new_tokens=32)
    path = data_dir(None) / "decode" / "partial_from_formatted" / "train_structured_pairs.jsonl"
    rows = [json.loads(line) for line in path.open(encoding="utf-8")]
    random.seed(3)
    utts = [r["prev_utterance"] for r in random.sample([r for r in rows if r["label"] == 1], 12)]
    for name, tmpl in STYLES.items():
        t = time.time()
        lists = gen.generate([[tmpl.format(u=u)] for u in utts], greedy, batch_size=len(utts))
        print(f"== {name}: {time.time() - t:.1f} s")
        for u, (best,) in zip(utts, lists, strict=True):
            print(" U:", u[:100])
            print(" G:", best.text.strip().replace("\n", " ")[:120])


if __name__ == "__main__":
    from _cli import run

    run(main)
