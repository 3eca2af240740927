"""DataFrames of the result objects: one Arrow table per result, pandas and polars made from it.

Every result object (:class:`~rankflavor.engine.results.Results`, :class:`~rankflavor.analysis.spread.result.Spread`,
:class:`~rankflavor.analysis.compare.Comparison`, :class:`~rankflavor.analysis.judgments.Coverage`,
:class:`~rankflavor.analysis.judgments.Bounds`, history :class:`~rankflavor.history.series.Series`) has
``to_arrow(per_query=False)``, ``to_pandas(per_query=False)`` and ``to_polars(per_query=False)``
(:class:`Frames`); the tables are built here, once, and the result classes only call these
builders. ``per_query`` is the one convention, as ``-q`` is at the command line: False gives the
summary rows (query ``all``), True the per-query rows too (for :class:`Results`, as ``eval
--format csv -q`` writes them: each measure's queries, then its ``all`` row).

The tables are tidy and long: one row per run x measure x query, the canonical flavor string in
``flavor`` and the short name (``ndcg@10``, or the name the measure was asked by) in ``metric``.
Rows come in the result's own order (measures as asked, runs as given, queries in byte order),
never in the order of input lines.

A :class:`Results` table has exactly the columns of ``rankflavor eval --format csv``
(:data:`rankflavor.render.csvfmt.COLUMNS`) followed by ``text_value``: the value of a text-valued
metric (``relstring``), whose ``value`` is then null. Counts a CSV row leaves empty are null.

This module imports none of the result modules (they import it), pyarrow only when a table is
built, and pandas or polars only when asked for; a missing one is named with the extra that
installs it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from rankflavor.errors import UsageError

if TYPE_CHECKING:
    import pandas as pd
    import polars as pl
    import pyarrow as pa

    from rankflavor.analysis.compare.result import Comparison
    from rankflavor.analysis.judgments.bounds import Bounds, MeasureBounds
    from rankflavor.analysis.judgments.coverage import Coverage
    from rankflavor.analysis.spread.result import Spread
    from rankflavor.engine.results import Results
    from rankflavor.history.series import Series

#: The columns of a :class:`Results` table: ``eval --format csv``'s, then ``text_value``.
RESULTS_COLUMNS = ("metric", "query", "value", "flavor", "n_queries", "skipped_empty", "skipped_missing", "status",
                   "text_value")
#: The query id of a summary row (as in every format of ``eval``).
ALL = "all"


class Frames:
    """``to_pandas`` and ``to_polars`` of a result whose ``to_arrow(per_query)`` builds its table."""

    def to_arrow(self, per_query: bool = False) -> pa.Table:  # pragma: no cover - each class has its own
        raise NotImplementedError

    def to_pandas(self, per_query: bool = False) -> pd.DataFrame:
        """The table of :meth:`to_arrow` as a pandas DataFrame (nullable integers, so a missing
        count stays missing rather than turning the column into floats)."""
        return pandas_of(self.to_arrow(per_query))

    def to_polars(self, per_query: bool = False) -> pl.DataFrame:
        """The table of :meth:`to_arrow` as a polars DataFrame."""
        return polars_of(self.to_arrow(per_query))


def _need(module: str, extra: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise UsageError(f"{module} is not installed; install it with `pip install rankflavor[{extra}]` "
                         f"(or `pip install {module}`) to get {module} DataFrames (to_arrow() needs only pyarrow)"
                         ) from e


def pandas_of(table: pa.Table) -> pd.DataFrame:
    """``table`` as pandas; integer columns as pandas' nullable ``Int64``."""
    import pyarrow as pa

    pd = _need("pandas", "pandas")
    ints = {pa.int64(): pd.Int64Dtype(), pa.int32(): pd.Int32Dtype()}
    return table.to_pandas(types_mapper=ints.get)


def polars_of(table: pa.Table) -> pl.DataFrame:
    """``table`` as polars (Arrow's columns taken over as they are)."""
    pl = _need("polars", "polars")
    return pl.from_arrow(table)


def _table(columns: dict[str, tuple[str, list[Any]]]) -> pa.Table:
    """A table from ``{name: (Arrow type name, values)}``, the types fixed so an empty result has them too."""
    import pyarrow as pa

    kinds = {"str": pa.string(), "f64": pa.float64(), "i64": pa.int64(), "bool": pa.bool_()}
    return pa.table({name: pa.array(values, type=kinds[kind]) for name, (kind, values) in columns.items()})


def _float(x: Any) -> float | None:
    """A number for a float column; None (null) for a missing one. NaN stays NaN."""
    return None if x is None else float(x)


def _only_summary(what: str, per_query: bool, why: str) -> None:
    if per_query:
        raise UsageError(f"{what} holds no per-query values ({why}); call to_arrow/to_pandas/to_polars "
                         "with per_query=False")


# -- eval ---------------------------------------------------------------------------------------


