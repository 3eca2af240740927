"""How a run meets the judgments: common queries, queries on one side only, judged rows, and run
docnos no judgment names (ids from another collection, or another id scheme: ``D123`` for
``123``).

Only queries on both sides are scored; ``eval`` counts the others and ``missing`` says what a
judged query the run lacks is worth (trec_eval without ``-c`` leaves it out).
"""

from __future__ import annotations

import numpy as np

from ..align.keys import pair_keys
from ..kernels import distinct
from ..tables import Qrels, Run
from .codes import Codes, distinct_count
from .findings import Finding, Overlap, Severity, count_of, shown

#: Query ids a message names before "...".
NAMED = 5


def check_overlap(qrels: Qrels, run: Run, codes: Codes) -> tuple[Overlap, list[Finding]]:
    """The :class:`Overlap` of ``run`` with ``qrels`` and its findings; ``codes`` of both
    (:func:`~rankflavor.check.codes.run_codes`).

    ``never_judged_docs`` counts codes: exact, but for a big text run (hashed codes, see
    :class:`~rankflavor.check.codes.Codes`) two unjudged docnos may share one by a hash
    collision (about one chance in a hundred at ten million distinct docnos), one fewer counted.
    """
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
    judged_doc = np.zeros(span, dtype=bool) if span <= 8 * (len(rdoc) + len(jdoc)) + 1024 else None
    if judged_doc is not None:
        judged_doc[jdoc] = True
        never = distinct_count(rdoc[~judged_doc[rdoc]], span)
    else:
        docs = distinct(jdoc)
        pos = np.minimum(np.searchsorted(docs, rdoc), max(len(docs) - 1, 0))
        never = distinct_count(rdoc[docs[pos] != rdoc] if len(docs) else rdoc, span)
    overlap = Overlap(run.source, int(common.sum()), int((in_qrels & ~in_run).sum()), int((in_run & ~in_qrels).sum()),
                      len(run), int(row_common.sum()), int(judged.sum()), never)
    found = _queries(qrels, run, ids, in_run, in_qrels, common)
    found += _judged(run, overlap, rq[row_common], judged, n, common, ids)
    return overlap, found


def _names(ids: list[str], mask: np.ndarray) -> str:
    codes = np.flatnonzero(mask)
    return ", ".join(shown(ids[k]) for k in codes[:NAMED].tolist()) + (", ..." if len(codes) > NAMED else "")


def _queries(qrels: Qrels, run: Run, ids: list[str], in_run: np.ndarray, in_qrels: np.ndarray,
             common: np.ndarray) -> list[Finding]:
    found = []
    if not common.any():
        return [Finding(Severity.ERROR, "no_common_query", run.source, None,
                        f"no query of the run is judged in {qrels.source} (run: {_names(ids, in_run)}; qrels: "
                        f"{_names(ids, in_qrels)}): eval has nothing to score", int(in_run.sum()))]
    only_qrels, only_run = in_qrels & ~in_run, in_run & ~in_qrels
    if only_qrels.any():
        found.append(Finding(Severity.WARNING, "qrels_only_queries", run.source, None,
                             f"{count_of(int(only_qrels.sum()), 'judged query', 'judged queries')} not in the run "
                             f"({_names(ids, only_qrels)}): "
                             "scored 0 under missing=zero (trec_eval -c), left out otherwise", int(only_qrels.sum())))
    if only_run.any():
        found.append(Finding(Severity.WARNING, "run_only_queries", run.source, None,
                             f"{count_of(int(only_run.sum()), 'run query', 'run queries')} with no judgment "
                             f"({_names(ids, only_run)}): "
                             "no measure scores them", int(only_run.sum())))
    return found


def _judged(run: Run, overlap: Overlap, rq: np.ndarray, judged: np.ndarray, n: int, common: np.ndarray,
            ids: list[str]) -> list[Finding]:
    if overlap.rows_in_common == 0:
        return []
    found = []
    share = overlap.judged_share or 0.0
    if overlap.judged_rows == 0:
        found.append(Finding(Severity.WARNING, "no_judged_docs", run.source, None,
                             f"none of the run's {overlap.rows_in_common} rows in judged queries is judged: do the "
                             "docnos follow the judgments' id scheme?", overlap.rows_in_common))
        return found
    found.append(Finding(Severity.INFO, "judged_coverage", run.source, None,
                         f"{overlap.judged_rows} of {overlap.rows_in_common} rows in judged queries are judged "
                         f"({share:.1%}); {overlap.unjudged_rows} are not (unjudged: knob unjudged)",
                         overlap.judged_rows))
    judged_per_query = np.bincount(rq, weights=judged, minlength=n)
    none = common & (judged_per_query == 0)
    if none.any():
        found.append(Finding(Severity.WARNING, "queries_none_judged", run.source, None,
                             f"{count_of(int(none.sum()), 'query', 'queries')} retrieving no judged document "
                             f"({_names(ids, none)}): "
                             "their scores are 0 whatever the ranking", int(none.sum())))
    if overlap.never_judged_docs:
        found.append(Finding(Severity.INFO, "never_judged_docs", run.source, None,
                             f"{overlap.never_judged_docs} distinct run docnos are judged for no query at all",
                             overlap.never_judged_docs))
    return found
