"""Typed exceptions. Every error a user can cause maps to one class and one exit code.

The CLI prints ``str(error)`` and exits with ``error.exit_code``; no traceback reaches a user
for bad input. Library callers can catch :class:`RankflavorError` for everything.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class RankflavorError(Exception):
    """Base class of every error rankflavor raises on purpose."""

    exit_code = 1


class UsageError(RankflavorError, ValueError):
    """An argument or option is not valid (wrong type, out of range, unknown name)."""

    exit_code = 2


class FlavorError(UsageError):
    """A flavor knob, its value or a metric name is not valid.

    The message lists the valid choices and suggests the closest one.
    """


class InputError(RankflavorError, ValueError):
    """A qrels or run input is malformed.

    Parameters
    ----------
    source : str
        File path (or a description such as ``"qrels dict"``).
    line : int or None
        1-based line number, when the problem is on one line.
    message : str
        What is wrong and what was expected.
    text : str or None
        The offending line, echoed back (truncated).
    """

    exit_code = 3

    def __init__(self, source: str, line: int | None, message: str, text: str | None = None):
        self.source = source
        self.line = line
        self.text = text
        where = f"{source}:{line}" if line is not None else source
        full = f"{where}: {message}"
        if text is not None:
            shown = text if len(text) <= 200 else text[:200] + "..."
            full += f"\n  line: {shown!r}"
        self.message = message
        super().__init__(full)


class FormatLossError(UsageError):
    """The output format cannot hold what the input has (``rankflavor convert``): a score in a
    format of ranks, an id with a blank in TREC text, a fractional grade in BEIR qrels. The
    message names the first such row and what ``--lossy`` would do, where it can."""


class EvaluationError(RankflavorError):
    """The flavor asked to fail on a condition the data has (``missing=error``, ``empty=error``)."""

    exit_code = 4


class ResourceError(RankflavorError):
    """The machine ran out of memory for the inputs given (exit code 5). The message names the
    inputs and what to do instead (``rankflavor eval --chunk-rows N`` streams a run in chunks);
    the command line raises it for a :class:`MemoryError` (NumPy's and pyarrow's included)."""

    exit_code = 5


def did_you_mean(value: str, choices: Iterable[str]) -> str:
    """Return ``" Did you mean 'x'?"`` for the closest choice, or ``""``."""
    options = [str(c) for c in choices]
    lowered = {o.lower(): o for o in options}
    if value.lower() in lowered:
        return f" Did you mean '{lowered[value.lower()]}'?"
    close = difflib.get_close_matches(value, options, n=1, cutoff=0.5)
    if not close:
        close = difflib.get_close_matches(value.lower(), list(lowered), n=1, cutoff=0.5)
        close = [lowered[c] for c in close]
    return f" Did you mean '{close[0]}'?" if close else ""
