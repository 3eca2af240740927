"""Stream a TREC run file in query-aligned chunks: the run read in byte pieces (parsed on threads,
gzip streamed), rows cut only at query boundaries, every line still numbered for errors.

:func:`run_batches` yields the file's rows in order; :func:`query_chunks` groups them into runs of
about ``chunk_rows`` rows holding whole queries only (:func:`rankflavor.engine.chunked.evaluate_chunked`
evaluates each; ``rankflavor convert`` writes each). A query's rows must be contiguous in the
file (true of every TREC run written per topic): a query that reappears after its block ended is
an error, never read in two halves.
"""

from __future__ import annotations

import gzip
import itertools
import os
import zlib
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankflavor.base.progress import Task
from rankflavor.base.threads import cores
from rankflavor.errors import InputError
from rankflavor.io import columnar
from rankflavor.io.columns import as_numpy, plain_strings, string_array, to_strings, used_names
from rankflavor.io.lines import RUN_FIELDS, parse_run_lines
from rankflavor.io.parse import QUERY, parse_bytes
from rankflavor.io.run import last_tag, run_piece
from rankflavor.io.source import is_gzip, piece_bounds
from rankflavor.io.tables import Run

#: Bytes per piece the stream reads (and hands a parse thread) at a time: a setting of this
#: module, the columnar reader's piece size unless set (a test sets a few lines' worth).
PIECE_BYTES = columnar.PIECE_BYTES

#: Docno keys a parse worker made: ("integers", values) when every docno of the piece is a
#: canonical integer, else ("hashes", hash64 as int64); None from the line path.
Keys = tuple[str, np.ndarray] | None
#: One batch of run rows in file order: query ids (dictionary-encoded) and docnos, scores, docno
#: keys, the last line's tag, the comment lines, blank lines and lines with extra fields it held,
#: and its rows' lines: each row's (the line path, which skips comments), or the first one's
#: when the rows are consecutive lines (the columnar path).
Batch = tuple[pa.Array, pa.Array, np.ndarray, Keys, "str | None", int, int, int, "np.ndarray | int"]


def run_batches(path: str, bar: Task | None = None) -> Iterator[Batch]:
    """The run's rows in file order, a line-aligned piece of the file at a time.

    Pieces are parsed by the columnar reader on every core, a few pieces ahead (memory stays
    bounded). From the first piece it cannot take (a comment, a tab, a bad line...) to the end
    of the file, the line-by-line reader goes on from that piece's first line: nothing is read
    twice, comments and blank lines are skipped and counted, and errors name their line.
    ``bar`` is advanced by each piece's bytes as it is read.
    """
    pieces = _byte_pieces(path, bar)
    workers = cores()
    line = 1
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rankflavor-chunk") as pool:
        ahead: deque[tuple[bytes, Future[Any]]] = deque()
        for data in itertools.chain(pieces, [None]):
            if data is not None:
                ahead.append((data, pool.submit(_parse_piece, data)))
                if len(ahead) <= 2 * workers:
                    continue
            while ahead and (data is None or len(ahead) > 2 * workers):
                piece, future = ahead.popleft()
                parsed = future.result()
                if parsed is None:
                    rest = itertools.chain([piece], (p for p, _ in ahead), pieces)
                    yield from _line_batches(path, rest, line)
                    return
                query, doc, score, keys = parsed
                yield query, doc, score, keys, last_tag(path, piece), 0, 0, 0, line
                line += len(score)


def _parse_piece(data: bytes) -> tuple[pa.Array, pa.Array, np.ndarray, Keys] | None:
    """A piece's query ids (encoded from their runs, as the whole-file reader does), docnos,
    scores and docno keys (read on the worker, so that alignment does not read them on one
    thread); None when the line path must take it (or a score is not finite: it names the line)."""
    cols = parse_bytes(data, RUN_FIELDS, {0: QUERY, 2: pa.string(), 4: pa.float64()})
    if cols is None:
        return None
    derived = run_piece(cols)
    finite, integers = derived.note.finite, derived.note.integers
    if not finite:
        return None
    return cols[0], cols[1], derived.rows["score"], ("integers" if integers else "hashes", derived.rows["doc_key"])


