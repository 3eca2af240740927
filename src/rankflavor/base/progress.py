"""How long work says how far it got, without the library deciding where that goes.

A function that can take long (a chunked read, a spread grid, a resampling test, a Spark job)
takes ``progress: Progress | None = None``. ``None``, the default, costs nothing: no bar, no
output, no process-wide setting. The caller that wants a bar passes one; the ``rankflavor``
command does so only when standard error is a terminal (:func:`terminal_progress`), so CI logs
and pipes stay clean.

Work reports at coarse steps only (a piece of a file, a flavor, a batch of resamples, a Spark
task), never per query: the hot loops stay as they are.

>>> with task(None, "nothing to see", total=3) as t:
...     t.advance()
>>> seen = Recorder()
>>> with task(seen, "counting", total=2) as t:
...     t.advance(); t.advance()
>>> seen.events
[('start', 'counting', 2), ('advance', 'counting', 1), ('advance', 'counting', 1), ('end', 'counting', None)]
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import IO, TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from rich.console import Console


@runtime_checkable
class Task(Protocol):
    """One piece of work in progress: ``advance`` it as units get done; ``close`` it when done.
    ``advance`` may be called from worker threads."""

    def advance(self, amount: float = 1) -> None: ...

    def close(self) -> None: ...


@runtime_checkable
class Progress(Protocol):
    """Where tasks report. ``total`` is the number of units (None when not known ahead)."""

    def task(self, description: str, total: float | None = None) -> Task: ...


class _Silent:
    """The task of no progress: every call does nothing."""

    def advance(self, amount: float = 1) -> None:
        pass

    def close(self) -> None:
        pass


_SILENT = _Silent()


class _Closing:
    """A task as a context manager that closes it on exit."""

    def __init__(self, inner: Task) -> None:
        self.inner = inner

    def advance(self, amount: float = 1) -> None:
        self.inner.advance(amount)

    def close(self) -> None:
        self.inner.close()

    def __enter__(self) -> _Closing:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.inner.close()


def task(progress: Progress | None, description: str, total: float | None = None) -> _Closing:
    """A task of ``progress`` (a silent one for None), usable as ``with task(...) as t:``."""
    return _Closing(_SILENT if progress is None else progress.task(description, total))


class Recorder:
    """A :class:`Progress` that keeps every call, in order (``events``): for tests, and for a
    caller that wants the numbers rather than a bar."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, float | None]] = []

    def task(self, description: str, total: float | None = None) -> Task:
        self.events.append(("start", description, total))
        events = self.events

        class _Task:
            def advance(self, amount: float = 1) -> None:
                events.append(("advance", description, amount))

            def close(self) -> None:
                events.append(("end", description, None))

        return _Task()


class RichProgress:
    """A :class:`Progress` drawn by ``rich.progress`` on ``console`` (a console on standard error
    by default). Use it as a context manager: the bars show while it is open and are removed when
    it closes (``transient``)."""

    def __init__(self, console: Console | None = None, *, transient: bool = True) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.console = console or Console(stderr=True)
        self._bars = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                              TimeElapsedColumn(), console=self.console, transient=transient)

    def task(self, description: str, total: float | None = None) -> Task:
        bars = self._bars
        tid = bars.add_task(description, total=total)

        class _Task:
            def advance(self, amount: float = 1) -> None:
                bars.advance(tid, amount)

            def close(self) -> None:
                if total is not None:  # done: the bar shows it full, whatever was counted
                    bars.update(tid, completed=total)
                bars.stop_task(tid)

        return _Task()

    def __enter__(self) -> RichProgress:
        self._bars.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._bars.stop()


@contextmanager
def terminal_progress(stream: IO[Any] | None = None, console: Console | None = None) -> Iterator[Progress | None]:
    """Bars on ``console`` when given, else on ``stream`` (standard error) when it is a terminal;
    None (no progress at all) otherwise. The command line's choice, never a library default."""
    if console is None:
        stream = sys.stderr if stream is None else stream
        isatty = getattr(stream, "isatty", None)
        if not (callable(isatty) and isatty()):
            yield None
            return
        from rich.console import Console

        console = Console(file=stream)
    with RichProgress(console) as bars:
        yield bars


__all__ = ["Progress", "Recorder", "RichProgress", "Task", "task", "terminal_progress"]
