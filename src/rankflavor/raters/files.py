"""Rater files: several raters' grades per (query, document), in three layouts.

``trec``
    A qrels line with the rater appended: ``query iteration doc grade rater`` (five
    whitespace-separated fields). Its first four fields are an ordinary qrels line, so
    ``cut -d' ' -f1-4`` of one rater's lines is that rater's qrels; a plain four-field qrels line
    is refused rather than read as one anonymous rater.
``csv``
    A header naming the columns ``query,doc,rater,grade`` (any order, other columns ignored),
    then one rating per line.
``quepid``
    Quepid's export of a book's judgements (``/api/books/<id>/judgements.csv``,
    ``app/controllers/api/v1/judgements_controller.rb`` in o19s/quepid): the header
    ``query,docid,<judge>,<judge>,...``, one column per judge (``Anonymous`` for judgements without
    a user), one row per query/doc pair, an empty cell where that judge gave no rating. Quepid
    prefixes a query text starting with ``= + - @`` by a space (its CSV-injection guard); leading
    and trailing blanks of ids are stripped, as Quepid's own importer does.

A missing grade (an empty ``grade`` cell, a ``trec`` line of four fields, a Quepid row no judge
rated), a grade that is not a number or not on the declared scale, and the same rater rating one
pair twice are each an :class:`~rankflavor.errors.InputError` naming file and line.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable

from rankflavor.errors import InputError, UsageError
from rankflavor.io.columns import to_strings
from rankflavor.io.formats.csvtext import CsvSyntaxError, records
from rankflavor.io.formats.delimited import rows as delimited_rows
from rankflavor.io.nul import REASON, has_nul
from rankflavor.io.source import read_bytes
from rankflavor.io.tables import Qrels
from rankflavor.raters.ratings import Ratings

FORMATS = ("auto", "trec", "csv", "quepid")
TREC_LAYOUT = "query iteration doc grade rater"


def read_ratings(path: str | os.PathLike[str], fmt: str = "auto", grades: Iterable[float] | None = None) -> Ratings:
    """Read a rater file (layouts in the module docstring), plain or gzip.

    Parameters
    ----------
    path : path of the file.
    fmt : ``auto`` (a first line with commas is CSV: ``quepid`` when its second column is
        ``docid``, else ``csv``; otherwise ``trec``), ``trec``, ``csv`` or ``quepid``.
    grades : the grades of the label scale; a grade not among them is an error.

    Raises
    ------
    InputError
        Naming file and line, for a malformed line, a missing grade, a grade not a number or off
        the scale, a pair rated twice by one rater, or a file with no rating.
    UsageError
        For an unknown ``fmt``.
    """
    source = str(path)
    if fmt not in FORMATS:
        raise UsageError(f"unknown ratings format '{fmt}'; valid formats: {', '.join(FORMATS)}")
    try:
        text = read_bytes(path).decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(source, None, "is not valid UTF-8 text") from None
    if fmt == "auto":
        fmt = _guess(text)
    allowed = None if grades is None else {float(g) for g in grades}
    rows = _trec(source, text) if fmt == "trec" else _csv(source, text, fmt)
    seen: dict[tuple[str, str, str], int] = {}
    for q, d, r, g, line, raw in rows:
        if allowed is not None and g not in allowed:
            shown = ", ".join(_num(a) for a in sorted(allowed))
            raise InputError(source, line, f"grade {_num(g)} is not on the label scale (grades {shown})", raw)
        first = seen.setdefault((q, d, r), line)
        if first != line:
            raise InputError(source, line, f"rater {r!r} rates query {q!r} doc {d!r} again (first at line {first})", raw)
    if not rows:
        raise InputError(source, None, "has no ratings")
    return Ratings.from_rows([(q, d, r, g) for q, d, r, g, _, _ in rows], source, [row[4] for row in rows])


_Row = tuple[str, str, str, float, int, str]


def read_aggregated(qrels: object, rule: str, grades: Iterable[float] | None = None) -> Qrels:
    """The judgments of the ratings file ``qrels``, aggregated by ``rule``
    (:func:`rankflavor.raters.aggregate_ratings`): what ``eval --raters RULE`` evaluates, on
    every engine. The rule is checked before the file is read."""
    from rankflavor.raters.rules import aggregate_ratings, check_rule

    check_rule(rule)
    if not isinstance(qrels, (str, os.PathLike)):
        raise UsageError("raters: give the ratings file's path as qrels (several raters per query and document)")
    return aggregate_ratings(read_ratings(qrels, "auto", grades), rule)


def _guess(text: str) -> str:
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            if "," not in line:
                return "trec"
            try:  # (a first line of any length: csv's field size limit is not ours)
                first = next(records(line, ","))[1]
            except CsvSyntaxError:
                first = line.split(",")
            head = [h.strip().lower() for h in first]
            return "quepid" if head[:2] == ["query", "docid"] and "rater" not in head else "csv"
    return "trec"


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def _grade(source: str, line: int, text: str, raw: str, what: str = "grade") -> float:
    text = text.strip()
    if not text:
        raise InputError(source, line, f"missing {what}", raw)
    try:
        value = float(text)
    except ValueError:
        raise InputError(source, line, f"{what} {text!r} is not a number", raw) from None
    if not math.isfinite(value):
        raise InputError(source, line, f"{what} {text!r} is not a finite number", raw)
    return value


def _trec(source: str, text: str) -> list[_Row]:
    rows: list[_Row] = []
    for line, raw in enumerate(text.split("\n"), 1):
        parts = raw.split()
        if not parts or parts[0].startswith("#"):
            continue
        if len(parts) != 5:
            hint = " (a missing grade or rater?)" if len(parts) == 4 else ""
            raise InputError(source, line, f"expected 5 whitespace-separated fields '{TREC_LAYOUT}', "
                             f"found {len(parts)}{hint}", raw)
        _ids(source, line, raw, parts[0], parts[2], parts[4])
        rows.append((parts[0], parts[2], parts[4], _grade(source, line, parts[3], raw), line, raw))
    return rows


def _csv(source: str, text: str, fmt: str) -> list[_Row]:
    header: list[str] | None = None
    rows: list[_Row] = []
    # The delimited readers' rows: fields of any length, strict quoting (an error names its line)
    for line, cells in delimited_rows(source, text, ","):
        raw = ",".join(cells)
        if not cells or (header is None and cells[0].startswith("#")):
            continue
        if header is None:
            header = [c.strip() for c in cells]
            _check_header(source, line, header, fmt, raw)
            continue
        if len(cells) > len(header):
            raise InputError(source, line, f"{len(cells)} fields, the header has {len(header)}", raw)
        cells = [c.strip() for c in cells] + [""] * (len(header) - len(cells))
        if fmt == "csv":
            col = {h.lower(): i for i, h in enumerate(header)}
            q, d, r = cells[col["query"]], cells[col["doc"]], cells[col["rater"]]
            _ids(source, line, raw, q, d, r)
            rows.append((q, d, r, _grade(source, line, cells[col["grade"]], raw), line, raw))
        else:
            q, d = cells[0], cells[1]
            _ids(source, line, raw, q, d, "-")
            rated = [(judge, cell) for judge, cell in zip(header[2:], cells[2:], strict=True) if cell]
            if not rated:
                raise InputError(source, line, "missing grade: no judge rated this query/doc pair", raw)
            for judge, cell in rated:
                rows.append((q, d, judge, _grade(source, line, cell, raw, f"rating of judge {judge!r}"), line, raw))
    if header is None:
        raise InputError(source, None, "has no header line")
    return rows


def _check_header(source: str, line: int, header: list[str], fmt: str, raw: str) -> None:
    lowered = [h.lower() for h in header]
    if fmt == "csv":
        missing = [c for c in ("query", "doc", "rater", "grade") if c not in lowered]
        if missing:
            raise InputError(source, line, f"the header lacks column(s) {', '.join(missing)}; "
                             "expected 'query,doc,rater,grade'", raw)
        if len(set(lowered)) != len(lowered):
            raise InputError(source, line, "the header names a column twice", raw)
    else:
        if lowered[:2] != ["query", "docid"] or len(header) < 3:
            raise InputError(source, line, "expected Quepid's judgements header 'query,docid,<judge>,...'", raw)
        if len(set(header[2:])) != len(header) - 2:
            raise InputError(source, line, "the header names a judge twice", raw)


def _ids(source: str, line: int, raw: str, *ids: str) -> None:
    if not all(ids):
        raise InputError(source, line, "an empty query, doc or rater id", raw)
    if any(map(has_nul, ids)):
        raise InputError(source, line, f"a query, doc or rater id {REASON}", raw)


def write_aggregated(qrels: Qrels, raters: int) -> str:
    """The text of a TREC qrels file of aggregated grades (``query 0 doc grade``), its first line
    a comment that names the rule, the raters and the ratings' source (the rule is part of
    ``qrels.source``: ``ratings.csv[raters=median]``). rankflavor and trec_eval 10.0 skip
    ``#`` lines.

    Examples
    --------
    >>> from rankflavor.raters import Ratings, aggregate_ratings
    >>> q = aggregate_ratings(Ratings.from_rows([("q", "d", "a", 1), ("q", "d", "b", 2)], "r.csv"), "mean")
    >>> print(write_aggregated(q, 2), end="")
    # rankflavor aggregate: r.csv[raters=mean], 2 raters
    q 0 d 1.5
    """
    out = [f"# rankflavor aggregate: {qrels.source}, {raters} raters"]
    pairs = zip(to_strings(qrels.query), to_strings(qrels.doc), qrels.grade, strict=True)
    out += [f"{q} 0 {d} {_num(g)}" for q, d, g in pairs]
    return "\n".join(out) + "\n"
