"""Render a :class:`rankflavor.identify.Identification`: plain text, or JSON."""

from __future__ import annotations

from ..finite import dumps
from ..identify.result import Identification

IDENTIFY_FORMATS = ("table", "json")


def render_identification(result: Identification, fmt: str = "table", shown: int = 8) -> str:
    """``table`` (terminal text; ``shown`` candidates per group) or ``json`` (:meth:`Identification.to_dict`)."""
    if fmt == "json":
        return dumps(result.to_dict()) + "\n"
    return _text(result, shown)


def _some(items: tuple[str, ...] | list[str], n: int = 8) -> str:
    head = ", ".join(items[:n])
    return head + (f" (+{len(items) - n} more)" if len(items) > n else "")


def _text(r: Identification, shown: int) -> str:
    what = []
    if r.value is not None:
        what.append(f"mean {r.value}")
    if r.per_query_source:
        what.append(f"{r.n_reported} per-query values from {r.per_query_source}")
    lines = [f"{r.measure.name}: {' and '.join(what)}; {r.n_flavors} flavors tried"
             + (f" ({r.errors} refused by the input)" if r.errors else ""),
             f"rule: {r.rule}", ""]
    if r.groups:
        n = len(r.candidates)
        lines.append(f"{n} flavor(s) reproduce it, in {len(r.groups)} group(s); within a group every per-query "
                     "value is the same, so this input cannot tell its flavors apart:")
        for i, g in enumerate(r.groups[:10], 1):
            lines.append(f"[{i}] {len(g.candidates)} flavor(s), mean {g.best.mean:.6f}")
            for c in g.candidates[:shown]:  # knobs away from the defaults; the full strings are in the JSON
                name = "preset " + " = ".join(c.presets) if c.presets else "grid"
                lines.append(f"    {name:<22} {', '.join(c.changed) or 'rankflavor defaults'}")
            if len(g.candidates) > shown:
                lines.append(f"    ... {len(g.candidates) - shown} more")
            if g.indistinct:
                lines.append("    same numbers whatever: " + "; ".join(f"{k} {'/'.join(v)}" for k, v in g.indistinct))
            for e in g.evidence:
                lines.append(f"      to separate {e}")
        if len(r.groups) > 10:
            lines.append(f"... {len(r.groups) - 10} more group(s)")
        for s in r.separations:
            if s.queries:
                lines.append(f"per-query values would separate [1] from [{s.other + 1}] on queries {_some(s.queries)}")
    elif r.per_query_source and r.nearest is not None and r.unexplained:
        lines.append(f"no flavor explains every query: the nearest, {r.nearest.label} ({r.nearest.flavor}),\n"
                     f"explains {r.nearest_explained} of {r.n_reported}")
        alone = [u for u in r.unexplained if not u.by_some]
        lines.append(f"{len(alone)} query(ies) no flavor explains (different judgments, a truncated run, or a bug "
                     "in that tool); * = another flavor reproduces it:")
        lines.append(f"  {'query':<12} {'line':>5} {'reported':>10} {'nearest':>10} {'closest any':>12}")
        for u in sorted(r.unexplained, key=lambda u: u.by_some)[:50]:
            near = "-" if u.nearest is None else f"{u.nearest:.6f}"
            best = "-" if u.best_value is None else f"{u.best_value:.6f}"
            lines.append(f"{'*' if u.by_some else ' '} {u.query:<12} {u.line or '-':>5} {u.reported:>10.6f} {best:>10} "
                         f"{near:>12}")
        if len(r.unexplained) > 50:
            lines.append(f"  ... {len(r.unexplained) - 50} more")
    else:
        lines.append("no flavor explains it")
    lines += [f"note: {n}" for n in r.notes]
    return "\n".join(lines) + "\n"


__all__ = ["IDENTIFY_FORMATS", "render_identification"]
