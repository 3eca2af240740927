"""torchmetrics' retrieval metrics: the class and functional names, the empty-target rule, the ties.

Every torchmetrics retrieval metric scores one query's candidates (the documents it was given,
here: the documents the run retrieved, an unjudged one a negative target) and averages the
queries. What each computes, read from torchmetrics 1.9 ``functional/retrieval/*.py``:

=====================================================  ===========================================
``RetrievalNormalizedDCG``, ``retrieval_normalized_dcg``  ``ndcg@k``: scikit-learn's NDCG (linear gain, ideal
``ndcg``                                                 from the candidates, tied scores averaged)
``RetrievalPrecision``, ``retrieval_precision``        ``P@k``: relevant in the top k over k (over the
``precision``                                          candidates without top_k; ``adaptive_k=True``:
                                                       over min(k, candidates))
``RetrievalRecall``, ``retrieval_recall``, ``recall``  ``recall@k``: over the relevant candidates
``RetrievalMAP``, ``retrieval_average_precision``,     ``AP@k[ap_divisor=found]``: the precisions at the
``map``                                                relevant ranks within k, averaged over those ranks
``RetrievalMRR``, ``retrieval_reciprocal_rank``,       ``RR@k``
``mrr``
``RetrievalHitRate``, ``retrieval_hit_rate``,          ``success@k``
``hit_rate``
``RetrievalFallOut``, ``retrieval_fall_out``,          ``fallout@k``: the non-relevant candidates in the
``fall_out``                                           top k over every non-relevant candidate
``RetrievalRPrecision``, ``retrieval_r_precision``,    ``Rprec`` over the relevant candidates
``r_precision``
=====================================================  ===========================================

Every metric but NDCG takes binary targets: here a document is relevant when its grade reaches
``rel`` (1). Precision, recall, MAP and MRR count a candidate scored <= 0 as not relevant
(``torch.where(preds > 0, target, 0)``: ``nonpositive=nonrelevant``); hit rate, fall-out and
R-precision do not. R, and the test for a query with nothing to find, count the relevant
*candidates* (``relevant_set=retrieved``). Scores are compared as float32 (``preds.float()``).

Empty targets: the classes take ``empty_target_action`` (``neg`` 0, ``pos`` 1, ``skip``,
``error``; ``neg`` by default, ``pos`` for ``RetrievalFallOut``, whose empty queries are those
without a non-relevant candidate); the functions return 0 for such a query. One difference is
kept: when *every* query is skipped, a class returns 0.0 where rankflavor's mean over no query
is NaN.

Ties: NDCG averages the gains of tied scores (McSherry-Najork), as scikit-learn. The others rank
with ``torch.topk`` or ``torch.argsort``, whose order among tied scores is not defined (neither
stable nor by index on tensors beyond a few elements): rankflavor ranks tied scores in input order
there, which torch gives on short tensors; compare on scores that do not tie.

Refused: ``RetrievalAUROC``, ``retrieval_auroc``, ``RetrievalPrecisionRecallCurve``,
``retrieval_precision_recall_curve``, ``RetrievalRecallAtFixedPrecision`` (curves and AUROC are no
ranking metric here), ``ignore_index`` (drop those rows from the input), an ``aggregation`` other
than ``mean``.

References
----------
Lightning-AI/torchmetrics 1.9: ``functional/retrieval/{ndcg,precision,recall,average_precision,
reciprocal_rank,hit_rate,fall_out,r_precision}.py``, ``retrieval/base.py`` (``RetrievalMetric.compute``:
``empty_target_action``, the ``aggregation``), ``retrieval/fall_out.py`` (the negative-target test),
``utilities/checks.py`` (``_check_retrieval_functional_inputs``: float32 preds, binary targets).
Checked against torchmetrics itself on random queries in ``tests/presets/test_presets_torchmetrics.py``.
"""

from __future__ import annotations

from rankflavor.errors import FlavorError
from rankflavor.presets.base import Canonical, Preset, Template
from rankflavor.presets.ml import SKLEARN_FLAVOR
from rankflavor.presets.mlcall import _bool, _one_cutoff, _try_call

_EMPTY_ACTIONS = {"neg": "zero", "pos": "one", "skip": "skip", "error": "error"}
#: What torchmetrics' binary metrics share: relevance from the candidates, ties in input order.
_CANDIDATES = {"relevant_set": "retrieved", "ties": "input_order"}
_SCORED = {**_CANDIDATES, "nonpositive": "nonrelevant"}

#: metric: (class name, functional name, short name, rankflavor metric, knobs, top_k taken,
#: the class's default empty_target_action)
_METRICS: dict[str, tuple[str, str, str, str, dict[str, str], bool, str]] = {
    "ndcg": ("RetrievalNormalizedDCG", "retrieval_normalized_dcg", "ndcg", "ndcg", {}, True, "neg"),
    "precision": ("RetrievalPrecision", "retrieval_precision", "precision", "P", _SCORED, True, "neg"),
    "recall": ("RetrievalRecall", "retrieval_recall", "recall", "recall", _SCORED, True, "neg"),
    "map": ("RetrievalMAP", "retrieval_average_precision", "map", "AP", {**_SCORED, "ap_divisor": "found"}, True,
            "neg"),
    "mrr": ("RetrievalMRR", "retrieval_reciprocal_rank", "mrr", "RR", _SCORED, True, "neg"),
    "hit_rate": ("RetrievalHitRate", "retrieval_hit_rate", "hit_rate", "success", _CANDIDATES, True, "neg"),
    "fall_out": ("RetrievalFallOut", "retrieval_fall_out", "fall_out", "fallout", {"ties": "input_order"}, True,
                 "pos"),
    "r_precision": ("RetrievalRPrecision", "retrieval_r_precision", "r_precision", "Rprec", _CANDIDATES, False,
                    "neg"),
}
_REFUSED = ("RetrievalAUROC", "retrieval_auroc", "RetrievalPrecisionRecallCurve", "retrieval_precision_recall_curve",
            "RetrievalRecallAtFixedPrecision")
