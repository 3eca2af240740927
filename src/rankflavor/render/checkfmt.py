"""Render a :class:`rankflavor.check.CheckReport`: terminal tables (rich) or JSON.

Ids, lines and paths are untrusted text: every cell is made printable (control characters as
escapes) and escaped for rich markup, so a crafted id cannot restyle, break or end the table;
JSON is written by :func:`json.dumps`, which escapes whatever a string holds.
"""

from __future__ import annotations

import io

from ..check import CheckReport, FileSummary, Finding
from ..finite import dumps
from .console import make_console

CHECK_FORMATS = ("table", "json")
#: Findings of one code shown per file in the terminal table (JSON lists what the report holds).
TABLE_LISTED = 10


def render_check(report: CheckReport, fmt: str = "table", width: int | None = None) -> str:
    """``table`` (files, overlap, findings, status) or ``json`` (:meth:`CheckReport.to_dict`)."""
    if fmt == "json":
        return dumps(report.to_dict()) + "\n"
    return _table(report, width)


def safe(text: str | None) -> str:
    """``text`` printable (control characters as Python escapes) and escaped for rich markup.

    >>> print(safe("[bold]q\\x1b[0m"))
    \\[bold]q\\x1b[0m
    """
    from rich.markup import escape

    if text is None:
        return ""
    if not text.isprintable():
        text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    return escape(text)


def _where(f: Finding) -> str:
    if f.line is None:
        return ""
    return str(f.line) + (f" (first {f.other_line})" if f.other_line is not None else "")


def _read(s: FileSummary) -> str:
    extra = [f"{n} {what}" for n, what in ((s.comments, "comments"), (s.blank_lines, "blank")) if n]
    return s.read + (f" ({', '.join(extra)})" if extra else "")


def _table(report: CheckReport, width: int | None) -> str:
    from rich.table import Table

    buf = io.StringIO()
    console = make_console(buf, width)
    overlap = {o.run: o for o in report.overlaps}
    files = Table(title="files", title_justify="left")
    for col in ("file", "as", "rows", "queries", "common queries", "judged rows", "read"):
        files.add_column(col, justify="left" if col in ("file", "as", "read") else "right", overflow="fold")
    for s in report.files:
        o = overlap.get(s.path) if s.kind == "run" else None
        judged = "" if o is None else f"{o.judged_rows} ({'-' if o.judged_share is None else f'{o.judged_share:.1%}'})"
        files.add_row(safe(s.path), s.kind, str(s.rows), str(s.queries), "" if o is None else str(o.common_queries),
                      judged, _read(s))
    console.print(files)
    for path in dict.fromkeys(f.file for f in report.findings):
        mine = [f for f in report.findings if f.file == path]
        found = Table(title=f"findings: {safe(path)}", title_justify="left")
        for col in ("severity", "code", "line", "count", "message"):
            found.add_column(col, justify="right" if col in ("count", "line") else "left", overflow="fold",
                             no_wrap=col in ("severity", "code"))
        listed: dict[str, int] = {}
        for f in mine:
            listed[f.code] = listed.get(f.code, 0) + 1
            if listed[f.code] == TABLE_LISTED + 1:
                rest = report.total(f.code, path) - sum(g.count for g in report.of(f.code, path)[:TABLE_LISTED])
                found.add_row(str(f.severity), f.code, "", str(rest), f"{rest} more (--format json lists them)")
            if listed[f.code] > TABLE_LISTED:
                continue
            message = safe(f.message) + (f"\nline: {safe(repr(f.text))}" if f.text is not None else "")
            found.add_row(str(f.severity), f.code, _where(f), str(f.count), message)
        console.print(found)
    by = {sev: sum(1 for f in report.findings if f.severity == sev) for sev in ("error", "warning", "info")}
    console.print(f"status: {report.status} ({by['error']} errors, {by['warning']} warnings, {by['info']} notes); "
                  f"exit {report.exit_code}", highlight=False)
    return buf.getvalue()
