"""Edges of rankflavor.order that mutation testing (docs/mutation.md) found unpinned.

Expected values come from the definitions (tests/test_order_reference.py's brute-force
``reference``, counts of the input lines), never from the code under test.
"""

from __future__ import annotations

import numpy as np

from rankflavor.order import Ordering, SharedWork
from rankflavor.order.blocks import BlockRanker, BlockSort

from .test_order_reference import aligned_of, fields, reference

# Every row judged, blocks in code order ("a" < "b" < "zz"), docnos descending along the rows (so
# file order is not docno order), ties; "zz" is judged but not retrieved: the highest query code.
QRELS = [("a", "d3", 1.0), ("a", "d2", 0.0), ("a", "d1", 2.0), ("b", "d9", 1.0), ("b", "d5", 1.0),
         ("b", "d4", 0.0), ("zz", "d1", 1.0)]
RUN = [("a", "d3", 1.0), ("a", "d2", 1.0), ("a", "d1", 1.0), ("b", "d9", 2.0), ("b", "d5", 1.0), ("b", "d4", 1.0)]


def block_ranker(**kwargs: bool) -> tuple[BlockRanker, object]:
    aligned = aligned_of(QRELS, RUN)
    starts = aligned.query_starts
    assert starts is not None
    sort = BlockSort(starts, np.diff(np.append(starts, len(aligned.run_q))))
    return BlockRanker(aligned, sort, SharedWork(), **kwargs), aligned


def test_block_ranker_orders_ties_by_docno_unless_told_docnos_ascend() -> None:
    """By default a block ranker does not assume docnos ascend along the rows: every tie rule puts
    each document where the definition does."""
    blocks, aligned = block_ranker()
    docs = [d for _, d, _ in RUN]
    for ties in ("docno_asc", "docno_desc", "input_order", "pessimistic", "optimistic"):
        o = Ordering(ties=ties)
        got = fields(aligned, blocks.ranked(aligned.run_score, o), docs)  # type: ignore[attr-defined]
        assert got["rows"] == reference(QRELS, RUN, o)["rows"], ties


def test_block_ranker_counts_rows_of_every_query() -> None:
    """Rows per query: one count per query of the alignment, 0 for the judged query no row retrieves."""
    blocks, aligned = block_ranker()
    ranked = blocks.ranked(aligned.run_score, Ordering())  # type: ignore[attr-defined]
    ids = [str(q) for q in aligned.query_ids]  # type: ignore[attr-defined]
    want = {q: sum(1 for qq, _, _ in RUN if qq == q) for q in ids}
    assert dict(zip(ids, ranked.n_ret.tolist(), strict=True)) == want == {"a": 3, "b": 3, "zz": 0}
    assert ranked.n_queries == 3
