"""Label sources through the engine: ``--labels`` by hand-computed example, the labels counted in
every format alike, the ``sources`` knob's flavor string parsing back, and DL19 split into two
sources giving the unsplit NDCG (``any``) and pytrec_eval's NDCG of the human part (``human``)."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

import rankflavor as rf
from rankflavor.cli.main import cli
from rankflavor.engine.results import results_table
from rankflavor.errors import FlavorError, InputError, UsageError
from rankflavor.metrics.measure import parse_measure
from rankflavor.render.csvfmt import render_csv
from rankflavor.render.text import render_table
from rankflavor.report.html import render_report
from rankflavor.report.inputs import document_from_dict

from ..conftest import shared_path

# q1: d1 judged by a person (2) and an LLM (0), d2 by the LLM (1), d3 by the person (0).
QRELS = "q1 0 d1 2 human:nist\nq1 0 d1 0 llm:m\nq1 0 d2 1 llm:m\nq1 0 d3 0 human:nist\n"
RUN = {"q1": {"d2": 3.0, "d1": 2.0, "d3": 1.0}}
L3 = math.log2(3)

#: (choice, NDCG@3 by hand, labels evaluated, labels left out). Ranks d2, d1, d3.
CASES = [
    # d1=2, d3=0: DCG = 2/log2(3); IDCG = 2
    ("human", (2 / L3) / 2, (("human", 2),), {"llm": 2}),
    # d1=0, d2=1: DCG = 1; IDCG = 1
    ("llm", 1.0, (("llm", 2),), {"human": 2}),
    # d1=2 (the person's), d2=1, d3=0: DCG = 1 + 2/log2(3); IDCG = 2 + 1/log2(3)
    ("prefer=human", (1 + 2 / L3) / (2 + 1 / L3), (("human", 2), ("llm", 1)), {"llm": 1}),
    # d1=0 (the LLM's), d2=1, d3=0: DCG = 1 = IDCG
    ("prefer=llm", 1.0, (("human", 1), ("llm", 2)), {"human": 1}),
]


@pytest.fixture
def qrels(tmp_path: Path) -> Path:
    path = tmp_path / "qrels.txt"
    path.write_text(QRELS)
    return path


@pytest.mark.parametrize(("choice", "value", "labels", "dropped"), CASES)
def test_labels_choices_by_hand(qrels: Path, choice: str, value: float, labels: tuple, dropped: dict) -> None:  # type: ignore[type-arg]
    r = rf.evaluate(str(qrels), RUN, "ndcg@3", labels=choice)
    m = r[0]
    assert m.mean == pytest.approx(value, abs=1e-12)
    assert m.labels == labels
    assert r.provenance["qrels"]["labels"] == {"choice": choice, "dropped": dropped}
    mixed = len(labels) > 1
    assert ("sources=human+llm" in m.flavor) == mixed


def test_any_leaves_a_pair_of_two_sources_to_the_duplicates_policy(qrels: Path) -> None:
    with pytest.raises(InputError, match=r"duplicate|twice|again"):
        rf.evaluate(str(qrels), RUN, "ndcg@3")
    first = rf.evaluate(str(qrels), RUN, "ndcg@3[duplicates=first]")  # the person's line comes first
    assert first[0].mean == pytest.approx((1 + 2 / L3) / (2 + 1 / L3), abs=1e-12)
    assert first.counts.qrels_duplicates_resolved == 1
    assert first[0].labels == (("human", 2), ("llm", 1))


def test_a_choice_no_judgment_fits_is_refused(qrels: Path, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"no judgment .* is of kind 'clicks'; kinds present: human, llm"):
        rf.evaluate(str(qrels), RUN, "ndcg@3", labels="clicks")
    plain = tmp_path / "plain.txt"
    plain.write_text("q1 0 d1 2\n")
    with pytest.raises(UsageError, match="name no label source"):
        rf.evaluate(str(plain), RUN, "ndcg@3", labels="human")
    with pytest.raises(UsageError, match="--labels: expected any"):
        rf.evaluate(str(qrels), RUN, "ndcg@3", labels="prefer=")
    r = rf.evaluate(str(plain), RUN, "ndcg@3", labels="any")  # nothing to choose: as without
    assert r[0].labels is None and "labels" not in r.provenance["qrels"]


def test_the_sources_knob_parses_back_and_states_what_the_labels_are(qrels: Path) -> None:
    m = rf.evaluate(str(qrels), RUN, ["ndcg@3", "P@2"], labels="prefer=human")
    for result in m:
        again = parse_measure(result.flavor)
        assert str(again) == result.flavor and again.flavor.sources == "human+llm"
        assert rf.evaluate(str(qrels), RUN, result.flavor, labels="prefer=human")[0].mean == result.mean
    with pytest.raises(UsageError, match=r"sets sources=human\+llm but the labels it evaluates .* are of one kind"):
        rf.evaluate(str(qrels), RUN, m[0].flavor, labels="human")
    assert str(parse_measure("ndcg@3[sources=llm+human]")) == str(parse_measure("ndcg@3[sources=human+llm]"))
    assert str(parse_measure("ndcg@3[sources=LLM+Human]")) == str(parse_measure("ndcg@3[sources=human+llm]"))
    for bad in ("llm", "human+human", "human+", "hu man+llm"):
        with pytest.raises(FlavorError, match="knob 'sources'"):
            parse_measure(f"ndcg@3[sources={bad}]")


def _json(r: rf.Results) -> dict:  # type: ignore[type-arg]
    return json.loads(json.dumps(r.to_dict()))


def test_the_counts_agree_in_every_format(qrels: Path, tmp_path: Path) -> None:
    r = rf.evaluate(str(qrels), RUN, ["ndcg@3", "P@2"], labels="prefer=human")
    data = _json(r)
    assert [m["labels"] for m in data["measures"]] == [{"human": 2, "llm": 1}] * 2
    rows = list(csv.DictReader(io.StringIO(render_csv(r, per_query=False))))
    assert [row["labels"] for row in rows] == ["human=2;llm=1"] * 2
    assert results_table(r).column("labels").to_pylist() == ["human=2;llm=1"] * 2
    text = render_table(r, per_query=False, width=200)
    assert "labels: ndcg@3, P@2 over 1 queries: 2 human labels, 1 llm label (mixed kinds: sources=human+llm)" in text
    assert "--labels prefer=human: left out 1 llm label" in text
    html = render_report([document_from_dict(data, "r.json")])
    assert "ndcg@3 over 1 queries: 2 human labels, 1 llm label (mixed kinds: sources=human+llm)" in html
    assert "--labels prefer=human left out 1 llm label" in html
    assert html.count("sources=human+llm") >= 2  # the flavor strings say it too


def test_without_sources_every_format_is_as_before(tmp_path: Path) -> None:
    r = rf.evaluate({"q1": {"d1": 2}}, RUN, "ndcg@3")
    assert r[0].labels is None and "labels" not in _json(r)["measures"][0]
    assert next(csv.reader(io.StringIO(render_csv(r, per_query=False))))[-1] == "status"
    assert "labels" not in results_table(r).column_names
    assert "labels:" not in render_table(r, per_query=False, width=200)


def test_chunked_evaluation_counts_and_names_the_same(tmp_path: Path) -> None:
    lines = [f"q{q} 0 d{d} {(q + d) % 3} {'human:a' if d % 2 else 'llm:b'}" for q in range(6) for d in range(5)]
    qrels = tmp_path / "q.txt"
    qrels.write_text("\n".join(lines) + "\n")
    run = tmp_path / "r.txt"
    run.write_text("".join(f"q{q} Q0 d{d} {d} {10 - d} t\n" for q in range(6) for d in range(7)))
    whole = rf.evaluate(str(qrels), str(run), ["ndcg@5", "AP"], labels="prefer=human")
    pieces = rf.evaluate(str(qrels), str(run), ["ndcg@5", "AP"], labels="prefer=human", chunk_rows=8)
    assert [(m.flavor, m.per_query(), m.labels) for m in whole] == [(m.flavor, m.per_query(), m.labels) for m in pieces]
    human = rf.evaluate(str(qrels), str(run), "ndcg@5", labels="human", chunk_rows=8)[0]
    assert "sources=" not in human.flavor and human.labels == (("human", 12),)


def test_the_cli_options(qrels: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d2 1 3 t\nq1 Q0 d1 2 2 t\nq1 Q0 d3 3 1 t\n")
    out = runner.invoke(cli, ["eval", str(qrels), str(run), "-m", "ndcg@3", "--labels", "human", "--format", "json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["measures"][0]["value"] == pytest.approx((2 / L3) / 2)
    plain = tmp_path / "plain.txt"
    plain.write_text("q1 0 d1 2\nq1 0 d2 1\n")
    out = runner.invoke(cli, ["eval", str(plain), str(run), "-m", "ndcg@3", "--label-source", "llm:judge", "--format",
                              "json"])
    assert out.exit_code == 0 and json.loads(out.output)["measures"][0]["labels"] == {"llm": 2}
    bad = runner.invoke(cli, ["eval", str(qrels), str(run), "--labels", "prefer"])
    assert bad.exit_code != 0 and "no judgment" in bad.output  # a kind named 'prefer': none present
    two = tmp_path / "two.txt"  # compare pairs queries: two of them
    two.write_text(QRELS + "q2 0 d1 1 human:nist\nq2 0 d2 1 llm:m\n")
    (tmp_path / "run2.txt").write_text(run.read_text() + "q2 Q0 d1 1 2 t\nq2 Q0 d2 2 1 t\n")
    run2 = str(tmp_path / "run2.txt")
    (tmp_path / "run3.txt").write_text("q1 Q0 d3 1 3 t\nq1 Q0 d1 2 2 t\nq2 Q0 d2 1 2 t\nq2 Q0 d1 2 1 t\n")
    run3 = str(tmp_path / "run3.txt")
    for command in (["spread", str(qrels), str(run), "-m", "ndcg@3"], ["explain", str(qrels), str(run), "-Q", "q1"],
                    ["compare", str(two), run2, run3, "-m", "ndcg@3"]):
        out = runner.invoke(cli, [*command, "--labels", "human"])
        assert out.exit_code == 0, (command, out.output)


def _split_dl19(tmp_path: Path) -> tuple[Path, Path, Path, list[str]]:
    source = shared_path("qrels", "qrels.dl19-passage.txt")
    lines = [line for line in source.read_text().splitlines() if line.strip()]
    # Every third judgment is the stand-in LLM's (same grade), the rest the assessors'.
    split = [f"{line} {'llm:stand-in' if i % 3 == 2 else 'human:nist'}" for i, line in enumerate(lines)]
    sourced = tmp_path / "dl19.sourced.txt"
    sourced.write_text("\n".join(split) + "\n")
    return source, sourced, shared_path("runs", "rankllm.dl19.bm25.top100.run"), lines


def test_dl19_split_into_two_sources(tmp_path: Path) -> None:
    import pytrec_eval

    plain, sourced, run, lines = _split_dl19(tmp_path)
    unsplit = rf.evaluate(str(plain), str(run), "ndcg@10")[0]
    mixed = rf.evaluate(str(sourced), str(run), "ndcg@10", labels="any")[0]
    assert mixed.per_query() == unsplit.per_query() and mixed.mean == unsplit.mean
    assert "sources=human+llm" in mixed.flavor and "sources" not in unsplit.flavor
    assert sum(n for _, n in mixed.labels or ()) == len(lines)  # every DL19 query is in the run
    # --labels human: NDCG@10 over the assessors' two thirds, as pytrec_eval computes it on them.
    human = rf.evaluate(str(sourced), str(run), "ndcg@10", labels="human")
    qrels: dict[str, dict[str, int]] = {}
    for i, line in enumerate(lines):
        if i % 3 != 2:
            q, _, d, g = line.split()
            qrels.setdefault(q, {})[d] = int(g)
    ranking: dict[str, dict[str, float]] = {}
    for line in run.read_text().splitlines():
        q, _, d, _, s, _ = line.split()
        ranking.setdefault(q, {})[d] = float(s)
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(ranking)
    got = human[0].per_query()
    assert set(got) == set(ref)
    for q, value in got.items():  # pytrec_eval scores in float32 and breaks ties as trec_eval
        assert value == pytest.approx(ref[q]["ndcg_cut_10"], abs=1e-6), q
    assert human[0].labels == (("human", len(lines) - len(lines) // 3),)
    assert human.provenance["qrels"]["labels"]["dropped"] == {"llm": len(lines) // 3}


def test_compare_says_when_a_verdict_rests_on_llm_labels_alone(tmp_path: Path) -> None:
    qrels = tmp_path / "q.txt"
    qrels.write_text("q1 0 d1 1 llm:m\nq1 0 d2 0 llm:m\nq2 0 d1 0 llm:m\nq2 0 d2 1 llm:m\nq3 0 d1 1 human:nist\n")
    runs = {"A": {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d1": 2.0, "d2": 1.0}},
            "B": {"q1": {"d2": 2.0, "d1": 1.0}, "q2": {"d2": 2.0, "d1": 1.0}}}
    c = rf.compare(str(qrels), runs, "P@1", n_resamples=50, queries="intersection")
    assert "P@1: the verdict rests on LLM labels alone (4 llm labels over the 2 queries compared)" in c.notes
    runs["A"]["q3"] = runs["B"]["q3"] = {"d1": 1.0}
    c = rf.compare(str(qrels), runs, "P@1", n_resamples=50)
    assert "P@1: labels behind the verdict: 1 human label, 4 llm labels over the 3 queries compared" in c.notes
    c = rf.compare(str(qrels), runs, "P@1", n_resamples=50, labels="llm", queries="intersection")
    assert "P@1: the verdict rests on LLM labels alone (4 llm labels over the 2 queries compared)" in c.notes


@pytest.mark.parametrize(("choice", "mixed"), [("human", False), ("prefer=human", True)])
def test_judgments_bounds_name_the_sources_of_the_labels_they_rest_on(qrels: Path, tmp_path: Path, choice: str,
                                                                      mixed: bool) -> None:
    # a bound over mixed labels is a mixed-source number: its flavor string says so in the table
    # and the JSON, as eval's does (the bounds once printed the measure as given, without the knob)
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d2 1 3.0 r\nq1 Q0 d1 2 2.0 r\nq1 Q0 d3 3 1.0 r\nq1 Q0 d4 4 0.5 r\n")
    args = ["judgments", str(qrels), str(run), "-m", "ndcg@3", "--scale", "trec_dl", "--labels", choice]
    shown = CliRunner().invoke(cli, [*args, "--wide"])
    assert shown.exit_code == 0, shown.output
    assert ("sources=human+llm" in shown.stdout) == mixed
    doc = json.loads(CliRunner().invoke(cli, [*args, "--format", "json"]).stdout)
    flavors = json.dumps(doc)
    assert ("sources=human+llm" in flavors) == mixed
    evaluated = rf.evaluate(str(qrels), str(run), "ndcg@3", labels=choice)[0].flavor
    assert evaluated in flavors


def test_judgments_show_what_the_fill_bought_over_the_human_labels_alone(qrels: Path, tmp_path: Path) -> None:
    # q1 judged by people: d1 = 2, d3 = 0; the LLM fills d2 = 1. The run ranks d2, d1, d3 (k = 3).
    # People's labels alone leave d2 a hole graded 0..3 (trec_dl), ideal=global:
    #   hole 0: DCG 2/log2(3), IDCG 2                 -> 1/log2(3) = 0.6309 (the least)
    #   hole 3: DCG 3 + 2/log2(3) = IDCG              -> 1 (the greatest)
    # With the fill: DCG 1 + 2/log2(3), IDCG 2 + 1/log2(3) -> 0.8597, a point.
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d2 1 3.0 r\nq1 Q0 d1 2 2.0 r\nq1 Q0 d3 3 1.0 r\n")
    filled_value = (1 + 2 / L3) / (2 + 1 / L3)
    args = ["judgments", str(qrels), str(run), "-m", "ndcg@3", "--scale", "trec_dl", "--labels", "prefer=human"]
    doc = json.loads(CliRunner().invoke(cli, [*args, "--format", "json"]).stdout)
    f = doc["filled"]
    assert (f["base"], f["fillers"]) == ("human", ["llm"])
    (r,) = f["runs"]
    assert r["unjudged_in_top_k"] == {"before": 1, "after": 0} and r["queries"] == {"before": 1, "after": 1}
    (m,) = r["measures"]
    assert m["before"]["lower"] == pytest.approx(1 / L3) and m["before"]["upper"] == pytest.approx(1.0)
    assert m["after"]["lower"] == pytest.approx(filled_value) and m["after"]["upper"] == pytest.approx(filled_value)
    assert "sources=human+llm" in m["measure"]
    table = CliRunner().invoke(cli, [*args, "--wide"]).stdout
    assert "holes filled by llm labels: the bounds on the human labels alone -> with them" in table
    assert "unjudged@3 1 -> 0" in table
    assert (f"ndcg@3 [{1 / L3:.4f}, 1.0000] (width {1 - 1 / L3:.4f}) -> [{filled_value:.4f}, {filled_value:.4f}] "
            "(width 0.0000)") in table
    # the HTML report shows the same numbers (the one result, rendered)
    html = tmp_path / "j.html"
    assert CliRunner().invoke(cli, [*args, "--html", str(html)]).exit_code == 0
    page = html.read_text()
    assert "Holes filled by llm labels: the bounds on the human labels alone → with them." in page
    assert f"[{1 / L3:.4f}, 1.0000] → [{filled_value:.4f}, {filled_value:.4f}]" in page and ">1 → 0<" in page
    # one kind chosen, or judgments naming no source: nothing filled, and the JSON is as before
    alone = json.loads(CliRunner().invoke(cli, [*args[:-1], "human", "--format", "json"]).stdout)
    assert "filled" not in alone
    plain = tmp_path / "plain.txt"
    plain.write_text("q1 0 d1 2\nq1 0 d3 0\n")
    assert "filled" not in json.loads(CliRunner().invoke(
        cli, ["judgments", str(plain), str(run), "-m", "ndcg@3", "--scale", "trec_dl", "--format", "json"]).stdout)


def test_a_problem_after_choosing_labels_names_the_file_s_own_lines(tmp_path: Path) -> None:
    # the lines kept by --labels keep their numbers in the file (a duplicate among the human labels
    # is named at lines 2 and 4, not at the rows 1 and 2 of what was kept)
    path = tmp_path / "dup.txt"
    path.write_text("q1 0 d1 2 llm:m\nq1 0 d1 2 human:nist\nq1 0 d2 1 llm:m\nq1 0 d1 0 human:nist\n")
    with pytest.raises(InputError) as err:
        rf.evaluate(str(path), RUN, "ndcg@3", labels="human")
    assert str(err.value).startswith(f"{path}:4: document 'd1' appears more than once for query 'q1' (also at line 2)")


def test_prefer_drops_only_the_other_labels_of_pairs_both_judged(tmp_path: Path) -> None:
    # more queries than documents: a key that mixed query and doc codes loosely would let one pair
    # pass for another (with codes by first appearance, (c, x) = (2, 0) and (a, y) = (0, 1) collide
    # under q / 2 + d). Only (a, y) is judged twice; prefer=human keeps every other label.
    path = tmp_path / "q.txt"
    path.write_text("a 0 x 1 llm:m\na 0 y 1 human:nist\nb 0 x 0 llm:m\nc 0 x 2 llm:m\na 0 y 0 llm:m\n")
    q = rf.read_qrels(path, labels="prefer=human")
    from rankflavor.io.columns import to_strings

    kept = sorted(zip(to_strings(q.query), to_strings(q.doc), q.grade.tolist(), strict=True))
    assert kept == [("a", "x", 1.0), ("a", "y", 1.0), ("b", "x", 0.0), ("c", "x", 2.0)]
    assert q.labels_dropped == (("llm", 1),)


def test_which_kind_is_the_base_of_a_fill(qrels: Path) -> None:
    """The bounds "before the fill" are on the human labels under --labels any, on KIND's under
    prefer=KIND; no other choice (one kind, a kind absent, two choices in a row) has a base."""
    import dataclasses

    from rankflavor.analysis.judgments.filled import base_kind
    from rankflavor.io.inputs import as_qrels
    from rankflavor.io.labels import select_labels

    mixed = as_qrels(str(qrels))  # human and llm labels
    assert base_kind(mixed) == ("human", ("llm",))
    assert base_kind(dataclasses.replace(mixed, label_rule="any")) == ("human", ("llm",))
    assert base_kind(dataclasses.replace(mixed, label_rule="prefer=llm")) == ("llm", ("human",))
    for rule in ("prefer=clicks", "llm", "human", "prefer=human, then prefer=llm"):
        assert base_kind(dataclasses.replace(mixed, label_rule=rule)) is None, rule
    twice = select_labels(select_labels(mixed, "prefer=human"), "prefer=llm")
    assert twice.label_rule == "prefer=human, then prefer=llm" and base_kind(twice) is None
    assert base_kind(select_labels(mixed, "human")) is None  # one kind left


def test_a_fill_in_json_names_every_field_and_nulls_what_is_not_finite() -> None:
    from rankflavor.analysis.judgments.filled import Filled, FilledMeasure, FilledRun

    m = FilledMeasure("ndcg@3[...]", (float("nan"), float("inf")), (0.25, 0.75))
    assert m.widths[1] == 0.5
    doc = Filled("human", ("llm", "clicks"), (FilledRun("r", 3, 4, 1, 2, 3, (m,)),)).to_dict()
    assert doc == {"base": "human", "fillers": ["llm", "clicks"],
                   "runs": [{"run": "r", "k": 3, "unjudged_in_top_k": {"before": 4, "after": 1},
                             "queries": {"before": 2, "after": 3},
                             "measures": [{"measure": "ndcg@3[...]", "before": {"lower": None, "upper": None},
                                           "after": {"lower": 0.25, "upper": 0.75}}]}]}
    minus = FilledMeasure("m", (-float("inf"), 1.0), (0.0, 0.0))
    assert Filled("human", ("llm",), (FilledRun("r", None, 0, 0, 1, 1, (minus,)),)).to_dict()[
        "runs"][0]["measures"][0]["before"] == {"lower": None, "upper": 1.0}


def test_the_bounds_before_the_fill_are_of_the_measures_asked(qrels: Path, tmp_path: Path) -> None:
    # ndcg@1 of the run d2, d1, d3: on the human labels alone d2 is a hole graded 0..3, so DCG@1 is
    # its grade g and the ideal max(2, g): [0, 1]; with the LLM's d2 = 1 it is 1 / 2.
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d2 1 3.0 r\nq1 Q0 d1 2 2.0 r\nq1 Q0 d3 3 1.0 r\n")
    from rankflavor.io.inputs import as_qrels
    from rankflavor.io.labels import select_labels

    chosen = select_labels(as_qrels(str(qrels)), "prefer=human")  # (d1 has both a human and an LLM label)
    doc = rf.judgments(chosen, {"r": str(run)}, ["ndcg@1"], scale="trec_dl").to_dict()
    (m,) = doc["filled"]["runs"][0]["measures"]
    assert m["before"] == {"lower": 0.0, "upper": 1.0} and m["after"] == {"lower": 0.5, "upper": 0.5}
    assert m["measure"].startswith("ndcg@1[")
