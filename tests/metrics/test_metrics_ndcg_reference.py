"""NDCG and DCG over every flavor axis against a plain-Python reference written from the definitions.

The reference (:func:`reference`) is the textbook formula spelled out for one ranked list:
DCG@k = sum over ranks i <= k of gain(grade_i) / discount(i) (Järvelin & Kekäläinen 2002), and
IDCG the same sum over the ideal list the ``ideal`` knob names, cut where ``ideal_cut`` says
(README's knob table: global = every judgment, local = the retrieved list re-sorted, recall@K =
the top K retrieved re-sorted, max = max_grade in every slot, as_supplied = the judgments in
docno order, unsorted, zero grades keeping their slot). It is checked itself against pytrec_eval
(trec_eval's ``ndcg`` and ``ndcg_cut``) on the same random queries, so the reference is anchored
to a real tool where one exists. Small random queries (hypothesis, bounded examples): distinct
scores, grades -1 (pooled, unjudged) to 3 or absent, judged documents never retrieved.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

import rankflavor
from rankflavor.errors import FlavorError
from rankflavor.metrics.measure import parse_measure

Query = tuple[dict[str, int], list[tuple[str, float]]]

#: No shrinking: every assertion prints the whole failing case, and a failing example is found
#: fast (mutation runs: bench/mutation.py) instead of minimised for minutes.
NO_SHRINK = (Phase.explicit, Phase.reuse, Phase.generate)


@st.composite
def queries(draw: st.DrawFn) -> Query:
    n = draw(st.integers(1, 8))
    scores = draw(st.lists(st.integers(-4, 8), min_size=n, max_size=n, unique=True))
    grades = draw(st.lists(st.one_of(st.none(), st.integers(-1, 3)), min_size=n, max_size=n))
    extra = draw(st.lists(st.integers(-1, 3), max_size=3))
    qrels = {f"d{i}": g for i, g in enumerate(grades) if g is not None}
    qrels.update({f"x{i}": g for i, g in enumerate(extra)})
    qrels = qrels or {"x9": 0}  # a query the qrels name (one they do not is run_only's business)
    ranked = sorted(((f"d{i}", s * 0.5) for i, s in enumerate(scores)), key=lambda t: -t[1])
    return qrels, ranked


#: (gain knob text, formula of a usable grade g, rel threshold it reads)
GAINS = {
    "linear": lambda g, rel: float(g),
    "exp2": lambda g, rel: 2.0**g - 1.0,
    "binary": lambda g, rel: 1.0 if g >= rel else 0.0,
    "{2:5}": lambda g, rel: 5.0 if g == 2 else float(g),
    "{1:0.5,3:10}": lambda g, rel: {1: 0.5, 3: 10.0}.get(g, float(g)),
}

DISCOUNTS = {
    "log2": lambda i: math.log2(i + 1),
    "reciprocal": lambda i: float(i),
    "jk(2)": lambda i: 1.0 if i < 2 else math.log(i) / math.log(2),
    "jk(3)": lambda i: 1.0 if i < 3 else math.log(i) / math.log(3),
    "log(10)": lambda i: math.log(i + 1) / math.log(10),
}


def reference(q: Query, metric: str, k: int | None, knobs: dict[str, str]) -> float:
    """``metric`` (ndcg or dcg) of the query from the definitions; NaN when the ideal is 0."""
    qrels, ranked = q
    gain_name = knobs.get("gain", "linear")
    disc = DISCOUNTS[knobs.get("discount", "log2")]
    rel = int(knobs.get("rel", "1"))
    floor = float(knobs["min_grade"]) if "min_grade" in knobs else None
    assumed = int(knobs["unjudged_grade"]) if "unjudged_grade" in knobs else None
    depth = int(knobs["depth"]) if "depth" in knobs else None

    def gain(g: float) -> float:
        if floor is not None and g < floor:
            return 0.0
        return GAINS[gain_name](g, rel)

    rows = ranked if depth is None else ranked[:depth]

    def row_gain(d: str) -> float:
        if d not in qrels:
            return 0.0 if assumed is None else gain(assumed)
        return gain(qrels[d]) if qrels[d] >= 0 else 0.0  # -1: pooled, unjudged

    def dcg_of(values: list[float]) -> float:
        return sum(v / disc(i) for i, v in enumerate(values, start=1))

    dcg = dcg_of([row_gain(d) for d, _ in (rows if k is None else rows[:k])])
    if metric == "dcg":
        return dcg
    idcg = dcg_of(ideal_values(qrels, rows, k, knobs, gain, lambda: gain(int(knobs["max_grade"]))))
    return math.nan if idcg <= 0 else dcg / idcg


def ideal_values(qrels: dict[str, float], rows: list[tuple[str, float]], k: int | None, knobs: dict[str, str],
                 value: Callable[[float], float], top: Callable[[], float]) -> list[float]:
    """The ideal list under the ``ideal`` and ``ideal_cut`` knobs, written from their definitions:
    ``value`` of each grade (NDCG's gain, ERR's stopping probability), positive ones only,
    greatest first, from every judgment (global), the judged rows retrieved (local) or the top K
    of them (recall@K), or the judgments in docno order (as_supplied), or ``top()`` in every slot
    (max); cut at k (ideal_cut=k), at the rows retrieved (hits) or not at all (none)."""
    ideal = knobs.get("ideal", "global")
    how = knobs.get("ideal_cut", "k")
    cut = math.inf if how == "none" or k is None else k
    if how == "hits":
        cut = min(cut, len(rows))
    judged_rows = [qrels.get(d, -1) for d, _ in rows]
    if ideal == "max":
        slots = len(rows) if math.isinf(cut) else int(cut)
        return [top()] * slots
    if ideal == "as_supplied":
        values = [value(qrels[d]) for d in sorted(qrels) if qrels[d] >= 0]
    else:
        if ideal == "global":
            pool = [g for g in qrels.values() if g >= 0]
        elif ideal == "local":
            pool = [g for g in judged_rows if g >= 0]
        else:  # recall@K
            pool = [g for g in judged_rows[: int(ideal.split("@")[1])] if g >= 0]
        values = sorted((v for v in map(value, pool) if v > 0), reverse=True)
    return values if math.isinf(cut) else values[: int(cut)]


def text(metric: str, k: int | None, knobs: dict[str, str]) -> str:
    inside = ",".join(f"{a}={b}" for a, b in knobs.items())
    return f"{metric}{'' if k is None else f'@{k}'}" + (f"[{inside}]" if inside else "")


def ours(q: Query, measures: list[str]) -> list[float]:
    qrels, ranked = q
    run = {d: s for d, s in ranked}
    one = {str(parse_measure(m)): m for m in measures}  # a measure named twice is computed once
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning is an output too: none is expected
        out = rankflavor.evaluate({"q": qrels, "z": {"a": 1}}, {"q": run, "z": {"a": 1.0}}, list(one.values()),
                                  empty="nan")
    by_name = dict(zip(one, out, strict=True))
    return [by_name[str(parse_measure(m))].per_query()["q"] for m in measures]


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-9 * max(1.0, abs(b))


def agrees(q: Query, cases: list[tuple[str, int | None, dict[str, str]]],
           reference: Callable[[str, int | None, dict[str, str]], float]) -> None:
    """Each drawn measure, evaluated together on ``q``, equals ``reference(metric, k, knobs)``."""
    measures = [text(m, k, kn) for m, k, kn in cases]
    for (m, k, kn), g, name in zip(cases, ours(q, measures), measures, strict=True):
        want = reference(m, k, kn)
        assert same(g, want), (name, q, g, want)


@st.composite
def flavors(draw: st.DrawFn) -> tuple[str, int | None, dict[str, str]]:
    metric = draw(st.sampled_from(["ndcg", "ndcg", "ndcg", "dcg"]))
    k = draw(st.one_of(st.none(), st.integers(1, 7)))
    knobs: dict[str, str] = {}
    for name, choices in (
        ("gain", list(GAINS)), ("discount", list(DISCOUNTS)), ("rel", ["1", "2"]), ("min_grade", ["1", "2"]),
        ("unjudged_grade", ["1", "2", "0"]), ("depth", ["1", "3", "5"]),
    ):
        if draw(st.booleans()):
            knobs[name] = draw(st.sampled_from(choices))
    if knobs.get("gain") != "binary":
        knobs.pop("rel", None)  # rel sets only binary gain's threshold
    if metric == "ndcg":
        ideal = draw(st.sampled_from(["global", "local", "recall@1", "recall@3", "recall@6", "max", "as_supplied"]))
        knobs["ideal"] = ideal
        knobs["ideal_cut"] = draw(st.sampled_from(["k", "hits", "none"]))
        if ideal == "max" or draw(st.booleans()):
            knobs["max_grade"] = draw(st.sampled_from(["3", "4"]))
    return metric, k, knobs


@settings(max_examples=80, deadline=None, phases=NO_SHRINK)
@given(queries(), st.lists(flavors(), min_size=4, max_size=4))
def test_ndcg_and_dcg_equal_the_definition(q: Query, cases: list[tuple[str, int | None, dict[str, str]]]) -> None:
    agrees(q, cases, lambda m, k, kn: reference(q, m, k, kn))


@settings(max_examples=60, deadline=None, phases=NO_SHRINK)
@given(queries())
def test_the_reference_is_trec_eval(q: Query) -> None:
    """The reference's default flavor is trec_eval's ndcg / ndcg_cut (pytrec_eval 0.5)."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, ranked = q
    if not any(g > 0 for g in qrels.values()):
        return  # trec_eval scores such a query 0; the reference says NaN (nothing to find)
    ev = pytrec_eval.RelevanceEvaluator({"q": qrels}, {"ndcg", "ndcg_cut.1,3,5"})
    res = ev.evaluate({"q": {d: s for d, s in ranked}})["q"]
    assert reference(q, "ndcg", None, {"ideal_cut": "none"}) == pytest.approx(res["ndcg"], abs=1e-12)
    for k in (1, 3, 5):
        assert reference(q, "ndcg", k, {}) == pytest.approx(res[f"ndcg_cut_{k}"], abs=1e-12)


