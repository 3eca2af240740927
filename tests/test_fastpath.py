"""The fast path of commit ea133a9 must give the numbers of the plain path it replaced.

What is protected, and by which oracle (nothing here is copied from rankflavor's output):

* ``rankflavor.columns`` (Arrow <-> NumPy through buffers): against Python lists and pyarrow's own
  ``to_pylist``, on sliced, chunked, bit-packed, empty and null-bearing arrays.
* No pandas import: ``sys.modules`` of a fresh interpreter after evaluating through the library
  and the command line, for every reader path (columnar, whitespace-normalised, line by line, gzip).
* ``docnos.canonical_integers``: against a regular-expression reference of "canonical decimal
  integer"; "7" and "007" stay distinct documents end to end (values worked out by hand).
* The run tag read from the file's last line equals the sixth field of the last line, for every
  file layout.
* The threaded duplicate check on a large run names the file and both lines, and
  ``duplicates=first`` equals the run without the duplicate line.

The ordering fast paths (inexact rows, the judged rows alone, the top-k prefix, query blocks
moved whole) are tested through the order package's public seams in ``test_order_*.py`` and
``test_plan.py``.
"""

from __future__ import annotations

import gc
import gzip
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankflavor
from rankflavor import align as align_module
from rankflavor.columns import as_numpy, from_numpy, string_array, to_strings
from rankflavor.docnos import canonical_integer_range as _canonical_integer_range
from rankflavor.docnos import canonical_integers as _canonical_integers
from rankflavor.errors import InputError
from rankflavor.io.trec import read_run

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
# Small TREC files shared by several sections
# ---------------------------------------------------------------------------------------------

QRELS_TEXT = textwrap.dedent(
    """\
    q1 0 d1 2
    q1 0 d2 0
    q1 0 d3 1
    q1 0 d9 1
    q2 0 e1 1
    q2 0 e5 3
    q3 0 f1 1
    """
)
RUN_ROWS = [
    ("q1", "d3", 9.0), ("q1", "d4", 8.0), ("q1", "d1", 8.0), ("q1", "d2", 7.5), ("q1", "d7", 1.0),
    ("q2", "e5", 3.0), ("q2", "e2", 3.0), ("q2", "e1", 2.0),
    ("q4", "g1", 1.0),
]  # fmt: skip


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

MEASURES_TREC = ["ndcg_cut.10", "map", "P.10", "bpref"]

_NO_PANDAS_SCRIPT = """
import json, runpy, sys
qrels, run = sys.argv[1], sys.argv[2]
import rankflavor
res = rankflavor.evaluate(qrels, run, {measures!r}, preset="trec_eval")
library = {{m.measure.display: m.summary for m in res}}
after_library = "pandas" in sys.modules
sys.argv = ["rankflavor", "eval", qrels, run, "--preset", "trec_eval", "--format", "json",
            *[x for m in {measures!r} for x in ("-m", m)]]
code = None
try:
    runpy.run_module("rankflavor", run_name="__main__", alter_sys=True)
except SystemExit as exc:
    code = exc.code
print("\\n@@" + json.dumps({{"library": library, "after_library": after_library,
                            "after_cli": "pandas" in sys.modules, "exit": code}}))
"""


def _layouts(tmp_path: Path) -> dict[str, tuple[Path, Path]]:
    """The same judgments and run in every layout the readers treat differently."""
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(QRELS_TEXT)
    plain = tmp_path / "run.txt"
    plain.write_text(_run_text(RUN_ROWS))
    tabs = tmp_path / "run_tabs.txt"  # whitespace-normalised columnar path
    tabs.write_text(_run_text(RUN_ROWS, sep="\t"))
    qrels_tabs = tmp_path / "qrels_tabs.txt"
    qrels_tabs.write_text(QRELS_TEXT.replace(" ", "\t"))
    lines = tmp_path / "run_lines.txt"  # comments and blank lines: the line-by-line path
    body = _run_text(RUN_ROWS).splitlines()
    lines.write_text("# a comment\n" + "\n".join(body[:3]) + "\n\n" + "\n".join(body[3:]) + "\n")
    gz = tmp_path / "run.txt.gz"
    gz.write_bytes(gzip.compress(_run_text(RUN_ROWS).encode()))
    return {"plain": (qrels, plain), "tabs": (qrels_tabs, tabs), "lines": (qrels, lines), "gzip": (qrels, gz)}


