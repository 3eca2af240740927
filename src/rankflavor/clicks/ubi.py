"""Readers of OpenSearch User Behavior Insights (UBI) logs: the query log and the event log.

The schema is OpenSearch's, learnt from (read, not copied):

* the indices' mappings, ``src/main/resources/queries-mapping.json`` and
  ``src/main/resources/events-mapping.json`` (opensearch-project/user-behavior-insights);
* the UBI JSON schemas, ``schema/1.3.0/query.request.schema.json`` and
  ``schema/1.3.0/event.schema.json`` (o19s/ubi): ``object_id`` is a string or an integer,
  ``position.ordinal`` an integer;
* the documents the Search Relevance Workbench reads, ``model/ubi/query/UbiQuery.java`` and
  ``model/ubi/event/UbiEvent.java``, ``EventAttributes.java``, ``EventObject.java``,
  ``Position.java`` (opensearch-project/search-relevance, under
  ``src/main/java/org/opensearch/searchrelevance/``).

A **query** document gives ``query_id`` and ``user_query`` (the text the user typed); an
**event** document gives ``action_name``, ``query_id``, ``user_query``, ``timestamp`` and
``event_attributes.position.ordinal`` and ``event_attributes.object.object_id``. Other fields
are ignored.

Files are JSON lines or Parquet (plain or compressed: :func:`rankflavor.io.source.read_bytes`).
A JSON line is one of

* the document itself, ``{"query_id": ..., "user_query": ...}``;
* a search hit or an export of one (elasticdump, OpenSearch's ``_search``):
  ``{"_index": "ubi_events", "_id": ..., "_source": {...}}``;
* a line of a ``_bulk`` request: an action line ``{"index": {"_index": ..., "_id": ...}}`` (or
  ``create``) followed by the document (the form of SRW's own test data,
  ``src/test/data-esci/ubi_queries_events.ndjson``, which holds both logs in one file).

A document whose ``_index`` (from its hit or its bulk action) is the *other* log's default index
(``ubi_events`` when the query log is read, ``ubi_queries`` for the event log) is skipped and
counted, and so is a document with an ``action_name`` (an event) in the query log and one with
neither ``action_name`` nor ``event_attributes`` (a query) in the event log, so one file holding
both logs can be given as both. Parquet columns are the
documents' fields, nested (structs) or flattened with dots (``event_attributes.position.ordinal``).

What is missing (a null ``event_attributes``, an event without position, object or query text)
is counted by the click model, never an error: real logs hold such events (searches, page
exits). A value of the wrong type (an ordinal ``"first"``, an ``object_id`` that is an object)
is an :class:`~rankflavor.errors.InputError` naming the file, the line (JSON) or row (Parquet,
0-based) and the JSON path. Ids are untrusted text: kept as they are, except that an id holding
a NUL is refused (:mod:`rankflavor.io.nul`).
"""

from __future__ import annotations

import datetime
import json
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from rankflavor.errors import InputError
from rankflavor.io.nul import REASON as NUL_REASON

#: The default index of each log (``PluginConstants`` of search-relevance: ``ubi_queries``, ``ubi_events``).
QUERIES_INDEX = "ubi_queries"
EVENTS_INDEX = "ubi_events"
#: Bulk actions whose next line is a document.
_DOC_ACTIONS = ("index", "create")
_OTHER_ACTIONS = ("update", "delete")


class Event(NamedTuple):
    """One UBI event, the fields the click model reads (None where the document has none)."""

    action: str | None
    query_id: str | None
    user_query: str | None
    object_id: str | None
    ordinal: int | None
    timestamp: str | None
    #: 1-based line (JSON lines) or 0-based row (Parquet) of the document
    where: int


@dataclass(frozen=True)
class UbiQueries:
    """A query log: ``query_id -> user_query`` and what reading it counted."""

    source: str
    texts: dict[str, str]
    #: query ids whose documents give different texts: ambiguous, left out of ``texts``
    conflicting: frozenset[str] = frozenset()
    counts: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class UbiEvents:
    """An event log and what reading it counted."""

    source: str
    events: tuple[Event, ...]
    counts: dict[str, int] = field(default_factory=dict)
    #: the events' ``where`` are 0-based Parquet rows (else 1-based lines)
    rows: bool = False


