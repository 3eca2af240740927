"""rankflavor.stats at the edges of its rules: documented defaults, exact/random switch-overs,
p-value clipping, ties of two, the rounding slack, and resampling split into blocks.

Mutation testing (docs/mutation.md) found each of these unpinned. Expected values come from SciPy
or from references written here from the documented definitions in exact arithmetic
(``fractions.Fraction`` over every sign vector or arrangement; the raw bits of the generator for
the sign matrix), never from rankflavor's own output.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from statistics import NormalDist

import numpy as np
import pytest
import scipy.stats as ss

from rankflavor.stats import bootstrap as bootstrap_module
from rankflavor.stats import (
    bootstrap_ci,
    bootstrap_ci_many,
    bootstrap_test,
    bootstrap_test_many,
    paired_t,
    permutation,
    permutation_many,
    sign_test,
    tukey,
    tukey_hsd_randomized,
    wilcoxon,
    wins_losses_ties,
)
from rankflavor.stats.bootstrap import default_batch
from rankflavor.stats.randomization import all_signs, sign_blocks

EPS = Fraction(np.finfo(np.float64).eps)
SLACK = 64  # SLACK_ULPS, as documented in rankflavor.stats.randomization


# --- references from the definitions --------------------------------------------------------


def signs_from_raw_bits(n: int, rows: int, seed: int) -> np.ndarray:
    """The documented sign matrix: per row ceil(n/64) raw 64-bit words of default_rng(seed), bit i of
    the row (little-endian across words) set means -1."""
    bitgen = np.random.default_rng(seed).bit_generator
    words = -(-n // 64)
    out = np.ones((rows, n))
    for r in range(rows):
        value = sum(int(w) << (64 * k) for k, w in enumerate(bitgen.random_raw(words)))
        for i in range(n):
            if value >> i & 1:
                out[r, i] = -1.0
    return out


def randomization_rule(d: list[float], signs: list[tuple[int, ...]] | None = None) -> Fraction:
    """Share of sign vectors (every one, or ``signs``) with |sum(s d)| >= |sum d| - 64 eps sum|d|, exactly;
    as (b + 1) / (m + 1) when ``signs`` are random draws."""
    x = [Fraction(v) for v in d]
    threshold = abs(sum(x)) - SLACK * EPS * sum(abs(v) for v in x)
    vectors = signs if signs is not None else list(itertools.product((1, -1), repeat=len(x)))
    hits = sum(abs(sum(s * v for s, v in zip(vec, x, strict=True))) >= threshold for vec in vectors)
    return Fraction(hits, len(vectors)) if signs is None else Fraction(hits + 1, len(vectors) + 1)


def tukey_rule(matrix: np.ndarray) -> np.ndarray:
    """Exact Tukey p-values by the documented rule: the share of all (S!)**Q arrangements whose range
    of system means is >= |mean_i - mean_j| - 64 eps max_s(sum_q |x|) / Q, in exact arithmetic."""
    q, s = matrix.shape
    x = [[Fraction(v) for v in row] for row in matrix]
    means = [sum(x[i][j] for i in range(q)) / q for j in range(s)]
    slack = SLACK * EPS * max(sum(abs(x[i][j]) for i in range(q)) for j in range(s)) / q
    ranges = []
    for arrangement in itertools.product(itertools.permutations(range(s)), repeat=q):
        m = [sum(x[i][arrangement[i][j]] for i in range(q)) / q for j in range(s)]
        ranges.append(max(m) - min(m))
    out = np.ones((s, s))
    for i, j in itertools.permutations(range(s), 2):
        out[i, j] = sum(r >= abs(means[i] - means[j]) - slack for r in ranges) / len(ranges)
    return out


def bootstrap_rule(d: list[float], n_resamples: int, seed: int) -> float:
    """Sakai's shifted, studentized bootstrap test in exact arithmetic, on the documented draws
    (``default_rng(seed).integers(0, n, (n_resamples, n))``; the block size does not change them):
    |t*| >= |t| compared as t*^2 >= t^2; an all-equal resample has t* = inf, or 0 when its mean is 0."""
    x = [Fraction(v) for v in d]
    n = len(x)

    def t2(sample: list[Fraction]) -> Fraction | None:  # None: infinite
        mean = sum(sample) / n
        var = sum((v - mean) ** 2 for v in sample) / (n - 1)
        if var == 0:
            return Fraction(0) if mean == 0 else None
        return mean * mean * n / var

    observed = t2(x)
    mean = sum(x) / n
    w = [v - mean for v in x]
    idx = np.random.default_rng(seed).integers(0, n, (n_resamples, n))
    hits = 0
    for row in idx:
        t = t2([w[i] for i in row])
        hits += observed is not None and (t is None or t >= observed)
    return (hits + 1) / (n_resamples + 1)


# --- classical tests -----------------------------------------------------------------------------


def test_wilcoxon_exact_p_value_is_clipped_at_one() -> None:
    """R+ = R- = 3 of n = 3: P(R+ <= 3) = P(R+ >= 3) = 5/8, so 2 min(...) = 1.25 is clipped to 1."""
    r = wilcoxon([1.0, 2.0, -3.0], [0.0, 0.0, 0.0])
    assert r.details["method"] == "exact"
    assert r.pvalue == 1.0 == ss.wilcoxon([1.0, 2.0, -3.0]).pvalue


def test_wilcoxon_one_tie_of_two_is_a_tie() -> None:
    """A single pair of equal |d| (exact in binary) is a tie: SciPy enumerates, the exact table would be wrong."""
    d = np.array([0.125, 0.25, -0.25, 0.5, 0.625, -0.875, 1.125])
    r = wilcoxon(d, np.zeros(7))
    assert r.details["method"] == "enumerated"
    assert r.pvalue == pytest.approx(ss.wilcoxon(d).pvalue, rel=1e-12)
    assert r.pvalue != pytest.approx(ss.wilcoxon(d, method="exact").pvalue, rel=1e-6)


def test_sign_test_p_value_is_clipped_at_one() -> None:
    """5 wins, 4 losses: 2 P(X <= 4) for Binomial(9, 1/2) rounds above 1; binomtest says 1."""
    r = sign_test([1.0] * 5 + [0.0] * 4, [0.0] * 5 + [1.0] * 4)
    assert r.pvalue == 1.0 == ss.binomtest(5, 9).pvalue


def test_wins_losses_ties_default_tolerance_is_zero() -> None:
    assert wins_losses_ties([0.5, 0.1, 0.3], [0.2, 0.3, 0.3]) == (1, 1, 1)
    assert wins_losses_ties([0.5, 0.1, 0.3], [0.2, 0.3, 0.3], tolerance=0.25) == (1, 0, 2)


# --- documented defaults: n_resamples=10_000, seed=0, BCa at 95 % ---------------------------------


def test_bootstrap_interval_defaults_are_scipys() -> None:
    rng = np.random.default_rng(11)
    # 30 queries: a resample that is a permutation of the sample (its mean equal to the observed one,
    # up to rounding that decides BCa's bias correction) is out of reach; at 9 queries
    # bootstrap_ci_many's matrix-product means move the interval by 0.25 % from SciPy's.
    x, y = rng.beta(2, 3, 30), rng.normal(0, 0.2, 30)
    ref = ss.bootstrap((x,), np.mean, n_resamples=10_000, method="BCa", confidence_level=0.95,
                       rng=np.random.default_rng(0)).confidence_interval
    assert bootstrap_ci(x) == pytest.approx((ref.low, ref.high), rel=1e-12)
    many = bootstrap_ci_many([x, y])
    for row, ci in zip([x, y], many, strict=True):
        ref = ss.bootstrap((row,), np.mean, n_resamples=10_000, rng=np.random.default_rng(0)).confidence_interval
        np.testing.assert_allclose(ci, [ref.low, ref.high], rtol=1e-10)


def test_bootstrap_test_defaults() -> None:
    a = np.array([0.5, 0.75, 0.25, 1.0, 0.625, 0.5])
    b = np.array([0.25, 0.75, 0.5, 0.5, 0.125, 0.375])
    expected = bootstrap_rule(list(a - b), 10_000, 0)
    assert bootstrap_test(a, b).pvalue == pytest.approx(expected, rel=1e-12)
    assert bootstrap_test_many([a - b, b - a]).tolist() == pytest.approx([expected, expected], rel=1e-12)


def test_permutation_defaults() -> None:
    """14 queries: 2**14 > 10,000 sign vectors, so 10,000 random ones from seed 0."""
    d = [0.125 * v for v in (3, -1, 2, 5, -4, 1, 1, 2, -2, 6, 3, -1, 4, 2)]
    signs = [tuple(int(v) for v in row) for row in signs_from_raw_bits(14, 10_000, 0)]
    expected = float(randomization_rule(d, signs))
    assert permutation(d, np.zeros(14)).pvalue == expected
    assert permutation_many([d, [-v for v in d]]).tolist() == [expected, expected]


def test_tukey_defaults() -> None:
    """30 queries, system 0 always 1 and system 1 always 0: only 2 of the 2**30 arrangements reach the
    observed range 1, so none of 10,000 random ones does: p = 1 / 10,001 (seed 0 or any other)."""
    m = np.c_[np.ones(30), np.zeros(30)]
    assert tukey_hsd_randomized(m)[0, 1] == 1 / 10_001
    wide = np.random.default_rng(5).beta(2, 3, (8, 3))  # 6**8 arrangements: random; the seed shows
    default = tukey_hsd_randomized(wide)
    assert (default == tukey_hsd_randomized(wide, n_resamples=10_000, seed=0)).all()
    assert (default != tukey_hsd_randomized(wide, n_resamples=10_000, seed=1)).any()


def test_default_batch_is_what_fits_in_the_block() -> None:
    """2**22 elements a block, at least one row, at most n_resamples rows."""
    assert default_batch(1000, 10**6) == 2**22 // 1000
    assert default_batch(1, 10**7) == 2**22
    assert default_batch(3_000_000, 10) == 1
    assert default_batch(0, 5) == 5


# --- the sign matrix and the exact/random switch ----------------------------------------------


@pytest.mark.parametrize("n", [3, 64, 65, 130])
def test_sign_matrix_is_the_raw_bits_of_the_generator(n: int) -> None:
    assert (np.vstack(list(sign_blocks(n, 5, seed=3))) == signs_from_raw_bits(n, 5, 3)).all()
    assert (np.vstack(list(sign_blocks(n, 5, seed=3, block=2))) == signs_from_raw_bits(n, 5, 3)).all()


def test_all_signs_enumerates_by_bits() -> None:
    rows = [[-1.0 if r >> i & 1 else 1.0 for i in range(3)] for r in range(8)]
    assert all_signs(3).tolist() == rows
    assert all_signs(3, 2, 5).tolist() == rows[2:5]
    assert all_signs(3, 6).tolist() == rows[6:]


@pytest.mark.parametrize("n", [2, 5])
def test_exact_exactly_when_every_sign_vector_fits(n: int) -> None:
    d = [0.375, -0.125, 0.25, 0.5, -0.25][:n]
    exact = permutation(d, np.zeros(n), n_resamples=2**n)
    assert exact.details["exact"] is True and exact.pvalue == float(randomization_rule(d))
    short = permutation(d, np.zeros(n), n_resamples=2**n - 1, seed=2)
    assert short.details["exact"] is False
    signs = [tuple(int(v) for v in row) for row in signs_from_raw_bits(n, 2**n - 1, 2)]
    assert short.pvalue == float(randomization_rule(d, signs))


def test_a_single_pair_may_be_1d() -> None:
    d = [0.375, -0.125, 0.25, 0.5]
    assert permutation_many(d, n_resamples=100).tolist() == [float(randomization_rule(d))]
    assert bootstrap_test_many(d, n_resamples=30, seed=1).tolist() == pytest.approx([bootstrap_rule(d, 30, 1)])


def test_one_resample_is_allowed() -> None:
    d = [0.375, -0.125, 0.25, 0.5, 0.25]
    signs = [tuple(int(v) for v in row) for row in signs_from_raw_bits(5, 1, 0)]
    assert permutation(d, np.zeros(5), n_resamples=1).pvalue == float(randomization_rule(d, signs))
    assert bootstrap_test(d, np.zeros(5), n_resamples=1).pvalue == pytest.approx(bootstrap_rule(d, 1, 0))


# --- the rounding slack: 64 ulps of the scale, counted inclusively --------------------------------


def test_randomization_slack_is_inclusive_and_per_pair() -> None:
    eps = float(EPS)
    edge = [1.0, 32 * eps]  # |1 - x| lands exactly on |sum d| - 64 eps sum|d| in float64
    assert permutation_many([edge], n_resamples=4).tolist() == [1.0] == [float(randomization_rule(edge))]
    assert permutation_many([edge], n_resamples=3).tolist() == [1.0]  # random: every draw counts
    # 2e-14 below the observed sum is outside row 0's slack (1.4e-14), inside a slack scaled by row 1
    rows = [[1.0, 1e-14], [1000.0, 1000.0]]
    assert permutation_many(rows, n_resamples=4).tolist() == [float(randomization_rule(r)) for r in rows] == [0.5, 0.5]
    # the slack grows with sum|d|: 4e-12 below is inside 64 eps x 1000 (1.4e-11)
    assert permutation_many([[1000.0, 2e-12]], n_resamples=4).tolist() == [float(randomization_rule([1000.0, 2e-12]))] == [1.0]


def test_tukey_slack_scale() -> None:
    """The slack is 64 eps of the largest column's absolute sum, over Q: a range just outside it is not
    counted, one just inside is; matrices where rows, Q or a reciprocal scale would say otherwise."""
    outside = np.array([[1000.0, 0.0], [1.5e-11, 0.0]])  # gap 1.5e-11 > slack 7.1e-12
    inside = np.array([[1000.0, 0.0], [1.8e-12, 0.0]])  # gap 1.8e-12 < slack
    by_column = np.array([[1000.0, 0.0, 1000.0], [2e-11, 0.0, 0.0]])  # the largest row sum is twice the column's
    for m in (outside, inside, by_column):
        np.testing.assert_array_equal(tukey_hsd_randomized(m), tukey_rule(m))
    assert tukey_hsd_randomized(outside)[0, 1] == 0.5 and tukey_hsd_randomized(inside)[0, 1] == 1.0


@pytest.mark.parametrize(("shape", "n_resamples"), [((5, 2), 32), ((5, 2), 40), ((2, 3), 36), ((3, 2), 8)])
def test_tukey_exact_exactly_when_every_arrangement_fits(shape: tuple[int, int], n_resamples: int) -> None:
    m = np.random.default_rng(sum(shape)).integers(0, 8, shape) / 8.0
    np.testing.assert_array_equal(tukey_hsd_randomized(m, n_resamples=n_resamples), tukey_rule(m))
    fewer = tukey_hsd_randomized(m, n_resamples=math.factorial(shape[1]) ** shape[0] - 1)
    assert ((fewer * (math.factorial(shape[1]) ** shape[0])) % 1 == 0).all()  # (b + 1) / (m + 1): a multiple of 1/(m + 1)


# --- blocks of resamples change nothing -------------------------------------------------------


def test_bootstrap_test_in_small_blocks_is_the_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    """d = [-1, 1/4, 3/2]: the middle query equals the mean, so a resample drawing it thrice has t* = 0/0,
    which counts as 0 (below the observed 0.35); 3 rows a block, 25 resamples."""
    d = [-1.0, 0.25, 1.5]
    whole = bootstrap_test_many([d], n_resamples=25, seed=4)
    monkeypatch.setattr(bootstrap_module, "BLOCK_ELEMENTS", 9)
    assert bootstrap_test_many([d], n_resamples=25, seed=4).tolist() == whole.tolist()
    assert whole[0] == pytest.approx(bootstrap_rule(d, 25, 4), rel=1e-12)
    zero_mean = [-1.0, 1.0]  # t = 0: every resample is at least as extreme
    assert bootstrap_test_many([zero_mean], n_resamples=25, seed=4).tolist() == [1.0]


def test_tukey_random_in_small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    m = np.random.default_rng(6).beta(2, 3, (4, 3))
    whole = tukey_hsd_randomized(m, n_resamples=701, seed=2)
    monkeypatch.setattr(tukey, "BLOCK_ELEMENTS", 30)  # two resamples (12 elements each) a block, one in the last
    assert tukey_hsd_randomized(m, n_resamples=701, seed=2).tolist() == whole.tolist()
    off = np.abs(whole * 702 - np.round(whole * 702))
    assert (off < 1e-9).all()  # (b + 1) / (701 + 1)


@pytest.mark.parametrize("shape", [(3, 2), (2, 3), (4, 2)])
def test_tukey_exact_in_small_blocks_is_the_rule(shape: tuple[int, int], monkeypatch: pytest.MonkeyPatch) -> None:
    """Every arrangement once, whatever the block of arrangement codes (20 elements: 3 or 2 codes a block)."""
    monkeypatch.setattr(tukey, "BLOCK_ELEMENTS", 20)
    for seed in range(3):
        m = np.random.default_rng(seed).integers(0, 9, shape) / 8.0
        if (m == m[:, :1]).all():
            continue
        np.testing.assert_array_equal(tukey_hsd_randomized(m), tukey_rule(m))


def test_bca_of_two_values_is_scipys() -> None:
    """Two values: the jackknife's leave-one-out means divide by n - 1 = 1 (never by zero)."""
    for x in ([0.125, 0.75], [0.3, -0.2]):
        ref = ss.bootstrap((np.array(x),), np.mean, n_resamples=99, rng=np.random.default_rng(4)).confidence_interval
        assert bootstrap_ci(x, n_resamples=99, seed=4) == pytest.approx((ref.low, ref.high), rel=1e-12)


