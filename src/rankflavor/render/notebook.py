"""The notebook views of the result objects, registered with :mod:`rankflavor.base.display`.

Each view is a renderer the commands already use: the tables of ``--format md``
(:mod:`rankflavor.render.blocks`, drawn as HTML here and as Markdown by
:func:`rankflavor.render.md.blocks_md`) for eval results and spreads; for the other results the
terminal's own text (``width`` :data:`WIDTH`) in a ``<pre>`` block (HTML) or a code fence
(Markdown), and compare's ``--format md`` table. Nothing here computes.

Every id and name is untrusted: the HTML escapes every character of it (``html.escape``), the
Markdown goes through :func:`rankflavor.render.md.md_text` or a fence no line of the text can
close. Tables keep their first :data:`MAX_ROWS` rows and text its first :data:`MAX_LINES`
lines; what is left out is counted below them (``to_pandas(per_query=True)`` has every row).

``Spread.plot()`` and ``Comparison.plot()`` draw with the HTML report's code
(:mod:`rankflavor.report.charts`) from the same JSON document the report reads.

Only :mod:`rankflavor.base.display` is imported here at module level, so ``import rankflavor`` (which
imports this module) stays cheap; the renderers load when a notebook first asks for a view.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from rankflavor.base.display import register

if TYPE_CHECKING:
    import plotly.graph_objects as go

    from rankflavor.render.blocks import Block

#: Rows a table keeps in a notebook; the rest are counted.
MAX_ROWS = 20
#: Lines of terminal text a notebook keeps; the rest are counted.
MAX_LINES = 80
#: The width the terminal's text is laid out at.
WIDTH = 110
_STYLE = "font-family: monospace; font-size: 12px; line-height: 1.35"


def _esc(text: Any) -> str:
    import html  # (on a notebook's first view: its entity table costs every command a few ms)

    return html.escape(str(text), quote=True)


def capped(blocks: list[Block], limit: int = MAX_ROWS) -> list[Block]:
    """``blocks`` with every table cut to its first ``limit`` rows and a line counting the others."""
    from dataclasses import replace

    from rankflavor.render.blocks import Block

    out: list[Block] = []
    for b in blocks:
        if b.headers and len(b.rows) > limit:
            hidden = len(b.rows) - limit
            out.append(replace(b, rows=b.rows[:limit]))
            out.append(Block(lines=(f"... {hidden} more row{'s' if hidden != 1 else ''} of {len(b.rows)} not shown "
                                    "(to_pandas(per_query=True) has them all)",)))
        else:
            out.append(b)
    return out


def blocks_html(blocks: list[Block]) -> str:
    """The blocks as HTML tables and paragraphs; every cell escaped, flavor strings in ``<code>``."""
    from rankflavor.render.blocks import Code

    def cell(c: Any) -> str:
        return f"<code>{_esc(c.text)}</code>" if isinstance(c, Code) else _esc(c)

    parts = []
    for b in blocks:
        if not b.headers:
            parts.append("<p>" + "<br>".join(cell(line) for line in b.lines) + "</p>")
            continue
        title = f"<caption style='text-align: left'><b>{_esc(b.title)}</b></caption>" if b.title else ""
        align = [" style='text-align: right'" if r else " style='text-align: left'" for r in b.right]
        head = "".join(f"<th{a}>{cell(h)}</th>" for h, a in zip(b.headers, align, strict=True))
        body = "".join("<tr>" + "".join(f"<td{a}>{cell(c)}</td>" for c, a in zip(row, align, strict=True)) + "</tr>"
                       for row in b.rows)
        parts.append(f"<table>{title}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
    return "<div class='rankflavor'>" + "\n".join(parts) + "</div>"


def _lines_capped(text: str, limit: int = MAX_LINES) -> tuple[str, str | None]:
    lines = text.rstrip("\n").split("\n")
    if len(lines) <= limit:
        return "\n".join(lines), None
    hidden = len(lines) - limit
    return "\n".join(lines[:limit]), f"... {hidden} more line{'s' if hidden != 1 else ''} of {len(lines)} not shown"


def text_html(text: str) -> str:
    """Terminal text as an escaped ``<pre>`` block, cut to :data:`MAX_LINES` lines."""
    shown, more = _lines_capped(text)
    tail = f"<p>{_esc(more)}</p>" if more else ""
    return f"<div class='rankflavor'><pre style='{_STYLE}'>{_esc(shown)}</pre>{tail}</div>"


def text_markdown(text: str) -> str:
    """Terminal text as a Markdown code fence longer than any run of backticks in it."""
    shown, more = _lines_capped(text)
    longest = max((len(m) for m in re.findall(r"`+", shown)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{shown}\n{fence}\n" + (f"\n{more}\n" if more else "")


# -- the views ----------------------------------------------------------------------------------


def _results_blocks(results: Any) -> list[Block]:
    from rankflavor.render.blocks import results_blocks

    return capped(results_blocks(results, per_query=True))


def _spread_blocks(spread: Any) -> list[Block]:
    from rankflavor.render.blocks import spread_blocks

    return capped(spread_blocks(spread))


def _md(blocks: list[Block]) -> str:
    from rankflavor.render.md import blocks_md

    return blocks_md(blocks)


def _compare_text(c: Any) -> str:
    from rankflavor.render.comparefmt import render_compare

    return render_compare(c, "table", width=WIDTH)


def _compare_md(c: Any) -> str:
    from rankflavor.render.comparetex import render_markdown

    return render_markdown(c)


def _coverage_text(cov: Any) -> str:
    from rankflavor.render.judgmentsfmt import render_judgments

    return render_judgments(cov, "table", per_query=False, width=WIDTH)


def _bounds_blocks(b: Any) -> list[Block]:
    """A run's bounds as the judgments command's table states them: per measure the interval of
    the mean, the zero-imputed value, and what the interval covers."""
    from rankflavor.analysis.judgments.bounds import covers
    from rankflavor.render.blocks import Block, Code

    def num(x: float | None) -> str:
        from rankflavor.base.finite import text

        return text(x, ".4f")

    rows = tuple((b_.measure.display, num(b_.lower_mean), num(b_.value_mean), num(b_.upper_mean),
                  str(len(b_.queries)), covers(b_), Code(str(b_.measure))) for b_ in b.measures)
    return capped([Block(lines=(f"bounds of run {b.run}" + (f" under scale {b.scale.name}" if b.scale else ""),)),
                   Block("", ("measure", "lower", "value", "upper", "queries", "covers", "flavor"), rows,
                         (False, True, True, True, True, False, False))])


def _history_text(s: Any) -> str:
    from rankflavor.render.historyfmt import render_history

    return render_history([s], "table", width=WIDTH)


def _identify_text(r: Any) -> str:
    from rankflavor.render.identifyfmt import render_identification

    return render_identification(r, "table", width=WIDTH)


def _agreement_text(a: Any) -> str:
    from rankflavor.render.ratersfmt import render_agreement

    return render_agreement(a, width=WIDTH)


def spread_plot(s: Any) -> go.Figure:
    """The report's spread chart (:func:`rankflavor.report.charts.spread_figure`) of ``s``."""
    import plotly.graph_objects as go

    from rankflavor.report.charts import spread_figure, spread_view

    return go.Figure(spread_figure(spread_view(s.to_dict()), f"spread of {s.base.display}"))


