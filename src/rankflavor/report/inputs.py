"""The documents a report is made of: results files read back, or results held in memory.

A document is one JSON value that rankflavor wrote, tagged with what it is:

``eval``
    ``rankflavor eval --format json`` (per-query values present only with ``-q``).
``spread``
    ``rankflavor spread --format json``.
``compare``
    ``rankflavor compare --format json`` (and any later JSON with a ``pairs`` or ``systems`` list).
``judgments``
    ``rankflavor judgments --format json`` (or any JSON with a top-level ``coverage`` key).

The kind is read from the keys the writers put there, never from the file name.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rankflavor.base.sources import file_sha256 as sha256_of_file
from rankflavor.base.sources import sources
from rankflavor.errors import InputError
from rankflavor.io.documents import Wording, read_json_document

if TYPE_CHECKING:
    from rankflavor.analysis.spread.result import Spread
    from rankflavor.engine.results import Results

KINDS = ("eval", "spread", "compare", "judgments")

_NOT_RESULTS = ("not a rankflavor results file: expected the JSON of `rankflavor eval --format json`, "
                "`spread --format json`, `compare --format json` or a coverage report")
_WORDING = Wording(unreadable="cannot read: {reason}", not_object=_NOT_RESULTS)


@dataclass(frozen=True)
class Document:
    """One input of a report.

    Attributes
    ----------
    kind : one of :data:`KINDS`.
    data : the JSON value as rankflavor wrote it.
    source : the file it was read from, or a description (``"eval results"``) when made in memory.
    sha256 : SHA-256 of the file's bytes, or None for a document made in memory.
    """

    kind: str
    data: dict[str, Any]
    source: str
    sha256: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def detect_kind(data: Any, source: str) -> str:
    """The kind of a rankflavor JSON value, from its keys; InputError when it is none of them."""
    if isinstance(data, dict):
        if isinstance(data.get("measures"), list) and "counts" in data:
            return "eval"
        if "grid" in data and isinstance(data.get("flavors"), list) and "runs" in data:
            return "spread"
        if str(data.get("kind", data.get("command", ""))).split(" ")[0] == "compare":
            return "compare"
        if isinstance(data.get("settings"), dict) and isinstance(data.get("measures"), list):
            return "compare"  # Comparison.to_dict()
        if isinstance(data.get("pool_bias"), dict) and isinstance(data.get("runs"), list):
            return "judgments"  # Coverage.to_dict()
        if isinstance(data.get("pairs"), list) or isinstance(data.get("systems"), list):
            return "compare"
        if "coverage" in data:
            return "judgments"
    raise InputError(source, None, _NOT_RESULTS)


def load_document(path: str | os.PathLike[str]) -> Document:
    """Read one results file and hash its bytes.

    Raises
    ------
    InputError
        The file cannot be read, is not JSON, or is not a rankflavor results file.
    """
    read = read_json_document(Path(path), _WORDING, sha256=True)
    return Document(detect_kind(read.data, read.source), read.data, read.source, read.sha256)


def document_from_results(results: Results) -> Document:
    """An ``eval`` document from results in memory, with every per-query value."""
    return Document("eval", results.to_dict(), "eval results (in memory)")


def document_from_spread(result: Spread) -> Document:
    """A ``spread`` document from a spread in memory."""
    return Document("spread", result.to_dict(), "spread results (in memory)")


def document_from_dict(data: dict[str, Any], source: str = "results (in memory)") -> Document:
    """A document from a JSON-ready dict (``compare``'s, for instance); the kind is detected."""
    return Document(detect_kind(data, source), data, source)


def file_sha256(path: str) -> str | None:
    """SHA-256 of a file's bytes, or None when it cannot be read."""
    try:
        return sha256_of_file(path)
    except OSError:
        return None


def input_hash(record: dict[str, Any]) -> tuple[str | None, str]:
    """The SHA-256 of one input named in provenance, and where it comes from.

    The hash the results recorded wins (``sha256`` key). Otherwise the file is hashed now, when it
    still exists and its size equals the size the results recorded (``bytes``); a file whose size
    changed, or that is gone, gets no hash, and the reason says so.
    """
    recorded = record.get("sha256") or record.get("hash")
    if isinstance(recorded, str) and recorded:
        return recorded, "recorded in the results"
    path = record.get("source")
    if not isinstance(path, str) or not os.path.isfile(path):
        return None, "not recorded; file not found now"
    size = record.get("bytes")
    if isinstance(size, int) and os.path.getsize(path) != size:
        return None, f"not recorded; the file changed size since ({size} bytes then, {os.path.getsize(path)} now)"
    digest = file_sha256(path)
    if digest is None:
        return None, "not recorded; file unreadable now"
    return digest, "not recorded; computed now from the file (same size)"


__all__ = ["KINDS", "Document", "detect_kind", "document_from_dict", "document_from_results", "document_from_spread",
           "file_sha256", "input_hash", "load_document", "sources"]
