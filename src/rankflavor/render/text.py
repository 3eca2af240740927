"""Terminal table (rich): value, queries and the flavor beside every number.

Wide terminals show each measure's full canonical flavor string; narrow ones (below
:data:`~rankflavor.render.console.COMPACT_BELOW` columns) print a base flavor once and, per
measure, only the knobs that differ from it. Per-query values are a table of queries x measures
whose column headers name the flavor; the counts lines say what happened to each kind of query
and document under the flavor knobs the measures actually use.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable

from rankflavor.engine.results import EMPTY, MISSING, MeasureResult, Results, plain_value
from rankflavor.flavor.flavor import Flavor
from rankflavor.render.console import (
    FlavorText,
    base_line,
    chunks,
    common_base,
    is_compact,
    make_console,
    measure_delta,
    print_flavor,
)


def _fmt(v: float | str, is_sum: bool) -> str:
    if isinstance(v, str):  # text-valued metric (relstring)
        return repr(v)
    if math.isnan(v):
        return "nan"
    return str(round(v)) if is_sum else f"{v:.4f}"


def base_flavor(results: Results) -> Flavor:
    """The flavor a compact table states once: the preset's own (when every measure comes from one
    preset, else rankflavor's defaults), with each knob set to the value every measure reading it shares."""
    from rankflavor.presets import get_preset

    presets = {m.measure.preset for m in results.measures}
    start = get_preset(presets.pop()).flavor if len(presets) == 1 and None not in presets else Flavor()
    return common_base([m.measure for m in results.measures], start)


def render_table(results: Results, per_query: bool, width: int | None = None) -> str:
    """The summary table (and with ``per_query`` the per-query table), then the counts lines.

    ``width``: columns of the output; by default the terminal's (``COLUMNS``, else 80).
    """
    from rich.markup import escape
    from rich.table import Table

    buf = io.StringIO()
    console = make_console(buf, width)
    compact = is_compact(console)
    base = base_flavor(results)
    base_text = base_line([m.measure for m in results.measures], base)
    if compact or per_query:
        console.print("flavor base (each measure names the knobs where it differs):")
        print_flavor(console, base_text)
    table = Table(title=None, show_lines=False)
    table.add_column("measure", no_wrap=True)
    table.add_column("value", justify="right", no_wrap=True)
    table.add_column("queries", justify="right", no_wrap=True)
    table.add_column("flavor" if not compact else "flavor (vs base)")
    for m in results.measures:
        is_sum = m.measure.spec.summary == "sum"
        summary = "-" if m.measure.spec.summary == "none" else _fmt(m.summary, is_sum)
        flavor = measure_delta(m.measure, base) if compact else str(m.measure)
        table.add_row(escape(m.measure.display), summary, str(m.n_queries), FlavorText(flavor))
    console.print(table)
    if per_query:
        _per_query(console, results, base)
    for line in counts_lines(results):
        for part in fit_segments(line, console.width):
            console.print(escape(part))
    return buf.getvalue()


def fit_segments(line: str, width: int, sep: str = " | ") -> list[str]:
    """``line`` cut into lines of at most ``width`` columns between its ``sep``-joined segments
    (continuations indented), so a narrow terminal never breaks a count mid-phrase; a segment
    longer than the width alone is left for the console to wrap.

    >>> fit_segments("documents: a 1 | b 2 | c 3", 16)
    ['documents: a 1', '  b 2 | c 3']
    """
    out: list[str] = []
    for segment in line.split(sep):
        if out and len(out[-1]) + len(sep) + len(segment) <= width:
            out[-1] += sep + segment
        else:
            out.append(segment if not out else "  " + segment)
    return out


def _per_query(console, results: Results, base: Flavor) -> None:  # type: ignore[no-untyped-def]
    """Queries x measures; each column headed by its measure and the knobs where it differs from
    the base; columns paged to the console width."""
    from rich.console import Group
    from rich.markup import escape
    from rich.table import Table

    measures = results.measures
    headers = [measure_delta(m.measure, base) for m in measures]
    labels = [m.measure.display for m in measures]
    queries: dict[str, None] = {}
    for m in measures:
        queries.update(dict.fromkeys(str(q) for q in m.queries))
    order = sorted(queries, key=lambda s: s.encode("utf-8"))
    cells = [_cells(m) for m in measures]
    qwidth = max((len(q) for q in order), default=5)
    widths = [max(min(max(len(p) for p in FlavorText(h).pieces), 24), len(label), *(len(v) for v in col.values()), 6) + 3
              for h, label, col in zip(headers, labels, cells, strict=True)]
    pages = chunks(widths, max(console.width - qwidth - 4, 10))
    console.print(escape("per query; each column is measure[the knobs where it differs from the flavor base]:"))
    for n, page in enumerate(pages):
        pq = Table(title=f"per query {n + 1}/{len(pages)}" if len(pages) > 1 else None)
        pq.add_column("query", no_wrap=True)
        for i in page:
            head = Group(escape(labels[i]), FlavorText(headers[i])) if labels[i] != measures[i].measure.name \
                else FlavorText(headers[i])
            pq.add_column(head, justify="right", min_width=min(widths[i] - 3, 24))
        for q in order:
            pq.add_row(escape(q), *[escape(cells[i].get(q, "-")) for i in page])
        console.print(pq)
    marks = {s for col in cells for v in col.values() for s in ("e", "m") if v.endswith(" " + s)}
    legend = []
    if "e" in marks:
        legend.append("e: nothing relevant, value from the measure's empty knob")
    if "m" in marks:
        legend.append("m: not in the run, value from its missing knob")
    if any(q not in col for col in cells for q in order):
        legend.append("-: not among the measure's queries")
    if legend:
        console.print(escape("; ".join(legend)))


