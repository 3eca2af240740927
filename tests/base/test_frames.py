"""DataFrames of the result objects (rankflavor.base.frames): each table equals what an independent
renderer of the same result writes (eval's CSV, the JSON of spread/compare/judgments, history's
CSV), rows come in a fixed order whatever the order of the input lines, and pandas/polars are
optional extras named when missing."""

from __future__ import annotations

import csv
import io
import json
import math
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest
from click.testing import CliRunner

import rankflavor as rf
from rankflavor.cli.main import cli
from rankflavor.engine.results import RESULTS_COLUMNS
from rankflavor.errors import UsageError
from rankflavor.render.csvfmt import COLUMNS as CSV_COLUMNS

from ..conftest import shared_path

DL19_MEASURES = ["ndcg@10", "map", "P@10", "recall@100", "ndcg@10[gain=exp2]", "num_rel_ret", "relstring@5",
                 "ndcg@10[empty=nan]"]


def _same_number(a: Any, b: Any) -> bool:
    if a is None or (isinstance(a, float) and math.isnan(a)):
        return b is None or (isinstance(b, float) and math.isnan(b))
    return a == b


def _csv_rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def _assert_frame_is_csv(frame: pd.DataFrame, text: str) -> None:
    """Row for row, number for number: each CSV cell read back as the writer meant it."""
    rows = _csv_rows(text)
    assert tuple(frame.columns[: len(CSV_COLUMNS)]) == CSV_COLUMNS
    assert len(frame) == len(rows)
    for (_, got), want in zip(frame.iterrows(), rows, strict=True):
        for col in ("metric", "query", "flavor", "status"):
            assert got[col] == want[col], (col, got[col], want[col])
        if want["status"] != "summary" and want["metric"].startswith("relstring"):
            assert got["text_value"] == want["value"] and pd.isna(got["value"])
        elif want["value"] == "":
            assert pd.isna(got["value"])
        else:
            assert _same_number(float(got["value"]), float(want["value"])), (got["value"], want["value"])
        for col in ("n_queries", "skipped_empty", "skipped_missing"):
            assert (pd.isna(got[col]) if want[col] == "" else int(got[col]) == int(want[col])), col


@pytest.mark.parametrize("per_query", [False, True])
def test_to_pandas_of_dl19_is_the_cli_csv_row_for_row(per_query: bool) -> None:
    qrels = shared_path("qrels", "qrels.dl19-passage.txt")
    run = shared_path("runs", "rankllm.dl19.bm25.top100.run")
    args = ["eval", str(qrels), str(run), "--format", "csv", *(["-q"] if per_query else [])]
    for m in DL19_MEASURES:
        args += ["-m", m]
    out = CliRunner().invoke(cli, args)
    assert out.exit_code == 0, out.output
    frame = rf.evaluate(str(qrels), str(run), DL19_MEASURES).to_pandas(per_query=per_query)
    _assert_frame_is_csv(frame, out.stdout)
    assert len(frame) == (8 * 44 if per_query else 8)  # 43 judged queries and the ``all`` row per measure
    # BM25's NDCG@10 on DL19 (issue 36 and every DL19 paper: 0.5058)
    assert round(float(frame[(frame.metric == "ndcg@10") & (frame["query"] == "all")].value.iloc[0]), 4) == 0.5058


def test_hand_worked_case_and_rows_independent_of_line_order() -> None:
    qrels = "q1 0 a 1\nq1 0 b 0\nq2 0 c 2\nq10 0 d 1\n"
    lines = ["q1 Q0 a 1 2.0 r", "q1 Q0 x 2 1.0 r", "q10 Q0 d 1 5.0 r", "q3 Q0 z 1 1.0 r"]
    frames = []
    for seed in range(3):
        random.Random(seed).shuffle(lines)
        res = rf.evaluate(_tmp("q", qrels),
                          _tmp(f"r{seed}", "\n".join(lines) + "\n"), ["P@1", "ndcg@2"])
        frames.append(res.to_pandas(per_query=True))
    for f in frames[1:]:
        pd.testing.assert_frame_equal(f, frames[0])
    f = frames[0]
    # byte order of query ids: "q1" < "q10" < "q2"; each measure's queries then its "all" row
    assert list(f["query"]) == ["q1", "q10", "q2", "all"] * 2
    # by hand: P@1 is 1, 1, 0 (q2 missing from the run: zero); NDCG@2 of q1 = 1 (a relevant at rank 1)
    assert list(f.value[:4]) == [1.0, 1.0, 0.0, 2 / 3]
    assert list(f.status[:4]) == ["ok", "ok", "missing", "summary"]
    assert f.n_queries.iloc[3] == 3 and pd.isna(f.n_queries.iloc[0])


