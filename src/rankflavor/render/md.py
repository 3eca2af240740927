"""Markdown (GitHub-flavored tables) of eval results, spread and diff, for pull requests.

Ids and names are untrusted: every cell is escaped so that it shows as written and cannot end a
cell (``|``), open code or emphasis, or become HTML (``<script>`` shows as text).

>>> md_text("a|b `c` <script>")
'a\\\\|b \\\\`c\\\\` &lt;script&gt;'
"""

from __future__ import annotations

import re

from rankflavor.analysis.diff.api import Diff
from rankflavor.analysis.spread.api import Spread
from rankflavor.engine.results import Results
from rankflavor.render.blocks import Block, Cell, Code, diff_blocks, results_blocks, spread_blocks

# Characters with inline meaning (code, emphasis, links, cells, strikethrough, math); block-level
# markers only act at the start of a line, and every line here starts with fixed text.
_SPECIAL = re.compile(r"([\\`*_\[\]|~$])")


def md_text(text: str) -> str:
    """``text`` as literal Markdown inline text (one line; HTML characters as entities)."""
    text = " ".join(str(text).splitlines())
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _SPECIAL.sub(r"\\\1", text)


def md_code(text: str) -> str:
    """``text`` in a code span; plain escaped text when it holds a backtick (a span cannot)."""
    text = " ".join(str(text).splitlines())
    if "`" in text or "<" in text or "&" in text:
        return md_text(text)
    return "`" + text.replace("|", "\\|") + "`"


def _cell(c: Cell) -> str:
    return md_code(c.text) if isinstance(c, Code) else md_text(c)


def _block(b: Block) -> str:
    if not b.headers:
        return "\n".join(_cell(line) + ("  " if i < len(b.lines) - 1 else "") for i, line in enumerate(b.lines))
    out = [f"**{md_text(b.title)}**", ""] if b.title else []
    out.append("| " + " | ".join(_cell(h) for h in b.headers) + " |")
    out.append("|" + "|".join("---:" if r else "---" for r in b.right) + "|")
    out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in b.rows]
    return "\n".join(out)


def blocks_md(blocks: list[Block]) -> str:
    return "\n\n".join(_block(b) for b in blocks) + "\n"


def results_md(results: Results, per_query: bool = False) -> str:
    """Eval results as Markdown: the summary table with full flavors (and the per-query table)."""
    return blocks_md(results_blocks(results, per_query))


def spread_md(s: Spread) -> str:
    """A spread as Markdown (the summaries over :attr:`Spread.in_summary`)."""
    return blocks_md(spread_blocks(s))


def diff_md(d: Diff, scale: str = "value", top: int = 10) -> str:
    """A diff as Markdown: A, B, the knob-by-knob path and the queries that move most."""
    return blocks_md(diff_blocks(d, scale, top))
