"""explain: one query's NDCG position by position.

Oracles: every explained value is compared with rankflavor.evaluate() for the same query and
flavor (NDCG, and DCG through the dcg metric), bit for bit, across many random flavors and every
query; a plain-Python NDCG written here checks DCG and IDCG for the common flavors independently.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner

import rankflavor
from rankflavor.cli.main import cli
from rankflavor.errors import FlavorError, UsageError
from rankflavor.flavor.flavor import KNOBS
from rankflavor.metrics.measure import Measure

from ...conftest import shared_path
from ..spread.test_spread import random_case

CHOICES: dict[str, list[str]] = {
    "gain": ["linear", "exp2", "binary", "{0:0,1:2,2:5,3:9}"],
    "discount": ["log2", "jk(2)", "jk(3)", "reciprocal"],
    "ideal": ["global", "local", "recall@6", "max"],
    "ideal_cut": ["k", "hits", "none"],
    "rel": ["1", "2"],
    "unjudged": ["zero", "condensed"],
    "negatives": ["unjudged", "zero"],
    "ties": ["docno_desc", "docno_asc", "input_order", "averaged", "pessimistic", "optimistic"],
    "precision": ["float64", "float32"],
    "depth": ["none", "7"],
    "empty": ["zero", "one", "nan", "skip"],
    "missing": ["zero", "skip"],
}
# Knobs other helpers add to the NDCG kernel, exercised when present.
OPTIONAL: dict[str, list[str]] = {"min_grade": ["none", "2"], "unjudged_grade": ["none", "1"]}


def random_flavors(n: int, seed: int) -> list[Measure]:
    rng = np.random.default_rng(seed)
    choices = {**CHOICES, **{k: v for k, v in OPTIONAL.items() if k in KNOBS}}
    if "as_supplied" in KNOBS["ideal"].values:
        choices["ideal"] = [*choices["ideal"], "as_supplied"]
    out = []
    for _ in range(n):
        knobs = {k: str(rng.choice(v)) for k, v in choices.items()}
        if knobs["ideal"] == "max":
            knobs["max_grade"] = "3"
        k = [None, 3, 5, 10][int(rng.integers(4))]
        metric = "ndcg" if rng.random() < 0.85 else "dcg"
        from rankflavor.flavor.flavor import Flavor

        out.append(Measure(metric, k, Flavor(**knobs)))
    return out


def _per_query(qrels, run, measure):  # type: ignore[no-untyped-def]
    return rankflavor.evaluate(qrels, run, [measure])[0].per_query()


def _same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return a == b or (math.isnan(a) and math.isnan(b))


@pytest.mark.parametrize("seed", range(4))
def test_every_value_equals_evaluate_across_flavors_and_queries(seed: int) -> None:
    qrels, run = random_case(seed, negatives=seed % 2 == 1)
    queries = sorted(qrels)
    checked = 0
    for m in random_flavors(40, seed):
        values = _per_query(qrels, run, m)
        dcg_measure = Measure("dcg", m.k, m.flavor)
        dcgs = _per_query(qrels, run, dcg_measure)
        for q in queries:
            e = rankflavor.explain(qrels, run, q, m)
            assert e.flavor == str(m)
            assert _same(e.value, values.get(q)), (str(m), q, e.value, values.get(q))
            if q in dcgs:
                assert e.dcg == dcgs[q], (str(m), q)
            # The rows are the sum: contributions add up, rank by rank, to DCG exactly.
            cum = 0.0
            for r in e.rows:
                assert r.contribution == (r.gain / r.discount if r.in_cut else 0.0)
                cum += r.contribution
                assert r.cumulative == cum
            assert e.dcg == cum
            if m.metric == "ndcg":
                icum = 0.0
                for s in e.ideal:
                    assert s.contribution == s.gain / s.discount
                    icum += s.contribution
                    assert s.cumulative == icum
                assert e.idcg == icum
                if e.status == "ok":
                    assert e.ndcg == e.dcg / e.idcg
            checked += 1
    assert checked == 40 * len(queries)


@pytest.mark.parametrize("ideal", ["global", "local", "recall@6", "max", "as_supplied"])
def test_the_explained_ideal_is_the_kernels(ideal: str) -> None:
    """For every ideal and cut, explain's IDCG is the kernel's (ndcg.idcg on the plan's ranking of
    every query) bit for bit, and its NDCG evaluate's."""
    from rankflavor.align import align
    from rankflavor.io.inputs import as_qrels, as_run
    from rankflavor.metrics.ndcg import idcg
    from rankflavor.order import Ordering, Ranker

    for seed in range(2):
        qrels, run = random_case(seed + 40, negatives=seed == 1)
        aligned = align(as_qrels(qrels), as_run(run))
        ranker = Ranker(aligned)
        for cut in ("k", "hits", "none"):
            for k in (None, 3):
                for extra in ("", ",depth=5,unjudged=condensed"):
                    m = rankflavor.parse_measure(f"ndcg{'' if k is None else f'@{k}'}[ideal={ideal},ideal_cut={cut},"
                                                 f"max_grade=3{extra}]")
                    kernel = idcg(ranker.rank(Ordering.of(m.flavor)), m)
                    values = _per_query(qrels, run, m)
                    for q in qrels:
                        e = rankflavor.explain(qrels, run, q, m)
                        code = int(np.flatnonzero(aligned.query_ids == q)[0])
                        assert e.idcg == kernel[code], (str(m), q)
                        assert _same(e.value, values.get(q)), (str(m), q)
                        assert [s.rank for s in e.ideal] == list(range(1, len(e.ideal) + 1))
                        assert e.ideal_cut is None or len(e.ideal) <= e.ideal_cut
                        # each slot names the document whose judgment fills it
                        assert all(s.doc is None if ideal == "max" else qrels[q][s.doc] == s.grade for s in e.ideal)


