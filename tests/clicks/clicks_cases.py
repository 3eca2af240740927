"""A small UBI query log and event log whose COEC judgments are worked out by hand in
tests/clicks/test_clicks.py, and writers of them as JSON lines, _bulk files and Parquet."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

#: The query log: five searches; s1 and s2 are the same text, s3 and s5 too.
QUERIES: list[dict[str, Any]] = [
    {"query_id": "s1", "user_query": "red shoes", "timestamp": "2025-01-01T10:00:00Z", "application": "shop"},
    {"query_id": "s2", "user_query": "red shoes", "timestamp": "2025-01-01T11:00:00Z"},
    {"query_id": "s3", "user_query": "boots", "timestamp": "2025-01-01T12:00:00Z", "query_attributes": {}},
    {"query_id": "s4", "user_query": "hat", "timestamp": "2025-01-01T13:00:00Z"},
    {"query_id": "s5", "user_query": "boots", "timestamp": "2025-01-02T09:00:00Z"},
]


def event(action: str | None, query_id: str, doc: str | None, ordinal: int | None, *, text: bool = True,
          day: str = "2025-01-01") -> dict[str, Any]:
    """A UBI event as OpenSearch stores it; ``text``: with the query's ``user_query`` (SRW's data
    has it; UBI's schema does not)."""
    user = {q["query_id"]: q["user_query"] for q in QUERIES}.get(query_id)
    doc_: dict[str, Any] = {"application": "shop", "action_name": action, "query_id": query_id,
                            "session_id": "sess", "client_id": "c1", "timestamp": f"{day}T10:00:01.000Z",
                            "message_type": None, "message": None}
    if text:
        doc_["user_query"] = user
    if ordinal is None and doc is None:
        doc_["event_attributes"] = None
    else:
        doc_["event_attributes"] = {"object": {"object_id": doc, "object_id_field": "sku"},
                                    "position": {"ordinal": ordinal}}
    return doc_


#: (action, query id, doc, ordinal) of the worked example; s5's events carry no user_query.
EVENTS: list[dict[str, Any]] = [
    event("impression", "s1", "A", 0), event("impression", "s1", "B", 1), event("impression", "s1", "C", 2),
    event("click", "s1", "A", 0), event("click", "s1", "C", 2),
    event("search", "s1", None, None),  # no event_attributes: no position
    event("impression", "s2", "B", 0), event("impression", "s2", "A", 1), event("impression", "s2", "C", 2),
    event("click", "s2", "B", 0), event("click", "s2", "A", 1),
    event("impression", "s3", "D", 0), event("impression", "s3", "E", 1), event("impression", "s3", "C", 2),
    event("click", "s3", "E", 1), event("add_to_cart", "s3", "X", 1),
    event("impression", "s4", "F", 0), event("impression", "s4", "G", 3), event("click", "s4", "G", 3),
    event("impression", "s4", "H", 4),  # above max_rank 3
    event("impression", "s5", "D", 0, text=False, day="2025-01-02"),
    event("impression", "s5", "E", 1, text=False, day="2025-01-02"),
]


def write_logs(folder: Path) -> tuple[Path, Path]:
    """The worked example's UBI query and event logs as JSON lines in ``folder``."""
    q = folder / "ubi_queries.jsonl"
    e = folder / "ubi_events.jsonl"
    q.write_text(jsonl(QUERIES))
    e.write_text(jsonl(EVENTS))
    return q, e


def jsonl(docs: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(d) + "\n" for d in docs)


def bulk(queries: list[dict[str, Any]], events: list[dict[str, Any]]) -> str:
    """Both logs in one ``_bulk`` body, as SRW's ``src/test/data-esci/ubi_queries_events.ndjson``."""
    lines = []
    for index, docs in (("ubi_queries", queries), ("ubi_events", events)):
        for i, d in enumerate(docs):
            lines += [json.dumps({"index": {"_index": index, "_id": f"{index}-{i}"}}), json.dumps(d)]
    return "\n".join(lines) + "\n"


def hits(index: str, docs: list[dict[str, Any]]) -> str:
    """One search hit per line, as elasticdump exports an index."""
    return "".join(json.dumps({"_index": index, "_id": str(i), "_score": 1.0, "_source": d}) + "\n"
                   for i, d in enumerate(docs))


def parquet(path: Path, docs: list[dict[str, Any]], *, flat: bool = False) -> Path:
    """The documents as a Parquet file: nested structs, or (``flat``) columns named with dots."""
    if flat:
        rows = []
        for d in docs:
            row = {k: v for k, v in d.items() if k != "event_attributes"}
            attrs = d.get("event_attributes") or {}
            row["event_attributes.position.ordinal"] = (attrs.get("position") or {}).get("ordinal")
            row["event_attributes.object.object_id"] = (attrs.get("object") or {}).get("object_id")
            rows.append(row)
        docs = rows
    columns = sorted({k for d in docs for k in d if k != "query_attributes"})
    table = pa.Table.from_pylist([{k: d.get(k) for k in columns} for d in docs])
    pq.write_table(table, path)
    return path
