"""Ratings: judgments by several raters, one row per (query, document, rater)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Ratings:
    """Several raters' grades, as read (one row per rating).

    Attributes
    ----------
    query, doc, rater : arrays of str
        Ids of each rating's query, document and rater.
    grade : float64 array
        The grade each rater gave.
    source : str
        Where the ratings came from (a path, or a description).
    lines : int64 array or None
        1-based source line of each row, when read from a file.
    """

    query: np.ndarray
    doc: np.ndarray
    rater: np.ndarray
    grade: np.ndarray
    source: str = "ratings"
    lines: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.grade)

    @classmethod
    def from_rows(cls, rows: list[tuple[str, str, str, float]], source: str = "ratings",
                  lines: list[int] | None = None) -> Ratings:
        """Ratings from ``(query, doc, rater, grade)`` tuples.

        Examples
        --------
        >>> r = Ratings.from_rows([("q1", "d1", "ann", 2), ("q1", "d1", "bob", 3)])
        >>> len(r), sorted(set(r.rater))
        (2, ['ann', 'bob'])
        """
        cols = list(zip(*rows, strict=True)) if rows else [(), (), (), ()]
        return cls(
            np.asarray(cols[0], dtype=object), np.asarray(cols[1], dtype=object), np.asarray(cols[2], dtype=object),
            np.asarray(cols[3], dtype=np.float64), source, None if lines is None else np.asarray(lines, dtype=np.int64),
        )

    def pairs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Codes of the (query, document) pair of each row: ``(codes, pair_query, pair_doc)``,
        pairs in (query, doc) order."""
        key = np.asarray([f"{q}\x00{d}" for q, d in zip(self.query, self.doc, strict=True)], dtype=object)
        uniq, codes = np.unique(key, return_inverse=True)
        split = [u.split("\x00", 1) for u in uniq]
        return (codes.astype(np.int64), np.asarray([s[0] for s in split], dtype=object),
                np.asarray([s[1] for s in split], dtype=object))
