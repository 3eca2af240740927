"""``order.rank_judged`` (ranks only the judged rows of a run in rank order) must equal the
judged rows of the full ``order.rank`` under every ordering knob, and every judged-only metric
must give the same values through either."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankflavor.align import align
from rankflavor.columns import string_array
from rankflavor.flavor import Flavor
from rankflavor.order import rank, rank_judged
from rankflavor.tables import Qrels, Run


def _case(seed: int, n_queries: int = 12, integer_docs: bool = True) -> tuple[Qrels, Run]:
    rng = np.random.default_rng(seed)
    rq: list[str] = []
    rd: list[str] = []
    rs: list[float] = []
    jq: list[str] = []
    jd: list[str] = []
    jg: list[float] = []
    for i in rng.permutation(n_queries):  # blocks not in byte order of the ids
        q = f"q{i}"
        n = int(rng.integers(1, 40))
        docs = rng.choice(200, size=n, replace=False)
        names = [str(d) if integer_docs else f"d{d:03d}" for d in docs]
        scores = np.sort(rng.choice([0.0, 0.5, 1.0, 1.5, 2.0], size=n) if rng.random() < 0.7 else rng.random(n))[::-1]
        rq += [q] * n
        rd += names
        rs += scores.tolist()
        judged = rng.random(n) < 0.5
        for name, j in zip(names, judged, strict=True):
            if j:
                jq.append(q)
                jd.append(name)
                jg.append(float(rng.choice([-1, 0, 1, 2, 3])))
        for extra in rng.choice(np.arange(200, 260), size=int(rng.integers(0, 4)), replace=False):
            jq.append(q)
            jd.append(str(extra) if integer_docs else f"d{extra:03d}")
            jg.append(float(rng.choice([0, 1, 2])))
    qrels = Qrels(string_array(jq), string_array(jd), np.array(jg), "qrels")
    run = Run(string_array(rq), string_array(rd), np.array(rs), "run")
    return qrels, run


ORDERING = list(
    itertools.product(
        ("docno_desc", "docno_asc", "input_order", "averaged", "pessimistic", "optimistic"),
        ("none", "5"),
        ("zero", "condensed"),
        ("unjudged", "zero"),
    )
)


@pytest.mark.parametrize("integer_docs", [True, False])
@pytest.mark.parametrize("seed", range(12))
def test_rank_judged_equals_full_rank(seed: int, integer_docs: bool) -> None:
    qrels, run = _case(seed, integer_docs=integer_docs)
    aligned = align(qrels, run)
    for ties, depth, unjudged, negatives in ORDERING:
        flavor = Flavor(ties=ties, depth=depth, unjudged=unjudged, negatives=negatives)
        fast = rank_judged(aligned, flavor)
        assert fast is not None
        for exact in (True, False):
            full = rank(aligned, flavor, exact_rows=exact).judged_rows
            where = f"{flavor} exact_rows={exact}"
            np.testing.assert_array_equal(fast.q, full.q, err_msg=where)
            np.testing.assert_array_equal(fast.rank, full.rank, err_msg=where)
            np.testing.assert_array_equal(fast.grade, full.grade, err_msg=where)
            np.testing.assert_array_equal(fast.judged, full.judged, err_msg=where)
            np.testing.assert_array_equal(fast.n_ret, full.n_ret, err_msg=where)
            assert (fast.dropped_by_depth, fast.dropped_unjudged) == (full.dropped_by_depth, full.dropped_unjudged), where
            if not exact:  # the same documents sit at each rank (equal-judgment ties keep file order)
                np.testing.assert_array_equal(fast.row, full.row, err_msg=where)


@pytest.mark.parametrize("unsorted_at_float64", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_rank_judged_at_float32_equals_full_rank(seed: int, unsorted_at_float64: bool) -> None:
    """Scores that differ at float64 but tie at float32 (the trec_eval preset's precision): the
    judged rows read scores rounded where gathered, and a run out of order at float64 only (a
    rise below float32 resolution) still ranks as the full ranking does."""
    qrels, run = _case(40 + seed)
    scores = run.score.astype(np.float64)
    # Nudges far below a float32 step: ties at float32 only. Down along the rows, the run stays
    # in rank order at float64; up on every other row, tied rows rise at float64.
    if unsorted_at_float64:
        scores = scores + np.where(np.arange(len(scores)) % 2 == 0, 1e-12, 0.0) * scores
    else:
        scores = scores * (1 - 1e-12 * np.arange(len(scores)) / len(scores))
    assert (scores.astype(np.float32) == run.score.astype(np.float32)).all()
    aligned = align(qrels, Run(run.query, run.doc, scores, "run"))
    from rankflavor.order import _layout

    assert (_layout(aligned.run_q, aligned.run_score) is None) == unsorted_at_float64  # both branches taken
    for ties in ("docno_desc", "docno_asc", "pessimistic", "optimistic", "averaged"):
        flavor = Flavor(ties=ties, precision="float32")
        fast = rank_judged(aligned, flavor)
        assert fast is not None
        full = rank(aligned, flavor, exact_rows=True).judged_rows
        np.testing.assert_array_equal(fast.q, full.q, err_msg=ties)
        np.testing.assert_array_equal(fast.rank, full.rank, err_msg=ties)
        np.testing.assert_array_equal(fast.grade, full.grade, err_msg=ties)
        np.testing.assert_array_equal(fast.score, full.score, err_msg=ties)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 4)), min_size=0, max_size=30))
def test_layout_from_known_blocks_equals_the_scan(rows: list[tuple[int, int]]) -> None:
    """The layout read with the query blocks alignment found equals the one found by scanning
    the codes: a rise of score inside a block means no layout, a rise from one block to the
    next does not."""
    from rankflavor.kernels import block_starts
    from rankflavor.order import _layout

    q = np.array([r[0] for r in rows], dtype=np.int32)
    score = np.array([float(r[1]) for r in rows])
    scanned = _layout(q, score)
    starts = block_starts(q)
    if starts is None:
        return  # alignment passes no blocks then
    known = _layout(q, score, starts)
    assert (known is None) == (scanned is None)
    if known is not None and scanned is not None:
        for name in ("starts", "lengths", "codes"):
            np.testing.assert_array_equal(getattr(known, name), getattr(scanned, name))


def test_rank_judged_declines_unsorted_runs() -> None:
    qrels, run = _case(3)
    scores = run.score.copy()
    scores[[0, 1]] = scores[[1, 0]] + np.array([0.0, 10.0])  # the second row now outscores the first
    aligned = align(qrels, Run(run.query, run.doc, scores, "run"))
    assert rank_judged(aligned, Flavor()) is None
    assert rank_judged(align(qrels, run), Flavor(self_hits="drop")) is None


@pytest.mark.parametrize("seed", range(6))
def test_evaluate_values_equal_full_kernels(seed: int) -> None:
    """evaluate() (judged-rows fast path) against kernels run on the full exact ranking."""
    from rankflavor import evaluate
    from rankflavor.presets import resolve_measures

    qrels, run = _case(100 + seed)
    names = ["ndcg_cut.5", "ndcg", "map", "P.5", "recall.10", "recip_rank", "Rprec", "bpref", "success.5",
             "num_rel_ret", "gm_map"]
    for knobs in ({}, {"unjudged": "condensed"}, {"ties": "pessimistic", "depth": "10"}):
        got = evaluate(qrels, run, names, preset="trec_eval", **knobs)
        measures, _ = resolve_measures(names, "trec_eval", knobs)
        aligned = align(qrels, run)
        code = {name: i for i, name in enumerate(aligned.query_ids)}
        for m, res in zip(measures, got, strict=True):
            values, _ = m.spec.kernel(rank(aligned, m.flavor, exact_rows=True), m)
            expected = values[[code[q] for q in res.queries]]
            np.testing.assert_allclose(res.values.astype(float), expected, rtol=0, atol=1e-15, err_msg=f"{m} {knobs}")



# ---------------------------------------------------------------------------------------------
# order.rank_prefix: the top k rows (whole tie groups) and the judged rows below
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
@pytest.mark.parametrize("seed", range(10))
def test_top_rows_give_the_values_of_the_full_ranking(seed: int, integer_docs: bool) -> None:
    """Every ``top_rows`` measure computes exactly on rank_prefix what it computes on rank()."""
    from rankflavor.measure import parse_measure
    from rankflavor.order import rank_prefix, ranked_for

    qrels, run = _case(300 + seed, integer_docs=integer_docs)
    aligned = align(qrels, run)
    for k in (1, 3, 10, 60):
        for text in PREFIX_MEASURES:
            m = parse_measure(text.format(k=k))
            assert m.spec.reads_top_rows(m) == k
            prefix = rank_prefix(aligned, m.flavor, k)
            assert prefix is not None and not prefix.judged_only
            assert len(prefix.q) <= len(aligned.run_q)
            shared = ranked_for(aligned, m, {})
            assert shared.row is not None and len(shared.row) == len(prefix.row)  # the prefix, not the full ranking
            got, got_empty = m.spec.compute(prefix, m)
            want, want_empty = m.spec.kernel(rank(aligned, m.flavor, exact_rows=True), m)
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-15, err_msg=f"{m} k={k}")
            np.testing.assert_array_equal(got_empty, want_empty, err_msg=f"{m} k={k}")


def test_top_rows_are_not_used_where_ranks_below_k_matter() -> None:
    from rankflavor.measure import parse_measure

    for text in ("ndcg[ties=averaged]", "ndcg@10", "ndcg@10[ties=averaged,ideal=recall@50]"):
        m = parse_measure(text)
        assert m.spec.reads_top_rows(m) is None, text
    qrels, run = _case(5)
    from rankflavor.order import rank_prefix

    assert rank_prefix(align(qrels, run), Flavor(ties="averaged", unjudged="condensed"), 5) is None
    assert rank_prefix(align(qrels, run), Flavor(ties="averaged", depth="7"), 5) is None
    m = parse_measure("ndcg@10[ties=averaged,depth=7]")  # falls back to the full ranking, same values
    full = rank(align(qrels, run), m.flavor)
    from rankflavor.order import ranked_for

    assert len(ranked_for(align(qrels, run), m, {}).q) == len(full.q)
