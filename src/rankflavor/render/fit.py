"""Text that fits the terminal: sentences wrapped at spaces, tables whose columns are paged so
that no cell is cut.

A terminal that wraps a line wider than itself breaks it wherever the edge falls, a number
included (``0.`` on one line, ``5058`` on the next). Every human-facing renderer therefore
makes lines no wider than its width itself:

* :func:`wrap` cuts prose at spaces; a word longer than a whole line (a flavor string, a path)
  is cut after its commas, then after its slashes, and only as a last resort anywhere. A
  number is never that long, so it is never cut.
* :func:`paged_tables` lays a table out as several tables of the same rows when its columns do
  not fit side by side: the leading key columns repeat on every page, every other column keeps
  its natural width, so rich never squeezes a number.

Examples
--------
>>> wrap("queries: 43 evaluated, 0 only in qrels, 0 only in run", 24)
['queries: 43 evaluated, 0', '  only in qrels, 0 only', '  in run']
>>> wrap("flavor: ndcg@10[gain=linear,discount=log2]", 20, hang="    ")
['flavor:', '    ndcg@10[gain=', '    linear,discount=', '    log2]']
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.table import Table

#: Joins two words that must stay on one line (an id and its value); printed as a space.
GLUE = "\u2060"
#: The narrowest line a renderer lays text out for (a narrower terminal gets lines this wide).
MIN_WIDTH = 20
#: Where an over-long word may be cut, in order of preference (after the character).
_CUTS = (",", "/", ";", "|", "=", "_", "-", ".")


def _cut_word(word: str, room: int) -> list[str]:
    """``word`` in pieces of at most ``room`` characters, cut after the first of :data:`_CUTS`
    that leaves every piece short enough (pieces packed greedily), else every ``room`` characters."""
    from rankflavor.render.console import pack

    if len(word) <= room:
        return [word]
    for sep in _CUTS:
        parts = re.split(f"(?<={re.escape(sep)})", word)
        parts = [p for p in parts if p]
        if len(parts) > 1 and all(len(p) <= room for p in parts):
            return pack(parts, room)
    for sep in _CUTS:  # pieces still too long: cut those again at the next separator
        parts = [p for p in re.split(f"(?<={re.escape(sep)})", word) if p]
        if len(parts) > 1:
            return pack([q for p in parts for q in _cut_word(p, room)], room)
    return [word[i:i + room] for i in range(0, len(word), room)]


def wrap(text: str, width: int, indent: str = "", hang: str | None = None) -> list[str]:
    """``text`` as lines of at most ``width`` characters, cut at spaces.

    ``indent`` (and the text's own leading spaces) leads the first line and ``hang`` (default:
    that and two spaces) every continuation. Runs of spaces inside a line are kept (aligned columns stay aligned); a word
    longer than a line is cut by :func:`_cut_word`; words joined by :data:`GLUE` stay on one line.
    """
    indent += text[:len(text) - len(text.lstrip(" "))]  # leading spaces of the text lead its first line
    hang = indent + "  " if hang is None else hang
    width = max(width, MIN_WIDTH, len(indent) + 8, len(hang) + 8)
    tokens = re.split(r"( +)", text.strip(" "))
    lines: list[str] = []
    line, fresh = indent, True  # fresh: nothing on the line yet but its lead
    for word, gap in zip(tokens[0::2], ["", *tokens[1::2]], strict=True):
        if not word:
            continue
        if len(line) + (0 if fresh else len(gap)) + len(word) <= width:
            line += ("" if fresh else gap) + word
            fresh = False
            continue
        if not fresh:
            lines.append(line)
            line = hang
        pieces = _cut_word(word, min(width - len(line), width - len(hang)))  # each piece fits any line
        for piece in pieces[:-1]:
            lines.append(line + piece)
            line = hang
        line += pieces[-1]
        fresh = False
    lines.append(line)
    return [x.rstrip().replace(GLUE, " ") for x in lines]


def wrap_lines(text: str, width: int) -> str:
    """Every line of ``text`` wrapped to ``width`` (:func:`wrap`), its leading spaces kept as the
    indent and two more on its continuations; a trailing newline kept."""
    out = []
    for line in text.split("\n"):
        lead = line[:len(line) - len(line.lstrip(" "))]
        out.extend(wrap(line[len(lead):], width, lead) if line.strip() else [line])
    return "\n".join(out)


@dataclass
class Column:
    """One column of a :func:`paged_tables` table.

    ``cells`` are plain text (escaped for rich markup when added) or rich renderables (a
    :class:`~rankflavor.render.console.FlavorText`); ``wrap`` columns may wrap at spaces (and a
    flavor at commas) and take the room the others leave, ``no_wrap`` ones (numbers) never do.
    """

    header: str
    cells: Sequence[Any]
    justify: str = "left"
    wrap: bool = False
    #: The narrowest a wrapping column may get (default: its longest word, at most 30).
    min_width: int | None = None

    def natural(self) -> int:
        """Width of the longest cell (and header word) on one line."""
        return max([*(_width(c) for c in self.cells), _header_width(self.header), 1])

    def narrowest(self) -> int:
        """The least width the column is laid out at."""
        if not self.wrap:
            return self.natural()
        if self.min_width is not None:
            return self.min_width
        words = [len(w) for c in self.cells for w in _words(c)] + [_header_width(self.header)]
        return min(max([*words, 1]), 30)


def _words(cell: Any) -> list[str]:
    from rankflavor.render.console import FlavorText

    if isinstance(cell, FlavorText | NameText | Glued):
        return cell.pieces
    return str(cell).split()


def _width(cell: Any) -> int:
    from rankflavor.render.console import FlavorText

    if isinstance(cell, FlavorText | NameText | Glued):
        return len(cell.text)
    return max((len(x) for x in str(cell).split("\n")), default=0)


def _header_width(header: str) -> int:
    """A header wraps at its spaces: its longest word."""
    return max((len(w) for w in header.split()), default=1)


#: Columns of a rich table cost their width plus this (one border, one space either side).
CELL_EXTRA = 3


def page_columns(columns: Sequence[Column], width: int, keep: int = 1) -> list[list[int]]:
    """Indices of the columns each page shows: the first ``keep`` on every page, the others in
    order, as many per page as fit at their :meth:`Column.narrowest` (at least one)."""
    from rankflavor.render.console import chunks

    lead = sum(c.narrowest() + CELL_EXTRA for c in columns[:keep]) + 1
    rest = [c.narrowest() + CELL_EXTRA for c in columns[keep:]]
    if not rest:
        return [list(range(len(columns)))]
    return [list(range(keep)) + [keep + i for i in page] for page in chunks(rest, max(width - lead, 1))]


def page_widths(columns: Sequence[Column], page: Sequence[int], width: int) -> list[int]:
    """The width of each column of ``page``: a column that does not wrap at its natural width,
    a wrapping one at its narrowest plus a share of the room left (up to its natural width);
    then, while room is left, a column whose header would wrap as wide as its header."""
    widths = {i: columns[i].narrowest() for i in page}
    room = width - 1 - sum(widths[i] + CELL_EXTRA for i in page)
    growing = [i for i in page if columns[i].wrap and columns[i].natural() > widths[i]]
    while room > 0 and growing:
        share = max(room // len(growing), 1)
        for i in list(growing):
            add = min(share, columns[i].natural() - widths[i], room)
            widths[i] += add
            room -= add
            if widths[i] >= columns[i].natural():
                growing.remove(i)
            if room <= 0:
                break
    for i in page:  # room still left: headers on one line
        header = max((len(x) for x in columns[i].header.split("\n")), default=0)
        if room > 0 and header > widths[i]:
            add = min(room, header - widths[i])
            widths[i] += add
            room -= add
    return [widths[i] for i in page]


def paged_tables(columns: Sequence[Column], width: int, keep: int = 1, title: str | None = None,
                 **table_options: Any) -> list[Table]:
    """``columns`` as one rich table, or as several (pages of columns, ``keep`` leading columns
    on each) when they do not fit ``width`` side by side. Titles say ``columns i/n``.

    Every column gets an explicit width (:func:`page_widths`), so rich never squeezes one below
    it: a header wraps at its spaces, a wrapping cell at its spaces (a flavor or a name at its
    own separators), and a cell that does not wrap (a number) is always whole.
    """
    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

    pages = page_columns(columns, width, keep)
    rows = max((len(c.cells) for c in columns), default=0)
    out = []
    for n, page in enumerate(pages):
        name = title or ""
        if len(pages) > 1:
            name = (name + ", " if name else "") + f"columns {n + 1}/{len(pages)}"
        t = Table(title=escape(name) if name else None, **table_options)
        for i, w in zip(page, page_widths(columns, page, width), strict=True):
            c = columns[i]
            t.add_column(Text(printable(c.header), no_wrap=False, overflow="fold"), justify=c.justify,  # type: ignore[arg-type]
                         no_wrap=not c.wrap, width=w)
        for r in range(rows):
            t.add_row(*(_cell(columns[i].cells[r]) if r < len(columns[i].cells) else "" for i in page))
        out.append(t)
    return out


def _cell(cell: Any) -> Any:
    from rich.markup import escape

    return escape(printable(cell)) if isinstance(cell, str) else cell


def printable(text: str) -> str:
    """``text`` with every control character (an escape sequence would reach the terminal)
    written as its Python escape; line breaks kept.

    >>> print(printable("ev\\x1b[31mil"))
    ev\\x1b[31mil
    """
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c == "\n" else repr(c)[1:-1] for c in text)


class NameText:
    """An id or a file name as a table cell that wraps only after ``. / _ - ,`` (rich would fold
    it anywhere), so a narrow column shows ``rankllm.dl19.`` / ``bm25.run``."""

    def __init__(self, text: str) -> None:
        self.text = printable(text)
        self.pieces = [p for p in re.split(r"(?<=[./_\-,])", self.text) if p] or [""]

    def __rich_measure__(self, console: Any, options: Any) -> Any:
        from rich.measure import Measurement

        return Measurement(max(len(p) for p in self.pieces), len(self.text)).clamp(max_width=options.max_width)

    def __rich_console__(self, console: Any, options: Any) -> Any:
        from rich.text import Text

        from rankflavor.render.console import pack

        yield Text("\n".join(pack(self.pieces, options.max_width)), overflow="fold")

    def __str__(self) -> str:
        return self.text


class Glued:
    """Text as a table cell that wraps at spaces only, words joined by :data:`GLUE` kept on one
    line (``exp2 0.5812 | linear 0.6409`` never leaves a value apart from its name). The caller
    makes untrusted parts :func:`printable` before joining them."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pieces = [w.replace(GLUE, " ") for w in self.text.split(" ") if w]

    def __rich_measure__(self, console: Any, options: Any) -> Any:
        from rich.measure import Measurement

        return Measurement(max((len(p) for p in self.pieces), default=1),
                           len(self.text)).clamp(max_width=options.max_width)

    def __rich_console__(self, console: Any, options: Any) -> Any:
        from rich.text import Text

        yield Text("\n".join(wrap(self.text, max(options.max_width, 1), "", "")), overflow="fold")

    def __str__(self) -> str:
        return self.text.replace(GLUE, " ")


def print_wrapped(console: Any, text: str, indent: str = "", hang: str | None = None, escaped: bool = False) -> None:
    """Print ``text`` on ``console`` wrapped to its width (:func:`wrap`), literally (no markup),
    control characters escaped (``escaped``: the caller made its untrusted parts
    :func:`printable` itself, and joined words with :data:`GLUE`)."""
    for line in wrap(text if escaped else printable(text), console.width, indent, hang):
        console.print(line, markup=False, highlight=False, soft_wrap=True)


__all__ = ["CELL_EXTRA", "GLUE", "MIN_WIDTH", "Column", "Glued", "NameText", "page_columns", "page_widths", "paged_tables", "print_wrapped", "printable", "wrap",
           "wrap_lines"]
