"""The torchmetrics preset reproduces torchmetrics' retrieval metrics, class and function alike.

Oracles: torchmetrics 1.9 itself (``torchmetrics.retrieval`` classes with ``indexes`` and every
``empty_target_action``; ``torchmetrics.functional.retrieval`` query by query) on random queries
whose candidates include unjudged ones, scores at or below 0, queries with nothing relevant, with
nothing non-relevant, and relevant judgments the run never retrieved (which torchmetrics never
sees); and the examples of torchmetrics' own docstrings (Lightning-AI/torchmetrics
``src/torchmetrics/functional/retrieval/*.py``, ``src/torchmetrics/retrieval/*.py``).

Scores are distinct in float32 for the metrics other than NDCG: torch's ``topk``/``argsort`` order
of tied scores is not defined, so there is no tie rule to reproduce (NDCG averages ties; its tied
cases are in ``tests/presets/test_presets_ml.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import rankflavor
from rankflavor.errors import FlavorError
from rankflavor.presets import resolve_measures

torch = pytest.importorskip("torch")
tm = pytest.importorskip("torchmetrics")
from torchmetrics import retrieval as R  # noqa: E402
from torchmetrics.functional import retrieval as F  # noqa: E402

TOL = 1e-6  # torchmetrics computes in float32


def tm_case(seed: int, n: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Queries of 1-25 candidates with distinct float32 scores, a third of them <= 0."""
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for i in range(n):
        q = f"q{i:03d}"
        m = int(rng.integers(1, 26))
        docs = [f"d{j}" for j in rng.permutation(60)[:m]]
        scores = (rng.permutation(m) - m / 3.0) * 0.25 + 0.125  # distinct, some negative
        share = [0.0, 1.0, rng.random()][int(rng.integers(0, 3))] if rng.random() < 0.3 else rng.random()
        labels = rng.random(m) < share
        judged = {d: int(lab) * int(rng.integers(1, 4)) for d, lab in zip(docs, labels, strict=True)
                  if lab or rng.random() < 0.7}  # some candidates unjudged: target 0
        if rng.random() < 0.3:
            judged[f"x{i}"] = 2  # relevant, never retrieved: not a candidate
        if judged and rng.random() < 0.95:
            qrels[q] = judged
        run[q] = {d: float(s) for d, s in zip(docs, scores, strict=True)}
    return qrels, run


def tensors(qrels: dict[str, dict[str, int]], docs: dict[str, float], q: str, graded: bool = False) -> tuple[Any, Any]:
    """One query's preds and targets: the grades for NDCG, else relevant (grade >= 1) or not."""
    preds = torch.tensor(list(docs.values()), dtype=torch.float32)
    grades = [qrels.get(q, {}).get(d, 0) for d in docs]
    target = torch.tensor(grades if graded else [int(g >= 1) for g in grades])
    return preds, target


#: (our name with {k}, function, class, kwargs of both with {k})
METRICS = [
    ("retrieval_precision(top_k={k})", F.retrieval_precision, R.RetrievalPrecision, {"top_k": "{k}"}),
    ("retrieval_precision(top_k={k}, adaptive_k=True)", F.retrieval_precision, R.RetrievalPrecision,
     {"top_k": "{k}", "adaptive_k": True}),
    ("retrieval_precision", F.retrieval_precision, R.RetrievalPrecision, {}),
    ("retrieval_recall(top_k={k})", F.retrieval_recall, R.RetrievalRecall, {"top_k": "{k}"}),
    ("retrieval_average_precision(top_k={k})", F.retrieval_average_precision, R.RetrievalMAP, {"top_k": "{k}"}),
    ("retrieval_average_precision", F.retrieval_average_precision, R.RetrievalMAP, {}),
    ("retrieval_reciprocal_rank(top_k={k})", F.retrieval_reciprocal_rank, R.RetrievalMRR, {"top_k": "{k}"}),
    ("retrieval_hit_rate(top_k={k})", F.retrieval_hit_rate, R.RetrievalHitRate, {"top_k": "{k}"}),
    ("retrieval_fall_out(top_k={k})", F.retrieval_fall_out, R.RetrievalFallOut, {"top_k": "{k}"}),
    ("retrieval_r_precision", F.retrieval_r_precision, R.RetrievalRPrecision, {}),
    ("retrieval_normalized_dcg(top_k={k})", F.retrieval_normalized_dcg, R.RetrievalNormalizedDCG, {"top_k": "{k}"}),
]
CLASS_NAMES = {F.retrieval_precision: "RetrievalPrecision", F.retrieval_recall: "RetrievalRecall",
               F.retrieval_average_precision: "RetrievalMAP", F.retrieval_reciprocal_rank: "RetrievalMRR",
               F.retrieval_hit_rate: "RetrievalHitRate", F.retrieval_fall_out: "RetrievalFallOut",
               F.retrieval_r_precision: "RetrievalRPrecision", F.retrieval_normalized_dcg: "RetrievalNormalizedDCG"}


