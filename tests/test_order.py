"""The one ordering stage: score, then tie rules; shared work must not change any order."""

from __future__ import annotations

import numpy as np
import pytest

from rankflavor.align import align
from rankflavor.flavor import Flavor
from rankflavor.io.inputs import as_qrels, as_run
from rankflavor.order import rank


def _ranked_docs(run: dict[str, dict[str, float]], ties: str, precision: str = "float64") -> list[str]:
    qrels = {q: {next(iter(d)): 1} for q, d in run.items()}
    aligned = align(as_qrels(qrels), as_run(run))
    r = rank(aligned, Flavor(ties=ties, precision=precision))
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


def test_shared_sort_gives_same_orders_in_any_sequence() -> None:
    """Orders computed after others on one alignment (memoised work) equal fresh ones."""
    rng = np.random.default_rng(5)
    run = {f"q{i}": {f"d{j}": float(rng.integers(0, 3)) for j in rng.choice(50, 20, replace=False)} for i in range(10)}
    qrels = {q: {d: int(rng.integers(-1, 3)) for d in list(docs)[::2]} for q, docs in run.items()}
    flavors = [Flavor(ties=t, precision=p) for t in ("docno_desc", "averaged", "docno_asc", "pessimistic",
                                                      "optimistic", "input_order") for p in ("float64", "float32")]
    shared = align(as_qrels(qrels), as_run(run))
    for f in flavors:
        fresh = rank(align(as_qrels(qrels), as_run(run)), f)
        again = rank(shared, f)
        np.testing.assert_array_equal(fresh.row, again.row)
        np.testing.assert_array_equal(fresh.grade, again.grade)
