"""C/W/L metrics (Moffat et al. 2013; Azzopardi, Thomas & Moffat 2019) as cwl_eval computes them.

A C/W/L metric is a user model given by its continuation probabilities c_i (the chance that a
user at rank i goes on to rank i + 1). The weight of rank i is W_i = C_i / sum_j C_j with
C_1 = 1, C_i = prod_{m<i} c_m, and the value is the expected utility per item examined,
sum_i W_i r_i, with r_i in [0, 1] the gain of rank i scaled by the top grade.

References
----------
A. Moffat, P. Bailey, F. Scholer, P. Thomas. "INST: an adaptive metric for information retrieval
evaluation". ADCS 2015 (INST); A. Moffat, P. Thomas, F. Scholer. "Users versus models: what
observation tells us about effectiveness metrics". CIKM 2013 (INSQ). F. Zhang et al.
"Evaluating web search with a bejeweled player model". SIGIR 2017 (BPM, static form). L.
Azzopardi, J. Mackenzie, A. Moffat. "ERR is not C/W/L: exploring the relationship between expected
reciprocal rank and other metrics". ICTIR 2021, Eqs. 8-11 (NERR8..NERR11). A. Moffat, J. Zobel.
"Rank-biased precision". TOIS 2008 (RBP). ireval/cwl 1.0.12 (``cwl/ruler/measures/*.py``,
``ruler/ranking.py``), as ir_measures 0.4.3 calls it (``providers/cwl_eval.py``).

What cwl_eval does that these kernels follow
---------------------------------------------
- Every ranking is padded with zero gain, or cut, to ``N_MAX`` = 1000 ranks (cwl_eval's
  ``max_n``): the weights run over all 1000 ranks even when the run is shorter, so RBP_cwl is
  (1 - p) / (1 - p^1000) * sum_i p^(i-1) r_i, not Moffat & Zobel's RBP (:mod:`.rbp`).
- r = gain(g) / gain(G) with G = ``max_grade`` (ir_measures' ``max_rel``), or 1 for a relevant
  document under ``gain=binary``; unjudged documents gain 0 (cwl_eval's "worse case").
- The parameter is ``param``: persistence p of RBP_cwl (default 0.8, ir_measures') and NERR10
  (0.9), the target T of INST, INSQ, NERR11 and BPM (1). The cutoff k is NERR8/NERR9's
  truncation, SDCG's depth and BPM's cost budget K.

Examples
--------
>>> from rankflavor import evaluate
>>> qrels, run = {"q": {"a": 2, "b": 1}}, {"q": {"a": 0.9, "x": 0.8, "b": 0.7}}
>>> r = evaluate(qrels, run, ["SDCG@2[max_grade=2]", "NERR8@3[max_grade=2]"])
>>> [round(m.mean, 6) for m in r]   # 1 / (1 + 1/log2 3); a stops every user at rank 1
[0.613147, 1.0]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from rankflavor.errors import FlavorError
from rankflavor.flavor.flavor import format_number
from rankflavor.metrics.common import params
from rankflavor.metrics.gains import gain
from rankflavor.metrics.rbp import top_gain
from rankflavor.metrics.registry import INPUT_KNOBS, MetricSpec, register

if TYPE_CHECKING:
    from rankflavor.flavor.flavor import Flavor
    from rankflavor.metrics.measure import Measure
    from rankflavor.order import Ranked

Floats = NDArray[np.float64]
Result = tuple[Floats, NDArray[np.bool_]]
#: cwl_eval's ``max_n``: every ranking is padded (gain 0) or cut to this many ranks.
N_MAX = 1000
#: Queries per dense block (block x N_MAX floats per array).
_BLOCK = 2048

#: ``continuation(r, i, measure) -> c``: c_i for a block of scaled gains r (queries x ranks) at
#: ranks i (1-based, one row).
Continuation = Callable[[Floats, Floats, "Measure"], Floats]


def scaled_gains(r: Ranked, measure: Measure, rows: NDArray[np.int64]) -> Floats:
    """r = gain(g) / gain(G) of ``rows``, refused outside [0, 1] (a grade above G, a gain table
    with a gain above gain(G) or below 0)."""
    f = measure.flavor
    g_top = top_gain(r, measure, ", ir_measures' max_rel")
    gains = r.gains(lambda grade, judged, pooled: gain(grade, judged, f), rows) / g_top
    if len(gains) and (gains.min() < 0 or gains.max() > 1):
        raise FlavorError(f"{measure.name}: C/W/L gains r = gain(g) / gain(G) must lie in [0, 1], "
                          f"received {float(gains.min()):g}..{float(gains.max()):g}")
    return np.asarray(gains, dtype=np.float64)


def cwl_values(r: Ranked, measure: Measure, continuation: Continuation) -> Floats:
    """Expected utility per item, sum_i W_i r_i over ranks 1..N_MAX, per query code."""
    rows = np.flatnonzero(r.rank <= N_MAX)
    gains = scaled_gains(r, measure, rows)
    q, rank = r.q[rows].astype(np.int64), r.rank[rows].astype(np.int64)
    out = np.zeros(r.n_queries, dtype=np.float64)
    i = np.arange(1, N_MAX + 1, dtype=np.float64)[None, :]
    for start in range(0, r.n_queries, _BLOCK):
        stop = min(start + _BLOCK, r.n_queries)
        lo, hi = np.searchsorted(q, [start, stop])
        dense = np.zeros((stop - start, N_MAX), dtype=np.float64)
        dense[q[lo:hi] - start, rank[lo:hi] - 1] = gains[lo:hi]
        c = np.broadcast_to(continuation(dense, i, measure), dense.shape)
        reach = np.ones_like(dense)  # C_i = prod_{m<i} c_m
        reach[:, 1:] = np.cumprod(c[:, :-1], axis=1)
        out[start:stop] = (reach * dense).sum(axis=1) / reach.sum(axis=1)
    return out


def _param(measure: Measure, default: float, what: str, low: float, high: float) -> float:
    value = params(measure, (default,), count=1)[0]
    if not low < value <= high:
        raise FlavorError(f"{measure.name}: param is {what}, {format_number(low)} < value <= "
                          f"{format_number(high)}, received {format_number(value)}")
    return float(value)


def _k(measure: Measure) -> float:
    assert measure.k is not None  # cutoff="required"
    return float(measure.k)


def _persistence(default: float) -> Callable[[Measure], float]:
    return lambda m: _param(m, default, "the persistence p", 0.0, 1.0)


def _target(measure: Measure) -> float:
    return _param(measure, 1.0, "the target gain T", 0.0, float("inf"))


def _insq_c(i: Floats, t: float) -> Floats:
    out: Floats = ((i + 2.0 * t - 1.0) / (i + 2.0 * t)) ** 2.0
    return out


_RBP_P, _NERR10_P = _persistence(0.8), _persistence(0.9)

#: name -> (continuation, cutoff, has a param, doc)
_FAMILY: dict[str, tuple[Continuation, str, bool, str]] = {
    "RBP_cwl": (lambda g, i, m: np.full((1, N_MAX), _RBP_P(m)), "none", True,
                "RBP as cwl_eval computes it: c_i = p (default 0.8), weights normalised over 1000 ranks."),
    "NERR8": (lambda g, i, m: np.where(i <= _k(m) - 1, 1.0 - g, 0.0), "required", False,
              "Not-but-nearly ERR, Azzopardi et al. 2021 Eq. 8: c_i = 1 - r_i for i < k, 0 after."),
    "NERR9": (lambda g, i, m: np.where(i <= _k(m) - 1, i / (i + 1.0) * (1.0 - g), 0.0), "required", False,
              "NERR Eq. 9: c_i = i/(i+1) (1 - r_i) for i < k, 0 after."),
    "NERR10": (lambda g, i, m: _NERR10_P(m) * (1.0 - g), "none", True,
               "NERR Eq. 10: c_i = p (1 - r_i), p = param (default 0.9)."),
    "NERR11": (lambda g, i, m: _insq_c(i, _target(m)) * (1.0 - g), "none", True,
               "NERR Eq. 11: c_i = ((i+2T-1)/(i+2T))^2 (1 - r_i), T = param (default 1)."),
    "INST": (lambda g, i, m: _inst_c(g, i, _target(m)), "none", True,
             "INST (Moffat et al. 2015): c_i = ((i+T+T_i-1)/(i+T+T_i))^2, T_i = T - sum_{j<=i} r_j."),
    "INSQ": (lambda g, i, m: _insq_c(i, _target(m)), "none", True,
             "INSQ (Moffat et al. 2012): c_i = ((i+2T-1)/(i+2T))^2, T = param (default 1)."),
    "BPM": (lambda g, i, m: ((np.cumsum(g, axis=1) < _target(m)) & (i < _k(m))).astype(np.float64), "required", True,
            "Static bejeweled player model (Zhang et al. 2017): go on while sum_{j<=i} r_j < T and i < k."),
    "SDCG": (lambda g, i, m: np.where(i < _k(m), (np.log(i + 1.0) / np.log(2.0)) / (np.log(i + 2.0) / np.log(2.0)),
                                      0.0), "required", False,
             "Scaled DCG@k: DCG@k of r over the DCG of k fully relevant documents (cwl_eval's NDCG-k)."),
}


def _inst_c(g: Floats, i: Floats, t: float) -> Floats:
    t_i = t - np.cumsum(g, axis=1)
    out: Floats = ((i + t + t_i - 1.0) / (i + t + t_i)) ** 2.0
    return out


def _kernel(continuation: Continuation) -> Callable[[Ranked, Measure], Result]:
    def kernel(r: Ranked, measure: Measure) -> Result:
        return cwl_values(r, measure, continuation), np.zeros(r.n_queries, dtype=bool)

    return kernel


def _needs_top(f: Flavor) -> bool:
    return f.gain != "binary"


for _name, (_c, _cutoff, _has_param, _doc) in _FAMILY.items():
    register(
        MetricSpec(
            _name,
            ((("param",) if _has_param else ()) + ("gain", "max_grade", "rel", *INPUT_KNOBS)),
            _kernel(_c),
            cutoff=_cutoff,
            doc=_doc,
            uses_empty=False,
            judged_only=lambda m: m.flavor.ties != "averaged",  # unjudged rows gain 0; their ranks stay
            knob_when=(("rel", lambda f: f.gain == "binary"), ("max_grade", _needs_top)),
            top_grade_when=_needs_top,
        )
    )