def _byte_pieces(path: str, bar: Task | None = None) -> Iterator[bytes]:
    """The file's bytes (gzip decompressed as it streams) in pieces of whole lines; ``bar`` is
    advanced by the bytes of the file each piece took (compressed bytes for gzip)."""
    try:
        if not is_gzip(path):  # pieces cut at line ends and read where they lie: no carried copy
            fd = os.open(path, os.O_RDONLY)
            try:
                for start, end in piece_bounds(fd, os.fstat(fd).st_size, PIECE_BYTES):
                    data = os.pread(fd, end - start, start)
                    if len(data) != end - start:
                        raise OSError(f"the file changed while it was read ({len(data)} bytes at {start}, "
                                      f"expected {end - start})")
                    if bar is not None:
                        bar.advance(len(data))
                    yield data
            finally:
                os.close(fd)
            return
        with open(path, "rb") as raw, gzip.open(raw, "rb") as fh:
            carry = b""
            done = 0
            while block := fh.read(PIECE_BYTES):
                data = carry + block
                cut = data.rfind(b"\n") + 1
                carry = data[cut:]
                if bar is not None:  # how far into the compressed file the decompressor has read
                    bar.advance(raw.tell() - done)
                    done = raw.tell()
                if cut:
                    yield data[:cut]
            if carry:
                yield carry
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(path, None, f"cannot read the run: {exc}") from None


def _line_batches(path: str, pieces: Iterator[bytes], first_line: int) -> Iterator[Batch]:
    """The line-by-line reader over the remaining pieces, lines numbered from ``first_line``."""
    line = first_line
    for piece in pieces:
        run = parse_run_lines(path, piece, line, whole_file=False)
        line += piece.count(b"\n") + (0 if piece.endswith(b"\n") else 1)
        if len(run):
            query = pc.dictionary_encode(plain_strings(run.query))
            assert run.lines is not None  # the line path numbers every row
            yield query, run.doc, run.score, None, run.tag, run.comments, run.blank_lines, run.extra_fields, run.lines
        elif run.comments or run.blank_lines:  # a piece of comments only: still counted
            empty = string_array([])
            yield (empty.dictionary_encode(), empty, np.zeros(0), None, None, run.comments, run.blank_lines, 0,
                   np.zeros(0, dtype=np.int64))


def iter_query_chunks(path: str, chunk_rows: int) -> Iterator[Run]:
    """Yield runs of about ``chunk_rows`` rows, each holding whole queries only."""
    for run, _ in query_chunks(run_batches(path), path, chunk_rows):
        yield run


def query_chunks(batches: Iterator[Batch], path: str, chunk_rows: int) -> Iterator[tuple[Run, list[str]]]:
    """Chunks of whole queries, each with its distinct query ids (sorted)."""
    pending_q: list[pa.Array] = []
    pending_d: list[pa.Array] = []
    pending_s: list[np.ndarray] = []
    # Docno keys of the pending rows while every batch gave keys of one kind ("" before any row).
    pending_kind: str | None = ""
    pending_k: list[np.ndarray] = []
    pending_rows = 0
    lines = np.zeros(3, dtype=np.int64)  # comments, blank lines, extra fields not yet in a chunk
    finished: set[str] = set()
    tag: str | None = None
    emitted = False
    pending_at: list[tuple[np.ndarray | int, int]] = []  # each pending batch's lines, and its rows
    for q, d, s, keys, batch_tag, comments, blanks, extra, at in batches:
        tag = batch_tag if batch_tag is not None else tag
        lines += (comments, blanks, extra)
        pending_at.append((at, len(s)))
        if len(s):
            kind = None if keys is None else keys[0]
            pending_kind = kind if pending_kind == "" else pending_kind if pending_kind == kind else None
            pending_k = [*pending_k, keys[1]] if pending_kind is not None and keys is not None else []
        pending_q.append(q)
        pending_d.append(d)
        pending_s.append(s)
        pending_rows += len(s)
        if pending_rows < chunk_rows:
            continue
        cut = _last_query_start(pending_q)
        if cut == 0:
            continue  # one query longer than a chunk: keep reading
        # Chunked arrays, sliced: the pieces' strings are not copied into one array.
        allq, alld = pa.chunked_array(pending_q, type=QUERY), pa.chunked_array(pending_d, type=pa.string())
        alls = np.concatenate(pending_s)
        allk = np.concatenate(pending_k) if pending_kind else None
        head, pending_at = _split_lines(pending_at, cut)
        yield _chunk(allq.slice(0, cut), alld.slice(0, cut), alls[:cut], pending_kind,
                     None if allk is None else allk[:cut], path, tag, finished, lines, head)
        lines = np.zeros(3, dtype=np.int64)
        emitted = True
        pending_q, pending_d, pending_s = allq.slice(cut).chunks, alld.slice(cut).chunks, [alls[cut:]]
        pending_k = [] if allk is None else [allk[cut:]]
        pending_rows = len(alls) - cut
    if pending_rows or not emitted:
        if not pending_rows:
            raise InputError(path, None, "run file has no result lines; expected 'query Q0 doc rank score tag'")
        yield _chunk(pa.chunked_array(pending_q, type=QUERY), pa.chunked_array(pending_d, type=pa.string()),
                     np.concatenate(pending_s), pending_kind, np.concatenate(pending_k) if pending_kind else None,
                     path, tag, finished, lines, pending_at)


