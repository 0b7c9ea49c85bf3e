"""One thread for every model call of a service, merging checks that wait together into one batch.

Torch runs its CPU kernels on OpenMP. GNU OpenMP lets its worker threads spin between parallel regions
only while no more threads drive OpenMP than there are cores; once a second thread has run a torch op
(as a web server's request threads do), every op of every thread pays for waking sleeping workers. On
2 cores that made one ten-turn check 1.5x slower from a worker thread than from the first thread
(``benchmarks/latency.py``, docs/benchmarks.md "Latency"). :class:`ComputeThread` runs all model work,
loading included, on one thread, and hands it the /check requests that arrived while it was busy as
one batched ``predict``. A model on ONNX Runtime runs no torch op while it scores, and its sessions are
thread-safe: with ``workers=0`` each job runs on the thread that submits it (a web server's request
threads), which under load keeps both cores busier than one compute thread does.

>>> ct = ComputeThread()
>>> ct.run(lambda: 6 * 7)
42
>>> ct.close()
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import CancelledError, Future, InvalidStateError
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..schema import Dialogue, Verdict

__all__ = ["ComputeClosed", "ComputeThread"]

log = logging.getLogger(__name__)

T = TypeVar("T")
Route = Callable[[list[Dialogue]], Sequence[Any]]


class ComputeClosed(RuntimeError):
    """A job the :class:`ComputeThread` gave up on when it was closed (a server shutting down stops waiting)."""


@dataclass(eq=False)  # one job is one job: kept in a set while it is queued or running
class _Job:
    future: Future[Any] = field(default_factory=Future)
    fn: Callable[[], Any] | None = None  # a plain call
    dialogues: list[Dialogue] | None = None  # or a check: dialogues and the function naming their detectors
    route: Route | None = None
    inline: bool = False  # run on the submitting thread (workers=0): a request thread, which no close can stop


class ComputeThread:
    """Runs submitted calls one at a time on a single daemon thread (started on first use), or on
    ``workers`` threads taking jobs from one queue, or (``workers=0``) right away on the submitting thread.
    More than one thread only suits models on ONNX Runtime: two threads driving torch slow both.

    :meth:`check` jobs queued back to back are merged, up to ``max_batch_dialogues`` dialogues, into one
    :func:`dialcheck.api.predict_grouped` call; each job still gets its own verdicts, and a job whose
    routing fails fails alone. ``requests`` and ``batches`` count the check jobs and the predict calls.
    """

    def __init__(
        self, max_batch_dialogues: int = 256, name: str = "dialcheck-compute", workers: int = 1, batch_size: int = 64
    ) -> None:
        if workers < 0:
            raise ValueError(f"workers must be 0 or more, got {workers}")
        self.max_batch_dialogues = int(max_batch_dialogues)
        self.batch_size = int(batch_size)  # pairs per forward pass
        self.name = name
        self.workers = int(workers)
        self.requests = 0
        self.batches = 0
        self._queue: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._jobs: set[_Job] = set()  # queued or running on the threads, until their future is done
        self._given_up: list[_Job] = []  # inline jobs close gave up on (their callers' threads run them on)
        self._lock = threading.Lock()

    def _put(self, job: _Job) -> None:
        if self.workers == 0:  # inline, on the caller's thread; kept in _jobs until it ends, not until it is settled
            job.inline = True
            with self._lock:
                self._jobs.add(job)
            try:
                self._call(job) if job.dialogues is None else self._checks([job])
            finally:
                self._forget(job)
            return
        with self._lock:
            if not self._threads:
                for i in range(self.workers):
                    name = self.name if self.workers == 1 else f"{self.name}-{i}"
                    self._threads.append(threading.Thread(target=self._loop, name=name, daemon=True))
                    self._threads[-1].start()
            self._jobs.add(job)
            self._queue.put(job)
        job.future.add_done_callback(lambda _: self._forget(job))

    def _forget(self, job: _Job) -> None:
        with self._lock:
            self._jobs.discard(job)

    def _count(self, requests: int = 0, batches: int = 0) -> None:
        with self._lock:
            self.requests += requests
            self.batches += batches

    def submit(self, fn: Callable[[], T]) -> Future[T]:
        """Run ``fn()`` on the compute thread; its result or exception arrives in the future."""
        job = _Job(fn=fn)
        self._put(job)
        return job.future

    def run(self, fn: Callable[[], T]) -> T:
        """``submit(fn)`` and wait: the result, or the exception ``fn`` raised (:class:`ComputeClosed` if the
        thread was closed first)."""
        return wait(self.submit(fn))

    def check(self, dialogues: Sequence[Dialogue], route: Route) -> Future[list[Verdict]]:
        """Verdicts for ``dialogues`` in order; ``route(dialogues)`` (called on the compute thread, so it may
        load models) names the detector of each."""
        job = _Job(dialogues=list(dialogues), route=route)
        self._put(job)
        return job.future

    def close(self, timeout: float | None = 30) -> None:
        """Finish the queued jobs, then stop the threads; after ``timeout`` seconds (None: no limit) give up on
        the jobs still queued or running: their futures fail with :class:`ComputeClosed` (a queued one is
        cancelled), so that no caller waits on them any longer. A job given up on while it runs goes on to its end
        on its (daemon) thread, which then stops; its result is dropped. With ``workers=0`` a job runs on the thread
        that submitted it, which close cannot stop: :meth:`running_given_up` counts those still running."""
        with self._lock:
            threads, self._threads = self._threads, []
            jobs = list(self._jobs)  # not those submitted after this, which start new threads
            for _ in threads:
                self._queue.put(None)
        deadline = None if timeout is None else time.monotonic() + max(0.0, timeout)
        for thread in threads:
            thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
        given_up = 0
        for job in jobs:  # a queued job is cancelled (it will not run), a running one fails
            closed = ComputeClosed(f"{self.name} was closed before this job finished")
            if job.future.cancel() or _settle(job.future, error=closed):
                given_up += 1
                if job.inline:
                    with self._lock:
                        self._given_up.append(job)
        if given_up:
            log.warning(
                "%s closed: gave up on %d job(s) still queued or running after %ss", self.name, given_up, timeout
            )

    def running_given_up(self) -> int:
        """How many jobs :meth:`close` gave up on still run on the threads that submitted them (``workers=0``).
        Those are the server's request threads, which are no daemons: the interpreter waits for them at exit."""
        with self._lock:
            self._given_up = [job for job in self._given_up if job in self._jobs]
            return len(self._given_up)

    def _loop(self) -> None:
        held: deque[_Job | None] = deque()  # taken from the queue while merging, runs next
        while True:
            job = held.popleft() if held else self._queue.get()
            if job is None:
                return
            if job.dialogues is None:
                self._call(job)
                continue
            batch, n = [job], len(job.dialogues)
            while not held and n < self.max_batch_dialogues:
                try:
                    nxt = self._queue.get_nowait()
                except queue.Empty:
                    break
                if nxt is None or nxt.dialogues is None:
                    held.append(nxt)  # a plain call or the stop: order kept, merging ends here
                else:
                    batch.append(nxt)
                    n += len(nxt.dialogues)
            self._checks(batch)

    @staticmethod
    def _call(job: _Job) -> None:
        if not job.future.set_running_or_notify_cancel():
            return
        try:
            result = job.fn()  # type: ignore[misc]
        except BaseException as e:  # handed to the caller, as concurrent.futures does
            _settle(job.future, error=e)
        else:
            _settle(job.future, result)

    def _checks(self, batch: list[_Job]) -> None:
        from ..api import predict_grouped

        ready: list[tuple[_Job, Sequence[Any]]] = []
        for job in batch:
            if not job.future.set_running_or_notify_cancel():
                continue
            self._count(requests=1)
            try:
                ready.append((job, job.route(job.dialogues)))  # type: ignore[misc, arg-type]
            except BaseException as e:  # this job's error, not the batch's
                _settle(job.future, error=e)
        if not ready:
            return
        dialogues = [d for job, _ in ready for d in job.dialogues]  # type: ignore[union-attr]
        detectors = [det for _, dets in ready for det in dets]
        self._count(batches=1)
        try:
            verdicts = predict_grouped(dialogues, detectors, self.batch_size)
        except BaseException as e:
            if len(ready) == 1:
                _settle(ready[0][0].future, error=e)
                return
            log.warning("a merged batch of %d requests failed (%s); running them one by one", len(ready), e)
            for job, dets in ready:
                self._count(batches=1)
                try:
                    _settle(job.future, predict_grouped(job.dialogues, dets, self.batch_size))  # type: ignore[arg-type]
                except BaseException as e1:
                    _settle(job.future, error=e1)
            return
        if len(ready) > 1:
            log.debug("merged %d requests (%d dialogues) into one batch", len(ready), len(dialogues))
        start = 0
        for job, _ in ready:
            end = start + len(job.dialogues)  # type: ignore[arg-type]
            _settle(job.future, verdicts[start:end])
            start = end


def _settle(future: Future[Any], result: Any = None, error: BaseException | None = None) -> bool:
    """Set ``future``'s result (or ``error``) unless it is done already (given up on by :meth:`ComputeThread.close`,
    or finished meanwhile); whether it was set."""
    try:
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)
    except InvalidStateError:
        return False
    return True


def wait(future: Future[T], timeout: float | None = None) -> T:
    """``future.result(timeout)``, a job given up on (closed or cancelled) raised as :class:`ComputeClosed`; after
    ``timeout`` seconds (None: no limit) a :class:`TimeoutError`."""
    try:
        return future.result(timeout)
    except CancelledError:
        raise ComputeClosed("the compute thread was closed before this job ran") from None
