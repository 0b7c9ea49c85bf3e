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
    from dialcheck.generation.lm import load_lm, prepare_tokenizer

    torch.set_num_threads(1)
    model, tok = load_lm("SmolLM2-135M-Instruct")
    tok = prepare_tokenizer(tok, model)
    tok.padding_side = "left"
    path = data_dir(None) / "decode" / "partial_from_formatted" / "train_structured_pairs.jsonl"
    rows = [json.loads(line) for line in path.open(encoding="utf-8")]
    random.seed(3)
    utts = [r["prev_utterance"] for r in random.sample([r for r in rows if r["label"] == 1], 12)]
    for name, tmpl in STYLES.items():
        msgs = [[{"role": "user", "content": tmpl.format(u=u)}] for u in utts]
        prompts = [tok.apply_chat_template(m, tokenize=False, add_generation_prompt=True) for m in msgs]
        enc = tok(prompts, return_tensors="pt", padding=True)
        t = time.time()
        with torch.no_grad():
            out = model.generate(**enc, max_new_tokens=32, do_sample=False, pad_token_id=tok.pad_token_id)
        new = out[:, enc["input_ids"].shape[1] :]
        print(f"== {name}: {time.time() - t:.1f} s")
        for u, g in zip(utts, tok.batch_decode(new, skip_special_tokens=True), strict=True):
            print(" U:", u[:100])
            print(" G:", g.strip().replace("\n", " ")[:120])


if __name__ == "__main__":
    main()
