"""Bad input gives a typed error that names the file, the line and what was expected, with a
documented exit status and no traceback: through the CLI and through the Python API.

Exit statuses (``rankflavor.cli.main``): 2 usage or flavor error, 3 bad input file, 4 an evaluation
policy that says fail (``missing=error``, ``empty=error``).
"""

from __future__ import annotations

import gzip
import subprocess
import sys
import traceback
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner, Result

import rankflavor
from rankflavor.cli.main import cli
from rankflavor.errors import EvaluationError, FlavorError, InputError, UsageError

QRELS = "q1 0 d1 2\nq1 0 d2 0\nq1 0 d3 1\nq2 0 e1 1\n"
RUN = "q1 Q0 d1 1 3.0 tag\nq1 Q0 d2 2 2.0 tag\nq1 Q0 d9 3 1.0 tag\nq2 Q0 e1 1 5.0 tag\n"


def run_cli(*args: object) -> Result:
    """Invoke the CLI; fail if anything escaped as an exception (a user would see a traceback)."""
    result = CliRunner().invoke(cli, [str(a) for a in args])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(
            "uncaught exception (a traceback for the user):\n" + "".join(traceback.format_exception(*result.exc_info))
        )
    assert "Traceback" not in result.output
    return result


def expect_error(status: int, *args: object) -> str:
    result = run_cli("eval", *args)
    assert result.exit_code == status, result.output
    assert result.output.startswith("rankflavor: error: ") or "Error:" in result.output
    return result.output


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text(QRELS)
    run.write_text(RUN)
    return qrels, run


