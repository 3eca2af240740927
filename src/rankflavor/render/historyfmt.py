"""Render a metric's history (:func:`rankflavor.history.load_series`): a table and a plain-text
chart at the terminal's width, JSON, or CSV.

Every line of the chart is one canonical flavor string on one dataset; the notes say why a
measure's points were split (:func:`rankflavor.history.split_reasons`).
"""

from __future__ import annotations

import csv
import io
import math
import string

from rankflavor.base.finite import dumps
from rankflavor.base.finite import text as number_text
from rankflavor.history.series import Series, split_reasons
from rankflavor.render.chart import MARKERS, line_chart
from rankflavor.render.console import comma_pieces, make_console, pack

HISTORY_FORMATS = ("table", "json", "csv")
#: The widest the chart is drawn (``--wide`` lays the text out wider than any chart needs).
CHART_MAX = 200


def render_history(series: list[Series], fmt: str = "table", width: int | None = None, source: str | None = None) -> str:
    """``table`` (a table of the points, the lines' legend, the notes, the chart), ``json``
    (``{"history", "series": [...], "notes"}``) or ``csv`` (one row per point, full precision)."""
    notes = split_reasons(series)
    if fmt == "json":
        return dumps({"history": source, "series": [
            {"line": _letter(i), "name": s.name, "dataset": s.dataset, "flavor": s.flavor,
             "points": [p.to_dict() for p in s.points]} for i, s in enumerate(series)], "notes": notes}) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["record", "recorded_at", "dataset", "run", "line", "name", "flavor", "value", "n_queries",
                    "qrels_sha256", "run_sha256"])
        for i, s in enumerate(series):
            for p in s.points:
                w.writerow([p.record_id, p.recorded_at, p.dataset or "", p.run or "", _letter(i), p.name, p.flavor,
                            repr(p.value), p.n_queries,
                            p.hashes.get("qrels") or "", p.hashes.get("run") or ""])
        return buf.getvalue()
    return _table(series, notes, width, source)


def safe(text: str) -> str:
    """Untrusted text (ids, run and dataset names) made safe for a terminal: control characters
    (an escape sequence would reach the terminal) printed as ``\\xNN`` escapes.

    >>> safe("ev\\x1b[31mil")
    'ev\\\\x1b[31mil'
    """
    return "".join(ch if ch.isprintable() or ch == " " else ascii(ch)[1:-1] for ch in text)


def _letter(i: int) -> str:
    letters = string.ascii_uppercase
    return letters[i] if i < len(letters) else f"L{i + 1}"


def _marker(i: int) -> str:
    return MARKERS[i % len(MARKERS)]


#: The table's columns, and the order a narrow terminal drops them in.
_COLUMNS = (("record", "right"), ("recorded (UTC)", "left"), ("dataset", "left"), ("run", "left"),
            ("line", "center"), ("measure", "left"), ("value", "right"), ("change", "right"), ("queries", "right"))
_DROP_FIRST = ("recorded (UTC)", "measure", "queries", "change", "dataset")


def _table(series: list[Series], notes: list[str], width: int | None, source: str | None) -> str:
    from rich.table import Table

    buf = io.StringIO()
    console = make_console(buf, width)
    rows = sorted(((p, i) for i, s in enumerate(series) for p in s.points), key=lambda t: (t[0].record_id, t[1]))
    previous: dict[int, float] = {}
    cells: dict[str, list[str]] = {name: [] for name, _ in _COLUMNS}
    for p, i in rows:
        before = previous.get(i)
        change = "" if before is None or math.isnan(before) or math.isnan(p.value) else f"{p.value - before:+.4f}"
        previous[i] = p.value
        for name, value in zip(cells, (str(p.record_id), p.recorded_at[:19].replace("T", " "), safe(p.dataset or "-"),
                                       safe(p.run or "-"), f"{_letter(i)} {_marker(i)}", safe(p.display),
                                       number_text(p.value), change, str(p.n_queries)),
                               strict=True):
            cells[name].append(value)
    shown = [name for name, _ in _COLUMNS if name != "dataset" or any(c != "-" for c in cells[name])]
    for name in _DROP_FIRST:  # a narrow terminal: the least needed columns go, no cell is cut
        if sum(max(len(name), *(len(c) for c in cells[name])) + 3 for name in shown) + 1 <= console.width:
            break
        if name in shown:
            shown.remove(name)
    t = Table(title=f"history{' of ' + source if source else ''}")
    for name, justify in _COLUMNS:
        if name in shown:
            t.add_column(name, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    for j in range(len(rows)):
        t.add_row(*(cells[name][j] for name in shown))
    console.print(t, markup=False, highlight=False)
    out = [buf.getvalue()]
    room = max(console.width - 6, 20)
    out.extend(line + "\n" for line in _wrap("lines (one per canonical flavor string and dataset):", console.width))
    for i, s in enumerate(series):
        out.append(f"  {_letter(i)} {_marker(i)}  on {safe(s.dataset or '(no dataset)')}: {len(s.points)} point"
                   f"{'' if len(s.points) == 1 else 's'}\n")
        out.extend(f"      {line}\n" for line in pack(comma_pieces(safe(s.flavor)), room))
    for note in notes:
        out.extend(line + "\n" for line in _wrap(safe(note), console.width))
    out.append("\n")
    pts = [(_marker(i), [(p.record_id, p.value) for p in s.points]) for i, s in enumerate(series)]
    if len(series) > len(MARKERS):
        out.append(f"(more lines than markers: markers repeat after {len(MARKERS)} lines)\n")
    out.extend(line + "\n" for line in line_chart(pts, width=min(console.width, CHART_MAX), x_label="#"))
    out.extend(line + "\n" for line in _wrap("x: record (oldest left); a line never joins points of two flavors or "
                                             "datasets", console.width))
    return "".join(out)


def _wrap(text: str, width: int) -> list[str]:
    import textwrap

    return textwrap.wrap(text, width=max(width, 20), break_long_words=False, break_on_hyphens=False) or [""]


__all__ = ["HISTORY_FORMATS", "render_history"]
