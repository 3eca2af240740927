"""``rankflavor check``: each finding on a small hand-made file (file:line and counts), exit codes,
the JSON shape, crafted ids, the real data (numbers derived from the files with plain Python), and
random mutations of a valid file (findings, never a traceback)."""

from __future__ import annotations

import gzip
import json
import random
import re
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rankflavor.analysis.check import CheckReport, Severity, check
from rankflavor.cli.main import cli
from rankflavor.errors import InputError
from rankflavor.io.lines import parse_qrels_lines, parse_run_lines
from rankflavor.io.qrels import read_qrels
from rankflavor.io.run import read_run
from rankflavor.io.source import BLANKS
from rankflavor.render.checkfmt import render_check

from ...conftest import shared_path

QRELS = "q1 0 d1 2\nq1 0 d2 0\nq1 0 d3 1\nq2 0 d4 3\nq2 0 d5 0\n"
RUN = ("q1 Q0 d1 1 3.0 t\nq1 Q0 d3 2 2.0 t\nq1 Q0 d9 3 1.0 t\n"
       "q2 Q0 d4 1 5.0 t\nq2 Q0 d5 2 4.0 t\n")


def codes(report: CheckReport, severity: Severity | None = None) -> set[str]:
    return {f.code for f in report.findings if severity is None or f.severity == severity}


def test_clean_pair_exits_0_with_notes(write) -> None:
    report = check(write("q.txt", QRELS), write("r.txt", RUN))
    assert report.exit_code == 0 and report.status == "clean"
    assert codes(report, Severity.ERROR) == codes(report, Severity.WARNING) == set()
    (o,) = report.overlaps
    # 5 run rows, all in judged queries; d9 is the only one not judged
    assert (o.common_queries, o.run_rows, o.rows_in_common, o.judged_rows, o.never_judged_docs) == (2, 5, 5, 4, 1)
    assert report.total("judged_coverage") == 4
    assert [f.message.split(";")[0] for f in report.of("grade_scale")] == ["grades 0: 2, 1: 1, 2: 1, 3: 1"]
    assert "exactly the trec_dl" in report.of("grade_scale")[0].message


def test_every_malformed_line_is_named_with_its_text(write) -> None:
    text = "q1 0 d1 1\nq1 0 d2\n# a comment\nq1 0 d3 x\n\nq1 0 d4 inf\nq1 0 d5 1 extra\nq1 0 d6 0\n"
    path = write("q.txt", text)
    report = check(path)
    bad = report.of("malformed_line")
    assert [(f.file, f.line, f.text) for f in bad] == [
        (str(path), 2, "q1 0 d2"), (str(path), 4, "q1 0 d3 x"), (str(path), 6, "q1 0 d4 inf"),
        (str(path), 7, "q1 0 d5 1 extra")]
    assert "expected 4 whitespace-separated fields 'query iteration doc grade', found 3" in bad[0].message
    assert "not a number" in bad[1].message and "not a finite number" in bad[2].message
    assert report.exit_code == 3
    # the good lines still get the table checks
    (summary,) = report.files
    assert (summary.rows, summary.comments, summary.blank_lines, summary.read) == (2, 1, 1, "lines")


def test_listing_is_capped_and_every_line_counted(write) -> None:
    lines = ["q1 0 d0 1"] + [f"q1 0 d{i}" for i in range(1, 251)]
    report = check(write("q.txt", "\n".join(lines) + "\n"), limit=20)
    bad = report.of("malformed_line")
    assert [f.line for f in bad[:20]] == list(range(2, 22))
    assert bad[20].line is None and bad[20].count == 230
    assert report.total("malformed_line") == 250
    table = render_check(report, width=120)
    assert "240 more (--format json lists them)" in table  # 10 shown in the terminal


def test_invalid_utf8_lines_are_each_named(write, tmp_path: Path) -> None:
    path = tmp_path / "q.txt"
    path.write_bytes(b"q1 0 d1 1\nq1 0 d\xff 1\nq1 0 d3 1\nq\xfe 0 d4 1\n")
    report = check(path)
    assert [(f.line, f.message) for f in report.of("malformed_line")] == [
        (2, "is not valid UTF-8 text"), (4, "is not valid UTF-8 text")]
    assert report.files[0].rows == 2


