"""rankflavor.stats against SciPy, statsmodels and reference implementations written here.

The references are plain loops over the definitions (every sign vector, every resample, every
arrangement of a query's row), independent of the vectorised code under test; SciPy and
statsmodels are the peers the issue names. Data are small and random, so the file runs in
seconds.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import scipy.stats as ss
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from statsmodels.stats.multitest import multipletests

from rankflavor.errors import EvaluationError, UsageError
from rankflavor.stats import (
    TestResult,
    bootstrap_ci,
    bootstrap_ci_many,
    bootstrap_test,
    bootstrap_test_many,
    cohens_d_paired,
    correct,
    paired_t,
    permutation,
    permutation_many,
    sign_test,
    tukey_hsd_randomized,
    wilcoxon,
    wins_losses_ties,
)
from rankflavor.stats.bootstrap import default_batch
from rankflavor.stats.randomization import sign_blocks

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
RTOL = 1e-12


def paired(seed: int, n: int, *, grid: float | None = None, shift: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Random paired per-query scores in [0, 1]; ``grid`` rounds them (ties and zero differences)."""
    rng = np.random.default_rng(seed)
    a = np.clip(rng.beta(2, 3, n) + shift, 0, 1)
    b = np.clip(a - shift + rng.normal(0, 0.15, n), 0, 1)
    if grid is not None:
        a, b = np.round(a / grid) * grid, np.round(b / grid) * grid
    return a, b


# --- classical tests equal SciPy ------------------------------------------------------------


@pytest.mark.parametrize("n", [2, 3, 10, 57, 400])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_paired_t_equals_scipy(n: int, seed: int) -> None:
    a, b = paired(seed, n)
    mine = paired_t(a, b)
    ref = ss.ttest_rel(a, b)
    assert mine.statistic == pytest.approx(ref.statistic, rel=RTOL)
    assert mine.pvalue == pytest.approx(ref.pvalue, rel=RTOL)
    assert mine.details["df"] == ref.df == n - 1
    assert mine.n == n


WILCOXON_CASES = [
    # (n, grid): no ties -> exact (n <= 50) or asymptotic; grid -> ties and zeros -> enumerated (n <= 13)
    (5, None),
    (20, None),
    (50, None),
    (51, None),
    (300, None),
    (8, 0.1),
    (11, 0.1),
    (14, 0.1),
    (40, 0.05),
    (200, 0.1),
]


@pytest.mark.parametrize(("n", "grid"), WILCOXON_CASES)
@pytest.mark.parametrize("zero_method", ["wilcox", "pratt", "zsplit"])
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.filterwarnings("ignore::UserWarning")  # SciPy warns on small asymptotic samples
def test_wilcoxon_equals_scipy(n: int, grid: float | None, zero_method: str, seed: int) -> None:
    a, b = paired(seed, n, grid=grid)
    if not (a - b).any():
        pytest.skip("all differences zero")
    mine = wilcoxon(a, b, zero_method=zero_method)
    ref = ss.wilcoxon(a, b, zero_method=zero_method)
    assert mine.statistic == pytest.approx(float(ref.statistic), rel=RTOL)
    assert mine.pvalue == pytest.approx(float(ref.pvalue), rel=1e-10)


def test_wilcoxon_enumeration_boundary_equals_scipy() -> None:
    """13 pairs with ties: the last size whose sign flips are enumerated (SciPy's rule)."""
    a, b = paired(0, 13, grid=0.1)
    mine = wilcoxon(a, b)
    assert mine.details["method"] == "enumerated"
    assert mine.pvalue == pytest.approx(float(ss.wilcoxon(a, b).pvalue), rel=1e-10)


def test_wilcoxon_cases_reach_every_method() -> None:
    """The cases above really exercise the exact, enumerated and asymptotic branches."""
    seen = set()
    for n, grid in WILCOXON_CASES:
        for seed in range(4):
            a, b = paired(seed, n, grid=grid)
            seen.add(wilcoxon(a, b).details["method"])
    assert seen == {"exact", "enumerated", "asymptotic"}


