"""Render an :class:`~rankflavor.analysis.estimate.Estimates`: terminal table, JSON, CSV, Markdown.

One result, every format: each renders the same numbers (JSON in full, CSV as ``repr``, table
and Markdown to four decimals) and says what each estimator estimates, with a note for every
number that is not finite (:mod:`rankflavor.base.finite`) and every query no estimate read.
"""

from __future__ import annotations

import csv
import io

from rankflavor.analysis.estimate.ppi import Interval
from rankflavor.analysis.estimate.result import ASSUMPTION, ESTIMATORS, MEANINGS, Estimates, RunEstimate
from rankflavor.base.finite import dumps, text

ESTIMATE_FORMATS = ("table", "json", "csv", "md")

#: The CSV's columns, one row per (run, estimator).
CSV_COLUMNS = ("run", "estimator", "label", "measure", "name", "point", "low", "high", "se", "width", "n",
               "n_unlabelled", "lambda", "alpha", "level", "alternative", "tuning", "width_ratio", "effective_n",
               "note")


def render_estimates(result: Estimates, fmt: str = "table", width: int | None = None) -> str:
    """``table`` (terminal, ``width`` columns), ``json`` (:meth:`Estimates.to_dict`), ``csv``, ``md``."""
    if fmt == "json":
        return dumps(result.to_dict()) + "\n"
    if fmt == "csv":
        return _csv(result)
    if fmt == "md":
        return _md(result)
    return _table(result, width)


def _header(result: Estimates) -> str:
    tuning = {"ppi++": "PPI++ (lambda tuned)", "ppi": "plain PPI (lambda = 1)"}.get(result.tuning, result.tuning)
    return (f"estimate {result.name}: {result.level:.0%} intervals ({result.alternative}), {tuning}, "
            f"{len(result.runs)} run(s)")


def _cells(iv: Interval) -> list[str]:
    return [text(iv.point), text(iv.low), text(iv.high), text(iv.width if iv.n > 1 else float("nan")),
            str(iv.n), str(iv.n_unlabelled), text(iv.lam, ".4f")]


def _bought(r: RunEstimate) -> str:
    if r.ppi.n_unlabelled == 0:
        return "LLM labels bought: nothing (no unlabelled query)"
    if r.width_ratio != r.width_ratio:  # NaN
        return "LLM labels bought: not measurable (see the notes)"
    return (f"LLM labels bought: PPI interval {text(r.width_ratio, '.4f')} x the human-only width; effective "
            f"sample size {text(r.effective_n, '.1f')} labelled queries (from {r.human.n})")


def _notes(r: RunEstimate) -> list[str]:
    """Every reason and note of a run, each once, in a fixed order."""
    out: list[str] = []
    for key, iv in r.estimates().items():
        for fld, why in iv.undefined.items():
            out.append(f"{ESTIMATORS[key]} {fld}: {why}")
        out += [f"{ESTIMATORS[key]}: {n}" for n in iv.notes]
    out += [f"{k}: {why}" for k, why in r.undefined.items()]
    return out + r.notes()


def _table(result: Estimates, width: int | None) -> str:
    from rankflavor.render.console import make_console, print_flavor
    from rankflavor.render.fit import Column, paged_tables, print_wrapped

    buf = io.StringIO()
    console = make_console(buf, width)
    print_wrapped(console, _header(result))
    console.print("flavor:", markup=False, highlight=False)
    print_flavor(console, result.measure, "  ")
    for r in result.runs:
        console.print()
        print_wrapped(console, f"run {r.name}: {r.human.n} labelled queries, {r.ppi.n_unlabelled} unlabelled")
        rows = [(ESTIMATORS[k], _cells(iv)) for k, iv in r.estimates().items()]
        columns = [Column("estimator", [label for label, _ in rows])]
        for i, head in enumerate(("estimate", "low", "high", "width", "n", "unlabelled", "lambda")):
            columns.append(Column(head, [c[i] for _, c in rows], "right"))
        for t in paged_tables(columns, console.width):
            console.print(t)
        print_wrapped(console, _bought(r))
        for note in _notes(r):
            print_wrapped(console, f"note: {note}", hang="  ")
    console.print()
    for key, meaning in MEANINGS.items():
        print_wrapped(console, f"{ESTIMATORS[key]}: {meaning}", hang="  ")
    print_wrapped(console, f"assumption: {ASSUMPTION}", hang="  ")
    return buf.getvalue()


def _csv(result: Estimates) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for r in result.runs:
        note = "; ".join(_notes(r))
        for key, iv in r.estimates().items():
            w.writerow([r.name, key, ESTIMATORS[key], result.measure, result.name, repr(iv.point), repr(iv.low),
                        repr(iv.high), repr(iv.se), repr(iv.width) if iv.n > 1 else "nan", iv.n, iv.n_unlabelled,
                        "" if iv.lam is None else repr(iv.lam), result.alpha, result.level, result.alternative,
                        result.tuning, repr(r.width_ratio), repr(r.effective_n), note])
    return buf.getvalue()


def _md(result: Estimates) -> str:
    from rankflavor.render.md import md_code, md_text

    lines = [f"**{md_text(_header(result))}**", "", f"flavor: {md_code(result.measure)}", "",
             "| run | estimator | estimate | low | high | width | n | unlabelled | lambda |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in result.runs:
        for key, iv in r.estimates().items():
            lines.append("| " + " | ".join([md_text(r.name), ESTIMATORS[key], *_cells(iv)]) + " |")
    lines.append("")
    for r in result.runs:
        lines.append(f"- {md_text(r.name)}: {md_text(_bought(r))}")
        lines += [f"  - note: {md_text(n)}" for n in _notes(r)]
    lines.append("")
    lines += [f"- {ESTIMATORS[k]}: {md_text(m)}" for k, m in MEANINGS.items()]
    lines.append(f"- assumption: {md_text(ASSUMPTION)}")
    return "\n".join(lines) + "\n"


__all__ = ["CSV_COLUMNS", "ESTIMATE_FORMATS", "render_estimates"]
