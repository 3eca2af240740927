"""Spread: one measure under a grid of flavors and every preset, over one or more runs.

The same judgments and rankings give different numbers under different flavors. :func:`spread`
evaluates a measure under every combination of a few knobs (by default gain x discount x ideal x
unjudged x ties) plus the flavor of every registered preset, and reports how far the numbers
move: each flavor's mean, the lowest and highest flavor per run, which knob moves the score
most, and, for several runs, whether their order or the sign of their difference depends on the
flavor.

Cost: every input is read once and aligned once per ``duplicates`` policy; measures that share
the ordering knobs share one sort (one :class:`rankflavor.plan.Evaluation` per run, keeping one
ordering's rankings at a time); each flavor then costs one kernel pass (segment sums over the
shared ranking), not a full evaluation.

References
----------
.. [Tur24] D. Turnbull. "Flavors of NDCG". softwaredoug.com/blog/2024/05/22/flavors-of-ndcg.
.. [Sak07] T. Sakai. "Alternatives to Bpref". SIGIR 2007 (condensed lists).
.. [MN08] F. McSherry, M. Najork. "Computing Information Retrieval Performance Measures
   Efficiently in the Presence of Tied Scores". ECIR 2008.

Examples
--------
>>> qrels = {"q1": {"a": 2, "b": 0, "c": 1}}
>>> run = {"q1": {"a": 0.2, "b": 0.9, "c": 0.5}}
>>> s = spread(qrels, run, "ndcg@3", grid={"gain": ["linear", "exp2"]}, presets=False)
>>> [round(float(v), 4) for v in s.means[0]]
[0.6199, 0.5869]
>>> round(s.summaries[0].spread, 4)
0.033
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import FlavorError, RankflavorError, UsageError
from .flavor import Flavor, check_knob_names, split_top_level
from .io.inputs import as_qrels, as_run
from .measure import Measure
from .pages import small_pages
from .plan import Evaluation
from .tables import Run

#: The default grid: the knobs tools disagree on most (flavor-facts §1.1-1.7).
DEFAULT_GRID: dict[str, tuple[str, ...]] = {
    "gain": ("linear", "exp2"),
    "discount": ("log2", "jk(2)"),
    "ideal": ("global", "local"),
    "unjudged": ("zero", "condensed"),
    "ties": ("docno_desc", "input_order", "averaged"),
}

#: Two means closer than this count as equal when comparing runs (float noise is not a flip).
TIE_TOLERANCE = 1e-12

BASE, GRID = "base", "grid"


def one_measure(item: str | Measure, preset: str | None = None, knobs: Mapping[str, Any] | None = None,
                what: str = "measure") -> Measure:
    """Resolve one measure text (canonical, a preset dialect name or ``PRESET:NAME``) to a :class:`Measure`.

    Raises :class:`UsageError` when the text names no measure or several (``ndcg_cut`` expands to nine).
    """
    from .presets import resolve_measures

    overrides = {k: v if isinstance(v, str) else str(v) for k, v in (knobs or {}).items()}
    measures, extras = resolve_measures([item], preset, overrides)
    if extras or len(measures) != 1:
        names = [str(m.display) for m in measures] + list(extras)
        raise UsageError(f"{what}: expected exactly one measure, received {item!r}, which names {len(names)}: "
                         f"{', '.join(names) or 'none'}")
    return measures[0]


# ---------------------------------------------------------------------------------------------
# Result values


@dataclass(frozen=True)
class SpreadFlavor:
    """One evaluated flavor: the measure, where it came from, and its grid cell.

    Attributes
    ----------
    measure : the measure; ``str(measure)`` is the canonical flavor string.
    origins : ``"base"`` (the measure asked for), ``"grid"``, ``"preset:NAME"`` (one or more).
    cell : the grid knob values of this flavor, or None when it is not a grid cell.
    """

    measure: Measure
    origins: tuple[str, ...]
    cell: dict[str, str] | None = None

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
class Spread:
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
    """

    base: Measure
    runs: tuple[str, ...]
    grid: dict[str, tuple[str, ...]]
    flavors: tuple[SpreadFlavor, ...]
    means: np.ndarray
    n_queries: np.ndarray
    errors: dict[tuple[str, str], str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    # -- derived summaries -------------------------------------------------------------------

    @property
    def summaries(self) -> list[RunSpread]:
        """Per run: the base value and the lowest and highest flavor."""
        out = []
        for r, name in enumerate(self.runs):
            row = self.means[r]
            ok = np.flatnonzero(~np.isnan(row))
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
        for a, b in itertools.combinations(range(len(self.runs)), 2):
            d = self.means[a] - self.means[b]
            ok = np.flatnonzero(~np.isnan(d))
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
        """The distinct orders of the runs (best first) over flavors every run evaluated, most common first."""
        found: dict[tuple[str, ...], list[str]] = {}
        for j, f in enumerate(self.flavors):
            col = self.means[:, j]
            if np.isnan(col).any():
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

    def rows(self) -> list[tuple[str, str, float]]:
        """``(run, flavor string, mean)`` for every run and flavor (the CSV rows)."""
        return [(run, f.flavor, float(self.means[r, j])) for r, run in enumerate(self.runs)
                for j, f in enumerate(self.flavors)]

    def to_dict(self) -> dict[str, Any]:
        """Everything, JSON-ready (NaN as None)."""
        return {
            "measure": str(self.base),
            "runs": list(self.runs),
            "grid": {k: list(v) for k, v in self.grid.items()},
            "flavors": [
                {
                    "flavor": f.flavor,
                    "origins": list(f.origins),
                    "knobs": f.cell,
                    "mean": {run: _json(self.means[r, j]) for r, run in enumerate(self.runs)},
                    "n_queries": {run: int(self.n_queries[r, j]) for r, run in enumerate(self.runs)},
                }
                for j, f in enumerate(self.flavors)
            ],
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
            "notes": list(self.notes),
        }


def _json(x: float) -> float | None:
    x = float(x)
    return None if math.isnan(x) else x


# ---------------------------------------------------------------------------------------------
# Building the flavor list


def parse_grid(items: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """Parse CLI ``--vary`` items (``"gain=linear,exp2"``) into ``{knob: (value, ...)}``."""
    grid: dict[str, list[str]] = {}
    for item in items:
        if "=" not in item:
            raise UsageError(f"--vary expects KNOB=VALUE,VALUE,..., received {item!r}")
        knob, values = (s.strip() for s in item.split("=", 1))
        parts = split_top_level(values)
        if not parts:
            raise UsageError(f"--vary {knob}: give at least one value, received {item!r}")
        grid.setdefault(knob, []).extend(parts)
    return {k: tuple(v) for k, v in grid.items()}


def _canonical_grid(grid: Mapping[str, Iterable[str]], base: Measure) -> tuple[dict[str, tuple[str, ...]], list[str]]:
    check_knob_names(grid)
    reads = set(base.spec.knobs) | ({"empty"} if base.spec.uses_empty else set())
    out: dict[str, tuple[str, ...]] = {}
    notes = []
    for knob, values in grid.items():
        if isinstance(values, str):
            values = split_top_level(values)
        canon: list[str] = []
        for v in values:
            c = getattr(Flavor(**{knob: v if isinstance(v, str) else str(v)}), knob)
            if c not in canon:
                canon.append(c)
        if not canon:
            raise UsageError(f"grid: knob '{knob}' needs at least one value, received none")
        if knob not in reads:
            notes.append(f"grid knob '{knob}' ignored: {base.metric} does not read it")
            continue
        out[knob] = tuple(canon)
    return out, notes


def build_flavors(base: Measure, grid: Mapping[str, tuple[str, ...]],
                  presets: bool | Iterable[str]) -> tuple[list[SpreadFlavor], list[str]]:
    """Base measure, then the grid cells, then each preset's flavor of the same metric@k; deduplicated."""
    from .presets import PRESETS, get_preset

    entries: dict[Measure, tuple[list[str], dict[str, str] | None]] = {base: ([BASE], None)}
    for values in itertools.product(*grid.values()):
        cell = dict(zip(grid, values, strict=True))
        m = Measure(base.metric, base.k, base.flavor.with_knobs(**cell))
        origins, old_cell = entries.setdefault(m, ([], cell))
        if GRID not in origins:
            origins.append(GRID)
        if old_cell is None:
            entries[m] = (origins, cell)
    notes: list[str] = []
    if presets is True:
        names = list(PRESETS)
    elif presets is False:
        names = []
    else:
        names = [get_preset(p).name for p in presets]
    for name in names:
        try:
            m = one_measure(f"{name}:{base.name}")
        except FlavorError as exc:
            notes.append(f"preset {name} skipped: {exc}")
            continue
        if m.metric != base.metric or m.k != base.k:
            notes.append(f"preset {name} skipped: it reads {base.name} as {m.name}")
            continue
        key = Measure(m.metric, m.k, m.flavor)
        entries.setdefault(key, ([], None))[0].append(f"preset:{name}")
    flavors = [SpreadFlavor(m, tuple(origins), cell) for m, (origins, cell) in entries.items()]
    return flavors, notes


def _run_names(runs: Any) -> tuple[list[str], list[Any]]:
    """Split ``runs`` into names and inputs: one run, a list of runs, or ``{name: run}``."""
    if isinstance(runs, Mapping) and runs and not _is_nested_run(runs):
        return [str(k) for k in runs], list(runs.values())
    single = isinstance(runs, (str, os.PathLike, Mapping, Run)) or hasattr(runs, "columns")
    items = [runs] if single else list(runs)
    names: list[str] = []
    for i, r in enumerate(items):
        if isinstance(r, (str, os.PathLike)):
            name = os.path.basename(os.fspath(r))
        elif isinstance(r, Run) and r.from_file:
            name = os.path.basename(r.source)
        else:
            name = f"run{i + 1}"
        if name in names:  # same file name in two folders: fall back to the path, then a number
            path = os.fspath(r) if isinstance(r, (str, os.PathLike)) else ""
            name = path if path and path not in names else f"{name}#{i + 1}"
        names.append(name)
    return names, items


def _is_nested_run(obj: Mapping[Any, Any]) -> bool:
    """A pytrec_eval-style run ``{query: {doc: score}}``: the values are mappings of numbers."""
    first = next(iter(obj.values()))
    return isinstance(first, Mapping) and all(not isinstance(v, Mapping) for v in first.values())


# ---------------------------------------------------------------------------------------------


@small_pages()
def spread(
    qrels: Any,
    runs: Any,
    measure: str | Measure = "ndcg@10",
    *,
    grid: Mapping[str, Iterable[str]] | None = None,
    presets: bool | Iterable[str] = True,
    preset: str | None = None,
    k: int | None = None,
    **knobs: Any,
) -> Spread:
    """Evaluate one measure under a grid of flavors and every preset, over one or more runs.

    Parameters
    ----------
    qrels : path, ``{query: {doc: grade}}`` or DataFrame
        The judgments (read once).
    runs : a run (path, dict or DataFrame), a list of runs, or ``{name: run}``
        Runs to compare; a path is named by its file name.
    measure : str or Measure, default ``"ndcg@10"``
        The measure whose knobs the grid varies (canonical, dialect or ``PRESET:NAME``).
    grid : mapping knob -> values, optional
        Knobs to vary; default :data:`DEFAULT_GRID` (gain x discount x ideal x unjudged x ties).
        Knobs the metric does not read are ignored (with a note).
    presets : bool or list of preset names, default True
        Also evaluate ``metric@k`` under each preset's own flavor.
    preset : str, optional
        Preset whose flavor and dialect the base ``measure`` uses.
    k : int, optional
        Cutoff replacing the measure's own (``measure="ndcg", k=20`` is ``ndcg@20``).
    **knobs
        Flavor knobs of the base measure (``rel=2``); the grid overrides the knobs it varies.

    Returns
    -------
    Spread
        ``means`` (runs x flavors) plus per-run spread, per-knob swing, pairwise sign flips and run orders.

    Examples
    --------
    >>> qrels = {"q1": {"a": 1, "b": 1}}
    >>> runs = {"A": {"q1": {"a": 2.0, "b": 1.0, "x": 1.5}}, "B": {"q1": {"x": 2.0, "a": 1.0, "b": 1.0}}}
    >>> s = spread(qrels, runs, "ndcg@3", grid={"unjudged": ["zero", "condensed"]}, presets=False)
    >>> [(p.run_a, p.run_b, p.a_better, p.b_better, p.equal) for p in s.pairs]
    [('A', 'B', 1, 0, 1)]
    """
    base = one_measure(measure, preset, knobs)
    if k is not None:
        base = Measure(base.metric, k, base.flavor)
    canon_grid, notes = _canonical_grid(DEFAULT_GRID if grid is None else grid, base)
    flavors, preset_notes = build_flavors(base, canon_grid, presets)
    names, items = _run_names(runs)
    if not items:
        raise UsageError("runs: give at least one run")
    q_table = as_qrels(qrels)
    means = np.full((len(items), len(flavors)), np.nan)
    counts = np.zeros((len(items), len(flavors)), dtype=np.int64)
    errors: dict[tuple[str, str], str] = {}
    first_error: RankflavorError | None = None
    # Grouped by ordering so each distinct ordering is sorted once per run (the flavor list keeps its order).
    by_ordering = sorted(range(len(flavors)), key=lambda j: Evaluation.key(flavors[j].measure))
    for r, item in enumerate(items):
        shared = Evaluation(q_table, as_run(item), one_ordering=True)
        try:
            for j in by_ordering:
                f = flavors[j]
                try:
                    res = shared.evaluate(f.measure)
                except RankflavorError as exc:
                    errors[(names[r], f.flavor)] = str(exc)
                    first_error = first_error or exc.with_traceback(None)
                    continue
                means[r, j] = res.summary
                counts[r, j] = res.n_queries
        finally:
            shared.close()
    if first_error is not None and len(errors) == means.size:
        raise first_error
    return Spread(base, tuple(names), canon_grid, tuple(flavors), means, counts, errors,
                  tuple(notes + preset_notes))


__all__ = ["DEFAULT_GRID", "KnobEffect", "PairComparison", "RunOrder", "RunSpread", "Spread", "SpreadFlavor",
           "build_flavors", "one_measure", "parse_grid", "spread"]