def results_table(results: Results, per_query: bool = False) -> pa.Table:
    """The rows ``eval --format csv`` writes (with ``-q`` when ``per_query``), as typed columns."""
    cols: dict[str, list[Any]] = {c: [] for c in RESULTS_COLUMNS}

    def row(*values: Any) -> None:
        for c, v in zip(RESULTS_COLUMNS, values, strict=True):
            cols[c].append(v)

    sourced = any(m.labels is not None for m in results.measures)
    label_cells: list[str | None] = []
    for m in results.measures:
        flavor, name = str(m.measure), m.measure.display
        if sourced:  # (a last column, as eval --format csv writes it: render/csvfmt.labels_cell)
            label_cells += [None] * (len(m.queries) if per_query else 0) + [
                ";".join(f"{k}={n}" for k, n in m.labels or ())]
        if per_query:
            for q, v, s in zip(m.queries, m.values, m.status, strict=True):
                text = v if isinstance(v, str) else None
                row(name, str(q), None if text is not None else float(v), flavor, None, None, None, str(s), text)
        summary = None if m.measure.spec.summary == "none" else float(m.summary)
        row(name, ALL, summary, flavor, m.n_queries, m.skipped_empty, m.skipped_missing, "summary", None)
    kinds = ("str", "str", "f64", "str", "i64", "i64", "i64", "str", "str")
    typed = {c: (k, cols[c]) for c, k in zip(RESULTS_COLUMNS, kinds, strict=True)}
    if sourced:
        typed["labels"] = ("str", label_cells)
    return _table(typed)


# -- spread -------------------------------------------------------------------------------------


def spread_table(s: Spread, per_query: bool = False) -> pa.Table:
    """One row per run x flavor: the mean, its queries, and whether the summaries count it.

    Columns ``run, metric, flavor, query ("all"), value, n_queries, origins, in_summary,
    excluded_because, error``; runs in the order given, flavors in the spread's order (the base first).
    """
    _only_summary("a spread", per_query, "it keeps each flavor's mean; evaluate() one flavor for its per-query values")
    use = s.in_summary
    rows = [(run, f.measure.display, f.flavor, ALL, float(s.means[r, j]), int(s.n_queries[r, j]),
             ", ".join(f.origins), bool(use[j]), None if use[j] else str(f.defect), s.errors.get((run, f.flavor)))
            for r, run in enumerate(s.runs) for j, f in enumerate(s.flavors)]
    names = ("run", "metric", "flavor", "query", "value", "n_queries", "origins", "in_summary", "excluded_because",
             "error")
    kinds = ("str", "str", "str", "str", "f64", "i64", "str", "bool", "str", "str")
    return _table({n: (k, [r[i] for r in rows]) for i, (n, k) in enumerate(zip(names, kinds, strict=True))})


# -- compare ------------------------------------------------------------------------------------


def comparison_table(c: Comparison, per_query: bool = False) -> pa.Table:
    """One row per measure x system: its mean and bootstrap interval over the compared queries;
    with ``per_query``, first one row per measure x system x query with the value the statistics
    read (queries in byte order), ``ci_low``/``ci_high`` null there.

    Columns ``run, metric, flavor, query, value, ci_low, ci_high, n_queries``. The pairs'
    statistics are in :meth:`Comparison.to_dict` (and ``compare --format csv``).
    """
    names = ("run", "metric", "flavor", "query", "value", "ci_low", "ci_high", "n_queries")
    rows: list[tuple[Any, ...]] = []
    for m in c.measures:
        order = sorted(range(len(m.queries)), key=lambda i: str(m.queries[i]).encode("utf-8"))
        for s, vals in zip(m.systems, m.values, strict=True):
            if per_query:
                rows += [(s.name, m.name, m.measure, str(m.queries[i]), float(vals[i]), None, None, None)
                         for i in order]
            rows.append((s.name, m.name, m.measure, ALL, _float(s.mean), _float(s.ci[0]), _float(s.ci[1]), m.n))
    kinds = ("str", "str", "str", "str", "f64", "f64", "f64", "i64")
    return _table({n: (k, [r[i] for r in rows]) for i, (n, k) in enumerate(zip(names, kinds, strict=True))})


# -- judgments and bounds -----------------------------------------------------------------------

BOUNDS_COLUMNS = ("run", "metric", "flavor", "query", "lower", "value", "upper", "condensed", "residual", "status")


def _bounds_rows(run: str, measures: Iterable[MeasureBounds], per_query: bool) -> list[tuple[Any, ...]]:
    rows: list[tuple[Any, ...]] = []
    for b in measures:
        name, flavor = b.measure.display, str(b.measure)
        if per_query:
            order = sorted(range(len(b.queries)), key=lambda i: str(b.queries[i]).encode("utf-8"))
            res = b.residual
            rows += [(run, name, flavor, str(b.queries[i]), float(b.lower[i]), float(b.value[i]), float(b.upper[i]),
                      float(b.condensed[i]), None if res is None else float(res[i]), str(b.status[i])) for i in order]
        rows.append((run, name, flavor, ALL, float(b.lower_mean), float(b.value_mean), float(b.upper_mean),
                     float(b.condensed_mean), _float(b.residual_mean), "summary"))
    return rows


