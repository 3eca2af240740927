"""The significance table and the judgment-coverage panel, read from the JSON that ``rankflavor
compare --format json`` (:meth:`rankflavor.analysis.compare.Comparison.to_dict`) and ``rankflavor judgments
--format json`` (:meth:`rankflavor.analysis.judgments.Coverage.to_dict`) write.

Plain values for the template; nothing here writes HTML. A document in neither layout is left to
the generic tables of :mod:`rankflavor.report.model`.
"""

from __future__ import annotations

import math
from typing import Any


def _num(x: Any) -> float | None:
    if isinstance(x, bool) or not isinstance(x, int | float):
        return None
    return None if math.isnan(float(x)) or math.isinf(float(x)) else float(x)


def _pair(v: Any) -> tuple[float, float] | None:
    if isinstance(v, list | tuple) and len(v) == 2:
        lo, hi = _num(v[0]), _num(v[1])
        if lo is not None and hi is not None:
            return lo, hi
    return None


def is_comparison(data: dict[str, Any]) -> bool:
    """``data`` is a :meth:`Comparison.to_dict` value: settings and one block per measure with its pairs."""
    measures = data.get("measures")
    return (isinstance(data.get("settings"), dict) and isinstance(measures, list)
            and all(isinstance(m, dict) and isinstance(m.get("pairs"), list) and "flavor" in m for m in measures))


def is_coverage(data: dict[str, Any]) -> bool:
    """``data`` is a :meth:`Coverage.to_dict` value: the pool-bias warning and one record per run."""
    return (isinstance(data.get("pool_bias"), dict) and isinstance(data.get("runs"), list)
            and all(isinstance(r, dict) and "judged_at_k" in r for r in data["runs"]))


def comparison_systems(data: dict[str, Any]) -> list[tuple[str, str, str, float | None, tuple[float, float] | None,
                                                            list[dict[str, Any]] | None]]:
    """``(system, flavor, metric name, mean, CI, per-query rows in eval's shape or None)`` of every
    system under every measure."""
    out = []
    for m in data["measures"]:
        pq = m.get("per_query") if isinstance(m.get("per_query"), dict) else None
        queries = [str(q) for q in pq.get("queries", [])] if pq else []
        values = pq.get("values", {}) if pq else {}
        for s in m.get("systems", []):
            name = str(s.get("name"))
            vals = values.get(name) if isinstance(values, dict) else None
            rows = ([{"query": q, "value": v} for q, v in zip(queries, vals, strict=False)]
                    if isinstance(vals, list) else None)
            out.append((name, str(m["flavor"]), str(m.get("name", m["flavor"])), _num(s.get("mean")),
                        _pair(s.get("ci")), rows))
    return out


def comparison_view(data: dict[str, Any]) -> dict[str, Any]:
    """The significance table per measure, with the settings that made it.

    Returns ``{"settings", "notes", "measures": [{"flavor", "name", "n", "dropped", "zero_filled",
    "tests", "adjusted", "pairs", "robustness"}]}``; each pair is ``{"a", "b", "delta", "ci",
    "effect", "wins", "losses", "ties", "p": [per test], "adjusted": [per key], "significant",
    "robust": None | {"sign_holds", "verdict_holds", "sign_flipped_by", "verdict_flipped_by"}}``; the
    robustness is ``{"n_flavors", "n_in_summary", "flavors", "excluded", "errors", "notes"}`` (the
    flips are over ``n_in_summary`` flavors; ``excluded`` names the others and why).
    """
    settings = data["settings"]
    tests = [str(t) for t in settings.get("tests", [])]
    measures = []
    for m in data["measures"]:
        rob = m.get("robustness") if isinstance(m.get("robustness"), dict) else None
        by_pair = {(str(r.get("a")), str(r.get("b"))): r for r in (rob or {}).get("pairs", [])}
        keys = list(dict.fromkeys(k for p in m["pairs"] for k in (p.get("adjusted") or {})))
        pairs = []
        for p in m["pairs"]:
            a, b = str(p.get("a")), str(p.get("b"))
            r = by_pair.get((a, b))
            pairs.append({
                "a": a, "b": b, "delta": _num(p.get("delta")), "ci": _pair(p.get("ci")), "effect": _num(p.get("cohens_d")),
                "wins": p.get("wins"), "losses": p.get("losses"), "ties": p.get("ties"),
                "p": [_num((p.get("pvalues") or {}).get(t)) for t in tests],
                "adjusted": [_num((p.get("adjusted") or {}).get(k)) for k in keys],
                "significant": bool(p.get("significant")),
                # why a statistic is not a number (rankflavor.base.finite): its word is shown, the reason on hover
                "undefined": {str(k): str(v) for k, v in (p.get("undefined") or {}).items()},
                "robust": None if r is None else {
                    "sign_holds": bool(r.get("sign_holds")), "verdict_holds": bool(r.get("verdict_holds")),
                    "sign_flipped_by": [str(x) for x in r.get("sign_flipped_by", [])],
                    "verdict_flipped_by": [str(x) for x in r.get("verdict_flipped_by", [])]},
            })
        robustness = None if rob is None else {
            # n_in_summary: the flavors the flips are over (a file older than it counted every flavor)
            "n_flavors": rob.get("n_flavors"), "n_in_summary": rob.get("n_in_summary", rob.get("n_flavors")),
            "flavors": [{"label": str(f.get("label")), "flavor": str(f.get("flavor")),
                         "in_summary": bool(f.get("in_summary", True))} for f in rob.get("flavors", [])],
            "excluded": [{"label": str(e.get("label")), "flavor": str(e.get("flavor")), "reason": str(e.get("reason"))}
                         for e in rob.get("excluded", [])],
            "errors": {str(k): str(v) for k, v in (rob.get("errors") or {}).items()},
            "notes": [str(n) for n in rob.get("notes", [])]}
        measures.append({"flavor": str(m["flavor"]), "name": str(m.get("name", m["flavor"])), "n": m.get("n"),
                         "dropped": m.get("queries_dropped", 0), "zero_filled": m.get("zero_filled", 0),
                         "tests": tests, "adjusted": keys, "pairs": pairs, "robustness": robustness})
    return {"settings": {str(k): v for k, v in settings.items()}, "measures": measures,
            "notes": [str(n) for n in data.get("notes", [])]}


