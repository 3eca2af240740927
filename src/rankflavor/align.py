"""Join a run to its judgments once: ids become integer codes, duplicates are resolved, and
everything dropped or resolved is counted.

Query codes are assigned in byte order of the id strings, so sorting by code is sorting by
``strcmp`` (trec_eval's topic order). Document codes are identities only (hash order).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from functools import cached_property, partial
from typing import Any

import numpy as np
import pyarrow as pa

from . import arrow_ops
from .columns import as_numpy, from_numpy, plain_strings, take, to_strings
from .docnos import canonical_integers, canonical_mask, hash64
from .errors import InputError
from .kernels import block_starts, distinct, ranges, run_starts
from .tables import Qrels, Run
from .threads import SharedWork

#: Runs longer than this check for duplicates on a second thread.
_PARALLEL_ROWS = 200_000
#: Largest document-code span for which the join first marks judged documents in a flat table.
_FLAT_SPAN = 1 << 27


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
    #: Run rows repeating an earlier (query, doc) pair that ``duplicates=error`` left in place:
    #: each ranking refuses a pair it keeps twice (:func:`refuse_kept_duplicates`), and a depth
    #: cut (trec_eval's ``-M``) that leaves one row of each pair is not an error, as in trec_eval.
    run_duplicates_kept: int = 0

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass(frozen=True)
class Aligned:
    """Run rows joined to grades; the input to every ordering and metric.

    Attributes
    ----------
    query_ids : object array of query id strings; a query's code is its index (byte order).
    in_run, in_qrels : per query code.
    run_q, run_doc, run_score : run rows (duplicates resolved), file order kept; ``run_q`` is
        int32 (while the query codes fit), so arithmetic on it widens first; ``run_doc`` is
        an identity code within a query (equal docnos, equal codes; different docnos of one
        query, different codes; no order). Text docnos of a big run are coded from hashes, so
        two docnos of different queries may share a code.
    query_starts : the first row of each query's block when every query's rows are one block
        (ascending), else None; spares later stages a scan of ``run_q``.
    input_row : the input row of each run row, None when row i is input row i (no duplicate was
        resolved); ``run_row`` always gives the array, and ``run_doc_strings[run_row]`` the docno.
    judged_row, judged_grade : the run rows (ascending) whose (query, doc) pair is in the qrels,
        and its grade; typically a few percent of the run.
    run_grade : the judged grade of every run row, NaN when the pair is not in the qrels (built
        on first use).
    qrels_q, qrels_grade : judgments (duplicates resolved).
    """

    query_ids: np.ndarray
    in_run: np.ndarray
    in_qrels: np.ndarray
    run_q: np.ndarray
    query_starts: np.ndarray | None
    run_doc: np.ndarray
    run_score: np.ndarray
    input_row: np.ndarray | None
    judged_row: np.ndarray
    judged_grade: np.ndarray
    qrels_q: np.ndarray
    qrels_grade: np.ndarray
    #: The run aligned (its docno strings are built only if asked for: :attr:`run_doc_strings`).
    run: Run = field(repr=False, compare=False)
    counts: Counts
    qrels_source: str
    #: When docnos are canonical integers: run_doc + doc_value_offset is the docno's value.
    doc_value_offset: int | None = None
    #: Aligned from a chunk of a run file (:func:`align`).
    chunk: bool = False
    #: No score rises inside a query's block of run rows (the reader found it: :attr:`Run.scores_descend`).
    scores_descend: bool = False
    #: Work shared by every ordering of this alignment (score sorts, docno ranks of tied rows),
    #: filled by order.rank; not part of equality.
    memo: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def run_doc_strings(self) -> pa.Array | pa.ChunkedArray:
        """The run's docnos by input row."""
        return self.run.doc

    @cached_property
    def run_row(self) -> np.ndarray:
        return self.input_row if self.input_row is not None else np.arange(len(self.run_q))

    def input_rows(self, rows: np.ndarray) -> np.ndarray:
        """``run_row[rows]``, without building ``run_row`` (a row per run line) when no duplicate
        was resolved."""
        return rows if self.input_row is None else self.input_row[rows]

    @cached_property
    def run_grade(self) -> np.ndarray:
        grade = np.full(len(self.run_q), np.nan)
        grade[self.judged_row] = self.judged_grade
        return grade

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    @property
    def evaluated(self) -> np.ndarray:
        return self.in_run & self.in_qrels


def _query_names(
    run_query: pa.Array | pa.ChunkedArray, qrels_query: pa.Array | pa.ChunkedArray
) -> tuple[list[tuple[np.ndarray, list[str]]], list[tuple[np.ndarray, list[str]]], list[str]]:
    """Dictionary parts of run and qrels query ids and every id they name, in byte order (some
    may be named by no row)."""
    r_parts, j_parts = _dictionary_parts(run_query), _dictionary_parts(qrels_query)
    # Python orders str by code point, which is UTF-8 byte order.
    return r_parts, j_parts, sorted(set().union(*(names for _, names in r_parts + j_parts)))


