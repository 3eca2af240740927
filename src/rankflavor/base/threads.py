"""Threads: how many cores this process may use, a function run in the background, and work
that threads share task by task. rankflavor's readers and alignment use two threads (NumPy and
pyarrow release the GIL in their loops); these are the few primitives they share."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

T = TypeVar("T")


def cores() -> int:
    """The processors this process may run on (its affinity, not the machine's count)."""
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


def in_background(function: Callable[..., T], *args: Any) -> Future[T]:
    """``function(*args)`` on a thread of its own; its result (or error) in the returned future.
    The qrels reader finds what alignment will need of the judged docnos while the run is read
    (off alignment's critical path), and :func:`rankflavor.engine.evaluate.evaluate` reads a qrels file
    and a run file this way while the engine is imported.

    The thread is not a daemon: a caller that raises first (a bad line in the other input, an
    unknown metric) leaves its result unread, and the interpreter then waits for it to end
    before it shuts down. A daemon thread would still be inside a reader's native code
    (pyarrow's Parquet or CSV reader, zlib) when the interpreter tears down, and the process
    died of it after printing the error: a segmentation fault, or ``terminate called without
    an active exception`` (exit 139 or 134 instead of 2 or 3; tests/cli/test_robustness.py).
    """
    future: Future[T] = Future()

    def work() -> None:
        try:
            future.set_result(function(*args))
        except BaseException as error:  # the caller's .result() raises it
            future.set_exception(error)

    threading.Thread(target=work, daemon=False, name="rankflavor-background").start()
    return future


def done(value: T) -> Future[T]:
    """A future that holds ``value`` already (what a reader found at once, where a consumer
    reads a future that a thread would otherwise fill)."""
    future: Future[T] = Future()
    future.set_result(value)
    return future


class SharedWork:
    """Tasks taken one at a time by every thread that calls :meth:`run`; ``results`` are in task
    order once every thread's :meth:`run` has returned. Shared in small tasks, the thread that
    comes free first does more of them: neither waits on a fixed half of the other's.

    ``until``: a result for which no further task is started (``stopped`` is then True; tasks
    already running finish, so read it once every thread has returned).
    """

    def __init__(self, tasks: list[Callable[[], Any]], until: Callable[[Any], bool] | None = None) -> None:
        self._tasks = tasks
        self._until = until
        self._next = 0
        self._lock = threading.Lock()
        self.results: list[Any] = [None] * len(tasks)
        self.stopped = False

    def run(self) -> None:
        while not self.stopped:
            with self._lock:
                k = self._next
                self._next += 1
            if k >= len(self._tasks):
                return
            self.results[k] = self._tasks[k]()
            if self._until is not None and self._until(self.results[k]):
                self.stopped = True
