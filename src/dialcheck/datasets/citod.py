"""CI-ToD (Qin et al. 2021) adapter: the KBRetriever_DC files as multi-label :class:`Example` records.

Every record is a task-oriented dialogue (speakers ``user`` and ``system``; the corpus says ``driver`` and
``assistant``) with the knowledge base the system saw, and three gold labels about the last system turn:

- ``QI``: it does not answer the user's current request (query inconsistency);
- ``HI``: it contradicts the dialogue history (history inconsistency);
- ``KBI``: it contradicts the knowledge base (knowledge-base inconsistency).

``Example.labels`` holds the triple, ``Example.label`` is true when any of the three is, and ``category`` names
the positive labels joined by ``+`` (``"QI+KBI"``) or is ``None``. The corpus's ``HIPosition`` (history turns
causing HI) is empty in every released file, so ``evidence`` is ``None`` for HI examples and ``()`` otherwise.
The dialogue's ``meta`` carries ``domain`` (``calendar``, ``navigate``, ``weather``) and ``split``.

A malformed record is refused with an :class:`~dialcheck.errors.InputError` naming the file, the line the record
starts on (the list is decoded item by item, :func:`list_items`), its position in the list and the field.

The labelled weather *train* file was never released (see the data MANIFEST): ``citod.weather.train`` does
not exist, and weather is a domain the shipped detector never saw in training.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..io import json_type, json_value
from ..schema import Dialogue, Example, KnowledgeBase, Turn
from .base import register_dataset, require_corpus_file

__all__ = ["DOMAINS", "LABELS", "SPLITS", "citod_file", "load_citod", "load_citod_file"]

LABELS = ("QI", "HI", "KBI")
DOMAINS = ("calendar", "navigate", "weather")
ROOT = "ci_tod/KBRetriever_DC"
SPEAKERS = {"driver": "user", "assistant": "system"}

# (domain, split) -> (file, records, sha256)
_FILES: dict[tuple[str, str], tuple[str, int, str]] = {
    ("calendar", "train"): (
        "calendar_train.json",
        595,
        "fe5fe5e8c527395d7b2df250fca5f1c6b0f72d09700819c5095d5a0e5e346ee9",
    ),
    ("calendar", "dev"): ("calendar_dev.json", 74, "690d046677463ecba69a56529bac02afae3a80c11d470404e3443c49191af2a5"),
    ("calendar", "test"): (
        "calendar_test.json",
        74,
        "f3d16c678e6c397b66cd4a676dce32112fc281327aa507f1c9ff1c22eabec5ea",
    ),
    ("navigate", "train"): (
        "navigate_train.json",
        1110,
        "cc700357409947eab9c4d879c048cdfc2d8647696b840ffcb9bccf51fb5e9b2d",
    ),
    ("navigate", "dev"): ("navigate_dev.json", 139, "9b8062f491424eeeb5e6cdc556fd26b4d72f345921696bb1fde8988fe35f35f8"),
    ("navigate", "test"): (
        "navigate_test.json",
        138,
        "843b3941ff75fc56d6e98028c8063304578943b89106b3c1704cb94772057908",
    ),
    ("weather", "dev"): (
        "weather_new_dev.json",
        106,
        "cc6c4c4b51d6c341c236ff2195a63493c6e318bf6676c7c63bb8fdf5c04d585b",
    ),
    ("weather", "test"): (
        "weather_new_test.json",
        106,
        "90846cdfadc848a564fdd6ca039fed1a8529ec51e3ef85a91710d0161ca89440",
    ),
}
SPLITS = tuple(sorted(_FILES))


def citod_file(domain: str, split: str) -> str:
    """The path of one split below the data directory.

    >>> citod_file("weather", "test")
    'ci_tod/KBRetriever_DC/weather_new_test.json'
    """
    if (domain, split) not in _FILES:
        known = ", ".join(f"{d}.{s}" for d, s in SPLITS)
        missing = (
            " (the labelled weather train file was never released)" if (domain, split) == ("weather", "train") else ""
        )
        raise InputError(f"no CI-ToD split {domain}.{split}{missing}; known: {known}")
    return f"{ROOT}/{_FILES[domain, split][0]}"


def _flag(value: Any, field: str, path: Path, i: int) -> bool:
    if value in ("0", "1") or (type(value) is int and value in (0, 1)):  # true == 1 and 1.0 == 1 are no flags
        return str(value) == "1"
    raise InputError(f"record {i}: scenario.{field}: expected '0' or '1', got {json_value(value)}", str(path))


def parse_record(obj: Any, path: Path, i: int, domain: str, split: str) -> Example:
    """One corpus record as an :class:`Example`; a malformed record raises an error naming it."""
    if not isinstance(obj, dict):
        raise InputError(f"record {i}: expected an object", str(path))
    turns_raw = obj.get("dialogue")
    if not isinstance(turns_raw, list) or not turns_raw:
        raise InputError(f"record {i}: dialogue: expected a non-empty list of turns", str(path))
    turns = []
    for j, t in enumerate(turns_raw):
        if not isinstance(t, dict) or not isinstance(t.get("utterance"), str) or t.get("turn") not in SPEAKERS:
            raise InputError(f"record {i}: dialogue[{j}]: expected turn 'driver'/'assistant' and a string", str(path))
        turns.append(Turn(SPEAKERS[t["turn"]], t["utterance"]))
    scenario = obj.get("scenario")
    if not isinstance(scenario, dict):
        raise InputError(f"record {i}: scenario: missing", str(path))
    kb = scenario.get("kb") or {}
    if not isinstance(kb, dict):
        raise InputError(f"record {i}: scenario.kb: expected an object, got {json_type(kb)}", str(path))
    items = kb.get("items") or []
    if not isinstance(items, list):
        raise InputError(f"record {i}: scenario.kb.items: expected a list, got {json_type(items)}", str(path))
    rows = []
    for r, row in enumerate(items):
        if not isinstance(row, dict):
            raise InputError(f"record {i}: scenario.kb.items[{r}]: expected an object", str(path))
        rows.append({str(k): "" if v is None else str(v) for k, v in row.items()})
    labels = {name: _flag(scenario.get(name.lower()), name.lower(), path, i) for name in LABELS}
    rid = f"{domain}.{split}.{obj.get('id', i)}"
    meta = {"id": rid, "domain": domain, "split": split}
    dialogue = Dialogue(tuple(turns), KnowledgeBase(tuple(rows)), meta)
    positive = [k for k in LABELS if labels[k]]
    return Example(
        dialogue,
        bool(positive),
        evidence=None if labels["HI"] else (),
        category="+".join(positive) or None,
        id=rid,
        labels=labels,
    )


_SPACE = re.compile(r"[ \t\n\r]*")  # what JSON allows between values


def list_items(text: str) -> Iterator[tuple[int, Any]]:
    r"""The items of the JSON list ``text`` with the line (1-based) each starts on: decoded one by one with
    ``json.JSONDecoder.raw_decode``, so as fast as ``json.loads`` and with the same values and syntax errors
    (:class:`json.JSONDecodeError`). A document that is no list is decoded whole, to be refused by the caller.

    >>> list(list_items('[\n  {"id": 1},\n  {"id": 2}\n]'))
    [(2, {'id': 1}), (3, {'id': 2})]
    >>> list(list_items('{"id": 1}'))
    [(0, {'id': 1})]
    """
    pos = _SPACE.match(text).end()
    if not text.startswith("[", pos):  # line 0: the document itself
        yield 0, json.loads(text)
        return
    decode = json.JSONDecoder().raw_decode
    line, counted = 1, 0
    pos = _SPACE.match(text, pos + 1).end()
    if text.startswith("]", pos):
        end = pos + 1
    else:
        while True:
            line += text.count("\n", counted, pos)
            counted = pos
            value, pos = decode(text, pos)
            yield line, value
            pos = _SPACE.match(text, pos).end()
            if text.startswith(",", pos):
                pos = _SPACE.match(text, pos + 1).end()
            elif text.startswith("]", pos):
                end = pos + 1
                break
            else:
                raise json.JSONDecodeError("Expecting ',' delimiter", text, pos)
    if _SPACE.match(text, end).end() != len(text):
        raise json.JSONDecodeError("Extra data", text, _SPACE.match(text, end).end())


def load_citod_file(path: Path, domain: str, split: str) -> list[Example]:
    """Every record of one KBRetriever_DC JSON file. A malformed record raises an :class:`InputError` naming the
    file, the line the record starts on, its position in the list and the field."""
    from ..io import decode_utf8, json_error, read_input

    require_corpus_file(path)

    examples = []
    try:
        for i, (line, obj) in enumerate(list_items(decode_utf8(read_input(path), str(path)))):
            if line == 0:
                raise InputError("expected a JSON list of dialogues", str(path))
            try:
                examples.append(parse_record(obj, path, i, domain, split))
            except InputError as e:
                raise e.at(str(path), line) from None
    except json.JSONDecodeError as e:
        raise InputError(json_error(e), str(path), e.lineno) from None
    return examples


def load_citod(root: Path, domain: str, split: str) -> list[Example]:
    """One split (``domain`` in :data:`DOMAINS`, ``split`` in train/dev/test) from the data directory."""
    return load_citod_file(root / citod_file(domain, split), domain, split)


def _register(domain: str, split: str) -> None:
    file, count, sha = _FILES[domain, split]

    def loader(root: Path) -> list[Example]:
        return load_citod(root, domain, split)

    register_dataset(
        f"citod.{domain}.{split}.v1",
        f"CI-ToD KBRetriever_DC {domain} {split}: QI/HI/KBI labels with the knowledge base",
        (f"{ROOT}/{file}",),
        count,
        (sha,),
    )(loader)


for _domain, _split in SPLITS:
    _register(_domain, _split)
