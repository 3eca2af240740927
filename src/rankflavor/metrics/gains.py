"""Gains and discounts: what the flavor's ``gain`` and ``discount`` knobs make of a grade and a rank.

Pure NumPy over the flavor's typed knobs; every gain-and-discount metric (DCG, NDCG, ERR_gain,
RBP_gain, ...) and :mod:`rankflavor.torch` read them here.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from rankflavor.flavor.flavor import Flavor


#: The formula of each kind of gain (the ``gain`` knob's :attr:`~rankflavor.flavor.flavor.TypedKnobs.gain_kind`):
#: ``grade`` (g), ``exp2m1`` (2^g - 1, Burges et al. 2005), ``at_least_rel`` (1 if g >= rel else
#: 0) or ``table`` (the table's gain, else g). :func:`gain` computes them with NumPy and
#: :mod:`rankflavor.torch` with tensor operations: a kind added here without its formula there
#: is refused there, never computed another way.
GAIN_FORMULAS: dict[str, str] = {"linear": "grade", "exp2": "exp2m1", "binary": "at_least_rel", "table": "table"}


def gain(grade: NDArray[np.float64], judged: NDArray[np.bool_], flavor: Flavor) -> NDArray[np.float64]:
    """Gain of each row under ``flavor.gain`` (:data:`GAIN_FORMULAS`); rows without a usable
    judgment gain 0, and so do grades below ``min_grade`` (``flavor.grade_floor``).

    >>> import numpy as np
    >>> from rankflavor.flavor.flavor import Flavor
    >>> g = np.array([0.0, 1, 2, 3]); j = np.ones(4, bool)
    >>> gain(g, j, Flavor(gain="exp2")).tolist()
    [0.0, 1.0, 3.0, 7.0]
    >>> gain(g, j, Flavor(gain="{2:5}")).tolist()   # unlisted grades keep gain g
    [0.0, 1.0, 5.0, 3.0]
    >>> gain(g, j, Flavor(min_grade=2)).tolist()     # ranx -l2: grades below 2 gain nothing
    [0.0, 0.0, 2.0, 3.0]
    """
    out = _GAINS[GAIN_FORMULAS[flavor.gain_kind]](grade, flavor)
    floor = flavor.grade_floor
    if floor is not None:  # ranx: grades below its level are dropped from DCG and IDCG alike
        out[grade < floor] = 0.0
    out[~judged] = 0.0
    return out


def _table_gain(grade: NDArray[np.float64], flavor: Flavor) -> NDArray[np.float64]:
    out = grade.astype(np.float64, copy=True)
    for g, v in flavor.gain_table or ():
        out[grade == g] = v
    return out


_GAINS: dict[str, Callable[[NDArray[np.float64], Flavor], NDArray[np.float64]]] = {
    "grade": lambda grade, flavor: grade.astype(np.float64, copy=True),
    "exp2m1": lambda grade, flavor: np.exp2(grade) - 1.0,
    "at_least_rel": lambda grade, flavor: (grade >= flavor.rel_threshold).astype(np.float64),
    "table": _table_gain,
}


def discount_denominators(flavor: Flavor, n: int) -> NDArray[np.float64]:
    """Denominators d[i] for ranks i = 0..n (index 0 unused): contribution = gain / d[rank].

    Division (not multiplication by a reciprocal) keeps results bit-identical to trec_eval's
    ``gain / log2(i + 2)``. Size ``n`` by what is read (the longest ranked or judged list), never
    by the cutoff alone: ``k`` may be as large as 2**53 (:func:`running_sums` sums a discount
    over more slots than any list holds).

    >>> from rankflavor.flavor.flavor import Flavor
    >>> discount_denominators(Flavor(discount="jk(2)"), 4)[1:].round(4).tolist()
    [1.0, 1.0, 1.585, 2.0]
    """
    d = discounts(flavor, np.arange(n + 1, dtype=np.float64))
    d[0] = 1.0
    return d


def discounts(flavor: Flavor, ranks: NDArray[np.float64]) -> NDArray[np.float64]:
    """The discount denominator of each 1-based rank in ``ranks`` (:func:`discount_denominators`
    of those ranks, element by element the same numbers)."""
    if flavor.discount == "log2":
        return cast("NDArray[np.float64]", np.log2(ranks + 1.0))
    if flavor.discount == "reciprocal":
        return ranks.copy()
    if flavor.log_base is not None:  # log(b): log_b(i+1), as scikit-learn's log(i+1) / log(b)
        return cast("NDArray[np.float64]", np.log(ranks + 1.0) / math.log(flavor.log_base))
    base = flavor.jk_base or 2.0
    with np.errstate(divide="ignore"):
        return np.where(ranks < base, 1.0, np.log(np.maximum(ranks, 1.0)) / math.log(base))
