"""IR-toolkit and search-engine presets reproduce the real tools.

Differential tests run the real tool on the same random inputs wherever it installs from PyPI:
ir_measures (and through it pytrec_eval and gdeval.pl), ranx, trectools and pyNTCIREVAL. The random
queries mix graded labels, tied scores (float32 collisions included), all-zero queries, unjudged
retrieved documents, relevant documents never retrieved, queries missing from the run, run-only
queries and varied cutoffs. ranx sorts with numba's unstable sort, so its inputs are tie-free.

Tools that cannot run here (Elasticsearch, OpenSearch, Quepid, Spark triples) are checked against
the fingerprint values of ``../shared/flavor-facts.md`` §4.1, which were produced by running them
(or, for Elasticsearch, by re-implementing its source). The real TREC DL 2019 run is evaluated with
every IR preset against the tools as well.
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import rankflavor
from rankflavor.errors import EvaluationError, FlavorError, InputError
from rankflavor.metrics.measure import parse_measure
from rankflavor.presets import GENERATED, PRESETS, flavor_table_markdown, resolve_measures

from ..conftest import ROOT, shared_path

TOL = 1e-9

# ---------------------------------------------------------------------------------------------
# Random inputs


def random_case(
    seed: int,
    n_queries: int,
    *,
    ties: bool = True,
    negatives: bool = False,
    numeric_ids: bool = False,
    max_grade: int = 3,
) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Qrels and run dicts exercising every edge the presets disagree on.

    Run dicts are built in score-descending order with ties in generation order, so a tool that
    keeps the given order (NTCIREVAL, Spark) sees the same ranking as ``ties=input_order``.
    """
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for i in range(n_queries):
        qid = str(101 + i) if numeric_ids else f"q{i:04d}"
        kind = rng.random()
        pool = [f"d{j:03d}" for j in rng.permutation(80)[: int(rng.integers(1, 30))]]
        grades = rng.integers(0, max_grade + 1, size=len(pool))
        if kind < 0.1:
            grades[:] = 0  # nothing relevant
        if negatives:
            grades[rng.random(len(pool)) < 0.1] = -1
        if kind < 0.9:  # 10% run-only queries
            qrels[qid] = {d: int(g) for d, g in zip(pool, grades, strict=True)}
        if 0.82 <= kind < 0.9:
            continue  # in the qrels, missing from the run
        unjudged = [f"u{j:03d}" for j in rng.permutation(40)[: int(rng.integers(0, 12))]]
        candidates = pool + unjudged
        n_ret = int(rng.integers(1, min(len(candidates), 40) + 1))
        docs = [candidates[j] for j in rng.permutation(len(candidates))[:n_ret]]  # some relevant never retrieved
        if ties:
            scores = rng.integers(0, 6, size=n_ret) / 4.0 + np.where(rng.random(n_ret) < 0.5, 0.0, rng.random(n_ret))
            near = rng.random(n_ret) < 0.1
            scores[near] = 0.5 + 1e-9 * rng.integers(0, 3, size=int(near.sum()))  # equal in float32 only
        else:
            scores = rng.permutation(n_ret) + rng.random() * 0.5
        order = np.argsort(-scores, kind="stable")
        run[qid] = {docs[j]: float(scores[j]) for j in order}
    return qrels, run


def write_trec(path: Path, qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]) -> tuple[Path, Path]:
    qpath, rpath = path / "qrels.txt", path / "run.txt"
    qpath.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items()))
    rpath.write_text(
        "".join(f"{q} Q0 {d} {i + 1} {s!r} tag\n" for q, docs in run.items() for i, (d, s) in enumerate(docs.items()))
    )
    return qpath, rpath


def ours(qrels, run, metric: str, preset: str, **knobs):  # type: ignore[no-untyped-def]
    res = rankflavor.evaluate(qrels, run, [metric], preset=preset, **knobs)[0]
    return res.mean, res.per_query()


# ---------------------------------------------------------------------------------------------
# The new knobs, on hand-checked values (flavor-facts §1.5, §1.11, §4.1, §4.3)


