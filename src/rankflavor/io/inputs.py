"""Turn whatever the caller has (a path, a pytrec_eval-style dict, a DataFrame) into tables."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from typing import Any

import numpy as np
import pyarrow as pa

from ..columns import string_array
from ..errors import InputError, UsageError
from ..tables import Qrels, Run
from .qrels import read_qrels
from .run import read_run

QUERY_COLUMNS = ("query_id", "query", "qid", "topic")
DOC_COLUMNS = ("doc_id", "doc", "docno", "docid")
GRADE_COLUMNS = ("relevance", "grade", "rel", "label")
SCORE_COLUMNS = ("score", "sim")


def as_qrels(obj: Any) -> Qrels:
    """Accept a path, ``{query: {doc: grade}}`` or a DataFrame with query/doc/grade columns."""
    if isinstance(obj, Qrels):
        return obj
    if isinstance(obj, (str, os.PathLike)):
        return read_qrels(obj)
    if isinstance(obj, Mapping):
        q, d, v = _from_nested(obj, "qrels dict", "grade")
        return Qrels(q, d, v, "qrels dict")
    if _is_frame(obj):
        q, d, v = _from_frame(obj, "qrels DataFrame", GRADE_COLUMNS)
        return Qrels(q, d, v, "qrels DataFrame")
    raise UsageError(
        f"qrels must be a path, a dict {{query: {{doc: grade}}}} or a DataFrame; received {type(obj).__name__}"
    )


def as_run(obj: Any) -> Run:
    """Accept a path, ``{query: {doc: score}}`` or a DataFrame with query/doc/score columns."""
    if isinstance(obj, Run):
        return obj
    if isinstance(obj, (str, os.PathLike)):
        return read_run(obj)
    if isinstance(obj, Mapping):
        q, d, v = _from_nested(obj, "run dict", "score")
        return Run(q, d, v, "run dict")
    if _is_frame(obj):
        q, d, v = _from_frame(obj, "run DataFrame", SCORE_COLUMNS)
        return Run(q, d, v, "run DataFrame")
    raise UsageError(
        f"run must be a path, a dict {{query: {{doc: score}}}} or a DataFrame; received {type(obj).__name__}"
    )


def _from_nested(obj: Mapping[Any, Any], source: str, what: str) -> tuple[pa.Array, pa.Array, np.ndarray]:
    queries: list[str] = []
    docs: list[str] = []
    values: list[float] = []
    for q, inner in obj.items():
        if not isinstance(inner, Mapping):
            raise InputError(source, None, f"query {q!r} maps to {type(inner).__name__}, expected {{doc: {what}}}")
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
    if not values:
        raise InputError(source, None, f"is empty; expected {{query: {{doc: {what}}}}}")
    # string_array, not pa.array: that imports pandas when installed (~0.4 s).
    return string_array(queries), string_array(docs), np.asarray(values, dtype=np.float64)


def _is_frame(obj: Any) -> bool:
    return hasattr(obj, "columns") and hasattr(obj, "__getitem__") and hasattr(obj, "__len__")


def _pick(columns: list[str], wanted: tuple[str, ...], source: str) -> str:
    for name in wanted:
        if name in columns:
            return name
    raise InputError(source, None, f"needs one of the columns {', '.join(wanted)}; has {', '.join(columns)}")


def _from_frame(frame: Any, source: str, value_columns: tuple[str, ...]) -> tuple[pa.Array, pa.Array, np.ndarray]:
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
    return _ids(frame[qc], qc, source), _ids(frame[dc], dc, source), values


def _ids(column: Any, name: str, source: str) -> pa.Array:
    """A column's values as id strings; a missing value (None, NaN, pandas' NA or NaT, an Arrow
    null) is an error: as ``str`` it would become an id such as "nan" that a run can match."""
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
