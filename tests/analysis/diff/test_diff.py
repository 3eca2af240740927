"""diff: the gap between two flavors of one metric, attributed knob by knob, per query and in the mean.

Oracles: the two ends are compared with rankflavor.evaluate() of A and B called separately
(means and per-query values, bit for bit); the attribution must add up: a query's step deltas to
its total B - A, the mean's step deltas to B's mean - A's mean, and (scale "mean") a step's
per-query shares to that step's change of the mean, also when policies change which queries are
in the mean.
"""

from __future__ import annotations

import csv
import io
import json
import math

import numpy as np
import pytest
from click.testing import CliRunner

import rankflavor
from rankflavor.analysis.diff.api import path_measures, plan
from rankflavor.cli.main import cli
from rankflavor.errors import UsageError
from rankflavor.flavor.flavor import Flavor
from rankflavor.metrics.measure import Measure, parse_measure

from ...conftest import shared_path
from ..spread.test_spread import random_case

#: Float64 rounding of a telescoping sum of a dozen terms in [-1, 1] stays far below this.
SUM_TOL = 1e-12

CHOICES: dict[str, list[str]] = {
    "gain": ["linear", "exp2", "binary"],
    "discount": ["log2", "jk(2)", "reciprocal"],
    "ideal": ["global", "local", "recall@6", "max"],
    "ideal_cut": ["k", "hits", "none"],
    "unjudged": ["zero", "condensed"],
    "negatives": ["unjudged", "zero"],
    "ties": ["docno_desc", "input_order", "averaged", "pessimistic"],
    "precision": ["float64", "float32"],
    "depth": ["none", "6"],
    "empty": ["zero", "one", "nan", "skip"],
    "missing": ["zero", "skip"],
}


def _random_measure(rng: np.random.Generator, metric: str = "ndcg") -> Measure:
    knobs = {k: str(rng.choice(v)) for k, v in CHOICES.items() if rng.random() < 0.5}
    if knobs.get("ideal") == "max" or rng.random() < 0.2:
        knobs["max_grade"] = str(rng.choice(["3", "4"]))
    k = [None, 3, 5, 10][int(rng.integers(4))]
    return Measure(metric, k, Flavor(**knobs))


def _check_adds_up(qrels, run, a: Measure, b: Measure) -> rankflavor.analysis.diff.api.Diff:  # type: ignore[no-untyped-def]
    d = rankflavor.diff(qrels, run, a, b)
    ra, rb = rankflavor.evaluate(qrels, run, [a])[0], rankflavor.evaluate(qrels, run, [b])[0]
    # The ends are evaluate()'s own numbers.
    assert d.means[0] == ra.mean or (math.isnan(d.means[0]) and math.isnan(ra.mean))
    assert d.means[-1] == rb.mean or (math.isnan(d.means[-1]) and math.isnan(rb.mean))
    assert d.steps[-1].measure == b if d.steps else a == b
    if math.isnan(d.total):
        return d
    assert d.total == rb.mean - ra.mean
    # The mean's steps add up to the gap.
    assert abs(math.fsum(d.mean_deltas) - d.total) <= SUM_TOL
    # Each query: steps add up to its total, which is B - A with a query outside a mean counted as 0.
    va, vb = ra.per_query(), rb.per_query()
    deltas, totals = d.deltas("value"), d.totals("value")
    for i, q in enumerate(d.queries):
        x = va.get(q, float("nan"))
        y = vb.get(q, float("nan"))
        expected = (0.0 if math.isnan(y) else y) - (0.0 if math.isnan(x) else x)
        assert totals[i] == expected, q
        assert abs(math.fsum(deltas[:, i]) - totals[i]) <= SUM_TOL, q
    # Queries in neither mean at any step are not in the table; every query in some mean is.
    assert set(d.queries) == {q for res in (ra, rb) for q, v in res.per_query().items() if not math.isnan(v)} | {
        q for j in range(len(d.values)) for q, v in zip(d.queries, d.values[j], strict=True) if not math.isnan(v)}
    # Scale "mean": per-query shares split each step of the mean exactly, whatever enters or leaves.
    shares = d.deltas("mean")
    for j in range(len(d.steps)):
        assert abs(math.fsum(shares[j]) - d.mean_deltas[j]) <= SUM_TOL, d.steps[j].name
    assert abs(math.fsum(d.totals("mean")) - d.total) <= SUM_TOL
    return d


