"""``rankflavor.io.docnos``: canonical integer docnos (by bytes and by cast), their masks, and
the 64-bit hashes of text docnos.

Oracles: a regular-expression reference of "canonical decimal integer", Python's ``int``, and
values worked out by hand ("7" and "007" stay distinct documents end to end).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankflavor
from rankflavor.io.docnos import canonical_integer_range as _canonical_integer_range
from rankflavor.io.docnos import canonical_integers, canonical_mask, decimal_strings, hash64
from rankflavor.io.docnos import canonical_integers as _canonical_integers

from ..support.io_cases import run_text

# ---------------------------------------------------------------------------------------------
# Canonical integer docnos
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
            r_path.write_text(run_text(retrieved))
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


@settings(max_examples=300, deadline=None)
@given(values=st.one_of(st.lists(st.text(alphabet="0123456789+-. e٣", max_size=20), max_size=10),
                        st.lists(st.text(alphabet="0123456789", max_size=20), max_size=10)))  # (the cast's digits-only path)
def test_canonical_mask_by_bytes_and_by_cast_agree(values: list[str]) -> None:
    canonical = [v.isascii() and v.isdigit() and 1 <= len(v) <= 18 and (v[0] != "0" or len(v) == 1) for v in values]
    full = pa.array(["x", *values], type=pa.string())
    for arr in (pa.array(values, type=pa.string()), full.slice(1)):  # offsets from 0, and not
        by_bytes = canonical_mask(arr, cast=False)
        by_cast = canonical_mask(arr, cast=True)
        assert by_bytes[0].tolist() == by_cast[0].tolist() == canonical
        assert by_bytes[1].tolist() == by_cast[1].tolist()
        whole = canonical_integers(arr, cast=False)
        assert (whole is not None) == all(canonical)
        expected = [int(v) if ok else 0 for v, ok in zip(values, canonical, strict=True)]
        assert by_bytes[1].tolist() == expected
        if whole is not None:
            assert whole.tolist() == expected


def test_text_docnos_are_never_cast(monkeypatch: pytest.MonkeyPatch) -> None:
    """A failing cast parses the whole array before it fails (0.1 s per 240,000 docnos): text
    docnos must be told apart before casting."""
    import pyarrow.compute as pc

    def no_cast(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("pc.cast called on text docnos")

    monkeypatch.setattr(pc, "cast", no_cast)
    assert canonical_integers(pa.array([f"doc{i}" for i in range(1000)]), cast=True) is None


# ---------------------------------------------------------------------------------------------
# Hashes of text docnos
# ---------------------------------------------------------------------------------------------


def test_hash64_is_a_function_of_the_string_alone() -> None:
    values = ["", "a", "ab", "abcdefgh", "abcdefghi", "abcdefgh\x00", "x" * 39, "x" * 40, "é", "a"]
    arr = pa.array(values)
    h = hash64(arr)
    assert h.dtype == np.uint64
    alone = [int(hash64(pa.array([v]))[0]) for v in values]
    assert h.tolist() == alone  # whatever the longest string beside it
    assert hash64(arr.slice(3, 4)).tolist() == alone[3:7]
    assert hash64(pa.chunked_array([arr.slice(0, 2), arr.slice(2)])).tolist() == alone
    assert hash64(pa.array(values, type=pa.large_string())).tolist() == alone
    assert len(set(alone)) == len(set(values))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.integers(0, 10**18 - 1), st.sampled_from([0, 9, 10, 99, 100, 10**17, 10**18 - 1])),
                max_size=60), st.integers(1, 7))
def test_decimal_strings_are_the_values_decimal_text(values: list[int], block: int) -> None:
    want = [str(v) for v in values]
    assert decimal_strings(np.array(values, dtype=np.int64)).to_pylist() == want
    # rows written a few at a time: every block boundary is crossed
    got = decimal_strings(np.array(values, dtype=np.int64), block=block)
    assert got.to_pylist() == want and got.type == pa.string()
