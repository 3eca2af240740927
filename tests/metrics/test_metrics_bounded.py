"""metrics/bounded.py: which metrics have an exact interval under unjudged documents, and how it is
searched (the proofs: rankflavor.analysis.judgments.extremes and .ratio). Each row is what the metric's
definition implies: NDCG is DCG over an ideal that grows with the graded documents (a ratio),
DCG, RBP, P, RR and ERR never fall as one document's level rises (monotone), AP is neither and
is searched over the count of relevant documents."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

import rankflavor
from rankflavor.metrics import bounded, registry
from rankflavor.metrics.bounded import Bound

#: one measure per bounded metric, with a scale for those that need its top grade
MEASURES = {"ndcg": "ndcg@4", "dcg": "dcg@4", "RBP": "RBP@4[max_grade=3]", "P": "P@4[rel=2]", "AP": "AP@4[rel=2]",
            "RR": "RR@4[rel=2]", "ERR": "ERR@4[max_grade=3]", "ERR_gain": "ERR_gain@4[max_grade=3,gain=linear]"}


def _value(judged: dict[str, int], holes: dict[str, int], measure: str) -> float:
    """The measure on a fixed ranking d0 > d1 > d2 > d3 > d4 with ``judged`` and ``holes`` as
    its judgments (one query)."""
    run = {"q": {f"d{i}": 5.0 - i for i in range(5)}}
    return float(rankflavor.evaluate({"q": {**judged, **holes}}, run, [measure])[0].mean)


@settings(max_examples=40, deadline=None)
@given(grades=st.lists(st.sampled_from([None, 0, 1, 2, 3]), min_size=5, max_size=5),
       hole=st.integers(0, 4), low=st.integers(0, 2))
def test_monotone_metrics_never_fall_when_a_hole_is_graded_higher(grades: list[int | None], hole: int, low: int) -> None:
    """What ``Bound("monotone", ...)`` declares, checked on the values themselves: raising the
    grade of one document (the others fixed) never lowers P, RR, RBP, DCG, ERR or ERR_gain. The
    ratio and relevant-count kinds are declared for the metrics where that fails (next test)."""
    judged = {f"d{i}": g for i, g in enumerate(grades) if g is not None and i != hole}
    for name, bound in bounded.BOUNDS.items():
        if bound.search != "monotone":
            continue
        values = [_value(judged, {f"d{hole}": g}, MEASURES[name]) for g in range(low, 4)]
        assert all(b >= a - 1e-12 for a, b in itertools.pairwise(values)), (name, values)


def test_the_metrics_declared_otherwise_do_fall() -> None:
    """NDCG (a ratio: the grade raises the ideal too) and AP (a relevant document more raises R)
    can lose value when a document is graded higher; so their bounds need the searches of
    judgments.ratio and judgments.extremes rather than every hole at one end."""
    assert {n for n, b in bounded.BOUNDS.items() if b.search != "monotone"} == {"ndcg", "AP"}
    # ndcg@4: d0 = 3, d4 (below the cutoff) a hole: graded 3 it enters the global ideal.
    assert _value({"d0": 3}, {"d4": 3}, "ndcg@4") < _value({"d0": 3}, {"d4": 0}, "ndcg@4")
    # AP@4: d0 relevant; d4 a hole below the cutoff: relevant, it raises R from 1 to 2.
    assert _value({"d0": 2}, {"d4": 2}, "AP@4[rel=2]") == 0.5 < _value({"d0": 2}, {"d4": 0}, "AP@4[rel=2]") == 1.0
    assert bounded.BOUNDS["ndcg"].ideal and bounded.BOUNDS["ndcg"].numerator == "dcg"
    b = Bound("monotone", "gain")
    assert (b.averages, b.ideal, b.numerator) == (False, False, None)


def test_bound_of_each_registered_metric() -> None:
    for name in registry.known_names():
        spec = registry.lookup(name)
        assert spec is not None
        assert bounded.bound_of(spec) == bounded.BOUNDS.get(name)
    spec = registry.lookup("ndcg")
    assert spec is not None and bounded.bound_of(spec) == Bound("ratio", "gain", True, True, "dcg")
    spec = registry.lookup("nERR")
    assert spec is not None and bounded.bound_of(spec) is None
    assert bounded.bounded() == ["ndcg", "dcg", "RBP", "P", "AP", "RR", "ERR", "ERR_gain"]