def read_ubi_queries(path: str | os.PathLike[str]) -> UbiQueries:
    """Read a UBI query log (``ubi_queries``): JSON lines or Parquet (module docstring).

    A document without ``query_id`` or ``user_query`` is counted and left out; a ``query_id``
    logged twice with the same text is one query, with different texts it is ambiguous
    (counted under ``conflicting_query_ids``, and no text is taken for it).

    Raises
    ------
    InputError
        Naming the file, line or row and JSON path of a malformed document.
    """
    source = str(path)
    texts: dict[str, str] = {}
    conflicting: set[str] = set()
    counts = {"documents": 0, "other_log_documents": 0, "without_query_id": 0, "without_user_query": 0,
              "repeated_query_ids": 0}
    for where, doc, rows in documents(path, EVENTS_INDEX, counts):
        if doc.get("action_name") is not None:  # an event (query documents have no action): both logs in one file
            counts["other_log_documents"] += 1
            continue
        counts["documents"] += 1
        at = _At(source, where, doc, rows)
        query_id = at.ident("query_id")
        text = at.text("user_query")
        if query_id is None:
            counts["without_query_id"] += 1
            continue
        if text is None:
            counts["without_user_query"] += 1
            continue
        before = texts.get(query_id)
        if before is None and query_id not in conflicting:
            texts[query_id] = text
        else:
            counts["repeated_query_ids"] += 1
            if before is not None and before != text:
                conflicting.add(query_id)
                del texts[query_id]
    counts["query_ids"] = len(texts) + len(conflicting)
    counts["conflicting_query_ids"] = len(conflicting)
    return UbiQueries(source, texts, frozenset(conflicting), counts)


def read_ubi_events(path: str | os.PathLike[str]) -> UbiEvents:
    """Read a UBI event log (``ubi_events``): JSON lines or Parquet (module docstring).

    Raises
    ------
    InputError
        Naming the file, line or row and JSON path of a malformed document.
    """
    source = str(path)
    counts = {"documents": 0, "other_log_documents": 0}
    events: list[Event] = []
    rows = False
    for where, doc, rows in documents(path, QUERIES_INDEX, counts):
        if doc.get("action_name") is None and doc.get("event_attributes") is None:
            counts["other_log_documents"] += 1  # no action and no attributes: a query document
            continue
        counts["documents"] += 1
        at = _At(source, where, doc, rows)
        attributes = at.mapping(doc, "event_attributes", "$.event_attributes")
        position = at.mapping(attributes, "position", "$.event_attributes.position")
        obj = at.mapping(attributes, "object", "$.event_attributes.object")
        events.append(Event(action=at.text("action_name"), query_id=at.ident("query_id"),
                            user_query=at.text("user_query"),
                            object_id=at.ident("object_id", obj, "$.event_attributes.object.object_id"),
                            ordinal=at.ordinal(position), timestamp=at.timestamp(), where=where))
    return UbiEvents(source, tuple(events), counts, rows)


def read_query_map(path: str | os.PathLike[str]) -> dict[str, str]:
    """``{query text: query id}`` from a TSV file of lines ``ID<TAB>TEXT`` (the form of MS MARCO's
    ``queries.tsv`` and of a TREC topics file turned into one): the ids of a run's queries, by the
    user query text that the click log holds. Blank lines are skipped.

    Raises
    ------
    InputError
        Naming the line of one with no tab or no id, of a text given two ids, or of an id given
        two texts (their judgments would merge).
    """
    from rankflavor.io.formats.delimited import decode
    from rankflavor.io.source import read_bytes

    source = str(path)
    text = decode(source, read_bytes(path))
    by_text: dict[str, tuple[str, int]] = {}
    by_id: dict[str, tuple[str, int]] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        ident, tab, query = raw.partition("\t")
        ident = ident.strip()
        if not tab or not ident or len(ident.split()) != 1 or "\x00" in ident:
            raise InputError(source, number, "expected 'QUERY_ID<TAB>QUERY TEXT', a query id without blanks", raw)
        if query in by_text and by_text[query][0] != ident:
            raise InputError(source, number, f"query text {query!r} has the id {by_text[query][0]!r} on line "
                             f"{by_text[query][1]} and {ident!r} here", raw)
        if ident in by_id and by_id[ident][0] != query:
            raise InputError(source, number, f"query id {ident!r} is given to two texts (lines {by_id[ident][1]} "
                             f"and {number}): their judgments would merge", raw)
        by_text[query] = (ident, number)
        by_id[ident] = (query, number)
    if not by_text:
        raise InputError(source, None, "query map is empty; expected lines 'QUERY_ID<TAB>QUERY TEXT'")
    return {query: ident for query, (ident, _) in by_text.items()}


def documents(path: str | os.PathLike[str], other: str, counts: dict[str, int]) -> Iterator[tuple[int, dict[str, Any], bool]]:
    """(where, document, is_row) of a JSON lines or Parquet file: where is the 1-based line, or
    the 0-based row when is_row. Documents are unwrapped from hits and bulk actions; those of
    the ``other`` log's index are counted under ``other_log_documents``."""
    from rankflavor.io.source import read_bytes

    source = str(path)
    data = read_bytes(path)
    if data[:4] == b"PAR1":
        for row, doc in _parquet_rows(source, data):
            yield row, doc, True
        return
    pending: str | None = None  # the _index of the bulk action line before, when one was
    bulk_line = 0
    for line, obj in _json_lines(source, data):
        if pending is None and _bulk_action(obj):
            (action, meta), = obj.items()
            if action in _OTHER_ACTIONS:
                raise InputError(source, line, f"a bulk '{action}' action: only the documents of 'index' and "
                                 "'create' actions are read")
            index = meta.get("_index")
            pending, bulk_line = (index if isinstance(index, str) else ""), line
            continue
        index_name: object = pending
        if pending is None and isinstance(obj.get("_source"), dict):
            index_name, obj = obj.get("_index"), obj["_source"]
        pending = None
        if index_name == other:
            counts["other_log_documents"] += 1
            continue
        yield line, obj, False
    if pending is not None:
        raise InputError(source, bulk_line, "a bulk action line with no document after it")


