"""Results: the per-query table with provenance that every renderer and later feature reads."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from rankflavor.align import Counts
from rankflavor.base.display import Shown
from rankflavor.base.frames import ALL, Frames, typed_table
from rankflavor.metrics.measure import Measure

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

#: Row status in the per-query table.
OK, EMPTY, MISSING = "ok", "empty", "missing"


@dataclass(frozen=True)
class MeasureResult:
    """One measure over every query it covers.

    Attributes
    ----------
    measure : the measure (``str(measure)`` is its canonical flavor string).
    queries : query ids of the rows, in byte order.
    values : per-query values (NaN where ``empty=nan``); text for text-valued metrics (relstring).
    status : ``ok``, ``empty`` (nothing relevant; value from the ``empty`` knob) or ``missing``
        (in the qrels, absent from the run; value from the ``missing`` knob).
    summary : the mean over rows (NaN rows left out), the sum for count metrics, the geometric
        mean for gm_* metrics, NaN for per-query-only metrics (``spec.summary == "none"``).
    n_queries : rows that entered the summary.
    labels : the labels (judgments, duplicates resolved) of the queries of its table, per kind of label
        source (``(("human", 2043), ("llm", 380))``, :mod:`rankflavor.io.labels`); None when the
        judgments name no source.
    """

    measure: Measure
    queries: np.ndarray
    values: np.ndarray
    status: np.ndarray
    summary: float
    n_queries: int
    skipped_empty: int = 0
    skipped_missing: int = 0
    labels: tuple[tuple[str, int], ...] | None = None

    @property
    def flavor(self) -> str:
        return str(self.measure)

    @property
    def mean(self) -> float:
        return self.summary

    def per_query(self) -> dict[str, float | str]:
        return {str(q): plain_value(v) for q, v in zip(self.queries, self.values, strict=True)}


@dataclass(frozen=True)
class Results(Frames, Shown):
    """What :func:`rankflavor.evaluate` returns.

    Index it by position, by canonical flavor string, or by the name the measure was asked for.
    """

    measures: list[MeasureResult]
    counts: Counts
    provenance: dict[str, Any] = field(default_factory=dict)
    extras: tuple[str, ...] = ()

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.measures)

    def __len__(self) -> int:
        return len(self.measures)

    def __getitem__(self, key: int | str) -> MeasureResult:
        if isinstance(key, int):
            return self.measures[key]
        for m in self.measures:
            if key in (str(m.measure), m.measure.label, m.measure.name):
                return m
        raise KeyError(f"no measure {key!r}; have: {', '.join(str(m.measure.display) for m in self.measures)}")

    def means(self) -> dict[str, float]:
        """``{canonical flavor string: summary}``."""
        return {str(m.measure): m.summary for m in self.measures}

    def per_query(self) -> dict[str, dict[str, float | str]]:
        """pytrec_eval-style ``{query: {canonical flavor string: value}}``."""
        out: dict[str, dict[str, float | str]] = {}
        for m in self.measures:
            key = str(m.measure)
            for q, v in zip(m.queries, m.values, strict=True):
                out.setdefault(str(q), {})[key] = plain_value(v)
        return out

    def to_dict(self) -> dict[str, Any]:
        """Everything, JSON-ready: measures with per-query values, counts and provenance."""
        return {
            "measures": [
                {
                    "flavor": str(m.measure),
                    "name": m.measure.display,
                    "metric": m.measure.metric,
                    "k": m.measure.k,
                    "preset": m.measure.preset,
                    "knobs": m.measure.knobs,
                    "summary": m.measure.spec.summary,
                    "value": _json_float(m.summary),
                    "n_queries": m.n_queries,
                    "skipped_empty": m.skipped_empty,
                    "skipped_missing": m.skipped_missing,
                    **({} if m.labels is None else {"labels": dict(m.labels)}),
                    "per_query": [
                        {"query": str(q), "value": _json_value(v), "status": str(s)}
                        for q, v, s in zip(m.queries, m.values, m.status, strict=True)
                    ],
                }
                for m in self.measures
            ],
            "counts": self.counts.to_dict(),
            "provenance": self.provenance,
        }

    def to_arrow(self, per_query: bool = False) -> pa.Table:
        """The rows of ``eval --format csv`` (``-q``: ``per_query``) as an Arrow table (:func:`results_table`); ``to_pandas``/``to_polars`` convert it."""
        return results_table(self, per_query)

    def to_frame(self) -> pd.DataFrame:
        """Long per-query table: ``measure, name, query, value, status`` plus a row per summary
        (query ``all``)."""
        import pandas as pd

        rows: list[dict[str, Any]] = []
        for m in self.measures:
            flavor = str(m.measure)
            for q, v, s in zip(m.queries, m.values, m.status, strict=True):
                rows.append({"measure": flavor, "name": m.measure.display, "query": str(q), "value": plain_value(v), "status": s})
            rows.append({"measure": flavor, "name": m.measure.display, "query": "all", "value": m.summary, "status": "summary"})
        return pd.DataFrame(rows, columns=["measure", "name", "query", "value", "status"])


def _json_float(x: float) -> float | None:
    return None if math.isnan(x) else x


def plain_value(v: Any) -> float | str:
    """A per-query value as a Python float, or as text for text-valued metrics (relstring)."""
    return v if isinstance(v, str) else float(v)


def _json_value(v: Any) -> float | str | None:
    return v if isinstance(v, str) else _json_float(float(v))


#: The columns of a :class:`Results` table: ``eval --format csv``'s, then ``text_value``.
RESULTS_COLUMNS = ("metric", "query", "value", "flavor", "n_queries", "skipped_empty", "skipped_missing", "status",
                   "text_value")

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
    return typed_table(typed)
