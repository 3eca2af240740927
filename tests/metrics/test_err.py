"""ERR (Chapelle et al. 2009) against gdeval.pl itself and the flavor-facts fingerprints."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import rankflavor
from rankflavor.errors import FlavorError

from ..presets.test_presets_ir import _gdeval_script, _run_gdeval, _toy, ours, random_case, write_trec
from .cascade_cases import distinct_case, ranked_grades


def _section_4_3() -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """flavor-facts §4.3 flavor-axis example (G = 3)."""
    grades = {"d1": 3, "d2": 2, "d3": 0, "d4": 1, "d5": 3, "d6": 0, "d7": 2, "d8": 0, "d9": 1,
              "d11": 3, "d13": 2, "d14": 0, "d21": 3, "d22": 2, "d23": 1}
    order = ["d2", "d3", "d1", "d4", "d6", "dU", "d7", "d8", "d5", "d9",
             "d10", "d11", "d12", "d13", "d14", "d15", "d16", "d17", "d18", "d19"]
    return {"q": grades}, {"q": {d: float(20 - i) for i, d in enumerate(order)}}


def test_err_fingerprints_section_4_3() -> None:
    qrels, run = _section_4_3()
    assert round(ours(qrels, run, "ERR@10[max_grade=3]", "rankflavor")[0], 4) == 0.5676
    assert round(ours(qrels, run, "ERR@10[max_grade=4]", "rankflavor")[0], 4) == 0.3428
    assert round(ours(qrels, run, "ERR@10", "quepid")[0], 4) == 0.5676  # Quepid hard-wires G = 3


def test_gdeval_err_fingerprint_section_4_1() -> None:
    qrels, run = _toy()
    assert round(ours(qrels, run, "err@3", "gdeval")[1]["q1"], 5) == 0.21875
    assert round(ours(qrels, run, "err@10", "gdeval")[1]["q1"], 5) == 0.24988


def test_err_needs_the_top_grade() -> None:
    qrels, run = _section_4_3()
    with pytest.raises(FlavorError, match="max_grade"):
        rankflavor.evaluate(qrels, run, ["ERR@10"])


@pytest.mark.parametrize("k", [1, 5, 20])
def test_gdeval_err_random(tmp_path: Path, k: int) -> None:
    script = _gdeval_script()
    qrels, run = random_case(40 + k, 300, negatives=True, numeric_ids=True, max_grade=4)
    qpath, rpath = write_trec(tmp_path, qrels, run)
    want = _run_gdeval(script, qpath, rpath, k, column="err")
    mean, got = ours(qpath, rpath, f"err@{k}", "gdeval")
    assert len(want) > 150
    assert set(got) == set(want)
    for q, v in want.items():
        assert abs(got[q] - v) <= 5e-6 + 1e-12, (q, got[q], v)  # gdeval prints 5 decimals
    assert abs(mean - sum(want.values()) / len(want)) <= 5e-6
    # The test can fail: Quepid's G = 3 scale is far from gdeval's G = 4 on the same data.
    other = ours(qpath, rpath, f"ERR@{k}[max_grade=5]", "gdeval")[1]
    assert max(abs(other[q] - want[q]) for q in want) > 1e-3


# ---------------------------------------------------------------------------------------------
# ERR through ir_measures (its ERR runs gdeval.pl), hand-derived 0-3 examples, the gain knob and
# nERR, each against a reference written here from Chapelle et al.'s formula.

def test_ir_measures_err_random_0_to_4(tmp_path: Path) -> None:
    ir_measures = pytest.importorskip("ir_measures")
    _gdeval_script()  # skips without perl
    qrels, run = random_case(77, 120, negatives=True, numeric_ids=True, max_grade=4)
    qpath, rpath = write_trec(tmp_path, qrels, run)
    for k in (3, 10):
        want = {m.query_id: m.value for m in ir_measures.iter_calc(
            [ir_measures.ERR @ k], ir_measures.read_trec_qrels(str(qpath)), ir_measures.read_trec_run(str(rpath)))}
        got = ours(qpath, rpath, f"err@{k}", "gdeval")[1]
        common = set(want) & set(got)
        assert len(common) > 60
        # ir_measures adds 0 for the queries gdeval leaves out (the gdeval preset skips them)
        assert all(want[q] == 0 for q in set(want) - common)
        for q in common:
            v = want[q]
            assert abs(got[q] - v) <= 5e-6 + 1e-12, (k, q, got[q], v)  # gdeval prints 5 decimals
        assert max(want.values()) > 0.3  # values of every size, not only zeros


def chapelle(grades: list[int | None], top: float, k: int | None, stop=None) -> float:  # type: ignore[no-untyped-def]
    """ERR@k of grades in rank order (None: unjudged, negative: unjudged), from the paper."""
    stop = stop or (lambda g: (2 ** g - 1) / 2 ** top)
    value, reach = 0.0, 1.0
    for r, g in enumerate(grades[:k] if k else grades, start=1):
        p = 0.0 if g is None or g < 0 else stop(g)
        value += reach * p / r
        reach *= 1 - p
    return value


def test_err_worked_examples_0_to_3() -> None:
    # Grades 2, 0, 3, 1 at ranks 1-4 on a 0-3 scale: R = 3/8, 0, 7/8, 1/8.
    qrels = {"q": {"a": 2, "b": 0, "c": 3, "d": 1}}
    run = {"q": {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0}}
    err4 = 3 / 8 + (5 / 8) * (7 / 8) / 3 + (5 / 8) * (1 / 8) * (1 / 8) / 4
    ideal4 = 7 / 8 + (1 / 8) * (3 / 8) / 2 + (1 / 8) * (5 / 8) * (1 / 8) / 3  # 3, 2, 1, 0
    got = [m.mean for m in rankflavor.evaluate(
        qrels, run, ["ERR@4[max_grade=3]", "ERR@2[max_grade=3]", "nERR@4[max_grade=3]", "nERR@1[max_grade=3]",
                     "ERR_gain@4[gain=binary,rel=2]", "ERR_gain@4[max_grade=3,gain={1:1,2:2,3:3}]",
                     "ERR_gain@4[max_grade=3]", "ERR_gain@4[max_grade=3,gain=exp2]"])]
    assert got == pytest.approx(
        [err4, 3 / 8, err4 / ideal4, (3 / 8) / (7 / 8),
         1 / 2 + (1 / 2) * (1 / 2) / 3,  # grades >= 2 stop with R = 1/2
         2 / 4 + (2 / 4) * (3 / 4) / 3 + (2 / 4) * (1 / 4) * (1 / 4) / 4,  # R = g / (3 + 1)
         2 / 4 + (2 / 4) * (3 / 4) / 3 + (2 / 4) * (1 / 4) * (1 / 4) / 4,  # linear is that table
         err4],  # exp2 under ERR_gain is Chapelle's rule
        abs=1e-12)


def _reference_nerr(qrels, run, q, top, k, ideal="global", cut="k"):  # type: ignore[no-untyped-def]
    grades = ranked_grades(qrels, run, q)
    if ideal == "global":
        pool = [g for g in qrels[q].values() if g > 0]
    elif ideal == "local":
        pool = [g for g in grades if g is not None and g > 0]
    else:  # max: G in every slot
        slots = len(grades) if cut == "none" else min(k, len(grades)) if cut == "hits" else k
        pool = [int(top)] * slots
    n = {"k": k, "none": None, "hits": min(k, len(grades))}[cut]
    best = chapelle(sorted(pool, reverse=True), top, n)
    return (chapelle(grades, top, k) / best if best > 0 else 0.0), best <= 0


@pytest.mark.parametrize("seed", [1, 2])
def test_err_and_nerr_random_against_the_formula(seed: int) -> None:
    qrels, run = distinct_case(seed, 60, 3, negatives=True)
    for k in (1, 5, 20):
        got = rankflavor.evaluate(qrels, run, [f"ERR@{k}[max_grade=3]", f"nERR@{k}[max_grade=3]",
                                               f"nERR@{k}[max_grade=3,ideal=local]",
                                               f"nERR@{k}[max_grade=3,ideal=max,ideal_cut=hits]",
                                               f"nERR@{k}[max_grade=3,ideal_cut=none]"], empty="nan")
        err, nerr, local, top, uncut = (m.per_query() for m in got)
        answered = [q for q in run if run[q] and q in qrels]  # (an empty ranking is a missing query)
        assert len(answered) > 30
        for q in answered:
            grades = ranked_grades(qrels, run, q)
            if all(g is None or g <= 0 for g in qrels[q].values()):
                assert np.isnan(err[q]) and np.isnan(nerr[q])  # nothing to find: empty
                continue
            assert err[q] == pytest.approx(chapelle(grades, 3, k), abs=1e-12)
            for table, ideal, cut in ((nerr, "global", "k"), (local, "local", "k"), (top, "max", "hits"),
                                      (uncut, "global", "none")):
                want, empty = _reference_nerr(qrels, run, q, 3, k, ideal, cut)
                assert (np.isnan(table[q]) if empty else table[q] == pytest.approx(want, abs=1e-12)), (q, ideal)


def test_err_gain_tables_map_to_stopping_probabilities() -> None:
    qrels, run = distinct_case(5, 50, 3)
    base = rankflavor.evaluate(qrels, run, "ERR@10[max_grade=3]")[0].per_query()
    # Chapelle's rule is ERR_gain under exp2 gain, and under the exp2 table: the same numbers.
    for text in ("ERR_gain@10[max_grade=3,gain={0:0,1:1,2:3,3:7}]", "ERR_gain@10[max_grade=3,gain=exp2]"):
        same = rankflavor.evaluate(qrels, run, text)[0].per_query()
        assert same == pytest.approx(base, abs=1e-15), text
    # One meaning of the gain knob: linear IS the table {g: g}, both R = g / (G + 1).
    for text in ("ERR_gain@10[max_grade=3,gain={0:0,1:1,2:2,3:3}]", "ERR_gain@10[max_grade=3,gain=linear]",
                 "ERR_gain@10[max_grade=3]"):
        flat = rankflavor.evaluate(qrels, run, text)[0].per_query()
        for q, v in flat.items():
            assert v == pytest.approx(chapelle(ranked_grades(qrels, run, q), 3, 10, stop=lambda g: g / 4), abs=1e-12)
        assert max(abs(flat[q] - base[q]) for q in base if not np.isnan(base[q])) > 0.05  # can fail
    # nERR_gain: the same stopping rule in the ideal too.
    got = rankflavor.evaluate(qrels, run, "nERR_gain@10[max_grade=3]")[0].per_query()
    for q, v in got.items():
        best = chapelle(sorted((g for g in qrels[q].values() if g > 0), reverse=True), 3, 10, stop=lambda g: g / 4)
        want = chapelle(ranked_grades(qrels, run, q), 3, 10, stop=lambda g: g / 4) / best if best > 0 else 0.0
        assert v == pytest.approx(want, abs=1e-12), q


def test_err_reads_no_gain_and_says_what_to_write() -> None:
    """ERR is Chapelle's: every gain is refused alike (linear, exp2, a table), pointing at ERR_gain."""
    qrels, run = {"q": {"a": 2, "b": 3}}, {"q": {"a": 2.0, "b": 1.0}}
    for gain in ("linear", "exp2", "{1:1,2:2,3:3}", "{0:0,1:1,2:3,3:7}", "binary"):
        for metric in ("ERR", "nERR"):
            with pytest.raises(FlavorError, match=rf"does not change {metric}@2.*{metric}_gain"):
                rankflavor.evaluate(qrels, run, f"{metric}@2[max_grade=3,gain={gain}]")


