"""Pooling: which unjudged documents to judge next, across several runs.

Depth-k pooling (the TREC practice) takes the union of every run's top ``k`` documents per query
and keeps those the judgments do not hold yet. A document with a negative grade counts as
unjudged, as trec_eval reads it ("pooled but not judged").

The priority of a candidate
---------------------------
A budget of ``N`` keeps the ``N`` candidates of highest priority. Each run r has an exact interval
[lower_r, upper_r] for its mean NDCG@k over every grading of the unjudged documents of its top k
with the scale's grades (:func:`rankflavor.bounds`, :mod:`rankflavor.analysis.judgments.extremes`); W_r is
its width. Judging document d of query q with grade g changes every run's interval: for a run
holding d in its top k, d leaves the unjudged documents (its query's interval is then the exact
one over the others); for a run that does not, d joins the judgments of q, and so the global
ideal. The priority of d is what the judgment is sure to remove from the runs' summed widths::

    priority(q, d) = min over grades g of S of  sum over runs r of  (W_r - W_r[d judged g])

(per query, divided by the number of queries in run r's mean). Judging the documents of highest
priority first closes the runs' intervals fastest whatever the judge says: the targeted judging
of Moffat, Webber & Zobel, "Strategic system comparisons via targeted relevance judgments"
(SIGIR 2007), who order documents by the summed rank-biased weight the systems give them, here
with the exact NDCG@k intervals in place of that weight. Priorities are computed once: a choice
does not change another candidate's until grades are known (judge, add the grades to the qrels,
pool again). Ties go to the better best rank, then to more runs, then to query and doc id order.

Without judgments (pooling from scratch) every query the runs answer counts, and without a scale
the grades are 0 and 1 (binary relevance).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rankflavor.analysis.judgments.bounds import zero_imputed
from rankflavor.analysis.judgments.extremes import extremes_of
from rankflavor.analysis.judgments.scope import QueryScope, Rules, docnos_of, scopes
from rankflavor.engine.plan import Evaluation
from rankflavor.errors import InputError, UsageError
from rankflavor.io.columns import dictionary_array, string_array, to_strings
from rankflavor.io.inputs import as_qrels, as_run
from rankflavor.io.tables import Qrels, Run
from rankflavor.metrics.measure import Measure, parse_measure
from rankflavor.presets.irds import scale_for
from rankflavor.presets.scales import Scale

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
        (rows here), and per run its ``top_k`` rows and ``unjudged`` among them; with judgments
        chosen by label source, ``labels``: ``{"choice": ..., "dropped": {kind: count}}``.
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
        if "labels" in c:
            left = ", ".join(f"{n:,} {k} label{'s' if n != 1 else ''}" for k, n in c["labels"]["dropped"].items())
            lines.append(f"  judged means judged by --labels {c['labels']['choice']}: "
                         + (f"{left} left out (their documents are pooled again)" if left else "nothing left out"))
        return "\n".join(lines) + "\n"


def pool(runs: Sequence[Any], depth: int = 10, qrels: Any = None, budget: int | None = None,
         scale: str | Scale | None = None, gain: str = "linear", strategy: str = "gap", seed: int = 0,
         labels: str | None = None) -> Pool:
    """The unjudged documents of the runs' top ``depth``, by priority (module docstring).

    Parameters
    ----------
    runs : paths, ``{query: {doc: score}}`` dicts or Run tables; ranked as trec_eval does
        (score descending, ties by docno descending).
    depth : the pooling depth k (the cutoff of the NDCG@k whose intervals are to close).
    qrels : the judgments so far (path, dict or Qrels), or None (nothing judged yet).
    budget : keep ``budget`` candidates (None: all).
    scale : the label scale (name or :class:`~rankflavor.analysis.judgments.Scale`): its grades are what an
        unjudged document may get, and the judgments must be on it. Needed with ``qrels``; without
        either, the grades are 0 and 1.
    gain : ``linear`` (g) or ``exp2`` (2^g - 1), the gain of the NDCG the priorities are for
        (a scale with its own gain table uses that).
    strategy : ``gap`` keeps the candidates of highest priority; ``random`` keeps ``budget``
        candidates drawn uniformly with ``seed`` (the baseline pooling is measured against),
        listed by priority.
    seed : the seed of ``strategy="random"``.
    labels : which judgments count as judged, by the kind of their label source
        (:func:`rankflavor.io.labels.select_labels`): ``labels="human"`` pools again the documents only
        an LLM (or clicks) labelled, for people to judge. What is left out is counted in
        ``counts["labels"]`` and the summary. None: every judgment (or the choice ``qrels`` was
        read with, ``--labels``).

    With Spark (paths Spark resolves, Parquet directories, DataFrames), the same Pool:
    :func:`rankflavor.spark.pool_spark`.

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
    sc, measure, grades = pool_measure(runs, depth, qrels, budget, scale, gain, strategy)
    if qrels is not None:
        judged = as_qrels(qrels)
        if labels is not None:
            from rankflavor.io.labels import select_labels

            judged = select_labels(judged, labels)
        assert sc is not None  # (pool_measure refuses judgments without a scale)
        sc.check(judged)
    elif labels is not None:
        raise UsageError("pool: labels chooses among judgments; give the judgments (qrels=..., --qrels)")
    else:
        judged = Qrels(dictionary_array([]), string_array([]), np.zeros(0))
    parts = [run_part(as_run(r), judged, measure, grades, depth) for r in runs]
    cands = candidates(parts, len(grades))
    chosen = choose(cands, budget, strategy, seed)
    counts = pool_counts(runs, [p["source"] for p in parts], np.array([len(p["doc"]) for p in parts]),
                         np.array([int((~p["judged"]).sum()) for p in parts]), cands, chosen)
    if judged.label_rule is not None:
        counts["labels"] = {"choice": judged.label_rule, "dropped": dict(judged.labels_dropped)}
    return Pool(cands["query"][chosen], cands["doc"][chosen], cands["priority"][chosen], cands["runs"][chosen],
                cands["best"][chosen], depth, budget, counts)