def test_wilcoxon_enumerated_edges_are_scipys() -> None:
    """Ties or zeros, at most 13 pairs: all sign flips. R+ = 0 (every difference negative: the rounding
    allowance is 0 and the null's own 0 must count) and R+ at the centre (both tails above 1/2: clipped)."""
    for d in ([-1.0, -1.0, -2.0, -3.0], [1.0, -1.0, 2.0, -2.0], [0.0, 1.0, -1.0, 2.0, 2.0]):
        r = wilcoxon(d, np.zeros(len(d)))
        assert r.details["method"] == "enumerated"
        assert r.pvalue == pytest.approx(ss.wilcoxon(d).pvalue, rel=1e-12)
    assert wilcoxon([1.0, -1.0, 2.0, -2.0], np.zeros(4)).pvalue == 1.0


def test_wilcoxon_normal_approximation_reports_z() -> None:
    """More than 50 pairs: the z of the normal approximation (SciPy's, without continuity correction)."""
    rng = np.random.default_rng(8)
    a, b = rng.random(60), rng.random(60)
    r = wilcoxon(a, b)
    ref = ss.wilcoxon(a, b, method="approx")
    assert r.details["method"] == "asymptotic"
    assert r.details["z"] == pytest.approx(ref.zstatistic, rel=1e-12) and r.details["z"] < 0
    assert r.pvalue == pytest.approx(ref.pvalue, rel=1e-12)


