"""Render a :class:`rankflavor.compare.Comparison`: terminal tables (rich), JSON, CSV; Markdown and
LaTeX in :mod:`rankflavor.render.comparetex`.

Table, JSON and CSV carry every number (means, CIs, deltas, Cohen's d, wins/losses/ties, raw and
adjusted p-values, verdicts, and under ``--flavors`` which flavors flip each pair's sign and
verdict, over the flavors :class:`~rankflavor.compare.Robustness` counts, and which it does not, why); Markdown and LaTeX are summary-only formats: each system's mean
per measure, marked with the systems it beats significantly (the per-pair numbers behind the
marks are in the other three). A statistic that is not a finite number follows
:mod:`rankflavor.finite`: JSON ``null`` with the reason under ``"undefined"``, its word
(``-inf``, ``nan``) in the table and CSV, the reason in a table note and the CSV ``note`` column.
"""

from __future__ import annotations

import csv
import io

from ..compare import Comparison, MeasureComparison
from ..compare.robust import count_holding
from ..finite import dumps, text
from .comparetex import letters, render_latex, render_markdown
from .spreadfmt import short_names

COMPARE_FORMATS = ("table", "json", "csv", "md", "latex")


def render_compare(result: Comparison, fmt: str = "table") -> str:
    """``table``, ``json`` (:meth:`Comparison.to_dict`), ``csv`` (a row per pair and test; the
    robustness columns :data:`ROBUST_COLUMNS` last), ``md``, ``latex``."""
    if fmt == "json":
        return dumps(result.to_dict()) + "\n"
    if fmt == "csv":
        return _csv(result)
    if fmt in ("md", "latex"):
        return render_markdown(result) if fmt == "md" else render_latex(result)
    return _table(result)


def _f(x: float | None, signed: bool = False) -> str:
    return text(x, "+.4f" if signed else ".4f")


def _p(x: float) -> str:
    """A p-value: four decimals, or two significant digits below 0.0001 (never a bare 0.0000)."""
    return text(x, ".4f" if not 0 <= x < 1e-4 else ".1e")


def _notes(m: MeasureComparison) -> list[tuple[str, str, str, str]]:
    """(a, b or "", field, reason) of every statistic of ``m`` that is not a finite number."""
    out = [(x.name, "", k, why) for x in m.systems for k, why in x.undefined.items()]
    return out + [(p.a, p.b, k, why) for p in m.pairs for k, why in p.undefined.items()]


#: The CSV's flavor-robustness columns (after ``note``, so the earlier columns keep their places;
#: empty without ``--flavors``): the flavors counted, whether the sign and the verdict hold in all
#: of them, the labels of those that flip each ("; "), and the flavors re-tested but not counted
#: ("label: reason", " | ") -- the JSON's ``robustness``.
ROBUST_COLUMNS = ("flavors_counted", "sign_holds", "verdict_holds", "sign_flipped_by", "verdict_flipped_by",
                  "flavors_excluded")


def _robust_cells(m: MeasureComparison, k: int) -> list[object]:
    r = m.robustness
    if r is None:
        return [""] * len(ROBUST_COLUMNS)
    sign, verdict = r.sign_flips[k], r.verdict_flips[k]
    return [len(r.counted), not sign, not verdict, "; ".join(sign), "; ".join(verdict),
            " | ".join(f"{f.label}: {f.defect}" for f in r.excluded)]


