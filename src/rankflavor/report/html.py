"""One self-contained HTML file: Jinja2 template (autoescaping on), styles and scripts inline,
Plotly's JS from the installed ``plotly`` package, data in ``<script type="application/json">``.

Nothing untrusted is ever concatenated into script: every value reaches the page either through
an autoescaped template expression or inside the JSON data block, where ``<``, ``>`` and ``&`` are
written as ``\\u003c``, ``\\u003e`` and ``\\u0026`` so no text can close the block. The page's own
script writes data into the DOM with ``textContent`` only.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence
from functools import lru_cache
from importlib import resources
from typing import Any

import jinja2
from markupsafe import Markup

from rankflavor._version import __version__
from rankflavor.base.finite import dumps
from rankflavor.report.charts import pair_figure, spread_figure, spread_view
from rankflavor.report.inputs import Document
from rankflavor.report.model import Model, build

_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def script_json(value: Any) -> Markup:
    """JSON for a ``<script type="application/json">`` block: no character of it can end the block."""
    text = dumps(value, indent=None, separators=(",", ":"), ensure_ascii=False)  # non-finite numbers: null
    for ch, esc in _JSON_ESCAPES.items():
        text = text.replace(ch, esc)
    return Markup(text)


@lru_cache(maxsize=1)
def plotly_js() -> str:
    """Plotly's bundle as the installed ``plotly`` package ships it, safe inside ``<script>``."""
    from plotly.offline import get_plotlyjs

    return get_plotlyjs().replace("</script", "<\\/script").replace("</SCRIPT", "<\\/SCRIPT")


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath("templates", name).read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FunctionLoader(_asset), autoescape=True, undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True)
    env.filters["num"] = _num
    env.filters["pval"] = _pval
    env.filters["hash"] = _hash
    return env


def _hash(x: Any) -> Markup | None:
    """A SHA-256 (or any long token) in groups of 16 characters that break only between groups,
    so a narrow column wraps it into a few whole groups, never one character a line."""
    if not x:
        return None
    text = str(x)
    groups = [text[i:i + 16] for i in range(0, len(text), 16)]
    return Markup("<wbr>").join(Markup('<span class="hg">{}</span>').format(g) for g in groups)


def _num(x: Any, digits: int = 4) -> str:
    if x is None:
        return "–"
    if isinstance(x, bool):
        return str(x).lower()
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)


def _pval(x: Any) -> str:
    """A p-value: four decimals, or two significant digits below 0.0001 (never a bare 0.0000)."""
    if isinstance(x, float) and 0 < x < 1e-4:
        return f"{x:.1e}"
    return _num(x)


def render_report(docs: Sequence[Document], command: str | None = None, config: Any = None,
                  title: str | None = None) -> str:
    """The report's HTML for ``docs``, in the order given.

    Parameters
    ----------
    docs : the documents (:func:`~rankflavor.report.load_document`, ``document_from_*``).
    command : the command line that made the report, shown in the footer (None: not shown).
    config : the settings that made the results, when known (shown in the footer).
    title : the page title (default: "rankflavor report").
    """
    model: Model = build(docs)
    spreads = []
    for data in model.spreads:
        view = spread_view(data)
        spreads.append({"data": data, "view": view, "figure": spread_figure(view, f"spread of {str(data.get('measure')).split('[')[0]}"),
                        "pairs_figure": pair_figure(data, view)})
    payload = {
        "per_query": model.per_query,
        "spread_figures": [s["figure"] for s in spreads],
        "pair_figures": [s["pairs_figure"] for s in spreads],
    }
    made = {"version": __version__, "command": command, "config": config,
            "at": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")}
    return _environment().get_template("report.html.j2").render(
        title=title or "rankflavor report", model=model, spreads=spreads, made=made, payload=script_json(payload),
        css=Markup(_asset("report.css")), script=Markup(_asset("report.js")), plotly_js=Markup(plotly_js()),
    )


__all__ = ["plotly_js", "render_report", "script_json"]
