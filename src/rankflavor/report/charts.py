"""The flavor-spread charts, built with Plotly's Python API from a ``spread`` document.

Presets that reproduce a tool's known defect (``Preset.defect``, e.g. ``spark_triples``) are
marked and, when the spread leaves them out of its summaries (its JSON's ``in_summary``: the
decision every format of ``rankflavor spread`` renders), kept out of the highlighted order flips,
the pairs and the charts' y range.

Plotly renders a small set of HTML-like tags inside its text (``<b>``, ``<br>``, ``<a>``) and
decodes entities. Every name a chart shows (run names, flavor strings) therefore passes
through :func:`plotly_text`, so ``<script>`` in a run name is drawn as those characters.
"""

from __future__ import annotations

import html
import json
import math
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio

#: Runs' colours, Plotly's qualitative default palette (D3 category 10).
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf")
FLIP_FILL = "rgba(214, 39, 40, 0.12)"


def plotly_text(s: Any) -> str:
    """Text for a Plotly label: ``<``, ``>`` and ``&`` as entities, which Plotly draws literally."""
    return html.escape(str(s), quote=False)


def headline_of(data: dict[str, Any]) -> tuple[dict[int, tuple[str, ...]], list[dict[str, Any]], list[str]]:
    """The flavors left out of the summaries (index -> preset names), the pairs and the note saying
    what the summaries leave out, as the spread's JSON states them (``in_summary``, ``pairs``,
    ``notes``: the one result every ``rankflavor spread`` format renders). A document written
    before the JSON said so is rebuilt into a :class:`~rankflavor.analysis.spread.result.Spread` that decides
    by the same rule; one whose flavor strings do not parse keeps its own pairs and marks none."""
    flavors = data.get("flavors", [])
    if flavors and all(isinstance(f, dict) and "in_summary" in f for f in flavors):
        out = {j: tuple(o.split(":", 1)[1] for o in (f.get("origins") or []) if str(o).startswith("preset:"))
               for j, f in enumerate(flavors) if not f["in_summary"]}
        return out, list(data.get("pairs", [])), []
    return _rebuilt(data)


def _rebuilt(data: dict[str, Any]) -> tuple[dict[int, tuple[str, ...]], list[dict[str, Any]], list[str]]:
    import numpy as np

    from rankflavor.analysis.spread.api import defect_reason
    from rankflavor.analysis.spread.result import Spread, SpreadFlavor
    from rankflavor.errors import RankflavorError
    from rankflavor.metrics.measure import parse_measure

    runs = [str(r) for r in data.get("runs", [])]
    try:
        flavors = tuple(SpreadFlavor(parse_measure(str(f["flavor"])), tuple(f.get("origins") or ()), f.get("knobs"),
                                     defect_reason(f.get("origins") or ()))
                        for f in data.get("flavors", []))
        base = parse_measure(str(data["measure"]))
    except (RankflavorError, KeyError, TypeError, ValueError):
        return {}, list(data.get("pairs", [])), []
    fl = data.get("flavors", [])
    means = np.array([[np.nan if (v := f.get("mean", {}).get(r)) is None else float(v) for f in fl] for r in runs],
                     dtype=np.float64).reshape(len(runs), len(fl))
    counts = np.array([[int(f.get("n_queries", {}).get(r) or 0) for f in fl] for r in runs],
                      dtype=np.int64).reshape(len(runs), len(fl))
    grid = {str(k): tuple(map(str, v)) for k, v in (data.get("grid") or {}).items()}
    full = Spread(base, tuple(runs), grid, flavors, means, counts)
    if not full.excluded:
        return {}, list(data.get("pairs", [])), []
    pairs = full.to_dict()["pairs"]
    return {j: f.presets for j, f in enumerate(flavors) if f.defect is not None}, pairs, [str(full.summary_note)]


def _label(f: dict[str, Any], base_cell: dict[str, str] | None) -> str:
    """A short name for a flavor: ``base``, its presets, or the grid knobs that differ from the base."""
    origins = f.get("origins") or []
    if "base" in origins:
        return "base"
    presets = [o.split(":", 1)[1] for o in origins if str(o).startswith("preset:")]
    if presets:
        return "preset " + "/".join(presets)
    cell = f.get("knobs") or {}
    diff = [f"{k}={v}" for k, v in cell.items() if not base_cell or base_cell.get(k) != v]
    return "grid " + (", ".join(diff) if diff else "cell")


