"""Every trec_eval 9.0.8 ``all_trec`` measure, checked against trec_eval itself and pytrec_eval.

* Whole outputs: ``rankflavor eval --preset trec_eval --format trec`` equals trec_eval 9.0.8's stdout
  line for line (no filtering) on trec_eval's own test suite and on the peer tools' fixtures in
  ../shared/data; on the 12 real-run references no line is left out of the parity filter of
  tests/presets/test_trec_parity.py (which compares them).
* Per query: the measures new in this module agree with pytrec_eval (trec_eval's C code) to 1e-9
  on several hundred random queries with ties, negative grades, unjudged and unpooled documents,
  queries without relevant documents, ``-l 2`` and ``-J``.
* Reference models: the exact segment helpers, against plain Python loops.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import rankflavor
from rankflavor.base.kernels import segment_cumsum, segment_starts, segment_suffix_max
from rankflavor.cli.main import cli
from rankflavor.errors import FlavorError
from rankflavor.metrics.measure import parse_measure
from rankflavor.presets.trec_eval import ALL_TREC, FAMILIES, FAMILY_ORDER, combine

from ..conftest import shared_path
from .test_trec_parity import IMPLEMENTED, TREC_SUITE, _real_cases


def _cli(args: list[str]) -> list[str]:
    result = CliRunner().invoke(cli, ["eval", "--preset", "trec_eval", "--format", "trec", *args])
    assert result.exit_code == 0, result.output
    return result.output.splitlines()


def _unmatched(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if not IMPLEMENTED.match(line.split("\t")[0].strip())]


# ---------------------------------------------------------------------------------------------
# Against trec_eval 9.0.8's own outputs, unfiltered.


def test_all_trec_covers_every_family_in_trec_eval_order() -> None:
    assert ALL_TREC == FAMILY_ORDER  # nothing of all_trec is left unimplemented
    assert len(FAMILIES) + 2 == len(FAMILY_ORDER)


@pytest.mark.parametrize("name", _real_cases())
def test_real_run_references_have_no_unimplemented_line(name: str) -> None:
    expected = shared_path("expected", name)
    assert _unmatched(expected) == []


@pytest.mark.parametrize("name", sorted(TREC_SUITE))
def test_trec_eval_suite_unfiltered(name: str) -> None:
    expected = shared_path("trec_eval_tests", "v9.0.8", name)
    folder = expected.parent.parent
    assert _unmatched(expected) == []
    args = [str(folder / a) if (folder / a).exists() else a for a in TREC_SUITE[name]]
    assert _cli(args) == expected.read_text().splitlines()


PEERS = {
    "ir_measures/compat.all_trec.q.txt": ["-q", "ir_measures/compat.qrels", "ir_measures/compat.run"],
    "ir_measures/cwl.all_trec.q.txt": ["-q", "ir_measures/cwl.qrels", "ir_measures/cwl.run"],
    "ranx/run.all_trec.q.txt": ["-q", "ranx/qrels.trec", "ranx/run.trec"],
    **{f"trectools/r{i}.all_trec.q.txt": ["-q", "trectools/qrel1.txt", f"trectools/r{i}.run"] for i in (1, 2, 3, 4)},
    **{f"trectools/r{i}.all_trec.q.c.txt": ["-q", "-c", "trectools/qrel1.txt", f"trectools/r{i}.run"] for i in (1, 2, 3, 4)},
}


@pytest.mark.parametrize("name", sorted(PEERS))
def test_peer_fixtures_unfiltered(name: str) -> None:
    """Grades up to 50 (relstring '>', G and ndcg_rel gain levels), missing topics under -c
    (gm_map's patch-up), unjudged topics, odd whitespace."""
    expected = shared_path("peer_inputs", name)
    folder = expected.parent.parent
    args = [str(folder / a) if (folder / a).exists() else a for a in PEERS[name]]
    assert _cli(["-m", "all_trec", *args]) == expected.read_text().splitlines()


def test_default_measures_are_trec_eval_official_set() -> None:
    expected = shared_path("trec_eval_tests", "v9.0.8", "out.test")
    folder = expected.parent.parent
    got = _cli([str(folder / "qrels.test"), str(folder / "results.test")])
    assert got == expected.read_text().splitlines()
    assert any(line.startswith("gm_map") for line in got) and any(line.startswith("iprec_at_recall_0.50") for line in got)


# ---------------------------------------------------------------------------------------------
# Against pytrec_eval on random queries.

pytrec_eval = pytest.importorskip("pytrec_eval")

NOT_COMPARED = {"runid", "num_q", "relstring"}  # pytrec_eval returns relstring as 0.0
# pytrec_eval's wrapper turns parameters into a set (order lost) and accepts only unsigned numbers,
# so parameters here are ascending and non-negative; the order-dependent 11pt_avg walk and
# utility's signed coefficients are checked against trec_eval's own outputs and a loop model.
PARAMETRISED = [
    "iprec_at_recall.0.05,0.33,0.5,1", "11pt_avg.0.2,0.35,0.5,0.8", "Rprec_mult.0.25,0.5,3.0",
    "set_F.0.25", "relative_P.1,3,7", "P.3", "recall.3",
]


def _random_case(seed: int, n_queries: int = 300) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Queries of 0-40 documents; grades -1..4 (and 12); ties; unjudged and unpooled documents;
    queries only in the qrels (skipped by both) and only in the run (ignored)."""
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for i in range(n_queries):
        q = f"q{i:03d}"
        pool = [f"d{j:02d}" for j in range(int(rng.integers(1, 45)))]
        kind = rng.random()
        judged = [d for d in pool if rng.random() < 0.6]
        if kind < 0.08:
            judged = []  # only in the run
        grades = rng.choice([-1, 0, 0, 0, 1, 1, 2, 3, 4, 12], size=len(judged))
        if rng.random() < 0.1:
            grades = np.minimum(grades, 0)  # nothing relevant
        if judged:
            qrels[q] = {d: int(g) for d, g in zip(judged, grades, strict=True)}
        if kind > 0.95 and judged:
            continue  # only in the qrels
        retrieved = [d for d in pool if rng.random() < 0.7] or pool[:1]
        coarse = rng.random() < 0.5  # few distinct scores: many ties, broken by docno
        run[q] = {d: float(rng.integers(0, 6)) / 2 if coarse else float(rng.random()) for d in retrieved}
    return qrels, run


def _ours(qrels, run, names: list[str], **knobs) -> dict[str, dict[str, float]]:  # type: ignore[no-untyped-def]
    res = rankflavor.evaluate(qrels, run, names, preset="trec_eval", **knobs)
    out: dict[str, dict[str, float]] = {}
    for m in res:
        label = m.measure.label
        assert label is not None
        for q, v in m.per_query().items():
            out.setdefault(q, {})[label] = v  # type: ignore[assignment]
    return out


def _compare(theirs: dict[str, dict[str, float]], ours: dict[str, dict[str, float]]) -> int:
    compared = 0
    assert set(ours) == set(theirs)
    for q, values in theirs.items():
        for key, want in values.items():
            if key in NOT_COMPARED:
                continue
            if key not in ours[q]:  # pytrec_eval names 11pt_avg.x and set_F.x without their parameters
                (key,) = [k for k in ours[q] if k.startswith(key + "_")]
            got = ours[q][key]
            if key.startswith("gm_"):  # pytrec_eval reports log(max(v, 1e-5)) per query
                got = math.log(max(got, 1e-5))
            if math.isnan(want):
                assert math.isnan(got), (q, key, got)
            else:
                assert abs(got - want) <= 1e-9, (q, key, got, want)
            compared += 1
    return compared


@pytest.mark.parametrize(("seed", "level", "judged_only"), [(1, 1, False), (2, 2, False), (3, 1, True), (4, 2, True)])
def test_every_measure_matches_pytrec_eval(seed: int, level: int, judged_only: bool) -> None:
    qrels, run = _random_case(seed)
    knobs = {"rel": level, **({"unjudged": "condensed"} if judged_only else {})}
    measures = sorted(pytrec_eval.supported_measures)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=level,
                                            judged_docs_only_flag=judged_only).evaluate(run)
    compared = _compare(theirs, _ours(qrels, run, ["all_trec"], **knobs))
    assert len(theirs) > 240 and compared >= len(theirs) * 88  # every query, every measure but relstring


@pytest.mark.parametrize("seed", [5, 6])
def test_parametrised_measures_match_pytrec_eval(seed: int) -> None:
    """Recall levels, multiples of R, set_F's x and relative_P cutoffs given as parameters."""
    qrels, run = _random_case(seed)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, PARAMETRISED).evaluate(run)
    assert "11pt_avg" in next(iter(theirs.values()))
    assert _compare(theirs, _ours(qrels, run, PARAMETRISED)) == len(theirs) * 14


