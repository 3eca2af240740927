"""Integer codes for a table's ids, and its duplicates: the columnar ground of every table check.

Query ids are coded as alignment codes them (:mod:`rankflavor.align.queries`, byte order);
docnos by one dictionary encoding of every docno column given, so two tables' codes agree.
Duplicates are found on (query, doc) keys (:mod:`rankflavor.align.keys`), sorted once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from rankflavor.align.keys import pair_keys, sort_keys
from rankflavor.align.queries import coded_queries, query_names
from rankflavor.analysis.check.facts import Listed, order_of
from rankflavor.analysis.check.findings import Finding, Severity, shown
from rankflavor.io import arrow_ops
from rankflavor.io.columns import as_numpy
from rankflavor.io.tables import Qrels, Run

EMPTY = pa.nulls(0, pa.string())  # (not pa.array([]): that imports pandas, a third of a second)


def query_codes(first: pa.Array | pa.ChunkedArray, second: pa.Array | pa.ChunkedArray = EMPTY
                ) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Codes of the rows of two query columns in one code space, and the ids by code."""
    rq, jq, ids, _, _, _ = coded_queries(*query_names(first, second))
    return rq.astype(np.int64, copy=False), jq.astype(np.int64, copy=False), ids


def doc_codes(columns: Sequence[pa.Array | pa.ChunkedArray]) -> tuple[list[np.ndarray], int]:
    """Exact codes of the docnos of each column in one code space (one dictionary of them all),
    and how many distinct docnos."""
    chunks: list[pa.Array] = []
    sizes = []
    for col in columns:
        parts = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
        parts = [p.dictionary_decode() if pa.types.is_dictionary(p.type) else p for p in parts]
        chunks += [p.cast(pa.string()) if not pa.types.is_string(p.type) else p for p in parts]
        sizes.append(len(parts))
    if not chunks or sum(len(c) for c in chunks) == 0:
        return [np.zeros(len(c), dtype=np.int64) for c in columns], 0
    encoded = arrow_ops.dictionary_encode(pa.chunked_array(chunks, pa.string())).unify_dictionaries()
    n_docs = len(encoded.chunk(0).dictionary) if encoded.num_chunks else 0
    out, at = [], 0
    for n in sizes:
        part = [as_numpy(c.indices).astype(np.int64) for c in encoded.chunks[at : at + n]]
        out.append(np.concatenate(part) if part else np.zeros(0, dtype=np.int64))
        at += n
    return out, n_docs


@dataclass(frozen=True)
class Codes:
    """A run (and the judgments) in codes: query codes of both in one space and the ids by code;
    docno codes below ``span``, equal docnos equal codes. ``hashed``: the run's unjudged docnos
    are coded from 64-bit hashes (big text runs, :func:`rankflavor.align.docs.hashed_doc_codes`),
    where two docnos share a code only by a hash collision."""

    rq: np.ndarray
    jq: np.ndarray
    ids: list[str]
    rdoc: np.ndarray
    jdoc: np.ndarray
    span: int
    hashed: bool


def run_codes(run: Run, qrels: Qrels | None) -> Codes:
    """:class:`Codes` of ``run`` and ``qrels`` (none: an empty judgments side) the way alignment
    makes them: canonical integer docnos are their own codes, a big text run is hashed."""
    from rankflavor.align.docs import doc_codes as aligned_doc_codes

    judged_doc = qrels.doc if qrels is not None else EMPTY
    rq, jq, ids = query_codes(run.query, qrels.query if qrels is not None else EMPTY)
    canonical = qrels.doc_canonical.result() if qrels is not None and qrels.doc_canonical is not None else None
    rdoc, jdoc, span, _, hashed = aligned_doc_codes(run, judged_doc, len(ids), run.doc_integers, run.doc_hashes,
                                                    run.doc_integer_range, canonical)
    return Codes(rq, jq, ids, np.asarray(rdoc, dtype=np.int64), np.asarray(jdoc, dtype=np.int64), int(span), hashed)


