"""TREC qrels and run files, plain or gzip, whitespace-tolerant like trec_eval.

Two paths with one contract: a columnar fast path (pyarrow's CSV reader) for clean
single-space files, and a line-by-line path for everything else (tabs, runs of blanks, comments,
blank lines, CRLF) that also produces the exact error for a bad line. Whenever the fast path
is unsure, the line path decides, so both accept and reject exactly the same files.

Formats (trec_eval 9.0.8 ``get_qrels.c`` / ``get_trec_results.c``):

* qrels: ``query iteration doc grade`` - exactly four fields.
* run: ``query Q0 doc rank score tag`` - at least six fields; further fields are ignored
  (as trec_eval does) and counted. The rank column is ignored: order comes from the score.

Lines starting with ``#`` are comments (trec_eval 10.0) and blank lines are skipped; both are
counted in the returned table.
"""

from __future__ import annotations

import gzip
import math
import os
import re
import threading
import zlib
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa

from .. import arrow_ops
from ..columns import as_numpy, dictionary_array, from_numpy, string_array, string_buffers
from ..docnos import canonical_integer_range, canonical_mask, hash64, integer_docnos
from ..errors import InputError
from ..kernels import rises_inside, run_starts
from ..tables import Qrels, Run
from ..threads import cores, in_background

QRELS_FIELDS = 4
RUN_FIELDS = 6
#: Query ids are dictionary-encoded while reading: a few thousand distinct values over millions
#: of lines, so alignment works on small integer indices and the dictionary alone.
_QUERY = pa.dictionary(pa.int32(), pa.string())


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    """Read a file, transparently un-gzipping it (by magic number, not by name)."""
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
    return data


def _is_gzip(path: str | os.PathLike[str]) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(2) == b"\x1f\x8b"
    except OSError:
        return False


@dataclass
class Derived:
    """What a read worker makes of one piece's columns: the columns to keep (None for one
    whose values went into ``rows``), a note of its own, and per-row arrays that
    :func:`_read_pieces` places into one contiguous array per name, piece after piece."""

    cols: list[pa.Array | None]
    note: Any
    rows: dict[str, np.ndarray]


Derive = Callable[[list[pa.Array]], Derived]
#: Columns (None where a column went into ``rows``), each piece's note, and the per-row arrays
#: of a file read in pieces (the notes and arrays are None when it was read whole).
Parsed = tuple[list[Any], list[Any] | None, dict[str, np.ndarray] | None]


