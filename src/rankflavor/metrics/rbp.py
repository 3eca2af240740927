"""Rank-biased precision and its residual (Moffat & Zobel 2008).

References
----------
A. Moffat, J. Zobel. "Rank-biased precision for measurement of retrieval effectiveness".
ACM TOIS 27(1), 2008: RBP = (1 - p) sum_{i<=d} r_i p^(i-1), r_i in [0, 1]; the residual
(1 - p) sum_{unjudged i<=d} p^(i-1) + p^d is what the unjudged ranks and the ranks past the
run's end (d = min(k, retrieved)) could still add, so [RBP, RBP + residual] holds the value
under every grading of them.

The persistence p is the ``param`` knob (default 0.8, as ir_measures; trec_eval 10.0 uses 0.9).
r_i is gain(g) / gain(G) under the ``gain`` knob with G = ``max_grade`` (linear: g/G), or 1 for
a relevant document under ``gain=binary`` (no G needed). ``RBP_gain`` leaves the gains unscaled,
as ranx 0.3.21 does (``ranx/metrics/rank_biased_precision.py``: r_i = the grade at or above the
relevance level, else 0).

Examples
--------
>>> from rankflavor import evaluate
>>> qrels, run = {"q": {"a": 3, "b": 0, "c": 1}}, {"q": {"a": 0.9, "x": 0.8, "c": 0.7}}
>>> r = evaluate(qrels, run, ["RBP[param=0.5,max_grade=3]", "RBP_resid[param=0.5]"])
>>> [round(m.mean, 4) for m in r]   # 0.5 * (1 + 0.25/3); 0.5 * 0.5 (x) + 0.5^3 (past the end)
[0.5417, 0.375]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from rankflavor.base import kernels as K
from rankflavor.errors import FlavorError
from rankflavor.flavor.flavor import format_number
from rankflavor.metrics.gains import gain
from rankflavor.metrics.registry import INPUT_KNOBS, MetricSpec, register

if TYPE_CHECKING:
    from rankflavor.metrics.measure import Measure
    from rankflavor.order import Ranked

Result = tuple[NDArray[np.float64], NDArray[np.bool_]]

#: Persistence when ``param`` is none.
DEFAULT_P = 0.8


def persistence(measure: Measure) -> float:
    """p from the ``param`` knob: one number with 0 < p < 1."""
    values = measure.flavor.param_values
    if values is None:
        return DEFAULT_P
    if len(values) != 1 or not 0 < values[0] < 1:
        raise FlavorError(f"{measure.name}: param is the persistence p, one number with 0 < p < 1")
    return float(values[0])


def top_gain(r: Ranked, measure: Measure, hint: str = "") -> float:
    """gain(G) of the scale's top grade G = ``max_grade`` (1 under ``gain=binary``), refusing a
    flavor without G, a judgment above it, and a G with no positive gain. ``hint`` is added to the
    message for a missing G (how the measure's tool names it)."""
    f = measure.flavor
    if f.gain == "binary":
        return 1.0
    top = f.top_grade
    if top is None:
        raise FlavorError(
            f"{measure.name} scales gains by the top grade G of the label scale (r = gain(g) / gain(G){hint}): "
            "set max_grade, declare a scale, or use gain=binary"
        )
    if len(r.jgrade) and float(r.jgrade.max()) > top:
        raise FlavorError(f"{measure.name}: a grade {float(r.jgrade.max()):g} exceeds max_grade={top:g}")
    g_top = float(gain(np.array([top]), np.array([True]), f)[0])
    if g_top <= 0:
        raise FlavorError(f"{measure.name}: the top grade max_grade={format_number(top)} has no positive gain")
    return g_top


def _rows(r: Ranked, measure: Measure) -> NDArray[np.int64]:
    return np.flatnonzero(r.rank <= measure.k) if measure.k is not None else np.arange(len(r.q))


def _discounted(r: Ranked, measure: Measure) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.float64]]:
    """The rows within k, their gains and their weights (1 - p) p^(i-1)."""
    p = persistence(measure)
    f = measure.flavor
    rows = _rows(r, measure)
    gains = r.gains(lambda grade, judged, pooled: gain(grade, judged, f), rows)
    return rows, gains, (1.0 - p) * np.power(p, r.rank[rows] - 1.0)


