"""What ``rankflavor check`` found: typed findings, a summary per file and per run, the exit status.

A :class:`Finding` is one problem (or one fact worth knowing) with its severity, a stable
``code``, the file and line it is on, a message, and how many rows or lines it counts. Findings
of one kind on many lines (malformed lines, duplicates) are listed one per line up to a cap; the
lines past the cap are counted by one more finding of the same code with no line, so the counts
of a code always add up to every occurrence.

Examples
--------
>>> f = Finding(Severity.WARNING, "equal_scores", "run.txt", 3, "2 queries have all scores equal", 2)
>>> report = CheckReport((f,), (), ())
>>> report.status, report.exit_code, report.total("equal_scores")
('warnings', 1, 2)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

#: Findings listed one by one per file and code; the rest are counted by one more finding.
LIST_LIMIT = 100
#: Longest id or line a message quotes (ids are untrusted text: a huge one must not flood a report).
SHOWN_CHARS = 80


class Severity(StrEnum):
    """How bad a finding is: errors exit 3, warnings exit 1, information leaves the status clean."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


#: The exit status of a report, by its worst finding.
EXIT_CODES = {Severity.ERROR: 3, Severity.WARNING: 1, Severity.INFO: 0}
STATUS = {Severity.ERROR: "errors", Severity.WARNING: "warnings", Severity.INFO: "clean"}


@dataclass(frozen=True)
class Finding:
    """One thing ``check`` found.

    Attributes
    ----------
    severity : :class:`Severity`.
    code : what kind of finding (``malformed_line``, ``duplicate``, ``equal_scores``, ...).
    file : the file (or input) it is in.
    line : its 1-based line, or None (a finding about a whole file, or the count past the cap).
    message : what is wrong and what was expected; ids in it are quoted with :func:`shown`.
    count : how many lines, rows or queries it stands for.
    text : the offending line as written, when there is one.
    other_line : the line of the earlier copy, for a duplicate.
    """

    severity: Severity
    code: str
    file: str
    line: int | None
    message: str
    count: int = 1
    text: str | None = None
    other_line: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"severity": str(self.severity), "code": self.code, "file": self.file, "line": self.line,
                "other_line": self.other_line, "count": self.count, "message": self.message, "text": self.text}


@dataclass(frozen=True)
class FileSummary:
    """A file as ``check`` read it: its role (``qrels`` or ``run``), the rows read (good lines
    only, when some were malformed), queries, comment and blank lines, and how it was read
    (``columnar``; ``lines``: line by line, as ``eval`` reads a file with comments or blank
    lines, or one it refuses; ``reader``: another format's reader or an in-memory input;
    ``failed``: nothing could be read)."""

    path: str
    kind: str
    rows: int
    queries: int
    comments: int = 0
    blank_lines: int = 0
    read: str = "columnar"

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "kind": self.kind, "rows": self.rows, "queries": self.queries,
                "comments": self.comments, "blank_lines": self.blank_lines, "read": self.read}


@dataclass(frozen=True)
class Overlap:
    """How a run meets the judgments.

    Attributes
    ----------
    run : the run file.
    common_queries, qrels_only, run_only : queries on both sides, only judged, only retrieved.
    run_rows : every row of the run; ``rows_in_common`` those of common queries.
    judged_rows : rows of common queries whose (query, doc) pair is judged.
    unjudged_rows : ``rows_in_common - judged_rows``.
    never_judged_docs : distinct run docnos no judgment names, for any query.
    """

    run: str
    common_queries: int
    qrels_only: int
    run_only: int
    run_rows: int
    rows_in_common: int
    judged_rows: int
    never_judged_docs: int

    @property
    def unjudged_rows(self) -> int:
        return self.rows_in_common - self.judged_rows

    @property
    def judged_share(self) -> float | None:
        """``judged_rows / rows_in_common`` (None when no row is in a common query)."""
        return self.judged_rows / self.rows_in_common if self.rows_in_common else None

    def to_dict(self) -> dict[str, Any]:
        return {"run": self.run, "common_queries": self.common_queries, "qrels_only_queries": self.qrels_only,
                "run_only_queries": self.run_only, "run_rows": self.run_rows, "rows_in_common_queries": self.rows_in_common,
                "judged_rows": self.judged_rows, "unjudged_rows": self.unjudged_rows, "judged_share": self.judged_share,
                "never_judged_docs": self.never_judged_docs}


@dataclass(frozen=True)
class CheckReport:
    """Everything ``check`` found, in the order found (file by file)."""

    findings: tuple[Finding, ...]
    files: tuple[FileSummary, ...]
    overlaps: tuple[Overlap, ...]
    limit: int = field(default=LIST_LIMIT)

    @property
    def worst(self) -> Severity:
        severities = {f.severity for f in self.findings}
        return next((s for s in (Severity.ERROR, Severity.WARNING) if s in severities), Severity.INFO)

    @property
    def status(self) -> str:
        """``clean``, ``warnings`` or ``errors``."""
        return STATUS[self.worst]

    @property
    def exit_code(self) -> int:
        """0 clean (information only), 1 warnings, 3 errors."""
        return EXIT_CODES[self.worst]

    def total(self, code: str, file: str | None = None) -> int:
        """Every occurrence of ``code`` (of ``file``), listed or counted past the cap."""
        return sum(f.count for f in self.findings if f.code == code and (file is None or f.file == file))

    def of(self, code: str, file: str | None = None) -> list[Finding]:
        """The findings of ``code`` (in ``file``)."""
        return [f for f in self.findings if f.code == code and (file is None or f.file == file)]

    def counts(self) -> dict[str, dict[str, int]]:
        """Per severity, per code: how many occurrences."""
        out: dict[str, dict[str, int]] = {str(s): {} for s in Severity}
        for f in self.findings:
            by_code = out[str(f.severity)]
            by_code[f.code] = by_code.get(f.code, 0) + f.count
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "exit_code": self.exit_code, "counts": self.counts(),
                "files": [f.to_dict() for f in self.files], "overlap": [o.to_dict() for o in self.overlaps],
                "listed_per_code": self.limit, "findings": [f.to_dict() for f in self.findings]}


def shown(value: str) -> str:
    """An id quoted for a message: ``repr`` (control characters become visible escapes), cut to
    :data:`SHOWN_CHARS`.

    >>> shown("q1"), shown("a\\x1b[31mb")
    ("'q1'", "'a\\\\x1b[31mb'")
    """
    text = repr(value)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "..."


def count_of(n: int, one: str, many: str | None = None) -> str:
    """``n`` and the word for that many.

    >>> count_of(1, "query", "queries"), count_of(3, "row")
    ('1 query', '3 rows')
    """
    return f"{n} {one if n == 1 else (many or one + 's')}"


def listed(findings: list[Finding], limit: int, severity: Severity, code: str, file: str, what: str) -> list[Finding]:
    """``findings`` (one per line, in file order) cut to ``limit``, and one more finding counting
    the rest, so that the code's counts add up to ``len(findings)``."""
    if len(findings) <= limit:
        return findings
    rest = len(findings) - limit
    return [*findings[:limit], Finding(severity, code, file, None, f"{rest} more {what} not listed", rest)]