@pytest.mark.parametrize("text", ["", "\n\n  \n", "# only a comment\n"])
def test_empty_files_are_errors(write, text: str) -> None:
    report = check(write("q.txt", text))
    assert report.exit_code == 3 and codes(report, Severity.ERROR) == {"unreadable"}


def test_missing_file_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    report = check(tmp_path / "nope.txt", [tmp_path / "nope.run"])
    assert [f.code for f in report.findings] == ["unreadable", "unreadable"]
    assert all("file not found" in f.message for f in report.findings)
    assert report.overlaps == ()


def test_duplicates_name_both_lines(write) -> None:
    qrels = write("q.txt", "q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 1\nq1 0 d1 1\nq1 0 d2 2\nq1 0 d1 0\n")
    run = write("r.txt", "q1 Q0 d1 1 3 t\nq1 Q0 d1 2 2 t\nq1 Q0 d2 3 1 t\n")
    report = check(qrels, run)
    dups = report.of("duplicate", str(qrels))
    assert [(f.line, f.other_line) for f in dups] == [(4, 1), (5, 2), (6, 1)]
    assert "with the same" in dups[0].message and "another grade (0 there, 2 here)" in dups[1].message
    assert [(f.line, f.other_line) for f in report.of("duplicate", str(run))] == [(2, 1)]
    assert report.exit_code == 3


def test_grade_scales_found(write) -> None:
    def scale_message(text: str) -> str:
        return check(write("q.txt", text)).of("grade_scale")[0].message

    assert "exactly the msmarco" in scale_message("q1 0 a 1\nq1 0 b 0\n")
    assert "within the trec_dl" in scale_message("q1 0 a 3\nq1 0 b 0\n")  # 0 and 3: trec_dl is the smallest holding 3
    assert "exactly the beir" in scale_message("q1 0 a 2\nq1 0 b 1\nq1 0 c 0\n")
    assert "no named scale holds them" in scale_message("q1 0 a 7\n")
    web = check(write("q.txt", "q1 0 a -2\nq1 0 b 4\nq1 0 c 1\nq1 0 d 0.5\n"))
    assert web.total("negative_grades") == 1 and web.of("negative_grades")[0].line == 1
    assert web.total("fractional_grades") == 1 and web.of("fractional_grades")[0].line == 4
    assert web.exit_code == 0


def test_declared_scale_lists_grades_off_it(write) -> None:
    report = check(write("q.txt", "q1 0 a 1\nq1 0 b 4\nq1 0 c -1\nq1 0 d 5\n"), scale="trec_dl")
    assert [(f.line, f.code) for f in report.of("off_scale")] == [(2, "off_scale"), (4, "off_scale")]
    assert report.exit_code == 3


def test_swapped_files_look_like_each_other(write) -> None:
    qrels, run = write("q.txt", QRELS), write("r.txt", RUN)
    report = check(run, qrels)  # the wrong order
    assert report.total("looks_like_run", str(run)) == 5
    assert report.total("looks_like_qrels", str(qrels)) == 5
    assert report.total("malformed_line", str(run)) == 5 and report.exit_code == 3


def test_scores_as_grades_look_like_a_run(write) -> None:
    text = "".join(f"q1 0 d{i} {i / 7:.4f}\n" for i in range(30))
    report = check(write("q.txt", text))
    assert report.total("looks_like_run") == 30 and report.exit_code == 1


