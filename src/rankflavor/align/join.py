"""The join: the run rows whose (query, doc) pair is judged, and their grades."""

from __future__ import annotations

import numpy as np

from rankflavor.align.keys import pair_keys
from rankflavor.align.lookups import judged_doc_rows


def join(
    rq: np.ndarray, rd: np.ndarray, judgments: tuple[np.ndarray, np.ndarray], jd: np.ndarray, n_docs: int,
    candidates: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The run rows whose (query, doc) is judged, ascending, and their grades.

    Most retrieved documents are judged for no query at all: only the candidates are searched
    among the judgments.

    Parameters
    ----------
    rq, rd : query and document codes of the run rows.
    judgments : the judgments' distinct (query, doc) keys (:func:`~rankflavor.align.keys.pair_keys`),
        ascending, and their grades.
    jd : the judgments' document codes.
    n_docs : the document-code span.
    candidates : ascending rows whose document is judged for some query
        (:func:`~rankflavor.align.lookups.judged_doc_rows`, found here when not given), or a
        consecutive part of them (a join in parts).

    Returns
    -------
    The judged rows (ascending) and their grades.

    >>> keys = np.array([0 * 10 + 3, 1 * 10 + 4])  # (query 0, doc 3) and (query 1, doc 4)
    >>> rows, grades = join(np.array([0, 0, 1, 1]), np.array([4, 3, 3, 4]), (keys, np.array([2.0, 1.0])), np.array([3, 4]), 10)
    >>> rows.tolist(), grades.tolist()
    ([1, 3], [2.0, 1.0])
    """
    sorted_keys, sorted_grades = judgments
    if len(rq) == 0 or len(sorted_keys) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    rows = judged_doc_rows(rd, jd) if candidates is None else candidates
    keys = pair_keys(rq, rd, n_docs) if rows is None else pair_keys(rq[rows], rd[rows], n_docs)
    pos = np.minimum(np.searchsorted(sorted_keys, keys), len(sorted_keys) - 1)
    hit = sorted_keys[pos] == keys
    return (np.flatnonzero(hit) if rows is None else rows[hit]), sorted_grades[pos[hit]]


def joined(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """:func:`join`'s results of consecutive parts of the candidates, as one."""
    if len(parts) == 1:
        return parts[0]
    return np.concatenate([rows for rows, _ in parts]), np.concatenate([grades for _, grades in parts])
