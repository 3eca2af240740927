"""rankflavor.compare end to end: real DL19 runs checked against pytrec_eval + SciPy, determinism,
query-set policies, provenance and the same-qrels refusal, every output format."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import rankflavor
from rankflavor.analysis.compare import QrelsMismatchError, compare_saved
from rankflavor.cli.main import cli
from rankflavor.errors import EvaluationError, UsageError
from rankflavor.render.comparefmt import render_compare

from ...conftest import shared_path

RUNS = {"bm25": "rankllm.dl19.bm25.top100.run", "splade": "rankllm.dl19.splade-p-p-ensemble-distil.top100.run",
        "tasb": "rankllm.dl19.d-bert-kd-tasb.top100.run"}
NDCG = "trec_eval:ndcg_cut.10"


def _dl19() -> tuple[str, dict[str, str]]:
    qrels = str(shared_path("qrels", "qrels.dl19-passage.txt"))
    return qrels, {k: str(shared_path("runs", v)) for k, v in RUNS.items()}


@pytest.fixture(scope="module")
def dl19_grid():  # type: ignore[no-untyped-def]
    qrels, runs = _dl19()
    return rankflavor.compare(qrels, runs, NDCG, baseline="bm25", n_resamples=2000, flavors="grid")


def test_dl19_verdicts_match_scipy_on_pytrec_eval_values(dl19_grid) -> None:  # type: ignore[no-untyped-def]
    """BM25 vs SPLADE and vs TAS-B differ significantly under trec_eval's NDCG@10 (Holm over
    the t-test, as SciPy + statsmodels on pytrec_eval's per-query values say); SPLADE vs TAS-B does not."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    from scipy.stats import ttest_rel
    from statsmodels.stats.multitest import multipletests

    qrels, runs = _dl19()
    qrels_dict = pytrec_eval.parse_qrel(open(qrels))
    per_query = {}
    for name, path in runs.items():
        ev = pytrec_eval.RelevanceEvaluator(qrels_dict, {"ndcg_cut.10"})
        per_query[name] = {q: v["ndcg_cut_10"] for q, v in ev.evaluate(pytrec_eval.parse_run(open(path))).items()}
    m = dl19_grid[0]
    queries = [str(q) for q in m.queries]
    assert sorted(queries) == sorted(per_query["bm25"]) and m.n == 43
    vals = {n: np.array([per_query[n][q] for q in queries]) for n in RUNS}
    from scipy.stats import bootstrap

    for s, row in zip(m.systems, m.values, strict=True):
        np.testing.assert_allclose(row, vals[s.name], atol=1e-12)
        ref = bootstrap((row,), np.mean, n_resamples=2000, method="BCa", rng=np.random.default_rng(0)).confidence_interval
        assert s.ci == pytest.approx((ref.low, ref.high), abs=1e-9) and s.ci[0] < s.mean < s.ci[1]
    ref_p = [ttest_rel(vals[b], vals["bm25"]).pvalue for b in ("splade", "tasb")]
    holm = multipletests(ref_p, method="holm")[1]
    for k, b in enumerate(("splade", "tasb")):
        p = m.pair("bm25", b)
        assert p.pvalues["t"] == pytest.approx(ref_p[k], rel=1e-9)
        assert p.adjusted["t"] == pytest.approx(holm[k], rel=1e-9)
        assert p.significant and holm[k] < 0.05 and p.delta > 0.2
        assert p.pvalues["permutation"] < 0.01 and p.pvalues["bootstrap"] < 0.01
        # the wins are robust: same sign and verdict in every flavor of the grid and every preset
        assert dl19_grid[0].robustness.holds(k) == (True, True)
    assert len(m.robustness.flavors) > 60 and not m.robustness.errors


