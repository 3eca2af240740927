"""What the bounds grade: per query, the rows a measure reads and the unjudged documents among them.

The scope
---------
A measure ``m`` is bounded through its zero-imputed form ``m0`` (``unjudged=zero``, no
``unjudged_grade``): the interval is the least and greatest value of ``m0`` over every grading of
the *holes* with the grades of the label scale S. The holes of a query are its documents that
have no usable judgment (a negative label counts as unjudged, as trec_eval reads it, unless
``negatives=zero``) among the rows ``m0`` reads, ranked by ``m0``'s own ordering (tie rule, score
precision, depth):

* the top ``min(k, depth)`` rows (every row kept by ``depth`` without a cutoff);
* for ``ideal=recall@K``, the top ``max(k, K)``; for ``ideal=local``, every row kept (both ideals
  are made of those rows);
* under ``ties=averaged`` (a row earns its tie group's mean gain) and the grade-ordered rules
  ``pessimistic`` / ``optimistic`` (where a document sits inside its tie group depends on its
  grade), the whole tie group reaching the last of those rows.

Outside the scope: documents ranked below it, unjudged documents no run retrieved, and grades off
the scale. The first two could still change a value once judged (a relevant one raises a global
ideal, and AP's R), always downwards for NDCG with a global ideal and for AP; the interval is
about the run's own top k. Queries without any judgment are outside it too (grading one of their
documents would add a query to the mean).

A :class:`QueryScope` holds one query's rows in scope (rank order of ``m0``, the rows beyond the
depth cut of a grade-ordered tie group included and marked), the grade of each (NaN for a hole),
their tie groups, and every usable judgment of the query (R and a global ideal read them).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np
import pyarrow as pa

from rankflavor.align import Aligned
from rankflavor.base import kernels as K
from rankflavor.engine.plan import Evaluation
from rankflavor.errors import FlavorError
from rankflavor.flavor.flavor import format_number
from rankflavor.io.columns import take, to_strings
from rankflavor.io.docnos import integer_docnos
from rankflavor.metrics.bounded import Bound, bound_of, bounded
from rankflavor.metrics.gains import discount_denominators, gain
from rankflavor.metrics.measure import Measure
from rankflavor.order import Ordering, Ranked
from rankflavor.order.ties import tie_groups

#: The metrics :func:`rankflavor.bounds` bounds exactly (:mod:`rankflavor.metrics.bounded` says how;
#: :mod:`.extremes` proves each).
BOUNDED = tuple(bounded())


@dataclass(frozen=True)
class Rules:
    """What the zero-imputed measure ``measure`` reads, in the terms the extremes use.

    Attributes
    ----------
    measure : the zero-imputed measure m0; ``bound`` how its interval is found
        (:class:`rankflavor.metrics.bounded.Bound`).
    grades : the scale's grades S, ascending.
    k, depth : the cutoff and the ``depth`` knob (None: none); ``cut`` is ``min(k, depth)``
        (inf when neither is set): a row below it adds nothing to the value.
    tie : ``"asc"`` (``pessimistic``: lowest grade first in a tie group), ``"desc"``
        (``optimistic``) or ``""`` (an order that reads no grade); ``averaged``: ``ties=averaged``
        under a metric that averages gains.
    ideal : ``global``, ``local``, ``recall`` or ``max`` for a metric with an ideal, ``""``
        otherwise; ``recall_depth`` recall@K's K.
    """

    measure: Measure
    bound: Bound
    grades: np.ndarray
    k: int | None
    depth: int | None
    cut: float
    tie: str
    averaged: bool
    ideal: str
    recall_depth: int | None

    @classmethod
    def of(cls, measure: Measure, grades: np.ndarray) -> Rules:
        """The rules of zero-imputed ``measure`` over the grades S; FlavorError for a measure
        whose bound is not derived (naming why)."""
        f = measure.flavor
        bound = bound_of(measure.spec)
        if bound is None:
            raise FlavorError(
                f"{measure.name}: bounds under unjudged documents are derived for {', '.join(BOUNDED)} only "
                f"(each proved exact in rankflavor.analysis.judgments.extremes); {measure.metric} is not bounded"
            )
        ideal = str(f.ideal_kind) if bound.ideal else ""
        if ideal == "as_supplied":
            raise FlavorError(
                f"{measure.name}: ideal=as_supplied reads the judgments in file order, and a document judged "
                "now has no place in that order; bounds are derived for the global, local, recall@K and max ideals"
            )
        if str(f.nonpositive) == "nonrelevant":
            # (a hole scored <= 0 adds no hit whatever its grade, yet its grade still counts in R:
            # the extremes of rankflavor.analysis.judgments.extremes read grades, never scores)
            raise FlavorError(
                f"{measure.name}: nonpositive=nonrelevant makes a document's relevance depend on its score, "
                "which the bounds do not read; bounds are derived under nonpositive=keep"
            )
        # relevant_set=retrieved counts R over the retrieved documents only, while whether a query has
        # anything to find (extremes.emptiness) and AP's R are read from every judgment (for P and RR
        # that changes nothing under empty=zero: with nothing relevant retrieved their value is 0
        # either way); AP's sum is derived over R, not ap_divisor=min_k_relevant or found.
        ap = bound.search == "relevant_count"
        knobs = [f"{knob}={value}" for knob, value, fine, where in (
            ("relevant_set", f.relevant_set, "qrels", ap or str(f.empty) != "zero"), ("ap_divisor", f.ap_divisor, "relevant", ap))
            if where and str(value) != fine]
        if knobs:
            raise FlavorError(f"{measure.name}: bounds under unjudged documents are not derived with "
                              f"{', '.join(knobs)} (the derivation reads R as every relevant judgment); use the default "
                              "of that knob")
        ordering = Ordering.of(f)
        k, depth = measure.k, ordering.depth
        cut = float(min(k if k is not None else np.inf, depth if depth is not None else np.inf))
        tie = {"pessimistic": "asc", "optimistic": "desc"}.get(str(ordering.ties), "")
        return cls(measure, bound, np.asarray(sorted(set(map(float, grades))), dtype=np.float64), k, depth, cut, tie,
                   bound.averages and ordering.averaged, ideal, f.recall_depth if ideal == "recall" else None)

    @cached_property
    def grade_gains(self) -> np.ndarray:
        """gain(s) of each grade of S (as a judged document's)."""
        return np.asarray(gain(self.grades, np.ones(len(self.grades), dtype=bool), self.measure.flavor))

    @cached_property
    def gain_levels(self) -> tuple[np.ndarray, np.ndarray]:
        """The distinct gains of S, descending, and for each the least grade that has it."""
        g = self.grade_gains
        gammas = K.distinct(g)[::-1]
        return gammas, np.array([self.grades[g == v].min() for v in gammas])

    def reciprocal_discounts(self, n: int) -> np.ndarray:
        """1 / denominator of ranks 0..n (index 0 unused) under the measure's discount, kept."""
        have = self.__dict__.get("_reciprocals")
        if have is None or len(have) <= n:
            have = 1.0 / discount_denominators(self.measure.flavor, max(2 * n, 16))
            self.__dict__["_reciprocals"] = have
        return np.asarray(have[: n + 1])

    @property
    def ordering(self) -> Ordering:
        """m0's ordering without its depth cut (the scope marks the rows the cut drops)."""
        return replace(Ordering.of(self.measure.flavor), depth=None)


@dataclass(frozen=True)
class QueryScope:
    """One query's rows in scope, in m0's rank order (rank = position, 1-based).

    Attributes
    ----------
    code, qid : the query's code in the alignment and its id.
    grade : the judged grade of each row, NaN for a hole; ``hole_rows`` the positions of the
        holes (ascending), ``hole_docs`` their docnos, ``hole_ranks`` their ranks under m0.
    row : the aligned run row at each position.
    group : tie-group id of each position (equal ids: equal scores).
    kept : the depth cut keeps the row (only a grade-ordered tie group reaches past it).
    in_ideal : the row's document is in the list a local or recall ideal is made of.
    judgments : every usable judged grade of the query (R, the global ideal), holes excluded.
    n_ret : rows the query keeps after the depth cut (all of them, not only those in scope).
    unjudged : the positions that held a hole before any was judged (:meth:`fixed`): a
        grade-ordered tie group holding one is ordered again under every grading.
    """

    code: int
    qid: str
    grade: np.ndarray
    row: np.ndarray
    group: np.ndarray
    kept: np.ndarray
    in_ideal: np.ndarray
    judgments: np.ndarray
    n_ret: int
    hole_docs: tuple[str, ...] = ()
    unjudged: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.unjudged is None:
            object.__setattr__(self, "unjudged", np.isnan(self.grade))

    @cached_property
    def hole_rows(self) -> np.ndarray:
        return np.flatnonzero(np.isnan(self.grade))

    @property
    def n_holes(self) -> int:
        return len(self.hole_rows)

    def filled(self, grades: np.ndarray) -> np.ndarray:
        """The grade of every position under each grading (rows of ``grades``, one grade per
        hole): shape (gradings, positions), tie groups not yet re-ordered."""
        grades = np.atleast_2d(np.asarray(grades, dtype=np.float64))
        out = np.broadcast_to(self.grade, (len(grades), len(self.grade))).copy()
        out[:, self.hole_rows] = grades
        return out

    def fixed(self, hole: int, grade: float) -> QueryScope:
        """This scope with hole number ``hole`` judged ``grade`` (it joins the judgments)."""
        g = self.grade.copy()
        g[self.hole_rows[hole]] = grade
        docs = self.hole_docs[:hole] + self.hole_docs[hole + 1:] if self.hole_docs else ()
        return replace(self, grade=g, judgments=np.append(self.judgments, grade), hole_docs=docs)

    def judged_elsewhere(self, grade: float) -> QueryScope:
        """This scope with one more judgment of ``grade``, of a document outside the scope."""
        return replace(self, judgments=np.append(self.judgments, grade))


@dataclass(frozen=True)
class ScopeSet:
    """The scopes of one measure: one per query holding a hole, and the ranking they come from."""

    rules: Rules
    scopes: list[QueryScope]
    ranked: Ranked


def docnos_of(aligned: Aligned, rows: np.ndarray) -> pa.Array:
    """The docnos of aligned run ``rows``; canonical integer docnos are written from their values,
    so a big run's strings (which scoring never builds) are not made for a few rows."""
    if aligned.doc_value_offset is not None:
        return integer_docnos((aligned.run_doc[rows].astype(np.int64) + aligned.doc_value_offset,))
    return take(aligned.run_doc_strings, aligned.input_rows(rows).astype(np.int64))


def scale_grades(measure: Measure, scale_grades: tuple[float, ...] | None) -> np.ndarray:
    """S: the declared scale's grades, else 0, 1, ..., G for the measure's ``max_grade`` G."""
    if scale_grades is not None:
        return np.asarray(scale_grades, dtype=np.float64)
    top = measure.flavor.top_grade
    if top is None:
        raise FlavorError(
            f"the bounds of {measure.name} range over the grades of the label scale: pass scale= "
            "(trec_dl, msmarco, beir, ecommerce or a Scale) or set max_grade; G is never taken from the data"
        )
    if top != int(top):
        raise FlavorError(f"{measure.name}: max_grade={format_number(top)} without a scale leaves the grades "
                          "unknown (0, 1, ..., G needs a whole G): declare the scale")
    return np.arange(int(top) + 1, dtype=np.float64)


def scopes(plan: Evaluation, rules: Rules, rankings: dict[object, Ranked] | None = None,
           every_query: bool = False) -> ScopeSet:
    """The scope of every query with a hole (module docstring), from m0's exact ranking (each
    rank holds the document the tie rule puts there, as :func:`rankflavor.evaluate` ranks it).
    ``every_query``: also the queries without judgments (pooling from scratch)."""
    m = rules.measure
    policy = str(m.flavor.duplicates)
    key = (policy, rules.ordering)
    ranked = None if rankings is None else rankings.get(key)
    if ranked is None:
        ranked = plan.ranker(policy).rank(rules.ordering, exact=True)
        if rankings is not None:
            rankings[key] = ranked
    aligned = ranked.aligned
    assert ranked.row is not None  # a full ranking names its rows
    nq = aligned.n_queries
    n = ranked.n_ret.astype(np.int64)
    start = np.cumsum(n) - n
    kept_n = n if rules.depth is None else np.minimum(n, rules.depth)
    reads = kept_n.copy()
    if rules.k is not None and rules.ideal != "local":
        reads = np.minimum(max(rules.k, rules.recall_depth or 0), kept_n)
    group = tie_groups(ranked.q, ranked.score)
    end = reads.copy()
    if rules.tie or rules.averaged:  # on to the end of the tie group at the last row read
        has = reads > 0
        last = np.searchsorted(group, group[start[has] + reads[has] - 1], side="right") - start[has]
        end[has] = last if rules.tie else np.minimum(last, kept_n[has])
    position = np.arange(len(ranked.q)) - start[ranked.q]
    inside = position < end[ranked.q]
    hole = inside & ~ranked.judged
    if not every_query:
        hole &= aligned.in_qrels[ranked.q]
    with_hole = np.flatnonzero(np.bincount(ranked.q[hole], minlength=nq) > 0)
    by_query = np.argsort(ranked.jq, kind="stable")
    j_start = np.searchsorted(ranked.jq[by_query], np.arange(nq + 1))
    hole_at = np.flatnonzero(hole)
    docs = to_strings(docnos_of(aligned, ranked.row[hole_at])) if len(hole_at) else []
    first_doc = np.searchsorted(ranked.q[hole_at], with_hole)
    out = []
    for i, c in enumerate(with_hole.tolist()):
        a, e = int(start[c]), int(start[c] + end[c])
        judged = ranked.judged[a:e]
        grade = np.where(judged, ranked.grade[a:e], np.nan)
        rank = np.arange(1, e - a + 1)
        kept = rank <= kept_n[c]
        if rules.ideal == "local":
            in_ideal = kept
        elif rules.ideal == "recall":
            in_ideal = kept & (rank <= (rules.recall_depth or 0))
        else:
            in_ideal = np.zeros(e - a, dtype=bool)
        d0 = int(first_doc[i])
        out.append(QueryScope(c, str(aligned.query_ids[c]), grade, ranked.row[a:e], group[a:e] - group[a], kept,
                              in_ideal, np.asarray(ranked.jgrade[by_query[j_start[c]:j_start[c + 1]]],
                                                   dtype=np.float64),
                              int(kept_n[c]), tuple(docs[d0:d0 + int((~judged).sum())])))
    return ScopeSet(rules, out, ranked)


__all__ = ["BOUNDED", "QueryScope", "Rules", "ScopeSet", "docnos_of", "scale_grades", "scopes"]
