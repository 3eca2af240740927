"""Ordering: the one stage that sorts an alignment's rows and resolves ties.

* :mod:`~rankflavor.order.strategy`: :class:`Ordering` (the ordering knobs of a flavor, the
  cache key of rankings) and :class:`Needs` (which rows a kernel reads);
* :mod:`~rankflavor.order.ties`: the tie rules, written once for every path;
* :mod:`~rankflavor.order.grades`: the grade policies a ranking applies (fractional, negatives);
* :mod:`~rankflavor.order.layout`: whether a run is in rank order, and the sort when it is not;
* :mod:`~rankflavor.order.ranked`: :class:`Ranked`, what kernels read (tie-resolved gains too);
* :mod:`~rankflavor.order.ranker`: :class:`Ranker`, one per alignment, owning the shared work
  and choosing the cheapest path a kernel's needs allow.
"""

from __future__ import annotations

from rankflavor.order.grades import fractional_error, negatives_error
from rankflavor.order.ranked import GainFn, Ranked, SharedWork
from rankflavor.order.ranker import Ranker
from rankflavor.order.strategy import ORDER_KNOBS, TIE_RULES, Needs, Ordering, order_key

__all__ = [
    "ORDER_KNOBS", "TIE_RULES", "GainFn", "Needs", "Ordering", "Ranked", "Ranker", "SharedWork",
    "fractional_error", "negatives_error", "order_key",
]
