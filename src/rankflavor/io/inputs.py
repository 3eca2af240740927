"""Turn whatever the caller has (a path, a pytrec_eval-style dict, a DataFrame) into tables.

DataFrames are pandas', pyarrow Tables and polars' (taken through ``polars.DataFrame.to_arrow``,
so polars is never imported here: the library works without it).

A query a dict maps to ``{}`` is listed with no row (:attr:`Run.listed_empty`,
:attr:`Qrels.listed_empty`): a ranking of nothing, or a query with no judgment, known to the
alignment and counted, as the JSON file ``{"q": {}}`` is (:mod:`~rankflavor.io.formats.jsondoc`).
A dict of such queries alone is a table of no rows that lists them; only a dict naming no query
(``{}``) is refused as empty. A DataFrame (pandas, pyarrow, polars) has a row per (query,
document) pair, so it cannot name a query with no row: its queries are those of its rows.

Dicts and DataFrames become columns without a Python step per document: keys, values and
lengths are gathered by C-level iteration (``itertools.chain``, ``map``, ``np.fromiter``) and
query ids repeated by their lengths. Those fast paths accept only what needs no check per
value (string ids, finite numbers); anything else (a missing id, a grade that is not a number,
ids of other types) is handed to the step-by-step conversion, which gives the exact error and
the same columns.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping
from itertools import chain
from operator import methodcaller
from typing import Any

import numpy as np
import pyarrow as pa

from rankflavor.errors import InputError, UsageError
from rankflavor.io import arrow_ops
from rankflavor.io import run as run_io
from rankflavor.io.columns import dictionary_array, from_numpy, plain_strings, string_array
from rankflavor.io.nul import REASON, first_nul
from rankflavor.io.qrels import read_qrels
from rankflavor.io.run import noted, read_run
from rankflavor.io.tables import Qrels, Run

QUERY_COLUMNS = ("query_id", "query", "qid", "topic")
DOC_COLUMNS = ("doc_id", "doc", "docno", "docid")
GRADE_COLUMNS = ("relevance", "grade", "rel", "label")
SCORE_COLUMNS = ("score", "sim")

Columns = tuple[pa.Array, pa.Array, np.ndarray]
#: Id types whose ``str`` needs no missing-value check (neither is ever missing).
_PLAIN_IDS = {str, int}
_values_of = methodcaller("values")


def as_qrels(obj: Any) -> Qrels:
    """Accept a path, ``{query: {doc: grade}}`` or a DataFrame with query/doc/grade columns.

    Raises
    ------
    InputError
        For a missing id (None, NaN, NA, an Arrow null), naming its query and doc or its row; for
        a grade that is not a finite number; for an empty input.
    UsageError
        For an object of any other type.

    Examples
    --------
    >>> qrels = as_qrels({"q1": {"d1": 2, "d2": 0}, "q2": {"d7": 1}})
    >>> qrels.query.to_pylist(), qrels.doc.to_pylist(), qrels.grade.tolist()
    (['q1', 'q1', 'q2'], ['d1', 'd2', 'd7'], [2.0, 0.0, 1.0])
    """
    if isinstance(obj, Qrels):
        return obj
    if isinstance(obj, (str, os.PathLike)):
        return read_qrels(obj)
    if isinstance(obj, Mapping):
        (q, d, v), listed = _from_nested(obj, "qrels dict", "grade")
        return Qrels(q, d, v, "qrels dict", listed_empty=listed)
    if _is_frame(obj):
        q, d, v = _from_frame(_polars_as_arrow(obj), "qrels DataFrame", GRADE_COLUMNS)
        return Qrels(q, d, v, "qrels DataFrame")
    raise UsageError(
        f"qrels must be a path, a dict {{query: {{doc: grade}}}} or a DataFrame; received {type(obj).__name__}"
    )


def as_run(obj: Any) -> Run:
    """Accept a path, ``{query: {doc: score}}`` or a DataFrame with query/doc/score columns.

    Raises
    ------
    InputError
        For a missing id, naming its query and doc or its row; for a score that is not a finite
        number; for an empty input.
    UsageError
        For an object of any other type.
    """
    if isinstance(obj, Run):
        return obj
    if isinstance(obj, (str, os.PathLike)):
        return read_run(obj)
    if isinstance(obj, Mapping):
        (q, d, v), listed = _from_nested(obj, "run dict", "score")
        return Run(q, d, v, "run dict", listed_empty=listed)
    if _is_frame(obj):
        frame = _polars_as_arrow(obj)
        integers = _integer_docs(frame)
        if integers is not None:  # canonical integer docnos in an Arrow column: their values, no strings
            q, _, v = _from_frame(frame, "run DataFrame", SCORE_COLUMNS, docs=False)
            run = Run(q, None, v, "run DataFrame", doc_integers=(integers[0],), doc_integer_range=integers[1:])
        else:
            q, d, v = _from_frame(frame, "run DataFrame", SCORE_COLUMNS)
            run = Run(q, d, v, "run DataFrame")
        # A big frame takes a file's fast path (noted: the notes the TREC reader takes of its pieces).
        return noted(run)
    raise UsageError(
        f"run must be a path, a dict {{query: {{doc: score}}}} or a DataFrame; received {type(obj).__name__}"
    )


# ---------------------------------------------------------------------------------------------
# {query: {doc: value}}


def _from_nested(obj: Mapping[Any, Any], source: str, what: str) -> tuple[Columns, tuple[str, ...]]:
    """Query ids (dictionary-encoded, as the file readers give them), docnos and values, and the
    ids of the queries listed with no document."""
    fast = _nested_columns(obj)
    columns = _no_nul(fast if fast is not None else _nested_rows(obj, source, what), source, None)
    return columns, _listed_empty(obj, source)


def _no_nul(columns: Columns, source: str, names: tuple[str, str] | None) -> Columns:
    """``columns``, whose ids hold no NUL byte (:mod:`rankflavor.io.nul`): else the error naming
    the first such entry (a dict's query and doc, a frame's column and row; ``names``: the
    frame's query and doc columns)."""
    q, d, _ = columns
    found = [(row, at) for at, ids in enumerate((q, d)) if (row := first_nul(ids)) is not None]
    if not found:
        return columns
    row, at = min(found)
    which = ("query", "doc")[at]
    if names is None:
        where = f"query {_shown(q[row].as_py())} doc {_shown(d[row].as_py())}"
    else:
        where = f"column {names[at]!r} row {row}"
    raise InputError(source, None, f"{where}: the {which} id {REASON}")


def _shown(text: str) -> str:
    shown = repr(text)
    return shown if len(shown) <= 60 else shown[:57] + "..."


def _listed_empty(obj: Mapping[Any, Any], source: str) -> tuple[str, ...]:
    """Ids of the queries a dict lists with no document (``{}``), as the readers spell ids (their
    missing ids were refused with the rows); one holding a NUL byte is refused, as in a row."""
    listed = tuple(dict.fromkeys(str(q) for q, inner in obj.items() if isinstance(inner, Mapping) and not len(inner)))
    for q in listed:
        if "\x00" in q:
            raise InputError(source, None, f"query {_shown(q)} (listed with no document): the query id {REASON}")
    return listed


def _nested_columns(obj: Mapping[Any, Any]) -> Columns | None:
    """The columns of a dict whose inner values are mappings with string (or int) docnos and
    finite numbers, and whose queries with documents have ids that are not missing; None for
    anything else. One Python step per query, none per document."""
    queries = list(obj)
    inners = list(obj.values())
    if set(map(type, inners)) != {dict} and not all(isinstance(inner, Mapping) for inner in inners):
        return None
    lengths = np.fromiter(map(len, inners), dtype=np.int64, count=len(inners))
    n = int(lengths.sum())
    answered = [q for q, k in zip(queries, lengths.tolist(), strict=True) if k]  # a query of no documents has no rows
    if n == 0 or (not set(map(type, queries)) <= _PLAIN_IDS and any(_missing(q) for q in queries)):
        return None
    docs = list(chain.from_iterable(inners))
    if len(docs) != n:  # a mapping whose len() disagrees with its keys
        return None
    kinds = set(map(type, docs))
    if not kinds <= _PLAIN_IDS:
        return None
    try:
        values = np.fromiter(chain.from_iterable(map(_values_of, inners)), dtype=np.float64, count=n)
    except (TypeError, ValueError, OverflowError):
        return None
    if not np.isfinite(values).all():
        return None
    # Query ids as the step-by-step path spells them (str), one dictionary entry per distinct id.
    code: dict[str, int] = {}
    query_codes = np.fromiter((code.setdefault(str(q), len(code)) for q in answered), dtype=np.int32, count=len(answered))
    indices = np.repeat(query_codes, lengths[lengths > 0])
    query = pa.DictionaryArray.from_arrays(from_numpy(indices), string_array(list(code)))
    return query, string_array(docs if kinds == {str} else list(map(str, docs))), values


def _nested_rows(obj: Mapping[Any, Any], source: str, what: str) -> Columns:
    """Row by row, with every check, so that the first bad entry is named."""
    queries: list[str] = []
    docs: list[str] = []
    values: list[float] = []
    for q, inner in obj.items():
        if not isinstance(inner, Mapping):
            raise InputError(source, None, f"query {q!r} maps to {type(inner).__name__}, expected {{doc: {what}}}")
        if not len(inner) and _missing(q):  # listed with no document: a query all the same
            raise InputError(source, None, f"query {q!r} (listed with no document): a missing value is not an id")
        for d, v in inner.items():
            if _missing(q) or _missing(d):
                raise InputError(source, None, f"query {q!r} doc {d!r}: a missing value is not an id")
            try:
                x = float(v)
            except (TypeError, ValueError):
                raise InputError(source, None, f"query {q!r} doc {d!r}: {what} {v!r} is not a number") from None
            if not math.isfinite(x):
                raise InputError(source, None, f"query {q!r} doc {d!r}: {what} {v!r} is not a finite number")
            queries.append(str(q))
            docs.append(str(d))
            values.append(x)
    if not values and not obj:  # (queries listed with no document alone: a table of no rows)
        raise InputError(source, None, f"is empty; expected {{query: {{doc: {what}}}}}")
    # string_array, not pa.array: that imports pandas when installed.
    return dictionary_array(queries), string_array(docs), np.asarray(values, dtype=np.float64)


# ---------------------------------------------------------------------------------------------
# DataFrames (pandas, or anything with columns; a pyarrow Table)


def _is_frame(obj: Any) -> bool:
    return hasattr(obj, "columns") and hasattr(obj, "__getitem__") and hasattr(obj, "__len__")


def _polars_as_arrow(frame: Any) -> Any:
    """A polars DataFrame as the pyarrow Table of its columns (no copy for most types; polars'
    large and view strings become plain strings); any other frame as it is."""
    if not type(frame).__module__.startswith("polars") or not hasattr(frame, "to_arrow"):
        return frame
    table = frame.to_arrow()
    cols = [arrow_ops.cast(c, pa.string()) if pa.types.is_large_string(c.type) or pa.types.is_string_view(c.type) else c
            for c in table.columns]
    return pa.table(cols, names=table.column_names)


def _pick(columns: list[str], wanted: tuple[str, ...], source: str) -> str:
    for name in wanted:
        if name in columns:
            return name
    raise InputError(source, None, f"needs one of the columns {', '.join(wanted)}; has {', '.join(columns)}")


def _integer_docs(frame: Any) -> tuple[np.ndarray, int, int] | None:
    """The docnos of an Arrow table of many rows whose doc column holds canonical integers, as
    :func:`~rankflavor.io.formats.table.integer_ids` gives them; None otherwise."""
    from rankflavor.io.formats.table import integer_ids

    if not isinstance(frame, pa.Table) or frame.num_rows < 2 * run_io.NOTE_ROWS:  # (read each time: tests set it)
        return None
    names = [str(c) for c in frame.column_names]
    doc = next((n for n in DOC_COLUMNS if n in names), None)
    return None if doc is None else integer_ids(frame.column(doc))


def _from_frame(frame: Any, source: str, value_columns: tuple[str, ...], docs: bool = True) -> Columns:
    # A pyarrow Table's ``columns`` are its arrays; its names are ``column_names``.
    columns = [str(c) for c in (frame.column_names if isinstance(frame, pa.Table) else frame.columns)]
    qc = _pick(columns, QUERY_COLUMNS, source)
    dc = _pick(columns, DOC_COLUMNS, source)
    vc = _pick(columns, value_columns, source)
    if len(frame) == 0:
        raise InputError(source, None, "has no rows")
    try:
        values = np.asarray(frame[vc], dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(source, None, f"column {vc!r} holds values that are not numbers") from None
    bad = np.flatnonzero(~np.isfinite(values))
    if len(bad):
        raise InputError(source, None, f"column {vc!r} row {int(bad[0])}: {float(values[bad[0]])!r} is not a finite number")
    if not docs:  # the caller took the doc column itself (integers): the query ids and values alone
        return _no_nul((_ids(frame[qc], qc, source), string_array([]), values), source, (qc, dc))
    return _no_nul((_ids(frame[qc], qc, source), _ids(frame[dc], dc, source), values), source, (qc, dc))


def _ids(column: Any, name: str, source: str) -> pa.Array:
    """A column's values as id strings; a missing value (None, NaN, pandas' NA or NaT, an Arrow
    null) is an error: as ``str`` it would become an id such as "nan" that a run can match."""
    fast = None
    if isinstance(column, (pa.Array, pa.ChunkedArray)):
        fast = _arrow_ids(column)
    elif isinstance(getattr(column, "dtype", None), np.dtype):
        fast = _numpy_ids(np.asarray(column))
    elif hasattr(getattr(column, "array", None), "__arrow_array__"):  # a pandas extension column (pandas 3's str)
        try:
            fast = _arrow_ids(pa.array(column.array))  # pandas is imported already: the column is one of its own
        except (pa.ArrowException, TypeError, ValueError):
            fast = None
    return fast if fast is not None else _each_id(column, name, source)


def _arrow_ids(column: pa.Array | pa.ChunkedArray) -> pa.Array | None:
    """Ids of a null-free Arrow string or integer column (integers spelled as ``str`` spells
    them); None for any other column."""
    if column.null_count:
        return None
    kind = column.type.value_type if pa.types.is_dictionary(column.type) else column.type
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_integer(kind)):
        return None
    values = plain_strings(column)
    if pa.types.is_string(values.type):
        return values
    try:  # the type string_array gives (pandas' pyarrow-backed strings are large_string)
        return arrow_ops.cast(values, pa.string())
    except pa.ArrowInvalid:  # past 2 GiB of text
        return arrow_ops.cast(values, pa.large_string())


def _numpy_ids(values: np.ndarray) -> pa.Array | None:
    """Ids of a NumPy column of strings, integers, booleans or NaN-free floats, as ``str``
    spells each value; None for any other column (objects of other types may be missing)."""
    if values.ndim != 1:
        return None
    kind = values.dtype.kind
    if kind in "iub" or (kind == "f" and not np.isnan(values).any()):
        return string_array(list(map(str, values.tolist())))
    if kind == "U":
        return string_array(values.tolist())
    if kind == "O":
        items = values.tolist()
        return string_array(items) if set(map(type, items)) <= {str} else None
    return None


def _each_id(column: Iterable[Any], name: str, source: str) -> pa.Array:
    texts = []
    for row, value in enumerate(column):
        if _missing(value):
            shown = "null" if isinstance(value, pa.Scalar) else repr(value)
            raise InputError(source, None, f"column {name!r} row {row}: {shown} is a missing value, not an id")
        texts.append(str(value))
    return string_array(texts)


def _missing(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, pa.Scalar):
        return not value.is_valid
    try:
        return bool(value != value)  # NaN and NaT are unequal to themselves
    except (TypeError, ValueError):
        return True  # pandas' NA: its comparisons give NA, whose truth value raises
