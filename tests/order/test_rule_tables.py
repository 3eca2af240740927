"""The rule tables the engine and rankflavor.torch share (order/, aggregate), against their
definitions written out by hand here: the tie rules as sort keys, the rules an averaging rule
orders by, what each ordering knob's value does."""

from __future__ import annotations

import numpy as np
import pytest

from rankflavor.flavor.choices import Ties
from rankflavor.order import Ordering
from rankflavor.order import ties as T

#: The tie rules by their documented definitions: within a tie group, the sort key of a row
#: (docno rank r among the group's rows, grade g); every rule's order is total.
BY_HAND = {
    "docno_desc": lambda r, g: (-r,),
    "docno_asc": lambda r, g: (r,),
    "averaged": lambda r, g: (-r,),  # ordered as docno_desc; gains averaged
    "pessimistic": lambda r, g: (g, -r),  # lowest grade first, then docno descending
    "optimistic": lambda r, g: (-g, -r),
}


def test_the_table_holds_every_value_of_the_ties_knob() -> None:
    assert set(T.TIE_TABLE) == {t.value for t in Ties}
    assert [name for name, rule in T.TIE_TABLE.items() if rule.averaged] == ["averaged"]
    assert [name for name, rule in T.TIE_TABLE.items() if not rule.keys] == ["input_order"]
    assert {name: T.order_rule(name) for name in T.TIE_TABLE} == {**{n: n for n in T.TIE_TABLE}, "averaged": "docno_desc"}


@pytest.mark.parametrize("one_key", [True, False])
@pytest.mark.parametrize("rule", sorted(BY_HAND))
def test_tie_order_sorts_by_the_rules_keys(rule: str, one_key: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if not one_key:  # the lexsort taken when one int64 key cannot hold the keys
        monkeypatch.setattr(T, "ONE_KEY_LIMIT", 0.0)
    rng = np.random.default_rng(len(rule) + one_key)
    for _ in range(20):
        n = int(rng.integers(1, 300))  # long enough that argsort's quicksort reorders equal keys
        group = np.sort(rng.integers(0, 12, n))
        docno_rank = rng.permutation(n)  # distinct, as tied_rows makes them
        grade = rng.choice([0.0, 1.0, 2.0, 3.5], n)
        want = sorted(range(n), key=lambda i: (group[i], *BY_HAND[rule](docno_rank[i], grade[i])))
        assert T.tie_order(group, docno_rank, grade, T.order_rule(rule)).tolist() == want


def test_input_order_moves_nothing() -> None:
    order = np.array([2, 0, 1])
    tied = T.TiedRows(np.array([0, 1, 2]), np.array([0, 0, 0]), np.array([2, 1, 0]))
    assert T.break_ties(order, tied, np.zeros(3), "input_order") is order
    assert T.break_ties(order, tied, np.zeros(3), "docno_asc").tolist() == [1, 0, 2]


def test_ordering_reads_the_tables() -> None:
    o = {t: Ordering(ties=t) for t in T.TIE_TABLE}
    assert [t for t, x in o.items() if x.averaged] == ["averaged"]
    assert [t for t, x in o.items() if x.by_grade] == ["pessimistic", "optimistic"]
    assert [t for t, x in o.items() if not x.reorders_ties] == ["input_order"]
    assert {t: x.tie_rule for t, x in o.items()}["averaged"] == "docno_desc"
    assert (Ordering(unjudged="condensed").condensed, Ordering(unjudged="zero").condensed) == (True, False)
    assert (Ordering(precision="float32").score_dtype, Ordering().score_dtype) == ("float32", "float64")


def test_the_policy_tables_hold_every_value_of_their_knob() -> None:
    """aggregate's policy tables (read by the one-shot engine, merge for chunked and Spark
    evaluation, and rankflavor.torch), against the knobs' documented meanings."""
    import math

    from rankflavor.engine.aggregate import EMPTY_POLICY, MISSING_POLICY, REFUSALS, RUN_ONLY_POLICY, SINGLETONS_POLICY
    from rankflavor.flavor.choices import Empty, Missing, RunOnly, Singletons

    assert set(EMPTY_POLICY) == {e.value for e in Empty}
    assert (EMPTY_POLICY["zero"], EMPTY_POLICY["one"]) == (("value", 0.0), ("value", 1.0))
    assert EMPTY_POLICY["nan"][0] == "value" and math.isnan(EMPTY_POLICY["nan"][1])
    assert (EMPTY_POLICY["skip"][0], EMPTY_POLICY["error"][0]) == ("skip", "refuse")
    assert set(MISSING_POLICY) == {m.value for m in Missing}
    assert MISSING_POLICY["zero"] == ("value", 0.0)  # trec_eval -c
    assert (MISSING_POLICY["skip"][0], MISSING_POLICY["error"][0]) == ("skip", "refuse")
    assert RUN_ONLY_POLICY == {r.value: {"error": "refuse"}.get(r.value, r.value) for r in RunOnly}
    assert SINGLETONS_POLICY == {s.value: {"error": "refuse"}.get(s.value, s.value) for s in Singletons}
    assert set(REFUSALS) == {"run_only", "singletons", "empty", "missing"}  # every knob with an error value
