"""Grades with a fractional part: the ``fractional`` knob (keep | truncate | error).

trec_eval reads a grade with ``atol`` (get_qrels.c), so 1.5 is 1, 0.4 is 0 and -0.5 is a judged 0;
RankLib casts a label to int; pytrec_eval and ir_measures refuse a relevance that is not an int.
The trec_eval values quoted below were printed by trec_eval 9.0.8 on QRELS and RUN; every
expected value is also computed by hand from the truncated grades.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import rankflavor
from rankflavor.errors import InputError
from rankflavor.metrics.measure import parse_measure

QRELS = "q1 0 a 1.5\nq1 0 b 2.7\nq1 0 c 0.4\nq1 0 d -0.5\nq1 0 e 1\n"
#: Scores descending in file order; x is unjudged.
RUN = "q1 Q0 c 1 5.0 t\nq1 Q0 d 2 4.0 t\nq1 Q0 x 3 3.0 t\nq1 Q0 a 4 2.0 t\nq1 Q0 b 5 1.0 t\n"


def _log2(i: int) -> float:
    return math.log2(i + 1)


@pytest.fixture
def files(write) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    return str(write("qrels.txt", QRELS)), str(write("run.txt", RUN))


def test_trec_eval_reads_grades_as_atol_does(files: tuple[str, str]) -> None:
    qrels, run = files
    # Truncated: a=1 b=2 c=0 d=0 (judged) e=1. Ranked c d x a b.
    ideal = 2 / _log2(1) + 1 / _log2(2) + 1 / _log2(3)
    ndcg = (1 / _log2(4) + 2 / _log2(5)) / ideal
    res = rankflavor.evaluate(qrels, run, ["ndcg", "num_rel", "num_ret"], preset="trec_eval")
    assert res["ndcg"].per_query()["q1"] == pytest.approx(ndcg, abs=1e-12)
    assert round(ndcg, 4) == 0.3847  # trec_eval 9.0.8: ndcg 0.3847
    assert res["num_rel"].mean == 3  # trec_eval: num_rel 3 (0.4 is not relevant)
    assert "fractional=truncate" in str(res["ndcg"].measure)

    # -J drops the unjudged x but keeps d, a judged 0 once -0.5 is truncated: c d a b.
    condensed = rankflavor.evaluate(qrels, run, ["ndcg", "num_ret"], preset="trec_eval", unjudged="condensed")
    assert condensed["ndcg"].per_query()["q1"] == pytest.approx((1 / _log2(3) + 2 / _log2(4)) / ideal, abs=1e-12)
    assert round(condensed["ndcg"].mean, 4) == 0.4348  # trec_eval -J: ndcg 0.4348
    assert condensed["num_ret"].mean == 4  # trec_eval -J: num_ret 4

    # -c: num_rel summed over qrels lines with grade > 0 after atol (trec_eval -c: 3).
    assert rankflavor.evaluate(qrels, run, ["num_rel"], preset="trec_eval", missing="zero")[0].mean == 3
    chunked = rankflavor.evaluate(qrels, run, ["ndcg", "num_rel"], preset="trec_eval", missing="zero", chunk_rows=2)
    assert chunked.means() == rankflavor.evaluate(qrels, run, ["ndcg", "num_rel"], preset="trec_eval", missing="zero").means()


def test_keep_uses_the_grades_as_written(files: tuple[str, str]) -> None:
    qrels, run = files
    # Linear gains 1.5, 2.7, 0.4, 1; d (-0.5) is negative: unjudged, gain 0, not in the ideal.
    ideal = 2.7 / _log2(1) + 1.5 / _log2(2) + 1 / _log2(3) + 0.4 / _log2(4)
    dcg = 0.4 / _log2(1) + 1.5 / _log2(4) + 2.7 / _log2(5)
    res = rankflavor.evaluate(qrels, run, ["ndcg", "num_rel[total=qrels_positive]"])
    assert res["ndcg"].per_query()["q1"] == pytest.approx(dcg / ideal, abs=1e-12)
    assert res[1].mean == 4  # 0.4 > 0 counts
    assert "fractional" not in str(res["ndcg"].measure)  # the default is not printed


@pytest.mark.parametrize("preset", ["pytrec_eval", "ir_measures", "beir"])
def test_tools_that_refuse_a_fractional_grade(files: tuple[str, str], preset: str) -> None:
    qrels, run = files
    with pytest.raises(InputError, match=r"4 judgment\(s\) have a grade that is not a whole number.*fractional=error"):
        rankflavor.evaluate(qrels, run, ["P@5"] if preset != "pytrec_eval" else ["P.5"], preset=preset)


def test_pytrec_eval_itself_refuses_them() -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier is in the [test] extras")
    with pytest.raises(TypeError, match="integer"):
        pytrec_eval.RelevanceEvaluator({"q1": {"a": 1.5}}, {"P"})
    pytrec_eval.RelevanceEvaluator({"q1": {"a": 1}}, {"P"})  # the same with a whole grade is taken


def test_whole_grades_are_the_same_under_every_policy(files: tuple[str, str], tmp_path: Path) -> None:
    qrels = tmp_path / "whole.txt"
    qrels.write_text("q1 0 a 1\nq1 0 b 2\nq1 0 c 0\nq1 0 d -1\n")
    run = files[1]
    values = {p: rankflavor.evaluate(str(qrels), run, [f"ndcg[fractional={p}]", f"bpref[fractional={p}]"]).means()
              for p in ("keep", "truncate", "error")}
    assert len({tuple(v.values()) for v in values.values()}) == 1


def test_the_knob_round_trips_through_its_canonical_string() -> None:
    m = parse_measure("ndcg@10[fractional=truncate]")
    assert m.flavor.fractional == "truncate"
    assert parse_measure(str(m)) == m
    with pytest.raises(rankflavor.FlavorError, match="fractional"):
        parse_measure("ndcg@10[fractional=round]")


def test_explain_shows_the_whole_part_at_work(files: tuple[str, str]) -> None:
    qrels, run = files
    e = rankflavor.explain(qrels, run, "q1", "trec_eval:ndcg")
    assert [r.gain for r in e.rows] == [0.0, 0.0, 0.0, 1.0, 2.0]
    assert all(math.copysign(1.0, r.gain) > 0 for r in e.rows)  # -0.5 gains 0, not -0
    assert [s.doc for s in e.ideal] == ["b", "a", "e"]  # the ideal's documents found by their truncated grades
    assert any("fractional=truncate" in n for n in e.notes)
    assert e.ndcg == pytest.approx(rankflavor.evaluate(qrels, run, "trec_eval:ndcg")[0].mean, abs=1e-12)


def test_negatives_error_sees_the_truncated_grades(files: tuple[str, str]) -> None:
    """-0.5 is a judged 0 once truncated, so negatives=error has nothing to refuse; kept, it is negative."""
    qrels, run = files
    rankflavor.evaluate(qrels, run, ["ndcg[negatives=error,fractional=truncate]"])
    with pytest.raises(InputError, match="1 judgment"):
        rankflavor.evaluate(qrels, run, ["ndcg[negatives=error]"])
