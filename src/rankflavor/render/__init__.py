"""Renderers: formatting only. Each takes a Results and returns text."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (rendering the flavor table needs no NumPy: ``rankflavor flavors`` imports this package)
    from rankflavor.engine.results import Results

#: ``--format`` names of ``eval``: terminal table, JSON, CSV, trec_eval's layout, Markdown, LaTeX.
FORMATS = ("table", "json", "csv", "trec", "md", "latex")


def render(results: Results, fmt: str, per_query: bool = False, width: int | None = None) -> str:
    """``results`` in format ``fmt``; ``width`` (columns) is read by the terminal table only."""
    if fmt == "trec":
        from rankflavor.render.trec import render_trec

        return render_trec(results, per_query)
    if fmt == "json":
        from rankflavor.render.jsonfmt import render_json

        return render_json(results, per_query)
    if fmt == "csv":
        from rankflavor.render.csvfmt import render_csv

        return render_csv(results, per_query)
    if fmt == "md":
        from rankflavor.render.md import results_md

        return results_md(results, per_query)
    if fmt == "latex":
        from rankflavor.render.latex import results_latex

        return results_latex(results, per_query)
    from rankflavor.render.text import render_table

    return render_table(results, per_query, width)
