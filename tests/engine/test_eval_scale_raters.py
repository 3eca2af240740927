"""The label scale and the raters' rule, declared once on ``eval`` / :func:`rankflavor.evaluate`:
the scale resolves into each measure's knobs (as :meth:`Scale.measure` does for judgments) and
checks the grades; the raters' rule is the ``raters`` knob, named in every flavor string."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import rankflavor
from rankflavor.cli.main import cli
from rankflavor.errors import InputError, UsageError
from rankflavor.metrics.measure import parse_measure
from rankflavor.raters import RULES, aggregate_ratings
from rankflavor.raters.files import read_ratings
from rankflavor.raters.rules import check_rule

from ..conftest import shared_path


def qrels_path() -> Path:
    """DL19's judgments; called in a test, so that without the shared data it skips, not errors."""
    return shared_path("qrels", "qrels.dl19-passage.txt")


def run_path() -> Path:
    return shared_path("runs", "rankllm.dl19.bm25.top100.run")


#: Measures, and the same measures with the knobs the trec_dl scale implies written out.
UNDER_SCALE = ["ndcg@10", "P@10", "AP", "RR", "ERR@10", "ndcg@10[ideal=max]", "RBP@100[param=0.8,gain=linear]"]
SPELLED_OUT = ["ndcg@10", "P@10[rel=2]", "AP[rel=2]", "RR[rel=2]", "ERR@10[max_grade=3]",
               "ndcg@10[ideal=max,max_grade=3]", "RBP@100[param=0.8,gain=linear,max_grade=3]"]


def _table(results: rankflavor.Results) -> dict[str, dict[str, float | str]]:
    return {str(m.measure): m.per_query() for m in results}


def test_scale_equals_the_knobs_it_implies() -> None:
    scaled = rankflavor.evaluate(qrels_path(), run_path(), UNDER_SCALE, scale="trec_dl")
    plain = rankflavor.evaluate(qrels_path(), run_path(), SPELLED_OUT)
    assert _table(scaled) == _table(plain)
    assert [str(m.measure) for m in scaled] == [str(m.measure) for m in plain]
    # Only where it changes the number: graded NDCG with the global ideal names neither rel nor G.
    first = str(scaled[0].measure)
    assert "rel=" not in first and "max_grade" not in first


def test_scale_on_the_command_line_equals_the_knobs() -> None:
    def values(args: list[str]) -> dict[str, float]:
        out = CliRunner().invoke(cli, ["eval", str(qrels_path()), str(run_path()), "--format", "json", *args])
        assert out.exit_code == 0, out.output
        return {m["flavor"]: m["value"] for m in json.loads(out.output)["measures"]}

    assert values(["--scale", "trec_dl", "-m", "P@10", "-m", "ERR@10"]) == values(["-m", "P@10[rel=2]", "-m", "ERR@10[max_grade=3]"])


def test_g_comes_from_the_scale_never_from_the_data() -> None:
    # The judgments reach grade 2 at most; trec_dl's G is still 3.
    qrels = {"q": {"a": 2, "b": 1, "c": 0}}
    run = {"q": {"a": 0.9, "b": 0.8, "c": 0.7}}
    for measure, at3, at2 in (("ERR@3", "ERR@3[max_grade=3]", "ERR@3[max_grade=2]"),
                              ("ndcg@3[ideal=max]", "ndcg@3[ideal=max,max_grade=3]", "ndcg@3[ideal=max,max_grade=2]")):
        scaled = rankflavor.evaluate(qrels, run, measure, scale="trec_dl")[0]
        assert scaled.measure.knobs["max_grade"] == "3"
        assert scaled.mean == rankflavor.evaluate(qrels, run, at3)[0].mean != rankflavor.evaluate(qrels, run, at2)[0].mean


def test_grade_off_the_scale_names_file_and_line(write) -> None:  # type: ignore[no-untyped-def]
    path = write("q.txt", "q 0 a 1\nq 0 b 3\nq 0 c 4\n")
    with pytest.raises(InputError, match=rf"{path}:3: grade 4 is not on the trec_dl scale"):
        rankflavor.evaluate(path, {"q": {"a": 1.0}}, "ndcg@10", scale="trec_dl")
    run = write("r.txt", "q Q0 a 1 1.0 t\n")
    out = CliRunner().invoke(cli, ["eval", str(path), str(run), "--scale", "trec_dl"])
    assert out.exit_code == 3 and f"{path}:3" in out.output
    chunked = CliRunner().invoke(cli, ["eval", str(path), str(run), "--scale", "trec_dl", "--chunk-rows", "1"])
    assert chunked.exit_code == 3 and f"{path}:3" in chunked.output
    assert CliRunner().invoke(cli, ["eval", str(path), str(run), "--scale", "ecommerce"]).exit_code == 0


