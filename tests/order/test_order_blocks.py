"""The block sort of training-time scoring (``rankflavor.order.blocks.BlockSort``): each block's
rows by score descending, equal scores in file order, the permutation a stable sort of each
block gives; with ``top``, the first rows of each block; with ``reverse``, equal scores from the
last row. The inputs are the cases its integer
keys could get wrong: exact ties, float64 scores one unit in the last place apart (their keys
share the score part), signed zeros, the largest and smallest magnitudes, unequal blocks."""

from __future__ import annotations

import numpy as np
import pytest

from rankflavor.order.blocks import BlockSort


def stable(starts: np.ndarray, lengths: np.ndarray, score: np.ndarray, top: int | None,
           reverse: bool = False) -> np.ndarray:
    """The reference: NumPy's stable argsort of each block's negated scores (from its last row
    under ``reverse``)."""
    out = []
    for start, n in zip(starts, lengths, strict=True):
        block = -score[start:start + n]
        order = n - 1 - np.argsort(block[::-1], kind="stable") if reverse else np.argsort(block, kind="stable")
        out.append(start + order[:top])
    return np.concatenate(out)


def scores(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    if kind == "distinct":
        return rng.normal(size=n)
    if kind == "ties":
        return np.round(rng.normal(size=n), 1)
    if kind == "ulps":  # 1.0 and its next few neighbours: keys whose score part is the same
        return 1.0 + rng.integers(0, 4, n) * np.finfo(np.float64).eps
    if kind == "zeros":  # 0.0 and -0.0 are one score; the smallest subnormals are not
        return np.where(rng.random(n) < 0.5, 0.0, -0.0) + rng.integers(-1, 2, n) * 5e-324
    return rng.choice([1.7e308, -1.7e308, 5e-324, -5e-324, 0.0, 3.0, -3.0], n)


@pytest.mark.parametrize("kind", ["distinct", "ties", "ulps", "zeros", "extremes"])
@pytest.mark.parametrize("equal", [True, False])
def test_block_sort_is_a_stable_sort_of_each_block(kind: str, equal: bool) -> None:
    rng = np.random.default_rng(5)
    for _ in range(20):
        n_blocks = int(rng.integers(1, 25))
        lengths = np.full(n_blocks, rng.integers(1, 70)) if equal else rng.integers(1, 70, n_blocks)
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        score = scores(kind, int(lengths.sum()), rng)
        sort = BlockSort(starts, lengths)
        with np.errstate(over="ignore"):  # (the extremes become infinities: scores too)
            single = score.astype(np.float32)  # float32 keys hold every bit of the score
        for top in (None, 1, 2, 10, 200):
            for reverse in (False, True):
                for at in (score, single):
                    assert np.array_equal(sort(at, top, reverse), stable(starts, lengths, at, top, reverse)), (top, reverse)


def test_a_run_of_near_scores_past_the_top_is_sorted_again() -> None:
    # Keys sharing their score part at places 0..2, the highest score at place 2: looking at
    # places 0 and 1 alone would keep place 0 first.
    one, eps = 1.0, np.finfo(np.float64).eps
    score = np.array([one, one, one + eps, 0.5])
    assert BlockSort(np.array([0]), np.array([4]))(score, top=1).tolist() == [2]
    assert BlockSort(np.array([0]), np.array([4]))(score[::-1].copy(), top=1, reverse=True).tolist() == [1]


def _aligned(docnos: list[list[str]], grades: list[list[float]], scores: list[list[float]]):
    """An alignment of blocks whose every row is judged (the layout a block ranker takes)."""
    from rankflavor.align import align
    from rankflavor.io.columns import string_array
    from rankflavor.io.tables import Qrels, Run

    q = string_array([f"q{i:03d}" for i, block in enumerate(docnos) for _ in block])  # code order = file order
    d = string_array([doc for block in docnos for doc in block])
    grade = np.array([g for block in grades for g in block])
    score = np.array([s for block in scores for s in block])
    return align(Qrels(q, d, grade), Run(q, d, score))


@pytest.mark.parametrize("in_file_order", [True, False])
def test_block_ranker_ranks_as_the_ranker_does(in_file_order: bool) -> None:
    # Under every tie rule, every row and the rows down to a rank, whether or not each block's
    # docnos ascend in file order (when they do, and the caller says so, docno_asc / docno_desc
    # ties come from the sort itself).
    from rankflavor.order import Ranker, SharedWork
    from rankflavor.order.blocks import BlockRanker
    from rankflavor.order.strategy import TIE_RULES, Ordering

    rng = np.random.default_rng(11)
    sizes = rng.integers(1, 9, 40)
    docnos = [[f"d{j:02d}" for j in (range(n) if in_file_order else rng.permutation(n))] for n in sizes]
    grades = [list(rng.integers(0, 3, n).astype(float)) for n in sizes]
    scores = [list(np.round(rng.normal(size=n), 0)) for n in sizes]  # ties in most blocks
    aligned = _aligned(docnos, grades, scores)
    assert aligned.query_starts is not None
    starts = aligned.query_starts
    sort = BlockSort(starts, np.diff(np.append(starts, len(aligned.run_q))))
    blocks = BlockRanker(aligned, sort, SharedWork(), docnos_in_file_order=in_file_order)
    ranker = Ranker(aligned)
    for rule in TIE_RULES:
        ordering = Ordering(ties=rule)
        want = ranker.ranked(ordering)
        for to_rank in (None, 1, 3):
            got = blocks.ranked(aligned.run_score, ordering, to_rank)
            keep = np.ones(len(want.rank), dtype=bool) if to_rank is None else want.rank <= to_rank
            assert got.to_rank == to_rank
            for name in ("q", "rank", "grade", "judged", "score"):
                assert np.array_equal(getattr(got, name), getattr(want, name)[keep]), (rule, to_rank, name)
            assert np.array_equal(got.n_ret, want.n_ret)
