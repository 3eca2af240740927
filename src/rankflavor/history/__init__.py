"""The evaluation history: an embedded SQLite file that every recorded evaluation is appended to.

Public names::

    record_results(db_path, results, *, dataset=None, run=None, command=None, hashes=None) -> int
    load_series(db_path, metric=None, dataset=None) -> list[Series]   one per (dataset, flavor)
    split_reasons(series) -> list[str]       why one measure's points are several lines
    load_record(db_path, record_id) -> dict  one record with its per-query values
    HistoryError                             the file is not a usable history (exit status 3)

Modules: ``store`` (the schema, WAL, busy timeout, ``BEGIN IMMEDIATE`` transactions), ``record``
(one evaluation as one transaction; input hashes from the provenance), ``series`` (reading back).
The command line is ``rankflavor eval ... --record`` and ``rankflavor history``
(:mod:`rankflavor.cli.history`); the chart and table are in :mod:`rankflavor.render.historyfmt`.
"""

from __future__ import annotations

from rankflavor.history.record import input_hashes, record_results
from rankflavor.history.series import Point, Series, knob_differences, load_record, load_series, split_reasons
from rankflavor.history.store import DEFAULT_PATH, SCHEMA_VERSION, HistoryError

__all__ = ["DEFAULT_PATH", "SCHEMA_VERSION", "HistoryError", "Point", "Series", "input_hashes", "knob_differences",
           "load_record", "load_series", "record_results", "split_reasons"]
