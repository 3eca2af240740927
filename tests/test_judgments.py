"""Judgments: the label scale, coverage, the pool-bias warning and bounds under unjudged documents."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rankflavor
from rankflavor.cli import cli
from rankflavor.errors import EvaluationError, FlavorError, InputError
from rankflavor.judgments import Scale, bounds, judgments
from rankflavor.judgments.coverage import pool_bias
from rankflavor.measure import parse_measure

from .conftest import shared_path

FLAVORS = [
    "ndcg@10", "ndcg@10[gain=exp2]", "ndcg@10[ideal=local]", "ndcg@10[ideal=max]", "ndcg@10[ideal=recall@100]",
    "ndcg@10[discount=jk(2)]", "ndcg@10[ideal_cut=hits]", "ndcg@10[ties=averaged]", "ndcg@20[gain=exp2,ideal=local]",
    "ndcg", "P@10", "P@10[p_divisor=hits]", "AP@100", "AP", "RR", "RR@10",
]
DL19 = ("bm25", "bm25-rm3", "d-bert-kd-tasb", "splade-p-p-ensemble-distil")


def _read(path):  # type: ignore[no-untyped-def]
    """Plain reading, independent of the package: {q: {doc: grade}} / {q: [(score, doc)]}."""
    rows: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for line in open(path):
        q, _, d, _, s, *_ = line.split()
        rows[q].append((float(s), d))
    return rows


def _unjudged_top(qrels: dict[str, dict[str, int]], run: dict[str, list[tuple[float, str]]], k: int) -> dict[str, int]:
    """Unjudged documents in each query's top k, ties by docno descending (trec_eval)."""
    out = {}
    for q, docs in run.items():
        if q not in qrels:
            continue
        top = sorted(docs, key=lambda x: (-x[0], [-ord(c) for c in x[1]]))[:k]
        out[q] = sum(d not in qrels[q] for _, d in top)
    return out


@pytest.fixture(scope="module")
def dl19():  # type: ignore[no-untyped-def]
    qrels_path = shared_path("qrels", "qrels.dl19-passage.txt")
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    for line in open(qrels_path):
        q, _, d, g = line.split()
        qrels[q][d] = int(g)
    runs = {name: shared_path("runs", f"rankllm.dl19.{name}.top100.run") for name in DL19}
    return qrels_path, qrels, runs


@pytest.mark.parametrize("name", ["bm25", "d-bert-kd-tasb", "splade-p-p-ensemble-distil"])
def test_bounds_order_on_real_runs(dl19, name):  # type: ignore[no-untyped-def]
    qrels_path, qrels, runs = dl19
    b = bounds(qrels_path, runs[name], FLAVORS, scale="trec_dl")
    plain = _read(runs[name])
    for mb in b:
        lo, v, up = mb.lower, mb.value, mb.upper
        assert np.all(lo <= v + 1e-12) and np.all(v <= up + 1e-12) and np.all(up <= 1 + 1e-12), str(mb.measure)
        assert lo.mean() == pytest.approx(mb.lower_mean) and up.mean() == pytest.approx(mb.upper_mean)
        if mb.measure.k is not None:
            unjudged = _unjudged_top(qrels, plain, mb.measure.k)
            full = np.array([unjudged[str(q)] == 0 for q in mb.queries])
            assert np.array_equal(lo[full], up[full]), str(mb.measure)
            if name != "bm25":
                assert (up[~full] > lo[~full]).any(), str(mb.measure)  # the bound moves where it should