def _split_lines(
    at: list[tuple[np.ndarray | int, int]], cut: int
) -> tuple[list[tuple[np.ndarray | int, int]], list[tuple[np.ndarray | int, int]]]:
    """Batches' line numbers (each row's, or the first of consecutive rows), split at row ``cut``."""
    head: list[tuple[np.ndarray | int, int]] = []
    tail: list[tuple[np.ndarray | int, int]] = []
    for x, n in at:
        if cut >= n and not tail:
            head.append((x, n))
            cut -= n
        elif cut <= 0:
            tail.append((x, n))
        else:
            head.append((x if isinstance(x, int) else x[:cut], cut))
            tail.append((x + cut if isinstance(x, int) else x[cut:], n - cut))
            cut = 0
    return head, tail


def _numbered(at: list[tuple[np.ndarray | int, int]]) -> tuple[np.ndarray | None, int]:
    """A chunk's line numbers: (None, the first line) when its rows are consecutive lines (no
    comment or blank line among them: every batch of the columnar path), else (each row's, 1)."""
    firsts = [(x, n) for x, n in at if n]
    if all(isinstance(x, int) for x, _ in firsts) and all(
        int(x) + n == y for (x, n), (y, _) in itertools.pairwise(firsts)
    ):
        return None, int(firsts[0][0]) if firsts else 1
    parts = [np.arange(x, x + n, dtype=np.int64) if isinstance(x, int) else x for x, n in firsts]
    return (np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)), 1


def _last_query_start(batches: list[pa.DictionaryArray]) -> int:
    """The first row (counted over all ``batches``) of the last query's final block: 0 when every
    row is that query's. Looked for from the last batch back, on dictionary indices."""
    rows = sum(len(b) for b in batches)
    name = None
    for batch in reversed(batches):
        rows -= len(batch)
        if not len(batch):
            continue
        indices = as_numpy(batch.indices)
        names = to_strings(batch.dictionary)
        if name is None:
            name = names[int(indices[-1])]
        other = np.flatnonzero(indices != (names.index(name) if name in names else -1))
        if len(other):
            return rows + int(other[-1]) + 1
    return 0


def _distinct_queries(query: pa.ChunkedArray) -> list[str]:
    """The distinct query ids of a chunk's dictionary-encoded query column (sorted)."""
    names: set[str] = set()
    for piece in query.chunks:
        if len(piece):
            names.update(used_names(piece))
    return sorted(names)


def _chunk(q: pa.ChunkedArray, d: pa.ChunkedArray, s: np.ndarray, key_kind: str | None, keys: np.ndarray | None,
           path: str, tag: str | None, finished: set[str], lines: np.ndarray,
           at: list[tuple[np.ndarray | int, int]]) -> tuple[Run, list[str]]:
    names = _distinct_queries(q)
    queries = set(names)
    again = queries & finished
    if again:
        name = sorted(again)[0]
        raise InputError(
            path,
            None,
            f"query {name!r} appears again after its block ended; chunked evaluation needs each query's "
            "lines to be contiguous (sort the run by query, or evaluate without --chunk-rows)",
        )
    finished |= queries
    comments, blanks, extra = (int(x) for x in lines)
    integers = (keys,) if key_kind == "integers" and keys is not None else None
    hashes = (keys.view(np.uint64),) if key_kind == "hashes" and keys is not None else None
    numbers, first_line = _numbered(at)
    return Run(q, d, s, path, numbers, tag=(tag or "").strip() or None, comments=comments, blank_lines=blanks,
               extra_fields=extra, from_file=True, first_line=first_line, doc_integers=integers,
               doc_hashes=hashes), names


__all__ = ["PIECE_BYTES", "Batch", "Keys", "iter_query_chunks", "query_chunks", "run_batches"]
