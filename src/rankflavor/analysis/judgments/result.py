"""What :func:`rankflavor.analysis.judgments.bounds` returns: one :class:`MeasureBounds` per measure
of one run (:class:`Bounds`), its words and its Arrow table.

What judging one document would do to the exact interval (:meth:`Bounds.document_table`): per unjudged document in scope and
per grade g of the scale, the query's interval with the document judged g (the exact extremes
over the other unjudged documents, :mod:`.extremes`), and from those the shrink the judgment
guarantees whatever g is.

With width W = upper - lower now and W_g after judging the document g (its interval lies inside
the present one: fixing a document only removes gradings), the guaranteed shrink is
min_g (W - W_g) >= 0. ``if_zero`` = upper - upper_g at the least grade of the scale and
``if_top`` = lower_G - lower are the two one-sided moves the old rule named.

Examples
--------
>>> from rankflavor.analysis.judgments import bounds
>>> b = bounds({"q": {"a": 3}}, {"q": {"a": 0.9, "u": 0.8}}, "P@2", scale="trec_dl")
>>> [(q, d, r, round(z, 2), round(t, 2), round(g, 2)) for q, d, _, r, z, t, g in b.document_table()]
[('q', 'u', 2, 0.5, 0.5, 0.5)]
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from rankflavor.analysis.judgments.extremes import Extremes, extremes
from rankflavor.analysis.judgments.scope import QueryScope, Rules, ScopeSet
from rankflavor.base.display import Shown
from rankflavor.base.frames import ALL, Frames, number_or_null, typed_table
from rankflavor.flavor.flavor import format_number
from rankflavor.io.tables import Qrels
from rankflavor.metrics.bounded import bound_of
from rankflavor.metrics.measure import Measure
from rankflavor.presets.scales import Scale

if TYPE_CHECKING:
    import pyarrow as pa


@dataclass(frozen=True)
class Detail:
    """What the bounds of one measure were derived from (kept for :meth:`Bounds.document_table`):
    the scopes of the queries with unjudged documents, each with its row in the per-query arrays
    and its extremes (None where the gradings were chosen without computing them: a monotone
    metric's)."""

    scopes: ScopeSet
    found: list[tuple[int, QueryScope, Extremes | None]]


@dataclass(frozen=True)
class MeasureBounds:
    """One measure's bounds, per query (rows of the zero-imputed result, in query order).

    Attributes
    ----------
    measure : the measure as given (under the scale), with the ``sources`` knob when its labels are
        of several kinds; ``lower_measure`` the zero-imputed one.
    queries, status : as :class:`~rankflavor.engine.results.MeasureResult` of the zero-imputed measure.
    lower, value, upper, condensed : per-query values; ``*_mean`` their summaries by the
        metric's rule over those rows.
    grade : the top grade G of the scale; ``grades`` every grade S the interval ranges over.
    residual : RBP's Moffat & Zobel residual per query (None for other metrics), ``residual_mean``
        its mean: ``lower + residual`` also covers the ranks past the run's end.
    """

    measure: Measure
    lower_measure: Measure
    queries: np.ndarray
    status: np.ndarray
    lower: np.ndarray
    value: np.ndarray
    upper: np.ndarray
    condensed: np.ndarray
    lower_mean: float
    value_mean: float
    upper_mean: float
    condensed_mean: float
    grade: float | None
    detail: Detail | None = field(default=None, repr=False)
    grades: tuple[float, ...] = ()
    residual: np.ndarray | None = None
    residual_mean: float | None = None

    @property
    def gap(self) -> np.ndarray:
        """``upper - lower`` per query: the width of each query's interval."""
        return self.upper - self.lower

    def overlaps(self, other: MeasureBounds) -> bool:
        """The mean intervals [lower, upper] of two runs overlap: the judgments do not decide."""
        return bool(self.lower_mean <= other.upper_mean and other.lower_mean <= self.upper_mean)

    def to_dict(self) -> dict[str, Any]:
        def f(x: float | None) -> float | None:
            return None if x is None or not np.isfinite(x) else float(x)

        out: dict[str, Any] = {
            "measure": str(self.measure),
            "lower": f(self.lower_mean), "value": f(self.value_mean), "upper": f(self.upper_mean),
            "condensed": f(self.condensed_mean),
            "grades": list(self.grades),
            "covers": covers(self),
        }
        if self.residual is not None:
            out["residual"] = f(self.residual_mean)
        rows = zip(self.queries, self.lower, self.value, self.upper, self.condensed, strict=True)
        out["per_query"] = {str(q): {"lower": f(lo), "value": f(v), "upper": f(up), "condensed": f(c)}
                            for q, lo, v, up, c in rows}
        if self.residual is not None:
            for q, r in zip(self.queries, self.residual, strict=True):
                out["per_query"][str(q)]["residual"] = f(r)
        return out


def scope_text(measure: Measure) -> str:
    """Which rows of each query the interval grades, in words (:mod:`.scope`)."""
    f = measure.flavor
    depth = f.depth_limit
    bound = bound_of(measure.spec)
    ideal = str(f.ideal_kind) if bound is not None and bound.ideal else ""
    k = measure.k
    if ideal == "recall" and k is not None:
        k = max(k, f.recall_depth or 0)
    whole = k is None or ideal == "local"
    if k is None or ideal == "local":
        text = "the whole ranking" if depth is None else f"the top {depth} (depth={depth})"
    else:
        text = f"the top {k if depth is None else min(k, depth)}"
    grouped = str(f.ties) in ("pessimistic", "optimistic") or (
        str(f.ties) == "averaged" and bound is not None and bound.averages)
    if grouped and not (whole and depth is None):
        text += " and the rest of the tie group at its end"
    return text


def covers(b: MeasureBounds) -> str:
    """What the interval covers and what it does not, in one sentence."""
    grades = ",".join(format_number(g) for g in b.grades)
    return (f"every grading of the unjudged documents in {scope_text(b.lower_measure)} with the grades {{{grades}}}; "
            "not covered: unjudged documents ranked below that or never retrieved, and grades off the scale")


@dataclass(frozen=True)
class Bounds(Frames, Shown):
    """What :func:`bounds` returns: one :class:`MeasureBounds` per measure, for one run."""

    run: str
    measures: list[MeasureBounds]
    qrels: Qrels = field(repr=False)
    scale: Scale | None = None

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.measures)

    def __len__(self) -> int:
        return len(self.measures)

    def __getitem__(self, key: int | str) -> MeasureBounds:
        if isinstance(key, int):
            return self.measures[key]
        for b in self.measures:
            if key in (b.measure.name, str(b.measure), b.measure.display):
                return b
        raise KeyError(key)

    def to_arrow(self, per_query: bool = False) -> pa.Table:
        """Each measure's interval (``per_query``: each query's too) as an Arrow table (:func:`bounds_table`);
        ``to_pandas``/``to_polars`` convert it."""
        return bounds_table(self, per_query)

    def to_dict(self) -> dict[str, Any]:
        return {"run": self.run, "scale": None if self.scale is None else self.scale.name,
                "measures": [b.to_dict() for b in self.measures]}

    def document_gaps(self, measure: int | str = 0) -> list[tuple[str, str, str, float]]:
        """Per unjudged document in scope: ``(query, doc, run, gap)``, how much judging it is sure
        to shrink this run's interval of ``measure`` (index or name; default the first) on that
        query, whatever grade of the scale it gets (:meth:`document_table` says how). Sorted by
        gap, largest first; the mean interval shrinks by gap / (queries in the mean)."""
        name = self[measure].measure.name if isinstance(measure, str) else self.measures[measure].measure.name
        return [(q, d, self.run, g) for q, d, m, _, _, _, g in self.document_table() if m == name]

    def document_table(self) -> list[tuple[str, str, str, int, float, float, float]]:
        """Rows ``(query, doc, measure, rank, if_zero, if_top, gap)`` for every unjudged document in
        scope of every measure, sorted by gap (largest first), then query and rank.

        With the document judged g, the query's interval is the exact one over the other
        unjudged documents (:func:`document_rows`): ``if_zero`` is how
        much the upper bound falls when g is the scale's least grade, ``if_top`` how much the
        lower bound rises when g is G, and ``gap`` the least, over every grade g of the scale, of
        (width now - width after): the shrink the judgment guarantees.
        """
        out: list[tuple[str, str, str, int, float, float, float]] = []
        for b in self.measures:
            out.extend(document_rows(b))
        out.sort(key=lambda r: (-r[6], r[0], r[3], r[2]))
        return out


