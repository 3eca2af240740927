"""The tie rules (``rankflavor.order.ties``), through the ranker's full, exact ranking and the
ranked gains: docno byte order (the integer shortcut too), file order, grade order, and the
McSherry-Najork averaging of gains over tie groups."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given

from rankflavor.align import Aligned, align
from rankflavor.flavor.flavor import Flavor
from rankflavor.io.inputs import as_qrels, as_run
from rankflavor.io.tables import Qrels, Run
from rankflavor.metrics.measure import parse_measure
from rankflavor.metrics.ndcg import gain_of
from rankflavor.order import Ordering, Ranked, Ranker

from ..support.order_cases import RANDOM, Case, as_list, cases, full_rank


def _ranked_docs(run: dict[str, dict[str, float]], ties: str, precision: str = "float64") -> list[str]:
    qrels = {q: {next(iter(d)): 1} for q, d in run.items()}
    aligned = align(as_qrels(qrels), as_run(run))
    r = Ranker(aligned).rank(Ordering(ties=ties, precision=precision))
    assert r.row is not None
    docs = aligned.run_doc_strings.take(aligned.run_row[r.row]).to_pylist()
    return [str(d) for d in docs]


@pytest.mark.parametrize("ties", ["docno_desc", "docno_asc"])
def test_integer_docnos_tie_in_byte_order(ties: str) -> None:
    """Canonical integer docnos take a numeric shortcut; it must equal strcmp order."""
    rng = np.random.default_rng(3)
    values = np.unique(np.concatenate([rng.integers(0, 10**9, 300), [0, 1, 9, 10, 11, 100, 101, 99, 1000]]))
    docs = [str(v) for v in values]
    scores = {d: float(rng.integers(0, 3)) for d in docs}  # heavy ties
    got = _ranked_docs({"q": scores}, ties)
    want = sorted(docs, key=lambda d: (-scores[d], d.encode()) if ties == "docno_asc" else (-scores[d], _neg(d)))
    assert got == want


def _neg(d: str) -> list[int]:
    return [-b for b in d.encode()] + [1]  # descending byte order; a prefix sorts after longer strings


def test_numeric_shortcut_equals_string_path() -> None:
    """Same docnos with a non-canonical one ('007') force the string path: same order of the rest."""
    rng = np.random.default_rng(4)
    docs = [str(v) for v in rng.choice(10**6, 200, replace=False)]
    scores = {d: float(rng.integers(0, 4)) for d in docs}
    fast = _ranked_docs({"q": scores}, "docno_desc")
    slow = _ranked_docs({"q": {**scores, "007": -1.0}}, "docno_desc")
    assert slow[:-1] == fast and slow[-1] == "007"


def _reference_order(case: Case) -> dict[str, list[tuple[str, float | None]]]:
    """Per query id: (docno, grade or None) in ranked order, by brute force from the rows.

    trec_eval's order: score descending (at the flavor's precision), then the tie rule; then
    depth keeps the top N, then unjudged=condensed drops documents without a usable judgment.
    """
    k = case.knobs
    policy = k["duplicates"]
    grades: dict[tuple[str, str], float] = {}
    for q, d, g in case.judgments:  # first: earliest line wins; best: highest grade, earliest among equals
        if (q, d) not in grades or (policy == "best" and g > grades[q, d]):
            grades[q, d] = g
    kept: dict[tuple[str, str], tuple[int, float]] = {}
    for pos, (q, d, s) in enumerate(case.run_rows):
        if (q, d) not in kept or (policy == "best" and s > kept[q, d][1]):
            kept[q, d] = (pos, s)

    def usable(g: float | None) -> bool:
        return g is not None and (g >= 0 or k["negatives"] == "zero")

    def effective(g: float | None) -> float:
        return max(g, 0.0) if usable(g) and g is not None else 0.0

    def at_precision(s: float) -> float:
        return float(np.float32(s)) if k["precision"] == "float32" else s

    out: dict[str, list[tuple[str, float | None]]] = {}
    for q in sorted({q for q, _ in kept}):  # Python str order is code-point order = UTF-8 byte order
        rows = [(pos, d, at_precision(s), grades.get((q, d))) for (qq, d), (pos, s) in kept.items() if qq == q]
        rows.sort(key=lambda r: r[0])  # file order
        tie = k["ties"]
        if tie == "docno_asc":
            rows.sort(key=lambda r: r[1].encode())
        elif tie in ("docno_desc", "averaged", "pessimistic", "optimistic"):
            rows.sort(key=lambda r: r[1].encode(), reverse=True)
        if tie == "pessimistic":
            rows.sort(key=lambda r: effective(r[3]))
        elif tie == "optimistic":
            rows.sort(key=lambda r: -effective(r[3]))
        rows.sort(key=lambda r: -r[2])  # stable: the tie rule orders within equal scores
        if k["self_hits"] == "drop":
            rows = [r for r in rows if r[1] != q]
        if k["depth"] != "none":
            rows = rows[: int(k["depth"])]
        if k["unjudged"] == "condensed":
            rows = [r for r in rows if usable(r[3])]
        out[q] = [(r[1], r[3]) for r in rows]
    return out


def _ranked_lists(case: Case, aligned: Aligned, ranked: Ranked) -> dict[str, list[tuple[str, float | None]]]:
    assert ranked.row is not None
    docs = as_list(case.run.doc, aligned.run_row[ranked.row])
    raw = aligned.run_grade[ranked.row]
    out: dict[str, list[tuple[str, float | None]]] = {}
    for q, d, g in zip(ranked.q.tolist(), docs, raw.tolist(), strict=True):
        out.setdefault(str(aligned.query_ids[q]), []).append((str(d), None if math.isnan(g) else g))
    return out


@RANDOM
@given(case=cases())
def test_exact_rows_equal_brute_force_order(case: Case) -> None:
    """Exact rows are trec_eval's order (the reference of the inexact and judged-rows paths in
    test_order_ranker.py, checked itself)."""
    measure = case.measures[0]
    aligned = align(case.qrels, case.run, duplicates=case.knobs["duplicates"])
    got = _ranked_lists(case, aligned, full_rank(aligned, measure.flavor, exact=True))
    want = {q: rows for q, rows in _reference_order(case).items() if rows}
    assert got == want


def test_judged_rows_have_no_tie_groups() -> None:
    aligned = align(
        Qrels(pa.array(["q"]), pa.array(["a"]), np.array([1.0])),
        Run(pa.array(["q", "q", "q"]), pa.array(["a", "b", "c"]), np.array([1.0, 1.0, 0.5])),
    )
    ranked = full_rank(aligned, parse_measure("ndcg@3").flavor)
    assert ranked.tie_group.tolist() == [0, 0, 1]
    view = ranked.judged_rows
    assert view.judged_only and len(view.q) == 1 and view.judged_rows is view
    assert view.n_ret.tolist() == ranked.n_ret.tolist()  # per-query counts are the full list's
    with pytest.raises(ValueError, match="tie groups"):
        _ = view.tie_group


def _brute_force_averaged(ranked: Ranked, gain: np.ndarray) -> np.ndarray:
    """Each row's gain replaced by the plain mean of the gains of its (query, score) group."""
    groups: dict[tuple[int, float], list[int]] = {}
    for i, (q, s) in enumerate(zip(ranked.q.tolist(), ranked.score.tolist(), strict=True)):
        groups.setdefault((q, s), []).append(i)
    out = np.empty(len(gain))
    for members in groups.values():
        out[members] = math.fsum(gain[members]) / len(members)
    return out


