"""Writers of every format :mod:`rankflavor.io.formats.read` reads, for ``rankflavor convert``.

Each writes exactly what its reader reads back: the same rows per query, in the same order, with
the same ids and values (numbers as the shortest text that parses back to the same float).
Where a format cannot hold something the writer refuses with a
:class:`~rankflavor.errors.FormatLossError` naming the first row, or (``lossy=True``) states the
documented loss:

* a run's scores in a format of ranks (``msmarco`` run, ``quepid`` snapshot): refused; with
  ``lossy`` the rank of a row is its position among its query's rows, allowed only where no
  score rises inside a query (tied scores keep the file's order);
* a run of ranks in a format of scores (``trec``, ``json``/``beir``): refused; with ``lossy`` the
  score is minus the rank (the same order; the read-back run is ordered by score);
* TREC text (``trec``, ``msmarco``) cannot hold an id with a blank (or a query id opening with
  ``#``, a comment); Quepid's CSV an id with leading or trailing blanks (its importer strips
  them); BEIR qrels and ``_rank_eval`` ratings hold integer grades; a JSON object cannot hold one
  document twice for a query. These are always refused.
* a query listed with nothing in it (:attr:`Run.listed_empty`, :attr:`Qrels.listed_empty`: a
  ranking of no document, a query with no judgment) is written where the format can name one
  (``json``/``beir`` run ``{"q": {}}``, ``es`` ``"hits": []`` or ``"ratings": []``, a ``quepid``
  ratings row of the query alone: :data:`LISTS_EMPTY`); elsewhere it is refused, and with
  ``lossy`` left out (the conversion's summary counts it).
* Compression follows the output's name (``.gz``, ``.bz2``, ``.xz``, ``.zst``).
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa

from rankflavor.errors import FormatLossError, UsageError
from rankflavor.flavor.knobs import format_number
from rankflavor.io.columns import from_numpy, plain_strings, to_strings
from rankflavor.io.compression import SUFFIXES, compress
from rankflavor.io.docnos import canonical_integer_range
from rankflavor.io.formats.delimited import BEIR_HEADER, QUEPID_RATINGS, QUEPID_SNAPSHOT
from rankflavor.io.formats.spec import TABLE, function_of
from rankflavor.io.tables import Qrels, Run

#: What each format can be written for (the formats of :data:`~rankflavor.io.formats.spec.TABLE` with a
#: writer, and the columnar ones, which :func:`write` writes straight to the file).
WRITABLE: dict[str, tuple[str, ...]] = {f.name: f.holds for f in TABLE.values() if f.writer is not None or f.from_path}
_TREC_BLANKS = set(" \t\n\r\v\f")
#: The formats whose judgments carry each label's source: a fifth TREC field, a ``source`` column.
CARRIES_SOURCES = tuple(f.name for f in TABLE.values() if f.carries_sources)
#: The formats (and kinds) that can name a query with nothing in it.
LISTS_EMPTY: dict[str, tuple[str, ...]] = {f.name: f.lists_empty for f in TABLE.values() if f.lists_empty}


class Rows:
    """A table's rows as Python values: query, doc, value (grade, score, or rank) per row."""

    def __init__(self, table: Qrels | Run) -> None:
        self.kind = "qrels" if isinstance(table, Qrels) else "run"
        self.query = to_strings(table.query)
        self.doc = to_strings(table.doc)
        self.ranked = isinstance(table, Run) and table.ranked_by == "rank"
        values = table.grade if isinstance(table, Qrels) else table.score
        self.value = (-values + 0.0).tolist() if self.ranked else values.tolist()
        self.tag = table.tag if isinstance(table, Run) else None
        #: Each judgment's label source (``rankflavor.io.labels``), or None when the judgments name none.
        self.source = (to_strings(table.label_source) if isinstance(table, Qrels) and table.label_source is not None
                       else None)
        named = set(self.query)
        #: Queries listed with nothing in them (no row), in the input's order.
        self.listed = [q for q in table.listed_empty if q not in named]

    def groups(self) -> Iterator[tuple[str, list[int]]]:
        """Each query with its rows, in first-seen order (rows of a query in file order)."""
        rows: dict[str, list[int]] = {}
        for i, q in enumerate(self.query):
            rows.setdefault(q, []).append(i)
        yield from rows.items()


