"""English NLI corpora with their three labels kept (entailment, neutral, contradiction).

:mod:`dialcheck.datasets.nli` folds entailment and neutral together for contradiction detectors;
polar echo questions (:mod:`dialcheck.probes.echo`) need entailment and contradiction apart. DECODE's
utterance pairs carry only contradiction vs. not (no entailment), so they are offered as
contradiction pairs only.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from .base import read_jsonl, register_dataset, require
from .nli import ANLI_FILES, NLI_SAMPLE_FILES

__all__ = ["NLI_LABELS", "NLIPair", "load_anli_3way", "load_decode_contradiction_pairs", "load_nli_samples_3way"]

NLI_LABELS = ("entailment", "neutral", "contradiction")
_SHORT = {"e": "entailment", "n": "neutral", "c": "contradiction"}


@dataclass(frozen=True)
class NLIPair:
    """A premise, a hypothesis and their three-way NLI label."""

    premise: str
    hypothesis: str
    label: str  # one of NLI_LABELS
    source: str
    id: str


def _nli3(path: Path, source: str, premise_key: str, root: Path) -> list[NLIPair]:
    out = []
    rel = path.relative_to(root).as_posix()
    for n, obj in read_jsonl(path):
        raw = require(obj, "label", str, path, n)
        if raw == "-":
            continue
        label = _SHORT.get(raw, raw)
        if label not in NLI_LABELS:
            raise InputError(f"label: unknown NLI label {raw!r}", str(path), n)
        out.append(
            NLIPair(
                require(obj, premise_key, str, path, n),
                require(obj, "hypothesis", str, path, n),
                label,
                source,
                f"{rel}:{n}",
            )
        )
    return out


@register_dataset("nli.anli.3way.v1", "ANLI R1-R3 dev+test with three labels", ANLI_FILES, 6400)
def load_anli_3way(root: Path) -> list[NLIPair]:
    out: list[NLIPair] = []
    for f in ANLI_FILES:
        out.extend(_nli3(root / f, "anli", "context", root))
    return out


@register_dataset(
    "nli.mnli_snli_samples.3way.v1",
    "MultiNLI dev matched/mismatched and SNLI samples (1,000 each) with three labels",
    NLI_SAMPLE_FILES,
    3000,
)
def load_nli_samples_3way(root: Path) -> list[NLIPair]:
    out: list[NLIPair] = []
    for f in NLI_SAMPLE_FILES:
        out.extend(_nli3(root / f, "mnli" if "mnli" in f else "snli", "premise", root))
    return out


@register_dataset(
    "decode.contradiction_pairs.v1",
    "DECODE train + dev evidence pairs (same speaker, the later utterance contradicts the earlier) as NLI pairs",
    (
        "decode/partial_from_formatted/train_structured_pairs.jsonl",
        "decode/partial_from_formatted/dev_structured_pairs.jsonl",
    ),
    16902,
)
def load_decode_contradiction_pairs(root: Path) -> list[NLIPair]:
    from .decode import load_dev_pairs, load_train_pairs

    out = []
    for name, pairs in (("decode.train", load_train_pairs(root)), ("decode.dev", load_dev_pairs(root))):
        for i, p in enumerate(pairs):
            if p.label == 1:
                out.append(NLIPair(p.first, p.second, "contradiction", "decode", f"{name}:{i + 1}"))
    return out
