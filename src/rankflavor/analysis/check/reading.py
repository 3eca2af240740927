"""Reading a file for ``check``: through the io entry points first, the collecting line pass only
when they refuse a TREC file.

The fast path is the one ``eval`` takes (:func:`rankflavor.io.read_qrels`,
:func:`rankflavor.io.read_run`, columnar for clean files), so a file that ``check`` passes is
read by ``eval`` the same way. When the entry point raises its typed error on a TREC text file,
the line-by-line reader runs again in its collecting mode (:mod:`rankflavor.io.lines`): every bad
line is named, and the good lines still go through the table checks. A file of another format
(chosen by ``fmt`` or its extension) is read by its own reader only: its typed error becomes an
error finding, and the table it reads gets every table check.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from rankflavor.analysis.check.findings import LIST_LIMIT, FileSummary, Finding, Severity, listed
from rankflavor.errors import InputError, UsageError
from rankflavor.io.columnar import read_columns
from rankflavor.io.formats.spec import SUFFIX_FORMATS
from rankflavor.io.inputs import as_qrels, as_run
from rankflavor.io.lines import QRELS_FIELDS, RUN_FIELDS, parse_qrels_lines, parse_run_lines
from rankflavor.io.parse import QUERY
from rankflavor.io.run import read_run
from rankflavor.io.source import normalized, read_bytes
from rankflavor.io.tables import Qrels, Run

#: Extensions of formats other than TREC text (before a compression suffix): their own readers
#: decide, and ``check`` reports their typed error rather than running the TREC line pass.
OTHER_FORMATS = tuple(SUFFIX_FORMATS)
COMPRESSED = (".gz", ".bz2", ".xz", ".zst", ".zstd")
#: Longest line a finding quotes (a file with no newline is one line: its text must not flood a report).
SHOWN_LINE = 200


class Collected(list[InputError]):
    """The line pass's errors: the first ``limit`` kept, every one counted, and how many of the
    malformed lines had the field count of the other kind of file (a run line in a qrels file)."""

    def __init__(self, limit: int, other_fields: Any) -> None:
        super().__init__()
        self.limit = limit
        self.seen = 0
        self.other_kind = 0
        self._other_fields = other_fields

    def append(self, exc: InputError) -> None:
        self.seen += 1
        if exc.text is not None and self._other_fields(len(exc.text.split())):
            self.other_kind += 1
        if len(self) < self.limit:
            super().append(exc)


@dataclass
class Read:
    """A file as read for the checks: its table (None when nothing could be read), the findings of
    the read, its summary, and (TREC runs) the rank field of each row as written."""

    table: Qrels | Run | None
    findings: list[Finding]
    summary: FileSummary
    ranks: pa.Array | np.ndarray | None = None


def is_trec(path: Any, fmt: str | None) -> bool:
    """Is ``path`` read as TREC text: ``fmt`` says so, or (no ``fmt``) its name has no other
    format's extension?"""
    if fmt is not None:
        return fmt.lower() == "trec"
    if not isinstance(path, (str, os.PathLike)):
        return False
    name = os.fspath(path).lower()
    for suffix in COMPRESSED:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return not name.endswith(OTHER_FORMATS)


def read_for_check(kind: str, obj: Any, fmt: str | None = None, options: dict[str, Any] | None = None,
                   limit: int = LIST_LIMIT, label: str | None = None) -> Read:
    """Read ``obj`` (a path, or anything :func:`~rankflavor.io.inputs.as_qrels` / ``as_run``
    take) as ``kind`` (``"qrels"`` or ``"run"``), turning typed input errors into findings.

    ``fmt`` and ``options`` (e.g. ``columns``) are handed to the io entry point for formats
    other than TREC text. An input that is no path is named ``label`` (default: its kind and
    type), and its table takes that name as its source, so that every finding names it.
    """
    path = isinstance(obj, (str, os.PathLike))
    name = os.fspath(obj) if path else (label or f"{kind} ({type(obj).__name__})")
    trec = path and is_trec(obj, fmt)
    if trec and kind == "run":
        return _trec_run(obj, name, limit)
    try:
        table = _entry_point(kind, obj, fmt, options or {}, trec)
        if not path:
            table = dataclasses.replace(table, source=name)
    except InputError as exc:
        if not trec:
            return Read(None, [error_finding(exc, name)], FileSummary(name, kind, 0, 0, read="failed"))
        return _line_pass(kind, obj, name, exc, limit)
    ranks = None
    if not trec:  # a reader of another format may keep the rank it read (a run ordered by rank)
        kept = getattr(table, "rank", None)
        ranks = kept if isinstance(kept, np.ndarray) else None
    return Read(table, [], summary(kind, name, table, "columnar" if trec else "reader"), ranks)


