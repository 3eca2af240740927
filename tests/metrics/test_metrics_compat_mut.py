"""Compat (Clarke, Vtyurina & Smucker 2020) against its definition written out, on the edges the
mutation run found untested: the ``param`` knob's rule, p = 0, plain RBO, the default strict=0,
and which ties of the ideal strict=1 refuses.

Reference: the run ranked by score (ties docno ascending, ``ties=docno_asc``), the ideal the
relevant judgments (grade >= 1) by grade, then score (0.0 unretrieved), then run rank; with
depth D = max(|run|, |ideal|), RBO = sum_{i<=D} p^(i-1) |A_i & I_i| / i / sum_{i<=D} p^(i-1),
and Compat = RBO(run, ideal) / RBO(ideal, ideal) (ir_measures' compat_provider.py). Under
strict=1 a query is refused exactly when some order of its ideal's equal (grade, score) documents
(ir_measures keeps qrels file order) changes the value: found here by trying every such order.
"""

from __future__ import annotations

import itertools
import math
import random
import re

import pytest

import rankflavor
from rankflavor.errors import FlavorError

Qrels = dict[str, dict[str, int]]
Run = dict[str, dict[str, float]]
TOL = 1e-12
TIE_ORDER = (
    "order in the ideal changes the value; ir_measures orders them by qrels file order, which rankflavor "
    "does not keep (strict=1): break the tie in the scores, or use strict=0 (ties by run rank)"
)
PARAM_RULE = r"Compat: param is \(p, normalise, strict\) with 0 <= p <= 1 and normalise, strict 0 or 1, received "


def rbo(ranking: list[str], ideal: list[str], p: float, depth: int) -> float:
    """sum_{i<=depth} p^(i-1) |A_i & I_i| / i over sum_{i<=depth} p^(i-1), set by set."""
    score = norm = 0.0
    for i in range(1, depth + 1):
        w = p ** (i - 1)
        score += w * len(set(ranking[:i]) & set(ideal[:i])) / i
        norm += w
    return score / norm


def compat_of(ranking: list[str], ideal: list[str], p: float, normalise: bool) -> float:
    depth = max(len(ranking), len(ideal))
    if depth == 0:
        return 0.0
    value = rbo(ranking, ideal, p, depth)
    best = rbo(ideal, ideal, p, depth)
    return value / best if normalise and best > 0 else value


def run_order(docs: dict[str, float]) -> list[str]:
    return sorted(docs, key=lambda d: (-docs[d], d))  # ties docno ascending


def reference(judged: dict[str, int], docs: dict[str, float], p: float, normalise: bool = True) -> float:
    """Compat with ideal ties (equal grade and score) by run rank, unretrieved last (strict=0)."""
    ranking = run_order(docs)
    at = {d: i for i, d in enumerate(ranking)}
    ideal = sorted((d for d, g in judged.items() if g >= 1),
                   key=lambda d: (-judged[d], -docs.get(d, 0.0), at.get(d, math.inf)))
    return compat_of(ranking, ideal, p, normalise)


def order_matters(judged: dict[str, int], docs: dict[str, float], p: float) -> bool:
    """Does some order of the ideal's equal (grade, score) documents change Compat? (every order)"""
    ranking = run_order(docs)
    groups: dict[tuple[int, float], list[str]] = {}
    for d, g in judged.items():
        if g >= 1:
            groups.setdefault((g, docs.get(d, 0.0)), []).append(d)
    keys = sorted(groups, key=lambda k: (-k[0], -k[1]))
    values = [compat_of(ranking, [d for part in parts for d in part], p, True)
              for parts in itertools.product(*(itertools.permutations(groups[k]) for k in keys))]
    return max(values) - min(values) > TOL


def ours(qrels: Qrels, run: Run, param: str) -> dict[str, float]:
    return rankflavor.evaluate(qrels, run, [f"Compat[param={param},ties=docno_asc]"])[0].per_query()