def _csv(result: Comparison) -> str:
    """A row per pair and test; under ``tukey`` the Tukey HSD has a row of its own (its p is already adjusted)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["measure", "name", "n", "a", "b", "mean_a", "mean_b", "delta", "ci_low", "ci_high", "cohens_d", "wins",
                "losses", "ties", "test", "p", "correction", "p_adjusted", "significant", "alpha", "seed", "n_resamples",
                "note", *ROBUST_COLUMNS])
    s = result.settings
    for m in result.measures:
        means = {x.name: x.mean for x in m.systems}
        system_notes = {x.name: x.undefined for x in m.systems}
        for k, p in enumerate(m.pairs):
            robust = _robust_cells(m, k)
            why = [f"{who} {k} {r}" for who in (p.a, p.b) for k, r in system_notes[who].items()]
            note = "; ".join(why + [f"{k} {r}" for k, r in p.undefined.items()])
            rows = [(t, p.pvalues[t], p.adjusted.get(t)) for t in p.pvalues]
            rows += [(t, v, v) for t, v in p.adjusted.items() if t not in p.pvalues]
            for t, raw, adj in rows:
                w.writerow([m.measure, m.name, m.n, p.a, p.b, repr(means[p.a]), repr(means[p.b]), repr(p.delta),
                            repr(p.ci[0]), repr(p.ci[1]), repr(p.effect), p.wins, p.losses, p.ties, t, repr(raw),
                            s.correction if adj is not None else "", "" if adj is None else repr(adj),
                            p.significant if t == s.verdict_key else "", s.alpha, s.seed, s.n_resamples, note, *robust])
    return buf.getvalue()


def _header(result: Comparison) -> list[str]:
    s = result.settings
    versus = f"against baseline {s.baseline}" if s.baseline else "all pairs"
    return [f"compare {len(result.systems)} systems, {versus}", s.describe()]


def _measure_tables(console: object, result: Comparison, m: MeasureComparison) -> None:
    from rich.markup import escape
    from rich.table import Table

    s = result.settings
    ids = dict(zip(result.systems, letters(len(result.systems)), strict=True))
    short = dict(zip(result.systems, short_names(result.systems), strict=True))
    print_ = console.print  # type: ignore[attr-defined]
    extra = f", {m.dropped} dropped (not answered by every system)" if m.dropped else ""
    extra += f", {m.zero_filled} missing values scored 0" if m.zero_filled else ""
    print_(f"\n{escape(m.name)}: n = {m.n} queries{extra}")
    print_(f"flavor: {escape(m.measure)}", soft_wrap=True)
    t = Table()
    ci = "CI" if s.ci_level is None else f"{s.ci_level:.0%} CI"
    for col in ("#", "system", "mean", ci):
        t.add_column(col, justify="right" if col in ("mean",) else "left")
    for x in m.systems:
        t.add_row(ids[x.name], escape(short[x.name]), _f(x.mean), escape(f"[{_f(x.ci[0])}, {_f(x.ci[1])}]"))
    print_(t)
    pt = Table(title="B - A")
    cols = ["A", "B", "delta", ci, "d", "W/L/T"] + [f"p {k}" for k in s.tests]
    cols += [f"adj {k}" for k in (m.pairs[0].adjusted if m.pairs else {})] + ["sig"]
    if m.robustness is not None:
        cols += ["sign holds", "verdict holds"]
    for col in cols:
        pt.add_column(col, justify="left" if col in ("A", "B", "W/L/T", "sig") else "right")
    for k, p in enumerate(m.pairs):
        row = [ids[p.a], ids[p.b], _f(p.delta, True), escape(f"[{_f(p.ci[0], True)}, {_f(p.ci[1], True)}]"), text(p.effect, "+.2f"),
               f"{p.wins}/{p.losses}/{p.ties}"] + [_p(p.pvalues[t]) for t in s.tests]
        row += [_p(v) for v in p.adjusted.values()] + ["yes" if p.significant else "no"]
        if m.robustness is not None:
            n = len(m.robustness.counted)
            sign, verdict = count_holding(m.robustness, k)
            row += [f"{sign}/{n}", f"{verdict}/{n}"]
        pt.add_row(*row)
    print_(pt)
    for a, b, what, why in _notes(m):
        who = f"{ids[b]}-{ids[a]}" if b else ids[a]
        print_(f"note: {who} {escape(what)} {escape(why)}", soft_wrap=True)
    for p in m.pairs:
        up = ", ".join(f"{q} {d:+.3f}" for q, d in p.up) or "-"
        down = ", ".join(f"{q} {d:+.3f}" for q, d in p.down) or "-"
        print_(f"moved most {ids[p.b]}-{ids[p.a]}: up {escape(up)} | down {escape(down)}", soft_wrap=True)
    r = m.robustness
    if r is not None:
        print_(f"flavor robustness over {len(r.counted)} flavors (same test, correction, seed):")
        for k, p in enumerate(m.pairs):
            parts = []
            for what, flips in (("sign", r.sign_flips[k]), ("verdict", r.verdict_flips[k])):
                if flips:
                    shown = "; ".join(flips[:3]) + (f"; and {len(flips) - 3} more" if len(flips) > 3 else "")
                    parts.append(f"{what} flipped by {len(flips)}: {shown}")
                else:
                    parts.append(f"{what} holds")
            print_(f"  {ids[p.b]} vs {ids[p.a]}: " + escape(" | ".join(parts)), soft_wrap=True)
        for f in r.excluded:
            print_(f"  not counted (--include-defects counts it) {escape(f.label)}: {escape(str(f.defect))}",
                   soft_wrap=True)
        for label, msg in list(r.errors.items())[:5]:
            print_(f"  left out {escape(label)}: {escape(msg)}", soft_wrap=True)
        for note in r.all_notes if not r.excluded else r.notes:  # (the excluded lines above say it)
            print_(f"  note: {escape(note)}", soft_wrap=True)


def _table(result: Comparison) -> str:
    from rich.console import Console
    from rich.markup import escape

    buf = io.StringIO()
    console = Console(file=buf, width=200, force_terminal=False, color_system=None)
    for line in _header(result):
        console.print(escape(line), soft_wrap=True)
    for m in result.measures:
        _measure_tables(console, result, m)
    for note in result.notes:
        console.print(f"note: {escape(note)}")
    return buf.getvalue()


__all__ = ["COMPARE_FORMATS", "ROBUST_COLUMNS", "letters", "render_compare"]
