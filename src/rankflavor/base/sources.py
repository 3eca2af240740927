"""The inputs a result came from: their files' SHA-256, and the input records a provenance holds.

One place for both, read by ``compare`` (content hashes), ``project`` (results files),
``history`` (what a record was computed from) and ``report`` (the provenance table). Standard
library only, so the commands that import it stay light.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

_BLOCK = 1 << 20


def file_sha256(path: str | os.PathLike[str]) -> str:
    """SHA-256 of a file's bytes (what ``sha256sum`` prints), read in blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(_BLOCK):
            h.update(block)
    return h.hexdigest()


def source_records(provenance: Any) -> list[tuple[str, dict[str, Any]]]:
    """Every ``{"source": ..., ...}`` dict inside a provenance value (the dict itself, not a copy),
    with its ``role``: the key path that led to it (``qrels``, ``runs.0``; ``input`` for the value
    itself). A key holding a dot gives a role that does not split back into its path, so a caller
    that must find a record again keeps the dict, not the role.

    >>> source_records({"runs": [{"source": "a.run"}], "n": 3})
    [('runs.0', {'source': 'a.run'})]
    """
    found: list[tuple[str, dict[str, Any]]] = []

    def walk(value: Any, role: str) -> None:
        if isinstance(value, dict):
            if isinstance(value.get("source"), str):
                found.append((role or "input", value))
                return
            for k, v in value.items():
                walk(v, f"{role}.{k}" if role else str(k))
        elif isinstance(value, list):
            for i, v in enumerate(value):
                walk(v, f"{role}.{i}" if role else str(i))

    walk(provenance, "")
    return found


def sources(provenance: Any) -> list[dict[str, Any]]:
    """Every ``{"source": ..., ...}`` record inside a provenance value, each with its ``role``
    (the key path that led to it, e.g. ``qrels`` or ``runs.0``; ``input`` for the value itself).

    >>> sources({"qrels": {"source": "q.txt"}, "runs": [{"source": "a.run", "tag": "A"}]})
    [{'role': 'qrels', 'source': 'q.txt'}, {'role': 'runs.0', 'source': 'a.run', 'tag': 'A'}]
    """
    return [{"role": role, **record} for role, record in source_records(provenance)]


__all__ = ["file_sha256", "source_records", "sources"]
