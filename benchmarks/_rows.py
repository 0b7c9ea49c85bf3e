"""Reading the JSONL files other commands wrote (predictions, scores), with errors that name the file and line."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from dialcheck.datasets.base import read_jsonl
from dialcheck.errors import InputError

T = TypeVar("T")


def parsed_rows(path: Path, parse: Callable[[dict[str, Any]], T], what: str) -> list[T]:
    """``parse(row)`` for each JSON line of ``path``; a row ``parse`` cannot read (a missing field, a wrong type)
    stops the script with the file, the line and ``what`` the row should have been."""
    out = []
    try:
        for n, row in read_jsonl(Path(path)):
            try:
                out.append(parse(row))
            except (KeyError, TypeError, ValueError) as e:
                raise SystemExit(f"{path}, line {n}: not {what} ({type(e).__name__}: {e})") from e
    except InputError as e:
        raise SystemExit(str(e)) from e
    if not out:
        raise SystemExit(f"{path}: no rows")
    return out


def halvings(n: int, repeats: int) -> list[tuple[Any, Any]]:
    """(choose on, measure on) index pairs: ``repeats`` seeded random halvings of ``n`` rows, each used both ways,
    to estimate how a setting chosen on some rows holds on rows it was not chosen on.

    >>> [(len(a), len(b)) for a, b in halvings(5, 1)]
    [(2, 3), (3, 2)]
    """
    import numpy as np

    out = []
    for seed in range(repeats):
        perm = np.random.default_rng(seed).permutation(n)
        halves = (perm[: n // 2], perm[n // 2 :])
        out += [halves, halves[::-1]]
    return out