def _coded_queries(
    r_parts: list[tuple[np.ndarray, list[str]]], j_parts: list[tuple[np.ndarray, list[str]]], ids: list[str],
    r_runs: tuple[np.ndarray, ...] | None = None,
) -> tuple[np.ndarray, np.ndarray, list[str], np.ndarray, np.ndarray, np.ndarray | None]:
    """Query codes of run and qrels rows, ranked by byte order of the id (``strcmp``, trec_eval's
    topic order), the ids by code, the run's and the qrels' rows per code, and the first run row
    of each query when every query's run rows are one block (else None). Only the distinct ids
    are sorted: the readers dictionary-encode query ids (a dictionary per chunk), and plain
    arrays are encoded by :func:`_query_names`. ``r_runs``: where the runs of one id start in
    each run part, when the reader found them (:attr:`Run.query_runs`)."""
    code = {name: i for i, name in enumerate(ids)}
    (rq, run_rows, starts), (jq, qrels_rows, _) = _codes(r_parts, code, runs=r_runs), _codes(j_parts, code, blocks=False)
    used = (run_rows > 0) | (qrels_rows > 0)
    if used.all():
        return rq, jq, ids, run_rows, qrels_rows, starts
    # A dictionary may name ids no row uses (e.g. a filtered categorical): they are no queries.
    renumber = (np.cumsum(used) - 1).astype(rq.dtype)
    return (renumber[rq], renumber[jq], [n for n, u in zip(ids, used, strict=True) if u], run_rows[used],
            qrels_rows[used], starts)


def _dictionary_parts(values: pa.Array | pa.ChunkedArray) -> list[tuple[np.ndarray, list[str]]]:
    """(dictionary indices, dictionary names) of each chunk."""
    chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
    if not chunks or not all(pa.types.is_dictionary(c.type) for c in chunks):
        chunks = [_encode(plain_strings(values))]
    return [(as_numpy(c.indices), to_strings(c.dictionary)) for c in chunks]