def pool_measure(runs: Sequence[Any], depth: int, qrels: Any, budget: int | None, scale: str | Scale | None,
                 gain: str, strategy: str) -> tuple[Scale | None, Measure, np.ndarray]:
    """:func:`pool`'s arguments checked: the scale, the NDCG@depth whose intervals the priorities
    close, and the grades an unjudged document may get."""
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
    sc = scale_for(scale, qrels)  # named, or an ir_datasets dataset's documented grades
    if qrels is not None and sc is None:
        raise UsageError("pool: with judgments, declare the label scale (scale='trec_dl', --scale): "
                         "its grades are what an unjudged document may get")
    text = f"ndcg@{depth}" if sc is not None and sc.gains is not None else f"ndcg@{depth}[gain={gain}]"
    measure = sc.measure(text) if sc is not None else parse_measure(text)
    grades = np.asarray(sc.grades if sc is not None else (0.0, 1.0), dtype=np.float64)
    return sc, measure, grades


def candidates(parts: list[dict[str, Any]], n_grades: int) -> dict[str, np.ndarray]:
    """Every (query, doc) pair in some run's top k (``parts``: :func:`run_part` of each run, over
    the same queries), in (query, doc) order: ``query``, ``doc``, ``judged``, ``runs`` (runs
    holding it), ``best`` (its best rank), ``priority`` (0 for a judged pair)."""
    cat = {key: np.concatenate([p[key] for p in parts]) for key in ("query", "doc", "judged", "rank")}
    keys = np.asarray([f"{q}\x00{d}" for q, d in zip(cat["query"], cat["doc"], strict=True)], dtype=object)
    uniq, inverse = np.unique(keys, return_inverse=True) if len(keys) else (keys, np.zeros(0, dtype=np.int64))
    n = len(uniq)
    is_judged = np.zeros(n, dtype=bool)
    is_judged[inverse[cat["judged"]]] = True
    n_runs = np.bincount(inverse, minlength=n).astype(np.int64)
    best = np.full(n, np.iinfo(np.int64).max)
    np.minimum.at(best, inverse, cat["rank"])
    split = np.asarray([u.split("\x00", 1) for u in uniq], dtype=object).reshape(n, 2)
    priority = np.zeros(n)
    for i in np.flatnonzero(~is_judged).tolist():
        priority[i] = _priority(parts, str(split[i, 0]), str(split[i, 1]), n_grades)
    return {"query": split[:, 0], "doc": split[:, 1], "judged": is_judged, "runs": n_runs, "best": best,
            "priority": priority}


def choose(cands: dict[str, np.ndarray], budget: int | None, strategy: str, seed: int) -> np.ndarray:
    """The rows of ``cands`` (of any number of queries) to judge, best first (module docstring)."""
    # (query, doc) order first, as np.unique gives it: the last tie-break
    at = np.asarray(sorted(range(len(cands["query"])), key=lambda i: f"{cands['query'][i]}\x00{cands['doc'][i]}"),
                    dtype=np.int64)
    keep = at[~cands["judged"][at]]
    n_runs, best, priority = cands["runs"], cands["best"], cands["priority"]
    # priority desc (equal to 12 decimals: sums of widths taken in another order differ in the
    # last bits), best rank asc, runs desc, then (query, doc) order.
    order = keep[np.lexsort((np.arange(len(keep)), -n_runs[keep], best[keep], -np.round(priority[keep], 12)))]
    if budget is None:
        return order
    if strategy == "random":
        picked = np.random.default_rng(seed).choice(len(order), size=min(budget, len(order)), replace=False)
        return order[np.sort(picked)]
    return order[:budget]


def pool_counts(runs: Sequence[Any], sources: Sequence[str], top_k: np.ndarray, unjudged: np.ndarray,
                cands: dict[str, np.ndarray], chosen: np.ndarray) -> dict[str, Any]:
    """:attr:`Pool.counts` (without ``labels``)."""
    per_run = {}
    for i, (r, source) in enumerate(zip(runs, sources, strict=True)):
        name = str(source) if isinstance(r, (str, Run)) or hasattr(r, "__fspath__") else f"run {i + 1}"
        name = name if name not in per_run else f"{name} ({i + 1})"
        per_run[name] = {"top_k": int(top_k[i]), "unjudged": int(unjudged[i])}
    n = len(cands["query"])
    return {"runs": len(runs), "queries": len(set(cands["query"].tolist())), "pooled": n,
            "judged": int(cands["judged"].sum()), "candidates": int((~cands["judged"]).sum()),
            "selected": len(chosen), "per_run": per_run}