def test_dl19_splade_vs_tasb_not_significant_and_its_sign_flips_with_the_flavor() -> None:
    from scipy.stats import ttest_rel

    qrels, runs = _dl19()
    c = rankflavor.compare(qrels, {k: runs[k] for k in ("splade", "tasb")}, NDCG, n_resamples=2000,
                           flavors="grid", tests=("t", "permutation"), correction="holm")
    m = c[0]
    p = m.pairs[0]
    assert (p.a, p.b) == ("splade", "tasb") and -0.02 < p.delta < 0
    assert p.pvalues["t"] == pytest.approx(ttest_rel(m.values[1], m.values[0]).pvalue, rel=1e-12)
    assert not p.significant and p.pvalues["t"] > 0.5
    sign_flips = m.robustness.sign_flips[0]
    # TAS-B comes ahead under Järvelin-Kekäläinen discounts with a local ideal over condensed
    # lists (whatever the tie rule), and under Spark's binary gain
    assert len(sign_flips) == 4 and sum("discount=jk(2),ideal=local,unjudged=condensed" in f for f in sign_flips) == 3
    assert sign_flips[-1].startswith("gain=binary") and sign_flips[-1].endswith("[spark]")
    assert not m.robustness.verdict_flips[0]  # never significant, in any flavor
    d = c.to_dict()["measures"][0]["robustness"]["pairs"][0]
    assert d["sign_holds"] is False and d["verdict_holds"] is True and d["sign_flipped_by"] == list(sign_flips)


def _small(tmp_path: Path) -> tuple[Path, Path, Path]:
    rng = np.random.default_rng(7)
    qrels = []
    runs: dict[str, list[str]] = {"A": [], "B": []}
    for q in range(30):
        docs = [f"d{j}" for j in range(12)]
        qrels += [f"q{q} 0 {d} {int(rng.integers(0, 3))}" for d in docs[:8]]
        for name, shift in (("A", 0.0), ("B", 0.4)):
            scores = rng.random(12) + shift * (np.arange(12) < 4)
            runs[name] += [f"q{q} Q0 {d} {i + 1} {s:.6f} {name}" for i, (d, s) in enumerate(zip(docs, scores, strict=True))]
    paths = []
    for name, lines in (("qrels.txt", qrels), ("A.run", runs["A"]), ("B.run", runs["B"])):
        p = tmp_path / name
        p.write_text("\n".join(lines) + "\n")
        paths.append(p)
    return paths[0], paths[1], paths[2]


def test_same_seed_same_output_and_shuffled_lines_same_output(tmp_path: Path) -> None:
    qrels, a, b = _small(tmp_path)
    kw = {"n_resamples": 500, "seed": 3, "flavors": ["sklearn", "gain=exp2"]}
    first = rankflavor.compare(qrels, [a, b], ["ndcg@10", "P@5"], **kw)
    again = rankflavor.compare(qrels, [a, b], ["ndcg@10", "P@5"], **kw)
    assert first.to_dict() == again.to_dict()
    other = rankflavor.compare(qrels, [a, b], ["ndcg@10", "P@5"], **{**kw, "seed": 4})
    assert other[0].pairs[0].pvalues["permutation"] != first[0].pairs[0].pvalues["permutation"]

    shuffled = tmp_path / "shuffled"
    shuffled.mkdir()
    for p in (qrels, a, b):
        lines = p.read_text().splitlines()
        random.Random(1).shuffle(lines)
        (shuffled / p.name).write_text("\n".join(lines) + "\n")
    moved = rankflavor.compare(shuffled / qrels.name, [shuffled / a.name, shuffled / b.name], ["ndcg@10", "P@5"], **kw)
    for fmt in ("table", "csv", "md", "latex"):
        assert render_compare(moved, fmt) == render_compare(first, fmt)
    d1, d2 = first.to_dict(), moved.to_dict()
    p1, p2 = d1.pop("provenance"), d2.pop("provenance")
    assert d1 == d2
    assert p1["qrels"]["sha256"] != p2["qrels"]["sha256"]  # a file is hashed by its bytes


