"""Aggregation by explicit policy: the ``empty``, ``missing`` and ``run_only`` policies applied to
a kernel's per-query values, the summaries (each metric's own rule), the check that run and
judgments share a query, and the provenance every result carries. The plan
(:class:`rankflavor.engine.plan.Evaluation`) calls these for every backend, so every path scores and
summarises alike."""

from __future__ import annotations

import functools
import itertools
import os
from collections.abc import Iterable
from typing import Any

import numpy as np

from rankflavor._version import __version__
from rankflavor.align import Aligned, Counts
from rankflavor.engine.labels import counted, labelled
from rankflavor.engine.results import EMPTY, MISSING, OK, MeasureResult
from rankflavor.errors import EvaluationError
from rankflavor.flavor.flavor import Flavor
from rankflavor.io.tables import Qrels, Run
from rankflavor.metrics.measure import Measure


def judged_queries(aligned: Aligned, flavor: Flavor) -> np.ndarray:
    """Per query code: is it one of the judgments' queries under ``flavor``?

    A query with a judgment always is. A query the judgments name with no judgment
    (:attr:`Aligned.listed_unjudged`: ``{}`` in a dict, a ``_rank_eval`` request whose ratings
    are ``[]``, a Quepid query nobody rated) is one where missing queries are scored or refused
    (``missing=zero|error``): the tools that do so walk the judgments' query set, which for a
    dict is its keys, so the query is theirs with nothing relevant in it (ir_measures:
    ``providers/base.py`` ``Evaluator.iter_calc`` fills every qrels key the provider left out;
    ranx scores a ``Qrels`` key of no judgment 0 and refuses a run without it; Elasticsearch
    averages over every rated request; Spark over every row; Quepid over every query of the
    case). Where missing queries are skipped (``missing=skip``: trec_eval 9, pytrec_eval, BEIR)
    the tool walks the run and looks each query up in the judgment lines, so a query with no
    judgment is none of theirs (pytrec_eval 0.5 leaves a qrels ``{}`` query out of its output):
    in the run it is a run-only query (``run_only`` decides), else nothing is scored for it.
    Either way it stays counted (:attr:`Counts.queries_listed_unjudged`).
    """
    listed = aligned.listed_unjudged
    if listed is None or MISSING_POLICY[flavor.missing][0] == "skip":
        return aligned.in_qrels
    return aligned.in_qrels | listed


def scores_something(counts: Counts, flavor: Flavor) -> bool:
    """Does ``flavor`` score some query of the inputs ``counts`` describe, other than filling a
    missing one? A query in the run and the judgments; a query the judgments name with no
    judgment that the run holds, under ``missing=zero|error`` (:func:`judged_queries`); any run
    query without judgments under ``run_only=include`` (scored as a query with nothing relevant,
    as Quepid, Elasticsearch and Spark score a query nobody rated)."""
    listed_in_run = counts.queries_listed_unjudged_in_run
    return bool(counts.queries_evaluated
                or (MISSING_POLICY[flavor.missing][0] != "skip" and listed_in_run)
                or (RUN_ONLY_POLICY[flavor.run_only] == "include" and (counts.queries_only_in_run or listed_in_run)))


def require_common_queries(counts: Counts, run_ids: Iterable[Any], qrels_ids: Iterable[Any],
                           flavors: Iterable[Flavor] | None = None) -> None:
    """Raise when one of ``flavors`` (default: rankflavor's default flavor) scores no query but by
    filling missing ones (:func:`scores_something`): no query is both in the run and in the
    judgments (``counts``; a few of each side's ids name them in the message).

    Every mean would then be NaN, or 0 under ``missing=zero``: a number that only says the files
    do not match (another collection's qrels, ids written differently). trec_eval stops here too
    ("No queries with both results and relevance info"). A flavor that scores run-only queries
    (``run_only=include``) has something to score in any run: a case nobody rated is 0.0 per
    query in Quepid, a ``_rank_eval`` request without ratings 0.0 in Elasticsearch.
    """
    if all(scores_something(counts, f) for f in (flavors if flavors is not None else [Flavor()])):
        return

    def some(ids: Iterable[Any]) -> str:
        first = [repr(str(i)) for i in itertools.islice(ids, 3)]
        return ", ".join(first) + (", ..." if len(first) == 3 else "") if first else "none"

    listed = counts.queries_listed_unjudged
    named = f" (and {listed} named with no judgment)" if listed else ""
    raise EvaluationError(
        f"no query is both in the run and in the qrels, so nothing can be evaluated (run: "
        f"{counts.queries_in_run} query(ies), e.g. {some(run_ids)}; qrels: {counts.queries_in_qrels}, e.g. "
        f"{some(qrels_ids)}{named}); were the right files given, and do they write query ids alike?"
    )