@pytest.mark.parametrize("n", [2, 5, 30, 200])
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("grid", [None, 0.1])
def test_sign_test_equals_binomtest(n: int, seed: int, grid: float | None) -> None:
    a, b = paired(seed, n, grid=grid)
    d = a - b
    if not d.any():
        pytest.skip("all differences zero")
    wins, losses = int((d > 0).sum()), int((d < 0).sum())
    mine = sign_test(a, b)
    ref = ss.binomtest(wins, wins + losses, 0.5)
    assert mine.pvalue == pytest.approx(ref.pvalue, rel=1e-10)
    assert (mine.statistic, mine.n) == (wins, wins + losses)
    assert (mine.details["wins"], mine.details["losses"], mine.details["ties"]) == (wins, losses, n - wins - losses)


def test_sign_test_tolerance_makes_ties() -> None:
    r = sign_test([0.5, 0.5, 0.9, 0.1], [0.49, 0.2, 0.1, 0.3], tolerance=0.05)
    assert (r.details["wins"], r.details["losses"], r.details["ties"]) == (2, 1, 1)
    assert r.pvalue == pytest.approx(ss.binomtest(2, 3, 0.5).pvalue, rel=RTOL)


def test_wins_losses_ties() -> None:
    assert wins_losses_ties([0.5, 0.2, 0.3, 0.4], [0.4, 0.2, 0.6, 0.39], tolerance=0.02) == (1, 1, 2)
    assert wins_losses_ties([0.1], [0.1]) == (0, 0, 1)


def test_cohens_d_is_d_z() -> None:
    a, b = paired(4, 60)
    d = a - b
    dz = cohens_d_paired(a, b)
    assert dz == pytest.approx(float(np.mean(d) / np.std(d, ddof=1)), rel=RTOL)
    assert dz * math.sqrt(d.size) == pytest.approx(ss.ttest_rel(a, b).statistic, rel=1e-10)


# --- bootstrap intervals equal SciPy ---------------------------------------------------------


@pytest.mark.parametrize("method", ["BCa", "percentile", "basic"])
@pytest.mark.parametrize(("n", "seed"), [(5, 0), (12, 1), (80, 2), (500, 3)])
@pytest.mark.parametrize("level", [0.95, 0.9])
def test_bootstrap_ci_equals_scipy(method: str, n: int, seed: int, level: float) -> None:
    """Same generator, same seed, same batch (hence the same draws): the same interval."""
    a, b = paired(seed, n)
    x = a - b
    batch = default_batch(n, 2000)
    mine = bootstrap_ci(x, level=level, n_resamples=2000, seed=seed, method=method)
    ref = ss.bootstrap(
        (x,), np.mean, n_resamples=2000, batch=batch, method=method, confidence_level=level, rng=np.random.default_rng(seed)
    ).confidence_interval
    assert mine == pytest.approx((ref.low, ref.high), rel=1e-12, abs=1e-15)


def test_bootstrap_ci_explicit_batch_equals_scipy() -> None:
    a, _ = paired(9, 300)
    mine = bootstrap_ci(a, n_resamples=999, seed=5, batch=100)
    ref = ss.bootstrap((a,), np.mean, n_resamples=999, batch=100, rng=np.random.default_rng(5)).confidence_interval
    assert mine == pytest.approx((ref.low, ref.high), rel=1e-12)


def test_bootstrap_ci_constant_sample_is_a_point() -> None:
    assert bootstrap_ci([0.3, 0.3, 0.3]) == (0.3, 0.3)
    assert bootstrap_ci_many([[0.3, 0.3, 0.3], [0.1, 0.2, 0.4]], n_resamples=99)[0].tolist() == [0.3, 0.3]