def _dicts():  # type: ignore[no-untyped-def]
    qrels = {f"q{i}": {"a": 1, "b": 0, "c": 2} for i in range(6)}
    base = {f"q{i}": {"a": 0.5 + 0.01 * i, "b": 0.9, "c": 0.1 * i} for i in range(6)}
    better = {f"q{i}": {"a": 0.8, "b": 0.1, "c": 0.9 - 0.1 * i} for i in range(6)}
    return qrels, base, better


def test_query_set_policies() -> None:
    qrels, base, better = _dicts()
    partial = {q: v for q, v in better.items() if q not in ("q2", "q4")}
    runs = {"base": base, "partial": partial}
    with pytest.raises(EvaluationError, match=r"6 in all, 4 in every system; partial lacks 2 \(q2, q4\)"):
        rankflavor.compare(qrels, runs, "ndcg@3[missing=skip]", n_resamples=200)
    # missing=zero (the default) scores an unanswered query 0, but it still counts as not answered
    with pytest.raises(EvaluationError, match="intersection"):
        rankflavor.compare(qrels, runs, "ndcg@3", n_resamples=200)
    inter = rankflavor.compare(qrels, runs, "ndcg@3", n_resamples=200, queries="intersection")[0]
    assert inter.n == 4 and inter.dropped == 2 and list(inter.queries) == ["q0", "q1", "q3", "q5"]
    union = rankflavor.compare(qrels, runs, "ndcg@3[missing=skip]", n_resamples=200, queries="union-zero")[0]
    assert union.n == 6 and union.zero_filled == 2
    assert union.values[1, 2] == 0.0 and union.values[1, 4] == 0.0
    full = rankflavor.compare(qrels, {"base": base, "better": better}, "ndcg@3", n_resamples=200)[0]
    np.testing.assert_array_equal(union.values[1, [0, 1, 3, 5]], full.values[1, [0, 1, 3, 5]])
    with pytest.raises(UsageError, match="queries"):
        rankflavor.compare(qrels, runs, "ndcg@3", queries="some")


def test_aligned_by_id_not_position() -> None:
    qrels, base, better = _dicts()
    reordered = dict(reversed(list(better.items())))
    a = rankflavor.compare(qrels, {"base": base, "better": better}, "ndcg@3", n_resamples=200)
    b = rankflavor.compare(qrels, {"base": base, "better": reordered}, "ndcg@3", n_resamples=200)
    da, db = a.to_dict(), b.to_dict()
    assert da.pop("provenance")["runs"][1]["sha256"] == db.pop("provenance")["runs"][1]["sha256"]  # canonical rows
    assert da == db


def test_identical_systems_are_not_an_error() -> None:
    qrels, base, _ = _dicts()
    p = rankflavor.compare(qrels, {"x": base, "y": dict(base)}, "ndcg@3", n_resamples=100, baseline="x")[0].pairs[0]
    assert p.delta == 0.0 and p.ties == 6 and not p.significant and all(v == 1.0 for v in p.pvalues.values())


def test_usage_errors() -> None:
    qrels, base, better = _dicts()
    with pytest.raises(UsageError, match="at least two"):
        rankflavor.compare(qrels, {"base": base}, "ndcg@3")
    with pytest.raises(UsageError, match="no system named 'nope'"):
        rankflavor.compare(qrels, {"base": base, "b": better}, "ndcg@3", baseline="nope")
    with pytest.raises(UsageError, match="unknown test"):
        rankflavor.compare(qrels, {"base": base, "b": better}, "ndcg@3", tests=["z"])
    with pytest.raises(UsageError, match="correction"):
        rankflavor.compare(qrels, {"base": base, "b": better}, "ndcg@3", correction="sidak")


