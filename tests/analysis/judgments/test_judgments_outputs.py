"""What ``rankflavor judgments`` prints, field by field, on cases small enough to work by hand:
every key and value of the JSON, every line of the table (the mutation run of issue #32 found
them pinned only by spot checks). Each expected number is derived in the comments from the
definitions (P@k counts grades >= rel in the top k; an unjudged document in the top k is a hole
graded 0..3 on trec_dl), never read back from rankflavor."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from rankflavor.analysis.judgments import Scale, judgments
from rankflavor.analysis.judgments.coverage import BIAS_RULE
from rankflavor.cli.main import cli
from rankflavor.render.judgmentsfmt import render_judgments

BOX = "│┃"  # a table row's cell separators (rich's box); the rules above and below rows hold neither


def render_coverage(cov: object, fmt: str = "table", per_query: bool = False) -> str:
    """The command's renderer at a width where no sentence wraps."""
    return render_judgments(cov, fmt, per_query, width=240)  # type: ignore[arg-type]


def prose(text: str) -> list[str]:
    """The lines outside the tables, blank lines left out (tables' borders and rows too)."""
    return [line for line in text.splitlines() if line and line[0] not in "┏┡└│┃"]


def rows(text: str) -> list[list[str]]:
    """Every table row (the header included) as its stripped cells."""
    out = []
    for line in text.splitlines():
        if line[:1] in tuple(BOX):
            out.append([c.strip() for c in line.replace("┃", "│").strip("│").split("│")])
    return out

# q1: a(3) b(0) c(2) f(2) judged; q2: d(1) only, nothing relevant at rel = 2.
QRELS = {"q1": {"a": 3, "b": 0, "c": 2, "f": 2}, "q2": {"d": 1}}
# r1: q1 a, u(hole), b; q2 d, v(hole).  r2: q1 x, y (holes), a; q2 w (hole).
RUNS = {"r1": {"q1": {"a": 0.9, "u": 0.8, "b": 0.7}, "q2": {"d": 0.5, "v": 0.4}},
        "r2": {"q1": {"x": 0.9, "y": 0.8, "a": 0.7}, "q2": {"w": 0.5}}}
P2 = ("P@2[rel=2,unjudged=zero,negatives=unjudged,ties=docno_desc,precision=float64,depth=none,duplicates=error,"
      "missing=zero,empty=zero]")
COVERS = ("every grading of the unjudged documents in the top 2 with the grades {0,1,2,3}; not covered: unjudged "
          "documents ranked below that or never retrieved, and grades off the scale")


def _per_query(lo: float, v: float, up: float, c: float) -> dict[str, float]:
    return {"lower": lo, "value": v, "upper": up, "condensed": c}


# P@2 per query, by hand: r1 q1 = a + u: u at 0 gives 1/2, at >= 2 gives 2/2; condensed (u dropped)
# a, b: 1/2. r1 q2 = d(1) + v: 0 .. 1/2, condensed d alone 0. r2 q1 = x, y: 0 .. 2/2, condensed a
# alone in the top 2: 1/2. r2 q2 = w: 0 .. 1/2, condensed nothing: 0.
EXPECTED = {
    "qrels": "qrels dict",
    "scale": "trec_dl",
    "rel": 2.0,
    "grades": {"0": 1, "1": 1, "2": 2, "3": 1},
    "queries_with_no_relevant": ["q2"],
    "relevant_never_retrieved": {"count": 2, "per_query": {"q1": ["c", "f"]}},
    # mean unjudged@2: r1 (1/2 + 1/2) / 2 = 0.5, r2 (2/2 + 1/1) / 2 = 1; r2 - 0.5 >= 0.05 and 1 >= 2 x 0.5
    "pool_bias": {"runs": ["r2"], "rule": BIAS_RULE},
    # mean intervals r1 [0.25, 0.75], r2 [0, 0.75]: they overlap
    "undecided": {P2: {"r1": ["r2"], "r2": ["r1"]}},
    "runs": [
        {"run": "r1", "k": 2, "judged_at_k": 0.5, "unjudged_at_k": 0.5, "unjudged_in_top_k": 2,
         "top_k_grades": {"1": 1, "3": 1, "unjudged": 2},
         "bounds": [{"measure": P2, "lower": 0.25, "value": 0.25, "upper": 0.75, "condensed": 0.25,
                     "grades": [0.0, 1.0, 2.0, 3.0], "covers": COVERS,
                     "per_query": {"q1": _per_query(0.5, 0.5, 1.0, 0.5), "q2": _per_query(0.0, 0.0, 0.5, 0.0)}}],
         "per_query": {"q1": {"judged_at_k": 0.5, "unjudged": 1, "unjudged_ranks": [2]},
                       "q2": {"judged_at_k": 0.5, "unjudged": 1, "unjudged_ranks": [2]}}},
        {"run": "r2", "k": 2, "judged_at_k": 0.0, "unjudged_at_k": 1.0, "unjudged_in_top_k": 3,
         "top_k_grades": {"unjudged": 3},
         "bounds": [{"measure": P2, "lower": 0.0, "value": 0.0, "upper": 0.75, "condensed": 0.25,
                     "grades": [0.0, 1.0, 2.0, 3.0], "covers": COVERS,
                     "per_query": {"q1": _per_query(0.0, 0.0, 1.0, 0.5), "q2": _per_query(0.0, 0.0, 0.5, 0.0)}}],
         "per_query": {"q1": {"judged_at_k": 0.0, "unjudged": 2, "unjudged_ranks": [1, 2]},
                       "q2": {"judged_at_k": 0.0, "unjudged": 1, "unjudged_ranks": [1]}}},
    ],
}


