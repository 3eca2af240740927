"""The ntcireval preset reproduces every NTCIREVAL name it reads, and refuses the others.

Oracles: NTCIREVAL's own outputs, kept as the expected results of pyNTCIREVAL's test suite
(mpkato/pyNTCIREVAL ``tests/test_main.py``: ``test_compute`` with ``-g 1:2:3``,
``test_compute_grade`` with ``-g 1:4:9``, ``test_compute_cutoff`` with ``--cutoffs 2``, on
``tests/dat/sample.rel`` and ``sample.res``; the values in ``tests/dat/res_test_compute*.txt``), and
pyNTCIREVAL 0.0.3 itself on random queries.
"""

from __future__ import annotations

import pytest

import rankflavor
from rankflavor.errors import EvaluationError, FlavorError
from rankflavor.presets import resolve_measures

from .test_presets_ir import random_case

TOL = 1e-9

# pyNTCIREVAL tests/dat/sample.rel: dummy01-03 at L3, 04-06 at L2, 07-10 at L1, dummy11 at L0;
# sample.res ranks dummy11, dummy01, dummy12 (unjudged), dummy04.
SAMPLE_REL = {"q": {**{f"dummy{i:02d}": 3 for i in (1, 2, 3)}, **{f"dummy{i:02d}": 2 for i in (4, 5, 6)},
                    **{f"dummy{i:02d}": 1 for i in (7, 8, 9, 10)}, "dummy11": 0}}
SAMPLE_RES = {"q": {"dummy11": 4.0, "dummy01": 3.0, "dummy12": 2.0, "dummy04": 1.0}}

#: tests/dat/res_test_compute.txt (-g 1:2:3), res_test_compute_grade.txt (-g 1:4:9) and
#: res_test_compute_cutoff.txt (-g 1:2:3 --cutoffs 2): NTCIREVAL prints 4 decimals.
EXPECTED = {
    "1:2:3": {"RR": 0.5000, "AP": 0.1000, "RBP": 0.0761, "ERR": 0.4062, "AP@1000": 0.1000, "nDCG@1000": 0.3380,
              "MSnDCG@1000": 0.2760, "P@1000": 0.0020, "nERR@1000": 0.4710, "Hit@1000": 1.0000,
              "AP@0002": 0.2500, "nDCG@0002": 0.5000, "MSnDCG@0002": 0.3869, "P@0002": 0.5000,
              "nERR@0002": 0.4444, "Hit@0002": 1.0000},
    "1:4:9": {"RR": 0.5000, "AP": 0.1000, "RBP": 0.0666, "ERR": 0.4600, "AP@1000": 0.1000, "nDCG@1000": 0.3636,
              "MSnDCG@1000": 0.2947, "P@1000": 0.0020, "nERR@1000": 0.4851, "Hit@1000": 1.0000},
}


@pytest.mark.parametrize("gains", sorted(EXPECTED))
def test_ntcireval_own_test_outputs(gains: str) -> None:
    for name, want in EXPECTED[gains].items():
        got = rankflavor.evaluate(SAMPLE_REL, SAMPLE_RES, f"{name} -g {gains}", preset="ntcireval")[0].mean
        assert round(got, 4) == pytest.approx(want, abs=1e-12), (name, gains, got)


def test_four_names_that_used_to_fall_through_differ_from_rankflavors() -> None:
    """ERR, nERR, RBP and AP@l under NTCIREVAL's own names: not rankflavor's measures of the name."""
    ours = {m.measure.display: m.mean for m in rankflavor.evaluate(
        SAMPLE_REL, SAMPLE_RES, ["ERR -g 1:2:3", "nERR@2 -g 1:2:3", "RBP -g 1:2:3", "AP@2"], preset="ntcireval")}
    plain = {m.measure.display: m.mean for m in rankflavor.evaluate(
        SAMPLE_REL, SAMPLE_RES, ["ERR[max_grade=3]", "nERR@2[max_grade=3]", "RBP[max_grade=3]", "AP@2"])}
    for (name, value), other in zip(ours.items(), plain.values(), strict=True):
        assert abs(value - other) > 0.01, (name, value, other)  # the test can fail: they differ
    # and each reads as what it is
    measures = resolve_measures(["ERR -g 1:2:3", "nERR@2", "RBP", "AP@2", "AP"], "ntcireval", {})[0]
    assert [(m.metric, m.k) for m in measures] == [("ERR_gain", None), ("nERR_gain", 2), ("RBP", None), ("AP", 2),
                                                   ("AP", None)]
    assert measures[0].flavor.gain == "{1:1,2:2,3:3}" and measures[2].flavor.param == "0.95"
    assert measures[3].flavor.ap_divisor == "min_k_relevant" and measures[4].flavor.ap_divisor == "relevant"


