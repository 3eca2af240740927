"""The fast path of commit ea133a9 must give the numbers of the plain path it replaced.

What is protected, and by which oracle (nothing here is copied from rankflavor's output):

* ``rankflavor.columns`` (Arrow <-> NumPy through buffers): against Python lists and pyarrow's own
  ``to_pylist``, on sliced, chunked, bit-packed, empty and null-bearing arrays.
* ``order.rank(..., exact_rows=False)``: every metric value equals the one computed from exact
  rows (``exact_rows=True``) through the kernels directly, and the exact rows themselves equal a
  brute-force Python sort (score, then the tie rule on the docno bytes, file position or grade).
* ``MetricSpec.compute``'s judged-rows view: kernels declared ``judged_only`` give the same values
  on the judged rows as on every row.
* Query blocks moved into byte order keep each query's file order; ``Aligned.run_row`` maps back
  to the input rows.
* The threaded duplicate check on a large run names the file and both lines, and
  ``duplicates=first`` equals the run without the duplicate line.

The reader's parts (no pandas import, canonical integer docnos, the run tag) are in
``test_io_inputs.py``, ``test_docnos.py`` and ``test_io_lines.py``.
"""

from __future__ import annotations

import functools
import gc
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rankflavor
from rankflavor import order as order_module
from rankflavor.align import Aligned, align
from rankflavor.align import sizes as align_sizes
from rankflavor.columns import as_numpy, from_numpy, string_array, to_strings
from rankflavor.engine import aggregate
from rankflavor.errors import InputError
from rankflavor.io.trec import read_qrels, read_run
from rankflavor.measure import Measure, parse_measure
from rankflavor.metrics.registry import REGISTRY
from rankflavor.order import Ranked, order_key, rank
from rankflavor.tables import Qrels, Run

# ---------------------------------------------------------------------------------------------
# 1. rankflavor.columns
# ---------------------------------------------------------------------------------------------

NUMERIC_TYPES = [
    (pa.int8(), np.int8), (pa.int16(), np.int16), (pa.int32(), np.int32), (pa.int64(), np.int64),
    (pa.uint8(), np.uint8), (pa.uint16(), np.uint16), (pa.uint32(), np.uint32), (pa.uint64(), np.uint64),
    (pa.float32(), np.float32), (pa.float64(), np.float64),
]  # fmt: skip


@pytest.mark.parametrize(("kind", "dtype"), NUMERIC_TYPES, ids=[str(k) for k, _ in NUMERIC_TYPES])
def test_as_numpy_numeric_sliced_and_chunked(kind: pa.DataType, dtype: type) -> None:
    values = [(i * 7) % 100 for i in range(40)]
    whole = pa.array(values, type=kind)
    for start, length in [(0, 40), (3, 5), (17, 23), (39, 1), (40, 0), (5, 0)]:
        got = as_numpy(whole.slice(start, length))
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(got, np.array(values[start : start + length], dtype=dtype))
    chunked = pa.chunked_array([whole.slice(2, 9), pa.array([], type=kind), whole.slice(30, 4), whole.slice(0, 1)])
    want = values[2:11] + values[30:34] + values[0:1]
    got = as_numpy(chunked)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, np.array(want, dtype=dtype))
    one_chunk = pa.chunked_array([whole.slice(11, 6)])
    np.testing.assert_array_equal(as_numpy(one_chunk), np.array(values[11:17], dtype=dtype))


def test_as_numpy_boolean_bit_packed_at_every_offset() -> None:
    rng = np.random.default_rng(11)
    values = [bool(b) for b in rng.integers(0, 2, 45)]
    whole = pa.array(values, type=pa.bool_())
    for start in range(0, 18):
        for length in (0, 1, 7, 8, 9, 16, 20, 45 - start):
            got = as_numpy(whole.slice(start, length))
            assert got.dtype == np.bool_
            assert got.tolist() == values[start : start + length], (start, length)
    chunked = pa.chunked_array([whole.slice(3, 10), whole.slice(13, 1), whole.slice(0, 0), whole.slice(29, 16)])
    assert as_numpy(chunked).tolist() == values[3:13] + values[13:14] + values[29:45]


