"""The history database (issue 19, item 5): a real SQLite file in WAL mode, one transaction per
record; concurrent writers and a writer killed mid-record (real processes) lose nothing and leave
the file readable; ids are untrusted text; ``history`` splits a measure's points per flavor and
says why.

Stored values are checked against the evaluation's own results (a storage round trip), and the
input hashes against ``hashlib`` and, where installed, the ``sha256sum`` tool.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from rankflavor import evaluate
from rankflavor.cli.main import cli
from rankflavor.errors import UsageError
from rankflavor.history import HistoryError, load_record, load_series, record_results, split_reasons
from rankflavor.render.chart import line_chart
from rankflavor.render.historyfmt import render_history

from ..conftest import shared_path

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _files(tmp_path: Path, seed: int = 0, n_q: int = 8) -> tuple[Path, Path]:
    """A small graded qrels file and a run over it, random but seeded."""
    rng = np.random.default_rng(seed)
    q_lines, r_lines = [], []
    for q in range(n_q):
        for d in range(6):
            q_lines.append(f"q{q} 0 d{d} {rng.integers(0, 4)}")
        for rank, d in enumerate(rng.permutation(9)):
            r_lines.append(f"q{q} Q0 d{d} {rank + 1} {20 - rank} sys{seed}")
    qrels, run = tmp_path / f"qrels{seed}.txt", tmp_path / f"run{seed}.txt"
    qrels.write_text("\n".join(q_lines) + "\n")
    run.write_text("\n".join(r_lines) + "\n")
    return qrels, run


def test_record_round_trip_is_a_real_wal_sqlite_file(tmp_path: Path) -> None:
    qrels, run = _files(tmp_path)
    res = evaluate(str(qrels), str(run), ["ndcg@5", "ndcg@5[gain=exp2]", "P@3"])
    db = tmp_path / "h.sqlite"
    rid = record_results(db, res, dataset="toy", command="rankflavor eval ...")
    assert rid == 1
    assert db.read_bytes()[:16] == b"SQLite format 3\x00"  # the file format's own header
    raw = sqlite3.connect(db)
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert raw.execute("SELECT version FROM schema_version").fetchall() == [(1,)]
    assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    raw.close()
    rec = load_record(db, rid)
    assert (rec["dataset"], rec["run"], rec["command"]) == ("toy", run.name, "rankflavor eval ...")
    assert rec["rankflavor"] == res.provenance["rankflavor"]
    assert [m["flavor"] for m in rec["measures"]] == [str(m.measure) for m in res]
    for stored, m in zip(rec["measures"], res, strict=True):
        assert stored["value"] == m.mean and stored["n_queries"] == m.n_queries
        assert stored["per_query"] == m.per_query()


def test_input_hashes_are_the_files_sha256(tmp_path: Path) -> None:
    qrels, run = _files(tmp_path)
    db = tmp_path / "h.sqlite"
    rid = record_results(db, evaluate(str(qrels), str(run), ["ndcg@5"]))
    inputs = load_record(db, rid)["inputs"]
    for role, path in (("qrels", qrels), ("run", run)):
        assert inputs[role]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
        if shutil.which("sha256sum"):
            out = subprocess.run(["sha256sum", str(path)], capture_output=True, text=True, check=True).stdout
            assert inputs[role]["sha256"] == out.split()[0]
    # a hash the caller gives wins; a file changed since the evaluation is not hashed as if unchanged
    res = evaluate(str(qrels), str(run), ["ndcg@5"])
    run.write_text(run.read_text() + "q0 Q0 dx 99 -1 sys0\n")
    rid = record_results(db, res, hashes={"qrels": "f" * 64})
    inputs = load_record(db, rid)["inputs"]
    assert inputs["qrels"] == {"source": str(qrels), "sha256": "f" * 64, "how": "given by the caller"}
    assert inputs["run"]["sha256"] is None and "changed size" in inputs["run"]["how"]


NASTY = ["'; DROP TABLE records; --", 'q"1', "q\n2", "Ünïcødé ☃", "a' OR '1'='1", "%_*"]


def test_ids_and_names_are_untrusted_text(tmp_path: Path) -> None:
    qrels = {q: {"d'1": 1, 'd"2': 0} for q in NASTY}
    run = {q: {"d'1": 0.3, 'd"2': 0.9} for q in NASTY}
    res = evaluate(qrels, run, ["P@1"])
    db = tmp_path / "h.sqlite"
    rid = record_results(db, res, dataset=NASTY[0], run=NASTY[4], command=NASTY[2])
    rec = load_record(db, rid)
    assert (rec["dataset"], rec["run"], rec["command"]) == (NASTY[0], NASTY[4], NASTY[2])
    assert set(rec["measures"][0]["per_query"]) == set(NASTY)
    (series,) = load_series(db, "P@1", dataset=NASTY[0])
    assert [p.run for p in series.points] == [NASTY[4]]
    # in the terminal table: rich markup is text, and control characters cannot reach the terminal
    record_results(db, res, dataset="[bold]d[/bold]", run="ev\x1b[31mil")
    table = render_history(load_series(db, "P@1"), width=160)
    assert "[bold]d[/bold]" in table and "'; DROP TABLE records; --" in table
    assert "\x1b" not in table and "ev\\x1b[31mil" in table
    with pytest.raises(UsageError, match="recorded datasets"):
        load_series(db, "P@1", dataset=NASTY[4])
    with pytest.raises(UsageError, match="recorded measures: P@1"):
        load_series(db, NASTY[0])


_WRITER = textwrap.dedent("""
    import os, sys, time
    from rankflavor.history import record_results
    db, name, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    open(db + "." + name + ".ready", "w").close()  # start together: each waits for the other
    while not all(os.path.exists(db + "." + w + ".ready") for w in "ab"):
        time.sleep(0.005)
    for i in range(n):
        per_query = [{"query": f"q{j}", "value": (i * 1000 + j) / 1e6, "status": "ok"} for j in range(50)]
        results = {"measures": [{"flavor": "P@10[rel=1]", "metric": "P", "k": 10, "value": i / n,
                                 "n_queries": 50, "per_query": per_query}],
                   "provenance": {"rankflavor": "test"}}
        record_results(db, results, dataset="d", run=f"{name}-{i}", hashes={"qrels": "0" * 64})