# A fixed case written out by hand (rank: doc grade): 1: a 2, 2: u (unjudged), 3: b 0, 4: c 3;
# judged, never retrieved: e 1, f -1 (pooled, unjudged), g 2.
FIXED = ({"a": 2, "b": 0, "c": 3, "e": 1, "f": -1, "g": 2}, [("a", 4.0), ("u", 3.0), ("b", 2.0), ("c", 1.0)])
L3 = math.log2(3)


@pytest.mark.parametrize(("measure", "want"), [
    # ideal=max, max_grade=3: three slots of 3 (the survivor moved this one)
    ("ndcg@3[ideal=max,max_grade=3]", 2.0 / (3 + 3 / L3 + 3 / 2)),
    ("ndcg@4[ideal=max,max_grade=3]", (2.0 + 3 / math.log2(5)) / (3 + 3 / L3 + 3 / 2 + 3 / math.log2(5))),
    ("ndcg@6[ideal=max,max_grade=3,ideal_cut=hits]", (2.0 + 3 / math.log2(5)) / (3 + 3 / L3 + 3 / 2 + 3 / math.log2(5))),
    ("ndcg@2[ideal=max,max_grade=3,ideal_cut=none]", 2.0 / (3 + 3 / L3 + 3 / 2 + 3 / math.log2(5))),
    ("ndcg[ideal=max,max_grade=4,gain=exp2]", (3.0 + 7 / math.log2(5)) / sum(15 / math.log2(i + 1) for i in range(1, 5))),
    # global: 3 2 2 1 (f is not judged); trec_eval ndcg_cut
    ("ndcg@2", 2.0 / (3 + 2 / L3)),
    ("ndcg", (2.0 + 3 / math.log2(5)) / (3 + 2 / L3 + 2 / 2 + 1 / math.log2(5))),
    ("ndcg@2[ideal_cut=none]", 2.0 / (3 + 2 / L3 + 2 / 2 + 1 / math.log2(5))),
    # local: the retrieved grades re-sorted, 3 2
    ("ndcg@4[ideal=local]", (2.0 + 3 / math.log2(5)) / (3 + 2 / L3)),
    ("ndcg@4[ideal=recall@2]", (2.0 + 3 / math.log2(5)) / 2.0),
    # as_supplied: docno order a b c e g -> 2 0 3 1 2, the zero keeping its slot
    ("ndcg@3[ideal=as_supplied]", 2.0 / (2 + 0 / L3 + 3 / 2)),
    ("dcg@4[unjudged_grade=1]", 2.0 + 1 / L3 + 3 / math.log2(5)),
    ("dcg@4[gain=exp2,discount=reciprocal]", 3.0 + 7 / 4),
    ("ndcg@4[discount=jk(3)]", (2.0 + 3 / (math.log(4) / math.log(3))) / (3 + 2 + 2 + 1 / (math.log(4) / math.log(3)))),
])
def test_a_case_by_hand(measure: str, want: float) -> None:
    assert ours(FIXED, [measure])[0] == pytest.approx(want, abs=1e-12)


