"""DECODE (Nie et al. 2021) adapter: every file of ``decode/`` as :class:`Example` or :class:`Pair` records.

Speakers are the corpus agent ids as strings (``"0"``/``"1"``). Gold evidence holds the earlier turns
that the last turn contradicts (the last turn's own index, which the corpus lists too, is dropped).
"""

from __future__ import annotations

import collections
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..io import json_type
from ..schema import Dialogue, Example, Pair, Turn
from .base import read_jsonl, register_dataset, require

__all__ = [
    "load_dev",
    "load_dev_pairs",
    "load_human_bot",
    "load_human_bot_raw",
    "load_rct",
    "load_train_last_turns",
    "load_train_pairs",
]

DECODE = "decode"
PARTIAL = "decode/partial_from_formatted"


def _turns(obj: dict[str, Any], path: Path, line: int) -> tuple[Turn, ...]:
    raw = require(obj, "turns", list, path, line)
    turns = []
    for i, t in enumerate(raw):
        speaker = t.get("agent_id") if isinstance(t, dict) else None
        if not isinstance(t, dict) or not isinstance(t.get("text"), str) or not isinstance(speaker, int | str):
            raise InputError(
                f"turns[{i}]: expected an object with 'agent_id' (a number or a string) and string 'text'",
                str(path),
                line,
            )
        turns.append(Turn(str(t["agent_id"]), t["text"]))
    if not turns:
        raise InputError("turns: empty", str(path), line)
    return tuple(turns)


def _evidence(obj: dict[str, Any], key: str, n_turns: int, path: Path, line: int) -> tuple[int, ...] | None:
    """The turn indices ``obj[key]`` lists, without the last turn's own (``None`` when the key is absent or null);
    anything but a list of turn indices of this dialogue is an error naming the field."""
    indices = obj.get(key)
    if indices is None:
        return None
    if not isinstance(indices, list):
        raise InputError(f"{key}: expected a list of turn indices, got {json_type(indices)}", str(path), line)
    for j, i in enumerate(indices):
        if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < n_turns:
            got = i if isinstance(i, int) and not isinstance(i, bool) else json_type(i)
            raise InputError(f"{key}[{j}]: expected a turn index from 0 to {n_turns - 1}, got {got}", str(path), line)
    return tuple(sorted({i for i in indices if i != n_turns - 1}))


def _original(path: Path, split: str) -> list[Example]:
    out = []
    for n, obj in read_jsonl(path):
        turns = _turns(obj, path, n)
        label = bool(require(obj, "is_contradiction", bool, path, n))
        ev = _evidence(obj, "aggregated_contradiction_indices", len(turns), path, n)
        if not label:
            evidence: tuple[int, ...] | None = ()
        else:  # an empty list is no annotation (human-bot has none), as an absent one
            evidence = ev if ev is not None and obj["aggregated_contradiction_indices"] else None
        rid = str(obj.get("record_id") or obj.get("conversation_id") or f"{split}:{n}")
        aux = obj.get("auxiliary") or {}
        if not isinstance(aux, dict):
            raise InputError(f"auxiliary: expected an object, got {json_type(aux)}", str(path), n)
        meta = {"id": rid, "source": str(aux.get("source") or split)}
        out.append(Example(Dialogue(turns, meta=meta), label, evidence, id=rid))
    return out


@register_dataset(
    "decode.human_bot.v1",
    "DECODE human-bot: 764 bot last turns (382 contradictions), no evidence annotation",
    (f"{DECODE}/human-bot.jsonl",),
    764,
    ("8da52ac6051ada1f04058e790af45a49960f5eb2f9d08a75ab91c72ad5617f72",),
)
def load_human_bot(root: Path) -> list[Example]:
    return _original(root / DECODE / "human-bot.jsonl", "human-bot")


@register_dataset(
    "decode.human_bot_raw.v1",
    "DECODE human-bot, every bot turn scored (paper appendix F): only the flagged last turns are contradictions",
    (f"{DECODE}/human-bot.jsonl",),
    3204,
)
def load_human_bot_raw(root: Path) -> list[Example]:
    """Every bot turn of every human-bot conversation with its prefix as context.

    In the collection, the human flagged the bot turn that contradicted and the conversation was cut
    there; bot turns before it were not flagged, so they count as non-contradictions. The last turn
    keeps its verified label.
    """
    out = []
    for ex in load_human_bot(root):
        turns = ex.dialogue.turns
        bot = turns[-1].speaker
        for i, t in enumerate(turns):
            if t.speaker != bot:
                continue
            last = i == len(turns) - 1
            label = ex.label if last else False
            rid = f"{ex.id}#{i}"
            d = Dialogue(turns[: i + 1], meta={"id": rid, "source": "human-bot-raw"})
            out.append(Example(d, label, None if label else (), id=rid))
    return out