def test_equal_scores_ties_and_ranks(write) -> None:
    run = write("r.txt", "q1 Q0 a 1 1.0 t\nq1 Q0 b 2 1.0 t\nq1 Q0 c 3 1.0 t\n"   # q1: one score
                         "q2 Q0 a 1 2.0 t\nq2 Q0 b 2 3.0 t\nq2 Q0 c 3 1.0 t\n"   # q2: rank 2 scores above rank 1
                         "q3 Q0 a 1 5.0 t\nq3 Q0 b x 4.0 t\nq3 Q0 c 2 4.0 t\n")  # q3: a rank that is no number, a tie
    qrels = write("q.txt", "q1 0 a 1\nq2 0 a 1\nq3 0 a 1\n")
    report = check(qrels, run)
    (eq,) = report.of("equal_scores")
    assert (eq.line, eq.count) == (1, 1)
    (tied,) = report.of("tied_scores")
    assert (tied.line, tied.count) == (1, 5)  # q1's three rows and q3's two
    (contra,) = report.of("ranks_contradict_scores")
    assert (contra.line, contra.count) == (5, 1) and "'q2'" in contra.message
    (rank,) = report.of("rank_not_numeric")
    assert (rank.line, rank.count) == (8, 1)
    assert report.exit_code == 1


def test_ranks_are_read_on_the_line_path_too(write) -> None:
    # a comment and tabs: eval reads the file line by line, and so do the rank checks
    run = write("r.txt", "# run\nq1\tQ0 a 1 1.0 t\nq1 Q0  b 2 2.0 t\n")
    report = check(write("q.txt", "q1 0 a 1\n"), run)
    assert [f.line for f in report.of("ranks_contradict_scores")] == [3]
    assert report.files[1].read == "lines" and report.files[1].comments == 1


def test_queries_on_one_side_and_judged_docs(write) -> None:
    qrels = write("q.txt", "q1 0 a 1\nq2 0 b 1\nq4 0 z 1\n")
    run = write("r.txt", "q1 Q0 a 1 2 t\nq1 Q0 x 2 1 t\nq2 Q0 y 1 1 t\nq3 Q0 a 1 1 t\n")
    report = check(qrels, run)
    assert report.total("qrels_only_queries") == 1 and "'q4'" in report.of("qrels_only_queries")[0].message
    assert report.total("run_only_queries") == 1 and "'q3'" in report.of("run_only_queries")[0].message
    assert report.total("queries_none_judged") == 1 and "'q2'" in report.of("queries_none_judged")[0].message
    (o,) = report.overlaps
    assert (o.common_queries, o.qrels_only, o.run_only, o.rows_in_common, o.judged_rows) == (2, 1, 1, 3, 1)
    assert o.never_judged_docs == 2  # x and y


def test_no_common_query_and_no_judged_doc(write) -> None:
    qrels = write("q.txt", "q1 0 a 1\n")
    assert codes(check(qrels, write("r.txt", "q9 Q0 a 1 1 t\n")), Severity.ERROR) == {"no_common_query"}
    other_ids = check(qrels, write("r2.txt", "q1 Q0 D-a 1 1 t\n"))
    assert other_ids.total("no_judged_docs") == 1 and other_ids.exit_code == 1


def test_gzip_reads_as_plain(write, tmp_path: Path) -> None:
    plain_q, plain_r = write("q.txt", QRELS + "q1 0 d1 1\n"), write("r.txt", RUN + "q9 Q0 d1\n")
    gz_q, gz_r = tmp_path / "q.txt.gz", tmp_path / "r.txt.gz"
    gz_q.write_bytes(gzip.compress(plain_q.read_bytes()))
    gz_r.write_bytes(gzip.compress(plain_r.read_bytes()))
    a, b = check(plain_q, plain_r), check(gz_q, gz_r)

    def strip(report: CheckReport) -> list[tuple[str, int | None, int, str]]:
        return [(f.code, f.line, f.count, f.message.replace(".gz", "")) for f in report.findings]

    assert strip(a) == strip(b) and b.exit_code == 3


def test_in_memory_inputs(write) -> None:
    report = check({"q1": {"a": 1}}, [{"q1": {"a": 1.0, "b": 1.0}}])
    assert report.total("equal_scores") == 1 and report.overlaps[0].judged_rows == 1


def test_other_format_error_is_a_finding(write) -> None:
    # a format's own reader decides; its typed error is an error finding, with no TREC line pass
    path = write("q.jsonl", '{"query_id": "q1", "doc_id"\n')
    report = check(path, qrels_format=None)
    assert report.exit_code == 3 and report.files[0].read == "failed"
    assert report.findings[0].severity == Severity.ERROR


