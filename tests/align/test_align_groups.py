"""``rankflavor.align.groups.align_groups`` against ``rankflavor.align.align`` on the same
tables of labelled groups: every field the engine reads is the one the join finds."""

from __future__ import annotations

import numpy as np
import pytest

from rankflavor.align import align
from rankflavor.align.groups import align_groups
from rankflavor.training.arrays import _rows, _tables


@pytest.mark.parametrize("layout", ["group", "qid", "qid-interleaved", "small"])
def test_align_groups_equals_the_join(layout: str) -> None:
    rng = np.random.default_rng(3)
    sizes = rng.integers(1, 14, 12 if layout == "small" else 300)
    labels = rng.integers(-2, 5, int(sizes.sum())).astype(float)  # negatives counted too
    if layout == "group":
        rows = _rows(labels, np.zeros(len(labels)), sizes, None)
    else:
        qid = np.repeat(rng.permutation(len(sizes)) * 7 + 100, sizes)
        if layout == "qid-interleaved":
            qid = rng.permutation(qid)
        rows = _rows(labels, np.zeros(len(labels)), None, qid)
    label, _, query, n_queries = rows
    qrels, run = _tables(label, np.zeros(len(label)), query, n_queries)
    want, got = align(qrels, run), align_groups(qrels, run, query, n_queries)
    for name in ("query_ids", "in_run", "in_qrels", "run_q", "run_score", "judged_row", "judged_grade", "qrels_q",
                 "qrels_grade", "run_row"):
        assert np.array_equal(getattr(got, name), getattr(want, name)), name
        assert getattr(got, name).dtype == getattr(want, name).dtype, name
    assert (got.query_starts is None) == (want.query_starts is None)
    if want.query_starts is not None:
        assert np.array_equal(got.query_starts, want.query_starts)
    assert got.counts == want.counts
    assert got.input_row is None and want.input_row is None
    assert (got.qrels_source, got.scores_descend) == (want.qrels_source, want.scores_descend)
    # the Rescorer's word to its block ranker: each query's docnos ascend in byte order along its rows
    docs = np.array(run.doc.to_pylist(), dtype=object)[got.run_row]
    for q in range(n_queries):
        mine = [d.encode() for d in docs[got.run_q == q]]
        assert mine == sorted(mine) and len(set(mine)) == len(mine)
    # document codes are identities within a query: one per row, as the join's
    for q in range(n_queries):
        mine = got.run_doc[got.run_q == q]
        assert len(np.unique(mine)) == len(mine)
        assert len(np.unique(want.run_doc[want.run_q == q])) == len(mine)
