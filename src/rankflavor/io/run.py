"""Read a run: :func:`read_run`, in any format of :mod:`rankflavor.io.formats`; TREC runs
(``query Q0 doc rank score tag``) read here, columnar, plain or compressed.

Besides the columns, a run read in pieces carries what the read workers found while each
piece was in their cache: its docnos as canonical integers (or their hashes), where its runs
of one query id start, and whether scores never rise inside them (see :class:`RunPieceNote`).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping
from typing import NamedTuple

import numpy as np
import pyarrow as pa

from rankflavor.base.kernels import rises_inside, run_starts
from rankflavor.errors import InputError
from rankflavor.io.arrow_ops import dictionary_encode
from rankflavor.io.columnar import columnar
from rankflavor.io.columns import as_numpy, from_numpy
from rankflavor.io.docnos import canonical_integer_range, hash64, integer_docnos
from rankflavor.io.formats.read import read_formatted
from rankflavor.io.formats.spec import split_input
from rankflavor.io.lines import RUN_FIELDS, RUN_LAYOUT, parse_run_lines
from rankflavor.io.parse import QUERY, Derived
from rankflavor.io.source import BLANKS, is_gzip, read_bytes
from rankflavor.io.tables import Run


def read_run(path: str | os.PathLike[str], format: str | None = None,
             columns: str | Mapping[str, str] | None = None) -> Run:
    """Read a run in any supported format, plain or compressed (gzip, bz2, xz, zstd).

    Parameters are those of :func:`rankflavor.io.qrels.read_qrels`; a run's columns are
    ``query``, ``doc``, and ``score`` or ``rank``. A run with ranks and no scores (``msmarco``,
    ``quepid`` snapshots, hits without ``_score``, a table with a rank column alone) is ordered
    by its ranks: ``Run.ranked_by`` is ``"rank"`` and measures on it carry ``order=rank``.

    Raises
    ------
    InputError
        Naming file and line (or row, or JSON path) and what was expected.
    UsageError
        For an unknown format, or columns for a format that has none.
    """
    path, fmt, cols = split_input(path, format, columns, "run")
    found = read_formatted(path, "run", fmt, cols) if fmt != "trec" else None
    if found is not None:
        assert isinstance(found, Run)
        # (the reader's decode buffers back to the system before noting hashes text docnos: a
        # 7M-row Parquet run of text docnos peaked at 701 MiB without this, 525 with it; integer
        # docnos allocate little there, and touching the pages again cost 1.09 -> 1.52 s)
        if found.doc_integers is None:
            pa.default_memory_pool().release_unused()
        run = noted(found, finite=True)  # (the table readers refuse a score that is not finite)
    else:
        run = read_trec_run(path)
    # The reader's buffers are free now, but Arrow's allocator keeps such pages for reuse: give
    # them back before alignment allocates its own (a call on the allocator, no setting of it;
    # bench/memory.py measures it).
    pa.default_memory_pool().release_unused()
    return run


#: Rows of one piece when :func:`noted` notes a run read whole (as the TREC reader's pieces).
NOTE_ROWS = 1 << 20


def noted(run: Run, finite: bool = False) -> Run:
    """A run a columnar format read whole (Parquet, Arrow IPC-backed tables, JSONL, CSV) with the
    notes the TREC reader takes of its pieces (:func:`run_piece`): docnos as integers when all
    are canonical (their strings let go) or their hashes, where each query's rows start, and
    whether scores descend inside them. Alignment and ordering then take the same fast path as
    for a TREC file of the same rows; without the notes they find these out one by one, on one
    thread (a Parquet run was slower to evaluate than its text: issue 33).

    The pieces are the query column's chunks when it comes in dictionary chunks (a Parquet
    file's row groups, :data:`~rankflavor.io.formats.table.CHUNK_ROWS`), else slices of
    :data:`NOTE_ROWS` rows; they are noted on two threads (NumPy and pyarrow release the GIL).
    A run whose docnos are known already (an integer column:
    :func:`~rankflavor.io.formats.table.integer_ids`) gets its query runs alone; plain query ids
    (a DataFrame's) are dictionary-encoded first. A run of fewer than ``2 * NOTE_ROWS`` rows, one
    whose query ids are neither dictionary chunks nor one (dictionary or plain) array, one with a
    score that is not finite (the engine's check names it; ``finite``: the reader checked them
    all) or one noted already is returned as it is."""
    from rankflavor.base.threads import SharedWork, in_background

    query, doc = run.query, run.doc_strings
    if len(run) < 2 * NOTE_ROWS or run.query_runs is not None or not (finite or _finite(run.score)):
        return run
    if pa.types.is_string(query.type) and not isinstance(query, pa.ChunkedArray):
        query = dictionary_encode(query)  # (a DataFrame's plain ids: as one dictionary, as a reader gives them)
    if isinstance(query, pa.ChunkedArray) and pa.types.is_dictionary(query.type):
        chunks = pa.chunked_array([c for c in query.chunks if len(c)], query.type)  # the reader's row groups
    elif isinstance(query, pa.DictionaryArray):
        chunks = pa.chunked_array([query.slice(a, NOTE_ROWS) for a in range(0, len(run), NOTE_ROWS)])
    else:
        return run
    bounds = list(zip(np.cumsum([0] + [len(c) for c in chunks.chunks[:-1]]).tolist(),
                      [len(c) for c in chunks.chunks], strict=True))  # (first row, rows) of each piece
    if run.doc_integers is not None or run.doc_hashes is not None or doc is None:  # the docnos are known
        notes = [RunPieceNote(True, n, None, 0, -1, *_query_runs(c, run.score[a:a + n]))
                 for (a, n), c in zip(bounds, chunks.chunks, strict=True)]
        runs, descending = _runs_across(chunks, run.score, notes)
        return dataclasses.replace(run, query=chunks, query_runs=runs, scores_descend=descending)
    def piece(k: int) -> Callable[[], Derived]:
        a, n = bounds[k]
        return lambda: run_piece([chunks.chunk(k), _one_array(doc.slice(a, n)), from_numpy(run.score[a : a + n])])

    work = SharedWork([piece(k) for k in range(len(bounds))])
    helper = in_background(work.run)
    work.run()
    helper.result()
    pieces: list[Derived] = work.results
    notes = [p.note for p in pieces]
    key = np.concatenate([p.rows["doc_key"] for p in pieces])
    docs, values, hashes = _piece_docnos(notes, key)
    doc_range = None
    if values is not None:
        doc_range = (min((n.low for n in notes if n.high >= n.low), default=0), max(n.high for n in notes))
    runs, descending = _runs_across(chunks, run.score, notes)
    return dataclasses.replace(run, query=chunks, doc_strings=docs, doc_integers=values, doc_hashes=hashes,
                               doc_integer_range=doc_range, query_runs=runs, scores_descend=descending)


def _one_array(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    """A piece of docnos as one array: a chunk of its own as it is (a Parquet row group of
    :data:`NOTE_ROWS` rows, pyarrow's default, is one), else its chunks joined. Joining the
    piece alone, not the whole column (a second copy of every docno string at the peak)."""
    if isinstance(values, pa.Array):
        return values
    return values.chunk(0) if values.num_chunks == 1 else values.combine_chunks()


def read_trec_run(path: str | os.PathLike[str]) -> Run:
    """Read a TREC run file (``query Q0 doc rank score tag``).

    The run tag reported is the last line's, as trec_eval reports it. The columnar reader
    takes clean single-space files; the line-by-line reader
    (:func:`rankflavor.io.lines.parse_run_lines`) everything else, with the same result.

    Raises
    ------
    InputError
        Naming file, line and the expected layout when a line is malformed, a score is not a
        finite number, or the file is empty.
    """
    source = str(path)
    kinds = {0: QUERY, 2: pa.string(), 4: pa.float64()}
    gzipped = os.path.isfile(path) and is_gzip(path)
    if gzipped:  # no cheap way to the last line: read the tag column
        kinds[5] = pa.string()
    parsed, data, origin = columnar(path, RUN_FIELDS, kinds, "run", RUN_LAYOUT, run_piece)
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
            tag = str(cols[3][len(cols[3]) - 1].as_py()).strip(BLANKS) if gzipped else last_tag(source, origin)
            return Run(cols[0], doc, score.astype(np.float64, copy=False), source, tag=tag, from_file=True,
                       doc_integers=values, doc_hashes=hashes, doc_integer_range=doc_range, query_runs=runs,
                       scores_descend=descending)
    return parse_run_lines(source, data if data is not None else read_bytes(path))


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


def run_piece(cols: list[pa.Array]) -> Derived:
    """A run piece's scores, and its docnos as integers when all are canonical, else their
    hashes (see :mod:`rankflavor.io.docnos`), with a :class:`RunPieceNote`. Integer docnos' strings
    are let go here, so the next pieces' parse reuses their memory.

    ``cols`` are the piece's query ids (dictionary-encoded), docnos and scores; the result's
    ``rows`` hold ``"score"`` and ``"doc_key"`` (integer values, or hashes as int64).
    """
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


def last_tag(source: str, origin: str | os.PathLike[str] | bytes) -> str:
    """The tag (sixth field) of the last line of a file (or bytes) the columnar reader accepted.

    Reading it from the tail spares parsing a whole column for one value, and copying the
    bytes (rstrip and rsplit of a whole piece would copy it twice).

    Raises
    ------
    InputError
        When the tag is not valid UTF-8 text.

    Examples
    --------
    >>> last_tag("r.txt", b"q1 Q0 d 1 2.0 first\\nq1 Q0 e 2 1.0 last\\r\\n")
    'last'
    """
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


def _finite(values: np.ndarray) -> bool:
    return bool(np.isfinite(values).all()) if len(values) else True


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
