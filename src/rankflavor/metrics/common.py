"""What the binary and trec_eval kernels share: relevance at the ``rel`` threshold, hits within a
cutoff, parameters, and tables several measures of one ranking reuse."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
from numpy.typing import NDArray

from rankflavor.base import kernels as K
from rankflavor.errors import FlavorError

if TYPE_CHECKING:
    from rankflavor.metrics.measure import Measure
    from rankflavor.order import Ranked

T = TypeVar("T")
#: Tables several measures share (11 iprec levels, the gain measures), per live ranking. Keyed by
#: object identity and checked against a weak reference, so a new ranking never sees old tables:
#: the value is a function of the ranking and the key alone, so sharing it changes no result.
_SHARED: dict[tuple[Any, ...], tuple[weakref.ref[Any], Any]] = {}


def shared(r: Ranked, key: tuple[Any, ...], build: Callable[[], T]) -> T:
    """``build()``, made once per ranking ``r`` and ``key``."""
    full = (id(r), *key)
    hit = _SHARED.get(full)
    if hit is not None and hit[0]() is r:
        return hit[1]  # type: ignore[no-any-return]
    value = build()
    _SHARED[full] = (weakref.ref(r), value)
    weakref.finalize(r, _SHARED.pop, full, None)
    return value


def relevant(r: Ranked, measure: Measure) -> tuple[NDArray[np.bool_], NDArray[np.float64]]:
    """Relevant rows (judged, grade >= rel) and R (relevant judgments) per query code."""
    t = measure.flavor.rel_threshold
    rel = r.judged & (r.grade >= t)
    R = K.segment_sum(r.jq, (r.jgrade >= t).astype(np.float64), r.n_queries)
    return rel, R


def in_cut(r: Ranked, measure: Measure) -> NDArray[np.bool_]:
    """Rows within the measure's cutoff k (every row without one)."""
    return np.ones(len(r.q), dtype=bool) if measure.k is None else r.rank <= measure.k


def hits(r: Ranked, rel: NDArray[np.bool_], cut: NDArray[Any] | None = None) -> NDArray[np.float64]:
    """Relevant rows per query, within rank ``cut[q]`` when given."""
    pick = rel if cut is None else rel & (r.rank <= cut[r.q])
    return K.segment_sum(r.q, pick.astype(np.float64), r.n_queries)


def no_empty(r: Ranked) -> NDArray[np.bool_]:
    """No query is empty: for metrics without an ``empty`` policy."""
    return np.zeros(r.n_queries, dtype=bool)


def params(measure: Measure, default: tuple[float, ...] | None, *, count: int | None = None) -> tuple[float, ...]:
    """The ``param`` knob's numbers, or ``default``; a :class:`FlavorError` when it has none or
    ``count`` says how many it takes."""
    values = measure.flavor.param_values or default
    if values is None:
        raise FlavorError(f"metric '{measure.metric}' needs its parameter: set param=N, e.g. {measure.metric}[param=0.5]")
    if count is not None and len(values) != count:
        raise FlavorError(
            f"metric '{measure.metric}' takes {count} parameter value(s) in param, received {measure.flavor.param}"
        )
    return values
