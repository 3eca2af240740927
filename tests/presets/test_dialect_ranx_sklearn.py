"""The ranx and scikit-learn dialects, completed: every name they accept evaluates as the tool does.

ranx 0.3.21 (``ranx.evaluate`` on ``Qrels``/``Run`` built from dicts): ``hits@k``, ``f1@k``,
``rbp.p`` and ``bpref``, with levels ``-lN``, against the real library on tie-free random queries
(ranx sorts with numba's unstable sort), plus the cases of ranx's own test suite
(``tests/unit/ranx/metrics/{bpref,f1,rank_biased_precision}_test.py``), recomputed here from the
formulas. scikit-learn 1.9.1: ``dcg_score(log_base=b)`` on random rows with ties and the toy
example of ``sklearn/metrics/tests/test_ranking.py`` (``test_ndcg_toy_examples``), and the
refusal of a one-document list (``test_ndcg_error_single_document``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import rankflavor
from rankflavor.errors import EvaluationError, FlavorError
from rankflavor.presets import resolve_measures

from .test_presets_ir import random_case

TOL = 1e-9


def _ranx():  # type: ignore[no-untyped-def]
    return pytest.importorskip("ranx", reason="ranx is not installed; `pip install -e '.[peers]'` runs this test")


def _ranx_scores(qrels, run, names):  # type: ignore[no-untyped-def]
    """ranx's per-query values (make_comparable=True: run-only queries dropped, missing ones 0)."""
    ranx = _ranx()
    r = ranx.Run(run)
    ranx.evaluate(ranx.Qrels(qrels), r, names, make_comparable=True)
    return {name: {q: float(v) for q, v in r.scores[name].items()} for name in names}, dict(r.mean_scores)


def _ours(qrels, run, name, **knobs):  # type: ignore[no-untyped-def]
    res = rankflavor.evaluate(qrels, run, [name], preset="ranx", missing="zero", run_only="skip", **knobs)[0]
    return res.per_query(), res.mean


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= TOL


# ---------------------------------------------------------------------------------------------
# ranx: random queries

#: Every name of ranx 0.3.21's metric_switch, the new ones with several cutoffs and levels.
RANX_NAMES = [
    "hits@1", "hits@5", "hits@20", "hits", "hits@3-l2", "hits-l3",
    "f1@1", "f1@5", "f1@20", "f1", "f1@10-l2", "f1-l3",
    "rbp.5", "rbp.8", "rbp.95", "rbp@9", "rbp.8-l2", "rbp.95-l0", "rbp.05",
    "precision@5", "recall@10", "r-precision", "r-precision@5", "mrr", "map@0", "hit_rate@3", "dcg@5", "dcg_burges",
    "ndcg@10-l2", "ndcg_burges@5",
]  # fmt: skip


@pytest.mark.parametrize("seed", [41, 42])
def test_new_ranx_names_match_ranx_on_random_queries(seed: int) -> None:
    qrels, run = random_case(seed, 300, ties=False, negatives=seed == 42)
    want, means = _ranx_scores(qrels, run, RANX_NAMES)
    for name in RANX_NAMES:
        got, mean = _ours(qrels, run, name)
        assert set(got) == set(want[name]), name
        bad = [(q, got[q], v) for q, v in want[name].items() if not _same(got[q], v)]
        assert not bad, (name, bad[:3])
        assert _same(mean, means[name]), (name, mean, means[name])
    # graded RBP is not normalised: ranx's values exceed 1 where grades do
    assert max(want["rbp.5"].values()) > 1


@pytest.mark.parametrize("level", [1, 2, 3])
def test_ranx_bpref_on_random_queries(level: int) -> None:
    """Queries with nothing relevant at the level are left out of the batch: ranx 0.3.21 divides
    0 by 0 for them inside a numba parallel loop, the ZeroDivisionError is swallowed and every
    later query of that loop scores 0 (see the next test). Negative grades are judged non-relevant."""
    names = [f"bpref-l{level}", f"bpref@10-l{level}"]
    for seed, negatives in ((43, False), (44, True)):
        qrels, run = random_case(seed, 300, ties=False, negatives=negatives)
        qrels = {q: docs for q, docs in qrels.items() if max(docs.values()) >= level}
        want, means = _ranx_scores(qrels, run, names)
        assert any(math.isnan(v) for v in want[names[0]].values())  # N = 0 with a relevant retrieved
        for name in names:
            got, mean = _ours(qrels, run, name)
            bad = [(q, got[q], v) for q, v in want[name].items() if not _same(got[q], v)]
            assert not bad, (name, bad[:3])
            assert math.isnan(mean) and math.isnan(means[name])