def _fast_read(source: Any, n_fields: int, keep: dict[int, pa.DataType], derive: Derive | None = None) -> Parsed | None:
    """Parse single-space-separated lines with pyarrow; None when any line needs the line path.

    Returns the kept columns and, for a file read in pieces, what ``derive`` made of the pieces
    (see :data:`Parsed`).

    Blank lines make pyarrow fail (``ignore_empty_lines=False``) rather than vanish, and extra
    blanks change the field count, so a success here means row i is line i + 1. Other
    whitespace would not (pyarrow splits on the space alone, and ends lines at a lone CR), so
    a source holding any is left to the line path.
    """
    size = os.path.getsize(source) if isinstance(source, (str, os.PathLike)) else len(source)
    if isinstance(source, (str, os.PathLike)) and size > _PIECES_BYTES and not _is_gzip(source):
        return _read_pieces(source, n_fields, keep, derive)
    from pyarrow import csv

    # The scan reads the file once more; on its own thread it overlaps pyarrow's parse.
    stop = threading.Event()
    # A worker per call (a process forked later must not inherit a pool without its thread).
    scanner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rankflavor-scan")
    scan = scanner.submit(_only_spaces, source, stop)
    scanner.shutdown(wait=False)  # the submitted scan still runs; nothing else will

    names = [f"f{i}" for i in range(n_fields)]
    try:
        if isinstance(source, (str, os.PathLike)):
            stream = pa.CompressedInputStream(pa.OSFile(str(source)), "gzip") if _is_gzip(source) else pa.OSFile(str(source))
        else:
            stream = pa.BufferReader(source)
        # Blocks of about an eighth of the file (1-16 MB): pyarrow parses one block per thread, so a
        # file of one block (a qrels file of a few MB) would be read on one core.
        block = min(max(size // 8, 1 << 20), 1 << 24)
        with stream:
            table = csv.read_csv(stream, **_csv_options(n_fields, keep, block, threads=True))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, UnicodeDecodeError, OSError):
        stop.set()
        return None
    if not scan.result() or table.num_rows == 0:
        return None
    cols = [_one_array(table.column(names[i])) for i in sorted(keep)]
    if _line_path_ids(cols[0]):
        return None
    return cols, None, None


def _line_path_ids(query: pa.Array) -> bool:
    """Query ids that only the line path reads right: one starting with '#' (a comment line,
    which it skips and counts) or an empty one (a line starting with a blank: its fields are
    one column off). Of a dictionary column, its distinct values are looked at."""
    offsets, data = string_buffers(query.dictionary if pa.types.is_dictionary(query.type) else query)
    if (np.diff(offsets) == 0).any():
        return True
    return bool((data[offsets[:-1]] == ord("#")).any())


def _csv_options(n_fields: int, keep: dict[int, pa.DataType], block_size: int, threads: bool) -> dict[str, Any]:
    from pyarrow import csv

    names = [f"f{i}" for i in range(n_fields)]
    return {
        "read_options": csv.ReadOptions(column_names=names, block_size=block_size, use_threads=threads),
        "parse_options": csv.ParseOptions(delimiter=" ", quote_char=False, escape_char=False, ignore_empty_lines=False),
        "convert_options": csv.ConvertOptions(
            column_types={names[i]: t for i, t in keep.items()},
            include_columns=[names[i] for i in sorted(keep)],
            null_values=[],
            strings_can_be_null=False,
            quoted_strings_can_be_null=False,
        ),
    }


def _read_pieces(path: str | os.PathLike[str], n_fields: int, keep: dict[int, pa.DataType], derive: Derive | None) -> Parsed | None:
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
        bounds = _piece_bounds(fd, size, min(_PIECE_BYTES, max(-(-size // (2 * cores())), 1 << 20)))
        stop = threading.Event()  # the first piece that needs the line path stops the rest
        rows = _PieceRows(len(bounds), size // (2 * n_fields) + 1)  # a line has n_fields bytes and as many separators
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


class _PieceRows:
    """Where each piece's rows start, and the arrays its per-row values are placed in.

    Pieces finish out of order; one learns its first row once every earlier piece has counted
    its rows. A worker counts its piece right after the parse, before it waits on any other,
    and takes pieces in file order, so the earlier pieces are parsed or being parsed: no
    worker waits on one that no worker holds.
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
        self._counts[piece] = n
        self._counted[piece].set()

    def place(self, piece: int, values: dict[str, np.ndarray]) -> None:
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
                        self._arrays[name] = _reserve(self._capacity, v.dtype)
            except MemoryError:
                self._arrays = None
        return self._arrays

    def arrays(self) -> dict[str, np.ndarray]:
        if self._arrays is None:
            kept = [self._kept[k] for k in sorted(self._kept)]
            return {name: np.concatenate([p[name] for p in kept]) for name in (kept[0] if kept else {})}
        total = sum(self._counts)
        return {name: a[:total] for name, a in self._arrays.items()}


def _reserve(rows: int, dtype: np.dtype[Any]) -> np.ndarray:
    return np.empty(rows, dtype=dtype)


def _piece_bounds(fd: int, size: int, piece: int) -> list[tuple[int, int]]:
    """Byte ranges of about ``piece`` bytes, each but the last ending just after a newline."""
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
    derive: Derive | None, stop: threading.Event, rows: _PieceRows, buffers: _PieceBuffers,
) -> Derived | None:
    cols = None
    try:
        if not stop.is_set():
            start, end = bounds
            data, n = buffers.read(fd, start, end)
            cols = _parse_bytes(data, n_fields, keep, n) if n == end - start else None
    finally:
        rows.count(piece, len(cols[0]) if cols is not None else 0)  # always: later pieces wait on it
    if cols is None:
        stop.set()  # a short read (the file changed), other blanks, comments...: the line path decides
        return None
    derived = derive(cols) if derive is not None else Derived(list(cols), None, {})
    rows.place(piece, derived.rows)
    return derived


def _parse_bytes(
    data: bytes | bytearray, n_fields: int, keep: dict[int, pa.DataType], size: int | None = None
) -> list[pa.Array] | None:
    """Whole lines (the first ``size`` bytes, all by default), parsed single-threaded, or None
    when any of them needs the line path."""
    size = len(data) if size is None else size
    if not _clean(data, 0, size):
        return None
    from pyarrow import csv

    # Dictionary columns are read as strings and encoded from their runs (see _runs_encoded).
    as_read = {k: pa.string() if pa.types.is_dictionary(t) else t for k, t in keep.items()}
    try:
        buffer = pa.py_buffer(data).slice(0, size)
        table = csv.read_csv(pa.BufferReader(buffer), **_csv_options(n_fields, as_read, size + 1, threads=False))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, UnicodeDecodeError):
        return None
    if table.num_rows == 0:
        return None
    cols = [c.chunk(0) if c.num_chunks == 1 else c.combine_chunks() for c in table.columns]
    cols = [_runs_encoded(c) if pa.types.is_dictionary(keep[k]) else c for k, c in zip(sorted(keep), cols, strict=True)]
    # Encoded, the column's distinct values are its dictionary: only those few are looked at.
    return None if _line_path_ids(cols[0]) else cols


def _runs_encoded(values: pa.Array) -> pa.DictionaryArray:
    """Dictionary-encode a column whose equal values come in runs (a run file's query ids, written
    query by query) from its runs: the strings are hashed once per run instead of once per
    row, a few times cheaper than encoding while parsing."""
    n = len(values)
    # Where a run starts: one vectorised comparison of neighbours (cheaper than run_end_encode).
    change = as_numpy(arrow_ops.not_equal(values.slice(1), values.slice(0, max(n - 1, 0)))) if n > 1 else np.zeros(0, bool)
    starts = np.flatnonzero(np.concatenate([[n > 0], change]))
    names = arrow_ops.take(values, from_numpy(starts))
    if len(names) > 1:
        found = arrow_ops.dictionary_encode(names)  # a query may come back after another one
        which, names = as_numpy(found.indices), found.dictionary
    else:
        which = np.zeros(len(names), dtype=np.int32)
    indices = np.repeat(which.astype(np.int32, copy=False), np.diff(np.append(starts, n)))
    return pa.DictionaryArray.from_arrays(from_numpy(indices), names)


def _one_array(column: pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """Dictionary chunks (query ids) become one array with one dictionary; string columns
    (docnos) stay in chunks, as copying millions of strings into one buffer gains nothing."""
    if pa.types.is_dictionary(column.type):
        return column.unify_dictionaries().combine_chunks()
    if pa.types.is_string(column.type):
        return column.chunk(0) if column.num_chunks == 1 else column
    return column.combine_chunks()


_OTHER_BLANKS = (b"\t", b"\v", b"\f")
#: The blanks of trec_eval's ``isspace`` (str.strip and str.split also take a no-break space).
_BLANKS = " \t\n\r\v\f"
#: Public name of :data:`_BLANKS` for the Spark reader's field split (io/trec.py is being split;
#: its successor exposes BLANKS).
BLANKS = _BLANKS
#: About 200,000 run lines: above this, alignment casts docnos with pyarrow.compute.
_BIG_RUN_BYTES = 6_000_000
#: The blank scan of a file read whole reads it in blocks of this size into one buffer, which
#: then stays in a core's cache: the 5.6 MB qrels of the 7k bench set scan in 3.4 ms instead of
#: 12.6 ms in blocks of 16 MB (whose fresh pages also cost).
_SCAN_BYTES = 1 << 20
#: Uncompressed files larger than this are parsed in pieces of about _PIECE_BYTES on all cores.
_PIECES_BYTES = _BIG_RUN_BYTES
#: A piece of a few MB keeps its bytes and columns in a core's cache for the checks and the
#: derive that follow its parse: reading the 7k bench run in 4 MB pieces instead of 8 MB took
#: 0.96x the user time (31 alternated pairs; 2 MB pieces: no better, 1 MB: slower).
_PIECE_BYTES = 4 << 20


def _only_spaces(source: Any, stop: threading.Event | None = None) -> bool:
    """:func:`_clean` of a whole file or bytes.

    Files are scanned block by block into one reused buffer (no copy of the file in memory); a
    gzip file is decompressed for it, one more pass over the data.
    """
    if not isinstance(source, (str, os.PathLike)):
        return _clean(bytes(source), 0, len(source))
    opener: Any = gzip.open if _is_gzip(source) else open
    buf = bytearray(_SCAN_BYTES + 1)
    try:
        with opener(source, "rb") as fh:
            # The previous block's last byte is kept as this block's first: a CR ending it may be
            # followed by the LF opening this one, and a pair of bytes may span the two.
            carry = 0
            while n := fh.readinto(memoryview(buf)[carry:]):
                if stop is not None and stop.is_set():
                    return False
                end = carry + n
                if not _clean(buf, 0, end, final=False):
                    return False
                buf[0], carry = buf[end - 1], 1
            return carry == 0 or buf[0] not in (13, 32)  # no lone CR, no blank, ends the file
    except (OSError, EOFError, zlib.error):
        return False  # the line path reads the file again and names the problem


def _clean(data: bytes | bytearray, start: int, end: int, final: bool = True) -> bool:
    """Lines the columnar path reads as the line path does: no tab, vertical tab or form feed,
    every CR ending a line (CRLF), and no empty field (see :func:`_empty_fields`); ``final``:
    ``end`` ends the file (a blank there would end a line)."""
    if any(data.find(b, start, end) >= 0 for b in _OTHER_BLANKS):  # memchr; nothing is counted
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
    (:func:`_line_path_ids`). The pairs are compared two bytes at a time, at both alignments:
    no byte-pair search of the standard library runs near memchr's speed (4-5 ms for 8 MB,
    against 2 ms here).
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


def _normalized(data: bytes) -> bytes | None:
    """Tabs and runs of blanks folded to one space, lines stripped; None if comments or blank
    lines remain (those need the line path, which counts them)."""
    if not data[data.rfind(b"\n") + 1 :].split() and not data.endswith(b"\n"):
        return None  # a last line of blanks alone, with no newline: folding would drop it uncounted
    text = re.sub(rb"[ \t\r\v\f]+", b" ", data)
    text = re.sub(rb" ?\n ?", b"\n", text).strip(b" ")
    if not text or text.startswith((b"#", b"\n")) or b"\n#" in text or b"\n\n" in text.rstrip(b"\n"):
        return None
    return text


def _finite(values: np.ndarray) -> bool:
    return bool(np.isfinite(values).all()) if len(values) else True


def _swap_hint(n_fields: int, expected_kind: str) -> str:
    if expected_kind == "qrels" and n_fields >= RUN_FIELDS:
        return " This looks like a run line: were QRELS and RUN given in the wrong order?"
    if expected_kind == "run" and n_fields == QRELS_FIELDS:
        return " This looks like a qrels line: were QRELS and RUN given in the wrong order?"
    return ""


def _number(source: str, lineno: int, text: str, field: str, line: str) -> float:
    """A field as a number the way the fast path reads one: Python's ``float`` also takes digit
    groups ("1_0" is 10) and non-ASCII digits, which pyarrow and trec_eval's ``atof`` do not."""
    try:
        if not text.isascii() or "_" in text:
            raise ValueError
        value = float(text)
    except ValueError:
        raise InputError(source, lineno, f"{field} {text!r} is not a number", line) from None
    if not math.isfinite(value):
        raise InputError(source, lineno, f"{field} {text!r} is not a finite number", line)
    return value


def _decode(source: str, data: bytes, first_line: int = 1) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        lineno = data.count(b"\n", 0, exc.start) + first_line
        raise InputError(source, lineno, "is not valid UTF-8 text") from None


#: What ``str.split`` takes for a blank and trec_eval's ``isspace`` does not.
_UNICODE_BLANK = re.compile("[\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")
_FIELD = re.compile(f"[^{re.escape(_BLANKS)}]+")


def _lines(source: str, data: bytes, first_line: int = 1) -> Iterator[tuple[int, str, list[str]]]:
    """Each line of ``data`` (valid UTF-8, else an error naming the line) with its number and its
    fields, split at runs of the blanks trec_eval's ``isspace`` knows (space, tab, CR, vertical
    tab, form feed) and no others: ``str.split`` would also split at a no-break space or U+001F,
    which trec_eval and the columnar path keep inside a field (it is used where none occurs)."""
    text = _decode(source, data, first_line)
    if text.isascii():  # most files; a pass of the regex costs more than the four finds
        plain = not any(c in text for c in "\x1c\x1d\x1e\x1f")
    else:
        plain = _UNICODE_BLANK.search(text) is None
    split = str.split if plain else _FIELD.findall
    for lineno, raw in enumerate(text.split("\n"), first_line):
        yield lineno, raw, split(raw)


def _check_not_empty(source: str, data: bytes, kind: str, layout: str) -> None:
    if not data.strip():
        raise InputError(source, None, f"{kind} file is empty; expected lines '{layout}'")


def read_qrels(path: str | os.PathLike[str]) -> Qrels:
    """Read a TREC qrels file (``query iteration doc grade``).

    Raises
    ------
    InputError
        Naming file, line and the expected layout when a line is malformed, a grade is not a
        finite number, or the file is empty.
    """
    source = str(path)
    kinds = {0: _QUERY, 2: pa.string(), 3: pa.float64()}
    parsed, data, _ = _columnar(path, QRELS_FIELDS, kinds, "qrels", "query iteration doc grade")
    if parsed is not None:
        cols = parsed[0]
        grade = as_numpy(cols[2])
        if _finite(grade):
            return Qrels(cols[0], cols[1], grade.astype(np.float64, copy=False), source, from_file=True,
                         doc_canonical=in_background(canonical_mask, cols[1]))
    return _slow_qrels(source, data if data is not None else read_bytes(path))


def _slow_qrels(source: str, data: bytes) -> Qrels:
    queries: list[str] = []
    docs: list[str] = []
    grades: list[float] = []
    lines: list[int] = []
    comments = blanks = 0
    for lineno, raw, parts in _lines(source, data):
        if not parts:
            blanks += 1
            continue
        if parts[0].startswith("#"):
            comments += 1
            continue
        if len(parts) != QRELS_FIELDS:
            raise InputError(
                source,
                lineno,
                f"expected 4 whitespace-separated fields 'query iteration doc grade', found {len(parts)}."
                + _swap_hint(len(parts), "qrels"),
                raw,
            )
        queries.append(parts[0])
        docs.append(parts[2])
        grades.append(_number(source, lineno, parts[3], "grade", raw))
        lines.append(lineno)
    if not grades:
        raise InputError(source, None, "qrels file has no judgment lines; expected 'query iteration doc grade'")
    return Qrels(
        dictionary_array(queries),
        string_array(docs),
        np.asarray(grades, dtype=np.float64),
        source,
        np.asarray(lines, dtype=np.int64),
        comments,
        blanks - 1 if data.endswith(b"\n") else blanks,
        from_file=True,
    )


def read_run(path: str | os.PathLike[str]) -> Run:
    """Read a TREC run file (``query Q0 doc rank score tag``).

    The run tag reported is the last line's, as trec_eval reports it.
    """
    source = str(path)
    kinds = {0: _QUERY, 2: pa.string(), 4: pa.float64()}
    gzipped = os.path.isfile(path) and _is_gzip(path)
    if gzipped:  # no cheap way to the last line: read the tag column
        kinds[5] = pa.string()
    parsed, data, origin = _columnar(path, RUN_FIELDS, kinds, "run", "query Q0 doc rank score tag", _run_piece)
    if parsed is not None:
        cols, notes, rows = parsed
        values = hashes = None
        doc_range: tuple[int, int] | None = None
        doc = cols[1]
        if notes is None or rows is None:  # read whole
            score = as_numpy(cols[2])
            finite = _finite(score)
        else:
            score = rows["score"]
            finite = all(note.finite for note in notes)
            if finite:
                doc, values, hashes = _piece_docnos(notes, rows["doc_key"])
                if values is not None:
                    doc_range = (min((n.low for n in notes if n.high >= n.low), default=0), max(n.high for n in notes))
        if finite:
            runs, descending = _runs_across(cols[0], score, notes) if notes is not None else (None, False)
            tag = str(cols[3][len(cols[3]) - 1].as_py()).strip(_BLANKS) if gzipped else _last_tag(source, origin)
            return Run(cols[0], doc, score.astype(np.float64, copy=False), source, tag=tag, from_file=True,
                       doc_integers=values, doc_hashes=hashes, doc_integer_range=doc_range, query_runs=runs,
                       scores_descend=descending)
    return _slow_run(source, data if data is not None else read_bytes(path))


class RunPieceNote(NamedTuple):
    """What a read worker learned of a run piece: are all its scores finite, its rows, its
    docno strings (None when all are canonical integers: the values stand for them), the
    integers' least and greatest value, where its runs of one query id start, and whether
    scores never rise inside them (alignment and ordering need these; the worker finds them
    while the values are in its cache)."""

    finite: bool
    rows: int
    docs: pa.Array | None
    low: int = 0
    high: int = -1
    query_runs: np.ndarray | None = None
    descending: bool = False

    @property
    def integers(self) -> bool:
        return self.docs is None


def _run_piece(cols: list[pa.Array]) -> Derived:
    """A run piece's scores, and its docnos as integers when all are canonical, else their
    hashes (see :mod:`rankflavor.docnos`), with a :class:`RunPieceNote`. Integer docnos' strings
    are let go here, so the next pieces' parse reuses their memory."""
    score = as_numpy(cols[2])
    runs, descending = _query_runs(cols[0], score)
    found = canonical_integer_range(cols[1])
    if found is None:
        note = RunPieceNote(_finite(score), len(score), cols[1], query_runs=runs, descending=descending)
        key = hash64(cols[1]).view(np.int64)
    else:
        key, low, high = found
        note = RunPieceNote(_finite(score), len(score), None, low, high, runs, descending)
    return Derived([cols[0], None, None], note, {"score": score, "doc_key": key})


def _query_runs(query: pa.Array, score: np.ndarray) -> tuple[np.ndarray | None, bool]:
    """Where the runs of one query id start in a piece's dictionary-encoded ``query`` column
    (None for another column), and whether no score rises inside a run."""
    if not pa.types.is_dictionary(query.type) or len(score) == 0:
        return None, False
    starts = run_starts(as_numpy(query.indices))
    return starts, not rises_inside(score, starts)


def _runs_across(query: pa.ChunkedArray | pa.Array, score: np.ndarray, notes: list[RunPieceNote]
                 ) -> tuple[tuple[np.ndarray, ...] | None, bool]:
    """The pieces' query runs (one array per chunk of ``query``), and whether no score rises
    inside a run of one query id, one that goes on from a piece into the next included."""
    chunks = query.chunks if isinstance(query, pa.ChunkedArray) else [query]
    runs = tuple(n.query_runs for n in notes if n.query_runs is not None)
    if not len(chunks) == len(runs) == len(notes):
        return None, False
    descending = all(n.descending for n in notes)
    start = 0
    for k in range(1, len(notes)):
        start += notes[k - 1].rows
        if descending and score[start] > score[start - 1]:
            before, after = chunks[k - 1], chunks[k]
            # a rise between pieces is inside a run only if the query id goes on
            descending = before[len(before) - 1].as_py() != after[0].as_py()
    return runs, descending


def _piece_docnos(
    notes: list[RunPieceNote], key: np.ndarray
) -> tuple[pa.ChunkedArray | None, tuple[np.ndarray] | None, tuple[np.ndarray] | None]:
    """The docno strings, integers and hashes of a run read in pieces, from the pieces' notes
    and keys (one array, a piece's rows after another's).

    When every piece read integers there are no strings (the Run builds them when asked).
    Otherwise every row is hashed: pieces that read integers while another read text get their
    strings back from their values, and hashes written over the integers.
    """
    if all(note.integers for note in notes):
        return None, (key,), None
    chunks: list[pa.Array] = []
    start = 0
    for note in notes:
        if note.docs is None:
            rows = key[start : start + note.rows]
            strings = integer_docnos((rows,))
            rows[:] = hash64(strings).view(np.int64)
            chunks.append(strings)
        else:
            chunks.append(note.docs)
        start += note.rows
    return pa.chunked_array(chunks, pa.string()), None, (key.view(np.uint64),)


def _last_tag(source: str, origin: str | os.PathLike[str] | bytes) -> str:
    """The tag (sixth field) of the last line of a file the columnar reader accepted.

    Reading it from the tail of the file (or bytes) spares parsing a whole column for one value,
    and copying the bytes (rstrip and rsplit of a whole piece would copy it twice)."""
    if isinstance(origin, bytes):
        last = _last_line(lambda a, b: origin[a:b], len(origin))
    else:
        with open(origin, "rb") as fh:

            def window(a: int, b: int) -> bytes:
                fh.seek(a)
                return fh.read(b - a)

            last = _last_line(window, fh.seek(0, os.SEEK_END))
    field = last.split(b" ")[RUN_FIELDS - 1]
    try:
        return field.strip().decode("utf-8")  # bytes.strip: trec_eval's blanks, not Unicode's
    except UnicodeDecodeError:
        raise InputError(source, None, "the run tag on the last line is not valid UTF-8 text") from None


def _last_line(window: Callable[[int, int], bytes], end: int) -> bytes:
    """The last line with text, read through ``window(start, end)`` in growing windows from the end."""
    size = 4096
    while True:
        start = max(0, end - size)
        tail = window(start, end).rstrip(b"\r\n")
        if start == 0 or b"\n" in tail:
            return tail.rsplit(b"\n", 1)[-1]
        size *= 4


def _columnar(
    path: str | os.PathLike[str], n_fields: int, kinds: dict[int, pa.DataType], kind: str, layout: str,
    derive: Derive | None = None,
) -> tuple[Parsed | None, bytes | None, str | os.PathLike[str] | bytes]:
    """Columns (and what ``derive`` made of the pieces) from the file as it is, else from its
    whitespace-normalised text; the bytes are returned when they were read, for the
    line-by-line path to reuse, and what was parsed."""
    parsed = _fast_read(path, n_fields, kinds, derive) if os.path.isfile(path) else None
    if parsed is not None:
        return parsed, None, path
    data = read_bytes(path)
    _check_not_empty(str(path), data, kind, layout)
    text = _normalized(data)
    return (_fast_read(text, n_fields, kinds) if text is not None else None), data, text or b""


def _slow_run(source: str, data: bytes, first_line: int = 1, whole_file: bool = True) -> Run:
    """The line-by-line reader; ``data`` may be a part of the file (whole lines) starting at
    ``first_line``, and then it may hold no result line."""
    queries: list[str] = []
    docs: list[str] = []
    scores: list[float] = []
    lines: list[int] = []
    comments = blanks = extra = 0
    tag: str | None = None
    for lineno, raw, parts in _lines(source, data, first_line):
        if not parts:
            blanks += 1
            continue
        if parts[0].startswith("#"):
            comments += 1
            continue
        if len(parts) < RUN_FIELDS:
            raise InputError(
                source,
                lineno,
                f"expected 6 whitespace-separated fields 'query Q0 doc rank score tag', found {len(parts)}."
                + _swap_hint(len(parts), "run"),
                raw,
            )
        if len(parts) > RUN_FIELDS:
            extra += 1
        queries.append(parts[0])
        docs.append(parts[2])
        scores.append(_number(source, lineno, parts[4], "score", raw))
        lines.append(lineno)
        tag = parts[5]
    if not scores and whole_file:
        raise InputError(source, None, "run file has no result lines; expected 'query Q0 doc rank score tag'")
    return Run(
        dictionary_array(queries),
        string_array(docs),
        np.asarray(scores, dtype=np.float64),
        source,
        np.asarray(lines, dtype=np.int64),
        tag,
        comments,
        blanks - 1 if data.endswith(b"\n") else blanks,
        extra,
        from_file=True,
    )
