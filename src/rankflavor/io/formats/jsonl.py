"""JSON Lines: one object per line, ``{"query_id": "q1", "doc_id": "d7", "score": 12.5}``.

Field names are those of the DataFrame inputs (or ``--columns``); other fields are ignored. A
file of clean lines is read by pyarrow's JSON reader, columnar (``pyarrow.json.read_json``); one
it is unsure of (blank lines, a field of mixed types, a bad line) is read line by line by
:mod:`json`, which names the first bad line and what it expected.

References
----------
.. [JSONL] JSON Lines, https://jsonlines.org/ (UTF-8, one JSON value per line).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pyarrow as pa

from rankflavor.errors import InputError
from rankflavor.io.columns import from_numpy, string_array
from rankflavor.io.formats.delimited import decode
from rankflavor.io.formats.table import by_lines, pick, to_qrels, to_run
from rankflavor.io.tables import Qrels, Run


def read_jsonl(source: str, data: bytes, kind: str, columns: Mapping[str, str]) -> Qrels | Run:
    """Judgments (``kind="qrels"``) or a run from JSON Lines bytes."""
    fast = _columnar(source, data, kind, columns)
    return fast if fast is not None else _by_line(source, data, kind, columns)


def _columnar(source: str, data: bytes, kind: str, columns: Mapping[str, str]) -> Qrels | Run | None:
    """pyarrow's read, when row i is line i + 1 (no blank line) and every value is well typed;
    None where the line-by-line read must decide (and name the problem)."""
    if not data.strip() or b"\n\n" in data or b"\n\r\n" in data or data[:1] in (b"\n", b"\r") or data.startswith(b"\xef\xbb\xbf"):
        return None
    if not data.isascii():  # pyarrow's reader lets invalid UTF-8 through in places (field names)
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return None
    # pyarrow reads a line that is no object (`null`: a row of nulls, and at the start of a block
    # a crash of pyarrow 26) and two objects on one line as rows of their own: here go only
    # files whose every line opens an object, and whose rows are their lines.
    octets = np.frombuffer(data, dtype=np.uint8)
    starts = np.flatnonzero(octets == 0x0A) + 1
    starts = np.concatenate([[0], starts[starts < len(octets)]])
    if not (octets[starts] == 0x7B).all():  # "{"
        return None
    import pyarrow.json as pajson

    try:
        block = min(max(len(data) // 8, 1 << 20), 1 << 26)
        table = pajson.read_json(pa.BufferReader(data), read_options=pajson.ReadOptions(block_size=block))
    except (pa.ArrowException, UnicodeDecodeError, OSError):
        return None
    if table.num_rows != len(starts):
        return None
    try:
        for name in table.column_names:  # nested values: the line reader names the line
            if pa.types.is_nested(table.schema.field(name).type) and name in _roles(list(table.column_names), kind, columns).values():
                return None
        where = by_lines(None, 1)
        if kind == "qrels":
            return to_qrels(table, source, columns, where)
        return to_run(table, source, columns, where)
    except InputError:
        return None  # a missing field or a bad value: the line reader names it the same way


def _roles(names: list[str], kind: str, columns: Mapping[str, str], source: str = "") -> dict[str, str]:
    """The field of each role present (``query``, ``doc``, and ``grade`` or ``score``/``rank``)."""
    found: dict[str, str] = {}
    roles = ("query", "doc", "grade", "source") if kind == "qrels" else ("query", "doc", "score", "rank")
    for role in roles:
        name = pick(names, role, columns, source, required=False)
        if name is not None:
            found[role] = name
    return found


def _by_line(source: str, data: bytes, kind: str, columns: Mapping[str, str]) -> Qrels | Run:
    text = decode(source, data)
    fields: dict[str, str] | None = None
    values: dict[str, list[Any]] = {}
    lines: list[int] = []
    for line, raw in enumerate(text.split("\n"), 1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except (json.JSONDecodeError, RecursionError) as exc:
            message = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
            raise InputError(source, line, f"is not valid JSON: {message}", raw.rstrip("\r")) from None
        if not isinstance(obj, dict):
            raise InputError(source, line, f"expected a JSON object per line, found {type(obj).__name__}", raw.rstrip("\r"))
        if fields is None:
            fields = _fields(source, line, list(obj), kind, columns)
            values = {role: [] for role in fields}
        for role, name in fields.items():
            if name not in obj:
                raise InputError(source, line, f"has no field {name!r} ({role})", raw.rstrip("\r"))
            values[role].append(_value(source, line, raw, name, obj[name], role))
        lines.append(line)
    if fields is None:
        raise InputError(source, None, "is empty; expected one JSON object per line")
    at = np.asarray(lines, dtype=np.int64)
    table = pa.table({name: (string_array(values[role]) if role in ("query", "doc", "source") else
                             from_numpy(np.asarray(values[role], dtype=np.float64)))
                      for role, name in fields.items()})
    named = dict(fields)
    if kind == "qrels":
        return to_qrels(table, source, named, by_lines(at), lines=at)
    return to_run(table, source, named, by_lines(at), lines=at)


def _fields(source: str, line: int, names: list[str], kind: str, columns: Mapping[str, str]) -> dict[str, str]:
    found = _roles(names, kind, columns, f"{source}:{line}")
    needed = ("query", "doc", "grade") if kind == "qrels" else ("query", "doc")
    for role in needed:  # pick raises the error naming the defaults
        if role not in found:
            pick(names, role, columns, f"{source}:{line}")
    if kind == "run":
        if "score" not in found and "rank" not in found:
            pick(names, "score", columns, f"{source}:{line}")
        if "score" in found:
            found.pop("rank", None)
    return found


def _value(source: str, line: int, raw: str, name: str, value: Any, role: str) -> Any:
    if role == "source":
        if not isinstance(value, str):
            raise InputError(source, line, f"{name} {_shown(value)} is not a label source (text KIND:DETAIL)", raw.rstrip("\r"))
        from rankflavor.io.labels.sources import source_problem

        problem = source_problem(value)
        if problem is not None:
            raise InputError(source, line, problem, raw.rstrip("\r"))
        return value
    if role in ("query", "doc"):
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise InputError(source, line, f"{name} {_shown(value)} is not an id (text or an integer)", raw.rstrip("\r"))
        return str(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(source, line, f"{name} {_shown(value)} is not a number", raw.rstrip("\r"))
    number = float(value)
    if not math.isfinite(number):
        raise InputError(source, line, f"{name} {_shown(value)} is not a finite number", raw.rstrip("\r"))
    return number


def _shown(value: Any) -> str:
    return "null" if value is None else json.dumps(value)[:60]
