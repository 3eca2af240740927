"""The facts ``check``'s table checks compute, apart from the findings that word them.

Every table check is per query (each query's rows decide alone) or a sum, a histogram or a
list over queries, so its facts over a whole input are the merge of its facts over any split of
the input by whole queries: counts add, the first occurrence is the one of least input order,
listed rows are the first ``limit`` in input order, named query ids the first in byte order
(the order of :func:`rankflavor.align.queries.coded_queries`). The local engine computes the
facts of a whole table and words them; the Spark engine computes them per bucket of queries in
its tasks, merges them on the driver with :func:`merged` and words them with the same code.

Each row carries ``at``, its place in the input order (the row index locally; the ``row`` of
a Spark table, unique and ordered across partitions and files), and its ``line`` (None when
the input is not a file).

Examples
--------
>>> a, b = Names.of(["q2", "q9"]), Names.of(["q10"])
>>> merged([a, b]).text(), merged([First(4, 5), First(2, 3)]).line
("'q10', 'q2', 'q9'", 3)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from rankflavor.analysis.check.findings import shown

#: Query ids a message names before "...".
NAMED = 5

T = TypeVar("T")


def _byte_order(name: str) -> bytes:
    return name.encode("utf-8", "surrogatepass")


@dataclass(frozen=True)
class First:
    """The earliest row with a property: its input order, its line, and what a message quotes
    of it (``value``)."""

    at: int
    line: int | None
    value: Any = None

    def merge(self, other: First) -> First:
        return self if self.at <= other.at else other


@dataclass(frozen=True)
class Names:
    """Queries with a property: how many, and the first :data:`NAMED` of their ids in byte order."""

    count: int = 0
    ids: tuple[str, ...] = ()

    @classmethod
    def of(cls, ids: Iterable[str], count: int | None = None) -> Names:
        """``ids`` (the first :data:`NAMED` in byte order kept); ``count``: how many in all,
        when ``ids`` holds only the first of them."""
        every = sorted(ids, key=_byte_order)
        return cls(len(every) if count is None else count, tuple(every[:NAMED]))

    def merge(self, other: Names) -> Names:
        return Names.of((*self.ids, *other.ids), self.count + other.count)

    def text(self) -> str:
        """The ids as a message names them: quoted, ", ..." after the first :data:`NAMED`."""
        return ", ".join(shown(i) for i in self.ids) + (", ..." if self.count > NAMED else "")


@dataclass(frozen=True)
class Listed:
    """Rows of one kind of finding: how many, and the first ``limit`` in input order, each a
    tuple whose first item is its ``at``."""

    limit: int
    count: int = 0
    rows: tuple[tuple[Any, ...], ...] = ()

    def merge(self, other: Listed) -> Listed:
        rows = sorted((*self.rows, *other.rows), key=lambda r: r[0])
        return Listed(self.limit, self.count + other.count, tuple(rows[: self.limit]))


@dataclass(frozen=True)
class Histogram:
    """Distinct values and how many rows hold each, while they are at most ``cap``; past it only
    that there are more (``values`` None)."""

    cap: int
    values: tuple[tuple[float, int], ...] | None = ()

    @classmethod
    def of(cls, data: np.ndarray, cap: int) -> Histogram:
        values, counts = np.unique(data, return_counts=True)
        if len(values) > cap:
            return cls(cap, None)
        return cls(cap, tuple(zip(values.tolist(), counts.tolist(), strict=True)))

    def merge(self, other: Histogram) -> Histogram:
        if self.values is None or other.values is None:
            return Histogram(self.cap, None)
        total: dict[float, int] = {}
        for v, c in (*self.values, *other.values):
            total[v] = total.get(v, 0) + c
        if len(total) > self.cap:
            return Histogram(self.cap, None)
        return Histogram(self.cap, tuple(sorted(total.items())))


def first(at: np.ndarray | None, lines: Any, rows: np.ndarray, value: Any = None) -> First | None:
    """The :class:`First` of ``rows`` (row indices of a table, ascending: the first is the
    earliest), or None for none; ``at``: the rows' input order (None: the index), ``lines``:
    the table's ``line_of``."""
    if len(rows) == 0:
        return None
    row = int(rows[0])
    return First(row if at is None else int(at[row]), lines(row), value)


def order_of(at: np.ndarray | None, rows: np.ndarray) -> list[int]:
    """The input order of table rows ``rows``."""
    return rows.tolist() if at is None else at[rows].tolist()


def merged(parts: Sequence[T]) -> T:
    """The merge of facts of one kind over parts of an input split by whole queries: ints add,
    booleans and, :class:`First` the earliest (None: none), :class:`Names`, :class:`Listed`,
    :class:`Histogram` and dataclasses of facts field by field."""
    items = [p for p in parts if p is not None]
    if not items:
        return None  # type: ignore[return-value]
    out = items[0]
    for item in items[1:]:
        out = _merge(out, item)
    return out


def _merge(a: Any, b: Any) -> Any:
    if a is None or b is None:
        return b if a is None else a
    if isinstance(a, bool):
        return a and b
    if isinstance(a, int):
        return a + b
    if hasattr(a, "merge"):
        return a.merge(b)
    if dataclasses.is_dataclass(a):
        return dataclasses.replace(a, **{f.name: _merge(getattr(a, f.name), getattr(b, f.name))  # type: ignore[misc,type-var]
                                         for f in dataclasses.fields(a) if f.init})
    raise TypeError(f"cannot merge facts of type {type(a).__name__}")


__all__ = ["NAMED", "First", "Histogram", "Listed", "Names", "first", "merged", "order_of"]