@register_dataset(
    "decode.rct.v1",
    "DECODE RCT checklist: 2,011 dialogues whose contradicting turns were removed (all non-contradictions)",
    (f"{DECODE}/rct.jsonl",),
    2011,
    ("606e23a96b43492650f12892cec2308020dde09680a23c6e0f38474addd4b8f6",),
)
def load_rct(root: Path) -> list[Example]:
    return _original(root / DECODE / "rct.jsonl", "rct")


@register_dataset(
    "decode.dev.v1",
    "DECODE dev rebuilt from the formatted files: 4,026 dialogues with same-speaker evidence",
    (f"{PARTIAL}/dev_reconstructed.jsonl",),
    4026,
    ("78bd13baef523ab6e5e42644e3fc93c022b57fe43b4543ae07f4dc01511251f3",),
)
def load_dev(root: Path) -> list[Example]:
    path = root / PARTIAL / "dev_reconstructed.jsonl"
    out = []
    for n, obj in read_jsonl(path):
        turns = _turns(obj, path, n)
        label = bool(require(obj, "is_contradiction", bool, path, n))
        ev = _evidence(obj, "aggregated_contradiction_indices_reconstructed", len(turns), path, n)
        evidence = ev if label else ()
        rid = f"dev:{obj.get('line', n - 1)}"
        out.append(Example(Dialogue(turns, meta={"id": rid, "source": "dev"}), label, evidence, id=rid))
    return out


def _pairs(path: Path, source: str) -> list[Pair]:
    out = []
    for n, obj in read_jsonl(path):
        first = require(obj, "prev_utterance", str, path, n)
        second = require(obj, "last_utterance", str, path, n)
        label = require(obj, "label", int, path, n)
        if label not in (0, 1):
            raise InputError(f"label: expected 0 or 1, got {label}", str(path), n)
        out.append(Pair(first, second, label, source, group=second))
    return out


@register_dataset(
    "decode.train_pairs.v1",
    "DECODE train utterance pairs (same speaker): 14,721 evidence pairs + 14,721 sampled non-evidence pairs",
    (f"{PARTIAL}/train_structured_pairs.jsonl",),
    29442,
    ("4828413f7593e73713f92bba60f90115439dcfc8c6c2c92f9603bf68a48866e9",),
)
def load_train_pairs(root: Path) -> list[Pair]:
    """Pairs grouped by their last utterance (``Pair.group``): one group is one train dialogue."""
    return _pairs(root / PARTIAL / "train_structured_pairs.jsonl", "decode.train")


@register_dataset(
    "decode.dev_pairs.v1",
    "DECODE dev utterance pairs (balanced): 2,181 evidence pairs + 2,181 sampled non-evidence pairs",
    (f"{PARTIAL}/dev_structured_pairs.jsonl",),
    4362,
    ("a2dbe1b26a4223d8a4d14e3ba4826b2e5642551e2f7d5cb00c90e53483171a38",),
)
def load_dev_pairs(root: Path) -> list[Pair]:
    return _pairs(root / PARTIAL / "dev_structured_pairs.jsonl", "decode.dev")


@register_dataset(
    "decode.train_last_turns.v1",
    "DECODE train last turns without history (27,184; half contradictions)",
    (f"{PARTIAL}/train_last_turns.jsonl",),
    27184,
    ("bc2c7849ceb929ca2254e82af4d8637da3cf8bdc1f1b4eb095111b63b93ce1f4",),
)
def load_train_last_turns(root: Path) -> list[Example]:
    path = root / PARTIAL / "train_last_turns.jsonl"
    out = []
    for n, obj in read_jsonl(path):
        text = require(obj, "last_turn_text", str, path, n)
        speaker = str(require(obj, "last_turn_agent_id", (int, str), path, n))
        label = bool(require(obj, "is_contradiction", bool, path, n))
        rid = f"train:{obj.get('line', n - 1)}"
        out.append(Example(Dialogue((Turn(speaker, text),), meta={"id": rid}), label, None, id=rid))
    return out


def group_pairs(pairs: list[Pair]) -> dict[str, list[Pair]]:
    """Pairs by group (for DECODE: the train dialogue they come from), in first-seen order."""
    groups: dict[str, list[Pair]] = collections.defaultdict(list)
    for p in pairs:
        groups[p.group].append(p)
    return dict(groups)


@register_dataset(
    "decode.a2t.v1",
    "A2T rebuilt from dev: a random utterance pair inserted between the contradicting turns (seed 0)",
    (f"{PARTIAL}/dev_reconstructed.jsonl",),
    2005,
)
def load_a2t(root: Path) -> list[Example]:
    from ..probes.checklist import build_a2t

    return build_a2t(load_dev(root), seed=0)
