"""Fixed labelled groups scored again and again: the engine's entry for training-time metrics.

A learning-to-rank validation set keeps its groups and labels for the whole training run; only
the model's scores change from one iteration to the next. :class:`Rescorer` does once what does
not depend on the scores, and each call only orders and scores:

* the arrays become tables and are aligned once (:func:`rankflavor.training.arrays.ndcg_score`'s tables:
  every candidate judged with its label, ids whose byte order is the array order; aligned from
  their layout, :func:`~rankflavor.align.groups.align_groups`), and the
  measures are resolved once (``lightgbm:ndcg@10``, ``ndcg@10[gain=exp2]``);
* a call ranks the new scores with a :class:`~rankflavor.order.blocks.BlockRanker` (the groups'
  grades, ranks and judgments made once; a sort of each group, :class:`~rankflavor.order.blocks.BlockSort`),
  or, for an ordering that removes rows (``depth``), a :class:`~rankflavor.order.Ranker` of the
  alignment with those scores; the work on the judgments (the sorted ideal lists) is kept from
  the first call. Where every measure of an ordering reads no row below some rank (NDCG@k and
  DCG@k read the top k: :meth:`MetricSpec.deepest_rank <rankflavor.metrics.MetricSpec.deepest_rank>`),
  the block ranker holds only the rows down to that rank. The tie rules, the kernels and the aggregation are the engine's own, so a
  value equals :func:`rankflavor.evaluate` on the same arrays.

In a group every candidate is labelled, so the group's own list and all its judgments are the
same set of grades: a measure with ``ideal=local`` is computed with the global ideal (the same
list, hence the same IDCG to the last bit, shared across calls instead of sorted every call) and
reported under its own flavor. That holds while no row leaves the ranking, so a ``depth`` limit
keeps the local ideal.

Examples
--------
>>> r = Rescorer([2, 0, 1, 0, 0], group=[3, 2], metrics=["lightgbm:ndcg@3"])
>>> [round(v, 6) for v in r.means([0.1, 0.9, 0.5, 0.2, 0.1])]
[0.793441]
>>> r.measures[0].display
'ndcg@3'
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from rankflavor.align.groups import align_groups
from rankflavor.engine.aggregate import aggregate
from rankflavor.engine.results import MeasureResult
from rankflavor.errors import UsageError
from rankflavor.metrics.measure import Measure
from rankflavor.order import Ordering, Ranked, Ranker, SharedWork
from rankflavor.order.blocks import BlockRanker, BlockSort


class Rescorer:
    """Measures of fixed labelled groups, for scores given again and again.

    Parameters
    ----------
    labels : array of shape (n_rows,)
        The label of every candidate, groups one after another (or rows of any query with ``qid``).
    group : array of int, optional
        Sizes of consecutive groups (LightGBM's and XGBoost's ``group``).
    qid : array, optional
        The query of each row (XGBoost's ``qid``), instead of ``group``.
    metrics : str, Measure or list of them
        Measures as :func:`rankflavor.evaluate` takes them (``"lightgbm:ndcg@10"``,
        ``"ndcg@10[gain=exp2]"``), under ``preset``.
    preset : str, optional
        The preset of names without a ``PRESET:`` prefix; None: rankflavor's defaults.

    Raises
    ------
    UsageError
        Group sizes that do not fit the labels, no measure.
    InputError, FlavorError
        Labels a measure's flavor refuses (above LightGBM's 30, negative), unknown names: when
        constructed, not at the first score.
    """

    def __init__(self, labels: Any, group: Any = None, qid: Any = None, *,
                 metrics: str | Measure | Iterable[str | Measure], preset: str | None = None) -> None:
        from rankflavor.presets import resolve_measures
        from rankflavor.training.arrays import _rows, _tables

        items = [metrics] if isinstance(metrics, (str, Measure)) else list(metrics)
        if not items:
            raise UsageError("metrics: give at least one measure, e.g. metrics=['lightgbm:ndcg@10']")
        self.measures, _ = resolve_measures(items, preset, {})
        if not self.measures:
            raise UsageError(f"metrics: {items!r} names no measure with a value per query")
        if group is None and qid is None:
            raise UsageError("give the groups: group= (sizes of consecutive groups) or qid= (a query id per row)")
        label_array = np.asarray(labels, dtype=np.float64).ravel()
        rows, _, query, self.n_queries = _rows(label_array, np.zeros(len(label_array)), group, qid)
        self.labels = label_array
        self.n = len(rows)
        qrels, run = _tables(rows, np.zeros(self.n), query, self.n_queries)
        self.aligned = align_groups(qrels, run, query, self.n_queries)
        starts = self.aligned.query_starts
        # Groups one after another, in query-code order: sorted block by block.
        self.block_sort = None if starts is None else BlockSort(starts, np.diff(np.append(starts, self.n)))
        self.shared = SharedWork()
        # (the tables' docnos are zero-padded positions: they ascend along each group's rows)
        self.block_ranker = None if self.block_sort is None else BlockRanker(self.aligned, self.block_sort, self.shared,
                                                                             docnos_in_file_order=True)
        self._kernel_measures = [_as_computed(m) for m in self.measures]
        self._orderings = [Ordering.of(computed.flavor) for computed in self._kernel_measures]
        # Per ordering, the deepest rank its measures read (None: every row): the block ranker
        # gathers only the rows down to it.
        self._to_rank: dict[Ordering, int | None] = {}
        for computed, ordering in zip(self._kernel_measures, self._orderings, strict=True):
            deepest = computed.spec.deepest_rank(computed)
            held = self._to_rank.get(ordering, deepest)
            self._to_rank[ordering] = None if held is None or deepest is None else max(held, deepest)
        # Labels a flavor refuses are refused now, on distinct scores (no tie to sort again).
        self.results(-np.arange(self.n, dtype=np.float64))

    def results(self, scores: Any) -> list[MeasureResult]:
        """Every measure's :class:`~rankflavor.engine.results.MeasureResult` under ``scores`` (one per
        row, in the order of the labels)."""
        score = _scores(scores, self.n)
        ranker: Ranker | None = None
        rankings: dict[Ordering, Ranked] = {}
        out = []
        for measure, computed, ordering in zip(self.measures, self._kernel_measures, self._orderings, strict=True):
            if ordering not in rankings:
                if self.block_ranker is not None and self.block_ranker.takes(ordering):
                    rankings[ordering] = self.block_ranker.ranked(score, ordering, self._to_rank[ordering])
                else:  # the general ranker, on the alignment with these scores
                    if ranker is None:
                        aligned = replace(self.aligned, run_score=score, scores_descend=False)
                        ranker = Ranker(aligned, shared=self.shared, block_sort=self.block_sort)
                    rankings[ordering] = ranker.ranked(ordering)
            # Every row, to the kernel itself: here every row is judged, so the judged rows a
            # kernel may ask for (MetricSpec.compute) are all of them, and their subset a copy.
            values, empty = computed.spec.kernel(rankings[ordering], computed)
            out.append(aggregate(measure, values, empty, self.aligned))
        return out

    def means(self, scores: Any) -> list[float]:
        """Every measure's summary (mean) under ``scores``."""
        return [r.mean for r in self.results(scores)]

    def same_groups(self, labels: Any, group: Any) -> bool:
        """Are these the labels and group sizes this rescorer was built for?"""
        la = np.asarray(labels).ravel()
        if la.shape != self.labels.shape or not np.array_equal(la, self.labels):
            return False
        if group is None:
            return True
        starts = self.aligned.query_starts
        if starts is None:
            return False
        sizes = np.asarray(group).ravel()
        return len(sizes) == len(starts) and bool((np.diff(np.append(starts, self.n)) == sizes).all())


def _as_computed(measure: Measure) -> Measure:
    """The measure the kernel runs: ``ideal=local`` as ``ideal=global`` where the two lists are one
    (every candidate judged, no row cut from the ranking): see the module's docstring."""
    f = measure.flavor
    if "ideal" in measure.spec.knobs and f.ideal == "local" and f.depth_limit is None:
        return measure.with_knobs(ideal="global")
    return measure


def _scores(scores: Any, n: int) -> np.ndarray:
    from rankflavor.training.arrays import _finite

    score = _finite(scores, "scores")
    if score.ndim != 1 and score.size == n:
        score = score.ravel()  # (n, 1) from a model's predict
    if score.shape != (n,):
        raise UsageError(f"scores must hold one score per row, shape ({n},); received shape {score.shape}")
    return score


def evaluate_groups(labels: Any, scores: Any, group: Any = None, qid: Any = None, *,
                    metrics: str | Measure | Sequence[str | Measure], preset: str | None = None) -> list[float]:
    """The means of ``metrics`` on one scoring of labelled groups (a :class:`Rescorer` used once)."""
    return Rescorer(labels, group, qid, metrics=metrics, preset=preset).means(scores)


__all__ = ["Rescorer", "evaluate_groups"]