def coverage_view(data: dict[str, Any]) -> dict[str, Any]:
    """The judgment-coverage panel and the bound intervals.

    Returns ``{"qrels", "scale", "rel", "grades", "no_relevant", "never_retrieved", "pool_bias",
    "rule", "k", "measures": [flavor strings], "runs": [{"run", "k", "judged", "unjudged",
    "unjudged_in_top_k", "biased", "bounds": [{"value", "lower", "upper", "condensed", "undecided"}]}],
    "filled": see :func:`_filled_view`}``;
    ``undecided`` lists the runs whose interval overlaps this run's (empty: decided).
    """
    bias = data["pool_bias"]
    biased = {str(r) for r in bias.get("runs", [])}
    found = data.get("undecided")
    undecided: dict[str, Any] = found if isinstance(found, dict) else {}
    measures: list[str] = []
    for r in data["runs"]:
        for b in r.get("bounds", []):
            if str(b.get("measure")) not in measures:
                measures.append(str(b.get("measure")))
    runs = []
    for r in data["runs"]:
        name = str(r.get("run"))
        mine = {str(b.get("measure")): b for b in r.get("bounds", [])}
        cells = []
        for flavor in measures:
            b = mine.get(flavor)
            # keyed by the flavor string; files written before it was keyed by the metric's name
            by_flavor = undecided.get(flavor) if flavor in undecided else undecided.get(flavor.split("[")[0])
            over = (by_flavor or {}).get(name, [])
            cells.append(None if b is None else {
                "value": _num(b.get("value")), "lower": _num(b.get("lower")), "upper": _num(b.get("upper")),
                "condensed": _num(b.get("condensed")), "undecided": [str(x) for x in over]})
        runs.append({"run": name, "k": r.get("k"), "judged": _num(r.get("judged_at_k")),
                     "unjudged": _num(r.get("unjudged_at_k")), "unjudged_in_top_k": r.get("unjudged_in_top_k"),
                     "biased": name in biased, "bounds": cells})
    never = data.get("relevant_never_retrieved")
    return {"qrels": str(data.get("qrels", "")), "scale": data.get("scale"), "rel": data.get("rel"),
            "grades": {str(k): v for k, v in (data.get("grades") or {}).items()},
            "no_relevant": [str(q) for q in data.get("queries_with_no_relevant", [])],
            "never_retrieved": never.get("count") if isinstance(never, dict) else None,
            "pool_bias": sorted(biased), "rule": str(bias.get("rule", "")),
            "k": runs[0]["k"] if runs else None, "measures": measures, "runs": runs, "filled": _filled_view(data)}


def _filled_view(data: dict[str, Any]) -> dict[str, Any] | None:
    """What labels of other sources bought (``judgments`` over several source kinds), or None:
    ``{"base", "fillers", "runs": [{"run", "before", "after", "queries": [before, after],
    "measures": [{"measure", "before": [lower, upper], "after": [lower, upper]}]}]}``."""
    f = data.get("filled")
    if not isinstance(f, dict):
        return None

    def pair(d: Any) -> list[float | None]:
        return [_num(d.get("lower")), _num(d.get("upper"))] if isinstance(d, dict) else [None, None]

    runs = []
    for r in f.get("runs", []):
        holes, queries = r.get("unjudged_in_top_k") or {}, r.get("queries") or {}
        runs.append({"run": str(r.get("run")), "before": holes.get("before"), "after": holes.get("after"),
                     "queries": [queries.get("before"), queries.get("after")],
                     "measures": [{"measure": str(m.get("measure")), "before": pair(m.get("before")),
                                   "after": pair(m.get("after"))} for m in r.get("measures", [])]})
    return {"base": str(f.get("base")), "fillers": [str(k) for k in f.get("fillers", [])], "runs": runs}


__all__ = ["comparison_systems", "comparison_view", "coverage_view", "is_comparison", "is_coverage"]