# ---------------------------------------------------------------------------------------------
# The param knob: (p, normalise, strict)


@pytest.mark.parametrize("param", [
    "(0.5,2)",  # normalise is 0 or 1
    "(0.5,1,2)",  # strict is 0 or 1
    "(0.5,2,1)",
    "(0.5,1,0,0)",  # three values at most
    "(0.5,1,0,1)",
    "1.5",  # p <= 1
    "(1.25,1,0)",
    "-0.5",  # p >= 0
])  # fmt: skip
def test_param_outside_the_rule_is_refused_with_the_rule(param: str) -> None:
    with pytest.raises(FlavorError, match=PARAM_RULE + rf"{re.escape(param)}$"):
        rankflavor.evaluate({"1": {"a": 1}}, {"1": {"a": 1.0}}, [f"Compat[param={param}]"])


@pytest.mark.parametrize("param", ["0", "(0,1)", "(0,0,0)", "(0,1,1)", "1", "(1,0)"])
def test_p_at_its_bounds_is_accepted(param: str) -> None:
    qrels, run = {"1": {"a": 1, "b": 2}}, {"1": {"b": 0.5, "a": 0.25, "x": 0.125}}
    assert set(ours(qrels, run, param)) == {"1"}


def test_p_zero_weighs_the_first_rank_alone() -> None:
    """p = 0: the weights are 1, 0, 0, ... (0^0 = 1), so RBO = |A_1 & I_1| / 1 over 1, and the
    ideal's own RBO is 1: Compat is 1 when the run's first document is the ideal's first, else 0."""
    qrels = {"hit": {"a": 2, "b": 1}, "miss": {"a": 2, "b": 1}, "other": {"a": 1, "b": 1}}
    run = {"hit": {"a": 0.5, "x": 0.25, "b": 0.125},  # ideal a, b: rank 1 is a
           "miss": {"b": 0.5, "a": 0.25},  # ideal a, b: rank 1 is b
           "other": {"x": 0.75, "a": 0.5, "b": 0.25}}  # rank 1 unjudged
    for param in ("0", "(0,1,0)", "(0,0)", "(0,1,1)"):
        assert ours(qrels, run, param) == {"hit": 1.0, "miss": 0.0, "other": 0.0}, param


def test_two_values_are_p_and_normalise_with_strict_zero() -> None:
    """param=(0.5, 0): plain RBO. Run a, x, y; ideal a, b; D = 3:
    (1 * 1/1 + 0.5 * 1/2 + 0.25 * 1/3) / (1 + 0.5 + 0.25) = (4/3) / 1.75. Normalised (0.5, 1): the
    ideal's own RBO is (1 + 0.5 * 2/2 + 0.25 * 2/3) / 1.75 = (5/3) / 1.75, so (4/3) / (5/3) = 0.8."""
    qrels, run = {"1": {"a": 1, "b": 1}}, {"1": {"a": 0.9, "x": 0.5, "y": 0.25}}
    assert ours(qrels, run, "(0.5,0)")["1"] == pytest.approx((4 / 3) / 1.75, abs=TOL)
    assert ours(qrels, run, "(0.5,1)")["1"] == pytest.approx(0.8, abs=TOL)
    # and a tie whose order matters is not refused by two values (strict defaults to 0)
    qrels, run = {"1": {"a": 1, "z": 1}}, {"1": {"a": 0.5, "m": 0.5, "z": 0.5}}
    assert ours(qrels, run, "(0.5,1)")["1"] == pytest.approx(reference(qrels["1"], run["1"], 0.5), abs=TOL)


