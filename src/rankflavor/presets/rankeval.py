"""Elasticsearch / OpenSearch ``_rank_eval``: its flavor and every metric of its request body.

A ``_rank_eval`` request names one metric with its parameters, as JSON (``{"precision": {"k": 5,
"relevant_rating_threshold": 2}}``) or, here, as a call (``precision@5(relevant_rating_threshold=2)``).
Each request (query) is searched with ``size = k``, its hits are joined to the request's ratings
on (``_index``, ``_id``), and the metric's score of each request is averaged, unweighted:

==============================  ==================================================================
``dcg``                         DCG@k with gain 2^r - 1 and log2(i+1); ``normalize: true`` divides by
                                the DCG of every rating of the request sorted, cut at the hits
                                returned; ``unknown_doc_rating`` rates unrated hits in the DCG only
``precision``                   relevant (rating >= ``relevant_rating_threshold``, default 1) hits
                                over the hits returned (at most k); ``ignore_unlabeled: true`` leaves
                                unrated hits out of both: ``P@k[p_divisor=judged]``
``recall``                      relevant hits over the request's ratings >= the threshold
``mean_reciprocal_rank``        1 / rank of the first relevant hit, 0 if none
``expected_reciprocal_rank``    Chapelle's ERR@k with ``maximum_relevance`` G (required);
                                ``unknown_doc_rating`` rates unrated hits (none: they stop no one)
==============================  ==================================================================

A request without hits scores 0.0 in every metric (``missing=zero``), and so does a request with
hits but without ratings (``run_only=include``: it is a query of the evaluation with nothing
relevant). ``k`` defaults to 10 everywhere.

References
----------
elastic/elasticsearch ``modules/rank-eval/src/main/java/org/elasticsearch/index/rankeval/``:
``DiscountedCumulativeGain.java``, ``PrecisionAtK.java``, ``RecallAtK.java``,
``MeanReciprocalRank.java``, ``ExpectedReciprocalRank.java`` (``DEFAULT_K = 10``, the parameters and
their defaults), ``EvaluationMetric.java`` (``joinHitsWithRatings``, the unweighted mean). Their test
values (``src/test/.../*Tests.java``) are checked in ``tests/presets/test_presets_rankeval.py``. OpenSearch's
``rank-eval`` module is the same code, forked from Elasticsearch 7.10.
"""

from __future__ import annotations

import json
import re
from typing import Any

from rankflavor.errors import FlavorError
from rankflavor.flavor.flavor import Flavor, format_number
from rankflavor.presets.base import Canonical, Preset, Template

DEFAULT_K = 10

RANK_EVAL_FLAVOR = Flavor(
    gain="exp2",
    discount="log2",
    ideal="global",
    ideal_cut="hits",
    unjudged="zero",
    negatives="error",
    ties="input_order",
    precision="float64",
    empty="zero",
    missing="zero",
    run_only="include",
    duplicates="error",
)

#: Each metric's parameters (``k`` everywhere).
PARAMETERS: dict[str, tuple[str, ...]] = {
    "dcg": ("k", "normalize", "unknown_doc_rating"),
    "precision": ("k", "relevant_rating_threshold", "ignore_unlabeled"),
    "recall": ("k", "relevant_rating_threshold"),
    "mean_reciprocal_rank": ("k", "relevant_rating_threshold"),
    "expected_reciprocal_rank": ("k", "maximum_relevance", "unknown_doc_rating"),
}
_CALL = re.compile(r"^(?P<name>[a-z_]+)\s*(?:@\s*(?P<k>\d+))?\s*(?:\((?P<args>.*)\))?$", re.DOTALL)
_TRUE = {"true": True, "false": False}


def _params(text: str) -> tuple[str, dict[str, Any]] | None:
    """The metric name and parameters of ``text`` (JSON or call form), or None when it is no
    ``_rank_eval`` metric."""
    t = text.strip()
    if t.startswith("{"):
        try:
            body = json.loads(t)
        except json.JSONDecodeError as exc:
            raise FlavorError(f"rank_eval metric {t!r} is not valid JSON: {exc.msg}") from None
        if not isinstance(body, dict) or len(body) != 1 or not isinstance(next(iter(body.values())), dict):
            raise FlavorError(f'rank_eval metric JSON looks like {{"precision": {{"k": 10}}}}, received {t!r}')
        name = next(iter(body))
        if name not in PARAMETERS:
            raise FlavorError(f"rank_eval metric {name!r} is not one of {', '.join(PARAMETERS)}")
        return name, dict(body[name])
    m = _CALL.match(t)
    if not m or m.group("name") not in PARAMETERS:
        return None
    params: dict[str, Any] = {}
    if m.group("k"):
        params["k"] = int(m.group("k"))
    for part in filter(None, (p.strip() for p in (m.group("args") or "").split(","))):
        if "=" not in part:
            raise FlavorError(f"rank_eval {m.group('name')} parameters are name=value, received {part!r} in {t!r}")
        key, value = (s.strip() for s in part.split("=", 1))
        if key in params:
            raise FlavorError(f"rank_eval metric {t!r}: {key} given twice")
        params[key] = _TRUE.get(value.lower(), value)
    return m.group("name"), params


def _int(name: str, key: str, value: Any, low: int) -> int:
    if isinstance(value, bool):
        raise FlavorError(f"rank_eval {name} {key} is an integer, received {value!r}")
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise FlavorError(f"rank_eval {name} {key} is an integer, received {value!r}") from None
    if str(number) != str(value).strip() and not isinstance(value, int):
        raise FlavorError(f"rank_eval {name} {key} is an integer, received {value!r}")
    if number < low:
        raise FlavorError(f"rank_eval {name} {key} must be >= {low}, received {value!r}")
    return number


