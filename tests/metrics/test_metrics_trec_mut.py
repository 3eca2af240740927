"""Outputs of trec_eval's gain measures (``rankflavor.metrics.trec_gain``: G, ndcg_rel, Rndcg) that
the mutation run found unpinned: a run query that sorts after every judged one, queries with no
positive gain (no RuntimeWarning escapes, no crash when no query has one), gains whose DCG
overflows, and which Rndcg queries are empty: R = 0 only. Rndcg with R > 0 but no positive gain is
trec_eval's 0 / 0 (NaN), a bug the triage found (it was called empty, 0). Expected values come
from pytrec_eval (trec_eval's own C code), trec_eval 9.0.8's stdout, or are worked by hand in the
comments."""

from __future__ import annotations

import math
import warnings

import pytest
from click.testing import CliRunner

import rankflavor
from rankflavor.cli.main import cli

pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier is in the [test] extras")


def oracle(qrels: dict, run: dict, measure: str) -> dict[str, float]:
    """pytrec_eval's per-query values of one trec_eval measure."""
    got = pytrec_eval.RelevanceEvaluator(qrels, {measure}).evaluate(run)
    return {q: v[measure] for q, v in got.items()}


def ours(qrels: dict, run: dict, measure: str) -> rankflavor.MeasureResult:
    return rankflavor.evaluate(qrels, run, [measure])[0]


# -- G: a run query after every judged one --------------------------------------------------------


def test_g_with_a_run_query_that_sorts_after_every_judged_query():
    """G on a: y (1) then x (2), ideal [2, 1]. Cost (ideal gain, at least 1) so far: 2, 3; gain so
    far: 1, 3. Terms 1 / log2(2 + 2 - 1) and 2 / log2(2 + 3 - 3) = 2; over the ideal gain 3:
    (2 + 1 / log2 3) / 3. The run also ranks z, which the qrels do not hold and which sorts last:
    trec_eval leaves it out (run_only=skip); run_only=include scores it as empty (0)."""
    qrels = {"a": {"x": 2, "y": 1}}
    run = {"a": {"y": 0.9, "x": 0.8}, "z": {"w": 1.0, "y": 0.5}}
    want = (2 + 1 / math.log2(3)) / 3
    assert oracle(qrels, run, "G") == {"a": pytest.approx(want, abs=1e-12)}
    assert ours(qrels, run, "G").per_query() == {"a": pytest.approx(want, abs=1e-12)}
    included = ours(qrels, run, "G[run_only=include]")
    assert included.per_query() == {"a": pytest.approx(want, abs=1e-12), "z": 0.0}
    assert included.status.tolist() == ["ok", "empty"]


def test_g_with_a_last_query_judged_only_negative():
    """z's one judgment is -1 (pooled, unjudged in trec_eval): no usable judgment, nothing to find."""
    qrels = {"a": {"x": 2, "y": 1}, "z": {"y": -1}}
    run = {"a": {"y": 0.9, "x": 0.8}, "z": {"w": 1.0, "y": 0.5}}
    want = (2 + 1 / math.log2(3)) / 3
    got = ours(qrels, run, "G")
    assert got.per_query() == {"a": pytest.approx(want, abs=1e-12), "z": 0.0}
    assert got.status.tolist() == ["ok", "empty"]


# -- queries without a positive gain: no RuntimeWarning, no crash ----------------------------------


@pytest.mark.parametrize("measure", ["G", "ndcg_rel", "Rndcg", "binG"])
def test_a_query_without_positive_gain_warns_nothing(measure):
    """q is judged 0 only (nothing to find: the empty policy gives 0), p finds its one relevant
    document first (1). trec_eval agrees; computing it must not let a RuntimeWarning (0 / 0) out."""
    qrels = {"p": {"a": 1, "b": 0}, "q": {"a": 0, "b": 0}}
    run = {"p": {"a": 0.9, "b": 0.8}, "q": {"a": 0.9, "b": 0.8, "c": 0.7}}
    assert oracle(qrels, run, measure) == {"p": 1.0, "q": 0.0}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = ours(qrels, run, measure)
    assert got.per_query() == {"p": 1.0, "q": 0.0}
    assert got.status.tolist() == ["ok", "empty"]


@pytest.mark.parametrize("measure", ["Rndcg", "ndcg_rel", "G"])
def test_no_query_with_a_positive_gain(measure):
    """Every judgment is 0, and the run retrieves more than one document past the (empty) ideal
    list: nothing to find anywhere, 0 under empty=zero (trec_eval: 0), 1 under empty=one."""
    qrels = {"q": {"a": 0, "b": 0}}
    run = {"q": {"a": 0.9, "b": 0.8, "c": 0.7}}
    assert oracle(qrels, run, measure) == {"q": 0.0}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ours(qrels, run, measure).per_query() == {"q": 0.0}
        assert ours(qrels, run, f"{measure}[empty=one]").per_query() == {"q": 1.0}


# -- Rndcg: which queries are empty -----------------------------------------------------------------


def test_rndcg_is_empty_where_nothing_reaches_rel():
    """rel=3: q's grades 1 and 2 have positive gain but none is relevant (R = 0): empty, so
    empty=one gives 1 and empty=skip leaves it out. p (grade 3 at rank 1, alone) is 1 either way."""
    qrels = {"p": {"a": 3}, "q": {"a": 2, "b": 1}}
    run = {"p": {"a": 0.9, "b": 0.8}, "q": {"a": 0.9, "b": 0.8}}
    one = ours(qrels, run, "Rndcg[rel=3,empty=one]")
    assert one.per_query() == {"p": 1.0, "q": 1.0}
    assert one.status.tolist() == ["ok", "empty"]
    skip = ours(qrels, run, "Rndcg[rel=3,empty=skip]")
    assert skip.per_query() == {"p": 1.0}
    assert skip.skipped_empty == 1


