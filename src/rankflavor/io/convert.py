"""``rankflavor convert IN OUT``: judgments or a run from any format into any other, exactly.

What is read is what the engine would read (:func:`rankflavor.io.qrels.read_qrels`,
:func:`rankflavor.io.run.read_run`), and the writer (:mod:`rankflavor.io.formats.write`) writes
the same rows per query, in the same order, with the same ids and values, so reading ``OUT``
gives what reading ``IN`` gave. Where the output format cannot hold something (scores in a
format of ranks, a blank inside a TREC id), the conversion is refused with a
:class:`~rankflavor.errors.FormatLossError`, or with ``lossy=True`` does the documented lossy
thing (see :mod:`rankflavor.io.formats.write`).

Examples
--------
>>> import tempfile, os
>>> d = tempfile.mkdtemp()
>>> _ = open(os.path.join(d, "q.txt"), "w").write("q1 0 d1 2\\nq1 0 d2 0\\n")
>>> c = convert(os.path.join(d, "q.txt"), os.path.join(d, "q.jsonl"))
>>> c.kind, c.rows, c.to_format
('qrels', 2, 'jsonl')
>>> open(os.path.join(d, "q.jsonl")).readline()
'{"query_id": "q1", "doc_id": "d1", "relevance": 2}\\n'
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from rankflavor.errors import InputError, UsageError
from rankflavor.io.columns import from_numpy, plain_strings, to_strings, used_names
from rankflavor.io.compression import SUFFIXES, other_codec
from rankflavor.io.docnos import canonical_integer_range
from rankflavor.io.formats.spec import FORMATS, format_by_name, format_named, parse_columns, split_input
from rankflavor.io.formats.write import lists_empty, write
from rankflavor.io.qrels import read_qrels
from rankflavor.io.run import read_run
from rankflavor.io.source import is_gzip
from rankflavor.io.tables import Qrels, Run

if TYPE_CHECKING:
    from rankflavor.io.stream import Batch

KINDS = ("auto", "qrels", "run")


@dataclass(frozen=True)
class Conversion:
    """What :func:`convert` did: the kind, rows and queries written, and the formats."""

    kind: str
    rows: int
    queries: int
    from_format: str
    to_format: str
    output: str
    ranked_by: str = "score"
    #: Queries listed with nothing in them that the output names too (counted in ``queries``).
    listed: int = 0
    #: Queries listed with nothing in them that the output format cannot name, left out (``lossy``).
    dropped: int = 0

    def summary(self) -> str:
        what = "judgments" if self.kind == "qrels" else "results"
        ranked = " (ordered by rank, no scores)" if self.ranked_by == "rank" else ""
        listed = f", {self.listed} of them listed with nothing in them" if self.listed else ""
        dropped = (f"; left out {self.dropped} query(ies) listed with nothing in them, which {self.to_format} cannot "
                   "name (--lossy)") if self.dropped else ""
        return (f"wrote {self.rows} {what} of {self.queries} queries{listed}{ranked} to {self.output} "
                f"({self.from_format} -> {self.to_format}){dropped}\n")


def read_either(path: str | os.PathLike[str], kind: str, fmt: str | None, columns: str | Mapping[str, str] | None
                ) -> Qrels | Run:
    """Read ``path`` as ``kind``; ``auto`` tries judgments, then a run, and refuses a file both read."""
    if kind == "qrels":
        return read_qrels(path, fmt, columns)
    if kind == "run":
        return read_run(path, fmt, columns)
    if kind != "auto":
        raise UsageError(f"--kind: expected one of {', '.join(KINDS)}, received {kind!r}")
    if (_first_fields(path, fmt) or 0) >= 6:
        # a TREC run line: the judgments reader refuses it on line 1, after folding the whole file's
        # blanks (seconds for a big run); it is asked only when the run reader fails too (the error)
        try:
            return read_run(path, fmt, columns)
        except InputError:
            pass
    errors: list[InputError] = []
    found: list[Qrels | Run] = []
    for reader in (read_qrels, read_run):
        try:
            found.append(reader(path, fmt, columns))
        except InputError as exc:
            errors.append(exc)
    if len(found) == 2:
        raise UsageError(f"{path} reads both as judgments and as a run; give --kind qrels or --kind run")
    if found:
        return found[0]
    first = errors[0]
    raise InputError(first.source, first.line, first.message + " (read as judgments; as a run: "
                     + str(errors[1]).split("\n")[0] + ")", first.text)


def convert(src: str | os.PathLike[str], dst: str | os.PathLike[str], *, kind: str = "auto",
            from_format: str | None = None, to_format: str | None = None,
            columns: str | Mapping[str, str] | None = None, lossy: bool = False) -> Conversion:
    """Convert judgments or a run from ``src`` to ``dst``.

    Parameters
    ----------
    src, dst : paths; each format is named or chosen by the file's name (``.parquet``,
        ``.jsonl``, ``.json``, ``.csv``, ``.tsv``; anything else TREC), a compression suffix
        (``.gz``, ``.bz2``, ``.xz``, ``.zst``) choosing the output's codec.
    kind : ``qrels``, ``run`` or ``auto`` (whichever the input reads as).
    from_format, to_format : formats of :data:`rankflavor.io.formats.spec.FORMATS`.
    columns : the input's column names (csv, tsv, jsonl, parquet).
    lossy : allow the documented losses of :mod:`rankflavor.io.formats.write`.

    Raises
    ------
    InputError
        When the input is malformed (naming file and line, row or JSON path).
    FormatLossError
        When the output format cannot hold the input exactly (and ``lossy`` does not apply).
    """
    roles = parse_columns(columns)
    if kind == "auto" and roles.keys() & {"score", "rank"}:
        kind = "run"  # the columns say which
    elif kind == "auto" and "grade" in roles:
        kind = "qrels"
    path, fmt, cols = split_input(src, from_format, roles, "qrels" if kind == "auto" else kind)
    out = format_named(to_format) or format_by_name(dst)
    if out not in FORMATS:
        raise UsageError(f"unknown output format {out!r}")
    if os.path.abspath(os.fspath(dst)) == os.path.abspath(os.fspath(path)):
        raise UsageError(f"OUT is IN ({dst}): give another output file")
    if _streams(path, kind, fmt, cols, out, dst):
        try:
            streamed = _stream_run_to_parquet(path, dst)
            if streamed is not None:
                return streamed
        except InputError:
            if kind == "run":
                raise
            # (auto: the whole read below names the error as it always did, as a run and as judgments)
    table = read_either(path, kind, fmt, cols or None)
    write(table, dst, out, lossy)
    table_kind = "qrels" if isinstance(table, Qrels) else "run"
    queries = _distinct(table.query)
    # (write refused queries listed with nothing in them unless lossy or the format names them)
    listed = len(set(table.listed_empty) - set(to_strings(table.query))) if table.listed_empty else 0
    kept = listed if lists_empty(out, table_kind) else 0
    return Conversion(table_kind, len(table), queries + kept, fmt or format_by_name(path), out, str(dst),
                      table.ranked_by if isinstance(table, Run) else "score", kept, listed - kept)


def _streams(path: str | os.PathLike[str], kind: str, fmt: str | None, cols: Mapping[str, str] | None, out: str,
             dst: str | os.PathLike[str]) -> bool:
    """Whether the conversion is a TREC run (plain or gzip) into a plain Parquet file, which
    :func:`_stream_run_to_parquet` writes a piece at a time."""
    if out != "parquet" or cols or (fmt or format_by_name(path)) != "trec" or kind == "qrels":
        return False
    if any(os.fspath(dst).lower().endswith(s) for s in SUFFIXES) or not os.path.isfile(path) or other_codec(path):
        return False
    return kind == "run" or is_gzip(path) or (_first_fields(path, fmt) or 0) >= 6


#: Rows of one Parquet row group written by :func:`_stream_run_to_parquet` (pyarrow's own default).
ROW_GROUP_ROWS = 1 << 20


def _stream_run_to_parquet(path: str | os.PathLike[str], dst: str | os.PathLike[str]) -> Conversion | None:
    """A TREC run into Parquet a piece at a time: memory is bounded by the pieces the readers
    parse ahead and one row group, not by the file (issue 33: 407 MiB for a 7M-line run read
    whole). The file is what :func:`~rankflavor.io.formats.write.parquet_table` makes of the
    whole run: ``query_id`` and ``doc_id`` text, or ``doc_id`` int64 when every docno is a
    canonical integer, and ``score``; rows in file order. The pieces are parsed by the readers of
    ``--chunk-rows`` (:func:`rankflavor.io.stream.run_batches`, the same checks and errors). The docnos'
    type is taken from the first piece; a later piece with a docno that is not a canonical
    integer starts the file again with text docnos (a second read). It is written beside ``dst``
    and moved there when whole, so an error in the input leaves no partial file. None for a
    file with no result lines (the whole read names that error)."""
    import secrets

    import pyarrow.parquet as pq

    from rankflavor.io.stream import run_batches

    folder = os.path.dirname(os.path.abspath(os.fspath(dst)))
    for integers in (True, False):
        # (created as open() creates a file, under the umask; mkstemp's would be 0600)
        partial = os.path.join(folder, f".{os.path.basename(os.fspath(dst))}.{secrets.token_hex(6)}.partial")
        os.close(os.open(partial, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
        try:
            written = _write_pieces(run_batches(os.fspath(path)), partial, integers, pq)
            if written is None:
                continue  # a docno that is not a canonical integer: again, as text
            if written[0] == 0:
                return None
            os.replace(partial, dst)
        finally:
            if os.path.exists(partial):
                os.remove(partial)
        rows, queries = written
        return Conversion("run", rows, queries, "trec", "parquet", str(dst))
    raise AssertionError("unreachable: the text pass always writes")


def _write_pieces(batches: Iterator[Batch], partial: str, integers: bool, pq: Any) -> tuple[int, int] | None:
    """Write the batches' rows to ``partial`` in row groups of :data:`ROW_GROUP_ROWS`: (rows,
    distinct queries), or None when ``integers`` and a docno is not a canonical integer. A row
    group is encoded on a thread of its own while the next one's pieces are parsed (one row group
    written at a time, so memory holds at most two)."""
    from rankflavor.base.threads import in_background

    schema = pa.schema([("query_id", pa.string()), ("doc_id", pa.int64() if integers else pa.string()),
                        ("score", pa.float64())])
    names: set[str] = set()
    rows = held = 0
    pending: list[pa.RecordBatch] = []
    with pq.ParquetWriter(partial, schema) as writer:
        writing = None

        def flush() -> None:
            nonlocal writing, pending, held
            if writing is not None:
                writing.result()
            group = pa.Table.from_batches(pending, schema)
            writing = in_background(writer.write_table, group, ROW_GROUP_ROWS)
            pending, held = [], 0

        try:
            for query, doc, score, keys, *_ in batches:
                if not len(score):
                    continue
                docs = _piece_docs(doc, keys) if integers else plain_strings(doc)
                if docs is None:
                    return None
                names.update(used_names(query))
                pending.append(pa.record_batch(
                    [plain_strings(query), docs, from_numpy(np.asarray(score, dtype=np.float64))], schema=schema))
                rows += len(score)
                held += len(score)
                if held >= ROW_GROUP_ROWS:
                    flush()
            if pending:
                flush()
        finally:
            if writing is not None:
                writing.result()  # (never close the writer under a thread still writing to it)
    return rows, len(names)


def _piece_docs(doc: pa.Array, keys: tuple[str, np.ndarray] | None) -> pa.Array | None:
    """A piece's docnos as int64 values: the read workers' when they found every one canonical,
    else cast here (the line path gives none); None when one is not a canonical integer."""
    if keys is not None and keys[0] == "integers":
        return from_numpy(keys[1])
    found = canonical_integer_range(plain_strings(doc))
    return None if found is None else from_numpy(found[0])


def _first_fields(path: str | os.PathLike[str], fmt: str | None) -> int | None:
    """The number of fields of the first line of a plain TREC text file that holds data (not
    blank, not a ``#`` comment) within its first 64 KiB; None for any other file."""
    if (fmt or format_by_name(path)) != "trec" or not os.path.isfile(path) or other_codec(path):
        return None
    with open(path, "rb") as fh:
        head = fh.read(1 << 16)
    if head[:2] == b"\x1f\x8b":
        return None
    for line in head.split(b"\n")[:-1]:
        fields = line.split()
        if fields and not fields[0].startswith(b"#"):
            return len(fields)
    return None


def _distinct(ids: pa.Array | pa.ChunkedArray) -> int:
    """How many distinct ids (counted by Arrow; no id becomes a Python string)."""
    import pyarrow.compute as pc

    return int(pc.count_distinct(plain_strings(ids)).as_py()) if len(ids) else 0