def _eleven_point_model(relevant: list[bool], R: int, levels: list[float]) -> float:
    """trec_eval 9.0.8 11pt_avg for one topic, as a plain loop: walk the levels from the last one
    while stepping up the ranking from the bottom; a level is taken when the count of relevant
    documents still above equals its cutoff; levels never reached take the value left at the end."""
    found = sum(relevant)
    cuts = [int(level * R + 0.9) for level in levels]
    c = len(levels) - 1
    while c >= 0 and cuts[c] > found:
        c -= 1
    best = found / len(relevant)
    total, left = 0.0, found
    for rank in range(len(relevant), 0, -1):
        if left == 0:
            break
        best = max(best, left / rank)
        if relevant[rank - 1]:
            while c >= 0 and cuts[c] == left:
                total, c = total + best, c - 1
            left -= 1
    while c >= 0:
        total, c = total + best, c - 1
    return total / len(levels)


def test_eleven_point_average_walks_levels_in_the_order_given() -> None:
    rng = np.random.default_rng(21)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    truth: dict[str, tuple[list[bool], int]] = {}
    for i in range(300):
        n = int(rng.integers(1, 30))
        relevant = [bool(x) for x in rng.random(n) < rng.random()]
        missed = int(rng.integers(0, 6))
        q = f"q{i:03d}"
        run[q] = {f"d{j:02d}": float(n - j) for j in range(n)}
        qrels[q] = {f"d{j:02d}": int(r) for j, r in enumerate(relevant)} | {f"m{j}": 1 for j in range(missed)}
        truth[q] = (relevant, sum(relevant) + missed)
    for levels in ([0.5, 0.2, 0.8, 0.35], [1.0, 0.0, 0.5], [0.3, 0.3, 0.1], [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]):
        name = "11pt_avg." + ",".join(map(str, levels))
        got = rankflavor.evaluate(qrels, run, [name], preset="trec_eval")[0].per_query()
        for q, (relevant, R) in truth.items():
            assert got[q] == pytest.approx(_eleven_point_model(relevant, R, levels), abs=1e-12), (q, levels)