@pytest.mark.parametrize("layout", ["plain", "tabs", "lines", "gzip"])
def test_evaluate_and_cli_do_not_import_pandas(tmp_path: Path, layout: str) -> None:
    qrels, run = _layouts(tmp_path)[layout]
    script = _NO_PANDAS_SCRIPT.format(measures=MEASURES_TREC)
    proc = subprocess.run(
        [sys.executable, "-c", script, str(qrels), str(run)], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.rsplit("\n@@", 1)[1])
    assert report["exit"] in (0, None), proc.stderr
    assert report["after_library"] is False, "rankflavor.evaluate imported pandas"
    assert report["after_cli"] is False, "python -m rankflavor eval imported pandas"
    # The subprocess really evaluated: the same four numbers as this process for the same files.
    here = rankflavor.evaluate(str(qrels), str(run), MEASURES_TREC, preset="trec_eval")
    assert report["library"] == {m.measure.display: m.summary for m in here}
    cli = json.loads(proc.stdout.rsplit("\n@@", 1)[0])
    assert {m["name"]: m["value"] for m in cli["measures"]} == {m.measure.display: m.summary for m in here}


_NO_PANDAS_PATHS_SCRIPT = """
import json, sys
import numpy as np
import rankflavor
from rankflavor.io import trec
qrels, run = sys.argv[1], sys.argv[2]
seen = {}
seen["chunked"] = rankflavor.evaluate(qrels, run, "ndcg@10", chunk_rows=7)[0].mean
seen["pandas after chunked"] = "pandas" in sys.modules
seen["dicts"] = rankflavor.evaluate({"q1": {"a": 2}}, {"q1": {"a": 1.0, "b": 2.0}}, "ndcg@10")[0].mean
from rankflavor.arrays import ndcg_score
seen["arrays"] = float(ndcg_score(np.array([[3, 2, 0, 1]]), np.array([[0.1, 0.5, 0.3, 0.2]])))
trec._PIECES_BYTES, trec._PIECE_BYTES = 0, 300  # the piece reader
seen["pieces"] = rankflavor.evaluate(qrels, run, "ndcg@10")[0].mean
from rankflavor.explain import explain
seen["explain"] = len(explain(qrels, run, "q1", "ndcg@10").rows)
print(json.dumps({"seen": seen, "pandas": "pandas" in sys.modules}))
"""


def test_chunks_dicts_arrays_pieces_and_explain_import_no_pandas(tmp_path: Path) -> None:
    """pa.array on Python objects imports pandas when it is installed (~0.4 s); the other
    entry points build arrays without it. (Chunked evaluation, dict inputs and the arrays API
    each imported it before this test.)"""
    pytest.importorskip("pandas", reason="pandas is not installed here, so no import of it can be seen")
    qrels, run = _layouts(tmp_path)["plain"]
    proc = subprocess.run([sys.executable, "-c", _NO_PANDAS_PATHS_SCRIPT, str(qrels), str(run)], capture_output=True,
                          text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.splitlines()[-1])
    here = rankflavor.evaluate(str(qrels), str(run), "ndcg@10")[0].mean
    assert report["seen"]["chunked"] == report["seen"]["pieces"] == here  # the paths really ran
    assert report["seen"]["explain"] > 0 and 0 < report["seen"]["arrays"] < 1
    assert report["seen"]["pandas after chunked"] is False, "chunked evaluation imported pandas"
    assert report["pandas"] is False, "an entry point imported pandas"


