"""Render a :class:`rankflavor.explanation.Explanation`: per-position terminal tables or JSON."""

from __future__ import annotations

import io
import math

from ..explanation import Explanation
from ..finite import dumps
from .console import make_console, print_flavor

EXPLAIN_FORMATS = ("table", "json")


def render_explanation(e: Explanation, fmt: str = "table", show_ignored: int = 5, width: int | None = None) -> str:
    """``json`` (:meth:`Explanation.to_dict`) or ``table``; the table lists up to ``show_ignored``
    docs per reason, in ``width`` columns (default: the terminal's)."""
    if fmt == "json":
        return dumps(e.to_dict()) + "\n"
    return _table(e, show_ignored, width)


def _n(x: float | None) -> str:
    if x is None or math.isnan(x):
        return "-"
    return f"{x:.4f}"


def _grade(grade: float | None, judged: bool) -> str:
    if grade is None:
        return "unjudged"
    text = f"{grade:g}"
    return text if judged else f"{text} (as unjudged)"


def _table(e: Explanation, show_ignored: int, width: int | None) -> str:
    from rich.markup import escape
    from rich.table import Table

    buf = io.StringIO()
    console = make_console(buf, width)
    console.print(f"query {escape(e.query)}")
    print_flavor(console, e.flavor)
    t = Table(title="ranked documents (contribution = gain / discount)")
    for col in ("rank", "doc", "score", "grade", "gain", "discount", "contribution", "DCG", "tie"):
        left = col in ("doc", "grade", "tie")
        t.add_column(col, justify="left" if left else "right", no_wrap=not left, overflow="fold")
    averaged = any(r.gain != r.raw_gain for r in e.rows)
    for r in e.rows:
        if not r.in_cut:
            continue
        gain = f"{r.gain:.4g}" + (f" (own {r.raw_gain:g})" if averaged and r.tie_group else "")
        t.add_row(str(r.rank), escape(r.doc), f"{r.score:g}", _grade(r.grade, r.judged), gain, f"{r.discount:.4f}",
                  f"{r.contribution:.4f}", f"{r.cumulative:.4f}", r.tie_group or "")
    console.print(t)
    if e.measure.spec.uses_ideal:
        title = f"ideal list ({e.measure.flavor.ideal}, " + (
            f"cut at {e.ideal_cut})" if e.ideal_cut is not None else "not cut)")
        it = Table(title=title)
        for col in ("slot", "doc", "grade", "gain", "discount", "contribution", "IDCG", "retrieved at"):
            it.add_column(col, justify="left" if col == "doc" else "right", no_wrap=col != "doc", overflow="fold")
        for s in e.ideal:
            it.add_row(str(s.rank), escape(s.doc or "-"), "-" if s.grade is None else f"{s.grade:g}", f"{s.gain:.4g}",
                       f"{s.discount:.4f}", f"{s.contribution:.4f}", f"{s.cumulative:.4f}",
                       "-" if s.retrieved_rank is None else str(s.retrieved_rank))
        console.print(it)
        console.print(f"DCG {_n(e.dcg)}   IDCG {_n(e.idcg)}   NDCG {_n(e.ndcg)}   (status {e.status})")
    else:
        console.print(f"DCG {_n(e.dcg)}   value {_n(e.value)}   (status {e.status})")
    if e.ignored:
        by_kind: dict[str, list[str]] = {}
        reason: dict[str, str] = {}
        for i in e.ignored:
            by_kind.setdefault(i.kind, []).append(i.doc)
            reason.setdefault(i.kind, i.reason)
        console.print(f"{len(e.ignored)} retrieved document(s) not in DCG:")
        for kind, docs in by_kind.items():
            why = "below the cutoff k" if kind == "cutoff" else reason[kind]
            more = f", ... (+{len(docs) - show_ignored})" if len(docs) > show_ignored else ""
            console.print(f"  {len(docs)} {escape(why)}: {escape(', '.join(docs[:show_ignored]))}{more}")
    for note in e.notes:
        console.print(f"note: {escape(note)}")
    return buf.getvalue()