# ---------------------------------------------------------------------------------------------
# Summaries, dialect and rendering.


def test_geometric_mean_floor_and_missing_topics(write) -> None:  # type: ignore[no-untyped-def]
    qrels = write("q", "1 0 a 1\n1 0 b 0\n2 0 c 1\n3 0 d 1\n")
    run = write("r", "1 Q0 a 1 2.0 t\n1 Q0 b 2 1.0 t\n2 Q0 x 1 1.0 t\n")
    res = rankflavor.evaluate(str(qrels), str(run), ["gm_map"], preset="trec_eval")
    # topic 1: AP 1; topic 2: AP 0 floored at 1e-5; topic 3 is missing from the run and skipped
    assert res[0].summary == pytest.approx(math.sqrt(1e-5), rel=1e-12)
    complete = rankflavor.evaluate(str(qrels), str(run), ["gm_map"], preset="trec_eval", missing="zero")
    assert complete[0].summary == pytest.approx((1e-5 * 1e-5) ** (1 / 3), rel=1e-12)
    assert complete[0].n_queries == 3


def test_an_undefined_query_value_makes_the_mean_undefined_as_in_trec_eval(write) -> None:  # type: ignore[no-untyped-def]
    """Query b retrieves only unjudged documents, so -J leaves it nothing: its interpolated
    precision at recall 0 is 0/0. trec_eval sums it into the mean; a mean that skipped it (0.5
    here) would be a number no tool prints. Expected: trec_eval 9.0.8's stdout for these files."""
    qrels = write("q", "a 0 d1 1\na 0 d2 0\na 0 d3 2\nb 0 d1 1\nb 0 d4 0\n")
    run = write("r", "a Q0 d1 1 3.0 t\na Q0 d9 2 2.0 t\na Q0 d3 3 1.0 t\nb Q0 d7 1 2.0 t\nb Q0 d8 2 1.0 t\n")
    out = _cli(["-q", "-J", "-m", "iprec_at_recall.0.0,0.5", "-m", "11pt_avg", "-m", "map", "-m", "gm_map",
                str(qrels), str(run)])
    assert out == [
        "map                   \ta\t1.0000",
        "iprec_at_recall_0.00  \ta\t1.0000",
        "iprec_at_recall_0.50  \ta\t1.0000",
        "11pt_avg              \ta\t1.0000",
        "map                   \tb\t0.0000",
        "iprec_at_recall_0.00  \tb\t  -nan",
        "iprec_at_recall_0.50  \tb\t0.0000",
        "11pt_avg              \tb\t  -nan",
        "map                   \tall\t0.5000",
        "gm_map                \tall\t0.0032",
        "iprec_at_recall_0.00  \tall\t  -nan",
        "iprec_at_recall_0.50  \tall\t0.5000",
        "11pt_avg              \tall\t  -nan",
    ]