def interval_text(b: MeasureBounds) -> str:
    """``0.5235 [0.5235, 0.5838]``: the value with its interval."""
    return f"{b.value_mean:.4f} [{b.lower_mean:.4f}, {b.upper_mean:.4f}]"


# -- what judging one document would do (Bounds.document_table) ---------------------------------


def per_grade(rules: Rules, scope: QueryScope, hole: int) -> list[Extremes]:
    """The query's extremes with hole number ``hole`` judged each grade of S (in order)."""
    return [extremes(rules, scope.fixed(hole, float(g))) for g in rules.grades]


def shrink(now: Extremes, after: list[Extremes]) -> np.ndarray:
    """W - W_g per grade (an undefined width, every value NaN, counts as 0)."""
    w = np.nan_to_num(now.width)
    return np.array([w - np.nan_to_num(a.width) for a in after])


def document_rows(b: MeasureBounds) -> list[tuple[str, str, str, int, float, float, float]]:
    """``(query, doc, measure, rank, if_zero, if_top, gap)`` per unjudged document in scope of
    ``b`` (module docstring)."""
    if b.detail is None:
        return []
    rules = b.detail.scopes.rules
    out = []
    for _, scope, found in b.detail.found:
        now = found if found is not None else extremes(rules, scope)
        ranks = scope.hole_rows + 1
        for h in range(scope.n_holes):
            after = per_grade(rules, scope, h)
            cut = shrink(now, after)
            out.append((scope.qid, scope.hole_docs[h], b.measure.name, int(ranks[h]),
                        float(np.nan_to_num(now.upper - after[0].upper)),
                        float(np.nan_to_num(after[-1].lower - now.lower)), float(cut.min())))
    return out


