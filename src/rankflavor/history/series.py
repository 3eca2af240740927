"""Reading the history back: a metric's values over time, one series per flavor and dataset.

A mean under one flavor and a mean under another are different numbers (the same run scores
differently when, say, the gain or the ideal changes), so a trend never joins them: every
series holds one canonical flavor string on one dataset, and :func:`split_reasons` says why a
metric's points were split and in which knobs its flavors differ.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from contextlib import closing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rankflavor.base.display import Shown
from rankflavor.base.frames import ALL, Frames, only_summary, typed_table
from rankflavor.errors import UsageError
from rankflavor.history.store import connect, sqlite_errors

if TYPE_CHECKING:
    import pyarrow as pa


@dataclass(frozen=True)
class Point:
    """One recorded mean of one measure."""

    record_id: int
    recorded_at: str
    dataset: str | None
    run: str | None
    command: str | None
    version: str
    flavor: str
    name: str
    display: str
    value: float
    n_queries: int
    hashes: dict[str, str | None] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"record": self.record_id, "recorded_at": self.recorded_at, "dataset": self.dataset, "run": self.run,
                "command": self.command, "rankflavor": self.version, "flavor": self.flavor, "name": self.name,
                "display": self.display, "value": None if math.isnan(self.value) else self.value,
                "n_queries": self.n_queries, "sha256": self.hashes}


@dataclass(frozen=True)
class Series(Frames, Shown):
    """The points of one canonical flavor string on one dataset, in record order."""

    flavor: str
    dataset: str | None
    points: tuple[Point, ...]

    @property
    def name(self) -> str:
        """``metric@k`` of the series' measure."""
        return self.points[0].name

    def to_arrow(self, per_query: bool = False) -> pa.Table:
        """One row per recorded mean as an Arrow table (:func:`series_table`); ``to_pandas``/``to_polars`` convert it."""
        return series_table(self, per_query)


