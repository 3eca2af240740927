"""identify: the real tools' per-query outputs on random data name their preset; perturbed output
names the perturbed queries; a published mean of a real run finds the trec_eval flavor.

The random inputs come from the differential tests' generators (``random_case`` of
test_presets_ir, ``random_groups`` of test_presets_ml); the tools run here, through their own
APIs. trec_eval itself is not installed: pytrec_eval (its C code) stands in for it on random
data, and the shipped trec_eval 9.0.8 outputs in ../shared/data/expected are the real ``-q`` text.

The data exercises what the tools differ in: judged queries the run misses (ir_measures lists
them with 0, pytrec_eval leaves them out), run-only queries, queries with nothing relevant,
negative grades, exact ties (short rankings for ranx, whose numba sort keeps input order there)
and scores equal in float32 only. The tools are named with the plain measure, no dialect hint.
trec_eval and pytrec_eval run the same C code and differ only in how they read fractional grades,
which pytrec_eval refuses: the numbers cannot tell them apart, the output's form does (trec_eval
``-q`` text, pytrec_eval's nested JSON).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

import rankflavor
from rankflavor.analysis.identify import Identification, identify, tolerance_of
from rankflavor.analysis.identify.perquery import parse_per_query, read_per_query
from rankflavor.cli.main import cli
from rankflavor.errors import EvaluationError, InputError, UsageError
from rankflavor.render.identifyfmt import render_identification

from ...conftest import shared_path
from ...presets.test_presets_ir import random_case
from ...presets.test_presets_ml import random_groups

DL19_QRELS = ("qrels", "qrels.dl19-passage.txt")
DL19_BM25 = ("runs", "rankllm.dl19.bm25.top100.run")
DL19_TREC_EVAL = ("expected", "rankllm.dl19.bm25.top100.all_trec.q.c.txt")


def first_presets(found: Identification) -> list[str]:
    assert found.groups, [(u.query, u.reported, u.nearest) for u in found.unexplained]
    return [p for c in found.groups[0].candidates for p in c.presets]


def perturb(values: dict[str, float], n: int = 3) -> tuple[dict[str, float], set[str]]:
    """Move the value of ``n`` queries with room to move (an explained query is left alone)."""
    picked = [q for q, v in sorted(values.items()) if 0.2 < v < 0.8][:n]
    return {q: v + 0.05 if q in picked else v for q, v in values.items()}, set(picked)


def assert_names_perturbed(qrels: Any, run: Any, values: dict[str, float], measure: str) -> None:
    bad, picked = perturb(values)
    found = identify(qrels, run, measure=measure, per_query=bad, ks=())
    assert not found.explained
    assert {u.query for u in found.unexplained} == picked
    assert not any(u.by_some for u in found.unexplained)  # no flavor reproduces a moved value
    for u in found.unexplained:
        assert u.best_value is not None and abs(u.best_value - (u.reported - 0.05)) < 1e-9


# ---------------------------------------------------------------------------------------------
# IR tools on random_case data


def _pytrec(qrels: Any, run: Any) -> dict[str, float]:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    out = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)
    return {q: v["ndcg_cut_10"] for q, v in out.items()}


def test_pytrec_eval_and_trec_eval_per_query(tmp_path: Path) -> None:
    qrels, run = random_case(5, 120, numeric_ids=True, negatives=True)
    assert set(qrels) - set(run) and set(run) - set(qrels)  # missing and run-only queries
    values = _pytrec(qrels, run)
    assert set(values) == set(qrels) & set(run)  # pytrec_eval leaves the missing queries out
    path = tmp_path / "pytrec.json"
    path.write_text(json.dumps({q: {"ndcg_cut_10": v} for q, v in values.items()}))  # pytrec_eval's own layout
    found = identify(qrels, run, measure="ndcg@10", per_query=path, ks=())
    assert {"trec_eval", "pytrec_eval"} <= set(first_presets(found))
    assert "rankflavor" not in first_presets(found)  # float64 scores break the float32 ties differently
    assert dict(found.groups[0].indistinct)["fractional"]  # what would separate trec_eval from pytrec_eval
    assert found.best is not None and found.best.presets[0] == "pytrec_eval"  # the nested JSON form, no hint
    hinted = identify(qrels, run, measure="pytrec_eval:ndcg_cut.10", per_query=path, ks=())
    assert hinted.best is not None and hinted.best.presets[0] == "pytrec_eval"
    named = identify(qrels, run, measure=None, per_query=path, ks=())  # its trec_eval measure name is no hint
    assert named.best is not None and named.best.presets[0] == "pytrec_eval"
    # the same numbers as a flat dict name no tool: ir_measures, which would have listed the missing
    # queries (with 0), comes after the tools that leave them out
    flat = first_presets(identify(qrels, run, measure="ndcg@10", per_query=values, ks=()))
    assert flat.index("ir_measures") > max(flat.index("trec_eval"), flat.index("pytrec_eval"))
    # trec_eval -q text at 4 decimals (trec_eval's own print format)
    text = tmp_path / "trec.txt"
    text.write_text("".join(f"{'ndcg_cut_10':<22}\t{q}\t{v:6.4f}\n" for q, v in sorted(values.items())))
    as_trec = identify(qrels, run, measure=None, per_query=text, ks=())
    assert as_trec.measure.name == "ndcg@10"  # read from the file's measure name
    assert first_presets(as_trec)[0] == "trec_eval"
    plain = identify(qrels, run, measure="ndcg@10", per_query=text, ks=())
    assert plain.best is not None and plain.best.presets[0] == "trec_eval"  # the -q text form, no hint
    assert_names_perturbed(qrels, run, values, "ndcg@10")


def test_ir_measures_per_query() -> None:
    ir_measures = pytest.importorskip("ir_measures")
    qrels, run = random_case(6, 120, numeric_ids=True, negatives=True)
    measure = ir_measures.parse_measure("nDCG@10")
    values = {m.query_id: m.value for m in ir_measures.iter_calc([measure], qrels, run)}
    assert set(values) == set(qrels) and set(qrels) - set(run)  # it lists the missing queries, with 0
    mean = ir_measures.calc_aggregate([measure], qrels, run)[measure]
    found = identify(qrels, run, value=round(mean, 4), measure="ir_measures:nDCG@10", per_query=values, ks=())
    assert found.best is not None and found.best.presets[0] == "ir_measures"
    assert "trec_eval" not in first_presets(found)  # ir_measures averages missing queries as 0
    plain = identify(qrels, run, measure="ndcg@10", per_query=values, ks=())  # no hint, no mean
    assert plain.best is not None and plain.best.presets[0] == "ir_measures"
    assert not {"trec_eval", "pytrec_eval", "rankflavor"} & {p for c in plain.candidates for p in c.presets}
    assert_names_perturbed(qrels, run, values, "ndcg@10")


def test_ranx_per_query() -> None:
    ranx = pytest.importorskip("ranx")
    qrels, run = random_case(7, 150, negatives=True)
    common = sorted(set(qrels) & set(run))  # ranx without make_comparable needs one query set
    # exact ties only in rankings of at most 15 documents, which numba's sort orders by insertion
    # (stable): ranx then keeps input order, where trec_eval orders by docno
    qrels, run = {q: qrels[q] for q in common}, {q: dict(list(run[q].items())[:15]) for q in common}
    r = ranx.Run(run)
    ranx.evaluate(ranx.Qrels(qrels), r, "ndcg@10")  # one ranx call: its numba JIT is the test's cost
    values = {q: float(v) for q, v in r.scores["ndcg@10"].items()}
    found = identify(qrels, run, measure="ndcg@10", per_query=values, ks=())  # no hint
    assert found.best is not None and found.best.presets[0] == "ranx"
    assert "ties" not in dict(found.groups[0].indistinct)  # the ties pinned the tie rule
    assert not {"trec_eval", "rankflavor"} & set(first_presets(found))
    hinted = identify(qrels, run, measure="ranx:ndcg@10", per_query=values, ks=())
    assert hinted.best is not None and hinted.best.presets[0] == "ranx"
    assert_names_perturbed(qrels, run, values, "ndcg@10")


# ---------------------------------------------------------------------------------------------
# ML tools on random_groups data (every candidate labelled; ties, all-zero groups, float32 near-ties)


def _groups_as_dicts(seed: int, n: int) -> tuple[Any, dict[str, dict[str, float]], dict[str, dict[str, float]]]:
    groups = random_groups(seed, n, min_size=2, max_size=25)
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, float]] = {}
    run: dict[str, dict[str, float]] = {}
    for i in range(len(groups)):
        y, s = groups.group(i)
        names = [f"d{j:03d}" for j in rng.permutation(len(y))]  # input order is not docno order
        qrels[f"g{i:03d}"] = {d: float(g) for d, g in zip(names, y, strict=True)}
        run[f"g{i:03d}"] = {d: float(v) for d, v in zip(names, s, strict=True)}
    return groups, qrels, run


def test_sklearn_per_query() -> None:
    sk = pytest.importorskip("sklearn.metrics")
    groups, qrels, run = _groups_as_dicts(51, 120)
    values = {}
    for i in range(len(groups)):
        y, s = groups.group(i)
        values[f"g{i:03d}"] = float(sk.ndcg_score(y[None, :], s[None, :], k=10))
    found = identify(qrels, run, measure="ndcg@10", per_query=values, ks=())
    assert found.best is not None and found.best.presets[0] == "sklearn"
    assert_names_perturbed(qrels, run, values, "ndcg@10")


def test_lightgbm_per_query() -> None:
    lgb = pytest.importorskip("lightgbm")
    groups, qrels, run = _groups_as_dicts(52, 100)
    params = {"objective": "lambdarank", "metric": "ndcg", "eval_at": [10], "verbose": -1, "num_threads": 1}
    train = lgb.Dataset(np.zeros((2, 1)), np.array([0.0, 1.0]), group=[2], params=params, free_raw_data=False)
    booster = lgb.Booster(params, train)
    for i in range(len(groups)):  # a Booster without trees scores each group by its init_score
        y, s = groups.group(i)
        booster.add_valid(lgb.Dataset(np.zeros((len(y), 1)), y, group=[len(y)], init_score=s, reference=train,
                                      params=params), f"g{i:03d}")
    values = {ev.dataset_name: ev.metric_value for ev in booster.eval_valid()}
    found = identify(qrels, run, measure="ndcg@10", per_query=values, ks=())
    assert found.best is not None and found.best.presets[0] == "lightgbm"
    assert_names_perturbed(qrels, run, values, "ndcg@10")


# ---------------------------------------------------------------------------------------------
# Real data: a published mean, and real trec_eval -q text


def test_published_mean_of_dl19_bm25_finds_trec_eval() -> None:
    qrels, run = shared_path(*DL19_QRELS), shared_path(*DL19_BM25)
    found = identify(qrels, run, value="0.5058", measure="ndcg@10", ks=())  # ndcg_cut_10 'all' of the reference
    assert "trec_eval" in {p for c in found.candidates for p in c.presets}
    assert found.n_flavors >= 2000
    assert all(abs(c.mean - 0.5058) <= 0.00005 for c in found.candidates)
    assert "lightgbm" not in {p for c in found.candidates for p in c.presets}  # exp2 gain moves it away


def test_real_trec_eval_q_text(tmp_path: Path) -> None:
    qrels, run = shared_path(*DL19_QRELS), shared_path(*DL19_BM25)
    text = shared_path(*DL19_TREC_EVAL)  # -m all_trec: the file holds 94 measures
    found = identify(qrels, run, measure="ndcg@10", per_query=text, ks=())
    assert found.value == 0.5058 and found.n_reported == 43  # the 'all' row is the mean
    assert {"trec_eval", "trec_dl"} <= set(first_presets(found))
    lines = [ln for ln in text.read_text().splitlines() if ln.startswith("ndcg_cut_10 ")]
    moved = lines[0].rsplit("\t", 1)[0] + "\t0.9999"
    bad = tmp_path / "bad.txt"
    bad.write_text("\n".join([moved, *lines[1:]]) + "\n")
    wrong = identify(qrels, run, measure=None, per_query=bad, ks=())
    assert not wrong.explained
    assert [(u.query, u.line) for u in wrong.unexplained] == [(lines[0].split("\t")[1], 1)]


# ---------------------------------------------------------------------------------------------
# Readers, rules and the command


def test_readers_name_file_and_line(tmp_path: Path) -> None:
    assert parse_per_query("query,value\nq1,0.5\nq2,0.25\n", "x.csv").queries == ("q1", "q2")
    assert parse_per_query("q1,0.5\n", "x.csv").decimals.tolist() == [1]
    with pytest.raises(InputError, match=r"x\.csv:3: expected a number"):
        parse_per_query("query,value\nq1,0.5\nq2,abc\n", "x.csv")
    with pytest.raises(InputError, match=r"t\.txt:2: query 'q1' is listed twice \(first on line 1\)"):
        parse_per_query("ndcg q1 0.5\nndcg q1 0.6\n", "t.txt")
    with pytest.raises(InputError, match=r"t\.txt:1: expected measure query value"):
        parse_per_query("ndcg q1 0.5 extra\n", "t.txt")
    with pytest.raises(InputError, match=r"j\.json:1: not valid JSON"):
        parse_per_query('{"q1": 0.5,', "j.json")
    with pytest.raises(UsageError, match="2 measures"):
        parse_per_query("P_10 q1 0.5\nndcg q1 0.6\n", "t.txt")
    assert tolerance_of(4) == 0.00005 and tolerance_of(17) == 1e-9
    forms = {"ndcg_cut_10 q1 0.5\n": ("trec_eval", ("trec_eval", "trec_dl")), "q1 0.5\n": ("text", ()),
             "q1,0.5\n": ("csv", ()), '{"q1": 0.5}': ("json", ()),
             '{"q1": {"ndcg_cut_10": 0.5}}': ("nested_json", ("pytrec_eval",))}
    assert {t: (r.form, r.writers) for t in forms for r in [parse_per_query(t, "f")]} == forms
    assert read_per_query({"q1": 0.5}).form == "mapping"
    assert read_per_query({"q1": {"ndcg": 0.5}}).writers == ("pytrec_eval",)  # pytrec_eval's evaluate() dict
    other = tmp_path / "p10.txt"
    other.write_text("P_10 q1 0.5000\n")
    with pytest.raises(UsageError, match=r"P_10 \(P@10\), not ndcg@10"):
        identify({"q1": {"a": 1}}, {"q1": {"a": 1.0}}, measure="ndcg@10", per_query=other)


def test_groups_that_match_the_mean_are_separated_by_queries() -> None:
    qrels = {"q1": {"a": 2, "b": 1}, "q2": {"c": 1, "d": 3}}
    run = {"q1": {"b": 0.9, "a": 0.5}, "q2": {"c": 0.9, "x": 0.8, "d": 0.7}}
    found = identify(qrels, run, value=0.5, tolerance=1.0, measure="ndcg@3", ks=(), presets=False,
                     grid={"gain": ["linear", "exp2"], "discount": ["log2", "jk(2)"]})
    assert len(found.groups) == 4 and len(found.separations) == 3
    per = {c.flavor: rankflavor.evaluate(qrels, run, [c.measure])[0].per_query() for c in found.candidates}
    first = per[found.groups[0].best.flavor]
    for s in found.separations:
        theirs = per[found.groups[s.other].best.flavor]
        assert set(s.queries) == {q for q in first if abs(first[q] - theirs[q]) > 0.5e-4}
        assert s.queries  # every pair differs somewhere


def test_value_rule_uses_printed_precision() -> None:
    qrels = {"q1": {"a": 1, "b": 1}}
    run = {"q1": {"a": 0.9, "x": 0.8, "b": 0.7}}
    exact = rankflavor.evaluate(qrels, run, ["ndcg@3"])[0].mean  # 0.9197...
    assert identify(qrels, run, value=f"{exact:.4f}", measure="ndcg@3", ks=()).explained
    assert not identify(qrels, run, value=f"{exact + 0.0001:.4f}", measure="ndcg@3", ks=(), presets=False,
                        grid={"gain": ["linear"]}).explained
    with pytest.raises(UsageError, match="--value"):
        identify(qrels, run, measure="ndcg@3")


def test_inputs_sharing_no_query_raise_the_typed_error() -> None:
    # (presets that score run-only queries, such as quepid's, have something to score: 0.0 each)
    with pytest.raises(EvaluationError, match="no query is both in the run and in the qrels"):
        identify({"q1": {"a": 1}}, {"q2": {"a": 1.0}}, value="0.5", ks=(), grid={"gain": ["linear"]}, presets=False)


def test_spread_skips_a_preset_that_reads_the_metric_as_several() -> None:
    # lightgbm reads plain "ndcg" as ndcg@1..@5: spread and identify skip it with a note
    s = rankflavor.spread({"q1": {"a": 1}}, {"q1": {"a": 1.0}}, "ndcg", grid={"gain": ["linear"]})
    assert any("preset lightgbm skipped" in n for n in s.notes)


def test_cli_identify(tmp_path: Path) -> None:
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("q1 0 a 2\nq1 0 b 1\nq2 0 c 1\n")
    run.write_text("q1 Q0 b 1 0.9 t\nq1 Q0 a 2 0.5 t\nq2 Q0 x 1 0.9 t\nq2 Q0 c 2 0.9 t\n")
    res = CliRunner().invoke(cli, ["identify", str(qrels), str(run), "--value", "0.9299", "-m", "ndcg@2",
                                   "--format", "json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["explained"] and data["groups"][0]["candidates"][0]["presets"] == ["trectools"]  # docno_asc ties
    found = identify(qrels, run, "0.9299", "ndcg@2", ks=())
    assert "preset trectools" in render_identification(found, "table")
    bad = tmp_path / "bad.csv"
    bad.write_text("q,v\n1,x\n")
    res = CliRunner().invoke(cli, ["identify", str(qrels), str(run), "--per-query", str(bad)])
    assert res.exit_code == 3 and "bad.csv:2" in res.output
    res = CliRunner().invoke(cli, ["identify", str(qrels), str(run)])
    assert res.exit_code == 2 and "--value" in res.output