def _trec_run(path: Any, name: str, limit: int) -> Read:
    """A TREC run. Its rank column is read column by column first (the run table keeps no rank);
    when that read refuses the file, so does eval's columnar read, and the collecting line pass
    reads it at once (eval's reader would read it line by line up to its first error, and the
    pass would then read it all again). The line pass, like eval, decodes only the fields it
    keeps: a rank that is not UTF-8 reads as U+FFFD, which the rank checks name."""
    ranks = _trec_ranks(path)
    if ranks is not None:
        try:
            table = read_run(path)
        except InputError as exc:  # a score that is no finite number
            return _line_pass("run", path, name, exc, limit)
        return Read(table, [], summary("run", name, table, "columnar"), ranks)
    return _line_pass("run", path, name, None, limit)


def _entry_point(kind: str, obj: Any, fmt: str | None, options: dict[str, Any], trec: bool) -> Qrels | Run:
    if trec or not isinstance(obj, (str, os.PathLike)) or (fmt is None and not options):
        return as_qrels(obj) if kind == "qrels" else as_run(obj)
    import inspect

    from rankflavor.io.qrels import read_qrels

    # Another format, named: the io entry point's keywords (format, columns) choose its reader.
    reader: Any = read_qrels if kind == "qrels" else read_run
    keywords = dict(options)
    if fmt is not None:
        keywords["format"] = fmt
    taken = inspect.signature(reader).parameters
    unknown = [k for k in keywords if k not in taken]
    if unknown:
        raise UsageError(f"the {kind} reader takes no {', '.join(unknown)} option: this rankflavor reads "
                         f"{kind} files as TREC text (give --{kind}-format trec, or no format)")
    return reader(obj, **keywords)  # type: ignore[no-any-return]


def _line_pass(kind: str, path: Any, name: str, first: InputError | None, limit: int) -> Read:
    """The collecting line pass of a TREC file the entry point refused (``first``: its error)."""
    try:
        data = read_bytes(path)
    except InputError as exc:  # missing, a directory, corrupt compression: nothing to read
        return Read(None, [error_finding(exc, name)], FileSummary(name, kind, 0, 0, read="failed"))
    if kind == "qrels":
        errors = Collected(limit, lambda n: n >= RUN_FIELDS)
        table: Qrels | Run = parse_qrels_lines(name, data, collect=errors)
        ranks = None
    else:
        errors = Collected(limit, lambda n: n == QRELS_FIELDS)
        words: list[str] = []
        table = parse_run_lines(name, data, collect=errors, ranks=words)
        ranks = pa.array(words, pa.string())
    first_error = first if errors.seen == 0 else None  # the line pass accepts what the entry point refused
    findings = malformed_findings(kind, name, list(errors), errors.seen, errors.other_kind, len(table), limit,
                                  first_error)
    return Read(table, findings, summary(kind, name, table, "lines"), ranks)


