"""Render a :class:`rankflavor.analysis.diff.api.Diff`: terminal tables, JSON, or CSV ``knob,query,delta``."""

from __future__ import annotations

import csv
import io
import math

from rankflavor.analysis.diff.api import Diff
from rankflavor.base.finite import dumps
from rankflavor.render.console import chunks, make_console, print_flavor

DIFF_FORMATS = ("table", "json", "csv", "md", "latex")


def render_diff(d: Diff, fmt: str = "table", scale: str = "value", top: int = 10, width: int | None = None) -> str:
    """``table``, ``json`` (:meth:`Diff.to_dict`), ``csv`` (``knob,query,delta``; query ``all`` = the
    mean; knob ``total`` = B minus A), ``md`` or ``latex``. ``width``: columns of the terminal
    table (default: the terminal's)."""
    if fmt == "md":
        from rankflavor.render.md import diff_md

        return diff_md(d, scale, top)
    if fmt == "latex":
        from rankflavor.render.latex import diff_latex

        return diff_latex(d, scale, top)
    if fmt == "json":
        return dumps(d.to_dict(scale, top)) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["knob", "query", "delta"])
        for knob, query, delta in d.rows(scale):
            w.writerow([knob, query, repr(delta)])
        return buf.getvalue()
    return _table(d, scale, top, width)


def _f(x: float | None, signed: bool = False) -> str:
    if x is None or math.isnan(x):
        return "-"
    return f"{x:+.4f}" if signed else f"{x:.4f}"


def _table(d: Diff, scale: str, top: int, width: int | None) -> str:
    from rich.markup import escape
    from rich.table import Table

    buf = io.StringIO()
    console = make_console(buf, width)
    console.print(f"A  {escape(d.a.display)}  mean {_f(d.means[0])} over {int(d.n_in_mean[0])} queries")
    print_flavor(console, str(d.a), "   ")
    console.print(f"B  {escape(d.b.display)}  mean {_f(d.means[-1])} over {int(d.n_in_mean[-1])} queries")
    print_flavor(console, str(d.b), "   ")
    console.print(f"B - A = {_f(d.total, True)}")
    if not d.steps:
        console.print("A and B are the same flavor: nothing to attribute")
        return buf.getvalue()
    t = Table(title="path from A to B, one knob at a time")
    for col in ("step", "knob", "change", "mean after", "delta", "share", "queries"):
        t.add_column(col, justify="left" if col in ("knob", "change") else "right", no_wrap=col != "change")
    deltas = d.mean_deltas
    for j, s in enumerate(d.steps):
        change = "; ".join(f"{a} -> {b}" for a, b in s.changes.values())
        share = f"{100 * deltas[j] / d.total:.0f}%" if abs(d.total) > 1e-12 and deltas[j] != 0 else "-"
        t.add_row(str(j + 1), escape(s.name), escape(change), _f(d.means[j + 1]), _f(deltas[j], True), share,
                  str(int(d.n_in_mean[j + 1])))
    t.add_row("", "total", "", "", _f(d.total, True), "", "")
    console.print(t)
    movers = d.movers(top, scale)
    if movers:
        scale_note = "own values" if scale == "value" else "shares of the mean"
        # Step columns paged to the width: query, A, B and total repeat on each page.
        qw = max(len(m.query) for m in movers)
        pages = chunks([max(len(s.name), 7) + 3 for s in d.steps], max(console.width - qw - 36, 10))
        for n, page in enumerate(pages):
            title = f"queries that move most ({scale_note}; absent from a mean = 0)"
            mt = Table(title=title + (f" {n + 1}/{len(pages)}" if len(pages) > 1 else ""))
            mt.add_column("query", overflow="fold")
            for col in ("A", "B", "total", *(d.steps[i].name for i in page)):
                mt.add_column(escape(col), justify="right", no_wrap=True)
            for m in movers:
                steps = [d.steps[i].name for i in page]
                mt.add_row(escape(m.query), _f(m.a), _f(m.b), _f(m.total, True),
                           *[_f(m.by_step[s], True) if m.by_step[s] else "0" for s in steps])
            console.print(mt)
    changes = d.entering_leaving()
    if changes:
        console.print(f"{len(changes)} change(s) in which queries are in the mean:")
        for knob, query, what in changes[:10]:
            console.print(f"  step {escape(knob)}: query {escape(query)} {what} the mean")
        if len(changes) > 10:
            console.print(f"  ... (+{len(changes) - 10}; all in --format json)")
    return buf.getvalue()