def test_min_grade_drops_low_grades_from_dcg_and_ideal() -> None:
    qrels = {"q": {"a": 1, "b": 2, "c": 3}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    # grades >= 2 only: DCG = 2/log2(3) + 3/2, IDCG = 3 + 2/log2(3)
    want = (2 / math.log2(3) + 1.5) / (3 + 2 / math.log2(3))
    assert ours(qrels, run, "ndcg@3[min_grade=2]", None)[0] == pytest.approx(want, abs=TOL)
    assert ours(qrels, run, "ndcg@3", None)[0] != pytest.approx(want, abs=1e-3)


def test_unjudged_grade_enters_dcg_only() -> None:
    # flavor-facts §4.1: two unrated hits with unknown_doc_rating 3, one rated doc of grade 1 -> 11.4
    qrels = {"q": {"rated": 1}}
    run = {"q": {"x": 2.0, "y": 1.0}}
    value = ours(qrels, run, '{"dcg": {"k": 10, "normalize": true, "unknown_doc_rating": 3}}', "elasticsearch")[0]
    assert value == pytest.approx(7 + 7 / math.log2(3), abs=TOL)
    assert round(value, 1) == 11.4


def test_run_only_policies() -> None:
    qrels = {"q1": {"a": 1}}
    run = {"q1": {"a": 1.0}, "q9": {"z": 1.0}}
    assert ours(qrels, run, "ndcg@10", None)[0] == 1.0  # skip
    assert ours(qrels, run, "ndcg@10[run_only=include]", None)[0] == 0.5  # trectools: ÷ run topics
    with pytest.raises(EvaluationError, match="run_only"):
        ours(qrels, run, "ndcg@10[run_only=error]", None)


def test_self_hits_dropped_before_ranking() -> None:
    qrels = {"q1": {"a": 1}}
    run = {"q1": {"q1": 2.0, "a": 1.0}}
    assert ours(qrels, run, "ndcg@1", None)[0] == 0.0
    assert ours(qrels, run, "ndcg@1[self_hits=drop]", None)[0] == 1.0


def test_p_divisor_hits_divides_by_what_was_shown() -> None:
    qrels = {"q1": {"a": 1, "b": 0}}
    run = {"q1": {"a": 2.0, "b": 1.0}}
    assert ours(qrels, run, "P@10", None)[0] == 0.1
    assert ours(qrels, run, "P@10[p_divisor=hits]", None)[0] == 0.5


def test_max_grade_rejects_larger_grades() -> None:
    with pytest.raises(InputError, match="max_grade=4"):
        ours({"q": {"a": 5}}, {"q": {"a": 1.0}}, "ndcg@10", "gdeval")


def test_quiet_knobs_keep_old_canonical_strings_and_round_trip() -> None:
    plain = parse_measure("ndcg@10")
    assert "min_grade" not in str(plain) and "run_only" not in str(plain)
    for text in ("ndcg@10[min_grade=2,unjudged_grade=1,run_only=include,self_hits=drop]",
                 "P@5[p_divisor=hits]", "ndcg@3[ideal=as_supplied,gain=exp2]", "dcg@5[max_grade=4]"):
        m = parse_measure(text)
        assert parse_measure(str(m)) == m
    assert parse_measure("ndcg@10[min_grade=none]") == plain  # explicit default is accepted


# ---------------------------------------------------------------------------------------------
# ir_measures (pytrec_eval, msmarco, judged and gdeval providers)

IRM_MEASURES = [
    "nDCG@10", "nDCG@5", "nDCG", "nDCG(judged_only=True)@10", "nDCG(gains={0:0,1:1,2:3})@10",
    "nDCG(gains={0:0,1:1,2:3,3:7})", "P(rel=2)@10", "P@5", "RR@10", "RR@3", "RR", "RR(rel=2)", "AP",
    "AP@100", "AP(rel=2)@5", "R@100", "R@5", "Judged@10", "Judged", "Success@10", "Success(rel=2)@1",
    "Rprec", "Rprec(rel=2)", "Bpref", "Bpref(rel=2)",
]
GDEVAL_VIA_IRM = ["nDCG(dcg='exp-log2')@10", "nDCG(dcg='exp-log2')@3"]


def _compare_ir_measures(qrels, run, names, tol):  # type: ignore[no-untyped-def]
    import ir_measures

    worst = 0.0
    for name in names:
        measure = ir_measures.parse_measure(name)
        want_mean = ir_measures.calc_aggregate([measure], qrels, run)[measure]
        want = {m.query_id: m.value for m in ir_measures.iter_calc([measure], qrels, run)}
        mean, got = ours(qrels, run, name, "ir_measures")
        assert set(got) == set(want), name
        for q, v in want.items():
            assert abs(got[q] - v) <= tol, (name, q, got[q], v)
            worst = max(worst, abs(got[q] - v))
        assert abs(mean - want_mean) <= tol, (name, mean, want_mean)
    return worst


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_ir_measures_random(seed: int) -> None:
    pytest.importorskip("ir_measures")
    qrels, run = random_case(seed, 400, negatives=seed == 3, numeric_ids=True)
    _compare_ir_measures(qrels, run, IRM_MEASURES, TOL)


@pytest.mark.skipif(shutil.which("perl") is None, reason="gdeval.pl needs perl")
def test_ir_measures_gdeval_random() -> None:
    pytest.importorskip("ir_measures")
    qrels, run = random_case(4, 400, negatives=True, numeric_ids=True)
    _compare_ir_measures(qrels, run, GDEVAL_VIA_IRM, 5e-6 + 1e-12)  # gdeval prints 5 decimals


def test_ir_measures_fingerprint() -> None:
    # flavor-facts §4.1: ir_measures nDCG@10 averages 0.1821 over q1, q2, q3 (q3 missing = 0)
    qrels, run = _toy()
    assert round(ours(qrels, run, "nDCG@10", "ir_measures")[0], 4) == 0.1821
    assert round(ours(qrels, run, "Judged@10", "ir_measures")[1]["q1"], 3) == 0.833


def test_ir_measures_dialect_errors() -> None:
    with pytest.raises(FlavorError, match="needs a cutoff"):
        resolve_measures(["P(rel=2)"], "ir_measures", {})
    with pytest.raises(FlavorError, match="takes"):
        resolve_measures(["Bpref(judged_only=True)"], "ir_measures", {})
    with pytest.raises(FlavorError, match="exp-log2"):
        resolve_measures(["nDCG(dcg='exp-log2')"], "ir_measures", {})


# ---------------------------------------------------------------------------------------------
# gdeval.pl, run directly

def _gdeval_script() -> Path:
    ir_measures = pytest.importorskip("ir_measures")
    if shutil.which("perl") is None:
        pytest.skip("gdeval.pl needs perl")
    return Path(ir_measures.__file__).parent / "bin" / "gdeval.pl"


def _run_gdeval(script: Path, qpath: Path, rpath: Path, k: int, column: str = "ndcg") -> dict[str, float]:
    """gdeval.pl's per-topic ``ndcg@k`` (or ``err@k``) column."""
    out = subprocess.run(["perl", str(script), str(qpath), str(rpath), str(k)], capture_output=True, text=True, check=True)
    rows = [line.split(",") for line in out.stdout.splitlines()[1:] if line]
    return {topic: float(ndcg if column == "ndcg" else err) for _, topic, ndcg, err in rows}


@pytest.mark.parametrize("k", [1, 5, 20])
def test_gdeval_random(tmp_path: Path, k: int) -> None:
    script = _gdeval_script()
    qrels, run = random_case(10 + k, 300, negatives=True, numeric_ids=True, max_grade=4)
    qpath, rpath = write_trec(tmp_path, qrels, run)
    want = _run_gdeval(script, qpath, rpath, k)
    mean, got = ours(qpath, rpath, f"ndcg@{k}", "gdeval")
    assert set(got) == set(want)  # topics without a positive judgment or a ranking are left out
    for q, v in want.items():
        assert abs(got[q] - v) <= 5e-6 + 1e-12, (q, got[q], v)
    assert abs(mean - sum(want.values()) / len(want)) <= 5e-6


def test_gdeval_rejects_grade_above_4(tmp_path: Path) -> None:
    script = _gdeval_script()
    qpath, rpath = write_trec(tmp_path, {"1": {"a": 5}}, {"1": {"a": 1.0}})
    assert subprocess.run(["perl", str(script), str(qpath), str(rpath), "10"], capture_output=True).returncode != 0
    with pytest.raises(InputError, match="max_grade=4"):
        ours(qpath, rpath, "ndcg@10", "gdeval")


def test_gdeval_fingerprint() -> None:
    # flavor-facts §4.1: gdeval @3 0.42496, @10 0.56033 on q1
    qrels, run = _toy()
    assert round(ours(qrels, run, "ndcg@3", "gdeval")[1]["q1"], 5) == 0.42496
    assert round(ours(qrels, run, "ndcg@10", "gdeval")[1]["q1"], 5) == 0.56033
    with pytest.raises(FlavorError, match="cutoff"):
        resolve_measures(["ndcg"], "gdeval", {})


# ---------------------------------------------------------------------------------------------
# ranx

RANX_METRICS = [
    "ndcg@10", "ndcg@3", "ndcg", "ndcg@10-l2", "ndcg_burges@10", "ndcg_burges@5-l2", "dcg@10", "dcg_burges@10-l2",
    "mrr@10", "mrr", "mrr-l2", "map@100", "map", "map@10-l2", "recall@100", "recall@5-l2", "precision@10",
    "precision@3-l2", "precision", "hit_rate@5", "hit_rate@1-l2", "r-precision", "r-precision-l2",
]


@pytest.mark.parametrize("seed", [21, 22])
def test_ranx_random_tie_free(seed: int) -> None:
    ranx = pytest.importorskip("ranx")
    qrels, run = random_case(seed, 500, ties=False, negatives=seed == 22)
    q, r = ranx.Qrels(qrels), ranx.Run(run)
    ranx.evaluate(q, r, RANX_METRICS, make_comparable=True)
    for name in RANX_METRICS:
        want = r.scores[name]
        # make_comparable=True: missing queries score 0, run-only queries are dropped
        mean, got = ours(qrels, run, name, "ranx", missing="zero", run_only="skip")
        assert set(got) == set(want), name
        for qid, v in want.items():
            assert abs(got[qid] - float(v)) <= TOL, (name, qid, got[qid], v)
        assert abs(mean - r.mean_scores[name]) <= TOL, name


def test_ranx_default_requires_matching_query_sets() -> None:
    ranx = pytest.importorskip("ranx")
    qrels, run = random_case(23, 30, ties=False)
    with pytest.raises(AssertionError):
        ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), "ndcg@10")
    with pytest.raises(EvaluationError):
        ours(qrels, run, "ndcg@10", "ranx")


