"""JSONL files of collection records, with errors located by file and line."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol, TypeVar

from ..datasets.base import read_jsonl
from ..errors import InputError
from ..io import FirstLines, require_file, write_jsonl

__all__ = ["read_records", "write_records"]


class _Record(Protocol):
    def to_dict(self) -> dict[str, Any]: ...


R = TypeVar("R")


def iter_objects(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(1-based line, object) for each non-blank line; a bad line raises a located :class:`InputError`."""
    yield from read_jsonl(require_file(path))


def read_records(path: str | Path, cls: Any) -> list[Any]:
    """Records of type ``cls`` (anything with ``from_dict``) from a JSONL file; a file without any (empty or
    blank) is an :class:`InputError`: every step given one wrote an empty output with exit 0."""
    out = []
    once = FirstLines("each record needs its own")  # replies, labels and resumed work are keyed by id
    for n, obj in iter_objects(path):
        try:
            rec = cls.from_dict(obj)
            if getattr(rec, "id", None) is not None:
                once.check(rec.id, n)
        except InputError as e:
            raise e.at(str(path), n) from None
        out.append(rec)
    if not out:
        raise InputError("no records: the file is empty", str(path))
    return out


def write_records(path: str | Path, records: Iterable[_Record]) -> int:
    """Write one JSON object per record (atomic replace; "-" is standard output); returns the count."""
    return write_jsonl(path, (r.to_dict() for r in records))