def _kwargs(kwargs: dict[str, Any], k: int) -> dict[str, Any]:
    return {key: (int(v.format(k=k)) if isinstance(v, str) else v) for key, v in kwargs.items()}


@pytest.mark.parametrize("k", [1, 3, 10])
def test_functions_query_by_query(k: int) -> None:
    qrels, run = tm_case(10 + k, 160)
    for name, fn, _, kwargs in METRICS:
        text = name.format(k=k)
        got = rankflavor.evaluate(qrels, run, text, preset="torchmetrics")[0].per_query()
        assert set(got) == set(run), text  # every query of the run, judged or not
        for q, docs in run.items():
            graded = fn is F.retrieval_normalized_dcg
            want = float(fn(*tensors(qrels, docs, q, graded), **_kwargs(kwargs, k)))
            assert got[q] == pytest.approx(want, abs=TOL), (text, q, got[q], want)


@pytest.mark.parametrize("action", ["neg", "pos", "skip"])
def test_classes_with_every_empty_target_action(action: str) -> None:
    qrels, run = tm_case(7, 150)
    order = list(run)
    preds = torch.tensor([s for q in order for s in run[q].values()], dtype=torch.float32)
    grades = [qrels.get(q, {}).get(d, 0) for q in order for d in run[q]]
    indexes = torch.tensor([i for i, q in enumerate(order) for _ in run[q]])
    for name, fn, cls, kwargs in METRICS:
        if "adaptive_k" in name:
            continue
        target = torch.tensor(grades if fn is F.retrieval_normalized_dcg else [int(g >= 1) for g in grades])
        args = _kwargs(kwargs, 5)
        text = CLASS_NAMES[fn] + "(" + ", ".join([f"{a}={v}" for a, v in args.items()] +
                                                 [f"empty_target_action={action}"]) + ")"
        want = float(cls(empty_target_action=action, **args)(preds, target, indexes=indexes))
        got = rankflavor.evaluate(qrels, run, text, preset="torchmetrics")[0].mean
        assert got == pytest.approx(want, abs=TOL), (text, got, want)


def test_default_empty_target_actions() -> None:
    """RetrievalFallOut scores a query without a non-relevant candidate 1 (``pos``); the others
    score a query without a relevant one 0 (``neg``); the functions return 0 for both."""
    qrels = {"all": {"a": 1, "b": 1}, "none": {"c": 0}, "mixed": {"e": 1, "f": 0}}
    run = {"all": {"a": 0.9, "b": 0.8}, "none": {"c": 0.9, "d": 0.5}, "mixed": {"f": 0.9, "e": 0.5}}
    fall = rankflavor.evaluate(qrels, run, ["RetrievalFallOut", "retrieval_fall_out", "RetrievalMAP"],
                               preset="torchmetrics")
    assert fall[0].per_query() == {"all": 1.0, "none": 1.0, "mixed": 1.0}
    assert fall[1].per_query() == {"all": 0.0, "none": 1.0, "mixed": 1.0}
    assert fall[2].per_query() == {"all": 1.0, "none": 0.0, "mixed": 0.5}
    for name, cls in (("RetrievalFallOut", R.RetrievalFallOut), ("RetrievalMAP", R.RetrievalMAP)):
        order = list(run)
        want = cls()(torch.tensor([s for q in order for s in run[q].values()]),
                     torch.tensor([qrels[q].get(d, 0) for q in order for d in run[q]]),
                     indexes=torch.tensor([i for i, q in enumerate(order) for _ in run[q]]))
        assert rankflavor.evaluate(qrels, run, name, preset="torchmetrics")[0].mean == pytest.approx(float(want))


