"""The tables of eval results, spread and diff as plain data (titles, headers, cells), for the
document renderers (:mod:`.md`, :mod:`.latex`) to format and escape.

A cell is text (ids, names: untrusted, escaped by the renderer) or a :class:`Code` (a flavor
string, shown in a code font). Numbers are formatted here, once, as the terminal shows them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from rankflavor.analysis.diff.api import Diff
from rankflavor.analysis.spread.api import Spread
from rankflavor.base.finite import text
from rankflavor.engine.results import EMPTY, MISSING, Results, plain_value


@dataclass(frozen=True)
class Code:
    """A flavor string or knob list, shown in a code font (still escaped)."""

    text: str


Cell = str | Code


@dataclass(frozen=True)
class Block:
    """A table (``headers`` and ``rows``) or, with no headers, a paragraph of ``lines``."""

    title: str = ""
    headers: tuple[Cell, ...] = ()
    rows: tuple[tuple[Cell, ...], ...] = ()
    right: tuple[bool, ...] = ()
    lines: tuple[Cell, ...] = field(default_factory=tuple)


def _num(x: float | None, signed: bool = False) -> str:
    return text(x, "+.4f" if signed else ".4f")


def _value(v: float | str, is_sum: bool) -> str:
    if isinstance(v, str):
        return repr(v)
    if math.isnan(v):
        return "nan"
    return str(round(v)) if is_sum else f"{v:.4f}"


def results_blocks(results: Results, per_query: bool) -> list[Block]:
    """Summary table with full flavor strings; per-query table of queries x measures whose
    headers name the measure and its knobs that differ from a base printed once; counts."""
    from rankflavor.render.console import base_line, measure_delta
    from rankflavor.render.text import base_flavor, counts_lines

    rows = []
    for m in results.measures:
        is_sum = m.measure.spec.summary == "sum"
        summary = "-" if m.measure.spec.summary == "none" else _value(m.summary, is_sum)
        rows.append((m.measure.display, summary, str(m.n_queries), Code(str(m.measure))))
    blocks = [Block("", ("measure", "value", "queries", "flavor"), tuple(rows), (False, True, True, False))]
    if per_query:
        base = base_flavor(results)
        blocks.append(Block(lines=("Flavor base of the per-query columns (each names the knobs where it differs):",
                                   Code(base_line([m.measure for m in results.measures], base)))))
        cells = []
        for m in results.measures:
            is_sum = m.measure.spec.summary == "sum"
            cells.append({str(q): _value(plain_value(v), is_sum) + (" (empty)" if s == EMPTY else
                                                                    " (missing)" if s == MISSING else "")
                          for q, v, s in zip(m.queries, m.values, m.status, strict=True)})
        queries = sorted({q for c in cells for q in c}, key=lambda s: s.encode("utf-8"))
        headers: tuple[Cell, ...] = ("query", *(Code(measure_delta(m.measure, base)) for m in results.measures))
        body = tuple((q, *(c.get(q, "-") for c in cells)) for q in queries)
        blocks.append(Block("per query", headers, body, (False, *([True] * len(cells)))))
    blocks.append(Block(lines=tuple(counts_lines(results))))
    return blocks


def spread_blocks(s: Spread) -> list[Block]:
    """Flavor table (every flavor, defect presets marked, each flavor's place in the summaries),
    the summaries per run and per pair, the run orders, notes (the excluded flavors' reasons first)."""
    from rankflavor.render.spreadview import flip_text, knob_delta, origin_text, short_names

    short = short_names(s.runs)
    name = dict(zip(s.runs, short, strict=True))
    used = s.in_summary
    blocks = [Block(lines=(f"spread of {s.base.display} over {len(s.flavors)} flavors ({int(used.sum())} in the "
                           f"summaries), {len(s.runs)} run(s); base:", Code(str(s.base))))]
    rows: tuple[tuple[Cell, ...], ...] = tuple(
        (str(j + 1), Code(knob_delta(f.measure, s.base)), origin_text(f), "yes" if used[j] else "no",
         *(_num(s.means[r, j]) for r in range(len(s.runs))))
        for j, f in enumerate(s.flavors))
    blocks.append(Block("mean per flavor (knobs that differ from the base)", ("#", "flavor", "from", "in summary", *short),
                        rows, (True, False, False, False, *([True] * len(short)))))
    number = {f.flavor: j + 1 for j, f in enumerate(s.flavors)}
    per_run = tuple((name[sm.run], _num(sm.base), _num(sm.low), _num(sm.high), _num(sm.spread), str(sm.n_flavors),
                     f"#{number[sm.low_flavor]}" if sm.low_flavor in number else "-",
                     f"#{number[sm.high_flavor]}" if sm.high_flavor in number else "-") for sm in s.summaries)
    blocks.append(Block("spread per run (lowest and highest flavor as # above)",
                        ("run", "base", "min", "max", "spread", "flavors", "lowest", "highest"), per_run,
                        (False, True, True, True, True, True, False, False)))
    if len(s.runs) > 1:
        pairs = tuple((name[p.run_a], name[p.run_b], _num(p.base_diff, True), _num(p.min_diff, True),
                       _num(p.max_diff, True), str(p.a_better), str(p.b_better), str(p.equal),
                       flip_text(s, p)) for p in s.pairs)
        blocks.append(Block("run pairs: A - B across flavors", ("A", "B", "base", "min", "max", "A>B", "B>A", "=",
                                                                 "flips"), pairs,
                            (False, False, True, True, True, True, True, True, False)))
        orders = tuple((str(len(o.flavors)), " > ".join(name[r] for r in o.order)) for o in s.orders)
        blocks.append(Block("run orders (best first) over the flavors every run evaluated", ("flavors", "order"),
                            orders, (True, False)))
    notes = s.all_notes
    if notes:
        blocks.append(Block(lines=tuple(f"note: {n}" for n in notes)))
    return blocks


def diff_blocks(d: Diff, scale: str, top: int) -> list[Block]:
    """A and B with their flavors, the knob-by-knob path, and the queries that move most."""
    blocks = [Block(lines=(f"A: {d.a.display}, mean {_num(d.means[0])} over {int(d.n_in_mean[0])} queries",
                           Code(str(d.a)),
                           f"B: {d.b.display}, mean {_num(d.means[-1])} over {int(d.n_in_mean[-1])} queries",
                           Code(str(d.b)), f"B - A = {_num(d.total, True)}"))]
    if not d.steps:
        return blocks
    deltas = d.mean_deltas
    rows: list[tuple[Cell, ...]] = []
    for j, st in enumerate(d.steps):
        change = "; ".join(f"{a} -> {b}" for a, b in st.changes.values())
        share = f"{100 * deltas[j] / d.total:.0f}%" if abs(d.total) > 1e-12 and deltas[j] != 0 else "-"
        rows.append((str(j + 1), st.name, Code(change), _num(d.means[j + 1]), _num(deltas[j], True), share,
                     str(int(d.n_in_mean[j + 1]))))
    rows.append(("", "total", "", "", _num(d.total, True), "", ""))
    blocks.append(Block("path from A to B, one knob at a time",
                        ("step", "knob", "change", "mean after", "delta", "share", "queries"), tuple(rows),
                        (True, False, False, True, True, True, True)))
    movers = d.movers(top, scale)
    if movers:
        scale_note = "own values" if scale == "value" else "shares of the mean"
        body = tuple((mv.query, _num(mv.a), _num(mv.b), _num(mv.total, True),
                      *(_num(mv.by_step[st.name], True) if mv.by_step[st.name] else "0" for st in d.steps))
                     for mv in movers)
        blocks.append(Block(f"queries that move most ({scale_note}; absent from a mean = 0)",
                            ("query", "A", "B", "total", *(st.name for st in d.steps)), body,
                            (False, True, True, True, *([True] * len(d.steps)))))
    return blocks