def test_summaries_leave_out_a_policy_nan_but_not_a_computed_one() -> None:
    from rankflavor.engine.aggregate import summarize
    from rankflavor.engine.results import EMPTY, OK

    values = np.array([np.nan, 0.25, 0.75])
    mean = parse_measure("ndcg@10")
    # empty=nan wrote the NaN: the query is shown but not averaged
    assert summarize(mean, values, np.array([EMPTY, OK, OK], dtype=object), np.zeros(0)) == (0.5, 2)
    # the measure computed it: the mean is undefined, over all three rows
    summary, n = summarize(mean, values, np.array([OK, OK, OK], dtype=object), np.zeros(0))
    assert math.isnan(summary) and n == 3
    geometric = parse_measure("GMAP")
    # trec_eval's MAX(NaN, floor) is the floor, so a computed NaN counts as the floor
    summary, n = summarize(geometric, values, np.array([OK, OK, OK], dtype=object), np.zeros(0))
    assert summary == pytest.approx((1e-5 * 0.25 * 0.75) ** (1 / 3), rel=1e-12) and n == 3
    summary, n = summarize(geometric, values, np.array([EMPTY, OK, OK], dtype=object), np.zeros(0))
    assert summary == pytest.approx((0.25 * 0.75) ** 0.5, rel=1e-12) and n == 2


