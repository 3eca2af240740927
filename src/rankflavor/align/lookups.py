"""Judged-docno lookups: a bit per document code, set for the judged ones, and the run rows
whose document is judged for some query (the only rows the join searches).

Most retrieved documents are judged for no query at all, and a bit per code keeps the random
reads of millions of lookups mostly in cache (an eighth of a boolean table).
"""

from __future__ import annotations

from functools import partial

import numpy as np

from rankflavor.align import sizes
from rankflavor.base.threads import SharedWork


def bitset(members: np.ndarray, span: int) -> np.ndarray:
    """A bit per value below ``span``, set for the ``members`` (``0 <= member < span``).

    >>> bitset(np.array([0, 3, 9]), 10).tolist()
    [9, 2, 0]
    """
    # One byte more than the span needs, never set: a lookup past the span clips into it.
    bits = np.zeros((span + 7) // 8 + 1, dtype=np.uint8)
    np.bitwise_or.at(bits, members >> 3, np.left_shift(1, members & 7).astype(np.uint8))
    return bits


def lookup(bits: np.ndarray, codes: np.ndarray, shift: int = 0) -> np.ndarray:
    """Per code, is its bit set in the :func:`bitset` ``bits``?

    Parameters
    ----------
    bits : a :func:`bitset`.
    codes : int64 codes (>= 0; past the bitset's span reads as not set), or uint64 codes read
        shifted right by ``shift``.
    shift : see ``codes``.

    Returns
    -------
    A boolean per code. Done in blocks, so the temporaries stay small and are reused.

    >>> lookup(bitset(np.array([0, 3, 9]), 10), np.array([3, 4, 9, 10, 99])).tolist()
    [True, False, True, False, False]
    """
    found = np.empty(len(codes), dtype=np.uint8)
    for start in range(0, len(codes), sizes.BLOCK_ROWS):
        block = codes[start : start + sizes.BLOCK_ROWS]
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


def judged_doc_rows(rd: np.ndarray, jd: np.ndarray) -> np.ndarray | None:
    """Rows whose document is judged for some query, ascending (:func:`judged_row_lookups`, all
    on this thread).

    Parameters
    ----------
    rd, jd : document codes (>= 0) of the run rows and of the judgments.

    Returns
    -------
    The rows ``i`` with ``rd[i]`` in ``jd``, ascending; None (every row) when the judged codes
    span too much for the table (:data:`sizes.FLAT_SPAN`).

    >>> judged_doc_rows(np.array([5, 1, 7, 1]), np.array([1, 7])).tolist()
    [1, 2, 3]
    """
    lookups = judged_row_lookups(rd, jd)
    if lookups is None:
        return None
    lookups.run()
    return looked_up(lookups)


def judged_row_lookups(rd: np.ndarray, jd: np.ndarray) -> SharedWork | None:
    """:func:`judged_doc_rows` as tasks of a block of rows each, for threads to share
    (:func:`looked_up` joins them), looked up in a flat table of the judged documents (hashed
    codes: judged docnos are the lowest codes); None (every row) when the judged codes span too
    much for the table."""
    judged_span = int(jd.max()) + 1 if len(jd) else 0
    if judged_span > sizes.FLAT_SPAN:
        return None
    bits = bitset(jd, judged_span)
    block_rows = sizes.BLOCK_ROWS

    def block(start: int) -> np.ndarray:
        rows = np.flatnonzero(lookup(bits, rd[start : start + block_rows]))
        rows += start
        return rows

    return SharedWork([partial(block, start) for start in range(0, len(rd), block_rows)])


def looked_up(lookups: SharedWork) -> np.ndarray:
    """The rows, ascending, that a finished :func:`judged_row_lookups` found."""
    return np.concatenate(lookups.results) if lookups.results else np.zeros(0, dtype=np.int64)
