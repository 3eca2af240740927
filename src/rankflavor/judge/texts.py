"""What ``judge`` reads: the pairs to judge, and the texts of their queries and passages.

Pairs (:func:`read_pairs`), a file of one of these forms, recognised by its first line:

* ``pool``'s ``trec`` stub, ``QUERY 0 DOC`` (the grade left empty), or TREC qrels
  ``QUERY 0 DOC GRADE [SOURCE]`` (the pairs are judged again; the grades are not read);
* two whitespace-separated fields ``QUERY DOC``;
* CSV or TSV with a header naming a query column (``query``, ``qid``, ``query_id``, ``query-id``,
  ``queryid``, ``topic``) and a document column (``doc``, ``docid``, ``doc_id``, ``docno``,
  ``corpus-id``, ``corpus_id``, ``pid``, ``passage_id``), names compared in lower case:
  ``pool --format csv``/``quepid`` output, BEIR's qrels TSV;
* Parquet (by its ``.parquet`` name) with such columns.

Blank lines may come first, a UTF-8 byte-order mark is dropped, and lines may end in LF, CR LF
or CR. A pair listed twice is judged once; the repeats are counted (``duplicates``).

Texts (:func:`read_texts`), by the file's name (a ``.gz``, ``.bz2`` or ``.xz`` ending aside; the
codec itself is recognised by its magic number):

* ``.jsonl``/``.json``: JSON lines with an id (``_id``, ``id``, ``docid``, ``doc_id``, ``qid``,
  ``query_id``, ``pid``) and ``text``, and optionally ``title`` (BEIR ``corpus.jsonl`` and
  ``queries.jsonl``);
* ``.parquet``: the same columns;
* anything else: ``ID<TAB>TEXT`` lines without a header (MS MARCO ``queries.tsv``,
  ``collection.tsv``).

A passage with a non-empty title is ``TITLE`` and ``TEXT`` on two lines. Only the ids the pairs
name are kept, reading line by line, so an 8.8-million-passage collection costs the memory of the
passages judged. An id given twice with different texts is an error naming both lines (which one
was judged would be unknown); twice with the same text is harmless.
"""

from __future__ import annotations

import bz2
import csv
import gzip
import io
import json
import lzma
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from rankflavor.errors import InputError
from rankflavor.io.compression import SUFFIXES, codec_of

QUERY_COLUMNS = ("query", "qid", "query_id", "query-id", "queryid", "topic")
DOC_COLUMNS = ("doc", "docid", "doc_id", "docno", "corpus-id", "corpus_id", "pid", "passage_id")
ID_FIELDS = ("_id", "id", "docid", "doc_id", "qid", "query_id", "pid")


@dataclass(frozen=True)
class Pairs:
    """The distinct (query, doc) pairs of a file, in the order first listed, and the repeats."""

    pairs: tuple[tuple[str, str], ...]
    duplicates: int = 0
    source: str = "pairs"


def as_pairs(pairs: Any) -> Pairs:
    """A :class:`Pairs` from a path or an iterable of ``(query, doc)``."""
    if isinstance(pairs, Pairs):
        return pairs
    if isinstance(pairs, (str, os.PathLike)):
        return read_pairs(pairs)
    return _distinct(((str(q), str(d)) for q, d in pairs), "pairs")


def _distinct(items: Iterator[tuple[str, str]], source: str) -> Pairs:
    seen: dict[tuple[str, str], None] = {}
    n = 0
    for pair in items:
        n += 1
        seen[pair] = None
    return Pairs(tuple(seen), n - len(seen), source)


