"""Checks of a run table: duplicates, queries whose scores are all equal, tied scores, and ranks
that contradict the scores.

trec_eval ignores the rank column and orders by score (ties by docno, descending); MS MARCO's
scripts and many exports read the rank. Where the two orders differ (a row ranked above another
has a lower score), the tools give different numbers from one file. A run of one score per
query is ordered by the tie rule alone.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankflavor.align.duplicates import pairs_repeat
from rankflavor.analysis.check.codes import Codes, Duplicates, duplicate_facts, duplicate_findings, exact
from rankflavor.analysis.check.facts import First, Histogram, Names, first
from rankflavor.analysis.check.findings import Finding, Severity, count_of, shown
from rankflavor.base.kernels import block_starts, distinct, rises_inside
from rankflavor.io.columns import as_numpy
from rankflavor.io.tables import Qrels, Run

#: A run of at least MIN_ROWS rows whose scores take at most FEW_VALUES whole values looks like
#: judgments (a run's scores, even integer ones such as SPLADE's, take many).
MIN_ROWS = 20
FEW_VALUES = 5


def check_run(run: Run, limit: int, codes: Codes, qrels: Qrels | None = None,
              ranks: pa.Array | np.ndarray | None = None) -> list[Finding]:
    """Every finding of a run table in ``codes`` (:func:`~rankflavor.analysis.check.codes.run_codes`);
    ``ranks``: the rank field of each row as written (TREC text), or ranks as numbers (a reader
    that kept them)."""
    return run_findings(run_facts(run, limit, codes, qrels, ranks), run.source)


@dataclass(frozen=True)
class RunFacts:
    """What the checks of a run table find (:mod:`rankflavor.analysis.check.facts`). ``tied``: rows
    sharing their score within their query, ``tied_queries`` their queries; ``rises``: rows
    scoring higher than the row ranked above, ``contradicting`` their queries; ``whole``: every
    score a whole number, ``values`` the scores' distinct values while few."""

    rows: int
    duplicates: Duplicates | None
    equal: Names
    first_equal: First | None
    tied: int
    tied_queries: int
    first_tied: First | None
    not_numeric: int
    first_not_numeric: First | None
    rises: int
    contradicting: Names
    first_rise: First | None
    whole: bool
    values: Histogram
    extra_fields: int


def run_facts(run: Run, limit: int, codes: Codes, qrels: Qrels | None = None,
              ranks: pa.Array | np.ndarray | None = None, at: np.ndarray | None = None) -> RunFacts | None:
    """The facts of a run table (None: no row); as :func:`check_run`, ``at``: each row's input
    order (None: its index)."""
    if len(run) == 0:
        return None
    q, ids = codes.rq, codes.ids
    score = np.asarray(run.score, dtype=np.float64)
    starts = block_starts(q)  # None: a query's rows are not one block
    dups = None
    if pairs_repeat(q, codes.rdoc, codes.span, starts):
        # hashed codes may collide: the listing is made of exact codes
        exact_codes = exact(codes, run, qrels)
        dups = duplicate_facts(run, q, exact_codes.rdoc, exact_codes.span, score, limit, at)
    if starts is not None and not rises_inside(score, starts):
        order = np.arange(len(q))  # written query by query, best first: equal scores are neighbours
    else:
        order = np.lexsort((score, q))
    equal, first_equal, tied, tied_queries, first_tied = _equal_and_tied(run, q[order], score[order], order, ids, at)
    not_numeric, first_not_numeric, rises, contradicting, first_rise = 0, None, 0, Names(), None
    if ranks is not None and len(ranks) == len(run):
        not_numeric, first_not_numeric, rises, contradicting, first_rise = _ranks(run, q, score, ranks, ids, starts, at)
    whole = bool(np.array_equal(score, np.round(score)))
    values = Histogram.of(score, FEW_VALUES) if whole else Histogram(FEW_VALUES, None)
    return RunFacts(len(run), dups, equal, first_equal, tied, tied_queries, first_tied, not_numeric,
                    first_not_numeric, rises, contradicting, first_rise, whole, values, run.extra_fields)