@RANDOM
@given(case=cases())
def test_averaged_gains_are_tie_group_means(case: Case) -> None:
    """``Ranked.gains`` under ``ties=averaged``: every row earns its tie group's mean gain, the
    same asked for a few rows (whole groups summed) as for every row, bit for bit; under any
    other rule each row keeps its own gain."""
    aligned = align(case.qrels, case.run, duplicates=case.knobs["duplicates"])
    measure = parse_measure("dcg@3[gain=exp2,unjudged_grade=1]", overrides={**case.knobs, "ties": "averaged"})
    ranked = full_rank(aligned, measure.flavor)
    gain_fn = gain_of(measure)
    own = gain_fn(ranked.grade, ranked.judged, ranked.pooled)
    every = ranked.gains(gain_fn)
    np.testing.assert_allclose(every, _brute_force_averaged(ranked, own), rtol=1e-14, atol=0)
    top = np.flatnonzero(ranked.rank <= 3)
    np.testing.assert_array_equal(ranked.gains(gain_fn, top), every[top])
    plain = full_rank(aligned, measure.flavor.with_knobs(ties="docno_desc"))
    np.testing.assert_array_equal(plain.gains(gain_fn), own)  # averaged orders like docno_desc
    np.testing.assert_array_equal(plain.gains(gain_fn, top), own[top])


def test_averaged_orders_like_docno_desc() -> None:
    """``averaged`` ranks rows as ``docno_desc`` (P@k, AP need an order); only gains differ."""
    assert Ordering(ties="averaged").tie_rule == "docno_desc"
    assert Ordering.of(Flavor(ties="averaged")).averaged and not Ordering.of(Flavor()).averaged
    aligned = _tied_alignment()
    a = Ranker(aligned).rank(Ordering(ties="averaged"))
    d = Ranker(aligned).rank(Ordering(ties="docno_desc"))
    assert a.row is not None and d.row is not None
    np.testing.assert_array_equal(a.row, d.row)


def _tied_alignment() -> Aligned:
    return align(
        Qrels(pa.array(["q", "q"]), pa.array(["b", "c"]), np.array([2.0, 1.0])),
        Run(pa.array(["q"] * 4), pa.array(["a", "c", "b", "d"]), np.array([1.0, 1.0, 1.0, 0.5])),
    )


@pytest.mark.parametrize(("ties", "docs"), [
    ("docno_desc", ["c", "b", "a", "d"]), ("docno_asc", ["a", "b", "c", "d"]), ("input_order", ["a", "c", "b", "d"]),
    ("pessimistic", ["a", "c", "b", "d"]), ("optimistic", ["b", "c", "a", "d"]),
])  # fmt: skip
def test_each_tie_rule_by_hand(ties: str, docs: list[str]) -> None:
    """a (unjudged), c (1), b (2) tie at 1.0; d follows. Orders worked out by hand."""
    aligned = _tied_alignment()
    r = Ranker(aligned).rank(Ordering(ties=ties))
    assert r.row is not None
    assert [str(d) for d in aligned.run_doc_strings.take(aligned.run_row[r.row]).to_pylist()] == docs
