"""The top rows coverage reads (``rankflavor.analysis.judgments.toprows``): on small random queries, for
every tie rule and a few depths, the rows at each rank of the top ``depth`` are those of the
order written from the definition (``tests/analysis/judgments/brute_bounds.py``: score descending, then the tie
rule, unjudged documents at grade 0): the same ranks, the same judged state at each, the same
judged document at each judged rank; and where the tie rule reads no grade the prefix path
(:func:`toprows._from_prefix`) is the one taken and gives exactly what ranking every row gives.
A duplicate line is refused on both paths. The mutation run of issue #32 found the prefix path
checked on one fixed case only."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rankflavor.analysis.judgments import judgments, toprows
from rankflavor.analysis.judgments.scope import docnos_of
from rankflavor.engine.plan import Evaluation
from rankflavor.errors import RankflavorError
from rankflavor.io.columns import to_strings
from rankflavor.io.inputs import as_qrels, as_run
from rankflavor.metrics.measure import parse_measure
from rankflavor.order import Ordering

from .brute_bounds import ranked

_SETTINGS = {"deadline": None, "derandomize": True, "suppress_health_check": [HealthCheck.too_slow]}
TIES = ["docno_desc", "docno_asc", "input_order", "pessimistic", "optimistic", "averaged"]


@st.composite
def case(draw):  # type: ignore[no-untyped-def]
    """Two or three queries of up to seven documents, tied scores, about half judged (0..3, some
    -1: pooled, not judged), and a judged query the run lacks."""
    qrels: dict[str, dict[str, float]] = {"absent": {"z": 2.0}}
    runs: dict[str, list[tuple[str, float]]] = {}
    for q in range(draw(st.integers(2, 3))):
        n = draw(st.integers(1, 7))
        docs = draw(st.permutations([f"d{i}" for i in range(n)]))
        runs[f"q{q}"] = [(d, float(draw(st.integers(0, 2)))) for d in docs]
        judged = {d: float(draw(st.sampled_from([-1, 0, 1, 2, 3]))) for d in docs if draw(st.booleans())}
        qrels[f"q{q}"] = judged or {"x": 1.0}
    return qrels, runs


def _rows(top: toprows.Top, aligned, docs) -> dict[str, list[tuple[int, bool, str | None]]]:  # type: ignore[no-untyped-def]
    out: dict[str, list[tuple[int, bool, str | None]]] = {}
    for q, rank, row, judged in zip(top.q.tolist(), top.rank.tolist(), top.row.tolist(), top.judged.tolist(),
                                    strict=True):
        out.setdefault(str(aligned.query_ids[q]), []).append((int(rank), bool(judged), docs[row] if judged else None))
    return out


@settings(max_examples=60, **_SETTINGS)
@given(data=case(), ties=st.sampled_from(TIES), depth=st.sampled_from([1, 2, 3, 5, None]))
def test_top_rows_are_the_definitions_order(data, ties, depth):  # type: ignore[no-untyped-def]
    qrels, runs = data
    measure = parse_measure(f"P@{depth or 3}[ties={ties}]")
    plan = Evaluation(as_qrels(qrels), as_run({q: dict(r) for q, r in runs.items()}))
    try:
        top = toprows.top_rows(plan, measure, depth)
        aligned = plan.aligned("error")
        docs = to_strings(docnos_of(aligned, np.arange(len(aligned.run_q))))
        got = _rows(top, aligned, docs)
        want = {}
        for q, run in runs.items():
            usable = {d: g for d, g in qrels[q].items() if g >= 0}
            order = [d for d, _ in ranked(run, ties, usable)][:depth]
            want[q] = [(i + 1, d in usable, d if d in usable else None) for i, d in enumerate(order)]
        assert got == want
        assert top.ordering == Ordering.of(measure.flavor)
        full = toprows.full_ranking(plan, measure)
        assert full.row is not None
        if depth is not None and ties not in ("pessimistic", "optimistic", "averaged"):
            fast = toprows._from_prefix(plan, measure, top.ordering, depth)
            assert fast is not None and top.score is None  # the prefix path is the one taken
            sel = full.rank <= depth
            assert _rows(fast, aligned, docs) == want
            assert np.array_equal(fast.q, full.q[sel]) and np.array_equal(fast.rank, full.rank[sel])
        else:
            assert top.score is not None and len(top.score) == len(top.q)
            sel = np.ones(len(full.q), dtype=bool) if depth is None else full.rank <= depth
            assert np.array_equal(top.row, full.row[sel]) and np.array_equal(top.score, full.score[sel])
    finally:
        plan.close()


@pytest.mark.parametrize("first", ["P@2", "P@2[ties=pessimistic]", "P[ties=docno_asc]"])
def test_a_duplicate_line_is_refused_on_every_path(first, tmp_path):  # type: ignore[no-untyped-def]
    """duplicates=error (the default) refuses a document listed twice, whichever rows coverage
    reads (the prefix, or every row)."""
    run = tmp_path / "dup.run"
    run.write_text("q Q0 a 1 1.0 t\nq Q0 u 2 0.5 t\nq Q0 u 3 0.4 t\n")
    with pytest.raises(RankflavorError, match=r"dup\.run"):
        judgments({"q": {"a": 2}}, {"r": str(run)}, [first], scale="trec_dl")


def test_the_grid_limit_switches_to_ranking_every_row(monkeypatch):  # type: ignore[no-untyped-def]
    """Above _GRID_CELLS (query x rank) cells the prefix path declines and every row is ranked:
    the same top rows either way (the limit set around this input's 2 x 3 cells)."""
    qrels = {"q1": {"a": 2, "b": 0}, "q2": {"c": 1}}
    run = {"q1": {"u": 2.0, "a": 2.0, "b": 1.0, "v": 0.5}, "q2": {"c": 1.0, "w": 1.0}}
    measure = parse_measure("P@3")
    want = {"q1": [(1, False, None), (2, True, "a"), (3, True, "b")], "q2": [(1, False, None), (2, True, "c")]}  # ties: docno descending
    for cells, taken in [(6, True), (5, False)]:
        monkeypatch.setattr(toprows, "_GRID_CELLS", cells)
        plan = Evaluation(as_qrels(qrels), as_run(run))
        try:
            aligned = plan.aligned("error")
            docs = to_strings(docnos_of(aligned, np.arange(len(aligned.run_q))))
            fast = toprows._from_prefix(plan, measure, Ordering.of(measure.flavor), 3)
            assert (fast is not None) == taken
            top = toprows.top_rows(plan, measure, 3)
            assert (top.score is None) == taken and _rows(top, aligned, docs) == want
        finally:
            plan.close()
