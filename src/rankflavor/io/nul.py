"""One rule for every reader: an id (query or document) may not hold a NUL byte (U+0000).

Ids are untrusted text, and a NUL inside one means different things to different tools:
trec_eval and every tool that hands ids to C as ``char *`` end the id at the NUL (pytrec_eval
reads ``{"q1": {"d\\0a": 1, "d\\0b": 0}}`` as the document ``d`` judged twice, "duplicate
docs d", and evaluates nothing), while Python and Arrow keep it. Accepting such an id would
give a number no other tool gives for the same file; truncating it silently would merge
documents. So the TREC, MS MARCO, BEIR, CSV/TSV, Quepid, JSON, JSONL, Parquet and
Elasticsearch readers, the ratings reader, dicts and DataFrames, and the Spark engine's reader
all refuse one, naming the file and its line, row or JSON path (exit status 3). Before this
rule the text readers accepted a NUL and the JSON readers refused a raw one (JSON's grammar
forbids a raw control character in a string) but took the ``\\u0000`` escape.

A NUL elsewhere on a line (a run's tag, a grade) is no id: the readers judge that field by
its own rules (a grade holding one is not a number).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from rankflavor.io.columns import string_buffers

#: What the error says after naming the id's field and where it is.
REASON = ("holds a NUL byte (U+0000); an id may not: trec_eval and other C tools end an id there and "
          "would read another one")

#: Bytes of the string data compared at a time (the comparison's booleans stay small).
_BLOCK = 1 << 24


def has_nul(text: str) -> bool:
    """Does ``text`` hold U+0000?"""
    return "\x00" in text


def nul_entries(values: pa.Array) -> np.ndarray:
    """The indices of the strings of ``values`` (a string or large_string array) that hold a
    NUL byte, ascending. One vectorised pass over the bytes; nothing per string.

    >>> nul_entries(pa.array(["a", "b\\x00c", "", "\\x00"])).tolist()
    [1, 3]
    """
    offsets, data = string_buffers(values)
    if len(values) == 0:
        return np.zeros(0, dtype=np.int64)
    first, last = int(offsets[0]), int(offsets[-1])
    found = []
    for start in range(first, last, _BLOCK):
        block = data[start : min(start + _BLOCK, last)]
        at = np.flatnonzero(block == 0)
        if len(at):
            found.append(at + start)
    if not found:
        return np.zeros(0, dtype=np.int64)
    rows = np.searchsorted(offsets, np.concatenate(found), side="right") - 1
    return np.unique(rows).astype(np.int64)


def first_nul(values: pa.Array | pa.ChunkedArray) -> int | None:
    """The first row of ``values`` (strings, chunked or dictionary-encoded) whose id holds a
    NUL byte, or None. Of a dictionary column, its distinct entries are looked at first.

    >>> first_nul(pa.array(["a", "b", "c\\x00"])), first_nul(pa.array(["a"]))
    (2, None)
    >>> first_nul(pa.array(["x", "y\\x00", "x", "y\\x00"]).dictionary_encode())
    1
    """
    if isinstance(values, pa.ChunkedArray):
        seen = 0
        for chunk in values.chunks:
            row = first_nul(chunk)
            if row is not None:
                return seen + row
            seen += len(chunk)
        return None
    if pa.types.is_dictionary(values.type):
        bad = nul_entries(values.dictionary)
        if not len(bad):
            return None
        indices = values.indices.to_numpy(zero_copy_only=False)
        used = np.flatnonzero(np.isin(indices, bad))
        return int(used[0]) if len(used) else None
    if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
        return None  # integers: no NUL
    bad = nul_entries(values)
    return int(bad[0]) if len(bad) else None


__all__ = ["REASON", "first_nul", "has_nul", "nul_entries"]