def test_unknown_scale_is_a_usage_error_listing_the_scales() -> None:
    out = CliRunner().invoke(cli, ["eval", str(qrels_path()), str(run_path()), "--scale", "trec-dl2"])
    assert out.exit_code == 2
    assert "trec_dl, msmarco, beir, ecommerce" in out.output
    with pytest.raises(UsageError, match="unknown label scale"):
        rankflavor.evaluate(qrels_path(), run_path(), "ndcg@10", scale="nope")


# ---------------------------------------------------------------------------------------------
# The raters' rule

RATINGS = "query,doc,rater,grade\nq1,d1,ann,2\nq1,d1,bob,3\nq1,d1,cy,0\nq1,d2,ann,0\nq1,d3,bob,1\nq1,d3,cy,3\nq2,d1,bob,1\n"
RUN_TEXT = "q1 Q0 d2 1 3.0 t\nq1 Q0 d1 2 2.0 t\nq1 Q0 d3 3 1.0 t\nq2 Q0 d1 1 1.0 t\nq2 Q0 d9 2 0.5 t\n"
MEASURES = ["ndcg@10", "P@2", "AP", "ERR@3[max_grade=3]", "num_rel"]


def test_raters_knob_lists_exactly_the_rules() -> None:
    values = [v.strip() for v in rankflavor.flavor.flavor.KNOBS["raters"].values.split("|")]
    assert values == ["none", *RULES]


@pytest.mark.parametrize("rule", list(RULES))
def test_flavor_string_names_the_rule_and_values_equal_the_aggregate_file(write, tmp_path: Path, rule: str) -> None:  # type: ignore[no-untyped-def]
    ratings, run = write("r.csv", RATINGS), write("run.txt", RUN_TEXT)
    results = rankflavor.evaluate(ratings, run, MEASURES, raters=rule)
    aggregated = tmp_path / "agg.txt"
    out = CliRunner().invoke(cli, ["aggregate", str(ratings), "--rule", rule, "-o", str(aggregated)])
    assert out.exit_code == 0, out.output
    plain = rankflavor.evaluate(aggregated, run, MEASURES)
    for got, want in zip(results, plain, strict=True):
        text = str(got.measure)
        assert f"raters={rule}" in text and parse_measure(text) == got.measure
        assert str(got.measure) == str(want.measure.with_knobs(raters=rule))
        assert got.per_query() == want.per_query()
    chunked = rankflavor.evaluate(ratings, run, MEASURES, raters=rule, chunk_rows=2)
    assert _table(chunked) == _table(results)


def test_aggregated_qrels_carry_their_rule(write) -> None:  # type: ignore[no-untyped-def]
    qrels = aggregate_ratings(read_ratings(write("r.csv", RATINGS)), "median")
    results = rankflavor.evaluate(qrels, write("run.txt", RUN_TEXT), ["ndcg@10", "P@2"])
    assert all("raters=median" in str(m.measure) for m in results)
    with pytest.raises(UsageError, match="aggregated by raters=median"):
        rankflavor.evaluate(qrels, write("run.txt", RUN_TEXT), "ndcg@10[raters=max]")


def test_raters_knob_on_plain_qrels_is_an_error(write) -> None:  # type: ignore[no-untyped-def]
    run = write("run.txt", RUN_TEXT)
    with pytest.raises(UsageError, match="are not ratings"):
        rankflavor.evaluate({"q1": {"d1": 1}}, run, "ndcg@10[raters=median]")
    qrels = write("q.txt", "q1 0 d1 1\n")
    out = CliRunner().invoke(cli, ["eval", str(qrels), str(run), "-m", "P@2[raters=mean]"])
    assert out.exit_code == 2 and "not ratings" in out.output
    # Without the knob, nothing prints it: quiet until set.
    assert "raters" not in str(rankflavor.evaluate(qrels, run, "P@2")[0].measure)


