"""Per-query values of a run under two sets of judgments, split into the sets PPI reads.

A run is evaluated once against the human judgments and once against the LLM's, each by the
ordinary engine (:class:`rankflavor.engine.plan.Evaluation`), so the measure's flavor decides every
per-query value as it does in ``eval`` (``missing``, ``empty``, ``run_only`` ...). The values are
then joined by query id (never by position):

* **labelled**: the queries with a value under both: ``Y`` (human) and ``Yhat`` (LLM);
* **unlabelled**: the queries with a value under the LLM judgments only: ``Yhat_unlabelled``;
* **human only**: the queries with a value under the human judgments only. They have no LLM
  value to pair with, so no estimate reads them; they are counted and named.

A value that is not a number (``empty=nan``) is no value; such queries are counted too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rankflavor.engine.plan import Evaluation
from rankflavor.io.tables import Qrels, Run
from rankflavor.metrics.measure import Measure


@dataclass(frozen=True)
class Values:
    """One run's values under one set of judgments.

    Attributes
    ----------
    queries : str array, sorted; values : float64, aligned with them.
    not_a_number : queries whose value was NaN (left out of ``queries``).
    skipped_empty, skipped_missing : queries the measure's ``empty=skip``/``missing=skip`` left out.
    """

    queries: np.ndarray
    values: np.ndarray
    not_a_number: tuple[str, ...] = ()
    skipped_empty: int = 0
    skipped_missing: int = 0


def run_values(qrels: Qrels, run: Run, measure: Measure) -> Values:
    """The per-query values of ``run`` under ``qrels`` and ``measure``, sorted by query id.

    Raises the typed error :func:`rankflavor.evaluate` would (no common query, a policy refusal).
    """
    plan = Evaluation(qrels, run)
    try:
        res = plan.evaluate(measure)
    finally:
        plan.close()
    queries = np.asarray(res.queries).astype(str)
    values = np.asarray(res.values, dtype=np.float64)
    order = np.argsort(queries, kind="stable")
    queries, values = queries[order], values[order]
    nan = np.isnan(values)
    return Values(queries[~nan], values[~nan], tuple(queries[nan].tolist()), int(res.skipped_empty),
                  int(res.skipped_missing))


@dataclass(frozen=True)
class Split:
    """The values PPI reads, by query id.

    Attributes
    ----------
    labelled : queries with both values; y, yhat : their human and LLM values.
    unlabelled : queries with an LLM value only; yhat_u : those values.
    human_only : queries with a human value only (read by no estimate).
    """

    labelled: np.ndarray
    y: np.ndarray
    yhat: np.ndarray
    unlabelled: np.ndarray
    yhat_u: np.ndarray
    human_only: np.ndarray


def split(human: Values, llm: Values) -> Split:
    """Join ``human`` and ``llm`` by query id into labelled, unlabelled and human-only queries.

    Examples
    --------
    >>> h = Values(np.array(["a", "b", "c"]), np.array([0.1, 0.2, 0.3]))
    >>> m = Values(np.array(["b", "c", "d"]), np.array([0.5, 0.6, 0.7]))
    >>> s = split(h, m)
    >>> s.labelled.tolist(), s.y.tolist(), s.yhat.tolist(), s.unlabelled.tolist(), s.human_only.tolist()
    (['b', 'c'], [0.2, 0.3], [0.5, 0.6], ['d'], ['a'])
    """
    both, hi, li = np.intersect1d(human.queries, llm.queries, assume_unique=True, return_indices=True)
    only_llm = ~np.isin(llm.queries, both)
    only_human = ~np.isin(human.queries, both)
    return Split(both, human.values[hi], llm.values[li], llm.queries[only_llm], llm.values[only_llm],
                 human.queries[only_human])


__all__ = ["Split", "Values", "run_values", "split"]
