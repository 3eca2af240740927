"""Relevance-tuning tools and Spark: Quepid and Spark MLlib ``RankingMetrics``.

(Elasticsearch and OpenSearch ``_rank_eval`` are in :mod:`rankflavor.presets.rankeval`.) Quepid's
scorers are JavaScript inside a Rails app: the preset is pinned to their source and checked against
the values of Quepid's own scorer tests (``test/services/javascript_scorer_test.rb``) and the
fingerprints of ``flavor-facts.md`` §4.1. Spark is checked against ``RankingMetricsSuite.scala``'s
values and against PySpark itself (pairs; PySpark 4.3 drops the relevance values of triples),
in ``tests/presets/test_presets_spark.py``.

Both evaluate every query they are given: a Quepid query nobody rated and a Spark row whose label
set is empty score 0 and count in the mean (``run_only=include``).

References
----------
o19s/quepid ``db/scorers/ndcg@10.js`` (ideal over every rated document, not cut),
``ndcg_cut@10.js``, ``p@10.js`` (divides by the documents processed), ``ap@10.js``, ``rr@10.js``.
apache/spark ``mllib/src/main/scala/org/apache/spark/mllib/evaluation/RankingMetrics.scala``
(``ndcgAt``: binary for (prediction, labels) pairs; since 3.4 (prediction, labels, relevance)
triples use 2^rel - 1 with the label array, unsorted, as the ideal; ``precisionAt``, ``recallAt``,
``meanAveragePrecision`` and ``meanAveragePrecisionAt`` (divided by min(|labels|, k)) read the label
set alone, so under triples every labelled document counts, a relevance of 0 included; an empty
label set scores 0 with a warning, and ``mean()`` counts it).
"""

from __future__ import annotations

import re
from typing import Any

from rankflavor.errors import FlavorError
from rankflavor.flavor.flavor import Flavor
from rankflavor.presets.base import Preset, Template

# ---------------------------------------------------------------------------------------------
# Quepid

_QUEPID = re.compile(r"^(?P<name>nDCG|NDCG_CUT|P|AP|RR|ERR|DCG|CG)@(?P<k>\d+)$", re.IGNORECASE)


def parse_quepid(text: str) -> list[Template | str] | None:
    """Quepid scorer names: ``nDCG@10`` (uncut ideal), ``NDCG_CUT@10``, ``P@10``, ``AP@10``, ``RR@10``, ``ERR@10``."""
    m = _QUEPID.match(text.strip())
    if not m:
        return None
    name, k = m.group("name"), int(m.group("k"))
    if name.upper() in ("DCG", "CG"):
        raise FlavorError(f"Quepid's {name.upper()}@{k} scorer is not reproduced: it sums the ratings of the "
                          "results with no normalisation and no fixed scale (an unrated result is left NaN in "
                          "dcg@10.js); write rankflavor:dcg@10 for rankflavor's DCG")
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
        run_only="include",
        duplicates="error",
    ),
    summary="Quepid scorers: 2^g-1 gain; nDCG@10 divides by the UNCUT ideal of every rated document "
    "(NDCG_CUT@10 is the textbook one); P@10 divides by the hits shown; AP@10 is NaN with nothing relevant; "
    "a query nobody rated scores 0",
    evidence="o19s/quepid db/scorers/ndcg@10.js (PR #1242), ndcg_cut@10.js (PR #1337), p@10.js, ap@10.js, "
    "rr@10.js, err@10.js (source; flavor-facts ran them under node); the values of Quepid's own "
    "test/services/javascript_scorer_test.rb and the fingerprints of flavor-facts 4.1 (nDCG@10 0.5632, P@10 0.6, "
    "12 docs rated 3: 0.8922 vs 1.0) in tests/presets/test_presets_quepid.py and tests/presets/test_presets_ir.py",
    dialect=parse_quepid,
    default_metrics=("nDCG@10", "NDCG_CUT@10", "P@10", "AP@10", "RR@10"),
    canonical={"ndcg": ("nDCG@{k}", None), "P": ("P@{k}", None), "AP": ("AP@{k}", None), "RR": ("RR@{k}", None),
               "ERR": ("ERR@{k}", None)},
    refusals={"ndcg": "Quepid's scorers always take a depth (// @Rank): write quepid:nDCG@10 (uncut ideal) or "
              "quepid:NDCG_CUT@10"},
)

# ---------------------------------------------------------------------------------------------
# Spark MLlib RankingMetrics

_SPARK = re.compile(r"^(?P<fn>ndcgAt|precisionAt|recallAt|meanAveragePrecisionAt)\(\s*(?P<k>\d+)\s*\)$|^(?P<map>meanAveragePrecision)$")
_SPARK_METRIC = {"ndcgAt": "ndcg", "precisionAt": "P", "recallAt": "recall", "meanAveragePrecisionAt": "AP"}
#: Under triples the label SET decides relevance for everything but ndcgAt: a label of relevance 0 counts.
_LABEL_SET = {"rel": "0"}


