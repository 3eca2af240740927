"""Join a run to its judgments once: ids become integer codes, duplicates are resolved, and
everything dropped or resolved is counted.

Query codes are assigned in byte order of the id strings, so sorting by code is sorting by
``strcmp`` (trec_eval's topic order). Document codes are identities only (hash order).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .errors import InputError
from .tables import Qrels, Run


@dataclass(frozen=True)
class Counts:
    """What the inputs held and what alignment did with it. Nothing is dropped uncounted."""

    run_rows: int
    qrels_rows: int
    queries_in_run: int
    queries_in_qrels: int
    queries_evaluated: int
    queries_only_in_run: int
    queries_only_in_qrels: int
    run_duplicates_resolved: int
    qrels_duplicates_resolved: int
    unjudged_retrieved: int
    negative_grades: int
    negative_grades_retrieved: int
    run_rows_of_unjudged_queries: int
    comment_lines: int
    blank_lines: int
    run_lines_with_extra_fields: int

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass(frozen=True)
class Aligned:
    """Run rows joined to grades; the input to every ordering and metric.

    Attributes
    ----------
    query_ids : object array of query id strings; a query's code is its index (byte order).
    in_run, in_qrels : per query code.
    run_q, run_doc, run_score, run_row : run rows (duplicates resolved), file order kept;
        ``run_doc`` is an identity code (equal docnos, equal codes; no order); ``run_row`` is
        the original row, and ``run_doc_strings[run_row]`` the docno.
    run_grade : the judged grade of each run row, NaN when the pair is not in the qrels.
    qrels_q, qrels_grade : judgments (duplicates resolved).
    """

    query_ids: np.ndarray
    in_run: np.ndarray
    in_qrels: np.ndarray
    run_q: np.ndarray
    run_doc: np.ndarray
    run_score: np.ndarray
    run_row: np.ndarray
    run_grade: np.ndarray
    qrels_q: np.ndarray
    qrels_grade: np.ndarray
    run_doc_strings: pa.Array
    counts: Counts
    run_tag: str | None
    run_source: str
    qrels_source: str
    #: When docnos are canonical integers: run_doc + doc_value_offset is the docno's value.
    doc_value_offset: int | None = None
    #: Work shared by every ordering of this alignment (score sorts, docno ranks of tied rows),
    #: filled by order.rank; not part of equality.
    memo: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    @property
    def evaluated(self) -> np.ndarray:
        return self.in_run & self.in_qrels


def _codes_in_byte_order(values: pa.Array) -> tuple[np.ndarray, pa.Array]:
    """Dictionary-encode strings; codes ranked by byte order of the string. Returns (codes, sorted uniques).

    Used for query ids (few distinct values), whose byte order is trec_eval's output order.
    """
    encoded = _encode(values)
    dictionary = encoded.dictionary
    order = pc.sort_indices(dictionary).to_numpy()
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order), dtype=np.int64)
    indices = encoded.indices.to_numpy(zero_copy_only=False)
    return rank[indices], dictionary.take(pa.array(order))


def _encode(values: pa.Array) -> pa.DictionaryArray:
    encoded = pc.dictionary_encode(values)
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    return encoded


_CANONICAL_INT = r"^(0|[1-9][0-9]{0,17})$"


def _doc_codes(
    run_doc: pa.Array, qrels_doc: pa.Array, n_queries: int
) -> tuple[np.ndarray, np.ndarray, int, int | None]:
    """Identity codes for docnos (equal strings, equal codes), and the code span.

    Docnos that are canonical decimal integers (MS MARCO style) are their own codes (less an
    offset, returned last; None otherwise), which avoids hashing millions of strings; otherwise
    the strings are dictionary-encoded. Codes carry no order: the docno tie-break compares
    strings (order.py).
    """
    try:
        run_num = pc.cast(run_doc, pa.int64()).to_numpy(zero_copy_only=False)
        canonical = pc.all(pc.equal(pc.cast(pa.array(run_num), pa.string()), run_doc)).as_py()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        canonical = False
    if canonical and len(run_num) and run_num.min() >= 0:
        numeric = pc.match_substring_regex(qrels_doc, _CANONICAL_INT).to_numpy(zero_copy_only=False)
        jd = np.full(len(qrels_doc), -1, dtype=np.int64)
        if numeric.any():
            jd[numeric] = pc.cast(qrels_doc.filter(pa.array(numeric)), pa.int64()).to_numpy(zero_copy_only=False)
        lo = int(min(run_num.min(), jd[numeric].min() if numeric.any() else run_num.min()))
        others = ~numeric
        span = int(max(run_num.max(), jd.max())) - lo + 1
        if others.any():  # docnos like "007" can never equal a canonical run docno: codes above the span
            extra = _encode(qrels_doc.filter(pa.array(others))).indices.to_numpy(zero_copy_only=False)
            jd[others] = span + lo + extra.astype(np.int64)
            span += int(extra.max()) + 1
        if span * max(n_queries, 1) < 1 << 62:
            return run_num.astype(np.int64) - lo, jd - lo, span, lo
    encoded = _encode(pa.concat_arrays([run_doc, qrels_doc]))
    codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    return codes[: len(run_doc)], codes[len(run_doc) :], max(len(encoded.dictionary), 1), None


def _resolve_duplicates(
    keys: np.ndarray, values: np.ndarray, policy: str, table: Qrels | Run
) -> tuple[np.ndarray, int]:
    """Return row indices to keep (ascending) and how many duplicates were resolved."""
    plain = np.sort(keys)
    if not (plain[1:] == plain[:-1]).any():
        return np.arange(len(keys)), 0
    order = np.argsort(keys, kind="stable")
    sk = keys[order]
    dup = np.flatnonzero(sk[1:] == sk[:-1]) + 1
    if len(dup) == 0:
        return np.arange(len(keys)), 0
    if policy == "error":
        first_dup = order[dup[0]]
        earlier = order[dup[0] - 1]
        line = table.line_of(int(first_dup))
        line_b = table.line_of(int(earlier))
        q = table.query[int(first_dup)].as_py()
        d = table.doc[int(first_dup)].as_py()
        where = f" (also at line {line_b})" if line_b is not None else ""
        raise InputError(
            table.source,
            line,
            f"document {d!r} appears more than once for query {q!r}{where}; trec_eval rejects this. "
            f"{len(dup)} duplicate row(s) in all; choose duplicates=first or duplicates=best to resolve them.",
        )
    group_start = np.ones(len(sk), dtype=bool)
    group_start[1:] = sk[1:] != sk[:-1]
    group = np.cumsum(group_start) - 1
    if policy == "first":
        keep_sorted = group_start  # stable sort: the first row of a group is the first in the file
        keep = order[keep_sorted]
    else:  # best: highest value, earliest row among equals
        v = values[order]
        by_best = np.lexsort((np.arange(len(order)), -v, group))
        first_of_group = np.ones(len(by_best), dtype=bool)
        first_of_group[1:] = group[by_best][1:] != group[by_best][:-1]
        keep = order[by_best[first_of_group]]
    return np.sort(keep), len(dup)


def align(qrels: Qrels, run: Run, duplicates: str = "error") -> Aligned:
    """Encode ids, resolve duplicates under ``duplicates`` and join run rows to grades."""
    nr, nj = len(run), len(qrels)
    q_all, query_ids = _codes_in_byte_order(pa.concat_arrays([run.query, qrels.query]))
    rq, jq = q_all[:nr], q_all[nr:]
    rd, jd, n_docs, doc_offset = _doc_codes(run.doc, qrels.doc, len(query_ids))
    rkey = rq * n_docs + rd
    jkey = jq * n_docs + jd
    keep_j, dup_j = _resolve_duplicates(jkey, qrels.grade, duplicates, qrels)
    keep_r, dup_r = _resolve_duplicates(rkey, run.score, duplicates, run)
    jq, jd, jgrade, jkey = jq[keep_j], jd[keep_j], qrels.grade[keep_j], jkey[keep_j]
    rq, rd, rscore, rkey = rq[keep_r], rd[keep_r], run.score[keep_r], rkey[keep_r]

    order = np.argsort(jkey)
    sorted_keys = jkey[order]
    pos = np.searchsorted(sorted_keys, rkey)
    pos_c = np.minimum(pos, len(sorted_keys) - 1)
    found = (pos < len(sorted_keys)) & (sorted_keys[pos_c] == rkey)
    rgrade = np.where(found, jgrade[order][pos_c], np.nan)

    nq = len(query_ids)
    in_run = np.bincount(rq, minlength=nq) > 0
    in_qrels = np.bincount(jq, minlength=nq) > 0
    evaluated = in_run & in_qrels
    row_in_judged_query = in_qrels[rq]
    counts = Counts(
        run_rows=nr,
        qrels_rows=nj,
        queries_in_run=int(in_run.sum()),
        queries_in_qrels=int(in_qrels.sum()),
        queries_evaluated=int(evaluated.sum()),
        queries_only_in_run=int((in_run & ~in_qrels).sum()),
        queries_only_in_qrels=int((in_qrels & ~in_run).sum()),
        run_duplicates_resolved=dup_r,
        qrels_duplicates_resolved=dup_j,
        unjudged_retrieved=int((~found & row_in_judged_query).sum()),
        negative_grades=int((jgrade < 0).sum()),
        negative_grades_retrieved=int((found & (rgrade < 0)).sum()),
        run_rows_of_unjudged_queries=int((~row_in_judged_query).sum()),
        comment_lines=qrels.comments + run.comments,
        blank_lines=qrels.blank_lines + run.blank_lines,
        run_lines_with_extra_fields=run.extra_fields,
    )
    return Aligned(
        query_ids=np.array(query_ids.to_pylist(), dtype=object),
        in_run=in_run,
        in_qrels=in_qrels,
        run_q=rq.astype(np.int64),
        run_doc=rd.astype(np.int64),
        run_score=rscore,
        run_row=keep_r.astype(np.int64),
        run_grade=rgrade,
        qrels_q=jq.astype(np.int64),
        qrels_grade=jgrade,
        run_doc_strings=run.doc,
        doc_value_offset=doc_offset,
        counts=counts,
        run_tag=run.tag,
        run_source=run.source,
        qrels_source=qrels.source,
    )
