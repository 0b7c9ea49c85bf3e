"""Reading the JSONL files other commands wrote (predictions, scores), with errors that name the file and line."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from dialcheck.datasets.base import read_jsonl
from dialcheck.errors import InputError
from dialcheck.io import require_file

T = TypeVar("T")


def parsed_rows(path: Path, parse: Callable[[dict[str, Any]], T], what: str) -> list[T]:
    """``parse(row)`` for each JSON line of ``path``; a row ``parse`` cannot read (a missing field, a wrong type)
    is an :class:`InputError` naming the file, the line and ``what`` the row should have been, as is a file that is
    not there, not JSON lines or holds no rows (``_cli.run`` prints it and exits 2)."""
    out = []
    for n, row in read_jsonl(require_file(path)):  # not a "corpus file": a file the user named
        try:
            out.append(parse(row))
        except KeyError as e:  # the field, as the corpus readers name it
            raise InputError(f"{e.args[0]}: missing (not {what})", str(path), n) from e
        except (TypeError, ValueError) as e:
            raise InputError(f"not {what} ({type(e).__name__}: {e})", str(path), n) from e
    if not out:
        raise InputError("no rows", str(path))
    return out


def cdconv_labels(row: dict[str, Any]) -> tuple[int, int]:
    """(gold, predicted) CDConv label ids (0 none, 1-3 the categories) of a ``dialcheck evaluate --predictions`` row.

    >>> cdconv_labels({"gold": 1, "gold_category": "history", "contradiction": False, "category": None})
    (3, 0)
    """
    from dialcheck.datasets.cdconv import label_of

    return cdconv_gold(row), label_of(row["category"]) if row["contradiction"] else 0


def cdconv_gold(row: dict[str, Any]) -> int:
    """The gold CDConv label id of a ``dialcheck evaluate --predictions`` row."""
    from dialcheck.datasets.cdconv import label_of

    return label_of(row["gold_category"]) if row["gold"] else 0


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
