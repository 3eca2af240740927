"""Markdown and LaTeX tables of a comparison, for papers: one row per system, one column per
measure, each value marked with the letters of the systems it beats significantly (as ranx does).

A dagger after the letters marks a win whose verdict does not hold in every flavor the
robustness check counts (only when one was run); the caption names how many it counts and the
flavors it leaves out, with their reason (:class:`~rankflavor.analysis.compare.Robustness`).
"""

from __future__ import annotations

from rankflavor.analysis.compare import Comparison, MeasureComparison
from rankflavor.render.md import md_text


def letters(n: int) -> list[str]:
    """Short ids of the systems: a, b, ..., z, aa, ab, ..."""
    out = []
    for i in range(n):
        s, i = "", i + 1
        while i:
            i, r = divmod(i - 1, 26)
            s = chr(97 + r) + s
        out.append(s)
    return out


def _beats(m: MeasureComparison, system: str, ids: dict[str, str]) -> tuple[str, bool]:
    """Letters of the systems ``system`` beats significantly under ``m``, and whether any such win is flavor-fragile."""
    means = {x.name: x.mean for x in m.systems}
    found: list[str] = []
    fragile = False
    for k, p in enumerate(m.pairs):
        if not p.significant or system not in (p.a, p.b):
            continue
        other = p.b if p.a == system else p.a
        if means[system] > means[other]:
            found.append(ids[other])
            if m.robustness is not None and m.robustness.verdict_flips[k]:
                fragile = True
    return "".join(sorted(found, key=lambda s: (len(s), s))), fragile


def _cells(result: Comparison) -> list[list[tuple[str, bool, str, bool]]]:
    """Per system, per measure: (value, is best, beaten letters, fragile)."""
    ids = dict(zip(result.systems, letters(len(result.systems)), strict=True))
    rows = []
    for i, name in enumerate(result.systems):
        row = []
        for m in result.measures:
            best = max(x.mean for x in m.systems)
            beats, fragile = _beats(m, name, ids)
            row.append((f"{m.systems[i].mean:.4f}", m.systems[i].mean == best, beats, fragile))
        rows.append(row)
    return rows


def _caption(result: Comparison) -> str:
    s = result.settings
    ns = ", ".join(f"{m.name} n={m.n}" for m in result.measures)
    text = (f"Superscripts: systems significantly worse ({s.verdict_key}, {s.correction} correction, alpha={s.alpha:g}, "
            f"{s.n_resamples} resamples, seed {s.seed}; {ns}).")
    checked = [(m.name, m.robustness) for m in result.measures if m.robustness is not None]
    if checked:
        text += (" Dagger: that verdict does not hold in every flavor counted ("
                 + ", ".join(f"{name}: {len(r.counted)}" for name, r in checked) + ").")
        left = dict.fromkeys(f"{f.label}: {f.defect}" for _, r in checked for f in r.excluded)
        if left:
            text += (" Not counted (a tool's known defect; --include-defects counts them): "
                     + " | ".join(left) + ".")
        counted = dict.fromkeys(f.label for _, r in checked if r.include_defects for f in r.flavors if f.defect)
        if counted:
            text += " Counted though they reproduce a tool's known defect (--include-defects): " + " | ".join(counted) + "."
    return text


def render_markdown(result: Comparison) -> str:
    """A GitHub Markdown table; best value in bold, markers as ``<sup>``."""
    ids = letters(len(result.systems))
    # system and measure names are untrusted text: escaped so they show as written (md_text)
    lines = ["| # | system | " + " | ".join(md_text(m.name) for m in result.measures) + " |",
             "|---|---|" + "---:|" * len(result.measures)]
    for sid, name, row in zip(ids, result.systems, _cells(result), strict=True):
        cells = []
        for value, best, beats, fragile in row:
            v = f"**{value}**" if best else value
            mark = beats + ("†" if fragile else "")
            cells.append(v + (f"<sup>{mark}</sup>" if mark else ""))
        lines.append(f"| {sid} | {md_text(name)} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n\n" + md_text(_caption(result)) + "\n"


_TEX = {"\\": r"\textbackslash{}", "_": r"\_", "&": r"\&", "%": r"\%", "#": r"\#", "$": r"\$",
        "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def _tex(text: str) -> str:
    return "".join(_TEX.get(c, c) for c in text)


def render_latex(result: Comparison) -> str:
    """A booktabs ``table``; best value in bold, markers as ``$^{ab\\dagger}$``."""
    ids = letters(len(result.systems))
    out = [r"\begin{table}[t]", r"\centering", r"\caption{" + _tex(_caption(result)) + "}",
           r"\begin{tabular}{cl" + "c" * len(result.measures) + "}", r"\toprule",
           r"\textbf{\#} & \textbf{System} & " + " & ".join(r"\textbf{" + _tex(m.name) + "}" for m in result.measures)
           + r" \\", r"\midrule"]
    for sid, name, row in zip(ids, result.systems, _cells(result), strict=True):
        cells = []
        for value, best, beats, fragile in row:
            v = r"\textbf{" + value + "}" if best else value
            mark = beats + (r"\dagger" if fragile else "")
            cells.append(v + (r"$^{" + mark + "}$" if mark else ""))
        out.append(f"{sid} & {_tex(name)} & " + " & ".join(cells) + r" \\")
    out += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(out) + "\n"


__all__ = ["letters", "render_latex", "render_markdown"]