def test_checked_values_are_float64() -> None:
    from rankflavor.stats.multiple import correct
    from rankflavor.stats.result import differences, values

    assert values([1, 2]).dtype == np.float64 and values([1, 2]).tolist() == [1.0, 2.0]
    with pytest.raises(Exception, match=r"^x has 1 non-finite"):
        values([np.nan, 1.0])
    assert differences([1.0], [0.5], minimum=1).tolist() == [0.5]
    assert correct([0, 1], "none").dtype == np.float64 and correct([], "holm").dtype == np.float64


def test_bootstrap_resample_of_one_query_is_infinitely_extreme() -> None:
    """d = [0.64, 0.27, 0.04]: a resample drawing query 0 three times has variance 0, which the
    sums of squares round to -2.8e-17; it must count as t* = inf (a hit), as the rule says."""
    d = [0.64, 0.27, 0.04]
    draws = np.random.default_rng(6).integers(0, 3, (60, 3))
    assert any((row == 0).all() for row in draws)  # the case is there
    assert bootstrap_test_many([d], n_resamples=60, seed=6)[0] == pytest.approx(bootstrap_rule(d, 60, 6), rel=1e-12)


def test_default_batch_never_zero() -> None:
    assert default_batch(5_000_000, 10) == 1  # 2**22 // 5e6 = 0 rows would draw nothing


