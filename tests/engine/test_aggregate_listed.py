"""rankflavor.engine.aggregate: queries the judgments name with nothing in them (``{}`` in a dict), the
check that run and judgments share a query, and the policy error's list of names.

Mutation testing (docs/mutation.md) found :func:`judged_queries`, :func:`scores_something` and
the defaults of :func:`require_common_queries` unpinned. The expected values are the policies'
definitions worked by hand: under ``missing=zero|error`` a listed query is one of the judgments'
with nothing relevant (ir_measures fills every qrels key, ranx scores a key of no judgment 0);
under ``missing=skip`` (trec_eval, pytrec_eval) it is none of theirs, so in the run it is a
run-only query and otherwise nothing. ``a`` has one relevant document ranked first (NDCG@2 = 1).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

import rankflavor as rf
from rankflavor.align.values import Counts
from rankflavor.engine.aggregate import policy_error, require_common_queries
from rankflavor.errors import EvaluationError
from rankflavor.flavor.flavor import Flavor
from rankflavor.metrics.measure import parse_measure

QRELS = {"a": {"d1": 1, "d2": 0}, "e": {}}
RUN = {"a": {"d1": 1.0, "d2": 0.5}, "e": {"d1": 1.0, "d3": 0.5}}
RUN_WITHOUT_E = {"a": {"d1": 1.0, "d2": 0.5}}


def table(m: rf.results.MeasureResult) -> dict[str, tuple[float, str]]:
    return {str(q): (float(v), str(s)) for q, v, s in zip(m.queries, m.values, m.status, strict=True)}


def one(measure: str, qrels: dict[str, Any] = QRELS, run: dict[str, Any] = RUN) -> rf.results.MeasureResult:
    return rf.evaluate(qrels, run, [measure])[0]


@pytest.mark.parametrize("empty", ["zero", "one"])
def test_listed_query_in_the_run_is_judged_against_nothing_under_missing_zero(empty: str) -> None:
    value = {"zero": 0.0, "one": 1.0}[empty]
    m = one(f"ndcg@2[missing=zero,empty={empty},run_only=skip]")
    assert table(m) == {"a": (1.0, "ok"), "e": (value, "empty")}
    assert m.summary == pytest.approx((1.0 + value) / 2, rel=1e-15) and m.n_queries == 2


def test_listed_query_missing_from_the_run_is_a_missing_query_under_missing_zero() -> None:
    m = one("ndcg@2[missing=zero]", run=RUN_WITHOUT_E)
    assert table(m) == {"a": (1.0, "ok"), "e": (0.0, "missing")} and m.summary == 0.5
    with pytest.raises(EvaluationError, match=re.escape("1 qrels query(ies) are absent from the run (e)")):
        one("ndcg@2[missing=error]", run=RUN_WITHOUT_E)


def test_listed_query_is_none_of_the_judgments_under_missing_skip() -> None:
    # in the run: a run-only query, which run_only=skip leaves out and run_only=include scores
    skip = one("ndcg@2[missing=skip,run_only=skip]")
    assert table(skip) == {"a": (1.0, "ok")} and skip.skipped_missing == 0 and skip.n_queries == 1
    include = one("ndcg@2[missing=skip,run_only=include,empty=one]")
    assert table(include) == {"a": (1.0, "ok"), "e": (1.0, "empty")}
    with pytest.raises(EvaluationError, match=re.escape("1 run query(ies) have no judgments (e)")):
        one("ndcg@2[missing=skip,run_only=error]")
    # not in the run: nothing, not even a skipped missing query
    absent = one("ndcg@2[missing=skip]", run=RUN_WITHOUT_E)
    assert table(absent) == {"a": (1.0, "ok")} and absent.skipped_missing == 0


QRELS_ONLY_LISTED = {"q": {"d1": 1}, "e": {}}  # q is not in the run: only e can be common
RUN_ONLY_E = {"e": {"d1": 1.0, "d2": 0.5}}


def test_a_run_holding_only_a_listed_query_scores_it_where_a_policy_says_so() -> None:
    # missing=zero: e is one of the judgments' queries, the run holds it: something to score
    m = one("ndcg@2[missing=zero,run_only=skip]", QRELS_ONLY_LISTED, RUN_ONLY_E)
    assert table(m) == {"e": (0.0, "empty"), "q": (0.0, "missing")}
    # missing=skip, run_only=include: e is a run-only query, scored against nothing
    m = one("ndcg@2[missing=skip,run_only=include,empty=one]", QRELS_ONLY_LISTED, RUN_ONLY_E)
    assert table(m) == {"e": (1.0, "empty")} and m.skipped_missing == 1
    # missing=skip, run_only=skip: nothing but the filled missing query is left, so no common query
    with pytest.raises(EvaluationError, match=re.escape(
            "no query is both in the run and in the qrels, so nothing can be evaluated (run: 1 query(ies), e.g. "
            "'e'; qrels: 1, e.g. 'q' (and 1 named with no judgment)); were the right files given")):
        one("ndcg@2[missing=skip,run_only=skip]", QRELS_ONLY_LISTED, RUN_ONLY_E)


def test_run_only_include_scores_a_run_that_shares_no_query() -> None:
    qrels, run = {"q": {"d1": 1}}, {"r": {"d1": 1.0, "d2": 0.5}}
    m = one("ndcg@2[run_only=include,empty=one,missing=skip]", qrels, run)
    assert table(m) == {"r": (1.0, "empty")} and m.skipped_missing == 1
    with pytest.raises(EvaluationError, match=r"^no query is both in the run and in the qrels, .*'q'\); were"):
        one("ndcg@2[run_only=skip]", qrels, run)  # and no "(... named with no judgment)": none is


def _counts(**counts: int) -> Counts:
    fields = dict.fromkeys(Counts.__dataclass_fields__, 0)
    return Counts(**{**fields, **counts})


def test_require_common_queries_checks_the_default_flavor_when_given_none() -> None:
    # the default flavor (run_only=skip) scores nothing here, so it refuses: a run-only query alone
    only_run = _counts(queries_in_run=1, queries_in_qrels=1, queries_only_in_run=1, queries_only_in_qrels=1)
    with pytest.raises(EvaluationError, match=r"^no query is both"):
        require_common_queries(only_run, ["r"], ["q"])
    with pytest.raises(EvaluationError, match=r"^no query is both"):
        require_common_queries(only_run, ["r"], ["q"], None)
    require_common_queries(only_run, ["r"], ["q"], [Flavor(run_only="include")])  # that one scores r
    with pytest.raises(EvaluationError, match=r"^no query is both"):  # every flavor must score something
        require_common_queries(only_run, ["r"], ["q"], [Flavor(run_only="include"), Flavor()])
    # the default flavor (missing=zero) scores a listed query the run holds
    listed = _counts(queries_in_run=1, queries_in_qrels=1, queries_only_in_qrels=1, queries_listed_unjudged=1,
                     queries_listed_unjudged_in_run=1)
    require_common_queries(listed, ["e"], ["q"])
    with pytest.raises(EvaluationError, match=re.escape("qrels: 1, e.g. 'q' (and 1 named with no judgment))")):
        require_common_queries(listed, ["e"], ["q"], [Flavor(missing="skip")])


def test_policy_error_shows_five_names_of_any_list() -> None:
    """merge and torch pass every name they have: five are shown, then dots."""
    measure = parse_measure("ndcg@2[empty=error]")
    err = policy_error([f"q{i}" for i in range(7)], 7, measure, "empty")
    assert str(err) == (f"7 query(ies) have nothing relevant (q0, q1, q2, q3, q4...) and {measure.name} says "
                        "empty=error; choose empty=zero|one|nan|skip")
