"""What ``judge`` reads: pairs (pool output, qrels, CSV/TSV, Parquet) and query/passage texts
(MS MARCO TSV, BEIR JSONL, Parquet, compressed), rankflavor.judge.texts."""

from __future__ import annotations

import bz2
import gzip
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rankflavor.errors import InputError
from rankflavor.judge.texts import read_pairs, read_texts
from rankflavor.pool import pool


def test_pool_output_in_both_its_formats_gives_its_pairs(tmp_path: Path) -> None:
    runs = [{"q1": {"a": 3.0, "b": 2.0, "c": 1.0}, "q2": {"x": 1.0, "y": 0.5}},
            {"q1": {"c": 3.0, "d": 2.0}, "q2": {"z": 2.0}}]
    result = pool(runs, depth=2)
    expected = set(zip(result.query.tolist(), result.doc.tolist(), strict=True))
    assert len(expected) == len(result) > 3
    for fmt in ("trec", "csv", "quepid"):
        path = tmp_path / f"pool.{fmt}"
        path.write_text(result.render(fmt))
        got = read_pairs(path)
        assert set(got.pairs) == expected and len(got.pairs) == len(expected) and got.duplicates == 0, fmt


@pytest.mark.parametrize(("text", "pairs"), [
    ("q1 0 d1 2\nq1 0 d2 0\nq2 Q0 d1 1\n", [("q1", "d1"), ("q1", "d2"), ("q2", "d1")]),
    ("q1 0 d1 2 human:nist\nq2 0 d9 1 llm:x@abc\n", [("q1", "d1"), ("q2", "d9")]),
    ("q1 0 d1\nq1 0 d2 3\n", [("q1", "d1"), ("q1", "d2")]),  # a stub partly filled in
    ("q1 d1\n\nq2 d2\n", [("q1", "d1"), ("q2", "d2")]),
    ("query-id\tcorpus-id\tscore\n1\tdocA\t1\n2\tdocB\t0\n", [("1", "docA"), ("2", "docB")]),  # BEIR qrels TSV
    ("QID,DocNo\nq,\"d,1\"\n", [("q", "d,1")]),
])
def test_pair_forms(tmp_path: Path, text: str, pairs: list[tuple[str, str]]) -> None:
    path = tmp_path / "pairs.txt"
    path.write_text(text)
    assert list(read_pairs(path).pairs) == pairs


def test_repeated_pairs_are_judged_once_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "pairs.txt"
    path.write_text("q1 0 d1\nq1 0 d1 2\nq2 0 d1\nq1 0 d1 0\n")
    got = read_pairs(path)
    assert got.pairs == (("q1", "d1"), ("q2", "d1")) and got.duplicates == 2


def test_pairs_from_parquet(tmp_path: Path) -> None:
    path = tmp_path / "pairs.parquet"
    pq.write_table(pa.table({"qid": [1, 1, 2], "docno": ["a", "b", "a"], "score": [1, 2, 3]}), path)
    assert read_pairs(path).pairs == (("1", "a"), ("1", "b"), ("2", "a"))


@pytest.mark.parametrize(("text", "line", "message"), [
    ("q1 0 d1\nq1\n", 2, "found 1 fields"),
    ("q1 d1\nq1 0 d2\n", 2, "mixes"),
    ("a,b\n1,2\n", 1, "needs a header"),
    ("query,doc\nq1,\n", 2, "empty query or doc"),
    ("", None, "has no pairs"),
])
def test_bad_pairs_name_the_line(tmp_path: Path, text: str, line: int | None, message: str) -> None:
    path = tmp_path / "pairs.txt"
    path.write_text(text)
    with pytest.raises(InputError, match=message) as info:
        read_pairs(path)
    assert info.value.line == line and info.value.source == str(path)


def test_msmarco_tsv_keeps_only_the_ids_asked_for(tmp_path: Path) -> None:
    path = tmp_path / "collection.tsv"
    path.write_text("0\tThe presence of communication\tamid scientific minds\n1\tManhattan Project\n2\tother\n")
    assert read_texts(path, {"0", "2", "7"}) == {"0": "The presence of communication\tamid scientific minds",
                                                 "2": "other"}


