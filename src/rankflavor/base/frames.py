"""DataFrames of the result objects: one Arrow table per result, pandas and polars made from it.

Every result object (:class:`~rankflavor.engine.results.Results`, :class:`~rankflavor.analysis.spread.result.Spread`,
:class:`~rankflavor.analysis.compare.Comparison`, :class:`~rankflavor.analysis.judgments.Coverage`,
:class:`~rankflavor.analysis.judgments.Bounds`, history :class:`~rankflavor.history.series.Series`) has
``to_arrow(per_query=False)``, ``to_pandas(per_query=False)`` and ``to_polars(per_query=False)``
(:class:`Frames`). Each result module builds its own table (``results_table``, ``spread_table``,
``comparison_table``, :mod:`rankflavor.analysis.judgments.result`, ``series_table``) with
:func:`typed_table`; this module knows none of them. ``per_query`` is the one convention, as
``-q`` is at the command line: False gives the summary rows (query ``all``), True the per-query
rows too (for :class:`Results`, as ``eval --format csv -q`` writes them: each measure's queries,
then its ``all`` row).

The tables are tidy and long: one row per run x measure x query, the canonical flavor string in
``flavor`` and the short name (``ndcg@10``, or the name the measure was asked by) in ``metric``.
Rows come in the result's own order (measures as asked, runs as given, queries in byte order),
never in the order of input lines.

A :class:`Results` table has exactly the columns of ``rankflavor eval --format csv``
(:data:`rankflavor.render.csvfmt.COLUMNS`) followed by ``text_value``: the value of a text-valued
metric (``relstring``), whose ``value`` is then null. Counts a CSV row leaves empty are null.

This module imports no result module (they import it), pyarrow only when a table is
built, and pandas or polars only when asked for; a missing one is named with the extra that
installs it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rankflavor.errors import UsageError

if TYPE_CHECKING:
    import pandas as pd
    import polars as pl
    import pyarrow as pa

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


def typed_table(columns: dict[str, tuple[str, list[Any]]]) -> pa.Table:
    """A table from ``{name: (Arrow type name, values)}``, the types fixed so an empty result has them too."""
    import pyarrow as pa

    kinds = {"str": pa.string(), "f64": pa.float64(), "i64": pa.int64(), "bool": pa.bool_()}
    return pa.table({name: pa.array(values, type=kinds[kind]) for name, (kind, values) in columns.items()})


def number_or_null(x: Any) -> float | None:
    """A number for a float column; None (null) for a missing one. NaN stays NaN."""
    return None if x is None else float(x)


def only_summary(what: str, per_query: bool, why: str) -> None:
    if per_query:
        raise UsageError(f"{what} holds no per-query values ({why}); call to_arrow/to_pandas/to_polars "
                         "with per_query=False")


__all__ = ["ALL", "Frames", "number_or_null", "only_summary", "pandas_of", "polars_of", "typed_table"]