# --- SciPy's tests against references that do not call them (issue 38) ---------------------------
# paired_t, wilcoxon, sign_test and bootstrap_ci call SciPy's own functions, so comparing them with
# those functions checks only the arguments passed. These references are independent of SciPy:
# every sign vector or subset counted in exact arithmetic, the normal approximation and the BCa
# interval from their textbook formulas with the standard library's normal distribution, and
# statsmodels' t-test.

NORMAL = NormalDist()


def average_ranks(values: list[Fraction]) -> list[Fraction]:
    """1-based ranks of ``values``, ties given their average rank, by comparison counts."""
    return [Fraction(2 * sum(w < v for w in values) + sum(w == v for w in values) + 1, 2) for v in values]


def signed_rank_null(d: list[float], zero_method: str) -> tuple[Fraction, list[Fraction]]:
    """R+ of ``d`` and of every one of its 2**n sign flips (zeros: dropped, rank kept, or split)."""
    x = [Fraction(v) for v in d]
    kept = [v for v in x if v != 0] if zero_method == "wilcox" else x
    ranks = average_ranks([abs(v) for v in kept])
    half = sum((r for r, v in zip(ranks, kept, strict=True) if v == 0), Fraction(0)) / 2 if zero_method == "zsplit" else 0
    observed = sum((r for r, v in zip(ranks, kept, strict=True) if v > 0), Fraction(0)) + half
    moving = [r for r, v in zip(ranks, kept, strict=True) if v != 0]
    null = [sum((r for r, s in zip(moving, signs, strict=True) if s), Fraction(0)) + half
            for signs in itertools.product((True, False), repeat=len(moving))]
    return observed, null


