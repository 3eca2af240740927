"""Reading rankflavor's outputs back, for the tests that compare formats (test_formats_agree.py)
and line orders (test_line_order.py): the cells of a terminal table, a Markdown table and a LaTeX
tabular, CSV rows, and whether a printed number is a JSON value at the precision printed.

Written here, from the formats' definitions (box-drawing characters, GitHub pipe tables, ``&``
and ``\\\\``, HTML elements by class), not with rankflavor's own renderers."""

from __future__ import annotations

import csv
import io
import math
import re
from html.parser import HTMLParser

from click.testing import CliRunner

from rankflavor.cli.main import cli

#: The terminal width every table is rendered at.
WIDTH = "200"

_NUMBER = re.compile(r"([-+]?)(\d+)(?:\.(\d+))?(?:e([-+]?\d+))?")


def invoke(*args: str, code: int = 0) -> str:
    """Standard output of ``rankflavor ARGS`` at :data:`WIDTH` columns; the exit code must be ``code``."""
    r = CliRunner().invoke(cli, [str(a) for a in args], env={"COLUMNS": WIDTH})
    assert r.exit_code == code, (args, r.output, r.exception)
    return r.stdout


def table_rows(text: str) -> list[list[str]]:
    """The body rows of every terminal (rich) table: a row per line drawn with ``│``."""
    return [[c.strip() for c in line.strip()[1:-1].split("│")] for line in text.splitlines()
            if line.startswith("│")]


_MD_ESCAPED = re.compile(r"\\([\\`*_\[\]|~$])")


def md_rows(text: str) -> list[list[str]]:
    """The body rows of every Markdown pipe table (not the header and rule rows), unescaped."""
    lines = text.splitlines()
    out = []
    for i, line in enumerate(lines):
        if not line.startswith("|") or _md_rule(line) or (i + 1 < len(lines) and _md_rule(lines[i + 1])):
            continue
        cells = re.split(r"(?<!\\)\|", line)[1:-1]
        out.append([_MD_ESCAPED.sub(r"\1", c.strip().strip("`")).replace("&lt;", "<").replace("&gt;", ">")
                    .replace("&amp;", "&") for c in cells])
    return out


def _md_rule(line: str) -> bool:
    return re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", line) is not None


_TEX = {r"\textbackslash{}": "\\", r"\{": "{", r"\}": "}", r"\$": "$", r"\&": "&", r"\#": "#",
        r"\textasciicircum{}": "^", r"\_": "_", r"\%": "%", r"\textasciitilde{}": "~", r"\textless{}": "<",
        r"\textgreater{}": ">", r"\textbar{}": "|", r",\allowbreak{}": ","}


def latex_rows(text: str) -> list[list[str]]:
    """The body rows of every LaTeX tabular (not the header row above ``\\midrule``), unescaped."""
    lines = text.splitlines()
    out = []
    for i, line in enumerate(lines):
        if not line.endswith(r" \\") or (i + 1 < len(lines) and lines[i + 1].strip() == r"\midrule"):
            continue
        cells = re.split(r"(?<!\\) & ", line[:-3])
        row = []
        for c in cells:
            c = re.sub(r"^\\texttt\{(.*)\}$", r"\1", c.strip())
            for k, v in _TEX.items():
                c = c.replace(k, v)
            row.append(c)
        out.append(row)
    return out


def csv_rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def agrees(cell: str, value: float | None) -> bool:
    """Does ``cell`` print ``value`` at the precision it is printed at (half a unit of its last
    digit)? A missing or non-finite value is printed as its word (``nan``, ``inf``, ``-inf``) or ``-``."""
    cell = cell.strip().rstrip("%")
    if value is None or not math.isfinite(value):
        if value is None:
            return cell in ("-", "nan", "")
        return cell.lstrip("+") == format(value, "").lstrip("+")
    m = _NUMBER.fullmatch(cell)
    if m is None:
        return False
    decimals = len(m.group(3) or "")
    scale = 10.0 ** int(m.group(4) or 0)
    return abs(float(cell) - value) <= 0.5 * 10.0 ** -decimals * scale * (1 + 1e-9) + 1e-15


def flat(text: str) -> str:
    """``text`` with every run of white space (line wraps of a table) as one space."""
    return " ".join(text.split())


class _ByClass(HTMLParser):
    """The text of every element with a class, and the cells of every table row inside a table of a class."""

    def __init__(self, table_class: str) -> None:
        super().__init__(convert_charrefs=True)
        self.table_class = table_class
        self.open: list[tuple[str, list[str], list[str]]] = []  # (tag, classes, text pieces)
        self.texts: dict[str, list[str]] = {}
        self.rows: list[list[str]] = []
        self.in_table = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("br", "meta", "link", "img", "input", "hr"):
            return
        classes = (dict(attrs).get("class") or "").split()
        if tag == "table" and self.table_class in classes:
            self.in_table += 1
        if tag == "tr" and self.in_table:
            self.rows.append([])
        self.open.append((tag, classes, []))

    def handle_endtag(self, tag: str) -> None:
        while self.open:
            name, classes, pieces = self.open.pop()
            text = " ".join("".join(pieces).split())
            for c in classes:
                self.texts.setdefault(c, []).append(text)
            if name in ("td", "th") and self.in_table and self.rows:
                self.rows[-1].append(text)
            if self.open:
                self.open[-1][2].append("".join(pieces))
            if name == "table" and self.table_class in classes:
                self.in_table -= 1
            if name == tag:
                break

    def handle_data(self, data: str) -> None:
        if self.open:
            self.open[-1][2].append(data)


def html_parts(text: str, table_class: str) -> tuple[list[list[str]], dict[str, list[str]]]:
    """The rows (header and body) of the tables of ``table_class`` in an HTML page, as cell texts,
    and the text of every element by each of its classes (white space collapsed)."""
    p = _ByClass(table_class)
    p.feed(text)
    p.close()
    return [r for r in p.rows if r], p.texts