_TMP: dict[str, Path] = {}


def _tmp(name: str, text: str) -> str:
    import tempfile

    d = _TMP.setdefault("dir", Path(tempfile.mkdtemp()))
    p = d / f"{name}.txt"
    p.write_text(text)
    return str(p)


def test_arrow_polars_and_pandas_hold_the_same_table() -> None:
    res = rf.evaluate({"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": {"a": 1.0, "b": 0.5}}, ["ndcg@3", "relstring@2"])
    table = res.to_arrow(per_query=True)
    assert table.column_names == list(RESULTS_COLUMNS)
    assert table.schema.field("value").type == pa.float64()
    assert table.schema.field("n_queries").type == pa.int64()
    assert res.to_polars(per_query=True).to_arrow().to_pylist() == table.to_pylist()
    assert res.to_pandas(per_query=True)["query"].tolist() == table.column("query").to_pylist()
    assert table.to_pylist()[3]["text_value"] == "1-"  # relstring of q1 (a relevant, b unjudged)


def test_missing_extra_is_named() -> None:
    """With pandas and polars not importable, to_arrow still works and the others name the extra."""
    code = ("import sys\n"
            "class Gone:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name.split('.')[0] in ('pandas', 'polars'):\n"
            "            raise ModuleNotFoundError(name)\n"
            "sys.meta_path.insert(0, Gone())\n"
            "import rankflavor as rf\n"
            "r = rf.evaluate({'q': {'a': 1}}, {'q': {'a': 1.0}}, ['P@1'])\n"
            "assert r.to_arrow().num_rows == 1\n"
            "for f in (r.to_polars, r.to_pandas):\n"
            "    try:\n        f()\n    except rf.UsageError as e:\n        print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "pip install rankflavor[polars]" in out.stdout and "pip install rankflavor[pandas]" in out.stdout


def test_per_query_frame_round_trips_through_the_readers(tmp_path: Path) -> None:
    """A per-query frame written by pandas reads back through rankflavor's per-query reader
    (identify's: CSV ``query,value``) and through pyarrow's Parquet reader unchanged."""
    from rankflavor.analysis.identify.perquery import read_per_query

    res = rf.evaluate({"q1": {"a": 1, "b": 2}, "q2": {"c": 1}, "q3": {"d": 1}},
                      {"q1": {"b": 0.2, "a": 0.9, "x": 0.5}, "q2": {"c": 0.1}, "q3": {"y": 1.0}}, ["ndcg@3", "P@2"])
    frame = res.to_pandas(per_query=True)
    ndcg = frame[(frame.metric == "ndcg@3") & (frame["query"] != "all")]
    path = tmp_path / "ndcg.csv"
    ndcg[["query", "value"]].to_csv(path, index=False)
    back = read_per_query(path)
    assert back.queries == tuple(ndcg["query"]) and back.values.tolist() == ndcg.value.tolist()
    assert back.values.tolist() == [float(v) for v in res["ndcg@3"].values]
    parquet = tmp_path / "frame.parquet"
    frame.to_parquet(parquet, index=False)
    pd.testing.assert_frame_equal(pd.read_parquet(parquet, dtype_backend="numpy_nullable")[["value"]],
                                  frame[["value"]].astype("Float64"))
    assert pd.read_parquet(parquet)["flavor"].tolist() == frame["flavor"].tolist()


QRELS = {"q1": {"a": 2, "b": 1, "c": 0}, "q2": {"d": 1, "e": 1}, "q3": {"f": 2}}
RUNS = {"A": {"q1": {"a": 0.9, "b": 0.8, "u": 0.7}, "q2": {"d": 0.9, "v": 0.5}, "q3": {"w": 0.9, "f": 0.1}},
        "B": {"q1": {"u": 0.9, "b": 0.8, "a": 0.7}, "q2": {"e": 0.9, "d": 0.5}, "q3": {"f": 0.9}}}


def test_spread_frame_is_its_json() -> None:
    s = rf.spread(QRELS, RUNS, "ndcg@3", grid={"gain": ["linear", "exp2"]}, presets=["trec_eval"])
    frame = s.to_pandas()
    doc = json.loads(json.dumps(s.to_dict()))
    want = [(run, f["flavor"], f["mean"][run], f["n_queries"][run], f["in_summary"])
            for run in doc["runs"] for f in doc["flavors"]]
    got = list(zip(frame.run, frame.flavor, frame.value, frame.n_queries, frame.in_summary, strict=True))
    assert [(r, fl, _nan_none(v), int(n), bool(i)) for r, fl, v, n, i in got] == want
    assert set(frame["query"]) == {"all"} and frame.metric.iloc[0] == "ndcg@3"
    with pytest.raises(UsageError, match="per-query"):
        s.to_pandas(per_query=True)


def _nan_none(v: float) -> float | None:
    return None if math.isnan(v) else float(v)


def test_comparison_frame_is_its_json() -> None:
    c = rf.compare(QRELS, RUNS, ["ndcg@3", "P@2"], n_resamples=200)
    doc = c.to_dict()
    frame = c.to_pandas(per_query=True)
    summary = frame[frame["query"] == "all"]
    want = [(s["name"], m["name"], m["flavor"], s["mean"], s["ci"][0], s["ci"][1], m["n"])
            for m in doc["measures"] for s in m["systems"]]
    assert [tuple(r) for r in summary[["run", "metric", "flavor", "value", "ci_low", "ci_high", "n_queries"]]
            .itertuples(index=False)] == want
    for m in doc["measures"]:
        for s in m["systems"]:
            mine = frame[(frame.run == s["name"]) & (frame.flavor == m["flavor"]) & (frame["query"] != "all")]
            assert dict(zip(mine["query"], mine.value, strict=True)) == dict(
                zip(m["per_query"]["queries"], m["per_query"]["values"][s["name"]], strict=True))
            assert list(mine["query"]) == sorted(mine["query"], key=lambda q: q.encode())
    assert c.to_polars().height == len(summary)


def test_coverage_and_bounds_frames_are_their_json() -> None:
    cov = rf.judgments(QRELS, RUNS, ["ndcg@3"], scale="trec_dl")
    frame = cov.to_pandas(per_query=True)
    doc = cov.to_dict()
    for r in doc["runs"]:
        mine = frame[frame.run == r["run"]]
        top = mine[mine["query"] == "all"].iloc[0]
        assert top.judged_at_k == r["judged_at_k"] and top.unjudged == r["unjudged_in_top_k"]
        b = r["bounds"][0]
        assert (top.lower, top.value, top.upper, top.condensed) == (b["lower"], b["value"], b["upper"], b["condensed"])
        for q, v in b["per_query"].items():
            row = mine[mine["query"] == q].iloc[0]
            assert (row.lower, row.value, row.upper) == (v["lower"], v["value"], v["upper"])
            assert row.judged_at_k == r["per_query"][q]["judged_at_k"]
        assert bool(top.pool_bias) == (r["run"] in doc["pool_bias"]["runs"])
    one = rf.bounds(QRELS, RUNS["A"], ["ndcg@3"], scale="trec_dl")
    bf = one.to_pandas(per_query=True)
    # the same bounds whether asked of one run or of judgments over several
    same = frame[frame.run == "A"][list(bf.columns)].reset_index(drop=True)
    pd.testing.assert_frame_equal(bf.drop(columns="run"), same.drop(columns="run"))
    assert list(bf["query"]) == ["q1", "q2", "q3", "all"]
    assert bf.iloc[-1].lower == one.to_dict()["measures"][0]["lower"]


def test_history_series_frame_is_the_history_csv(tmp_path: Path) -> None:
    from rankflavor.history.record import record_results
    from rankflavor.history.series import load_series
    from rankflavor.render.historyfmt import render_history

    db = tmp_path / "h.sqlite"
    for run in ("A", "B"):
        record_results(db, rf.evaluate(QRELS, RUNS[run], ["ndcg@3", "P@2"]), dataset="toy", run=run)
    series = load_series(db, "ndcg@3")
    frame = series[0].to_pandas()
    rows = _csv_rows(render_history(series, "csv"))
    assert len(frame) == len(rows) == 2
    for (_, got), want in zip(frame.iterrows(), rows, strict=True):
        assert float(want["value"]) == got.value and want["flavor"] == got.flavor and want["run"] == got.run
    from rankflavor.history.series import series_table

    assert series_table(load_series(db)).num_rows == 4


def test_every_table_names_its_columns_and_defaults_to_the_summary(tmp_path: Path) -> None:
    """The column names, written out here (a renamed column breaks every notebook that reads it),
    and per_query's default: the summary rows only."""
    from rankflavor.history.record import record_results
    from rankflavor.history.series import load_series

    s = rf.spread(QRELS, RUNS, "ndcg@3", grid={"gain": ["linear", "exp2"]}, presets=["trec_eval", "spark_triples"])
    assert s.to_arrow().column_names == ["run", "metric", "flavor", "query", "value", "n_queries", "origins",
                                         "in_summary", "excluded_because", "error"]
    c = rf.compare(QRELS, RUNS, ["ndcg@3"], n_resamples=50)
    assert c.to_arrow().column_names == ["run", "metric", "flavor", "query", "value", "ci_low", "ci_high", "n_queries"]
    bounds_columns = ["run", "metric", "flavor", "query", "lower", "value", "upper", "condensed", "residual", "status"]
    b = rf.bounds(QRELS, RUNS["A"], ["ndcg@3", "RBP@3"], scale="trec_dl")
    assert b.to_arrow().column_names == bounds_columns
    cov = rf.judgments(QRELS, RUNS, ["ndcg@3"], scale="trec_dl")
    assert cov.to_arrow().column_names == [*bounds_columns, "k", "judged_at_k", "unjudged", "pool_bias"]
    db = tmp_path / "h.sqlite"
    record_results(db, rf.evaluate(QRELS, RUNS["A"], ["ndcg@3"]), dataset="toy", run="A")
    series = load_series(db, "ndcg@3")[0]
    assert series.to_arrow().column_names == ["dataset", "run", "metric", "flavor", "query", "value", "n_queries",
                                              "record", "recorded_at", "command", "rankflavor"]
    assert series.to_pandas().rankflavor.iloc[0] == rf.__version__
    for table in (s, c, b, cov, series):
        assert set(table.to_arrow()["query"].to_pylist()) == {"all"}
    # the summary-only objects say why, and what to call
    for obj, what, why in ((s, "a spread", "it keeps each flavor's mean; evaluate() one flavor for its per-query values"),
                           (series, "a history series", "it keeps each record's mean; rankflavor.history.load_record(path, "
                                                        "id) has a record's per-query values")):
        with pytest.raises(UsageError) as err:
            obj.to_arrow(per_query=True)
        assert str(err.value) == f"{what} holds no per-query values ({why}); call to_arrow/to_pandas/to_polars with " \
                                 "per_query=False"
    # the run and cutoff columns hold the result's own
    assert set(b.to_arrow(per_query=True)["run"].to_pylist()) == {b.run}
    assert set(cov.to_arrow(per_query=True)["k"].to_pylist()) == {3}


def test_spread_rows_carry_the_defect_and_bounds_rows_every_measure_with_its_residual() -> None:
    s = rf.spread(QRELS, RUNS, "ndcg@3", grid={"gain": ["linear"]}, presets=["trec_eval", "spark_triples"])
    doc = s.to_dict()
    frame = s.to_pandas()
    for f in doc["flavors"]:
        rows = frame[frame.flavor == f["flavor"]]
        assert list(rows.in_summary) == [f["in_summary"]] * 2
        assert [None if pd.isna(x) else x for x in rows.excluded_because] == (
            [None] * 2 if f["in_summary"] else [f["defect"]] * 2)
        assert list(rows.origins) == [", ".join(f["origins"])] * 2
    assert not frame.in_summary.all() and frame.error.isna().all()
    b = rf.bounds(QRELS, RUNS["A"], ["ndcg@3", "RBP@3"], scale="trec_dl")
    d = b.to_dict()
    per = b.to_pandas(per_query=True)
    assert list(per.metric.unique()) == ["ndcg@3", "RBP@3"]  # every measure, in the order asked
    for m in d["measures"]:
        mine = per[per.flavor == m["measure"]]
        assert list(mine["query"]) == [*sorted(m["per_query"], key=str.encode), "all"]
        for q, v in m["per_query"].items():
            row = mine[mine["query"] == q].iloc[0]
            assert (row.status, _nan_none(row.residual)) == ("ok", v.get("residual"))
        assert mine.iloc[-1].status == "summary" and _nan_none(mine.iloc[-1].residual) == m.get("residual")
    assert per[per.metric == "RBP@3"].residual.notna().all() and per[per.metric == "ndcg@3"].residual.isna().all()


def test_a_flavor_that_fails_on_a_run_names_its_error_in_that_row() -> None:
    """empty=error refuses run A, which alone retrieves for q4, a query with nothing relevant: that
    row's error column holds the refusal, every other row's is empty."""
    qrels = {**QRELS, "q4": {"z": 0}}
    runs = {"A": {**RUNS["A"], "q4": {"z": 1.0}}, "B": RUNS["B"]}
    s = rf.spread(qrels, runs, "ndcg@3", grid={"empty": ["zero", "error"]}, presets=[])
    frame = s.to_pandas()
    failed = frame[frame.error.notna()]
    assert [(r.run, r.flavor.endswith("empty=error]")) for r in failed.itertuples()] == [("A", True)]
    assert failed.error.iloc[0] == "1 query(ies) have nothing relevant (q4) and ndcg@3 says empty=error; choose " \
                                   "empty=zero|one|nan|skip"


def test_coverage_frame_carries_the_bounds_on_the_base_labels_alone(tmp_path: Path) -> None:
    """Judgments mixing people's and an LLM's labels: the frame's summary rows carry the bounds on
    the human labels alone beside those with the fill, as the JSON's ``filled`` does."""
    import math

    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 2 human:nist\nq1 0 d2 1 llm:m\nq1 0 d3 0 human:nist\n")
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d2 1 3.0 r\nq1 Q0 d1 2 2.0 r\nq1 Q0 d3 3 1.0 r\n")
    cov = rf.judgments(str(qrels), {"r": str(run)}, ["ndcg@3"], scale="trec_dl")
    frame = cov.to_pandas(per_query=True)
    top = frame[frame["query"] == "all"].iloc[0]
    # people alone leave d2 (ranked first) a hole graded 0..3: hole 0 gives (2/log2 3) / 2, hole 3
    # gives 1; with the LLM's 1 it is a point, (1 + 2/log2 3) / (2 + 1/log2 3)
    l3 = math.log2(3)
    assert top.base_kind == "human"
    assert (top.base_lower, top.base_upper) == (pytest.approx(1 / l3), pytest.approx(1.0))
    assert (int(top.base_unjudged), int(top.base_queries), int(top.unjudged)) == (1, 1, 0)
    assert top.lower == pytest.approx((1 + 2 / l3) / (2 + 1 / l3)) == top.upper
    per = frame[frame["query"] != "all"]
    assert per[["base_kind", "base_lower", "base_upper", "base_unjudged", "base_queries"]].isna().all().all()
    (m,) = cov.to_dict()["filled"]["runs"][0]["measures"]  # the frame is the JSON
    assert (top.base_lower, top.base_upper) == (m["before"]["lower"], m["before"]["upper"])
    # one kind: no base columns, the frame as before
    alone = tmp_path / "alone.txt"
    alone.write_text("q1 0 d1 2 human:nist\nq1 0 d3 0 human:nist\n")
    plain = rf.judgments(str(alone), {"r": str(run)}, ["ndcg@3"], scale="trec_dl").to_arrow()
    assert not any(c.startswith("base_") for c in plain.column_names)