def test_as_numpy_empty_arrays() -> None:
    for kind, dtype in [(pa.int64(), np.int64), (pa.float64(), np.float64), (pa.bool_(), np.bool_)]:
        got = as_numpy(pa.array([], type=kind))
        assert got.shape == (0,) and got.dtype == np.dtype(dtype)
    got = as_numpy(pa.chunked_array([], type=pa.float64()))
    assert got.shape == (0,) and got.dtype == np.float64
    got = as_numpy(pa.chunked_array([pa.array([], type=pa.int32())]))
    assert got.shape == (0,) and got.dtype == np.int32


def test_as_numpy_empty_chunked_boolean() -> None:
    got = as_numpy(pa.chunked_array([], type=pa.bool_()))
    assert got.shape == (0,) and got.dtype == np.bool_


def test_as_numpy_rejects_nulls_and_non_numeric() -> None:
    with pytest.raises(TypeError, match="null"):
        as_numpy(pa.array([1, None, 3], type=pa.int64()))
    with pytest.raises(TypeError, match="null"):
        as_numpy(pa.array([True, None], type=pa.bool_()))
    with pytest.raises(TypeError, match="null"):
        as_numpy(pa.chunked_array([pa.array([1.0]), pa.array([None, 2.0], type=pa.float64())]))
    # A slice that leaves the null out has no null: it converts, with the right values.
    with_null = pa.array([None, 4, 5, None, 6], type=pa.int64())
    assert as_numpy(with_null.slice(1, 2)).tolist() == [4, 5]
    with pytest.raises(TypeError):
        as_numpy(with_null.slice(2, 2))
    with pytest.raises(TypeError):
        as_numpy(pa.array(["a", "b"]))
    with pytest.raises(TypeError):
        as_numpy(pa.array(["a", "b"]).dictionary_encode())


@pytest.mark.parametrize(
    ("values", "kind"),
    [
        (np.array([0, -1, 2**62, -(2**63), 2**63 - 1], dtype=np.int64), pa.int64()),
        (np.array([0.0, -0.0, 1.5, np.inf, -np.inf, 1e-300, np.nan]), pa.float64()),
        (np.array([True, False, True, True, False, False, True, False, True, True, False]), pa.bool_()),
        (np.array([], dtype=np.int64), pa.int64()),
        (np.array([], dtype=bool), pa.bool_()),
        (np.arange(30, dtype=np.int32)[::3], pa.int32()),  # not contiguous
        (np.arange(24, dtype=np.float64).reshape(4, 6)[:, 2], pa.float64()),  # column of a C array
        (np.array([True, False] * 9)[1::2], pa.bool_()),  # not contiguous, all False
        (np.array([1, 0, 1, 1, 0, 1, 0, 0, 1, 1], dtype=bool)[::3], pa.bool_()),
        (np.array([0, 255, 7], dtype=np.uint8), pa.uint8()),
    ],
)
def test_from_numpy_round_trips(values: np.ndarray, kind: pa.DataType) -> None:
    arrow = from_numpy(values)
    assert arrow.type == kind
    assert len(arrow) == len(values)
    assert arrow.null_count == 0
    # pyarrow's own reading of the buffers, independent of as_numpy; floats bit for bit (NaN, -0.0).
    got = arrow.to_pylist()
    if values.dtype.kind == "f":
        assert np.array(got, dtype=values.dtype).tobytes() == np.ascontiguousarray(values).tobytes()
    else:
        assert got == values.tolist()
    back = as_numpy(arrow)
    assert back.dtype == values.dtype
    np.testing.assert_array_equal(back, values)


def test_from_numpy_keeps_its_buffer_alive() -> None:
    arrow = from_numpy(np.arange(1000, dtype=np.int64) * 3)  # the NumPy temporary has no other owner
    gc.collect()
    _ = [np.full(1000, -1, dtype=np.int64) for _ in range(50)]  # reuse freed memory, if any was freed
    assert arrow.to_pylist() == [3 * i for i in range(1000)]


def test_from_numpy_rejects_unsupported_dtypes() -> None:
    for bad in (np.array(["a"], dtype=object), np.array([1.0], dtype=np.float16), np.array(["x"])):
        with pytest.raises(TypeError):
            from_numpy(bad)


STRINGS = ["", "a", "ü", "", "日本語", "q\u00a0x", "\U0001f600", "mixed é and ascii", "", "Z"]


