"""Pooling: which unjudged documents to judge next, across several runs.

Depth-k pooling (the TREC practice) takes the union of every run's top ``k`` documents per query
and keeps those the judgments do not hold yet: the documents that make the runs' NDCG@k bounds
differ (a judged document moves neither bound). A document with a negative grade counts as
unjudged, as trec_eval reads it ("pooled but not judged").

A budget of ``N`` keeps the ``N`` candidates of highest priority, where the priority of a
document ``d`` of query ``q`` is its greatest possible contribution to the upper - lower gap
of the runs' mean NDCG@k, summed over the runs that retrieve it in their top ``k``::

    priority(q, d) = sum over runs r with d in their top k of
                     gain(G) * disc(rank_r(d)) / (IDCG_up(r, q) * n_r)

``disc(i) = 1/log2(i + 1)``; ``G`` is the scale's top grade; ``IDCG_up(r, q)`` is the ideal DCG@k
of the upper bound, i.e. the judged grades of ``q`` together with ``G`` for each unjudged document
in run ``r``'s top k (the ideal the upper bound uses, so a document's weight is what judging it
non-relevant removes from that bound); ``n_r`` is the number of queries run ``r``'s mean is
over. Judging a document at grade 0 lowers the upper bound of run ``r`` by at least that weight's
share, so documents high in many runs' rankings, of queries with few relevant documents, come
first. This is the rule of Moffat, Webber & Zobel, "Strategic system comparisons via targeted
relevance judgments" (SIGIR 2007), who rank documents by the summed rank-biased (RBP) weight the
systems give them, written with the NDCG@k discount and normalisation. Priorities are computed
once: a choice does not change another candidate's weight until grades are known (judge, add
the grades to the qrels, pool again). Ties go to the better best rank, then to more runs, then to
query and doc id order.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .columns import dictionary_array, string_array, take, to_strings
from .errors import InputError, UsageError
from .io.inputs import as_qrels, as_run
from .judgments.scale import Scale, scale_named
from .order import Ordering, Ranked
from .plan import Evaluation
from .tables import Qrels, Run

FORMATS = ("trec", "csv", "quepid")


@dataclass(frozen=True)
class Pool:
    """What :func:`pool` returns: the candidates to judge, best first, and what was counted.

    Attributes
    ----------
    query, doc : object arrays of ids, one row per candidate (priority descending).
    priority : float array (see the module docstring).
    runs : how many runs hold the document in their top ``depth``.
    best_rank : its best rank among them.
    depth, budget : the pooling depth and the budget (None: every candidate).
    counts : ``runs``, ``queries``, ``pooled`` (distinct (query, doc) pairs in some run's top k),
        ``judged`` (of those, already judged), ``candidates`` (``pooled - judged``), ``selected``
        (rows here), and per run its ``top_k`` rows and ``unjudged`` among them.
    """

    query: np.ndarray
    doc: np.ndarray
    priority: np.ndarray
    runs: np.ndarray
    best_rank: np.ndarray
    depth: int
    budget: int | None
    counts: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.doc)

    def render(self, fmt: str) -> str:
        """The candidates as ``trec`` (a qrels stub), ``csv`` or ``quepid`` text.

        ``trec``: ``query 0 doc`` - a qrels line whose grade is left empty. The fourth field is
        missing on purpose: rankflavor's and trec_eval's qrels readers refuse a three-field line,
        naming it, until a grade is written there (a placeholder such as ``?`` would be read as
        grade 0 by a reader built on ``atoi``).

        ``csv``: ``query,doc,priority,runs,best_rank``.

        ``quepid``: Quepid's ratings import CSV, the header ``query,docid,rating`` with the rating
        left empty for the judge to fill. Quepid reads the columns by position and skips a row
        whose rating is blank (``app/services/ratings_importer.rb``; the header is the one its
        ratings export writes, ``app/controllers/api/v1/export/ratings_controller.rb``, o19s/quepid),
        so an unfilled file imports nothing. Quepid keys ratings by query *text*: the query
        column holds the query ids of the runs.
        """
        if fmt == "trec":
            return "".join(f"{q} 0 {d}\n" for q, d in zip(self.query, self.doc, strict=True))
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        if fmt == "csv":
            w.writerow(["query", "doc", "priority", "runs", "best_rank"])
            for row in zip(self.query, self.doc, self.priority, self.runs, self.best_rank, strict=True):
                w.writerow([row[0], row[1], repr(float(row[2])), int(row[3]), int(row[4])])
        elif fmt == "quepid":
            w.writerow(["query", "docid", "rating"])
            for q, d in zip(self.query, self.doc, strict=True):
                w.writerow([q, d, ""])
        else:
            raise UsageError(f"unknown pool format '{fmt}'; valid formats: {', '.join(FORMATS)}")
        return buf.getvalue()

    def summary(self) -> str:
        """One line of counts, then one per run."""
        c = self.counts
        lines = [f"pool depth {self.depth}: {c['runs']} runs, {c['queries']} queries, {c['pooled']} pooled "
                 f"documents, {c['judged']} already judged, {c['candidates']} to judge"
                 + (f", {c['selected']} selected (budget {self.budget})" if self.budget is not None else "")]
        lines += [f"  {name}: {r['unjudged']} of {r['top_k']} top-{self.depth} documents unjudged"
                  for name, r in c["per_run"].items()]
        return "\n".join(lines) + "\n"


def pool(runs: Sequence[Any], depth: int = 10, qrels: Any = None, budget: int | None = None,
         scale: str | Scale | None = None, gain: str = "linear", strategy: str = "gap", seed: int = 0) -> Pool:
    """The unjudged documents of the runs' top ``depth``, by priority (module docstring).

    Parameters
    ----------
    runs : paths, ``{query: {doc: score}}`` dicts or Run tables; ranked as trec_eval does
        (score descending, ties by docno descending).
    depth : the pooling depth k (the cutoff of the NDCG@k whose bounds are to close).
    qrels : the judgments so far (path, dict or Qrels), or None (nothing judged yet).
    budget : keep ``budget`` candidates (None: all).
    scale : the label scale (name or :class:`~rankflavor.judgments.Scale`): its top grade is G and
        the judgments must be on it. Needed with ``qrels`` (without judgments G cancels out of
        every weight, so none is needed).
    gain : ``linear`` (g) or ``exp2`` (2^g - 1), the gain of the NDCG the priorities are for
        (a scale with its own gain table uses that).
    strategy : ``gap`` keeps the candidates of highest priority; ``random`` keeps ``budget``
        candidates drawn uniformly with ``seed`` (the baseline pooling is measured against),
        listed by priority.
    seed : the seed of ``strategy="random"``.

    Raises
    ------
    UsageError
        For a bad depth, budget, gain or strategy, or judgments without a scale.
    InputError
        For a judgment off the scale (naming its line), or a run that shares no query with the
        judgments.

    Examples
    --------
    >>> runs = [{"q": {"a": 3, "b": 2, "c": 1}}, {"q": {"c": 3, "d": 2, "a": 1}}]
    >>> p = pool(runs, depth=2, qrels={"q": {"a": 1}}, scale="trec_dl")
    >>> list(p.doc), p.counts["pooled"], p.counts["judged"]
    (['c', 'b', 'd'], 4, 1)
    >>> pool(runs, depth=2, budget=1).doc.tolist()
    ['a']
    """
    if not runs:
        raise UsageError("pool: give at least one run")
    if depth < 1:
        raise UsageError(f"pool: depth must be >= 1, received {depth}")
    if budget is not None and budget < 0:
        raise UsageError(f"pool: budget must be >= 0, received {budget}")
    if gain not in ("linear", "exp2"):
        raise UsageError(f"pool: gain must be linear or exp2, received {gain!r}")
    if strategy not in ("gap", "random"):
        raise UsageError(f"pool: strategy must be gap or random, received {strategy!r}")
    sc = scale_named(scale)
    if qrels is not None:
        if sc is None:
            raise UsageError("pool: with judgments, declare the label scale (scale='trec_dl', --scale): "
                             "its top grade G is what an unjudged document may be")
        judged = as_qrels(qrels)
        sc.check(judged)
    else:
        judged = Qrels(dictionary_array([]), string_array([]), np.zeros(0))
    top = sc.top if sc is not None else 1.0
    gains = dict(sc.gains) if sc is not None and sc.gains is not None else None
    parts = [_top(as_run(r), judged, depth, top, gain, gains) for r in runs]
    per_run = {}
    for i, (r, part) in enumerate(zip(runs, parts, strict=True)):
        name = str(part["source"]) if isinstance(r, (str, Run)) or hasattr(r, "__fspath__") else f"run {i + 1}"
        name = name if name not in per_run else f"{name} ({i + 1})"
        per_run[name] = {"top_k": len(part["doc"]), "unjudged": int((~part["judged"]).sum())}
    cat = {key: np.concatenate([p[key] for p in parts]) for key in ("query", "doc", "judged", "weight", "rank")}
    keys = np.asarray([f"{q}\x00{d}" for q, d in zip(cat["query"], cat["doc"], strict=True)], dtype=object)
    uniq, inverse = np.unique(keys, return_inverse=True) if len(keys) else (keys, np.zeros(0, dtype=np.int64))
    n = len(uniq)
    is_judged = np.zeros(n, dtype=bool)
    is_judged[inverse[cat["judged"]]] = True
    priority = np.bincount(inverse, weights=np.where(cat["judged"], 0.0, cat["weight"]), minlength=n)
    n_runs = np.bincount(inverse, minlength=n)
    best = np.full(n, np.iinfo(np.int64).max)
    np.minimum.at(best, inverse, cat["rank"])
    split = np.asarray([u.split("\x00", 1) for u in uniq], dtype=object).reshape(n, 2)
    keep = np.flatnonzero(~is_judged)
    # priority desc, best rank asc, runs desc, then (query, doc) order (uniq is sorted).
    order = keep[np.lexsort((keep, -n_runs[keep], best[keep], -priority[keep]))]
    if budget is None:
        chosen = order
    elif strategy == "random":
        picked = np.random.default_rng(seed).choice(len(order), size=min(budget, len(order)), replace=False)
        chosen = order[np.sort(picked)]
    else:
        chosen = order[:budget]
    counts = {"runs": len(runs), "queries": len({q for q, _ in split}) if n else 0, "pooled": n,
              "judged": int(is_judged.sum()), "candidates": len(keep), "selected": len(chosen), "per_run": per_run}
    return Pool(split[chosen, 0], split[chosen, 1], priority[chosen], n_runs[chosen], best[chosen], depth, budget, counts)


def _top(run: Run, qrels: Qrels, depth: int, max_grade: float, gain: str,
         table: dict[float, float] | None) -> dict[str, Any]:
    """One run's top ``depth`` rows: ids, rank, judged, and each unjudged row's weight."""
    plan = Evaluation(qrels, run, whole=False)
    try:
        return _weights(plan.ranker("error").ranked(Ordering(depth=depth)), run, qrels, depth, max_grade, gain, table)
    finally:
        plan.close()


def _weights(ranked: Ranked, run: Run, qrels: Qrels, depth: int, max_grade: float, gain: str,
             table: dict[float, float] | None) -> dict[str, Any]:
    aligned = ranked.aligned
    if len(qrels) and not (aligned.in_run & aligned.in_qrels).any():
        # Judgments of other topics (a DL 2020 run against DL 2019 qrels): every document would
        # look unjudged. Pooling from scratch is the same call without qrels.
        raise InputError(run.source, None, f"shares no query with the judgments {qrels.source}; "
                         "pool without them to pool this run from scratch")
    rows = ranked.row if ranked.row is not None else np.arange(len(ranked.q))
    docs = np.asarray(to_strings(take(aligned.run_doc_strings, aligned.input_rows(rows))), dtype=object)
    queries = aligned.query_ids[ranked.q].astype(object)
    def g(x: np.ndarray) -> np.ndarray:
        if table is not None:
            return np.asarray([table.get(float(v), float(v)) for v in np.atleast_1d(x)], dtype=np.float64)
        return np.asarray(x, dtype=np.float64) if gain == "linear" else np.exp2(x) - 1.0

    top_gain = float(g(np.asarray([max_grade]))[0])
    disc = 1.0 / np.log2(ranked.rank + 1.0)
    # The upper bound's ideal: judged gains of the query, and G for each unjudged row in the top k.
    unj = ~ranked.judged
    iq = np.concatenate([ranked.jq, ranked.q[unj]]).astype(np.int64)
    ig = np.concatenate([g(np.asarray(ranked.jgrade, dtype=np.float64)), np.full(int(unj.sum()), top_gain)])
    ig = np.maximum(ig, 0.0)
    o = np.lexsort((-ig, iq))
    iq, ig = iq[o], ig[o]
    first = np.r_[True, iq[1:] != iq[:-1]] if len(iq) else np.zeros(0, dtype=bool)
    start = np.maximum.accumulate(np.where(first, np.arange(len(iq)), 0)) if len(iq) else iq
    pos = np.arange(len(iq)) - start + 1
    inside = pos <= depth
    n_q = aligned.n_queries
    idcg = np.bincount(iq[inside], weights=ig[inside] / np.log2(pos[inside] + 1.0), minlength=n_q)
    evaluated = aligned.in_run & aligned.in_qrels if len(qrels) else aligned.in_run
    n_r = max(int(evaluated.sum()), 1)
    z = idcg[ranked.q]
    weight = np.where(z > 0, top_gain * disc / np.where(z > 0, z, 1.0) / n_r, 0.0)
    return {"source": run.source, "query": queries, "doc": docs, "judged": np.asarray(ranked.judged, dtype=bool),
            "weight": weight, "rank": np.asarray(ranked.rank, dtype=np.int64)}
