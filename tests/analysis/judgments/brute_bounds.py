"""Brute force for the bound tests: the scope of a measure written from its definition, and the
least and greatest value over every grading of its unjudged documents, each scored by
``rankflavor.evaluate`` (one pseudo-query per grading, one evaluation).

The scope (README, ``rankflavor.analysis.judgments.scope``): the top min(k, depth) of the zero-imputed
ranking (top max(k, K) for a recall@K ideal, every kept row for a local one or without a cutoff),
plus the whole tie group at its end where the tie rule averages gains or reads grades.
"""

from __future__ import annotations

import itertools
from collections import defaultdict

import numpy as np
import pytest

import rankflavor
from rankflavor.analysis.judgments import Bounds, Scale, bounds
from rankflavor.metrics.measure import parse_measure

TREC_DL = (0, 1, 2, 3)


def docno_desc(doc: str) -> list[int]:
    return [-ord(c) for c in doc]


def ranked(run: list[tuple[str, float]], ties: str, grade: dict[str, float]) -> list[tuple[str, float]]:
    """The run ranked under a tie rule, unjudged documents at grade 0 (the zero-imputed order)."""
    idx = {d: i for i, (d, _) in enumerate(run)}
    g = {d: max(grade.get(d, 0.0), 0.0) for d, _ in run}
    if ties == "docno_asc":
        return sorted(run, key=lambda x: (-x[1], [ord(c) for c in x[0]]))
    if ties == "input_order":
        return sorted(run, key=lambda x: (-x[1], idx[x[0]]))
    if ties == "pessimistic":
        return sorted(run, key=lambda x: (-x[1], g[x[0]], docno_desc(x[0])))
    if ties == "optimistic":
        return sorted(run, key=lambda x: (-x[1], -g[x[0]], docno_desc(x[0])))
    return sorted(run, key=lambda x: (-x[1], docno_desc(x[0])))  # docno_desc, averaged


def scope_holes(qrels: dict[str, float], run: list[tuple[str, float]], measure: str) -> list[str]:
    """The unjudged documents in scope (module docstring), in rank order."""
    m = parse_measure(measure)
    f = m.flavor
    order = ranked(run, str(f.ties), qrels)
    kept = order if f.depth_limit is None else order[: f.depth_limit]
    ideal = str(f.ideal_kind) if m.metric == "ndcg" else ""
    if m.k is None or ideal == "local":
        reads = len(kept)
    else:
        reads = min(max(m.k, f.recall_depth or 0) if ideal == "recall" else m.k, len(kept))
    top = order[:reads]
    whole_groups = str(f.ties) in ("pessimistic", "optimistic") or (
        str(f.ties) == "averaged" and m.metric in ("ndcg", "dcg", "RBP"))  # (only these average gains)
    if reads and whole_groups:
        edge = order[reads - 1][1]
        pool = kept if str(f.ties) == "averaged" else order
        top = top + [x for x in pool[reads:] if x[1] == edge]
    return [d for d, _ in top if qrels.get(d, -1) < 0]


def brute(qrels: dict[str, dict[str, float]], runs: dict[str, list[tuple[str, float]]], measure: str,
          grades: tuple[float, ...] = TREC_DL, scale: str | Scale = "trec_dl",
          fixed: tuple[str, str, float] | None = None) -> dict[str, tuple[float, float]]:
    """Per query, (least, greatest) value over every grading of its holes, by rankflavor.evaluate
    on one pseudo-query per grading; ``fixed`` = (query, doc, grade) judges one hole first."""
    pq: dict[str, dict[str, float]] = {}
    pr: dict[str, dict[str, float]] = {}
    owner: dict[str, str] = {}
    for q, run in runs.items():
        if not qrels.get(q):  # (a query without a judgment line is not in the judgments)
            continue
        holes = scope_holes(qrels[q], run, measure)
        base = dict(qrels[q])
        if fixed is not None and fixed[0] == q:
            holes = [h for h in holes if h != fixed[1]]
            base[fixed[1]] = fixed[2]
        for i, grading in enumerate(itertools.product(grades, repeat=len(holes))):
            pid = f"{q}#{i}"
            pq[pid] = {**base, **dict(zip(holes, grading, strict=True))}
            pr[pid] = dict(run)
            owner[pid] = q
    res = rankflavor.evaluate(pq, pr, measure, scale=scale)[0]
    out: dict[str, list[float]] = defaultdict(list)
    for pid, v in zip(res.queries, res.values, strict=True):
        out[owner[str(pid)]].append(float(v))
    return {q: (min(v), max(v)) for q, v in out.items()}


def check(qrels: dict[str, dict[str, float]], runs: dict[str, list[tuple[str, float]]], measure: str,
          scale: str | Scale = "trec_dl", grades: tuple[float, ...] = TREC_DL) -> Bounds:
    """bounds() against brute() on every query: each end, and the means."""
    out = bounds(qrels, {q: dict(r) for q, r in runs.items()}, measure, scale=scale)
    b = out[0]
    want = brute(qrels, runs, measure, grades, scale)
    got = {str(q): (lo, up) for q, lo, up in zip(b.queries, b.lower, b.upper, strict=True)}
    for q, (lo, up) in want.items():
        assert got[q][0] == pytest.approx(lo, abs=1e-9), (q, measure, got[q], (lo, up))
        assert got[q][1] == pytest.approx(up, abs=1e-9), (q, measure, got[q], (lo, up))
    assert set(got) >= set(want)
    assert b.lower_mean == pytest.approx(float(np.mean(b.lower))) and b.upper_mean == pytest.approx(
        float(np.mean(b.upper)))
    return out


__all__ = ["TREC_DL", "brute", "check", "docno_desc", "ranked", "scope_holes"]