@pytest.mark.parametrize("seed", range(8))
def test_attribution_adds_up_on_random_data(seed: int) -> None:
    rng = np.random.default_rng(1000 + seed)
    qrels, run = random_case(seed, negatives=seed % 2 == 0, n_queries=10)
    membership_changes = 0
    for _ in range(25):
        a, b = _random_measure(rng), _random_measure(rng)
        d = _check_adds_up(qrels, run, a, b)
        membership_changes += len(d.entering_leaving())
    assert membership_changes > 0  # the random policies did move queries in and out of the mean


def test_attribution_adds_up_for_binary_metrics_and_counts() -> None:
    rng = np.random.default_rng(7)
    qrels, run = random_case(3, n_queries=10)
    for metric in ("AP", "P", "RR", "recall"):
        for _ in range(5):
            a, b = _random_measure(rng, "ndcg"), _random_measure(rng, "ndcg")
            a = Measure(metric, a.k, a.flavor.with_knobs(rel=str(rng.choice(["1", "2"]))))
            b = Measure(metric, b.k, b.flavor)
            _check_adds_up(qrels, run, a, b)


def test_missing_skip_to_zero_changes_the_mean_through_its_denominator() -> None:
    qrels, run = random_case(0)  # q2 is in the qrels, not in the run
    d = _check_adds_up(qrels, run, parse_measure("ndcg@5[missing=skip]"), parse_measure("ndcg@5[missing=zero]"))
    (step,) = d.steps
    assert step.name == "missing" and d.entering_leaving() == [("missing", "q2", "enters")]
    i = d.queries.index("q2")
    assert d.deltas("value")[0, i] == 0.0  # its own value is 0 either way ...
    assert d.mean_deltas[0] < 0  # ... but the mean now divides by one more query
    assert d.n_in_mean[1] == d.n_in_mean[0] + 1


def test_path_plan() -> None:
    a = parse_measure("ndcg@10")
    b = parse_measure("ndcg@5[ideal=max,max_grade=3,gain=exp2]")
    assert plan(a, b) == [("k", ("k",)), ("gain", ("gain",)), ("ideal+max_grade", ("ideal", "max_grade"))]
    assert [s for s, _ in plan(a, b, order=["gain", "ideal"])] == ["gain", "ideal+max_grade", "k"]
    steps = path_measures(a, b)
    assert steps[-1].measure == b and steps[0].measure == Measure("ndcg", 5, a.flavor)
    # Leaving error first, entering error last: no intermediate flavor refuses what neither end refuses.
    c = parse_measure("ndcg@5[empty=error,ideal=global]")
    e = parse_measure("ndcg@5[empty=zero,ideal=local]")
    assert [s for s, _ in plan(c, e)] == ["empty", "ideal"]
    assert [s for s, _ in plan(e, c)] == ["ideal", "empty"]
    with pytest.raises(UsageError, match="unknown knob"):
        plan(a, b, order=["gian"])


def test_empty_error_end_is_reached_without_failing_midway() -> None:
    qrels, run = random_case(0)  # q1 has nothing relevant
    a = parse_measure("ndcg@5[empty=error,ideal=local]")
    b = parse_measure("ndcg@5[empty=zero,ideal=global]")
    with pytest.raises(rankflavor.EvaluationError):
        rankflavor.evaluate(qrels, run, [a])
    # A itself refuses the data, so the diff does too, with evaluate()'s message.
    with pytest.raises(rankflavor.EvaluationError, match="empty=error"):
        rankflavor.diff(qrels, run, a, b)


def test_trec_eval_names_and_canonical_strings_on_real_data() -> None:
    qrels = str(shared_path("qrels", "qrels.dl19-passage.txt"))
    run = str(shared_path("runs", "rankllm.dl19.splade-p-p-ensemble-distil.top100.run"))
    d = _check_adds_up(qrels, run, *_m("trec_eval:ndcg_cut.10", "ndcg@10"))
    # trec_eval: float32 scores, missing=skip, grades truncated (whole grades here: no change)
    assert [s.name for s in d.steps] == ["precision", "missing", "fractional"]
    d = _check_adds_up(qrels, run, *_m("trec_eval:ndcg", "ndcg@10[gain=exp2,ideal=local,ties=averaged]"))
    assert [s.name for s in d.steps] == ["k", "gain", "ideal", "ideal_cut", "ties", "precision", "missing", "fractional"]
    # DL19 judges every query, so no query enters or leaves the mean.
    assert not d.entering_leaving() and len(set(d.n_in_mean)) == 1


def _m(*texts: str) -> list[Measure]:
    from rankflavor.analysis.spread.api import one_measure

    return [one_measure(t) for t in texts]


