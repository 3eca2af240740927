"""A cutoff far beyond every list (k up to 2**53, issue #32): tables are sized by what is read,
never by k.

A measure whose value cannot depend on the positions past the longest list equals its uncut
value at such a k, exactly. ``ideal=max`` cut at k fills k slots whatever the run holds: its
IDCG is the top gain summed over k discounts, with no closed form for log2, so it is summed in
bounded chunks up to ``MAX_SUMMED_SLOTS`` and refused above with a FlavorError naming the
limit; nERR's ideal of the top grade is a series whose terms vanish, so any k is summed (its
limit has the closed form -r ln(r) / (1 - r), checked here). Each of these used to allocate an
array of k entries (``ndcg@1000000000000000[ideal=max]``: a MemoryError, exit 5 with advice to
use --chunk-rows).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import rankflavor
from rankflavor.base import kernels as K
from rankflavor.cli.main import cli
from rankflavor.errors import FlavorError
from rankflavor.flavor.flavor import Flavor
from rankflavor.metrics import gains
from rankflavor.metrics import ndcg as ndcg_module

from ..support.formats_parse import invoke

HUGE = 2**53

QRELS = {"q1": {"a": 3, "b": 1, "c": 0, "d": 2, "e": 1}, "q2": {"a": 2, "f": 1}, "q3": {"h": 1, "i": 3},
         "q4": {"z": 0}}
RUN = {"q1": {"d": 9.0, "x": 8.0, "a": 7.5, "c": 7.0, "b": 1.0}, "q2": {"f": 5.0, "a": 4.0, "y": 3.0},
       "q3": {"i": 2.0, "q": 1.5}, "q4": {"z": 1.0, "w": 0.5}}

#: Measures whose value reads no position past the longest list: @HUGE equals uncut, exactly.
UNCUT_EQUAL = ["ndcg", "ndcg[gain=exp2,discount=jk(2)]", "ndcg[ideal=local]", "ndcg[ideal=as_supplied]",
               "ndcg[ideal=max,max_grade=3,ideal_cut=hits]", "ndcg[ties=averaged]", "dcg", "dcg[discount=reciprocal]",
               "ERR[max_grade=3]", "nERR[max_grade=3]", "nERR[max_grade=3,ideal=local]", "RBP[max_grade=3]",
               "AP", "recall", "RR", "success", "UDCG", "relstring"]


def _values(measure: str, qrels: dict = QRELS, run: dict = RUN) -> list:  # type: ignore[type-arg]
    return list(rankflavor.evaluate(qrels, run, [measure])[0].values)


def _at(measure: str, k: int) -> str:
    name, _, knobs = measure.partition("[")
    return f"{name}@{k}" + (f"[{knobs}" if knobs else "")


@pytest.mark.parametrize("measure", UNCUT_EQUAL)
def test_a_cutoff_past_every_list_is_no_cutoff(measure: str) -> None:
    assert _values(_at(measure, HUGE)) == _values(measure)


def test_precision_at_a_huge_cutoff_divides_by_it() -> None:
    """P@k divides what it found by k (short runs padded with non-relevant): no table of k."""
    found = [3, 2, 1, 0]  # relevant (grade >= 1) retrieved per query
    assert _values(f"P@{HUGE}") == [n / HUGE for n in found]


def _dcg_by_hand(grades: list[float], k: int) -> float:
    return sum(g / math.log2(i + 2) for i, g in enumerate(grades[:k]))


def test_the_top_grade_ideal_past_the_lists_is_k_discounts_summed() -> None:
    """ideal=max cut at k: the top grade's gain in every one of k slots, written out here."""
    k = 3000
    got = _values(f"ndcg@{k}[ideal=max,max_grade=3]")
    idcg = _dcg_by_hand([3.0] * k, k)
    ranked = {q: sorted(docs, key=lambda d: -docs[d]) for q, docs in RUN.items()}
    want = [_dcg_by_hand([QRELS[q].get(d, 0) for d in ranked[q]], k) / idcg for q in RUN]
    assert got == pytest.approx(want, rel=1e-13)
    # the same k through torch's ideal: the engine's own sum
    torch = pytest.importorskip("torch")
    import rankflavor.torch as rt

    docs = sorted({d for q in RUN for d in RUN[q]})
    scores = torch.tensor([[RUN[q].get(d, -math.inf) for d in docs] for q in RUN], dtype=torch.float64)
    labels = torch.tensor([[float(QRELS[q].get(d, 0)) for d in docs] for q in RUN], dtype=torch.float64)
    assert rt.ndcg(scores, labels, k, ideal="max", max_grade=3).tolist() == pytest.approx(got, rel=1e-13)
    # (a batch's judgments are its candidates: its uncut NDCG is its own, not the dicts')
    assert rt.ndcg(scores, labels, HUGE).tolist() == rt.ndcg(scores, labels).tolist()
    assert rt.dcg(scores, labels, HUGE).tolist() == rt.dcg(scores, labels).tolist()


def test_the_top_grade_ideal_is_refused_past_its_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    limit = ndcg_module.MAX_SUMMED_SLOTS
    with pytest.raises(FlavorError, match=f"more than the {limit:,} slots.*MAX_SUMMED_SLOTS.*ideal_cut=hits"):
        rankflavor.evaluate(QRELS, RUN, f"ndcg@{limit + 1}[ideal=max,max_grade=3]")
    monkeypatch.setattr(ndcg_module, "MAX_SUMMED_SLOTS", 50)  # at the limit: summed; one past it: refused
    ranked = {q: sorted(docs, key=lambda d: -docs[d]) for q, docs in RUN.items()}
    assert _values("ndcg@50[ideal=max,max_grade=3]") == pytest.approx(
        [_dcg_by_hand([QRELS[q].get(d, 0) for d in ranked[q]], 50) / _dcg_by_hand([3.0] * 50, 50) for q in RUN],
        rel=1e-13)
    with pytest.raises(FlavorError, match="51 slots"):
        rankflavor.evaluate(QRELS, RUN, "ndcg@51[ideal=max,max_grade=3]")


