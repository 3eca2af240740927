"""UDCG (Trappolini et al., arXiv 2510.21440): the authors' published outputs, worked examples from
the definitions, the positional form's formula, the distractor label from TREC qrels and readers,
and the same per-query values whether a run is read whole or in chunks."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from click.testing import CliRunner

import rankflavor
from rankflavor.cli.main import cli
from rankflavor.errors import FlavorError
from rankflavor.io.qrels import mark_distractors
from rankflavor.io.tables import Qrels
from rankflavor.metrics.measure import parse_measure

from ..presets.test_presets_ir import write_trec
from .cascade_cases import distinct_case


def sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x))


#: GiovanniTRA/UDCG ``data/dataset_with_udcg.json`` (commit daeee3b): each passage's relevance
#: label and Llama-3.2-3B-Instruct ``no_res_prob``, in the order given, and the ``udcg`` the
#: authors' ``compute_udcg_scores.py`` wrote for the item, run by their ``example_pipeline.sh``
#: with ``--irrelevant_weight -0.333`` (the function's own default is -1/3).
AUTHORS = {
    "example_1": (0.5553808928170055, [(True, 2.086162567138672e-06), (True, 1.341104507446289e-05),
                                       (False, 0.1318359375), (False, 0.1812744140625), (False, 0.02081298828125)]),
    "example_2": (0.5501411475208001, [(True, 5.960464477539063e-08), (True, 6.616115570068359e-06),
                                       (False, 0.00018215179443359375), (False, 0.006114959716796875),
                                       (False, 0.0093536376953125)]),
    "example_3": (0.4837510250741193, [(True, 3.0100345611572266e-05), (False, 0.00010311603546142578),
                                       (False, 0.007602691650390625), (False, 0.01299285888671875),
                                       (False, 0.00013053417205810547)]),
}


def _authors_inputs() -> tuple[dict[str, dict[str, float]], dict[str, dict[str, float]]]:
    """Utilities as the code forms them: +(1 - no_res_prob) relevant, -(1 - no_res_prob) not."""
    qrels = {q: {f"p{i}": (1.0 - p) * (1 if rel else -1) for i, (rel, p) in enumerate(ps)}
             for q, (_, ps) in AUTHORS.items()}
    run = {q: {f"p{i}": float(len(ps) - i) for i in range(len(ps))} for q, (_, ps) in AUTHORS.items()}
    return qrels, run


def test_reproduces_the_authors_published_scores() -> None:
    qrels, run = _authors_inputs()
    got = rankflavor.evaluate(qrels, run, ["UDCG[utility=grade,penalty=-0.333]", "UDCG@5[utility=grade,penalty=-0.333]"])
    for m in got:
        for q, (want, _) in AUTHORS.items():
            assert m.per_query()[q] == pytest.approx(want, abs=1e-12), (m.measure, q)
    # The default penalty is the code's own -1/3: 4e-5 to 7e-5 below the published file.
    default = rankflavor.evaluate(qrels, run, "UDCG[utility=grade]")[0].per_query()
    for q, (want, _) in AUTHORS.items():
        assert 3e-5 < want - default[q] < 1e-4, q
    # Judgments that declare their grade column utilities take utility=grade by themselves.
    rows = [(q, d, u) for q, docs in qrels.items() for d, u in docs.items()]
    table = Qrels(pa.array([r[0] for r in rows]), pa.array([r[1] for r in rows]), np.array([r[2] for r in rows]),
                  utilities=True)
    declared = rankflavor.evaluate(table, run, "UDCG[penalty=-0.333]")[0]
    assert declared.measure.flavor.utility == "grade"
    assert declared.per_query() == pytest.approx({q: v for q, (v, _) in AUTHORS.items()}, abs=1e-12)
    with pytest.raises(FlavorError, match="per-passage utilities"):
        rankflavor.evaluate(table, run, "UDCG[distractor_grade=-1]")


def test_worked_examples_from_the_definitions() -> None:
    # a relevant (2), b a distractor (-1), c judged non-relevant, d unjudged, e relevant (1)
    qrels = {"q": {"a": 2, "b": -1, "c": 0, "e": 1}, "short": {"a": 1}, "none": {"a": 1}}
    run = {"q": {"a": 5.0, "b": 4.0, "c": 3.0, "d": 2.0, "e": 1.0}, "short": {"x": 2.0, "a": 1.0}, "none": {"z": 1.0}}
    measures = [
        "UDCG@5[distractor_grade=-1]",             # (1 - 1/3 + 0 + 0 + 1) / 5
        "UDCG@3[distractor_grade=-1]",             # (1 - 1/3 + 0) / 3
        "UDCG@5[distractor_grade=-1,rel=2]",       # e is not relevant at rel=2
        "UDCG@5[distractor_grade=0,penalty=-0.5]",  # c distracts now; b's -1 is an unjudged grade
        "UDCG@5",                                  # no distractor declared: (1 + 1) / 5
        "UDCG@3[param=(0.5,0.3,0.2,-0.4,-0.2,-0.1),distractor_grade=-1]",  # a: +0.5, b: -0.2
    ]
    got = [m.per_query() for m in rankflavor.evaluate(qrels, run, measures)]
    want_q = [sigmoid(5 / 3 / 5), sigmoid(2 / 3 / 3), sigmoid(2 / 3 / 5), sigmoid(1.5 / 5), sigmoid(2 / 5),
              sigmoid(0.5 - 0.2)]
    assert [g["q"] for g in got] == pytest.approx(want_q, abs=1e-12)
    # The context is min(k, retrieved) passages: 2 here, one of them relevant.
    assert got[0]["short"] == pytest.approx(sigmoid(1 / 2), abs=1e-12)
    assert got[0]["none"] == pytest.approx(sigmoid(0.0), abs=1e-12)  # one passage, unjudged


def test_an_empty_context_scores_zero_and_positions_match_the_uniform_form() -> None:
    qrels, run = distinct_case(41, 50, 3, negatives=True)
    k = 4
    uniform = rankflavor.evaluate(qrels, run, f"UDCG@{k}[distractor_grade=-1]", missing="skip")[0].per_query()
    weights = ",".join(["0.25"] * k + [repr(-1 / 3 / k)] * k)
    positional = rankflavor.evaluate(qrels, run, f"UDCG@{k}[param=({weights}),distractor_grade=-1]",
                                     missing="skip")[0].per_query()
    full = [q for q in run if len(run[q]) >= k and q in qrels]
    assert len(full) > 20
    for q in full:  # with a full context the uniform weights are the positional form's 1/k, -1/(3k)
        assert positional[q] == pytest.approx(uniform[q], abs=1e-12)
    assert len({round(uniform[q], 9) for q in full}) > 3  # the values vary: the test can fail
    empty = rankflavor.evaluate({"q": {"a": 1}}, {"q": {"b": 1.0}}, "UDCG@3[depth=none]")[0]
    assert empty.per_query()["q"] == pytest.approx(sigmoid(0.0))
    with pytest.raises(FlavorError, match="2k numbers"):
        rankflavor.evaluate(qrels, run, "UDCG@3[param=(1,2)]")


def test_canonical_strings_parse_back() -> None:
    qrels = {"q": {"a": 1, "b": -1}}
    run = {"q": {"a": 1.0, "b": 0.5}}
    texts = ["UDCG@5[distractor_grade=-1]", "UDCG[utility=grade,penalty=-1]", "UDCG@2[param=(1,1,-1,-1)]",
             "UDCG@3[penalty=-0.25,distractor_grade=0,rel=2]"]
    for m in rankflavor.evaluate(qrels, run, texts):
        assert parse_measure(str(m.measure)) == m.measure
    with pytest.raises(FlavorError, match="does not change"):  # utility=grade reads no labels
        rankflavor.evaluate(qrels, run, "UDCG[utility=grade,distractor_grade=-1]")


def test_trec_distractor_grade_on_the_cli_and_from_a_reader(tmp_path: Path) -> None:
    qpath, rpath = tmp_path / "qrels", tmp_path / "run"
    qpath.write_text("q1 0 a 1\nq1 0 b -1\nq1 0 c 0\nq2 0 x 2\nq2 0 y -1\n")
    rpath.write_text("q1 Q0 a 1 3 r\nq1 Q0 b 2 2 r\nq1 Q0 c 3 1 r\nq2 Q0 y 1 2 r\nq2 Q0 x 2 1 r\n")
    out = CliRunner().invoke(cli, ["eval", str(qpath), str(rpath), "-m", "UDCG@3", "--distractor-grade", "-1",
                                    "-q", "--format", "csv"])
    assert out.exit_code == 0, out.output
    assert "distractor_grade=-1" in out.output
    want = {"q1": sigmoid((1 - 1 / 3) / 3), "q2": sigmoid((1 - 1 / 3) / 2)}
    api = rankflavor.evaluate(qpath, rpath, "UDCG@3", distractor_grade=-1)[0].per_query()
    assert api == pytest.approx(want, abs=1e-12)
    printed = {row.split(",")[1]: float(row.split(",")[2]) for row in out.output.splitlines()[1:]
               if row.startswith("UDCG@3,") and row.split(",")[1] in want}
    assert printed == pytest.approx(want, abs=1e-12)
    # Without the flag a negative grade is trec_eval's unjudged: no distractor.
    plain = rankflavor.evaluate(qpath, rpath, "UDCG@3")[0].per_query()
    assert plain == pytest.approx({"q1": sigmoid(1 / 3), "q2": sigmoid(1 / 2)}, abs=1e-12)
    # A reader with a distractor column marks its rows; the judgments then declare the grade.
    table = Qrels(pa.array(["q1", "q1", "q1"]), pa.array(["a", "b", "c"]), np.array([1.0, 0.0, 0.0]))
    marked = mark_distractors(table, np.array([False, True, False]))
    got = rankflavor.evaluate(marked, {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}}, "UDCG@3")[0]
    assert got.measure.flavor.distractor_value == -1.0
    assert got.mean == pytest.approx(want["q1"], abs=1e-12)
    with pytest.raises(FlavorError, match="mark distractors with grade -1"):
        rankflavor.evaluate(marked, {"q1": {"a": 3.0}}, "UDCG@3[distractor_grade=-2]")


def test_nerr_and_udcg_per_query_equal_whole_and_chunked(tmp_path: Path) -> None:
    qrels, run = distinct_case(51, 120, 3, negatives=True)
    qpath, rpath = write_trec(tmp_path, qrels, run)
    measures = ["nERR@10[max_grade=3]", "nERR@5[max_grade=3,ideal=local]", "UDCG@5[distractor_grade=-1]",
                "UDCG[distractor_grade=0]"]
    whole = rankflavor.evaluate(qpath, rpath, measures)
    chunked = rankflavor.evaluate(qpath, rpath, measures, chunk_rows=64)
    for a, b in zip(whole, chunked, strict=True):
        assert a.per_query() == b.per_query(), a.measure
        assert a.mean == pytest.approx(b.mean, abs=1e-15)
        assert len(a.per_query()) > 100