def test_string_array_non_ascii_and_empty() -> None:
    for values in (STRINGS, [], [""], ["", ""], ["١٢"]):
        arrow = string_array(values)
        assert arrow.type in (pa.string(), pa.large_string())
        assert arrow.null_count == 0
        assert arrow.to_pylist() == values
        assert to_strings(arrow) == values


@settings(max_examples=300, deadline=None)
@given(
    values=st.lists(st.text(alphabet=st.sampled_from(["a", "7", " ", "#", "é", "日", "\U0001f600"]), max_size=6), max_size=30),
    start=st.integers(0, 30),
    length=st.integers(0, 30),
)
def test_to_strings_of_ascii_and_other_slices(values: list[str], start: int, length: int) -> None:
    """All-ASCII bytes take a one-decode path, others a per-string one: both give the strings,
    from an array's offset (a slice) as from its start."""
    arrow = pa.array(values, type=pa.string())
    assert to_strings(arrow) == values
    assert to_strings(arrow.slice(start, length)) == values[start : start + length]


def test_to_strings_sliced_dictionary_chunked() -> None:
    base = pa.array(STRINGS, type=pa.string())
    assert to_strings(base.slice(2, 5)) == STRINGS[2:7]
    assert to_strings(base.slice(10, 0)) == []
    assert to_strings(pa.array(STRINGS, type=pa.large_string()).slice(3)) == STRINGS[3:]
    assert to_strings(base.dictionary_encode()) == STRINGS
    assert to_strings(base.dictionary_encode().slice(4, 3)) == STRINGS[4:7]
    assert to_strings(string_array(STRINGS).slice(1, 8)) == STRINGS[1:9]
    chunked = pa.chunked_array([base.slice(0, 3), base.slice(7), pa.array([], type=pa.string())])
    assert to_strings(chunked) == STRINGS[0:3] + STRINGS[7:]
    assert to_strings(pa.chunked_array([base.slice(5, 2)])) == STRINGS[5:7]
    assert to_strings(pa.chunked_array([], type=pa.string())) == []
    # Chunks of dictionaries that differ (as the CSV reader produces them per block).
    dicts = pa.chunked_array([pa.array(["b", "a", "b"]).dictionary_encode(), pa.array(["é", "a"]).dictionary_encode()])
    assert to_strings(dicts) == ["b", "a", "b", "é", "a"]


def test_to_strings_rejects_nulls() -> None:
    with pytest.raises(TypeError):
        to_strings(pa.array(["a", None, "c"]))


# ---------------------------------------------------------------------------------------------
# Small TREC files
# ---------------------------------------------------------------------------------------------


def _run_line(q: str, d: str, rank_: int, s: float, tag: str = "tagA", sep: str = " ") -> str:
    return sep.join([q, "Q0", d, str(rank_), repr(s), tag])


def _run_text(rows: list[tuple[str, str, float]], last_tag: str = "lastTag", sep: str = " ") -> str:
    lines = [_run_line(q, d, i + 1, s, "tagA", sep) for i, (q, d, s) in enumerate(rows)]
    q, d, s = rows[-1]
    lines[-1] = _run_line(q, d, len(rows), s, last_tag, sep)
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# Random collections for sections 4-6
# ---------------------------------------------------------------------------------------------

#: Byte order "1" < "10" < "2" < "q" differs from numeric order; numeric ids are also docnos (self hits).
QUERY_IDS = ["10", "2", "1", "q"]
NUMERIC_DOCS = ["0", "1", "2", "9", "10", "11", "100", "101", "99", "123456789"]
TEXT_DOCS = ["007", "a", "B", "b", "d1", "d10", "d2", "é", "Z", "_"]
SCORES = [0.0, 0.5, 1.0, 1.0 + 1e-12, 2.0]  # few values: ties everywhere; the 4th ties 1.0 in float32
GRADES: list[float | None] = [None, None, None, -2.0, -1.0, 0.0, 0.0, 1.0, 2.0, 3.0]  # None: not judged

TIES = ["docno_desc", "docno_asc", "input_order", "averaged", "pessimistic", "optimistic"]
KNOB_CHOICES: dict[str, list[str]] = {
    "ties": TIES,
    "depth": ["none", "1", "3", "8"],
    "unjudged": ["zero", "condensed"],
    "negatives": ["unjudged", "zero"],
    "precision": ["float64", "float32"],
    "self_hits": ["keep", "drop"],
}

