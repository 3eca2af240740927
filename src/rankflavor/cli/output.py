"""What the commands write beside their output: the command line that made it, ``--html``, and
what the terminal shows while and after they work: ``--wide`` and ``--quiet``
(:func:`screen_options`), the output width (:func:`output_width`) and progress bars
(:func:`shown_progress`).

Shared by :mod:`rankflavor.cli.main` and the command modules it adds (``cli_judgments``,
``cli_project``); like them, this module imports only click at module level.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from rankflavor.base.progress import Progress

#: The columns ``--wide`` lays text out for: every flavor string whole beside its numbers.
WIDE = 300
_WIDE, _QUIET = "rankflavor.wide", "rankflavor.quiet"
F = TypeVar("F", bound=Callable[..., Any])


def _remember(key: str) -> Callable[[click.Context, click.Parameter, bool], None]:
    def store(ctx: click.Context, param: click.Parameter, value: bool) -> None:
        if value:
            ctx.meta[key] = True

    return store


def screen_options(command: F) -> F:
    """``--wide`` and ``--quiet`` of a command that prints for a person: the same two options,
    meaning the same thing, on every such command (read back by :func:`output_width` and
    :func:`shown_progress`, so the command's own parameters do not change)."""
    command = click.option("--wide", is_flag=True, expose_value=False, callback=_remember(_WIDE),
                           help=f"Lay the table out {WIDE} columns wide whatever the terminal's width: every "
                           "flavor string whole, no column paged (lines may be wider than the terminal).")(command)
    return quiet_option(command)


def quiet_option(command: F) -> F:
    """``--quiet`` alone, on a command that writes a file rather than a table (``convert``,
    ``aggregate``, ``report``): the same option, meaning the same thing, as :func:`screen_options`'."""
    return click.option("--quiet", is_flag=True, expose_value=False, callback=_remember(_QUIET),
                        help="No progress bars (they are drawn on standard error only when it is a terminal, "
                        "and removed when the work is done).")(command)


def output_width() -> int | None:
    """The columns the command's text is laid out for: :data:`WIDE` under ``--wide``, else None
    (the terminal's width: ``COLUMNS``, the terminal, else 80)."""
    ctx = click.get_current_context(silent=True)
    return WIDE if ctx is not None and ctx.meta.get(_WIDE) else None


@contextmanager
def shown_progress() -> Iterator[Progress | None]:
    """Progress bars on standard error when it is a terminal and ``--quiet`` was not given
    (:func:`rankflavor.base.progress.terminal_progress`); else None, and nothing is drawn."""
    from rankflavor.base.progress import terminal_progress

    ctx = click.get_current_context(silent=True)
    if ctx is not None and ctx.meta.get(_QUIET):
        yield None
        return
    with terminal_progress() as bar:
        yield bar


@contextmanager
def working(description: str) -> Iterator[None]:
    """A bar with no total (it pulses) while work that reports no steps runs, under the rules
    of :func:`shown_progress`."""
    from rankflavor.base.progress import task

    with shown_progress() as bar, task(bar, description):
        yield


def typed_command_line() -> str | None:
    """The command line as typed, when this process is the ``rankflavor`` command (not a test
    runner or another program calling in-process)."""
    argv0 = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    if os.path.basename(argv0) == "rankflavor" or argv0.endswith(os.path.join("rankflavor", "__main__.py")):
        return shlex.join(["rankflavor", *sys.argv[1:]])
    return None


def command_line() -> str:
    """The command line: as typed (:func:`typed_command_line`), else (called in-process, as by a
    test runner) the command and the parameters click parsed."""
    typed = typed_command_line()
    if typed is not None:
        return typed
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return "rankflavor (in-process)"
    params = " ".join(f"{k}={v!r}" for k, v in ctx.params.items() if v not in (None, False, ()))
    return f"rankflavor {ctx.info_name} (in-process: {params})"


def input_provenance(qrels: Any, runs: Any, hashes: bool = False) -> dict[str, Any]:
    """The provenance a command's results carry when its library result has none: rankflavor's
    version, the command line, and each input file's path and size (with ``hashes``, its SHA-256:
    for a report written now, from the files read now). Sizes and paths only by default, so the
    command's JSON does not change when the lines of an input are reordered."""
    from rankflavor._version import __version__
    from rankflavor.base.sources import file_sha256

    def record(path: Any) -> dict[str, Any]:
        source = os.fspath(path)
        rec: dict[str, Any] = {"source": source}
        if os.path.isfile(source):
            rec["bytes"] = os.path.getsize(source)
            if hashes:
                rec["sha256"], rec["hash_of"] = file_sha256(source), "file bytes"
        return rec

    out: dict[str, Any] = {"rankflavor": __version__, "command": command_line(), "qrels": record(qrels)}
    out["runs"] = [record(r) for r in runs]
    return out


def html_report(path: str, docs: list[Any], config: dict[str, Any] | None = None) -> None:
    """``--html FILE`` of a command: the report of its results (``rankflavor.report`` documents)."""
    import json

    from rankflavor.report import write_report

    write_report(path, docs, command=typed_command_line(), config=json.dumps(config) if config else None)
    click.echo(f"report written to {path}", err=True)


def emit(text: str, output: str | None) -> None:
    """``text`` to standard output, or to the file ``output`` (UTF-8) when one is named."""
    if output is None:
        click.echo(text, nl=False)
    else:
        with open(output, "w", encoding="utf-8") as f:
            f.write(text)


__all__ = ["WIDE", "command_line", "emit", "html_report", "input_provenance", "output_width", "screen_options",
           "shown_progress", "typed_command_line", "working"]