@pytest.mark.parametrize("gains", [[1, 2, 3], [1, 3, 7], [2, 2, 5]])
def test_ntcireval_random_against_pyntcireval(gains: list[int]) -> None:
    ntcir = pytest.importorskip("pyNTCIREVAL")
    from pyNTCIREVAL.metrics import AP, ERR, RBP, RR, Hit, Precision, nERR

    qrels, run = random_case(43 + gains[-1], 250)
    g = ":".join(map(str, gains))
    makers = {
        f"ERR -g {g}": lambda x: ERR(x, gains),
        f"RBP -g {g}": lambda x: RBP(x, gains, 0.95),
        f"RBP --rbp 0.6 -g {g}": lambda x: RBP(x, gains, 0.6),
        "AP": lambda x: AP(x, gains),
        "RR": lambda x: RR(),
        **{f"{name}@{k}": maker for k in (1, 5, 20)
           for name, maker in (("AP", lambda x, k=k: AP(x, gains, k)), ("P", lambda x, k=k: Precision(k)),
                               ("Hit", lambda x, k=k: Hit(k)))},
        **{f"nERR@{k} -g {g}": (lambda x, k=k: nERR(x, gains, k)) for k in (1, 5, 20)},
    }
    for name, make in makers.items():
        want = {}
        for qid, docs in run.items():
            if qid not in qrels:
                continue
            relevant = any(v > 0 for v in qrels[qid].values())
            if name.startswith("nERR") and not relevant:
                continue  # 0 / 0: ZeroDivisionError in pyNTCIREVAL, an error here (below)
            labeler = ntcir.Labeler(qrels[qid])
            want[qid] = make(labeler.compute_per_level_doc_num(len(gains) + 1)).compute(labeler.label(list(docs)))
        q = {k: qrels[k] for k in want}
        r = {k: run[k] for k in want}
        got = rankflavor.evaluate(q, r, name, preset="ntcireval")[0].per_query()
        assert len(want) > 150 and set(got) == set(want), name
        for qid, v in want.items():
            assert abs(got[qid] - v) <= TOL, (name, qid, got[qid], v)
    with pytest.raises(EvaluationError, match="empty"):
        rankflavor.evaluate(qrels, run, f"nERR@5 -g {g}", preset="ntcireval")


def test_nothing_relevant_scores_zero_but_in_the_normalised_measures() -> None:
    qrels, run = {"q": {"a": 0, "b": 0}}, {"q": {"a": 2.0, "x": 1.0}}
    for name in ("AP", "AP@5", "RR", "P@5", "Hit@5", "ERR -g 1:2:3", "RBP -g 1:2:3"):
        assert rankflavor.evaluate(qrels, run, name, preset="ntcireval")[0].per_query() == {"q": 0.0}, name
    for name in ("nDCG@5", "MSnDCG@5", "nERR@5 -g 1:2:3"):
        with pytest.raises(EvaluationError, match="empty"):
            rankflavor.evaluate(qrels, run, name, preset="ntcireval")


@pytest.mark.parametrize(("name", "why"), [
    ("Q-measure", "Q-measure"), ("Q@0010", "Q-measure"), ("O-measure", "O-measure"), ("P-measure", "P-measure"),
    ("P-plus", "P-plus"), ("NCUgu,P", "NCU"), ("NCUrb,BR", "NCU"), ("QMeasure", "Q-measure"),
    ("ERR@10", "whole list"), ("RBP@10", "whole list"), ("RR@10", "whole list"),
    ("AP --rbp 0.9", "does not read"), ("MSnDCG@10 --logb 3", "does not read"), ("nDCG@10 --beta 2", "not read here"),
    ("RBP --rbp 1.5 -g 1:2:3", "0 < p < 1"), ("nDCG@10 --logb 1", "> 1"), ("nDCG@10 -g 1:x", "gains like"),
    ("nDCG@10 -g 1 -g 2", "twice"),
])
def test_ntcireval_refusals(name: str, why: str) -> None:
    with pytest.raises(FlavorError, match=why):
        resolve_measures([name], "ntcireval", {})


def test_ntcireval_options() -> None:
    (logb,), _ = resolve_measures(["nDCG@10 --logb 3"], "ntcireval", {})
    (natural,), _ = resolve_measures(["nDCG@10 --logb 0"], "ntcireval", {})
    assert logb.flavor.discount == "jk(3)" and natural.flavor.discount.startswith("jk(2.718")
    padded, plain = (resolve_measures([t], "ntcireval", {})[0][0] for t in ("nDCG@0010", "nDCG@10"))
    assert padded == plain and padded.k == 10
    assert resolve_measures(["nERR"], "ntcireval", {})[0][0].k == 1000  # NTCIREVAL's default cutoff
    # without -g, ERR/nERR/RBP need the top level: the preset's linear gains 1..G under max_grade
    err = rankflavor.evaluate(SAMPLE_REL, SAMPLE_RES, "ERR", preset="ntcireval", max_grade=3)[0].mean
    assert round(err, 4) == EXPECTED["1:2:3"]["ERR"]
    with pytest.raises(FlavorError, match="max_grade"):
        rankflavor.evaluate(SAMPLE_REL, SAMPLE_RES, "ERR", preset="ntcireval")