""")


def _python(code: str, *args: str, **kw: object) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": SRC}
    return subprocess.Popen([sys.executable, "-c", code, *args], env=env, text=True, **kw)  # type: ignore[call-overload]


def test_two_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    db, n = str(tmp_path / "h.sqlite"), 150
    writers = [_python(_WRITER, db, name, str(n), stderr=subprocess.PIPE) for name in ("a", "b")]
    for w in writers:
        _, err = w.communicate(timeout=300)
        assert w.returncode == 0, err
    raw = sqlite3.connect(db)
    assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    runs = [r[0] for r in raw.execute("SELECT run FROM records ORDER BY id")]
    assert sorted(runs) == sorted(f"{w}-{i}" for w in "ab" for i in range(n))
    # each writer's records in its own order; every record complete (one measure, 50 queries)
    for w in "ab":
        assert [r for r in runs if r.startswith(w)] == [f"{w}-{i}" for i in range(n)]
    # the writers ran at the same time: each began a record (its time is taken before it waits for
    # the lock) while the other was still writing; the test exercised concurrent appends
    spans = {w: [t for (t,) in raw.execute("SELECT recorded_at FROM records WHERE run LIKE ? ORDER BY id", (f"{w}-%",))]
             for w in "ab"}
    assert spans["a"][0] < spans["b"][-1] and spans["b"][0] < spans["a"][-1]
    assert raw.execute("SELECT COUNT(*) FROM measures").fetchone()[0] == 2 * n
    assert raw.execute("SELECT COUNT(*) FROM per_query").fetchone()[0] == 2 * n * 50
    counts = raw.execute("SELECT m.record_id, COUNT(*) FROM per_query p JOIN measures m ON m.id = p.measure_id "
                         "GROUP BY m.record_id").fetchall()
    assert {c for _, c in counts} == {50}
    raw.close()


_KILLED = textwrap.dedent("""
    import sys, time
    from rankflavor.history import record_results
    db = sys.argv[1]
    def results(rows):
        return {"measures": [{"flavor": "P@10[rel=1]", "metric": "P", "k": 10, "value": 0.5, "n_queries": 3,
                              "per_query": rows}], "provenance": {"rankflavor": "test"}}
    for i in range(3):
        record_results(db, results([{"query": f"q{j}", "value": j / 10, "status": "ok"} for j in range(3)]),
                       run=f"early-{i}")

    class Stalls(list):
        # per-query rows that stop half-way, inside the record's transaction, until killed
        def __iter__(self):
            for j in range(100_000):
                if j == 50_000:
                    print("inside", flush=True)
                    time.sleep(600)
                yield {"query": f"big{j}", "value": 0.0, "status": "ok"}
    record_results(db, results(Stalls([None])), run="killed")
