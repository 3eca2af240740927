"""(query, doc) keys: one int64 per pair, and their sort, shared by the join and the duplicate
checks."""

from __future__ import annotations

import numpy as np


def pair_keys(q: np.ndarray, doc: np.ndarray, n_docs: int) -> np.ndarray:
    """One int64 key per (query, doc) pair, built in one array (no temporary of the run's size).

    Parameters
    ----------
    q, doc : query and document codes, one per row; ``0 <= doc < n_docs``.
    n_docs : the document-code span.

    Returns
    -------
    ``q * n_docs + doc`` as int64; equal keys are equal pairs.

    >>> pair_keys(np.array([0, 1, 1], dtype=np.int32), np.array([2, 0, 2]), 3).tolist()
    [2, 3, 5]
    """
    keys = np.multiply(q, n_docs, dtype=np.int64)
    return np.add(keys, doc, out=keys)


def sort_keys(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The stable permutation that sorts the (query, doc) ``keys`` (>= 0), and the sorted keys.

    When a key and its row number fit in 63 bits together (keys below 2**36 for a million
    rows), they are sorted as one int64: a plain sort, faster than an argsort, and stable.

    >>> order, ordered = sort_keys(np.array([5, 2, 5, 0]))
    >>> order.tolist(), ordered.tolist()
    ([3, 1, 0, 2], [0, 2, 5, 5])
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
