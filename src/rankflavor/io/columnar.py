"""The columnar read of a TREC file: whole, or in line-aligned pieces on every core.

:func:`read_columns` picks the way: a big uncompressed file is parsed in pieces
(:func:`read_pieces`), anything else whole (:func:`rankflavor.io.parse.parse_whole`).
:func:`columnar` adds the second chance of a file with tabs or runs of blanks: its
whitespace-normalised text. Each answers None where the line-by-line reader must decide.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pyarrow as pa

from rankflavor.base.threads import cores
from rankflavor.io.compression import other_codec
from rankflavor.io.parse import Derive, Derived, parse_bytes, parse_whole
from rankflavor.io.source import check_not_empty, is_gzip, normalized, piece_bounds, read_bytes

#: Uncompressed files larger than this (about 200,000 run lines) are parsed in pieces of about
#: :data:`PIECE_BYTES` on all cores.
PIECES_BYTES = 6_000_000
#: A piece of a few MB keeps its bytes and columns in a core's cache for the checks and the
#: derive that follow its parse (bench/RESULTS.md compares piece sizes).
PIECE_BYTES = 4 << 20

#: Columns (None where a column went into ``rows``), each piece's note, and the per-row arrays
#: of a file read in pieces (the notes and arrays are None when it was read whole).
Parsed = tuple[list[Any], list[Any] | None, dict[str, np.ndarray] | None]


def read_columns(source: Any, n_fields: int, keep: dict[int, pa.DataType], derive: Derive | None = None) -> Parsed | None:
    """Parse single-space-separated lines with pyarrow; None when any line needs the line path.

    ``source`` is a path or bytes; ``keep`` maps the fields kept to their types. Returns the
    kept columns and, for a file read in pieces, what ``derive`` made of the pieces (see
    :data:`Parsed`). A success means row i is line i + 1.
    """
    if isinstance(source, (str, os.PathLike)) and os.path.getsize(source) > PIECES_BYTES and not is_gzip(source):
        return read_pieces(source, n_fields, keep, derive)
    cols = parse_whole(source, n_fields, keep)
    return None if cols is None else (cols, None, None)


def columnar(
    path: str | os.PathLike[str], n_fields: int, kinds: dict[int, pa.DataType], kind: str, layout: str,
    derive: Derive | None = None,
) -> tuple[Parsed | None, bytes | None, str | os.PathLike[str] | bytes]:
    """Columns (and what ``derive`` made of the pieces) from the file as it is, else from its
    whitespace-normalised text; the bytes are returned when they were read, for the
    line-by-line path to reuse, and what was parsed (the path, or the normalised bytes).

    Raises
    ------
    InputError
        When the file cannot be read or holds only blanks.
    """
    # bz2, xz and zstd files are decompressed into memory by read_bytes, then parsed from there
    parsed = read_columns(path, n_fields, kinds, derive) if os.path.isfile(path) and not other_codec(path) else None
    if parsed is not None:
        return parsed, None, path
    data = read_bytes(path)
    check_not_empty(str(path), data, kind, layout)
    text = normalized(data)
    return (read_columns(text, n_fields, kinds) if text is not None else None), data, text or b""


def read_pieces(path: str | os.PathLike[str], n_fields: int, keep: dict[int, pa.DataType], derive: Derive | None) -> Parsed | None:
    """A big uncompressed file, parsed in line-aligned pieces on every core at once.

    Each worker reads its piece, scans it for other blanks, parses it single-threaded and derives
    from its columns: the per-row work after the parse runs in parallel with the parse of the
    next piece, and the file is read once. The columns keep one chunk per piece, and dictionary
    chunks keep their own dictionaries (unifying them would cost a pass over every row). Per-row
    arrays a derive makes are copied by the worker straight to their place in one array per
    name, so no pass over the whole file is left for a single thread to join them.
    """
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None  # the line path reads the file again and names the problem
    try:
        size = os.fstat(fd).st_size
        # At least two pieces per core: a file of a few pieces (a big qrels file) would leave a core idle.
        bounds = piece_bounds(fd, size, min(PIECE_BYTES, max(-(-size // (2 * cores())), 1 << 20)))
        stop = threading.Event()  # the first piece that needs the line path stops the rest
        rows = PieceRows(len(bounds), size // (2 * n_fields) + 1)  # a line has n_fields bytes and as many separators
        buffers = _PieceBuffers(max(end - start for start, end in bounds))
        with ThreadPoolExecutor(max_workers=min(cores(), len(bounds)), thread_name_prefix="rankflavor-read") as pool:
            parts = list(pool.map(lambda k: _parse_piece(fd, k, bounds[k], n_fields, keep, derive, stop, rows, buffers),
                                  range(len(bounds))))
    except OSError:
        return None
    finally:
        os.close(fd)
    if stop.is_set() or any(p is None for p in parts):
        return None
    pieces = [p for p in parts if p is not None]
    cols = [None if pieces[0].cols[k] is None else pa.chunked_array([p.cols[k] for p in pieces]) for k in range(len(keep))]
    return ([c.chunk(0) if c is not None and c.num_chunks == 1 else c for c in cols], [p.note for p in pieces],
            rows.arrays())


class PieceRows:
    """Where each piece's rows start, and the arrays its per-row values are placed in.

    Pieces finish out of order; one learns its first row once every earlier piece has counted
    its rows. A worker counts its piece right after the parse, before it waits on any other,
    and takes pieces in file order, so the earlier pieces are parsed or being parsed: no
    worker waits on one that no worker holds.

    Parameters
    ----------
    pieces
        How many pieces there are.
    capacity
        Rows the file can hold at most, reserved for each array (see :func:`reserve`).
    """

    def __init__(self, pieces: int, capacity: int) -> None:
        self._counts = [0] * pieces
        self._counted = [threading.Event() for _ in range(pieces)]
        # Rows the file can hold at most (lines of one-byte fields): about three times the rows
        # of a typical run, reserved but never touched beyond the rows placed, so it costs no memory.
        self._capacity = capacity
        self._arrays: dict[str, np.ndarray] | None = {}
        #: Each piece's own arrays, when the reservation failed (see :meth:`place`).
        self._kept: dict[int, dict[str, np.ndarray]] = {}
        self._lock = threading.Lock()

    def count(self, piece: int, n: int) -> None:
        """Piece ``piece`` holds ``n`` rows (every piece must say, even one that failed)."""
        self._counts[piece] = n
        self._counted[piece].set()

    def place(self, piece: int, values: dict[str, np.ndarray]) -> None:
        """Copy a piece's per-row arrays to their place, once every earlier piece has counted."""
        with self._lock:
            arrays = self._reserved(values)
            if arrays is None:
                self._kept[piece] = values
                return
        for earlier in self._counted[:piece]:
            earlier.wait()
        start = sum(self._counts[:piece])
        for name, v in values.items():
            arrays[name][start : start + len(v)] = v

    def _reserved(self, values: dict[str, np.ndarray]) -> dict[str, np.ndarray] | None:
        """The arrays to place into (reserved on first use, every name at once), or None once a
        reservation failed. Under strict overcommit (``vm.overcommit_memory=2``) reserving
        what the file could hold may fail: then each piece keeps its arrays and they are
        joined at the end, as with no reservation (more passes, no error)."""
        if self._arrays is not None and any(name not in self._arrays for name in values):
            try:
                for name, v in values.items():
                    if name not in self._arrays:
                        self._arrays[name] = reserve(self._capacity, v.dtype)
            except MemoryError:
                self._arrays = None
        return self._arrays

    def arrays(self) -> dict[str, np.ndarray]:
        """Every piece's arrays, one array per name, piece after piece."""
        if self._arrays is None:
            kept = [self._kept[k] for k in sorted(self._kept)]
            return {name: np.concatenate([p[name] for p in kept]) for name in (kept[0] if kept else {})}
        total = sum(self._counts)
        return {name: a[:total] for name, a in self._arrays.items()}