def load_series(db_path: str | os.PathLike[str], metric: str | None = None, dataset: str | None = None) -> list[Series]:
    """The recorded means, one :class:`Series` per (dataset, canonical flavor string).

    Parameters
    ----------
    db_path : the history file.
    metric : which measure: ``metric@k`` (every flavor of it: ``ndcg@10``), a canonical flavor
        string (exactly that flavor), or the name the measure was asked for (a preset's dialect,
        ``ndcg_cut.10``). Default: every measure.
    dataset : only the records of this dataset.

    Raises
    ------
    HistoryError
        The file is missing or not a history.
    UsageError
        No recorded measure or dataset matches (the message lists the recorded ones).
    """
    with sqlite_errors(os.fspath(db_path), False), closing(connect(db_path, create=False)) as conn:
        where, args = [], []
        if metric is not None:
            clause, margs = _metric_clause(metric)
            where.append(clause)
            args.extend(margs)
        if dataset is not None:
            where.append("r.dataset = ?")
            args.append(dataset)
        sql = ("SELECT r.id, r.recorded_at, r.dataset, r.run, r.command, r.rankflavor_version, m.flavor, m.name, "
               "m.display, m.value, m.n_queries FROM measures m JOIN records r ON r.id = m.record_id"
               + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY r.id, m.position")
        rows = conn.execute(sql, args).fetchall()
        if not rows:
            _nothing_matched(conn, os.fspath(db_path), metric, dataset)
        ids = sorted({r[0] for r in rows})
        hashes: dict[int, dict[str, str | None]] = {i: {} for i in ids}
        # (ids are integers from the database itself; bound as parameters all the same)
        for start in range(0, len(ids), 500):
            part = ids[start:start + 500]
            for rid, role, digest in conn.execute(
                    f"SELECT record_id, role, sha256 FROM inputs WHERE record_id IN ({','.join('?' * len(part))})", part):
                hashes[rid][role] = digest
    groups: dict[tuple[str | None, str], list[Point]] = {}
    for rid, at, ds, run, cmd, ver, flavor, name, display, value, nq in rows:
        p = Point(rid, at, ds, run, cmd, ver, flavor, name, display, math.nan if value is None else float(value), nq,
                  hashes[rid])
        groups.setdefault((ds, flavor), []).append(p)
    return [Series(flavor, ds, tuple(points)) for (ds, flavor), points in groups.items()]


def _metric_clause(asked: str) -> tuple[str, list[str]]:
    """The WHERE clause of ``-m``: an exact flavor when it has knobs in brackets, else every
    flavor of its ``metric@k`` (or of the name it was asked for)."""
    from rankflavor.errors import FlavorError
    from rankflavor.metrics.measure import parse_measure

    try:
        parsed = parse_measure(asked)
    except FlavorError:  # a dialect's name (ndcg_cut.10): matched as the name it was asked for
        return "(m.display = ? OR m.name = ?)", [asked, asked]
    if "[" in asked:
        return "m.flavor = ?", [str(parsed)]
    return "(m.name = ? OR m.display = ?)", [parsed.name, asked]


def _nothing_matched(conn: Any, path: str, metric: str | None, dataset: str | None) -> None:
    names = [r[0] for r in conn.execute("SELECT DISTINCT name FROM measures ORDER BY name")]
    datasets = [r[0] for r in conn.execute("SELECT DISTINCT dataset FROM records WHERE dataset IS NOT NULL ORDER BY 1")]
    if not names:
        raise UsageError(f"the history {path} holds no record yet")
    if dataset is not None and dataset not in datasets:
        raise UsageError(f"no record of dataset {dataset!r} in {path}; recorded datasets: "
                         f"{', '.join(map(repr, datasets)) or 'none (records without a dataset)'}")
    raise UsageError(f"no record of measure {metric!r}" + (f" on dataset {dataset!r}" if dataset else "")
                     + f" in {path}; recorded measures: {', '.join(names)}")


def split_reasons(series: list[Series]) -> list[str]:
    """Why the points of one measure are drawn as several lines: one sentence per measure recorded
    under several flavors (naming the knobs that differ), on several datasets, or against
    judgments that changed (qrels hashes) within one series."""
    reasons: list[str] = []
    by_name: dict[str, list[Series]] = {}
    for s in series:
        by_name.setdefault(s.name, []).append(s)
    for name, group in by_name.items():
        flavors = list(dict.fromkeys(s.flavor for s in group))  # in the order they were first recorded
        if len(flavors) > 1:
            reasons.append(f"{name} was recorded under {len(flavors)} flavors; means under different flavors are "
                           "different numbers, so each flavor gets its own line instead of one line through all "
                           f"points ({knob_differences(flavors)}).")
        datasets = sorted({s.dataset or "" for s in group})
        if len(datasets) > 1:
            shown = ", ".join(repr(d) if d else "(none)" for d in datasets)
            reasons.append(f"{name} was recorded on {len(datasets)} datasets ({shown}); means on different "
                           "judgments are not one trend, so each dataset gets its own line (choose one with --dataset).")
    for s in series:
        prev: str | None = None
        for p in s.points:
            q = p.hashes.get("qrels")
            if q and prev and q != prev:
                reasons.append(f"note: the qrels of {s.name} on {s.dataset or '(no dataset)'} changed at record "
                               f"{p.record_id} (sha256 {prev[:12]} -> {q[:12]}): points before and after it were "
                               "scored against different judgments.")
            prev = q or prev
    return reasons


def knob_differences(flavors: list[str]) -> str:
    """The knobs in which canonical flavor strings differ, each with its values.

    >>> knob_differences(["ndcg@10[gain=exp2]", "ndcg@10"])
    'they differ in gain: exp2 | linear'
    """
    from rankflavor.errors import FlavorError
    from rankflavor.metrics.measure import parse_measure

    try:
        knobs = [parse_measure(f).knobs for f in flavors]
    except FlavorError:  # a flavor string of another rankflavor version
        return "their flavor strings differ"
    names = [n for n in dict.fromkeys(n for k in knobs for n in k) if len({k.get(n, "-") for k in knobs}) > 1]
    if not names:
        return "their flavor strings differ"
    return "they differ in " + "; ".join(f"{n}: {' | '.join(k.get(n, '-') for k in knobs)}" for n in names)


def load_record(db_path: str | os.PathLike[str], record_id: int) -> dict[str, Any]:
    """One record as written: its fields, inputs (with hashes), and every measure with its
    per-query values (``{query: value}``; text for text-valued metrics, NaN for a stored NULL)."""
    with sqlite_errors(os.fspath(db_path), False), closing(connect(db_path, create=False)) as conn:
        row = conn.execute("SELECT id, recorded_at, dataset, run, command, rankflavor_version FROM records "
                           "WHERE id = ?", (int(record_id),)).fetchone()
        if row is None:
            raise UsageError(f"no record {record_id} in {os.fspath(db_path)}")
        out: dict[str, Any] = dict(zip(("id", "recorded_at", "dataset", "run", "command", "rankflavor"), row, strict=True))
        out["inputs"] = {role: {"source": src, "sha256": sha, "how": how} for role, src, sha, how in conn.execute(
            "SELECT role, source, sha256, how FROM inputs WHERE record_id = ? ORDER BY role", (row[0],))}
        out["measures"] = []
        for mid, flavor, name, display, value, nq in conn.execute(
                "SELECT id, flavor, name, display, value, n_queries FROM measures WHERE record_id = ? ORDER BY position",
                (row[0],)).fetchall():
            per_query = {q: (t if t is not None else (math.nan if v is None else float(v))) for q, v, t in conn.execute(
                "SELECT query, value, text_value FROM per_query WHERE measure_id = ? ORDER BY query", (mid,))}
            out["measures"].append({"flavor": flavor, "name": name, "display": display,
                                    "value": math.nan if value is None else float(value), "n_queries": nq,
                                    "per_query": per_query})
    return out


def series_table(series: Series | Iterable[Series], per_query: bool = False) -> pa.Table:
    """One row per recorded mean of one series (or of several, one after another): ``dataset,
    run, metric, flavor, query ("all"), value, n_queries, record, recorded_at, command, rankflavor``,
    in record order."""
    only_summary("a history series", per_query,
                  "it keeps each record's mean; rankflavor.history.load_record(path, id) has a record's per-query values")
    group: list[Series] = [series] if hasattr(series, "points") else list(series)  # type: ignore[list-item,arg-type]
    names = ("dataset", "run", "metric", "flavor", "query", "value", "n_queries", "record", "recorded_at", "command",
             "rankflavor")
    rows = [(s.dataset, p.run, p.display, p.flavor, ALL, float(p.value), p.n_queries, p.record_id, p.recorded_at,
             p.command, p.version) for s in group for p in s.points]
    kinds = ("str", "str", "str", "str", "str", "f64", "i64", "i64", "str", "str", "str")
    return typed_table({n: (k, [r[i] for r in rows]) for i, (n, k) in enumerate(zip(names, kinds, strict=True))})


__all__ = ["Point", "Series", "knob_differences", "load_record", "load_series", "split_reasons"]
