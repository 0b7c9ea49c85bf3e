"""Reader for the released contradiction collection of Sato et al. (2024).

One JSON object per line::

    {"utterances": [...], "speakers": ["A", "B", ...], "annotation_target_pair": [referent, reply],
     "rgm_name": "generator", "contradictory_label_count": 0..3}

Each line becomes a :class:`CollectedReply` whose turns end at the reply. Replies not yet released
appear as ``[[TBA]]``; they are skipped and counted. ``label`` follows the three-annotator rule:
contradictory with 2-3 votes, non-contradictory with 0, discarded (None) with 1.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from ..io import FirstLines, check_id
from ..schema import Turn
from .annotation import aggregate_votes
from .jsonl import iter_objects
from .records import CollectedReply

__all__ = ["TBA", "ReleasedCollection", "read_released"]

log = logging.getLogger(__name__)

TBA = "[[TBA]]"


@dataclass(frozen=True)
class ReleasedCollection:
    """The replies read from a released file and how many unreleased (``[[TBA]]``) ones were skipped."""

    replies: tuple[CollectedReply, ...]
    skipped_tba: int

    def __len__(self) -> int:
        return len(self.replies)


def _int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _own_id(obj: dict[str, object], key: str) -> str | None:
    """The line's own ``key`` (a string or a whole number, :func:`dialcheck.io.check_id`), None when absent or
    null; any other value is a field error, never turned into a string of its Python form."""
    value = obj.get(key)
    return None if value is None else check_id(value, key)


def parse_released(obj: dict[str, object], index: int, source: str = "") -> CollectedReply | None:
    """One released object as a reply (None for a ``[[TBA]]`` reply); raises :class:`InputError` naming the field."""
    utts = obj.get("utterances")
    if not isinstance(utts, list) or not utts or not all(isinstance(u, str) for u in utts):
        raise InputError("utterances: expected a non-empty list of strings")
    spk = obj.get("speakers")
    if not isinstance(spk, list) or len(spk) != len(utts):
        raise InputError(f"speakers: expected a list of {len(utts)} speakers (one per utterance)")
    for i, s in enumerate(spk):
        if s not in ("A", "B"):
            raise InputError(f"speakers[{i}]: expected 'A' or 'B', got {s!r}")
    pair = obj.get("annotation_target_pair")
    if not isinstance(pair, list) or len(pair) != 2 or not all(_int(x) for x in pair):
        raise InputError("annotation_target_pair: expected [referent index, reply index]")
    ref, rep = int(pair[0]), int(pair[1])  # type: ignore[call-overload]
    if not 0 <= ref < rep < len(utts):
        raise InputError(f"annotation_target_pair: need 0 <= referent < reply < {len(utts)}, got {pair}")
    if spk[ref] != spk[rep]:
        raise InputError(f"annotation_target_pair: utterances {ref} and {rep} are by different speakers")
    name = obj.get("rgm_name")
    if not isinstance(name, str) or not name:
        raise InputError("rgm_name: expected a non-empty string")
    count = obj.get("contradictory_label_count")
    if not _int(count) or not 0 <= count <= 3:  # type: ignore[operator]
        raise InputError(f"contradictory_label_count: expected an integer 0-3, got {count!r}")
    rid, context_id = _own_id(obj, "id"), _own_id(obj, "context_id")
    if utts[rep].strip() == TBA:
        return None
    votes = int(count)  # type: ignore[call-overload]
    turns = tuple(Turn(s, u) for s, u in zip(spk[: rep + 1], utts[: rep + 1], strict=True))
    if context_id is None:
        context_id = "ctx-" + hashlib.sha1("\n".join(utts[:rep]).encode("utf-8")).hexdigest()[:12]
    return CollectedReply(
        id=(f"{source}#{index}" if source else str(index)) if rid is None else rid,
        context_id=context_id,
        generator=name,
        turns=turns,
        referent=ref,
        label=aggregate_votes([True] * votes + [False] * (3 - votes)),
        votes=votes,
    )


def read_released(path: str | Path) -> ReleasedCollection:
    """Read a released collection file; bad lines raise :class:`InputError` with file, line and field.

    Replies that share their preceding utterances share ``context_id`` (what leave-one-generator-out
    evaluation keys on), unless the line carries its own ``context_id``.
    """
    p = Path(path)
    replies = []
    once = FirstLines("each reply needs its own")
    tba = 0
    for n, obj in iter_objects(p):
        try:
            r = parse_released(obj, n, p.name)
        except InputError as e:
            raise e.at(str(p), n) from None
        if r is None:
            tba += 1
            continue
        problem = once.problem(r.id, n)  # a line's own id given twice: two replies LOGO and analyse cannot tell apart
        if problem:
            raise InputError(problem, str(p), n)
        replies.append(r)
    if not replies and not tba:
        raise InputError("no records: the file is empty", str(p))
    if tba:
        log.info("%s: skipped %d unreleased ([[TBA]]) replies", p, tba)
    return ReleasedCollection(tuple(replies), tba)
