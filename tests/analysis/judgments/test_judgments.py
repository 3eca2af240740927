"""Judgments: the label scale, coverage, the pool-bias warning, and the bounds on real and
hand-worked data (exactness against brute force over every grading: ``test_bounds_exact.py``)."""

from __future__ import annotations

import itertools
import json
import math
from collections import defaultdict

import numpy as np
import pytest
from click.testing import CliRunner

import rankflavor
from rankflavor.analysis.judgments import Scale, bounds, judgments
from rankflavor.analysis.judgments.bounds import scope_text
from rankflavor.analysis.judgments.coverage import pool_bias
from rankflavor.cli.main import cli
from rankflavor.errors import EvaluationError, FlavorError, InputError
from rankflavor.metrics.measure import parse_measure

from ...conftest import shared_path
from .brute_bounds import scope_holes

FLAVORS = [
    "ndcg@10", "ndcg@10[gain=exp2]", "ndcg@10[ideal=local]", "ndcg@10[ideal=max]", "ndcg@10[ideal=recall@100]",
    "ndcg@10[discount=jk(2)]", "ndcg@10[ideal_cut=hits]", "ndcg@10[ties=averaged]", "ndcg@20[gain=exp2,ideal=local]",
    "ndcg", "P@10", "P@10[p_divisor=hits]", "AP@100", "AP", "RR", "RR@10", "ERR@10", "RBP@50", "dcg@10",
]
DL19 = ("bm25", "bm25-rm3", "d-bert-kd-tasb", "splade-p-p-ensemble-distil")


def _read(path):  # type: ignore[no-untyped-def]
    """Plain reading, independent of the package: {q: [(score, doc)]}."""
    rows: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for line in open(path):
        q, _, d, _, s, *_ = line.split()
        rows[q].append((float(s), d))
    return rows


def _top(docs: list[tuple[float, str]], k: int | None = None) -> list[str]:
    """trec_eval's order: score descending, then docno descending."""
    return [d for _, d in sorted(docs, key=lambda x: (-x[0], [-ord(c) for c in x[1]]))][:k]


def _unjudged_top(qrels: dict[str, dict[str, int]], run: dict[str, list[tuple[float, str]]], k: int) -> dict[str, int]:
    """Unjudged documents in each query's top k."""
    return {q: sum(d not in qrels[q] for d in _top(docs, k)) for q, docs in run.items() if q in qrels}


@pytest.fixture(scope="module")
def dl19():  # type: ignore[no-untyped-def]
    qrels_path = shared_path("qrels", "qrels.dl19-passage.txt")
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    for line in open(qrels_path):
        q, _, d, g = line.split()
        qrels[q][d] = int(g)
    runs = {name: shared_path("runs", f"rankllm.dl19.{name}.top100.run") for name in DL19}
    return qrels_path, qrels, runs


@pytest.mark.parametrize("name", ["bm25", "d-bert-kd-tasb"])
def test_bounds_on_real_runs(dl19, name):  # type: ignore[no-untyped-def]
    """Every flavor: lower <= zero-imputed value <= upper (grade 0 is on the scale, so the zero-
    imputed value is one grading's), an NDCG never past 1, and a query without an unjudged document
    in scope (written from the definition, tests/analysis/judgments/brute_bounds.py) has no interval at all."""
    qrels_path, qrels, runs = dl19
    b = bounds(qrels_path, runs[name], FLAVORS, scale="trec_dl")
    plain = _read(runs[name])
    for mb in b:
        lo, v, up = mb.lower, mb.value, mb.upper
        assert np.all(lo <= v + 1e-12) and np.all(v <= up + 1e-12), str(mb.measure)
        if mb.measure.metric != "dcg":
            assert np.all(up <= 1 + 1e-12), str(mb.measure)
        assert lo.mean() == pytest.approx(mb.lower_mean) and up.mean() == pytest.approx(mb.upper_mean)
        text = str(mb.lower_measure)
        holes = {q: len(scope_holes({d: float(g) for d, g in qrels[q].items()}, [(d, s) for s, d in plain[q]], text))
                 for q in plain if q in qrels}
        none = np.array([holes[str(q)] == 0 for q in mb.queries])
        assert np.array_equal(lo[none], up[none]) and np.array_equal(lo[none], v[none]), text
        if name != "bm25":
            assert (up[~none] > lo[~none]).any(), text  # the interval opens where it should