#: A broad list of measures (relstring left out: per-query text).
MEASURE_TEXTS = [
    "ndcg@5", "ndcg@10[gain=exp2]", "ndcg", "ndcg@5[ideal=local]", "ndcg@5[ideal_cut=hits]",
    "ndcg@5[ideal_cut=none]", "ndcg@5[ideal=max,max_grade=3]", "ndcg@5[ideal=as_supplied]",
    "ndcg@5[ideal=recall@5]", "ndcg@5[discount=jk(2)]", "ndcg@5[discount=reciprocal]", "ndcg@3[min_grade=2]",
    "ndcg@5[gain=binary,rel=2]", "ndcg@5[gain={0:1,1:3,2:7}]", "ndcg@5[unjudged_grade=1]", "ndcg[gain=exp2]",
    "dcg@5", "dcg", "dcg@3[gain=exp2]", "dcg@5[unjudged_grade=2]",
    "P@5", "P@5[p_divisor=hits]", "P", "P@3[rel=2]", "recall@5", "recall", "AP", "AP@5", "AP[rel=2]",
    "RR", "RR@3", "Rprec", "bpref", "bpref@5", "success@3", "judged@5", "judged",
    "num_ret", "num_rel", "num_rel_ret", "GMAP", "gm_bpref", "infAP", "ERR@5[max_grade=3]", "ERR[max_grade=3]",
    "IPrec[param=0.5]", "IPrec_avg", "Rprec_mult[param=2]", "utility", "binG", "G", "ndcg_rel", "Rndcg",
    "relative_P@5", "set_AP", "F", "num_nonrel_judged_ret",
]  # fmt: skip


@functools.cache
def _measures(knobs: tuple[tuple[str, str], ...]) -> tuple[Measure, ...]:
    return tuple(parse_measure(t, overrides=dict(knobs)) for t in MEASURE_TEXTS)


@dataclass(frozen=True)
class Case:
    """A random collection: rows in file order, as tables, and the flavor knobs to apply."""

    run_rows: list[tuple[str, str, float]]
    judgments: list[tuple[str, str, float]]
    run: Run
    qrels: Qrels
    knobs: dict[str, str]

    @property
    def measures(self) -> tuple[Measure, ...]:
        return _measures(tuple(sorted(self.knobs.items())))


def _strings(draw: st.DrawFn, values: list[str], dictionary: bool) -> pa.Array | pa.ChunkedArray:
    """Strings in one of the layouts the readers produce: plain, dictionary, or chunked."""
    arr = pa.array(values, type=pa.string())
    if dictionary:
        return arr.dictionary_encode()
    if len(values) >= 2 and draw(st.booleans()):
        cut = draw(st.integers(1, len(values) - 1))
        return pa.chunked_array([arr.slice(0, cut), arr.slice(cut)])
    return arr


