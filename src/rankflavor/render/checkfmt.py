"""Render a :class:`rankflavor.analysis.check.CheckReport`: terminal tables (rich) or JSON.

Ids, lines and paths are untrusted text: every cell is made printable (control characters as
escapes) and escaped for rich markup, so a crafted id cannot restyle, break or end the table;
JSON is written by :func:`json.dumps`, which escapes whatever a string holds.
"""

from __future__ import annotations

import io

from rankflavor.analysis.check import CheckReport, FileSummary, Finding
from rankflavor.base.finite import dumps
from rankflavor.render.console import make_console

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


#: From this many columns findings are a table; below, a wrapped paragraph each.
FINDINGS_TABLE_FROM = 120


def _table(report: CheckReport, width: int | None) -> str:
    from rankflavor.render.fit import Column, NameText, paged_tables, print_wrapped

    buf = io.StringIO()
    console = make_console(buf, width)
    overlap = {o.run: o for o in report.overlaps}
    cells: list[list[object]] = [[], [], [], [], [], [], []]
    for s in report.files:
        o = overlap.get(s.path) if s.kind == "run" else None
        judged = "" if o is None else f"{o.judged_rows} ({'-' if o.judged_share is None else f'{o.judged_share:.1%}'})"
        for col, value in zip(cells, (NameText(s.path), s.kind, str(s.rows), str(s.queries),
                                      "" if o is None else str(o.common_queries), judged, _read(s)), strict=True):
            col.append(value)
    heads = ("file", "as", "rows", "queries", "common queries", "judged rows", "read")
    columns = [Column(h, c, "left" if h in ("file", "as", "read") else "right", wrap=h in ("file", "read"))
               for h, c in zip(heads, cells, strict=True)]
    for t in paged_tables(columns, console.width, title="files", title_justify="left"):
        console.print(t)
    as_table = console.width >= FINDINGS_TABLE_FROM
    for path in dict.fromkeys(f.file for f in report.findings):
        mine = [f for f in report.findings if f.file == path]
        rows: list[tuple[str, str, str, str, str, str | None]] = []
        listed: dict[str, int] = {}
        for f in mine:
            listed[f.code] = listed.get(f.code, 0) + 1
            if listed[f.code] == TABLE_LISTED + 1:
                rest = report.total(f.code, path) - sum(g.count for g in report.of(f.code, path)[:TABLE_LISTED])
                rows.append((str(f.severity), f.code, "", str(rest), f"{rest} more (--format json lists them)", None))
            if listed[f.code] > TABLE_LISTED:
                continue
            rows.append((str(f.severity), f.code, _where(f), str(f.count), f.message,
                         None if f.text is None else repr(f.text)))
        if as_table:
            _findings_table(console, path, rows)
            continue
        print_wrapped(console, f"findings: {path}")
        for severity, code, where, count, message, line in rows:
            print_wrapped(console, f"{severity} {code}" + (f" line {where}" if where else "") + f" count {count}: "
                          + message, "  ", "    ")
            if line is not None:
                print_wrapped(console, f"line: {line}", "    ", "      ")
    by = {sev: sum(1 for f in report.findings if f.severity == sev) for sev in ("error", "warning", "info")}
    print_wrapped(console, f"status: {report.status} ({by['error']} errors, {by['warning']} warnings, "
                  f"{by['info']} notes); exit {report.exit_code}")
    return buf.getvalue()


def _findings_table(console: object, path: str, rows: list[tuple[str, str, str, str, str, str | None]]) -> None:
    from rich.table import Table

    found = Table(title=f"findings: {safe(path)}", title_justify="left")
    for col in ("severity", "code", "line", "count", "message"):
        found.add_column(col, justify="right" if col in ("count", "line") else "left", overflow="fold",
                         no_wrap=col in ("severity", "code", "line", "count"))
    for severity, code, where, count, message, line in rows:
        found.add_row(severity, safe(code), safe(where), count,
                      safe(message) + (f"\nline: {safe(line)}" if line is not None else ""))
    console.print(found)  # type: ignore[attr-defined]
