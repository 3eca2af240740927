"""Render a :class:`rankflavor.analysis.judgments.Coverage` for the terminal, at its width: the judgments'
facts, a table of each run's coverage and bounds, what the intervals cover, the pool-bias
warning, and with ``per_query`` each run's queries. JSON is the result's own
(:meth:`Coverage.to_dict`).

The run table names runs without the prefix and suffix all their names share when the full
names would not fit; its columns are paged (:func:`~rankflavor.render.fit.paged_tables`) rather
than squeezed, and every sentence is wrapped at spaces (:func:`~rankflavor.render.fit.wrap`).
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from rankflavor.base.finite import dumps
from rankflavor.render.console import FlavorText, make_console, print_flavor
from rankflavor.render.fit import Column, NameText, paged_tables, print_wrapped

if TYPE_CHECKING:
    from rankflavor.analysis.judgments import Coverage

JUDGMENTS_FORMATS = ("table", "json")


def render_judgments(cov: Coverage, fmt: str = "table", per_query: bool = False, width: int | None = None) -> str:
    """``cov`` as ``table`` (terminal text, ``width`` columns; default the terminal's) or ``json``."""
    if fmt == "json":
        return dumps(cov.to_dict()) + "\n"
    return _table(cov, per_query, width)


def _k(k: int | None) -> str:
    return "" if k is None else f"@{k}"


def run_labels(names: list[str], width: int) -> tuple[list[str], str | None]:
    """The run names as a table shows them, and the sentence saying how they were shortened (None
    when shown whole): whole when the longest takes at most a third of the width."""
    from rankflavor.render.spreadview import _common, short_names

    short = short_names(names)
    if max((len(n) for n in names), default=0) <= max(width // 3, 20) or short == list(names):
        return list(names), None
    prefix, suffix = _common(list(names)), _common([n[::-1] for n in names])[::-1]
    return short, f"runs named without what all their names share: {prefix}*{suffix}"


def _table(cov: Coverage, per_query: bool, width: int | None) -> str:
    from rankflavor.analysis.judgments.bounds import covers, interval_text
    from rankflavor.analysis.judgments.coverage import BIAS_RULE

    buf = io.StringIO()
    console = make_console(buf, width)
    w = console.width
    scale = cov.scale.describe() if cov.scale is not None else f"no scale; relevant >= {cov.rel:g}"
    print_wrapped(console, f"judgments {cov.qrels} ({scale})")
    print_wrapped(console, "grades: " + "  ".join(f"{g}: {n}" for g, n in cov.grades.items()), "  ", "    ")
    shown = ", ".join(cov.no_relevant[:8]) + (", ..." if len(cov.no_relevant) > 8 else "")
    print_wrapped(console, f"queries with nothing relevant: {len(cov.no_relevant)}"
                  + (f" ({shown})" if cov.no_relevant else ""), "  ", "    ")
    never = sum(map(len, cov.never_retrieved.values()))
    print_wrapped(console, f"relevant documents no run retrieved: {never} in {len(cov.never_retrieved)} queries",
                  "  ", "    ")
    console.print()
    runs = cov.runs
    measures = runs[0].bounds.measures if runs else []
    k = _k(runs[0].k if runs else None)
    labels, how = run_labels([r.name for r in runs], w)
    columns = [Column("run", [NameText(x) for x in labels], wrap=True), Column("judged" + k, [f"{r.mean_judged:.4f}" for r in runs], "right"),
               Column("unjudged" + k, [str(int(r.unjudged.sum())) for r in runs], "right")]
    for i, b in enumerate(measures):
        name = b.measure.name
        over = cov.undecided.get(str(b.measure), {})
        cells = [interval_text(r.bounds.measures[i]) + (" *" if r.name in over else "") for r in runs]
        columns.append(Column(f"{name} value [lower, upper]", cells))
        columns.append(Column("condensed", [f"{r.bounds.measures[i].condensed_mean:.4f}" for r in runs], "right"))
    for t in paged_tables(columns, w):
        console.print(t)
    if how:
        print_wrapped(console, how)
    for i, b in enumerate(measures):
        console.print()
        console.print(f"{b.measure.name}:", markup=False, highlight=False)
        print_flavor(console, str(b.measure), "  ")
        print_wrapped(console, f"[lower, upper]: least and greatest value over {covers(b)}", "  ", "    ")
        if b.residual is not None:
            resid = ", ".join(f"{r.name} {r.bounds.measures[i].lower_mean + (r.bounds.measures[i].residual_mean or 0.0):.4f}"
                              for r in runs)
            print_wrapped(console, "lower + residual (Moffat & Zobel), which also covers the ranks past each run's "
                          "end: " + resid, "  ", "    ")
        over = cov.undecided.get(str(b.measure), {})
        if over:
            print_wrapped(console, "* undecided by the judgments (its interval overlaps another run's): "
                          + ", ".join(over), "  ", "    ")
    if cov.filled is not None:
        _filled(console, cov.filled)
    if cov.pool_bias:
        console.print()
        print_wrapped(console, f"WARNING pool bias: {', '.join(cov.pool_bias)} hold markedly more unjudged documents "
                      "in the top k than the other runs; their zero-imputed scores are biased low: read the bounds.")
        print_wrapped(console, f"rule: {BIAS_RULE}", "  ", "    ")
    if per_query:
        for r, label in zip(runs, labels, strict=True):
            _per_query(console, r, label, k)
    return buf.getvalue()


def _per_query(console: object, r: object, label: str, k: str) -> None:
    from rankflavor.analysis.judgments.coverage import RunCoverage

    assert isinstance(r, RunCoverage)
    print_ = console.print  # type: ignore[attr-defined]
    b0 = r.bounds.measures[0]
    where = {str(q): j for j, q in enumerate(b0.queries)}
    rows = [(str(q), float(j), ranks, where[str(q)]) for q, j, ranks in
            zip(r.queries, r.judged_at_k, r.unjudged_ranks, strict=True) if str(q) in where]
    columns = [Column("query", [NameText(q) for q, *_ in rows], wrap=True),
               Column("judged" + k, [f"{j:.4f}" for _, j, _, _ in rows], "right"),
               Column("unjudged ranks", [FlavorText(",".join(map(str, ranks)) or "-") for *_, ranks, _ in rows],
                      wrap=True, min_width=14),
               Column(f"{b0.measure.name} value [lower, upper]",
                      [f"{b0.value[at]:.4f} [{b0.lower[at]:.4f}, {b0.upper[at]:.4f}]" for *_, at in rows])]
    print_()
    print_wrapped(console, f"{label}: per query")
    for t in paged_tables(columns, console.width):  # type: ignore[attr-defined]
        print_(t)


__all__ = ["JUDGMENTS_FORMATS", "render_judgments", "run_labels"]


def _filled(console: object, filled: object) -> None:
    """What the other sources' labels bought: each run's unjudged documents and mean intervals on
    the base kind's labels alone, then with every label chosen."""
    from rankflavor.analysis.judgments.filled import Filled

    assert isinstance(filled, Filled)
    console.print()  # type: ignore[attr-defined]
    print_wrapped(console, f"holes filled by {'+'.join(filled.fillers)} labels: the bounds on the {filled.base} "
                  "labels alone -> with them")
    for r in filled.runs:
        over = (f" (over {r.queries_before} -> {r.queries_after} queries: the fill judges queries the "
                f"{filled.base} labels do not)" if r.queries_before != r.queries_after else "")
        print_wrapped(console, f"{r.run}: unjudged{_k(r.k)} {r.holes_before} -> {r.holes_after}{over}", "  ", "    ")
        for m in r.measures:
            (lo0, up0), (lo1, up1) = m.before, m.after
            w0, w1 = m.widths
            name = m.measure.split("[", 1)[0]
            print_wrapped(console, f"{name} [{lo0:.4f}, {up0:.4f}] (width {w0:.4f}) -> [{lo1:.4f}, {up1:.4f}] "
                          f"(width {w1:.4f})", "    ", "      ")
