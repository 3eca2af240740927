"""The ir_measures dialect beyond pytrec_eval's core measures, against the real ir_measures 0.4.3.

Set measures, IPrec and infAP (pytrec_eval provider), ERR@k (gdeval.pl), RBP(rel), NERR8..11,
INST, INSQ, BPM, SDCG (cwl_eval provider, ``pip install cwl-eval``) and Compat (compat provider):
each is compared per query and on the mean with ``ir_measures.iter_calc`` / ``calc_aggregate``
on random qrels and runs, on cases taken from ir_measures' own test suite (test/test_cwl_eval.py
with its cwl.qrels / cwl.run, test/test_providers.py) and on TREC DL 2019 BM25.
"""

from __future__ import annotations

import logging
import math
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import rankflavor
from rankflavor.cli.main import cli
from rankflavor.errors import FlavorError

from ..conftest import shared_path
from .test_presets_ir import _read_dicts, random_case, write_trec

ir_measures = pytest.importorskip("ir_measures")
pytest.importorskip("cwl")  # ir_measures' cwl_eval provider
logging.getLogger("ir_measures.cwl_eval").disabled = True  # its max_rel warnings

TOL = 1e-9
GDEVAL_TOL = 5e-6 + 1e-12  # gdeval prints 5 decimals
needs_perl = pytest.mark.skipif(shutil.which("perl") is None, reason="gdeval.pl needs perl")

PYTREC = [
    "SetP", "SetP(rel=2)", "SetP(judged_only=True)", "SetRelP", "SetP(relative=True,rel=2)", "SetR", "SetR(rel=2)",
    "SetF", "SetF(beta=0.5)", "SetF(rel=2,judged_only=True)", "SetAP", "SetAP(rel=2,judged_only=True)",
    "IPrec@0.5", "IPrec@0.0", "IPrec(rel=2)@0.25", "IPrec@0.125", "IPrec(judged_only=True)@1.0", "infAP", "infAP(rel=2)",
]  # fmt: skip
CWL = [
    "RBP(rel=1)", "RBP(rel=2,p=0.95)", "RBP(rel=0,p=0.5)", "NERR8(max_rel=3)@10", "NERR8(max_rel=3,min_rel=1)@5",
    "NERR9(max_rel=3)@10", "NERR9(max_rel=4)@1", "NERR10(max_rel=3)", "NERR10(max_rel=4,p=0.5)",
    "NERR11(max_rel=3,T=2.0)", "NERR11(max_rel=3)", "INST(max_rel=3)", "INST(max_rel=3,T=3.0,min_rel=1)",
    "INSQ(max_rel=3)", "INSQ(max_rel=3,T=0.5)", "BPM(max_rel=3)@10", "BPM(max_rel=3,T=2.0)@20",
    "SDCG(max_rel=3)@10", "SDCG(max_rel=3,min_rel=2)@5", "SDCG(max_rel=5)@1",
]  # fmt: skip
GDEVAL = ["ERR@10", "ERR@3", "ERR@1"]
COMPAT = ["Compat", "Compat(p=0.8)", "Compat(normalize=False,p=0.5)", "Compat(p=1.0)"]


def compare(qrels, run, names, tol=TOL):  # type: ignore[no-untyped-def]
    """Every name, per query and on the mean, as ir_measures computes it."""
    for name in names:
        measure = ir_measures.parse_measure(name)
        want = {m.query_id: m.value for m in ir_measures.iter_calc([measure], qrels, run)}
        want_mean = ir_measures.calc_aggregate([measure], qrels, run)[measure]
        res = rankflavor.evaluate(qrels, run, [name], preset="ir_measures")[0]
        got = res.per_query()
        assert set(got) == set(want), name
        for q, v in want.items():
            assert abs(got[q] - v) <= tol or (math.isnan(v) and math.isnan(got[q])), (name, q, got[q], v)
        assert abs(res.mean - want_mean) <= tol or (math.isnan(want_mean) and math.isnan(res.mean)), name


@pytest.mark.parametrize("seed", [1, 2])
def test_pytrec_eval_and_cwl_measures_random(seed: int) -> None:
    """Ties (also equal only in float32), negative grades, unjudged, missing and run-only queries."""
    qrels, run = random_case(30 + seed, 150, negatives=seed == 2, numeric_ids=True, max_grade=3)
    compare(qrels, run, PYTREC + CWL)