def test_ranx_fingerprint_and_level() -> None:
    # flavor-facts §4.1: ranx ndcg / ndcg@3 with d2 inserted before d7: 0.5707 / 0.5498
    qrels, run = _toy(tie_first="d2")
    values = {m: ours(qrels, run, m, "ranx", missing="zero", run_only="skip")[1]["q1"] for m in ("ndcg", "ndcg@3")}
    assert (round(values["ndcg"], 4), round(values["ndcg@3"], 4)) == (0.5707, 0.5498)
    # §1.11/§3.5: unlike trec_eval's -l, ranx -l2 changes NDCG
    assert ours(qrels, run, "ndcg-l2", "ranx", missing="zero", run_only="skip")[1]["q1"] != values["ndcg"]


# ---------------------------------------------------------------------------------------------
# trectools


def _trectools(qpath: Path, rpath: Path):  # type: ignore[no-untyped-def]
    trectools = pytest.importorskip("trectools")
    import warnings

    warnings.filterwarnings("ignore", category=FutureWarning)
    return trectools.TrecEval(trectools.TrecRun(str(rpath)), trectools.TrecQrel(str(qpath)))


TRECTOOLS_CALLS = [
    ("get_ndcg", {"depth": 10}), ("get_ndcg", {"depth": 5, "trec_eval": False}), ("get_ndcg", {"depth": 1000}),
    ("get_ndcg", {"depth": 10, "removeUnjudged": True}), ("get_precision", {"depth": 10}),
    ("get_precision", {"depth": 5, "trec_eval": False}), ("get_precision", {"depth": 10, "removeUnjudged": True}),
    ("get_recall", {"depth": 20}), ("get_map", {"depth": 100}), ("get_map", {"depth": 5}),
    ("get_reciprocal_rank", {"depth": 10}), ("get_reciprocal_rank", {"depth": 3, "trec_eval": False}),
]