def _spark_parser(triples: bool):  # type: ignore[no-untyped-def]
    def parse(text: str) -> list[Template | str] | None:
        """``ndcgAt(k)``, ``precisionAt(k)``, ``recallAt(k)``, ``meanAveragePrecision``, ``meanAveragePrecisionAt(k)``."""
        t = text.strip()
        m = _SPARK.match(t)
        if not m:
            return None
        set_only = dict(_LABEL_SET) if triples else {}
        if m.group("map"):  # averagePrecision(pred, labSet, max(|pred|, |labSet|)): divided by |labels|
            return [Template("AP", None, set_only, t)]
        fn, k = m.group("fn"), int(m.group("k"))
        if k < 1:
            raise FlavorError(f"Spark {fn}(k) requires k > 0 (\"ranking position k should be positive\"), received {t!r}")
        if fn == "meanAveragePrecisionAt":  # precSum / min(|labels|, k)
            return [Template("AP", k, {**set_only, "ap_divisor": "min_k_relevant"}, t)]
        return [Template(_SPARK_METRIC[fn], k, {} if fn == "ndcgAt" else set_only, t)]

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
    run_only="include",
    duplicates="error",
)
_SPARK_CANONICAL = {"ndcg": ("ndcgAt({k})", None), "P": ("precisionAt({k})", None), "recall": ("recallAt({k})", None),
                    "AP": ("meanAveragePrecisionAt({k})", "meanAveragePrecision")}
_SPARK_REFUSALS = {name: f"Spark's {fn}(k) always takes k: write {fn}(10)"
                   for name, fn in (("ndcg", "ndcgAt"), ("P", "precisionAt"), ("recall", "recallAt"))}

SPARK = Preset(
    name="spark",
    flavor=Flavor(gain="binary", ideal="global", negatives="unjudged", **_SPARK_COMMON),
    summary="Spark RankingMetrics with (prediction, labels) pairs: ndcgAt(k) is BINARY (labels = grades >= rel), "
    "ideal min(|labels|, k) ones; meanAveragePrecisionAt(k) divides by min(|labels|, k); prediction arrays taken "
    "as ranked; an empty label set scores 0 and counts",
    evidence="apache/spark RankingMetrics.scala ndcgAt (1/ln(i+2), cancels in NDCG), precisionAt, recallAt, "
    "meanAveragePrecision, meanAveragePrecisionAt (source); the values of Spark's own RankingMetricsSuite.scala "
    "and differential tests against PySpark 4.3 RankingMetrics in tests/presets/test_presets_spark.py; fingerprints of "
    "flavor-facts 4.1 (pairs @3 0.2961, @10 0.5654) in tests/presets/test_presets_ir.py",
    dialect=_spark_parser(triples=False),
    default_metrics=("ndcgAt(10)", "precisionAt(10)", "meanAveragePrecision"),
    canonical=_SPARK_CANONICAL,
    refusals=_SPARK_REFUSALS,
)

SPARK_TRIPLES = Preset(
    name="spark_triples",
    flavor=Flavor(gain="exp2", ideal="as_supplied", negatives="error", **_SPARK_COMMON),
    summary="Spark 3.4+ RankingMetrics with (prediction, labels, relevance) triples: ndcgAt(k) uses 2^rel-1 and "
    "the label array AS SUPPLIED (the judgments in docno order, as a NIST qrels file lists them; unsorted by "
    "grade) as the ideal, so NDCG can exceed 1; precisionAt, recallAt and the MAPs read the label set alone "
    "(every judged document, relevance 0 included: rel=0)",
    evidence="apache/spark RankingMetrics.scala ndcgAt, relevance branch (maxDcg over lab(i) in input order), "
    "countRelevantItemRatio and averagePrecision on lab.toSet (source; PySpark 4.3 drops the relevances and "
    "scores triples as pairs); the values of RankingMetricsSuite.scala 'NDCG with relevance' in "
    "tests/presets/test_presets_spark.py; fingerprints of flavor-facts 4.1 (sorted desc @3 0.4250, @10 0.5632; "
    "ascending @3 1.0054, @10 0.8229)",
    dialect=_spark_parser(triples=True),
    default_metrics=("ndcgAt(10)",),
    defect="the ideal DCG is summed over the label array in the order supplied, never sorted, so NDCG "
    "exceeds 1 whenever the labels are not in descending grade order (apache/spark RankingMetrics.scala "
    "ndcgAt, relevance branch; flavor-facts 4.1: ascending labels give @3 1.0054; DL19 passage BM25 "
    "NDCG@10 4.97 under rankflavor spread)",
    canonical=_SPARK_CANONICAL,
    refusals=_SPARK_REFUSALS,
)

PRESETS = [QUEPID, SPARK, SPARK_TRIPLES]
