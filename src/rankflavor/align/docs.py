"""Document codes: every docno of the run and the qrels becomes an integer identity code (equal
docnos, equal codes within a query; no order: the docno tie-break compares strings, order.py).

Three ways, cheapest first (:func:`doc_codes` picks):

* docnos that are canonical decimal integers (MS MARCO style) are their own codes, less an
  offset;
* other docnos of a big run are coded from their 64-bit hashes (:func:`hashed_doc_codes`),
  exact where it matters: the join compares the strings of every match;
* the rest, and any hashed run in which a pair repeats, by one dictionary of every docno
  (:func:`exact_doc_codes`).
"""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from rankflavor.align import sizes
from rankflavor.align.lookups import bitset, lookup
from rankflavor.align.queries import encode
from rankflavor.io import arrow_ops
from rankflavor.io.columns import as_numpy, from_numpy, plain_strings, take
from rankflavor.io.docnos import canonical_integers, canonical_mask, hash64
from rankflavor.io.tables import Run

#: Document codes of the run rows and of the judgments, the code span, the integer offset
#: (None unless docnos are their integer values) and whether the codes came from hashes.
DocCodes = tuple[np.ndarray, np.ndarray, int, int | None, bool]


def doc_codes(
    run: Run, qrels_doc: pa.Array | pa.ChunkedArray, n_queries: int,
    run_integers: Future[np.ndarray | None] | tuple[np.ndarray, ...] | None = None,
    run_hashes: tuple[np.ndarray, ...] | None = None, run_range: tuple[int, int] | None = None,
    qrels_canonical: tuple[np.ndarray, np.ndarray] | None = None,
) -> DocCodes:
    """Identity codes for docnos, the code span, the integer offset and whether codes were hashed.

    Parameters
    ----------
    run : the run whose docnos are coded.
    qrels_doc : the judgments' docnos.
    n_queries : an upper bound of the query codes (keys ``q * span + doc`` must fit int64).
    run_integers : the run's docnos as canonical integers, from the reader (in parts) or being
        read on another thread; None: read here.
    run_hashes : the reader's 64-bit hashes of the run's docnos (in parts), if it made them.
    run_range : the least and greatest of the reader's ``run_integers``, when it found them.
    qrels_canonical : :func:`canonical_mask` of the qrels docnos, when the reader found it.

    Returns
    -------
    :data:`DocCodes`. Docnos that are canonical decimal integers are their own codes (less the
    offset, returned fourth; None otherwise). Other docnos of a big run are coded from a hash
    (``run_hashes``, or computed here): see :func:`hashed_doc_codes`; of a small run,
    dictionary-encoded.
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
            extra = as_numpy(encode(arrow_ops.filter_rows(plain_strings(qrels_doc), from_numpy(others))).indices).astype(np.int64)
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
    if run_hashes is not None or len(run) > sizes.PARALLEL_ROWS:
        hashes = hash64(run.doc) if run_hashes is None else one_array(run_hashes)
        hashed = hashed_doc_codes(run.doc, hashes, qrels_doc, n_queries)
        if hashed is not None:
            return (*hashed, None, True)
    return (*exact_doc_codes(run.doc, qrels_doc), None, False)


def one_array(parts: tuple[np.ndarray, ...]) -> np.ndarray:
    """The reader's parts (read only) as one array: a single part (a file read in pieces) as it is."""
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def exact_doc_codes(
    run_doc: pa.Array | pa.ChunkedArray, qrels_doc: pa.Array | pa.ChunkedArray
) -> tuple[np.ndarray, np.ndarray, int]:
    """Codes of the run's and the qrels' docnos from one dictionary of every docno, and the
    span: exact, but hashing millions of mostly distinct strings into one table is slow.

    >>> run, qrels, span = exact_doc_codes(pa.array(["b", "a", "b"]), pa.array(["a", "c"]))
    >>> run.tolist(), qrels.tolist(), span
    ([0, 1, 0], [1, 2], 3)
    """
    encoded = encode(pa.concat_arrays([plain_strings(run_doc), plain_strings(qrels_doc)]))
    codes = as_numpy(encoded.indices).astype(np.int64)
    return codes[: len(run_doc)], codes[len(run_doc) :], max(len(encoded.dictionary), 1)


def hashed_doc_codes(
    run_doc: pa.Array | pa.ChunkedArray, hashes: np.ndarray, qrels_doc: pa.Array | pa.ChunkedArray, n_queries: int
) -> tuple[np.ndarray, np.ndarray, int] | None:
    """Codes of text docnos from their 64-bit hashes, exact where it matters (None when two
    judged docnos share a hash).

    The U distinct qrels docnos (few) take codes 0..U-1 (in hash order: :func:`judged_hashes`).
    A run docno takes the code of the judged docno with its hash only after the two strings
    compare equal, so the join is exact. Every other run docno takes U plus the top bits of its
    hash: equal docnos get equal codes, and two different docnos of one query can share a code
    only by a hash collision, which the duplicate check sees as a repeated pair; the caller then
    starts over with :func:`exact_doc_codes`. The alignment stage runs the same steps on two
    threads (:func:`match_judged` on a half of the run each).
    """
    judged = judged_hashes(qrels_doc)
    if judged is None:
        return None
    run_code = np.empty(len(hashes), dtype=np.int64)
    match_judged(run_doc, hashes, judged, n_queries, run_code, 0, len(run_code))
    return run_code, judged.codes, judged.span(n_queries)


@dataclass(frozen=True)
class JudgedHashes:
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


def judged_hashes(qrels_doc: pa.Array | pa.ChunkedArray) -> JudgedHashes | None:
    """:class:`JudgedHashes` of the qrels docnos, or None when two of them share a hash (a run
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
    prefixes = bitset((ordered[new] >> np.uint64(64 - _PREFIX_BITS)).view(np.int64), 1 << _PREFIX_BITS)
    return JudgedHashes(codes, docs, first, ordered[new], prefixes)


def _hash_bits(n_queries: int) -> int:
    """Hash bits in a code: as many as keep (query, doc) keys below 2**62."""
    return 61 - max(n_queries, 1).bit_length()


def match_judged(
    run_doc: pa.Array | pa.ChunkedArray, hashes: np.ndarray, judged: JudgedHashes, n_queries: int,
    run_code: np.ndarray, lo: int, hi: int,
) -> np.ndarray:
    """Write the codes of run rows lo..hi-1 into ``run_code``: the judged docnos' count plus the
    top bits of the docno's hash, or the code of the judged docno whose string it equals (those
    rows are returned, ascending). Threads may share ``run_code``, each its own rows."""
    n_names = len(judged.first)
    shift = np.uint64(64 - _hash_bits(n_queries))
    block_rows = sizes.BLOCK_ROWS
    for start in range(lo, hi, block_rows):  # shifted and offset in one pass, block by block in cache
        stop = min(start + block_rows, hi)
        # Shifted right, every value fits int64.
        block = np.right_shift(hashes[start:stop], shift, out=run_code[start:stop].view(np.uint64)).view(np.int64)
        block += n_names
    if not n_names or hi <= lo:
        return np.zeros(0, dtype=np.int64)
    part = hashes[lo:hi]
    # Candidates: a hash whose top bits are a judged docno's; searched in hash order, so that
    # consecutive searches walk the judged hashes forward instead of jumping through them.
    rows = np.flatnonzero(lookup(judged.prefixes, part, shift=64 - _PREFIX_BITS))
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
