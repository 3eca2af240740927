"""One rule for the length of an id (issue #32): every reader reads an id of any length.

TREC text, JSON, JSONL, Parquet and Elasticsearch documents read a 16 MB docno; the delimited
readers (CSV, TSV, BEIR, Quepid) used Python's :mod:`csv`, which stops at its field size limit
(131,072 characters), a switch of the whole process that library code must not set. They now
read such a file with :func:`rankflavor.io.formats.csvtext.records`, held here to :mod:`csv`
record by record (rows, lines, errors and their lines) on random texts, and every format of
README's Formats table reads an id longer than that limit, exactly.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankflavor
from rankflavor.errors import InputError
from rankflavor.io.formats.csvtext import CsvSyntaxError, records

LIMIT = csv.field_size_limit()  # (read, never set)
LONG = 2 * LIMIT + 7  # an id no csv field may hold


def by_csv(text: str, delimiter: str) -> list[tuple[int, list[str]]] | tuple[int, str]:
    """csv's records with the line each starts on, or (line_num, message) of its error."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    out, start = [], 1
    try:
        for row in reader:
            out.append((start, row))
            start = reader.line_num + 1
    except csv.Error as exc:
        return reader.line_num, str(exc)
    return out


def by_records(text: str, delimiter: str) -> list[tuple[int, list[str]]] | tuple[int, str]:
    try:
        return list(records(text, delimiter))
    except CsvSyntaxError as exc:
        return exc.line, str(exc)


@settings(max_examples=400, deadline=None)
@given(text=st.lists(st.sampled_from(["a", "é", " ", ",", "\t", '"', '""', "\r", "\n", "\r\n", "\x00"]),
                     max_size=30).map("".join),
       delimiter=st.sampled_from([",", "\t"]))
def test_records_are_csvs_records(text: str, delimiter: str) -> None:
    assert by_records(text, delimiter) == by_csv(text, delimiter)


@pytest.mark.parametrize("text", ['"a""', '"ab\n', '"a"b,c\n', 'x\n"a" ,b', '"x\ny"z', '"a\r\nb"\r\n"c', "a,b\r\r\nc,",
                                  '"', '""', ',,\n', '"a"\r"b"', "\n\n"])
def test_records_on_the_edge_cases(text: str) -> None:
    assert by_records(text, ",") == by_csv(text, ",")