def malformed_findings(kind: str, name: str, kept: list[InputError], seen: int, other_kind: int, good: int,
                       limit: int, first: InputError | None = None) -> list[Finding]:
    """The findings of a file's malformed lines: ``kept``, the first ``limit`` errors of the line
    pass (in file order), of ``seen`` in all, ``other_kind`` of them lines of the other kind of
    file, beside ``good`` good lines; ``first``: the entry point's error, when the line pass
    found none."""
    findings = [error_finding(e, name) for e in kept]
    if first is not None:
        findings.append(error_finding(first, name))
    findings = listed(findings, limit, Severity.ERROR, "malformed_line", name, "malformed lines")
    if seen > len(kept):
        rest = seen - len(kept)
        findings.append(Finding(Severity.ERROR, "malformed_line", name, None, f"{rest} more malformed lines not listed",
                                rest))
    return findings + _wrong_kind(kind, name, other_kind, good)


def _wrong_kind(kind: str, name: str, other_kind: int, good: int) -> list[Finding]:
    """A qrels file whose bad lines are mostly run lines (or the other way round)."""
    if other_kind == 0 or other_kind < good:
        return []
    if kind == "qrels":
        return [Finding(Severity.WARNING, "looks_like_run", name, None,
                        f"{other_kind} lines have {RUN_FIELDS} or more fields, as run lines do; was a run "
                        "given as QRELS (or QRELS and RUN swapped)?", other_kind)]
    return [Finding(Severity.WARNING, "looks_like_qrels", name, None,
                    f"{other_kind} lines have {QRELS_FIELDS} fields, as qrels lines do; was a qrels file "
                    "given as a RUN (or QRELS and RUN swapped)?", other_kind)]


def _trec_ranks(path: Any) -> pa.Array | None:
    """The rank field of each row of a TREC run read column by column (the run table keeps no
    ranks: trec_eval orders by score), or None when the columnar reader would not take the file.

    As :func:`rankflavor.io.columnar.columnar`, but the whitespace-folded second chance is tried
    only when the bytes have blanks to fold: on a file refused for a bad line it would cost a
    regex pass over every byte, only to be refused again.
    """
    kinds = {0: QUERY, 3: pa.string()}
    parsed = read_columns(path, RUN_FIELDS, kinds) if os.path.isfile(path) else None
    if parsed is None:
        try:
            data = read_bytes(path)
        except InputError:
            return None
        text = normalized(data) if _foldable(data) else None
        parsed = read_columns(text, RUN_FIELDS, kinds) if text else None
    if parsed is None:
        return None
    rank = parsed[0][1]
    return rank.combine_chunks() if isinstance(rank, pa.ChunkedArray) else rank


def _foldable(data: bytes) -> bool:
    """Would :func:`rankflavor.io.source.normalized` change ``data`` (tabs, runs of blanks, blanks
    opening or closing a line)? Each test is one memchr-speed search.

    >>> _foldable(b"q Q0 d 1 2 t\\n"), _foldable(b"q\\tQ0 d 1 2 t\\n"), _foldable(b"q Q0 d 1 2 t \\n")
    (False, True, True)
    """
    if any(b in data for b in (b"\t", b"\r", b"\v", b"\f", b"  ", b" \n", b"\n ")):
        return True
    return data.startswith(b" ") or data.endswith(b" ")


def error_finding(exc: InputError, name: str) -> Finding:
    """A typed input error as a finding: ``malformed_line`` when it names a line, else ``unreadable``."""
    text = exc.text if exc.text is None or len(exc.text) <= SHOWN_LINE else exc.text[:SHOWN_LINE] + "..."
    return Finding(Severity.ERROR, "malformed_line" if exc.line is not None else "unreadable", exc.source or name,
                   exc.line, exc.message, 1, text)


def summary(kind: str, name: str, table: Qrels | Run, read: str) -> FileSummary:
    if read == "columnar" and table.lines is not None:  # the entry point took the line path itself
        read = "lines"
    n_queries = _distinct_queries(table.query)
    return FileSummary(name, kind, len(table), n_queries, table.comments, table.blank_lines, read)


def _distinct_queries(query: pa.Array | pa.ChunkedArray) -> int:
    """Query ids the rows use (a dictionary may name ids no row uses)."""
    from rankflavor.align.queries import coded_queries, query_names

    return len(coded_queries(*query_names(query, pa.nulls(0, pa.string())))[2])
