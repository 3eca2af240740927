"""The line-by-line reader: trec_eval's rules, line by line, naming the first bad line.

It reads whatever the columnar path leaves to it (tabs, runs of blanks, comments, blank lines,
a bad line) and accepts exactly what trec_eval 9.0.8 accepts (``get_qrels.c`` /
``get_trec_results.c``):

* qrels: ``query iteration doc grade`` - exactly four fields; or five, ``query iteration doc grade
  source``, the fifth naming who gave the judgment (``human:nist``, ``llm:MODEL``:
  :mod:`rankflavor.io.labels`), on every judgment line of the file.
* run: ``query Q0 doc rank score tag`` - at least six fields; further fields are ignored (as
  trec_eval does) and counted. The rank column is ignored: order comes from the score.

Lines starting with ``#`` are comments (trec_eval 10.0) and blank lines are skipped; both are
counted in the table returned. A query id or docno holding a NUL byte is an error naming its
line (:mod:`rankflavor.io.nul`; trec_eval would end the id there).

Given a ``collect`` list, the readers go on past a bad line: its error is appended there and the
table holds the good lines (``rankflavor check`` lists every bad line this way).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator

import numpy as np

from rankflavor.errors import InputError
from rankflavor.io.columns import dictionary_array, string_array
from rankflavor.io.nul import REASON, has_nul
from rankflavor.io.source import BLANKS
from rankflavor.io.tables import Qrels, Run

QRELS_FIELDS = 4
RUN_FIELDS = 6
QRELS_LAYOUT = "query iteration doc grade"
RUN_LAYOUT = "query Q0 doc rank score tag"
#: The error of a line whose bytes are not UTF-8.
NOT_UTF8 = "is not valid UTF-8 text"

#: What ``str.split`` takes for a blank and trec_eval's ``isspace`` does not.
_UNICODE_BLANK = re.compile("[\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")
_FIELD = re.compile(f"[^{re.escape(BLANKS)}]+")


def parse_qrels_lines(source: str, data: bytes, collect: list[InputError] | None = None, first_line: int = 1) -> Qrels:
    """The judgments of a qrels file's bytes ``data``, read line by line.

    ``collect``: append each error there instead of raising it, and keep the good lines;
    ``first_line``: the number of the first line of ``data`` (a part of a file).

    Raises
    ------
    InputError
        Naming ``source``, the line and the expected layout when a line is malformed or a
        grade is not a finite number, or when no line is a judgment.

    Examples
    --------
    >>> qrels = parse_qrels_lines("q.txt", b"# judged by hand\\nq1 0 d7\\t2\\n\\nq1 0 d3 0\\n")
    >>> qrels.grade.tolist(), qrels.lines.tolist(), qrels.comments, qrels.blank_lines
    ([2.0, 0.0], [2, 4], 1, 1)
    >>> errors = []
    >>> parse_qrels_lines("q.txt", b"q1 0 d7\\nq1 0 d3 x\\nq1 0 d4 1\\n", errors).doc.to_pylist()
    ['d4']
    >>> [e.line for e in errors]
    [1, 2]
    """
    queries: list[str] = []
    docs: list[str] = []
    grades: list[float] = []
    lines: list[int] = []
    sources: list[str] = []
    #: (fields of the file's first judgment line, that line): 4, or 5 with a source field.
    width: tuple[int, int] | None = None
    comments = blanks = 0
    fail = _failure(collect)
    for lineno, raw, parts in _lines(source, data, first_line, collect=collect, used=(0, 2, 3, 4)):
        if not parts:
            blanks += 1
            continue
        if parts[0].startswith("#"):
            comments += 1
            continue
        try:
            if len(parts) not in (QRELS_FIELDS, QRELS_FIELDS + 1) or (width is not None and len(parts) != width[0]):
                raise InputError(source, lineno, _width_error(len(parts), width, len(lines)), raw)
            _ids(source, lineno, parts, raw)
            grade = _number(source, lineno, parts[3], "grade", raw)
            if len(parts) > QRELS_FIELDS:
                _source(source, lineno, parts[4], raw)
        except InputError as exc:
            fail(exc)
            continue
        if width is None:
            width = (len(parts), lineno)
        queries.append(parts[0])
        docs.append(parts[2])
        grades.append(grade)
        lines.append(lineno)
        if len(parts) > QRELS_FIELDS:
            sources.append(parts[4])
    if not grades:
        fail(InputError(source, None, f"qrels file has no judgment lines; expected '{QRELS_LAYOUT}'"))
    return Qrels(
        dictionary_array(queries),
        string_array(docs),
        np.asarray(grades, dtype=np.float64),
        source,
        np.asarray(lines, dtype=np.int64),
        comments,
        blanks - 1 if data.endswith(b"\n") else blanks,
        from_file=True,
        label_source=dictionary_array(sources) if sources and len(sources) == len(grades) else None,
    )


def _width_error(n_fields: int, width: tuple[int, int] | None, before: int) -> str:
    """The error of a judgment line of ``n_fields`` fields, the file's first judgment line having
    ``width`` (its fields and line; None: this is the first)."""
    if width is not None and n_fields in (QRELS_FIELDS, QRELS_FIELDS + 1):
        has = "has a" if width[0] > QRELS_FIELDS else "has no"
        return (f"found {n_fields} fields, but line {width[1]} {has} fifth SOURCE field: every judgment line of a "
                f"file names its label source ('{QRELS_LAYOUT} source'), or none does")
    return (f"expected 4 whitespace-separated fields '{QRELS_LAYOUT}', found {n_fields}."
            + _swap_hint(n_fields, "qrels", before) + f" (A fifth field names the label source: '{QRELS_LAYOUT} source'.)")


def _source(source: str, lineno: int, text: str, line: str) -> None:
    """A fifth field is a label source (:func:`rankflavor.io.labels.source_problem`)."""
    from rankflavor.io.labels.sources import source_problem

    problem = source_problem(text)
    if problem is not None:
        raise InputError(source, lineno, problem, line)


def parse_run_lines(source: str, data: bytes, first_line: int = 1, whole_file: bool = True,
                    collect: list[InputError] | None = None, ranks: list[str] | None = None) -> Run:
    """The rows of a run file's bytes ``data``, read line by line.

    ``data`` may be a part of the file (whole lines) starting at line ``first_line``; unless
    ``whole_file``, it may then hold no result line. The tag is the last result line's.
    ``collect``: append each error there instead of raising it, and keep the good lines;
    ``ranks``: append each kept row's rank field (the fourth) there, as written.

    Raises
    ------
    InputError
        Naming ``source``, the line and the expected layout when a line is malformed or a
        score is not a finite number, or (``whole_file``) when no line is a result.

    Examples
    --------
    >>> run = parse_run_lines("r.txt", b"q1 Q0 d7 1 2.5 a\\nq1  Q0 d3 2 1.5 b extra\\n")
    >>> run.score.tolist(), run.tag, run.extra_fields
    ([2.5, 1.5], 'b', 1)
    """
    queries: list[str] = []
    docs: list[str] = []
    scores: list[float] = []
    lines: list[int] = []
    comments = blanks = extra = 0
    tag: str | None = None
    fail = _failure(collect)
    for lineno, raw, parts in _lines(source, data, first_line, collect, used=(0, 2, 4)):
        if not parts:
            blanks += 1
            continue
        if parts[0].startswith("#"):
            comments += 1
            continue
        try:
            if len(parts) < RUN_FIELDS:
                raise InputError(
                    source,
                    lineno,
                    f"expected 6 whitespace-separated fields '{RUN_LAYOUT}', found {len(parts)}."
                    + _swap_hint(len(parts), "run", len(lines) + first_line - 1),
                    raw,
                )
            _ids(source, lineno, parts, raw)
            score = _number(source, lineno, parts[4], "score", raw)
        except InputError as exc:
            fail(exc)
            continue
        if len(parts) > RUN_FIELDS:
            extra += 1
        queries.append(parts[0])
        docs.append(parts[2])
        scores.append(score)
        lines.append(lineno)
        tag = parts[5]
        if ranks is not None:
            ranks.append(parts[3])
    if not scores and whole_file:
        fail(InputError(source, None, f"run file has no result lines; expected '{RUN_LAYOUT}'"))
    return Run(
        dictionary_array(queries),
        string_array(docs),
        np.asarray(scores, dtype=np.float64),
        source,
        np.asarray(lines, dtype=np.int64),
        tag,
        comments,
        blanks - 1 if data.endswith(b"\n") else blanks,
        extra,
        from_file=True,
    )


def _failure(collect: list[InputError] | None) -> Callable[[InputError], None]:
    """What a reader does with an error: raise it, or append it to ``collect``."""
    if collect is not None:
        return collect.append

    def throw(exc: InputError) -> None:
        raise exc

    return throw


def _lines(source: str, data: bytes, first_line: int = 1, collect: list[InputError] | None = None,
           used: tuple[int, ...] = ()) -> Iterator[tuple[int, str, list[str]]]:
    """Each line of ``data`` with its number and its fields, split at runs of the blanks
    trec_eval's ``isspace`` knows (space, tab, CR, vertical tab, form feed) and no others:
    ``str.split`` would also split at a no-break space or U+001F, which trec_eval and the
    columnar path keep inside a field (it is used where none occurs).

    A line whose fields ``used`` (their indexes) are not UTF-8 is an error naming it (raised, or
    appended to ``collect`` and the line skipped). Bytes that are not UTF-8 in a field the reader
    skips (a run's tag, a qrels' iteration) are no error, as on the columnar path, which never
    decodes those fields; they read as U+FFFD."""
    try:
        return _split_lines(data.decode("utf-8"), first_line)
    except UnicodeDecodeError:
        return _each_decoded(source, data, first_line, _failure(collect), used)


def _split_lines(text: str, first_line: int) -> Iterator[tuple[int, str, list[str]]]:
    if text.isascii():  # most files; a pass of the regex costs more than the four finds
        plain = not any(c in text for c in "\x1c\x1d\x1e\x1f")
    else:
        plain = _UNICODE_BLANK.search(text) is None
    split = str.split if plain else _FIELD.findall
    for lineno, raw in enumerate(text.split("\n"), first_line):
        yield lineno, raw, split(raw)


def _each_decoded(source: str, data: bytes, first_line: int, fail: Callable[[InputError], None],
                  used: tuple[int, ...]) -> Iterator[tuple[int, str, list[str]]]:
    """The lines of ``data`` decoded one at a time: a line that is not UTF-8 in a ``used`` field
    is reported; a comment, or a line that is not UTF-8 only in skipped fields, is kept."""
    for lineno, raw in enumerate(data.split(b"\n"), first_line):
        try:
            yield from _split_lines(raw.decode("utf-8"), lineno)
            continue
        except UnicodeDecodeError:
            pass
        shown = raw.decode("utf-8", "replace")
        # surrogateescape keeps each bad byte as one lone surrogate, so fields split where the bytes do.
        _, _, parts = next(_split_lines(raw.decode("utf-8", "surrogateescape"), lineno))
        comment = bool(parts) and parts[0].startswith("#")
        if not comment and any(i < len(parts) and _escaped(parts[i]) for i in used):
            fail(InputError(source, lineno, NOT_UTF8, shown))
            continue
        yield lineno, shown, [_replaced(p) if _escaped(p) else p for p in parts]


def _escaped(field: str) -> bool:
    return any("\udc80" <= c <= "\udcff" for c in field)


def _replaced(field: str) -> str:
    return field.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _ids(source: str, lineno: int, parts: list[str], line: str) -> None:
    """The query id (field 1) and the docno (field 3) hold no NUL byte (:mod:`rankflavor.io.nul`)."""
    for at, field in ((0, "query id"), (2, "doc id")):
        if has_nul(parts[at]):
            raise InputError(source, lineno, f"the {field} {REASON}", line)


def _number(source: str, lineno: int, text: str, field: str, line: str) -> float:
    """A field as a number the way the fast path reads one: Python's ``float`` also takes digit
    groups ("1_0" is 10) and non-ASCII digits, which pyarrow and trec_eval's ``atof`` do not."""
    try:
        if not text.isascii() or "_" in text:
            raise ValueError
        value = float(text)
    except ValueError:
        raise InputError(source, lineno, f"{field} {text!r} is not a number", line) from None
    if not math.isfinite(value):
        raise InputError(source, lineno, f"{field} {text!r} is not a finite number", line)
    return value


def _swap_hint(n_fields: int, expected_kind: str, before: int = 0) -> str:
    """What a line of the wrong field count suggests. Only when no line before it read well can the
    whole file be the other input (QRELS and RUN swapped); after good lines (``before``: lines read
    or skipped before it) the file is of its kind and this one line is damaged."""
    if before:
        return (f" The lines before it read as {'judgments' if expected_kind == 'qrels' else 'a run'}, so this one "
                "line is cut short or damaged (the inputs are not swapped): fix or remove it (`rankflavor check` "
                "lists every such line).")
    if expected_kind == "qrels" and n_fields >= RUN_FIELDS:
        return " This looks like a run line: were QRELS and RUN given in the wrong order?"
    if expected_kind == "run" and n_fields == QRELS_FIELDS:
        return " This looks like a qrels line: were QRELS and RUN given in the wrong order?"
    return ""
