"""``rankflavor.judge_agreement`` and ``rankflavor agreement``: the statistics against scikit-learn,
krippendorff and statsmodels on the same labels, the counts, the metric both ways, every format,
line order and bad input."""

from __future__ import annotations

import csv
import io
import json
import random
import warnings
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import rankflavor
from rankflavor.analysis.estimate.agreement import clustered_mean
from rankflavor.cli.main import cli
from rankflavor.errors import InputError

krippendorff = pytest.importorskip("krippendorff")
metrics = pytest.importorskip("sklearn.metrics")
sm = pytest.importorskip("statsmodels.api")


def _pairs(seed: int, n: int = 60, grades: tuple[int, ...] = (0, 1, 2, 3)) -> tuple[dict, dict, list, list, list]:
    """Human and judge judgments over the same ``n`` pairs (in 7 queries); the judge is off by one
    now and then. Returns the dicts and, in (query, doc) order, the queries and both grade lists."""
    rng = random.Random(seed)
    human: dict[str, dict[str, int]] = {}
    judge: dict[str, dict[str, int]] = {}
    for i in range(n):
        q, d = f"q{i % 7}", f"d{i:03d}"
        g = rng.choice(grades)
        human.setdefault(q, {})[d] = g
        judge.setdefault(q, {})[d] = min(max(grades), max(min(grades), g + rng.choice((-1, 0, 0, 0, 1))))
    keys = sorted((q, d) for q in human for d in human[q])
    return (human, judge, [q for q, _ in keys], [human[q][d] for q, d in keys], [judge[q][d] for q, d in keys])


@pytest.mark.parametrize("seed", range(6))
def test_statistics_equal_sklearn_krippendorff_and_statsmodels(seed: int) -> None:
    human, judge, queries, h, j = _pairs(seed)
    g = rankflavor.judge_agreement(human, judge).grades
    labels = sorted(set(h) | set(j))
    assert list(g.grades) == labels
    assert g.kappa == pytest.approx(metrics.cohen_kappa_score(h, j, labels=labels), abs=1e-12)
    assert g.kappa_linear == pytest.approx(metrics.cohen_kappa_score(h, j, labels=labels, weights="linear"), abs=1e-12)
    assert g.kappa_quadratic == pytest.approx(metrics.cohen_kappa_score(h, j, labels=labels, weights="quadratic"),
                                              abs=1e-12)
    for level, ours in (("ordinal", g.alpha_ordinal), ("interval", g.alpha_interval)):
        assert ours == pytest.approx(krippendorff.alpha(reliability_data=[h, j], level_of_measurement=level), abs=1e-12)
    assert np.array_equal(np.array(g.confusion), metrics.confusion_matrix(h, j, labels=labels))
    d = np.array(j, dtype=float) - np.array(h, dtype=float)
    fit = sm.OLS(d, np.ones(len(d))).fit(cov_type="cluster", cov_kwds={"groups": np.unique(queries, return_inverse=True)[1]},
                                         use_t=True)
    assert g.bias == pytest.approx(float(fit.params[0]), abs=1e-12)
    assert g.bias_se == pytest.approx(float(fit.bse[0]), abs=1e-12)
    assert (g.bias_low, g.bias_high) == pytest.approx(tuple(fit.conf_int(0.05)[0]), abs=1e-10)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=2, max_size=25))
def test_weighted_kappas_equal_sklearn_on_any_labels(pairs: list[tuple[int, int]]) -> None:
    human = {"q": {f"d{i}": a for i, (a, _) in enumerate(pairs)}}
    judge = {"q": {f"d{i}": b for i, (_, b) in enumerate(pairs)}}
    g = rankflavor.judge_agreement(human, judge).grades
    h, j = [a for a, _ in pairs], [b for _, b in pairs]
    order = sorted(range(len(pairs)), key=lambda i: f"d{i}")
    h, j = [h[i] for i in order], [j[i] for i in order]
    labels = sorted(set(h) | set(j))
    for weights, ours in ((None, g.kappa), ("linear", g.kappa_linear), ("quadratic", g.kappa_quadratic)):
        with warnings.catch_warnings():  # sklearn warns on 0/0 (one category): NaN, as ours
            warnings.simplefilter("ignore")
            theirs = metrics.cohen_kappa_score(h, j, labels=labels, weights=weights)
        if np.isnan(theirs):
            assert np.isnan(ours) and g.undefined
        else:
            assert ours == pytest.approx(theirs, abs=1e-12)


def test_a_scale_adds_its_grades_as_categories() -> None:
    human, judge, _, h, j = _pairs(1, grades=(0, 1))
    g = rankflavor.judge_agreement(human, judge, scale="trec_dl").grades
    assert g.grades == (0.0, 1.0, 2.0, 3.0) and len(g.confusion) == 4
    assert g.kappa_linear == pytest.approx(metrics.cohen_kappa_score(h, j, labels=[0, 1, 2, 3], weights="linear"),
                                           abs=1e-12)


