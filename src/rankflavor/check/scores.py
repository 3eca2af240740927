"""Checks of a run table: duplicates, queries whose scores are all equal, tied scores, and ranks
that contradict the scores.

trec_eval ignores the rank column and orders by score (ties by docno, descending); MS MARCO's
scripts and many exports read the rank. Where the two orders differ (a row ranked above another
has a lower score), the tools give different numbers from one file. A run of one score per
query is ordered by the tie rule alone.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..columns import as_numpy
from ..tables import Run
from .codes import doc_codes, duplicates, query_codes
from .findings import Finding, Severity, shown

#: Query ids a message names before "...".
NAMED = 5


def check_run(run: Run, limit: int, ranks: pa.Array | None = None) -> list[Finding]:
    """Every finding of a run table; ``ranks``: the rank field of each row as written (TREC)."""
    if len(run) == 0:
        return []
    q, _, ids = query_codes(run.query)
    (doc,), n_docs = doc_codes([run.doc])
    score = np.asarray(run.score, dtype=np.float64)
    found = duplicates(run, q, doc, n_docs, score, limit)
    order = np.lexsort((score, q))  # by query, then score: equal scores of a query are neighbours
    found += _equal_and_tied(run, q[order], score[order], order, ids)
    if ranks is not None and len(ranks) == len(run):
        found += _ranks(run, q, score, ranks, ids)
    if run.extra_fields:
        found.append(Finding(Severity.INFO, "extra_fields", run.source, None,
                             f"{run.extra_fields} lines have more than 6 fields; the rest are ignored, as trec_eval "
                             "ignores them", run.extra_fields))
    return found


def _names(ids: list[str], codes: np.ndarray) -> str:
    return ", ".join(shown(ids[k]) for k in codes[:NAMED].tolist()) + (", ..." if len(codes) > NAMED else "")


def _equal_and_tied(run: Run, qs: np.ndarray, ss: np.ndarray, order: np.ndarray, ids: list[str]) -> list[Finding]:
    starts = np.flatnonzero(np.concatenate([[True], qs[1:] != qs[:-1]]))
    sizes = np.diff(np.append(starts, len(qs)))
    low, high = ss[starts], ss[starts + sizes - 1]  # sorted by score within a query
    equal = np.flatnonzero((low == high) & (sizes > 1))
    found = []
    if len(equal):
        first = int(order[starts[equal[0]]])
        found.append(Finding(Severity.WARNING, "equal_scores", run.source, run.line_of(first),
                             f"{len(equal)} queries have one score for all their documents ({_names(ids, qs[starts[equal]])}): "
                             "their order is the tie rule's alone (knob ties)", len(equal)))
    same = (qs[1:] == qs[:-1]) & (ss[1:] == ss[:-1])
    tied = np.zeros(len(qs), dtype=bool)
    tied[1:] |= same
    tied[:-1] |= same
    n_tied = int(np.count_nonzero(tied))
    if n_tied:
        queries = len(np.unique(qs[tied]))
        first = int(order[np.flatnonzero(tied)].min())
        found.append(Finding(Severity.INFO, "tied_scores", run.source, run.line_of(first),
                             f"{n_tied} rows in {queries} queries share their score with another row of their query: "
                             "the tie rule orders them (trec_eval: docno descending; knob ties)", n_tied))
    return found


def _ranks(run: Run, q: np.ndarray, score: np.ndarray, ranks: pa.Array, ids: list[str]) -> list[Finding]:
    """Rows ranked below a row of their query with a lower score; ranks that are not integers."""
    text = pc.utf8_trim_whitespace(ranks)
    numeric = as_numpy(pc.fill_null(pc.match_substring_regex(text, r"^[+-]?[0-9]+$"), False))
    found = []
    bad = np.flatnonzero(~numeric)
    if len(bad):
        found.append(Finding(Severity.INFO, "rank_not_numeric", run.source, run.line_of(int(bad[0])),
                             f"{len(bad)} rows have a rank that is not an integer (first: {shown(text[int(bad[0])].as_py())}); "
                             "trec_eval ignores the rank column, tools that read it cannot", len(bad)))
    keep = np.flatnonzero(numeric)
    if len(keep) < 2:
        return found
    digits = pc.cast(pc.take(text, pa.array(keep)), pa.float64())  # float: a huge rank must not overflow
    rank = as_numpy(digits)
    qk, sk = q[keep], score[keep]
    by_rank = np.lexsort((keep, rank, qk))  # within a query by rank, ties by line
    qr, sr = qk[by_rank], sk[by_rank]
    rises = np.flatnonzero((qr[1:] == qr[:-1]) & (sr[1:] > sr[:-1])) + 1
    if len(rises):
        queries = np.unique(qr[rises])
        row = int(keep[by_rank[rises]].min())
        found.append(Finding(Severity.WARNING, "ranks_contradict_scores", run.source, run.line_of(row),
                             f"in {len(queries)} queries ({_names(ids, queries)}) a row has a higher score than the row "
                             f"ranked above it ({len(rises)} rows): trec_eval orders by score, tools that read the rank "
                             "column give other numbers", len(rises)))
    return found