@st.composite
def cases(draw: st.DrawFn, contiguous: bool | None = None) -> Case:
    pool = NUMERIC_DOCS if draw(st.booleans()) else NUMERIC_DOCS + TEXT_DOCS
    duplicates = draw(st.sampled_from(["error", "first", "best"]))
    queries = draw(st.lists(st.sampled_from(QUERY_IDS), min_size=1, max_size=4, unique=True))
    blocks: list[list[tuple[str, str, float]]] = []
    judgments: list[tuple[str, str, float]] = []
    in_rank_order = draw(st.booleans())  # like most real runs; evaluate may then rank the judged rows alone
    for i, q in enumerate(queries):
        docs = draw(st.lists(st.sampled_from(pool), max_size=len(pool), unique=True))
        block = [(q, d, draw(st.sampled_from(SCORES))) for d in docs]
        blocks.append(sorted(block, key=lambda r: -r[2]) if in_rank_order else block)
        if i == 0 or draw(st.booleans()):  # some queries are not judged at all (run only)
            for d in pool:
                g = draw(st.sampled_from(GRADES))
                if g is not None:
                    judgments.append((q, d, g))
    if draw(st.booleans()):  # a query judged but not retrieved
        judgments.append(("only_qrels", "a", 1.0))
    # The first query is both retrieved and judged (with none in both, evaluate refuses the input).
    if not any(q == queries[0] for q, _, _ in judgments):
        judgments.append((queries[0], pool[0], 1.0))
    if not blocks[0]:
        blocks[0].append((queries[0], pool[0], 1.0))
    if duplicates != "error":
        for _ in range(draw(st.integers(0, 3))):
            b = draw(st.integers(0, len(blocks) - 1))
            if blocks[b]:
                q, d, _s = blocks[b][draw(st.integers(0, len(blocks[b]) - 1))]
                blocks[b].insert(draw(st.integers(0, len(blocks[b]))), (q, d, draw(st.sampled_from(SCORES))))
        for _ in range(draw(st.integers(0, 2))):
            q, d, _g = judgments[draw(st.integers(0, len(judgments) - 1))]
            judgments.insert(draw(st.integers(0, len(judgments))), (q, d, draw(st.sampled_from([0.0, 1.0, 3.0]))))
    rows = [r for b in blocks for r in b]
    interleave = (not contiguous) if contiguous is not None else (not in_rank_order and draw(st.booleans()))
    if interleave:
        rows = list(draw(st.permutations(rows)))
    knobs = {k: draw(st.sampled_from(v)) for k, v in KNOB_CHOICES.items()}
    knobs["duplicates"] = duplicates
    run = Run(
        _strings(draw, [q for q, _, _ in rows], draw(st.booleans())),
        _strings(draw, [d for _, d, _ in rows], False),
        np.array([s for _, _, s in rows], dtype=np.float64),
        "random run",
    )
    qrels = Qrels(
        _strings(draw, [q for q, _, _ in judgments], draw(st.booleans())),
        _strings(draw, [d for _, d, _ in judgments], False),
        np.array([g for _, _, g in judgments], dtype=np.float64),
        "random qrels",
    )
    return Case(rows, judgments, run, qrels, knobs)


RANDOM = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _as_list(values: pa.Array | pa.ChunkedArray, rows: np.ndarray) -> list[Any]:
    table = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    return table.take(pa.array(rows, type=pa.int64())).to_pylist()


# ---------------------------------------------------------------------------------------------
# 4. exact_rows=False gives every value of exact_rows=True
# ---------------------------------------------------------------------------------------------


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
    docs = _as_list(case.run.doc, aligned.run_row[ranked.row])
    raw = aligned.run_grade[ranked.row]
    out: dict[str, list[tuple[str, float | None]]] = {}
    for q, d, g in zip(ranked.q.tolist(), docs, raw.tolist(), strict=True):
        out.setdefault(str(aligned.query_ids[q]), []).append((str(d), None if math.isnan(g) else g))
    return out


@RANDOM
@given(case=cases())
def test_exact_rows_equal_brute_force_order(case: Case) -> None:
    """The reference side of the next test, checked itself: exact rows are trec_eval's order."""
    measure = case.measures[0]
    aligned = align(case.qrels, case.run, duplicates=case.knobs["duplicates"])
    got = _ranked_lists(case, aligned, rank(aligned, measure.flavor, exact_rows=True))
    want = {q: rows for q, rows in _reference_order(case).items() if rows}
    assert got == want


def _rank_once(cache: dict[Any, Ranked], aligned: Aligned, m: Measure, exact_rows: bool) -> Ranked:
    """``rank`` once per ordering (measures sharing the ordering knobs share it, as in evaluate)."""
    key = (order_key(m.flavor), exact_rows)
    if key not in cache:
        cache[key] = rank(aligned, m.flavor, exact_rows=exact_rows)
    return cache[key]


def _same_values(a: np.ndarray, b: np.ndarray) -> bool:
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))


