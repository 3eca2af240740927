"""Flavor forensics: which flavor produced this number?

:func:`identify` searches the flavor space (every preset, and every combination of the knobs that
move the score at the stated cutoff and the common ones: :mod:`rankflavor.analysis.identify.space`) for
the flavors that reproduce a reported mean, or another tool's per-query values, at their printed
precision. One read, one alignment, one sort per ordering (:mod:`rankflavor.analysis.identify.search`).

Matching rule: a number printed with d decimals is reproduced when the flavor's value is within
half a unit of its last digit, 0.5·10^-d (0.5058: |mean − 0.5058| ≤ 0.00005), and never required
closer than 1e-9 (tools summing in another order differ in the last bits of a float64).

Ranking of the flavors that reproduce the numbers (:func:`_rank`): with per-query output, first
those that score no query the output leaves out (a tool prints a row for each query it scores:
ir_measures lists a judged query the run misses, with 0; pytrec_eval leaves it out), then a
preset the measure text names (``ranx:ndcg@10``), then the presets whose tool writes the
output's form — the file's form names the tool that writes it (trec_eval ``-q`` text: trec_eval;
pytrec_eval's nested JSON ``{query: {measure: value}}``: pytrec_eval;
:data:`~rankflavor.analysis.identify.perquery.WRITERS`) — then the presets whose tool reports the metric
(one of its default metrics), then the other presets, then fewest knobs changed. The first two are what the numbers say; the form only orders flavors whose numbers agree
everywhere (trec_eval and pytrec_eval run the same C code).

Examples
--------
>>> qrels = {"q1": {"a": 2, "b": 1}, "q2": {"c": 1}}
>>> run = {"q1": {"b": 0.9, "a": 0.5}, "q2": {"x": 0.9, "c": 0.9}}
>>> found = identify(qrels, run, value=0.9299, measure="ndcg@2", ks=())
>>> found.best.presets[:2], round(found.best.mean, 4)
(('trectools',), 0.9299)
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

from rankflavor.analysis.identify.perquery import Reported, decimals_of, read_per_query
from rankflavor.analysis.identify.result import (
    KNOB_EVIDENCE,
    Candidate,
    CandidateGroup,
    Identification,
    Separation,
    Unexplained,
)
from rankflavor.analysis.identify.search import evaluate_space, universe_index
from rankflavor.analysis.identify.space import IDENTIFY_GRID, Entry, flavor_space
from rankflavor.analysis.spread.api import one_measure
from rankflavor.base.progress import Progress
from rankflavor.engine.results import MeasureResult
from rankflavor.errors import FlavorError, UsageError
from rankflavor.io.inputs import as_qrels, as_run
from rankflavor.metrics.measure import Measure

#: No reported number is required closer than this (float64 noise between tools).
FLOOR = 1e-9
#: Per-query precision the separations are stated at without per-query output (trec_eval's 4 decimals).
SHOWN = 0.5e-4
#: The per-query forms that name their writer, in words (:data:`~rankflavor.analysis.identify.perquery.WRITERS`).
_FORMS = {"trec_eval": "trec_eval -q text", "nested_json": "pytrec_eval's {query: {measure: value}}"}


def tolerance_of(decimals: int) -> float:
    """Half a unit of the last printed digit, at least :data:`FLOOR`."""
    return max(0.5 * 10.0 ** -decimals, FLOOR)


def _stated(value: float | str) -> tuple[float, int]:
    text = value if isinstance(value, str) else repr(float(value))
    try:
        number = float(text)
    except ValueError:
        raise UsageError(f"--value expects a number, received {value!r}") from None
    if not math.isfinite(number):
        raise UsageError(f"--value expects a finite number, received {value!r}")
    return number, decimals_of(text)


def _resolve(measure: str | Measure | None, reported: Reported | None) -> tuple[Measure, str | None]:
    """The stated measure and the preset its text names (``ranx:ndcg@10`` -> ranx), if any."""
    from rankflavor.presets import PRESETS

    if measure is None:
        name = reported.measure_name if reported else None
        if not name:
            return one_measure("ndcg@10"), None
        for text in _spellings(name):
            try:
                found = one_measure(text)
            except (FlavorError, UsageError):
                continue
            # which tool printed it is the file's form's to say (trec_eval and pytrec_eval print
            # the same names): see _rank
            return found, None
        raise UsageError(f"cannot tell which measure {name!r} (in {reported.source if reported else ''}) is: "
                         f"name it with -m, as rankflavor names it (-m ndcg@10) or as a preset does "
                         f"(-m trec_eval:ndcg_cut.10)")
    hint = None
    if isinstance(measure, str) and ":" in measure:
        prefix = measure.split(":", 1)[0].strip().lower().replace("-", "_")
        hint = prefix if prefix in PRESETS else None
    return _given(measure), hint


def _given(measure: str | Measure) -> Measure:
    """The measure ``-m`` names: rankflavor's or a preset's name, or the name as a tool's per-query
    output prints it (trec_eval's ``ndcg_cut_10`` for its argument ``ndcg_cut.10``)."""
    try:
        return one_measure(measure)
    except (FlavorError, UsageError) as exc:
        if not isinstance(measure, str):
            raise
        for text in _spellings(measure)[:2]:
            try:
                return one_measure(text)
            except (FlavorError, UsageError):
                continue
        raise type(exc)(f"{exc} (-m takes rankflavor's names, ndcg@10; a preset's, trec_eval:ndcg_cut.10; or the "
                        "name as the per-query file prints it, ndcg_cut_10)") from exc


def _spellings(name: str) -> list[str]:
    """How a measure name printed by a tool may be read: trec_eval prints ``ndcg_cut_10`` for
    its argument ``ndcg_cut.10``; otherwise the name itself (a canonical or dialect name)."""
    argument = re.sub(r"_(\d+(?:\.\d+)?)$", r".\1", name)
    return [f"trec_eval:{argument}", f"trec_eval:{name}", name]


def _same_measure(base: Measure, reported: Reported) -> None:
    """Refuse per-query output of another measure than the stated one (its name says so)."""
    assert reported.measure_name is not None
    for text in _spellings(reported.measure_name):
        try:
            theirs = one_measure(text)
        except (FlavorError, UsageError):
            continue
        if (theirs.metric, theirs.k) != (base.metric, base.k):
            raise UsageError(f"{reported.source} holds {reported.measure_name} ({theirs.name}), not {base.name}: "
                             "give the matching -m, or leave -m out to use the file's")
        return


def _picker(measure: str | Measure | None) -> Any:
    """Choose, among the measure names of a file of several, the one that is ``measure``."""

    def pick(names: list[str]) -> str:
        if measure is None:
            more = ", ..." if len(names) > 6 else ""
            raise UsageError(f"the per-query output holds {len(names)} measures ({', '.join(names[:6])}{more}): name "
                             f"the one to match with -m, as the file prints it (-m {names[0]}) or as rankflavor "
                             "names it (-m ndcg@10)")
        want = _given(measure)
        hits = []
        for name in names:
            for text in _spellings(name):
                try:
                    m = one_measure(text)
                except (FlavorError, UsageError):
                    continue
                if (m.metric, m.k) == (want.metric, want.k):
                    hits.append(name)
                break
        if len(hits) != 1:
            raise UsageError(f"the per-query output holds {len(names)} measures; {len(hits)} of them are "
                             f"{want.name} ({', '.join(hits) or 'none'})")
        return hits[0]

    return pick


def identify(
    qrels: Any,
    run: Any,
    value: float | str | None = None,
    measure: str | Measure | None = "ndcg@10",
    per_query: Any = None,
    *,
    tolerance: float | None = None,
    grid: Mapping[str, Iterable[str]] | None = None,
    ks: Iterable[int | None] | None = None,
    presets: bool | Iterable[str] = True,
    progress: Progress | None = None,
) -> Identification:
    """Find the flavors that reproduce a reported number on this qrels and run.

    Parameters
    ----------
    qrels, run : paths, dicts or DataFrames (read once).
    value : float or str, optional
        The reported mean; its printed decimals set the tolerance (give text, ``"0.5000"``, to
        keep trailing zeros). Without it, the ``all`` row of ``per_query`` is used if present.
    measure : str or Measure, default ``"ndcg@10"``
        The metric and cutoff to search around (canonical, dialect or ``PRESET:NAME``; a preset
        named so is listed first among flavors the data cannot tell apart from it). None: read
        it from the per-query output's measure name (``ndcg_cut_10``).
    per_query : path or ``{query: value}``, optional
        Another tool's per-query output (trec_eval ``-q`` text, CSV ``query,value``, JSON).
    tolerance : float, optional
        Replaces the printed-precision rule for every number.
    grid : mapping knob -> values, optional
        Replaces :data:`~rankflavor.analysis.identify.space.IDENTIFY_GRID`.
    ks : cutoffs, optional
        Cutoffs tried beside the stated one (default 5, 10, 20, 100, 1000 and none).
    presets : bool or preset names, default True
        The presets whose flavors are tried.
    progress : rankflavor.base.progress.Progress, optional
        Told of the flavors evaluated (nothing is shown when None).

    Returns
    -------
    Identification
        Candidate groups (best first), separations, unexplained queries.
    """
    reported = read_per_query(per_query, _picker(measure)) if per_query is not None else None
    base, hint = _resolve(measure, reported)
    if reported is not None and reported.measure_name and measure is not None:
        _same_measure(base, reported)
    mean_decimals = None
    if value is not None:
        target, mean_decimals = _stated(value)
    elif reported is not None and reported.mean is not None:
        target, mean_decimals = reported.mean, reported.mean_decimals
    elif reported is None:
        raise UsageError("identify needs the reported value (--value) or per-query output (--per-query)")
    else:
        target = math.nan
    has_mean = mean_decimals is not None
    tol = (tolerance if tolerance is not None else tolerance_of(mean_decimals or 0)) if has_mean else None
    entries, notes = flavor_space(base, grid, ks, presets)
    measures = [e.measure for e in entries]

    q_table, r_table = as_qrels(qrels), as_run(run)
    kept: dict[int, tuple[float, np.ndarray]] = {}
    unlisted: dict[int, int] = {}  # per kept flavor: queries it scores that the output leaves out
    writers = reported.writers if reported is not None else ()
    state = _Forensics(reported, tolerance, functools.cache(lambda j: _rank(entries[j], j, hint, writers)))

    seen: list[Any] = [None, None]  # the last result and what it gave: flavors sharing a result share it

    def visit(j: int, res: MeasureResult, universe: np.ndarray) -> None:
        if seen[0] is not res:
            full = state.full(res, universe)
            mean_ok = not has_mean or abs(res.summary - target) <= (tol or 0) + 1e-12
            every, mine = state.check(j, full, res.summary) if reported is not None else (True, full)
            extra = state.unlisted_scored(full) if reported is not None and every else 0
            seen[:] = [res, (mean_ok and every, mine, extra)]
        elif reported is not None:
            state.again(j, res.summary)
        ok, vector, extra = seen[1]
        if ok:
            kept[j] = (res.summary, vector)  # per-query output: grouped on the reported queries only
            unlisted[j] = extra

    errors = evaluate_space(q_table, r_table, measures, visit, progress)
    groups, firsts = _groups(entries, kept, lambda j: (unlisted[j], *_rank(entries[j], j, hint, writers)),
                             hint, writers)
    rule = _rule(tol, mean_decimals, reported, tolerance)
    if reported is not None and writers and groups:
        notes.append(f"the per-query output's form ({_FORMS[reported.form]}) names {' or '.join(writers)}: "
                     "listed first among flavors whose numbers agree")
    if reported is not None and not groups and state.all_ok:
        notes.append(f"{state.all_ok} flavor(s) reproduce every query but not the mean {target}")
    names = np.array(reported.queries, dtype=object) if reported is not None else state.universe
    separations = _separations([kept[j][1] for j in firsts], names, reported is not None)
    nearest = unexplained = None
    if reported is not None and not groups and state.best is not None:
        j = state.best
        e = entries[j]
        nearest = Candidate(e.measure, e.presets, e.changed, state.best_mean)
        unexplained = state.unexplained(measures)
    return Identification(
        base, target if has_mean else None, tol, reported.source if reported else None, rule, len(entries),
        len(errors), tuple(groups), tuple(separations), tuple(unexplained or ()), nearest,
        state.best_count, len(reported.queries) if reported else 0, tuple(notes))


def _rule(tol: float | None, decimals: int | None, reported: Reported | None, override: float | None) -> str:
    parts = []
    if tol is not None:
        parts.append(f"mean within {tol:g} of the value" + ("" if override is not None else
                                                            f" (half a unit of its last digit: {decimals} decimals)"))
    if reported is not None:
        parts.append(f"every per-query value within {override:g}" if override is not None else
                     "every per-query value within half a unit of its last printed digit (at least 1e-9)")
    return "; ".join(parts)


class _Forensics:
    """Per-query matching state over the whole space: the flavor explaining the most queries and,
    per query, the closest value any flavor gives."""

    def __init__(self, reported: Reported | None, tolerance: float | None,
                 rank: Callable[[int], tuple[int, int, int]]) -> None:
        self.reported = reported
        self.rank = rank
        self.best: int | None = None
        self.best_count = -1
        self.best_mean = math.nan
        self.best_full: np.ndarray | None = None
        self.all_ok = 0
        self.last_count = -1
        self.universe: np.ndarray | None = None
        if reported is not None:
            n = len(reported.queries)
            self.tol = (np.full(n, tolerance) if tolerance is not None
                        else np.maximum(0.5 * 10.0 ** -reported.decimals.astype(np.float64), FLOOR)) + 1e-12
            self.near_diff = np.full(n, np.inf)
            self.near_value = np.full(n, np.nan)
            self.near_flavor = np.full(n, -1, dtype=np.int64)

    def full(self, res: MeasureResult, universe: np.ndarray) -> np.ndarray:
        """The result's values over every query of the alignment (NaN where it has no row)."""
        if self.universe is not universe:
            self.universe = universe
            if self.reported is not None:
                ids = np.array(self.reported.queries, dtype=object)
                at = np.minimum(np.searchsorted(universe, ids), len(universe) - 1)
                self.present = universe[at] == ids
                self.at = at
                self.unlisted = np.ones(len(universe), dtype=bool)
                self.unlisted[at[self.present]] = False
        out = np.full(len(universe), np.nan)
        out[universe_index(universe, res.queries)] = res.values.astype(np.float64)
        return out

    def check(self, j: int, full: np.ndarray, mean: float) -> tuple[bool, np.ndarray]:
        """Whether the flavor explains every reported query, and its values of them; updates the
        nearest values."""
        assert self.reported is not None
        mine = np.where(self.present, full[self.at], np.nan)
        diff = np.abs(mine - self.reported.values)
        diff = np.where(np.isnan(diff), np.inf, diff)
        ok = diff <= self.tol
        closer = diff < self.near_diff
        self.near_diff[closer] = diff[closer]
        self.near_value[closer] = mine[closer]
        self.near_flavor[closer] = j
        count = int(ok.sum())
        if count > self.best_count or (count == self.best_count and self.best is not None
                                       and self.rank(j) < self.rank(self.best)):
            self.best, self.best_count, self.best_full, self.best_mean = j, count, mine, mean
        every = count == len(ok)
        self.all_ok += every
        self.last_count = count
        return every, mine

    def unlisted_scored(self, full: np.ndarray) -> int:
        """How many queries the flavor scores (``full``: over the alignment) that the output does not list."""
        return int((self.unlisted & ~np.isnan(full)).sum())

    def again(self, j: int, mean: float) -> None:
        """Flavor ``j`` gave the same values as the flavor checked last."""
        if self.last_count == self.best_count and self.best is not None and self.rank(j) < self.rank(self.best):
            self.best, self.best_mean = j, mean
        self.all_ok += self.last_count == len(self.tol)

    def unexplained(self, measures: list[Measure]) -> list[Unexplained]:
        """The queries the nearest flavor misses, each with the closest value any flavor gives."""
        r = self.reported
        assert r is not None and self.best_full is not None
        diff = np.abs(self.best_full - r.values)
        miss = ~(np.where(np.isnan(diff), np.inf, diff) <= self.tol)
        out = []
        for i in np.flatnonzero(miss):
            near = None if self.near_flavor[i] < 0 or np.isnan(self.near_value[i]) else float(self.near_value[i])
            flavor = str(measures[self.near_flavor[i]]) if near is not None else None
            best = None if np.isnan(self.best_full[i]) else float(self.best_full[i])
            out.append(Unexplained(r.queries[i], float(r.values[i]), int(r.lines[i]), near, flavor, best,
                                   bool(self.near_diff[i] <= self.tol[i])))
        return out


def _rank(e: Entry, j: int, hint: str | None, writers: tuple[str, ...] = ()) -> tuple[int, int, int]:
    """Presets first: one the measure text named, then those whose tool writes the per-query
    output's form (``writers``), then the others; then fewest knobs changed."""
    if hint is not None and hint in e.presets:
        first = 0
    elif set(writers) & set(e.presets):
        first = 1 + min(writers.index(p) for p in e.presets if p in writers)  # trec_eval before trec_dl
    elif any(_reports(p, e.measure.metric) for p in e.presets):
        first = 1 + len(writers)
    else:  # msmarco's ms_marco_eval.py prints MRR only: its NDCG flavor is no tool's output
        first = 2 + len(writers) + (0 if e.presets else 1)
    return first, e.distance, j


@functools.cache
def _reports(preset: str, metric: str) -> bool:
    """Whether the preset's tool reports ``metric``: one of its default metrics is it (a preset
    stating no default metrics is taken to report any)."""
    from rankflavor.presets import PRESETS, resolve_measures

    names = PRESETS[preset].default_metrics
    found: set[str] = set()
    for name in names:
        try:
            found.update(m.metric for m in resolve_measures([name], preset, {})[0])
        except (FlavorError, UsageError):
            continue
    return not names or metric in found


def _lead(e: Entry, hint: str | None, writers: tuple[str, ...]) -> tuple[str, ...]:
    """The entry's presets, the one the measure text named first, then those writing the form."""
    return tuple(sorted(e.presets, key=lambda p: (p != hint, writers.index(p) if p in writers else len(writers))))


def _groups(entries: list[Entry], kept: dict[int, tuple[float, np.ndarray]],
            rank: Callable[[int], tuple[int, ...]], hint: str | None = None,
            writers: tuple[str, ...] = ()) -> tuple[list[CandidateGroup], list[int]]:
    """Candidates grouped by identical per-query values, best first by ``rank``; and each group's first flavor."""
    order = sorted(kept, key=rank)
    buckets: dict[bytes, list[int]] = {}
    for j in order:
        key = np.nan_to_num(np.round(kept[j][1], 10), nan=-7.0).tobytes()
        buckets.setdefault(key, []).append(j)
    groups = []
    for members in buckets.values():
        cands = tuple(Candidate(entries[j].measure, _lead(entries[j], hint, writers), entries[j].changed, kept[j][0])
                      for j in members)
        seen: dict[str, list[str]] = {}
        for c in cands:
            knobs = {"k": str(c.measure.k), **{n: str(v) for n, v in c.measure.knobs.items()}}
            for n, v in knobs.items():
                values = seen.setdefault(n, [])
                if v not in values:
                    values.append(v)
        indistinct = tuple((n, tuple(v)) for n, v in seen.items() if len(v) > 1)
        evidence = tuple(f"{n}: {KNOB_EVIDENCE[n]}" for n, _ in indistinct if n in KNOB_EVIDENCE)
        groups.append(CandidateGroup(cands, indistinct, evidence))
    return groups, [members[0] for members in buckets.values()]


def _separations(vectors: list[np.ndarray], universe: np.ndarray | None, per_query: bool,
                 limit: int = 10) -> list[Separation]:
    """Queries on which each later group (up to ``limit``) differs from the first: beyond
    trec_eval's 4 decimals, or, when per-query output was given (every group reproduces it),
    beyond float noise, so that only more printed decimals would separate them. A query one
    group scores and the other leaves out counts too."""
    if len(vectors) < 2 or universe is None:
        return []
    threshold = FLOOR if per_query else SHOWN
    first = vectors[0]
    out = []
    for g, other in enumerate(vectors[1:limit + 1], 1):
        both = ~np.isnan(first) & ~np.isnan(other)
        apart = (both & (np.abs(np.where(both, first - other, 0.0)) > threshold)) | (np.isnan(first) != np.isnan(other))
        out.append(Separation(0, g, tuple(str(q) for q in universe[apart])))
    return out


__all__ = ["FLOOR", "IDENTIFY_GRID", "Candidate", "CandidateGroup", "Identification", "Separation", "Unexplained",
           "identify", "read_per_query", "tolerance_of"]