def _bounds_table(rows: Sequence[tuple[Any, ...]], extra: dict[str, tuple[str, list[Any]]] | None = None) -> pa.Table:
    kinds = ("str", "str", "str", "str", "f64", "f64", "f64", "f64", "f64", "str")
    cols = {n: (k, [r[i] for r in rows]) for i, (n, k) in enumerate(zip(BOUNDS_COLUMNS, kinds, strict=True))}
    return _table({**cols, **(extra or {})})


def bounds_table(b: Bounds, per_query: bool = False) -> pa.Table:
    """One row per measure (query ``all``: the means), and with ``per_query`` first one per
    measure x query: ``lower, value, upper, condensed`` (``value`` is the zero-imputed one),
    RBP's ``residual`` (null for other metrics) and the query's ``status``."""
    return _bounds_table(_bounds_rows(b.run, b.measures, per_query))


def coverage_table(cov: Coverage, per_query: bool = False) -> pa.Table:
    """Every run's bounds (as :func:`bounds_table`) beside its coverage of the top k.

    Summary rows carry the run's mean ``judged_at_k``, its ``unjudged`` documents in the top k
    and ``pool_bias`` (named by the pool-bias rule); per-query rows that query's judged@k and
    unjudged count (null where the run does not retrieve the query).

    When the judgments mix label sources and a base kind applies (``cov.filled``, as in the JSON's
    ``filled``), summary rows also carry the same bounds on the base kind's labels alone:
    ``base_kind, base_lower, base_upper, base_unjudged, base_queries`` (null on per-query rows);
    the row's own ``lower``/``upper``/``unjudged`` are those with every label chosen."""
    rows: list[tuple[Any, ...]] = []
    judged: list[float | None] = []
    unjudged: list[int | None] = []
    k: list[int | None] = []
    bias: list[bool] = []
    base: dict[str, tuple[str, list[Any]]] = {}
    if cov.filled is not None:
        base = {n: (kind, []) for n, kind in (("base_kind", "str"), ("base_lower", "f64"), ("base_upper", "f64"),
                                               ("base_unjudged", "i64"), ("base_queries", "i64"))}
        fill = {(f.run, m.measure): (f, m) for f in cov.filled.runs for m in f.measures}
    for r in cov.runs:
        per = {str(q): (float(j), int(u)) for q, j, u in zip(r.queries, r.judged_at_k, r.unjudged, strict=True)}
        for row in _bounds_rows(r.name, r.bounds, per_query):
            rows.append(row)
            got = (r.mean_judged, int(r.unjudged.sum())) if row[3] == ALL else per.get(row[3], (None, None))
            judged.append(got[0])
            unjudged.append(got[1])
            k.append(r.k)
            bias.append(r.name in cov.pool_bias)
            if base:
                f, m = fill[(r.name, row[2])] if row[3] == ALL else (None, None)
                values = (None, None, None, None, None) if f is None or m is None else (
                    cov.filled.base, _float(m.before[0]), _float(m.before[1]), f.holes_before, f.queries_before)  # type: ignore[union-attr]
                for column, value in zip(base.values(), values, strict=True):
                    column[1].append(value)
    return _bounds_table(rows, {"k": ("i64", k), "judged_at_k": ("f64", judged), "unjudged": ("i64", unjudged),
                                "pool_bias": ("bool", bias), **base})


# -- history ------------------------------------------------------------------------------------


def series_table(series: Series | Iterable[Series], per_query: bool = False) -> pa.Table:
    """One row per recorded mean of one series (or of several, one after another): ``dataset,
    run, metric, flavor, query ("all"), value, n_queries, record, recorded_at, command, rankflavor``,
    in record order."""
    _only_summary("a history series", per_query,
                  "it keeps each record's mean; rankflavor.history.load_record(path, id) has a record's per-query values")
    group: list[Series] = [series] if hasattr(series, "points") else list(series)  # type: ignore[list-item,arg-type]
    names = ("dataset", "run", "metric", "flavor", "query", "value", "n_queries", "record", "recorded_at", "command",
             "rankflavor")
    rows = [(s.dataset, p.run, p.display, p.flavor, ALL, float(p.value), p.n_queries, p.record_id, p.recorded_at,
             p.command, p.version) for s in group for p in s.points]
    kinds = ("str", "str", "str", "str", "str", "f64", "i64", "i64", "str", "str", "str")
    return _table({n: (k, [r[i] for r in rows]) for i, (n, k) in enumerate(zip(names, kinds, strict=True))})


__all__ = ["ALL", "BOUNDS_COLUMNS", "RESULTS_COLUMNS", "Frames", "bounds_table", "comparison_table", "coverage_table",
           "pandas_of", "polars_of", "results_table", "series_table", "spread_table"]