def _cells(m: MeasureResult) -> dict[str, str]:
    is_sum = m.measure.spec.summary == "sum"
    out = {}
    for q, v, s in zip(m.queries, m.values, m.status, strict=True):
        text = _fmt(plain_value(v), is_sum)
        out[str(q)] = text + (" e" if s == EMPTY else " m" if s == MISSING else "")
    return out


# -- the counts lines: every sentence true of the flavors used ---------------------------------

def _by_policy(results: Results, knob: str, read: Callable[[MeasureResult], str | None]) -> dict[str, list[str]]:
    """Measure names grouped by their value of ``knob`` (measures that do not read it left out)."""
    groups: dict[str, list[str]] = {}
    for m in results.measures:
        value = read(m)
        if value is not None:
            groups.setdefault(value, []).append(m.measure.display)
    return groups


def _knob(name: str) -> Callable[[MeasureResult], str | None]:
    return lambda m: m.measure.knobs.get(name)


def _input_knob(name: str) -> Callable[[MeasureResult], str | None]:
    # A quiet knob (run_only) is printed only when set, but the measures that read it hold its value.
    def read(m: MeasureResult) -> str | None:
        return str(getattr(m.measure.flavor, name)) if name in m.measure.spec.knobs_read(m.measure.flavor) else None

    return read


def _say(groups: dict[str, list[str]], knob: str, what: Callable[[str], str]) -> str:
    """``what`` the knob's value does, with the value named; per group of measures when they differ."""
    if len(groups) == 1:
        value = next(iter(groups))
        return f"{what(value)} ({knob}={value})"
    return "; ".join(f"{what(v)} in {', '.join(names)} ({knob}={v})" for v, names in groups.items())


_MISSING = {"zero": "scored 0", "skip": "left out of the mean", "error": "refused"}
_RUN_ONLY = {"skip": "ignored", "include": "in the mean as queries with nothing relevant", "error": "refused"}
_UNJUDGED = {"zero": "scored as grade 0", "condensed": "removed before ranking"}
_NEGATIVES = {"unjudged": "read as pooled but unjudged: gain 0, never in the ideal",
              "zero": "read as judged non-relevant", "error": "refused"}
_DUPLICATES = {"error": "refused where a ranking keeps both", "first": "the first line kept",
               "best": "the best-scored line kept"}


def counts_lines(results: Results) -> list[str]:
    """What the inputs held and what the measures' flavors did with it, one line per topic."""
    c = results.counts
    lines = [f"queries: {c.queries_evaluated} evaluated, {c.queries_only_in_qrels} only in qrels, "
             f"{c.queries_only_in_run} only in run"
             + (f", {c.queries_listed_unjudged} listed in qrels with no judgment" if c.queries_listed_unjudged else "")]
    lines += label_lines(results)
    if c.queries_listed_unjudged:
        groups = _by_policy(results, "missing", _listed)
        said = "; ".join(v if len(groups) == 1 else f"{v} in {', '.join(names)}" for v, names in groups.items())
        lines.append(f"  listed with no judgment ({c.queries_listed_unjudged_in_run} in the run): {said}")
    if c.queries_only_in_qrels:
        groups = _by_policy(results, "missing", _knob("missing"))
        if groups:
            lines.append("  only in qrels: " + _say(groups, "missing", lambda v: _MISSING.get(v, v)))
    if c.queries_only_in_run:
        groups = _by_policy(results, "run_only", _input_knob("run_only"))
        lines.append("  only in run: " + _say(groups, "run_only", lambda v: _RUN_ONLY.get(v, v)))
    docs = []
    if c.unjudged_retrieved:
        groups = _by_policy(results, "unjudged", _unjudged)
        text = f"unjudged retrieved {c.unjudged_retrieved}"
        docs.append(text + (", " + _say(groups, "unjudged", _unjudged_words) if groups else ""))
    else:
        docs.append("unjudged retrieved 0")
    dup = f"duplicates resolved: run {c.run_duplicates_resolved}, qrels {c.qrels_duplicates_resolved}"
    if c.run_duplicates_kept:
        # Duplicates no ranking kept twice (below a depth cut, or in queries not scored).
        dup += f", run kept {c.run_duplicates_kept}"
    if c.run_duplicates_resolved or c.qrels_duplicates_resolved:
        groups = _by_policy(results, "duplicates", _knob("duplicates"))
        if groups:
            dup += ", " + _say(groups, "duplicates", lambda v: _DUPLICATES.get(v, v))
    docs.append(dup)
    neg = f"negative grades {c.negative_grades}"
    if c.negative_grades:
        groups = _by_policy(results, "negatives", _negatives)
        if groups:
            neg += ", " + _say_negatives(groups)
    docs.append(neg)
    lines.append("documents: " + " | ".join(docs))
    return lines


