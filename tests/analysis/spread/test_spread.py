"""spread: a measure under a grid of flavors and every preset, over several runs.

Oracles: every mean is checked against rankflavor.evaluate() called separately per flavor (the
public, single-flavor path), and every summary (min/max per run, knob swings, sign flips, run
orders) is recomputed here from those independent values.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import math

import numpy as np
import pytest
from click.testing import CliRunner

import rankflavor
from rankflavor.analysis.spread.api import DEFAULT_GRID, TIE_TOLERANCE, one_measure, parse_grid, spread
from rankflavor.cli.main import cli
from rankflavor.errors import EvaluationError, FlavorError, UsageError
from rankflavor.metrics.measure import parse_measure

from ...conftest import shared_path

DL19_RUNS = (
    "rankllm.dl19.bm25.top100.run",
    "rankllm.dl19.bm25-rm3.top100.run",
    "rankllm.dl19.splade-p-p-ensemble-distil.top100.run",
    "rankllm.dl19.d-bert-kd-tasb.top100.run",
    "rankllm.dl19.bm25-rankgpt-gpt-3.5-turbo.top100.run",
)


def random_case(seed: int, n_queries: int = 8, max_docs: int = 25, negatives: bool = False,
                coarse: bool = True) -> tuple[dict, dict]:
    """Judgments and a run as dicts, with what makes flavors differ: tied scores, unjudged and
    unretrieved judged documents, a query with nothing relevant, a qrels query the run does not
    answer, and a run query without judgments. Doc ids of different lengths test byte order."""
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, float]] = {}
    run: dict[str, dict[str, float]] = {}
    for qi in range(n_queries):
        q = f"q{qi}"
        n = int(rng.integers(3, max_docs + 1))
        docs = [f"d{x}" for x in rng.choice(150, size=n + 6, replace=False)]
        retrieved, extra = docs[:n], docs[n:]
        judged = [d for d in retrieved if rng.random() < 0.6] + [d for d in extra if rng.random() < 0.5]
        grades = {d: float(rng.choice([0, 0, 1, 2, 3])) for d in judged}
        if negatives and judged:
            grades[judged[0]] = -1.0
        if qi == 1:  # nothing relevant: IDCG = 0
            grades = {d: 0.0 for d in judged} or {retrieved[0]: 0.0}
        if not grades:
            grades = {extra[0]: 1.0}
        qrels[q] = grades
        if qi == 2:
            continue  # a qrels query the run does not answer
        scores = rng.integers(0, 5, size=n) if coarse else rng.normal(size=n)
        run[q] = {d: float(s) for d, s in zip(retrieved, scores, strict=True)}
    run["q_run_only"] = {"d1": 1.0, "d2": 0.5}
    return qrels, run


# ---------------------------------------------------------------------------------------------
# Means and summaries against evaluate()


def _independent_means(qrels, runs, flavors):  # type: ignore[no-untyped-def]
    """Means per (run, flavor) from separate evaluate() calls on the canonical strings (NaN on a policy error)."""
    out = np.full((len(runs), len(flavors)), np.nan)
    for r, run in enumerate(runs):
        for j, f in enumerate(flavors):
            try:
                out[r, j] = rankflavor.evaluate(qrels, run, f)[0].mean
            except EvaluationError:
                pass
    return out


@pytest.mark.parametrize("seed", range(6))
def test_means_equal_evaluate_per_flavor(seed: int) -> None:
    qrels, run_a = random_case(seed)
    _, run_b = random_case(seed + 100)
    s = spread(qrels, {"a": run_a, "b": run_b}, "ndcg@5")
    assert len(s.flavors) >= 48  # default grid (48 cells) plus presets, deduplicated
    expected = _independent_means(qrels, [run_a, run_b], [f.flavor for f in s.flavors])
    np.testing.assert_array_equal(s.means, expected)  # bit for bit, NaN where a policy refused


def test_grid_covers_the_default_product_and_presets() -> None:
    qrels, run = random_case(3)
    s = spread(qrels, run)
    cells = [f for f in s.flavors if f.cell is not None]
    assert len({tuple(sorted(f.cell.items())) for f in cells}) == math.prod(len(v) for v in DEFAULT_GRID.values())
    for f in cells:
        for knob, value in f.cell.items():
            assert getattr(f.measure.flavor, knob) == value
    assert s.flavors[0].origins[0] == "base"
    from rankflavor.presets import PRESETS

    covered = {p for f in s.flavors for p in f.presets}
    skipped = {n.split()[1] for n in s.notes if n.startswith("preset ")}
    assert covered | skipped == set(PRESETS)
    for f in s.flavors:  # every preset row is that preset's own ndcg@10
        for p in f.presets:
            assert f.measure == one_measure(f"{p}:ndcg@10")


def _brute_summaries(s, means):  # type: ignore[no-untyped-def]
    """Summaries, pairs and run orders recomputed from ``means`` over the flavors in the summaries:
    every flavor but those only defect presets produced (unless the spread includes them)."""
    from rankflavor.presets import PRESETS

    if s.include_defects is False:
        _brute_summaries(s.with_defects(), means)
    use = np.array([s.include_defects or not (f.presets and len(f.presets) == len(f.origins)
                                              and all(PRESETS[p].defect for p in f.presets)) for f in s.flavors])
    assert list(s.in_summary) == list(use)
    assert [f.flavor for f in s.excluded] == [f.flavor for f, u in zip(s.flavors, use, strict=True) if not u]
    means = np.where(use, means, np.nan)  # the flavors out of the summaries count as not evaluated
    for r in range(len(s.runs)):
        row = means[r][~np.isnan(means[r])]
        sm = s.summaries[r]
        assert sm.n_flavors == len(row)
        assert sm.low == row.min() and sm.high == row.max()
        assert sm.spread == row.max() - row.min()
        assert s.means[r, [f.flavor for f in s.flavors].index(sm.low_flavor)] == row.min()
        assert s.means[r, [f.flavor for f in s.flavors].index(sm.high_flavor)] == row.max()
    for p in s.pairs:
        a, b = s.runs.index(p.run_a), s.runs.index(p.run_b)
        d = means[a] - means[b]
        d = d[~np.isnan(d)]
        assert p.a_better == int((d > TIE_TOLERANCE).sum())
        assert p.b_better == int((d < -TIE_TOLERANCE).sum())
        assert p.flips == bool((d > TIE_TOLERANCE).any() and (d < -TIE_TOLERANCE).any())
        assert (p.min_diff, p.max_diff) == (d.min(), d.max())
    complete = [j for j in range(len(s.flavors)) if not np.isnan(means[:, j]).any()]
    assert sorted(f for o in s.orders for f in o.flavors) == sorted(s.flavors[j].flavor for j in complete)


def test_knob_effects_match_brute_force() -> None:
    qrels, run_a = random_case(11)
    _, run_b = random_case(12)
    grid = {"gain": ["linear", "exp2"], "ideal": ["global", "local", "recall@4"], "ties": ["docno_asc", "pessimistic"]}
    s = spread(qrels, [run_a, run_b], "ndcg@4", grid=grid, presets=False)
    assert [f.cell is None for f in s.flavors].count(False) == 12  # plus the base (ties=docno_desc)
    means = _independent_means(qrels, [run_a, run_b], [f.flavor for f in s.flavors])
    _brute_summaries(s, means)
    index = {tuple(f.cell[k] for k in grid): j for j, f in enumerate(s.flavors) if f.cell is not None}
    for e in s.knob_effects:
        pos = list(grid).index(e.knob)
        for r, name in enumerate(s.runs):
            swings = []
            others = [v for k, v in grid.items() if k != e.knob]
            for rest in itertools.product(*others):
                vals = []
                for v in grid[e.knob]:
                    cell = list(rest)
                    cell.insert(pos, v)
                    vals.append(means[r, index[tuple(cell)]])
                swings.append(max(vals) - min(vals))
            assert e.mean_swing[name] == pytest.approx(float(np.mean(swings)), abs=1e-15)
            assert e.max_swing[name] == max(swings)
    overall = {e.knob: e.overall for e in s.knob_effects}
    assert s.most_moving_knob == max(overall, key=overall.__getitem__)


def test_real_dl19_spread_and_order_flips() -> None:
    """The five DL19 runs: spread per run and the pairs whose sign flips, checked flavor by flavor."""
    qrels = str(shared_path("qrels", "qrels.dl19-passage.txt"))
    runs = [str(shared_path("runs", name)) for name in DL19_RUNS]
    s = spread(qrels, runs)
    assert s.runs == DL19_RUNS
    assert not s.errors
    means = _independent_means(qrels, runs, [f.flavor for f in s.flavors])
    np.testing.assert_array_equal(s.means, means)
    _brute_summaries(s, means)
    for sm in s.summaries:
        assert sm.spread > 0  # NDCG@10 of a real run is never flavor-proof
    # The base flavor is trec_eval -c ndcg_cut.10 in float64; these runs have no float32-only ties,
    # so it reproduces the published BM25 / BM25+RM3 numbers (shared/data/runs/README.md).
    assert round(s.summaries[0].base, 4) == 0.5058 and round(s.summaries[1].base, 4) == 0.5216
    flipping = {(p.run_a, p.run_b) for p in s.pairs if p.flips}
    used = [j for j, f in enumerate(s.flavors) if f.presets != ("spark_triples",)]  # the one defect preset
    assert len(used) == len(s.flavors) - 1 and list(np.flatnonzero(s.in_summary)) == used
    independent = set()
    for a, b in itertools.combinations(range(len(runs)), 2):
        d = means[a, used] - means[b, used]
        if (d > TIE_TOLERANCE).any() and (d < -TIE_TOLERANCE).any():
            independent.add((DL19_RUNS[a], DL19_RUNS[b]))
    assert flipping == independent
    orders = {tuple(sorted(range(len(runs)), key=lambda r, j=j: (-round(means[r, j], 12), r))) for j in used}
    assert len(s.orders) == len(orders)
    assert s.order_changes == (len(orders) > 1)
    assert sum(len(o.flavors) for o in s.orders) == len(used)


def test_identical_runs_never_flip() -> None:
    qrels, run = random_case(5)
    s = spread(qrels, {"x": run, "y": dict(run)}, "ndcg@10")
    (p,) = s.pairs
    evaluated = int((~np.isnan(s.means[0]) & s.in_summary).sum())  # presets refusing a run-only query are left out
    assert (p.a_better, p.b_better, p.equal, p.flips) == (0, 0, evaluated, False)
    assert len(s.orders) == 1


def test_policy_errors_are_recorded_per_flavor_and_raised_when_all_fail() -> None:
    qrels, run = random_case(7)  # q1 has nothing relevant
    s = spread(qrels, run, "ndcg@5", grid={"empty": ["zero", "error"]}, presets=False)
    assert [f.cell for f in s.flavors] == [{"empty": "zero"}, {"empty": "error"}]
    assert math.isnan(s.means[0, 1]) and not math.isnan(s.means[0, 0])
    ((run_name, flavor), message), = s.errors.items()
    assert run_name == "run1"
    assert "empty=error" in message and "empty=error" in flavor
    with pytest.raises(EvaluationError, match="empty=error"):
        spread(qrels, run, "ndcg@5[empty=error]", grid={"gain": ["linear", "exp2"]}, presets=False)


def test_spread_frees_each_run_after_a_flavor_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    """A flavor's error was kept with its traceback, whose frames held the run's shared
    evaluation: every run's alignment stayed alive until a full collection (and, through the
    error raised at the end, spread's own frame with every run). Reference counting alone must
    free them."""
    import gc
    import importlib
    import weakref

    plan_module = importlib.import_module("rankflavor.engine.plan")  # spread aligns through the plan
    kept: list[weakref.ref] = []  # type: ignore[type-arg]
    real_align = plan_module.align

    def recording_align(*args, **kwargs):  # type: ignore[no-untyped-def]
        aligned = real_align(*args, **kwargs)
        kept.append(weakref.ref(aligned))
        return aligned

    monkeypatch.setattr(plan_module, "align", recording_align)
    qrels, run_a = random_case(7)  # q1 has nothing relevant: empty=error fails
    _, run_b = random_case(8)
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        s = spread(qrels, {"a": run_a, "b": run_b}, "ndcg@5", grid={"empty": ["zero", "error"]}, presets=False)
        assert s.errors and len(kept) == 2
        del s
        assert all(ref() is None for ref in kept)
        with pytest.raises(EvaluationError):  # every flavor fails: the first error is raised
            spread(qrels, {"a": run_a, "b": run_b}, "ndcg@5[empty=error]", grid={"gain": ["linear", "exp2"]}, presets=False)
        assert len(kept) == 4 and all(ref() is None for ref in kept)
    finally:
        if was_enabled:
            gc.enable()


def test_grid_knob_the_metric_does_not_read_is_noted_not_varied() -> None:
    qrels, run = random_case(1)
    s = spread(qrels, run, "AP@5", grid={"gain": ["linear", "exp2"], "ties": ["docno_desc", "docno_asc"]},
               presets=False)
    assert s.grid == {"ties": ("docno_desc", "docno_asc")}
    assert any("gain" in n and "does not read" in n for n in s.notes)


def test_cutoff_and_dialect_measures() -> None:
    qrels, run = random_case(2)
    s = spread(qrels, run, "trec_eval:ndcg_cut.5", grid={"gain": ["exp2"]}, presets=False)
    assert s.base.k == 5 and s.base.flavor.precision == "float32"
    s20 = spread(qrels, run, "ndcg", k=20, grid={}, presets=False)
    assert s20.base.name == "ndcg@20"
    with pytest.raises(UsageError, match="exactly one measure"):
        spread(qrels, run, "trec_eval:ndcg_cut")  # nine cutoffs
    with pytest.raises(FlavorError):
        spread(qrels, run, grid={"gain": ["squared"]})
    with pytest.raises(FlavorError, match="unknown flavor knob"):
        spread(qrels, run, grid={"gian": ["exp2"]})


def test_parse_grid() -> None:
    assert parse_grid(["gain=linear,exp2", "discount=jk(2),log2", "gain={0:0,1:1,2:3}"]) == {
        "gain": ("linear", "exp2", "{0:0,1:1,2:3}"), "discount": ("jk(2)", "log2")}
    with pytest.raises(UsageError, match="KNOB=VALUE"):
        parse_grid(["gain"])
    with pytest.raises(UsageError, match="at least one value"):
        parse_grid(["gain="])


# ---------------------------------------------------------------------------------------------
# Outputs


def test_csv_rows_are_run_flavor_mean_and_parse_back(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from rankflavor.render.spreadfmt import render_spread

    qrels, run_a = random_case(4)
    _, run_b = random_case(40)
    s = spread(qrels, {"A": run_a, "B": run_b}, "ndcg@10", grid={"gain": ["linear", "exp2"]}, presets=["trec_eval"])
    rows = list(csv.reader(io.StringIO(render_spread(s, "csv"))))
    assert rows[0] == ["run", "flavor", "mean", "in_summary", "excluded_because"]
    assert len(rows) - 1 == 2 * len(s.flavors)
    for run, flavor, mean, used, why in rows[1:]:
        value = rankflavor.evaluate(qrels, run_a if run == "A" else run_b, flavor)[0].mean
        assert float(mean) == value  # full precision, canonical flavor strings
        assert str(parse_measure(flavor)) == flavor
        assert (used, why) == ("1", "")  # trec_eval reproduces no defect
    data = json.loads(render_spread(s, "json"))
    assert data["runs"] == ["A", "B"] and len(data["flavors"]) == len(s.flavors)
    assert {"summaries", "knob_effects", "pairs", "orders", "most_moving_knob"} <= set(data)


def test_cli_spread_table_json_csv(tmp_path) -> None:  # type: ignore[no-untyped-def]
    qrels, run_a = random_case(9)
    _, run_b = random_case(90)
    qp, ra, rb = tmp_path / "qrels.txt", tmp_path / "sys.a.run", tmp_path / "sys.b.run"
    qp.write_text("".join(f"{q} 0 {d} {int(g)}\n" for q, docs in qrels.items() for d, g in docs.items()))
    for path, run in ((ra, run_a), (rb, run_b)):
        path.write_text("".join(f"{q} Q0 {d} {i + 1} {s} t\n" for q, docs in run.items()
                                for i, (d, s) in enumerate(docs.items())))
    runner = CliRunner()
    res = runner.invoke(cli, ["spread", str(qp), str(ra), str(rb), "-k", "5"])
    assert res.exit_code == 0, res.output
    assert "moves the score most" in res.output and "run pairs" in res.output
    res = runner.invoke(cli, ["spread", str(qp), str(ra), "--vary", "gain=linear,exp2", "--no-presets", "--format", "csv"])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[0] == "run,flavor,mean,in_summary,excluded_because" and len(lines) == 3
    res = runner.invoke(cli, ["spread", str(qp), str(ra), "--format", "json", "--flavor", "ideal=local"])
    assert json.loads(res.output)["measure"].startswith("ndcg@10[gain=linear,discount=log2,ideal=local")
    res = runner.invoke(cli, ["spread", str(qp), str(ra), "--vary", "gain=squared"])
    assert res.exit_code == 2 and "squared" in res.output


def test_lazy_exports_stay_functions_after_their_modules_are_imported() -> None:
    """Regression: importing rankflavor.evaluate (the module) used to shadow rankflavor.evaluate (the function)."""
    import importlib

    for name, module in (("evaluate", "rankflavor.engine.evaluate"), ("spread", "rankflavor.analysis.spread.api"),
                         ("explain", "rankflavor.analysis.explain.api"), ("diff", "rankflavor.analysis.diff.api"),
                         ("compare", "rankflavor.analysis.compare"), ("check", "rankflavor.analysis.check"),
                         ("identify", "rankflavor.analysis.identify"), ("estimate", "rankflavor.analysis.estimate"),
                         ("judgments", "rankflavor.analysis.judgments"), ("pool", "rankflavor.analysis.judgments.pool")):
        importlib.import_module(module)
        assert callable(getattr(rankflavor, name)), name
        assert getattr(rankflavor, name) is getattr(importlib.import_module(module), name)
    assert {"spread", "explain", "diff"} <= set(rankflavor.__all__)
