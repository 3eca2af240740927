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

from ..align.duplicates import pairs_repeat
from ..columns import as_numpy
from ..kernels import block_starts, distinct, rises_inside
from ..tables import Qrels, Run
from .codes import Codes, duplicates, exact
from .findings import Finding, Severity, count_of, shown

#: Query ids a message names before "...".
NAMED = 5
#: A run of at least MIN_ROWS rows whose scores take at most FEW_VALUES whole values looks like
#: judgments (a run's scores, even integer ones such as SPLADE's, take many).
MIN_ROWS = 20
FEW_VALUES = 5


def check_run(run: Run, limit: int, codes: Codes, qrels: Qrels | None = None,
              ranks: pa.Array | np.ndarray | None = None) -> list[Finding]:
    """Every finding of a run table in ``codes`` (:func:`~rankflavor.check.codes.run_codes`);
    ``ranks``: the rank field of each row as written (TREC text), or ranks as numbers (a reader
    that kept them)."""
    if len(run) == 0:
        return []
    q, ids = codes.rq, codes.ids
    score = np.asarray(run.score, dtype=np.float64)
    starts = block_starts(q)  # None: a query's rows are not one block
    found: list[Finding] = []
    if pairs_repeat(q, codes.rdoc, codes.span, starts):
        # hashed codes may collide: the listing is made of exact codes
        exact_codes = exact(codes, run, qrels)
        found += duplicates(run, q, exact_codes.rdoc, exact_codes.span, score, limit)
    if starts is not None and not rises_inside(score, starts):
        order = np.arange(len(q))  # written query by query, best first: equal scores are neighbours
    else:
        order = np.lexsort((score, q))
    found += _equal_and_tied(run, q[order], score[order], order, ids)
    if ranks is not None and len(ranks) == len(run):
        found += _ranks(run, q, score, ranks, ids, starts)
    found += _score_values(run, score)
    if run.extra_fields:
        found.append(Finding(Severity.INFO, "extra_fields", run.source, None,
                             f"{run.extra_fields} lines have more than 6 fields; the rest are ignored, as trec_eval "
                             "ignores them", run.extra_fields))
    return found


def _names(ids: list[str], codes: np.ndarray) -> str:
    return ", ".join(shown(ids[k]) for k in codes[:NAMED].tolist()) + (", ..." if len(codes) > NAMED else "")


def _equal_and_tied(run: Run, qs: np.ndarray, ss: np.ndarray, order: np.ndarray, ids: list[str]) -> list[Finding]:
    """Queries of one score, and rows tied with another row of their query; ``qs`` grouped by
    query and ``ss`` sorted within each group (either way), ``order`` their rows."""
    starts = np.flatnonzero(np.concatenate([[True], qs[1:] != qs[:-1]]))
    sizes = np.diff(np.append(starts, len(qs)))
    equal = np.flatnonzero((ss[starts] == ss[starts + sizes - 1]) & (sizes > 1))  # sorted: the ends equal
    found = []
    if len(equal):
        first = int(order[starts[equal]].min())
        found.append(Finding(Severity.WARNING, "equal_scores", run.source, run.line_of(first),
                             f"{count_of(len(equal), 'query', 'queries')} with one score for all documents "
                             f"({_names(ids, qs[starts[equal]])}): "
                             "their order is the tie rule's alone (knob ties)", len(equal)))
    same = (qs[1:] == qs[:-1]) & (ss[1:] == ss[:-1])
    tied = np.zeros(len(qs), dtype=bool)
    tied[1:] |= same
    tied[:-1] |= same
    n_tied = int(np.count_nonzero(tied))
    if n_tied:
        tied_q = qs[tied]  # grouped by query
        queries = int(np.count_nonzero(tied_q[1:] != tied_q[:-1])) + 1
        first = int(order[tied].min())
        found.append(Finding(Severity.INFO, "tied_scores", run.source, run.line_of(first),
                             f"{count_of(n_tied, 'row')} in {count_of(queries, 'query', 'queries')} share their score with "
                             "another row of their query: "
                             "the tie rule orders them (trec_eval: docno descending; knob ties)", n_tied))
    return found


