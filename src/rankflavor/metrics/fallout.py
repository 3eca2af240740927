"""Fall-out: the share of the non-relevant candidates that the top k lets through.

References
----------
Lightning-AI/torchmetrics 1.9 ``functional/retrieval/fall_out.py`` (``retrieval_fall_out``: the
non-relevant documents in the top k over every non-relevant document of the query's candidates,
0 when there is none) and ``retrieval/fall_out.py`` (``RetrievalFallOut``: a query without a
non-relevant document takes ``empty_target_action``, ``pos`` by default).

A library of this kind sees only the candidates it scored, so N counts the non-relevant documents
the run retrieved: judged below ``rel`` or not judged at all (a candidate without a label is a
negative target there). No relevance judgment outside the run enters the value. Lower is better.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from rankflavor.metrics.common import hits, in_cut, relevant
from rankflavor.metrics.registry import INPUT_KNOBS, MetricSpec, register

if TYPE_CHECKING:
    from rankflavor.metrics.measure import Measure
    from rankflavor.order import Ranked


def fall_out(r: Ranked, measure: Measure) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Non-relevant retrieved documents in the top k / non-relevant retrieved documents; empty
    (nothing non-relevant to let through) where the run retrieved none.

    Examples
    --------
    >>> from rankflavor import evaluate
    >>> qrels, run = {"q": {"a": 1, "b": 0, "c": 1}}, {"q": {"a": 0.9, "b": 0.8, "x": 0.7, "c": 0.6}}
    >>> [evaluate(qrels, run, m)[0].mean for m in ("fallout@1", "fallout@2", "fallout@3", "fallout")]
    [0.0, 0.5, 1.0, 1.0]
    """
    rel, _ = relevant(r, measure)
    nonrel = ~rel
    total = hits(r, nonrel)
    found = hits(r, nonrel & in_cut(r, measure))
    return np.where(total > 0, found / np.maximum(total, 1), 0.0), total == 0


register(
    MetricSpec(
        "fallout",
        ("rel", *INPUT_KNOBS),
        fall_out,
        aliases=("fall_out",),
        doc="Fall-out: non-relevant retrieved in the top k / non-relevant retrieved (torchmetrics); lower is better.",
    )
)
