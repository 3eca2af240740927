"""The summary rules and the registry's own checks, against values worked out by hand.

Summaries follow trec_eval 9.0.8 ``meas_avg.c``: a mean of the evaluated topics, the geometric
mean exp(mean(log(max(v, MIN_GEO_MEAN)))) with MIN_GEO_MEAN = 0.00001 (``trec_eval.h``) and
``-c`` missing topics counted at the floor, and sums for the counts.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import rankflavor
from rankflavor.metrics import registry, summary
from rankflavor.metrics.registry import Breakdown, MetricSpec

T, F = True, False


def arr(*v: float) -> np.ndarray:
    return np.array(v, dtype=np.float64)


def mask(*v: bool) -> np.ndarray:
    return np.array(v, dtype=bool)


def test_the_mean() -> None:
    assert summary.mean(arr(0.5, math.nan, 1.0), mask(T, F, T), mask(F, F, F)) == (0.75, 2)
    got, n = summary.mean(arr(0.5, math.nan, 1.0), mask(T, T, T), mask(F, F, F))
    assert math.isnan(got) and n == 3  # a NaN the metric computed is kept
    got, n = summary.mean(arr(math.nan), mask(F), mask(F))
    assert math.isnan(got) and n == 0
    assert summary.mean(arr(0.25, 0.5), mask(T, T), mask(F, T)) == (0.375, 2)  # missing rows enter the mean
    # sequential in query order, as trec_eval adds: 0.1 + 0.2 + 0.3 is not 0.6 in binary floating point
    assert summary.mean(arr(0.1, 0.2, 0.3), mask(T, T, T), mask(F, F, F))[0] == ((0.1 + 0.2) + 0.3) / 3


def test_the_geometric_mean() -> None:
    assert summary.GEO_MEAN_FLOOR == 0.00001
    got, n = summary.geometric(arr(0.0, 0.1), mask(T, T), mask(F, F))
    assert got == pytest.approx(math.exp((math.log(1e-5) + math.log(0.1)) / 2), rel=1e-12) and n == 2
    got, n = summary.geometric(arr(0.5, 0.0), mask(T, F), mask(F, T))  # a missing topic: the floor, once
    assert got == pytest.approx(math.exp((math.log(0.5) + math.log(1e-5)) / 2), rel=1e-12) and n == 2
    got, n = summary.geometric(arr(0.5, math.nan), mask(T, T), mask(F, F))  # a computed NaN: the floor
    assert got == pytest.approx(math.exp((math.log(0.5) + math.log(1e-5)) / 2), rel=1e-12) and n == 2
    got, n = summary.geometric(arr(0.5, math.nan), mask(T, F), mask(F, F))  # a policy NaN: left out
    assert got == pytest.approx(0.5, rel=1e-12) and n == 1
    got, n = summary.geometric(arr(0.0), mask(F), mask(T))  # only missing topics
    assert got == pytest.approx(1e-5, rel=1e-12) and n == 1
    got, n = summary.geometric(arr(math.nan), mask(F), mask(F))
    assert math.isnan(got) and n == 0
    got, n = summary.geometric(arr(), mask(), mask())
    assert math.isnan(got) and n == 0


def test_sums_and_per_query_only() -> None:
    assert summary.total(arr(3.0, math.nan, 4.0), mask(T, T, T), mask(F, F, F)) == (7.0, 3)
    got, n = summary.per_query_only(np.array(["a", "b"], dtype=object), mask(T, T), mask(F, F))
    assert math.isnan(got) and n == 2
    assert summary.RULES == {"mean": summary.mean, "sum": summary.total, "geometric": summary.geometric,
                             "none": summary.per_query_only}
    assert registry.SUMMARIES == ("mean", "sum", "geometric", "none")


def test_gm_map_over_queries() -> None:
    """gm_map: AP 1 and AP 0 (nothing relevant retrieved) give sqrt(1 * 1e-5)."""
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": {"a": 1.0}, "q2": {"c": 1.0}}
    got = rankflavor.evaluate(qrels, run, "trec_eval:gm_map")[0].mean
    assert got == pytest.approx(math.sqrt(1e-5), rel=1e-12)


def _kernel(r: object, m: object) -> tuple[np.ndarray, np.ndarray]:
    return np.zeros(1), np.zeros(1, dtype=bool)


def test_register_refuses_a_bad_spec_word_for_word() -> None:
    with pytest.raises(ValueError) as err:
        registry.register(MetricSpec("zz_test", ("rel",), _kernel, summary="median"))
    assert str(err.value) == ("MetricSpec 'zz_test': summary must be one of ('mean', 'sum', 'geometric', 'none'), "
                              "received 'median'")
    with pytest.raises(ValueError) as err:
        registry.register(MetricSpec("zz_test", ("rel",), _kernel, knob_when=(("gain", lambda f: True),)))
    assert str(err.value) == "MetricSpec 'zz_test': knob_when names knobs it does not read: ['gain']"
    for half in (Breakdown(lambda m: None, ideal_cut=lambda r, m: None),  # type: ignore[arg-type,return-value]
                 Breakdown(lambda m: None, ideal_list=lambda r, m: None)):  # type: ignore[arg-type,return-value]
        with pytest.raises(ValueError) as err:
            registry.register(MetricSpec("zz_test", ("rel",), _kernel, uses_ideal=True, breakdown=half))
        assert str(err.value) == ("MetricSpec 'zz_test': a breakdown of a metric with an ideal needs its ideal_cut "
                                  "and ideal_list")
    assert registry.lookup("zz_test") is None  # nothing refused was registered


def test_register_and_lookup(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "REGISTRY", dict(registry.REGISTRY))
    monkeypatch.setattr(registry, "_LOOKUP", dict(registry._LOOKUP))
    spec = MetricSpec("ZZ_Test", ("rel",), _kernel, aliases=("Zed", "zz2"), uses_ideal=True,
                      breakdown=Breakdown(lambda m: None, lambda r, m: None, lambda r, m: None))  # type: ignore[arg-type,return-value]
    assert registry.register(spec) is spec
    assert registry.lookup("zz_test") is spec and registry.lookup("ZED") is spec and registry.lookup("zZ2") is spec
    assert registry.lookup("zz3") is None
    assert "ZZ_Test" in registry.known_names() and "ZZ_Test" in registry.explainable()
    assert registry.known_names() == list(registry.REGISTRY)


def test_what_a_spec_says_it_reads() -> None:
    from rankflavor.flavor.flavor import Flavor
    from rankflavor.metrics.measure import parse_measure

    nd, err, p = registry.lookup("ndcg"), registry.lookup("ERR"), registry.lookup("P")
    assert nd is not None and err is not None and p is not None
    assert nd.needs_top_grade(Flavor(ideal="max")) and not nd.needs_top_grade(Flavor())
    assert err.needs_top_grade(Flavor()) and not p.needs_top_grade(Flavor())
    assert "rel" not in nd.knobs_read(Flavor()) and "rel" in nd.knobs_read(Flavor(gain="binary"))
    assert nd.knobs_read(Flavor(gain="binary")) == set(nd.knobs)
    m = parse_measure("ndcg@5")
    assert nd.deepest_rank(m) == 5 and p.deepest_rank(m) is None
    assert nd.reads_judged_only(m) and not nd.reads_judged_only(parse_measure("ndcg@5[ties=averaged]"))
    assert p.reads_judged_only(parse_measure("P@5"))
    assert nd.reads_top_rows(parse_measure("ndcg@5[ties=averaged]")) == 5 and p.reads_top_rows(m) is None
    assert set(registry.explainable()) >= {"ndcg", "dcg"} and "P" not in registry.explainable()