def exact(codes: Codes, run: Run, qrels: Qrels | None) -> Codes:
    """``codes`` with the docnos coded exactly (one dictionary), when they were hashed."""
    if not codes.hashed:
        return codes
    columns = [run.doc] + ([qrels.doc] if qrels is not None else [])
    found, n_docs = doc_codes(columns)
    jdoc = found[1] if qrels is not None else np.zeros(0, dtype=np.int64)
    return Codes(codes.rq, codes.jq, codes.ids, found[0], jdoc, max(n_docs, 1), False)


def distinct_count(values: np.ndarray, span: int) -> int:
    """How many distinct values (``0 <= value < span``): a table of the span when it is small, a
    sort otherwise."""
    if len(values) == 0:
        return 0
    if span <= 8 * len(values) + 1024:
        seen = np.zeros(span, dtype=bool)
        seen[values] = True
        return int(np.count_nonzero(seen))
    ordered = np.sort(values)
    return int(np.count_nonzero(ordered[1:] != ordered[:-1])) + 1


def duplicate_facts(table: Qrels | Run, q: np.ndarray, doc: np.ndarray, n_docs: int, values: np.ndarray,
                    limit: int, at: np.ndarray | None = None) -> Duplicates | None:
    """The rows whose (query, doc) pair an earlier row already has: the first ``limit`` in input
    order (``at``, None: the row index), each with its line, its first copy's line, the ids and
    both values (grades or scores); None when there is none."""
    if len(q) < 2:
        return None
    order, sk = sort_keys(pair_keys(q, doc, max(n_docs, 1)))
    repeat = np.flatnonzero(sk[1:] == sk[:-1]) + 1
    if len(repeat) == 0:
        return None
    start = np.ones(len(sk), dtype=bool)
    start[1:] = sk[1:] != sk[:-1]
    first_of = order[np.flatnonzero(start)][np.cumsum(start) - 1]  # per sorted position: its group's first row
    rows, firsts = order[repeat], first_of[repeat]
    by_line = np.argsort(rows, kind="stable")
    rows, firsts = rows[by_line], firsts[by_line]
    differ = int(np.count_nonzero(values[rows] != values[firsts]))
    shown_rows = tuple(
        (o, table.line_of(row), table.line_of(first), table.query[row].as_py(), table.doc[row].as_py(),
         float(values[row]), float(values[first]))
        for o, row, first in zip(order_of(at, rows[:limit]), rows[:limit].tolist(), firsts[:limit].tolist(),
                                 strict=True))
    return Duplicates(Listed(limit, len(rows), shown_rows), differ)


@dataclass(frozen=True)
class Duplicates:
    """:func:`duplicate_facts`: the repeated rows (``(at, line, first line, query, doc, value,
    first value)``) and how many of them have another value than their first copy."""

    rows: Listed
    differ: int


def duplicate_findings(facts: Duplicates | None, kind: str, source: str) -> list[Finding]:
    """A finding per listed repeated row (both lines named), and one counting the rest."""
    if facts is None:
        return []
    what = "grade" if kind == "qrels" else "score"
    fix = "choose duplicates=first or duplicates=best in eval, or remove the copies"
    found = []
    for _, line, other, query, doc, value, first_value in facts.rows.rows:
        same = f"the same {what}" if value == first_value else f"another {what} ({first_value:g} there, {value:g} here)"
        found.append(Finding(
            Severity.ERROR, "duplicate", source, line,
            f"document {shown(doc)} appears again for query {shown(query)}, "
            f"with {same}; trec_eval rejects this: {fix}", 1, None, other))
    n, limit = facts.rows.count, facts.rows.limit
    if n > limit:
        found.append(Finding(Severity.ERROR, "duplicate", source, None,
                             f"{n - limit} more duplicate rows not listed ({n} in all, "
                             f"{facts.differ} with another {what} than their first copy)", n - limit))
    return found