def test_python_dash_m_eval_imports_no_pandas_module(tmp_path: Path) -> None:
    """The real ``python -m rankflavor eval`` process, watched through ``-X importtime``."""
    qrels, run = _layouts(tmp_path)["plain"]
    metrics = [x for m in MEASURES_TREC for x in ("-m", m)]
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "rankflavor", "eval", str(qrels), str(run), "--preset", "trec_eval",
         *metrics],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    imported = [line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")]
    assert "numpy" in imported and "pyarrow" in imported  # the import log was captured
    assert not [m for m in imported if m == "pandas" or m.startswith("pandas.")]
    assert "ndcg_cut_10" in proc.stdout


def test_every_layout_gives_the_same_values(tmp_path: Path) -> None:
    """Columnar, normalised, line-by-line and gzip readers: one set of numbers."""
    results = {
        name: rankflavor.evaluate(str(q), str(r), [*MEASURES_TREC, "num_ret", "num_rel_ret"], preset="trec_eval")
        for name, (q, r) in _layouts(tmp_path).items()
    }
    values = {name: res.per_query() for name, res in results.items()}
    assert values["plain"] == values["tabs"] == values["lines"] == values["gzip"]
    # The line-by-line layout did go through the line path: it counted its comment and blank line.
    assert (results["lines"].counts.comment_lines, results["lines"].counts.blank_lines) == (1, 1)
    assert (results["plain"].counts.comment_lines, results["plain"].counts.blank_lines) == (0, 0)


# ---------------------------------------------------------------------------------------------
# 3. Canonical integer docnos
# ---------------------------------------------------------------------------------------------

_CANONICAL = re.compile(r"0|[1-9][0-9]{0,17}")


def _reference_canonical(values: list[str]) -> list[int] | None:
    """All values canonical decimal integers (ASCII digits, no sign, no leading zero, <= 18 digits)?"""
    if all(v.isascii() and _CANONICAL.fullmatch(v) for v in values):
        return [int(v) for v in values]
    return None


def _canonical(values: pa.Array | pa.ChunkedArray) -> list[int] | None:
    """Both readings (NumPy on the bytes for small inputs, pyarrow's cast for large) must agree."""
    by_bytes = _canonical_integers(values, cast=False)
    by_cast = _canonical_integers(values, cast=True)
    as_list = [None if got is None else [int(x) for x in got] for got in (by_bytes, by_cast)]
    assert as_list[0] == as_list[1], f"bytes {as_list[0]} != cast {as_list[1]}"
    if isinstance(values, pa.Array):  # the read workers' form: the cast's values and their range
        ranged = _canonical_integer_range(values)
        if as_list[0] is None:
            assert ranged is None
        else:
            assert ranged is not None and [int(x) for x in ranged[0]] == as_list[0]
            assert ranged[1:] == ((min(as_list[0]), max(as_list[0])) if as_list[0] else (0, -1))
    return as_list[0]


@pytest.mark.parametrize("good", ["0", "7", "10", "123456789012345678", "999999999999999999"])
def test_canonical_integers_accepts(good: str) -> None:
    assert _canonical(pa.array([good, "5", "0"])) == [int(good), 5, 0]


@pytest.mark.parametrize(
    "bad", ["007", "00", "+7", "-1", "1.0", "1e3", " 7", "7 ", "١٢", "٣", "1000000000000000000", "", "7a", "\x00"]
)
def test_canonical_integers_rejects(bad: str) -> None:
    assert _canonical(pa.array(["5", bad, "6"])) is None
    assert _canonical(pa.array([bad])) is None
    assert _canonical(pa.array(["5", bad], type=pa.large_string())) is None


@pytest.mark.parametrize(
    "strings",
    [["1e3", "07"], ["1e1", "05"], [" 10", "07"], ["0x1", "07"], ["1_000", "07"],
     # 14 bytes for a value of 15 digits: pyarrow's parse reads a 0x prefix (281474976710655)
     ["0xFFFFFFFFFFFF", "07"], ["0XFFFFFFFFFFFFF", "07"]],
)
def test_canonical_integers_are_not_fooled_by_a_short_spelling(strings: list[str]) -> None:
    """The cast's check counts bytes against digits over all docnos: it holds only while the
    integer parse accepts no spelling shorter than the value's digits (an exponent, say), which
    could make up for a leading zero elsewhere. These pairs would balance; they come after
    the docnos the cast's caller peeks at, so the cast itself must refuse them."""
    assert _canonical(pa.array(["5"] * 300 + strings * 3)) is None


def test_canonical_integers_sliced_and_chunked() -> None:
    arr = pa.array(["007", "5", "61", "+1", "0"])
    assert _canonical(arr.slice(1, 2)) == [5, 61]  # the bad neighbours lie outside the slice
    assert _canonical(arr.slice(1, 3)) is None
    assert _canonical(arr.slice(4, 1)) == [0]
    assert _canonical(arr.slice(2, 0)) == []
    assert _canonical(pa.chunked_array([arr.slice(1, 2), pa.array(["9", "10"])])) == [5, 61, 9, 10]
    assert _canonical(pa.chunked_array([pa.array(["9"]), arr.slice(0, 2)])) is None
    assert _canonical(pa.chunked_array([], type=pa.string())) == []
    assert _canonical(pa.array([1, 2])) is None  # not strings at all


@settings(max_examples=300, deadline=None)
@given(
    values=st.lists(st.text(alphabet="0123456789+-. e٣xF", max_size=20), max_size=8),
    start=st.integers(0, 8),
    length=st.integers(0, 8),
    large=st.booleans(),
)
def test_canonical_integers_against_reference(values: list[str], start: int, length: int, large: bool) -> None:
    arr = pa.array(values, type=pa.large_string() if large else pa.string())
    start = min(start, len(values))
    length = min(length, len(values) - start)
    assert _canonical(arr.slice(start, length)) == _reference_canonical(values[start : start + length])
    if len(values) >= 2:
        half = len(values) // 2
        chunked = pa.chunked_array([arr.slice(0, half), arr.slice(half)])
        assert _canonical(chunked) == _reference_canonical(values)


@pytest.mark.parametrize("source", ["files", "dicts"])
def test_leading_zero_docno_is_another_document(tmp_path: Path, source: str) -> None:
    """trec_eval compares docnos as strings: "007" judged relevant says nothing about "7"."""
    cases = [
        # (qrels rows, run rows, expected num_rel_ret, RR, num_ret) worked out by hand
        ([("q1", "007", 1), ("q1", "x", 0)], [("q1", "7", 3.0), ("q1", "007", 2.0), ("q1", "8", 1.0)], 1, 0.5, 3),
        ([("q1", "7", 1)], [("q1", "007", 3.0), ("q1", "7", 2.0)], 1, 0.5, 2),
        ([("q1", "007", 1), ("q1", "7", 0)], [("q1", "7", 3.0), ("q1", "8", 2.0)], 0, 0.0, 2),  # run all canonical
        ([("q1", "7", 1), ("q1", "007", 0)], [("q1", "8", 3.0), ("q1", "7", 2.0)], 1, 0.5, 2),
        ([("q1", "0", 1), ("q1", "00", 1)], [("q1", "00", 3.0), ("q1", "0", 2.0), ("q1", "000", 1.0)], 2, 1.0, 3),
    ]
    for i, (judged, retrieved, rel_ret, rr, n_ret) in enumerate(cases):
        if source == "files":
            q_path, r_path = tmp_path / f"q{i}.txt", tmp_path / f"r{i}.txt"
            q_path.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in judged))
            r_path.write_text(_run_text(retrieved))
            qrels: Any = str(q_path)
            run: Any = str(r_path)
        else:
            qrels = {"q1": {d: g for _, d, g in judged}}
            run = {"q1": {d: s for _, d, s in retrieved}}
        res = rankflavor.evaluate(qrels, run, ["num_rel_ret", "RR", "num_ret", "P@10"])
        assert res["num_rel_ret"].per_query() == {"q1": float(rel_ret)}, (i, judged, retrieved)
        assert res["RR"].per_query() == {"q1": rr}, (i, judged, retrieved)
        assert res["num_ret"].per_query() == {"q1": float(n_ret)}
        assert res["P@10"].per_query() == {"q1": rel_ret / 10}