@pytest.mark.parametrize("seed", [31, 32])
def test_trectools_random(tmp_path: Path, seed: int) -> None:
    qrels, run = random_case(seed, 300, negatives=seed == 32)
    qpath, rpath = write_trec(tmp_path, qrels, run)
    te = _trectools(qpath, rpath)
    for fn, args in TRECTOOLS_CALLS:
        call = f"{fn}(" + ", ".join(f"{k}={v!r}" for k, v in args.items()) + ")"
        want_mean = float(getattr(te, fn)(**args))
        table = getattr(te, fn)(per_query=True, **args)
        mean, got = ours(qpath, rpath, call, "trectools")
        assert abs(mean - want_mean) <= TOL, (call, mean, want_mean)
        for qid, row in table.iterrows():
            v = float(row.iloc[0])
            # trectools prints NaN where it has no value; those topics count 0 in its mean.
            assert abs(got.get(str(qid), 0.0) - (0.0 if math.isnan(v) else v)) <= TOL, (call, qid)


def test_trectools_fingerprint(tmp_path: Path) -> None:
    # flavor-facts §4.1: trectools mean 0.1902 = 0.5707 / 3 topics of the run (q1, q2, q4)
    qrels, run = _toy()
    qpath, rpath = write_trec(tmp_path, qrels, run)
    assert round(ours(qpath, rpath, "NDCG@1000", "trectools")[0], 4) == 0.1902
    assert round(float(_trectools(qpath, rpath).get_ndcg()), 4) == 0.1902