def test_saved_results_refuse_other_qrels(tmp_path: Path) -> None:
    qrels, base, better = _dicts()
    other_qrels = {q: {**g, "b": 1} for q, g in qrels.items()}
    one = rankflavor.compare(qrels, {"base": base, "better": better}, "ndcg@3", n_resamples=200, baseline="base")
    two = rankflavor.compare(other_qrels, {"base2": base, "better2": better}, "ndcg@3", n_resamples=200)
    with pytest.raises(QrelsMismatchError, match="2 different qrels"):
        compare_saved([one.to_dict(), two.to_dict()])
    forced = compare_saved([one.to_dict(), two.to_dict()], force=True, n_resamples=200)
    assert forced.systems == ("base", "better", "base2", "better2") and forced.provenance["qrels"]["forced"]
    # the same qrels: the saved values tested again give the same numbers
    three = rankflavor.compare(qrels, {"base3": base, "third": better}, "ndcg@3", n_resamples=200)
    again = compare_saved([one.to_dict(), three.to_dict()], baseline="base", n_resamples=200)
    assert again.systems == ("base", "better", "base3", "third")
    p, q = again[0].pair("base", "better"), one[0].pair("base", "better")
    assert (p.delta, p.ci, p.pvalues, p.wins) == (q.delta, q.ci, q.pvalues, q.wins)
    assert p.adjusted["t"] >= q.adjusted["t"]  # Holm over three pairs now
    # and on the command line
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(one.to_dict()))
    b.write_text(json.dumps(two.to_dict()))
    res = CliRunner().invoke(cli, ["compare", "--results", str(a), str(b), "--resamples", "200"])
    assert res.exit_code == 2 and "different qrels" in res.output
    res = CliRunner().invoke(cli, ["compare", "--results", str(a), str(b), "--resamples", "200", "--force"])
    assert res.exit_code == 0, res.output


def test_provenance(tmp_path: Path) -> None:
    import hashlib

    qrels, a, b = _small(tmp_path)
    c = rankflavor.compare(qrels, [a, b], "ndcg@10", n_resamples=100, flavors=["trec_eval"])
    prov = c.to_dict()["provenance"]
    assert prov["qrels"]["sha256"] == hashlib.sha256(qrels.read_bytes()).hexdigest()
    assert [r["sha256"] for r in prov["runs"]] == [hashlib.sha256(p.read_bytes()).hexdigest() for p in (a, b)]
    assert prov["rankflavor"] == rankflavor.__version__ and len(prov["flavors"]) == 2
    s = c.to_dict()["settings"]
    assert (s["tests"], s["correction"], s["seed"], s["n_resamples"], s["alpha"]) == (
        ["t", "permutation", "bootstrap"], "tukey", 0, 100, 0.05)