def two_sided(observed: Fraction, null: list[Fraction]) -> float:
    tail = min(sum(v <= observed for v in null), sum(v >= observed for v in null))
    return float(min(Fraction(1), Fraction(2 * tail, len(null))))


@pytest.mark.parametrize("zero_method", ["wilcox", "pratt", "zsplit"])
@pytest.mark.parametrize("d", [
    [0.5, -0.25, 0.75, 1.0, 0.125],  # untied: exact
    [0.375, -0.125, 0.25, 0.5, -0.625, 0.875, 1.125, 0.0625, -1.25, 0.75, 1.5, 1.75],
    [0.5, -0.5, 0.25, 0.25, 0.75, -0.125, 1.0],  # ties: enumerated
    [0.0, 0.25, -0.25, 0.5, 0.5, 0.5, -0.75, 1.0, 1.25, 0.0, 0.125, 1.5, 2.0],  # zeros and ties, 13 pairs
    [0.0, 0.5],
    [-0.25, -0.5, -0.5],
])
def test_wilcoxon_small_samples_equal_every_sign_flip(d: list[float], zero_method: str) -> None:
    r = wilcoxon(d, np.zeros(len(d)), zero_method=zero_method)
    observed, null = signed_rank_null(d, zero_method)
    assert r.details["method"] == ("exact" if len(set(map(abs, d))) == len(d) and 0 not in d else "enumerated")
    assert r.pvalue == pytest.approx(two_sided(observed, null), rel=1e-12)
    r_minus = signed_rank_null([-v for v in d], zero_method)[0]  # R- of d is R+ of -d
    assert (r.details["r_plus"], r.details["r_minus"]) == (float(observed), float(r_minus))
    assert r.statistic == float(min(observed, r_minus))


