"""One evaluation plan: tables -> an alignment per duplicates policy -> one ranker per alignment
-> kernels -> :func:`~rankflavor.engine.aggregate.aggregate` -> results.

:class:`Evaluation` is what :func:`rankflavor.evaluate` (through
:func:`~rankflavor.engine.plan.evaluate_tables`), :func:`rankflavor.spread`, chunked evaluation (per
chunk) and flavor attribution run: every measure sharing a duplicates policy shares one
alignment, and every measure sharing an :class:`~rankflavor.order.Ordering` (and what its
kernel reads) shares one ranking, so many metrics and cutoffs cost one sort.

Examples
--------
>>> from rankflavor.io.inputs import as_qrels, as_run
>>> from rankflavor.metrics.measure import parse_measure
>>> plan = Evaluation(as_qrels({"q1": {"a": 2, "c": 1}}), as_run({"q1": {"a": 0.2, "b": 0.9, "c": 0.5}}))
>>> res = plan.results([parse_measure("ndcg@3"), parse_measure("P@2")])
>>> [round(m.mean, 4) for m in res]
[0.6199, 0.5]
>>> plan.ranker("error") is plan.ranker("error")  # one ranker per alignment
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rankflavor.align import Aligned, align, refuse_kept_duplicates
from rankflavor.base.progress import Progress, task
from rankflavor.engine.aggregate import aggregate, provenance, require_common_queries
from rankflavor.engine.results import MeasureResult, Results
from rankflavor.errors import RankflavorError, UsageError
from rankflavor.flavor.flavor import Flavor
from rankflavor.io.tables import Qrels, Run
from rankflavor.metrics.measure import Measure
from rankflavor.order import Ordering, Ranked, Ranker, order_key


def check_duplicates(ranked: Ranked) -> None:
    """Raise the ``duplicates=error`` error when two rows a ranking keeps (after its depth cut,
    in scored queries: :attr:`Ranked.kept_rows`) are one (query, document) pair."""
    if ranked.kept_rows is not None:
        refuse_kept_duplicates(ranked.aligned, ranked.kept_rows, ranked.ordering.depth)


def check_raters(qrels: Qrels, measure: Measure) -> None:
    """Refuse a measure whose ``raters`` knob names a rule the judgments were not aggregated by:
    the knob states what the judgments are, so it is never silently ignored."""
    rule = str(measure.flavor.raters)
    if rule == "none" or rule == qrels.raters:
        return
    if qrels.raters is None:
        raise UsageError(
            f"{measure.name} sets raters={rule} but the judgments {qrels.source} are not ratings: give a ratings "
            f"file to aggregate (eval --raters {rule}, evaluate(..., raters={rule!r})), or drop the knob"
        )
    raise UsageError(f"{measure.name} sets raters={rule} but the judgments {qrels.source} were aggregated by "
                     f"raters={qrels.raters}")


def run_ordered(run: Run, measure: Measure) -> Measure:
    """``measure`` as it reads ``run``: with ``order=rank`` when the run has ranks but no scores
    (its scores are minus its ranks), so the flavor string says how it was ordered; a measure
    naming ``order=rank`` refuses a run ordered by its scores (the knob states what the run is)."""
    order = str(measure.flavor.order)
    if order == run.ranked_by:
        return measure
    if run.ranked_by == "rank" and order == "score":
        return measure.with_knobs(order="rank")
    raise UsageError(f"{measure.name} sets order={order} but the run {run.source} has scores: it is ordered by "
                     f"them (order=score); drop the knob, or give a run with ranks and no scores")


class Evaluation:
    """Evaluate measures of one run against one set of judgments, sharing alignment and sorting.

    Parameters
    ----------
    qrels, run : the tables, already read.
    whole : the tables are the whole input, so a measure whose policies find no query to score
        in them (a run sharing no query with the judgments, unless the measure scores run-only
        queries) is an error (:func:`~rankflavor.engine.aggregate.require_common_queries`, checked by
        :meth:`require_common` before a measure is ranked); False for a chunk of a run (chunked
        evaluation checks the whole once merged).
    one_ordering : keep the rankings of one ordering at a time (a ranking of a large run is
        several arrays of its length): evaluate the measures grouped by :meth:`key`, as
        :func:`rankflavor.spread` does over big grids, so each ordering is still sorted once.

    A measure whose alignment or ranking was refused (a policy set to ``error``) raises the same
    typed error again for every measure sharing its policy or ordering, without redoing the work;
    the others evaluate.
    """

    def __init__(self, qrels: Qrels, run: Run, *, whole: bool = True, one_ordering: bool = False) -> None:
        self.qrels = qrels
        self.run = run
        self.whole = whole
        self.one_ordering = one_ordering
        self._aligned: dict[str, Aligned | RankflavorError] = {}
        self._rankers: dict[str, Ranker] = {}
        self._checked: set[tuple[str, Ordering]] = set()
        self._failed: dict[tuple[str, ...], RankflavorError] = {}
        self._key: tuple[str, ...] | None = None

    @staticmethod
    def key(measure: Measure) -> tuple[str, ...]:
        """Measures with equal keys share one alignment and one ranking."""
        return (str(measure.flavor.duplicates), *order_key(measure.flavor))

    def aligned(self, policy: str) -> Aligned:
        """The tables aligned under the duplicates ``policy`` (once)."""
        if policy not in self._aligned:
            try:
                self._aligned[policy] = align(self.qrels, self.run, duplicates=policy, chunk=not self.whole)
            except RankflavorError as exc:
                self._aligned[policy] = exc
        found = self._aligned[policy]
        if isinstance(found, RankflavorError):
            raise found
        return found

    def require_common(self, measures: Sequence[Measure]) -> None:
        """Raise, for a whole input, when the policies of one of ``measures`` (none: the default
        flavor's) leave no query to score (:func:`~rankflavor.engine.aggregate.require_common_queries`):
        no query is both in the run and in the judgments, and the measure does not score run-only
        queries (``run_only=include``) or the judgments' queries of no judgment."""
        if not self.whole:
            return
        flavors = [m.flavor for m in measures] or [Flavor()]
        for policy in dict.fromkeys(str(f.duplicates) for f in flavors):
            aligned = self.aligned(policy)
            ids = aligned.query_ids  # (read only to name a few in the message)
            require_common_queries(aligned.counts, (ids[i] for i in np.flatnonzero(aligned.in_run)),
                                   (ids[i] for i in np.flatnonzero(aligned.in_qrels)),
                                   [f for f in flavors if str(f.duplicates) == policy])

    def ranker(self, policy: str) -> Ranker:
        """The one :class:`~rankflavor.order.Ranker` of the alignment under ``policy``."""
        if policy not in self._rankers:
            self._rankers[policy] = Ranker(self.aligned(policy))
        return self._rankers[policy]

    def ranked(self, measure: Measure) -> Ranked:
        """The ranking ``measure``'s kernel reads (only the rows its spec declares it needs),
        its kept run duplicates refused under ``duplicates=error``."""
        policy = str(measure.flavor.duplicates)
        key = self.key(measure)
        needs = measure.spec.needs(measure)
        failed = (*key, str(needs.run))  # (a kernel of the judgments alone refuses no run duplicate)
        if failed in self._failed:
            raise self._failed[failed]
        self.require_common([measure])
        ranker = self.ranker(policy)
        if self.one_ordering and self._key != key:
            for other in self._rankers.values():
                other.forget_rankings()
            self._key = key
        ordering = Ordering.of(measure.flavor)
        try:
            ranked = ranker.ranked(ordering, needs)
            if (policy, ordering) not in self._checked:
                check_duplicates(ranked)
                if ranked.kept_rows is not None:
                    self._checked.add((policy, ordering))
        except RankflavorError as exc:
            self._failed[failed] = exc
            raise
        return ranked

    def evaluate(self, measure: Measure) -> MeasureResult:
        """The :class:`MeasureResult` of ``measure``; raises the typed error evaluate() would raise."""
        check_raters(self.qrels, measure)
        measure = run_ordered(self.run, measure)
        ranked = self.ranked(measure)
        values, empty = measure.spec.compute(ranked, measure)
        return aggregate(measure, values, empty, ranked.aligned)

    def results(self, measures: Sequence[Measure], extras: tuple[str, ...] = ()) -> Results:
        """Every measure's result, with the input counts of the first measure's alignment.

        The check that the measures have a query to score comes first (:meth:`require_common`).
        With no measure (only extras such as ``num_q``) the tables are aligned once anyway, so
        the counts and that check (under the default flavor's policies) still hold.
        """
        # The inputs' check first, over every measure, as chunked and Spark evaluation check the
        # merged whole before any measure's result: one error, whichever the engine.
        self.require_common(measures)
        out = [self.evaluate(m) for m in measures]
        policy = str(measures[0].flavor.duplicates) if measures else str(Flavor().duplicates)
        return Results(out, self.aligned(policy).counts, provenance(self.qrels, self.run), extras)

    def close(self) -> None:
        """Drop the alignments, rankings and errors kept. A kept error's traceback holds this
        object: the cycle would keep a run's alignment alive after its evaluation until the next
        full collection."""
        self._aligned.clear()
        self._rankers.clear()
        self._failed.clear()



def evaluate_grid(qrels: Qrels, runs: Sequence[Any], measures: Sequence[Measure], progress: Progress | None = None,
                  label: str = "evaluating") -> tuple[list[list[MeasureResult | None]], dict[tuple[int, int], RankflavorError]]:
    """Every run under every measure, each on its own: ``results[r][j]`` the result of ``runs[r]``
    under ``measures[j]``, None where it raised, its error in ``errors[(r, j)]`` (as
    :meth:`Evaluation.evaluate`: a measure refused by its policies does not stop the others).

    A run is read (:func:`rankflavor.io.inputs.as_run`) when its turn comes and dropped after,
    and the measures sharing an ordering are evaluated together, so each distinct ordering of a
    run is sorted once, however many flavors of a grid share it (:func:`rankflavor.spread`,
    :func:`rankflavor.compare`). ``progress`` is told of each (run, measure), under ``label``.
    """
    from rankflavor.io.inputs import as_run

    by_ordering = sorted(range(len(measures)), key=lambda j: Evaluation.key(measures[j]))
    results: list[list[MeasureResult | None]] = []
    errors: dict[tuple[int, int], RankflavorError] = {}
    with task(progress, label, len(runs) * len(measures)) as bar:
        for r, item in enumerate(runs):
            row: list[MeasureResult | None] = [None] * len(measures)
            plan = Evaluation(qrels, as_run(item), one_ordering=True)
            try:
                for j in by_ordering:
                    bar.advance()
                    try:
                        row[j] = plan.evaluate(measures[j])
                    except RankflavorError as exc:
                        errors[(r, j)] = exc.with_traceback(None)
            finally:
                plan.close()
            results.append(row)
    return results, errors


def evaluate_tables(
    qrels: Qrels, run: Run, measures: Sequence[Measure], extras: tuple[str, ...] = (), whole: bool = True
) -> Results:
    """Evaluate already-read tables: one :class:`Evaluation` of every measure (every measure
    sharing ordering knobs shares one sort).

    ``whole``: the tables are the whole input, so a run sharing no query with the judgments is an
    error (:func:`~rankflavor.engine.aggregate.require_common_queries`); False for a piece of a run
    (chunked and Spark evaluation check the whole once merged).
    """
    plan = Evaluation(qrels, run, whole=whole)
    try:
        return plan.results(measures, extras)
    finally:
        plan.close()


__all__ = ["Evaluation", "check_duplicates", "check_raters", "evaluate_grid", "evaluate_tables", "run_ordered"]
