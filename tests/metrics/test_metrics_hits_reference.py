"""hits@k and F1@k as ranx defines them (AmenRa/ranx 0.3.21 ``ranx/metrics/hits.py``, ``f1.py``),
written out: hits = relevant in the top k (the whole run without k); F1 = 2 (P R) / (P + R) with
P = hits / k (k = the number retrieved without a cutoff) and R = hits / (relevant judgments), 0
when both are 0. Small random queries (hypothesis, bounded examples)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from .test_metrics_ndcg_reference import NO_SHRINK, Query, ours, queries, same


def reference(q: Query, metric: str, k: int | None, rel: int) -> float:
    qrels, ranked = q
    R = sum(g >= rel for g in qrels.values())
    if R == 0:
        return math.nan
    top = ranked if k is None else ranked[:k]
    found = sum(qrels.get(d, -1) >= rel for d, _ in top)
    if metric == "hits":
        return float(found)
    p = found / (len(ranked) if k is None else k) if (len(ranked) if k is None else k) else 0.0
    r = found / R
    return 2 * (p * r) / (p + r) if p + r > 0 else 0.0


@settings(max_examples=80, deadline=None, phases=NO_SHRINK)
@given(queries(), st.one_of(st.none(), st.integers(1, 7)), st.sampled_from([1, 2, 3]))
def test_hits_and_f1_equal_their_definitions(q: Query, k: int | None, rel: int) -> None:
    at = "" if k is None else f"@{k}"
    got = ours(q, [f"hits{at}[rel={rel}]", f"F1{at}[rel={rel}]"])
    assert same(got[0], reference(q, "hits", k, rel)), (q, k, rel, got)
    assert same(got[1], reference(q, "F1", k, rel)), (q, k, rel, got)


def test_by_hand() -> None:
    # rank: doc grade: 1 a 2, 2 b 0, 3 c 1, 4 e (unjudged); d 1 never retrieved: R = 3
    q = ({"a": 2, "b": 0, "c": 1, "d": 1}, [("a", 0.9), ("b", 0.8), ("c", 0.7), ("e", 0.6)])
    got = ours(q, ["hits@1", "hits@3", "hits", "hits[rel=2]", "F1@1", "F1@2", "F1", "F1@6", "F1[rel=3]"])
    want = [1, 2, 2, 1, 2 * (1 * (1 / 3)) / (1 + 1 / 3), 2 * (0.5 / 3) / (0.5 + 1 / 3),
            2 * (0.5 * (2 / 3)) / (0.5 + 2 / 3), 2 * ((2 / 6) * (2 / 3)) / (2 / 6 + 2 / 3)]
    assert got[:8] == pytest.approx(want, abs=1e-12)
    assert math.isnan(got[8])  # nothing at grade 3: empty