def test_pool_bias_names_the_dense_runs(dl19):  # type: ignore[no-untyped-def]
    qrels_path, qrels, runs = dl19
    cov = judgments(qrels_path, {n: p for n, p in runs.items()}, ["ndcg@10"], scale="trec_dl")
    assert sorted(cov.pool_bias) == ["d-bert-kd-tasb", "splade-p-p-ensemble-distil"]
    plain = {n: _read(p) for n, p in runs.items()}
    for r in cov.runs:  # coverage agrees with an independent count
        expect = _unjudged_top(qrels, plain[r.name], 10)
        assert {str(q): int(u) for q, u in zip(r.queries, r.unjudged, strict=True)} == expect
        for q, u, ranks in zip(r.queries, r.unjudged, r.unjudged_ranks, strict=True):
            assert len(ranks) == u and all(1 <= x <= 10 for x in ranks), q
    bm25 = cov.run("bm25")
    assert bm25.mean_unjudged < 0.01 < cov.run("d-bert-kd-tasb").mean_unjudged
    # relevant documents no run retrieved: checked against the plain files
    retrieved = {(q, d) for p in plain.values() for q, docs in p.items() for _, d in docs}
    never = {(q, d) for q, docs in qrels.items() for d, g in docs.items() if g >= 2 and (q, d) not in retrieved}
    assert {(q, d) for q, ds in cov.never_retrieved.items() for d in ds} == never
    assert cov.grades == {"0": 5158, "1": 1601, "2": 1804, "3": 697}


def test_pool_bias_rule():
    assert pool_bias({"a": 0.0, "b": 0.02, "c": 0.3}) == ["c"]
    assert pool_bias({"a": 0.20, "b": 0.22, "c": 0.24}) == []  # all alike: none is markedly worse
    assert pool_bias({"a": 0.0, "b": 0.04}) == []  # under the margin


# Flavor facts §4.3: G = 3, k = 10; dU at rank 6 unjudged.
_Q43 = {"q": {"d1": 3, "d2": 2, "d3": 0, "d4": 1, "d5": 3, "d6": 0, "d7": 2, "d8": 0, "d9": 1, "d11": 3, "d13": 2,
              "d14": 0, "d21": 3, "d22": 2, "d23": 1}}
_ORDER = ["d2", "d3", "d1", "d4", "d6", "dU", "d7", "d8", "d5", "d9", "d10", "d11", "d12", "d13", "d14",
          "d15", "d16", "d17", "d18", "d19"]
_R43 = {"q": {d: 100.0 - i for i, d in enumerate(_ORDER)}}


@pytest.mark.parametrize(("flavor", "lower", "upper", "condensed"), [
    ("ndcg@10", 0.5235, 0.5838, 0.6111),
    ("ndcg@10[gain=exp2]", 0.4550, 0.5160, 0.5521),
    ("ndcg@10[discount=jk(2)]", 0.4878, 0.5456, 0.5671),
])
def test_hand_worked_bounds(flavor, lower, upper, condensed):  # type: ignore[no-untyped-def]
    mb = bounds(_Q43, _R43, flavor, scale="trec_dl")[0]
    assert (round(mb.lower_mean, 4), round(mb.upper_mean, 4), round(mb.condensed_mean, 4)) == (lower, upper, condensed)


def test_rbp_and_residual_hand_worked():
    mb = bounds(_Q43, _R43, "RBP@10[param=0.8]", scale="trec_dl")[0]
    assert mb.measure.knobs["max_grade"] == "3"
    assert round(mb.lower_mean, 4) == 0.3729 and round(mb.upper_mean - mb.lower_mean, 4) == 0.1729
    assert round(mb.upper_mean, 4) == 0.5458
    assert rankflavor.evaluate(_Q43, _R43, "RBP@10[param=0.8,gain=binary]")[0].mean == pytest.approx(
        0.2 * sum(0.8 ** (i - 1) for i in (1, 3, 4, 7, 9, 10)))


def test_rbp_same_on_chunked_backend(tmp_path):  # type: ignore[no-untyped-def]
    qrels = shared_path("qrels", "qrels.dl19-passage.txt")
    run = shared_path("runs", "rankllm.dl19.d-bert-kd-tasb.top100.run")
    ms = ["RBP@100[max_grade=3]", "RBP_resid@100"]
    whole = rankflavor.evaluate(qrels, run, ms)
    chunked = rankflavor.evaluate(qrels, run, ms, chunk_rows=500)
    for a, b in zip(whole, chunked, strict=True):
        assert np.array_equal(a.values, b.values) and a.mean == b.mean