def test_docstring_examples() -> None:
    """The examples of torchmetrics' docstrings: one query, preds [0.2, 0.3, 0.5]."""
    run = {"q": {"a": 0.2, "b": 0.3, "c": 0.5}}
    ac = {"q": {"a": 1, "c": 1}}  # target [True, False, True]
    got = {name: rankflavor.evaluate(ac, run, name, preset="torchmetrics")[0].mean
           for name in ("retrieval_average_precision", "retrieval_precision(top_k=2)", "retrieval_recall(top_k=2)",
                        "retrieval_hit_rate(top_k=2)", "retrieval_fall_out(top_k=2)", "retrieval_r_precision")}
    assert got == pytest.approx({"retrieval_average_precision": 0.8333, "retrieval_precision(top_k=2)": 0.5,
                                 "retrieval_recall(top_k=2)": 0.5, "retrieval_hit_rate(top_k=2)": 1.0,
                                 "retrieval_fall_out(top_k=2)": 1.0, "retrieval_r_precision": 0.5}, abs=1e-4)
    rr = rankflavor.evaluate({"q": {"b": 1}}, run, "retrieval_reciprocal_rank", preset="torchmetrics")[0].mean
    assert rr == pytest.approx(0.5, abs=1e-4)
    # retrieval_normalized_dcg: preds [.1, .2, .3, 4, 70], target [10, 0, 0, 1, 5] -> 0.6957
    ndcg = rankflavor.evaluate({"q": {"a": 10, "b": 0, "c": 0, "d": 1, "e": 5}},
                               {"q": {"a": 0.1, "b": 0.2, "c": 0.3, "d": 4.0, "e": 70.0}},
                               "retrieval_normalized_dcg", preset="torchmetrics")[0].mean
    assert ndcg == pytest.approx(0.6957, abs=1e-4)
    # RetrievalMAP / RetrievalMRR: indexes [0,0,0,1,1,1,1], preds [.2,.3,.5,.1,.3,.5,.2],
    # target [F,F,T,F,T,F,T] -> 0.7917 and 0.75
    qrels = {"0": {"c": 1}, "1": {"e": 1, "g": 1}}
    runs = {"0": {"a": 0.2, "b": 0.3, "c": 0.5}, "1": {"d": 0.1, "e": 0.3, "f": 0.5, "g": 0.2}}
    got = [rankflavor.evaluate(qrels, runs, n, preset="torchmetrics")[0].mean for n in ("RetrievalMAP", "RetrievalMRR")]
    assert got == pytest.approx([0.7917, 0.75], abs=1e-4)


def test_a_candidate_scored_at_or_below_zero_is_not_relevant_where_torchmetrics_says_so() -> None:
    qrels, run = {"q": {"a": 1, "b": 1}}, {"q": {"a": 0.5, "b": -0.5}}
    got = {n: rankflavor.evaluate(qrels, run, n, preset="torchmetrics")[0].mean
           for n in ("precision@2", "recall@2", "map@2", "mrr", "hit_rate@2", "r_precision", "ndcg@2")}
    # precision, recall, MAP, MRR drop b (score <= 0); hit rate, R-precision and NDCG keep it
    assert got == {"precision@2": 0.5, "recall@2": 0.5, "map@2": 1.0, "mrr": 1.0, "hit_rate@2": 1.0,
                   "r_precision": 1.0, "ndcg@2": 1.0}
    zero = rankflavor.evaluate({"q": {"a": 1}}, {"q": {"a": 0.0, "x": -1.0}}, "mrr", preset="torchmetrics")[0].mean
    assert zero == 0.0 == float(F.retrieval_reciprocal_rank(torch.tensor([0.0, -1.0]), torch.tensor([1, 0])))


@pytest.mark.parametrize(("name", "why"), [
    ("RetrievalAUROC", "not reproduced"), ("retrieval_auroc(top_k=3)", "not reproduced"),
    ("RetrievalPrecisionRecallCurve(max_k=3)", "not reproduced"), ("RetrievalRecallAtFixedPrecision", "not reproduced"),
    ("RetrievalMAP(ignore_index=-1)", "ignore_index"), ("RetrievalMRR(aggregation=median)", "aggregation"),
    ("retrieval_precision(top_k=3, empty_target_action=pos)", "unknown argument"),
    ("RetrievalRPrecision(top_k=3)", "unknown argument"), ("r_precision@3", "takes no top_k"),
    ("RetrievalMAP(empty_target_action=maybe)", "must be one of"), ("mrr@10-", "XGBoost syntax"),
    ("retrieval_recall(top_k=0)", ">= 1"),
])
def test_torchmetrics_refusals(name: str, why: str) -> None:
    with pytest.raises(FlavorError, match=why):
        resolve_measures([name], "torchmetrics", {})


def test_names_short_class_function_and_canonical_agree() -> None:
    groups = [("map@5", "RetrievalMAP(top_k=5)", "retrieval_average_precision(top_k=5)", "AP@5"),
              ("mrr@5", "RetrievalMRR(top_k=5)", "retrieval_reciprocal_rank(top_k=5)", "RR@5"),
              ("precision@5", "RetrievalPrecision(top_k=5)", "retrieval_precision(top_k=5)", "P@5"),
              ("fall_out@5", "RetrievalFallOut(top_k=5, empty_target_action=neg)", "retrieval_fall_out(top_k=5)",
               "fallout@5"),
              ("ndcg@5", "RetrievalNormalizedDCG(top_k=5)", "retrieval_normalized_dcg(top_k=5)", "ndcg@5")]
    for names in groups:
        found = {(m.metric, m.k, m.flavor) for n in names for m in resolve_measures([n], "torchmetrics", {})[0]}
        assert len(found) == 1, names
