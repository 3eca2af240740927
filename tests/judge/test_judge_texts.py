"""What ``judge`` reads: pairs (pool output, qrels, CSV/TSV, Parquet) and query/passage texts
(MS MARCO TSV, BEIR JSONL, Parquet, compressed), rankflavor.judge.texts."""

from __future__ import annotations

import bz2
import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rankflavor.analysis.judgments.pool import pool
from rankflavor.errors import InputError
from rankflavor.judge.texts import read_pairs, read_texts


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

# -- mutation triage: reading texts (_open_text, read_texts, _tsv, _jsonl, _parquet, _column)

_TSV = "q1\tcafé au lait \t\r\n\nq2\tMAX\rq3\tthird\n"
# by hand: lines end at \r\n, \n or a lone \r (Python's universal newlines, the plain file's own
# rule); only the line end is cut from the text (its trailing blanks and X's are text); the blank
# line is skipped, not the end of the file
_TSV_TEXTS = {"q1": "café au lait \t", "q2": "MAX", "q3": "third"}
_JSONL = ('{"_id": "d1", "title": "Aspirin", "text": "Aspirin is a drug."}\r\n\n'
          '{"id": "d2", "text": "naïve MAX"}\r{"pid": 3, "title": " ", "text": "x"}\n')
_JSONL_TEXTS = {"d1": "Aspirin\nAspirin is a drug.", "d2": "naïve MAX", "3": "x"}


def _compressed(data: bytes, codec: str | None) -> bytes:
    import lzma

    from rankflavor.io.compression import compress

    return data if codec is None else lzma.compress(data) if codec == "xz" else compress(data, codec)


@pytest.fixture
def c_locale() -> Iterator[None]:
    # The texts are UTF-8 whatever the locale: read them under the C locale, whose codec is ASCII
    # (a text opened without an explicit encoding then fails on the first é).
    import locale

    old = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")
    try:
        yield
    finally:
        locale.setlocale(locale.LC_CTYPE, old)


@pytest.mark.parametrize("codec", [None, "gzip", "bz2", "xz", "zstd"])
@pytest.mark.usefixtures("c_locale")
def test_texts_read_alike_in_every_codec_and_locale(tmp_path: Path, codec: str | None) -> None:
    end = {None: "", "gzip": ".gz", "bz2": ".bz2", "xz": ".xz", "zstd": ".zst"}[codec]
    for name, text, expected in (("queries.tsv", _TSV, _TSV_TEXTS), ("corpus.jsonl", _JSONL, _JSONL_TEXTS),
                                 ("corpus.json", _JSONL, _JSONL_TEXTS)):
        path = tmp_path / (name + end)
        path.write_bytes(_compressed(text.encode(), codec))
        assert read_texts(path) == expected, name
        one = sorted(expected)[1]
        assert read_texts(path, {one, "absent"}) == {one: expected[one]}, name


def _texts_refusal(path: Path, **kwargs: Any) -> InputError:
    with pytest.raises(InputError) as info:
        read_texts(path, **kwargs)
    assert info.value.source == str(path)
    return info.value


_ID_FIELDS = "_id, id, docid, doc_id, qid, query_id, pid"


@pytest.mark.parametrize(("name", "data", "line", "message", "text"), [
    ("q.tsv", b"q1\ta\nq2 no tab X \n", 2,
     "expected 'ID<TAB>TEXT' (MS MARCO queries.tsv / collection.tsv); no tab found", "q2 no tab X "),
    ("q.tsv", b"q1\ta\n\tb\n", 2, "has an empty id", None),
    ("q.tsv", b"q1\ta\r\nq1\tb\r\n", 2, "text id 'q1' is given twice with different texts (lines 1 and 2)", None),
    ("q.tsv", b"q1\t\xff\n", None, "is not UTF-8 text (byte 3 of a block)", None),  # "q1\t" is bytes 0-2
    ("c.jsonl", b'{"_id": "a", "text": "x"}\n\nX\n', 3, "is not a JSON object: Expecting value", "X"),
    ("c.jsonl", b"oops \t\r\n", 1, "is not a JSON object: Expecting value", "oops \t"),
    ("c.jsonl", b"[1, 2] \t\n", 1, "is not a JSON object", "[1, 2] \t"),
    ("c.jsonl", b'{"text": "x", "title": "t"} \t\n', 1, f"needs an id ({_ID_FIELDS}) and 'text'",
     '{"text": "x", "title": "t"} \t'),
    ("c.jsonl", b'{"_id": "a", "title": "t"}\n', 1, f"needs an id ({_ID_FIELDS}) and 'text'",
     '{"_id": "a", "title": "t"}'),
    ("c.jsonl", b'{"_id": "a", "text": "x"}\n{"_id": " ", "text": "y"}\n', 2, "has an empty id", None),
    ("c.jsonl", b'{"_id": "a", "text": "x"}\n{"id": "a", "text": "y"}\n', 2,
     "text id 'a' is given twice with different texts (lines 1 and 2)", None),
])
def test_bad_texts_are_refused_in_these_words(tmp_path: Path, name: str, data: bytes, line: int | None,
                                              message: str, text: str | None) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    error = _texts_refusal(path)
    assert (error.line, error.message, error.text) == (line, message, text)


