"""A file's bytes: reading them (gzip or not), cutting them into line-aligned pieces, and the
blank scan that tells whether pyarrow's parser reads them as trec_eval does.

trec_eval splits a line at runs of the blanks its ``isspace`` knows (:data:`BLANKS`); pyarrow's
CSV parser splits at one space and ends a line at a lone CR. Bytes that :func:`clean` (or
:func:`only_spaces` for a whole file) accepts parse the same way under both; others go to the
line-by-line reader, after :func:`normalized` perhaps folds their blanks into single spaces.
"""

from __future__ import annotations

import gzip
import os
import re
import threading
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from rankflavor.errors import InputError
from rankflavor.io.compression import decompress

#: The blanks of trec_eval's ``isspace`` (str.strip and str.split also take a no-break space).
BLANKS = " \t\n\r\v\f"
#: The blank scan of a file read whole reads it in blocks of this size into one buffer, which
#: then stays in a core's cache (blocks of 16 MB, whose fresh pages also cost, scan slower).
SCAN_BYTES = 1 << 20

#: Bytes that send a file to the line-by-line reader: blanks pyarrow does not split at, and NUL,
#: which no id may hold (:mod:`rankflavor.io.nul`; the line reader names the line).
_LINE_PATH_BYTES = (b"\t", b"\v", b"\f", b"\x00")


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    """Read a file, transparently decompressing gzip, bz2, xz or zstd (by magic number, not by
    name; :mod:`rankflavor.io.compression`).

    Raises
    ------
    InputError
        Naming the file when it is missing, a directory, unreadable or corrupt gzip data.
    """
    p = Path(path)
    try:
        with open(p, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        raise InputError(str(p), None, "file not found") from None
    except IsADirectoryError:
        raise InputError(str(p), None, "is a directory, expected a file") from None
    except OSError as exc:
        raise InputError(str(p), None, f"cannot read file: {exc.strerror}") from None
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:  # zlib.error (damaged deflate blocks) is no OSError
            raise InputError(str(p), None, f"gzip data is corrupt: {exc}") from None
    return decompress(str(p), data)


def is_gzip(path: str | os.PathLike[str]) -> bool:
    """Does the file start with gzip's magic number (False when it cannot be read)?"""
    try:
        with open(path, "rb") as fh:
            return fh.read(2) == b"\x1f\x8b"
    except OSError:
        return False


def check_not_empty(source: str, data: bytes, kind: str, layout: str) -> None:
    """Raise the error for a file of blanks alone, naming the layout ``kind`` files have."""
    if not data.strip():
        raise InputError(source, None, f"{kind} file is empty; expected lines '{layout}'")


def piece_bounds(fd: int, size: int, piece: int) -> list[tuple[int, int]]:
    """Byte ranges of about ``piece`` bytes of the open file ``fd`` (of ``size`` bytes) that
    cover it, each but the last ending just after a newline.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryFile() as fh:
    ...     _ = fh.write(b"a b\\nc d\\ne f\\n")
    ...     _ = fh.flush()
    ...     piece_bounds(fh.fileno(), 12, 5)
    [(0, 8), (8, 12)]
    """
    bounds: list[tuple[int, int]] = []
    start = 0
    while size - start > piece:
        pos, cut = start + piece, -1
        while cut < 0 and pos < size:
            probe = os.pread(fd, 1 << 16, pos)
            if not probe:
                break
            newline = probe.find(b"\n")
            cut = pos + newline + 1 if newline >= 0 else -1
            pos += len(probe)
        if cut < 0 or cut >= size:
            break
        bounds.append((start, cut))
        start = cut
    bounds.append((start, size))
    return bounds


def only_spaces(source: Any, stop: threading.Event | None = None) -> bool:
    """:func:`clean` of a whole file (a path) or bytes; False once ``stop`` is set.

    Files are scanned block by block into one reused buffer (no copy of the file in memory); a
    gzip file is decompressed for it, one more pass over the data.
    """
    if not isinstance(source, (str, os.PathLike)):
        return clean(bytes(source), 0, len(source))
    opener: Any = gzip.open if is_gzip(source) else open
    buf = bytearray(SCAN_BYTES + 1)
    try:
        with opener(source, "rb") as fh:
            # The previous block's last byte is kept as this block's first: a CR ending it may be
            # followed by the LF opening this one, and a pair of bytes may span the two.
            carry = 0
            while n := fh.readinto(memoryview(buf)[carry:]):
                if stop is not None and stop.is_set():
                    return False
                end = carry + n
                if not clean(buf, 0, end, final=False):
                    return False
                buf[0], carry = buf[end - 1], 1
            return carry == 0 or buf[0] not in (13, 32)  # no lone CR, no blank, ends the file
    except (OSError, EOFError, zlib.error):
        return False  # the line path reads the file again and names the problem


def clean(data: bytes | bytearray, start: int, end: int, final: bool = True) -> bool:
    """Lines the columnar path reads as the line path does: no tab, vertical tab, form feed or
    NUL, every CR ending a line (CRLF), and no empty field (see :func:`_empty_fields`); ``final``:
    ``end`` ends the file (a blank there would end a line).

    Examples
    --------
    >>> clean(b"q1 Q0 d 1 2.5 t\\r\\n", 0, 17), clean(b"q1 Q0 d\\t1 2.5 t\\n", 0, 16)
    (True, False)
    >>> clean(b"q1  Q0 d 1 2.5\\n", 0, 15)  # an empty field between two blanks
    False
    """
    if any(data.find(b, start, end) >= 0 for b in _LINE_PATH_BYTES):  # memchr; nothing is counted
        return False
    has_cr = data.find(b"\r", start, end) >= 0
    if _empty_fields(data, start, end, has_cr) or (final and end > start and data[end - 1] == 32):
        return False
    if not has_cr:
        return True
    crs = data.count(b"\r", start, end)
    # A CR closing a block may be followed by the LF opening the next one.
    open_cr = 0 if final or data[end - 1] != 13 else 1
    return crs - open_cr == data.count(b"\r\n", start, end)


#: Byte pairs, as little-endian uint16, that make an empty field between single blanks: pyarrow
#: reads "a  b" as three fields, the middle one empty, and "a b " as three, the last one empty.
_BLANK_PAIRS = (0x2020, 0x0A20)  # b"  ", b" \n"
_BLANK_CR = 0x0D20  # b" \r", looked for only where there is a CR
#: Pairs compared at a time: the comparison's booleans (1 MB) stay in cache.
_PAIR_BLOCK = 1 << 20


def _empty_fields(data: bytes | bytearray, start: int, end: int, has_cr: bool) -> bool:
    """Does a blank follow a blank, or come before a line end, in ``data[start:end]``?

    Such a line has an empty field, which pyarrow counts: one short of a field, with a blank too
    many, it has the right number of fields and its values land in the wrong columns (trec_eval
    and the line path reject it). A blank opening a line shows as an empty query id instead
    (:func:`rankflavor.io.parse.line_path_ids`). The pairs are compared two bytes at a time, at
    both alignments: no byte-pair search of the standard library runs near memchr's speed.
    """
    n = end - start
    if n < 2:
        return False
    view = memoryview(data)[start:end]
    pairs = (*_BLANK_PAIRS, _BLANK_CR) if has_cr else _BLANK_PAIRS
    hits = np.empty(min(n // 2, _PAIR_BLOCK), dtype=bool)
    for offset in (0, 1):
        words = np.frombuffer(view, dtype="<u2", count=(n - offset) // 2, offset=offset)
        for at in range(0, len(words), _PAIR_BLOCK):
            block = words[at : at + _PAIR_BLOCK]
            found = hits[: len(block)]
            for pair in pairs:
                if np.equal(block, pair, out=found).any():
                    return True
    return False


def normalized(data: bytes) -> bytes | None:
    """Tabs and runs of blanks folded to one space, lines stripped; None if comments or blank
    lines remain (those need the line path, which counts them).

    Examples
    --------
    >>> normalized(b"q1\\t0  d 1 \\nq2 0 e 0\\n")
    b'q1 0 d 1\\nq2 0 e 0\\n'
    >>> normalized(b"# a comment\\nq1 0 d 1\\n") is None
    True
    """
    if not data[data.rfind(b"\n") + 1 :].split() and not data.endswith(b"\n"):
        return None  # a last line of blanks alone, with no newline: folding would drop it uncounted
    text = re.sub(rb"[ \t\r\v\f]+", b" ", data)
    text = re.sub(rb" ?\n ?", b"\n", text).strip(b" ")
    if not text or text.startswith((b"#", b"\n")) or b"\n#" in text or b"\n\n" in text.rstrip(b"\n"):
        return None
    return text
