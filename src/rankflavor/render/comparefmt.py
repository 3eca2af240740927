"""Render a :class:`rankflavor.analysis.compare.Comparison`: terminal tables (rich), JSON, CSV; Markdown and
LaTeX in :mod:`rankflavor.render.comparetex`.

Table, JSON and CSV carry every number (means, CIs, deltas, Cohen's d, wins/losses/ties, raw and
adjusted p-values, verdicts, and under ``--flavors`` which flavors flip each pair's sign and
verdict, over the flavors :class:`~rankflavor.analysis.compare.Robustness` counts, and which it does not, why); Markdown and LaTeX are summary-only formats: each system's mean
per measure, marked with the systems it beats significantly (the per-pair numbers behind the
marks are in the other three). A statistic that is not a finite number follows
:mod:`rankflavor.base.finite`: JSON ``null`` with the reason under ``"undefined"``, its word
(``-inf``, ``nan``) in the table and CSV, the reason in a table note and the CSV ``note`` column.
"""

from __future__ import annotations

import csv
import io

from rankflavor.analysis.compare import Comparison, MeasureComparison
from rankflavor.analysis.compare.robust import count_holding
from rankflavor.base.finite import dumps, text
from rankflavor.render.comparetex import letters, render_latex, render_markdown
from rankflavor.render.spreadfmt import short_names

COMPARE_FORMATS = ("table", "json", "csv", "md", "latex")


def render_compare(result: Comparison, fmt: str = "table", width: int | None = None) -> str:
    """``table`` (terminal, ``width`` columns; default the terminal's), ``json``
    (:meth:`Comparison.to_dict`), ``csv`` (a row per pair and test; the robustness columns
    :data:`ROBUST_COLUMNS` last), ``md``, ``latex``."""
    if fmt == "json":
        return dumps(result.to_dict()) + "\n"
    if fmt == "csv":
        return _csv(result)
    if fmt in ("md", "latex"):
        return render_markdown(result) if fmt == "md" else render_latex(result)
    return _table(result, width)


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
    from rankflavor.render.console import print_flavor
    from rankflavor.render.fit import GLUE, Column, NameText, paged_tables, print_wrapped, printable

    s = result.settings
    ids = dict(zip(result.systems, letters(len(result.systems)), strict=True))
    short = dict(zip(result.systems, short_names(result.systems), strict=True))
    print_ = console.print  # type: ignore[attr-defined]
    width = console.width  # type: ignore[attr-defined]

    def say(text: str, indent: str = "", hang: str | None = None) -> None:
        print_wrapped(console, text, indent, hang)

    extra = f", {m.dropped} dropped (not answered by every system)" if m.dropped else ""
    extra += f", {m.zero_filled} missing values scored 0" if m.zero_filled else ""
    print_()
    say(f"{m.name}: n = {m.n} queries{extra}")
    print_("flavor:", markup=False, highlight=False)
    print_flavor(console, m.measure, "  ")  # type: ignore[arg-type]
    ci = "CI" if s.ci_level is None else f"{s.ci_level:.0%} CI"
    systems = [Column("#", [ids[x.name] for x in m.systems]),
               Column("system", [NameText(short[x.name]) for x in m.systems], wrap=True),
               Column("mean", [_f(x.mean) for x in m.systems], "right"),
               Column(ci, [f"[{_f(x.ci[0])}, {_f(x.ci[1])}]" for x in m.systems])]
    for t in paged_tables(systems, width):
        print_(t)
    cols = [Column("A", [ids[p.a] for p in m.pairs]), Column("B", [ids[p.b] for p in m.pairs]),
            Column("delta", [_f(p.delta, True) for p in m.pairs], "right"),
            Column(ci, [f"[{_f(p.ci[0], True)}, {_f(p.ci[1], True)}]" for p in m.pairs], "right"),
            Column("d", [text(p.effect, "+.2f") for p in m.pairs], "right"),
            Column("W/L/T", [f"{p.wins}/{p.losses}/{p.ties}" for p in m.pairs])]
    cols += [Column(f"p {t}", [_p(p.pvalues[t]) for p in m.pairs], "right") for t in s.tests]
    cols += [Column(f"adj {k}", [_p(p.adjusted[k]) for p in m.pairs], "right")
             for k in (m.pairs[0].adjusted if m.pairs else {})]
    cols.append(Column("sig", ["yes" if p.significant else "no" for p in m.pairs]))
    if m.robustness is not None:
        n = len(m.robustness.counted)
        held = [count_holding(m.robustness, k) for k in range(len(m.pairs))]
        cols += [Column("sign holds", [f"{h[0]}/{n}" for h in held], "right"),
                 Column("verdict holds", [f"{h[1]}/{n}" for h in held], "right")]
    for t in paged_tables(cols, width, keep=2, title="B - A"):
        print_(t)
    for a, b, what, why in _notes(m):
        who = f"{ids[b]}-{ids[a]}" if b else ids[a]
        say(f"note: {who} {what} {why}")
    for p in m.pairs:  # a query and its change on one line
        up = ", ".join(f"{printable(str(q))}{GLUE}{d:+.3f}" for q, d in p.up) or "-"
        down = ", ".join(f"{printable(str(q))}{GLUE}{d:+.3f}" for q, d in p.down) or "-"
        print_wrapped(console, f"moved most {ids[p.b]}-{ids[p.a]}: up {up} | down {down}", escaped=True)
    r = m.robustness
    if r is not None:
        say(f"flavor robustness over {len(r.counted)} flavors (same test, correction, seed):")
        for k, p in enumerate(m.pairs):
            parts = []
            for what, flips in (("sign", r.sign_flips[k]), ("verdict", r.verdict_flips[k])):
                if flips:
                    shown = "; ".join(flips[:3]) + (f"; and {len(flips) - 3} more" if len(flips) > 3 else "")
                    parts.append(f"{what} flipped by {len(flips)}: {shown}")
                else:
                    parts.append(f"{what} holds")
            say(f"{ids[p.b]} vs {ids[p.a]}: " + " | ".join(parts), "  ", "    ")
        for f in r.excluded:
            say(f"not counted (--include-defects counts it) {f.label}: {f.defect}", "  ", "    ")
        for label, msg in list(r.errors.items())[:5]:
            say(f"left out {label}: {msg}", "  ", "    ")
        for note in r.all_notes if not r.excluded else r.notes:  # (the excluded lines above say it)
            say(f"note: {note}", "  ", "    ")


def _table(result: Comparison, width: int | None) -> str:
    from rankflavor.render.console import make_console
    from rankflavor.render.fit import print_wrapped

    buf = io.StringIO()
    console = make_console(buf, width)
    for line in _header(result):
        print_wrapped(console, line)
    for m in result.measures:
        _measure_tables(console, result, m)
    for note in result.notes:
        print_wrapped(console, f"note: {note}")
    return buf.getvalue()


__all__ = ["COMPARE_FORMATS", "ROBUST_COLUMNS", "letters", "render_compare"]
