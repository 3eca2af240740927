"""Docnos that are canonical decimal integers (MS MARCO style: no sign, no leading zero, at most
18 digits) are read as their values, so alignment compares integers instead of hashing millions
of strings. Exactness rule: a docno is read as an integer only when the integer's decimal
form gives back the same string, so "007" and "7" never become one document.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from rankflavor.io import arrow_ops
from rankflavor.io.columns import as_numpy, from_numpy, plain_strings, string_buffers

#: Above this many docnos pyarrow's cast reads the integers (faster than NumPy); below, NumPy
#: does, as importing pyarrow.compute would cost more than the whole evaluation.
_CAST_ROWS = 200_000


def _canonical_by_bytes(offsets: np.ndarray, data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per string: is it a canonical decimal integer, and its value (0 where not).

    The strings' last characters, right-aligned in a matrix of one row per string (as many
    columns as the longest canonical integer has digits), are read column by column: a few
    passes over small arrays instead of one per character.
    """
    lengths = np.diff(offsets)
    n = len(lengths)
    width = min(int(lengths.max(initial=0)), 18)
    ok = (lengths >= 1) & (lengths <= 18)
    value = np.zeros(n, dtype=np.int64)
    if width == 0:
        return ok, value
    # Row j: character j of the last ``width`` of each string (a column per string, so each
    # row is contiguous).
    at = offsets[1:] - width + np.arange(width)[:, None]
    inside = at >= offsets[:-1]
    digits = np.take(data, at, mode="clip") - np.uint8(48)  # a byte below '0' wraps past 9
    ok &= ~((digits > 9) & inside).any(axis=0)
    ok &= (np.take(data, offsets[:-1], mode="clip") != 48) | (lengths == 1)  # no leading zero
    digits[~inside] = 0
    for row in digits:
        value *= 10
        value += row
    value[~ok] = 0
    return ok, value


_POW10_0 = 10 ** np.arange(0, 19, dtype=np.int64)


def canonical_integers(values: pa.Array | pa.ChunkedArray, cast: bool | None = None) -> np.ndarray | None:
    """The values of docnos that are all canonical decimal integers (no sign, no leading zero,
    at most 18 digits), else None. Checked on the raw bytes: cheaper than a round trip through
    strings, and exact where ``cast`` alone would read "007" as 7."""
    if cast is None:
        cast = len(values) > _CAST_ROWS
    if isinstance(values, pa.ChunkedArray):
        parts = [canonical_integers(c, cast) for c in values.chunks]
        if any(p is None for p in parts):
            return None
        return np.concatenate([p for p in parts if p is not None]) if parts else np.zeros(0, dtype=np.int64)
    if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
        return None
    n = len(values)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if cast:
        found = _cast_canonical(values)
        return None if found is None else found[0]
    ok, value = _canonical_by_bytes(*string_buffers(values))
    return value if bool(ok.all()) else None


def canonical_integer_range(values: pa.Array) -> tuple[np.ndarray, int, int] | None:
    """:func:`canonical_integers` of one string array by pyarrow's cast, with the least and
    greatest value (0 and -1 for no docnos), which the check finds anyway; None when some docno
    is not a canonical integer."""
    if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
        return None
    return (np.zeros(0, dtype=np.int64), 0, -1) if len(values) == 0 else _cast_canonical(values)


def _cast_canonical(values: pa.Array) -> tuple[np.ndarray, int, int] | None:
    """Many docnos (at least one): pyarrow's integer parse, then canonical iff no value is
    negative or has more than 18 digits, and the strings' bytes add up to the values' digits
    (see :func:`_canonical_range`); the values and their range."""
    offsets, data = string_buffers(values)
    # Digits only, looked at before the cast: text docnos fail here (a failing cast would parse
    # the whole array first), and the cast also reads a sign and a hex "0x" prefix, a spelling
    # that can be shorter than its value's digits ("0xFFFFFFFFFFFF") and defeat the count below.
    if not _digits_only(offsets, data):
        return None
    try:
        value = as_numpy(arrow_ops.cast(values, pa.int64()))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    found = _canonical_range(value, int(offsets[-1]) - int(offsets[0]))
    return None if found is None else (value, *found)


