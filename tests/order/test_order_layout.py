"""Whether a run is in rank order, and query blocks moved whole (``rankflavor.order.layout``):
the layout read from alignment's known blocks equals a scan; blocks moved into byte order keep
each query's file order, so block order changes no value; ``Aligned.run_row`` maps back to the
input rows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rankflavor
from rankflavor.align import align
from rankflavor.base.kernels import block_starts
from rankflavor.io.tables import Run
from rankflavor.io.trec import read_qrels, read_run
from rankflavor.metrics.measure import parse_measure
from rankflavor.order.layout import blocks_in_code_order, find_layout

from ..support.order_cases import Case, as_list, cases, examples, same_values


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 4)), min_size=0, max_size=30))
def test_layout_from_known_blocks_equals_the_scan(rows: list[tuple[int, int]]) -> None:
    """The layout read with the query blocks alignment found equals the one found by scanning
    the codes: a rise of score inside a block means no layout, a rise from one block to the
    next does not."""
    q = np.array([r[0] for r in rows], dtype=np.int32)
    score = np.array([float(r[1]) for r in rows])
    scanned = find_layout(q, score)
    starts = block_starts(q)
    if starts is None:
        return  # alignment passes no blocks then
    known = find_layout(q, score, starts)
    assert (known is None) == (scanned is None)
    if known is not None and scanned is not None:
        for name in ("starts", "lengths", "codes"):
            np.testing.assert_array_equal(getattr(known, name), getattr(scanned, name))
        moved = blocks_in_code_order(known)  # whole blocks into code order, each in file order
        order = np.arange(len(q)) if moved is None else moved
        np.testing.assert_array_equal(order, np.argsort(q, kind="stable"))


def _run_text(rows: list[tuple[str, str, float]]) -> str:
    return "".join(f"{q} Q0 {d} {i + 1} {s!r} tag\n" for i, (q, d, s) in enumerate(rows))


BLOCKS = {
    "10": [("10", "b", 1.0), ("10", "a", 1.0), ("10", "c", 0.5)],
    "2": [("2", "x", 2.0), ("2", "y", 2.0)],
    "1": [("1", "m", 1.0), ("1", "n", 1.0), ("1", "o", 1.0)],
}
BLOCK_QRELS = "10 0 a 1\n2 0 y 2\n2 0 x 0\n1 0 o 1\n1 0 m 0\n"
#: By hand, ties in file order: 10 -> b (unjudged), a (rel): RR 1/2; 2 -> x (0), y (2): RR 1/2;
#: 1 -> m (0), n (unjudged), o (1): RR 1/3. AP equals RR here (one relevant each).
BLOCK_RR = {"1": 1 / 3, "10": 0.5, "2": 0.5}


def _block_files(tmp_path: Path) -> dict[str, Path]:
    interleaved = [BLOCKS["10"][0], BLOCKS["2"][0], BLOCKS["1"][0], BLOCKS["10"][1], BLOCKS["1"][1],
                   BLOCKS["2"][1], BLOCKS["1"][2], BLOCKS["10"][2]]  # fmt: skip
    layouts = {
        "file_order": BLOCKS["10"] + BLOCKS["2"] + BLOCKS["1"],
        "byte_order": BLOCKS["1"] + BLOCKS["10"] + BLOCKS["2"],
        "interleaved": interleaved,
    }
    out = {}
    for name, rows in layouts.items():
        p = tmp_path / f"{name}.txt"
        p.write_text(_run_text(rows))
        out[name] = p
    return out


def test_query_blocks_move_but_keep_their_file_order(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(BLOCK_QRELS)
    files = _block_files(tmp_path)
    measures = ["RR[ties=input_order]", "AP[ties=input_order]", "P@1[ties=input_order]", "ndcg@3[ties=input_order]"]
    values = {name: rankflavor.evaluate(str(qrels), str(p), measures).per_query() for name, p in files.items()}
    assert values["file_order"] == values["byte_order"] == values["interleaved"]
    rr = {q: v[str(parse_measure(measures[0]))] for q, v in values["file_order"].items()}
    assert rr == BLOCK_RR
    # The case is sensitive to the order inside a tie: docno order gives other numbers.
    by_docno = rankflavor.evaluate(str(qrels), str(files["file_order"]), "RR[ties=docno_asc]").per_query()
    assert {q: next(iter(v.values())) for q, v in by_docno.items()} != BLOCK_RR


@pytest.mark.parametrize("layout", ["file_order", "byte_order", "interleaved"])
@pytest.mark.parametrize("duplicates", ["error", "first"])
def test_run_row_maps_back_to_input_rows(tmp_path: Path, layout: str, duplicates: str) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(BLOCK_QRELS)
    path = _block_files(tmp_path)[layout]
    if duplicates == "first":  # a repeated (query, doc) inside the first block: the later line goes
        lines = path.read_text().splitlines()
        lines.insert(2, lines[0].replace(" 1.0 ", " 0.25 "))
        path.write_text("\n".join(lines) + "\n")
    run = read_run(path)
    file_rows = [(ln.split()[0], ln.split()[2], float(ln.split()[4])) for ln in path.read_text().splitlines()]
    aligned = align(read_qrels(qrels), run, duplicates=duplicates)
    queries = [str(aligned.query_ids[c]) for c in aligned.run_q]
    docs = as_list(run.doc, aligned.run_row)
    rows = aligned.run_row.tolist()
    for i, input_row in enumerate(rows):  # every aligned row is its input row
        assert (queries[i], docs[i], float(aligned.run_score[i])) == file_rows[input_row]
    seen: set[tuple[str, str]] = set()
    want_rows = []
    for i, (q, d, _s) in enumerate(file_rows):
        if (q, d) not in seen:
            seen.add((q, d))
            want_rows.append(i)
    assert sorted(rows) == want_rows  # the first of each duplicate kept, nothing else dropped
    for q in set(queries):  # each query's rows in file order
        mine = [r for r, qq in zip(rows, queries, strict=True) if qq == q]
        assert mine == sorted(mine)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases(contiguous=True), data=st.data())
def test_block_order_does_not_change_values(case: Case, data: st.DataObject) -> None:
    """The same contiguous run with its query blocks in another order: same values, same rows."""
    rows = case.run_rows
    order = list(dict.fromkeys(q for q, _, _ in rows))
    other = data.draw(st.permutations(order))
    moved = [r for q in other for r in rows if r[0] == q]
    run2 = Run(pa.array([q for q, _, _ in moved]), pa.array([d for _, d, _ in moved]),
               np.array([s for _, _, s in moved]), "moved run")  # fmt: skip
    measures = [m for m in case.measures if m.metric in ("ndcg", "AP", "RR", "P", "bpref", "ERR", "infAP")]
    a = rankflavor.evaluate(case.qrels, case.run, measures)
    b = rankflavor.evaluate(case.qrels, run2, measures)
    for x, y in zip(a, b, strict=True):
        assert list(x.queries) == list(y.queries)
        assert same_values(x.values, y.values), str(x.measure)

