"""The values :func:`rankflavor.analysis.spread.api.spread` returns: the flavors evaluated, the means per run
and flavor, and the summaries derived from them (spread per run, swing per knob, sign flips
between runs, run orders).

Examples
--------
>>> import numpy as np
>>> from rankflavor.metrics.measure import parse_measure
>>> m = parse_measure("ndcg@3")
>>> s = Spread(m, ("A", "B"), {}, (SpreadFlavor(m, ("base",)),), np.array([[0.5], [0.25]]), np.array([[1], [1]]))
>>> s.summaries[0].spread, [(p.run_a, p.a_better) for p in s.pairs]
(0.0, [('A', 1)])

Which flavors enter the summaries (min/max per run, pairs, run orders) is decided here, once, for
every renderer: all but the flavors only presets reproducing a tool's known defect produced
(:attr:`SpreadFlavor.defect`), unless :attr:`Spread.include_defects`. The excluded flavors are
still evaluated and listed, each with its reason (:attr:`Spread.excluded`, :attr:`Spread.summary_note`).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from rankflavor.base.display import Shown
from rankflavor.base.frames import ALL, Frames, only_summary, typed_table
from rankflavor.metrics.measure import Measure

if TYPE_CHECKING:
    import plotly.graph_objects as go
    import pyarrow as pa

#: Two means closer than this count as equal when comparing runs (float noise is not a flip).
TIE_TOLERANCE = 1e-12


def in_summary(defect: str | None, include_defects: bool) -> bool:
    """The one rule of spread's summaries and compare's flips: a flavor counts unless only presets
    reproducing a tool's known defect produced it (``defect`` set) and ``include_defects`` is False."""
    return include_defects or defect is None


def defect_note(flavors: list[tuple[tuple[str, ...], str | None]], include_defects: bool, summaries: str) -> str | None:
    """The note every renderer prints about the defect flavors: which presets, why, and whether
    ``summaries`` (what the result derives from its flavors) count them; None when there are none.
    ``flavors`` holds each flavor's ``(presets, defect)``."""
    marked = [(presets, d) for presets, d in flavors if d is not None]
    if not marked:
        return None
    names = sorted({n for presets, _ in marked for n in presets})
    why = "; ".join(dict.fromkeys(str(d) for _, d in marked))
    if include_defects:
        return (f"{summaries} include {len(marked)} flavor(s) of preset(s) that reproduce a known defect "
                f"({', '.join(names)}): {why}")
    return (f"{len(marked)} flavor(s) only from preset(s) that reproduce a known defect ({', '.join(names)}) are "
            f"listed but left out of {summaries} (include_defects / --include-defects counts them): {why}")


@dataclass(frozen=True)
class SpreadFlavor:
    """One evaluated flavor: the measure, where it came from, and its grid cell.

    Attributes
    ----------
    measure : the measure; ``str(measure)`` is the canonical flavor string.
    origins : ``"base"`` (the measure asked for), ``"grid"``, ``"preset:NAME"`` (one or more).
    cell : the grid knob values of this flavor, or None when it is not a grid cell.
    defect : why the flavor is left out of the summaries unless ``include_defects``: set when
        only presets that reproduce a tool's known defect produced it (their ``Preset.defect``
        texts); None for the base, grid cells and every flavor a sound preset shares.
    """

    measure: Measure
    origins: tuple[str, ...]
    cell: dict[str, str] | None = None
    defect: str | None = None

    @property
    def flavor(self) -> str:
        return str(self.measure)

    @property
    def presets(self) -> tuple[str, ...]:
        return tuple(o.split(":", 1)[1] for o in self.origins if o.startswith("preset:"))


@dataclass(frozen=True)
class RunSpread:
    """How far one run's mean moves across flavors."""

    run: str
    base: float
    low: float
    low_flavor: str
    high: float
    high_flavor: str
    n_flavors: int

    @property
    def spread(self) -> float:
        """Highest minus lowest mean over the flavors that evaluated."""
        return self.high - self.low


