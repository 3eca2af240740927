"""Diff: why two flavors of one metric give different numbers, knob by knob and query by query.

Measure A is turned into measure B one knob at a time (the cutoff ``k`` counts as a knob): step
``i`` evaluates A with the first ``i`` changes applied, so the last step is B itself. The change in
each query's value at each step is that knob's share of the query's difference; the change in the
mean at each step is the knob's share of the gap between the two means. Steps telescope, so a
query's steps sum to its total difference, and the mean steps to the gap between the means.

With interactions between knobs, a knob's share depends on the path (the order of the steps):
the default order is the knob table's (``rankflavor flavors``), after the cutoff, with two
adjustments so that no intermediate flavor fails where neither end does: ``ideal`` and
``max_grade`` move together, and a policy that leaves ``error`` moves first while one that enters
``error`` moves last. Pass ``order`` to choose another path.

Which queries are in the mean can change along the path (``missing=skip``, ``empty=skip``,
``empty=nan``). The attribution is defined on the per-query table: at every step a query is
either *in the mean* (it has a finite value there) or *absent*; an absent query counts as 0 in
the per-query table, and its status says which. Two scales are offered:

* ``value``: the query's own value (absent = 0). A query's steps sum to its total ``B - A``.
* ``mean``: the query's share of the mean, ``value / n_in_mean`` (absent = 0). The shares of a
  step sum over queries to that step's change in the mean, so this table splits the gap between
  the means exactly by knob and by query, even when the set of queries changes.

References
----------
.. [Tur24] D. Turnbull. "Flavors of NDCG". softwaredoug.com/blog/2024/05/22/flavors-of-ndcg.

Examples
--------
>>> qrels = {"q1": {"a": 2, "b": 0, "c": 1}, "q2": {"x": 1}}
>>> run = {"q1": {"a": 0.2, "b": 0.9, "c": 0.5}, "q2": {"y": 1.0, "x": 0.5}}
>>> d = diff(qrels, run, "ndcg@3", "ndcg@3[gain=exp2,discount=jk(2)]")
>>> [s.name for s in d.steps]
['gain', 'discount']
>>> [round(float(x), 4) for x in d.mean_deltas]
[-0.0165, 0.2527]
>>> round(float(d.mean_deltas.sum()), 10) == round(d.total, 10)
True
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rankflavor.engine.results import MeasureResult
from rankflavor.errors import UsageError, did_you_mean
from rankflavor.flavor.flavor import KNOBS, Flavor
from rankflavor.io.inputs import as_qrels, as_run
from rankflavor.io.tables import Qrels, Run
from rankflavor.metrics.measure import Measure

#: Pseudo-knob for the cutoff ``@k``.
CUTOFF = "k"
#: Default path order: the cutoff, then the knob table's order.
PATH_ORDER: tuple[str, ...] = (CUTOFF, *KNOBS)
#: Knobs that only make sense together move in one step (``ideal=max`` needs ``max_grade``).
COUPLED: tuple[tuple[str, ...], ...] = (("ideal", "max_grade"),)
#: Policy knobs with an ``error`` value: leaving ``error`` goes first, entering it goes last.
REFUSING = ("duplicates", "negatives", "empty", "missing")
#: Status of a query at a step in the per-query table.
IN_MEAN, ABSENT = "in_mean", "absent"
SCALES = ("value", "mean")


@dataclass(frozen=True)
class Step:
    """One step of the path: the knobs it changes (``{knob: (from, to)}``) and the measure after it."""

    name: str
    changes: dict[str, tuple[str, str]]
    measure: Measure


@dataclass(frozen=True)
class Mover:
    """A query whose value moves a lot between A and B, with its per-step deltas."""

    query: str
    a: float | None
    b: float | None
    total: float
    by_step: dict[str, float]


@dataclass(frozen=True)
class Diff:
    """What :func:`diff` returns: the path from A to B and the per-query table along it.

    Attributes
    ----------
    a, b : the two measures.
    steps : the path; ``steps[-1].measure == b``.
    queries : every query that is in the mean at some step (byte order).
    values : array (steps + 1) x queries: row 0 is A, row i the value after step i; NaN where
        the query is not in that step's mean.
    status : same shape, the evaluate() status (``ok``, ``empty``, ``missing``) or ``absent``.
    means : the mean at each step (``means[0]`` = A's mean, ``means[-1]`` = B's mean).
    n_in_mean : queries in each step's mean.
    """

    a: Measure
    b: Measure
    steps: tuple[Step, ...]
    queries: tuple[str, ...]
    values: np.ndarray
    status: np.ndarray
    means: np.ndarray
    n_in_mean: np.ndarray

    @property
    def in_mean(self) -> np.ndarray:
        """Boolean (steps + 1) x queries: the query has a finite value in that step's mean."""
        return ~np.isnan(self.values)

    @property
    def total(self) -> float:
        """B's mean minus A's mean."""
        return float(self.means[-1] - self.means[0])

    @property
    def mean_deltas(self) -> np.ndarray:
        """Change of the mean at each step; they sum to :attr:`total`."""
        return np.diff(self.means)

    def table(self, scale: str = "value") -> np.ndarray:
        """The per-query table on ``scale`` (``value`` or ``mean``): absent queries count as 0."""
        if scale not in SCALES:
            raise UsageError(f"scale: expected one of {', '.join(SCALES)}, received {scale!r}")
        present = self.in_mean
        if scale == "value":
            return np.where(present, self.values, 0.0)
        if self.a.spec.summary == "sum":  # counts: a query's share of a sum is its value
            return np.where(present, self.values, 0.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            share = self.values / self.n_in_mean[:, None]
        return np.where(present, share, 0.0)

    def deltas(self, scale: str = "value") -> np.ndarray:
        """Array steps x queries: each step's change of each query (see :meth:`table`)."""
        return np.diff(self.table(scale), axis=0)

    def totals(self, scale: str = "value") -> np.ndarray:
        """Per query, B minus A on ``scale``; each equals the sum of the query's step deltas."""
        t = self.table(scale)
        return t[-1] - t[0]

    def movers(self, n: int = 10, scale: str = "value") -> list[Mover]:
        """The ``n`` queries whose total moves most (largest absolute change first)."""
        totals = self.totals(scale)
        deltas = self.deltas(scale)
        order = sorted(range(len(self.queries)), key=lambda i: (-abs(totals[i]), self.queries[i]))[:n]
        out = []
        for i in order:
            a = None if np.isnan(self.values[0, i]) else float(self.values[0, i])
            b = None if np.isnan(self.values[-1, i]) else float(self.values[-1, i])
            out.append(Mover(self.queries[i], a, b, float(totals[i]),
                             {s.name: float(deltas[j, i]) for j, s in enumerate(self.steps)}))
        return out

    def rows(self, scale: str = "value") -> list[tuple[str, str, float]]:
        """``(knob, query, delta)`` rows: per step every query then ``all`` (the mean); then ``total``.

        For one query, the step rows sum to its ``total`` row; the ``all`` rows sum to the
        ``total``/``all`` row (B's mean minus A's mean). On ``scale="mean"`` the query rows of a step
        also sum to that step's ``all`` row.
        """
        deltas = self.deltas(scale)
        totals = self.totals(scale)
        out: list[tuple[str, str, float]] = []
        for j, s in enumerate(self.steps):
            out.extend((s.name, q, float(deltas[j, i])) for i, q in enumerate(self.queries))
            out.append((s.name, "all", float(self.mean_deltas[j])))
        out.extend(("total", q, float(totals[i])) for i, q in enumerate(self.queries))
        out.append(("total", "all", self.total))
        return out

    def entering_leaving(self) -> list[tuple[str, str, str]]:
        """``(step, query, "enters"|"leaves")`` where a step changes whether a query is in the mean."""
        present = self.in_mean
        out = []
        for j, s in enumerate(self.steps):
            for i in np.flatnonzero(present[j] != present[j + 1]).tolist():
                out.append((s.name, self.queries[i], "enters" if present[j + 1, i] else "leaves"))
        return out

    def to_dict(self, scale: str = "value", top: int = 10) -> dict[str, Any]:
        """JSON-ready: both measures, the path with mean deltas, the movers and every (knob, query, delta)."""
        return {
            "a": str(self.a),
            "b": str(self.b),
            "mean_a": _json(self.means[0]),
            "mean_b": _json(self.means[-1]),
            "total": _json(self.total),
            "scale": scale,
            "steps": [
                {"knob": s.name, "changes": {k: list(v) for k, v in s.changes.items()}, "flavor": str(s.measure),
                 "mean_before": _json(self.means[j]), "mean_after": _json(self.means[j + 1]),
                 "delta": _json(self.mean_deltas[j]), "n_in_mean": int(self.n_in_mean[j + 1])}
                for j, s in enumerate(self.steps)
            ],
            "movers": [
                {"query": m.query, "a": _json(m.a), "b": _json(m.b), "total": m.total, "by_step": m.by_step}
                for m in self.movers(top, scale)
            ],
            "membership_changes": [{"knob": k, "query": q, "change": c} for k, q, c in self.entering_leaving()],
            "rows": [{"knob": k, "query": q, "delta": _json(v)} for k, q, v in self.rows(scale)],
        }


def _json(x: float | None) -> float | None:
    return None if x is None or math.isnan(x) else float(x)


# ---------------------------------------------------------------------------------------------


def _knob_values(m: Measure) -> dict[str, str]:
    values = m.flavor.knobs()
    values[CUTOFF] = "none" if m.k is None else str(m.k)
    return values


def _ordered(order: Sequence[str] | None) -> list[str]:
    if order is None:
        return list(PATH_ORDER)
    names = [o.strip() for o in order if o.strip()]
    for n in names:
        if n not in PATH_ORDER:
            raise UsageError(f"order: unknown knob {n!r}; valid: {', '.join(PATH_ORDER)}." + did_you_mean(n, PATH_ORDER))
    seen = list(dict.fromkeys(names))
    return seen + [n for n in PATH_ORDER if n not in seen]


def plan(a: Measure, b: Measure, order: Sequence[str] | None = None) -> list[tuple[str, tuple[str, ...]]]:
    """The path from ``a`` to ``b`` as ``[(step name, knobs changed), ...]``.

    Examples
    --------
    >>> from rankflavor.metrics.measure import parse_measure as p
    >>> plan(p("ndcg@10"), p("ndcg@5[ideal=max,max_grade=3,empty=one]"))
    [('k', ('k',)), ('ideal+max_grade', ('ideal', 'max_grade')), ('empty', ('empty',))]
    """
    va, vb = _knob_values(a), _knob_values(b)
    differing = [n for n in _ordered(order) if va[n] != vb[n]]
    groups: list[tuple[str, ...]] = []
    done: set[str] = set()
    for n in differing:
        if n in done:
            continue
        group: tuple[str, ...] = (n,)
        for coupled in COUPLED:
            if n in coupled:
                group = tuple(c for c in coupled if c in differing)
        done.update(group)
        groups.append(group)
    if order is None:
        # Leave a refusing policy first, enter one last, so intermediate flavors fail only where an end does.
        first = [g for g in groups if any(n in REFUSING and va[n] == "error" for n in g)]
        last = [g for g in groups if g not in first and any(n in REFUSING and vb[n] == "error" for n in g)]
        groups = first + [g for g in groups if g not in first and g not in last] + last
    return [("+".join(g), g) for g in groups]


def path_measures(a: Measure, b: Measure, order: Sequence[str] | None = None) -> list[Step]:
    """The measures along the path; the last one equals ``b``."""
    current = _knob_values(a)
    target = _knob_values(b)
    steps: list[Step] = []
    for name, group in plan(a, b, order):
        changes = {n: (current[n], target[n]) for n in group}
        for n in group:
            current[n] = target[n]
        k = None if current[CUTOFF] == "none" else int(current[CUTOFF])
        flavor = Flavor(**{n: v for n, v in current.items() if n != CUTOFF})
        steps.append(Step(name, changes, Measure(a.metric, k, flavor)))
    if steps and steps[-1].measure != b:  # pragma: no cover - a bug in the path, never a user error
        raise AssertionError(f"diff path ends at {steps[-1].measure}, not at {b}")
    return steps


def diff(
    qrels: Any,
    run: Any,
    a: str | Measure,
    b: str | Measure,
    *,
    order: Sequence[str] | None = None,
    preset: str | None = None,
    **knobs: Any,
) -> Diff:
    """Explain why two flavors of one metric differ: attribute the gap to each knob, per query and in the mean.

    Parameters
    ----------
    qrels, run : path, dict or DataFrame
        As for :func:`rankflavor.evaluate`.
    a, b : str or Measure
        Two measures of the same metric (``ndcg``, ``AP``...): canonical strings, preset names
        (``trec_eval:ndcg_cut.10``, ``sklearn:ndcg@10``) or :class:`Measure` values; ``k`` may differ.
    order : list of knob names, optional
        Path order (knobs listed go first, the rest follow the default order; ``"k"`` is the cutoff).
    preset : str, optional
        Preset whose flavor and dialect unprefixed measure names use.
    **knobs
        Flavor knobs applied to both measures.

    Returns
    -------
    Diff
        The path, the per-query values at every step and the mean at every step.
    """
    from rankflavor.analysis.spread.api import one_measure

    ma = one_measure(a, preset, knobs, what="a")
    mb = one_measure(b, preset, knobs, what="b")
    return diff_tables(as_qrels(qrels), as_run(run), ma, mb, order=order)


def diff_tables(qrels: Qrels, run: Run, a: Measure, b: Measure, order: Sequence[str] | None = None) -> Diff:
    """:func:`diff` on tables already read."""
    if a.metric != b.metric:
        raise UsageError(f"diff compares two flavors of one metric; received {a.metric} ({a.display}) and "
                         f"{b.metric} ({b.display})")
    from rankflavor.engine.plan import evaluate_tables, run_ordered

    # (a run of ranks alone puts order=rank on both, as the plan would on each step)
    a = run_ordered(run, Measure(a.metric, a.k, a.flavor))
    b = run_ordered(run, Measure(b.metric, b.k, b.flavor))
    steps = path_measures(a, b, order)
    measures = [a, *(s.measure for s in steps)]
    # One evaluation: alignment and each distinct ordering are shared by every step.
    results = evaluate_tables(qrels, run, _distinct(measures)).measures
    by_measure = {r.measure: r for r in results}
    per_step = [by_measure[m] for m in measures]
    return _table(a, b, tuple(steps), per_step)


def _distinct(measures: Iterable[Measure]) -> list[Measure]:
    return list(dict.fromkeys(measures))


def _table(a: Measure, b: Measure, steps: tuple[Step, ...], per_step: list[MeasureResult]) -> Diff:
    """The per-query table: a query's value at a step, NaN where it is not in that step's mean."""
    names: set[str] = set()
    for res in per_step:
        finite = ~np.isnan(res.values.astype(np.float64))
        names.update(str(q) for q in res.queries[finite])
    queries = tuple(sorted(names, key=lambda s: s.encode("utf-8")))
    column = {q: i for i, q in enumerate(queries)}
    values = np.full((len(per_step), len(queries)), np.nan)
    status = np.full((len(per_step), len(queries)), ABSENT, dtype=object)
    for j, res in enumerate(per_step):
        vals = res.values.astype(np.float64)
        finite = ~np.isnan(vals)
        cols = np.array([column[str(q)] for q in res.queries[finite]], dtype=np.int64)
        values[j, cols] = vals[finite]
        status[j, cols] = res.status[finite]
    means = np.array([r.summary for r in per_step], dtype=np.float64)
    n_in_mean = np.array([r.n_queries for r in per_step], dtype=np.int64)
    return Diff(a, b, steps, queries, values, status, means, n_in_mean)


__all__ = ["CUTOFF", "PATH_ORDER", "SCALES", "Diff", "Mover", "Step", "diff", "diff_tables", "path_measures", "plan"]