# ---------------------------------------------------------------------------------------------
# NTCIREVAL (pyNTCIREVAL)


@pytest.mark.parametrize(("name", "gains"), [("nDCG@10", None), ("nDCG@3 -g 1:3:7", [1, 3, 7]), ("MSnDCG@10", None),
                                             ("MSnDCG@1000 -g 1:3:7", [1, 3, 7]), ("nDCG@1000", None)])
def test_ntcireval_random(name: str, gains: list[int] | None) -> None:
    ntcir = pytest.importorskip("pyNTCIREVAL")
    from pyNTCIREVAL.metrics import MSnDCG, nDCG

    qrels, run = random_case(41, 300)
    cutoff = int(re.search(r"@(\d+)", name).group(1))  # type: ignore[union-attr]
    grades = gains or [1, 2, 3]
    want = {}
    for qid, docs in run.items():
        if qid not in qrels or not any(g > 0 for g in qrels[qid].values()):
            continue  # pyNTCIREVAL divides by an ideal of 0: ZeroDivisionError
        labeler = ntcir.Labeler(qrels[qid])
        xrelnum = labeler.compute_per_level_doc_num(4)
        metric = nDCG(xrelnum, grades, 2, cutoff) if name.startswith("nDCG") else MSnDCG(xrelnum, grades, cutoff)
        want[qid] = metric.compute(labeler.label(list(docs)))
    kept_q = {q: qrels[q] for q in want}
    kept_r = {q: run[q] for q in want}
    _, got = ours(kept_q, kept_r, name, "ntcireval")
    assert len(want) > 200 and set(got) == set(want)
    for qid, v in want.items():
        assert abs(got[qid] - v) <= TOL, (name, qid, got[qid], v)
    with pytest.raises(EvaluationError, match="empty"):
        ours(qrels, run, name, "ntcireval")  # IDCG = 0 has no NTCIREVAL value


def test_ntcireval_fingerprint() -> None:
    # flavor-facts §4.1: list d3 d1 d7 d2 d4 (d6 dropped), gains 1:2:3
    qrels = {"q1": {"d1": 3, "d2": 2, "d3": 0, "d4": 1, "d5": 2}}
    run = {"q1": {"d3": 10.0, "d1": 9.0, "d7": 8.0, "d2": 8.0, "d4": 6.0}}
    value = {m: round(ours(qrels, run, m, "ntcireval")[0], 4)
             for m in ("nDCG@3", "MSnDCG@3", "MSnDCG@3 -g 1:3:7", "MSnDCG@1000", "MSnDCG@1000 -g 1:3:7")}
    assert value == {"nDCG@3": 0.4791, "MSnDCG@3": 0.3597, "MSnDCG@3 -g 1:3:7": 0.4250, "MSnDCG@1000": 0.5518,
                     "MSnDCG@1000 -g 1:3:7": 0.5632}


