"""English NLI corpora as two-label pairs (contradiction vs. entailment + neutral), as DECODE does."""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError
from ..schema import Pair
from .base import read_jsonl, register_dataset, require

__all__ = ["load_anli", "load_nli_samples"]

_CONTRADICTION = {"c", "contradiction"}
_OTHER = {"e", "n", "entailment", "neutral"}


def _nli(path: Path, source: str, premise_key: str) -> list[Pair]:
    out = []
    for n, obj in read_jsonl(path):
        label = require(obj, "label", str, path, n)
        if label not in _CONTRADICTION | _OTHER:
            if label == "-":  # no gold label
                continue
            raise InputError(f"label: unknown NLI label {label!r}", str(path), n)
        first = require(obj, premise_key, str, path, n)
        second = require(obj, "hypothesis", str, path, n)
        out.append(Pair(first, second, int(label in _CONTRADICTION), source, group=f"{source}:{n}"))
    return out


ANLI_FILES = tuple(f"anli/R{r}/{s}.jsonl" for r in (1, 2, 3) for s in ("dev", "test"))


@register_dataset(
    "nli.anli.v1",
    "ANLI R1-R3 dev+test as two labels (train splits are not available here)",
    ANLI_FILES,
    6400,
    (
        "4d6a01499b91046be7aa9daf1d1e716261b0c08698962b23389477c8400064e2",
        "11b257c63a3caa825b80ac86b6d895407c62616d56036482344344099e7d3fa5",
        "7b90cd9c9cb7d8ff12bc31257a56bf219718704c5798faf3b295b9e94b14b889",
        "804dbe173fbe08e6e069db8811016ebe5e065dfd1c47ed741dac6d8816f4fadc",
        "42eca71392a3c90ee0dc83bb2cedb45165279f903a9c706bf11337be11c469bd",
        "fe456c2935f71d7ffe49bd8d95c2b2355f7383f72423c3018fa40479992f0004",
    ),
)
def load_anli(root: Path) -> list[Pair]:
    out: list[Pair] = []
    for f in ANLI_FILES:
        out.extend(_nli(root / f, "anli", "context"))
    return out


NLI_SAMPLE_FILES = (
    "nli_en_samples/mnli_dev_matched_sample1000.jsonl",
    "nli_en_samples/mnli_dev_mismatched_sample1000.jsonl",
    "nli_en_samples/snli_sample1000.jsonl",
)


@register_dataset(
    "nli.mnli_snli_samples.v1",
    "MultiNLI dev matched/mismatched and SNLI samples (1,000 each) as two labels",
    NLI_SAMPLE_FILES,
    3000,
    (
        "e276a73bd4a9eb5f5ae94b4f3195a363a8d32d01097b2ac0d101b85ac7d1364f",
        "e4b869b8af38532b9539d4e37ea828e309737e7ce96665afa25f3562846f1c5c",
        "fdc408f8a9362419c8a17919ed3daa9c5c08c14b4536a357876780793e8fedf7",
    ),
)
def load_nli_samples(root: Path) -> list[Pair]:
    out: list[Pair] = []
    for f in NLI_SAMPLE_FILES:
        out.extend(_nli(root / f, "mnli" if "mnli" in f else "snli", "premise"))
    return out