@pytest.mark.parametrize(("n", "seed"), [(14, 0), (30, 1), (50, 2)])
def test_wilcoxon_exact_equals_subset_sums(n: int, seed: int) -> None:
    """No ties, no zeros, up to 50 pairs: under the null R+ is the sum of a uniformly random subset of
    the ranks 1..n, whose law is the number of subsets of each sum (counted exactly) over 2**n."""
    rng = np.random.default_rng(seed)
    ranks, signs = rng.permutation(np.arange(1, n + 1)), rng.choice([-1, 1], n)
    d = signs * ranks / 8.0  # distinct |d|: the rank of |d_i| is ranks[i]
    r_plus = int(ranks[signs > 0].sum())
    counts = [1] + [0] * (n * (n + 1) // 2)
    for k in range(1, n + 1):
        for s in range(len(counts) - 1, k - 1, -1):
            counts[s] += counts[s - k]
    tail = min(sum(counts[: r_plus + 1]), sum(counts[r_plus:]))
    r = wilcoxon(d, np.zeros(n))
    assert r.details["method"] == "exact" and r.details["r_plus"] == r_plus
    assert r.pvalue == pytest.approx(float(min(Fraction(1), Fraction(2 * tail, 2**n))), rel=1e-12)


def normal_wilcoxon(d: list[float], zero_method: str) -> tuple[float, float]:
    """(z, p) of the normal approximation without continuity correction, tie-corrected; Pratt's zeros
    take their ranks out of the mean and the variance (Cureton 1967)."""
    x = [Fraction(v) for v in d]
    kept = [v for v in x if v != 0] if zero_method == "wilcox" else x
    ranks = average_ranks([abs(v) for v in kept])
    r_plus = sum((r for r, v in zip(ranks, kept, strict=True) if v > 0), Fraction(0))
    if zero_method == "zsplit":
        r_plus += sum((r for r, v in zip(ranks, kept, strict=True) if v == 0), Fraction(0)) / 2
    n, z0 = len(kept), sum(v == 0 for v in x) if zero_method == "pratt" else 0
    mean = Fraction(n * (n + 1) - z0 * (z0 + 1), 4)
    groups = [sum(abs(w) == abs(v) for w in kept) for v in set(map(abs, kept)) if zero_method != "pratt" or v != 0]
    var = Fraction(n * (n + 1) * (2 * n + 1) - z0 * (z0 + 1) * (2 * z0 + 1), 24) - Fraction(sum(t**3 - t for t in groups), 48)
    z = -abs(float(r_plus - mean) / math.sqrt(var))
    return z, 2 * NORMAL.cdf(z)


@pytest.mark.parametrize("zero_method", ["wilcox", "pratt", "zsplit"])
@pytest.mark.parametrize(("n", "grid"), [(14, 0.25), (60, None), (200, 0.125)])
def test_wilcoxon_normal_approximation_equals_the_formula(n: int, grid: float | None, zero_method: str) -> None:
    d = np.random.default_rng(n).normal(0.1, 1.0, n)
    if grid is not None:
        d = np.round(d / grid) * grid
    r = wilcoxon(d, np.zeros(n), zero_method=zero_method)
    z, p = normal_wilcoxon(list(d), zero_method)
    assert r.details["method"] == "asymptotic"
    assert r.details["z"] == pytest.approx(z, rel=1e-12)
    assert r.pvalue == pytest.approx(p, rel=1e-9)


@pytest.mark.parametrize(("wins", "losses", "ties"), [(4, 1, 0), (5, 4, 0), (0, 7, 2), (3, 3, 1), (12, 30, 5), (1, 0, 3)])
def test_sign_test_equals_the_binomial_counted(wins: int, losses: int, ties: int) -> None:
    n = wins + losses
    tail = sum(math.comb(n, k) for k in range(min(wins, losses) + 1))
    r = sign_test([1.0] * wins + [0.0] * losses + [0.5] * ties, [0.0] * wins + [1.0] * losses + [0.5] * ties)
    assert r.pvalue == pytest.approx(float(min(Fraction(1), Fraction(2 * tail, 2**n))), rel=1e-12)
    assert (r.statistic, r.n) == (wins, n)


@pytest.mark.parametrize(("n", "seed"), [(3, 0), (4, 1), (12, 2), (80, 3)])
def test_paired_t_equals_statsmodels(n: int, seed: int) -> None:
    from statsmodels.stats.weightstats import DescrStatsW

    rng = np.random.default_rng(seed)
    a, b = rng.beta(2, 3, n) + 0.05, rng.beta(2, 3, n)
    t, p, df = DescrStatsW(a - b).ttest_mean(0.0)
    r = paired_t(a, b)
    assert (r.statistic, r.pvalue, r.details["df"]) == (pytest.approx(t, rel=1e-12), pytest.approx(p, rel=1e-10), df)


def test_paired_t_closed_forms() -> None:
    """Student's t in closed form: Cauchy at 1 degree of freedom, p = 1 - |t| / sqrt(2 + t^2) at 2."""
    d = [0.75, 0.25]  # t = 0.5 / (sqrt(1/8) / sqrt(2)) = 2
    assert paired_t(d, [0.0, 0.0]).pvalue == pytest.approx(1 - 2 / math.pi * math.atan(2.0), rel=1e-12)
    d = [0.5, 0.25, 1.0]  # mean 7/12, var 7/48: t = sqrt(7)
    t = math.sqrt(7)
    assert paired_t(d, [0.0] * 3).statistic == pytest.approx(t, rel=1e-12)
    assert paired_t(d, [0.0] * 3).pvalue == pytest.approx(1 - t / math.sqrt(2 + t * t), rel=1e-12)


def reference_interval(x: list[float], n_resamples: int, seed: int, level: float, method: str) -> tuple[float, float]:
    """Efron & Tibshirani's percentile, basic and BCa intervals (eq. 14.10-14.15) by plain loops over the
    documented draws, the standard library's normal distribution, and linear interpolation of quantiles."""
    n = len(x)
    mean = sum(x) / n
    means = sorted(float(np.mean([x[i] for i in row])) for row in np.random.default_rng(seed).integers(0, n, (n_resamples, n)))
    alpha = (1 - level) / 2
    levels = [alpha, 1 - alpha]
    if method == "BCa":
        z0 = NORMAL.inv_cdf((sum(m < mean for m in means) + sum(m <= mean for m in means)) / (2 * n_resamples))
        jack = [(sum(x) - v) / (n - 1) for v in x]
        u = [sum(jack) / n - j for j in jack]
        accel = sum(v**3 for v in u) / (6 * sum(v**2 for v in u) ** 1.5)
        levels = [NORMAL.cdf(z0 + (z0 + z) / (1 - accel * (z0 + z))) for z in (NORMAL.inv_cdf(q) for q in levels)]

    def quantile(q: float) -> float:
        h = (n_resamples - 1) * q
        lo = math.floor(h)
        return means[lo] + (h - lo) * (means[min(lo + 1, n_resamples - 1)] - means[lo])

    low, high = quantile(levels[0]), quantile(levels[1])
    return (2 * mean - high, 2 * mean - low) if method == "basic" else (low, high)


@pytest.mark.parametrize("method", ["BCa", "percentile", "basic"])
@pytest.mark.parametrize(("values", "level"), [
    ([0.125, 0.5, 0.25, 0.875, 0.0625, 0.375, 0.75, 0.3125, 0.1875, 0.625, 0.5, 0.9375], 0.95),
    ([1.5, -0.25, 0.75, 0.0, 2.25, -1.0, 0.5], 0.9),
])
def test_bootstrap_ci_equals_the_textbook_intervals(values: list[float], level: float, method: str) -> None:
    """Values on a binary grid: every resampled sum is exact, so a resample ties the observed mean
    exactly or not at all, whatever the order of summation."""
    mine = bootstrap_ci(values, n_resamples=1999, seed=5, level=level, method=method)
    assert mine == pytest.approx(reference_interval(values, 1999, 5, level, method), rel=1e-9)
    many = bootstrap_ci_many([values, values[::-1]], n_resamples=1999, seed=5, level=level, method=method)
    np.testing.assert_allclose(many[0], reference_interval(values, 1999, 5, level, method), rtol=1e-9)


@pytest.mark.parametrize("n", [8, 30, 51, 80])  # SciPy's exact distribution up to 50 pairs, the normal one above
def test_wilcoxon_names_itself_and_counts_its_pairs_on_the_scipy_paths(n: int) -> None:
    """What a report prints of the test besides its numbers: its name and the pairs it used
    (a mutation run found both unpinned on the paths that call scipy.stats.wilcoxon)."""
    rng = np.random.default_rng(n)
    a = rng.normal(size=n)
    b = a + rng.normal(0.3, 1.0, size=n)  # no zero and no tied difference
    result = wilcoxon(a, b)
    assert result.name == "Wilcoxon signed-rank"
    assert result.n == n
