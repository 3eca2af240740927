"""The alignment stage: :func:`align` codes ids, resolves duplicates and joins the run to its
judgments, on two threads for a big run; every other module of the package does one of its steps.

On one thread (small runs) the steps run in order: query codes, document codes, the judgments'
sort and duplicates, the join, the run's duplicates. On two (runs past
:data:`~rankflavor.align.sizes.PARALLEL_ROWS` rows) the worker codes the documents and starts the
judged-row lookups while this thread codes the queries and sorts the judgments; then the join
(in parts) and the duplicate check (in slabs) are shared task by task
(:class:`~rankflavor.base.threads.SharedWork`). A hashed run in which some pair repeats (a duplicate
or a hash collision) is aligned again on exact codes.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial

import numpy as np

from rankflavor.align import sizes
from rankflavor.align.docs import (
    DocCodes,
    JudgedHashes,
    doc_codes,
    exact_doc_codes,
    judged_hashes,
    match_judged,
    one_array,
)
from rankflavor.align.duplicates import error_tally, pairs_repeat, repeat_checks, resolve_duplicates
from rankflavor.align.join import join, joined
from rankflavor.align.keys import pair_keys, sort_keys
from rankflavor.align.lookups import judged_row_lookups, looked_up
from rankflavor.align.queries import coded_queries, query_names
from rankflavor.align.values import Aligned, Counts
from rankflavor.base.kernels import block_starts
from rankflavor.base.threads import SharedWork
from rankflavor.io.docnos import canonical_integers
from rankflavor.io.tables import Qrels, Run


def align(qrels: Qrels, run: Run, duplicates: str = "error", chunk: bool = False) -> Aligned:
    """Encode ids, resolve duplicates under ``duplicates`` and join run rows to grades.

    Parameters
    ----------
    qrels, run : the judgments and the run.
    duplicates : what a repeated (query, doc) pair does: ``"error"`` (trec_eval's rule: refused
        where trec_eval would see it, :mod:`~rankflavor.align.duplicates`), ``"first"`` (its
        first row in file order is kept) or ``"best"`` (its highest score or grade).
    chunk : ``run`` is a chunk of a run file and ``qrels`` the judgments of its queries (an
        error counting duplicates says so).

    Returns
    -------
    Aligned
        The joined rows and their :class:`~rankflavor.align.Counts`.

    Raises
    ------
    InputError
        A duplicate that ``duplicates="error"`` refuses (a judgment of a query the run
        retrieves; run duplicates are left to each ranking, :func:`refuse_kept_duplicates`).

    >>> from rankflavor.io.inputs import as_qrels, as_run
    >>> a = align(as_qrels({"q1": {"d1": 2, "d2": 0}, "q3": {"d1": 1}}),
    ...           as_run({"q1": {"d1": 0.5, "d9": 0.9}, "q2": {"d1": 1.0}}))
    >>> a.query_ids.tolist(), a.evaluated.tolist(), a.counts.unjudged_retrieved
    (['q1', 'q2', 'q3'], [True, False, False], 1)
    """
    # A worker thread per call, not per process: a process forked after an evaluation would
    # inherit a module-level pool whose thread no longer exists, and wait on it forever.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="rankflavor-align") as pool:
        return _align(qrels, run, duplicates, pool, chunk=chunk)


def _two_threads_hashed(
    run: Run, qrels: Qrels, judged_job: Future[JudgedHashes | None], n_queries: int, pool: ThreadPoolExecutor
) -> tuple[DocCodes, np.ndarray | None]:
    """:func:`~rankflavor.align.docs.hashed_doc_codes` of the reader's hashes, a half of the run
    on each thread, and the rows whose docno is judged (the join's candidates)."""
    assert run.doc_hashes is not None
    hashes = one_array(run.doc_hashes)
    judged = judged_job.result()
    if judged is None:
        return (*exact_doc_codes(run.doc, qrels.doc), None, False), None
    run_code = np.empty(len(hashes), dtype=np.int64)
    half = len(run_code) // 2  # disjoint slices: each thread writes its own
    first = pool.submit(match_judged, run.doc, hashes, judged, n_queries, run_code, 0, half)
    second = match_judged(run.doc, hashes, judged, n_queries, run_code, half, len(run_code))
    # The rows matched to a judged docno are the join's candidates.
    return (run_code, judged.codes, judged.span(n_queries), None, True), np.concatenate([first.result(), second])


def _align(
    qrels: Qrels, run: Run, duplicates: str, pool: ThreadPoolExecutor, exact_docs: bool = False, chunk: bool = False
) -> Aligned:
    nr, nj = len(run), len(qrels)
    # The reader hashed the docnos (text) of a big run: coded on two threads (below).
    hashed_by_reader = run.doc_hashes is not None and nr > sizes.PARALLEL_ROWS and not exact_docs
    # Reading a big run's docnos as integers overlaps the query codes (NumPy and pyarrow's
    # cast release the GIL).
    run_integers: Future[np.ndarray | None] | tuple[np.ndarray, ...] | None = run.doc_integers
    if run_integers is None and nr > sizes.PARALLEL_ROWS and not exact_docs and not hashed_by_reader:
        run_integers = pool.submit(canonical_integers, run.doc)
    # Queries an input lists with no row (a ranking of nothing, a query nobody judged) are queries too.
    listed = frozenset(run.listed_empty) | frozenset(qrels.listed_empty)
    r_parts, j_parts, names = query_names(run.query, qrels.query, listed)
    code_queries = partial(coded_queries, r_parts, j_parts, names, run.query_runs, listed=listed)
    # Document codes (a pass over the run) are built on the worker while this thread codes the
    # queries (another pass); the names bound the number of queries from above.
    def doc_job() -> DocCodes:
        if exact_docs:
            return (*exact_doc_codes(run.doc, qrels.doc), None, False)
        return doc_codes(run, qrels.doc, len(names), run_integers, run.doc_hashes, run.doc_integer_range,
                         None if qrels.doc_canonical is None else qrels.doc_canonical.result())

    # Rows whose docno is judged for some query: the join searches only these.
    candidates: np.ndarray | None = None
    # With a worker (big runs): the doc codes and the row lookups it shares, as soon as it has them.
    lookups: Future[tuple[DocCodes, SharedWork | None]] = Future()
    worker: Future[None] | None = None
    if hashed_by_reader:
        # The judged docnos are encoded on the worker while this thread codes the queries, and
        # each thread then matches half of the run.
        judged_job = pool.submit(judged_hashes, qrels.doc)
        rq, jq, query_ids, rows_per_query, judgments_per_query, query_starts = code_queries()
        (rd, jd, n_docs, doc_offset, hashed), candidates = _two_threads_hashed(run, qrels, judged_job, len(names), pool)
    elif nr > sizes.PARALLEL_ROWS:
        # The worker then starts finding the rows whose docno is judged (a lookup per row)
        # while this thread codes the queries and sorts the judgments (below), then helps.
        def doc_rows_job() -> None:
            try:
                codes = doc_job()
                shared = judged_row_lookups(codes[0], codes[1])
            except BaseException as error:
                lookups.set_exception(error)
                raise
            lookups.set_result((codes, shared))
            if shared is not None:
                shared.run()

        worker = pool.submit(doc_rows_job)
        rq, jq, query_ids, rows_per_query, judgments_per_query, query_starts = code_queries()
        (rd, jd, n_docs, doc_offset, hashed), _ = lookups.result()
    else:
        rq, jq, query_ids, rows_per_query, judgments_per_query, query_starts = code_queries()
        rd, jd, n_docs, doc_offset, hashed = doc_job()
    jkey = pair_keys(jq, jd, n_docs)
    jgrade = qrels.grade
    # One sort of the judgments serves the duplicate check and the join.
    by_key, sorted_keys = sort_keys(jkey)
    dup_j = 0
    qrels_row: np.ndarray | None = None
    if len(sorted_keys) > 1 and bool((sorted_keys[1:] == sorted_keys[:-1]).any()):
        keep_j, dup_j = resolve_duplicates(jkey, jgrade, duplicates, qrels, (by_key, sorted_keys),
                                           refusable=rows_per_query[jq] > 0, tally=error_tally(run, chunk))
        if dup_j:  # (none under duplicates=error: those of queries absent from the run stay)
            # the judged documents stay the same: ``candidates`` holds
            jq, jd, jgrade, jkey, qrels_row = jq[keep_j], jd[keep_j], jgrade[keep_j], jkey[keep_j], keep_j
            by_key, sorted_keys = sort_keys(jkey)
    judgments = sorted_keys, jgrade[by_key]
    if worker is not None:
        row_lookups = lookups.result()[1]
        if row_lookups is not None:
            row_lookups.run()
        worker.result()  # both threads done: only now are the results final
        if row_lookups is not None:
            candidates = looked_up(row_lookups)
    repeated: bool | None = None
    if nr > sizes.PARALLEL_ROWS:
        # The duplicate check starts on the worker while this thread joins; this thread then
        # takes its share of the checks left.
        plan: Future[SharedWork] = Future()

        def shared_repeats() -> None:
            try:
                shared = SharedWork(repeat_checks(rq, rd, n_docs, query_starts), until=bool)
            except BaseException as error:
                plan.set_exception(error)
                raise
            plan.set_result(shared)
            shared.run()

        # The join, in parts the worker takes up once its checks are done.
        parts = [candidates] if candidates is None else np.array_split(candidates, max(1, len(candidates) // sizes.JOIN_ROWS))
        joins = SharedWork([partial(join, rq, rd, judgments, jd, n_docs, part) for part in parts])

        def shared_work() -> None:
            shared_repeats()
            joins.run()

        repeats = pool.submit(shared_work)
        joins.run()
        plan.result().run()
        repeats.result()  # both threads done: only now are ``stopped`` and the joins final
        repeated = plan.result().stopped
        judged_row, judged_grade = joined(joins.results)
    else:
        judged_row, judged_grade = join(rq, rd, judgments, jd, n_docs)
    if hashed and repeated is None:
        repeated = pairs_repeat(rq, rd, n_docs, query_starts)
    kept_r = 0
    if repeated is False:
        keep_r, dup_r = np.zeros(0, dtype=np.int64), 0
    elif hashed:  # a repeated pair or a hash collision: decide on exact codes
        return _align(qrels, run, duplicates, pool, exact_docs=True, chunk=chunk)
    elif duplicates == "error":  # left for each ranking to refuse (refuse_kept_duplicates)
        keep_r, dup_r = np.zeros(0, dtype=np.int64), 0
        keys = np.sort(pair_keys(rq, rd, n_docs))
        kept_r = int(np.count_nonzero(keys[1:] == keys[:-1]))
    else:  # small, or duplicates to resolve: on keys in row order
        keep_r, dup_r = resolve_duplicates(pair_keys(rq, rd, n_docs), run.score, duplicates, run,
                                           tally=error_tally(run, chunk))
    rscore = run.score
    nq = len(query_ids)
    if dup_r:  # rare: drop the resolved rows and join again
        rq, rd, rscore = rq[keep_r], rd[keep_r], rscore[keep_r]
        query_starts = block_starts(rq)
        judged_row, judged_grade = join(rq, rd, judgments, jd, n_docs)
        rows_per_query = np.bincount(rq, minlength=nq)

    in_run = rows_per_query > 0
    if run.listed_empty:  # listed with no document: answered with nothing, not missing
        in_run |= _named(query_ids, run.listed_empty)
    in_qrels = judgments_per_query > 0  # resolving duplicate judgments leaves every query judged
    # Named by the judgments with no judgment: the missing policy says whether it is one of theirs.
    listed_unjudged = _named(query_ids, qrels.listed_empty) & ~in_qrels
    evaluated = in_run & in_qrels
    rows_of_unjudged_queries = int(rows_per_query[~in_qrels].sum())
    label_kinds, label_counts = _label_counts(qrels, jq, qrels_row, nq)
    counts = Counts(
        run_rows=nr,
        qrels_rows=nj,
        queries_in_run=int(in_run.sum()),
        queries_in_qrels=int(in_qrels.sum()),
        queries_evaluated=int(evaluated.sum()),
        queries_only_in_run=int((in_run & ~in_qrels & ~listed_unjudged).sum()),
        queries_only_in_qrels=int((in_qrels & ~in_run).sum()),
        run_duplicates_resolved=dup_r,
        qrels_duplicates_resolved=dup_j,
        # a judged row always belongs to a judged query
        unjudged_retrieved=len(rq) - rows_of_unjudged_queries - len(judged_row),
        negative_grades=int((jgrade < 0).sum()),
        negative_grades_retrieved=int((judged_grade < 0).sum()),
        run_rows_of_unjudged_queries=rows_of_unjudged_queries,
        comment_lines=qrels.comments + run.comments,
        blank_lines=qrels.blank_lines + run.blank_lines,
        run_lines_with_extra_fields=run.extra_fields,
        run_duplicates_kept=kept_r,
        queries_listed_unjudged=int(listed_unjudged.sum()),
        queries_listed_unjudged_in_run=int((listed_unjudged & in_run).sum()),
    )
    return Aligned(
        query_ids=np.array(query_ids, dtype=object),
        in_run=in_run,
        in_qrels=in_qrels,
        run_q=rq,
        query_starts=query_starts,
        run_doc=rd.astype(np.int64, copy=False),
        run_score=rscore,
        input_row=keep_r.astype(np.int64, copy=False) if dup_r else None,
        judged_row=judged_row,
        judged_grade=judged_grade,
        qrels_q=jq,
        qrels_grade=jgrade,
        qrels_row=qrels_row,
        run=run,
        doc_value_offset=doc_offset,
        counts=counts,
        qrels_source=qrels.source,
        chunk=chunk,
        # (a row dropped as a duplicate leaves the rest of its block as it was)
        scores_descend=run.scores_descend,
        qrels_doc=qrels.doc,  # for ideal=as_supplied's canonical order (Aligned.qrels_docno_order)
        listed_unjudged=listed_unjudged,
        label_kinds=label_kinds,
        label_counts=label_counts,
    )


def _label_counts(qrels: Qrels, jq: np.ndarray, qrels_row: np.ndarray | None, nq: int
                  ) -> tuple[tuple[str, ...], np.ndarray | None]:
    """The judgments (duplicates resolved: ``qrels_row``) per query and kind of label source, for
    :class:`Aligned`; nothing when the judgments name no source (no work at all)."""
    if qrels.label_source is None:
        return (), None
    from rankflavor.io.labels.sources import kind_codes, per_query

    kinds, codes = kind_codes(qrels.label_source)
    if qrels_row is not None:
        codes = codes[qrels_row]
    return kinds, per_query(kinds, codes, jq, nq)


def _named(query_ids: list[str], names: tuple[str, ...]) -> np.ndarray:
    """Per query code: is its id among ``names``."""
    if not names:
        return np.zeros(len(query_ids), dtype=bool)
    return np.isin(np.array(query_ids, dtype=object), np.array(names, dtype=object))
