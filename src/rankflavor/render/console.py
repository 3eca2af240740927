"""What every terminal renderer shares: a console as wide as the terminal, flavor strings that wrap
only at commas, and the knobs of a flavor that differ from a stated base.

Examples
--------
>>> from rich.console import Console
>>> import io
>>> buf = io.StringIO()
>>> Console(file=buf, width=24, color_system=None).print(FlavorText("ndcg@10[gain=exp2,ties=input_order]"))
>>> print(buf.getvalue(), end="")
ndcg@10[gain=exp2,
ties=input_order]
>>> knob_delta_text({"gain": "exp2", "ties": "averaged"}, {"gain": "linear", "ties": "averaged"})
'gain=exp2'
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult
    from rich.measure import Measurement

    from rankflavor.flavor.flavor import Flavor
    from rankflavor.metrics.measure import Measure

#: Below this many columns a table shows each flavor as the knobs that differ from a base it
#: prints once: a full NDCG flavor string is ~170 characters, three or more lines in a narrow column.
COMPACT_BELOW = 120


def make_console(buf: io.StringIO, width: int | None = None) -> Console:
    """A plain-text console writing to ``buf``: ``width`` columns, or the terminal's (rich reads
    ``COLUMNS``, then the terminal size; 80 when there is no terminal)."""
    from rich.console import Console

    return Console(file=buf, width=width, force_terminal=False, color_system=None, highlight=False)


def terminal_width() -> int:
    """The width rich gives a console on this terminal (``COLUMNS``, the terminal, else 80)."""
    return make_console(io.StringIO()).width


def is_compact(console: Console) -> bool:
    """True when the console is too narrow for full flavor strings beside the numbers."""
    return console.width < COMPACT_BELOW


def comma_pieces(text: str) -> list[str]:
    """``text`` cut after each comma: the only places a flavor string may wrap.

    >>> comma_pieces("ndcg@10[gain={0:0,1:1},ties=averaged]")
    ['ndcg@10[gain={0:0,', '1:1},', 'ties=averaged]']
    """
    pieces, start = [], 0
    for i, ch in enumerate(text):
        if ch == ",":
            pieces.append(text[start:i + 1])
            start = i + 1
    if start < len(text) or not pieces:
        pieces.append(text[start:])
    return pieces


def pack(pieces: Iterable[str], width: int) -> list[str]:
    """Greedy lines of whole pieces, each at most ``width`` long unless one piece alone is longer."""
    lines: list[str] = []
    line = ""
    for p in pieces:
        if line and len(line) + len(p) > width:
            lines.append(line)
            line = ""
        line += p
    if line or not lines:
        lines.append(line)
    return lines


class FlavorText:
    """A rich renderable of a flavor (or knob list) that wraps only after commas.

    Rich wraps text at spaces and folds a word that does not fit anywhere inside it (``missing=ze|ro``);
    a flavor string has no spaces. This renderable tells the table its narrowest width (the longest
    comma piece) and lays the pieces out itself.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.pieces = comma_pieces(text)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        from rich.measure import Measurement

        return Measurement(max(len(p) for p in self.pieces), len(self.text)).clamp(max_width=options.max_width)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from rich.text import Text

        # overflow="fold" only acts on a single piece wider than the whole column.
        yield Text("\n".join(pack(self.pieces, options.max_width)), no_wrap=False, overflow="fold")

    def __str__(self) -> str:
        return self.text


def print_flavor(console: Console, text: str, indent: str = "") -> None:
    """Print a flavor string on its own lines, wrapped after commas, each line led by ``indent``."""
    for line in pack(comma_pieces(text), max(console.width - len(indent), 20)):
        console.print(indent + line, markup=False, highlight=False, overflow="fold", soft_wrap=False)


def knob_delta_text(knobs: Mapping[str, str], base: Mapping[str, str]) -> str:
    """``knob=value,...`` for the knobs whose value differs from ``base`` (empty when none does)."""
    return ",".join(f"{n}={v}" for n, v in knobs.items() if base.get(n) != v)


def read_knobs(measure: Measure) -> dict[str, str]:
    """Every knob the measure reads, quiet ones at their defaults included (a compact row must
    show ``fractional=keep`` when the base says ``fractional=truncate``)."""
    from rankflavor.metrics.measure import relevant_knobs

    return {n: str(getattr(measure.flavor, n))
            for n in relevant_knobs(measure.metric, measure.k, measure.flavor, quiet_defaults=True)}


def measure_delta(measure: Measure, base: Flavor) -> str:
    """The measure as ``metric@k`` plus the knobs it reads that differ from ``base``:
    ``ndcg@10[gain=exp2]``, or ``ndcg@10[=base]`` when every knob it reads is the base's."""
    delta = knob_delta_text(read_knobs(measure), base.knobs())
    return f"{measure.name}[{delta or '=base'}]"


def common_base(measures: Iterable[Measure], start: Flavor) -> Flavor:
    """``start`` with each knob set to the value every measure that reads it shares (so the rows
    of a compact table print only what sets them apart)."""
    seen: dict[str, set[str]] = {}
    for m in measures:
        for n, v in read_knobs(m).items():
            seen.setdefault(n, set()).add(v)
    shared = {n: next(iter(vs)) for n, vs in seen.items() if len(vs) == 1}
    return start.with_knobs(**shared) if shared else start


def base_line(measures: Iterable[Measure], base: Flavor) -> str:
    """The base as ``knob=value,...`` over the knobs the measures read; a quiet knob (``run_only``,
    ``fractional``...) at its default is left out, as canonical strings leave it out."""
    from rankflavor.flavor.knobs import KNOBS

    names: dict[str, None] = {}
    for m in measures:
        names.update(dict.fromkeys(read_knobs(m)))
    values = {n: str(getattr(base, n)) for n in names}
    return ",".join(f"{n}={v}" for n, v in values.items() if not (KNOBS[n].quiet and v == KNOBS[n].default))


def chunks(widths: Iterable[int], room: int) -> list[list[int]]:
    """Indices of ``widths`` cut into consecutive groups whose widths sum to at most ``room`` (a
    group holds at least one): pages of columns for a narrow terminal.

    >>> chunks([10, 10, 10], 25)
    [[0, 1], [2]]
    """
    groups: list[list[int]] = [[]]
    used = 0
    for i, w in enumerate(widths):
        if groups[-1] and used + w > room:
            groups.append([])
            used = 0
        groups[-1].append(i)
        used += w
    return [g for g in groups if g] or [[]]


__all__ = ["COMPACT_BELOW", "FlavorText", "base_line", "chunks", "comma_pieces", "common_base", "is_compact", "knob_delta_text",
           "make_console", "measure_delta", "pack", "print_flavor", "read_knobs", "terminal_width"]
