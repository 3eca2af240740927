"""The evaluation plan (``rankflavor.engine.plan.Evaluation``): one alignment per duplicates policy,
one ranker per alignment, the path each kernel's needs allow, results equal to kernels run on
the full exact ranking; work shared across measures, cutoffs and orderings; run duplicates
refused where trec_eval refuses them; evaluations with no measure; memory freed without the
cycle collector."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

import rankflavor
from rankflavor.align import align
from rankflavor.cli.main import cli
from rankflavor.engine.plan import Evaluation, check_duplicates
from rankflavor.errors import EvaluationError, InputError
from rankflavor.io.inputs import as_qrels, as_run
from rankflavor.io.trec import read_qrels, read_run
from rankflavor.metrics.measure import parse_measure
from rankflavor.order import Ordering, Ranker

from ..support.order_cases import full_rank, seeded_case


@pytest.mark.parametrize("seed", range(6))
def test_evaluate_values_equal_full_kernels(seed: int) -> None:
    """evaluate() (judged-rows fast path) against kernels run on the full exact ranking."""
    from rankflavor.presets import resolve_measures

    qrels, run = seeded_case(100 + seed)
    names = ["ndcg_cut.5", "ndcg", "map", "P.5", "recall.10", "recip_rank", "Rprec", "bpref", "success.5",
             "num_rel_ret", "gm_map"]
    for knobs in ({}, {"unjudged": "condensed"}, {"ties": "pessimistic", "depth": "10"}):
        got = rankflavor.evaluate(qrels, run, names, preset="trec_eval", **knobs)
        measures, _ = resolve_measures(names, "trec_eval", knobs)
        aligned = align(qrels, run)
        code = {name: i for i, name in enumerate(aligned.query_ids)}
        for m, res in zip(measures, got, strict=True):
            values, _ = m.spec.kernel(full_rank(aligned, m.flavor, exact=True), m)
            expected = values[[code[q] for q in res.queries]]
            np.testing.assert_allclose(res.values.astype(float), expected, rtol=0, atol=1e-15, err_msg=f"{m} {knobs}")


def test_ndcg_flavors_sharing_ideal_lists_equal_each_alone() -> None:
    """NDCG measures of one alignment share each query's sorted ideal gains (cached by the
    knobs the gains depend on); every cutoff, discount, ideal cut and gain scored together
    equals the same measure scored on its own."""
    rng = np.random.default_rng(11)
    qrels = {f"q{i}": {f"d{j}": int(rng.integers(-1, 4)) for j in rng.choice(60, 25, replace=False)} for i in range(40)}
    run = {f"q{i}": {f"d{j}": float(rng.integers(0, 6)) for j in rng.choice(60, 30, replace=False)} for i in range(38)}
    measures = [
        "ndcg", "ndcg@5", "ndcg@10", "ndcg@10[discount=jk(3)]", "ndcg@10[discount=reciprocal]",
        "ndcg@10[ideal_cut=none]", "ndcg@10[ideal_cut=hits]", "ndcg@10[gain=exp2]", "ndcg@5[gain=exp2]",
        "ndcg@10[gain={1:3,2:7}]", "ndcg@10[negatives=zero]", "ndcg@10[min_grade=2]",
    ]  # fmt: skip
    together = rankflavor.evaluate(qrels, run, measures)
    for i, name in enumerate(measures):
        alone = rankflavor.evaluate(qrels, run, [name])
        assert together[i].per_query() == alone[0].per_query(), name


@pytest.mark.parametrize("names", [["ndcg_cut.10"], ["ndcg_cut.10", "map", "P.10", "recip_rank", "bpref"]])
def test_evaluate_frees_its_alignment_without_the_cycle_collector(monkeypatch: pytest.MonkeyPatch, names: list[str]) -> None:
    """A judged-only ranking once cached itself as its own ``judged_rows``: the cycle kept the
    alignment (every run row's arrays) alive after ``evaluate`` returned, until the next full
    collection. Reference counting alone must free it."""
    import importlib
    import weakref

    ev = importlib.import_module("rankflavor.engine.evaluate")  # the package's ``evaluate`` is the function
    plan = importlib.import_module("rankflavor.engine.plan")

    kept: list[weakref.ref[Any]] = []

    def recording_align(*args: Any, **kwargs: Any) -> Any:
        aligned = align(*args, **kwargs)
        kept.append(weakref.ref(aligned))
        return aligned

    monkeypatch.setattr(plan, "align", recording_align)
    qrels = {f"q{i}": {f"d{j}": j % 3 for j in range(0, 20, 2)} for i in range(5)}
    run = {f"q{i}": {f"d{j}": float(j % 7) for j in range(20)} for i in range(5)}
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        results = ev.evaluate(qrels, run, names, preset="trec_eval")
        assert kept and results[0].n_queries == 5
        del results
        assert all(ref() is None for ref in kept)
    finally:
        if was_enabled:
            gc.enable()


def test_work_on_the_judgments_is_shared_across_cutoffs_and_orderings() -> None:
    """One set of sorted ideal lists per gain rule, one IDCG per cutoff: measures of other
    cutoffs and other orderings (tie rule, depth) reuse them through the ranker's shared work."""
    qrels, run = seeded_case(7)
    plan = Evaluation(qrels, run)
    plan.results([parse_measure("ndcg@5"), parse_measure("ndcg@10")])
    shared = plan.ranker("error").shared
    assert len(shared) == 3  # the ideal lists, the IDCG at 5 and at 10
    res = plan.results([parse_measure("ndcg@10[ties=averaged]"), parse_measure("ndcg@5[depth=7]")])
    assert len(shared) == 3
    alone = rankflavor.evaluate(qrels, run, ["ndcg@10[ties=averaged]", "ndcg@5[depth=7]"])
    assert res.per_query() == alone.per_query()
    plan.results([parse_measure("ndcg@5[gain=exp2]")])
    assert len(shared) == 5  # another gain rule: its own lists and IDCG


def test_one_ordering_at_a_time_keeps_the_values_and_bounds_the_rankings() -> None:
    qrels, run = seeded_case(8)
    a, b = parse_measure("ndcg@5[ties=averaged]"), parse_measure("ndcg@5[ties=input_order]")
    assert Evaluation.key(a) != Evaluation.key(b)
    assert Evaluation.key(a) == Evaluation.key(parse_measure("P@3[ties=averaged]"))
    kept = Evaluation(qrels, run)
    bounded = Evaluation(qrels, run, one_ordering=True)
    first = kept.ranked(a)
    bounded_first = bounded.ranked(a)
    kept.ranked(b)
    bounded.ranked(b)
    assert kept.ranked(a) is first  # every ordering's rankings kept
    again = bounded.ranked(a)
    assert again is not bounded_first  # made again after another ordering
    assert again.row is not None and bounded_first.row is not None
    np.testing.assert_array_equal(again.row, bounded_first.row)
    for m in (a, b):
        assert kept.evaluate(m).per_query() == bounded.evaluate(m).per_query()


def test_a_refused_ordering_fails_alone_and_again() -> None:
    """A policy set to error refuses its measures; the plan raises the same error for every
    measure of that ordering, and the other measures evaluate."""
    qrels = as_qrels({"q1": {"a": 1.5, "b": 1}})
    run = as_run({"q1": {"a": 1.0, "b": 0.5}})
    plan = Evaluation(qrels, run)
    refused = parse_measure("ndcg@2[fractional=error]")
    with pytest.raises(InputError, match="fractional=error") as first:
        plan.evaluate(refused)
    with pytest.raises(InputError) as second:
        plan.evaluate(parse_measure("P@2[fractional=error]"))
    assert second.value is first.value
    assert plan.evaluate(parse_measure("ndcg@2")).per_query() == {"q1": 1.0}
    plan.close()


#: q1 repeats a at rank 5 (judged query); q3 (no judgments) repeats z.
DUP_QRELS = "q1 0 a 1\nq1 0 b 2\nq1 0 c 0\nq1 0 d 1\n"
DUP_RUN = ("q1 Q0 a 1 5.0 t\nq1 Q0 b 2 4.0 t\nq1 Q0 c 3 3.0 t\nq1 Q0 e 4 2.0 t\nq1 Q0 a 5 1.0 t\n"
           "q1 Q0 d 6 0.5 t\nq3 Q0 z 1 1 t\nq3 Q0 z 2 0.5 t\n")


def test_the_ranker_reports_kept_duplicates_and_the_plan_refuses_them(tmp_path: Path) -> None:
    """Ordering never refuses: the full ranking reports the rows of scored queries the depth cut
    keeps, and the plan refuses a pair among them (trec_eval's -M, then its duplicate check)."""
    (tmp_path / "q").write_text(DUP_QRELS)
    (tmp_path / "r").write_text(DUP_RUN)
    qrels, run = read_qrels(tmp_path / "q"), read_run(tmp_path / "r")
    aligned = align(qrels, run)
    assert aligned.counts.run_duplicates_kept == 2
    ranker = Ranker(aligned)
    full = ranker.rank(Ordering())
    assert full.kept_rows is not None
    assert set(aligned.query_ids[aligned.run_q[full.kept_rows]]) == {"q1"}  # q3 is not scored
    with pytest.raises(InputError, match="duplicate"):
        check_duplicates(full)
    cut = ranker.rank(Ordering(depth=4))
    assert cut.kept_rows is not None and len(cut.kept_rows) == 4
    check_duplicates(cut)  # the repeat lies below the cut
    with_run_only = ranker.rank(Ordering(run_only="include", depth=4))
    with pytest.raises(InputError, match="duplicate"):  # q3's two z rows are scored now
        check_duplicates(with_run_only)
    assert ranker.rank(Ordering(), duplicates=False).kept_rows is None
    num_rel = parse_measure("num_rel")
    assert ranker.ranked(Ordering.of(num_rel.flavor), num_rel.spec.needs(num_rel)).kept_rows is None  # reads no run row
    plan = Evaluation(qrels, run)
    with pytest.raises(InputError, match="duplicate"):
        plan.evaluate(parse_measure("ndcg@10"))
    assert plan.evaluate(parse_measure("ndcg@10[depth=4]")).n_queries == 1
    assert plan.evaluate(num_rel).summary == 3


def test_measures_that_read_no_alignment_evaluate_alone(tmp_path: Path) -> None:
    """``ir_measures:NumQ`` names no measure the plan evaluates (an extra): the tables are still
    aligned once, for the counts and the check that run and judgments share a query (it died
    with StopIteration)."""
    (tmp_path / "q").write_text("q1 0 a 1\n")
    (tmp_path / "r").write_text("q1 Q0 a 1 1.0 t\nq2 Q0 b 1 1.0 t\n")
    res = rankflavor.evaluate(str(tmp_path / "q"), str(tmp_path / "r"), "ir_measures:NumQ")
    assert res.measures == [] and res.extras == ("num_q",)
    assert (res.counts.queries_evaluated, res.counts.queries_only_in_run) == (1, 1)
    plan = Evaluation(read_qrels(tmp_path / "q"), read_run(tmp_path / "r"))
    assert plan.results([], ("num_q",)).counts == res.counts
    result = CliRunner().invoke(cli, ["eval", str(tmp_path / "q"), str(tmp_path / "r"), "-m", "ir_measures:NumQ"])
    assert result.exit_code == 0 and result.exception is None, result.output
    (tmp_path / "other").write_text("q9 0 a 1\n")
    with pytest.raises(EvaluationError, match="no query is both"):
        Evaluation(read_qrels(tmp_path / "other"), read_run(tmp_path / "r")).results([])
    assert Evaluation(read_qrels(tmp_path / "other"), read_run(tmp_path / "r"), whole=False).results([]).measures == []


def test_measures_differing_in_no_ordering_knob_share_one_ranking() -> None:
    """The Ordering is the cache key: gains, discounts and cutoffs change no ranking; a tie
    rule does. Nothing is left on the alignment itself (its ``memo``, while it has one)."""
    qrels, run = seeded_case(9)
    plan = Evaluation(qrels, run)
    first = plan.ranked(parse_measure("ndcg@10"))
    assert plan.ranked(parse_measure("ndcg@5[gain=exp2,discount=jk(3)]")) is first
    assert plan.ranked(parse_measure("ndcg@10[ties=docno_asc]")) is not first
    plan.results([parse_measure(t) for t in ("ndcg@10", "AP", "P@5[ties=averaged]", "ndcg@3[ties=averaged]")])
    assert getattr(plan.aligned("error"), "memo", {}) == {}
