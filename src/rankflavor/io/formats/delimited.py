"""Delimited text with a header naming the columns: CSV/TSV, BEIR qrels, Quepid's exports; and the
MS MARCO run TSV, which has no header.

Layouts (each read by :mod:`csv`, whose quoting rules all of them follow, row by row so that
every error names its line):

``csv`` / ``tsv``
    A header row, then one judgment or result per row. Columns are found by name
    (:data:`~rankflavor.io.formats.spec.DEFAULTS`, or ``--columns query=qid,doc=docid,grade=label``);
    other columns are ignored.
``beir`` qrels
    ``qrels/<split>.tsv`` of a BEIR dataset: the header ``query-id<TAB>corpus-id<TAB>score``, then
    integer grades (beir-cellar/beir ``beir/datasets/data_loader.py``, ``_load_qrels``: a
    ``csv.reader`` on tabs that skips the header row).
``msmarco`` run
    ``qid<TAB>pid<TAB>rank``, no header and no score (the MS MARCO passage ranking runs, e.g.
    Anserini's ``run.msmarco-passage.dev.small.tsv``, read by ``ms_marco_eval.py``, which splits
    each line at tabs). The run is ordered by rank (``order=rank``).
``quepid`` qrels
    Quepid's ratings export (o19s/quepid ``app/views/api/v1/export/ratings/show.basic.csv.erb``):
    the header ``query,docid,rating``, then one rating per row; a query nobody rated is a row of
    its query text alone (a row with a document and no rating likewise holds no judgment): the
    row is counted in ``Qrels.skipped_rows``, and its query is listed with no judgment
    (``Qrels.listed_empty``), so the query is known and counted, and the ``quepid`` preset
    scores it 0.0 as Quepid scores a query with no ratings (o19s/quepid
    ``test/services/javascript_scorer_test.rb``, "runs even though no scores provided"). Quepid
    writes a query text starting with ``= + - @`` after a space (``make_csv_safe``); ids are
    stripped of leading and trailing blanks, as Quepid's importer strips them.
``quepid`` run
    Quepid's snapshot CSV (the header its "Import Snapshots" takes and its snapshot export writes:
    ``Snapshot Name,Snapshot Time,Case ID,Query Text,Doc ID,Doc Position``, then any document
    fields): query = ``Query Text``, doc = ``Doc ID``, ordered by ``Doc Position`` (no score). A
    file of several snapshots is refused: each is a run of its own.
"""

from __future__ import annotations

import csv
import dataclasses
import io
from collections.abc import Iterator, Mapping

import numpy as np
import pyarrow as pa

from rankflavor.errors import InputError
from rankflavor.io.columns import string_array
from rankflavor.io.formats.spec import DEFAULTS
from rankflavor.io.formats.table import by_lines, to_qrels, to_run
from rankflavor.io.nul import REASON, has_nul
from rankflavor.io.tables import Qrels, Run

BEIR_HEADER = ("query-id", "corpus-id", "score")
QUEPID_RATINGS = ("query", "docid", "rating")
QUEPID_SNAPSHOT = ("Snapshot Name", "Snapshot Time", "Case ID", "Query Text", "Doc ID", "Doc Position")
MSMARCO_RUN = "qid<TAB>pid<TAB>rank"


def decode(source: str, data: bytes) -> str:
    """UTF-8 text (a byte-order mark dropped), else an error naming the line."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(source, data.count(b"\n", 0, exc.start) + 1, "is not valid UTF-8 text") from None


def rows(source: str, text: str, delimiter: str) -> Iterator[tuple[int, list[str]]]:
    """Each row of ``text`` with the line it starts on; blank rows are yielded as ``[]``.

    A field of any length is read, as every other reader reads an id of any length: where
    :mod:`csv` stops at its field size limit (a switch of the whole process, never changed
    here), the rest is read by :func:`~rankflavor.io.formats.csvtext.records`, which parses
    the same dialect with the same errors."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    start, done = 1, 0
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            if str(exc).startswith("field larger than field limit"):
                yield from _unlimited(source, text, delimiter, done)
                return
            raise InputError(source, reader.line_num, f"is not valid CSV: {exc}", _line(text, reader.line_num)) from None
        yield start, row if any(cell.strip() for cell in row) else []
        start, done = reader.line_num + 1, done + 1