def test_beir_jsonl_with_title_and_compression(tmp_path: Path) -> None:
    rows = [{"_id": "d1", "title": "Aspirin", "text": "Aspirin is a drug.", "metadata": {}},
            {"_id": "d2", "title": "", "text": "No title here."}, {"_id": 3, "text": "An int id."}]
    text = "".join(json.dumps(r) + "\n" for r in rows)
    for name, data in (("corpus.jsonl", text.encode()), ("corpus.jsonl.gz", gzip.compress(text.encode())),
                       ("corpus.jsonl.bz2", bz2.compress(text.encode()))):
        path = tmp_path / name
        path.write_bytes(data)
        assert read_texts(path, None) == {"d1": "Aspirin\nAspirin is a drug.", "d2": "No title here.", "3": "An int id."}


def test_parquet_texts(tmp_path: Path) -> None:
    path = tmp_path / "queries.parquet"
    pq.write_table(pa.table({"id": ["q1", "q2"], "text": ["what is x", "who is y"]}), path)
    assert read_texts(path, {"q2"}) == {"q2": "who is y"}


@pytest.mark.parametrize(("name", "text", "line", "message"), [
    ("q.tsv", "q1\thello\nq2 no tab\n", 2, "no tab found"),
    ("q.tsv", "q1\thello\nq1\tbye\n", 2, "given twice with different texts"),
    ("c.jsonl", '{"_id": "a", "text": "x"}\n[1, 2]\n', 2, "not a JSON object"),
    ("c.jsonl", '{"_id": "a", "body": "x"}\n', 1, "needs an id"),
    ("c.jsonl", '{"_id": "a", "text": 5}\n', 1, "must be strings"),
])
def test_bad_texts_name_the_line(tmp_path: Path, name: str, text: str, line: int, message: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(InputError, match=message) as info:
        read_texts(path, None)
    assert info.value.line == line


def test_the_same_text_twice_is_harmless_and_a_missing_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "q.tsv"
    path.write_text("q1\thello\nq1\thello\n")
    assert read_texts(path, None) == {"q1": "hello"}
    with pytest.raises(InputError, match="file not found"):
        read_texts(tmp_path / "absent.tsv", None)


_PIECES = st.sampled_from(["q1", "d1", " ", "\t", ",", "0", "\n", '"', "{", "}", ":", "_id", "text", "query", "doc",
                           "é", "\r", "\x00", "[", "]"])


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_PIECES, max_size=30).map("".join), st.sampled_from(["p.txt", "p.tsv", "t.jsonl"]))
def test_any_text_is_read_or_refused_by_name(tmp_path: Path, text: str, name: str) -> None:
    # Ids are untrusted text: whatever a file holds, the readers give pairs/texts or an InputError
    # naming the file, never another exception.
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    for read in (read_pairs, lambda p: read_texts(p, None)):
        try:
            got = read(path)
        except InputError as exc:
            assert exc.source == str(path)
        else:
            assert got is not None


# -- mutation triage: reading pairs (_delimited, _whitespace, read_pairs, ...)
# Every message, line number and echoed line below is written out by hand from the input; the
# column lists are the ones the module docstring names (query, qid, query_id, query-id, queryid,
# topic; doc, docid, doc_id, docno, corpus-id, corpus_id, pid, passage_id).

_QUERY_NAMES = "query, qid, query_id, query-id, queryid, topic"
_DOC_NAMES = "doc, docid, doc_id, docno, corpus-id, corpus_id, pid, passage_id"


def _refusal(path: Path, read=read_pairs) -> InputError:
    with pytest.raises(InputError) as info:
        read(path)
    assert info.value.source == str(path)
    return info.value


def test_pairs_name_their_file_in_every_form(tmp_path: Path) -> None:
    for name, write in (("p.txt", lambda p: p.write_text("q1 0 d1\n")),
                        ("p.csv", lambda p: p.write_text("query,doc\nq1,d1\n")),
                        ("p.parquet", lambda p: pq.write_table(pa.table({"query": ["q1"], "doc": ["d1"]}), p))):
        path = tmp_path / name
        write(path)
        got = read_pairs(path)
        assert (got.pairs, got.duplicates, got.source) == ((("q1", "d1"),), 0, str(path)), name


def test_parquet_pairs_without_a_column_or_with_an_empty_id_are_refused_by_name(tmp_path: Path) -> None:
    path = tmp_path / "pairs.parquet"
    pq.write_table(pa.table({"docno": ["a"], "text": ["x"]}), path)
    err = _refusal(path)
    assert (err.line, err.message) == (None, f"has no query column; expected one of {_QUERY_NAMES} (columns: docno, text)")
    pq.write_table(pa.table({"QID": ["q1"], "title": ["x"]}), path)
    err = _refusal(path)
    assert (err.line, err.message) == (None, f"has no document column; expected one of {_DOC_NAMES} "
                                       "(columns: QID, title)")
    # The rows are counted as in a CSV export of the table: the header is line 1, row i is line i + 2.
    for qids, docs in ((["q1", None, "q3"], ["a", "b", "c"]), (["q1", "", "q3"], ["a", "b", "c"]),
                       (["q1", "q2", "q3"], ["a", " \t", "c"]), (["q1", "q2", "q3"], ["a", None, "c"])):
        pq.write_table(pa.table({"qid": qids, "docno": docs}), path)
        err = _refusal(path)
        assert (err.line, err.message, err.text) == (3, "has an empty id", None), (qids, docs)


