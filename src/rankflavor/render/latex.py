"""LaTeX (``tabular`` with booktabs rules) of eval results, spread and diff, for papers.

Ids and names are untrusted: the ten special characters ``\\ { } $ & # ^ _ % ~`` and ``< > |``
are written as the commands that print them, so a cell shows as written and cannot run a macro.
The output needs ``\\usepackage{booktabs}``.

>>> latex_text("a_b & 50% {x} \\\\end")
'a\\\\_b \\\\& 50\\\\% \\\\{x\\\\} \\\\textbackslash{}end'
"""

from __future__ import annotations

from rankflavor.analysis.diff.api import Diff
from rankflavor.analysis.spread.api import Spread
from rankflavor.engine.results import Results
from rankflavor.render.blocks import Block, Cell, Code, diff_blocks, results_blocks, spread_blocks

_MAP = {
    "\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&", "#": r"\#",
    "^": r"\textasciicircum{}", "_": r"\_", "%": r"\%", "~": r"\textasciitilde{}",
    "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}",
}


def latex_text(text: str) -> str:
    """``text`` as literal LaTeX text (one line)."""
    return "".join(_MAP.get(ch, ch) for ch in " ".join(str(text).splitlines()))


def latex_code(text: str) -> str:
    """A flavor string in typewriter type, breakable after each comma."""
    return r"\texttt{" + latex_text(text).replace(",", r",\allowbreak{}") + "}"


def _cell(c: Cell) -> str:
    return latex_code(c.text) if isinstance(c, Code) else latex_text(c)


def _block(b: Block) -> str:
    if not b.headers:
        return "\n\n".join(_cell(line) for line in b.lines)
    # Columns holding flavor strings wrap (p{}); the others keep one line.
    wraps = [any(isinstance(row[i], Code) for row in b.rows) for i in range(len(b.headers))]
    n_wrap = max(sum(wraps), 1)
    spec = "".join(f"p{{{0.6 / n_wrap:.2f}\\linewidth}}" if w else ("r" if r else "l")
                   for w, r in zip(wraps, b.right, strict=True))
    out = [f"% {latex_text(b.title)}"] if b.title else []
    out += [r"\begin{tabular}{" + spec + "}", r"\toprule",
            " & ".join(_cell(h) for h in b.headers) + r" \\", r"\midrule"]
    out += [" & ".join(_cell(c) for c in row) + r" \\" for row in b.rows]
    out += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(out)


def blocks_latex(blocks: list[Block]) -> str:
    return "\n\n".join(_block(b) for b in blocks) + "\n"


def results_latex(results: Results, per_query: bool = False) -> str:
    """Eval results as LaTeX tables: summary with full flavors (and the per-query table)."""
    return blocks_latex(results_blocks(results, per_query))


def spread_latex(s: Spread) -> str:
    """A spread as LaTeX tables (the summaries over :attr:`Spread.in_summary`)."""
    return blocks_latex(spread_blocks(s))


def diff_latex(d: Diff, scale: str = "value", top: int = 10) -> str:
    """A diff as LaTeX tables: the knob-by-knob path and the queries that move most."""
    return blocks_latex(diff_blocks(d, scale, top))