def _bulk_action(obj: dict[str, Any]) -> bool:
    if len(obj) != 1:
        return False
    (key, value), = obj.items()
    return key in _DOC_ACTIONS + _OTHER_ACTIONS and isinstance(value, dict)


def _json_lines(source: str, data: bytes) -> Iterator[tuple[int, dict[str, Any]]]:
    from rankflavor.io.formats.delimited import decode

    text = decode(source, data)
    if not text.strip():
        raise InputError(source, None, "UBI log is empty; expected one JSON document per line")
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.strip()
        if not line:
            continue
        try:
            obj = json.loads(line)
        except (json.JSONDecodeError, RecursionError) as exc:
            why = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
            raise InputError(source, number, f"is not valid JSON: {why}", raw) from None
        if not isinstance(obj, dict):
            raise InputError(source, number, "expected a JSON object per line (a UBI document, a search hit "
                             "with _source, or a bulk action line)", raw)
        yield number, obj


def _parquet_rows(source: str, data: bytes) -> Iterator[tuple[int, dict[str, Any]]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.ParquetFile(pa.BufferReader(data)).read()
        rows = table.to_pylist()
    except (pa.ArrowException, OSError, ValueError, TypeError, IndexError) as exc:
        raise InputError(source, None, f"is not a readable Parquet file: {exc}") from None
    if not rows:
        raise InputError(source, None, "UBI log has no rows")
    dotted = [name for name in table.column_names if "." in name]
    for number, row in enumerate(rows):
        for name in dotted:  # a flattened column: event_attributes.position.ordinal
            value = row.pop(name)
            if value is None:
                continue
            *parents, leaf = name.split(".")
            node = row
            for part in parents:
                child = node.get(part)
                if not isinstance(child, dict):
                    child = node[part] = {}
                node = child
            node.setdefault(leaf, value)
        yield number, row


class _At:
    """The typed fields of one document, and the error naming where a field is malformed."""

    def __init__(self, source: str, where: int, doc: dict[str, Any], rows: bool):
        self.source, self.where, self.doc, self.rows = source, where, doc, rows

    def fail(self, path: str, message: str) -> InputError:
        if self.rows:  # Parquet: a 0-based row, as pyarrow and pandas count them
            return InputError(self.source, None, f"row {self.where}: {path}: {message}")
        return InputError(self.source, self.where, f"{path}: {message}")

    def mapping(self, parent: dict[str, Any] | None, key: str, path: str) -> dict[str, Any] | None:
        value = None if parent is None else parent.get(key)
        if value is None or isinstance(value, dict):
            return value
        raise self.fail(path, f"expected an object or null, got {_shown(value)}")

    def text(self, key: str) -> str | None:
        value = self.doc.get(key)
        if value is None or isinstance(value, str):
            return value
        raise self.fail(f"$.{key}", f"expected a string or null, got {_shown(value)}")

    def ident(self, key: str, parent: dict[str, Any] | None = None, path: str | None = None) -> str | None:
        """An id: a string or an integer (``object_id`` may be either), None when absent or empty."""
        where = path or f"$.{key}"
        container = self.doc if path is None else (parent or {})
        value = container.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise self.fail(where, f"expected a string or an integer id, got {_shown(value)}")
        text = str(value)
        if "\x00" in text:
            raise self.fail(where, f"{key} {NUL_REASON}")
        return text if text.strip() else None

    def ordinal(self, position: dict[str, Any] | None) -> int | None:
        value = None if position is None else position.get("ordinal")
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return None  # (a Parquet export by pandas holds a missing ordinal as NaN)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        raise self.fail("$.event_attributes.position.ordinal", f"expected an integer position, got {_shown(value)}")

    def timestamp(self) -> str | None:
        """The text of the timestamp (parsed only for a date range, where one that does not parse
        is counted); a Parquet timestamp column's value in ISO 8601."""
        value = self.doc.get("timestamp")
        if isinstance(value, datetime.datetime):
            return value.isoformat()
        return value if isinstance(value, str) else None


def _shown(value: object) -> str:
    text = json.dumps(value, default=str, ensure_ascii=False) if not isinstance(value, float) else repr(value)
    return text if len(text) <= 60 else text[:60] + "..."


__all__ = ["EVENTS_INDEX", "QUERIES_INDEX", "Event", "UbiEvents", "UbiQueries", "documents", "read_query_map",
           "read_ubi_events", "read_ubi_queries"]