def test_ideal_max_without_max_grade_is_refused() -> None:
    with pytest.raises(FlavorError) as err:
        ours(FIXED, ["ndcg@3[ideal=max]"])
    assert str(err.value) == "ideal=max needs the top grade of the label scale: set max_grade=G"


def test_the_slot_limits_of_ideal_max_are_named() -> None:
    from rankflavor.metrics import ndcg

    listed = ndcg.MAX_LISTED_SLOTS + 1
    with pytest.raises(FlavorError) as err:
        rankflavor.explain({"q": FIXED[0]}, {"q": dict(FIXED[1])}, "q", f"ndcg@{listed}[ideal=max,max_grade=3]")
    msg = str(err.value)
    assert f"its {listed:,} slots (ideal_cut=k at k={listed:,}), more than the {ndcg.MAX_LISTED_SLOTS:,} slots its listed" in msg
    big = ndcg.MAX_SUMMED_SLOTS + 1
    with pytest.raises(FlavorError) as err:
        ours(FIXED, [f"ndcg@{big}[ideal=max,max_grade=3]"])
    msg = str(err.value)
    assert f"ndcg@{big}: ideal=max puts the top grade in every one of its {big:,} slots " in msg
    assert f"(ideal_cut=k at k={big:,}), more than the {ndcg.MAX_SUMMED_SLOTS:,} slots its ideal DCG" in msg
    assert f"use a cutoff of at most {ndcg.MAX_SUMMED_SLOTS:,}, or ideal_cut=hits" in msg


