"""Save the encoder of a trained pair detector (LoRA merged, no head) as a plain Hugging Face folder, to use
as ``--base`` elsewhere, e.g. the DECODE detector's encoder as the start of the Circa answer classifier
(the "NLI transfer" of Louis et al. 2020; docs/benchmarks.md, generation side):

    python benchmarks/export_encoder.py src/dialcheck/models/decode-utterance-minilm-v3 runs/minilm-decode-v3-encoder
    python benchmarks/circa_yesno.py loso --base runs/minilm-decode-v3-encoder --folds job \\
        --out runs/circa-loso-decodeinit.jsonl
"""

from __future__ import annotations

import argparse
from pathlib import Path

from dialcheck.detectors.modeling import DetectorConfig, load_model


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("detector", help="a saved detector folder (dialcheck.json + weights)")
    p.add_argument("out", help="folder for the bare encoder and its tokenizer")
    args = p.parse_args()
    src, out = Path(args.detector), Path(args.out)
    cfg = DetectorConfig.from_file(src / "dialcheck.json")
    model, tok = load_model(src, cfg)
    if hasattr(model, "merge_and_unload"):
        model = model.merge_and_unload()
    encoder = getattr(model, model.base_model_prefix)
    encoder.save_pretrained(out, safe_serialization=True)
    tok.save_pretrained(out)
    print(f"saved the encoder of {src} to {out}")


if __name__ == "__main__":
    from _cli import run

    run(main)
