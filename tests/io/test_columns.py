"""``rankflavor.io.columns.take``: rows gathered chunk by chunk, as pyarrow's take gathers them."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st


@settings(max_examples=150, deadline=None)
@given(
    chunks=st.lists(st.lists(st.sampled_from(["a", "bb", "", "d7", "é"]), max_size=6), min_size=0, max_size=5),
    picks=st.lists(st.integers(0, 10**6), max_size=12),
    encoded=st.booleans(),
    chunked=st.booleans(),
)
def test_take_of_chunks_equals_pyarrows_take(chunks: list[list[str]], picks: list[int], encoded: bool, chunked: bool) -> None:
    """columns.take gathers chunk by chunk, in any row order, from string or dictionary chunks."""
    from rankflavor.io.columns import take

    arrays = [pa.array(c, type=pa.string()) for c in chunks]
    if encoded:
        arrays = [a.dictionary_encode() for a in arrays]
    kind = pa.dictionary(pa.int32(), pa.string()) if encoded else pa.string()
    values = pa.chunked_array(arrays, type=kind) if chunked or not arrays else pa.concat_arrays(arrays)
    n = len(values)
    rows = np.array([p % n for p in picks] if n else [], dtype=np.int64)
    got = take(values, rows)
    want = [values[int(r)].as_py() for r in rows]
    assert got.type == pa.string() and got.to_pylist() == want
