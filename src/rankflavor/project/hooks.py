"""The one place results are handed to the run history (issue 19 item 5, :mod:`rankflavor.history`).

Every command that records (``eval --record``, ``gate --record``) calls :func:`record` below and
nothing else. The database is ``--history-db`` when given, else the config's ``[history] path``,
else ``rankflavor-history.sqlite`` in the working directory. A missing folder is created only for
the config's path, and only inside the project folder; elsewhere the folder must exist.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rankflavor.engine.results import Results
    from rankflavor.project.config import Config


def record(config: Config | None, results: Results, *, dataset: str | None = None, run: str | None = None,
           command: str | None = None, db_path: str | None = None) -> str:
    """Append ``results`` to the history database; return what was done, as one sentence."""
    from rankflavor.history import record_results
    from rankflavor.history.store import DEFAULT_PATH

    path = db_path or (config.history_path if config is not None else None) or DEFAULT_PATH
    if db_path is None and config is not None and config.history_path is not None:
        # The one place a folder is made for the history: a missing one inside the project.
        folder = config.history_path.parent
        if folder.is_relative_to(config.path.parent) and not folder.exists():
            try:
                folder.mkdir(parents=True)
            except OSError as exc:
                from rankflavor.history import HistoryError

                raise HistoryError(str(path), f"cannot create its folder {folder}: {exc.strerror or exc}") from None
    record_id = record_results(path, results, dataset=dataset, run=run, command=command)
    return f"recorded as record {record_id} in {path}"


__all__ = ["record"]
