"""Render a :class:`rankflavor.raters.Agreement` for the terminal at its width (JSON is the
result's own :meth:`~rankflavor.raters.Agreement.to_dict`)."""

from __future__ import annotations

import io
import math
from typing import TYPE_CHECKING

from rankflavor.render.console import make_console
from rankflavor.render.fit import Column, NameText, paged_tables, print_wrapped

if TYPE_CHECKING:
    from rankflavor.raters import Agreement

#: What each statistic is computed over (the table's legend).
LEGEND = ("cohen_kappa: 2 raters, pairs both rated | fleiss_kappa: pairs all raters rated | "
          "kripp_alpha: ordinal, all pairs")


def _num(x: float | None) -> str:
    return "-" if x is None else ("nan" if math.isnan(x) else f"{x:.4f}")


def render_agreement(result: Agreement, width: int | None = None) -> str:
    """The statistics overall and per query (a row each), the legend and why any is undefined."""
    buf = io.StringIO()
    console = make_console(buf, width)
    rows = [("all", result.overall), *result.per_query.items()]
    columns = [Column("query", [NameText(name) for name, _ in rows], wrap=True)]
    for head, read in (("pairs", lambda s: str(s.pairs)), ("ratings", lambda s: str(s.ratings)),
                       ("raters", lambda s: str(s.raters)), ("complete", lambda s: str(s.complete_pairs)),
                       ("cohen_kappa", lambda s: _num(s.cohen_kappa)), ("fleiss_kappa", lambda s: _num(s.fleiss_kappa)),
                       ("kripp_alpha", lambda s: _num(s.krippendorff_alpha))):
        columns.append(Column(head.replace("_", "_\n"), [read(s) for _, s in rows], "right"))  # header on two lines
    print_wrapped(console, f"agreement of {len(result.raters)} raters ({result.source})")
    for t in paged_tables(columns, console.width):
        console.print(t)
    for part in LEGEND.split(" | "):
        print_wrapped(console, part)
    for name, s in rows:
        for stat, why in s.undefined.items():
            print_wrapped(console, f"note: {name} {stat} {why}")
    return buf.getvalue()


__all__ = ["LEGEND", "render_agreement"]