def _plain_ndcg(qrels: dict, run: dict, q: str, k: int, gain: str, ideal: str) -> tuple[float, float]:
    """DCG@k and IDCG@k by the textbook definitions: ties by docno descending, log2(i+1)."""
    g = (lambda x: x) if gain == "linear" else (lambda x: 2.0**x - 1.0)
    judged = qrels.get(q, {})
    ranked = sorted(run.get(q, {}).items(), key=lambda t: (t[1], t[0].encode()), reverse=True)
    dcg = sum(g(judged.get(d, 0.0)) / math.log2(i + 2) for i, (d, _) in enumerate(ranked[:k]))
    pool = [judged[d] for d, _ in ranked if d in judged] if ideal == "local" else list(judged.values())
    ideal_gains = sorted((g(x) for x in pool if g(x) > 0), reverse=True)[:k]
    return dcg, sum(x / math.log2(i + 2) for i, x in enumerate(ideal_gains))


@pytest.mark.parametrize("gain", ["linear", "exp2"])
@pytest.mark.parametrize("ideal", ["global", "local"])
def test_dcg_and_idcg_against_a_plain_implementation(gain: str, ideal: str) -> None:
    for seed in range(5):
        qrels, run = random_case(seed + 20)
        for q in qrels:
            e = rankflavor.explain(qrels, run, q, f"ndcg@5[gain={gain},ideal={ideal}]")
            dcg, idcg = _plain_ndcg(qrels, run, q, 5, gain, ideal)
            assert e.dcg == pytest.approx(dcg, abs=1e-12)
            assert e.idcg == pytest.approx(idcg, abs=1e-12)


def test_real_run_queries_equal_evaluate() -> None:
    qrels = str(shared_path("qrels", "qrels.dl19-passage.txt"))
    run = str(shared_path("runs", "rankllm.dl19.splade-p-p-ensemble-distil.top100.run"))  # tied scores
    tables = rankflavor.read_qrels(qrels), rankflavor.read_run(run)
    for text in ("trec_eval:ndcg_cut.10", "trec_eval:ndcg", "ndcg@10[ties=averaged,ideal=local,gain=exp2]",
                 "ndcg@20[unjudged=condensed,depth=50,discount=jk(2)]", "dcg@10[ties=pessimistic]"):
        values = rankflavor.evaluate(*tables, text)[0].per_query()
        for q, v in values.items():
            assert rankflavor.explain(*tables, q, text).value == v, (text, q)


# ---------------------------------------------------------------------------------------------
# What is shown


def test_ignored_documents_and_reasons() -> None:
    qrels = {"q": {"a": 3, "b": 0, "c": 2, "z": 1}}
    run = {"q": {"a": 0.9, "u1": 0.8, "b": 0.7, "c": 0.6, "u2": 0.5, "d": 0.1}}
    e = rankflavor.explain(qrels, run, "q", "ndcg@2[unjudged=condensed,depth=5]")
    assert [r.doc for r in e.rows] == ["a", "b", "c"]  # u1 removed, ranks closed up
    kinds = {i.doc: i.kind for i in e.ignored}
    assert kinds == {"u1": "condensed", "u2": "condensed", "d": "depth", "c": "cutoff"}
    assert "unjudged=condensed" in next(i.reason for i in e.ignored if i.doc == "u1")
    assert "depth=5" in next(i.reason for i in e.ignored if i.doc == "d")
    assert [(s.doc, s.retrieved_rank) for s in e.ideal] == [("a", 1), ("c", 3)]  # global ideal, cut at k=2
    local = rankflavor.explain(qrels, run, "q", "ndcg@2[ideal=local]")
    assert "still a candidate for the ideal" in next(i.reason for i in local.ignored if i.doc == "c")


