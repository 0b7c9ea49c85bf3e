"""How a benchmark script ends on a user error: one line on stderr and exit status 2, as ``dialcheck`` does.

A missing data directory, a corpus or predictions file that is not there or not well formed, an unknown model
folder: each raises a :class:`~dialcheck.errors.DialcheckError` (or an ``OSError`` naming the file), which
:func:`run` prints as ``script.py: error: ...`` instead of a traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dialcheck.errors import DialcheckError


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