def _score_values(run: Run, score: np.ndarray) -> list[Finding]:
    """A run whose scores take a few whole values, as grades do (judgments given as a run?)."""
    if len(score) < MIN_ROWS or not np.array_equal(score, np.round(score)):
        return []
    values = distinct(score)
    if len(values) > FEW_VALUES:
        return []
    listed = ", ".join(f"{v:g}" for v in values.tolist())
    return [Finding(Severity.WARNING, "looks_like_qrels", run.source, None,
                    f"every score is one of {listed}, as grades are: was a qrels file given as a RUN?", len(score))]


def _rank_numbers(ranks: pa.Array | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row: is the rank an integer, and its value (0 where not)."""
    if isinstance(ranks, np.ndarray):
        value = np.asarray(ranks, dtype=np.float64)
        return np.isfinite(value), np.nan_to_num(value, nan=0.0, posinf=0.0, neginf=0.0)
    try:
        return np.ones(len(ranks), dtype=bool), as_numpy(pc.cast(ranks, pa.float64()))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    text = pc.utf8_trim_whitespace(ranks)
    matched = pc.match_substring_regex(text, r"^[+-]?[0-9]+$")
    numeric = as_numpy(pc.and_kleene(matched, pc.is_valid(matched)))  # null -> False, without pandas
    value = np.zeros(len(ranks))
    keep = np.flatnonzero(numeric)
    value[keep] = as_numpy(pc.cast(pc.take(text, pa.array(keep)), pa.float64()))  # float: a huge rank must not overflow
    return numeric, value


def _item(ranks: pa.Array | np.ndarray, row: int) -> object:
    return ranks[row] if isinstance(ranks, np.ndarray) else ranks[row].as_py()


def _ranks(run: Run, q: np.ndarray, score: np.ndarray, ranks: pa.Array | np.ndarray, ids: list[str],
           starts: np.ndarray | None) -> list[Finding]:
    """Rows ranked below a row of their query with a lower score; ranks that are not integers."""
    numeric, rank = _rank_numbers(ranks)
    found = []
    bad = np.flatnonzero(~numeric)
    if len(bad):
        found.append(Finding(Severity.INFO, "rank_not_numeric", run.source, run.line_of(int(bad[0])),
                             f"{len(bad)} rows have a rank that is not an integer (first: {shown(str(_item(ranks, int(bad[0]))))}); "
                             "trec_eval ignores the rank column, tools that read it cannot", len(bad)))
    keep = np.flatnonzero(numeric) if len(bad) else np.arange(len(q))
    if len(keep) < 2:
        return found
    qk, sk, rk = q[keep], score[keep], rank[keep]
    same = qk[1:] == qk[:-1]
    if starts is not None and not (same & (rk[1:] < rk[:-1])).any():
        by_rank = keep  # one block per query, ranks ascending in it: file order is rank order
        qr, sr = qk, sk
    else:
        step = np.lexsort((keep, rk, qk))  # within a query by rank, ties by line
        by_rank, qr, sr = keep[step], qk[step], sk[step]
    rises = np.flatnonzero((qr[1:] == qr[:-1]) & (sr[1:] > sr[:-1])) + 1
    if len(rises):
        queries = qr[rises]
        n_queries = int(np.count_nonzero(queries[1:] != queries[:-1])) + 1  # grouped by query
        row = int(by_rank[rises].min())
        found.append(Finding(Severity.WARNING, "ranks_contradict_scores", run.source, run.line_of(row),
                             f"{count_of(len(rises), 'row')} in {count_of(n_queries, 'query', 'queries')} "
                             f"({_names(ids, distinct(queries))}) score higher than the row ranked above: trec_eval "
                             "orders by score, tools that read the rank column give other numbers", len(rises)))
    return found