def rbp_kernel(r: Ranked, measure: Measure) -> Result:
    """RBP per query (the lower end of its interval); no query is empty."""
    rows, gains, weight = _discounted(r, measure)  # (a bad p is named before a missing top grade)
    g_top = top_gain(r, measure)
    return K.segment_sum(r.q[rows], gains / g_top * weight, r.n_queries), np.zeros(r.n_queries, dtype=bool)


def rbp_gain_kernel(r: Ranked, measure: Measure) -> Result:
    """(1 - p) sum_i gain(g_i) p^(i-1): RBP on the gains themselves, not scaled by the top grade's.

    ranx's ``rbp.p`` weighs a rank by its grade when the grade reaches the level, else by 0
    (``gain=linear`` with ``min_grade`` = the level), so on graded judgments it can exceed 1; on
    binary ones, and under ``gain=binary``, it is Moffat and Zobel's RBP.

    Examples
    --------
    >>> from rankflavor import evaluate
    >>> qrels, run = {"q": {"a": 3, "b": 0, "c": 1}}, {"q": {"a": 0.9, "x": 0.8, "c": 0.7}}
    >>> [m.mean for m in evaluate(qrels, run, ["RBP_gain[param=0.5]", "RBP_gain[param=0.5,min_grade=2]"])]
    [1.625, 1.5]
    """
    rows, gains, weight = _discounted(r, measure)
    return K.segment_sum(r.q[rows], gains * weight, r.n_queries), np.zeros(r.n_queries, dtype=bool)


def residual_kernel(r: Ranked, measure: Measure) -> Result:
    """RBP's residual per query: 1 - (1 - p) sum over judged ranks i <= d of p^(i-1), which is the
    weight of the unjudged ranks down to d = min(k, retrieved) plus p^d for the ranks past it."""
    p = persistence(measure)
    rows = _rows(r, measure)
    rows = rows[r.judged[rows]]
    judged_weight = K.segment_sum(r.q[rows], (1.0 - p) * np.power(p, r.rank[rows] - 1.0), r.n_queries)
    return 1.0 - judged_weight, np.zeros(r.n_queries, dtype=bool)


register(
    MetricSpec(
        "RBP",
        ("param", "gain", "max_grade", "rel", *INPUT_KNOBS),
        rbp_kernel,
        aliases=("rbp",),
        doc="Rank-biased precision (Moffat & Zobel 2008), persistence p = param (default 0.8), r = gain(g)/gain(G).",
        uses_empty=False,
        judged_only=lambda m: m.flavor.ties != "averaged",
        knob_when=(("rel", lambda f: f.gain == "binary"), ("max_grade", lambda f: f.gain != "binary")),
        top_grade_when=lambda f: f.gain != "binary",
        residual="RBP_resid",
    )
)
register(
    MetricSpec(
        "RBP_gain",
        ("param", "gain", "min_grade", "rel", *INPUT_KNOBS),
        rbp_gain_kernel,
        doc="RBP on unscaled gains, (1 - p) sum gain(g_i) p^(i-1) (ranx rbp.p: the grade itself); p = param.",
        uses_empty=False,
        judged_only=lambda m: m.flavor.ties != "averaged",
        knob_when=(("rel", lambda f: f.gain == "binary"),),
    )
)
register(
    MetricSpec(
        "RBP_resid",
        ("param", *INPUT_KNOBS),
        residual_kernel,
        aliases=("rbp_resid", "rbp_residual"),
        doc="RBP's residual: the weight of unjudged ranks and of ranks past the run's end (Moffat & Zobel 2008).",
        uses_empty=False,
        judged_only=True,
    )
)
