"""Render a :class:`~rankflavor.analysis.estimate.agreement_api.JudgeAgreement`: table, JSON, CSV, Markdown.

Every format carries the same numbers (JSON in full, CSV as ``repr``, table and Markdown to four
decimals), the counts of what one side alone judged, and the reason for each number that is not
finite (:mod:`rankflavor.base.finite`).
"""

from __future__ import annotations

import csv
import io

from rankflavor.analysis.estimate.agreement_api import JudgeAgreement
from rankflavor.base.finite import dumps, text

AGREEMENT_FORMATS = ("table", "json", "csv", "md")

#: Labels of the agreement statistics, in order.
LABELS = {"kappa": "Cohen's kappa (unweighted)", "kappa_linear": "Cohen's kappa (linear weights)",
          "kappa_quadratic": "Cohen's kappa (quadratic weights)", "alpha_ordinal": "Krippendorff's alpha (ordinal)",
          "alpha_interval": "Krippendorff's alpha (interval)"}

#: The CSV's columns: ``section`` is ``counts``, ``agreement``, ``bias``, ``confusion``, ``metric`` or ``tau``.
CSV_COLUMNS = ("section", "name", "human_grade", "judge_grade", "human", "judge", "value", "low", "high", "n", "note")


def render_agreement(result: JudgeAgreement, fmt: str = "table", width: int | None = None) -> str:
    """``table`` (terminal, ``width`` columns), ``json`` (:meth:`JudgeAgreement.to_dict`), ``csv``, ``md``."""
    if fmt == "json":
        return dumps(result.to_dict()) + "\n"
    if fmt == "csv":
        return _csv(result)
    if fmt == "md":
        return _md(result)
    return _table(result, width)


def _g(x: float) -> str:
    return f"{x:g}"


def _lines(r: JudgeAgreement) -> list[str]:
    """The header sentences every text format shows."""
    g = r.grades
    return [f"agreement of judge {r.judge_source} with human {r.human_source}",
            f"pairs both graded: {g.pairs} in {g.queries} queries; graded by the human judgments only: {g.only_human} "
            f"pairs ({g.queries_only_human} queries only they judge); by the judge only: {g.only_judge} pairs "
            f"({g.queries_only_judge} queries only it judges)",
            f"grades (categories): {', '.join(_g(x) for x in g.grades) or 'none'}",
            f"bias (judge - human, mean over the pairs): {text(g.bias, '+.4f')}, {g.level:.0%} interval clustered by "
            f"query [{text(g.bias_low, '+.4f')}, {text(g.bias_high, '+.4f')}]"]


def _notes(r: JudgeAgreement) -> list[str]:
    out = [f"{k}: {why}" for k, why in r.grades.undefined.items()]
    for m in r.runs:
        out += [f"{m.name} {k}: {why}" for k, why in m.undefined.items()]
        out += [f"{m.name}: {n}" for n in m.notes]
        if m.only_human or m.only_judge:
            out.append(f"{m.name}: left out {m.only_human} query(ies) with a value under the human judgments only and "
                       f"{m.only_judge} under the judge's only")
    if r.runs:
        out += [f"{k}: {why}" for k, why in r.undefined.items()]
    return out


def _run_cells(r: JudgeAgreement) -> list[list[str]]:
    return [[m.name, str(m.n), text(m.human), text(m.judge), text(m.delta, "+.4f"), text(m.low, "+.4f"),
             text(m.high, "+.4f")] for m in r.runs]


_RUN_HEADS = ("run", "queries", "human", "judge", "delta", "low", "high")


