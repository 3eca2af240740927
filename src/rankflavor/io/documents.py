"""Reading one JSON document rankflavor wrote (a results file, a saved comparison, a report's input) from its path.

Every such document is read here, by :func:`read_json_document`: the file's bytes read once, decoded
as JSON, hashed (SHA-256) when the caller asks, and each way it can fail an
:class:`~rankflavor.errors.InputError` naming the file:

* the file cannot be read (the operating system's reason);
* it is not JSON (the line of the error, when the caller names lines);
* its JSON value is not an object.

Each caller keeps the words its users have always read (:class:`Wording`) and checks the kind of
document itself (:func:`rankflavor.project.resultsfile.load_json`,
:func:`rankflavor.report.inputs.load_document`, :func:`rankflavor.analysis.compare.saved.compare_saved`).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from typing import Any

from rankflavor.errors import InputError


@dataclass(frozen=True)
class Wording:
    """How one caller words the three failures of reading its document.

    Each message is a format string: ``{reason}`` is the operating system's reason (``strerror``,
    else the exception's text), ``{error}`` the exception's own text.

    Attributes
    ----------
    unreadable : the file cannot be read.
    invalid : the bytes are not JSON.
    not_object : the JSON value is not an object.
    line : name the line of a JSON error (``file:LINE: ...``).
    """

    unreadable: str = "cannot read: {reason}"
    invalid: str = "not valid JSON ({error})"
    not_object: str = "not a JSON object"
    line: bool = True


#: The plain words: ``cannot read: REASON``, ``not valid JSON (ERROR)`` at its line, ``not a JSON object``.
PLAIN = Wording()


@dataclass(frozen=True)
class JsonDocument:
    """A JSON document read from a file.

    Attributes
    ----------
    source : the file, as the path was given (``os.fspath``).
    data : the JSON object.
    sha256 : SHA-256 of the file's bytes, or None when the caller did not ask for it.
    """

    source: str
    data: dict[str, Any]
    sha256: str | None = None


def _decode(raw: bytes, text: bool) -> Any:
    if not text:
        return json.loads(raw)  # UTF-8, -16 or -32, a byte-order mark allowed
    # as a file opened in text mode reads it: UTF-8, every line ending read as "\n"
    return json.loads(raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n"))


def read_json_document(path: str | os.PathLike[str], wording: Wording = PLAIN, *, sha256: bool = False,
                       text: bool = False) -> JsonDocument:
    """Read the JSON object in the file ``path``.

    ``wording`` words the failures (:class:`Wording`); the file is named as ``os.fspath(path)``
    gives it. With ``sha256``, the digest of the bytes read is kept. With ``text``, the bytes are
    decoded as a file opened in text mode reads them (UTF-8 only, line endings translated);
    otherwise :func:`json.loads` reads the bytes.

    Raises
    ------
    InputError
        The file cannot be read, is not JSON, or holds a JSON value that is not an object.
    """
    source = os.fspath(path)
    try:
        with open(source, "rb") as f:
            raw = f.read()
    except (OSError, ValueError) as exc:  # (ValueError: a NUL byte in the path)
        reason = getattr(exc, "strerror", None) or exc
        raise InputError(source, None, wording.unreadable.format(reason=reason, error=exc)) from None
    try:
        data = _decode(raw, text)
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, an integer too long to convert
        line = getattr(exc, "lineno", None) if wording.line else None
        raise InputError(source, line, wording.invalid.format(error=exc)) from None
    if not isinstance(data, dict):
        raise InputError(source, None, wording.not_object)
    return JsonDocument(source, data, hashlib.sha256(raw).hexdigest() if sha256 else None)


__all__ = ["PLAIN", "JsonDocument", "Wording", "read_json_document"]