# ---------------------------------------------------------------------------------------------
# Search engines: fingerprints (flavor-facts §4.1; Elasticsearch re-implemented from its source)


def _toy(tie_first: str = "d7") -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """flavor-facts §4.1 IR toy; ``tie_first`` is inserted first of the tied pair d2/d7."""
    qrels = {"q1": {"d1": 3, "d2": 2, "d3": 0, "d4": 1, "d5": 2, "d6": -1}, "q2": {"e1": 0, "e2": 0}, "q3": {"f1": 1}}
    tied = ["d7", "d2"] if tie_first == "d7" else ["d2", "d7"]
    q1 = {"d3": 10.0, "d1": 9.0, tied[0]: 8.0, tied[1]: 8.0, "d6": 7.0, "d4": 6.0}
    return qrels, {"q1": q1, "q2": {"e1": 5.0, "e9": 4.0}, "q4": {"g1": 5.0}}


FIVE_DOC_RUN = {"q1": {"d3": 10.0, "d1": 9.0, "d7": 8.0, "d2": 7.0, "d4": 6.0}}
FIVE_DOC_QRELS = {"q1": {"d1": 3, "d2": 2, "d3": 0, "d4": 1, "d5": 2}}


def test_elasticsearch_ideal_cut_at_hits() -> None:
    # one returned hit rated 3 while five docs are rated 3 -> 1.0 (a k-cut ideal would give 0.34)
    qrels = {"q": {f"r{i}": 3 for i in range(5)}}
    run = {"q": {"r0": 1.0}}
    for preset in ("elasticsearch", "opensearch"):
        assert ours(qrels, run, "dcg(normalize=true)", preset)[0] == pytest.approx(1.0, abs=TOL)
    assert round(ours(qrels, run, "ndcg@10[gain=exp2]", None)[0], 2) == 0.34
    raw = ours(qrels, run, "dcg", "elasticsearch")[0]  # normalize defaults to false
    assert raw == pytest.approx(7.0, abs=TOL)


def test_quepid_fingerprints() -> None:
    run = FIVE_DOC_RUN
    assert round(ours(FIVE_DOC_QRELS, run, "nDCG@10", "quepid")[0], 4) == 0.5632
    assert round(ours(FIVE_DOC_QRELS, run, "P@10", "quepid")[0], 4) == 0.6
    rated = {"q": {f"r{i:02d}": 3 for i in range(12)}}
    top10 = {"q": {f"r{i:02d}": float(20 - i) for i in range(10)}}
    assert round(ours(rated, top10, "nDCG@10", "quepid")[0], 4) == 0.8922
    assert ours(rated, top10, "NDCG_CUT@10", "quepid")[0] == pytest.approx(1.0, abs=TOL)
    nan = ours({"q": {"a": 0}}, {"q": {"a": 1.0}}, "AP@10", "quepid")[1]["q"]
    assert math.isnan(nan)  # Quepid's AP@10 divides 0 by 0 when nothing is rated relevant


def test_spark_fingerprints() -> None:
    pairs = {k: round(ours(FIVE_DOC_QRELS, FIVE_DOC_RUN, f"ndcgAt({k})", "spark")[0], 4) for k in (3, 10)}
    assert pairs == {3: 0.2961, 10: 0.5654}
    # triples: the label array in the order supplied is the ideal; rankflavor supplies the
    # judgments in docno order, so the documents are renamed to put them in the order wanted
    judged = {"d1": 3, "d2": 2, "d5": 2, "d4": 1}
    got = {}
    for name, order in (("desc", ["d1", "d2", "d5", "d4"]), ("asc", ["d4", "d2", "d5", "d1"])):
        new = {d: f"a{i}" for i, d in enumerate(order)}
        q = {"q1": {new[d]: judged[d] for d in reversed(order)}}  # given in the other order: no matter
        run = {"q1": {new.get(d, d): s for d, s in FIVE_DOC_RUN["q1"].items()}}
        for k in (3, 10):
            got[(name, k)] = round(ours(q, run, f"ndcgAt({k})", "spark_triples")[0], 4)
    assert got == {("desc", 3): 0.4250, ("desc", 10): 0.5632, ("asc", 3): 1.0054, ("asc", 10): 0.8229}
    # meanAveragePrecisionAt(k) divides by min(|labels|, k) (tests/presets/test_presets_spark.py checks Spark's values)
    m = resolve_measures(["meanAveragePrecisionAt(3)"], "spark", {})[0][0]
    assert (m.metric, m.k, m.flavor.ap_divisor) == ("AP", 3, "min_k_relevant")