def label_lines(results: Results) -> list[str]:
    """The labels each measure evaluated, per kind of label source (``labels: ndcg@10 over 43
    queries: 2,043 human labels, 380 llm labels (mixed kinds: sources=human+llm)``), and what a
    ``--labels`` choice left out; nothing when the judgments name no source."""
    from rankflavor.engine.labels import knob_value, sentence

    groups: dict[tuple[tuple[tuple[str, int], ...], int], list[str]] = {}
    for m in results.measures:
        if m.labels is not None:
            groups.setdefault((m.labels, len(m.queries)), []).append(m.measure.display)
    lines = []
    for (labels, n), names in groups.items():
        mixed = knob_value(labels)
        lines.append(f"labels: {', '.join(names)} over {n} queries: {sentence(labels)}"
                     + (f" (mixed kinds: sources={mixed})" if mixed != "one" else ""))
    qrels = results.provenance.get("qrels")
    info = qrels.get("labels") if isinstance(qrels, dict) else None
    if isinstance(info, dict) and (info.get("choice", "any") != "any" or info.get("dropped")):
        dropped = tuple((str(k), int(v)) for k, v in (info.get("dropped") or {}).items())
        lines.append(f"  --labels {info.get('choice')}: left out {sentence(dropped) if dropped else 'no label'}")
    return lines


def _listed(m: MeasureResult) -> str:
    """What a measure's policies make of a query the judgments list with no judgment
    (:func:`rankflavor.engine.aggregate.judged_queries`)."""
    f = m.measure.flavor
    if f.missing == "zero":
        return "queries of the qrels with nothing relevant, scored 0 where the run lacks them (missing=zero)"
    if f.missing == "error":
        return "queries of the qrels with nothing relevant, refused where the run lacks them (missing=error)"
    return (f"not queries of the qrels (missing=skip); those in the run are only in run: "
            f"{_RUN_ONLY.get(str(f.run_only), str(f.run_only))} (run_only={f.run_only})")


def _negatives(m: MeasureResult) -> str | None:
    """How a measure reads a negative grade: by the ``negatives`` policy, unless its own knobs read
    negative grades as distractors (``distractor_grade`` below 0) or as utilities (``utility=grade``)."""
    knobs = m.measure.knobs
    if knobs.get("utility") == "grade":
        return "utility=grade"
    grade = knobs.get("distractor_grade")
    if grade not in (None, "none") and float(grade) < 0:
        return f"distractor_grade={grade}"
    if "distractor_grade" in m.measure.spec.knobs and knobs.get("negatives") == "unjudged":
        return "negatives=unjudged"  # a measure that could read them as distractors, told of none (UDCG)
    return knobs.get("negatives")


def _say_negatives(groups: dict[str, list[str]]) -> str:
    def words(value: str) -> str:
        if value == "utility=grade":
            return "read as negative utilities (distractors)"
        if value.startswith("distractor_grade="):
            return f"grade {value.split('=')[1]} read as a distractor"
        if value == "negatives=unjudged":
            return ("read as unjudged, not as distractors (a grade is a distractor only where --distractor-grade "
                    "names it: --distractor-grade -1)")
        return _NEGATIVES.get(value, value)

    plain = {v: names for v, names in groups.items() if "=" not in v}
    if len(groups) == 1 and plain:
        return _say(groups, "negatives", words)
    parts = [f"{words(v)} in {', '.join(names)} ({v if '=' in v else 'negatives=' + v})" for v, names in groups.items()]
    return "; ".join(parts)


def _unjudged(m: MeasureResult) -> str | None:
    value = m.measure.knobs.get("unjudged")
    if value is None:
        return None
    grade = m.measure.knobs.get("unjudged_grade")
    return f"{value},unjudged_grade={grade}" if grade not in (None, "none") else value


def _unjudged_words(value: str) -> str:
    if ",unjudged_grade=" in value:
        return f"given grade {value.split('=')[-1]} in the DCG only"
    return _UNJUDGED.get(value, value)