def test_cli_formats(tmp_path: Path) -> None:
    qrels, a, b = _small(tmp_path)
    base = ["compare", str(qrels), str(a), str(b), "-m", "ndcg@10", "-m", "P@5", "--resamples", "300", "--baseline", "A.run"]
    runner = CliRunner()
    table = runner.invoke(cli, base)
    assert table.exit_code == 0, table.output
    flat = " ".join(table.output.split())  # (the settings line wraps at the terminal's width)
    assert "correction holm | alpha 0.05 | seed 0 | 300 resamples" in flat and "n = 30 queries" in flat
    data = json.loads(runner.invoke(cli, [*base, "--format", "json"]).output)
    assert data["settings"]["baseline"] == "A.run" and [m["name"] for m in data["measures"]] == ["ndcg@10", "P@5"]
    import csv
    import io

    out = runner.invoke(cli, [*base, "--format", "csv", "--test", "t", "--test", "sign"]).output
    rows = list(csv.DictReader(io.StringIO(out)))
    assert out.startswith("measure,name,n,a,b,mean_a,mean_b,delta") and len(rows) == 2 * 2
    assert [(r["name"], r["test"], r["significant"]) for r in rows] == [
        ("ndcg@10", "t", "True"), ("ndcg@10", "sign", ""), ("P@5", "t", "True"), ("P@5", "sign", "")]
    assert float(rows[0]["p_adjusted"]) == float(rows[0]["p"])  # Holm over one pair
    assert (rows[0]["correction"], rows[0]["alpha"], rows[0]["seed"], rows[0]["n_resamples"]) == ("holm", "0.05", "0", "300")
    md = runner.invoke(cli, [*base, "--format", "md"]).output.splitlines()
    assert md[0] == "| # | system | ndcg@10 | P@5 |" and md[1] == "|---|---|---:|---:|"
    assert md[2].startswith("| a | A.run | ") and "<sup>a</sup>" in md[3] and "**" in md[3]
    tex = runner.invoke(cli, [*base, "--format", "latex"]).output.splitlines()
    assert tex[0] == r"\begin{table}[t]" and tex[3] == r"\begin{tabular}{clcc}" and tex[-1] == r"\end{table}"
    assert tex[5] == r"\textbf{\#} & \textbf{System} & \textbf{ndcg@10} & \textbf{P@5} \\"
    assert tex[8].startswith("b & B.run & ") and "$^{a}$" in tex[8] and tex[7].count("$^") == 0
    bad = runner.invoke(cli, ["compare", str(qrels), str(a), "--resamples", "10"])
    assert bad.exit_code == 2 and "at least two" in bad.output


def test_cli_flavor_robustness_and_policy_exit_code(tmp_path: Path) -> None:
    qrels, a, b = _small(tmp_path)
    lines = b.read_text().splitlines()
    short = tmp_path / "short.run"
    short.write_text("\n".join(ln for ln in lines if not ln.startswith("q3 ")) + "\n")
    runner = CliRunner()
    res = runner.invoke(cli, ["compare", str(qrels), str(a), str(short), "--resamples", "100"])
    assert res.exit_code == 4 and "short.run lacks 1 (q3)" in res.output
    res = runner.invoke(cli, ["compare", str(qrels), str(a), str(short), "--resamples", "100", "--queries",
                              "intersection", "--flavors", "grid", "--format", "md"])
    assert res.exit_code == 0 and "Dagger" in res.output
    res = runner.invoke(cli, ["compare", str(qrels), str(a), str(short), "--resamples", "100", "--queries",
                              "intersection", "--flavors", "sklearn,gain=exp2"])
    assert res.exit_code == 0 and "1 dropped" in res.output and "flavor robustness over 2 flavors" in res.output
    res = runner.invoke(cli, ["compare", str(qrels), str(a), str(b), "--resamples", "100", "--no-ci", "--format", "json"])
    data = json.loads(res.output)
    assert data["settings"]["ci_level"] is None and data["measures"][0]["systems"][0]["ci"] == [None, None]


def test_latex_marks_a_fragile_win_with_a_dagger() -> None:
    from rankflavor.render.comparetex import render_latex

    qrels, runs = _dlike()
    c = rankflavor.compare(qrels, runs, "ndcg@3", n_resamples=200, baseline="A", flavors=["ideal=local"],
                           tests=("t",))
    assert c[0].pairs[0].significant and c[0].robustness.verdict_flips[0]
    assert r"$^{a\dagger}$" in render_latex(c)


def _dlike():  # type: ignore[no-untyped-def]
    # B wins under the global ideal (A misses r2 on half the queries), but both rank what they
    # retrieve of the relevant first, so a local ideal (the retrieved list) gives both 1.0
    # everywhere: the verdict flips with the flavor.
    qrels = {f"q{i}": {"r1": 1, "r2": 1} for i in range(8)}
    b = {f"q{i}": {"r1": 2.0, "r2": 1.5, "x": 1.0} for i in range(8)}
    a = {q: ({"r1": 2.0, "x": 1.0, "y": 0.5} if i < 4 else dict(v)) for i, (q, v) in enumerate(b.items())}
    return qrels, {"A": a, "B": b}