# --- command line -----------------------------------------------------------------------------


def invoke(*args: str | Path):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, ["check", *map(str, args)], env={"COLUMNS": "400"})


def test_exit_codes(write) -> None:
    qrels = write("q.txt", QRELS)
    assert invoke(str(qrels), str(write("r.txt", RUN))).exit_code == 0
    assert invoke(str(qrels), str(write("r1.txt", RUN + "q3 Q0 d1 1 1 t\n"))).exit_code == 1  # a run-only query
    assert invoke(str(qrels), str(write("r3.txt", RUN + "q1 Q0 d1 1\n"))).exit_code == 3
    assert invoke(str(qrels), "--format", "xml").exit_code == 2


def test_json_shape(write) -> None:
    result = invoke(str(write("q.txt", QRELS + "q1 0 d1 3\n")), str(write("r.txt", RUN)), "--format", "json")
    assert result.exit_code == 3
    doc = json.loads(result.output)
    assert set(doc) == {"status", "exit_code", "counts", "files", "overlap", "listed_per_code", "findings"}
    assert (doc["status"], doc["exit_code"]) == ("errors", 3)
    assert doc["counts"]["error"] == {"duplicate": 1}
    (dup,) = [f for f in doc["findings"] if f["code"] == "duplicate"]
    assert (dup["line"], dup["other_line"], dup["count"], dup["severity"]) == (6, 1, 1, "error")
    assert set(dup) == {"severity", "code", "file", "line", "other_line", "count", "message", "text"}
    assert [f["kind"] for f in doc["files"]] == ["qrels", "run"]
    assert doc["overlap"][0]["judged_rows"] == 4 and doc["overlap"][0]["judged_share"] == pytest.approx(0.8)


CRAFTED = ["[bold]q[/bold]", "[/]", "\x1b[31mred", "q\\", "a]" * 3, "x" * 500, "[link=http://e.vil]q[/link]"]


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_crafted_ids_cannot_break_the_report(write, fmt: str) -> None:
    qrels = "".join(f"{q} 0 {q} 1\n{q} 0 {q} 2\n" for q in CRAFTED)  # each id a duplicate, named in a message
    run = "".join(f"{q}x Q0 d 1 1 t\n" for q in CRAFTED) + "[b] Q0 d\n"
    result = invoke(write("q.txt", qrels), write("r.txt", run), "--format", fmt)
    assert result.exit_code == 3, result.output
    if fmt == "json":
        doc = json.loads(result.output)
        texts = [f["text"] for f in doc["findings"] if f["text"]]
        assert texts == ["[b] Q0 d"]
        assert sum(f["count"] for f in doc["findings"] if f["code"] == "duplicate") == len(CRAFTED)
    else:
        assert "\x1b" not in result.output  # control characters shown as escapes
        assert "[bold]q[/bold]" in result.output and "[/]" in result.output  # printed, not applied
        assert "'[b] Q0 d'" in result.output


def test_json_names_the_real_ids(write) -> None:
    path = write("q.txt", "".join(f"{q} 0 d 1\n{q} 0 d 1\n" for q in CRAFTED[:3]))
    doc = json.loads(invoke(str(path), "--format", "json").output)
    messages = " ".join(f["message"] for f in doc["findings"] if f["code"] == "duplicate")
    assert all(repr(q) in messages for q in CRAFTED[:3])


# --- real data --------------------------------------------------------------------------------


def plain_qrels(path: Path) -> dict[tuple[str, str], float]:
    out = {}
    for line in path.read_text().splitlines():
        q, _, d, g = line.split()
        out[q, d] = float(g)
    return out


DL19_RUNS = ["rankllm.dl19.bm25.top100.run", "rankllm.dl19.bm25-rm3.top100.run",
             "rankllm.dl19.splade-p-p-ensemble-distil.top100.run", "rankllm.dl19.d-bert-kd-tasb.top100.run",
             "rankllm.dl19.bm25-rankgpt-gpt-3.5-turbo.top100.run"]