def comparison_plot(c: Any) -> go.Figure:
    """The report's comparison chart (:func:`rankflavor.report.charts.comparison_figure`) of ``c``."""
    import plotly.graph_objects as go

    from rankflavor.report.charts import comparison_figure

    return go.Figure(comparison_figure(c.to_dict(per_query=False)))


def _blocks_html(make: Callable[[Any], list[Block]], obj: Any) -> str:
    return blocks_html(make(obj))


def _blocks_md(make: Callable[[Any], list[Block]], obj: Any) -> str:
    return _md(make(obj))


def _text_html(text: Callable[[Any], str], obj: Any) -> str:
    return text_html(text(obj))


def _text_md(text: Callable[[Any], str], obj: Any) -> str:
    return text_markdown(text(obj))


def _comparison_md(c: Any) -> str:
    """compare's ``--format md`` table (ranx-style letters), then the terminal's tables with the flavors."""
    return _compare_md(c) + "\n" + text_markdown(_compare_text(c))


def _register() -> None:
    blocks: dict[str, Callable[[Any], list[Block]]] = {
        "rankflavor.engine.results.Results": _results_blocks, "rankflavor.analysis.spread.result.Spread": _spread_blocks,
        "rankflavor.analysis.judgments.result.Bounds": _bounds_blocks}
    for cls, make in blocks.items():
        register(cls, "html", partial(_blocks_html, make))
        register(cls, "markdown", partial(_blocks_md, make))
    texts: dict[str, Callable[[Any], str]] = {
        "rankflavor.analysis.compare.result.Comparison": _compare_text, "rankflavor.analysis.judgments.coverage.Coverage": _coverage_text,
        "rankflavor.history.series.Series": _history_text, "rankflavor.analysis.identify.result.Identification": _identify_text,
        "rankflavor.raters.reliability.Agreement": _agreement_text}
    for cls, text in texts.items():
        register(cls, "html", partial(_text_html, text))
        register(cls, "markdown", partial(_text_md, text))
    register("rankflavor.analysis.compare.result.Comparison", "markdown", _comparison_md)
    register("rankflavor.analysis.spread.result.Spread", "plot", spread_plot)
    register("rankflavor.analysis.compare.result.Comparison", "plot", comparison_plot)


_register()

__all__ = ["MAX_LINES", "MAX_ROWS", "WIDTH", "blocks_html", "capped", "comparison_plot", "spread_plot", "text_html",
           "text_markdown"]