def test_pairs_that_are_not_utf8_or_absent_are_refused_with_the_whole_message(tmp_path: Path) -> None:
    path = tmp_path / "pairs.txt"
    path.write_bytes(b"q1 0 d1\n\xff 0 d2\n")  # "q1 0 d1\n" is bytes 0-7: the bad one is byte 8
    err = _refusal(path)
    assert (err.line, err.message) == (None, "is not UTF-8 text (byte 8)")
    path.write_text("\n  \n\t\n")
    err = _refusal(path)
    assert (err.line, err.message) == (None, "has no pairs; expected 'QUERY 0 DOC' lines, qrels, or CSV/TSV "
                                       "with a query and a doc column")


@pytest.mark.parametrize("header", ["qid,score", "docno,score", "Topic,Text", "id,corpus_id"])
def test_a_csv_without_both_columns_is_refused_on_its_header_line(tmp_path: Path, header: str) -> None:
    # Only a header naming a query column AND a doc column makes a CSV of pairs; one of the two
    # is the same refusal as none, on the header's line, echoing it.
    path = tmp_path / "pairs.csv"
    path.write_text(f"{header}\nq1,1\n")
    err = _refusal(path)
    assert (err.line, err.text) == (1, header)
    assert err.message == (f"a CSV of pairs needs a header with a query column ({_QUERY_NAMES}) "
                           f"and a doc column ({_DOC_NAMES})")


def test_whitespace_pairs_refusals_echo_the_line(tmp_path: Path) -> None:
    path = tmp_path / "pairs.txt"
    path.write_text("q1 0 d1\nq1 0 d2 1 human x\n")
    err = _refusal(path)
    assert (err.line, err.text) == (2, "q1 0 d2 1 human x")
    assert err.message == ("expected 'QUERY 0 DOC' (a pool stub), 'QUERY 0 DOC GRADE [SOURCE]' (qrels) or "
                           "'QUERY DOC'; found 6 fields")
    path.write_text("q1 d1\n\nq2 0 d2\n")
    err = _refusal(path)
    assert (err.line, err.text, err.message) == (3, "q2 0 d2", "mixes 'QUERY DOC' lines with 'QUERY 0 DOC ...' lines")
    # Stubs, qrels and qrels with a source mix freely: all name the document third.
    path.write_text("q1 0 d1\nq1 0 d2 1\nq2 0 d3 0 llm:x\nq2 Q0 d4\n")
    assert read_pairs(path).pairs == (("q1", "d1"), ("q1", "d2"), ("q2", "d3"), ("q2", "d4"))


def test_delimited_pairs_skip_blank_rows_and_refuse_short_or_empty_ones(tmp_path: Path) -> None:
    path = tmp_path / "pairs.csv"
    path.write_text("query,doc\nq1,d1\n\n , \nq2,d2\n")  # blank rows inside the file are skipped, not the end
    assert read_pairs(path).pairs == (("q1", "d1"), ("q2", "d2"))
    path.write_text("doc,score,query\nd1,1,q1\nd2,1\n")  # the query is field 3; line 3 has 2
    err = _refusal(path)
    assert (err.line, err.text, err.message) == (3, "d2,1", "has 2 fields; the header has 3")
    path.write_text("query\tdoc\nq1\td1\nq1\t \n")
    err = _refusal(path)
    assert (err.line, err.text, err.message) == (3, "q1\t ", "has an empty query or doc id")


def test_delimited_pairs_beyond_the_csv_field_limit_are_refused_on_their_line(tmp_path: Path) -> None:
    path = tmp_path / "pairs.csv"
    path.write_text("query,doc\nq1,d1\nq2," + "d" * 200_000 + "\n")  # csv's default limit: 131,072
    err = _refusal(path)
    assert err.line == 3 and err.message.startswith("is not valid CSV/TSV: ")


@pytest.mark.parametrize(("header", "role", "names", "columns"), [
    ('doc,"query\nx"', "query", _QUERY_NAMES, "doc, query\nx"),
    ('query,"doc\nx"', "document", _DOC_NAMES, "query, doc\nx")])