def test_err_unknown_doc_rating_is_an_assumed_grade() -> None:
    """Elasticsearch ``unknown_doc_rating``: an unrated document takes that grade's R; with none it
    stops no one but keeps its rank (ExpectedReciprocalRankTests.testERRMissingRatings)."""
    qrels = {"q": {"0": 3, "2": 0, "3": 1}}
    run = {"q": {"0": 4.0, "1": 3.0, "2": 2.0, "3": 1.0}}
    got = [m.mean for m in rankflavor.evaluate(qrels, run, ["ERR@4[max_grade=3]", "ERR@4[max_grade=3,unjudged_grade=2]",
                                                             "ERR@4[max_grade=3,unjudged_grade=0]"])]
    assert got == pytest.approx([0.875 + 0.00390625, 0.8984375 + 0.00244140625, 0.875 + 0.00390625], abs=1e-14)
    # A query whose judgments stop no one is not empty when an unrated hit in the top k does.
    empty = rankflavor.evaluate({"q": {"z": 0}}, {"q": {"u": 1.0, "z": 0.5}}, ["ERR@1[max_grade=3,unjudged_grade=3]",
                                                                          "ERR@1[max_grade=3]"], empty="nan")
    assert empty[0].per_query()["q"] == pytest.approx(7 / 8, abs=1e-15)
    assert np.isnan(empty[1].per_query()["q"])
    # ... and an unrated document below k does not make it so.
    below = rankflavor.evaluate({"q": {"z": 0}}, {"q": {"z": 1.0, "u": 0.5}}, "ERR@1[max_grade=3,unjudged_grade=3]",
                                empty="nan")[0].per_query()["q"]
    assert np.isnan(below)
    with pytest.raises(FlavorError, match="a grade 4 exceeds max_grade=3"):  # R would be >= 1
        rankflavor.evaluate(qrels, run, "ERR@4[max_grade=3,unjudged_grade=4]")


