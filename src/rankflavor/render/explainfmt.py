"""Render a :class:`rankflavor.analysis.explain.result.Explanation`: per-position terminal tables or JSON."""

from __future__ import annotations

import io
import math

from rankflavor.analysis.explain.result import Explanation
from rankflavor.base.finite import dumps
from rankflavor.render.console import make_console, print_flavor

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
    from rankflavor.render.fit import Column, NameText, paged_tables, print_wrapped

    buf = io.StringIO()
    console = make_console(buf, width)
    print_wrapped(console, f"query {e.query}")
    print_flavor(console, e.flavor)
    rows = [r for r in e.rows if r.in_cut]
    averaged = any(r.gain != r.raw_gain for r in e.rows)
    cols = [Column("rank", [str(r.rank) for r in rows], "right"), Column("doc", [NameText(r.doc) for r in rows], wrap=True),
            Column("score", [f"{r.score:g}" for r in rows], "right"),
            Column("grade", [_grade(r.grade, r.judged) for r in rows], wrap=True),
            Column("gain", [f"{r.gain:.4g}" + (f" (own {r.raw_gain:g})" if averaged and r.tie_group else "")
                            for r in rows], "right", wrap=averaged),
            Column("discount", [f"{r.discount:.4f}" for r in rows], "right"),
            Column("contribution", [f"{r.contribution:.4f}" for r in rows], "right"),
            Column("DCG", [f"{r.cumulative:.4f}" for r in rows], "right"),
            Column("tie", [NameText(r.tie_group or "") for r in rows], wrap=True)]
    for t in paged_tables(cols, console.width, keep=2, title="ranked documents (contribution = gain / discount)"):
        console.print(t)
    if e.measure.spec.uses_ideal:
        title = f"ideal list ({e.measure.flavor.ideal}, " + (
            f"cut at {e.ideal_cut})" if e.ideal_cut is not None else "not cut)")
        ideal = e.ideal
        cols = [Column("slot", [str(s.rank) for s in ideal], "right"),
                Column("doc", [NameText(s.doc or "-") for s in ideal], wrap=True),
                Column("grade", ["-" if s.grade is None else f"{s.grade:g}" for s in ideal], "right"),
                Column("gain", [f"{s.gain:.4g}" for s in ideal], "right"),
                Column("discount", [f"{s.discount:.4f}" for s in ideal], "right"),
                Column("contribution", [f"{s.contribution:.4f}" for s in ideal], "right"),
                Column("IDCG", [f"{s.cumulative:.4f}" for s in ideal], "right"),
                Column("retrieved at", ["-" if s.retrieved_rank is None else str(s.retrieved_rank) for s in ideal],
                       "right")]
        for t in paged_tables(cols, console.width, keep=2, title=title):
            console.print(t)
        print_wrapped(console, f"DCG {_n(e.dcg)}   IDCG {_n(e.idcg)}   NDCG {_n(e.ndcg)}   (status {e.status})")
    else:
        print_wrapped(console, f"DCG {_n(e.dcg)}   value {_n(e.value)}   (status {e.status})")
    if e.ignored:
        by_kind: dict[str, list[str]] = {}
        reason: dict[str, str] = {}
        for i in e.ignored:
            by_kind.setdefault(i.kind, []).append(i.doc)
            reason.setdefault(i.kind, i.reason)
        print_wrapped(console, f"{len(e.ignored)} retrieved document(s) not in DCG:")
        for kind, docs in by_kind.items():
            why = "below the cutoff k" if kind == "cutoff" else reason[kind]
            more = f", ... (+{len(docs) - show_ignored})" if len(docs) > show_ignored else ""
            print_wrapped(console, f"{len(docs)} {why}: {', '.join(docs[:show_ignored])}{more}", "  ", "    ")
    for note in e.notes:
        print_wrapped(console, f"note: {note}")
    return buf.getvalue()
