"""Render a :class:`rankflavor.analysis.spread.api.Spread`: terminal tables, JSON, or CSV ``run,flavor,mean``."""

from __future__ import annotations

import csv
import io
import math

from rankflavor.analysis.spread.api import Spread
from rankflavor.base.finite import dumps, text
from rankflavor.render.console import FlavorText, chunks, is_compact, make_console, print_flavor
from rankflavor.render.fit import GLUE, Column, Glued, NameText, paged_tables, print_wrapped
from rankflavor.render.spreadview import defect_flavors, flip_text, knob_delta, origin_text, short_names

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
        from rankflavor.render.md import spread_md

        return spread_md(result)
    if fmt == "latex":
        from rankflavor.render.latex import spread_latex

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
    print_wrapped(console, f"spread of {s.base.display} over {len(s.flavors)} flavors ({n_grid} grid cells, "
                  f"{n_presets} preset flavors; {n_used} in the summaries), {len(s.runs)} run(s)")
    console.print("base:")
    print_flavor(console, str(s.base))
    if s.grid:
        print_wrapped(console, "grid: " + " x ".join(f"{k}={'|'.join(v)}" for k, v in s.grid.items()))

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

    number = {f.flavor: j + 1 for j, f in enumerate(s.flavors)}

    def where(flavor: str) -> FlavorText | str:
        if flavor not in number:
            return "-"
        j = number[flavor]
        return f"#{j}" if compact else FlavorText(f"#{j} " + knob_delta(s.flavors[j - 1].measure, s.base))

    sums = s.summaries
    per_run = [Column("run", [NameText(name[sm.run]) for sm in sums], wrap=True)]
    for head, read in (("base", lambda sm: _f(sm.base)), ("min", lambda sm: _f(sm.low)), ("max", lambda sm: _f(sm.high)),
                       ("spread", lambda sm: _f(sm.spread)), ("flavors", lambda sm: str(sm.n_flavors))):
        per_run.append(Column(head, [read(sm) for sm in sums], "right"))
    per_run += [Column("lowest", [where(sm.low_flavor) for sm in sums], wrap=not compact),
                Column("highest", [where(sm.high_flavor) for sm in sums], wrap=not compact)]
    for t in paged_tables(per_run, console.width,
                          title="spread per run (lowest to highest flavor" + (", as # above)" if compact else ")")):
        console.print(t)

    effects = s.knob_effects
    if effects:
        knobs, overall, swing, by_values = [], [], [], []
        for e in sorted(effects, key=lambda e: -e.overall if not math.isnan(e.overall) else 0.0):
            by_value = []
            for v, per in e.by_value.items():
                vals = [x for x in per.values() if not math.isnan(x)]
                by_value.append(f"{v}{GLUE}{sum(vals) / len(vals):.4f}" if vals else f"{v}{GLUE}-")
            knobs.append(e.knob)
            overall.append(_f(e.overall))
            swing.append(_f(max((x for x in e.max_swing.values() if not math.isnan(x)), default=float("nan"))))
            by_values.append(Glued(" | ".join(by_value)))
        cols = [Column("knob", knobs), Column("mean swing", overall, "right"), Column("max swing", swing, "right"),
                Column("mean by value (over runs)", by_values, wrap=True)]
        for t in paged_tables(cols, console.width,
                              title="knob effects: swing of the mean across the knob's values, other grid knobs fixed"):
            console.print(t)
        print_wrapped(console, f"moves the score most: {s.most_moving_knob}")

    if len(s.runs) > 1:
        ps = s.pairs
        cols = [Column("A", [NameText(name[p.run_a]) for p in ps], wrap=True),
                Column("B", [NameText(name[p.run_b]) for p in ps], wrap=True)]
        for head, read in (("base", lambda p: _f(p.base_diff, True)), ("min", lambda p: _f(p.min_diff, True)),
                           ("max", lambda p: _f(p.max_diff, True)), ("A>B", lambda p: str(p.a_better)),
                           ("B>A", lambda p: str(p.b_better)), ("=", lambda p: str(p.equal))):
            cols.append(Column(head, [read(p) for p in ps], "right"))
        cols.append(Column("flips", [flip_text(s, p) for p in ps], wrap=True))
        for t in paged_tables(cols, console.width, keep=2, title="run pairs: A - B across flavors"):
            console.print(t)
        flips = [p for p in ps if p.flips]
        print_wrapped(console, f"{len(flips)} of {len(ps)} pair(s) change sign across flavors")
        orders = s.orders
        print_wrapped(console, f"run order (best first): {len(orders)} distinct order(s) over the flavors every run "
                      "evaluated")
        for o in orders:
            print_wrapped(console, f"{len(o.flavors):>3} flavor(s): " + " > ".join(name[r] for r in o.order), "  ",
                          "      ")
    if s.errors:
        print_wrapped(console, f"{len(s.errors)} (run, flavor) evaluation(s) refused by their policy:")
        for (run, flavor_text), msg in list(s.errors.items())[:10]:
            print_wrapped(console, f"{name[run]} {flavor_text}: {msg}", "  ", "    ")
    for note in s.all_notes:
        print_wrapped(console, f"note: {note}")
    return buf.getvalue()