def test_cwl_on_a_wider_scale_and_long_rankings() -> None:
    """Grades 0..4 with max_rel=4 and rankings past cwl_eval's 1000 ranks (cut there)."""
    qrels, run = random_case(41, 60, numeric_ids=True, max_grade=4)
    for i, q in enumerate(list(run)[:3]):  # three queries with 1200 retrieved documents
        run[q] = {**run[q], **{f"z{j:04d}": -1.0 - j for j in range(1200)}}
        qrels.setdefault(q, {}).update({f"z{j:04d}": (j + i) % 5 for j in range(990, 1010)})
    compare(qrels, run, ["RBP(rel=1,p=0.99)", "NERR10(max_rel=4,p=0.99)", "INST(max_rel=4,T=4.0)",
                         "INSQ(max_rel=4,T=30.0)", "NERR11(max_rel=4,T=3.0)"])


@needs_perl
def test_err_is_gdeval_random() -> None:
    qrels, run = random_case(43, 150, negatives=True, numeric_ids=True, max_grade=4)
    compare(qrels, run, GDEVAL, GDEVAL_TOL)


def test_compat_random_tie_free() -> None:
    qrels, run = random_case(44, 150, ties=False, negatives=True, numeric_ids=True, max_grade=3)
    compare(qrels, run, COMPAT)


def test_compat_ties_refused_only_where_their_order_matters() -> None:
    """ir_measures orders relevant documents of equal grade and score in the ideal by qrels file
    order: where that order cannot change the value the preset answers, otherwise it refuses."""
    qrels = {"1": {"a": 1, "b": 1, "c": 2}}
    harmless = {"1": {"c": 0.9, "x": 0.8, "y": 0.7, "b": 0.5, "a": 0.5}}  # a, b at ranks 4, 5: past slots 2, 3
    compare(qrels, harmless, COMPAT)
    qrels = {"1": {"a": 1, "z": 1, "c": 2}}
    harmful = {"1": {"a": 0.9, "m": 0.9, "z": 0.9, "c": 0.1}}  # a, z at ranks 1, 3; ideal slots 2, 3
    with pytest.raises(FlavorError, match="qrels file order"):
        rankflavor.evaluate(qrels, harmful, ["Compat"], preset="ir_measures")
    # outside the preset (strict=0) the tie goes by run rank: the value for qrels listing a before z
    ours = rankflavor.evaluate(qrels, harmful, ["Compat[param=(0.95,1,0),ties=docno_asc]"])[0].mean
    assert abs(ours - ir_measures.calc_aggregate([ir_measures.parse_measure("Compat")], qrels, harmful)[
        ir_measures.parse_measure("Compat")]) <= TOL


# ---------------------------------------------------------------------------------------------
# Cases from ir_measures' own test suite (values as its tests state them)

#: test/cwl.qrels: per topic, the relevant (grade 1) and the non-relevant (grade 0) documents.
CWL_QRELS = {"T1": ("1 3 4 7 9", "2 8 10"), "T2": ("1 2 5 7 8 9", "6 10"), "T3": ("6 7 8 10", "4 5 9")}
#: test/test_cwl_eval.py: expected per T1, T2, T3 (4 decimals) for the cwl.run ranking D1..D10.
CWL_EXPECTED = {
    "BPM(T=1.0,max_rel=1)@20": (1.0, 1.0, 0.1667), "BPM(T=2.0,max_rel=1)@10": (0.6667, 1.0, 0.2857),
    "INSQ(T=1.0,max_rel=1)": (0.5872, 0.6629, 0.0880), "INSQ(T=2.0,max_rel=1)": (0.4513, 0.5068, 0.1292),
    "INST(T=1.0,max_rel=1)": (0.7934, 0.9226, 0.0888), "INST(T=2.0,max_rel=1)": (0.5994, 0.6924, 0.1397),
    "SDCG(max_rel=1)@10": (0.5645, 0.6531, 0.2848), "NERR8(max_rel=1)@10": (1.0, 1.0, 0.1667),
    "NERR9(max_rel=1)@10": (1.0, 1.0, 0.0680), "NERR10(p=0.8,max_rel=1)": (1.0, 1.0, 0.0888),
    "NERR11(T=2.0,max_rel=1)": (1.0, 1.0, 0.0691), "RBP(p=0.9,rel=1)": (0.3501, 0.3996, 0.1988),
}  # fmt: skip


def test_ir_measures_own_cwl_eval_case() -> None:
    qrels = {t: {**{f"D{d}": 1 for d in rel.split()}, **{f"D{d}": 0 for d in non.split()}}
             for t, (rel, non) in CWL_QRELS.items()}
    run = {t: {f"D{i}": 4.4 - 0.1 * i for i in range(1, 11)} for t in CWL_QRELS}
    for name, expected in CWL_EXPECTED.items():
        got = rankflavor.evaluate(qrels, run, [name], preset="ir_measures")[0].per_query()
        assert [round(got[t], 4) for t in ("T1", "T2", "T3")] == pytest.approx(expected, abs=1e-4), name
    compare(qrels, run, list(CWL_EXPECTED))