def test_counts_of_what_one_side_alone_judged() -> None:
    human = {"q1": {"a": 1, "b": 0}, "q2": {"c": 2}, "q3": {"x": 1}}
    judge = {"q1": {"a": 1, "z": 3}, "q2": {"c": 1}, "q4": {"y": 0}}
    g = rankflavor.judge_agreement(human, judge).grades
    assert (g.pairs, g.only_human, g.only_judge) == (2, 2, 2)
    assert (g.queries, g.queries_only_human, g.queries_only_judge) == (2, 1, 1)
    assert g.bias == pytest.approx(-0.5)


def test_nothing_in_common_and_one_query_give_reasons() -> None:
    none = rankflavor.judge_agreement({"q": {"a": 1}}, {"q": {"b": 1}}).grades
    assert none.pairs == 0 and all("no (query, doc) pair" in why for why in none.undefined.values())
    one = rankflavor.judge_agreement({"q": {"a": 1, "b": 0}}, {"q": {"a": 1, "b": 1}}).grades
    assert one.bias == 0.5 and "one query" in one.undefined["bias_low"]
    same = rankflavor.judge_agreement({"q": {"a": 1}, "r": {"b": 1}}, {"q": {"a": 1}, "r": {"b": 1}}).grades
    assert "0/0" in same.undefined["kappa_linear"]


def test_clustered_mean_by_hand() -> None:
    # d = [1, 1, 0, -1] in queries a, a, b, b: mean .25; residual sums 1.5 and -1.5;
    # se = sqrt(2/1 * 4.5) / 4 = .75; t(1 df, .975) = 12.7062047
    m, low, high, se = clustered_mean(np.array([1.0, 1.0, 0.0, -1.0]), np.array(["a", "a", "b", "b"]), 0.05)
    assert (m, se) == pytest.approx((0.25, 0.75), abs=1e-12)
    assert (low, high) == pytest.approx((0.25 - 12.7062047 * 0.75, 0.25 + 12.7062047 * 0.75), abs=1e-6)


def test_the_metric_both_ways_and_the_runs_order() -> None:
    from scipy.stats import kendalltau

    human, judge, _, _, _ = _pairs(2, n=80)
    rng = random.Random(5)
    runs = {f"r{k}": {q: {d: rng.random() + k * (g / 3) for d, g in docs.items()} for q, docs in human.items()}
            for k in range(3)}
    a = rankflavor.judge_agreement(human, judge, runs, "ndcg@5", n_resamples=500)
    for name, run in runs.items():
        m = next(x for x in a.runs if x.name == name)
        assert m.human == pytest.approx(rankflavor.evaluate(human, run, ["ndcg@5"])["ndcg@5"].mean, abs=1e-12)
        assert m.judge == pytest.approx(rankflavor.evaluate(judge, run, ["ndcg@5"])["ndcg@5"].mean, abs=1e-12)
        assert m.delta == pytest.approx(m.judge - m.human, abs=1e-12) and m.n == 7
        assert m.low <= m.delta <= m.high
    assert a.tau == pytest.approx(kendalltau([m.human for m in a.runs], [m.judge for m in a.runs]).statistic)
    assert a.measure is not None and a.measure.startswith("ndcg@5[")


def test_a_pair_graded_twice_names_the_file_and_lines(tmp_path: Path) -> None:
    h = tmp_path / "h.qrels"
    h.write_text("q1 0 a 1\nq1 0 b 0\nq1 0 a 2\n")
    j = tmp_path / "j.qrels"
    j.write_text("q1 0 a 1\n")
    with pytest.raises(InputError, match=r"h\.qrels:3: .*'a'.*line 1"):
        rankflavor.judge_agreement(h, j)


# --- the command -------------------------------------------------------------------------------


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    human, judge, _, _, _ = _pairs(4, n=70)
    rng = random.Random(9)
    out = {"human": tmp_path / "human.qrels", "judge": tmp_path / "judge.qrels"}
    out["human"].write_text("".join(f"{q} 0 {d} {g}\n" for q, ds in human.items() for d, g in ds.items()))
    out["judge"].write_text("".join(f"{q} 0 {d} {g}\n" for q, ds in judge.items() for d, g in ds.items()))
    for k in range(2):
        out[f"run{k}"] = tmp_path / f"run{k}.txt"
        out[f"run{k}"].write_text("".join(f"{q} Q0 {d} 0 {rng.random()} r\n" for q, ds in human.items() for d in ds))
    return out