def test_document_gaps_rule():
    b = bounds(_Q43, _R43, "ndcg@10", scale="trec_dl")
    [(q, doc, measure, rank, if_zero, if_top, gap)] = b.document_table()
    mb = b[0]
    # one unjudged document: judging it closes the whole interval either way
    assert (q, doc, measure, rank) == ("q", "dU", "ndcg@10", 6)
    assert if_zero == pytest.approx(mb.upper_mean - mb.lower_mean) == pytest.approx(if_top) == pytest.approx(gap)
    assert b.document_gaps() == [("q", "dU", "ndcg@10", gap)]


def test_scale_appears_only_where_it_changes_the_number():
    s = rankflavor.Scale("mine", (0, 1, 2), rel=1, top=2)
    assert "max_grade" not in str(s.measure("ndcg@10"))
    assert s.measure("ndcg@10[ideal=max]").knobs["max_grade"] == "2"
    assert s.measure("ERR@10").knobs["max_grade"] == "2"
    assert "rel" not in s.measure("ndcg@10").knobs and s.measure("P@10").knobs["rel"] == "1"
    assert s.measure("P@10[rel=2]").knobs["rel"] == "2"  # a knob written in brackets wins
    assert s.measure(parse_measure("P@5")).knobs["rel"] == "1"
    with pytest.raises(FlavorError, match="declare G once"):
        s.measure("ERR@10[max_grade=4]")


def test_g_is_never_inferred():
    with pytest.raises(FlavorError, match="never taken from the data"):
        bounds(_Q43, _R43, "ndcg@10")


def test_undecided_flag():
    qrels = {"q1": {"a": 3, "b": 1}, "q2": {"c": 2}}
    runs = {"x": {"q1": {"a": 0.9, "u": 0.8}, "q2": {"c": 0.5}}, "y": {"q1": {"v": 0.9, "a": 0.8}, "q2": {"c": 0.5}},
            "z": {"q1": {"b": 0.9}, "q2": {"w": 0.5}}}
    cov = judgments(qrels, runs, ["P@2"], scale="trec_dl")
    assert set(cov.undecided["P@2"]) == {"x", "y"} and "z" not in cov.undecided["P@2"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    grades=st.lists(st.integers(0, 3), min_size=1, max_size=8),
    judged=st.lists(st.booleans(), min_size=12, max_size=12),
    scores=st.lists(st.integers(0, 5), min_size=1, max_size=12),
    flavor=st.sampled_from([*FLAVORS[:10], "P@5", "AP@5", "RR@5", "ndcg@5[ideal=local]"]),
)
def test_bounds_order_property(grades, judged, scores, flavor):  # type: ignore[no-untyped-def]
    docs = [f"d{i}" for i in range(12)]
    qrels = {"q": {docs[i]: g for i, g in enumerate(grades)}}
    qrels["q"].update({f"x{i}": 2 for i in range(2)})  # judged, never retrieved
    run = {"q": {}}
    for i, s in enumerate(scores):
        name = docs[i] if judged[i] or i >= len(grades) else f"u{i}"
        run["q"][name] = float(s)
    mb = bounds(qrels, run, flavor, scale="trec_dl")[0]
    assert mb.lower[0] <= mb.value[0] + 1e-12 and mb.value[0] <= mb.upper[0] + 1e-12 and mb.upper[0] <= 1 + 1e-12
    k = mb.measure.k or len(run["q"])
    top = sorted(run["q"].items(), key=lambda x: (-x[1], [-ord(c) for c in x[0]]))[:k]
    if all(d in qrels["q"] for d, _ in top):
        assert mb.lower[0] == mb.upper[0]


# -- bad input --------------------------------------------------------------------------------------