def _bad_file(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


# ---------------------------------------------------------------------------------------------
# Malformed lines: file, line number, the line, what was expected


QRELS_CASES = [
    ("three fields", "q1 0 d1 1\nq1 0 d2\n", 2, "expected 4 whitespace-separated fields 'query iteration doc grade', found 3"),
    ("five fields", "q1 0 d1 1\nq1 0 d1x 1 extra\n", 2, "found 5"),
    ("grade not a number", "q1 0 d1 1\nq1 0 d2 high\n", 2, "grade 'high' is not a number"),
    ("grade NaN", "q1 0 d1 nan\n", 1, "grade 'nan' is not a finite number"),
    ("grade inf", "q1 0 d1 1\n\nq1 0 d2 -inf\n", 3, "grade '-inf' is not a finite number"),
    ("tabs and a bad grade", "q1\t0\td1\t1\nq1\t0\td2\tx\n", 2, "grade 'x' is not a number"),
]

RUN_CASES = [
    ("five fields", "q1 Q0 d1 1 3.0 t\nq1 Q0 d2 2 2.0\n", 2, "expected 6 whitespace-separated fields 'query Q0 doc rank score tag', found 5"),
    ("score not a number", "q1 Q0 d1 1 3.0 t\nq1 Q0 d2 2 abc t\n", 2, "score 'abc' is not a number"),
    ("score NaN", "q1 Q0 d1 1 3.0 t\nq1 Q0 d2 2 NaN t\n", 2, "score 'NaN' is not a finite number"),
    ("score inf", "q1 Q0 d1 1 inf t\n", 1, "score 'inf' is not a finite number"),
    ("score overflows to inf", "q1 Q0 d1 1 1e999 t\n", 1, "score '1e999' is not a finite number"),
    ("comment then bad", "# header\nq1 Q0 d1 1 3.0 t\nq1 Q0 d2 x 2.0\n", 3, "found 5"),
]


@pytest.mark.parametrize("label,content,line,expected", QRELS_CASES, ids=[c[0] for c in QRELS_CASES])
def test_malformed_qrels_line(tmp_path: Path, files: tuple[Path, Path], label: str, content: str, line: int,
                              expected: str) -> None:
    bad = _bad_file(tmp_path, "bad.qrels", content)
    output = expect_error(3, bad, files[1], "-m", "ndcg")
    assert f"{bad}:{line}:" in output and expected in output
    assert "line: " in output  # the offending line is echoed
    with pytest.raises(InputError) as info:
        rankflavor.evaluate(bad, files[1], "ndcg")
    assert info.value.source == str(bad) and info.value.line == line


@pytest.mark.parametrize("label,content,line,expected", RUN_CASES, ids=[c[0] for c in RUN_CASES])
def test_malformed_run_line(tmp_path: Path, files: tuple[Path, Path], label: str, content: str, line: int,
                            expected: str) -> None:
    bad = _bad_file(tmp_path, "bad.run", content)
    output = expect_error(3, files[0], bad, "-m", "ndcg")
    assert f"{bad}:{line}:" in output and expected in output
    with pytest.raises(InputError) as info:
        rankflavor.evaluate(files[0], bad, "ndcg")
    assert info.value.source == str(bad) and info.value.line == line


@pytest.mark.parametrize("content", ["", "   \n\t\n\n", "\r\n"], ids=["empty", "whitespace", "crlf-only"])
@pytest.mark.parametrize("which", ["qrels", "run"])
def test_empty_and_whitespace_only_files(tmp_path: Path, files: tuple[Path, Path], content: str, which: str) -> None:
    bad = _bad_file(tmp_path, f"empty.{which}", content)
    args = (bad, files[1]) if which == "qrels" else (files[0], bad)
    output = expect_error(3, *args, "-m", "ndcg")
    assert str(bad) in output and f"{which} file is empty" in output
    layout = "query iteration doc grade" if which == "qrels" else "query Q0 doc rank score tag"
    assert layout in output


@pytest.mark.parametrize("which", ["qrels", "run"])
def test_file_with_only_comments_has_no_data(tmp_path: Path, files: tuple[Path, Path], which: str) -> None:
    bad = _bad_file(tmp_path, f"comments.{which}", "# nothing here\n# still nothing\n")
    args = (bad, files[1]) if which == "qrels" else (files[0], bad)
    output = expect_error(3, *args, "-m", "ndcg")
    assert str(bad) in output and "no " in output and "lines" in output


# ---------------------------------------------------------------------------------------------
# Swapped arguments


def test_run_given_as_qrels_says_the_arguments_look_swapped(files: tuple[Path, Path]) -> None:
    qrels, run = files
    output = expect_error(3, run, qrels, "-m", "ndcg")
    assert f"{run}:1:" in output and "looks like a run line" in output and "wrong order" in output


def test_qrels_given_as_run_says_the_arguments_look_swapped(tmp_path: Path, files: tuple[Path, Path]) -> None:
    qrels, _ = files
    other_qrels = _bad_file(tmp_path, "other.qrels", QRELS)
    output = expect_error(3, qrels, other_qrels, "-m", "ndcg")
    assert f"{other_qrels}:1:" in output and "looks like a qrels line" in output and "wrong order" in output


# ---------------------------------------------------------------------------------------------
# Duplicates


def test_duplicate_run_document_names_file_and_both_lines(tmp_path: Path, files: tuple[Path, Path]) -> None:
    run = _bad_file(tmp_path, "dup.run", RUN + "q1 Q0 d2 9 0.5 tag\n")
    output = expect_error(3, files[0], run, "-m", "ndcg")
    assert f"{run}:5:" in output and "also at line 2" in output and "'d2'" in output and "'q1'" in output
    assert "duplicates=first" in output and "duplicates=best" in output


def test_duplicate_qrels_document_names_file_and_both_lines(tmp_path: Path, files: tuple[Path, Path]) -> None:
    qrels = _bad_file(tmp_path, "dup.qrels", "# judged twice\n" + QRELS + "\nq1 0 d1 0\n")
    output = expect_error(3, qrels, files[1], "-m", "ndcg")
    assert f"{qrels}:7:" in output and "also at line 2" in output and "'d1'" in output


def test_duplicates_error_names_the_first_repeat_in_the_file(tmp_path: Path) -> None:
    """aa comes first, but zz is repeated first (line 3): the error names zz and its lines, whole
    or chunked."""
    qrels = _bad_file(tmp_path, "q", "q1 0 aa 1\nq1 0 zz 1\nq1 0 zz 0\nq1 0 aa 2\n")
    run = _bad_file(tmp_path, "r", "q1 Q0 aa 1 4 t\nq1 Q0 zz 2 3 t\nq1 Q0 zz 3 2 t\nq1 Q0 aa 4 1 t\n")
    clean_qrels = _bad_file(tmp_path, "cq", "q1 0 aa 1\n")
    # (a comment and a blank line make the line path number the rows: the same lines)
    commented = _bad_file(tmp_path, "rc", "# a comment\nq1 Q0 aa 1 4 t\n\nq1 Q0 zz 2 3 t\nq1 Q0 zz 3 2 t\n")
    for args in ([], ["--chunk-rows", "1"], ["--chunk-rows", "3"]):
        for q, r, source, at in ((qrels, run, qrels, (3, 2)), (clean_qrels, run, run, (3, 2)),
                                 (clean_qrels, commented, commented, (5, 4))):
            output = expect_error(3, q, r, "-m", "ndcg", *args)
            assert "document 'zz' appears more than once for query 'q1'" in output, (args, output)
            assert f"{source}:{at[0]}:" in output and f"also at line {at[1]}" in output, (args, output)


def test_duplicates_error_says_what_its_count_covers_when_chunked(tmp_path: Path) -> None:
    """Chunked evaluation stops at the first chunk holding a duplicate, so its count covers that
    chunk's queries; the message says so, where it used to say "in all" (3 rows repeat here in
    all, 1 in the chunk that stops)."""
    qrels = _bad_file(tmp_path, "q", "q1 0 a 1\nq2 0 b 1\nq3 0 c 1\n")
    run = _bad_file(tmp_path, "r", "q1 Q0 a 1 2 t\nq1 Q0 x 2 1 t\nq2 Q0 b 1 2 t\nq2 Q0 b 2 1 t\n"
                                   "q3 Q0 c 1 3 t\nq3 Q0 c 2 2 t\nq3 Q0 c 3 1 t\n")
    whole = expect_error(3, qrels, run, "-m", "ndcg")
    assert "3 duplicate row(s) in all;" in whole, whole
    chunked = expect_error(3, qrels, run, "-m", "ndcg", "--chunk-rows", "2")
    assert "1 duplicate row(s) for the queries of the run's lines 1-4 (the first chunk holding one" in chunked, chunked
    assert "in all" not in chunked
    # a judgment repeated for a query of the stopping chunk: counted among that chunk's queries
    twice = _bad_file(tmp_path, "q2", "q1 0 a 1\nq2 0 b 1\nq2 0 b 0\nq3 0 c 1\nq3 0 c 2\n")
    clean_run = _bad_file(tmp_path, "r2", "q1 Q0 a 1 2 t\nq2 Q0 b 1 2 t\nq3 Q0 c 1 3 t\n")
    assert "2 duplicate row(s) in all;" in expect_error(3, twice, clean_run, "-m", "ndcg")
    chunked = expect_error(3, twice, clean_run, "-m", "ndcg", "--chunk-rows", "1")
    assert "1 duplicate row(s) for the queries of the run's lines 1-2 (" in chunked, chunked


def test_duplicate_judgments_of_a_query_the_run_lacks_are_read_as_trec_eval_reads_them(tmp_path: Path) -> None:
    """trec_eval forms judged lists only for the run's queries: it refuses a duplicate judgment
    of one of them and reads the others' lines as they are. With -c, num_rel counts every line:
    trec_eval 9.0.8 printed num_rel 4 for these files (query 2 judges x twice)."""
    qrels = _bad_file(tmp_path, "q", "1 0 a 1\n1 0 c 2\n2 0 x 1\n2 0 x 3\n2 0 y 0\n")
    run = _bad_file(tmp_path, "r", "1 Q0 a 1 3 t\n1 Q0 b 2 2 t\n1 Q0 c 3 1 t\n")
    for chunk_rows in (None, 1):
        res = rankflavor.evaluate(qrels, run, ["num_rel", "ndcg", "map"], preset="trec_eval", missing="zero",
                                  chunk_rows=chunk_rows)
        assert res["num_rel"].summary == 4 and res["ndcg"].summary == pytest.approx(0.3801, abs=5e-5)
        assert res["map"].summary == pytest.approx(0.4167, abs=5e-5)
        assert res.counts.qrels_duplicates_resolved == 0  # none resolved: kept, as trec_eval keeps them
    # a duplicate judgment of a query the run retrieves is still refused
    output = expect_error(3, _bad_file(tmp_path, "q2", "1 0 a 1\n1 0 a 0\n"), run, "-m", "ndcg")
    assert "document 'a' appears more than once for query '1'" in output and "1 duplicate row(s)" in output


#: Query q1 repeats a at rank 5, q2 repeats x at rank 3, q3 (not judged) repeats z.
DEPTH_QRELS = "q1 0 a 1\nq1 0 b 2\nq1 0 c 0\nq1 0 d 1\nq2 0 x 1\nq2 0 w 1\n"
DEPTH_RUN = ("q1 Q0 a 1 5.0 t\nq1 Q0 b 2 4.0 t\nq1 Q0 c 3 3.0 t\nq1 Q0 e 4 2.0 t\nq1 Q0 a 5 1.0 t\n"
             "q1 Q0 d 6 0.5 t\nq2 Q0 x 1 1 t\nq2 Q0 y 2 0.5 t\nq2 Q0 x 3 0.4 t\nq3 Q0 z 1 1 t\nq3 Q0 z 2 0.5 t\n")


def test_run_duplicates_below_the_depth_cut_are_read_as_trec_eval_reads_them(tmp_path: Path) -> None:
    """trec_eval cuts each query to -M before it looks for duplicates, and never looks at a query
    without judgments. trec_eval 9.0.8 on these files: -M2 printed map 0.6667/0.5000 (all
    0.5833), ndcg 0.7224/0.6131 (0.6678), P_5 0.4/0.2, num_ret 2/2; -M3 and no -M refused
    ("duplicate docs x", "duplicate docs a")."""
    qrels, run = _bad_file(tmp_path, "q", DEPTH_QRELS), _bad_file(tmp_path, "r", DEPTH_RUN)
    for chunk_rows in (None, 1):
        res = rankflavor.evaluate(qrels, run, ["map", "ndcg", "P.5", "num_ret"], preset="trec_eval", depth=2,
                                  chunk_rows=chunk_rows)
        assert [round(v, 4) for v in res["map"].values] == [0.6667, 0.5] and round(res["map"].summary, 4) == 0.5833
        assert [round(v, 4) for v in res["ndcg"].values] == [0.7224, 0.6131]
        assert round(res["ndcg"].summary, 4) == 0.6678
        assert list(res["P_5"].values) == [0.4, 0.2] and res["num_ret"].summary == 4
        # counted, not resolved: a, x and z each have one more row
        assert (res.counts.run_duplicates_kept, res.counts.run_duplicates_resolved) == (3, 0)
    shown = run_cli("eval", "--preset", "trec_eval", "-M", 2, "-m", "map", qrels, run)
    assert shown.exit_code == 0 and "duplicates resolved: run 0, qrels 0, run kept 3" in shown.output
    # num_rel has no depth (it reads the judgments alone) and refuses no run duplicate: with -M2
    # trec_eval printed num_rel 5 and num_rel_ret 3, and all_trec ran through
    res = rankflavor.evaluate(qrels, run, ["num_rel", "num_rel_ret", "all_trec"], preset="trec_eval", depth=2)
    assert (res["num_rel"].summary, res["num_rel_ret"].summary) == (5, 3)
    output = expect_error(3, "--preset", "trec_eval", "-M", 3, "-m", "map", qrels, run)
    assert f"{run}:9:" in output and "also at line 7" in output and "'x'" in output and "'q2'" in output
    assert "both within its top 3 rows (depth=3)" in output
    output = expect_error(3, "--preset", "trec_eval", "-m", "map", qrels, run)
    assert f"{run}:5:" in output and "also at line 1" in output and "'a'" in output and "depth" not in output


def test_run_duplicates_are_refused_before_unjudged_rows_are_condensed(tmp_path: Path) -> None:
    """trec_eval checks for duplicates before -J drops the unjudged rows: with -J, an unjudged e
    listed twice in the top 3 is refused, and cut to the top 2 it is not (map 0.5000)."""
    qrels = _bad_file(tmp_path, "q", "q1 0 a 1\nq1 0 b 1\n")
    run = _bad_file(tmp_path, "r", "q1 Q0 a 1 3 t\nq1 Q0 e 2 2 t\nq1 Q0 e 3 1 t\nq1 Q0 b 4 0.5 t\n")
    res = rankflavor.evaluate(qrels, run, "map", preset="trec_eval", depth=2, unjudged="condensed")
    assert res[0].summary == 0.5
    output = expect_error(3, "--preset", "trec_eval", "-J", "-M", 3, "-m", "map", qrels, run)
    assert f"{run}:3:" in output and "'e'" in output and "top 3 rows" in output


def test_run_only_duplicates_count_alike_whole_and_chunked(tmp_path: Path) -> None:
    """A chunk holding only queries without judgments counts its duplicates as the whole run does."""
    qrels, run = _bad_file(tmp_path, "q", DEPTH_QRELS), _bad_file(tmp_path, "r", DEPTH_RUN)
    for policy in ("first", "best"):
        whole = rankflavor.evaluate(qrels, run, "map", duplicates=policy)
        chunked = rankflavor.evaluate(qrels, run, "map", duplicates=policy, chunk_rows=1)
        assert whole.counts == chunked.counts and whole.counts.run_duplicates_resolved == 3


def test_duplicates_first_and_best_resolve_and_count(tmp_path: Path) -> None:
    qrels = _bad_file(tmp_path, "q", "q 0 a 0\nq 0 b 1\nq 0 a 2\n")  # a judged 0, then 2
    run = _bad_file(tmp_path, "r", "q Q0 b 1 2.0 t\nq Q0 a 2 1.0 t\nq Q0 a 3 3.0 t\n")  # a at 1.0, then 3.0
    first = rankflavor.evaluate(qrels, run, ["RR", "num_rel"], duplicates="first")
    best = rankflavor.evaluate(qrels, run, ["RR", "num_rel"], duplicates="best")
    for res in (first, best):
        assert res.counts.run_duplicates_resolved == 1 and res.counts.qrels_duplicates_resolved == 1
    # first: a keeps grade 0 and score 1.0 -> b (relevant) first: RR 1, one relevant judgment
    assert first["RR"].values[0] == 1.0 and first["num_rel"].values[0] == 1
    # best: a keeps grade 2 and score 3.0 -> a (relevant) first: RR 1, two relevant judgments
    assert best["num_rel"].values[0] == 2
    assert rankflavor.evaluate(qrels, run, "RR[rel=2]", duplicates="best")[0].values[0] == 1.0
    assert rankflavor.evaluate(qrels, run, "RR[rel=2]", duplicates="first")[0].values[0] == 0.0
    shown = run_cli("eval", qrels, run, "-m", "RR", "--flavor", "duplicates=best")
    assert shown.exit_code == 0 and "duplicates resolved: run 1, qrels 1" in shown.output


# ---------------------------------------------------------------------------------------------
# Encoding, compression, missing files


def test_invalid_utf8_names_the_line(tmp_path: Path, files: tuple[Path, Path]) -> None:
    run = _bad_file(tmp_path, "latin1.run", RUN.encode() + "q2 Q0 caf\xe9 2 1.0 tag\n".encode("latin-1"))
    output = expect_error(3, files[0], run, "-m", "ndcg")
    assert f"{run}:5:" in output and "not valid UTF-8" in output
    qrels = _bad_file(tmp_path, "latin1.qrels", "q1 0 d1 1\nq1 0 \xff 1\n".encode("latin-1"))
    output = expect_error(3, qrels, files[1], "-m", "ndcg")
    assert f"{qrels}:2:" in output and "not valid UTF-8" in output


def test_missing_file(tmp_path: Path, files: tuple[Path, Path]) -> None:
    missing = tmp_path / "nope.run"
    output = expect_error(3, files[0], missing, "-m", "ndcg")
    assert str(missing) in output and "file not found" in output
    with pytest.raises(InputError, match="file not found"):
        rankflavor.evaluate(missing, files[1], "ndcg")


def test_gzip_inputs_read_like_plain_ones(tmp_path: Path, files: tuple[Path, Path]) -> None:
    qrels_gz = _bad_file(tmp_path, "qrels.gz", gzip.compress(QRELS.encode()))
    run_gz = _bad_file(tmp_path, "run.txt.gz", gzip.compress(RUN.encode()))
    run_no_suffix = _bad_file(tmp_path, "run-compressed", gzip.compress(RUN.encode()))  # detected by magic number
    plain = rankflavor.evaluate(*files, ["ndcg", "AP", "P@2"]).per_query()
    assert rankflavor.evaluate(qrels_gz, run_gz, ["ndcg", "AP", "P@2"]).per_query() == plain
    assert rankflavor.evaluate(files[0], run_no_suffix, ["ndcg", "AP", "P@2"]).per_query() == plain
    assert run_cli("eval", qrels_gz, run_gz, "-m", "ndcg").exit_code == 0


def _corrupt_gzips() -> dict[str, bytes]:
    good = gzip.compress(RUN.encode() * 20)
    return {
        "truncated": good[: len(good) // 2],
        "bad-crc": good[:-8] + b"\0" * 8,
        "bad-deflate-block": good[:10] + bytes(b ^ 0x55 for b in good[10:30]) + good[30:],
        "bad-method": good[:2] + b"\x09" + good[3:],
        "magic-only": b"\x1f\x8b",
    }


@pytest.mark.parametrize("kind", sorted(_corrupt_gzips()))
def test_corrupt_gzip_is_an_input_error(tmp_path: Path, files: tuple[Path, Path], kind: str) -> None:
    bad = _bad_file(tmp_path, "run.gz", _corrupt_gzips()[kind])
    output = expect_error(3, files[0], bad, "-m", "ndcg")
    assert str(bad) in output and "gzip" in output
    with pytest.raises(InputError, match="gzip"):
        rankflavor.evaluate(files[0], bad, "ndcg")


def test_corrupt_gzip_regression_no_traceback_from_the_real_command(tmp_path: Path, files: tuple[Path, Path]) -> None:
    """Regression: a gzip stream whose deflate blocks are damaged raised ``zlib.error``, which is
    not an ``OSError``, so it escaped as a traceback with exit status 1."""
    bad = _bad_file(tmp_path, "run.gz", _corrupt_gzips()["bad-deflate-block"])
    proc = subprocess.run([sys.executable, "-m", "rankflavor", "eval", str(files[0]), str(bad), "-m", "ndcg"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 3, proc.stderr
    assert "Traceback" not in proc.stderr and f"rankflavor: error: {bad}: gzip data is corrupt" in proc.stderr


# ---------------------------------------------------------------------------------------------
# Layout tolerance like trec_eval; comments and blank lines counted


def test_crlf_tabs_and_runs_of_blanks_parse_like_single_spaces(tmp_path: Path, files: tuple[Path, Path]) -> None:
    qrels = _bad_file(tmp_path, "crlf.qrels", QRELS.replace("\n", "\r\n").replace(" ", "\t"))
    run = _bad_file(tmp_path, "spaces.run", "  " + RUN.replace(" ", "   \t ").replace("\n", "  \n"))
    measures = ["ndcg", "AP", "P@2", "num_ret", "bpref"]
    plain = rankflavor.evaluate(*files, measures)
    messy = rankflavor.evaluate(qrels, run, measures)
    assert messy.per_query() == plain.per_query()
    assert messy.counts.run_rows == plain.counts.run_rows == 4
    assert messy.provenance["run"]["tag"] == "tag"


def test_comment_and_blank_lines_are_skipped_and_counted(tmp_path: Path, files: tuple[Path, Path]) -> None:
    qrels = _bad_file(tmp_path, "c.qrels", "# judged by A\n\n" + QRELS + "\n# end\n")
    run = _bad_file(tmp_path, "c.run", "# run header\n" + RUN.replace("\n", "\n\n", 1))
    res = rankflavor.evaluate(qrels, run, ["ndcg", "AP"])
    assert res.per_query() == rankflavor.evaluate(*files, ["ndcg", "AP"]).per_query()
    assert res.counts.comment_lines == 3
    assert res.counts.blank_lines == 3  # one and one in the qrels, one in the run


def test_extra_run_fields_are_ignored_and_counted(tmp_path: Path, files: tuple[Path, Path]) -> None:
    run = _bad_file(tmp_path, "wide.run", RUN.replace("tag\n", "tag extra stuff\n", 2))
    res = rankflavor.evaluate(files[0], run, ["ndcg"])
    assert res.per_query() == rankflavor.evaluate(*files, ["ndcg"]).per_query()
    assert res.counts.run_lines_with_extra_fields == 2


# ---------------------------------------------------------------------------------------------
# Flavor, usage and policy errors


@pytest.mark.parametrize(
    "args,fragment",
    [
        (["-m", "ndcg@10[gian=exp2]"], "Did you mean 'gain'?"),
        (["-m", "ndcg@10[ties=docno_dsc]"], "Did you mean 'docno_desc'?"),
        (["-m", "P@10[gain=exp2]"], "does not change P@10"),
        (["-m", "ndgc"], "Did you mean 'ndcg'?"),
        (["-m", "ndcg", "--flavor", "gian=exp2"], "Did you mean 'gain'?"),
        (["-m", "ndcg", "--flavor", "exp2"], "knob=value"),
        (["-m", "ndcg", "--preset", "trec_evl"], "Did you mean 'trec_eval'?"),
        (["-m", "ndcg", "-M", "0"], "depth"),
        (["-m", "ndcg@0"], "from 1 to 2**53"),
        (["-m", "ndcg", "-l", "abc"], "'abc' is not a valid float"),
        (["-m", "ndcg", "--format", "xml"], "'xml' is not one of"),
        (["-m", "ndcg", "--bogus"], "No such option"),
    ],
)
def test_flavor_and_usage_errors_exit_2(files: tuple[Path, Path], args: list[str], fragment: str) -> None:
    output = expect_error(2, *files, *args)
    assert fragment in output


def test_directory_instead_of_file_is_a_usage_error(tmp_path: Path, files: tuple[Path, Path]) -> None:
    output = expect_error(2, files[0], tmp_path, "-m", "ndcg")
    assert "is a directory" in output


def test_missing_and_empty_policies_that_say_error_exit_4(tmp_path: Path, files: tuple[Path, Path]) -> None:
    qrels = _bad_file(tmp_path, "more.qrels", QRELS + "q3 0 f1 1\nq4 0 g1 0\n")
    run = _bad_file(tmp_path, "more.run", RUN + "q4 Q0 g1 1 1.0 tag\n")
    output = expect_error(4, qrels, run, "-m", "ndcg[missing=error]")
    assert "absent from the run (q3)" in output and "missing=error" in output
    output = expect_error(4, qrels, run, "-m", "ndcg[empty=error]")
    assert "nothing relevant (q4)" in output and "empty=error" in output
    with pytest.raises(EvaluationError):
        rankflavor.evaluate(qrels, run, "AP", missing="error")
    # the same data evaluates fine under the default policies
    assert run_cli("eval", qrels, run, "-m", "ndcg").exit_code == 0


def test_run_sharing_no_query_with_the_qrels_is_an_error_on_every_path(tmp_path: Path, files: tuple[Path, Path]) -> None:
    """trec_eval stops with "No queries with both results and relevance info"; a mean of NaN (or
    of zeros, under -c) would only say that the files do not match."""
    qrels, _ = files
    run = _bad_file(tmp_path, "other.run", "101 Q0 d1 1 3.0 tag\n102 Q0 d2 1 2.0 tag\n")
    # (chunked with -c and a text-valued measure crashed filling the qrels queries in, before
    # this check ran: relstring, in all_trec)
    for args in ([], ["-c"], ["--chunk-rows", "1"], ["--chunk-rows", "1", "-c", "--preset", "trec_eval", "-m", "all_trec"],
                 ["--chunk-rows", "1", "-c", "-m", "AP[missing=error]"]):
        output = expect_error(4, qrels, run, "-m", "ndcg", *args)
        assert "no query is both in the run and in the qrels" in output
        assert "run: 2 query(ies), e.g. '101', '102'; qrels: 2, e.g. 'q1', 'q2'" in output, output
    with pytest.raises(EvaluationError, match="no query is both"):
        rankflavor.evaluate({"q1": {"a": 1}}, {"q2": {"a": 1.0}}, "ndcg@10")
    with pytest.raises(EvaluationError, match="no query is both"):
        rankflavor.spread(str(qrels), str(run), "ndcg@10", presets=False)
    # A flavor that scores run-only queries has something to score (Quepid, Elasticsearch, Spark
    # and trectools give each 0.0): only the others carry the error in a spread.
    s = rankflavor.spread(str(qrels), str(run), "ndcg@10")
    scored = {f.flavor for f, m in zip(s.flavors, s.means[0], strict=True) if not np.isnan(m)}
    assert scored and all("run_only=include" in f for f in scored)
    for f in s.flavors:
        if "run_only=include" not in f.flavor:
            assert "no query is both" in s.errors[(s.runs[0], f.flavor)], f.flavor
    # one query in common is enough; the others are counted as before
    both = _bad_file(tmp_path, "both.run", "101 Q0 d1 1 3.0 tag\nq2 Q0 e1 1 2.0 tag\n")
    result = rankflavor.evaluate(str(qrels), str(both), "ndcg")
    assert result.counts.queries_evaluated == 1 and result.counts.queries_only_in_run == 1


def test_negatives_error_rejects_negative_grades(tmp_path: Path, files: tuple[Path, Path]) -> None:
    qrels = _bad_file(tmp_path, "neg.qrels", QRELS + "q1 0 d4 -1\n")
    output = expect_error(3, qrels, files[1], "-m", "ndcg[negatives=error]")
    assert str(qrels) in output and "negative grade" in output


# ---------------------------------------------------------------------------------------------
# In-memory inputs


@pytest.mark.parametrize(
    "qrels,run,fragment",
    [
        ({"q": {"a": "high"}}, {"q": {"a": 1.0}}, "grade 'high' is not a number"),
        ({"q": {"a": 1}}, {"q": {"a": float("nan")}}, "not a finite number"),
        ({"q": {"a": 1}}, {"q": {"a": float("inf")}}, "not a finite number"),
        ({"q": [1, 2]}, {"q": {"a": 1.0}}, "expected {doc: grade}"),
        ({}, {"q": {"a": 1.0}}, "is empty"),
        ({"q": {"a": 1}}, {}, "is empty"),  # ({"q": {}} is a run: tests/engine/test_empty_queries.py)
    ],
)
def test_bad_dicts(qrels: object, run: object, fragment: str) -> None:
    with pytest.raises(InputError) as info:
        rankflavor.evaluate(qrels, run, "ndcg")
    assert fragment in str(info.value)
    assert "dict" in info.value.source


def test_bad_dataframes() -> None:
    good_run = pd.DataFrame({"query_id": ["q"], "doc_id": ["a"], "score": [1.0]})
    with pytest.raises(InputError, match="needs one of the columns query_id"):
        rankflavor.evaluate(pd.DataFrame({"q": ["q"], "doc_id": ["a"], "relevance": [1]}), good_run, "ndcg")
    # Regression: the value printed as numpy's repr, "np.float64(nan)", under NumPy 2.
    with pytest.raises(InputError, match=r"column 'score' row 1: nan is not a finite number"):
        rankflavor.evaluate({"q": {"a": 1}}, pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"],
                                                            "score": [1.0, float("nan")]}), "ndcg")
    with pytest.raises(InputError, match="not numbers"):
        rankflavor.evaluate(pd.DataFrame({"query_id": ["q"], "doc_id": ["a"], "relevance": ["x"]}), good_run, "ndcg")
    with pytest.raises(InputError, match="has no rows"):
        rankflavor.evaluate(pd.DataFrame({"query_id": [], "doc_id": [], "relevance": []}), good_run, "ndcg")


def test_wrong_input_types_and_arguments_are_usage_errors(files: tuple[Path, Path]) -> None:
    with pytest.raises(UsageError, match="qrels must be a path"):
        rankflavor.evaluate(42, files[1], "ndcg")
    with pytest.raises(UsageError, match="at least one measure"):
        rankflavor.evaluate(*files, [])
    with pytest.raises(FlavorError, match="Did you mean 'gain'"):
        rankflavor.evaluate(*files, "ndcg", gian="exp2")


def test_tables_built_by_a_caller_with_null_ids_are_refused_by_row() -> None:
    """The readers never make a null id; a caller building rankflavor.io.tables.Run or Qrels itself
    may, and alignment then raised a bare TypeError. Now: an InputError naming the first row."""
    import numpy as np
    import pyarrow as pa

    from rankflavor.errors import InputError
    from rankflavor.io.tables import Qrels, Run

    with pytest.raises(InputError, match=r"^run: 1 null docno\(s\), the first at row 2: every row needs a docno$"):
        Run(pa.array(["q", "q"]), pa.array(["a", None]), np.array([1.0, 0.5]))
    with pytest.raises(InputError, match=r"^mine\.txt: 2 null query id\(s\), the first at row 1"):
        Qrels(pa.array([None, "q", None]), pa.array(["a", "b", "c"]), np.array([1.0, 0.5, 1.0]), "mine.txt")
    with pytest.raises(InputError, match=r"^r\.txt:7: 1 null docno"):  # read from a file: its line
        Run(pa.array(["q"]), pa.array([None], pa.string()), np.array([1.0]), "r.txt", lines=np.array([7]))
