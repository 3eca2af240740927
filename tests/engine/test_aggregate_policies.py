"""rankflavor.engine.aggregate: the empty, missing, run_only and singletons policies, the summaries, the
check that run and judgments share a query, and provenance, on inputs small enough to score by hand.

Three queries are judged: ``a`` (one relevant document, ranked second: NDCG@2 = 1/log2(3)), ``b``
(nothing relevant: the ``empty`` policy decides) and ``c`` (not in the run: ``missing`` decides);
``x`` is only in the run (``run_only``). Mutation testing (docs/mutation.md) found the policy
branches, the counts of skipped queries and the error texts unpinned; the expected values are
hand computations, and ir_measures (which scores a query missing from the run as 0, as trec_eval
``-c`` does) checks the trec_eval-like combination.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import ir_measures
import numpy as np
import pytest

import rankflavor as rf
from rankflavor.errors import EvaluationError

QRELS = {"a": {"d1": 1, "d2": 0}, "b": {"d1": 0}, "c": {"d3": 2}}
RUN = {"a": {"d2": 2.0, "d1": 1.0}, "b": {"d1": 1.0, "d5": 0.5}, "x": {"d1": 1.0}}
A = 1 / math.log2(3)  # NDCG@2 of a: the relevant document at rank 2, ideal at rank 1


def one(measure: str, qrels: dict = QRELS, run: dict = RUN) -> rf.results.MeasureResult:  # type: ignore[type-arg]
    return rf.evaluate(qrels, run, [measure])[0]


def rows(m: rf.results.MeasureResult) -> dict[str, tuple[float, str]]:
    return {str(q): (float(v), str(s)) for q, v, s in zip(m.queries, m.values, m.status, strict=True)}


@pytest.mark.parametrize(("empty", "b_row", "summary", "n"), [
    ("zero", (0.0, "empty"), (A + 0 + 0) / 3, 3),
    ("one", (1.0, "empty"), (A + 1 + 0) / 3, 3),
    ("nan", (math.nan, "empty"), (A + 0) / 2, 2),  # a NaN the policy wrote is left out of the mean
    ("skip", None, (A + 0) / 2, 2),
])
def test_empty_policy(empty: str, b_row: tuple[float, str] | None, summary: float, n: int) -> None:
    m = one(f"ndcg@2[empty={empty},missing=zero]")
    got = rows(m)
    assert got.pop("a") == (pytest.approx(A, rel=1e-15), "ok")
    assert got.pop("c") == (0.0, "missing")
    if b_row is None:
        assert "b" not in got and m.skipped_empty == 1
    else:
        b = got.pop("b")
        assert b[1] == b_row[1] and (b[0] == b_row[0] or (math.isnan(b[0]) and math.isnan(b_row[0])))
        assert m.skipped_empty == 0
    assert got == {}
    assert m.summary == pytest.approx(summary, rel=1e-15) and m.n_queries == n and m.skipped_missing == 0


def test_missing_policy() -> None:
    zero = one("ndcg@2[empty=zero,missing=zero]")
    assert rows(zero)["c"] == (0.0, "missing") and zero.skipped_missing == 0 and zero.n_queries == 3
    skip = one("ndcg@2[empty=zero,missing=skip]")
    assert set(rows(skip)) == {"a", "b"} and skip.skipped_missing == 1 and skip.n_queries == 2
    assert skip.summary == pytest.approx(A / 2, rel=1e-15)
    with pytest.raises(EvaluationError, match=re.escape(
            "1 qrels query(ies) are absent from the run (c) and ndcg@2 says missing=error; choose missing=zero "
            "(trec_eval -c) or missing=skip")):
        one("ndcg@2[missing=error]")


def test_missing_zero_is_trec_eval_c_as_ir_measures_computes_it() -> None:
    qrels = [ir_measures.Qrel(q, d, g) for q, docs in QRELS.items() for d, g in docs.items()]
    run = [ir_measures.ScoredDoc(q, d, s) for q, docs in RUN.items() for d, s in docs.items()]
    peer = ir_measures.calc_aggregate([ir_measures.nDCG @ 2], qrels, run)[ir_measures.nDCG @ 2]
    assert one("ndcg@2[empty=zero,missing=zero,run_only=skip]").summary == pytest.approx(peer, rel=1e-12)


def test_run_only_policy() -> None:
    skip = one("ndcg@2[empty=one,missing=zero,run_only=skip]")
    assert "x" not in rows(skip)
    include = one("ndcg@2[empty=one,missing=zero,run_only=include]")  # judged against nothing: empty
    assert rows(include)["x"] == (1.0, "empty")
    assert include.summary == pytest.approx((A + 1 + 0 + 1) / 4, rel=1e-15) and include.n_queries == 4
    with pytest.raises(EvaluationError, match=re.escape(
            "1 run query(ies) have no judgments (x) and ndcg@2 says run_only=error; choose run_only=skip "
            "(trec_eval) or run_only=include (trectools)")):
        one("ndcg@2[run_only=error]")


def test_singletons_policy() -> None:
    run = {"a": {"d2": 2.0, "d1": 1.0}, "b": {"d1": 1.0}, "x": {"d1": 1.0}}  # b and x rank one document
    assert rows(one("ndcg@2[empty=zero,missing=zero,singletons=keep]", run=run))["b"] == (0.0, "empty")
    with pytest.raises(EvaluationError, match=re.escape(
            "1 query(ies) rank a single document (b) and ndcg@2 says singletons=error; choose singletons=keep "
            "(scikit-learn refuses one-document lists)")):
        one("ndcg@2[singletons=error]", run=run)
    # a run-only query counts once it is scored
    with pytest.raises(EvaluationError, match=r"^2 query\(ies\) rank a single document \(b, x\)"):
        one("ndcg@2[singletons=error,run_only=include]", run=run)
    assert one("ndcg@2[singletons=error]").n_queries == 3  # two documents each: nothing to refuse
    # a judged query absent from the run has the highest query code: the per-query counts cover it
    late = {**QRELS, "zz": {"d1": 1}}
    assert one("ndcg@2[singletons=error,missing=zero]", late).n_queries == 4


def test_policy_errors_name_five_queries_then_dots() -> None:
    qrels = {f"q{i}": {"d": 0} for i in range(7)}
    run = {f"q{i}": {"d": 1.0, "e": 0.5} for i in range(7)}
    with pytest.raises(EvaluationError, match=re.escape("7 query(ies) have nothing relevant (q0, q1, q2, q3, q4...) "
                                                        "and ndcg@2 says empty=error; choose empty=zero|one|nan|skip")):
        one("ndcg@2[empty=error]", qrels, run)
    five = {f"q{i}": {"d": 0} for i in range(5)}
    with pytest.raises(EvaluationError, match=re.escape("5 query(ies) have nothing relevant (q0, q1, q2, q3, q4) and")):
        one("ndcg@2[empty=error]", five, run)
    six = {f"q{i}": {"d": 0} for i in range(6)}
    with pytest.raises(EvaluationError, match=re.escape("6 query(ies) have nothing relevant (q0, q1, q2, q3, q4...) and")):
        one("ndcg@2[empty=error]", six, run)


def test_text_valued_missing_query_is_an_empty_string() -> None:
    m = one("relstring[missing=zero]")
    assert [str(v) for v in m.values] == ["01", "0-", ""] and m.status.tolist() == ["ok", "ok", "missing"]
    assert math.isnan(m.summary)  # per-query text has no summary


def test_counts_are_summed() -> None:
    m = one("num_rel[missing=zero]")  # the missing query's row is the policy's 0
    assert m.values.tolist() == [1.0, 0.0, 0.0] and m.summary == 1.0 and m.n_queries == 3
    m = one("num_ret[missing=skip,run_only=include]")  # 2 + 2 + 1 documents: a sum, not a mean
    assert m.values.tolist() == [2.0, 2.0, 1.0] and m.summary == 5.0


def test_no_common_query_names_some_of_each() -> None:
    qrels = {f"q{i}": {"d": 1} for i in range(4)}
    with pytest.raises(EvaluationError, match=re.escape(
            "no query is both in the run and in the qrels, so nothing can be evaluated (run: 2 query(ies), e.g. "
            "'r0', 'r1'; qrels: 4, e.g. 'q0', 'q1', 'q2', ...); were the right files given, and do they write "
            "query ids alike?")):
        rf.evaluate(qrels, {"r0": {"d": 1.0}, "r1": {"d": 0.5}}, ["ndcg@2"])


def test_an_empty_run_table_names_no_query() -> None:
    from rankflavor.io.columns import string_array
    from rankflavor.io.tables import Run

    empty = Run(string_array([]), string_array([]), np.array([]), "empty run")
    with pytest.raises(EvaluationError, match=re.escape("(run: 0 query(ies), e.g. none; qrels: 1, e.g. 'a')")):
        rf.evaluate({"a": {"d": 1}}, empty, ["ndcg@2"])


def test_summaries_that_read_more_than_the_values() -> None:
    """GMAP puts a query missing from the run at trec_eval's floor 1e-5 (meas_avg.c, -c); num_rel
    under total=qrels_positive counts every positive qrels line, missing queries included."""
    gmap = one("GMAP[missing=zero]")  # AP: a 1/2 (relevant at rank 2), b 0 (empty=zero), c missing
    assert gmap.summary == pytest.approx(math.exp((math.log(0.5) + 2 * math.log(1e-5)) / 3), rel=1e-12)
    assert one("GMAP[missing=skip]").summary == pytest.approx(math.exp((math.log(0.5) + math.log(1e-5)) / 2), rel=1e-12)
    assert one("num_rel[total=qrels_positive,missing=zero]").summary == 2.0  # a:d1 and c:d3
    assert str(gmap.measure).startswith("GMAP[") and gmap.flavor == str(gmap.measure)


def test_provenance_names_the_files(tmp_path: Path) -> None:
    qrels, run = tmp_path / "q.txt", tmp_path / "r.txt"
    qrels.write_text("a 0 d1 1\n")
    run.write_text("a Q0 d1 1 2.0 mysys\n")
    got = rf.evaluate(str(qrels), str(run), ["ndcg@2"]).provenance
    assert got == {"rankflavor": rf.__version__, "qrels": {"source": str(qrels), "bytes": 9},
                   "run": {"source": str(run), "bytes": 20, "tag": "mysys"}}
    assert rf.evaluate(QRELS, RUN, ["ndcg@2"]).provenance["qrels"] == {"source": "qrels dict"}


def test_statuses_are_fresh_each_time() -> None:
    """The all-ok statuses are cached read-only; each result gets its own writable copy."""
    first = one("ndcg@2[empty=zero,missing=zero]")
    second = one("ndcg@2[empty=zero,missing=zero]")
    assert first.status.tolist() == ["ok", "empty", "missing"] == second.status.tolist()
    assert np.shares_memory(first.status, second.status) is False