def render(table: Qrels | Run, fmt: str, lossy: bool = False) -> bytes:
    """The bytes of ``table`` in format ``fmt`` (uncompressed)."""
    if fmt == "parquet":
        sink = pa.BufferOutputStream()
        _write_parquet(parquet_table(table, lossy), sink)
        return bytes(sink.getvalue().to_pybytes())
    rows = Rows(table)
    if rows.kind not in WRITABLE.get(fmt, ()):
        raise UsageError(f"cannot write {rows.kind} as {fmt!r}")
    if rows.source is not None and fmt not in CARRIES_SOURCES:
        if not lossy:
            raise FormatLossError(f"the judgments name their label sources (rankflavor.io.labels), which {fmt} cannot hold; "
                                  f"write {', '.join(CARRIES_SOURCES)}, or give --lossy to write them without")
        rows.source = None
    if rows.listed and not lists_empty(fmt, rows.kind):
        if not lossy:
            raise _listed_loss(rows.listed, fmt, rows.kind)
        rows.listed = []
    writer = TABLE[fmt].writer
    assert writer is not None  # (every format of WRITABLE but the columnar ones has one)
    return str(function_of(writer)(rows, fmt, lossy)).encode("utf-8")


def _listed_loss(listed: list[str], fmt: str, kind: str) -> FormatLossError:
    """The refusal of queries listed with nothing in them, which ``fmt`` cannot name."""
    what = "document" if kind == "run" else "judgment"
    return FormatLossError(
        f"{len(listed)} query(ies) are listed with no {what} (e.g. {listed[0]!r}), which {fmt} cannot name (it "
        f"holds a row per {what}); write json, es{' or quepid' if kind == 'qrels' else ''}, or give --lossy to "
        "leave them out")


def lists_empty(fmt: str, kind: str) -> bool:
    """Can ``fmt`` name a ``kind`` query with nothing in it (:data:`LISTS_EMPTY`)?"""
    return kind in LISTS_EMPTY.get(fmt, ())


def write(table: Qrels | Run, path: str | os.PathLike[str], fmt: str, lossy: bool = False) -> None:
    """Write ``table`` to ``path`` in ``fmt``, compressed as the name says."""
    name = Path(path).name.lower()
    codec = next((c for s, c in SUFFIXES.items() if name.endswith(s)), None)
    if fmt == "parquet" and codec is None:  # the columns straight to the file, no copy in memory
        _write_parquet(parquet_table(table, lossy), path)
        return
    data = render(table, fmt, lossy)
    Path(path).write_bytes(compress(data, codec) if codec else data)


def _num(x: float) -> str:
    return format_number(x)


def _refuse(rows: Rows, i: int, message: str) -> FormatLossError:
    return FormatLossError(f"row {i} (query {rows.query[i]!r}, doc {rows.doc[i]!r}): {message}")


def _check_trec_ids(rows: Rows, fmt: str) -> None:
    for i, (q, d) in enumerate(zip(rows.query, rows.doc, strict=True)):
        if _TREC_BLANKS & set(q) or _TREC_BLANKS & set(d):
            raise _refuse(rows, i, f"{fmt} text cannot hold an id with a blank (tab, space, newline)")
        if q.startswith("#"):
            raise _refuse(rows, i, f"{fmt} text reads a line opening with '#' as a comment")


def _integers(rows: Rows, fmt: str) -> None:
    for i, v in enumerate(rows.value):
        if not float(v).is_integer():
            raise _refuse(rows, i, f"{fmt} holds integer grades; grade {_num(v)} is not one")


def _ranks_needed(rows: Rows, fmt: str, lossy: bool) -> list[float]:
    """The rank of each row: the run's own ranks, or (``lossy``) positions in file order."""
    if rows.ranked:
        return rows.value
    if not lossy:
        raise FormatLossError(f"a {fmt} run holds ranks and no scores; this run has scores. Give --lossy to write "
                              "each row's position among its query's rows as its rank (the scores are dropped)")
    ranks = [0.0] * len(rows.value)
    for q, members in rows.groups():
        for pos, i in enumerate(members):
            if pos and rows.value[i] > rows.value[members[pos - 1]]:
                raise _refuse(rows, i, f"its score rises above the row before it in query {q!r}: file positions are "
                              "not ranks here (sort the run by score first)")
            ranks[i] = float(pos + 1)
    return ranks


def _scores_needed(rows: Rows, fmt: str, lossy: bool) -> list[float]:
    if not rows.ranked:
        return rows.value
    if not lossy:
        raise FormatLossError(f"a {fmt} run holds scores; this run has ranks and no scores. Give --lossy to write "
                              "minus each rank as its score (the same order; it reads back as ordered by score)")
    return [-r + 0.0 for r in rows.value]


def _no_duplicates(rows: Rows, fmt: str) -> None:
    seen: dict[tuple[str, str], int] = {}
    for i, pair in enumerate(zip(rows.query, rows.doc, strict=True)):
        first = seen.setdefault(pair, i)
        if first != i:
            raise _refuse(rows, i, f"the pair is listed twice (rows {first} and {i}); a {fmt} object holds a document "
                          "once per query")