#: Longest flavor name an axis tick shows; the hover and the flavor table give the whole string.
TICK_CHARS = 34


def tick_label(row: dict[str, Any]) -> str:
    """A flavor's name on the x axis: ``base``, its presets, or the knobs that differ from the base
    (``gain=exp2, ideal=local``), cut to :data:`TICK_CHARS` with an ellipsis."""
    label = str(row["label"])
    for prefix in ("grid ", "preset "):
        if label.startswith(prefix):
            label = label[len(prefix):]
    return label if len(label) <= TICK_CHARS else label[: TICK_CHARS - 1] + "…"


def flavor_axis(rows: list[dict[str, Any]], title: str) -> dict[str, Any]:
    """An x axis whose ticks name every flavor (base, presets, the knobs that differ), turned
    upright when there are many, with room below for the longest."""
    many = len(rows) > 12
    return {"title": {"text": title, "standoff": 8}, "tickmode": "array", "tickvals": [r["i"] for r in rows],
            "ticktext": [plotly_text(tick_label(r)) for r in rows], "tickangle": -90 if many else -35,
            "tickfont": {"size": 9 if many else 11}, "automargin": True, "range": [0.5, len(rows) + 0.5]}


def _order(means: dict[str, Any], runs: list[str]) -> tuple[str, ...] | None:
    vals = [means.get(r) for r in runs]
    if any(v is None or (isinstance(v, float) and math.isnan(v)) for v in vals):
        return None
    # Means equal to 12 decimals keep the given order, as Spread.orders does: float noise is no flip.
    ranked = sorted(range(len(runs)), key=lambda i: (-round(float(vals[i]), 12), i))  # type: ignore[arg-type]
    return tuple(runs[i] for i in ranked)


def spread_view(data: dict[str, Any]) -> dict[str, Any]:
    """The rows of the flavor table (sorted by mean over runs) and which flavors reorder the runs.

    Returns ``{"runs", "rows": [{"i", "label", "flavor", "origins", "means", "mean", "reorders",
    "defect"}], "base_order", "pairs", "notes"}``; ``reorders`` is True where the runs' order differs
    from the base flavor's, and never for a flavor only defect presets produced (``defect``: their
    names); ``pairs`` and ``notes`` are the headline's (:func:`headline_of`).
    """
    defects, pairs, notes = headline_of(data)
    runs = [str(r) for r in data.get("runs", [])]
    flavors = data.get("flavors", [])
    base = next((f for f in flavors if "base" in (f.get("origins") or [])), flavors[0] if flavors else None)
    base_cell = base.get("knobs") if base else None
    base_order = _order(base.get("mean", {}), runs) if base else None
    rows = []
    for j, f in enumerate(flavors):
        means = f.get("mean", {})
        vals = [means.get(r) for r in runs]
        ok = [float(v) for v in vals if v is not None]
        order = _order(means, runs)
        rows.append({
            "label": _label(f, base_cell) + (" (defect)" if j in defects else ""), "flavor": str(f.get("flavor")), "origins": list(f.get("origins") or []),
            "means": vals, "mean": sum(ok) / len(ok) if ok else None,
            "reorders": j not in defects and bool(order and base_order and order != base_order),
            "defect": list(defects.get(j, ())),
        })
    rows.sort(key=lambda r: (r["mean"] is None, r["mean"] if r["mean"] is not None else 0.0))
    for i, r in enumerate(rows, 1):
        r["i"] = i
    by_flavor = {r["flavor"]: r for r in rows}
    named = []
    for p in pairs:
        p = dict(p)
        if p.get("flips"):  # name the flavor that turns the base's order round, as the terminal does
            against = p.get("min_flavor") if (p.get("base_diff") or 0.0) >= 0 else p.get("max_flavor")
            row = by_flavor.get(str(against))
            ahead = "B" if (p.get("base_diff") or 0.0) >= 0 else "A"
            p["flip_text"] = f"yes: {ahead} ahead under #{row['i']} {tick_label(row)}" if row else "yes"
        named.append(p)
    return {"runs": runs, "rows": rows, "base_order": list(base_order or ()), "pairs": named, "notes": notes}