def _table(r: JudgeAgreement, width: int | None) -> str:
    from rankflavor.render.console import make_console, print_flavor
    from rankflavor.render.fit import Column, NameText, paged_tables, print_wrapped

    buf = io.StringIO()
    console = make_console(buf, width)
    for line in _lines(r):
        print_wrapped(console, line, hang="  ")
    stats = r.grades.statistics()
    for t in paged_tables([Column("statistic", list(LABELS.values())),
                           Column("value", [text(stats[k]) for k in LABELS], "right")], console.width):
        console.print(t)
    grades = [_g(x) for x in r.grades.grades]
    if grades:
        print_wrapped(console, "confusion matrix (rows: human grade, columns: judge grade)")
        cols = [Column("human \\ judge", grades)]
        cols += [Column(g, [str(row[j]) for row in r.grades.confusion], "right") for j, g in enumerate(grades)]
        for t in paged_tables(cols, console.width):
            console.print(t)
    if r.runs and r.measure:
        console.print()
        print_wrapped(console, f"{r.name} both ways, on the queries both judge; delta = judge - human, "
                      f"{1 - r.alpha:.0%} bootstrap interval")
        console.print("flavor:", markup=False, highlight=False)
        print_flavor(console, r.measure, "  ")
        cells = _run_cells(r)
        cols = [Column(_RUN_HEADS[0], [NameText(c[0]) for c in cells], wrap=True)]
        cols += [Column(h, [c[i] for c in cells], "right") for i, h in enumerate(_RUN_HEADS) if i]
        for t in paged_tables(cols, console.width):
            console.print(t)
        print_wrapped(console, f"Kendall's tau of the runs' orders (human vs judge): {text(r.tau)}")
    for note in _notes(r):
        print_wrapped(console, f"note: {note}", hang="  ")
    return buf.getvalue()


def _csv(r: JudgeAgreement) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    g = r.grades
    why = g.undefined
    for name in ("pairs", "only_human", "only_judge", "queries", "queries_only_human", "queries_only_judge"):
        w.writerow(["counts", name, "", "", "", "", getattr(g, name), "", "", "", ""])
    for k in LABELS:
        w.writerow(["agreement", k, "", "", "", "", repr(getattr(g, k)), "", "", g.pairs, why.get(k, "")])
    note = "; ".join(f"{k}: {why[k]}" for k in ("bias", "bias_low", "bias_high") if k in why)
    w.writerow(["bias", "judge-human", "", "", "", "", repr(g.bias), repr(g.bias_low), repr(g.bias_high), g.pairs,
                note])
    for i, hg in enumerate(g.grades):
        for j, jg in enumerate(g.grades):
            w.writerow(["confusion", "count", _g(hg), _g(jg), "", "", g.confusion[i][j], "", "", "", ""])
    for m in r.runs:
        note = "; ".join([f"{k}: {v}" for k, v in m.undefined.items()] + list(m.notes))
        w.writerow(["metric", m.name, "", "", repr(m.human), repr(m.judge), repr(m.delta), repr(m.low), repr(m.high),
                    m.n, note])
    if r.runs:
        w.writerow(["tau", "kendall_tau_b", "", "", "", "", repr(r.tau), "", "", len(r.runs), r.undefined.get("tau", "")])
    return buf.getvalue()


def _md(r: JudgeAgreement) -> str:
    from rankflavor.render.md import md_code, md_text

    out = [md_text(line) + "  " for line in _lines(r)] + ["", "| statistic | value |", "|---|---:|"]
    stats = r.grades.statistics()
    out += [f"| {md_text(label)} | {text(stats[k])} |" for k, label in LABELS.items()]
    grades = [_g(x) for x in r.grades.grades]
    if grades:
        out += ["", "confusion matrix (rows: human grade, columns: judge grade)", "",
                "| human \\\\ judge | " + " | ".join(grades) + " |", "|---|" + "---:|" * len(grades)]
        out += [f"| {grades[i]} | " + " | ".join(str(c) for c in row) + " |" for i, row in enumerate(r.grades.confusion)]
    if r.runs and r.measure:
        out += ["", f"{md_text(r.name or '')} both ways (delta = judge - human, {1 - r.alpha:.0%} bootstrap "
                f"interval), flavor {md_code(r.measure)}", "", "| " + " | ".join(_RUN_HEADS) + " |",
                "|---|" + "---:|" * (len(_RUN_HEADS) - 1)]
        out += ["| " + " | ".join([md_text(c[0]), *c[1:]]) + " |" for c in _run_cells(r)]
        out += ["", f"Kendall's tau of the runs' orders (human vs judge): {text(r.tau)}"]
    notes = _notes(r)
    if notes:
        out += [""] + [f"- note: {md_text(n)}" for n in notes]
    return "\n".join(out) + "\n"


__all__ = ["AGREEMENT_FORMATS", "CSV_COLUMNS", "LABELS", "render_agreement"]
