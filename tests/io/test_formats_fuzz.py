"""Fuzz every reader: random bytes, and random mutations of a valid file, raise nothing but
:class:`~rankflavor.errors.InputError`, and every error names the file and its line, row or JSON
path (or is about the whole file: empty, no column of a role, corrupt compression, not Parquet).
"""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rankflavor.errors import InputError
from rankflavor.io.formats.jsonl import read_jsonl
from rankflavor.io.qrels import read_qrels
from rankflavor.io.run import read_run

#: Errors about the file as a whole, which no line, row or path could name.
WHOLE_FILE = re.compile(r"is empty|has no (judgment|result|rows|column|\w+ file)|holds no|needs a \w+ column|"
                        r"corrupt|not a readable Parquet|nested too deeply|snapshots|run tag", re.I)


def _parquet(columns: dict[str, list[object]]) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(pa.table(columns), sink)
    return sink.getvalue().to_pybytes()


#: (format, kind, file name, a valid file)
VALID: list[tuple[str, str, str, bytes]] = [
    ("trec", "qrels", "q.txt", b"q1 0 d1 2\nq1 0 d2 0\nq2 0 d1 1\n"),
    ("trec", "run", "r.txt", b"q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 1.5 t\nq2 Q0 d3 1 0.5 t\n"),
    ("msmarco", "run", "r.tsv", b"q1\td1\t1\nq1\td2\t2\nq2\td3\t1\n"),
    ("beir", "qrels", "test.tsv", b"query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t2\n"),
    ("csv", "qrels", "q.csv", b'query_id,doc_id,relevance\nq1,d1,2\n"q,2","d,2",1\n'),
    ("tsv", "run", "r.tsv", b"query_id\tdoc_id\tscore\nq1\td1\t2.5\nq2\td2\t-1e3\n"),
    ("jsonl", "qrels", "q.jsonl", b'{"query_id": "q1", "doc_id": "d1", "relevance": 2}\n{"query_id": 7, "doc_id": "d2", "relevance": 0}\n'),
    ("jsonl", "run", "r.jsonl", b'{"query_id": "q1", "doc_id": "d1", "score": 2.5}\n{"query_id": "q1", "doc_id": "d2", "rank": 2, "score": 1}\n'),
    ("json", "run", "r.json", b'{"q1": {"d1": 2.5, "d2": 1.5}, "q2": {"d3": 1}}'),
    ("quepid", "qrels", "ratings.csv", b"query,docid,rating\nshoes,d1,3\nboots,d2,0\nunrated\n"),
    ("quepid", "run", "snapshot.csv", b"Snapshot Name,Snapshot Time,Case ID,Query Text,Doc ID,Doc Position\n"
                                      b"s,2026,1,shoes,d1,1\ns,2026,1,shoes,d2,2\n"),
    ("es", "qrels", "req.json", json.dumps({"requests": [{"id": "q1", "request": {}, "ratings": [
        {"_index": "i", "_id": "d1", "rating": 1}, {"_index": "i", "_id": "d2", "rating": 0}]}]}).encode()),
    ("es", "run", "hits.json", json.dumps({"q1": {"hits": {"hits": [{"_id": "d1", "_score": 2.0},
                                                                    {"_id": "d2", "_score": None}]}}}).encode()),
    ("es", "run", "details.json", json.dumps({"details": {"q1": {"hits": [{"hit": {"_id": "d1", "_score": 1.5}}]}}}).encode()),
    ("parquet", "qrels", "q.parquet", _parquet({"query_id": ["q1", "q2"], "doc_id": ["d1", "d2"], "relevance": [1, 0]})),
    ("parquet", "run", "r.parquet", _parquet({"query_id": ["q1", "q1"], "doc_id": [1, 2], "rank": [1, 2]})),
    ("trec", "run", "r.txt.gz", gzip.compress(b"q1 Q0 d1 1 2.5 t\n")),
    ("jsonl", "run", "r.jsonl.bz2", bz2.compress(b'{"query_id": "q1", "doc_id": "d1", "score": 2.5}\n')),
    ("csv", "qrels", "q.csv.xz", lzma.compress(b"query_id,doc_id,relevance\nq1,d1,2\n")),
]
IDS = [f"{fmt}-{kind}-{name}" for fmt, kind, name, _ in VALID]