def _unlimited(source: str, text: str, delimiter: str, skip: int) -> Iterator[tuple[int, list[str]]]:
    """:func:`rows` after its first ``skip`` rows, read without a field size limit."""
    from rankflavor.io.formats.csvtext import CsvSyntaxError, records

    try:
        for i, (line, row) in enumerate(records(text, delimiter)):
            if i >= skip:
                yield line, row if any(cell.strip() for cell in row) else []
    except CsvSyntaxError as exc:
        raise InputError(source, exc.line, f"is not valid CSV: {exc}", _line(text, exc.line)) from None


def _line(text: str, line: int) -> str:
    parts = text.split("\n", line)
    return parts[line - 1].rstrip("\r") if line - 1 < len(parts) else ""


def header_table(source: str, text: str, delimiter: str, layout: str) -> tuple[list[str], pa.Table, np.ndarray, int]:
    """The header's names and a table of every other row (strings), their lines and how many
    blank rows were skipped."""
    header: list[str] | None = None
    cells: list[list[str]] = []
    lines: list[int] = []
    blank = 0
    for line, row in rows(source, text, delimiter):
        if not row:
            blank += 1
            continue
        if header is None:
            header = [name.strip() for name in row]
            if len(set(header)) != len(header):
                raise InputError(source, line, f"the header names a column twice; expected {layout}", _line(text, line))
            cells = [[] for _ in header]
            continue
        if len(row) != len(header):
            raise InputError(source, line, f"expected {len(header)} fields ({', '.join(header)}), found {len(row)}",
                             _line(text, line))
        for column, cell in zip(cells, row, strict=True):
            column.append(cell)
        lines.append(line)
    if header is None:
        raise InputError(source, None, f"is empty; expected {layout}")
    table = pa.table({name: string_array(column) for name, column in zip(header, cells, strict=True)})
    return header, table, np.asarray(lines, dtype=np.int64), blank


def read_named(source: str, data: bytes, kind: str, delimiter: str, columns: Mapping[str, str]) -> Qrels | Run:
    """``csv`` / ``tsv``: a header naming the columns."""
    layout = "a header naming the columns (query_id, doc_id, " + ("relevance)" if kind == "qrels" else "score or rank)")
    _, table, lines, _ = header_table(source, decode(source, data), delimiter, layout)
    where = by_lines(lines)
    if kind == "qrels":
        return to_qrels(table, source, columns, where, lines=lines)
    return to_run(table, source, columns, where, lines=lines)


def read_beir_qrels(source: str, data: bytes) -> Qrels:
    """BEIR's ``qrels/<split>.tsv``: header ``query-id corpus-id score``."""
    text = decode(source, data)
    layout = "the header 'query-id<TAB>corpus-id<TAB>score' (BEIR qrels)"
    header, table, lines, _ = header_table(source, text, "\t", layout)
    if tuple(header) != BEIR_HEADER:
        raise InputError(source, int(lines[0]) - 1 if len(lines) else 1, f"expected {layout}", "\t".join(header))
    return to_qrels(table, source, {"query": "query-id", "doc": "corpus-id", "grade": "score"}, by_lines(lines), lines=lines)