def test_err_refusals_and_round_trips() -> None:
    qrels = {"q": {"a": 2, "b": 3}}
    run = {"q": {"a": 2.0, "b": 1.0}}
    with pytest.raises(FlavorError, match=r"outside \[0, 1\)"):
        rankflavor.evaluate(qrels, run, "ERR_gain@2[max_grade=3,gain={2:9}]")  # gain(2) = 9 > gain(3) = 3
    # as_supplied: the judgments in docno order (a: 2, b: 3), unsorted by grade, are the "ideal"
    supplied = rankflavor.evaluate(qrels, run, "nERR@2[max_grade=3,ideal=as_supplied]")[0].mean
    assert supplied == pytest.approx(1.0, abs=1e-12)  # the run is in docno order too
    reread = rankflavor.evaluate({"q": {"b": 3, "a": 2}}, run, "nERR@2[max_grade=3,ideal=as_supplied]")[0].mean
    assert reread == supplied  # the order the judgments are given in does not matter
    # docnos whose order puts the grade 3 first: the ideal is [3, 2], the run ranks 2 then 3
    flipped = rankflavor.evaluate({"q": {"y": 2, "x": 3}}, {"q": {"y": 2.0, "x": 1.0}},
                                  "nERR@2[max_grade=3,ideal=as_supplied]")[0].mean
    err = 3 / 8 + (5 / 8) * (7 / 8) / 2
    assert flipped == pytest.approx(err / (7 / 8 + (1 / 8) * (3 / 8) / 2), abs=1e-12)
    with pytest.raises(FlavorError, match="does not change"):  # ERR is Chapelle's rule, whatever the gain
        rankflavor.evaluate(qrels, run, "ERR@2[max_grade=3,gain=exp2]")
    # ideal=max under binary gain: a relevant document (R = 1/2) in each of the k slots, whatever rel is
    one = rankflavor.evaluate(qrels, run, "nERR_gain@2[gain=binary,rel=3,ideal=max]")[0].mean
    assert one == pytest.approx((1 / 4) / (1 / 2 + (1 / 2) * (1 / 2) / 2), abs=1e-12)  # b (3) at rank 2
    from rankflavor.metrics.measure import parse_measure

    for text in ("nERR@5[max_grade=3,ideal=recall@10]", "ERR_gain@5[gain={1:1,2:2},max_grade=3]",
                 "nERR_gain@3[gain=binary,rel=2]", "ERR@5[max_grade=3,unjudged_grade=1]"):
        m = rankflavor.evaluate(qrels, run, text)[0].measure
        assert parse_measure(str(m)) == m