# ---------------------------------------------------------------------------------------------
# Real data: TREC DL 2019 BM25 (no tied scores) and SPLADE (tied scores), BEIR TREC-COVID

DL19_QRELS = ("qrels", "qrels.dl19-passage.txt")


def _read_dicts(qpath: Path, rpath: Path):  # type: ignore[no-untyped-def]
    qrels: dict[str, dict[str, int]] = {}
    for line in qpath.read_text().splitlines():
        q, _, d, g = line.split()
        qrels.setdefault(q, {})[d] = int(g)
    run: dict[str, dict[str, float]] = {}
    for line in rpath.read_text().splitlines():
        q, _, d, _, s, _ = line.split()
        run.setdefault(q, {})[d] = float(s)
    return qrels, run


@pytest.mark.parametrize("run_name", ["rankllm.dl19.bm25.top100.run", "rankllm.dl19.splade-p-p-ensemble-distil.top100.run"])
def test_dl19_ir_measures(run_name: str) -> None:
    pytest.importorskip("ir_measures")
    qrels, run = _read_dicts(shared_path(*DL19_QRELS), shared_path("runs", run_name))
    _compare_ir_measures(qrels, run, IRM_MEASURES, TOL)


def test_dl19_ranx_and_msmarco() -> None:
    ranx = pytest.importorskip("ranx")
    import ir_measures

    qrels, run = _read_dicts(shared_path(*DL19_QRELS), shared_path("runs", "rankllm.dl19.bm25.top100.run"))
    names = ["ndcg@10", "ndcg@10-l2", "ndcg_burges@10", "map@100-l2", "mrr@10-l2", "recall@100-l2", "precision@10"]
    r = ranx.Run(run)
    ranx.evaluate(ranx.Qrels(qrels), r, names, make_comparable=True)
    for name in names:
        assert abs(ours(qrels, run, name, "ranx")[0] - r.mean_scores[name]) <= TOL, name
    rr10 = ir_measures.calc_aggregate([ir_measures.RR @ 10], qrels, run)[ir_measures.RR @ 10]
    assert abs(ours(qrels, run, "MRR@10", "msmarco")[0] - rr10) <= TOL


def test_dl19_trectools_and_gdeval(tmp_path: Path) -> None:
    qpath, rpath = shared_path(*DL19_QRELS), shared_path("runs", "rankllm.dl19.bm25.top100.run")
    te = _trectools(qpath, rpath)
    for call, fn, args in (("NDCG@10", "get_ndcg", {"depth": 10}), ("P@10", "get_precision", {"depth": 10}),
                           ("MAP@1000", "get_map", {"depth": 1000})):
        assert abs(ours(qpath, rpath, call, "trectools")[0] - float(getattr(te, fn)(**args))) <= TOL, call
    script = _gdeval_script()
    want = _run_gdeval(script, qpath, rpath, 20)
    _, got = ours(qpath, rpath, "ndcg@20", "gdeval")
    assert set(got) == set(want) and max(abs(got[q] - v) for q, v in want.items()) <= 5e-6


def _trec_eval_all(name: str) -> dict[str, str]:
    out = {}
    for line in shared_path("expected", name).read_text().splitlines():
        measure, topic, value = (s.strip() for s in line.split("\t"))
        if topic == "all":
            out[measure] = value
    return out


