"""Formatting of :class:`~rankflavor.judgments.Coverage`: a plain-text table or JSON (formatting only)."""

from __future__ import annotations

from ..finite import dumps
from .bounds import covers, interval_text
from .coverage import BIAS_RULE, Coverage


def render_coverage(cov: Coverage, fmt: str = "table", per_query: bool = False) -> str:
    """``cov`` as ``table`` (text) or ``json``."""
    if fmt == "json":
        return dumps(cov.to_dict()) + "\n"
    return _table(cov, per_query)


def _k(k: int | None) -> str:
    return "" if k is None else f"@{k}"


def _table(cov: Coverage, per_query: bool) -> str:
    lines: list[str] = []
    scale = cov.scale.describe() if cov.scale is not None else f"no scale; relevant >= {cov.rel:g}"
    lines.append(f"judgments  {cov.qrels}  ({scale})")
    lines.append("  grades: " + "  ".join(f"{g}: {n}" for g, n in cov.grades.items()))
    lines.append(f"  queries with nothing relevant: {len(cov.no_relevant)}"
                 + (f" ({', '.join(cov.no_relevant[:8])}{', ...' if len(cov.no_relevant) > 8 else ''})"
                    if cov.no_relevant else ""))
    never = sum(map(len, cov.never_retrieved.values()))
    lines.append(f"  relevant documents no run retrieved: {never} in {len(cov.never_retrieved)} queries")
    lines.append("")
    k = _k(cov.runs[0].k if cov.runs else None)
    name_w = max([len("run"), *(len(r.name) for r in cov.runs)])
    head = f"{'run':<{name_w}}  {'judged' + k:>10}  {'unjudged' + k:>12}"
    for b in cov.runs[0].bounds.measures if cov.runs else []:
        head += f"  {b.measure.name + ' value [lower, upper]':<32}  {'condensed':>9}"
    lines.append(head)
    for r in cov.runs:
        row = f"{r.name:<{name_w}}  {r.mean_judged:>10.4f}  {int(r.unjudged.sum()):>12d}"
        for i, b in enumerate(r.bounds.measures):
            flag = " *" if r.name in cov.undecided.get(cov.runs[0].bounds.measures[i].measure.name, {}) else ""
            row += f"  {interval_text(b) + flag:<32}  {b.condensed_mean:>9.4f}"
        lines.append(row)
    lines.append("")
    for i, b in enumerate(cov.runs[0].bounds.measures if cov.runs else []):
        lines.append(f"  {b.measure.name}: {b.measure}")
        lines.append(f"    [lower, upper]: least and greatest value over {covers(b)}")
        if b.residual is not None:
            resid = ", ".join(f"{r.name} {r.bounds.measures[i].lower_mean + (r.bounds.measures[i].residual_mean or 0.0):.4f}"
                              for r in cov.runs)
            lines.append("    lower + residual (Moffat & Zobel), which also covers the ranks past each run's end: " + resid)
        over = cov.undecided.get(b.measure.name, {})
        if over:
            lines.append("    * undecided by the judgments (its interval overlaps another run's): " + ", ".join(over))
    if cov.pool_bias:
        lines.append("")
        lines.append(f"WARNING pool bias: {', '.join(cov.pool_bias)} hold markedly more unjudged documents in the top k "
                     "than the other runs; their zero-imputed scores are biased low: read the bounds.")
        lines.append(f"  rule: {BIAS_RULE}")
    if per_query:
        for r in cov.runs:
            lines.append("")
            lines.append(f"{r.name}: per query")
            b0 = r.bounds.measures[0]
            where = {str(q): j for j, q in enumerate(b0.queries)}
            lines.append(f"  {'query':<10} {'judged' + k:>10} {'unjudged ranks':<24} {b0.measure.name} [lower, upper]")
            for q, j, ranks in zip(r.queries, r.judged_at_k, r.unjudged_ranks, strict=True):
                at = where.get(str(q))
                if at is None:
                    continue
                iv = f"{b0.value[at]:.4f} [{b0.lower[at]:.4f}, {b0.upper[at]:.4f}]"
                shown = ",".join(map(str, ranks)) or "-"
                lines.append(f"  {q!s:<10} {float(j):>10.4f} {shown:<24} {iv}")
    return "\n".join(lines) + "\n"


__all__ = ["render_coverage"]