def read_pairs(path: str | os.PathLike[str]) -> Pairs:
    """The pairs of a file (module docstring)."""
    source = os.fspath(path)
    if _bare_name(source).endswith(".parquet"):
        table = _parquet(source)
        q, d = _column(source, table.column_names, QUERY_COLUMNS, "query"), _column(source, table.column_names,
                                                                                 DOC_COLUMNS, "document")
        qs, ds = table.column(q).to_pylist(), table.column(d).to_pylist()
        return _distinct(((_id(source, i + 2, a), _id(source, i + 2, b)) for i, (a, b) in enumerate(zip(qs, ds,
                                                                                                        strict=True))), source)
    from rankflavor.io.source import read_bytes

    try:
        text = read_bytes(source).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(source, None, f"is not UTF-8 text (byte {exc.start})") from None
    text = text.removeprefix("\ufeff")  # a byte-order mark (Excel's "CSV UTF-8") is no part of a header or id
    lines = text.splitlines()
    at = next((n for n, line in enumerate(lines, 1) if line.strip()), None)
    if at is None:
        raise InputError(source, None, "has no pairs; expected 'QUERY 0 DOC' lines, qrels, or CSV/TSV with a "
                         "query and a doc column")
    first = lines[at - 1]
    delimiter = "\t" if "\t" in first else "," if "," in first else None
    if delimiter is not None:
        try:
            header = [h.strip().lower() for h in next(csv.reader([first], delimiter=delimiter))]
        except csv.Error:  # a field past csv's size limit, no column name: not a header
            header = []
        if any(h in QUERY_COLUMNS for h in header) and any(h in DOC_COLUMNS for h in header):
            return _delimited(source, text, delimiter)
        if delimiter == ",":
            raise InputError(source, at, f"a CSV of pairs needs a header with a query column ({', '.join(QUERY_COLUMNS)}) "
                             f"and a doc column ({', '.join(DOC_COLUMNS)})", first)
    return _whitespace(source, lines)


def _whitespace(source: str, lines: list[str]) -> Pairs:
    def pairs() -> Iterator[tuple[str, str]]:
        width = None
        for n, line in enumerate(lines, 1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) not in (2, 3, 4, 5):
                raise InputError(source, n, f"expected 'QUERY 0 DOC' (a pool stub), 'QUERY 0 DOC GRADE [SOURCE]' "
                                 f"(qrels) or 'QUERY DOC'; found {len(fields)} fields", line)
            kind = 2 if len(fields) == 2 else 3
            if width is not None and kind != width:
                raise InputError(source, n, "mixes 'QUERY DOC' lines with 'QUERY 0 DOC ...' lines", line)
            width = kind
            yield (fields[0], fields[1]) if kind == 2 else (fields[0], fields[2])

    return _distinct(pairs(), source)


def _delimited(source: str, text: str, delimiter: str) -> Pairs:
    # newline="": a line ends at \r, \n or \r\n, as for read_pairs, and csv keeps them inside quotes
    rows = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)

    def pairs() -> Iterator[tuple[str, str]]:
        # the header is the first row with a non-blank cell (blank lines may come first)
        header = [h.strip().lower() for h in next((row for row in rows if any(c.strip() for c in row)), [])]
        q = header.index(_column(source, header, QUERY_COLUMNS, "query"))
        d = header.index(_column(source, header, DOC_COLUMNS, "document"))
        for row in rows:
            if not any(cell.strip() for cell in row):
                continue
            n = rows.line_num
            if len(row) <= max(q, d):
                raise InputError(source, n, f"has {len(row)} fields; the header has {len(header)}", delimiter.join(row))
            query, doc = row[q].strip(), row[d].strip()
            if not query or not doc:
                raise InputError(source, n, "has an empty query or doc id", delimiter.join(row))
            yield query, doc

    try:
        return _distinct(pairs(), source)
    except csv.Error as exc:
        raise InputError(source, rows.line_num, f"is not valid CSV/TSV: {exc}") from None


def _column(source: str, names: list[str], wanted: tuple[str, ...], role: str) -> str:
    lowered = {str(n).lower(): str(n) for n in names}
    for name in wanted:
        if name in lowered:
            return lowered[name]
    raise InputError(source, None, f"has no {role} column; expected one of {', '.join(wanted)} "
                     f"(columns: {', '.join(map(str, names))})")


def _id(source: str, row: int, value: Any) -> str:
    if value is None or str(value).strip() == "":
        raise InputError(source, row, "has an empty id")
    return str(value).strip()


def _bare_name(path: str) -> str:
    name = Path(path).name.lower()
    for suffix in SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _parquet(source: str) -> Any:
    import pyarrow.parquet as pq

    try:
        return pq.read_table(source)
    except FileNotFoundError:
        raise InputError(source, None, "file not found") from None
    except Exception as exc:  # pyarrow's ArrowInvalid and OSError for a file that is not Parquet
        raise InputError(source, None, f"cannot read as Parquet: {exc}") from None


