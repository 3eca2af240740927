"""A line chart in plain characters, as wide as it is allowed to be: a trend on any terminal or log.

Each line has its own marker; consecutive points of one line are joined with ``.`` through the
columns between them, and no segment ever joins points of two different lines.

>>> print("\\n".join(line_chart([("*", [(0, 0.2), (1, 0.4), (2, 0.3)])], width=30, height=4)))
0.4000 |         .*...
       |      ...     .......
       |  ....               *
0.2000 |*.
       +----------------------
        #0                  #2
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

#: Markers of the lines, in order (plain ASCII).
MARKERS = "*o+x#@%&=~"


def line_chart(lines: Sequence[tuple[str, Sequence[tuple[int, float]]]], width: int = 80, height: int = 10,
               x_label: str = "#") -> list[str]:
    """Text rows of a chart of ``lines``: ``(marker, [(x, y), ...])`` each, ``x`` an integer key
    (a record id) shared by all lines; NaN values are not drawn. At most ``width`` characters a row.

    The x axis spaces the distinct ``x`` of all lines evenly (record order, not time), so that
    every point has its own column when the width allows; with more points than columns, later
    points overwrite earlier ones in a shared column.
    """
    xs = sorted({x for _, pts in lines for x, _ in pts})
    ys = [y for _, pts in lines for _, y in pts if not math.isnan(y)]
    if not xs or not ys:
        return ["(no value to draw)"]
    lo, hi = min(ys), max(ys)
    labels = [f"{hi:.4f}", f"{lo:.4f}"]
    pad = max(len(s) for s in labels)
    plot = max(width - pad - 2, 8)
    height = max(height, 2)
    col = {x: (round(i * (plot - 1) / (len(xs) - 1)) if len(xs) > 1 else plot // 2) for i, x in enumerate(xs)}

    def row(y: float) -> float:
        return (height - 1) / 2 if hi == lo else (hi - y) / (hi - lo) * (height - 1)

    grid = [[" "] * plot for _ in range(height)]
    for _marker, pts in lines:  # segments first, so that markers are drawn over them
        clean = [(col[x], row(y)) for x, y in pts if not math.isnan(y)]
        for (c0, r0), (c1, r1) in itertools.pairwise(clean):
            for c in range(c0 + 1, c1):
                r = round(r0 + (r1 - r0) * (c - c0) / (c1 - c0))
                grid[r][c] = "." if grid[r][c] == " " else grid[r][c]
    for marker, pts in lines:
        for x, y in pts:
            if not math.isnan(y):
                grid[round(row(y))][col[x]] = marker
    out = []
    for i, cells in enumerate(grid):
        label = labels[0] if i == 0 else labels[1] if i == height - 1 else ""
        out.append(f"{label:>{pad}} |" + "".join(cells).rstrip())
    out.append(" " * pad + " +" + "-" * plot)
    first, last = f"{x_label}{xs[0]}", f"{x_label}{xs[-1]}"
    axis = first if len(xs) == 1 else first + " " * max(plot - len(first) - len(last), 1) + last
    out.append(" " * (pad + 2) + axis)
    return out


__all__ = ["MARKERS", "line_chart"]
