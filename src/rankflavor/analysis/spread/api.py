"""Spread: one measure under a grid of flavors and every preset, over one or more runs.

The same judgments and rankings give different numbers under different flavors. :func:`spread`
evaluates a measure under every combination of a few knobs (by default gain x discount x ideal x
unjudged x ties) plus the flavor of every registered preset, and reports how far the numbers
move: each flavor's mean, the lowest and highest flavor per run, which knob moves the score
most, and, for several runs, whether their order or the sign of their difference depends on the
flavor (the values: :mod:`rankflavor.analysis.spread.result`).

Cost: every input is read once and aligned once per ``duplicates`` policy; measures that share
the ordering knobs share one sort (one :class:`rankflavor.engine.plan.Evaluation` per run, keeping one
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
import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from rankflavor.analysis.spread.result import (
    TIE_TOLERANCE,
    KnobEffect,
    PairComparison,
    RunOrder,
    RunSpread,
    Spread,
    SpreadFlavor,
)
from rankflavor.base.progress import Progress
from rankflavor.engine.plan import Evaluation, evaluate_grid
from rankflavor.errors import RankflavorError, UsageError
from rankflavor.flavor.flavor import Flavor, check_knob_names, split_top_level
from rankflavor.io.inputs import as_qrels
from rankflavor.io.tables import Run
from rankflavor.metrics.measure import Measure

if TYPE_CHECKING:
    from rankflavor.presets.scales import Scale

#: The default grid: the knobs tools disagree on most (flavor-facts §1.1-1.7).
DEFAULT_GRID: dict[str, tuple[str, ...]] = {
    "gain": ("linear", "exp2"),
    "discount": ("log2", "jk(2)"),
    "ideal": ("global", "local"),
    "unjudged": ("zero", "condensed"),
    "ties": ("docno_desc", "input_order", "averaged"),
}

BASE, GRID = "base", "grid"
#: How :func:`build_flavors` marks an entry that is a preset's flavor: ``"preset:NAME"``.
PRESET_ORIGIN = "preset:"


def one_measure(item: str | Measure, preset: str | None = None, knobs: Mapping[str, Any] | None = None,
                what: str = "measure", scale: Scale | None = None) -> Measure:
    """Resolve one measure text (canonical, a preset dialect name or ``PRESET:NAME``) to a :class:`Measure`,
    under ``scale`` if one is declared (:func:`rankflavor.presets.resolve_measures` states the precedence).

    Raises :class:`UsageError` when the text names no measure or several (``ndcg_cut`` expands to nine).
    """
    from rankflavor.presets import resolve_measures

    overrides = {k: v if isinstance(v, str) else str(v) for k, v in (knobs or {}).items()}
    measures, extras = resolve_measures([item], preset, overrides, scale)
    if extras or len(measures) != 1:
        names = [str(m.display) for m in measures] + list(extras)
        raise UsageError(f"{what}: expected exactly one measure, received {item!r}, which names {len(names)}: "
                         f"{', '.join(names) or 'none'}")
    return measures[0]


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


def canonical_grid(grid: Mapping[str, Iterable[str]], base: Measure) -> tuple[dict[str, tuple[str, ...]], list[str]]:
    """The grid's values in canonical form, without the knobs ``base``'s metric does not read
    (each named in a note)."""
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
    from rankflavor.presets import PRESETS, get_preset

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
        except UsageError as exc:  # a FlavorError, or a name the tool reads as several (lightgbm: ndcg)
            notes.append(f"preset {name} skipped: {exc}")
            continue
        if m.metric != base.metric or m.k != base.k:
            notes.append(f"preset {name} skipped: it reads {base.name} as {m.name}")
            continue
        key = Measure(m.metric, m.k, m.flavor)
        entries.setdefault(key, ([], None))[0].append(f"{PRESET_ORIGIN}{name}")
    flavors = [SpreadFlavor(m, tuple(origins), cell, defect_reason(origins)) for m, (origins, cell) in entries.items()]
    return flavors, notes


def defect_reason(origins: Iterable[str]) -> str | None:
    """Why a flavor with these origins stays out of a spread's summaries: the ``Preset.defect`` texts
    when only presets that reproduce a tool's known defect produced it; None when the base, a grid
    cell or a sound preset shares it."""
    from rankflavor.presets import PRESETS

    origins = list(origins)
    names = [o[len(PRESET_ORIGIN):] for o in origins if o.startswith(PRESET_ORIGIN)]
    if not names or len(names) != len(origins):
        return None
    defects = [PRESETS[n].defect if n in PRESETS else None for n in names]
    if any(d is None for d in defects):
        return None
    return "; ".join(f"{n}: {d}" for n, d in zip(names, defects, strict=True))


def _scale(scale: str | Scale | None, qrels: Any = None) -> Scale | None:
    from rankflavor.io.irds import irds_id

    if scale is None and irds_id(qrels) is None:
        return None
    from rankflavor.presets.irds import scale_for  # (only for a scale: it loads pyarrow.compute)

    return scale_for(scale, qrels)  # named, or an ir_datasets dataset's documented grades


def scale_note(scale: Scale, flavors: Iterable[SpreadFlavor]) -> str:
    """What a declared scale did to a flavor list: which preset rows keep a knob the scale sets
    otherwise (those rows reproduce their tool, which does not know the scale)."""
    wanted = scale.knobs()
    differ: list[str] = []
    for f in flavors:
        tools = [o[len(PRESET_ORIGIN):] for o in f.origins if o.startswith(PRESET_ORIGIN)]
        if not tools:
            continue
        printed = f.measure.knobs
        if any(knob in printed and printed[knob] != value for knob, value in wanted.items()) or (
                "max_grade" in printed and float(printed["max_grade"]) != scale.top):
            differ += [t for t in tools if t not in differ]
    head = f"scale {scale.describe()}: the base and grid flavors take its knobs"
    if not differ:
        return head
    return head + f"; preset rows keep their tool's own flavor, which differs from the scale's for: {', '.join(differ)}"


def run_names(runs: Any) -> tuple[list[str], list[Any]]:
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


def spread(
    qrels: Any,
    runs: Any,
    measure: str | Measure = "ndcg@10",
    *,
    grid: Mapping[str, Iterable[str]] | None = None,
    presets: bool | Iterable[str] = True,
    preset: str | None = None,
    k: int | None = None,
    scale: str | Scale | None = None,
    include_defects: bool = False,
    progress: Progress | None = None,
    engine: str = "local",
    spark: Any = None,
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
    scale : str or Scale, optional
        The label scale (``trec_dl``, ...): the grades are checked against it, and the base
        measure and the grid cells take its knobs (``rel``, ``negatives``, ``max_grade``) as
        :func:`rankflavor.evaluate` does. Each preset's row keeps its tool's own flavor (a row
        named after a tool reproduces that tool; a note says so when the two differ).
    include_defects : bool, default False
        Count the flavors only presets that reproduce a tool's known defect produced
        (``spark_triples``: NDCG above 1) in the summaries (min/max per run, pairs, run orders).
        By default they are evaluated and listed, each with its reason, but left out of them
        (:attr:`Spread.excluded`); :meth:`Spread.with_defects` switches later.
    progress : rankflavor.base.progress.Progress, optional
        Told of each (run, flavor) evaluated; nothing is shown when None.
    engine : ``"local"`` (default) or ``"spark"``
        ``spark``: Spark reads the judgments and runs (paths Spark resolves, Parquet
        directories, Spark DataFrames) and evaluates every run under every flavor in one pass
        over buckets of queries (:func:`rankflavor.spark.score_spark`); the same Spread.
    spark : SparkSession, optional
        With ``engine="spark"``: the session (default: the DataFrames' own, or
        :func:`rankflavor.spark.local_session`).
    **knobs
        Flavor knobs of the base measure (``rel=2``); the grid overrides the knobs it varies.

    Returns
    -------
    Spread
        ``means`` (runs x flavors) plus per-run spread, per-knob swing, pairwise sign flips and run
        orders over the flavors in the summaries.

    Examples
    --------
    >>> qrels = {"q1": {"a": 1, "b": 1}}
    >>> runs = {"A": {"q1": {"a": 2.0, "b": 1.0, "x": 1.5}}, "B": {"q1": {"x": 2.0, "a": 1.0, "b": 1.0}}}
    >>> s = spread(qrels, runs, "ndcg@3", grid={"unjudged": ["zero", "condensed"]}, presets=False)
    >>> [(p.run_a, p.run_b, p.a_better, p.b_better, p.equal) for p in s.pairs]
    [('A', 'B', 1, 0, 1)]
    """
    sc = _scale(scale, qrels)
    base = one_measure(measure, preset, knobs, scale=sc)
    if k is not None:
        base = Measure(base.metric, k, base.flavor)
        if sc is not None:  # G may matter at the new cutoff only
            base = sc.with_top_grade(base)
    canon_grid, notes = canonical_grid(DEFAULT_GRID if grid is None else grid, base)
    flavors, preset_notes = build_flavors(base, canon_grid, presets)
    if sc is not None:
        notes.append(scale_note(sc, flavors))
    names, items = run_names(runs)
    if not items:
        raise UsageError("runs: give at least one run")
    measures = [f.measure for f in flavors]
    label = f"spread: {len(items)} run{'s' if len(items) != 1 else ''} x {len(flavors)} flavors"
    if engine == "spark":
        from rankflavor.spark import score_spark

        grid_results, raised = score_spark(qrels, items, measures, spark=spark, scale=sc)
    elif engine == "local":
        q_table = as_qrels(qrels)
        if sc is not None:
            sc.check(q_table)
        grid_results, raised = evaluate_grid(q_table, items, measures, progress, label)
    else:
        raise UsageError(f"engine: expected 'local' or 'spark', received {engine!r}")
    means = np.full((len(items), len(flavors)), np.nan)
    counts = np.zeros((len(items), len(flavors)), dtype=np.int64)
    for r, row in enumerate(grid_results):
        for j, res in enumerate(row):
            if res is not None:
                means[r, j] = res.summary
                counts[r, j] = res.n_queries
    # (the flavors' order within a run: the order they were evaluated in, grouped by ordering)
    by_ordering = sorted(range(len(flavors)), key=lambda j: Evaluation.key(flavors[j].measure))
    errors = {(names[r], flavors[j].flavor): str(raised[(r, j)])
              for r in range(len(items)) for j in by_ordering if (r, j) in raised}
    first = min(raised, key=lambda rj: (rj[0], by_ordering.index(rj[1])), default=None)
    first_error: RankflavorError | None = None if first is None else raised[first]
    if first_error is not None and len(errors) == means.size:
        raise first_error
    return Spread(base, tuple(names), canon_grid, tuple(flavors), means, counts, errors,
                  tuple(notes + preset_notes), include_defects)


__all__ = ["DEFAULT_GRID", "PRESET_ORIGIN", "TIE_TOLERANCE", "KnobEffect", "PairComparison", "RunOrder", "RunSpread", "Spread",
           "SpreadFlavor", "build_flavors", "canonical_grid", "defect_reason", "one_measure", "parse_grid", "spread"]