def test_rndcg_with_relevant_documents_but_no_positive_gain_is_nan_as_in_trec_eval():
    """gain={1:0}: q's relevant documents (grade 1, R = 2) all gain 0. trec_eval's Rndcg returns 0
    early only when R = 0; here it takes no point and divides its sum 0 by 0 points: NaN, not the
    empty policy's value, and the mean that sums it is NaN too. p's grade 2 keeps gain 2, retrieved
    first: 1. (A bug the triage found: the query was called empty and scored 0.)"""
    qrels = {"p": {"a": 2}, "q": {"a": 1, "b": 1}}
    run = {"p": {"a": 0.9, "b": 0.8}, "q": {"a": 0.9, "b": 0.8}}
    for measure in ("Rndcg[gain={1:0}]", "Rndcg[gain={1:0},empty=one]", "Rndcg[gain={1:0},empty=skip]"):
        got = ours(qrels, run, measure)
        assert got.per_query()["p"] == 1.0 and math.isnan(got.per_query()["q"]), measure
        assert got.status.tolist() == ["ok", "ok"] and got.skipped_empty == 0
        assert math.isnan(got.summary)


# trec_eval 9.0.8's stdout (built from the v9.0.8 tag) for the files of the next two tests.
_ZERO_QRELS = "q 0 a 0\nq 0 b 0\np 0 a 2\np 0 b 0\n"
_ZERO_RUN = "q Q0 a 1 0.9 r\nq Q0 b 2 0.8 r\nq Q0 c 3 0.7 r\np Q0 a 1 0.9 r\np Q0 b 2 0.8 r\n"
_ZERO_L0 = [
    "binG                  \tp\t1.0000",
    "G                     \tp\t1.0000",
    "ndcg_rel              \tp\t1.0000",
    "Rndcg                 \tp\t1.0000",
    "binG                  \tq\t1.0000",
    "G                     \tq\t0.0000",
    "ndcg_rel              \tq\t0.0000",
    "Rndcg                 \tq\t  -nan",
    "binG                  \tall\t1.0000",
    "G                     \tall\t0.5000",
    "ndcg_rel              \tall\t0.5000",
    "Rndcg                 \tall\t  -nan",
]


def _trec_eval_cli(args: list[str]) -> list[str]:
    result = CliRunner().invoke(cli, ["eval", "--preset", "trec_eval", "--format", "trec", *args])
    assert result.exit_code == 0, result.output
    return result.output.splitlines()


def test_rndcg_at_level_0_on_a_query_judged_only_0_is_trec_eval_s_nan(write):
    """``-l 0``: q's two documents judged 0 are relevant (R = 2) and gain 0. trec_eval's Rndcg is
    0 / 0 there (printed -nan, and so is the mean); G and ndcg_rel, which test their sum, give 0."""
    qrels, run = write("q", _ZERO_QRELS), write("r", _ZERO_RUN)
    out = _trec_eval_cli(["-q", "-l", "0", "-m", "Rndcg", "-m", "ndcg_rel", "-m", "G", "-m", "binG", str(qrels), str(run)])
    assert out == _ZERO_L0


def test_gains_whose_dcg_overflows_follow_ieee_as_trec_eval_and_warn_no_invalid_division(write):
    """Gain 1e308 for grade 1: q's three relevant documents retrieved first make DCG and ideal DCG
    overflow to inf at rank 3, so ndcg_rel's ratio there and Rndcg's points (the end of the ideal
    at 3, and the end of the five retrieved) are inf / inf = NaN. trec_eval: ndcg_rel's NaN sum
    fails its ``sum > 0`` test (0), Rndcg is -nan. p: grade 2 (gain 2) at rank 2 over the ideal 2:
    ndcg_rel 1 / log2 3 = 0.6309; Rndcg's one point (b = 1) reads DCG@1 = 0. The kernels may let
    NumPy's overflow warning out, but not an "invalid value" one for those divisions."""
    qrels = write("q", "q 0 a 1\nq 0 b 1\nq 0 c 1\nq 0 d 0\np 0 a 0\np 0 b 2\n")
    run = write("r", "q Q0 a 1 0.9 r\nq Q0 b 2 0.8 r\nq Q0 c 3 0.7 r\nq Q0 x 4 0.6 r\nq Q0 y 5 0.5 r\n"
                     "p Q0 a 1 0.9 r\np Q0 b 2 0.8 r\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = _trec_eval_cli(["-q", "-m", "ndcg_rel.1=1e308", "-m", "Rndcg.1=1e308", str(qrels), str(run)])
    assert out == [
        "ndcg_rel_1=1e308      \tp\t0.6309",
        "Rndcg_1=1e308         \tp\t0.0000",
        "ndcg_rel_1=1e308      \tq\t0.0000",
        "Rndcg_1=1e308         \tq\t  -nan",
        "ndcg_rel_1=1e308      \tall\t0.3155",
        "Rndcg_1=1e308         \tall\t  -nan",
    ]
    assert [str(w.message) for w in caught if "invalid value" in str(w.message)] == []
