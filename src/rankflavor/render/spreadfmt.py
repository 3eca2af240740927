"""Render a :class:`rankflavor.spread.Spread`: terminal tables, JSON, or CSV ``run,flavor,mean``."""

from __future__ import annotations

import csv
import io
import json
import math
import re

from ..measure import Measure
from ..spread import Spread

SPREAD_FORMATS = ("table", "json", "csv")


def render_spread(result: Spread, fmt: str = "table") -> str:
    """``table`` (terminal), ``json`` (:meth:`Spread.to_dict`) or ``csv`` (``run,flavor,mean``, full precision)."""
    if fmt == "json":
        return json.dumps(result.to_dict(), indent=2, allow_nan=False) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["run", "flavor", "mean"])
        for run, flavor, mean in result.rows():
            w.writerow([run, flavor, repr(mean)])
        return buf.getvalue()
    return _table(result)


def _f(x: float, signed: bool = False) -> str:
    if math.isnan(x):
        return "-"
    return f"{x:+.4f}" if signed else f"{x:.4f}"


def knob_delta(measure: Measure, base: Measure) -> str:
    """The knobs (and cutoff) where ``measure`` differs from ``base``, as ``knob=value,...``."""
    parts = [] if measure.k == base.k else [f"k={measure.k}"]
    mine, theirs = measure.flavor.knobs(), base.flavor.knobs()
    parts += [f"{n}={v}" for n, v in mine.items() if theirs.get(n) != v]
    return ",".join(parts) or "(base)"


def short_names(names: list[str] | tuple[str, ...]) -> list[str]:
    """Run names without the prefix and suffix they all share (cut at ``.``, ``_``, ``-`` or ``/``)."""
    if len(names) < 2:
        return list(names)
    prefix = _common([n for n in names])
    suffix = _common([n[::-1] for n in names])
    out = []
    for n in names:
        cut = n[len(prefix):len(n) - len(suffix)] if len(prefix) + len(suffix) < len(n) else n
        out.append(cut or n)
    return out if len(set(out)) == len(out) else list(names)


def _common(texts: list[str]) -> str:
    first = texts[0]
    n = 0
    while n < len(first) and all(len(t) > n and t[n] == first[n] for t in texts):
        n += 1
    common = first[:n]
    ends = [m.end() for m in re.finditer(r"[._\-/]", common)]
    return common[: ends[-1]] if ends else ""


def _table(s: Spread) -> str:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    buf = io.StringIO()
    console = Console(file=buf, width=200, force_terminal=False, color_system=None)
    short = short_names(s.runs)
    name = dict(zip(s.runs, short, strict=True))
    n_grid = sum(1 for f in s.flavors if f.cell is not None)
    n_presets = sum(1 for f in s.flavors if f.presets)
    console.print(f"spread of {escape(s.base.display)} over {len(s.flavors)} flavors ({n_grid} grid cells, "
                  f"{n_presets} preset flavors), {len(s.runs)} run(s)")
    console.print(f"base: {escape(str(s.base))}")
    if s.grid:
        console.print("grid: " + escape(" x ".join(f"{k}={'|'.join(v)}" for k, v in s.grid.items())))

    flav = Table(title="mean per flavor (knobs that differ from the base)")
    flav.add_column("#", justify="right")
    flav.add_column("flavor", overflow="fold")
    flav.add_column("from", overflow="fold")
    for n in short:
        flav.add_column(escape(n), justify="right")
    for j, f in enumerate(s.flavors):
        origin = ", ".join(o.replace("preset:", "") for o in f.origins if o != "grid") or "grid"
        flav.add_row(str(j + 1), escape(knob_delta(f.measure, s.base)), escape(origin),
                     *[_f(s.means[r, j]) for r in range(len(s.runs))])
    console.print(flav)

    per_run = Table(title="spread per run (lowest to highest flavor)")
    for col in ("run", "base", "min", "max", "spread", "lowest", "highest"):
        per_run.add_column(col, justify="right" if col in ("base", "min", "max", "spread") else "left",
                           overflow="fold")
    index = {f.flavor: f for f in s.flavors}
    for sm in s.summaries:
        lo = index.get(sm.low_flavor)
        hi = index.get(sm.high_flavor)
        per_run.add_row(escape(name[sm.run]), _f(sm.base), _f(sm.low), _f(sm.high), _f(sm.spread),
                        escape(knob_delta(lo.measure, s.base)) if lo else "-",
                        escape(knob_delta(hi.measure, s.base)) if hi else "-")
    console.print(per_run)

    effects = s.knob_effects
    if effects:
        eff = Table(title="knob effects: swing of the mean across the knob's values, other grid knobs fixed")
        eff.add_column("knob")
        eff.add_column("mean swing", justify="right")
        eff.add_column("max swing", justify="right")
        eff.add_column("mean by value (over runs)", overflow="fold")
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
            pairs.add_column(col, justify="left" if col in ("A", "B", "flips") else "right")
        for p in s.pairs:
            pairs.add_row(escape(name[p.run_a]), escape(name[p.run_b]), _f(p.base_diff, True), _f(p.min_diff, True),
                          _f(p.max_diff, True), str(p.a_better), str(p.b_better), str(p.equal),
                          "FLIPS" if p.flips else "no")
        console.print(pairs)
        flips = [p for p in s.pairs if p.flips]
        console.print(f"{len(flips)} of {len(s.pairs)} pair(s) change sign across flavors")
        orders = s.orders
        console.print(f"run order (best first): {len(orders)} distinct order(s) over the flavors every run evaluated")
        for o in orders:
            console.print(f"  {len(o.flavors):>3} flavor(s): " + escape(" > ".join(name[r] for r in o.order)))
    if s.errors:
        console.print(f"{len(s.errors)} (run, flavor) evaluation(s) refused by their policy:")
        for (run, flavor), msg in list(s.errors.items())[:10]:
            console.print(f"  {escape(name[run])} {escape(flavor)}: {escape(msg)}")
    for note in s.notes:
        console.print(f"note: {escape(note)}")
    return buf.getvalue()
