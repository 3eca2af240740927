"""Search engines and relevance-tuning tools: Elasticsearch / OpenSearch rank_eval, Quepid, Spark.

None of these installs from PyPI in a way a unit test can run (Elasticsearch and OpenSearch are
servers, Quepid scorers are JavaScript inside a Rails app, PySpark 4.3 drops the relevance values
of ``ndcgAt`` triples), so each preset is pinned to the tool's source and checked against the
fingerprint values of ``flavor-facts.md`` §4.1 (``tests/test_presets_ir.py``).

References
----------
elastic/elasticsearch ``modules/rank-eval/src/main/java/org/elasticsearch/index/rankeval/
DiscountedCumulativeGain.java``: gain 2^r - 1, discount log2(rank + 1), ``normalize`` (default
false: raw DCG), ``unknown_doc_rating`` (DCG only), ideal = every rating of the request sorted,
cut at the number of hits returned, ``k`` default 10. OpenSearch's ``rank-eval`` module is the
same code (forked from Elasticsearch 7.10).
o19s/quepid ``db/scorers/ndcg@10.js`` (ideal over every rated document, not cut),
``ndcg_cut@10.js``, ``p@10.js`` (divides by the documents processed), ``ap@10.js``, ``rr@10.js``.
apache/spark ``mllib/src/main/scala/org/apache/spark/mllib/evaluation/RankingMetrics.scala``
(``ndcgAt``: binary for (prediction, labels) pairs; since 3.4 (prediction, labels, relevance)
triples use 2^rel - 1 with the label array, unsorted, as the ideal).
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..errors import FlavorError
from ..flavor import Flavor, format_number
from .base import Preset, Template

# ---------------------------------------------------------------------------------------------
# Elasticsearch / OpenSearch _rank_eval

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
    duplicates="error",
)

_DCG_CALL = re.compile(r"^dcg\s*(?:@\s*(?P<k>\d+))?\s*(?:\((?P<args>.*)\))?$", re.DOTALL)
_TRUE = {"true": True, "false": False}


def _dcg_params(text: str) -> dict[str, Any] | None:
    t = text.strip()
    if t.startswith("{"):
        try:
            body = json.loads(t)
        except json.JSONDecodeError as exc:
            raise FlavorError(f"rank_eval metric {t!r} is not valid JSON: {exc.msg}") from None
        if not isinstance(body, dict) or set(body) != {"dcg"} or not isinstance(body["dcg"], dict):
            if isinstance(body, dict) and len(body) == 1:
                raise FlavorError(f"rank_eval metric {next(iter(body))!r} is not reproduced; only dcg is")
            raise FlavorError(f'rank_eval metric JSON looks like {{"dcg": {{"k": 10, "normalize": true}}}}, received {t!r}')
        return dict(body["dcg"])
    m = _DCG_CALL.match(t)
    if not m:
        return None
    params: dict[str, Any] = {}
    if m.group("k"):
        params["k"] = int(m.group("k"))
    for part in filter(None, (p.strip() for p in (m.group("args") or "").split(","))):
        if "=" not in part:
            raise FlavorError(f"rank_eval dcg parameters are name=value, received {part!r} in {t!r}")
        key, value = (s.strip() for s in part.split("=", 1))
        params[key] = _TRUE.get(value.lower(), value)
    return params


def parse_rank_eval(text: str) -> list[Template | str] | None:
    """``_rank_eval`` dcg metric: ``dcg``, ``dcg@20``, ``dcg(normalize=true,unknown_doc_rating=1)`` or the
    request's JSON ``{"dcg": {"k": 20, "normalize": true}}``.

    >>> t = parse_rank_eval('{"dcg": {"k": 5, "normalize": true, "unknown_doc_rating": 1}}')[0]
    >>> t.metric, t.k, t.knobs
    ('ndcg', 5, {'unjudged_grade': '1'})
    >>> parse_rank_eval("dcg")[0].metric   # normalize defaults to false: raw DCG
    'dcg'
    """
    params = _dcg_params(text)
    if params is None:
        return None
    unknown = set(params) - {"k", "normalize", "unknown_doc_rating"}
    if unknown:
        raise FlavorError(f"rank_eval dcg takes k, normalize, unknown_doc_rating; received {', '.join(sorted(unknown))}")
    k = params.get("k", 10)
    try:
        k = int(k)
    except (TypeError, ValueError):
        raise FlavorError(f"rank_eval dcg k must be a whole number, received {k!r}") from None
    normalize = params.get("normalize", False)
    if not isinstance(normalize, bool):
        raise FlavorError(f"rank_eval dcg normalize is true or false, received {normalize!r}")
    knobs: dict[str, str] = {}
    rating = params.get("unknown_doc_rating")
    if rating is not None:
        try:
            knobs["unjudged_grade"] = format_number(int(rating))
        except (TypeError, ValueError):
            raise FlavorError(f"rank_eval dcg unknown_doc_rating is an integer, received {rating!r}") from None
    label = text.strip() if not text.strip().startswith("{") else " ".join(text.split())
    return [Template("ndcg" if normalize else "dcg", k, knobs, label)]


ELASTICSEARCH = Preset(
    name="elasticsearch",
    flavor=RANK_EVAL_FLAVOR,
    summary="Elasticsearch _rank_eval dcg: 2^g-1 gain; raw DCG unless normalize=true; ideal = every rating "
    "of the request, cut at the hits returned; unknown_doc_rating enters the DCG only (NDCG can exceed 1)",
    evidence="elastic/elasticsearch modules/rank-eval DiscountedCumulativeGain.java (source only: evaluate(), "
    "computeDCG, DEFAULT_K = 10); fingerprints of flavor-facts 4.1 (1.0 vs 0.34 k-cut; 11.4 with "
    "unknown_doc_rating) in tests/test_presets_ir.py",
    dialect=parse_rank_eval,
    default_metrics=("dcg(normalize=true)", "dcg"),
)

OPENSEARCH = Preset(
    name="opensearch",
    flavor=RANK_EVAL_FLAVOR,
    summary="OpenSearch _rank_eval dcg: the Elasticsearch 7.10 code, same flavor",
    evidence="opensearch-project/OpenSearch modules/rank-eval DiscountedCumulativeGain.java (forked from "
    "Elasticsearch 7.10; source only); same fingerprints as elasticsearch",
    dialect=parse_rank_eval,
    default_metrics=("dcg(normalize=true)", "dcg"),
)

# ---------------------------------------------------------------------------------------------
# Quepid

_QUEPID = re.compile(r"^(?P<name>nDCG|NDCG_CUT|P|AP|RR|ERR)@(?P<k>\d+)$", re.IGNORECASE)


def parse_quepid(text: str) -> list[Template | str] | None:
    """Quepid scorer names: ``nDCG@10`` (uncut ideal), ``NDCG_CUT@10``, ``P@10``, ``AP@10``, ``RR@10``, ``ERR@10``."""
    m = _QUEPID.match(text.strip())
    if not m:
        return None
    name, k = m.group("name"), int(m.group("k"))
    label = text.strip()
    if name.upper() == "ERR":  # Quepid's ERR scorer hard-wires the 0-3 scale (flavor-facts §1.12)
        return [Template("ERR", k, {"max_grade": "3"}, label)]
    if name.lower() == "ndcg":  # since PR #1242: the ideal is every rated document, not cut at k
        return [Template("ndcg", k, {"ideal_cut": "none"}, label)]
    if name.upper() == "NDCG_CUT":
        return [Template("ndcg", k, {"ideal_cut": "k"}, label)]
    if name.upper() == "P":
        return [Template("P", k, {}, label)]
    if name.upper() == "AP":  # total / totalRel: 0 / 0 = NaN when nothing is rated relevant
        return [Template("AP", k, {"empty": "nan"}, label)]
    return [Template("RR", k, {}, label)]


QUEPID = Preset(
    name="quepid",
    flavor=Flavor(
        gain="exp2",
        discount="log2",
        ideal="global",
        ideal_cut="none",
        rel="1",
        p_divisor="hits",
        unjudged="zero",
        negatives="error",
        ties="input_order",
        precision="float64",
        empty="zero",
        missing="zero",
        duplicates="error",
    ),
    summary="Quepid scorers: 2^g-1 gain; nDCG@10 divides by the UNCUT ideal of every rated document "
    "(NDCG_CUT@10 is the textbook one); P@10 divides by the hits shown; AP@10 is NaN with nothing relevant",
    evidence="o19s/quepid db/scorers/ndcg@10.js (PR #1242), ndcg_cut@10.js (PR #1337), p@10.js, ap@10.js, "
    "rr@10.js (source; flavor-facts ran them under node); fingerprints of flavor-facts 4.1 "
    "(nDCG@10 0.5632, P@10 0.6, 12 docs rated 3: 0.8922 vs 1.0) in tests/test_presets_ir.py",
    dialect=parse_quepid,
    default_metrics=("nDCG@10", "NDCG_CUT@10", "P@10", "AP@10", "RR@10"),
)

# ---------------------------------------------------------------------------------------------
# Spark MLlib RankingMetrics

_SPARK = re.compile(r"^(?P<fn>ndcgAt|precisionAt|recallAt|meanAveragePrecisionAt)\(\s*(?P<k>\d+)\s*\)$|^(?P<map>meanAveragePrecision)$")
_SPARK_METRIC = {"ndcgAt": "ndcg", "precisionAt": "P", "recallAt": "recall"}


def _spark_parser(triples: bool):  # type: ignore[no-untyped-def]
    def parse(text: str) -> list[Template | str] | None:
        t = text.strip()
        m = _SPARK.match(t)
        if not m:
            return None
        if m.group("map"):
            if triples:
                raise FlavorError("the spark_triples preset covers ndcgAt only; use --preset spark for MAP")
            return [Template("AP", None, {}, t)]
        fn = m.group("fn")
        if fn == "meanAveragePrecisionAt":
            raise FlavorError("Spark meanAveragePrecisionAt(k) divides by min(|labels|, k), not R; not reproduced")
        if triples and fn != "ndcgAt":
            raise FlavorError(f"the spark_triples preset covers ndcgAt only; {fn} ignores relevance values")
        return [Template(_SPARK_METRIC[fn], int(m.group("k")), {}, t)]

    return parse


_SPARK_COMMON: dict[str, Any] = dict(
    discount="log2",
    ideal_cut="k",
    rel="1",
    unjudged="zero",
    ties="input_order",
    precision="float64",
    empty="zero",
    missing="zero",
    duplicates="error",
)

SPARK = Preset(
    name="spark",
    flavor=Flavor(gain="binary", ideal="global", negatives="unjudged", **_SPARK_COMMON),
    summary="Spark RankingMetrics with (prediction, labels) pairs: ndcgAt(k) is BINARY (labels = grades >= rel), "
    "ideal min(|labels|, k) ones; prediction arrays taken as ranked",
    evidence="apache/spark RankingMetrics.scala ndcgAt (1/ln(i+2), cancels in NDCG), precisionAt, recallAt, "
    "meanAveragePrecision (source; flavor-facts ran pyspark 4.3.0); fingerprints of flavor-facts 4.1 "
    "(pairs @3 0.2961, @10 0.5654) in tests/test_presets_ir.py",
    dialect=_spark_parser(triples=False),
    default_metrics=("ndcgAt(10)", "precisionAt(10)", "meanAveragePrecision"),
)

SPARK_TRIPLES = Preset(
    name="spark_triples",
    flavor=Flavor(gain="exp2", ideal="as_supplied", negatives="error", **_SPARK_COMMON),
    summary="Spark 3.4+ RankingMetrics with (prediction, labels, relevance) triples: ndcgAt(k) uses 2^rel-1 and "
    "the label array AS SUPPLIED (the judgments in docno order, as a NIST qrels file lists them; unsorted by grade) "
    "as the ideal, so NDCG can exceed 1",
    evidence="apache/spark RankingMetrics.scala ndcgAt, relevance branch (maxDcg over lab(i) in input order; "
    "source only: PySpark 4.3 drops the relevances and scores triples as pairs); fingerprints of "
    "flavor-facts 4.1 (sorted desc @3 0.4250, @10 0.5632; ascending @3 1.0054, @10 0.8229)",
    dialect=_spark_parser(triples=True),
    default_metrics=("ndcgAt(10)",),
    defect="the ideal DCG is summed over the label array in the order supplied, never sorted, so NDCG "
    "exceeds 1 whenever the labels are not in descending grade order (apache/spark RankingMetrics.scala "
    "ndcgAt, relevance branch; flavor-facts 4.1: ascending labels give @3 1.0054; DL19 passage BM25 "
    "NDCG@10 4.97 under rankflavor spread)",
)

PRESETS = [ELASTICSEARCH, OPENSEARCH, QUEPID, SPARK, SPARK_TRIPLES]