""")


def test_a_writer_meeting_another_writers_first_moments_records(tmp_path: Path) -> None:
    """What a second writer sees while the first has set WAL but not yet committed the schema: a
    SQLite file with no table. It is a fresh history, not another program's file (the race that
    made test_two_concurrent_writers_lose_nothing fail now and then)."""
    db = tmp_path / "h.sqlite"
    first = sqlite3.connect(db)
    assert first.execute("PRAGMA journal_mode = WAL").fetchone()[0] == "wal"
    first.close()
    assert db.stat().st_size > 0  # not an empty file: the old check called it "not a rankflavor history"
    rid = record_results(db, evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["P@10"]), dataset="toy")
    assert rid == 1 and load_record(db, rid)["dataset"] == "toy"


def test_writer_killed_mid_record_leaves_earlier_records(tmp_path: Path) -> None:
    db = str(tmp_path / "h.sqlite")
    child = _python(_KILLED, db, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
        assert line.strip() == "inside", child.stderr.read() if child.stderr else ""
        # while the writer holds its transaction open, a reader sees the committed records (WAL)
        (series,) = load_series(db, "P@10")
        assert [p.run for p in series.points] == ["early-0", "early-1", "early-2"]
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == -signal.SIGKILL
    raw = sqlite3.connect(db)
    assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert [r[0] for r in raw.execute("SELECT run FROM records ORDER BY id")] == ["early-0", "early-1", "early-2"]
    assert raw.execute("SELECT COUNT(*) FROM per_query").fetchone()[0] == 9  # nothing of the killed record
    raw.close()
    for i in range(3):
        assert load_record(db, i + 1)["measures"][0]["per_query"] == {"q0": 0.0, "q1": 0.1, "q2": 0.2}
    # and the file takes new records
    res = evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["P@10"])
    assert record_results(db, res, run="after") == 4  # the killed record left no trace, not even its id


def test_not_a_history_is_an_input_error(tmp_path: Path) -> None:
    missing = tmp_path / "none.sqlite"
    with pytest.raises(HistoryError, match=r"none\.sqlite: no history file"):
        load_series(missing)
    junk = tmp_path / "junk.sqlite"
    junk.write_text("query Q0 doc 1 1 tag\n" * 200)
    with pytest.raises(HistoryError, match=r"junk\.sqlite: not a usable history"):
        record_results(junk, evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["P@10"]))
    other = tmp_path / "other.sqlite"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    with pytest.raises(HistoryError, match="not a rankflavor history"):
        load_series(other)
    newer = tmp_path / "newer.sqlite"
    record_results(newer, evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["P@10"]))
    with sqlite3.connect(newer) as c:
        c.execute("UPDATE schema_version SET version = 99")
    with pytest.raises(HistoryError, match="schema 99"):
        load_series(newer)
    result = CliRunner().invoke(cli, ["history", "--history-db", str(junk)])
    assert result.exit_code == 3 and "junk.sqlite" in result.output


def test_series_split_per_flavor_and_dataset(tmp_path: Path) -> None:
    db = tmp_path / "h.sqlite"
    qrels, run = _files(tmp_path)
    for flavor in ("ndcg@5", "ndcg@5", "ndcg@5[gain=exp2,ideal=local]"):
        record_results(db, evaluate(str(qrels), str(run), [flavor]), dataset="a")
    record_results(db, evaluate(str(qrels), str(run), ["ndcg@5"]), dataset="b")
    series = load_series(db, "ndcg@5")
    assert [(s.dataset, len(s.points)) for s in series] == [("a", 2), ("a", 1), ("b", 1)]
    assert len({s.flavor for s in series}) == 2
    reasons = " ".join(split_reasons(series))
    assert "2 flavors" in reasons and "gain: linear | exp2" in reasons and "ideal: global | local" in reasons
    assert "2 datasets" in reasons
    # an exact flavor string selects its own series only
    (only,) = load_series(db, "ndcg@5[ideal=local,gain=exp2]")
    assert only.flavor == series[1].flavor
    # one flavor, one dataset: nothing to explain
    assert split_reasons(load_series(db, "ndcg@5[gain=linear]", dataset="a")) == []


def test_chart_never_joins_points_of_two_lines() -> None:
    joined = line_chart([("*", [(1, 0.1), (2, 0.9)])], width=40, height=6)
    assert any("." in row.split("|", 1)[1] for row in joined[:6])
    apart = line_chart([("*", [(1, 0.1)]), ("o", [(2, 0.9)])], width=40, height=6)
    plot = "".join(row.split("|", 1)[1] for row in apart[:6])
    assert "." not in plot and plot.count("*") == 1 and plot.count("o") == 1
    nan = line_chart([("*", [(1, math.nan)])], width=40)
    assert nan == ["(no value to draw)"]


@pytest.mark.parametrize("width", [50, 80, 140])
def test_table_fits_the_width(tmp_path: Path, width: int) -> None:
    db = tmp_path / "h.sqlite"
    qrels, run = _files(tmp_path)
    for flavor in ("ndcg@5", "ndcg@5[gain=exp2]", "ndcg@5"):
        record_results(db, evaluate(str(qrels), str(run), [flavor]))
    text = render_history(load_series(db, "ndcg@5"), width=width)
    assert max(len(line) for line in text.splitlines()) <= width
    assert "each flavor gets its own line" in " ".join(text.split())


def test_cli_eval_record_then_history(tmp_path: Path) -> None:
    runner = CliRunner()
    db = str(tmp_path / "h.sqlite")
    qrels, _ = _files(tmp_path)
    runs = [_files(tmp_path / str(s), s)[1] for s in (1, 2) if (tmp_path / str(s)).mkdir() is None]
    direct = []
    for run, flavor in ((runs[0], "ndcg@5"), (runs[1], "ndcg@5"), (runs[1], "ndcg@5[gain=exp2]")):
        out = runner.invoke(cli, ["eval", str(qrels), str(run), "-m", flavor, "--format", "json", "--record",
                                  "--history-db", db])
        assert out.exit_code == 0, out.output
        direct.append(json.loads(out.stdout)["measures"][0])
    assert "recorded as record 3" in out.stderr
    out = runner.invoke(cli, ["history", "-m", "ndcg@5", "--history-db", db, "--format", "json"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    got = [(p["flavor"], p["value"], p["run"]) for s in doc["series"] for p in s["points"]]
    assert got == [(d["flavor"], d["value"], r.name) for d, r in zip(direct[:2], runs, strict=True)] + [
        (direct[2]["flavor"], direct[2]["value"], runs[1].name)]
    assert any("2 flavors" in n for n in doc["notes"])
    out = runner.invoke(cli, ["history", "-m", "ndcg@5", "--history-db", db, "--format", "csv"])
    assert out.stdout.splitlines()[0].startswith("record,recorded_at,dataset,run,line,name,flavor,value")
    assert len(out.stdout.splitlines()) == 4
    out = runner.invoke(cli, ["history", "-m", "ndcg@5", "--history-db", db])
    assert out.exit_code == 0 and "they differ in gain: linear | exp2" in " ".join(out.stdout.split())
    out = runner.invoke(cli, ["history", "-m", "AP", "--history-db", db])
    assert out.exit_code == 2 and "recorded measures: ndcg@5" in out.output


def test_real_data_record(tmp_path: Path) -> None:
    qrels = shared_path("qrels", "qrels.dl19-passage.txt")
    run = shared_path("runs", "rankllm.dl19.bm25.top100.run")
    db = tmp_path / "h.sqlite"
    res = evaluate(str(qrels), str(run), ["ndcg@10", "AP@100"])
    rid = record_results(db, res, dataset="dl19")
    rec = load_record(db, rid)
    assert rec["inputs"]["qrels"]["sha256"] == hashlib.sha256(qrels.read_bytes()).hexdigest()
    assert [len(m["per_query"]) for m in rec["measures"]] == [43, 43]
    assert rec["measures"][0]["per_query"] == res[0].per_query()