def test_cli_refuses_a_huge_top_grade_ideal_with_a_flavor_error(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "q.txt").write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in QRELS.items() for d, g in docs.items()))
    (tmp_path / "r.txt").write_text("".join(f"{q} Q0 {d} {i + 1} {s} t\n" for q, docs in RUN.items()
                                            for i, (d, s) in enumerate(docs.items())))
    for command, limit in ((["eval"], "MAX_SUMMED_SLOTS"), (["explain", "-Q", "q1"], "MAX_LISTED_SLOTS")):
        res = CliRunner().invoke(cli, [*command, "q.txt", "r.txt", "-m", f"ndcg@{HUGE}[ideal=max,max_grade=3]"])
        assert res.exit_code == 2 and f"at k={HUGE:,}" in res.output and limit in res.output, res.output
        assert "memory" not in res.output and "Traceback" not in res.output
    # explain of a huge cutoff under a listed ideal: the uncut numbers
    import json

    cut = json.loads(invoke("explain", "q.txt", "r.txt", "-Q", "q1", "-m", f"ndcg@{HUGE}", "--format", "json"))
    whole = json.loads(invoke("explain", "q.txt", "r.txt", "-Q", "q1", "-m", "ndcg", "--format", "json"))
    assert (cut["dcg"], cut["idcg"], cut["ndcg"]) == (whole["dcg"], whole["idcg"], whole["ndcg"])


@pytest.mark.parametrize("metric,knobs,r_top", [("ERR", "max_grade=3", 7 / 8), ("ERR_gain", "gain=binary", 0.5),
                                                ("ERR", "max_grade=4", 15 / 16), ("ERR", "max_grade=30", 1 - 2.0 ** -30)])
def test_the_nerr_top_grade_ideal_is_its_series_for_any_k(metric: str, knobs: str, r_top: float) -> None:
    """nERR@k's ideal of the top grade: ERR of R_top in every slot, sum R (1-R)^(i-1) / i. Its
    terms vanish, so k = 2**53 is summed; past the point where they stop changing the sum, the
    value is the series' limit -R ln(R) / (1 - R) (sum x^i / i = -ln(1 - x)). R_top is
    (2^G - 1) / 2^G (Chapelle et al. 2009); 1/2 under ERR_gain's binary gain (gain(G) / (gain(G) + 1))."""
    measure = f"n{metric}@{{k}}[ideal=max,{knobs}]"
    err = _values(f"{metric}@{HUGE}[{knobs}]")
    nerr = _values(measure.format(k=HUGE))
    limit = -r_top * math.log(r_top) / (1 - r_top)
    for e, n in zip(err, nerr, strict=True):
        assert n == pytest.approx(e / limit, rel=1e-12)
    assert nerr == _values(measure.format(k=5000))  # the sum settled long before


@settings(max_examples=40, deadline=None)
@given(ends=st.lists(st.integers(0, 300), min_size=1, max_size=6), chunk=st.integers(1, 40),
       discount=st.sampled_from(["log2", "jk(2)", "reciprocal", "log(10)"]), decreasing=st.booleans())
def test_running_sums_are_one_cumulative_sum_bit_for_bit(ends: list[int], chunk: int, discount: str,
                                                         decreasing: bool) -> None:
    """Chunked, with the running total carried into each chunk's first term: every sum equals a
    single np.cumsum over all slots, bit for bit (with ``decreasing`` on a series that shrinks)."""
    f = Flavor(discount=discount)
    ends_ = np.array(ends)
    n = max(ends)
    if decreasing:
        def term(i: np.ndarray) -> np.ndarray:
            return 0.3 * np.power(0.7, i - 1.0) / i
    else:
        def term(i: np.ndarray) -> np.ndarray:
            return 3.0 / gains.discounts(f, i)
    whole = np.concatenate([[0.0], np.cumsum(term(np.arange(1, n + 1, dtype=np.float64)))])[ends_]
    assert K.running_sums(term, ends_, decreasing=decreasing, chunk=chunk).tolist() == whole.tolist()
    # and the discounts of any ranks are the table's
    assert gains.discounts(f, np.arange(1, n + 2, dtype=np.float64)).tolist() == \
        gains.discount_denominators(f, n + 1)[1:].tolist()


def test_a_listed_top_grade_ideal_past_its_limit_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    """explain lists ideal=max slot by slot: uncut, one slot per document retrieved (q1: 5)."""
    monkeypatch.setattr(ndcg_module, "MAX_LISTED_SLOTS", 4)
    with pytest.raises(FlavorError, match=r"its 5 slots \(no cutoff: one per document retrieved\), more than the 4"):
        rankflavor.explain(QRELS, RUN, "q1", "ndcg[ideal=max,max_grade=3,ideal_cut=none]")
    assert rankflavor.explain(QRELS, RUN, "q2", "ndcg[ideal=max,max_grade=3,ideal_cut=none]").idcg == pytest.approx(
        _dcg_by_hand([3.0] * 3, 3), rel=1e-15)