def test_every_json_field_by_hand():
    cov = judgments(QRELS, RUNS, ["P@2"], scale="trec_dl")
    got = json.loads(render_coverage(cov, "json"))
    assert got == EXPECTED
    assert list(got) == list(EXPECTED)  # (and in this order)
    assert cov.rule == BIAS_RULE
    assert cov.run("r2").mean_unjudged == 1.0 and cov.run("r1").mean_judged == 0.5
    with pytest.raises(KeyError):
        cov.run("r3")


def test_every_table_line_by_hand():
    cov = judgments(QRELS, RUNS, ["P@2"], scale="trec_dl")
    want = [
        "judgments qrels dict (trec_dl: grades {0,1,2,3}, relevant >= 2, G = 3)",
        "  grades: 0: 1  1: 1  2: 2  3: 1",
        "  queries with nothing relevant: 1 (q2)",
        "  relevant documents no run retrieved: 2 in 1 queries",
        "P@2:",
        f"  {P2}",
        f"  [lower, upper]: least and greatest value over {COVERS}",
        "  * undecided by the judgments (its interval overlaps another run's): r1, r2",
        "WARNING pool bias: r2 hold markedly more unjudged documents in the top k than the other runs; their "
        "zero-imputed scores are biased low: read the bounds.",
        f"  rule: {BIAS_RULE}",
    ]
    table = [["run", "judged@2", "unjudged@2", "P@2 value [lower, upper]", "condensed"],
             ["r1", "0.5000", "2", "0.2500 [0.2500, 0.7500] *", "0.2500"],
             ["r2", "0.0000", "3", "0.0000 [0.0000, 0.7500] *", "0.2500"]]
    per_query = [["query", "judged@2", "unjudged ranks", "P@2 value [lower, upper]"],
                 ["q1", "0.5000", "2", "0.5000 [0.5000, 1.0000]"],
                 ["q2", "0.5000", "2", "0.0000 [0.0000, 0.5000]"],
                 ["query", "judged@2", "unjudged ranks", "P@2 value [lower, upper]"],
                 ["q1", "0.0000", "1,2", "0.0000 [0.0000, 1.0000]"],
                 ["q2", "0.0000", "1", "0.0000 [0.0000, 0.5000]"]]
    full = render_coverage(cov, per_query=True)
    assert prose(full) == [*want, "r1: per query", "r2: per query"]
    assert rows(full) == table + per_query
    short = render_coverage(cov)  # per query only when asked
    assert prose(short) == want and rows(short) == table


