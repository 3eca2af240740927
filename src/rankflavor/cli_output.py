"""What the commands write beside their output: the command line that made it, and ``--html``.

Shared by :mod:`rankflavor.cli` and the command modules it adds (``cli_judgments``,
``cli_project``); like them, this module imports only click at module level.
"""

from __future__ import annotations

import os
import shlex
import sys
from typing import Any

import click


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
    from . import __version__
    from .sources import file_sha256

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

    from .report import write_report

    write_report(path, docs, command=typed_command_line(), config=json.dumps(config) if config else None)
    click.echo(f"report written to {path}", err=True)


__all__ = ["command_line", "html_report", "input_provenance", "typed_command_line"]
