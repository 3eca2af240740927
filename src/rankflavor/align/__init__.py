"""Alignment: join a run to its judgments once. Ids become integer codes, duplicates are
resolved, and everything dropped or resolved is counted.

Query codes are assigned in byte order of the id strings, so sorting by code is sorting by
``strcmp`` (trec_eval's topic order). Document codes are identities only (no order).

The public API is :func:`align` (the whole stage), its result :class:`Aligned` with its
:class:`Counts`, and :func:`refuse_kept_duplicates` (what a ranking calls on the rows it keeps
under ``duplicates=error``). The modules, one step each:

``stage``
    :func:`align`: the steps in order, on two threads for a big run.
``values``
    :class:`Aligned` (immutable: read-only arrays, compared by identity) and :class:`Counts`.
``queries``
    query codes from the readers' dictionary parts (:func:`~.queries.query_names`,
    :func:`~.queries.coded_queries`), the first row of each query's block.
``docs``
    document codes: canonical integer docnos as their values, text docnos of a big run from
    64-bit hashes (matched exactly to the judged ones), or one dictionary of every docno.
``lookups``
    the judged-docno bitset (:func:`~.lookups.bitset`, :func:`~.lookups.lookup`) and the run
    rows whose document is judged for some query (:func:`~.lookups.judged_doc_rows`).
``keys``
    one int64 key per (query, doc) pair, and their stable sort.
``join``
    the run rows whose (query, doc) pair is judged, and their grades.
``duplicates``
    repeated pairs: the checks (in slabs two threads share), the ``error``/``first``/``best``
    policies (:func:`~.duplicates.resolve_duplicates`), and trec_eval's rule that
    ``duplicates=error`` refuses a run duplicate only where both rows are within a judged
    query's top ``depth`` rows (:func:`refuse_kept_duplicates`).
``sizes``
    the thresholds and block sizes the steps read at call time (never what they compute).

What :class:`Counts` guarantees (nothing is dropped uncounted):

* ``run_rows`` and ``qrels_rows`` are the rows read, ``comment_lines``, ``blank_lines`` and
  ``run_lines_with_extra_fields`` the lines read past;
* every aligned run row is judged (``len(judged_row)``), or of a query without judgments
  (``run_rows_of_unjudged_queries``), or ``unjudged_retrieved``: these sum to ``run_rows`` less
  ``run_duplicates_resolved``, the rows ``duplicates=first/best`` removed;
  ``qrels_duplicates_resolved`` likewise counts the judgments removed;
* ``run_duplicates_kept``: repeats that ``duplicates=error`` left for each ranking to refuse
  (where trec_eval would see them) rather than removed;
* every query is exactly one of ``queries_evaluated`` (in the run and judged),
  ``queries_only_in_qrels``, ``queries_only_in_run`` and ``queries_listed_unjudged`` (named by
  the judgments with no judgment, in the run or not: ``queries_listed_unjudged_in_run``); a
  query an input lists with no row (a ranking of nothing, a query nobody judged) is a query
  like any other, never dropped;
* ``negative_grades`` (of the judgments) and ``negative_grades_retrieved`` (of the judged rows)
  are kept as they are: the flavor's ``negatives`` policy decides what they mean.
"""

from rankflavor.align.duplicates import refuse_kept_duplicates
from rankflavor.align.stage import align
from rankflavor.align.values import Aligned, Counts

__all__ = ["Aligned", "Counts", "align", "refuse_kept_duplicates"]