def test_a_header_cell_is_the_whole_quoted_cell(tmp_path: Path, header: str, role: str, names: str,
                                                columns: str) -> None:
    # The first line reads 'doc,"query' (a query column), but the header's second cell is
    # "query<newline>x", which names no column.
    path = tmp_path / "pairs.csv"
    path.write_text(f"{header}\na,b\n")
    err = _refusal(path)
    assert (err.line, err.message) == (None, f"has no {role} column; expected one of {names} "
                                       f"(columns: {columns})")


def test_header_names_match_by_lower_case_exactly(tmp_path: Path) -> None:
    # "qıd" (dotless i) lower-cases to itself, so it is not "qid": the query is the topic column
    # ("QID" would be). Upper-casing first would fold it into "qid".
    path = tmp_path / "pairs.csv"
    path.write_text("qıd,Topic,DOCNO\nq,t,d\n", encoding="utf-8")
    assert read_pairs(path).pairs == (("t", "d"),)


def test_texts_refusals_name_the_file_and_both_lines(tmp_path: Path) -> None:
    path = tmp_path / "q.tsv"
    path.write_text("q0\tzero\nq1\thello\nq2\tx\nq1\tbye\n")
    err = _refusal(path, lambda p: read_texts(p, None))
    assert (err.line, err.message) == (4, "text id 'q1' is given twice with different texts (lines 2 and 4)")
    path = tmp_path / "c.jsonl"
    path.write_text('{"_id": "a", "text": "x"}\n{"_id": "b", "text": "y", "title": 3}\n')
    err = _refusal(path, lambda p: read_texts(p, None, "passage"))
    assert (err.line, err.message) == (2, "the passage text (and title) of 'b' must be strings")


# Bugs the triage found (each test failed before the fix): blank lines before a CSV/TSV header
# refused the file ("has no query column (columns: )"), and the header refusal named line 1; a
# byte-order mark made a BEIR qrels TSV silently read as 'QUERY 0 DOC' stubs (pair "\ufeffquery-id",
# "score"); a CSV with \r line ends, or an id past csv's field size limit in a first line, raised
# csv.Error (a traceback) instead of being read or refused by name.

def test_blank_lines_before_a_header_and_a_byte_order_mark_are_no_part_of_the_pairs(tmp_path: Path) -> None:
    path = tmp_path / "pairs.tsv"
    for data in (b"\n\nquery-id\tcorpus-id\tscore\n1\tdocA\t1\n",
                 b"\xef\xbb\xbfquery-id\tcorpus-id\tscore\n1\tdocA\t1\n",
                 b"\xef\xbb\xbf\r\n \r\nquery-id\tcorpus-id\tscore\r\n1\tdocA\t1\r\n",
                 b"\xef\xbb\xbf1 0 docA 1\n"):
        path.write_bytes(data)
        assert read_pairs(path).pairs == (("1", "docA"),), data
    path.write_bytes(b"\xef\xbb\xbfq1 0 d1\n\xff")  # the mark's 3 bytes count: the bad byte is byte 11
    assert _refusal(path).message == "is not UTF-8 text (byte 11)"
    path.write_text("\n\nqid,score\nq1,1\n")
    assert (_refusal(path).line, _refusal(path).text) == (3, "qid,score")
    path.write_text("\nquery,doc\nq1,d1\nq1,\n")
    assert (_refusal(path).line, _refusal(path).text) == (4, "q1,")


def test_old_mac_line_ends_and_long_ids_are_read(tmp_path: Path) -> None:
    path = tmp_path / "pairs.csv"
    path.write_text("query,doc\rq1,d1\r\rq2,\"d\r2\"\r", newline="")  # a quoted \r stays in the id
    assert read_pairs(path).pairs == (("q1", "d1"), ("q2", "d\r2"))
    path.write_text("query,doc\rq1,d1\rq2,\r", newline="")
    assert (_refusal(path).line, _refusal(path).message) == (3, "has an empty query or doc id")
    long = "d" * 200_000  # past csv's default field size limit (131,072)
    path.write_text(f"q1\t{long}\nq2\td2\n")
    assert read_pairs(path).pairs == (("q1", long), ("q2", "d2"))
    path.write_text(f"query,doc,{long}\nq1,d1,x\n")  # not a header: refused as one
    assert _refusal(path).line == 1
    path.write_text(f'query,doc,"a\n{long}"\nq1,d1,x\n')  # the header row itself is past the limit
    assert _refusal(path).message.startswith("is not valid CSV/TSV: ")