def test_grade_off_the_scale_names_file_and_line(write):  # type: ignore[no-untyped-def]
    q = write("qrels.txt", "1 0 a 2\n1 0 b 5\n")
    r = write("run.txt", "1 Q0 a 1 3.0 t\n")
    with pytest.raises(InputError, match=r"qrels.txt:2: grade 5 is not on the trec_dl scale"):
        judgments(q, r, scale="trec_dl")
    res = CliRunner().invoke(cli, ["judgments", str(q), str(r), "--scale", "trec_dl"])
    assert res.exit_code == 3 and "qrels.txt:2" in res.output


def test_negative_labels_follow_the_rule(write):  # type: ignore[no-untyped-def]
    q = write("qrels.txt", "1 0 a 2\n1 0 b -1\n")
    r = write("run.txt", "1 Q0 b 1 3.0 t\n1 Q0 a 2 2.0 t\n")
    mb = bounds(q, r, "P@1", scale="trec_dl")[0]  # -1: pooled, not judged; imputed for the upper bound
    assert (mb.lower_mean, mb.upper_mean) == (0.0, 1.0)
    strict = Scale("strict", (0, 1, 2, 3), rel=2, top=3, negatives="error")
    with pytest.raises(InputError, match=r"qrels\.txt:2"):
        bounds(q, r, "P@1", scale=strict)


def test_unknown_scale_name(write):  # type: ignore[no-untyped-def]
    q = write("qrels.txt", "1 0 a 2\n")
    r = write("run.txt", "1 Q0 a 1 3.0 t\n")
    res = CliRunner().invoke(cli, ["judgments", str(q), str(r), "--scale", "trec-dll"])
    assert res.exit_code == 2 and "unknown label scale" in res.output and "trec_dl" in res.output


def test_run_sharing_no_query(write):  # type: ignore[no-untyped-def]
    q = write("qrels.txt", "1 0 a 2\n")
    r = write("other.txt", "7 Q0 a 1 3.0 t\n")
    with pytest.raises(EvaluationError, match=r"other\.txt: no query is both"):
        bounds(q, r, "ndcg@10", scale="trec_dl")
    res = CliRunner().invoke(cli, ["judgments", str(q), str(r), "--scale", "trec_dl"])
    assert res.exit_code == 4 and "other.txt" in res.output


def test_cli_table_and_json(dl19):  # type: ignore[no-untyped-def]
    import json

    qrels_path, _, runs = dl19
    args = ["judgments", str(qrels_path), str(runs["bm25"]), str(runs["d-bert-kd-tasb"]), "-m", "ndcg@10",
            "--scale", "trec_dl"]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    assert "WARNING pool bias: rankllm.dl19.d-bert-kd-tasb.top100.run" in res.output
    assert "0.7210 [0.7210, 0.7825]" in res.output
    out = json.loads(CliRunner().invoke(cli, [*args, "--format", "json"]).output)
    assert out["pool_bias"]["runs"] == ["rankllm.dl19.d-bert-kd-tasb.top100.run"]
    tasb = out["runs"][1]["bounds"][0]
    assert tasb["lower"] <= tasb["value"] <= tasb["upper"] <= 1


def test_prefix_path_equals_full_ranking(dl19, tmp_path):  # type: ignore[no-untyped-def]
    """A run in rank order takes the prefix path; the same lines shuffled rank every row: same numbers."""
    qrels_path, _, runs = dl19
    lines = open(runs["d-bert-kd-tasb"]).read().splitlines()
    np.random.default_rng(7).shuffle(lines)
    shuffled = tmp_path / "shuffled.run"
    shuffled.write_text("\n".join(lines) + "\n")
    ms = ["ndcg@10", "P@5", "ndcg@10[ideal=recall@50]"]
    a = judgments(qrels_path, {"x": runs["d-bert-kd-tasb"]}, ms, scale="trec_dl").runs[0]
    b = judgments(qrels_path, {"x": shuffled}, ms, scale="trec_dl").runs[0]
    assert np.array_equal(a.unjudged, b.unjudged) and a.unjudged_ranks == b.unjudged_ranks
    for x, y in zip(a.bounds, b.bounds, strict=True):
        assert np.array_equal(x.lower, y.lower) and np.allclose(x.upper, y.upper, rtol=0, atol=1e-12)