def _as_list(values: pa.Array | pa.ChunkedArray, rows: np.ndarray) -> list[Any]:
    table = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    return table.take(pa.array(rows, type=pa.int64())).to_pylist()


# ---------------------------------------------------------------------------------------------
# 7. Run tag from the last line
# ---------------------------------------------------------------------------------------------


def _tag_of_last_line(data: bytes) -> str:
    lines = [ln for ln in data.decode().splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    return lines[-1].split()[5]


def _tag_lines(n: int, last_doc: str = "dLast", sep: str = " ") -> list[str]:
    lines = [sep.join(["q1", "Q0", f"d{i}", str(i + 1), str(100 - i), f"early{i % 3}"]) for i in range(n)]
    lines.append(sep.join(["q2", "Q0", last_doc, "1", "0.5", "theLastTag"]))
    return lines


@pytest.mark.parametrize(
    "layout",
    ["plain", "crlf", "no_newline", "crlf_no_newline", "gzip", "gzip_crlf", "tabs", "trailing_blanks",
     "comment_and_blank", "trailing_newlines", "only_line"],
)  # fmt: skip
def test_run_tag_is_the_last_lines(tmp_path: Path, layout: str) -> None:
    lines = _tag_lines(0 if layout == "only_line" else 50, sep="\t" if layout == "tabs" else " ")
    if layout == "trailing_blanks":
        lines = [ln + "  " for ln in lines]
    if layout == "comment_and_blank":
        lines = ["# header q Q0 d 1 1 nottag", *lines[:10], "", *lines[10:]]
    eol = "\r\n" if "crlf" in layout else "\n"
    text = eol.join(lines) + ("" if "no_newline" in layout else eol)
    if layout == "trailing_newlines":
        text += "\n\n"
    data = text.encode()
    path = tmp_path / "run.txt"
    path.write_bytes(gzip.compress(data) if layout.startswith("gzip") else data)
    want = _tag_of_last_line(data)
    assert want == "theLastTag"
    assert read_run(path).tag == want


@pytest.mark.parametrize("doc_length", [4000, 4089, 4090, 4096, 4097, 5000, 16500, 70000])
@pytest.mark.parametrize("eol", ["\n", "\r\n", ""])
def test_run_tag_after_a_long_last_line(tmp_path: Path, doc_length: int, eol: str) -> None:
    """Last lines around and past the 4096-byte first read of the file's tail."""
    lines = _tag_lines(200, last_doc="x" * doc_length)
    data = ("\n".join(lines) + eol).encode() if eol != "\r\n" else ("\r\n".join(lines) + eol).encode()
    path = tmp_path / "run.txt"
    path.write_bytes(data)
    want = _tag_of_last_line(data)
    run = read_run(path)
    assert run.tag == want
    assert _as_list(run.doc, np.array([len(run) - 1]))[0] == "x" * doc_length


def test_run_tag_long_line_is_the_only_line(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    data = ("q1 Q0 " + "y" * 9000 + " 1 2.5 onlyTag\n").encode()
    path.write_bytes(data)
    assert read_run(path).tag == _tag_of_last_line(data) == "onlyTag"


def test_run_tag_in_results_provenance(tmp_path: Path) -> None:
    qrels, run = _layouts(tmp_path)["plain"]
    res = rankflavor.evaluate(str(qrels), str(run), "P@5")
    assert res.provenance["run"]["tag"] == _tag_of_last_line(run.read_bytes()) == "lastTag"


def test_tab_inside_a_single_spaced_line_reads_like_the_line_path(tmp_path: Path) -> None:
    run_path = tmp_path / "run.txt"
    run_path.write_text("q1 Q0 d\tx 1 1.0 tag\nq1 Q0 e 2 0.5 tag\n")
    run = read_run(run_path)
    want = [ln.split()[2] for ln in run_path.read_text().splitlines()]  # whitespace split, as trec_eval
    assert _as_list(run.doc, np.arange(len(run))) == want


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
    assert len(lines) > align_module._PARALLEL_ROWS
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


@pytest.mark.parametrize("blank", ["\r", "\v", "\f"])
def test_other_blanks_inside_a_line_read_like_the_line_path(tmp_path: Path, blank: str) -> None:
    """pyarrow ends a line at a lone CR and keeps vertical tabs and form feeds inside fields;
    the line path (and trec_eval) treat them as blanks. The fast path must step aside."""
    from rankflavor.io.trec import _slow_run

    text = f"q1 Q0 d{blank}x 1 1.0 tag\nq1 Q0 e 2 0.5 tag\n"
    run_path = tmp_path / "run.txt"
    run_path.write_bytes(text.encode())
    fast = read_run(run_path)
    slow = _slow_run(str(run_path), text.encode())
    assert to_strings(fast.doc) == to_strings(slow.doc) == ["d", "e"]
    assert fast.score.tolist() == slow.score.tolist() == [1.0, 0.5]
    assert fast.extra_fields == slow.extra_fields == 1


def _evaluate_in_child(paths: tuple[str, str]) -> float:
    return float(rankflavor.evaluate(paths[0], paths[1], ["ndcg_cut.10"], preset="trec_eval")[0].mean)


@pytest.mark.skipif("fork" not in __import__("multiprocessing").get_all_start_methods(), reason="needs fork")
def test_evaluation_works_in_a_process_forked_after_one(tmp_path: Path) -> None:
    """Worker threads are per call: a module-level pool would be inherited by a forked child
    without its thread, and the child's evaluation would wait on it forever (it did)."""
    import multiprocessing

    qrels, run = _layouts(tmp_path)["plain"]
    paths = (str(qrels), str(run))
    here = _evaluate_in_child(paths)  # the parent evaluates first, starting its workers
    with multiprocessing.get_context("fork").Pool(1) as pool:
        there = pool.map_async(_evaluate_in_child, [paths]).get(timeout=120)
    assert there == [here]