def test_unreadable_and_corrupt_text_files_are_refused_by_name(tmp_path: Path) -> None:
    import errno
    import lzma
    import os

    assert _texts_refusal(tmp_path / "absent.tsv").message == "file not found"
    assert _texts_refusal(tmp_path).message == "is a directory, expected a file"
    (tmp_path / "q.tsv").write_text("q1\ta\n")
    assert _texts_refusal(tmp_path / "q.tsv" / "x.tsv").message == f"cannot read file: {os.strerror(errno.ENOTDIR)}"
    data = b"q1\ta\n" * 50
    ended = "Compressed file ended before the end-of-stream marker was reached"  # gzip's and lzma's EOFError
    for name, bad, message in (("q.tsv.gz", gzip.compress(data)[:-10], f"compressed data is corrupt: {ended}"),
                               ("q.tsv.bz2", b"BZh9" + data, "compressed data is corrupt: Invalid data stream"),
                               ("q.tsv.xz", lzma.compress(data)[:-10], f"compressed data is corrupt: {ended}"),
                               ("q.tsv.gz", gzip.compress(b"q1\t\xff\n"), "is not UTF-8 text (byte 3 of a block)")):
        path = tmp_path / name
        path.write_bytes(bad)
        error = _texts_refusal(path)
        assert (error.line, error.message) == (None, message), name


def test_zstd_texts_that_are_not_utf8_are_refused_by_name(tmp_path: Path) -> None:
    # zstd is decompressed whole (io.source.read_bytes): the offset is the byte's in the file
    path = tmp_path / "q.tsv.zst"
    path.write_bytes(_compressed(b"q1\ta\nq2\t\xff\n", "zstd"))
    error = _texts_refusal(path)
    assert (error.line, error.message) == (None, "is not UTF-8 text (byte 8)")  # "q1\ta\nq2\t" is bytes 0-7


def test_parquet_texts_with_titles_rows_and_refusals(tmp_path: Path) -> None:
    path = tmp_path / "corpus.parquet"
    pq.write_table(pa.table({"DocID": ["d1", "d2", "d3"], "title": ["Aspirin", "", None],
                             "Text": ["Aspirin is a drug.", "t2", "t3"]}), path)
    assert read_texts(path) == {"d1": "Aspirin\nAspirin is a drug.", "d2": "t2", "d3": "t3"}
    assert read_texts(path, {"d1"}) == {"d1": "Aspirin\nAspirin is a drug."}
    # rows are numbered as lines of a file whose line 1 is the header: row 0 is line 2
    cases = [({"_id": ["a", "a"], "text": ["x", "y"]}, 3, "text id 'a' is given twice with different texts "
              "(lines 2 and 3)"),
             ({"_id": ["a", " "], "text": ["x", "y"]}, 3, "has an empty id"),
             ({"name": ["a"], "text": ["x"]}, None, f"has no id column; expected one of {_ID_FIELDS} "
              "(columns: name, text)"),
             ({"_id": ["a"], "body": ["x"]}, None, "has no text column; expected one of text (columns: _id, body)")]
    for columns, line, message in cases:
        pq.write_table(pa.table(columns), path)
        error = _texts_refusal(path)
        assert (error.line, error.message) == (line, message)
    assert _texts_refusal(tmp_path / "absent.parquet").message == "file not found"
    (tmp_path / "bad.parquet").write_text("q1\ta\n")
    error = _texts_refusal(tmp_path / "bad.parquet")
    assert error.line is None and error.message.startswith("cannot read as Parquet: ")


@pytest.mark.parametrize("codec", [None, "gzip", "bz2", "xz", "zstd"])
def test_a_byte_order_mark_is_not_read_into_the_first_id(tmp_path: Path, codec: str | None) -> None:
    """An MS MARCO collection saved by an editor that writes a UTF-8 byte-order mark: passage 0 is
    passage "0", not "\\ufeff0"; likewise the first JSON line of a BEIR corpus."""
    end = {None: "", "gzip": ".gz", "bz2": ".bz2", "xz": ".xz", "zstd": ".zst"}[codec]
    tsv = tmp_path / ("collection.tsv" + end)
    tsv.write_bytes(_compressed(b"\xef\xbb\xbf0\tfirst passage\n1\tsecond\n", codec))
    assert read_texts(tsv) == {"0": "first passage", "1": "second"}
    jsonl = tmp_path / ("corpus.jsonl" + end)
    jsonl.write_bytes(_compressed(b'\xef\xbb\xbf{"_id": "d0", "text": "t"}\n', codec))
    assert read_texts(jsonl) == {"d0": "t"}


def test_pairs_from_a_path_or_in_memory_name_their_source(tmp_path: Path) -> None:
    """as_pairs reads a path as read_pairs does (the file named as the source) and names pairs
    given in memory "pairs"; repeats are counted either way."""
    from rankflavor.judge.texts import as_pairs

    path = tmp_path / "to_judge.txt"
    path.write_text("q1 d1\nq1 d2\nq1 d1\n")
    from_file = as_pairs(path)
    assert from_file == read_pairs(path) and from_file.source == str(path)
    assert (from_file.pairs, from_file.duplicates) == ((("q1", "d1"), ("q1", "d2")), 1)
    in_memory = as_pairs([("q1", "d1"), (2, "d9"), ("q1", "d1")])
    assert (in_memory.pairs, in_memory.duplicates, in_memory.source) == ((("q1", "d1"), ("2", "d9")), 1, "pairs")
    assert as_pairs(in_memory) is in_memory