@RANDOM
@given(case=cases())
def test_inexact_rows_give_every_value_of_exact_rows(case: Case) -> None:
    """evaluate (inexact rows, judged rows only where allowed) against exact rows and every row."""
    measures = list(case.measures)
    results = rankflavor.evaluate(case.qrels, case.run, measures)  # exact_rows=False inside
    assert len(results) == len(measures)
    aligned = align(case.qrels, case.run, duplicates=case.knobs["duplicates"])
    orderings: dict[Any, Ranked] = {}
    exact = rank(aligned, measures[0].flavor, exact_rows=True)
    inexact = rank(
        align(case.qrels, case.run, duplicates=case.knobs["duplicates"]), measures[0].flavor, exact_rows=False
    )
    # What every kernel reads at each rank is the same; only which document sits there may differ.
    for name in ("q", "rank", "grade", "judged", "pooled", "score", "n_ret"):
        np.testing.assert_array_equal(getattr(exact, name), getattr(inexact, name), err_msg=name)
    for m, got in zip(measures, results, strict=True):
        assert got.measure == m
        ranked = _rank_once(orderings, aligned, m, exact_rows=True)
        values, empty = m.spec.kernel(ranked, m)  # every row, bypassing the judged-rows view
        want = aggregate(m, values, empty, aligned)
        assert list(got.queries) == list(want.queries), str(m)
        assert _same_values(got.values, want.values), (str(m), got.values, want.values)
        assert (got.summary == want.summary) or (math.isnan(got.summary) and math.isnan(want.summary)), str(m)


# ---------------------------------------------------------------------------------------------
# 5. The judged-rows view
# ---------------------------------------------------------------------------------------------


def _judged_only(m: Measure) -> bool:
    flag = m.spec.judged_only
    return bool(flag(m)) if callable(flag) else bool(flag)


def test_every_judged_only_metric_is_covered() -> None:
    """A metric registered with judged_only must appear in MEASURE_TEXTS with the view in use."""
    covered = {m.metric for m in _measures(()) if _judged_only(m)}
    declared = {name for name, spec in REGISTRY.items() if spec.judged_only is not False}
    assert declared <= covered, declared - covered
    assert {"P", "AP", "bpref", "ndcg", "dcg", "num_ret", "judged"} <= covered  # the list is not empty by accident


@RANDOM
@given(case=cases())
def test_judged_rows_view_gives_the_values_of_every_row(case: Case) -> None:
    aligned = align(case.qrels, case.run, duplicates=case.knobs["duplicates"])
    orderings: dict[Any, Ranked] = {}
    checked = 0
    for m in case.measures:
        if not _judged_only(m):
            continue
        for exact in (False, True):
            ranked = _rank_once(orderings, aligned, m, exact_rows=exact)
            full_values, full_empty = m.spec.kernel(ranked, m)
            view_values, view_empty = m.spec.kernel(ranked.judged_rows, m)
            np.testing.assert_allclose(view_values, full_values, rtol=0, atol=1e-12, err_msg=str(m))
            np.testing.assert_array_equal(view_empty, full_empty, err_msg=str(m))
            computed, _ = m.spec.compute(ranked, m)
            np.testing.assert_array_equal(computed, view_values, err_msg=str(m))
            checked += 1
    assert checked > 0


@pytest.mark.skipif(not hasattr(order_module, "rank_judged"), reason="order.rank_judged is not in this version")
@RANDOM
@given(case=cases())
def test_ranking_the_judged_rows_alone_equals_the_view(case: Case) -> None:
    """``order.rank_judged`` ranks only the judged rows of a run in rank order: what it returns
    must be what the judged-rows view of the full ranking holds, rank by rank."""
    rank_judged = order_module.rank_judged
    flavor = case.measures[0].flavor
    aligned = align(case.qrels, case.run, duplicates=case.knobs["duplicates"])
    alone = rank_judged(aligned, flavor)
    if alone is None:
        return  # not in rank order, or self hits dropped: evaluate ranks every row
    view = rank(align(case.qrels, case.run, duplicates=case.knobs["duplicates"]), flavor, exact_rows=True).judged_rows
    for name in ("q", "rank", "grade", "judged", "pooled", "score", "n_ret", "jq", "jgrade"):
        np.testing.assert_array_equal(getattr(alone, name), getattr(view, name), err_msg=name)
    assert (alone.dropped_by_depth, alone.dropped_unjudged) == (view.dropped_by_depth, view.dropped_unjudged)
    assert alone.judged_only


def test_judged_rows_have_no_tie_groups() -> None:
    aligned = align(
        Qrels(pa.array(["q"]), pa.array(["a"]), np.array([1.0])),
        Run(pa.array(["q", "q", "q"]), pa.array(["a", "b", "c"]), np.array([1.0, 1.0, 0.5])),
    )
    ranked = rank(aligned, parse_measure("ndcg@3").flavor)
    assert ranked.tie_group.tolist() == [0, 0, 1]
    view = ranked.judged_rows
    assert view.judged_only and len(view.q) == 1 and view.judged_rows is view
    assert view.n_ret.tolist() == ranked.n_ret.tolist()  # per-query counts are the full list's
    with pytest.raises(ValueError, match="tie groups"):
        _ = view.tie_group