def read_msmarco_run(source: str, data: bytes) -> Run:
    """MS MARCO's ``qid<TAB>pid<TAB>rank`` (no header, no score): ordered by rank."""
    text = decode(source, data)
    queries: list[str] = []
    docs: list[str] = []
    ranks: list[str] = []
    lines: list[int] = []
    for line, raw in enumerate(text.split("\n"), 1):
        stripped = raw.rstrip("\r")
        if not stripped.strip():
            continue
        parts = stripped.split("\t")
        if len(parts) != 3:
            hint = " (a TREC run line? give --run-format trec)" if len(stripped.split()) >= 6 else ""
            raise InputError(source, line, f"expected 3 tab-separated fields '{MSMARCO_RUN}', found {len(parts)}" + hint,
                             stripped)
        queries.append(parts[0].strip())
        docs.append(parts[1].strip())
        ranks.append(parts[2].strip())
        lines.append(line)
    if not lines:
        raise InputError(source, None, f"run file has no result lines; expected '{MSMARCO_RUN}'")
    at = np.asarray(lines, dtype=np.int64)
    table = pa.table({"qid": string_array(queries), "pid": string_array(docs), "rank": string_array(ranks)})
    return to_run(table, source, {"query": "qid", "doc": "pid", "rank": "rank"}, by_lines(at), lines=at)


def read_quepid_ratings(source: str, data: bytes) -> Qrels:
    """Quepid's ratings export ``query,docid,rating``; a row without a rating is counted and left
    out, and its query listed (with no judgment unless another row rates it)."""
    text = decode(source, data)
    layout = "Quepid's header 'query,docid,rating'"
    header: list[str] | None = None
    cells: tuple[list[str], list[str], list[str]] = ([], [], [])
    lines: list[int] = []
    skipped = 0
    unrated: dict[str, None] = {}  # queries of the rows without a rating, in file order
    for line, row in rows(source, text, ","):
        if not row:
            continue
        if header is None:
            header = [c.strip() for c in row]
            if tuple(header[:3]) != QUEPID_RATINGS:
                raise InputError(source, line, f"expected {layout}", _line(text, line))
            continue
        if len(row) == 1 or (len(row) == 3 and not row[1].strip() and not row[2].strip()) or (
                len(row) == 3 and not row[2].strip()):
            skipped += 1  # a query (or a doc) without a rating
            query = row[0].strip()
            if has_nul(query):  # refused as in a rated row (rankflavor.io.nul)
                raise InputError(source, line, f"query {REASON}", _line(text, line))
            if query:
                unrated[query] = None
            continue
        if len(row) != len(header):
            raise InputError(source, line, f"expected {len(header)} fields ({', '.join(header)}), found {len(row)}",
                             _line(text, line))
        for column, cell in zip(cells, row[:3], strict=True):
            column.append(cell.strip())
        lines.append(line)
    if header is None:
        raise InputError(source, None, f"is empty; expected {layout}")
    listed = tuple(unrated)
    if not lines and listed:  # a case nobody rated: its queries, with no judgment
        none = string_array([])
        return Qrels(none.dictionary_encode(), none, np.zeros(0, dtype=np.float64), source, from_file=True,
                     skipped_rows=skipped, listed_empty=listed)
    at = np.asarray(lines, dtype=np.int64)
    table = pa.table({name: string_array(c) for name, c in zip(QUEPID_RATINGS, cells, strict=True)})
    qrels = to_qrels(table, source, {"query": "query", "doc": "docid", "grade": "rating"}, by_lines(at), lines=at,
                     skipped=skipped)
    return dataclasses.replace(qrels, listed_empty=listed) if listed else qrels


def read_quepid_snapshot(source: str, data: bytes) -> Run:
    """Quepid's snapshot CSV: ordered by ``Doc Position``; one snapshot per file."""
    text = decode(source, data)
    layout = "Quepid's snapshot header '" + ",".join(QUEPID_SNAPSHOT) + "'"
    header, table, lines, _ = header_table(source, text, ",", layout)
    if tuple(header[: len(QUEPID_SNAPSHOT)]) != QUEPID_SNAPSHOT:
        raise InputError(source, int(lines[0]) - 1 if len(lines) else 1, f"expected {layout}", ",".join(header))
    names = list(dict.fromkeys(table.column("Snapshot Name").to_pylist()))
    if len(names) > 1:
        raise InputError(source, None, f"holds {len(names)} snapshots ({', '.join(map(repr, names[:3]))}"
                         f"{', ...' if len(names) > 3 else ''}); each snapshot is a run of its own: split the file")
    stripped = pa.table({"Query Text": string_array([t.strip() for t in table.column("Query Text").to_pylist()]),
                         "Doc ID": string_array([t.strip() for t in table.column("Doc ID").to_pylist()]),
                         "Doc Position": table.column("Doc Position")})
    return to_run(stripped, source, {"query": "Query Text", "doc": "Doc ID", "rank": "Doc Position"}, by_lines(lines),
                  lines=lines,
                  tag=names[0] if names else None)