@pytest.mark.parametrize("method", ["BCa", "percentile", "basic"])
def test_bootstrap_ci_many_equals_scipy_row_by_row(method: str) -> None:
    """Shared resamples (one count matrix per block): each row's interval is SciPy's for that row."""
    rng = np.random.default_rng(7)
    rows = np.vstack([rng.beta(2, 3, (3, 150)), rng.normal(0, 0.1, (2, 150))])
    many = bootstrap_ci_many(rows, n_resamples=1500, seed=2, method=method)
    for row, ci in zip(rows, many, strict=True):
        ref = ss.bootstrap(
            (row,), np.mean, n_resamples=1500, batch=default_batch(150, 1500), method=method, rng=np.random.default_rng(2)
        ).confidence_interval
        np.testing.assert_allclose(ci, [ref.low, ref.high], rtol=1e-10)
        assert tuple(ci) == pytest.approx(bootstrap_ci(row, n_resamples=1500, seed=2, method=method), rel=1e-10)


# --- randomization test ----------------------------------------------------------------------


def exact_randomization(d: np.ndarray) -> float:
    """Reference: every one of the 2**n sign vectors, one at a time."""
    observed = abs(sum(d))
    hits = 0
    for signs in itertools.product((1.0, -1.0), repeat=len(d)):
        if abs(sum(s * x for s, x in zip(signs, d, strict=True))) >= observed - 1e-12:
            hits += 1
    return hits / 2 ** len(d)


@pytest.mark.parametrize("n", [2, 3, 7, 10])
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("grid", [None, 0.1])
def test_permutation_exact_equals_enumeration(n: int, seed: int, grid: float | None) -> None:
    a, b = paired(seed, n, grid=grid)
    if not (a - b).any():
        pytest.skip("all differences zero")
    r = permutation(a, b, n_resamples=2**n)
    assert r.details["exact"] is True and r.details["n_resamples"] == 2**n
    assert r.pvalue == pytest.approx(exact_randomization(a - b), rel=RTOL)


def test_permutation_monte_carlo_close_to_exact() -> None:
    """12 queries, 3000 < 4096 random sign vectors: Monte Carlo within sampling error of exact."""
    a, b = paired(3, 12, shift=0.08)
    exact = exact_randomization(a - b)
    r = permutation(a, b, n_resamples=3000, seed=11)
    assert r.details["exact"] is False
    assert abs(r.pvalue - exact) < 4 * math.sqrt(exact * (1 - exact) / 3000) + 1 / 3001


def test_permutation_smyth_phipson_on_the_same_signs() -> None:
    """Reference loop over the very sign vectors the test draws: p = (b + 1) / (m + 1)."""
    a, b = paired(5, 40)
    d = a - b
    signs = np.vstack(list(sign_blocks(d.size, 500, seed=7)))
    hits = sum(abs(float(np.dot(s, d))) >= abs(float(d.sum())) - 1e-12 for s in signs)
    assert permutation(a, b, n_resamples=500, seed=7).pvalue == (hits + 1) / 501


def test_permutation_many_equals_permutation_pair_by_pair() -> None:
    rng = np.random.default_rng(0)
    scores = rng.beta(2, 3, (6, 150))  # 6 systems, 150 queries
    pairs = list(itertools.combinations(range(6), 2))
    diffs = np.array([scores[i] - scores[j] for i, j in pairs])
    many = permutation_many(diffs, n_resamples=3000, seed=4)
    one = [permutation(scores[i], scores[j], n_resamples=3000, seed=4).pvalue for i, j in pairs]
    assert many.tolist() == one


def test_sign_blocks_do_not_depend_on_the_block_size() -> None:
    whole = np.vstack(list(sign_blocks(130, 77, seed=3)))
    for block in (1, 10, 76):
        assert (np.vstack(list(sign_blocks(130, 77, seed=3, block=block))) == whole).all()
    assert whole.shape == (77, 130)
    assert abs(whole.mean()) < 0.05  # fair signs


