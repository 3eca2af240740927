"""Explain one query's NDCG (or DCG) under one flavor, position by position.

Any metric whose spec carries a :class:`~rankflavor.metrics.registry.Breakdown` (a sum of gain /
discount over the ranks) can be explained; one that divides by an ideal list
(``MetricSpec.uses_ideal``) shows that list too.

For each ranked document: its grade (or unjudged), gain, discount, contribution and running DCG;
the ideal list with its own contributions; DCG, IDCG and NDCG; tie groups; and every document the
flavor left out, with the reason (duplicate, below ``depth``, unjudged under ``unjudged=condensed``,
below the cutoff).

The numbers come from the engine itself: the query's rows are aligned and sorted by
:mod:`rankflavor.align` and :mod:`rankflavor.order` with the measure's flavor, gains and
discounts come from :mod:`rankflavor.base.kernels` and the metric's breakdown, the ideal list is the
one the metric's kernel divides by (``Breakdown.ideal_list``: nothing of it is derived here), and
the final value comes from the metric kernel and :func:`rankflavor.engine.aggregate.aggregate`. Running sums are
accumulated rank by rank like the kernels' segment sums, so DCG, IDCG and NDCG equal the values
:func:`rankflavor.evaluate` reports for that query, bit for bit.

References
----------
.. [JK02] K. Järvelin, J. Kekäläinen. "Cumulated gain-based evaluation of IR techniques".
   ACM TOIS 20(4):422-446, 2002.
.. [MN08] F. McSherry, M. Najork. "Computing Information Retrieval Performance Measures
   Efficiently in the Presence of Tied Scores". ECIR 2008 (``ties=averaged``).

Examples
--------
>>> qrels = {"q1": {"a": 2, "b": 0, "c": 1}}
>>> run = {"q1": {"a": 0.2, "b": 0.9, "c": 0.5}}
>>> e = explain(qrels, run, "q1", "ndcg@3")
>>> [(r.rank, r.doc, r.gain, round(r.contribution, 4)) for r in e.rows]
[(1, 'b', 0.0, 0.0), (2, 'c', 1.0, 0.6309), (3, 'a', 2.0, 1.0)]
>>> round(e.dcg, 4), round(e.idcg, 4), round(e.ndcg, 4)
(1.6309, 2.6309, 0.6199)
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np
import pyarrow.compute as pc

from rankflavor.align import Aligned, align
from rankflavor.analysis.explain.result import Explanation, IdealSlot, Ignored, Position
from rankflavor.engine.aggregate import aggregate, judged_queries
from rankflavor.engine.plan import check_duplicates, run_ordered
from rankflavor.errors import EvaluationError, UsageError, did_you_mean
from rankflavor.flavor.flavor import Flavor, format_number
from rankflavor.io.columns import as_numpy, plain_strings, string_array, take
from rankflavor.io.inputs import as_qrels, as_run
from rankflavor.io.tables import Qrels, Run
from rankflavor.metrics import registry
from rankflavor.metrics.gains import discount_denominators
from rankflavor.metrics.measure import Measure
from rankflavor.metrics.registry import IdealList
from rankflavor.order import Ordering, Ranked, Ranker
from rankflavor.order import grades as grades_policy

#: Metrics explain can break down position by position (the registry's explainable metrics).
EXPLAINED: tuple[str, ...] = tuple(registry.explainable())

TIE_RULES = {
    "docno_desc": "equal scores ordered by docno, descending (trec_eval)",
    "docno_asc": "equal scores ordered by docno, ascending",
    "input_order": "equal scores kept in file order",
    "averaged": "each tie group's rows earn the group's mean gain (McSherry-Najork)",
    "pessimistic": "equal scores ordered lowest grade first",
    "optimistic": "equal scores ordered highest grade first",
}


def explain(
    qrels: Any,
    run: Any,
    query: str,
    measure: str | Measure = "ndcg@10",
    *,
    preset: str | None = None,
    **knobs: Any,
) -> Explanation:
    """Break one query's NDCG (or DCG) down position by position under one flavor.

    Parameters
    ----------
    qrels, run : path, dict or DataFrame
        As for :func:`rankflavor.evaluate`.
    query : str
        The query id (as written in the files).
    measure : str or Measure, default ``"ndcg@10"``
        One ndcg or dcg measure: canonical (``ndcg@10[gain=exp2]``), a dialect name
        (``trec_eval:ndcg_cut.10``) or a :class:`Measure`.
    preset : str, optional
        Preset whose flavor and dialect ``measure`` uses.
    **knobs
        Flavor knobs applied to the measure.

    Returns
    -------
    Explanation
        Per-position rows, the ideal list, DCG, IDCG, NDCG, ignored documents and notes.
    """
    from rankflavor.analysis.spread.api import one_measure

    m = one_measure(measure, preset, knobs)
    return explain_tables(as_qrels(qrels), as_run(run), str(query), m)


def _only_query(aligned: Aligned, code: int) -> Aligned:
    """The aligned data of one query; every other query is neither in the run nor in the qrels."""
    rows = aligned.run_q == code
    judged = aligned.qrels_q == code
    only = np.arange(aligned.n_queries) == code
    return replace(
        aligned,
        in_run=aligned.in_run & only,
        in_qrels=aligned.in_qrels & only,
        listed_unjudged=None if aligned.listed_unjudged is None else aligned.listed_unjudged & only,
        run_q=aligned.run_q[rows],
        query_starts=None,  # found again when needed
        run_doc=aligned.run_doc[rows],
        run_score=aligned.run_score[rows],
        input_row=aligned.input_rows(np.flatnonzero(rows)),
        judged_row=(np.cumsum(rows) - 1)[aligned.judged_row[rows[aligned.judged_row]]],
        judged_grade=aligned.judged_grade[rows[aligned.judged_row]],
        qrels_q=aligned.qrels_q[judged],
        qrels_grade=aligned.qrels_grade[judged],
        qrels_row=aligned.qrels_rows(np.flatnonzero(judged)),
    )


def _query_code(aligned: Aligned, query: str, flavor: Flavor) -> int:
    found = np.flatnonzero(aligned.query_ids == query)
    if len(found) == 0:
        ids = [str(q) for q in aligned.query_ids]
        raise UsageError(f"query: {query!r} is in neither the run nor the qrels ({len(ids)} queries known)."
                         + did_you_mean(query, ids))
    code = int(found[0])
    if judged_queries(aligned, flavor)[code]:
        return code
    if aligned.listed_unjudged is not None and aligned.listed_unjudged[code]:
        if not aligned.in_run[code] or flavor.run_only != "include":
            raise UsageError(f"query: {query!r} is listed by the qrels with no judgment, and missing=skip leaves such "
                             "a query out of the judgments, so evaluate() leaves it out (missing=zero would score it)")
        return code
    if getattr(flavor, "run_only", "skip") != "include":
        raise UsageError(f"query: {query!r} is only in the run; it has no judgments, so evaluate() leaves it out "
                         "(run_only=include would score it)")
    return code


def explain_tables(qrels: Qrels, run: Run, query: str, measure: Measure) -> Explanation:
    """:func:`explain` on tables already read."""
    measure = run_ordered(run, measure)  # a run of ranks alone: order=rank in the flavor shown
    spec = measure.spec
    if spec.breakdown is None:
        raise UsageError(f"measure: explain breaks down {' and '.join(registry.explainable())} by position; "
                         f"received {measure.name}")
    f = measure.flavor
    k = measure.k
    full = align(qrels, run, duplicates=f.duplicates)
    code = _query_code(full, query, f)
    aligned = _only_query(full, code)
    ranker = Ranker(aligned)
    ranked = ranker.rank(Ordering.of(f))  # exact: which document sits at each rank
    check_duplicates(ranked)
    # Docno of each of the query's aligned rows (run_doc_strings is indexed by the input row).
    docs = [str(d) for d in take(aligned.run_doc_strings, aligned.run_row).to_pylist()]
    notes: list[str] = []

    # Per-row numbers, computed by the engine's own gain, tie-averaging and discount functions.
    denom = discount_denominators(f, max(len(ranked.q), 1))
    gain_fn = spec.breakdown.gain_of(measure)
    gain = ranked.gains(gain_fn)
    # The same gains before tie-averaging: the kernel's own gain rule on each row alone.
    raw_gain = gain_fn(ranked.grade, ranked.judged, ranked.pooled)
    in_cut = np.ones(len(gain), dtype=bool) if k is None else ranked.rank <= k
    contribution = np.where(in_cut, gain / denom[ranked.rank], 0.0)
    # Accumulate in rank order, as the kernel's segment sum does, so the last value is DCG exactly.
    cumulative = np.cumsum(contribution)
    dcg = float(cumulative[-1]) if len(cumulative) else 0.0

    assert ranked.row is not None  # Ranker.rank always records it
    row_idx = ranked.row
    sizes = np.bincount(ranked.tie_group) if len(ranked.tie_group) else np.zeros(0, dtype=np.int64)
    labels: dict[int, str] = {}
    rows: list[Position] = []
    grades = aligned.run_grade
    for i in range(len(row_idx)):
        j = int(row_idx[i])
        group = int(ranked.tie_group[i])
        tie = None
        if sizes[group] > 1:
            tie = labels.setdefault(group, f"T{len(labels) + 1}")
        grade = None if np.isnan(grades[j]) else float(grades[j])
        rows.append(Position(
            rank=int(ranked.rank[i]), doc=docs[j], score=float(aligned.run_score[j]),
            grade=grade, judged=bool(ranked.judged[i]), raw_gain=float(raw_gain[i]), gain=float(gain[i]),
            discount=float(denom[ranked.rank[i]]), contribution=float(contribution[i]),
            cumulative=float(cumulative[i]), in_cut=bool(in_cut[i]), tie_group=tie,
            line=run.line_of(int(aligned.run_row[j])),
        ))
    if labels:
        notes.append(f"ties={f.ties}: {TIE_RULES.get(f.ties, f.ties)}; {len(labels)} tie group(s) among the kept rows")
    negatives = sum(1 for r in rows if r.grade is not None and not r.judged)
    if negatives:
        notes.append(f"{negatives} document(s) have a negative grade, treated as unjudged (negatives={f.negatives})")
    fractional = sum(1 for r in rows if r.grade is not None and r.grade != math.trunc(r.grade))
    if fractional and f.fractional == "truncate":
        notes.append(f"{fractional} document(s) have a fractional grade, gaining its whole part "
                     "(fractional=truncate: trec_eval's atol)")

    ignored = _ignored(run, aligned, docs, ranker, ranked, measure, query, rows)

    idcg: float | None = None
    ideal: list[IdealSlot] = []
    cut_slots: int | None = None
    if spec.uses_ideal and spec.breakdown.ideal_cut is not None and spec.breakdown.ideal_list is not None:
        cut = float(spec.breakdown.ideal_cut(ranked, measure)[code])
        cut_slots = None if math.isinf(cut) else int(cut)
        idcg, ideal = _ideal(qrels, aligned, ranked, spec.breakdown.ideal_list(ranked, measure), measure, code,
                             cut_slots, rows, notes)

    values, empty = measure.spec.compute(ranked, measure)
    status = "missing" if not full.in_run[code] else ("empty" if empty[code] else "ok")
    if judged_queries(full, f)[code] and not full.in_qrels[code]:
        notes.append(f"the qrels list the query with no judgment; missing={f.missing} makes it one of theirs, "
                     "with nothing relevant")
    elif not full.in_qrels[code]:
        notes.append("the query has no judgments; run_only=include scores it as a query with nothing relevant")
    value: float | None
    try:
        result = aggregate(measure, values, empty, aligned)
        hit = np.flatnonzero(result.queries == query)
        value = float(result.values[hit[0]]) if len(hit) else None
        if value is None:
            notes.append(f"this query is left out of the mean ({'missing' if status == 'missing' else 'empty'}="
                         f"{f.missing if status == 'missing' else f.empty})")
    except EvaluationError as exc:
        value = None
        notes.append(f"evaluate() refuses this query: {exc}")
    if status == "empty" and value is not None:
        notes.append(f"IDCG is 0 (nothing relevant): value set by empty={f.empty}")
    if status == "missing" and value is not None:
        notes.append(f"the run does not answer this query: value set by missing={f.missing}")
    ndcg = value if spec.uses_ideal else None
    return Explanation(query, measure, status, dcg, idcg, ndcg, value, cut_slots, tuple(rows), tuple(ideal),
                       tuple(ignored), tuple(notes))


def _ideal(qrels: Qrels, aligned: Aligned, ranked: Ranked, ideal: IdealList, measure: Measure, code: int,
           cut_slots: int | None, rows: list[Position], notes: list[str]) -> tuple[float, list[IdealSlot]]:
    """The query's slots of the metric's own ideal list (``ideal``, the list its kernel divides
    by), and its DCG accumulated slot by slot as the kernel's segment sum adds them."""
    f = measure.flavor
    mine = np.flatnonzero(ideal.q == code)
    counted = mine[ideal.counted[mine]]
    if len(counted) < len(mine):
        notes.append(f"ideal list cut at {cut_slots} slot(s) (ideal_cut={f.ideal_cut}); "
                     f"{len(mine) - len(counted)} more candidate(s) left out")
    slots, values, index = ideal.slot[counted], ideal.value[counted], ideal.index[counted]
    grades: list[float | None]
    docs: list[str | None]
    if ideal.of == "judgments":  # the query's usable judgments: their grades, and their docs in the qrels
        grades = ranked.jgrade[index].tolist()
        truncate = grades_policy.truncates(ranked.ordering, grades_policy.count_fractional(aligned.qrels_grade))
        usable = grades_policy.usable_judgments(aligned, ranked.ordering, truncate)
        docs = [str(d) for d in take(qrels.doc, aligned.qrels_rows(usable[index])).to_pylist()]
    elif ideal.of == "rows":  # ranked rows
        grades = ranked.grade[index].tolist()
        docs = [rows[i].doc for i in index.tolist()]
    else:  # no document: the top grade in every slot
        grades = [f.top_grade] * len(slots)
        docs = [None] * len(slots)
        notes.append(f"ideal=max: grade {format_number(f.top_grade or 0.0)} in every slot")
    denom = discount_denominators(f, int(slots.max(initial=1)))
    contrib = values / denom[slots]
    cumulative = np.cumsum(contrib)
    idcg = float(cumulative[-1]) if len(cumulative) else 0.0
    retrieved_rank = {r.doc: r.rank for r in rows}
    slots_out = [
        IdealSlot(int(r), d, g, float(v), float(denom[r]), float(c), float(cu),
                  retrieved_rank.get(d) if d is not None else None)
        for r, d, g, v, c, cu in zip(slots, docs, grades, values, contrib, cumulative, strict=True)
    ]
    return idcg, slots_out