def test_default_strict_is_zero_ties_by_run_rank() -> None:
    """Without strict, a tie whose qrels order would matter goes by run rank: a (rank 1) before z
    (rank 3) in the ideal a, z. Run a, m, z, D = 3, p = 0.5: RBO = (1*1/1 + 0.5*1/2 + 0.25*2/3) /
    1.75 = (1 + 1/4 + 1/6) / 1.75; the ideal's own (1 + 0.5 + 0.25*2/3) / 1.75."""
    qrels, run = {"1": {"a": 1, "z": 1}}, {"1": {"a": 0.5, "m": 0.5, "z": 0.5}}
    want = (1 + 1 / 4 + 1 / 6) / (1 + 1 / 2 + 1 / 6)
    for param in ("0.5", "(0.5,1)", "(0.5,1,0)"):
        assert ours(qrels, run, param)["1"] == pytest.approx(want, abs=TOL), param
    with pytest.raises(FlavorError, match=re.escape(TIE_ORDER)):
        ours(qrels, run, "(0.5,1,1)")


def test_p_whose_powers_vanish_beside_one_keeps_a_perfect_run_at_one() -> None:
    """The run is the ideal (a) followed by an unjudged document: RBO(run, ideal) and
    RBO(ideal, ideal) are the same sum, so Compat is 1 exactly, for any p (ir_measures: 1.0 at
    p = 2e-16, where 1 + p/2 rounds to 1 but 1 + p does not)."""
    qrels, run = {"1": {"a": 1}}, {"1": {"a": 0.9, "x": 0.5}}
    for param in ("2e-16", "0.5", "1"):
        assert ours(qrels, run, param)["1"] == 1.0, param


# ---------------------------------------------------------------------------------------------
# strict=1: the ties of the ideal refused where their order changes the value


def test_refusal_names_the_query_and_says_why() -> None:
    """Two relevant documents only (ideal slots 1, 2), tied at score 0.5 and ranks 1 and 3: in
    the order a, z a enters the overlap at depth 1, in z, a at depth 2."""
    qrels, run = {"q7": {"a": 1, "z": 1}}, {"q7": {"a": 0.5, "m": 0.5, "z": 0.5}}
    assert order_matters(qrels["q7"], run["q7"], 0.95)
    with pytest.raises(FlavorError, match=r"^Compat: query q7 has relevant documents of equal grade 1 "
                                          r"and equal score 0\.5 whose " + re.escape(TIE_ORDER) + "$"):
        ours(qrels, run, "(0.95,1,1)")


def test_refusal_in_a_later_query_names_it() -> None:
    """q1 has no tie; q2 (coded after q1) has the harmful one."""
    qrels = {"q1": {"a": 2, "b": 1}, "q2": {"a": 1, "z": 1}}
    run = {"q1": {"a": 0.75, "b": 0.5}, "q2": {"a": 0.5, "m": 0.5, "z": 0.5}}
    assert not order_matters(qrels["q1"], run["q1"], 0.95) and order_matters(qrels["q2"], run["q2"], 0.95)
    with pytest.raises(FlavorError, match=r"query q2 has relevant documents of equal grade 1 and equal score 0\.5"):
        ours(qrels, run, "(0.95,1,1)")


def test_retrieved_at_score_zero_ties_an_unretrieved_one() -> None:
    """a retrieved at score 0.0 (rank 1) and b unretrieved (score 0.0): ideal a, b gives overlap
    {a} at depth 1, ideal b, a none: refused."""
    qrels, run = {"1": {"a": 1, "b": 1}}, {"1": {"a": 0.0, "x": -1.0}}
    assert order_matters(qrels["1"], run["1"], 0.95)
    with pytest.raises(FlavorError, match=r"equal grade 1 and equal score 0\.0 whose " + re.escape(TIE_ORDER)):
        ours(qrels, run, "(0.95,1,1)")
    assert ours(qrels, run, "(0.95,1,0)")["1"] == pytest.approx(reference(qrels["1"], run["1"], 0.95), abs=TOL)


