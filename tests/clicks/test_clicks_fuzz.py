"""Fuzz the UBI log readers as tests/io/test_formats_fuzz.py fuzzes the others: random bytes, random
mutations of a valid log and arbitrary JSON documents raise nothing but
:class:`~rankflavor.errors.InputError`, naming the file and its line, row or JSON path (or the
whole file); what reads gives judgments (the click model never fails on what the reader took)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rankflavor.clicks import coec, read_ubi_events, read_ubi_queries
from rankflavor.errors import InputError

from ..io.test_formats_fuzz import WHOLE_FILE, mutated
from .clicks_cases import EVENTS, QUERIES, bulk, hits, jsonl

_SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _parquet_bytes(docs: list[dict[str, object]]) -> bytes:
    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(docs), sink)
    return sink.getvalue()


#: (name, kind, a valid file)
VALID: list[tuple[str, str, bytes]] = [
    ("e.jsonl", "events", jsonl(EVENTS[:8]).encode()),
    ("q.jsonl", "queries", jsonl(QUERIES).encode()),
    ("both.ndjson", "events", bulk(QUERIES[:2], EVENTS[:4]).encode()),
    ("e_hits.jsonl", "events", hits("ubi_events", EVENTS[:4]).encode()),
    ("e.parquet", "events", _parquet_bytes(EVENTS[:6])),
]
IDS = [name for name, _, _ in VALID]


def _read(path: Path, kind: str) -> None:
    try:
        if kind == "queries":
            read_ubi_queries(path)
            return
        events = read_ubi_events(path)
    except InputError as exc:
        text = str(exc)
        assert text.startswith(str(path)), text
        assert exc.line is not None or "row " in exc.message or "$" in exc.message or WHOLE_FILE.search(exc.message) \
            or "UBI log" in exc.message, text
        return
    result = coec(None, events, max_rank=5)
    assert result.counts["events_read"] == len(events.events)
    dated = coec(None, events, max_rank=5, start_date="2025-01-01", end_date="2025-01-01")
    assert dated.counts["events_in_range"] <= result.counts["events_in_range"]
    assert all(j.coec >= 0 and float(j.rating) >= 0 for j in result.judgments)


@pytest.mark.parametrize(("name", "kind", "valid"), VALID, ids=IDS)
def test_valid_samples_read(tmp_path: Path, name: str, kind: str, valid: bytes) -> None:
    path = tmp_path / name
    path.write_bytes(valid)
    _read(path, kind)
    if kind == "events":
        assert len(read_ubi_events(path).events) >= 4


@pytest.mark.parametrize(("name", "kind", "valid"), VALID, ids=IDS)
def test_mutations_raise_only_input_errors_that_name_where(tmp_path: Path, name: str, kind: str, valid: bytes) -> None:
    @_SETTINGS
    @given(data=mutated(valid))
    def check(data: bytes) -> None:
        path = tmp_path / name
        path.write_bytes(data)
        _read(path, kind)

    check()


@pytest.mark.parametrize(("name", "kind", "valid"), VALID[::2], ids=IDS[::2])
def test_random_bytes_raise_only_input_errors(tmp_path: Path, name: str, kind: str, valid: bytes) -> None:
    @settings(max_examples=25, deadline=None)
    @given(data=st.binary(max_size=200))
    def check(data: bytes) -> None:
        path = tmp_path / name
        path.write_bytes(data)
        _read(path, kind)

    check()


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
                     max_leaves=8)
#: Documents shaped like UBI events whose every field may be of any JSON type.
_docs = st.fixed_dictionaries(
    {},
    optional={"action_name": _json | st.sampled_from(["click", "impression", "Click"]),
              "query_id": _json | st.sampled_from(["s1", "s2"]), "user_query": _json | st.just("boots"),
              "timestamp": _json | st.sampled_from(["2025-01-01T10:00:00Z", "0001-01-01T00:00:00+01:00",
                                                    "9999-12-31T23:59:59-01:00", "2025-01-01", "2025-13-01T00:00Z"]),
              "event_attributes": _json | st.fixed_dictionaries({}, optional={
                  "position": _json | st.fixed_dictionaries({}, optional={"ordinal": _json | st.integers(-2, 6)}),
                  "object": _json | st.fixed_dictionaries({}, optional={"object_id": _json | st.sampled_from(["A", 7])})}),
              "_source": _json, "index": _json},
)


def test_arbitrary_documents_raise_only_input_errors(tmp_path: Path) -> None:
    @settings(max_examples=60, deadline=None)
    @given(docs=st.lists(_docs, min_size=1, max_size=6))
    def check(docs: list[dict[str, object]]) -> None:
        path = tmp_path / "e.jsonl"
        path.write_text("".join(json.dumps(d) + "\n" for d in docs))
        _read(path, "events")
        _read(path, "queries")

    check()