@st.composite
def tied_queries(draw: st.DrawFn) -> Query:
    """As :func:`queries`, with scores from a few values, so that tie groups form."""
    n = draw(st.integers(1, 8))
    scores = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    grades = draw(st.lists(st.one_of(st.none(), st.integers(-1, 3)), min_size=n, max_size=n))
    qrels = {f"d{i}": g for i, g in enumerate(grades) if g is not None} or {"x9": 0}
    qrels.update({f"x{i}": g for i, g in enumerate(draw(st.lists(st.integers(0, 3), max_size=2)))})
    return qrels, sorted(((f"d{i}", float(s)) for i, s in enumerate(scores)), key=lambda t: -t[1])


def averaged_dcg(q: Query, k: int | None, assumed: int | None, gain: str) -> float:
    """DCG@k with each row's gain the mean gain of its tie group (McSherry & Najork, ECIR 2008;
    scikit-learn's ``ignore_ties=False``), a group reaching past k counted at its ranks <= k."""
    qrels, ranked = q

    def g(d: str) -> float:
        grade = qrels.get(d, assumed if d not in qrels else -1)
        return 0.0 if grade is None or grade < 0 else GAINS[gain](grade, 1)

    total = 0.0
    for i, (_, s) in enumerate(ranked if k is None else ranked[:k], start=1):
        group = [g(e) for e, t in ranked if t == s]
        total += sum(group) / len(group) / math.log2(i + 1)
    return total


@settings(max_examples=80, deadline=None, phases=NO_SHRINK)
@given(tied_queries(), st.one_of(st.none(), st.integers(1, 6)), st.sampled_from([None, 1, 3]),
       st.sampled_from(["linear", "exp2"]), st.sampled_from(["global", "local", "max"]))
def test_averaged_ties_are_the_tie_groups_mean_gain(q: Query, k: int | None, assumed: int | None, gain: str,
                                                     ideal: str) -> None:
    extra = "" if assumed is None else f",unjudged_grade={assumed}"
    dcg = averaged_dcg(q, k, assumed, gain)
    at = "" if k is None else f"@{k}"
    got_dcg, got_ndcg = ours(q, [f"dcg{at}[ties=averaged,gain={gain}{extra}]",
                                 f"ndcg{at}[ties=averaged,gain={gain},ideal={ideal},max_grade=3{extra}]"])
    assert got_dcg == pytest.approx(dcg, abs=1e-9)
    plain = {"ideal": ideal, "max_grade": "3", "gain": gain}
    distinct = (q[0], [(d, -float(i)) for i, (d, _) in enumerate(q[1])])  # ideals read no order
    idcg = reference(distinct, "dcg", k, {"gain": gain}) / reference(distinct, "ndcg", k, plain) \
        if not math.isnan(reference(distinct, "ndcg", k, plain)) and reference(distinct, "dcg", k, {"gain": gain}) else None
    if idcg is not None:
        assert got_ndcg == pytest.approx(dcg / idcg, abs=1e-9)


