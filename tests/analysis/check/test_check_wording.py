"""What ``check`` says, word for word, for inputs whose every finding is worked out by hand.

The other check tests assert codes, counts and lines; a mutation run of ``check/`` (issue 35's
split into facts and wording) left most message templates untested: a count, a query name or a
plural could change unseen. Each expected message below was written from the input and the
rule it reports (the ids named in byte order, counts with their plural), not from a run.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rankflavor.analysis.check import check

QRELS = "q1 0 a 2\nq1 0 b 0\nq2 0 c 0\nq3 0 d 1\nq1 0 a 1\n"
RUN = ("q1 Q0 a 1 3 t\n"     # line 1
       "q1 Q0 x 2 5 t\n"     # line 2: ranked 2nd, scores above the 1st
       "q2 Q0 c 1 0.5 t\n"   # lines 3-4: q2's only two rows, one score
       "q2 Q0 y 2 0.5 t\n"
       "q4 Q0 z 1 1 t\n"     # line 5: a query with no judgment
       "q1 Q0 a 3 1 t\n")    # line 6: a again for q1, another score
FIX = "trec_eval rejects this: choose duplicates=first or duplicates=best in eval, or remove the copies"


def _said(report, code: str) -> list[tuple[str, int | None, int, str]]:  # type: ignore[no-untyped-def]
    return [(str(f.severity), f.line, f.count, f.message) for f in report.findings if f.code == code]


def test_every_finding_of_a_small_pair_word_for_word(write: Callable[[str, str], Path]) -> None:
    report = check(str(write("qrels.txt", QRELS)), [str(write("run.txt", RUN))])
    dups = [(f.file.rsplit("/", 1)[-1], f.line, f.other_line, f.message) for f in report.findings if f.code == "duplicate"]
    assert dups == [
        ("qrels.txt", 5, 1, f"document 'a' appears again for query 'q1', with another grade (2 there, 1 here); {FIX}"),
        ("run.txt", 6, 1, f"document 'a' appears again for query 'q1', with another score (3 there, 1 here); {FIX}"),
    ]
    assert _said(report, "no_relevant") == [
        ("info", None, 1, "1 query with no judgment above grade 0 ('q2'): NDCG and AP are empty there (knob empty)")]
    grades = _said(report, "grade_scale")
    assert len(grades) == 1 and grades[0][2] == 5 and grades[0][3].startswith("grades 0: 2, 1: 2, 2: 1; ")
    assert _said(report, "equal_scores") == [
        ("warning", 3, 1, "1 query with one score for all documents ('q2'): their order is the tie rule's alone "
                          "(knob ties)")]
    assert _said(report, "tied_scores") == [
        ("info", 3, 2, "2 rows in 1 query share their score with another row of their query: the tie rule orders "
                       "them (trec_eval: docno descending; knob ties)")]
    assert _said(report, "ranks_contradict_scores") == [
        ("warning", 2, 1, "1 row in 1 query ('q1') score higher than the row ranked above: trec_eval orders by "
                          "score, tools that read the rank column give other numbers")]
    assert _said(report, "qrels_only_queries") == [
        ("warning", None, 1, "1 judged query not in the run ('q3'): scored 0 under missing=zero (trec_eval -c), "
                             "left out otherwise")]
    assert _said(report, "run_only_queries") == [
        ("warning", None, 1, "1 run query with no judgment ('q4'): no measure scores them")]
    # rows of q1 and q2 (the judged queries the run has): a, x, a, c, y; judged a, a, c
    assert _said(report, "judged_coverage") == [
        ("info", None, 3, "3 of 5 rows in judged queries are judged (60.0%); 2 are not (unjudged: knob unjudged)")]
    assert _said(report, "never_judged_docs") == [
        ("info", None, 3, "3 distinct run docnos are judged for no query at all")]  # x, y, z
    assert not _said(report, "queries_none_judged") and not _said(report, "looks_like_qrels")
    assert report.exit_code == 3 and report.total("duplicate") == 2


def test_many_queries_are_named_five_then_counted(write: Callable[[str, str], Path]) -> None:
    # seven judged queries the run lacks; named in byte order ('q10' before 'q2'), five of them
    qrels = "".join(f"q{k} 0 d 1\n" for k in (1, 2, 3, 10, 11, 12, 13)) + "r 0 d 1\n"
    report = check(str(write("qrels.txt", qrels)), [str(write("run.txt", "r Q0 d 1 1 t\nr Q0 e 2 0 t\n"))])
    assert _said(report, "qrels_only_queries") == [
        ("warning", None, 7, "7 judged queries not in the run ('q1', 'q10', 'q11', 'q12', 'q13', ...): scored 0 "
                             "under missing=zero (trec_eval -c), left out otherwise")]
    assert _said(report, "judged_coverage") == [
        ("info", None, 1, "1 of 2 rows in judged queries are judged (50.0%); 1 are not (unjudged: knob unjudged)")]


def test_grades_off_a_declared_scale_listed_to_the_limit(write: Callable[[str, str], Path]) -> None:
    qrels = "q1 0 a 5\nq1 0 b 7\nq1 0 c 1\nq1 0 d 9\nq1 0 e 2\n"
    report = check(str(write("qrels.txt", qrels)), [], scale="trec_dl", limit=2)
    assert _said(report, "off_scale") == [
        ("error", 1, 1, "grade 5 is not on the trec_dl scale (grades 0, 1, 2, 3)"),
        ("error", 2, 1, "grade 7 is not on the trec_dl scale (grades 0, 1, 2, 3)"),
        ("error", None, 1, "1 more grades off the trec_dl scale not listed"),
    ]


def test_duplicates_past_the_limit_are_counted(write: Callable[[str, str], Path]) -> None:
    # four copies of (q1, a) after the first: two with its grade, two with another
    qrels = "q1 0 a 1\nq1 0 a 1\nq1 0 a 2\nq1 0 a 1\nq1 0 a 3\n"
    report = check(str(write("qrels.txt", qrels)), [], limit=1)
    assert _said(report, "duplicate") == [
        ("error", 2, 1, f"document 'a' appears again for query 'q1', with the same grade; {FIX}"),
        ("error", None, 3, "3 more duplicate rows not listed (4 in all, 2 with another grade than their first copy)"),
    ]


def test_the_json_records_of_files_and_overlap(write: Callable[[str, str], Path]) -> None:
    qrels, run = str(write("qrels.txt", QRELS)), str(write("run.txt", RUN))
    data = check(qrels, [run]).to_dict()
    assert data["files"] == [
        {"path": qrels, "kind": "qrels", "rows": 5, "queries": 3, "comments": 0, "blank_lines": 0, "read": "columnar"},
        {"path": run, "kind": "run", "rows": 6, "queries": 3, "comments": 0, "blank_lines": 0, "read": "columnar"},
    ]
    assert data["overlap"] == [{"run": run, "common_queries": 2, "qrels_only_queries": 1, "run_only_queries": 1,
                                "run_rows": 6, "rows_in_common_queries": 5, "judged_rows": 3, "unjudged_rows": 2,
                                "judged_share": 0.6, "never_judged_docs": 3}]
    # each code's count: the duplicate of each file, one query of each kind, the run's 3 unjudged docnos
    counts = data["counts"]  # (per severity, per code)
    assert (counts["error"]["duplicate"], counts["warning"]["equal_scores"], counts["info"]["tied_scores"],
            counts["info"]["never_judged_docs"]) == (2, 1, 2, 3)
    assert data["status"] == "errors" and data["exit_code"] == 3 and data["listed_per_code"] == 100


def test_a_listing_past_its_cap_counts_the_rest() -> None:
    from rankflavor.analysis.check.findings import Finding, Severity, count_of, listed, shown

    lines = [Finding(Severity.ERROR, "malformed_line", "f", k, "bad", 1) for k in range(1, 6)]
    cut = listed(lines, 3, Severity.ERROR, "malformed_line", "f", "malformed lines")
    assert cut[:3] == lines[:3] and cut[3] == Finding(Severity.ERROR, "malformed_line", "f", None,
                                                      "2 more malformed lines not listed", 2)
    assert listed(lines, 5, Severity.ERROR, "malformed_line", "f", "x") == lines
    assert [count_of(1, "query", "queries"), count_of(2, "query", "queries"), count_of(0, "row"), count_of(2, "row")] == [
        "1 query", "2 queries", "0 rows", "2 rows"]
    # an id is quoted, then cut to 80 characters with "..." when longer
    assert shown("x" * 78) == "'" + "x" * 78 + "'" and shown("x" * 79) == "'" + "x" * 76 + "..."


def test_runs_given_in_memory_and_csv_columns_are_named_and_read(write: Callable[[str, str], Path]) -> None:
    qrels = str(write("qrels.txt", "q1 0 a 1\n"))
    csv = str(write("run.csv", "qid,docid,sim\nq1,a,2\nq1,b,1\n"))
    report = check(qrels, [csv, {"q1": {"a": 1.0}}], columns="query=qid,doc=docid,score=sim")
    assert [(f.path, f.kind, f.rows, f.read) for f in report.files] == [
        (qrels, "qrels", 1, "columnar"), (csv, "run", 2, "reader"), ("run 2 (dict)", "run", 1, "reader")]
    assert [o.judged_rows for o in report.overlaps] == [1, 1]


def test_formats_named_or_guessed_and_inputs_that_fail(write: Callable[[str, str], Path], tmp_path: Path) -> None:
    # a CSV run whose name says nothing: read as CSV because --run-format says so
    qrels = str(write("judged.data", "query_id,doc_id,relevance\nq1,a,1\nq2,b,0\n"))
    run = str(write("ranking.data", "query_id,doc_id,score\nq1,a,2\nq1,c,1\n"))
    report = check(qrels, [run], qrels_format="csv", run_format="csv")
    assert [f.to_dict() for f in report.files] == [
        {"path": qrels, "kind": "qrels", "rows": 2, "queries": 2, "comments": 0, "blank_lines": 0, "read": "reader"},
        {"path": run, "kind": "run", "rows": 2, "queries": 1, "comments": 0, "blank_lines": 0, "read": "reader"}]
    assert [(o.common_queries, o.qrels_only, o.judged_rows) for o in report.overlaps] == [(1, 1, 1)]
    # judgments in memory are named by their type; a file that is not there fails, named
    missing = str(tmp_path / "nowhere.run")
    report = check({"q1": {"a": 1}}, [missing])
    assert [(f.path, f.kind, f.rows, f.read) for f in report.files] == [
        ("qrels (dict)", "qrels", 1, "reader"), (missing, "run", 0, "failed")]
    failed = [f for f in report.findings if f.file == missing]
    assert [(f.severity, f.code, f.line) for f in failed] == [("error", "unreadable", None)] and report.exit_code == 3


def test_one_columns_option_names_both_files_columns(write: Callable[[str, str], Path]) -> None:
    # as eval reads it: grade for the judgments, score for the run (check refused "score" for the
    # judgments' reader, a usage error eval never gives)
    qrels = str(write("q.csv", "query_id,doc_id,label\nq1,a,1\n"))
    run = str(write("r.csv", "query_id,doc_id,sim\nq1,a,2\nq1,b,1\n"))
    report = check(qrels, [run], columns="grade=label,score=sim")
    assert [(f.rows, f.read) for f in report.files] == [(1, "reader"), (2, "reader")]
    assert [(o.judged_rows, o.unjudged_rows) for o in report.overlaps] == [(1, 1)]


def test_the_grade_scale_found_and_grades_off_any(write: Callable[[str, str], Path]) -> None:
    def said(text: str) -> dict[str, list[tuple[str, int | None, int, str]]]:
        report = check(str(write("qrels.txt", text)))
        return {code: _said(report, code) for code in ("grade_scale", "negative_grades", "fractional_grades",
                                                       "looks_like_run")}

    # the named scale with the fewest grades that holds them all; "exactly" when it has no other
    assert said(QRELS)["grade_scale"] == [
        ("info", None, 5, "grades 0: 2, 1: 2, 2: 1; exactly the beir: grades {0,1,2}, relevant >= 1, G = 2")]
    assert said("q1 0 a 0\nq1 0 b 3\n")["grade_scale"] == [
        ("info", None, 2, "grades 0: 1, 3: 1; within the trec_dl: grades {0,1,2,3}, relevant >= 2, G = 3")]
    # a negative grade is left out of the match, and named
    found = said("q1 0 a 1\nq1 0 b -1\nq1 0 c 0\n")
    assert found["grade_scale"] == [
        ("info", None, 3, "grades -1: 1, 0: 1, 1: 1; exactly the msmarco: grades {0,1}, relevant >= 1, G = 1")]
    assert found["negative_grades"] == [
        ("info", 2, 1, "1 judgments have a negative grade: trec_eval reads them as pooled but unjudged (gain 0, "
                       "never relevant, not judged non-relevant for bpref; knob negatives)")]
    found = said("q1 0 a 1\nq1 0 b 0.5\nq1 0 c 0\n")
    assert found["grade_scale"] == [
        ("info", None, 3, "grades 0: 1, 0.5: 1, 1: 1; no named scale holds them (named: trec_dl, msmarco, beir, "
                          "ecommerce); declare your own Scale")]
    assert found["fractional_grades"] == [("info", 2, 1, "1 grades are not whole numbers (aggregated raters?)")]
    # more distinct grades than a label scale has: scores or ranks given as judgments
    found = said("".join(f"q1 0 d{g} {g}\n" for g in range(12)))
    assert found["looks_like_run"] == [
        ("warning", None, 12, "12 distinct grades (0 rows not whole numbers): the grade column looks like a run's "
                              "scores or ranks, not a label scale; was a run given as QRELS?")]
    assert found["grade_scale"] == []
