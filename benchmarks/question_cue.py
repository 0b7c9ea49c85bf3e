"""Does a question in the checked turn tell DECODE's labels apart, and what does reading turns without it do?

DECODE's contradicting last turns were written by crowdworkers asked to contradict; its consistent ones are
the dialogues' own turns, which often ask the other speaker something. A detector trained on its pairs can
learn "a question in the last turn: consistent". Real bots ask in both. This script reports, from the data
alone, the share of last turns holding a "?" per set and label (train and dev pairs, human-bot, RCT), and,
given ``dialcheck evaluate --splits human_bot,rct --predictions`` files of several readings, each reading's
human-bot accuracy, precision, recall and ROC AUC and its RCT accuracy: a reading that only lowers the bar
moves precision and recall apart and leaves the AUC where it was. (RCT's last turns are crowdworkers' written
contradictions, which seldom ask, so RCT cannot stand for human-bot's consistent bot turns here.)

    dialcheck evaluate --splits human_bot,rct --predictions runs/hbrct-v8.jsonl --no-progress
    dialcheck evaluate --splits human_bot,rct --questions strip --predictions runs/hbrct-strip.jsonl --no-progress
    python benchmarks/question_cue.py --predictions runs/hbrct-v8.jsonl runs/hbrct-strip.jsonl
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from _output import emit
from _rows import parsed_rows

from dialcheck.datasets import load_dataset
from dialcheck.errors import InputError
from dialcheck.evaluation.metrics import accuracy, precision_recall_f1, roc_auc


def _asks(text: str) -> bool:
    return "?" in text


def _share(rows: list[bool]) -> str:
    return f"{100 * sum(rows) / len(rows):.1f}% of {len(rows)}" if rows else "-"


def cue_rows(data_dir: str | Path | None) -> list[tuple[str, str, str]]:
    """(set, share of contradicting last turns asking, share of consistent ones asking) per set."""
    out = []
    for name in ("train", "dev"):
        pairs = load_dataset(f"decode.{name}_pairs.v1", data_dir)
        by = {lab: [_asks(p.second) for p in pairs if p.label == lab] for lab in (0, 1)}
        out.append((f"{name} pairs", _share(by[1]), _share(by[0])))
    hb = load_dataset("decode.human_bot.v1", data_dir)
    by = {lab: [_asks(e.dialogue.turns[-1].text) for e in hb if int(e.label) == lab] for lab in (0, 1)}
    out.append(("human-bot dialogues", _share(by[1]), _share(by[0])))
    rct = load_dataset("decode.rct.v1", data_dir)
    out.append(("RCT dialogues (all consistent)", "-", _share([_asks(e.dialogue.turns[-1].text) for e in rct])))
    return out


def _prediction(row: dict[str, Any]) -> dict[str, Any]:
    return {k: row[k] for k in ("split", "gold", "contradiction", "score")}


def readings(files: list[Path]) -> list[dict[str, Any]]:
    """Per predictions file: human-bot accuracy, precision, recall and ROC AUC, and RCT accuracy."""
    out: list[dict[str, Any]] = []
    for f in files:
        rows = parsed_rows(f, _prediction, "a row of dialcheck evaluate --predictions")
        hb = [r for r in rows if r["split"] == "human_bot"]
        rct = [r for r in rows if r["split"] == "rct"]
        if not hb or not rct:
            raise InputError(f"{f}: needs human_bot and rct rows (evaluate --splits human_bot,rct --predictions)")
        gold, pred = [r["gold"] for r in hb], [r["contradiction"] for r in hb]
        precision, recall, _ = precision_recall_f1(gold, pred)
        out.append(
            {
                "file": str(f),
                "human_bot": 100 * accuracy(gold, pred),
                "human_bot_precision": 100 * precision,
                "human_bot_recall": 100 * recall,
                "human_bot_roc_auc": 100 * roc_auc(gold, [r["score"] for r in hb]),
                "rct": 100 * accuracy([r["gold"] for r in rct], [r["contradiction"] for r in rct]),
            }
        )
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-dir", default=None, help="default: dialcheck's data directory (../shared/data)")
    p.add_argument("--predictions", type=Path, nargs="*", default=[], help="evaluate --predictions files")
    p.add_argument("--markdown", type=Path)
    p.add_argument("--json", type=Path)
    args = p.parse_args()
    cues = cue_rows(args.data_dir)
    lines = ["| set | contradicting last turns with a '?' | consistent last turns with a '?' |", "|---|---:|---:|"]
    lines += [f"| {a} | {b} | {c} |" for a, b, c in cues]
    results: dict[str, Any] = {"cue": cues}
    if args.predictions:
        rows = readings(args.predictions)
        results["readings"] = rows
        lines += [
            "",
            "| predictions | human-bot accuracy | precision / recall | ROC AUC | RCT accuracy |",
            "|---|---:|---:|---:|---:|",
        ]
        lines += [
            f"| {r['file']} | {r['human_bot']:.2f} | {r['human_bot_precision']:.2f} / {r['human_bot_recall']:.2f} | "
            f"{r['human_bot_roc_auc']:.2f} | {r['rct']:.2f} |"
            for r in rows
        ]
    emit("\n".join(lines), results, args.markdown, args.json)


if __name__ == "__main__":
    from _cli import run

    run(main)