def _open_text(source: str) -> IO[str]:
    """A text stream of the file, decompressed by magic number (gzip, bz2, xz, zstd)."""
    try:
        with open(source, "rb") as fh:
            head = fh.read(6)
    except FileNotFoundError:
        raise InputError(source, None, "file not found") from None
    except IsADirectoryError:
        raise InputError(source, None, "is a directory, expected a file") from None
    except OSError as exc:
        raise InputError(source, None, f"cannot read file: {exc.strerror}") from None
    codec = codec_of(head)
    # utf-8-sig: a byte-order mark at the start (an editor's) is dropped, not read into the first id
    if codec == "gzip":
        return gzip.open(source, "rt", encoding="utf-8-sig", newline="")
    if codec == "bz2":
        return bz2.open(source, "rt", encoding="utf-8-sig", newline="")
    if codec == "xz":
        return lzma.open(source, "rt", encoding="utf-8-sig", newline="")
    if codec is not None:  # zstd: decompressed whole, so the decoding error comes here, not in read_texts' reading
        from rankflavor.io.source import read_bytes

        try:
            text = read_bytes(source).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(source, None, f"is not UTF-8 text (byte {exc.start})") from None
        return io.StringIO(text[1:] if text.startswith("\ufeff") else text, newline="")
    return open(source, encoding="utf-8-sig", newline="")


def read_texts(path: str | os.PathLike[str], wanted: set[str] | None = None, kind: str = "text") -> dict[str, str]:
    """``{id: text}`` of the ids in ``wanted`` (all when None) from a texts file (module docstring)."""
    source = os.fspath(path)
    name = _bare_name(source)
    if name.endswith(".parquet"):
        table = _parquet(source)
        id_col = _column(source, table.column_names, ID_FIELDS, "id")
        text_col = _column(source, table.column_names, ("text",), "text")
        titles = table.column("title").to_pylist() if "title" in table.column_names else None
        rows = ((i + 2, _id(source, i + 2, ident), text, titles[i] if titles else None)
                for i, (ident, text) in enumerate(zip(table.column(id_col).to_pylist(),
                                                      table.column(text_col).to_pylist(), strict=True)))
        return _keep(source, rows, wanted, kind)
    with _open_text(source) as fh:
        try:
            if name.endswith((".jsonl", ".json")):
                return _keep(source, _jsonl(source, fh), wanted, kind)
            return _keep(source, _tsv(source, fh), wanted, kind)
        except UnicodeDecodeError as exc:
            raise InputError(source, None, f"is not UTF-8 text (byte {exc.start} of a block)") from None
        except (OSError, EOFError, lzma.LZMAError) as exc:
            raise InputError(source, None, f"compressed data is corrupt: {exc}") from None


def _tsv(source: str, fh: IO[str]) -> Iterator[tuple[int, str, Any, Any]]:
    for n, line in enumerate(fh, 1):
        line = line.rstrip("\r\n")
        if not line.strip():
            continue
        ident, tab, text = line.partition("\t")
        if not tab:
            raise InputError(source, n, "expected 'ID<TAB>TEXT' (MS MARCO queries.tsv / collection.tsv); no tab found",
                             line)
        yield n, _id(source, n, ident), text, None


def _jsonl(source: str, fh: IO[str]) -> Iterator[tuple[int, str, Any, Any]]:
    for n, line in enumerate(fh, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(source, n, f"is not a JSON object: {exc.msg}", line.rstrip("\r\n")) from None
        if not isinstance(record, dict):
            raise InputError(source, n, "is not a JSON object", line.rstrip("\r\n"))
        key = next((k for k in ID_FIELDS if k in record), None)
        if key is None or "text" not in record:
            raise InputError(source, n, f"needs an id ({', '.join(ID_FIELDS)}) and 'text'", line.rstrip("\r\n"))
        yield n, _id(source, n, record[key]), record["text"], record.get("title")


def _keep(source: str, rows: Iterator[tuple[int, str, Any, Any]], wanted: set[str] | None,
          kind: str) -> dict[str, str]:
    out: dict[str, str] = {}
    where: dict[str, int] = {}
    for n, ident, text, title in rows:
        if wanted is not None and ident not in wanted:
            continue
        if not isinstance(text, str) or (title is not None and not isinstance(title, str)):
            raise InputError(source, n, f"the {kind} text (and title) of '{ident}' must be strings")
        full = f"{title}\n{text}" if title and title.strip() else text
        if ident in out and out[ident] != full:
            raise InputError(source, n, f"{kind} id '{ident}' is given twice with different texts (lines "
                             f"{where[ident]} and {n})")
        out.setdefault(ident, full)
        where.setdefault(ident, n)
    return out


__all__ = ["DOC_COLUMNS", "ID_FIELDS", "QUERY_COLUMNS", "Pairs", "as_pairs", "read_pairs", "read_texts"]