def test_sklearn_vs_lightgbm_presets() -> None:
    from rankflavor.presets import PRESETS

    if "sklearn" not in PRESETS or "lightgbm" not in PRESETS:
        pytest.skip("sklearn/lightgbm presets not registered yet (presets/ml.py)")
    qrels = str(shared_path("qrels", "qrels.dl19-passage.txt"))
    run = str(shared_path("runs", "rankllm.dl19.d-bert-kd-tasb.top100.run"))
    a, b = _m("sklearn:ndcg@10", "lightgbm:ndcg@10")
    d = _check_adds_up(qrels, run, a, b)
    changed = {knob for s in d.steps for knob in s.changes}
    assert {"gain", "ties", "empty"} <= changed  # linear vs 2^g-1, averaged vs input order, IDCG=0 -> 0 vs 1
    gain_step = next(j for j, s in enumerate(d.steps) if "gain" in s.changes)
    assert d.mean_deltas[gain_step] != 0.0
    qrels_toy, run_toy = random_case(4)
    _check_adds_up(qrels_toy, run_toy, a, b)


def test_different_metrics_are_refused() -> None:
    qrels, run = random_case(0)
    with pytest.raises(UsageError, match="one metric"):
        rankflavor.diff(qrels, run, "ndcg@10", "AP@10")
    with pytest.raises(UsageError, match="exactly one measure"):
        rankflavor.diff(qrels, run, "trec_eval:P", "P@10")


def test_same_flavor_has_no_steps() -> None:
    qrels, run = random_case(0)
    d = rankflavor.diff(qrels, run, "ndcg@10", "ndcg@10[ties=docno_desc]")
    assert d.steps == () and d.total == 0.0
    assert [r for r in d.rows() if r[1] == "all"] == [("total", "all", 0.0)]


def test_csv_rows_sum_per_query_to_the_total_row(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from rankflavor.render.difffmt import render_diff

    qrels, run = random_case(5)
    d = rankflavor.diff(qrels, run, "ndcg@5[missing=skip,empty=skip]", "ndcg@10[gain=exp2,empty=one]")
    for scale in ("value", "mean"):
        rows = list(csv.reader(io.StringIO(render_diff(d, "csv", scale))))
        assert rows[0] == ["knob", "query", "delta"]
        sums: dict[str, list[float]] = {}
        totals: dict[str, float] = {}
        for knob, query, delta in rows[1:]:
            if knob == "total":
                totals[query] = float(delta)
            else:
                sums.setdefault(query, []).append(float(delta))
        assert set(sums) == set(totals)
        for q, parts in sums.items():
            assert abs(math.fsum(parts) - totals[q]) <= SUM_TOL, (scale, q)
        assert totals["all"] == d.total
        if scale == "mean":
            for knob in {r[0] for r in rows[1:]} - {"total"}:
                by_query = [float(r[2]) for r in rows[1:] if r[0] == knob and r[1] != "all"]
                (all_row,) = [float(r[2]) for r in rows[1:] if r[0] == knob and r[1] == "all"]
                assert abs(math.fsum(by_query) - all_row) <= SUM_TOL
    data = json.loads(render_diff(d, "json"))
    assert data["total"] == d.total and len(data["steps"]) == len(d.steps)


def test_cli_diff(tmp_path) -> None:  # type: ignore[no-untyped-def]
    qrels, run = random_case(8)
    qp, rp = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qp.write_text("".join(f"{q} 0 {d} {int(g)}\n" for q, docs in qrels.items() for d, g in docs.items()))
    rp.write_text("".join(f"{q} Q0 {d} {i + 1} {s} t\n" for q, docs in run.items() for i, (d, s) in enumerate(docs.items())))
    runner = CliRunner()
    res = runner.invoke(cli, ["diff", str(qp), str(rp), "trec_eval:ndcg_cut.10", "ndcg@5[gain=exp2,ideal=local]"])
    assert res.exit_code == 0, res.output
    assert "path from A to B" in res.output and "queries that move most" in res.output
    res = runner.invoke(cli, ["diff", str(qp), str(rp), "ndcg@10", "ndcg@10[gain=exp2]", "--format", "csv",
                              "--order", "gain"])
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[0] == "knob,query,delta"
    assert res.output.splitlines()[-1].startswith("total,all,")
    res = runner.invoke(cli, ["diff", str(qp), str(rp), "ndcg@10", "AP@10"])
    assert res.exit_code == 2 and "one metric" in res.output