@pytest.mark.parametrize(("judged", "docs", "why"), [
    # c (grade 2) slot 1; a, b tied at slots 2, 3, ranks 1, 2: each enters at its slot whatever the order
    ({"c": 2, "a": 1, "b": 1}, {"a": 0.5, "b": 0.5, "c": 0.25}, "ranks at or above the slots"),
    # a, b tied at slots 2, 3, ranks 3, 4: each enters at its rank (3 >= the last slot 3)
    ({"c": 2, "a": 1, "b": 1}, {"c": 0.9, "x": 0.75, "a": 0.5, "b": 0.5}, "ranks at or below the slots"),
    # a (grade 2), b (grade 1) tie on score only: different grades are no tie
    ({"a": 2, "b": 1}, {"b": 0.5, "a": 0.5}, "equal score, different grades"),
    ({"a": 2, "b": 1, "c": 1}, {"a": 0.5, "b": 0.5, "c": 0.25}, "equal score, grades 2 and 1"),
])  # fmt: skip
def test_ties_whose_order_cannot_matter_are_scored(judged: dict[str, int], docs: dict[str, float], why: str) -> None:
    assert not order_matters(judged, docs, 0.95), why
    got = ours({"1": judged}, {"1": docs}, "(0.95,1,1)")["1"]
    assert got == pytest.approx(reference(judged, docs, 0.95), abs=TOL), why


def test_three_tied_past_the_first_slot_are_refused() -> None:
    """c slot 1; a, b, d tied at slots 2..4, ranks 3..5: the document at rank 3 enters at depth 3
    in slot 2 or 3, at depth 4 in slot 4."""
    judged, docs = {"c": 2, "a": 1, "b": 1, "d": 1}, {"c": 0.9, "x": 0.75, "a": 0.5, "b": 0.5, "d": 0.5}
    assert order_matters(judged, docs, 0.95)
    with pytest.raises(FlavorError, match=re.escape(TIE_ORDER)):
        ours({"1": judged}, {"1": docs}, "(0.95,1,1)")


def _random_case(rng: random.Random) -> tuple[Qrels, Run]:
    qrels: Qrels = {}
    run: Run = {}
    for q in rng.sample(["1", "2", "3", "4"], rng.randint(1, 4)):
        docs = [f"d{i}" for i in range(rng.randint(1, 6))]
        judged = {d: rng.choice([0, 1, 1, 2]) for d in docs if rng.random() < 0.8}
        scored = {d: rng.choice([0.0, 0.25, 0.5, 0.5, 0.75]) for d in docs if rng.random() < 0.7}
        if judged:
            qrels[q] = judged
        if scored:
            run[q] = scored
    if not qrels or not run or not set(qrels) & set(run):
        return _random_case(rng)
    return qrels, run


@pytest.mark.parametrize("seed", range(6))
def test_random_against_the_definition_and_every_tie_order(seed: int) -> None:
    """Small random queries with many ties: strict=0 against the reference, strict=1 refused
    exactly when some qrels order of a tie changes the value (naming such a query), else the
    reference's value."""
    rng = random.Random(seed)
    for _ in range(25):
        qrels, run = _random_case(rng)
        p = rng.choice([0.5, 0.8, 0.95, 1.0])
        normalise = rng.choice([0, 1])
        common = sorted(set(qrels) & set(run))
        want = {q: reference(qrels[q], run[q], p, bool(normalise)) for q in common}
        got = ours(qrels, run, f"({p},{normalise},0)")
        for q in common:
            assert got[q] == pytest.approx(want[q], abs=TOL), (qrels, run, p, normalise)
        harmful = [q for q in common if order_matters(qrels[q], run[q], p)]
        if harmful:
            with pytest.raises(FlavorError, match=re.escape(TIE_ORDER)) as err:
                ours(qrels, run, f"({p},{normalise},1)")
            assert any(f"query {q} has" in str(err.value) for q in harmful), (str(err.value), harmful)
        else:
            strict = ours(qrels, run, f"({p},{normalise},1)")
            for q in common:
                assert strict[q] == pytest.approx(want[q], abs=TOL), (qrels, run, p, normalise)