def test_dl19_judged_coverage_against_plain_python() -> None:
    qrels_path = shared_path("qrels", "qrels.dl19-passage.txt")
    runs = [shared_path("runs", name) for name in DL19_RUNS]
    judged = plain_qrels(qrels_path)
    report = check(qrels_path, runs)
    assert report.exit_code == 0, [f for f in report.findings if f.severity != "info"]
    judged_queries = {q for q, _ in judged}
    for run_path, overlap in zip(runs, report.overlaps, strict=True):
        rows = [line.split() for line in run_path.read_text().splitlines()]
        in_common = [r for r in rows if r[0] in judged_queries]
        assert overlap.rows_in_common == len(in_common)
        assert overlap.judged_rows == sum((r[0], r[2]) in judged for r in in_common)
        assert overlap.common_queries == len({r[0] for r in rows} & judged_queries)
        assert overlap.never_judged_docs == len({r[2] for r in rows} - {d for _, d in judged})
        ties = Counter((r[0], float(r[4])) for r in rows)
        assert report.total("tied_scores", str(run_path)) == sum(n for n in ties.values() if n > 1)
    histogram = Counter(judged.values())
    listed = ", ".join(f"{g:g}: {histogram[g]}" for g in sorted(histogram))
    assert report.of("grade_scale")[0].message.startswith(f"grades {listed}; exactly the trec_dl")


@pytest.mark.parametrize("name", ["qrels.web.201-250.txt", "qrels.covid-round5.txt", "qrels.dl19-doc.txt",
                                  "qrels.msmarco-passage.dev-subset.txt"])
def test_real_qrels_grades(name: str) -> None:
    path = shared_path("qrels", name)
    grades = Counter(float(line.split()[3]) for line in path.read_text().splitlines() if line.strip())
    report = check(path)
    assert codes(report, Severity.ERROR) == set()
    assert report.of("grade_scale")[0].count == sum(grades.values())
    assert report.total("negative_grades") == sum(n for g, n in grades.items() if g < 0)


def test_dl20_bm25_against_dl19_qrels_has_no_common_query() -> None:
    report = check(shared_path("qrels", "qrels.dl19-passage.txt"), shared_path("runs", "rankllm.dl20.bm25.top100.run"))
    assert codes(report, Severity.ERROR) == {"no_common_query"}


# --- random mutations -------------------------------------------------------------------------


def lines_refused(data: bytes, kind: str) -> int:
    """Lines the strict reader refuses when each is read on its own (with one good line beside it)."""
    refused = 0
    good, parse = (b"q 0 d 1\n", parse_qrels_lines) if kind == "qrels" else (b"q Q0 d 1 1 t\n", parse_run_lines)
    for raw in data.split(b"\n"):
        fields = re.findall(f"[^{re.escape(BLANKS)}]+", raw.decode("utf-8", "replace"))
        if not fields or fields[0].startswith("#"):
            continue
        try:
            parse("one", good + raw + b"\n")
        except InputError:
            refused += 1
    return refused


MUTATION = st.lists(st.tuples(st.sampled_from(["insert", "delete", "replace", "dup_line", "join"]),
                              st.integers(0, 10_000), st.binary(min_size=1, max_size=4)), min_size=1, max_size=6)


def mutated(data: bytearray, mutations: list[tuple[str, int, bytes]]) -> bytes:
    for op, at, junk in mutations:
        at %= max(len(data), 1)
        if op == "insert":
            data[at:at] = junk
        elif op == "delete":
            del data[at : at + len(junk)]
        elif op == "replace":
            data[at : at + len(junk)] = junk
        elif op == "dup_line":
            start = data.rfind(b"\n", 0, at) + 1
            end = data.find(b"\n", at)
            data[start:start] = data[start : end + 1 if end >= 0 else len(data)]
        elif data[at : at + 1] == b"\n":  # join two lines
            data[at : at + 1] = b" "
    return bytes(data)


