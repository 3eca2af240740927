"""Columnar containers for judgments and rankings, as read and before any policy is applied.

Ids stay strings (``pyarrow`` string arrays, possibly chunked; the file readers dictionary-encode
query ids, with a dictionary per chunk when a big file is read in pieces); numbers are NumPy
arrays. ``lines`` maps each row back to its 1-based line in the source so later stages can name
the line of a problem.
"""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pyarrow as pa


@dataclass(frozen=True)
class Qrels:
    """Judgments: one row per (query, document, grade)."""

    query: pa.Array | pa.ChunkedArray
    doc: pa.Array | pa.ChunkedArray
    grade: np.ndarray
    source: str = "qrels"
    lines: np.ndarray | None = None
    comments: int = 0
    blank_lines: int = 0
    from_file: bool = False
    #: Per docno, is it a canonical decimal integer, and its value (``docnos.canonical_mask``),
    #: when the file reader is finding them on a thread of its own (None: alignment finds out).
    #: Read only.
    doc_canonical: Future[tuple[np.ndarray, np.ndarray]] | None = field(default=None, repr=False, compare=False)
    #: The rule that aggregated several raters' grades into these (``rankflavor.raters``), or None
    #: for judgments read as they are; measures on them carry it as their ``raters`` knob.
    raters: str | None = None
    #: The grade that marks a distractor in these judgments (a passage that misleads an LLM
    #: reader, UDCG), declared by whoever read them (:func:`rankflavor.io.qrels.mark_distractors`
    #: for a reader's distractor column); measures that read ``distractor_grade`` take it.
    distractor_grade: float | None = None
    #: The grade column holds per-passage utilities (an LLM judge's, signed: negative for a
    #: distractor) rather than relevance grades; measures that read ``utility`` take ``utility=grade``.
    utilities: bool = False
    #: Rows read that hold no judgment and were left out, counted (a Quepid export's row of a
    #: query nobody rated: the query text alone).
    skipped_rows: int = 0
    #: Query ids the input names with no judgment (``{}`` in a dict, a ``_rank_eval`` request
    #: whose ``ratings`` are ``[]``, a Quepid query nobody rated): known to the alignment and
    #: counted; whether they are queries of the judgments is the ``missing`` policy's
    #: (:func:`rankflavor.engine.aggregate.judged_queries`). Those that also have judgments are judged.
    listed_empty: tuple[str, ...] = field(default=(), repr=False, compare=False)
    #: Where the judgments come from beyond a file path, merged into the results' provenance
    #: record of the qrels (an ir_datasets dataset's id, version and grade definitions:
    #: :mod:`rankflavor.io.irds`); None for a file or an object in memory.
    origin: dict[str, Any] | None = field(default=None, repr=False, compare=False)
    #: Per judgment, who or what gave it: ``KIND:DETAIL`` text (``human:nist``, ``llm:MODEL@PROMPT``,
    #: ``clicks:coec``; :mod:`rankflavor.io.labels`), read from a source column or a rule for the
    #: file. None: the judgments come from one source, not named (nothing is counted by source).
    label_source: pa.Array | pa.ChunkedArray | None = field(default=None, repr=False, compare=False)
    #: The ``--labels`` choice these judgments were selected by (:func:`rankflavor.io.labels.select_labels`),
    #: None when none was applied.
    label_rule: str | None = None
    #: Judgments that choice left out, per kind: ``(("llm", 380),)``.
    labels_dropped: tuple[tuple[str, int], ...] = ()

    def __post_init__(self) -> None:
        _refuse_nulls(self, (("query id", self.query), ("docno", self.doc)))
        if not len(self.query) == len(self.doc) == len(self.grade):
            raise ValueError(f"Qrels: columns of different lengths ({len(self.query)} query ids, {len(self.doc)} "
                             f"docnos, {len(self.grade)} grades)")
        if self.label_source is not None and len(self.label_source) != len(self.grade):
            raise ValueError(f"Qrels: {len(self.label_source)} label sources for {len(self.grade)} judgments")

    def __len__(self) -> int:
        return len(self.grade)

    def line_of(self, row: int) -> int | None:
        """1-based source line of ``row``, or None when the input was not a file."""
        if self.lines is not None:
            return int(self.lines[row])
        return row + 1 if self.from_file else None

    def lines_of(self, rows: np.ndarray) -> np.ndarray | None:
        """:meth:`line_of` of many ``rows`` (None when the input was not a file)."""
        if self.lines is not None:
            return self.lines[rows]
        return rows + 1 if self.from_file else None