def _table(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_a_long_field_mid_file_is_read_once_and_later_errors_name_their_line(tmp_path: Path) -> None:
    long = "d" * LONG
    text = f'query_id,doc_id,score\nq1,a,1\nq1,"{long}\n",2\nq2,b,3\nq2,"x\n""y""",4\n'
    run = rankflavor.read_run(str(_table(tmp_path / "r.csv", text)))
    assert run.doc.to_pylist() == ["a", long + "\n", "b", 'x\n"y"'] and len(run.query) == 4
    bad = _table(tmp_path / "bad.csv", text + "q3,c\n")
    with pytest.raises(InputError, match=r"bad\.csv:8: expected 3 fields"):
        rankflavor.read_run(str(bad))
    unclosed = _table(tmp_path / "open.csv", text + 'q3,"c,5\n')
    with pytest.raises(InputError, match=r"open\.csv:8: is not valid CSV: unexpected end of data"):
        rankflavor.read_run(str(unclosed))
    assert csv.field_size_limit() == LIMIT  # nothing process-wide was switched


def _files(tmp: Path, q: str, d: str) -> list[tuple[str, Path, str | None]]:
    """(kind, path, format) of judgments and runs holding query ``q`` and document ``d``, in every
    format of README's Formats table (one more query and document besides)."""
    out: list[tuple[str, Path, str | None]] = []

    def add(kind: str, name: str, text: str, fmt: str | None) -> None:
        out.append((kind, _table(tmp / name, text), fmt))

    add("qrels", "q.trec", f"{q} 0 {d} 2\nq2 0 b 1\n", "trec")
    add("run", "r.trec", f"{q} Q0 {d} 1 2.5 t\nq2 Q0 b 1 1.0 t\n", "trec")
    add("qrels", "q.msmarco", f"{q}\t0\t{d}\t2\nq2\t0\tb\t1\n", "msmarco")
    add("run", "r.msmarco", f"{q}\t{d}\t1\nq2\tb\t1\n", "msmarco")
    add("qrels", "test.tsv", f"query-id\tcorpus-id\tscore\n{q}\t{d}\t2\nq2\tb\t1\n", "beir")
    add("run", "beir.json", json.dumps({q: {d: 2.5}, "q2": {"b": 1.0}}), "beir")
    add("qrels", "q.json", json.dumps({q: {d: 2}, "q2": {"b": 1}}), "json")
    add("run", "r.json", json.dumps({q: {d: 2.5}, "q2": {"b": 1.0}}), "json")
    for fmt, sep in (("csv", ","), ("tsv", "\t")):
        add("qrels", f"q.{fmt}", sep.join(("query_id", "doc_id", "relevance")) + f"\n{q}{sep}{d}{sep}2\nq2{sep}b{sep}1\n",
            fmt)
        add("run", f"r.{fmt}", sep.join(("query_id", "doc_id", "score")) + f'\n"{q}"{sep}"{d}"{sep}2.5\nq2{sep}b{sep}1\n',
            fmt)
    rows = [{"query_id": q, "doc_id": d}, {"query_id": "q2", "doc_id": "b"}]
    add("qrels", "q.jsonl", "".join(json.dumps({**r, "relevance": g}) + "\n" for r, g in zip(rows, (2, 1), strict=True)),
        "jsonl")
    add("run", "r.jsonl", "".join(json.dumps({**r, "score": s}) + "\n" for r, s in zip(rows, (2.5, 1.0), strict=True)),
        "jsonl")
    for kind, value in (("qrels", "relevance"), ("run", "score")):
        path = tmp / f"{kind}.parquet"
        pq.write_table(pa.table({"query_id": [q, "q2"], "doc_id": [d, "b"], value: [2.5 if kind == "run" else 2, 1]}),
                       path)
        out.append((kind, path, "parquet"))
    add("qrels", "ratings.csv", f"query,docid,rating\n{q},{d},2\nq2,b,1\n", "quepid")
    add("run", "snapshot.csv", "Snapshot Name,Snapshot Time,Case ID,Query Text,Doc ID,Doc Position,body\n"
        f"base,2026-12-02,8,{q},{d},1,{'x' * LONG}\nbase,2026-12-02,8,q2,b,1,short\n", "quepid")
    add("qrels", "rank_eval.json", json.dumps({"requests": [
        {"id": q, "ratings": [{"_index": "i", "_id": d, "rating": 2}]},
        {"id": "q2", "ratings": [{"_index": "i", "_id": "b", "rating": 1}]}]}), "es")
    add("run", "hits.json", json.dumps({q: {"hits": {"hits": [{"_id": d, "_score": 2.5}]}},
                                        "q2": {"hits": {"hits": [{"_id": "b", "_score": 1.0}]}}}), "es")
    return out


FORMATS = {"trec", "msmarco", "beir", "json", "csv", "tsv", "jsonl", "parquet", "quepid", "es"}


def test_these_are_the_formats_of_readmes_table() -> None:
    import re

    readme = Path(__file__).resolve().parents[2] / "README.md"
    if not readme.exists():
        pytest.skip("no README.md beside tests/")
    section = readme.read_text(encoding="utf-8").split("## Formats", 1)[1].split("\n## ", 1)[0]
    named = {name for row in re.findall(r"^\| (`[^|]+`) \|", section, flags=re.M) for name in re.findall(r"`(\w+)`", row)}
    assert named == FORMATS


def test_every_format_reads_an_id_longer_than_csvs_limit(tmp_path: Path) -> None:
    q, d = "Q" * LONG, "é" * LONG  # (the docno in 2-byte characters: twice as many bytes)
    files = _files(tmp_path, q, d)
    assert {fmt for _, _, fmt in files} == FORMATS  # README's table, every row
    assert {(kind, fmt) for kind, _, fmt in files} >= {(k, f) for k in ("qrels", "run") for f in FORMATS - {"beir"}}
    read = {"qrels": rankflavor.read_qrels, "run": rankflavor.read_run}
    for kind, path, fmt in files:
        table = read[kind](str(path), format=fmt)
        pairs = sorted(zip(table.query.to_pylist(), table.doc.to_pylist(), strict=True))
        assert pairs == sorted([(q, d), ("q2", "b")]), (kind, fmt)
    qrels = rankflavor.read_qrels(str(tmp_path / "q.csv"))
    for kind, path, fmt in files:
        if kind == "run":  # and the long ids are ids: they meet their judgments
            assert rankflavor.evaluate(qrels, rankflavor.read_run(str(path), format=fmt), "P@1")[0].mean == 1.0
    assert csv.field_size_limit() == LIMIT


def test_rating_files_read_an_id_of_any_length(tmp_path: Path) -> None:
    """The rater layouts read by csv (``query,doc,rater,grade`` and Quepid's judges) take the
    delimited readers' rows: a long id is read (it was a traceback: csv.Error past the limit),
    and bad quoting is an error naming its line."""
    from rankflavor.raters.files import read_ratings

    q = "Q" * LONG
    path = _table(tmp_path / "ratings.csv", f"query,doc,rater,grade\n{q},d1,r1,1\n{q},d1,r2,2\nq2,b,r1,1\n")
    assert read_aggregated_ids(read_ratings(str(path))) == {(q, "d1"), ("q2", "b")}
    judges = _table(tmp_path / "judges.csv", f"query,docid,alice,bob\n{q},d1,1,2\n")
    assert read_aggregated_ids(read_ratings(str(judges))) == {(q, "d1")}
    bad = _table(tmp_path / "bad.csv", 'query,doc,rater,grade\nq1,d1,r1,1\n"q2"x,b,r1,1\n')
    with pytest.raises(InputError, match=r"bad\.csv:3: is not valid CSV"):
        read_ratings(str(bad))


def read_aggregated_ids(ratings: object) -> set[tuple[str, str]]:
    from rankflavor.raters.ratings import Ratings

    assert isinstance(ratings, Ratings)
    return {(str(q), str(d)) for q, d in zip(ratings.query, ratings.doc, strict=True)}