@dataclass(frozen=True)
class KnobEffect:
    """How much one grid knob moves a run's mean with the other grid knobs held fixed.

    Attributes
    ----------
    knob : the knob.
    values : its grid values.
    mean_swing : per run, the max-min range across ``values``, averaged over every combination
        of the other grid knobs.
    max_swing : per run, the largest such range.
    by_value : per value, per run, the mean over the grid cells with that value.
    """

    knob: str
    values: tuple[str, ...]
    mean_swing: dict[str, float]
    max_swing: dict[str, float]
    by_value: dict[str, dict[str, float]]

    @property
    def overall(self) -> float:
        """Mean swing averaged over runs (NaN runs left out)."""
        vals = [v for v in self.mean_swing.values() if not math.isnan(v)]
        return float(np.mean(vals)) if vals else float("nan")


@dataclass(frozen=True)
class PairComparison:
    """Run A minus run B across flavors: does the sign of the difference depend on the flavor?

    Attributes
    ----------
    a_better, b_better, equal : number of flavors where A > B, A < B, or |A - B| <= TIE_TOLERANCE.
    flips : A wins under some flavor and B under another.
    """

    run_a: str
    run_b: str
    base_diff: float
    min_diff: float
    min_flavor: str
    max_diff: float
    max_flavor: str
    a_better: int
    b_better: int
    equal: int

    @property
    def flips(self) -> bool:
        return self.a_better > 0 and self.b_better > 0


@dataclass(frozen=True)
class RunOrder:
    """One order of the runs (best first) and the flavors that produce it."""

    order: tuple[str, ...]
    flavors: tuple[str, ...]


