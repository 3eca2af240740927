"""The sort of scores over a fixed layout of query blocks, made once and used for many scorings.

A learning-to-rank validation set is the same groups at every boosting iteration: only the
scores change. :class:`BlockSort` lays the rows out once as a matrix of one query block per row
(padded to the longest block), so each scoring is a sort of short rows instead of a sort of the
whole run: the permutation :func:`~rankflavor.order.layout.by_query_and_score` gives (rows by
query code, score descending, equal scores in file order), found faster. The tie rules are then
applied by :mod:`rankflavor.order.ties` as on every other path.

Examples
--------
>>> import numpy as np
>>> sort = BlockSort(np.array([0, 3]), np.array([3, 2]))
>>> sort(np.array([0.1, 0.5, 0.1, 2.0, 3.0])).tolist()   # ties (rows 0 and 2) in file order
[1, 0, 2, 4, 3]
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .layout import Scores

Ints = npt.NDArray[np.int64]


class BlockSort:
    """Rows by block and score descending, equal scores in file order, for scores of rows laid
    out in query blocks (``starts``, ``lengths``: consecutive, in query-code order, none empty).

    Callable on the scores of every row (any float dtype; finite: a NaN has no place in an order,
    the caller refuses it). Each call sorts every block without keeping ties in order, then sorts
    again, stably, only the blocks in which two scores are equal.
    """

    def __init__(self, starts: Ints, lengths: Ints) -> None:
        self.starts = np.asarray(starts, dtype=np.int64)
        self.lengths = np.asarray(lengths, dtype=np.int64)
        self.n = int(self.lengths.sum())
        self.width = int(self.lengths.max(initial=0))
        n_blocks = len(self.lengths)
        # equal blocks are a reshape; otherwise each row's cell in the padded matrix
        self.equal = n_blocks > 0 and bool((self.lengths == self.width).all())
        if not self.equal:
            block = np.repeat(np.arange(n_blocks), self.lengths)
            self.cell = block * self.width + (np.arange(self.n) - self.starts[block])
            self.real = np.zeros(n_blocks * self.width, dtype=bool)
            self.real[self.cell] = True

    def __call__(self, score: Scores) -> Ints:
        n_blocks = len(self.lengths)
        if n_blocks == 0:
            return np.zeros(0, dtype=np.int64)
        key: npt.NDArray[np.floating]
        if self.equal:
            key = (-score).reshape(n_blocks, self.width)
        else:
            padded = np.full(n_blocks * self.width, np.inf, dtype=score.dtype)
            padded[self.cell] = -score
            key = padded.reshape(n_blocks, self.width)
        order = np.argsort(key, axis=1)
        ordered = np.take_along_axis(key, order, axis=1)
        same = ordered[:, 1:] == ordered[:, :-1]
        if not self.equal:
            same &= np.isfinite(ordered[:, 1:])  # padding ties with padding: no matter
        tied = same.any(axis=1)
        if tied.any():
            order[tied] = np.argsort(key[tied], axis=1, kind="stable")
        flat = order + np.arange(n_blocks)[:, None] * self.width  # cell of each place
        if self.equal:
            rows: Ints = flat.ravel()
            return rows
        places = flat.ravel()
        keep = self.real[places]
        # cell -> row: a block's cells hold its rows in order, from the block's first row
        block = places[keep] // self.width
        rows = places[keep] - block * self.width + self.starts[block]
        return rows


__all__ = ["BlockSort"]
