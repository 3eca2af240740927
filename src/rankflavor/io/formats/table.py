"""The one path after reading: named Arrow columns -> the :class:`~rankflavor.io.tables.Qrels` or
:class:`~rankflavor.io.tables.Run` the engine reads, whatever format they came from.

Every reader of :mod:`rankflavor.io.formats` builds a ``pyarrow.Table`` (by pyarrow's own
readers where it can: Parquet, JSONL, CSV) and hands it here with a :data:`Where`, which names a
row as its format does (a line, a row, a JSON path). Ids must be text or integers and never
missing or empty; grades, scores and ranks finite numbers; a run with ranks and no scores is
ordered by its ranks (its ``score`` is minus the rank, ``ranked_by="rank"``); an id holding a NUL
byte is refused (:mod:`rankflavor.io.nul`). Each is checked
by column at once; only a failing column is walked value by value, to name its first bad row.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import numpy as np
import pyarrow as pa

from rankflavor.base.threads import done
from rankflavor.errors import InputError
from rankflavor.io import arrow_ops
from rankflavor.io.columns import as_numpy, from_numpy, plain_strings, string_buffers
from rankflavor.io.docnos import decimal_strings
from rankflavor.io.formats.spec import DEFAULTS
from rankflavor.io.nul import REASON, nul_entries
from rankflavor.io.tables import Qrels, Run

#: ``where(row)`` -> (the line of a row, or None) and how the format names it ("row 3: ",
#: "$.requests[0].ratings[2]: ", "" where the line says it all).
Where = Callable[[int], tuple[int | None, str]]


def by_lines(lines: np.ndarray | None, offset: int = 0) -> Where:
    """Rows named by their line (``lines[row]``, or row + ``offset`` when None)."""
    if lines is None:
        return lambda row: (row + offset, "")
    return lambda row: (int(lines[row]), "")


def by_rows(row: int) -> tuple[int | None, str]:
    """Rows named by number (0-based, as pyarrow and pandas count them): Parquet, Arrow tables."""
    return None, f"row {row}: "


def pick(names: list[str], role: str, columns: Mapping[str, str], source: str, *, required: bool = True) -> str | None:
    """The column that plays ``role``: the one ``columns`` names, else the first default present."""
    if role in columns:
        if columns[role] not in names:
            raise InputError(source, None, f"has no column {columns[role]!r} (--columns {role}=...); columns: "
                             + ", ".join(names))
        return columns[role]
    for name in DEFAULTS[role]:
        if name in names:
            return name
    if required:
        raise InputError(source, None, f"needs a {role} column ({' or '.join(DEFAULTS[role])}, or name it with "
                         f"--columns {role}=NAME); columns: {', '.join(names)}")
    return None


#: A dictionary column whose chunks (a Parquet file's row groups) hold at least this many rows
#: each on average stays in its chunks, each over its own dictionary, when the caller allows it:
#: the run readers note such chunks as they note the TREC reader's pieces, and joining them
#: would write every row's index again (issue 33: "no extra copy").
CHUNK_ROWS = 1 << 18


def ids(column: pa.ChunkedArray | pa.Array, name: str, source: str, where: Where, *, encode: bool = False,
        chunks: bool = False) -> pa.Array | pa.ChunkedArray:
    """A column of ids as one string array (dictionary-encoded if ``encode``): text or integers,
    never missing (null) or empty. A dictionary column of text is kept as it is (Parquet's
    dictionary pages read as one), so no string is hashed again; with ``chunks``, big chunks
    (:data:`CHUNK_ROWS`) are kept apart, each with its dictionary."""
    if encode:
        kept = _dictionary_ids(column, name, source, where, chunks)
        if kept is not None:
            return kept
    values = plain_strings(column)
    kind = values.type
    if pa.types.is_string_view(kind) or pa.types.is_large_string(kind) or pa.types.is_integer(kind):
        values = arrow_ops.cast(values, pa.string())
    elif not pa.types.is_string(kind):
        raise _bad(source, where, 0, f"column {name!r} holds {kind} values; ids are text or integers")
    _check_ids(values, name, source, where)
    return arrow_ops.dictionary_encode(values) if encode else values


def _check_ids(values: pa.Array, name: str, source: str, where: Where, rows: np.ndarray | None = None) -> None:
    """No null, no empty string, no NUL byte (:mod:`rankflavor.io.nul`) among ``values`` (the
    rows named are ``rows[i]`` when given)."""
    if values.null_count:
        bad = int(np.flatnonzero(~as_numpy(values.is_valid()))[0])
        raise _bad(source, where, bad if rows is None else int(rows[bad]), f"{name} is missing (null): an id is needed")
    offsets, _ = string_buffers(values)
    empty = np.flatnonzero(np.diff(offsets) == 0)
    if len(empty):
        raise _bad(source, where, int(empty[0]) if rows is None else int(rows[empty[0]]), f"{name} is empty: an id is needed")
    nul = nul_entries(values)
    if len(nul):
        raise _bad(source, where, int(nul[0]) if rows is None else int(rows[nul[0]]), f"{name} {REASON}")


def _dictionary_ids(column: pa.ChunkedArray | pa.Array, name: str, source: str, where: Where,
                    chunks: bool = False) -> pa.Array | pa.ChunkedArray | None:
    """A dictionary column of text with int32 indices as one array with one dictionary (checked),
    or with ``chunks`` its big chunks as they are, each checked; None for any other column."""
    kind = column.type
    if not (pa.types.is_dictionary(kind) and pa.types.is_string(kind.value_type) and kind.index_type == pa.int32()):
        return None
    if column.null_count:  # a null index: the row is missing its id
        bad = int(np.flatnonzero(~as_numpy(column.is_valid()))[0])
        raise _bad(source, where, bad, f"{name} is missing (null): an id is needed")
    if isinstance(column, pa.ChunkedArray) and column.num_chunks > 1:
        if chunks and len(column) >= CHUNK_ROWS * column.num_chunks:
            start = 0
            for chunk in column.chunks:
                if not _entries_used_are_ids(chunk, name, source, where, start):
                    return None
                start += len(chunk)
            return column
        column = _one_dictionary(column)
    elif isinstance(column, pa.ChunkedArray):
        column = column.chunk(0)
    return column if _entries_used_are_ids(column, name, source, where) else None


def _entries_used_are_ids(column: pa.DictionaryArray, name: str, source: str, where: Where, start: int = 0) -> bool:
    """Are the entries of a null-free dictionary column (its rows from ``start``) all ids? False
    when only unused entries are not (the plain path then encodes the values anew); an
    :class:`InputError` naming the first row that uses an entry null, empty or holding a NUL."""
    try:
        _check_ids(column.dictionary, name, source, where)
    except InputError:  # an entry is null, empty or holds a NUL: name the first row that uses one
        indices = as_numpy(column.indices)
        entries = column.dictionary
        entries = entries.fill_null("") if entries.null_count else entries
        offsets, _ = string_buffers(entries)
        found = []  # (the first row using such an entry, why it is bad)
        for bad_entries, why in ((np.flatnonzero(np.diff(offsets) == 0), "is missing or empty: an id is needed"),
                                 (nul_entries(entries), REASON)):
            used = np.flatnonzero(np.isin(indices, bad_entries))
            if len(used):
                found.append((start + int(used[0]), why))
        if found:
            row, why = min(found)
            raise _bad(source, where, row, f"{name} {why}") from None
        return False
    return True


def _one_dictionary(column: pa.ChunkedArray) -> pa.DictionaryArray:
    """The chunks of a null-free dictionary column (a Parquet file's row groups) as one array
    over one dictionary, the entries in first-seen order as ``unify_dictionaries`` gives them.

    The indices are written once, each chunk's mapped through a small table from its own
    dictionary to the joined one: ``unify_dictionaries`` then ``combine_chunks`` wrote them
    twice, and fresh memory is most of the cost of a pass here (issue 33)."""
    dictionaries = [chunk.dictionary for chunk in column.chunks]
    joined = arrow_ops.unique(pa.concat_arrays(dictionaries))
    out = np.empty(len(column), dtype=np.int32)
    start = 0
    for chunk, entries in zip(column.chunks, dictionaries, strict=True):
        to_joined = as_numpy(arrow_ops.index_in(entries, joined)).astype(np.int32, copy=False)
        np.take(to_joined, as_numpy(chunk.indices), out=out[start:start + len(chunk)])
        start += len(chunk)
    return pa.DictionaryArray.from_arrays(from_numpy(out), joined)


def numbers(column: pa.ChunkedArray | pa.Array, name: str, source: str, where: Where) -> np.ndarray:
    """A column of finite numbers as float64: numeric values, or text that parses as a number."""
    plain = _plain_numbers(column)
    if plain is not None:
        return _finite(plain, name, source, where)
    values = plain_strings(column) if isinstance(column, pa.ChunkedArray) else column
    kind = values.type
    if values.null_count:
        row = int(np.flatnonzero(~as_numpy(values.is_valid()))[0])
        raise _bad(source, where, row, f"{name} is missing (null): a number is needed")
    # (float and integer columns without a null took the plain path; with one, they stop above)
    if pa.types.is_decimal(kind):
        out = as_numpy(arrow_ops.cast(values, pa.float64()))
    elif pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_string_view(kind):
        try:
            out = as_numpy(arrow_ops.cast(values, pa.float64()))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            out = _parse_each(values.to_pylist(), name, source, where)
    else:
        raise _bad(source, where, 0, f"column {name!r} holds {kind} values; expected numbers")
    fixed = out.astype(np.float64)
    np.add(fixed, 0.0, out=fixed)  # -0.0 made 0
    return _finite(fixed, name, source, where)


def _plain_numbers(column: pa.ChunkedArray | pa.Array) -> np.ndarray | None:
    """A null-free float or integer column as one new float64 array, its chunks copied straight
    into it (no joined Arrow copy first); None for any other column."""
    kind = column.type
    if column.null_count or not (kind in (pa.float64(), pa.float32()) or pa.types.is_integer(kind)):
        return None
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    out = np.empty(len(column), dtype=np.float64)
    start = 0
    for chunk in chunks:
        # copied and -0.0 made 0 in one pass (x + 0.0 is x, but 0.0 for -0.0), as the TREC readers read it
        np.add(as_numpy(chunk), 0.0, out=out[start:start + len(chunk)])
        start += len(chunk)
    return out


def _finite(out: np.ndarray, name: str, source: str, where: Where) -> np.ndarray:
    """``out`` (float64, owned, -0.0 already made 0), once every value is checked finite (the
    first that is not names its row)."""
    if not np.isfinite(out).all():
        bad = int(np.flatnonzero(~np.isfinite(out))[0])
        raise _bad(source, where, bad, f"{name} {float(out[bad])!r} is not a finite number")
    return out


def _parse_each(texts: list[str], name: str, source: str, where: Where) -> np.ndarray:
    out = np.empty(len(texts), dtype=np.float64)
    for row, text in enumerate(texts):
        try:
            if not text.strip().isascii() or "_" in text:
                raise ValueError
            out[row] = float(text)
        except ValueError:
            raise _bad(source, where, row, f"{name} {text!r} is not a number") from None
        if not math.isfinite(out[row]):
            raise _bad(source, where, row, f"{name} {text!r} is not a finite number")
    return out


def to_qrels(table: pa.Table, source: str, columns: Mapping[str, str], where: Where, *,
             lines: np.ndarray | None = None, from_file: bool = True, skipped: int = 0) -> Qrels:
    """Judgments from a table with query, doc and grade columns (names in :data:`DEFAULTS`), and
    perhaps a label source column (checked: :func:`rankflavor.io.labels.sources.checked_sources`)."""
    names = list(table.column_names)
    qc, dc, gc = (pick(names, role, columns, source) for role in ("query", "doc", "grade"))
    assert qc is not None and dc is not None and gc is not None  # required
    if table.num_rows == 0:
        raise InputError(source, None, "has no judgments")
    grade = numbers(table.column(gc), gc, source, where)
    sc = pick(names, "source", columns, source, required=False)
    labels = None
    if sc is not None:
        from rankflavor.io.labels.sources import checked_sources

        labels = checked_sources(table.column(sc), source, where)
    integers = integer_ids(table.column(dc))
    if integers is not None:  # docnos stored as numbers: all canonical, their values known (no cast, no parse)
        values = integers[0]
        return Qrels(ids(table.column(qc), qc, source, where, encode=True), decimal_strings(values), grade, source,
                     lines, from_file=from_file, skipped_rows=skipped, label_source=labels,
                     doc_canonical=done((np.ones(len(values), dtype=bool), values)))
    return Qrels(ids(table.column(qc), qc, source, where, encode=True), ids(table.column(dc), dc, source, where),
                 grade, source, lines, from_file=from_file, skipped_rows=skipped, label_source=labels)


def to_run(table: pa.Table, source: str, columns: Mapping[str, str], where: Where, *,
           lines: np.ndarray | None = None, from_file: bool = True, tag: str | None = None) -> Run:
    """A run from a table with query and doc columns and a score or a rank column; with scores,
    any rank column is ignored (as trec_eval ignores it); with ranks alone it is ordered by them.
    A column named by ``columns`` must exist, the rank column too (as the Parquet reader asks)."""
    names = list(table.column_names)
    qc = pick(names, "query", columns, source)
    dc = pick(names, "doc", columns, source)
    assert qc is not None and dc is not None
    rc = pick(names, "rank", columns, source, required=False)
    sc = pick(names, "score", columns, source, required=rc is None)
    if table.num_rows == 0:
        raise InputError(source, None, "has no results")
    if sc is not None:
        score, ranked_by = numbers(table.column(sc), sc, source, where), "score"
    else:
        assert rc is not None  # (the score was required without one)
        score, ranked_by = -numbers(table.column(rc), rc, source, where) + 0.0, "rank"
    query = ids(table.column(qc), qc, source, where, encode=True, chunks=True)
    integers = integer_ids(table.column(dc))
    if integers is not None:  # docnos stored as numbers: their values stand for the strings
        return Run(query, None, score, source, lines, tag, from_file=from_file, ranked_by=ranked_by,
                   doc_integers=(integers[0],), doc_integer_range=integers[1:])
    return Run(query, _doc_ids(table.column(dc), dc, source, where), score, source, lines, tag, from_file=from_file,
               ranked_by=ranked_by)


def _doc_ids(column: pa.ChunkedArray | pa.Array, name: str, source: str, where: Where) -> pa.Array | pa.ChunkedArray:
    """A run's docnos as :func:`ids` takes them, except that plain text in several chunks (a
    Parquet file's row groups) is checked chunk by chunk and kept chunked, as the TREC reader's
    pieces are: joining them copied every docno string while the table still held them (a 7M-row
    run of text docnos: 238 MiB more at the read's peak; issue 33)."""
    if not (isinstance(column, pa.ChunkedArray) and column.num_chunks > 1 and pa.types.is_string(column.type)):
        return ids(column, name, source, where)
    start = 0
    for chunk in column.chunks:
        _check_ids(chunk, name, source, where, np.arange(start, start + len(chunk)) if start else None)
        start += len(chunk)
    return column


def integer_ids(column: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, int, int] | None:
    """An integer column of ids with no null and every value in 0 .. 10**18 - 1, as int64 values
    with their least and greatest: the decimal text of each is the docno, a canonical integer
    (:mod:`rankflavor.io.docnos`), so no string need be made. None for any other column (negative
    values and nulls take the string path, which names a missing id)."""
    if not pa.types.is_integer(column.type) or column.null_count or len(column) == 0:
        return None
    values = as_numpy(column)
    if values.dtype == np.uint64 and int(values.max()) >= 10**18:
        return None
    values = values.astype(np.int64, copy=False)
    low, high = int(values.min()), int(values.max())
    if low < 0 or high >= 10**18:
        return None
    return values, low, high


def _bad(source: str, where: Where, row: int, message: str) -> InputError:
    line, label = where(row)
    return InputError(source, line, label + message)