def test_ranx_bpref_batch_defect_and_each_query_alone() -> None:
    """A fact about ranx 0.3.21: a query with no relevant judgment zeroes the bpref of the queries
    after it in the batch; alone, each query gets the value rankflavor gives it."""
    qrels = {"a": {"d1": 0, "d2": 0}, "b": {"d1": 1, "d2": 0, "d3": 1}}
    run = {"a": {"d1": 2.0, "d2": 1.0}, "b": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}
    want_b = (1 + (1 - 1 / 1)) / 2  # d1: nothing above; d3: d2 above, min(N, R) = 1
    batch, _ = _ranx_scores(qrels, run, ["bpref"])
    alone, _ = _ranx_scores({"b": qrels["b"]}, {"b": run["b"]}, ["bpref"])
    ours, _ = _ours(qrels, run, "bpref")
    assert alone["bpref"]["b"] == ours["b"] == want_b
    assert batch["bpref"] == {"a": 0.0, "b": 0.0}  # ranx's defect: b after a scores 0
    assert ours["a"] == 0.0  # nothing relevant: empty=zero


# ---------------------------------------------------------------------------------------------
# ranx: the cases of its own test suite, recomputed from the formulas

#: tests/unit/ranx/metrics/bpref_test.py and f1_test.py (qrels; f1's q4 run retrieves nothing relevant).
SUITE_QRELS = {
    "q1": {"d2": 1, "d5": 1, "d1": 0, "d4": 0},
    "q2": {"d2": 1, "d5": 1, "d1": 0, "d6": 0},
    "q3": {"d2": 1, "d5": 1, "d7": 1, "d1": 0, "d6": 0, "d8": 0},
    "q4": {"d2": 1, "d4": 1, "d6": 1, "d9": 1, "d1": 0, "d3": 0, "d7": 0, "d8": 0},
}
SUITE_RUN = {
    "q1": {"d1": 10, "d2": 9, "d3": 8, "d4": 7},
    "q2": {"d1": 10, "d2": 9, "d3": 8, "d4": 7, "d5": 6, "d6": 5},
    "q3": {"d1": 10, "d2": 9, "d3": 8, "d4": 7, "d5": 6, "d6": 5, "d7": 4, "d8": 3},
    "q4": {"d1": 10, "d2": 9, "d3": 8, "d4": 7, "d6": 5, "d7": 4, "d8": 3},
}


def test_ranx_suite_bpref() -> None:
    got, _ = _ours(SUITE_QRELS, SUITE_RUN, "bpref")
    want = {
        "q1": 1 / 2 * (1 - 1 / 2),
        "q2": 1 / 2 * ((1 - 1 / 2) + (1 - 1 / 2)),
        "q3": 1 / 3 * ((1 - 1 / 3) + (1 - 1 / 3) + (1 - 2 / 3)),
        "q4": 1 / 4 * ((1 - 1 / 4) + (1 - 2 / 4) + (1 - 2 / 4)),
    }
    assert all(abs(got[q] - v) <= TOL for q, v in want.items()), got
    ranx_values, _ = _ranx_scores(SUITE_QRELS, SUITE_RUN, ["bpref"])
    assert all(abs(ranx_values["bpref"][q] - v) <= TOL for q, v in want.items())


def test_ranx_suite_f1_and_hits() -> None:
    run = {**SUITE_RUN, "q4": {"d1": 10, "d12": 9, "d3": 8, "d14": 7, "d16": 5, "d7": 4, "d8": 3}}
    f1, _ = _ours(SUITE_QRELS, run, "f1")
    hits, _ = _ours(SUITE_QRELS, run, "hits")
    # without k, P = hits / retrieved and R = hits / relevant
    for q, (found, retrieved, relevant) in {"q1": (1, 4, 2), "q2": (2, 6, 2), "q3": (3, 8, 3), "q4": (0, 7, 4)}.items():
        p, r = found / retrieved, found / relevant
        assert hits[q] == found
        assert abs(f1[q] - (2 * p * r / (p + r) if found else 0.0)) <= TOL, q
    assert f1["q4"] == 0.0


def test_ranx_suite_rbp_moffat_zobel_example() -> None:
    """rank_biased_precision_test.py (Moffat & Zobel 2008's example): relevant at ranks 1, 2, 6, 11, 17 of 20."""
    qrels = {"q1": {f"d{i}": 1 for i in (1, 2, 6, 11, 17)}}
    run = {"q1": {f"d{i}": float(21 - i) for i in range(1, 21)}}
    for p, want in ((5, 0.7661), (8, 0.4526), (95, 0.1881)):
        got, _ = _ours(qrels, run, f"rbp.{p}")
        pp = float(f"0.{p}")
        formula = (1 - pp) * sum(pp ** (i - 1) for i in (1, 2, 6, 11, 17))
        assert round(got["q1"], 4) == want and abs(got["q1"] - formula) <= TOL


