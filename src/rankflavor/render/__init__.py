"""Renderers: formatting only. Each takes a Results and returns text."""

from __future__ import annotations

from ..results import Results

FORMATS = ("table", "json", "csv", "trec")


def render(results: Results, fmt: str, per_query: bool = False) -> str:
    if fmt == "trec":
        from .trec import render_trec

        return render_trec(results, per_query)
    if fmt == "json":
        from .jsonfmt import render_json

        return render_json(results, per_query)
    if fmt == "csv":
        from .csvfmt import render_csv

        return render_csv(results, per_query)
    from .text import render_table

    return render_table(results, per_query)