@st.composite
def mutated(draw: st.DrawFn, data: bytes) -> bytes:
    """``data`` after a few random edits: bytes replaced, inserted, deleted; lines doubled; a cut."""
    out = bytearray(data)
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["replace", "insert", "delete", "double", "truncate", "token"]))
        at = draw(st.integers(0, max(len(out) - 1, 0)))
        if op == "replace" and out:
            out[at] = draw(st.integers(0, 255))
        elif op == "insert":
            out[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif op == "delete" and out:
            del out[at : at + draw(st.integers(1, 8))]
        elif op == "double":
            lines = bytes(out).split(b"\n")
            k = draw(st.integers(0, len(lines) - 1))
            out = bytearray(b"\n".join([*lines[: k + 1], lines[k], *lines[k + 1 :]]))
        elif op == "truncate":
            del out[at:]
        else:  # a token that stresses a parser: NaN, a blank, a quote, a nested value, a null
            token = draw(st.sampled_from([b"NaN", b" ", b'"', b"{}", b"[1]", b"null", b"\t", b"\r", b"inf", b"1e999",
                                          b",", b"true", b"\xff", b"#", b"-"]))
            out[at:at] = token
    return bytes(out)


def _read(path: Path, fmt: str, kind: str) -> None:
    reader = read_qrels if kind == "qrels" else read_run
    try:
        table = reader(path, fmt)
    except InputError as exc:
        text = str(exc)
        assert text.startswith(str(path)), text
        assert exc.line is not None or "row " in exc.message or "$" in exc.message or WHOLE_FILE.search(exc.message), text
        return
    assert len(table) > 0 or table.listed_empty  # read: it holds rows, or names queries with none


_SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.mark.parametrize(("fmt", "kind", "name", "valid"), VALID, ids=IDS)
def test_valid_samples_read(tmp_path: Path, fmt: str, kind: str, name: str, valid: bytes) -> None:
    path = tmp_path / name
    path.write_bytes(valid)
    reader = read_qrels if kind == "qrels" else read_run
    assert len(reader(path, fmt)) >= 1


@pytest.mark.parametrize(("fmt", "kind", "name", "valid"), VALID, ids=IDS)
def test_mutations_raise_only_input_errors_that_name_where(tmp_path: Path, fmt: str, kind: str, name: str,
                                                           valid: bytes) -> None:
    @_SETTINGS
    @given(data=mutated(valid))
    def check(data: bytes) -> None:
        path = tmp_path / name
        path.write_bytes(data)
        _read(path, fmt, kind)

    check()


@pytest.mark.parametrize(("fmt", "kind", "name", "valid"), VALID[::2], ids=IDS[::2])
def test_random_bytes_raise_only_input_errors(tmp_path: Path, fmt: str, kind: str, name: str, valid: bytes) -> None:
    @settings(max_examples=25, deadline=None)
    @given(data=st.binary(max_size=200))
    def check(data: bytes) -> None:
        path = tmp_path / name
        path.write_bytes(data)
        _read(path, fmt, kind)

    check()


def test_errors_name_line_row_and_json_path(tmp_path: Path) -> None:
    cases = [
        ("q.csv", "csv", "qrels", b"query_id,doc_id,relevance\nq1,d1,2\nq1,d2,x\n", "q.csv:3: relevance 'x' is not a number"),
        ("q.jsonl", "jsonl", "qrels", b'{"query_id":"q1","doc_id":"d1","relevance":1}\n\n{"query_id":"q1","doc_id":null,"relevance":1}\n',
         "q.jsonl:3: doc_id null is not an id"),
        ("r.tsv", "msmarco", "run", b"q1\td1\t1\nq1\td2\n", "r.tsv:2: expected 3 tab-separated fields"),
        ("req.json", "es", "qrels", b'{"requests":[{"id":"q1","ratings":[{"_id":"d1","rating":"high"}]}]}',
         '$.requests[0].ratings[0].rating: rating "high" is not a number'),
        ("r.json", "json", "run", b'{"q1": {"d1": 1.0, "d2": [2]}}', '$["q1"]["d2"]: score [2] is not a number'),
        ("bad.json", "json", "run", b'{"q1": {"d1": 1.0,\n "d2": }}', "bad.json:2: is not valid JSON"),
        ("hits.json", "es", "run", b'{"q1": {"hits": {"hits": [{"_score": 1}]}}}', '$["q1"].hits.hits[0]: has no \'_id\''),
        ("s.csv", "quepid", "run", b"Snapshot Name,Snapshot Time,Case ID,Query Text,Doc ID,Doc Position\ns,t,1,q,d,first\n",
         "s.csv:2: Doc Position 'first' is not a number"),
    ]
    for name, fmt, kind, data, expected in cases:
        path = tmp_path / name
        path.write_bytes(data)
        reader = read_qrels if kind == "qrels" else read_run
        with pytest.raises(InputError) as info:
            reader(path, fmt)
        assert expected in str(info.value), (name, str(info.value))
    pq.write_table(pa.table({"query_id": ["q1", None], "doc_id": ["d1", "d2"], "score": [1.0, 2.0]}), tmp_path / "r.parquet")
    with pytest.raises(InputError, match=r"r.parquet: row 1: query_id is missing"):
        read_run(tmp_path / "r.parquet")


def test_jsonl_lines_pyarrow_reads_otherwise_are_named() -> None:
    # pyarrow's JSON reader crashed the process on a first line `null` (pyarrow 26), read a
    # `null` line as a row of nulls and two objects on one line as two rows: each is now the
    # line reader's, which names the line.
    one = b'{"query_id": "q1", "doc_id": "d1", "score": 1}'
    cases = [(b"null\n" + one + b"\n", "r.jsonl:1: expected a JSON object per line"),
             (one + b"\nnull\n", "r.jsonl:2: expected a JSON object per line"),
             (one + b" " + one + b"\n", "r.jsonl:1: is not valid JSON: Extra data")]
    for data, expected in cases:
        with pytest.raises(InputError, match=re.escape(expected)):
            read_jsonl("r.jsonl", data, "run", {})
    assert len(read_jsonl("r.jsonl", one + b"\n  " + one.replace(b"d1", b"d2") + b"\n", "run", {})) == 2


@pytest.mark.parametrize("fmt", ["quepid", None])
def test_a_header_that_is_not_csv_names_the_file(tmp_path: Path, fmt: str | None) -> None:
    # Found by the test above (2026-12-07): the format sniffer parsed the header line with no
    # source, so a quote left open there was reported as ":1: is not valid CSV".
    path = tmp_path / "ratings.csv"
    path.write_bytes(b'query,docid,"ating\nshoes,d1,3\nboots,d2,0\n')
    with pytest.raises(InputError) as err:
        read_qrels(path, fmt)
    assert str(err.value).startswith(str(path)) and err.value.line is not None
