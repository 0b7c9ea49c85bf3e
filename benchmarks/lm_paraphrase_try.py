"""Can the installable instruction LM (SmolLM2-135M-Instruct) write same-subject consistent pairs?

Greedy replies to two prompts (paraphrase; agreeing continuation) for 12 positive DECODE train utterances
(seed 3), printed for reading by hand:

    python benchmarks/lm_paraphrase_try.py [--data-dir DIR]
"""

from __future__ import annotations

import argparse
import random
import time

STYLES = {
    "para": 'Someone said: "{u}"\nRewrite what they said in different words, keeping the same meaning. '
    "Answer with the new sentence only.",
    "cont": 'Someone said: "{u}"\nWrite the next sentence they might say, which agrees with what they said and '
    "adds one detail. Answer with the sentence only.",
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-dir", default=None, help="corpus folder (default ../shared/data or $DIALCHECK_DATA_DIR)")
    args = ap.parse_args()
    import torch

    from dialcheck.datasets import load_dataset
    from dialcheck.generation.nbest import DecodingConfig, NBestGenerator

    pairs = load_dataset("decode.train_pairs.v1", args.data_dir)
    torch.set_num_threads(1)
    gen = NBestGenerator.load("SmolLM2-135M-Instruct")
    greedy = DecodingConfig(strategy="greedy", n=1, max_new_tokens=32)
    random.seed(3)
    utts = [p.first for p in random.sample([p for p in pairs if p.label == 1], 12)]
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
