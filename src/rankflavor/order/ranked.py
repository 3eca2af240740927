"""The :class:`Ranked` value every kernel reads: rows sorted by (query, rank), their grades, and
tie-resolved gains (averaged over tie groups when the ordering says ``ties=averaged``).

Examples
--------
>>> import numpy as np
>>> from rankflavor.order.strategy import Ordering
>>> r = Ranked(aligned=None, q=np.array([0, 0, 0]), rank=np.array([1, 2, 3]), grade=np.array([2.0, 0.0, 1.0]),
...            judged=np.ones(3, dtype=bool), pooled=np.ones(3, dtype=bool), score=np.array([1.0, 1.0, 0.5]),
...            n_ret=np.array([3]), jq=np.zeros(3, dtype=np.int32), jgrade=np.array([2.0, 0.0, 1.0]),
...            dropped_by_depth=0, dropped_unjudged=0, ordering=Ordering(ties="averaged"))
>>> linear = lambda grade, judged, pooled: np.where(judged, grade, 0.0)
>>> r.gains(linear).tolist()  # ranks 1 and 2 tie: both earn their mean
[1.0, 1.0, 1.0]
>>> r.gains(linear, rows=np.array([0])).tolist()
[1.0]
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import numpy.typing as npt

from rankflavor.order import ties
from rankflavor.order.strategy import Ordering

if TYPE_CHECKING:
    from rankflavor.align import Aligned

T = TypeVar("T")
Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]
Flags = npt.NDArray[np.bool_]

#: ``gain_fn(grade, judged, pooled) -> gains`` of some ranked rows (a kernel's gain rule).
GainFn = Callable[[Floats, Flags, Flags], Floats]


class SharedWork:
    """Work on an alignment's judgments that every ranking of it shares (NDCG's sorted ideal
    gain lists, ...), kept by the key of what it depends on. One per alignment (its ranker's),
    reachable from each :class:`Ranked`, so measures and cutoffs of one evaluation share it."""

    def __init__(self) -> None:
        self._store: dict[Hashable, Any] = {}

    def get(self, key: Hashable, build: Callable[[], T]) -> T:
        """The value kept under ``key``, built by ``build()`` on first use."""
        if key not in self._store:
            self._store[key] = build()
        return self._store[key]  # type: ignore[no-any-return]

    def __len__(self) -> int:
        return len(self._store)


@dataclass(frozen=True)
class Ranked:
    """Run rows sorted by (query, rank), with what every kernel needs.

    Attributes
    ----------
    aligned : the alignment ranked.
    q : query code per row; rows are sorted by (query code, rank).
    rank : 1-based rank per row within its query.
    grade : judged grade per row, 0 where the row is not judged.
    judged : the row has a usable judgment (negatives count as unjudged unless negatives=zero).
    pooled : the row's document appears in the qrels at all (any grade).
    score : the score each row was ordered by (at the ordering's precision).
    n_ret : rows per query code.
    jq, jgrade : usable judgments (query code, grade) of every query, for ideals and R.
    dropped_by_depth, dropped_unjudged : rows the depth cut and condensing removed.
    row : index of each ranked row in the aligned run arrays (which document sits at each rank).
    judged_only : only the rows with a judgment (see :attr:`judged_rows`); ranks and ``n_ret``
        are the full list's.
    ordering : the ordering ranked under.
    shared : work every ranking of the alignment shares (:class:`SharedWork`).
    kept_rows : when alignment left run duplicates in place, the rows of scored queries that
        the depth cut keeps (for the duplicates check, :func:`rankflavor.align.refuse_kept_duplicates`);
        None when there is nothing to check.
    to_rank : when set, only the rows ranked at or above it are held (the ranks, ``n_ret`` and
        judgments are still the full list's): a ranking for kernels that read no row below
        (:meth:`MetricSpec.deepest_rank <rankflavor.metrics.MetricSpec.deepest_rank>`). None: every row.
    """

    aligned: Aligned
    q: npt.NDArray[np.integer]
    rank: Ints
    grade: Floats
    judged: Flags
    pooled: Flags
    score: Floats
    n_ret: Ints
    jq: npt.NDArray[np.integer]
    jgrade: Floats
    dropped_by_depth: int
    dropped_unjudged: int
    row: Ints | None = None
    judged_only: bool = False
    ordering: Ordering = field(default_factory=Ordering)
    shared: SharedWork = field(default_factory=SharedWork, repr=False, compare=False)
    kept_rows: Ints | None = field(default=None, repr=False, compare=False)
    to_rank: int | None = None

    @property
    def n_queries(self) -> int:
        return len(self.n_ret)

    @property
    def max_len(self) -> int:
        return int(self.n_ret.max()) if len(self.n_ret) else 0

    @property
    def judged_rows(self) -> Ranked:
        """The rows whose document has a judgment (any grade), with their ranks in the full list.

        Kernels that read nothing else of an unjudged row (``MetricSpec.judged_only``) run on
        this: a few percent of a typical run.
        """
        # Not cached on a judged-only list: a reference to itself would be a cycle, and the
        # alignment it holds (hundreds of MB on a big run) would live until the next full
        # collection instead of being freed when the caller lets go.
        return self if self.judged_only else self._judged_subset

    @cached_property
    def _judged_subset(self) -> Ranked:
        idx = np.flatnonzero(self.pooled)
        return replace(
            self, q=self.q[idx], rank=self.rank[idx], grade=self.grade[idx], judged=self.judged[idx],
            pooled=self.pooled[idx], score=self.score[idx], row=None if self.row is None else self.row[idx],
            judged_only=True,
        )

    @cached_property
    def tie_group(self) -> Ints:
        """Id of the tie group (run of equal scores) of each row; needs every ranked row."""
        if self.judged_only or self.to_rank is not None:
            raise ValueError("tie groups need every ranked row, not only the judged or the top ones")
        return ties.tie_groups(self.q, self.score)

    def gains(self, gain_fn: GainFn, rows: Ints | None = None) -> Floats:
        """The gain of every ranked row (or of ``rows``) under ``gain_fn``, resolved by the tie
        rule: under ``ties=averaged`` each row earns its tie group's mean gain (McSherry-Najork),
        computed over whole groups even when only ``rows`` are asked for."""
        if not self.ordering.averaged:
            if rows is None:
                return gain_fn(self.grade, self.judged, self.pooled)
            return gain_fn(self.grade[rows], self.judged[rows], self.pooled[rows])

        def of_rows(at: Ints) -> Floats:
            return gain_fn(self.grade[at], self.judged[at], self.pooled[at])

        if rows is None:
            return ties.averaged(gain_fn(self.grade, self.judged, self.pooled), self.tie_group)
        if not len(rows):
            return of_rows(rows)
        return ties.averaged_at(of_rows, self.tie_group, rows)
