"""Where a result's inputs came from: content hashes of the judgments and runs (a comparison, an
estimate and an agreement each record them), and the refusal to compare results of different judgments.

A file is hashed by its bytes (the digest ``sha256sum`` prints). An input given in memory (a
dict, a DataFrame, a table) is hashed by a canonical serialisation of its rows, sorted, so that
two equal inputs hash equal whatever order their rows came in.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

import numpy as np
import pyarrow as pa

from rankflavor.base.sources import file_sha256
from rankflavor.errors import UsageError
from rankflavor.io.tables import Qrels, Run


class QrelsMismatchError(UsageError):
    """Results scored against different judgments (their qrels hashes differ) were to be compared."""


def _strings(h: Any, arr: pa.Array) -> None:
    """Feed a string array to ``h``: each value's length, then the values' bytes."""
    arr = arr.cast(pa.large_string())
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int64)[arr.offset:arr.offset + len(arr) + 1]
    h.update(np.diff(offsets).astype("<i8").tobytes())
    h.update(memoryview(arr.buffers()[2])[offsets[0]:offsets[-1]])


def table_sha256(query: Any, doc: Any, value: np.ndarray) -> str:
    """SHA-256 of the rows sorted by (query, doc, value): query ids, doc ids (lengths and bytes), values as float64.

    Row order does not change it; the ids' and values' content does.
    """
    def flat(col: Any) -> pa.Array:
        return (col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col).cast(pa.string())

    t = pa.table({"q": flat(query), "d": flat(doc), "v": pa.array(np.asarray(value, dtype=np.float64))})
    t = t.sort_by([("q", "ascending"), ("d", "ascending"), ("v", "ascending")])
    h = hashlib.sha256()
    for name in ("q", "d"):
        _strings(h, t.column(name).combine_chunks())
    h.update(np.ascontiguousarray(t.column("v").to_numpy(), dtype="<f8").tobytes())
    return h.hexdigest()


def _of_file(path: str | os.PathLike[str]) -> dict[str, Any]:
    return {"source": os.fspath(path), "sha256": file_sha256(path), "hash_of": "file bytes"}


def describe(item: Any, table: Qrels | Run) -> dict[str, Any]:
    """``{"source", "sha256", "hash_of"}`` of one input: its file's bytes, or its rows in canonical order."""
    origin = getattr(table, "origin", None) or {}
    if "sha256" in origin:  # an ir_datasets dataset (rankflavor.io.irds): its cache file's bytes
        return {"source": table.source, "sha256": origin["sha256"], "hash_of": origin["hash_of"]}
    if isinstance(item, (str, os.PathLike)) and not os.fspath(item).startswith("irds:"):
        return _of_file(item)
    if isinstance(table, Qrels):
        digest = table_sha256(table.query, table.doc, table.grade)
    else:
        digest = table_sha256(table.query, table.doc, table.score)
    return {"source": table.source, "sha256": digest, "hash_of": "sorted rows (query, doc, value)"}


def described_elsewhere(item: Any, kind: str) -> dict[str, Any]:
    """``{"source", "sha256", "hash_of"}`` of an input another engine reads (Spark): a file this
    machine sees, by its bytes as :func:`describe` does; anything else (a directory of parts, a
    path of another filesystem, a Spark DataFrame) by its source alone, ``sha256`` None."""
    if isinstance(item, (str, os.PathLike)):
        if os.path.isfile(item):
            return _of_file(item)
        return {"source": os.fspath(item), "sha256": None, "hash_of": "not hashed: read by Spark"}
    return {"source": f"{kind} DataFrame", "sha256": None, "hash_of": "not hashed: read by Spark"}


def check_same_qrels(hashes: dict[str, str], force: bool) -> None:
    """Refuse results scored on different judgments unless ``force``.

    ``hashes`` maps each system to the SHA-256 of the qrels it was scored against.
    """
    distinct = sorted(set(hashes.values()))
    if len(distinct) > 1 and not force:
        groups = "; ".join(f"{h[:12]}: {', '.join(s for s, v in hashes.items() if v == h)}" for h in distinct)
        raise QrelsMismatchError(f"the systems were scored against {len(distinct)} different qrels ({groups}); "
                                 "their per-query values are not comparable. Pass force=True (--force) to compare anyway")


__all__ = ["QrelsMismatchError", "check_same_qrels", "describe", "described_elsewhere", "file_sha256", "table_sha256"]
