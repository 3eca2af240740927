"""pyarrow's CSV parser on TREC lines: a whole file on all cores, or one piece on one core.

A parse succeeds only where its row i is line i + 1 and its fields are trec_eval's: the blank
scan (:mod:`rankflavor.io.source`) must accept the bytes, blank lines make pyarrow fail
(``ignore_empty_lines=False``) rather than vanish, and a query id that opens with ``#`` (a
comment) or is empty (a line opening with a blank) sends the file to the line path
(:func:`line_path_ids`). Every function here answers None where the line path must decide.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from rankflavor.io import arrow_ops
from rankflavor.io.columns import as_numpy, from_numpy, string_buffers
from rankflavor.io.source import clean, is_gzip, only_spaces

#: Query ids are dictionary-encoded while reading: a few thousand distinct values over millions
#: of lines, so alignment works on small integer indices and the dictionary alone.
QUERY = pa.dictionary(pa.int32(), pa.string())


@dataclass
class Derived:
    """What a read worker makes of one piece's columns: the columns to keep (None for one
    whose values went into ``rows``), a note of its own, and per-row arrays that the piece
    reader (:func:`rankflavor.io.columnar.read_pieces`) places into one contiguous array per
    name, piece after piece."""

    cols: list[pa.Array | None]
    note: Any
    rows: dict[str, np.ndarray]


#: A reader's own work on a piece's columns, run by the worker that parsed it.
Derive = Callable[[list[pa.Array]], Derived]


def csv_options(n_fields: int, keep: dict[int, pa.DataType], block_size: int, threads: bool) -> dict[str, Any]:
    """``read_csv`` options for lines of ``n_fields`` single-space-separated fields, keeping
    the fields ``keep`` names (field index: type), no quoting, no nulls."""
    from pyarrow import csv

    names = [f"f{i}" for i in range(n_fields)]
    return {
        "read_options": csv.ReadOptions(column_names=names, block_size=block_size, use_threads=threads),
        "parse_options": csv.ParseOptions(delimiter=" ", quote_char=False, escape_char=False, ignore_empty_lines=False),
        "convert_options": csv.ConvertOptions(
            column_types={names[i]: t for i, t in keep.items()},
            include_columns=[names[i] for i in sorted(keep)],
            null_values=[],
            strings_can_be_null=False,
            quoted_strings_can_be_null=False,
        ),
    }


def parse_whole(source: Any, n_fields: int, keep: dict[int, pa.DataType]) -> list[pa.Array | pa.ChunkedArray] | None:
    """Parse a whole file (a path, gzip or not) or bytes on all cores: the kept columns in
    field order, or None when any line needs the line path."""
    from pyarrow import csv

    size = os.path.getsize(source) if isinstance(source, (str, os.PathLike)) else len(source)
    # The scan reads the file once more; on its own thread it overlaps pyarrow's parse.
    stop = threading.Event()
    # A worker per call (a process forked later must not inherit a pool without its thread).
    scanner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rankflavor-scan")
    scan = scanner.submit(only_spaces, source, stop)
    scanner.shutdown(wait=False)  # the submitted scan still runs; nothing else will

    names = [f"f{i}" for i in range(n_fields)]
    try:
        if isinstance(source, (str, os.PathLike)):
            stream = pa.CompressedInputStream(pa.OSFile(str(source)), "gzip") if is_gzip(source) else pa.OSFile(str(source))
        else:
            stream = pa.BufferReader(source)
        # Blocks of about an eighth of the file (1-16 MB): pyarrow parses one block per thread, so a
        # file of one block (a qrels file of a few MB) would be read on one core.
        block = min(max(size // 8, 1 << 20), 1 << 24)
        with stream:
            table = csv.read_csv(stream, **csv_options(n_fields, keep, block, threads=True))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, UnicodeDecodeError, OSError):
        stop.set()
        return None
    if not scan.result() or table.num_rows == 0:
        return None
    cols = [_one_array(table.column(names[i])) for i in sorted(keep)]
    if line_path_ids(cols[0]):
        return None
    return cols


def parse_bytes(
    data: bytes | bytearray, n_fields: int, keep: dict[int, pa.DataType], size: int | None = None
) -> list[pa.Array] | None:
    """Whole lines (the first ``size`` bytes, all by default), parsed single-threaded, or None
    when any of them needs the line path.

    Examples
    --------
    >>> cols = parse_bytes(b"q1 Q0 d7 1 2.5 t\\nq1 Q0 d3 2 1.5 t\\n", 6, {0: QUERY, 2: pa.string(), 4: pa.float64()})
    >>> [c.to_pylist() for c in cols]
    [['q1', 'q1'], ['d7', 'd3'], [2.5, 1.5]]
    >>> parse_bytes(b"# a comment line\\n", 4, {0: QUERY}) is None
    True
    """
    size = len(data) if size is None else size
    if not clean(data, 0, size):
        return None
    from pyarrow import csv

    # Dictionary columns are read as strings and encoded from their runs (see runs_encoded).
    as_read = {k: pa.string() if pa.types.is_dictionary(t) else t for k, t in keep.items()}
    try:
        buffer = pa.py_buffer(data).slice(0, size)
        table = csv.read_csv(pa.BufferReader(buffer), **csv_options(n_fields, as_read, size + 1, threads=False))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, UnicodeDecodeError):
        return None
    if table.num_rows == 0:
        return None
    cols = [c.chunk(0) if c.num_chunks == 1 else c.combine_chunks() for c in table.columns]
    cols = [runs_encoded(c) if pa.types.is_dictionary(keep[k]) else c for k, c in zip(sorted(keep), cols, strict=True)]
    # Encoded, the column's distinct values are its dictionary: only those few are looked at.
    return None if line_path_ids(cols[0]) else cols


def line_path_ids(query: pa.Array) -> bool:
    """Query ids that only the line path reads right: one starting with '#' (a comment line,
    which it skips and counts) or an empty one (a line starting with a blank: its fields are
    one column off). Of a dictionary column, its distinct values are looked at."""
    offsets, data = string_buffers(query.dictionary if pa.types.is_dictionary(query.type) else query)
    if (np.diff(offsets) == 0).any():
        return True
    return bool((data[offsets[:-1]] == ord("#")).any())


def runs_encoded(values: pa.Array) -> pa.DictionaryArray:
    """Dictionary-encode a column whose equal values come in runs (a run file's query ids, written
    query by query) from its runs: the strings are hashed once per run instead of once per
    row, a few times cheaper than encoding while parsing.

    Examples
    --------
    >>> encoded = runs_encoded(pa.array(["q1", "q1", "q2", "q1"]))
    >>> encoded.dictionary.to_pylist(), encoded.indices.to_pylist()
    (['q1', 'q2'], [0, 0, 1, 0])
    """
    n = len(values)
    # Where a run starts: one vectorised comparison of neighbours (cheaper than run_end_encode).
    change = as_numpy(arrow_ops.not_equal(values.slice(1), values.slice(0, max(n - 1, 0)))) if n > 1 else np.zeros(0, bool)
    starts = np.flatnonzero(np.concatenate([[n > 0], change]))
    names = arrow_ops.take(values, from_numpy(starts))
    if len(names) > 1:
        found = arrow_ops.dictionary_encode(names)  # a query may come back after another one
        which, names = as_numpy(found.indices), found.dictionary
    else:
        which = np.zeros(len(names), dtype=np.int32)
    indices = np.repeat(which.astype(np.int32, copy=False), np.diff(np.append(starts, n)))
    return pa.DictionaryArray.from_arrays(from_numpy(indices), names)


def _one_array(column: pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """Dictionary chunks (query ids) become one array with one dictionary; string columns
    (docnos) stay in chunks, as copying millions of strings into one buffer gains nothing."""
    if pa.types.is_dictionary(column.type):
        return column.unify_dictionaries().combine_chunks()
    if pa.types.is_string(column.type):
        return column.chunk(0) if column.num_chunks == 1 else column
    return column.combine_chunks()
