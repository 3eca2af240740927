"""The one place results are handed to the run history (issue 19 item 5, ``rankflavor.history``).

MERGE HOOK: ``rankflavor.history`` is built on another branch; it exposes
``record_results(db_path, results, *, dataset=None, run=None, command=None)``. Every command
that records (``eval --record``, ``gate --record``) calls :func:`record` below and nothing else,
so wiring the history in is this one function. Until the module is present, recording is
skipped and the command says so on standard error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..results import Results
    from .config import Config


def record(config: Config | None, results: Results, *, dataset: str | None = None, run: str | None = None,
           command: str | None = None) -> str:
    """Append ``results`` to the config's history database; return what was done, as one sentence."""
    if config is None or config.history_path is None:
        return "not recorded: no rankflavor.toml with a [history] path"
    try:
        from ..history import record_results  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return "not recorded: rankflavor.history is not part of this build"
    record_results(config.history_path, results, dataset=dataset, run=run, command=command)
    return f"recorded in {config.history_path}"


__all__ = ["record"]
