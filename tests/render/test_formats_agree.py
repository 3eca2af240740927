"""One result, every format (issue #32): for each command with ``--format``, every format it offers
carries the numbers of its JSON, at the precision it prints them.

Each output is read back by the test's own parsers (:mod:`tests.support.formats_parse`): JSON loaded, CSV
read, the cells of terminal, Markdown and LaTeX tables split. Numbers printed rounded are compared
to the JSON value to half a unit of their last digit; CSV, which prints full precision, exactly.
Summary-only formats (``compare --format md|latex``: each system's mean, marked with the systems
it beats) are documented as such in ``rankflavor compare --help``; their numbers still agree.

Inputs are tiny TREC files written here: three queries, two runs, no tied scores, and judgments
whose docno order puts the grades ascending in q1, so the ``spark_triples`` preset (Spark's
unsorted ideal, a known defect) scores NDCG above 1 and ``spread`` must leave it out of its
summaries in every format alike.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from rankflavor.render.spreadview import short_names

from ..support.formats_parse import agrees, csv_rows, flat, html_parts, invoke, latex_rows, md_rows, table_rows

QRELS = """q1 0 a 0
q1 0 b 1
q1 0 c 2
q1 0 d 3
q1 0 e 1
q2 0 a 2
q2 0 f 1
q2 0 g 0
q3 0 h 1
q3 0 i 3
"""
RUN_A = """q1 Q0 d 1 9.5 A
q1 Q0 c 2 8.25 A
q1 Q0 x 3 7.0 A
q1 Q0 a 4 6.5 A
q2 Q0 f 1 5.0 A
q2 Q0 a 2 4.0 A
q2 Q0 y 3 3.5 A
q3 Q0 i 1 2.0 A
q3 Q0 z 2 1.5 A
"""
RUN_B = """q1 Q0 a 1 9.0 B
q1 Q0 b 2 8.0 B
q1 Q0 d 3 7.5 B
q2 Q0 a 1 5.5 B
q2 Q0 g 2 4.5 B
q3 Q0 h 1 2.5 B
q3 Q0 i 2 2.25 B
"""


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name, text in (("q.txt", QRELS), ("A.run", RUN_A), ("B.run", RUN_B)):
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def outputs(args: list[str], formats: tuple[str, ...], code: int = 0) -> dict[str, str]:
    return {fmt: invoke(*args, "--format", fmt, code=code) for fmt in formats}


def rows_of(fmt: str, text: str) -> list[list[str]]:
    return {"table": table_rows, "md": md_rows, "latex": latex_rows}[fmt](text)


# -- eval and show ------------------------------------------------------------------------------


def test_eval_formats_agree(toy: Path) -> None:
    args = ["eval", "q.txt", "A.run", "-q", "-m", "ndcg@10", "-m", "AP", "-m", "P@5", "-m", "ERR@10[max_grade=3]"]
    out = outputs(args, ("json", "table", "csv", "trec", "md", "latex"))
    measures = json.loads(out["json"])["measures"]
    names = [m["name"] for m in measures]
    queries = sorted({p["query"] for m in measures for p in m["per_query"]})
    assert len(names) == 4 and queries == ["q1", "q2", "q3"]
    for fmt in ("table", "md", "latex"):
        rows = rows_of(fmt, out[fmt])
        summary = {r[0]: r for r in rows if len(r) == 4 and r[0] in names}
        assert set(summary) == set(names), fmt
        per_query = {r[0]: r[1:] for r in rows if len(r) == 1 + len(names) and r[0] in queries}
        assert set(per_query) == set(queries), fmt
        for j, m in enumerate(measures):
            assert agrees(summary[m["name"]][1], m["value"]) and summary[m["name"]][2] == str(m["n_queries"]), fmt
            for p in m["per_query"]:
                assert agrees(per_query[p["query"]][j], p["value"]), (fmt, m["name"], p)
    csv_ = {(r[0], r[1]): r for r in csv_rows(out["csv"])[1:]}
    trec = {(f[0], f[1]): f[2] for f in (line.split() for line in out["trec"].splitlines())}
    for m in measures:
        assert float(csv_[(m["name"], "all")][2]) == m["value"] and csv_[(m["name"], "all")][3] == m["flavor"]
        assert agrees(trec[(m["name"], "all")], m["value"])
        for p in m["per_query"]:
            assert float(csv_[(m["name"], p["query"])][2]) == p["value"]
            assert agrees(trec[(m["name"], p["query"])], p["value"])
    assert len(csv_) == len(trec) == 4 * 4  # per query and all


def test_eval_csv_carries_every_number_of_the_json(toy: Path) -> None:
    """With and without ``-q``, the CSV carries each measure's value, ``n_queries``,
    ``skipped_empty`` and ``skipped_missing`` (the ``all`` row) and each query's value and status,
    as the JSON does; the first four columns stay ``metric,query,value,flavor``. q4 is judged but
    has nothing relevant (empty), q5 is judged but not in the run (missing)."""
    Path("qx.txt").write_text(QRELS + "q4 0 j 0\nq5 0 k 1\n")
    Path("Ax.run").write_text(RUN_A + "q4 Q0 j 1 1.0 A\n")
    measures = ["-m", "ndcg@10[empty=skip,missing=skip]", "-m", "AP", "-m", "relstring@3", "-m", "P@5[empty=nan]"]
    for per_query in ([], ["-q"]):
        out = outputs(["eval", "qx.txt", "Ax.run", *measures, *per_query], ("json", "csv", "table"))
        data = json.loads(out["json"])["measures"]
        rows = csv_rows(out["csv"])
        assert rows[0] == ["metric", "query", "value", "flavor", "n_queries", "skipped_empty", "skipped_missing",
                           "status"]
        got = {(r[0], r[1]): dict(zip(rows[0], r, strict=True)) for r in rows[1:]}
        assert len(got) == len(rows) - 1 == sum(1 + len(m.get("per_query", [])) for m in data)
        for m in data:
            row = got[(m["name"], "all")]
            assert row["flavor"] == m["flavor"] and row["status"] == "summary"
            assert (float(row["value"]) if row["value"] else None) == m["value"]
            assert [int(row[k]) for k in ("n_queries", "skipped_empty", "skipped_missing")] == [
                m["n_queries"], m["skipped_empty"], m["skipped_missing"]]
            for pq in m.get("per_query", []):
                row = got[(m["name"], pq["query"])]
                value = row["value"] if isinstance(pq["value"], str) else float(row["value"])
                assert (value, row["status"]) == (pq["value"], pq["status"]) or (
                    pq["value"] is None and row["value"] == "nan" and row["status"] == pq["status"])
                assert row["n_queries"] == row["skipped_empty"] == row["skipped_missing"] == ""
        # the table's count of queries is the same number
        table = {r[0]: r for r in table_rows(out["table"]) if len(r) == 4}
        assert all(table[m["name"]][2] == str(m["n_queries"]) for m in data)
    ndcg, ap, rel, p5 = data
    assert (ndcg["n_queries"], ndcg["skipped_empty"], ndcg["skipped_missing"]) == (3, 1, 1)
    assert (ap["n_queries"], rel["n_queries"], rel["value"]) == (5, 5, None)
    assert [q["status"] for q in p5["per_query"] if q["query"] in ("q4", "q5")] == ["empty", "missing"]


def test_show_prints_what_eval_printed(toy: Path) -> None:
    for fmt in ("table", "json", "csv", "trec", "md", "latex"):
        printed = invoke("eval", "q.txt", "B.run", "-q", "-m", "ndcg@10", "-m", "RR", "--format", fmt,
                         "-o", "B.json")
        assert invoke("show", "B.json", "-q", "--format", fmt) == printed, fmt


# -- spread -------------------------------------------------------------------------------------


def _spread_agrees(out: dict[str, str]) -> dict[str, Any]:
    data = json.loads(out["json"])
    runs = data["runs"]
    short = dict(zip(runs, short_names(runs), strict=True))
    flavors = data["flavors"]
    used = [f for f in flavors if f["in_summary"]]
    assert data["n_in_summary"] == len(used) and data["n_flavors"] == len(flavors)
    assert [e["flavor"] for e in data["excluded"]] == [f["flavor"] for f in flavors if not f["in_summary"]]
    # JSON itself: the summaries are over the flavors in them, and say so
    for s in data["summaries"]:
        vals = [f["mean"][s["run"]] for f in used if f["mean"][s["run"]] is not None]
        assert (s["min"], s["max"], s["n_flavors"]) == (min(vals), max(vals), len(vals))
    for p in data["pairs"]:
        d = [f["mean"][p["run_a"]] - f["mean"][p["run_b"]] for f in used]
        assert p["a_better"] + p["b_better"] + p["equal"] == len(d) and (p["min_diff"], p["max_diff"]) == (min(d), max(d))
    # CSV: every mean at full precision, each marked in or out with the reason; its summaries are the JSON's
    rows = csv_rows(out["csv"])
    assert rows[0] == ["run", "flavor", "mean", "in_summary", "excluded_because"]
    by = {(r[0], r[1]): r for r in rows[1:]}
    assert len(by) == len(rows) - 1 == len(runs) * len(flavors)
    for f in flavors:
        for run in runs:
            r = by[(run, f["flavor"])]
            assert float(r[2]) == f["mean"][run] and r[3] == ("1" if f["in_summary"] else "0")
            assert r[4] == ("" if f["in_summary"] else f["defect"])
    for s in data["summaries"]:
        vals = [float(r[2]) for r in rows[1:] if r[0] == s["run"] and r[3] == "1"]
        assert (min(vals), max(vals), max(vals) - min(vals), len(vals)) == (s["min"], s["max"], s["spread"],
                                                                           s["n_flavors"])
    # table, Markdown, LaTeX: the flavor table, the summaries per run and per pair, the notes
    for fmt in ("table", "md", "latex"):
        rows = rows_of(fmt, out[fmt])
        flavor_rows = [r for r in rows if r[0].isdigit() and len(r) >= 3 + len(runs)]
        assert [int(r[0]) for r in flavor_rows] == list(range(1, len(flavors) + 1)), fmt
        for r, f in zip(flavor_rows, flavors, strict=True):
            assert all(agrees(c, f["mean"][run]) for c, run in zip(r[-len(runs):], runs, strict=True)), (fmt, r)
            assert ("(defect)" in r[2]) == (f["defect"] is not None), (fmt, r)
            if fmt != "table":
                assert r[3] == ("yes" if f["in_summary"] else "no")
        per_run = {r[0]: r for r in rows if len(r) == 8 and r[0] in short.values()}
        assert len(per_run) == len(runs), fmt
        for s in data["summaries"]:
            r = per_run[short[s["run"]]]
            assert all(agrees(c, s[k]) for c, k in zip(r[1:5], ("base", "min", "max", "spread"), strict=True)), (fmt, r)
            assert r[5] == str(s["n_flavors"]), (fmt, r)
            for cell, key in ((r[6], "min_flavor"), (r[7], "max_flavor")):
                number = int(re.match(r"#(\d+)", cell).group(1))  # type: ignore[union-attr]
                assert flavors[number - 1]["flavor"] == s[key], (fmt, r)
        pairs = [r for r in rows if len(r) == 9 and r[0] in short.values()]
        assert len(pairs) == len(data["pairs"]), fmt
        for r, p in zip(pairs, data["pairs"], strict=True):
            assert (r[0], r[1]) == (short[p["run_a"]], short[p["run_b"]])
            assert all(agrees(c, p[k]) for c, k in zip(r[2:5], ("base_diff", "min_diff", "max_diff"), strict=True))
            assert r[5:8] == [str(p["a_better"]), str(p["b_better"]), str(p["equal"])], (fmt, r)
        text = flat(out[fmt]).replace("\\", "")
        for note in data["notes"]:
            assert flat(note).replace("\\", "") in text or fmt == "latex", (fmt, note)
        for e in data["excluded"]:
            assert flat(e["reason"]).replace("_", "").replace("\\", "") in text.replace("_", ""), fmt
    return data


def test_spread_formats_agree_and_leave_the_defect_out_alike(toy: Path) -> None:
    formats = ("json", "csv", "table", "md", "latex")
    data = _spread_agrees(outputs(["spread", "q.txt", "A.run", "B.run", "--vary", "gain=linear,exp2"], formats))
    (excluded,) = data["excluded"]
    assert excluded["presets"] == ["spark_triples"]
    spark = next(f for f in data["flavors"] if f["flavor"] == excluded["flavor"])
    assert spark["mean"]["A.run"] > 1 > max(s["max"] for s in data["summaries"])  # NDCG above 1, left out
    assert all(s["n_flavors"] == len(data["flavors"]) - 1 for s in data["summaries"])
    included = _spread_agrees(outputs(["spread", "q.txt", "A.run", "B.run", "--vary", "gain=linear,exp2",
                                       "--include-defects"], formats))
    assert included["excluded"] == [] and included["include_defects"] is True
    assert next(s for s in included["summaries"] if s["run"] == "A.run")["max"] == spark["mean"]["A.run"]


# -- diff ---------------------------------------------------------------------------------------


def test_diff_formats_agree(toy: Path) -> None:
    args = ["diff", "q.txt", "A.run", "ndcg@10", "ndcg@10[gain=exp2,ideal=local,discount=jk(2)]"]
    out = outputs(args, ("json", "csv", "table", "md", "latex"))
    d = json.loads(out["json"])
    steps = d["steps"]
    assert len(steps) == 3
    for fmt in ("table", "md", "latex"):
        text = flat(out[fmt])
        means = re.findall(r"mean (\S+) over (\d+) queries", text)
        assert agrees(means[0][0], d["mean_a"]) and agrees(means[1][0], d["mean_b"]), fmt
        assert agrees(re.search(r"B - A = (\S+)", text).group(1), d["total"]), fmt  # type: ignore[union-attr]
        rows = rows_of(fmt, out[fmt])
        path = [r for r in rows if len(r) == 7 and r[0].isdigit()]
        assert [r[1] for r in path] == [s["knob"] for s in steps], fmt
        for r, s in zip(path, steps, strict=True):
            assert agrees(r[3], s["mean_after"]) and agrees(r[4], s["delta"]) and r[6] == str(s["n_in_mean"]), (fmt, r)
        total = next(r for r in rows if len(r) == 7 and r[1] == "total")
        assert agrees(total[4], d["total"])
        movers = {r[0]: r for r in rows if len(r) == 4 + len(steps) and r[0].startswith("q")}
        assert set(movers) == {m["query"] for m in d["movers"]}, fmt
        for m in d["movers"]:
            r = movers[m["query"]]
            assert agrees(r[1], m["a"]) and agrees(r[2], m["b"]) and agrees(r[3], m["total"]), (fmt, r)
            assert all(agrees(c, m["by_step"][s["knob"]]) for c, s in zip(r[4:], steps, strict=True)), (fmt, r)
    rows = csv_rows(out["csv"])
    assert rows[0] == ["knob", "query", "delta"]
    got = {(r[0], r[1]): float(r[2]) for r in rows[1:]}
    assert {(r["knob"], r["query"]): r["delta"] for r in d["rows"]} == got and len(got) == len(rows) - 1
    assert all(got[(s["knob"], "all")] == s["delta"] for s in steps) and got[("total", "all")] == d["total"]
    assert all(got[("total", m["query"])] == m["total"] for m in d["movers"])


# -- compare ------------------------------------------------------------------------------------


def _compare_agrees(out: dict[str, str]) -> dict[str, Any]:
    data = json.loads(out["json"])
    (m,) = data["measures"]
    systems = data["systems"]
    ids = {s: chr(97 + i) for i, s in enumerate(systems)}
    short = dict(zip(systems, short_names(systems), strict=True))
    tests = data["settings"]["tests"]
    rows = table_rows(out["table"])
    for s in m["systems"]:
        r = next(r for r in rows if len(r) == 4 and r[:2] == [ids[s["name"]], short[s["name"]]])
        lo, hi = r[3].strip("[]").split(", ")
        assert agrees(r[2], s["mean"]) and agrees(lo, s["ci"][0]) and agrees(hi, s["ci"][1]), r
    for p in m["pairs"]:
        r = next(r for r in rows if len(r) > 6 and r[:2] == [ids[p["a"]], ids[p["b"]]])
        lo, hi = r[3].strip("[]").split(", ")
        d = p["cohens_d"]
        assert agrees(r[2], p["delta"]) and agrees(lo, p["ci"][0]) and agrees(hi, p["ci"][1]), r
        if d is None:  # not a finite number: the table prints its word, the JSON names why
            word = p["undefined"]["cohens_d"].split(":")[0]
            assert r[4] == word and f"cohens_d {p['undefined']['cohens_d']}" in flat(out["table"])
        else:
            assert agrees(r[4], d), r
        assert r[5] == f"{p['wins']}/{p['losses']}/{p['ties']}"
        ps = r[6:6 + len(tests)]
        assert all(agrees(c, p["pvalues"][t]) for c, t in zip(ps, tests, strict=True)), r
        adj = r[6 + len(tests):6 + len(tests) + len(p["adjusted"])]
        assert all(agrees(c, v) for c, v in zip(adj, p["adjusted"].values(), strict=True)), r
        assert r[6 + len(tests) + len(p["adjusted"])] == ("yes" if p["significant"] else "no")
    rows = csv_rows(out["csv"])
    head = rows[0]
    assert head[-7] == "note"  # then the robustness columns (test_compare_grid_formats_agree_...)
    for r in rows[1:]:
        row = dict(zip(head, r, strict=True))
        p = next(p for p in m["pairs"] if (p["a"], p["b"]) == (row["a"], row["b"]))
        means = {s["name"]: s["mean"] for s in m["systems"]}
        assert float(row["mean_a"]) == means[p["a"]] and float(row["mean_b"]) == means[p["b"]]
        assert float(row["delta"]) == p["delta"] and [float(row["ci_low"]), float(row["ci_high"])] == p["ci"]
        if p["cohens_d"] is None:
            assert row["cohens_d"] == p["undefined"]["cohens_d"].split(":")[0] and p["undefined"]["cohens_d"] in row["note"]
        else:
            assert float(row["cohens_d"]) == p["cohens_d"]
        assert (int(row["wins"]), int(row["losses"]), int(row["ties"])) == (p["wins"], p["losses"], p["ties"])
        raw = p["pvalues"].get(row["test"], p["adjusted"].get(row["test"]))
        assert float(row["p"]) == raw
        if row["p_adjusted"]:
            assert float(row["p_adjusted"]) == p["adjusted"][row["test"]]
    # Markdown and LaTeX: summary-only, each system's mean and the systems it beats significantly
    for fmt in ("md", "latex"):
        body = [r for r in rows_of(fmt, out[fmt]) if r[0] in ids.values()]
        assert [r[1] for r in body] == systems, fmt
        for r, s in zip(body, m["systems"], strict=True):
            value = re.sub(r"\\textbf\{|\*\*|\}|<sup>.*|\$\^.*", "", r[2])
            assert agrees(value, s["mean"]), (fmt, r)
            beaten = {ids[o] for p in m["pairs"] if p["significant"] for me, o in ((p["a"], p["b"]), (p["b"], p["a"]))
                      if me == s["name"] and next(x["mean"] for x in m["systems"] if x["name"] == me)
                      > next(x["mean"] for x in m["systems"] if x["name"] == o)}
            marks = re.search(r"<sup>(\w+)</sup>|\$\^\{(\w+)\}\$", r[2])
            assert set((marks.group(1) or marks.group(2)) if marks else "") == beaten, (fmt, r)
    return data


def test_compare_formats_agree(toy: Path) -> None:
    (Path("C.run")).write_text(RUN_A.replace("9.5", "6.0").replace(" A\n", " C\n"))
    out = outputs(["compare", "q.txt", "A.run", "B.run", "C.run", "--resamples", "200", "--test", "t",
                   "--test", "permutation", "--test", "wilcoxon"], ("json", "csv", "table", "md", "latex"))
    data = _compare_agrees(out)
    assert len(data["measures"][0]["pairs"]) == 3


def test_compare_every_format_defines_an_infinite_effect_size(toy: Path) -> None:
    """Every query moves by the same amount: Cohen's d = mean / 0 is -inf. JSON writes null and
    why (it used to fail: "Out of range float values are not JSON compliant"), the other formats
    print -inf and the reason."""
    Path("q3.txt").write_text("q1 0 a 1\nq2 0 c 1\nq3 0 e 1\n")
    Path("top.run").write_text("".join(f"{q} Q0 {d} 1 3 A\n{q} Q0 {o} 2 2 A\n" for q, d, o in
                                       (("q1", "a", "b"), ("q2", "c", "d"), ("q3", "e", "f"))))
    Path("second.run").write_text("".join(f"{q} Q0 {d} 2 2 B\n{q} Q0 {o} 1 3 B\n" for q, d, o in
                                          (("q1", "a", "b"), ("q2", "c", "d"), ("q3", "e", "f"))))
    out = outputs(["compare", "q3.txt", "top.run", "second.run", "--resamples", "100"],
                  ("json", "csv", "table", "md", "latex"))
    data = _compare_agrees(out)
    (p,) = data["measures"][0]["pairs"]
    assert p["cohens_d"] is None and p["undefined"]["cohens_d"].startswith("-inf: every query's difference is the same")
    assert p["delta"] == pytest.approx(1 / math.log2(3) - 1, abs=1e-12)


# -- explain, identify ---------------------------------------------------------------------------


def test_explain_formats_agree(toy: Path) -> None:
    for measure in ("ndcg@10", "spark_triples:ndcgAt(10)"):
        out = outputs(["explain", "q.txt", "A.run", "-Q", "q1", "-m", measure], ("json", "table"))
        e = json.loads(out["json"])
        rows = table_rows(out["table"])
        ranked = [r for r in rows if len(r) == 9 and r[0].isdigit()]
        ideal = [r for r in rows if len(r) == 8 and r[0].isdigit()]
        assert [int(r[0]) for r in ranked] == [x["rank"] for x in e["rows"]]
        for r, x in zip(ranked, e["rows"], strict=True):
            assert r[1] == x["doc"] and agrees(r[2], x["score"])
            assert all(agrees(c, x[k]) for c, k in zip(r[4:8], ("gain", "discount", "contribution", "cumulative"),
                                                        strict=True)), r
        assert [r[1] for r in ideal] == [x["doc"] for x in e["ideal"]]
        for r, x in zip(ideal, e["ideal"], strict=True):
            assert all(agrees(c, x[k]) for c, k in zip(r[3:7], ("gain", "discount", "contribution", "cumulative"),
                                                        strict=True)), r
        found = re.search(r"DCG (\S+)\s+IDCG (\S+)\s+NDCG (\S+)", out["table"])
        assert found and all(agrees(found.group(i + 1), e[k]) for i, k in enumerate(("dcg", "idcg", "ndcg")))
    assert e["ndcg"] > 1  # spark_triples: the unsorted ideal, in docno order a b c d e (grades 0 1 2 3 1)
    assert [x["doc"] for x in e["ideal"]] == ["a", "b", "c", "d", "e"]


def test_identify_formats_agree(toy: Path) -> None:
    out = outputs(["identify", "q.txt", "A.run", "--value", "0.1667", "-m", "P@10", "--show", "3"], ("json", "table"))
    data = json.loads(out["json"])
    text = out["table"]
    head = re.match(r"P@10: mean (\S+); (\d+) flavors tried", text)
    assert head and agrees(head.group(1), data["value"]) and int(head.group(2)) == data["n_flavors"]
    groups = re.findall(r"^\[(\d+)\] (\d+) flavor\(s\), mean (\S+)", text, flags=re.M)
    assert len(groups) == len(data["groups"]) > 0
    for (number, n, mean), g in zip(groups, data["groups"], strict=True):
        assert int(number) == data["groups"].index(g) + 1
        assert int(n) == len(g["candidates"]) and all(agrees(mean, c["mean"]) for c in g["candidates"])


# -- check, judgments, raters --------------------------------------------------------------------


def test_check_formats_agree(toy: Path) -> None:
    out = outputs(["check", "q.txt", "A.run", "B.run"], ("json", "table"))
    data = json.loads(out["json"])
    rows = table_rows(out["table"])
    files = {r[0]: r for r in rows if len(r) == 7}
    overlap = {o["run"]: o for o in data["overlap"]}
    for f in data["files"]:
        r = files[f["path"]]
        assert (r[1], r[2], r[3]) == (f["kind"], str(f["rows"]), str(f["queries"]))
        if f["path"] in overlap:
            o = overlap[f["path"]]
            judged, share = re.fullmatch(r"(\d+) \((\S+)%\)", r[5]).groups()  # type: ignore[union-attr]
            assert r[4] == str(o["common_queries"]) and int(judged) == o["judged_rows"]
            assert agrees(share, 100 * o["judged_share"])
    findings = [r for r in rows if len(r) == 5 and r[0] in ("error", "warning", "info")]
    assert sorted((r[1], int(r[3])) for r in findings) == sorted((f["code"], f["count"]) for f in data["findings"])
    assert f"status: {data['status']}" in out["table"]


def test_judgments_formats_agree(toy: Path) -> None:
    out = outputs(["judgments", "q.txt", "A.run", "B.run", "--scale", "trec_dl", "-m", "ndcg@5"], ("json", "table"))
    data = json.loads(out["json"])
    rows = {r[0]: r for r in table_rows(out["table"]) if len(r) == 5}  # run, judged, unjudged, interval, condensed
    for r in data["runs"]:
        f = rows[r["run"]]
        (b,) = r["bounds"]
        value, lower, upper = re.fullmatch(r"(\S+) \[(\S+), (\S+)\]( \*)?", f[3]).groups()[:3]  # type: ignore[union-attr]
        assert agrees(f[1], r["judged_at_k"]) and f[2] == str(r["unjudged_in_top_k"])
        assert agrees(value, b["value"]) and agrees(lower, b["lower"]) and agrees(upper, b["upper"])
        assert agrees(f[4], b["condensed"])


def test_raters_formats_agree(toy: Path) -> None:
    Path("ratings.txt").write_text("q1 0 a 1 r1\nq1 0 a 2 r2\nq1 0 b 0 r1\nq1 0 b 0 r2\nq1 0 c 3 r1\nq1 0 c 2 r2\n"
                                   "q2 0 a 1 r1\nq2 0 a 1 r2\nq2 0 d 2 r1\nq2 0 d 3 r2\nq2 0 e 0 r1\n")
    out = outputs(["raters", "ratings.txt", "--ratings-format", "trec"], ("json", "table"))
    data = json.loads(out["json"])
    rows = {r[0]: r for r in table_rows(out["table"])}
    for name, s in [("all", data["overall"]), *data["per_query"].items()]:
        r = rows[name]
        assert r[1:5] == [str(s[k]) for k in ("pairs", "ratings", "raters", "complete_pairs")]
        assert all(agrees(c, s[k]) for c, k in zip(r[5:], ("cohen_kappa", "fleiss_kappa", "krippendorff_alpha"),
                                                    strict=True)), r


# -- history, gate, pool ------------------------------------------------------------------------


def test_history_formats_agree(toy: Path) -> None:
    for run in ("A.run", "B.run", "A.run"):
        invoke("eval", "q.txt", run, "-m", "ndcg@10", "-m", "P@5", "--record", "--history-db", "h.sqlite")
    out = outputs(["history", "--history-db", "h.sqlite"], ("json", "csv", "table"))
    points = [(s["line"], p) for s in json.loads(out["json"])["series"] for p in s["points"]]
    assert len(points) == 6
    rows = csv_rows(out["csv"])
    head = rows[0]
    got = {(r["record"], r["flavor"]): r for r in (dict(zip(head, r, strict=True)) for r in rows[1:])}
    table = {(r[0], r[4]): r for r in table_rows(out["table"]) if len(r) == 8}
    for line, p in points:
        r = got[(str(p["record"]), p["flavor"])]
        assert float(r["value"]) == p["value"] and r["n_queries"] == str(p["n_queries"]) and r["line"] == line
        t = table[(str(p["record"]), p["display"])]
        assert agrees(t[5], p["value"]) and t[7] == str(p["n_queries"]) and t[2] == p["run"]


def test_gate_formats_agree(toy: Path) -> None:
    Path("rankflavor.toml").write_text("[project]\nname = 'toy'\n[metrics]\nmeasures = ['ndcg@10', 'P@5']\n"
                                       "[datasets.toy]\nqrels = 'q.txt'\n[runs.a]\npath = 'A.run'\n[runs.b]\n"
                                       "path = 'B.run'\n[baselines]\ntoy = 'base.json'\n[gate]\nfloor = 0.5\n"
                                       "max_drop = 0.05\n")
    invoke("eval", "toy", "a", "-o", "base.json")
    text = invoke("gate", "a", "b", "--format", "text", code=1)
    data = json.loads(invoke("gate", "a", "b", "--format", "json", code=1))
    checks = [c for r in data["runs"] for c in r["checks"]]
    lines = [line.split(None, 3) for line in text.splitlines() if line.startswith(("  PASS", "  FAIL"))]
    assert len(lines) == len(checks) > 2
    for (verdict, measure, kind, rest), c in zip(lines, checks, strict=True):
        assert (verdict == "PASS", measure, kind, rest.strip()) == (c["passed"], c["measure"], c["check"], c["reason"])
        assert f"{c['value']:.4f}" in rest
    assert data["passed"] is False and "gate FAILED" in text


def test_pool_formats_agree(toy: Path) -> None:
    out = {fmt: invoke("pool", "A.run", "B.run", "--cutoff", "3", "--format", fmt) for fmt in ("trec", "csv", "quepid")}
    trec = [tuple(line.split()[::2]) for line in out["trec"].splitlines() if line and not line.startswith("#")]
    rows = csv_rows(out["csv"])
    assert rows[0][:2] == ["query", "doc"]
    quepid = csv_rows(out["quepid"])
    assert quepid[0][:2] == ["query", "docid"]
    assert trec == [tuple(r[:2]) for r in rows[1:]] == [tuple(r[:2]) for r in quepid[1:]]
    assert len(trec) == len(set(trec)) > 0


# -- compare --flavors: the defect preset left out of the flips alike ---------------------------

# q1's judgments in docno order put eight grade-0 documents before y (1) and z (3), so Spark's
# unsorted ideal (spark_triples) is tiny there and q1 outweighs q2: T beats S under that flavor
# only (S wins under trec_eval's NDCG@10). q3: both the same.
FLIP_QRELS = "".join(f"q1 0 a{i} 0\n" for i in range(8)) + "q1 0 y 1\nq1 0 z 3\nq2 0 a 3\nq2 0 b 1\nq3 0 c 2\n"
FLIP_S = "q1 Q0 x1 1 9 S\nq1 Q0 z 2 8 S\nq2 Q0 a 1 7 S\nq2 Q0 b 2 6 S\nq3 Q0 c 1 5 S\n"
FLIP_T = "q1 Q0 z 1 9 T\nq1 Q0 x1 2 8 T\nq2 Q0 x2 1 7 T\nq2 Q0 x3 2 6 T\nq3 Q0 c 1 5 T\n"


def _by_hand(qrels: str, run: str, spark: bool, k: int = 10) -> float:
    """Mean NDCG@k written from the definitions: trec_eval's (linear gain, 1/log2(rank+1), the
    judged grades sorted) or Spark 3.4+ ``ndcgAt`` on triples (2^rel - 1, and the ideal over the
    label array as supplied, here the judgments in docno order: apache/spark RankingMetrics.scala,
    flavor-facts 4.1)."""
    judged: dict[str, dict[str, int]] = {}
    for line in qrels.splitlines():
        q, _, d, g = line.split()
        judged.setdefault(q, {})[d] = int(g)
    ranked: dict[str, list[str]] = {}
    for line in run.splitlines():
        q, _, d, _, _, _ = line.split()
        ranked.setdefault(q, []).append(d)
    gain = (lambda g: 2.0 ** g - 1) if spark else float
    values = []
    for q, docs in ranked.items():
        grades = judged[q]
        labels = [grades[d] for d in sorted(grades)] if spark else sorted(grades.values(), reverse=True)
        n = min(max(len(docs), len(labels)), k) if spark else k
        dcg = sum(gain(grades.get(d, 0)) / math.log2(i + 2) for i, d in enumerate(docs[:n]))
        idcg = sum(gain(g) / math.log2(i + 2) for i, g in enumerate(labels[:n]))
        values.append(dcg / idcg)
    return sum(values) / len(values)


def _sign(x: float) -> int:
    return 0 if abs(x) <= 1e-12 else (1 if x > 0 else -1)


def _robust_agrees(out: dict[str, str], page: str) -> dict[str, Any]:
    """Every format shows the flips of the JSON's ``robustness``, over the flavors it counts, and
    lists the flavors it does not count with their reason."""
    data = json.loads(out["json"])
    (m,) = data["measures"]
    r = m["robustness"]
    counted = [f for f in r["flavors"] if f["in_summary"]]
    assert r["n_in_summary"] == len(counted) and r["n_flavors"] == len(r["flavors"])
    assert [(e["flavor"], e["label"], e["reason"]) for e in r["excluded"]] == [
        (f["flavor"], f["label"], f["defect"]) for f in r["flavors"] if not f["in_summary"]]
    for k, (p, rp) in enumerate(zip(m["pairs"], r["pairs"], strict=True)):  # JSON itself: flips over the counted
        assert rp["sign_flipped_by"] == [f["label"] for f in counted if _sign(f["deltas"][k]) != _sign(p["delta"])]
        assert rp["verdict_flipped_by"] == [f["label"] for f in counted if f["significant"][k] != p["significant"]]
        assert (rp["sign_holds"], rp["verdict_holds"]) == (not rp["sign_flipped_by"], not rp["verdict_flipped_by"])
    n = r["n_in_summary"]
    (rp,) = r["pairs"]
    # table: the holds column, the flips and the flavors not counted
    rows = table_rows(out["table"])
    (row,) = [x for x in rows if len(x) > 6 and x[:2] == ["a", "b"]]
    assert row[-2:] == [f"{n - len(rp['sign_flipped_by'])}/{n}", f"{n - len(rp['verdict_flipped_by'])}/{n}"]
    text = flat(out["table"])
    assert f"flavor robustness over {n} flavors" in text
    for what in ("sign", "verdict"):
        flips = rp[f"{what}_flipped_by"]
        shown = "; ".join(flips[:3]) + (f"; and {len(flips) - 3} more" if len(flips) > 3 else "")
        assert (f"{what} flipped by {len(flips)}: {shown}" if flips else f"{what} holds") in text
    for e in r["excluded"]:
        assert f"not counted (--include-defects counts it) {e['label']}: {e['reason']}" in text
    # CSV: the robustness columns after note, on every row of the pair
    rows = csv_rows(out["csv"])
    assert rows[0][rows[0].index("note") + 1:] == ["flavors_counted", "sign_holds", "verdict_holds", "sign_flipped_by",
                                                   "verdict_flipped_by", "flavors_excluded"]
    for x in rows[1:]:
        c = dict(zip(rows[0], x, strict=True))
        assert (int(c["flavors_counted"]), c["sign_holds"], c["verdict_holds"]) == (
            n, str(rp["sign_holds"]), str(rp["verdict_holds"]))
        assert c["sign_flipped_by"].split("; ") == rp["sign_flipped_by"] or not rp["sign_flipped_by"]
        assert c["verdict_flipped_by"] == "; ".join(rp["verdict_flipped_by"])
        assert c["flavors_excluded"] == " | ".join(f"{e['label']}: {e['reason']}" for e in r["excluded"])
    # Markdown and LaTeX: the caption counts the flavors and names those left out, with the reason
    for fmt in ("md", "latex"):
        caption = flat(out[fmt]).replace("\\", "").replace("dagger", "")
        assert f"does not hold in every flavor counted ({m['name']}: {n})" in caption, fmt
        for e in r["excluded"]:
            assert flat(f"{e['label']}: {e['reason']}") in caption, fmt
    # HTML report: the column over the counted flavors, each pair's flips, the list of those left out
    cells, texts = html_parts(page, "sig-table")
    assert texts["r-counted"] == [str(n)]
    robust = ("holds in every flavor" if rp["sign_holds"] and rp["verdict_holds"] else
              ("" if rp["sign_holds"] else "sign flipped by: " + "; ".join(rp["sign_flipped_by"]))
              + ("" if rp["verdict_holds"] else "verdict flipped by: " + "; ".join(rp["verdict_flipped_by"])))
    assert cells[-1][-1] == flat(robust)
    assert list(zip(texts.get("x-label", []), texts.get("x-reason", []), strict=True)) == [
        (flat(e["label"]), flat(e["reason"])) for e in r["excluded"]]
    return data


def test_compare_grid_formats_agree_and_leave_the_defect_out_alike(toy: Path) -> None:
    for name, text in (("fq.txt", FLIP_QRELS), ("S.run", FLIP_S), ("T.run", FLIP_T)):
        Path(name).write_text(text)
    base_diff = _by_hand(FLIP_QRELS, FLIP_T, False) - _by_hand(FLIP_QRELS, FLIP_S, False)
    spark_diff = _by_hand(FLIP_QRELS, FLIP_T, True) - _by_hand(FLIP_QRELS, FLIP_S, True)
    assert base_diff < 0 < spark_diff  # the data: spark_triples flips the sign
    formats = ("json", "csv", "table", "md", "latex")
    args = ["compare", "fq.txt", "S.run", "T.run", "--resamples", "200", "--flavors", "grid"]
    found = {}
    for extra in ([], ["--include-defects"]):
        out = outputs([*args, *extra, "--html", "page.html"], formats)
        found[bool(extra)] = _robust_agrees(out, Path("page.html").read_text())
    default, included = (found[x]["measures"][0] for x in (False, True))
    assert default["pairs"][0]["delta"] == pytest.approx(base_diff, abs=1e-12)
    (excluded,) = default["robustness"]["excluded"]
    assert excluded["presets"] == ["spark_triples"] and "never sorted" in excluded["reason"]
    spark = next(f for f in default["robustness"]["flavors"] if f["label"] == excluded["label"])
    assert spark["deltas"] == [pytest.approx(spark_diff, abs=1e-12)] and spark["in_summary"] is False
    assert excluded["label"] not in default["robustness"]["pairs"][0]["sign_flipped_by"]
    # --include-defects counts it: the same flips plus spark_triples'
    assert included["robustness"]["include_defects"] is True and included["robustness"]["excluded"] == []
    assert included["robustness"]["n_in_summary"] == default["robustness"]["n_in_summary"] + 1
    assert set(included["robustness"]["pairs"][0]["sign_flipped_by"]) == {
        *default["robustness"]["pairs"][0]["sign_flipped_by"], excluded["label"]}
