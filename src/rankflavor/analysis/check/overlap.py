"""How a run meets the judgments: common queries, queries on one side only, judged rows, and run
docnos no judgment names (ids from another collection, or another id scheme: ``D123`` for
``123``).

Only queries on both sides are scored; ``eval`` counts the others and ``missing`` says what a
judged query the run lacks is worth (trec_eval without ``-c`` leaves it out).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rankflavor.align.keys import pair_keys
from rankflavor.analysis.check.codes import Codes, distinct_count
from rankflavor.analysis.check.facts import NAMED, Names
from rankflavor.analysis.check.findings import Finding, Overlap, Severity, count_of
from rankflavor.base.kernels import distinct
from rankflavor.io.tables import Qrels, Run


def check_overlap(qrels: Qrels, run: Run, codes: Codes) -> tuple[Overlap, list[Finding]]:
    """The :class:`Overlap` of ``run`` with ``qrels`` and its findings; ``codes`` of both
    (:func:`~rankflavor.analysis.check.codes.run_codes`).

    ``never_judged_docs`` counts codes: exact, but for a big text run (hashed codes, see
    :class:`~rankflavor.analysis.check.codes.Codes`) two unjudged docnos may share one by a hash
    collision (about one chance in a hundred at ten million distinct docnos), one fewer counted.
    """
    return overlap_findings(overlap_facts(codes), run.source, qrels.source, never_judged(codes))


def never_judged(codes: Codes) -> int:
    """Distinct run docnos no judgment names, for any query (``codes`` of both sides)."""
    rdoc, jdoc, span = codes.rdoc, codes.jdoc, max(codes.span, 1)
    if span <= 8 * (len(rdoc) + len(jdoc)) + 1024:
        judged_doc = np.zeros(span, dtype=bool)
        judged_doc[jdoc] = True
        return distinct_count(rdoc[~judged_doc[rdoc]], span)
    docs = distinct(jdoc)
    pos = np.minimum(np.searchsorted(docs, rdoc), max(len(docs) - 1, 0))
    return distinct_count(rdoc[docs[pos] != rdoc] if len(docs) else rdoc, span)


@dataclass(frozen=True)
class OverlapFacts:
    """What :func:`overlap_facts` finds of a run against the judgments, but for the docnos judged
    for no query (a count over the whole input, not over queries)."""

    common: int
    run_queries: Names
    qrels_queries: Names
    qrels_only: Names
    run_only: Names
    run_rows: int
    rows_in_common: int
    judged_rows: int
    none_judged: Names


def overlap_facts(codes: Codes) -> OverlapFacts:
    """The queries of a run and the judgments (``codes`` of both), side by side, and the run's
    rows in common queries and judged there."""
    rq, jq, ids, rdoc, jdoc, span = codes.rq, codes.jq, codes.ids, codes.rdoc, codes.jdoc, max(codes.span, 1)
    n = len(ids)
    in_run = np.bincount(rq, minlength=n) > 0
    in_qrels = np.bincount(jq, minlength=n) > 0
    common = in_run & in_qrels
    judged_keys = distinct(pair_keys(jq, jdoc, span))
    row_common = common[rq]
    keys = pair_keys(rq[row_common], rdoc[row_common], span)
    at = np.minimum(np.searchsorted(judged_keys, keys), max(len(judged_keys) - 1, 0))
    judged = judged_keys[at] == keys if len(judged_keys) else np.zeros(len(keys), dtype=bool)
    judged_per_query = np.bincount(rq[row_common], weights=judged, minlength=n)
    return OverlapFacts(int(common.sum()), _names(ids, in_run), _names(ids, in_qrels), _names(ids, in_qrels & ~in_run),
                        _names(ids, in_run & ~in_qrels), len(rq), int(row_common.sum()), int(judged.sum()),
                        _names(ids, common & (judged_per_query == 0)))


def overlap_findings(facts: OverlapFacts, run: str, qrels: str, never: int) -> tuple[Overlap, list[Finding]]:
    """The :class:`Overlap` of :func:`overlap_facts` and ``never`` (distinct run docnos judged for
    no query), and its findings."""
    overlap = Overlap(run, facts.common, facts.qrels_only.count, facts.run_only.count, facts.run_rows,
                      facts.rows_in_common, facts.judged_rows, never)
    return overlap, _queries(facts, run, qrels) + _judged(facts, run, overlap)


def _names(ids: list[str], mask: np.ndarray) -> Names:
    codes = np.flatnonzero(mask)  # codes are in byte order: the first are the first named
    return Names.of((ids[k] for k in codes[:NAMED].tolist()), len(codes))


def _queries(facts: OverlapFacts, run: str, qrels: str) -> list[Finding]:
    found = []
    if not facts.common:
        return [Finding(Severity.ERROR, "no_common_query", run, None,
                        f"no query of the run is judged in {qrels} (run: {facts.run_queries.text()}; qrels: "
                        f"{facts.qrels_queries.text()}): eval has nothing to score", facts.run_queries.count)]
    only_qrels, only_run = facts.qrels_only, facts.run_only
    if only_qrels.count:
        found.append(Finding(Severity.WARNING, "qrels_only_queries", run, None,
                             f"{count_of(only_qrels.count, 'judged query', 'judged queries')} not in the run "
                             f"({only_qrels.text()}): "
                             "scored 0 under missing=zero (trec_eval -c), left out otherwise", only_qrels.count))
    if only_run.count:
        found.append(Finding(Severity.WARNING, "run_only_queries", run, None,
                             f"{count_of(only_run.count, 'run query', 'run queries')} with no judgment "
                             f"({only_run.text()}): "
                             "no measure scores them", only_run.count))
    return found


def _judged(facts: OverlapFacts, run: str, overlap: Overlap) -> list[Finding]:
    if overlap.rows_in_common == 0:
        return []
    found = []
    share = overlap.judged_share or 0.0
    if overlap.judged_rows == 0:
        found.append(Finding(Severity.WARNING, "no_judged_docs", run, None,
                             f"none of the run's {overlap.rows_in_common} rows in judged queries is judged: do the "
                             "docnos follow the judgments' id scheme?", overlap.rows_in_common))
        return found
    found.append(Finding(Severity.INFO, "judged_coverage", run, None,
                         f"{overlap.judged_rows} of {overlap.rows_in_common} rows in judged queries are judged "
                         f"({share:.1%}); {overlap.unjudged_rows} are not (unjudged: knob unjudged)",
                         overlap.judged_rows))
    none = facts.none_judged
    if none.count:
        found.append(Finding(Severity.WARNING, "queries_none_judged", run, None,
                             f"{count_of(none.count, 'query', 'queries')} retrieving no judged document "
                             f"({none.text()}): "
                             "their scores are 0 whatever the ranking", none.count))
    if overlap.never_judged_docs:
        found.append(Finding(Severity.INFO, "never_judged_docs", run, None,
                             f"{overlap.never_judged_docs} distinct run docnos are judged for no query at all",
                             overlap.never_judged_docs))
    return found