def _bool(name: str, key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise FlavorError(f"rank_eval {name} {key} is true or false, received {value!r}")
    return value


def parse_rank_eval(text: str) -> list[Template | str] | None:
    """A ``_rank_eval`` metric: ``dcg``, ``dcg@20``, ``dcg(normalize=true,unknown_doc_rating=1)``,
    ``precision@5(ignore_unlabeled=true)``, ``recall``, ``mean_reciprocal_rank@3``,
    ``expected_reciprocal_rank(maximum_relevance=3)``, or the request's JSON for any of them.

    >>> t = parse_rank_eval('{"dcg": {"k": 5, "normalize": true, "unknown_doc_rating": 1}}')[0]
    >>> t.metric, t.k, t.knobs
    ('ndcg', 5, {'unjudged_grade': '1'})
    >>> parse_rank_eval("dcg")[0].metric   # normalize defaults to false: raw DCG
    'dcg'
    >>> t = parse_rank_eval("precision(ignore_unlabeled=true, relevant_rating_threshold=2)")[0]
    >>> t.metric, t.k, t.knobs
    ('P', 10, {'rel': '2', 'p_divisor': 'judged'})
    """
    found = _params(text)
    if found is None:
        return None
    name, params = found
    unknown = set(params) - set(PARAMETERS[name])
    if unknown:
        raise FlavorError(f"rank_eval {name} takes {', '.join(PARAMETERS[name])}; received {', '.join(sorted(unknown))}")
    k = _int(name, "k", params.get("k", DEFAULT_K), 1)
    label = text.strip() if not text.strip().startswith("{") else " ".join(text.split())
    knobs: dict[str, str] = {}
    if "relevant_rating_threshold" in params:
        knobs["rel"] = str(_int(name, "relevant_rating_threshold", params["relevant_rating_threshold"], 0))
    if params.get("unknown_doc_rating") is not None:
        knobs["unjudged_grade"] = format_number(_int(name, "unknown_doc_rating", params["unknown_doc_rating"], 0))
    if name == "dcg":
        normalize = _bool(name, "normalize", params.get("normalize", False))
        return [Template("ndcg" if normalize else "dcg", k, knobs, label)]
    if name == "precision":
        unlabeled = _bool(name, "ignore_unlabeled", params.get("ignore_unlabeled", False))
        return [Template("P", k, {**knobs, "p_divisor": "judged" if unlabeled else "hits"}, label)]
    if name == "recall":
        return [Template("recall", k, knobs, label)]
    if name == "mean_reciprocal_rank":
        return [Template("RR", k, knobs, label)]
    if "maximum_relevance" not in params:
        raise FlavorError(f"rank_eval expected_reciprocal_rank requires maximum_relevance (the top rating), "
                          f"received {text.strip()!r}")
    top = _int(name, "maximum_relevance", params["maximum_relevance"], 0)
    return [Template("ERR", k, {**knobs, "max_grade": str(top)}, label)]


CANONICAL: Canonical = {
    "ndcg": ("dcg@{k}(normalize=true)", None), "dcg": ("dcg@{k}", None), "P": ("precision@{k}", None),
    "recall": ("recall@{k}", None), "RR": ("mean_reciprocal_rank@{k}", None),
}  # fmt: skip
REFUSALS = {
    "ERR": "_rank_eval's expected_reciprocal_rank needs maximum_relevance: write "
    "expected_reciprocal_rank@10(maximum_relevance=3)",
}
_EVIDENCE = ("(source: evaluate(), DEFAULT_K = 10, the parameters); their own test values (PrecisionAtKTests, "
             "RecallAtKTests, MeanReciprocalRankTests, ExpectedReciprocalRankTests, DiscountedCumulativeGainTests, "
             "testNoResults: 0.0) in tests/presets/test_presets_rankeval.py; fingerprints of flavor-facts 4.1 (1.0 vs 0.34 "
             "k-cut; 11.4 with unknown_doc_rating)")
_METRICS = ("dcg(normalize=true)", "dcg", "precision", "recall", "mean_reciprocal_rank")

ELASTICSEARCH = Preset(
    name="elasticsearch",
    flavor=RANK_EVAL_FLAVOR,
    summary="Elasticsearch _rank_eval: dcg with 2^g-1 gain, raw DCG unless normalize=true, ideal = every rating "
    "of the request cut at the hits returned, unknown_doc_rating in the DCG only (NDCG can exceed 1); precision "
    "over the hits returned (ignore_unlabeled: over the rated ones), recall, mean_reciprocal_rank, "
    "expected_reciprocal_rank; a request without hits, or without ratings, scores 0",
    evidence="elastic/elasticsearch modules/rank-eval DiscountedCumulativeGain.java, PrecisionAtK.java, "
    "RecallAtK.java, MeanReciprocalRank.java, ExpectedReciprocalRank.java " + _EVIDENCE,
    dialect=parse_rank_eval,
    default_metrics=_METRICS,
    canonical=CANONICAL,
    refusals=REFUSALS,
)

OPENSEARCH = Preset(
    name="opensearch",
    flavor=RANK_EVAL_FLAVOR,
    summary="OpenSearch _rank_eval: the Elasticsearch 7.10 code, same metrics, same flavor",
    evidence="opensearch-project/OpenSearch modules/rank-eval (forked from Elasticsearch 7.10; source only); "
    "same test values and fingerprints as elasticsearch",
    dialect=parse_rank_eval,
    default_metrics=_METRICS,
    canonical=CANONICAL,
    refusals=REFUSALS,
)

PRESETS = [ELASTICSEARCH, OPENSEARCH]
