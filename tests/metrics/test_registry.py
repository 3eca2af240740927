"""What a MetricSpec owns: the knobs it reads under a flavor, its summary rule, what explain shows."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from rankflavor.flavor.flavor import Flavor
from rankflavor.metrics import REGISTRY, MetricSpec
from rankflavor.metrics.measure import Measure, parse_measure
from rankflavor.metrics.registry import Breakdown, explainable, register
from rankflavor.metrics.summary import GEO_MEAN_FLOOR, RULES


def test_knob_when_drops_a_knob_the_flavor_makes_irrelevant() -> None:
    ndcg = REGISTRY["ndcg"]
    assert "rel" not in ndcg.knobs_read(Flavor())
    assert "rel" in ndcg.knobs_read(Flavor(gain="binary"))
    assert "rel" in REGISTRY["AP"].knobs_read(Flavor())  # unconditional for binary metrics
    # so two ndcg measures differing only in rel are one measure, unless the gain is binary
    assert Measure("ndcg", 10, Flavor(rel=2)) == Measure("ndcg", 10, Flavor())
    assert Measure("ndcg", 10, Flavor(gain="binary", rel=2)) != Measure("ndcg", 10, Flavor(gain="binary"))


def test_register_refuses_an_inconsistent_spec() -> None:
    base = REGISTRY["AP"]
    with pytest.raises(ValueError, match="summary must be one of"):
        register(replace(base, name="_bad_summary", summary="median"))
    with pytest.raises(ValueError, match="knob_when names knobs it does not read"):
        register(replace(base, name="_bad_knob", knob_when=(("gain", lambda f: True),)))
    with pytest.raises(ValueError, match="needs its ideal_cut"):
        register(replace(base, name="_bad_ideal", uses_ideal=True, breakdown=Breakdown(lambda r, m: np.zeros(0))))
    ndcg = REGISTRY["ndcg"].breakdown
    assert ndcg is not None
    with pytest.raises(ValueError, match="and ideal_list"):  # explain shows the kernel's own list, so it needs it
        register(replace(base, name="_bad_ideal", uses_ideal=True, breakdown=replace(ndcg, ideal_list=None)))
    assert not {"_bad_summary", "_bad_knob", "_bad_ideal"} & set(REGISTRY)


def test_each_summary_kind_has_its_rule_and_a_spec_may_bring_its_own() -> None:
    values = np.array([0.0, 0.5, 1.0])
    ok, none = np.ones(3, dtype=bool), np.zeros(3, dtype=bool)
    spec = REGISTRY["AP"]
    measure = parse_measure("AP")
    assert spec.summarize(measure, values, ok, none, np.zeros(0)) == (0.5, 3)
    gm = REGISTRY["GMAP"].summarize(parse_measure("GMAP"), values, ok, none, np.zeros(0))
    assert gm[0] == pytest.approx((GEO_MEAN_FLOOR * 0.5 * 1.0) ** (1 / 3)) and gm[1] == 3
    assert REGISTRY["num_ret"].summarize(parse_measure("num_ret"), values, ok, none, np.zeros(0)) == (1.5, 3)
    assert set(RULES) == {"mean", "sum", "geometric", "none"}
    # num_rel's own rule: under total=qrels_positive, the positive judgments (fractional ones
    # truncated), whatever the per-query values say.
    num_rel = REGISTRY["num_rel"]
    grades = np.array([0.0, 1.0, 2.0, 0.5])
    positive = parse_measure("num_rel[total=qrels_positive,fractional=truncate]")
    assert num_rel.summarize(positive, values, ok, none, grades) == (2.0, 3)
    as_given = parse_measure("num_rel[total=qrels_positive]")
    assert num_rel.summarize(as_given, values, ok, none, grades) == (3.0, 3)
    assert num_rel.summarize(parse_measure("num_rel"), values, ok, none, grades) == (1.5, 3)


def test_explain_shows_what_the_spec_declares() -> None:
    assert explainable() == [name for name, s in REGISTRY.items() if s.breakdown is not None]
    assert set(explainable()) == {"ndcg", "dcg"}
    assert REGISTRY["ndcg"].uses_ideal and not REGISTRY["dcg"].uses_ideal
    assert all(isinstance(s, MetricSpec) for s in REGISTRY.values())
