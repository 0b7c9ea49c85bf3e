"""Forcing an interleaving of threads instead of sleeping and hoping it happens.

A race test needs the second thread to reach the guarded code while the first is inside it. A stand-in for the slow
part (a load, an export, a pool's constructor) waits until every other thread has *arrived*: at the lock that should
hold it out (:meth:`Arrivals.lock` wraps the lock), or inside the stand-in itself (where it gets without the lock).
Either way the wait ends at once, and the test then sees what the code does with both threads there, every run.
"""

from __future__ import annotations

import queue
import random
import re
import threading
from concurrent.futures import Future
from typing import Any

from dialcheck.serve.compute import ComputeThread

WAIT = 30.0  # seconds: a safety net for a hung test, never reached when the code under test is as expected

_WORDS = re.findall(r"\w+", "I have a dog cat never had pets we live in Paris London my sister works as a teacher")


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


class QueuedCompute(ComputeThread):
    """A serve compute thread that hands the test each check job's future (in ``queued``) as the job is queued."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.queued: queue.Queue[Future[Any]] = queue.Queue()

    def check(self, dialogues: Any, route: Any) -> Future[Any]:
        future = super().check(dialogues, route)
        self.queued.put(future)
        return future


def random_turn(rng: random.Random) -> str:
    """A made-up turn of 3, 8 or 150 words (``rng``'s choice): short, or too long for the tiny model's 128-token
    window (cut, chunked), as the concurrency tests send them."""
    return " ".join(rng.choice(_WORDS) for _ in range(rng.choice([3, 8, 150]))) + "."
