"""Render a :class:`rankflavor.project.gate.GateResult` for the terminal at its width: one line a
check (``PASS``/``FAIL``, measure, check, the sentence saying why), continued under the sentence
when it is longer than the line; JSON is the result's own (``GateResult.render("json")``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..project.gate import GateResult


def render_gate(result: GateResult, fmt: str = "table", width: int | None = None) -> str:
    """``table`` (text, ``width`` columns; default the terminal's) or ``json``."""
    if fmt == "json":
        return result.render("json")
    from .console import terminal_width
    from .fit import printable, wrap

    width = width or terminal_width()
    lines = wrap(printable(f"gate: config {result.config.path}; pinned flavor: {result.config.flavor_text()}"), width)
    for r in result.runs:
        base = f"baseline {r.baseline}" if r.baseline else "no baseline"
        lines += wrap(printable(f"dataset {r.dataset}, run {r.run} ({r.path}), {base}"), width)
        name_w = max((len(c.measure) for c in r.checks), default=0)
        lead = 2 + 4 + 2 + name_w + 2 + 12 + 1  # where the sentence starts
        for c in r.checks:
            head = f"  {'PASS' if c.passed else 'FAIL'}  {c.measure:<{name_w}}  {c.kind:<12} "
            hang = " " * lead if width - lead >= 30 else "      "
            lines += wrap(printable(head + c.reason), width, "", hang)
    failed = [c for c in result.checks if not c.passed]
    if failed:
        which = "; ".join(f"{c.measure} on {c.dataset}/{c.run}: {c.kind}" for c in failed)
        lines += wrap(printable(f"gate FAILED: {len(failed)} of {len(result.checks)} checks failed ({which})"), width)
    else:
        lines.append(f"gate passed: {len(result.checks)} checks")
    return "\n".join(lines) + "\n"


__all__ = ["render_gate"]