def _codes(
    parts: list[tuple[np.ndarray, list[str]]], code: dict[str, int], blocks: bool = True,
    runs: tuple[np.ndarray, ...] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The code of every row, the rows per code, and (with ``blocks``) the first row of each
    code's block when every code's rows are one block (None otherwise).

    Rows come in runs of one id (files are written query by query): each part's runs are found
    by one comparison of neighbouring indices, and the codes are written run by run, so no row
    is looked up in a table or counted one at a time. ``runs``: where each part's runs start,
    when known (runs of equal values are runs of equal indices in any encoding of the part).
    """
    # int32 while the codes fit: half the memory of a pass over the run (fresh pages cost).
    kind: type[np.signedinteger[Any]] = np.int32 if len(code) < 1 << 31 else np.int64
    run_codes, run_firsts = [], []
    start = 0
    if runs is not None and len(runs) != len(parts):
        runs = None
    for k, (idx, names) in enumerate(parts):
        if len(idx):
            table = np.array([code[n] for n in names], dtype=kind)
            first = runs[k] if runs is not None else run_starts(idx)
            run_codes.append(table[idx[first]])
            run_firsts.append(first + start)
        start += len(idx)
    if not run_codes:
        return np.zeros(0, dtype=kind), np.zeros(len(code), dtype=np.int64), np.zeros(0, dtype=np.int64)
    codes, starts = np.concatenate(run_codes), np.concatenate(run_firsts).astype(np.int64, copy=False)
    joined = np.concatenate([[True], codes[1:] != codes[:-1]])  # a run may go on in the next part
    codes, starts = codes[joined], starts[joined]
    lengths = np.diff(np.append(starts, start))
    counts = np.zeros(len(code), dtype=np.int64)
    np.add.at(counts, codes, lengths)
    # More runs than codes: some code has two (no sort needed to know).
    one_block_each = blocks and len(codes) <= len(code) and len(distinct(codes)) == len(codes)
    return np.repeat(codes, lengths), counts, starts if one_block_each else None


def _encode(values: pa.Array) -> pa.DictionaryArray:
    encoded = arrow_ops.dictionary_encode(values)
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    return encoded


def _doc_codes(
    run: Run, qrels_doc: pa.Array | pa.ChunkedArray, n_queries: int,
    run_integers: Future[np.ndarray | None] | tuple[np.ndarray, ...] | None = None,
    run_hashes: tuple[np.ndarray, ...] | None = None, run_range: tuple[int, int] | None = None,
    qrels_canonical: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray, int, int | None, bool]:
    """Identity codes for docnos, the code span, the integer offset and whether codes were hashed.
    ``run_range``: the least and greatest of the reader's ``run_integers``, when it found them;
    ``qrels_canonical``: :func:`canonical_mask` of the qrels docnos, when the reader found it.

    Docnos that are canonical decimal integers (MS MARCO style) are their own codes (less an
    offset, returned fourth; None otherwise). Other docnos of a big run are coded from a hash
    (``run_hashes``, the reader's, or computed here): see :func:`_hashed_doc_codes`; of a small
    run, dictionary-encoded. Codes carry no order: the docno tie-break compares strings
    (order.py).
    """
    # meanwhile ``run_integers`` may run on another thread
    numeric, jd = canonical_mask(qrels_doc) if qrels_canonical is None else qrels_canonical
    if isinstance(run_integers, tuple):  # the reader's, in parts
        parts: tuple[np.ndarray, ...] | None = run_integers
    else:
        run_num = canonical_integers(run.doc) if run_integers is None else run_integers.result()
        parts = None if run_num is None else (run_num,)
    if parts is not None and any(len(p) for p in parts):
        if isinstance(run_integers, tuple) and run_range is not None:
            lo, hi = run_range
        else:
            lo = min(int(p.min()) for p in parts if len(p))
            hi = max(int(p.max()) for p in parts if len(p))
        if numeric.any():
            lo = min(lo, int(jd[numeric].min()))
        span = max(hi, int(jd.max(initial=hi))) - lo + 1
        others = ~numeric
        if others.any():  # docnos like "007" can never equal a canonical run docno: codes above the span
            extra = as_numpy(_encode(arrow_ops.filter_rows(plain_strings(qrels_doc), from_numpy(others))).indices).astype(np.int64)
            jd = jd.copy()  # the reader's, read only
            jd[others] = span + lo + extra
            span += int(extra.max()) + 1
        if span * max(n_queries, 1) < 1 << 62:
            if len(parts) == 1 and 0 <= lo <= span and (span + lo) * max(n_queries, 1) < 1 << 62:
                # The values themselves are codes (at most twice the span): no pass over the run.
                # The parts are the Run's, never written.
                return parts[0], jd, span + lo, 0, False
            run_code = np.empty(sum(len(p) for p in parts), dtype=np.int64)
            start = 0
            for p in parts:
                np.subtract(p, lo, out=run_code[start : start + len(p)])
                start += len(p)
            return run_code, jd - lo, span, lo, False
    # Strings from here on (built from the integers if the reader kept only those).
    if run_hashes is not None or len(run) > _PARALLEL_ROWS:
        hashes = hash64(run.doc) if run_hashes is None else _one_array(run_hashes)
        hashed = _hashed_doc_codes(run.doc, hashes, qrels_doc, n_queries)
        if hashed is not None:
            return (*hashed, None, True)
    return (*_exact_doc_codes(run.doc, qrels_doc), None, False)


def _one_array(parts: tuple[np.ndarray, ...]) -> np.ndarray:
    """The reader's parts (read only) as one array: a single part (a file read in pieces) as it is."""
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def _exact_doc_codes(
    run_doc: pa.Array | pa.ChunkedArray, qrels_doc: pa.Array | pa.ChunkedArray
) -> tuple[np.ndarray, np.ndarray, int]:
    """Codes from one dictionary of every docno: exact, but hashing millions of mostly distinct
    strings into one table is slow (seconds for a 7M-line run)."""
    encoded = _encode(pa.concat_arrays([plain_strings(run_doc), plain_strings(qrels_doc)]))
    codes = as_numpy(encoded.indices).astype(np.int64)
    return codes[: len(run_doc)], codes[len(run_doc) :], max(len(encoded.dictionary), 1)


def _hashed_doc_codes(
    run_doc: pa.Array | pa.ChunkedArray, hashes: np.ndarray, qrels_doc: pa.Array | pa.ChunkedArray, n_queries: int
) -> tuple[np.ndarray, np.ndarray, int] | None:
    """Codes of text docnos from their 64-bit hashes, exact where it matters (None when two
    judged docnos share a hash).

    The U distinct qrels docnos (few) take codes 0..U-1 (in hash order: :func:`_judged_hashes`).
    A run docno takes the code of the judged docno with its hash only after the two strings
    compare equal, so the join is exact. Every other run docno takes U plus the top bits of its
    hash: equal docnos get equal codes, and two different docnos of one query can share a code
    only by a hash collision, which the duplicate check sees as a repeated pair; the caller then
    starts over with :func:`_exact_doc_codes`. :func:`_align` runs the same steps on two threads.
    """
    judged = _judged_hashes(qrels_doc)
    if judged is None:
        return None
    run_code = np.empty(len(hashes), dtype=np.int64)
    _match_judged(run_doc, hashes, judged, n_queries, run_code, 0, len(run_code))
    return run_code, judged.codes, judged.span(n_queries)


@dataclass(frozen=True)
class _JudgedHashes:
    """The qrels docnos of the hashed path: each row's code, a row of each code (codes are in
    hash order), the hash of each code (ascending), and a bitset of the hashes' top 24 bits."""

    codes: np.ndarray
    docs: pa.Array
    first: np.ndarray
    sorted_hashes: np.ndarray
    prefixes: np.ndarray

    def span(self, n_queries: int) -> int:
        return len(self.first) + (1 << _hash_bits(n_queries))


#: Top bits of a hash that prefilter run docnos against the judged ones, in a bitset of 2 MB.
_PREFIX_BITS = 24


def _judged_hashes(qrels_doc: pa.Array | pa.ChunkedArray) -> _JudgedHashes | None:
    """:class:`_JudgedHashes` of the qrels docnos, or None when two of them share a hash (a run
    docno could then match either)."""
    docs = plain_strings(qrels_doc)
    # Distinct docnos by a sort of their hashes (cheaper than a dictionary of the strings).
    hashes = hash64(docs)
    order = np.argsort(hashes)
    ordered = hashes[order]
    new = np.empty(len(order), dtype=bool)
    new[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    codes = np.empty(len(order), dtype=np.int64)
    codes[order] = np.cumsum(new) - 1
    first = order[new]
    # A docno sharing its hash with another row must be that row's docno, or two docnos collide.
    shared = np.flatnonzero(np.bincount(codes, minlength=len(first))[codes] > 1)
    if len(shared) and not arrow_ops.all_true(
        arrow_ops.equal(take(docs, shared), take(docs, first[codes[shared]]))
    ):
        return None
    prefixes = _bitset((ordered[new] >> np.uint64(64 - _PREFIX_BITS)).view(np.int64), 1 << _PREFIX_BITS)
    return _JudgedHashes(codes, docs, first, ordered[new], prefixes)


def _hash_bits(n_queries: int) -> int:
    """Hash bits in a code: as many as keep (query, doc) keys below 2**62."""
    return 61 - max(n_queries, 1).bit_length()


def _match_judged(
    run_doc: pa.Array | pa.ChunkedArray, hashes: np.ndarray, judged: _JudgedHashes, n_queries: int,
    run_code: np.ndarray, lo: int, hi: int,
) -> np.ndarray:
    """Write the codes of run rows lo..hi-1 into ``run_code``: the judged docnos' count plus the
    top bits of the docno's hash, or the code of the judged docno whose string it equals (those
    rows are returned, ascending)."""
    n_names = len(judged.first)
    shift = np.uint64(64 - _hash_bits(n_queries))
    for start in range(lo, hi, _BLOCK_ROWS):  # shifted and offset in one pass, block by block in cache
        stop = min(start + _BLOCK_ROWS, hi)
        # Shifted right, every value fits int64.
        block = np.right_shift(hashes[start:stop], shift, out=run_code[start:stop].view(np.uint64)).view(np.int64)
        block += n_names
    if not n_names or hi <= lo:
        return np.zeros(0, dtype=np.int64)
    part = hashes[lo:hi]
    # Candidates: a hash whose top bits are a judged docno's; searched in hash order, so that
    # consecutive searches walk the judged hashes forward instead of jumping through them.
    rows = np.flatnonzero(_lookup(judged.prefixes, part, shift=64 - _PREFIX_BITS))
    candidates = part[rows]
    by_hash = np.argsort(candidates)
    pos = np.empty(len(rows), dtype=np.intp)
    pos[by_hash] = np.searchsorted(judged.sorted_hashes, candidates[by_hash])
    np.minimum(pos, n_names - 1, out=pos)
    hit = judged.sorted_hashes[pos] == candidates
    rows, code = rows[hit] + lo, pos[hit]
    keep = as_numpy(arrow_ops.equal(take(run_doc, rows), take(judged.docs, judged.first[code])))
    run_code[rows[keep]] = code[keep]
    return rows[keep]


def _pair_keys(q: np.ndarray, doc: np.ndarray, n_docs: int) -> np.ndarray:
    """One int64 key per (query, doc) pair, built in one array (no temporary of the run's size)."""
    keys = np.multiply(q, n_docs, dtype=np.int64)
    return np.add(keys, doc, out=keys)


def _has_duplicates(keys: np.ndarray, in_place: bool = False) -> bool:
    plain = keys if in_place else keys.copy()
    plain.sort()
    return bool((plain[1:] == plain[:-1]).any())


def _pairs_repeat(q: np.ndarray, doc: np.ndarray, n_docs: int, starts: np.ndarray | None = None) -> bool:
    """Does any (query, doc) pair occur twice? (:func:`_repeat_checks`, run one after another.)"""
    return any(check() for check in _repeat_checks(q, doc, n_docs, starts))


def _repeat_checks(
    q: np.ndarray, doc: np.ndarray, n_docs: int, starts: np.ndarray | None = None
) -> list[Callable[[], bool]]:
    """Checks, each of a slab of the run, such that a (query, doc) pair occurs twice iff one of
    them returns True. Each sorts its own copies (NumPy sorts without the GIL), so that two
    threads can share them (:class:`SharedWork`). ``starts``: each query's first row when
    every query's rows are known to be one block (else found here).

    When every query's rows are one contiguous block (runs are written per topic), a pair can
    repeat only inside its block. Consecutive blocks of one length (most runs retrieve the same
    depth for most queries) are a matrix with a query per row: slab by slab, each row's docnos
    are sorted, small sorts in cache with no query in the key. The other blocks are checked in
    slabs of whole blocks on (query, doc) keys.
    """
    if len(q) < 2:
        return []
    if starts is None:
        starts = block_starts(q)
    if starts is None:  # a query comes back after another one
        return [partial(_slab_repeats, q, doc, n_docs)]
    lengths = np.diff(np.append(starts, len(q)))
    edges = np.flatnonzero(lengths[1:] != lengths[:-1]) + 1
    first, stop = np.concatenate([[0], edges]), np.append(edges, len(lengths))  # blocks of one length
    square = (stop - first) >= _MATRIX_BLOCKS
    checks: list[Callable[[], bool]] = []
    for a, b in zip(first[square].tolist(), stop[square].tolist(), strict=True):
        width = int(lengths[a])
        matrix = doc[starts[a] : starts[a] + (b - a) * width].reshape(b - a, width)
        step = max(1, _BLOCK_ROWS // width)
        checks += [partial(_rows_repeat, matrix[top : top + step], n_docs <= 1 << 31) for top in range(0, b - a, step)]
    if square.all():
        return checks
    rows = ranges(starts[first[~square]], np.add.reduceat(lengths, first)[~square])
    sub_q = q[rows]
    sub_starts = block_starts(sub_q)
    assert sub_starts is not None  # whole blocks of the run, in its order
    return checks + _slab_checks(sub_q, doc[rows], n_docs, sub_starts)


def _rows_repeat(matrix: np.ndarray, narrow: bool) -> bool:
    """Does a value occur twice in a row of ``matrix``? ``narrow``: every value fits int32, and
    is sorted as one (SIMD sorts take twice as many int32 per step)."""
    part = matrix.astype(np.int32) if narrow else matrix.copy()
    part.sort(axis=1)
    return bool((part[:, 1:] == part[:, :-1]).any())


#: Consecutive query blocks of one length, at least this many, are checked as a matrix (fewer
#: cost more in calls than they save in sorting).
_MATRIX_BLOCKS = 8


def _slab_checks(q: np.ndarray, doc: np.ndarray, n_docs: int, starts: np.ndarray) -> list[Callable[[], bool]]:
    """:func:`_repeat_checks` of contiguous blocks, on (query, doc) keys in slabs of whole blocks."""
    # Slab bounds: the first block start at or after every _BLOCK_ROWS rows.
    at = np.minimum(np.searchsorted(starts, np.arange(0, len(q), _BLOCK_ROWS)), len(starts) - 1)
    bounds = distinct(np.concatenate([starts[at], [len(q)]])).tolist()
    return [partial(_slab_repeats, q[lo:hi], doc[lo:hi], n_docs) for lo, hi in itertools.pairwise(bounds)]


def _slab_repeats(q: np.ndarray, doc: np.ndarray, n_docs: int) -> bool:
    return _has_duplicates(_pair_keys(q, doc, n_docs), in_place=True)


def _resolve_duplicates(
    keys: np.ndarray, values: np.ndarray, policy: str, table: Qrels | Run,
    sorted_by: tuple[np.ndarray, np.ndarray] | None = None, refusable: np.ndarray | None = None,
    rows: np.ndarray | None = None, scope: str = "", tally: str = "in all",
) -> tuple[np.ndarray, int]:
    """Return row indices to keep (ascending) and how many duplicates were resolved; with none
    resolved, every row is kept and the indices are not built (an empty array).

    ``sorted_by``: the stable permutation that sorts ``keys`` and the sorted keys, when the
    caller has them (:func:`_sort_keys`), so the keys are not sorted again. ``refusable``: per
    row, may ``policy=error`` refuse its duplicates (None: every row)? Judgments of a query the
    run does not retrieve are scored by no measure, and trec_eval, which forms its judged lists
    only for the queries of the run, reads them as they are (``-c`` counts every line of them in
    num_rel); the other rows are then kept as they are. ``rows``: the ``table`` row of each key,
    for the error (None: key i is row i); ``scope``: what the error says the keys are of;
    ``tally``: what its count of duplicate rows covers (:func:`_tally`).
    """
    if sorted_by is None:
        if not _has_duplicates(keys):
            return np.zeros(0, dtype=np.int64), 0
        order = np.argsort(keys, kind="stable")
        sk = keys[order]
    else:
        order, sk = sorted_by
    dup = np.flatnonzero(sk[1:] == sk[:-1]) + 1
    if len(dup) == 0:
        return np.arange(len(keys)), 0
    if policy == "error":
        refused = dup if refusable is None else dup[refusable[order[dup]]]
        if len(refused) == 0:
            return np.arange(len(keys)), 0
        at = refused[np.argmin(order[refused])]  # the repeat that comes first in the file
        first_dup, earlier = order[at], order[at - 1]  # (a stable sort: the row before is an earlier copy)
        if rows is not None:
            first_dup, earlier = rows[first_dup], rows[earlier]
        line = table.line_of(int(first_dup))
        line_b = table.line_of(int(earlier))
        q = table.query[int(first_dup)].as_py()
        d = table.doc[int(first_dup)].as_py()
        where = f" (also at line {line_b})" if line_b is not None else ""
        raise InputError(
            table.source,
            line,
            f"document {d!r} appears more than once for query {q!r}{where}{scope}; trec_eval rejects this. "
            f"{len(refused)} duplicate row(s) {tally}; choose duplicates=first or duplicates=best to resolve them.",
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


def refuse_kept_duplicates(aligned: Aligned, rows: np.ndarray, depth: int | None) -> None:
    """Raise the ``duplicates=error`` error when two of the aligned run ``rows`` (those a ranking
    keeps, after its ``depth`` cut) are one (query, doc) pair.

    trec_eval sorts each query's rows and cuts them to ``-M`` before it looks for duplicates:
    a document repeated only below the cut is no error there, and its copies below the cut are
    scored by nothing. Alignment keeps such rows for the rankings to decide
    (:attr:`Counts.run_duplicates_kept`).
    """
    if not aligned.counts.run_duplicates_kept or len(rows) < 2:
        return
    rows = np.sort(rows)  # the error names the first repeat in file order
    doc = aligned.run_doc[rows]
    keys = _pair_keys(aligned.run_q[rows], doc - doc.min(), int(doc.max() - doc.min()) + 1)
    scope = "" if depth is None else f", both within its top {depth} rows (depth={depth})"
    _resolve_duplicates(keys, aligned.run_score[rows], "error", aligned.run, rows=aligned.input_rows(rows), scope=scope,
                        tally=_tally(aligned.run, aligned.chunk))


def _tally(run: Run, chunk: bool) -> str:
    """What a duplicates error's count covers: every row, or (``chunk``) the queries of a chunk
    of the run, the first chunk that holds a duplicate (chunked evaluation reads no further)."""
    if not chunk or not len(run):
        return "in all"
    first, last = run.line_of(0), run.line_of(len(run) - 1)
    lines = f"lines {first}-{last}" if first is not None and last is not None else "a chunk"
    return f"for the queries of the run's {lines} (the first chunk holding one: the rest is not read)"


def _join(
    rq: np.ndarray, rd: np.ndarray, judgments: tuple[np.ndarray, np.ndarray], jd: np.ndarray, n_docs: int,
    candidates: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The run rows whose (query, doc) is judged, ascending, and their grades.

    ``judgments``: the judgments' distinct (query, doc) keys, ascending, and their grades.
    Most retrieved documents are judged for no query at all: only the ``candidates`` (ascending
    rows whose document is judged for some query: :func:`_judged_doc_rows`, found here when
    not given) are searched among the judgments.
    """
    sorted_keys, sorted_grades = judgments
    if len(rq) == 0 or len(sorted_keys) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    rows = _judged_doc_rows(rd, jd) if candidates is None else candidates
    keys = _pair_keys(rq, rd, n_docs) if rows is None else _pair_keys(rq[rows], rd[rows], n_docs)
    pos = np.minimum(np.searchsorted(sorted_keys, keys), len(sorted_keys) - 1)
    hit = sorted_keys[pos] == keys
    return (np.flatnonzero(hit) if rows is None else rows[hit]), sorted_grades[pos[hit]]


def _sort_keys(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The permutation that sorts the (query, doc) ``keys`` (>= 0), and the sorted keys.

    When a key and its row number fit in 63 bits together (keys below 2**36 for a million
    rows), they are sorted as one int64: a plain sort, cheaper than an argsort, and stable.
    """
    n = len(keys)
    bits = max(n - 1, 1).bit_length()
    if n and int(keys.max()) < 1 << (63 - bits):
        packed = np.left_shift(keys, bits)
        packed |= np.arange(n, dtype=np.int64)
        packed.sort()
        order = packed & ((1 << bits) - 1)
        packed >>= bits
        return order, packed
    order = np.argsort(keys, kind="stable")
    return order, keys[order]


def _judged_doc_rows(rd: np.ndarray, jd: np.ndarray) -> np.ndarray | None:
    """Rows whose document is judged for some query, ascending (:func:`_judged_row_lookups`, all
    on this thread); None (every row) when the judged codes span too much for the table."""
    lookups = _judged_row_lookups(rd, jd)
    if lookups is None:
        return None
    lookups.run()
    return _looked_up(lookups)


def _judged_row_lookups(rd: np.ndarray, jd: np.ndarray) -> SharedWork | None:
    """The rows whose document is judged for some query, looked up in a flat table of the judged
    documents (hashed codes: judged docnos are the lowest codes), as tasks of a block of rows
    each for threads to share (:func:`_looked_up` joins them); None (every row) when the judged
    codes span too much for the table."""
    judged_span = int(jd.max()) + 1 if len(jd) else 0
    if judged_span > _FLAT_SPAN:
        return None
    bits = _bitset(jd, judged_span)

    def block(start: int) -> np.ndarray:
        rows = np.flatnonzero(_lookup(bits, rd[start : start + _BLOCK_ROWS]))
        rows += start
        return rows

    return SharedWork([partial(block, start) for start in range(0, len(rd), _BLOCK_ROWS)])


def _looked_up(lookups: SharedWork) -> np.ndarray:
    """The rows, ascending, that a finished :func:`_judged_row_lookups` found."""
    return np.concatenate(lookups.results) if lookups.results else np.zeros(0, dtype=np.int64)


def _joined(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_join`'s results of consecutive parts of the candidates, as one."""
    if len(parts) == 1:
        return parts[0]
    return np.concatenate([rows for rows, _ in parts]), np.concatenate([grades for _, grades in parts])


def _bitset(members: np.ndarray, span: int) -> np.ndarray:
    """A bit per value below ``span``, set for the ``members``: an eighth of a boolean table, so
    that the random reads of millions of lookups mostly hit the cache."""
    # One byte more than the span needs, never set: a lookup past the span clips into it.
    bits = np.zeros((span + 7) // 8 + 1, dtype=np.uint8)
    np.bitwise_or.at(bits, members >> 3, np.left_shift(1, members & 7).astype(np.uint8))
    return bits


def _lookup(bits: np.ndarray, codes: np.ndarray, shift: int = 0) -> np.ndarray:
    """Per code (>= 0), or per uint64 code shifted right by ``shift``: is its bit set in the
    :func:`_bitset` ``bits``? Done in blocks, so the temporaries stay small and are reused."""
    found = np.empty(len(codes), dtype=np.uint8)
    for start in range(0, len(codes), _BLOCK_ROWS):
        block = codes[start : start + _BLOCK_ROWS]
        if shift:
            block = (block >> np.uint64(shift)).view(np.int64)
        out = found[start : start + len(block)]
        # A code past the span reads the last byte (clipped) or a bit above the span: never set.
        np.take(bits, block >> 3, out=out, mode="clip")
        low = block.astype(np.uint8)  # (the low bits survive the narrowing)
        low &= 7
        out >>= low
    found &= 1
    return found.view(bool)


#: Rows per block where a pass over the run is split to keep temporaries in cache.
_BLOCK_ROWS = 1 << 18
#: Candidate rows per part of a join two threads share.
_JOIN_ROWS = 1 << 17


def align(qrels: Qrels, run: Run, duplicates: str = "error", chunk: bool = False) -> Aligned:
    """Encode ids, resolve duplicates under ``duplicates`` and join run rows to grades.

    ``chunk``: ``run`` is a chunk of a run file and ``qrels`` the judgments of its queries (an
    error counting duplicates says so).
    """
    # A worker thread per call, not per process: a process forked after an evaluation would
    # inherit a module-level pool whose thread no longer exists, and wait on it forever.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="rankflavor-align") as pool:
        return _align(qrels, run, duplicates, pool, chunk=chunk)


def _two_threads_hashed(
    run: Run, qrels: Qrels, judged_job: Future[_JudgedHashes | None], n_queries: int, pool: ThreadPoolExecutor
) -> tuple[tuple[np.ndarray, np.ndarray, int, int | None, bool], np.ndarray | None]:
    """:func:`_hashed_doc_codes` of the reader's hashes, a half of the run on each thread, and
    the rows whose docno is judged (:func:`_judged_doc_rows`)."""
    assert run.doc_hashes is not None
    hashes = _one_array(run.doc_hashes)
    judged = judged_job.result()
    if judged is None:
        return (*_exact_doc_codes(run.doc, qrels.doc), None, False), None
    run_code = np.empty(len(hashes), dtype=np.int64)
    half = len(run_code) // 2  # disjoint slices: each thread writes its own
    first = pool.submit(_match_judged, run.doc, hashes, judged, n_queries, run_code, 0, half)
    second = _match_judged(run.doc, hashes, judged, n_queries, run_code, half, len(run_code))
    # The rows matched to a judged docno are the join's candidates.
    return (run_code, judged.codes, judged.span(n_queries), None, True), np.concatenate([first.result(), second])


def _align(
    qrels: Qrels, run: Run, duplicates: str, pool: ThreadPoolExecutor, exact_docs: bool = False, chunk: bool = False
) -> Aligned:
    nr, nj = len(run), len(qrels)
    # The reader hashed the docnos (text) of a big run: coded on two threads (below).
    hashed_by_reader = run.doc_hashes is not None and nr > _PARALLEL_ROWS and not exact_docs
    # Reading a big run's docnos as integers overlaps the query codes (NumPy and pyarrow's
    # cast release the GIL).
    run_integers: Future[np.ndarray | None] | tuple[np.ndarray, ...] | None = run.doc_integers
    if run_integers is None and nr > _PARALLEL_ROWS and not exact_docs and not hashed_by_reader:
        run_integers = pool.submit(canonical_integers, run.doc)
    r_parts, j_parts, names = _query_names(run.query, qrels.query)
    coded_queries = partial(_coded_queries, r_parts, j_parts, names, run.query_runs)
    # Document codes (a pass over the run) are built on the worker while this thread codes the
    # queries (another pass); the names bound the number of queries from above.
    def doc_job() -> tuple[np.ndarray, np.ndarray, int, int | None, bool]:
        if exact_docs:
            return (*_exact_doc_codes(run.doc, qrels.doc), None, False)
        return _doc_codes(run, qrels.doc, len(names), run_integers, run.doc_hashes, run.doc_integer_range,
                          None if qrels.doc_canonical is None else qrels.doc_canonical.result())

    # Rows whose docno is judged for some query: the join searches only these.
    candidates: np.ndarray | None = None
    # With a worker (big runs): the doc codes and the row lookups it shares, as soon as it has them.
    lookups: Future[tuple[tuple[np.ndarray, np.ndarray, int, int | None, bool], SharedWork | None]] = Future()
    worker: Future[None] | None = None
    if hashed_by_reader:
        # The judged docnos are encoded on the worker while this thread codes the queries, and
        # each thread then matches half of the run.
        judged_job = pool.submit(_judged_hashes, qrels.doc)
        rq, jq, query_ids, rows_per_query, judgments_per_query, query_starts = coded_queries()
        (rd, jd, n_docs, doc_offset, hashed), candidates = _two_threads_hashed(run, qrels, judged_job, len(names), pool)
    elif nr > _PARALLEL_ROWS:
        # The worker then starts finding the rows whose docno is judged (a lookup per row)
        # while this thread codes the queries and sorts the judgments (below), then helps.
        def doc_rows_job() -> None:
            try:
                codes = doc_job()
                shared = _judged_row_lookups(codes[0], codes[1])
            except BaseException as error:
                lookups.set_exception(error)
                raise
            lookups.set_result((codes, shared))
            if shared is not None:
                shared.run()

        worker = pool.submit(doc_rows_job)
        rq, jq, query_ids, rows_per_query, judgments_per_query, query_starts = coded_queries()
        (rd, jd, n_docs, doc_offset, hashed), _ = lookups.result()
    else:
        rq, jq, query_ids, rows_per_query, judgments_per_query, query_starts = coded_queries()
        rd, jd, n_docs, doc_offset, hashed = doc_job()
    jkey = _pair_keys(jq, jd, n_docs)
    jgrade = qrels.grade
    # One sort of the judgments serves the duplicate check and the join.
    by_key, sorted_keys = _sort_keys(jkey)
    dup_j = 0
    if len(sorted_keys) > 1 and bool((sorted_keys[1:] == sorted_keys[:-1]).any()):
        keep_j, dup_j = _resolve_duplicates(jkey, jgrade, duplicates, qrels, (by_key, sorted_keys),
                                            refusable=rows_per_query[jq] > 0, tally=_tally(run, chunk))
        if dup_j:  # (none under duplicates=error: those of queries absent from the run stay)
            # the judged documents stay the same: ``candidates`` holds
            jq, jd, jgrade, jkey = jq[keep_j], jd[keep_j], jgrade[keep_j], jkey[keep_j]
            by_key, sorted_keys = _sort_keys(jkey)
    judgments = sorted_keys, jgrade[by_key]
    if worker is not None:
        row_lookups = lookups.result()[1]
        if row_lookups is not None:
            row_lookups.run()
        worker.result()  # both threads done: only now are the results final
        if row_lookups is not None:
            candidates = _looked_up(row_lookups)
    repeated: bool | None = None
    if nr > _PARALLEL_ROWS:
        # The duplicate check starts on the worker while this thread joins; this thread then
        # takes its share of the checks left.
        plan: Future[SharedWork] = Future()

        def shared_repeats() -> None:
            try:
                shared = SharedWork(_repeat_checks(rq, rd, n_docs, query_starts), until=bool)
            except BaseException as error:
                plan.set_exception(error)
                raise
            plan.set_result(shared)
            shared.run()

        # The join, in parts the worker takes up once its checks are done.
        parts = [candidates] if candidates is None else np.array_split(candidates, max(1, len(candidates) // _JOIN_ROWS))
        joins = SharedWork([partial(_join, rq, rd, judgments, jd, n_docs, part) for part in parts])

        def shared_work() -> None:
            shared_repeats()
            joins.run()

        repeats = pool.submit(shared_work)
        joins.run()
        plan.result().run()
        repeats.result()  # both threads done: only now are ``stopped`` and the joins final
        repeated = plan.result().stopped
        judged_row, judged_grade = _joined(joins.results)
    else:
        judged_row, judged_grade = _join(rq, rd, judgments, jd, n_docs)
    if hashed and repeated is None:
        repeated = _pairs_repeat(rq, rd, n_docs, query_starts)
    kept_r = 0
    if repeated is False:
        keep_r, dup_r = np.zeros(0, dtype=np.int64), 0
    elif hashed:  # a repeated pair or a hash collision: decide on exact codes
        return _align(qrels, run, duplicates, pool, exact_docs=True, chunk=chunk)
    elif duplicates == "error":  # left for each ranking to refuse (refuse_kept_duplicates)
        keep_r, dup_r = np.zeros(0, dtype=np.int64), 0
        keys = np.sort(_pair_keys(rq, rd, n_docs))
        kept_r = int(np.count_nonzero(keys[1:] == keys[:-1]))
    else:  # small, or duplicates to resolve: on keys in row order
        keep_r, dup_r = _resolve_duplicates(_pair_keys(rq, rd, n_docs), run.score, duplicates, run,
                                            tally=_tally(run, chunk))
    rscore = run.score
    nq = len(query_ids)
    if dup_r:  # rare: drop the resolved rows and join again
        rq, rd, rscore = rq[keep_r], rd[keep_r], rscore[keep_r]
        query_starts = block_starts(rq)
        judged_row, judged_grade = _join(rq, rd, judgments, jd, n_docs)
        rows_per_query = np.bincount(rq, minlength=nq)

    in_run = rows_per_query > 0
    in_qrels = judgments_per_query > 0  # resolving duplicate judgments leaves every query judged
    evaluated = in_run & in_qrels
    rows_of_unjudged_queries = int(rows_per_query[~in_qrels].sum())
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
        # a judged row always belongs to a judged query
        unjudged_retrieved=len(rq) - rows_of_unjudged_queries - len(judged_row),
        negative_grades=int((jgrade < 0).sum()),
        negative_grades_retrieved=int((judged_grade < 0).sum()),
        run_rows_of_unjudged_queries=rows_of_unjudged_queries,
        comment_lines=qrels.comments + run.comments,
        blank_lines=qrels.blank_lines + run.blank_lines,
        run_lines_with_extra_fields=run.extra_fields,
        run_duplicates_kept=kept_r,
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
        run=run,
        doc_value_offset=doc_offset,
        counts=counts,
        qrels_source=qrels.source,
        chunk=chunk,
        # (a row dropped as a duplicate leaves the rest of its block as it was)
        scores_descend=run.scores_descend,
    )