# ---------------------------------------------------------------------------------------------
# 6. Query blocks in byte order, each query's rows in file order
# ---------------------------------------------------------------------------------------------

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
    docs = _as_list(run.doc, aligned.run_row)
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


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
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
        assert _same_values(x.values, y.values), str(x.measure)


# ---------------------------------------------------------------------------------------------
# 8. Duplicate detection on a large run (threaded check)
# ---------------------------------------------------------------------------------------------

N_QUERIES, DOCS_PER_QUERY = 420, 500  # 210,000 rows: past align.sizes.PARALLEL_ROWS


#: The duplicated document: query 400's rank 17, repeated at rank 480. It is judged relevant, so
#: keeping the wrong copy of it changes the values.
DUP_QUERY, DUP_FIRST, DUP_AGAIN = 400, 16, 479


def _large_run(style: str) -> tuple[list[str], str]:
    """Run lines (query blocks, scores descending, many ties) and qrels text."""
    rng = np.random.default_rng(8)
    doc_of = (lambda q, j: str(1_000_000 + q * 1000 + j)) if style == "integers" else (lambda q, j: f"doc-{q}-{j}")
    lines: list[str] = []
    for q in range(N_QUERIES):
        scores = np.sort(rng.integers(0, 60, DOCS_PER_QUERY))[::-1]
        lines.extend(f"Q{q} Q0 {doc_of(q, j)} {j + 1} {scores[j]} tag" for j in range(DOCS_PER_QUERY))
    judged = [f"Q{DUP_QUERY} 0 {doc_of(DUP_QUERY, DUP_FIRST)} 3"]
    for q in range(N_QUERIES):
        for j, g in zip(rng.choice(DOCS_PER_QUERY + 50, 12, replace=False), rng.integers(0, 4, 12), strict=True):
            if (q, int(j)) != (DUP_QUERY, DUP_FIRST):
                judged.append(f"Q{q} 0 {doc_of(q, int(j))} {int(g)}")
    return lines, "\n".join(judged) + "\n"


@pytest.mark.parametrize("where", ["same_block", "end_of_file"])
@pytest.mark.parametrize("style", ["integers", "text"])
def test_duplicate_deep_in_a_large_run(tmp_path: Path, style: str, where: str) -> None:
    """One repeated (query, doc) among 210,000 rows: inside its query's block with a lower score,
    or on an extra last line with a higher score (the query's rows are then not contiguous)."""
    lines, qrels_text = _large_run(style)
    assert len(lines) > align_sizes.PARALLEL_ROWS
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(qrels_text)

    first_index = DUP_QUERY * DOCS_PER_QUERY + DUP_FIRST
    first_fields = lines[first_index].split()
    if where == "same_block":
        dup_index = DUP_QUERY * DOCS_PER_QUERY + DUP_AGAIN
        dup_fields = lines[dup_index].split()
        dup_fields[2] = first_fields[2]
        dirty_lines = [*lines[:dup_index], " ".join(dup_fields), *lines[dup_index + 1 :]]
        clean_lines = [*lines[:dup_index], *lines[dup_index + 1 :]]  # the run without the duplicate line
    else:
        dup_index = len(lines)
        dup_fields = [f"Q{DUP_QUERY}", "Q0", first_fields[2], "1", "99", "tag"]
        dirty_lines = [*lines, " ".join(dup_fields)]
        clean_lines = lines
    # The same run keeping the later copy instead: a grade-3 document moves, the values see it.
    later_lines = [*dirty_lines[:first_index], *dirty_lines[first_index + 1 :]]
    paths = {}
    for name, text_lines in (("dirty", dirty_lines), ("clean", clean_lines), ("later", later_lines)):
        paths[name] = tmp_path / f"{name}.txt"
        paths[name].write_text("\n".join(text_lines) + "\n")
    dirty = str(paths["dirty"])

    with pytest.raises(InputError) as info:
        rankflavor.evaluate(str(qrels), dirty, "ndcg@10")
    err = info.value
    assert err.source == dirty
    assert err.line == dup_index + 1
    message = str(err)
    assert f"{dirty}:{dup_index + 1}" in message
    assert f"line {first_index + 1}" in message
    assert first_fields[2] in message and f"Q{DUP_QUERY}" in message

    measures = ["ndcg@10", "AP", "P@10", "bpref", "num_ret", "RR", "ndcg[ties=input_order]", "AP[ties=optimistic]"]
    resolved = rankflavor.evaluate(str(qrels), dirty, measures, duplicates="first")
    assert resolved.counts.run_duplicates_resolved == 1
    assert resolved.counts.run_rows == len(dirty_lines)
    reference = rankflavor.evaluate(str(qrels), str(paths["clean"]), measures, duplicates="first")
    assert reference.counts.run_duplicates_resolved == 0  # no false positive from the threaded check
    assert resolved.per_query() == reference.per_query()
    assert resolved["num_ret"].per_query()[f"Q{DUP_QUERY}"] == DOCS_PER_QUERY - (where == "same_block")
    assert rankflavor.evaluate(str(qrels), str(paths["later"]), measures).per_query() != reference.per_query()


