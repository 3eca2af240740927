"""The ranker's paths (``rankflavor.order.Ranker``) against its full, exact ranking.

* Shared work (scores at a precision, the sort, tied rows, orders per rule) must not change any
  order, whatever sequence of orderings one ranker serves.
* ``Ranker.rank(exact=False)``: every metric value equals the one computed from exact rows
  through the kernels directly (the exact rows equal a brute-force sort: test_order_ties.py).
* ``Ranker.judged`` (the judged rows of a run in rank order, ranked alone) equals the judged
  rows of the full ranking under every ordering knob, and so do the values of every
  judged-only metric; ``Ranker.prefix`` (the top k, whole tie groups, and the judged rows
  below) gives every ``top_rows`` measure the values of the full ranking.
* ``Ranker.ranked`` picks the path from the measure's declared needs.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given

import rankflavor
from rankflavor.align import Aligned, align
from rankflavor.engine.aggregate import aggregate
from rankflavor.flavor.flavor import Flavor
from rankflavor.io.inputs import as_qrels, as_run
from rankflavor.io.tables import Run
from rankflavor.metrics.measure import Measure, parse_measure
from rankflavor.metrics.registry import REGISTRY
from rankflavor.order import Needs, Ordering, Ranked, Ranker, order_key

from ..support.order_cases import RANDOM, Case, cases, examples, full_rank, measures_of, same_values, seeded_case


def test_shared_sort_gives_same_orders_in_any_sequence() -> None:
    """Orders computed after others by one ranker (shared work) equal fresh ones."""
    rng = np.random.default_rng(5)
    run = {f"q{i}": {f"d{j}": float(rng.integers(0, 3)) for j in rng.choice(50, 20, replace=False)} for i in range(10)}
    qrels = {q: {d: int(rng.integers(-1, 3)) for d in list(docs)[::2]} for q, docs in run.items()}
    flavors = [Flavor(ties=t, precision=p) for t in ("docno_desc", "averaged", "docno_asc", "pessimistic",
                                                      "optimistic", "input_order") for p in ("float64", "float32")]
    shared = Ranker(align(as_qrels(qrels), as_run(run)))
    for f in flavors:
        fresh = full_rank(align(as_qrels(qrels), as_run(run)), f)
        again = full_rank(shared.aligned, f, ranker=shared)
        np.testing.assert_array_equal(fresh.row, again.row)
        np.testing.assert_array_equal(fresh.grade, again.grade)


# ---------------------------------------------------------------------------------------------
# Every row, inexact: the values of exact rows
# ---------------------------------------------------------------------------------------------


def _rank_once(cache: dict[Any, Ranked], aligned: Aligned, m: Measure, exact: bool) -> Ranked:
    """The full ranking once per ordering (measures sharing the ordering knobs share it, as in evaluate)."""
    key = (order_key(m.flavor), exact)
    if key not in cache:
        cache[key] = full_rank(aligned, m.flavor, exact=exact)
    return cache[key]


@RANDOM
@given(case=cases())
def test_inexact_rows_give_every_value_of_exact_rows(case: Case) -> None:
    """evaluate (inexact rows, judged rows only where allowed) against exact rows and every row."""
    measures = list(case.measures)
    results = rankflavor.evaluate(case.qrels, case.run, measures)  # inexact rows inside
    assert len(results) == len(measures)
    aligned = align(case.qrels, case.run, duplicates=case.knobs["duplicates"])
    orderings: dict[Any, Ranked] = {}
    exact = full_rank(aligned, measures[0].flavor, exact=True)
    inexact = full_rank(align(case.qrels, case.run, duplicates=case.knobs["duplicates"]), measures[0].flavor,
                        exact=False)
    # What every kernel reads at each rank is the same; only which document sits there may differ.
    for name in ("q", "rank", "grade", "judged", "pooled", "score", "n_ret"):
        np.testing.assert_array_equal(getattr(exact, name), getattr(inexact, name), err_msg=name)
    for m, got in zip(measures, results, strict=True):
        assert got.measure == m
        ranked = _rank_once(orderings, aligned, m, exact=True)
        values, empty = m.spec.kernel(ranked, m)  # every row, bypassing the judged-rows view
        want = aggregate(m, values, empty, aligned)
        assert list(got.queries) == list(want.queries), str(m)
        assert same_values(got.values, want.values), (str(m), got.values, want.values)
        assert (got.summary == want.summary) or (math.isnan(got.summary) and math.isnan(want.summary)), str(m)


# ---------------------------------------------------------------------------------------------
# The judged rows: the view of the full ranking, and ranked alone
# ---------------------------------------------------------------------------------------------


def _judged_only(m: Measure) -> bool:
    return bool(m.spec.reads_judged_only(m))


def test_every_judged_only_metric_is_covered() -> None:
    """A metric registered with judged_only must appear in the random measures with the view in use."""
    covered = {m.metric for m in measures_of(()) if _judged_only(m)}
    declared = {name for name, spec in REGISTRY.items() if spec.judged_only is not False}
    assert declared <= covered, declared - covered
    assert {"P", "AP", "bpref", "ndcg", "dcg", "num_ret", "judged"} <= covered  # the list is not empty by accident


@RANDOM
@given(case=cases())
def test_judged_rows_view_gives_the_values_of_every_row(case: Case) -> None:
    aligned = align(case.qrels, case.run, duplicates=case.knobs["duplicates"])
    orderings: dict[Any, Ranked] = {}
    checked = 0
    for m in case.measures:
        if not _judged_only(m):
            continue
        for exact in (False, True):
            ranked = _rank_once(orderings, aligned, m, exact=exact)
            full_values, full_empty = m.spec.kernel(ranked, m)
            view_values, view_empty = m.spec.kernel(ranked.judged_rows, m)
            np.testing.assert_allclose(view_values, full_values, rtol=0, atol=1e-12, err_msg=str(m))
            np.testing.assert_array_equal(view_empty, full_empty, err_msg=str(m))
            computed, _ = m.spec.compute(ranked, m)
            np.testing.assert_array_equal(computed, view_values, err_msg=str(m))
            checked += 1
    assert checked > 0


@RANDOM
@given(case=cases())
def test_ranking_the_judged_rows_alone_equals_the_view(case: Case) -> None:
    """``Ranker.judged`` ranks only the judged rows of a run in rank order: what it returns
    must be what the judged-rows view of the full ranking holds, rank by rank."""
    flavor = case.measures[0].flavor
    aligned = align(case.qrels, case.run, duplicates=case.knobs["duplicates"])
    alone = Ranker(aligned).judged(Ordering.of(flavor))
    if alone is None:
        return  # not in rank order, or self hits dropped: evaluate ranks every row
    view = full_rank(align(case.qrels, case.run, duplicates=case.knobs["duplicates"]), flavor).judged_rows
    for name in ("q", "rank", "grade", "judged", "pooled", "score", "n_ret", "jq", "jgrade"):
        np.testing.assert_array_equal(getattr(alone, name), getattr(view, name), err_msg=name)
    assert (alone.dropped_by_depth, alone.dropped_unjudged) == (view.dropped_by_depth, view.dropped_unjudged)
    assert alone.judged_only


ORDERING = list(
    itertools.product(
        ("docno_desc", "docno_asc", "input_order", "averaged", "pessimistic", "optimistic"),
        ("none", "5"),
        ("zero", "condensed"),
        ("unjudged", "zero"),
    )
)


@pytest.mark.parametrize("integer_docs", [True, False])
@pytest.mark.parametrize("seed", range(max(3, examples(12))))
def test_judged_equals_full_rank(seed: int, integer_docs: bool) -> None:
    qrels, run = seeded_case(seed, integer_docs=integer_docs)
    ranker = Ranker(align(qrels, run))
    for ties, depth, unjudged, negatives in ORDERING:
        flavor = Flavor(ties=ties, depth=depth, unjudged=unjudged, negatives=negatives)
        fast = ranker.judged(Ordering.of(flavor))
        assert fast is not None
        for exact in (True, False):
            full = full_rank(ranker.aligned, flavor, exact=exact, ranker=ranker).judged_rows
            where = f"{flavor} exact={exact}"
            np.testing.assert_array_equal(fast.q, full.q, err_msg=where)
            np.testing.assert_array_equal(fast.rank, full.rank, err_msg=where)
            np.testing.assert_array_equal(fast.grade, full.grade, err_msg=where)
            np.testing.assert_array_equal(fast.judged, full.judged, err_msg=where)
            np.testing.assert_array_equal(fast.n_ret, full.n_ret, err_msg=where)
            assert (fast.dropped_by_depth, fast.dropped_unjudged) == (full.dropped_by_depth, full.dropped_unjudged), where
            if not exact:  # the same documents sit at each rank (equal-judgment ties keep file order)
                np.testing.assert_array_equal(fast.row, full.row, err_msg=where)


@pytest.mark.parametrize("unsorted_at_float64", [False, True])
@pytest.mark.parametrize("seed", range(max(3, examples(6))))
def test_judged_at_float32_equals_full_rank(seed: int, unsorted_at_float64: bool) -> None:
    """Scores that differ at float64 but tie at float32 (the trec_eval preset's precision): the
    judged rows read scores rounded where gathered, and a run out of order at float64 only (a
    rise below float32 resolution) still ranks as the full ranking does."""
    from rankflavor.order.layout import find_layout

    qrels, run = seeded_case(40 + seed)
    scores = run.score.astype(np.float64)
    # Nudges far below a float32 step: ties at float32 only. Down along the rows, the run stays
    # in rank order at float64; up on every other row, tied rows rise at float64.
    if unsorted_at_float64:
        scores = scores + np.where(np.arange(len(scores)) % 2 == 0, 1e-12, 0.0) * scores
    else:
        scores = scores * (1 - 1e-12 * np.arange(len(scores)) / len(scores))
    assert (scores.astype(np.float32) == run.score.astype(np.float32)).all()
    aligned = align(qrels, Run(run.query, run.doc, scores, "run"))
    assert (find_layout(aligned.run_q, aligned.run_score) is None) == unsorted_at_float64  # both branches taken
    for ties in ("docno_desc", "docno_asc", "pessimistic", "optimistic", "averaged"):
        flavor = Flavor(ties=ties, precision="float32")
        fast = Ranker(aligned).judged(Ordering.of(flavor))
        assert fast is not None
        full = full_rank(aligned, flavor, exact=True).judged_rows
        np.testing.assert_array_equal(fast.q, full.q, err_msg=ties)
        np.testing.assert_array_equal(fast.rank, full.rank, err_msg=ties)
        np.testing.assert_array_equal(fast.grade, full.grade, err_msg=ties)
        np.testing.assert_array_equal(fast.score, full.score, err_msg=ties)


def test_judged_declines_unsorted_runs() -> None:
    qrels, run = seeded_case(3)
    scores = run.score.copy()
    scores[[0, 1]] = scores[[1, 0]] + np.array([0.0, 10.0])  # the second row now outscores the first
    aligned = align(qrels, Run(run.query, run.doc, scores, "run"))
    assert Ranker(aligned).judged(Ordering()) is None
    assert Ranker(align(qrels, run)).judged(Ordering(self_hits="drop")) is None


# ---------------------------------------------------------------------------------------------
# The top k rows (whole tie groups) and the judged rows below
# ---------------------------------------------------------------------------------------------

PREFIX_MEASURES = [
    "ndcg@{k}[ties=averaged]",
    "ndcg@{k}[ties=averaged,gain=exp2,discount=jk(3)]",
    "ndcg@{k}[ties=averaged,ideal=local]",
    "ndcg@{k}[ties=averaged,ideal=local,ideal_cut=hits]",
    "ndcg@{k}[ties=averaged,ideal=max,max_grade=3]",
    "ndcg@{k}[ties=averaged,unjudged_grade=1]",
    "ndcg@{k}[ties=averaged,negatives=zero,precision=float32]",
    "dcg@{k}[ties=averaged,unjudged_grade=2]",
]


@pytest.mark.parametrize("integer_docs", [True, False])
@pytest.mark.parametrize("seed", range(max(3, examples(10))))
def test_top_rows_give_the_values_of_the_full_ranking(seed: int, integer_docs: bool) -> None:
    """Every ``top_rows`` measure computes exactly on the prefix what it computes on every row."""
    qrels, run = seeded_case(300 + seed, integer_docs=integer_docs)
    aligned = align(qrels, run)
    for k in (1, 3, 10, 60):
        for text in PREFIX_MEASURES:
            m = parse_measure(text.format(k=k))
            assert m.spec.reads_top_rows(m) == k
            prefix = Ranker(aligned).prefix(Ordering.of(m.flavor), k)
            assert prefix is not None and prefix.row is not None and not prefix.judged_only
            assert len(prefix.q) <= len(aligned.run_q)
            shared = Ranker(aligned).ranked(Ordering.of(m.flavor), m.spec.needs(m))
            assert shared.row is not None and len(shared.row) == len(prefix.row)  # the prefix, not the full ranking
            got, got_empty = m.spec.compute(prefix, m)
            want, want_empty = m.spec.kernel(full_rank(aligned, m.flavor, exact=True), m)
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-15, err_msg=f"{m} k={k}")
            np.testing.assert_array_equal(got_empty, want_empty, err_msg=f"{m} k={k}")


def test_top_rows_are_not_used_where_ranks_below_k_matter() -> None:
    for text in ("ndcg[ties=averaged]", "ndcg@10", "ndcg@10[ties=averaged,ideal=recall@50]"):
        m = parse_measure(text)
        assert m.spec.reads_top_rows(m) is None, text
    qrels, run = seeded_case(5)
    ranker = Ranker(align(qrels, run))
    assert ranker.prefix(Ordering(ties="averaged", unjudged="condensed"), 5) is None
    assert ranker.prefix(Ordering(ties="averaged", depth=7), 5) is None
    m = parse_measure("ndcg@10[ties=averaged,depth=7]")  # falls back to the full ranking, same values
    full = full_rank(align(qrels, run), m.flavor)
    assert len(ranker.ranked(Ordering.of(m.flavor), m.spec.needs(m)).q) == len(full.q)


def test_ranked_picks_the_path_from_the_needs_and_keeps_it() -> None:
    """Judged rows alone for a judged-only kernel, every row otherwise; one ranking per
    (ordering, needs), and a judged view of a full ranking already made rather than a new one."""
    qrels, run = seeded_case(6)
    ranker = Ranker(align(qrels, run))
    o = Ordering(ties="docno_desc")
    judged = ranker.ranked(o, Needs(judged_only=True))
    assert judged.judged_only and ranker.ranked(o, Needs(judged_only=True)) is judged
    full = ranker.ranked(o)
    assert not full.judged_only and ranker.ranked(o) is full and len(full.q) == len(ranker.aligned.run_q)
    other = Ordering(ties="docno_asc")
    full_other = ranker.ranked(other)
    assert ranker.ranked(other, Needs(judged_only=True)).row.tolist() == full_other.judged_rows.row.tolist()
    ranker.forget_rankings()
    assert ranker.ranked(o) is not full
    np.testing.assert_array_equal(ranker.ranked(o).row, full.row)  # same ranking, made again