def test_duplicate_lines_are_listed(tmp_path) -> None:  # type: ignore[no-untyped-def]
    qp, rp = tmp_path / "q", tmp_path / "r"
    qp.write_text("q 0 a 1\nq 0 b 2\n")
    rp.write_text("q Q0 a 1 3.0 t\nq Q0 b 2 2.0 t\nq Q0 a 3 1.0 t\n")
    e = rankflavor.explain(str(qp), str(rp), "q", "ndcg@3[duplicates=first]")
    (dup,) = e.ignored
    assert (dup.doc, dup.kind, dup.line, dup.score) == ("a", "duplicate", 3, 1.0)


def test_tie_groups_and_averaged_gains() -> None:
    qrels = {"q": {"a": 3, "b": 0, "c": 1}}
    run = {"q": {"a": 1.0, "b": 1.0, "c": 0.5, "d": 0.5, "e": 0.1}}
    e = rankflavor.explain(qrels, run, "q", "ndcg@5[ties=averaged]")
    assert e.tie_groups == {"T1": [1, 2], "T2": [3, 4]}
    assert [r.gain for r in e.rows[:4]] == [1.5, 1.5, 0.5, 0.5]
    # Each row keeps its own gain beside the group mean (order inside a group is the engine's choice).
    assert sorted(r.raw_gain for r in e.rows[:2]) == [0.0, 3.0] and sorted(r.raw_gain for r in e.rows[2:4]) == [0.0, 1.0]
    assert e.rows[4].tie_group is None


def test_missing_and_empty_queries_follow_their_policy() -> None:
    qrels, run = random_case(0)  # q1: nothing relevant; q2: not in the run
    e = rankflavor.explain(qrels, run, "q2", "ndcg@5[missing=zero]")
    assert (e.status, e.value, e.rows) == ("missing", 0.0, ())
    assert rankflavor.explain(qrels, run, "q2", "ndcg@5[missing=skip]").value is None
    e = rankflavor.explain(qrels, run, "q1", "ndcg@5[empty=one]")
    assert (e.status, e.idcg, e.ndcg) == ("empty", 0.0, 1.0)
    e = rankflavor.explain(qrels, run, "q1", "ndcg@5[empty=error]")
    assert e.value is None and any("empty=error" in n for n in e.notes)


def test_bad_requests_are_usage_errors() -> None:
    qrels, run = random_case(0)
    with pytest.raises(UsageError, match="Did you mean 'q3'"):
        rankflavor.explain(qrels, run, "q33", "ndcg@5")
    with pytest.raises(UsageError, match="only in the run"):
        rankflavor.explain(qrels, run, "q_run_only", "ndcg@5")
    with pytest.raises(UsageError, match="ndcg and dcg"):
        rankflavor.explain(qrels, run, "q0", "AP@5")
    with pytest.raises(FlavorError, match="max_grade"):
        rankflavor.explain(qrels, run, "q0", "ndcg@5[ideal=max]")


def test_json_has_the_stable_keys_and_cli_works(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from rankflavor.render.explainfmt import render_explanation

    qrels, run = random_case(6)
    e = rankflavor.explain(qrels, run, "q0", "trec_eval:ndcg_cut.10")
    data = json.loads(render_explanation(e, "json"))
    assert {"dcg", "idcg", "ndcg", "flavor", "rows", "ideal", "ignored"} <= set(data)
    assert data["ndcg"] == e.ndcg and data["flavor"] == e.flavor and len(data["rows"]) == len(e.rows)
    qp, rp = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qp.write_text("".join(f"{q} 0 {d} {int(g)}\n" for q, docs in qrels.items() for d, g in docs.items()))
    rp.write_text("".join(f"{q} Q0 {d} {i + 1} {s} t\n" for q, docs in run.items() for i, (d, s) in enumerate(docs.items())))
    runner = CliRunner()
    res = runner.invoke(cli, ["explain", str(qp), str(rp), "-Q", "q0", "-m", "ndcg@5[ties=averaged]"])
    assert res.exit_code == 0, res.output
    assert "ideal list" in res.output and "NDCG" in res.output
    res = runner.invoke(cli, ["explain", str(qp), str(rp), "-Q", "q0", "--preset", "trec_eval", "-m", "ndcg_cut.5",
                              "--format", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["ndcg"] == rankflavor.evaluate(str(qp), str(rp), "trec_eval:ndcg_cut.5")[0].per_query()["q0"]
    res = runner.invoke(cli, ["explain", str(qp), str(rp), "-Q", "nope"])
    assert res.exit_code == 2 and "neither the run nor the qrels" in res.output
