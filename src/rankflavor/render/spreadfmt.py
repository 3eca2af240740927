"""Render a :class:`rankflavor.spread.Spread`: terminal tables, JSON, or CSV ``run,flavor,mean``."""

from __future__ import annotations

import csv
import io
import math

from ..finite import dumps, text
from ..spread import Spread
from .console import FlavorText, chunks, is_compact, make_console, print_flavor
from .spreadview import defect_flavors, flip_text, knob_delta, origin_text, short_names

__all__ = ["CSV_HEADER", "SPREAD_FORMATS", "defect_flavors", "knob_delta", "origin_text", "render_spread", "short_names"]

SPREAD_FORMATS = ("table", "json", "csv", "md", "latex")
#: The CSV columns: one row per run and flavor; ``in_summary`` 1 when the flavor enters the
#: summaries (min/max, pairs, run orders), else 0 with the reason in ``excluded_because``.
CSV_HEADER = ("run", "flavor", "mean", "in_summary", "excluded_because")


def render_spread(result: Spread, fmt: str = "table", width: int | None = None) -> str:
    """``table`` (terminal), ``json`` (:meth:`Spread.to_dict`), ``csv`` (:data:`CSV_HEADER`, means
    at full precision), ``md`` or ``latex``.

    Every format renders the one result: which flavors enter the summaries is
    :attr:`Spread.in_summary` (the flavors only defect presets produced stay out unless
    :attr:`Spread.include_defects`), and every format lists the excluded ones with the reason.
    CSV holds the means alone (each row marked in or out of the summaries); the others hold the
    summaries too. ``width``: columns of the terminal table (default: the terminal's).
    """
    if fmt == "md":
        from .md import spread_md

        return spread_md(result)
    if fmt == "latex":
        from .latex import spread_latex

        return spread_latex(result)
    if fmt == "json":
        return dumps(result.to_dict()) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(CSV_HEADER)
        for run, flavor, mean, used, why in result.rows():
            w.writerow([run, flavor, repr(mean), int(used), why])
        return buf.getvalue()
    return _table(result, width)


def _f(x: float, signed: bool = False) -> str:
    return text(x, "+.4f" if signed else ".4f")


def _table(s: Spread, width: int | None) -> str:
    from rich.console import Group, RenderableType
    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

    buf = io.StringIO()
    console = make_console(buf, width)
    short = short_names(s.runs)
    name = dict(zip(s.runs, short, strict=True))
    n_grid = sum(1 for f in s.flavors if f.cell is not None)
    n_presets = sum(1 for f in s.flavors if f.presets)
    n_used = int(s.in_summary.sum())
    console.print(f"spread of {escape(s.base.display)} over {len(s.flavors)} flavors ({n_grid} grid cells, "
                  f"{n_presets} preset flavors; {n_used} in the summaries), {len(s.runs)} run(s)")
    console.print("base:")
    print_flavor(console, str(s.base))
    if s.grid:
        console.print("grid: " + escape(" x ".join(f"{k}={'|'.join(v)}" for k, v in s.grid.items())))

    compact = is_compact(console)
    run_widths = [max(len(n), 6) + 3 for n in short]
    room = console.width - 5 - (26 if compact else 50) - (0 if compact else 20)
    pages = chunks(run_widths, room)
    for n_page, page in enumerate(pages):
        title = "mean per flavor (knobs that differ from the base)"
        flav = Table(title=title + (f", runs {n_page + 1}/{len(pages)}" if len(pages) > 1 else ""))
        flav.add_column("#", justify="right", no_wrap=True)
        flav.add_column("flavor" if not compact else "flavor, and where it comes from")
        if not compact:
            flav.add_column("from")
        for r in page:
            flav.add_column(escape(short[r]), justify="right", no_wrap=True)
        for j, f in enumerate(s.flavors):
            flavor = FlavorText(knob_delta(f.measure, s.base))
            cells: list[RenderableType] = (
                [Group(flavor, Text("from " + origin_text(f)))] if compact else [flavor, escape(origin_text(f))])
            flav.add_row(str(j + 1), *cells, *[_f(s.means[r, j]) for r in page])
        console.print(flav)

    per_run = Table(title="spread per run (lowest to highest flavor" + (", as # above)" if compact else ")"))
    for col in ("run", "base", "min", "max", "spread", "flavors", "lowest", "highest"):
        right = col in ("base", "min", "max", "spread", "flavors")
        per_run.add_column(col, justify="right" if right else "left", no_wrap=right or compact)
    number = {f.flavor: j + 1 for j, f in enumerate(s.flavors)}

    def where(flavor: str) -> FlavorText | str:
        if flavor not in number:
            return "-"
        j = number[flavor]
        return f"#{j}" if compact else FlavorText(f"#{j} " + knob_delta(s.flavors[j - 1].measure, s.base))

    for sm in s.summaries:
        per_run.add_row(escape(name[sm.run]), _f(sm.base), _f(sm.low), _f(sm.high), _f(sm.spread), str(sm.n_flavors),
                        where(sm.low_flavor), where(sm.high_flavor))
    console.print(per_run)

    effects = s.knob_effects
    if effects:
        eff = Table(title="knob effects: swing of the mean across the knob's values, other grid knobs fixed")
        eff.add_column("knob")
        eff.add_column("mean swing", justify="right")
        eff.add_column("max swing", justify="right")
        eff.add_column("mean by value (over runs)")
        for e in sorted(effects, key=lambda e: -e.overall if not math.isnan(e.overall) else 0.0):
            by_value = []
            for v, per in e.by_value.items():
                vals = [x for x in per.values() if not math.isnan(x)]
                by_value.append(f"{v} {sum(vals) / len(vals):.4f}" if vals else f"{v} -")
            max_swing = max((x for x in e.max_swing.values() if not math.isnan(x)), default=float("nan"))
            eff.add_row(e.knob, _f(e.overall), _f(max_swing), escape(" | ".join(by_value)))
        console.print(eff)
        console.print(f"moves the score most: {s.most_moving_knob}")

    if len(s.runs) > 1:
        pairs = Table(title="run pairs: A - B across flavors")
        for col in ("A", "B", "base", "min", "max", "A>B", "B>A", "=", "flips"):
            pairs.add_column(col, justify="left" if col in ("A", "B", "flips") else "right",
                             overflow="fold" if col in ("A", "B") else "ellipsis")
        for p in s.pairs:
            pairs.add_row(escape(name[p.run_a]), escape(name[p.run_b]), _f(p.base_diff, True), _f(p.min_diff, True),
                          _f(p.max_diff, True), str(p.a_better), str(p.b_better), str(p.equal),
                          flip_text(s, p))
        console.print(pairs)
        pairs_ = s.pairs
        flips = [p for p in pairs_ if p.flips]
        console.print(f"{len(flips)} of {len(pairs_)} pair(s) change sign across flavors")
        orders = s.orders
        console.print(f"run order (best first): {len(orders)} distinct order(s) over the flavors every run evaluated")
        for o in orders:
            console.print(f"  {len(o.flavors):>3} flavor(s): " + escape(" > ".join(name[r] for r in o.order)))
    if s.errors:
        console.print(f"{len(s.errors)} (run, flavor) evaluation(s) refused by their policy:")
        for (run, flavor_text), msg in list(s.errors.items())[:10]:
            console.print(f"  {escape(name[run])} {escape(flavor_text)}: {escape(msg)}")
    for note in s.all_notes:
        console.print(f"note: {escape(note)}")
    return buf.getvalue()