def reserve(rows: int, dtype: np.dtype[Any]) -> np.ndarray:
    """Room for ``rows`` values (untouched pages cost no memory); a :class:`MemoryError` here
    makes :class:`PieceRows` keep each piece's arrays instead."""
    return np.empty(rows, dtype=dtype)


class _PieceBuffers:
    """A read buffer per worker thread, reused for each of its pieces: a fresh buffer per piece
    costs as much again in page faults as the copy from the page cache (pyarrow's parse copies
    every value out of it, so nothing parsed points into it)."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._local = threading.local()

    def read(self, fd: int, start: int, end: int) -> tuple[bytes | bytearray, int]:
        """The bytes start..end-1 of ``fd`` and how many were read (fewer: the file changed)."""
        if not hasattr(os, "preadv"):
            data = os.pread(fd, end - start, start)
            return data, len(data)
        buf = getattr(self._local, "buf", None)
        if buf is None:
            buf = self._local.buf = bytearray(self._size)
        return buf, os.preadv(fd, [memoryview(buf)[: end - start]], start)


def _parse_piece(
    fd: int, piece: int, bounds: tuple[int, int], n_fields: int, keep: dict[int, pa.DataType],
    derive: Derive | None, stop: threading.Event, rows: PieceRows, buffers: _PieceBuffers,
) -> Derived | None:
    cols = None
    try:
        if not stop.is_set():
            start, end = bounds
            data, n = buffers.read(fd, start, end)
            cols = parse_bytes(data, n_fields, keep, n) if n == end - start else None
    finally:
        rows.count(piece, len(cols[0]) if cols is not None else 0)  # always: later pieces wait on it
    if cols is None:
        stop.set()  # a short read (the file changed), other blanks, comments...: the line path decides
        return None
    derived = derive(cols) if derive is not None else Derived(list(cols), None, {})
    rows.place(piece, derived.rows)
    return derived
