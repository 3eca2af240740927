"""What the command line does with an error: a typed one is printed with its exit code; running
out of memory becomes a :class:`~rankflavor.errors.ResourceError` (exit 5) that names the inputs
and says what to do, instead of NumPy's or pyarrow's traceback (issue #32).

Imports only click and the errors, like :mod:`rankflavor.cli.main`.
"""

from __future__ import annotations

import os
from typing import Any

import click

from rankflavor.errors import ResourceError

#: Where :class:`rankflavor.cli.main._Group` keeps the command it resolved and its arguments.
CALLED = "rankflavor.called"
#: The chunk size suggested first: about a million run lines in memory at a time.
SUGGESTED_ROWS = 1_000_000
#: Parameters that name input files, in the order a message names them.
_INPUTS = ("qrels", "run", "runs", "inputs", "ratings", "path", "results")


def out_of_memory(ctx: click.Context, exc: BaseException) -> ResourceError:
    """The error for running out of memory (a :class:`MemoryError`, or a thread that could not
    start) in the command ``ctx`` resolved: the inputs it was given and what to do."""
    name, params = _called(ctx)
    detail = str(exc).strip()
    why = f" ({type(exc).__name__}: {detail})" if detail else ""
    inputs = _inputs(params)
    head = ("ran out of memory" + (f" in `rankflavor {name}`" if name else "") + (f" on {inputs}" if inputs else "")
            + why + ".")
    if name == "eval":
        return ResourceError(head + " " + _eval_advice(params))
    advice = ("Free memory, or give smaller inputs; `rankflavor eval --chunk-rows N` evaluates a run file too large "
              "for memory in chunks of about N rows.")
    return ResourceError(head + " " + advice)


def _eval_advice(params: dict[str, Any]) -> str:
    if params.get("engine") == "spark":
        return ("Spark holds the inputs in its local JVM and hands one bucket of queries to each task: give the "
                "driver more memory (spark.driver.memory) or use the local engine with --chunk-rows N.")
    rows = params.get("chunk_rows")
    if rows:
        smaller = max(1, int(rows) // 4)
        return (f"Even chunks of about {rows} run rows were too many: try --chunk-rows {smaller}. The judgments "
                "are held whole: if they alone do not fit, split them by query.")
    advice = (f"Evaluate the run in chunks of whole queries: --chunk-rows {SUGGESTED_ROWS} keeps about "
              f"{SUGGESTED_ROWS:,} run lines in memory at a time (fewer if it still fails).")
    run = params.get("run")
    if isinstance(run, str) and _run_format(run, params) not in (None, "trec"):
        advice += (" Chunks stream TREC run files: convert this one first (`rankflavor convert "
                   f"{run} run.txt --kind run`).")
    return advice


def _run_format(run: str, params: dict[str, Any]) -> str | None:
    try:
        from rankflavor.io.formats.read import choose

        fmt = params.get("run_format")
        return choose(run, "run", None if fmt in (None, "auto") else fmt)
    except Exception:  # (a name the readers would refuse: the advice stays general)
        return None


def _called(ctx: click.Context) -> tuple[str | None, dict[str, Any]]:
    """The command's name and its parameters as parsed (none when they cannot be)."""
    called = ctx.meta.get(CALLED)
    if called is None:
        return None, {}
    name, command, args = called
    try:
        sub = command.make_context(name, list(args), parent=ctx, resilient_parsing=True)
    except Exception:  # (parsing failed before; the message names the command alone)
        return name, {}
    return name, dict(sub.params)


def _inputs(params: dict[str, Any]) -> str:
    named: list[str] = []
    for key in _INPUTS:
        value = params.get(key)
        values = value if isinstance(value, (list, tuple)) else [value]
        named += [os.fspath(v) for v in values if isinstance(v, (str, os.PathLike)) and v]
    if len(named) > 4:
        named = [*named[:3], f"{len(named) - 3} more"]
    return ", ".join(named)


def is_thread_limit(exc: BaseException) -> bool:
    """A thread that could not start (``RuntimeError: can't start new thread``): memory, for a
    process under an address-space limit."""
    return isinstance(exc, RuntimeError) and "can't start new thread" in str(exc)


__all__ = ["CALLED", "SUGGESTED_ROWS", "is_thread_limit", "out_of_memory"]