def test_trec_dl_preset_matches_nist_conventions() -> None:
    qpath, rpath = shared_path(*DL19_QRELS), shared_path("runs", "rankllm.dl19.bm25.top100.run")
    graded = _trec_eval_all("rankllm.dl19.bm25.top100.all_trec.q.c.txt")  # -c
    binary = _trec_eval_all("rankllm.dl19.bm25.top100.all_trec.q.c.l2.txt")  # -c -l 2
    mrr10 = _trec_eval_all("rankllm.dl19.bm25.top100.recip_rank.M10.l2.q.c.txt")  # -c -l 2 -M 10
    res = rankflavor.evaluate(qpath, rpath, ["ndcg@10", "AP", "recall@100", "RR@10", "P@10"], preset="trec_dl")
    got = {m.measure.display: f"{m.mean:.4f}" for m in res}
    assert got == {"ndcg@10": graded["ndcg_cut_10"], "AP": binary["map"], "recall@100": binary["recall_100"],
                   "RR@10": mrr10["recip_rank"], "P@10": binary["P_10"]}
    assert got["ndcg@10"] == "0.5058" and got["recall@100"] == "0.4910"  # Anserini's published DL19 BM25


def test_beir_trec_covid_matches_beir_evaluate() -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, run = _read_dicts(shared_path("qrels", "qrels.beir-v1.0.0-trec-covid.test.txt"),
                             shared_path("runs", "rankllm.covid.bm25.top100.run"))
    run = {q: {d: s for d, s in docs.items() if d != q} for q, docs in run.items()}  # ignore_identical_ids
    scores = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.100", "map_cut.10", "P.10"}).evaluate(run)
    for beir_name, key in (("NDCG@10", "ndcg_cut_10"), ("Recall@100", "recall_100"), ("MAP@10", "map_cut_10"),
                           ("P@10", "P_10")):
        want = sum(s[key] for s in scores.values()) / len(scores)  # BEIR: sum / len(scores)
        assert abs(ours(qrels, run, beir_name, "beir")[0] - want) <= TOL, beir_name
    assert f"{ours(qrels, run, 'NDCG@10', 'beir')[0]:.4f}" == "0.5947"  # Anserini's BEIR TREC-COVID BM25 flat


@pytest.mark.parametrize("seed", [51])
def test_beir_random_matches_pytrec_eval(seed: int) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, run = random_case(seed, 400, negatives=True)
    for q in list(run)[:40]:
        run[q][q] = 99.0  # a self hit BEIR drops
    beir_run = {q: {d: s for d, s in docs.items() if d != q} for q, docs in run.items()}
    scores = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.100", "map_cut.100"}).evaluate(beir_run)
    for beir_name, key in (("NDCG@10", "ndcg_cut_10"), ("Recall@100", "recall_100"), ("MAP@100", "map_cut_100")):
        mean, got = ours(qrels, run, beir_name, "beir")
        assert set(got) == set(scores)
        assert max(abs(got[q] - scores[q][key]) for q in scores) <= TOL, beir_name
        assert abs(mean - sum(s[key] for s in scores.values()) / len(scores)) <= TOL


# ---------------------------------------------------------------------------------------------
# Registry-wide checks and the generated docs table


MY_PRESETS = ("ir_measures", "gdeval", "ranx", "trectools", "ntcireval", "msmarco", "trec_dl", "beir",
              "elasticsearch", "opensearch", "quepid", "spark", "spark_triples")


@pytest.mark.parametrize("name", MY_PRESETS)
def test_default_measures_resolve_and_round_trip(name: str) -> None:
    preset = PRESETS[name]
    assert preset.evidence and preset.summary and preset.default_metrics
    measures, _ = resolve_measures(list(preset.default_metrics), name, {})
    assert len(measures) == len(preset.default_metrics)
    for m in measures:
        assert parse_measure(str(m)) == m


def test_cli_preset_prints_defaults_with_flavor(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from rankflavor.cli.main import cli

    qpath, rpath = write_trec(tmp_path, *_toy())
    out = CliRunner().invoke(cli, ["eval", str(qpath), str(rpath), "--preset", "beir", "--format", "csv"])
    assert out.exit_code == 0, out.output
    assert "NDCG@10" in out.output or "ndcg@10[" in out.output
    assert "self_hits=drop" in out.output and "precision=float32" in out.output


def test_docs_flavor_table_is_generated() -> None:
    doc = ROOT / "docs" / "flavors.md"
    m = GENERATED.search(doc.read_text())
    assert m, "docs/flavors.md lost its generated-table markers"
    assert m.group(2) == flavor_table_markdown(), (
        "docs/flavors.md is out of date: run python3 -c 'import rankflavor.presets as p; p.write_flavor_doc()'"
    )