def test_small_blocks_change_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bounded memory is blocks; a block boundary anywhere gives the same p-values."""
    from rankflavor.stats import randomization, tukey

    rng = np.random.default_rng(1)
    diffs = rng.normal(0.02, 0.2, (3, 9))
    matrix = rng.beta(2, 3, (3, 3))
    before = (permutation_many(diffs, n_resamples=600), permutation_many(diffs, n_resamples=300), tukey_hsd_randomized(matrix))
    monkeypatch.setattr(randomization, "BLOCK_ELEMENTS", 20)
    monkeypatch.setattr(tukey, "BLOCK_ELEMENTS", 20)
    after = (permutation_many(diffs, n_resamples=600), permutation_many(diffs, n_resamples=300), tukey_hsd_randomized(matrix))
    for x, y in zip(before, after, strict=True):
        assert x.tolist() == y.tolist()
    assert before[0].tolist() == [exact_randomization(d) for d in diffs]  # 2**9 <= 600: exact
    np.testing.assert_allclose(after[2], reference_tukey(matrix), rtol=RTOL)


def test_permutation_symmetric_in_a_and_b() -> None:
    a, b = paired(8, 70)
    assert permutation(a, b, n_resamples=999).pvalue == permutation(b, a, n_resamples=999).pvalue


# --- bootstrap test --------------------------------------------------------------------------


def reference_bootstrap_test(d: np.ndarray, n_resamples: int, seed: int) -> float:
    """Sakai (2006) on the same resampled indices, one resample at a time."""
    n = d.size
    t_obs = abs(d.mean() / (d.std(ddof=1) / math.sqrt(n)))
    w = d - d.mean()
    rng = np.random.default_rng(seed)
    hits = 0
    done = 0
    batch = default_batch(n, n_resamples)
    while done < n_resamples:
        for idx in rng.integers(0, n, (min(batch, n_resamples - done), n)):
            sample = w[idx]
            sd = sample.std(ddof=1)
            t = abs(sample.mean() / (sd / math.sqrt(n))) if sd > 1e-12 else (0.0 if abs(sample.mean()) < 1e-12 else math.inf)
            hits += t >= t_obs
            done += 1
    return (hits + 1) / (n_resamples + 1)


@pytest.mark.parametrize(("n", "seed"), [(6, 0), (25, 1), (120, 2)])
def test_bootstrap_test_equals_reference(n: int, seed: int) -> None:
    a, b = paired(seed, n)
    r = bootstrap_test(a, b, n_resamples=700, seed=seed)
    assert r.pvalue == pytest.approx(reference_bootstrap_test(a - b, 700, seed), abs=2 / 701)
    assert r.statistic == pytest.approx(ss.ttest_rel(a, b).statistic, rel=RTOL)
    assert r.details["seed"] == seed and r.details["n_resamples"] == 700


def test_bootstrap_test_many_equals_bootstrap_test() -> None:
    rng = np.random.default_rng(2)
    scores = rng.beta(2, 3, (4, 90))
    pairs = list(itertools.combinations(range(4), 2))
    many = bootstrap_test_many(np.array([scores[i] - scores[j] for i, j in pairs]), n_resamples=800, seed=9)
    assert many.tolist() == [bootstrap_test(scores[i], scores[j], n_resamples=800, seed=9).pvalue for i, j in pairs]


# --- corrections equal statsmodels -----------------------------------------------------------


@pytest.mark.parametrize(("method", "peer"), [("holm", "holm"), ("bonferroni", "bonferroni"), ("bh", "fdr_bh")])
@pytest.mark.parametrize("seed", range(5))
def test_correct_equals_multipletests(method: str, peer: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    p = np.concatenate([rng.uniform(0, 0.2, 8), rng.uniform(0, 1, 10), [0.0, 1.0, 0.03, 0.03]])
    rng.shuffle(p)
    np.testing.assert_allclose(correct(p, method), multipletests(p, method=peer)[1], rtol=RTOL, atol=0)


def test_correct_bh_rounds_like_statsmodels_on_subnormals() -> None:
    """Found by hypothesis: ``p * m / i`` and statsmodels' ``p / (i / m)`` differ on 5e-324."""
    p = np.array([0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 5e-324])
    assert correct(p, "bh").tolist() == multipletests(p, method="fdr_bh")[1].tolist()


def test_correct_none_and_empty() -> None:
    assert correct([0.2, 0.01], "none").tolist() == [0.2, 0.01]
    assert correct([], "holm").size == 0


