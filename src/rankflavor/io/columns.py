"""Arrow <-> NumPy for the hot path, through buffers.

``pyarrow``'s own conversions (``pa.array``, ``Array.to_numpy``, ``to_pylist``, scalars in
compute calls) import pandas when it is installed, an import that costs more than evaluating
a small run. These helpers build and read arrays from their buffers
instead, so a command-line evaluation never imports pandas. They handle exactly the layouts the
readers produce (no nulls); anything else raises ``TypeError`` rather than guess.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from rankflavor.io import arrow_ops

_NUMERIC = {
    pa.int8(): np.int8, pa.int16(): np.int16, pa.int32(): np.int32, pa.int64(): np.int64,
    pa.uint8(): np.uint8, pa.uint16(): np.uint16, pa.uint32(): np.uint32, pa.uint64(): np.uint64,
    pa.float32(): np.float32, pa.float64(): np.float64,
}  # fmt: skip
_ARROW = {np.dtype(v): k for k, v in _NUMERIC.items()}


def as_numpy(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A NumPy view (one chunk) or copy (several) of a null-free numeric or boolean array."""
    if isinstance(values, pa.ChunkedArray):
        parts = [as_numpy(c) for c in values.chunks]
        if len(parts) == 1:
            return parts[0]
        if not parts:
            return np.zeros(0, dtype=_dtype(values.type))
        return np.concatenate(parts)
    if values.null_count:
        raise TypeError(f"as_numpy: array has {values.null_count} null(s)")
    n, offset = len(values), values.offset
    data = values.buffers()[1]
    if pa.types.is_boolean(values.type):
        if n == 0:
            return np.zeros(0, dtype=bool)
        bits = np.unpackbits(np.frombuffer(data, dtype=np.uint8), bitorder="little")
        return bits[offset : offset + n].astype(bool)
    dtype = _dtype(values.type)
    if n == 0:
        return np.zeros(0, dtype=dtype)
    return np.frombuffer(data, dtype=dtype, count=n, offset=offset * np.dtype(dtype).itemsize)


def _dtype(kind: pa.DataType) -> type:
    if pa.types.is_boolean(kind):
        return np.bool_
    try:
        return _NUMERIC[kind]
    except KeyError:
        raise TypeError(f"as_numpy: expected a numeric or boolean array, received {kind}") from None


def from_numpy(values: np.ndarray) -> pa.Array:
    """A zero-copy Arrow array over a 1-d numeric NumPy array (copied first if not contiguous)."""
    values = np.ascontiguousarray(values)
    if values.dtype == bool:
        packed = np.packbits(values, bitorder="little")
        return pa.Array.from_buffers(pa.bool_(), len(values), [None, pa.py_buffer(packed)])
    try:
        kind = _ARROW[values.dtype]
    except KeyError:
        raise TypeError(f"from_numpy: expected a numeric array, received dtype {values.dtype}") from None
    return pa.Array.from_buffers(kind, len(values), [None, pa.py_buffer(values)])


def string_array(values: Sequence[str]) -> pa.Array:
    """An Arrow string array from Python strings (large_string past 2 GiB of text).

    No Python step per string (``map`` and ``join`` iterate in C): ASCII text, the common case,
    is encoded once, and a string's length is then its length in bytes.
    """
    text = "".join(values)
    if text.isascii():
        lengths = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
        raw = text.encode("ascii")
    else:
        encoded = list(map(str.encode, values))  # UTF-8
        lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
        raw = b"".join(encoded)
    offsets = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    data = pa.py_buffer(raw)
    if offsets[-1] < 1 << 31:
        return pa.Array.from_buffers(pa.string(), len(values), [None, pa.py_buffer(offsets.astype(np.int32)), data])
    return pa.Array.from_buffers(pa.large_string(), len(values), [None, pa.py_buffer(offsets), data])


def dictionary_array(values: Sequence[str]) -> pa.DictionaryArray:
    """A dictionary-encoded string array (int32 indices, first-seen order) from Python strings."""
    code: dict[str, int] = {}
    indices = np.fromiter((code.setdefault(v, len(code)) for v in values), dtype=np.int32, count=len(values))
    return pa.DictionaryArray.from_arrays(from_numpy(indices), string_array(list(code)))


