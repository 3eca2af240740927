"""One evaluation appended to the history: its flavors, means, per-query values and input hashes.

A record is written in one ``BEGIN IMMEDIATE`` transaction (:func:`.store.transaction`): a
writer that dies mid-record leaves nothing of it, and every earlier record as it was.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from rankflavor.base.sources import file_sha256, sources
from rankflavor.errors import UsageError
from rankflavor.history.store import connect, sqlite_errors, transaction

if TYPE_CHECKING:
    from rankflavor.engine.results import Results



def record_results(
    db_path: str | os.PathLike[str],
    results: Results | Mapping[str, Any],
    *,
    dataset: str | None = None,
    run: str | None = None,
    command: str | None = None,
    hashes: Mapping[str, str] | None = None,
) -> int:
    """Append ``results`` to the history database at ``db_path`` (created if absent); return the
    new record's id.

    Parameters
    ----------
    db_path : path of the SQLite history file.
    results : a :class:`~rankflavor.engine.results.Results`, or its ``to_dict()`` form (a results JSON
        file read back).
    dataset : the dataset's name (e.g. from the project config); stored as given.
    run : the run's name; default: the run file's name from the provenance, else the run's tag.
    command : the command line that produced the results.
    hashes : ``{role: sha256}`` of the inputs (``qrels``, ``run``, ...). Default: the SHA-256 the
        provenance records, else the file named there hashed now (if it still exists and has the
        size the provenance recorded). A role given here wins.

    Returns
    -------
    int
        The record id (increasing: a later record has a larger id).

    Examples
    --------
    >>> import tempfile, os
    >>> from rankflavor import evaluate
    >>> r = evaluate({"q1": {"a": 1}}, {"q1": {"a": 0.5, "b": 0.9}}, ["P@2"])
    >>> db = os.path.join(tempfile.mkdtemp(), "h.sqlite")
    >>> record_results(db, r, dataset="toy", run="bm25", hashes={"qrels": "ab" * 32})
    1
    >>> from rankflavor.history import load_series
    >>> [(p.run, p.value) for s in load_series(db, "P@2") for p in s.points]
    [('bm25', 0.5)]
    """
    data = results.to_dict() if hasattr(results, "to_dict") else dict(results)
    measures = data.get("measures")
    if not isinstance(measures, list) or not measures:
        raise UsageError("record_results: the results hold no measure to record")
    provenance = data.get("provenance") or {}
    inputs = input_hashes(provenance)
    for role, digest in (hashes or {}).items():
        inputs[str(role)] = {"source": inputs.get(str(role), {}).get("source"), "sha256": str(digest),
                             "how": "given by the caller"}
    version = provenance.get("rankflavor") if isinstance(provenance.get("rankflavor"), str) else None
    if version is None:
        from rankflavor._version import __version__ as version
    when = datetime.now(UTC).isoformat(timespec="microseconds")
    conn = connect(db_path, create=True)
    try:
        with sqlite_errors(os.fspath(db_path), True), transaction(conn):
            cur = conn.execute(
                "INSERT INTO records (recorded_at, dataset, run, command, rankflavor_version) VALUES (?, ?, ?, ?, ?)",
                (when, dataset, run if run is not None else _run_name(provenance), command, version))
            record_id = cur.lastrowid
            assert record_id is not None
            conn.executemany(
                "INSERT INTO inputs (record_id, role, source, sha256, how) VALUES (?, ?, ?, ?, ?)",
                [(record_id, role, i.get("source"), i.get("sha256"), i["how"]) for role, i in inputs.items()])
            for position, m in enumerate(measures):
                mid = conn.execute(
                    "INSERT INTO measures (record_id, position, flavor, name, display, summary_rule, value, n_queries) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (record_id, position, str(m["flavor"]), _name(m), str(m.get("name") or _name(m)),
                     m.get("summary"), _real(m.get("value")), int(m.get("n_queries") or 0))).lastrowid
                conn.executemany(
                    "INSERT INTO per_query (measure_id, query, value, text_value, status) VALUES (?, ?, ?, ?, ?)",
                    [(mid, str(row["query"]), _real(row.get("value")),
                      row["value"] if isinstance(row.get("value"), str) else None, str(row.get("status", "ok")))
                     for row in m.get("per_query") or ()])
    finally:
        conn.close()
    return int(record_id)


def _name(m: Mapping[str, Any]) -> str:
    metric, k = m.get("metric"), m.get("k")
    if isinstance(metric, str):
        return metric if k is None else f"{metric}@{k}"
    return str(m["flavor"]).split("[", 1)[0]


def _real(v: Any) -> float | None:
    if v is None or isinstance(v, str):
        return None
    x = float(v)
    return None if math.isnan(x) else x


def _run_name(provenance: Mapping[str, Any]) -> str | None:
    # The file's name first: runs of one toolkit often share a tag ("rank", "Anserini").
    run = provenance.get("run")
    if isinstance(run, Mapping):
        if isinstance(run.get("source"), str) and os.path.isfile(run["source"]):
            return os.path.basename(run["source"])
        if run.get("tag"):
            return str(run["tag"])
    return None


def input_hashes(provenance: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """``{role: {"source", "sha256", "how"}}`` of every input the provenance names.

    An input is a mapping with a ``source`` key (``qrels``, ``run``, or deeper, e.g. ``runs.0``).
    A ``sha256`` the provenance recorded wins; else the file is hashed now if it exists and its
    size equals the ``bytes`` recorded (a file that changed since is left unhashed, saying so).

    >>> input_hashes({"qrels": {"source": "qrels dict"}})["qrels"]["sha256"] is None
    True
    """
    return {rec["role"]: _hash_of(rec) for rec in sources(dict(provenance))}


def _hash_of(record: Mapping[str, Any]) -> dict[str, Any]:
    source = record["source"]
    recorded = record.get("sha256")
    if isinstance(recorded, str) and recorded:
        return {"source": source, "sha256": recorded, "how": "recorded in the results"}
    if not os.path.isfile(source):
        return {"source": source, "sha256": None, "how": "not hashed: no such file now (an input given in memory, or a file since removed)"}
    size = record.get("bytes")
    now = os.path.getsize(source)
    if isinstance(size, int) and size != now:
        return {"source": source, "sha256": None,
                "how": f"not hashed: the file changed size since the evaluation ({size} bytes then, {now} now)"}
    return {"source": source, "sha256": file_sha256(source), "how": "hashed when recorded"}


__all__ = ["input_hashes", "record_results"]