@given(st.lists(st.floats(0, 1), min_size=1, max_size=30), st.sampled_from(["holm", "bonferroni", "bh"]))
@SETTINGS
def test_correct_properties(p: list[float], method: str) -> None:
    adjusted = correct(p, method)
    raw = np.asarray(p)
    assert ((adjusted >= raw - 1e-15) & (adjusted <= 1.0)).all()
    order = np.argsort(raw, kind="stable")
    assert (np.diff(adjusted[order]) >= -1e-15).all()  # adjusting keeps the order of the p-values
    np.testing.assert_allclose(adjusted, multipletests(raw, method={"bh": "fdr_bh"}.get(method, method))[1], rtol=1e-12)


# --- randomized Tukey HSD --------------------------------------------------------------------


def reference_tukey(matrix: np.ndarray) -> np.ndarray:
    """Every arrangement of every query's row across systems, by plain loops (Carterette 2012)."""
    q, s = matrix.shape
    means = matrix.mean(axis=0)
    ranges = []
    for arrangement in itertools.product(itertools.permutations(range(s)), repeat=q):
        m = [sum(matrix[i][arrangement[i][j]] for i in range(q)) / q for j in range(s)]
        ranges.append(max(m) - min(m))
    out = np.ones((s, s))
    for i in range(s):
        for j in range(s):
            out[i, j] = sum(r >= abs(means[i] - means[j]) - 1e-12 for r in ranges) / len(ranges)
    return out


@pytest.mark.parametrize(("q", "s", "seed"), [(3, 3, 0), (2, 4, 1), (5, 2, 2), (3, 3, 3)])
def test_tukey_exact_equals_reference(q: int, s: int, seed: int) -> None:
    matrix = np.random.default_rng(seed).beta(2, 3, (q, s)).round(2)
    assert math.factorial(s) ** q <= 10_000
    np.testing.assert_allclose(tukey_hsd_randomized(matrix), reference_tukey(matrix), rtol=RTOL)


def test_tukey_monte_carlo_close_to_reference() -> None:
    """4 queries × 3 systems has 1296 arrangements; 1000 random ones land within sampling error."""
    matrix = np.random.default_rng(6).beta(2, 3, (4, 3))
    matrix[:, 2] += 0.3
    exact = reference_tukey(matrix)
    mc = tukey_hsd_randomized(matrix, n_resamples=1000, seed=1)
    assert np.abs(mc - exact).max() < 4 * 0.5 / math.sqrt(1000) + 1 / 1001
    assert (mc == mc.T).all() and (np.diag(mc) == 1.0).all()


def test_tukey_at_least_as_conservative_as_pairwise() -> None:
    """The max-range null dominates each pair's own: Tukey p >= the pair's randomization p (roughly)."""
    rng = np.random.default_rng(3)
    matrix = rng.beta(2, 3, (60, 5)) + np.linspace(0, 0.1, 5)
    tukey = tukey_hsd_randomized(matrix, n_resamples=2000, seed=0)
    pair = permutation(matrix[:, 4], matrix[:, 0], n_resamples=2000, seed=0).pvalue
    assert tukey[0, 4] >= pair - 0.01


# --- seeds -----------------------------------------------------------------------------------


def test_same_seed_same_output_different_seed_different_resamples() -> None:
    a, b = paired(1, 200, shift=0.02)
    runs = {
        "permutation": lambda seed: permutation(a, b, n_resamples=500, seed=seed),
        "bootstrap_test": lambda seed: bootstrap_test(a, b, n_resamples=500, seed=seed),
        "bootstrap_ci": lambda seed: bootstrap_ci(a - b, n_resamples=500, seed=seed),
        "tukey": lambda seed: tukey_hsd_randomized(np.c_[a, b, (a + b) / 2], n_resamples=500, seed=seed).tolist(),
    }
    for name, run in runs.items():
        assert run(3) == run(3), name
        assert run(3) != run(4), name
    assert not (next(sign_blocks(200, 50, seed=3)) == next(sign_blocks(200, 50, seed=4))).all()
    assert permutation(a, b, n_resamples=500, seed=3).details["seed"] == 3


# --- degenerate input ------------------------------------------------------------------------

TESTS = [
    paired_t,
    wilcoxon,
    sign_test,
    permutation,
    bootstrap_test,
    cohens_d_paired,
]


