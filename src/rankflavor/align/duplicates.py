"""Duplicates: does a (query, doc) pair occur twice, and what each policy keeps of one.

``duplicates=first`` keeps a pair's first row in file order, ``best`` its highest value (the
earliest among equals), and ``error`` refuses it with an :class:`~rankflavor.errors.InputError`
naming both lines, as trec_eval does, except where trec_eval would not see it: a duplicate
judgment of a query the run does not retrieve is kept, and a run duplicate is refused by each
ranking only where both rows are within its depth cut (:func:`refuse_kept_duplicates`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from functools import partial

import numpy as np

from rankflavor.align import sizes
from rankflavor.align.keys import pair_keys
from rankflavor.align.values import Aligned
from rankflavor.base.kernels import block_starts, distinct, ranges
from rankflavor.errors import InputError
from rankflavor.io.tables import Qrels, Run


def has_duplicates(keys: np.ndarray, in_place: bool = False) -> bool:
    """Does a key occur twice? ``in_place``: sort ``keys`` itself (the caller's to spend).

    >>> has_duplicates(np.array([3, 1, 3])), has_duplicates(np.array([3, 1]))
    (True, False)
    """
    plain = keys if in_place else keys.copy()
    plain.sort()
    return bool((plain[1:] == plain[:-1]).any())


def pairs_repeat(q: np.ndarray, doc: np.ndarray, n_docs: int, starts: np.ndarray | None = None) -> bool:
    """Does any (query, doc) pair occur twice? (:func:`repeat_checks`, run one after another.)

    >>> q = np.array([0, 0, 1, 1])
    >>> pairs_repeat(q, np.array([1, 2, 1, 2]), 3), pairs_repeat(q, np.array([1, 2, 2, 2]), 3)
    (False, True)
    """
    return any(check() for check in repeat_checks(q, doc, n_docs, starts))


def repeat_checks(
    q: np.ndarray, doc: np.ndarray, n_docs: int, starts: np.ndarray | None = None
) -> list[Callable[[], bool]]:
    """Checks, each of a slab of the run, such that a (query, doc) pair occurs twice iff one of
    them returns True. Each sorts its own copies (NumPy sorts without the GIL), so that two
    threads can share them (:class:`~rankflavor.base.threads.SharedWork`). ``starts``: each query's
    first row when every query's rows are known to be one block (else found here).

    When every query's rows are one contiguous block (runs are written per topic), a pair can
    repeat only inside its block. Consecutive blocks of one length (most runs retrieve the same
    depth for most queries) are a matrix with a query per row: slab by slab, each row's docnos
    are sorted, small sorts in cache with no query in the key. The other blocks are checked in
    slabs of whole blocks on (query, doc) keys.
    """
    if len(q) < 2:
        return []
    if starts is None:
        starts = block_starts(q)
    if starts is None:  # a query comes back after another one
        return [partial(_slab_repeats, q, doc, n_docs)]
    lengths = np.diff(np.append(starts, len(q)))
    edges = np.flatnonzero(lengths[1:] != lengths[:-1]) + 1
    first, stop = np.concatenate([[0], edges]), np.append(edges, len(lengths))  # blocks of one length
    square = (stop - first) >= sizes.MATRIX_BLOCKS
    checks: list[Callable[[], bool]] = []
    for a, b in zip(first[square].tolist(), stop[square].tolist(), strict=True):
        width = int(lengths[a])
        matrix = doc[starts[a] : starts[a] + (b - a) * width].reshape(b - a, width)
        step = max(1, sizes.BLOCK_ROWS // width)
        checks += [partial(_rows_repeat, matrix[top : top + step], n_docs <= 1 << 31) for top in range(0, b - a, step)]
    if square.all():
        return checks
    rows = ranges(starts[first[~square]], np.add.reduceat(lengths, first)[~square])
    sub_q = q[rows]
    sub_starts = block_starts(sub_q)
    assert sub_starts is not None  # whole blocks of the run, in its order
    return checks + _slab_checks(sub_q, doc[rows], n_docs, sub_starts)


def _rows_repeat(matrix: np.ndarray, narrow: bool) -> bool:
    """Does a value occur twice in a row of ``matrix``? ``narrow``: every value fits int32, and
    is sorted as one (SIMD sorts take twice as many int32 per step)."""
    part = matrix.astype(np.int32) if narrow else matrix.copy()
    part.sort(axis=1)
    return bool((part[:, 1:] == part[:, :-1]).any())


def _slab_checks(q: np.ndarray, doc: np.ndarray, n_docs: int, starts: np.ndarray) -> list[Callable[[], bool]]:
    """:func:`repeat_checks` of contiguous blocks, on (query, doc) keys in slabs of whole blocks."""
    # Slab bounds: the first block start at or after every BLOCK_ROWS rows.
    at = np.minimum(np.searchsorted(starts, np.arange(0, len(q), sizes.BLOCK_ROWS)), len(starts) - 1)
    bounds = distinct(np.concatenate([starts[at], [len(q)]])).tolist()
    return [partial(_slab_repeats, q[lo:hi], doc[lo:hi], n_docs) for lo, hi in itertools.pairwise(bounds)]


def _slab_repeats(q: np.ndarray, doc: np.ndarray, n_docs: int) -> bool:
    return has_duplicates(pair_keys(q, doc, n_docs), in_place=True)


def resolve_duplicates(
    keys: np.ndarray, values: np.ndarray, policy: str, table: Qrels | Run,
    sorted_by: tuple[np.ndarray, np.ndarray] | None = None, refusable: np.ndarray | None = None,
    rows: np.ndarray | None = None, scope: str = "", tally: str = "in all",
    fix: str = "choose duplicates=first or duplicates=best to resolve them",
) -> tuple[np.ndarray, int]:
    """Resolve repeated ``keys`` under ``policy``.

    Parameters
    ----------
    keys : a (query, doc) key per row (:func:`~rankflavor.align.keys.pair_keys`).
    values : per row, what ``policy=best`` keeps the highest of (a score, a grade).
    policy : ``"error"``, ``"first"`` or ``"best"``.
    table : the rows' table; names the lines of an error.
    sorted_by : the stable permutation that sorts ``keys`` and the sorted keys, when the caller
        has them (:func:`~rankflavor.align.keys.sort_keys`), so the keys are not sorted again.
    refusable : per row, may ``policy=error`` refuse its duplicates (None: every row)?
        Judgments of a query the run does not retrieve are scored by no measure, and trec_eval,
        which forms its judged lists only for the queries of the run, reads them as they are
        (``-c`` counts every line of them in num_rel); the other rows are then kept as they are.
    rows : the ``table`` row of each key, for the error (None: key i is row i).
    scope : what the error says the keys are of.
    tally : what the error's count of duplicate rows covers (:func:`error_tally`).
    fix : what the error advises (a command without the duplicates knob says what it can do).

    Returns
    -------
    The row indices to keep (ascending) and how many duplicates were resolved; with none
    resolved, every row is kept and the indices may not be built (an empty array).

    Raises
    ------
    InputError
        ``policy="error"`` and a refusable key repeats: names the first repeat in file order and
        the line of its earlier copy.

    >>> keep, resolved = resolve_duplicates(np.array([4, 2, 4]), np.array([1.0, 5.0, 3.0]), "best", None)
    >>> keep.tolist(), resolved
    ([1, 2], 1)
    """
    if sorted_by is None:
        if not has_duplicates(keys):
            return np.zeros(0, dtype=np.int64), 0
        order = np.argsort(keys, kind="stable")
        sk = keys[order]
    else:
        order, sk = sorted_by
    dup = np.flatnonzero(sk[1:] == sk[:-1]) + 1
    if len(dup) == 0:
        return np.arange(len(keys)), 0
    if policy == "error":
        refused = dup if refusable is None else dup[refusable[order[dup]]]
        if len(refused) == 0:
            return np.arange(len(keys)), 0
        at = refused[np.argmin(order[refused])]  # the repeat that comes first in the file
        first_dup, earlier = order[at], order[at - 1]  # (a stable sort: the row before is an earlier copy)
        if rows is not None:
            first_dup, earlier = rows[first_dup], rows[earlier]
        line = table.line_of(int(first_dup))
        line_b = table.line_of(int(earlier))
        q = table.query[int(first_dup)].as_py()
        d = table.doc[int(first_dup)].as_py()
        where = f" (also at line {line_b})" if line_b is not None else ""
        raise InputError(
            table.source,
            line,
            f"document {d!r} appears more than once for query {q!r}{where}{scope}; trec_eval rejects this. "
            f"{len(refused)} duplicate row(s) {tally}; {fix}.",
        )
    group_start = np.ones(len(sk), dtype=bool)
    group_start[1:] = sk[1:] != sk[:-1]
    group = np.cumsum(group_start) - 1
    if policy == "first":
        keep_sorted = group_start  # stable sort: the first row of a group is the first in the file
        keep = order[keep_sorted]
    else:  # best: highest value, earliest row among equals
        v = values[order]
        by_best = np.lexsort((np.arange(len(order)), -v, group))
        first_of_group = np.ones(len(by_best), dtype=bool)
        first_of_group[1:] = group[by_best][1:] != group[by_best][:-1]
        keep = order[by_best[first_of_group]]
    return np.sort(keep), len(dup)


def refuse_kept_duplicates(aligned: Aligned, rows: np.ndarray, depth: int | None) -> None:
    """Raise the ``duplicates=error`` error when two of the aligned run ``rows`` (those a ranking
    keeps, after its ``depth`` cut) are one (query, doc) pair.

    trec_eval sorts each query's rows and cuts them to ``-M`` before it looks for duplicates:
    a document repeated only below the cut is no error there, and its copies below the cut are
    scored by nothing. Alignment keeps such rows for the rankings to decide
    (:attr:`Counts.run_duplicates_kept`).

    Parameters
    ----------
    aligned : an alignment made under ``duplicates=error``.
    rows : aligned run rows a ranking keeps, in any order.
    depth : the ranking's depth cut, for the error (None: no cut).

    Raises
    ------
    InputError
        Two of ``rows`` are one pair: names the first repeat in file order.
    """
    if not aligned.counts.run_duplicates_kept or len(rows) < 2:
        return
    rows = np.sort(rows)  # the error names the first repeat in file order
    doc = aligned.run_doc[rows]
    keys = pair_keys(aligned.run_q[rows], doc - doc.min(), int(doc.max() - doc.min()) + 1)
    scope = "" if depth is None else f", both within its top {depth} rows (depth={depth})"
    resolve_duplicates(keys, aligned.run_score[rows], "error", aligned.run, rows=aligned.input_rows(rows), scope=scope,
                       tally=error_tally(aligned.run, aligned.chunk))


def error_tally(run: Run, chunk: bool) -> str:
    """What a duplicates error's count covers: every row, or (``chunk``) the queries of a chunk
    of the run, the first chunk that holds a duplicate (chunked evaluation reads no further)."""
    if not chunk or not len(run):
        return "in all"
    first, last = run.line_of(0), run.line_of(len(run) - 1)
    lines = f"lines {first}-{last}" if first is not None and last is not None else "a chunk"
    return f"for the queries of the run's {lines} (the first chunk holding one: the rest is not read)"