def _providers_case() -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """test/test_providers.py: two topics, the run answering topic 0 only ("partial run")."""
    qrels = {"0": {"D0": 0, "D1": 1, "D2": 1, "D3": 2, "D4": 0}, "1": {"D0": 1, "D3": 2, "D5": 2}}
    run = {"0": {"D0": 0.8, "D2": 0.7, "D1": 0.3, "D3": 0.4, "D4": 0.1}}
    return qrels, run


@needs_perl
def test_ir_measures_own_providers_case_err() -> None:
    qrels, run = _providers_case()
    res = rankflavor.evaluate(qrels, run, ["ERR@5"], preset="ir_measures")[0]
    assert res.per_query() == pytest.approx({"0": 0.10175, "1": 0.0}, abs=5e-6)
    assert res.mean == pytest.approx(0.050875, abs=5e-6)


def test_ir_measures_own_providers_case_compat() -> None:
    qrels, run = _providers_case()
    res = rankflavor.evaluate(qrels, run, ["Compat(p=0.8)"], preset="ir_measures")[0]
    assert res.per_query() == pytest.approx({"0": 0.4744431703672816, "1": 0.0}, abs=1e-12)
    assert res.mean == pytest.approx(0.2372215851836408, abs=1e-12)


# ---------------------------------------------------------------------------------------------
# Real data, refusals, the command line


def test_dl19_bm25() -> None:
    qrels, run = _read_dicts(shared_path("qrels", "qrels.dl19-passage.txt"),
                             shared_path("runs", "rankllm.dl19.bm25.top100.run"))
    compare(qrels, run, ["SetP", "SetR(rel=2)", "SetF(rel=2)", "SetAP", "SetRelP", "IPrec@0.5", "infAP(rel=2)",
                         "RBP(rel=2)", "NERR8(max_rel=3)@10", "NERR10(max_rel=3)", "INST(max_rel=3)",
                         "INSQ(max_rel=3)", "BPM(max_rel=3)@10", "SDCG(max_rel=3)@10", "Compat"])


@pytest.mark.parametrize(("name", "why"), [
    ("RBP", "no provider"), ("RBP(rel=1)@10", "no provider"), ("ERR", "gdeval"), ("NERR8@10", "max_rel"),
    ("SDCG(max_rel=3)", "needs @cutoff"), ("INST(max_rel=3)@10", "takes no @cutoff"), ("SetP@10", "no @cutoff"),
    ("NERR10(max_rel=2,min_rel=2)", "min_rel must be below"), ("SDCG(max_rel=3,dcg='exp-log2')@5", "log2"),
    ("IPrec@2", "recall level"), ("INST(max_rel=3,T=0.0)", "T is a number"), ("Compat(p=2.0)", "p is a number"),
    ("SetF(beta=-1.0)", "beta"), ("BPM(max_rel=3,X=1)@5", "received X"),
])  # fmt: skip
def test_refused_with_the_reason(name: str, why: str) -> None:
    qrels, run = {"1": {"a": 1}}, {"1": {"a": 1.0}}
    with pytest.raises(FlavorError, match=why):
        rankflavor.evaluate(qrels, run, [name], preset="ir_measures")


def test_a_grade_above_max_rel_is_refused_not_clipped() -> None:
    with pytest.raises(FlavorError, match="exceeds max_grade"):
        rankflavor.evaluate({"1": {"a": 3}}, {"1": {"a": 1.0}}, ["NERR10(max_rel=2)"], preset="ir_measures")


def test_cli_preset_names(tmp_path: Path) -> None:
    qrels, run = random_case(45, 30, ties=False, numeric_ids=True)
    qpath, rpath = write_trec(tmp_path, qrels, run)
    names = ["NERR10(max_rel=3)", "NERR8(max_rel=3)@10", "SetP", "Compat(p=0.8)"]
    args = ["eval", str(qpath), str(rpath), "--preset", "ir_measures", "--format", "csv"]
    out = CliRunner().invoke(cli, [*args, *(x for n in names for x in ("-m", n))])
    assert out.exit_code == 0, out.output
    for name, metric in zip(names, ("NERR10[", "NERR8@10[", "P[", "Compat["), strict=True):
        m = ir_measures.parse_measure(name)
        want = ir_measures.calc_aggregate([m], qrels, run)[m]
        line = next(row for row in out.output.splitlines() if metric in row)
        assert line.startswith(f"{name},all,") and abs(float(line.split(",")[2]) - want) <= TOL, (name, line)
