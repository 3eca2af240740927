"""Read another tool's per-query output: trec_eval ``-q`` text, CSV ``query,value``, JSON.

Formats, recognised from the text:

- trec_eval ``-q``: ``measure<TAB or spaces>query<TAB or spaces>value`` per line; an ``all`` row is
  the tool's mean. A file of several measures (``-m all_trec``) is narrowed to the one the search
  is about (:func:`pick_measure`).
- CSV: ``query,value`` (a header row is optional).
- JSON: ``{query: value}``, or pytrec_eval's ``{query: {measure: value}}``.

The form is kept (:attr:`Reported.form`): it names the tool that writes it (:data:`WRITERS`),
evidence :func:`rankflavor.identify` weighs among flavors the numbers cannot tell apart.

Each value keeps how many decimals it was printed with: the precision a flavor must reproduce it
to. Bad input raises :class:`~rankflavor.errors.InputError` naming the file and the line.

Examples
--------
>>> r = parse_per_query("ndcg_cut_10  \\tq1\\t0.5464\\nndcg_cut_10  \\tall\\t0.2732\\n", "out.txt")
>>> r.queries, r.values.tolist(), r.decimals.tolist(), r.mean, r.measure_name
(('q1',), [0.5464], [4], 0.2732, 'ndcg_cut_10')
>>> parse_per_query('{"q1": 0.25, "q2": 1}', "x.json").decimals.tolist()
[2, 0]
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

import numpy as np

from rankflavor.errors import InputError, UsageError

#: Query names a tool uses for its mean row.
MEAN_ROWS = ("all",)
#: trec_eval rows that are not per-query values of a measure.
_NOT_MEASURES = ("runid", "relstring")

#: Per-query forms and the presets whose tool writes that form itself: trec_eval's ``-q`` text
#: (trec_dl is trec_eval ``-c``), pytrec_eval's ``evaluate()`` dict dumped as JSON. The other
#: forms (``query value`` text, CSV, flat JSON, a mapping) are written by whoever exported them.
WRITERS: dict[str, tuple[str, ...]] = {
    "trec_eval": ("trec_eval", "trec_dl"),
    "nested_json": ("pytrec_eval",),
}


@dataclass(frozen=True)
class Reported:
    """Per-query values another tool printed.

    Attributes
    ----------
    source : file path or ``"per-query dict"``.
    measure_name : the tool's name of the measure (trec_eval text, nested JSON), else None.
    queries : query ids in file order.
    values, decimals, lines : per query, the value, how many decimals it was printed with and
        its 1-based line (0 for JSON, which has no useful line).
    mean, mean_decimals : the tool's own mean row (trec_eval ``all``), if any.
    form : ``"trec_eval"`` (``measure query value`` text), ``"text"`` (``query value``), ``"csv"``,
        ``"json"`` (flat), ``"nested_json"`` (pytrec_eval's ``{query: {measure: value}}``, as JSON
        or as the dict itself) or ``"mapping"`` (a flat dict given in Python: no tool is named by it).
    """

    source: str
    measure_name: str | None
    queries: tuple[str, ...]
    values: np.ndarray
    decimals: np.ndarray
    lines: np.ndarray
    mean: float | None = None
    mean_decimals: int | None = None
    form: str = "mapping"

    @property
    def writers(self) -> tuple[str, ...]:
        """The presets whose tool writes this form (:data:`WRITERS`)."""
        return WRITERS.get(self.form, ())


def decimals_of(text: str) -> int:
    """Decimals ``text`` was printed with (``0.5058`` -> 4, ``1`` -> 0, ``5e-05`` -> 5)."""
    try:
        exponent = Decimal(text.strip()).as_tuple().exponent
    except InvalidOperation:
        return 0
    return max(0, -exponent) if isinstance(exponent, int) else 0


def _number(text: str, source: str, line: int | None, raw: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise InputError(source, line, f"expected a number as the value, received {text!r}", raw) from None
    if not math.isfinite(value):
        raise InputError(source, line, f"expected a finite value, received {text!r}", raw)
    return value


def read_per_query(source: Any, measure_names: Callable[[list[str]], str] | None = None) -> Reported:
    """Read per-query output from a path, or take a ``{query: value}`` mapping as it is.

    ``measure_names`` picks one measure out of a file of several (``-m all_trec``); without it
    such a file is a :class:`UsageError`.
    """
    if isinstance(source, Mapping):
        items = {str(q): v for q, v in source.items()}
        return _from_mapping(items, "per-query dict", measure_names, in_file=False)
    path = os.fspath(source)
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise InputError(path, None, f"cannot read the per-query file: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise InputError(path, None, "the per-query file is not UTF-8 text") from None
    return parse_per_query(text, path, measure_names)


def parse_per_query(text: str, source: str, measure_names: Callable[[list[str]], str] | None = None) -> Reported:
    """Parse per-query text (format recognised from the text, see the module docs)."""
    if not text.strip():
        raise InputError(source, None, "the per-query file is empty")
    if text.lstrip().startswith("{"):
        try:
            data = json.loads(text, parse_float=str, parse_int=str)
        except json.JSONDecodeError as exc:
            raise InputError(source, exc.lineno, f"not valid JSON: {exc.msg}") from None
        if not isinstance(data, dict):
            raise InputError(source, None, "JSON per-query output must be an object {query: value}")
        return _from_mapping(data, source, measure_names)
    rows: list[tuple[str, str, str, int, str]] = []  # measure, query, value, line, raw
    csv_like = None
    for n, raw in enumerate(text.splitlines(), 1):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        if csv_like is None:
            csv_like = "," in raw
        fields = [f.strip() for f in raw.split(",")] if csv_like else raw.split()
        if len(fields) == 2:
            rows.append(("", fields[0], fields[1], n, raw))
        elif len(fields) == 3 and not csv_like:
            rows.append((fields[0], fields[1], fields[2], n, raw))
        else:
            want = "query,value" if csv_like else "measure query value (trec_eval -q) or query value"
            raise InputError(source, n, f"expected {want}, found {len(fields)} field(s)", raw)
    if csv_like and rows and not _is_number(rows[0][2]):
        rows = rows[1:]  # header row
    names = list(dict.fromkeys(m for m, *_ in rows if m not in _NOT_MEASURES))
    name = names[0] if len(names) == 1 else None
    if len(names) > 1:
        if measure_names is None:
            raise UsageError(f"{source}: holds {len(names)} measures ({', '.join(names[:6])}...); name the one to identify")
        name = measure_names(names)
    kept = [r for r in rows if r[0] == (name or "")]
    form = "csv" if csv_like else "trec_eval" if name else "text"
    return _build(source, name, [(q, v, line, raw) for _, q, v, line, raw in kept], form)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _from_mapping(data: dict[str, Any], source: str, measure_names: Callable[[list[str]], str] | None,
                  in_file: bool = True) -> Reported:
    nested = [q for q, v in data.items() if isinstance(v, dict)]
    name = None
    if nested:
        if len(nested) != len(data):
            raise InputError(source, None, f"query {nested[0]!r} maps to an object, others to values: mix of formats")
        names = list(dict.fromkeys(m for v in data.values() for m in v))
        if len(names) == 1:
            name = names[0]
        elif measure_names is None:
            raise UsageError(f"{source}: holds {len(names)} measures ({', '.join(names[:6])}); name the one to identify")
        else:
            name = measure_names(names)
        data = {q: v[name] for q, v in data.items() if name in v}
    form = "nested_json" if nested else "json" if in_file else "mapping"  # nested: pytrec_eval's dict
    return _build(source, name, [(str(q), _text(v), 0, f"{q}: {v}") for q, v in data.items()], form)


def _text(value: Any) -> str:
    """A mapping's value as the text a number prints as (NumPy scalars included)."""
    if isinstance(value, str):
        return value
    try:
        return repr(float(value))
    except (TypeError, ValueError):
        return repr(value)


def _build(source: str, name: str | None, rows: list[tuple[str, Any, int, str]], form: str) -> Reported:
    queries: list[str] = []
    values: list[float] = []
    decimals: list[int] = []
    lines: list[int] = []
    seen: dict[str, int] = {}
    mean = mean_dec = None
    for q, v, line, raw in rows:
        at = line or None
        value = _number(str(v), source, at, raw)
        if q in MEAN_ROWS:
            mean, mean_dec = value, decimals_of(str(v))
            continue
        if q in seen:
            where = f" (first on line {seen[q]})" if seen[q] else ""
            raise InputError(source, at, f"query {q!r} is listed twice{where}", raw)
        seen[q] = line
        queries.append(q)
        values.append(value)
        decimals.append(decimals_of(str(v)))
        lines.append(line)
    if not queries:
        raise InputError(source, None, "no per-query value found")
    return Reported(source, name, tuple(queries), np.array(values), np.array(decimals, dtype=np.int64),
                    np.array(lines, dtype=np.int64), mean, mean_dec, form)


__all__ = ["MEAN_ROWS", "WRITERS", "Reported", "decimals_of", "parse_per_query", "read_per_query"]