def run_findings(facts: RunFacts | None, source: str) -> list[Finding]:
    """The findings of :func:`run_facts`, in the order the checks run."""
    if facts is None:
        return []
    found = duplicate_findings(facts.duplicates, "run", source)
    if facts.first_equal is not None:
        n = facts.equal.count
        found.append(Finding(Severity.WARNING, "equal_scores", source, facts.first_equal.line,
                             f"{count_of(n, 'query', 'queries')} with one score for all documents "
                             f"({facts.equal.text()}): their order is the tie rule's alone (knob ties)", n))
    if facts.first_tied is not None:
        found.append(Finding(Severity.INFO, "tied_scores", source, facts.first_tied.line,
                             f"{count_of(facts.tied, 'row')} in {count_of(facts.tied_queries, 'query', 'queries')} "
                             "share their score with another row of their query: "
                             "the tie rule orders them (trec_eval: docno descending; knob ties)", facts.tied))
    if facts.first_not_numeric is not None:
        found.append(Finding(Severity.INFO, "rank_not_numeric", source, facts.first_not_numeric.line,
                             f"{facts.not_numeric} rows have a rank that is not an integer (first: "
                             f"{shown(str(facts.first_not_numeric.value))}); "
                             "trec_eval ignores the rank column, tools that read it cannot", facts.not_numeric))
    if facts.first_rise is not None:
        found.append(Finding(Severity.WARNING, "ranks_contradict_scores", source, facts.first_rise.line,
                             f"{count_of(facts.rises, 'row')} in "
                             f"{count_of(facts.contradicting.count, 'query', 'queries')} "
                             f"({facts.contradicting.text()}) score higher than the row ranked above: trec_eval "
                             "orders by score, tools that read the rank column give other numbers", facts.rises))
    found += _score_values(facts, source)
    if facts.extra_fields:
        found.append(Finding(Severity.INFO, "extra_fields", source, None,
                             f"{facts.extra_fields} lines have more than 6 fields; the rest are ignored, as trec_eval "
                             "ignores them", facts.extra_fields))
    return found


def _equal_and_tied(run: Run, qs: np.ndarray, ss: np.ndarray, order: np.ndarray, ids: list[str],
                    at: np.ndarray | None) -> tuple[Names, First | None, int, int, First | None]:
    """Queries of one score, and rows tied with another row of their query; ``qs`` grouped by
    query and ``ss`` sorted within each group (either way), ``order`` their rows."""
    starts = np.flatnonzero(np.concatenate([[True], qs[1:] != qs[:-1]]))
    sizes = np.diff(np.append(starts, len(qs)))
    equal = np.flatnonzero((ss[starts] == ss[starts + sizes - 1]) & (sizes > 1))  # sorted: the ends equal
    names, first_equal = Names(), None
    if len(equal):
        names = Names.of(ids[k] for k in qs[starts[equal]].tolist())
        first_equal = first(at, run.line_of, np.array([order[starts[equal]].min()]))
    same = (qs[1:] == qs[:-1]) & (ss[1:] == ss[:-1])
    tied = np.zeros(len(qs), dtype=bool)
    tied[1:] |= same
    tied[:-1] |= same
    n_tied = int(np.count_nonzero(tied))
    queries, first_tied = 0, None
    if n_tied:
        tied_q = qs[tied]  # grouped by query
        queries = int(np.count_nonzero(tied_q[1:] != tied_q[:-1])) + 1
        first_tied = first(at, run.line_of, np.array([order[tied].min()]))
    return names, first_equal, n_tied, queries, first_tied


def _score_values(facts: RunFacts, source: str) -> list[Finding]:
    """A run whose scores take a few whole values, as grades do (judgments given as a run?)."""
    if facts.rows < MIN_ROWS or not facts.whole or facts.values.values is None:
        return []
    listed = ", ".join(f"{v:g}" for v, _ in facts.values.values)
    return [Finding(Severity.WARNING, "looks_like_qrels", source, None,
                    f"every score is one of {listed}, as grades are: was a qrels file given as a RUN?", facts.rows)]


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
           starts: np.ndarray | None, at: np.ndarray | None) -> tuple[int, First | None, int, Names, First | None]:
    """Rows ranked below a row of their query with a lower score; ranks that are not integers."""
    numeric, rank = _rank_numbers(ranks)
    bad = np.flatnonzero(~numeric)
    first_bad = first(at, run.line_of, bad, _item(ranks, int(bad[0])) if len(bad) else None)
    keep = np.flatnonzero(numeric) if len(bad) else np.arange(len(q))
    if len(keep) < 2:
        return len(bad), first_bad, 0, Names(), None
    qk, sk, rk = q[keep], score[keep], rank[keep]
    same = qk[1:] == qk[:-1]
    if starts is not None and not (same & (rk[1:] < rk[:-1])).any():
        by_rank = keep  # one block per query, ranks ascending in it: file order is rank order
        qr, sr = qk, sk
    else:
        step = np.lexsort((keep, rk, qk))  # within a query by rank, ties by line
        by_rank, qr, sr = keep[step], qk[step], sk[step]
    rises = np.flatnonzero((qr[1:] == qr[:-1]) & (sr[1:] > sr[:-1])) + 1
    if not len(rises):
        return len(bad), first_bad, 0, Names(), None
    queries = qr[rises]
    n_queries = int(np.count_nonzero(queries[1:] != queries[:-1])) + 1  # grouped by query
    names = Names.of((ids[k] for k in distinct(queries).tolist()), n_queries)
    return len(bad), first_bad, len(rises), names, first(at, run.line_of, np.array([by_rank[rises].min()]))
