"""Forcing an interleaving of threads instead of sleeping and hoping it happens.

A race test needs the second thread to reach the guarded code while the first is inside it. A stand-in for the slow
part (a load, an export, a pool's constructor) waits until every other thread has *arrived*: at the lock that should
hold it out (:meth:`Arrivals.lock` wraps the lock), or inside the stand-in itself (where it gets without the lock).
Either way the wait ends at once, and the test then sees what the code does with both threads there, every run.
"""

from __future__ import annotations

import threading
from typing import Any

WAIT = 30.0  # seconds: a safety net for a hung test, never reached when the code under test is as expected


class Arrivals:
    """The threads that have come to a point of interest."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._seen: set[int] = set()

    def arrive(self) -> None:
        """The calling thread is here."""
        with self._cond:
            self._seen.add(threading.get_ident())
            self._cond.notify_all()

    def wait_for_others(self, n: int = 1) -> bool:
        """Wait until ``n`` threads other than the calling one have arrived; True when they have."""
        me = threading.get_ident()
        with self._cond:
            return self._cond.wait_for(lambda: len(self._seen - {me}) >= n, WAIT)

    def lock(self, real: Any) -> Any:
        """A stand-in for the lock ``real``: a thread arrives, then takes ``real``."""
        arrivals = self

        class _Lock:
            def __enter__(self) -> Any:
                arrivals.arrive()
                return real.__enter__()

            def __exit__(self, *exc: Any) -> Any:
                return real.__exit__(*exc)

        return _Lock()


def blocked(compute: Any) -> threading.Event:
    """Occupy ``compute`` (a serve ComputeThread) until the returned event is set; returns once it is occupied."""
    gate, started = threading.Event(), threading.Event()
    compute.submit(lambda: (started.set(), gate.wait(WAIT)))
    assert started.wait(WAIT)
    return gate