def plain_strings(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    """One string array, whether ``values`` is chunked or dictionary-encoded."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks != 1 else values.chunk(0)
    if pa.types.is_dictionary(values.type):
        values = values.dictionary_decode()
    return values


def take(values: pa.Array | pa.ChunkedArray, rows: np.ndarray) -> pa.Array:
    """``values[rows]`` as one array (dictionary chunks decoded).

    A chunked array is taken from chunk by chunk: pyarrow's take of a chunked array costs a
    pass over every chunk however few the rows.
    """
    if not isinstance(values, pa.ChunkedArray) or values.num_chunks <= 1:
        one = values.chunk(0) if isinstance(values, pa.ChunkedArray) and values.num_chunks else values
        if isinstance(one, pa.ChunkedArray):  # no chunks at all
            one = pa.nulls(0, one.type)  # pa.array would import pandas
        picked = arrow_ops.take(one, from_numpy(rows))
        return picked.dictionary_decode() if pa.types.is_dictionary(picked.type) else picked
    ends = np.cumsum([len(c) for c in values.chunks])
    chunk_of = np.searchsorted(ends, rows, side="right")
    ascending = bool((chunk_of[1:] >= chunk_of[:-1]).all())
    by_chunk = np.arange(len(rows)) if ascending else np.argsort(chunk_of, kind="stable")
    ordered_rows, ordered_chunks = rows[by_chunk], chunk_of[by_chunk]
    bounds = np.searchsorted(ordered_chunks, np.arange(values.num_chunks + 1))
    parts = []
    for c in np.flatnonzero(np.diff(bounds)).tolist():
        local = ordered_rows[bounds[c] : bounds[c + 1]] - (ends[c] - len(values.chunk(c)))
        part = arrow_ops.take(values.chunk(c), from_numpy(local))
        parts.append(part.dictionary_decode() if pa.types.is_dictionary(part.type) else part)
    kind = values.type.value_type if pa.types.is_dictionary(values.type) else values.type
    joined = pa.concat_arrays(parts) if parts else pa.nulls(0, kind)
    if ascending:
        return joined
    back = np.empty(len(rows), dtype=np.int64)
    back[by_chunk] = np.arange(len(rows))
    return arrow_ops.take(joined, from_numpy(back))


def to_strings(values: pa.Array) -> list[str]:
    """Python strings of a (small) string or dictionary array, decoded from its buffers."""
    values = plain_strings(values)
    if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
        raise TypeError(f"to_strings: expected a string array, received {values.type}")
    if values.null_count:
        raise TypeError(f"to_strings: array has {values.null_count} null(s)")
    if len(values) == 0:
        return []
    offsets, data = string_buffers(values)
    raw = data[int(offsets[0]) : int(offsets[-1])].tobytes()
    bounds = (offsets - offsets[0]).tolist()
    if raw.isascii():  # one decode, then slices of a str: cheaper than one decode per id (ids are mostly ASCII)
        text = raw.decode("ascii")
        return [text[a:b] for a, b in itertools.pairwise(bounds)]
    return [raw[a:b].decode("utf-8") for a, b in itertools.pairwise(bounds)]


def string_buffers(values: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, data bytes) views of a string or large_string array (offsets in the array's own
    width; the bytes of row i are ``data[offsets[i]:offsets[i + 1]]``)."""
    width = np.int64 if pa.types.is_large_string(values.type) else np.int32
    buffers = values.buffers()
    offsets = np.frombuffer(buffers[1], dtype=width, count=len(values) + 1,
                            offset=values.offset * np.dtype(width).itemsize)
    data = np.frombuffer(buffers[2], dtype=np.uint8) if buffers[2] is not None else np.zeros(0, dtype=np.uint8)
    return offsets, data


def used_names(values: pa.DictionaryArray) -> list[str]:
    """The dictionary entries a dictionary-encoded string array's rows use, in dictionary order (a
    dictionary may hold entries no row uses, e.g. after a slice).

    >>> used_names(pa.array(["b", "a", "b", "c"]).dictionary_encode().slice(0, 3))
    ['b', 'a']
    """
    used = np.bincount(as_numpy(values.indices), minlength=len(values.dictionary)) > 0
    return [name for name, u in zip(to_strings(values.dictionary), used, strict=True) if u]