def test_eval_raters_on_the_command_line(write) -> None:  # type: ignore[no-untyped-def]
    ratings, run = write("r.csv", RATINGS), write("run.txt", RUN_TEXT)
    out = CliRunner().invoke(cli, ["eval", str(ratings), str(run), "--raters", "median", "--scale", "trec_dl",
                                   "-m", "ndcg@10", "-m", "P@2", "--format", "json"])
    assert out.exit_code == 0, out.output
    measures = json.loads(out.output)["measures"]
    assert len(measures) == 2 and all("raters=median" in m["flavor"] for m in measures)
    table = CliRunner().invoke(cli, ["eval", str(ratings), str(run), "--raters", "median", "-m", "ndcg@10"])
    assert table.exit_code == 0 and "raters=median" in table.output
    bad_rule = CliRunner().invoke(cli, ["eval", str(ratings), str(run), "--raters", "avg"])
    assert bad_rule.exit_code == 2 and "unknown raters rule 'avg'" in bad_rule.output
    missing = write("m.csv", "query,doc,rater,grade\nq1,d1,ann,2\nq1,d2,bob,\n")
    no_grade = CliRunner().invoke(cli, ["eval", str(missing), str(run), "--raters", "mean"])
    assert no_grade.exit_code == 3 and f"{missing}:3" in no_grade.output
    off = write("o.csv", "query,doc,rater,grade\nq1,d1,ann,2\nq1,d2,bob,7\n")
    off_scale = CliRunner().invoke(cli, ["eval", str(off), str(run), "--raters", "mean", "--scale", "trec_dl"])
    assert off_scale.exit_code == 3 and f"{off}:3" in off_scale.output
    plain = write("q.txt", "q1 0 d1 1\n")  # a plain qrels file is not a ratings file
    assert CliRunner().invoke(cli, ["eval", str(plain), str(run), "--raters", "mean"]).exit_code == 3
    assert check_rule("median") == "median"


def test_a_median_between_the_scale_grades_is_not_off_the_scale(write) -> None:  # type: ignore[no-untyped-def]
    # Two raters, 2 and 3: the median 2.5 is the rule's, not a bad judgment; the ratings are checked as read.
    ratings = write("r.csv", "query,doc,rater,grade\nq1,d1,ann,2\nq1,d1,bob,3\n")
    result = rankflavor.evaluate(ratings, {"q1": {"d1": 1.0}}, "ERR@1", scale="trec_dl", raters="median")[0]
    assert result.mean == pytest.approx((2 ** 2.5 - 1) / 2 ** 3)
    assert result.measure.knobs["max_grade"] == "3" and result.measure.knobs["raters"] == "median"


# ---------------------------------------------------------------------------------------------
# Precedence: preset < scale < what is typed (--flavor, -l, brackets)


def _pytrec_p10(level: int) -> float:
    """P@10 by pytrec_eval (trec_eval's own code) on the DL19 BM25 run, at relevance level ``level``."""
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec_eval-terrier is the reference tool")
    qrels: dict[str, dict[str, int]] = {}
    for line in Path(qrels_path()).read_text().splitlines():
        q, _, d, g = line.split()
        qrels.setdefault(q, {})[d] = int(g)
    run: dict[str, dict[str, float]] = {}
    for line in Path(run_path()).read_text().splitlines():
        q, _, d, _, s, _ = line.split()
        run.setdefault(q, {})[d] = float(s)
    per = pytrec_eval.RelevanceEvaluator(qrels, {"P"}, relevance_level=level).evaluate(run)
    return sum(v["P_10"] for v in per.values()) / len(per)


def test_typed_level_beats_the_scale_and_the_scale_beats_the_preset() -> None:
    def p10(*args: str) -> float:
        out = CliRunner().invoke(cli, ["eval", str(qrels_path()), str(run_path()), "--format", "json", *args])
        assert out.exit_code == 0, out.output
        (m,) = json.loads(out.output)["measures"]
        return float(m["value"])

    at1, at2 = _pytrec_p10(1), _pytrec_p10(2)
    assert at1 != at2
    # -l 1 is also the default: typed, it must still beat trec_dl's rel=2.
    assert p10("--scale", "trec_dl", "-l", "1", "-m", "P@10") == pytest.approx(at1, abs=1e-12)
    assert p10("--scale", "trec_dl", "--flavor", "rel=1", "-m", "P@10") == pytest.approx(at1, abs=1e-12)
    assert p10("--scale", "trec_dl", "-m", "P@10") == pytest.approx(at2, abs=1e-12)
    # trec_eval's own default is -l 1; under the trec_dl scale it is trec_eval -l 2.
    assert p10("--preset", "trec_eval", "-m", "P.10") == pytest.approx(at1, abs=1e-12)
    assert p10("--preset", "trec_eval", "--scale", "trec_dl", "-m", "P.10") == pytest.approx(at2, abs=1e-12)
    assert p10("--preset", "trec_eval", "--scale", "trec_dl", "-l", "1", "-m", "P.10") == pytest.approx(at1, abs=1e-12)
    # The API: a knob given to evaluate() is typed too.
    api = rankflavor.evaluate(qrels_path(), run_path(), "P@10", scale="trec_dl", rel=1)[0]
    assert api.mean == pytest.approx(at1, abs=1e-12) and api.measure.knobs["rel"] == "1"