def read_csv(source: str, data: bytes, kind: str, columns: Mapping[str, str]) -> Qrels | Run:
    """The ``csv`` format's reader (:data:`rankflavor.io.formats.spec.TABLE`)."""
    return read_named(source, data, kind, ",", columns)


def read_tsv(source: str, data: bytes, kind: str, columns: Mapping[str, str]) -> Qrels | Run:
    """The ``tsv`` format's reader."""
    return read_named(source, data, kind, "\t", columns)


def read_msmarco(source: str, data: bytes, kind: str, columns: Mapping[str, str]) -> Qrels | Run:
    """The ``msmarco`` format's reader of runs (its qrels are TREC qrels, read by the TREC reader)."""
    return read_msmarco_run(source, data)


def sniff(text_head: bytes) -> str:
    """What a delimited file's first line says it is: ``beir`` (BEIR's qrels header), ``quepid``
    (either Quepid header), ``quepid-book`` (Quepid's book judgements), ``msmarco`` (three tab-separated fields, no header), ``trec``
    (whitespace-separated, no header) or ``named`` (any other header).

    Examples
    --------
    >>> sniff(b"query-id\\tcorpus-id\\tscore\\n1\\t2\\t1\\n"), sniff(b"query,docid,rating\\n")
    ('beir', 'quepid')
    >>> sniff(b"1048585\\t7187158\\t1\\n"), sniff(b"q1 0 d1 1\\n"), sniff(b"qid,docid,label\\n")
    ('msmarco', 'trec', 'named')
    """
    first = text_head.lstrip(b"\xef\xbb\xbf").split(b"\n", 1)[0].rstrip(b"\r").decode("utf-8", "replace")
    if tuple(first.split("\t")) == BEIR_HEADER:
        return "beir"
    if tuple(c.strip() for c in first.split(",")[:3]) == QUEPID_RATINGS or first.startswith(",".join(QUEPID_SNAPSHOT)):
        return "quepid"
    if first.startswith("query,docid,"):
        try:
            header = next(rows("", first, ","))[1]
        except InputError:  # (not CSV: the reader of the format chosen names the file and line)
            header = []
        if is_quepid_book(header):
            return "quepid-book"  # Quepid's book judgements (rankflavor.io.formats.labelled)
    tabbed = first.split("\t")
    if len(tabbed) == 3 and tabbed[2].strip().isdigit():
        return "msmarco"
    fields = first.split()
    if "," not in first and ((len(fields) == 4 and _numeric(fields[3])) or
                             (len(fields) >= 6 and _numeric(fields[3]) and _numeric(fields[4]))):
        return "trec"  # TREC lines (MS MARCO qrels are TREC qrels with tabs)
    return "named"


def is_quepid_book(header: list[str]) -> bool:
    """A header of Quepid's book judgements export (read by
    :func:`rankflavor.io.formats.labelled.read_quepid_book`): ``query,docid`` then judges' names
    (not a ratings export's ``rating``, nor the columns a named CSV file uses).

    >>> is_quepid_book(["query", "docid", "Jane Doe", "OSC AI Judge"]), is_quepid_book(["query", "docid", "rating"])
    (True, False)
    """
    named = {"rating"} | {n for role in ("grade", "source", "score", "rank") for n in DEFAULTS[role]}
    rest = header[2:]
    return header[:2] == ["query", "docid"] and bool(rest) and not any(n.strip() in named for n in rest)


def _numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