# -- the Arrow table ----------------------------------------------------------------------------

BOUNDS_COLUMNS = ("run", "metric", "flavor", "query", "lower", "value", "upper", "condensed", "residual", "status")


def bounds_rows(run: str, measures: Iterable[MeasureBounds], per_query: bool) -> list[tuple[Any, ...]]:
    rows: list[tuple[Any, ...]] = []
    for b in measures:
        name, flavor = b.measure.display, str(b.measure)
        if per_query:
            order = sorted(range(len(b.queries)), key=lambda i: str(b.queries[i]).encode("utf-8"))
            res = b.residual
            rows += [(run, name, flavor, str(b.queries[i]), float(b.lower[i]), float(b.value[i]), float(b.upper[i]),
                      float(b.condensed[i]), None if res is None else float(res[i]), str(b.status[i])) for i in order]
        rows.append((run, name, flavor, ALL, float(b.lower_mean), float(b.value_mean), float(b.upper_mean),
                     float(b.condensed_mean), number_or_null(b.residual_mean), "summary"))
    return rows


def table_of_bounds(rows: Sequence[tuple[Any, ...]], extra: dict[str, tuple[str, list[Any]]] | None = None) -> pa.Table:
    kinds = ("str", "str", "str", "str", "f64", "f64", "f64", "f64", "f64", "str")
    cols = {n: (k, [r[i] for r in rows]) for i, (n, k) in enumerate(zip(BOUNDS_COLUMNS, kinds, strict=True))}
    return typed_table({**cols, **(extra or {})})


def bounds_table(b: Bounds, per_query: bool = False) -> pa.Table:
    """One row per measure (query ``all``: the means), and with ``per_query`` first one per
    measure x query: ``lower, value, upper, condensed`` (``value`` is the zero-imputed one),
    RBP's ``residual`` (null for other metrics) and the query's ``status``."""
    return table_of_bounds(bounds_rows(b.run, b.measures, per_query))


__all__ = [
    "BOUNDS_COLUMNS",
    "Bounds",
    "Detail",
    "MeasureBounds",
    "bounds_rows",
    "bounds_table",
    "covers",
    "document_rows",
    "interval_text",
    "per_grade",
    "scope_text",
    "shrink",
    "table_of_bounds",
]
