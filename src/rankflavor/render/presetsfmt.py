"""``rankflavor flavors --presets``: one block per preset, readable in any terminal width.

Each block names the preset, what it reproduces, the knobs it sets away from rankflavor's
defaults (printed once at the top), its evidence, and the defect it reproduces if it is marked so.
Prose wraps at spaces; knob lists wrap only after commas.
"""

from __future__ import annotations

import textwrap

from rankflavor.render.console import comma_pieces, knob_delta_text, pack, terminal_width

_INDENT = "  "


def _knobs(label: str, text: str, width: int) -> list[str]:
    lines = pack(comma_pieces(text), max(width - len(_INDENT) - len(label), 20))
    return [_INDENT + (label if i == 0 else " " * len(label)) + line for i, line in enumerate(lines)]


def _prose(label: str, text: str, width: int) -> list[str]:
    return textwrap.wrap(label + text, max(width, 30), initial_indent=_INDENT, subsequent_indent=_INDENT,
                         break_long_words=False, break_on_hyphens=False)


def render_presets(width: int | None = None) -> str:
    """Every registered preset as a block of text, ``width`` columns (default: the terminal's)."""
    from rankflavor.flavor.flavor import Flavor
    from rankflavor.presets import PRESETS

    width = width or terminal_width()
    defaults = Flavor().knobs()
    lines = [f"{len(PRESETS)} presets; each lists the knobs it sets away from rankflavor's defaults:"]
    lines += _knobs("", ",".join(f"{n}={v}" for n, v in defaults.items()), width)
    for p in PRESETS.values():
        lines += ["", p.name + ("  [reproduces a known defect]" if p.defect else "")]
        lines += _prose("", p.summary, width)
        lines += _knobs("knobs: ", knob_delta_text(p.flavor.knobs(), defaults) or "(the defaults)", width)
        lines += _prose("evidence: ", p.evidence, width)
        if p.default_metrics:
            lines += _prose("default measures: ", ", ".join(p.default_metrics), width)
        if p.defect:
            lines += _prose("defect: ", p.defect, width)
    return "\n".join(lines) + "\n"
