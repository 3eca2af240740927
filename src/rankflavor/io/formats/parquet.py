"""Parquet: columns of the DataFrame inputs' names (or ``--columns``), read by pyarrow.

Only the columns needed are read (``pyarrow.parquet.ParquetFile.read(columns=...)``; not
``read_table``, whose dataset layer imports pandas, seconds of a small read), columnar: no step
per row. Rows are named by number (0-based, as pyarrow and pandas count them) in errors.
A compressed file (``.parquet.gz``) is decompressed into memory first.

References
----------
.. [PQ] Apache Parquet file format, https://parquet.apache.org/docs/file-format/ (``PAR1`` magic).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import pyarrow as pa

from rankflavor.errors import InputError
from rankflavor.io.compression import other_codec
from rankflavor.io.formats.table import by_rows, pick, to_qrels, to_run
from rankflavor.io.source import read_bytes
from rankflavor.io.tables import Qrels, Run


def read_parquet(path: str | os.PathLike[str], kind: str, columns: Mapping[str, str]) -> Qrels | Run:
    """Judgments (``kind="qrels"``) or a run from a Parquet file."""
    import pyarrow.parquet as pq

    source = str(path)
    with open(path, "rb") as fh:
        head = fh.read(4)
    target: object = path
    if head != b"PAR1" and (head[:2] == b"\x1f\x8b" or other_codec(path)):
        target = pa.BufferReader(read_bytes(path))
    try:
        names = list(pq.ParquetFile(target).schema_arrow.names)  # type: ignore[arg-type]
        roles = ("query", "doc", "grade", "source") if kind == "qrels" else ("query", "doc", "score", "rank")
        wanted = {r: pick(names, r, columns, source, required=r in ("query", "doc", "grade")) for r in roles}
        if kind == "run" and wanted["score"] is None and wanted["rank"] is None:
            pick(names, "score", columns, source)  # the error naming what is needed
        read = [n for n in dict.fromkeys(wanted.values()) if n is not None]
        if isinstance(target, pa.BufferReader):
            target.seek(0)
        # the query ids as a dictionary: Parquet stores text columns in dictionary pages, so this
        # is the cheap way to the dictionary-encoded column the engine reads
        query = [wanted["query"]] if wanted["query"] is not None else None
        file = pq.ParquetFile(target, read_dictionary=query)  # type: ignore[arg-type]
        doc_type = file.schema_arrow.field(wanted["doc"]).type if wanted["doc"] is not None else None
        # (text docnos a row group at a time; integer docnos whole: by row groups their read
        # peaked higher, 465-505 MiB against 444-447 for the 7M-row run)
        text_docs = doc_type is not None and (pa.types.is_string(doc_type) or pa.types.is_large_string(doc_type))
        table = _read_by_row_groups(file, read) if text_docs else file.read(columns=read)
    except InputError:
        raise
    except (pa.ArrowException, OSError, ValueError, TypeError, IndexError) as exc:
        raise InputError(source, None, f"is not a readable Parquet file: {exc}") from None
    named = {r: n for r, n in wanted.items() if n is not None}
    if kind == "qrels":
        return to_qrels(table, source, named, by_rows, from_file=False)
    return to_run(table, source, named, by_rows, from_file=False)


def _read_by_row_groups(file: object, columns: list[str]) -> pa.Table:
    """The columns, read one row group after another into one table (its columns chunked by
    row group, nothing copied): pyarrow's decoder then holds one row group's buffers at a time,
    not the whole file's (issue 33: reading a 7M-row run of text docnos whole peaked at 585-625
    MiB for 200 MiB of columns, by row groups 463-472)."""
    groups = file.metadata.num_row_groups  # type: ignore[attr-defined]
    if groups < 2:
        return file.read(columns=columns)  # type: ignore[attr-defined, no-any-return]
    return pa.concat_tables([file.read_row_group(i, columns=columns) for i in range(groups)])  # type: ignore[attr-defined]