@dataclass(frozen=True)
class Spread(Frames, Shown):
    """What :func:`spread` returns: means per run and flavor, with the summaries derived from them.

    Attributes
    ----------
    base : the measure asked for; the grid varies its knobs.
    runs : run names (file names, or the mapping keys given).
    grid : the knobs varied and their canonical values (only knobs the metric reads).
    flavors : every distinct flavor evaluated: base, grid cells, presets (deduplicated).
    means : array (runs x flavors) of means (NaN where the flavor failed or had no query).
    n_queries : array (runs x flavors) of queries in each mean.
    errors : ``{(run, flavor string): message}`` for flavors whose policy refused the data.
    notes : what was skipped and why (presets that do not define the metric, knobs it ignores).
    include_defects : count the flavors marked :attr:`SpreadFlavor.defect` in the summaries
        (min/max per run, pairs, run orders); by default they are listed but left out.
    """

    base: Measure
    runs: tuple[str, ...]
    grid: dict[str, tuple[str, ...]]
    flavors: tuple[SpreadFlavor, ...]
    means: np.ndarray
    n_queries: np.ndarray
    errors: dict[tuple[str, str], str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    include_defects: bool = False

    # -- which flavors the summaries read ----------------------------------------------------

    def with_defects(self, include: bool = True) -> Spread:
        """The same spread, counting the defect flavors in its summaries (or not)."""
        return replace(self, include_defects=include)

    @property
    def in_summary(self) -> np.ndarray:
        """Per flavor: does it enter the summaries (min/max per run, pairs, run orders)?"""
        return np.array([in_summary(f.defect, self.include_defects) for f in self.flavors], dtype=bool)

    @property
    def excluded(self) -> list[SpreadFlavor]:
        """The flavors evaluated and listed but left out of the summaries (each names its reason)."""
        return [f for f, keep in zip(self.flavors, self.in_summary, strict=True) if not keep]

    @property
    def summary_note(self) -> str | None:
        """What the summaries leave out (or include) of the defect flavors, and why; None when there are none."""
        return defect_note([(f.presets, f.defect) for f in self.flavors], self.include_defects,
                           "min/max, pairs and run orders")

    @property
    def all_notes(self) -> tuple[str, ...]:
        """Every note a renderer prints: what the summaries leave out, then :attr:`notes`."""
        first = self.summary_note
        return ((first,) if first else ()) + self.notes

    # -- derived summaries -------------------------------------------------------------------

    @property
    def summaries(self) -> list[RunSpread]:
        """Per run: the base value and the lowest and highest flavor among those in the summary."""
        out = []
        use = self.in_summary
        for r, name in enumerate(self.runs):
            row = self.means[r]
            ok = np.flatnonzero(~np.isnan(row) & use)
            if len(ok) == 0:
                nan = float("nan")
                out.append(RunSpread(name, nan, nan, "", nan, "", 0))
                continue
            lo = int(ok[np.argmin(row[ok])])
            hi = int(ok[np.argmax(row[ok])])
            out.append(RunSpread(name, float(row[0]), float(row[lo]), self.flavors[lo].flavor, float(row[hi]),
                                 self.flavors[hi].flavor, len(ok)))
        return out

    @property
    def knob_effects(self) -> list[KnobEffect]:
        """Per grid knob: how much it moves each run's mean with the other grid knobs fixed."""
        cells = [(i, f.cell) for i, f in enumerate(self.flavors) if f.cell is not None]
        effects = []
        for knob, values in self.grid.items():
            groups: dict[tuple[tuple[str, str], ...], list[int]] = {}
            by_value_idx: dict[str, list[int]] = {v: [] for v in values}
            for i, cell in cells:
                assert cell is not None
                rest = tuple(sorted((k, v) for k, v in cell.items() if k != knob))
                groups.setdefault(rest, []).append(i)
                by_value_idx[cell[knob]].append(i)
            mean_swing, max_swing = {}, {}
            by_value: dict[str, dict[str, float]] = {v: {} for v in values}
            for r, name in enumerate(self.runs):
                row = self.means[r]
                swings = []
                for idx in groups.values():
                    vals = row[idx]
                    vals = vals[~np.isnan(vals)]
                    if len(vals) >= 2:
                        swings.append(float(vals.max() - vals.min()))
                mean_swing[name] = float(np.mean(swings)) if swings else float("nan")
                max_swing[name] = float(np.max(swings)) if swings else float("nan")
                for v, idx in by_value_idx.items():
                    vals = row[idx]
                    vals = vals[~np.isnan(vals)]
                    by_value[v][name] = float(vals.mean()) if len(vals) else float("nan")
            effects.append(KnobEffect(knob, tuple(values), mean_swing, max_swing, by_value))
        return effects

    @property
    def most_moving_knob(self) -> str | None:
        """The grid knob with the largest mean swing (averaged over runs), or None."""
        effects = [e for e in self.knob_effects if not math.isnan(e.overall)]
        return max(effects, key=lambda e: e.overall).knob if effects else None

    @property
    def pairs(self) -> list[PairComparison]:
        """Every pair of runs: A minus B across the flavors both evaluated."""
        out = []
        use = self.in_summary
        for a, b in itertools.combinations(range(len(self.runs)), 2):
            d = self.means[a] - self.means[b]
            ok = np.flatnonzero(~np.isnan(d) & use)
            if len(ok) == 0:
                continue
            lo = int(ok[np.argmin(d[ok])])
            hi = int(ok[np.argmax(d[ok])])
            dv = d[ok]
            out.append(PairComparison(
                self.runs[a], self.runs[b], float(d[0]), float(d[lo]), self.flavors[lo].flavor, float(d[hi]),
                self.flavors[hi].flavor, int((dv > TIE_TOLERANCE).sum()), int((dv < -TIE_TOLERANCE).sum()),
                int((np.abs(dv) <= TIE_TOLERANCE).sum()),
            ))
        return out

    @property
    def orders(self) -> list[RunOrder]:
        """The distinct orders of the runs (best first) over the flavors in the summary that every run
        evaluated, most common first (equally common: in the order their first flavor was listed)."""
        found: dict[tuple[str, ...], list[str]] = {}
        for j, (f, use) in enumerate(zip(self.flavors, self.in_summary, strict=True)):
            col = self.means[:, j]
            if not use or np.isnan(col).any():
                continue
            # Means equal to 12 decimals keep the given run order, so float noise makes no new order.
            order = sorted(range(len(self.runs)), key=lambda r: (-round(float(col[r]), 12), r))
            found.setdefault(tuple(self.runs[r] for r in order), []).append(f.flavor)
        ranked = sorted(found.items(), key=lambda kv: -len(kv[1]))
        return [RunOrder(o, tuple(fl)) for o, fl in ranked]

    @property
    def order_changes(self) -> bool:
        return len(self.orders) > 1

    # -- export ------------------------------------------------------------------------------

    def rows(self) -> list[tuple[str, str, float, bool, str]]:
        """``(run, flavor string, mean, in the summaries, why not)`` for every run and flavor (the CSV rows)."""
        use = self.in_summary
        return [(run, f.flavor, float(self.means[r, j]), bool(use[j]), "" if use[j] else str(f.defect))
                for r, run in enumerate(self.runs) for j, f in enumerate(self.flavors)]

    def to_arrow(self, per_query: bool = False) -> pa.Table:
        """One row per run x flavor (the means) as an Arrow table (:func:`spread_table`); ``to_pandas``/``to_polars`` convert it."""
        return spread_table(self, per_query)

    def plot(self) -> go.Figure:
        """Each run's mean across the flavors, the chart of the HTML report
        (:func:`rankflavor.report.charts.spread_figure`), as a plotly Figure."""
        from rankflavor.base.display import plot_of

        return plot_of(self)

    def to_dict(self) -> dict[str, Any]:
        """Everything, JSON-ready (NaN as None): every flavor, marked ``in_summary`` (with its
        ``defect`` when not), and the summaries over the flavors in them."""
        use = self.in_summary
        return {
            "measure": str(self.base),
            "runs": list(self.runs),
            "grid": {k: list(v) for k, v in self.grid.items()},
            "include_defects": self.include_defects,
            "n_flavors": len(self.flavors),
            "n_in_summary": int(use.sum()),
            "flavors": [
                {
                    "flavor": f.flavor,
                    "origins": list(f.origins),
                    "knobs": f.cell,
                    "mean": {run: _json(self.means[r, j]) for r, run in enumerate(self.runs)},
                    "n_queries": {run: int(self.n_queries[r, j]) for r, run in enumerate(self.runs)},
                    "in_summary": bool(use[j]),
                    "defect": f.defect,
                }
                for j, f in enumerate(self.flavors)
            ],
            "excluded": [{"flavor": f.flavor, "presets": list(f.presets), "reason": f.defect} for f in self.excluded],
            "summaries": [
                {"run": s.run, "base": _json(s.base), "min": _json(s.low), "min_flavor": s.low_flavor,
                 "max": _json(s.high), "max_flavor": s.high_flavor, "spread": _json(s.spread),
                 "n_flavors": s.n_flavors}
                for s in self.summaries
            ],
            "knob_effects": [
                {"knob": e.knob, "values": list(e.values), "overall": _json(e.overall),
                 "mean_swing": {k: _json(v) for k, v in e.mean_swing.items()},
                 "max_swing": {k: _json(v) for k, v in e.max_swing.items()},
                 "by_value": {v: {k: _json(x) for k, x in d.items()} for v, d in e.by_value.items()}}
                for e in self.knob_effects
            ],
            "most_moving_knob": self.most_moving_knob,
            "pairs": [
                {"run_a": p.run_a, "run_b": p.run_b, "base_diff": _json(p.base_diff), "min_diff": _json(p.min_diff),
                 "min_flavor": p.min_flavor, "max_diff": _json(p.max_diff), "max_flavor": p.max_flavor,
                 "a_better": p.a_better, "b_better": p.b_better, "equal": p.equal, "flips": p.flips}
                for p in self.pairs
            ],
            "orders": [{"order": list(o.order), "n_flavors": len(o.flavors), "flavors": list(o.flavors)}
                       for o in self.orders],
            "order_changes": self.order_changes,
            "errors": [{"run": r, "flavor": f, "error": msg} for (r, f), msg in self.errors.items()],
            "notes": list(self.all_notes),
        }


def _json(x: float) -> float | None:
    x = float(x)
    return None if math.isnan(x) else x


def spread_table(s: Spread, per_query: bool = False) -> pa.Table:
    """One row per run x flavor: the mean, its queries, and whether the summaries count it.

    Columns ``run, metric, flavor, query ("all"), value, n_queries, origins, in_summary,
    excluded_because, error``; runs in the order given, flavors in the spread's order (the base first).
    """
    only_summary("a spread", per_query, "it keeps each flavor's mean; evaluate() one flavor for its per-query values")
    use = s.in_summary
    rows = [(run, f.measure.display, f.flavor, ALL, float(s.means[r, j]), int(s.n_queries[r, j]),
             ", ".join(f.origins), bool(use[j]), None if use[j] else str(f.defect), s.errors.get((run, f.flavor)))
            for r, run in enumerate(s.runs) for j, f in enumerate(s.flavors)]
    names = ("run", "metric", "flavor", "query", "value", "n_queries", "origins", "in_summary", "excluded_because",
             "error")
    kinds = ("str", "str", "str", "str", "f64", "i64", "str", "bool", "str", "str")
    return typed_table({n: (k, [r[i] for r in rows]) for i, (n, k) in enumerate(zip(names, kinds, strict=True))})


__all__ = ["TIE_TOLERANCE", "KnobEffect", "PairComparison", "RunOrder", "RunSpread", "Spread", "SpreadFlavor",
           "defect_note", "in_summary"]