def test_ranx_dialect_refusals_and_mapping() -> None:
    for name, message in (
        ("rbp", "needs its persistence"),
        ("rbp.0", "0 < p < 1"),
        ("ndcg@10-l-1", "negative level"),
        ("bpref-l0", "level <= 0"),
    ):
        with pytest.raises(FlavorError, match=message):
            resolve_measures([name], "ranx", {})
    ranx = _ranx()
    with pytest.raises(ValueError, match="persistence"):
        ranx.evaluate({"q": {"d": 1}}, {"q": {"d": 1.0}}, "rbp")
    measures, _ = resolve_measures(["rbp.95-l2", "f1@5", "hits@3", "bpref@10", "r-precision@5", "ndcg@0"], "ranx", {})
    assert [(m.metric, m.k) for m in measures] == [
        ("RBP_gain", None), ("F1", 5), ("hits", 3), ("bpref_ranx", None), ("Rprec", None), ("ndcg", None)]
    assert measures[0].flavor.param == "0.95" and measures[0].flavor.min_grade == "2"
    assert measures[3].flavor.negatives == "zero"
    for m in measures:
        assert str(m) == str(rankflavor.parse_measure(str(m)))  # flavor strings parse back


# ---------------------------------------------------------------------------------------------
# scikit-learn: dcg_score(log_base=b)


def _sklearn():  # type: ignore[no-untyped-def]
    return pytest.importorskip("sklearn.metrics", reason="scikit-learn is not installed")


@pytest.mark.parametrize("base", [1.5, 2.5, 10.0, 100.0])
def test_dcg_log_base_matches_scikit_learn(base: float) -> None:
    sk = _sklearn()
    rng = np.random.default_rng(int(base * 10))
    for n_docs in (2, 5, 9):
        y = np.minimum(rng.geometric(0.45, (60, n_docs)) - 1, 4).astype(np.float64)
        y[::7] = 0
        s = rng.integers(0, 4, (60, n_docs)) / 4  # many ties: tie-averaged gains
        for k in (None, 1, 3):
            # per row through the public dcg_score (the mean of one row is its value)
            rows = [sk.dcg_score(y[i:i + 1], s[i:i + 1], k=k, log_base=base) for i in range(len(y))]
            got = rankflavor.dcg_score(y, s, k, log_base=base, per_query=True)
            assert isinstance(got, np.ndarray)
            np.testing.assert_allclose(got, rows, rtol=0, atol=1e-12)
            assert abs(rankflavor.dcg_score(y, s, k, log_base=base) - sk.dcg_score(y, s, k=k, log_base=base)) <= 1e-12
            name = f"dcg_score(log_base={base!r})" if k is None else f"dcg@{k}(log_base={base!r})"
            by_name = rankflavor.dcg_score(y, s, preset="sklearn", metric=name)
            assert abs(by_name - sk.dcg_score(y, s, k=k, log_base=base)) <= 1e-12
            # the base cancels in NDCG (scikit-learn's ndcg_score has no log_base)
            assert abs(rankflavor.ndcg_score(y, s, k, discount=f"log({base!r})") - sk.ndcg_score(y, s, k=k)) <= 1e-12


def test_sklearn_suite_toy_example_log_base_10() -> None:
    """test_ranking.py test_ndcg_toy_examples: 3 * eye(7)[:5] ranked by 6..0 -> 3 / log10(i + 1)."""
    y_true = 3 * np.eye(7)[:5]
    y_score = np.tile(np.arange(6, -1, -1), (5, 1)).astype(np.float64)
    for ignore_ties in (False, True):
        got = rankflavor.dcg_score(y_true, y_score, log_base=10, ignore_ties=ignore_ties, per_query=True)
        assert isinstance(got, np.ndarray)
        np.testing.assert_allclose(got, 3 / np.log10(np.arange(2, 7)), rtol=1e-12)