def _cli(*args: object) -> str:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == 0, result.output + str(result.exception)
    return result.output


def test_every_format_carries_the_same_numbers(files: dict[str, Path]) -> None:
    args = ["agreement", files["human"], files["judge"], files["run0"], files["run1"], "-m", "ndcg@5", "--resamples", "300"]
    data = json.loads(_cli(*args, "--format", "json"))
    rows = list(csv.DictReader(io.StringIO(_cli(*args, "--format", "csv"))))
    table, md = _cli(*args, "--wide"), _cli(*args, "--format", "md")
    g = data["grades"]
    by = {(r["section"], r["name"]): r for r in rows}
    for k in ("kappa", "kappa_linear", "kappa_quadratic", "alpha_ordinal", "alpha_interval"):
        assert float(by[("agreement", k)]["value"]) == g[k]
        assert f"{g[k]:.4f}" in table and f"{g[k]:.4f}" in md
    assert float(by[("bias", "judge-human")]["low"]) == g["bias_low"]
    assert f"{g['bias']:+.4f}" in table and f"{g['bias_high']:+.4f}" in md
    cells = [int(r["value"]) for r in rows if r["section"] == "confusion"]
    assert cells == [c for row in g["confusion"] for c in row]
    for m in data["runs"]:
        r = by[("metric", m["name"])]
        assert (float(r["human"]), float(r["judge"]), float(r["value"]), float(r["high"])) == (
            m["human"], m["judge"], m["delta"], m["high"])
        for shown in (table, md):
            assert f"{m['human']:.4f}" in shown and f"{m['delta']:+.4f}" in shown
    assert data["tau"] is not None and float(by[("tau", "kendall_tau_b")]["value"]) == data["tau"]
    assert f"{data['tau']:.4f}" in table and f"{data['tau']:.4f}" in md
    for k in ("pairs", "only_human", "only_judge"):
        assert int(by[("counts", k)]["value"]) == g[k]


def test_output_does_not_depend_on_line_order(files: dict[str, Path], tmp_path: Path) -> None:
    shuffled = {}
    for name, path in files.items():
        lines = path.read_text().splitlines(keepends=True)
        random.Random(3).shuffle(lines)
        shuffled[name] = tmp_path / f"s-{path.name}"
        shuffled[name].write_text("".join(lines))

    def out(fs: dict[str, Path]) -> dict:
        d = json.loads(_cli("agreement", fs["human"], fs["judge"], fs["run0"], "--resamples", "200", "--format", "json"))
        for k in ("provenance", "human", "judge"):
            d.pop(k)
        d["runs"][0].pop("name")
        return d

    assert out(files) == out(shuffled)


@pytest.mark.parametrize("which", ["human", "judge", "run0"])
def test_a_bad_line_names_its_file_and_line(files: dict[str, Path], which: str) -> None:
    lines = files[which].read_text().splitlines()
    lines[1] = lines[1].split()[0] + " Q0"
    files[which].write_text("\n".join(lines) + "\n")
    result = CliRunner().invoke(cli, ["agreement", str(files["human"]), str(files["judge"]), str(files["run0"])])
    assert result.exit_code == InputError.exit_code
    assert f"{files[which]}:2" in result.output


def test_without_runs_tau_is_undefined_and_no_metric_is_shown(files: dict[str, Path]) -> None:
    data = json.loads(_cli("agreement", files["human"], files["judge"], "--format", "json"))
    assert data["runs"] == [] and data["measure"] is None and data["tau"] is None
    assert "both ways" not in _cli("agreement", files["human"], files["judge"])


def test_an_undefined_tau_says_why_in_every_format(files: dict[str, Path]) -> None:
    # both runs rank every query's documents alike: one mean under each judgments, tau 0/0
    files["run1"].write_text(files["run0"].read_text())
    args = ["agreement", files["human"], files["judge"], files["run0"], files["run1"], "--resamples", "100"]
    data = json.loads(_cli(*args, "--format", "json"))
    assert data["tau"] is None and "same mean" in data["undefined"]["tau"]
    tau_row = next(r for r in csv.DictReader(io.StringIO(_cli(*args, "--format", "csv"))) if r["section"] == "tau")
    assert tau_row["value"] == "nan" and "same mean" in tau_row["note"]
    for fmt in ("table", "md"):
        assert "same mean" in " ".join(_cli(*args, "--format", fmt).split())


@pytest.mark.parametrize("runs", [None, (), [], {}])
def test_no_runs_in_any_form(runs: object) -> None:
    a = rankflavor.judge_agreement({"q": {"a": 1, "b": 0}}, {"q": {"a": 1, "b": 1}}, runs)
    assert a.runs == () and a.measure is None and "no run" in a.undefined["tau"]
