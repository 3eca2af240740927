"""What alignment returns: the aligned rows (:class:`Aligned`) and what was counted on the way
(:class:`Counts`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from functools import cached_property

import numpy as np
import pyarrow as pa

from rankflavor.io.tables import Run


@dataclass(frozen=True)
class Counts:
    """What the inputs held and what alignment did with it. Nothing is dropped uncounted."""

    run_rows: int
    qrels_rows: int
    queries_in_run: int
    queries_in_qrels: int
    queries_evaluated: int
    queries_only_in_run: int
    queries_only_in_qrels: int
    run_duplicates_resolved: int
    qrels_duplicates_resolved: int
    unjudged_retrieved: int
    negative_grades: int
    negative_grades_retrieved: int
    run_rows_of_unjudged_queries: int
    comment_lines: int
    blank_lines: int
    run_lines_with_extra_fields: int
    #: Run rows repeating an earlier (query, doc) pair that ``duplicates=error`` left in place:
    #: each ranking refuses a pair it keeps twice (:func:`~rankflavor.align.refuse_kept_duplicates`),
    #: and a depth cut (trec_eval's ``-M``) that leaves one row of each pair is not an error, as
    #: in trec_eval.
    run_duplicates_kept: int = 0
    #: Queries the judgments name with no judgment (``{}`` in a dict, a ``_rank_eval`` request
    #: whose ratings are ``[]``, a Quepid query nobody rated), in the run or not; neither in
    #: ``queries_in_qrels`` nor in ``queries_only_in_run``. The ``missing`` policy decides
    #: whether they are queries of the judgments (:func:`rankflavor.engine.aggregate.judged_queries`).
    queries_listed_unjudged: int = 0
    #: Those of ``queries_listed_unjudged`` that the run holds (with documents or listed empty).
    queries_listed_unjudged_in_run: int = 0

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


# eq=False: compared and hashed by identity (its arrays have no equality to compare by), so that
# work derived from one alignment can be cached against it, weakly.
@dataclass(frozen=True, eq=False)
class Aligned:
    """Run rows joined to grades; the input to every ordering and metric.

    Immutable: its arrays are read-only views (made on construction, so the arrays it shares
    with the :class:`~rankflavor.io.tables.Run`, or with the caller that built it, stay as their
    owners have them), and so are ``run_row`` and ``run_grade``. Compared by identity.

    Attributes
    ----------
    query_ids : object array of query id strings; a query's code is its index (byte order).
    in_run, in_qrels : per query code.
    run_q, run_doc, run_score : run rows (duplicates resolved), file order kept; ``run_q`` is
        int32 (while the query codes fit), so arithmetic on it widens first; ``run_doc`` is
        an identity code within a query (equal docnos, equal codes; different docnos of one
        query, different codes; no order). Text docnos of a big run are coded from hashes, so
        two docnos of different queries may share a code.
    query_starts : the first row of each query's block when every query's rows are one block
        (ascending), else None; spares later stages a scan of ``run_q``.
    input_row : the input row of each run row, None when row i is input row i (no duplicate was
        resolved); ``run_row`` always gives the array, and ``run_doc_strings[run_row]`` the docno.
    judged_row, judged_grade : the run rows (ascending) whose (query, doc) pair is in the qrels,
        and its grade; typically a few percent of the run.
    run_grade : the judged grade of every run row, NaN when the pair is not in the qrels (built
        on first use).
    qrels_q, qrels_grade : judgments (duplicates resolved), in the order read.
    qrels_row : the qrels table row of each judgment, None when judgment i is row i (no
        duplicate judgment was resolved).
    qrels_doc : the qrels table's docnos (``qrels_doc[qrels_rows(i)]`` is judgment i's); None when
        the docnos are not known (labelled groups). Read by :attr:`qrels_docno_order` only.
    listed_unjudged : per query code, the judgments name it with no judgment (``in_qrels`` is
        False); None when no query is so named. Such a query may have no run row either: it is
        known only because an input lists it. :func:`rankflavor.engine.aggregate.judged_queries` says
        whether a flavor counts it among the judgments' queries.
    """

    query_ids: np.ndarray
    in_run: np.ndarray
    in_qrels: np.ndarray
    run_q: np.ndarray
    query_starts: np.ndarray | None
    run_doc: np.ndarray
    run_score: np.ndarray
    input_row: np.ndarray | None
    judged_row: np.ndarray
    judged_grade: np.ndarray
    qrels_q: np.ndarray
    qrels_grade: np.ndarray
    #: The run aligned (its docno strings are built only if asked for: :attr:`run_doc_strings`).
    run: Run = field(repr=False)
    counts: Counts
    qrels_source: str
    #: When docnos are canonical integers: run_doc + doc_value_offset is the docno's value.
    doc_value_offset: int | None = None
    #: Aligned from a chunk of a run file (:func:`~rankflavor.align.align`).
    chunk: bool = False
    #: No score rises inside a query's block of run rows (the reader found it: :attr:`Run.scores_descend`).
    scores_descend: bool = False
    qrels_row: np.ndarray | None = None
    qrels_doc: pa.Array | pa.ChunkedArray | None = field(default=None, repr=False)
    listed_unjudged: np.ndarray | None = None
    #: The kinds of the judgments' label sources (:mod:`rankflavor.io.labels`), in display order;
    #: empty when the judgments name no source.
    label_kinds: tuple[str, ...] = ()
    #: ``(n_queries, len(label_kinds))``: per query code, its judgments (duplicates resolved) of
    #: each kind; None when the judgments name no source.
    label_counts: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.listed_unjudged is not None and not self.listed_unjudged.any():
            object.__setattr__(self, "listed_unjudged", None)
        for name in _ARRAYS:
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, read_only(value))

    @property
    def run_doc_strings(self) -> pa.Array | pa.ChunkedArray:
        """The run's docnos by input row."""
        return self.run.doc

    @cached_property
    def run_row(self) -> np.ndarray:
        return self.input_row if self.input_row is not None else read_only(np.arange(len(self.run_q)))

    def input_rows(self, rows: np.ndarray) -> np.ndarray:
        """``run_row[rows]``, without building ``run_row`` (a row per run line) when no duplicate
        was resolved."""
        return rows if self.input_row is None else self.input_row[rows]

    @cached_property
    def run_grade(self) -> np.ndarray:
        grade = np.full(len(self.run_q), np.nan)
        grade[self.judged_row] = self.judged_grade
        return read_only(grade)

    @cached_property
    def qrels_docno_order(self) -> np.ndarray | None:
        """The judgments sorted by query code, then by docno in code-point order (the byte order of
        their UTF-8; a numeric docno as its decimal text): the canonical order of a TREC qrels file
        as NIST distributes it (``sort -k1,1 -k3,3`` under ``LC_ALL=C``), whatever order the lines
        were read in. ``ideal=as_supplied`` reads the judgments in this order. None when the
        docnos are not known (:attr:`qrels_doc` None: labelled groups keep their own order)."""
        if self.qrels_doc is None:
            return None
        from rankflavor.io.arrow_ops import cast, sort_indices
        from rankflavor.io.columns import as_numpy, plain_strings, take

        docs = plain_strings(self.qrels_doc) if self.qrels_row is None else take(self.qrels_doc, self.qrels_row)
        if not (pa.types.is_string(docs.type) or pa.types.is_large_string(docs.type)):
            docs = cast(docs, pa.string())
        by_doc = as_numpy(sort_indices(docs)).astype(np.int64)  # stable (as_numpy: np.asarray imports pandas)
        place = np.empty(len(by_doc), dtype=np.int64)
        place[by_doc] = np.arange(len(by_doc))
        return read_only(np.lexsort((place, self.qrels_q)))

    def qrels_rows(self, judgments: np.ndarray) -> np.ndarray:
        """The qrels table rows of ``judgments`` (indices into ``qrels_q``)."""
        return judgments if self.qrels_row is None else self.qrels_row[judgments]

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    @property
    def evaluated(self) -> np.ndarray:
        return self.in_run & self.in_qrels


#: The fields of :class:`Aligned` that hold arrays.
_ARRAYS = ("query_ids", "in_run", "in_qrels", "run_q", "query_starts", "run_doc", "run_score", "input_row",
           "judged_row", "judged_grade", "qrels_q", "qrels_grade", "qrels_row", "listed_unjudged", "label_counts")


def read_only(array: np.ndarray) -> np.ndarray:
    """A read-only view of ``array`` (which stays writeable for whoever else holds it).

    >>> a = np.arange(3)
    >>> v = read_only(a)
    >>> v.flags.writeable, a.flags.writeable, bool(np.shares_memory(a, v))
    (False, True, True)
    """
    view = array.view()
    view.flags.writeable = False
    return view