@dataclass(frozen=True)
class Run:
    """A ranking: one row per (query, document, score), in file order.

    ``doc_strings`` may be None when ``doc_integers`` holds every docno: a reader that found them
    all canonical integers keeps only the values, and :attr:`doc` rebuilds the strings on first
    use (their decimal form is the text they were read from). A big run spares the memory of
    strings that scoring never reads.
    """

    query: pa.Array | pa.ChunkedArray
    doc_strings: pa.Array | pa.ChunkedArray | None
    score: np.ndarray
    source: str = "run"
    lines: np.ndarray | None = None
    tag: str | None = None
    comments: int = 0
    blank_lines: int = 0
    extra_fields: int = 0
    from_file: bool = False
    #: Line of row 0 when rows are consecutive lines from it (``lines`` None): a chunk of a file.
    first_line: int = 1
    #: Every docno's integer value, in row order across one or more parts (the file reader gives
    #: one array), when the reader found them all canonical decimal integers (None: not known;
    #: alignment finds out).
    doc_integers: tuple[np.ndarray, ...] | None = field(default=None, repr=False, compare=False)
    #: Otherwise, perhaps every docno's 64-bit hash (``docnos.hash64``) in parts, as above.
    doc_hashes: tuple[np.ndarray, ...] | None = field(default=None, repr=False, compare=False)
    #: The least and greatest of ``doc_integers``, when the reader found them (None: not known).
    doc_integer_range: tuple[int, int] | None = field(default=None, repr=False, compare=False)
    #: Per chunk of ``query`` (dictionary-encoded), the first row of each run of one query id,
    #: when the reader found them (None: not known).
    query_runs: tuple[np.ndarray, ...] | None = field(default=None, repr=False, compare=False)
    #: The reader found that no score rises inside a run of one query id (False: not known).
    scores_descend: bool = field(default=False, repr=False, compare=False)
    #: ``"score"``, or ``"rank"`` for a run read without scores (MS MARCO run TSV, a Quepid
    #: snapshot): ``score`` then holds minus the rank, so scores descending is ranks ascending,
    #: and measures on it carry the ``order=rank`` knob.
    ranked_by: str = "score"
    #: Query ids the input lists with no document (``{}`` in a dict run): answered with nothing,
    #: so in the run (pytrec_eval, ir_measures and ranx's ``Run`` score them 0), not missing.
    listed_empty: tuple[str, ...] = field(default=(), repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.doc_strings is None and self.doc_integers is None:
            raise ValueError("Run: give doc_strings, or doc_integers to build them from")
        _refuse_nulls(self, (("query id", self.query), ("docno", self.doc_strings)))

    @cached_property
    def doc(self) -> pa.Array | pa.ChunkedArray:
        """The docnos as strings (built from ``doc_integers`` when the reader kept only those)."""
        if self.doc_strings is not None:
            return self.doc_strings
        from rankflavor.io.docnos import integer_docnos

        assert self.doc_integers is not None  # __post_init__
        return integer_docnos(self.doc_integers)

    def __len__(self) -> int:
        return len(self.score)

    def line_of(self, row: int) -> int | None:
        """1-based source line of ``row``, or None when the input was not a file."""
        if self.lines is not None:
            return int(self.lines[row])
        return row + self.first_line if self.from_file else None


def _refuse_nulls(table: Qrels | Run, columns: tuple[tuple[str, pa.Array | pa.ChunkedArray | None], ...]) -> None:
    """An ``InputError`` naming the first row whose id is null (a null has no text to match or
    to order by; readers never make one, a caller building the table may). Arrow keeps the count
    of nulls, so a table without any costs nothing."""
    for what, column in columns:
        if column is not None and column.null_count:
            from rankflavor.errors import InputError

            row = int(np.flatnonzero(column.is_null().to_numpy(zero_copy_only=False))[0])
            line = table.line_of(row)
            where = f"row {row + 1}" if line is None else f"line {line}"
            raise InputError(table.source, line, f"{column.null_count} null {what}(s), the first at {where}: "
                             f"every row needs a {what}")