def test_dictionary_array_round_trip() -> None:
    from rankflavor.columns import dictionary_array

    values = ["q2", "q10", "q2", "é", "", "q10"]
    arr = dictionary_array(values)
    assert pa.types.is_dictionary(arr.type)
    assert to_strings(arr) == values
    assert to_strings(arr.dictionary) == ["q2", "q10", "é", ""]  # first-seen order, each once
    assert len(dictionary_array([])) == 0


def test_ndcg_flavors_sharing_ideal_lists_equal_each_alone() -> None:
    """NDCG measures of one alignment share each query's sorted ideal gains (cached by the
    knobs the gains depend on); every cutoff, discount, ideal cut and gain scored together
    equals the same measure scored on its own."""
    rng = np.random.default_rng(11)
    qrels = {f"q{i}": {f"d{j}": int(rng.integers(-1, 4)) for j in rng.choice(60, 25, replace=False)} for i in range(40)}
    run = {f"q{i}": {f"d{j}": float(rng.integers(0, 6)) for j in rng.choice(60, 30, replace=False)} for i in range(38)}
    measures = [
        "ndcg", "ndcg@5", "ndcg@10", "ndcg@10[discount=jk(3)]", "ndcg@10[discount=reciprocal]",
        "ndcg@10[ideal_cut=none]", "ndcg@10[ideal_cut=hits]", "ndcg@10[gain=exp2]", "ndcg@5[gain=exp2]",
        "ndcg@10[gain={1:3,2:7}]", "ndcg@10[negatives=zero]", "ndcg@10[min_grade=2]",
    ]  # fmt: skip
    together = rankflavor.evaluate(qrels, run, measures)
    for i, name in enumerate(measures):
        alone = rankflavor.evaluate(qrels, run, [name])
        assert together[i].per_query() == alone[0].per_query(), name


@pytest.mark.parametrize("names", [["ndcg_cut.10"], ["ndcg_cut.10", "map", "P.10", "recip_rank", "bpref"]])
def test_evaluate_frees_its_alignment_without_the_cycle_collector(monkeypatch: pytest.MonkeyPatch, names: list[str]) -> None:
    """A judged-only ranking once cached itself as its own ``judged_rows``: the cycle kept the
    alignment (every run row's arrays) alive after ``evaluate`` returned, until the next full
    collection. Reference counting alone must free it."""
    import importlib
    import weakref

    ev = importlib.import_module("rankflavor.evaluate")  # the package's ``evaluate`` is the function
    engine = importlib.import_module("rankflavor.engine")

    kept: list[weakref.ref[Any]] = []

    def recording_align(*args: Any, **kwargs: Any) -> Any:
        aligned = align(*args, **kwargs)
        kept.append(weakref.ref(aligned))
        return aligned

    monkeypatch.setattr(engine, "align", recording_align)
    qrels = {f"q{i}": {f"d{j}": j % 3 for j in range(0, 20, 2)} for i in range(5)}
    run = {f"q{i}": {f"d{j}": float(j % 7) for j in range(20)} for i in range(5)}
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        results = ev.evaluate(qrels, run, names, preset="trec_eval")
        assert kept and results[0].n_queries == 5
        del results
        assert all(ref() is None for ref in kept)
    finally:
        if was_enabled:
            gc.enable()