@pytest.mark.parametrize("kind", ["qrels", "run"])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mutations=MUTATION)
def test_mutated_files_give_findings_never_a_traceback(tmp_path: Path, kind: str,
                                                       mutations: list[tuple[str, int, bytes]]) -> None:
    data = mutated(bytearray(((QRELS if kind == "qrels" else RUN) * 3).encode()), mutations)
    path = tmp_path / "mutated.txt"
    path.write_bytes(data)
    good = tmp_path / "good.txt"
    good.write_text(RUN if kind == "qrels" else QRELS)
    report = check(path, [good]) if kind == "qrels" else check(good, [path])
    render_check(report)
    json.dumps(report.to_dict(), allow_nan=False)
    try:
        read_qrels(path) if kind == "qrels" else read_run(path)
        accepted = True
    except InputError:
        accepted = False
    malformed = report.total("malformed_line")
    # what eval reads, check passes; what eval refuses, check names line by line (each line the
    # strict reader refuses on its own is one finding, so no bad line hides behind the first)
    assert accepted == (malformed == 0 and report.total("unreadable", str(path)) == 0)
    if not accepted and data[:2] == b"\x1f\x8b":
        # gzip's magic bytes first: the file is read as gzip and refused whole, not line by line
        # (found by this test, 2026-12-07: b"\x1f\x8b" inserted at the start of a qrels file)
        assert malformed == 0 and report.total("unreadable", str(path)) == 1 and report.exit_code == 3
    elif not accepted:
        assert malformed == lines_refused(data, kind) and report.exit_code == 3


# --- the paths big files take ---------------------------------------------------------------


def big_run(tmp_path: Path, n_queries: int, depth: int, text: bool) -> tuple[Path, Path, list[list[str]]]:
    rng = random.Random(7)
    rows, judged = [], []
    for q in range(n_queries):
        docs = rng.sample(range(10 * depth), depth)
        for rank, d in enumerate(docs, 1):
            doc = f"D-{d}" if text else str(d)
            rows.append([f"q{q}", "Q0", doc, str(rank), f"{depth - rank + 0.5}", "t"])
            if rng.random() < 0.2:
                judged.append(f"q{q} 0 {doc} {rng.randrange(4)}")
    rows[-1][2] = rows[-3][2]  # a duplicate on the last line
    rows[-2][4] = "999"  # a rank contradicting its score
    run = tmp_path / "big.run"
    run.write_text("".join(" ".join(r) + "\n" for r in rows))
    qrels = tmp_path / "big.qrels"
    qrels.write_text("\n".join(judged) + "\nq-only 0 x 1\n")
    return qrels, run, rows


@pytest.mark.parametrize("text", [True, False])
def test_big_runs_read_in_pieces_and_hashed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: bool) -> None:
    from rankflavor.align import sizes

    monkeypatch.setattr(sizes, "PARALLEL_ROWS", 1000)  # the hashed docno codes of big text runs
    qrels, run, rows = big_run(tmp_path, 200, 300, text)  # 60,000 lines, about 1.5 MB
    monkeypatch.setattr("rankflavor.io.columnar.PIECES_BYTES", 100_000)  # read in pieces
    report = check(qrels, run)
    n = len(rows)
    assert [(f.line, f.other_line) for f in report.of("duplicate")] == [(n, n - 2)]
    (contra,) = report.of("ranks_contradict_scores")
    assert (contra.line, contra.count) == (n - 1, 1)
    judged = {(a[0], a[2]) for a in (line.split() for line in qrels.read_text().splitlines())}
    judged_docs = {d for _, d in judged}
    (o,) = report.overlaps
    assert o.judged_rows == sum((r[0], r[2]) in judged for r in rows)
    assert o.never_judged_docs == len({r[2] for r in rows} - judged_docs)
    assert (o.common_queries, o.qrels_only) == (200, 1)
    assert report.files[1].read == "columnar"


def test_covid_text_docnos_against_plain_python() -> None:
    qrels_path = shared_path("qrels", "qrels.beir-v1.0.0-trec-covid.test.txt")
    run_path = shared_path("runs", "rankllm.covid.bm25.top100.run")
    judged = plain_qrels(qrels_path)
    rows = [line.split() for line in run_path.read_text().splitlines()]
    (o,) = check(qrels_path, run_path).overlaps
    assert o.judged_rows == sum((r[0], r[2]) in judged for r in rows)
    assert o.never_judged_docs == len({r[2] for r in rows} - {d for _, d in judged})
    assert o.common_queries == len({r[0] for r in rows} & {q for q, _ in judged})


