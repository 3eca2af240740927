"""metrics/bounded.py: which metrics have an exact interval under unjudged documents, and how it is
searched (the proofs: rankflavor.judgments.extremes and .ratio). Each row is what the metric's
definition implies: NDCG is DCG over an ideal that grows with the graded documents (a ratio),
DCG, RBP, P, RR and ERR never fall as one document's level rises (monotone), AP is neither and
is searched over the count of relevant documents."""

from __future__ import annotations

from rankflavor.metrics import bounded, registry
from rankflavor.metrics.bounded import Bound


def test_the_table() -> None:
    assert bounded.BOUNDS == {
        "ndcg": Bound("ratio", "gain", averages=True, ideal=True, numerator="dcg"),
        "dcg": Bound("monotone", "gain", averages=True),
        "RBP": Bound("monotone", "gain", averages=True),
        "P": Bound("monotone", "relevance"),
        "AP": Bound("relevant_count", "relevance"),
        "RR": Bound("monotone", "relevance"),
        "ERR": Bound("monotone", "stop"),
        "ERR_gain": Bound("monotone", "stop"),
    }
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
