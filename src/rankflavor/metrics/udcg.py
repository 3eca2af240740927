"""UDCG: utility and distraction-aware cumulative gain, for contexts an LLM reads (RAG).

References
----------
G. Trappolini, F. Cuconasu, S. Filice, Y. Maarek, F. Silvestri. "Redefining Retrieval
Evaluation in the Era of LLMs". arXiv 2510.21440, 2025 (EACL 2026). Code and data:
github.com/GiovanniTRA/UDCG, ``src/compute_udcg_scores.py`` and ``data/dataset_with_udcg.json``
(commit daeee3b).

What was verified, and from where
---------------------------------
*The authors' code* (read in full): a context of n passages scores

    UDCG = sigmoid( (1/n) * sum_i w_i * u_i ),   w_i = 1 (relevant) or -1/3 (not relevant)

with u_i = 1 - no_res_prob, the LLM's probability of answering given that passage alone. A
passage missing its label or utility adds nothing but still counts in n; an empty context
scores 0 (no sigmoid). Positions do not enter.

The code disagrees with itself on the penalty: ``compute_udcg_score`` and its ``--irrelevant_weight``
default to -1/3, but ``example_pipeline.sh`` passes ``-0.333`` (the README's "default: -0.333"), and
the published ``data/dataset_with_udcg.json`` was made that way. ``penalty`` defaults to the
function's -1/3; ``penalty=-0.333`` reproduces the published file exactly (``tests/metrics/test_udcg.py``
checks both: the default lies 4e-5 to 7e-5 below the file's values).

*The paper's text* was not readable here (the stored arXiv page holds its abstract: "an
LLM-oriented positional discount"). A secondary account of it gives
UDCG_theta = sigmoid( sum_i alpha_i u_i+ + sum_i beta_i u_i- ) with 2k positional weights fitted
by a linear model to answer accuracy. That form is offered as a flavor (``param``, below), but
it is checked only against that formula, not against the paper; no fitted weights ship with
it and none are invented here.

The flavors
-----------
Per-passage utility (``utility`` knob):

- ``label`` (default): u = 1 for a relevant passage (grade >= ``rel``), the distractor side for
  a passage whose grade is exactly ``distractor_grade`` (an explicit mapping, as TREC qrels give
  negative grades other meanings; it wins over ``rel``), 0 otherwise (unjudged, non-relevant).
  ``distractor_grade=0`` makes every judged non-relevant passage a distractor, as the authors'
  code does.
- ``grade``: the judgment's value is the passage's utility (an LLM judge's, e.g. the code's
  +(1 - no_res_prob) for a relevant passage and -(1 - no_res_prob) for a distracting one): a
  positive value is on the relevant side, a negative one on the distractor side with its size.

Weights (``param`` knob):

- none (default, the authors' code): sigmoid of the mean over the n = min(k, retrieved)
  passages of u (relevant side) and ``penalty`` * |u| (distractor side); ``penalty`` defaults
  to -1/3, the code's ``irrelevant_weight``.
- ``param=(a_1,...,a_k,b_1,...,b_k)`` (the secondary account's positional form, needs ``@k``):
  sigmoid(sum_i a_i u_i+ + sum_i b_i u_i-), u+ and u- the sizes (>= 0) of the relevant-side and
  distractor-side utilities at rank i; the b_i carry the sign (negative to penalise; under the
  convention u- = min(u, 0), negate them), ``penalty`` is not read.

An empty context (nothing retrieved within k) scores 0 under both, as the code does.

A distractor's grade is read as the judgments give it, before the ``negatives`` policy: under
``negatives=unjudged`` (trec_eval's rule, the default) a negative grade is still unjudged for
every other measure, and ``unjudged=condensed`` removes it before ranking; ``negatives=zero``
keeps it in the list.

Examples
--------
>>> from rankflavor import evaluate
>>> qrels = {"q": {"a": 1, "b": -1, "c": 0}}
>>> run = {"q": {"a": 0.9, "b": 0.8, "c": 0.7}}
>>> r = evaluate(qrels, run, ["UDCG@3[distractor_grade=-1]", "UDCG@3"])
>>> [round(m.mean, 4) for m in r]   # sigmoid((1 - 1/3) / 3), sigmoid(1 / 3)
[0.5553, 0.5826]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from rankflavor.base import kernels as K
from rankflavor.errors import FlavorError
from rankflavor.metrics.registry import INPUT_KNOBS, MetricSpec, register

if TYPE_CHECKING:
    from rankflavor.flavor.flavor import Flavor
    from rankflavor.metrics.measure import Measure
    from rankflavor.order import Ranked

Floats = NDArray[np.float64]

#: The authors' code's ``irrelevant_weight`` (``compute_udcg_scores.py``: ``-1/3``).
DEFAULT_PENALTY = -1.0 / 3.0


def _sigmoid(x: Floats) -> Floats:
    out: Floats = 1.0 / (1.0 + np.exp(-x))
    return out


def utilities(r: Ranked, rows: NDArray[np.int64], f: Flavor) -> tuple[Floats, Floats]:
    """Relevant-side and distractor-side utility sizes (u+, u-) of ranked ``rows``, both >= 0."""
    assert r.row is not None  # a ranking names the aligned run row of each of its rows
    raw = np.asarray(r.aligned.run_grade, dtype=np.float64)[r.row[rows]]  # NaN: not in the qrels
    if f.utility == "grade":
        u = np.nan_to_num(raw, nan=0.0)
        return np.maximum(u, 0.0), np.maximum(-u, 0.0)
    marked = f.distractor_value
    distractor = np.zeros(len(rows), dtype=bool) if marked is None else raw == marked
    relevant = r.judged[rows] & (r.grade[rows] >= f.rel_threshold) & ~distractor
    return relevant.astype(np.float64), distractor.astype(np.float64)


def udcg_kernel(r: Ranked, measure: Measure) -> tuple[Floats, NDArray[np.bool_]]:
    """UDCG@k per query; no query is empty (see the module docstring for the flavors)."""
    f = measure.flavor
    n = r.n_queries
    k = measure.k
    rows = np.flatnonzero(r.rank <= k) if k is not None else np.arange(len(r.q))
    plus, minus = utilities(r, rows, f)
    q = r.q[rows]
    context = r.n_ret.astype(np.float64) if k is None else np.minimum(r.n_ret, k).astype(np.float64)
    weights = f.param_values
    if weights is None:
        penalty = DEFAULT_PENALTY if f.penalty_value is None else f.penalty_value
        total = K.segment_sum(q, plus + penalty * minus, n)
        with np.errstate(divide="ignore", invalid="ignore"):
            x = np.where(context > 0, total / np.where(context > 0, context, 1.0), 0.0)
    else:
        if k is None or len(weights) != 2 * k:
            raise FlavorError(
                f"{measure.name}: param gives the positional weights (a_1..a_k, b_1..b_k) of relevant and "
                f"distracting passages, 2k numbers for UDCG@k; received {len(weights)}"
                + ("" if k is not None else " and no cutoff")
            )
        a = np.asarray(weights[:k], dtype=np.float64)
        b = np.asarray(weights[k:], dtype=np.float64)
        at = r.rank[rows] - 1
        x = K.segment_sum(q, a[at] * plus + b[at] * minus, n)
    return np.where(context > 0, _sigmoid(x), 0.0), np.zeros(n, dtype=bool)


register(
    MetricSpec(
        "UDCG",
        ("param", "penalty", "utility", "distractor_grade", "rel", *INPUT_KNOBS),
        udcg_kernel,
        aliases=("udcg",),
        doc="Utility and distraction-aware cumulative gain (Trappolini et al. 2025): sigmoid of the mean "
            "passage utility, distractors weighted by penalty (-1/3); param = 2k positional weights.",
        uses_empty=False,
        # Unjudged rows add nothing; the context size comes from n_ret. Distractors are in the
        # qrels (pooled), so the judged rows hold them.
        judged_only=True,
        knob_when=(
            ("penalty", lambda f: f.param_values is None),
            ("distractor_grade", lambda f: f.utility == "label"),
            ("rel", lambda f: f.utility == "label"),
        ),
    )
)
