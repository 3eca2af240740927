"""The engine under :func:`rankflavor.evaluate`: align -> order -> kernels -> aggregate by policy
-> Results, on tables already read. Chunked, spread, array and attribution evaluations run the
same functions, so every path scores and summarises alike."""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from . import __version__
from .align import Aligned, Counts, align
from .errors import EvaluationError
from .flavor import Flavor
from .measure import Measure
from .order import Ranked, ranked_for
from .pages import small_pages
from .results import EMPTY, MISSING, OK, MeasureResult, Results
from .tables import Qrels, Run


@small_pages()
def evaluate_tables(
    qrels: Qrels, run: Run, measures: Sequence[Measure], extras: tuple[str, ...] = (), whole: bool = True
) -> Results:
    """Evaluate already-read tables; every measure sharing ordering knobs shares one sort.

    ``whole``: the tables are the whole input, so a run sharing no query with the judgments is an
    error (:func:`require_common_queries`); False for a chunk of a run (chunked evaluation checks
    the whole once merged).
    """
    aligned_by_policy: dict[str, Aligned] = {}
    rankings: dict[str, dict[tuple[str, ...], Ranked]] = {}
    out: list[MeasureResult] = []
    # Pseudo-measures alone (num_q, runid): an alignment under the default policy still gives
    # the counts they are read from.
    todo: Sequence[Measure | None] = measures or [None]
    for m in todo:
        policy = m.flavor.duplicates if m is not None else Flavor().duplicates
        if policy not in aligned_by_policy:
            aligned = align(qrels, run, duplicates=policy, chunk=not whole)
            if whole:
                require_common_queries(aligned.counts, aligned.query_ids[aligned.in_run],
                                       aligned.query_ids[aligned.in_qrels])
            aligned_by_policy[policy] = aligned
            rankings[policy] = {}
        aligned = aligned_by_policy[policy]
        if m is None:
            break
        values, empty = m.spec.compute(ranked_for(aligned, m, rankings[policy]), m)
        out.append(aggregate(m, values, empty, aligned))
    first = next(iter(aligned_by_policy.values()))
    return Results(out, first.counts, _provenance(qrels, run), extras)


def require_common_queries(counts: Counts, run_ids: Iterable[Any], qrels_ids: Iterable[Any]) -> None:
    """Raise when no query is both in the run and in the judgments (``counts``; a few of each
    side's ids name them in the message).

    Every mean would then be NaN, or 0 under ``missing=zero``: a number that only says the files
    do not match (another collection's qrels, ids written differently). trec_eval stops here too
    ("No queries with both results and relevance info").
    """
    if counts.queries_evaluated:
        return

    def some(ids: Iterable[Any]) -> str:
        first = [repr(str(i)) for i in itertools.islice(ids, 3)]
        return ", ".join(first) + (", ..." if len(first) == 3 else "") if first else "none"

    raise EvaluationError(
        f"no query is both in the run and in the qrels, so nothing can be evaluated (run: "
        f"{counts.queries_in_run} query(ies), e.g. {some(run_ids)}; qrels: {counts.queries_in_qrels}, e.g. "
        f"{some(qrels_ids)}); were the right files given, and do they write query ids alike?"
    )


def aggregate(measure: Measure, values: np.ndarray, empty: np.ndarray, aligned: Aligned) -> MeasureResult:
    """Apply the ``empty``, ``missing`` and ``run_only`` policies and summarise (mean, or sum for counts)."""
    f = measure.flavor
    spec = measure.spec
    evaluated = aligned.evaluated
    run_only = aligned.in_run & ~aligned.in_qrels
    if run_only.any() and f.run_only != "skip":
        if f.run_only == "error":
            raise _policy_error(aligned, run_only, "run query(ies) have no judgments", measure, "run_only",
                                "run_only=skip (trec_eval) or run_only=include (trectools)")
        # include: judged against nothing, so ``empty`` below gives the value (trectools).
        evaluated = evaluated | run_only
    missing = aligned.in_qrels & ~aligned.in_run
    text_valued = spec.summary == "none"  # per-query only, may be text (trec_eval relstring)
    vals = values.astype(object if text_valued else np.float64, copy=True)
    status = np.full(aligned.n_queries, OK, dtype=object)
    rows = evaluated.copy()
    skipped_empty = skipped_missing = 0
    if spec.uses_empty:
        e = empty & evaluated
        status[e] = EMPTY
        if e.any():
            if f.empty == "error":
                raise _policy_error(aligned, e, "query(ies) have nothing relevant", measure, "empty",
                                    "empty=zero|one|nan|skip")
            if f.empty == "one":
                vals[e] = 1.0
            elif f.empty == "zero":
                vals[e] = 0.0
            elif f.empty == "nan":
                vals[e] = np.nan
            else:  # skip
                rows &= ~e
                skipped_empty = int(e.sum())
    if missing.any():
        if f.missing == "error":
            raise _policy_error(aligned, missing, "qrels query(ies) are absent from the run", measure, "missing",
                                "missing=zero (trec_eval -c) or missing=skip")
        if f.missing == "zero":
            vals[missing] = "" if text_valued else 0.0
            status[missing] = MISSING
            rows |= missing
        else:
            skipped_missing = int(missing.sum())
    summary, n = summarize(measure, vals[rows], status[rows], aligned.qrels_grade)
    return MeasureResult(
        measure=measure,
        queries=aligned.query_ids[rows],
        values=vals[rows],
        status=status[rows],
        summary=summary,
        n_queries=n,
        skipped_empty=skipped_empty,
        skipped_missing=skipped_missing,
    )