@pytest.mark.parametrize("measure", [
    "ndcg@2[ideal=recall@4]", "ndcg@2[ideal=local]", "ndcg@2", "dcg@2", "ndcg@2[ideal=recall@4,ties=averaged]",
    "ndcg@3[ties=averaged]", "dcg@3[ties=averaged]", "ndcg@2[ideal=max,max_grade=3]", "ndcg@2[ideal_cut=hits]",
])
def test_training_time_scores_read_every_row_the_measure_reads(measure: str) -> None:
    """The Rescorer (training-time metrics) keeps only the rows down to the deepest rank a measure
    reads; each value equals the definition on the whole list."""
    from rankflavor.training.rescore import Rescorer

    # one group of 6: scores rank them 0..5; grades 0 1 0 3 0 2 (the best below rank 2); a tie of
    # the rows at ranks 2 to 4 (scores 0.5) under the last two measures' averaged ties
    labels = [0, 1, 0, 3, 0, 2]
    scores = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4]
    tied = [0.9, 0.5, 0.5, 0.5, 0.3, 0.2]
    use = tied if "averaged" in measure else scores
    got = Rescorer(labels, group=[6], metrics=[measure]).means(use)[0]
    docs = [f"d{i}" for i in range(6)]
    want = rankflavor.evaluate({"q": dict(zip(docs, labels, strict=True))}, {"q": dict(zip(docs, use, strict=True))},
                               measure)[0].mean
    assert got == pytest.approx(want, abs=1e-12)
    if "averaged" not in measure:
        q = ({d: g for d, g in zip(docs, labels, strict=True)}, [(d, s) for d, s in zip(docs, scores, strict=True)])
        m, _, rest = measure.partition("@")
        k = int(rest.split("[")[0])
        knobs = dict(kv.split("=") for kv in rest.partition("[")[2].rstrip("]").split(",") if kv)
        assert got == pytest.approx(reference(q, m, k, knobs), abs=1e-12)


def test_training_time_scores_without_a_cutoff() -> None:
    from rankflavor.training.rescore import Rescorer

    labels, scores = [0, 1, 0, 3, 0, 2], [0.9, 0.8, 0.7, 0.6, 0.5, 0.4]
    q = ({f"d{i}": g for i, g in enumerate(labels)}, [(f"d{i}", s) for i, s in enumerate(scores)])
    got = Rescorer(labels, group=[6], metrics=["ndcg", "dcg"]).means(scores)
    assert got == pytest.approx([reference(q, "ndcg", None, {"ideal_cut": "none"}), reference(q, "dcg", None, {})],
                                abs=1e-12)


def test_recall_ideal_under_averaged_ties_takes_its_candidates_in_one_order() -> None:
    """ndcg@k[ties=averaged,ideal=recall@K] with a tie group straddling K: DCG@k averages the
    group's gains, and the recall ideal's K candidates are the ranking's first K rows with ties in
    the fallback order docno_desc (the ties knob: metrics that do not average gains order ties
    docno_desc), never the file's order, so shuffling the run's lines changes nothing.

    Run: x 5.0 (unjudged), then a, b, c, d, f tied at 1.0 (grades 3, 0, 0, 1, 1), then e 0.5.
    DCG@2 = 0 + mean(3, 0, 0, 1, 1) / log2(3) = 1 / log2(3).
    recall@4 candidates: x, then f, d, c (docno descending) -> grades 0, 1, 1, 0; best two 1, 1:
    IDCG@2 = 1 + 1 / log2(3).
    """
    import itertools

    qrels = {"q": {"a": 3, "b": 0, "c": 0, "d": 1, "e": 2, "f": 1}}
    rows = [("x", 5.0), ("a", 1.0), ("b", 1.0), ("c", 1.0), ("d", 1.0), ("f", 1.0), ("e", 0.5)]
    l3 = math.log2(3)
    expected = (1 / l3) / (1 + 1 / l3)
    for order in itertools.islice(itertools.permutations(rows), 0, None, 211):  # 24 of the 5,040 orders
        run = {"q": dict(order)}
        got = rankflavor.evaluate(qrels, run, ["ndcg@2[ties=averaged,ideal=recall@4]"])[0].mean
        assert got == pytest.approx(expected, abs=1e-12), order
