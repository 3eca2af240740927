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