def _ndcg10(order: list[str], judged: dict[str, float], k: int = 10) -> float:
    """NDCG@k, global ideal, linear gain, log2 discount, in plain Python."""
    dcg = sum(judged.get(d, 0) / math.log2(i + 2) for i, d in enumerate(order[:k]))
    ideal = sorted((g for g in judged.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def test_the_issue_figures_on_dl19(dl19):  # type: ignore[no-untyped-def]
    """Issue #32: TAS-B's query 855410 (top 10 graded 2,2,2,U,U,U,U,U,1,U) is 0.972 zero-imputed,
    0.900 with every hole at 3, 1.0 with every hole at 1, and its exact interval is [0.809, 1.0];
    the mean over the 43 queries is about [0.717, 0.785]. Each figure by brute force in plain
    Python over every grading of the top 10's unjudged documents."""
    qrels_path, qrels, runs = dl19
    plain = _read(runs["d-bert-kd-tasb"])
    lows, highs = {}, {}
    for q, docs in plain.items():
        if q not in qrels:
            continue
        order = _top(docs, 10)
        holes = [d for d in order if d not in qrels[q]]
        vals = [_ndcg10(order, {**qrels[q], **dict(zip(holes, g, strict=True))})
                for g in itertools.product(range(4), repeat=len(holes))]
        lows[q], highs[q] = min(vals), max(vals)
    order = _top(plain["855410"], 10)
    holes = [d for d in order if d not in qrels["855410"]]
    assert [qrels["855410"].get(d, "U") for d in order] == [2, 2, 2, "U", "U", "U", "U", "U", 1, "U"]
    assert round(_ndcg10(order, qrels["855410"]), 3) == 0.972
    assert round(_ndcg10(order, {**qrels["855410"], **dict.fromkeys(holes, 3)}), 3) == 0.900
    assert _ndcg10(order, {**qrels["855410"], **dict.fromkeys(holes, 1)}) == pytest.approx(1.0)
    assert (round(lows["855410"], 3), round(highs["855410"], 3)) == (0.809, 1.0)
    assert (round(float(np.mean(list(lows.values()))), 3), round(float(np.mean(list(highs.values()))), 3)) == (
        0.717, 0.785)
    mb = bounds(qrels_path, runs["d-bert-kd-tasb"], "ndcg@10", scale="trec_dl")[0]
    got = {str(q): (lo, up) for q, lo, up in zip(mb.queries, mb.lower, mb.upper, strict=True)}
    for q in lows:
        assert got[q] == pytest.approx((lows[q], highs[q]), abs=1e-12), q
    assert (mb.lower_mean, mb.upper_mean) == pytest.approx((np.mean(list(lows.values())), np.mean(list(highs.values()))))
    assert mb.value_mean == pytest.approx(0.7210, abs=5e-5)


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


def test_runs_given_as_dicts_get_distinct_names():
    qrels = {"q1": {"a": 3}}
    cov = judgments(qrels, [{"q1": {"a": 1.0}}, {"q1": {"b": 1.0}}], ["P@1"], scale="trec_dl")
    assert len({r.name for r in cov.runs}) == 2


def test_pool_bias_rule():
    assert pool_bias({"a": 0.0, "b": 0.02, "c": 0.3}) == ["c"]
    assert pool_bias({"a": 0.20, "b": 0.22, "c": 0.24}) == []  # all alike: none is markedly worse
    assert pool_bias({"a": 0.0, "b": 0.04}) == []  # under the margin


# Flavor facts §4.3 (hand): G = 3, k = 10; dU at rank 6 unjudged.
_Q43 = {"q": {"d1": 3, "d2": 2, "d3": 0, "d4": 1, "d5": 3, "d6": 0, "d7": 2, "d8": 0, "d9": 1, "d11": 3, "d13": 2,
              "d14": 0, "d21": 3, "d22": 2, "d23": 1}}
_ORDER = ["d2", "d3", "d1", "d4", "d6", "dU", "d7", "d8", "d5", "d9", "d10", "d11", "d12", "d13", "d14",
          "d15", "d16", "d17", "d18", "d19"]
_R43 = {"q": {d: 100.0 - i for i, d in enumerate(_ORDER)}}


@pytest.mark.parametrize(("flavor", "by_grade", "condensed"), [
    # flavor facts §4.3: NDCG-global@10 with dU graded 0 / 1 / 2 / 3 (ideal recomputed), and condensed
    ("ndcg@10", (0.5235, 0.5557, 0.5724, 0.5838), 0.6111),
    ("ndcg@10[gain=exp2]", (0.4550, 0.4707, 0.4891, 0.5160), 0.5521),
    ("ndcg@10[discount=jk(2)]", (0.4878, 0.5175, 0.5343, 0.5456), 0.5671),
])
def test_hand_worked_bounds(flavor, by_grade, condensed):  # type: ignore[no-untyped-def]
    """One unjudged document: the interval is the least and greatest of its four gradings."""
    mb = bounds(_Q43, _R43, flavor, scale="trec_dl")[0]
    assert (round(mb.lower_mean, 4), round(mb.upper_mean, 4)) == (min(by_grade), max(by_grade))
    assert round(mb.value_mean, 4) == by_grade[0] and round(mb.condensed_mean, 4) == condensed


def test_rbp_interval_and_residual_hand_worked():
    """Flavor facts §4.3: RBP (p = 0.8, gain g/G) 0.3729, residual 0.1729 = 0.0655 (dU, rank 6) +
    0.8^10 (past the top 10). The interval over dU's grades adds dU's weight alone at G; the
    residual also covers the ranks past the run."""
    mb = bounds(_Q43, _R43, "RBP@10[param=0.8]", scale="trec_dl")[0]
    assert mb.measure.knobs["max_grade"] == "3"
    assert round(mb.lower_mean, 4) == 0.3729
    assert mb.upper_mean - mb.lower_mean == pytest.approx(0.2 * 0.8**5, abs=1e-12)
    assert mb.residual is not None and mb.residual_mean is not None
    assert mb.residual_mean == pytest.approx(0.2 * 0.8**5 + 0.8**10, abs=1e-12)
    assert round(mb.lower_mean + mb.residual_mean, 4) == 0.5458
    assert mb.to_dict()["residual"] == pytest.approx(mb.residual_mean)
    assert rankflavor.evaluate(_Q43, _R43, "RBP@10[param=0.8,gain=binary]")[0].mean == pytest.approx(
        0.2 * sum(0.8 ** (i - 1) for i in (1, 3, 4, 7, 9, 10)))
    assert bounds(_Q43, _R43, "ndcg@10", scale="trec_dl")[0].residual is None


def test_binary_and_err_hand_worked():
    """Flavor facts §4.3 companions at rel = 2 (R = 8): P@10 0.400, AP@10 0.3175, RR 1; ERR@10 0.5676.
    dU (rank 6) judged relevant: P@10 5/10; AP@10 (sum over the relevant ranks 1, 3, 6, 7, 9 of
    precision there) / R = 9; ERR with R(3) = 7/8 at rank 6."""
    b = bounds(_Q43, _R43, ["P@10", "AP@10", "RR", "ERR@10"], scale="trec_dl")
    assert (round(b["P@10"].lower_mean, 4), b["P@10"].upper_mean) == (0.4, 0.5)
    ap_rel = (1 / 1 + 2 / 3 + 3 / 6 + 4 / 7 + 5 / 9) / 9
    assert round(b["AP@10"].lower_mean, 4) == 0.3175 and b["AP@10"].upper_mean == pytest.approx(ap_rel)
    assert (b["RR"].lower_mean, b["RR"].upper_mean) == (1.0, 1.0)
    stop = {0: 0.0, 1: 1 / 8, 2: 3 / 8, 3: 7 / 8}
    grades = [2, 0, 3, 1, 0, 3, 2, 0, 3, 1]
    err, reach = 0.0, 1.0
    for r, g in enumerate(grades, 1):
        err += reach * stop[g] / r
        reach *= 1 - stop[g]
    assert round(b["ERR@10"].lower_mean, 4) == 0.5676 and b["ERR@10"].upper_mean == pytest.approx(err)


def test_value_is_the_measure_as_given():
    """The value column is the measure as given (Elasticsearch's unknown_doc_rating counts dU in the
    DCG only, condensing drops it), while the interval is the zero-imputed measure's."""
    b = bounds(_Q43, _R43, ["ndcg@10[unjudged_grade=1]", "ndcg@10[unjudged=condensed]"], scale="trec_dl")
    es, cond = b[0], b[1]
    order = _ORDER[:10]
    judged = {d: float(g) for d, g in _Q43["q"].items()}
    dcg = sum((judged.get(d, 1.0)) / math.log2(i + 2) for i, d in enumerate(order))
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate([3, 3, 3, 3, 2, 2, 2, 2, 1, 1]))
    assert es.value_mean == pytest.approx(dcg / idcg)
    assert (round(es.lower_mean, 4), round(es.upper_mean, 4)) == (0.5235, 0.5838)
    assert round(cond.value_mean, 4) == 0.6111 and (round(cond.lower_mean, 4), round(cond.upper_mean, 4)) == (
        0.5235, 0.5838)
    assert es.value[0] == pytest.approx(dcg / idcg) and str(es.lower_measure).count("unjudged_grade") == 0


def test_gap_and_overlaps():
    qrels = {"q1": {"a": 3, "b": 1}, "q2": {"c": 2}}
    runs = {"x": {"q1": {"a": 0.9, "u": 0.8}, "q2": {"c": 0.5}}, "y": {"q1": {"v": 0.9, "a": 0.8}, "q2": {"c": 0.5}},
            "z": {"q1": {"b": 0.9}, "q2": {"w": 0.5}}}
    cov = judgments(qrels, runs, ["P@2"], scale="trec_dl")
    x, y, z = (cov.run(n).bounds[0] for n in "xyz")
    # x: q1 [1/2, 1], q2 1/2; y: the same; z: q1 0, q2 [0, 1/2]
    assert x.gap.tolist() == [0.5, 0.0] and y.gap.tolist() == [0.5, 0.0] and z.gap.tolist() == [0.0, 0.5]
    assert (x.lower_mean, x.upper_mean, z.lower_mean, z.upper_mean) == (0.5, 0.75, 0.0, 0.25)
    assert x.overlaps(y) and y.overlaps(x) and not x.overlaps(z) and not z.overlaps(x)
    p2 = str(cov.runs[0].bounds[0].measure)
    assert list(cov.undecided) == [p2] and p2.startswith("P@2[rel=2,")
    assert cov.undecided[p2] == {"x": ["y"], "y": ["x"]}
    # Two flavors of one metric are two measures: at rel=1 z's q1 (b, graded 1) counts, so z's
    # interval is [1/4, 1/2] and touches x's and y's [1/2, 3/4]; at rel=2 it stays apart. Keyed by
    # the metric's name, the second would overwrite the first and flag z under P@2 too.
    both = judgments(qrels, runs, ["P@2", "P@2[rel=1]"], scale="trec_dl")
    rel2, rel1 = (str(b.measure) for b in both.runs[0].bounds.measures)
    assert both.undecided == {rel2: {"x": ["y"], "y": ["x"]},
                              rel1: {"x": ["y", "z"], "y": ["x", "z"], "z": ["x", "y"]}}
    from rankflavor.render.judgmentsfmt import render_judgments

    table = [line for line in render_judgments(both, width=240).splitlines() if line.startswith("│ z")]
    assert len(table) == 1 and table[0].count(" * ") + table[0].count(" *│") == 1  # z undecided once: at rel=1
    touching = bounds({"q": {"a": 2}}, {"q": {"a": 1.0, "u": 0.5}}, "P@2", scale="trec_dl")[0]
    assert (touching.lower_mean, touching.upper_mean) == (0.5, 1.0)
    assert touching.overlaps(x) and x.overlaps(touching)  # [0.5, 1] and [0.5, 0.75] share 0.5..0.75
    assert z.overlaps(bounds({"q": {"a": 2}}, {"q": {"u": 1.0}}, "P@4", scale="trec_dl")[0])  # [0, .25] and [0, .25]


def test_document_gaps_rule():
    b = bounds(_Q43, _R43, "ndcg@10", scale="trec_dl")
    [(q, doc, measure, rank, if_zero, if_top, gap)] = b.document_table()
    mb = b[0]
    # one unjudged document: judging it closes the whole interval whatever its grade; here NDCG
    # rises with dU's grade, so both one-sided moves are the whole width too
    assert (q, doc, measure, rank) == ("q", "dU", "ndcg@10", 6)
    assert if_zero == pytest.approx(mb.upper_mean - mb.lower_mean) == pytest.approx(if_top) == pytest.approx(gap)
    assert b.document_gaps() == [("q", "dU", b.run, gap)]
    assert b.document_gaps("ndcg@10") == b.document_gaps(0)


@pytest.mark.parametrize("flavor", ["ndcg@10", "ndcg@10[gain=exp2]", "P@10", "AP@10", "ERR@10", "RBP@10"])
def test_document_gaps_are_what_judging_does(flavor):  # type: ignore[no-untyped-def]
    """Judging a document the least grade lowers the upper bound by its if_zero; judging it G raises
    the lower bound by its if_top: checked by computing the bounds again with the judgment added."""
    run = {"q": dict(_R43["q"])}
    run["q"]["dV"] = run["q"].pop("d8")  # a second unjudged document, at rank 8
    b = bounds(_Q43, run, flavor, scale="trec_dl")
    table = b.document_table()
    assert {r[1] for r in table} == {"dU", "dV"}
    for _, doc, _, _, if_zero, if_top, gap in table:
        after = [bounds({"q": {**_Q43["q"], doc: g}}, run, flavor, scale="trec_dl")[0] for g in range(4)]
        assert after[0].upper[0] == pytest.approx(b[0].upper[0] - if_zero, abs=1e-12)
        assert after[3].lower[0] == pytest.approx(b[0].lower[0] + if_top, abs=1e-12)
        width = b[0].upper[0] - b[0].lower[0]
        assert gap == pytest.approx(min(width - (a.upper[0] - a.lower[0]) for a in after), abs=1e-12)


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
    table = Scale("tabled", (0, 1, 2), rel=1, top=2, gains=((0, 0), (1, 1), (2, 5)))
    assert table.measure("ndcg@10").knobs["gain"] == "{0:0,1:1,2:5}"
    mb = bounds({"q": {"a": 2, "b": 1}}, {"q": {"u": 0.9, "a": 0.8}}, "ndcg@2", scale=table)[0]
    assert mb.upper[0] == pytest.approx(1.0)  # u at grade 2 gains 5, as a does: the ideal is [5, 5]
    # u at grade 1: DCG 1 + 5/log2(3) over the ideal [5, 1]; at 0: 5/log2(3) over [5, 1]
    assert mb.lower[0] == pytest.approx((5 / math.log2(3)) / (5 + 1 / math.log2(3)))


def test_g_is_never_inferred():
    with pytest.raises(FlavorError, match="never taken from the data"):
        bounds(_Q43, _R43, "ndcg@10")
    with pytest.raises(FlavorError, match="needs a whole G"):
        bounds(_Q43, _R43, "ndcg@10[ideal=max,max_grade=2.5]")
    assert bounds(_Q43, _R43, "ndcg@10[ideal=max,max_grade=3]")[0].grades == (0.0, 1.0, 2.0, 3.0)


def test_what_the_interval_covers_is_said():
    b = bounds(_Q43, _R43, ["ndcg@10", "ndcg", "ndcg@10[ideal=local]", "ndcg@10[ideal=recall@20]",
                            "ndcg@30[ideal=recall@20]", "ndcg@10[depth=5]", "ndcg[depth=5]", "ndcg@10[ties=averaged]",
                            "P@10[ties=averaged]", "P@10[ties=optimistic]", "AP[ties=pessimistic]",
                            "AP[ties=pessimistic,depth=5]"], scale="trec_dl")
    scopes = [scope_text(mb.lower_measure) for mb in b]
    assert scopes == ["the top 10", "the whole ranking", "the whole ranking", "the top 20", "the top 30",
                      "the top 5", "the top 5 (depth=5)", "the top 10 and the rest of the tie group at its end",
                      "the top 10", "the top 10 and the rest of the tie group at its end", "the whole ranking",
                      "the top 5 (depth=5) and the rest of the tie group at its end"]
    assert b[0].to_dict()["covers"] == (
        "every grading of the unjudged documents in the top 10 with the grades {0,1,2,3}; not covered: unjudged "
        "documents ranked below that or never retrieved, and grades off the scale")
    d = b[0].to_dict()
    assert d["grades"] == [0.0, 1.0, 2.0, 3.0] and "residual" not in d
    assert d["per_query"]["q"] == pytest.approx({"lower": 0.5235, "value": 0.5235, "upper": 0.5838,
                                                 "condensed": 0.6111}, abs=5e-5)  # flavor facts §4.3


def test_refusals_name_why():
    for flavor, words in [("recall@10", "recall is not bounded"), ("nERR@10", "nERR is not bounded"),
                          ("ndcg@10[ideal=as_supplied]", "as_supplied reads the judgments in file order")]:
        with pytest.raises(FlavorError, match=words):
            bounds(_Q43, _R43, flavor, scale="trec_dl")
        res = CliRunner().invoke(cli, ["judgments", "--scale", "trec_dl", "-m", flavor, "absent.txt", "absent.run"])
        assert res.exit_code == 2 and ("not bounded" in res.output or "as_supplied" in res.output)  # before reading
    run = {"q": {"a": 1.0, "u": 1.0, "b": 0.5}}
    with pytest.raises(FlavorError, match="higher grade contributes less"):
        bounds({"q": {"a": 2, "b": 1}}, run, "ndcg@3[ties=pessimistic,gain={0:0,1:3,2:1,3:2}]", scale="trec_dl")
    with pytest.raises(FlavorError, match="lies across the edge"):
        bounds({"q": {"a": 2, "b": 1}}, {"q": {"a": 1.0, "u": 0.5, "v": 0.5}}, "ndcg@1[ideal=recall@2,ties=optimistic]",
               scale="trec_dl")


def test_an_empty_policy_that_moves_queries_is_refused():
    """A query with nothing relevant judged: some gradings leave it nothing to find, others do not."""
    qrels = {"q": {"a": 0}, "r": {"b": 2}}
    run = {"q": {"a": 1.0, "u": 0.5}, "r": {"b": 1.0}}
    for policy in ("skip", "nan"):
        with pytest.raises(EvaluationError, match=f"empty={policy} would take the query out of the mean"):
            bounds(qrels, run, f"ndcg@2[empty={policy}]", scale="trec_dl")
        with pytest.raises(EvaluationError, match="query q"):
            bounds(qrels, run, f"P@2[empty={policy}]", scale="trec_dl")
    # u graded 0 leaves q nothing to find (the policy's value); graded 3 at rank 2 it scores 3/log2(3) over 3
    zero, one = (bounds(qrels, run, f"ndcg@2[empty={p}]", scale="trec_dl")[0] for p in ("zero", "one"))
    found = 1 / math.log2(3)
    assert (zero.lower[0], zero.upper[0]) == (0.0, pytest.approx(found))
    assert (one.lower[0], one.upper[0]) == (pytest.approx(found), 1.0)
    # nothing could ever be found (no grade reaches rel=4): the query stays out under skip, NaN under nan
    skip = bounds(qrels, run, "P@2[empty=skip,rel=4]", scale="trec_dl")[0]
    assert skip.queries.tolist() == [] and np.isnan(skip.upper_mean)
    nan = bounds({"q": {"a": 0}}, {"q": {"a": 1.0, "u": 0.5}}, "P@2[empty=nan,rel=4]", scale="trec_dl")[0]
    assert np.isnan(nan.lower[0]) and np.isnan(nan.upper[0])
    nan_ap = bounds({"q": {"a": 0}}, {"q": {"a": 1.0, "u": 0.5}}, "AP[empty=nan,rel=4]", scale="trec_dl")[0]
    assert np.isnan(nan_ap.lower[0]) and np.isnan(nan_ap.upper[0])
    # a fixed ideal (max): whether anything is found never depends on the grading
    fixed = bounds(qrels, run, "ndcg@2[ideal=max,empty=skip]", scale="trec_dl")[0]
    assert fixed.queries.tolist() == ["q", "r"] and (fixed.lower[0], fixed.upper[0]) == (
        0.0, pytest.approx((3 / math.log2(3)) / (3 + 3 / math.log2(3))))


def test_a_disagreement_with_the_engine_is_raised(monkeypatch):
    """Each end is checked against the engine's value on its grading: a derivation that does not
    describe the engine is an error, never a printed number."""
    from rankflavor.analysis.judgments import regrade

    real = regrade.evaluate_tables

    def off(*args, **kwargs):  # type: ignore[no-untyped-def]
        res = real(*args, **kwargs)
        for m in res.measures:
            m.values[:] = np.asarray(m.values, dtype=np.float64) + 1e-6
        return res

    monkeypatch.setattr(regrade, "evaluate_tables", off)
    with pytest.raises(EvaluationError, match="internal check failed: the bound of ndcg@10"):
        bounds(_Q43, _R43, "ndcg@10", scale="trec_dl")
    bounds(_Q43, _R43, "P@10", scale="trec_dl")  # (a monotone metric's gradings are chosen, not derived)


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
    mb = bounds(q, r, "P@1", scale="trec_dl")[0]  # -1: pooled, not judged; graded like any unjudged one
    assert (mb.lower_mean, mb.upper_mean) == (0.0, 1.0)
    assert bounds(q, r, "P@1[negatives=zero]", scale="trec_dl")[0].upper_mean == 0.0  # -1 is a judged 0
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
    qrels_path, _, runs = dl19
    args = ["judgments", str(qrels_path), str(runs["bm25"]), str(runs["d-bert-kd-tasb"]), "-m", "ndcg@10",
            "-m", "RBP@100", "--scale", "trec_dl"]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    assert "WARNING pool bias: rankllm.dl19.d-bert-kd-tasb.top100.run" in res.output
    assert "0.7210 [0.7169, 0.7850]" in res.output  # (the interval of test_the_issue_figures_on_dl19)
    text = " ".join(res.output.split())  # (sentences are wrapped at the terminal's width)
    assert ("[lower, upper]: least and greatest value over every grading of the unjudged documents in the top 10 "
            "with the grades {0,1,2,3}; not covered: unjudged documents ranked below that or never retrieved, and "
            "grades off the scale") in text
    assert "lower + residual (Moffat & Zobel), which also covers the ranks past each run's end: " in text
    per_query = CliRunner().invoke(cli, [*args, "-q"]).output
    assert "per query" in per_query and "\n│ 1037798 " in per_query
    out = json.loads(CliRunner().invoke(cli, [*args, "--format", "json"]).output)
    assert out["pool_bias"]["runs"] == ["rankllm.dl19.d-bert-kd-tasb.top100.run"]
    tasb = out["runs"][1]["bounds"][0]
    assert tasb["lower"] <= tasb["value"] <= tasb["upper"] <= 1 and tasb["grades"] == [0, 1, 2, 3]
    assert out["runs"][1]["bounds"][1]["residual"] > 0


def test_prefix_path_equals_full_ranking(dl19, tmp_path):  # type: ignore[no-untyped-def]
    """A run in rank order and the same lines shuffled: the same numbers."""
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
        assert np.allclose(x.lower, y.lower, rtol=0, atol=1e-12) and np.allclose(x.upper, y.upper, rtol=0, atol=1e-12)
    assert a.bounds.document_table() == b.bounds.document_table()


def test_touching_intervals_overlap_and_lookup_by_name():
    z = bounds({"q1": {"a": 3, "b": 1}, "q2": {"c": 2}}, {"q1": {"b": 0.9}, "q2": {"w": 0.5}}, "P@2",
               scale="trec_dl")[0]
    fixed = bounds({"q": {"a": 2, "b": 0}}, {"q": {"a": 1.0, "b": 0.5}}, "P@4", scale="trec_dl")
    assert (z.lower_mean, z.upper_mean) == (0.0, 0.25) and (fixed[0].lower_mean, fixed[0].upper_mean) == (0.25, 0.25)
    assert z.overlaps(fixed[0]) and fixed[0].overlaps(z)  # they share the point 0.25
    assert fixed["P@4"] is fixed[0] and fixed[str(fixed[0].measure)] is fixed[0]
    with pytest.raises(KeyError):
        fixed["P@5"]
    assert len(fixed) == 1 and list(fixed) == [fixed[0]]
    assert fixed.to_dict()["measures"][0]["measure"] == str(fixed[0].measure) and fixed.to_dict()["scale"] == "trec_dl"


def test_measures_that_could_refuse_another_measures_gradings_are_scored_alone():
    """The engine scores every measure's gradings in one evaluation, except a measure whose policy
    would refuse another's pseudo-query: a local ideal with empty=error on P@1's one-row gradings
    (nothing to find there), one-row lists under singletons=error."""
    qrels = {"q": {"a": 0, "c": 3}}
    run = {"q": {"u": 1.0, "a": 0.9, "c": 0.8}}
    b = bounds(qrels, run, ["ndcg@3[ideal=local,empty=error]", "P@1", "ndcg@3[singletons=error]"], scale="trec_dl")
    assert (b[1].lower_mean, b[1].upper_mean) == (0.0, 1.0)
    # u graded 3: (3 + 3/log2(4)) over the ideal [3, 3]; graded 0: c's 3/log2(4) over [3]
    best = (3 + 3 / math.log2(4)) / (3 + 3 / math.log2(3))
    assert b[0].upper_mean == pytest.approx(best) and b[2].upper_mean == pytest.approx(best)
    assert b[0].lower_mean == pytest.approx(1 / math.log2(4)) == pytest.approx(b[2].lower_mean)
    one = bounds(qrels, run, "ndcg@1[singletons=error]", scale="trec_dl")[0]  # a scope of one row, three rows read
    assert (one.lower_mean, one.upper_mean) == (0.0, 1.0)


def test_rbp_residual_in_json_and_footer(dl19):  # type: ignore[no-untyped-def]
    qrels_path, _, runs = dl19
    cov = judgments(qrels_path, {"tasb": runs["d-bert-kd-tasb"]}, ["RBP@20"], scale="trec_dl")
    mb = cov.runs[0].bounds[0]
    assert mb.residual is not None and mb.residual_mean is not None
    d = mb.to_dict()
    q = str(mb.queries[0])
    assert d["per_query"][q]["residual"] == pytest.approx(float(mb.residual[0]))
    assert np.all(mb.upper <= mb.lower + mb.residual + 1e-12)  # the residual covers the tail too
    assert mb.residual_mean - (mb.upper_mean - mb.lower_mean) == pytest.approx(
        float(np.mean([0.8 ** min(20, n) for n in [100] * len(mb.queries)])), abs=1e-12)  # p^d, d = 20
    from rankflavor.render.judgmentsfmt import render_judgments

    text = render_judgments(cov, width=240)
    assert f"lower + residual (Moffat & Zobel), which also covers the ranks past each run's end: tasb " \
           f"{mb.lower_mean + mb.residual_mean:.4f}" in text


@pytest.mark.parametrize("first", ["P@3", "P@3[ties=pessimistic]", "ndcg@3[ties=averaged]", "P@3[ties=docno_asc]", "AP"])
def test_coverage_counts_the_unjudged_top_k_under_every_ordering(first):  # type: ignore[no-untyped-def]
    """judged@k and the unjudged ranks come from the first measure's own ordering (the prefix path,
    or every row ranked where the tie rule reads grades or averages, or without a cutoff),
    checked against the order written from the definition (tests/analysis/judgments/brute_bounds.py)."""
    from .brute_bounds import ranked

    qrels = {"q1": {"a": 2, "b": 0, "c": 3}, "q2": {"e": 1}}
    runs = {"q1": [("a", 2.0), ("u", 2.0), ("b", 2.0), ("c", 1.0), ("v", 1.0)], "q2": [("w", 1.0), ("e", 1.0)]}
    cov = judgments(qrels, {"r": {q: dict(r) for q, r in runs.items()}}, [first], scale="trec_dl")
    r = cov.runs[0]
    m = parse_measure(first)
    for q, shown, unjudged, ranks in zip(r.queries, r.shown, r.unjudged, r.unjudged_ranks, strict=True):
        order = [d for d, _ in ranked(runs[str(q)], str(m.flavor.ties), qrels[str(q)])][: m.k]
        assert shown == len(order) and unjudged == sum(d not in qrels[str(q)] for d in order)
        assert ranks == [i + 1 for i, d in enumerate(order) if d not in qrels[str(q)]]