def test_readme_output_is_real(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's example, rebuilt from the shared files: its output is what the command prints."""
    lines = shared_path("runs", "rankllm.dl19.bm25.top100.run").read_text().splitlines(keepends=True)
    put_in = ["264014 Q0 5611210 4 14.5 rank\n", "264014 Q0 4834547 5\n", "264014 Q0 1234 6 16.0 rank\n"]
    (tmp_path / "broken.run").write_text("".join(lines[:3] + put_in + lines[3:100]))
    (tmp_path / "qrels.dl19-passage.txt").write_bytes(shared_path("qrels", "qrels.dl19-passage.txt").read_bytes())
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["check", "qrels.dl19-passage.txt", "broken.run"], env={"COLUMNS": "120"})
    printed = "".join(line.rstrip() + "\n" for line in result.output.splitlines())
    readme = (Path(__file__).resolve().parents[3] / "README.md").read_text()
    shown = readme.split('$ COLUMNS=120 rankflavor check qrels.dl19-passage.txt broken.run; echo "exit $?"\n')[1]
    assert shown.split("```")[0] == printed + f"exit {result.exit_code}\n"


def test_grades_given_as_a_run_look_like_qrels(write) -> None:
    run = "".join(f"q{i % 3} Q0 d{i} {i} {i % 4} t\n" for i in range(30))
    report = check(write("q.txt", QRELS), write("r.txt", run))
    (f,) = report.of("looks_like_qrels")
    assert f.count == 30 and "one of 0, 1, 2, 3" in f.message
    # integer scores with many values (SPLADE's) are a run's
    assert check(write("q.txt", QRELS), write("r2.txt", RUN)).of("looks_like_qrels") == []


def test_usage_errors_exit_2(write) -> None:
    qrels = str(write("q.txt", QRELS))
    assert invoke(qrels, "--scale", "nope").exit_code == 2
    assert invoke(qrels, "--limit", "0").exit_code == 2


def test_trec_format_named_for_any_file_name(write) -> None:
    path = write("judgments.csv", "q1 0 d1 1\nq1 0 d2\nq1 0 d3 1 x\n")
    report = check(path, qrels_format="trec")
    assert [f.line for f in report.of("malformed_line")] == [2, 3] and report.files[0].read == "lines"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=400), as_run=st.booleans())
def test_random_bytes_give_findings_never_a_traceback(tmp_path: Path, data: bytes, as_run: bool) -> None:
    path = tmp_path / "random.txt"
    path.write_bytes(data)
    good = tmp_path / "good.txt"
    good.write_text(QRELS if as_run else RUN)
    report = check(good, [path]) if as_run else check(path, [good])
    render_check(report)
    doc = json.loads(json.dumps(report.to_dict(), allow_nan=False))
    assert doc["exit_code"] in (0, 1, 3)
    assert all(f["text"] is None or len(f["text"]) <= 203 for f in doc["findings"])


def test_a_long_line_is_cut_in_the_report(tmp_path: Path) -> None:
    path = tmp_path / "q.txt"
    path.write_bytes(b"x" * 100_000)
    (f,) = check(path).of("malformed_line")
    assert f.line == 1 and f.text == "x" * 200 + "..."


def test_bytes_eval_skips_are_no_error_and_the_rank_is_named(tmp_path: Path) -> None:
    # trec_eval and eval skip the rank field: bytes that are not UTF-8 there are no error to them,
    # so check reports none either, and names the rank it cannot read as a number
    run = tmp_path / "r.txt"
    run.write_bytes(b"q1 Q0 d1 1 2.0 t\nq1 Q0 d2 \xff 1.0 t\n")
    read_run(run)  # eval reads it
    report = check(tmp_path / "absent.txt", [run])
    (note,) = report.of("rank_not_numeric")
    assert (note.line, note.count, note.severity) == (2, 1, Severity.INFO)
    assert report.of("malformed_line", str(run)) == []