def spread_figure(view: dict[str, Any], title: str) -> dict[str, Any]:
    """Each run's mean across the flavors (x sorted by the mean over runs); flavors under which the
    runs' order differs from the base flavor's are shaded."""
    rows = view["rows"]
    x = [r["i"] for r in rows]
    hover = [f"#{r['i']} {plotly_text(r['label'])}<br>{plotly_text(r['flavor'])}" for r in rows]
    fig = go.Figure()
    for j, run in enumerate(view["runs"]):
        fig.add_trace(go.Scatter(
            x=x, y=[r["means"][j] for r in rows], mode="lines+markers", name=plotly_text(run),
            line={"color": PALETTE[j % len(PALETTE)], "width": 1.5}, marker={"size": 5},
            customdata=hover, hovertemplate="%{customdata}<br>mean %{y:.4f}<extra>" + plotly_text(run) + "</extra>",
        ))
    shapes = [{"type": "rect", "xref": "x", "yref": "paper", "x0": r["i"] - 0.5, "x1": r["i"] + 0.5, "y0": 0, "y1": 1,
               "fillcolor": FLIP_FILL, "line": {"width": 0}, "layer": "below"} for r in rows if r["reorders"]]
    n_flip = len(shapes)
    y_range, off = _fence(rows)
    if off:
        shown = "; ".join(f"#{r['i']} {r['label']} ({_span(r['means'])})" for r in off[:4])
        more = f" and {len(off) - 4} more" if len(off) > 4 else ""
        fig.add_annotation(text=plotly_text(f"known defect, off the scale (see the flavor table): {shown}{more}"), xref="paper",
                           yref="paper", x=1, y=1.02, xanchor="right", yanchor="bottom", showarrow=False,
                           font={"size": 11, "color": "#d62728"})
    fig.update_layout(
        title={"text": plotly_text(title), "font": {"size": 14}}, shapes=shapes, height=380 + _tick_room(rows),
        margin={"l": 55, "r": 20, "t": 45, "b": 45}, hovermode="closest", template="plotly_white",
        xaxis=flavor_axis(rows, f"flavor, sorted by mean over runs (shaded: the runs' order differs from the base "
                                f"flavor's, {n_flip} of {len(rows)})"),
        yaxis={"title": {"text": "mean"}, **({"range": y_range} if y_range else {})},
        legend={"title": {"text": "run"}},  # at the right: below the plot are the flavors' names
    )
    return _plain(fig)


def _tick_room(rows: list[dict[str, Any]]) -> int:
    """Pixels the upright tick labels take below the plot, so the plot keeps its height."""
    longest = max((len(tick_label(r)) for r in rows), default=0)
    return int(longest * (5.5 if len(rows) > 12 else 4.5))


def _span(vals: list[Any]) -> str:
    ok = [float(v) for v in vals if v is not None]
    return f"{min(ok):.4g}–{max(ok):.4g}" if ok else "no value"


def _fence(rows: list[dict[str, Any]], values: list[list[Any]] | None = None
           ) -> tuple[list[float] | None, list[dict[str, Any]]]:
    """The y range of the flavors that are not a known defect's (so a defect preset's NDCG of 4.97
    does not flatten every other flavor), and the defect rows it leaves off the scale.

    With no defect row the range is Plotly's own (None). ``values`` defaults to each row's means."""
    vals = values if values is not None else [r["means"] for r in rows]
    off = [r for r in rows if r.get("defect")]
    shown = [float(x) for r, v in zip(rows, vals, strict=True) if not r.get("defect") for x in v if x is not None]
    if not off or not shown:
        return None, []
    pad = 0.05 * ((max(shown) - min(shown)) or 1.0)
    return [min(shown) - pad, max(shown) + pad], off


def _mean(vals: list[Any]) -> float | None:
    ok = [float(v) for v in vals if v is not None]
    return sum(ok) / len(ok) if ok else None