def test_table_without_a_scale_one_run_many_empty_queries_and_rbp():
    """No scale (relevant >= the rel given), one run (nothing to be undecided against, no pool
    bias), more than eight queries with nothing relevant (the list is cut at eight), RBP's
    residual footer, and a query whose top k holds no unjudged document ("-")."""
    qrels = {f"e{i}": {"z": 0} for i in range(9)}
    qrels["q"] = {"a": 2, "b": 1}
    run = {f"e{i}": {"z": 1.0} for i in range(9)}
    run["e0"]["h"] = 0.5
    run["q"] = {"a": 0.9, "b": 0.8}
    cov = judgments(qrels, {"only": run}, ["RBP@2[max_grade=2]"], rel=1)
    text = render_coverage(cov, per_query=True).splitlines()
    assert text[0] == "judgments qrels dict (no scale; relevant >= 1)"
    assert text[2] == "  queries with nothing relevant: 9 (e0, e1, e2, e3, e4, e5, e6, e7, ...)"
    assert cov.undecided == {} and cov.pool_bias == [] and not any("WARNING" in t for t in text)
    # RBP@2, p = 0.8, gain g / G (G = 2), ten queries: e0 = z(0), h(hole at rank 2): 0 .. the weight
    # of rank 2, (1 - p) p = 0.16; q = a(2), b(1): 0.2 + 0.16 / 2 = 0.28; e1..e8: 0. Residual (the
    # holes' weight, and p^d past the run's end, d = min(2, retrieved)): e0 0.16 + 0.64, e1..e8
    # 0.8 each, q 0.64: mean 7.84 / 10; lower + residual = 0.028 + 0.784 = 0.812.
    mb = cov.runs[0].bounds[0]
    assert mb.lower_mean == pytest.approx(0.028) and mb.upper_mean == pytest.approx(0.044)
    assert mb.residual_mean == pytest.approx(0.784)
    assert ("  lower + residual (Moffat & Zobel), which also covers the ranks past each run's end: only 0.8120"
            in text)
    per_query = rows("\n".join(text[text.index("only: per query"):]))[1:]
    assert [row[0] for row in per_query] == [f"e{i}" for i in range(9)] + ["q"]
    assert per_query[0][1:3] == ["0.5000", "2"] and per_query[1][1:3] == ["1.0000", "-"]
    assert per_query[-1][1:] == ["1.0000", "-", "0.2800 [0.2800, 0.2800]"]


def test_cli_json_is_the_same_result(tmp_path):
    """The command renders the one result the API computes (files in, JSON out)."""
    q = tmp_path / "qrels.txt"
    q.write_text("".join(f"{qid} 0 {d} {g}\n" for qid, docs in QRELS.items() for d, g in docs.items()))
    paths = []
    for name, run in RUNS.items():
        p = tmp_path / name
        p.write_text("".join(f"{qid} Q0 {d} {i + 1} {s} t\n" for qid, docs in run.items()
                             for i, (d, s) in enumerate(docs.items())))
        paths.append(str(p))
    res = CliRunner().invoke(cli, ["judgments", str(q), *paths, "-m", "P@2", "--scale", "trec_dl", "--format", "json"])
    assert res.exit_code == 0, res.output
    got = json.loads(res.output)
    assert {k: v for k, v in got.items() if k not in ("qrels", "provenance")} == {
        k: v for k, v in EXPECTED.items() if k != "qrels"}
    assert got["qrels"].endswith("qrels.txt")
    # the command adds where its inputs came from (path and size: hashes would change with line order)
    prov = got["provenance"]
    assert [(Path(i["source"]).name, i["bytes"]) for i in [prov["qrels"], *prov["runs"]]] == [
        (Path(f).name, Path(f).stat().st_size) for f in (str(q), *paths)]


def test_scale_describe_and_own_scale_json():
    s = Scale("mine", (2, 0, 1), rel=1, top=2)
    assert s.grades == (0.0, 1.0, 2.0) and s.describe() == "mine: grades {0,1,2}, relevant >= 1, G = 2"
    cov = judgments({"q": {"a": 2}}, {"q": {"a": 1.0}}, ["P@1"], scale=s)
    assert cov.to_dict()["scale"] == "mine" and cov.rel == 1.0
    assert judgments({"q": {"a": 2}}, {"q": {"a": 1.0}}, ["RBP@1[max_grade=2]"]).to_dict()["scale"] is None