def _ignored(run: Run, aligned: Aligned, docs: list[str], ranker: Ranker, ranked: Ranked, measure: Measure,
             query: str, rows: list[Position]) -> list[Ignored]:
    """Every run line of the query that does not enter DCG, with the reason, in the order the flavor ranks them."""
    f = measure.flavor
    out: list[Ignored] = []

    def ignored_row(j: int, kind: str, reason: str) -> Ignored:
        g = aligned.run_grade[j]
        return Ignored(docs[j], float(aligned.run_score[j]), None if np.isnan(g) else float(g), kind, reason,
                       run.line_of(int(aligned.run_row[j])))

    # 1. Duplicate lines resolved away by align (duplicates=first|best).
    mask = as_numpy(pc.equal(plain_strings(run.query), string_array([query])[0]))
    dropped = np.setdiff1d(np.flatnonzero(mask), aligned.run_row)
    for row in dropped.tolist():
        out.append(Ignored(str(run.doc[row].as_py()), float(run.score[row]), None, "duplicate",
                           f"duplicate line for this document (duplicates={f.duplicates}: another line kept)",
                           run.line_of(row)))
    # 2. Rows the ranking removed: self-hits, then below depth, then unjudged under condensing,
    #    placed by their position in the order before depth and condensing apply.
    assert ranked.row is not None  # Ranker.rank always records it
    kept = set(ranked.row.tolist())
    if len(kept) < len(aligned.run_q):
        relaxed = ranked.ordering.relaxed()
        # Every row, a duplicate below the depth cut too (the ranking proper refused any above it).
        before = ranker.rank(replace(relaxed, self_hits="keep"), duplicates=False)
        assert before.row is not None
        depth = f.depth_limit
        pos = 0
        self_hit: set[int] = set()
        if relaxed.self_hits != "keep":
            without = ranker.rank(relaxed, duplicates=False)
            assert without.row is not None
            self_hit = set(before.row.tolist()) - set(without.row.tolist())
        for j in before.row.tolist():
            if j in self_hit:
                out.append(ignored_row(j, "self_hit", f"document id equals the query id (self_hits={f.self_hits})"))
                continue
            if j not in kept:
                if depth is not None and pos >= depth:
                    out.append(ignored_row(j, "depth", f"below depth {depth} (depth={f.depth})"))
                else:
                    out.append(ignored_row(j, "condensed", "unjudged, removed before ranking (unjudged=condensed)"))
            pos += 1
    # 3. Kept but below the cutoff.
    k = measure.k
    if k is not None:
        for r in rows:
            if r.rank > k:
                why = f"rank {r.rank} > k={k}: outside the cutoff"
                if measure.spec.uses_ideal and (f.ideal == "local" or r.rank <= (f.recall_depth or 0)):
                    why += f" (still a candidate for the ideal: ideal={f.ideal})"
                out.append(Ignored(r.doc, r.score, r.grade, "cutoff", why, r.line))
    return out


__all__ = ["EXPLAINED", "Explanation", "IdealSlot", "Ignored", "Position", "explain", "explain_tables"]