def test_a_typed_top_grade_that_contradicts_the_scale_is_refused() -> None:
    with pytest.raises(rankflavor.errors.FlavorError, match="declare G once"):
        rankflavor.evaluate(qrels_path(), run_path(), "ERR@10", scale="trec_dl", max_grade=4)


# ---------------------------------------------------------------------------------------------
# spread and compare take the scale too


def test_spread_under_a_scale(write) -> None:  # type: ignore[no-untyped-def]
    s = rankflavor.spread(qrels_path(), [run_path()], "P@10", scale="trec_dl", grid={"unjudged": ["zero", "condensed"]},
                          presets=["trec_eval", "trec_dl"])
    by_origin = {o: f for f in s.flavors for o in f.origins}
    assert by_origin["base"].measure.knobs["rel"] == "2"
    # A row named after a tool reproduces the tool: trec_eval's default -l 1, trec_dl's pinned 2.
    assert s.means[0][list(s.flavors).index(by_origin["preset:trec_eval"])] == pytest.approx(_pytrec_p10(1), abs=1e-12)
    assert s.means[0][list(s.flavors).index(by_origin["base"])] == pytest.approx(_pytrec_p10(2), abs=1e-12)
    assert any("preset rows keep their tool's own flavor" in n and "trec_eval" in n for n in s.notes)
    # Every grid cell carries the scale's threshold.
    assert all(f.measure.knobs.get("rel") == "2" for f in s.flavors if "grid" in f.origins)
    bad = write("q.txt", "q 0 a 1\nq 0 b 5\n")
    run = write("r.txt", "q Q0 a 1 1.0 t\n")
    with pytest.raises(InputError, match=rf"{bad}:2: grade 5 is not on the trec_dl scale"):
        rankflavor.spread(bad, [run], "P@10", scale="trec_dl")
    out = CliRunner().invoke(cli, ["spread", str(bad), str(run), "-m", "P@10", "--scale", "trec_dl"])
    assert out.exit_code == 3 and f"{bad}:2" in out.output
    cli_out = CliRunner().invoke(cli, ["spread", str(qrels_path()), str(run_path()), "-m", "P@10", "--scale", "trec_dl",
                                       "--vary", "unjudged=zero,condensed", "--no-presets", "--format", "json"])
    assert cli_out.exit_code == 0, cli_out.output
    assert "rel=2" in cli_out.output


def test_compare_under_a_scale(write) -> None:  # type: ignore[no-untyped-def]
    other = shared_path("runs", "rankllm.dl19.bm25-rm3.top100.run")
    c = rankflavor.compare(qrels_path(), [run_path(), other], ["P@10", "P@10[rel=1]"], scale="trec_dl", tests="t", ci_level=None,
                           flavors=["trec_eval"])
    scaled, typed = c.measures
    assert "[rel=2," in scaled.measure and "[rel=1," in typed.measure
    assert scaled.values[0].mean() == pytest.approx(_pytrec_p10(2), abs=1e-12)
    assert typed.values[0].mean() == pytest.approx(_pytrec_p10(1), abs=1e-12)
    assert any("preset rows keep their tool's own flavor" in n for n in c.notes)
    out = CliRunner().invoke(cli, ["compare", str(qrels_path()), str(run_path()), str(other), "-m", "P@10", "--scale", "trec_dl",
                                   "--test", "t", "--no-ci", "--format", "json"])
    assert out.exit_code == 0, out.output
    assert '"flavor": "P@10[rel=2,' in out.output
    saved = CliRunner().invoke(cli, ["compare", str(qrels_path()), str(run_path()), "--results", "--scale", "trec_dl"])
    assert saved.exit_code == 2 and "--scale" in saved.output
    bad = write("q.txt", "q 0 a 9\n")
    off = CliRunner().invoke(cli, ["compare", str(bad), str(run_path()), str(other), "--scale", "beir"])
    assert off.exit_code == 3 and f"{bad}:1" in off.output