_NAMES = {name.lower(): (key, kind) for key, row in _METRICS.items()
          for kind, name in zip(("class", "function", "short"), row[:3], strict=True)}


def parse_torchmetrics(text: str) -> list[Template | str] | None:
    """A torchmetrics retrieval metric by its class, its function or its short name:
    ``RetrievalMAP(top_k=10, empty_target_action=skip)``, ``retrieval_precision(top_k=5, adaptive_k=True)``,
    ``ndcg@10``, ``mrr@10``, ``fall_out@5``, ``r_precision``.

    >>> t = parse_torchmetrics("RetrievalMAP(top_k=10)")[0]
    >>> t.metric, t.k, t.knobs["ap_divisor"], t.knobs["nonpositive"]
    ('AP', 10, 'found', 'nonrelevant')
    >>> parse_torchmetrics("RetrievalFallOut")[0].knobs["empty"]   # no negative candidate: 1 by default
    'one'
    """
    head = text.strip().split("(", 1)[0].split("@", 1)[0].strip()
    if head in _REFUSED:
        raise FlavorError(f"torchmetrics' {head} is not reproduced: rankflavor computes no curve and no AUROC")
    call = _try_call(text, "torchmetrics", tuple(name for row in _METRICS.values() for name in row[:3]))
    if call is None:
        return None
    call.reject_minus()
    key, kind = _NAMES[call.name.lower()]
    cls, _, _, metric, knobs, takes_k, default_action = _METRICS[key]
    allowed = ["top_k"] if takes_k else []
    allowed += ["adaptive_k"] if key == "precision" else []
    allowed += ["empty_target_action", "ignore_index", "aggregation"] if kind != "function" else []
    call.reject_unknown(tuple(allowed))
    if not takes_k and call.ks:
        raise FlavorError(f"torchmetrics metric {call.text!r}: {cls} takes no top_k")
    k = _one_cutoff(call, "top_k") if takes_k else None
    out = dict(knobs)
    action = call.args.get("empty_target_action", default_action if kind == "class" else "neg").lower()
    if action not in _EMPTY_ACTIONS:
        raise FlavorError(
            f"torchmetrics metric {call.text!r}: empty_target_action must be one of "
            f"{', '.join(_EMPTY_ACTIONS)}, received {call.args['empty_target_action']!r}"
        )
    out["empty"] = _EMPTY_ACTIONS[action]
    if "adaptive_k" in call.args and _bool(call, "adaptive_k"):
        out["p_divisor"] = "hits"
    if call.args.get("ignore_index", "none").lower() != "none":
        raise FlavorError(f"torchmetrics metric {call.text!r}: ignore_index is not modelled; leave the rows with "
                          "that target out of the input")
    if "aggregation" in call.args and call.args["aggregation"].lower() != "mean":
        raise FlavorError(
            f"torchmetrics metric {call.text!r}: aggregation={call.args['aggregation']!r} is not modelled; "
            "rankflavor summarises by the mean (aggregation='mean')"
        )
    return [Template(metric, k, out, call.text)]


CANONICAL: Canonical = {
    "ndcg": ("ndcg@{k}", "ndcg"), "P": ("precision@{k}", "precision"), "recall": ("recall@{k}", "recall"),
    "AP": ("map@{k}", "map"), "RR": ("mrr@{k}", "mrr"), "success": ("hit_rate@{k}", "hit_rate"),
    "fallout": ("fall_out@{k}", "fall_out"), "Rprec": (None, "r_precision"),
}  # fmt: skip

TORCHMETRICS = Preset(
    name="torchmetrics",
    flavor=SKLEARN_FLAVOR.with_knobs(precision="float32"),
    summary="torchmetrics retrieval metrics (RetrievalNormalizedDCG, RetrievalPrecision, RetrievalRecall, "
    "RetrievalMAP, RetrievalMRR, RetrievalHitRate, RetrievalFallOut, RetrievalRPrecision and their functions): "
    "float32 scores; NDCG is scikit-learn's; the others count only the scored candidates (a candidate scored <= 0 "
    "is not relevant for precision, recall, MAP, MRR) and MAP averages over the relevant documents found; "
    "empty_target_action neg/pos/skip/error = empty zero/one/skip/error",
    evidence="torchmetrics 1.9.0 functional/retrieval/*.py, retrieval/base.py, retrieval/fall_out.py, "
    "utilities/checks.py; differential tests against the torchmetrics classes and functions on random queries, "
    "and its docstring examples, in tests/presets/test_presets_torchmetrics.py and tests/presets/test_presets_ml.py",
    dialect=parse_torchmetrics,
    default_metrics=("ndcg@10", "ndcg"),
    canonical=CANONICAL,
)

PRESETS = [TORCHMETRICS]
