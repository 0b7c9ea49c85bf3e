"""How a benchmark script ends on a user error: one line on stderr and exit status 2, as ``dialcheck`` does.

A missing data directory, a corpus or predictions file that is not there or not well formed, an unknown model
folder: each raises a :class:`~dialcheck.errors.DialcheckError` (or an ``OSError`` naming the file), which
:func:`run` prints as ``script.py: error: ...`` instead of a traceback.

How a script keeps to that:

- a number on the command line takes one of ``dialcheck.cli.common``'s checked types (``positive_int``,
  ``nonnegative_int`` where 0 means none or all, ``seed_number``, ``unit_float``, ``positive_float``, ...), never a
  bare ``int`` or ``float``, so ``--n 0`` or ``--threads -1`` is refused when the command line is read, before any
  corpus or model is loaded (``tests/test_benchmark_scripts.py`` keeps every script to it), and a comma-separated
  list of numbers takes :func:`comma_list` of one, and a file read only after the corpora or a model takes
  :func:`readable_file`;
- a user error found later (options that do not go together, a file the user named that does not hold what the
  script needs) raises :class:`~dialcheck.errors.InputError` with the message, or calls the parser's ``error``
  while the parser is at hand: both exit 2, never ``raise SystemExit("message")``, whose status is 1;
- status 1 is kept for a run that failed rather than was asked wrongly: a gate that is not met (``main`` returns 1),
  a server that stopped or never answered.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from dialcheck.errors import DialcheckError, InputError

T = TypeVar("T")


def run(main: Callable[..., Any], *args: Any) -> Any:
    """``main(*args)``; a user error exits with status 2 and its message, naming the script."""
    prog = Path(sys.argv[0]).name
    try:
        return main(*args)
    except DialcheckError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
    except OSError as e:  # a file or folder the user named: missing, a directory, no permission
        if e.filename is None:
            raise
        print(f"{prog}: error: {e.filename}: {e.strerror or e}", file=sys.stderr)
    sys.exit(2)


def comma_list(item: Callable[[str], T]) -> Callable[[str], list[T]]:
    """An argparse type: comma-separated values, each read by the argparse type ``item``, at least one (``--taus
    0.5,x`` was a ValueError traceback once the predictions were read, ``--fillers 2,-1`` a crash after the model
    loaded).

    >>> from dialcheck.cli.common import positive_int
    >>> comma_list(positive_int)("1, 3,5")
    [1, 3, 5]
    >>> comma_list(positive_int)("1,0")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: must be at least 1, got 0
    >>> comma_list(positive_int)(",")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: expected a comma-separated list, got ','
    """

    def parse(text: str) -> list[T]:
        values = [item(x.strip()) for x in text.split(",") if x.strip()]
        if not values:
            raise argparse.ArgumentTypeError(f"expected a comma-separated list, got {text!r}")
        return values

    return parse


def readable_file(text: str) -> Path:
    """An argparse type: a file that is there and can be read, checked when the command line is read rather than
    when the script comes to it, after minutes of building pairs or loading a model.

    >>> readable_file("no/such.jsonl")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: no such file: no/such.jsonl
    >>> readable_file(".")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: is a directory, expected a file: .
    """
    from dialcheck.io import require_file

    try:
        path = require_file(text)
    except InputError as e:  # argparse puts the option before the message: "argument --data: no such file: ..."
        raise argparse.ArgumentTypeError(f"{e.message}: {text}") from None
    if not os.access(path, os.R_OK):
        raise argparse.ArgumentTypeError(f"cannot be read (permission denied): {text}")
    return path
