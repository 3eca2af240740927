"""bpref, bpref_ranx and judged@k against their definitions written out, anchored to pytrec_eval.

bpref (Buckley & Voorhees, SIGIR 2004, in trec_eval's ``m_bpref.c`` form): the mean over the R
relevant judgments of 1 - min(n, R) / min(N, R) for each relevant document retrieved, n the judged
non-relevant documents ranked above it and N those judged in all, the term 1 when n = 0.
bpref_ranx (AmenRa/ranx ``ranx/metrics/bpref.py``): the same term also when n = 0, so N = 0 is
0 / 0. judged@k (ir_measures ``Judged@k``): documents with any judgment in the top k over
min(k, retrieved). Small random queries (hypothesis, bounded examples).
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from .test_metrics_ndcg_reference import NO_SHRINK, Query, ours, queries, same


def bpref(q: Query, k: int | None, rel: int, ranx: bool) -> float:
    qrels, ranked = q
    R = sum(g >= rel for g in qrels.values())
    N = sum(0 <= g < rel for g in qrels.values())  # -1: pooled, unjudged
    if R == 0:
        return math.nan
    total, above = 0.0, 0
    for d, _ in ranked if k is None else ranked[:k]:
        g = qrels.get(d, -1)
        if g >= rel:
            if above == 0 and not ranx:
                total += 1.0
            elif min(N, R) == 0:
                total += math.nan
            else:
                total += 1 - min(above, R) / min(N, R)
        elif g >= 0:
            above += 1
    return total / R


def judged(q: Query, k: int | None) -> float:
    qrels, ranked = q
    top = ranked if k is None else ranked[:k]
    return sum(d in qrels for d, _ in top) / len(top) if top else 0.0


@settings(max_examples=100, deadline=None, phases=NO_SHRINK)
@given(queries(), st.one_of(st.none(), st.integers(1, 7)), st.sampled_from([1, 2]))
def test_bpref_and_judged_equal_their_definitions(q: Query, k: int | None, rel: int) -> None:
    at = "" if k is None else f"@{k}"
    names = [f"bpref{at}[rel={rel}]", f"bpref_ranx[rel={rel}]", f"judged{at}"]
    got = ours(q, names)
    assert same(got[0], bpref(q, k, rel, ranx=False)), (names[0], q, got[0])
    assert same(got[1], bpref(q, None, rel, ranx=True)), (names[1], q, got[1])
    assert same(got[2], judged(q, k)), (names[2], q, got[2])


@settings(max_examples=60, deadline=None, phases=NO_SHRINK)
@given(queries(), st.sampled_from([1, 2]))
def test_the_bpref_reference_is_trec_eval(q: Query, rel: int) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, ranked = q
    if not any(g >= rel for g in qrels.values()):
        return  # trec_eval scores it 0; the reference says NaN (nothing to find)
    ev = pytrec_eval.RelevanceEvaluator({"q": qrels}, {"bpref"}, relevance_level=rel)
    want = ev.evaluate({"q": {d: s for d, s in ranked}})["q"]["bpref"]
    assert bpref(q, None, rel, ranx=False) == pytest.approx(want, abs=1e-12)


def test_bpref_by_hand() -> None:
    # rank: doc grade: 1 n 0, 2 a 2, 3 u (unjudged), 4 m 0, 5 b 1; c 1 never retrieved. R = 3, N = 2
    q = ({"n": 0, "a": 2, "m": 0, "b": 1, "c": 1}, [("n", 5.0), ("a", 4.0), ("u", 3.0), ("m", 2.0), ("b", 1.0)])
    assert ours(q, ["bpref"])[0] == pytest.approx(((1 - 1 / 2) + (1 - 2 / 2)) / 3, abs=1e-12)
    assert ours(q, ["bpref@3"])[0] == pytest.approx((1 - 1 / 2) / 3, abs=1e-12)
    assert ours(q, ["bpref[rel=2]"])[0] == pytest.approx(1 - 1 / 1, abs=1e-12)  # R = 1, N = 4: min 1
    assert ours(q, ["judged@3", "judged@10", "judged"]) == pytest.approx([2 / 3, 4 / 5, 4 / 5], abs=1e-12)
    none = ({"a": 1}, [("a", 1.0), ("x", 0.5)])  # N = 0: trec_eval 1, ranx 0 / 0
    assert ours(none, ["bpref"])[0] == 1.0 and math.isnan(ours(none, ["bpref_ranx"])[0])
    ranx = ({"a": 1, "z": 0}, [("a", 1.0)])  # nothing above a: ranx's term is 1 - 0 / 1
    assert ours(ranx, ["bpref_ranx"])[0] == 1.0