def trec_text(rows: Rows, fmt: str, lossy: bool) -> str:
    _check_trec_ids(rows, fmt)
    out = io.StringIO()
    if rows.kind == "qrels" and rows.source is not None:
        for i, src in enumerate(rows.source):
            if _TREC_BLANKS & set(src):
                raise _refuse(rows, i, f"label source {src!r} holds a blank, which a TREC field cannot; write csv, "
                              "tsv, jsonl or parquet")
        for q, d, g, src in zip(rows.query, rows.doc, rows.value, rows.source, strict=True):
            out.write(f"{q} 0 {d} {_num(g)} {src}\n")
        return out.getvalue()
    if rows.kind == "qrels":
        for q, d, g in zip(rows.query, rows.doc, rows.value, strict=True):
            out.write(f"{q} 0 {d} {_num(g)}\n")
        return out.getvalue()
    scores = _scores_needed(rows, fmt, lossy)
    tag = rows.tag if rows.tag and not (_TREC_BLANKS & set(rows.tag)) else "rankflavor"
    for _, members in rows.groups():
        for pos, i in enumerate(members, 1):
            rank = _num(rows.value[i]) if rows.ranked else str(pos)
            out.write(f"{rows.query[i]} Q0 {rows.doc[i]} {rank} {_num(scores[i])} {tag}\n")
    return out.getvalue()


def msmarco_text(rows: Rows, fmt: str, lossy: bool) -> str:
    _check_trec_ids(rows, fmt)
    out = io.StringIO()
    if rows.kind == "qrels":
        for q, d, g in zip(rows.query, rows.doc, rows.value, strict=True):
            out.write(f"{q}\t0\t{d}\t{_num(g)}\n")
        return out.getvalue()
    ranks = _ranks_needed(rows, fmt, lossy)
    for q, d, r in zip(rows.query, rows.doc, ranks, strict=True):
        out.write(f"{q}\t{d}\t{_num(r)}\n")
    return out.getvalue()