def _policy_error(aligned: Aligned, queries: np.ndarray, what: str, measure: Measure, knob: str,
                  choices: str) -> EvaluationError:
    """The error a policy knob set to ``error`` raises, naming the first five ``queries``."""
    n = int(queries.sum())
    names = ", ".join(map(str, aligned.query_ids[queries][:5]))
    return EvaluationError(
        f"{n} {what} ({names}{'...' if n > 5 else ''}) and {measure.name} says {knob}=error; choose {choices}"
    )


def summarize(measure: Measure, values: np.ndarray, status: np.ndarray, qrels_grade: np.ndarray) -> tuple[float, int]:
    """The summary of a measure over the rows of its per-query table, and how many rows entered it.

    ``values`` are the per-query values in query order, ``status`` their :mod:`~rankflavor.results`
    status (``missing`` rows were scored by the missing policy). Mean, geometric mean or sum by
    the metric's ``summary``. Shared by one-shot and chunked evaluation, so both summarise
    identically.

    A NaN a policy wrote (``empty=nan``) is left out of the mean. A NaN the measure computed (an
    undefined value, such as trec_eval's interpolated precision of a query that ``-J`` left with
    nothing retrieved) makes the mean NaN, as trec_eval's sum and the mean of pytrec_eval's or
    ir_measures' per-query values are: a mean that silently skipped it would be a number no
    tool prints.
    """
    spec = measure.spec
    if spec.summary == "none":  # per-query only, may be text (trec_eval relstring)
        return float("nan"), len(values)
    missing = status == MISSING
    if spec.summary == "geometric":
        return _geometric_mean(values, status == OK, missing)
    if spec.summary == "sum":
        if measure.metric == "num_rel" and measure.flavor.total == "qrels_positive":
            grades = np.trunc(qrels_grade) if measure.flavor.fractional == "truncate" else qrels_grade
            return float((grades > 0).sum()), len(values)
        return float(np.nansum(values)), len(values)
    kept = values[~(np.isnan(values) & (status != OK))]
    n = len(kept)
    # Sequential sum in query order (np.cumsum, unlike np.sum, is not pairwise), as trec_eval
    # accumulates, then one division.
    return (float(np.cumsum(kept)[-1] / n) if n else float("nan")), n


def _geometric_mean(vals: np.ndarray, computed: np.ndarray, missing_rows: np.ndarray) -> tuple[float, int]:
    """exp(mean(log(max(v, floor)))) over the rows, as trec_eval ``meas_avg.c`` computes it.

    trec_eval sums the logs of evaluated topics in topic order, then (``-c``) adds
    ``n_missing * log(floor)`` once, divides and exponentiates; the same order is kept here.
    ``computed``: rows whose value the measure computed; a NaN among them counts as the floor
    (trec_eval's ``MAX(v, floor)`` is false for NaN), a NaN a policy wrote is left out.
    """
    from .metrics.registry import GEO_MEAN_FLOOR

    evaluated = vals[~missing_rows & (computed | ~np.isnan(vals))]
    n_missing = int(missing_rows.sum())
    n = len(evaluated) + n_missing
    if n == 0:
        return float("nan"), 0
    logs = np.log(np.fmax(evaluated, GEO_MEAN_FLOOR))  # fmax: a NaN gives the floor
    total = float(np.cumsum(logs)[-1]) if len(logs) else 0.0
    if n_missing:
        total += n_missing * math.log(GEO_MEAN_FLOOR)
    return math.exp(total / n), n


def _provenance(qrels: Qrels, run: Run) -> dict[str, Any]:
    def describe(path: str) -> dict[str, Any]:
        info: dict[str, Any] = {"source": path}
        if os.path.isfile(path):
            info["bytes"] = os.path.getsize(path)
        return info

    return {
        "rankflavor": __version__,
        "qrels": describe(qrels.source),
        "run": {**describe(run.source), "tag": run.tag},
    }
