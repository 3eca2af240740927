"""JSON documents: nested ``{query: {doc: value}}`` (BEIR results), Elasticsearch/OpenSearch
``_rank_eval`` requests (judgments) and search responses (runs).

Layouts, each with every error naming its JSON path (``$.requests[2].ratings[0].rating``), or
the line and column of a JSON syntax error:

``json`` / ``beir`` run
    ``{"q1": {"d7": 12.5, "d3": 9.1}, ...}``: BEIR's results dict as its users save it
    (beir-cellar/beir ``EvaluateRetrieval.retrieve`` returns ``{query_id: {doc_id: score}}``), a
    pytrec_eval run dict; judgments the same with grades. A key given twice in one object is kept
    twice (the engine counts duplicates), not silently replaced as :func:`json.loads` would.
``es`` qrels
    The body of a ``_rank_eval`` request (Elasticsearch reference, "Ranking evaluation API"
    ``search-rank-eval``; OpenSearch's ``rank-eval`` is the same): ``{"requests": [{"id": "q1",
    "request": {...}, "ratings": [{"_index": "idx", "_id": "d7", "rating": 2}, ...]}, ...]}``.
    The query id is the request's ``id``, the document its ``_id``; ratings across several
    ``_index`` values are refused (documents are keyed by ``_id`` alone here). A request whose
    ``ratings`` are ``[]`` is a query with no judgment (:attr:`Qrels.listed_empty`): the engine
    still searches and scores it, 0.0, and averages over every request (elastic/elasticsearch
    ``modules/rank-eval``: ``TransportRankEvalAction`` evaluates each request's hits against its
    ratings, ``EvaluationMetric.combine`` is their mean; ``RecallAtKTests.testNoResults``, no hit
    and no rating, and ``PrecisionAtKTests.testNoRatedDocs``, hits and no rating, are 0.0), as
    rankflavor does under the ``elasticsearch`` and ``opensearch`` presets
    (:func:`rankflavor.engine.aggregate.judged_queries`).
``es`` run
    Search responses by query id, ``{"q1": {"hits": {"hits": [{"_id": "d7", "_score": 12.5}, ...]}}}``
    (the body ``_search`` returns, per query), or a ``_rank_eval`` response, whose ``details``
    hold each request's hits: ``{"details": {"q1": {"hits": [{"hit": {"_id": "d7", "_score":
    12.5}, "rating": 2}, ...]}}}``. When a hit has no ``_score`` (null: a search sorted by a
    field), the file's hits are ordered by their position instead (``order=rank``). A query whose
    hits are ``[]`` is in the run with an empty ranking: ``_rank_eval`` scores such a request 0.0
    (elastic/elasticsearch ``DiscountedCumulativeGainTests.testNoResults`` and the other metrics'
    ``testNoResults``), and so does rankflavor, also under presets that skip missing queries.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pyarrow as pa

from rankflavor.errors import InputError
from rankflavor.io.columns import from_numpy, string_array
from rankflavor.io.formats.delimited import decode, read_beir_qrels
from rankflavor.io.formats.table import to_qrels, to_run
from rankflavor.io.nul import REASON, has_nul
from rankflavor.io.tables import Qrels, Run


class _Object(dict):  # type: ignore[type-arg]
    """A JSON object that keeps every key-value pair, a key given twice included."""

    pairs: list[tuple[str, Any]]


def _object(pairs: list[tuple[str, Any]]) -> _Object:
    obj = _Object(pairs)
    obj.pairs = pairs
    return obj


def load(source: str, data: bytes) -> Any:
    """The JSON value of ``data``; a syntax error names its line and column."""
    text = decode(source, data)
    try:
        return json.loads(text, object_pairs_hook=_object)
    except json.JSONDecodeError as exc:
        raise InputError(source, exc.lineno, f"is not valid JSON: {exc.msg} (column {exc.colno})") from None
    except RecursionError:
        raise InputError(source, None, "is not valid JSON: nested too deeply") from None


def kind_of(value: Any) -> str:
    """``srw`` for Search Relevance Workbench judgment lists, ``es`` for a ``_rank_eval`` request
    or response or search responses, else ``json``."""
    if is_srw(value):
        return "srw"
    if isinstance(value, dict):
        if "requests" in value or "details" in value:
            return "es"
        first = next(iter(value.values()), None)
        if isinstance(first, dict) and "hits" in first:
            return "es"
    return "json"


def is_srw(value: Any) -> bool:
    """Does a JSON value hold Search Relevance Workbench judgment lists (read by
    :func:`rankflavor.io.formats.labelled.read_srw`)?"""
    return bool(_lists(value, "$", probe=True))


def _lists(value: Any, path: str, probe: bool = False) -> list[tuple[str, dict[str, Any]]]:
    """The judgment lists of ``value`` with their JSON paths (a list, a GET answer, a search response)."""
    if not isinstance(value, dict):
        return []
    if "judgmentRatings" in value:
        return [(path, value)]
    if isinstance(value.get("_source"), dict):
        return _lists(value["_source"], path + "._source", probe)
    hits = value.get("hits")
    if isinstance(hits, dict) and isinstance(hits.get("hits"), list):
        found = []
        for i, hit in enumerate(hits["hits"]):
            found += _lists(hit, f"{path}.hits.hits[{i}]", probe)
            if probe and found:
                break
        return found
    return []


def _items(value: Any) -> list[tuple[str, Any]]:
    return value.pairs if isinstance(value, _Object) else list(value.items())


def _key(path: str, key: str) -> str:
    return f"{path}[{json.dumps(key)}]"


def _fail(source: str, path: str, message: str) -> InputError:
    return InputError(source, None, f"{path}: {message}")


def _id(source: str, path: str, value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise _fail(source, path, f"{_shown(value)} is not an id (text or an integer)")
    text = str(value)
    if not text:
        raise _fail(source, path, "an empty id")
    if has_nul(text):
        raise _fail(source, path, f"the id {REASON}")
    return text


def _number(source: str, path: str, value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _fail(source, path, f"{what} {_shown(value)} is not a number")
    number = float(value)
    if not math.isfinite(number):
        raise _fail(source, path, f"{what} {_shown(value)} is not a finite number")
    return number


def _shown(value: Any) -> str:
    try:
        return "null" if value is None else json.dumps(value)[:60]
    except (TypeError, ValueError):
        return type(value).__name__


def _expect_object(source: str, path: str, value: Any, what: str) -> None:
    if not isinstance(value, dict):
        raise _fail(source, path, f"expected {what}, found {_json_type(value)}")


def _json_type(value: Any) -> str:
    return {dict: "an object", _Object: "an object", list: "an array", str: "a string", bool: "a boolean",
            int: "a number", float: "a number", type(None): "null"}.get(type(value), type(value).__name__)


def nested(source: str, value: Any, kind: str) -> tuple[list[str], list[str], list[float]]:
    """Rows of ``{query: {doc: value}}``, in file order."""
    what = "grade" if kind == "qrels" else "score"
    _expect_object(source, "$", value, f"an object {{query: {{doc: {what}}}}}")
    queries: list[str] = []
    docs: list[str] = []
    values: list[float] = []
    for q, inner in _items(value):
        path = _key("$", q)
        _expect_object(source, path, inner, f"an object {{doc: {what}}}")
        for d, v in _items(inner):
            queries.append(_id(source, path, q))
            docs.append(_id(source, _key(path, d), d))
            values.append(_number(source, _key(path, d), v, what))
    return queries, docs, values


def read_json(source: str, data: bytes, kind: str, columns: Mapping[str, str], value: Any = None) -> Qrels | Run:
    """The ``json`` format's reader: ``{qid: {docid: grade or score}}`` (``value``: the file's JSON
    value when it was parsed already, to choose the format)."""
    return read_nested(source, data, kind, value)


def read_es(source: str, data: bytes, kind: str, columns: Mapping[str, str], value: Any = None) -> Qrels | Run:
    """The ``es`` format's reader: a ``_rank_eval`` request's ratings, or search responses' hits
    (``value`` as :func:`read_json`'s)."""
    return read_rank_eval(source, data, value) if kind == "qrels" else read_hits(source, data, value)


def read_beir(source: str, data: bytes, kind: str, columns: Mapping[str, str]) -> Qrels | Run:
    """The ``beir`` format's reader: the qrels TSV, or a run as BEIR's results JSON."""
    if kind == "qrels":
        return read_beir_qrels(source, data)
    return read_nested(source, data, kind)


def read_nested(source: str, data: bytes, kind: str, value: Any = None) -> Qrels | Run:
    """``json`` / ``beir`` results: ``{query: {doc: value}}``. A run's query listed with no
    document (``{"q1": {}}``) is answered with nothing: in the run, scored as an empty ranking
    (0 under every preset), as pytrec_eval, ir_measures and ranx's ``Run`` read a ``{}``. A
    judgments' query listed so has no judgment (:attr:`Qrels.listed_empty`), as a dict's."""
    value = load(source, data) if value is None else value
    q, d, v = nested(source, value, kind)
    listed = tuple(dict.fromkeys(_id(source, _key("$", k), k) for k, inner in _items(value) if not len(inner)))
    if kind == "run":
        return _run(source, q, d, v, "score", listed)
    return _qrels(source, q, d, v, listed)


def _run(source: str, q: list[str], d: list[str], v: list[float], value_name: str, listed: tuple[str, ...]) -> Run:
    """The run of these rows, with the queries ``listed`` with no document; a file of empty
    rankings alone is a run of no rows."""
    if not v and not listed:
        raise InputError(source, None, "holds no results")
    if not v:
        none = string_array([])
        return Run(none.dictionary_encode(), none, np.zeros(0, dtype=np.float64), source, listed_empty=listed)
    run = _table(source, "run", q, d, v, value_name)
    assert isinstance(run, Run)
    return dataclasses.replace(run, listed_empty=listed) if listed else run


def _qrels(source: str, q: list[str], d: list[str], v: list[float], listed: tuple[str, ...]) -> Qrels:
    """The judgments of these rows, with the queries ``listed`` with no judgment (those that have
    one elsewhere in the file are judged); a file of such queries alone is judgments of no row."""
    if not v and not listed:
        raise InputError(source, None, "holds no judgments")
    if not v:
        none = string_array([])
        return Qrels(none.dictionary_encode(), none, np.zeros(0, dtype=np.float64), source, listed_empty=listed)
    qrels = _table(source, "qrels", q, d, v, "relevance")
    assert isinstance(qrels, Qrels)
    return dataclasses.replace(qrels, listed_empty=listed) if listed else qrels


def _table(source: str, kind: str, q: list[str], d: list[str], v: list[float], value_name: str) -> Qrels | Run:
    if not v:
        raise InputError(source, None, "holds no " + ("judgments" if kind == "qrels" else "results"))
    name = "relevance" if kind == "qrels" else value_name
    table = pa.table({"query_id": string_array(q), "doc_id": string_array(d), name: from_numpy(np.asarray(v, dtype=np.float64))})
    where = lambda row: (None, "")  # noqa: E731  (values were checked with their paths above)
    if kind == "qrels":
        return to_qrels(table, source, {}, where, from_file=False)
    return to_run(table, source, {}, where, from_file=False)


def read_rank_eval(source: str, data: bytes, value: Any = None) -> Qrels:
    """The ratings of a ``_rank_eval`` request body."""
    value = load(source, data) if value is None else value
    _expect_object(source, "$", value, 'a _rank_eval request {"requests": [...]}')
    if "requests" not in value:
        raise _fail(source, "$", 'expected a _rank_eval request {"requests": [{"id": ..., "ratings": [...]}]}')
    requests = value["requests"]
    if not isinstance(requests, list):
        raise _fail(source, "$.requests", f"expected an array, found {_json_type(requests)}")
    queries: list[str] = []
    docs: list[str] = []
    grades: list[float] = []
    indices: dict[str, str] = {}
    listed: dict[str, None] = {}  # requests rated nothing: scored all the same (0.0)
    for i, request in enumerate(requests):
        path = f"$.requests[{i}]"
        _expect_object(source, path, request, 'a rated request {"id": ..., "ratings": [...]}')
        for field in ("id", "ratings"):
            if field not in request:
                raise _fail(source, path, f"has no {field!r}")
        query = _id(source, path + ".id", request["id"])
        ratings = request["ratings"]
        if not isinstance(ratings, list):
            raise _fail(source, path + ".ratings", f"expected an array, found {_json_type(ratings)}")
        if not ratings:
            listed[query] = None
        for j, rating in enumerate(ratings):
            at = f"{path}.ratings[{j}]"
            _expect_object(source, at, rating, 'a rating {"_index": ..., "_id": ..., "rating": ...}')
            for field in ("_id", "rating"):
                if field not in rating:
                    raise _fail(source, at, f"has no {field!r}")
            if "_index" in rating:
                index = _id(source, at + "._index", rating["_index"])
                indices.setdefault(index, at)
                if len(indices) > 1:
                    first = next(iter(indices.items()))
                    raise _fail(source, at + "._index", f"{index!r}: the ratings name several indices ({first[0]!r} at "
                                f"{first[1]}); documents are keyed by _id alone, so give one index per file")
            queries.append(query)
            docs.append(_id(source, at + "._id", rating["_id"]))
            grades.append(_number(source, at + ".rating", rating["rating"], "rating"))
    return _qrels(source, queries, docs, grades, tuple(listed))


def read_hits(source: str, data: bytes, value: Any = None) -> Run:
    """Search responses by query id, or a ``_rank_eval`` response's ``details``."""
    value = load(source, data) if value is None else value
    _expect_object(source, "$", value, 'search responses {"q1": {"hits": {"hits": [...]}}} or a _rank_eval response')
    lists: list[tuple[str, str, list[Any], bool]] = []  # query, path, hits, hits wrapped in "hit"
    if "details" in value:
        details = value["details"]
        _expect_object(source, "$.details", details, "an object {query: {hits: [...]}}")
        for q, detail in _items(details):
            path = _key("$.details", q)
            _expect_object(source, path, detail, 'an object {"hits": [...]}')
            hits = detail.get("hits")
            if not isinstance(hits, list):
                raise _fail(source, path + ".hits", f"expected an array, found {_json_type(hits)}")
            lists.append((q, path + ".hits", hits, True))
    else:
        for q, response in _items(value):
            path = _key("$", q)
            _expect_object(source, path, response, 'a search response {"hits": {"hits": [...]}}')
            outer = response.get("hits")
            _expect_object(source, path + ".hits", outer, 'an object {"hits": [...]}')
            hits = outer.get("hits")
            if not isinstance(hits, list):
                raise _fail(source, path + ".hits.hits", f"expected an array, found {_json_type(hits)}")
            lists.append((q, path + ".hits.hits", hits, False))
    queries: list[str] = []
    docs: list[str] = []
    scores: list[float | None] = []
    positions: list[float] = []
    listed: dict[str, None] = {}  # queries answered with no hit: a request without hits scores 0.0
    for q, path, hits, wrapped in lists:
        query = _id(source, path, q)
        if not hits:
            listed[query] = None
        for j, hit in enumerate(hits):
            at = f"{path}[{j}]"
            _expect_object(source, at, hit, "a hit {\"_id\": ..., \"_score\": ...}")
            if wrapped:
                if "hit" not in hit:
                    raise _fail(source, at, "has no 'hit'")
                hit, at = hit["hit"], at + ".hit"
                _expect_object(source, at, hit, "a hit {\"_id\": ..., \"_score\": ...}")
            if "_id" not in hit:
                raise _fail(source, at, "has no '_id'")
            queries.append(query)
            docs.append(_id(source, at + "._id", hit["_id"]))
            raw = hit.get("_score")
            scores.append(None if raw is None else _number(source, at + "._score", raw, "_score"))
            positions.append(float(j + 1))
    if not queries:
        if not listed:
            raise InputError(source, None, "holds no hits")
        return _run(source, [], [], [], "score", tuple(listed))
    if any(s is None for s in scores):  # ordered by position, as the engine returned them
        table = pa.table({"query_id": string_array(queries), "doc_id": string_array(docs),
                          "rank": from_numpy(np.asarray(positions, dtype=np.float64))})
    else:
        table = pa.table({"query_id": string_array(queries), "doc_id": string_array(docs),
                          "score": from_numpy(np.asarray(scores, dtype=np.float64))})
    run = to_run(table, source, {}, lambda row: (None, ""), from_file=False)
    return dataclasses.replace(run, listed_empty=tuple(listed)) if listed else run