def _priority(parts: list[dict[str, Any]], query: str, doc: str, n_grades: int) -> float:
    """min over grades of the summed shrink of the runs' mean widths (module docstring)."""
    total = np.zeros(n_grades)
    for part in parts:
        shrink = part["hole"].get((query, doc))
        if shrink is None:
            shrink = part["elsewhere"].get(query)
        if shrink is not None:
            total += shrink
    return float(total.min())


def run_mean_count(run: Run, qrels: Qrels, measure: Measure, grades: np.ndarray, scratch: bool) -> tuple[int, bool]:
    """The queries in ``run``'s mean (what :func:`run_part` divides the shrinks by) and whether it
    shares a query with ``qrels``, over these tables (a part of the queries: the counts add up)."""
    plan = Evaluation(qrels, run, whole=False)
    try:
        aligned = plan.aligned(str(measure.flavor.duplicates))
        shares = bool((aligned.in_run & aligned.in_qrels).any())
        if scratch:
            return int(aligned.in_run.sum()), shares
        return len(plan.evaluate(zero_imputed(measure)).queries), shares
    finally:
        plan.close()


def run_part(run: Run, qrels: Qrels, measure: Measure, grades: np.ndarray, depth: int, *, scratch: bool | None = None,
             n_mean: int | None = None) -> dict[str, Any]:
    """One run's top ``depth`` rows (ids, rank, judged), and per candidate the shrink of the run's
    mean width by grade: ``hole`` for its unjudged documents in scope, ``elsewhere`` per query for
    a document of it that the run does not hold there.

    ``scratch`` (no judgments at all) and ``n_mean`` (the queries in the run's mean) are the whole
    input's, given when these tables hold a part of its queries (a Spark task's); by default they
    are these tables', and a run sharing no query with the judgments is refused."""
    plan = Evaluation(qrels, run, whole=False)
    try:
        m0 = zero_imputed(measure)
        rules = Rules.of(m0, grades)
        whole = scratch is None
        scratch = not len(qrels) if scratch is None else scratch
        found = scopes(plan, rules, every_query=scratch)
        ranked = found.ranked
        aligned = ranked.aligned
        if whole and not scratch and not (aligned.in_run & aligned.in_qrels).any():
            # Judgments of other topics (a DL 2020 run against DL 2019 qrels): every document would
            # look unjudged. Pooling from scratch is the same call without qrels.
            raise InputError(run.source, None, f"shares no query with the judgments {qrels.source}; "
                             "pool without them to pool this run from scratch")
        if n_mean is None:
            n_mean = int(aligned.in_run.sum()) if scratch else len(plan.evaluate(m0).queries)
        top = np.flatnonzero(ranked.rank <= depth)
        assert ranked.row is not None
        docs = np.asarray(to_strings(docnos_of(aligned, ranked.row[top])), dtype=object)
        hole, elsewhere = _shrinks(rules, found.scopes, max(n_mean, 1))
        return {"source": run.source, "query": aligned.query_ids[ranked.q[top]].astype(object), "doc": docs,
                "judged": np.asarray(ranked.judged[top], dtype=bool), "rank": np.asarray(ranked.rank[top], dtype=np.int64),
                "hole": hole, "elsewhere": elsewhere}
    finally:
        plan.close()


def _shrinks(rules: Rules, found: list[QueryScope], n_mean: int) -> tuple[dict[tuple[str, str], np.ndarray],
                                                                          dict[str, np.ndarray]]:
    """Per (query, doc) in scope and per query, W - W[judged g] for each grade g, / n_mean."""
    grades = rules.grades.tolist()
    now = extremes_of(rules, found)
    fixed = [s.fixed(h, g) for s in found for h in range(s.n_holes) for g in grades]
    other = [s.judged_elsewhere(g) for s in found for g in grades]
    after = extremes_of(rules, fixed + other)
    width = np.array([np.nan_to_num(e.width) for e in after]).reshape(-1)
    hole: dict[tuple[str, str], np.ndarray] = {}
    elsewhere: dict[str, np.ndarray] = {}
    at = 0
    for s, e in zip(found, now, strict=True):
        w = np.nan_to_num(e.width)
        for d in s.hole_docs:
            hole[(s.qid, d)] = (w - width[at:at + len(grades)]) / n_mean
            at += len(grades)
    for s, e in zip(found, now, strict=True):
        elsewhere[s.qid] = (np.nan_to_num(e.width) - width[at:at + len(grades)]) / n_mean
        at += len(grades)
    return hole, elsewhere


__all__ = ["FORMATS", "Pool", "candidates", "choose", "pool", "pool_counts", "pool_measure", "run_mean_count", "run_part"]