def _csv_text(header: list[str], body: Iterator[list[str]], delimiter: str = ",") -> str:
    out = io.StringIO()
    writer = csv.writer(out, delimiter=delimiter, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(body)
    return out.getvalue()


def beir_text(rows: Rows, fmt: str, lossy: bool) -> str:
    if rows.kind == "run":
        return json_text(rows, fmt, lossy)
    _integers(rows, "BEIR qrels")
    return _csv_text(list(BEIR_HEADER), ([q, d, _num(g)] for q, d, g in zip(rows.query, rows.doc, rows.value, strict=True)),
                     "\t")


def _value_name(rows: Rows) -> str:
    return "relevance" if rows.kind == "qrels" else ("rank" if rows.ranked else "score")


def named_text(rows: Rows, fmt: str, lossy: bool) -> str:
    header = ["query_id", "doc_id", _value_name(rows)]
    body = ([q, d, _num(v)] for q, d, v in zip(rows.query, rows.doc, rows.value, strict=True))
    if rows.source is not None:
        header.append("source")
        body = ([q, d, _num(v), src] for q, d, v, src in zip(rows.query, rows.doc, rows.value, rows.source, strict=True))
    return _csv_text(header, body, "\t" if fmt == "tsv" else ",")


def jsonl_text(rows: Rows, fmt: str, lossy: bool) -> str:
    name = _value_name(rows)
    sources = rows.source if rows.source is not None else [None] * len(rows.query)
    return "".join(json.dumps({"query_id": q, "doc_id": d, name: _json_number(v), **({} if src is None else {"source": src})},
                              ensure_ascii=False) + "\n"
                   for q, d, v, src in zip(rows.query, rows.doc, rows.value, sources, strict=True))


def _json_number(x: float) -> int | float:
    return int(x) if float(x).is_integer() and abs(x) < 1e15 else x


def json_text(rows: Rows, fmt: str, lossy: bool) -> str:
    _no_duplicates(rows, "JSON")
    values = rows.value if rows.kind == "qrels" else _scores_needed(rows, fmt, lossy)
    nested = {q: {rows.doc[i]: _json_number(values[i]) for i in members} for q, members in rows.groups()}
    nested.update((q, {}) for q in rows.listed)
    return json.dumps(nested, ensure_ascii=False, indent=1) + "\n"


def quepid_text(rows: Rows, fmt: str, lossy: bool) -> str:
    for i, (q, d) in enumerate(zip(rows.query, rows.doc, strict=True)):
        if q != q.strip() or d != d.strip():
            raise _refuse(rows, i, "Quepid's CSV cannot hold an id with leading or trailing blanks (its importer strips them)")
    for q in rows.listed:
        if q != q.strip():
            raise FormatLossError(f"query {q!r} (listed with no judgment): Quepid's CSV cannot hold an id with leading "
                                  "or trailing blanks (its importer strips them)")

    def safe(text: str) -> str:  # Quepid's make_csv_safe; the reader strips the space again
        return " " + text if text[:1] in ("=", "+", "-", "@") else text

    if rows.kind == "qrels":  # (a query nobody rated: a row of its text alone, as Quepid exports it)
        rated = ([safe(q), safe(d), _num(g)] for q, d, g in zip(rows.query, rows.doc, rows.value, strict=True))
        return _csv_text(list(QUEPID_RATINGS), itertools.chain(rated, ([safe(q), "", ""] for q in rows.listed)))
    ranks = _ranks_needed(rows, fmt, lossy)
    name = rows.tag or "rankflavor"
    return _csv_text(list(QUEPID_SNAPSHOT), ([name, "", "", safe(q), safe(d), _num(r)]
                                             for q, d, r in zip(rows.query, rows.doc, ranks, strict=True)))


def es_text(rows: Rows, fmt: str, lossy: bool) -> str:
    if rows.kind == "qrels":
        _integers(rows, "_rank_eval ratings")
        requests = [{"id": q, "ratings": [{"_index": "index", "_id": rows.doc[i], "rating": int(rows.value[i])}
                                          for i in members]} for q, members in rows.groups()]
        requests += [{"id": q, "ratings": []} for q in rows.listed]
        return json.dumps({"requests": requests}, ensure_ascii=False, indent=1) + "\n"
    responses = {}
    for q, members in rows.groups():
        if rows.ranked:  # hits without _score are read by position: they must stand in rank order 1, 2, ...
            for pos, i in enumerate(members, 1):
                if rows.value[i] != pos:
                    raise _refuse(rows, i, f"search hits without _score are ranked by position; rank {_num(rows.value[i])} "
                                  f"stands at position {pos} of query {q!r}")
            hits = [{"_id": rows.doc[i], "_score": None} for i in members]
        else:
            hits = [{"_id": rows.doc[i], "_score": rows.value[i]} for i in members]
        responses[q] = {"hits": {"hits": hits}}
    responses.update((q, {"hits": {"hits": []}}) for q in rows.listed)
    return json.dumps(responses, ensure_ascii=False, indent=1) + "\n"


def parquet_table(table: Qrels | Run, lossy: bool = False) -> pa.Table:
    """The columns Parquet gets, taken from ``table``'s own arrays (no row becomes a Python
    value): ``query_id``, ``doc_id``, then ``relevance`` (judgments), ``score`` or ``rank`` (a run
    ordered by ranks), and ``source`` when the judgments name their label sources; the rules of
    :func:`render` (a query listed with nothing in it needs ``lossy``)."""
    kind = "qrels" if isinstance(table, Qrels) else "run"
    if table.listed_empty:
        named = set(to_strings(table.query))
        listed = [q for q in table.listed_empty if q not in named]
        if listed and not lossy:
            raise _listed_loss(listed, "parquet", kind)
    if isinstance(table, Qrels):
        name, values = "relevance", np.asarray(table.grade, dtype=np.float64)
    elif table.ranked_by == "rank":
        name, values = "rank", -np.asarray(table.score, dtype=np.float64) + 0.0
    else:
        name, values = "score", np.asarray(table.score, dtype=np.float64)
    columns = {"query_id": _text(table.query), "doc_id": _doc_ids(table), name: from_numpy(values)}
    if isinstance(table, Qrels) and table.label_source is not None:
        columns["source"] = _text(table.label_source)
    return pa.table(columns)


def _doc_ids(table: Qrels | Run) -> pa.Array:
    """The docnos as int64 when every one is a canonical decimal integer (``0``, ``7``, ``8841823``:
    no sign, no leading zero, at most 18 digits; :mod:`rankflavor.io.docnos`), whose decimal text is
    the docno again, so reading the file gives the same strings; else as text. Integers read back
    with no string made (MS MARCO's 8.8M passages are such docnos), a file a third smaller."""
    if isinstance(table, Run) and table.doc_integers is not None:
        return from_numpy(np.concatenate(table.doc_integers) if len(table.doc_integers) != 1 else table.doc_integers[0])
    text = _text(table.doc)
    found = canonical_integer_range(text)
    return text if found is None else from_numpy(found[0])


def _text(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    """Ids as one plain (not dictionary-encoded, not large) string array."""
    plain = plain_strings(values)
    return plain if plain.type == pa.string() else plain.cast(pa.string())


def _write_parquet(table: pa.Table, where: str | os.PathLike[str] | pa.NativeFile) -> None:
    import pyarrow.parquet as pq

    pq.write_table(table, where)