@pytest.mark.parametrize(("empty", "line"), [
    (0, "  queries with nothing relevant: 0"),
    (8, "  queries with nothing relevant: 8 (e0, e1, e2, e3, e4, e5, e6, e7)"),  # eight: all named, no "..."
])
def test_the_queries_with_nothing_relevant_line(empty, line):  # type: ignore[no-untyped-def]
    qrels = {f"e{i}": {"z": 0} for i in range(empty)}
    qrels["q"] = {"a": 2}
    run = {q: {"z": 1.0, "a": 0.5} for q in qrels}
    cov = judgments(qrels, {"r": run}, ["P@1"], scale="trec_dl")
    assert render_coverage(cov).splitlines()[2] == line


def test_table_of_three_runs_with_rbp_two_biased_and_a_skipped_query():
    """Three runs, RBP@1 (p = 0.8, g / G, G = 3): "full" retrieves the judged a (3) for q and the
    judged b (0) for p; "new1" and "new2" retrieve unjudged documents only. Mean unjudged@1: full
    0, the others 1; for each of new1 and new2 the others' median is 1/2, and 1 - 1/2 >= 0.05 and
    1 >= 2 x 1/2: both named. Residual: p^1 = 0.8 past rank 1 for full; 0.2 (the hole) + 0.8 = 1
    for the others. With empty=skip, p (nothing relevant and nothing to grade in full's top 1)
    is left out of full's bounds, so its per-query row is skipped, and q's (after it) still follows."""
    qrels = {"q": {"a": 3}, "p": {"b": 0}}
    runs = {"full": {"q": {"a": 1.0}, "p": {"b": 1.0}}, "new1": {"q": {"x": 1.0}, "p": {"b": 0.5, "y": 1.0}},
            "new2": {"q": {"z": 1.0}, "p": {"w": 1.0, "b": 0.5}}}
    cov = judgments(qrels, runs, ["RBP@1[param=0.8]"], scale="trec_dl")
    text = render_coverage(cov).splitlines()
    assert ("WARNING pool bias: new1, new2 hold markedly more unjudged documents in the top k than the other runs; "
            "their zero-imputed scores are biased low: read the bounds.") in text
    # lower: full (0.2 + 0) / 2 = 0.1, the others 0; + residual: full 0.1 + 0.8, the others 0 + 1
    assert ("  lower + residual (Moffat & Zobel), which also covers the ranks past each run's end: "
            "full 0.9000, new1 1.0000, new2 1.0000") in text
    skip = judgments(qrels, {"full": runs["full"]}, ["P@1[empty=skip]"], scale="trec_dl")
    text = render_coverage(skip, per_query=True)
    assert rows(text)[:2] == [["run", "judged@1", "unjudged@1", "P@1 value [lower, upper]", "condensed"],
                              ["full", "1.0000", "0", "1.0000 [1.0000, 1.0000]", "1.0000"]]
    per_query = rows(text[text.index("full: per query"):])[1:]
    assert per_query == [["q", "1.0000", "-", "1.0000 [1.0000, 1.0000]"]]


def test_the_report_flags_undecided_runs_per_flavor_and_reads_older_files():
    """The HTML report's coverage panel reads ``undecided`` by each measure's flavor string; a
    file written before that keyed it by the metric's name, and still reads."""
    from rankflavor.report.sections import coverage_view

    both = judgments({"q1": {"a": 3, "b": 1}, "q2": {"c": 2}},
                     {"x": {"q1": {"a": 0.9, "u": 0.8}, "q2": {"c": 0.5}},
                      "y": {"q1": {"v": 0.9, "a": 0.8}, "q2": {"c": 0.5}},
                      "z": {"q1": {"b": 0.9}, "q2": {"w": 0.5}}}, ["P@2", "P@2[rel=1]"], scale="trec_dl").to_dict()
    view = coverage_view(both)
    flags = {r["run"]: [c["undecided"] for c in r["bounds"]] for r in view["runs"]}
    assert flags == {"x": [["y"], ["y", "z"]], "y": [["x"], ["x", "z"]], "z": [[], ["x", "y"]]}
    old = json.loads(render_coverage(judgments(QRELS, RUNS, ["P@2"], scale="trec_dl"), "json"))
    old["undecided"] = {"P@2": old["undecided"][P2]}
    assert [r["bounds"][0]["undecided"] for r in coverage_view(old)["runs"]] == [["r2"], ["r1"]]
