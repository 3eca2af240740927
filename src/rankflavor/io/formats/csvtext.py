"""CSV records of any field length: the rows :mod:`csv` reads, without its field size limit.

Python's :mod:`csv` refuses a field longer than ``csv.field_size_limit()`` (131,072 characters
by default), and that limit is a switch of the whole process: library code must not change it.
Every other reader takes an id of any length (a 16 MB docno in TREC text, JSON, Parquet), so the
delimited readers read a file :mod:`csv` refuses for that reason with :func:`records`, which
parses the same dialect (Excel's: ``"`` quotes, ``""`` inside quotes, a record ending at ``\\r\\n``,
``\\r`` or ``\\n``, an empty line an empty record) under ``strict=True``, with the same errors on
the same lines. ``tests/io/test_csv_records.py`` holds it to :mod:`csv` record by record on random
texts (CPython ``Modules/_csv.c``: the reader's states ``START_RECORD`` ... ``EAT_CRNL``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

#: A quoted field: its body (``""`` pairs and any other character but ``"``), taken possessively
#: so that a ``""`` is never read back as the closing quote (``"a""`` has no end, as for csv).
_QUOTED = re.compile(r'"((?:[^"]++|"")*+)"')


class CsvSyntaxError(ValueError):
    """A record :mod:`csv` would refuse: ``line`` as its ``line_num`` and the message it gives."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line


def _breaks(text: str) -> int:
    """Line breaks in ``text``: ``\\r\\n``, ``\\r`` and ``\\n`` each count once."""
    return text.count("\n") + text.count("\r") - text.count("\r\n")


def records(text: str, delimiter: str) -> Iterator[tuple[int, list[str]]]:
    """Each record of ``text`` with the line it starts on (an empty line: ``[]``).

    Raises
    ------
    CsvSyntaxError
        A quoted field followed by anything but the delimiter or a line break, or not closed
        (:mod:`csv`'s ``strict`` errors, on the line :mod:`csv` names).

    Examples
    --------
    >>> list(records('a,"b,""c"" d"\\r\\n\\nz', ","))
    [(1, ['a', 'b,"c" d']), (2, []), (3, ['z'])]
    """
    unquoted = re.compile(f"[^{re.escape(delimiter)}\\r\\n]*")
    n = len(text)
    pos, line = 0, 1
    while pos < n:
        first = line
        if text[pos] in "\r\n":  # an empty line
            pos += 2 if text.startswith("\r\n", pos) else 1
            line += 1
            yield first, []
            continue
        fields: list[str] = []
        while True:
            if pos < n and text[pos] == '"':
                m = _QUOTED.match(text, pos)
                if m is None:
                    raise CsvSyntaxError(line + _breaks(text[pos:]) - (text[-1] in "\r\n"), "unexpected end of data")
                body = m.group(1)
                line += _breaks(body)
                fields.append(body.replace('""', '"'))
                pos = m.end()
                if pos < n and text[pos] not in (delimiter, "\r", "\n"):
                    raise CsvSyntaxError(line, f"'{delimiter}' expected after '\"'")
            else:
                m = unquoted.match(text, pos)  # (always matches, maybe nothing)
                assert m is not None
                fields.append(m.group())
                pos = m.end()
            if pos >= n:
                yield first, fields
                return
            if text[pos] == delimiter:
                pos += 1
                continue
            pos += 2 if text.startswith("\r\n", pos) else 1
            line += 1
            yield first, fields
            break


__all__ = ["CsvSyntaxError", "records"]