#: What the ``empty`` knob does with a query that has nothing to find: (action, value), the
#: action ``value`` (the query's value becomes ``value``), ``skip`` (left out of the table and
#: the summary) or ``refuse`` (:class:`~rankflavor.errors.EvaluationError`). :mod:`rankflavor.torch`
#: reads it too (a skipped query is NaN in a tensor).
EMPTY_POLICY: dict[str, tuple[str, float]] = {
    "zero": ("value", 0.0),
    "one": ("value", 1.0),
    "nan": ("value", float("nan")),
    "skip": ("skip", float("nan")),
    "error": ("refuse", float("nan")),
}

#: What the ``singletons`` knob does with a query ranking a single document: ``keep`` it, or
#: ``refuse`` it (scikit-learn).
SINGLETONS_POLICY: dict[str, str] = {"keep": "keep", "error": "refuse"}

#: What the ``missing`` knob does with a judged query the run does not hold: (action, value) as
#: :data:`EMPTY_POLICY` (a text-valued measure's value is the empty text). Read here and by
#: :func:`rankflavor.engine.merge.merge_measure`, which decides it once for chunked and Spark evaluation.
MISSING_POLICY: dict[str, tuple[str, float]] = {
    "zero": ("value", 0.0),
    "skip": ("skip", float("nan")),
    "error": ("refuse", float("nan")),
}

#: What the ``run_only`` knob does with a run query the judgments do not hold: ``skip`` it
#: (trec_eval), ``include`` it (judged against nothing, so ``empty`` gives its value: trectools),
#: or ``refuse`` it.
RUN_ONLY_POLICY: dict[str, str] = {"skip": "skip", "include": "include", "error": "refuse"}

#: Per policy knob, what its ``error`` value refuses and the values that would not, for the message.
REFUSALS: dict[str, tuple[str, str]] = {
    "run_only": ("run query(ies) have no judgments", "run_only=skip (trec_eval) or run_only=include (trectools)"),
    "singletons": ("query(ies) rank a single document", "singletons=keep (scikit-learn refuses one-document lists)"),
    "empty": ("query(ies) have nothing relevant", "empty=zero|one|nan|skip"),
    "missing": ("qrels query(ies) are absent from the run", "missing=zero (trec_eval -c) or missing=skip"),
}


def aggregate(measure: Measure, values: np.ndarray, empty: np.ndarray, aligned: Aligned) -> MeasureResult:
    """Apply the ``empty``, ``missing`` and ``run_only`` policies and summarise (mean, or sum for counts)."""
    f = measure.flavor
    spec = measure.spec
    judged = judged_queries(aligned, f)
    evaluated = aligned.in_run & judged
    run_only = aligned.in_run & ~judged
    if run_only.any() and RUN_ONLY_POLICY[f.run_only] != "skip":
        if RUN_ONLY_POLICY[f.run_only] == "refuse":
            raise _policy_error(aligned, run_only, measure, "run_only")
        # include: judged against nothing, so ``empty`` below gives the value (trectools).
        evaluated = evaluated | run_only
    if SINGLETONS_POLICY[f.singletons] == "refuse":
        single = evaluated & (np.bincount(aligned.run_q, minlength=aligned.n_queries) == 1)
        if single.any():
            raise _policy_error(aligned, single, measure, "singletons")
    missing = judged & ~aligned.in_run
    text_valued = spec.summary == "none"  # per-query only, may be text (trec_eval relstring)
    vals = values.astype(object if text_valued else np.float64, copy=True)
    status = _all_ok(aligned.n_queries).copy()
    rows = evaluated.copy()
    skipped_empty = skipped_missing = 0
    if spec.uses_empty:
        e = empty & evaluated
        status[e] = EMPTY
        if e.any():
            action, value = EMPTY_POLICY[f.empty]
            if action == "refuse":
                raise _policy_error(aligned, e, measure, "empty")
            if action == "value":
                vals[e] = value
            else:  # skip
                rows &= ~e
                skipped_empty = int(e.sum())
    if missing.any():
        action, value = MISSING_POLICY[f.missing]
        if action == "refuse":
            raise _policy_error(aligned, missing, measure, "missing")
        if action == "value":
            vals[missing] = "" if text_valued else value
            status[missing] = MISSING
            rows |= missing
        else:  # skip
            skipped_missing = int(missing.sum())
    summary, n = summarize(measure, vals[rows], status[rows], aligned.qrels_grade)
    labels = counted(aligned, rows)
    measure = labelled(measure, labels, aligned.qrels_source)
    return MeasureResult(
        measure=measure,
        queries=aligned.query_ids[rows],
        values=vals[rows],
        status=status[rows],
        summary=summary,
        n_queries=n,
        skipped_empty=skipped_empty,
        skipped_missing=skipped_missing,
        labels=labels,
    )