def pair_figure(data: dict[str, Any], view: dict[str, Any]) -> dict[str, Any] | None:
    """For every pair whose order flips: A minus B per flavor (bars), red where B wins; None when no pair flips."""
    pairs = [p for p in view["pairs"] if p.get("flips")]
    if not pairs:
        return None
    runs = view["runs"]
    rows = view["rows"]
    fig = go.Figure()
    diffs = []
    for j, p in enumerate(pairs[:6]):
        a, b = runs.index(str(p["run_a"])), runs.index(str(p["run_b"]))
        d = [None if r["means"][a] is None or r["means"][b] is None else r["means"][a] - r["means"][b] for r in rows]
        diffs.append(d)
        name = f"{plotly_text(p['run_a'])} − {plotly_text(p['run_b'])}"
        fig.add_trace(go.Bar(
            x=[r["i"] for r in rows], y=d, name=name, marker={"color": PALETTE[j % len(PALETTE)]},
            customdata=[f"#{r['i']} {plotly_text(r['label'])}" for r in rows],
            hovertemplate="%{customdata}<br>%{y:+.4f}<extra>" + name + "</extra>",
        ))
    y_range, _ = _fence(rows, [list(col) for col in zip(*diffs, strict=True)])
    more = f" (the first 6 of {len(pairs)})" if len(pairs) > 6 else ""
    fig.update_layout(
        title={"text": f"pairs whose order flips{more}: A − B per flavor (below zero: B wins)", "font": {"size": 14}},
        barmode="group", height=340 + _tick_room(rows), margin={"l": 55, "r": 20, "t": 45, "b": 40}, template="plotly_white",
        xaxis=flavor_axis(rows, "flavor (as above)"),
        yaxis={"title": {"text": "difference of means"}, "zeroline": True, "zerolinewidth": 2,
               **({"range": y_range} if y_range else {})},
        legend={"title": {"text": "A − B"}},
    )
    return _plain(fig)


def comparison_figure(data: dict[str, Any]) -> dict[str, Any]:
    """Each system's mean and bootstrap confidence interval under each measure of a ``compare``
    document (:meth:`rankflavor.analysis.compare.Comparison.to_dict`), read by the significance table's
    own reader (:func:`rankflavor.report.sections.comparison_systems`); hover names the flavor."""
    from rankflavor.report.sections import comparison_systems

    rows = comparison_systems(data)
    systems = list(dict.fromkeys(r[0] for r in rows))
    measures = list(dict.fromkeys(r[2] for r in rows))
    fig = go.Figure()
    for j, name in enumerate(systems):
        mine = [r for r in rows if r[0] == name]
        ci = [r[4] for r in mine]
        fig.add_trace(go.Scatter(
            x=[plotly_text(r[2]) for r in mine], y=[r[3] for r in mine], mode="markers", name=plotly_text(name),
            marker={"color": PALETTE[j % len(PALETTE)], "size": 9},
            error_y={"type": "data", "symmetric": False,
                     "array": [None if c is None or r[3] is None else c[1] - r[3] for c, r in zip(ci, mine, strict=True)],
                     "arrayminus": [None if c is None or r[3] is None else r[3] - c[0]
                                    for c, r in zip(ci, mine, strict=True)]},
            customdata=[plotly_text(r[1]) for r in mine],
            hovertemplate="mean %{y:.4f}<br>%{customdata}<extra>" + plotly_text(name) + "</extra>",
        ))
    fig.update_layout(
        title={"text": "mean per system and measure (bars: bootstrap confidence interval)", "font": {"size": 14}},
        height=360, margin={"l": 55, "r": 20, "t": 45, "b": 45}, template="plotly_white", scattermode="group",
        xaxis={"title": {"text": "measure"}, "categoryorder": "array", "categoryarray": [plotly_text(m) for m in measures]},
        yaxis={"title": {"text": "mean"}}, legend={"title": {"text": "system"}},
    )
    return _plain(fig)


def _plain(fig: go.Figure) -> dict[str, Any]:
    """The figure as plain JSON values (Plotly's own encoder: arrays become typed-array records)."""
    return json.loads(pio.to_json(fig, validate=False))


__all__ = ["comparison_figure", "flavor_axis", "headline_of", "pair_figure", "plotly_text", "spread_figure", "spread_view", "tick_label"]