@pytest.mark.parametrize("test", TESTS)
def test_degenerate_input_is_a_typed_error(test) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(EvaluationError, match="at least 2"):
        test([0.5], [0.4])
    with pytest.raises(EvaluationError, match="non-finite"):
        test([0.5, np.nan, 0.2], [0.4, 0.3, 0.1])
    with pytest.raises(EvaluationError, match="all 3 paired differences are zero"):
        test([0.5, 0.3, 0.2], [0.5, 0.3, 0.2])
    with pytest.raises(EvaluationError, match="same length"):
        test([0.5, 0.3, 0.2], [0.5, 0.3])


def test_degenerate_many_and_matrix_inputs() -> None:
    with pytest.raises(EvaluationError, match="pair 1"):
        permutation_many([[0.1, 0.2], [0.0, 0.0]])
    with pytest.raises(EvaluationError, match="non-finite"):
        bootstrap_test_many([[0.1, np.inf]])
    with pytest.raises(EvaluationError, match="at least 2 queries"):
        permutation_many([[0.1]])
    with pytest.raises(EvaluationError, match="identically"):
        tukey_hsd_randomized([[0.1, 0.1], [0.3, 0.3]])
    with pytest.raises(EvaluationError, match="at least 2 queries and 2 systems"):
        tukey_hsd_randomized([[0.1, 0.2]])
    with pytest.raises(EvaluationError, match="at least 2"):
        bootstrap_ci([0.4])
    with pytest.raises(EvaluationError, match=r"\[0, 1\]"):
        correct([0.1, np.nan])
    with pytest.raises(EvaluationError, match="all 2 pairs are ties"):
        sign_test([0.5, 0.3], [0.49, 0.31], tolerance=0.05)


def test_constant_nonzero_differences_have_documented_values() -> None:
    a, b = [0.5, 0.75, 1.0], [0.25, 0.5, 0.75]  # exactly 0.25 everywhere
    t = paired_t(a, b)
    assert (t.statistic, t.pvalue) == (math.inf, 0.0)
    assert cohens_d_paired(a, b) == math.inf
    assert bootstrap_test(a, b, n_resamples=99).pvalue == 1 / 100


def test_bad_arguments_are_usage_errors() -> None:
    a, b = paired(0, 10)
    with pytest.raises(UsageError, match="zero_method"):
        wilcoxon(a, b, zero_method="nope")
    with pytest.raises(UsageError, match="seed"):
        permutation(a, b, seed=None)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="n_resamples"):
        bootstrap_test(a, b, n_resamples=0)
    with pytest.raises(UsageError, match="method"):
        bootstrap_ci(a, method="student")
    with pytest.raises(UsageError, match="level"):
        bootstrap_ci(a, level=1.5)
    with pytest.raises(UsageError, match="correction"):
        correct([0.1], "sidak")
    with pytest.raises(UsageError, match="1-D"):
        paired_t([[0.1, 0.2]], [[0.1, 0.3]])


# --- properties ------------------------------------------------------------------------------

scores = st.lists(st.floats(0, 1, allow_nan=False), min_size=2, max_size=40)


@given(st.data())
@SETTINGS
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_properties_against_scipy(data: st.DataObject) -> None:
    a = np.asarray(data.draw(scores))
    b = np.asarray(data.draw(st.lists(st.floats(0, 1), min_size=a.size, max_size=a.size)))
    if not (a - b).any():
        with pytest.raises(EvaluationError):
            paired_t(a, b)
        return
    t = paired_t(a, b)
    ref = ss.ttest_rel(a, b)
    if np.isfinite(ref.statistic) and np.std(a - b) > 1e-9:
        assert t.pvalue == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-300)
    w = wilcoxon(a, b)
    assert w.pvalue == pytest.approx(float(ss.wilcoxon(a, b).pvalue), rel=1e-9)
    p = permutation(a, b, n_resamples=256)
    assert 0.0 < p.pvalue <= 1.0
    assert p.pvalue == permutation(b, a, n_resamples=256).pvalue
    assert isinstance(p, TestResult)
