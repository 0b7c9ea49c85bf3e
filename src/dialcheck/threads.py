"""CPU threads for torch and ONNX Runtime, set without importing torch (which takes about a second).

>>> thread_count() >= 0
True
"""

from __future__ import annotations

import os
import sys

__all__ = ["set_threads", "thread_count"]


def set_threads(n: int) -> None:
    """Use ``n`` threads per op (0 leaves each runtime's default). Torch, when not loaded yet, reads it from
    ``OMP_NUM_THREADS`` as it loads; ONNX Runtime sessions made later read it from :func:`thread_count`."""
    if n < 0:
        raise ValueError(f"a thread count is 0 (the default) or positive, got {n}")
    if not n:
        return
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(n)
    else:
        os.environ["OMP_NUM_THREADS"] = str(n)


def thread_count() -> int:
    """Threads per op: torch's count once torch is loaded, else ``OMP_NUM_THREADS``, else 0 (the runtime's
    default: ONNX Runtime and torch both take the number of physical cores)."""
    if "torch" in sys.modules:
        return int(sys.modules["torch"].get_num_threads())
    try:
        return max(0, int(os.environ.get("OMP_NUM_THREADS", "0")))
    except ValueError:
        return 0