def test_sklearn_log_base_refusals() -> None:
    sk = _sklearn()
    y, s = [[3, 2, 3, 0, 1, 2]], [[0.9, 0.8, 0.1, 0.7, 0.6, 0.3]]
    with pytest.raises(TypeError):
        sk.ndcg_score(y, s, log_base=10)  # scikit-learn's ndcg_score takes no log_base
    for name, message in (
        ("ndcg(log_base=10)", "unknown argument 'log_base'"),
        ("dcg(log_base=1)", "needs b > 1"),
        ("dcg(log_base=0.5)", "needs b > 1"),
        ("dcg(log_base=0)", r"\(0, inf\)"),
        ("dcg(log_base=e)", "must be a number"),
    ):
        with pytest.raises(FlavorError, match=message):
            resolve_measures([name], "sklearn", {})
    with pytest.raises(ValueError):
        sk.dcg_score(y, s, log_base=0)
    assert sk.dcg_score(y, s, log_base=0.5) < 0  # accepted by scikit-learn, refused by rankflavor
    m = resolve_measures(["dcg_score(k=3, log_base=2)"], "sklearn", {})[0][0]
    assert m.flavor.discount == "log2"  # log(2) is log2: one flavor, one string


# ---------------------------------------------------------------------------------------------
# scikit-learn refuses a one-document list


def test_sklearn_refuses_one_document_lists() -> None:
    sk = _sklearn()
    for fn in (sk.ndcg_score, sk.dcg_score):
        with pytest.raises(ValueError):
            fn([[1]], [[1]])
    with pytest.raises(ValueError, match="only meaningful when there is more than 1 document"):
        sk.ndcg_score([[1], [0]], [[0.3], [0.1]])
    for fn in (rankflavor.ndcg_score, rankflavor.dcg_score):
        with pytest.raises(EvaluationError, match=r"2 query\(ies\) rank a single document \(q0, q1\)"):
            fn([[1], [0]], [[0.3], [0.1]])
    with pytest.raises(EvaluationError, match=r"single document \(q1, q2\)"):
        rankflavor.ndcg_score([1, 0, 2, 0, 3, 1], [0.2, 0.1, 0.3, 0.0, 0.5, 0.4], group=[2, 1, 1, 2])
    # through files too, as the preset's policy
    with pytest.raises(EvaluationError, match=r"single document \(q\)"):
        rankflavor.evaluate({"q": {"a": 1}}, {"q": {"a": 0.5}}, ["ndcg@10"], preset="sklearn")
    # other presets score such a group, and singletons=keep restores the plain value
    assert rankflavor.ndcg_score([[1]], [[1]], preset="lightgbm") == 1.0
    assert rankflavor.ndcg_score([[1]], [[1]], singletons="keep") == 1.0
    assert rankflavor.ndcg_score([[1, 0]], [[0.2, 0.1]]) == sk.ndcg_score([[1, 0]], [[0.2, 0.1]]) == 1.0


# ---------------------------------------------------------------------------------------------
# A query listed with an empty ranking ({} in a dict run) is answered with nothing, not missing


def test_empty_ranking_scores_zero_as_ranx_run_does() -> None:
    ranx = _ranx()
    qrels = {"q1": {"a": 2, "b": 0, "c": 1}, "q2": {"a": 1}, "q3": {"a": 0}}
    run = {"q1": {"a": 0.9, "x": 0.8, "c": 0.7, "b": 0.6}, "q2": {}, "q3": {}}
    names = ["ndcg@10", "map", "mrr", "precision", "recall@10", "f1@3", "hits", "bpref", "rbp.8", "r-precision"]
    r = ranx.Run(run)  # ranx keeps q2 and q3 and its query-set check passes
    ranx.evaluate(ranx.Qrels(qrels), r, names)
    for name in names:
        res = rankflavor.evaluate(qrels, run, [name], preset="ranx")[0]  # missing=error: nothing is missing
        assert res.per_query() == {q: float(v) for q, v in r.scores[name].items()}, name
        assert res.per_query()["q2"] == 0.0 and abs(res.mean - r.mean_scores[name]) <= TOL
    # a query the run does not list at all is still missing, which ranx refuses
    with pytest.raises(EvaluationError, match="absent from the run"):
        rankflavor.evaluate(qrels, {"q1": run["q1"], "q3": {}}, ["ndcg@10"], preset="ranx")
    with pytest.raises(AssertionError):
        ranx.evaluate(ranx.Qrels(qrels), ranx.Run({"q1": run["q1"], "q3": {}}), "ndcg@10")


def test_empty_ranking_as_pytrec_eval_scores_it() -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels = {"q1": {"a": 2, "b": 0, "c": 1}, "q2": {"a": 1}}
    run = {"q1": {"a": 0.9, "x": 0.8, "c": 0.7, "b": 0.6}, "q2": {}}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg", "map"}).evaluate(run)
    assert set(theirs) == {"q1", "q2"}  # pytrec_eval evaluates q2, it does not skip it
    for metric, key in (("ndcg", "ndcg"), ("AP", "map")):
        got = rankflavor.evaluate(qrels, run, [metric], preset="pytrec_eval")[0].per_query()  # missing=skip
        assert got == {q: v[key] for q, v in theirs.items()}, metric
