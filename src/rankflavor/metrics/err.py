"""Expected reciprocal rank (cascade user model).

References
----------
O. Chapelle, D. Metzler, Y. Zhang, P. Grinspan. "Expected reciprocal rank for graded relevance".
CIKM 2009. R(g) = (2^g - 1) / 2^G; ERR@k = sum_{r<=k} (1/r) R_r prod_{i<r} (1 - R_i).
G is the top grade of the scale (``max_grade``): gdeval fixes 4, Quepid 3. Unjudged documents
have R = 0. There is no ideal, so values lie in [0, 1).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from .. import kernels as K
from ..errors import FlavorError
from .registry import INPUT_KNOBS, MetricSpec, register

if TYPE_CHECKING:
    from ..measure import Measure
    from ..order import Ranked


def err_kernel(r: Ranked, measure: Measure) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """ERR@k per query; empty where no judgment is positive.

    Examples
    --------
    >>> from rankflavor import evaluate
    >>> qrels, run = {"q": {"a": 3, "b": 0, "c": 1}}, {"q": {"a": 0.9, "b": 0.8, "c": 0.7}}
    >>> [round(m.mean, 4) for m in evaluate(qrels, run, ["ERR@3[max_grade=3]", "ERR@3[max_grade=4]"])]
    [0.8802, 0.4492]
    """
    top = measure.flavor.top_grade
    if top is None:
        raise FlavorError(
            f"{measure.name} needs the top grade G of the label scale: set max_grade (gdeval uses 4, Quepid 3)"
        )
    rows = np.flatnonzero(r.rank <= measure.k) if measure.k is not None else np.arange(len(r.q))
    q = r.q[rows]
    grade = np.where(r.judged[rows], np.maximum(r.grade[rows], 0.0), 0.0)
    if len(grade) and grade.max() > top:
        raise FlavorError(f"{measure.name}: a grade {grade.max():g} exceeds max_grade={top:g}")
    stop = (np.exp2(grade) - 1.0) / np.exp2(top)
    # Probability of reaching each rank: product of (1 - R) above it, as exp of a per-query
    # running sum of logs (never log 0: R < 1 for every grade <= G).
    log_continue = np.log1p(-stop)
    reach = np.exp(K.segment_cumsum(q, log_continue) - log_continue)
    values = K.segment_sum(q, stop * reach / r.rank[rows], r.n_queries)
    positive = K.segment_sum(r.jq, (r.jgrade > 0).astype(np.float64), r.n_queries)
    return values, positive == 0


register(
    MetricSpec(
        "ERR",
        ("max_grade", *INPUT_KNOBS),
        err_kernel,
        aliases=("err",),
        doc="Expected reciprocal rank (Chapelle et al. 2009), R(g) = (2^g-1)/2^max_grade; needs max_grade.",
        top_grade_when=lambda f: True,
    )
)