def test_relstring_renders_per_query_only(write) -> None:  # type: ignore[no-untyped-def]
    qrels = write("q", "1 0 a 2\n1 0 b 0\n1 0 c -1\n1 0 e 15\n")
    run = write("r", "1 Q0 a 1 5 t\n1 Q0 b 2 4 t\n1 Q0 c 3 3 t\n1 Q0 d 4 2 t\n1 Q0 e 5 1 t\n")
    out = _cli(["-q", "-m", "relstring", "-m", "relstring.3", str(qrels), str(run)])
    assert out == ["relstring_3           \t1\t'20.'"]  # a parametrised family replaces the plain one
    out = _cli(["-q", "-m", "relstring", "-m", "gm_map", str(qrels), str(run)])
    assert out == ["relstring             \t1\t'20.->'", "gm_map                \tall\t0.7000"]
    for fmt in ("table", "csv", "json"):
        result = CliRunner().invoke(cli, ["eval", "--preset", "trec_eval", "-q", "--format", fmt, "-m", "relstring",
                                          str(qrels), str(run)])
        assert result.exit_code == 0, result.output
        assert "20.->" in result.output
    res = rankflavor.evaluate(str(qrels), str(run), ["relstring@2"])
    assert res[0].per_query() == {"1": "20"} and math.isnan(res[0].summary)
    assert res.to_frame()["value"].iloc[0] == "20"


def test_combine_follows_trec_eval_arguments() -> None:
    assert combine(["all_trec", "relstring.20"]).count("relstring") == 0
    assert "relstring.20" in combine(["all_trec", "relstring.20"])
    assert combine(["P", "P.5"]) == ["P.5"]
    assert combine(["P.5", "P.10", "ndcg@10"]) == ["P.5", "P.10", "ndcg@10"]  # rankflavor keeps both


def test_trec_names_and_canonical_strings_round_trip() -> None:
    res = rankflavor.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}},
                              ["iprec_at_recall..1", "utility.2,-1,0,0", "11pt_avg..5,.2", "set_F.0.5"],
                              preset="trec_eval")
    labels = [m.measure.label for m in res]
    assert labels == ["iprec_at_recall_0.10", "utility_2,-1,0,0", "11pt_avg_.5,.2", "set_F_0.5"]
    for m in res:
        assert parse_measure(str(m.measure)) == m.measure
    assert "param=(0.5,0.2)" in str(res[2].measure)  # order kept: it can change 11pt_avg


def test_parameter_errors_are_typed() -> None:
    with pytest.raises(FlavorError, match="needs its parameter"):
        rankflavor.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["IPrec"])
    with pytest.raises(FlavorError, match="4 coefficients"):
        rankflavor.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["utility.1,2,3"], preset="trec_eval")
    with pytest.raises(FlavorError, match="duplicate"):
        rankflavor.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["Rprec_mult.0.5,.5"], preset="trec_eval")
    with pytest.raises(FlavorError, match="param"):
        parse_measure("IPrec[param=abc]")


# ---------------------------------------------------------------------------------------------
# Segment helpers against plain loops (rows grouped by query, groups in any code order).


def _groups(seed: int, long_one: int = 0) -> tuple[np.ndarray, np.ndarray, list[int]]:
    rng = np.random.default_rng(seed)
    lengths = [int(x) for x in rng.integers(1, 60, 200)] + ([long_one] if long_one else [])
    codes = rng.permutation(len(lengths) + 5)[: len(lengths)]  # some codes have no rows
    q = np.repeat(codes, lengths)
    return q, rng.random(len(q)) * 7, lengths


@pytest.mark.parametrize("long_one", [0, 5000])
def test_segment_cumsum_adds_in_row_order_exactly(long_one: int) -> None:
    q, v, lengths = _groups(11, long_one)
    want: list[float] = []
    i = 0
    for n in lengths:
        acc = 0.0
        for x in v[i : i + n]:
            acc += x
            want.append(acc)
        i += n
    assert segment_cumsum(q, v).tolist() == want  # bit for bit, as trec_eval's per-topic +=


def test_segment_suffix_max_and_starts() -> None:
    q, v, lengths = _groups(12)
    v = np.round(v, 1)  # repeated values
    want: list[float] = []
    i = 0
    for n in lengths:
        part = v[i : i + n]
        want.extend(max(part[j:]) for j in range(n))
        i += n
    assert segment_suffix_max(q, v).tolist() == want
    starts = segment_starts(q, int(q.max()) + 1)
    firsts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    assert starts[q[firsts]].tolist() == firsts.tolist()
