"""The alignment of labelled groups, known from their layout: no join to search.

A learning-to-rank data set labels every candidate of every group: the judgments and the run
are the same rows (a query per group, a document per candidate). :func:`align_groups` builds
the :class:`~rankflavor.align.Aligned` that :func:`~rankflavor.align.align` finds for the tables
of such rows, without coding strings or joining: every row is judged with its own label, no
pair repeats, nothing is dropped. ``tests/align/test_align_groups.py`` checks it against
:func:`~rankflavor.align.align` field by field.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from rankflavor.align.values import Aligned, Counts
from rankflavor.base.kernels import block_starts, place_within
from rankflavor.io.tables import Qrels, Run


def align_groups(qrels: Qrels, run: Run, query: npt.NDArray[np.integer], n_queries: int) -> Aligned:
    """The alignment of ``qrels`` and ``run``: the same rows, each query's documents distinct.

    Parameters
    ----------
    qrels, run : tables of the same rows (:func:`rankflavor.training.arrays.ndcg_score`'s): query ids
        whose byte order is the query number, documents numbered within their query.
    query : the query number (0..n_queries-1) of each row; every number has a row.
    """
    n = len(query)
    q = np.asarray(query).astype(np.int32)
    doc = place_within(q)  # a row's place among its query's rows identifies its document
    grade = np.asarray(qrels.grade, dtype=np.float64)
    every = np.ones(n_queries, dtype=bool)
    negatives = int((grade < 0).sum())
    counts = Counts(
        run_rows=n, qrels_rows=n, queries_in_run=n_queries, queries_in_qrels=n_queries, queries_evaluated=n_queries,
        queries_only_in_run=0, queries_only_in_qrels=0, run_duplicates_resolved=0, qrels_duplicates_resolved=0,
        unjudged_retrieved=0, negative_grades=negatives, negative_grades_retrieved=negatives,
        run_rows_of_unjudged_queries=0, comment_lines=0, blank_lines=0, run_lines_with_extra_fields=0,
    )
    names = qrels.query.unique().to_pylist() if n_queries else []
    return Aligned(
        query_ids=np.array(sorted(names), dtype=object), in_run=every, in_qrels=every, run_q=q,
        query_starts=block_starts(q), run_doc=doc, run_score=run.score, input_row=None,
        judged_row=np.arange(n, dtype=np.int64), judged_grade=grade, qrels_q=q, qrels_grade=grade, run=run,
        counts=counts, qrels_source=qrels.source, scores_descend=run.scores_descend,
    )


__all__ = ["align_groups"]
