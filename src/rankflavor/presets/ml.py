"""Machine-learning libraries: scikit-learn, LightGBM, XGBoost, CatBoost, RankLib (torchmetrics:
:mod:`rankflavor.presets.torchmetrics`).

Each preset pins the knobs of the library's NDCG and parses the library's own metric names. An ML
library evaluates a *group*: every labelled candidate of one query, ranked by the model's scores.
Given as TREC files, a group is a run query whose retrieved documents are the candidates (an
unjudged one counts as label 0), so the ideal is built from the retrieved list (``ideal=local``);
when every candidate is judged that equals the global ideal. A run query without any judgment is
still a group (all labels 0), hence ``run_only=include``; a qrels query absent from the run is no
group at all (``missing=skip``).

Evidence (versions executed: scikit-learn 1.9.1, torchmetrics 1.9.0, lightgbm 4.7.0, xgboost 3.2.0,
catboost 1.2.10; RankLib from source only) and the differential tests that check every preset
against the real library on thousands of random groups: ``tests/presets/test_presets_ml.py``.

References
----------
.. [SK] scikit-learn ``sklearn/metrics/_ranking.py``: ``_dcg_sample_scores``, ``_tie_averaged_dcg``
   (McSherry-Najork tie averaging), ``ndcg_score`` (all-zero rows score 0, negatives rejected).
.. [LGB] LightGBM ``src/metric/dcg_calculator.cpp`` (``label_gain`` default 2^i - 1 for i < 31,
   ``std::stable_sort`` by score), ``src/metric/rank_metric.hpp`` (max DCG 0 scores 1,
   ``eval_at`` default 1..5).
.. [XGB] XGBoost ``src/metric/rank_metric.cc`` (``EvalNDCG``: ``minus_`` gives 0 instead of 1),
   ``src/common/ranking_utils.{h,cc}`` (bare ``ndcg`` truncates at ``DefaultK()`` = 32, exp gain
   ``(1u << label) - 1`` for labels 0..31, stable ``ArgSort`` of float32 predictions).
.. [CB] CatBoost ``catboost/libs/metrics/dcg.cpp`` (``idcg > 0 ? dcg / idcg : 1``),
   ``doc_comparator.h`` (equal approx: lower target first).
.. [RL] RankLib (codelibs/ranklib) ``metric/NDCGScorer.java``, ``DCGScorer.java``: k = 10 by
   default, k <= 0 or k > list size means the whole list, ideal 0 scores 0, ``-qrel`` ideal from
   the judgment file cut at k.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from rankflavor.errors import FlavorError, did_you_mean
from rankflavor.flavor.flavor import Flavor, format_number
from rankflavor.presets.base import Preset, Template
from rankflavor.presets.mlcall import _bool, _numbers, _one_cutoff, _positive_int, _try_call, _unsupported

# ---------------------------------------------------------------------------------------------
# scikit-learn

#: Tie order standing in for ``ignore_ties=True`` (reversed argsort: later column first).
SKLEARN_IGNORE_TIES = "docno_desc"


def parse_sklearn(text: str) -> list[Template | str] | None:
    """``ndcg@10``, ``ndcg``, ``dcg@5``, ``ndcg_score(k=10, ignore_ties=True)``, ``dcg@5(log_base=2)``.

    ``ignore_ties=True`` ranks by ``np.argsort(y_score)[::-1]``: tied scores come later column
    first when NumPy's argsort keeps ties in index order. That is not guaranteed (NumPy >= 2 sorts
    float64 with SIMD code on AVX2/AVX-512 CPUs, which reorders ties even in 5-element arrays), so
    with tied scores scikit-learn's own value depends on the machine. rankflavor pins the
    index-order case with ``ties=docno_desc``: through :func:`rankflavor.ndcg_score` document ids
    are zero-padded column numbers, so docno descending is exactly later column first.
    """
    call = _try_call(text, "scikit-learn", ("ndcg", "dcg", "ndcg_score", "dcg_score"))
    if call is None:
        return None
    call.reject_minus()
    metric = "dcg" if call.name.lower().startswith("dcg") else "ndcg"
    call.reject_unknown(("k", "ignore_ties", "log_base") if metric == "dcg" else ("k", "ignore_ties"))
    k = _one_cutoff(call, "k")
    knobs: dict[str, str] = {}
    if "ignore_ties" in call.args and _bool(call, "ignore_ties"):
        knobs["ties"] = SKLEARN_IGNORE_TIES
    if "log_base" in call.args:
        knobs.update(sklearn_log_base(call.text, call.args["log_base"]))
    return [Template(metric, k, knobs, call.text)]


def sklearn_log_base(text: str, value: object) -> dict[str, str]:
    """The discount of ``dcg_score(log_base=b)``: ``log(b)``, dividing rank i by log_b(i+1).

    scikit-learn takes any 0 < b < inf; for b <= 1 its discounts are infinite (b = 1: every DCG
    0.0, with a divide-by-zero warning) or negative (b < 1), which no discount models.
    """
    try:
        base = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise FlavorError(f"scikit-learn metric {text!r}: log_base must be a number, received {value!r}") from None
    if not 0 < base < float("inf"):
        raise FlavorError(f"scikit-learn metric {text!r}: log_base must be in (0, inf), as scikit-learn requires; "
                          f"received {value!r}")
    if base <= 1:
        raise FlavorError(
            f"scikit-learn metric {text!r}: log_base={format_number(base)} makes scikit-learn divide by "
            "log_b(i+1) <= 0 (b = 1: every DCG 0.0; b < 1: negative DCG); rankflavor's log(b) discount "
            "needs b > 1"
        )
    return {"discount": f"log({format_number(base)})"}


SKLEARN_FLAVOR = Flavor(
    gain="linear",
    discount="log2",
    ideal="local",
    ideal_cut="k",
    unjudged="zero",
    negatives="error",
    ties="averaged",
    precision="float64",
    empty="zero",
    missing="skip",
    run_only="include",
    duplicates="error",
)

SKLEARN = Preset(
    name="sklearn",
    flavor=SKLEARN_FLAVOR.with_knobs(singletons="error"),  # the others take one-document groups
    summary="scikit-learn ndcg_score/dcg_score: linear gain, log2(i+1) (dcg_score log_base=b: log_b(i+1)), "
    "ideal from the row itself, tied scores averaged, all-zero rows 0, negative labels and one-document "
    "lists rejected",
    evidence="scikit-learn 1.9.1 sklearn/metrics/_ranking.py [SK] (_dcg_sample_scores: discount "
    "log(i+2) / log(log_base); ndcg_score raises ValueError for one document, dcg_score rejects a "
    "one-column y_true as 'binary'); tests/presets/test_presets_ml.py compares ndcg_score and dcg_score on "
    "thousands of random rows, tests/presets/test_dialect_ranx_sklearn.py log_base and one-document lists",
    dialect=parse_sklearn,
    default_metrics=("ndcg@10", "ndcg"),
    canonical={"ndcg": ("ndcg@{k}", "ndcg"), "dcg": ("dcg@{k}", "dcg")},
)

# ---------------------------------------------------------------------------------------------
# LightGBM

LIGHTGBM_EVAL_AT = (1, 2, 3, 4, 5)
#: LightGBM's default ``label_gain`` covers labels 0..30 (2^i - 1); larger labels are fatal.
LIGHTGBM_MAX_LABEL = 30
_LIGHTGBM_NAMES = ("ndcg", "lambdarank", "rank_xendcg", "xendcg", "xe_ndcg", "xe_ndcg_mart", "xendcg_mart")
_lightgbm_guard = _unsupported("lightgbm", {"map": "LightGBM's map@k divides by min(k, relevant)"})


def parse_lightgbm(text: str) -> list[Template | str] | None:
    """``ndcg`` (= ``eval_at`` 1..5), ``ndcg@10``, ``ndcg@1,3,5``, ``ndcg(eval_at=1,3, label_gain=0,1,3)``.

    The metric aliases LightGBM accepts for ``ndcg`` are accepted too.
    """
    _lightgbm_guard(text)
    call = _try_call(text, "lightgbm", _LIGHTGBM_NAMES)
    if call is None:
        return None
    call.reject_minus()
    call.reject_unknown(("eval_at", "ndcg_eval_at", "ndcg_at", "label_gain"))
    ks = list(call.ks)
    for key in ("eval_at", "ndcg_eval_at", "ndcg_at"):
        if key in call.args:
            if ks:
                raise FlavorError(f"lightgbm metric {call.text!r}: give the cutoffs once, as @k or {key}=")
            ks = [_positive_int(call, key, p.strip()) for p in call.args[key].strip("[]()").split(",") if p.strip()]
    for k in ks:
        if k < 1:
            raise FlavorError(f"lightgbm metric {call.text!r}: eval_at values must be > 0, received {k}")
    knobs: dict[str, str] = {}
    if "label_gain" in call.args:
        gains = _numbers(call, "label_gain")
        if not gains:
            raise FlavorError(f"lightgbm metric {call.text!r}: label_gain needs at least one gain")
        knobs["gain"] = "{" + ",".join(f"{i}:{format_number(g)}" for i, g in enumerate(gains)) + "}"
        knobs["max_grade"] = str(len(gains) - 1)
    cutoffs = sorted(set(ks)) if ks else list(LIGHTGBM_EVAL_AT)
    return [Template("ndcg", k, knobs, f"ndcg@{k}") for k in cutoffs]


LIGHTGBM = Preset(
    name="lightgbm",
    flavor=SKLEARN_FLAVOR.with_knobs(gain="exp2", ties="input_order", empty="one", max_grade=str(LIGHTGBM_MAX_LABEL)),
    summary="LightGBM ndcg@k: label_gain 2^g-1 (labels 0..30), log2(i+1), ideal from the group, ties in "
    "input order, a group with nothing relevant scores 1",
    evidence="lightgbm 4.7.0 dcg_calculator.cpp, rank_metric.hpp [LGB]; shared/data/letor (LightGBM's own "
    "recorded ndcg@1,3,5,10) and random groups through Booster.eval_valid in tests/presets/test_presets_ml.py",
    dialect=parse_lightgbm,
    default_metrics=("ndcg", "ndcg@10"),  # LightGBM's default eval_at is 1..5
    canonical={"ndcg": ("ndcg@{k}", None)},
    refusals={"ndcg": "LightGBM's ndcg without a cutoff is ndcg@1..5 (eval_at): write lightgbm:ndcg@10",
              "AP": "LightGBM's map@k divides by min(k, relevant) and scores a group with nothing relevant 1: "
              "not reproduced"},
)

# ---------------------------------------------------------------------------------------------
# XGBoost

#: XGBoost truncates a bare ``ndcg`` at ``LambdaRankParam::DefaultK()``.
XGBOOST_DEFAULT_K = 32
#: The exponential gain shifts ``1u << label`` into a 32-bit word: labels 0..31.
XGBOOST_MAX_EXP_LABEL = 31
_xgboost_guard = _unsupported(
    "xgboost", {"map": "XGBoost's map@n divides by min(n, hits)", "pre": "XGBoost's pre@n", "auc": "a pair metric"}
)


def parse_xgboost(text: str) -> list[Template | str] | None:
    """``ndcg`` (= top 32), ``ndcg@10``, ``ndcg@10-``, ``ndcg-``, ``ndcg@10(ndcg_exp_gain=false)``."""
    _xgboost_guard(text)
    call = _try_call(text, "xgboost", ("ndcg",))
    if call is None:
        return None
    call.reject_unknown(("ndcg_exp_gain",))
    k = _one_cutoff(call)
    knobs: dict[str, str] = {}
    if call.minus:
        knobs["empty"] = "zero"
    if "ndcg_exp_gain" in call.args and not _bool(call, "ndcg_exp_gain"):
        knobs["gain"] = "linear"
        knobs["max_grade"] = "none"
    label = "ndcg" + (f"@{k}" if k is not None else "") + ("-" if call.minus else "")
    if call.args:
        label += "(" + ", ".join(f"{key}={v}" for key, v in call.args.items()) + ")"
    return [Template("ndcg", XGBOOST_DEFAULT_K if k is None else k, knobs, label)]


XGBOOST = Preset(
    name="xgboost",
    flavor=SKLEARN_FLAVOR.with_knobs(
        gain="exp2", ties="input_order", precision="float32", empty="one", max_grade=str(XGBOOST_MAX_EXP_LABEL)
    ),
    summary="XGBoost ndcg@n: 2^g-1 (labels 0..31; ndcg_exp_gain=false: linear), log2(i+1), ideal from the "
    "group, float32 predictions with ties in input order, nothing relevant scores 1 (ndcg@n-: 0), bare ndcg = @32",
    evidence="xgboost 3.2.0 rank_metric.cc, ranking_utils.h/.cc [XGB]; random groups through "
    "Booster.eval on a DMatrix carrying the scores as base_margin in tests/presets/test_presets_ml.py",
    dialect=parse_xgboost,
    default_metrics=("ndcg", "ndcg@10"),
    canonical={"ndcg": ("ndcg@{k}", None)},
    refusals={"ndcg": "XGBoost's bare ndcg is ndcg@32: write xgboost:ndcg (= @32) or xgboost:ndcg@n"},
)

# ---------------------------------------------------------------------------------------------
# CatBoost

_catboost_guard = _unsupported(
    "catboost",
    {
        "map": "CatBoost's MAP:top",
        "precisionat": "CatBoost's PrecisionAt:top",
        "recallat": "CatBoost's RecallAt:top",
        "mrr": "CatBoost's MRR",
        "err": "CatBoost's ERR",
        "pfound": "CatBoost's PFound",
    },
)
_CATBOOST = re.compile(r"^\s*(?P<name>NDCG|DCG)\s*(?::(?P<params>.*))?$", re.IGNORECASE | re.DOTALL)
_CATBOOST_TYPES = {"base": "linear", "exp": "exp2"}
_CATBOOST_DENOMINATORS = {"logposition": "log2", "position": "reciprocal"}


def parse_catboost(text: str) -> list[Template | str] | None:
    """``NDCG``, ``NDCG:top=10;type=Exp;denominator=Position``, ``DCG:top=5`` (CatBoost's syntax)."""
    m = _CATBOOST.match(text)
    if not m:
        head = re.match(r"^\s*([A-Za-z]+)\s*(?::|$)", text)
        if head:
            _catboost_guard(head.group(1))
        return None
    metric = m.group("name").lower()
    k: int | None = None
    knobs: dict[str, str] = {}
    spelled: list[str] = []
    for part in (m.group("params") or "").split(";"):
        if not part.strip():
            continue
        if "=" not in part:
            raise FlavorError(f"catboost metric {text.strip()!r}: parameters are key=value separated by ';', received {part!r}")
        key, value = (s.strip() for s in part.split("=", 1))
        low = value.lower()
        if key == "top":
            try:
                top = int(value)
            except ValueError:
                raise FlavorError(f"catboost metric {text.strip()!r}: top must be a whole number, received {value!r}") from None
            if top == -1:
                k = None  # CatBoost's default: the whole group
            elif top < 1:
                raise FlavorError(f"catboost metric {text.strip()!r}: top must be -1 (all) or >= 1, received {value!r}")
            else:
                k = top
        elif key == "type":
            if low not in _CATBOOST_TYPES:
                raise FlavorError(f"catboost metric {text.strip()!r}: type must be Base or Exp, received {value!r}")
            knobs["gain"] = _CATBOOST_TYPES[low]
        elif key == "denominator":
            if low not in _CATBOOST_DENOMINATORS:
                raise FlavorError(
                    f"catboost metric {text.strip()!r}: denominator must be LogPosition or Position, received {value!r}"
                )
            knobs["discount"] = _CATBOOST_DENOMINATORS[low]
        elif key == "use_weights":
            pass  # weights only matter with group weights, which TREC inputs do not carry
        else:
            valid = ("top", "type", "denominator", "use_weights")
            raise FlavorError(
                f"catboost metric {text.strip()!r}: unknown parameter {key!r}; valid: {', '.join(valid)}."
                + did_you_mean(key, valid)
            )
        spelled.append(f"{key}={value}")
    label = m.group("name").upper() + (":" + ";".join(spelled) if spelled else "")
    return [Template(metric, k, knobs, label)]


CATBOOST = Preset(
    name="catboost",
    flavor=SKLEARN_FLAVOR.with_knobs(ties="pessimistic", empty="one"),
    summary="CatBoost NDCG: type=Base linear (Exp: 2^g-1), denominator=LogPosition log2(i+1) (Position: 1/i), "
    "ideal from the group, tied scores lowest label first, nothing relevant scores 1",
    evidence="catboost 1.2.10 dcg.cpp, doc_comparator.h [CB]; random groups through "
    "catboost.utils.eval_metric in tests/presets/test_presets_ml.py",
    dialect=parse_catboost,
    default_metrics=("NDCG", "NDCG:top=10"),
    canonical={"ndcg": ("NDCG:top={k}", "NDCG"), "dcg": ("DCG:top={k}", "DCG")},
)

# ---------------------------------------------------------------------------------------------
# RankLib

RANKLIB_DEFAULT_K = 10
_ranklib_guard = _unsupported(
    "ranklib",
    {
        "p": "RankLib's P@k divides by min(k, list size)",
        "map": "RankLib's MAP",
        "err": "RankLib's ERR@k",
        "rr": "RankLib's RR@k",
        "best": "RankLib's BEST@k",
    },
)


def _ranklib_dialect(qrel: bool) -> Callable[[str], list[Template | str] | None]:
    def parse(text: str) -> list[Template | str] | None:
        """``NDCG@10``, ``NDCG`` (= @10), ``DCG@k``; ``@0`` means the whole list."""
        _ranklib_guard(text)
        call = _try_call(text, "ranklib", ("NDCG", "DCG"))
        if call is None:
            return None
        call.reject_minus()
        call.reject_unknown(())
        if len(call.ks) > 1:
            raise FlavorError(f"ranklib metric {call.text!r}: one cutoff only, received {len(call.ks)}")
        metric = call.name.lower()
        k: int | None = call.ks[0] if call.ks else RANKLIB_DEFAULT_K
        if k == 0:
            if qrel and metric == "ndcg":
                # -qrel caches the ideal cut at k = 0, so every query would score 0.
                raise FlavorError(f"ranklib metric {call.text!r}: with -qrel, NDCG@0 scores every query 0; give k >= 1")
            k = None  # RankLib: k <= 0 means the whole list
        return [Template(metric, k, {}, f"{call.name.upper()}@{call.ks[0] if call.ks else RANKLIB_DEFAULT_K}")]

    return parse


RANKLIB = Preset(
    name="ranklib",
    # DataPoint keeps a label as float, but DCGScorer reads it through an (int) cast.
    flavor=SKLEARN_FLAVOR.with_knobs(gain="exp2", ties="input_order", fractional="truncate"),
    summary="RankLib NDCG@k (plain NDCG = @10): 2^g-1, log2(i+1), ideal from the ranked list, ties in "
    "input order, nothing relevant scores 0",
    evidence="codelibs/ranklib NDCGScorer.java, DCGScorer.java [RL] (source only; Java, not on PyPI); "
    "fingerprints of flavor-facts §4.2 in tests/presets/test_presets_ml.py",
    dialect=_ranklib_dialect(qrel=False),
    default_metrics=("NDCG@10",),
    canonical={"ndcg": ("NDCG@{k}", "NDCG@0"), "dcg": ("DCG@{k}", "DCG@0")},
)

RANKLIB_QREL = Preset(
    name="ranklib_qrel",
    flavor=RANKLIB.flavor.with_knobs(ideal="global"),
    summary="RankLib with -qrel FILE: as ranklib, but the ideal comes from every judgment of the query, cut at k",
    evidence="codelibs/ranklib NDCGScorer.loadExternalRelevanceJudgment [RL]; flavor-facts §4.2 -qrel probe",
    dialect=_ranklib_dialect(qrel=True),
    default_metrics=("NDCG@10",),
    canonical={"ndcg": ("NDCG@{k}", None), "dcg": ("DCG@{k}", "DCG@0")},
    refusals={"ndcg": "RankLib -qrel caches the ideal cut at k, so NDCG@0 scores every query 0: give k >= 1"},
)

PRESETS = [SKLEARN, LIGHTGBM, XGBOOST, CATBOOST, RANKLIB, RANKLIB_QREL]