def _digits_only(offsets: np.ndarray, data: np.ndarray) -> bool:
    """Are the strings' bytes (``string_buffers``) all ASCII digits? A min and a max of the
    bytes."""
    body = data[int(offsets[0]) : int(offsets[-1])]
    return not len(body) or (int(body.min()) >= 48 and int(body.max()) <= 57)


def _canonical_range(value: np.ndarray, n_bytes: int) -> tuple[int, int] | None:
    """The least and greatest of ``value`` when the strings (``n_bytes`` in all) that
    pyarrow's cast read as them are canonical, else None.

    The strings are digits only (checked by the caller), which the cast reads as decimal. Any
    such string other than a value's canonical one ("007") is longer than the value's digits,
    so the total decides for every string at once: a few passes over the values (one per digit
    count between the least and greatest value) instead of comparing each string's length.
    """
    if not len(value):
        return (0, -1) if n_bytes == 0 else None
    lo, hi = int(value.min()), int(value.max())
    if lo < 0 or hi >= _POW10_0[18]:
        return None
    fewest, most = len(str(lo)), len(str(hi))
    digits = len(value) * fewest
    for k in range(fewest, most):  # a value of d digits is >= 10^k for each k < d
        digits += int(np.count_nonzero(value >= _POW10_0[k]))
    return (lo, hi) if digits == n_bytes else None


def integer_docnos(parts: tuple[np.ndarray, ...]) -> pa.Array:
    """The docno strings of canonical integer docnos, from their values (in parts, row order):
    a canonical docno is exactly its value's decimal form."""
    values = parts[0] if len(parts) == 1 else np.concatenate(parts)
    return arrow_ops.cast(from_numpy(values), pa.string())


def decimal_strings(values: np.ndarray, *, block: int = 1 << 16) -> pa.Array:
    """The decimal text of integers in 0 .. 10**18 - 1 (canonical docnos' values), by NumPy alone.

    About 2.5 times the time of pyarrow's cast, which needs ``pyarrow.compute``: importing that
    costs more than this takes for the few hundred thousand judgments of a Parquet qrels file of
    integer docnos, on a path that otherwise calls no compute kernel (:func:`integer_docnos`
    casts a run's millions). Each ``block`` of rows (their digits stay in cache) is written as a
    matrix of right-aligned digits, of which the digits of each value are taken in row order.

    >>> decimal_strings(np.array([0, 7, 10, 999, 123456789012345678])).to_pylist()
    ['0', '7', '10', '999', '123456789012345678']
    """
    v = np.ascontiguousarray(values, dtype=np.int64)
    n = len(v)
    width = len(str(int(v.max()))) if n else 1
    digits = np.ones(n, dtype=np.int32)
    for k in range(1, width):
        digits += v >= _POW10_0[k]
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(digits, out=offsets[1:])
    data = np.empty(int(offsets[-1]), dtype=np.uint8)
    columns = np.arange(width, dtype=np.int32)
    for a in range(0, n, block):
        b = min(n, a + block)
        rest = v[a:b].copy()
        matrix = np.empty((b - a, width), dtype=np.uint8)
        for j in range(width - 1, -1, -1):  # the units first, in the last column
            tens = rest // 10
            matrix[:, j] = rest - tens * 10
            rest = tens
        matrix += 48  # ord("0")
        data[offsets[a] : offsets[b]] = matrix[columns >= (width - digits[a:b])[:, None]]
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data))


