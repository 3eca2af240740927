"""Render a :class:`rankflavor.analysis.identify.Identification`: plain text, or JSON."""

from __future__ import annotations

from rankflavor.analysis.identify.result import Identification
from rankflavor.base.finite import dumps

IDENTIFY_FORMATS = ("table", "json")


def render_identification(result: Identification, fmt: str = "table", shown: int = 8, width: int | None = None) -> str:
    """``table`` (terminal text, ``width`` columns, default the terminal's; ``shown`` candidates per
    group) or ``json`` (:meth:`Identification.to_dict`)."""
    if fmt == "json":
        return dumps(result.to_dict()) + "\n"
    from rankflavor.render.console import terminal_width

    lines = _text(result, shown, width or terminal_width())
    return "\n".join(lines) + "\n"


def _some(items: tuple[str, ...] | list[str], n: int = 8) -> str:
    head = ", ".join(items[:n])
    return head + (f" (+{len(items) - n} more)" if len(items) > n else "")


def _text(r: Identification, shown: int, width: int) -> list[str]:
    from rankflavor.render.fit import printable, wrap

    def say(text: str, indent: str = "", hang: str | None = None) -> None:
        lines.extend(wrap(printable(text), width, indent, hang))

    what = []
    if r.value is not None:
        what.append(f"mean {r.value}")
    if r.per_query_source:
        what.append(f"{r.n_reported} per-query values from {r.per_query_source}")
    lines: list[str] = []
    say(f"{r.measure.name}: {' and '.join(what)}; {r.n_flavors} flavors tried"
        + (f" ({r.errors} refused by the input)" if r.errors else ""))
    say(f"rule: {r.rule}")
    lines.append("")
    # the knob list beside the preset names when there is room for it, else under them
    label_w = 22 if width >= 72 else 0
    if r.groups:
        n = len(r.candidates)
        say(f"{n} flavor(s) reproduce it, in {len(r.groups)} group(s); within a group every per-query "
            "value is the same, so this input cannot tell its flavors apart:")
        for i, g in enumerate(r.groups[:10], 1):
            lines.append(f"[{i}] {len(g.candidates)} flavor(s), mean {g.best.mean:.6f}")
            for c in g.candidates[:shown]:  # knobs away from the defaults; the full strings are in the JSON
                name = "preset " + " = ".join(c.presets) if c.presets else "grid"
                knobs = ", ".join(c.changed) or "rankflavor defaults"
                if label_w and len(name) <= label_w:
                    say(f"{name:<{label_w}} {knobs}", "    ", " " * (5 + label_w))
                else:
                    say(name, "    ")
                    say(knobs, "      ", "      ")
            if len(g.candidates) > shown:
                lines.append(f"    ... {len(g.candidates) - shown} more")
            if g.indistinct:
                say("same numbers whatever: " + "; ".join(f"{k} {'/'.join(v)}" for k, v in g.indistinct), "    ",
                    "      ")
            for e in g.evidence:
                say(f"to separate {e}", "      ", "        ")
        if len(r.groups) > 10:
            lines.append(f"... {len(r.groups) - 10} more group(s)")
        for s in r.separations:
            if s.queries:
                say(f"per-query values would separate [1] from [{s.other + 1}] on queries {_some(s.queries)}")
    elif r.per_query_source and r.nearest is not None and r.unexplained:
        say(f"no flavor explains every query: the nearest, {r.nearest.label} ({r.nearest.flavor}), "
            f"explains {r.nearest_explained} of {r.n_reported}")
        alone = [u for u in r.unexplained if not u.by_some]
        say(f"{len(alone)} query(ies) no flavor explains (different judgments, a truncated run, or a bug "
            "in that tool); * = another flavor reproduces it:")
        lines.append(f"  {'query':<12} {'line':>5} {'reported':>10} {'nearest':>10} {'closest any':>12}")
        for u in sorted(r.unexplained, key=lambda u: u.by_some)[:50]:
            near = "-" if u.nearest is None else f"{u.nearest:.6f}"
            best = "-" if u.best_value is None else f"{u.best_value:.6f}"
            row = printable(f"{'*' if u.by_some else ' '} {u.query:<12} {u.line or '-':>5} {u.reported:>10.6f} "
                            f"{best:>10} {near:>12}")
            lines.extend([row] if len(row) <= width else wrap(row, width, "", "    "))
        if len(r.unexplained) > 50:
            lines.append(f"  ... {len(r.unexplained) - 50} more")
    else:
        lines.append("no flavor explains it")
    for note in r.notes:
        say(f"note: {note}")
    return lines


__all__ = ["IDENTIFY_FORMATS", "render_identification"]