@functools.lru_cache(maxsize=8)
def _all_ok(n: int) -> np.ndarray:
    """``n`` statuses ``OK``, read-only: a copy of it costs far less than filling an object array
    anew (``bench/RESULTS.md``, training-time metrics)."""
    status = np.full(n, OK, dtype=object)
    status.flags.writeable = False
    return status


def _policy_error(aligned: Aligned, queries: np.ndarray, measure: Measure, knob: str) -> EvaluationError:
    """The error a policy knob set to ``error`` raises, naming the first five ``queries``."""
    return policy_error([str(q) for q in aligned.query_ids[queries][:5]], int(queries.sum()), measure, knob)


def policy_error(names: list[str], n: int, measure: Measure, knob: str) -> EvaluationError:
    """The error the policy ``knob`` (of :data:`REFUSALS`) set to ``error`` raises on ``n`` queries,
    named by the first of ``names`` (five at most are shown)."""
    what, choices = REFUSALS[knob]
    shown = ", ".join(names[:5])
    return EvaluationError(
        f"{n} {what} ({shown}{'...' if n > 5 else ''}) and {measure.name} says {knob}=error; choose {choices}"
    )


def summarize(measure: Measure, values: np.ndarray, status: np.ndarray, qrels_grade: np.ndarray) -> tuple[float, int]:
    """The summary of a measure over the rows of its per-query table, and how many rows entered it.

    ``values`` are the per-query values in query order, ``status`` their :mod:`~rankflavor.engine.results`
    status (``missing`` rows were scored by the missing policy), ``qrels_grade`` the grades of the
    usable judgments. The metric's spec summarises (:meth:`MetricSpec.summarize
    <rankflavor.metrics.registry.MetricSpec.summarize>`: mean, geometric mean, sum or its own
    rule). Shared by one-shot and chunked evaluation, so both summarise identically.

    A NaN a policy wrote (``empty=nan``) is left out of the mean. A NaN the measure computed (an
    undefined value, such as trec_eval's interpolated precision of a query that ``-J`` left with
    nothing retrieved) makes the mean NaN, as trec_eval's sum and the mean of pytrec_eval's or
    ir_measures' per-query values are: a mean that silently skipped it would be a number no
    tool prints.
    """
    return measure.spec.summarize(measure, values, status == OK, status == MISSING, qrels_grade)


def provenance(qrels: Qrels, run: Run) -> dict[str, Any]:
    def describe(path: str) -> dict[str, Any]:
        info: dict[str, Any] = {"source": path}
        if os.path.isfile(path):
            info["bytes"] = os.path.getsize(path)
        return info

    labels: dict[str, Any] = {}
    if qrels.label_source is not None or qrels.label_rule is not None:
        labels = {"labels": {"choice": qrels.label_rule or "any", "dropped": dict(qrels.labels_dropped)}}
    return {
        "rankflavor": __version__,
        "qrels": {**describe(qrels.source), **(qrels.origin or {}), **labels},
        "run": {**describe(run.source), "tag": run.tag},
    }