def canonical_mask(values: pa.Array | pa.ChunkedArray, cast: bool | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per docno: is it a canonical decimal integer, and its value (0 where not)."""
    values = plain_strings(values)
    if cast if cast is not None else len(values) > _CAST_ROWS:
        return _cast_mask(values)
    return _canonical_by_bytes(*string_buffers(values))


def _cast_mask(values: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """:func:`canonical_mask` by pyarrow's digit test and integer parse (many docnos)."""
    offsets, data = string_buffers(values)
    lengths = np.diff(offsets)
    digits = _digits_only(offsets, data)
    fits = (lengths > 0) & (lengths <= 18)
    ok = fits if digits else fits & as_numpy(arrow_ops.ascii_is_decimal(values))
    ok[ok] &= (data[offsets[:-1][ok]] != 48) | (lengths[ok] == 1)  # no leading zero
    if digits and fits.all():
        # Digits only (MS MARCO-style qrels): every docno casts as it is, with no digit test and
        # no filter; one with a leading zero is not canonical.
        return ok, np.where(ok, as_numpy(arrow_ops.cast(values, pa.int64())), 0)
    out = np.zeros(len(values), dtype=np.int64)
    if ok.any():
        out[ok] = as_numpy(arrow_ops.cast(arrow_ops.filter_rows(values, from_numpy(ok)), pa.int64()))
    return ok, out


_MIX = np.uint64(0x9E3779B97F4A7C15)
_SEED = np.uint64(0xBF58476D1CE4E5B9)
_LOW_BYTES = np.array([(1 << (8 * k)) - 1 for k in range(8)] + [(1 << 64) - 1], dtype=np.uint64)


#: Strings longer than this many bytes are hashed one by one (:func:`_long_hash`): the rounds
#: of :func:`hash64` touch every string of the array once per word of the longest, so one id
#: of megabytes made them quadratic (an 8 MB id in a run file read for minutes).
LONG_BYTES = 256
#: Below this share of the strings still hashing, a round works on those strings alone.
_FEW = 8


def hash64(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A 64-bit hash of each string's bytes (equal strings, equal hashes).

    Not collision-free: callers verify what a collision would decide (see align.py). The bytes
    are read eight at a time through an unaligned uint64 view, one gather per word of the
    longest string, so strings cost a few passes over the rows instead of one per byte. A
    string of more than :data:`LONG_BYTES` bytes is hashed alone (BLAKE2b): the time is linear
    in the bytes whatever their lengths. (Equal strings have equal lengths, so they take the
    same way and get the same hash.)

    >>> h = hash64(pa.array(["a", "b" * 1000, "a", "b" * 1000]))
    >>> bool(h[0] == h[2]), bool(h[1] == h[3]), bool(h[0] != h[1])
    (True, True, True)
    """
    if isinstance(values, pa.ChunkedArray):
        parts = [hash64(c) for c in values.chunks]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint64)
    values = plain_strings(values)
    n = len(values)
    if n == 0:
        return np.zeros(0, dtype=np.uint64)
    offsets, data = string_buffers(values)
    first, last = int(offsets[0]), int(offsets[-1])
    padded = np.zeros(last - first + 16, dtype=np.uint8)  # a word may be read past the last byte
    padded[: last - first] = data[first:last]
    words = np.ndarray(shape=(last - first + 9,), dtype="<u8", buffer=padded, strides=(1,))
    starts = offsets[:-1].astype(np.int64) - first
    lengths = np.diff(offsets).astype(np.int64)
    out = lengths.astype(np.uint64) * _SEED
    long_rows = np.flatnonzero(lengths > LONG_BYTES)
    if len(long_rows):
        for row in long_rows.tolist():
            out[row] = _long_hash(padded, int(starts[row]), int(lengths[row]))
        lengths = lengths.copy()
        lengths[long_rows] = 0  # (done: no round touches them)
    rows: np.ndarray | None = None  # the strings a round works on, once they are few (None: all)
    for k in range(int(lengths.max() + 7) // 8):
        if rows is None and k and np.count_nonzero(lengths > 8 * k) * _FEW < n:
            rows = np.flatnonzero(lengths > 8 * k)
            out_all, out = out, out[rows]
            starts, lengths = starts[rows], lengths[rows]
        # A string takes as many rounds as it has words, whatever the longest string.
        at = starts + 8 * k
        if at[-1] >= len(words):  # starts ascend; reads clipped to the end belong to finished strings
            np.minimum(at, len(words) - 1, out=at)
        # Indexing, not np.take: on this unaligned view np.take copies element by element.
        word = words[at]
        word &= _LOW_BYTES[np.clip(lengths - 8 * k, 0, 8)]
        word ^= out
        word *= _MIX
        word ^= word >> np.uint64(29)
        np.copyto(out, word, where=lengths > 8 * k)
    if rows is not None:
        out_all[rows] = out
        out = out_all
    return out


def _long_hash(data: np.ndarray, start: int, length: int) -> np.uint64:
    """The hash of one long string (``length`` bytes of ``data`` from ``start``)."""
    import hashlib  # (only for an id of over LONG_BYTES bytes: most reads never need it)

    digest = hashlib.blake2b(data[start : start + length].data, digest_size=8).digest()
    return np.uint64(int.from_bytes(digest, "little"))
