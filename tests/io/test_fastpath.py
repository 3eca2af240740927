"""The fast path of commit ea133a9 must give the numbers of the plain path it replaced.

What is protected, and by which oracle (nothing here is copied from rankflavor's output):

* ``rankflavor.io.columns`` (Arrow <-> NumPy through buffers): against Python lists and pyarrow's own
  ``to_pylist``, on sliced, chunked, bit-packed, empty and null-bearing arrays.
* The threaded duplicate check on a large run names the file and both lines, and
  ``duplicates=first`` equals the run without the duplicate line.

The ordering fast paths (inexact rows, the judged rows alone, the top-k prefix, query blocks
moved whole) are tested through the order package's public seams in ``test_order_*.py`` and
``test_plan.py``; the reader's (no pandas import, canonical integer docnos, the run tag) in
``test_io_inputs.py``, ``test_docnos.py`` and ``test_io_lines.py``.
"""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankflavor
from rankflavor.align import sizes as align_sizes
from rankflavor.errors import InputError
from rankflavor.io.columns import as_numpy, from_numpy, string_array, to_strings

# ---------------------------------------------------------------------------------------------
# 1. rankflavor.io.columns
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
# Small TREC files shared by several sections
# ---------------------------------------------------------------------------------------------



def _run_line(q: str, d: str, rank_: int, s: float, tag: str = "tagA", sep: str = " ") -> str:
    return sep.join([q, "Q0", d, str(rank_), repr(s), tag])


def _run_text(rows: list[tuple[str, str, float]], last_tag: str = "lastTag", sep: str = " ") -> str:
    lines = [_run_line(q, d, i + 1, s, "tagA", sep) for i, (q, d, s) in enumerate(rows)]
    q, d, s = rows[-1]
    lines[-1] = _run_line(q, d, len(rows), s, last_tag, sep)
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# 2. No pandas import on the command-line path
# ---------------------------------------------------------------------------------------------
















# ---------------------------------------------------------------------------------------------
# 3. Canonical integer docnos
# ---------------------------------------------------------------------------------------------



















def _as_list(values: pa.Array | pa.ChunkedArray, rows: np.ndarray) -> list[Any]:
    table = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    return table.take(pa.array(rows, type=pa.int64())).to_pylist()


# ---------------------------------------------------------------------------------------------
# 7. Run tag from the last line
# ---------------------------------------------------------------------------------------------
















# ---------------------------------------------------------------------------------------------
# 8. Duplicate detection on a large run (threaded check)
# ---------------------------------------------------------------------------------------------

N_QUERIES, DOCS_PER_QUERY = 420, 500  # 210,000 rows: past align._PARALLEL_ROWS


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
    from rankflavor.io.columns import dictionary_array

    values = ["q2", "q10", "q2", "é", "", "q10"]
    arr = dictionary_array(values)
    assert pa.types.is_dictionary(arr.type)
    assert to_strings(arr) == values
    assert to_strings(arr.dictionary) == ["q2", "q10", "é", ""]  # first-seen order, each once
    assert len(dictionary_array([])) == 0






